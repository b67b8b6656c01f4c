//! [`PageGuard`]: a buffer-fixed, latched page.

use std::marker::PhantomData;

use basalt_common::{Lsn, PageId};
use basalt_page::header;

use crate::frame::Frame;
use crate::instance::Instance;

/// Page latch mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LatchMode {
    /// Shared (S): readers; many at once.
    Shared,
    /// Exclusive (X): one writer, no readers.
    Exclusive,
}

/// A page held in the buffer pool: buffer-fixed (cannot be evicted) and
/// latched in [`LatchMode`]. Dropping the guard releases the latch, then the
/// fix.
///
/// The guard is `!Send`: the page latch is released by the thread that took
/// it.
pub struct PageGuard<'a> {
    inst: &'a Instance,
    idx: u32,
    page_id: PageId,
    mode: LatchMode,
    _not_send: PhantomData<*const ()>,
}

impl<'a> PageGuard<'a> {
    /// Wraps a frame the caller has fixed and latched in `mode`.
    pub(crate) fn new(inst: &'a Instance, idx: u32, page_id: PageId, mode: LatchMode) -> Self {
        PageGuard {
            inst,
            idx,
            page_id,
            mode,
            _not_send: PhantomData,
        }
    }

    fn frame(&self) -> &Frame {
        self.inst.frame(self.idx)
    }

    pub(crate) fn instance(&self) -> &'a Instance {
        self.inst
    }

    pub(crate) fn frame_index(&self) -> u32 {
        self.idx
    }

    /// The page held.
    pub fn page_id(&self) -> PageId {
        self.page_id
    }

    /// The latch mode held.
    pub fn mode(&self) -> LatchMode {
        self.mode
    }

    /// The page bytes.
    #[inline]
    pub fn data(&self) -> &[u8] {
        // SAFETY: the guard holds the page latch (S or X) for its whole
        // life, and the returned slice borrows the guard.
        unsafe { self.frame().page() }
    }

    /// The page bytes, writable.
    ///
    /// # Panics
    /// When the guard holds only the shared latch: modifying a page under
    /// an S latch is a caller bug.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        assert_eq!(
            self.mode,
            LatchMode::Exclusive,
            "data_mut on an S-latched page {}",
            self.page_id
        );
        // SAFETY: the guard holds the exclusive latch, and `&mut self`
        // guarantees no other slice from this guard is alive.
        unsafe { self.frame().page_mut() }
    }

    /// Page LSN stored in the page header.
    pub fn page_lsn(&self) -> Lsn {
        header::page_lsn(self.data())
    }

    /// End LSN of the newest change noted with
    /// [`crate::BufferPool::note_modified`] (zero if none since the page
    /// was read).
    pub fn newest_modification(&self) -> Lsn {
        self.frame().newest_modification()
    }

    /// Start LSN of the oldest change not yet written (zero when clean).
    pub fn oldest_modification(&self) -> Lsn {
        self.frame().oldest_modification()
    }

    /// True when the page has changes not yet written to its file.
    pub fn is_dirty(&self) -> bool {
        self.frame().is_dirty()
    }

    /// True when the page sits in the old sublist of the LRU list.
    pub fn is_old(&self) -> bool {
        self.inst.lru_shared.is_old(self.idx)
    }

    /// Current buffer-fix count (this guard included).
    pub fn fix_count(&self) -> u32 {
        self.frame().fix_count()
    }

    /// Turns an exclusive latch into a shared one without letting a writer
    /// in between. No-op on a shared guard.
    pub fn downgrade(&mut self) {
        if self.mode == LatchMode::Exclusive {
            // SAFETY: the guard holds the exclusive latch; afterwards it
            // holds the shared latch, which `mode` now records.
            unsafe { self.frame().downgrade() };
            self.mode = LatchMode::Shared;
        }
    }
}

impl Drop for PageGuard<'_> {
    fn drop(&mut self) {
        let f = self.frame();
        match self.mode {
            // SAFETY: the guard holds the shared latch (recorded in `mode`).
            LatchMode::Shared => unsafe { f.unlock_shared() },
            // SAFETY: the guard holds the exclusive latch.
            LatchMode::Exclusive => unsafe { f.unlock_exclusive() },
        }
        self.inst.release_fix(self.idx);
    }
}

impl std::fmt::Debug for PageGuard<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageGuard")
            .field("page_id", &self.page_id)
            .field("mode", &self.mode)
            .field("frame", &(self.inst.id, self.idx))
            .finish()
    }
}
