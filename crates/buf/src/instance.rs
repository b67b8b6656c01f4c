//! One buffer-pool instance: its frames, page hash, free list, LRU list and
//! flush list, each under its own latch.
//!
//! Everything here works on frame indices of this instance; the pool routes
//! a page id to its instance and calls in. Latch order inside an instance
//! (see the crate doc for the full order):
//!
//! ```text
//! page latch  ->  LRU mutex  ->  page-hash partition latch
//! leaves (nothing taken inside): flush-list mutex, free-list mutex
//! ```

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use basalt_common::{Lsn, PageId, SpaceId};
use parking_lot::Mutex;

use crate::clock::Clock;
use crate::error::{BufError, BufResult};
use crate::flush_list::FlushList;
use crate::frame::{Frame, FrameArena, FrameState};
use crate::lru::{LruList, LruPolicy, LruShared, NIL};
use crate::page_hash::PageHash;
use crate::pool::BufferPool;
use crate::stats::BufStats;

/// Default of how long a thread looking for a free frame keeps trying while
/// every candidate is buffer-fixed before giving up with
/// [`BufError::NoFreeFrame`].
pub(crate) const FREE_FRAME_TIMEOUT: Duration = Duration::from_secs(30);

/// Outcome of one LRU-tail scan.
enum Victim {
    /// A clean page was evicted; the frame is private to the caller.
    Clean(u32),
    /// No clean page within the scan depth; this dirty page was pinned
    /// (write-fixed and buffer-fixed) for a single-page flush.
    Dirty(u32),
    /// Nothing usable (everything fixed or being written).
    None,
}

/// One buffer-pool instance.
#[derive(Debug)]
pub(crate) struct Instance {
    pub(crate) id: usize,
    pub(crate) frames: Box<[Frame]>,
    // Declared after `frames`: the arena (page memory) is freed last.
    _arena: FrameArena,
    pub(crate) hash: PageHash,
    lru: Mutex<LruList>,
    pub(crate) lru_shared: LruShared,
    flush_list: Mutex<FlushList>,
    free: Mutex<Vec<u32>>,
    free_len: AtomicUsize,
    dirty_len: AtomicUsize,
    /// Set at the first eviction. Until then (warm-up, or a working set
    /// that fits) the LRU order decides nothing, so accesses leave it alone.
    evicting: AtomicBool,
}

impl Instance {
    pub(crate) fn new(id: usize, frames: usize) -> Instance {
        let arena = FrameArena::new(frames);
        let frame_blocks = Frame::for_arena(&arena);
        // Pop order = ascending frame index (cosmetic, keeps tests readable).
        let free: Vec<u32> = (0..frames as u32).rev().collect();
        Instance {
            id,
            frames: frame_blocks,
            _arena: arena,
            hash: PageHash::new(frames),
            lru: Mutex::new(LruList::new(frames)),
            lru_shared: LruShared::new(frames),
            flush_list: Mutex::new(FlushList::default()),
            free: Mutex::new(free),
            free_len: AtomicUsize::new(frames),
            dirty_len: AtomicUsize::new(0),
            evicting: AtomicBool::new(false),
        }
    }

    #[inline]
    pub(crate) fn frame(&self, idx: u32) -> &Frame {
        &self.frames[idx as usize]
    }

    // ---- gauges ------------------------------------------------------------

    pub(crate) fn free_len(&self) -> usize {
        self.free_len.load(Ordering::Relaxed)
    }

    pub(crate) fn dirty_len(&self) -> usize {
        self.dirty_len.load(Ordering::Relaxed)
    }

    pub(crate) fn lru_len(&self) -> usize {
        self.lru_shared.len.load(Ordering::Relaxed)
    }

    pub(crate) fn old_len(&self) -> usize {
        self.lru_shared.old_len.load(Ordering::Relaxed)
    }

    // ---- free list -----------------------------------------------------------

    fn pop_free(&self) -> Option<u32> {
        let idx = self.free.lock().pop()?;
        self.free_len.fetch_sub(1, Ordering::Relaxed);
        self.frame(idx).set_state(FrameState::Private);
        Some(idx)
    }

    /// Returns a private (or orphaned, last-unfixed) frame to the free list.
    pub(crate) fn push_free(&self, idx: u32) {
        let f = self.frame(idx);
        debug_assert!(!f.is_write_fixed() && !f.is_dirty());
        f.clear_fix();
        f.set_state(FrameState::Free);
        self.free.lock().push(idx);
        self.free_len.fetch_add(1, Ordering::Relaxed);
    }

