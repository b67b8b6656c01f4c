//! Targeted tests of the slotted page; the randomized model test lives in
//! `tests/index_page_model.rs`.

use basalt_common::{IndexId, PageId, SpaceId, TrxId, PAGE_SIZE};

use super::*;
use crate::header::write_u16;
use crate::rec::info::{INFO_DELETED, INFO_MIN_REC, INFO_NODE_PTR, REC_HEADER_LEN};
use crate::PageError;

/// Damages a page image in one specific way.
type Damage = Box<dyn Fn(&mut Vec<u8>)>;
/// One mutation applied to a page image.
type PageOp = dyn Fn(&mut [u8]) -> crate::Result<()>;

const ID: PageId = PageId::new(SpaceId(2), 40);

fn page(level: u16) -> Vec<u8> {
    let mut p = vec![0xEEu8; PAGE_SIZE];
    init(&mut p, ID, level, IndexId(77), PAGE_FLAG_CLUSTERED).unwrap();
    p
}

/// A record of `len` bytes (header included) whose body is `fill`.
fn rec(info: u8, len: usize, fill: u8) -> Vec<u8> {
    let mut r = vec![fill; len];
    r[0] = info;
    r[1..3].copy_from_slice(&(len as u16).to_be_bytes());
    r
}

fn recs(p: &[u8]) -> Vec<Vec<u8>> {
    IndexPage::new(p)
        .unwrap()
        .iter()
        .map(|r| r.unwrap().to_vec())
        .collect()
}

#[test]
fn init_gives_an_empty_checked_page() {
    let p = page(3);
    let v = IndexPage::new(&p).unwrap();
    v.check().unwrap();
    assert_eq!((v.level(), v.n_recs(), v.garbage()), (3, 0, 0));
    assert_eq!(v.heap_top(), HEAP_START);
    assert_eq!(v.index_id(), IndexId(77));
    assert_eq!(v.flags(), PAGE_FLAG_CLUSTERED);
    assert_eq!(v.free_space(), PAGE_CAPACITY);
    assert_eq!(v.used_bytes(), 0);
    assert_eq!(v.page_id(), ID);
    assert!(!v.is_leaf());
}

#[test]
fn inserts_keep_slot_order_not_heap_order() {
    let mut p = page(0);
    insert(&mut p, 0, &rec(0, 10, b'b')).unwrap();
    insert(&mut p, 0, &rec(0, 11, b'a')).unwrap();
    insert(&mut p, 2, &rec(0, 12, b'd')).unwrap();
    insert(&mut p, 2, &rec(0, 13, b'c')).unwrap();
    let got = recs(&p);
    assert_eq!(got.iter().map(|r| r[3]).collect::<Vec<_>>(), b"abcd");
    assert_eq!(
        got.iter().map(|r| r.len()).collect::<Vec<_>>(),
        [11, 10, 13, 12]
    );
    let v = IndexPage::new(&p).unwrap();
    // Heap order is arrival order: 'b' first.
    assert_eq!(v.slot_offset(1).unwrap(), HEAP_START);
    assert_eq!(v.used_bytes(), 46 + 4 * SLOT_SIZE);
    v.check().unwrap();
    assert_eq!(
        insert(&mut p, 5, &rec(0, 10, 0)),
        Err(PageError::SlotOutOfRange { slot: 5, n_recs: 4 })
    );
}

#[test]
fn would_fit_is_exact_at_the_boundary_and_no_space_changes_nothing() {
    let mut p = page(0);
    // Two maximal records fill a page exactly.
    insert(&mut p, 0, &rec(0, MAX_REC_LEN, 1)).unwrap();
    insert(&mut p, 1, &rec(0, MAX_REC_LEN, 1)).unwrap();
    assert_eq!(IndexPage::new(&p).unwrap().free_space(), 0);
    assert!(!IndexPage::new(&p).unwrap().would_fit(REC_HEADER_LEN));
    let mut p = page(0);
    while IndexPage::new(&p).unwrap().would_fit(3000) {
        let n = IndexPage::new(&p).unwrap().n_recs();
        insert(&mut p, n, &rec(0, 3000, 1)).unwrap();
    }
    let v = IndexPage::new(&p).unwrap();
    let rest = v.free_space() - SLOT_SIZE;
    assert!(v.would_fit(rest));
    assert!(!v.would_fit(rest + 1));
    let before = p.clone();
    let err = insert(&mut p, 0, &rec(0, rest + 1, 2)).unwrap_err();
    assert_eq!(
        err,
        PageError::NoSpace {
            needed: rest + 1 + SLOT_SIZE,
            available: rest + SLOT_SIZE
        }
    );
    assert_eq!(p, before, "a failed insert leaves the page unchanged");
    insert(&mut p, 1, &rec(0, rest, 2)).unwrap();
    let v = IndexPage::new(&p).unwrap();
    assert_eq!(v.free_space(), 0);
    v.check().unwrap();
}

