//! Bootstrap and reopen: a new data directory gets a complete dictionary
//! in one durable step; reopening (after a clean shutdown or a crash)
//! finds the same header and rows; a crash at any write of bootstrap
//! leaves either no dictionary or a complete one; a damaged header page is
//! refused, never overwritten; tables missing from an older header are
//! created on open.

mod support;

use basalt_buf::LatchMode;
use basalt_catalog::{
    dict_header_page, Catalog, CatalogError, CatalogStartup, Counters, DictHeader,
    FIRST_DYNAMIC_ID, SYSTEM_TABLES,
};
use basalt_common::layout::DICT_HEADER_PAGE;
use basalt_mtr::{Mtr, PageStore};
use basalt_page::header::FIL_PAGE_DATA;
use basalt_page::{PageType, RedoRecord};
use support::*;

fn roots(h: &DictHeader) -> Vec<(u32, u32)> {
    h.slots.iter().map(|s| (s.table.0, s.root)).collect()
}

/// Writes `bytes` at `offset` of page 7 in a durable mini-transaction.
fn poke_header(store: &PageStore, offset: usize, bytes: &[u8]) {
    let mut mtr = Mtr::start(store).unwrap();
    let r = mtr.get(dict_header_page(), LatchMode::Exclusive).unwrap();
    mtr.apply(
        r,
        &RedoRecord::WriteBytes {
            offset: offset as u16,
            bytes: bytes.to_vec().into(),
        },
    )
    .unwrap();
    mtr.commit_durable().unwrap();
}

#[test]
fn bootstrap_creates_every_system_table_and_reopen_finds_them() {
    let node = Node::create();
    let catalog = node.catalog();
    assert_eq!(catalog.startup(), &CatalogStartup::Bootstrapped);
    let header = catalog.header(node.store()).unwrap();
    assert_eq!(header.slots.len(), SYSTEM_TABLES.len());
    for def in SYSTEM_TABLES {
        let slot = header.slot(def.id).expect("every table has a slot");
        assert_eq!(slot.version, def.version);
        assert!(slot.root > DICT_HEADER_PAGE, "roots are allocated pages");
    }
    assert_eq!(header.counters, Counters::INITIAL);
    assert_eq!(header.counters.next_table_id, FIRST_DYNAMIC_ID);
    assert!(checked_rows(&catalog, node.store()).is_empty());

    catalog.apply(node.store(), &filler("u", 40)).unwrap();
    let rows = checked_rows(&catalog, node.store());
    assert_eq!(rows.accounts.len(), 40);

    // A second open of the same running store finds the dictionary.
    let again = node.catalog();
    assert_eq!(again.startup(), &CatalogStartup::Opened);
    assert_eq!(again.load_all(node.store()).unwrap(), rows);
    drop((catalog, again));

    let node = node.restart();
    let catalog = node.catalog();
    assert_eq!(catalog.startup(), &CatalogStartup::Opened);
    assert_eq!(
        roots(&catalog.header(node.store()).unwrap()),
        roots(&header)
    );
    assert_eq!(checked_rows(&catalog, node.store()), rows);
}

#[test]
fn bootstrap_and_rows_survive_crash_recovery_crash() {
    let node = Node::create();
    let catalog = node.catalog();
    let header = catalog.header(node.store()).unwrap();
    catalog.apply(node.store(), &filler("c", 30)).unwrap();
    let rows = catalog.load_all(node.store()).unwrap();
    drop(catalog);

    // Nothing was checkpointed since the bootstrap: recovery rebuilds the
    // header and the trees from the redo alone.
    let node = node.crash();
    let catalog = node.catalog();
    assert_eq!(catalog.startup(), &CatalogStartup::Opened);
    assert_eq!(catalog.header(node.store()).unwrap(), header);
    assert_eq!(checked_rows(&catalog, node.store()), rows);
}

#[test]
fn crash_at_any_write_of_bootstrap_leaves_no_dictionary_or_a_whole_one_crash() {
    // Writes of a clean run: bootstrap, then a checkpoint that writes
    // every page (doublewrite, in place, checkpoint block).
    let clean = Node::create();
    let before = clean.plan.writes_seen();
    let catalog = clean.catalog();
    clean.storage.checkpoint_now().unwrap();
    let writes = clean.plan.writes_seen() - before;
    drop(catalog);
    assert!(
        writes >= 3,
        "bootstrap and checkpoint write something ({writes})"
    );

    let (mut absent, mut whole) = (0, 0);
    for n in 1..=writes + 1 {
        let node = Node::create();
        node.plan.crash_at_write(n);
        let opened = Catalog::open_or_bootstrap(node.store()).is_ok();
        let _ = node.storage.checkpoint_now();
        let node = Node::open(node.crash_image());
        let catalog = Catalog::open_or_bootstrap(node.store())
            .unwrap_or_else(|e| panic!("crash at write {n}: reopen failed: {e}"));
        match catalog.startup() {
            CatalogStartup::Bootstrapped => {
                assert!(
                    !opened,
                    "crash at write {n}: a bootstrap that returned Ok was lost"
                );
                absent += 1;
            }
            CatalogStartup::Opened => whole += 1,
            other => panic!("crash at write {n}: unexpected {other:?}"),
        }
        let header = catalog.header(node.store()).unwrap();
        assert_eq!(
            header.slots.len(),
            SYSTEM_TABLES.len(),
            "crash at write {n}"
        );
        assert!(
            checked_rows(&catalog, node.store()).is_empty(),
            "crash at write {n}"
        );
    }
    eprintln!("{writes} crash points: {absent} without a dictionary, {whole} with a whole one");
    assert!(absent > 0 && whole > 0, "both outcomes are reached");
}

