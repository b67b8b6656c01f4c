//! The midpoint LRU list of one instance.
//!
//! ```text
//!  head (MRU)                                                   tail (LRU)
//!   |<------------- young sublist ------------>|<---- old sublist ---->|
//!   [y] <-> [y] <-> ... <-> [y] <-> [y] <-> [o=old_head] <-> ... <-> [o]
//!    ^ pages made young go here     new pages go here ^     victims ^
//! ```
//!
//! * A page read from disk (or created) enters at `old_head`, the head of
//!   the old sublist. It only moves to the young head when accessed again at
//!   least `innodb_old_blocks_time` ms after its first access; a scan that
//!   touches each page once therefore cycles through the old sublist and
//!   leaves the young sublist (the working set) alone.
//! * The boundary is kept so that `old_len` stays within a tolerance
//!   ([`tolerance`]: 1..20 pages, ~3% of the list) of
//!   `len * old_blocks_pct / 100`. Without the band, evicting the old tail
//!   (old sublist one short) and inserting at the old head (one long) would
//!   move the boundary back and forth on every miss: the young tail would
//!   slide into the old sublist and the page just read would slide into the
//!   young one, exactly the pollution a scan must not cause. Each insert or
//!   removal moves the boundary by at most one step, so maintenance is O(1);
//!   a change of `innodb_old_blocks_pct` is absorbed by the next operation.
//!   Unlike InnoDB, which keeps no old sublist below 512 pages, the boundary
//!   is maintained at every length, so small pools are scan resistant too.
//! * Young pages are not moved on every access. What pushes a young page
//!   towards the old sublist is pages *entering* the young sublist from
//!   outside (promoted old pages, pages inserted young): each one shifts
//!   the young tail across the boundary. Moving a young page to the head
//!   only reorders the young sublist and pushes nothing out. So the
//!   instance counts entries (`young_entries`), a page put at the young
//!   head remembers the count (`young_stamp`), and an access moves it again
//!   only once more than a quarter of the young sublist's length has
//!   entered since: it has drifted out of the top quarter as far as
//!   eviction pressure is concerned. In a working set that fits the pool,
//!   or during a scan kept in the old sublist by `innodb_old_blocks_time`,
//!   nothing enters and hits never take the LRU mutex. A page that crossed
//!   the boundary from the old side (stamp 0) sits at the young tail and
//!   moves on its next access. This is InnoDB's `freed_page_clock` rule
//!   with entries into the young sublist, rather than evictions, as the
//!   clock.
//!
//! The links live in arrays indexed by frame number, under the instance's
//! LRU mutex. The `old` flag and the young stamp are mirrored into the
//! frames' atomics, and `len` / `old_len` / the counter into [`LruShared`],
//! so the access path can decide lock-free whether it needs the mutex.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// "No frame".
pub(crate) const NIL: u32 = u32::MAX;

/// Lock-free mirrors of LRU state, readable without the LRU mutex.
#[derive(Debug)]
pub(crate) struct LruShared {
    /// Per frame: in the old sublist.
    pub(crate) old: Box<[AtomicBool]>,
    /// Per frame: value of `young_entries` when last put at the young head
    /// (0 = entered the young sublist by a boundary move: at its tail).
    pub(crate) young_stamp: Box<[AtomicU64]>,
    /// Pages that entered the young sublist from outside, plus one (so
    /// stamps taken from it are never 0).
    pub(crate) young_entries: AtomicU64,
    /// Pages on the list.
    pub(crate) len: AtomicUsize,
    /// Pages in the old sublist.
    pub(crate) old_len: AtomicUsize,
}

impl LruShared {
    pub(crate) fn new(frames: usize) -> LruShared {
        LruShared {
            old: (0..frames).map(|_| AtomicBool::new(false)).collect(),
            young_stamp: (0..frames).map(|_| AtomicU64::new(0)).collect(),
            young_entries: AtomicU64::new(1),
            len: AtomicUsize::new(0),
            old_len: AtomicUsize::new(0),
        }
    }

    /// True when more than a quarter of the young sublist has entered it
    /// since page `idx` (young) was last put at the head, so an access
    /// should move it back to the head.
    #[inline]
    pub(crate) fn young_needs_move(&self, idx: u32) -> bool {
        // PERF: three relaxed loads, no mutex.
        let stamp = self.young_stamp[idx as usize].load(Ordering::Relaxed);
        if stamp == 0 {
            // Crossed the boundary from the old side: at the young tail.
            return true;
        }
        let len = self.len.load(Ordering::Relaxed);
        let young_len = len.saturating_sub(self.old_len.load(Ordering::Relaxed)) as u64;
        let entered = self
            .young_entries
            .load(Ordering::Relaxed)
            .saturating_sub(stamp);
        entered > young_len / 4
    }

