//! Record encode/decode round trips, comparison and key search on pages.

mod support;

use std::cmp::Ordering;

use basalt_common::{IndexId, PageId, RollPtr, SpaceId, TrxId, PAGE_SIZE};
use basalt_page::index_page::{self, IndexPage, SearchMode};
use basalt_page::rec::{
    ExternRef, FieldCmp, FieldDef, FieldKind, FieldValue, RecordLayout, RecordRef, SysCols,
    REC_HEADER_LEN,
};
use basalt_page::{PageError, MAX_REC_LEN};
use rand::rngs::SmallRng;
use rand::Rng;

type Values = Vec<Option<Vec<u8>>>;
/// Damages an encoded record in one specific way.
type Damage = Box<dyn Fn(&mut Vec<u8>)>;

fn as_refs(v: &Values) -> Vec<Option<&[u8]>> {
    v.iter().map(|x| x.as_deref()).collect()
}

/// Reference order of key prefixes: NULL first, then bytes (Rust's own
/// `Option<&[u8]>` ordering), field by field.
fn ref_cmp(rec_key: &[Option<&[u8]>], key: &[Option<&[u8]>]) -> Ordering {
    rec_key[..key.len()].cmp(key)
}

#[test]
fn random_records_round_trip() {
    let mut rng = support::rng("random_records_round_trip");
    let mut encoded = 0;
    let mut externals = 0;
    for _ in 0..support::iters(3000) {
        let layout = support::layout(&mut rng, 14);
        let values: Values = layout
            .fields()
            .iter()
            .map(|f| support::value(&mut rng, f, 600))
            .collect();
        // Long non-key fields go external now and then.
        let ext: Vec<Option<ExternRef>> = (0..layout.n_fields())
            .map(|i| {
                let long =
                    matches!(layout.field(i).kind, FieldKind::Var { max_len } if max_len > 255);
                (i >= layout.n_key() && long && rng.gen_bool(0.3)).then(|| ExternRef {
                    space: SpaceId(rng.gen()),
                    page_no: rng.gen(),
                    offset: 38,
                    total_len: rng.gen(),
                })
            })
            .collect();
        let fv: Vec<FieldValue<'_>> = values
            .iter()
            .zip(&ext)
            .map(|(v, e)| match e {
                Some(r) => FieldValue::External(*r),
                None => v.as_deref().into(),
            })
            .collect();
        let sys = layout.is_clustered().then(|| SysCols {
            trx_id: TrxId(rng.gen_range(0..=TrxId::MAX.0)),
            roll_ptr: RollPtr::new(rng.gen(), rng.gen(), rng.gen(), rng.gen()),
        });
        let mut out = vec![0xAA; 5];
        let len = match layout.encode_leaf_values(&fv, sys, &mut out) {
            Ok(len) => len,
            Err(PageError::RecordTooLarge { len, max }) => {
                assert!(len > max);
                assert_eq!(out, vec![0xAA; 5], "failed encode must not append");
                continue;
            }
            Err(e) => panic!("encode: {e}"),
        };
        encoded += 1;
        assert_eq!(&out[..5], &[0xAA; 5], "encode appends");
        let bytes = &out[5..];
        assert_eq!(bytes.len(), len);
        let r = RecordRef::new(&layout, bytes).unwrap();
        assert!(!r.is_node_ptr() && !r.is_delete_marked() && !r.is_min_rec());
        assert_eq!(r.n_fields(), layout.n_fields());
        for i in 0..layout.n_fields() {
            match ext[i] {
                Some(e) => {
                    externals += 1;
                    assert!(r.is_external(i));
                    assert_eq!(r.extern_ref(i), Some(e));
                    assert_eq!(r.field(i), Some(&e.to_bytes()[..]));
                }
                None => {
                    assert!(!r.is_external(i));
                    assert_eq!(r.field(i), values[i].as_deref(), "field {i}");
                }
            }
        }
        assert_eq!(r.trx_id(), sys.map(|s| s.trx_id));
        assert_eq!(r.roll_ptr(), sys.map(|s| s.roll_ptr));
        assert_eq!(r.child_page_no(), None);
        assert_eq!(r.has_external(), ext.iter().any(Option::is_some));

        // Node pointer built from the record carries its key.
        let child = rng.gen::<u32>();
        let mut np = Vec::new();
        layout.node_ptr_from(&r, child, false, &mut np).unwrap();
        let n = RecordRef::new(&layout, &np).unwrap();
        assert!(n.is_node_ptr());
        assert_eq!(n.n_fields(), layout.n_key());
        assert_eq!(n.child_page_no(), Some(child));
        assert_eq!(n.trx_id(), None);
        for (i, v) in values.iter().enumerate().take(layout.n_key()) {
            assert_eq!(n.field(i), v.as_deref());
        }
        assert_eq!(n.key_cmp(&r), Ordering::Equal);

        // Comparison: both code paths agree with the reference.
        let rec_key = as_refs(&values)[..layout.n_key()].to_vec();
        let other: Values = (0..layout.n_key())
            .map(|i| {
                if rng.gen_bool(0.5) {
                    values[i].clone()
                } else {
                    support::value(&mut rng, layout.field(i), 600)
                }
            })
            .collect();
        let k = rng.gen_range(0..=layout.n_key());
        let key = &as_refs(&other)[..k];
        let want = ref_cmp(&rec_key, key);
        assert_eq!(layout.compare_key(bytes, key).unwrap(), want);
        assert_eq!(r.compare_key(key), want);
        assert_eq!(layout.compare_key(&np, key).unwrap(), want);
    }
    assert!(encoded > 1000, "only {encoded} records were encodable");
    assert!(
        externals > 50,
        "only {externals} external fields were exercised"
    );
}

