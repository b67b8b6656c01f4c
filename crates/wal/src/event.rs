//! Waiting for an LSN watermark (written or flushed LSN) to reach a target.
//!
//! Each waiter parks its own thread after putting `(target, thread)` on the
//! list of one of [`STRIPES`] stripes (chosen by the log block of its
//! target, to spread the lock traffic). When the watermark moves, the
//! advancing thread takes from the stripes of blocks
//! `block(old)..=block(new)` exactly the waiters whose targets it reached
//! and wakes them, after releasing the stripe lock. A commit waiting for a
//! far LSN is never woken by a small advance; a condition variable would
//! wake everyone and hand the stripe mutex from one woken thread to the
//! next, a chain of N sequential wake-ups. A waiter counter lets the
//! advancing thread skip all locking when nobody waits.
//!
//! **Wake tree.** Unparking a thread costs the unparking thread a system
//! call and, on a virtual machine, an inter-processor interrupt: about 3 us
//! each on the test VM, so a flusher that woke a group of ten itself spent
//! 35 us per round on it, as long as its write. The advancer therefore
//! unparks one reached waiter and puts the others on a hand-off list; each
//! waiter that finds its entry taken first unparks up to two from that list.
//! The group wakes as a binary tree spread over the cores, and the flusher
//! is back to its next round after one wake-up. (One `FUTEX_WAKE` for a
//! whole group was measured too: the kernel still pays about 2 us per
//! woken thread inside that one call, and a shared futex word wakes
//! waiters of the next round as well.) Group-commit bench, 16 committers,
//! medians of three runs each: 9.2-9.4x one committer with the advancer
//! unparking everyone, 9.9-10.6x with the tree.
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
    /// Reached waiters taken off the lists but not unparked yet (the wake
    /// tree of the module notes).
    handoff: Mutex<Vec<Thread>>,
    /// Test hook: a sleep between taking the reached waiters and handing
    /// them off, to widen the race with waiters whose deadline passes.
    #[cfg(test)]
    take_pause: std::time::Duration,
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
            handoff: Mutex::new(Vec::new()),
            #[cfg(test)]
            take_pause: std::time::Duration::ZERO,
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
        // Held from before the first entry is taken until the list is
        // pushed: a waiter that finds its entry taken passes the list on
        // only after taking this lock, so it always sees the whole list.
        let mut handoff = self.handoff.lock();
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
        #[cfg(test)]
        std::thread::sleep(self.take_pause);
        // The first one starts the wake tree; the rest wait on the list.
        let first = woken.pop();
        handoff.append(&mut woken);
        drop(handoff);
        if let Some(thread) = first {
            thread.unpark();
        }
    }

    /// Unparks up to two of the waiters an advancer handed off (see the
    /// module notes). Every waiter whose entry an advancer took calls it
    /// once: each of them runs it after the list was pushed and pops two,
    /// so the list always drains, even when some taken waiters were awake
    /// already (deadline, spurious wake-up) and their unpark is wasted.
    fn pass_on(&self) {
        let (a, b) = {
            let mut handoff = self.handoff.lock();
            (handoff.pop(), handoff.pop())
        };
        for thread in [a, b].into_iter().flatten() {
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
            let (taken, outcome) = {
                let mut parked = stripe.parked.lock();
                // After a wake-up: an advancer took the entry, unless this
                // was a deadline or spurious wake-up.
                let taken = !first
                    && match parked.iter().position(|p| p.token == token) {
                        Some(i) => {
                            parked.swap_remove(i);
                            false
                        }
                        None => true,
                    };
                first = false;
                let outcome = if self.get() >= target {
                    Some(Ok(()))
                } else if abort() {
                    Some(Err(WaitAbort::Aborted))
                } else if deadline.is_some_and(|d| Instant::now() >= d) {
                    Some(Err(WaitAbort::TimedOut))
                } else {
                    parked.push(Parked {
                        target,
                        token,
                        thread: std::thread::current(),
                    });
                    None
                };
                (taken, outcome)
            };
            if taken {
                // Outside the stripe lock (lock order: hand-off, then
                // stripe). The advancer that took the entry pushed its
                // hand-off list before this can take the hand-off lock.
                self.pass_on();
            }
            if let Some(outcome) = outcome {
                break outcome;
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
    fn one_advance_wakes_a_large_group_through_the_tree() {
        const WAITERS: usize = 40;
        let ev = Arc::new(LsnEvent::new(0));
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        for i in 0..WAITERS {
            let (ev, done_tx) = (ev.clone(), done_tx.clone());
            std::thread::spawn(move || {
                ev.wait(1_000 + i as u64 % 7, None, || false)
                    .expect("no abort");
                done_tx.send(()).expect("test alive");
            });
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while ev.waiters() < WAITERS && Instant::now() < deadline {
            std::thread::yield_now();
        }
        std::thread::sleep(Duration::from_millis(5));
        ev.advance(2_000);
        for i in 0..WAITERS {
            done_rx
                .recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("only {i} of {WAITERS} waiters woke"));
        }
        let wakeups = ev.wakeups();
        assert!(
            (WAITERS as u64..=2 * WAITERS as u64).contains(&wakeups),
            "{WAITERS} waiters woke {wakeups} times"
        );
    }

    #[test]
    fn a_waiter_timing_out_during_an_advance_never_strands_the_others() {
        // The advancer takes every reached entry, then (test pause) hands
        // them off. The waiter taken last starts the tree; here its
        // deadline passes during the pause, so it is awake already and
        // the unpark meant to start the tree is lost on it: it must pass
        // the list on itself, or the others sleep forever (no later
        // advance comes to rescue them).
        const OTHERS: u64 = 8;
        let mut ev = LsnEvent::new(0);
        ev.take_pause = Duration::from_millis(30);
        let ev = Arc::new(ev);
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        for i in 0..OTHERS {
            let (ev, done_tx) = (ev.clone(), done_tx.clone());
            std::thread::spawn(move || {
                ev.wait(10 + 492 * i, None, || false).expect("no abort");
                done_tx.send(()).expect("test alive");
            });
        }
        let late = {
            // The highest block: its stripe is taken last.
            let ev = ev.clone();
            std::thread::spawn(move || {
                let deadline = Instant::now() + Duration::from_millis(40);
                ev.wait(492 * OTHERS, Some(deadline), || false)
            })
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while ev.waiters() < OTHERS as usize + 1 && Instant::now() < deadline {
            std::thread::yield_now();
        }
        std::thread::sleep(Duration::from_millis(20));
        ev.advance(492 * OTHERS + 1);
        for i in 0..OTHERS {
            done_rx
                .recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("only {i} of {OTHERS} waiters woke"));
        }
        assert_eq!(late.join().expect("waiter panicked"), Ok(()));
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
