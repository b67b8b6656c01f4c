//! Basalt's on-disk page format: what a 16 KiB page holds, how index
//! records are laid out, and the redo records that describe every change.
//!
//! # Boundaries
//!
//! This crate knows bytes, not files or threads: it depends only on
//! `basalt-common`, does no I/O, starts no threads and takes no latches.
//! Every function works on a page image (`&[u8]` / `&mut [u8]` of
//! [`PAGE_SIZE`](basalt_common::PAGE_SIZE)) that the caller has latched:
//!
//! * readers ([`index_page::IndexPage`], [`rec::RecordRef`],
//!   [`overflow::read_chunk`]) borrow the frame, so the borrow checker keeps
//!   them inside the caller's shared (or exclusive) page latch;
//! * writers take `&mut [u8]`, i.e. the exclusive latch, and in the server
//!   run only through [`redo::RedoRecord::apply`] inside a mini-transaction.
//!
//! There is no latch order here because nothing here latches.
//!
//! Who uses what:
//!
//! ```text
//!  buf    header: verify / stamp_checksum / page_lsn      (every page I/O)
//!         index_page::check                               (index page read)
//!  mtr    RedoRecord::apply + encode                      (runtime changes)
//!         RedoReader + RedoRecord::apply                  (crash recovery)
//!  btree  IndexPage (search, rec, free space), rec (RecordLayout, encode,
//!         RecordRef, compare), overflow (read), RedoRecord (build changes)
//! ```
//!
//! # Page anatomy
//!
//! ```text
//!  ┌─────────────────────────────┐ 0
//!  │ file header (38 B)          │ checksum, space, page no, prev, next,
//!  │                             │ page LSN, page type        (header)
//!  ├─────────────────────────────┤ 38 = FIL_PAGE_DATA
//!  │ body, by page type:         │
//!  │  Index     index_page       │ index header, record heap, slots
//!  │  Overflow  overflow         │ next page, length, data
//!  │  others    owned by callers │ written with WriteBytes records
//!  ├─────────────────────────────┤ 16376 = FIL_PAGE_TRAILER
//!  │ trailer (8 B)               │ checksum copy, low 32 bits of LSN
//!  └─────────────────────────────┘ 16384
//! ```
//!
//! Index pages ([`index_page`]) are slotted pages: records are appended to
//! a heap that grows upward after a 32-byte index header, and a directory of
//! u16 record offsets in key order grows downward from the trailer. The
//! page layer reads only each record's 3-byte fixed header (info bits and
//! total length, [`rec::info`]); the rest of the record format ([`rec`]) —
//! NULL bitmap, variable-length array, field data, external references — is
//! interpreted with a [`rec::RecordLayout`] supplied by the B+tree.
//!
//! | limit                               | value  |
//! |-------------------------------------|--------|
//! | record heap + slots on an empty page ([`PAGE_CAPACITY`]) | 16306 B |
//! | largest record ([`MAX_REC_LEN`])     | 8151 B |
//! | most records on a page ([`index_page::MAX_RECS`]) | 3261 |
//! | data per overflow page ([`overflow::OVERFLOW_CAPACITY`]) | 16330 B |
//!
//! # Invariants and validation
//!
//! * Pages are checked once on entry: the buffer pool verifies the checksum
//!   ([`header::verify`]) and runs [`index_page::check`] on index pages.
//! * Independently, every accessor and every operation bounds-checks what
//!   it reads. Bytes from disk or from the log never cause a panic: they
//!   produce [`PageError::Corruption`], [`PageError::BadRecord`] or
//!   [`PageError::RedoCorrupt`] ([`PageError::is_corruption`]).
//! * Operations validate before they write: on `Err` the page is unchanged.
//! * Operations are deterministic: the same record applied to the same
//!   image gives the same bytes, on the running server and in recovery.
//!
//! # A change, end to end
//!
//! ```
//! use std::borrow::Cow;
//! use basalt_common::{IndexId, PageId, SpaceId, PAGE_SIZE};
//! use basalt_page::index_page::{IndexPage, SearchMode};
//! use basalt_page::rec::{FieldDef, RecordLayout};
//! use basalt_page::redo::{RedoReader, RedoRecord};
//!
//! let layout = RecordLayout::new(vec![FieldDef::fixed(4), FieldDef::var(100)], 1, false)?;
//! let id = PageId::new(SpaceId(5), 3);
//! let mut frame = vec![0u8; PAGE_SIZE];
//! let mut log = Vec::new();
//!
//! // Runtime: every change is a redo record, applied and then logged.
//! let mut rec = Vec::new();
//! layout.encode_leaf(&[Some(&7u32.to_be_bytes()), Some(b"seven")], None, &mut rec)?;
//! let slot = 0;
//! for r in [
//!     RedoRecord::InitIndex { level: 0, index_id: IndexId(9), flags: 0 },
//!     RedoRecord::Insert { slot, rec: Cow::Borrowed(&rec) },
//!     RedoRecord::MtrEnd,
//! ] {
//!     r.apply(id, &mut frame)?;
//!     r.encode(id, &mut log);
//! }
//! let page = IndexPage::new(&frame)?;
//! let key = [Some(&7u32.to_be_bytes()[..])];
//! assert_eq!(page.search(&layout, &key, SearchMode::GreaterOrEqual)?, 0);
//!
//! // Recovery: decode the log and apply it to the old image.
//! let mut disk = vec![0u8; PAGE_SIZE];
//! for d in RedoReader::new(&log) {
//!     let d = d?;
//!     if let Some(page_id) = d.page_id {
//!         d.record.apply(page_id, &mut disk)?;
//!     }
//! }
//! assert_eq!(disk, frame);
//! # Ok::<(), basalt_page::PageError>(())
//! ```
//!
//! # Tests
//!
//! Unit tests sit beside the code; `tests/` holds the model test of the
//! index page against a `Vec<Vec<u8>>`, record round trips, redo round
//! trips and replay equivalence, and a robustness test feeding damaged
//! bytes to every decoder. Random tests print their seed and take
//! `BASALT_TEST_SEED=<u64>` to replay one; `BASALT_PAGE_ITERS=<n>` multiplies
//! their iteration counts for long runs. `fuzz/` (outside the workspace)
//! holds a cargo-fuzz target for the page, record and redo decoders.

#![forbid(unsafe_code)]

mod error;
pub mod header;
pub mod index_page;
pub mod overflow;
pub mod rec;
pub mod redo;

pub use error::{PageError, Result};
pub use header::{ChecksumFailure, PageState, PageType};
pub use index_page::{IndexPage, MAX_REC_LEN, PAGE_CAPACITY};
pub use rec::{RecordLayout, RecordRef};
pub use redo::{RedoReader, RedoRecord};
