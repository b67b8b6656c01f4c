//! Latching for writes: the optimistic descent, the pessimistic descent,
//! and the latch-order exception for left neighbours.
//!
//! ```text
//!  optimistic   root S ─▶ … ─▶ level-1 node S ─▶ leaf X, parent released
//!               (a leaf root is re-latched X after checking its level)
//!
//!  pessimistic  root X ─▶ child X ─▶ … ─▶ leaf X
//!               every node that is *safe* for the operation releases all
//!               its ancestors: it absorbs whatever happens below it
//! ```
//!
//! A node is safe for an insert when one more node pointer of maximal
//! length fits; for a removal when it keeps at least two pointers and stays
//! above the merge threshold after losing one of maximal length (a root:
//! keeps at least two pointers). An operation changes at most one node
//! pointer per level, so everything above the lowest safe node is
//! untouched and may be released during the descent.

use basalt_buf::LatchMode;
use basalt_common::{PageId, FIL_NULL};
use basalt_mtr::{Mtr, PageRef};
use basalt_page::header;
use basalt_page::index_page::{IndexPage, SearchMode, SLOT_SIZE};

use crate::error::{BTreeError, Result};
use crate::tree::{release, BTree, MERGE_THRESHOLD};

/// What a pessimistic descent prepares for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Intent {
    /// The leaf may split (insert, growing update).
    Insert,
    /// The leaf may become underfull or empty (physical removal).
    Delete,
}

/// A node page on the pessimistic path, X-latched.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Level {
    /// The latched page.
    pub(crate) r: PageRef,
    /// Its id.
    pub(crate) id: PageId,
    /// Slot of the node pointer the descent followed.
    pub(crate) slot: usize,
}

/// Result of a pessimistic descent: the X-latched ancestors that may
/// change (top first; the last one is the leaf's parent unless the leaf is
/// the root) and the X-latched leaf.
#[derive(Debug)]
pub(crate) struct Path {
    pub(crate) levels: Vec<Level>,
    pub(crate) leaf: PageRef,
    pub(crate) leaf_id: PageId,
}

impl BTree {
    /// True when `page` absorbs any change `intent` can make below it.
    fn node_is_safe(&self, page: &IndexPage<'_>, is_root: bool, intent: Intent) -> bool {
        let ptr = self.max_ptr_len + SLOT_SIZE;
        match intent {
            Intent::Insert => page.free_space() >= ptr,
            Intent::Delete if is_root => page.n_recs() >= 3,
            Intent::Delete => {
                page.n_recs() >= 2 && page.used_bytes().saturating_sub(ptr) >= MERGE_THRESHOLD
            }
        }
    }

