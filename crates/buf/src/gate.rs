//! The seam between the buffer pool and the redo log.
//!
//! The buffer pool sits above the log in the dependency graph but must not
//! name the log crate: it asks for durability and checkpoints through
//! [`RedoGate`], which the mini-transaction layer implements over the real
//! log.

use std::fmt::Debug;

use basalt_common::Lsn;

use crate::error::BufResult;

/// Checkpoint bookkeeping of the redo log, read in one call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CheckpointState {
    /// End of the newest reserved redo (the log's current LSN).
    pub current_lsn: Lsn,
    /// LSN of the last checkpoint written.
    pub checkpoint_lsn: Lsn,
    /// Every mini-transaction that ends at or below this LSN has put its
    /// pages on the flush lists. A checkpoint must never pass it.
    pub closed_lsn: Lsn,
    /// Checkpoint age (bytes) beyond which flushing becomes urgent.
    pub async_water_mark: u64,
    /// Checkpoint age (bytes) beyond which user threads block until the
    /// checkpoint moves.
    pub sync_water_mark: u64,
}

impl CheckpointState {
    /// Bytes of redo not yet covered by a checkpoint.
    pub fn age(&self) -> u64 {
        self.current_lsn.since(self.checkpoint_lsn)
    }
}

/// What the buffer pool needs from the redo log.
///
/// Contract for implementors:
/// * `flush_up_to(lsn)` returns only once redo up to `lsn` is durable (the
///   WAL rule: the pool calls it before writing any page whose
///   `newest_modification` is `lsn`, including to the doublewrite area).
/// * `checkpoint_state()` reads `closed_lsn` at the time of the call; the
///   pool reads it *before* scanning the flush lists, so any
///   mini-transaction closed by then is already visible there.
/// * `write_checkpoint(lsn)` is only called with `lsn <= closed_lsn` (as
///   last reported) and `lsn` not above the oldest dirty page; it makes redo
///   durable up to `lsn` if needed, then records the checkpoint.
pub trait RedoGate: Send + Sync + Debug {
    /// Blocks until redo up to `lsn` is durable.
    fn flush_up_to(&self, lsn: Lsn) -> BufResult<()>;
    /// Current checkpoint bookkeeping.
    fn checkpoint_state(&self) -> CheckpointState;
    /// Writes a checkpoint at `lsn`.
    fn write_checkpoint(&self, lsn: Lsn) -> BufResult<()>;
}
