//! Batches: put/update/delete semantics, all-or-nothing on every kind of
//! failure (a bad value in mid-batch, an oversized batch, a failing log),
//! durability once `apply` returned, and atomicity at every crash point.

mod support;

use basalt_catalog::{
    AccountKey, AccountRow, ApplyReport, Catalog, CatalogChange, CatalogError, CatalogSnapshot,
    DbGrantKey, SchemaKey, SchemaRow, TableGrantKey,
};
use support::*;

#[test]
fn put_inserts_then_replaces_and_delete_removes() {
    let node = Node::create();
    let catalog = node.catalog();
    let store = node.store();
    let r = catalog
        .apply(
            store,
            &[
                CatalogChange::PutAccount(account("alice", "LocalHost", 1)),
                CatalogChange::PutAccount(account("Alice", "%", 2)),
                CatalogChange::PutDbGrant(db_grant("alice", "localhost", "shop", 0b101)),
                CatalogChange::PutTableGrant(table_grant("alice", "localhost", "shop", "t", 1)),
                CatalogChange::PutSchema(schema("shop")),
                CatalogChange::PutSchema(schema("Shop")),
            ],
        )
        .unwrap();
    assert_eq!((r.inserted, r.updated, r.deleted, r.absent), (6, 0, 0, 0));
    assert!(r.lsn.is_some(), "a batch that changed pages has an LSN");
    assert!(
        store.log.flushed_lsn() >= r.lsn.unwrap(),
        "durable when apply returns"
    );

    let rows = catalog.load_all(store).unwrap();
    // Hosts come back lowercased; user and schema names keep their case
    // and sort byte-wise ("Alice" < "alice", "Shop" < "shop").
    let accounts: Vec<(&str, &str)> = rows
        .accounts
        .iter()
        .map(|a| (a.user.as_str(), a.host.as_str()))
        .collect();
    assert_eq!(accounts, [("Alice", "%"), ("alice", "localhost")]);
    let names: Vec<&str> = rows.schemata.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["Shop", "shop"]);
    let mut expected_alice = account("alice", "localhost", 1);
    expected_alice.host = "localhost".into();
    assert_eq!(rows.accounts[1], expected_alice);

    // The same key in another host case is the same row: replaced.
    let mut changed = account("alice", "LOCALHOST", 9);
    changed.account_locked = true;
    changed.password_expired = true;
    changed.password_last_changed = None;
    let r = catalog
        .apply(
            store,
            &[
                CatalogChange::PutAccount(changed.clone()),
                CatalogChange::PutDbGrant(db_grant("alice", "localhost", "shop", u64::MAX)),
                CatalogChange::DeleteTableGrant(TableGrantKey {
                    user: "alice".into(),
                    host: "LocalHost".into(),
                    db: "shop".into(),
                    table: "t".into(),
                }),
                CatalogChange::DeleteSchema(SchemaKey {
                    name: "nope".into(),
                }),
                CatalogChange::DeleteAccount(AccountKey {
                    user: "ALICE".into(),
                    host: "%".into(),
                }),
            ],
        )
        .unwrap();
    assert_eq!((r.inserted, r.updated, r.deleted, r.absent), (0, 2, 1, 2));
    let rows = catalog.load_all(store).unwrap();
    changed.host = "localhost".into();
    assert_eq!(rows.accounts.len(), 2);
    assert_eq!(rows.accounts[1], changed);
    assert_eq!(rows.db_grants[0].privileges, u64::MAX);
    assert!(rows.table_grants.is_empty());

    // Point lookups fold the host like the key does; scans of one table
    // agree with load_all; a key of another table is refused.
    let key = AccountKey {
        user: "alice".into(),
        host: "LocalHOST".into(),
    };
    assert_eq!(
        catalog.get::<AccountRow, _>(store, &key).unwrap(),
        Some(changed.clone())
    );
    let missing = AccountKey {
        user: "alice".into(),
        host: "%".into(),
    };
    assert_eq!(catalog.get::<AccountRow, _>(store, &missing).unwrap(), None);
    assert_eq!(catalog.scan::<SchemaRow>(store).unwrap(), rows.schemata);
    assert!(catalog
        .get::<AccountRow, _>(
            store,
            &SchemaKey {
                name: "shop".into()
            }
        )
        .unwrap_err()
        .is_invalid_input());

    // An empty batch, and a batch of deletes that find nothing, change
    // nothing and write no redo.
    assert_eq!(catalog.apply(store, &[]).unwrap(), ApplyReport::default());
    let r = catalog
        .apply(
            store,
            &[CatalogChange::DeleteDbGrant(DbGrantKey {
                user: "x".into(),
                host: "y".into(),
                db: "z".into(),
            })],
        )
        .unwrap();
    assert_eq!((r.absent, r.lsn), (1, None));
    assert_eq!(checked_rows(&catalog, store), rows);
}

