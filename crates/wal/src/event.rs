//! Waiting for an LSN watermark (written or flushed LSN) to reach a target.
//!
//! Waiters sleep on one of [`STRIPES`] condition variables chosen by the
//! log block of their target LSN. When the watermark moves from `old` to
//! `new`, only the stripes of blocks `block(old)..=block(new)` are woken, so
//! a commit waiting for a far LSN is not woken by every small advance. A
//! waiter counter lets the advancing thread skip all locking when nobody
//! waits.
//!
//! Lost wake-ups cannot happen: a waiter registers (counter, SeqCst), then
//! checks the watermark under its stripe mutex before sleeping; the
//! advancer stores the watermark (SeqCst), then reads the counter and
//! notifies under the stripe mutex.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::time::Instant;

use crossbeam_utils::CachePadded;
use parking_lot::{Condvar, Mutex};

use crate::format::block_of;

/// Condition variables per event.
pub(crate) const STRIPES: usize = 64;

#[derive(Debug, Default)]
struct Stripe {
    lock: Mutex<()>,
    cond: Condvar,
}

/// A watermark LSN with striped waiters.
#[derive(Debug)]
pub(crate) struct LsnEvent {
    value: CachePadded<AtomicU64>,
    waiters: CachePadded<AtomicUsize>,
    /// Times a waiter woke up (target reached or not): how much the
    /// striping saves over waking every waiter on every advance.
    wakeups: AtomicU64,
    stripes: Box<[CachePadded<Stripe>]>,
}

/// Why [`LsnEvent::wait`] returned without the target reached.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum WaitAbort {
    /// The abort check said stop.
    Aborted,
    /// The deadline passed.
    TimedOut,
}

impl LsnEvent {
    pub(crate) fn new(start: u64) -> LsnEvent {
        LsnEvent::with_stripes(start, STRIPES)
    }

    /// An event with `stripes` condition variables (1 = one shared
    /// condition variable, for comparison).
    pub(crate) fn with_stripes(start: u64, stripes: usize) -> LsnEvent {
        LsnEvent {
            value: CachePadded::new(AtomicU64::new(start)),
            waiters: CachePadded::new(AtomicUsize::new(0)),
            wakeups: AtomicU64::new(0),
            stripes: (0..stripes.max(1))
                .map(|_| CachePadded::new(Stripe::default()))
                .collect(),
        }
    }

    /// Current watermark.
    pub(crate) fn get(&self) -> u64 {
        self.value.load(SeqCst)
    }

    /// Threads sleeping in [`LsnEvent::wait`].
    pub(crate) fn waiters(&self) -> usize {
        self.waiters.load(SeqCst)
    }

    /// Times a sleeping waiter was woken.
    pub(crate) fn wakeups(&self) -> u64 {
        self.wakeups.load(SeqCst)
    }

    /// Raises the watermark to `new` (never lowers it) and wakes the
    /// waiters whose targets it reached.
    pub(crate) fn advance(&self, new: u64) {
        let old = self.value.fetch_max(new, SeqCst);
        if new <= old || self.waiters.load(SeqCst) == 0 {
            return;
        }
        let (from, to) = (block_of(old), block_of(new));
        let n = self.stripes.len() as u64;
        if to - from >= n {
            self.wake_all();
            return;
        }
        for b in from..=to {
            let stripe = &self.stripes[(b % n) as usize];
            let _guard = stripe.lock.lock();
            stripe.cond.notify_all();
        }
    }

    /// Wakes every waiter (they re-check their abort condition).
    pub(crate) fn wake_all(&self) {
        for stripe in self.stripes.iter() {
            let _guard = stripe.lock.lock();
            stripe.cond.notify_all();
        }
    }

