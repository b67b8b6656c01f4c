//! State shared by the `Log` handle and the log threads, and the small
//! wake-up primitives they use.

use std::path::PathBuf;
use std::sync::atomic::{
    AtomicBool, AtomicU16, AtomicU64, AtomicU8, AtomicUsize, Ordering::SeqCst,
};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use basalt_io::{AlignedBuf, FileRef};
use crossbeam_utils::CachePadded;
use parking_lot::{Condvar, Mutex, RwLock};

use crate::buffer::LogBuffer;
use crate::event::{LsnEvent, WaitAbort};
use crate::format::{LogGeometry, BLOCKS_PER_UNIT, PAYLOAD};
use crate::link::LinkBuf;
use crate::stats::Counters;
use crate::writer::Writer;
use crate::LogError;

/// Wakes background threads of one kind that sleep until they have work.
///
/// A thread counts itself in `sleepers` (SeqCst) and re-checks its
/// condition before it waits; a notifier changes the condition (SeqCst)
/// and then reads `sleepers`, so either the thread sees the change or the
/// notifier sees it counted. The notifier signals under the mutex, which
/// the thread holds from its re-check until it waits.
#[derive(Debug, Default)]
pub(crate) struct Wake {
    lock: Mutex<()>,
    cond: Condvar,
    sleepers: AtomicUsize,
}

impl Wake {
    /// True while a thread sleeps (or is about to).
    pub(crate) fn is_sleeping(&self) -> bool {
        self.sleepers.load(SeqCst) > 0
    }

    /// Wakes one sleeping thread, if any: new work needs one of them.
    // PERF: one atomic load when every thread is busy.
    pub(crate) fn notify(&self) {
        if self.is_sleeping() {
            let _guard = self.lock.lock();
            self.cond.notify_one();
        }
    }

    /// Wakes every thread unconditionally (stop, failure).
    pub(crate) fn force(&self) {
        let _guard = self.lock.lock();
        self.cond.notify_all();
    }

    /// Thread side: returns at once when `ready()` holds, otherwise sleeps
    /// once (until notified or `timeout`). Callers loop.
    pub(crate) fn sleep_unless(&self, timeout: Option<Duration>, ready: impl Fn() -> bool) {
        let mut guard = self.lock.lock();
        if ready() {
            return;
        }
        self.sleepers.fetch_add(1, SeqCst);
        if !ready() {
            match timeout {
                Some(t) => {
                    self.cond.wait_for(&mut guard, t);
                }
                None => self.cond.wait(&mut guard),
            }
        }
        self.sleepers.fetch_sub(1, SeqCst);
    }
}

/// Appenders waiting for room: in the log buffer, in the recent-written
/// link buffer, or in the recent-closed window.
#[derive(Debug, Default)]
pub(crate) struct SpaceWait {
    lock: Mutex<()>,
    cond: Condvar,
    waiters: AtomicUsize,
}

impl SpaceWait {
    /// Wakes every waiter if there is one.
    // PERF: one atomic load when nobody waits.
    pub(crate) fn notify(&self) {
        if self.waiters.load(SeqCst) > 0 {
            let _guard = self.lock.lock();
            self.cond.notify_all();
        }
    }
}

/// Checkpoint-age limits, all in LSN bytes (see the crate documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    /// LSN bytes the ring holds.
    pub(crate) capacity: u64,
    /// Hard limit: no reservation may end above `checkpoint + max_age`.
    pub(crate) max_age: u64,
    /// Age from which the page cleaner should flush harder.
    pub(crate) async_mark: u64,
    /// Age from which `free_check` blocks.
    pub(crate) sync_mark: u64,
    /// Largest single group.
    pub(crate) max_group: u64,
}

impl Limits {
    /// Blocks kept free between the write position and the checkpoint:
    /// two write units, so that padding the last unit of a write never
    /// reaches the checkpoint's block.
    pub(crate) const MARGIN_BLOCKS: u64 = 2 * BLOCKS_PER_UNIT;

    pub(crate) fn new(geometry: &LogGeometry) -> Limits {
        let capacity = geometry.capacity();
        let max_age = capacity - Limits::MARGIN_BLOCKS * PAYLOAD;
        Limits {
            capacity,
            max_age,
            async_mark: max_age - max_age / 8,
            sync_mark: max_age - max_age / 16,
            max_group: max_age / 16,
        }
    }
}

