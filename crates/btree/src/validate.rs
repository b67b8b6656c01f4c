//! Whole-tree validation (CHECK TABLE) and statistics.
//!
//! A depth-first walk from the root holding shared latches on the current
//! path (so no structural change can run meanwhile; changes inside leaves
//! can, they never break an invariant), left to right. Each page must be:
//!
//! * an index page of this index (type, index id, clustered flag) that
//!   passes the page layer's full check;
//! * at the level its parent promises, with leaf records on leaves and
//!   node pointers above;
//! * in strictly increasing key order, every key inside the key range its
//!   parent assigns (`[separator_i, separator_i+1)`, see the crate doc);
//! * non-empty unless it is the root;
//! * linked: leaves to their neighbours in both directions, in the order
//!   the walk meets them; node pages to nothing;
//! * reachable once (no page, index or overflow, appears twice).
//!
//! Every externally stored value is followed to the end of its chain and
//! must hold exactly the length its reference claims.

use std::cmp::Ordering;
use std::collections::HashSet;

use basalt_buf::{LatchMode, PageGuard};
use basalt_common::{PageId, PageNo, FIL_NULL};
use basalt_mtr::PageStore;
use basalt_page::header;
use basalt_page::index_page::{PAGE_CAPACITY, PAGE_FLAG_CLUSTERED};
use basalt_page::overflow::pages_needed;
use basalt_page::rec::RecordRef;

use crate::error::{BTreeError, Result};
use crate::tree::BTree;

/// What [`BTree::validate`] counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TreeStats {
    /// Levels (1 when the root is a leaf).
    pub height: usize,
    /// Pages per level, leaves first.
    pub pages_per_level: Vec<u64>,
    /// Leaf records (delete-marked included).
    pub records: u64,
    /// Delete-marked leaf records.
    pub delete_marked: u64,
    /// Node-pointer records.
    pub node_pointers: u64,
    /// Bytes of records and slots on leaf pages.
    pub leaf_bytes_used: u64,
    /// Overflow pages reachable from leaf records.
    pub overflow_pages: u64,
    /// Externally stored field values.
    pub external_fields: u64,
}

impl TreeStats {
    /// Leaf pages.
    pub fn leaf_pages(&self) -> u64 {
        self.pages_per_level.first().copied().unwrap_or(0)
    }

    /// Average fill of the leaves: used bytes over the capacity of the
    /// leaf pages (0.0 for an empty tree).
    pub fn leaf_fill(&self) -> f64 {
        let leaves = self.leaf_pages();
        if leaves == 0 {
            return 0.0;
        }
        self.leaf_bytes_used as f64 / (leaves as f64 * PAGE_CAPACITY as f64)
    }

    /// All pages of the tree (index and overflow).
    pub fn total_pages(&self) -> u64 {
        self.pages_per_level.iter().sum::<u64>() + self.overflow_pages
    }
}

/// State of one validation walk.
struct Walk<'t, 's> {
    tree: &'t BTree,
    store: &'s PageStore,
    stats: TreeStats,
    seen: HashSet<PageNo>,
    /// Last leaf visited: its page number, next link, last record.
    prev_leaf: Option<(PageNo, PageNo, Vec<u8>)>,
}

impl BTree {
    /// Checks every invariant of the tree (see the module doc) and returns
    /// its statistics; the first violation is reported as
    /// [`BTreeError::Corruption`] naming the page.
    pub fn validate(&self, store: &PageStore) -> Result<TreeStats> {
        let root = store.pool.get(self.root_id(), LatchMode::Shared)?;
        let level = self.view(root.data(), self.root_id())?.level();
        let height = usize::from(level) + 1;
        let mut walk = Walk {
            tree: self,
            store,
            stats: TreeStats {
                height,
                pages_per_level: vec![0; height],
                ..TreeStats::default()
            },
            seen: HashSet::new(),
            prev_leaf: None,
        };
        walk.visit(&root, Some(level), None, None)?;
        if let Some((no, next, _)) = &walk.prev_leaf {
            if *next != FIL_NULL {
                return Err(BTreeError::corrupt(
                    self.id(*no),
                    format!("last leaf links to page {next}"),
                ));
            }
        }
        Ok(walk.stats)
    }
}

