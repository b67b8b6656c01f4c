//! Zero-copy decoding of records: [`RecordRef`].

use std::cmp::Ordering;

use basalt_common::{PageNo, RollPtr, TrxId};

use super::encode::{LEN_EXTERN, LEN_ONE_BYTE_LIMIT, LEN_TWO_BYTES};
use super::extern_ref::{ExternRef, EXTERN_REF_LEN};
use super::info::{
    read_rec_header, INFO_DELETED, INFO_KNOWN_BITS, INFO_MIN_REC, INFO_NODE_PTR, REC_HEADER_LEN,
};
use super::layout::{PhysLayout, PhysLen, RecordLayout, ROLL_PTR_LEN, TRX_ID_LEN};
use crate::error::{PageError, Result};
use crate::index_page::MAX_REC_LEN;

/// Offsets entry flag: the field is NULL.
const OFF_NULL: u16 = 0x8000;
/// Offsets entry flag: the field is stored externally.
const OFF_EXTERN: u16 = 0x4000;
/// Offsets entry: end of the field, relative to the record start.
const OFF_MASK: u16 = 0x3FFF;
/// Physical fields whose offsets live inline in a [`RecordRef`]; wider
/// records spill to the heap.
const INLINE_FIELDS: usize = 32;

const _: () = assert!(MAX_REC_LEN <= OFF_MASK as usize);

/// Field end offsets of one record, inline for up to [`INLINE_FIELDS`].
#[derive(Clone, Debug)]
enum Offsets {
    Inline { n: usize, buf: [u16; INLINE_FIELDS] },
    Heap(Vec<u16>),
}

impl Offsets {
    fn new(n: usize) -> Offsets {
        if n <= INLINE_FIELDS {
            Offsets::Inline {
                n,
                buf: [0; INLINE_FIELDS],
            }
        } else {
            Offsets::Heap(vec![0; n])
        }
    }

    #[inline]
    fn as_slice(&self) -> &[u16] {
        match self {
            Offsets::Inline { n, buf } => &buf[..*n],
            Offsets::Heap(v) => v,
        }
    }

    #[inline]
    fn as_mut_slice(&mut self) -> &mut [u16] {
        match self {
            Offsets::Inline { n, buf } => &mut buf[..*n],
            Offsets::Heap(v) => v,
        }
    }
}

/// Reads one entry of the variable-length array at `*cur`, advancing it.
/// Returns `(length, externally stored)`.
#[inline]
pub(crate) fn read_len_entry(rec: &[u8], cur: &mut usize, long: bool) -> Result<(usize, bool)> {
    let Some(&b0) = rec.get(*cur) else {
        return Err(PageError::BadRecord(
            "length array runs past the record".into(),
        ));
    };
    *cur += 1;
    if !long || b0 & LEN_TWO_BYTES == 0 {
        return Ok((usize::from(b0), false));
    }
    let Some(&b1) = rec.get(*cur) else {
        return Err(PageError::BadRecord(
            "length array runs past the record".into(),
        ));
    };
    *cur += 1;
    let len = usize::from(b0 & 0x3F) << 8 | usize::from(b1);
    Ok((len, b0 & LEN_EXTERN != 0))
}

/// Reads the NULL bit `bit` of a record whose bitmap starts after the header.
#[inline]
pub(crate) fn null_bit_set(rec: &[u8], bit: usize) -> bool {
    rec[REC_HEADER_LEN + bit / 8] >> (bit % 8) & 1 == 1
}

/// Common header checks; returns `(info, physical layout)`.
#[inline]
pub(crate) fn parse_header<'l>(
    layout: &'l RecordLayout,
    rec: &[u8],
) -> Result<(u8, &'l PhysLayout)> {
    let Some((info, len)) = read_rec_header(rec) else {
        return Err(PageError::BadRecord(format!(
            "{} bytes cannot hold a record header",
            rec.len()
        )));
    };
    if len != rec.len() {
        return Err(PageError::BadRecord(format!(
            "record header says {len} bytes, {} given",
            rec.len()
        )));
    }
    if len > MAX_REC_LEN {
        return Err(PageError::RecordTooLarge {
            len,
            max: MAX_REC_LEN,
        });
    }
    if info & !INFO_KNOWN_BITS != 0 {
        return Err(PageError::BadRecord(format!(
            "reserved info bits set: {info:#04x}"
        )));
    }
    let node_ptr = info & INFO_NODE_PTR != 0;
    if info & INFO_MIN_REC != 0 && !node_ptr {
        return Err(PageError::BadRecord(
            "min-record flag on a leaf record".into(),
        ));
    }
    let phys = if node_ptr { &layout.node } else { &layout.leaf };
    if REC_HEADER_LEN + phys.null_bytes > len {
        return Err(PageError::BadRecord(
            "NULL bitmap runs past the record".into(),
        ));
    }
    Ok((info, phys))
}

