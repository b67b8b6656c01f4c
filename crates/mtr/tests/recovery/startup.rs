//! Opening data directories: clean restarts, creation, file-per-table
//! tablespaces, and directories that must be refused.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use basalt_buf::{BufConfig, LatchMode};
use basalt_common::{IndexId, PageId, SpaceId};
use basalt_io::{Io, MemIo, OpenOptions, PosixIo};
use basalt_mtr::{Mtr, MtrError, PageStore, Startup, Storage, StorageConfig};
use basalt_page::{IndexPage, RedoRecord};
use rand::rngs::SmallRng;
use rand::SeedableRng;

use crate::model::{crash, drive, Chaos};
use crate::workload::{read_state, seed, setup_pages, Model};
use crate::{config, faulty};

#[test]
fn clean_shutdown_then_open_finds_nothing_to_redo() {
    let mut rng = SmallRng::seed_from_u64(seed("clean_shutdown"));
    let mem = Arc::new(MemIo::new());
    let cfg = config(8);
    let (io, plan) = faulty(&mem);
    let (storage, startup) = Storage::open_or_create(io, cfg.clone()).expect("create");
    assert_eq!(startup, Startup::Created);
    let ids = setup_pages(storage.store(), 10).expect("setup");
    let mut model = Model::new(ids.len());
    let run = drive(
        &storage,
        &ids,
        &mut rng,
        &model,
        100,
        &plan,
        usize::MAX,
        Chaos::Full,
    );
    for ops in &run.history {
        model.apply(ops);
    }
    let lsn = storage.store().log.current_lsn();
    storage.shutdown().expect("shutdown");

    for round in 0..2 {
        let (io, _) = faulty(&mem);
        let (storage, startup) = Storage::open_or_create(io, cfg.clone()).expect("open");
        let Startup::Recovered(report) = startup else {
            panic!("round {round}: expected an open, got {startup:?}")
        };
        assert!(report.was_clean(), "round {round}: {report:#?}");
        assert_eq!((report.groups, report.records, report.pages), (0, 0, 0));
        assert_eq!(report.end_lsn, lsn, "round {round}");
        assert_eq!(report.checkpoint_lsn, lsn, "round {round}");
        assert_eq!(
            read_state(storage.store(), &ids).expect("read"),
            model.pages,
            "round {round}"
        );
        storage.shutdown().expect("shutdown");
    }
}

#[test]
fn redo_log_without_system_tablespace_is_refused() {
    let mem = Arc::new(MemIo::new());
    let cfg = config(8);
    let io: Arc<dyn Io> = mem.clone();
    Storage::create(io.clone(), cfg.clone())
        .expect("create")
        .shutdown()
        .expect("shutdown");
    io.remove_file(&cfg.system_tablespace_path())
        .expect("remove ibdata1");
    match Storage::open_or_create(io.clone(), cfg.clone()) {
        Err(MtrError::DataDir { reason, .. }) => {
            assert!(reason.contains("ib_logfile0"), "{reason}")
        }
        other => panic!("expected a refused data directory, got {other:?}"),
    }
    match Storage::open(io, cfg) {
        Err(MtrError::DataDir { reason, .. }) => assert!(reason.contains("ibdata1"), "{reason}"),
        other => panic!("expected a refused data directory, got {other:?}"),
    }
}

/// Allocates a leaf in `space` holding one record per value.
fn leaf_with(store: &PageStore, space: SpaceId, values: &[&[u8]]) -> PageId {
    let mut mtr = Mtr::start(store).expect("start");
    let r = mtr.alloc_page(space).expect("alloc");
    mtr.apply(
        r,
        &RedoRecord::InitIndex {
            level: 0,
            index_id: IndexId(5),
            flags: 0,
        },
    )
    .expect("init");
    for (i, v) in values.iter().enumerate() {
        let mut rec = vec![0u8, 0, 0];
        rec.extend_from_slice(v);
        let len = rec.len() as u16;
        // Fixed record header: info bits, then the total length.
        rec[1..3].copy_from_slice(&len.to_be_bytes());
        mtr.apply(
            r,
            &RedoRecord::Insert {
                slot: i as u16,
                rec: rec.into(),
            },
        )
        .expect("insert");
    }
    let id = mtr.page_id(r);
    mtr.commit_durable().expect("commit");
    id
}

fn leaf_values(store: &PageStore, id: PageId) -> Vec<Vec<u8>> {
    let mut mtr = Mtr::start_unchecked(store);
    let r = mtr.get(id, LatchMode::Shared).expect("read leaf");
    IndexPage::new(mtr.page(r))
        .expect("index page")
        .iter()
        .map(|rec| rec.expect("record")[3..].to_vec())
        .collect()
}

