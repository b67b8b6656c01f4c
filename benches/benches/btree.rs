//! B+tree point lookup and insert on a sysbench-shaped clustered index
//! (8-byte key, 4-byte k, 120-byte c, 60-byte pad) resident in the pool.

use std::hint::black_box;
use std::sync::Arc;

use basalt_benches::{mem_storage, run_threads};
use basalt_btree::{BTree, IndexKind};
use basalt_common::{IndexId, RollPtr, SpaceId, TrxId};
use basalt_mtr::Mtr;
use basalt_page::rec::{FieldDef, RecordLayout, SysCols};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const ROWS: u64 = 100_000;

fn layout() -> Arc<RecordLayout> {
    Arc::new(
        RecordLayout::new(
            vec![
                FieldDef::fixed(8),
                FieldDef::fixed(4),
                FieldDef::fixed(120),
                FieldDef::fixed(60),
            ],
            1,
            true,
        )
        .expect("valid layout"),
    )
}

fn sys() -> SysCols {
    SysCols {
        trx_id: TrxId(1),
        roll_ptr: RollPtr(1),
    }
}

fn row_fields(id: u64) -> ([u8; 8], [u8; 4], [u8; 120], [u8; 60]) {
    let mut c = [b'c'; 120];
    c[..8].copy_from_slice(&id.to_be_bytes());
    (id.to_be_bytes(), (id as u32).to_be_bytes(), c, [b'p'; 60])
}

fn insert_row(store: &basalt_mtr::PageStore, tree: &BTree, id: u64) {
    let (k, kk, c, p) = row_fields(id);
    let mut mtr = Mtr::start(store).unwrap();
    tree.insert(&mut mtr, &[Some(&k), Some(&kk), Some(&c), Some(&p)], sys())
        .unwrap();
    mtr.commit().unwrap();
}

/// Spreads keys over the key space so random inserts do not collide with
/// the preloaded (even) keys.
fn scramble(x: u64) -> u64 {
    x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 1 | 1
}

fn bench_btree(c: &mut Criterion) {
    let storage = mem_storage(512 << 20);
    let store = storage.store();
    let space = SpaceId(1);
    storage
        .create_tablespace(space, &storage.config().datadir.join("bench.ibd"), 64)
        .unwrap();
    let tree = {
        let mut mtr = Mtr::start(store).unwrap();
        let t = BTree::create(&mut mtr, space, IndexId(1), layout(), IndexKind::Clustered).unwrap();
        mtr.commit().unwrap();
        t
    };
    for id in 0..ROWS {
        insert_row(store, &tree, id * 2);
    }

    let mut group = c.benchmark_group("btree");
    group.throughput(Throughput::Elements(1));
    for threads in [1usize, 4] {
        group.bench_with_input(
            BenchmarkId::new("point_lookup", threads),
            &threads,
            |b, &t| {
                b.iter_custom(|iters| {
                    run_threads(t, iters, |i, n| {
                        let mut x = i as u64 * 7919 + 1;
                        for _ in 0..n {
                            x = x
                                .wrapping_mul(6364136223846793005)
                                .wrapping_add(1442695040888963407);
                            let key = ((x >> 33) % ROWS * 2).to_be_bytes();
                            let hit = tree
                                .get_with(store, &[Some(&key)], |rec, _| rec.field(3).map(|f| f[0]))
                                .unwrap();
                            black_box(hit);
                        }
                    })
                })
            },
        );
    }
    let next = std::sync::atomic::AtomicU64::new(0);
    group.bench_function("insert_random", |b| {
        b.iter(|| {
            let x = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            insert_row(store, &tree, scramble(x));
        })
    });
    let seq = std::sync::atomic::AtomicU64::new(ROWS * 4);
    group.bench_function("insert_sequential", |b| {
        b.iter(|| {
            let x = seq.fetch_add(2, std::sync::atomic::Ordering::Relaxed);
            insert_row(store, &tree, x);
        })
    });
    group.finish();
}

criterion_group!(benches, bench_btree);
criterion_main!(benches);
