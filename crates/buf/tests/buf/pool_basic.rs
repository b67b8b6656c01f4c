//! Page access basics: hits and misses, create, try_get, bounds, counters.

use std::sync::{Arc, Barrier};

use basalt_buf::{BufError, LatchMode};
use basalt_common::{Lsn, PageId, SpaceId};
use basalt_io::Io;
use basalt_page::header;

use crate::common::*;

#[test]
fn miss_reads_once_then_hits() {
    let env = Env::new(100);
    create_formatted_space(&env.spaces, SpaceId(1), 64);
    let pool = env.pool(small_config(320, 1));
    let id = PageId::new(SpaceId(1), 7);
    let before = pool.stats();
    {
        let g = pool.get(id, LatchMode::Shared).expect("get");
        assert_eq!(g.page_id(), id);
        assert_eq!(header::page_id(g.data()), id);
        assert!(!g.is_dirty());
    }
    for _ in 0..5 {
        let g = pool.get(id, LatchMode::Shared).expect("hit");
        assert_eq!(header::page_id(g.data()), id);
    }
    let s = pool.stats();
    assert_eq!(s.read_requests - before.read_requests, 6);
    assert_eq!(s.reads - before.reads, 1);
    assert_eq!(s.lru_len, 1);
    assert_eq!(s.free_pages, s.pool_pages - 1);
    assert!((s.hit_rate_since(&before) - 5.0 / 6.0).abs() < 1e-9);
}

#[test]
fn concurrent_getters_of_a_missing_page_share_one_read() {
    let env = Env::new(100);
    create_formatted_space(&env.spaces, SpaceId(1), 64);
    let pool = env.pool(small_config(320, 1));
    let id = PageId::new(SpaceId(1), 3);
    let reads_before = env.mem.reads();
    let barrier = Arc::new(Barrier::new(8));
    std::thread::scope(|s| {
        for t in 0..8 {
            let pool = &pool;
            let barrier = Arc::clone(&barrier);
            s.spawn(move || {
                barrier.wait();
                let mode = if t % 2 == 0 {
                    LatchMode::Shared
                } else {
                    LatchMode::Exclusive
                };
                let g = pool.get(id, mode).expect("get");
                assert_eq!(header::page_id(g.data()), id);
            });
        }
    });
    assert_eq!(env.mem.reads() - reads_before, 1, "exactly one disk read");
    assert_eq!(pool.stats().reads, 1);
}

#[test]
fn create_hands_out_a_zeroed_exclusive_frame_without_reading() {
    let env = Env::new(100);
    env.spaces
        .create(SpaceId(2), &space_path(SpaceId(2)), 0, 64)
        .expect("space");
    let pool = env.pool(small_config(320, 1));
    let id = PageId::new(SpaceId(2), 10);
    let reads_before = env.mem.reads();
    {
        let mut g = pool.create(id).expect("create");
        assert_eq!(g.mode(), LatchMode::Exclusive);
        assert!(g.data().iter().all(|&b| b == 0));
        header::init_header(g.data_mut(), id, header::PageType::Index);
        header::write_u64(g.data_mut(), COUNTER_OFF, 99);
        let (start, end) = env.log.reserve(40);
        header::set_page_lsn(g.data_mut(), end);
        pool.note_modified(&g, start, end);
        assert!(g.is_dirty());
        assert_eq!(g.oldest_modification(), start);
        assert_eq!(g.newest_modification(), end);
    }
    assert_eq!(env.mem.reads(), reads_before, "create must not read");
    let g = pool.get(id, LatchMode::Shared).expect("hit");
    assert_eq!(counter_of(g.data()), 99);
    drop(g);
    // Creating a cached page again reuses (and zeroes) its frame.
    let g = pool.create(id).expect("re-create");
    assert!(g.data().iter().all(|&b| b == 0));
    drop(g);
    let s = pool.stats();
    assert_eq!(s.pages_created, 2);
    assert_eq!(s.lru_len, 1);
    assert_eq!(s.dirty_pages, 1);
}

#[test]
fn try_get_does_not_wait_for_a_busy_latch() {
    let env = Env::new(100);
    create_formatted_space(&env.spaces, SpaceId(1), 64);
    let pool = env.pool(small_config(320, 1));
    let id = PageId::new(SpaceId(1), 1);
    let x = pool.get(id, LatchMode::Exclusive).expect("x");
    std::thread::scope(|s| {
        s.spawn(|| {
            assert!(pool.try_get(id, LatchMode::Shared).expect("try").is_none());
            assert!(pool
                .try_get(id, LatchMode::Exclusive)
                .expect("try")
                .is_none());
            // Another page is free to take.
            let other = pool
                .try_get(PageId::new(SpaceId(1), 2), LatchMode::Exclusive)
                .expect("try");
            assert!(other.is_some());
        });
    });
    drop(x);
    let s1 = pool
        .try_get(id, LatchMode::Shared)
        .expect("try")
        .expect("free now");
    let s2 = pool
        .try_get(id, LatchMode::Shared)
        .expect("try")
        .expect("S is shared");
    assert_eq!(s2.fix_count(), 2);
    assert!(pool
        .try_get(id, LatchMode::Exclusive)
        .expect("try")
        .is_none());
    drop((s1, s2));
}

