//! Tablespace registry: space id -> open file, size, path, flags.
//!
//! Every page the buffer pool reads or writes goes through a [`Space`] looked
//! up in [`Spaces`]. The registry itself is a read-mostly map behind a
//! read-write latch; a [`Space`] is shared (`Arc`) so a lookup never holds the
//! registry latch across I/O.
//!
//! Size is kept in pages in an atomic so readers check bounds without a
//! latch. Growing a file takes the space's own extension mutex, so two
//! threads extending the same file do not race on `set_len`. Files grow in
//! chunks ([`Spaces::extend`]): to the next whole extent (64 pages, 1 MiB)
//! while the file is small, then by [`EXTEND_CHUNK_LARGE`] pages (4 MiB) at a
//! time, as InnoDB does for file-per-table spaces.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use basalt_common::{PageNo, SpaceId, PAGE_SIZE};
use basalt_io::{FileRef, Io, OpenOptions};
use parking_lot::{Mutex, RwLock};
use tracing::info;

use crate::error::{BufError, BufResult};

/// Pages per extent (1 MiB).
pub const EXTENT_PAGES: u32 = 64;
/// Files at least this many pages long grow by [`EXTEND_CHUNK_LARGE`].
pub const EXTEND_LARGE_FROM: u32 = 32 * EXTENT_PAGES;
/// Growth step, in pages, of large files (4 MiB).
pub const EXTEND_CHUNK_LARGE: u32 = 4 * EXTENT_PAGES;

/// How data files are opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpacesConfig {
    /// Open data files with O_DIRECT (`innodb_flush_method=O_DIRECT`). The
    /// backend falls back to buffered I/O where the filesystem refuses.
    pub direct: bool,
    /// `innodb_flush_method=O_DIRECT_NO_FSYNC`: page writes to a file that
    /// really is open with O_DIRECT are not followed by an fsync (the
    /// device's own write cache is trusted, as with MySQL's option). Files
    /// that grew, files the filesystem opened without O_DIRECT, and the
    /// repair writes of recovery are still synced.
    pub skip_fsync_after_direct_writes: bool,
}

/// One open tablespace file.
#[derive(Debug)]
pub struct Space {
    id: SpaceId,
    path: PathBuf,
    flags: u32,
    file: FileRef,
    /// [`SpacesConfig::skip_fsync_after_direct_writes`] applies: the option
    /// is on and the file is open with O_DIRECT.
    skip_write_fsync: bool,
    /// The file grew since the last sync: its new size must be synced even
    /// under `O_DIRECT_NO_FSYNC`.
    grown: AtomicBool,
    size: AtomicU32,
    extend: Mutex<()>,
}

impl Space {
    /// The tablespace id.
    pub fn id(&self) -> SpaceId {
        self.id
    }

    /// Path of the file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Tablespace flags (opaque to the buffer pool; stored for the
    /// tablespace layer).
    pub fn flags(&self) -> u32 {
        self.flags
    }

    /// The open file.
    pub fn file(&self) -> &FileRef {
        &self.file
    }

    /// Current size in pages.
    pub fn size(&self) -> u32 {
        self.size.load(Ordering::Acquire)
    }

    /// Reads page `page_no` into `buf` (one page long).
    pub fn read_page(&self, page_no: PageNo, buf: &mut [u8]) -> BufResult<()> {
        debug_assert_eq!(buf.len(), PAGE_SIZE);
        self.file
            .read_at(buf, u64::from(page_no) * PAGE_SIZE as u64)?;
        Ok(())
    }

    /// Writes `buf` (one or more whole pages) starting at page `page_no`.
    pub fn write_pages(&self, page_no: PageNo, buf: &[u8]) -> BufResult<()> {
        debug_assert_eq!(buf.len() % PAGE_SIZE, 0);
        self.file
            .write_at(buf, u64::from(page_no) * PAGE_SIZE as u64)?;
        Ok(())
    }

    /// Makes every completed write durable.
    pub fn sync(&self) -> BufResult<()> {
        self.file.sync()?;
        Ok(())
    }

    /// Makes completed page writes durable before the pages count as
    /// clean: [`Space::sync`], unless `O_DIRECT_NO_FSYNC` applies to this
    /// file (see [`SpacesConfig::skip_fsync_after_direct_writes`]). Returns
    /// whether it synced.
    pub fn sync_page_writes(&self) -> BufResult<bool> {
        if self.skip_write_fsync && !self.grown.load(Ordering::Acquire) {
            return Ok(false);
        }
        // Cleared before the fsync: an extension racing with it sets the
        // flag again after its set_len, so the next call syncs it.
        self.grown.store(false, Ordering::Release);
        if let Err(e) = self.sync() {
            self.grown.store(true, Ordering::Release);
            return Err(e);
        }
        Ok(true)
    }
}

/// The registry of open tablespaces.
#[derive(Debug)]
pub struct Spaces {
    io: Arc<dyn Io>,
    cfg: SpacesConfig,
    map: RwLock<HashMap<SpaceId, Arc<Space>>>,
}

impl Spaces {
    /// An empty registry opening files through `io`.
    pub fn new(io: Arc<dyn Io>, cfg: SpacesConfig) -> Spaces {
        Spaces {
            io,
            cfg,
            map: RwLock::new(HashMap::new()),
        }
    }

    /// The I/O backend.
    pub fn io(&self) -> &Arc<dyn Io> {
        &self.io
    }

    fn open_options(&self, create: bool) -> OpenOptions {
        OpenOptions {
            create,
            direct: self.cfg.direct,
        }
    }

