//! The `Log` handle: appends, commit waits, checkpoints, statistics.

use std::path::Path;
use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use basalt_common::Lsn;
use basalt_io::Io;
use parking_lot::Mutex;

use crate::buffer::FillBlocked;
use crate::event::WaitAbort;
use crate::format::{
    block_of, CheckpointSlot, LogGeometry, BLOCK_HEADER_SIZE, CHECKPOINT_SLOT_OFFSETS, PAYLOAD,
};
use crate::shared::Shared;
use crate::stats::Counters;
use crate::{LogConfig, LogError, LogStats, RecoveryScan};

/// The LSN range one `append` reserved: `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LsnRange {
    /// LSN of the first byte.
    pub start: Lsn,
    /// LSN just past the last byte (what pages changed by the group are
    /// stamped with, and what a commit waits for).
    pub end: Lsn,
}

impl LsnRange {
    /// Bytes in the range.
    pub fn len(&self) -> u64 {
        self.end.since(self.start)
    }

    /// True for the range of an empty append.
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

/// The redo log of one data directory. See the crate documentation.
pub struct Log {
    pub(crate) shared: Arc<Shared>,
    pub(crate) threads: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.shared.fmt(f)
    }
}

impl Log {
    /// Creates the log files of a new data directory (preallocated, zeroed,
    /// fsynced, directory fsynced) and starts the log at `start_lsn` (for
    /// example [`crate::LOG_START_LSN`]). Fails with
    /// [`LogError::FilesExist`] when a log file is already there; a failure
    /// part-way leaves incomplete files behind, which must be removed before
    /// trying again.
    pub fn create(
        io: Arc<dyn Io>,
        config: &LogConfig,
        start_lsn: Lsn,
    ) -> Result<Arc<Log>, LogError> {
        crate::startup::create(io, config, start_lsn)
    }

    /// Opens the log files for crash recovery: validates them against
    /// `config`, reads the newest valid checkpoint and returns a scan over
    /// the redo after it. Nothing is written until
    /// [`RecoveryScan::into_log`].
    pub fn open_for_recovery(
        io: Arc<dyn Io>,
        config: &LogConfig,
    ) -> Result<RecoveryScan, LogError> {
        let opened = crate::startup::open_files(io, config)?;
        Ok(RecoveryScan::new(opened))
    }

    /// Opens the log of a cleanly shut down data directory: like
    /// [`Log::open_for_recovery`], but fails with
    /// [`LogError::RecoveryNeeded`] when any redo follows the checkpoint.
    pub fn open(io: Arc<dyn Io>, config: &LogConfig) -> Result<Arc<Log>, LogError> {
        let mut scan = Log::open_for_recovery(io, config)?;
        while scan.next_chunk()?.is_some() {}
        let (checkpoint, end) = (scan.checkpoint_lsn(), scan.scanned_lsn());
        if end > checkpoint {
            return Err(LogError::RecoveryNeeded { checkpoint, end });
        }
        scan.into_log(checkpoint)
    }

