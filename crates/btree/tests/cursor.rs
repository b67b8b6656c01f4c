//! Cursor behaviour: save/restore around concurrent changes, direction
//! changes, bounds at the ends of the tree.

mod support;

use std::ops::Bound;

use basalt_btree::IndexKind;
use basalt_mtr::{Mtr, PageStore};
use support::*;

fn key_of(r: &basalt_page::rec::RecordRef<'_>) -> u64 {
    u64::from_be_bytes(r.field(0).unwrap().try_into().unwrap())
}

fn remove(store: &PageStore, t: &basalt_btree::BTree, k: u64) {
    let mut mtr = Mtr::start(store).unwrap();
    t.remove(&mut mtr, &[Some(&k.to_be_bytes())]).unwrap();
    mtr.commit().unwrap();
}

#[test]
fn a_saved_cursor_continues_around_changes_made_meanwhile() {
    let s = storage(8 << 20);
    let store = s.store();
    let t = create_tree(&s, 81, clustered_layout(), IndexKind::Clustered);
    for k in (0..4000u64).step_by(2) {
        insert(
            store,
            &t,
            &[Some(&k.to_be_bytes()), Some(&value(k, 1, 120)), None],
            sys(1),
        )
        .unwrap();
    }
    let mut c = t.cursor(store, Bound::Unbounded, Bound::Unbounded).unwrap();
    while key_of(&c.next().unwrap().unwrap()) < 100 {}
    assert_eq!(key_of(&c.current().unwrap().unwrap()), 100);
    c.save().unwrap();
    // Changes while the cursor holds no latch (also reshaping the tree).
    remove(store, &t, 102);
    insert(
        store,
        &t,
        &[Some(&101u64.to_be_bytes()), None, None],
        sys(2),
    )
    .unwrap();
    for k in (104..2000u64).step_by(2) {
        remove(store, &t, k);
    }
    assert_eq!(
        key_of(&c.restore().unwrap().unwrap()),
        100,
        "the saved record still exists"
    );
    assert_eq!(key_of(&c.next().unwrap().unwrap()), 101);
    assert_eq!(key_of(&c.next().unwrap().unwrap()), 2000);
    assert_eq!(key_of(&c.prev().unwrap().unwrap()), 101);
    // The saved record itself disappears.
    c.save().unwrap();
    remove(store, &t, 101);
    assert!(c.restore().unwrap().is_none());
    assert_eq!(key_of(&c.next().unwrap().unwrap()), 2000);
    c.save().unwrap();
    remove(store, &t, 2000);
    assert_eq!(key_of(&c.prev().unwrap().unwrap()), 100);
    // Backward across many leaves, saving at every step.
    let mut last = 100;
    c = t.cursor(store, Bound::Unbounded, Bound::Unbounded).unwrap();
    let mut seen = 0;
    while let Some(r) = c.prev().unwrap() {
        let k = key_of(&r);
        assert!(seen == 0 || k < last, "{k} after {last}");
        last = k;
        seen += 1;
        c.save().unwrap();
    }
    assert_eq!(seen as u64, t.validate(store).unwrap().records);
    drop((c, t));
    s.shutdown().unwrap();
}

#[test]
fn direction_changes_and_bounds_at_both_ends() {
    let s = storage(8 << 20);
    let store = s.store();
    let t = create_tree(&s, 82, clustered_layout(), IndexKind::Clustered);
    for k in 10..1010u64 {
        insert(
            store,
            &t,
            &[Some(&k.to_be_bytes()), Some(&value(k, 1, 150)), None],
            sys(1),
        )
        .unwrap();
    }
    let lo = 100u64.to_be_bytes();
    let hi = 900u64.to_be_bytes();
    let mut c = t
        .cursor(
            store,
            Bound::Excluded(&[Some(&lo[..])][..]),
            Bound::Included(&[Some(&hi[..])][..]),
        )
        .unwrap();
    assert_eq!(
        key_of(&c.prev().unwrap().unwrap()),
        900,
        "backward starts at the upper bound"
    );
    assert_eq!(key_of(&c.prev().unwrap().unwrap()), 899);
    assert_eq!(key_of(&c.next().unwrap().unwrap()), 900);
    assert!(c.next().unwrap().is_none(), "past the upper bound");
    assert!(c.next().unwrap().is_none(), "stays past the end");
    assert_eq!(
        key_of(&c.prev().unwrap().unwrap()),
        900,
        "comes back from the end"
    );
    let mut n = 1;
    while c.prev().unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, 800, "keys 101..=900");
    assert_eq!(
        key_of(&c.next().unwrap().unwrap()),
        101,
        "comes back from the start"
    );
    // Bounds outside the tree and empty ranges.
    let big = 5000u64.to_be_bytes();
    c = t
        .cursor(
            store,
            Bound::Included(&[Some(&big[..])][..]),
            Bound::Unbounded,
        )
        .unwrap();
    assert!(c.next().unwrap().is_none());
    c = t
        .cursor(
            store,
            Bound::Unbounded,
            Bound::Excluded(&[Some(&10u64.to_be_bytes()[..])][..]),
        )
        .unwrap();
    assert!(c.prev().unwrap().is_none());
    assert!(c.next().unwrap().is_none());
    c = t
        .cursor(
            store,
            Bound::Included(&[Some(&hi[..])][..]),
            Bound::Excluded(&[Some(&hi[..])][..]),
        )
        .unwrap();
    assert!(c.next().unwrap().is_none());
    // Rows materialise.
    c = t
        .cursor(
            store,
            Bound::Included(&[Some(&lo[..])][..]),
            Bound::Unbounded,
        )
        .unwrap();
    c.next().unwrap();
    let row = c.row().unwrap().unwrap();
    assert_eq!(row.values[1].as_deref(), Some(&value(100, 1, 150)[..]));
    assert!(t
        .cursor(store, Bound::Included(&[][..]), Bound::Unbounded)
        .is_err());
    drop((c, t));
    s.shutdown().unwrap();
}

#[test]
fn an_empty_tree_has_nothing_in_any_direction() {
    let s = storage(8 << 20);
    let store = s.store();
    let t = create_tree(&s, 83, clustered_layout(), IndexKind::Clustered);
    let mut c = t.cursor(store, Bound::Unbounded, Bound::Unbounded).unwrap();
    assert!(c.next().unwrap().is_none());
    assert!(c.prev().unwrap().is_none());
    assert!(t
        .get(store, &[Some(&1u64.to_be_bytes())])
        .unwrap()
        .is_none());
    let st = t.validate(store).unwrap();
    assert_eq!((st.height, st.records, st.leaf_pages()), (1, 0, 1));
    drop((c, t));
    s.shutdown().unwrap();
}
