//! Identifier newtypes shared by every layer.

use std::fmt;

/// Size of every page in every tablespace, in bytes.
pub const PAGE_SIZE: usize = 16 * 1024;

/// Page number meaning "no page" (end of a list, no sibling).
pub const FIL_NULL: PageNo = u32::MAX;

/// A page number inside one tablespace.
pub type PageNo = u32;

/// Log sequence number: a byte position in the redo stream.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Lsn(pub u64);

impl Lsn {
    /// "Never modified" / "no LSN".
    pub const ZERO: Lsn = Lsn(0);
    /// Largest representable LSN.
    pub const MAX: Lsn = Lsn(u64::MAX);

    /// Raw value.
    pub const fn get(self) -> u64 {
        self.0
    }

    /// `self + bytes`.
    pub const fn add(self, bytes: u64) -> Lsn {
        Lsn(self.0 + bytes)
    }

    /// Bytes from `earlier` to `self`, saturating at zero.
    pub const fn since(self, earlier: Lsn) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl fmt::Debug for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Lsn({})", self.0)
    }
}

impl fmt::Display for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Tablespace id. 0 is the system tablespace.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SpaceId(pub u32);

impl SpaceId {
    /// The system tablespace (`ibdata1`).
    pub const SYSTEM: SpaceId = SpaceId(0);
}

impl fmt::Debug for SpaceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SpaceId({})", self.0)
    }
}

impl fmt::Display for SpaceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Address of one page: tablespace and page number.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct PageId {
    /// Tablespace holding the page.
    pub space: SpaceId,
    /// Page number inside the tablespace (byte offset / [`PAGE_SIZE`]).
    pub page_no: PageNo,
}

impl PageId {
    /// Builds a page id.
    pub const fn new(space: SpaceId, page_no: PageNo) -> PageId {
        PageId { space, page_no }
    }

    /// Byte offset of the page inside its tablespace file.
    pub const fn file_offset(self) -> u64 {
        self.page_no as u64 * PAGE_SIZE as u64
    }

    /// Packs the id into one `u64` (space in the high half), e.g. for hashing.
    pub const fn to_u64(self) -> u64 {
        ((self.space.0 as u64) << 32) | self.page_no as u64
    }

    /// Inverse of [`PageId::to_u64`].
    pub const fn from_u64(v: u64) -> PageId {
        PageId {
            space: SpaceId((v >> 32) as u32),
            page_no: v as u32,
        }
    }
}

impl fmt::Debug for PageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}:{}]", self.space.0, self.page_no)
    }
}

impl fmt::Display for PageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[space {} page {}]", self.space.0, self.page_no)
    }
}

/// Transaction id; stored as 6 bytes (`DB_TRX_ID`) in clustered records.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct TrxId(pub u64);

impl TrxId {
    /// Bytes occupied on disk.
    pub const STORED_LEN: usize = 6;
    /// Largest id that fits in 48 bits.
    pub const MAX: TrxId = TrxId((1 << 48) - 1);

    /// Big-endian 6-byte encoding.
    pub fn to_bytes(self) -> [u8; 6] {
        let b = self.0.to_be_bytes();
        [b[2], b[3], b[4], b[5], b[6], b[7]]
    }

    /// Decodes the 6-byte big-endian encoding.
    pub fn from_bytes(b: [u8; 6]) -> TrxId {
        TrxId(u64::from_be_bytes([
            0, 0, b[0], b[1], b[2], b[3], b[4], b[5],
        ]))
    }
}

/// Roll pointer into the undo log; stored as 7 bytes (`DB_ROLL_PTR`).
///
/// Bit layout (high to low): 1 bit "insert undo", 7 bits rollback segment
/// id, 32 bits undo page number, 16 bits byte offset in that page.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct RollPtr(pub u64);

impl RollPtr {
    /// Bytes occupied on disk.
    pub const STORED_LEN: usize = 7;

    /// Builds a roll pointer from its parts.
    pub fn new(is_insert: bool, rseg_id: u8, page_no: PageNo, offset: u16) -> RollPtr {
        RollPtr(
            (u64::from(is_insert) << 55)
                | (u64::from(rseg_id & 0x7f) << 48)
                | (u64::from(page_no) << 16)
                | u64::from(offset),
        )
    }

    /// True when the pointer refers to insert undo (the record was fresh).
    pub fn is_insert(self) -> bool {
        self.0 >> 55 & 1 == 1
    }

    /// Rollback segment id.
    pub fn rseg_id(self) -> u8 {
        (self.0 >> 48) as u8 & 0x7f
    }

    /// Undo page number.
    pub fn page_no(self) -> PageNo {
        (self.0 >> 16) as u32
    }

    /// Byte offset inside the undo page.
    pub fn offset(self) -> u16 {
        self.0 as u16
    }

    /// Big-endian 7-byte encoding.
    pub fn to_bytes(self) -> [u8; 7] {
        let b = self.0.to_be_bytes();
        [b[1], b[2], b[3], b[4], b[5], b[6], b[7]]
    }

    /// Decodes the 7-byte big-endian encoding.
    pub fn from_bytes(b: [u8; 7]) -> RollPtr {
        RollPtr(u64::from_be_bytes([
            0, b[0], b[1], b[2], b[3], b[4], b[5], b[6],
        ]))
    }
}

/// Identifies one B+tree index; stamped in every index page header.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct IndexId(pub u64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trx_id_round_trips_through_six_bytes() {
        for v in [0, 1, 0x1234_5678_9abc, TrxId::MAX.0] {
            assert_eq!(TrxId::from_bytes(TrxId(v).to_bytes()), TrxId(v));
        }
    }

    #[test]
    fn roll_ptr_packs_its_fields() {
        let p = RollPtr::new(true, 77, 0xdead_beef, 0x3fff);
        assert!(p.is_insert());
        assert_eq!(p.rseg_id(), 77);
        assert_eq!(p.page_no(), 0xdead_beef);
        assert_eq!(p.offset(), 0x3fff);
        assert_eq!(RollPtr::from_bytes(p.to_bytes()), p);
        assert!(!RollPtr::new(false, 1, 2, 3).is_insert());
    }

    #[test]
    fn page_id_packs_into_u64() {
        let id = PageId::new(SpaceId(7), 42);
        assert_eq!(PageId::from_u64(id.to_u64()), id);
        assert_eq!(id.file_offset(), 42 * PAGE_SIZE as u64);
    }
}
