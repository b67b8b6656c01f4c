//! Concurrent use: batches from several threads are serialised and all
//! land; a reader meanwhile never sees half a batch; id allocation runs
//! alongside. A watchdog turns a deadlock into a failure.

mod support;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use basalt_catalog::{
    AccountKey, CatalogChange, CatalogSnapshot, DbGrantKey, IdRequest, TableGrantKey,
};
use support::*;

const WRITERS: usize = 4;
const BATCHES: usize = 20;

fn user(t: usize, j: usize) -> String {
    format!("w{t}_{j:03}")
}

fn host(t: usize) -> String {
    format!("host{t}.{}.example.com", "z".repeat(120))
}

/// Batch `j` of writer `t`: adds account j with its grants, and drops
/// account j - 2 with its grants.
fn batch(t: usize, j: usize) -> Vec<CatalogChange> {
    let (u, h) = (user(t, j), host(t));
    let mut v = vec![
        CatalogChange::PutAccount(account(&u, &h, j as u64)),
        CatalogChange::PutDbGrant(db_grant(&u, &h, "app", 1)),
        CatalogChange::PutTableGrant(table_grant(&u, &h, "app", "t", 2)),
    ];
    if j >= 2 {
        let old = user(t, j - 2);
        v.push(CatalogChange::DeleteTableGrant(TableGrantKey {
            user: old.clone(),
            host: h.clone(),
            db: "app".into(),
            table: "t".into(),
        }));
        v.push(CatalogChange::DeleteDbGrant(DbGrantKey {
            user: old.clone(),
            host: h.clone(),
            db: "app".into(),
        }));
        v.push(CatalogChange::DeleteAccount(AccountKey {
            user: old,
            host: h,
        }));
    }
    v
}

/// Every account has both grants and every grant has its account: true
/// after every whole batch, false in the middle of one.
fn consistent(s: &CatalogSnapshot) -> Result<(), String> {
    let accounts: BTreeSet<(&str, &str)> = s
        .accounts
        .iter()
        .map(|a| (a.user.as_str(), a.host.as_str()))
        .collect();
    let dbs: BTreeSet<(&str, &str)> = s
        .db_grants
        .iter()
        .map(|g| (g.user.as_str(), g.host.as_str()))
        .collect();
    let tables: BTreeSet<(&str, &str)> = s
        .table_grants
        .iter()
        .map(|g| (g.user.as_str(), g.host.as_str()))
        .collect();
    if accounts != dbs || accounts != tables {
        return Err(format!(
            "{} accounts, {} db grants, {} table grants disagree",
            accounts.len(),
            dbs.len(),
            tables.len()
        ));
    }
    Ok(())
}

#[test]
fn concurrent_batches_are_serialised_and_all_land() {
    let done = Arc::new(AtomicBool::new(false));
    {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            for _ in 0..1200 {
                std::thread::sleep(Duration::from_millis(100));
                if done.load(Ordering::Relaxed) {
                    return;
                }
            }
            eprintln!("concurrent catalog test still running after 120 s: deadlock");
            std::process::abort();
        });
    }
    let node = Node::create();
    let catalog = node.catalog();
    let store = node.store();
    let writers_left = AtomicU64::new(WRITERS as u64);
    let (snapshots, ranges) = std::thread::scope(|s| {
        for t in 0..WRITERS {
            let (catalog, writers_left) = (&catalog, &writers_left);
            s.spawn(move || {
                for j in 0..BATCHES {
                    catalog
                        .apply(store, &batch(t, j))
                        .unwrap_or_else(|e| panic!("writer {t} batch {j}: {e}"));
                }
                writers_left.fetch_sub(1, Ordering::AcqRel);
            });
        }
        let reader = s.spawn(|| {
            let mut n = 0u64;
            while writers_left.load(Ordering::Acquire) > 0 || n == 0 {
                let snap = catalog.load_all(store).expect("load_all");
                if let Err(e) = consistent(&snap) {
                    panic!("reader saw half a batch: {e}");
                }
                n += 1;
            }
            n
        });
        let allocator = s.spawn(|| {
            let mut ranges = Vec::new();
            while writers_left.load(Ordering::Acquire) > 0 || ranges.is_empty() {
                let ids = catalog
                    .allocate_ids(
                        store,
                        IdRequest {
                            tables: 1,
                            indexes: 2,
                            spaces: 1,
                        },
                    )
                    .expect("allocate_ids");
                ranges.push(ids);
            }
            ranges
        });
        (
            reader.join().expect("reader"),
            allocator.join().expect("allocator"),
        )
    });
    done.store(true, Ordering::Relaxed);

    let rows = checked_rows(&catalog, store);
    consistent(&rows).unwrap();
    let mut expected: Vec<(String, String)> = (0..WRITERS)
        .flat_map(|t| (BATCHES - 2..BATCHES).map(move |j| (user(t, j), host(t))))
        .collect();
    expected.sort();
    let got: Vec<(String, String)> = rows
        .accounts
        .iter()
        .map(|a| (a.user.clone(), a.host.clone()))
        .collect();
    assert_eq!(
        got, expected,
        "exactly the last two accounts of every writer"
    );
    for a in &rows.accounts {
        let j: u64 = a.user[3..].parse().unwrap();
        assert_eq!(a, &account(&a.user, &a.host, j));
    }
    // Id ranges are disjoint and, in the order handed out, contiguous.
    for w in ranges.windows(2) {
        assert_eq!(w[0].tables.end, w[1].tables.start);
        assert_eq!(w[0].indexes.end, w[1].indexes.start);
        assert_eq!(w[0].spaces.end, w[1].spaces.start);
    }
    eprintln!(
        "{} consistent snapshots, {} id allocations during {} batches",
        snapshots,
        ranges.len(),
        WRITERS * BATCHES
    );
}
