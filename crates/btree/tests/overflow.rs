//! Long values: overflow chains are written, read back, and returned to
//! the tablespace free list when their record is updated or removed.

mod support;

use basalt_btree::{BTree, BTreeError, IndexKind};
use basalt_common::SpaceId;
use basalt_mtr::{Mtr, PageStore};
use basalt_page::overflow::pages_needed;
use support::*;

/// Every page below the free limit is the header, a tree page, an
/// overflow page, or on the free list.
fn assert_no_leak(store: &PageStore, t: &BTree, space: SpaceId) -> basalt_btree::TreeStats {
    let st = t.validate(store).unwrap();
    let (free_len, free_limit) = space_usage(store, space);
    assert_eq!(
        u64::from(free_len),
        u64::from(free_limit) - 1 - st.total_pages(),
        "free list {free_len}, free limit {free_limit}, tree {st:?}"
    );
    st
}

#[test]
fn overflow_pages_return_to_the_free_list_on_update_and_remove() {
    let s = storage(16 << 20);
    let store = s.store();
    let t = create_tree(&s, 51, clustered_layout(), IndexKind::Clustered);
    let space = t.space();
    let big = 100 * 1024;
    for k in 0..20u64 {
        let v = value(k, 1, big);
        insert(
            store,
            &t,
            &[Some(&k.to_be_bytes()), Some(b"x"), Some(&v)],
            sys(1),
        )
        .unwrap();
    }
    let st = assert_no_leak(store, &t, space);
    assert_eq!(st.external_fields, 20);
    assert_eq!(st.overflow_pages, 20 * pages_needed(big as u64));
    let (_, limit_full) = space_usage(store, space);

    // Shrink half of them to 40 KiB: old chains freed, new ones reuse pages.
    for k in 0..10u64 {
        let v = value(k, 2, 40 * 1024);
        let kb = k.to_be_bytes();
        let mut mtr = Mtr::start(store).unwrap();
        t.update(&mut mtr, &[Some(&kb)], &[Some(&kb), None, Some(&v)], sys(2))
            .unwrap();
        mtr.commit().unwrap();
    }
    let st = assert_no_leak(store, &t, space);
    assert_eq!(
        st.overflow_pages,
        10 * pages_needed(big as u64) + 10 * pages_needed(40 * 1024)
    );
    let (free_len, limit) = space_usage(store, space);
    // New chains are written before the old ones are freed: only the first
    // update may grow the space, later ones reuse freed pages.
    assert!(
        limit <= limit_full + pages_needed(40 * 1024) as u32,
        "freed pages must be reused: limit {limit}, was {limit_full}"
    );
    assert!(free_len > 0);
    // Values read back.
    for k in 0..20u64 {
        let row = t
            .get_row(store, &[Some(&k.to_be_bytes())])
            .unwrap()
            .unwrap();
        let want = if k < 10 {
            value(k, 2, 40 * 1024)
        } else {
            value(k, 1, big)
        };
        assert_eq!(row.values[2].as_deref(), Some(&want[..]), "key {k}");
    }
    // Inline again: no overflow pages for those.
    for k in 10..20u64 {
        let kb = k.to_be_bytes();
        let mut mtr = Mtr::start(store).unwrap();
        t.update(
            &mut mtr,
            &[Some(&kb)],
            &[Some(&kb), None, Some(b"short")],
            sys(3),
        )
        .unwrap();
        mtr.commit().unwrap();
    }
    let st = assert_no_leak(store, &t, space);
    assert_eq!(st.external_fields, 10);
    // Remove everything: only the header and the root stay allocated.
    for k in 0..20u64 {
        let mut mtr = Mtr::start(store).unwrap();
        t.remove(&mut mtr, &[Some(&k.to_be_bytes())]).unwrap();
        mtr.commit().unwrap();
    }
    let st = assert_no_leak(store, &t, space);
    assert_eq!((st.records, st.overflow_pages), (0, 0));
    let (free_len, free_limit) = space_usage(store, space);
    assert_eq!(free_len, free_limit - 2);
    drop(t);
    s.shutdown().unwrap();
}

