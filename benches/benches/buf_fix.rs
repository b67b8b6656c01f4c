//! Buffer-pool fix/unfix of resident pages: page-hash lookup (shared
//! latch), buffer-fix, shared page latch, and the release of all three.

use std::hint::black_box;

use basalt_benches::{mem_storage, run_threads};
use basalt_buf::LatchMode;
use basalt_common::{IndexId, PageId, SpaceId};
use basalt_mtr::Mtr;
use basalt_page::RedoRecord;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn bench_fix(c: &mut Criterion) {
    let storage = mem_storage(64 << 20);
    let store = storage.store();
    let mut pages = Vec::new();
    for _ in 0..4 {
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
        pages.push(mtr.page_id(r));
        mtr.commit().unwrap();
    }
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
