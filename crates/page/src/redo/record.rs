//! The redo record type: one physiological page operation.

use std::borrow::Cow;

use basalt_common::{IndexId, PageNo, TrxId, PAGE_SIZE};

use crate::error::{PageError, Result};
use crate::header::{
    PageType, FIL_PAGE_CHECKSUM, FIL_PAGE_LSN, FIL_PAGE_NEXT, FIL_PAGE_PREV, FIL_PAGE_TRAILER,
};

/// One page operation, or the end marker of a mini-transaction.
///
/// Byte payloads are [`Cow`]s: the runtime borrows the record it is about
/// to insert, the decoder borrows from the log buffer, and
/// [`RedoRecord::into_owned`] detaches a record from either.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedoRecord<'a> {
    /// [`index_page::init`](crate::index_page::init).
    InitIndex {
        /// B+tree level (0 = leaf).
        level: u16,
        /// Owning index.
        index_id: IndexId,
        /// Index-header flags.
        flags: u8,
    },
    /// [`overflow::init`](crate::overflow::init).
    InitOverflow,
    /// Formats a page without a structured body: writes the file header
    /// (id, type, no siblings) and zeroes the body. Any type except
    /// [`PageType::Index`] and [`PageType::Overflow`], which have their own
    /// init records.
    InitPage {
        /// Type to stamp.
        page_type: PageType,
    },
    /// [`index_page::insert`](crate::index_page::insert).
    Insert {
        /// Slot the record becomes.
        slot: u16,
        /// The encoded record.
        rec: Cow<'a, [u8]>,
    },
    /// [`index_page::insert_many`](crate::index_page::insert_many).
    InsertMany {
        /// Slot the first record becomes.
        slot: u16,
        /// Encoded records back to back.
        recs: Cow<'a, [u8]>,
    },
    /// [`index_page::delete`](crate::index_page::delete).
    Delete {
        /// Slot to remove.
        slot: u16,
    },
    /// [`index_page::delete_range`](crate::index_page::delete_range).
    DeleteRange {
        /// First slot removed.
        start: u16,
        /// One past the last slot removed.
        end: u16,
    },
    /// [`index_page::replace`](crate::index_page::replace).
    Replace {
        /// Slot to overwrite.
        slot: u16,
        /// The new encoded record.
        rec: Cow<'a, [u8]>,
    },
    /// [`index_page::set_delete_mark`](crate::index_page::set_delete_mark).
    SetDeleteMark {
        /// Slot to mark or unmark.
        slot: u16,
        /// New state of the mark.
        marked: bool,
    },
    /// [`index_page::compact`](crate::index_page::compact).
    Compact,
    /// [`index_page::set_max_trx_id`](crate::index_page::set_max_trx_id).
    SetMaxTrxId {
        /// New max trx id.
        trx_id: TrxId,
    },
    /// Raw bytes at an offset: tablespace-header fields, sibling links.
    /// Allowed in `[FIL_PAGE_PREV, FIL_PAGE_TRAILER)` except the page LSN.
    WriteBytes {
        /// First byte written.
        offset: u16,
        /// Bytes to write.
        bytes: Cow<'a, [u8]>,
    },
    /// [`overflow::write_chunk`](crate::overflow::write_chunk).
    OverflowWrite {
        /// Next page of the chain.
        next: PageNo,
        /// Chunk data.
        data: Cow<'a, [u8]>,
    },
    /// [`overflow::set_next`](crate::overflow::set_next).
    OverflowSetNext {
        /// Next page of the chain.
        next: PageNo,
    },
    /// The whole page (bulk-built or reorganised pages, when cheaper than
    /// the individual operations).
    FullPage {
        /// The page image.
        image: PageImage<'a>,
    },
    /// Closes the group of records of one mini-transaction. Not a page
    /// operation: it carries no page id and applying it does nothing.
    MtrEnd,
}

/// A page image for [`RedoRecord::FullPage`]: exactly [`PAGE_SIZE`] bytes,
/// with checksum, page LSN and trailer zeroed (they are not logged; the LSN
/// is stamped by the mini-transaction, the checksum at flush time).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageImage<'a>(Cow<'a, [u8]>);

