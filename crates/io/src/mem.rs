//! The in-memory backend for tests: `MemIo` and its `MemFile`.
//!
//! Each file keeps two images:
//!
//! ```text
//!   write_at / set_len ──▶ volatile ──(sync)──▶ durable
//!   read_at / len     ◀── volatile
//!   MemIo::crash()          volatile := durable   (for every file)
//! ```
//!
//! The volatile image is what the page cache would hold; the durable image
//! is what survives power loss. Namespace operations (create, remove,
//! create_dir_all) take effect at once and are durable immediately: a file
//! exists from the moment it is created until it is removed, crash or not,
//! and a created-but-never-synced file survives a crash empty. This is
//! simpler (and kinder) than a real filesystem, where an unsynced directory
//! entry can vanish; code that must be correct on real disks still calls
//! `sync_dir`, which `MemIo` counts.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::posix::check_direct_alignment;
use crate::{FileRef, Io, IoError, IoFile, IoKind, IoRequest, IoResult, OpenOptions};

/// The two images of one in-memory file.
#[derive(Debug, Default)]
struct Images {
    volatile: Vec<u8>,
    durable: Vec<u8>,
    /// The volatile image differs from the durable one.
    dirty: bool,
}

#[derive(Debug, Default)]
struct MemFileData {
    images: Mutex<Images>,
}

/// Operation counters, shared by a `MemIo` and its files.
#[derive(Debug, Default)]
struct Counters {
    reads: AtomicU64,
    writes: AtomicU64,
    syncs: AtomicU64,
    dir_syncs: AtomicU64,
}

/// The namespace: files and directories by path.
#[derive(Debug, Default)]
struct Namespace {
    files: HashMap<PathBuf, Arc<MemFileData>>,
    dirs: HashSet<PathBuf>,
}

/// In-memory filesystem with a crash model (see the module note).
///
/// Paths are plain keys: no parent directory has to exist, and `a/b` and
/// `a/./b` are different files. Direct I/O is granted when asked for (unless
/// [`MemIo::set_direct_supported`] turned it off) and enforces the same
/// offset/length alignment as O_DIRECT, so alignment bugs show up in
/// in-memory tests too.
///
/// Latch order: the namespace mutex before any file's image mutex.
#[derive(Debug, Default)]
pub struct MemIo {
    ns: Mutex<Namespace>,
    counters: Arc<Counters>,
    no_direct: AtomicBool,
}

impl MemIo {
    /// An empty in-memory filesystem.
    pub fn new() -> MemIo {
        MemIo::default()
    }

    /// Simulates power loss: every file reverts to its durable image
    /// (everything written or resized since its last `sync` is lost).
    /// Handles opened before the crash stay usable and see the reverted
    /// contents.
    pub fn crash(&self) {
        let ns = self.ns.lock();
        for data in ns.files.values() {
            let mut img = data.images.lock();
            let Images {
                volatile,
                durable,
                dirty,
            } = &mut *img;
            volatile.clear();
            volatile.extend_from_slice(durable);
            *dirty = false;
        }
    }

    /// A new in-memory filesystem holding the durable image of every file
    /// (both its images equal to it) and the same directories: what a copy
    /// of the disks taken after a power cut right now would hold, while
    /// this one keeps running. Counters start at zero.
    pub fn durable_snapshot(&self) -> MemIo {
        let ns = self.ns.lock();
        let files = ns
            .files
            .iter()
            .map(|(path, data)| {
                let durable = data.images.lock().durable.clone();
                let images = Images {
                    volatile: durable.clone(),
                    durable,
                    dirty: false,
                };
                let copy = MemFileData {
                    images: Mutex::new(images),
                };
                (path.clone(), Arc::new(copy))
            })
            .collect();
        MemIo {
            ns: Mutex::new(Namespace {
                files,
                dirs: ns.dirs.clone(),
            }),
            counters: Arc::default(),
            no_direct: AtomicBool::new(self.no_direct.load(Ordering::Relaxed)),
        }
    }

    /// The current (volatile) contents of a file, as a reader would see them.
    pub fn file_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        let data = self.ns.lock().files.get(path).cloned()?;
        let bytes = data.images.lock().volatile.clone();
        Some(bytes)
    }

    /// The durable contents of a file: what a crash now would leave.
    pub fn durable_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        let data = self.ns.lock().files.get(path).cloned()?;
        let bytes = data.images.lock().durable.clone();
        Some(bytes)
    }

    /// Paths of all files, sorted.
    pub fn file_paths(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = self.ns.lock().files.keys().cloned().collect();
        paths.sort();
        paths
    }

    /// Writes performed (single calls and batch requests).
    pub fn writes(&self) -> u64 {
        self.counters.writes.load(Ordering::Relaxed)
    }

    /// Reads performed (single calls and batch requests).
    pub fn reads(&self) -> u64 {
        self.counters.reads.load(Ordering::Relaxed)
    }

    /// File syncs performed.
    pub fn syncs(&self) -> u64 {
        self.counters.syncs.load(Ordering::Relaxed)
    }

    /// Directory syncs performed.
    pub fn dir_syncs(&self) -> u64 {
        self.counters.dir_syncs.load(Ordering::Relaxed)
    }

    /// With `false`, opening with `direct: true` yields buffered files
    /// (`is_direct() == false`), like a filesystem that refuses O_DIRECT.
    pub fn set_direct_supported(&self, supported: bool) {
        self.no_direct.store(!supported, Ordering::Relaxed);
    }
}

