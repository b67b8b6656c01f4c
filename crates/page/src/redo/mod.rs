//! Physiological redo records: "on page P, do operation O".
//!
//! Every change to a page is expressed as a [`RedoRecord`]. A
//! mini-transaction holding the page's exclusive latch calls
//! [`RedoRecord::apply`] on the frame and, if that succeeded,
//! [`RedoRecord::encode`] into its log buffer; crash recovery decodes the
//! same bytes and calls the same `apply` on the page image read from disk.
//! Because every operation is a pure function of (page image, arguments),
//! both paths produce identical bytes:
//!
//! ```text
//!   runtime:   page ──apply(r)──▶ page'      log ◀──encode(r)
//!   recovery:  page ──apply(decode(log))──▶ page'   (same page')
//! ```
//!
//! A failed `apply` leaves the page unchanged and must not be logged (for
//! [`PageError::NoSpace`](crate::PageError::NoSpace) the B+tree splits and
//! retries). `apply` is not idempotent (inserting twice inserts twice):
//! recovery applies a record only to a page whose LSN is older than the
//! record's, which the `mtr` layer decides.
//!
//! **Encoding.** Integers are LEB128 varints unless noted; byte strings are
//! a varint length followed by the bytes (at most one page).
//!
//! ```text
//!  record  := type:u8 space:varint page_no:varint body      (page records)
//!           | 0x7F                                          (MtrEnd)
//!
//!  type  name             body
//!  0x01  InitIndex        level, index_id, flags:u8
//!  0x02  InitOverflow     -
//!  0x03  InitPage         page_type
//!  0x10  Insert           slot, rec:bytes
//!  0x11  InsertMany       slot, recs:bytes (records back to back)
//!  0x12  Delete           slot
//!  0x13  DeleteRange      start, end
//!  0x14  Replace          slot, rec:bytes
//!  0x15  SetDeleteMark    slot, marked:u8 (0 or 1)
//!  0x16  Compact          -
//!  0x17  SetMaxTrxId      trx_id
//!  0x20  WriteBytes       offset, bytes
//!  0x21  OverflowWrite    next, data:bytes
//!  0x22  OverflowSetNext  next
//!  0x30  FullPage         page[4..20) raw (16 B), prefix:bytes, suffix:bytes
//!                         of page[28..16376); the bytes between are zero
//! ```
//!
//! A full-page image omits the checksum, the page LSN and the trailer and
//! elides its longest run of zero bytes (on an index page: the free gap).
//!
//! **Decoding** ([`RedoRecord::decode`], [`RedoReader`]) borrows payloads
//! from the log buffer. A slice that ends inside a record yields
//! [`PageError::RedoIncomplete`](crate::PageError::RedoIncomplete): the redo
//! scan reached the torn tail of the log, and the mini-transaction whose
//! `MtrEnd` is missing is discarded as a whole. Bytes no encoder writes
//! yield [`PageError::RedoCorrupt`](crate::PageError::RedoCorrupt). Type
//! byte 0x00 is invalid, so zero padding never parses as a record.

mod apply;
mod codec;
mod record;

pub use codec::{
    DecodedRedo, RedoReader, REDO_COMPACT, REDO_DELETE, REDO_DELETE_RANGE, REDO_FULL_PAGE,
    REDO_INIT_INDEX, REDO_INIT_OVERFLOW, REDO_INIT_PAGE, REDO_INSERT, REDO_INSERT_MANY,
    REDO_MTR_END, REDO_OVERFLOW_SET_NEXT, REDO_OVERFLOW_WRITE, REDO_REPLACE, REDO_SET_DELETE_MARK,
    REDO_SET_MAX_TRX_ID, REDO_WRITE_BYTES,
};
pub use record::{PageImage, RedoRecord};
