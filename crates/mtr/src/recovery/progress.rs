//! Progress messages of a long recovery, throttled.

use std::time::{Duration, Instant};

use tracing::info;

/// Shortest interval between two progress messages of one phase.
pub(crate) const PROGRESS_INTERVAL: Duration = Duration::from_secs(3);

/// Which phase a message describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Reading and parsing redo; the total is an upper bound (the log
    /// capacity after the checkpoint), since the end is only known when
    /// the scan reaches it.
    Scan,
    /// Applying a batch to its pages.
    Apply {
        /// 1-based batch number.
        batch: u32,
    },
}

/// Logs `done / total` as a percentage at most every
/// [`PROGRESS_INTERVAL`], and always once at 100%.
#[derive(Debug)]
pub(crate) struct Progress {
    phase: Phase,
    total: u64,
    last: Instant,
    last_pct: Option<u64>,
}

impl Progress {
    /// Progress of `phase` over `total` units.
    pub(crate) fn new(phase: Phase, total: u64) -> Progress {
        Progress {
            phase,
            total: total.max(1),
            last: Instant::now(),
            last_pct: None,
        }
    }

    /// Reports `done` units; logs when the interval has passed.
    pub(crate) fn update(&mut self, done: u64) {
        if self.last.elapsed() >= PROGRESS_INTERVAL {
            // Never 100% before `finish`: the scan total is only a bound.
            self.emit(done.min(self.total), 99);
        }
    }

    /// Reports completion: logs 100% once.
    pub(crate) fn finish(&mut self, done: u64) {
        if self.last_pct != Some(100) {
            self.total = done.max(1);
            self.emit(self.total, 100);
        }
    }

    fn emit(&mut self, done: u64, cap: u64) {
        let pct = (done * 100 / self.total).min(cap);
        self.last = Instant::now();
        self.last_pct = Some(pct);
        match self.phase {
            Phase::Scan if pct == 100 => info!(
                percent = pct,
                scanned_bytes = done,
                "redo scan progress: 100% ({done} bytes after the checkpoint)"
            ),
            Phase::Scan => info!(
                percent = pct,
                scanned_bytes = done,
                "redo scan progress: {pct}% ({done} bytes of at most {} after the checkpoint)",
                self.total
            ),
            Phase::Apply { batch } => info!(
                percent = pct,
                pages = done,
                batch,
                "redo apply progress: {pct}% of {} pages of batch {batch}",
                self.total
            ),
        }
    }
}
