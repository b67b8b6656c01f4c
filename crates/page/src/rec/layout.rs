//! Record layouts: which fields an index record has and how they compare.

use crate::error::{PageError, Result};
use crate::index_page::MAX_REC_LEN;
use crate::rec::collation::Collation;

/// Most user fields an index may declare.
pub const MAX_FIELDS: usize = 1023;
/// Variable-length fields whose declared maximum exceeds this are "long":
/// their length takes one or two bytes and they may be stored externally.
pub const SHORT_VAR_MAX: u32 = 255;

/// Storage class of one field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldKind {
    /// Exactly this many bytes (1..=[`MAX_REC_LEN`]) when not NULL.
    Fixed(u16),
    /// Up to `max_len` bytes. Fields with `max_len > 255` may be stored
    /// externally (overflow pages) unless they are key fields.
    Var {
        /// Declared maximum length in bytes.
        max_len: u32,
    },
}

/// How a key field orders its values.
///
/// `Binary` (memcmp, a proper prefix sorts first) is what the upper layers
/// use with memcomparable encodings. `Collated(id)` compares text stored in
/// utf8mb4 (or utf8mb3) by MySQL collation id; the implemented ids are
/// listed in [`Collation::from_id`]. Every other id is rejected when the
/// layout is built, never at comparison time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldCmp {
    /// Byte-wise comparison, shorter-is-smaller.
    Binary,
    /// MySQL collation id.
    Collated(u16),
}

/// One field of an index record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldDef {
    /// Fixed or variable length.
    pub kind: FieldKind,
    /// True if the field may be NULL.
    pub nullable: bool,
    /// Ordering of the field's values (matters for key fields only).
    pub cmp: FieldCmp,
}

impl FieldDef {
    /// A NOT NULL fixed-length field with binary comparison.
    pub const fn fixed(len: u16) -> FieldDef {
        FieldDef {
            kind: FieldKind::Fixed(len),
            nullable: false,
            cmp: FieldCmp::Binary,
        }
    }

    /// A NOT NULL variable-length field with binary comparison.
    pub const fn var(max_len: u32) -> FieldDef {
        FieldDef {
            kind: FieldKind::Var { max_len },
            nullable: false,
            cmp: FieldCmp::Binary,
        }
    }

    /// The same field, nullable.
    pub const fn nullable(self) -> FieldDef {
        FieldDef {
            nullable: true,
            ..self
        }
    }

    /// The same field with another comparison.
    pub const fn with_cmp(self, cmp: FieldCmp) -> FieldDef {
        FieldDef { cmp, ..self }
    }
}

/// Length class of a physical field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PhysLen {
    /// Exactly `n` bytes when not NULL.
    Fixed(usize),
    /// Variable, at most `max` bytes; `long` selects the 1-or-2-byte length
    /// encoding and permits external storage (when `ext_ok`).
    Var { max: u32, long: bool, ext_ok: bool },
}

/// A field as it sits in the record (user fields and system columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PhysField {
    pub(crate) len: PhysLen,
    /// Bit index in the NULL bitmap, for nullable fields.
    pub(crate) null_bit: Option<usize>,
    /// Comparison, for key fields.
    pub(crate) coll: Collation,
}

/// Physical field list of one record kind (leaf or node pointer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PhysLayout {
    pub(crate) fields: Vec<PhysField>,
    /// Bytes of NULL bitmap.
    pub(crate) null_bytes: usize,
    /// Number of nullable fields (bits used in the bitmap).
    pub(crate) n_nullable: usize,
}

impl PhysLayout {
    fn build(fields: Vec<PhysField>) -> PhysLayout {
        let n_nullable = fields.iter().filter(|f| f.null_bit.is_some()).count();
        PhysLayout {
            fields,
            null_bytes: n_nullable.div_ceil(8),
            n_nullable,
        }
    }
}

/// Describes the records of one index.
///
/// ```text
///  leaf record     key fields | DB_TRX_ID(6) DB_ROLL_PTR(7) | other fields
///                               └─ clustered indexes only ─┘
///  node pointer    key fields | child page number (4)
/// ```
///
/// Field numbers in the API (`field(i)`, encoder inputs) are *user* field
/// numbers `0..n_fields()`: the key fields first, the system columns are not
/// numbered (see [`crate::rec::RecordRef::trx_id`]). For a non-unique
/// secondary index the key is the index columns plus the primary-key
/// columns, so that every key is unique; the B+tree chooses `n_key`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordLayout {
    fields: Vec<FieldDef>,
    n_key: usize,
    clustered: bool,
    pub(crate) leaf: PhysLayout,
    pub(crate) node: PhysLayout,
}

