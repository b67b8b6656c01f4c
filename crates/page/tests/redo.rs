//! Redo records: round trips, torn tails, garbage, and replay equivalence
//! (recovery's decode + apply lands on the runtime's exact bytes).

mod support;

use std::borrow::Cow;

use basalt_common::{IndexId, Lsn, PageId, SpaceId, TrxId, FIL_NULL, PAGE_SIZE};
use basalt_page::header::{self, PageType, FIL_PAGE_LSN, FIL_PAGE_NEXT};
use basalt_page::index_page::{self, IndexPage};
use basalt_page::overflow;
use basalt_page::rec::{INFO_MIN_REC, INFO_NODE_PTR};
use basalt_page::redo::{PageImage, RedoReader, RedoRecord, REDO_MTR_END};
use basalt_page::PageError;
use rand::rngs::SmallRng;
use rand::Rng;

fn rec(info: u8, len: usize, fill: u8) -> Vec<u8> {
    let mut r = vec![fill; len];
    r[0] = info;
    r[1..3].copy_from_slice(&(len as u16).to_be_bytes());
    r
}

fn sample_image() -> Vec<u8> {
    let mut p = vec![0u8; PAGE_SIZE];
    index_page::init(&mut p, PageId::new(SpaceId(7), 1234), 0, IndexId(5), 1).unwrap();
    index_page::insert(&mut p, 0, &rec(0, 40, 0x11)).unwrap();
    index_page::insert(&mut p, 1, &rec(0, 30, 0x22)).unwrap();
    p
}

fn one_of_each() -> Vec<RedoRecord<'static>> {
    let run: Vec<u8> = [rec(0, 5, 1), rec(0, 9, 2)].concat();
    vec![
        RedoRecord::InitIndex {
            level: 3,
            index_id: IndexId(u64::MAX),
            flags: 0xA5,
        },
        RedoRecord::InitOverflow,
        RedoRecord::InitPage {
            page_type: PageType::FspHeader,
        },
        RedoRecord::InitPage {
            page_type: PageType::Undo,
        },
        RedoRecord::Insert {
            slot: 0,
            rec: Cow::Owned(rec(0, 200, 3)),
        },
        RedoRecord::InsertMany {
            slot: 65535,
            recs: Cow::Owned(run),
        },
        RedoRecord::InsertMany {
            slot: 1,
            recs: Cow::Owned(Vec::new()),
        },
        RedoRecord::Delete { slot: 300 },
        RedoRecord::DeleteRange { start: 2, end: 9 },
        RedoRecord::Replace {
            slot: 4,
            rec: Cow::Owned(rec(INFO_NODE_PTR, 3, 0)),
        },
        RedoRecord::SetDeleteMark {
            slot: 1,
            marked: true,
        },
        RedoRecord::SetDeleteMark {
            slot: 1,
            marked: false,
        },
        RedoRecord::Compact,
        RedoRecord::SetMaxTrxId { trx_id: TrxId::MAX },
        RedoRecord::WriteBytes {
            offset: 100,
            bytes: Cow::Owned(vec![1, 2, 3]),
        },
        RedoRecord::set_next_sibling(FIL_NULL),
        RedoRecord::OverflowWrite {
            next: 77,
            data: Cow::Owned(vec![9; 5000]),
        },
        RedoRecord::OverflowSetNext { next: FIL_NULL },
        RedoRecord::full_page(&sample_image()).unwrap().into_owned(),
        RedoRecord::FullPage {
            image: PageImage::new(vec![0u8; PAGE_SIZE]).unwrap(),
        },
        RedoRecord::FullPage {
            image: PageImage::new(vec![0xFFu8; PAGE_SIZE]).unwrap(),
        },
        RedoRecord::MtrEnd,
    ]
}

#[test]
fn every_variant_round_trips() {
    let id = PageId::new(SpaceId(u32::MAX), u32::MAX - 1);
    for r in one_of_each() {
        let mut out = vec![0xEE];
        r.encode(id, &mut out);
        let d = RedoRecord::decode(&out[1..]).unwrap_or_else(|e| panic!("{r:?}: {e}"));
        assert_eq!(d.record, r);
        assert_eq!(d.len, out.len() - 1, "{r:?}: decoded length");
        assert_eq!(d.page_id, r.is_page_op().then_some(id));
        assert_eq!(out[1], r.type_byte());
    }
    // MtrEnd is one byte and carries no page id.
    let mut out = Vec::new();
    RedoRecord::MtrEnd.encode(id, &mut out);
    assert_eq!(out, [REDO_MTR_END]);
}

