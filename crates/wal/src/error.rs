//! The redo log's error type.

use std::path::PathBuf;
use std::sync::Arc;

use basalt_common::Lsn;
use basalt_io::IoError;

/// Why a redo log call failed.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// A file operation failed.
    #[error("redo log I/O failed: {0}")]
    Io(#[from] IoError),
    /// Redo log contents that must be valid are not.
    #[error("redo log corrupt at LSN {lsn}: {reason}")]
    Corrupt {
        /// LSN (or the nearest one known) of the damaged data.
        lsn: Lsn,
        /// What is wrong.
        reason: String,
    },
    /// The log files on disk do not match the configuration (missing, extra,
    /// wrong size or count). Basalt does not resize the redo log.
    #[error("redo log files in {dir} do not match the configuration: {reason} (option {option})")]
    FilesMismatch {
        /// Log directory.
        dir: PathBuf,
        /// The MySQL option that disagrees with the files.
        option: &'static str,
        /// What was found.
        reason: String,
    },
    /// [`crate::Log::create`] found log files already present.
    #[error("redo log file {path} already exists")]
    FilesExist {
        /// The first existing file.
        path: PathBuf,
    },
    /// An option is outside its range.
    #[error("invalid value for {option}: {reason}")]
    InvalidConfig {
        /// MySQL option name.
        option: &'static str,
        /// Why the value is refused.
        reason: String,
    },
    /// One `append` is larger than a group may be (see
    /// [`crate::Log::max_group_size`]).
    #[error("redo group of {len} bytes exceeds the maximum of {max} bytes for this log size")]
    GroupTooLarge {
        /// Bytes passed to `append`.
        len: u64,
        /// Largest allowed group.
        max: u64,
    },
    /// A caller asked to wait for an LSN that was never reserved.
    #[error("LSN {lsn} is beyond the current LSN {current}")]
    LsnInFuture {
        /// LSN asked for.
        lsn: Lsn,
        /// Current (reserved) LSN.
        current: Lsn,
    },
    /// `write_checkpoint` was called for an LSN the log cannot checkpoint
    /// yet (not durable, or not closed).
    #[error("cannot checkpoint at LSN {lsn}: {reason}")]
    CheckpointNotAllowed {
        /// Requested checkpoint LSN.
        lsn: Lsn,
        /// Which limit it passes.
        reason: String,
    },
    /// [`crate::RecoveryScan::into_log`] was given an LSN outside the
    /// scanned range.
    #[error("cannot resume the log at LSN {lsn}: valid range is {checkpoint}..={scanned}")]
    BadResumeLsn {
        /// Requested resume LSN.
        lsn: Lsn,
        /// Checkpoint LSN (lower bound).
        checkpoint: Lsn,
        /// End of the scanned redo (upper bound).
        scanned: Lsn,
    },
    /// [`crate::Log::open`] found redo after the checkpoint: the database
    /// must be opened through crash recovery.
    #[error("redo log holds records from LSN {checkpoint} to {end}; crash recovery is required")]
    RecoveryNeeded {
        /// Checkpoint LSN.
        checkpoint: Lsn,
        /// End of the valid redo.
        end: Lsn,
    },
    /// The log was shut down (or halted) and accepts no more work.
    #[error("redo log is shut down")]
    ShutDown,
    /// An earlier write or fsync failed; the log can no longer promise
    /// durability, so every waiter and every later call gets this error.
    #[error("redo log stopped after a fatal error: {0}")]
    Failed(Arc<LogError>),
}

impl LogError {
    /// True when the log cannot be used any more (a write or fsync failed,
    /// or it was shut down): the server must stop rather than retry.
    pub fn is_fatal(&self) -> bool {
        matches!(self, LogError::Failed(_) | LogError::ShutDown)
    }

    /// True for damaged log contents (as opposed to I/O or usage errors).
    pub fn is_corruption(&self) -> bool {
        match self {
            LogError::Corrupt { .. } => true,
            LogError::Failed(inner) => inner.is_corruption(),
            _ => false,
        }
    }
}
