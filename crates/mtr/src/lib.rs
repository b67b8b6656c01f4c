//! Basalt mini-transactions, tablespace page allocation and crash recovery.
//!
//! A *mini-transaction* (mtr) is the unit of atomic, durable page change.
//! Every change to every page goes through one:
//!
//! ```text
//!   Mtr::start          log.free_check(): wait while the checkpoint age is
//!                       past the sync water mark (no latch held yet)
//!   mtr.get / create    latch pages (S or X) through the buffer pool; the
//!                       memo remembers them in latch order
//!   mtr.apply(p, rec)   rec.apply(page) -- the SAME function recovery runs
//!                       -- then rec.encode() into the mtr's redo buffer
//!   mtr.commit()        append MtrEnd; log.append(group) reserves [start,end)
//!                       and copies it (no global lock); every changed page
//!                       gets page LSN = end and joins the flush list with
//!                       oldest modification = start; log.mark_closed(range);
//!                       latches released newest first
//! ```
//!
//! Invariants:
//! * **WAL rule**: a page changed by a group ending at `end` carries page
//!   LSN `end`; the buffer pool writes it only after `log.flush_up_to(end)`.
//! * **Atomicity**: a group is applied by recovery only when its `MtrEnd`
//!   marker was read, so an mtr is all-or-nothing across a crash. Before
//!   commit, dropping an mtr restores the before-image of every page it
//!   changed, so a failed operation leaves no trace in memory either.
//! * **Ordering**: pages are X-latched from the first change until after
//!   their LSN is stamped, so two mtrs changing one page reach the log in
//!   the order they changed it.
//! * **Checkpoint safety**: a page joins the flush list before its group is
//!   marked closed, and the checkpoint never passes `closed_lsn`.
//!
//! Latch order (deadlock freedom) is the callers' contract: B+tree pages top
//! down and left to right, the tablespace header (page 0) after any page in
//! use, then the page being allocated. See [`fsp`].
//!
//! # Crash recovery
//!
//! [`Storage::open`] (and [`Storage::open_or_create`]) runs [`recovery`]
//! on every start: fsync the log files, open `ibdata1` and every `*.ibd`
//! (space id from page 0), repair torn pages from the doublewrite area,
//! scan the redo from the newest checkpoint, parse it into complete groups
//! (a group counts only once its `MtrEnd` is read; its end LSN is what
//! its pages are stamped with), index the records by page in an arena
//! ([`StorageConfig::recovery_memory`] bounds it; past the budget the
//! records gathered so far are applied as a batch), then apply each batch
//! with batched asynchronous page reads (`Io::run_batch`), applying a
//! page's records as its read completes and skipping those at or below its
//! page LSN; pages whose first record rebuilds them are not read. Recovered
//! pages enter the buffer pool as dirty pages and are written by the
//! normal flush path (doublewrite, WAL rule). Finally every page is made
//! durable, the log resumes at the end of the last complete group (the torn
//! tail is cut off) and a checkpoint is written there. Recovery writes no
//! redo and skips what pages already hold, so a crash during recovery just
//! means recovering again. Progress is logged in percent at info level.
//!
//! ```text
//!  log files ──scan──▶ GroupParser ──complete groups──▶ RecoveryHash
//!                                                  (page -> records, arena)
//!        ┌──────────────────────────────────────────────────┘ per batch
//!        ▼
//!  sorted page ids ─▶ run_batch(reads) ─on_complete─▶ verify, apply, stamp
//!                                                   ─▶ pool (dirty) ─flush─▶ disk
//! ```
//!
//! Threads: recovery runs on the thread that calls `open`; the I/O backend
//! may use its own workers for the batched reads (the pread fallback) and
//! the flusher starts only once recovery is done. [`Storage::shutdown`]
//! flushes everything and checkpoints at the current LSN, so the next open
//! finds nothing to redo.
//!
//! # Tests
//!
//! * `tests/mtr_basics.rs`: commit, abort and page allocation.
//! * `tests/recovery/`: recovery against an in-memory model over
//!   `MemIo`/`FaultyIo`: random crashes (also in the middle of a flush)
//!   must leave exactly a prefix of the committed mini-transactions that
//!   holds every acknowledged one; a log block torn inside a group drops
//!   the whole group; a crash at any write of recovery recovers to the same
//!   state; a torn page is repaired by doublewrite and is a corruption
//!   error without it; many batches with data larger than the pool; clean
//!   restarts, `open_or_create`, file-per-table tablespaces.
//! * `tests/btree_torn_page.rs`: the torn-page scenario on a B+tree.
//! * `tests/btree_crash.rs` (its own `main`): a child process changes a
//!   B+tree on real files and is SIGKILLed at random moments; every
//!   recovery must hold every acknowledged mini-transaction, none
//!   partially, and a valid tree. 30 cycles in release builds (12 in
//!   debug); `BASALT_CRASH_CYCLES=N` or
//!   `cargo test -p basalt-mtr --release --test btree_crash -- --cycles N`
//!   runs more.
//!
//! Seeded tests print their seed and take `BASALT_TEST_SEED`.
//! `examples/recovery_bench.rs` times the recovery of 1 GiB of redo with
//! io_uring and with pread/pwrite
//! (`cargo run -p basalt-mtr --release --example recovery_bench`).
//!
//! Modules: [`mtr`](Mtr) (the mini-transaction), [`fsp`] (page
//! allocation), [`WalGate`] (the buffer pool's view of the log),
//! [`recovery`] (crash recovery), [`Storage`] (opening, creating and
//! shutting down a data directory).

#![forbid(unsafe_code)]

mod error;
pub mod fsp;
mod gate;
mod mtr;
pub mod recovery;
mod storage;

pub use error::{MtrError, MtrResult};
pub use gate::WalGate;
pub use mtr::{Mtr, PageRef, PageStore, Savepoint};
pub use recovery::RecoveryReport;
pub use storage::{Startup, Storage, StorageConfig, SYSTEM_TABLESPACE_INITIAL_PAGES};
