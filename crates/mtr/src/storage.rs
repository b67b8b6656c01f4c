//! Opening and closing a data directory: the log, the tablespaces, the
//! buffer pool and their background threads, wired together.
//!
//! ```text
//!  open_or_create(io, config)
//!    ibdata1 exists? -- no --> create: ibdata1 (formatted), redo log files,
//!         |                    buffer pool, flusher, first checkpoint
//!        yes
//!         v
//!    open: crash recovery (see `recovery`) -> the recovered pool and the
//!          running log -> flusher started
//!  ...
//!  shutdown: stop the flusher, flush every page, checkpoint at the current
//!            LSN, stop the log threads: the next open finds no redo
//! ```

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use basalt_buf::{BasicFlushPolicy, BufConfig, BufferPool, Spaces, SpacesConfig};
use basalt_common::layout::{
    REDO_LOG_FILE_PREFIX, SYSTEM_FIRST_FREE_PAGE, SYSTEM_TABLESPACE_FILE,
    TABLESPACE_FIRST_FREE_PAGE,
};
use basalt_common::SpaceId;
use basalt_io::Io;
use basalt_wal::{Log, LogConfig, LOG_START_LSN};
use tracing::info;

use crate::error::{MtrError, MtrResult};
use crate::fsp;
use crate::gate::WalGate;
use crate::mtr::{Mtr, PageStore};
use crate::recovery::{self, RecoveryReport, DEFAULT_RECOVERY_MEMORY};

/// Initial size of `ibdata1` in pages (12 MiB, MySQL's default).
pub const SYSTEM_TABLESPACE_INITIAL_PAGES: u32 = 768;

/// Everything needed to open a data directory.
#[derive(Clone, Debug)]
pub struct StorageConfig {
    /// The data directory (`datadir`).
    pub datadir: PathBuf,
    /// Redo log settings; its `dir` is normally `datadir`.
    pub log: LogConfig,
    /// Buffer pool settings.
    pub buf: BufConfig,
    /// Open data files with O_DIRECT.
    pub direct_data_files: bool,
    /// No fsync after page writes to O_DIRECT data files
    /// (`innodb_flush_method=O_DIRECT_NO_FSYNC`; see
    /// [`SpacesConfig::skip_fsync_after_direct_writes`]).
    pub skip_fsync_after_direct_writes: bool,
    /// Bytes the crash-recovery hash may hold before it is applied as a
    /// batch ([`DEFAULT_RECOVERY_MEMORY`]; see the `recovery` module).
    pub recovery_memory: usize,
    /// Tablespace files to open besides `ibdata1` and the `*.ibd` files
    /// found under `datadir` (needed for in-memory backends, which cannot
    /// be searched).
    pub tablespace_files: Vec<PathBuf>,
}

impl StorageConfig {
    /// Defaults for a data directory (the log lives in it).
    pub fn new(datadir: impl Into<PathBuf>) -> StorageConfig {
        let datadir = datadir.into();
        StorageConfig {
            log: LogConfig::new(datadir.clone()),
            datadir,
            buf: BufConfig::default(),
            direct_data_files: true,
            skip_fsync_after_direct_writes: false,
            recovery_memory: DEFAULT_RECOVERY_MEMORY,
            tablespace_files: Vec::new(),
        }
    }

    /// Path of `ibdata1`.
    pub fn system_tablespace_path(&self) -> PathBuf {
        self.datadir.join(SYSTEM_TABLESPACE_FILE)
    }

    /// How the tablespace registry opens and syncs data files.
    pub fn spaces_config(&self) -> SpacesConfig {
        SpacesConfig {
            direct: self.direct_data_files,
            skip_fsync_after_direct_writes: self.skip_fsync_after_direct_writes,
        }
    }
}

/// What [`Storage::open_or_create`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Startup {
    /// The data directory was empty: it was created.
    Created,
    /// An existing data directory was opened (and recovered).
    Recovered(RecoveryReport),
}

/// An open data directory with its threads running.
#[derive(Debug)]
pub struct Storage {
    store: PageStore,
    io: Arc<dyn Io>,
    config: StorageConfig,
}

impl Storage {
    /// Creates a new data directory: the system tablespace, the redo log,
    /// the buffer pool; formats the system tablespace header and takes a
    /// first checkpoint.
    pub fn create(io: Arc<dyn Io>, config: StorageConfig) -> MtrResult<Storage> {
        io.create_dir_all(&config.datadir)
            .map_err(basalt_buf::BufError::from)?;
        let spaces = Arc::new(Spaces::new(Arc::clone(&io), config.spaces_config()));
        spaces.create(
            SpaceId::SYSTEM,
            &config.system_tablespace_path(),
            0,
            SYSTEM_TABLESPACE_INITIAL_PAGES,
        )?;
        let log = Log::create(Arc::clone(&io), &config.log, LOG_START_LSN)?;
        let storage = Storage::assemble(io, config, spaces, log)?;
        {
            let mut mtr = Mtr::start(&storage.store)?;
            fsp::format_space(
                &mut mtr,
                SpaceId::SYSTEM,
                SYSTEM_TABLESPACE_INITIAL_PAGES,
                SYSTEM_FIRST_FREE_PAGE,
                0,
            )?;
            mtr.commit_durable()?;
        }
        storage.checkpoint_now()?;
        info!(datadir = %storage.config.datadir.display(), "created data directory");
        Ok(storage)
    }

