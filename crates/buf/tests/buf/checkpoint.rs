//! Flush-list order, oldest-first flushing and checkpoints.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use basalt_buf::{BasicFlushPolicy, FlushKind, LatchMode};
use basalt_common::{Lsn, PageId, SpaceId};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::common::*;

const PAGES: u32 = 200;

/// Model of the dirty pages: page -> (oldest, newest).
type DirtyModel = BTreeMap<PageId, (Lsn, Lsn)>;

fn model_oldest(m: &DirtyModel) -> Option<Lsn> {
    m.values().map(|&(o, _)| o).min()
}

#[test]
fn oldest_first_flushing_advances_oldest_modification_monotonically() {
    let seed = seed("oldest_first_flushing_advances_oldest_modification_monotonically");
    let mut rng = SmallRng::seed_from_u64(seed);
    let env = Env::new(1_000);
    create_formatted_space(&env.spaces, SpaceId(1), PAGES);
    // Everything fits: no eviction, so only the batches below write.
    let pool = env.pool(small_config(320, 2));
    let mut model = DirtyModel::new();
    for _ in 0..600 {
        let id = PageId::new(SpaceId(1), rng.gen_range(0..PAGES));
        let (start, end) = modify(&pool, &env.log, id, 7, rng.gen_range(1..300)).expect("modify");
        env.log.close(end);
        model
            .entry(id)
            .and_modify(|e| e.1 = end)
            .or_insert((start, end));
        assert_eq!(
            pool.oldest_modification(),
            model_oldest(&model),
            "seed {seed}"
        );
    }
    assert_eq!(pool.dirty_pages(), model.len());
    let mut last = Lsn::ZERO;
    while !model.is_empty() {
        let n = rng.gen_range(1..12);
        // The n pages with the smallest oldest modification must go.
        let mut by_age: Vec<(Lsn, PageId)> = model.iter().map(|(&id, &(o, _))| (o, id)).collect();
        by_age.sort();
        let expected: Vec<PageId> = by_age.iter().take(n).map(|&(_, id)| id).collect();
        let report = pool.flush_list_batch(n, Lsn::MAX).expect("batch");
        assert_eq!(report.written, expected.len(), "seed {seed}");
        assert_eq!(report.cleaned, expected.len(), "seed {seed}");
        for id in &expected {
            model.remove(id);
        }
        // The pool agrees page by page.
        for (&id, &(oldest, newest)) in &model {
            let g = pool.get(id, LatchMode::Shared).expect("get");
            assert!(g.is_dirty(), "{id} should still be dirty (seed {seed})");
            assert_eq!(
                (g.oldest_modification(), g.newest_modification()),
                (oldest, newest)
            );
        }
        for id in &expected {
            let g = pool.get(*id, LatchMode::Shared).expect("get");
            assert!(!g.is_dirty(), "{id} should be clean (seed {seed})");
        }
        let oldest = pool.oldest_modification();
        assert_eq!(oldest, model_oldest(&model), "seed {seed}");
        let oldest = oldest.unwrap_or(Lsn::MAX);
        assert!(
            oldest >= last,
            "oldest_modification went back: {oldest} < {last} (seed {seed})"
        );
        last = oldest;
    }
    assert_eq!(pool.dirty_pages(), 0);
    env.log.assert_clean();
}

#[test]
fn lsn_limit_bounds_a_batch() {
    let env = Env::new(1_000);
    create_formatted_space(&env.spaces, SpaceId(1), PAGES);
    let pool = env.pool(small_config(320, 1));
    let mut ends = Vec::new();
    for p in 0..50 {
        let (_, end) = modify(&pool, &env.log, PageId::new(SpaceId(1), p), 1, 100).expect("modify");
        ends.push(end);
    }
    // Pages 0..20 started below 1000 + 20 * 100.
    let r = pool
        .flush_list_batch(usize::MAX, Lsn(1_000 + 20 * 100))
        .expect("batch");
    assert_eq!(r.written, 20);
    assert_eq!(pool.oldest_modification(), Some(Lsn(1_000 + 20 * 100)));
    assert_eq!(pool.dirty_pages(), 30);
    // The WAL rule was applied for the newest page of the batch.
    assert!(env.log.max_flush_request() >= ends[19]);
    assert!(env.log.max_flush_request() < ends[20]);
}

