//! Basalt's buffer pool: frames, page hash, midpoint LRU, flush lists,
//! doublewrite and the flusher (InnoDB's `buf/` subsystem), plus the
//! tablespace registry the pool reads and writes through.
//!
//! # Boundaries
//!
//! This crate knows pages (via `basalt-page`: header, checksum, page LSN)
//! and files (via `basalt-io`), never records or redo. It must not depend
//! on the log crate: durability and checkpoints are requested through the
//! [`RedoGate`] trait, implemented over the real log by the mini-transaction
//! layer. Crash recovery (in that layer) calls [`recover_torn_pages`] before
//! applying redo.
//!
//! # Structure
//!
//! ```text
//!  BufferPool
//!   ├─ Spaces        space id -> Space { file, size (atomic), path, flags }
//!   ├─ Instance[0..n]        chosen by hashing (space, page_no / 64)
//!   │   ├─ frames + arena    16 KiB pages, one aligned allocation
//!   │   ├─ page hash         >= 64 partitions, RwLock each (S for lookups)
//!   │   ├─ free list         Mutex<Vec<frame>>
//!   │   ├─ LRU list          Mutex<LruList>, midpoint insertion
//!   │   └─ flush list        Mutex<FlushList>, ordered by oldest_modification
//!   ├─ Doublewrite   batch region (120 pages) + 8 single-page slots
//!   └─ flusher thread        policy (how much) + mechanism (which, how)
//! ```
//!
//! There is no pool-wide mutex: each instance has its own lists, and the
//! page hash is partitioned with read-write latches, so the hit path takes
//! only the shared side of one partition latch (the page-hash contention fix
//! described in the seed articles).
//!
//! # Frames
//!
//! Each frame has a page latch (a raw read-write lock owned by
//! [`PageGuard`]), a buffer-fix count, a write fix, a state and two LSNs.
//!
//! ```text
//!   Free      on the free list
//!     |  pop (allocate)
//!     v
//!   Private   owned by one thread; in no list, not in the page hash
//!     |  publish in the page hash, X latch held     (a duplicate publish,
//!     v                                              discard_space: -> Free)
//!   Reading   in the hash; the reader holds the X latch; not on the LRU
//!     |  read ok: joins the LRU          |  read failed: leaves the hash,
//!     v                                  v  orphaned
//!   InUse     in hash + LRU           Failed  -> Free at its last unfix
//!     |  evict: fix 0, clean, no write in flight; leaves hash + LRU
//!     v
//!   Private   (reused for the page that needed a frame)
//! ```
//!
//! * **Buffer fix** (`fix_count`): taken under the shared page-hash latch on
//!   every access and held by the [`PageGuard`]. Eviction requires fix 0
//!   and checks it under the *exclusive* partition latch, so a lookup either
//!   fixes the frame first or does not find it. A frame is only dirtied
//!   while fixed, so "fix 0 under the exclusive latch" also freezes its
//!   clean/dirty state.
//! * **Orphans**: a failed read removes the frame from the hash while
//!   waiters may still hold fixes. The frame is marked failed and a bit in
//!   its fix word is set; waiters wake, see the state, retry from the
//!   lookup; whoever drops the count to zero returns the frame to the free
//!   list. A corrupt page is therefore never handed out and never left in
//!   the hash.
//! * **Write fix**: at most one write of a page is in flight. Set under the
//!   flush-list mutex (batches) or LRU mutex (victims); cleared after the
//!   write completes.
//! * **oldest / newest modification**: `newest` is the end LSN of the last
//!   change ([`BufferPool::note_modified`]); `oldest` is the start LSN of
//!   the first unwritten change, nonzero exactly while the page is on its
//!   instance's flush list, and changed only under the flush-list mutex.
//!
//! # Page access
//!
//! Hit (`// PERF:`, no allocation): hash partition S latch, look up, fix,
//! release the hash latch, take the page latch (blocking, or `try_get`'s
//! non-blocking attempt), record the access for the LRU (lock-free unless
//! the page moves). Miss: allocate a frame, latch it X, publish it in the
//! hash as `Reading` under the partition X latch (if another thread
//! published the page first, give the frame back and take the hit path),
//! release the hash latch, read and verify the page holding only the page
//! latch ([`BufError::Corruption`] / [`BufError::ZeroedPage`] on failure),
//! put it at the LRU midpoint, mark it `InUse`, downgrade to S if asked.
//! Threads wanting the same page meanwhile find the `Reading` frame, fix it
//! and block on its latch: one read serves them all. [`BufferPool::create`]
//! hands out a zeroed X-latched frame without reading.
//!
//! Free frames come from the free list, else from the LRU tail: the first
//! clean, unfixed page within `innodb_lru_scan_depth` is evicted (removed
//! from the hash under its partition X latch); if there is none but there is
//! a dirty one, it is written by a single-page flush and the scan repeats;
//! if everything is fixed, the thread waits (`wait_free`) and eventually
//! fails with [`BufError::NoFreeFrame`].
//!
//! # Midpoint LRU
//!
//! See the `lru` module: new pages enter at the head of the old sublist
//! (`innodb_old_blocks_pct` of the list, kept within a small tolerance so a
//! miss, which evicts from the old tail and inserts at the old head, never
//! moves the boundary); an old page moves to the young head only when
//! accessed `innodb_old_blocks_time` ms or more after its first access (0:
//! on any access, including the read itself); a young page moves back to
//! the head only after more than a quarter of the young sublist's length in
//! new pages has entered it since its last move. Until an instance first
//! evicts a page (warm-up, or a working set that fits), accesses move
//! nothing, as in InnoDB: the order does not matter yet, and hits never
//! take the LRU mutex.
//! `pages_made_young` counts moves, `pages_not_made_young` counts old-page
//! accesses inside the window (the access that read the page included, as
//! in InnoDB). Time comes from an injectable [`Clock`].
//!
//! # Writing pages
//!
//! See the `flush` and `dblwr` modules. In short: pin, copy under a short
//! S latch (bounded wait, so a writer never deadlocks with latch holders),
//! set the copy's page LSN to `newest_modification` and stamp its checksum,
//! **WAL rule** ([`RedoGate::flush_up_to`] of the newest LSN in the
//! batch), doublewrite area write + fsync, in-place writes
//! ([`basalt_io::Io::run_batch`] for batches), fsync of the data files, then
//! each page becomes clean only if `newest_modification` still equals the
//! copied value (checked under the flush-list mutex, which is also taken by
//! `note_modified` whenever a write is in flight, so a change made after
//! the copy is never lost). No latch is held across I/O except the
//! doublewrite region/slot ownership and, during a read, the page's own
//! latch.
//!
//! # Latch order
//!
//! ```text
//!   page latches (mtr order)
//!     -> instance LRU mutex
//!       -> page-hash partition latch
//!   leaves, nothing acquired while held:
//!     flush-list mutex, free-list mutex, LRU-policy atomics
//!   held across I/O, taken with no instance mutex or hash latch held:
//!     doublewrite batch region, doublewrite single-page slot
//! ```
//!
//! No thread blocks on a page latch while holding an instance mutex or a
//! hash latch. The flusher and single-page flushes take page latches with a
//! bounded wait only. A page latch may be held while taking the LRU or
//! flush-list mutex (access bookkeeping, `note_modified`).
//!
//! # Threads
//!
//! * **User threads** read pages on misses, evict, and write dirty LRU
//!   victims one page per write (single-page flushes; up to eight at once,
//!   one per doublewrite slot).
//! * **`buf_flusher`** (started by [`BufferPool::start_flusher`]): wakes
//!   every second or on [`BufferPool::wake_flusher`], asks a
//!   [`FlushPolicy`] how much to write, writes oldest first, then advances
//!   the checkpoint to `min(oldest dirty, closed LSN)` through the gate. It
//!   signals nobody directly: the log notices the new checkpoint.
//!
//! # Checkpoints
//!
//! [`BufferPool::checkpoint`] reads the log's closed LSN *before* scanning
//! the flush lists (an mtr closed by then has inserted its pages; an mtr not
//! yet closed starts at or after the closed LSN), so the checkpoint never
//! passes a page that is dirty or about to be.
//!
//! # Tests
//!
//! Unit tests sit beside each module (LRU against a model list, flush-list
//! order, page hash, counters). The integration suite in `tests/` drives
//! whole pools over the in-memory and fault-injecting I/O backends:
//! concurrency against a model, eviction with a WAL-rule checking log,
//! corruption, torn pages with and without doublewrite, scan resistance and
//! checkpoints. Seeded tests print their seed and take `BASALT_TEST_SEED`;
//! `BASALT_BUF_HEAVY=1` enlarges the concurrency test (it also has an
//! `#[ignore]`d long variant).