    /// Opens an existing data directory, running crash recovery (see the
    /// `recovery` module): every tablespace is opened, torn pages are
    /// repaired from the doublewrite area, the redo after the last
    /// checkpoint is applied, and a checkpoint is written at its end. After
    /// a clean [`Storage::shutdown`] the report shows no groups.
    pub fn open(io: Arc<dyn Io>, config: StorageConfig) -> MtrResult<(Storage, RecoveryReport)> {
        let recovered = recovery::recover(&io, &config)?;
        let report = recovered.report;
        let storage = Storage::assemble_with_pool(io, config, recovered.log, recovered.pool)?;
        if report.was_clean() {
            info!(
                datadir = %storage.config.datadir.display(),
                lsn = report.end_lsn.get(),
                "opened data directory (clean shutdown, nothing to recover)"
            );
        } else {
            info!(datadir = %storage.config.datadir.display(), "{}", recovery::describe(&report));
        }
        Ok((storage, report))
    }

    /// Opens the data directory, or creates it when it holds no system
    /// tablespace. A directory with redo log files but no `ibdata1` is
    /// refused ([`MtrError::DataDir`]) rather than overwritten.
    pub fn open_or_create(io: Arc<dyn Io>, config: StorageConfig) -> MtrResult<(Storage, Startup)> {
        if io.exists(&config.system_tablespace_path()) {
            let (storage, report) = Storage::open(io, config)?;
            return Ok((storage, Startup::Recovered(report)));
        }
        let log0 = config.log.dir.join(format!("{REDO_LOG_FILE_PREFIX}0"));
        if io.exists(&log0) {
            return Err(MtrError::DataDir {
                dir: config.datadir.clone(),
                reason: format!(
                    "{} exists but the system tablespace {} does not",
                    log0.display(),
                    config.system_tablespace_path().display()
                ),
            });
        }
        let storage = Storage::create(io, config)?;
        info!(datadir = %storage.config.datadir.display(), "created new data directory");
        Ok((storage, Startup::Created))
    }

    /// Creates a file-per-table tablespace: the file (durable, with its
    /// directory entry), its formatted header, and a checkpoint so the
    /// header is on disk before this returns (recovery identifies the file
    /// by it). A DDL-rate operation: the checkpoint flushes every dirty
    /// page.
    pub fn create_tablespace(&self, space: SpaceId, path: &Path, size_pages: u32) -> MtrResult<()> {
        let size_pages = size_pages.max(TABLESPACE_FIRST_FREE_PAGE + 1);
        self.store.spaces().create(space, path, 0, size_pages)?;
        let mut mtr = Mtr::start(&self.store)?;
        fsp::format_space(&mut mtr, space, size_pages, TABLESPACE_FIRST_FREE_PAGE, 0)?;
        mtr.commit_durable()?;
        self.checkpoint_now()
    }

    /// Wires a log and tablespaces into a running storage layer: buffer
    /// pool over the log, flusher thread, and the log's flush waker.
    pub(crate) fn assemble(
        io: Arc<dyn Io>,
        config: StorageConfig,
        spaces: Arc<Spaces>,
        log: Arc<Log>,
    ) -> MtrResult<Storage> {
        let gate = Arc::new(WalGate(Arc::clone(&log)));
        let pool = BufferPool::new(config.buf.clone(), spaces, gate)?;
        Storage::assemble_with_pool(io, config, log, pool)
    }

    /// Starts a storage layer on a pool already bound to `log` (directly,
    /// or through the gate recovery hands over): registers the log's flush
    /// waker and starts the flusher.
    pub(crate) fn assemble_with_pool(
        io: Arc<dyn Io>,
        config: StorageConfig,
        log: Arc<Log>,
        pool: Arc<BufferPool>,
    ) -> MtrResult<Storage> {
        let weak: Weak<BufferPool> = Arc::downgrade(&pool);
        log.register_flush_waker(Box::new(move || {
            if let Some(pool) = weak.upgrade() {
                pool.wake_flusher();
            }
        }));
        pool.start_flusher(Arc::new(BasicFlushPolicy))?;
        Ok(Storage {
            store: PageStore::new(log, pool),
            io,
            config,
        })
    }

    /// The pages and redo log, for mini-transactions.
    pub fn store(&self) -> &PageStore {
        &self.store
    }

    /// The I/O backend.
    pub fn io(&self) -> &Arc<dyn Io> {
        &self.io
    }

    /// The settings this storage was opened with.
    pub fn config(&self) -> &StorageConfig {
        &self.config
    }

    /// Flushes every dirty page and writes a checkpoint at the current LSN.
    pub fn checkpoint_now(&self) -> MtrResult<()> {
        self.store.pool.flush_all()?;
        self.store.pool.checkpoint()?;
        Ok(())
    }

    /// Clean shutdown: stop the flusher, flush everything, take a final
    /// checkpoint, stop the log threads.
    pub fn shutdown(self) -> MtrResult<()> {
        self.store.pool.shutdown();
        self.checkpoint_now()?;
        self.store.log.shutdown()?;
        info!(
            lsn = self.store.log.current_lsn().get(),
            "storage shut down cleanly"
        );
        Ok(())
    }
}
