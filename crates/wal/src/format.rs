//! On-disk format of the redo log: geometry, blocks, file headers, checkpoint
//! slots.
//!
//! All integers are big-endian. Every 512-byte structure (log block, file
//! info block, checkpoint slot) ends with a CRC32C of its first 508 bytes.

use basalt_common::Lsn;

/// Size of one log block.
pub const BLOCK_SIZE: usize = 512;
/// Bytes of block header before the payload.
pub const BLOCK_HEADER_SIZE: usize = 16;
/// Bytes of block trailer (CRC32C) after the payload.
pub const BLOCK_TRAILER_SIZE: usize = 4;
/// Redo payload bytes per block: LSNs advance by this much per block.
pub const BLOCK_PAYLOAD: usize = BLOCK_SIZE - BLOCK_HEADER_SIZE - BLOCK_TRAILER_SIZE;
/// [`BLOCK_PAYLOAD`] as `u64`, for LSN arithmetic.
pub const PAYLOAD: u64 = BLOCK_PAYLOAD as u64;
/// Unit of every log write and read: offsets and lengths are multiples of it
/// so the files can be opened with O_DIRECT.
pub const WRITE_UNIT: usize = basalt_io::DIRECT_IO_ALIGN;
/// Blocks per write unit.
pub const BLOCKS_PER_UNIT: u64 = (WRITE_UNIT / BLOCK_SIZE) as u64;
/// Bytes at the start of every log file before its share of the ring: four
/// header blocks (file info, checkpoint slot 0, reserved, checkpoint slot 1)
/// padded to one write unit.
pub const FILE_HEADER_SIZE: u64 = WRITE_UNIT as u64;
/// Offset of checkpoint slot `i` inside file 0.
pub const CHECKPOINT_SLOT_OFFSETS: [usize; 2] = [BLOCK_SIZE, 3 * BLOCK_SIZE];
/// Format version written in every file info block.
pub const FORMAT_VERSION: u32 = 1;
/// Creator string written in every file info block.
pub const CREATOR: &str = concat!("Basalt ", env!("CARGO_PKG_VERSION"));
/// LSN a new data directory should start its log at (the LSN InnoDB starts
/// at; anything works, but 0 is kept for "never modified").
pub const LOG_START_LSN: Lsn = Lsn(8192);

const CRC_OFFSET: usize = BLOCK_SIZE - BLOCK_TRAILER_SIZE;
const INFO_MAGIC: &[u8; 8] = b"BSLTREDO";
const CHECKPOINT_MAGIC: &[u8; 8] = b"BSLTCKPT";
const CREATOR_LEN: usize = 32;

/// Number of the block holding payload byte `lsn`.
pub const fn block_of(lsn: u64) -> u64 {
    lsn / PAYLOAD
}

/// First LSN of block `block_no`.
pub const fn block_start(block_no: u64) -> u64 {
    block_no * PAYLOAD
}

/// Sizes derived from `innodb_log_file_size` x `innodb_log_files_in_group`.
///
/// ```text
///  ib_logfile0                         ib_logfile1
/// +--------+-------------------------+ +--------+-------------------------+
/// | header | ring units 0 .. u-1     | | header | ring units u .. 2u-1    |
/// | 4 KiB  | (file_size - 4 KiB)     | | 4 KiB  |                         |
/// +--------+-------------------------+ +--------+-------------------------+
///           '---------------------- one ring of 512-byte blocks ---------'
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogGeometry {
    /// Size of each file.
    pub file_size: u64,
    /// Number of files.
    pub files: u32,
    /// Ring bytes held by each file.
    pub ring_bytes_per_file: u64,
    /// Blocks in the whole ring (a multiple of [`BLOCKS_PER_UNIT`]).
    pub ring_blocks: u64,
}

