//! Backend selection: `IoConfig`, `FlushMethod` and `open_io`.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use tracing::{info, warn};

use crate::{Io, PosixIo, UringIo, DEFAULT_POSIX_THREADS, DEFAULT_QUEUE_DEPTH};

/// Environment variable that, set to `1` (or `true`/`on`/`yes`), makes
/// [`open_io`] choose [`PosixIo`] whatever the configuration says.
pub const FORCE_POSIX_ENV: &str = "BASALT_FORCE_POSIX_IO";

/// `innodb_flush_method`: how data files are opened and flushed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FlushMethod {
    /// `fsync`: buffered data files, fsync'd after writes.
    Fsync,
    /// `O_DIRECT`: data files bypass the page cache; still fsync'd, which
    /// makes file metadata (size, allocation) durable.
    #[default]
    ODirect,
    /// `O_DIRECT_NO_FSYNC`: like `O_DIRECT`, but the fsync after data
    /// writes is skipped unless the file's size changed (metadata must
    /// still reach the disk).
    ODirectNoFsync,
}

impl FlushMethod {
    /// Every method, in MySQL's documentation order.
    pub const ALL: [FlushMethod; 3] = [
        FlushMethod::Fsync,
        FlushMethod::ODirect,
        FlushMethod::ODirectNoFsync,
    ];

    /// The MySQL spelling (`fsync`, `O_DIRECT`, `O_DIRECT_NO_FSYNC`).
    pub fn mysql_name(self) -> &'static str {
        match self {
            FlushMethod::Fsync => "fsync",
            FlushMethod::ODirect => "O_DIRECT",
            FlushMethod::ODirectNoFsync => "O_DIRECT_NO_FSYNC",
        }
    }

    /// The method named `name` (MySQL spelling, any letter case).
    pub fn from_mysql_name(name: &str) -> Option<FlushMethod> {
        FlushMethod::ALL
            .into_iter()
            .find(|m| m.mysql_name().eq_ignore_ascii_case(name.trim()))
    }

    /// Open data files with `OpenOptions { direct: true, .. }`.
    pub fn direct_data_files(self) -> bool {
        matches!(self, FlushMethod::ODirect | FlushMethod::ODirectNoFsync)
    }

    /// True for `O_DIRECT_NO_FSYNC`: the fsync after direct data writes may
    /// be skipped (see [`FlushMethod::data_fsync_needed`] for the exception).
    pub fn skips_data_fsync(self) -> bool {
        self == FlushMethod::ODirectNoFsync
    }

    /// Whether data writes to a file must be followed by `sync()` before
    /// they count as durable. `file_grew` says whether the writes changed
    /// the file's size: that metadata needs an fsync even with
    /// `O_DIRECT_NO_FSYNC`. When O_DIRECT was refused for the file
    /// ([`crate::IoFile::is_direct`] is false) the caller must sync
    /// regardless.
    pub fn data_fsync_needed(self, file_grew: bool) -> bool {
        !self.skips_data_fsync() || file_grew
    }
}

impl fmt::Display for FlushMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mysql_name())
    }
}

/// An `innodb_flush_method` value that names no method.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown innodb_flush_method '{name}' (expected fsync, O_DIRECT or O_DIRECT_NO_FSYNC)")]
pub struct UnknownFlushMethod {
    /// The value given.
    pub name: String,
}

impl FromStr for FlushMethod {
    type Err = UnknownFlushMethod;

    fn from_str(s: &str) -> Result<FlushMethod, UnknownFlushMethod> {
        FlushMethod::from_mysql_name(s).ok_or_else(|| UnknownFlushMethod { name: s.to_owned() })
    }
}

/// What [`open_io`] needs to choose and size a backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoConfig {
    /// `innodb_use_native_aio`: use io_uring when the kernel allows it.
    pub use_native_aio: bool,
    /// `innodb_flush_method`.
    pub flush_method: FlushMethod,
    /// io_uring requests in flight per batch.
    pub queue_depth: u32,
    /// Worker threads of the pread/pwrite backend.
    pub posix_threads: usize,
}

impl Default for IoConfig {
    fn default() -> IoConfig {
        IoConfig {
            use_native_aio: true,
            flush_method: FlushMethod::default(),
            queue_depth: DEFAULT_QUEUE_DEPTH,
            posix_threads: DEFAULT_POSIX_THREADS,
        }
    }
}

/// True when `value` (of [`FORCE_POSIX_ENV`]) asks to force the fallback.
pub fn force_posix_value(value: Option<&str>) -> bool {
    value.is_some_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "on" | "yes"
        )
    })
}

/// True when the environment forces [`PosixIo`].
pub fn force_posix_from_env() -> bool {
    force_posix_value(std::env::var(FORCE_POSIX_ENV).ok().as_deref())
}

/// The backend the server runs on: [`UringIo`] when `use_native_aio` is on,
/// [`FORCE_POSIX_ENV`] is not set, and io_uring passes its probe (a ring is
/// built and a NOP round-trips); otherwise [`PosixIo`]. Logs the choice, and
/// why io_uring was not used.
pub fn open_io(cfg: &IoConfig) -> Arc<dyn Io> {
    select_io(cfg, force_posix_from_env())
}

/// [`open_io`] with the environment's verdict passed in.
pub fn select_io(cfg: &IoConfig, force_posix: bool) -> Arc<dyn Io> {
    let posix = || -> Arc<dyn Io> { Arc::new(PosixIo::new(cfg.posix_threads)) };
    if force_posix {
        info!(
            "{FORCE_POSIX_ENV} is set; using pread/pwrite with {} threads",
            cfg.posix_threads
        );
        return posix();
    }
    if !cfg.use_native_aio {
        info!(
            "innodb_use_native_aio=OFF; using pread/pwrite with {} threads",
            cfg.posix_threads
        );
        return posix();
    }
    match UringIo::new(cfg.queue_depth) {
        Ok(uring) => {
            info!(queue_depth = uring.queue_depth(), "using io_uring");
            Arc::new(uring)
        }
        Err(e) => {
            warn!("io_uring unavailable: {e}; using pread/pwrite");
            posix()
        }
    }
}
