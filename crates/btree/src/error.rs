//! The one error type of the B+tree.

use basalt_buf::BufError;
use basalt_common::{IndexId, PageId};
use basalt_mtr::MtrError;
use basalt_page::PageError;

/// Result alias of the B+tree.
pub type Result<T, E = BTreeError> = std::result::Result<T, E>;

/// Why a B+tree operation failed.
///
/// Callers branch on the variant: [`BTreeError::DuplicateKey`] becomes
/// MySQL error 1062, [`BTreeError::KeyNotFound`] tells the row layer the
/// record it expected is gone, [`BTreeError::is_corruption`] covers every
/// way stored bytes can be wrong. Variants that leave the caller's
/// mini-transaction untouched are listed in
/// [`BTreeError::leaves_mtr_clean`]; after any other error the caller must
/// drop the mini-transaction (which restores every page it changed).
#[derive(Debug, thiserror::Error)]
pub enum BTreeError {
    /// A live record with the same key (or, for a unique secondary index,
    /// the same unique prefix) exists. Nothing was changed.
    #[error("duplicate key {} in index {}", fmt_key(.key), .index_id.0)]
    DuplicateKey {
        /// The index.
        index_id: IndexId,
        /// The conflicting key fields (the unique prefix for a unique
        /// secondary index), `None` = NULL.
        key: Vec<Option<Vec<u8>>>,
    },
    /// No record with the key exists. Nothing was changed.
    #[error("key {} not found in index {}", fmt_key(.key), .index_id.0)]
    KeyNotFound {
        /// The index.
        index_id: IndexId,
        /// The key looked for.
        key: Vec<Option<Vec<u8>>>,
    },
    /// A page of the tree (index or overflow page) is not what the tree
    /// wrote: bad type, wrong index, broken order, impossible link.
    #[error("corrupt B+tree page {page_id}: {reason}")]
    Corruption {
        /// The damaged page.
        page_id: PageId,
        /// What is wrong.
        reason: String,
    },
    /// The mini-transaction layer failed: I/O, a buffer-pool refusal, a
    /// damaged page on read, the redo log.
    #[error(transparent)]
    Mtr(#[from] MtrError),
    /// The record cannot be stored even with every eligible field moved to
    /// overflow pages (too many or too long key / short fields).
    #[error("record of {len} bytes exceeds the limit of {max} bytes")]
    RecordTooLarge {
        /// Length the record would have.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The key fields of a record would make a node pointer longer than
    /// [`crate::MAX_NODE_PTR_LEN`] (MySQL's "key too long").
    #[error("key of {len} bytes in node pointers exceeds the limit of {max} bytes")]
    KeyTooLong {
        /// Length of the node pointer.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Values or keys that do not suit the index layout: wrong number of
    /// fields, NULL in a NOT NULL field, wrong fixed length, value longer
    /// than its field.
    #[error("value does not fit index {}: {reason}", .index_id.0)]
    BadValue {
        /// The index.
        index_id: IndexId,
        /// What is wrong.
        reason: String,
    },
    /// An update tried to change key fields (position in the tree); that is
    /// a delete plus an insert.
    #[error("update would change the key of a record in index {}", .index_id.0)]
    KeyChanged {
        /// The index.
        index_id: IndexId,
    },
    /// A value stored externally is too large to be written inside a
    /// mini-transaction that already holds the tablespace header; start a
    /// fresh mini-transaction for it.
    #[error(
        "external value of {len} bytes does not fit the current mini-transaction (limit {max})"
    )]
    ValueTooLarge {
        /// Length of the value.
        len: u64,
        /// Largest value this mini-transaction can carry.
        max: u64,
    },
    /// Bulk-load input that is not strictly ascending by key.
    #[error("bulk load input out of order at record {index} of index {}", .index_id.0)]
    BulkOrder {
        /// The index.
        index_id: IndexId,
        /// Position of the offending record in the input (0-based).
        index: u64,
    },
    /// A handle whose description contradicts itself (kind vs layout).
    #[error("bad index definition: {0}")]
    BadDefinition(String),
}

impl BTreeError {
    /// True when stored bytes (a page of the tree, an overflow page, or a
    /// page the buffer pool refused on read) are damaged.
    pub fn is_corruption(&self) -> bool {
        match self {
            BTreeError::Corruption { .. } => true,
            BTreeError::Mtr(e) => e.is_corruption(),
            _ => false,
        }
    }

    /// True for errors raised before the operation changed the tree: the
    /// caller's mini-transaction may go on and commit its other changes.
    /// (When it already held the tablespace header, overflow pages written
    /// for the refused record were allocated and freed again in it; in
    /// every other case it holds no change of the failed operation.)
    pub fn leaves_mtr_clean(&self) -> bool {
        matches!(
            self,
            BTreeError::DuplicateKey { .. }
                | BTreeError::KeyNotFound { .. }
                | BTreeError::RecordTooLarge { .. }
                | BTreeError::KeyTooLong { .. }
                | BTreeError::BadValue { .. }
                | BTreeError::KeyChanged { .. }
                | BTreeError::ValueTooLarge { .. }
        )
    }

    /// Maps a page-layer error about page `page_id` into the tree's terms.
    pub(crate) fn page(page_id: PageId, e: PageError) -> BTreeError {
        match e {
            PageError::Corruption { page_id, reason } => BTreeError::Corruption { page_id, reason },
            PageError::BadRecord(reason) => BTreeError::Corruption { page_id, reason },
            PageError::RecordTooLarge { len, max } => BTreeError::RecordTooLarge { len, max },
            other => BTreeError::Corruption {
                page_id,
                reason: other.to_string(),
            },
        }
    }

    /// Maps an error of `mtr.apply` on page `page_id`.
    pub(crate) fn apply(page_id: PageId, e: MtrError) -> BTreeError {
        match e {
            MtrError::Page(pe) => BTreeError::page(page_id, pe),
            other => BTreeError::Mtr(other),
        }
    }

    pub(crate) fn corrupt(page_id: PageId, reason: impl Into<String>) -> BTreeError {
        BTreeError::Corruption {
            page_id,
            reason: reason.into(),
        }
    }
}

impl From<BufError> for BTreeError {
    fn from(e: BufError) -> BTreeError {
        BTreeError::Mtr(MtrError::Buf(e))
    }
}

/// Renders key fields for messages: hex bytes, `NULL`.
fn fmt_key(key: &[Option<Vec<u8>>]) -> String {
    use std::fmt::Write;
    let mut s = String::from("(");
    for (i, f) in key.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        match f {
            None => s.push_str("NULL"),
            Some(b) => {
                s.push_str("0x");
                for byte in b.iter().take(64) {
                    let _ = write!(s, "{byte:02x}");
                }
                if b.len() > 64 {
                    s.push_str("...");
                }
            }
        }
    }
    s.push(')');
    s
}

/// Owned copy of key fields, for error values.
pub(crate) fn owned_key(key: &[Option<&[u8]>]) -> Vec<Option<Vec<u8>>> {
    key.iter().map(|f| f.map(<[u8]>::to_vec)).collect()
}
