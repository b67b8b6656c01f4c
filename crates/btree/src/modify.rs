//! Updates in place and delete marks.
//!
//! An update keeps the record's key (its position) and its delete mark and
//! replaces everything else: in place (`Replace`) when the new version fits
//! the page, otherwise — pessimistically — the old version is deleted and
//! the new one inserted at the same slot with a split. The old version's
//! overflow chains are freed in the same mini-transaction; new long values
//! get new chains.
//!
//! A delete mark on a clustered record also stamps the new `DB_TRX_ID` /
//! `DB_ROLL_PTR` (the record is re-encoded with the same length and
//! replaced); on a secondary record it flips the bit and advances the
//! page's max trx id.

use std::borrow::Cow;
use std::cmp::Ordering;

use basalt_mtr::Mtr;
use basalt_page::rec::{set_rec_delete_mark, FieldValue, RecordRef, SysCols};
use basalt_page::RedoRecord;

use crate::error::{BTreeError, Result};
use crate::external::Prepared;
use crate::insert::Step;
use crate::key::Scratch;
use crate::latch::Intent;
use crate::tree::{BTree, TreeCounters};

impl BTree {
    /// Replaces the record with key `key` by one with `values` (whose key
    /// fields must compare equal to `key`) and, for a clustered index, the
    /// system columns `sys`. The delete mark is kept.
    pub fn update(
        &self,
        mtr: &mut Mtr<'_>,
        key: &[Option<&[u8]>],
        values: &[Option<&[u8]>],
        sys: SysCols,
    ) -> Result<()> {
        self.check_full_key(key)?;
        self.check_key_values(values)?;
        if !self.same_key(values, key)? {
            return Err(BTreeError::KeyChanged {
                index_id: self.index_id,
            });
        }
        let prepared = self.prepare(mtr, values, sys)?;
        let sp = mtr.savepoint();
        let res = match self.update_optimistic(mtr, key, &prepared, sys) {
            Ok(Step::Done) => Ok(()),
            Ok(Step::Pessimistic) => {
                mtr.release_since(sp);
                TreeCounters::bump(&self.counters.pessimistic);
                self.update_pessimistic(mtr, key, &prepared, sys)
            }
            Err(e) => Err(e),
        };
        mtr.release_since(sp);
        if res.is_err() {
            self.discard(mtr, &prepared);
        }
        res
    }

    /// True if the key fields of `values` compare equal to `key`.
    fn same_key(&self, values: &[Option<&[u8]>], key: &[Option<&[u8]>]) -> Result<bool> {
        let mut probe = Scratch::new();
        self.layout
            .encode_node_ptr(&values[..self.layout.n_key()], 0, false, &mut probe)
            .map_err(|e| self.bad_value(e.to_string()))?;
        let rec =
            RecordRef::new(&self.layout, &probe).map_err(|e| self.bad_value(e.to_string()))?;
        Ok(rec.compare_key(key) == Ordering::Equal)
    }