#[test]
fn drop_tree_frees_every_page() {
    let s = storage(16 << 20);
    let store = s.store();
    let t = create_tree(&s, 52, clustered_layout(), IndexKind::Clustered);
    let space = t.space();
    for k in 0..2000u64 {
        let big = (k % 50 == 0).then(|| value(k, 1, 30_000));
        insert(
            store,
            &t,
            &[
                Some(&k.to_be_bytes()),
                Some(&value(k, 0, 150)),
                big.as_deref(),
            ],
            sys(1),
        )
        .unwrap();
    }
    let st = assert_no_leak(store, &t, space);
    assert!(st.height >= 2 && st.overflow_pages > 0, "{st:?}");
    let freed = t.drop_tree(store).unwrap();
    assert_eq!(freed, st.total_pages());
    let (free_len, free_limit) = space_usage(store, space);
    assert_eq!(
        free_len,
        free_limit - 1,
        "every page but the header is free again"
    );
    s.shutdown().unwrap();
}

#[test]
fn a_sixteen_mib_value_round_trips_through_mini_transactions_of_bounded_size() {
    let s = storage(48 << 20);
    let store = s.store();
    let t = create_tree(&s, 53, clustered_layout(), IndexKind::Clustered);
    let len = 16 << 20;
    let v = value(7, 1, len);
    let lsn = store.log.current_lsn();
    insert(
        store,
        &t,
        &[Some(&7u64.to_be_bytes()), None, Some(&v)],
        sys(1),
    )
    .unwrap();
    let logged = store.log.current_lsn().since(lsn);
    assert!(logged > len as u64, "the chain is logged ({logged} bytes)");
    assert!(
        store.log.max_group_size() < len as u64,
        "the test must need more than one mini-transaction"
    );
    let row = t
        .get_row(store, &[Some(&7u64.to_be_bytes())])
        .unwrap()
        .unwrap();
    assert!(
        row.values[2].as_deref() == Some(&v[..]),
        "16 MiB value differs"
    );
    let st = assert_no_leak(store, &t, t.space());
    assert_eq!(st.overflow_pages, pages_needed(len as u64));
    let mut mtr = Mtr::start(store).unwrap();
    t.remove(&mut mtr, &[Some(&7u64.to_be_bytes())]).unwrap();
    mtr.commit().unwrap();
    let (free_len, free_limit) = space_usage(store, t.space());
    assert_eq!(free_len, free_limit - 2);
    drop(t);
    s.shutdown().unwrap();
}

#[test]
#[ignore = "writes a 64 MiB value (max_allowed_packet); run with --ignored"]
fn a_sixty_four_mib_value_round_trips() {
    let s = storage(160 << 20);
    let store = s.store();
    let t = create_tree(&s, 54, clustered_layout(), IndexKind::Clustered);
    let len = 64 << 20;
    let v = value(9, 1, len);
    insert(
        store,
        &t,
        &[Some(&9u64.to_be_bytes()), None, Some(&v)],
        sys(1),
    )
    .unwrap();
    let row = t
        .get_row(store, &[Some(&9u64.to_be_bytes())])
        .unwrap()
        .unwrap();
    assert!(
        row.values[2].as_deref() == Some(&v[..]),
        "64 MiB value differs"
    );
    assert_no_leak(store, &t, t.space());
    let mut mtr = Mtr::start(store).unwrap();
    t.remove(&mut mtr, &[Some(&9u64.to_be_bytes())]).unwrap();
    mtr.commit().unwrap();
    let (free_len, free_limit) = space_usage(store, t.space());
    assert_eq!(free_len, free_limit - 2);
    drop(t);
    s.shutdown().unwrap();
}

