//! Frames: the 16 KiB page buffers and their control blocks.
//!
//! An instance allocates all of its page memory at start in one
//! [`FrameArena`] aligned to the page size (so O_DIRECT can read into and
//! write from it directly). Each [`Frame`] is the control block of one
//! slot: page latch, buffer-fix count, state, LSNs and LRU bookkeeping. The
//! only `unsafe` of the pool lives here: turning the arena pointer into page
//! slices, which is sound because every caller holds the frame's page latch
//! in the mode the slice needs (shared for `&[u8]`, exclusive for
//! `&mut [u8]`) or owns the frame privately.

use std::alloc::{alloc_zeroed, dealloc, handle_alloc_error, Layout};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};

use basalt_common::{Lsn, PageId, PAGE_SIZE};
use parking_lot::lock_api::RawRwLock as _;
use parking_lot::RawRwLock;

/// What a frame currently holds. Stored in [`Frame::state`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum FrameState {
    /// On the instance free list.
    Free = 0,
    /// Owned by one thread (just allocated or just evicted); in no list and
    /// not in the page hash.
    Private = 1,
    /// In the page hash, being read from disk by the thread that holds its
    /// exclusive latch; not yet on the LRU list.
    Reading = 2,
    /// In the page hash and on the LRU list, holding a valid page.
    InUse = 3,
    /// The read failed: removed from the page hash, waiting for its last
    /// buffer-fix to go away (the last unfixer frees it).
    Failed = 4,
}

impl FrameState {
    fn from_u8(v: u8) -> FrameState {
        match v {
            0 => FrameState::Free,
            1 => FrameState::Private,
            2 => FrameState::Reading,
            3 => FrameState::InUse,
            _ => FrameState::Failed,
        }
    }
}

/// Bit set in the fix word of a frame that left the page hash while still
/// buffer-fixed ([`FrameState::Failed`]): whoever drops the count to zero
/// returns it to the free list.
const ORPHAN: u32 = 1 << 31;

/// Page memory of one instance: `frames` pages, contiguous, aligned to
/// [`PAGE_SIZE`].
pub(crate) struct FrameArena {
    ptr: NonNull<u8>,
    layout: Layout,
    frames: usize,
}

// SAFETY: the arena is a plain heap allocation; it hands out raw pointers
// only, and every dereference of those pointers is synchronised by the
// latch of the frame that owns the page (see `Frame::page`).
unsafe impl Send for FrameArena {}
// SAFETY: as above; `&FrameArena` gives no access to the bytes by itself.
unsafe impl Sync for FrameArena {}

impl FrameArena {
    /// Allocates `frames` zeroed pages.
    pub(crate) fn new(frames: usize) -> FrameArena {
        let layout = Layout::from_size_align(frames.max(1) * PAGE_SIZE, PAGE_SIZE)
            .expect("frame arena size fits in isize (validated pool size)");
        // SAFETY: the layout has a non-zero size (frames.max(1) pages).
        let raw = unsafe { alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(raw) else {
            handle_alloc_error(layout)
        };
        FrameArena {
            ptr,
            layout,
            frames,
        }
    }

    /// Start of page `idx`.
    fn page_ptr(&self, idx: usize) -> NonNull<u8> {
        assert!(idx < self.frames, "frame index {idx} out of range");
        // SAFETY: idx < frames, so the offset idx * PAGE_SIZE stays inside
        // the allocation of frames * PAGE_SIZE bytes.
        unsafe { self.ptr.add(idx * PAGE_SIZE) }
    }
}

impl Drop for FrameArena {
    fn drop(&mut self) {
        // SAFETY: ptr was allocated in `new` with exactly this layout and is
        // freed once, here. Frames pointing into it are dropped with the
        // instance and never dereferenced during drop.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

impl std::fmt::Debug for FrameArena {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FrameArena({} frames)", self.frames)
    }
}

/// Control block of one frame.
pub(crate) struct Frame {
    /// The page latch (S/X), taken by mtrs through `PageGuard`, by the
    /// reader for the duration of a read, by the flusher (S) to copy.
    pub(crate) latch: RawRwLock,
    /// Buffer-fix count (low 31 bits) plus the [`ORPHAN`] bit. A fixed frame
    /// is never evicted or reused.
    fix: AtomicU32,
    state: AtomicU8,
    /// Set while a write of this page is in flight (flush-list batch or
    /// single-page flush); at most one write per page at a time.
    write_fix: AtomicBool,
    /// Packed [`PageId`], valid in states Reading / InUse / Failed.
    page_id: AtomicU64,
    /// LSN of the first change not yet written (0 = clean). Changed only
    /// under the instance flush-list mutex.
    oldest: AtomicU64,
    /// End LSN of the newest change (0 = never modified since read).
    newest: AtomicU64,
    /// Clock time of the first access since the page was read or created
    /// (0 = none yet).
    pub(crate) first_access_ms: AtomicU64,
    data: NonNull<u8>,
}

// SAFETY: `data` points into the instance's arena, which outlives every
// frame; access to the bytes goes through `page`/`page_mut`, whose callers
// hold the page latch. All other fields are atomics or a raw lock.
unsafe impl Send for Frame {}
// SAFETY: as above.
unsafe impl Sync for Frame {}

impl Frame {
    /// Control blocks for every page of `arena`.
    pub(crate) fn for_arena(arena: &FrameArena) -> Box<[Frame]> {
        (0..arena.frames)
            .map(|i| Frame {
                latch: RawRwLock::INIT,
                fix: AtomicU32::new(0),
                state: AtomicU8::new(FrameState::Free as u8),
                write_fix: AtomicBool::new(false),
                page_id: AtomicU64::new(0),
                oldest: AtomicU64::new(0),
                newest: AtomicU64::new(0),
                first_access_ms: AtomicU64::new(0),
                data: arena.page_ptr(i),
            })
            .collect()
    }

