//! Binary encoding of redo records and the streaming decoder.

use std::borrow::Cow;

use basalt_common::{IndexId, PageId, SpaceId, TrxId, PAGE_SIZE};

use super::record::{PageImage, RedoRecord};
use crate::error::{PageError, Result};
use crate::header::{PageType, FIL_PAGE_LSN, FIL_PAGE_SPACE, FIL_PAGE_TRAILER};

/// Type byte of [`RedoRecord::InitIndex`].
pub const REDO_INIT_INDEX: u8 = 0x01;
/// Type byte of [`RedoRecord::InitOverflow`].
pub const REDO_INIT_OVERFLOW: u8 = 0x02;
/// Type byte of [`RedoRecord::InitPage`].
pub const REDO_INIT_PAGE: u8 = 0x03;
/// Type byte of [`RedoRecord::Insert`].
pub const REDO_INSERT: u8 = 0x10;
/// Type byte of [`RedoRecord::InsertMany`].
pub const REDO_INSERT_MANY: u8 = 0x11;
/// Type byte of [`RedoRecord::Delete`].
pub const REDO_DELETE: u8 = 0x12;
/// Type byte of [`RedoRecord::DeleteRange`].
pub const REDO_DELETE_RANGE: u8 = 0x13;
/// Type byte of [`RedoRecord::Replace`].
pub const REDO_REPLACE: u8 = 0x14;
/// Type byte of [`RedoRecord::SetDeleteMark`].
pub const REDO_SET_DELETE_MARK: u8 = 0x15;
/// Type byte of [`RedoRecord::Compact`].
pub const REDO_COMPACT: u8 = 0x16;
/// Type byte of [`RedoRecord::SetMaxTrxId`].
pub const REDO_SET_MAX_TRX_ID: u8 = 0x17;
/// Type byte of [`RedoRecord::WriteBytes`].
pub const REDO_WRITE_BYTES: u8 = 0x20;
/// Type byte of [`RedoRecord::OverflowWrite`].
pub const REDO_OVERFLOW_WRITE: u8 = 0x21;
/// Type byte of [`RedoRecord::OverflowSetNext`].
pub const REDO_OVERFLOW_SET_NEXT: u8 = 0x22;
/// Type byte of [`RedoRecord::FullPage`].
pub const REDO_FULL_PAGE: u8 = 0x30;
/// Type byte of [`RedoRecord::MtrEnd`].
pub const REDO_MTR_END: u8 = 0x7F;

/// Logged part of a full-page image: the header fields before the LSN.
const IMAGE_HEAD: std::ops::Range<usize> = FIL_PAGE_SPACE..FIL_PAGE_LSN;
/// Logged part of a full-page image: everything after the LSN up to the
/// trailer (its longest run of zero bytes is elided).
const IMAGE_BODY: std::ops::Range<usize> = FIL_PAGE_LSN + 8..FIL_PAGE_TRAILER;

/// Largest length any length field of a redo record may carry; a larger
/// one is garbage, not a torn tail.
const MAX_PAYLOAD: u64 = PAGE_SIZE as u64;

/// One record read by [`RedoRecord::decode`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedRedo<'a> {
    /// Page the record applies to; `None` for [`RedoRecord::MtrEnd`].
    pub page_id: Option<PageId>,
    /// The record.
    pub record: RedoRecord<'a>,
    /// Bytes the record took in the stream.
    pub len: usize,
}

/// Appends a LEB128 varint.
#[inline]
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

