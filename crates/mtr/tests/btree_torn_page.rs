//! A torn page of a B+tree, in-process over `MemIo` + `FaultyIo`.
//!
//! The tree lives in `test/t1.ibd`. After a durable baseline checkpoint,
//! the first change updates one existing leaf in place (so that leaf has
//! the oldest modification and is the first page of the next flush
//! batch), then random inserts, updates and removes follow, all
//! acknowledged durable. The flush's first in-place write to `t1.ibd`
//! keeps only its first 4 KiB while the disk reports success (the
//! doublewrite copy, if any, was written and fsynced before), then the
//! power fails.
//!
//! * With `innodb_doublewrite=ON`, recovery restores the page from the
//!   doublewrite area, applies the redo, and the tree validates with every
//!   acknowledged change.
//! * With it OFF, nothing can repair the page, and recovery must fail with
//!   a corruption error naming exactly that page: proof that the
//!   doublewrite area is what repairs it.
//!
//! Seeded: `BASALT_TEST_SEED` replays a run.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::PathBuf;
use std::sync::Arc;

use basalt_btree::{BTree, IndexKind};
use basalt_buf::BufConfig;
use basalt_common::test_support::test_seed as seed;
use basalt_common::{IndexId, Lsn, PageId, PageNo, RollPtr, SpaceId, TrxId, PAGE_SIZE};
use basalt_io::{FaultPlan, FaultyIo, Io, MemIo, TornWriteReport};
use basalt_mtr::{Mtr, PageStore, Storage, StorageConfig};
use basalt_page::header;
use basalt_page::rec::{FieldDef, RecordLayout, SysCols};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const SPACE: SpaceId = SpaceId(1);
const INDEX: IndexId = IndexId(9);

fn t1() -> PathBuf {
    PathBuf::from("/db/test/t1.ibd")
}

fn config(doublewrite: bool) -> StorageConfig {
    let mut cfg = StorageConfig::new("/db");
    cfg.buf = BufConfig::for_pool_size(8 << 20);
    cfg.buf.doublewrite = doublewrite;
    cfg.log.file_size = 8 << 20;
    cfg.log.buffer_size = 1 << 20;
    cfg.tablespace_files = vec![t1()];
    cfg
}

fn faulty(mem: &Arc<MemIo>) -> (Arc<dyn Io>, Arc<FaultPlan>) {
    let plan = FaultPlan::new();
    let io: Arc<dyn Io> = Arc::new(FaultyIo::new(mem.clone(), plan.clone()));
    (io, plan)
}

fn layout() -> Arc<RecordLayout> {
    Arc::new(
        RecordLayout::new(vec![FieldDef::fixed(8), FieldDef::var(1 << 30)], 1, true)
            .expect("layout"),
    )
}

fn tree(root: PageNo) -> BTree {
    BTree::open(SPACE, root, INDEX, layout(), IndexKind::Clustered).expect("tree")
}

fn sys() -> SysCols {
    SysCols {
        trx_id: TrxId(3),
        roll_ptr: RollPtr(1),
    }
}

fn value(rng: &mut SmallRng) -> Vec<u8> {
    let len = match rng.gen_range(0..100) {
        0..=89 => rng.gen_range(1..400),
        _ => rng.gen_range(9000..30_000),
    };
    (0..len).map(|_| rng.gen()).collect()
}

type Model = BTreeMap<u64, Vec<u8>>;

/// One operation in its own mini-transaction, mirrored in `model`.
fn op(store: &PageStore, t: &BTree, rng: &mut SmallRng, model: &mut Model) {
    let key = rng.gen_range(0..1500u64);
    let k = key.to_be_bytes();
    let mut mtr = Mtr::start(store).expect("mtr");
    match model.contains_key(&key) {
        false => {
            let v = value(rng);
            t.insert(&mut mtr, &[Some(&k), Some(&v)], sys())
                .expect("insert");
            model.insert(key, v);
        }
        true if rng.gen_bool(0.6) => {
            let v = value(rng);
            t.update(&mut mtr, &[Some(&k)], &[Some(&k), Some(&v)], sys())
                .expect("update");
            model.insert(key, v);
        }
        true => {
            t.remove(&mut mtr, &[Some(&k)]).expect("remove");
            model.remove(&key);
        }
    }
    mtr.commit().expect("commit");
}

