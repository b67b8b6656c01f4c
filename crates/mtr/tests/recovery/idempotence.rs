//! A crash during recovery, then recovery again.

use std::sync::Arc;

use basalt_io::MemIo;
use basalt_mtr::Storage;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::model::{crash, drive, recover_and_check, Chaos};
use crate::workload::{read_state, seed, setup_pages, Model};
use crate::{config, faulty};

#[test]
fn a_crash_at_any_write_of_recovery_recovers_to_the_same_state() {
    let seed = seed("crash_during_recovery");
    let mut rng = SmallRng::seed_from_u64(seed);
    let iterations = if cfg!(debug_assertions) { 12 } else { 40 };
    // A small pool, so recovery flushes in the middle of applying, and a
    // small budget, so it applies in several batches: many writes to hit.
    let mut cfg = config(5);
    cfg.recovery_memory = 256 << 10;
    let mem = Arc::new(MemIo::new());
    let (io, plan) = faulty(&mem);
    let storage = Storage::create(io, cfg.clone()).expect("create");
    let ids = setup_pages(storage.store(), 400).expect("setup");
    storage.checkpoint_now().expect("checkpoint");
    storage.store().pool.shutdown();
    let model = Model::new(ids.len());
    let run = drive(
        &storage,
        &ids,
        &mut rng,
        &model,
        1200,
        &plan,
        usize::MAX,
        Chaos::FlushOnly,
    );
    crash(storage, &plan, &mem);

    // The undisturbed recovery: how many writes it does, and its result.
    let reference = Arc::new(mem.durable_snapshot());
    let (storage, ref_plan, report, k_ref) =
        recover_and_check(&reference, &cfg, &ids, &model, &run, "reference");
    let writes = ref_plan.writes_seen();
    let expected_state = read_state(storage.store(), &ids).expect("read reference");
    drop(storage);
    eprintln!(
        "reference recovery: {writes} writes, {} batches, {k_ref} mtrs recovered",
        report.batches
    );
    assert!(report.batches > 1 && writes > 10, "{report:#?}");

    let mut crashed = 0;
    for it in 0..iterations {
        let what = format!("seed {seed} iteration {it}");
        let disk = Arc::new(mem.durable_snapshot());
        // One or two crashes during recovery, each at a random write, some
        // tearing that write.
        for _ in 0..rng.gen_range(1..=2) {
            let (io, plan) = faulty(&disk);
            let nth = rng.gen_range(1..=writes);
            if rng.gen_bool(0.3) {
                plan.crash_at_write_torn(nth, 4096 * rng.gen_range(1..4));
            } else {
                plan.crash_at_write(nth);
            }
            let outcome = Storage::open(io, cfg.clone());
            if plan.faults_fired() > 0 {
                crashed += 1;
                assert!(
                    outcome.is_err(),
                    "{what}: recovery must fail when its write {nth} fails"
                );
            }
            plan.crash_now();
            drop(outcome);
            disk.crash();
        }
        let (storage, _, _, k) = recover_and_check(&disk, &cfg, &ids, &model, &run, &what);
        assert_eq!(
            k, k_ref,
            "{what}: interrupted recovery reached another state"
        );
        let state = read_state(storage.store(), &ids).expect("read");
        assert_eq!(state, expected_state, "{what}");
        storage.shutdown().expect("shutdown");
    }
    assert!(
        crashed >= iterations,
        "only {crashed} injected crashes fired"
    );
}