    // ---- page hash -------------------------------------------------------------

    /// Looks `id` up and buffer-fixes its frame.
    #[inline]
    pub(crate) fn lookup_fix(&self, id: PageId) -> Option<u32> {
        // PERF: shared partition latch, one probe, one atomic add.
        let part = self.hash.read(id);
        let idx = *part.get(&id)?;
        self.frame(idx).fix();
        Some(idx)
    }

    /// True when `id` is in the page hash (no fix taken).
    pub(crate) fn contains(&self, id: PageId) -> bool {
        self.hash.read(id).contains_key(&id)
    }

    /// Drops a buffer-fix, freeing the frame if it was the last fix of an
    /// orphan.
    #[inline]
    pub(crate) fn release_fix(&self, idx: u32) {
        if self.frame(idx).unfix() {
            self.push_free(idx);
        }
    }

    /// Publishes private frame `idx` (exclusively latched, fixed once by the
    /// caller) under `id` in state Reading. Returns false when another
    /// thread published the page first; the frame is then still private.
    pub(crate) fn publish_reading(&self, id: PageId, idx: u32) -> bool {
        let mut part = self.hash.write(id);
        if part.contains_key(&id) {
            return false;
        }
        self.frame(idx).set_state(FrameState::Reading);
        part.insert(id, idx);
        true
    }

    /// Withdraws a frame whose read failed: out of the page hash, marked
    /// failed and orphaned. The caller still holds its exclusive latch and
    /// one fix; it must unlatch, then `release_fix`.
    pub(crate) fn withdraw_failed(&self, id: PageId, idx: u32) {
        let f = self.frame(idx);
        {
            let mut part = self.hash.write(id);
            let removed = part.remove(&id);
            debug_assert_eq!(removed, Some(idx));
        }
        f.set_state(FrameState::Failed);
        f.orphan();
    }

    // ---- LRU -------------------------------------------------------------------------

    /// Puts a freshly read or created page on the LRU list: at the old head,
    /// or at the young head when `innodb_old_blocks_time` is 0 (then the
    /// first access already qualifies). Counts the access like any other
    /// once the instance evicts.
    pub(crate) fn lru_insert_new(&self, idx: u32, policy: &LruPolicy, stats: &BufStats) {
        let pct = policy.old_pct.load(Ordering::Relaxed);
        let young = policy.old_time_ms.load(Ordering::Relaxed) == 0;
        self.lru.lock().insert(&self.lru_shared, idx, young, pct);
        if !self.evicting.load(Ordering::Relaxed) {
            return;
        }
        if young {
            stats.pages_made_young.inc();
        } else {
            stats.pages_not_made_young.inc();
        }
    }

    /// Access bookkeeping of a page hit (the caller holds a fix and the page
    /// latch): maybe move the page to the young head. Nothing moves before
    /// the instance's first eviction.
    #[inline]
    pub(crate) fn on_access(
        &self,
        idx: u32,
        clock: &dyn Clock,
        policy: &LruPolicy,
        stats: &BufStats,
    ) {
        // PERF: lock-free unless the page actually moves; the clock is only
        // read for old pages and first accesses.
        let f = self.frame(idx);
        let first = f.first_access_ms.load(Ordering::Relaxed);
        if !self.evicting.load(Ordering::Relaxed) {
            // No eviction yet: order is irrelevant (as InnoDB does while
            // its freed-page clock is 0). Keep the first access time only.
            if first == 0 {
                f.first_access_ms.store(clock.now_ms(), Ordering::Relaxed);
            }
            return;
        }
        let old = self.lru_shared.is_old(idx);
        let now_ms = if first == 0 || old { clock.now_ms() } else { 0 };
        if first == 0 {
            f.first_access_ms.store(now_ms, Ordering::Relaxed);
        }
        let move_it = if old {
            let window = u64::from(policy.old_time_ms.load(Ordering::Relaxed));
            let late_enough = window == 0 || (first != 0 && now_ms.saturating_sub(first) >= window);
            if !late_enough {
                stats.pages_not_made_young.inc();
            }
            late_enough
        } else {
            self.lru_shared.young_needs_move(idx)
        };
        if move_it {
            let pct = policy.old_pct.load(Ordering::Relaxed);
            let mut lru = self.lru.lock();
            // A fixed page in state InUse is on the list; a page still being
            // published (read just finished) may not be yet.
            if lru.contains(idx) {
                lru.make_young(&self.lru_shared, idx, pct);
                drop(lru);
                stats.pages_made_young.inc();
            }
        }
    }