#[test]
fn a_mini_transaction_holding_the_space_header_carries_only_what_fits() {
    let s = storage(16 << 20);
    let store = s.store();
    let t = create_tree(&s, 55, clustered_layout(), IndexKind::Clustered);
    let mut mtr = Mtr::start(store).unwrap();
    // Enough records in one mini-transaction to split the root: it now
    // holds the space header until commit.
    for k in 0..200u64 {
        t.insert(
            &mut mtr,
            &[Some(&k.to_be_bytes()), Some(&value(k, 0, 150)), None],
            sys(1),
        )
        .unwrap();
    }
    // A long value still fits into this mini-transaction ...
    let v = value(500, 1, 60_000);
    t.insert(
        &mut mtr,
        &[Some(&500u64.to_be_bytes()), None, Some(&v)],
        sys(1),
    )
    .unwrap();
    // ... a huge one is refused before anything changes.
    let huge = value(501, 1, 8 << 20);
    let err = t
        .insert(
            &mut mtr,
            &[Some(&501u64.to_be_bytes()), None, Some(&huge)],
            sys(1),
        )
        .unwrap_err();
    assert!(matches!(err, BTreeError::ValueTooLarge { .. }), "{err}");
    assert!(err.leaves_mtr_clean());
    // A refused record whose chain was already written in this
    // mini-transaction gives its pages back in it.
    let dup = value(7, 1, 50_000);
    let err = t
        .insert(
            &mut mtr,
            &[Some(&7u64.to_be_bytes()), None, Some(&dup)],
            sys(1),
        )
        .unwrap_err();
    assert!(matches!(err, BTreeError::DuplicateKey { .. }), "{err}");
    assert!(err.leaves_mtr_clean());
    mtr.commit().unwrap();
    let st = assert_no_leak(store, &t, t.space());
    assert_eq!(st.records, 201);
    let row = t
        .get_row(store, &[Some(&500u64.to_be_bytes())])
        .unwrap()
        .unwrap();
    assert_eq!(row.values[2].as_deref(), Some(&v[..]));
    drop(t);
    s.shutdown().unwrap();
}

#[test]
fn records_that_cannot_fit_are_refused() {
    use basalt_page::rec::{FieldDef, RecordLayout};
    use std::sync::Arc;
    let s = storage(8 << 20);
    let store = s.store();
    // Many short fields cannot go external.
    let layout = Arc::new(
        RecordLayout::new(
            std::iter::once(FieldDef::fixed(8))
                .chain((0..40).map(|_| FieldDef::var(250)))
                .collect(),
            1,
            true,
        )
        .unwrap(),
    );
    let t = create_tree(&s, 56, layout, IndexKind::Clustered);
    let filler = vec![1u8; 250];
    let mut vals: Vec<Option<&[u8]>> = vec![Some(&[0u8; 8][..])];
    vals.extend((0..40).map(|_| Some(&filler[..])));
    let mut mtr = Mtr::start(store).unwrap();
    let err = t.insert(&mut mtr, &vals, sys(1)).unwrap_err();
    assert!(matches!(err, BTreeError::RecordTooLarge { .. }), "{err}");
    assert!(mtr.commit().unwrap().is_none());
    // A key too long for node pointers.
    let layout = Arc::new(
        RecordLayout::new(vec![FieldDef::var(6000), FieldDef::fixed(8)], 1, true).unwrap(),
    );
    let t = create_tree(&s, 57, layout, IndexKind::Clustered);
    let key = vec![3u8; 5000];
    let mut mtr = Mtr::start(store).unwrap();
    let err = t
        .insert(&mut mtr, &[Some(&key), Some(&[0u8; 8])], sys(1))
        .unwrap_err();
    assert!(matches!(err, BTreeError::KeyTooLong { .. }), "{err}");
    assert!(mtr.commit().unwrap().is_none());
    s.shutdown().unwrap();
}