#[test]
fn length_array_uses_one_byte_below_128_and_two_from_128_for_long_fields() {
    let long = RecordLayout::new(vec![FieldDef::fixed(1), FieldDef::var(1000)], 1, false).unwrap();
    let short = RecordLayout::new(vec![FieldDef::fixed(1), FieldDef::var(255)], 1, false).unwrap();
    for (layout, len, entry) in [
        (&long, 0, 1),
        (&long, 127, 1),
        (&long, 128, 2),
        (&long, 255, 2),
        (&long, 256, 2),
        (&long, 1000, 2),
        (&short, 0, 1),
        (&short, 127, 1),
        (&short, 128, 1),
        (&short, 255, 1),
    ] {
        let v = vec![7u8; len];
        let mut out = Vec::new();
        let n = layout
            .encode_leaf(&[Some(b"k"), Some(&v)], None, &mut out)
            .unwrap();
        // header + no NULL bitmap + length entry + 1 fixed byte + data
        assert_eq!(n, REC_HEADER_LEN + entry + 1 + len, "len {len}");
        let r = RecordRef::new(layout, &out).unwrap();
        assert_eq!(r.field(1), Some(&v[..]));
    }
    let mut out = Vec::new();
    let too_long = vec![0u8; 256];
    assert!(matches!(
        short.encode_leaf(&[Some(b"k"), Some(&too_long)], None, &mut out),
        Err(PageError::BadValue(_))
    ));
}

#[test]
fn nulls_take_no_data_bytes() {
    let layout = RecordLayout::new(
        (0..10)
            .map(|i| {
                if i % 2 == 0 {
                    FieldDef::fixed(4).nullable()
                } else {
                    FieldDef::var(9).nullable()
                }
            })
            .collect(),
        1,
        false,
    )
    .unwrap();
    let all_null = vec![None; 10];
    let mut out = Vec::new();
    let n = layout.encode_leaf(&all_null, None, &mut out).unwrap();
    assert_eq!(
        n,
        REC_HEADER_LEN + 2,
        "header plus a two-byte bitmap for 10 nullable fields"
    );
    let r = RecordRef::new(&layout, &out).unwrap();
    assert!((0..10).all(|i| r.field(i).is_none()));
    // Set padding bits of the bitmap: not a valid record.
    let mut bad = out.clone();
    bad[REC_HEADER_LEN + 1] |= 0x80;
    assert!(matches!(
        RecordRef::new(&layout, &bad),
        Err(PageError::BadRecord(_))
    ));
}

