//! Random mini-transactions, random crashes, recovery checked against the
//! model.

use std::sync::Arc;

use basalt_common::{Lsn, PageId};
use basalt_io::{FaultPlan, MemIo};
use basalt_mtr::{RecoveryReport, Storage, StorageConfig};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::workload::{gen_mtr, match_prefix, read_state, run_mtr, seed, setup_pages, Model, Op};
use crate::{config, faulty};

/// Which background events [`drive`] mixes into the workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Chaos {
    /// Partial flushes (5% of mtrs) and full checkpoints (2%).
    Full,
    /// Partial flushes only: the checkpoint stays put.
    FlushOnly,
    /// Neither.
    None,
}

/// What one run of the workload committed.
#[derive(Debug, Default)]
pub struct Run {
    /// Every mtr whose commit returned, in commit (= LSN) order.
    pub history: Vec<Vec<Op>>,
    /// `history[..acked]` is known durable.
    pub acked: usize,
}

/// Runs up to `n` random mtrs on `storage` starting from `model`, with
/// random durable commits (35%) and the events of `chaos`, until `n` or
/// the first error (an injected crash).
/// `crash_after` mtrs in, the plan crashes (every later write and sync
/// fails).
#[allow(clippy::too_many_arguments)]
pub fn drive(
    storage: &Storage,
    ids: &[PageId],
    rng: &mut SmallRng,
    model: &Model,
    n: usize,
    plan: &FaultPlan,
    crash_after: usize,
    chaos: Chaos,
) -> Run {
    let store = storage.store();
    let mut scratch = model.clone();
    let mut run = Run::default();
    for i in 0..n {
        if i == crash_after {
            plan.crash_now();
        }
        let ops = gen_mtr(rng, &scratch);
        let end = match run_mtr(store, ids, &ops) {
            Ok(end) => end,
            Err(_) => break,
        };
        scratch.apply(&ops);
        run.history.push(ops);
        let roll = rng.gen_range(0..100);
        let outcome = if roll < 35 {
            store
                .log
                .flush_up_to(end)
                .map(|()| run.acked = run.history.len())
                .map_err(Into::into)
        } else if roll < 40 && chaos != Chaos::None {
            store
                .pool
                .flush_list_batch(rng.gen_range(1..40), Lsn::MAX)
                .map(drop)
                .map_err(Into::into)
        } else if roll < 42 && chaos == Chaos::Full {
            storage.checkpoint_now()
        } else {
            Ok(())
        };
        if outcome.is_err() {
            break;
        }
    }
    run
}

/// Power cut: nothing more reaches the files, threads stop, volatile data
/// is lost.
pub fn crash(storage: Storage, plan: &FaultPlan, mem: &MemIo) {
    plan.crash_now();
    drop(storage);
    mem.crash();
}

/// Recovers `mem` and checks the result against the model; returns the
/// storage, the report and the number of history entries recovered.
pub fn recover_and_check(
    mem: &Arc<MemIo>,
    cfg: &StorageConfig,
    ids: &[PageId],
    base: &Model,
    run: &Run,
    what: &str,
) -> (Storage, Arc<FaultPlan>, RecoveryReport, usize) {
    let (io, plan) = faulty(mem);
    let (storage, report) =
        Storage::open(io, cfg.clone()).unwrap_or_else(|e| panic!("{what}: recovery failed: {e}"));
    let state = read_state(storage.store(), ids)
        .unwrap_or_else(|e| panic!("{what}: read after recovery: {e}"));
    let k = match_prefix(base, &run.history, run.acked, &state)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        report.end_lsn >= report.checkpoint_lsn,
        "{what}: {report:?}"
    );
    (storage, plan, report, k)
}