impl LogGeometry {
    /// Geometry of `files` files of `file_size` bytes each. The caller has
    /// validated the sizes (multiple of [`WRITE_UNIT`], larger than the
    /// header).
    pub fn new(file_size: u64, files: u32) -> LogGeometry {
        let ring_bytes_per_file = file_size - FILE_HEADER_SIZE;
        LogGeometry {
            file_size,
            files,
            ring_bytes_per_file,
            ring_blocks: ring_bytes_per_file * u64::from(files) / BLOCK_SIZE as u64,
        }
    }

    /// LSN bytes the ring holds: `ring_blocks x 492`.
    pub fn capacity(&self) -> u64 {
        self.ring_blocks * PAYLOAD
    }

    /// Byte offset of `lsn` inside the ring (0 = first ring byte of file 0):
    /// `(lsn / 492 mod ring_blocks) * 512 + 16 + lsn mod 492`.
    pub fn lsn_to_ring_offset(&self, lsn: Lsn) -> u64 {
        let lsn = lsn.get();
        (block_of(lsn) % self.ring_blocks) * BLOCK_SIZE as u64
            + BLOCK_HEADER_SIZE as u64
            + lsn % PAYLOAD
    }

    /// `(file index, offset in that file)` of ring byte `ring_offset`.
    pub fn ring_offset_to_file(&self, ring_offset: u64) -> (usize, u64) {
        let file = ring_offset / self.ring_bytes_per_file;
        (
            file as usize,
            FILE_HEADER_SIZE + ring_offset % self.ring_bytes_per_file,
        )
    }

    /// `(file index, offset)` of write unit `unit_no` (absolute: block / 8).
    pub fn unit_location(&self, unit_no: u64) -> (usize, u64) {
        let ring_units = self.ring_blocks / BLOCKS_PER_UNIT;
        self.ring_offset_to_file((unit_no % ring_units) * WRITE_UNIT as u64)
    }

    /// Write units from `unit_no` up to the next file (or ring) boundary.
    pub fn units_to_file_end(&self, unit_no: u64) -> u64 {
        let units_per_file = self.ring_bytes_per_file / WRITE_UNIT as u64;
        let ring_units = self.ring_blocks / BLOCKS_PER_UNIT;
        units_per_file - (unit_no % ring_units) % units_per_file
    }
}

/// Header fields of one log block.
///
/// ```text
///  0        8          10            12      16                 508    512
/// +---------+----------+-------------+-------+-------------------+------+
/// |block_no | data_len |first_group  | epoch | payload (492)     |crc32c|
/// | u64     | u16      | u16         | u32   |                   | u32  |
/// +---------+----------+-------------+-------+-------------------+------+
/// ```
///
/// * `block_no` = LSN / 492 (absolute, never wraps): a block left from an
///   earlier lap of the ring has the wrong number for its position.
/// * `data_len`: payload bytes in use (0..=492); less than 492 only in the
///   last block written.
/// * `first_group`: byte offset inside the block (16..=508) where the first
///   redo group starting in this block begins, 0 when a group covers the
///   whole payload.
/// * `epoch`: startup counter of the server run that wrote the block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockHeader {
    /// Absolute block number.
    pub block_no: u64,
    /// Payload bytes in use.
    pub data_len: u16,
    /// Offset of the first group start in the block, or 0.
    pub first_group: u16,
    /// Epoch of the writer.
    pub epoch: u32,
}

/// Why a block read from disk is not usable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockDefect {
    /// The CRC32C does not match (torn write, never written, or damage).
    Checksum,
    /// Header fields out of range despite a valid checksum.
    BadHeader,
}

impl BlockHeader {
    /// Writes the header fields into `block[0..16]`.
    pub fn encode(&self, block: &mut [u8]) {
        block[0..8].copy_from_slice(&self.block_no.to_be_bytes());
        block[8..10].copy_from_slice(&self.data_len.to_be_bytes());
        block[10..12].copy_from_slice(&self.first_group.to_be_bytes());
        block[12..16].copy_from_slice(&self.epoch.to_be_bytes());
    }