    #[inline]
    pub(crate) fn is_old(&self, idx: u32) -> bool {
        self.old[idx as usize].load(Ordering::Relaxed)
    }
}

/// The list itself (under the instance LRU mutex).
#[derive(Debug)]
pub(crate) struct LruList {
    prev: Box<[u32]>,
    next: Box<[u32]>,
    linked: Box<[bool]>,
    old: Box<[bool]>,
    head: u32,
    tail: u32,
    /// First page of the old sublist (NIL when it is empty).
    old_head: u32,
    len: usize,
    old_len: usize,
}

impl LruList {
    pub(crate) fn new(frames: usize) -> LruList {
        LruList {
            prev: vec![NIL; frames].into_boxed_slice(),
            next: vec![NIL; frames].into_boxed_slice(),
            linked: vec![false; frames].into_boxed_slice(),
            old: vec![false; frames].into_boxed_slice(),
            head: NIL,
            tail: NIL,
            old_head: NIL,
            len: 0,
            old_len: 0,
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[cfg(test)]
    pub(crate) fn old_len(&self) -> usize {
        self.old_len
    }

    pub(crate) fn tail(&self) -> u32 {
        self.tail
    }

    pub(crate) fn contains(&self, idx: u32) -> bool {
        self.linked[idx as usize]
    }

    /// The page in front of `idx` (towards the head).
    pub(crate) fn prev(&self, idx: u32) -> u32 {
        self.prev[idx as usize]
    }

    pub(crate) fn is_old(&self, idx: u32) -> bool {
        self.old[idx as usize]
    }

    fn set_old(&mut self, sh: &LruShared, idx: u32, old: bool) {
        self.old[idx as usize] = old;
        sh.old[idx as usize].store(old, Ordering::Relaxed);
    }

    fn publish(&self, sh: &LruShared) {
        sh.len.store(self.len, Ordering::Relaxed);
        sh.old_len.store(self.old_len, Ordering::Relaxed);
    }

    /// Links `idx` in front of `before` (NIL = at the tail).
    fn link_before(&mut self, idx: u32, before: u32) {
        let i = idx as usize;
        debug_assert!(!self.linked[i]);
        let after = if before == NIL {
            self.tail
        } else {
            self.prev[before as usize]
        };
        self.prev[i] = after;
        self.next[i] = before;
        if after == NIL {
            self.head = idx;
        } else {
            self.next[after as usize] = idx;
        }
        if before == NIL {
            self.tail = idx;
        } else {
            self.prev[before as usize] = idx;
        }
        self.linked[i] = true;
        self.len += 1;
    }

    fn unlink(&mut self, idx: u32) {
        let i = idx as usize;
        debug_assert!(self.linked[i]);
        let (p, n) = (self.prev[i], self.next[i]);
        if p == NIL {
            self.head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.prev[i] = NIL;
        self.next[i] = NIL;
        self.linked[i] = false;
        self.len -= 1;
        if self.old[i] {
            self.old_len -= 1;
            if self.old_head == idx {
                self.old_head = n;
            }
        }
    }

    /// Records that `idx` was put at the young head; `entered` when it came
    /// from outside the young sublist.
    fn stamp_young(&mut self, sh: &LruShared, idx: u32, entered: bool) {
        let v = if entered {
            sh.young_entries.fetch_add(1, Ordering::Relaxed) + 1
        } else {
            sh.young_entries.load(Ordering::Relaxed)
        };
        sh.young_stamp[idx as usize].store(v, Ordering::Relaxed);
    }

    /// Inserts a new page at the head of the old sublist (or at the young
    /// head when `young`, used when `innodb_old_blocks_time` is 0 and the
    /// first access already counts as "accessed again").
    pub(crate) fn insert(&mut self, sh: &LruShared, idx: u32, young: bool, old_pct: u32) {
        if young {
            self.link_before(idx, self.head);
            self.set_old(sh, idx, false);
            self.stamp_young(sh, idx, true);
        } else {
            self.link_before(idx, self.old_head);
            self.set_old(sh, idx, true);
            self.old_head = idx;
            self.old_len += 1;
        }
        self.adjust(sh, old_pct);
    }

    /// Moves `idx` to the young head.
    pub(crate) fn make_young(&mut self, sh: &LruShared, idx: u32, old_pct: u32) {
        let entered = self.old[idx as usize];
        self.unlink(idx);
        self.link_before(idx, self.head);
        self.set_old(sh, idx, false);
        self.stamp_young(sh, idx, entered);
        self.adjust(sh, old_pct);
    }

    /// Removes `idx` from the list.
    pub(crate) fn remove(&mut self, sh: &LruShared, idx: u32, old_pct: u32) {
        self.unlink(idx);
        self.set_old(sh, idx, false);
        self.adjust(sh, old_pct);
    }

    /// Moves the boundary until `old_len` is within the tolerance of its
    /// target.
    fn adjust(&mut self, sh: &LruShared, old_pct: u32) {
        let target = old_target(self.len, old_pct);
        let tol = tolerance(self.len);
        while self.old_len + tol < target {
            // Grow the old sublist: the last young page becomes old.
            let idx = if self.old_head == NIL {
                self.tail
            } else {
                self.prev[self.old_head as usize]
            };
            debug_assert_ne!(idx, NIL, "old_len < len implies a young page exists");
            self.set_old(sh, idx, true);
            self.old_head = idx;
            self.old_len += 1;
        }
        while self.old_len > target + tol {
            // Shrink it: the first old page becomes young, counted as far
            // from the young head.
            let idx = self.old_head;
            self.set_old(sh, idx, false);
            sh.young_stamp[idx as usize].store(0, Ordering::Relaxed);
            self.old_head = self.next[idx as usize];
            self.old_len -= 1;
        }
        self.publish(sh);
    }

    /// Pages from head to tail (for tests and diagnostics).
    pub(crate) fn to_vec(&self) -> Vec<u32> {
        let mut v = Vec::with_capacity(self.len);
        let mut cur = self.head;
        while cur != NIL {
            v.push(cur);
            cur = self.next[cur as usize];
        }
        v
    }
}

/// Target old-sublist length for a list of `len` pages.
pub(crate) fn old_target(len: usize, old_pct: u32) -> usize {
    len * old_pct as usize / 100
}

/// How far `old_len` may stray from its target before the boundary moves:
/// between 1 and 20 pages (InnoDB's `BUF_LRU_OLD_TOLERANCE`), about 3% of
/// the list.
pub(crate) fn tolerance(len: usize) -> usize {
    (len / 32).clamp(1, 20)
}

/// The `innodb_old_blocks_pct` / `innodb_old_blocks_time` settings, shared by
/// every instance and changeable at run time.
#[derive(Debug)]
pub(crate) struct LruPolicy {
    pub(crate) old_pct: AtomicU32,
    pub(crate) old_time_ms: AtomicU32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// Reference model: a Vec from head to tail plus the old-sublist length.
    struct Model {
        order: Vec<u32>,
        old_len: usize,
    }

    impl Model {
        fn boundary(&self) -> usize {
            self.order.len() - self.old_len
        }

        fn rebalance(&mut self, pct: u32) {
            let target = old_target(self.order.len(), pct);
            let tol = tolerance(self.order.len());
            if self.old_len + tol < target {
                self.old_len = target - tol;
            } else if self.old_len > target + tol {
                self.old_len = target + tol;
            }
        }
    }

    fn check(lru: &LruList, sh: &LruShared, m: &Model, step: usize, seed: u64) {
        let got = lru.to_vec();
        assert_eq!(got, m.order, "order differs at step {step} (seed {seed})");
        assert_eq!(
            lru.old_len(),
            m.old_len,
            "old_len differs at step {step} (seed {seed})"
        );
        let b = m.boundary();
        for (pos, &idx) in m.order.iter().enumerate() {
            assert_eq!(
                lru.is_old(idx),
                pos >= b,
                "old flag of {idx} at step {step} (seed {seed})"
            );
            assert_eq!(
                sh.is_old(idx),
                pos >= b,
                "mirrored flag at step {step} (seed {seed})"
            );
        }
        assert_eq!(sh.len.load(Ordering::Relaxed), m.order.len());
        assert_eq!(sh.old_len.load(Ordering::Relaxed), m.old_len);
    }

    #[test]
    fn midpoint_list_matches_model() {
        let seed = basalt_common::test_support::test_seed("midpoint_list_matches_model");
        let mut rng = SmallRng::seed_from_u64(seed);
        const N: usize = 200;
        let sh = LruShared::new(N);
        let mut lru = LruList::new(N);
        let mut m = Model {
            order: Vec::new(),
            old_len: 0,
        };
        let mut pct = 37;
        for step in 0..20_000 {
            if rng.gen_ratio(1, 500) {
                pct = rng.gen_range(5..=95);
            }
            let idx = rng.gen_range(0..N as u32);
            let linked = lru.contains(idx);
            match (linked, rng.gen_range(0..3)) {
                (false, 0) => {
                    lru.insert(&sh, idx, true, pct);
                    m.order.insert(0, idx);
                }
                (false, _) => {
                    lru.insert(&sh, idx, false, pct);
                    let b = m.boundary();
                    m.order.insert(b, idx);
                    m.old_len += 1;
                }
                (true, 0) => {
                    lru.remove(&sh, idx, pct);
                    let pos = m.order.iter().position(|&x| x == idx).expect("linked");
                    if pos >= m.boundary() {
                        m.old_len -= 1;
                    }
                    m.order.remove(pos);
                }
                (true, _) => {
                    lru.make_young(&sh, idx, pct);
                    let pos = m.order.iter().position(|&x| x == idx).expect("linked");
                    if pos >= m.boundary() {
                        m.old_len -= 1;
                    }
                    m.order.remove(pos);
                    m.order.insert(0, idx);
                }
            }
            m.rebalance(pct);
            check(&lru, &sh, &m, step, seed);
        }
    }

    #[test]
    fn young_pages_near_head_are_not_moved() {
        const N: usize = 100;
        let sh = LruShared::new(N);
        let mut lru = LruList::new(N);
        for i in 0..N as u32 {
            lru.insert(&sh, i, true, 25);
        }
        let young_len = lru.len() - lru.old_len();
        assert!(young_len >= 75 - tolerance(N) && young_len <= 75 + tolerance(N));
        // The quarter of the young sublist nearest the head stays put.
        let order = lru.to_vec();
        for (pos, &idx) in order.iter().enumerate().take(young_len) {
            assert_eq!(
                sh.young_needs_move(idx),
                pos > young_len / 4,
                "position {pos}"
            );
        }
        // Reordering the young sublist is not an entry: once the far pages
        // have been moved, nothing needs moving until new pages enter.
        for &idx in &order[..young_len] {
            if sh.young_needs_move(idx) {
                lru.make_young(&sh, idx, 25);
            }
        }
        assert!(order[..young_len].iter().all(|&i| !sh.young_needs_move(i)));
        // Promoting old pages is: after a quarter of the young length has
        // entered, the earliest-stamped pages need moving again.
        let old_pages: Vec<u32> = lru
            .to_vec()
            .into_iter()
            .filter(|&i| lru.is_old(i))
            .collect();
        for &idx in old_pages.iter().take(young_len / 4 + 1) {
            lru.make_young(&sh, idx, 25);
        }
        assert!(order[..young_len].iter().any(|&i| sh.young_needs_move(i)));
        // Pages that crossed the boundary into the young sublist count as far.
        let mut lru2 = LruList::new(10);
        let sh2 = LruShared::new(10);
        for i in 0..10 {
            lru2.insert(&sh2, i, false, 50);
        }
        let young: Vec<u32> = lru2
            .to_vec()
            .into_iter()
            .filter(|&i| !sh2.is_old(i))
            .collect();
        assert_eq!(young.len(), 10 - (5 + tolerance(10)));
        assert!(young.iter().all(|&i| sh2.young_needs_move(i)));
    }

    #[test]
    fn evict_then_insert_does_not_move_the_boundary() {
        const N: usize = 512;
        let sh = LruShared::new(N + 1);
        let mut lru = LruList::new(N + 1);
        for i in 0..N as u32 {
            lru.insert(&sh, i, false, 37);
        }
        let young_before: Vec<u32> = lru
            .to_vec()
            .into_iter()
            .filter(|&i| !lru.is_old(i))
            .collect();
        // A scan: evict the tail, insert the new page at the old head.
        let mut spare = N as u32;
        for _ in 0..2_000 {
            let victim = lru.tail();
            lru.remove(&sh, victim, 37);
            lru.insert(&sh, spare, false, 37);
            assert!(lru.is_old(spare), "a scanned page must stay old");
            spare = victim;
        }
        let young_after: Vec<u32> = lru
            .to_vec()
            .into_iter()
            .filter(|&i| !lru.is_old(i))
            .collect();
        assert_eq!(young_before, young_after);
    }
}
