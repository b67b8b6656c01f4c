//! Sorted bulk build: same records as one-by-one inserts, fuller pages,
//! a fully working tree, and refusals of bad input.

mod support;

use basalt_btree::{BTree, BTreeError, BulkOptions, BulkRecord, IndexKind};
use basalt_common::IndexId;
use basalt_mtr::Mtr;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use support::*;

fn input(seed: u64, n: usize) -> Vec<BulkRecord> {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..n as u64)
        .map(|i| {
            let k = i * 3 + 1;
            let big = match rng.gen_range(0..100) {
                0..=29 => None,
                30..=94 => Some(value(k, 2, rng.gen_range(0..1500))),
                95..=98 => Some(value(k, 2, rng.gen_range(9000..30_000))),
                _ => Some(value(k, 2, rng.gen_range(90_000..110_000))),
            };
            BulkRecord {
                values: vec![
                    Some(k.to_be_bytes().to_vec()),
                    Some(value(k, 1, rng.gen_range(0..150))),
                    big,
                ],
                sys: sys(k + 10),
                delete_marked: rng.gen_range(0..20) == 0,
            }
        })
        .collect()
}

#[test]
fn bulk_load_holds_the_same_records_as_one_by_one_inserts() {
    let seed = seed("bulk_equals_inserts");
    let n = ops(4000);
    let s = storage(16 << 20);
    let store = s.store();
    let records = input(seed, n);

    let bulk_space = new_space(&s);
    let bulk = BTree::bulk_load(
        store,
        bulk_space,
        IndexId(41),
        clustered_layout(),
        IndexKind::Clustered,
        records.clone(),
    )
    .unwrap();
    let one = create_tree(&s, 42, clustered_layout(), IndexKind::Clustered);
    for r in &records {
        let vals: Vec<Option<&[u8]>> = r.values.iter().map(|v| v.as_deref()).collect();
        let mut mtr = Mtr::start(store).unwrap();
        one.insert(&mut mtr, &vals, r.sys).unwrap();
        if r.delete_marked {
            one.delete_mark(&mut mtr, &vals[..1], true, r.sys).unwrap();
        }
        mtr.commit().unwrap();
    }
    let sb = bulk
        .validate(store)
        .unwrap_or_else(|e| panic!("seed {seed}: bulk tree: {e}"));
    let so = one
        .validate(store)
        .unwrap_or_else(|e| panic!("seed {seed}: inserted tree: {e}"));
    eprintln!(
        "bulk: {sb:?} fill {:.3}\none by one: {so:?} fill {:.3}",
        sb.leaf_fill(),
        so.leaf_fill()
    );
    let (rb, ro) = (rows_all(store, &bulk), rows_all(store, &one));
    assert_eq!(rb.len(), n);
    assert!(
        rb == ro,
        "seed {seed}: bulk-loaded and inserted trees differ"
    );
    assert_eq!(sb.records, so.records);
    assert_eq!(sb.delete_marked, so.delete_marked);
    assert_eq!(sb.external_fields, so.external_fields);
    assert!(
        sb.external_fields > 0,
        "seed {seed}: no value went to overflow pages"
    );
    assert!(sb.height >= 2);
    // Default fill factor: 1/16 of every page left free (ascending
    // one-by-one inserts fill pages completely instead).
    assert!(
        sb.leaf_fill() > 0.85 && sb.leaf_fill() <= 15.0 / 16.0 + 0.01,
        "fill {}",
        sb.leaf_fill()
    );

    // The bulk-loaded tree is an ordinary tree: change it and check again.
    let mut rng = SmallRng::seed_from_u64(seed ^ 1);
    for _ in 0..n / 2 {
        let k = rng.gen_range(0..n as u64 * 3);
        let kb = k.to_be_bytes();
        let mut mtr = Mtr::start(store).unwrap();
        let r = if k % 3 == 1 {
            bulk.remove(&mut mtr, &[Some(&kb)])
        } else {
            bulk.insert(
                &mut mtr,
                &[Some(&kb), None, Some(&value(k, 3, 200))],
                sys(1),
            )
        };
        match r {
            Ok(()) | Err(BTreeError::KeyNotFound { .. }) | Err(BTreeError::DuplicateKey { .. }) => {
            }
            Err(e) => panic!("seed {seed}: {e}"),
        }
        mtr.commit().unwrap();
    }
    bulk.validate(store)
        .unwrap_or_else(|e| panic!("seed {seed}: after changes: {e}"));
    drop((bulk, one));
    s.shutdown().unwrap();
}