    /// Reads the header fields without checking anything.
    pub fn decode_unchecked(block: &[u8]) -> BlockHeader {
        BlockHeader {
            block_no: be_u64(&block[0..8]),
            data_len: u16::from_be_bytes([block[8], block[9]]),
            first_group: u16::from_be_bytes([block[10], block[11]]),
            epoch: be_u32(&block[12..16]),
        }
    }

    /// Verifies the checksum and field ranges of a 512-byte block.
    pub fn decode(block: &[u8]) -> Result<BlockHeader, BlockDefect> {
        if !checksum_ok(block) {
            return Err(BlockDefect::Checksum);
        }
        let h = BlockHeader::decode_unchecked(block);
        let fg = usize::from(h.first_group);
        if usize::from(h.data_len) > BLOCK_PAYLOAD
            || (fg != 0 && !(BLOCK_HEADER_SIZE..=BLOCK_HEADER_SIZE + BLOCK_PAYLOAD).contains(&fg))
        {
            return Err(BlockDefect::BadHeader);
        }
        Ok(h)
    }
}

/// Stores the CRC32C of `block[0..508]` in `block[508..512]`.
pub fn seal(block: &mut [u8]) {
    let crc = crc32c::crc32c(&block[..CRC_OFFSET]);
    block[CRC_OFFSET..BLOCK_SIZE].copy_from_slice(&crc.to_be_bytes());
}

/// True when `block[508..512]` holds the CRC32C of `block[0..508]`.
pub fn checksum_ok(block: &[u8]) -> bool {
    crc32c::crc32c(&block[..CRC_OFFSET]) == be_u32(&block[CRC_OFFSET..BLOCK_SIZE])
}

/// Block 0 of every log file.
///
/// ```text
///  0      8        12       16          20         28         36     40          72      508 512
/// +------+--------+--------+-----------+----------+----------+------+-----------+ ... +----+
/// |magic |version |file_no |files_in_  |file_size |start_lsn |epoch |creator    |     |crc |
/// |BSLT..|u32     |u32     |group u32  |u64       |u64       |u32   |32 bytes   |     |    |
/// +------+--------+--------+-----------+----------+----------+------+-----------+ ... +----+
/// ```
///
/// `epoch` is raised at every startup (in files 0 and 1, fsynced before any
/// block of the new epoch is written); the current epoch is the largest one
/// found in any file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileInfo {
    /// Format version.
    pub version: u32,
    /// Index of this file in the group.
    pub file_no: u32,
    /// Files in the group when it was created.
    pub files_in_group: u32,
    /// Size of each file when the group was created.
    pub file_size: u64,
    /// LSN the log was created at.
    pub start_lsn: Lsn,
    /// Startup epoch.
    pub epoch: u32,
    /// Program that created the files.
    pub creator: String,
}

impl FileInfo {
    /// Encodes into a sealed 512-byte block.
    pub fn encode(&self, block: &mut [u8]) {
        block[..BLOCK_SIZE].fill(0);
        block[0..8].copy_from_slice(INFO_MAGIC);
        block[8..12].copy_from_slice(&self.version.to_be_bytes());
        block[12..16].copy_from_slice(&self.file_no.to_be_bytes());
        block[16..20].copy_from_slice(&self.files_in_group.to_be_bytes());
        block[20..28].copy_from_slice(&self.file_size.to_be_bytes());
        block[28..36].copy_from_slice(&self.start_lsn.get().to_be_bytes());
        block[36..40].copy_from_slice(&self.epoch.to_be_bytes());
        let creator = self.creator.as_bytes();
        let n = creator.len().min(CREATOR_LEN);
        block[40..40 + n].copy_from_slice(&creator[..n]);
        seal(block);
    }