#[test]
fn page_modified_during_its_write_stays_dirty() {
    let env = Env::new(1_000);
    create_formatted_space(&env.spaces, SpaceId(1), PAGES);
    let pool = env.pool(small_config(320, 1));
    let id = PageId::new(SpaceId(1), 5);
    let (s1, e1) = modify(&pool, &env.log, id, 1, 100).expect("modify");
    // Between the copy and the write, another change lands.
    let second = Arc::new(parking_lot::Mutex::new(None));
    {
        let (pool, log, second) = (Arc::clone(&pool), Arc::clone(&env.log), Arc::clone(&second));
        env.log.set_flush_hook(move || {
            *second.lock() = Some(modify(&pool, &log, id, 2, 100).expect("modify during write"));
        });
    }
    let r = pool.flush_list_batch(usize::MAX, Lsn::MAX).expect("flush");
    assert_eq!((r.written, r.cleaned), (1, 0));
    let (_, e2) = second.lock().expect("hook ran");
    {
        let g = pool.get(id, LatchMode::Shared).expect("get");
        assert!(
            g.is_dirty(),
            "a change made after the copy must keep the page dirty"
        );
        assert_eq!(g.oldest_modification(), s1, "oldest stays conservative");
        assert_eq!(g.newest_modification(), e2);
        assert_eq!(counter_of(g.data()), 2);
    }
    let mut disk = vec![0u8; basalt_common::PAGE_SIZE];
    let space = env.spaces.get(SpaceId(1)).expect("space");
    space.read_page(id.page_no, &mut disk).expect("read");
    assert_eq!(
        (counter_of(&disk), basalt_page::header::page_lsn(&disk)),
        (1, e1)
    );
    assert_eq!(pool.stats().flush_redirtied, 1);
    // The next flush writes the newer version and cleans the page.
    let r = pool.flush_list_batch(usize::MAX, Lsn::MAX).expect("flush");
    assert_eq!((r.written, r.cleaned), (1, 1));
    assert_eq!(pool.dirty_pages(), 0);
    space.read_page(id.page_no, &mut disk).expect("read");
    assert_eq!(
        (counter_of(&disk), basalt_page::header::page_lsn(&disk)),
        (2, e2)
    );
    env.log.assert_clean();
}

#[test]
fn checkpoint_never_passes_closed_lsn_or_oldest_dirty_page() {
    let env = Env::new(1_000);
    create_formatted_space(&env.spaces, SpaceId(1), PAGES);
    let pool = env.pool(small_config(320, 1));
    let (s0, e0) = modify(&pool, &env.log, PageId::new(SpaceId(1), 0), 1, 100).expect("modify");
    env.log.close(e0);
    let (s1, e1) = modify(&pool, &env.log, PageId::new(SpaceId(1), 1), 1, 100).expect("modify");
    env.log.close(e1);
    // Dirty pages hold the checkpoint at the oldest one (still 1000: no move).
    assert_eq!(s0, Lsn(1_000));
    assert_eq!(pool.checkpoint().expect("checkpoint"), None);
    pool.flush_list_batch(1, Lsn::MAX).expect("flush oldest");
    assert_eq!(pool.checkpoint().expect("checkpoint"), Some(s1));
    // A modification that is not closed yet caps the checkpoint at the
    // closed LSN even once every page is clean.
    let (_, e2) = modify(&pool, &env.log, PageId::new(SpaceId(1), 2), 1, 100).expect("modify");
    pool.flush_all().expect("flush all");
    assert_eq!(env.log.checkpoint_lsn(), e1, "capped by the closed LSN");
    env.log.close(e2);
    assert_eq!(pool.checkpoint().expect("checkpoint"), Some(e2));
    assert_eq!(env.log.checkpoints(), vec![s1, e1, e2]);
    env.log.assert_clean();
}