/// Several rounds of work and crash on one data directory; each recovery
/// starts from the previous one's state. With `Chaos::Full` the crash
/// may also come at a random write (in the middle of a flush); otherwise
/// the background flusher is stopped too, so the checkpoint stays where
/// the last recovery put it, and the crash comes after at least half the
/// round's mtrs, so the whole round's redo is recovered.
fn rounds(
    test: &str,
    pool_mib: u64,
    n_pages: usize,
    budget: Option<usize>,
    rounds: usize,
    mtrs: usize,
    chaos: Chaos,
) -> Vec<RecoveryReport> {
    let seed = seed(test);
    let mut rng = SmallRng::seed_from_u64(seed);
    let mem = Arc::new(MemIo::new());
    let mut cfg = config(pool_mib);
    if let Some(b) = budget {
        cfg.recovery_memory = b;
    }
    let (io, mut plan) = faulty(&mem);
    let mut storage = Storage::create(io, cfg.clone()).expect("create");
    let ids = setup_pages(storage.store(), n_pages).expect("setup pages");
    storage.checkpoint_now().expect("checkpoint");
    let mut model = Model::new(n_pages);
    let mut reports = Vec::new();
    for round in 0..rounds {
        let what = format!("{test} seed {seed} round {round}");
        let crash_after = if chaos == Chaos::Full {
            if rng.gen_bool(0.5) {
                // The crash may hit a page flush, a checkpoint or the log.
                plan.crash_at_write(rng.gen_range(1..400));
            }
            rng.gen_range(mtrs / 4..mtrs)
        } else {
            // A long run: the redo must outgrow the recovery budget.
            storage.store().pool.shutdown();
            rng.gen_range(mtrs / 2..mtrs)
        };
        let run = drive(
            &storage,
            &ids,
            &mut rng,
            &model,
            mtrs,
            &plan,
            crash_after,
            chaos,
        );
        crash(storage, &plan, &mem);
        let (s, p, report, k) = recover_and_check(&mem, &cfg, &ids, &model, &run, &what);
        for ops in &run.history[..k] {
            model.apply(ops);
        }
        eprintln!(
            "{what}: {} committed, {} acked, {k} recovered; {} groups, {} pages ({} read, {} init, {} cached), {} batches",
            run.history.len(),
            run.acked,
            report.groups,
            report.pages,
            report.pages_read,
            report.pages_skipped_init,
            report.pages_cached,
            report.batches
        );
        reports.push(report);
        storage = s;
        plan = p;
    }
    storage.shutdown().expect("clean shutdown");
    reports
}

#[test]
fn random_crashes_recover_a_prefix_holding_every_acknowledged_mtr() {
    let reports = rounds("random_crashes", 8, 12, None, 8, 300, Chaos::Full);
    assert!(
        reports.iter().any(|r| r.groups > 0),
        "no round had redo to apply"
    );
    assert!(
        reports.iter().any(|r| r.pages_read > 0),
        "no round read a page"
    );
}

#[test]
fn data_larger_than_the_pool_in_many_batches() {
    // 600 pages in a 5 MiB pool (320 frames) with a 256 KiB recovery
    // budget: pages are evicted while running and while recovering, and
    // recoveries apply several batches.
    let mtrs = if cfg!(debug_assertions) { 1500 } else { 4000 };
    let reports = rounds(
        "many_batches",
        5,
        600,
        Some(256 << 10),
        4,
        mtrs,
        Chaos::FlushOnly,
    );
    assert!(reports.iter().any(|r| r.batches > 1), "{reports:#?}");
    assert!(reports.iter().any(|r| r.pages_cached > 0), "{reports:#?}");
    assert!(reports.iter().any(|r| r.pages > 320), "{reports:#?}");
}

#[test]
fn pages_created_after_the_checkpoint_are_not_read() {
    let seed = seed("init_skip");
    let mut rng = SmallRng::seed_from_u64(seed);
    let mem = Arc::new(MemIo::new());
    let cfg = config(8);
    let (io, plan) = faulty(&mem);
    let storage = Storage::create(io, cfg.clone()).expect("create");
    // No background flushing: the pages below are created and filled
    // after the last checkpoint and never written.
    storage.store().pool.shutdown();
    let ids = setup_pages(storage.store(), 20).expect("setup");
    let model = Model::new(20);
    let mut run = drive(
        &storage,
        &ids,
        &mut rng,
        &model,
        50,
        &plan,
        usize::MAX,
        Chaos::None,
    );
    storage
        .store()
        .log
        .flush_up_to(storage.store().log.current_lsn())
        .expect("flush log");
    run.acked = run.history.len();
    crash(storage, &plan, &mem);
    let (storage, _, report, k) = recover_and_check(&mem, &cfg, &ids, &model, &run, "init_skip");
    assert_eq!(k, run.history.len(), "everything was durable");
    // The 20 pages and the tablespace header (page 0, changed by every
    // allocation after the checkpoint, so read) are the pages with redo.
    assert_eq!(report.pages, 21, "{report:#?}");
    assert_eq!(report.pages_skipped_init, 20, "{report:#?}");
    assert_eq!(report.pages_read, 1, "{report:#?}");
    assert_eq!(
        report.pages_cached + report.pages_missing_space,
        0,
        "{report:#?}"
    );
    storage.shutdown().expect("shutdown");
}