    /// The new version with the delete mark of the old one.
    fn versioned<'p>(
        &self,
        prepared: &'p Prepared,
        marked: bool,
        buf: &'p mut Scratch,
    ) -> &'p [u8] {
        if !marked {
            return &prepared.rec;
        }
        buf.clear();
        buf.extend_from_slice(&prepared.rec);
        set_rec_delete_mark(buf, true);
        buf
    }

    fn update_optimistic(
        &self,
        mtr: &mut Mtr<'_>,
        key: &[Option<&[u8]>],
        prepared: &Prepared,
        sys: SysCols,
    ) -> Result<Step> {
        let (leaf, leaf_id) = self.leaf_for_write(mtr, key)?;
        let (slot, exact) = self.locate(mtr, leaf, leaf_id, key)?;
        if !exact {
            return Err(self.not_found(key));
        }
        let marked = self.is_deleted(mtr, leaf, leaf_id, slot)?;
        let mut buf = Scratch::new();
        let rec = self.versioned(prepared, marked, &mut buf);
        let page = self.view(mtr.page(leaf), leaf_id)?;
        if !page
            .would_fit_replace(slot, rec.len())
            .map_err(|e| BTreeError::page(leaf_id, e))?
        {
            return Ok(Step::Pessimistic);
        }
        let old = self.extern_refs_at(mtr, leaf, leaf_id, slot)?;
        self.apply(
            mtr,
            leaf,
            &RedoRecord::Replace {
                slot: slot as u16,
                rec: Cow::Borrowed(rec),
            },
        )?;
        self.bump_max_trx(mtr, leaf, leaf_id, sys.trx_id)?;
        for ext in &old {
            self.free_chain(mtr, ext, leaf_id)?;
        }
        Ok(Step::Done)
    }

    fn update_pessimistic(
        &self,
        mtr: &mut Mtr<'_>,
        key: &[Option<&[u8]>],
        prepared: &Prepared,
        sys: SysCols,
    ) -> Result<()> {
        let mut path = self.path_for_write(mtr, key, Intent::Insert)?;
        let (leaf, leaf_id) = (path.leaf, path.leaf_id);
        let (slot, exact) = self.locate(mtr, leaf, leaf_id, key)?;
        if !exact {
            return Err(self.not_found(key));
        }
        let marked = self.is_deleted(mtr, leaf, leaf_id, slot)?;
        let mut buf = Scratch::new();
        let rec = self.versioned(prepared, marked, &mut buf);
        let old = self.extern_refs_at(mtr, leaf, leaf_id, slot)?;
        let fits = self
            .view(mtr.page(leaf), leaf_id)?
            .would_fit_replace(slot, rec.len())
            .map_err(|e| BTreeError::page(leaf_id, e))?;
        let (target, target_id) = if fits {
            self.apply(
                mtr,
                leaf,
                &RedoRecord::Replace {
                    slot: slot as u16,
                    rec: Cow::Borrowed(rec),
                },
            )?;
            (leaf, leaf_id)
        } else {
            self.apply(mtr, leaf, &RedoRecord::Delete { slot: slot as u16 })?;
            self.split_insert(mtr, &mut path.levels, leaf, leaf_id, slot, rec)?
        };
        self.bump_max_trx(mtr, target, target_id, sys.trx_id)?;
        for ext in &old {
            self.free_chain(mtr, ext, leaf_id)?;
        }
        Ok(())
    }

    /// Sets (`marked`) or clears the delete mark of the record with key
    /// `key`. On a clustered index the record also gets `sys` as its new
    /// `DB_TRX_ID` / `DB_ROLL_PTR`; on a secondary index `sys.trx_id`
    /// advances the page's max trx id. Never changes the tree's shape.
    pub fn delete_mark(
        &self,
        mtr: &mut Mtr<'_>,
        key: &[Option<&[u8]>],
        marked: bool,
        sys: SysCols,
    ) -> Result<()> {
        self.check_full_key(key)?;
        let sp = mtr.savepoint();
        let res = self.delete_mark_at_leaf(mtr, key, marked, sys);
        mtr.release_since(sp);
        res
    }

    fn delete_mark_at_leaf(
        &self,
        mtr: &mut Mtr<'_>,
        key: &[Option<&[u8]>],
        marked: bool,
        sys: SysCols,
    ) -> Result<()> {
        let (leaf, leaf_id) = self.leaf_for_write(mtr, key)?;
        let (slot, exact) = self.locate(mtr, leaf, leaf_id, key)?;
        if !exact {
            return Err(self.not_found(key));
        }
        if !self.is_clustered() {
            self.apply(
                mtr,
                leaf,
                &RedoRecord::SetDeleteMark {
                    slot: slot as u16,
                    marked,
                },
            )?;
            return self.bump_max_trx(mtr, leaf, leaf_id, sys.trx_id);
        }
        let mut out = Scratch::new();
        {
            let page = self.view(mtr.page(leaf), leaf_id)?;
            let rec = self.rec(&page, slot, leaf_id)?;
            let values: Vec<FieldValue<'_>> = (0..rec.n_fields())
                .map(|i| match rec.extern_ref(i) {
                    Some(ext) => FieldValue::External(ext),
                    None => FieldValue::from(rec.field(i)),
                })
                .collect();
            self.layout
                .encode_leaf_values(&values, Some(sys), &mut out)
                .map_err(|e| BTreeError::page(leaf_id, e))?;
        }
        set_rec_delete_mark(&mut out, marked);
        self.apply(
            mtr,
            leaf,
            &RedoRecord::Replace {
                slot: slot as u16,
                rec: Cow::Borrowed(&out),
            },
        )
    }
}
