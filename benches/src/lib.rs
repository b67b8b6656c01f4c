//! Basalt benchmarks.
//!
//! * `benches/buf_fix.rs`: buffer-pool fix/unfix of a resident page at 1, 2
//!   and 4 threads (the page-hash shared latch + fix count + page latch).
//! * `benches/mtr_commit.rs`: mini-transaction commit with
//!   `innodb_flush_log_at_trx_commit=1` on a real file, 1, 4 and 16
//!   committing threads: group commit lets one fsync serve many commits.
//! * `benches/btree.rs`: B+tree point lookup and insert.
//!
//! Multi-threaded benches use `iter_custom`: N threads each run `iters / N`
//! operations and the wall time of the slowest is reported, so criterion's
//! "time per iteration" is the inverse of total throughput.
//!
//! Run with `cargo bench -p basalt-benches`. This library holds the shared
//! fixtures.

#![forbid(unsafe_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use basalt_buf::BufConfig;
use basalt_common::{IndexId, PageId, SpaceId};
use basalt_io::{Io, IoConfig, MemIo};
use basalt_mtr::{Mtr, PageStore, Storage, StorageConfig};
use basalt_page::RedoRecord;

/// Storage over in-memory files, for benches that must not touch a disk.
pub fn mem_storage(pool_bytes: u64) -> Storage {
    let io: Arc<dyn Io> = Arc::new(MemIo::new());
    let mut cfg = StorageConfig::new("/bench");
    cfg.buf = BufConfig::for_pool_size(pool_bytes);
    cfg.log.file_size = 64 << 20;
    Storage::create(io, cfg).expect("create in-memory storage")
}

/// Storage over real files in `dir` (the runtime-selected backend).
pub fn disk_storage(dir: &std::path::Path, pool_bytes: u64) -> Storage {
    let io = basalt_io::open_io(&IoConfig::default());
    let mut cfg = StorageConfig::new(dir);
    cfg.buf = BufConfig::for_pool_size(pool_bytes);
    cfg.log.file_size = 256 << 20;
    Storage::create(io, cfg).expect("create on-disk storage")
}

/// Runs `per_thread(thread_index, iterations)` on `threads` threads at once,
/// splitting `iters` among them, and returns the wall time of the whole run.
pub fn run_threads<F>(threads: usize, iters: u64, per_thread: F) -> Duration
where
    F: Fn(usize, u64) + Sync,
{
    let share = iters.div_ceil(threads as u64).max(1);
    let barrier = std::sync::Barrier::new(threads + 1);
    std::thread::scope(|s| {
        for t in 0..threads {
            let barrier = &barrier;
            let per_thread = &per_thread;
            s.spawn(move || {
                barrier.wait();
                per_thread(t, share);
            });
        }
        barrier.wait();
        let start = Instant::now();
        // Scope end joins every thread.
        start
    })
    .elapsed()
}

/// Allocates `n` empty leaf pages in the system tablespace, each in its own
/// mini-transaction committed durably, and returns their ids.
pub fn index_pages(store: &PageStore, n: usize) -> Vec<PageId> {
    (0..n)
        .map(|_| {
            let mut mtr = Mtr::start(store).unwrap();
            let r = mtr.alloc_page(SpaceId::SYSTEM).unwrap();
            mtr.apply(
                r,
                &RedoRecord::InitIndex {
                    level: 0,
                    index_id: IndexId(1),
                    flags: 0,
                },
            )
            .unwrap();
            let page = mtr.page_id(r);
            mtr.commit_durable().unwrap();
            page
        })
        .collect()
}
