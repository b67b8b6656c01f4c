//! A torn in-place page write, with and without the doublewrite area.

use std::sync::Arc;

use basalt_common::layout::SYSTEM_TABLESPACE_FILE;
use basalt_common::{Lsn, PageId, SpaceId, PAGE_SIZE};
use basalt_io::{Io, MemIo, OpenOptions, TornWriteReport};
use basalt_mtr::{Storage, StorageConfig};
use basalt_page::header::{self, PageState};
use basalt_wal::{LogGeometry, BLOCK_SIZE};
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::model::{crash, drive, recover_and_check, Chaos, Run};
use crate::workload::{insert_on_pages, run_mtr, seed, setup_pages, Model};
use crate::{config, faulty};

struct Torn {
    mem: Arc<MemIo>,
    cfg: StorageConfig,
    ids: Vec<PageId>,
    model: Model,
    run: Run,
    torn: PageId,
}

/// Durable baseline, then acknowledged changes, then a flush whose first
/// in-place write keeps only its first 4 KiB while the disk reports
/// success, then a power cut. The checkpoint stays at the baseline, so
/// recovery must read the torn page to apply its redo.
fn torn_scenario(test: &str, doublewrite: bool) -> Torn {
    let seed = seed(test);
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut cfg = config(8);
    cfg.buf.doublewrite = doublewrite;
    let mem = Arc::new(MemIo::new());
    let (io, plan) = faulty(&mem);
    let storage = Storage::create(io, cfg.clone()).expect("create");
    storage.store().pool.shutdown();
    let ids = setup_pages(storage.store(), 20).expect("setup");
    storage.checkpoint_now().expect("baseline checkpoint");
    let model = Model::new(ids.len());
    let mut run = drive(
        &storage,
        &ids,
        &mut rng,
        &model,
        200,
        &plan,
        usize::MAX,
        Chaos::None,
    );
    let store = storage.store();
    store
        .log
        .flush_up_to(store.log.current_lsn())
        .expect("flush log");
    run.acked = run.history.len();
    // With doublewrite the batch's first write to ibdata1 is the area
    // copy (written and fsynced first); the second is the first in-place
    // page write. Without, the first is.
    let nth = if doublewrite { 2 } else { 1 };
    plan.tear_write_to(SYSTEM_TABLESPACE_FILE, nth, 4096, TornWriteReport::Success);
    let flushed = store
        .pool
        .flush_list_batch(usize::MAX, Lsn::MAX)
        .expect("flush reports success");
    assert!(flushed.written >= 2, "{flushed:?}");
    assert_eq!(plan.faults_fired(), 1, "the tear must have happened");
    crash(storage, &plan, &mem);

    let file = mem
        .durable_bytes(&cfg.system_tablespace_path())
        .expect("ibdata1");
    let torn: Vec<PageId> = ids
        .iter()
        .copied()
        .filter(|id| {
            let off = id.file_offset() as usize;
            header::verify(&file[off..off + PAGE_SIZE], *id) != Ok(PageState::Valid)
        })
        .collect();
    assert_eq!(torn.len(), 1, "exactly one page is torn on disk: {torn:?}");
    assert_eq!(torn[0].space, SpaceId::SYSTEM);
    Torn {
        mem,
        cfg,
        ids,
        model,
        run,
        torn: torn[0],
    }
}

#[test]
fn torn_page_is_repaired_from_the_doublewrite_area() {
    let t = torn_scenario("torn_dblwr_on", true);
    let (storage, _, report, k) =
        recover_and_check(&t.mem, &t.cfg, &t.ids, &t.model, &t.run, "torn_dblwr_on");
    assert_eq!(k, t.run.history.len(), "every change was acknowledged");
    assert_eq!(report.torn_pages_repaired, vec![t.torn], "{report:#?}");
    assert!(report.pages_read as usize >= t.ids.len(), "{report:#?}");
    storage.shutdown().expect("shutdown");
}

#[test]
fn torn_page_without_doublewrite_fails_recovery_naming_the_page() {
    let t = torn_scenario("torn_dblwr_off", false);
    let (io, _) = faulty(&t.mem);
    let err = Storage::open(io, t.cfg.clone())
        .expect_err("a torn page cannot be recovered without doublewrite");
    assert!(err.is_corruption(), "{err}");
    assert_eq!(err.page_id(), Some(t.torn), "{err}");
    let msg = err.to_string();
    assert!(msg.contains("innodb_doublewrite is OFF"), "{msg}");
}

#[test]
fn a_group_cut_by_a_torn_log_block_is_discarded_whole() {
    let seed = seed("torn_log_group");
    let mut rng = SmallRng::seed_from_u64(seed);
    let cfg = config(8);
    let mem = Arc::new(MemIo::new());
    let (io, plan) = faulty(&mem);
    let storage = Storage::create(io, cfg.clone()).expect("create");
    storage.store().pool.shutdown();
    let ids = setup_pages(storage.store(), 8).expect("setup");
    storage.checkpoint_now().expect("checkpoint");
    let model = Model::new(ids.len());
    let mut run = drive(
        &storage,
        &ids,
        &mut rng,
        &model,
        100,
        &plan,
        usize::MAX,
        Chaos::None,
    );
    let store = storage.store();
    let start = store.log.current_lsn();
    store.log.flush_up_to(start).expect("flush log");
    run.acked = run.history.len();
    // One more mtr, long enough to span several log blocks, made durable.
    let mut big = insert_on_pages(&mut rng, ids.len());
    while big.len() < 40 {
        big.extend(insert_on_pages(&mut rng, ids.len()));
    }
    let end = run_mtr(store, &ids, &big).expect("big mtr");
    store.log.flush_up_to(end).expect("flush big mtr");
    assert!(end.since(start) > 3 * 492, "the group spans several blocks");
    run.history.push(big);
    crash(storage, &plan, &mem);

    // The block holding the group's last bytes (and its MtrEnd) is torn:
    // the scan delivers the group's first blocks, but never its end.
    let g = LogGeometry::new(cfg.log.file_size, cfg.log.files_in_group);
    let off = g.lsn_to_ring_offset(Lsn(end.get() - 1));
    let (file, at) = g.ring_offset_to_file(off - off % BLOCK_SIZE as u64);
    let path = cfg.log.dir.join(format!("ib_logfile{file}"));
    let f = mem
        .open(
            &path,
            OpenOptions {
                create: false,
                direct: false,
            },
        )
        .expect("log file");
    f.write_at(&[0u8; BLOCK_SIZE], at).expect("tear block");
    f.sync().expect("sync");

    let (storage, _, report, k) =
        recover_and_check(&mem, &cfg, &ids, &model, &run, "torn_log_group");
    assert_eq!(
        k,
        run.history.len() - 1,
        "seed {seed}: the cut group must be absent as a whole"
    );
    assert_eq!(report.end_lsn, start, "{report:#?}");
    assert!(report.discarded_tail_bytes > 0, "{report:#?}");
    storage.shutdown().expect("shutdown");
}