#[test]
fn clustered_layout_places_system_columns_after_the_key() {
    let layout = RecordLayout::new(vec![FieldDef::fixed(2), FieldDef::fixed(3)], 1, true).unwrap();
    let sys = SysCols {
        trx_id: TrxId(0x0102_0304_0506),
        roll_ptr: RollPtr(0x0a_0b0c_0d0e_0f10),
    };
    let mut out = Vec::new();
    layout
        .encode_leaf(&[Some(b"KK"), Some(b"vvv")], Some(sys), &mut out)
        .unwrap();
    assert_eq!(
        &out[REC_HEADER_LEN..],
        &[
            b'K', b'K', 1, 2, 3, 4, 5, 6, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, b'v', b'v',
            b'v'
        ]
    );
    let r = RecordRef::new(&layout, &out).unwrap();
    assert_eq!(
        (r.trx_id(), r.roll_ptr()),
        (Some(sys.trx_id), Some(sys.roll_ptr))
    );
    assert_eq!(r.field(1), Some(&b"vvv"[..]));
}

#[test]
fn encoder_rejects_what_the_layout_forbids() {
    let layout = RecordLayout::new(
        vec![
            FieldDef::var(1000),
            FieldDef::fixed(4),
            FieldDef::var(100),
            FieldDef::var(100_000),
        ],
        1,
        true,
    )
    .unwrap();
    let sys = Some(SysCols {
        trx_id: TrxId(1),
        roll_ptr: RollPtr(2),
    });
    let ext = FieldValue::External(ExternRef {
        space: SpaceId(1),
        page_no: 2,
        offset: 38,
        total_len: 9,
    });
    let ok = [
        FieldValue::Inline(b"k"),
        FieldValue::Inline(b"1234"),
        FieldValue::Null,
        ext,
    ];
    let mut out = Vec::new();
    assert!(
        matches!(
            layout.encode_leaf_values(&ok, sys, &mut out),
            Err(PageError::BadValue(_))
        ),
        "NULL in NOT NULL"
    );
    let cases: Vec<(Vec<FieldValue<'_>>, Option<SysCols>)> = vec![
        (
            vec![
                ext,
                FieldValue::Inline(b"1234"),
                FieldValue::Inline(b""),
                ext,
            ],
            sys,
        ), // external key
        (
            vec![
                FieldValue::Inline(b"k"),
                FieldValue::Inline(b"123"),
                FieldValue::Inline(b""),
                ext,
            ],
            sys,
        ), // fixed len
        (
            vec![
                FieldValue::Inline(b"k"),
                FieldValue::Inline(b"1234"),
                ext,
                ext,
            ],
            sys,
        ), // short field external
        (
            vec![
                FieldValue::Inline(b"k"),
                FieldValue::Inline(b"1234"),
                FieldValue::Inline(b""),
            ],
            sys,
        ), // count
        (
            vec![
                FieldValue::Inline(b"k"),
                FieldValue::Inline(b"1234"),
                FieldValue::Inline(b""),
                ext,
            ],
            None,
        ), // sys
    ];
    for (vals, sys) in cases {
        let mut out = vec![1, 2, 3];
        assert!(matches!(
            layout.encode_leaf_values(&vals, sys, &mut out),
            Err(PageError::BadValue(_))
        ));
        assert_eq!(out, vec![1, 2, 3]);
    }
    let good = [
        FieldValue::Inline(b"k"),
        FieldValue::Inline(b"1234"),
        FieldValue::Inline(b""),
        ext,
    ];
    layout.encode_leaf_values(&good, sys, &mut out).unwrap();
    let big = vec![0u8; MAX_REC_LEN];
    let too_big = [
        FieldValue::Inline(b"k"),
        FieldValue::Inline(b"1234"),
        FieldValue::Inline(b""),
        FieldValue::Inline(&big),
    ];
    assert!(matches!(
        layout.encode_leaf_values(&too_big, sys, &mut out),
        Err(PageError::RecordTooLarge { .. })
    ));

    assert!(matches!(
        RecordLayout::new(vec![], 0, false),
        Err(PageError::BadLayout(_))
    ));
    assert!(matches!(
        RecordLayout::new(vec![FieldDef::fixed(1)], 2, false),
        Err(PageError::BadLayout(_))
    ));
    assert!(matches!(
        RecordLayout::new(vec![FieldDef::fixed(0)], 1, false),
        Err(PageError::BadLayout(_))
    ));
    assert_eq!(
        RecordLayout::new(
            vec![FieldDef::var(9).with_cmp(FieldCmp::Collated(255))],
            1,
            false
        ),
        Err(PageError::UnsupportedCollation(255))
    );
}

