//! The fixed record header: the only record bytes the page layer reads.
//!
//! ```text
//!  byte 0       info bits
//!                 0x80  delete-marked
//!                 0x40  min-record: leftmost node pointer of its level,
//!                       compares below every key
//!                 0x01  node pointer (clear: leaf record)
//!                 0x3e  reserved, always zero
//!  bytes 1..3   total record length in bytes, header included (big-endian u16)
//! ```
//!
//! Everything after these three bytes belongs to the record format
//! ([`crate::rec`]) and is opaque to [`crate::index_page`].

/// Bytes in the fixed record header.
pub const REC_HEADER_LEN: usize = 3;
/// Info bit: the record is delete-marked (logically deleted, awaiting purge).
pub const INFO_DELETED: u8 = 0x80;
/// Info bit: leftmost node pointer of a non-leaf level; compares below every key.
pub const INFO_MIN_REC: u8 = 0x40;
/// Info bit: node-pointer record (key fields + child page number).
pub const INFO_NODE_PTR: u8 = 0x01;
/// Every info bit with a meaning; the others must be zero.
pub const INFO_KNOWN_BITS: u8 = INFO_DELETED | INFO_MIN_REC | INFO_NODE_PTR;

/// Reads `(info bits, total length)` from the start of `rec`, or `None` when
/// fewer than [`REC_HEADER_LEN`] bytes are given.
#[inline]
pub fn read_rec_header(rec: &[u8]) -> Option<(u8, usize)> {
    match rec {
        [info, hi, lo, ..] => Some((*info, usize::from(u16::from_be_bytes([*hi, *lo])))),
        _ => None,
    }
}

/// Writes the fixed header at the start of `rec` (which must hold at least
/// [`REC_HEADER_LEN`] bytes; `len` must fit in a `u16`, see
/// [`crate::MAX_REC_LEN`]).
#[inline]
pub(crate) fn write_rec_header(rec: &mut [u8], info: u8, len: usize) {
    debug_assert!(len <= usize::from(u16::MAX));
    rec[0] = info;
    rec[1..3].copy_from_slice(&(len as u16).to_be_bytes());
}

/// Sets or clears the delete mark in an encoded record held in memory.
/// Does nothing on a slice shorter than the header.
pub fn set_rec_delete_mark(rec: &mut [u8], marked: bool) {
    if let Some(info) = rec.first_mut() {
        if marked {
            *info |= INFO_DELETED;
        } else {
            *info &= !INFO_DELETED;
        }
    }
}
