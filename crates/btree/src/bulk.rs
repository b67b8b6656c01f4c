//! Sorted bulk build (`CREATE INDEX`, `ALTER TABLE ... ADD INDEX`): pages
//! are filled left to right in memory and written whole.
//!
//! ```text
//!   sorted records ─▶ level 0 builder ──page full──▶ write leaf, push
//!                                                    (first key → page)
//!                                                    to the level 1 builder
//!                     level 1 builder ──page full──▶ write node, push to 2
//!                     …
//!   end of input: flush every level bottom-up; the single page of the top
//!   level is the root
//! ```
//!
//! One builder per level holds the page being filled (a private 16 KiB
//! buffer formatted and filled with the page layer's own functions, not a
//! buffer-pool page). A page is full when the next record would take its
//! used bytes past the fill limit: `innodb_fill_factor` percent of the
//! page, except that the default 100 leaves 1/16 of the page free, as
//! InnoDB does, for later inserts.
//!
//! A finished page is allocated, written with **one** `FullPage` redo record
//! (cheaper than a record per insert), and, for leaves, linked to its left
//! neighbour (one `WriteBytes` on the neighbour, which is X-latched
//! *before* the allocation, in latch order). Pages are written in
//! mini-transactions of at most [`chain_pages_per_mtr`] pages, each
//! committed at once: the tree is unreachable until the caller publishes
//! its root, so partial states are invisible; a crash leaks the pages
//! (like an interrupted `CREATE INDEX`, whose space is reclaimed with the
//! index). Long values are written to overflow chains by the same policy
//! as [`BTree::insert`](crate::BTree::insert).
//!
//! The result holds the same records, in the same order, as inserting the
//! input one by one, and passes the same [`BTree::validate`]; only the
//! page layout differs (fuller pages, no garbage).

use basalt_buf::LatchMode;
use basalt_common::{IndexId, PageId, PageNo, SpaceId, TrxId, FIL_NULL, PAGE_SIZE};
use basalt_mtr::{Mtr, PageStore};
use basalt_page::header::{self, FIL_PAGE_NEXT, FIL_PAGE_NO, FIL_PAGE_PREV, FIL_PAGE_SPACE};
use basalt_page::index_page::{self, IndexPage, PAGE_CAPACITY, SLOT_SIZE};
use basalt_page::rec::{
    set_rec_delete_mark, FieldValue, RecordLayout, RecordRef, SysCols, INFO_MIN_REC,
};
use basalt_page::RedoRecord;
use std::cmp::Ordering;
use std::sync::Arc;

use crate::error::{BTreeError, Result};
use crate::external::{chain_pages_per_mtr, ChainSink};
use crate::key::Scratch;
use crate::tree::{BTree, IndexKind};

/// Settings of a bulk build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BulkOptions {
    /// `innodb_fill_factor` (10..=100, default 100): how full pages are
    /// made; 100 leaves 1/16 of each page free.
    pub fill_factor: u8,
}

impl Default for BulkOptions {
    fn default() -> BulkOptions {
        BulkOptions { fill_factor: 100 }
    }
}

impl BulkOptions {
    /// Bytes of records and slots a page may hold before it counts as full.
    pub fn fill_limit(&self) -> usize {
        if self.fill_factor >= 100 {
            PAGE_CAPACITY - PAGE_CAPACITY / 16
        } else {
            PAGE_CAPACITY * usize::from(self.fill_factor) / 100
        }
    }
}

/// One input record of a bulk build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BulkRecord {
    /// User field values, `None` = NULL.
    pub values: Vec<Option<Vec<u8>>>,
    /// System columns (clustered) or the building transaction's id
    /// (secondary: `trx_id` becomes the pages' max trx id).
    pub sys: SysCols,
    /// Store the record delete-marked.
    pub delete_marked: bool,
}

/// The page being filled at one level.
struct Builder {
    level: u16,
    image: Vec<u8>,
    n: usize,
    emitted: u64,
    /// Last page written at this level (leaves link to it).
    prev: PageNo,
    max_trx: TrxId,
}

/// State of one bulk build.
struct Bulk<'a> {
    tree: BTree,
    store: &'a PageStore,
    mtr: Option<Mtr<'a>>,
    pages_in_mtr: u64,
    per_mtr: u64,
    limit: usize,
    levels: Vec<Builder>,
}

impl BTree {
    /// Builds a tree from records sorted by key (strictly ascending) with
    /// the default [`BulkOptions`]. See the module doc.
    pub fn bulk_load<I>(
        store: &PageStore,
        space: SpaceId,
        index_id: IndexId,
        layout: Arc<RecordLayout>,
        kind: IndexKind,
        records: I,
    ) -> Result<BTree>
    where
        I: IntoIterator<Item = BulkRecord>,
    {
        BTree::bulk_load_with(
            store,
            space,
            index_id,
            layout,
            kind,
            BulkOptions::default(),
            records,
        )
    }

