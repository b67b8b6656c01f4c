//! Index pages: the slotted page every B+tree node lives in.
//!
//! ```text
//!  index header (at FIL_PAGE_DATA = 38)
//!   +0  level        u16   0 = leaf
//!   +2  n_recs       u16   records = slots
//!   +4  heap_top     u16   first byte after the record heap
//!   +6  garbage      u16   bytes of dead records below heap_top
//!   +8  index_id     u64
//!  +16  max_trx_id   u64   newest trx that changed a secondary-index page
//!  +24  flags        u8    0x01 clustered; other bits owned by the B+tree
//!  +25  reserved     7 B   zero
//!  +32  record heap starts (HEAP_START = 70)
//! ```
//!
//! Records are appended to the heap in arrival order; the slot directory at
//! the end of the page keeps one u16 offset per record **in key order**, so
//! a key search is a binary search over slots and record bytes never move
//! when order changes. Deleted or shrunk records leave garbage, counted in
//! the header and reclaimed by [`compact`], which rewrites the heap in slot
//! order; [`insert`], [`insert_many`] and [`replace`] compact on their own
//! when the free gap is too small but garbage would make room.
//!
//! Invariants (checked by [`check`]):
//! * `HEAP_START <= heap_top <= DIR_END - 2·n_recs`;
//! * every slot points at a record inside `[HEAP_START, heap_top)` whose
//!   length (from its header) is `3..=MAX_REC_LEN`, with no two records
//!   overlapping;
//! * live record bytes + garbage == `heap_top - HEAP_START`;
//! * leaf pages hold leaf records, other levels node pointers; only node
//!   pointers carry the min-record flag.
//!
//! **Validation contract.** The buffer pool runs [`check`] when an index
//! page enters memory (after its checksum verified). Independently of that,
//! every function here validates the index header on entry and
//! bounds-checks every slot and record it touches, so a damaged page yields
//! [`PageError::Corruption`](crate::PageError::Corruption), never a panic
//! and never an out-of-bounds write. Mutations validate before writing: on
//! `Err` the page is unchanged (the B+tree relies on this for
//! [`PageError::NoSpace`](crate::PageError::NoSpace): it splits and retries).
//!
//! **Determinism.** Each mutation is a pure function of (page image,
//! arguments). Inside the server they run only through
//! [`RedoRecord::apply`](crate::redo::RedoRecord::apply), under the page's
//! exclusive latch, so recovery repeats them byte for byte.

mod format;
mod ops;
mod search;

pub use format::{
    check, IndexPage, IndexPageIter, DIR_END, HEAP_START, IH_FLAGS, IH_GARBAGE, IH_HEAP_TOP,
    IH_INDEX_ID, IH_LEVEL, IH_MAX_TRX_ID, IH_N_RECS, INDEX_HEADER_LEN, MAX_RECS, MAX_REC_LEN,
    PAGE_CAPACITY, PAGE_FLAG_CLUSTERED, SLOT_SIZE,
};
pub use ops::{
    compact, delete, delete_range, init, insert, insert_many, replace, set_delete_mark,
    set_max_trx_id,
};
pub use search::SearchMode;

#[cfg(test)]
mod tests;
