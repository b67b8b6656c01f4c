//! Robustness: damaged and random bytes fed to every decoder and to every
//! page operation. Nothing may panic; failed operations leave the page
//! unchanged; whatever validates must then be fully usable.

mod support;

use std::borrow::Cow;

use basalt_common::{IndexId, PageId, SpaceId, PAGE_SIZE};
use basalt_page::index_page::{self, IndexPage, SearchMode};
use basalt_page::overflow;
use basalt_page::rec::{RecordLayout, RecordRef};
use basalt_page::redo::{RedoReader, RedoRecord};
use rand::rngs::SmallRng;
use rand::Rng;

const ID: PageId = PageId::new(SpaceId(9), 99);

/// A populated, valid leaf page of `layout` records.
fn valid_page(rng: &mut SmallRng, layout: &RecordLayout) -> Vec<u8> {
    let mut p = vec![0u8; PAGE_SIZE];
    index_page::init(&mut p, ID, 0, IndexId(1), 0).unwrap();
    for _ in 0..rng.gen_range(0..60) {
        let vals: Vec<Option<Vec<u8>>> = layout
            .fields()
            .iter()
            .map(|f| support::value(rng, f, 200))
            .collect();
        let refs: Vec<Option<&[u8]>> = vals.iter().map(|v| v.as_deref()).collect();
        let sys = layout.is_clustered().then(|| basalt_page::rec::SysCols {
            trx_id: basalt_common::TrxId(rng.gen_range(0..1 << 48)),
            roll_ptr: basalt_common::RollPtr(rng.gen_range(0..1 << 56)),
        });
        let mut rec = Vec::new();
        if layout.encode_leaf(&refs, sys, &mut rec).is_err() {
            continue;
        }
        let v = IndexPage::new(&p).unwrap();
        let slot = v
            .search(layout, &refs[..layout.n_key()], SearchMode::GreaterOrEqual)
            .unwrap();
        if v.would_fit(rec.len()) {
            index_page::insert(&mut p, slot, &rec).unwrap();
        }
    }
    p
}

/// Flips a few random bits/bytes, biased towards the header and directory.
fn damage(rng: &mut SmallRng, p: &mut [u8]) {
    for _ in 0..rng.gen_range(1..6) {
        let at = match rng.gen_range(0..3) {
            0 => rng.gen_range(38..70),
            1 => rng.gen_range(PAGE_SIZE - 400..PAGE_SIZE - 8),
            _ => rng.gen_range(0..PAGE_SIZE),
        };
        if rng.gen_bool(0.5) {
            p[at] ^= 1 << rng.gen_range(0..8);
        } else {
            p[at] = rng.gen();
        }
    }
}

/// Uses every read accessor; asserts that a page passing `check()` never
/// fails on them.
fn read_everything(p: &[u8], layout: &RecordLayout, rng: &mut SmallRng) {
    let checked = index_page::check(p).is_ok();
    let Ok(v) = IndexPage::new(p) else {
        assert!(!checked);
        return;
    };
    let _ = (
        v.free_space(),
        v.used_bytes(),
        v.would_fit(100),
        v.would_fit_replace(0, 10),
    );
    for (i, r) in v.iter().enumerate() {
        match r {
            Ok(bytes) => {
                if let Ok(rec) = RecordRef::new(layout, bytes) {
                    for f in 0..rec.n_fields() {
                        let _ = (rec.field(f), rec.is_external(f), rec.extern_ref(f));
                    }
                    let _ = (rec.trx_id(), rec.roll_ptr(), rec.child_page_no());
                    // The two comparison paths agree on anything that decodes.
                    let key: Vec<Option<&[u8]>> = (0..rng
                        .gen_range(0..=layout.n_key().min(rec.n_fields())))
                        .map(|f| rec.field(f))
                        .collect();
                    assert_eq!(
                        layout.compare_key(bytes, &key).unwrap(),
                        rec.compare_key(&key)
                    );
                }
            }
            Err(e) => assert!(!checked, "checked page fails on slot {i}: {e}"),
        }
    }
    let key = [Some(&b"abc"[..])];
    let s = v.search(layout, &key[..layout.n_key().min(1)], SearchMode::Greater);
    let _ = v.search_child(layout, &[], SearchMode::GreaterOrEqual);
    if let (true, Err(e)) = (checked, s) {
        // A checked page only fails a search on a record the layout rejects.
        assert!(e.is_corruption(), "{e}");
    }
}

