//! Model test: the B+tree next to a `BTreeMap`, failing on the first
//! difference with the seed and the operation index.
//!
//! A wide key (128 bytes) keeps node pages small so that a few thousand
//! records give a three-level tree; a 6 MiB pool makes pages leave and
//! re-enter the buffer pool; long values (some > 16 KiB, some ~100 KiB)
//! go to overflow chains. Three phases: growth (mostly inserts), churn,
//! shrink (mostly removes, then everything): the height must rise to 3 and
//! fall back to 1, with splits, merges and root raises/lowers counted, and
//! no page may leak.

mod support;

use std::collections::BTreeMap;
use std::ops::Bound;

use basalt_btree::{BTree, BTreeError, IndexKind, Row};
use basalt_mtr::{Mtr, PageStore};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use support::*;

#[derive(Clone, Debug, PartialEq, Eq)]
struct ModelRow {
    small: Option<Vec<u8>>,
    big: Option<Vec<u8>>,
    marked: bool,
    trx: u64,
}

struct Harness<'s> {
    store: &'s PageStore,
    tree: BTree,
    model: BTreeMap<u64, ModelRow>,
    rng: SmallRng,
    seed: u64,
    op: usize,
    trx: u64,
    max_height: usize,
}

impl Harness<'_> {
    fn fail(&self, what: String) -> ! {
        panic!("seed {} op {}: {what}", self.seed, self.op)
    }

    fn key_bytes(k: u64) -> Vec<u8> {
        wide_key(k)
    }

    fn values(&mut self, k: u64) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
        let small = match self.rng.gen_range(0..10) {
            0 => None,
            _ => {
                let n = self.rng.gen_range(0..200);
                Some(value(k, self.trx, n))
            }
        };
        let big_len = match self.rng.gen_range(0..100) {
            0..=19 => None,
            20..=64 => Some(self.rng.gen_range(0..300)),
            65..=89 => Some(self.rng.gen_range(300..2500)),
            90..=96 => Some(self.rng.gen_range(2500..9000)),
            97..=98 => Some(self.rng.gen_range(16 * 1024..40 * 1024)),
            _ => Some(self.rng.gen_range(90 * 1024..110 * 1024)),
        };
        (small, big_len.map(|n| value(k ^ 0xABCD, self.trx, n)))
    }

    fn expect_clean(&self, mtr: Mtr<'_>, e: &BTreeError) {
        if !e.leaves_mtr_clean() {
            self.fail(format!("unexpected error {e}"));
        }
        if mtr.commit().unwrap().is_some() {
            self.fail(format!("error {e} left changes in the mini-transaction"));
        }
    }

    fn insert(&mut self, k: u64) {
        self.trx += 1;
        let (small, big) = self.values(k);
        let kb = Self::key_bytes(k);
        let vals = [Some(&kb[..]), small.as_deref(), big.as_deref()];
        let mut mtr = Mtr::start(self.store).unwrap();
        let res = self.tree.insert(&mut mtr, &vals, sys(self.trx));
        match (self.model.get(&k).map(|r| r.marked), res) {
            (Some(false), Err(e @ BTreeError::DuplicateKey { .. })) => self.expect_clean(mtr, &e),
            (Some(false), other) => self.fail(format!("insert of live key {k}: {other:?}")),
            (_, Ok(())) => {
                mtr.commit().unwrap();
                self.model.insert(
                    k,
                    ModelRow {
                        small,
                        big,
                        marked: false,
                        trx: self.trx,
                    },
                );
            }
            (_, Err(e)) => self.fail(format!("insert of {k}: {e}")),
        }
    }

    fn update(&mut self, k: u64) {
        self.trx += 1;
        let (small, big) = self.values(k);
        let kb = Self::key_bytes(k);
        let vals = [Some(&kb[..]), small.as_deref(), big.as_deref()];
        let mut mtr = Mtr::start(self.store).unwrap();
        let res = self
            .tree
            .update(&mut mtr, &[Some(&kb)], &vals, sys(self.trx));
        match (self.model.get_mut(&k), res) {
            (None, Err(e @ BTreeError::KeyNotFound { .. })) => self.expect_clean(mtr, &e),
            (Some(row), Ok(())) => {
                mtr.commit().unwrap();
                row.small = small;
                row.big = big;
                row.trx = self.trx;
            }
            (_, other) => self.fail(format!("update of {k}: {other:?}")),
        }
    }

    fn mark(&mut self, k: u64, marked: bool) {
        self.trx += 1;
        let kb = Self::key_bytes(k);
        let mut mtr = Mtr::start(self.store).unwrap();
        let res = self
            .tree
            .delete_mark(&mut mtr, &[Some(&kb)], marked, sys(self.trx));
        match (self.model.get_mut(&k), res) {
            (None, Err(e @ BTreeError::KeyNotFound { .. })) => self.expect_clean(mtr, &e),
            (Some(row), Ok(())) => {
                mtr.commit().unwrap();
                row.marked = marked;
                row.trx = self.trx;
            }
            (_, other) => self.fail(format!("delete mark of {k}: {other:?}")),
        }
    }

    fn remove(&mut self, k: u64) {
        let kb = Self::key_bytes(k);
        let mut mtr = Mtr::start(self.store).unwrap();
        let res = self.tree.remove(&mut mtr, &[Some(&kb)]);
        match (self.model.remove(&k), res) {
            (None, Err(e @ BTreeError::KeyNotFound { .. })) => self.expect_clean(mtr, &e),
            (Some(_), Ok(())) => {
                mtr.commit().unwrap();
            }
            (_, other) => self.fail(format!("remove of {k}: {other:?}")),
        }
    }

    fn expected_row(k: u64, m: &ModelRow) -> Row {
        Row {
            values: vec![Some(Self::key_bytes(k)), m.small.clone(), m.big.clone()],
            delete_marked: m.marked,
            sys: Some(sys(m.trx)),
        }
    }

    fn get(&mut self, k: u64) {
        let kb = Self::key_bytes(k);
        let got = self.tree.get_row(self.store, &[Some(&kb)]).unwrap();
        let want = self.model.get(&k).map(|m| Self::expected_row(k, m));
        if got != want {
            self.fail(format!(
                "get {k}: tree has {:?}, model {:?}",
                got.map(|r| r.delete_marked),
                want.map(|r| r.delete_marked)
            ));
        }
        // The stored form agrees too.
        let stored = self.tree.get(self.store, &[Some(&kb)]).unwrap();
        if stored.is_some() != self.model.contains_key(&k) {
            self.fail(format!("get {k}: stored record presence differs"));
        }
    }

    fn bound(&mut self) -> (Bound<u64>, Option<Vec<u8>>) {
        let k = self.rng.gen_range(0..KEYS + 10);
        match self.rng.gen_range(0..4) {
            0 => (Bound::Unbounded, None),
            1 | 2 => (Bound::Included(k), Some(Self::key_bytes(k))),
            _ => (Bound::Excluded(k), Some(Self::key_bytes(k))),
        }
    }

    fn scan(&mut self) {
        let (lo, lo_b) = self.bound();
        let (hi, hi_b) = self.bound();
        let forward = self.rng.gen_bool(0.5);
        let limit = self.rng.gen_range(1..60);
        let (lt, ht) = (key_bound(&lo, &lo_b), key_bound(&hi, &hi_b));
        let valid = match (lo, hi) {
            (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) => {
                a < b || (a == b && matches!((lo, hi), (Bound::Included(_), Bound::Included(_))))
            }
            _ => true,
        };
        let want: Vec<(u64, Row)> = if valid {
            let it = self
                .model
                .range((lo, hi))
                .map(|(k, m)| (*k, Self::expected_row(*k, m)));
            if forward {
                it.take(limit).collect()
            } else {
                it.rev().take(limit).collect()
            }
        } else {
            Vec::new()
        };
        let mut c = self
            .tree
            .cursor(self.store, bound_ref(&lt), bound_ref(&ht))
            .unwrap();
        let mut got = Vec::new();
        while got.len() < limit {
            let step = if forward { c.next() } else { c.prev() };
            if step.unwrap().is_none() {
                break;
            }
            got.push(c.row().unwrap().unwrap());
        }
        drop(c);
        if got.len() != want.len() {
            self.fail(format!(
                "scan {lo:?}..{hi:?} forward={forward}: {} rows, model {}",
                got.len(),
                want.len()
            ));
        }
        for (i, (g, (k, w))) in got.iter().zip(&want).enumerate() {
            if g != w {
                self.fail(format!(
                    "scan {lo:?}..{hi:?} forward={forward}: row {i} (model key {k}) differs"
                ));
            }
        }
    }

    fn check(&mut self) -> basalt_btree::TreeStats {
        let stats = match self.tree.validate(self.store) {
            Ok(s) => s,
            Err(e) => self.fail(format!("validate: {e}")),
        };
        if stats.records != self.model.len() as u64 {
            self.fail(format!(
                "validate counts {} records, model has {}",
                stats.records,
                self.model.len()
            ));
        }
        let marked = self.model.values().filter(|m| m.marked).count() as u64;
        if stats.delete_marked != marked {
            self.fail(format!(
                "{} delete-marked records, model {marked}",
                stats.delete_marked
            ));
        }
        self.max_height = self.max_height.max(stats.height);
        stats
    }

    fn step(&mut self, weights: [u32; 6]) {
        let total: u32 = weights.iter().sum();
        let mut pick = self.rng.gen_range(0..total);
        let mut which = 0;
        for (i, w) in weights.iter().enumerate() {
            if pick < *w {
                which = i;
                break;
            }
            pick -= w;
        }
        let k = self.rng.gen_range(0..KEYS);
        match which {
            0 => self.insert(k),
            1 => self.update(k),
            2 => {
                let m = self.rng.gen_bool(0.7);
                self.mark(k, m)
            }
            3 => self.remove(k),
            4 => self.get(k),
            _ => self.scan(),
        }
        self.op += 1;
        if self.op.is_multiple_of(250) {
            self.check();
        }
    }
}

