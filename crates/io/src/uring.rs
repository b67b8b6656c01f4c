//! The io_uring backend: `UringIo`.
//!
//! Files are [`PosixFile`]s; single reads, writes and syncs use
//! pread/pwrite/fdatasync on the calling thread, because one system call
//! costs no more than one ring round trip. Only [`Io::run_batch`] goes
//! through a ring, where keeping `queue_depth` requests in flight lets the
//! device work on many at once (recovery reads, page-cleaner batches).

use std::collections::VecDeque;
use std::fmt;
use std::os::fd::RawFd;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use io_uring::{cqueue, opcode, register::Probe, squeue, types, IoUring};
use parking_lot::Mutex;
use tracing::{error, warn};

use crate::posix::{check_direct_alignment, execute_request, fs_ops, PosixFile};
use crate::{FileRef, Io, IoError, IoKind, IoOp, IoRequest, IoResult, OpenOptions};

/// Requests a [`UringIo`] batch keeps in flight when not told otherwise.
pub const DEFAULT_QUEUE_DEPTH: u32 = 64;

/// Largest queue depth accepted (larger values are clamped).
pub const MAX_QUEUE_DEPTH: u32 = 4096;

/// Largest single submission; longer requests are split by the short-
/// transfer logic (the kernel's length field is 32 bits).
const MAX_CHUNK: usize = 1 << 30;

/// `user_data` of the probe NOP (never a request index).
const PROBE_USER_DATA: u64 = u64::MAX;

/// `IORING_ENTER_GETEVENTS` from the kernel's `linux/io_uring.h`: wait for
/// completions.
const IORING_ENTER_GETEVENTS: u32 = 1;

/// io_uring backend. Rings are created up front (one, by the probe) and on
/// demand (one per concurrently running batch), kept in a pool and reused;
/// a batch takes a ring, runs to completion and gives it back.
pub struct UringIo {
    rings: Mutex<Vec<IoUring>>,
    queue_depth: u32,
    direct_fallback_logged: AtomicBool,
}

impl fmt::Debug for UringIo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UringIo")
            .field("queue_depth", &self.queue_depth)
            .field("idle_rings", &self.rings.lock().len())
            .finish()
    }
}

impl UringIo {
    /// Sets up io_uring and proves it works: builds a ring of `queue_depth`
    /// entries (clamped to `1..=MAX_QUEUE_DEPTH`), checks the kernel supports
    /// `IORING_OP_READ`/`IORING_OP_WRITE`, and round-trips a NOP. Fails with
    /// the OS error when any step does (old kernel, seccomp filter,
    /// `kernel.io_uring_disabled`, locked-memory limit).
    pub fn new(queue_depth: u32) -> std::io::Result<UringIo> {
        let queue_depth = queue_depth.clamp(1, MAX_QUEUE_DEPTH);
        let mut ring = IoUring::new(queue_depth)?;
        probe(&mut ring)?;
        Ok(UringIo {
            rings: Mutex::new(vec![ring]),
            queue_depth,
            direct_fallback_logged: AtomicBool::new(false),
        })
    }

    /// Requests kept in flight per batch.
    pub fn queue_depth(&self) -> u32 {
        self.queue_depth
    }

    /// Takes an idle ring, or builds one when every ring is busy.
    fn take_ring(&self) -> std::io::Result<IoUring> {
        if let Some(ring) = self.rings.lock().pop() {
            return Ok(ring);
        }
        IoUring::new(self.queue_depth)
    }

    fn return_ring(&self, ring: IoUring) {
        self.rings.lock().push(ring);
    }
}

/// Checks opcode support and round-trips a NOP through `ring`.
fn probe(ring: &mut IoUring) -> std::io::Result<()> {
    let mut p = Probe::new();
    ring.submitter().register_probe(&mut p)?;
    if !p.is_supported(opcode::Read::CODE) || !p.is_supported(opcode::Write::CODE) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "kernel io_uring lacks IORING_OP_READ/IORING_OP_WRITE (needs Linux 5.6+)",
        ));
    }
    let nop = opcode::Nop::new().build().user_data(PROBE_USER_DATA);
    // SAFETY: a NOP references no memory, so nothing has to outlive it.
    unsafe { ring.submission().push(&nop) }
        .map_err(|_| std::io::Error::other("fresh io_uring submission queue is full"))?;
    ring.submit_and_wait(1)?;
    let cqe = ring
        .completion()
        .next()
        .ok_or_else(|| std::io::Error::other("io_uring NOP produced no completion"))?;
    if cqe.result() < 0 {
        return Err(std::io::Error::from_raw_os_error(-cqe.result()));
    }
    Ok(())
}

