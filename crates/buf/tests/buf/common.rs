//! Shared fixtures: a redo-log model implementing `RedoGate`, an I/O wrapper
//! that checks the WAL rule on every page written, and page/tablespace
//! builders.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use basalt_buf::{
    BufConfig, BufError, BufResult, BufferPool, CheckpointState, RedoGate, Spaces, SpacesConfig,
};
use basalt_common::{Lsn, PageId, SpaceId, PAGE_SIZE};
use basalt_io::{AlignedBuf, FileRef, Io, IoFile, IoKind, IoRequest, IoResult, MemIo, OpenOptions};
use basalt_page::header::{self, PageState, PageType};
use parking_lot::Mutex;

/// Offset of the test counter inside a page body.
pub const COUNTER_OFF: usize = header::FIL_PAGE_DATA + 16;

/// Seed of a randomised test (`BASALT_TEST_SEED` or a fresh one, printed).
pub fn seed(test: &str) -> u64 {
    basalt_common::test_support::test_seed(test)
}

/// A model of the redo log: hands out LSN ranges, tracks what is durable
/// and closed, and checks every request the buffer pool makes.
#[derive(Debug)]
pub struct TestLog {
    current: AtomicU64,
    durable: AtomicU64,
    closed: AtomicU64,
    checkpoint: AtomicU64,
    async_mark: AtomicU64,
    sync_mark: AtomicU64,
    max_flush_request: AtomicU64,
    flush_requests: AtomicU64,
    /// When set, `flush_up_to` lies (returns without making anything
    /// durable): used to prove the WAL checker catches violations.
    broken_flush: AtomicBool,
    checkpoints: Mutex<Vec<Lsn>>,
    violations: Mutex<Vec<String>>,
    pool: OnceLock<Weak<BufferPool>>,
    /// Runs once inside the next `flush_up_to`, i.e. after the pool copied
    /// the pages of a write and before they reach any file.
    flush_hook: Mutex<Option<FlushHook>>,
}

struct FlushHook(Box<dyn FnOnce() + Send>);

impl std::fmt::Debug for FlushHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FlushHook")
    }
}

impl TestLog {
    pub fn new(start: u64) -> Arc<TestLog> {
        Arc::new(TestLog {
            current: AtomicU64::new(start),
            durable: AtomicU64::new(start),
            closed: AtomicU64::new(start),
            checkpoint: AtomicU64::new(start),
            async_mark: AtomicU64::new(u64::MAX / 4),
            sync_mark: AtomicU64::new(u64::MAX / 2),
            max_flush_request: AtomicU64::new(0),
            flush_requests: AtomicU64::new(0),
            broken_flush: AtomicBool::new(false),
            checkpoints: Mutex::new(Vec::new()),
            violations: Mutex::new(Vec::new()),
            pool: OnceLock::new(),
            flush_hook: Mutex::new(None),
        })
    }

    /// Lets `write_checkpoint` compare with the pool's oldest dirty page.
    pub fn attach(&self, pool: &Arc<BufferPool>) {
        self.pool.set(Arc::downgrade(pool)).expect("attach once");
    }

    /// Reserves `len` bytes of redo: returns (start, end).
    pub fn reserve(&self, len: u64) -> (Lsn, Lsn) {
        let start = self.current.fetch_add(len, Ordering::SeqCst);
        (Lsn(start), Lsn(start + len))
    }

    /// Marks everything up to `lsn` closed (single-writer tests).
    pub fn close(&self, lsn: Lsn) {
        self.closed.fetch_max(lsn.0, Ordering::SeqCst);
    }

    pub fn set_water_marks(&self, async_mark: u64, sync_mark: u64) {
        self.async_mark.store(async_mark, Ordering::SeqCst);
        self.sync_mark.store(sync_mark, Ordering::SeqCst);
    }

    pub fn set_flush_hook(&self, hook: impl FnOnce() + Send + 'static) {
        *self.flush_hook.lock() = Some(FlushHook(Box::new(hook)));
    }

