//! Redo log counters (the `Innodb_log_*` / `Innodb_os_log_*` status
//! variables).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use basalt_common::Lsn;

/// A snapshot of the log's watermarks and counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogStats {
    /// Current LSN: end of the last reserved range.
    pub lsn: Lsn,
    /// Every mini-transaction ending at or below this has put its pages on
    /// the flush lists.
    pub closed_lsn: Lsn,
    /// Redo below this is written to the files (at least in the OS cache).
    pub written_lsn: Lsn,
    /// Redo below this is durable (fsynced).
    pub flushed_lsn: Lsn,
    /// LSN of the newest checkpoint.
    pub checkpoint_lsn: Lsn,
    /// Write calls issued to the log files (`Innodb_log_writes`).
    pub log_writes: u64,
    /// fsync calls on the log files, checkpoints included
    /// (`Innodb_os_log_fsyncs`).
    pub log_fsyncs: u64,
    /// Threads waiting right now for the log to be written or flushed up to
    /// their LSN (`Innodb_os_log_pending_fsyncs` in spirit).
    pub pending: u64,
    /// Times a thread waiting in `commit_wait`, `write_up_to` or
    /// `flush_up_to` was woken (a waiter is woken only when its LSN is
    /// reached, so this stays close to the number of waits).
    pub waiter_wakeups: u64,
    /// Appends that waited for room in the log buffer (`Innodb_log_waits`).
    pub waits: u64,
    /// Mini-transactions that waited for the checkpoint to move (in
    /// `free_check` or in `append`).
    pub checkpoint_waits: u64,
    /// Bytes written to the log files (`Innodb_os_log_written`), block
    /// overhead and rewrites of the last partial unit included.
    pub bytes_written: u64,
    /// Checkpoints written.
    pub checkpoints: u64,
    /// Calls of `commit_wait` (all modes).
    pub commits: u64,
}

/// Monotonic counters updated by the log's threads.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) log_writes: AtomicU64,
    pub(crate) log_fsyncs: AtomicU64,
    pub(crate) waits: AtomicU64,
    pub(crate) checkpoint_waits: AtomicU64,
    pub(crate) bytes_written: AtomicU64,
    pub(crate) checkpoints: AtomicU64,
    pub(crate) commits: AtomicU64,
}

impl Counters {
    pub(crate) fn bump(counter: &AtomicU64, by: u64) {
        counter.fetch_add(by, Relaxed);
    }
}
