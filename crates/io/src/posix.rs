//! The pread/pwrite backend: `PosixIo`, its `PosixFile`, and the O_DIRECT
//! rules shared by every backend that opens real files.

use std::fs::File;
use std::io::ErrorKind;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use tracing::{debug, info};

use crate::pool::PosixPool;
use crate::{
    AlignedBuf, FileRef, Io, IoError, IoFile, IoKind, IoOp, IoRequest, IoResult, OpenOptions,
    DIRECT_IO_ALIGN,
};

/// Worker threads a [`PosixIo`] starts when not told otherwise.
pub const DEFAULT_POSIX_THREADS: usize = 4;

/// Fails with `InvalidInput` unless `offset` and `len` are multiples of
/// [`DIRECT_IO_ALIGN`], the rule O_DIRECT imposes on every transfer. Backends
/// that grant (or emulate) direct I/O call this before touching the file, so
/// a misaligned request is reported clearly instead of surfacing as a bare
/// `EINVAL` from the kernel.
pub(crate) fn check_direct_alignment(
    op: &'static str,
    path: &Path,
    offset: u64,
    len: usize,
) -> IoResult<()> {
    let align = DIRECT_IO_ALIGN as u64;
    if offset % align == 0 && (len as u64) % align == 0 {
        return Ok(());
    }
    Err(IoError::os(
        op,
        path,
        std::io::Error::new(
            ErrorKind::InvalidInput,
            format!(
                "O_DIRECT {op} of {len} bytes at offset {offset}: offset and length must be \
                 multiples of {DIRECT_IO_ALIGN}"
            ),
        ),
    ))
}

/// True when `ptr` may be handed to an O_DIRECT transfer as is.
fn is_aligned_ptr(ptr: *const u8) -> bool {
    ptr as usize % DIRECT_IO_ALIGN == 0
}

/// A file opened on the real filesystem. Used by [`PosixIo`] and by the
/// io_uring backend, which submits batched I/O on [`IoFile::raw_fd`].
///
/// With O_DIRECT granted ([`IoFile::is_direct`]), `offset` and the buffer
/// length of every read and write must be multiples of [`DIRECT_IO_ALIGN`]
/// (otherwise the call fails with `InvalidInput` before reaching the
/// kernel). The buffer *address* need not be aligned: a misaligned buffer
/// is bounced through an [`AlignedBuf`] (one allocation and copy), so
/// callers that care about speed pass aligned memory.
#[derive(Debug)]
pub struct PosixFile {
    file: File,
    path: PathBuf,
    direct: bool,
}

impl PosixFile {
    /// Opens `path` read-write. With `opts.direct` it asks for O_DIRECT and,
    /// when the filesystem refuses (`EINVAL`), reopens buffered;
    /// [`IoFile::is_direct`] reports the outcome.
    pub fn open(path: &Path, opts: OpenOptions) -> IoResult<PosixFile> {
        static LOGGED: AtomicBool = AtomicBool::new(false);
        PosixFile::open_logged(path, opts, &LOGGED)
    }

    /// As [`PosixFile::open`]; `fallback_logged` makes the "O_DIRECT refused"
    /// message appear once at info level per owner, then at debug level.
    pub(crate) fn open_logged(
        path: &Path,
        opts: OpenOptions,
        fallback_logged: &AtomicBool,
    ) -> IoResult<PosixFile> {
        if opts.direct {
            match open_std(path, opts.create, libc::O_DIRECT) {
                Ok(file) => {
                    return Ok(PosixFile {
                        file,
                        path: path.to_path_buf(),
                        direct: true,
                    })
                }
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    if !fallback_logged.swap(true, Ordering::Relaxed) {
                        info!(
                            path = %path.display(),
                            "filesystem refuses O_DIRECT; using buffered I/O for this and \
                             similar files"
                        );
                    } else {
                        debug!(path = %path.display(), "O_DIRECT refused; opened buffered");
                    }
                }
                Err(e) => return Err(IoError::os("open", path, e)),
            }
        }
        let file = open_std(path, opts.create, 0).map_err(|e| IoError::os("open", path, e))?;
        Ok(PosixFile {
            file,
            path: path.to_path_buf(),
            direct: false,
        })
    }

    /// The underlying `std` file.
    pub fn file(&self) -> &File {
        &self.file
    }

    fn map_read_err(&self, e: std::io::Error, offset: u64, len: usize) -> IoError {
        if e.kind() == ErrorKind::UnexpectedEof {
            IoError::UnexpectedEof {
                path: self.path.clone(),
                offset,
                len,
            }
        } else {
            IoError::os("read", &self.path, e)
        }
    }
}

fn open_std(path: &Path, create: bool, flags: i32) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(create)
        .custom_flags(flags)
        .open(path)
}

