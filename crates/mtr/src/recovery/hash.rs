//! The recovery hash: the redo records of complete mini-transaction groups,
//! indexed by page, with their bytes kept in one arena.
//!
//! ```text
//!  pages: PageId -> slot p ──▶ slots[p] = PageSlot { id, live_from, starts_with_init }
//!
//!  entries (segments, in LSN order):
//!   [RecEntry { at, len, end_lsn, page: p }] [RecEntry { .., page: q }] ...
//!                 │
//!  arena (blocks):▼
//!   [ type | space | page | body ][ type | space | page | body ] ...
//!
//!  plan(), when the batch is applied: a counting sort by page
//!   BatchPlan.pages    [(PageId, start..end, starts_with_init)] in page order
//!   BatchPlan.entries  [page 1's records in LSN order][page 2's] ...
//! ```
//!
//! Nothing is allocated per record: a record costs its encoded bytes in the
//! arena plus one 24-byte entry; a page costs one map slot and one 24-byte
//! page slot. Segments (up to 2^20 entries) and blocks (up to 16 MiB) are
//! allocated whole, each at most an eighth of the memory budget, so growth
//! never copies what is already stored and [`RecoveryHash::memory`] is an
//! honest account of what the hash holds. The plan made to apply a batch
//! adds 24 bytes per live record while the batch is applied: a page's
//! records are then contiguous and are walked sequentially, instead of
//! following per-page links that jump across the whole batch (a cache miss
//! per record).
//!
//! An init record (`InitIndex`, `InitOverflow`, `InitPage`) or a full-page
//! image rewrites every logged byte of a page, so everything logged for the
//! page before it is dead: the page's live records restart at that record
//! and the page is marked `starts_with_init` (it need not be read from
//! disk). The superseded records stay in the arena until the batch is
//! cleared; the plan leaves them out.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use basalt_common::{Lsn, PageId};

/// Largest arena block. A record is at most a little over two pages, so
/// the smallest block (64 KiB) holds any record.
const MAX_ARENA_BLOCK: usize = 16 << 20;
const MIN_ARENA_BLOCK: usize = 64 << 10;
/// Largest entry segment (2^20 entries, 24 MiB) and smallest (2^10).
const MAX_SEGMENT_SHIFT: u32 = 20;
const MIN_SEGMENT_SHIFT: u32 = 10;

/// Approximate bytes one page costs in the map (key, value, control byte,
/// load factor).
const MAP_SLOT_BYTES: usize = 24;

/// Longest record the hash accepts (one smallest arena block); decoded
/// records are never longer than about two pages.
pub(crate) const MAX_RECORD_LEN: usize = MIN_ARENA_BLOCK;

/// Position of a record's bytes in the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ArenaPos(u64);

/// A point to truncate the arena back to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ArenaMark {
    block: usize,
    len: usize,
}

/// Append-only byte storage in fixed blocks.
#[derive(Debug)]
pub(crate) struct RedoArena {
    block_size: usize,
    blocks: Vec<Vec<u8>>,
}

impl Default for RedoArena {
    fn default() -> RedoArena {
        RedoArena::with_block_size(MAX_ARENA_BLOCK)
    }
}

impl RedoArena {
    /// An arena allocating `block_size` bytes at a time (clamped to
    /// 64 KiB..=16 MiB).
    pub(crate) fn with_block_size(block_size: usize) -> RedoArena {
        RedoArena {
            block_size: block_size.clamp(MIN_ARENA_BLOCK, MAX_ARENA_BLOCK),
            blocks: Vec::new(),
        }
    }