#[test]
fn damaged_header_page_is_refused_and_left_alone() {
    // A page 7 of another type.
    let node = Node::create();
    {
        let mut mtr = Mtr::start(node.store()).unwrap();
        let r = mtr
            .get_allow_zeroed(dict_header_page(), LatchMode::Exclusive)
            .unwrap();
        mtr.apply(
            r,
            &RedoRecord::InitPage {
                page_type: PageType::Undo,
            },
        )
        .unwrap();
        mtr.commit_durable().unwrap();
    }
    let err = Catalog::open_or_bootstrap(node.store()).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    let err = Catalog::open_or_bootstrap(node.store()).unwrap_err();
    assert!(
        err.is_corruption(),
        "still refused: page 7 was not overwritten: {err}"
    );

    // A header from a newer format.
    let node = Node::create();
    drop(node.catalog());
    poke_header(node.store(), FIL_PAGE_DATA + 4, &7u32.to_be_bytes());
    assert!(matches!(
        Catalog::open_or_bootstrap(node.store()),
        Err(CatalogError::UnsupportedFormat { found: 7, .. })
    ));

    // A table recorded with another layout version (slot 0 = mysql.user).
    let node = Node::create();
    drop(node.catalog());
    poke_header(node.store(), FIL_PAGE_DATA + 32 + 4, &9u32.to_be_bytes());
    assert!(matches!(
        Catalog::open_or_bootstrap(node.store()),
        Err(CatalogError::LayoutMismatch {
            table: "mysql.user",
            found: 9,
            ..
        })
    ));

    // The magic gone.
    let node = Node::create();
    drop(node.catalog());
    poke_header(node.store(), FIL_PAGE_DATA, b"XXXX");
    assert!(Catalog::open_or_bootstrap(node.store())
        .unwrap_err()
        .is_corruption());
}

#[test]
fn tables_missing_from_the_header_are_created_on_open() {
    let node = Node::create();
    let catalog = node.catalog();
    catalog.apply(node.store(), &filler("g", 20)).unwrap();
    let rows = catalog.load_all(node.store()).unwrap();
    let header = catalog.header(node.store()).unwrap();
    drop(catalog);
    // Pretend an older build wrote the header: it knew only the first two
    // tables (mysql.user and mysql.db).
    poke_header(node.store(), FIL_PAGE_DATA + 28, &2u32.to_be_bytes());

    let node = node.restart();
    let catalog = node.catalog();
    let created: Vec<&str> = SYSTEM_TABLES[2..].iter().map(|d| d.name).collect();
    assert_eq!(catalog.startup(), &CatalogStartup::Upgraded { created });
    let after = catalog.header(node.store()).unwrap();
    assert_eq!(after.slots.len(), SYSTEM_TABLES.len());
    assert_eq!(
        after.slots[..2],
        header.slots[..2],
        "existing tables keep their roots"
    );
    for (new, old) in after.slots[2..].iter().zip(&header.slots[2..]) {
        assert_ne!(new.root, old.root, "{:?} got a new root", new.table);
    }
    let now = checked_rows(&catalog, node.store());
    assert_eq!(now.accounts, rows.accounts);
    assert_eq!(now.db_grants, rows.db_grants);
    assert!(now.table_grants.is_empty() && now.schemata.is_empty());
    drop(catalog);

    // The upgrade was durable.
    let node = node.crash();
    let catalog = node.catalog();
    assert_eq!(catalog.startup(), &CatalogStartup::Opened);
    assert_eq!(catalog.header(node.store()).unwrap(), after);
}

#[test]
fn a_dictionary_on_real_files_survives_shutdown_and_reopen() {
    use std::sync::Arc;

    use basalt_io::{Io, PosixIo};
    use basalt_mtr::{Storage, StorageConfig};

    let dir = tempfile::tempdir().unwrap();
    let cfg = || {
        let mut c: StorageConfig = config();
        c.datadir = dir.path().to_path_buf();
        c.log.dir = dir.path().to_path_buf();
        c
    };
    let io: Arc<dyn Io> = Arc::new(PosixIo::new(2));
    let (storage, _) = Storage::open_or_create(Arc::clone(&io), cfg()).unwrap();
    let catalog = Catalog::open_or_bootstrap(storage.store()).unwrap();
    assert_eq!(catalog.startup(), &CatalogStartup::Bootstrapped);
    catalog.apply(storage.store(), &filler("disk", 40)).unwrap();
    let ids = catalog
        .allocate_ids(
            storage.store(),
            basalt_catalog::IdRequest {
                tables: 1,
                indexes: 1,
                spaces: 1,
            },
        )
        .unwrap();
    let rows = catalog.load_all(storage.store()).unwrap();
    drop(catalog);
    storage.shutdown().unwrap();

    let (storage, _) = Storage::open_or_create(io, cfg()).unwrap();
    let catalog = Catalog::open_or_bootstrap(storage.store()).unwrap();
    assert_eq!(catalog.startup(), &CatalogStartup::Opened);
    assert_eq!(checked_rows(&catalog, storage.store()), rows);
    let c = catalog.counters(storage.store()).unwrap();
    assert_eq!(c.next_table_id, ids.tables.end);
    storage.shutdown().unwrap();
}