#[test]
fn fill_factor_sets_how_full_bulk_pages_are() {
    let s = storage(16 << 20);
    let store = s.store();
    let records: Vec<BulkRecord> = (0..3000u64)
        .map(|k| BulkRecord {
            values: vec![Some(k.to_be_bytes().to_vec()), Some(value(k, 1, 90)), None],
            sys: sys(1),
            delete_marked: false,
        })
        .collect();
    for (ff, lo, hi) in [(100u8, 0.90, 0.94), (70, 0.66, 0.71), (50, 0.46, 0.51)] {
        let t = BTree::bulk_load_with(
            store,
            new_space(&s),
            IndexId(43),
            clustered_layout(),
            IndexKind::Clustered,
            BulkOptions { fill_factor: ff },
            records.clone(),
        )
        .unwrap();
        let st = t.validate(store).unwrap();
        eprintln!(
            "fill factor {ff}: leaf fill {:.3}, {:?}",
            st.leaf_fill(),
            st.pages_per_level
        );
        // The last leaf of the level is partial.
        let fill = st.leaf_bytes_used as f64
            / ((st.leaf_pages() - 1) as f64 * basalt_page::PAGE_CAPACITY as f64);
        assert!(
            fill > lo && fill < hi + 0.02,
            "fill factor {ff}: fill {fill:.3}"
        );
        assert_eq!(scan_all(store, &t).len(), 3000);
    }
    assert!(matches!(
        BTree::bulk_load_with(
            store,
            new_space(&s),
            IndexId(44),
            clustered_layout(),
            IndexKind::Clustered,
            BulkOptions { fill_factor: 5 },
            Vec::new(),
        ),
        Err(BTreeError::BadDefinition(_))
    ));
    s.shutdown().unwrap();
}

#[test]
fn bulk_load_refuses_unsorted_input_and_unique_conflicts() {
    let s = storage(8 << 20);
    let store = s.store();
    let rec = |k: u64| BulkRecord {
        values: vec![Some(k.to_be_bytes().to_vec()), None, None],
        sys: sys(1),
        delete_marked: false,
    };
    let err = BTree::bulk_load(
        store,
        new_space(&s),
        IndexId(45),
        clustered_layout(),
        IndexKind::Clustered,
        vec![rec(1), rec(5), rec(5)],
    )
    .unwrap_err();
    assert!(
        matches!(err, BTreeError::BulkOrder { index: 2, .. }),
        "{err}"
    );
    let err = BTree::bulk_load(
        store,
        new_space(&s),
        IndexId(46),
        clustered_layout(),
        IndexKind::Clustered,
        vec![rec(1), rec(7), rec(6)],
    )
    .unwrap_err();
    assert!(
        matches!(err, BTreeError::BulkOrder { index: 2, .. }),
        "{err}"
    );

    let sec = |v: Option<&[u8]>, pk: u64, marked: bool| BulkRecord {
        values: vec![v.map(<[u8]>::to_vec), Some(pk.to_be_bytes().to_vec())],
        sys: sys(9),
        delete_marked: marked,
    };
    let unique = IndexKind::Secondary { unique: Some(1) };
    // NULLs and delete-marked records do not conflict.
    let ok = BTree::bulk_load(
        store,
        new_space(&s),
        IndexId(47),
        secondary_layout(),
        unique,
        vec![
            sec(None, 1, false),
            sec(None, 2, false),
            sec(Some(b"a"), 3, true),
            sec(Some(b"a"), 4, false),
            sec(Some(b"a"), 5, true),
            sec(Some(b"b"), 1, false),
        ],
    )
    .unwrap();
    assert_eq!(ok.validate(store).unwrap().records, 6);
    let err = BTree::bulk_load(
        store,
        new_space(&s),
        IndexId(48),
        secondary_layout(),
        unique,
        vec![
            sec(Some(b"a"), 3, false),
            sec(Some(b"a"), 4, true),
            sec(Some(b"a"), 5, false),
        ],
    )
    .unwrap_err();
    assert!(matches!(err, BTreeError::DuplicateKey { .. }), "{err}");
    s.shutdown().unwrap();
}

#[test]
fn bulk_load_of_nothing_or_one_record_is_a_single_leaf() {
    let s = storage(8 << 20);
    let store = s.store();
    for n in [0u64, 1] {
        let t = BTree::bulk_load(
            store,
            new_space(&s),
            IndexId(49),
            clustered_layout(),
            IndexKind::Clustered,
            (0..n).map(|k| BulkRecord {
                values: vec![Some(k.to_be_bytes().to_vec()), None, None],
                sys: sys(1),
                delete_marked: false,
            }),
        )
        .unwrap();
        let st = t.validate(store).unwrap();
        assert_eq!((st.height, st.records), (1, n));
        insert(store, &t, &[Some(&9u64.to_be_bytes()), None, None], sys(2)).unwrap();
        assert_eq!(t.validate(store).unwrap().records, n + 1);
    }
    s.shutdown().unwrap();
}