fn not_found(op: &'static str, path: &Path) -> IoError {
    IoError::os(op, path, std::io::Error::from(std::io::ErrorKind::NotFound))
}

impl Io for MemIo {
    fn kind(&self) -> IoKind {
        IoKind::Memory
    }

    fn open(&self, path: &Path, opts: OpenOptions) -> IoResult<FileRef> {
        let mut ns = self.ns.lock();
        if ns.dirs.contains(path) {
            return Err(IoError::os(
                "open",
                path,
                std::io::Error::from_raw_os_error(libc::EISDIR),
            ));
        }
        let data = match ns.files.get(path) {
            Some(d) => d.clone(),
            None if opts.create => {
                let d = Arc::new(MemFileData::default());
                ns.files.insert(path.to_path_buf(), d.clone());
                d
            }
            None => return Err(not_found("open", path)),
        };
        let direct = opts.direct && !self.no_direct.load(Ordering::Relaxed);
        Ok(Arc::new(MemFile {
            data,
            path: path.to_path_buf(),
            direct,
            counters: self.counters.clone(),
        }))
    }

    fn exists(&self, path: &Path) -> bool {
        let ns = self.ns.lock();
        ns.files.contains_key(path) || ns.dirs.contains(path)
    }

    fn remove_file(&self, path: &Path) -> IoResult<()> {
        match self.ns.lock().files.remove(path) {
            Some(_) => Ok(()),
            None => Err(not_found("unlink", path)),
        }
    }

    fn create_dir_all(&self, path: &Path) -> IoResult<()> {
        let mut ns = self.ns.lock();
        for dir in path.ancestors().filter(|p| !p.as_os_str().is_empty()) {
            if ns.files.contains_key(dir) {
                return Err(IoError::os(
                    "mkdir",
                    dir,
                    std::io::Error::from_raw_os_error(libc::ENOTDIR),
                ));
            }
            ns.dirs.insert(dir.to_path_buf());
        }
        Ok(())
    }

    fn sync_dir(&self, path: &Path) -> IoResult<()> {
        if !self.ns.lock().dirs.contains(path) {
            return Err(not_found("open", path));
        }
        self.counters.dir_syncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Runs the requests one by one on the calling thread, in order.
    fn run_batch(
        &self,
        requests: &mut [IoRequest],
        on_complete: &mut dyn FnMut(usize, &mut IoRequest, IoResult<()>),
    ) {
        for (i, req) in requests.iter_mut().enumerate() {
            let result = crate::posix::execute_request(&req.file, req.op, &mut req.buf, req.offset);
            on_complete(i, req, result);
        }
    }
}

/// One open in-memory file.
#[derive(Debug)]
pub struct MemFile {
    data: Arc<MemFileData>,
    path: PathBuf,
    direct: bool,
    counters: Arc<Counters>,
}

impl MemFile {
    /// `offset..offset+len` as a usize range, or an error when it cannot
    /// be addressed in memory.
    fn range(&self, op: &'static str, offset: u64, len: usize) -> IoResult<std::ops::Range<usize>> {
        let start = usize::try_from(offset).ok();
        match start.and_then(|s| s.checked_add(len).map(|e| s..e)) {
            Some(r) => Ok(r),
            None => Err(IoError::os(
                op,
                &self.path,
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    format!("offset {offset} + {len} bytes is beyond an in-memory file's reach"),
                ),
            )),
        }
    }
}

impl IoFile for MemFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> IoResult<()> {
        if self.direct {
            check_direct_alignment("read", &self.path, offset, buf.len())?;
        }
        let range = self.range("read", offset, buf.len())?;
        self.counters.reads.fetch_add(1, Ordering::Relaxed);
        let img = self.data.images.lock();
        match img.volatile.get(range) {
            Some(src) => {
                buf.copy_from_slice(src);
                Ok(())
            }
            None => Err(IoError::UnexpectedEof {
                path: self.path.clone(),
                offset,
                len: buf.len(),
            }),
        }
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> IoResult<()> {
        if self.direct {
            check_direct_alignment("write", &self.path, offset, buf.len())?;
        }
        let range = self.range("write", offset, buf.len())?;
        self.counters.writes.fetch_add(1, Ordering::Relaxed);
        if buf.is_empty() {
            // Like pwrite of zero bytes: no effect, not even on the length.
            return Ok(());
        }
        let mut img = self.data.images.lock();
        if img.volatile.len() < range.end {
            img.volatile.resize(range.end, 0);
        }
        img.volatile[range].copy_from_slice(buf);
        img.dirty = true;
        Ok(())
    }

    fn sync(&self) -> IoResult<()> {
        self.counters.syncs.fetch_add(1, Ordering::Relaxed);
        let mut img = self.data.images.lock();
        if img.dirty {
            let Images {
                volatile,
                durable,
                dirty,
            } = &mut *img;
            durable.clear();
            durable.extend_from_slice(volatile);
            *dirty = false;
        }
        Ok(())
    }

    fn len(&self) -> IoResult<u64> {
        Ok(self.data.images.lock().volatile.len() as u64)
    }

    fn set_len(&self, len: u64) -> IoResult<()> {
        let new_len = self.range("ftruncate", len, 0)?.start;
        let mut img = self.data.images.lock();
        img.volatile.resize(new_len, 0);
        img.dirty = true;
        Ok(())
    }

    fn is_direct(&self) -> bool {
        self.direct
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}
