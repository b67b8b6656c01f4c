//! The one error type of the catalog.

use basalt_btree::BTreeError;
use basalt_common::PageId;
use basalt_mtr::MtrError;
use basalt_wal::LogError;

/// Result alias of the catalog.
pub type CatalogResult<T> = Result<T, CatalogError>;

/// Why a catalog operation failed.
///
/// What a failed [`Catalog::apply`](crate::Catalog::apply) left behind is
/// the same for every variant but [`CatalogError::Poisoned`]: nothing of
/// the batch, in memory or on disk.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// A value does not fit its column (too long, wrong kind, NUL in a
    /// name). Raised while the batch is being applied; the batch is
    /// discarded.
    #[error("invalid value for {table}.{column}: {reason}")]
    InvalidValue {
        /// System table.
        table: &'static str,
        /// Column.
        column: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A stored row or the dictionary header holds bytes the catalog never
    /// writes.
    #[error("corrupt data dictionary ({what}): {reason}")]
    Corrupt {
        /// Which structure: `dictionary header`, or a table and column.
        what: String,
        /// What is wrong.
        reason: String,
        /// The page, when one is known.
        page_id: Option<PageId>,
    },
    /// The dictionary header was written by a newer format than this
    /// build reads.
    #[error("data dictionary format {found} is newer than the supported format {supported}")]
    UnsupportedFormat {
        /// Format found on disk.
        found: u32,
        /// Newest format this build reads.
        supported: u32,
    },
    /// A system table on disk has another record layout version than this
    /// build defines for it (an upgrade that needs a conversion step).
    #[error("system table {table} has layout version {found}, this build uses {expected}")]
    LayoutMismatch {
        /// System table.
        table: &'static str,
        /// Version recorded in the dictionary header.
        found: u32,
        /// Version this build defines.
        expected: u32,
    },
    /// A dictionary id counter would pass its largest value.
    #[error("{kind} ids exhausted")]
    IdsExhausted {
        /// `table`, `index` or `space`.
        kind: &'static str,
    },
    /// The batch needs more redo than one mini-transaction may carry (the
    /// log's largest group). Nothing was applied; split the batch.
    #[error("catalog batch needs {len} bytes of redo, the log takes at most {max} per group")]
    BatchTooLarge {
        /// Redo bytes of the batch.
        len: u64,
        /// The log's largest group.
        max: u64,
    },
    /// A batch reached the log but could not be made durable (the log
    /// failed while writing or syncing it). Its changes are in the buffer
    /// pool and may or may not be on disk, so the catalog refuses every
    /// further call; restart the server (crash recovery decides).
    #[error("catalog unusable after a failed durable write ({reason}): restart required")]
    Poisoned {
        /// The log failure that made a batch's fate unknown.
        reason: String,
    },
    /// A B+tree operation failed (I/O, a damaged page, ...).
    #[error(transparent)]
    Tree(#[from] BTreeError),
    /// A mini-transaction failed (I/O, buffer pool, redo log).
    #[error(transparent)]
    Mtr(#[from] MtrError),
}

impl CatalogError {
    /// True when stored bytes are damaged.
    pub fn is_corruption(&self) -> bool {
        match self {
            CatalogError::Corrupt { .. } => true,
            CatalogError::Tree(e) => e.is_corruption(),
            CatalogError::Mtr(e) => e.is_corruption(),
            _ => false,
        }
    }

    /// True when the caller's input was refused (nothing was applied and
    /// the same input will always be refused).
    pub fn is_invalid_input(&self) -> bool {
        matches!(
            self,
            CatalogError::InvalidValue { .. } | CatalogError::BatchTooLarge { .. }
        )
    }

    /// The mini-transaction error underneath (I/O, buffer pool, redo log,
    /// tablespace full), for callers that map engine errors in one place;
    /// any other error is given back unchanged.
    pub fn into_mtr(self) -> Result<MtrError, CatalogError> {
        match self {
            CatalogError::Mtr(e) | CatalogError::Tree(BTreeError::Mtr(e)) => Ok(e),
            other => Err(other),
        }
    }

    pub(crate) fn corrupt(what: impl Into<String>, reason: impl Into<String>) -> CatalogError {
        CatalogError::Corrupt {
            what: what.into(),
            reason: reason.into(),
            page_id: None,
        }
    }

    pub(crate) fn invalid(
        table: &'static str,
        column: &'static str,
        reason: impl Into<String>,
    ) -> CatalogError {
        CatalogError::InvalidValue {
            table,
            column,
            reason: reason.into(),
        }
    }

    /// Maps a mini-transaction error, turning the log's refusal of an
    /// oversized group into [`CatalogError::BatchTooLarge`].
    pub(crate) fn from_mtr(e: MtrError) -> CatalogError {
        match e {
            MtrError::Log(LogError::GroupTooLarge { len, max }) => {
                CatalogError::BatchTooLarge { len, max }
            }
            other => CatalogError::Mtr(other),
        }
    }
}
