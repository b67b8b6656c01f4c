//! The file header and trailer every page carries, and its checksum.
//!
//! ```text
//!  offset  size  field
//!       0     4  checksum: CRC32C of bytes [4, PAGE_SIZE - 8)
//!       4     4  space id
//!       8     4  page number
//!      12     4  previous page at the same B+tree level (FIL_NULL if none)
//!      16     4  next page at the same B+tree level (FIL_NULL if none)
//!      20     8  page LSN: end LSN of the newest redo applied to the page
//!      28     2  page type (PageType)
//!      30     8  reserved (zero)
//!      38        body starts (FIL_PAGE_DATA)
//!  ...
//!  PAGE_SIZE-8  4  checksum again (a torn write leaves the two unequal)
//!  PAGE_SIZE-4  4  low 32 bits of the page LSN
//! ```
//!
//! A page that is all zeroes was allocated by extending the file and never
//! written: [`verify`] reports it as [`PageState::Zeroed`], not as corruption.

use basalt_common::{Lsn, PageId, PageNo, SpaceId, PAGE_SIZE};

/// Offset of the checksum.
pub const FIL_PAGE_CHECKSUM: usize = 0;
/// Offset of the space id.
pub const FIL_PAGE_SPACE: usize = 4;
/// Offset of the page number.
pub const FIL_PAGE_NO: usize = 8;
/// Offset of the previous-sibling page number.
pub const FIL_PAGE_PREV: usize = 12;
/// Offset of the next-sibling page number.
pub const FIL_PAGE_NEXT: usize = 16;
/// Offset of the page LSN.
pub const FIL_PAGE_LSN: usize = 20;
/// Offset of the page type.
pub const FIL_PAGE_TYPE: usize = 28;
/// First byte of the page body.
pub const FIL_PAGE_DATA: usize = 38;
/// Offset of the trailer (checksum copy + low LSN bits).
pub const FIL_PAGE_TRAILER: usize = PAGE_SIZE - 8;
/// Bytes in the trailer.
pub const FIL_TRAILER_LEN: usize = 8;

/// What a page holds. Stored as a `u16` at [`FIL_PAGE_TYPE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum PageType {
    /// Freshly allocated, never initialised.
    Allocated = 0,
    /// Tablespace header (page 0 of every space): size, free list.
    FspHeader = 1,
    /// Page on the tablespace free list.
    Free = 2,
    /// B+tree node (leaf or internal).
    Index = 3,
    /// Overflow page holding part of a long column value.
    Overflow = 4,
    /// Undo log page.
    Undo = 5,
    /// Transaction-system header (system tablespace).
    TrxSys = 6,
    /// Doublewrite area bookkeeping page (system tablespace).
    Doublewrite = 7,
    /// Data-dictionary header page (system tablespace).
    DictHeader = 8,
}

impl PageType {
    /// Decodes a stored type; unknown values yield `None`.
    pub fn from_u16(v: u16) -> Option<PageType> {
        Some(match v {
            0 => PageType::Allocated,
            1 => PageType::FspHeader,
            2 => PageType::Free,
            3 => PageType::Index,
            4 => PageType::Overflow,
            5 => PageType::Undo,
            6 => PageType::TrxSys,
            7 => PageType::Doublewrite,
            8 => PageType::DictHeader,
            _ => return None,
        })
    }
}

/// Outcome of [`verify`] on a page image that is not corrupt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageState {
    /// Checksums match and the header names the expected page.
    Valid,
    /// Every byte is zero: allocated but never written.
    Zeroed,
}

/// Why a page image was rejected by [`verify`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChecksumFailure {
    /// The stored checksum does not match the contents.
    Mismatch {
        /// Checksum stored in the header.
        stored: u32,
        /// Checksum computed over the contents.
        computed: u32,
    },
    /// Header and trailer disagree (a torn write).
    Torn,
    /// The checksum is right but the header names another page
    /// (a misdirected write).
    WrongPage {
        /// Page id found in the header.
        found: PageId,
    },
}

impl std::fmt::Display for ChecksumFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChecksumFailure::Mismatch { stored, computed } => {
                write!(
                    f,
                    "checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
                )
            }
            ChecksumFailure::Torn => write!(f, "header and trailer disagree (torn write)"),
            ChecksumFailure::WrongPage { found } => write!(f, "page header names {found}"),
        }
    }
}

/// Reads a big-endian `u16`.
#[inline]
pub fn read_u16(page: &[u8], off: usize) -> u16 {
    u16::from_be_bytes([page[off], page[off + 1]])
}

/// Reads a big-endian `u32`.
#[inline]
pub fn read_u32(page: &[u8], off: usize) -> u32 {
    u32::from_be_bytes(page[off..off + 4].try_into().expect("4 bytes"))
}

/// Reads a big-endian `u64`.
#[inline]
pub fn read_u64(page: &[u8], off: usize) -> u64 {
    u64::from_be_bytes(page[off..off + 8].try_into().expect("8 bytes"))
}

/// Writes a big-endian `u16`.
#[inline]
pub fn write_u16(page: &mut [u8], off: usize, v: u16) {
    page[off..off + 2].copy_from_slice(&v.to_be_bytes());
}

/// Writes a big-endian `u32`.
#[inline]
pub fn write_u32(page: &mut [u8], off: usize, v: u32) {
    page[off..off + 4].copy_from_slice(&v.to_be_bytes());
}

/// Writes a big-endian `u64`.
#[inline]
pub fn write_u64(page: &mut [u8], off: usize, v: u64) {
    page[off..off + 8].copy_from_slice(&v.to_be_bytes());
}

