//! Abort safety: failed operations and dropped mini-transactions leave the
//! tree exactly as it was.

mod support;

use std::sync::mpsc;
use std::time::Duration;

use basalt_btree::{BTree, BTreeError, BulkRecord, IndexKind};
use basalt_buf::LatchMode;
use basalt_common::IndexId;
use basalt_mtr::Mtr;
use support::*;

#[test]
fn a_dropped_multi_operation_mini_transaction_changes_nothing() {
    let s = storage(16 << 20);
    let store = s.store();
    let t = create_tree(&s, 61, clustered_layout(), IndexKind::Clustered);
    for k in (0..1200u64).step_by(2) {
        let small = value(k, 1, (k % 150) as usize);
        insert(
            store,
            &t,
            &[
                Some(&k.to_be_bytes()),
                Some(&small),
                Some(&value(k, 2, 300)),
            ],
            sys(1),
        )
        .unwrap();
    }
    let rows = rows_all(store, &t);
    let stats = t.validate(store).unwrap();
    let usage = space_usage(store, t.space());
    let lsn = store.log.current_lsn();
    let counters = t.counters();
    {
        let mut mtr = Mtr::start(store).unwrap();
        for k in (1..1200u64).step_by(2) {
            t.insert(
                &mut mtr,
                &[Some(&k.to_be_bytes()), None, Some(&value(k, 3, 900))],
                sys(2),
            )
            .unwrap();
        }
        for k in (0..1200u64).step_by(4) {
            t.remove(&mut mtr, &[Some(&k.to_be_bytes())]).unwrap();
        }
        for k in (2..1200u64).step_by(8) {
            let kb = k.to_be_bytes();
            t.update(
                &mut mtr,
                &[Some(&kb)],
                &[Some(&kb), Some(b"u"), Some(&value(k, 4, 3000))],
                sys(3),
            )
            .unwrap();
            t.delete_mark(&mut mtr, &[Some(&kb)], true, sys(4)).unwrap();
        }
        assert!(mtr.has_changes());
        // Dropped without commit.
    }
    let after = t.counters();
    assert!(
        after.splits > counters.splits && after.merges > counters.merges,
        "{after:?}"
    );
    assert_eq!(
        store.log.current_lsn(),
        lsn,
        "nothing of the dropped mini-transaction was logged"
    );
    assert_eq!(t.validate(store).unwrap(), stats);
    assert!(rows_all(store, &t) == rows, "rows changed");
    assert_eq!(
        space_usage(store, t.space()),
        usage,
        "the space header changed"
    );
    drop(t);
    s.shutdown().unwrap();
}

/// One operation of the clean-error table.
type Op<'a> = Box<dyn Fn(&mut Mtr<'_>) -> basalt_btree::Result<()> + 'a>;

#[test]
fn clean_errors_leave_the_mini_transaction_empty() {
    let s = storage(8 << 20);
    let store = s.store();
    let t = create_tree(&s, 62, clustered_layout(), IndexKind::Clustered);
    for k in 0..300u64 {
        insert(
            store,
            &t,
            &[Some(&k.to_be_bytes()), Some(&value(k, 1, 120)), None],
            sys(1),
        )
        .unwrap();
    }
    let k = 5u64.to_be_bytes();
    let other = 6u64.to_be_bytes();
    let missing = 1000u64.to_be_bytes();
    let cases: Vec<(&str, Op<'_>)> = vec![
        (
            "duplicate",
            Box::new(|m| t.insert(m, &[Some(&k), None, None], sys(2))),
        ),
        (
            "update missing",
            Box::new(|m| t.update(m, &[Some(&missing)], &[Some(&missing), None, None], sys(2))),
        ),
        (
            "mark missing",
            Box::new(|m| t.delete_mark(m, &[Some(&missing)], true, sys(2))),
        ),
        (
            "remove missing",
            Box::new(|m| t.remove(m, &[Some(&missing)])),
        ),
        (
            "key changed",
            Box::new(|m| t.update(m, &[Some(&k)], &[Some(&other), None, None], sys(2))),
        ),
        (
            "field count",
            Box::new(|m| t.insert(m, &[Some(&k), None], sys(2))),
        ),
        (
            "null key",
            Box::new(|m| t.insert(m, &[None, None, None], sys(2))),
        ),
        ("short key", Box::new(|m| t.remove(m, &[]))),
    ];
    for (what, op) in cases {
        let mut mtr = Mtr::start(store).unwrap();
        let err = op(&mut mtr).expect_err(what);
        assert!(err.leaves_mtr_clean(), "{what}: {err}");
        assert!(!err.is_corruption(), "{what}: {err}");
        assert!(
            mtr.commit().unwrap().is_none(),
            "{what}: the mini-transaction has changes"
        );
    }
    assert_eq!(t.validate(store).unwrap().records, 300);
    drop(t);
    s.shutdown().unwrap();
}

