//! Buffer-pool fix/unfix of resident pages: page-hash lookup (shared
//! latch), buffer-fix, shared page latch, and the release of all three.

use std::hint::black_box;

use basalt_benches::{index_pages, mem_storage, run_threads};
use basalt_buf::LatchMode;
use basalt_common::PageId;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn bench_fix(c: &mut Criterion) {
    let storage = mem_storage(64 << 20);
    let store = storage.store();
    let pages = index_pages(store, 4);
    let pool = &store.pool;
    let mut group = c.benchmark_group("buf_fix");
    group.throughput(Throughput::Elements(1));
    for threads in [1usize, 2, 4] {
        group.bench_with_input(BenchmarkId::new("same_page", threads), &threads, |b, &t| {
            b.iter_custom(|iters| {
                run_threads(t, iters, |_, n| {
                    for _ in 0..n {
                        let g = pool.get(pages[0], LatchMode::Shared).unwrap();
                        black_box(g.data()[100]);
                    }
                })
            })
        });
        group.bench_with_input(BenchmarkId::new("own_page", threads), &threads, |b, &t| {
            b.iter_custom(|iters| {
                run_threads(t, iters, |i, n| {
                    let id: PageId = pages[i % pages.len()];
                    for _ in 0..n {
                        let g = pool.get(id, LatchMode::Shared).unwrap();
                        black_box(g.data()[100]);
                    }
                })
            })
        });
    }
    group.finish();
    drop(storage);
}

criterion_group!(benches, bench_fix);
criterion_main!(benches);