    /// Blocks until the watermark reaches `target`, `abort()` returns true
    /// (checked before each sleep; whoever makes it true calls
    /// [`LsnEvent::wake_all`]), or `deadline` passes.
    pub(crate) fn wait(
        &self,
        target: u64,
        deadline: Option<Instant>,
        abort: impl Fn() -> bool,
    ) -> Result<(), WaitAbort> {
        if self.get() >= target {
            return Ok(());
        }
        let stripe = &self.stripes[(block_of(target) % self.stripes.len() as u64) as usize];
        self.waiters.fetch_add(1, SeqCst);
        let mut guard = stripe.lock.lock();
        let result = loop {
            if self.get() >= target {
                break Ok(());
            }
            if abort() {
                break Err(WaitAbort::Aborted);
            }
            let timed_out = match deadline {
                None => {
                    stripe.cond.wait(&mut guard);
                    false
                }
                Some(d) => stripe.cond.wait_until(&mut guard, d).timed_out(),
            };
            self.wakeups.fetch_add(1, SeqCst);
            if timed_out && self.get() < target {
                break Err(WaitAbort::TimedOut);
            }
        };
        drop(guard);
        self.waiters.fetch_sub(1, SeqCst);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn waiters_wake_when_their_target_is_reached() {
        let ev = Arc::new(LsnEvent::new(0));
        let targets = [10u64, 500, 5_000, 100_000];
        let threads: Vec<_> = targets
            .iter()
            .map(|&t| {
                let ev = ev.clone();
                std::thread::spawn(move || {
                    ev.wait(t, None, || false).expect("no abort");
                    assert!(ev.get() >= t);
                })
            })
            .collect();
        let mut v = 0;
        while v < 100_000 {
            v += 37;
            ev.advance(v);
        }
        for t in threads {
            t.join().expect("waiter panicked");
        }
        assert_eq!(ev.waiters(), 0);
    }

    /// Wake-ups of 16 waiters with targets in different blocks while the
    /// watermark crawls one block at a time.
    fn crawl_wakeups(stripes: usize) -> u64 {
        const WAITERS: u64 = 16;
        let ev = Arc::new(LsnEvent::with_stripes(0, stripes));
        let threads: Vec<_> = (0..WAITERS)
            .map(|i| {
                let ev = ev.clone();
                std::thread::spawn(move || {
                    ev.wait(492 * (4 * i + 1), None, || false)
                        .expect("no abort")
                })
            })
            .collect();
        for step in 1..=4 * WAITERS {
            let remaining = threads.iter().filter(|t| !t.is_finished()).count();
            let deadline = Instant::now() + Duration::from_secs(5);
            while ev.waiters() < remaining && Instant::now() < deadline {
                std::thread::yield_now();
            }
            std::thread::sleep(Duration::from_micros(500));
            ev.advance(492 * step);
        }
        for t in threads {
            t.join().expect("waiter panicked");
        }
        ev.wakeups()
    }

    #[test]
    fn striping_wakes_only_the_waiters_whose_block_was_reached() {
        let striped = crawl_wakeups(STRIPES);
        let shared = crawl_wakeups(1);
        println!(
            "wake-ups: {striped} with {STRIPES} stripes, {shared} with one condition variable"
        );
        assert!(striped <= 2 * 16, "striped waiters woke {striped} times");
        assert!(
            shared >= 4 * striped.max(1),
            "one condition variable woke {shared} times"
        );
    }

    #[test]
    fn abort_and_deadline_end_a_wait() {
        let ev = Arc::new(LsnEvent::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (ev, stop) = (ev.clone(), stop.clone());
            std::thread::spawn(move || ev.wait(1_000, None, || stop.load(SeqCst)))
        };
        std::thread::sleep(Duration::from_millis(20));
        stop.store(true, SeqCst);
        ev.wake_all();
        assert_eq!(
            waiter.join().expect("waiter panicked"),
            Err(WaitAbort::Aborted)
        );
        let d = Instant::now() + Duration::from_millis(20);
        assert_eq!(ev.wait(1_000, Some(d), || false), Err(WaitAbort::TimedOut));
        ev.advance(999);
        assert_eq!(ev.get(), 999);
        ev.advance(5);
        assert_eq!(ev.get(), 999, "watermarks never go back");
    }
}
