//! Basalt's redo log: log buffer, LSN reservation, log writer and flusher
//! (group commit), log files, checkpoints and the recovery scan.
//!
//! The log knows bytes and LSNs, never pages. Mini-transactions hand it one
//! opaque *group* of redo records per [`Log::append`]; crash recovery gets
//! those bytes back in LSN order from [`RecoveryScan`]. This crate must not
//! depend on any Basalt crate but `common` and `io`.
//!
//! # LSNs
//!
//! An LSN counts **redo payload bytes only**; block headers and trailers are
//! not part of it. `append(bytes)` of `n` bytes advances the current LSN by
//! exactly `n`, and a page changed by that group is stamped with the range's
//! end. Block `b` holds LSNs `[b x 492, (b+1) x 492)`:
//!
//! ```text
//!  LSN:   0 ........ 491 | 492 ........ 983 | 984 ...
//!  block: [hdr| block 0 |crc][hdr| block 1 |crc][hdr| block 2 ...
//!          16    492     4    16    492     4
//!
//!  block_no(lsn)          = lsn / 492
//!  lsn_to_ring_offset(lsn) = (block_no mod ring_blocks) x 512 + 16 + lsn mod 492
//! ```
//!
//! # Files
//!
//! `innodb_log_files_in_group` files `ib_logfile0..N-1`, each
//! `innodb_log_file_size` bytes, preallocated with zeros at creation. Each
//! starts with InnoDB's 2 KiB of header blocks (file info, checkpoint slot
//! 0, reserved, checkpoint slot 1 — the slots only in file 0), padded to a
//! 4 KiB unit so that every ring write starts on an O_DIRECT boundary and
//! never shares a unit with the checkpoint slots. The rest of all files,
//! in order, is one ring of 512-byte blocks:
//!
//! ```text
//!  ib_logfile0                                ib_logfile1
//! +------+------+------+------+-----+-------+ +------+-----+-----------+
//! | info | cp 0 | rsvd | cp 1 | pad | ring  | | info | pad | ring ...  |
//! +------+------+------+------+-----+-------+ +------+-----+-----------+
//!  0      512    1024   1536   2048  4096      0            4096
//! ```
//!
//! Formats (all big-endian, every 512-byte structure sealed by a CRC32C of
//! its first 508 bytes) are drawn in [`mod@format`]: [`BlockHeader`] (block
//! number, data length, first-group offset, epoch), [`FileInfo`] (magic,
//! version, file number, group size, file size, start LSN, epoch, creator)
//! and [`CheckpointSlot`] (number, LSN, ring offset, epoch). Checkpoint
//! number `n` goes to slot `n mod 2`: a torn checkpoint write leaves the
//! previous checkpoint readable in the other slot, and recovery uses the
//! valid slot with the highest number.
//!
//! # Detecting the end of the redo
//!
//! The scan from the checkpoint stops at the first block that
//! * fails its checksum (torn, never written) — [`ScanEnd::Torn`];
//! * carries another block number than its position expects: a block from
//!   an earlier lap of the ring — [`ScanEnd::StaleLap`];
//! * carries a lower epoch than the block before it — [`ScanEnd::StaleEpoch`];
//! * is not full (`data_len < 492`): the last block written —
//!   [`ScanEnd::Tail`].
//!
//! The **epoch** rises at every startup. It is written to the file info
//! blocks of files 0 and 1 and fsynced before any block of the new run is
//! written, so every block on disk has an epoch at or below the largest one
//! in the headers. At startup the log rewrites the block holding the resume
//! LSN (cut to the resume point, new epoch) and zeroes the rest of its unit;
//! when the new run then writes less than the old one had, the old blocks
//! after its end keep their correct block numbers and checksums, but their
//! lower epoch stops the scan.
//!
//! # Append path (user threads)
//!
//! ```text
//!   free_check()         at mtr start, no latches: wait while age > sync mark
//!   append(bytes)  ----> reserve [start,end) : next_lsn.fetch_add(n)   (no mutex)
//!                        wait if end > checkpoint + max_checkpoint_age
//!                        copy into the ring buffer at lsn mod buffer_size
//!                        publish [start,end) in the recent-written link buffer
//!                        wait if start >= closed_lsn + closed_window
//!   (mtr stamps pages with end, adds them to flush lists)
//!   mark_closed(range) ----> publish in the recent-closed link buffer
//!   commit_wait(lsn)   ----> mode 1: flushed >= lsn; 2: written >= lsn; 0: return
//! ```
//!
//! The log buffer (module `buffer`) is a byte ring that appenders fill
//! concurrently, each in its own reserved range; it is the only module with
//! `unsafe` code. The **recent-written** link buffer (module `link`) finds the
//! contiguous prefix of fully copied ranges (the *ready* LSN); the same
//! structure, **recent-closed**, yields `closed_lsn`. Any thread may advance
//! a link buffer's tail. A group larger than the log buffer is copied in
//! pieces as the writer frees room. An append that finds the ring full asks
//! the writer to write and waits (`waits`).
//!
//! Each append whose group crosses into a new block records, for that
//! block, where the next group starts; the writer puts it in the block's
//! `first_group` field. Recovery does not need it (the checkpoint LSN is
//! always a group boundary), but tools can resynchronise on it.
//!
//! # Threads
//!
//! * `basalt-log-writer`
//!   - *woken by*: a write request above `written_lsn` (commits in mode 2,
//!     `write_up_to`, appenders waiting for ring room); an appender that
//!     moves the ready LSN while such a request is pending; ready bytes
//!     filling half the log buffer.
//!   - *advances*: `written_lsn`; frees ring space (`released`).
//!   - *signals*: written-LSN waiters, appenders waiting for ring room, the
//!     flusher when a flush request is pending.
//! * `basalt-log-flusher-N` (`LogConfig::flusher_threads`, default 2)
//!   - *woken by*: a flush request above the highest LSN a round in
//!     progress will make durable (`claimed`; commits in mode 1,
//!     `flush_up_to`, the timer), once bytes past it are ready; an appender
//!     that moves the ready LSN while such a request is pending. One
//!     sleeping flusher is woken per request.
//!   - *advances*: `written_lsn` (it writes what the writer has not yet,
//!     through the same formatter), `flushed_lsn`.
//!   - *signals*: written- and flushed-LSN waiters.
//! * `basalt-log-timer`
//!   - *woken by*: its clock, every `innodb_flush_log_at_timeout` seconds.
//!   - *advances*: nothing itself; requests a write and fsync of everything
//!     appended so far.
//!   - *signals*: writer, flusher.
//!
//! The writer formats whole 4 KiB write units: it starts each write with
//! the unit of the current partial block (kept in memory exactly as it was
//! last written, so earlier blocks of that unit are rewritten unchanged),
//! fills blocks from the ring, writes the block holding the end LSN with a
//! short `data_len` and zeroes the rest of its unit. Every write offset and
//! length is a multiple of 4 KiB, so the files are opened with `O_DIRECT`
//! (unless `innodb_log_file_buffering` is ON or the filesystem refuses it)
//! and every write goes from the formatting buffer straight to the device;
//! fdatasync makes it durable. Measured with the group-commit bench (21,000
//! commits at 1, 4 and 16 committers): the process used about 0.42 s of
//! CPU with `O_DIRECT` against 0.61-0.71 s through the page cache, whose
//! copy and block allocation cost more than the write itself.
//!
//! **Group commit**: a flush round writes every ready byte not yet written,
//! reads `written_lsn` as its target and claims it (`claimed`, a fetch_max,
//! under the formatter lock), fsyncs the files holding `[flushed_lsn,
//! target)`, then publishes the target as `flushed_lsn` (a fetch_max).
//! Commits that arrive during a round only append; one round writes them
//! all with one write and syncs them with one fsync. A mode-1 commit wakes
//! a flusher only (one wake-up per group, not a writer wake-up and a write
//! per commit).
//!
//! Two flushers overlap rounds: while one round's fsync runs, the other
//! flusher writes and fsyncs the commits that arrived since. Rounds may
//! finish out of order, which is safe because an fsync that starts after
//! a write has completed makes that write durable: every byte below a
//! round's target was written before the round claimed it, and the round
//! syncs every file holding bytes between the durable LSN and its target.
//! Writes stay serialized (the formatter lock), so the tail unit is never
//! written by two rounds at once. On the test VM a 4 KiB `O_DIRECT` write
//! plus fdatasync takes about 70 us and two such pairs run in parallel at
//! twice the rate (fio). Group-commit bench, 16 committers against one,
//! medians of three runs each: 8.0-8.5x with one flusher, 9.0-10.3x with
//! two (and 3.0-3.5x instead of 2.4-2.8x at 4 committers); a third
//! flusher gained nothing.
//!
//! The formatter lock is held across a write, by the writer or a flusher,
//! never across an fsync; the only other lock held across I/O is the
//! header lock of `write_checkpoint`, which only checkpoints take.
//!
//! **Waiting**: a commit waiter parks its thread on the list of one of 64
//! stripes picked by the log block of its LSN (module `event`); when a
//! watermark moves, the advancing thread takes from the stripes of the
//! blocks it passed exactly the waiters whose targets it reached, unparks
//! one and hands it the others: each woken waiter unparks two more (a wake
//! tree), so the flusher pays for one wake-up per round, not one per
//! commit. The unit test
//! `only_the_waiters_whose_target_was_reached_wake` checks that 16 waiters
//! on distinct blocks, with the watermark advancing one block at a time,
//! wake about 16 times in total. `LogStats::waiter_wakeups` reports the
//! live figure.
//!
//! # Checkpoint age and water marks
//!
//! ```text
//!  capacity           C = ring_blocks x 492           (LSN bytes in the ring)
//!  max_checkpoint_age U = C - 16 x 492                (two units kept free)
//!  async_water_mark     = U - U/8    (7/8)            page cleaner flushes hard
//!  sync_water_mark      = U - U/16   (15/16)          free_check blocks
//!  max_group_size       = U/16                        larger appends refused
//! ```
//!
//! No reservation may end above `checkpoint_lsn + U`: such an append waits
//! (`checkpoint_waits`) and calls the registered flush waker every 100 ms.
//! The 16-block margin guarantees that the writer's zero padding after the
//! last block of a write never reaches the checkpoint's block. `free_check`
//! lets a mini-transaction start only below the sync mark, so the last
//! sixteenth of the ring is the reserve for groups already under way; a
//! single group may not be larger than that reserve.
//!
//! # Invariants
//!
//! `checkpoint_lsn <= flushed_lsn <= written_lsn <= ready <= current_lsn`,
//! and `checkpoint_lsn <= closed_lsn <= current_lsn`; all only grow.
//! `write_checkpoint(lsn)` requires `lsn <= flushed_lsn` and
//! `lsn <= closed_lsn`. No write reaches the ring position of
//! `block(checkpoint_lsn) + ring_blocks` (its padding included), so the
//! blocks from the checkpoint on are never overwritten by a later lap.
//!
//! Like InnoDB, the log assumes that the disk writes a 512-byte block
//! atomically (a torn write leaves whole old and whole new blocks). The
//! partial tail block is rewritten in place; under that assumption either
//! its old or its new version survives, and both are valid.
//!
//! # Latch order
//!
//! The log holds no lock while it waits for another thread's progress, and
//! callers may hold page latches across `append`/`mark_closed`/`commit_wait`
//! but not across `free_check`. Internal locks are leaves: the stripe
//! mutexes guard only their waiter lists, the wake mutexes only their
//! condition variables; the header mutex
//! (checkpoint writes) is never taken with another log lock. The flush
//! waker is called with no log lock held.
//!
//! # Failure
//!
//! A failed write or fsync in a log thread is fatal for durability: it is
//! recorded once, every waiter is woken, and every current and later call
//! returns [`LogError::Failed`]. Nothing panics on data read from disk.
//!
//! # Tests
//!
//! `cargo test -p basalt-wal` runs the unit tests beside the code and the
//! scenario tests in `tests/`, all in a few seconds in debug mode (none is
//! ignored):
//! * `round_trip`: concurrent appends read back byte for byte, groups larger
//!   than the buffer, the buffer-full wait, O_DIRECT alignment of every
//!   read and write, file validation;
//! * `ring`: many laps with checkpoints, appends and `free_check` waiting
//!   for the checkpoint (never overwriting), checkpoint preconditions;
//! * `crash`: torn tails, stale blocks from an earlier lap and from before a
//!   restart, checkpoint slots, crash-point and torn-write sweeps;
//! * `commit`: group commit on real files (`PosixIo`), modes 0 and 2 by
//!   counters, write and fsync errors reaching every waiter.
//!
//! Seeded tests read `BASALT_TEST_SEED` and print the seed they use.

#![deny(unsafe_code)]

#[allow(unsafe_code)]
mod buffer;
mod config;
mod error;
mod event;
mod flusher;
pub mod format;
mod link;
mod log;
mod recovery;
mod shared;
mod startup;
mod stats;
mod writer;

pub use config::{
    LogConfig, DEFAULT_FLUSHER_THREADS, DEFAULT_LOG_BUFFER_SIZE, DEFAULT_LOG_FILES,
    DEFAULT_LOG_FILE_SIZE, MAX_FLUSHER_THREADS, MAX_FLUSH_LOG_AT_TIMEOUT_SECS, MAX_LOG_BUFFER_SIZE,
    MAX_LOG_FILES, MAX_LOG_GROUP_SIZE, MIN_LOG_BUFFER_SIZE, MIN_LOG_FILES, MIN_LOG_FILE_SIZE,
};
pub use error::LogError;
pub use format::{
    BlockHeader, CheckpointSlot, FileInfo, LogGeometry, BLOCK_PAYLOAD, BLOCK_SIZE, LOG_START_LSN,
};
pub use log::{Log, LsnRange};
pub use recovery::{RecoveryScan, ScanEnd};
pub use stats::LogStats;
