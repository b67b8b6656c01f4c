//! Tablespace page allocation (file space management).
//!
//! Page 0 of every tablespace is its header:
//!
//! ```text
//!  FIL_PAGE_DATA + 0   u32  magic "BSFS"
//!                + 4   u32  space id
//!                + 8   u32  size: pages the file is formatted to hold
//!                + 12  u32  free limit: first page never handed out
//!                + 16  u32  head of the free list (FIL_NULL when empty)
//!                + 20  u32  length of the free list
//!                + 24  u32  flags
//! ```
//!
//! Allocation takes the head of the free list, or else the free limit,
//! growing the file (in chunks, see `basalt_buf::extension_target`) when
//! the limit reaches the size. A freed page is reformatted as a
//! [`PageType::Free`] page whose first body word links to the next free
//! page. Every header and link change is a redo record of the allocating
//! mini-transaction, so allocation is exactly as durable and atomic as the
//! change that needed the page.
//!
//! Latch order: page 0 is latched *after* any B+tree or undo page the mtr
//! holds, and only the free-list head or the new page is latched after it.
//! Nobody latches page 0 first and then a page in use, so the order is
//! deadlock-free.
//!
//! Growing the file is a plain `set_len` done before the size field is
//! logged. Recovery never needs the file to be long: pages beyond the end
//! read as zeroes and are rebuilt from their initialising redo.

use basalt_buf::LatchMode;
use basalt_common::{PageId, PageNo, SpaceId, FIL_NULL};
use basalt_page::header::{self, read_u32, PageType, FIL_PAGE_DATA};
use basalt_page::RedoRecord;

use crate::error::{MtrError, MtrResult};
use crate::mtr::{Mtr, PageRef};

/// "BSFS": marks an initialised tablespace header.
pub const FSP_MAGIC: u32 = 0x4253_4653;

const FSP_MAGIC_OFF: usize = FIL_PAGE_DATA;
const FSP_SPACE_ID: usize = FIL_PAGE_DATA + 4;
const FSP_SIZE: usize = FIL_PAGE_DATA + 8;
const FSP_FREE_LIMIT: usize = FIL_PAGE_DATA + 12;
const FSP_FREE_HEAD: usize = FIL_PAGE_DATA + 16;
const FSP_FREE_LEN: usize = FIL_PAGE_DATA + 20;
const FSP_FLAGS: usize = FIL_PAGE_DATA + 24;
const FSP_HEADER_END: usize = FIL_PAGE_DATA + 28;

/// Offset of the next-free link in a page on the free list.
const FREE_NEXT: usize = FIL_PAGE_DATA;

/// The tablespace header fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpaceHeader {
    /// Space id recorded in the header.
    pub space: SpaceId,
    /// Pages the file is formatted to hold.
    pub size: u32,
    /// First page never handed out.
    pub free_limit: PageNo,
    /// Head of the free list.
    pub free_head: PageNo,
    /// Pages on the free list.
    pub free_len: u32,
    /// Tablespace flags.
    pub flags: u32,
}

impl SpaceHeader {
    /// Decodes page 0 of `space`, checking it is an initialised header.
    pub fn read(page: &[u8], space: SpaceId) -> MtrResult<SpaceHeader> {
        let corrupt = |reason: String| MtrError::SpaceCorrupt { space, reason };
        if header::page_type(page) != Some(PageType::FspHeader) {
            return Err(corrupt(format!(
                "page 0 has type {} instead of a tablespace header",
                header::page_type_raw(page)
            )));
        }
        if read_u32(page, FSP_MAGIC_OFF) != FSP_MAGIC {
            return Err(corrupt("tablespace header magic missing".into()));
        }
        let h = SpaceHeader {
            space: SpaceId(read_u32(page, FSP_SPACE_ID)),
            size: read_u32(page, FSP_SIZE),
            free_limit: read_u32(page, FSP_FREE_LIMIT),
            free_head: read_u32(page, FSP_FREE_HEAD),
            free_len: read_u32(page, FSP_FREE_LEN),
            flags: read_u32(page, FSP_FLAGS),
        };
        if h.space != space {
            return Err(corrupt(format!("header names space {}", h.space)));
        }
        if h.free_limit > h.size || h.free_limit == 0 {
            return Err(corrupt(format!(
                "free limit {} outside 1..={}",
                h.free_limit, h.size
            )));
        }
        if (h.free_head == FIL_NULL) != (h.free_len == 0)
            || (h.free_head != FIL_NULL && h.free_head >= h.free_limit)
        {
            return Err(corrupt(format!(
                "free list head {} with length {} (free limit {})",
                h.free_head, h.free_len, h.free_limit
            )));
        }
        Ok(h)
    }