    /// As [`BTree::bulk_load`], with explicit options.
    pub fn bulk_load_with<I>(
        store: &PageStore,
        space: SpaceId,
        index_id: IndexId,
        layout: Arc<RecordLayout>,
        kind: IndexKind,
        options: BulkOptions,
        records: I,
    ) -> Result<BTree>
    where
        I: IntoIterator<Item = BulkRecord>,
    {
        if !(10..=100).contains(&options.fill_factor) {
            return Err(BTreeError::BadDefinition(format!(
                "innodb_fill_factor {} outside 10..=100",
                options.fill_factor
            )));
        }
        let tree = BTree::open(space, FIL_NULL, index_id, layout, kind)?;
        let mut bulk = Bulk {
            tree,
            store,
            mtr: None,
            pages_in_mtr: 0,
            per_mtr: chain_pages_per_mtr(store),
            limit: options.fill_limit(),
            levels: Vec::new(),
        };
        let mut prev: Vec<u8> = Vec::new();
        let mut run_live = false;
        let mut rec = Scratch::new();
        for (index, r) in records.into_iter().enumerate() {
            bulk.encode(&r, &mut rec)?;
            let tree = &bulk.tree;
            let cur =
                RecordRef::new(&tree.layout, &rec).map_err(|e| tree.bad_value(e.to_string()))?;
            let live = !r.delete_marked;
            if !prev.is_empty() {
                let p = RecordRef::new(&tree.layout, &prev)
                    .map_err(|e| tree.bad_value(e.to_string()))?;
                if p.key_cmp(&cur) != Ordering::Less {
                    return Err(BTreeError::BulkOrder {
                        index_id,
                        index: index as u64,
                    });
                }
                if let IndexKind::Secondary { unique: Some(n) } = tree.kind {
                    let same = (0..n).all(|i| cur.field(i).is_some())
                        && crate::key::with_key(&p, n, |k| cur.compare_key(k)) == Ordering::Equal;
                    if same && live && run_live {
                        return Err(tree.dup(&(0..n).map(|i| cur.field(i)).collect::<Vec<_>>()));
                    }
                    run_live = if same { run_live || live } else { live };
                }
            } else {
                run_live = live;
            }
            prev.clear();
            prev.extend_from_slice(&rec);
            bulk.add(0, &rec, r.sys.trx_id)?;
        }
        let mut tree = bulk.tree.clone();
        tree.root = bulk.finish()?;
        Ok(tree)
    }
}