#[test]
fn full_page_images_elide_zero_gaps_and_unlogged_fields() {
    let img = sample_image();
    let mut out = Vec::new();
    RedoRecord::full_page(&img)
        .unwrap()
        .encode(PageId::new(SpaceId(7), 1234), &mut out);
    assert!(
        out.len() < 400,
        "a nearly empty index page logs {} bytes",
        out.len()
    );
    // Checksum and LSN of the source are not logged.
    let mut stamped = img.clone();
    header::set_page_lsn(&mut stamped, Lsn(99));
    header::stamp_checksum(&mut stamped);
    let r = RedoRecord::full_page(&stamped).unwrap();
    assert_eq!(r, RedoRecord::full_page(&img).unwrap());
    assert!(matches!(
        PageImage::new(vec![0u8; 100]),
        Err(PageError::WrongPageSize { len: 100 })
    ));
}

#[test]
fn streams_decode_in_order_and_torn_tails_are_incomplete() {
    let records = one_of_each();
    let mut log = Vec::new();
    let mut ends = Vec::new();
    for (i, r) in records.iter().enumerate() {
        r.encode(PageId::new(SpaceId(i as u32), i as u32 * 1000), &mut log);
        ends.push(log.len());
    }
    let mut reader = RedoReader::new(&log);
    for (i, r) in records.iter().enumerate() {
        let d = reader.next().unwrap().unwrap();
        assert_eq!(&d.record, r);
        assert_eq!(reader.position(), ends[i]);
    }
    assert!(reader.next().is_none());

    // Every cut inside a record: complete records first, then Incomplete.
    let mut start = 0;
    for (i, &end) in ends.iter().enumerate() {
        for cut in start + 1..end {
            assert_eq!(
                RedoRecord::decode(&log[start..cut]).map(|d| d.len),
                Err(PageError::RedoIncomplete),
                "record {i} cut at {} of {}",
                cut - start,
                end - start
            );
        }
        start = end;
    }
    let cut = ends[5] + 3;
    let got: Vec<_> = RedoReader::new(&log[..cut]).collect();
    assert_eq!(got.len(), 7);
    assert!(got[..6].iter().all(Result::is_ok));
    assert_eq!(got[6], Err(PageError::RedoIncomplete));
}

#[test]
fn garbage_is_corrupt_with_its_offset() {
    let mut log = Vec::new();
    RedoRecord::Compact.encode(PageId::new(SpaceId(1), 2), &mut log);
    let good = log.len();
    let cases: Vec<(Vec<u8>, usize)> = vec![
        (vec![0x00], 0),                                  // zero padding
        (vec![0xFF, 1, 2], 0),                            // unknown type
        (vec![0x12, 0x80, 0x80, 0x80, 0x80, 0x10, 1], 1), // space id > u32
        (vec![0x03, 1, 2, 3], 3),                         // InitPage of an index page
        (vec![0x03, 1, 2, 99], 3),                        // unknown page type
        (vec![0x15, 1, 2, 3, 2], 4),                      // delete-mark flag 2
        (vec![0x10, 1, 2, 0, 0x81, 0x81, 0x01], 4),       // record longer than a page
        (vec![0x12, 1, 2, 0x80, 0x80, 0x04], 3),          // slot > u16
    ];
    for (bytes, at) in cases {
        let mut stream = log.clone();
        stream.extend_from_slice(&bytes);
        let got: Vec<_> = RedoReader::new(&stream).collect();
        assert_eq!(got.len(), 2, "{bytes:x?}");
        match &got[1] {
            Err(PageError::RedoCorrupt { at: found, .. }) => {
                assert_eq!(*found, good + at, "{bytes:x?}")
            }
            other => panic!("{bytes:x?}: {other:?}"),
        }
    }
}

