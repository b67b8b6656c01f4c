//! Bookkeeping of connection threads: the thread cache (MySQL's
//! `thread_cache_size`) as a count of threads waiting in `accept`.
//!
//! ```text
//!            ┌──────────────── accepting (blocked in accept(2)) ◄───────────────┐
//!            │ a client connects: the kernel wakes exactly one                  │ room in the
//!            ▼                                                                  │ cache?
//!   accepted() ── was the last one accepting? ── start a replacement thread     │
//!            ▼                                                                  │
//!   serving the connection (handshake, commands, close) ── finished() ──────────┤
//!                                                                               │ no room, or
//!                                                                               ▼ stopping
//!                                                                             exit
//! ```
//!
//! Connection threads accept for themselves: an idle thread blocks in
//! `accept(2)` on the shared listening socket, and the kernel hands each new
//! connection to exactly one of them (an exclusive wake-up), which then
//! serves it. No thread passes a connection to another, so a new connection
//! costs one wake-up and, while idle threads remain, no thread creation.
//! At least one thread is always accepting: the one that takes the last
//! accepting slot starts a replacement before serving its connection. When
//! a connection ends its thread goes back to accepting if fewer than
//! `max(thread_cache_size, 1)` threads are, and exits otherwise. A smaller
//! `thread_cache_size` takes effect as surplus threads finish their next
//! connection (a thread blocked in `accept` cannot be picked out to leave).
//!
//! Shutdown sets `stopping`: accepting threads are woken by the listener's
//! shutdown and exit, busy ones exit after their connection; the last one
//! out notifies [`ThreadCache::wait_all_exited`].

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use tokio::sync::Notify;

/// Counters of connection threads (MySQL's `Threads_cached`,
/// `Threads_created`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadStats {
    /// Idle threads waiting in `accept` for a connection.
    pub cached: usize,
    /// Threads alive, serving a connection or waiting.
    pub alive: usize,
    /// Threads created since the server started.
    pub created: u64,
}

#[derive(Debug, Default)]
struct CacheState {
    /// Threads waiting in (or on their way to) `accept`.
    accepting: usize,
    /// Threads alive.
    threads: usize,
    /// `thread_cache_size`.
    capacity: usize,
    /// Set once at shutdown.
    stopping: bool,
}

/// The counts behind the thread cache; the threads themselves are the
/// server module's connection threads.
#[derive(Debug)]
pub(crate) struct ThreadCache {
    state: Mutex<CacheState>,
    created: AtomicU64,
    exited: Notify,
}

impl ThreadCache {
    /// A cache keeping at most `capacity` idle threads (and always one).
    pub(crate) fn new(capacity: usize) -> Self {
        ThreadCache {
            state: Mutex::new(CacheState {
                capacity,
                ..CacheState::default()
            }),
            created: AtomicU64::new(0),
            exited: Notify::new(),
        }
    }