/// `changes` with a refused change at position `at`.
fn with_bad(mut changes: Vec<CatalogChange>, at: usize, bad: CatalogChange) -> Vec<CatalogChange> {
    changes.insert(at.min(changes.len()), bad);
    changes
}

#[test]
fn a_refused_change_in_mid_batch_leaves_nothing_crash() {
    let node = Node::create();
    let catalog = node.catalog();
    catalog.apply(node.store(), &filler("base", 30)).unwrap();
    let before = catalog.load_all(node.store()).unwrap();

    let too_long_user = "u".repeat(33);
    let bads = [
        CatalogChange::PutAccount(account(&too_long_user, "h", 1)),
        CatalogChange::PutAccount(account("ok", &"h".repeat(256), 1)),
        CatalogChange::PutSchema(schema(&"s".repeat(65))),
        CatalogChange::DeleteAccount(AccountKey {
            user: too_long_user.clone(),
            host: "h".into(),
        }),
        CatalogChange::PutTableGrant(table_grant("ok", "h", "db", "nul\0", 1)),
        {
            let mut a = account("ok", "h", 1);
            a.auth_string = vec![1; 256];
            CatalogChange::PutAccount(a)
        },
        {
            let mut a = account("ok", "h", 1);
            a.plugin = "plügin".into();
            CatalogChange::PutAccount(a)
        },
    ];
    // Valid changes first (inserts with splits, updates of existing rows,
    // deletes), then the refused one, then more.
    let mut valid = filler("new", 60);
    valid.extend(filler("base", 10));
    valid.push(CatalogChange::DeleteAccount(AccountKey {
        user: "base0003".into(),
        host: before.accounts[3].host.clone(),
    }));
    for (i, bad) in bads.iter().enumerate() {
        let at = [valid.len(), valid.len() / 2, 0][i % 3];
        let batch = with_bad(valid.clone(), at, bad.clone());
        let err = catalog.apply(node.store(), &batch).unwrap_err();
        assert!(
            matches!(err, CatalogError::InvalidValue { .. }) && err.is_invalid_input(),
            "bad change {i}: {err}"
        );
        assert_eq!(
            checked_rows(&catalog, node.store()),
            before,
            "bad change {i} at {at}: nothing of the batch is visible"
        );
    }
    // Not poisoned: the valid part alone applies.
    catalog.apply(node.store(), &valid).unwrap();
    let after = catalog.load_all(node.store()).unwrap();
    assert_eq!(after.accounts.len(), 30 + 60 - 1);
    drop(catalog);

    // After a crash: the valid batch is there, no trace of the refused ones.
    let node = node.crash();
    let catalog = node.catalog();
    assert_eq!(checked_rows(&catalog, node.store()), after);
}

#[test]
fn an_oversized_batch_is_refused_whole() {
    let node = Node::create();
    let catalog = node.catalog();
    catalog.apply(node.store(), &filler("a", 10)).unwrap();
    let before = catalog.load_all(node.store()).unwrap();
    // Far more redo than the 512 KiB group limit of a 2 x 4 MiB log.
    let batch: Vec<CatalogChange> = (0..1200)
        .map(|i| {
            let mut a = account(&format!("big{i:05}"), &"h".repeat(255), i);
            a.auth_string = vec![b'x'; 255];
            CatalogChange::PutAccount(a)
        })
        .collect();
    let err = catalog.apply(node.store(), &batch).unwrap_err();
    assert!(
        matches!(err, CatalogError::BatchTooLarge { len, max } if len > max),
        "{err}"
    );
    assert_eq!(checked_rows(&catalog, node.store()), before);
    // Split in parts, the same rows go in.
    for part in batch.chunks(300) {
        catalog.apply(node.store(), part).unwrap();
    }
    assert_eq!(
        checked_rows(&catalog, node.store()).accounts.len(),
        10 + 1200
    );
}

