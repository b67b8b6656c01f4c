//! Page splits and root raises.
//!
//! ```text
//!  leaf split of P (records r0..rn, new record x at pos):
//!
//!     parent Q:  … [k_P → P] …              … [k_P → P] [k_N → N] …
//!                                   ==>
//!     leaves:    L ⇄ P ⇄ R                  L ⇄ P ⇄ N ⇄ R
//!                   r0 … rn                    r0..rm-1   rm..rn
//! ```
//!
//! 1. Choose the split point over the n+1 records (old ones plus the new
//!    one) by bytes: the point that makes the larger half smallest, both
//!    halves fitting. Sequential inserts are detected as in InnoDB: an
//!    insert at the end of the rightmost page of a level keeps every old
//!    record on the old page (it stays full) and starts the new page with
//!    the new record alone; an insert at the start of the leftmost leaf
//!    does the mirror image. Ascending loads therefore fill pages to 100%.
//! 2. Latch the old right neighbour R (X, after P: left to right) *before*
//!    allocating, because allocation latches the tablespace header, which
//!    comes after every tree page in the latch order.
//! 3. Allocate N, `InitIndex`, move the upper records with one
//!    `InsertMany`, remove them from P with one `DeleteRange`, insert the
//!    new record where it belongs, fix the links P → N → R (leaves only),
//!    copy the secondary-index max trx id.
//! 4. Insert the node pointer `(first key of N) → N` after P's pointer in
//!    the parent, splitting the parent the same way if it is full (the
//!    parent is X-latched: it was not safe during the pessimistic descent).
//!
//! The root never moves: when it must split, its records move to a new
//! page C, the root is re-initialised one level up holding a single node
//! pointer to C, and C is split as an ordinary child.

use std::borrow::Cow;

use basalt_common::{PageId, PageNo, FIL_NULL};
use basalt_mtr::{Mtr, PageRef};
use basalt_page::header;
use basalt_page::index_page::{IndexPage, PAGE_CAPACITY, SLOT_SIZE};
use basalt_page::rec::{RecordRef, INFO_MIN_REC};
use basalt_page::RedoRecord;

use crate::error::{BTreeError, Result};
use crate::latch::Level;
use crate::tree::{BTree, TreeCounters};

/// Chooses where to split a page: `sizes[i]` is the size (record plus
/// slot) of the i-th record of the page *with* the new record at `pos`;
/// returns `k` in `1..sizes.len()`: records `..k` stay, `k..` move.
///
/// `seq_right`: the page is the rightmost of its level and the new record
/// goes last (ascending load) → `k = len - 1`. `seq_left`: leftmost and
/// first → `k = 1`. Otherwise the byte-balanced point with both halves
/// fitting [`PAGE_CAPACITY`]. `sizes` holds at least two entries.
pub(crate) fn choose_split(sizes: &[usize], pos: usize, seq_right: bool, seq_left: bool) -> usize {
    let n = sizes.len();
    if seq_right && pos == n - 1 {
        return n - 1;
    }
    if seq_left && pos == 0 {
        return 1;
    }
    let total: usize = sizes.iter().sum();
    let mut best = (usize::MAX, 1);
    let mut left = 0usize;
    for k in 1..n {
        left += sizes[k - 1];
        let right = total - left;
        if left <= PAGE_CAPACITY && right <= PAGE_CAPACITY {
            let worst = left.max(right);
            if worst < best.0 {
                best = (worst, k);
            }
        }
    }
    best.1
}

/// The records of `page` in slots `from..to`, back to back.
pub(crate) fn records_bytes(
    page: &IndexPage<'_>,
    from: usize,
    to: usize,
    id: PageId,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for i in from..to {
        out.extend_from_slice(page.rec(i).map_err(|e| BTreeError::page(id, e))?);
    }
    Ok(out)
}