/// A unique-secondary insert whose conflict sits on the left neighbour
/// while another thread holds that neighbour exclusively: the optimistic
/// path cannot look (`try_get` fails), restarts pessimistically, waits for
/// the neighbour in latch order, finds the conflict and fails without a
/// trace.
#[test]
fn a_duplicate_found_after_a_pessimistic_restart_changes_nothing() {
    let s = storage(16 << 20);
    let store = s.store();
    let unique = IndexKind::Secondary { unique: Some(1) };
    // Groups of ten records share the indexed value; all delete-marked.
    let group = |i: u64| format!("{:090}", i / 10).into_bytes();
    let t = BTree::bulk_load(
        store,
        new_space(&s),
        IndexId(63),
        secondary_layout(),
        unique,
        (0..3000u64).map(|i| BulkRecord {
            values: vec![Some(group(i)), Some(i.to_be_bytes().to_vec())],
            sys: sys(1),
            delete_marked: true,
        }),
    )
    .unwrap();
    // A leaf boundary inside a group.
    let leaves = leaf_pages(store, &t);
    let (left, a, b) = leaves
        .windows(2)
        .find_map(|w| {
            let (l, r) = (leaf_keys(store, &t, w[0]), leaf_keys(store, &t, w[1]));
            let (a, b) = (l.last().unwrap().clone(), r[0].clone());
            (a[0] == b[0]).then_some((w[0], a, b))
        })
        .expect("a leaf boundary inside a group");
    let key = |k: &Vec<Option<Vec<u8>>>| -> Vec<Vec<u8>> {
        k.iter().map(|f| f.clone().unwrap()).collect()
    };
    let (a, b) = (key(&a), key(&b));
    // The last record of the left leaf becomes live.
    let mut mtr = Mtr::start(store).unwrap();
    t.delete_mark(&mut mtr, &[Some(&a[0]), Some(&a[1])], false, sys(2))
        .unwrap();
    mtr.commit().unwrap();
    let rows = rows_all(store, &t);
    let before = t.counters();

    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut mtr = Mtr::start(store).unwrap();
            let _held = mtr.get(left, LatchMode::Exclusive).unwrap();
            tx.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(300));
            drop(mtr);
        });
        rx.recv().unwrap();
        // Re-insert the first record of the right leaf (delete-marked) live:
        // same unique value as the live record on the left leaf.
        let mut mtr = Mtr::start(store).unwrap();
        let err = t
            .insert(&mut mtr, &[Some(&b[0]), Some(&b[1])], sys(3))
            .unwrap_err();
        assert!(matches!(err, BTreeError::DuplicateKey { .. }), "{err}");
        assert!(
            mtr.commit().unwrap().is_none(),
            "the failed insert left changes"
        );
    });
    let after = t.counters();
    assert_eq!(
        after.pessimistic,
        before.pessimistic + 1,
        "the insert must have restarted pessimistically"
    );
    assert!(rows_all(store, &t) == rows);
    t.validate(store).unwrap();
    // Without the conflict the same insert succeeds.
    let mut mtr = Mtr::start(store).unwrap();
    t.delete_mark(&mut mtr, &[Some(&a[0]), Some(&a[1])], true, sys(4))
        .unwrap();
    t.insert(&mut mtr, &[Some(&b[0]), Some(&b[1])], sys(4))
        .unwrap();
    mtr.commit().unwrap();
    let row = t
        .get_row(store, &[Some(&b[0]), Some(&b[1])])
        .unwrap()
        .unwrap();
    assert!(!row.delete_marked);
    drop(t);
    s.shutdown().unwrap();
}