#[test]
fn flusher_thread_keeps_checkpoint_age_bounded_and_checkpoints_stay_safe() {
    let seed = seed("flusher_thread_keeps_checkpoint_age_bounded_and_checkpoints_stay_safe");
    let mut rng = SmallRng::seed_from_u64(seed);
    let env = Env::new(1_000);
    create_formatted_space(&env.spaces, SpaceId(1), PAGES);
    let pool = env.pool(small_config(320, 1));
    // Async at 20 KB of redo, sync at 40 KB.
    env.log.set_water_marks(20_000, 40_000);
    pool.start_flusher(Arc::new(BasicFlushPolicy))
        .expect("flusher");
    let started = Instant::now();
    let mut woken = 0;
    while started.elapsed() < Duration::from_millis(1_500) {
        let id = PageId::new(SpaceId(1), rng.gen_range(0..PAGES));
        let (_, end) = modify(&pool, &env.log, id, 1, rng.gen_range(50..500)).expect("modify");
        env.log.close(end);
        let state = basalt_buf::RedoGate::checkpoint_state(&*env.log);
        if state.age() > state.async_water_mark {
            // What the log does when space runs short.
            pool.wake_flusher();
            woken += 1;
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    assert!(
        woken > 0,
        "the workload must push the age past the async mark"
    );
    // Wait for the flusher to catch up with the last (closed) change.
    let deadline = Instant::now() + Duration::from_secs(10);
    pool.wake_flusher();
    while env.log.checkpoint_lsn() < env.log.closed() && Instant::now() < deadline {
        pool.wake_flusher();
        std::thread::sleep(Duration::from_millis(20));
    }
    pool.shutdown();
    let cps = env.log.checkpoints();
    assert!(cps.len() >= 2, "checkpoints: {cps:?}");
    assert!(
        cps.windows(2).all(|w| w[0] < w[1]),
        "checkpoints must increase: {cps:?}"
    );
    assert_eq!(
        env.log.checkpoint_lsn(),
        env.log.closed(),
        "the flusher drains to the closed LSN"
    );
    let s = pool.stats();
    assert!(s.async_flushes > 0, "{s:?}");
    assert!(s.checkpoints as usize == cps.len());
    env.log.assert_clean();
}

#[test]
fn basic_policy_plans() {
    use basalt_buf::{CheckpointState, FlushInput, FlushPolicy};
    let input =
        |current: u64, checkpoint: u64, dirty: usize, signalled: bool, secs: u64| FlushInput {
            checkpoint: CheckpointState {
                current_lsn: Lsn(current),
                checkpoint_lsn: Lsn(checkpoint),
                closed_lsn: Lsn(current),
                async_water_mark: 7_000,
                sync_water_mark: 7_500,
            },
            oldest_modification: Some(Lsn(checkpoint)),
            dirty_pages: dirty,
            pool_pages: 1000,
            io_capacity: 200,
            signalled,
            since_last_round: Duration::from_secs(secs),
        };
    let p = BasicFlushPolicy;
    assert_eq!(
        p.plan(&input(10_000, 9_000, 0, false, 1)).kind,
        FlushKind::Idle
    );
    let bg = p.plan(&input(10_000, 9_000, 50, false, 1));
    assert_eq!(
        (bg.kind, bg.max_pages, bg.lsn_limit),
        (FlushKind::Background, 200, Lsn::MAX)
    );
    assert_eq!(p.plan(&input(10_000, 9_000, 50, false, 3)).max_pages, 600);
    let sig = p.plan(&input(10_000, 9_000, 50, true, 1));
    assert_eq!((sig.kind, sig.max_pages), (FlushKind::Async, 200));
    let asy = p.plan(&input(10_000, 2_900, 50, false, 1));
    assert_eq!(
        (asy.kind, asy.max_pages, asy.lsn_limit),
        (FlushKind::Async, usize::MAX, Lsn(6_500))
    );
    let syn = p.plan(&input(10_000, 2_000, 50, false, 1));
    assert_eq!((syn.kind, syn.lsn_limit), (FlushKind::Sync, Lsn(6_500)));
}