    /// Reserves LSNs for one redo group (everything one mini-transaction
    /// logs), copies `bytes` into the log buffer and publishes them to the
    /// writer. The caller stamps its pages with `range.end`, puts them on
    /// the flush lists, then calls [`Log::mark_closed`] with the range;
    /// every successful append must be closed, even if the caller fails
    /// later, and between the two the caller must not wait for anything
    /// another appender may hold (such as a page latch it does not have
    /// yet): later appends wait for this range to close.
    ///
    /// Waits (without holding any lock of the log) when the group would
    /// pass `checkpoint_lsn + max_checkpoint_age`, when the log buffer is
    /// full, or when the group starts more than
    /// [`Log::closed_window`] bytes past the closed LSN. Groups larger than
    /// the buffer are copied in pieces; groups larger than
    /// [`Log::max_group_size`] are refused.
    // PERF: the hot path is one fetch_add, one memcpy, one link store and a
    // few atomic loads; no lock, no allocation, no logging.
    pub fn append(&self, bytes: &[u8]) -> Result<LsnRange, LogError> {
        let sh = &*self.shared;
        let len = bytes.len() as u64;
        if len > sh.limits.max_group {
            return Err(LogError::GroupTooLarge {
                len,
                max: sh.limits.max_group,
            });
        }
        sh.check_usable()?;
        if len == 0 {
            let lsn = Lsn(sh.buffer.next_lsn());
            return Ok(LsnRange {
                start: lsn,
                end: lsn,
            });
        }
        let mut r = sh.buffer.reserve(len);
        let (start, end) = (r.start(), r.end());
        if end > sh.checkpoint.get() + sh.limits.max_age {
            Counters::bump(&sh.counters.checkpoint_waits, 1);
            sh.wait_for_checkpoint(end - sh.limits.max_age)?;
        }
        // The group starts the next one at `end`: when it crosses into a
        // new block, it records where that block's first group begins. The
        // record must be stored before the last piece is published (the
        // writer reads it once the block's bytes are ready) and only once
        // `end` is inside the ring's free window (so its slot is not one the
        // writer still uses for an older block).
        let mut group_marked = block_of(start) == block_of(end);
        loop {
            let size = sh.buffer.size();
            if !group_marked && end <= sh.buffer.released_lsn() + size {
                let slot = &sh.first_group[(block_of(end) % sh.first_group.len() as u64) as usize];
                slot.store((BLOCK_HEADER_SIZE as u64 + end % PAYLOAD) as u16, Relaxed);
                group_marked = true;
            }
            let max_piece = if group_marked {
                u64::MAX
            } else {
                end - 1 - r.done()
            };
            let step = if max_piece == 0 {
                // Only the last byte is left and it does not fit yet.
                Err(FillBlocked::Space(end.saturating_sub(size)))
            } else {
                sh.buffer.fill(&mut r, bytes, max_piece)
            };
            match step {
                Ok(done) => {
                    if let Some((_, ready)) = sh.buffer.advance_ready() {
                        sh.ready_moved(ready);
                    }
                    if done == end {
                        break;
                    }
                }
                Err(FillBlocked::Space(need)) => {
                    Counters::bump(&sh.counters.waits, 1);
                    sh.request_write(need);
                    sh.wait_for_space(|| sh.buffer.released_lsn() >= need)?;
                }
                Err(FillBlocked::Link) => {
                    let from = r.done();
                    if let Some((_, ready)) = sh.buffer.advance_ready() {
                        sh.ready_moved(ready);
                    }
                    sh.wait_for_space(|| sh.buffer.can_publish(from))?;
                }
            }
        }
        if !sh.closed.has_room(start) {
            sh.advance_closed();
            sh.wait_for_space(|| sh.closed.has_room(start))?;
        }
        Ok(LsnRange {
            start: Lsn(start),
            end: Lsn(end),
        })
    }

    /// Records that the group of `range` has put its pages on the flush
    /// lists. `closed_lsn` moves over every contiguous closed range.
    // PERF: one link store and a short walk of the link buffer.
    pub fn mark_closed(&self, range: LsnRange) {
        let sh = &*self.shared;
        if range.is_empty() {
            return;
        }
        let (start, end) = (range.start.get(), range.end.get());
        while !sh.closed.add(start, end) {
            // `append` waited for this room already; only a caller that
            // closes out of the contract gets here.
            sh.advance_closed();
            if sh.wait_for_space(|| sh.closed.has_room(start)).is_err() {
                return;
            }
        }
        sh.advance_closed();
    }

    /// Called at the start of a mini-transaction, with no page latched:
    /// blocks while the checkpoint age is above the sync water mark,
    /// calling the registered flush waker so the page cleaner flushes and
    /// checkpoints.
    pub fn free_check(&self) -> Result<(), LogError> {
        let sh = &*self.shared;
        sh.check_usable()?;
        if self.checkpoint_age() <= sh.limits.sync_mark {
            return Ok(());
        }
        Counters::bump(&sh.counters.checkpoint_waits, 1);
        loop {
            let current = sh.buffer.next_lsn();
            if current.saturating_sub(sh.checkpoint.get()) <= sh.limits.sync_mark {
                return Ok(());
            }
            sh.wait_for_checkpoint(current - sh.limits.sync_mark)?;
        }
    }

