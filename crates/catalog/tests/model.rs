//! Random batches against an in-memory model: after every batch the
//! catalog must hold exactly what the model holds (first difference
//! fails, with the seed); refused batches must change nothing; clean
//! restarts and crashes in between must lose nothing that was applied.
//! `BASALT_TEST_SEED=<u64>` replays a run, `BASALT_CATALOG_BATCHES=<n>` sets
//! its length.

mod support;

use std::collections::BTreeMap;

use basalt_catalog::{
    AccountKey, AccountRow, ApplyReport, CatalogChange, CatalogError, CatalogSnapshot, DbGrantKey,
    DbGrantRow, SchemaKey, SchemaRow, TableGrantKey, TableGrantRow,
};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use support::*;

const USERS: &[&str] = &[
    "root",
    "bob",
    "Bob",
    "",
    "jörg",
    "app_rw",
    "a-very-long-user-name-of-32-chr",
];
const HOSTS: &[&str] = &[
    "localhost",
    "LocalHost",
    "%",
    "10.0.0.%",
    "DB-Ä.Example.COM",
    "db-ä.example.com",
];
const DBS: &[&str] = &["shop", "Shop", "a_b%", "mysql", "données"];
const TABLES: &[&str] = &["orders", "Orders", "t1", "t_ü"];

/// The expected contents, keyed as the catalog keys them (hosts
/// lowercased, other names as given).
#[derive(Clone, Debug, Default)]
struct Model {
    accounts: BTreeMap<(String, String), AccountRow>,
    db: BTreeMap<(String, String, String), DbGrantRow>,
    tables: BTreeMap<(String, String, String, String), TableGrantRow>,
    schemata: BTreeMap<String, SchemaRow>,
}

fn lower(h: &str) -> String {
    h.to_ascii_lowercase()
}

fn put<K: Ord, V>(map: &mut BTreeMap<K, V>, k: K, v: V, r: &mut ApplyReport) {
    if map.insert(k, v).is_some() {
        r.updated += 1;
    } else {
        r.inserted += 1;
    }
}

fn del<K: Ord, V>(map: &mut BTreeMap<K, V>, k: &K, r: &mut ApplyReport) {
    if map.remove(k).is_some() {
        r.deleted += 1;
    } else {
        r.absent += 1;
    }
}

impl Model {
    fn apply(&mut self, changes: &[CatalogChange]) -> ApplyReport {
        let mut r = ApplyReport::default();
        for c in changes {
            match c {
                CatalogChange::PutAccount(a) => {
                    let mut a = a.clone();
                    a.host = lower(&a.host);
                    put(
                        &mut self.accounts,
                        (a.user.clone(), a.host.clone()),
                        a,
                        &mut r,
                    )
                }
                CatalogChange::DeleteAccount(k) => del(
                    &mut self.accounts,
                    &(k.user.clone(), lower(&k.host)),
                    &mut r,
                ),
                CatalogChange::PutDbGrant(g) => {
                    let mut g = g.clone();
                    g.host = lower(&g.host);
                    put(
                        &mut self.db,
                        (g.user.clone(), g.host.clone(), g.db.clone()),
                        g,
                        &mut r,
                    )
                }
                CatalogChange::DeleteDbGrant(k) => del(
                    &mut self.db,
                    &(k.user.clone(), lower(&k.host), k.db.clone()),
                    &mut r,
                ),
                CatalogChange::PutTableGrant(g) => {
                    let mut g = g.clone();
                    g.host = lower(&g.host);
                    put(
                        &mut self.tables,
                        (
                            g.user.clone(),
                            g.host.clone(),
                            g.db.clone(),
                            g.table.clone(),
                        ),
                        g,
                        &mut r,
                    )
                }
                CatalogChange::DeleteTableGrant(k) => del(
                    &mut self.tables,
                    &(
                        k.user.clone(),
                        lower(&k.host),
                        k.db.clone(),
                        k.table.clone(),
                    ),
                    &mut r,
                ),
                CatalogChange::PutSchema(s) => {
                    put(&mut self.schemata, s.name.clone(), s.clone(), &mut r)
                }
                CatalogChange::DeleteSchema(k) => del(&mut self.schemata, &k.name, &mut r),
            }
        }
        r
    }

