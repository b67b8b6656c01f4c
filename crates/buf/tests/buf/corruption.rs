//! A page that fails verification is reported with its id and never cached.

use std::sync::{Arc, Barrier};

use basalt_buf::{BufError, LatchMode};
use basalt_common::{Lsn, PageId, SpaceId, PAGE_SIZE};
use basalt_io::Io;
use basalt_page::header::ChecksumFailure;

use crate::common::*;

fn flip_byte(env: &Env, id: PageId, offset_in_page: usize) {
    let space = env.spaces.get(id.space).expect("space");
    let mut page = vec![0u8; PAGE_SIZE];
    space.read_page(id.page_no, &mut page).expect("read");
    page[offset_in_page] ^= 0x40;
    space
        .file()
        .write_at(&page, id.file_offset())
        .expect("write");
}

#[test]
fn corrupt_page_is_an_error_naming_the_page_and_is_not_cached() {
    let env = Env::new(100);
    create_formatted_space(&env.spaces, SpaceId(1), 64);
    let pool = env.pool(small_config(320, 1));
    let id = PageId::new(SpaceId(1), 9);
    flip_byte(&env, id, 5000);
    for attempt in 0..2 {
        match pool.get(id, LatchMode::Shared) {
            Err(e) => {
                assert_eq!(corrupt_page(&e), Some(id), "attempt {attempt}: {e}");
                assert!(matches!(
                    e,
                    BufError::Corruption {
                        reason: ChecksumFailure::Mismatch { .. },
                        ..
                    }
                ));
                assert!(e.is_corruption());
                assert_eq!(e.page_id(), Some(id));
            }
            Ok(_) => panic!("corrupt page handed out"),
        }
        assert!(!pool.contains(id), "corrupt page left in the page hash");
        let s = pool.stats();
        assert_eq!(s.free_pages, s.pool_pages, "frame not returned");
        assert_eq!(s.lru_len, 0);
    }
    assert_eq!(pool.stats().corrupt_reads, 2);
    // Neighbours are fine.
    assert!(pool
        .get(PageId::new(SpaceId(1), 8), LatchMode::Shared)
        .is_ok());
    // Repairing the page on disk makes it readable: nothing stale was kept.
    let good = page_image(id, 0, Lsn::ZERO);
    env.spaces
        .get(SpaceId(1))
        .expect("space")
        .write_pages(id.page_no, &good)
        .expect("repair");
    let g = pool.get(id, LatchMode::Shared).expect("repaired page");
    assert_eq!(counter_of(g.data()), 0);
}

#[test]
fn misdirected_page_is_corruption() {
    let env = Env::new(100);
    create_formatted_space(&env.spaces, SpaceId(1), 64);
    let pool = env.pool(small_config(320, 1));
    // Page 12's slot holds a valid image of page 13.
    let img = page_image(PageId::new(SpaceId(1), 13), 0, Lsn::ZERO);
    env.spaces
        .get(SpaceId(1))
        .expect("space")
        .write_pages(12, &img)
        .expect("write");
    let res = pool
        .get(PageId::new(SpaceId(1), 12), LatchMode::Shared)
        .map(|g| g.page_id());
    match res {
        Err(BufError::Corruption {
            page_id,
            reason: ChecksumFailure::WrongPage { found },
        }) => {
            assert_eq!(page_id, PageId::new(SpaceId(1), 12));
            assert_eq!(found, PageId::new(SpaceId(1), 13));
        }
        other => panic!("expected WrongPage corruption, got {other:?}"),
    }
}

#[test]
fn waiters_on_a_corrupt_read_all_fail_and_the_frame_is_freed() {
    let env = Env::new(100);
    create_formatted_space(&env.spaces, SpaceId(1), 64);
    let pool = env.pool(small_config(320, 1));
    let id = PageId::new(SpaceId(1), 20);
    flip_byte(&env, id, 100);
    let barrier = Arc::new(Barrier::new(6));
    std::thread::scope(|s| {
        for t in 0..6 {
            let pool = &pool;
            let barrier = Arc::clone(&barrier);
            s.spawn(move || {
                barrier.wait();
                let mode = if t % 2 == 0 {
                    LatchMode::Shared
                } else {
                    LatchMode::Exclusive
                };
                for _ in 0..20 {
                    let err = pool
                        .get(id, mode)
                        .expect_err("corrupt page must not be handed out");
                    assert_eq!(corrupt_page(&err), Some(id));
                }
            });
        }
    });
    assert!(!pool.contains(id));
    let s = pool.stats();
    assert_eq!(s.free_pages, s.pool_pages, "a failed frame leaked");
    assert_eq!(s.corrupt_reads, 120);
}

#[test]
fn read_errors_surface_as_io_errors() {
    use basalt_io::{FaultPlan, FaultyIo, MemIo};
    let mem = Arc::new(MemIo::new());
    let plan = FaultPlan::new();
    let io = Arc::new(FaultyIo::new(mem.clone(), plan.clone()));
    let spaces = Arc::new(basalt_buf::Spaces::new(
        io,
        basalt_buf::SpacesConfig::default(),
    ));
    create_system_space(&spaces);
    create_formatted_space(&spaces, SpaceId(1), 64);
    let log = TestLog::new(100);
    let pool = basalt_buf::BufferPool::new(small_config(320, 1), spaces, log).expect("pool");
    plan.fail_read_to("t1.ibd", 1);
    let id = PageId::new(SpaceId(1), 2);
    assert!(matches!(
        pool.get(id, LatchMode::Shared),
        Err(BufError::Io(_))
    ));
    assert!(!pool.contains(id));
    assert!(mem.exists(&space_path(SpaceId(1))));
    // The fault was one-shot: the next read works.
    assert!(pool.get(id, LatchMode::Shared).is_ok());
}
