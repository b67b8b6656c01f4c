//! Applying a redo record to a page image: the one code path shared by the
//! running server and crash recovery.

use basalt_common::PageId;

use super::record::{PageImage, RedoRecord};
use crate::error::{check_page_len, corrupt, PageError, Result};
use crate::header::{
    self, PageType, FIL_PAGE_DATA, FIL_PAGE_LSN, FIL_PAGE_PREV, FIL_PAGE_SPACE, FIL_PAGE_TRAILER,
};
use crate::{index_page, overflow};

impl RedoRecord<'_> {
    /// Performs the operation on `page`, the image of page `page_id`.
    ///
    /// Init records (and full-page images) write the page id into the
    /// header; every other record first checks that the header names
    /// `page_id`, so a record is never applied to the wrong page. The page
    /// LSN is not touched: the mini-transaction stamps it at commit, and
    /// recovery after applying a page's records.
    ///
    /// Never panics, whatever the record and the page hold: on `Err` the
    /// page is unchanged. [`RedoRecord::MtrEnd`] is a no-op.
    pub fn apply(&self, page_id: PageId, page: &mut [u8]) -> Result<()> {
        check_page_len(page)?;
        match self {
            RedoRecord::InitIndex {
                level,
                index_id,
                flags,
            } => {
                return index_page::init(page, page_id, *level, *index_id, *flags);
            }
            RedoRecord::InitOverflow => return overflow::init(page, page_id),
            RedoRecord::InitPage { page_type } => return init_plain(page, page_id, *page_type),
            RedoRecord::FullPage { image } => return apply_image(page, page_id, image),
            RedoRecord::MtrEnd => return Ok(()),
            _ => {}
        }
        let found = header::page_id(page);
        if found != page_id {
            return Err(corrupt(
                page,
                format!("redo record for page {page_id} applied to page {found}"),
            ));
        }
        match self {
            RedoRecord::Insert { slot, rec } => index_page::insert(page, usize::from(*slot), rec),
            RedoRecord::InsertMany { slot, recs } => {
                index_page::insert_many(page, usize::from(*slot), recs)
            }
            RedoRecord::Delete { slot } => index_page::delete(page, usize::from(*slot)),
            RedoRecord::DeleteRange { start, end } => {
                index_page::delete_range(page, usize::from(*start), usize::from(*end))
            }
            RedoRecord::Replace { slot, rec } => index_page::replace(page, usize::from(*slot), rec),
            RedoRecord::SetDeleteMark { slot, marked } => {
                index_page::set_delete_mark(page, usize::from(*slot), *marked)
            }
            RedoRecord::Compact => index_page::compact(page),
            RedoRecord::SetMaxTrxId { trx_id } => index_page::set_max_trx_id(page, *trx_id),
            RedoRecord::WriteBytes { offset, bytes } => {
                write_bytes(page, usize::from(*offset), bytes)
            }
            RedoRecord::OverflowWrite { next, data } => overflow::write_chunk(page, data, *next),
            RedoRecord::OverflowSetNext { next } => overflow::set_next(page, *next),
            RedoRecord::InitIndex { .. }
            | RedoRecord::InitOverflow
            | RedoRecord::InitPage { .. }
            | RedoRecord::FullPage { .. }
            | RedoRecord::MtrEnd => Ok(()),
        }
    }
}

/// Formats a page of a type without structured body.
fn init_plain(page: &mut [u8], page_id: PageId, ty: PageType) -> Result<()> {
    if matches!(ty, PageType::Index | PageType::Overflow) {
        return Err(PageError::RedoCorrupt {
            at: 0,
            reason: format!("{ty:?} pages have their own init record"),
        });
    }
    header::init_header(page, page_id, ty);
    page[FIL_PAGE_DATA..FIL_PAGE_TRAILER].fill(0);
    Ok(())
}

/// Writes raw bytes inside `[FIL_PAGE_PREV, FIL_PAGE_TRAILER)`, never over
/// the page LSN.
fn write_bytes(page: &mut [u8], offset: usize, bytes: &[u8]) -> Result<()> {
    let end = offset + bytes.len();
    let hits_lsn = offset < FIL_PAGE_LSN + 8 && end > FIL_PAGE_LSN;
    if offset < FIL_PAGE_PREV || end > FIL_PAGE_TRAILER || (hits_lsn && !bytes.is_empty()) {
        return Err(PageError::OutOfBounds {
            offset,
            len: bytes.len(),
        });
    }
    page[offset..end].copy_from_slice(bytes);
    Ok(())
}

/// Copies a full-page image (all logged fields) over the page.
fn apply_image(page: &mut [u8], page_id: PageId, image: &PageImage<'_>) -> Result<()> {
    let img = image.bytes();
    let named = header::page_id(img);
    if named != page_id {
        return Err(corrupt(
            img,
            format!("full-page image of page {named} applied to page {page_id}"),
        ));
    }
    page[FIL_PAGE_SPACE..FIL_PAGE_LSN].copy_from_slice(&img[FIL_PAGE_SPACE..FIL_PAGE_LSN]);
    page[FIL_PAGE_LSN + 8..FIL_PAGE_TRAILER]
        .copy_from_slice(&img[FIL_PAGE_LSN + 8..FIL_PAGE_TRAILER]);
    Ok(())
}