    /// Makes a transaction commit at `lsn` as durable as
    /// `innodb_flush_log_at_trx_commit` asks: 1 waits until the log is
    /// fsynced up to `lsn`; 2 waits until it is written to the files (the
    /// timer fsyncs once per `innodb_flush_log_at_timeout`); 0 returns at
    /// once (the timer writes and fsyncs).
    pub fn commit_wait(&self, lsn: Lsn) -> Result<(), LogError> {
        let sh = &*self.shared;
        Counters::bump(&sh.counters.commits, 1);
        match sh.flush_mode.load(Relaxed) {
            0 => sh.check_usable(),
            2 => self.write_up_to(lsn),
            _ => self.flush_up_to(lsn),
        }
    }

    /// Blocks until the log is written to the files (at least into the OS
    /// cache) up to `lsn`.
    pub fn write_up_to(&self, lsn: Lsn) -> Result<(), LogError> {
        let sh = &*self.shared;
        let target = lsn.get();
        if sh.written.get() >= target {
            return Ok(());
        }
        self.check_reserved(lsn)?;
        sh.request_write(target);
        sh.written
            .wait(target, None, || !sh.usable())
            .map_err(|_| sh.abort_error())
    }

    /// Blocks until the log is durable (fsynced) up to `lsn`: the WAL rule
    /// before a page with that LSN is written, and mode 1 commits. One
    /// fsync serves every caller waiting at the time (group commit).
    pub fn flush_up_to(&self, lsn: Lsn) -> Result<(), LogError> {
        let sh = &*self.shared;
        let target = lsn.get();
        if sh.flushed.get() >= target {
            return Ok(());
        }
        self.check_reserved(lsn)?;
        sh.request_flush(target);
        sh.flushed
            .wait(target, None, || !sh.usable())
            .map_err(|_| sh.abort_error())
    }

    fn check_reserved(&self, lsn: Lsn) -> Result<(), LogError> {
        let sh = &*self.shared;
        sh.check_usable()?;
        let current = sh.buffer.next_lsn();
        if lsn.get() > current {
            return Err(LogError::LsnInFuture {
                lsn,
                current: Lsn(current),
            });
        }
        Ok(())
    }

    /// Changes `innodb_flush_log_at_trx_commit` (SET GLOBAL).
    pub fn set_flush_log_at_trx_commit(&self, mode: u8) -> Result<(), LogError> {
        if mode > 2 {
            return Err(LogError::InvalidConfig {
                option: "innodb_flush_log_at_trx_commit",
                reason: format!("{mode} is not 0, 1 or 2"),
            });
        }
        self.shared.flush_mode.store(mode, Relaxed);
        Ok(())
    }

    /// Current `innodb_flush_log_at_trx_commit`.
    pub fn flush_log_at_trx_commit(&self) -> u8 {
        self.shared.flush_mode.load(Relaxed)
    }

    /// End of the last reserved range.
    pub fn current_lsn(&self) -> Lsn {
        Lsn(self.shared.buffer.next_lsn())
    }

    /// Every group ending at or below this LSN has been closed (its pages
    /// are on the flush lists); groups still open all start at or above
    /// it. A checkpoint must never pass it.
    pub fn closed_lsn(&self) -> Lsn {
        Lsn(self.shared.closed.tail())
    }

    /// Redo below this LSN is written to the files.
    pub fn written_lsn(&self) -> Lsn {
        Lsn(self.shared.written.get())
    }

    /// Redo below this LSN is durable.
    pub fn flushed_lsn(&self) -> Lsn {
        Lsn(self.shared.flushed.get())
    }

    /// LSN of the newest checkpoint.
    pub fn checkpoint_lsn(&self) -> Lsn {
        Lsn(self.shared.checkpoint.get())
    }

