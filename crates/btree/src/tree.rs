//! The tree handle: identity, layout, kind, counters, and the page checks
//! every operation runs on the pages it visits.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use basalt_common::{IndexId, PageId, PageNo, SpaceId};
use basalt_mtr::{Mtr, PageRef};
use basalt_page::index_page::{IndexPage, PAGE_CAPACITY, PAGE_FLAG_CLUSTERED, SLOT_SIZE};
use basalt_page::rec::{
    FieldKind, RecordLayout, RecordRef, CHILD_NO_LEN, REC_HEADER_LEN, SHORT_VAR_MAX,
};
use basalt_page::RedoRecord;

use crate::error::{BTreeError, Result};

/// Longest node-pointer record the tree accepts, so that every node page
/// holds at least four of them (MySQL's "key too long" limit plays the same
/// role). Records whose key fields would exceed it are refused with
/// [`BTreeError::KeyTooLong`].
pub const MAX_NODE_PTR_LEN: usize = PAGE_CAPACITY / 4 - SLOT_SIZE;

/// A non-root page whose records and slots take fewer bytes than this is
/// *underfull*: after a removal leaves it so, the tree tries to merge it
/// with a sibling under the same parent (a quarter of the page).
pub const MERGE_THRESHOLD: usize = PAGE_CAPACITY / 4;

/// Two siblings merge only if their records and slots together take at
/// most this many bytes (three quarters of a page), so a merged page has
/// room left and a merge is not undone by the next insert.
pub const MERGE_MAX_FILL: usize = PAGE_CAPACITY * 3 / 4;

/// What an index holds and which uniqueness it enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexKind {
    /// The clustered index: the key is the primary key (unique), leaf
    /// records carry `DB_TRX_ID`, `DB_ROLL_PTR` and every column.
    Clustered,
    /// A secondary index. Its layout's key is the indexed columns followed
    /// by the primary-key columns, so every record has a distinct position
    /// even when indexed values repeat.
    Secondary {
        /// `Some(n)` for a UNIQUE index: no two live (not delete-marked)
        /// records may agree on the first `n` fields (the indexed columns)
        /// unless one of those fields is NULL, as in MySQL. `None` for a
        /// non-unique index: only the whole key must be distinct.
        unique: Option<usize>,
    },
}

/// Event counters of one tree (shared by every clone of its handle).
#[derive(Debug, Default)]
pub struct TreeCounters {
    pub(crate) splits: AtomicU64,
    pub(crate) merges: AtomicU64,
    pub(crate) page_removals: AtomicU64,
    pub(crate) root_raises: AtomicU64,
    pub(crate) root_lowers: AtomicU64,
    pub(crate) pessimistic: AtomicU64,
}

impl TreeCounters {
    pub(crate) fn bump(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// Current values.
    pub fn snapshot(&self) -> CounterSnapshot {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        CounterSnapshot {
            splits: g(&self.splits),
            merges: g(&self.merges),
            page_removals: g(&self.page_removals),
            root_raises: g(&self.root_raises),
            root_lowers: g(&self.root_lowers),
            pessimistic: g(&self.pessimistic),
        }
    }
}

/// A copy of a tree's [`TreeCounters`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CounterSnapshot {
    /// Page splits (leaf and node levels, root raises included).
    pub splits: u64,
    /// Sibling merges (leaf and node levels).
    pub merges: u64,
    /// Empty pages unlinked and freed.
    pub page_removals: u64,
    /// Times the root split and the tree grew a level.
    pub root_raises: u64,
    /// Times the root absorbed its only child and the tree lost a level.
    pub root_lowers: u64,
    /// Write operations that restarted on the pessimistic path.
    pub pessimistic: u64,
}

/// Handle to one B+tree: where its root is and how its records look.
///
/// The handle is cheap to clone and holds no latch; the catalog stores
/// `(space, root, index_id)` once, because the root page number never
/// changes for the life of the tree (a root split moves the root's records
/// down, a root merge pulls the only child's records up).
#[derive(Clone, Debug)]
pub struct BTree {
    pub(crate) space: SpaceId,
    pub(crate) root: PageNo,
    pub(crate) index_id: IndexId,
    pub(crate) layout: Arc<RecordLayout>,
    pub(crate) kind: IndexKind,
    /// Upper bound of a node pointer of this index (for "safe node" tests).
    pub(crate) max_ptr_len: usize,
    pub(crate) counters: Arc<TreeCounters>,
}