    /// Decodes a file info block; `None` when the magic or checksum is wrong.
    pub fn decode(block: &[u8]) -> Option<FileInfo> {
        if &block[0..8] != INFO_MAGIC || !checksum_ok(block) {
            return None;
        }
        let creator = &block[40..40 + CREATOR_LEN];
        let end = creator.iter().position(|&b| b == 0).unwrap_or(CREATOR_LEN);
        Some(FileInfo {
            version: be_u32(&block[8..12]),
            file_no: be_u32(&block[12..16]),
            files_in_group: be_u32(&block[16..20]),
            file_size: be_u64(&block[20..28]),
            start_lsn: Lsn(be_u64(&block[28..36])),
            epoch: be_u32(&block[36..40]),
            creator: String::from_utf8_lossy(&creator[..end]).into_owned(),
        })
    }
}

/// One checkpoint slot (blocks 1 and 3 of file 0). Checkpoint number `n`
/// goes to slot `n mod 2`, so a torn checkpoint write leaves the previous
/// one intact in the other slot.
///
/// ```text
///  0       8               16              24              32      36     508  512
/// +-------+---------------+---------------+---------------+-------+ ... +----+
/// |magic  |checkpoint_no  |checkpoint_lsn |ring offset    |epoch  |     |crc |
/// |BSLTCK.|u64            |u64            |u64            |u32    |     |    |
/// +-------+---------------+---------------+---------------+-------+ ... +----+
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckpointSlot {
    /// Increases by one per checkpoint.
    pub number: u64,
    /// Redo before this LSN is no longer needed.
    pub lsn: Lsn,
    /// `lsn_to_ring_offset(lsn)` for the geometry that wrote it.
    pub ring_offset: u64,
    /// Epoch of the run that wrote it.
    pub epoch: u32,
}

impl CheckpointSlot {
    /// Slot index for this checkpoint number.
    pub fn slot_index(&self) -> usize {
        (self.number % 2) as usize
    }

    /// Encodes into a sealed 512-byte block.
    pub fn encode(&self, block: &mut [u8]) {
        block[..BLOCK_SIZE].fill(0);
        block[0..8].copy_from_slice(CHECKPOINT_MAGIC);
        block[8..16].copy_from_slice(&self.number.to_be_bytes());
        block[16..24].copy_from_slice(&self.lsn.get().to_be_bytes());
        block[24..32].copy_from_slice(&self.ring_offset.to_be_bytes());
        block[32..36].copy_from_slice(&self.epoch.to_be_bytes());
        seal(block);
    }

    /// Decodes a slot; `None` when it was never written or is damaged.
    pub fn decode(block: &[u8]) -> Option<CheckpointSlot> {
        if &block[0..8] != CHECKPOINT_MAGIC || !checksum_ok(block) {
            return None;
        }
        Some(CheckpointSlot {
            number: be_u64(&block[8..16]),
            lsn: Lsn(be_u64(&block[16..24])),
            ring_offset: be_u64(&block[24..32]),
            epoch: be_u32(&block[32..36]),
        })
    }
}

fn be_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_be_bytes(a)
}