impl<'a> PageImage<'a> {
    /// Wraps an image; copies it when the unlogged fields need zeroing.
    pub fn new(bytes: impl Into<Cow<'a, [u8]>>) -> Result<PageImage<'a>> {
        let mut bytes = bytes.into();
        if bytes.len() != PAGE_SIZE {
            return Err(PageError::WrongPageSize { len: bytes.len() });
        }
        let unlogged = [
            FIL_PAGE_CHECKSUM..FIL_PAGE_CHECKSUM + 4,
            FIL_PAGE_LSN..FIL_PAGE_LSN + 8,
            FIL_PAGE_TRAILER..PAGE_SIZE,
        ];
        if unlogged
            .iter()
            .any(|r| bytes[r.clone()].iter().any(|&b| b != 0))
        {
            let owned = bytes.to_mut();
            for r in unlogged {
                owned[r].fill(0);
            }
        }
        Ok(PageImage(bytes))
    }

    /// The image bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// Detaches the image from the buffer it borrows.
    pub fn into_owned(self) -> PageImage<'static> {
        PageImage(Cow::Owned(self.0.into_owned()))
    }
}

impl<'a> RedoRecord<'a> {
    /// A full-page record of `page`, borrowing it when possible.
    pub fn full_page(page: &'a [u8]) -> Result<RedoRecord<'a>> {
        Ok(RedoRecord::FullPage {
            image: PageImage::new(page)?,
        })
    }

    /// Writes a big-endian `u32` at `offset`.
    pub fn write_u32(offset: u16, value: u32) -> RedoRecord<'static> {
        RedoRecord::WriteBytes {
            offset,
            bytes: Cow::Owned(value.to_be_bytes().to_vec()),
        }
    }

    /// Sets the previous-sibling link of a page.
    pub fn set_prev_sibling(prev: PageNo) -> RedoRecord<'static> {
        RedoRecord::write_u32(FIL_PAGE_PREV as u16, prev)
    }

    /// Sets the next-sibling link of a page.
    pub fn set_next_sibling(next: PageNo) -> RedoRecord<'static> {
        RedoRecord::write_u32(FIL_PAGE_NEXT as u16, next)
    }

    /// True for records that change a page (all but [`RedoRecord::MtrEnd`]).
    pub fn is_page_op(&self) -> bool {
        !matches!(self, RedoRecord::MtrEnd)
    }

    /// Detaches the record from the buffers it borrows.
    pub fn into_owned(self) -> RedoRecord<'static> {
        fn own(c: Cow<'_, [u8]>) -> Cow<'static, [u8]> {
            Cow::Owned(c.into_owned())
        }
        match self {
            RedoRecord::InitIndex {
                level,
                index_id,
                flags,
            } => RedoRecord::InitIndex {
                level,
                index_id,
                flags,
            },
            RedoRecord::InitOverflow => RedoRecord::InitOverflow,
            RedoRecord::InitPage { page_type } => RedoRecord::InitPage { page_type },
            RedoRecord::Insert { slot, rec } => RedoRecord::Insert {
                slot,
                rec: own(rec),
            },
            RedoRecord::InsertMany { slot, recs } => RedoRecord::InsertMany {
                slot,
                recs: own(recs),
            },
            RedoRecord::Delete { slot } => RedoRecord::Delete { slot },
            RedoRecord::DeleteRange { start, end } => RedoRecord::DeleteRange { start, end },
            RedoRecord::Replace { slot, rec } => RedoRecord::Replace {
                slot,
                rec: own(rec),
            },
            RedoRecord::SetDeleteMark { slot, marked } => {
                RedoRecord::SetDeleteMark { slot, marked }
            }
            RedoRecord::Compact => RedoRecord::Compact,
            RedoRecord::SetMaxTrxId { trx_id } => RedoRecord::SetMaxTrxId { trx_id },
            RedoRecord::WriteBytes { offset, bytes } => RedoRecord::WriteBytes {
                offset,
                bytes: own(bytes),
            },
            RedoRecord::OverflowWrite { next, data } => RedoRecord::OverflowWrite {
                next,
                data: own(data),
            },
            RedoRecord::OverflowSetNext { next } => RedoRecord::OverflowSetNext { next },
            RedoRecord::FullPage { image } => RedoRecord::FullPage {
                image: image.into_owned(),
            },
            RedoRecord::MtrEnd => RedoRecord::MtrEnd,
        }
    }
}
