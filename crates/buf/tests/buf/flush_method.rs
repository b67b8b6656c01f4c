//! `innodb_flush_method=O_DIRECT_NO_FSYNC`: page flushes skip the fsync of
//! data files open with O_DIRECT, except for a file that grew.

use std::sync::Arc;

use basalt_buf::{BufConfig, BufferPool, Spaces, SpacesConfig};
use basalt_common::{PageId, SpaceId, PAGE_SIZE};
use basalt_io::{FaultPlan, FaultyIo, MemIo};

use crate::common::*;

const DATA: SpaceId = SpaceId(1);

struct Rig {
    mem: Arc<MemIo>,
    plan: Arc<FaultPlan>,
    log: Arc<TestLog>,
    spaces: Arc<Spaces>,
    pool: Arc<BufferPool>,
}

fn rig(direct: bool, skip_fsync_after_direct_writes: bool) -> Rig {
    let mem = Arc::new(MemIo::new());
    let plan = FaultPlan::new();
    let io = Arc::new(FaultyIo::new(mem.clone(), plan.clone()));
    let spaces = Arc::new(Spaces::new(
        io,
        SpacesConfig {
            direct,
            skip_fsync_after_direct_writes,
        },
    ));
    create_system_space(&spaces);
    create_formatted_space(&spaces, DATA, 64);
    let log = TestLog::new(1_000);
    let cfg = BufConfig {
        doublewrite: true,
        ..small_config(320, 1)
    };
    let pool = BufferPool::new(cfg, Arc::clone(&spaces), log.clone()).expect("pool");
    log.attach(&pool);
    Rig {
        mem,
        plan,
        log,
        spaces,
        pool,
    }
}

/// Changes pages 3..13 of DATA to `version`, flushes them all and returns
/// the syncs the flush made.
fn syncs_of_a_flush(r: &Rig, version: u64) -> u64 {
    for p in 3..13 {
        let (_, end) = modify(&r.pool, &r.log, PageId::new(DATA, p), version, 100).expect("modify");
        r.log.close(end);
    }
    let before = r.plan.syncs_seen();
    let report = r.pool.flush_all().expect("flush");
    assert!(report.written >= 10, "{report:?}");
    r.plan.syncs_seen() - before
}

#[test]
fn o_direct_no_fsync_skips_the_fsync_after_page_writes() {
    let o_direct = rig(true, false);
    let synced = syncs_of_a_flush(&o_direct, 1);
    assert!(
        synced >= 2,
        "O_DIRECT syncs the doublewrite area and the data file: {synced}"
    );

    let no_fsync = rig(true, true);
    assert_eq!(
        syncs_of_a_flush(&no_fsync, 1),
        0,
        "O_DIRECT_NO_FSYNC flushes pages without fsync"
    );
    // The writes themselves went out: the files hold version 1.
    let space = no_fsync.spaces.get(DATA).expect("space");
    let mut page = vec![0u8; PAGE_SIZE];
    for p in 3..13 {
        space.read_page(p, &mut page).expect("read");
        assert_eq!(counter_of(&page), 1, "page {p} written in place");
    }

    // Where the filesystem refused O_DIRECT the option cannot apply.
    let buffered = rig(false, true);
    assert!(syncs_of_a_flush(&buffered, 1) >= 2);
}

#[test]
fn a_grown_file_is_synced_even_with_o_direct_no_fsync() {
    let r = rig(true, true);
    let space = r.spaces.get(DATA).expect("space");
    assert!(!space.sync_page_writes().expect("sync"), "nothing grew");
    let size = r.spaces.extend(DATA, 100).expect("extend");
    assert!(size >= 100);
    let before = r.plan.syncs_seen();
    assert!(
        space.sync_page_writes().expect("sync"),
        "the new size is synced"
    );
    assert_eq!(r.plan.syncs_seen(), before + 1);
    assert_eq!(
        r.mem.durable_bytes(&space_path(DATA)).expect("file").len(),
        size as usize * PAGE_SIZE,
        "the new size is durable"
    );
    assert!(!space.sync_page_writes().expect("sync"), "once only");

    // A page flushed into the new extent: the pool syncs the grown file.
    r.spaces.extend(DATA, size + 1).expect("extend again");
    let id = PageId::new(DATA, 3);
    let (_, end) = modify(&r.pool, &r.log, id, 7, 100).expect("modify");
    r.log.close(end);
    let before = r.plan.syncs_seen();
    r.pool.flush_all().expect("flush");
    assert_eq!(
        r.plan.syncs_seen(),
        before + 1,
        "only the grown file is synced"
    );
}
