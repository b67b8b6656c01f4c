//! Inserts: uniqueness, the optimistic path, the pessimistic restart.
//!
//! ```text
//!  insert(values)
//!    encode (long fields → overflow chains first, see `external`)
//!    optimistic: S descent, leaf X
//!      exact key live                → DuplicateKey (nothing changed)
//!      exact key delete-marked       → reuse it: Replace (InnoDB's
//!                                      insert-by-modify of a delete-marked
//!                                      record; old chains freed)
//!      unique run has a live record  → DuplicateKey
//!      fits                          → Insert, done
//!      needs a split / a left
//!      neighbour that is busy        → release everything, restart:
//!    pessimistic: X descent, leaf X, same checks, split if needed
//! ```
//!
//! **Uniqueness.** Every key (all key fields) is unique in the tree, so
//! for the clustered index and non-unique secondaries the check is the
//! exact-key match at the insert position: by the range invariant the key
//! can only be on the leaf the descent reaches. A unique secondary index
//! must also refuse a *different* key whose first `n` fields (the indexed
//! columns) equal the new one's, unless one of them is NULL or the other
//! record is delete-marked. Such records sit next to the insert position,
//! possibly on neighbouring leaves: right neighbours are latched (S) left
//! to right while the leaf is held; left neighbours are taken with
//! `try_get` on the optimistic path (restart pessimistically if busy) and
//! with the release-and-relatch dance under the parent's X latch on the
//! pessimistic path. Because the leaf stays X-latched until commit and the
//! neighbours are read under latches, two inserts of the same unique value
//! serialise: the second one waits for the first one's commit and sees it.

use std::borrow::Cow;

use basalt_buf::LatchMode;
use basalt_common::{PageId, TrxId, FIL_NULL};
use basalt_mtr::{Mtr, PageRef};
use basalt_page::header;
use basalt_page::rec::{RecordRef, SysCols};
use basalt_page::{RedoRecord, MAX_REC_LEN};
use std::cmp::Ordering;

use crate::error::{owned_key, BTreeError, Result};
use crate::external::Prepared;
use crate::key::with_key;
use crate::latch::Intent;
use crate::tree::{release, BTree, IndexKind, TreeCounters};

/// Outcome of a unique-prefix scan.
enum Run {
    /// No live record shares the unique prefix.
    Clear,
    /// A live record does; its prefix.
    Conflict(Vec<Option<Vec<u8>>>),
    /// The run continues past the left neighbours that are latched; this
    /// many are needed.
    NeedLeft(usize),
}

/// Outcome of scanning one page backwards over a unique run.
enum Back {
    /// A record outside the run ends it on this page.
    Ended,
    /// A live record in the run: its prefix.
    Conflict(Vec<Option<Vec<u8>>>),
    /// The run reaches slot 0: it may continue on the left neighbour.
    ReachesStart,
}

/// Whether a step of an optimistic operation finished it.
pub(crate) enum Step {
    Done,
    Pessimistic,
}

impl BTree {
    /// Inserts a record with user field values `values` (`None` = NULL).
    /// `sys` gives `DB_TRX_ID` / `DB_ROLL_PTR` for a clustered index; for a
    /// secondary index only its `trx_id` is used, to advance the page's max
    /// trx id. A delete-marked record with the same key is reused (replaced
    /// by the new version, unmarked). Fails with
    /// [`BTreeError::DuplicateKey`] without changing anything when a live
    /// record has the same key (or unique prefix).
    // PERF: encoding reuses a per-thread buffer; the optimistic path takes
    // one X latch and allocates nothing.
    pub fn insert(&self, mtr: &mut Mtr<'_>, values: &[Option<&[u8]>], sys: SysCols) -> Result<()> {
        self.check_key_values(values)?;
        let data: usize = values.iter().flatten().map(|v| v.len()).sum();
        if data > MAX_REC_LEN / 2 && !mtr.has_changes() {
            // Long values are about to be written to overflow pages: do not
            // write them for a record that is refused anyway.
            let key = &values[..self.layout.n_key()];
            if self.exists_live(mtr.store(), key)? {
                return Err(BTreeError::DuplicateKey {
                    index_id: self.index_id,
                    key: owned_key(key),
                });
            }
        }
        let prepared = self.prepare(mtr, values, sys)?;
        let res = self.insert_prepared(mtr, &prepared, sys.trx_id);
        if res.is_err() {
            self.discard(mtr, &prepared);
        }
        res
    }