    /// The page bytes, shared.
    ///
    /// # Safety
    /// The caller holds the page latch (shared or exclusive) for as long as
    /// the slice lives, or owns the frame privately (state `Private`, or
    /// `Reading` while holding the exclusive latch).
    pub(crate) unsafe fn page(&self) -> &[u8] {
        // SAFETY: `data` is the start of a PAGE_SIZE slot of the arena; the
        // caller's latch excludes writers for the slice's lifetime.
        unsafe { std::slice::from_raw_parts(self.data.as_ptr(), PAGE_SIZE) }
    }

    /// The page bytes, exclusive.
    ///
    /// # Safety
    /// The caller holds the page latch exclusively for as long as the slice
    /// lives (or owns the frame privately), and creates no other slice of
    /// this page meanwhile.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn page_mut(&self) -> &mut [u8] {
        // SAFETY: `data` is the start of a PAGE_SIZE slot of the arena; the
        // exclusive latch guarantees no other reference to these bytes.
        unsafe { std::slice::from_raw_parts_mut(self.data.as_ptr(), PAGE_SIZE) }
    }

    // ---- state -----------------------------------------------------------

    pub(crate) fn state(&self) -> FrameState {
        FrameState::from_u8(self.state.load(Ordering::Acquire))
    }

    pub(crate) fn set_state(&self, s: FrameState) {
        self.state.store(s as u8, Ordering::Release);
    }

    pub(crate) fn page_id(&self) -> PageId {
        PageId::from_u64(self.page_id.load(Ordering::Acquire))
    }

    pub(crate) fn set_page_id(&self, id: PageId) {
        self.page_id.store(id.to_u64(), Ordering::Release);
    }

    // ---- buffer fix --------------------------------------------------------

    /// Adds a buffer-fix. Callers hold the page-hash partition latch (the
    /// frame is found there) or the LRU / flush-list mutex of a frame that
    /// cannot be evicted meanwhile.
    #[inline]
    pub(crate) fn fix(&self) {
        self.fix.fetch_add(1, Ordering::SeqCst);
    }

    /// Drops a buffer-fix. Returns true when the caller removed the last fix
    /// of an orphaned frame and must return it to the free list.
    #[inline]
    #[must_use]
    pub(crate) fn unfix(&self) -> bool {
        let prev = self.fix.fetch_sub(1, Ordering::SeqCst);
        debug_assert!(prev & !ORPHAN > 0, "unfix of an unfixed frame");
        prev == ORPHAN | 1
    }

    /// Marks a (fixed) frame orphaned: it left the page hash and the last
    /// unfix frees it.
    pub(crate) fn orphan(&self) {
        self.fix.fetch_or(ORPHAN, Ordering::SeqCst);
    }

    /// Resets the fix word of a frame going back to the free list.
    pub(crate) fn clear_fix(&self) {
        self.fix.store(0, Ordering::SeqCst);
    }

    pub(crate) fn is_fixed(&self) -> bool {
        self.fix.load(Ordering::SeqCst) != 0
    }

    pub(crate) fn fix_count(&self) -> u32 {
        self.fix.load(Ordering::SeqCst) & !ORPHAN
    }

    // ---- write fix -----------------------------------------------------------

