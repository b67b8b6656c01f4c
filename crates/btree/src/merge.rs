//! Merges, empty-page removal and root lowering.
//!
//! After a removal leaves a leaf P underfull (below [`MERGE_THRESHOLD`]):
//!
//! ```text
//!  P empty (not the root)      unlink L ⇄ R, drop P's pointer, free P
//!  L under the same parent,    L absorbs P (InsertMany at L's end),
//!   |L| + |P| <= 3/4 page      unlink, drop P's pointer, free P
//!  else R under the same       P absorbs R, unlink R (R's right
//!   parent, |P| + |R| <= 3/4   neighbour latched after R), free R
//!  else                        leave P underfull (still valid)
//! ```
//!
//! The parent lost one pointer; the same rules apply to it one level up
//! (node pages are not linked, so removing an empty one only touches its
//! parent). Node siblings are latched with `try_get`: the thread already
//! holds leaf latches, below them in the latch order, so it must not wait
//! for a node latch; when the sibling is busy the node simply stays
//! underfull. A node that absorbs a sibling re-keys the sibling's first
//! pointer with the separator from the grandparent, because the first key
//! of a node page is not a routing key (see the crate doc).
//!
//! A root left with a single child absorbs it (the tree loses a level),
//! again with `try_get` on the child; a root left with no child becomes an
//! empty leaf.

use std::borrow::Cow;

use basalt_buf::LatchMode;
use basalt_common::{PageId, FIL_NULL};
use basalt_mtr::{Mtr, PageRef};
use basalt_page::header;
use basalt_page::index_page::IndexPage;
use basalt_page::rec::INFO_MIN_REC;
use basalt_page::RedoRecord;

use crate::error::{BTreeError, Result};
use crate::latch::Level;
use crate::split::records_bytes;
use crate::tree::{release, BTree, TreeCounters, MERGE_MAX_FILL, MERGE_THRESHOLD};

/// The leaf being fixed and its latched neighbours.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LeafSet {
    /// Left neighbour (X), if the leaf has one and it was latched.
    pub(crate) left: Option<(PageRef, PageId)>,
    /// The leaf (X).
    pub(crate) leaf: PageRef,
    /// Its id.
    pub(crate) leaf_id: PageId,
    /// Right neighbour (X), if the leaf has one and it was latched.
    pub(crate) right: Option<(PageRef, PageId)>,
}

