//! Overflow pages: chains of pages holding one long column value.
//!
//! ```text
//!   0  file header (type Overflow; prev/next siblings unused)
//!  38  next overflow page   u32   FIL_NULL on the last page of a chain
//!  42  bytes on this page   u32   0..=OVERFLOW_CAPACITY
//!  46  data …
//!      (zero up to the trailer)
//! 16376 trailer
//! ```
//!
//! A record refers to the first page of a chain with an
//! [`ExternRef`](crate::rec::ExternRef) whose `offset` is
//! [`OVERFLOW_HEADER`] and whose `total_len` is the sum of the chunk
//! lengths. Chains are written back to front or front to back as the
//! B+tree prefers: [`write_chunk`] sets data and next pointer together,
//! [`set_next`] patches the pointer alone. Every call validates the page
//! type and lengths; nothing here panics on a damaged page.

use basalt_common::{PageId, PageNo};

use crate::error::{check_page_len, corrupt, PageError, Result};
use crate::header::{self, read_u32, write_u32, PageType, FIL_PAGE_DATA, FIL_PAGE_TRAILER};

/// Offset of the overflow header.
pub const OVERFLOW_HEADER: usize = FIL_PAGE_DATA;
/// Offset of the next-page field.
pub const OVERFLOW_NEXT: usize = OVERFLOW_HEADER;
/// Offset of the chunk-length field.
pub const OVERFLOW_LEN: usize = OVERFLOW_HEADER + 4;
/// First data byte.
pub const OVERFLOW_DATA: usize = OVERFLOW_HEADER + 8;
/// Data bytes one overflow page holds.
pub const OVERFLOW_CAPACITY: usize = FIL_PAGE_TRAILER - OVERFLOW_DATA;

/// The part of a long value stored on one overflow page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverflowChunk<'a> {
    /// The bytes stored here.
    pub data: &'a [u8],
    /// Next page of the chain, `FIL_NULL` at the end.
    pub next: PageNo,
}

/// Pages needed to store `total_len` bytes.
pub fn pages_needed(total_len: u64) -> u64 {
    total_len.div_ceil(OVERFLOW_CAPACITY as u64)
}

/// Formats `page` as an empty overflow page (no data, no successor).
pub fn init(page: &mut [u8], page_id: PageId) -> Result<()> {
    check_page_len(page)?;
    header::init_header(page, page_id, PageType::Overflow);
    page[FIL_PAGE_DATA..FIL_PAGE_TRAILER].fill(0);
    write_u32(page, OVERFLOW_NEXT, basalt_common::FIL_NULL);
    Ok(())
}

/// Stores `data` (at most [`OVERFLOW_CAPACITY`] bytes) and the successor
/// `next`, replacing whatever the page held; the rest of the data area is
/// zeroed.
pub fn write_chunk(page: &mut [u8], data: &[u8], next: PageNo) -> Result<()> {
    check_overflow(page)?;
    if data.len() > OVERFLOW_CAPACITY {
        return Err(PageError::NoSpace {
            needed: data.len(),
            available: OVERFLOW_CAPACITY,
        });
    }
    write_u32(page, OVERFLOW_NEXT, next);
    write_u32(page, OVERFLOW_LEN, data.len() as u32);
    page[OVERFLOW_DATA..OVERFLOW_DATA + data.len()].copy_from_slice(data);
    page[OVERFLOW_DATA + data.len()..FIL_PAGE_TRAILER].fill(0);
    Ok(())
}

/// Sets the successor of an overflow page.
pub fn set_next(page: &mut [u8], next: PageNo) -> Result<()> {
    check_overflow(page)?;
    write_u32(page, OVERFLOW_NEXT, next);
    Ok(())
}

/// Reads the chunk stored on an overflow page.
pub fn read_chunk(page: &[u8]) -> Result<OverflowChunk<'_>> {
    check_overflow(page)?;
    let len = read_u32(page, OVERFLOW_LEN) as usize;
    if len > OVERFLOW_CAPACITY {
        return Err(corrupt(
            page,
            format!("overflow chunk of {len} bytes exceeds {OVERFLOW_CAPACITY}"),
        ));
    }
    Ok(OverflowChunk {
        data: &page[OVERFLOW_DATA..OVERFLOW_DATA + len],
        next: read_u32(page, OVERFLOW_NEXT),
    })
}

fn check_overflow(page: &[u8]) -> Result<()> {
    check_page_len(page)?;
    if header::page_type(page) != Some(PageType::Overflow) {
        return Err(corrupt(
            page,
            format!(
                "page type {} is not an overflow page",
                header::page_type_raw(page)
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use basalt_common::{SpaceId, FIL_NULL, PAGE_SIZE};

    use super::*;

    #[test]
    fn chunk_round_trips_and_capacity_is_enforced() {
        let mut page = vec![0xAAu8; PAGE_SIZE];
        let id = PageId::new(SpaceId(4), 9);
        init(&mut page, id).unwrap();
        let c = read_chunk(&page).unwrap();
        assert_eq!((c.data.len(), c.next), (0, FIL_NULL));

        let data: Vec<u8> = (0..OVERFLOW_CAPACITY).map(|i| (i * 7) as u8).collect();
        write_chunk(&mut page, &data, 12).unwrap();
        let c = read_chunk(&page).unwrap();
        assert_eq!(c.data, &data[..]);
        assert_eq!(c.next, 12);

        // A shorter chunk replaces the longer one completely.
        write_chunk(&mut page, b"tail", FIL_NULL).unwrap();
        let c = read_chunk(&page).unwrap();
        assert_eq!((c.data, c.next), (&b"tail"[..], FIL_NULL));
        assert!(page[OVERFLOW_DATA + 4..FIL_PAGE_TRAILER]
            .iter()
            .all(|&b| b == 0));

        set_next(&mut page, 99).unwrap();
        assert_eq!(read_chunk(&page).unwrap().next, 99);

        let too_long = vec![1u8; OVERFLOW_CAPACITY + 1];
        assert!(write_chunk(&mut page, &too_long, FIL_NULL)
            .unwrap_err()
            .is_no_space());
        assert_eq!(pages_needed(0), 0);
        assert_eq!(pages_needed(OVERFLOW_CAPACITY as u64), 1);
        assert_eq!(pages_needed(OVERFLOW_CAPACITY as u64 + 1), 2);
    }

    #[test]
    fn damaged_pages_are_rejected() {
        let mut page = vec![0u8; PAGE_SIZE];
        init(&mut page, PageId::new(SpaceId(1), 2)).unwrap();
        write_u32(&mut page, OVERFLOW_LEN, OVERFLOW_CAPACITY as u32 + 1);
        assert!(read_chunk(&page).unwrap_err().is_corruption());
        let mut index = vec![0u8; PAGE_SIZE];
        header::init_header(&mut index, PageId::new(SpaceId(1), 3), PageType::Index);
        assert!(read_chunk(&index).unwrap_err().is_corruption());
        assert!(write_chunk(&mut index, b"x", 0)
            .unwrap_err()
            .is_corruption());
        assert!(matches!(
            read_chunk(&page[..100]),
            Err(PageError::WrongPageSize { len: 100 })
        ));
    }
}