#[test]
fn apply_refuses_the_wrong_page_and_protected_bytes() {
    let id = PageId::new(SpaceId(7), 1234);
    let mut p = sample_image();
    let before = p.clone();
    let other = PageId::new(SpaceId(7), 1235);
    for r in [
        RedoRecord::Delete { slot: 0 },
        RedoRecord::Compact,
        RedoRecord::full_page(&before).unwrap(),
    ] {
        assert!(r.apply(other, &mut p).unwrap_err().is_corruption(), "{r:?}");
        assert_eq!(p, before);
    }
    for (offset, len) in [
        (0, 4),
        (8, 4),
        (FIL_PAGE_LSN, 1),
        (FIL_PAGE_LSN - 2, 4),
        (PAGE_SIZE - 8, 1),
        (PAGE_SIZE - 9, 2),
    ] {
        let r = RedoRecord::WriteBytes {
            offset: offset as u16,
            bytes: Cow::Owned(vec![1; len]),
        };
        assert_eq!(
            r.apply(id, &mut p),
            Err(PageError::OutOfBounds { offset, len })
        );
        assert_eq!(p, before);
    }
    RedoRecord::set_next_sibling(42).apply(id, &mut p).unwrap();
    assert_eq!(header::next_page(&p), 42);
    assert!(matches!(
        RedoRecord::Compact.apply(id, &mut p[..10]),
        Err(PageError::WrongPageSize { .. })
    ));
    let mut o = p.clone();
    assert!(RedoRecord::OverflowSetNext { next: 1 }
        .apply(id, &mut o)
        .unwrap_err()
        .is_corruption());
    assert!(RedoRecord::InitPage {
        page_type: PageType::Index
    }
    .apply(id, &mut o)
    .is_err());
    RedoRecord::MtrEnd.apply(id, &mut o).unwrap();
    assert_eq!(o, p);
}

/// A random page operation for an index page of `level` holding `n` records.
fn random_index_op(rng: &mut SmallRng, level: u16, n: usize, page: &[u8]) -> RedoRecord<'static> {
    let info = if level > 0 { INFO_NODE_PTR } else { 0 };
    let slot = |rng: &mut SmallRng, extra: usize| rng.gen_range(0..n + extra) as u16;
    let mk = |rng: &mut SmallRng| {
        let len = support::rec_len(rng);
        let mut info = info;
        if level > 0 && rng.gen_bool(0.05) {
            info |= INFO_MIN_REC;
        }
        support::raw_rec(rng, info, len)
    };
    match rng.gen_range(0..100) {
        0..=34 => RedoRecord::Insert {
            slot: slot(rng, 1),
            rec: Cow::Owned(mk(rng)),
        },
        35..=39 => {
            let k = rng.gen_range(1..6);
            let recs: Vec<u8> = (0..k).flat_map(|_| mk(rng)).collect();
            RedoRecord::InsertMany {
                slot: slot(rng, 1),
                recs: Cow::Owned(recs),
            }
        }
        40..=54 => RedoRecord::Delete { slot: slot(rng, 1) },
        55..=57 => {
            let a = rng.gen_range(0..=n);
            RedoRecord::DeleteRange {
                start: a as u16,
                end: rng.gen_range(a..=n.min(a + 10)) as u16,
            }
        }
        58..=72 => RedoRecord::Replace {
            slot: slot(rng, 1),
            rec: Cow::Owned(mk(rng)),
        },
        73..=82 => RedoRecord::SetDeleteMark {
            slot: slot(rng, 1),
            marked: rng.gen(),
        },
        83..=85 => RedoRecord::Compact,
        86..=88 => RedoRecord::SetMaxTrxId {
            trx_id: TrxId(rng.gen_range(0..1 << 48)),
        },
        89..=92 => RedoRecord::write_u32(FIL_PAGE_NEXT as u16, rng.gen()),
        93..=95 => {
            // A reorganised copy built aside, logged as a full image.
            let mut copy = page.to_vec();
            index_page::compact(&mut copy).expect("runtime page is valid");
            if n > 0 {
                index_page::delete(&mut copy, 0).expect("slot exists");
            }
            RedoRecord::full_page(&copy).unwrap().into_owned()
        }
        _ => RedoRecord::InitIndex {
            level,
            index_id: IndexId(rng.gen()),
            flags: rng.gen(),
        },
    }
}