impl BTree {
    /// Fixes the leaf of `set` after a removal made it underfull or empty.
    /// `levels` are the latched ancestors, the leaf's parent last.
    pub(crate) fn fix_leaf(
        &self,
        mtr: &mut Mtr<'_>,
        levels: &mut Vec<Level>,
        set: LeafSet,
    ) -> Result<()> {
        let LeafSet {
            left,
            leaf: p,
            leaf_id: p_id,
            right,
        } = set;
        if p_id == self.root_id() {
            return Ok(());
        }
        let Some(q) = levels.last().copied() else {
            return Err(BTreeError::corrupt(
                p_id,
                "underfull leaf without a latched parent",
            ));
        };
        let page = self.view(mtr.page(p), p_id)?;
        let (n, used) = (page.n_recs(), page.used_bytes());
        let prev = header::prev_page(mtr.page(p));
        let next = header::next_page(mtr.page(p));
        let q_page = self.view(mtr.page(q.r), q.id)?;
        let q_n = q_page.n_recs();
        if self.child_at(&q_page, q.slot, q.id)? != p_id.page_no {
            return Err(BTreeError::corrupt(
                q.id,
                format!("slot {} does not point to {p_id}", q.slot),
            ));
        }
        let left = check_neighbour(left, prev, p_id, "left")?;
        let right = check_neighbour(right, next, p_id, "right")?;

        if n == 0 {
            if let Some((l, _)) = left {
                self.apply(mtr, l, &RedoRecord::set_next_sibling(next))?;
            }
            if let Some((r, _)) = right {
                self.apply(mtr, r, &RedoRecord::set_prev_sibling(prev))?;
            }
            self.delete_node_ptr(mtr, q.r, q.id, q.slot)?;
            mtr.free_page(p)?;
            TreeCounters::bump(&self.counters.page_removals);
            return self.fix_nodes(mtr, levels);
        }
        if used >= MERGE_THRESHOLD {
            return Ok(());
        }
        // Left sibling under the same parent absorbs P.
        if q.slot > 0 {
            let l_no = self.child_at(&q_page, q.slot - 1, q.id)?;
            if let Some((l, l_id)) = left.filter(|(_, id)| id.page_no == l_no) {
                let l_page = self.view(mtr.page(l), l_id)?;
                if l_page.used_bytes() + used <= MERGE_MAX_FILL {
                    let at = l_page.n_recs();
                    let l_trx = l_page.max_trx_id();
                    let p_page = self.view(mtr.page(p), p_id)?;
                    let p_trx = p_page.max_trx_id();
                    let recs = records_bytes(&p_page, 0, n, p_id)?;
                    self.apply(
                        mtr,
                        l,
                        &RedoRecord::InsertMany {
                            slot: at as u16,
                            recs: Cow::Borrowed(&recs),
                        },
                    )?;
                    self.apply(mtr, l, &RedoRecord::set_next_sibling(next))?;
                    if let Some((r, _)) = right {
                        self.apply(mtr, r, &RedoRecord::set_prev_sibling(l_id.page_no))?;
                    }
                    if p_trx > l_trx {
                        self.apply(mtr, l, &RedoRecord::SetMaxTrxId { trx_id: p_trx })?;
                    }
                    self.delete_node_ptr(mtr, q.r, q.id, q.slot)?;
                    mtr.free_page(p)?;
                    TreeCounters::bump(&self.counters.merges);
                    return self.fix_nodes(mtr, levels);
                }
            }
        }
        // P absorbs its right sibling under the same parent.
        if q.slot + 1 < q_n {
            let r_no = self.child_at(&q_page, q.slot + 1, q.id)?;
            if let Some((r, r_id)) = right.filter(|(_, id)| id.page_no == r_no) {
                let r_page = self.view(mtr.page(r), r_id)?;
                if used + r_page.used_bytes() <= MERGE_MAX_FILL {
                    let r_n = r_page.n_recs();
                    let r_trx = r_page.max_trx_id();
                    let recs = records_bytes(&r_page, 0, r_n, r_id)?;
                    let p_trx = self.view(mtr.page(p), p_id)?.max_trx_id();
                    let rr = self.latch_right(mtr, r, r_id)?;
                    let rr_no = rr.map_or(FIL_NULL, |(_, id)| id.page_no);
                    self.apply(
                        mtr,
                        p,
                        &RedoRecord::InsertMany {
                            slot: n as u16,
                            recs: Cow::Borrowed(&recs),
                        },
                    )?;
                    self.apply(mtr, p, &RedoRecord::set_next_sibling(rr_no))?;
                    if let Some((rr, _)) = rr {
                        self.apply(mtr, rr, &RedoRecord::set_prev_sibling(p_id.page_no))?;
                    }
                    if r_trx > p_trx {
                        self.apply(mtr, p, &RedoRecord::SetMaxTrxId { trx_id: r_trx })?;
                    }
                    self.delete_node_ptr(mtr, q.r, q.id, q.slot + 1)?;
                    mtr.free_page(r)?;
                    TreeCounters::bump(&self.counters.merges);
                    return self.fix_nodes(mtr, levels);
                }
            }
        }
        Ok(())
    }