/// Builds a sorted leaf page of random two-field keys (nullable var + fixed).
fn sorted_leaf(rng: &mut SmallRng, layout: &RecordLayout) -> (Vec<u8>, Vec<Values>) {
    let mut keys: Vec<Values> = (0..rng.gen_range(0..150))
        .map(|_| {
            let a = (!rng.gen_bool(0.1)).then(|| {
                let n = rng.gen_range(0..4);
                (0..n)
                    .map(|_| rng.gen_range(b'a'..=b'c'))
                    .collect::<Vec<u8>>()
            });
            vec![a, Some(vec![rng.gen_range(0..3), rng.gen_range(0..3)])]
        })
        .collect();
    keys.sort_by(|x, y| as_refs(x).cmp(&as_refs(y)));
    keys.dedup();
    let mut run = Vec::new();
    for k in &keys {
        let mut vals = as_refs(k);
        vals.push(Some(b"payload"));
        layout.encode_leaf(&vals, None, &mut run).unwrap();
    }
    let mut page = vec![0u8; PAGE_SIZE];
    index_page::init(&mut page, PageId::new(SpaceId(1), 1), 0, IndexId(1), 0).unwrap();
    index_page::insert_many(&mut page, 0, &run).unwrap();
    (page, keys)
}

fn random_key(rng: &mut SmallRng) -> Values {
    let k = rng.gen_range(0..=2);
    let mut key: Values = vec![
        (!rng.gen_bool(0.1)).then(|| {
            (0..rng.gen_range(0..4))
                .map(|_| rng.gen_range(b'a'..=b'c'))
                .collect()
        }),
        Some(vec![rng.gen_range(0..3), rng.gen_range(0..3)]),
    ];
    key.truncate(k);
    key
}

#[test]
fn page_search_matches_linear_reference_for_prefix_keys() {
    let mut rng = support::rng("page_search_matches_linear_reference_for_prefix_keys");
    let layout = RecordLayout::new(
        vec![
            FieldDef::var(10).nullable(),
            FieldDef::fixed(2),
            FieldDef::var(20),
        ],
        2,
        false,
    )
    .unwrap();
    for _ in 0..support::iters(200) {
        let (page, keys) = sorted_leaf(&mut rng, &layout);
        let v = IndexPage::new(&page).unwrap();
        for _ in 0..20 {
            let key = random_key(&mut rng);
            let kr = as_refs(&key);
            let lower = keys
                .iter()
                .position(|r| ref_cmp(&as_refs(r), &kr) != Ordering::Less)
                .unwrap_or(keys.len());
            let upper = keys
                .iter()
                .position(|r| ref_cmp(&as_refs(r), &kr) == Ordering::Greater)
                .unwrap_or(keys.len());
            assert_eq!(
                v.search(&layout, &kr, SearchMode::GreaterOrEqual).unwrap(),
                lower,
                "key {key:?}"
            );
            assert_eq!(
                v.search(&layout, &kr, SearchMode::Greater).unwrap(),
                upper,
                "key {key:?}"
            );
            // The prefix range holds exactly the matching records.
            for (i, r) in keys.iter().enumerate() {
                let m = ref_cmp(&as_refs(r), &kr) == Ordering::Equal;
                assert_eq!(m, (lower..upper).contains(&i));
            }
        }
    }
}

