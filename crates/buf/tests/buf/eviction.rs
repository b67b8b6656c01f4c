//! Eviction: dirty LRU victims are written (WAL rule first) and survive.

use std::sync::Arc;
use std::time::Duration;

use basalt_buf::{BufError, BufferPool, LatchMode};
use basalt_common::{PageId, SpaceId, PAGE_SIZE};
use basalt_page::header::{self, PageState};

use crate::common::*;

const SPACES: u32 = 4;
const PAGES_PER_SPACE: u32 = 128;

fn all_pages() -> impl Iterator<Item = PageId> {
    (1..=SPACES).flat_map(|s| (0..PAGES_PER_SPACE).map(move |p| PageId::new(SpaceId(s), p)))
}

#[test]
fn dirty_victims_are_written_and_survive_eviction() {
    let env = Env::new(1_000);
    for s in 1..=SPACES {
        create_formatted_space(&env.spaces, SpaceId(s), PAGES_PER_SPACE);
    }
    // 320 frames for 512 pages: at least 192 dirty pages must be evicted.
    let pool = env.pool(small_config(320, 1));
    let mut newest = std::collections::HashMap::new();
    for (n, id) in all_pages().enumerate() {
        let (_, end) = modify(&pool, &env.log, id, 1_000 + n as u64, 64).expect("modify");
        newest.insert(id, end);
    }
    let s = pool.stats();
    assert!(s.pages_evicted >= 192, "evicted {}", s.pages_evicted);
    assert!(
        s.single_page_flushes >= 192,
        "single-page flushes {}",
        s.single_page_flushes
    );
    assert_eq!(
        s.dblwr_pages, s.single_page_flushes,
        "every victim went through doublewrite"
    );
    assert!(env.log.flush_requests() >= s.single_page_flushes);
    assert!(env.wal_io.as_ref().expect("wal io").pages_checked() >= 2 * s.single_page_flushes);
    env.log.assert_clean();

    // Every evicted page is on disk with its newest LSN and a valid checksum.
    let mut on_disk = 0;
    let mut page = vec![0u8; PAGE_SIZE];
    for id in all_pages() {
        if pool.contains(id) {
            continue;
        }
        env.spaces
            .get(id.space)
            .expect("space")
            .read_page(id.page_no, &mut page)
            .expect("read");
        assert_eq!(header::verify(&page, id), Ok(PageState::Valid), "page {id}");
        assert_eq!(header::page_lsn(&page), newest[&id], "page {id}");
        on_disk += 1;
    }
    assert!(on_disk >= 192);

    // Reading everything back (more evictions, now of clean and dirty pages).
    for (n, id) in all_pages().enumerate() {
        let g = pool.get(id, LatchMode::Shared).expect("re-read");
        assert_eq!(counter_of(g.data()), 1_000 + n as u64, "page {id}");
        assert_eq!(g.page_lsn(), newest[&id]);
    }
    env.log.assert_clean();
}

#[test]
fn wal_checker_catches_a_log_that_lies() {
    // The same workload with a log whose flush_up_to does nothing: the
    // checking I/O layer must flag pages written ahead of the log. This
    // proves the WAL assertions above are able to fail.
    let env = Env::new(1_000);
    for s in 1..=SPACES {
        create_formatted_space(&env.spaces, SpaceId(s), PAGES_PER_SPACE);
    }
    let pool = env.pool(small_config(320, 1));
    env.log.set_broken_flush(true);
    for (n, id) in all_pages().enumerate() {
        modify(&pool, &env.log, id, n as u64, 64).expect("modify");
    }
    let v = env.log.violations();
    assert!(!v.is_empty(), "a lying log went unnoticed");
    assert!(v[0].contains("WAL rule"), "{}", v[0]);
}

#[test]
fn eviction_without_doublewrite_writes_in_place_only() {
    let env = Env::new(1_000);
    for s in 1..=SPACES {
        create_formatted_space(&env.spaces, SpaceId(s), PAGES_PER_SPACE);
    }
    let cfg = basalt_buf::BufConfig {
        doublewrite: false,
        ..small_config(320, 2)
    };
    let pool = env.pool(cfg);
    for (n, id) in all_pages().enumerate() {
        modify(&pool, &env.log, id, n as u64 * 3, 16).expect("modify");
    }
    let s = pool.stats();
    assert!(s.single_page_flushes > 0);
    assert_eq!(s.dblwr_pages, 0);
    assert_eq!(s.dblwr_writes, 0);
    for (n, id) in all_pages().enumerate() {
        let g = pool.get(id, LatchMode::Shared).expect("re-read");
        assert_eq!(counter_of(g.data()), n as u64 * 3);
    }
    env.log.assert_clean();
}

#[test]
fn all_frames_fixed_means_no_free_frame() {
    let env = Env::new(1_000);
    create_formatted_space(&env.spaces, SpaceId(1), 400);
    let pool: Arc<BufferPool> = env.pool(small_config(320, 1));
    pool.set_free_frame_timeout(Duration::from_millis(200));
    let guards: Vec<_> = (0..320)
        .map(|p| {
            pool.get(PageId::new(SpaceId(1), p), LatchMode::Shared)
                .expect("fill")
        })
        .collect();
    match pool.get(PageId::new(SpaceId(1), 399), LatchMode::Shared) {
        Err(BufError::NoFreeFrame {
            instance,
            waited_ms,
        }) => {
            assert_eq!(instance, 0);
            assert!(waited_ms >= 200);
        }
        other => panic!("expected NoFreeFrame, got {other:?}"),
    }
    assert_eq!(pool.stats().wait_free, 1);
    drop(guards);
    assert!(pool
        .get(PageId::new(SpaceId(1), 399), LatchMode::Shared)
        .is_ok());
}
