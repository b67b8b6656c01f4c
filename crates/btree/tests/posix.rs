//! The tree on real files (`PosixIo` in a temporary directory): random
//! operations against a model, a clean shutdown, and a reopen that finds
//! the same tree on disk.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;

use basalt_btree::{BTree, BTreeError, IndexKind};
use basalt_io::{Io, PosixIo};
use basalt_mtr::{Mtr, Storage};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use support::*;

#[test]
fn a_tree_on_real_files_survives_shutdown_and_reopen() {
    let seed = seed("posix");
    let dir = tempfile::tempdir().unwrap();
    let io: Arc<dyn Io> = Arc::new(PosixIo::new(2));
    let s = storage_on(Arc::clone(&io), dir.path().to_path_buf(), 8 << 20);
    let t = create_tree(&s, 101, clustered_layout(), IndexKind::Clustered);
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut model: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
    for op in 0..ops(1500) {
        let k = rng.gen_range(0..800u64);
        let kb = k.to_be_bytes();
        let len = if rng.gen_range(0..30) == 0 {
            25_000
        } else {
            rng.gen_range(0..900)
        };
        let v = value(k, op as u64, len);
        let mut mtr = Mtr::start(s.store()).unwrap();
        let present = model.contains_key(&k);
        let r = if present && rng.gen_bool(0.4) {
            model.remove(&k);
            t.remove(&mut mtr, &[Some(&kb)])
        } else {
            let r = if present {
                t.update(&mut mtr, &[Some(&kb)], &[Some(&kb), None, Some(&v)], sys(1))
            } else {
                t.insert(&mut mtr, &[Some(&kb), None, Some(&v)], sys(1))
            };
            model.insert(k, v);
            r
        };
        r.unwrap_or_else(|e: BTreeError| panic!("seed {seed} op {op}: {e}"));
        mtr.commit().unwrap();
    }
    let before = t.validate(s.store()).unwrap();
    let (space, root, layout) = (t.space(), t.root(), Arc::clone(t.layout()));
    drop(t);
    s.shutdown().unwrap();

    let (s, report) = Storage::open(io, config(dir.path().to_path_buf(), 8 << 20)).unwrap();
    assert!(report.was_clean(), "{report:?}");
    let t = BTree::open(
        space,
        root,
        basalt_common::IndexId(101),
        layout,
        IndexKind::Clustered,
    )
    .unwrap();
    let after = t.validate(s.store()).unwrap();
    assert_eq!(before, after);
    let rows = rows_all(s.store(), &t);
    assert_eq!(rows.len(), model.len());
    for (row, (k, v)) in rows.iter().zip(&model) {
        assert_eq!(row.values[0].as_deref(), Some(&k.to_be_bytes()[..]));
        assert!(
            row.values[2].as_deref() == Some(&v[..]),
            "seed {seed}: key {k}"
        );
    }
    drop(t);
    s.shutdown().unwrap();
}