    fn snapshot(&self) -> CatalogSnapshot {
        CatalogSnapshot {
            accounts: self.accounts.values().cloned().collect(),
            db_grants: self.db.values().cloned().collect(),
            table_grants: self.tables.values().cloned().collect(),
            schemata: self.schemata.values().cloned().collect(),
        }
    }
}

fn pick<'a>(rng: &mut SmallRng, from: &[&'a str]) -> &'a str {
    from.choose(rng).expect("non-empty pool")
}

/// A user name: mostly from the pool, sometimes a numbered one so the
/// trees grow past one page.
fn user(rng: &mut SmallRng) -> String {
    if rng.gen_bool(0.6) {
        format!("user{:03}", rng.gen_range(0..300))
    } else {
        pick(rng, USERS).to_string()
    }
}

/// A host: from the pool, or a long one in random case.
fn host(rng: &mut SmallRng) -> String {
    if rng.gen_bool(0.3) {
        let n = rng.gen_range(0..6);
        let mut h = format!("node{n}.{}.internal", "Rack".repeat(rng.gen_range(1..40)));
        if rng.gen_bool(0.5) {
            h = h.to_ascii_uppercase();
        }
        h
    } else {
        pick(rng, HOSTS).to_string()
    }
}

fn account_row(rng: &mut SmallRng) -> AccountRow {
    let len = rng.gen_range(0..=255);
    AccountRow {
        user: user(rng),
        host: host(rng),
        plugin: ["caching_sha2_password", "mysql_native_password"]
            .choose(rng)
            .expect("two plugins")
            .to_string(),
        auth_string: (0..len).map(|_| rng.gen()).collect(),
        privileges: rng.gen(),
        account_locked: rng.gen(),
        password_expired: rng.gen(),
        password_last_changed: rng.gen_bool(0.5).then(|| rng.gen()),
    }
}

fn valid_change(rng: &mut SmallRng) -> CatalogChange {
    match rng.gen_range(0..8) {
        0 => CatalogChange::PutAccount(account_row(rng)),
        1 => CatalogChange::DeleteAccount(AccountKey {
            user: user(rng),
            host: host(rng),
        }),
        2 => CatalogChange::PutDbGrant(DbGrantRow {
            user: user(rng),
            host: host(rng),
            db: pick(rng, DBS).into(),
            privileges: rng.gen(),
        }),
        3 => CatalogChange::DeleteDbGrant(DbGrantKey {
            user: user(rng),
            host: host(rng),
            db: pick(rng, DBS).into(),
        }),
        4 => CatalogChange::PutTableGrant(TableGrantRow {
            user: user(rng),
            host: host(rng),
            db: pick(rng, DBS).into(),
            table: pick(rng, TABLES).into(),
            privileges: rng.gen(),
        }),
        5 => CatalogChange::DeleteTableGrant(TableGrantKey {
            user: user(rng),
            host: host(rng),
            db: pick(rng, DBS).into(),
            table: pick(rng, TABLES).into(),
        }),
        6 => CatalogChange::PutSchema(SchemaRow {
            name: if rng.gen_bool(0.5) {
                pick(rng, DBS).into()
            } else {
                format!("schema{:03}", rng.gen_range(0..80))
            },
            charset: "utf8mb4".into(),
            collation: ["utf8mb4_0900_ai_ci", "utf8mb4_bin"]
                .choose(rng)
                .expect("two collations")
                .to_string(),
        }),
        _ => CatalogChange::DeleteSchema(SchemaKey {
            name: pick(rng, DBS).into(),
        }),
    }
}

