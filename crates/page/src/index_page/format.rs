//! Index page geometry, header fields and the read-only [`IndexPage`] view.

use basalt_common::{IndexId, PageId, TrxId};

use crate::error::{check_page_len, corrupt, PageError, Result};
use crate::header::{self, read_u16, read_u64, PageType, FIL_PAGE_DATA, FIL_PAGE_TRAILER};
use crate::rec::info::{read_rec_header, INFO_MIN_REC, INFO_NODE_PTR, REC_HEADER_LEN};

/// Offset of the level field (u16, 0 = leaf).
pub const IH_LEVEL: usize = FIL_PAGE_DATA;
/// Offset of the record count (u16; equals the number of slots).
pub const IH_N_RECS: usize = FIL_PAGE_DATA + 2;
/// Offset of the heap top (u16): first byte after the record heap.
pub const IH_HEAP_TOP: usize = FIL_PAGE_DATA + 4;
/// Offset of the garbage counter (u16): bytes of dead records in the heap.
pub const IH_GARBAGE: usize = FIL_PAGE_DATA + 6;
/// Offset of the index id (u64).
pub const IH_INDEX_ID: usize = FIL_PAGE_DATA + 8;
/// Offset of the max trx id (u64), maintained on secondary-index pages.
pub const IH_MAX_TRX_ID: usize = FIL_PAGE_DATA + 16;
/// Offset of the flags byte ([`PAGE_FLAG_CLUSTERED`], others owned by the B+tree).
pub const IH_FLAGS: usize = FIL_PAGE_DATA + 24;
/// Bytes in the index header (the tail after the flags byte is reserved, zero).
pub const INDEX_HEADER_LEN: usize = 32;
/// First byte of the record heap.
pub const HEAP_START: usize = FIL_PAGE_DATA + INDEX_HEADER_LEN;
/// End of the slot directory (it grows downward from here).
pub const DIR_END: usize = FIL_PAGE_TRAILER;
/// Bytes per slot.
pub const SLOT_SIZE: usize = 2;
/// Bytes available to records and slots on an empty page.
pub const PAGE_CAPACITY: usize = DIR_END - HEAP_START;
/// Largest record an index page accepts: two such records and their slots
/// always fit on one page, so a split can always make progress.
pub const MAX_REC_LEN: usize = PAGE_CAPACITY / 2 - SLOT_SIZE;
/// Most records a page can hold (all of minimal length).
pub const MAX_RECS: usize = PAGE_CAPACITY / (REC_HEADER_LEN + SLOT_SIZE);
/// Flags bit: the page belongs to a clustered index.
pub const PAGE_FLAG_CLUSTERED: u8 = 0x01;

/// Address of slot `i` (slot 0 sits just below the trailer).
#[inline]
pub(crate) const fn slot_addr(i: usize) -> usize {
    DIR_END - SLOT_SIZE * (i + 1)
}

/// The index-header fields every operation needs, validated against each
/// other and the page geometry (O(1); see [`IndexPage::new`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hdr {
    pub(crate) level: u16,
    pub(crate) n_recs: usize,
    pub(crate) heap_top: usize,
    pub(crate) garbage: usize,
}

impl Hdr {
    /// Reads and validates the header of an index page.
    pub(crate) fn read(page: &[u8]) -> Result<Hdr> {
        check_page_len(page)?;
        if header::page_type(page) != Some(PageType::Index) {
            return Err(corrupt(
                page,
                format!(
                    "page type {} is not an index page",
                    header::page_type_raw(page)
                ),
            ));
        }
        let hdr = Hdr {
            level: read_u16(page, IH_LEVEL),
            n_recs: usize::from(read_u16(page, IH_N_RECS)),
            heap_top: usize::from(read_u16(page, IH_HEAP_TOP)),
            garbage: usize::from(read_u16(page, IH_GARBAGE)),
        };
        if hdr.n_recs > MAX_RECS {
            return Err(corrupt(
                page,
                format!("record count {} exceeds {MAX_RECS}", hdr.n_recs),
            ));
        }
        if hdr.heap_top < HEAP_START || hdr.heap_top > hdr.dir_start() {
            return Err(corrupt(
                page,
                format!(
                    "heap top {} outside [{HEAP_START}, {}] ({} records)",
                    hdr.heap_top,
                    hdr.dir_start(),
                    hdr.n_recs
                ),
            ));
        }
        if hdr.garbage > hdr.heap_top - HEAP_START {
            return Err(corrupt(
                page,
                format!(
                    "garbage {} exceeds heap size {}",
                    hdr.garbage,
                    hdr.heap_top - HEAP_START
                ),
            ));
        }
        Ok(hdr)
    }

    /// First byte of the slot directory.
    #[inline]
    pub(crate) fn dir_start(&self) -> usize {
        DIR_END - SLOT_SIZE * self.n_recs
    }

    /// Free bytes between heap top and slot directory.
    #[inline]
    pub(crate) fn gap(&self) -> usize {
        self.dir_start() - self.heap_top
    }

