//! The background flusher thread and the policy seam it runs on.
//!
//! The mechanism (which pages, in what order, how they are written) lives in
//! `flush`; this module decides *how much* to write per round through a
//! [`FlushPolicy`], so the adaptive page cleaner can replace
//! [`BasicFlushPolicy`] without touching the mechanism.
//!
//! Thread `buf_flusher`:
//! * wakes once a second, or at once when [`BufferPool::wake_flusher`] is
//!   called (the log does so when a user thread waits for checkpoint
//!   space);
//! * asks the policy for a [`FlushPlan`] given the checkpoint age, writes
//!   that many pages oldest first ([`BufferPool::flush_list_batch`]);
//! * then advances the checkpoint ([`BufferPool::checkpoint`]): the oldest
//!   modification of any dirty page, or the current LSN when nothing is
//!   dirty, capped by the log's closed LSN; written through the gate only
//!   when it moved.
//!
//! Errors of a round are logged and counted (`flush_errors`); the next round
//! tries again. The thread holds only a weak reference to the pool, so
//! dropping the last handle stops it.

use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use basalt_common::Lsn;
use parking_lot::{Condvar, Mutex};
use tracing::{error, info};

use crate::error::BufResult;
use crate::flush::FlushReport;
use crate::gate::CheckpointState;
use crate::pool::BufferPool;

/// How often the flusher wakes without being signalled.
pub const FLUSHER_INTERVAL: Duration = Duration::from_secs(1);

/// Why a round flushes what it flushes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlushKind {
    /// Nothing to do.
    Idle,
    /// Steady background writing, bounded by `innodb_io_capacity`.
    Background,
    /// Checkpoint age past the async water mark, or the log asked for
    /// space: flush harder.
    Async,
    /// Checkpoint age past the sync water mark: user threads are blocked.
    Sync,
}

/// What a policy sees at the start of a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlushInput {
    /// The log's checkpoint bookkeeping.
    pub checkpoint: CheckpointState,
    /// Oldest modification of any dirty page.
    pub oldest_modification: Option<Lsn>,
    /// Pages on the flush lists.
    pub dirty_pages: usize,
    /// Frames in the pool.
    pub pool_pages: usize,
    /// `innodb_io_capacity`.
    pub io_capacity: u32,
    /// The round was triggered by [`BufferPool::wake_flusher`].
    pub signalled: bool,
    /// Time since the previous round started.
    pub since_last_round: Duration,
}

/// What a policy asks a round to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlushPlan {
    /// At most this many pages (`usize::MAX` = no bound).
    pub max_pages: usize,
    /// Only pages whose oldest modification is below this LSN.
    pub lsn_limit: Lsn,
    /// Classification, for counters and logs.
    pub kind: FlushKind,
}

/// Decides how much one flusher round writes.
pub trait FlushPolicy: Send + Sync + std::fmt::Debug {
    /// The plan for this round.
    fn plan(&self, input: &FlushInput) -> FlushPlan;
    /// Told what the round did (for policies that smooth over rounds).
    fn record(&self, _plan: &FlushPlan, _report: &FlushReport) {}
}

/// The basic policy:
///
/// * checkpoint age at or past the sync water mark: `Sync`, no page bound,
///   every page older than `current_lsn - async_water_mark / 2`;
/// * past the async water mark: `Async`, same target;
/// * signalled below the async mark: `Async`, one io_capacity worth of the
///   oldest pages;
/// * otherwise `Background`: io_capacity pages per elapsed second (at least
///   one second's worth), oldest first.
///
/// Flushing down to half the async mark leaves headroom, so a busy system
/// does not hover at the mark and re-trigger every round.
#[derive(Clone, Copy, Debug, Default)]
pub struct BasicFlushPolicy;

impl FlushPolicy for BasicFlushPolicy {
    fn plan(&self, i: &FlushInput) -> FlushPlan {
        if i.dirty_pages == 0 {
            return FlushPlan {
                max_pages: 0,
                lsn_limit: Lsn::ZERO,
                kind: FlushKind::Idle,
            };
        }
        let age = i.checkpoint.age();
        let async_mark = i.checkpoint.async_water_mark;
        let sync_mark = i.checkpoint.sync_water_mark;
        let urgent_limit = Lsn(i
            .checkpoint
            .current_lsn
            .get()
            .saturating_sub(async_mark / 2));
        if sync_mark > 0 && age >= sync_mark {
            return FlushPlan {
                max_pages: usize::MAX,
                lsn_limit: urgent_limit,
                kind: FlushKind::Sync,
            };
        }
        if async_mark > 0 && age >= async_mark {
            return FlushPlan {
                max_pages: usize::MAX,
                lsn_limit: urgent_limit,
                kind: FlushKind::Async,
            };
        }
        let io = i.io_capacity as usize;
        if i.signalled {
            return FlushPlan {
                max_pages: io,
                lsn_limit: Lsn::MAX,
                kind: FlushKind::Async,
            };
        }
        let secs = i.since_last_round.as_secs_f64().max(1.0);
        FlushPlan {
            max_pages: (io as f64 * secs).round() as usize,
            lsn_limit: Lsn::MAX,
            kind: FlushKind::Background,
        }
    }
}

/// Wake-up flags shared with the thread.
#[derive(Debug, Default)]
struct Signal {
    state: Mutex<SignalState>,
    cv: Condvar,
}

#[derive(Debug, Default)]
struct SignalState {
    wake: bool,
    stop: bool,
}