impl BTree {
    /// Inserts the encoded record `rec` at slot `pos` of the X-latched page
    /// `p`, which lacks room, by splitting it; `levels` are the X-latched
    /// ancestors of `p` (its parent last), updated as the split climbs.
    /// Returns the page that received `rec`.
    pub(crate) fn split_insert(
        &self,
        mtr: &mut Mtr<'_>,
        levels: &mut Vec<Level>,
        p: PageRef,
        p_id: PageId,
        pos: usize,
        rec: &[u8],
    ) -> Result<(PageRef, PageId)> {
        let (p, p_id) = if p_id == self.root_id() {
            let c = self.raise_root(mtr, p)?;
            levels.clear();
            levels.push(Level {
                r: p,
                id: p_id,
                slot: 0,
            });
            c
        } else {
            (p, p_id)
        };
        if levels.last().is_none() {
            return Err(BTreeError::corrupt(
                p_id,
                "page must split but its parent is not latched",
            ));
        }
        let page = self.view(mtr.page(p), p_id)?;
        let (level, n) = (page.level(), page.n_recs());
        if n == 0 || pos > n {
            return Err(BTreeError::corrupt(
                p_id,
                format!("split of a page with {n} records at slot {pos}"),
            ));
        }
        let is_leaf = level == 0;
        let max_trx = page.max_trx_id();
        let mut sizes = Vec::with_capacity(n + 1);
        for i in 0..n {
            if i == pos {
                sizes.push(rec.len() + SLOT_SIZE);
            }
            sizes.push(page.rec(i).map_err(|e| BTreeError::page(p_id, e))?.len() + SLOT_SIZE);
        }
        if pos >= n {
            sizes.push(rec.len() + SLOT_SIZE);
        }
        let next = header::next_page(mtr.page(p));
        let prev = header::prev_page(mtr.page(p));
        let (seq_right, seq_left) = if is_leaf {
            (next == FIL_NULL, prev == FIL_NULL)
        } else {
            (self.is_rightmost(mtr, levels)?, false)
        };
        let k = choose_split(&sizes, pos, seq_right, seq_left);
        let (moved_from, new_left) = if pos < k { (k - 1, true) } else { (k, false) };
        let mut moved = records_bytes(&page, moved_from, n, p_id)?;
        // Slot 0 of a node page carries the min-record flag (crate doc).
        let new_first_in_n = !new_left && pos == k;
        let mut rec_buf;
        let rec = if !is_leaf && new_first_in_n {
            rec_buf = rec.to_vec();
            rec_buf[0] |= INFO_MIN_REC;
            &rec_buf[..]
        } else {
            if !is_leaf && !moved.is_empty() {
                moved[0] |= INFO_MIN_REC;
            }
            rec
        };
        if !is_leaf && new_first_in_n && !moved.is_empty() {
            moved[0] &= !INFO_MIN_REC;
        }

        // Latch order: the old right neighbour before the space header.
        let right = if is_leaf {
            self.latch_right(mtr, p, p_id)?
        } else {
            None
        };
        let nr = mtr.alloc_page(self.space)?;
        let n_id = mtr.page_id(nr);
        self.apply(
            mtr,
            nr,
            &RedoRecord::InitIndex {
                level,
                index_id: self.index_id,
                flags: self.flags(),
            },
        )?;
        if !moved.is_empty() {
            self.apply(
                mtr,
                nr,
                &RedoRecord::InsertMany {
                    slot: 0,
                    recs: Cow::Borrowed(&moved),
                },
            )?;
            self.apply(
                mtr,
                p,
                &RedoRecord::DeleteRange {
                    start: moved_from as u16,
                    end: n as u16,
                },
            )?;
        }
        let (target, target_id, at) = if new_left {
            (p, p_id, pos)
        } else {
            (nr, n_id, pos - k)
        };
        self.apply(
            mtr,
            target,
            &RedoRecord::Insert {
                slot: at as u16,
                rec: Cow::Borrowed(rec),
            },
        )?;
        if is_leaf {
            self.apply(mtr, nr, &RedoRecord::set_prev_sibling(p_id.page_no))?;
            self.apply(mtr, nr, &RedoRecord::set_next_sibling(next))?;
            self.apply(mtr, p, &RedoRecord::set_next_sibling(n_id.page_no))?;
            if let Some((rr, _)) = right {
                self.apply(mtr, rr, &RedoRecord::set_prev_sibling(n_id.page_no))?;
            }
            if !self.is_clustered() && max_trx.0 > 0 {
                self.apply(mtr, nr, &RedoRecord::SetMaxTrxId { trx_id: max_trx })?;
            }
        }
        TreeCounters::bump(&self.counters.splits);

        let ptr = self.node_ptr_to_first(mtr, nr, n_id)?;
        self.insert_node_ptr(mtr, levels, &ptr)?;
        Ok((target, target_id))
    }

    /// A node pointer to page `r` keyed by its first record.
    pub(crate) fn node_ptr_to_first(
        &self,
        mtr: &Mtr<'_>,
        r: PageRef,
        id: PageId,
    ) -> Result<Vec<u8>> {
        let page = self.view(mtr.page(r), id)?;
        let first = self.rec(&page, 0, id)?;
        let mut ptr = Vec::new();
        self.layout
            .node_ptr_from(&first, id.page_no, false, &mut ptr)
            .map_err(|e| BTreeError::page(id, e))?;
        Ok(ptr)
    }

