//! Crash tests: the tree's pages change only through redo records, so a
//! crash at any point recovers to the last durable state. Random
//! operations (splits, merges, long values, a bulk build) run against a
//! model; then the files revert to their durable images (power loss),
//! crash recovery runs, and the recovered tree must validate and hold
//! exactly the model's records. Several crash cycles in a row.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;

use basalt_btree::{BTree, BTreeError, BulkRecord, IndexKind, Row};
use basalt_buf::BufConfig;
use basalt_common::IndexId;
use basalt_io::{FaultPlan, FaultyIo, Io, MemIo};
use basalt_mtr::{Mtr, Storage, StorageConfig};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use support::*;

fn config() -> StorageConfig {
    let mut cfg = StorageConfig::new("/db");
    cfg.buf = BufConfig::for_pool_size(6 << 20);
    cfg.log.file_size = 8 << 20;
    cfg.log.buffer_size = 2 << 20;
    cfg
}

fn faulty(mem: &Arc<MemIo>) -> (Arc<dyn Io>, Arc<FaultPlan>) {
    let plan = FaultPlan::new();
    let io: Arc<dyn Io> = Arc::new(FaultyIo::new(mem.clone(), plan.clone()));
    (io, plan)
}

type Model = BTreeMap<u64, (Option<Vec<u8>>, bool)>;

fn expected(model: &Model) -> Vec<(Vec<u8>, Option<Vec<u8>>, bool)> {
    model
        .iter()
        .map(|(k, (v, m))| (k.to_be_bytes().to_vec(), v.clone(), *m))
        .collect()
}

fn actual(rows: &[Row]) -> Vec<(Vec<u8>, Option<Vec<u8>>, bool)> {
    rows.iter()
        .map(|r| {
            (
                r.values[0].clone().unwrap(),
                r.values[2].clone(),
                r.delete_marked,
            )
        })
        .collect()
}

/// Random writes, each in its own mini-transaction; the last one is made
/// durable, so every one of them must survive the crash.
fn drive(s: &Storage, t: &BTree, model: &mut Model, rng: &mut SmallRng, n: usize, seed: u64) {
    let store = s.store();
    for op in 0..n {
        let k = rng.gen_range(0..1500u64);
        let kb = k.to_be_bytes();
        let len = match rng.gen_range(0..100) {
            0..=59 => rng.gen_range(0..400),
            60..=94 => rng.gen_range(400..4000),
            _ => rng.gen_range(17_000..70_000),
        };
        let v = value(k, op as u64, len);
        let mut mtr = Mtr::start(store).unwrap();
        let what = rng.gen_range(0..10);
        let res = match (model.contains_key(&k), what) {
            (false, _) => t
                .insert(&mut mtr, &[Some(&kb), None, Some(&v)], sys(1))
                .map(|()| {
                    model.insert(k, (Some(v), false));
                }),
            (true, 0..=3) => t
                .update(&mut mtr, &[Some(&kb)], &[Some(&kb), None, Some(&v)], sys(2))
                .map(|()| {
                    model.get_mut(&k).unwrap().0 = Some(v);
                }),
            (true, 4) => t
                .delete_mark(&mut mtr, &[Some(&kb)], true, sys(3))
                .map(|()| {
                    model.get_mut(&k).unwrap().1 = true;
                }),
            (true, _) => t.remove(&mut mtr, &[Some(&kb)]).map(|()| {
                model.remove(&k);
            }),
        };
        res.unwrap_or_else(|e: BTreeError| panic!("seed {seed} op {op}: {e}"));
        if op + 1 == n {
            mtr.commit_durable().unwrap();
        } else {
            mtr.commit().unwrap();
        }
        if rng.gen_range(0..200) == 0 {
            s.checkpoint_now().unwrap();
        }
    }
}

fn crash(s: Storage, plan: &FaultPlan, mem: &Arc<MemIo>) -> Arc<MemIo> {
    plan.crash_now();
    drop(s);
    mem.crash();
    Arc::new(mem.durable_snapshot())
}

