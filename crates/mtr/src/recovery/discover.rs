//! Finding and opening the tablespaces of a data directory.
//!
//! The system tablespace is `datadir/ibdata1` (space 0). Every other
//! tablespace is a `*.ibd` file anywhere under the data directory (normally
//! `datadir/<db>/<table>.ibd`, searched three levels deep), plus the files
//! listed in [`crate::StorageConfig::tablespace_files`]. Its space id is
//! read from the FIL header of its page 0:
//!
//! * The id is taken from bytes 4..8 even when the page fails its
//!   checksum: page 0 of a tablespace always names the same space, and a
//!   torn write leaves either the old or the new first sector, both naming
//!   it. The doublewrite pass then repairs the page.
//! * A file whose page 0 is all zeroes (created, then a crash before its
//!   header reached the disk) or shorter than a page is skipped with a
//!   warning; redo for its space is then skipped as for a dropped table.
//! * Two files naming one id, or an `.ibd` naming space 0, make the data
//!   directory unusable ([`crate::MtrError::DataDir`]).
//!
//! The [`Io`] trait has no directory listing, so the search walks the real
//! filesystem with `std::fs` unless the backend is in-memory (tests list
//! their files in the configuration instead). A directory that does not
//! exist on the real filesystem yields nothing.
//!
//! Tablespace flags come from the tablespace header on page 0; they are
//! read after the doublewrite repair ([`open_spaces`] with flags), so a
//! repaired header gives its real flags.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use basalt_buf::{BufError, Spaces};
use basalt_common::{PageId, SpaceId, PAGE_SIZE};
use basalt_io::{AlignedBuf, Io, IoKind, OpenOptions};
use basalt_page::header::{self, PageState};
use tracing::{info, warn};

use crate::error::{MtrError, MtrResult};
use crate::fsp::SpaceHeader;
use crate::storage::StorageConfig;

/// How deep below the data directory `*.ibd` files are searched.
const MAX_DEPTH: usize = 3;

/// A tablespace file and the space id it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TablespaceFile {
    pub(crate) id: SpaceId,
    pub(crate) path: PathBuf,
}

fn io_err(e: basalt_io::IoError) -> MtrError {
    MtrError::Buf(BufError::Io(e))
}

/// Reads page 0 of `path`; `None` when the file is shorter than a page.
fn read_page0(io: &Arc<dyn Io>, path: &Path, direct: bool) -> MtrResult<Option<AlignedBuf>> {
    let file = io
        .open(
            path,
            OpenOptions {
                create: false,
                direct,
            },
        )
        .map_err(io_err)?;
    if file.len().map_err(io_err)? < PAGE_SIZE as u64 {
        return Ok(None);
    }
    let mut page = AlignedBuf::zeroed(PAGE_SIZE);
    file.read_at(&mut page, 0).map_err(io_err)?;
    Ok(Some(page))
}

/// Collects `*.ibd` files under `dir` from the real filesystem.
fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> MtrResult<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err(basalt_io::IoError::os("read directory", dir, e))),
    };
    for entry in entries {
        let entry = entry.map_err(|e| io_err(basalt_io::IoError::os("read directory", dir, e)))?;
        let path = entry.path();
        let ty = entry
            .file_type()
            .map_err(|e| io_err(basalt_io::IoError::os("stat", &path, e)))?;
        if ty.is_dir() && depth < MAX_DEPTH {
            walk(&path, depth + 1, out)?;
        } else if ty.is_file() && path.extension().is_some_and(|x| x == "ibd") {
            out.push(path);
        }
    }
    Ok(())
}

/// Finds every tablespace of the data directory: `ibdata1` first, then the
/// `*.ibd` files by path.
pub(crate) fn discover(io: &Arc<dyn Io>, config: &StorageConfig) -> MtrResult<Vec<TablespaceFile>> {
    let sys = config.system_tablespace_path();
    if !io.exists(&sys) {
        return Err(MtrError::DataDir {
            dir: config.datadir.clone(),
            reason: format!("the system tablespace {} is missing", sys.display()),
        });
    }
    let mut paths = Vec::new();
    if io.kind() != IoKind::Memory {
        walk(&config.datadir, 0, &mut paths)?;
    }
    paths.extend(config.tablespace_files.iter().cloned());
    paths.sort();
    paths.dedup();

    let mut files = vec![TablespaceFile {
        id: SpaceId::SYSTEM,
        path: sys,
    }];
    let mut by_id: HashMap<SpaceId, PathBuf> = HashMap::new();
    for path in paths {
        if !io.exists(&path) {
            warn!(path = %path.display(), "listed tablespace file does not exist; skipped");
            continue;
        }
        let Some(page) = read_page0(io, &path, config.direct_data_files)? else {
            warn!(path = %path.display(), "tablespace file shorter than one page; skipped");
            continue;
        };
        if page.iter().all(|&b| b == 0) {
            warn!(path = %path.display(), "tablespace file has no header (page 0 never written); skipped");
            continue;
        }
        let named = header::page_id(&page);
        if named.page_no != 0 {
            warn!(path = %path.display(), header = %named, "page 0 of tablespace file names another page; skipped");
            continue;
        }
        if named.space == SpaceId::SYSTEM {
            return Err(MtrError::DataDir {
                dir: config.datadir.clone(),
                reason: format!("{} claims to be the system tablespace", path.display()),
            });
        }
        if let Some(other) = by_id.insert(named.space, path.clone()) {
            return Err(MtrError::DataDir {
                dir: config.datadir.clone(),
                reason: format!(
                    "{} and {} both hold tablespace {}",
                    other.display(),
                    path.display(),
                    named.space
                ),
            });
        }
        files.push(TablespaceFile {
            id: named.space,
            path,
        });
    }
    Ok(files)
}

/// Flags of the tablespace whose page 0 is at `path`: from its header when
/// the page verifies, else 0 (with a warning: redo or a later read will
/// report the damage if the page is used).
fn read_flags(io: &Arc<dyn Io>, file: &TablespaceFile, direct: bool) -> MtrResult<u32> {
    let id = PageId::new(file.id, 0);
    let Some(page) = read_page0(io, &file.path, direct)? else {
        return Ok(0);
    };
    match header::verify(&page, id) {
        Ok(PageState::Valid) => match SpaceHeader::read(&page, file.id) {
            Ok(h) => Ok(h.flags),
            Err(e) => {
                warn!(path = %file.path.display(), error = %e, "tablespace header unreadable; flags taken as 0");
                Ok(0)
            }
        },
        Ok(PageState::Zeroed) => Ok(0),
        Err(reason) => {
            warn!(path = %file.path.display(), %reason, "page 0 fails verification; flags taken as 0");
            Ok(0)
        }
    }
}

/// Opens `files` in a new registry. With `with_flags`, each space's flags
/// are read from its page 0 (do this after the doublewrite repair).
pub(crate) fn open_spaces(
    io: &Arc<dyn Io>,
    config: &StorageConfig,
    files: &[TablespaceFile],
    with_flags: bool,
) -> MtrResult<Spaces> {
    let direct = config.direct_data_files;
    let spaces = Spaces::new(Arc::clone(io), config.spaces_config());
    for f in files {
        let flags = if with_flags {
            read_flags(io, f, direct)?
        } else {
            0
        };
        let space = spaces.open(f.id, &f.path, flags)?;
        if with_flags {
            info!(space = f.id.0, path = %f.path.display(), pages = space.size(), "opened tablespace");
        }
    }
    Ok(spaces)
}