    /// Claims the right to write this page. False when a write is already in
    /// flight.
    pub(crate) fn try_write_fix(&self) -> bool {
        self.write_fix
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    pub(crate) fn clear_write_fix(&self) {
        self.write_fix.store(false, Ordering::SeqCst);
    }

    pub(crate) fn is_write_fixed(&self) -> bool {
        self.write_fix.load(Ordering::SeqCst)
    }

    // ---- modification LSNs ---------------------------------------------------

    pub(crate) fn oldest_modification(&self) -> Lsn {
        Lsn(self.oldest.load(Ordering::SeqCst))
    }

    /// Only under the instance flush-list mutex.
    pub(crate) fn set_oldest_modification(&self, lsn: Lsn) {
        self.oldest.store(lsn.0, Ordering::SeqCst);
    }

    pub(crate) fn newest_modification(&self) -> Lsn {
        Lsn(self.newest.load(Ordering::SeqCst))
    }

    pub(crate) fn set_newest_modification(&self, lsn: Lsn) {
        self.newest.store(lsn.0, Ordering::SeqCst);
    }

    pub(crate) fn is_dirty(&self) -> bool {
        self.oldest.load(Ordering::SeqCst) != 0
    }

    // ---- page latch ------------------------------------------------------------

    pub(crate) fn lock_shared(&self) {
        self.latch.lock_shared();
    }

    pub(crate) fn lock_exclusive(&self) {
        self.latch.lock_exclusive();
    }

    pub(crate) fn try_lock_shared(&self) -> bool {
        self.latch.try_lock_shared()
    }

    pub(crate) fn try_lock_exclusive(&self) -> bool {
        self.latch.try_lock_exclusive()
    }

    /// Shared latch, giving up after `timeout`.
    pub(crate) fn try_lock_shared_for(&self, timeout: std::time::Duration) -> bool {
        use parking_lot::lock_api::RawRwLockTimed as _;
        self.latch.try_lock_shared_for(timeout)
    }

    /// # Safety
    /// The caller holds the shared latch.
    pub(crate) unsafe fn unlock_shared(&self) {
        // SAFETY: forwarded precondition.
        unsafe { self.latch.unlock_shared() }
    }

    /// # Safety
    /// The caller holds the exclusive latch.
    pub(crate) unsafe fn unlock_exclusive(&self) {
        // SAFETY: forwarded precondition.
        unsafe { self.latch.unlock_exclusive() }
    }

    /// # Safety
    /// The caller holds the exclusive latch; it holds the shared latch after.
    pub(crate) unsafe fn downgrade(&self) {
        use parking_lot::lock_api::RawRwLockDowngrade as _;
        // SAFETY: forwarded precondition.
        unsafe { self.latch.downgrade() }
    }

    /// Resets the per-page bookkeeping of a frame about to hold `id`.
    pub(crate) fn reset_for(&self, id: PageId) {
        self.set_page_id(id);
        self.oldest.store(0, Ordering::SeqCst);
        self.newest.store(0, Ordering::SeqCst);
        self.first_access_ms.store(0, Ordering::Relaxed);
    }
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame")
            .field("state", &self.state())
            .field("page_id", &self.page_id())
            .field("fix", &self.fix.load(Ordering::Relaxed))
            .field("oldest", &self.oldest_modification())
            .field("newest", &self.newest_modification())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arena_pages_are_aligned_and_disjoint() {
        let arena = FrameArena::new(4);
        let frames = Frame::for_arena(&arena);
        for (i, f) in frames.iter().enumerate() {
            assert_eq!(f.data.as_ptr() as usize % PAGE_SIZE, 0);
            assert!(f.try_lock_exclusive(), "fresh latch is free");
            // SAFETY: exclusive latch held just above.
            unsafe { f.page_mut().fill(i as u8 + 1) };
            // SAFETY: exclusive latch held.
            unsafe { f.unlock_exclusive() };
        }
        for (i, f) in frames.iter().enumerate() {
            f.lock_shared();
            // SAFETY: shared latch held.
            let page = unsafe { f.page() };
            assert!(page.iter().all(|&b| b == i as u8 + 1));
            // SAFETY: shared latch held.
            unsafe { f.unlock_shared() };
        }
    }

    #[test]
    fn last_unfix_of_an_orphan_frees_it() {
        let arena = FrameArena::new(1);
        let frames = Frame::for_arena(&arena);
        let f = &frames[0];
        f.fix();
        f.fix();
        assert!(!f.unfix(), "not orphaned: nobody frees");
        f.fix();
        f.orphan();
        assert_eq!(f.fix_count(), 2);
        assert!(!f.unfix());
        assert!(f.unfix(), "last fix of an orphan");
        f.clear_fix();
        assert!(!f.is_fixed());
    }
}
