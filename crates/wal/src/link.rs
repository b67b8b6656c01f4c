//! Lock-free link buffer: finds the contiguous prefix of LSN ranges that
//! concurrent threads completed out of order.
//!
//! ```text
//!  tail = 1000                      slots (capacity S, indexed by start mod S)
//!   |
//!   v   [1000,1040) done  [1040,1100) busy   [1100,1130) done
//!   slot[1000 % S] = 40   slot[1040 % S] = 0  slot[1100 % S] = 30
//!
//!  advance: tail follows 1000 -> 1040 and stops at the empty slot of the busy
//!  range; once that range is added, the next advance runs 1040 -> 1130.
//! ```
//!
//! A finished range `[start, end)` stores `end - start` (never 0) in slot
//! `start mod S`. Any thread may advance the tail; a flag admits one at a
//! time, and a thread whose `add` lost the race for the flag relies on the
//! holder re-reading the slot at the tail after releasing it. Both sides use
//! sequentially consistent operations so one of them always sees the other
//! (the flag holder sees the new slot, or the adder wins the flag).
//!
//! Invariant: a range may be added only while `start < tail + S`, so two
//! unconsumed ranges never share a slot.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};

use crossbeam_utils::CachePadded;

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct LinkBuf {
    slots: Box<[AtomicU64]>,
    mask: u64,
    tail: CachePadded<AtomicU64>,
    advancing: CachePadded<AtomicBool>,
}

impl LinkBuf {
    /// A link buffer with `capacity` slots (a power of two) whose tail starts
    /// at `start`.
    pub(crate) fn new(capacity: usize, start: u64) -> LinkBuf {
        assert!(
            capacity.is_power_of_two(),
            "link buffer capacity must be a power of two"
        );
        LinkBuf {
            slots: (0..capacity).map(|_| AtomicU64::new(0)).collect(),
            mask: capacity as u64 - 1,
            tail: CachePadded::new(AtomicU64::new(start)),
            advancing: CachePadded::new(AtomicBool::new(false)),
        }
    }

    /// Number of slots: how far past the tail a range may start.
    pub(crate) fn capacity(&self) -> u64 {
        self.mask + 1
    }

    /// End of the contiguous prefix of finished ranges.
    pub(crate) fn tail(&self) -> u64 {
        self.tail.load(SeqCst)
    }

    /// True when a range starting at `start` may be added now.
    pub(crate) fn has_room(&self, start: u64) -> bool {
        start < self.tail() + self.capacity()
    }

    /// Records `[start, end)` as finished. Returns false (and records
    /// nothing) when `start` is too far past the tail; the caller waits for
    /// the tail to move and retries.
    pub(crate) fn add(&self, start: u64, end: u64) -> bool {
        debug_assert!(end > start, "empty link [{start}, {end})");
        debug_assert!(
            start >= self.tail(),
            "link [{start}, {end}) below tail {}",
            self.tail()
        );
        if !self.has_room(start) {
            return false;
        }
        let slot = &self.slots[(start & self.mask) as usize];
        debug_assert_eq!(slot.load(SeqCst), 0, "link slot for {start} still in use");
        slot.store(end - start, SeqCst);
        true
    }

    /// Moves the tail over every finished range. Returns `Some(old, new)`
    /// when this call moved it, `None` when it did not (nothing finished at
    /// the tail, or another thread is advancing and will see our ranges).
    // PERF: called after every append and mark_closed; no allocation, a few
    // atomic operations per finished range.
    pub(crate) fn advance(&self) -> Option<(u64, u64)> {
        let mut moved: Option<(u64, u64)> = None;
        loop {
            if self
                .advancing
                .compare_exchange(false, true, SeqCst, SeqCst)
                .is_err()
            {
                return moved;
            }
            let old = self.tail.load(SeqCst);
            let mut t = old;
            loop {
                let slot = &self.slots[(t & self.mask) as usize];
                let len = slot.load(SeqCst);
                if len == 0 {
                    break;
                }
                slot.store(0, SeqCst);
                t += len;
            }
            if t != old {
                self.tail.store(t, SeqCst);
                moved = Some((moved.map_or(old, |m| m.0), t));
            }
            self.advancing.store(false, SeqCst);
            // A range added at `t` while we held the flag may have been
            // left for us: look once more after releasing it.
            if self.slots[(t & self.mask) as usize].load(SeqCst) == 0 {
                return moved;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn tail_stops_at_the_first_gap() {
        let l = LinkBuf::new(64, 100);
        assert!(l.add(110, 120));
        assert_eq!(l.advance(), None);
        assert_eq!(l.tail(), 100);
        assert!(l.add(100, 110));
        assert_eq!(l.advance(), Some((100, 120)));
        assert!(l.add(130, 131));
        assert_eq!(l.advance(), None);
        assert_eq!(l.tail(), 120);
        // Too far ahead: refused.
        assert!(!l.add(120 + 64, 200));
        assert!(l.add(120, 130));
        assert_eq!(l.advance(), Some((120, 131)));
        assert!(l.add(131 + 63, 300));
    }

    #[test]
    fn concurrent_adds_reach_the_full_prefix() {
        // Eight threads each finish every eighth range of a sequence of
        // ranges of varying length, in parallel; the tail must end at the sum.
        let lens: Vec<u64> = (0..4000u64).map(|i| 1 + (i * 7919) % 13).collect();
        let mut starts = vec![0u64; lens.len()];
        let mut acc = 1_000;
        for (i, l) in lens.iter().enumerate() {
            starts[i] = acc;
            acc += l;
        }
        let end = acc;
        let l = Arc::new(LinkBuf::new(256, 1_000));
        let starts = Arc::new(starts);
        let lens = Arc::new(lens);
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let (l, starts, lens) = (l.clone(), starts.clone(), lens.clone());
                std::thread::spawn(move || {
                    for i in (t..starts.len()).step_by(8) {
                        while !l.add(starts[i], starts[i] + lens[i]) {
                            l.advance();
                            std::thread::yield_now();
                        }
                        l.advance();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("adder thread panicked");
        }
        l.advance();
        assert_eq!(l.tail(), end);
    }
}