#[test]
fn tree_recovers_its_last_durable_state_crash() {
    let seed = seed("btree_crash");
    let n = ops(600);
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut mem = Arc::new(MemIo::new());
    let (io, mut plan) = faulty(&mem);
    let mut s = Storage::create(io, config()).unwrap();
    let t = create_tree(&s, 91, clustered_layout(), IndexKind::Clustered);
    s.checkpoint_now().unwrap();
    let (space, root, layout) = (t.space(), t.root(), Arc::clone(t.layout()));
    let mut model = Model::new();
    // A bulk-built index in the same space, logged as full-page images.
    let bulk_rows: Vec<BulkRecord> = (0..2000u64)
        .map(|k| BulkRecord {
            values: vec![
                Some(k.to_be_bytes().to_vec()),
                None,
                Some(value(k, 9, if k % 97 == 0 { 20_000 } else { 120 })),
            ],
            sys: sys(5),
            delete_marked: k % 13 == 0,
        })
        .collect();
    let bulk = BTree::bulk_load(
        s.store(),
        space,
        IndexId(92),
        Arc::clone(&layout),
        IndexKind::Clustered,
        bulk_rows.clone(),
    )
    .unwrap();
    let bulk_root = bulk.root();
    let bulk_model: Model = bulk_rows
        .iter()
        .map(|r| {
            (
                u64::from_be_bytes(r.values[0].clone().unwrap().try_into().unwrap()),
                (r.values[2].clone(), r.delete_marked),
            )
        })
        .collect();
    for cycle in 0..3 {
        let t = BTree::open(
            space,
            root,
            IndexId(91),
            Arc::clone(&layout),
            IndexKind::Clustered,
        )
        .unwrap();
        drive(&s, &t, &mut model, &mut rng, n, seed);
        if cycle == 0 {
            // Make the bulk build durable too (it committed without waiting).
            let mut mtr = Mtr::start(s.store()).unwrap();
            t.delete_mark(
                &mut mtr,
                &[Some(&model.keys().next().unwrap().to_be_bytes())],
                true,
                sys(8),
            )
            .unwrap();
            mtr.commit_durable().unwrap();
            model.values_mut().next().unwrap().1 = true;
        }
        drop(t);
        let durable = crash(s, &plan, &mem);
        mem = durable;
        let (io, p) = faulty(&mem);
        plan = p;
        let mut cfg = config();
        // In-memory files cannot be searched: name the tablespace.
        cfg.tablespace_files = vec![cfg.datadir.join(format!("t{}.ibd", space.0))];
        let (recovered, report) = Storage::open(io, cfg)
            .unwrap_or_else(|e| panic!("seed {seed} cycle {cycle}: recovery: {e}"));
        eprintln!("cycle {cycle}: recovered {report:?}");
        s = recovered;
        let store = s.store();
        let t = BTree::open(
            space,
            root,
            IndexId(91),
            Arc::clone(&layout),
            IndexKind::Clustered,
        )
        .unwrap();
        let st = t
            .validate(store)
            .unwrap_or_else(|e| panic!("seed {seed} cycle {cycle}: {e}"));
        assert!(
            actual(&rows_all(store, &t)) == expected(&model),
            "seed {seed} cycle {cycle}: records differ after recovery"
        );
        let b = BTree::open(
            space,
            bulk_root,
            IndexId(92),
            Arc::clone(&layout),
            IndexKind::Clustered,
        )
        .unwrap();
        b.validate(store)
            .unwrap_or_else(|e| panic!("seed {seed} cycle {cycle}: bulk tree: {e}"));
        assert!(
            actual(&rows_all(store, &b)) == expected(&bulk_model),
            "seed {seed}: bulk tree differs"
        );
        eprintln!("cycle {cycle}: {st:?}");
    }
    s.shutdown().unwrap();
}