/// The file-0 header unit and the checkpoint counter, guarded together:
/// whoever holds it may write file 0's header.
#[derive(Debug)]
pub(crate) struct HeaderState {
    /// File 0's first write unit as on disk (info block, two slots).
    pub(crate) image: AlignedBuf,
    /// Number of the newest checkpoint written.
    pub(crate) number: u64,
}

/// Everything the `Log` handle and its threads share.
pub(crate) struct Shared {
    pub(crate) dir: PathBuf,
    pub(crate) geometry: LogGeometry,
    pub(crate) limits: Limits,
    pub(crate) files: Vec<FileRef>,
    pub(crate) buffer: LogBuffer,
    /// `first_group[b mod len]`: offset of the first group start in block
    /// b, stored by the append whose group crosses into b (0 = none).
    pub(crate) first_group: Box<[AtomicU16]>,
    pub(crate) closed: LinkBuf,
    pub(crate) written: LsnEvent,
    pub(crate) flushed: LsnEvent,
    /// Highest target of a flush round started so far (`>= flushed`):
    /// requests at or below it are served by a round in progress.
    pub(crate) claimed: CachePadded<AtomicU64>,
    pub(crate) checkpoint: LsnEvent,
    pub(crate) header: Mutex<HeaderState>,
    pub(crate) write_req: CachePadded<AtomicU64>,
    pub(crate) flush_req: CachePadded<AtomicU64>,
    pub(crate) writer_wake: Wake,
    pub(crate) flusher_wake: Wake,
    pub(crate) timer_wake: Wake,
    pub(crate) space: SpaceWait,
    pub(crate) flush_mode: AtomicU8,
    pub(crate) timer_period: Duration,
    pub(crate) epoch: u32,
    pub(crate) start_lsn: u64,
    /// Unwritten ready bytes that make the writer write without a request.
    pub(crate) pressure: u64,
    pub(crate) failure: OnceLock<Arc<LogError>>,
    pub(crate) stopping: AtomicBool,
    pub(crate) waker: RwLock<Option<Box<dyn Fn() + Send + Sync>>>,
    pub(crate) counters: Counters,
    /// The block formatter and its tail image. The writer thread takes it
    /// for writes that nobody needs durable yet (mode 2, buffer pressure);
    /// the flusher takes it to write what it is about to fsync. The lock
    /// is held across the write, never across an fsync.
    pub(crate) writer: Mutex<Writer>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Log")
            .field("dir", &self.dir)
            .field("geometry", &self.geometry)
            .field("epoch", &self.epoch)
            .field("buffer", &self.buffer)
            .field("written", &self.written.get())
            .field("flushed", &self.flushed.get())
            .field("checkpoint", &self.checkpoint.get())
            .finish_non_exhaustive()
    }
}

impl Shared {
    /// False after a fatal error or once stopping.
    pub(crate) fn usable(&self) -> bool {
        self.failure.get().is_none() && !self.stopping.load(SeqCst)
    }

    /// The error a caller gets when the log is not usable.
    pub(crate) fn check_usable(&self) -> Result<(), LogError> {
        if let Some(f) = self.failure.get() {
            return Err(LogError::Failed(f.clone()));
        }
        if self.stopping.load(SeqCst) {
            return Err(LogError::ShutDown);
        }
        Ok(())
    }

    /// The error for a wait that was aborted.
    pub(crate) fn abort_error(&self) -> LogError {
        match self.check_usable() {
            Err(e) => e,
            Ok(()) => LogError::ShutDown,
        }
    }

    /// Records a fatal error (the first one wins) and wakes every thread
    /// and waiter so nobody hangs.
    pub(crate) fn fail(&self, err: LogError) {
        let mut first = false;
        self.failure.get_or_init(|| {
            first = true;
            Arc::new(err)
        });
        if first {
            if let Some(f) = self.failure.get() {
                tracing::error!(
                    dir = %self.dir.display(),
                    error = %f,
                    "redo log failed; no further commits can be made durable"
                );
            }
        }
        self.wake_everyone();
    }

    /// Wakes all threads and waiters (after a failure or when stopping).
    pub(crate) fn wake_everyone(&self) {
        self.writer_wake.force();
        self.flusher_wake.force();
        self.timer_wake.force();
        self.written.wake_all();
        self.flushed.wake_all();
        self.checkpoint.wake_all();
        let _guard = self.space.lock.lock();
        self.space.cond.notify_all();
    }