    pub(crate) fn insert_prepared(
        &self,
        mtr: &mut Mtr<'_>,
        prepared: &Prepared,
        trx: TrxId,
    ) -> Result<()> {
        let rec: &[u8] = &prepared.rec;
        let rref = RecordRef::new(&self.layout, rec).map_err(|e| self.bad_value(e.to_string()))?;
        with_key(&rref, self.layout.n_key(), |key| {
            let sp = mtr.savepoint();
            let res = match self.insert_optimistic(mtr, rec, key, trx) {
                Ok(Step::Done) => Ok(()),
                Ok(Step::Pessimistic) => {
                    mtr.release_since(sp);
                    TreeCounters::bump(&self.counters.pessimistic);
                    self.insert_pessimistic(mtr, rec, key, trx)
                }
                Err(e) => Err(e),
            };
            mtr.release_since(sp);
            res
        })
    }

    fn insert_optimistic(
        &self,
        mtr: &mut Mtr<'_>,
        rec: &[u8],
        key: &[Option<&[u8]>],
        trx: TrxId,
    ) -> Result<Step> {
        let (leaf, leaf_id) = self.leaf_for_write(mtr, key)?;
        let (pos, exact) = self.locate(mtr, leaf, leaf_id, key)?;
        if exact && !self.is_deleted(mtr, leaf, leaf_id, pos)? {
            return Err(self.dup(key));
        }
        if let IndexKind::Secondary { unique: Some(n) } = self.kind {
            let mut lefts = Vec::new();
            match self.check_unique(mtr, leaf, leaf_id, pos, exact, &key[..n], &mut lefts, true)? {
                Run::Clear => {}
                Run::Conflict(k) => return Err(self.dup_prefix(k)),
                Run::NeedLeft(_) => return Ok(Step::Pessimistic),
            }
            for (l, _) in lefts {
                release(mtr, l);
            }
        }
        let page = self.view(mtr.page(leaf), leaf_id)?;
        if exact {
            if !page
                .would_fit_replace(pos, rec.len())
                .map_err(|e| BTreeError::page(leaf_id, e))?
            {
                return Ok(Step::Pessimistic);
            }
            let old = self.extern_refs_at(mtr, leaf, leaf_id, pos)?;
            self.apply(
                mtr,
                leaf,
                &RedoRecord::Replace {
                    slot: pos as u16,
                    rec: Cow::Borrowed(rec),
                },
            )?;
            self.bump_max_trx(mtr, leaf, leaf_id, trx)?;
            for ext in &old {
                self.free_chain(mtr, ext, leaf_id)?;
            }
            return Ok(Step::Done);
        }
        if !page.would_fit(rec.len()) {
            return Ok(Step::Pessimistic);
        }
        self.apply(
            mtr,
            leaf,
            &RedoRecord::Insert {
                slot: pos as u16,
                rec: Cow::Borrowed(rec),
            },
        )?;
        self.bump_max_trx(mtr, leaf, leaf_id, trx)?;
        Ok(Step::Done)
    }

    fn insert_pessimistic(
        &self,
        mtr: &mut Mtr<'_>,
        rec: &[u8],
        key: &[Option<&[u8]>],
        trx: TrxId,
    ) -> Result<()> {
        let mut path = self.path_for_write(mtr, key, Intent::Insert)?;
        let leaf_id = path.leaf_id;
        let mut lefts: Vec<(PageRef, PageId)> = Vec::new();
        let (pos, exact) = loop {
            let (pos, exact) = self.locate(mtr, path.leaf, leaf_id, key)?;
            if exact && !self.is_deleted(mtr, path.leaf, leaf_id, pos)? {
                return Err(self.dup(key));
            }
            let IndexKind::Secondary { unique: Some(n) } = self.kind else {
                break (pos, exact);
            };
            let run = self.check_unique(
                mtr,
                path.leaf,
                leaf_id,
                pos,
                exact,
                &key[..n],
                &mut lefts,
                false,
            )?;
            match run {
                Run::Clear => {
                    for (l, _) in lefts.drain(..) {
                        release(mtr, l);
                    }
                    break (pos, exact);
                }
                Run::Conflict(k) => return Err(self.dup_prefix(k)),
                Run::NeedLeft(k) => {
                    for (l, _) in lefts.drain(..) {
                        release(mtr, l);
                    }
                    let (ls, leaf) = self.latch_lefts(mtr, path.leaf, leaf_id, k)?;
                    path.leaf = leaf;
                    lefts = ls;
                }
            }
        };
        let leaf = path.leaf;
        let page = self.view(mtr.page(leaf), leaf_id)?;
        let mut old = Vec::new();
        let (target, target_id) = if exact {
            old = self.extern_refs_at(mtr, leaf, leaf_id, pos)?;
            if page
                .would_fit_replace(pos, rec.len())
                .map_err(|e| BTreeError::page(leaf_id, e))?
            {
                self.apply(
                    mtr,
                    leaf,
                    &RedoRecord::Replace {
                        slot: pos as u16,
                        rec: Cow::Borrowed(rec),
                    },
                )?;
                (leaf, leaf_id)
            } else {
                self.apply(mtr, leaf, &RedoRecord::Delete { slot: pos as u16 })?;
                self.split_insert(mtr, &mut path.levels, leaf, leaf_id, pos, rec)?
            }
        } else if page.would_fit(rec.len()) {
            self.apply(
                mtr,
                leaf,
                &RedoRecord::Insert {
                    slot: pos as u16,
                    rec: Cow::Borrowed(rec),
                },
            )?;
            (leaf, leaf_id)
        } else {
            self.split_insert(mtr, &mut path.levels, leaf, leaf_id, pos, rec)?
        };
        self.bump_max_trx(mtr, target, target_id, trx)?;
        for ext in &old {
            self.free_chain(mtr, ext, leaf_id)?;
        }
        Ok(())
    }