    /// Copies `bytes` (at most one block) into the arena.
    // PERF: one memcpy; a new block every block size of redo.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> ArenaPos {
        debug_assert!(bytes.len() <= self.block_size);
        let need_block = self
            .blocks
            .last()
            .is_none_or(|b| b.len() + bytes.len() > self.block_size);
        if need_block {
            self.blocks.push(Vec::with_capacity(self.block_size));
        }
        let block = self.blocks.len() - 1;
        let b = &mut self.blocks[block];
        let off = b.len();
        b.extend_from_slice(bytes);
        ArenaPos(((block as u64) << 32) | off as u64)
    }

    /// The `len` bytes stored at `pos`.
    pub(crate) fn get(&self, pos: ArenaPos, len: u32) -> &[u8] {
        let block = (pos.0 >> 32) as usize;
        let off = (pos.0 & 0xFFFF_FFFF) as usize;
        &self.blocks[block][off..off + len as usize]
    }

    /// The current end.
    pub(crate) fn mark(&self) -> ArenaMark {
        ArenaMark {
            block: self.blocks.len(),
            len: self.blocks.last().map_or(0, Vec::len),
        }
    }

    /// Forgets everything pushed after `mark`.
    pub(crate) fn truncate(&mut self, mark: ArenaMark) {
        if mark.block == 0 {
            self.blocks.clear();
            return;
        }
        self.blocks.truncate(mark.block);
        if let Some(last) = self.blocks.last_mut() {
            last.truncate(mark.len);
        }
    }

    /// Forgets everything.
    pub(crate) fn clear(&mut self) {
        self.blocks.clear();
    }

    /// Bytes allocated.
    pub(crate) fn reserved(&self) -> usize {
        self.blocks.len() * self.block_size
    }
}

/// One stored record: 24 bytes.
#[derive(Clone, Copy, Debug)]
struct RecEntry {
    at: ArenaPos,
    /// End LSN of the group the record belongs to: what the page LSN
    /// becomes once the record is applied.
    end_lsn: Lsn,
    len: u32,
    /// The page's index in `RecoveryHash::slots`.
    page: u32,
}

/// What the hash knows of one page.
#[derive(Clone, Copy, Debug)]
struct PageSlot {
    id: PageId,
    /// Index of the page's first live entry: its last init record, or its
    /// first record.
    live_from: u64,
    starts_with_init: bool,
}

/// Where a page's records are in a [`BatchPlan`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct PageRedo {
    start: usize,
    end: usize,
    /// The first record (re)initialises the whole page: no need to read it.
    pub(crate) starts_with_init: bool,
}

/// Multiply-rotate hasher for page ids (two `u32` writes): cheap, and the
/// multiplication spreads the page number into the high bits the map uses.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PageIdHasher(u64);

impl Hasher for PageIdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u32(u32::from(b));
        }
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0.rotate_left(26) ^ u64::from(n)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

type PageMap = HashMap<PageId, u32, BuildHasherDefault<PageIdHasher>>;

/// The per-page index of one recovery batch.
#[derive(Debug)]
pub(crate) struct RecoveryHash {
    pub(crate) arena: RedoArena,
    segment_shift: u32,
    segments: Vec<Vec<RecEntry>>,
    pages: PageMap,
    slots: Vec<PageSlot>,
    n_entries: u64,
}

impl RecoveryHash {
    /// An empty hash sized for a memory budget of `budget` bytes: arena
    /// blocks and entry segments are at most an eighth of it each, so the
    /// granularity of allocation never dwarfs the budget.
    pub(crate) fn with_budget(budget: usize) -> RecoveryHash {
        let eighth = budget / 8;
        let entries = (eighth / std::mem::size_of::<RecEntry>()).max(1);
        let segment_shift =
            (usize::BITS - 1 - entries.leading_zeros()).clamp(MIN_SEGMENT_SHIFT, MAX_SEGMENT_SHIFT);
        RecoveryHash {
            arena: RedoArena::with_block_size(eighth),
            segment_shift,
            segments: Vec::new(),
            pages: PageMap::default(),
            slots: Vec::new(),
            n_entries: 0,
        }
    }

    fn segment_len(&self) -> usize {
        1 << self.segment_shift
    }