    pub fn set_broken_flush(&self, broken: bool) {
        self.broken_flush.store(broken, Ordering::SeqCst);
    }

    pub fn durable(&self) -> Lsn {
        Lsn(self.durable.load(Ordering::SeqCst))
    }

    pub fn current(&self) -> Lsn {
        Lsn(self.current.load(Ordering::SeqCst))
    }

    pub fn closed(&self) -> Lsn {
        Lsn(self.closed.load(Ordering::SeqCst))
    }

    pub fn checkpoint_lsn(&self) -> Lsn {
        Lsn(self.checkpoint.load(Ordering::SeqCst))
    }

    pub fn max_flush_request(&self) -> Lsn {
        Lsn(self.max_flush_request.load(Ordering::SeqCst))
    }

    pub fn flush_requests(&self) -> u64 {
        self.flush_requests.load(Ordering::SeqCst)
    }

    pub fn checkpoints(&self) -> Vec<Lsn> {
        self.checkpoints.lock().clone()
    }

    pub fn violation(&self, what: String) {
        self.violations.lock().push(what);
    }

    pub fn violations(&self) -> Vec<String> {
        self.violations.lock().clone()
    }

    /// Fails the test on the first recorded violation.
    pub fn assert_clean(&self) {
        let v = self.violations();
        assert!(v.is_empty(), "{} violations, first: {}", v.len(), v[0]);
    }
}

impl RedoGate for TestLog {
    fn flush_up_to(&self, lsn: Lsn) -> BufResult<()> {
        let hook = self.flush_hook.lock().take();
        if let Some(FlushHook(hook)) = hook {
            hook();
        }
        self.flush_requests.fetch_add(1, Ordering::SeqCst);
        self.max_flush_request.fetch_max(lsn.0, Ordering::SeqCst);
        if lsn > self.current() {
            self.violation(format!(
                "flush_up_to({lsn}) beyond the current LSN {}",
                self.current()
            ));
        }
        if !self.broken_flush.load(Ordering::SeqCst) {
            self.durable.fetch_max(lsn.0, Ordering::SeqCst);
        }
        Ok(())
    }

    fn checkpoint_state(&self) -> CheckpointState {
        // Closed first, as a real log publishes it (never ahead of current).
        let closed = self.closed();
        CheckpointState {
            current_lsn: self.current(),
            checkpoint_lsn: self.checkpoint_lsn(),
            closed_lsn: closed,
            async_water_mark: self.async_mark.load(Ordering::SeqCst),
            sync_water_mark: self.sync_mark.load(Ordering::SeqCst),
        }
    }

    fn write_checkpoint(&self, lsn: Lsn) -> BufResult<()> {
        if lsn > self.closed() {
            self.violation(format!(
                "checkpoint {lsn} passes the closed LSN {}",
                self.closed()
            ));
        }
        if let Some(pool) = self.pool.get().and_then(Weak::upgrade) {
            if let Some(oldest) = pool.oldest_modification() {
                if lsn > oldest {
                    self.violation(format!(
                        "checkpoint {lsn} passes the oldest dirty page {oldest}"
                    ));
                }
            }
        }
        let prev = self.checkpoint.load(Ordering::SeqCst);
        if lsn.0 <= prev {
            self.violation(format!("checkpoint {lsn} does not advance past {prev}"));
        }
        self.durable.fetch_max(lsn.0, Ordering::SeqCst);
        self.checkpoint.store(lsn.0, Ordering::SeqCst);
        self.checkpoints.lock().push(lsn);
        Ok(())
    }
}

/// I/O wrapper that checks the WAL rule: every page image written (to a data
/// file or the doublewrite area) must carry a page LSN the log has already
/// made durable. Also counts page writes.
#[derive(Debug)]
pub struct WalCheckIo {
    inner: Arc<dyn Io>,
    log: Arc<TestLog>,
    pages_checked: Arc<AtomicU64>,
}

impl WalCheckIo {
    pub fn new(inner: Arc<dyn Io>, log: Arc<TestLog>) -> Arc<WalCheckIo> {
        Arc::new(WalCheckIo {
            inner,
            log,
            pages_checked: Arc::new(AtomicU64::new(0)),
        })
    }

