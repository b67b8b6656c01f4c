//! Building records from field values.

use basalt_common::{PageNo, RollPtr, TrxId};

use super::decode::RecordRef;
use super::extern_ref::{ExternRef, EXTERN_REF_LEN};
use super::info::{write_rec_header, INFO_MIN_REC, INFO_NODE_PTR, REC_HEADER_LEN};
use super::layout::{PhysLayout, PhysLen, RecordLayout};
use crate::error::{PageError, Result};
use crate::index_page::MAX_REC_LEN;

/// Length-array flag: the entry takes two bytes.
pub(crate) const LEN_TWO_BYTES: u8 = 0x80;
/// Length-array flag (two-byte entries only): the field is stored
/// externally; its local bytes are an [`ExternRef`].
pub(crate) const LEN_EXTERN: u8 = 0x40;
/// Largest length a two-byte entry can carry.
pub(crate) const LEN_MAX: usize = 0x3FFF;
/// Long fields shorter than this use a one-byte entry.
pub(crate) const LEN_ONE_BYTE_LIMIT: usize = 0x80;

/// The value of one field handed to the encoder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldValue<'a> {
    /// SQL NULL (the field must be nullable).
    Null,
    /// The bytes, stored in the record.
    Inline(&'a [u8]),
    /// Stored on overflow pages; the record keeps the reference.
    External(ExternRef),
}

impl<'a> From<Option<&'a [u8]>> for FieldValue<'a> {
    fn from(v: Option<&'a [u8]>) -> FieldValue<'a> {
        v.map_or(FieldValue::Null, FieldValue::Inline)
    }
}

/// The clustered-index system columns of a leaf record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SysCols {
    /// `DB_TRX_ID`: the transaction that wrote this version.
    pub trx_id: TrxId,
    /// `DB_ROLL_PTR`: the undo record holding the previous version.
    pub roll_ptr: RollPtr,
}

/// A physical field value during encoding.
#[derive(Clone, Copy)]
enum Val<'a> {
    Null,
    Bytes(&'a [u8]),
    Ext([u8; EXTERN_REF_LEN]),
}

impl RecordLayout {
    /// Appends a leaf record to `out` and returns its length. `values` holds
    /// one entry per user field (`None` = NULL); `sys` must be given exactly
    /// for clustered indexes. On error `out` is left as it was.
    pub fn encode_leaf(
        &self,
        values: &[Option<&[u8]>],
        sys: Option<SysCols>,
        out: &mut Vec<u8>,
    ) -> Result<usize> {
        self.encode_leaf_with(
            values.len(),
            |i| values[i].map_or(Val::Null, Val::Bytes),
            sys,
            out,
        )
    }

    /// Like [`RecordLayout::encode_leaf`], with externally stored fields.
    pub fn encode_leaf_values(
        &self,
        values: &[FieldValue<'_>],
        sys: Option<SysCols>,
        out: &mut Vec<u8>,
    ) -> Result<usize> {
        self.encode_leaf_with(
            values.len(),
            |i| match values[i] {
                FieldValue::Null => Val::Null,
                FieldValue::Inline(b) => Val::Bytes(b),
                FieldValue::External(r) => Val::Ext(r.to_bytes()),
            },
            sys,
            out,
        )
    }

    /// Appends a node-pointer record (key fields + `child`) to `out` and
    /// returns its length. `min_rec` marks the leftmost node pointer of a
    /// level.
    pub fn encode_node_ptr(
        &self,
        key: &[Option<&[u8]>],
        child: PageNo,
        min_rec: bool,
        out: &mut Vec<u8>,
    ) -> Result<usize> {
        if key.len() != self.n_key() {
            return Err(PageError::BadValue(format!(
                "node pointer needs {} key fields, {} given",
                self.n_key(),
                key.len()
            )));
        }
        let child = child.to_be_bytes();
        let info = INFO_NODE_PTR | if min_rec { INFO_MIN_REC } else { 0 };
        encode_phys(
            &self.node,
            info,
            |p| {
                if p < key.len() {
                    key[p].map_or(Val::Null, Val::Bytes)
                } else {
                    Val::Bytes(&child)
                }
            },
            out,
        )
    }

    /// Appends a node pointer to `child` carrying the key of `rec` (a leaf
    /// record or another node pointer of this index).
    pub fn node_ptr_from(
        &self,
        rec: &RecordRef<'_>,
        child: PageNo,
        min_rec: bool,
        out: &mut Vec<u8>,
    ) -> Result<usize> {
        let child = child.to_be_bytes();
        let info = INFO_NODE_PTR | if min_rec { INFO_MIN_REC } else { 0 };
        let n_key = self.n_key();
        encode_phys(
            &self.node,
            info,
            |p| {
                if p < n_key {
                    rec.field(p).map_or(Val::Null, Val::Bytes)
                } else {
                    Val::Bytes(&child)
                }
            },
            out,
        )
    }

    fn encode_leaf_with<'v>(
        &self,
        n_values: usize,
        user: impl Fn(usize) -> Val<'v>,
        sys: Option<SysCols>,
        out: &mut Vec<u8>,
    ) -> Result<usize> {
        if n_values != self.n_fields() {
            return Err(PageError::BadValue(format!(
                "leaf record needs {} fields, {n_values} given",
                self.n_fields()
            )));
        }
        if sys.is_some() != self.is_clustered() {
            return Err(PageError::BadValue(if self.is_clustered() {
                "clustered leaf record without system columns".into()
            } else {
                "system columns given for a secondary index".into()
            }));
        }
        let (trx, roll) = match sys {
            Some(s) => (s.trx_id.to_bytes(), s.roll_ptr.to_bytes()),
            None => ([0; 6], [0; 7]),
        };
        let n_key = self.n_key();
        let clustered = self.is_clustered();
        encode_phys(
            &self.leaf,
            0,
            |p| match (clustered, p) {
                (true, p) if p == n_key => Val::Bytes(&trx),
                (true, p) if p == n_key + 1 => Val::Bytes(&roll),
                (true, p) if p > n_key + 1 => user(p - 2),
                _ => user(p),
            },
            out,
        )
    }
}

