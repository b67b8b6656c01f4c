//! The buffer pool's view of the redo log.

use std::sync::Arc;

use basalt_buf::{BufError, BufResult, CheckpointState, RedoGate};
use basalt_common::Lsn;
use basalt_wal::Log;

/// Adapts the redo [`Log`] to the buffer pool's [`RedoGate`].
#[derive(Debug, Clone)]
pub struct WalGate(pub Arc<Log>);

impl RedoGate for WalGate {
    fn flush_up_to(&self, lsn: Lsn) -> BufResult<()> {
        self.0.flush_up_to(lsn).map_err(BufError::redo)
    }

    fn checkpoint_state(&self) -> CheckpointState {
        let log = &self.0;
        // closed_lsn is read first: the pool scans the flush lists after
        // this call, so every mtr closed by now is visible there.
        let closed_lsn = log.closed_lsn();
        CheckpointState {
            current_lsn: log.current_lsn(),
            checkpoint_lsn: log.checkpoint_lsn(),
            closed_lsn,
            async_water_mark: log.async_water_mark(),
            sync_water_mark: log.sync_water_mark(),
        }
    }

    fn write_checkpoint(&self, lsn: Lsn) -> BufResult<()> {
        self.0.write_checkpoint(lsn).map_err(BufError::redo)
    }
}