impl BTree {
    /// A handle on an existing tree (as the catalog recorded it). Checks
    /// that `kind` and `layout` agree; touches no page.
    pub fn open(
        space: SpaceId,
        root: PageNo,
        index_id: IndexId,
        layout: Arc<RecordLayout>,
        kind: IndexKind,
    ) -> Result<BTree> {
        match kind {
            IndexKind::Clustered if !layout.is_clustered() => {
                return Err(BTreeError::BadDefinition(
                    "clustered index with a secondary record layout".into(),
                ))
            }
            IndexKind::Secondary { .. } if layout.is_clustered() => {
                return Err(BTreeError::BadDefinition(
                    "secondary index with a clustered record layout".into(),
                ))
            }
            IndexKind::Secondary { unique: Some(n) } if n == 0 || n > layout.n_key() => {
                return Err(BTreeError::BadDefinition(format!(
                    "unique prefix of {n} fields in a key of {}",
                    layout.n_key()
                )))
            }
            _ => {}
        }
        let max_ptr_len = max_node_ptr_len(&layout);
        Ok(BTree {
            space,
            root,
            index_id,
            layout,
            kind,
            max_ptr_len,
            counters: Arc::new(TreeCounters::default()),
        })
    }

    /// Creates an empty tree: allocates its root in `space` and formats it
    /// as an empty leaf. The caller commits `mtr`.
    pub fn create(
        mtr: &mut Mtr<'_>,
        space: SpaceId,
        index_id: IndexId,
        layout: Arc<RecordLayout>,
        kind: IndexKind,
    ) -> Result<BTree> {
        let mut tree = BTree::open(space, 0, index_id, layout, kind)?;
        let r = mtr.alloc_page(space)?;
        let id = mtr.page_id(r);
        tree.root = id.page_no;
        tree.apply(
            mtr,
            r,
            &RedoRecord::InitIndex {
                level: 0,
                index_id,
                flags: tree.flags(),
            },
        )?;
        Ok(tree)
    }

    /// Tablespace of the tree (and of its overflow pages).
    pub fn space(&self) -> SpaceId {
        self.space
    }

    /// Page number of the root; fixed for the life of the tree.
    pub fn root(&self) -> PageNo {
        self.root
    }

    /// Index id stamped on every page.
    pub fn index_id(&self) -> IndexId {
        self.index_id
    }

    /// Record layout.
    pub fn layout(&self) -> &Arc<RecordLayout> {
        &self.layout
    }

    /// Clustered or secondary, and the uniqueness rule.
    pub fn kind(&self) -> IndexKind {
        self.kind
    }

    /// Event counters (splits, merges, ...), shared by clones of the handle.
    pub fn counters(&self) -> CounterSnapshot {
        self.counters.snapshot()
    }

    pub(crate) fn is_clustered(&self) -> bool {
        matches!(self.kind, IndexKind::Clustered)
    }

    /// Index-header flags of this tree's pages.
    pub(crate) fn flags(&self) -> u8 {
        if self.is_clustered() {
            PAGE_FLAG_CLUSTERED
        } else {
            0
        }
    }

    #[inline]
    pub(crate) fn id(&self, page_no: PageNo) -> PageId {
        PageId::new(self.space, page_no)
    }

    #[inline]
    pub(crate) fn root_id(&self) -> PageId {
        self.id(self.root)
    }

    pub(crate) fn bad_value(&self, reason: impl Into<String>) -> BTreeError {
        BTreeError::BadValue {
            index_id: self.index_id,
            reason: reason.into(),
        }
    }

