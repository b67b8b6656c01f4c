//! `SystemTable`: one system table as a clustered B+tree in the system
//! tablespace, with typed rows going in and out through the codecs.
//!
//! A row type implements [`SystemRow`] (columns in order, key first) and
//! its key type [`SystemKey`]; the table does the rest:
//!
//! ```text
//!   put(row)     encode ─▶ insert ─DuplicateKey─▶ update   (one mtr, the caller's)
//!   delete(key)  encode ─▶ remove ─KeyNotFound─▶ "absent"
//!   scan()       cursor over the whole tree, S latches, decode each row
//! ```
//!
//! Rows carry `DB_TRX_ID` 0 and a null roll pointer: system rows are
//! written outside transactions, their atomicity is the mini-transaction's
//! (see the crate doc), and no undo exists for them.

use std::ops::Bound;

use basalt_btree::{BTree, BTreeError, IndexKind, TreeStats};
use basalt_common::{RollPtr, SpaceId, TrxId};
use basalt_mtr::{Mtr, PageStore};
use basalt_page::rec::SysCols;

use crate::codec::{EncodedRow, RowDecoder, RowEncoder, SystemTableDef};
use crate::error::{CatalogError, CatalogResult};

/// The system columns every system row carries.
const SYSTEM_ROW_SYS: SysCols = SysCols {
    trx_id: TrxId(0),
    roll_ptr: RollPtr(0),
};

/// A typed row of one system table.
pub trait SystemRow: Sized {
    /// The table the rows live in.
    const DEF: &'static SystemTableDef;
    /// Writes every column in order (key columns first).
    fn encode(&self, enc: &mut RowEncoder) -> CatalogResult<()>;
    /// Reads a stored row.
    fn decode(dec: &mut RowDecoder<'_>) -> CatalogResult<Self>;
}

/// The primary key of a [`SystemRow`].
pub trait SystemKey {
    /// The table the key belongs to.
    const DEF: &'static SystemTableDef;
    /// Writes the key columns in order.
    fn encode(&self, enc: &mut RowEncoder) -> CatalogResult<()>;
}

/// What [`SystemTable::put`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PutOutcome {
    /// No row had the key: inserted.
    Inserted,
    /// A row had the key: replaced.
    Updated,
}

/// One system table: its definition and its clustered B+tree.
///
/// The handle takes no lock of its own. Its writes may run several
/// operations in one mini-transaction, which is safe only while no other
/// thread latches pages of the same tree (see the crate doc, "Why one
/// writer"); [`Catalog`](crate::Catalog) guarantees that for the tables it
/// owns by running every access under its lock. Code that opens a
/// `SystemTable` itself must give the same guarantee.
#[derive(Debug, Clone)]
pub struct SystemTable {
    def: &'static SystemTableDef,
    tree: BTree,
}

impl SystemTable {
    /// A handle on the existing table whose root is `root` (as the
    /// dictionary header records it). Touches no page.
    pub fn open(def: &'static SystemTableDef, root: u32) -> CatalogResult<SystemTable> {
        let tree = BTree::open(
            SpaceId::SYSTEM,
            root,
            def.index_id(),
            def.layout()?,
            IndexKind::Clustered,
        )?;
        Ok(SystemTable { def, tree })
    }

    /// Creates the empty table in the system tablespace (allocating its
    /// root page in `mtr`; the caller records the root and commits).
    pub fn create(mtr: &mut Mtr<'_>, def: &'static SystemTableDef) -> CatalogResult<SystemTable> {
        let tree = BTree::create(
            mtr,
            SpaceId::SYSTEM,
            def.index_id(),
            def.layout()?,
            IndexKind::Clustered,
        )?;
        Ok(SystemTable { def, tree })
    }