    /// Bytes of live records (heap minus garbage).
    #[inline]
    pub(crate) fn live_bytes(&self) -> usize {
        self.heap_top - HEAP_START - self.garbage
    }

    /// `(offset, length)` of the record in slot `i`, bounds-checked against
    /// the heap. `i` must be `< n_recs` (checked).
    #[inline]
    pub(crate) fn slot_rec(&self, page: &[u8], i: usize) -> Result<(usize, usize)> {
        if i >= self.n_recs {
            return Err(PageError::SlotOutOfRange {
                slot: i,
                n_recs: self.n_recs,
            });
        }
        let off = usize::from(read_u16(page, slot_addr(i)));
        if off < HEAP_START || off + REC_HEADER_LEN > self.heap_top {
            return Err(corrupt(
                page,
                format!("slot {i} points to {off}, outside the heap"),
            ));
        }
        // Invariant: off + REC_HEADER_LEN <= heap_top <= PAGE_SIZE, so the
        // header bytes exist.
        let (_, len) = read_rec_header(&page[off..]).expect("bounds checked above");
        if len < REC_HEADER_LEN || off + len > self.heap_top || len > MAX_REC_LEN {
            return Err(corrupt(
                page,
                format!(
                    "record in slot {i} at {off} has bad length {len} (heap top {})",
                    self.heap_top
                ),
            ));
        }
        Ok((off, len))
    }

    /// Fails unless the info bits of a record suit a page of this level:
    /// node pointers on non-leaf levels only, leaf records on level 0 only,
    /// the min-record flag on node pointers only.
    pub(crate) fn check_kind(&self, info: u8) -> std::result::Result<(), &'static str> {
        let node_ptr = info & INFO_NODE_PTR != 0;
        if node_ptr != (self.level > 0) {
            return Err(if node_ptr {
                "node-pointer record on a leaf page"
            } else {
                "leaf record on a non-leaf page"
            });
        }
        if info & INFO_MIN_REC != 0 && !node_ptr {
            return Err("min-record flag on a leaf record");
        }
        Ok(())
    }
}

/// Read-only view of an index page.
///
/// ```text
///   0 ┌──────────────────────────────┐
///     │ file header (FIL_PAGE_DATA)  │
///  38 ├──────────────────────────────┤
///     │ index header (32 bytes)      │
///  70 ├──────────────────────────────┤ HEAP_START
///     │ record heap, grows upward →  │  records in insertion order,
///     │  (live records + garbage)    │  dead ones counted as garbage
///     ├──────────────────────────────┤ heap top
///     │ free gap                     │
///     ├──────────────────────────────┤ dir start = DIR_END - 2·n_recs
///     │ slot n-1 … slot 1, slot 0    │  u16 record offsets, key order,
///     │ ← directory grows downward   │  slot 0 nearest the trailer
/// 16376├─────────────────────────────┤ DIR_END = FIL_PAGE_TRAILER
///     │ trailer (8 bytes)            │
///     └──────────────────────────────┘
/// ```
///
/// [`IndexPage::new`] validates the header in O(1); every accessor then
/// bounds-checks what it touches, so a corrupt page yields
/// [`PageError::Corruption`], never a panic. [`IndexPage::check`] validates
/// the whole page (O(n log n)).
#[derive(Clone, Copy, Debug)]
pub struct IndexPage<'a> {
    page: &'a [u8],
    hdr: Hdr,
}

impl<'a> IndexPage<'a> {
    /// Wraps a page image after validating its type and index header.
    pub fn new(page: &'a [u8]) -> Result<IndexPage<'a>> {
        let hdr = Hdr::read(page)?;
        Ok(IndexPage { page, hdr })
    }

    /// The page image.
    pub fn bytes(&self) -> &'a [u8] {
        self.page
    }

    /// Page id recorded in the file header.
    pub fn page_id(&self) -> PageId {
        header::page_id(self.page)
    }

    /// B+tree level: 0 for leaves.
    pub fn level(&self) -> u16 {
        self.hdr.level
    }

    /// True on leaf pages (level 0).
    pub fn is_leaf(&self) -> bool {
        self.hdr.level == 0
    }

    /// Number of records (= slots).
    pub fn n_recs(&self) -> usize {
        self.hdr.n_recs
    }

    /// First byte past the record heap.
    pub fn heap_top(&self) -> usize {
        self.hdr.heap_top
    }

    /// Bytes of dead records inside the heap, reclaimed by compaction.
    pub fn garbage(&self) -> usize {
        self.hdr.garbage
    }

    /// Index the page belongs to.
    pub fn index_id(&self) -> IndexId {
        IndexId(read_u64(self.page, IH_INDEX_ID))
    }

    /// Newest transaction that changed the page (kept on secondary-index pages).
    pub fn max_trx_id(&self) -> TrxId {
        TrxId(read_u64(self.page, IH_MAX_TRX_ID))
    }

