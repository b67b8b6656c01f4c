//! Applying one batch of the recovery hash to its pages.
//!
//! Pages are taken in page-id order (file order), in sub-batches of at most
//! [`MAX_SUB_BATCH`] pages (and at most a quarter of the pool):
//!
//! ```text
//!  per sub-batch:
//!   room      dirty pages + sub-batch > pool / 2 ?  flush_list_batch (all
//!             dirty pages, through the doublewrite area, WAL rule checked)
//!   extend    grow a file that is shorter than a page with redo
//!   cached    page still in the pool from an earlier batch: X-latch the
//!             frame, apply, note_modified                 (no I/O)
//!   init      first record rebuilds the page: apply to a zeroed buffer,
//!             install                                     (no read)
//!   read      every other page: one Io::run_batch of reads; as each read
//!             completes (on_complete, calling thread): verify, apply,
//!             install                 (io_uring keeps them all in flight;
//!                                      the fallback's threads read them)
//!  install    pool.create(id) -> zeroed X-latched frame, copy the image in,
//!             note_modified(oldest = checkpoint, newest = page LSN)
//! ```
//!
//! Copying a recovered image into a frame through `data_mut` is a
//! recovery-only use of the frame: no mini-transaction is involved because
//! the redo being applied is already in the log. The page joins the flush
//! list like any dirty page and is written by the ordinary flush path
//! (doublewrite, then in place, then fsync).
//!
//! Records whose group end LSN is at or below the page LSN are skipped (the
//! page on disk already has them); the rest are applied in LSN order and
//! the page LSN becomes the last applied group's end. A page whose records
//! are all older than its image is left alone (`pages_up_to_date`).
//!
//! Memory: at most one sub-batch of page buffers (512 x 16 KiB) besides the
//! pool, and at most three quarters of the pool dirty at any time, so data
//! far larger than the pool is recovered by flushing as it goes.

use std::collections::HashSet;
use std::sync::Arc;

use basalt_buf::{BufError, BufferPool, LatchMode};
use basalt_common::{Lsn, PageId, SpaceId, PAGE_SIZE};
use basalt_io::{AlignedBuf, Io, IoOp, IoRequest};
use basalt_page::header::{self, PageState};
use basalt_page::RedoRecord;
use tracing::warn;

use super::hash::{BatchPlan, PageRedo, RecoveryHash};
use super::progress::{Phase, Progress};
use crate::error::{MtrError, MtrResult};

/// Largest number of pages read in one `run_batch`.
pub(crate) const MAX_SUB_BATCH: usize = 512;

/// Page counters of the apply phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ApplyStats {
    pub(crate) pages: u64,
    pub(crate) pages_read: u64,
    pub(crate) pages_skipped_init: u64,
    pub(crate) pages_cached: u64,
    pub(crate) pages_up_to_date: u64,
    pub(crate) pages_missing_space: u64,
}

/// Applies batches of redo to pages through the buffer pool.
#[derive(Debug)]
pub(crate) struct Applier<'a> {
    pool: &'a BufferPool,
    io: Arc<dyn Io>,
    checkpoint: Lsn,
    doublewrite: bool,
    sub_batch: usize,
    /// Free page buffers, reused across sub-batches.
    bufs: Vec<AlignedBuf>,
    missing_warned: HashSet<SpaceId>,
    pub(crate) stats: ApplyStats,
}

/// Applies `page`'s records from `plan` to the image `image` of `id`:
/// those whose group ends after the image's LSN, oldest first. Returns the
/// new page LSN, or `None` when nothing was newer than the image.
// PERF: the inner loop of recovery: one decode and one apply per record,
// no allocation except for full-page images.
pub(crate) fn apply_records(
    plan: &BatchPlan<'_>,
    id: PageId,
    page: &PageRedo,
    image: &mut [u8],
) -> MtrResult<Option<Lsn>> {
    let image_lsn = header::page_lsn(image);
    let mut last = None;
    for (bytes, end) in plan.records(page) {
        if end <= image_lsn {
            continue;
        }
        let decoded = RedoRecord::decode(bytes).map_err(|e| MtrError::RedoCorrupt {
            lsn: end,
            reason: format!("stored record for page {id} no longer decodes: {e}"),
        })?;
        decoded
            .record
            .apply(id, image)
            .map_err(|e| MtrError::PageCorrupt {
                page_id: id,
                reason: format!("redo record of the group ending at LSN {end} does not apply: {e}"),
            })?;
        last = Some(end);
    }
    if let Some(lsn) = last {
        header::set_page_lsn(image, lsn);
    }
    Ok(last)
}