/// A structurally random redo record.
fn random_redo(rng: &mut SmallRng) -> RedoRecord<'static> {
    let bytes = |rng: &mut SmallRng, max: usize| -> Vec<u8> {
        let mut b = vec![0u8; rng.gen_range(0..max)];
        rng.fill(&mut b[..]);
        if b.len() >= 3 && rng.gen_bool(0.7) {
            // Usually a well-formed fixed header.
            let n = b.len() as u16;
            b[1..3].copy_from_slice(&n.to_be_bytes());
            b[0] &= 0x81;
        }
        b
    };
    let slot = rng.gen_range(0..80);
    match rng.gen_range(0..13) {
        0 => RedoRecord::Insert {
            slot,
            rec: Cow::Owned(bytes(rng, 400)),
        },
        1 => RedoRecord::InsertMany {
            slot,
            recs: Cow::Owned(bytes(rng, 400)),
        },
        2 => RedoRecord::Delete { slot },
        3 => RedoRecord::DeleteRange {
            start: slot,
            end: rng.gen_range(0..90),
        },
        4 => RedoRecord::Replace {
            slot,
            rec: Cow::Owned(bytes(rng, 9000)),
        },
        5 => RedoRecord::SetDeleteMark {
            slot,
            marked: rng.gen(),
        },
        6 => RedoRecord::Compact,
        7 => RedoRecord::SetMaxTrxId {
            trx_id: basalt_common::TrxId(rng.gen()),
        },
        8 => RedoRecord::WriteBytes {
            offset: rng.gen(),
            bytes: Cow::Owned(bytes(rng, 64)),
        },
        9 => RedoRecord::OverflowWrite {
            next: rng.gen(),
            data: Cow::Owned(bytes(rng, 17000)),
        },
        10 => RedoRecord::OverflowSetNext { next: rng.gen() },
        11 => RedoRecord::MtrEnd,
        _ => RedoRecord::InitIndex {
            level: rng.gen(),
            index_id: IndexId(rng.gen()),
            flags: rng.gen(),
        },
    }
}

#[test]
fn damaged_pages_never_panic_and_failed_ops_change_nothing() {
    let mut rng = support::rng("damaged_pages_never_panic_and_failed_ops_change_nothing");
    let mut applied_on_damaged = 0;
    for _ in 0..support::iters(150) {
        let layout = support::layout(&mut rng, 8);
        let good = valid_page(&mut rng, &layout);
        index_page::check(&good).unwrap();
        read_everything(&good, &layout, &mut rng);
        for _ in 0..10 {
            let mut p = good.clone();
            damage(&mut rng, &mut p);
            read_everything(&p, &layout, &mut rng);
            for _ in 0..5 {
                let r = random_redo(&mut rng);
                let target = if rng.gen_bool(0.9) {
                    ID
                } else {
                    PageId::new(SpaceId(9), 98)
                };
                let before = p.clone();
                match r.apply(target, &mut p) {
                    Ok(()) => applied_on_damaged += 1,
                    Err(e) => assert_eq!(p, before, "{r:?} failed ({e}) but changed the page"),
                }
            }
            read_everything(&p, &layout, &mut rng);
        }
        // On the valid page, successful index operations keep it valid.
        let mut p = good.clone();
        for _ in 0..40 {
            let r = random_redo(&mut rng);
            if let RedoRecord::WriteBytes { .. } = r {
                // Raw writes may legitimately break index invariants.
                continue;
            }
            let before = p.clone();
            match r.apply(ID, &mut p) {
                Ok(()) => {
                    index_page::check(&p).unwrap_or_else(|e| panic!("{r:?} broke the page: {e}"))
                }
                Err(_) => assert_eq!(p, before),
            }
        }
    }
    assert!(applied_on_damaged > 0);
}

#[test]
fn random_bytes_never_panic_the_decoders() {
    let mut rng = support::rng("random_bytes_never_panic_the_decoders");
    let layout = support::layout(&mut rng, 10);
    let mut decoded = 0;
    for _ in 0..support::iters(3000) {
        let mut buf = vec![0u8; rng.gen_range(0..300)];
        rng.fill(&mut buf[..]);
        if !buf.is_empty() && rng.gen_bool(0.7) {
            // A known type byte makes deeper decoding likely.
            const TYPES: [u8; 16] = [
                1, 2, 3, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x20, 0x21, 0x22, 0x30,
                0x7F,
            ];
            buf[0] = TYPES[rng.gen_range(0..TYPES.len())];
        }
        let mut page = vec![0u8; PAGE_SIZE];
        rng.fill(&mut page[..]);
        let mut reader = RedoReader::new(&buf);
        for d in reader.by_ref() {
            let Ok(d) = d else { break };
            decoded += 1;
            assert!(d.len > 0 && d.len <= buf.len());
            // A decoded record re-encodes to something that decodes to it.
            let mut again = Vec::new();
            d.record.encode(d.page_id.unwrap_or(ID), &mut again);
            assert_eq!(RedoRecord::decode(&again).unwrap().record, d.record);
            let before = page.clone();
            if d.record.apply(d.page_id.unwrap_or(ID), &mut page).is_err() {
                assert_eq!(page, before);
            }
        }
        assert!(reader.position() <= buf.len());

        let _ = index_page::check(&page);
        read_everything(&page, &layout, &mut rng);
        let _ = overflow::read_chunk(&page);
        if buf.len() >= 3 {
            let n = buf.len() as u16;
            buf[1..3].copy_from_slice(&n.to_be_bytes());
        }
        if let Ok(r) = RecordRef::new(&layout, &buf) {
            for f in 0..r.n_fields() {
                let _ = (r.field(f), r.extern_ref(f));
            }
            let key: Vec<Option<&[u8]>> = (0..layout.n_key().min(r.n_fields()))
                .map(|f| r.field(f))
                .collect();
            assert_eq!(layout.compare_key(&buf, &key).unwrap(), r.compare_key(&key));
        } else {
            let _ = layout.compare_key(&buf, &[Some(b"x")]);
        }
    }
    assert!(decoded > 100, "only {decoded} records decoded");
}