fn rows(store: &PageStore, t: &BTree) -> Model {
    let mut c = t
        .cursor(store, Bound::Unbounded, Bound::Unbounded)
        .expect("cursor");
    let mut out = Model::new();
    while c.next().expect("next").is_some() {
        let row = c.row().expect("row").expect("positioned");
        let key = u64::from_be_bytes(
            row.values[0]
                .clone()
                .expect("key")
                .try_into()
                .expect("8 bytes"),
        );
        out.insert(key, row.values[1].clone().expect("value"));
    }
    out
}

struct Torn {
    mem: Arc<MemIo>,
    root: PageNo,
    model: Model,
    torn: PageId,
}

fn torn_tree(test: &str, doublewrite: bool) -> Torn {
    let seed = seed(test);
    let mut rng = SmallRng::seed_from_u64(seed);
    let cfg = config(doublewrite);
    let mem = Arc::new(MemIo::new());
    let (io, plan) = faulty(&mem);
    let storage = Storage::create(io, cfg).expect("create");
    let store = storage.store();
    storage
        .create_tablespace(SPACE, &t1(), 64)
        .expect("tablespace");
    let mut mtr = Mtr::start(store).expect("mtr");
    let t = BTree::create(&mut mtr, SPACE, INDEX, layout(), IndexKind::Clustered).expect("tree");
    mtr.commit().expect("commit");
    let mut model = Model::new();
    for _ in 0..600 {
        op(store, &t, &mut rng, &mut model);
    }
    assert!(
        t.validate(store).expect("valid").height >= 2,
        "seed {seed}: want several leaves"
    );
    // Baseline: everything durable, no background flushing from here on.
    storage.checkpoint_now().expect("checkpoint");
    store.pool.shutdown();
    // First change after the checkpoint: an in-place update of one leaf.
    let (&k0, v0) = model
        .iter()
        .find(|(_, v)| v.len() < 300)
        .expect("a short row");
    let mut v = v0.clone();
    v[0] ^= 0xFF;
    let mut mtr = Mtr::start(store).expect("mtr");
    t.update(
        &mut mtr,
        &[Some(&k0.to_be_bytes())],
        &[Some(&k0.to_be_bytes()), Some(&v)],
        sys(),
    )
    .expect("update in place");
    mtr.commit().expect("commit");
    model.insert(k0, v);
    for _ in 0..300 {
        op(store, &t, &mut rng, &mut model);
    }
    store
        .log
        .flush_up_to(store.log.current_lsn())
        .expect("everything acknowledged");
    plan.tear_write_to("t1.ibd", 1, 4096, TornWriteReport::Success);
    let flushed = store
        .pool
        .flush_list_batch(usize::MAX, Lsn::MAX)
        .expect("the disk claims success");
    assert!(flushed.written > 1, "{flushed:?}");
    assert_eq!(
        plan.faults_fired(),
        1,
        "seed {seed}: the tear must have happened"
    );
    plan.crash_now();
    let root = t.root();
    drop(storage);
    mem.crash();

    let file = mem.durable_bytes(&t1()).expect("t1.ibd");
    let torn: Vec<PageId> = (0..file.len() / PAGE_SIZE)
        .map(|p| PageId::new(SPACE, p as u32))
        .filter(|id| {
            let off = id.file_offset() as usize;
            header::verify(&file[off..off + PAGE_SIZE], *id).is_err()
        })
        .collect();
    assert_eq!(
        torn.len(),
        1,
        "seed {seed}: exactly one page is torn on disk: {torn:?}"
    );
    Torn {
        mem,
        root,
        model,
        torn: torn[0],
    }
}

#[test]
fn torn_btree_page_is_repaired_by_doublewrite_and_the_tree_validates() {
    let t = torn_tree("btree_torn_dblwr_on", true);
    let (io, _) = faulty(&t.mem);
    let (storage, report) = Storage::open(io, config(true)).expect("recovery");
    assert_eq!(report.torn_pages_repaired, vec![t.torn], "{report:#?}");
    assert!(report.groups > 300, "{report:#?}");
    let tree = tree(t.root);
    tree.validate(storage.store())
        .expect("the recovered tree validates");
    assert!(
        rows(storage.store(), &tree) == t.model,
        "recovered rows differ from the acknowledged ones"
    );
    storage.shutdown().expect("shutdown");
}

#[test]
fn torn_btree_page_without_doublewrite_is_reported_corrupt() {
    let t = torn_tree("btree_torn_dblwr_off", false);
    let (io, _) = faulty(&t.mem);
    let err = Storage::open(io, config(false)).expect_err("nothing can repair the page");
    assert!(err.is_corruption(), "{err}");
    assert_eq!(err.page_id(), Some(t.torn), "{err}");
}
