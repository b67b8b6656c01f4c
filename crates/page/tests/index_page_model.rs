//! Model test: an index page under random operations behaves exactly like a
//! `Vec<Vec<u8>>` of its records, with the capacity rule "records plus one
//! slot each fit in PAGE_CAPACITY", and passes `check()` after every step.

mod support;

use basalt_common::{IndexId, PageId, SpaceId, TrxId, PAGE_SIZE};
use basalt_page::index_page::{self, IndexPage, PAGE_CAPACITY, SLOT_SIZE};
use basalt_page::rec::{INFO_DELETED, INFO_MIN_REC, INFO_NODE_PTR};
use basalt_page::{PageError, MAX_REC_LEN};
use rand::rngs::SmallRng;
use rand::Rng;

/// Bytes the model's records need (records + slots).
fn used(model: &[Vec<u8>]) -> usize {
    model.iter().map(|r| r.len() + SLOT_SIZE).sum()
}

fn compare(page: &[u8], model: &[Vec<u8>], step: usize, op: &str) {
    let v = IndexPage::new(page).unwrap_or_else(|e| panic!("step {step} ({op}): {e}"));
    if let Err(e) = v.check() {
        panic!("step {step} ({op}): check failed: {e}");
    }
    assert_eq!(v.n_recs(), model.len(), "step {step} ({op}): record count");
    for (i, want) in model.iter().enumerate() {
        let got = v.rec(i).unwrap();
        assert_eq!(got, &want[..], "step {step} ({op}): record {i} differs");
    }
    assert_eq!(
        v.used_bytes(),
        used(model),
        "step {step} ({op}): used bytes"
    );
    assert_eq!(
        v.free_space(),
        PAGE_CAPACITY - used(model),
        "step {step} ({op}): free space"
    );
}

fn run(rng: &mut SmallRng, level: u16, steps: usize) {
    let id = PageId::new(SpaceId(1), 5);
    let mut page = vec![0u8; PAGE_SIZE];
    index_page::init(&mut page, id, level, IndexId(3), 0).unwrap();
    let base_info = if level > 0 { INFO_NODE_PTR } else { 0 };
    let mut model: Vec<Vec<u8>> = Vec::new();
    let mut no_space = 0usize;

    for step in 0..steps {
        let n = model.len();
        let before = page.clone();
        let free = PAGE_CAPACITY - used(&model);
        let op = rng.gen_range(0..100);
        let name;
        match op {
            0..=39 => {
                name = "insert";
                let slot = rng.gen_range(0..=n);
                let info = base_info
                    | if level > 0 && slot == 0 && rng.gen_bool(0.3) {
                        INFO_MIN_REC
                    } else {
                        0
                    };
                let len = support::rec_len(rng);
                let rec = support::raw_rec(rng, info, len);
                let fits = rec.len() + SLOT_SIZE <= free;
                assert_eq!(IndexPage::new(&page).unwrap().would_fit(rec.len()), fits);
                match index_page::insert(&mut page, slot, &rec) {
                    Ok(()) => {
                        assert!(fits, "step {step}: insert succeeded beyond capacity");
                        model.insert(slot, rec);
                    }
                    Err(PageError::NoSpace { .. }) => {
                        assert!(
                            !fits,
                            "step {step}: NoSpace although {} <= {free}",
                            rec.len() + 2
                        );
                        assert_eq!(page, before, "step {step}: failed insert changed the page");
                        no_space += 1;
                    }
                    Err(e) => panic!("step {step}: insert: {e}"),
                }
            }
            40..=44 => {
                name = "insert_many";
                let slot = rng.gen_range(0..=n);
                let k = rng.gen_range(0..12);
                let recs: Vec<Vec<u8>> = (0..k)
                    .map(|_| {
                        let len = rng.gen_range(3..300);
                        support::raw_rec(rng, base_info, len)
                    })
                    .collect();
                let fits = used(&recs) <= free;
                match index_page::insert_many(&mut page, slot, &recs.concat()) {
                    Ok(()) => {
                        assert!(fits, "step {step}: insert_many beyond capacity");
                        model.splice(slot..slot, recs);
                    }
                    Err(PageError::NoSpace { .. }) => {
                        assert!(!fits);
                        assert_eq!(page, before);
                        no_space += 1;
                    }
                    Err(e) => panic!("step {step}: insert_many: {e}"),
                }
            }
            45..=64 => {
                name = "delete";
                let slot = rng.gen_range(0..=n);
                match index_page::delete(&mut page, slot) {
                    Ok(()) => {
                        model.remove(slot);
                    }
                    Err(PageError::SlotOutOfRange { .. }) => {
                        assert_eq!(slot, n);
                        assert_eq!(page, before);
                    }
                    Err(e) => panic!("step {step}: delete: {e}"),
                }
            }
            65..=69 => {
                name = "delete_range";
                let a = rng.gen_range(0..=n);
                let b = rng.gen_range(a..=n.min(a + 20));
                index_page::delete_range(&mut page, a, b).unwrap();
                model.drain(a..b);
            }
            70..=84 => {
                name = "replace";
                if n == 0 {
                    continue;
                }
                let slot = rng.gen_range(0..n);
                let len = if rng.gen_bool(0.5) {
                    // Near the old length: shrink or grow a little.
                    (model[slot].len() as isize + rng.gen_range(-40..=40))
                        .clamp(3, MAX_REC_LEN as isize) as usize
                } else {
                    support::rec_len(rng)
                };
                let info = model[slot][0];
                let rec = support::raw_rec(rng, info, len);
                let fits = len <= free + model[slot].len();
                assert_eq!(
                    IndexPage::new(&page)
                        .unwrap()
                        .would_fit_replace(slot, len)
                        .unwrap(),
                    fits
                );
                match index_page::replace(&mut page, slot, &rec) {
                    Ok(()) => {
                        assert!(fits);
                        model[slot] = rec;
                    }
                    Err(PageError::NoSpace { .. }) => {
                        assert!(!fits);
                        assert_eq!(page, before);
                        no_space += 1;
                    }
                    Err(e) => panic!("step {step}: replace: {e}"),
                }
            }
            85..=94 => {
                name = "set_delete_mark";
                if n == 0 {
                    continue;
                }
                let slot = rng.gen_range(0..n);
                let marked = rng.gen_bool(0.6);
                index_page::set_delete_mark(&mut page, slot, marked).unwrap();
                if marked {
                    model[slot][0] |= INFO_DELETED;
                } else {
                    model[slot][0] &= !INFO_DELETED;
                }
            }
            95..=97 => {
                name = "compact";
                index_page::compact(&mut page).unwrap();
                assert_eq!(IndexPage::new(&page).unwrap().garbage(), 0);
            }
            _ => {
                name = "set_max_trx_id";
                let t = TrxId(rng.gen_range(0..=TrxId::MAX.0));
                index_page::set_max_trx_id(&mut page, t).unwrap();
                assert_eq!(IndexPage::new(&page).unwrap().max_trx_id(), t);
            }
        }
        compare(&page, &model, step, name);
    }
    assert!(
        no_space > 0,
        "the run never filled the page; the capacity rule went untested"
    );
}

#[test]
fn leaf_page_matches_vec_model() {
    let mut rng = support::rng("leaf_page_matches_vec_model");
    for _ in 0..support::iters(8) {
        run(&mut rng, 0, 3000);
    }
}

#[test]
fn node_page_matches_vec_model() {
    let mut rng = support::rng("node_page_matches_vec_model");
    for _ in 0..support::iters(4) {
        run(&mut rng, 2, 3000);
    }
}
