//! The worker-thread pool behind `PosixIo::run_batch`.
//!
//! Workers block on one shared job channel. A batch moves each request's
//! buffer into a job (leaving an empty placeholder in the request), sends
//! every job at once, then waits on its own completion channel; each
//! completion moves the buffer back into its request before `on_complete`
//! runs on the calling thread. Concurrent batches share the workers; each
//! carries its own completion channel, so results never cross batches.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use tracing::warn;

use crate::posix::execute_request;
use crate::{AlignedBuf, FileRef, IoError, IoOp, IoRequest, IoResult};

/// One request in flight on a worker.
struct Job {
    index: usize,
    file: FileRef,
    offset: u64,
    op: IoOp,
    buf: AlignedBuf,
    done: Sender<Done>,
}

/// A finished job on its way back to the batch that sent it.
struct Done {
    index: usize,
    buf: AlignedBuf,
    result: IoResult<()>,
}

/// Fixed set of I/O worker threads.
#[derive(Debug)]
pub(crate) struct PosixPool {
    /// `None` only while dropping (closing the channel stops the workers).
    jobs: Option<Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
}

impl PosixPool {
    /// Starts up to `threads` workers named `basalt-io-N`.
    pub(crate) fn new(threads: usize) -> PosixPool {
        let (tx, rx) = crossbeam_channel::unbounded::<Job>();
        let mut workers = Vec::with_capacity(threads);
        for n in 0..threads {
            let rx = rx.clone();
            match std::thread::Builder::new()
                .name(format!("basalt-io-{n}"))
                .spawn(move || worker(rx))
            {
                Ok(h) => workers.push(h),
                Err(e) => warn!(error = %e, "could not start I/O worker thread {n}"),
            }
        }
        PosixPool {
            jobs: Some(tx),
            workers,
        }
    }

    pub(crate) fn threads(&self) -> usize {
        self.workers.len()
    }

    /// Runs `requests` on the workers; see `Io::run_batch`.
    pub(crate) fn run(
        &self,
        requests: &mut [IoRequest],
        on_complete: &mut dyn FnMut(usize, &mut IoRequest, IoResult<()>),
    ) {
        let Some(jobs) = self.jobs.as_ref() else {
            unreachable!("the job channel lives until the pool is dropped");
        };
        let (done_tx, done_rx) = crossbeam_channel::unbounded::<Done>();
        let mut sent = 0usize;
        for (index, req) in requests.iter_mut().enumerate() {
            let job = Job {
                index,
                file: req.file.clone(),
                offset: req.offset,
                op: req.op,
                buf: std::mem::take(&mut req.buf),
                done: done_tx.clone(),
            };
            match jobs.send(job) {
                Ok(()) => sent += 1,
                Err(crossbeam_channel::SendError(job)) => {
                    // Every worker is gone (cannot happen while the pool is
                    // alive, since workers survive panicking jobs); run the
                    // request here rather than lose it.
                    req.buf = job.buf;
                    let result = execute_request(&req.file, req.op, &mut req.buf, req.offset);
                    on_complete(index, req, result);
                }
            }
        }
        drop(done_tx);
        for _ in 0..sent {
            let Ok(done) = done_rx.recv() else {
                // Unreachable: each job owns a sender clone and a worker
                // always answers (panics included) before dropping it.
                unreachable!("an I/O worker dropped a job without answering");
            };
            let req = &mut requests[done.index];
            req.buf = done.buf;
            on_complete(done.index, req, done.result);
        }
    }
}

impl Drop for PosixPool {
    fn drop(&mut self) {
        self.jobs = None;
        for h in self.workers.drain(..) {
            // A worker only ends when the channel closes; a join error would
            // mean it panicked outside a job, which leaves nothing to clean.
            let _ = h.join();
        }
    }
}

/// Worker loop: woken by a job on the shared channel, runs it, answers on the
/// job's own completion channel; exits when the pool closes the channel.
fn worker(rx: Receiver<Job>) {
    while let Ok(job) = rx.recv() {
        let Job {
            index,
            file,
            offset,
            op,
            mut buf,
            done,
        } = job;
        let result = catch_unwind(AssertUnwindSafe(|| {
            execute_request(&file, op, &mut buf, offset)
        }))
        .unwrap_or_else(|panic| {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(IoError::os(
                match op {
                    IoOp::Read => "read",
                    IoOp::Write => "write",
                },
                file.path(),
                std::io::Error::other(format!("I/O worker panicked: {msg}")),
            ))
        });
        // The batch may have been abandoned by a panicking caller; then the
        // result has nowhere to go and is dropped with its buffer.
        let _ = done.send(Done { index, buf, result });
    }
}
