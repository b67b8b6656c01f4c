//! The dictionary header: page 7 of the system tablespace.
//!
//! ```text
//!  FIL_PAGE_DATA + 0    u32  magic "BSDH"
//!                + 4    u32  format version (1)
//!                + 8    u64  next table id
//!                + 16   u64  next index id
//!                + 24   u32  next space id
//!                + 28   u32  number of root slots n (<= MAX_SYSTEM_TABLES)
//!                + 32   n x 24-byte root slots:
//!                         +0   u32  system table id
//!                         +4   u32  record layout version
//!                         +8   u64  index id of its clustered index
//!                         +16  u32  root page number (system tablespace)
//!                         +20  u32  reserved, 0
//! ```
//!
//! All integers big-endian. The page is typed [`PageType::DictHeader`];
//! every change is a `WriteBytes` redo record of the mini-transaction that
//! makes it, so the header is exactly as durable and atomic as the change
//! that needed it (creating the system tables, allocating ids).

use basalt_common::{PageNo, FIL_NULL};
use basalt_page::header::{self, read_u32, read_u64, PageType, FIL_PAGE_DATA};

use crate::codec::SystemTableId;
use crate::error::{CatalogError, CatalogResult};

/// "BSDH": marks an initialised dictionary header.
pub const DICT_MAGIC: u32 = 0x4253_4448;
/// Format version this build writes and reads.
pub const DICT_FORMAT_VERSION: u32 = 1;
/// Most system tables the header can name.
pub const MAX_SYSTEM_TABLES: usize = 64;
/// First table id and index id handed out by
/// [`Catalog::allocate_ids`](crate::Catalog::allocate_ids); ids below are
/// reserved for system tables (index id = system table id).
pub const FIRST_DYNAMIC_ID: u64 = 1024;
/// First tablespace id handed out (space 0 is the system tablespace).
pub const FIRST_SPACE_ID: u32 = 1;
/// Largest tablespace id handed out; the ids above are kept for
/// special tablespaces (undo, temporary), as InnoDB does.
pub const MAX_SPACE_ID: u32 = 0xFFFF_FFEF;

const OFF_MAGIC: usize = FIL_PAGE_DATA;
const OFF_VERSION: usize = FIL_PAGE_DATA + 4;
const OFF_NEXT_TABLE: usize = FIL_PAGE_DATA + 8;
const OFF_NEXT_INDEX: usize = FIL_PAGE_DATA + 16;
const OFF_NEXT_SPACE: usize = FIL_PAGE_DATA + 24;
const OFF_N_SLOTS: usize = FIL_PAGE_DATA + 28;
const OFF_SLOTS: usize = FIL_PAGE_DATA + 32;
const SLOT_LEN: usize = 24;
/// Offset of the counters (the part [`Counters::encode`] writes).
pub(crate) const OFF_COUNTERS: u16 = OFF_NEXT_TABLE as u16;

/// Where a system table lives, as the header records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RootSlot {
    /// The table.
    pub table: SystemTableId,
    /// Layout version it was created with.
    pub version: u32,
    /// Index id of its clustered index.
    pub index_id: u64,
    /// Root page of its clustered index in the system tablespace.
    pub root: PageNo,
}

/// The id counters: the next value each allocation hands out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counters {
    /// Next table id.
    pub next_table_id: u64,
    /// Next index id.
    pub next_index_id: u64,
    /// Next tablespace id.
    pub next_space_id: u32,
}

impl Counters {
    /// The counters of a new dictionary.
    pub const INITIAL: Counters = Counters {
        next_table_id: FIRST_DYNAMIC_ID,
        next_index_id: FIRST_DYNAMIC_ID,
        next_space_id: FIRST_SPACE_ID,
    };

