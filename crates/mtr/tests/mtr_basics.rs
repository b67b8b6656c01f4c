//! Mini-transaction commit, abort and page allocation against a real log
//! and buffer pool over in-memory files.

use std::sync::Arc;

use basalt_buf::{BufConfig, LatchMode};
use basalt_common::{IndexId, PageId, SpaceId, FIL_NULL};
use basalt_io::{Io, MemIo};
use basalt_mtr::fsp::read_header;
use basalt_mtr::{Mtr, Storage, StorageConfig};
use basalt_page::header::{page_lsn, page_type, PageType};
use basalt_page::{IndexPage, RedoRecord};

fn storage() -> (Arc<MemIo>, Storage) {
    let mem = Arc::new(MemIo::new());
    let io: Arc<dyn Io> = mem.clone();
    let mut cfg = StorageConfig::new("/db");
    cfg.buf = BufConfig::for_pool_size(8 << 20);
    cfg.log.file_size = 4 << 20;
    let s = Storage::create(io, cfg).expect("create storage");
    (mem, s)
}

fn new_leaf(mtr: &mut Mtr<'_>) -> basalt_mtr::PageRef {
    let r = mtr.alloc_page(SpaceId::SYSTEM).unwrap();
    mtr.apply(
        r,
        &RedoRecord::InitIndex {
            level: 0,
            index_id: IndexId(9),
            flags: 0,
        },
    )
    .unwrap();
    r
}

#[test]
fn commit_stamps_pages_and_dirties_them() {
    let (_mem, s) = storage();
    let store = s.store();
    let before = store.log.current_lsn();
    let mut mtr = Mtr::start(store).unwrap();
    let r = new_leaf(&mut mtr);
    let id = mtr.page_id(r);
    mtr.apply(
        r,
        &RedoRecord::Insert {
            slot: 0,
            rec: vec![0u8; 0].into(),
        },
    )
    .expect_err("an empty record is not a record");
    let range = mtr.commit().unwrap().expect("changes were made");
    assert!(range.start >= before && range.end > range.start);
    let mut mtr = Mtr::start(store).unwrap();
    let r = mtr.get(id, LatchMode::Shared).unwrap();
    assert_eq!(page_lsn(mtr.page(r)), range.end);
    assert_eq!(page_type(mtr.page(r)), Some(PageType::Index));
    assert_eq!(IndexPage::new(mtr.page(r)).unwrap().level(), 0);
    drop(mtr);
    assert!(store.pool.dirty_pages() >= 1);
    s.shutdown().unwrap();
}

#[test]
fn dropped_mtr_restores_pages_and_logs_nothing() {
    let (_mem, s) = storage();
    let store = s.store();
    let mut mtr = Mtr::start(store).unwrap();
    let r = new_leaf(&mut mtr);
    let id = mtr.page_id(r);
    mtr.commit().unwrap();

    let lsn = store.log.current_lsn();
    let original = {
        let mut m = Mtr::start(store).unwrap();
        let r = m.get(id, LatchMode::Shared).unwrap();
        m.page(r).to_vec()
    };
    {
        let mut mtr = Mtr::start(store).unwrap();
        let r = mtr.get(id, LatchMode::Exclusive).unwrap();
        mtr.apply(
            r,
            &RedoRecord::InitIndex {
                level: 3,
                index_id: IndexId(1),
                flags: 0,
            },
        )
        .unwrap();
        assert_eq!(IndexPage::new(mtr.page(r)).unwrap().level(), 3);
        // dropped here without commit
    }
    assert_eq!(
        store.log.current_lsn(),
        lsn,
        "an aborted mtr must not reach the log"
    );
    let mut m = Mtr::start(store).unwrap();
    let r = m.get(id, LatchMode::Shared).unwrap();
    assert_eq!(m.page(r), &original[..]);
    drop(m);
    s.shutdown().unwrap();
}

#[test]
fn freed_pages_are_reused_and_space_grows() {
    let (_mem, s) = storage();
    let store = s.store();
    let mut ids = Vec::new();
    // Allocate past the initial 768 pages to force growth.
    for _ in 0..700 {
        let mut mtr = Mtr::start(store).unwrap();
        let r = new_leaf(&mut mtr);
        ids.push(mtr.page_id(r));
        mtr.commit().unwrap();
    }
    let mut mtr = Mtr::start(store).unwrap();
    let h = read_header(&mut mtr, SpaceId::SYSTEM).unwrap();
    drop(mtr);
    assert!(h.size > 768, "space should have grown, size {}", h.size);
    assert_eq!(h.free_limit, ids.last().unwrap().page_no + 1);
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "a page was handed out twice");

    // Free three pages, then allocate three: LIFO reuse.
    for id in &ids[10..13] {
        let mut mtr = Mtr::start(store).unwrap();
        let r = mtr.get(*id, LatchMode::Exclusive).unwrap();
        mtr.free_page(r).unwrap();
        mtr.commit().unwrap();
    }
    let mut mtr = Mtr::start(store).unwrap();
    let h = read_header(&mut mtr, SpaceId::SYSTEM).unwrap();
    drop(mtr);
    assert_eq!(h.free_len, 3);
    assert_eq!(h.free_head, ids[12].page_no);
    let mut again = Vec::new();
    for _ in 0..3 {
        let mut mtr = Mtr::start(store).unwrap();
        let r = new_leaf(&mut mtr);
        again.push(mtr.page_id(r));
        mtr.commit().unwrap();
    }
    assert_eq!(again, vec![ids[12], ids[11], ids[10]]);
    let mut mtr = Mtr::start(store).unwrap();
    let h = read_header(&mut mtr, SpaceId::SYSTEM).unwrap();
    drop(mtr);
    assert_eq!((h.free_len, h.free_head), (0, FIL_NULL));
    s.shutdown().unwrap();
}

#[test]
fn x_on_a_page_held_shared_is_refused() {
    let (_mem, s) = storage();
    let store = s.store();
    let mut mtr = Mtr::start(store).unwrap();
    let id = PageId::new(SpaceId::SYSTEM, 0);
    let r = mtr.get(id, LatchMode::Shared).unwrap();
    assert!(mtr.get(id, LatchMode::Exclusive).is_err());
    assert_eq!(mtr.get(id, LatchMode::Shared).unwrap(), r);
    assert!(mtr
        .apply(r, &RedoRecord::write_u32(100, 1))
        .is_err_and(|e| matches!(e, basalt_mtr::MtrError::NotExclusive(_))));
    drop(mtr);
    s.shutdown().unwrap();
}