    /// Scans the records sharing the unique prefix `prefix` around the
    /// insert position `pos` of the X-latched leaf. `lefts` holds latched
    /// left neighbours (nearest first); with `try_more`, missing ones are
    /// taken with `try_get` (S) and appended.
    #[allow(clippy::too_many_arguments)]
    fn check_unique(
        &self,
        mtr: &mut Mtr<'_>,
        leaf: PageRef,
        leaf_id: PageId,
        pos: usize,
        exact: bool,
        prefix: &[Option<&[u8]>],
        lefts: &mut Vec<(PageRef, PageId)>,
        try_more: bool,
    ) -> Result<Run> {
        if prefix.iter().any(Option::is_none) {
            return Ok(Run::Clear);
        }
        // Left of the position.
        let (mut cur, mut cur_id, mut from) = (leaf, leaf_id, pos);
        let mut li = 0usize;
        loop {
            match self.scan_run_back(mtr, cur, cur_id, from, prefix)? {
                Back::Conflict(k) => return Ok(Run::Conflict(k)),
                Back::Ended => break,
                Back::ReachesStart => {}
            }
            let prev = header::prev_page(mtr.page(cur));
            if prev == FIL_NULL {
                break;
            }
            let prev_id = self.id(prev);
            if li == lefts.len() {
                if !try_more {
                    return Ok(Run::NeedLeft(li + 1));
                }
                match mtr.try_get(prev_id, LatchMode::Shared)? {
                    Some(r) => {
                        self.check_left_link(mtr, r, prev_id, cur_id)?;
                        lefts.push((r, prev_id));
                    }
                    None => return Ok(Run::NeedLeft(li + 1)),
                }
            }
            let (l, l_id) = lefts[li];
            if l_id != prev_id {
                return Err(BTreeError::corrupt(
                    cur_id,
                    "left neighbour changed under latch",
                ));
            }
            li += 1;
            cur = l;
            cur_id = l_id;
            from = self.view(mtr.page(l), l_id)?.n_recs();
        }
        // Right of the position.
        let mut extra: Vec<PageRef> = Vec::new();
        let (mut cur, mut cur_id) = (leaf, leaf_id);
        let mut j = if exact { pos + 1 } else { pos };
        let result = loop {
            let page = self.view(mtr.page(cur), cur_id)?;
            let n = page.n_recs();
            let mut ended = false;
            while j < n {
                let rec = self.rec(&page, j, cur_id)?;
                if rec.compare_key(prefix) != Ordering::Equal {
                    ended = true;
                    break;
                }
                if !rec.is_delete_marked() {
                    return Ok(Run::Conflict(owned_key(prefix)));
                }
                j += 1;
            }
            if ended {
                break Run::Clear;
            }
            let next = header::next_page(mtr.page(cur));
            if next == FIL_NULL {
                break Run::Clear;
            }
            let next_id = self.id(next);
            let r = mtr.get(next_id, LatchMode::Shared)?;
            self.view(mtr.page(r), next_id)?;
            extra.push(r);
            cur = r;
            cur_id = next_id;
            j = 0;
        };
        for r in extra {
            release(mtr, r);
        }
        Ok(result)
    }

    /// Scans slots `from-1, from-2, …, 0` of a latched leaf while records
    /// share `prefix`.
    fn scan_run_back(
        &self,
        mtr: &Mtr<'_>,
        r: PageRef,
        id: PageId,
        from: usize,
        prefix: &[Option<&[u8]>],
    ) -> Result<Back> {
        let page = self.view(mtr.page(r), id)?;
        for i in (0..from).rev() {
            let rec = self.rec(&page, i, id)?;
            if rec.compare_key(prefix) != Ordering::Equal {
                return Ok(Back::Ended);
            }
            if !rec.is_delete_marked() {
                return Ok(Back::Conflict(owned_key(prefix)));
            }
        }
        Ok(Back::ReachesStart)
    }

