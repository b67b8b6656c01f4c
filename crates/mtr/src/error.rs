//! Mini-transaction errors.

use std::path::PathBuf;

use basalt_buf::BufError;
use basalt_common::{Lsn, PageId, SpaceId};
use basalt_page::PageError;
use basalt_wal::LogError;

/// Result of a mini-transaction call.
pub type MtrResult<T> = Result<T, MtrError>;

/// Why a mini-transaction (or recovery) failed.
#[derive(Debug, thiserror::Error)]
pub enum MtrError {
    /// The buffer pool could not provide a page (I/O, corruption, no frame).
    #[error(transparent)]
    Buf(#[from] BufError),
    /// A page operation was refused (no space, bad record, corrupt page).
    #[error(transparent)]
    Page(#[from] PageError),
    /// The redo log failed; nothing more can be made durable.
    #[error(transparent)]
    Log(#[from] LogError),
    /// A page was modified through a shared latch (a caller bug caught
    /// before any byte changed).
    #[error("page {0} is not exclusively latched by this mini-transaction")]
    NotExclusive(PageId),
    /// The tablespace header says the space is full and may not grow.
    #[error("tablespace {space} is full ({pages} pages)")]
    SpaceFull {
        /// The tablespace.
        space: SpaceId,
        /// Its size in pages.
        pages: u32,
    },
    /// A tablespace header or free-list page holds impossible values.
    #[error("tablespace {space} header is corrupt: {reason}")]
    SpaceCorrupt {
        /// The tablespace.
        space: SpaceId,
        /// What was wrong.
        reason: String,
    },
    /// Crash recovery found a page it cannot bring up to date: its image
    /// fails verification and the doublewrite area held no intact copy, it
    /// was never written although its redo does not initialise it, or a
    /// redo record does not apply to it.
    #[error("page {page_id} cannot be recovered: {reason}")]
    PageCorrupt {
        /// The page.
        page_id: PageId,
        /// What was wrong.
        reason: String,
    },
    /// The redo log holds bytes no mini-transaction writes, inside the part
    /// of the log whose blocks are intact (checksums valid).
    #[error("redo log corrupt at LSN {lsn}: {reason}")]
    RedoCorrupt {
        /// LSN of the first byte that could not be parsed.
        lsn: Lsn,
        /// What was wrong.
        reason: String,
    },
    /// The data directory is inconsistent as a whole (missing system
    /// tablespace, two files claiming one tablespace id, ...).
    #[error("data directory {dir}: {reason}")]
    DataDir {
        /// The data directory.
        dir: PathBuf,
        /// What was wrong.
        reason: String,
    },
}

impl MtrError {
    /// True when the error reports damaged on-disk data.
    pub fn is_corruption(&self) -> bool {
        match self {
            MtrError::Buf(e) => e.is_corruption(),
            MtrError::Page(e) => e.is_corruption(),
            MtrError::Log(e) => e.is_corruption(),
            MtrError::SpaceCorrupt { .. }
            | MtrError::PageCorrupt { .. }
            | MtrError::RedoCorrupt { .. } => true,
            _ => false,
        }
    }

    /// The page the error is about, when there is one (a corrupt page found
    /// by the buffer pool or by crash recovery).
    pub fn page_id(&self) -> Option<PageId> {
        match self {
            MtrError::Buf(e) => e.page_id(),
            MtrError::NotExclusive(id) | MtrError::PageCorrupt { page_id: id, .. } => Some(*id),
            _ => None,
        }
    }

    /// True when a page did not have room for the operation (the B+tree
    /// splits and retries).
    pub fn is_no_space(&self) -> bool {
        matches!(self, MtrError::Page(e) if e.is_no_space())
    }
}
