//! Scan resistance of the midpoint LRU.
//!
//! A pool of 512 pages is first filled (a server's pool is full in steady
//! state), then a hot set of half the pool is established (each hot page
//! accessed twice, more than `innodb_old_blocks_time` apart, then re-used
//! a few times), then a table scan reads five times the pool size, touching
//! each page three times in quick succession, as a scan reading rows does.
//! Finally every hot page is requested once and the hit rate measured.
//! Time comes from a manual clock.

use std::sync::Arc;

use basalt_buf::{BufConfig, BufferPool, LatchMode, ManualClock};
use basalt_common::{PageId, SpaceId};

use crate::common::*;

const POOL: u32 = 512;
const HOT: u32 = POOL / 2;
const SCAN: u32 = POOL * 5;
const WARM_SPACE: SpaceId = SpaceId(1);
const HOT_SPACE: SpaceId = SpaceId(2);
const SCAN_SPACE: SpaceId = SpaceId(3);

struct Outcome {
    hot_hit_rate: f64,
    hot_young_before_scan: usize,
    made_young: u64,
    not_made_young: u64,
}

/// `scan_revisit_ms`: clock advance between the repeated touches of one
/// scanned page.
fn run(old_blocks_pct: u32, old_blocks_time_ms: u32, scan_revisit_ms: u64) -> Outcome {
    let env = Env::new(100);
    create_formatted_space(&env.spaces, WARM_SPACE, POOL);
    create_formatted_space(&env.spaces, HOT_SPACE, HOT);
    create_formatted_space(&env.spaces, SCAN_SPACE, SCAN);
    let clock = Arc::new(ManualClock::new(1));
    let cfg = BufConfig {
        old_blocks_pct,
        old_blocks_time_ms,
        ..small_config(POOL as usize, 1)
    };
    let pool = BufferPool::with_clock(cfg, Arc::clone(&env.spaces), env.log.clone(), clock.clone())
        .expect("pool");
    let touch = |id: PageId| {
        drop(pool.get(id, LatchMode::Shared).expect("get"));
    };

    // Fill the pool.
    for p in 0..POOL {
        touch(PageId::new(WARM_SPACE, p));
        clock.advance(1);
    }
    // Establish the hot set: two accesses more than old_blocks_time apart.
    for p in 0..HOT {
        touch(PageId::new(HOT_SPACE, p));
        clock.advance(1_001);
        touch(PageId::new(HOT_SPACE, p));
    }
    // Keep using it.
    for _ in 0..3 {
        for p in 0..HOT {
            touch(PageId::new(HOT_SPACE, p));
            clock.advance(10);
        }
    }
    let hot_young_before_scan = pool
        .lru_snapshot(0)
        .into_iter()
        .filter(|&(id, old)| id.space == HOT_SPACE && !old)
        .count();
    // The scan.
    for p in 0..SCAN {
        for _ in 0..3 {
            touch(PageId::new(SCAN_SPACE, p));
            clock.advance(scan_revisit_ms);
        }
    }
    // Measure hits on the hot set.
    let before = pool.stats();
    for p in 0..HOT {
        touch(PageId::new(HOT_SPACE, p));
        clock.advance(1);
    }
    let after = pool.stats();
    assert_eq!(after.read_requests - before.read_requests, u64::from(HOT));
    Outcome {
        hot_hit_rate: after.hit_rate_since(&before),
        hot_young_before_scan,
        made_young: after.pages_made_young,
        not_made_young: after.pages_not_made_young,
    }
}

#[test]
fn hot_set_survives_a_full_scan_with_old_blocks_time() {
    let o = run(37, 1_000, 1);
    assert_eq!(
        o.hot_young_before_scan, HOT as usize,
        "every hot page is young before the scan"
    );
    assert!(
        o.hot_hit_rate >= 0.95,
        "hot-set hit rate after the scan: {:.3}",
        o.hot_hit_rate
    );
    assert!(o.made_young >= u64::from(HOT));
    // Every scan touch after the read fell inside the window.
    assert!(
        o.not_made_young >= u64::from(SCAN) * 2,
        "not made young: {}",
        o.not_made_young
    );
}

#[test]
fn without_old_blocks_time_a_scan_evicts_the_hot_set() {
    let o = run(90, 0, 1);
    assert!(
        o.hot_hit_rate < 0.5,
        "hot-set hit rate after the scan: {:.3}",
        o.hot_hit_rate
    );
}

#[test]
fn scan_pages_revisited_after_the_window_become_young_and_evict_the_hot_set() {
    // Same settings as the protected case, but each scanned page is touched
    // again 1001 ms later: the scan now qualifies as "accessed again", so
    // it is the time window, not luck, that protects the hot set above.
    let o = run(37, 1_000, 1_001);
    assert!(
        o.hot_hit_rate < 0.5,
        "hot-set hit rate after the scan: {:.3}",
        o.hot_hit_rate
    );
}