/// The pool's handle on its flusher thread.
#[derive(Debug, Default)]
pub(crate) struct FlusherControl {
    signal: Arc<Signal>,
    handle: Mutex<Option<JoinHandle<()>>>,
}

/// What one round did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RoundReport {
    /// The plan the policy chose.
    pub plan: FlushPlan,
    /// Pages written.
    pub flushed: FlushReport,
    /// The checkpoint written, if it moved.
    pub checkpoint: Option<Lsn>,
}

impl BufferPool {
    /// Starts the background flusher (once; later calls are no-ops).
    pub fn start_flusher(self: &Arc<Self>, policy: Arc<dyn FlushPolicy>) -> BufResult<()> {
        let mut handle = self.flusher.handle.lock();
        if handle.is_some() {
            return Ok(());
        }
        self.flusher.signal.state.lock().stop = false;
        let weak: Weak<BufferPool> = Arc::downgrade(self);
        let signal = Arc::clone(&self.flusher.signal);
        let h = std::thread::Builder::new()
            .name("buf_flusher".into())
            .spawn(move || flusher_main(weak, signal, policy))
            .map_err(|e| {
                crate::BufError::Io(basalt_io::IoError::os("spawn flusher thread", "", e))
            })?;
        *handle = Some(h);
        info!("buffer pool flusher started");
        Ok(())
    }

    /// Wakes the flusher now (the log calls this when a user thread waits
    /// for checkpoint space).
    pub fn wake_flusher(&self) {
        let mut st = self.flusher.signal.state.lock();
        st.wake = true;
        drop(st);
        self.flusher.signal.cv.notify_one();
    }

    /// Stops the flusher thread and waits for it (unless called from that
    /// thread). Does not flush: call [`BufferPool::flush_all`] first for a
    /// clean shutdown. Idempotent.
    pub fn shutdown(&self) {
        {
            let mut st = self.flusher.signal.state.lock();
            st.stop = true;
        }
        self.flusher.signal.cv.notify_all();
        let handle = self.flusher.handle.lock().take();
        if let Some(h) = handle {
            if h.thread().id() != std::thread::current().id() && h.join().is_err() {
                error!("buffer pool flusher thread panicked");
            }
        }
    }

    /// Advances the checkpoint to min(oldest dirty page, closed LSN), or to
    /// the closed LSN when nothing is dirty, if that is past the last one.
    /// Returns the checkpoint written.
    pub fn checkpoint(&self) -> BufResult<Option<Lsn>> {
        // The closed LSN must be read before the flush lists are scanned: an
        // mtr closed by then has already inserted its pages, and an mtr not
        // closed starts at or after the closed LSN.
        let state = self.gate().checkpoint_state();
        let oldest = self.oldest_modification();
        let target = oldest
            .unwrap_or(Lsn::MAX)
            .min(state.closed_lsn)
            .min(state.current_lsn);
        if target <= state.checkpoint_lsn {
            return Ok(None);
        }
        self.gate().write_checkpoint(target)?;
        self.stats_ref().checkpoints.inc();
        Ok(Some(target))
    }

    /// Runs one flusher round with `policy` (what the thread does each
    /// wake-up; public so tests and tools can drive rounds by hand).
    pub fn flush_round(
        &self,
        policy: &dyn FlushPolicy,
        signalled: bool,
        since_last_round: Duration,
    ) -> BufResult<RoundReport> {
        let input = FlushInput {
            checkpoint: self.gate().checkpoint_state(),
            oldest_modification: self.oldest_modification(),
            dirty_pages: self.dirty_pages(),
            pool_pages: self.capacity(),
            io_capacity: self.config().io_capacity,
            signalled,
            since_last_round,
        };
        let plan = policy.plan(&input);
        let flushed = if plan.max_pages > 0 {
            self.flush_list_batch(plan.max_pages, plan.lsn_limit)?
        } else {
            FlushReport::default()
        };
        let stats = self.stats_ref();
        let pages = flushed.written as u64;
        match plan.kind {
            FlushKind::Idle => {}
            FlushKind::Background => {
                stats.background_flushes.inc();
                stats.background_pages.add(pages);
            }
            FlushKind::Async => {
                stats.async_flushes.inc();
                stats.async_pages.add(pages);
            }
            FlushKind::Sync => {
                stats.sync_flushes.inc();
                stats.sync_pages.add(pages);
            }
        }
        policy.record(&plan, &flushed);
        let checkpoint = self.checkpoint()?;
        Ok(RoundReport {
            plan,
            flushed,
            checkpoint,
        })
    }
}

fn flusher_main(pool: Weak<BufferPool>, signal: Arc<Signal>, policy: Arc<dyn FlushPolicy>) {
    let mut last = Instant::now();
    loop {
        let signalled = {
            let mut st = signal.state.lock();
            if !st.stop && !st.wake {
                signal.cv.wait_for(&mut st, FLUSHER_INTERVAL);
            }
            if st.stop {
                break;
            }
            std::mem::take(&mut st.wake)
        };
        let Some(pool) = pool.upgrade() else { break };
        let now = Instant::now();
        if let Err(e) = pool.flush_round(&*policy, signalled, now - last) {
            pool.stats_ref().flush_errors.inc();
            error!(error = %e, "buffer pool flusher round failed");
        }
        last = now;
        // Dropping the last handle here runs the pool's Drop on this thread,
        // which sees that it is the flusher and does not join itself.
        drop(pool);
    }
}
