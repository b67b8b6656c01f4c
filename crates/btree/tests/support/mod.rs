//! Shared support code of the B+tree integration tests: storage over in-memory
//! files, tablespaces, layouts, seeds and operation counts.

#![allow(dead_code)]

use std::ops::Bound;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use basalt_btree::{BTree, IndexKind, OwnedRecord, Row};
use basalt_buf::BufConfig;
use basalt_common::{IndexId, RollPtr, SpaceId, TrxId};
use basalt_io::{Io, MemIo};
use basalt_mtr::fsp::read_header;
use basalt_mtr::{Mtr, PageStore, Storage, StorageConfig};
use basalt_page::rec::{FieldDef, RecordLayout, SysCols};

/// Seed of a randomised test (`BASALT_TEST_SEED` or a fresh one, printed).
pub fn seed(test: &str) -> u64 {
    basalt_common::test_support::test_seed(test)
}

/// Operation count: `BASALT_BTREE_OPS` or `default`.
pub fn ops(default: usize) -> usize {
    std::env::var("BASALT_BTREE_OPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// A storage layer over in-memory files with a pool of `pool` bytes.
pub fn storage(pool: u64) -> Storage {
    let io: Arc<dyn Io> = Arc::new(MemIo::new());
    storage_on(io, "/db".into(), pool)
}

/// The storage settings of these tests: data in `dir`, a pool of `pool`
/// bytes, two 8 MiB log files.
pub fn config(dir: PathBuf, pool: u64) -> StorageConfig {
    let mut cfg = StorageConfig::new(dir);
    cfg.buf = BufConfig::for_pool_size(pool);
    cfg.log.file_size = 8 << 20;
    cfg.log.buffer_size = 2 << 20;
    cfg
}

/// A storage layer over `io` in `dir`.
pub fn storage_on(io: Arc<dyn Io>, dir: PathBuf, pool: u64) -> Storage {
    Storage::create(io, config(dir, pool)).expect("create storage")
}

static NEXT_SPACE: AtomicU32 = AtomicU32::new(1);

/// Creates a fresh file-per-table tablespace.
pub fn new_space(s: &Storage) -> SpaceId {
    let id = SpaceId(NEXT_SPACE.fetch_add(1, Ordering::Relaxed));
    let path = s.config().datadir.join(format!("t{}.ibd", id.0));
    s.create_tablespace(id, &path, 8)
        .expect("create tablespace");
    id
}

/// Free-list length and free limit of a tablespace.
pub fn space_usage(store: &PageStore, space: SpaceId) -> (u32, u32) {
    let mut mtr = Mtr::start(store).unwrap();
    let h = read_header(&mut mtr, space).unwrap();
    (h.free_len, h.free_limit)
}

/// Clustered layout: 8-byte key, a short nullable field, a long nullable
/// field that may go to overflow pages.
pub fn clustered_layout() -> Arc<RecordLayout> {
    Arc::new(
        RecordLayout::new(
            vec![
                FieldDef::fixed(8),
                FieldDef::var(200).nullable(),
                FieldDef::var(1 << 30).nullable(),
            ],
            1,
            true,
        )
        .unwrap(),
    )
}

/// Clustered layout with a wide key (8-byte id + 250 bytes of padding) so node pages
/// hold fewer pointers and trees grow tall with few records.
pub fn wide_key_layout() -> Arc<RecordLayout> {
    Arc::new(
        RecordLayout::new(
            vec![
                FieldDef::var(400),
                FieldDef::var(200).nullable(),
                FieldDef::var(1 << 30).nullable(),
            ],
            1,
            true,
        )
        .unwrap(),
    )
}

/// Wide key for id `k`: big-endian id then deterministic padding.
pub fn wide_key(k: u64) -> Vec<u8> {
    let mut v = k.to_be_bytes().to_vec();
    v.extend((0..250u64).map(|i| (k.wrapping_mul(31).wrapping_add(i) % 251) as u8));
    v
}

/// Secondary layout: indexed value (var 100, nullable) + 8-byte primary key.
pub fn secondary_layout() -> Arc<RecordLayout> {
    Arc::new(
        RecordLayout::new(
            vec![FieldDef::var(100).nullable(), FieldDef::fixed(8)],
            2,
            false,
        )
        .unwrap(),
    )
}

/// System columns for trx `t`.
pub fn sys(t: u64) -> SysCols {
    SysCols {
        trx_id: TrxId(t),
        roll_ptr: RollPtr(t * 7 + 1),
    }
}

/// Creates a tree in its own tablespace.
pub fn create_tree(
    s: &Storage,
    index_id: u64,
    layout: Arc<RecordLayout>,
    kind: IndexKind,
) -> BTree {
    let space = new_space(s);
    let mut mtr = Mtr::start(s.store()).unwrap();
    let t = BTree::create(&mut mtr, space, IndexId(index_id), layout, kind).unwrap();
    mtr.commit().unwrap();
    t
}

/// Inserts in its own mini-transaction.
pub fn insert(
    store: &PageStore,
    t: &BTree,
    values: &[Option<&[u8]>],
    s: SysCols,
) -> basalt_btree::Result<()> {
    let mut mtr = Mtr::start(store).unwrap();
    t.insert(&mut mtr, values, s)?;
    mtr.commit().unwrap();
    Ok(())
}

/// Every record in key order (owned, external fields as references).
pub fn scan_all(store: &PageStore, t: &BTree) -> Vec<OwnedRecord> {
    let mut c = t.cursor(store, Bound::Unbounded, Bound::Unbounded).unwrap();
    let mut out = Vec::new();
    while c.next().unwrap().is_some() {
        out.push(c.current_owned().unwrap().unwrap());
    }
    out
}

/// Every row in key order, external values read.
pub fn rows_all(store: &PageStore, t: &BTree) -> Vec<Row> {
    let mut c = t.cursor(store, Bound::Unbounded, Bound::Unbounded).unwrap();
    let mut out = Vec::new();
    while c.next().unwrap().is_some() {
        out.push(c.row().unwrap().unwrap());
    }
    out
}

/// Deterministic value bytes for (key, version, length).
pub fn value(key: u64, version: u64, len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len);
    let mut x =
        key.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ version.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(len);
    v
}

/// Page ids of the leaves, left to right (read with the page layer).
pub fn leaf_pages(store: &PageStore, t: &BTree) -> Vec<basalt_common::PageId> {
    use basalt_buf::LatchMode;
    use basalt_common::{PageId, FIL_NULL};
    use basalt_page::{header, IndexPage, RecordRef};
    let mut id = PageId::new(t.space(), t.root());
    loop {
        let g = store.pool.get(id, LatchMode::Shared).unwrap();
        let page = IndexPage::new(g.data()).unwrap();
        if page.is_leaf() {
            break;
        }
        let rec = RecordRef::new(t.layout(), page.rec(0).unwrap()).unwrap();
        id = PageId::new(t.space(), rec.child_page_no().unwrap());
    }
    let mut out = Vec::new();
    loop {
        out.push(id);
        let g = store.pool.get(id, LatchMode::Shared).unwrap();
        let next = header::next_page(g.data());
        if next == FIL_NULL {
            return out;
        }
        id = PageId::new(t.space(), next);
    }
}

/// Key fields (owned) of the records on one leaf.
pub fn leaf_keys(
    store: &PageStore,
    t: &BTree,
    id: basalt_common::PageId,
) -> Vec<Vec<Option<Vec<u8>>>> {
    use basalt_buf::LatchMode;
    use basalt_page::{IndexPage, RecordRef};
    let g = store.pool.get(id, LatchMode::Shared).unwrap();
    let page = IndexPage::new(g.data()).unwrap();
    page.iter()
        .map(|r| {
            let rec = RecordRef::new(t.layout(), r.unwrap()).unwrap();
            (0..t.layout().n_key())
                .map(|i| rec.field(i).map(<[u8]>::to_vec))
                .collect()
        })
        .collect()
}
