//! Secondary indexes: uniqueness with NULLs and delete marks, runs of
//! equal values across leaves, max trx ids, prefix range scans.

mod support;

use std::ops::Bound;

use basalt_btree::{BTreeError, IndexKind};
use basalt_buf::LatchMode;
use basalt_common::{PageId, TrxId};
use basalt_mtr::{Mtr, PageStore};
use basalt_page::IndexPage;
use support::*;

fn sec_insert(
    store: &PageStore,
    t: &basalt_btree::BTree,
    v: Option<&[u8]>,
    pk: u64,
    trx: u64,
) -> basalt_btree::Result<()> {
    insert(store, t, &[v, Some(&pk.to_be_bytes())], sys(trx))
}

fn mark(store: &PageStore, t: &basalt_btree::BTree, v: Option<&[u8]>, pk: u64, m: bool, trx: u64) {
    let mut mtr = Mtr::start(store).unwrap();
    t.delete_mark(&mut mtr, &[v, Some(&pk.to_be_bytes())], m, sys(trx))
        .unwrap();
    mtr.commit().unwrap();
}

fn is_dup(r: basalt_btree::Result<()>) -> bool {
    matches!(r, Err(BTreeError::DuplicateKey { .. }))
}

#[test]
fn unique_secondary_refuses_only_live_non_null_duplicates() {
    let s = storage(8 << 20);
    let store = s.store();
    let t = create_tree(
        &s,
        71,
        secondary_layout(),
        IndexKind::Secondary { unique: Some(1) },
    );
    sec_insert(store, &t, Some(b"a"), 1, 5).unwrap();
    assert!(is_dup(sec_insert(store, &t, Some(b"a"), 2, 5)));
    assert!(is_dup(sec_insert(store, &t, Some(b"a"), 0, 5)));
    assert!(
        is_dup(sec_insert(store, &t, Some(b"a"), 1, 5)),
        "same key, live"
    );
    sec_insert(store, &t, None, 3, 5).unwrap();
    sec_insert(store, &t, None, 4, 5).unwrap();
    sec_insert(store, &t, Some(b"b"), 2, 5).unwrap();
    mark(store, &t, Some(b"a"), 1, true, 6);
    sec_insert(store, &t, Some(b"a"), 2, 7).unwrap();
    assert!(is_dup(sec_insert(store, &t, Some(b"a"), 3, 7)));
    // Re-inserting the delete-marked (a, 1) conflicts with the live (a, 2).
    assert!(is_dup(sec_insert(store, &t, Some(b"a"), 1, 7)));
    mark(store, &t, Some(b"a"), 2, true, 8);
    // Now (a, 1) is reused: unmarked in place.
    sec_insert(store, &t, Some(b"a"), 1, 9).unwrap();
    let st = t.validate(store).unwrap();
    // (a,1) (a,2 marked) (NULL,3) (NULL,4) (b,2)
    assert_eq!((st.records, st.delete_marked), (5, 1));

    // A non-unique index takes repeated values; only whole keys collide.
    let n = create_tree(
        &s,
        72,
        secondary_layout(),
        IndexKind::Secondary { unique: None },
    );
    for pk in 0..5 {
        sec_insert(store, &n, Some(b"same"), pk, 1).unwrap();
    }
    assert!(is_dup(sec_insert(store, &n, Some(b"same"), 3, 1)));
    assert_eq!(n.validate(store).unwrap().records, 5);
    drop((t, n));
    s.shutdown().unwrap();
}

#[test]
fn unique_runs_are_checked_across_many_leaves_in_both_directions() {
    let s = storage(16 << 20);
    let store = s.store();
    let t = create_tree(
        &s,
        73,
        secondary_layout(),
        IndexKind::Secondary { unique: Some(1) },
    );
    let v = vec![b'x'; 90];
    // 2000 records with the same value: all but the last get marked first.
    for pk in 0..2000u64 {
        sec_insert(store, &t, Some(&v), pk * 2, 1).unwrap();
        mark(store, &t, Some(&v), pk * 2, true, 1);
    }
    sec_insert(store, &t, Some(b"w"), 0, 1).unwrap();
    sec_insert(store, &t, Some(b"y"), 0, 1).unwrap();
    let leaves = leaf_pages(store, &t).len();
    assert!(leaves > 10, "the run must span many leaves ({leaves})");
    // The live record at the far right end of the run.
    mark(store, &t, Some(&v), 3998, false, 2);
    assert!(
        is_dup(sec_insert(store, &t, Some(&v), 1, 3)),
        "conflict many leaves to the right"
    );
    // Move the live record to the far left end.
    mark(store, &t, Some(&v), 3998, true, 4);
    mark(store, &t, Some(&v), 0, false, 4);
    assert!(
        is_dup(sec_insert(store, &t, Some(&v), 3999, 5)),
        "conflict many leaves to the left"
    );
    // No live record: inserting anywhere in the run works.
    mark(store, &t, Some(&v), 0, true, 6);
    sec_insert(store, &t, Some(&v), 2001, 7).unwrap();
    assert!(is_dup(sec_insert(store, &t, Some(&v), 4001, 7)));
    t.validate(store).unwrap();
    drop(t);
    s.shutdown().unwrap();
}

