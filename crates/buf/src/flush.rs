//! Writing dirty pages: flush-list batches and single-page flushes.
//!
//! One write, whatever triggered it, goes through the same steps:
//!
//! ```text
//!  pin        write fix + buffer fix (under the flush-list or LRU mutex)
//!  copy       S latch (bounded wait), copy frame -> write buffer, read
//!             newest_modification, release S; set the copy's page LSN to
//!             newest_modification and stamp its checksum
//!  WAL rule   gate.flush_up_to(max newest_modification of the batch)
//!  dblwr      batch: copies -> pages 64..183 of space 0 in one write, fsync
//!             single: copy -> one of pages 184..191, fsync
//!  in place   batch: Io::run_batch; single: one write_at
//!  fsync      every data file written
//!  complete   under the flush-list mutex: clean iff newest_modification is
//!             still the copied value; clear write fix; drop buffer fix
//! ```
//!
//! No page latch is held across I/O: the copy is taken under a short shared
//! latch, so mtrs keep modifying the page while it is written. A page
//! changed after its copy stays dirty (with its old `oldest_modification`,
//! which is conservative) and is written again later.
//!
//! The bounded latch wait matters: a thread evicting a dirty victim may hold
//! latches of other pages, and the victim's holder may wait for one of
//! those. Giving up after [`COPY_LATCH_WAIT`] turns that potential deadlock
//! into a skipped page.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use basalt_common::{Lsn, PageId, SpaceId};
use basalt_io::{AlignedBuf, IoError, IoOp, IoRequest};
use basalt_page::header;
use tracing::{debug, warn};

use crate::dblwr::DBLWR_BATCH_PAGES;
use crate::error::{BufError, BufResult};
use crate::instance::Instance;
use crate::pool::BufferPool;
use crate::space::Space;

/// Longest wait for a page's shared latch when copying it for a write.
pub const COPY_LATCH_WAIT: Duration = Duration::from_millis(20);

/// What a flush call did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlushReport {
    /// Pages written in place.
    pub written: usize,
    /// Written pages that became clean (the rest were modified again after
    /// their copy was taken and stay dirty).
    pub cleaned: usize,
    /// Pages skipped because their latch stayed busy.
    pub skipped_busy: usize,
    /// Pages of tablespaces no longer open, dropped from the flush list.
    pub dropped: usize,
}

impl FlushReport {
    fn absorb(&mut self, other: FlushReport) {
        self.written += other.written;
        self.cleaned += other.cleaned;
        self.skipped_busy += other.skipped_busy;
        self.dropped += other.dropped;
    }
}

/// Which doublewrite region a write uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WriteKind {
    /// Flush-list batch (up to 120 pages, pages 64..183).
    Batch,
    /// One dirty LRU victim (one of pages 184..191).
    Single,
}

/// A pinned page and, once copied, its write buffer.
struct WriteItem<'a> {
    inst: &'a Instance,
    idx: u32,
    page_id: PageId,
    newest: Lsn,
    buf: AlignedBuf,
    space: Option<Arc<Space>>,
}

impl BufferPool {
    /// Writes up to `max_pages` dirty pages whose oldest modification is
    /// below `lsn_limit`, oldest first across all instances, in chunks of
    /// at most [`DBLWR_BATCH_PAGES`]. Each page is considered at most once
    /// per call, so pages modified again while being written do not make
    /// the call loop. On an I/O or redo error the pages of the failing chunk
    /// stay dirty and the error is returned.
    pub fn flush_list_batch(&self, max_pages: usize, lsn_limit: Lsn) -> BufResult<FlushReport> {
        let n = self.instances().len();
        let mut seen: Vec<HashSet<u32>> = vec![HashSet::new(); n];
        let mut total = FlushReport::default();
        let mut candidates: Vec<(Lsn, usize, u32)> = Vec::new();
        let mut remaining = max_pages;
        while remaining > 0 {
            let chunk = remaining.min(DBLWR_BATCH_PAGES);
            // Each instance's `chunk` oldest candidates, merged: the global
            // `chunk` oldest are among them.
            candidates.clear();
            for (i, inst) in self.instances().iter().enumerate() {
                inst.peek_flush(chunk, lsn_limit, &seen[i], &mut candidates);
            }
            if candidates.is_empty() {
                break;
            }
            candidates.sort_unstable();
            let mut items: Vec<WriteItem<'_>> = Vec::with_capacity(chunk);
            for &(lsn, i, idx) in &candidates {
                if items.len() == chunk {
                    break;
                }
                seen[i].insert(idx);
                let inst = &self.instances()[i];
                if inst.pin_for_flush(lsn, idx) {
                    items.push(WriteItem {
                        inst,
                        idx,
                        page_id: inst.frame(idx).page_id(),
                        newest: Lsn::ZERO,
                        buf: AlignedBuf::empty(),
                        space: None,
                    });
                }
            }
            if items.is_empty() {
                // Every candidate changed under us; look again.
                continue;
            }
            remaining -= items.len();
            let report = self.write_pinned(items, WriteKind::Batch)?;
            self.stats_ref().flush_batches.inc();
            self.stats_ref()
                .flush_batch_pages
                .add(report.written as u64);
            total.absorb(report);
        }
        Ok(total)
    }

