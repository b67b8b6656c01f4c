//! Mini-transaction commit with `innodb_flush_log_at_trx_commit=1` on a
//! real file: each commit changes one page and waits until its redo is
//! fsynced. With N committers, one fsync serves every commit that arrived
//! while the previous one ran (group commit), so throughput grows with N.
//!
//! Besides criterion's numbers, the bench prints commits/s per thread count
//! and the ratio to one committer (the target: 16 committers reach at least
//! 8x the single-committer rate).
//!
//! Environment knobs for the direct measurement:
//! * `BASALT_BENCH_ROUNDS` (default 5): interleaved rounds per thread count;
//! * `BASALT_BENCH_COMMITS` (default 200): commits per thread per round;
//! * `BASALT_BENCH_DIRECT_ONLY=1`: print the direct measurement and stop
//!   before criterion's part;
//! * `BASALT_BENCH_THREAD_COUNTS` (default `1,4,16`): the committer counts
//!   of the direct measurement (ratios are to the first);
//! * `BASALT_BENCH_DIR`: where the data directory goes (default `.`).

use std::time::{Duration, Instant};

use basalt_benches::{disk_storage, index_pages, run_threads};
use basalt_buf::LatchMode;
use basalt_mtr::{Mtr, PageStore};
use basalt_page::RedoRecord;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn commit_one(store: &PageStore, page: basalt_common::PageId, v: u32) {
    let mut mtr = Mtr::start(store).unwrap();
    let r = mtr.get(page, LatchMode::Exclusive).unwrap();
    mtr.apply(r, &RedoRecord::write_u32(200, v)).unwrap();
    let range = mtr.commit().unwrap().expect("a change was made");
    store.log.commit_wait(range.end).unwrap();
}

fn bench_commit(c: &mut Criterion) {
    let dir =
        tempfile::tempdir_in(std::env::var_os("BASALT_BENCH_DIR").unwrap_or_else(|| ".".into()))
            .expect("temp dir for the bench data directory");
    let storage = disk_storage(dir.path(), 64 << 20);
    let store = storage.store();
    store.log.set_flush_log_at_trx_commit(1).unwrap();
    let pages = index_pages(store, 16);

    // A direct measurement of the group-commit ratio, printed once: rounds
    // interleave the thread counts (the disk's fsync latency drifts on a
    // shared machine) and the medians are compared.
    let rounds = env_u64("BASALT_BENCH_ROUNDS", 5).max(1);
    let per = env_u64("BASALT_BENCH_COMMITS", 200).max(1);
    let counts: Vec<usize> = std::env::var("BASALT_BENCH_THREAD_COUNTS")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .filter(|c: &Vec<usize>| !c.is_empty() && !c.contains(&0))
        .unwrap_or_else(|| vec![1, 4, 16]);
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); counts.len()];
    for _round in 0..rounds {
        for (slot, &threads) in counts.iter().enumerate() {
            let t0 = Instant::now();
            run_threads(threads, per * threads as u64, |i, n| {
                for k in 0..n {
                    commit_one(store, pages[i], k as u32);
                }
            });
            rates[slot].push((per * threads as u64) as f64 / t0.elapsed().as_secs_f64());
        }
    }
    let medians: Vec<f64> = rates.iter_mut().map(|r| median(r)).collect();
    for (threads, rate) in counts.iter().zip(&medians) {
        println!(
            "mtr_commit flush_log_at_trx_commit=1: {threads:>2} committers: median {rate:>9.0} commits/s over {rounds} interleaved rounds ({:.1}x {} committer(s))",
            rate / medians[0],
            counts[0]
        );
    }
    let stats = store.log.stats();
    println!(
        "mtr_commit log counters: {} commits, {} fsyncs, {} writes, {} bytes written, {} waiter wake-ups",
        stats.commits, stats.log_fsyncs, stats.log_writes, stats.bytes_written, stats.waiter_wakeups
    );
    if std::env::var_os("BASALT_BENCH_DIRECT_ONLY").is_some_and(|v| v == "1") {
        storage.shutdown().unwrap();
        return;
    }

    let mut group = c.benchmark_group("mtr_commit_durable");
    group.throughput(Throughput::Elements(1));
    group.measurement_time(Duration::from_secs(5));
    for threads in [1usize, 4, 16] {
        group.bench_with_input(BenchmarkId::from_parameter(threads), &threads, |b, &t| {
            b.iter_custom(|iters| {
                run_threads(t, iters, |i, n| {
                    for k in 0..n {
                        commit_one(store, pages[i], k as u32);
                    }
                })
            })
        });
    }
    group.finish();
    storage.shutdown().unwrap();
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench_commit
}
criterion_main!(benches);