    /// Wraps the bytes of page `id` as an index page of this tree: page
    /// type, index header and index id are checked (O(1)).
    // PERF: runs on every page of every descent; no allocation on success.
    #[inline]
    pub(crate) fn view<'p>(&self, bytes: &'p [u8], id: PageId) -> Result<IndexPage<'p>> {
        let page = IndexPage::new(bytes).map_err(|e| BTreeError::page(id, e))?;
        if page.index_id() != self.index_id {
            return Err(BTreeError::corrupt(
                id,
                format!(
                    "page belongs to index {}, expected {}",
                    page.index_id().0,
                    self.index_id.0
                ),
            ));
        }
        Ok(page)
    }

    /// As [`BTree::view`], also checking the level a parent promised.
    #[inline]
    pub(crate) fn view_at<'p>(
        &self,
        bytes: &'p [u8],
        id: PageId,
        level: Option<u16>,
    ) -> Result<IndexPage<'p>> {
        let page = self.view(bytes, id)?;
        if let Some(l) = level {
            if page.level() != l {
                return Err(BTreeError::corrupt(
                    id,
                    format!("page has level {}, its parent expects {l}", page.level()),
                ));
            }
        }
        Ok(page)
    }

    /// Decodes the record in `slot` of `page` (page `id`).
    #[inline]
    pub(crate) fn rec<'p>(
        &'p self,
        page: &IndexPage<'p>,
        slot: usize,
        id: PageId,
    ) -> Result<RecordRef<'p>> {
        let bytes = page.rec(slot).map_err(|e| BTreeError::page(id, e))?;
        RecordRef::new(&self.layout, bytes).map_err(|e| BTreeError::page(id, e))
    }

    /// Child page number of node pointer `slot`.
    pub(crate) fn child_at(&self, page: &IndexPage<'_>, slot: usize, id: PageId) -> Result<PageNo> {
        let rec = self.rec(page, slot, id)?;
        rec.child_page_no()
            .ok_or_else(|| BTreeError::corrupt(id, format!("slot {slot} is not a node pointer")))
    }

    /// Applies `rec` to the X-latched page `r`, mapping failures.
    #[inline]
    pub(crate) fn apply(&self, mtr: &mut Mtr<'_>, r: PageRef, rec: &RedoRecord<'_>) -> Result<()> {
        mtr.apply(r, rec)
            .map_err(|e| BTreeError::apply(mtr.page_id(r), e))
    }
}

/// Releases `r` unless this mini-transaction changed it (then it must stay
/// latched until commit).
#[inline]
pub(crate) fn release(mtr: &mut Mtr<'_>, r: PageRef) {
    if !mtr.is_modified(r) {
        mtr.release(r);
    }
}

/// Upper bound of the node pointers of `layout`, capped at
/// [`MAX_NODE_PTR_LEN`] (longer ones are refused at insert time).
fn max_node_ptr_len(layout: &RecordLayout) -> usize {
    let mut nullable = 0usize;
    let mut len = REC_HEADER_LEN + CHILD_NO_LEN;
    for i in 0..layout.n_key() {
        let f = layout.field(i);
        if f.nullable {
            nullable += 1;
        }
        len += match f.kind {
            FieldKind::Fixed(n) => usize::from(n),
            FieldKind::Var { max_len } => {
                let entry = if max_len > SHORT_VAR_MAX { 2 } else { 1 };
                entry + usize::try_from(max_len).unwrap_or(usize::MAX / 4)
            }
        };
        if len > MAX_NODE_PTR_LEN {
            return MAX_NODE_PTR_LEN;
        }
    }
    (len + nullable.div_ceil(8)).min(MAX_NODE_PTR_LEN)
}

#[cfg(test)]
mod tests {
    use basalt_page::rec::FieldDef;

    use super::*;

    #[test]
    fn node_pointer_bound_covers_the_longest_key() {
        let layout = RecordLayout::new(
            vec![
                FieldDef::fixed(8),
                FieldDef::var(300).nullable(),
                FieldDef::var(10_000),
            ],
            2,
            false,
        )
        .unwrap();
        let bound = max_node_ptr_len(&layout);
        let long = vec![7u8; 300];
        let mut out = Vec::new();
        let len = layout
            .encode_node_ptr(&[Some(&[1u8; 8][..]), Some(&long)], 5, false, &mut out)
            .unwrap();
        assert_eq!(
            bound, len,
            "the bound is the encoded length of the longest key"
        );
        let huge = RecordLayout::new(vec![FieldDef::var(60_000)], 1, false).unwrap();
        assert_eq!(max_node_ptr_len(&huge), MAX_NODE_PTR_LEN);
    }
}