    /// Latches `k` left neighbours of the X-latched leaf (S, left to right)
    /// and then the leaf again (X), verifying the links; the leaf's parent
    /// is X-latched by the caller (see [`BTree::latch_left_then_leaf`]).
    /// Returns the neighbours nearest first and the re-latched leaf.
    fn latch_lefts(
        &self,
        mtr: &mut Mtr<'_>,
        mut leaf: PageRef,
        leaf_id: PageId,
        k: usize,
    ) -> Result<(Vec<(PageRef, PageId)>, PageRef)> {
        loop {
            if mtr.is_modified(leaf) {
                // Cannot release: latch directly (multi-operation rule).
                let mut out = Vec::new();
                let (mut cur, mut cur_id) = (leaf, leaf_id);
                while out.len() < k {
                    let prev = header::prev_page(mtr.page(cur));
                    if prev == FIL_NULL {
                        break;
                    }
                    let id = self.id(prev);
                    let r = mtr.get(id, LatchMode::Shared)?;
                    self.check_left_link(mtr, r, id, cur_id)?;
                    out.push((r, id));
                    cur = r;
                    cur_id = id;
                }
                return Ok((out, leaf));
            }
            let mut ids = Vec::with_capacity(k);
            let mut prev = header::prev_page(mtr.page(leaf));
            mtr.release(leaf);
            while ids.len() < k && prev != FIL_NULL {
                ids.push(prev);
                let r = mtr.get(self.id(prev), LatchMode::Shared)?;
                let p2 = header::prev_page(mtr.page(r));
                release(mtr, r);
                prev = p2;
            }
            let mut refs: Vec<(PageRef, PageId)> = Vec::with_capacity(ids.len());
            for &no in ids.iter().rev() {
                refs.push((mtr.get(self.id(no), LatchMode::Shared)?, self.id(no)));
            }
            leaf = mtr.get(leaf_id, LatchMode::Exclusive)?;
            // refs run left to right; the leaf follows the last one.
            let mut chain: Vec<(PageRef, PageId)> = refs.clone();
            chain.push((leaf, leaf_id));
            let ok = chain.windows(2).all(|w| {
                let ((a, a_id), (b, b_id)) = (w[0], w[1]);
                self.view(mtr.page(a), a_id).is_ok_and(|p| p.is_leaf())
                    && header::next_page(mtr.page(a)) == b_id.page_no
                    && header::prev_page(mtr.page(b)) == a_id.page_no
            }) && (refs.len() == k
                || refs
                    .first()
                    .map_or(header::prev_page(mtr.page(leaf)), |&(r, _)| {
                        header::prev_page(mtr.page(r))
                    })
                    == FIL_NULL);
            if ok {
                refs.reverse();
                return Ok((refs, leaf));
            }
            for (r, _) in refs {
                release(mtr, r);
            }
        }
    }

    /// True if the record in `slot` of the latched leaf is delete-marked.
    pub(crate) fn is_deleted(
        &self,
        mtr: &Mtr<'_>,
        r: PageRef,
        id: PageId,
        slot: usize,
    ) -> Result<bool> {
        let page = self.view(mtr.page(r), id)?;
        Ok(self.rec(&page, slot, id)?.is_delete_marked())
    }

    /// External references of the record in `slot` of a latched leaf.
    pub(crate) fn extern_refs_at(
        &self,
        mtr: &Mtr<'_>,
        r: PageRef,
        id: PageId,
        slot: usize,
    ) -> Result<Vec<basalt_page::rec::ExternRef>> {
        let page = self.view(mtr.page(r), id)?;
        Ok(BTree::extern_refs(&self.rec(&page, slot, id)?))
    }

    /// Advances the max trx id of a secondary-index leaf to `trx`.
    pub(crate) fn bump_max_trx(
        &self,
        mtr: &mut Mtr<'_>,
        r: PageRef,
        id: PageId,
        trx: TrxId,
    ) -> Result<()> {
        if self.is_clustered() || trx.0 == 0 {
            return Ok(());
        }
        if self.view(mtr.page(r), id)?.max_trx_id() < trx {
            self.apply(mtr, r, &RedoRecord::SetMaxTrxId { trx_id: trx })?;
        }
        Ok(())
    }

    pub(crate) fn dup(&self, key: &[Option<&[u8]>]) -> BTreeError {
        BTreeError::DuplicateKey {
            index_id: self.index_id,
            key: owned_key(key),
        }
    }

    fn dup_prefix(&self, key: Vec<Option<Vec<u8>>>) -> BTreeError {
        BTreeError::DuplicateKey {
            index_id: self.index_id,
            key,
        }
    }
}