#[test]
fn replay_reproduces_runtime_pages_byte_for_byte() {
    let mut rng = support::rng("replay_reproduces_runtime_pages_byte_for_byte");
    let ids = [
        PageId::new(SpaceId(3), 10),
        PageId::new(SpaceId(3), 11),
        PageId::new(SpaceId(3), 12),
        PageId::new(SpaceId(0), 0),
    ];
    let levels = [0u16, 1];
    for _ in 0..support::iters(10) {
        // Start images: garbage everywhere, as if the pages were reused.
        let mut start: Vec<Vec<u8>> = (0..4)
            .map(|_| {
                let mut p = vec![0u8; PAGE_SIZE];
                rng.fill(&mut p[..]);
                p
            })
            .collect();
        let mut live = start.clone();
        let mut log = Vec::new();
        let mut logged = 0usize;
        let mut failed = 0usize;
        let mut exec = |r: RedoRecord<'_>, k: usize, live: &mut Vec<Vec<u8>>, log: &mut Vec<u8>| {
            let before = live[k].clone();
            match r.apply(ids[k], &mut live[k]) {
                Ok(()) => {
                    r.encode(ids[k], log);
                    logged += 1;
                }
                Err(_) => {
                    assert_eq!(live[k], before, "failed apply changed the page: {r:?}");
                    failed += 1;
                }
            }
        };
        // Initialisation mini-transaction.
        exec(
            RedoRecord::InitIndex {
                level: 0,
                index_id: IndexId(1),
                flags: 0,
            },
            0,
            &mut live,
            &mut log,
        );
        exec(
            RedoRecord::InitIndex {
                level: 1,
                index_id: IndexId(1),
                flags: 0,
            },
            1,
            &mut live,
            &mut log,
        );
        exec(RedoRecord::InitOverflow, 2, &mut live, &mut log);
        exec(
            RedoRecord::InitPage {
                page_type: PageType::FspHeader,
            },
            3,
            &mut live,
            &mut log,
        );
        RedoRecord::MtrEnd.encode(ids[0], &mut log);
        for _ in 0..1500 {
            let k = rng.gen_range(0..4);
            let r = match k {
                0 | 1 => {
                    let n = IndexPage::new(&live[k]).unwrap().n_recs();
                    random_index_op(&mut rng, levels[k], n, &live[k])
                }
                2 => match rng.gen_range(0..3) {
                    0 => RedoRecord::OverflowSetNext { next: rng.gen() },
                    1 => {
                        let len = rng.gen_range(0..=overflow::OVERFLOW_CAPACITY + 10);
                        let mut data = vec![0u8; len];
                        rng.fill(&mut data[..]);
                        RedoRecord::OverflowWrite {
                            next: rng.gen(),
                            data: Cow::Owned(data),
                        }
                    }
                    _ => RedoRecord::InitOverflow,
                },
                _ => {
                    let off = rng.gen_range(38..PAGE_SIZE - 8 - 16) as u16;
                    let mut b = vec![0u8; rng.gen_range(0..16)];
                    rng.fill(&mut b[..]);
                    RedoRecord::WriteBytes {
                        offset: off,
                        bytes: Cow::Owned(b),
                    }
                }
            };
            exec(r, k, &mut live, &mut log);
            if rng.gen_bool(0.2) {
                RedoRecord::MtrEnd.encode(ids[0], &mut log);
            }
        }
        assert!(
            logged > 1000 && failed > 0,
            "logged {logged}, failed {failed}"
        );
        for p in &live[..2] {
            index_page::check(p).unwrap();
        }

        // Recovery: decode the log, apply each record to its page.
        for d in RedoReader::new(&log) {
            let d = d.unwrap();
            if let Some(id) = d.page_id {
                let k = ids.iter().position(|&x| x == id).expect("known page");
                d.record
                    .apply(id, &mut start[k])
                    .unwrap_or_else(|e| panic!("replay of {:?}: {e}", d.record));
            }
        }
        for k in 0..4 {
            assert!(start[k] == live[k], "page {k} differs after replay");
        }
    }
}
