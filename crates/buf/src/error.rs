//! Buffer-pool errors.

use std::path::PathBuf;

use basalt_common::{PageId, SpaceId};
use basalt_io::IoError;
use basalt_page::header::ChecksumFailure;

/// Result of a buffer-pool call.
pub type BufResult<T> = Result<T, BufError>;

/// Boxed error coming from the redo log through [`crate::RedoGate`].
pub type RedoSource = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a buffer-pool call failed.
///
/// Callers branch on the variant: [`BufError::Corruption`] and
/// [`BufError::ZeroedPage`] name the page, [`BufError::Io`] carries the
/// operating-system failure, [`BufError::Redo`] means the log could not make
/// itself durable (so no page may be written).
#[derive(Debug, thiserror::Error)]
pub enum BufError {
    /// A file operation failed.
    #[error("buffer pool I/O: {0}")]
    Io(#[from] IoError),
    /// A page read from disk failed verification. The frame it was read into
    /// has been released; the page was never handed out.
    #[error("page {page_id} is corrupt: {reason}")]
    Corruption {
        /// The page that was read.
        page_id: PageId,
        /// What the checksum check found.
        reason: ChecksumFailure,
    },
    /// A page read from disk is all zeroes (allocated by extending the file
    /// but never written), and the caller did not allow that.
    #[error("page {page_id} has never been written (all zeroes)")]
    ZeroedPage {
        /// The page that was read.
        page_id: PageId,
    },
    /// No tablespace with this id is registered.
    #[error("tablespace {0} is not open")]
    NoSuchSpace(SpaceId),
    /// A tablespace with this id is already registered.
    #[error("tablespace {0} is already open")]
    SpaceExists(SpaceId),
    /// Creating a tablespace whose file already exists.
    #[error("tablespace file {0} already exists")]
    SpaceFileExists(PathBuf),
    /// A tablespace file's length is not a whole number of pages.
    #[error("tablespace file {path} is {len} bytes, not a multiple of the page size")]
    BadSpaceFile {
        /// The file.
        path: PathBuf,
        /// Its length in bytes.
        len: u64,
    },
    /// The page lies beyond the end of its tablespace.
    #[error("page {page_id} is beyond the end of its tablespace ({size} pages)")]
    PageOutOfRange {
        /// The page asked for.
        page_id: PageId,
        /// Current size of the tablespace in pages.
        size: u32,
    },
    /// The page belongs to the doublewrite area, which the buffer pool never
    /// caches.
    #[error("page {0} lies in the doublewrite area")]
    ReservedPage(PageId),
    /// Every frame of an instance stayed buffer-fixed or busy for too long:
    /// callers hold more pages than the pool has frames.
    #[error("no free frame in buffer pool instance {instance} after {waited_ms} ms")]
    NoFreeFrame {
        /// The instance that ran dry.
        instance: usize,
        /// How long the caller waited.
        waited_ms: u64,
    },
    /// Pages of a tablespace stayed buffer-fixed while it was being dropped.
    #[error("tablespace {space} still has {pages} pages in use")]
    SpaceBusy {
        /// The tablespace.
        space: SpaceId,
        /// Pages that could not be discarded.
        pages: usize,
    },
    /// The redo log failed to make itself durable or to write a checkpoint.
    #[error("redo log: {0}")]
    Redo(#[source] RedoSource),
    /// A configuration value is out of range.
    #[error("invalid buffer pool setting {name} = {value}: {reason}")]
    InvalidConfig {
        /// MySQL name of the option.
        name: &'static str,
        /// The rejected value.
        value: String,
        /// Accepted range or rule.
        reason: String,
    },
}

impl BufError {
    /// Wraps a redo-log error.
    pub fn redo<E>(err: E) -> BufError
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        BufError::Redo(Box::new(err))
    }

    /// True when the error is about the contents of a page on disk
    /// (checksum failure or a never-written page), as opposed to the
    /// environment (I/O, configuration, resources).
    pub fn is_corruption(&self) -> bool {
        matches!(
            self,
            BufError::Corruption { .. } | BufError::ZeroedPage { .. }
        )
    }

    /// The page the error is about, when there is one.
    pub fn page_id(&self) -> Option<PageId> {
        match self {
            BufError::Corruption { page_id, .. }
            | BufError::ZeroedPage { page_id }
            | BufError::PageOutOfRange { page_id, .. } => Some(*page_id),
            BufError::ReservedPage(page_id) => Some(*page_id),
            _ => None,
        }
    }
}
