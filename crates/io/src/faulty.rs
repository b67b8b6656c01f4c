//! The fault-injecting backend: `FaultyIo` and its `FaultyFile`.
//!
//! `FaultyIo` wraps another backend and consults a shared [`FaultPlan`]
//! before every read, write and sync, whether issued on a file
//! (`IoFile::write_at`, `IoFile::sync`) or as part of a batch.
//!
//! Batches: requests are judged in submission order (so "the Nth write" is
//! well defined inside a batch). Requests the plan fails or tears complete
//! first, on the calling thread; the others are forwarded to the inner
//! backend's `run_batch` in one go, with each `FaultyFile` swapped for the
//! inner file while in flight and swapped back before `on_complete` sees
//! the request.

use std::path::Path;
use std::sync::Arc;

use crate::fault_plan::WriteVerdict;
use crate::{FaultPlan, FileRef, Io, IoFile, IoKind, IoOp, IoRequest, IoResult, OpenOptions};

/// A backend that injects the faults its [`FaultPlan`] describes into the
/// backend it wraps (usually a [`crate::MemIo`], so a simulated crash can
/// be followed by `MemIo::crash()`).
#[derive(Debug)]
pub struct FaultyIo {
    inner: Arc<dyn Io>,
    plan: Arc<FaultPlan>,
}

impl FaultyIo {
    /// Wraps `inner`; faults follow `plan`, which the caller keeps a handle
    /// to and may change at any time.
    pub fn new(inner: Arc<dyn Io>, plan: Arc<FaultPlan>) -> FaultyIo {
        FaultyIo { inner, plan }
    }

    /// The plan in force.
    pub fn plan(&self) -> &Arc<FaultPlan> {
        &self.plan
    }

    /// The wrapped backend.
    pub fn inner(&self) -> &Arc<dyn Io> {
        &self.inner
    }
}

impl Io for FaultyIo {
    fn kind(&self) -> IoKind {
        IoKind::Faulty
    }

    /// Opens through the inner backend. Once crashed, opening with
    /// `create: true` fails (it could create a file).
    fn open(&self, path: &Path, opts: OpenOptions) -> IoResult<FileRef> {
        if opts.create {
            self.plan.check_not_crashed("create", path)?;
        }
        let inner = self.inner.open(path, opts)?;
        Ok(Arc::new(FaultyFile {
            inner,
            plan: self.plan.clone(),
        }))
    }

    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }

    fn remove_file(&self, path: &Path) -> IoResult<()> {
        self.plan.check_not_crashed("unlink", path)?;
        self.inner.remove_file(path)
    }

    fn create_dir_all(&self, path: &Path) -> IoResult<()> {
        self.plan.check_not_crashed("mkdir", path)?;
        self.inner.create_dir_all(path)
    }

    fn sync_dir(&self, path: &Path) -> IoResult<()> {
        self.plan.on_sync(path)?;
        self.inner.sync_dir(path)
    }

    fn run_batch(
        &self,
        requests: &mut [IoRequest],
        on_complete: &mut dyn FnMut(usize, &mut IoRequest, IoResult<()>),
    ) {
        // Judge every request in submission order.
        let mut forwarded: Vec<usize> = Vec::with_capacity(requests.len());
        for (i, req) in requests.iter_mut().enumerate() {
            let Some(ff) = req
                .file
                .as_any()
                .and_then(|a| a.downcast_ref::<FaultyFile>())
            else {
                // Not ours: no faults apply; the inner backend runs it.
                forwarded.push(i);
                continue;
            };
            let local = match req.op {
                IoOp::Read => match self.plan.on_read(ff.inner.path()) {
                    Ok(()) => None,
                    Err(e) => Some(Err(e)),
                },
                IoOp::Write => {
                    match self
                        .plan
                        .on_write(ff.inner.path(), req.buf.len(), ff.inner.is_direct())
                    {
                        WriteVerdict::Pass => None,
                        WriteVerdict::Fail(e) => Some(Err(e)),
                        WriteVerdict::Tear { keep, report } => {
                            Some(ff.write_prefix(&req.buf, keep, req.offset).and(report))
                        }
                    }
                }
            };
            match local {
                Some(result) => on_complete(i, req, result),
                None => forwarded.push(i),
            }
        }
        if forwarded.is_empty() {
            return;
        }

        // Gather the forwarded requests at the front, unwrap their files,
        // run them as one inner batch; the guard undoes both afterwards
        // (also if `on_complete` unwinds).
        let mut guard = Gathered {
            requests,
            forwarded: &forwarded,
            wrappers: Vec::new(),
        };
        guard.gather();
        let k = forwarded.len();
        let Gathered {
            requests,
            wrappers,
            forwarded,
        } = &mut guard;
        self.inner
            .run_batch(&mut requests[..k], &mut |pos, req, result| {
                if let Some(w) = wrappers[pos].take() {
                    req.file = w;
                }
                on_complete(forwarded[pos], req, result);
            });
    }
}