    /// Registers the open file `file` of `pages` pages as space `id`.
    fn register(
        &self,
        id: SpaceId,
        path: &Path,
        flags: u32,
        file: FileRef,
        pages: u32,
    ) -> BufResult<Arc<Space>> {
        let space = Space {
            id,
            path: path.to_path_buf(),
            flags,
            skip_write_fsync: self.cfg.skip_fsync_after_direct_writes && file.is_direct(),
            file,
            grown: AtomicBool::new(false),
            size: AtomicU32::new(pages),
            extend: Mutex::new(()),
        };
        let mut map = self.map.write();
        if map.contains_key(&space.id) {
            return Err(BufError::SpaceExists(space.id));
        }
        let space = Arc::new(space);
        map.insert(space.id, Arc::clone(&space));
        Ok(space)
    }

    /// Creates a new tablespace file of `size_pages` zeroed pages, makes it
    /// and its directory entry durable, and registers it. Fails when the id
    /// is registered or the file exists.
    pub fn create(
        &self,
        id: SpaceId,
        path: &Path,
        flags: u32,
        size_pages: u32,
    ) -> BufResult<Arc<Space>> {
        if self.map.read().contains_key(&id) {
            return Err(BufError::SpaceExists(id));
        }
        if self.io.exists(path) {
            return Err(BufError::SpaceFileExists(path.to_path_buf()));
        }
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        if let Some(dir) = dir {
            self.io.create_dir_all(dir)?;
        }
        let file = self.io.open(path, self.open_options(true))?;
        file.set_len(u64::from(size_pages) * PAGE_SIZE as u64)?;
        file.sync()?;
        if let Some(dir) = dir {
            self.io.sync_dir(dir)?;
        }
        info!(space = id.0, path = %path.display(), size_pages, "created tablespace");
        self.register(id, path, flags, file, size_pages)
    }

    /// Opens an existing tablespace file and registers it; its size is the
    /// file length in pages.
    pub fn open(&self, id: SpaceId, path: &Path, flags: u32) -> BufResult<Arc<Space>> {
        if self.map.read().contains_key(&id) {
            return Err(BufError::SpaceExists(id));
        }
        let file = self.io.open(path, self.open_options(false))?;
        let len = file.len()?;
        if len % PAGE_SIZE as u64 != 0 {
            return Err(BufError::BadSpaceFile {
                path: path.to_path_buf(),
                len,
            });
        }
        let pages = u32::try_from(len / PAGE_SIZE as u64).map_err(|_| BufError::BadSpaceFile {
            path: path.to_path_buf(),
            len,
        })?;
        self.register(id, path, flags, file, pages)
    }

    /// The registered space `id`.
    pub fn get(&self, id: SpaceId) -> BufResult<Arc<Space>> {
        self.map
            .read()
            .get(&id)
            .cloned()
            .ok_or(BufError::NoSuchSpace(id))
    }

    /// Ids of every registered space, sorted.
    pub fn ids(&self) -> Vec<SpaceId> {
        let mut ids: Vec<SpaceId> = self.map.read().keys().copied().collect();
        ids.sort();
        ids
    }

    /// Grows space `id` to at least `min_pages` pages, rounding up to the
    /// growth chunk; returns the new size. Never shrinks.
    pub fn extend(&self, id: SpaceId, min_pages: u32) -> BufResult<u32> {
        let space = self.get(id)?;
        let _serial = space.extend.lock();
        let cur = space.size();
        if cur >= min_pages {
            return Ok(cur);
        }
        let target = extension_target(cur, min_pages);
        space.file.set_len(u64::from(target) * PAGE_SIZE as u64)?;
        space.grown.store(true, Ordering::Release);
        space.size.store(target, Ordering::Release);
        Ok(target)
    }

    /// Forgets space `id` without touching its file; returns it.
    pub fn close(&self, id: SpaceId) -> BufResult<Arc<Space>> {
        self.map
            .write()
            .remove(&id)
            .ok_or(BufError::NoSuchSpace(id))
    }

    /// Forgets space `id` and deletes its file (DROP TABLE). The caller has
    /// discarded its pages from the buffer pool first
    /// ([`crate::BufferPool::discard_space`]).
    pub fn remove(&self, id: SpaceId) -> BufResult<()> {
        let space = self.close(id)?;
        self.io.remove_file(&space.path)?;
        if let Some(dir) = space.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            self.io.sync_dir(dir)?;
        }
        info!(space = id.0, path = %space.path.display(), "removed tablespace");
        Ok(())
    }
}

/// Size a file of `cur` pages grows to when `min_pages` are needed.
pub fn extension_target(cur: u32, min_pages: u32) -> u32 {
    let chunk = if cur >= EXTEND_LARGE_FROM {
        EXTEND_CHUNK_LARGE
    } else {
        EXTENT_PAGES
    };
    let need = min_pages.max(cur);
    need.div_ceil(chunk).saturating_mul(chunk).max(need)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_files_grow_by_extents_large_by_four_mib() {
        assert_eq!(extension_target(0, 1), 64);
        assert_eq!(extension_target(64, 65), 128);
        assert_eq!(extension_target(100, 130), 192);
        assert_eq!(
            extension_target(EXTEND_LARGE_FROM, EXTEND_LARGE_FROM + 1),
            2304
        );
        assert_eq!(extension_target(5000, 5001), 5120);
        // Never below the request, never shrinking.
        assert_eq!(extension_target(300, 10), 320);
    }
}
