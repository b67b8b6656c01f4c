//! Point lookups: shared-latch coupling from the root, no tree-wide lock.
//!
//! ```text
//!   root (S) ──child_for──▶ child (S) ... release root ──▶ leaf (S)
//! ```
//!
//! Each step latches the child before releasing the parent, so the child
//! cannot be freed or split away in between (both need the parent's
//! exclusive latch). A point lookup routes with "last node pointer <= key"
//! ([`SearchMode::Greater`]): by the range invariant (see the crate doc)
//! the only leaf that may hold the key.

use basalt_buf::{LatchMode, PageGuard};
use basalt_common::PageId;
use basalt_mtr::PageStore;
use basalt_page::index_page::SearchMode;
use basalt_page::rec::RecordRef;
use std::cmp::Ordering;

use crate::error::{BTreeError, Result};
use crate::record::{OwnedRecord, Row};
use crate::tree::BTree;

impl BTree {
    /// Descends from the root with shared-latch coupling to the leaf a
    /// search for `key` in `mode` must look at; returns it S-latched.
    // PERF: one hash lookup + latch per level, binary search per page, no
    // allocation.
    pub(crate) fn leaf_for_read<'s>(
        &self,
        store: &'s PageStore,
        key: &[Option<&[u8]>],
        mode: SearchMode,
    ) -> Result<PageGuard<'s>> {
        let mut id = self.root_id();
        let mut guard = store.pool.get(id, LatchMode::Shared)?;
        let mut level = None;
        loop {
            let page = self.view_at(guard.data(), id, level)?;
            if page.is_leaf() {
                return Ok(guard);
            }
            let (_, child) = page
                .child_for(&self.layout, key, mode)
                .map_err(|e| BTreeError::page(id, e))?;
            level = Some(page.level() - 1);
            let child_id = self.id(child);
            let child_guard = store.pool.get(child_id, LatchMode::Shared)?;
            guard = child_guard;
            id = child_id;
        }
    }

    /// Fails unless `key` names every key field.
    pub(crate) fn check_full_key(&self, key: &[Option<&[u8]>]) -> Result<()> {
        if key.len() != self.layout.n_key() {
            return Err(self.bad_value(format!(
                "key of {} fields, the index key has {}",
                key.len(),
                self.layout.n_key()
            )));
        }
        Ok(())
    }

    /// Looks up the record with key `key` (all key fields) and calls `f` on
    /// it while its leaf is S-latched. Delete-marked records are returned
    /// too (visibility is the caller's business).
    // PERF: no allocation; the hot path of every primary-key lookup.
    pub fn get_with<R>(
        &self,
        store: &PageStore,
        key: &[Option<&[u8]>],
        f: impl FnOnce(&RecordRef<'_>, PageId) -> R,
    ) -> Result<Option<R>> {
        self.check_full_key(key)?;
        let guard = self.leaf_for_read(store, key, SearchMode::Greater)?;
        let id = guard.page_id();
        let page = self.view(guard.data(), id)?;
        let slot = page
            .search(&self.layout, key, SearchMode::GreaterOrEqual)
            .map_err(|e| BTreeError::page(id, e))?;
        if slot == page.n_recs() {
            return Ok(None);
        }
        let rec = self.rec(&page, slot, id)?;
        if rec.compare_key(key) != Ordering::Equal {
            return Ok(None);
        }
        Ok(Some(f(&rec, id)))
    }

    /// The record with key `key`, as stored (external fields are
    /// references), or `None`.
    pub fn get(&self, store: &PageStore, key: &[Option<&[u8]>]) -> Result<Option<OwnedRecord>> {
        self.get_with(store, key, |rec, _| OwnedRecord::copy_of(&self.layout, rec))
    }

    /// The record with key `key` with every external value read back, or
    /// `None`. The chains are read while the leaf is S-latched.
    pub fn get_row(&self, store: &PageStore, key: &[Option<&[u8]>]) -> Result<Option<Row>> {
        self.get_with(store, key, |rec, id| self.materialize(store, rec, id))?
            .transpose()
    }

    /// True if a record with key `key` exists and is not delete-marked.
    pub(crate) fn exists_live(&self, store: &PageStore, key: &[Option<&[u8]>]) -> Result<bool> {
        Ok(self
            .get_with(store, key, |rec, _| !rec.is_delete_marked())?
            .unwrap_or(false))
    }
}