const KEYS: u64 = 6000;

fn key_bound<'a>(b: &Bound<u64>, bytes: &'a Option<Vec<u8>>) -> Bound<Vec<Option<&'a [u8]>>> {
    match (b, bytes) {
        (Bound::Included(_), Some(v)) => Bound::Included(vec![Some(&v[..])]),
        (Bound::Excluded(_), Some(v)) => Bound::Excluded(vec![Some(&v[..])]),
        _ => Bound::Unbounded,
    }
}

fn bound_ref<'a, 'b>(b: &'a Bound<Vec<Option<&'b [u8]>>>) -> Bound<&'a [Option<&'b [u8]>]> {
    match b {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(v) => Bound::Included(&v[..]),
        Bound::Excluded(v) => Bound::Excluded(&v[..]),
    }
}

#[test]
fn tree_matches_btreemap_through_growth_churn_and_shrink() {
    let seed = seed("model");
    let n = ops(12_000);
    let s = storage(5 << 20);
    let store = s.store();
    let tree = create_tree(&s, 11, wide_key_layout(), IndexKind::Clustered);
    let space = tree.space();
    let mut h = Harness {
        store,
        tree,
        model: BTreeMap::new(),
        rng: SmallRng::seed_from_u64(seed),
        seed,
        op: 0,
        trx: 1,
        max_height: 0,
    };
    //                 ins upd mark rem get scan
    for _ in 0..n * 45 / 100 {
        h.step([75, 8, 5, 3, 6, 3]);
    }
    let grown = h.check();
    for _ in 0..n * 25 / 100 {
        h.step([25, 25, 15, 15, 12, 8]);
    }
    h.check();
    for _ in 0..n * 30 / 100 {
        h.step([5, 5, 5, 70, 10, 5]);
    }
    h.check();
    // Remove everything left, in random order.
    let mut keys: Vec<u64> = h.model.keys().copied().collect();
    for i in (1..keys.len()).rev() {
        let j = h.rng.gen_range(0..=i);
        keys.swap(i, j);
    }
    for k in keys {
        h.remove(k);
        h.op += 1;
        if h.op.is_multiple_of(250) {
            h.check();
        }
    }
    let end = h.check();
    let c = h.tree.counters();
    eprintln!(
        "model: grown {grown:?}\nmodel: counters {c:?}, max height {}",
        h.max_height
    );
    if n >= 10_000 {
        assert!(
            h.max_height >= 3,
            "seed {seed}: the tree never reached three levels"
        );
    }
    assert!(
        h.max_height >= 2,
        "seed {seed}: the tree never split its root"
    );
    assert_eq!(
        end.height, 1,
        "seed {seed}: the empty tree must be a single leaf"
    );
    assert_eq!(end.records, 0);
    assert!(c.splits > 0 && c.root_raises >= 1, "seed {seed}: {c:?}");
    assert!(c.merges > 0, "seed {seed}: no merge happened: {c:?}");
    assert!(
        c.root_lowers >= 1,
        "seed {seed}: the root never lowered: {c:?}"
    );
    assert!(c.pessimistic > 0, "seed {seed}: {c:?}");
    assert!(
        grown.overflow_pages > 0,
        "seed {seed}: no long value reached overflow pages"
    );
    assert!(
        store.pool.stats().pages_evicted > 0,
        "the small pool should have evicted pages"
    );
    // Nothing leaked: every page but the header and the root is free.
    let (free_len, free_limit) = space_usage(store, space);
    assert_eq!(free_len, free_limit - 2, "seed {seed}: pages leaked");
    drop(h);
    s.shutdown().unwrap();
}
