//! Shared support of the catalog integration tests: a data directory on
//! in-memory files behind a fault-injecting backend, clean restarts,
//! crashes (power loss: only durable bytes survive), seeds and rows.

#![allow(dead_code)]

use std::sync::Arc;

use basalt_buf::BufConfig;
use basalt_catalog::{
    AccountRow, Catalog, CatalogChange, CatalogSnapshot, DbGrantRow, SchemaRow, TableGrantRow,
};
use basalt_io::{FaultPlan, FaultyIo, Io, MemIo};
use basalt_mtr::{PageStore, Storage, StorageConfig};

/// Seed of a randomised test (`BASALT_TEST_SEED` or a fresh one, printed).
pub fn seed(test: &str) -> u64 {
    basalt_common::test_support::test_seed(test)
}

/// A count from environment variable `var`, or `default`.
pub fn env_count(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Storage settings of these tests: a 6 MiB pool, two 4 MiB log files
/// (the smallest the log takes: its largest group is then 512 KiB).
pub fn config() -> StorageConfig {
    let mut cfg = StorageConfig::new("/db");
    cfg.buf = BufConfig::for_pool_size(6 << 20);
    cfg.log.file_size = 4 << 20;
    cfg.log.buffer_size = 1 << 20;
    cfg
}

/// A running data directory on in-memory files.
pub struct Node {
    /// The files (what "the disk" holds, durable or not).
    pub mem: Arc<MemIo>,
    /// Faults for the running storage.
    pub plan: Arc<FaultPlan>,
    /// The storage layer.
    pub storage: Storage,
}

fn faulty(mem: &Arc<MemIo>) -> (Arc<dyn Io>, Arc<FaultPlan>) {
    let plan = FaultPlan::new();
    let io: Arc<dyn Io> = Arc::new(FaultyIo::new(mem.clone(), plan.clone()));
    (io, plan)
}

impl Node {
    /// A new data directory (no dictionary yet).
    pub fn create() -> Node {
        let mem = Arc::new(MemIo::new());
        let (io, plan) = faulty(&mem);
        let storage = Storage::create(io, config()).expect("create storage");
        Node { mem, plan, storage }
    }

    /// Opens (with crash recovery) the data directory held by `mem`.
    pub fn open(mem: Arc<MemIo>) -> Node {
        let (io, plan) = faulty(&mem);
        let (storage, _report) = Storage::open(io, config()).expect("open storage");
        Node { mem, plan, storage }
    }

    /// The pages and the log.
    pub fn store(&self) -> &PageStore {
        self.storage.store()
    }

    /// Clean shutdown, then open again.
    pub fn restart(self) -> Node {
        self.storage.shutdown().expect("clean shutdown");
        Node::open(self.mem)
    }

    /// Power loss now: every write not yet synced is lost. Returns the
    /// durable image, not yet opened.
    pub fn crash_image(self) -> Arc<MemIo> {
        self.plan.crash_now();
        drop(self.storage);
        self.mem.crash();
        Arc::new(self.mem.durable_snapshot())
    }

    /// Power loss now, then start again (crash recovery).
    pub fn crash(self) -> Node {
        Node::open(self.crash_image())
    }

    /// Opens the catalog of this data directory.
    pub fn catalog(&self) -> Catalog {
        Catalog::open_or_bootstrap(self.store()).expect("open catalog")
    }
}

/// An account with a password hash derived from `n`.
pub fn account(user: &str, host: &str, n: u64) -> AccountRow {
    let mut row = AccountRow::new(
        user,
        host,
        "caching_sha2_password",
        format!("$A$005${n:064}").into_bytes(),
        n.wrapping_mul(0x9E37_79B9_7F4A_7C15),
    );
    row.password_last_changed = (!n.is_multiple_of(3)).then_some(1_700_000_000_000_000 + n);
    row.account_locked = n.is_multiple_of(5);
    row
}

/// A schema grant.
pub fn db_grant(user: &str, host: &str, db: &str, privileges: u64) -> DbGrantRow {
    DbGrantRow {
        user: user.into(),
        host: host.into(),
        db: db.into(),
        privileges,
    }
}

/// A table grant.
pub fn table_grant(
    user: &str,
    host: &str,
    db: &str,
    table: &str,
    privileges: u64,
) -> TableGrantRow {
    TableGrantRow {
        user: user.into(),
        host: host.into(),
        db: db.into(),
        table: table.into(),
        privileges,
    }
}

/// A schema.
pub fn schema(name: &str) -> SchemaRow {
    SchemaRow {
        name: name.into(),
        charset: "utf8mb4".into(),
        collation: "utf8mb4_0900_ai_ci".into(),
    }
}

/// A batch that fills every table: `n` accounts with long host names
/// (enough to split leaves), a grant of each kind per account, and
/// schemata.
pub fn filler(prefix: &str, n: usize) -> Vec<CatalogChange> {
    let mut v = Vec::new();
    for i in 0..n {
        let user = format!("{prefix}{i:04}");
        let host = format!("host-{i:03}.{}.example.com", "x".repeat(150));
        v.push(CatalogChange::PutAccount(account(&user, &host, i as u64)));
        v.push(CatalogChange::PutDbGrant(db_grant(
            &user, &host, "app", i as u64,
        )));
        v.push(CatalogChange::PutTableGrant(table_grant(
            &user, &host, "app", "orders", i as u64,
        )));
        v.push(CatalogChange::PutSchema(schema(&format!(
            "{prefix}_db{i:04}"
        ))));
    }
    v
}

/// Checks every system tree and returns the rows.
pub fn checked_rows(catalog: &Catalog, store: &PageStore) -> CatalogSnapshot {
    for (name, stats) in catalog.validate(store).expect("system tables validate") {
        assert!(stats.height >= 1, "{name} has a root");
    }
    catalog.load_all(store).expect("load_all")
}