#[test]
fn insert_compacts_when_garbage_makes_room() {
    let mut p = page(0);
    for i in 0..8 {
        insert(&mut p, i, &rec(0, 2000, i as u8)).unwrap();
    }
    // Delete every other record: garbage, not contiguous space.
    for i in (0..8).step_by(2).rev() {
        delete(&mut p, i).unwrap();
    }
    let v = IndexPage::new(&p).unwrap();
    assert_eq!(v.garbage(), 4 * 2000);
    assert!(v.contiguous_free() < 5000);
    insert(&mut p, 0, &rec(0, 5000, 0xAB)).unwrap();
    let v = IndexPage::new(&p).unwrap();
    v.check().unwrap();
    assert_eq!(v.garbage(), 0);
    let got = recs(&p);
    assert_eq!(
        got.iter().map(|r| r[3]).collect::<Vec<_>>(),
        [0xAB, 1, 3, 5, 7]
    );
}

#[test]
fn delete_of_the_topmost_record_shrinks_the_heap() {
    let mut p = page(0);
    insert(&mut p, 0, &rec(0, 100, 1)).unwrap();
    insert(&mut p, 1, &rec(0, 50, 2)).unwrap();
    insert(&mut p, 2, &rec(0, 30, 3)).unwrap();
    delete(&mut p, 2).unwrap();
    let v = IndexPage::new(&p).unwrap();
    assert_eq!((v.heap_top(), v.garbage()), (HEAP_START + 150, 0));
    delete(&mut p, 0).unwrap();
    let v = IndexPage::new(&p).unwrap();
    assert_eq!((v.heap_top(), v.garbage()), (HEAP_START + 150, 100));
    v.check().unwrap();
    delete(&mut p, 0).unwrap();
    let v = IndexPage::new(&p).unwrap();
    assert_eq!((v.n_recs(), v.heap_top(), v.garbage()), (0, HEAP_START, 0));
    assert!(matches!(
        delete(&mut p, 0),
        Err(PageError::SlotOutOfRange { .. })
    ));
}

#[test]
fn replace_covers_every_placement() {
    let mut p = page(0);
    insert(&mut p, 0, &rec(0, 100, 1)).unwrap();
    insert(&mut p, 1, &rec(0, 100, 2)).unwrap();
    // Shrink in place (not topmost): tail becomes garbage.
    replace(&mut p, 0, &rec(0, 60, 3)).unwrap();
    assert_eq!(IndexPage::new(&p).unwrap().garbage(), 40);
    // Grow the topmost record in place.
    let top = IndexPage::new(&p).unwrap().slot_offset(1).unwrap();
    replace(&mut p, 1, &rec(0, 300, 4)).unwrap();
    assert_eq!(IndexPage::new(&p).unwrap().slot_offset(1).unwrap(), top);
    // Grow a non-topmost record: moves to the heap top.
    replace(&mut p, 0, &rec(0, 200, 5)).unwrap();
    let v = IndexPage::new(&p).unwrap();
    assert_eq!(v.slot_offset(0).unwrap(), top + 300);
    assert_eq!(v.garbage(), 100);
    v.check().unwrap();
    assert_eq!(recs(&p), vec![rec(0, 200, 5), rec(0, 300, 4)]);

    // Fill the page so that growing needs compaction.
    let mut n = 2;
    while IndexPage::new(&p).unwrap().would_fit(1000) {
        insert(&mut p, n, &rec(0, 1000, 6)).unwrap();
        n += 1;
    }
    delete(&mut p, 2).unwrap();
    let v = IndexPage::new(&p).unwrap();
    let target = v.free_space() + 200;
    assert!(v.contiguous_free() < target - 200);
    assert!(v.would_fit_replace(0, target).unwrap());
    assert!(!v.would_fit_replace(0, target + 1).unwrap());
    let before = p.clone();
    assert!(replace(&mut p, 0, &rec(0, target + 1, 7))
        .unwrap_err()
        .is_no_space());
    assert_eq!(p, before);
    replace(&mut p, 0, &rec(0, target, 7)).unwrap();
    let v = IndexPage::new(&p).unwrap();
    v.check().unwrap();
    assert_eq!(v.free_space(), 0);
    assert_eq!(v.rec(0).unwrap(), &rec(0, target, 7)[..]);
    assert_eq!(v.rec(1).unwrap(), &rec(0, 300, 4)[..]);
}