    /// The 20 bytes at [`OFF_COUNTERS`].
    pub(crate) fn encode(&self) -> [u8; 20] {
        let mut b = [0u8; 20];
        b[0..8].copy_from_slice(&self.next_table_id.to_be_bytes());
        b[8..16].copy_from_slice(&self.next_index_id.to_be_bytes());
        b[16..20].copy_from_slice(&self.next_space_id.to_be_bytes());
        b
    }
}

/// The decoded dictionary header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DictHeader {
    /// Id counters.
    pub counters: Counters,
    /// One slot per system table that exists.
    pub slots: Vec<RootSlot>,
}

/// What page 7 holds.
#[derive(Debug)]
pub(crate) enum HeaderState {
    /// Never written: the data directory has no dictionary yet.
    Absent,
    /// A complete header.
    Present(DictHeader),
}

fn corrupt(reason: impl Into<String>) -> CatalogError {
    CatalogError::Corrupt {
        what: "dictionary header".into(),
        reason: reason.into(),
        page_id: Some(crate::catalog::dict_header_page()),
    }
}

impl DictHeader {
    /// Decodes page 7. An all-zero page is [`HeaderState::Absent`]; any
    /// other page that is not a valid header is corruption (never
    /// overwritten).
    pub(crate) fn read(page: &[u8]) -> CatalogResult<HeaderState> {
        if page.iter().all(|&b| b == 0) {
            return Ok(HeaderState::Absent);
        }
        if header::page_type(page) != Some(PageType::DictHeader) {
            return Err(corrupt(format!(
                "page type {} instead of a dictionary header",
                header::page_type_raw(page)
            )));
        }
        if read_u32(page, OFF_MAGIC) != DICT_MAGIC {
            return Err(corrupt("magic missing"));
        }
        let version = read_u32(page, OFF_VERSION);
        if version > DICT_FORMAT_VERSION {
            return Err(CatalogError::UnsupportedFormat {
                found: version,
                supported: DICT_FORMAT_VERSION,
            });
        }
        if version == 0 {
            return Err(corrupt("format version 0"));
        }
        let counters = Counters {
            next_table_id: read_u64(page, OFF_NEXT_TABLE),
            next_index_id: read_u64(page, OFF_NEXT_INDEX),
            next_space_id: read_u32(page, OFF_NEXT_SPACE),
        };
        if counters.next_table_id < FIRST_DYNAMIC_ID
            || counters.next_index_id < FIRST_DYNAMIC_ID
            || counters.next_space_id < FIRST_SPACE_ID
        {
            return Err(corrupt(format!(
                "id counters below their start: {counters:?}"
            )));
        }
        let n = read_u32(page, OFF_N_SLOTS) as usize;
        if n > MAX_SYSTEM_TABLES {
            return Err(corrupt(format!(
                "{n} root slots, at most {MAX_SYSTEM_TABLES}"
            )));
        }
        let mut slots = Vec::with_capacity(n);
        for i in 0..n {
            let off = OFF_SLOTS + i * SLOT_LEN;
            let slot = RootSlot {
                table: SystemTableId(read_u32(page, off)),
                version: read_u32(page, off + 4),
                index_id: read_u64(page, off + 8),
                root: read_u32(page, off + 16),
            };
            if slot.root == 0 || slot.root == FIL_NULL {
                return Err(corrupt(format!("slot {i} has root page {}", slot.root)));
            }
            if slots.iter().any(|s: &RootSlot| s.table == slot.table) {
                return Err(corrupt(format!(
                    "system table {} appears twice",
                    slot.table.0
                )));
            }
            slots.push(slot);
        }
        Ok(HeaderState::Present(DictHeader { counters, slots }))
    }

    /// The slot of `table`, if it exists.
    pub fn slot(&self, table: SystemTableId) -> Option<&RootSlot> {
        self.slots.iter().find(|s| s.table == table)
    }