    /// `current_lsn - checkpoint_lsn`.
    pub fn checkpoint_age(&self) -> u64 {
        self.shared
            .buffer
            .next_lsn()
            .saturating_sub(self.shared.checkpoint.get())
    }

    /// Writes a checkpoint at `lsn`: redo before it is no longer needed.
    /// `lsn` must be durable (`flushed_lsn >= lsn`), not past `closed_lsn`,
    /// and at a group boundary (a page's oldest modification or the closed
    /// LSN). The checkpoint goes to the slot the previous one did not use
    /// and file 0 is fsynced before the new checkpoint LSN is published. A
    /// checkpoint at or below the current one does nothing.
    pub fn write_checkpoint(&self, lsn: Lsn) -> Result<(), LogError> {
        let sh = &*self.shared;
        sh.check_usable()?;
        let mut header = sh.header.lock();
        if lsn.get() <= sh.checkpoint.get() {
            return Ok(());
        }
        if lsn.get() > sh.flushed.get() {
            return Err(LogError::CheckpointNotAllowed {
                lsn,
                reason: format!("the log is durable only up to {}", sh.flushed.get()),
            });
        }
        if lsn.get() > sh.closed.tail() {
            return Err(LogError::CheckpointNotAllowed {
                lsn,
                reason: format!(
                    "groups below it are still open (closed LSN {})",
                    sh.closed.tail()
                ),
            });
        }
        let slot = CheckpointSlot {
            number: header.number + 1,
            lsn,
            ring_offset: sh.geometry.lsn_to_ring_offset(lsn),
            epoch: sh.epoch,
        };
        let at = CHECKPOINT_SLOT_OFFSETS[slot.slot_index()];
        slot.encode(&mut header.image[at..at + crate::format::BLOCK_SIZE]);
        // The header mutex is held across this fsync on purpose: only
        // checkpoints queue behind it, never commits.
        let io = sh.files[0]
            .write_at(&header.image, 0)
            .and_then(|()| sh.files[0].sync());
        if let Err(e) = io {
            sh.fail(LogError::Io(e));
            return Err(sh.abort_error());
        }
        Counters::bump(&sh.counters.log_writes, 1);
        Counters::bump(&sh.counters.log_fsyncs, 1);
        Counters::bump(&sh.counters.checkpoints, 1);
        header.number = slot.number;
        sh.checkpoint.advance(lsn.get());
        drop(header);
        tracing::debug!(
            checkpoint = slot.number,
            lsn = lsn.get(),
            "redo checkpoint written"
        );
        Ok(())
    }

    /// Blocks until the checkpoint LSN passes `beyond` or `timeout` ends;
    /// returns whether it moved.
    pub fn wait_for_checkpoint_progress(
        &self,
        beyond: Lsn,
        timeout: Duration,
    ) -> Result<bool, LogError> {
        let sh = &*self.shared;
        match sh
            .checkpoint
            .wait(beyond.get() + 1, Some(Instant::now() + timeout), || {
                !sh.usable()
            }) {
            Ok(()) => Ok(true),
            Err(WaitAbort::TimedOut) => Ok(false),
            Err(WaitAbort::Aborted) => Err(sh.abort_error()),
        }
    }

    /// LSN bytes the ring holds: `ring blocks x 492`.
    pub fn capacity(&self) -> u64 {
        self.shared.limits.capacity
    }

    /// Largest checkpoint age the log allows: `capacity - 16 x 492` (two
    /// write units kept free). `append` waits rather than pass it.
    pub fn max_checkpoint_age(&self) -> u64 {
        self.shared.limits.max_age
    }

    /// Checkpoint age from which the page cleaner should flush hard:
    /// `max_checkpoint_age - max_checkpoint_age / 8` (7/8).
    pub fn async_water_mark(&self) -> u64 {
        self.shared.limits.async_mark
    }

    /// Checkpoint age from which `free_check` blocks:
    /// `max_checkpoint_age - max_checkpoint_age / 16` (15/16).
    pub fn sync_water_mark(&self) -> u64 {
        self.shared.limits.sync_mark
    }