    /// Writes every dirty page (shutdown, or a test's "make everything
    /// durable"), then writes a checkpoint. Pages kept latched by other
    /// threads are waited for; returns once no page is dirty.
    pub fn flush_all(&self) -> BufResult<FlushReport> {
        let mut total = FlushReport::default();
        loop {
            let r = self.flush_list_batch(usize::MAX, Lsn::MAX)?;
            total.absorb(r);
            if self.dirty_pages() == 0 {
                break;
            }
            if r.written == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        self.checkpoint()?;
        Ok(total)
    }

    /// Writes one pinned dirty LRU victim through a single-page doublewrite
    /// slot. Returns whether the page became clean.
    pub(crate) fn flush_single(&self, inst: &Instance, idx: u32) -> BufResult<bool> {
        let item = WriteItem {
            inst,
            idx,
            page_id: inst.frame(idx).page_id(),
            newest: Lsn::ZERO,
            buf: AlignedBuf::empty(),
            space: None,
        };
        let report = self.write_pinned(vec![item], WriteKind::Single)?;
        if report.written > 0 {
            self.stats_ref().single_page_flushes.inc();
        }
        Ok(report.cleaned > 0)
    }

    /// Releases the pins of items that will not be written.
    fn unpin(&self, item: WriteItem<'_>) {
        item.inst.abandon_write(item.idx);
        item.inst.release_fix(item.idx);
        if !item.buf.is_empty() {
            self.return_write_buf(item.buf);
        }
    }

    /// Copy, WAL rule, doublewrite, write in place, fsync, complete.
    fn write_pinned(&self, items: Vec<WriteItem<'_>>, kind: WriteKind) -> BufResult<FlushReport> {
        let mut report = FlushReport::default();
        // Copy under a short shared latch.
        let mut ready: Vec<WriteItem<'_>> = Vec::with_capacity(items.len());
        for mut item in items {
            let f = item.inst.frame(item.idx);
            if !f.try_lock_shared_for(COPY_LATCH_WAIT) {
                report.skipped_busy += 1;
                self.stats_ref().flush_skipped_busy.inc();
                self.unpin(item);
                continue;
            }
            let mut buf = self.take_write_buf();
            // SAFETY: shared latch taken just above, released right after.
            buf.copy_from_slice(unsafe { f.page() });
            item.newest = f.newest_modification();
            item.page_id = f.page_id();
            // SAFETY: shared latch taken above.
            unsafe { f.unlock_shared() };
            header::set_page_lsn(&mut buf, item.newest);
            header::stamp_checksum(&mut buf);
            item.buf = buf;
            match self.spaces().get(item.page_id.space) {
                Ok(space) => {
                    item.space = Some(space);
                    ready.push(item);
                }
                Err(_) => {
                    // The tablespace was dropped without discarding its
                    // pages; nothing can be written, and keeping the page
                    // dirty would hold the checkpoint back forever.
                    warn!(page = %item.page_id, "dirty page of a closed tablespace dropped");
                    item.inst.complete_write(item.idx, item.newest);
                    item.inst.release_fix(item.idx);
                    self.return_write_buf(item.buf);
                    report.dropped += 1;
                }
            }
        }
        if ready.is_empty() {
            return Ok(report);
        }
        // WAL rule: redo up to the newest change of every copy is durable
        // before any copy reaches a file (the doublewrite area included).
        let max_newest = ready.iter().map(|i| i.newest).max().unwrap_or(Lsn::ZERO);
        if let Err(e) = self.gate().flush_up_to(max_newest) {
            for item in ready {
                self.unpin(item);
            }
            return Err(e);
        }
        let outcome = match (kind, self.dblwr.as_ref()) {
            (WriteKind::Batch, Some(d)) => {
                let mut area = d.lock_batch();
                let res = d
                    .write_batch(&mut area, self.spaces(), ready.iter().map(|i| &i.buf[..]))
                    .map(|_| {
                        self.stats_ref().dblwr_writes.inc();
                        self.stats_ref().dblwr_pages.add(ready.len() as u64);
                    });
                match res {
                    Ok(()) => self.write_in_place(&mut ready, kind),
                    Err(e) => Err(e),
                }
                // `area` released here: the in-place writes are durable.
            }
            (WriteKind::Single, Some(d)) => {
                let slot = d.acquire_slot();
                match slot.write(self.spaces(), &ready[0].buf) {
                    Ok(()) => {
                        self.stats_ref().dblwr_writes.inc();
                        self.stats_ref().dblwr_pages.inc();
                        self.write_in_place(&mut ready, kind)
                    }
                    Err(e) => Err(e),
                }
            }
            (_, None) => self.write_in_place(&mut ready, kind),
        };
        let (failed, first_err) = match outcome {
            Ok(r) => r,
            Err(e) => {
                for item in ready {
                    self.unpin(item);
                }
                return Err(e);
            }
        };
        for (item, failed) in ready.into_iter().zip(failed) {
            if failed {
                self.unpin(item);
                continue;
            }
            report.written += 1;
            if item.inst.complete_write(item.idx, item.newest) {
                report.cleaned += 1;
            }
            item.inst.release_fix(item.idx);
            self.return_write_buf(item.buf);
        }
        self.stats_ref().pages_written.add(report.written as u64);
        self.stats_ref()
            .flush_redirtied
            .add((report.written - report.cleaned) as u64);
        match first_err {
            Some(e) => Err(BufError::Io(e)),
            None => Ok(report),
        }
    }

    /// Writes the copies in place and fsyncs the files. Returns per item
    /// whether its write failed, plus the first write error; an fsync error
    /// fails the whole set (nothing can be trusted durable).
    fn write_in_place(
        &self,
        ready: &mut [WriteItem<'_>],
        kind: WriteKind,
    ) -> BufResult<(Vec<bool>, Option<IoError>)> {
        let mut failed = vec![false; ready.len()];
        let mut first_err: Option<IoError> = None;
        match kind {
            WriteKind::Single => {
                for (k, item) in ready.iter().enumerate() {
                    let space = item.space.as_ref().expect("ready items carry their space");
                    if let Err(e) = space.file().write_at(&item.buf, item.page_id.file_offset()) {
                        warn!(page = %item.page_id, error = %e, "page write failed");
                        failed[k] = true;
                        first_err.get_or_insert(e);
                    }
                }
            }
            WriteKind::Batch => {
                let mut requests: Vec<IoRequest> = ready
                    .iter_mut()
                    .map(|item| {
                        let space = item.space.as_ref().expect("ready items carry their space");
                        IoRequest {
                            file: Arc::clone(space.file()),
                            offset: item.page_id.file_offset(),
                            buf: std::mem::replace(&mut item.buf, AlignedBuf::empty()),
                            op: IoOp::Write,
                        }
                    })
                    .collect();
                self.spaces().io().run_batch(&mut requests, &mut |k, req, res| {
                    if let Err(e) = res {
                        warn!(path = %req.file.path().display(), offset = req.offset, error = %e,
                            "page write failed");
                        failed[k] = true;
                        first_err.get_or_insert(e);
                    }
                });
                for (item, req) in ready.iter_mut().zip(requests.iter_mut()) {
                    item.buf = std::mem::replace(&mut req.buf, AlignedBuf::empty());
                }
            }
        }
        // Make the in-place writes durable before the pages count as clean
        // (a checkpoint may pass them next) and before the doublewrite slots
        // they used are reused.
        let mut synced: HashSet<SpaceId> = HashSet::new();
        for (k, item) in ready.iter().enumerate() {
            if failed[k] {
                continue;
            }
            let space = item.space.as_ref().expect("ready items carry their space");
            if synced.insert(space.id()) {
                space.sync_page_writes()?;
            }
        }
        debug!(pages = ready.len(), kind = ?kind, "pages written");
        Ok((failed, first_err))
    }
}