    pub fn pages_checked(&self) -> u64 {
        self.pages_checked.load(Ordering::SeqCst)
    }
}

fn check_pages(log: &TestLog, counter: &AtomicU64, path: &Path, buf: &[u8], offset: u64) {
    if !buf.len().is_multiple_of(PAGE_SIZE) || !offset.is_multiple_of(PAGE_SIZE as u64) {
        return;
    }
    let durable = log.durable();
    for (k, page) in buf.chunks(PAGE_SIZE).enumerate() {
        let id = header::page_id(page);
        if header::verify(page, id) != Ok(PageState::Valid) {
            continue;
        }
        counter.fetch_add(1, Ordering::SeqCst);
        let lsn = header::page_lsn(page);
        if lsn > durable {
            log.violation(format!(
                "WAL rule: page {id} written to {} (slot {k}) with LSN {lsn} > durable {durable}",
                path.display()
            ));
        }
    }
}

#[derive(Debug)]
struct WalCheckFile {
    inner: FileRef,
    log: Arc<TestLog>,
    pages_checked: Arc<AtomicU64>,
}

impl IoFile for WalCheckFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> IoResult<()> {
        self.inner.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> IoResult<()> {
        check_pages(
            &self.log,
            &self.pages_checked,
            self.inner.path(),
            buf,
            offset,
        );
        self.inner.write_at(buf, offset)
    }
    fn sync(&self) -> IoResult<()> {
        self.inner.sync()
    }
    fn len(&self) -> IoResult<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> IoResult<()> {
        self.inner.set_len(len)
    }
    fn is_direct(&self) -> bool {
        self.inner.is_direct()
    }
    fn path(&self) -> &Path {
        self.inner.path()
    }
}

impl Io for WalCheckIo {
    fn kind(&self) -> IoKind {
        self.inner.kind()
    }
    fn open(&self, path: &Path, opts: OpenOptions) -> IoResult<FileRef> {
        let inner = self.inner.open(path, opts)?;
        Ok(Arc::new(WalCheckFile {
            inner,
            log: Arc::clone(&self.log),
            pages_checked: Arc::clone(&self.pages_checked),
        }))
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn remove_file(&self, path: &Path) -> IoResult<()> {
        self.inner.remove_file(path)
    }
    fn create_dir_all(&self, path: &Path) -> IoResult<()> {
        self.inner.create_dir_all(path)
    }
    fn sync_dir(&self, path: &Path) -> IoResult<()> {
        self.inner.sync_dir(path)
    }
    /// Runs the requests one by one through the (checking) files.
    fn run_batch(
        &self,
        requests: &mut [IoRequest],
        on_complete: &mut dyn FnMut(usize, &mut IoRequest, IoResult<()>),
    ) {
        for (i, req) in requests.iter_mut().enumerate() {
            let res = match req.op {
                basalt_io::IoOp::Read => req.file.read_at(&mut req.buf, req.offset),
                basalt_io::IoOp::Write => req.file.write_at(&req.buf, req.offset),
            };
            on_complete(i, req, res);
        }
    }
}

/// Path of space `id` in the test data directory.
pub fn space_path(id: SpaceId) -> PathBuf {
    if id == SpaceId::SYSTEM {
        PathBuf::from("/data/ibdata1")
    } else {
        PathBuf::from(format!("/data/t{}.ibd", id.0))
    }
}

/// A valid page image for `id` with counter `counter` and page LSN `lsn`.
pub fn page_image(id: PageId, counter: u64, lsn: Lsn) -> AlignedBuf {
    let mut p = AlignedBuf::with_alignment(PAGE_SIZE, PAGE_SIZE);
    header::init_header(&mut p, id, PageType::Index);
    header::set_page_lsn(&mut p, lsn);
    header::write_u64(&mut p, COUNTER_OFF, counter);
    header::stamp_checksum(&mut p);
    p
}

/// Creates space `id` with `pages` valid pages (counter 0, page LSN 0),
/// written straight to the file and synced.
pub fn create_formatted_space(spaces: &Spaces, id: SpaceId, pages: u32) {
    let space = spaces
        .create(id, &space_path(id), 0, pages)
        .expect("create space");
    let mut all = AlignedBuf::with_alignment(pages as usize * PAGE_SIZE, PAGE_SIZE);
    for p in 0..pages {
        let img = page_image(PageId::new(id, p), 0, Lsn::ZERO);
        all[p as usize * PAGE_SIZE..(p as usize + 1) * PAGE_SIZE].copy_from_slice(&img);
    }
    space.write_pages(0, &all).expect("format space");
    space.sync().expect("sync space");
}

/// Creates the system tablespace (doublewrite area included, left zeroed).
pub fn create_system_space(spaces: &Spaces) {
    spaces
        .create(
            SpaceId::SYSTEM,
            &space_path(SpaceId::SYSTEM),
            0,
            basalt_common::layout::SYSTEM_FIRST_FREE_PAGE,
        )
        .expect("create system tablespace");
}

/// A fresh environment: MemIo, optional WAL checking, spaces.
pub struct Env {
    pub mem: Arc<MemIo>,
    pub log: Arc<TestLog>,
    pub wal_io: Option<Arc<WalCheckIo>>,
    pub spaces: Arc<Spaces>,
}

impl Env {
    /// MemIo wrapped in the WAL checker, system tablespace created.
    pub fn new(start_lsn: u64) -> Env {
        let mem = Arc::new(MemIo::new());
        let log = TestLog::new(start_lsn);
        let wal_io = WalCheckIo::new(mem.clone(), Arc::clone(&log));
        let spaces = Arc::new(Spaces::new(
            wal_io.clone(),
            SpacesConfig {
                direct: true,
                ..SpacesConfig::default()
            },
        ));
        create_system_space(&spaces);
        Env {
            mem,
            log,
            wal_io: Some(wal_io),
            spaces,
        }
    }