impl Io for UringIo {
    fn kind(&self) -> IoKind {
        IoKind::Uring
    }

    fn open(&self, path: &Path, opts: OpenOptions) -> IoResult<FileRef> {
        Ok(Arc::new(PosixFile::open_logged(
            path,
            opts,
            &self.direct_fallback_logged,
        )?))
    }

    fn exists(&self, path: &Path) -> bool {
        fs_ops::exists(path)
    }

    fn remove_file(&self, path: &Path) -> IoResult<()> {
        fs_ops::remove_file(path)
    }

    fn create_dir_all(&self, path: &Path) -> IoResult<()> {
        fs_ops::create_dir_all(path)
    }

    fn sync_dir(&self, path: &Path) -> IoResult<()> {
        fs_ops::sync_dir(path)
    }

    fn run_batch(
        &self,
        requests: &mut [IoRequest],
        on_complete: &mut dyn FnMut(usize, &mut IoRequest, IoResult<()>),
    ) {
        if requests.is_empty() {
            return;
        }
        let ring = match self.take_ring() {
            Ok(ring) => ring,
            Err(e) => {
                // Out of rings (locked memory, fd limit): still do the work.
                warn!(error = %e, "cannot build another io_uring; running batch with pread/pwrite");
                for (i, req) in requests.iter_mut().enumerate() {
                    let result = execute_request(&req.file, req.op, &mut req.buf, req.offset);
                    on_complete(i, req, result);
                }
                return;
            }
        };
        let mut batch = Batch::new(ring, self.queue_depth as usize, requests.len());
        batch.run(requests, on_complete);
        if let Some(ring) = batch.finish() {
            self.return_ring(ring);
        }
    }
}

/// One batch's state on its ring.
///
/// Invariant: every request index is in exactly one of: not started
/// (`>= next`), `retry`, `unconsumed` (pushed to the submission queue, not
/// yet taken by the kernel), in flight (counted by `inflight`), or
/// completed (reported to `on_complete`). `inflight + unconsumed.len()` never
/// exceeds `depth`, so the submission queue never overflows and the
/// completion queue (twice its size) never does either.
struct Batch {
    /// `None` once the ring is discarded.
    ring: Option<IoUring>,
    depth: usize,
    next: usize,
    /// Bytes already transferred per request (short transfers resume here).
    progress: Vec<usize>,
    /// Descriptor of each started request (read once, when it starts).
    fds: Vec<RawFd>,
    retry: Vec<usize>,
    unconsumed: VecDeque<usize>,
    inflight: usize,
    /// Set when `io_uring_enter` failed for good; the ring is then dropped
    /// instead of pooled (it may hold unconsumed entries).
    poisoned: Option<std::io::Error>,
    cqes: Vec<(u64, i32)>,
}

impl Batch {
    fn new(ring: IoUring, depth: usize, n: usize) -> Batch {
        Batch {
            ring: Some(ring),
            depth: depth.max(1),
            next: 0,
            progress: vec![0; n],
            fds: vec![-1; n],
            retry: Vec::new(),
            unconsumed: VecDeque::with_capacity(depth),
            inflight: 0,
            poisoned: None,
            cqes: Vec::with_capacity(depth),
        }
    }

    fn ring(&mut self) -> &mut IoUring {
        self.ring
            .as_mut()
            .expect("the ring is present until finish() or drop")
    }

    fn run(
        &mut self,
        requests: &mut [IoRequest],
        on_complete: &mut dyn FnMut(usize, &mut IoRequest, IoResult<()>),
    ) {
        let n = requests.len();
        loop {
            if self.poisoned.is_none() {
                self.fill(requests, on_complete);
            }
            if self.inflight == 0 && self.unconsumed.is_empty() {
                if self.poisoned.is_some() || (self.next >= n && self.retry.is_empty()) {
                    break;
                }
                continue;
            }
            if self.poisoned.is_none() {
                self.submit_and_wait();
            } else if self.inflight > 0 {
                self.wait_only();
            }
            self.reap(requests, on_complete);
            if self.poisoned.is_some() && self.inflight == 0 {
                break;
            }
        }
        if let Some(err) = self.poisoned.as_ref() {
            // Fail whatever never reached the kernel.
            let kind = err.kind();
            let msg = err.to_string();
            let mut left: Vec<usize> = self.unconsumed.drain(..).collect();
            left.append(&mut self.retry);
            left.extend(self.next..n);
            self.next = n;
            for i in left {
                let req = &mut requests[i];
                let e = IoError::os(
                    "io_uring_enter",
                    req.file.path(),
                    std::io::Error::new(kind, msg.clone()),
                );
                on_complete(i, req, Err(e));
            }
        }
    }