    /// Inserts node pointer `ptr` right after the pointer the descent
    /// followed in the last page of `levels`, splitting it when full.
    fn insert_node_ptr(
        &self,
        mtr: &mut Mtr<'_>,
        levels: &mut Vec<Level>,
        ptr: &[u8],
    ) -> Result<()> {
        let Some(q) = levels.last().copied() else {
            return Err(BTreeError::Corruption {
                page_id: self.root_id(),
                reason: "node pointer insert without a latched parent".into(),
            });
        };
        let page = self.view(mtr.page(q.r), q.id)?;
        let at = q.slot + 1;
        if page.would_fit(ptr.len()) {
            return self.apply(
                mtr,
                q.r,
                &RedoRecord::Insert {
                    slot: at as u16,
                    rec: Cow::Borrowed(ptr),
                },
            );
        }
        levels.pop();
        self.split_insert(mtr, levels, q.r, q.id, at, ptr)?;
        Ok(())
    }

    /// True when the node below the last of `levels` is the rightmost page
    /// of its level: every ancestor followed its last pointer, from the
    /// root down (unknown, hence false, when the root was released).
    fn is_rightmost(&self, mtr: &Mtr<'_>, levels: &[Level]) -> Result<bool> {
        if levels.first().is_none_or(|l| l.id != self.root_id()) {
            return Ok(false);
        }
        for l in levels {
            let page = self.view(mtr.page(l.r), l.id)?;
            if l.slot + 1 != page.n_recs() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Moves every record of the root (X-latched, full) to a new page C and
    /// turns the root into a level+1 node with a single pointer to C.
    /// Returns C (X-latched).
    fn raise_root(&self, mtr: &mut Mtr<'_>, root: PageRef) -> Result<(PageRef, PageId)> {
        let root_id = self.root_id();
        let page = self.view(mtr.page(root), root_id)?;
        let (level, n, max_trx) = (page.level(), page.n_recs(), page.max_trx_id());
        if n == 0 {
            return Err(BTreeError::corrupt(root_id, "raising an empty root"));
        }
        let all = records_bytes(&page, 0, n, root_id)?;
        let c = mtr.alloc_page(self.space)?;
        let c_id = mtr.page_id(c);
        self.apply(
            mtr,
            c,
            &RedoRecord::InitIndex {
                level,
                index_id: self.index_id,
                flags: self.flags(),
            },
        )?;
        self.apply(
            mtr,
            c,
            &RedoRecord::InsertMany {
                slot: 0,
                recs: Cow::Borrowed(&all),
            },
        )?;
        if level == 0 && !self.is_clustered() && max_trx.0 > 0 {
            self.apply(mtr, c, &RedoRecord::SetMaxTrxId { trx_id: max_trx })?;
        }
        let mut ptr = self.node_ptr_to_first(mtr, c, c_id)?;
        ptr[0] |= INFO_MIN_REC;
        self.apply(
            mtr,
            root,
            &RedoRecord::InitIndex {
                level: level + 1,
                index_id: self.index_id,
                flags: self.flags(),
            },
        )?;
        self.apply(
            mtr,
            root,
            &RedoRecord::Insert {
                slot: 0,
                rec: Cow::Borrowed(&ptr),
            },
        )?;
        TreeCounters::bump(&self.counters.root_raises);
        Ok((c, c_id))
    }

    /// Child page number in node pointer `rec` (decoded under this layout).
    pub(crate) fn child_of(&self, rec: &RecordRef<'_>, id: PageId) -> Result<PageNo> {
        rec.child_page_no()
            .ok_or_else(|| BTreeError::corrupt(id, "leaf record on a node page"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_split_halves_bytes_and_fits() {
        let sizes = vec![1000usize; 17];
        let k = choose_split(&sizes, 5, false, false);
        assert!(k == 8 || k == 9, "k = {k}");
        // Two maximal records around a small one: both halves must fit.
        let big = PAGE_CAPACITY / 2;
        let sizes = vec![big, 100, big];
        let k = choose_split(&sizes, 1, false, false);
        let left: usize = sizes[..k].iter().sum();
        let right: usize = sizes[k..].iter().sum();
        assert!(
            left <= PAGE_CAPACITY && right <= PAGE_CAPACITY,
            "{left} {right}"
        );
    }

    #[test]
    fn sequential_patterns_keep_the_old_page_full() {
        let sizes = vec![500usize; 33];
        assert_eq!(choose_split(&sizes, 32, true, false), 32);
        assert_eq!(choose_split(&sizes, 0, false, true), 1);
        // Not at the end: balanced even on the rightmost page.
        assert_ne!(choose_split(&sizes, 31, true, false), 32);
    }
}