/// Bytes of `DB_TRX_ID`.
pub const TRX_ID_LEN: usize = 6;
/// Bytes of `DB_ROLL_PTR`.
pub const ROLL_PTR_LEN: usize = 7;
/// Bytes of the child page number in a node pointer.
pub const CHILD_NO_LEN: usize = 4;

impl RecordLayout {
    /// Builds a layout: `fields` in index order with the `n_key` key fields
    /// first; `clustered` adds the system columns after the key.
    pub fn new(fields: Vec<FieldDef>, n_key: usize, clustered: bool) -> Result<RecordLayout> {
        if fields.is_empty() || fields.len() > MAX_FIELDS {
            return Err(PageError::BadLayout(format!(
                "{} fields; an index has 1..={MAX_FIELDS}",
                fields.len()
            )));
        }
        if n_key == 0 || n_key > fields.len() {
            return Err(PageError::BadLayout(format!(
                "{n_key} key fields out of {}",
                fields.len()
            )));
        }
        let mut colls = Vec::with_capacity(fields.len());
        for (i, f) in fields.iter().enumerate() {
            if let FieldKind::Fixed(n) = f.kind {
                if n == 0 || usize::from(n) > MAX_REC_LEN {
                    return Err(PageError::BadLayout(format!(
                        "field {i}: fixed length {n} outside 1..={MAX_REC_LEN}"
                    )));
                }
            }
            colls.push(match f.cmp {
                FieldCmp::Binary => Collation::Binary,
                FieldCmp::Collated(id) => Collation::from_id(id)?,
            });
        }
        let user = |i: usize, null_bit: &mut usize, is_key: bool| -> PhysField {
            let f = &fields[i];
            let len = match f.kind {
                FieldKind::Fixed(n) => PhysLen::Fixed(usize::from(n)),
                FieldKind::Var { max_len } => PhysLen::Var {
                    max: max_len,
                    long: max_len > SHORT_VAR_MAX,
                    ext_ok: max_len > SHORT_VAR_MAX && !is_key,
                },
            };
            let nb = f.nullable.then(|| {
                *null_bit += 1;
                *null_bit - 1
            });
            PhysField {
                len,
                null_bit: nb,
                coll: colls[i],
            }
        };
        let sys = |n: usize| PhysField {
            len: PhysLen::Fixed(n),
            null_bit: None,
            coll: Collation::Binary,
        };

        let mut leaf = Vec::with_capacity(fields.len() + 2);
        let mut bit = 0;
        for i in 0..n_key {
            leaf.push(user(i, &mut bit, true));
        }
        if clustered {
            leaf.push(sys(TRX_ID_LEN));
            leaf.push(sys(ROLL_PTR_LEN));
        }
        for i in n_key..fields.len() {
            leaf.push(user(i, &mut bit, false));
        }
        let mut node = Vec::with_capacity(n_key + 1);
        let mut bit = 0;
        for i in 0..n_key {
            node.push(user(i, &mut bit, true));
        }
        node.push(sys(CHILD_NO_LEN));

        Ok(RecordLayout {
            fields,
            n_key,
            clustered,
            leaf: PhysLayout::build(leaf),
            node: PhysLayout::build(node),
        })
    }

    /// User fields (system columns excluded).
    pub fn n_fields(&self) -> usize {
        self.fields.len()
    }

    /// Leading fields that form the key.
    pub fn n_key(&self) -> usize {
        self.n_key
    }

    /// True for a clustered index (leaf records carry the system columns).
    pub fn is_clustered(&self) -> bool {
        self.clustered
    }

    /// Definition of user field `i`.
    pub fn field(&self, i: usize) -> &FieldDef {
        &self.fields[i]
    }

    /// All user field definitions.
    pub fn fields(&self) -> &[FieldDef] {
        &self.fields
    }

    /// Physical position of user field `i` in a leaf record.
    #[inline]
    pub(crate) fn leaf_phys(&self, i: usize) -> usize {
        if self.clustered && i >= self.n_key {
            i + 2
        } else {
            i
        }
    }
}