impl RedoRecord<'_> {
    /// Appends the record for page `page_id` to `out` (a mini-transaction's
    /// log buffer). `page_id` is ignored for [`RedoRecord::MtrEnd`].
    // PERF: appends only; `out` is reused by the caller.
    pub fn encode(&self, page_id: PageId, out: &mut Vec<u8>) {
        out.push(self.type_byte());
        if let RedoRecord::MtrEnd = self {
            return;
        }
        put_varint(out, u64::from(page_id.space.0));
        put_varint(out, u64::from(page_id.page_no));
        let put_bytes = |out: &mut Vec<u8>, b: &[u8]| {
            put_varint(out, b.len() as u64);
            out.extend_from_slice(b);
        };
        match self {
            RedoRecord::InitIndex {
                level,
                index_id,
                flags,
            } => {
                put_varint(out, u64::from(*level));
                put_varint(out, index_id.0);
                out.push(*flags);
            }
            RedoRecord::InitOverflow | RedoRecord::Compact | RedoRecord::MtrEnd => {}
            RedoRecord::InitPage { page_type } => put_varint(out, *page_type as u64),
            RedoRecord::Insert { slot, rec } | RedoRecord::Replace { slot, rec } => {
                put_varint(out, u64::from(*slot));
                put_bytes(out, rec);
            }
            RedoRecord::InsertMany { slot, recs } => {
                put_varint(out, u64::from(*slot));
                put_bytes(out, recs);
            }
            RedoRecord::Delete { slot } => put_varint(out, u64::from(*slot)),
            RedoRecord::DeleteRange { start, end } => {
                put_varint(out, u64::from(*start));
                put_varint(out, u64::from(*end));
            }
            RedoRecord::SetDeleteMark { slot, marked } => {
                put_varint(out, u64::from(*slot));
                out.push(u8::from(*marked));
            }
            RedoRecord::SetMaxTrxId { trx_id } => put_varint(out, trx_id.0),
            RedoRecord::WriteBytes { offset, bytes } => {
                put_varint(out, u64::from(*offset));
                put_bytes(out, bytes);
            }
            RedoRecord::OverflowWrite { next, data } => {
                put_varint(out, u64::from(*next));
                put_bytes(out, data);
            }
            RedoRecord::OverflowSetNext { next } => put_varint(out, u64::from(*next)),
            RedoRecord::FullPage { image } => {
                let img = image.bytes();
                out.extend_from_slice(&img[IMAGE_HEAD]);
                let body = &img[IMAGE_BODY];
                let (zs, zl) = longest_zero_run(body);
                put_bytes(out, &body[..zs]);
                put_bytes(out, &body[zs + zl..]);
            }
        }
    }

    /// The type byte this record is encoded with.
    pub fn type_byte(&self) -> u8 {
        match self {
            RedoRecord::InitIndex { .. } => REDO_INIT_INDEX,
            RedoRecord::InitOverflow => REDO_INIT_OVERFLOW,
            RedoRecord::InitPage { .. } => REDO_INIT_PAGE,
            RedoRecord::Insert { .. } => REDO_INSERT,
            RedoRecord::InsertMany { .. } => REDO_INSERT_MANY,
            RedoRecord::Delete { .. } => REDO_DELETE,
            RedoRecord::DeleteRange { .. } => REDO_DELETE_RANGE,
            RedoRecord::Replace { .. } => REDO_REPLACE,
            RedoRecord::SetDeleteMark { .. } => REDO_SET_DELETE_MARK,
            RedoRecord::Compact => REDO_COMPACT,
            RedoRecord::SetMaxTrxId { .. } => REDO_SET_MAX_TRX_ID,
            RedoRecord::WriteBytes { .. } => REDO_WRITE_BYTES,
            RedoRecord::OverflowWrite { .. } => REDO_OVERFLOW_WRITE,
            RedoRecord::OverflowSetNext { .. } => REDO_OVERFLOW_SET_NEXT,
            RedoRecord::FullPage { .. } => REDO_FULL_PAGE,
            RedoRecord::MtrEnd => REDO_MTR_END,
        }
    }
}

/// `(start, len)` of the first longest run of zero bytes (`(len, 0)`-ish
/// when there is none).
fn longest_zero_run(b: &[u8]) -> (usize, usize) {
    let (mut best, mut best_len) = (b.len(), 0);
    let mut i = 0;
    while i < b.len() {
        if b[i] != 0 {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && b[i] == 0 {
            i += 1;
        }
        if i - start > best_len {
            (best, best_len) = (start, i - start);
        }
    }
    (best, best_len)
}

/// Reading position in a redo byte slice.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn corrupt(&self, at: usize, reason: impl Into<String>) -> PageError {
        PageError::RedoCorrupt {
            at,
            reason: reason.into(),
        }
    }

    fn byte(&mut self) -> Result<u8> {
        let b = *self.buf.get(self.pos).ok_or(PageError::RedoIncomplete)?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64> {
        let start = self.pos;
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            let bits = u64::from(b & 0x7F);
            if shift == 63 && bits > 1 {
                return Err(self.corrupt(start, "varint overflows 64 bits"));
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.corrupt(start, "varint longer than 10 bytes"))
    }

    fn varint_max(&mut self, max: u64, what: &str) -> Result<u64> {
        let at = self.pos;
        let v = self.varint()?;
        if v > max {
            return Err(self.corrupt(at, format!("{what} {v} exceeds {max}")));
        }
        Ok(v)
    }

    fn u16(&mut self, what: &str) -> Result<u16> {
        Ok(self.varint_max(u64::from(u16::MAX), what)? as u16)
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        Ok(self.varint_max(u64::from(u32::MAX), what)? as u32)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).ok_or(PageError::RedoIncomplete)?;
        let b = self
            .buf
            .get(self.pos..end)
            .ok_or(PageError::RedoIncomplete)?;
        self.pos = end;
        Ok(b)
    }

    fn bytes(&mut self, what: &str) -> Result<&'a [u8]> {
        let n = self.varint_max(MAX_PAYLOAD, what)? as usize;
        self.take(n)
    }
}