    /// Counts a thread about to be started as an accepting one and returns
    /// its serial number (for its name), or `None` when stopping.
    pub(crate) fn reserve(&self) -> Option<u64> {
        let mut s = self.state.lock();
        if s.stopping {
            return None;
        }
        s.threads += 1;
        s.accepting += 1;
        Some(self.created.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// Undoes [`ThreadCache::reserve`] when the thread could not be created.
    pub(crate) fn unreserve(&self) {
        let mut s = self.state.lock();
        s.accepting -= 1;
        s.threads -= 1;
        self.created.fetch_sub(1, Ordering::Relaxed);
        self.notify_if_done(&s);
    }

    /// An accepting thread got a connection. True when it was the last one
    /// accepting, so the caller must start a replacement.
    pub(crate) fn accepted(&self) -> bool {
        let mut s = self.state.lock();
        s.accepting -= 1;
        s.accepting == 0 && !s.stopping
    }

    /// A thread finished its connection. True: it goes back to accepting;
    /// false: it exits (already counted out).
    pub(crate) fn finished(&self) -> bool {
        let mut s = self.state.lock();
        if s.stopping || s.accepting >= s.capacity.max(1) {
            s.threads -= 1;
            self.notify_if_done(&s);
            return false;
        }
        s.accepting += 1;
        true
    }

    /// An accepting thread leaves (the listener was shut down).
    pub(crate) fn exit_accepting(&self) {
        let mut s = self.state.lock();
        s.accepting -= 1;
        s.threads -= 1;
        self.notify_if_done(&s);
    }

    fn notify_if_done(&self, s: &CacheState) {
        if s.stopping && s.threads == 0 {
            self.exited.notify_waiters();
        }
    }

    /// Changes `thread_cache_size` (see the module doc for when surplus
    /// threads leave).
    pub(crate) fn set_capacity(&self, capacity: usize) {
        self.state.lock().capacity = capacity;
    }

    /// No thread accepts again; each exits once done.
    pub(crate) fn stop(&self) {
        let mut s = self.state.lock();
        s.stopping = true;
        self.notify_if_done(&s);
    }

    /// Resolves once stopping and every thread has exited.
    pub(crate) async fn wait_all_exited(&self) {
        loop {
            // Registered before the check: a notification in between is
            // not lost.
            let notified = self.exited.notified();
            {
                let s = self.state.lock();
                if s.stopping && s.threads == 0 {
                    return;
                }
            }
            notified.await;
        }
    }

    /// Current counters.
    pub(crate) fn stats(&self) -> ThreadStats {
        let s = self.state.lock();
        ThreadStats {
            cached: s.accepting,
            alive: s.threads,
            created: self.created.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_accepting_thread_asks_for_a_replacement() {
        let cache = ThreadCache::new(4);
        assert_eq!(cache.reserve(), Some(1));
        // One thread accepting: taking a connection leaves none.
        assert!(cache.accepted());
        assert_eq!(cache.reserve(), Some(2));
        // Its connection ends: back to accepting, two now wait.
        assert!(cache.finished());
        assert_eq!(
            cache.stats(),
            ThreadStats {
                cached: 2,
                alive: 2,
                created: 2
            }
        );
        // Sequential connections from now on never need a new thread.
        for _ in 0..100 {
            assert!(!cache.accepted());
            assert!(cache.finished());
        }
        assert_eq!(cache.stats().created, 2);
    }

    #[test]
    fn threads_beyond_the_cache_size_exit_after_their_connection() {
        let cache = ThreadCache::new(2);
        cache.reserve().unwrap();
        // Five concurrent connections: each taker of the last slot starts
        // a replacement.
        let mut busy = 0;
        for _ in 0..5 {
            if cache.accepted() {
                cache.reserve().unwrap();
            }
            busy += 1;
        }
        assert_eq!(cache.stats().alive, 6);
        assert_eq!(cache.stats().cached, 1);
        let back: Vec<bool> = (0..busy).map(|_| cache.finished()).collect();
        // One more fits beside the one accepting; the other four leave.
        assert_eq!(back, [true, false, false, false, false]);
        assert_eq!(cache.stats().alive, 2);
        assert_eq!(cache.stats().cached, 2);
    }

    #[test]
    fn a_zero_cache_still_keeps_one_thread_accepting() {
        let cache = ThreadCache::new(0);
        cache.reserve().unwrap();
        assert!(cache.accepted());
        cache.reserve().unwrap();
        assert!(!cache.finished(), "the replacement is accepting already");
        assert_eq!(cache.stats().cached, 1);
        cache.set_capacity(3);
        // The lone accepting thread takes a connection: a replacement
        // starts, and with room in the cache the first one stays.
        assert!(cache.accepted());
        cache.reserve().unwrap();
        assert!(cache.finished());
        assert_eq!(cache.stats().cached, 2);
        assert_eq!(cache.stats().alive, 2);
    }

    #[test]
    fn stopping_counts_everyone_out_and_wakes_the_waiter() {
        let cache = std::sync::Arc::new(ThreadCache::new(4));
        cache.reserve().unwrap();
        assert!(cache.accepted());
        cache.reserve().unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let waiter = {
            let cache = cache.clone();
            std::thread::spawn(move || rt.block_on(cache.wait_all_exited()))
        };
        cache.stop();
        assert_eq!(cache.reserve(), None, "no thread starts after stop");
        // The accepting thread is woken by the listener's shutdown.
        cache.exit_accepting();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!waiter.is_finished(), "a thread is still serving");
        // The busy one finishes its connection and exits too.
        assert!(!cache.finished());
        waiter.join().unwrap();
        assert_eq!(cache.stats().alive, 0);
    }
}