    /// Asks the writer to write at least up to `lsn`.
    pub(crate) fn request_write(&self, lsn: u64) {
        if self.write_req.fetch_max(lsn, SeqCst) < lsn {
            self.writer_wake.notify();
        }
    }

    /// Asks for the log to be made durable up to `lsn`.
    ///
    /// Only a flusher is woken: it writes what it fsyncs itself, so the
    /// commits arriving during one fsync are written together by the next
    /// round instead of each waking the writer for a write of its own.
    pub(crate) fn request_flush(&self, lsn: u64) {
        if self.flush_req.fetch_max(lsn, SeqCst) < lsn {
            self.flusher_wake.notify();
        }
    }

    /// After some thread moved the ready LSN to `ready`: lets link-room
    /// waiters retry and wakes the writer if it now has work.
    // PERF: a few atomic loads unless someone sleeps.
    pub(crate) fn ready_moved(&self, ready: u64) {
        self.space.notify();
        if self.flusher_wake.is_sleeping() && self.flush_req.load(SeqCst) > self.claimed() {
            self.flusher_wake.notify();
        }
        if self.writer_wake.is_sleeping() {
            let written = self.written.get();
            if self.write_req.load(SeqCst) > written
                || ready.saturating_sub(written) >= self.pressure
            {
                self.writer_wake.force();
            }
        }
    }

    /// Moves `closed_lsn` over newly closed ranges and lets appenders
    /// waiting for the closed window retry.
    // PERF: a short walk of the link buffer; a lock only if someone waits.
    pub(crate) fn advance_closed(&self) {
        if self.closed.advance().is_some() {
            self.space.notify();
        }
    }

    /// The writer's condition to run: stop, or ready bytes that someone
    /// asked for (or that fill half the buffer).
    pub(crate) fn writer_has_work(&self) -> bool {
        if !self.usable() {
            return true;
        }
        let ready = self.advance_ready();
        let written = self.written.get();
        ready > written
            && (self.write_req.load(SeqCst) > written || ready - written >= self.pressure)
    }

    /// Highest LSN a started flush round will make durable.
    pub(crate) fn claimed(&self) -> u64 {
        self.claimed.load(SeqCst)
    }

    /// A flusher's condition to run: stop, or ready bytes above every
    /// started round's target that someone asked to be made durable.
    pub(crate) fn flusher_has_work(&self) -> bool {
        if !self.usable() {
            return true;
        }
        let claimed = self.claimed();
        if self.flush_req.load(SeqCst) <= claimed {
            return false;
        }
        self.advance_ready() > claimed
    }

    /// Moves the ready LSN over fully copied ranges (letting appenders
    /// that wait for link-buffer room retry) and returns it.
    fn advance_ready(&self) -> u64 {
        if self.buffer.advance_ready().is_some() {
            self.space.notify();
        }
        self.buffer.ready_lsn()
    }

    /// Blocks until `cond()` holds, or the log stops (error).
    pub(crate) fn wait_for_space(&self, cond: impl Fn() -> bool) -> Result<(), LogError> {
        if cond() {
            return Ok(());
        }
        self.space.waiters.fetch_add(1, SeqCst);
        let mut guard = self.space.lock.lock();
        let result = loop {
            if cond() {
                break Ok(());
            }
            if let Err(e) = self.check_usable() {
                break Err(e);
            }
            self.space.cond.wait(&mut guard);
        };
        drop(guard);
        self.space.waiters.fetch_sub(1, SeqCst);
        result
    }

    /// Calls the registered flush waker (the page cleaner's doorbell).
    pub(crate) fn call_waker(&self) {
        if let Some(w) = self.waker.read().as_ref() {
            w();
        }
    }

    /// Blocks until `checkpoint_lsn >= target`, nudging the page cleaner
    /// through the waker every `NUDGE` while waiting.
    pub(crate) fn wait_for_checkpoint(&self, target: u64) -> Result<(), LogError> {
        const NUDGE: Duration = Duration::from_millis(100);
        while self.checkpoint.get() < target {
            self.check_usable()?;
            self.call_waker();
            match self
                .checkpoint
                .wait(target, Some(Instant::now() + NUDGE), || !self.usable())
            {
                Ok(()) => break,
                Err(WaitAbort::TimedOut) => continue,
                Err(WaitAbort::Aborted) => return Err(self.abort_error()),
            }
        }
        Ok(())
    }
}