impl<'a> Applier<'a> {
    /// An applier writing into `pool`; `checkpoint` is the scan's start
    /// (the oldest modification recovered pages are given).
    pub(crate) fn new(pool: &'a BufferPool, io: Arc<dyn Io>, checkpoint: Lsn) -> Applier<'a> {
        Applier {
            pool,
            io,
            checkpoint,
            doublewrite: pool.config().doublewrite,
            sub_batch: (pool.capacity() / 4).clamp(1, MAX_SUB_BATCH),
            bufs: Vec::new(),
            missing_warned: HashSet::new(),
            stats: ApplyStats::default(),
        }
    }

    fn take_buf(&mut self) -> AlignedBuf {
        self.bufs
            .pop()
            .unwrap_or_else(|| AlignedBuf::zeroed(PAGE_SIZE))
    }

    /// Applies every page of `hash` (batch number `batch`, 1-based).
    pub(crate) fn apply(&mut self, hash: &RecoveryHash, batch: u32) -> MtrResult<()> {
        let plan = hash.plan();
        let spaces = Arc::clone(self.pool.spaces());
        let mut work = Vec::with_capacity(plan.pages().len());
        for &(id, p) in plan.pages() {
            self.stats.pages += 1;
            if spaces.get(id.space).is_err() {
                self.stats.pages_missing_space += 1;
                if self.missing_warned.insert(id.space) {
                    warn!(
                        space = id.space.0,
                        "redo for a tablespace with no file (dropped?); its records are skipped"
                    );
                }
                continue;
            }
            work.push((id, p));
        }
        let mut progress = Progress::new(Phase::Apply { batch }, work.len() as u64);
        let mut done = 0u64;
        for chunk in work.chunks(self.sub_batch) {
            self.make_room(chunk.len())?;
            self.extend_files(chunk)?;
            self.apply_chunk(&plan, chunk)?;
            done += chunk.len() as u64;
            progress.update(done);
        }
        progress.finish(done);
        Ok(())
    }

    /// Keeps enough clean frames for the next sub-batch: with more than
    /// half the pool dirty, writes every dirty page.
    fn make_room(&self, n: usize) -> MtrResult<()> {
        if self.pool.dirty_pages() + n > self.pool.capacity() / 2 {
            self.pool.flush_list_batch(usize::MAX, Lsn::MAX)?;
        }
        Ok(())
    }

    /// Grows files that end before a page of `chunk` (page ids sorted).
    fn extend_files(&self, chunk: &[(PageId, PageRedo)]) -> MtrResult<()> {
        let spaces = self.pool.spaces();
        let mut i = 0;
        while i < chunk.len() {
            let space = chunk[i].0.space;
            let mut max = chunk[i].0.page_no;
            while i < chunk.len() && chunk[i].0.space == space {
                max = max.max(chunk[i].0.page_no);
                i += 1;
            }
            if spaces.get(space)?.size() <= max {
                let size = spaces.extend(space, max + 1)?;
                tracing::debug!(
                    space = space.0,
                    size,
                    "tablespace extended for recovered pages"
                );
            }
        }
        Ok(())
    }

    fn apply_chunk(&mut self, plan: &BatchPlan<'_>, chunk: &[(PageId, PageRedo)]) -> MtrResult<()> {
        let spaces = Arc::clone(self.pool.spaces());
        let mut requests: Vec<IoRequest> = Vec::with_capacity(chunk.len());
        let mut pending: Vec<(PageId, PageRedo)> = Vec::with_capacity(chunk.len());
        for &(id, p) in chunk {
            if self.pool.contains(id) {
                self.apply_cached(plan, id, &p)?;
                continue;
            }
            if p.starts_with_init {
                let mut buf = self.take_buf();
                buf.fill(0);
                self.stats.pages_skipped_init += 1;
                let r = self.apply_and_install(plan, id, &p, &mut buf);
                self.bufs.push(buf);
                r?;
                continue;
            }
            let space = spaces.get(id.space)?;
            requests.push(IoRequest {
                file: Arc::clone(space.file()),
                offset: id.file_offset(),
                buf: self.take_buf(),
                op: IoOp::Read,
            });
            pending.push((id, p));
        }
        if requests.is_empty() {
            return Ok(());
        }
        self.stats.pages_read += requests.len() as u64;
        let io = Arc::clone(&self.io);
        let mut first_err: Option<MtrError> = None;
        io.run_batch(&mut requests, &mut |i, req, res| {
            if first_err.is_some() {
                return;
            }
            let (id, p) = pending[i];
            let outcome = match res {
                Ok(()) => self.verify_apply_install(plan, id, &p, &mut req.buf),
                Err(e) => Err(MtrError::Buf(BufError::Io(e))),
            };
            if let Err(e) = outcome {
                first_err = Some(e);
            }
        });
        for req in requests {
            self.bufs.push(req.buf);
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// A page read from its file: must verify (the doublewrite pass has
    /// already repaired what it could), then gets its records.
    fn verify_apply_install(
        &mut self,
        plan: &BatchPlan<'_>,
        id: PageId,
        p: &PageRedo,
        image: &mut [u8],
    ) -> MtrResult<()> {
        match header::verify(image, id) {
            Ok(PageState::Valid) => self.apply_and_install(plan, id, p, image),
            Ok(PageState::Zeroed) => Err(MtrError::PageCorrupt {
                page_id: id,
                reason:
                    "the page was never written, yet its redo does not start by initialising it"
                        .into(),
            }),
            Err(reason) => Err(MtrError::PageCorrupt {
                page_id: id,
                reason: if self.doublewrite {
                    format!("{reason}; the doublewrite area held no intact copy of it")
                } else {
                    format!("{reason}; innodb_doublewrite is OFF, so no copy exists to repair it")
                },
            }),
        }
    }

    fn apply_and_install(
        &mut self,
        plan: &BatchPlan<'_>,
        id: PageId,
        p: &PageRedo,
        image: &mut [u8],
    ) -> MtrResult<()> {
        match apply_records(plan, id, p, image)? {
            None => {
                self.stats.pages_up_to_date += 1;
                Ok(())
            }
            Some(lsn) => {
                let mut guard = self.pool.create(id)?;
                guard.data_mut().copy_from_slice(image);
                self.pool.note_modified(&guard, self.checkpoint, lsn);
                Ok(())
            }
        }
    }

    /// A page left in the pool by an earlier batch: apply in its frame.
    fn apply_cached(&mut self, plan: &BatchPlan<'_>, id: PageId, p: &PageRedo) -> MtrResult<()> {
        self.stats.pages_cached += 1;
        let mut guard = self.pool.get_allow_zeroed(id, LatchMode::Exclusive)?;
        match apply_records(plan, id, p, guard.data_mut())? {
            None => self.stats.pages_up_to_date += 1,
            Some(lsn) => self.pool.note_modified(&guard, self.checkpoint, lsn),
        }
        Ok(())
    }
}