    /// The flags byte ([`PAGE_FLAG_CLUSTERED`] and B+tree-owned bits).
    pub fn flags(&self) -> u8 {
        self.page[IH_FLAGS]
    }

    /// Contiguous free bytes between heap top and slot directory.
    pub fn contiguous_free(&self) -> usize {
        self.hdr.gap()
    }

    /// Bytes available for new records and their slots, after compaction.
    pub fn free_space(&self) -> usize {
        self.hdr.gap() + self.hdr.garbage
    }

    /// Bytes taken by live records and their slots; `used_bytes() +
    /// free_space() == PAGE_CAPACITY`. A page's records fit into another page
    /// iff `used_bytes() <= other.free_space()`.
    pub fn used_bytes(&self) -> usize {
        self.hdr.live_bytes() + SLOT_SIZE * self.hdr.n_recs
    }

    /// True if [`insert`](crate::index_page::insert) of a well-formed record of
    /// `len` bytes would succeed.
    pub fn would_fit(&self, len: usize) -> bool {
        (REC_HEADER_LEN..=MAX_REC_LEN).contains(&len) && len + SLOT_SIZE <= self.free_space()
    }

    /// True if [`replace`](crate::index_page::replace) of slot `slot` by a
    /// well-formed record of `new_len` bytes would succeed.
    pub fn would_fit_replace(&self, slot: usize, new_len: usize) -> Result<bool> {
        let (_, old_len) = self.hdr.slot_rec(self.page, slot)?;
        Ok((REC_HEADER_LEN..=MAX_REC_LEN).contains(&new_len)
            && new_len <= self.free_space() + old_len)
    }

    /// Byte offset of the record in slot `i`.
    pub fn slot_offset(&self, i: usize) -> Result<usize> {
        Ok(self.hdr.slot_rec(self.page, i)?.0)
    }

    /// Bytes of the record in slot `i` (fixed header included).
    // PERF: called O(log n) times per binary search; no allocation.
    #[inline]
    pub fn rec(&self, i: usize) -> Result<&'a [u8]> {
        let (off, len) = self.hdr.slot_rec(self.page, i)?;
        Ok(&self.page[off..off + len])
    }

    /// Records in slot (key) order.
    pub fn iter(&self) -> IndexPageIter<'a> {
        IndexPageIter {
            page: *self,
            next: 0,
        }
    }

    /// First slot for which `pred` is false, assuming `pred` is true for a
    /// prefix of the slots and false for the rest (like
    /// [`slice::partition_point`]). Returns `n_recs()` if `pred` holds for all.
    // PERF: binary search over the slot directory; no allocation.
    pub fn partition_point<F>(&self, mut pred: F) -> Result<usize>
    where
        F: FnMut(&'a [u8]) -> Result<bool>,
    {
        let (mut lo, mut hi) = (0, self.hdr.n_recs);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.rec(mid)?)? {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    /// Verifies the whole page: header bounds, every slot's record inside
    /// the heap with a sane length and kind, records not overlapping, and the
    /// exact accounting `live bytes + garbage == heap size`.
    ///
    /// The buffer pool runs this when an index page enters memory; pages
    /// changed only through this module keep passing it.
    pub fn check(&self) -> Result<()> {
        let n = self.hdr.n_recs;
        let mut extents: Vec<(usize, usize)> = Vec::with_capacity(n);
        let mut live = 0usize;
        for i in 0..n {
            let (off, len) = self.hdr.slot_rec(self.page, i)?;
            if let Err(why) = self.hdr.check_kind(self.page[off]) {
                return Err(corrupt(self.page, format!("slot {i}: {why}")));
            }
            live += len;
            extents.push((off, len));
        }
        if live + self.hdr.garbage != self.hdr.heap_top - HEAP_START {
            return Err(corrupt(
                self.page,
                format!(
                    "live bytes {live} + garbage {} != heap size {}",
                    self.hdr.garbage,
                    self.hdr.heap_top - HEAP_START
                ),
            ));
        }
        extents.sort_unstable();
        for w in extents.windows(2) {
            if w[0].0 + w[0].1 > w[1].0 {
                return Err(corrupt(
                    self.page,
                    format!("records at {} and {} overlap", w[0].0, w[1].0),
                ));
            }
        }
        Ok(())
    }
}

/// Iterator over the records of an [`IndexPage`] in slot order; yields an
/// error (and then stops) at the first damaged slot.
#[derive(Clone, Debug)]
pub struct IndexPageIter<'a> {
    page: IndexPage<'a>,
    next: usize,
}

impl<'a> Iterator for IndexPageIter<'a> {
    type Item = Result<&'a [u8]>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.page.n_recs() {
            return None;
        }
        let r = self.page.rec(self.next);
        self.next = if r.is_ok() { self.next + 1 } else { usize::MAX };
        Some(r)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.page.n_recs().saturating_sub(self.next);
        (0, Some(left))
    }
}

/// Full validation of an index page image; see [`IndexPage::check`].
pub fn check(page: &[u8]) -> Result<()> {
    IndexPage::new(page)?.check()
}