impl<'a> RedoRecord<'a> {
    /// Decodes the record at the start of `buf`, borrowing its payload.
    ///
    /// Returns [`PageError::RedoIncomplete`] when `buf` ends inside the
    /// record (every strict prefix of a valid record is incomplete, never
    /// corrupt) and [`PageError::RedoCorrupt`] for bytes no encoder writes:
    /// unknown type byte, varint overflow, a value out of range for its
    /// field, a length beyond one page.
    pub fn decode(buf: &'a [u8]) -> Result<DecodedRedo<'a>> {
        let mut c = Cursor { buf, pos: 0 };
        let ty = c.byte()?;
        if ty == REDO_MTR_END {
            return Ok(DecodedRedo {
                page_id: None,
                record: RedoRecord::MtrEnd,
                len: 1,
            });
        }
        if !matches!(
            ty,
            REDO_INIT_INDEX..=REDO_INIT_PAGE
                | REDO_INSERT..=REDO_SET_MAX_TRX_ID
                | REDO_WRITE_BYTES..=REDO_OVERFLOW_SET_NEXT
                | REDO_FULL_PAGE
        ) {
            return Err(c.corrupt(0, format!("unknown redo record type {ty:#04x}")));
        }
        let space = SpaceId(c.u32("space id")?);
        let page_id = PageId::new(space, c.u32("page number")?);
        let record = match ty {
            REDO_INIT_INDEX => RedoRecord::InitIndex {
                level: c.u16("level")?,
                index_id: IndexId(c.varint()?),
                flags: c.byte()?,
            },
            REDO_INIT_OVERFLOW => RedoRecord::InitOverflow,
            REDO_INIT_PAGE => {
                let at = c.pos;
                let raw = c.u16("page type")?;
                match PageType::from_u16(raw) {
                    Some(PageType::Index | PageType::Overflow) | None => {
                        return Err(
                            c.corrupt(at, format!("page type {raw} cannot be plain-initialised"))
                        );
                    }
                    Some(page_type) => RedoRecord::InitPage { page_type },
                }
            }
            REDO_INSERT => RedoRecord::Insert {
                slot: c.u16("slot")?,
                rec: Cow::Borrowed(c.bytes("record length")?),
            },
            REDO_INSERT_MANY => RedoRecord::InsertMany {
                slot: c.u16("slot")?,
                recs: Cow::Borrowed(c.bytes("record run length")?),
            },
            REDO_DELETE => RedoRecord::Delete {
                slot: c.u16("slot")?,
            },
            REDO_DELETE_RANGE => RedoRecord::DeleteRange {
                start: c.u16("range start")?,
                end: c.u16("range end")?,
            },
            REDO_REPLACE => RedoRecord::Replace {
                slot: c.u16("slot")?,
                rec: Cow::Borrowed(c.bytes("record length")?),
            },
            REDO_SET_DELETE_MARK => {
                let slot = c.u16("slot")?;
                let at = c.pos;
                let marked = match c.byte()? {
                    0 => false,
                    1 => true,
                    b => return Err(c.corrupt(at, format!("delete-mark flag {b}"))),
                };
                RedoRecord::SetDeleteMark { slot, marked }
            }
            REDO_COMPACT => RedoRecord::Compact,
            REDO_SET_MAX_TRX_ID => RedoRecord::SetMaxTrxId {
                trx_id: TrxId(c.varint()?),
            },
            REDO_WRITE_BYTES => {
                let offset = c.u16("offset")?;
                RedoRecord::WriteBytes {
                    offset,
                    bytes: Cow::Borrowed(c.bytes("write length")?),
                }
            }
            REDO_OVERFLOW_WRITE => {
                let next = c.u32("next page")?;
                RedoRecord::OverflowWrite {
                    next,
                    data: Cow::Borrowed(c.bytes("chunk length")?),
                }
            }
            REDO_OVERFLOW_SET_NEXT => RedoRecord::OverflowSetNext {
                next: c.u32("next page")?,
            },
            REDO_FULL_PAGE => {
                let head = c.take(IMAGE_HEAD.len())?;
                let at = c.pos;
                let before = c.bytes("image prefix length")?;
                let after = c.bytes("image suffix length")?;
                if before.len() + after.len() > IMAGE_BODY.len() {
                    return Err(c.corrupt(at, "full-page image longer than a page"));
                }
                let mut img = vec![0u8; PAGE_SIZE];
                img[IMAGE_HEAD].copy_from_slice(head);
                img[IMAGE_BODY.start..IMAGE_BODY.start + before.len()].copy_from_slice(before);
                img[IMAGE_BODY.end - after.len()..IMAGE_BODY.end].copy_from_slice(after);
                // Invariant: the buffer is PAGE_SIZE long with the unlogged
                // fields zero, so PageImage::new accepts it as is.
                RedoRecord::FullPage {
                    image: PageImage::new(img).expect("page-sized image"),
                }
            }
            _ => unreachable!("type byte checked above"),
        };
        Ok(DecodedRedo {
            page_id: Some(page_id),
            record,
            len: c.pos,
        })
    }
}

/// Decodes a byte slice record after record.
///
/// Yields each record, then stops after the first error: a
/// [`PageError::RedoIncomplete`] at the end means the slice ends inside a
/// record (a torn tail); a [`PageError::RedoCorrupt`] carries the offset of
/// the bad byte in the whole slice. [`RedoReader::position`] tells how far
/// complete records reached.
#[derive(Clone, Debug)]
pub struct RedoReader<'a> {
    buf: &'a [u8],
    pos: usize,
    failed: bool,
}

