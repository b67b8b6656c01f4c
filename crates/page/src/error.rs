//! The one error type of the page layer.

use basalt_common::{PageId, SpaceId, PAGE_SIZE};
use thiserror::Error;

use crate::header::{FIL_PAGE_NO, FIL_PAGE_SPACE};

/// Everything that can go wrong when reading, changing or logging a page.
///
/// Callers branch on the variant: [`PageError::NoSpace`] tells the B+tree to
/// split, [`PageError::RecordTooLarge`] to move columns to overflow pages,
/// [`PageError::RedoIncomplete`] tells the redo scan it reached the torn tail
/// of the log; everything for which [`PageError::is_corruption`] holds means
/// bytes read from disk (or from the log) are not what Basalt wrote.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PageError {
    /// The record does not fit into the page even after compaction.
    /// The page is unchanged.
    #[error("page full: {needed} bytes needed, {available} available after compaction")]
    NoSpace {
        /// Bytes the operation needs (records plus their slots).
        needed: usize,
        /// Bytes the page could provide after compaction.
        available: usize,
    },
    /// An encoded record would exceed [`crate::MAX_REC_LEN`]: the caller must
    /// store long columns externally.
    #[error("record of {len} bytes exceeds the limit of {max} bytes")]
    RecordTooLarge {
        /// Length the record would have.
        len: usize,
        /// Largest record an index page accepts.
        max: usize,
    },
    /// A slot index (or slot range) outside the page's slot directory.
    #[error("slot {slot} out of range: page has {n_recs} records")]
    SlotOutOfRange {
        /// Offending slot index (the end of a range for range operations).
        slot: usize,
        /// Records on the page.
        n_recs: usize,
    },
    /// The page image violates the page format.
    #[error("corrupt page {page_id}: {reason}")]
    Corruption {
        /// Page id found in the page header (may itself be damaged).
        page_id: PageId,
        /// What is wrong.
        reason: String,
    },
    /// Record bytes that do not decode under the record layout or do not
    /// suit the page (stored or logged bytes: treat as corruption).
    #[error("bad record: {0}")]
    BadRecord(String),
    /// Values the caller asked to encode or compare that the layout does not
    /// allow: NULL in a NOT NULL field, wrong fixed length, value longer than
    /// its field, external storage of a key field, too many key fields.
    #[error("value does not fit the record layout: {0}")]
    BadValue(String),
    /// A record layout that cannot describe an index.
    #[error("bad record layout: {0}")]
    BadLayout(String),
    /// A collation id the comparison functions do not implement.
    #[error("unsupported collation id {0}")]
    UnsupportedCollation(u16),
    /// A page buffer of the wrong size.
    #[error("page buffer has {len} bytes, expected {PAGE_SIZE}")]
    WrongPageSize {
        /// Length of the buffer passed in.
        len: usize,
    },
    /// A byte range outside the part of a page a redo record may write.
    #[error("write of {len} bytes at offset {offset} is outside the writable page area")]
    OutOfBounds {
        /// First byte of the write.
        offset: usize,
        /// Bytes written.
        len: usize,
    },
    /// The redo byte stream ends inside a record (the torn tail of the log).
    #[error("redo stream ends inside a record")]
    RedoIncomplete,
    /// Bytes that are not a redo record.
    #[error("corrupt redo record at byte {at}: {reason}")]
    RedoCorrupt {
        /// Offset of the offending byte in the slice handed to the decoder.
        at: usize,
        /// What is wrong.
        reason: String,
    },
}

/// Result alias of the page layer.
pub type Result<T, E = PageError> = std::result::Result<T, E>;

impl PageError {
    /// True when the error means stored bytes (page or log) are damaged or
    /// inconsistent, as opposed to a full page or a caller's bad argument.
    pub fn is_corruption(&self) -> bool {
        matches!(
            self,
            PageError::Corruption { .. } | PageError::BadRecord(_) | PageError::RedoCorrupt { .. }
        )
    }

    /// True for [`PageError::NoSpace`]: the B+tree should split the page.
    pub fn is_no_space(&self) -> bool {
        matches!(self, PageError::NoSpace { .. })
    }
}

/// Builds a [`PageError::Corruption`] naming the page id found in `page`.
pub(crate) fn corrupt(page: &[u8], reason: impl Into<String>) -> PageError {
    let word = |off: usize| -> u32 {
        page.get(off..off + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            .unwrap_or(u32::MAX)
    };
    PageError::Corruption {
        page_id: PageId::new(SpaceId(word(FIL_PAGE_SPACE)), word(FIL_PAGE_NO)),
        reason: reason.into(),
    }
}

/// Fails unless `page` is exactly one page long.
#[inline]
pub(crate) fn check_page_len(page: &[u8]) -> Result<()> {
    if page.len() == PAGE_SIZE {
        Ok(())
    } else {
        Err(PageError::WrongPageSize { len: page.len() })
    }
}