#[test]
fn node_pointer_descent_picks_the_covering_child() {
    let mut rng = support::rng("node_pointer_descent_picks_the_covering_child");
    let layout = RecordLayout::new(
        vec![
            FieldDef::var(10).nullable(),
            FieldDef::fixed(2),
            FieldDef::var(20),
        ],
        2,
        false,
    )
    .unwrap();
    for _ in 0..support::iters(200) {
        let (_, keys) = sorted_leaf(&mut rng, &layout);
        if keys.is_empty() {
            continue;
        }
        // One child per separator; the first node pointer is the min-record.
        let mut run = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            layout
                .encode_node_ptr(&as_refs(k), 100 + i as u32, i == 0, &mut run)
                .unwrap();
        }
        let mut page = vec![0u8; PAGE_SIZE];
        index_page::init(&mut page, PageId::new(SpaceId(1), 2), 1, IndexId(1), 0).unwrap();
        index_page::insert_many(&mut page, 0, &run).unwrap();
        let v = IndexPage::new(&page).unwrap();
        v.check().unwrap();
        for _ in 0..20 {
            let key = random_key(&mut rng);
            let kr = as_refs(&key);
            // Reference: the last separator < key (resp. <= key), the
            // min-record counting as -infinity.
            let below = |strict: bool| {
                (1..keys.len())
                    .rfind(|&i| {
                        let o = ref_cmp(&as_refs(&keys[i]), &kr);
                        o == Ordering::Less || (!strict && o == Ordering::Equal)
                    })
                    .unwrap_or(0)
            };
            let (slot, child) = v
                .child_for(&layout, &kr, SearchMode::GreaterOrEqual)
                .unwrap();
            assert_eq!(
                (slot, child),
                (below(true), 100 + below(true) as u32),
                "key {key:?}"
            );
            assert_eq!(
                v.search_child(&layout, &kr, SearchMode::Greater).unwrap(),
                below(false)
            );
        }
    }
    let leaf = {
        let mut p = vec![0u8; PAGE_SIZE];
        index_page::init(&mut p, PageId::new(SpaceId(1), 3), 0, IndexId(1), 0).unwrap();
        p
    };
    let v = IndexPage::new(&leaf).unwrap();
    assert!(v
        .search_child(&layout, &[], SearchMode::Greater)
        .unwrap_err()
        .is_corruption());
}

#[test]
fn collated_keys_search_case_insensitively_with_pad_space() {
    let layout = RecordLayout::new(
        vec![
            FieldDef::var(40).with_cmp(FieldCmp::Collated(45)),
            FieldDef::fixed(1),
        ],
        1,
        false,
    )
    .unwrap();
    let words = ["apple", "Banana", "cherry", "Éclair", "fig"];
    let mut run = Vec::new();
    for w in words {
        layout
            .encode_leaf(&[Some(w.as_bytes()), Some(b"x")], None, &mut run)
            .unwrap();
    }
    let mut page = vec![0u8; PAGE_SIZE];
    index_page::init(&mut page, PageId::new(SpaceId(1), 1), 0, IndexId(1), 0).unwrap();
    index_page::insert_many(&mut page, 0, &run).unwrap();
    let v = IndexPage::new(&page).unwrap();
    let find = |k: &str| {
        let key = [Some(k.as_bytes())];
        let lo = v.search(&layout, &key, SearchMode::GreaterOrEqual).unwrap();
        let hi = v.search(&layout, &key, SearchMode::Greater).unwrap();
        (lo, hi)
    };
    assert_eq!(find("BANANA  "), (1, 2));
    assert_eq!(find("eclair"), (3, 4));
    assert_eq!(find("CHERRY"), (2, 3));
    assert_eq!(find("date"), (3, 3));
    assert_eq!(find("zzz"), (5, 5));
}

#[test]
fn damaged_records_are_rejected_not_misread() {
    let layout = RecordLayout::new(
        vec![FieldDef::var(1000), FieldDef::var(5000).nullable()],
        1,
        false,
    )
    .unwrap();
    let mut out = Vec::new();
    let v = vec![3u8; 200];
    layout
        .encode_leaf(&[Some(b"key"), Some(&v)], None, &mut out)
        .unwrap();
    RecordRef::new(&layout, &out).unwrap();
    let cases: Vec<(&str, Damage)> = vec![
        (
            "length header mismatch",
            Box::new(|r| r[2] = r[2].wrapping_add(1)),
        ),
        ("reserved info bit", Box::new(|r| r[0] |= 0x02)),
        ("min-rec on a leaf record", Box::new(|r| r[0] |= 0x40)),
        (
            "non-canonical two-byte length",
            Box::new(|r| {
                // key entry: 1 byte (3) -> 2 bytes (0x80, 3)
                r.insert(4, 0x80);
                let n = r.len() as u16;
                r[1..3].copy_from_slice(&n.to_be_bytes());
            }),
        ),
        (
            "field data short",
            Box::new(|r| {
                r.pop();
                let n = r.len() as u16;
                r[1..3].copy_from_slice(&n.to_be_bytes());
            }),
        ),
        (
            "external flag with wrong length",
            Box::new(|r| r[5] |= 0x40),
        ),
        (
            "node pointer bit on a leaf record",
            Box::new(|r| r[0] |= 0x01),
        ),
    ];
    for (what, damage) in cases {
        let mut r = out.clone();
        damage(&mut r);
        assert!(RecordRef::new(&layout, &r).is_err(), "{what} decoded");
    }
}