    /// The last page of `levels` lost a node pointer: remove it if empty,
    /// merge it if underfull, lower the root if it has one child; repeat
    /// upward while pages change.
    fn fix_nodes(&self, mtr: &mut Mtr<'_>, levels: &mut Vec<Level>) -> Result<()> {
        while let Some(q) = levels.pop() {
            let page = self.view(mtr.page(q.r), q.id)?;
            let (n, used) = (page.n_recs(), page.used_bytes());
            if q.id == self.root_id() {
                match n {
                    0 => {
                        self.apply(
                            mtr,
                            q.r,
                            &RedoRecord::InitIndex {
                                level: 0,
                                index_id: self.index_id,
                                flags: self.flags(),
                            },
                        )?;
                        TreeCounters::bump(&self.counters.root_lowers);
                    }
                    1 => self.lower_root(mtr, q.r)?,
                    _ => {}
                }
                return Ok(());
            }
            // Safe nodes released their ancestors: they cannot underflow.
            let Some(g) = levels.last().copied() else {
                return Ok(());
            };
            if n == 0 {
                self.delete_node_ptr(mtr, g.r, g.id, g.slot)?;
                mtr.free_page(q.r)?;
                TreeCounters::bump(&self.counters.page_removals);
                continue;
            }
            if used >= MERGE_THRESHOLD || !self.merge_node(mtr, g, q)? {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Removes node pointer `slot` of node page `r`; if that was slot 0,
    /// the new first pointer gets the min-record flag (slot 0 of a node
    /// page covers everything from the page's lower bound, crate doc).
    pub(crate) fn delete_node_ptr(
        &self,
        mtr: &mut Mtr<'_>,
        r: PageRef,
        id: PageId,
        slot: usize,
    ) -> Result<()> {
        self.apply(mtr, r, &RedoRecord::Delete { slot: slot as u16 })?;
        if slot != 0 {
            return Ok(());
        }
        let page = self.view(mtr.page(r), id)?;
        if page.n_recs() == 0 {
            return Ok(());
        }
        let mut first = page.rec(0).map_err(|e| BTreeError::page(id, e))?.to_vec();
        if first[0] & INFO_MIN_REC != 0 {
            return Ok(());
        }
        first[0] |= INFO_MIN_REC;
        self.apply(
            mtr,
            r,
            &RedoRecord::Replace {
                slot: 0,
                rec: Cow::Borrowed(&first),
            },
        )
    }

    /// Tries to merge the underfull node `q` with a sibling under `g`
    /// (latched with `try_get`). Returns true if a merge happened (then
    /// `g` lost a pointer).
    fn merge_node(&self, mtr: &mut Mtr<'_>, g: Level, q: Level) -> Result<bool> {
        let g_page = self.view(mtr.page(g.r), g.id)?;
        let g_n = g_page.n_recs();
        let level = self.view(mtr.page(q.r), q.id)?.level();
        let candidates = [
            (g.slot > 0).then(|| (g.slot - 1, g.slot)),
            (g.slot + 1 < g_n).then(|| (g.slot, g.slot + 1)),
        ];
        for (left_slot, right_slot) in candidates.into_iter().flatten() {
            let g_page = self.view(mtr.page(g.r), g.id)?;
            let sib_slot = if left_slot == g.slot {
                right_slot
            } else {
                left_slot
            };
            let sib_id = self.id(self.child_at(&g_page, sib_slot, g.id)?);
            let Some(s) = mtr.try_get(sib_id, LatchMode::Exclusive)? else {
                continue;
            };
            self.view_at(mtr.page(s), sib_id, Some(level))?;
            let (l, l_id, r, r_id) = if left_slot == g.slot {
                (q.r, q.id, s, sib_id)
            } else {
                (s, sib_id, q.r, q.id)
            };
            let moved = self.rekeyed_records(mtr, g, right_slot, r, r_id)?;
            let l_page = self.view(mtr.page(l), l_id)?;
            let r_n = self.view(mtr.page(r), r_id)?.n_recs();
            let need = moved.len() + r_n * basalt_page::index_page::SLOT_SIZE;
            if l_page.used_bytes() + need > MERGE_MAX_FILL || need > l_page.free_space() {
                release(mtr, s);
                continue;
            }
            let at = l_page.n_recs();
            self.apply(
                mtr,
                l,
                &RedoRecord::InsertMany {
                    slot: at as u16,
                    recs: Cow::Borrowed(&moved),
                },
            )?;
            self.delete_node_ptr(mtr, g.r, g.id, right_slot)?;
            mtr.free_page(r)?;
            TreeCounters::bump(&self.counters.merges);
            return Ok(true);
        }
        Ok(false)
    }

    /// The records of node `r` (the child in slot `slot` of `g`), the first
    /// re-keyed with `g`'s separator for it.
    fn rekeyed_records(
        &self,
        mtr: &Mtr<'_>,
        g: Level,
        slot: usize,
        r: PageRef,
        r_id: PageId,
    ) -> Result<Vec<u8>> {
        let g_page = self.view(mtr.page(g.r), g.id)?;
        let sep = self.rec(&g_page, slot, g.id)?;
        let r_page = self.view(mtr.page(r), r_id)?;
        let n = r_page.n_recs();
        if n == 0 {
            return Ok(Vec::new());
        }
        let first = self.rec(&r_page, 0, r_id)?;
        let child = self.child_of(&first, r_id)?;
        let mut out = Vec::new();
        self.layout
            .node_ptr_from(&sep, child, false, &mut out)
            .map_err(|e| BTreeError::page(g.id, e))?;
        out.extend_from_slice(&records_bytes(&r_page, 1, n, r_id)?);
        Ok(out)
    }

    /// The root (X) has a single child: pull the child's records up and
    /// free it, as long as the child can be latched without waiting.
    fn lower_root(&self, mtr: &mut Mtr<'_>, root: PageRef) -> Result<()> {
        let root_id = self.root_id();
        loop {
            let page = self.view(mtr.page(root), root_id)?;
            if page.is_leaf() || page.n_recs() != 1 {
                return Ok(());
            }
            let level = page.level();
            let child_id = self.id(self.child_at(&page, 0, root_id)?);
            let Some(c) = mtr.try_get(child_id, LatchMode::Exclusive)? else {
                return Ok(());
            };
            let c_page: IndexPage<'_> = self.view_at(mtr.page(c), child_id, Some(level - 1))?;
            let (c_n, c_trx) = (c_page.n_recs(), c_page.max_trx_id());
            let recs = records_bytes(&c_page, 0, c_n, child_id)?;
            if header::prev_page(mtr.page(c)) != FIL_NULL
                || header::next_page(mtr.page(c)) != FIL_NULL
            {
                return Err(BTreeError::corrupt(
                    child_id,
                    "only child of the root has siblings",
                ));
            }
            self.apply(
                mtr,
                root,
                &RedoRecord::InitIndex {
                    level: level - 1,
                    index_id: self.index_id,
                    flags: self.flags(),
                },
            )?;
            if !recs.is_empty() {
                self.apply(
                    mtr,
                    root,
                    &RedoRecord::InsertMany {
                        slot: 0,
                        recs: Cow::Borrowed(&recs),
                    },
                )?;
            }
            if level == 1 && !self.is_clustered() && c_trx.0 > 0 {
                self.apply(mtr, root, &RedoRecord::SetMaxTrxId { trx_id: c_trx })?;
            }
            mtr.free_page(c)?;
            TreeCounters::bump(&self.counters.root_lowers);
        }
    }
}

/// Checks that the latched neighbour matches the link of the leaf
/// (`FIL_NULL` = none) and returns it.
fn check_neighbour(
    n: Option<(PageRef, PageId)>,
    link: basalt_common::PageNo,
    p_id: PageId,
    side: &str,
) -> Result<Option<(PageRef, PageId)>> {
    match n {
        Some((r, id)) if id.page_no == link => Ok(Some((r, id))),
        None if link == FIL_NULL => Ok(None),
        Some((_, id)) => Err(BTreeError::corrupt(
            p_id,
            format!("{side} link is {link}, latched neighbour is {}", id.page_no),
        )),
        None => Err(BTreeError::corrupt(
            p_id,
            format!("{side} neighbour {link} was not latched"),
        )),
    }
}
