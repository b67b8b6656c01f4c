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
