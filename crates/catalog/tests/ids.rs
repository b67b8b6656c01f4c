//! Id allocation: ranges follow each other from the first dynamic id, are
//! never handed out twice (also across crashes and between threads), and
//! stop at the reserved space ids.

mod support;

use std::collections::BTreeSet;

use basalt_buf::LatchMode;
use basalt_catalog::{
    dict_header_page, CatalogError, IdRequest, FIRST_DYNAMIC_ID, FIRST_SPACE_ID, MAX_SPACE_ID,
};
use basalt_mtr::Mtr;
use basalt_page::header::FIL_PAGE_DATA;
use basalt_page::RedoRecord;
use support::*;

fn req(tables: u32, indexes: u32, spaces: u32) -> IdRequest {
    IdRequest {
        tables,
        indexes,
        spaces,
    }
}

#[test]
fn ids_follow_each_other_and_survive_a_crash_crash() {
    let node = Node::create();
    let catalog = node.catalog();
    let a = catalog.allocate_ids(node.store(), req(2, 3, 1)).unwrap();
    assert_eq!(a.tables, FIRST_DYNAMIC_ID..FIRST_DYNAMIC_ID + 2);
    assert_eq!(a.indexes, FIRST_DYNAMIC_ID..FIRST_DYNAMIC_ID + 3);
    assert_eq!(a.spaces, FIRST_SPACE_ID..FIRST_SPACE_ID + 1);
    let b = catalog.allocate_ids(node.store(), req(1, 0, 4)).unwrap();
    assert_eq!(b.tables.start, a.tables.end);
    assert!(b.indexes.is_empty() && b.indexes.start == a.indexes.end);
    assert_eq!(b.spaces, a.spaces.end..a.spaces.end + 4);

    // A request for nothing writes nothing.
    let lsn = node.store().log.current_lsn();
    let none = catalog
        .allocate_ids(node.store(), IdRequest::default())
        .unwrap();
    assert!(none.tables.is_empty() && none.tables.start == b.tables.end);
    assert_eq!(node.store().log.current_lsn(), lsn);
    drop(catalog);

    // Power fails right after: the counters are durable.
    let node = node.crash();
    let catalog = node.catalog();
    let c = catalog.counters(node.store()).unwrap();
    assert_eq!(
        (c.next_table_id, c.next_index_id, c.next_space_id),
        (b.tables.end, b.indexes.end, b.spaces.end)
    );
    let d = catalog.allocate_ids(node.store(), req(1, 1, 1)).unwrap();
    assert_eq!(d.tables.start, b.tables.end);
    assert_eq!(d.indexes.start, b.indexes.end);
    assert_eq!(d.spaces.start, b.spaces.end);
}

#[test]
fn space_ids_stop_below_the_reserved_range() {
    let node = Node::create();
    let catalog = node.catalog();
    {
        // Move the space counter close to its end.
        let mut mtr = Mtr::start(node.store()).unwrap();
        let r = mtr.get(dict_header_page(), LatchMode::Exclusive).unwrap();
        mtr.apply(
            r,
            &RedoRecord::WriteBytes {
                offset: (FIL_PAGE_DATA + 24) as u16,
                bytes: (MAX_SPACE_ID - 1).to_be_bytes().to_vec().into(),
            },
        )
        .unwrap();
        mtr.commit_durable().unwrap();
    }
    let a = catalog.allocate_ids(node.store(), req(0, 0, 2)).unwrap();
    assert_eq!(a.spaces, MAX_SPACE_ID - 1..MAX_SPACE_ID + 1);
    let before = catalog.counters(node.store()).unwrap();
    assert!(matches!(
        catalog.allocate_ids(node.store(), req(1, 1, 1)),
        Err(CatalogError::IdsExhausted { kind: "space" })
    ));
    assert_eq!(
        catalog.counters(node.store()).unwrap(),
        before,
        "a refused allocation moves no counter"
    );
    // Table and index ids still come.
    let b = catalog.allocate_ids(node.store(), req(1, 1, 0)).unwrap();
    assert_eq!(b.tables.end - b.tables.start, 1);
}

#[test]
fn concurrent_allocations_never_overlap() {
    let node = Node::create();
    let catalog = node.catalog();
    let store = node.store();
    let all: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4u32)
            .map(|t| {
                let catalog = &catalog;
                s.spawn(move || {
                    (0..25)
                        .map(|i| {
                            catalog
                                .allocate_ids(store, req(1 + t, 1 + (i % 3), t % 2))
                                .unwrap()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("allocator thread"))
            .collect()
    });
    let mut tables = BTreeSet::new();
    let mut indexes = BTreeSet::new();
    let mut spaces = BTreeSet::new();
    for ids in &all {
        for t in ids.tables.clone() {
            assert!(tables.insert(t), "table id {t} handed out twice");
        }
        for i in ids.indexes.clone() {
            assert!(indexes.insert(i), "index id {i} handed out twice");
        }
        for sp in ids.spaces.clone() {
            assert!(spaces.insert(sp), "space id {sp} handed out twice");
        }
    }
    // No gaps either: the ids handed out are exactly the counters' ranges.
    let c = catalog.counters(store).unwrap();
    assert_eq!(tables.len() as u64, c.next_table_id - FIRST_DYNAMIC_ID);
    assert_eq!(indexes.len() as u64, c.next_index_id - FIRST_DYNAMIC_ID);
    assert_eq!(
        spaces.len() as u64,
        u64::from(c.next_space_id - FIRST_SPACE_ID)
    );
}
