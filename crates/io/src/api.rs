//! The I/O contract every backend implements.
//!
//! This file is the stable seam between the storage layers and the backends;
//! the backends live in sibling modules.

use std::fmt::Debug;
use std::path::Path;
use std::sync::Arc;

use crate::{AlignedBuf, IoResult};

/// How to open a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// Create the file when it does not exist.
    pub create: bool,
    /// Ask for O_DIRECT (bypass the OS page cache). Backends fall back to
    /// buffered I/O when the filesystem refuses it; [`IoFile::is_direct`]
    /// reports what was granted.
    pub direct: bool,
}

/// One open file. Offsets are absolute; reads and writes are exact (a short
/// transfer is retried, or reported as an error).
pub trait IoFile: Send + Sync + Debug {
    /// Reads exactly `buf.len()` bytes at `offset`. Reading past the end of
    /// the file fails with [`crate::IoError::UnexpectedEof`].
    fn read_at(&self, buf: &mut [u8], offset: u64) -> IoResult<()>;
    /// Writes all of `buf` at `offset`, extending the file when needed.
    fn write_at(&self, buf: &[u8], offset: u64) -> IoResult<()>;
    /// Makes every completed write durable (fdatasync).
    fn sync(&self) -> IoResult<()>;
    /// Current file length in bytes.
    fn len(&self) -> IoResult<u64>;
    /// True when the file holds no bytes.
    fn is_empty(&self) -> IoResult<bool> {
        Ok(self.len()? == 0)
    }
    /// Grows or shrinks the file to `len` bytes.
    fn set_len(&self, len: u64) -> IoResult<()>;
    /// True when O_DIRECT was granted: buffers and offsets must then be
    /// aligned to [`crate::DIRECT_IO_ALIGN`].
    fn is_direct(&self) -> bool;
    /// Path the file was opened with (for messages).
    fn path(&self) -> &Path;
    /// The OS file descriptor, for backends that submit I/O themselves.
    fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
        None
    }
    /// The concrete file, for backends that must recognise their own files
    /// inside a batch (the fault-injecting wrapper unwraps its files this
    /// way). Files that need no such treatment keep the default `None`.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
}

/// Shared handle to an open file.
pub type FileRef = Arc<dyn IoFile>;

/// Direction of a batched request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoOp {
    /// Fill `buf` from the file.
    Read,
    /// Write `buf` to the file.
    Write,
}

/// One request of a batch submitted with [`Io::run_batch`].
#[derive(Debug)]
pub struct IoRequest {
    /// Target file.
    pub file: FileRef,
    /// Absolute byte offset.
    pub offset: u64,
    /// Read into / write from this buffer (its whole length).
    pub buf: AlignedBuf,
    /// Read or write.
    pub op: IoOp,
}

/// Which backend is in use (reported in logs and status variables).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoKind {
    /// Linux io_uring (`innodb_use_native_aio=ON` and the kernel allows it).
    Uring,
    /// pread/pwrite, with a thread pool for batches.
    Posix,
    /// In-memory files, for tests.
    Memory,
    /// A fault-injecting wrapper around another backend, for tests.
    Faulty,
}

/// A file-I/O backend: opens files and runs batches of requests.
pub trait Io: Send + Sync + Debug {
    /// Which backend this is.
    fn kind(&self) -> IoKind;
    /// Opens (and with `opts.create`, creates) a file.
    fn open(&self, path: &Path, opts: OpenOptions) -> IoResult<FileRef>;
    /// True when the path exists.
    fn exists(&self, path: &Path) -> bool;
    /// Deletes a file.
    fn remove_file(&self, path: &Path) -> IoResult<()>;
    /// Creates a directory and its parents.
    fn create_dir_all(&self, path: &Path) -> IoResult<()>;
    /// Makes a directory's entries (created/removed files) durable.
    fn sync_dir(&self, path: &Path) -> IoResult<()>;
    /// Submits every request at once and calls `on_complete(index, result)`
    /// on the calling thread as each one completes, in completion order (not
    /// submission order). Returns when all have completed. Backends with
    /// native asynchronous I/O keep many requests in flight; the fallback
    /// runs them on a thread pool.
    fn run_batch(
        &self,
        requests: &mut [IoRequest],
        on_complete: &mut dyn FnMut(usize, &mut IoRequest, IoResult<()>),
    );
}
