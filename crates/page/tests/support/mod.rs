//! Shared utilities of the integration tests: seeds, iteration scaling and
//! random inputs.

#![allow(dead_code)]

use basalt_page::rec::{FieldDef, FieldKind, RecordLayout};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// A generator seeded by `BASALT_TEST_SEED` or a fresh seed, printed so a
/// failing run can be replayed.
pub fn rng(test: &str) -> SmallRng {
    SmallRng::seed_from_u64(basalt_common::test_support::test_seed(test))
}

/// `base` times the factor in `BASALT_PAGE_ITERS` (default 1).
pub fn iters(base: usize) -> usize {
    let k = std::env::var("BASALT_PAGE_ITERS")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .unwrap_or(1);
    base * k.max(1)
}

/// A raw record for the page layer: fixed header with `info` and a random
/// body, `len` bytes in total.
pub fn raw_rec(rng: &mut SmallRng, info: u8, len: usize) -> Vec<u8> {
    let mut r = vec![0u8; len];
    rng.fill(&mut r[3..]);
    r[0] = info;
    r[1..3].copy_from_slice(&(len as u16).to_be_bytes());
    r
}

/// A record length: mostly small, sometimes large.
pub fn rec_len(rng: &mut SmallRng) -> usize {
    match rng.gen_range(0..100) {
        0..=69 => rng.gen_range(3..120),
        70..=94 => rng.gen_range(120..1200),
        _ => rng.gen_range(1200..=basalt_page::MAX_REC_LEN),
    }
}

/// A random field definition (binary comparison).
pub fn field_def(rng: &mut SmallRng) -> FieldDef {
    let kind = match rng.gen_range(0..4) {
        0 => FieldKind::Fixed(rng.gen_range(1..=12)),
        1 => FieldKind::Var {
            max_len: rng.gen_range(0..=255),
        },
        2 => FieldKind::Var {
            max_len: rng.gen_range(256..=3000),
        },
        _ => FieldKind::Var { max_len: u32::MAX },
    };
    FieldDef {
        kind,
        nullable: rng.gen_bool(0.4),
        cmp: basalt_page::rec::FieldCmp::Binary,
    }
}

/// A random layout with up to `max_fields` fields.
pub fn layout(rng: &mut SmallRng, max_fields: usize) -> RecordLayout {
    let n = rng.gen_range(1..=max_fields);
    let fields: Vec<FieldDef> = (0..n).map(|_| field_def(rng)).collect();
    let n_key = rng.gen_range(1..=n.min(4));
    RecordLayout::new(fields, n_key, rng.gen_bool(0.5)).expect("valid random layout")
}

/// A random value for a field: NULL sometimes when nullable, lengths
/// biased towards the one/two-byte boundaries of the length array.
pub fn value(rng: &mut SmallRng, f: &FieldDef, cap: usize) -> Option<Vec<u8>> {
    if f.nullable && rng.gen_bool(0.2) {
        return None;
    }
    let len = match f.kind {
        FieldKind::Fixed(n) => usize::from(n),
        FieldKind::Var { max_len } => {
            let max = (max_len as usize).min(cap);
            let pick = [
                0,
                1,
                127,
                128,
                129,
                254,
                255,
                256,
                257,
                max,
                rng.gen_range(0..=max),
            ];
            pick[rng.gen_range(0..pick.len())].min(max)
        }
    };
    let mut v = vec![0u8; len];
    rng.fill(&mut v[..]);
    Some(v)
}
