//! Many threads reading and modifying more pages than the pool holds, with
//! flushes running concurrently, checked against a model of every page's
//! counter.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use basalt_buf::{BasicFlushPolicy, BufferPool, LatchMode, Spaces};
use basalt_common::{Lsn, PageId, SpaceId};
use basalt_page::header;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::common::*;

const SPACES: u32 = 4;
const PAGES_PER_SPACE: u32 = 128;
const HOT_PAGES: u32 = 64;

fn page_of(n: u32) -> PageId {
    PageId::new(SpaceId(1 + n / PAGES_PER_SPACE), n % PAGES_PER_SPACE)
}

fn run(threads: usize, ops: usize, seed: u64) {
    let total = SPACES * PAGES_PER_SPACE;
    let env = Env::new(1_000);
    for s in 1..=SPACES {
        create_formatted_space(&env.spaces, SpaceId(s), PAGES_PER_SPACE);
    }
    // 320 frames in two instances for 512 pages.
    let pool = env.pool(small_config(320, 2));
    pool.start_flusher(Arc::new(BasicFlushPolicy))
        .expect("flusher");
    let model: Vec<AtomicU64> = (0..total).map(|_| AtomicU64::new(0)).collect();
    let stop = AtomicBool::new(false);

    std::thread::scope(|s| {
        // A batch writer flushing small flush-list batches while pages change.
        let batch_writer = s.spawn(|| {
            let mut batches = 0u64;
            while !stop.load(Ordering::SeqCst) {
                pool.flush_list_batch(40, Lsn::MAX)
                    .expect("concurrent flush batch");
                batches += 1;
                std::thread::sleep(Duration::from_millis(2));
            }
            batches
        });
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (pool, env, model) = (&pool, &env, &model);
                s.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(seed ^ (t as u64).wrapping_mul(0x9e37_79b9));
                    for op in 0..ops {
                        let n = if rng.gen_bool(0.5) {
                            rng.gen_range(0..HOT_PAGES)
                        } else {
                            rng.gen_range(0..total)
                        };
                        let id = page_of(n);
                        let expect = |got: u64, want: u64, what: &str| {
                            assert_eq!(
                                got, want,
                                "thread {t} op {op}: {what} of {id} differs from the model (seed {seed})"
                            );
                        };
                        match rng.gen_range(0..10) {
                            0..=3 => {
                                let mut g = pool.get(id, LatchMode::Exclusive).expect("get X");
                                let c = counter_of(g.data());
                                expect(c, model[n as usize].load(Ordering::SeqCst), "counter");
                                let (start, end) = env.log.reserve(rng.gen_range(16..256));
                                header::write_u64(g.data_mut(), COUNTER_OFF, c + 1);
                                header::set_page_lsn(g.data_mut(), end);
                                pool.note_modified(&g, start, end);
                                model[n as usize].store(c + 1, Ordering::SeqCst);
                            }
                            4..=8 => {
                                let g = pool.get(id, LatchMode::Shared).expect("get S");
                                expect(counter_of(g.data()), model[n as usize].load(Ordering::SeqCst), "counter");
                                assert_eq!(header::page_id(g.data()), id);
                            }
                            _ => {
                                if let Some(g) = pool.try_get(id, LatchMode::Shared).expect("try_get") {
                                    expect(counter_of(g.data()), model[n as usize].load(Ordering::SeqCst), "counter");
                                }
                            }
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().expect("worker panicked");
        }
        stop.store(true, Ordering::SeqCst);
        let batches = batch_writer.join().expect("batch writer panicked");
        assert!(batches > 0);
    });

    pool.shutdown();
    let report = pool.flush_all().expect("flush_all");
    assert_eq!(pool.dirty_pages(), 0);
    assert_eq!(pool.oldest_modification(), None);
    let s = pool.stats();
    eprintln!("concurrency stats: {s:?}, final flush {report:?}");
    assert!(s.pages_evicted > 0, "the workload must evict");
    assert!(s.reads > u64::from(total) / 2);
    env.log.assert_clean();

    for n in 0..total {
        let g = pool.get(page_of(n), LatchMode::Shared).expect("final read");
        assert_eq!(
            counter_of(g.data()),
            model[n as usize].load(Ordering::SeqCst),
            "page {n} (seed {seed})"
        );
    }
    drop(pool);

    // After a power cut (everything was flushed, so nothing may be lost) a
    // fresh pool reads every page back from disk, verifying checksums.
    env.mem.crash();
    let spaces: Arc<Spaces> = env.reopen_spaces();
    let log = TestLog::new(env.log.current().get());
    let pool2 = BufferPool::new(small_config(320, 1), spaces, log).expect("pool after restart");
    for n in 0..total {
        let g = pool2
            .get(page_of(n), LatchMode::Shared)
            .expect("read after restart");
        assert_eq!(
            counter_of(g.data()),
            model[n as usize].load(Ordering::SeqCst),
            "page {n} after restart (seed {seed})"
        );
    }
}

#[test]
fn threads_modify_and_read_more_pages_than_frames() {
    let heavy = std::env::var("BASALT_BUF_HEAVY").is_ok_and(|v| v == "1");
    let seed = seed("threads_modify_and_read_more_pages_than_frames");
    run(4, if heavy { 25_000 } else { 2_500 }, seed);
}

#[test]
#[ignore = "long: 8 threads x 50k operations"]
fn threads_modify_and_read_long() {
    let seed = seed("threads_modify_and_read_long");
    run(8, 50_000, seed);
}
