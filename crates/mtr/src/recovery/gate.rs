//! The buffer pool's view of the redo log while recovery runs, before the
//! log is started for writing.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use basalt_buf::{BufError, BufResult, CheckpointState, RedoGate};
use basalt_common::Lsn;
use basalt_wal::{Log, LogError};

use crate::gate::WalGate;

/// [`RedoGate`] of the buffer pool that recovery fills, and that becomes
/// the running server's pool afterwards.
///
/// Before [`StartupGate::attach`]: the redo being applied was read from the
/// log files, which were fsynced before the scan, so it is durable:
/// `flush_up_to(lsn)` succeeds for any `lsn` up to the end of the complete
/// groups parsed so far ([`StartupGate::set_durable`]) and fails beyond.
/// The checkpoint state pins every LSN at the scan's checkpoint, so the
/// pool never tries to write a checkpoint (the recovery scan owns the log
/// files until it is turned into a running log). After `attach`, every call
/// goes to the running log exactly as [`WalGate`] does.
#[derive(Debug)]
pub(crate) struct StartupGate {
    checkpoint: Lsn,
    durable: AtomicU64,
    log: OnceLock<WalGate>,
}

impl StartupGate {
    /// A gate for a recovery starting at `checkpoint`.
    pub(crate) fn new(checkpoint: Lsn) -> StartupGate {
        StartupGate {
            checkpoint,
            durable: AtomicU64::new(checkpoint.get()),
            log: OnceLock::new(),
        }
    }

    /// Redo up to `lsn` has been read back from the (fsynced) log files.
    pub(crate) fn set_durable(&self, lsn: Lsn) {
        self.durable.fetch_max(lsn.get(), Ordering::AcqRel);
    }

    /// Hands the pool over to the running log.
    pub(crate) fn attach(&self, log: &Arc<Log>) {
        // A second attach would mean two logs for one pool; recovery
        // attaches exactly once, so a failed `set` cannot happen.
        let _ = self.log.set(WalGate(Arc::clone(log)));
    }
}

impl RedoGate for StartupGate {
    fn flush_up_to(&self, lsn: Lsn) -> BufResult<()> {
        if let Some(gate) = self.log.get() {
            return gate.flush_up_to(lsn);
        }
        let durable = Lsn(self.durable.load(Ordering::Acquire));
        if lsn <= durable {
            Ok(())
        } else {
            Err(BufError::redo(LogError::LsnInFuture {
                lsn,
                current: durable,
            }))
        }
    }

    fn checkpoint_state(&self) -> CheckpointState {
        if let Some(gate) = self.log.get() {
            return gate.checkpoint_state();
        }
        CheckpointState {
            current_lsn: self.checkpoint,
            checkpoint_lsn: self.checkpoint,
            closed_lsn: self.checkpoint,
            async_water_mark: 0,
            sync_water_mark: 0,
        }
    }

    fn write_checkpoint(&self, lsn: Lsn) -> BufResult<()> {
        if let Some(gate) = self.log.get() {
            return gate.write_checkpoint(lsn);
        }
        Err(BufError::redo(LogError::CheckpointNotAllowed {
            lsn,
            reason: "crash recovery has not finished".into(),
        }))
    }
}