#[test]
fn file_per_table_tablespaces_are_found_and_recovered() {
    let mem = Arc::new(MemIo::new());
    let t5 = PathBuf::from("/db/test/t5.ibd");
    let t6 = PathBuf::from("/db/test/t6.ibd");
    let mut cfg = config(8);
    cfg.tablespace_files = vec![t5.clone(), t6.clone()];
    let (io, plan) = faulty(&mem);
    let storage = Storage::create(io, cfg.clone()).expect("create");
    storage.create_tablespace(SpaceId(5), &t5, 16).expect("t5");
    storage.create_tablespace(SpaceId(6), &t6, 16).expect("t6");
    let a = leaf_with(storage.store(), SpaceId(5), &[b"alpha", b"beta"]);
    let b = leaf_with(storage.store(), SpaceId(6), &[b"gamma"]);
    crash(storage, &plan, &mem);

    let (io, plan) = faulty(&mem);
    let (storage, report) = Storage::open(io, cfg.clone()).expect("recover");
    assert!(
        report.tablespaces.contains(&(SpaceId(5), t5.clone())),
        "{report:#?}"
    );
    assert!(
        report.tablespaces.contains(&(SpaceId(6), t6.clone())),
        "{report:#?}"
    );
    assert!(report.groups >= 2, "{report:#?}");
    assert_eq!(
        leaf_values(storage.store(), a),
        vec![b"alpha".to_vec(), b"beta".to_vec()]
    );
    assert_eq!(leaf_values(storage.store(), b), vec![b"gamma".to_vec()]);
    // More redo for t6, then t6 disappears (a dropped table): its redo is
    // skipped, the rest recovers.
    let c = leaf_with(storage.store(), SpaceId(6), &[b"delta"]);
    let d = leaf_with(storage.store(), SpaceId(5), &[b"epsilon"]);
    assert_eq!(c.space, SpaceId(6));
    crash(storage, &plan, &mem);
    let io: Arc<dyn Io> = mem.clone();
    io.remove_file(&t6).expect("drop t6");
    let (io, _) = faulty(&mem);
    let (storage, report) = Storage::open(io, cfg.clone()).expect("recover without t6");
    assert!(report.pages_missing_space >= 1, "{report:#?}");
    assert_eq!(leaf_values(storage.store(), d), vec![b"epsilon".to_vec()]);
    storage.shutdown().expect("shutdown");

    // A copy of t5 under another name: two files claim space 5.
    let bytes = mem.durable_bytes(&t5).expect("t5 bytes");
    let copy = PathBuf::from("/db/test/t5_copy.ibd");
    let f = mem
        .open(
            &copy,
            OpenOptions {
                create: true,
                direct: false,
            },
        )
        .expect("copy");
    f.write_at(&bytes, 0).expect("write copy");
    f.sync().expect("sync copy");
    cfg.tablespace_files.push(copy);
    let (io, _) = faulty(&mem);
    match Storage::open(io, cfg) {
        Err(MtrError::DataDir { reason, .. }) => {
            assert!(reason.contains("both hold tablespace 5"), "{reason}")
        }
        other => panic!("expected duplicate tablespace ids to be refused, got {other:?}"),
    }
}

fn posix_config(dir: &Path) -> StorageConfig {
    let mut cfg = StorageConfig::new(dir);
    cfg.buf = BufConfig::for_pool_size(8 << 20);
    cfg.log.file_size = 4 << 20;
    cfg.log.buffer_size = 1 << 20;
    cfg
}

#[test]
fn tablespaces_under_a_real_datadir_are_discovered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = posix_config(dir.path());
    let io: Arc<dyn Io> = Arc::new(PosixIo::new(2));
    let t7 = dir.path().join("shop").join("orders.ibd");
    let storage = Storage::create(io.clone(), cfg.clone()).expect("create");
    storage.create_tablespace(SpaceId(7), &t7, 16).expect("t7");
    let page = leaf_with(storage.store(), SpaceId(7), &[b"one", b"two", b"three"]);
    // Stop without a clean shutdown: the redo is durable, the page is not.
    drop(storage);

    let (storage, report) = Storage::open(io, cfg).expect("recover");
    assert!(
        report.tablespaces.contains(&(SpaceId(7), t7)),
        "{report:#?}"
    );
    assert!(report.groups >= 1 && report.pages >= 1, "{report:#?}");
    assert_eq!(
        leaf_values(storage.store(), page),
        vec![b"one".to_vec(), b"two".to_vec(), b"three".to_vec()]
    );
    storage.shutdown().expect("shutdown");
}
