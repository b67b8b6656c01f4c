//! Physical removal (purge): the record leaves the page, its overflow
//! chains are freed, and the tree shrinks where pages run empty.
//!
//! Optimistic when the leaf is the root, or keeps at least one record and
//! stays at or above [`MERGE_THRESHOLD`](crate::MERGE_THRESHOLD) bytes:
//! one X latch, one `Delete`. Otherwise the operation restarts
//! pessimistically: X descent keeping the unsafe ancestors, then the left
//! neighbour (before the leaf: the left-neighbour exception of the crate
//! doc), the leaf and the right neighbour, all before the first change, so
//! that merging or unlinking never has to wait for a latch out of order.

use basalt_buf::LatchMode;
use basalt_mtr::Mtr;
use basalt_page::index_page::SLOT_SIZE;
use basalt_page::RedoRecord;

use crate::error::{owned_key, BTreeError, Result};
use crate::latch::Intent;
use crate::merge::LeafSet;
use crate::tree::{BTree, TreeCounters, MERGE_THRESHOLD};

impl BTree {
    /// Removes the record with key `key` (all key fields) from the tree and
    /// frees its overflow chains. Fails with [`BTreeError::KeyNotFound`],
    /// changing nothing, when there is no such record.
    pub fn remove(&self, mtr: &mut Mtr<'_>, key: &[Option<&[u8]>]) -> Result<()> {
        self.check_full_key(key)?;
        let sp = mtr.savepoint();
        let res = match self.remove_optimistic(mtr, key) {
            Ok(true) => Ok(()),
            Ok(false) => {
                mtr.release_since(sp);
                TreeCounters::bump(&self.counters.pessimistic);
                self.remove_pessimistic(mtr, key)
            }
            Err(e) => Err(e),
        };
        mtr.release_since(sp);
        res
    }

    pub(crate) fn not_found(&self, key: &[Option<&[u8]>]) -> BTreeError {
        BTreeError::KeyNotFound {
            index_id: self.index_id,
            key: owned_key(key),
        }
    }

    fn remove_optimistic(&self, mtr: &mut Mtr<'_>, key: &[Option<&[u8]>]) -> Result<bool> {
        let (leaf, leaf_id) = self.leaf_for_write(mtr, key)?;
        let (slot, exact) = self.locate(mtr, leaf, leaf_id, key)?;
        if !exact {
            return Err(self.not_found(key));
        }
        if !self.stays_full(mtr, leaf, leaf_id, slot)? {
            return Ok(false);
        }
        let old = self.extern_refs_at(mtr, leaf, leaf_id, slot)?;
        self.apply(mtr, leaf, &RedoRecord::Delete { slot: slot as u16 })?;
        for ext in &old {
            self.free_chain(mtr, ext, leaf_id)?;
        }
        Ok(true)
    }

    /// True if removing `slot` leaves the leaf needing no structural change.
    fn stays_full(
        &self,
        mtr: &Mtr<'_>,
        leaf: basalt_mtr::PageRef,
        leaf_id: basalt_common::PageId,
        slot: usize,
    ) -> Result<bool> {
        if leaf_id == self.root_id() {
            return Ok(true);
        }
        let page = self.view(mtr.page(leaf), leaf_id)?;
        let len = page
            .rec(slot)
            .map_err(|e| BTreeError::page(leaf_id, e))?
            .len();
        Ok(page.n_recs() > 1 && page.used_bytes() - len - SLOT_SIZE >= MERGE_THRESHOLD)
    }

    fn remove_pessimistic(&self, mtr: &mut Mtr<'_>, key: &[Option<&[u8]>]) -> Result<()> {
        let mut path = self.path_for_write(mtr, key, Intent::Delete)?;
        let leaf_id = path.leaf_id;
        let (slot, exact) = self.locate(mtr, path.leaf, leaf_id, key)?;
        if !exact {
            return Err(self.not_found(key));
        }
        if self.stays_full(mtr, path.leaf, leaf_id, slot)? {
            let old = self.extern_refs_at(mtr, path.leaf, leaf_id, slot)?;
            self.apply(mtr, path.leaf, &RedoRecord::Delete { slot: slot as u16 })?;
            for ext in &old {
                self.free_chain(mtr, ext, leaf_id)?;
            }
            return Ok(());
        }
        let (left, leaf) =
            self.latch_left_then_leaf(mtr, path.leaf, leaf_id, LatchMode::Exclusive)?;
        path.leaf = leaf;
        let right = self.latch_right(mtr, leaf, leaf_id)?;
        // The leaf was released during the dance only under the parent's X
        // latch, but re-find the slot anyway.
        let (slot, exact) = self.locate(mtr, leaf, leaf_id, key)?;
        if !exact {
            return Err(self.not_found(key));
        }
        let old = self.extern_refs_at(mtr, leaf, leaf_id, slot)?;
        self.apply(mtr, leaf, &RedoRecord::Delete { slot: slot as u16 })?;
        let left = left.map(|l| (l, mtr.page_id(l)));
        self.fix_leaf(
            mtr,
            &mut path.levels,
            LeafSet {
                left,
                leaf,
                leaf_id,
                right,
            },
        )?;
        for ext in &old {
            self.free_chain(mtr, ext, leaf_id)?;
        }
        Ok(())
    }
}