impl<'a> Bulk<'a> {
    fn mtr(&mut self) -> Result<&mut Mtr<'a>> {
        if self.mtr.is_none() {
            self.mtr = Some(Mtr::start(self.store)?);
        }
        // Invariant: set just above.
        Ok(self.mtr.as_mut().expect("started above"))
    }

    fn commit(&mut self) -> Result<()> {
        self.pages_in_mtr = 0;
        if let Some(m) = self.mtr.take() {
            m.commit()?;
        }
        Ok(())
    }

    fn page_done(&mut self) -> Result<()> {
        self.pages_in_mtr += 1;
        let big = self
            .mtr
            .as_ref()
            .is_some_and(|m| m.redo_len() as u64 > self.store.log.max_group_size() / 4);
        if self.pages_in_mtr >= self.per_mtr || big {
            self.commit()?;
        }
        Ok(())
    }

    /// Encodes one input record, writing overflow chains when needed.
    fn encode(&mut self, r: &BulkRecord, out: &mut Vec<u8>) -> Result<()> {
        let values: Vec<Option<&[u8]>> = r.values.iter().map(|v| v.as_deref()).collect();
        self.tree.check_key_values(&values)?;
        let ext = self.tree.encode_or_plan(&values, r.sys, out)?;
        if !ext.is_empty() {
            // Chains are written in their own mini-transactions, which latch
            // the space header: nothing of ours may hold it.
            self.commit()?;
            let mut sink = ChainSink::own(self.store, true);
            let mut refs = Vec::with_capacity(ext.len());
            for &i in &ext {
                refs.push(
                    self.tree
                        .write_chain(&mut sink, values[i].unwrap_or_default())?,
                );
            }
            sink.finish()?;
            let fv: Vec<FieldValue<'_>> = values
                .iter()
                .enumerate()
                .map(|(i, v)| match ext.iter().position(|&e| e == i) {
                    Some(k) => FieldValue::External(refs[k]),
                    None => FieldValue::from(*v),
                })
                .collect();
            out.clear();
            self.tree
                .layout
                .encode_leaf_values(&fv, self.tree.enc_sys(r.sys), out)
                .map_err(|e| self.tree.bad_value(e.to_string()))?;
        }
        if r.delete_marked {
            set_rec_delete_mark(out, true);
        }
        Ok(())
    }

    fn new_builder(&self, level: u16) -> Result<Builder> {
        let mut image = vec![0u8; PAGE_SIZE];
        index_page::init(
            &mut image,
            PageId::new(self.tree.space, 0),
            level,
            self.tree.index_id,
            self.tree.flags(),
        )
        .map_err(|e| BTreeError::page(self.tree.root_id(), e))?;
        Ok(Builder {
            level,
            image,
            n: 0,
            emitted: 0,
            prev: FIL_NULL,
            max_trx: TrxId(0),
        })
    }

    /// Appends `rec` at `level`, writing the page first if it is full.
    fn add(&mut self, level: usize, rec: &[u8], trx: TrxId) -> Result<()> {
        if level == self.levels.len() {
            let b = self.new_builder(level as u16)?;
            self.levels.push(b);
        }
        let (n, used) = {
            let b = &self.levels[level];
            let page =
                IndexPage::new(&b.image).map_err(|e| BTreeError::page(self.tree.root_id(), e))?;
            (b.n, page.used_bytes())
        };
        if n > 0 && used + rec.len() + SLOT_SIZE > self.limit {
            let ptr = self.emit(level)?;
            self.add(level + 1, &ptr, TrxId(0))?;
        }
        let b = &mut self.levels[level];
        let flagged;
        let rec = if level > 0 && b.n == 0 {
            // Slot 0 of a node page carries the min-record flag.
            let mut v = rec.to_vec();
            v[0] |= INFO_MIN_REC;
            flagged = v;
            &flagged[..]
        } else {
            rec
        };
        index_page::insert(&mut b.image, b.n, rec)
            .map_err(|e| BTreeError::page(PageId::new(self.tree.space, b.prev), e))?;
        b.n += 1;
        if trx > b.max_trx {
            b.max_trx = trx;
        }
        Ok(())
    }

    /// Writes the page being built at `level` and starts a new one there;
    /// returns the node pointer to the written page.
    fn emit(&mut self, level: usize) -> Result<Vec<u8>> {
        let (no, image) = self.write_page(level)?;
        let page = IndexPage::new(&image).map_err(|e| BTreeError::page(self.tree.id(no), e))?;
        let first = self.tree.rec(&page, 0, self.tree.id(no))?;
        let mut ptr = Vec::new();
        self.tree
            .layout
            .node_ptr_from(&first, no, false, &mut ptr)
            .map_err(|e| BTreeError::page(self.tree.id(no), e))?;
        Ok(ptr)
    }

    /// Allocates a page for the builder at `level`, writes its image with
    /// one `FullPage` record, links it (leaves), resets the builder.
    /// Returns the page number and the written image.
    fn write_page(&mut self, level: usize) -> Result<(PageNo, Vec<u8>)> {
        let fresh = self.new_builder(level as u16)?;
        let b = std::mem::replace(&mut self.levels[level], fresh);
        let tree = self.tree.clone();
        let mtr = self.mtr()?;
        let prev_ref = if b.level == 0 && b.prev != FIL_NULL {
            Some(mtr.get(tree.id(b.prev), LatchMode::Exclusive)?)
        } else {
            None
        };
        let r = mtr.alloc_page(tree.space)?;
        let no = mtr.page_id(r).page_no;
        let mut image = b.image;
        header::write_u32(&mut image, FIL_PAGE_SPACE, tree.space.0);
        header::write_u32(&mut image, FIL_PAGE_NO, no);
        header::write_u32(
            &mut image,
            FIL_PAGE_PREV,
            if b.level == 0 { b.prev } else { FIL_NULL },
        );
        header::write_u32(&mut image, FIL_PAGE_NEXT, FIL_NULL);
        if b.level == 0 && !tree.is_clustered() && b.max_trx.0 > 0 {
            index_page::set_max_trx_id(&mut image, b.max_trx)
                .map_err(|e| BTreeError::page(tree.id(no), e))?;
        }
        let full = RedoRecord::full_page(&image).map_err(|e| BTreeError::page(tree.id(no), e))?;
        tree.apply(mtr, r, &full)?;
        if let Some(p) = prev_ref {
            tree.apply(mtr, p, &RedoRecord::set_next_sibling(no))?;
        }
        let nb = &mut self.levels[level];
        nb.prev = no;
        nb.emitted = b.emitted + 1;
        self.page_done()?;
        Ok((no, image))
    }

    /// Writes every level bottom-up; returns the root page number.
    fn finish(mut self) -> Result<PageNo> {
        if self.levels.is_empty() {
            let b = self.new_builder(0)?;
            self.levels.push(b);
        }
        let mut level = 0;
        let root = loop {
            let top = level + 1 == self.levels.len();
            if top && self.levels[level].emitted == 0 {
                break self.write_page(level)?.0;
            }
            let ptr = self.emit(level)?;
            self.add(level + 1, &ptr, TrxId(0))?;
            level += 1;
        };
        self.commit()?;
        Ok(root)
    }
}
