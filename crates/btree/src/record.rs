//! Records handed out by the tree: owned copies with external references
//! ([`OwnedRecord`]) and fully materialised rows ([`Row`]).

use std::sync::Arc;

use basalt_common::{RollPtr, TrxId};
use basalt_page::rec::{ExternRef, RecordLayout, RecordRef, SysCols};

/// An owned copy of a leaf record as stored: externally stored fields are
/// their 20-byte [`ExternRef`]s (read them with
/// [`BTree::read_external`](crate::BTree::read_external) while the record
/// version is known to be alive, or ask for a [`Row`] instead).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedRecord {
    layout: Arc<RecordLayout>,
    bytes: Vec<u8>,
}

impl OwnedRecord {
    /// Copies a record that decoded under `layout`.
    pub(crate) fn copy_of(layout: &Arc<RecordLayout>, rec: &RecordRef<'_>) -> OwnedRecord {
        OwnedRecord {
            layout: Arc::clone(layout),
            bytes: rec.bytes().to_vec(),
        }
    }

    /// The decoded record.
    pub fn as_record(&self) -> RecordRef<'_> {
        // Invariant: the bytes were copied from a record that decoded under
        // this very layout (`copy_of`), and they are never changed.
        RecordRef::new(&self.layout, &self.bytes).expect("decoded when copied")
    }

    /// The encoded bytes (fixed header included).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Local bytes of user field `i` (`None` = NULL; the 20-byte reference
    /// for an externally stored field).
    pub fn field(&self, i: usize) -> Option<&[u8]> {
        self.as_record().field(i)
    }

    /// True if the record is delete-marked.
    pub fn is_delete_marked(&self) -> bool {
        self.as_record().is_delete_marked()
    }

    /// `DB_TRX_ID` (clustered indexes).
    pub fn trx_id(&self) -> Option<TrxId> {
        self.as_record().trx_id()
    }

    /// `DB_ROLL_PTR` (clustered indexes).
    pub fn roll_ptr(&self) -> Option<RollPtr> {
        self.as_record().roll_ptr()
    }

    /// The overflow reference of field `i`, if it is stored externally.
    pub fn extern_ref(&self, i: usize) -> Option<ExternRef> {
        self.as_record().extern_ref(i)
    }

    /// True if any field is stored externally.
    pub fn has_external(&self) -> bool {
        self.as_record().has_external()
    }

    /// Owned values of the key fields.
    pub fn key(&self) -> Vec<Option<Vec<u8>>> {
        let r = self.as_record();
        (0..self.layout.n_key())
            .map(|i| r.field(i).map(<[u8]>::to_vec))
            .collect()
    }
}

/// A record with every field materialised: externally stored values read
/// back from their overflow chains.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// One value per user field, `None` = NULL.
    pub values: Vec<Option<Vec<u8>>>,
    /// The delete mark.
    pub delete_marked: bool,
    /// `DB_TRX_ID` and `DB_ROLL_PTR` of a clustered-index record.
    pub sys: Option<SysCols>,
}