    /// Adds the record stored at `at` (`len` bytes) for `page_id`, part of
    /// the group ending at `end_lsn`. Records of a page must be added in
    /// LSN order. `is_init` marks records that rewrite the whole page.
    // PERF: one map lookup and one entry store per record.
    pub(crate) fn add(
        &mut self,
        page_id: PageId,
        at: ArenaPos,
        len: u32,
        end_lsn: Lsn,
        is_init: bool,
    ) {
        let idx = self.n_entries;
        let next_slot = self.slots.len() as u32;
        let slot = *self.pages.entry(page_id).or_insert(next_slot);
        if slot == next_slot {
            self.slots.push(PageSlot {
                id: page_id,
                live_from: idx,
                starts_with_init: is_init,
            });
        } else if is_init {
            let s = &mut self.slots[slot as usize];
            s.live_from = idx;
            s.starts_with_init = true;
        }
        let seg_len = self.segment_len();
        if self.segments.last().is_none_or(|s| s.len() == seg_len) {
            self.segments.push(Vec::with_capacity(seg_len));
        }
        self.segments
            .last_mut()
            .expect("a segment with room was ensured above")
            .push(RecEntry {
                at,
                end_lsn,
                len,
                page: slot,
            });
        self.n_entries += 1;
    }

    /// Pages with records.
    pub(crate) fn n_pages(&self) -> usize {
        self.slots.len()
    }

    /// True when no page has records.
    pub(crate) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Bytes held: arena blocks, entry segments, the page map and slots.
    pub(crate) fn memory(&self) -> usize {
        self.arena.reserved()
            + self.segments.len() * self.segment_len() * std::mem::size_of::<RecEntry>()
            + self.pages.capacity() * MAP_SLOT_BYTES
            + self.slots.capacity() * std::mem::size_of::<PageSlot>()
    }

    /// Visits every entry with its index, in LSN order.
    fn for_each_entry(&self, mut f: impl FnMut(u64, &RecEntry)) {
        let mut i = 0u64;
        for seg in &self.segments {
            for e in seg {
                f(i, e);
                i += 1;
            }
        }
    }

    /// Orders the live records by page (page-id order: file order for the
    /// reads) and, within a page, by LSN: a counting sort in two
    /// sequential passes over the entries.
    pub(crate) fn plan(&self) -> BatchPlan<'_> {
        let slots = &self.slots;
        let live = |i: u64, e: &RecEntry| i >= slots[e.page as usize].live_from;
        let mut next = vec![0usize; slots.len()];
        self.for_each_entry(|i, e| {
            if live(i, e) {
                next[e.page as usize] += 1;
            }
        });
        let mut order: Vec<u32> = (0..slots.len() as u32).collect();
        order.sort_unstable_by_key(|&s| slots[s as usize].id);
        let mut pages = Vec::with_capacity(order.len());
        let mut pos = 0;
        for &s in &order {
            let n = next[s as usize];
            let slot = &slots[s as usize];
            pages.push((
                slot.id,
                PageRedo {
                    start: pos,
                    end: pos + n,
                    starts_with_init: slot.starts_with_init,
                },
            ));
            // From here on: where the slot's next record goes.
            next[s as usize] = pos;
            pos += n;
        }
        let blank = PlannedEntry {
            at: ArenaPos(0),
            end_lsn: Lsn::ZERO,
            len: 0,
        };
        let mut entries = vec![blank; pos];
        self.for_each_entry(|i, e| {
            if live(i, e) {
                let at = &mut next[e.page as usize];
                entries[*at] = PlannedEntry {
                    at: e.at,
                    end_lsn: e.end_lsn,
                    len: e.len,
                };
                *at += 1;
            }
        });
        BatchPlan {
            arena: &self.arena,
            pages,
            entries,
        }
    }

    /// Forgets every record and page (the arena too).
    pub(crate) fn clear(&mut self) {
        self.arena.clear();
        self.segments = Vec::new();
        self.pages = PageMap::default();
        self.slots = Vec::new();
        self.n_entries = 0;
    }
}

/// A record's place in a [`BatchPlan`].
#[derive(Clone, Copy, Debug)]
struct PlannedEntry {
    at: ArenaPos,
    end_lsn: Lsn,
    len: u32,
}

/// The live records of a batch, contiguous per page.
#[derive(Debug)]
pub(crate) struct BatchPlan<'a> {
    arena: &'a RedoArena,
    pages: Vec<(PageId, PageRedo)>,
    entries: Vec<PlannedEntry>,
}

impl<'a> BatchPlan<'a> {
    /// The pages with records, in page-id order.
    pub(crate) fn pages(&self) -> &[(PageId, PageRedo)] {
        &self.pages
    }