    /// Pushes retries, then new requests, until the queue depth is reached.
    fn fill(
        &mut self,
        requests: &mut [IoRequest],
        on_complete: &mut dyn FnMut(usize, &mut IoRequest, IoResult<()>),
    ) {
        while self.inflight + self.unconsumed.len() < self.depth {
            let i = if let Some(i) = self.retry.pop() {
                i
            } else if self.next < requests.len() {
                let i = self.next;
                self.next += 1;
                // Requests the ring cannot (or need not) run finish here.
                let req = &mut requests[i];
                let Some(fd) = req.file.raw_fd() else {
                    // Not an OS file (an in-memory or wrapped file).
                    let result = execute_request(&req.file, req.op, &mut req.buf, req.offset);
                    on_complete(i, req, result);
                    continue;
                };
                self.fds[i] = fd;
                if req.file.is_direct() {
                    let path = req.file.path();
                    if let Err(e) =
                        check_direct_alignment(op_name(req.op), path, req.offset, req.buf.len())
                    {
                        on_complete(i, req, Err(e));
                        continue;
                    }
                }
                if req.buf.is_empty() {
                    on_complete(i, req, Ok(()));
                    continue;
                }
                i
            } else {
                break;
            };
            if !self.push(i, &mut requests[i]) {
                self.retry.push(i);
                break;
            }
        }
    }

    /// Queues the untransferred remainder of request `i`; false (and the
    /// batch poisoned) if the submission queue refused it.
    fn push(&mut self, i: usize, req: &mut IoRequest) -> bool {
        let done = self.progress[i];
        let len = (req.buf.len() - done).min(MAX_CHUNK) as u32;
        let fd = types::Fd(self.fds[i]);
        let offset = req.offset + done as u64;
        let entry: squeue::Entry = match req.op {
            IoOp::Read => {
                // `done < buf.len()`, so the pointer stays inside the buffer.
                let ptr = req.buf[done..].as_mut_ptr();
                opcode::Read::new(fd, ptr, len).offset(offset).build()
            }
            IoOp::Write => {
                let ptr = req.buf[done..].as_ptr();
                opcode::Write::new(fd, ptr, len).offset(offset).build()
            }
        }
        .user_data(i as u64);
        // SAFETY: the entry points into the heap allocation of
        // `requests[i].buf`, which is neither freed, moved nor handed to the
        // caller until this request's completion has been reaped: the
        // request is reported only from `reap` (after its CQE) or from the
        // poisoned path (only for entries the kernel never consumed, and the
        // ring holding them is then dropped, never submitted again). Every
        // consumed entry is waited for before `run_batch` returns, and if
        // anything unwinds first, `Batch::drop` waits for them before the
        // caller's buffers can be freed. `AlignedBuf` holds a raw pointer, so
        // `&mut` access to other requests does not alias this memory. The
        // descriptor stays open for as long: `requests[i].file` (an `Arc`)
        // is borrowed from the caller for the whole batch.
        let pushed = unsafe { self.ring().submission().push(&entry) };
        if pushed.is_err() {
            // The depth invariant keeps the queue from filling; should it
            // ever happen, fail the rest of the batch instead of spinning.
            debug_assert!(false, "submission queue overflow despite depth limit");
            self.poisoned = Some(std::io::Error::other("io_uring submission queue overflow"));
            return false;
        }
        self.unconsumed.push_back(i);
        true
    }