    pub fn pool(&self, cfg: BufConfig) -> Arc<BufferPool> {
        let pool =
            BufferPool::new(cfg, Arc::clone(&self.spaces), self.log.clone()).expect("buffer pool");
        self.log.attach(&pool);
        pool
    }

    /// Registry over the same files as after a restart (no WAL checking).
    pub fn reopen_spaces(&self) -> Arc<Spaces> {
        let spaces = Arc::new(Spaces::new(
            self.mem.clone(),
            SpacesConfig {
                direct: true,
                ..SpacesConfig::default()
            },
        ));
        for id in self.spaces.ids() {
            spaces.open(id, &space_path(id), 0).expect("reopen space");
        }
        spaces
    }
}

/// A small pool configuration: `frames` frames over `instances` instances.
pub fn small_config(frames: usize, instances: usize) -> BufConfig {
    BufConfig {
        instances,
        ..BufConfig::for_pool_size((frames * PAGE_SIZE) as u64)
    }
}

/// Reads the counter of a page image.
pub fn counter_of(page: &[u8]) -> u64 {
    header::read_u64(page, COUNTER_OFF)
}

/// Writes `counter` into a latched page and stamps `end` as its LSN (what an
/// mtr does), then notes the modification.
pub fn modify(
    pool: &BufferPool,
    log: &TestLog,
    id: PageId,
    counter: u64,
    redo_len: u64,
) -> BufResult<(Lsn, Lsn)> {
    let mut g = pool.get(id, basalt_buf::LatchMode::Exclusive)?;
    let (start, end) = log.reserve(redo_len);
    header::write_u64(g.data_mut(), COUNTER_OFF, counter);
    header::set_page_lsn(g.data_mut(), end);
    pool.note_modified(&g, start, end);
    drop(g);
    Ok((start, end))
}

/// Unwraps a corruption error's page id.
pub fn corrupt_page(e: &BufError) -> Option<PageId> {
    match e {
        BufError::Corruption { page_id, .. } => Some(*page_id),
        _ => None,
    }
}