fn leaf_max_trx(store: &PageStore, id: PageId) -> TrxId {
    let g = store.pool.get(id, LatchMode::Shared).unwrap();
    IndexPage::new(g.data()).unwrap().max_trx_id()
}

#[test]
fn secondary_leaves_carry_the_largest_trx_id_that_changed_them() {
    let s = storage(8 << 20);
    let store = s.store();
    let t = create_tree(
        &s,
        74,
        secondary_layout(),
        IndexKind::Secondary { unique: None },
    );
    let root = PageId::new(t.space(), t.root());
    sec_insert(store, &t, Some(b"k"), 1, 5).unwrap();
    assert_eq!(leaf_max_trx(store, root), TrxId(5));
    sec_insert(store, &t, Some(b"k"), 2, 3).unwrap();
    assert_eq!(leaf_max_trx(store, root), TrxId(5), "never lowered");
    mark(store, &t, Some(b"k"), 1, true, 9);
    assert_eq!(leaf_max_trx(store, root), TrxId(9));
    // Splits hand the max trx id to both halves.
    for pk in 10..2000u64 {
        sec_insert(store, &t, Some(&[b'v'; 60]), pk, 11).unwrap();
    }
    let leaves = leaf_pages(store, &t);
    assert!(leaves.len() > 3);
    for id in leaves {
        assert!(
            leaf_max_trx(store, id) >= TrxId(11),
            "leaf {id} lost its max trx id"
        );
    }
    // Clustered pages keep none: versions live in the records.
    let c = create_tree(&s, 75, clustered_layout(), IndexKind::Clustered);
    insert(store, &c, &[Some(&1u64.to_be_bytes()), None, None], sys(40)).unwrap();
    assert_eq!(
        leaf_max_trx(store, PageId::new(c.space(), c.root())),
        TrxId(0)
    );
    drop((t, c));
    s.shutdown().unwrap();
}

#[test]
fn prefix_bounds_select_records_by_their_leading_fields() {
    let s = storage(8 << 20);
    let store = s.store();
    let t = create_tree(
        &s,
        76,
        secondary_layout(),
        IndexKind::Secondary { unique: None },
    );
    let values: Vec<Option<Vec<u8>>> = vec![
        None,
        Some(b"a".to_vec()),
        Some(b"b".to_vec()),
        Some(b"bb".to_vec()),
        Some(b"c".to_vec()),
    ];
    for (i, v) in values.iter().enumerate() {
        for pk in 0..400u64 {
            sec_insert(store, &t, v.as_deref(), pk * 10 + i as u64, 1).unwrap();
        }
    }
    assert!(t.validate(store).unwrap().height >= 2);
    let collect = |lo: Bound<&[Option<&[u8]>]>,
                   hi: Bound<&[Option<&[u8]>]>,
                   forward: bool|
     -> Vec<(Option<Vec<u8>>, u64)> {
        let mut c = t.cursor(store, lo, hi).unwrap();
        let mut out = Vec::new();
        loop {
            let r = if forward { c.next() } else { c.prev() }.unwrap();
            let Some(r) = r else { break };
            out.push((
                r.field(0).map(<[u8]>::to_vec),
                u64::from_be_bytes(r.field(1).unwrap().try_into().unwrap()),
            ));
        }
        out
    };
    let b: &[Option<&[u8]>] = &[Some(b"b")];
    let only_b = collect(Bound::Included(b), Bound::Included(b), true);
    assert_eq!(only_b.len(), 400);
    assert!(only_b.iter().all(|(v, _)| v.as_deref() == Some(&b"b"[..])));
    assert!(only_b.windows(2).all(|w| w[0].1 < w[1].1));
    let mut back = collect(Bound::Included(b), Bound::Included(b), false);
    back.reverse();
    assert_eq!(back, only_b);
    // Excluded lower bound skips every "b"; "bb" sorts after "b".
    let after_b = collect(Bound::Excluded(b), Bound::Unbounded, true);
    assert_eq!(after_b.len(), 800);
    assert_eq!(after_b[0].0.as_deref(), Some(&b"bb"[..]));
    // NULL sorts first; a NULL prefix bound selects the NULLs.
    let null: &[Option<&[u8]>] = &[None];
    let nulls = collect(Bound::Included(null), Bound::Included(null), true);
    assert_eq!(nulls.len(), 400);
    assert!(nulls.iter().all(|(v, _)| v.is_none()));
    let below_a = collect(Bound::Unbounded, Bound::Excluded(&[Some(b"a")]), false);
    assert_eq!(below_a.len(), 400);
    // A full-key bound in the middle of a value.
    let pk = 2000u64.to_be_bytes();
    let mid: &[Option<&[u8]>] = &[Some(b"b"), Some(&pk)];
    let tail = collect(Bound::Excluded(mid), Bound::Included(b), true);
    assert_eq!(tail.len(), only_b.iter().filter(|(_, p)| *p > 2000).count());
    drop(t);
    s.shutdown().unwrap();
}