    /// Submits queued entries and waits for at least one completion.
    fn submit_and_wait(&mut self) {
        let want = usize::from(self.inflight + self.unconsumed.len() > 0);
        let mut busy_spins = 0u32;
        loop {
            match self.ring().submit_and_wait(want) {
                Ok(taken) => {
                    let taken = taken.min(self.unconsumed.len());
                    self.unconsumed.drain(..taken);
                    self.inflight += taken;
                    return;
                }
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e)
                    if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EBUSY))
                        && busy_spins < 1000 =>
                {
                    // Kernel short of resources: let in-flight work finish
                    // (the caller then reaps it), or back off briefly.
                    busy_spins += 1;
                    if self.inflight > 0 {
                        self.wait_only();
                        return;
                    }
                    std::thread::yield_now();
                }
                Err(e) => {
                    error!(error = %e, "io_uring_enter failed; abandoning ring");
                    self.poisoned = Some(e);
                    return;
                }
            }
        }
    }

    /// Waits for one completion without submitting anything.
    fn wait_only(&mut self) {
        loop {
            // SAFETY: `enter` with to_submit = 0 and GETEVENTS only waits for
            // completions; it reads no submission entries and passes no
            // argument memory (`None`).
            let r = unsafe {
                self.ring()
                    .submitter()
                    .enter::<libc::sigset_t>(0, 1, IORING_ENTER_GETEVENTS, None)
            };
            match r {
                Ok(_) => return,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => {
                    // Requests are in the kernel's hands and their buffers
                    // belong to the caller; returning would let those buffers
                    // be freed under a running transfer.
                    error!(error = %e, "cannot wait for io_uring completions; aborting");
                    std::process::abort();
                }
            }
        }
    }

    /// Handles every completion currently in the completion queue.
    fn reap(
        &mut self,
        requests: &mut [IoRequest],
        on_complete: &mut dyn FnMut(usize, &mut IoRequest, IoResult<()>),
    ) {
        let mut cqes = std::mem::take(&mut self.cqes);
        cqes.clear();
        cqes.extend(
            self.ring()
                .completion()
                .map(|c: cqueue::Entry| (c.user_data(), c.result()))
                .filter(|&(user_data, _)| user_data != PROBE_USER_DATA),
        );
        // Everything popped is out of the kernel's hands now, even if an
        // `on_complete` below unwinds before its entry is processed.
        self.inflight -= cqes.len();
        for &(user_data, res) in &cqes {
            let i = user_data as usize;
            let req = &mut requests[i];
            if res < 0 {
                let errno = -res;
                if errno == libc::EINTR || errno == libc::EAGAIN {
                    self.retry.push(i);
                    continue;
                }
                let e = IoError::os(
                    op_name(req.op),
                    req.file.path(),
                    std::io::Error::from_raw_os_error(errno),
                );
                on_complete(i, req, Err(e));
                continue;
            }
            if res == 0 {
                let e = match req.op {
                    IoOp::Read => IoError::UnexpectedEof {
                        path: req.file.path().to_path_buf(),
                        offset: req.offset,
                        len: req.buf.len(),
                    },
                    IoOp::Write => IoError::os(
                        "write",
                        req.file.path(),
                        std::io::Error::new(
                            std::io::ErrorKind::WriteZero,
                            "write transferred no bytes",
                        ),
                    ),
                };
                on_complete(i, req, Err(e));
                continue;
            }
            self.progress[i] += res as usize;
            if self.progress[i] < req.buf.len() {
                self.retry.push(i);
            } else {
                on_complete(i, req, Ok(()));
            }
        }
        self.cqes = cqes;
    }

    /// Hands the ring back for reuse, or `None` when it must be discarded.
    fn finish(mut self) -> Option<IoUring> {
        debug_assert_eq!(self.inflight, 0);
        if self.poisoned.is_some() || !self.unconsumed.is_empty() {
            return None;
        }
        self.ring.take()
    }
}

impl Drop for Batch {
    /// Runs only with work outstanding when something unwound mid-batch
    /// (a panicking `on_complete`): wait for every consumed entry so the
    /// kernel is done with the caller's buffers before they can be freed,
    /// then drop the ring (it may hold entries never consumed; closing it
    /// discards them).
    fn drop(&mut self) {
        if self.ring.is_none() {
            return;
        }
        while self.inflight > 0 {
            self.wait_only();
            let n = self
                .ring()
                .completion()
                .filter(|c| c.user_data() != PROBE_USER_DATA)
                .count();
            self.inflight -= n.min(self.inflight);
        }
    }
}

fn op_name(op: IoOp) -> &'static str {
    match op {
        IoOp::Read => "read",
        IoOp::Write => "write",
    }
}