#[test]
fn downgrade_lets_readers_in() {
    let env = Env::new(100);
    create_formatted_space(&env.spaces, SpaceId(1), 64);
    let pool = env.pool(small_config(320, 1));
    let id = PageId::new(SpaceId(1), 4);
    let mut g = pool.get(id, LatchMode::Exclusive).expect("x");
    std::thread::scope(|s| {
        s.spawn(|| assert!(pool.try_get(id, LatchMode::Shared).expect("try").is_none()));
    });
    g.downgrade();
    assert_eq!(g.mode(), LatchMode::Shared);
    std::thread::scope(|s| {
        s.spawn(|| assert!(pool.try_get(id, LatchMode::Shared).expect("try").is_some()));
    });
}

#[test]
fn bad_addresses_are_errors() {
    let env = Env::new(100);
    create_formatted_space(&env.spaces, SpaceId(1), 64);
    let pool = env.pool(small_config(320, 1));
    match pool.get(PageId::new(SpaceId(1), 64), LatchMode::Shared) {
        Err(BufError::PageOutOfRange { page_id, size }) => {
            assert_eq!(page_id, PageId::new(SpaceId(1), 64));
            assert_eq!(size, 64);
        }
        other => panic!("expected PageOutOfRange, got {other:?}"),
    }
    assert!(matches!(
        pool.get(PageId::new(SpaceId(9), 0), LatchMode::Shared),
        Err(BufError::NoSuchSpace(SpaceId(9)))
    ));
    assert!(matches!(
        pool.create(PageId::new(SpaceId::SYSTEM, 100)),
        Err(BufError::ReservedPage(_))
    ));
    // Nothing leaked: every frame is still free.
    let s = pool.stats();
    assert_eq!(s.free_pages, s.pool_pages);
    // After extending the space the page is addressable.
    env.spaces.extend(SpaceId(1), 65).expect("extend");
    let g = pool
        .create(PageId::new(SpaceId(1), 64))
        .expect("create after extend");
    drop(g);
}

#[test]
fn zeroed_pages_are_refused_unless_allowed() {
    let env = Env::new(100);
    env.spaces
        .create(SpaceId(3), &space_path(SpaceId(3)), 0, 8)
        .expect("space");
    let pool = env.pool(small_config(320, 1));
    let id = PageId::new(SpaceId(3), 2);
    match pool.get(id, LatchMode::Shared) {
        Err(BufError::ZeroedPage { page_id }) => assert_eq!(page_id, id),
        other => panic!("expected ZeroedPage, got {other:?}"),
    }
    assert!(!pool.contains(id));
    let g = pool
        .get_allow_zeroed(id, LatchMode::Exclusive)
        .expect("allowed");
    assert!(g.data().iter().all(|&b| b == 0));
}

#[test]
fn old_blocks_settings_are_dynamic_and_checked() {
    let env = Env::new(100);
    let pool = env.pool(small_config(320, 1));
    assert_eq!(pool.old_blocks_pct(), 37);
    assert_eq!(pool.old_blocks_time(), 1000);
    pool.set_old_blocks_pct(50).expect("valid");
    pool.set_old_blocks_time(0);
    assert_eq!(pool.old_blocks_pct(), 50);
    assert_eq!(pool.old_blocks_time(), 0);
    assert!(matches!(
        pool.set_old_blocks_pct(96),
        Err(BufError::InvalidConfig {
            name: "innodb_old_blocks_pct",
            ..
        })
    ));
    assert_eq!(pool.old_blocks_pct(), 50);
}

#[test]
fn discard_space_forgets_pages_without_writing() {
    let env = Env::new(100);
    create_formatted_space(&env.spaces, SpaceId(1), 64);
    create_formatted_space(&env.spaces, SpaceId(2), 64);
    let pool = env.pool(small_config(320, 2));
    for p in 0..20 {
        modify(&pool, &env.log, PageId::new(SpaceId(1), p), 5, 10).expect("modify");
        modify(&pool, &env.log, PageId::new(SpaceId(2), p), 5, 10).expect("modify");
    }
    assert_eq!(pool.dirty_pages(), 40);
    let writes = env.mem.writes();
    let held = pool
        .get(PageId::new(SpaceId(1), 0), LatchMode::Shared)
        .expect("held");
    std::thread::scope(|s| {
        // Waits for the fixed page, then succeeds.
        let discard = s.spawn(|| pool.discard_space(SpaceId(1)));
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert!(
            !discard.is_finished(),
            "discard must wait for the fixed page"
        );
        drop(held);
        discard.join().expect("discard thread").expect("discard");
    });
    assert_eq!(env.mem.writes(), writes, "discarding writes nothing");
    assert_eq!(pool.dirty_pages(), 20);
    assert!(!pool.contains(PageId::new(SpaceId(1), 3)));
    assert!(pool.contains(PageId::new(SpaceId(2), 3)));
    assert_eq!(pool.stats().lru_len, 20);
    assert!(pool.oldest_modification() > Some(Lsn(100)));
    env.spaces.remove(SpaceId(1)).expect("remove");
    assert!(!env.mem.exists(&space_path(SpaceId(1))));
}