    fn encode(&self) -> [u8; FSP_HEADER_END - FSP_MAGIC_OFF] {
        let mut b = [0u8; FSP_HEADER_END - FSP_MAGIC_OFF];
        for (i, v) in [
            FSP_MAGIC,
            self.space.0,
            self.size,
            self.free_limit,
            self.free_head,
            self.free_len,
            self.flags,
        ]
        .into_iter()
        .enumerate()
        {
            b[i * 4..i * 4 + 4].copy_from_slice(&v.to_be_bytes());
        }
        b
    }
}

fn write_field(mtr: &mut Mtr<'_>, r: PageRef, off: usize, v: u32) -> MtrResult<()> {
    mtr.apply(r, &RedoRecord::write_u32(off as u16, v))
}

/// Formats page 0 of a new tablespace whose file holds `size` pages, with
/// pages below `first_free` reserved (never handed out).
pub fn format_space(
    mtr: &mut Mtr<'_>,
    space: SpaceId,
    size: u32,
    first_free: PageNo,
    flags: u32,
) -> MtrResult<()> {
    let r = mtr.create(PageId::new(space, 0))?;
    mtr.apply(
        r,
        &RedoRecord::InitPage {
            page_type: PageType::FspHeader,
        },
    )?;
    let h = SpaceHeader {
        space,
        size,
        free_limit: first_free.max(1),
        free_head: FIL_NULL,
        free_len: 0,
        flags,
    };
    mtr.apply(
        r,
        &RedoRecord::WriteBytes {
            offset: FSP_MAGIC_OFF as u16,
            bytes: h.encode().to_vec().into(),
        },
    )
}

/// Reads the header of `space` (S-latching page 0 in `mtr`).
pub fn read_header(mtr: &mut Mtr<'_>, space: SpaceId) -> MtrResult<SpaceHeader> {
    let r = mtr.get(PageId::new(space, 0), LatchMode::Shared)?;
    SpaceHeader::read(mtr.page(r), space)
}

impl<'a> Mtr<'a> {
    /// Allocates a page of `space` and returns it X-latched. The page's
    /// contents are unspecified (a zeroed frame or a former free-list page):
    /// the caller initialises it with an init redo record.
    pub fn alloc_page(&mut self, space: SpaceId) -> MtrResult<PageRef> {
        let hdr_ref = self.get(PageId::new(space, 0), LatchMode::Exclusive)?;
        let h = SpaceHeader::read(self.page(hdr_ref), space)?;
        if h.free_head != FIL_NULL {
            let id = PageId::new(space, h.free_head);
            let r = self.get(id, LatchMode::Exclusive)?;
            let page = self.page(r);
            if header::page_type(page) != Some(PageType::Free) {
                return Err(MtrError::SpaceCorrupt {
                    space,
                    reason: format!("free list page {} is not free", h.free_head),
                });
            }
            let next = read_u32(page, FREE_NEXT);
            write_field(self, hdr_ref, FSP_FREE_HEAD, next)?;
            write_field(self, hdr_ref, FSP_FREE_LEN, h.free_len - 1)?;
            return Ok(r);
        }
        let page_no = h.free_limit;
        if page_no >= FIL_NULL - 1 {
            return Err(MtrError::SpaceFull {
                space,
                pages: h.size,
            });
        }
        if page_no >= h.size {
            let new_size = self.store().spaces().extend(space, page_no + 1)?;
            write_field(self, hdr_ref, FSP_SIZE, new_size)?;
        } else if self.store().spaces().get(space)?.size() <= page_no {
            // The header was recovered from redo ahead of the file length.
            self.store().spaces().extend(space, h.size)?;
        }
        write_field(self, hdr_ref, FSP_FREE_LIMIT, page_no + 1)?;
        self.create(PageId::new(space, page_no))
    }

    /// Returns the X-latched page `r` to its tablespace's free list. The
    /// page must no longer be reachable from any structure.
    pub fn free_page(&mut self, r: PageRef) -> MtrResult<()> {
        let id = self.page_id(r);
        if id.page_no == 0 {
            return Err(MtrError::SpaceCorrupt {
                space: id.space,
                reason: "attempt to free the tablespace header".into(),
            });
        }
        let hdr_ref = self.get(PageId::new(id.space, 0), LatchMode::Exclusive)?;
        let h = SpaceHeader::read(self.page(hdr_ref), id.space)?;
        if id.page_no >= h.free_limit {
            return Err(MtrError::SpaceCorrupt {
                space: id.space,
                reason: format!(
                    "freeing page {} beyond the free limit {}",
                    id.page_no, h.free_limit
                ),
            });
        }
        self.apply(
            r,
            &RedoRecord::InitPage {
                page_type: PageType::Free,
            },
        )?;
        write_field(self, r, FREE_NEXT, h.free_head)?;
        write_field(self, hdr_ref, FSP_FREE_HEAD, id.page_no)?;
        write_field(self, hdr_ref, FSP_FREE_LEN, h.free_len + 1)
    }
}