impl Walk<'_, '_> {
    fn visit(
        &mut self,
        g: &PageGuard<'_>,
        level: Option<u16>,
        lo: Option<&[u8]>,
        hi: Option<&[u8]>,
    ) -> Result<()> {
        let tree = self.tree;
        let id = g.page_id();
        let bad = |reason: String| BTreeError::corrupt(id, reason);
        if !self.seen.insert(id.page_no) {
            return Err(bad("page reachable twice".into()));
        }
        let page = tree.view_at(g.data(), id, level)?;
        page.check().map_err(|e| BTreeError::page(id, e))?;
        if (page.flags() & PAGE_FLAG_CLUSTERED != 0) != tree.is_clustered() {
            return Err(bad(format!(
                "flags {:#04x} do not match the index kind",
                page.flags()
            )));
        }
        let is_root = id == tree.root_id();
        let n = page.n_recs();
        if n == 0 && !is_root {
            return Err(bad("empty page that is not the root".into()));
        }
        if n == 0 && !page.is_leaf() {
            return Err(bad("node page without node pointers".into()));
        }
        self.stats.pages_per_level[usize::from(page.level())] += 1;
        let lo_rec = lo.map(|b| decode(tree, b, id)).transpose()?;
        let hi_rec = hi.map(|b| decode(tree, b, id)).transpose()?;
        let mut prev: Option<RecordRef<'_>> = None;
        for i in 0..n {
            let rec = tree.rec(&page, i, id)?;
            if rec.is_node_ptr() == page.is_leaf() {
                return Err(bad(format!("slot {i} holds the wrong kind of record")));
            }
            if rec.is_min_rec() != (i == 0 && !page.is_leaf()) {
                return Err(bad(format!(
                    "slot {i}: the min-record flag belongs to slot 0 of node pages only"
                )));
            }
            if let Some(p) = &prev {
                if p.key_cmp(&rec) != Ordering::Less {
                    return Err(bad(format!("slots {} and {i} are out of order", i - 1)));
                }
            }
            // Slot 0 of a node page is the min-record (crate doc).
            if page.is_leaf() || i > 0 {
                if lo_rec
                    .as_ref()
                    .is_some_and(|lo| rec.key_cmp(lo) == Ordering::Less)
                {
                    return Err(bad(format!(
                        "slot {i} is below the range its parent assigns"
                    )));
                }
                if hi_rec
                    .as_ref()
                    .is_some_and(|hi| rec.key_cmp(hi) != Ordering::Less)
                {
                    return Err(bad(format!(
                        "slot {i} is at or above the range its parent assigns"
                    )));
                }
            }
            prev = Some(rec);
        }
        let (prev_link, next_link) = (header::prev_page(g.data()), header::next_page(g.data()));
        if page.is_leaf() {
            self.check_leaf(&page, id, prev_link, next_link)?;
            return Ok(());
        }
        if prev_link != FIL_NULL || next_link != FIL_NULL {
            return Err(bad("node page with sibling links".into()));
        }
        self.stats.node_pointers += n as u64;
        for i in 0..n {
            let child_no = tree.child_at(&page, i, id)?;
            let child_lo = if i == 0 {
                lo
            } else {
                Some(page.rec(i).map_err(|e| BTreeError::page(id, e))?)
            };
            let child_hi = if i + 1 < n {
                Some(page.rec(i + 1).map_err(|e| BTreeError::page(id, e))?)
            } else {
                hi
            };
            if child_no == id.page_no || child_no == 0 {
                return Err(bad(format!("slot {i} points to page {child_no}")));
            }
            let cg = self.store.pool.get(tree.id(child_no), LatchMode::Shared)?;
            self.visit(&cg, Some(page.level() - 1), child_lo, child_hi)?;
        }
        Ok(())
    }

    fn check_leaf(
        &mut self,
        page: &basalt_page::IndexPage<'_>,
        id: PageId,
        prev_link: PageNo,
        next_link: PageNo,
    ) -> Result<()> {
        let tree = self.tree;
        let bad = |reason: String| BTreeError::corrupt(id, reason);
        match &self.prev_leaf {
            None if prev_link != FIL_NULL => {
                return Err(bad(format!("first leaf links back to page {prev_link}")));
            }
            Some((no, next, last)) => {
                if *no != prev_link || *next != id.page_no {
                    return Err(bad(format!(
                        "leaf links disagree: previous leaf {no} links to {next}, this one back to {prev_link}"
                    )));
                }
                if page.n_recs() > 0 {
                    let last = decode(tree, last, id)?;
                    if last.key_cmp(&tree.rec(page, 0, id)?) != Ordering::Less {
                        return Err(bad("first record not above the previous leaf's last".into()));
                    }
                }
            }
            None => {}
        }
        let n = page.n_recs();
        self.stats.records += n as u64;
        self.stats.leaf_bytes_used += page.used_bytes() as u64;
        for i in 0..n {
            let rec = tree.rec(page, i, id)?;
            if rec.is_delete_marked() {
                self.stats.delete_marked += 1;
            }
            for f in 0..rec.n_fields() {
                if let Some(ext) = rec.extern_ref(f) {
                    self.check_chain(&ext, id)?;
                }
            }
        }
        let last = if n > 0 {
            page.rec(n - 1)
                .map_err(|e| BTreeError::page(id, e))?
                .to_vec()
        } else {
            Vec::new()
        };
        self.prev_leaf = Some((id.page_no, next_link, last));
        Ok(())
    }

    fn check_chain(&mut self, ext: &basalt_page::rec::ExternRef, owner: PageId) -> Result<()> {
        let mut twice = None;
        let seen = &mut self.seen;
        let pages = self.tree.walk_chain(self.store, ext, owner, |no, _| {
            if !seen.insert(no) && twice.is_none() {
                twice = Some(no);
            }
        })?;
        if let Some(no) = twice {
            return Err(BTreeError::corrupt(
                self.tree.id(no),
                "overflow page reachable twice",
            ));
        }
        if pages != pages_needed(ext.total_len) {
            return Err(BTreeError::corrupt(
                owner,
                "overflow chain has the wrong number of pages",
            ));
        }
        self.stats.overflow_pages += pages;
        self.stats.external_fields += 1;
        Ok(())
    }
}

fn decode<'a>(tree: &'a BTree, bytes: &'a [u8], id: PageId) -> Result<RecordRef<'a>> {
    RecordRef::new(&tree.layout, bytes).map_err(|e| BTreeError::page(id, e))
}
