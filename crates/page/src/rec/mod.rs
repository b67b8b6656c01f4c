//! Record format: how one index entry is laid out in bytes.
//!
//! ```text
//!  ┌────────┬─────────────┬──────────────────────┬──────────────────────┐
//!  │ header │ NULL bitmap │ variable-length array │ field data           │
//!  │ 3 B    │ ⌈nullable/8⌉│ 1-2 B per non-NULL    │ non-NULL fields in   │
//!  │        │             │ variable field        │ physical order       │
//!  └────────┴─────────────┴──────────────────────┴──────────────────────┘
//! ```
//!
//! * **Header** ([`info`]): info bits (delete mark, min-record, node
//!   pointer) and the total length. It is the only part the page layer
//!   reads.
//! * **NULL bitmap**: one bit per *nullable* field in physical order, bit
//!   `j` in byte `j / 8` at position `j % 8` (LSB first); unused bits zero.
//!   NULL fields, fixed or variable, occupy no data bytes.
//! * **Variable-length array**: one entry per non-NULL variable-length field,
//!   in physical order. Fields declared with at most 255 bytes use one byte.
//!   Longer ("long") fields use one byte for lengths below 128, otherwise two:
//!
//!   ```text
//!    1 byte   0lllllll                 length 0..=127
//!    2 bytes  1e llllll  llllllll      bit 0x80 set; e (0x40) = stored
//!                                      externally; 14-bit length
//!   ```
//!
//!   An externally stored field keeps exactly 20 local bytes: its
//!   [`ExternRef`] {space, first page, offset, total length}. Only long,
//!   non-key fields may be external. Encodings are canonical (the two-byte
//!   form is never used for a short inline length), so equal values give
//!   equal bytes.
//! * **Field data**: fixed fields take exactly their length, variable ones
//!   their entry's length.
//!
//! Physical field order ([`RecordLayout`]):
//!
//! ```text
//!  clustered leaf   k1..kn  DB_TRX_ID(6)  DB_ROLL_PTR(7)  c1..cm
//!  secondary leaf   k1..kn  c1..cm
//!  node pointer     k1..kn  child page number (4, big-endian)
//! ```
//!
//! Decoding is zero-copy: [`RecordRef::new`] validates a record and
//! computes every field boundary once (inline storage for up to 32 fields),
//! then hands out borrowed slices. The B+tree's binary search does not even
//! do that: [`RecordLayout::compare_key`] walks only the length array and
//! the key fields of the records it probes, allocation-free.
//!
//! Key comparison is field by field with NULL first; the per-field rule is
//! [`FieldCmp`]: `Binary` for memcomparable encodings, `Collated(id)` for
//! MySQL collations ([`collation`]). A search key may name only a prefix of
//! the key fields; records then compare `Equal` when that prefix matches,
//! which gives range scans their bounds.

mod cmp;
pub mod collation;
mod decode;
mod encode;
mod extern_ref;
pub mod info;
mod layout;

pub use collation::Collation;
pub use decode::RecordRef;
pub use encode::{FieldValue, SysCols};
pub use extern_ref::{ExternRef, EXTERN_REF_LEN};
pub use info::{
    read_rec_header, set_rec_delete_mark, INFO_DELETED, INFO_MIN_REC, INFO_NODE_PTR, REC_HEADER_LEN,
};
pub use layout::{
    FieldCmp, FieldDef, FieldKind, RecordLayout, CHILD_NO_LEN, MAX_FIELDS, ROLL_PTR_LEN,
    SHORT_VAR_MAX, TRX_ID_LEN,
};