#[test]
fn a_failing_log_write_loses_the_batch_and_poisons_the_catalog_crash() {
    let node = Node::create();
    let catalog = node.catalog();
    catalog.apply(node.store(), &filler("keep", 20)).unwrap();
    let before = catalog.load_all(node.store()).unwrap();
    // Nothing dirty: no background checkpoint competes for the log file.
    node.storage.checkpoint_now().unwrap();
    node.plan.fail_write_to("ib_logfile", 1);

    let err = catalog
        .apply(node.store(), &filler("lost", 20))
        .unwrap_err();
    eprintln!("apply under a failing log: {err}");
    match &err {
        // The log failed under the committed batch: its fate is unknown to
        // the running server, so the catalog refuses to serve it.
        CatalogError::Poisoned { .. } => {
            assert!(matches!(
                catalog.load_all(node.store()),
                Err(CatalogError::Poisoned { .. })
            ));
            assert!(matches!(
                catalog.apply(node.store(), &filler("more", 1)),
                Err(CatalogError::Poisoned { .. })
            ));
        }
        // The log had already failed (a background write hit the fault):
        // the commit was refused and undone.
        CatalogError::Mtr(_) => {
            assert_eq!(catalog.load_all(node.store()).unwrap(), before);
        }
        other => panic!("unexpected error {other}"),
    }
    drop(catalog);

    // After the restart the batch is gone, the earlier one intact.
    let node = node.crash();
    let catalog = node.catalog();
    assert_eq!(checked_rows(&catalog, node.store()), before);
    catalog.apply(node.store(), &filler("again", 5)).unwrap();
}

#[test]
fn a_batch_is_durable_once_apply_returned_crash() {
    let node = Node::create();
    let catalog = node.catalog();
    for round in 0..3 {
        catalog
            .apply(node.store(), &filler(&format!("r{round}_"), 15))
            .unwrap();
    }
    let rows = catalog.load_all(node.store()).unwrap();
    drop(catalog);
    // Power fails right after the last apply returned.
    let node = node.crash();
    let catalog = node.catalog();
    assert_eq!(checked_rows(&catalog, node.store()), rows);
}

/// Runs `batch` on a data directory holding `base`, crashing at write `n`
/// (counted from the start of the batch; the run continues with a full
/// checkpoint so page writes are crash points too). Returns whether apply
/// returned Ok and what the recovered catalog holds.
fn run_with_crash_at(
    base: &[CatalogChange],
    batch: &[CatalogChange],
    n: Option<(u64, Option<usize>)>,
) -> (bool, CatalogSnapshot, u64) {
    let node = Node::create();
    let catalog = node.catalog();
    catalog.apply(node.store(), base).unwrap();
    node.storage.checkpoint_now().unwrap();
    let start = node.plan.writes_seen();
    match n {
        Some((n, None)) => node.plan.crash_at_write(n),
        Some((n, Some(keep))) => node.plan.crash_at_write_torn(n, keep),
        None => {}
    }
    let ok = catalog.apply(node.store(), batch).is_ok();
    let _ = node.storage.checkpoint_now();
    let writes = node.plan.writes_seen() - start;
    drop(catalog);
    let node = Node::open(node.crash_image());
    let catalog = Catalog::open_or_bootstrap(node.store()).expect("reopen after crash");
    (ok, checked_rows(&catalog, node.store()), writes)
}

#[test]
fn a_crash_at_any_write_keeps_a_batch_whole_or_drops_it_whole_crash() {
    let base = filler("base", 25);
    // Inserts with splits, updates and deletes across all four tables.
    let mut batch = filler("new", 25);
    batch.extend(filler("base", 5).into_iter().map(|c| match c {
        CatalogChange::PutSchema(s) => CatalogChange::DeleteSchema(s.key()),
        other => other,
    }));
    let (ok, after, writes) = run_with_crash_at(&base, &batch, None);
    assert!(ok);
    let (_, before, _) = run_with_crash_at(&base, &[], None);
    assert_ne!(before, after);
    assert!(writes >= 3, "the batch and the checkpoint write ({writes})");

    let (mut lost, mut kept) = (0, 0);
    // Every write lost whole, and the first write (the batch's redo, many
    // log blocks) torn after one block, one write unit and two.
    let points = (1..=writes + 1)
        .map(|n| (n, None))
        .chain([512, 4096, 8192].map(|keep| (1, Some(keep))));
    for (n, keep) in points {
        let (ok, rows, _) = run_with_crash_at(&base, &batch, Some((n, keep)));
        if rows == after {
            kept += 1;
        } else {
            assert!(
                !ok,
                "crash at write {n} (torn {keep:?}): apply returned Ok but the batch was lost"
            );
            assert_eq!(
                rows, before,
                "crash at write {n} (torn {keep:?}): half a batch recovered"
            );
            lost += 1;
        }
    }
    eprintln!("{writes} crash points: batch lost at {lost}, kept at {kept}");
    assert!(lost > 0 && kept > 0, "both outcomes are reached");
}