/// Encodes one record of physical layout `phys` whose field `p` has value
/// `get(p)`. Validates everything before appending anything.
// PERF: two passes over the fields, one reservation, no other allocation.
fn encode_phys<'v>(
    phys: &PhysLayout,
    info: u8,
    get: impl Fn(usize) -> Val<'v>,
    out: &mut Vec<u8>,
) -> Result<usize> {
    let mut len_bytes = 0usize;
    let mut data_bytes = 0usize;
    for (p, f) in phys.fields.iter().enumerate() {
        match (get(p), f.len) {
            (Val::Null, _) => {
                if f.null_bit.is_none() {
                    return Err(PageError::BadValue(format!("NULL in NOT NULL field {p}")));
                }
            }
            (Val::Bytes(b), PhysLen::Fixed(n)) => {
                if b.len() != n {
                    return Err(PageError::BadValue(format!(
                        "field {p} is fixed at {n} bytes, {} given",
                        b.len()
                    )));
                }
                data_bytes += n;
            }
            (Val::Bytes(b), PhysLen::Var { max, long, .. }) => {
                if b.len() as u64 > u64::from(max) {
                    return Err(PageError::BadValue(format!(
                        "field {p} holds at most {max} bytes, {} given",
                        b.len()
                    )));
                }
                len_bytes += if long && b.len() >= LEN_ONE_BYTE_LIMIT {
                    2
                } else {
                    1
                };
                data_bytes += b.len();
            }
            (Val::Ext(_), PhysLen::Var { ext_ok: true, .. }) => {
                len_bytes += 2;
                data_bytes += EXTERN_REF_LEN;
            }
            (Val::Ext(_), _) => {
                return Err(PageError::BadValue(format!(
                    "field {p} cannot be stored externally (key, fixed or short field)"
                )));
            }
        }
    }
    let total = REC_HEADER_LEN + phys.null_bytes + len_bytes + data_bytes;
    if total > MAX_REC_LEN {
        return Err(PageError::RecordTooLarge {
            len: total,
            max: MAX_REC_LEN,
        });
    }

    let start = out.len();
    out.reserve(total);
    out.resize(start + REC_HEADER_LEN + phys.null_bytes, 0);
    write_rec_header(&mut out[start..], info, total);
    for (p, f) in phys.fields.iter().enumerate() {
        match (get(p), f.len) {
            (Val::Null, _) => {
                // Invariant: NULL was accepted above only for nullable fields.
                let bit = f.null_bit.expect("nullable field");
                out[start + REC_HEADER_LEN + bit / 8] |= 1 << (bit % 8);
            }
            (Val::Bytes(b), PhysLen::Var { long, .. }) => {
                if long && b.len() >= LEN_ONE_BYTE_LIMIT {
                    // b.len() <= total <= MAX_REC_LEN < LEN_MAX.
                    out.push(LEN_TWO_BYTES | (b.len() >> 8) as u8);
                    out.push(b.len() as u8);
                } else {
                    out.push(b.len() as u8);
                }
            }
            (Val::Ext(_), _) => {
                out.push(LEN_TWO_BYTES | LEN_EXTERN | (EXTERN_REF_LEN >> 8) as u8);
                out.push(EXTERN_REF_LEN as u8);
            }
            (Val::Bytes(_), PhysLen::Fixed(_)) => {}
        }
    }
    for p in 0..phys.fields.len() {
        match get(p) {
            Val::Null => {}
            Val::Bytes(b) => out.extend_from_slice(b),
            Val::Ext(r) => out.extend_from_slice(&r),
        }
    }
    debug_assert_eq!(out.len() - start, total);
    Ok(total)
}

const _: () = assert!(
    MAX_REC_LEN < LEN_MAX,
    "record lengths must fit a two-byte entry"
);