    /// The definition.
    pub fn def(&self) -> &'static SystemTableDef {
        self.def
    }

    /// The clustered B+tree.
    pub fn tree(&self) -> &BTree {
        &self.tree
    }

    fn check_def(&self, def: &'static SystemTableDef) -> CatalogResult<()> {
        if def.id != self.def.id {
            return Err(CatalogError::invalid(
                self.def.name,
                "-",
                format!("a row of {} given to {}", def.name, self.def.name),
            ));
        }
        Ok(())
    }

    /// Inserts `row`, or replaces the row with its key. Must run with the
    /// catalog's write lock held (see the crate doc); on error the caller
    /// drops `mtr`.
    pub fn put<R: SystemRow>(&self, mtr: &mut Mtr<'_>, row: &R) -> CatalogResult<PutOutcome> {
        self.check_def(R::DEF)?;
        let mut enc = RowEncoder::row(self.def);
        row.encode(&mut enc)?;
        self.put_encoded(mtr, &enc.finish()?)
    }

    /// As [`SystemTable::put`] for an already encoded row.
    pub fn put_encoded(&self, mtr: &mut Mtr<'_>, row: &EncodedRow) -> CatalogResult<PutOutcome> {
        let values = row.as_values();
        match self.tree.insert(mtr, &values, SYSTEM_ROW_SYS) {
            Ok(()) => Ok(PutOutcome::Inserted),
            // DuplicateKey changes nothing (BTreeError::leaves_mtr_clean),
            // so the mini-transaction goes on with the update.
            Err(BTreeError::DuplicateKey { .. }) => {
                let key = &values[..self.def.n_key];
                self.tree.update(mtr, key, &values, SYSTEM_ROW_SYS)?;
                Ok(PutOutcome::Updated)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Removes the row with `key`; `false` when there was none.
    pub fn delete<K: SystemKey>(&self, mtr: &mut Mtr<'_>, key: &K) -> CatalogResult<bool> {
        self.check_def(K::DEF)?;
        let mut enc = RowEncoder::key(self.def);
        key.encode(&mut enc)?;
        self.delete_encoded(mtr, &enc.finish()?)
    }

    /// As [`SystemTable::delete`] for an already encoded key.
    pub fn delete_encoded(&self, mtr: &mut Mtr<'_>, key: &EncodedRow) -> CatalogResult<bool> {
        match self.tree.remove(mtr, &key.as_values()) {
            Ok(()) => Ok(true),
            Err(BTreeError::KeyNotFound { .. }) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Every live row in key order. Must not run on a thread whose open
    /// mini-transaction holds pages of this table.
    pub fn scan<R: SystemRow>(&self, store: &PageStore) -> CatalogResult<Vec<R>> {
        self.check_def(R::DEF)?;
        let mut out = Vec::new();
        let mut cursor = self
            .tree
            .cursor(store, Bound::Unbounded, Bound::Unbounded)?;
        while let Some(rec) = cursor.next()? {
            if rec.is_delete_marked() {
                continue;
            }
            if rec.has_external() {
                return Err(CatalogError::corrupt(
                    self.def.name,
                    "row with a value on overflow pages",
                ));
            }
            let fields: Vec<Option<&[u8]>> = (0..rec.n_fields()).map(|i| rec.field(i)).collect();
            let mut dec = RowDecoder::new(self.def, &fields)?;
            let row = R::decode(&mut dec)?;
            dec.finish()?;
            out.push(row);
        }
        Ok(out)
    }

    /// The live row with `key`, if any (same threading rule as
    /// [`SystemTable::scan`]).
    pub fn get<R: SystemRow, K: SystemKey>(
        &self,
        store: &PageStore,
        key: &K,
    ) -> CatalogResult<Option<R>> {
        self.check_def(R::DEF)?;
        self.check_def(K::DEF)?;
        let mut enc = RowEncoder::key(self.def);
        key.encode(&mut enc)?;
        let key = enc.finish()?;
        let found = self.tree.get_with(store, &key.as_values(), |rec, _| {
            if rec.is_delete_marked() {
                return Ok(None);
            }
            if rec.has_external() {
                return Err(CatalogError::corrupt(
                    self.def.name,
                    "row with a value on overflow pages",
                ));
            }
            let fields: Vec<Option<&[u8]>> = (0..rec.n_fields()).map(|i| rec.field(i)).collect();
            let mut dec = RowDecoder::new(self.def, &fields)?;
            let row = R::decode(&mut dec)?;
            dec.finish()?;
            Ok(Some(row))
        })?;
        Ok(found.transpose()?.flatten())
    }

    /// Checks the tree's invariants (see `BTree::validate`).
    pub fn validate(&self, store: &PageStore) -> CatalogResult<TreeStats> {
        Ok(self.tree.validate(store)?)
    }
}