fn be_u32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    u32::from_be_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_and_units_add_up() {
        assert_eq!(BLOCK_PAYLOAD, 492);
        assert_eq!(BLOCKS_PER_UNIT, 8);
        assert_eq!(WRITE_UNIT % BLOCK_SIZE, 0);
        assert!(CHECKPOINT_SLOT_OFFSETS
            .iter()
            .all(|&o| o + BLOCK_SIZE <= FILE_HEADER_SIZE as usize));
    }

    #[test]
    fn ring_offsets_follow_blocks_and_wrap() {
        let g = LogGeometry::new(4 << 20, 3);
        assert_eq!(g.ring_blocks, 3 * ((4 << 20) - 4096) / 512);
        assert_eq!(g.capacity(), g.ring_blocks * 492);
        assert_eq!(g.lsn_to_ring_offset(Lsn(0)), 16);
        assert_eq!(g.lsn_to_ring_offset(Lsn(491)), 16 + 491);
        assert_eq!(g.lsn_to_ring_offset(Lsn(492)), 512 + 16);
        // One full lap lands on the same offset.
        for lsn in [0u64, 1, 491, 492, 5000, 8_000_000] {
            assert_eq!(
                g.lsn_to_ring_offset(Lsn(lsn)),
                g.lsn_to_ring_offset(Lsn(lsn + g.capacity()))
            );
        }
        // Ring bytes map into files after their headers.
        assert_eq!(g.ring_offset_to_file(0), (0, 4096));
        assert_eq!(
            g.ring_offset_to_file(g.ring_bytes_per_file - 1),
            (0, (4 << 20) - 1)
        );
        assert_eq!(g.ring_offset_to_file(g.ring_bytes_per_file), (1, 4096));
        assert_eq!(
            g.ring_offset_to_file(2 * g.ring_bytes_per_file + 7),
            (2, 4096 + 7)
        );
        // Units: 1023 per file here.
        let per_file = g.ring_bytes_per_file / 4096;
        assert_eq!(g.unit_location(0), (0, 4096));
        assert_eq!(g.unit_location(per_file), (1, 4096));
        assert_eq!(g.unit_location(3 * per_file), (0, 4096));
        assert_eq!(g.units_to_file_end(0), per_file);
        assert_eq!(g.units_to_file_end(per_file - 1), 1);
        assert_eq!(g.units_to_file_end(3 * per_file + 5), per_file - 5);
    }

    #[test]
    fn block_header_round_trips_and_detects_damage() {
        let mut b = vec![0u8; BLOCK_SIZE];
        let h = BlockHeader {
            block_no: 77,
            data_len: 100,
            first_group: 30,
            epoch: 9,
        };
        h.encode(&mut b);
        b[16..116].fill(0xab);
        seal(&mut b);
        assert_eq!(BlockHeader::decode(&b), Ok(h));
        for pos in [0, 9, 200, 510] {
            let mut bad = b.clone();
            bad[pos] ^= 1;
            assert_eq!(
                BlockHeader::decode(&bad),
                Err(BlockDefect::Checksum),
                "flip at {pos}"
            );
        }
        let mut long = b.clone();
        BlockHeader { data_len: 493, ..h }.encode(&mut long);
        seal(&mut long);
        assert_eq!(BlockHeader::decode(&long), Err(BlockDefect::BadHeader));
        let mut fg = b.clone();
        BlockHeader {
            first_group: 3,
            ..h
        }
        .encode(&mut fg);
        seal(&mut fg);
        assert_eq!(BlockHeader::decode(&fg), Err(BlockDefect::BadHeader));
        // A never-written (all-zero) block is not valid.
        assert_eq!(
            BlockHeader::decode(&[0u8; BLOCK_SIZE]),
            Err(BlockDefect::Checksum)
        );
    }

    #[test]
    fn info_and_checkpoint_blocks_round_trip() {
        let info = FileInfo {
            version: FORMAT_VERSION,
            file_no: 1,
            files_in_group: 2,
            file_size: 4 << 20,
            start_lsn: Lsn(8192),
            epoch: 3,
            creator: CREATOR.to_string(),
        };
        let mut b = [0u8; BLOCK_SIZE];
        info.encode(&mut b);
        assert_eq!(FileInfo::decode(&b), Some(info));
        b[20] ^= 0x10;
        assert_eq!(FileInfo::decode(&b), None);

        let cp = CheckpointSlot {
            number: 5,
            lsn: Lsn(123_456),
            ring_offset: 999,
            epoch: 2,
        };
        let mut c = [0u8; BLOCK_SIZE];
        cp.encode(&mut c);
        assert_eq!(CheckpointSlot::decode(&c), Some(cp));
        assert_eq!(cp.slot_index(), 1);
        c[17] ^= 1;
        assert_eq!(CheckpointSlot::decode(&c), None);
        assert_eq!(CheckpointSlot::decode(&[0u8; BLOCK_SIZE]), None);
    }
}
