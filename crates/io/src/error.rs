//! I/O errors.

use std::path::PathBuf;

/// Result of an I/O call.
pub type IoResult<T> = Result<T, IoError>;

/// Why an I/O call failed.
#[derive(Debug, thiserror::Error)]
pub enum IoError {
    /// The operating system refused the call.
    #[error("{op} {path}: {source}")]
    Os {
        /// What was attempted ("read", "write", "fsync", "open", ...).
        op: &'static str,
        /// File concerned.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A read reached the end of the file before filling the buffer.
    #[error("read of {len} bytes at offset {offset} in {path} passes the end of the file")]
    UnexpectedEof {
        /// File concerned.
        path: PathBuf,
        /// Offset of the read.
        offset: u64,
        /// Length of the read.
        len: usize,
    },
    /// A fault injected on purpose by the test backend.
    #[error("injected fault: {0}")]
    Injected(String),
}

impl IoError {
    /// An [`IoError::Os`] for `op` on `path`.
    pub fn os(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> IoError {
        IoError::Os {
            op,
            path: path.into(),
            source,
        }
    }

    /// True for faults injected by the test backend.
    pub fn is_injected(&self) -> bool {
        matches!(self, IoError::Injected(_))
    }

    /// True when a read ran past the end of the file.
    pub fn is_unexpected_eof(&self) -> bool {
        matches!(self, IoError::UnexpectedEof { .. })
    }

    /// The raw `errno` of an OS failure, when there is one.
    pub fn os_code(&self) -> Option<i32> {
        match self {
            IoError::Os { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }

    /// The kind of an OS failure (`NotFound`, `InvalidInput`, ...).
    pub fn os_kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            IoError::Os { source, .. } => Some(source.kind()),
            _ => None,
        }
    }
}
