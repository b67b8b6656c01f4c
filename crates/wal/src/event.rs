//! Waiting for an LSN watermark (written or flushed LSN) to reach a target.
//!
//! Each waiter parks its own thread after putting `(target, thread)` on the
//! list of one of [`STRIPES`] stripes (chosen by the log block of its
//! target, to spread the lock traffic). When the watermark moves, the
//! advancing thread takes from the stripes of blocks
//! `block(old)..=block(new)` exactly the waiters whose targets it reached
//! and unparks each one directly, after releasing the stripe lock. A commit
//! waiting for a far LSN is never woken by a small advance, and a group
//! commit wakes its N committers with N independent wake-ups that the
//! scheduler runs in parallel; a condition variable would hand the stripe
//! mutex from one woken thread to the next, a chain of N sequential
//! wake-ups. A waiter counter lets the advancing thread skip all locking
//! when nobody waits.
//!
//! Lost wake-ups cannot happen: a waiter registers (counter, SeqCst), then
//! checks the watermark and adds itself to the list under the stripe lock;
//! the advancer stores the watermark (SeqCst), then reads the counter and
//! drains the list under the same lock. An unpark that arrives before the
//! park makes the park return at once (the thread's park token).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::thread::Thread;
use std::time::Instant;

use crossbeam_utils::CachePadded;
use parking_lot::Mutex;

use crate::format::block_of;

/// Waiter lists per event.
pub(crate) const STRIPES: usize = 64;

/// One parked thread and what it waits for.
#[derive(Debug)]
struct Parked {
    target: u64,
    /// Tells a waiter's entry apart when it has to remove it itself
    /// (abort, deadline, spurious wake-up).
    token: u64,
    thread: Thread,
}

#[derive(Debug, Default)]
struct Stripe {
    parked: Mutex<Vec<Parked>>,
}

/// A watermark LSN with striped waiters.
#[derive(Debug)]
pub(crate) struct LsnEvent {
    value: CachePadded<AtomicU64>,
    waiters: CachePadded<AtomicUsize>,
    /// Times a waiter woke up (target reached or not): how precise the
    /// wake-ups are.
    wakeups: AtomicU64,
    next_token: AtomicU64,
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

    /// An event with `stripes` waiter lists (1 = one shared list).
    pub(crate) fn with_stripes(start: u64, stripes: usize) -> LsnEvent {
        LsnEvent {
            value: CachePadded::new(AtomicU64::new(start)),
            waiters: CachePadded::new(AtomicUsize::new(0)),
            wakeups: AtomicU64::new(0),
            next_token: AtomicU64::new(0),
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
        let mut woken = Vec::new();
        let mut take = |stripe: &Stripe| {
            let mut parked = stripe.parked.lock();
            let mut i = 0;
            while i < parked.len() {
                if parked[i].target <= new {
                    woken.push(parked.swap_remove(i).thread);
                } else {
                    i += 1;
                }
            }
        };
        if to - from >= n {
            self.stripes.iter().for_each(|s| take(s));
        } else {
            (from..=to).for_each(|b| take(&self.stripes[(b % n) as usize]));
        }
        for thread in woken {
            thread.unpark();
        }
    }

    /// Wakes every waiter (they re-check their abort condition).
    pub(crate) fn wake_all(&self) {
        let mut woken = Vec::new();
        for stripe in self.stripes.iter() {
            woken.extend(stripe.parked.lock().drain(..).map(|p| p.thread));
        }
        for thread in woken {
            thread.unpark();
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
        let token = self.next_token.fetch_add(1, SeqCst);
        self.waiters.fetch_add(1, SeqCst);
        let mut first = true;
        let result = loop {
            {
                let mut parked = stripe.parked.lock();
                if !first {
                    // Woken: the advancer took the entry, unless this was
                    // a deadline or spurious wake-up.
                    if let Some(i) = parked.iter().position(|p| p.token == token) {
                        parked.swap_remove(i);
                    }
                }
                first = false;
                if self.get() >= target {
                    break Ok(());
                }
                if abort() {
                    break Err(WaitAbort::Aborted);
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    break Err(WaitAbort::TimedOut);
                }
                parked.push(Parked {
                    target,
                    token,
                    thread: std::thread::current(),
                });
            }
            match deadline {
                None => std::thread::park(),
                Some(d) => std::thread::park_timeout(d.saturating_duration_since(Instant::now())),
            }
            self.wakeups.fetch_add(1, SeqCst);
        };
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
    fn only_the_waiters_whose_target_was_reached_wake() {
        // 16 waiters on distinct blocks, the watermark crawling one block
        // at a time: each waiter wakes once, with one list or many.
        for stripes in [STRIPES, 1] {
            let wakeups = crawl_wakeups(stripes);
            println!("wake-ups with {stripes} stripes: {wakeups}");
            assert!(
                (16..=2 * 16).contains(&wakeups),
                "{stripes} stripes: 16 waiters woke {wakeups} times"
            );
        }
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
