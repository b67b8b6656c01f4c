//! Basalt file I/O.
//!
//! Every byte the storage engine reads or writes (data pages, doublewrite
//! area, redo log) goes through the [`Io`] and [`IoFile`] traits of this
//! crate. The crate knows files, offsets and buffers; it knows nothing of
//! pages, LSNs or logs, and depends on no other Basalt crate but `common`.
//!
//! # Backends
//!
//! ```text
//!                 open_io(&IoConfig)
//!                        │
//!      native aio ON, BASALT_FORCE_POSIX_IO unset, probe OK?
//!             ┌── yes ───┴─── no ──┐
//!             ▼                    ▼
//!         UringIo               PosixIo                 tests:
//!   single ops: pread/pwrite   single ops: pread/pwrite   MemIo   (in-memory, crash model)
//!   batches: io_uring rings    batches: worker threads    FaultyIo(any Io) (fault plans)
//!             └──── both open PosixFile ────┘
//! ```
//!
//! * [`PosixIo`] — `pread`/`pwrite`/`fdatasync` via `std`'s `FileExt`. A
//!   batch moves each request's buffer into a job on a shared crossbeam
//!   channel served by a fixed pool of worker threads (`posix_threads`,
//!   default 4, named `basalt-io-N`, started by [`PosixIo::new`], woken by a
//!   job arriving, stopped when the backend is dropped). Workers answer on
//!   the batch's own completion channel; the calling thread moves the buffer
//!   back and runs `on_complete`. A batch of one runs inline.
//! * [`UringIo`] — the same [`PosixFile`]s. Single reads, writes and syncs
//!   are plain system calls on the calling thread: for one operation a
//!   syscall costs no more than a ring round trip. Batches go through an
//!   io_uring: up to `queue_depth` (default 64) requests in flight, refilled
//!   as completions arrive, short transfers resubmitted for the remainder,
//!   negative results mapped to [`IoError::Os`] (`EINTR`/`EAGAIN` are
//!   retried). Rings are pooled (`Mutex<Vec<IoUring>>`): a batch takes one
//!   (building a new one only when all are busy), so concurrent batches run
//!   on separate rings and no ring is built per batch. The calling thread
//!   both submits and reaps; there is no background thread.
//! * [`MemIo`] — in-memory files for tests, with a power-loss model (below).
//! * [`FaultyIo`] — wraps any `Arc<dyn Io>` and injects the faults of a
//!   shared [`FaultPlan`] (below).
//!
//! # Runtime selection
//!
//! [`open_io`] returns [`UringIo`] when `innodb_use_native_aio` is on and
//! io_uring passes a probe (a ring is built, `IORING_OP_READ`/`WRITE` are
//! supported, a NOP round-trips); otherwise [`PosixIo`], logging why
//! (`io_uring unavailable: <error>; using pread/pwrite` at warn, an explicit
//! `innodb_use_native_aio=OFF` at info). Setting the environment variable
//! `BASALT_FORCE_POSIX_IO=1` forces [`PosixIo`] (tests and benchmarks use it
//! to compare backends). `innodb_flush_method` is a [`FlushMethod`];
//! [`FlushMethod::direct_data_files`] tells whether data files are opened
//! with `direct: true`, and [`FlushMethod::data_fsync_needed`] whether a
//! data write must be followed by `sync` (`O_DIRECT_NO_FSYNC` skips it
//! unless the file grew).
//!
//! # O_DIRECT and alignment
//!
//! `OpenOptions { direct: true }` asks for `O_DIRECT`. A filesystem that
//! refuses it (`open` fails with `EINVAL`, e.g. ramfs or older tmpfs) gets
//! the file reopened buffered; the first such fallback per backend logs at
//! info level, later ones at debug. [`IoFile::is_direct`] reports what was
//! granted. On a direct file:
//!
//! * offsets and lengths must be multiples of [`DIRECT_IO_ALIGN`] (4096);
//!   otherwise the call fails with `IoError::Os { source.kind() ==
//!   InvalidInput }` before reaching the kernel, naming offset and length;
//! * buffer addresses should be aligned too. [`AlignedBuf`] always is, and
//!   batch requests only carry `AlignedBuf`s. `read_at`/`write_at` take
//!   plain slices; a misaligned slice is bounced through a temporary
//!   `AlignedBuf` (one allocation and copy) rather than refused, so it is
//!   correct but slow.
//!
//! [`MemIo`] enforces the same offset/length rule on files opened direct,
//! so in-memory tests catch alignment bugs.
//!
//! # Batch semantics ([`Io::run_batch`])
//!
//! * Every request completes exactly once: `on_complete(index, request,
//!   result)` runs on the calling thread, in completion order, and
//!   `run_batch` returns only after the last one. A failing request does not
//!   stop the others.
//! * Reads are exact: running past the end of the file is
//!   [`IoError::UnexpectedEof`].
//! * No ordering between requests of one batch is promised (two writes to
//!   the same range race). [`MemIo`] runs requests in order.
//! * Durability is not part of a batch: call [`IoFile::sync`] afterwards.
//! * While a request is in flight its buffer belongs to the backend. The
//!   io_uring backend hands the kernel pointers into the caller's buffers;
//!   it never returns (or unwinds out of `run_batch`) before every
//!   submitted request has been reaped.
//!
//! # Crash model of [`MemIo`]
//!
//! Each file has a volatile image (what reads see; writes and `set_len`
//! change it) and a durable image (copied from the volatile one by `sync`).
//! [`MemIo::crash`] reverts every file to its durable image. Namespace
//! changes (create, remove, mkdir) are immediate and survive crashes: a
//! file exists from creation to removal; `sync_dir` is only counted. Paths
//! are plain keys. Counters of reads, writes, syncs and directory syncs
//! support assertions.
//!
//! # Fault plans ([`FaultyIo`], [`FaultPlan`])
//!
//! A plan is shared (`Arc`) and may be changed while I/O runs. Rules count
//! matching operations from their installation (N = 1 is the next one),
//! optionally only on paths containing a substring:
//!
//! * fail the Nth write ([`IoError::Injected`], nothing reaches the inner
//!   backend);
//! * tear the Nth write: only its first K bytes (rounded down to
//!   [`DIRECT_IO_ALIGN`] on direct files) reach the inner backend, then it
//!   reports success or failure as configured;
//! * fail the Nth sync, or all syncs; fail the Nth read;
//! * crash at write N (optionally torn): that write and every later write,
//!   sync, `set_len`, create and remove fail, and nothing more reaches the
//!   inner backend; reads keep working. The test then calls
//!   [`MemIo::crash`] on the inner backend to model the power loss.
//!
//! Faults apply to `IoFile` calls on files opened through the `FaultyIo` and
//! to batch requests alike; inside a batch, requests are numbered in
//! submission order. Counters of reads, writes and syncs seen, and of
//! faults fired, let tests assert that a fault actually happened.
//!
//! # Threads and latches
//!
//! Only [`PosixIo`] owns threads (its workers, above). Latches: the
//! `UringIo` ring pool mutex is held only to pop or push a ring; `MemIo`
//! takes its namespace mutex before a file's image mutex, never the other
//! way; a `FaultPlan`'s rule mutex is a leaf. No latch is held across I/O
//! except a `MemFile`'s own image mutex during its memory copy.
//!
//! # Tests
//!
//! `cargo test -p basalt-io` runs every backend through one conformance
//! suite. io_uring tests fail loudly if io_uring cannot be set up, unless
//! `BASALT_ALLOW_NO_URING=1` is set. Seeded random batch tests take their
//! seed from `BASALT_TEST_SEED` and print it. The O_DIRECT fallback test
//! needs a filesystem that refuses O_DIRECT: `BASALT_NO_DIRECT_DIR`, else
//! `/dev/shm` if it refuses, else a private ramfs mounted in a new mount
//! namespace (`unshare -m`, needs root); if none is available it fails
//! unless `BASALT_ALLOW_NO_RAMFS=1` is set.

mod aligned;
mod api;
mod config;
mod error;
mod fault_plan;
mod faulty;
mod mem;
mod pool;
mod posix;
mod uring;

pub use aligned::{AlignedBuf, DIRECT_IO_ALIGN};
pub use api::{FileRef, Io, IoFile, IoKind, IoOp, IoRequest, OpenOptions};
pub use config::{
    force_posix_from_env, force_posix_value, open_io, select_io, FlushMethod, IoConfig,
    UnknownFlushMethod, FORCE_POSIX_ENV,
};
pub use error::{IoError, IoResult};
pub use fault_plan::{FaultPlan, TornWriteReport};
pub use faulty::{FaultyFile, FaultyIo};
pub use mem::{MemFile, MemIo};
pub use posix::{PosixFile, PosixIo, DEFAULT_POSIX_THREADS};
pub use uring::{UringIo, DEFAULT_QUEUE_DEPTH, MAX_QUEUE_DEPTH};