    /// Optimistic descent: shared latches down to the leaf's parent, then
    /// the leaf exclusively. Routes with "last node pointer <= key".
    // PERF: as the read descent, plus one X latch; no allocation.
    pub(crate) fn leaf_for_write(
        &self,
        mtr: &mut Mtr<'_>,
        key: &[Option<&[u8]>],
    ) -> Result<(PageRef, PageId)> {
        let root_id = self.root_id();
        'restart: loop {
            let r = mtr.get(root_id, LatchMode::Shared)?;
            if self.view(mtr.page(r), root_id)?.is_leaf() {
                if mtr.mode(r) == LatchMode::Exclusive {
                    return Ok((r, root_id));
                }
                release(mtr, r);
                let r = mtr.get(root_id, LatchMode::Exclusive)?;
                if self.view(mtr.page(r), root_id)?.is_leaf() {
                    return Ok((r, root_id));
                }
                // The root split while it was unlatched.
                release(mtr, r);
                continue 'restart;
            }
            let (mut cur, mut cur_id) = (r, root_id);
            loop {
                let page = self.view(mtr.page(cur), cur_id)?;
                let level = page.level();
                let (_, child) = page
                    .child_for(&self.layout, key, SearchMode::Greater)
                    .map_err(|e| BTreeError::page(cur_id, e))?;
                let child_id = self.id(child);
                if child_id == cur_id {
                    return Err(BTreeError::corrupt(cur_id, "node pointer to itself"));
                }
                let mode = if level == 1 {
                    LatchMode::Exclusive
                } else {
                    LatchMode::Shared
                };
                let c = mtr.get(child_id, mode)?;
                release(mtr, cur);
                let cp = self.view_at(mtr.page(c), child_id, Some(level - 1))?;
                if cp.is_leaf() {
                    return Ok((c, child_id));
                }
                cur = c;
                cur_id = child_id;
            }
        }
    }

    /// Pessimistic descent for `key`: exclusive latches from the root,
    /// releasing the ancestors of every node that is safe for `intent`.
    pub(crate) fn path_for_write(
        &self,
        mtr: &mut Mtr<'_>,
        key: &[Option<&[u8]>],
        intent: Intent,
    ) -> Result<Path> {
        let root_id = self.root_id();
        let mut levels: Vec<Level> = Vec::new();
        let mut r = mtr.get(root_id, LatchMode::Exclusive)?;
        let mut id = root_id;
        let mut level = None;
        loop {
            let page = self.view_at(mtr.page(r), id, level)?;
            if page.is_leaf() {
                return Ok(Path {
                    levels,
                    leaf: r,
                    leaf_id: id,
                });
            }
            let safe = self.node_is_safe(&page, id == root_id, intent);
            let (slot, child) = page
                .child_for(&self.layout, key, SearchMode::Greater)
                .map_err(|e| BTreeError::page(id, e))?;
            let next_level = page.level() - 1;
            if safe {
                for l in levels.drain(..) {
                    release(mtr, l.r);
                }
            }
            levels.push(Level { r, id, slot });
            let child_id = self.id(child);
            if levels.iter().any(|l| l.id == child_id) {
                return Err(BTreeError::corrupt(id, "node pointer to an ancestor"));
            }
            r = mtr.get(child_id, LatchMode::Exclusive)?;
            id = child_id;
            level = Some(next_level);
        }
    }

    /// Latches the left neighbour of the X-latched leaf `leaf` (in `mode`)
    /// *before* the leaf, as the latch order wants, and returns both (the
    /// leaf re-latched: use the returned reference).
    ///
    /// First tries the neighbour without waiting (no deadlock possible).
    /// If that fails, releases the leaf, waits for the neighbour, latches
    /// the leaf again and checks that it still points back to it; the
    /// caller holds the leaf's parent X, so the leaf itself cannot be split,
    /// merged or freed meanwhile, only its left link can change (when the
    /// neighbour splits), and then the dance repeats. Deadlock-free: while
    /// waiting for the neighbour this thread holds no latch at the leaf
    /// level, only ancestors, which nobody holding leaf latches waits for.
    ///
    /// A leaf this mini-transaction already changed cannot be released;
    /// then the neighbour is latched directly, which is safe only under the
    /// multi-operation rule of the crate doc.
    pub(crate) fn latch_left_then_leaf(
        &self,
        mtr: &mut Mtr<'_>,
        mut leaf: PageRef,
        leaf_id: PageId,
        mode: LatchMode,
    ) -> Result<(Option<PageRef>, PageRef)> {
        loop {
            let prev = header::prev_page(mtr.page(leaf));
            if prev == FIL_NULL {
                return Ok((None, leaf));
            }
            let prev_id = self.id(prev);
            let left = if mtr.is_modified(leaf) {
                Some(mtr.get(prev_id, mode)?)
            } else {
                mtr.try_get(prev_id, mode)?
            };
            if let Some(l) = left {
                self.check_left_link(mtr, l, prev_id, leaf_id)?;
                return Ok((Some(l), leaf));
            }
            mtr.release(leaf);
            let l = mtr.get(prev_id, mode)?;
            leaf = mtr.get(leaf_id, LatchMode::Exclusive)?;
            if header::prev_page(mtr.page(leaf)) == prev {
                self.check_left_link(mtr, l, prev_id, leaf_id)?;
                return Ok((Some(l), leaf));
            }
            release(mtr, l);
        }
    }

    /// Checks that `l` (page `l_id`) is a leaf of this tree whose next link
    /// is `right`.
    pub(crate) fn check_left_link(
        &self,
        mtr: &Mtr<'_>,
        l: PageRef,
        l_id: PageId,
        right: PageId,
    ) -> Result<()> {
        let page = self.view(mtr.page(l), l_id)?;
        if !page.is_leaf() || header::next_page(mtr.page(l)) != right.page_no {
            return Err(BTreeError::corrupt(
                l_id,
                format!(
                    "left neighbour of leaf {right} links to page {}",
                    header::next_page(mtr.page(l))
                ),
            ));
        }
        Ok(())
    }

    /// Latches the right neighbour of `page_ref` (X), checking it links back.
    pub(crate) fn latch_right(
        &self,
        mtr: &mut Mtr<'_>,
        page_ref: PageRef,
        page_id: PageId,
    ) -> Result<Option<(PageRef, PageId)>> {
        let next = header::next_page(mtr.page(page_ref));
        if next == FIL_NULL {
            return Ok(None);
        }
        let id = self.id(next);
        let r = mtr.get(id, LatchMode::Exclusive)?;
        let page = self.view(mtr.page(r), id)?;
        if !page.is_leaf() || header::prev_page(mtr.page(r)) != page_id.page_no {
            return Err(BTreeError::corrupt(
                id,
                format!(
                    "right neighbour of leaf {page_id} links back to page {}",
                    header::prev_page(mtr.page(r))
                ),
            ));
        }
        Ok(Some((r, id)))
    }

    /// Slot where `key` is or would go in the latched leaf, and whether a
    /// record with exactly that key is there.
    // PERF: one binary search, no allocation.
    #[inline]
    pub(crate) fn locate(
        &self,
        mtr: &Mtr<'_>,
        leaf: PageRef,
        leaf_id: PageId,
        key: &[Option<&[u8]>],
    ) -> Result<(usize, bool)> {
        let page = self.view(mtr.page(leaf), leaf_id)?;
        if !page.is_leaf() {
            return Err(BTreeError::corrupt(leaf_id, "descent ended on a node page"));
        }
        let slot = page
            .search(&self.layout, key, SearchMode::GreaterOrEqual)
            .map_err(|e| BTreeError::page(leaf_id, e))?;
        if slot == page.n_recs() {
            return Ok((slot, false));
        }
        let rec = page.rec(slot).map_err(|e| BTreeError::page(leaf_id, e))?;
        let ord = self
            .layout
            .compare_key(rec, key)
            .map_err(|e| BTreeError::page(leaf_id, e))?;
        Ok((slot, ord == std::cmp::Ordering::Equal))
    }
}
