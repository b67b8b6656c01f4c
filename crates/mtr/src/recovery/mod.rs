//! Crash recovery: bringing every page up to the end of the redo log.
//!
//! [`crate::Storage::open`] runs it on every start; after a clean shutdown
//! it finds nothing to redo. The steps, in order:
//!
//! ```text
//!  1 sync log   fsync every ib_logfile: the redo about to be applied was
//!               perhaps only in the OS cache of a killed process; it must
//!               be durable before a page carrying it is written
//!  2 discover   ibdata1 + every *.ibd (space id from page 0), see discover
//!  3 dblwr      recover_torn_pages: a page whose in-place copy fails its
//!               checksum (or is older than its doublewrite copy) is
//!               restored from the doublewrite area, logged at warn level
//!  4 open       the registry again, flags read from the repaired headers;
//!               Log::open_for_recovery -> checkpoint LSN, RecoveryScan;
//!               the buffer pool over a StartupGate (flusher not running)
//!  5 scan+parse chunks (read ahead on the basalt-redo-scan thread, see
//!               reader) -> GroupParser -> RecoveryHash (page -> records),
//!               a group counting only once its MtrEnd is read; when the
//!               hash passes `recovery_memory`, apply it as a batch (6)
//!               and go on scanning
//!  6 apply      per batch, see apply: batched asynchronous reads
//!               (Io::run_batch), records applied as each read completes,
//!               pages installed in the pool as dirty, flushed whenever
//!               half the pool is dirty
//!  7 tail       drop the open group at the end of the scan (torn tail)
//!  8 durable    flush_all: every recovered page written (doublewrite,
//!               in place, fsync)
//!  9 resume     scan.into_log(end): the tail past the last complete group
//!               is cut off on disk, a new epoch begins, log threads start;
//!               the gate now forwards to the running log
//! 10 checkpoint at `end`: the redo just applied is no longer needed
//! ```
//!
//! The buffer pool filled in 6 is the one the server then runs with (warm
//! with the recovered pages); its flusher starts after step 10.
//!
//! # LSNs
//!
//! An LSN counts payload bytes, so a record's position is the chunk's
//! start LSN plus its byte offset. The LSN just past a group's `MtrEnd` is
//! the group's end: the page LSN a page carries once the group's records
//! are applied, exactly what the mini-transaction stamped at commit. A
//! record is applied only to a page whose LSN is below its group's end, so
//! applying is idempotent even though individual records are not.
//!
//! # Memory
//!
//! ```text
//!  hash   <= recovery_memory (default 2 GiB) + one open group:
//!           record bytes (arena blocks) + 24 B per record + ~48 B per
//!           page; records are never allocated one by one
//!  apply  the buffer pool + the batch plan (24 B per live record, the
//!           records sorted by page) + one sub-batch of page buffers
//!           (<= 512 x 16 KiB)
//!  scan   8 chunks read ahead (256 KiB each) + a cut record (< 64 KiB)
//! ```
//!
//! 1 GiB of redo takes about 1 GiB of arena plus 48 bytes per record while
//! it is applied (~0.25 GiB for 200-byte records): one batch under the
//! default budget. A smaller budget gives several batches (as InnoDB does
//! when its hash outgrows the buffer pool): each batch reads its pages
//! again (or finds them in the pool), so a tight budget costs reads, never
//! correctness. A batch always ends at a group boundary.
//!
//! # Pages that are not read
//!
//! `InitIndex`, `InitOverflow`, `InitPage` and `FullPage` define every
//! byte of a page that any record writes (all but the checksum, the page
//! LSN, the trailer and the reserved header bytes 30..38, which no record
//! writes), so a page whose live records start with one of them is rebuilt
//! from a zeroed buffer without reading it: the result is the page the
//! running server had (records are deterministic), whatever the disk holds
//! (even a torn image). InnoDB does the same for pages initialised in the
//! redo.
//!
//! # Threads
//!
//! ```text
//!  caller of Storage::open   discover, dblwr, parse, apply, flush, resume
//!  basalt-redo-scan          reads the log ahead of the parser (8 chunks);
//!                            woken by room in its channel, ends at the end
//!                            of the valid redo or when the caller hangs up
//!  I/O backend               PosixIo's workers serve the batched page reads
//!                            (io_uring needs no thread); on_complete runs on
//!                            the caller
//! ```
//!
//! No other thread touches the pool until recovery returns: the flusher
//! starts afterwards, so recovery needs no page latch beyond the ones the
//! pool takes for itself.
//!
//! # Idempotence
//!
//! Until step 10 the checkpoint on disk is the old one and the redo up to
//! `end` is intact (step 9 removes only bytes past `end`). A crash at any
//! point before it leaves pages that are either as before or written by
//! step 6/8 with their page LSN; the next recovery skips every record at
//! or below a page's LSN and repairs torn writes from the doublewrite area,
//! so it reaches the same state. Recovery writes no redo of its own.
//!
//! # Progress
//!
//! At info level, at most every 3 seconds and once at 100%: the scan in
//! percent of the largest possible redo volume (the log capacity after the
//! checkpoint; the real end is only known when the scan reaches it), each
//! apply batch in percent of its pages. [`crate::Storage::open_or_create`]
//! logs the summary.
//!
//! # Errors
//!
//! * a page failing verification that the doublewrite area could not
//!   repair, a page that is all zeroes while its redo does not initialise
//!   it, a record that does not apply: [`crate::MtrError::PageCorrupt`] naming the
//!   page (a page whose records start with an init is never read, so its
//!   old image does not matter);
//! * bytes in the intact part of the log that are no redo record:
//!   [`crate::MtrError::RedoCorrupt`] with the LSN;
//! * redo for a tablespace without a file (a dropped table) is skipped with
//!   a warning, counted in [`RecoveryReport::pages_missing_space`].

mod apply;
mod discover;
mod gate;
mod hash;
mod parse;
mod progress;
mod reader;
mod report;
mod startup;

pub use report::RecoveryReport;
pub use startup::{DEFAULT_RECOVERY_MEMORY, MIN_RECOVERY_MEMORY};

pub(crate) use startup::{describe, recover};