    /// The bytes from the magic to the end of the last slot.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(OFF_SLOTS - OFF_MAGIC + self.slots.len() * SLOT_LEN);
        b.extend_from_slice(&DICT_MAGIC.to_be_bytes());
        b.extend_from_slice(&DICT_FORMAT_VERSION.to_be_bytes());
        b.extend_from_slice(&self.counters.encode());
        b.extend_from_slice(&(self.slots.len() as u32).to_be_bytes());
        for s in &self.slots {
            b.extend_from_slice(&s.table.0.to_be_bytes());
            b.extend_from_slice(&s.version.to_be_bytes());
            b.extend_from_slice(&s.index_id.to_be_bytes());
            b.extend_from_slice(&s.root.to_be_bytes());
            b.extend_from_slice(&0u32.to_be_bytes());
        }
        b
    }

    /// Offset of the first byte [`DictHeader::encode`] covers.
    pub(crate) const ENCODE_OFFSET: u16 = OFF_MAGIC as u16;
}

#[cfg(test)]
mod tests {
    use basalt_common::PAGE_SIZE;
    use basalt_page::header::{write_u16, FIL_PAGE_TYPE};

    use super::*;

    fn page_with(h: &DictHeader) -> Vec<u8> {
        let mut page = vec![0u8; PAGE_SIZE];
        write_u16(&mut page, FIL_PAGE_TYPE, PageType::DictHeader as u16);
        let bytes = h.encode();
        page[OFF_MAGIC..OFF_MAGIC + bytes.len()].copy_from_slice(&bytes);
        page
    }

    fn sample() -> DictHeader {
        DictHeader {
            counters: Counters {
                next_table_id: 5000,
                next_index_id: 7001,
                next_space_id: 42,
            },
            slots: vec![
                RootSlot {
                    table: SystemTableId(1),
                    version: 1,
                    index_id: 1,
                    root: 192,
                },
                RootSlot {
                    table: SystemTableId(4),
                    version: 3,
                    index_id: 4,
                    root: 195,
                },
            ],
        }
    }

    #[test]
    fn header_round_trips_and_zero_page_is_absent() {
        assert_eq!(
            header::page_type_raw(&page_with(&sample())),
            PageType::DictHeader as u16
        );
        match DictHeader::read(&page_with(&sample())).unwrap() {
            HeaderState::Present(h) => assert_eq!(h, sample()),
            HeaderState::Absent => panic!("header not found"),
        }
        assert!(matches!(
            DictHeader::read(&vec![0u8; PAGE_SIZE]).unwrap(),
            HeaderState::Absent
        ));
    }

    #[test]
    fn damaged_headers_are_refused() {
        let good = page_with(&sample());
        let mut wrong_type = good.clone();
        write_u16(&mut wrong_type, FIL_PAGE_TYPE, PageType::Index as u16);
        assert!(DictHeader::read(&wrong_type).unwrap_err().is_corruption());

        let mut no_magic = good.clone();
        no_magic[OFF_MAGIC] ^= 1;
        assert!(DictHeader::read(&no_magic).unwrap_err().is_corruption());

        let mut newer = good.clone();
        newer[OFF_VERSION..OFF_VERSION + 4].copy_from_slice(&2u32.to_be_bytes());
        assert!(matches!(
            DictHeader::read(&newer),
            Err(CatalogError::UnsupportedFormat {
                found: 2,
                supported: 1
            })
        ));

        let mut many = good.clone();
        many[OFF_N_SLOTS..OFF_N_SLOTS + 4].copy_from_slice(&1000u32.to_be_bytes());
        assert!(DictHeader::read(&many).unwrap_err().is_corruption());

        let mut dup = sample();
        dup.slots[1].table = SystemTableId(1);
        assert!(DictHeader::read(&page_with(&dup))
            .unwrap_err()
            .is_corruption());

        let mut low = sample();
        low.counters.next_index_id = 3;
        assert!(DictHeader::read(&page_with(&low))
            .unwrap_err()
            .is_corruption());

        let mut nul_root = sample();
        nul_root.slots[0].root = 0;
        assert!(DictHeader::read(&page_with(&nul_root))
            .unwrap_err()
            .is_corruption());
    }
}