/// A decoded record: field boundaries computed once, field bytes borrowed
/// from the page.
///
/// Field numbers are user field numbers (see [`RecordLayout`]): a leaf
/// record has `layout.n_fields()` fields, a node pointer `layout.n_key()`.
/// Asking for a field number beyond [`RecordRef::n_fields`] is a caller bug
/// and panics, like slice indexing; everything read from the bytes is
/// validated by [`RecordRef::new`].
#[derive(Clone, Debug)]
pub struct RecordRef<'a> {
    layout: &'a RecordLayout,
    bytes: &'a [u8],
    info: u8,
    data_start: usize,
    offs: Offsets,
}

impl<'a> RecordRef<'a> {
    /// Decodes `bytes` (one whole record, fixed header included) under
    /// `layout`. Fails with [`PageError::BadRecord`] unless the bytes are
    /// exactly what the encoder produces for some values.
    // PERF: no allocation for records of up to 32 physical fields.
    pub fn new(layout: &'a RecordLayout, bytes: &'a [u8]) -> Result<RecordRef<'a>> {
        let (info, phys) = parse_header(layout, bytes)?;
        let len = bytes.len();
        if phys.n_nullable % 8 != 0 {
            let last = bytes[REC_HEADER_LEN + phys.null_bytes - 1];
            if last >> (phys.n_nullable % 8) != 0 {
                return Err(PageError::BadRecord(
                    "padding bits of the NULL bitmap are set".into(),
                ));
            }
        }
        let mut offs = Offsets::new(phys.fields.len());
        let slots = offs.as_mut_slice();
        let mut cur = REC_HEADER_LEN + phys.null_bytes;
        // First pass: lengths and flags (the data start is known only after
        // the whole length array has been read).
        for (p, f) in phys.fields.iter().enumerate() {
            if f.null_bit.is_some_and(|b| null_bit_set(bytes, b)) {
                slots[p] = OFF_NULL;
                continue;
            }
            slots[p] = match f.len {
                PhysLen::Fixed(n) => n as u16,
                PhysLen::Var { max, long, ext_ok } => {
                    let entry_at = cur;
                    let (flen, ext) = read_len_entry(bytes, &mut cur, long)?;
                    if long && cur - entry_at == 2 && !ext && flen < LEN_ONE_BYTE_LIMIT {
                        return Err(PageError::BadRecord(format!(
                            "field {p}: two-byte length entry for {flen} bytes"
                        )));
                    }
                    if ext {
                        if !ext_ok || flen != EXTERN_REF_LEN {
                            return Err(PageError::BadRecord(format!(
                                "field {p}: bad external reference ({flen} bytes)"
                            )));
                        }
                        flen as u16 | OFF_EXTERN
                    } else {
                        if flen as u64 > u64::from(max) || flen > len {
                            return Err(PageError::BadRecord(format!(
                                "field {p}: {flen} bytes exceed its maximum {max}"
                            )));
                        }
                        flen as u16
                    }
                }
            };
        }
        let data_start = cur;
        // Second pass: turn lengths into end offsets.
        let mut end = data_start;
        for s in slots.iter_mut() {
            if *s & OFF_NULL != 0 {
                *s = OFF_NULL | end as u16;
                continue;
            }
            end += usize::from(*s & OFF_MASK);
            if end > len {
                return Err(PageError::BadRecord(format!(
                    "field data runs to {end}, record has {len} bytes"
                )));
            }
            *s = (*s & OFF_EXTERN) | end as u16;
        }
        if end != len {
            return Err(PageError::BadRecord(format!(
                "field data ends at {end}, record has {len} bytes"
            )));
        }
        Ok(RecordRef {
            layout,
            bytes,
            info,
            data_start,
            offs,
        })
    }

    /// The layout the record was decoded with.
    pub fn layout(&self) -> &'a RecordLayout {
        self.layout
    }

    /// The whole record.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Info bits of the fixed header.
    pub fn info(&self) -> u8 {
        self.info
    }

    /// True if the record is delete-marked.
    pub fn is_delete_marked(&self) -> bool {
        self.info & INFO_DELETED != 0
    }

    /// True for the leftmost node pointer of a level.
    pub fn is_min_rec(&self) -> bool {
        self.info & INFO_MIN_REC != 0
    }

    /// True for node-pointer records.
    pub fn is_node_ptr(&self) -> bool {
        self.info & INFO_NODE_PTR != 0
    }

    /// Number of user fields: `n_fields()` of the layout for leaf records,
    /// `n_key()` for node pointers.
    pub fn n_fields(&self) -> usize {
        if self.is_node_ptr() {
            self.layout.n_key()
        } else {
            self.layout.n_fields()
        }
    }

    #[inline]
    fn phys_of(&self, i: usize) -> usize {
        assert!(
            i < self.n_fields(),
            "field {i} of a record with {} fields",
            self.n_fields()
        );
        if self.is_node_ptr() {
            i
        } else {
            self.layout.leaf_phys(i)
        }
    }

    /// `(start, end, flags)` of physical field `p`.
    #[inline]
    fn phys_range(&self, p: usize) -> (usize, usize, u16) {
        let offs = self.offs.as_slice();
        let start = if p == 0 {
            self.data_start
        } else {
            usize::from(offs[p - 1] & OFF_MASK)
        };
        let e = offs[p];
        (start, usize::from(e & OFF_MASK), e & !OFF_MASK)
    }

    #[inline]
    fn phys_field(&self, p: usize) -> Option<&'a [u8]> {
        let (start, end, flags) = self.phys_range(p);
        (flags & OFF_NULL == 0).then(|| &self.bytes[start..end])
    }

    /// Local bytes of user field `i`; `None` if NULL. For an externally
    /// stored field these are the 20 bytes of its [`ExternRef`].
    #[inline]
    pub fn field(&self, i: usize) -> Option<&'a [u8]> {
        self.phys_field(self.phys_of(i))
    }

    /// True if user field `i` is stored externally.
    pub fn is_external(&self, i: usize) -> bool {
        self.phys_range(self.phys_of(i)).2 & OFF_EXTERN != 0
    }

    /// The overflow reference of user field `i`, if it is stored externally.
    pub fn extern_ref(&self, i: usize) -> Option<ExternRef> {
        if !self.is_external(i) {
            return None;
        }
        // Invariant: RecordRef::new accepted this field as external only
        // with exactly EXTERN_REF_LEN local bytes.
        self.field(i)
            .map(|b| ExternRef::from_bytes(b).expect("validated length"))
    }

    /// True if any field is stored externally.
    pub fn has_external(&self) -> bool {
        self.offs.as_slice().iter().any(|&o| o & OFF_EXTERN != 0)
    }

    /// `DB_TRX_ID` of a clustered-index leaf record.
    pub fn trx_id(&self) -> Option<TrxId> {
        self.sys_field(0).map(|b| {
            let mut a = [0u8; TRX_ID_LEN];
            a.copy_from_slice(b);
            TrxId::from_bytes(a)
        })
    }

    /// `DB_ROLL_PTR` of a clustered-index leaf record.
    pub fn roll_ptr(&self) -> Option<RollPtr> {
        self.sys_field(1).map(|b| {
            let mut a = [0u8; ROLL_PTR_LEN];
            a.copy_from_slice(b);
            RollPtr::from_bytes(a)
        })
    }

    fn sys_field(&self, k: usize) -> Option<&'a [u8]> {
        if self.is_node_ptr() || !self.layout.is_clustered() {
            return None;
        }
        self.phys_field(self.layout.n_key() + k)
    }

    /// Child page of a node-pointer record.
    pub fn child_page_no(&self) -> Option<PageNo> {
        if !self.is_node_ptr() {
            return None;
        }
        self.phys_field(self.layout.n_key())
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Orders this record against a search key (a prefix of the key
    /// fields): `Less` if the record sorts before every record matching the
    /// key. The min-record sorts before everything.
    ///
    /// # Panics
    /// If `key` has more fields than the index key (a caller bug).
    pub fn compare_key(&self, key: &[Option<&[u8]>]) -> Ordering {
        assert!(
            key.len() <= self.layout.n_key(),
            "search key longer than the index key"
        );
        if self.is_min_rec() {
            return Ordering::Less;
        }
        let phys = if self.is_node_ptr() {
            &self.layout.node
        } else {
            &self.layout.leaf
        };
        for (p, k) in key.iter().enumerate() {
            let ord = cmp_field(phys.fields[p].coll, self.phys_field(p), *k);
            if ord != Ordering::Equal {
                return ord;
            }
        }
        Ordering::Equal
    }

    /// Orders two records of the same index by their key fields.
    pub fn key_cmp(&self, other: &RecordRef<'_>) -> Ordering {
        match (self.is_min_rec(), other.is_min_rec()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            (false, false) => {}
        }
        let phys = if self.is_node_ptr() {
            &self.layout.node
        } else {
            &self.layout.leaf
        };
        for p in 0..self.layout.n_key() {
            let ord = cmp_field(phys.fields[p].coll, self.phys_field(p), other.phys_field(p));
            if ord != Ordering::Equal {
                return ord;
            }
        }
        Ordering::Equal
    }
}

/// Orders two field values: NULL first, then by collation.
#[inline]
pub(crate) fn cmp_field(
    coll: super::collation::Collation,
    a: Option<&[u8]>,
    b: Option<&[u8]>,
) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => coll.compare(a, b),
    }
}
