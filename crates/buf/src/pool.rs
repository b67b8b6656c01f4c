//! [`BufferPool`]: page access (hit and miss paths), dirty-page bookkeeping,
//! settings and counters. Writing pages lives in `flush`, the background
//! thread in `flusher`.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use basalt_common::layout::{DOUBLEWRITE_FIRST_PAGE, SYSTEM_FIRST_FREE_PAGE};
use basalt_common::{Lsn, PageId, SpaceId};
use basalt_io::AlignedBuf;
use basalt_page::header::{self, PageState};
use parking_lot::Mutex;
use tracing::{info, warn};

use crate::clock::{Clock, SystemClock};
use crate::config::BufConfig;
use crate::dblwr::{self, Doublewrite};
use crate::error::{BufError, BufResult};
use crate::flusher::FlusherControl;
use crate::frame::FrameState;
use crate::gate::RedoGate;
use crate::guard::{LatchMode, PageGuard};
use crate::instance::{Instance, FREE_FRAME_TIMEOUT};
use crate::lru::LruPolicy;
use crate::page_hash::instance_fold;
use crate::space::{Space, Spaces};
use crate::stats::{BufStats, BufStatsSnapshot};

/// What a page request does on a miss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fetch {
    /// Read the page from its file.
    Read {
        /// Accept an all-zero page.
        allow_zeroed: bool,
        /// Do not wait for the page latch (a miss still reads).
        nowait: bool,
    },
    /// Hand out a zeroed frame without reading.
    Create,
}

/// The buffer pool. See the crate documentation for the design.
#[derive(Debug)]
pub struct BufferPool {
    cfg: BufConfig,
    policy: LruPolicy,
    instances: Box<[Instance]>,
    spaces: Arc<Spaces>,
    gate: Arc<dyn RedoGate>,
    clock: Arc<dyn Clock>,
    stats: BufStats,
    pub(crate) dblwr: Option<Doublewrite>,
    /// Recycled one-page write buffers (flush copies).
    write_bufs: Mutex<Vec<AlignedBuf>>,
    /// How long a thread waits for a free frame while every candidate is
    /// buffer-fixed (milliseconds).
    free_frame_timeout_ms: AtomicU64,
    pub(crate) flusher: FlusherControl,
}

impl BufferPool {
    /// Allocates every frame and prepares the pool; starts no thread (see
    /// [`BufferPool::start_flusher`]). With `doublewrite` on, the system
    /// tablespace must be open in `spaces`; it is extended to cover the
    /// doublewrite area when shorter.
    pub fn new(
        cfg: BufConfig,
        spaces: Arc<Spaces>,
        gate: Arc<dyn RedoGate>,
    ) -> BufResult<Arc<BufferPool>> {
        BufferPool::with_clock(cfg, spaces, gate, Arc::new(SystemClock::new()))
    }

    /// As [`BufferPool::new`], with the clock used for
    /// `innodb_old_blocks_time` supplied by the caller.
    pub fn with_clock(
        cfg: BufConfig,
        spaces: Arc<Spaces>,
        gate: Arc<dyn RedoGate>,
        clock: Arc<dyn Clock>,
    ) -> BufResult<Arc<BufferPool>> {
        cfg.validate()?;
        let dblwr = if cfg.doublewrite {
            dblwr::ensure_area(&spaces)?;
            Some(Doublewrite::new())
        } else {
            None
        };
        let per = cfg.frames_per_instance();
        let instances: Box<[Instance]> =
            (0..cfg.instances).map(|i| Instance::new(i, per)).collect();
        info!(
            pool_size = cfg.pool_size,
            instances = cfg.instances,
            frames_per_instance = per,
            doublewrite = cfg.doublewrite,
            "buffer pool allocated"
        );
        Ok(Arc::new(BufferPool {
            policy: LruPolicy {
                old_pct: AtomicU32::new(cfg.old_blocks_pct),
                old_time_ms: AtomicU32::new(cfg.old_blocks_time_ms),
            },
            instances,
            spaces,
            gate,
            clock,
            stats: BufStats::default(),
            dblwr,
            write_bufs: Mutex::new(Vec::new()),
            free_frame_timeout_ms: AtomicU64::new(FREE_FRAME_TIMEOUT.as_millis() as u64),
            flusher: FlusherControl::default(),
            cfg,
        }))
    }

    // ---- accessors ---------------------------------------------------------

    /// The settings the pool was built with (`old_blocks_*` as at start).
    pub fn config(&self) -> &BufConfig {
        &self.cfg
    }

    /// The tablespace registry.
    pub fn spaces(&self) -> &Arc<Spaces> {
        &self.spaces
    }

