//! Page fill: the sequential-insert split heuristic keeps ascending and
//! descending loads near 100 %, byte-balanced splits keep random loads
//! above half full.

mod support;

use basalt_btree::IndexKind;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use support::*;

fn load(keys: &[u64]) -> basalt_btree::TreeStats {
    let s = storage(16 << 20);
    let store = s.store();
    let tree = create_tree(&s, 31, clustered_layout(), IndexKind::Clustered);
    for &k in keys {
        let kb = k.to_be_bytes();
        let small = value(k, 1, 100);
        insert(store, &tree, &[Some(&kb), Some(&small), None], sys(1)).unwrap();
    }
    let stats = tree.validate(store).unwrap();
    assert_eq!(stats.records, keys.len() as u64);
    stats
}

#[test]
fn ascending_inserts_fill_leaves_above_ninety_percent() {
    let keys: Vec<u64> = (0..ops(6000) as u64).collect();
    let stats = load(&keys);
    eprintln!("ascending: {stats:?} fill {:.3}", stats.leaf_fill());
    assert!(stats.leaf_pages() > 10, "{stats:?}");
    assert!(
        stats.leaf_fill() > 0.9,
        "ascending fill {:.3}",
        stats.leaf_fill()
    );
}

#[test]
fn descending_inserts_fill_leaves_above_ninety_percent() {
    let keys: Vec<u64> = (0..ops(6000) as u64).rev().collect();
    let stats = load(&keys);
    eprintln!("descending: fill {:.3}", stats.leaf_fill());
    assert!(
        stats.leaf_fill() > 0.9,
        "descending fill {:.3}",
        stats.leaf_fill()
    );
}

#[test]
fn random_inserts_fill_leaves_above_half() {
    let seed = seed("random_fill");
    let mut keys: Vec<u64> = (0..ops(6000) as u64).collect();
    let mut rng = SmallRng::seed_from_u64(seed);
    for i in (1..keys.len()).rev() {
        keys.swap(i, rng.gen_range(0..=i));
    }
    let stats = load(&keys);
    eprintln!("random: fill {:.3}", stats.leaf_fill());
    assert!(
        stats.leaf_fill() > 0.5,
        "seed {seed}: random fill {:.3}",
        stats.leaf_fill()
    );
    assert!(
        stats.leaf_fill() < 0.9,
        "seed {seed}: random inserts cannot pack pages: {:.3}",
        stats.leaf_fill()
    );
}