    /// Largest group `append` accepts: `max_checkpoint_age / 16`, the room
    /// between the sync water mark and the hard limit.
    pub fn max_group_size(&self) -> u64 {
        self.shared.limits.max_group
    }

    /// How far past `closed_lsn` a group may start: the flush lists are
    /// ordered by oldest modification only up to this many LSN bytes.
    pub fn closed_window(&self) -> u64 {
        self.shared.closed.capacity()
    }

    /// Registers the function called when a thread waits for the
    /// checkpoint to move (the page cleaner's wake-up), replacing any
    /// earlier one. It must be cheap, must not call back into the log's
    /// waiting functions, and must not own an `Arc<Log>` (that cycle would
    /// keep the log and its threads alive; hold a `Weak` or the page
    /// cleaner's own handle).
    pub fn register_flush_waker(&self, waker: Box<dyn Fn() + Send + Sync>) {
        *self.shared.waker.write() = Some(waker);
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> LogStats {
        let sh = &*self.shared;
        let c = &sh.counters;
        LogStats {
            lsn: self.current_lsn(),
            closed_lsn: self.closed_lsn(),
            written_lsn: self.written_lsn(),
            flushed_lsn: self.flushed_lsn(),
            checkpoint_lsn: self.checkpoint_lsn(),
            log_writes: c.log_writes.load(Relaxed),
            log_fsyncs: c.log_fsyncs.load(Relaxed),
            pending: (sh.written.waiters() + sh.flushed.waiters()) as u64,
            waiter_wakeups: sh.written.wakeups() + sh.flushed.wakeups(),
            waits: c.waits.load(Relaxed),
            checkpoint_waits: c.checkpoint_waits.load(Relaxed),
            bytes_written: c.bytes_written.load(Relaxed),
            checkpoints: c.checkpoints.load(Relaxed),
            commits: c.commits.load(Relaxed),
        }
    }

    /// Epoch of this run (raised at every startup).
    pub fn epoch(&self) -> u32 {
        self.shared.epoch
    }

    /// LSN the log files were created at.
    pub fn start_lsn(&self) -> Lsn {
        Lsn(self.shared.start_lsn)
    }

    /// Sizes of the ring.
    pub fn geometry(&self) -> LogGeometry {
        self.shared.geometry
    }

    /// Byte offset of `lsn` in the ring (see [`LogGeometry::lsn_to_ring_offset`]).
    pub fn lsn_to_ring_offset(&self, lsn: Lsn) -> u64 {
        self.shared.geometry.lsn_to_ring_offset(lsn)
    }

    /// Directory of the log files.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// Writes and fsyncs everything appended, then stops the log threads.
    /// Call it once no mini-transaction runs. Later calls return
    /// [`LogError::ShutDown`]; calling it again does nothing.
    pub fn shutdown(&self) -> Result<(), LogError> {
        if self.threads.lock().is_empty() {
            return Ok(());
        }
        let result = self.flush_up_to(self.current_lsn());
        self.stop_threads();
        tracing::info!(lsn = self.current_lsn().get(), "redo log shut down");
        result
    }

    /// Stops the log threads at once without writing what is still in the
    /// buffer (what a crash leaves behind). Dropping the last handle does
    /// the same.
    pub fn halt(&self) {
        self.stop_threads();
    }

    fn stop_threads(&self) {
        let threads = std::mem::take(&mut *self.threads.lock());
        if threads.is_empty() {
            return;
        }
        self.shared.stopping.store(true, SeqCst);
        self.shared.wake_everyone();
        for t in threads {
            if t.join().is_err() {
                tracing::error!("a redo log thread panicked");
            }
        }
    }
}

impl Drop for Log {
    fn drop(&mut self) {
        if !self.threads.lock().is_empty() {
            let unwritten = self
                .shared
                .buffer
                .next_lsn()
                .saturating_sub(self.shared.written.get());
            if unwritten > 0 {
                tracing::warn!(
                    unwritten,
                    "redo log dropped without shutdown; unwritten redo is lost"
                );
            }
            self.stop_threads();
        }
    }
}