/// A change the catalog must refuse.
fn invalid_change(rng: &mut SmallRng) -> CatalogChange {
    let mut a = account_row(rng);
    match rng.gen_range(0..5) {
        0 => a.user = "x".repeat(33),
        1 => a.host = "h".repeat(256),
        2 => a.auth_string = vec![7; 256],
        3 => a.plugin = "no plügin".into(),
        _ => {
            return CatalogChange::PutSchema(SchemaRow {
                name: "s".repeat(65),
                charset: "utf8mb4".into(),
                collation: "utf8mb4_bin".into(),
            })
        }
    }
    CatalogChange::PutAccount(a)
}

#[test]
fn random_batches_match_a_model_across_restarts_and_crashes_crash() {
    let seed = seed("catalog_model");
    let batches = env_count("BASALT_CATALOG_BATCHES", 300);
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut node = Node::create();
    let mut catalog = node.catalog();
    let mut model = Model::default();
    let (mut refused, mut restarts) = (0, 0);
    for b in 0..batches {
        let n = rng.gen_range(1..=25);
        let mut batch: Vec<CatalogChange> = (0..n).map(|_| valid_change(&mut rng)).collect();
        let bad = rng.gen_bool(0.12);
        if bad {
            let at = rng.gen_range(0..=batch.len());
            batch.insert(at, invalid_change(&mut rng));
        }
        let result = catalog.apply(node.store(), &batch);
        if bad {
            match result {
                Err(CatalogError::InvalidValue { .. }) => refused += 1,
                other => panic!("seed {seed} batch {b}: a bad batch gave {other:?}"),
            }
        } else {
            let report = result.unwrap_or_else(|e| panic!("seed {seed} batch {b}: {e}"));
            let expected = model.apply(&batch);
            assert_eq!(
                (
                    report.inserted,
                    report.updated,
                    report.deleted,
                    report.absent
                ),
                (
                    expected.inserted,
                    expected.updated,
                    expected.deleted,
                    expected.absent
                ),
                "seed {seed} batch {b}: report"
            );
        }
        let got = catalog
            .load_all(node.store())
            .unwrap_or_else(|e| panic!("seed {seed} batch {b}: {e}"));
        let want = model.snapshot();
        if got != want {
            first_difference(&got, &want, seed, b);
        }
        if b % 60 == 59 {
            drop(catalog);
            node = if restarts % 2 == 0 {
                node.crash()
            } else {
                node.restart()
            };
            restarts += 1;
            catalog = node.catalog();
            assert_eq!(
                catalog.load_all(node.store()).unwrap(),
                model.snapshot(),
                "seed {seed} after restart {restarts}"
            );
        }
    }
    let stats = catalog.validate(node.store()).unwrap();
    eprintln!(
        "{batches} batches, {refused} refused, {restarts} restarts; {} accounts, {} db grants, \
         {} table grants, {} schemata; trees: {:?}",
        model.accounts.len(),
        model.db.len(),
        model.tables.len(),
        model.schemata.len(),
        stats
            .iter()
            .map(|(n, s)| (n, s.height, s.leaf_pages()))
            .collect::<Vec<_>>()
    );
    assert!(refused > 0, "seed {seed}: some batches were refused");
    assert!(
        stats.iter().any(|(_, s)| s.height > 1),
        "seed {seed}: at least one tree split"
    );
}

fn first_difference(got: &CatalogSnapshot, want: &CatalogSnapshot, seed: u64, b: usize) -> ! {
    fn diff<T: std::fmt::Debug + PartialEq>(what: &str, got: &[T], want: &[T]) -> Option<String> {
        let i = got.iter().zip(want).position(|(g, w)| g != w);
        match i {
            Some(i) => Some(format!("{what}[{i}]: got {:?}, want {:?}", got[i], want[i])),
            None if got.len() != want.len() => {
                Some(format!("{what}: {} rows, want {}", got.len(), want.len()))
            }
            None => None,
        }
    }
    let d = diff("accounts", &got.accounts, &want.accounts)
        .or_else(|| diff("db_grants", &got.db_grants, &want.db_grants))
        .or_else(|| diff("table_grants", &got.table_grants, &want.table_grants))
        .or_else(|| diff("schemata", &got.schemata, &want.schemata))
        .unwrap_or_default();
    panic!("seed {seed} batch {b}: catalog differs from the model: {d}");
}