    /// The redo-log seam.
    pub fn gate(&self) -> &Arc<dyn RedoGate> {
        &self.gate
    }

    pub(crate) fn stats_ref(&self) -> &BufStats {
        &self.stats
    }

    pub(crate) fn lru_policy(&self) -> &LruPolicy {
        &self.policy
    }

    pub(crate) fn instances(&self) -> &[Instance] {
        &self.instances
    }

    /// Number of frames.
    pub fn capacity(&self) -> usize {
        self.instances.iter().map(|i| i.frames.len()).sum()
    }

    #[inline]
    fn instance_of(&self, id: PageId) -> &Instance {
        let n = self.instances.len();
        if n == 1 {
            &self.instances[0]
        } else {
            &self.instances[(instance_fold(id) % n as u64) as usize]
        }
    }

    /// `innodb_old_blocks_pct` (dynamic).
    pub fn set_old_blocks_pct(&self, pct: u32) -> BufResult<()> {
        if !(5..=95).contains(&pct) {
            return Err(BufError::InvalidConfig {
                name: "innodb_old_blocks_pct",
                value: pct.to_string(),
                reason: "range is 5..95".into(),
            });
        }
        self.policy.old_pct.store(pct, Ordering::Relaxed);
        Ok(())
    }

    /// Current `innodb_old_blocks_pct`.
    pub fn old_blocks_pct(&self) -> u32 {
        self.policy.old_pct.load(Ordering::Relaxed)
    }

    /// `innodb_old_blocks_time` in milliseconds (dynamic).
    pub fn set_old_blocks_time(&self, ms: u32) {
        self.policy.old_time_ms.store(ms, Ordering::Relaxed);
    }

    /// Current `innodb_old_blocks_time`.
    pub fn old_blocks_time(&self) -> u32 {
        self.policy.old_time_ms.load(Ordering::Relaxed)
    }

    /// How long a page request waits for a free frame while every frame of
    /// its instance is buffer-fixed before failing with
    /// [`BufError::NoFreeFrame`] (default 30 s).
    pub fn set_free_frame_timeout(&self, timeout: Duration) {
        self.free_frame_timeout_ms
            .store(timeout.as_millis() as u64, Ordering::Relaxed);
    }

    pub(crate) fn free_frame_timeout(&self) -> Duration {
        Duration::from_millis(self.free_frame_timeout_ms.load(Ordering::Relaxed))
    }

    /// Counters and list lengths.
    pub fn stats(&self) -> BufStatsSnapshot {
        let mut s = self.stats.snapshot();
        for inst in self.instances.iter() {
            s.pool_pages += inst.frames.len() as u64;
            s.free_pages += inst.free_len() as u64;
            s.lru_len += inst.lru_len() as u64;
            s.old_len += inst.old_len() as u64;
            s.dirty_pages += inst.dirty_len() as u64;
        }
        s
    }

    // ---- page access ---------------------------------------------------------