impl<'a> RedoReader<'a> {
    /// Starts reading at the beginning of `buf`.
    pub fn new(buf: &'a [u8]) -> RedoReader<'a> {
        RedoReader {
            buf,
            pos: 0,
            failed: false,
        }
    }

    /// Bytes consumed by the records returned so far.
    pub fn position(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for RedoReader<'a> {
    type Item = Result<DecodedRedo<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.buf.len() {
            return None;
        }
        match RedoRecord::decode(&self.buf[self.pos..]) {
            Ok(d) => {
                self.pos += d.len;
                Some(Ok(d))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(match e {
                    PageError::RedoCorrupt { at, reason } => PageError::RedoCorrupt {
                        at: self.pos + at,
                        reason,
                    },
                    other => other,
                }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_overflow_is_corrupt() {
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            let mut c = Cursor { buf: &out, pos: 0 };
            assert_eq!(c.varint(), Ok(v));
            assert_eq!(c.pos, out.len());
            for cut in 0..out.len() {
                let mut c = Cursor {
                    buf: &out[..cut],
                    pos: 0,
                };
                assert_eq!(c.varint(), Err(PageError::RedoIncomplete));
            }
        }
        let too_big = [0xFF; 9].iter().copied().chain([0x02]).collect::<Vec<_>>();
        let mut c = Cursor {
            buf: &too_big,
            pos: 0,
        };
        assert!(matches!(
            c.varint(),
            Err(PageError::RedoCorrupt { at: 0, .. })
        ));
        let too_long = [0x80u8; 11];
        let mut c = Cursor {
            buf: &too_long,
            pos: 0,
        };
        assert!(matches!(c.varint(), Err(PageError::RedoCorrupt { .. })));
    }

    #[test]
    fn longest_zero_run_picks_the_first_longest() {
        assert_eq!(longest_zero_run(&[1, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]), (4, 3));
        assert_eq!(longest_zero_run(&[1, 2]), (2, 0));
        assert_eq!(longest_zero_run(&[0, 0]), (0, 2));
    }
}
