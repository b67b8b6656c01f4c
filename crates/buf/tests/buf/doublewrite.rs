//! Torn pages: the doublewrite area repairs them; without it they stay torn.

use std::sync::Arc;

use basalt_buf::{recover_torn_pages, BufConfig, BufferPool, LatchMode, Spaces, SpacesConfig};
use basalt_common::{Lsn, PageId, SpaceId, PAGE_SIZE};
use basalt_io::{FaultPlan, FaultyIo, MemIo, TornWriteReport};
use basalt_page::header::{self, PageState};

use crate::common::*;

const DATA: SpaceId = SpaceId(1);

struct Rig {
    mem: Arc<MemIo>,
    plan: Arc<FaultPlan>,
    log: Arc<TestLog>,
    pool: Arc<BufferPool>,
}

fn rig(doublewrite: bool) -> Rig {
    let mem = Arc::new(MemIo::new());
    let plan = FaultPlan::new();
    let io = Arc::new(FaultyIo::new(mem.clone(), plan.clone()));
    let spaces = Arc::new(Spaces::new(io, SpacesConfig::default()));
    create_system_space(&spaces);
    create_formatted_space(&spaces, DATA, 64);
    let log = TestLog::new(1_000);
    let cfg = BufConfig {
        doublewrite,
        ..small_config(320, 1)
    };
    let pool = BufferPool::new(cfg, spaces, log.clone()).expect("pool");
    log.attach(&pool);
    Rig {
        mem,
        plan,
        log,
        pool,
    }
}

/// Writes version 1 of pages 3..6 durably, then changes them to version 2.
/// Returns the LSNs of version 2.
fn two_versions(r: &Rig) -> Vec<Lsn> {
    for p in 3..7 {
        let (_, end) = modify(&r.pool, &r.log, PageId::new(DATA, p), 1, 100).expect("v1");
        r.log.close(end);
    }
    r.pool.flush_all().expect("flush v1");
    let mut lsns = Vec::new();
    for p in 3..7 {
        let (_, end) = modify(&r.pool, &r.log, PageId::new(DATA, p), 2, 100).expect("v2");
        r.log.close(end);
        lsns.push(end);
    }
    lsns
}

fn durable_page(mem: &MemIo, id: PageId) -> Vec<u8> {
    let bytes = mem.durable_bytes(&space_path(id.space)).expect("file");
    bytes[id.file_offset() as usize..id.file_offset() as usize + PAGE_SIZE].to_vec()
}

fn spaces_after_restart(mem: &Arc<MemIo>) -> Spaces {
    let spaces = Spaces::new(mem.clone(), SpacesConfig::default());
    spaces
        .open(SpaceId::SYSTEM, &space_path(SpaceId::SYSTEM), 0)
        .expect("ibdata1");
    spaces.open(DATA, &space_path(DATA), 0).expect("t1");
    spaces
}

#[test]
fn torn_in_place_write_is_repaired_from_the_doublewrite_area() {
    let r = rig(true);
    let lsns = two_versions(&r);
    let torn = PageId::new(DATA, 4);
    // The second in-place write of the batch (page 4) keeps only its first
    // 4 KiB, and the disk claims success.
    r.plan
        .tear_write_to("t1.ibd", 2, 4096, TornWriteReport::Success);
    r.pool.flush_all().expect("flush v2");
    assert_eq!(r.plan.faults_fired(), 1);
    drop(r.pool);
    r.mem.crash();

    let on_disk = durable_page(&r.mem, torn);
    assert!(
        header::verify(&on_disk, torn).is_err(),
        "the write must really be torn"
    );

    let spaces = spaces_after_restart(&r.mem);
    let repaired = recover_torn_pages(&spaces).expect("recover");
    assert_eq!(repaired, vec![torn]);
    let fixed = durable_page(&r.mem, torn);
    assert_eq!(header::verify(&fixed, torn), Ok(PageState::Valid));
    assert_eq!(counter_of(&fixed), 2);
    assert_eq!(header::page_lsn(&fixed), lsns[1]);
    // A second pass finds nothing to do (recovery is idempotent).
    assert!(recover_torn_pages(&spaces)
        .expect("recover again")
        .is_empty());
    // The repaired pages read fine through a new pool.
    let pool = BufferPool::new(
        small_config(320, 1),
        Arc::new(spaces),
        TestLog::new(lsns[3].0),
    )
    .expect("pool");
    for p in 3..7 {
        let g = pool
            .get(PageId::new(DATA, p), LatchMode::Shared)
            .expect("read");
        assert_eq!(counter_of(g.data()), 2);
    }
    r.log.assert_clean();
}

#[test]
fn torn_page_stays_torn_without_doublewrite() {
    let r = rig(false);
    two_versions(&r);
    let torn = PageId::new(DATA, 4);
    r.plan
        .tear_write_to("t1.ibd", 2, 4096, TornWriteReport::Success);
    r.pool.flush_all().expect("flush v2");
    assert_eq!(r.plan.faults_fired(), 1);
    assert_eq!(r.pool.stats().dblwr_pages, 0);
    drop(r.pool);
    r.mem.crash();

    let spaces = spaces_after_restart(&r.mem);
    let repaired = recover_torn_pages(&spaces).expect("recover");
    assert!(repaired.is_empty(), "nothing to repair from: {repaired:?}");
    let on_disk = durable_page(&r.mem, torn);
    assert!(
        header::verify(&on_disk, torn).is_err(),
        "without doublewrite the page stays torn"
    );
    let pool = BufferPool::new(
        BufConfig {
            doublewrite: false,
            ..small_config(320, 1)
        },
        Arc::new(spaces),
        TestLog::new(10_000),
    )
    .expect("pool");
    let err = pool
        .get(torn, LatchMode::Shared)
        .expect_err("torn page must not be served");
    assert_eq!(corrupt_page(&err), Some(torn));
}

#[test]
fn power_cut_during_in_place_write_restores_the_newer_copy() {
    let r = rig(true);
    let lsns = two_versions(&r);
    // Power fails on the first in-place write of the v2 batch (after the
    // doublewrite area was written and fsynced); the torn prefix never
    // becomes durable, so the page on disk is the intact v1.
    // Writes of a doublewrite batch: one to ibdata1 (the area), then the
    // in-place writes; the power fails at the second, tearing it.
    r.plan.crash_at_write_torn(2, 4096);
    let err = r
        .pool
        .flush_all()
        .expect_err("flush must fail at the crash");
    assert!(matches!(err, basalt_buf::BufError::Io(_)), "{err:?}");
    assert!(r.pool.dirty_pages() > 0, "failed writes leave pages dirty");
    drop(r.pool);
    r.mem.crash();

    let first = PageId::new(DATA, 3);
    let before = durable_page(&r.mem, first);
    assert_eq!(header::verify(&before, first), Ok(PageState::Valid));
    assert_eq!(counter_of(&before), 1, "v1 survived on disk");

    let spaces = spaces_after_restart(&r.mem);
    let repaired = recover_torn_pages(&spaces).expect("recover");
    // Every page of the batch had a durable copy newer than its disk page.
    assert_eq!(
        repaired,
        (3..7).map(|p| PageId::new(DATA, p)).collect::<Vec<_>>()
    );
    for (k, p) in (3..7).enumerate() {
        let page = durable_page(&r.mem, PageId::new(DATA, p));
        assert_eq!(counter_of(&page), 2);
        assert_eq!(header::page_lsn(&page), lsns[k]);
    }
    // The copies were only written after the log was durable past them.
    assert!(r.log.durable() >= lsns[3]);
    r.log.assert_clean();
}