#![deny(unsafe_op_in_unsafe_fn)]

mod clock;
mod config;
mod dblwr;
mod error;
mod flush;
mod flush_list;
mod flusher;
mod frame;
mod gate;
mod guard;
mod instance;
mod lru;
mod page_hash;
mod pool;
mod space;
mod stats;

pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{BufConfig, MAX_INSTANCES, MIN_FRAMES_PER_INSTANCE, MIN_POOL_SIZE};
pub use dblwr::{
    ensure_area, recover_torn_pages, DBLWR_BATCH_FIRST, DBLWR_BATCH_PAGES, DBLWR_SINGLE_FIRST,
    DBLWR_SINGLE_SLOTS,
};
pub use error::{BufError, BufResult, RedoSource};
pub use flush::{FlushReport, COPY_LATCH_WAIT};
pub use flusher::{
    BasicFlushPolicy, FlushInput, FlushKind, FlushPlan, FlushPolicy, RoundReport, FLUSHER_INTERVAL,
};
pub use gate::{CheckpointState, RedoGate};
pub use guard::{LatchMode, PageGuard};
pub use pool::BufferPool;
pub use space::{extension_target, Space, Spaces, SpacesConfig, EXTENT_PAGES};
pub use stats::{BufStats, BufStatsSnapshot, Counter};