/// Forwarded requests moved to the front of the caller's slice, with their
/// wrapper files set aside; `Drop` restores files and order.
struct Gathered<'a> {
    requests: &'a mut [IoRequest],
    /// Original indices of the forwarded requests, ascending.
    forwarded: &'a [usize],
    /// The `FaultyFile` of each gathered position while its inner file is
    /// in the request.
    wrappers: Vec<Option<FileRef>>,
}

impl Gathered<'_> {
    fn gather(&mut self) {
        // Ascending indices, each >= its target position: swapping in
        // order moves each into place without disturbing earlier ones.
        for (pos, &orig) in self.forwarded.iter().enumerate() {
            self.requests.swap(pos, orig);
        }
        self.wrappers = (0..self.forwarded.len())
            .map(|pos| {
                let req = &mut self.requests[pos];
                let inner = req
                    .file
                    .as_any()
                    .and_then(|a| a.downcast_ref::<FaultyFile>())
                    .map(|ff| ff.inner.clone())?;
                Some(std::mem::replace(&mut req.file, inner))
            })
            .collect();
    }
}

impl Drop for Gathered<'_> {
    fn drop(&mut self) {
        for (pos, w) in self.wrappers.iter_mut().enumerate() {
            if let Some(w) = w.take() {
                self.requests[pos].file = w;
            }
        }
        for (pos, &orig) in self.forwarded.iter().enumerate().rev() {
            self.requests.swap(pos, orig);
        }
    }
}

/// A file opened through [`FaultyIo`]: forwards to the inner file after
/// asking the plan. It reports no raw descriptor, so no backend can bypass
/// the plan by submitting on the inner file directly.
#[derive(Debug)]
pub struct FaultyFile {
    inner: FileRef,
    plan: Arc<FaultPlan>,
}

impl FaultyFile {
    /// The wrapped file.
    pub fn inner(&self) -> &FileRef {
        &self.inner
    }

    /// The part of a torn write that reaches the inner file.
    fn write_prefix(&self, buf: &[u8], keep: usize, offset: u64) -> IoResult<()> {
        if keep == 0 {
            return Ok(());
        }
        self.inner.write_at(&buf[..keep], offset)
    }
}

impl IoFile for FaultyFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> IoResult<()> {
        self.plan.on_read(self.inner.path())?;
        self.inner.read_at(buf, offset)
    }

    fn write_at(&self, buf: &[u8], offset: u64) -> IoResult<()> {
        match self
            .plan
            .on_write(self.inner.path(), buf.len(), self.inner.is_direct())
        {
            WriteVerdict::Pass => self.inner.write_at(buf, offset),
            WriteVerdict::Fail(e) => Err(e),
            WriteVerdict::Tear { keep, report } => {
                self.write_prefix(buf, keep, offset)?;
                report
            }
        }
    }

    fn sync(&self) -> IoResult<()> {
        self.plan.on_sync(self.inner.path())?;
        self.inner.sync()
    }

    fn len(&self) -> IoResult<u64> {
        self.inner.len()
    }

    /// Fails once crashed; otherwise forwards.
    fn set_len(&self, len: u64) -> IoResult<()> {
        self.plan
            .check_not_crashed("ftruncate", self.inner.path())?;
        self.inner.set_len(len)
    }

    fn is_direct(&self) -> bool {
        self.inner.is_direct()
    }

    fn path(&self) -> &Path {
        self.inner.path()
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}