#[test]
fn delete_marks_flip_only_the_info_bit() {
    let mut p = page(0);
    insert(&mut p, 0, &rec(0, 20, 9)).unwrap();
    set_delete_mark(&mut p, 0, true).unwrap();
    assert_eq!(recs(&p)[0], rec(INFO_DELETED, 20, 9));
    set_delete_mark(&mut p, 0, false).unwrap();
    assert_eq!(recs(&p)[0], rec(0, 20, 9));
}

#[test]
fn ranges_and_runs() {
    let mut p = page(0);
    let run: Vec<u8> = (0..6).flat_map(|i| rec(0, 10 + i, i as u8)).collect();
    insert_many(&mut p, 0, &run).unwrap();
    insert_many(&mut p, 3, &rec(0, 50, 0xFF)).unwrap();
    insert_many(&mut p, 3, &[]).unwrap();
    assert_eq!(
        recs(&p).iter().map(|r| r[3]).collect::<Vec<_>>(),
        [0, 1, 2, 0xFF, 3, 4, 5]
    );
    delete_range(&mut p, 1, 4).unwrap();
    assert_eq!(
        recs(&p).iter().map(|r| r[3]).collect::<Vec<_>>(),
        [0, 3, 4, 5]
    );
    IndexPage::new(&p).unwrap().check().unwrap();
    assert!(matches!(
        delete_range(&mut p, 2, 5),
        Err(PageError::SlotOutOfRange { .. })
    ));
    assert!(matches!(
        delete_range(&mut p, 3, 2),
        Err(PageError::SlotOutOfRange { .. })
    ));

    // A run with a bad record changes nothing.
    let before = p.clone();
    let mut bad = rec(0, 10, 1);
    bad.extend_from_slice(&[0, 0, 40, 1]);
    assert!(matches!(
        insert_many(&mut p, 0, &bad),
        Err(PageError::BadRecord(_))
    ));
    assert_eq!(p, before);
    delete_range(&mut p, 0, 4).unwrap();
    let v = IndexPage::new(&p).unwrap();
    assert_eq!((v.n_recs(), v.heap_top()), (0, HEAP_START));
}

#[test]
fn record_kind_must_match_the_level() {
    let mut leaf = page(0);
    let mut node = page(1);
    assert!(matches!(
        insert(&mut leaf, 0, &rec(INFO_NODE_PTR, 10, 0)),
        Err(PageError::BadRecord(_))
    ));
    assert!(matches!(
        insert(&mut node, 0, &rec(0, 10, 0)),
        Err(PageError::BadRecord(_))
    ));
    assert!(matches!(
        insert(&mut leaf, 0, &rec(INFO_MIN_REC, 10, 0)),
        Err(PageError::BadRecord(_))
    ));
    insert(&mut node, 0, &rec(INFO_NODE_PTR | INFO_MIN_REC, 10, 0)).unwrap();
    // Header length must match the slice.
    let mut r = rec(0, 10, 0);
    r.push(0);
    assert!(matches!(
        insert(&mut leaf, 0, &r),
        Err(PageError::BadRecord(_))
    ));
    assert!(matches!(
        insert(&mut leaf, 0, &[0, 0]),
        Err(PageError::BadRecord(_))
    ));
    let big = rec(0, MAX_REC_LEN + 1, 0);
    assert!(matches!(
        insert(&mut leaf, 0, &big),
        Err(PageError::RecordTooLarge { .. })
    ));
}