impl IoFile for PosixFile {
    // PERF: called for every page read; no allocation unless a direct file
    // is handed a misaligned buffer.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> IoResult<()> {
        let len = buf.len();
        if self.direct {
            check_direct_alignment("read", &self.path, offset, len)?;
            if !is_aligned_ptr(buf.as_ptr()) {
                let mut bounce = AlignedBuf::zeroed(len);
                self.file
                    .read_exact_at(&mut bounce, offset)
                    .map_err(|e| self.map_read_err(e, offset, len))?;
                buf.copy_from_slice(&bounce);
                return Ok(());
            }
        }
        self.file
            .read_exact_at(buf, offset)
            .map_err(|e| self.map_read_err(e, offset, len))
    }

    // PERF: called for every page and log write; same rule as read_at.
    fn write_at(&self, buf: &[u8], offset: u64) -> IoResult<()> {
        if self.direct {
            check_direct_alignment("write", &self.path, offset, buf.len())?;
            if !is_aligned_ptr(buf.as_ptr()) {
                let bounce = AlignedBuf::copy_from(buf);
                return self
                    .file
                    .write_all_at(&bounce, offset)
                    .map_err(|e| IoError::os("write", &self.path, e));
            }
        }
        self.file
            .write_all_at(buf, offset)
            .map_err(|e| IoError::os("write", &self.path, e))
    }

    fn sync(&self) -> IoResult<()> {
        self.file
            .sync_data()
            .map_err(|e| IoError::os("fdatasync", &self.path, e))
    }

    fn len(&self) -> IoResult<u64> {
        self.file
            .metadata()
            .map(|m| m.len())
            .map_err(|e| IoError::os("stat", &self.path, e))
    }

    fn set_len(&self, len: u64) -> IoResult<()> {
        self.file
            .set_len(len)
            .map_err(|e| IoError::os("ftruncate", &self.path, e))
    }

    fn is_direct(&self) -> bool {
        self.direct
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn raw_fd(&self) -> Option<RawFd> {
        Some(self.file.as_raw_fd())
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// Runs one request synchronously through its file's `read_at`/`write_at`.
pub(crate) fn execute_request(
    file: &FileRef,
    op: IoOp,
    buf: &mut AlignedBuf,
    offset: u64,
) -> IoResult<()> {
    match op {
        IoOp::Read => file.read_at(buf, offset),
        IoOp::Write => file.write_at(buf, offset),
    }
}

/// Directory operations shared by the backends that work on the real
/// filesystem.
pub(crate) mod fs_ops {
    use super::*;

    pub(crate) fn exists(path: &Path) -> bool {
        path.exists()
    }

    pub(crate) fn remove_file(path: &Path) -> IoResult<()> {
        std::fs::remove_file(path).map_err(|e| IoError::os("unlink", path, e))
    }

    pub(crate) fn create_dir_all(path: &Path) -> IoResult<()> {
        std::fs::create_dir_all(path).map_err(|e| IoError::os("mkdir", path, e))
    }

    /// fsync on the directory itself, which makes its entries (files
    /// created, renamed or removed in it) durable.
    pub(crate) fn sync_dir(path: &Path) -> IoResult<()> {
        let dir = File::open(path).map_err(|e| IoError::os("open", path, e))?;
        dir.sync_all().map_err(|e| IoError::os("fsync", path, e))
    }
}

/// pread/pwrite backend. Single calls run on the calling thread; batches
/// are spread over a fixed pool of worker threads started by
/// [`PosixIo::new`] and stopped when the `PosixIo` is dropped.
#[derive(Debug)]
pub struct PosixIo {
    pool: PosixPool,
    direct_fallback_logged: AtomicBool,
}

impl PosixIo {
    /// A backend whose batches run on `threads` worker threads (at least
    /// one is asked for; if the OS refuses to start any, batches run on the
    /// calling thread).
    pub fn new(threads: usize) -> PosixIo {
        PosixIo {
            pool: PosixPool::new(threads.max(1)),
            direct_fallback_logged: AtomicBool::new(false),
        }
    }

    /// Worker threads actually running.
    pub fn threads(&self) -> usize {
        self.pool.threads()
    }
}

impl Default for PosixIo {
    fn default() -> PosixIo {
        PosixIo::new(DEFAULT_POSIX_THREADS)
    }
}

impl Io for PosixIo {
    fn kind(&self) -> IoKind {
        IoKind::Posix
    }

    fn open(&self, path: &Path, opts: OpenOptions) -> IoResult<FileRef> {
        Ok(std::sync::Arc::new(PosixFile::open_logged(
            path,
            opts,
            &self.direct_fallback_logged,
        )?))
    }

    fn exists(&self, path: &Path) -> bool {
        fs_ops::exists(path)
    }

    fn remove_file(&self, path: &Path) -> IoResult<()> {
        fs_ops::remove_file(path)
    }

    fn create_dir_all(&self, path: &Path) -> IoResult<()> {
        fs_ops::create_dir_all(path)
    }

    fn sync_dir(&self, path: &Path) -> IoResult<()> {
        fs_ops::sync_dir(path)
    }

    fn run_batch(
        &self,
        requests: &mut [IoRequest],
        on_complete: &mut dyn FnMut(usize, &mut IoRequest, IoResult<()>),
    ) {
        // PERF: a batch of one gains nothing from a thread hop.
        if requests.len() <= 1 || self.pool.threads() == 0 {
            for (i, req) in requests.iter_mut().enumerate() {
                let result = execute_request(&req.file, req.op, &mut req.buf, req.offset);
                on_complete(i, req, result);
            }
            return;
        }
        self.pool.run(requests, on_complete);
    }
}