    /// The records of a page, oldest first: `(encoded bytes, group end LSN)`.
    pub(crate) fn records(&self, page: &PageRedo) -> impl Iterator<Item = (&'a [u8], Lsn)> + '_ {
        let arena = self.arena;
        self.entries[page.start..page.end]
            .iter()
            .map(move |e| (arena.get(e.at, e.len), e.end_lsn))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_common::SpaceId;

    fn id(p: u32) -> PageId {
        PageId::new(SpaceId(1), p)
    }

    fn collect(plan: &BatchPlan<'_>, page: &PageRedo) -> Vec<(Vec<u8>, u64)> {
        plan.records(page).map(|(b, l)| (b.to_vec(), l.0)).collect()
    }

    #[test]
    fn lists_keep_lsn_order_and_init_drops_older_records() {
        let mut h = RecoveryHash::with_budget(1 << 30);
        let add = |h: &mut RecoveryHash, page: u32, bytes: &[u8], lsn: u64, init: bool| {
            let at = h.arena.push(bytes);
            h.add(id(page), at, bytes.len() as u32, Lsn(lsn), init);
        };
        add(&mut h, 9, b"a", 10, false);
        add(&mut h, 2, b"bb", 10, true);
        add(&mut h, 9, b"ccc", 20, false);
        add(&mut h, 2, b"d", 30, false);
        add(&mut h, 9, b"INIT", 40, true);
        add(&mut h, 9, b"e", 50, false);
        let plan = h.plan();
        let pages = plan.pages();
        assert_eq!(
            pages.iter().map(|p| p.0).collect::<Vec<_>>(),
            vec![id(2), id(9)]
        );
        assert!(pages[0].1.starts_with_init);
        assert_eq!(
            collect(&plan, &pages[0].1),
            vec![(b"bb".to_vec(), 10), (b"d".to_vec(), 30)]
        );
        assert!(pages[1].1.starts_with_init);
        assert_eq!(
            collect(&plan, &pages[1].1),
            vec![(b"INIT".to_vec(), 40), (b"e".to_vec(), 50)]
        );
        drop(plan);
        assert!(h.memory() >= MAX_ARENA_BLOCK);
        h.clear();
        assert!(h.is_empty());
        assert_eq!(h.memory(), 0);
    }

    #[test]
    fn arena_truncates_back_to_a_mark() {
        let mut a = RedoArena::default();
        let p1 = a.push(b"keep");
        let m = a.mark();
        a.push(b"drop me");
        a.truncate(m);
        let p2 = a.push(b"next");
        assert_eq!(a.get(p1, 4), b"keep");
        assert_eq!(a.get(p2, 4), b"next");
        let mut empty = RedoArena::default();
        let m0 = empty.mark();
        empty.push(b"x");
        empty.truncate(m0);
        assert_eq!(empty.reserved(), 0);
    }

    #[test]
    fn many_records_cross_segment_and_block_boundaries() {
        // A small budget: 64 KiB blocks, 1024-entry segments.
        let mut h = RecoveryHash::with_budget(64 << 10);
        assert_eq!(h.segment_len(), 1 << MIN_SEGMENT_SHIFT);
        let n = 20 * h.segment_len() + 100;
        let rec = [7u8; 40];
        // Reference: each page's records in insertion (LSN) order.
        let mut want: Vec<Vec<(usize, u64)>> = vec![Vec::new(); 3];
        for i in 0..n {
            let page = (i * 7 % 3) as u32;
            let len = (i % 40) + 1;
            let at = h.arena.push(&rec[..len]);
            h.add(id(page), at, len as u32, Lsn(i as u64 + 1), false);
            want[page as usize].push((len, i as u64 + 1));
        }
        assert!(
            h.arena.reserved() > MIN_ARENA_BLOCK,
            "several blocks were used"
        );
        let plan = h.plan();
        for (page_id, p) in plan.pages() {
            let got: Vec<(usize, u64)> = plan.records(p).map(|(b, l)| (b.len(), l.0)).collect();
            assert_eq!(got, want[page_id.page_no as usize], "page {page_id}");
        }
    }
}