#[test]
fn compact_orders_the_heap_by_slot_and_zeroes_the_gap() {
    let mut p = page(0);
    for i in 0..5u8 {
        insert(&mut p, 0, &rec(0, 20 + usize::from(i), i)).unwrap();
    }
    delete(&mut p, 2).unwrap();
    set_max_trx_id(&mut p, TrxId(99)).unwrap();
    compact(&mut p).unwrap();
    let v = IndexPage::new(&p).unwrap();
    v.check().unwrap();
    assert_eq!(v.garbage(), 0);
    assert_eq!(v.max_trx_id(), TrxId(99));
    let mut expect = HEAP_START;
    for i in 0..v.n_recs() {
        assert_eq!(v.slot_offset(i).unwrap(), expect);
        expect += v.rec(i).unwrap().len();
    }
    assert_eq!(v.heap_top(), expect);
    let dir_start = DIR_END - SLOT_SIZE * v.n_recs();
    assert!(p[expect..dir_start].iter().all(|&b| b == 0));
}

#[test]
fn check_catches_damage() {
    let mut good = page(0);
    for i in 0..4 {
        insert(&mut good, i, &rec(0, 30, i as u8)).unwrap();
    }
    let dir = |i: usize| DIR_END - SLOT_SIZE * (i + 1);
    let cases: Vec<(&str, Damage)> = vec![
        (
            "overlapping slots",
            Box::new(move |p| {
                let o = crate::header::read_u16(p, dir(0));
                write_u16(p, dir(1), o + 1);
            }),
        ),
        (
            "slot outside heap",
            Box::new(move |p| write_u16(p, dir(2), 20)),
        ),
        (
            "record length past heap top",
            Box::new(|p| write_u16(p, HEAP_START + 1, 500)),
        ),
        (
            "record length below header",
            Box::new(|p| write_u16(p, HEAP_START + 1, 2)),
        ),
        (
            "heap top past directory",
            Box::new(|p| write_u16(p, IH_HEAP_TOP, (DIR_END - 2) as u16)),
        ),
        (
            "heap top below heap start",
            Box::new(|p| write_u16(p, IH_HEAP_TOP, 10)),
        ),
        (
            "garbage beyond heap",
            Box::new(|p| write_u16(p, IH_GARBAGE, 1000)),
        ),
        (
            "wrong accounting",
            Box::new(|p| write_u16(p, IH_GARBAGE, 7)),
        ),
        (
            "too many records",
            Box::new(|p| write_u16(p, IH_N_RECS, 9000)),
        ),
        (
            "wrong page type",
            Box::new(|p| write_u16(p, crate::header::FIL_PAGE_TYPE, 4)),
        ),
        (
            "leaf record on node page",
            Box::new(|p| write_u16(p, IH_LEVEL, 1)),
        ),
    ];
    for (what, damage) in cases {
        let mut p = good.clone();
        damage(&mut p);
        let err = check(&p).expect_err(what);
        assert!(err.is_corruption(), "{what}: {err}");
        // Every mutation either succeeds or leaves the page unchanged.
        let ops: [&PageOp; 6] = [
            &|p| compact(p),
            &|p| insert(p, 0, &rec(0, 5000, 1)),
            &|p| replace(p, 0, &rec(0, MAX_REC_LEN, 1)),
            &|p| delete(p, 1),
            &|p| delete_range(p, 0, 3),
            &|p| set_delete_mark(p, 2, true),
        ];
        for op in ops {
            let mut q = p.clone();
            if op(&mut q).is_err() {
                assert_eq!(q, p, "{what}");
            }
        }
    }
    check(&good).unwrap();
    assert!(matches!(
        check(&good[..100]),
        Err(PageError::WrongPageSize { len: 100 })
    ));
}

#[test]
fn geometry_is_the_documented_on_disk_format() {
    // These numbers are part of the file format (and quoted in the crate
    // documentation): changing them makes existing data files unreadable.
    assert_eq!(HEAP_START, 70);
    assert_eq!(PAGE_CAPACITY, 16306);
    assert_eq!(MAX_REC_LEN, 8151);
    assert_eq!(MAX_RECS, 3261);
    assert_eq!(crate::overflow::OVERFLOW_CAPACITY, 16330);
    assert_eq!(
        2 * (MAX_REC_LEN + SLOT_SIZE),
        PAGE_CAPACITY,
        "two maximal records fill a page"
    );
    assert_eq!(
        (IH_LEVEL, IH_N_RECS, IH_HEAP_TOP, IH_GARBAGE),
        (38, 40, 42, 44)
    );
    assert_eq!((IH_INDEX_ID, IH_MAX_TRX_ID, IH_FLAGS), (46, 54, 62));
}