    /// The page `id`, latched in `mode`, read from its file on a miss and
    /// verified (checksum, trailer, page id). An all-zero page is refused
    /// with [`BufError::ZeroedPage`].
    pub fn get(&self, id: PageId, mode: LatchMode) -> BufResult<PageGuard<'_>> {
        let fetched = self.fetch(
            id,
            mode,
            Fetch::Read {
                allow_zeroed: false,
                nowait: false,
            },
        )?;
        Ok(fetched.expect("a blocking fetch always returns a page"))
    }

    /// As [`BufferPool::get`], but an all-zero page (allocated by extending
    /// the file, never written) is accepted. Used by crash recovery, which
    /// re-creates such pages from their redo.
    pub fn get_allow_zeroed(&self, id: PageId, mode: LatchMode) -> BufResult<PageGuard<'_>> {
        let fetched = self.fetch(
            id,
            mode,
            Fetch::Read {
                allow_zeroed: true,
                nowait: false,
            },
        )?;
        Ok(fetched.expect("a blocking fetch always returns a page"))
    }

    /// As [`BufferPool::get`], but never waits for the page latch: returns
    /// `None` when another thread holds it in a conflicting mode (or is
    /// reading the page). For latch-order exceptions, e.g. latching a left
    /// sibling while holding its right neighbour. A miss still reads the
    /// page (into a frame nobody else can see yet).
    pub fn try_get(&self, id: PageId, mode: LatchMode) -> BufResult<Option<PageGuard<'_>>> {
        self.fetch(
            id,
            mode,
            Fetch::Read {
                allow_zeroed: false,
                nowait: true,
            },
        )
    }

    /// A new page: an exclusively latched frame filled with zeroes, not
    /// read from disk. If the page is cached, its frame is reused and
    /// zeroed. The page must lie within its tablespace.
    pub fn create(&self, id: PageId) -> BufResult<PageGuard<'_>> {
        let fetched = self.fetch(id, LatchMode::Exclusive, Fetch::Create)?;
        Ok(fetched.expect("a blocking fetch always returns a page"))
    }

    /// True when `id` is cached (including being read). Takes no fix; the
    /// answer may be stale by the time the caller looks at it.
    pub fn contains(&self, id: PageId) -> bool {
        self.instance_of(id).contains(id)
    }

    fn check_page(&self, id: PageId) -> BufResult<Arc<Space>> {
        if id.space == SpaceId::SYSTEM
            && (DOUBLEWRITE_FIRST_PAGE..SYSTEM_FIRST_FREE_PAGE).contains(&id.page_no)
        {
            return Err(BufError::ReservedPage(id));
        }
        let space = self.spaces.get(id.space)?;
        let size = space.size();
        if id.page_no >= size {
            return Err(BufError::PageOutOfRange { page_id: id, size });
        }
        Ok(space)
    }

    fn fetch(&self, id: PageId, mode: LatchMode, how: Fetch) -> BufResult<Option<PageGuard<'_>>> {
        let (create, nowait, allow_zeroed) = match how {
            Fetch::Read {
                allow_zeroed,
                nowait,
            } => (false, nowait, allow_zeroed),
            Fetch::Create => (true, false, false),
        };
        if !create {
            self.stats.read_requests.inc();
        }
        let inst = self.instance_of(id);
        loop {
            // PERF: hit path: shared hash latch, fix, page latch; no
            // allocation, no logging.
            if let Some(idx) = inst.lookup_fix(id) {
                let f = inst.frame(idx);
                let latched = match (mode, nowait) {
                    (LatchMode::Shared, false) => {
                        f.lock_shared();
                        true
                    }
                    (LatchMode::Exclusive, false) => {
                        f.lock_exclusive();
                        true
                    }
                    (LatchMode::Shared, true) => f.try_lock_shared(),
                    (LatchMode::Exclusive, true) => f.try_lock_exclusive(),
                };
                if !latched {
                    inst.release_fix(idx);
                    return Ok(None);
                }
                if f.state() != FrameState::InUse || f.page_id() != id {
                    // The read we waited for failed; the frame is leaving.
                    // SAFETY: latched just above in `mode`.
                    unsafe { unlock(f, mode) };
                    inst.release_fix(idx);
                    if nowait {
                        return Ok(None);
                    }
                    continue;
                }
                inst.on_access(idx, &*self.clock, &self.policy, &self.stats);
                if create {
                    // SAFETY: `create` always latches exclusively.
                    unsafe { f.page_mut().fill(0) };
                    self.stats.pages_created.inc();
                }
                return Ok(Some(PageGuard::new(inst, idx, id, mode)));
            }
            if let Some(guard) = self.fetch_miss(inst, id, mode, create, allow_zeroed)? {
                return Ok(Some(guard));
            }
            // Another thread published the page first: take the hit path.
        }
    }

    /// Miss path. Returns `None` when another thread published the same
    /// page meanwhile (the caller retries as a hit).
    fn fetch_miss<'a>(
        &'a self,
        inst: &'a Instance,
        id: PageId,
        mode: LatchMode,
        create: bool,
        allow_zeroed: bool,
    ) -> BufResult<Option<PageGuard<'a>>> {
        let space = self.check_page(id)?;
        let idx = inst.allocate(self)?;
        let f = inst.frame(idx);
        // A private frame has no latch holders and no fixes: waiters on its
        // previous page released both before it could be freed or evicted.
        f.lock_exclusive();
        f.reset_for(id);
        f.fix();
        if !inst.publish_reading(id, idx) {
            // SAFETY: exclusive latch taken above.
            unsafe { f.unlock_exclusive() };
            let orphaned = f.unfix();
            debug_assert!(!orphaned);
            inst.push_free(idx);
            return Ok(None);
        }
        let now = self.clock.now_ms();
        if create {
            // SAFETY: exclusive latch held; the frame is ours.
            unsafe { f.page_mut().fill(0) };
            self.stats.pages_created.inc();
        } else if let Err(e) = self.read_page(&space, id, f, allow_zeroed) {
            inst.withdraw_failed(id, idx);
            // SAFETY: exclusive latch held since allocation.
            unsafe { f.unlock_exclusive() };
            inst.release_fix(idx);
            if e.is_corruption() {
                self.stats.corrupt_reads.inc();
            }
            warn!(page = %id, error = %e, "page read failed");
            return Err(e);
        } else {
            self.stats.reads.inc();
        }
        f.first_access_ms.store(now, Ordering::Relaxed);
        inst.lru_insert_new(idx, &self.policy, &self.stats);
        f.set_state(FrameState::InUse);
        if mode == LatchMode::Shared {
            // SAFETY: exclusive latch held; the guard records Shared.
            unsafe { f.downgrade() };
        }
        Ok(Some(PageGuard::new(inst, idx, id, mode)))
    }

    /// Reads and verifies `id` into frame `f` (exclusively latched).
    fn read_page(
        &self,
        space: &Space,
        id: PageId,
        f: &crate::frame::Frame,
        allow_zeroed: bool,
    ) -> BufResult<()> {
        // SAFETY: the caller holds the exclusive latch of the frame, which
        // is in state Reading (waiters block on the latch).
        let buf = unsafe { f.page_mut() };
        space.read_page(id.page_no, buf)?;
        match header::verify(buf, id) {
            Ok(PageState::Valid) => Ok(()),
            Ok(PageState::Zeroed) if allow_zeroed => Ok(()),
            Ok(PageState::Zeroed) => Err(BufError::ZeroedPage { page_id: id }),
            Err(reason) => Err(BufError::Corruption {
                page_id: id,
                reason,
            }),
        }
    }

    // ---- dirty pages -------------------------------------------------------------

    /// Records that the mini-transaction committing `guard`'s page changed
    /// it: `newest_lsn` is the end LSN of that change (the page LSN it
    /// stamped), `oldest_lsn` its start. A clean page joins its instance's
    /// flush list with oldest modification `oldest_lsn`.
    ///
    /// # Panics
    /// When `guard` holds only the shared latch (a caller bug).
    pub fn note_modified(&self, guard: &PageGuard<'_>, oldest_lsn: Lsn, newest_lsn: Lsn) {
        assert_eq!(
            guard.mode(),
            LatchMode::Exclusive,
            "note_modified on S-latched page {}",
            guard.page_id()
        );
        debug_assert!(oldest_lsn <= newest_lsn && oldest_lsn > Lsn::ZERO);
        guard
            .instance()
            .note_modified(guard.frame_index(), oldest_lsn, newest_lsn);
    }

    /// The smallest oldest modification of any dirty page, or `None` when
    /// every page is clean.
    pub fn oldest_modification(&self) -> Option<Lsn> {
        self.instances
            .iter()
            .filter_map(|i| i.oldest_modification())
            .min()
    }

    /// Pages on the flush lists.
    pub fn dirty_pages(&self) -> usize {
        self.instances.iter().map(|i| i.dirty_len()).sum()
    }

    /// Removes every cached page of `space` without writing it (the space
    /// is being dropped). Pages still buffer-fixed are waited for briefly;
    /// if they stay fixed, fails with [`BufError::SpaceBusy`]. The caller
    /// guarantees no new access to the space begins.
    pub fn discard_space(&self, space: SpaceId) -> BufResult<()> {
        let mut busy = 0;
        for attempt in 0..1000 {
            busy = self
                .instances
                .iter()
                .map(|i| i.discard_space(space, &self.policy))
                .sum();
            if busy == 0 {
                return Ok(());
            }
            std::thread::sleep(std::time::Duration::from_millis(if attempt < 10 {
                1
            } else {
                10
            }));
        }
        Err(BufError::SpaceBusy { space, pages: busy })
    }

    /// Page ids of instance `instance`'s LRU list from the young head to the
    /// old tail, each with its "old" flag (diagnostics).
    pub fn lru_snapshot(&self, instance: usize) -> Vec<(PageId, bool)> {
        self.instances[instance].lru_snapshot()
    }

    // ---- write buffers -------------------------------------------------------------

    pub(crate) fn take_write_buf(&self) -> AlignedBuf {
        self.write_bufs.lock().pop().unwrap_or_else(|| {
            AlignedBuf::with_alignment(basalt_common::PAGE_SIZE, basalt_common::PAGE_SIZE)
        })
    }

    pub(crate) fn return_write_buf(&self, buf: AlignedBuf) {
        if buf.len() == basalt_common::PAGE_SIZE {
            let mut pool = self.write_bufs.lock();
            if pool.len() < crate::dblwr::DBLWR_BATCH_PAGES * 2 {
                pool.push(buf);
            }
        }
    }
}

/// Releases a latch held in `mode`.
///
/// # Safety
/// The caller holds `f`'s latch in `mode`.
unsafe fn unlock(f: &crate::frame::Frame, mode: LatchMode) {
    match mode {
        // SAFETY: forwarded precondition.
        LatchMode::Shared => unsafe { f.unlock_shared() },
        // SAFETY: forwarded precondition.
        LatchMode::Exclusive => unsafe { f.unlock_exclusive() },
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        self.shutdown();
    }
}