    /// Finds a frame for a new page: free list, else a clean page evicted
    /// from the LRU tail, else a dirty LRU victim written by a single-page
    /// flush and then evicted. The frame comes back private and unlatched.
    pub(crate) fn allocate(&self, pool: &BufferPool) -> BufResult<u32> {
        let started = Instant::now();
        let mut depth = pool.config().lru_scan_depth as usize;
        let mut counted_wait = false;
        let mut pause = Duration::from_micros(50);
        loop {
            if let Some(idx) = self.pop_free() {
                return Ok(idx);
            }
            match self.find_victim(depth, pool) {
                Victim::Clean(idx) => return Ok(idx),
                Victim::Dirty(idx) => {
                    // Written (or skipped if busy); the next scan finds it
                    // clean at the tail unless someone touched it meanwhile.
                    pool.flush_single(self, idx)?;
                    continue;
                }
                Victim::None => {}
            }
            if depth < self.frames.len() {
                depth = self.frames.len();
                continue;
            }
            if !counted_wait {
                pool.stats_ref().wait_free.inc();
                counted_wait = true;
            }
            let waited = started.elapsed();
            if waited >= pool.free_frame_timeout() {
                return Err(BufError::NoFreeFrame {
                    instance: self.id,
                    waited_ms: waited.as_millis() as u64,
                });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(10));
        }
    }

    fn find_victim(&self, depth: usize, pool: &BufferPool) -> Victim {
        let pct = pool.lru_policy().old_pct.load(Ordering::Relaxed);
        let mut lru = self.lru.lock();
        let mut cur = lru.tail();
        let mut scanned = 0;
        let mut dirty = NIL;
        while cur != NIL && scanned < depth {
            let f = self.frame(cur);
            if !f.is_fixed() && !f.is_write_fixed() {
                if !f.is_dirty() {
                    let id = f.page_id();
                    let mut part = self.hash.write(id);
                    // Re-check under the exclusive partition latch: no new
                    // fix can be taken now (fixes are taken under the shared
                    // side), and a page cannot be dirtied without a fix.
                    if !f.is_fixed()
                        && !f.is_dirty()
                        && !f.is_write_fixed()
                        && part.get(&id) == Some(&cur)
                    {
                        part.remove(&id);
                        drop(part);
                        lru.remove(&self.lru_shared, cur, pct);
                        f.set_state(FrameState::Private);
                        self.evicting.store(true, Ordering::Relaxed);
                        pool.stats_ref().pages_evicted.inc();
                        return Victim::Clean(cur);
                    }
                } else if dirty == NIL {
                    dirty = cur;
                }
            }
            cur = lru.prev(cur);
            scanned += 1;
        }
        if dirty != NIL {
            let f = self.frame(dirty);
            // Fixing under the LRU mutex is safe: eviction needs this mutex,
            // and the page is dirty (not evictable) anyway.
            if f.try_write_fix() {
                f.fix();
                return Victim::Dirty(dirty);
            }
        }
        Victim::None
    }

    // ---- flush list ------------------------------------------------------------------