/// Page id recorded in the header.
pub fn page_id(page: &[u8]) -> PageId {
    PageId::new(
        SpaceId(read_u32(page, FIL_PAGE_SPACE)),
        read_u32(page, FIL_PAGE_NO),
    )
}

/// Page LSN recorded in the header.
pub fn page_lsn(page: &[u8]) -> Lsn {
    Lsn(read_u64(page, FIL_PAGE_LSN))
}

/// Sets the page LSN (header; the trailer copy is written by [`stamp_checksum`]).
pub fn set_page_lsn(page: &mut [u8], lsn: Lsn) {
    write_u64(page, FIL_PAGE_LSN, lsn.0);
}

/// Raw page type recorded in the header.
pub fn page_type_raw(page: &[u8]) -> u16 {
    read_u16(page, FIL_PAGE_TYPE)
}

/// Page type recorded in the header, if known.
pub fn page_type(page: &[u8]) -> Option<PageType> {
    PageType::from_u16(page_type_raw(page))
}

/// Previous sibling at the same level.
pub fn prev_page(page: &[u8]) -> PageNo {
    read_u32(page, FIL_PAGE_PREV)
}

/// Next sibling at the same level.
pub fn next_page(page: &[u8]) -> PageNo {
    read_u32(page, FIL_PAGE_NEXT)
}

/// CRC32C of the checksummed range of a page.
pub fn compute_checksum(page: &[u8]) -> u32 {
    debug_assert_eq!(page.len(), PAGE_SIZE);
    crc32c::crc32c(&page[FIL_PAGE_CHECKSUM + 4..FIL_PAGE_TRAILER])
}

/// Fills in checksum and trailer just before the page is written to disk.
pub fn stamp_checksum(page: &mut [u8]) {
    let lsn_low = read_u64(page, FIL_PAGE_LSN) as u32;
    write_u32(page, FIL_PAGE_TRAILER + 4, lsn_low);
    let sum = compute_checksum(page);
    write_u32(page, FIL_PAGE_CHECKSUM, sum);
    write_u32(page, FIL_PAGE_TRAILER, sum);
}

/// Checks a page image read from disk at the position of `expected`.
pub fn verify(page: &[u8], expected: PageId) -> Result<PageState, ChecksumFailure> {
    debug_assert_eq!(page.len(), PAGE_SIZE);
    let stored = read_u32(page, FIL_PAGE_CHECKSUM);
    let computed = compute_checksum(page);
    if stored != computed {
        if stored == 0 && page.iter().all(|&b| b == 0) {
            return Ok(PageState::Zeroed);
        }
        return Err(ChecksumFailure::Mismatch { stored, computed });
    }
    if read_u32(page, FIL_PAGE_TRAILER) != stored
        || read_u32(page, FIL_PAGE_TRAILER + 4) != read_u64(page, FIL_PAGE_LSN) as u32
    {
        return Err(ChecksumFailure::Torn);
    }
    let found = page_id(page);
    if found != expected {
        return Err(ChecksumFailure::WrongPage { found });
    }
    Ok(PageState::Valid)
}

/// Writes the header of a page being (re)initialised: id, type, no siblings.
/// Leaves the LSN alone (the mtr stamps it at commit).
pub fn init_header(page: &mut [u8], id: PageId, ty: PageType) {
    write_u32(page, FIL_PAGE_SPACE, id.space.0);
    write_u32(page, FIL_PAGE_NO, id.page_no);
    write_u32(page, FIL_PAGE_PREV, basalt_common::FIL_NULL);
    write_u32(page, FIL_PAGE_NEXT, basalt_common::FIL_NULL);
    write_u16(page, FIL_PAGE_TYPE, ty as u16);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page_for(id: PageId) -> Vec<u8> {
        let mut p = vec![0u8; PAGE_SIZE];
        init_header(&mut p, id, PageType::Index);
        set_page_lsn(&mut p, Lsn(0x1_0000_0042));
        p[100] = 7;
        stamp_checksum(&mut p);
        p
    }

    #[test]
    fn stamped_page_verifies() {
        let id = PageId::new(SpaceId(3), 9);
        assert_eq!(verify(&page_for(id), id), Ok(PageState::Valid));
    }

    #[test]
    fn zero_page_is_not_corrupt() {
        let p = vec![0u8; PAGE_SIZE];
        assert_eq!(
            verify(&p, PageId::new(SpaceId(0), 5)),
            Ok(PageState::Zeroed)
        );
    }

    #[test]
    fn flipped_byte_is_a_mismatch() {
        let id = PageId::new(SpaceId(3), 9);
        let mut p = page_for(id);
        p[5000] ^= 1;
        assert!(matches!(
            verify(&p, id),
            Err(ChecksumFailure::Mismatch { .. })
        ));
    }

    #[test]
    fn torn_trailer_is_detected() {
        let id = PageId::new(SpaceId(3), 9);
        let mut p = page_for(id);
        // An older trailer (different LSN) survives a torn write.
        write_u32(&mut p, FIL_PAGE_TRAILER + 4, 0x41);
        let sum = read_u32(&p, 0);
        write_u32(&mut p, FIL_PAGE_TRAILER, sum);
        assert_eq!(verify(&p, id), Err(ChecksumFailure::Torn));
    }

    #[test]
    fn misdirected_write_is_detected() {
        let id = PageId::new(SpaceId(3), 9);
        let p = page_for(id);
        assert_eq!(
            verify(&p, PageId::new(SpaceId(3), 10)),
            Err(ChecksumFailure::WrongPage { found: id })
        );
    }
}
