//! Millisecond clock used by the midpoint LRU (`innodb_old_blocks_time`).
//!
//! The pool never reads the wall clock directly: it asks a [`Clock`], so
//! tests can drive time by hand ([`ManualClock`]) instead of sleeping for
//! seconds.

use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Source of monotonic milliseconds. `0` is reserved for "never accessed",
/// so implementations return values `>= 1`.
pub trait Clock: Send + Sync + Debug {
    /// Milliseconds since an arbitrary fixed origin, at least 1.
    fn now_ms(&self) -> u64;
}

/// The real monotonic clock.
#[derive(Debug)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    /// A clock whose origin is now.
    pub fn new() -> SystemClock {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> SystemClock {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        self.origin.elapsed().as_millis() as u64 + 1
    }
}

/// A clock that only moves when told to.
#[derive(Debug)]
pub struct ManualClock {
    ms: AtomicU64,
}

impl ManualClock {
    /// A clock reading `start_ms` (values below 1 read as 1).
    pub fn new(start_ms: u64) -> ManualClock {
        ManualClock {
            ms: AtomicU64::new(start_ms.max(1)),
        }
    }

    /// Moves the clock forward.
    pub fn advance(&self, ms: u64) {
        self.ms.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.ms.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_advanced() {
        let c = ManualClock::new(0);
        assert_eq!(c.now_ms(), 1);
        c.advance(1000);
        assert_eq!(c.now_ms(), 1001);
    }

    #[test]
    fn system_clock_is_positive_and_monotonic() {
        let c = SystemClock::new();
        let a = c.now_ms();
        let b = c.now_ms();
        assert!(a >= 1 && b >= a);
    }
}