    /// Records a modification of page `idx` (exclusively latched by the
    /// caller): `newest` always, and `oldest` + flush-list insertion when the
    /// page was clean.
    #[inline]
    pub(crate) fn note_modified(&self, idx: u32, oldest: Lsn, newest: Lsn) {
        let f = self.frame(idx);
        // Fast path: dirty and no write in flight. The write fix is read
        // FIRST: a completing write clears `oldest` before it clears the
        // write fix, so seeing "no write fix" then "dirty" means no write
        // can turn the page clean behind our back (a new write cannot copy
        // the page while we hold its exclusive latch, and will copy our
        // change when it does).
        if !f.is_write_fixed() && f.is_dirty() {
            // PERF: no mutex for pages already on the flush list.
            f.set_newest_modification(newest);
            return;
        }
        let mut fl = self.flush_list.lock();
        f.set_newest_modification(newest);
        if !f.is_dirty() {
            f.set_oldest_modification(oldest);
            fl.insert(oldest, idx);
            self.dirty_len.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Oldest modification of any dirty page of this instance.
    pub(crate) fn oldest_modification(&self) -> Option<Lsn> {
        self.flush_list.lock().oldest()
    }

    /// Lists up to `max` flush candidates, oldest first: dirty pages whose
    /// oldest modification is below `lsn_limit`, not being written and not
    /// in `exclude`. Nothing is pinned; see [`Instance::pin_for_flush`].
    pub(crate) fn peek_flush(
        &self,
        max: usize,
        lsn_limit: Lsn,
        exclude: &std::collections::HashSet<u32>,
        out: &mut Vec<(Lsn, usize, u32)>,
    ) {
        let fl = self.flush_list.lock();
        let mut taken = 0;
        for (lsn, idx) in fl.iter() {
            if taken >= max || lsn >= lsn_limit {
                break;
            }
            if exclude.contains(&idx) || self.frame(idx).is_write_fixed() {
                continue;
            }
            out.push((lsn, self.id, idx));
            taken += 1;
        }
    }

    /// Pins (write fix + buffer fix) candidate `idx` if it is still on the
    /// flush list with oldest modification `lsn` and not being written.
    pub(crate) fn pin_for_flush(&self, lsn: Lsn, idx: u32) -> bool {
        let fl = self.flush_list.lock();
        let f = self.frame(idx);
        // Safe to fix under the flush-list mutex: the page is dirty (it is
        // on the list), so eviction leaves it alone.
        if fl.contains(lsn, idx) && f.try_write_fix() {
            f.fix();
            true
        } else {
            false
        }
    }

    /// Ends a write of page `idx` whose copy had `written_newest`: the page
    /// becomes clean unless it was modified after the copy. Clears the
    /// write fix (the caller still holds its buffer fix). Returns true when
    /// the page became clean.
    pub(crate) fn complete_write(&self, idx: u32, written_newest: Lsn) -> bool {
        let f = self.frame(idx);
        let clean = {
            let mut fl = self.flush_list.lock();
            let unchanged = f.newest_modification() == written_newest && f.is_dirty();
            if unchanged {
                let removed = fl.remove(f.oldest_modification(), idx);
                debug_assert!(removed, "dirty page missing from its flush list");
                f.set_oldest_modification(Lsn::ZERO);
                self.dirty_len.fetch_sub(1, Ordering::Relaxed);
            }
            unchanged
        };
        f.clear_write_fix();
        clean
    }

    /// Drops a write fix without completing (the write failed or was
    /// skipped); the page stays dirty.
    pub(crate) fn abandon_write(&self, idx: u32) {
        self.frame(idx).clear_write_fix();
    }

    // ---- tablespace drop ----------------------------------------------------------------

    /// Removes every page of `space` from this instance without writing it.
    /// Returns how many pages could not be removed because they were fixed
    /// or being written.
    pub(crate) fn discard_space(&self, space: SpaceId, policy: &LruPolicy) -> usize {
        let pct = policy.old_pct.load(Ordering::Relaxed);
        let mut lru = self.lru.lock();
        let members: Vec<u32> = lru
            .to_vec()
            .into_iter()
            .filter(|&i| self.frame(i).page_id().space == space)
            .collect();
        let mut busy = 0;
        for idx in members {
            let f = self.frame(idx);
            let id = f.page_id();
            let mut part = self.hash.write(id);
            if f.is_fixed() || f.is_write_fixed() {
                busy += 1;
                continue;
            }
            part.remove(&id);
            drop(part);
            if f.is_dirty() {
                let mut fl = self.flush_list.lock();
                fl.remove(f.oldest_modification(), idx);
                f.set_oldest_modification(Lsn::ZERO);
                self.dirty_len.fetch_sub(1, Ordering::Relaxed);
            }
            lru.remove(&self.lru_shared, idx, pct);
            f.set_state(FrameState::Private);
            self.push_free(idx);
        }
        busy
    }

    /// Page ids on the LRU list from young head to old tail, with their old
    /// flag (diagnostics and tests).
    pub(crate) fn lru_snapshot(&self) -> Vec<(PageId, bool)> {
        let lru = self.lru.lock();
        lru.to_vec()
            .into_iter()
            .map(|i| (self.frame(i).page_id(), lru.is_old(i)))
            .collect()
    }
}
