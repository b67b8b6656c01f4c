//! A page-level workload with an in-memory model: mini-transactions of
//! inserts, deletes and replaces on a set of index pages, and the check
//! that a recovered state is exactly the model after some prefix of the
//! committed mini-transactions.
//!
//! Redo is a sequential log and a group is all-or-nothing, so the state
//! after a crash must equal the model after the first `k` committed
//! mini-transactions for some `k` at least the number acknowledged as
//! durable. A partially applied mini-transaction matches no prefix.

use basalt_buf::LatchMode;
use basalt_common::{IndexId, Lsn, PageId, SpaceId};
use basalt_mtr::{Mtr, MtrResult, PageStore};
use basalt_page::rec::FieldDef;
use basalt_page::{IndexPage, RecordLayout, RedoRecord};
use rand::rngs::SmallRng;
use rand::Rng;

/// Most records kept on one page (all fit: 24 x ~300 B < 16 KiB).
pub const MAX_RECS: usize = 24;

/// Seed of a randomised test (`BASALT_TEST_SEED` or a fresh one, printed).
pub fn seed(test: &str) -> u64 {
    basalt_common::test_support::test_seed(test)
}

/// One change to one page of the workload (`page` indexes the page list).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Insert {
        page: usize,
        slot: u16,
        rec: Vec<u8>,
    },
    Delete {
        page: usize,
        slot: u16,
    },
    Replace {
        page: usize,
        slot: u16,
        rec: Vec<u8>,
    },
}

impl Op {
    fn page(&self) -> usize {
        match self {
            Op::Insert { page, .. } | Op::Delete { page, .. } | Op::Replace { page, .. } => *page,
        }
    }
}

/// Records of each page in slot order.
pub type PagesState = Vec<Vec<Vec<u8>>>;

/// The expected contents of every workload page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    pub pages: PagesState,
}

impl Model {
    pub fn new(n_pages: usize) -> Model {
        Model {
            pages: vec![Vec::new(); n_pages],
        }
    }

    pub fn apply(&mut self, ops: &[Op]) {
        for op in ops {
            match op {
                Op::Insert { page, slot, rec } => {
                    self.pages[*page].insert(*slot as usize, rec.clone())
                }
                Op::Delete { page, slot } => {
                    self.pages[*page].remove(*slot as usize);
                }
                Op::Replace { page, slot, rec } => self.pages[*page][*slot as usize] = rec.clone(),
            }
        }
    }
}

fn layout() -> RecordLayout {
    RecordLayout::new(vec![FieldDef::fixed(4), FieldDef::var(400)], 1, false).expect("layout")
}

fn record(rng: &mut SmallRng, layout: &RecordLayout) -> Vec<u8> {
    let key: u32 = rng.gen();
    let len = rng.gen_range(1..300);
    let value: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
    let mut out = Vec::new();
    layout
        .encode_leaf(&[Some(&key.to_be_bytes()), Some(&value)], None, &mut out)
        .expect("encode record");
    out
}

/// A random mini-transaction against `model` (not applied to it): one to
/// five changes on one to three pages.
pub fn gen_mtr(rng: &mut SmallRng, model: &Model) -> Vec<Op> {
    let layout = layout();
    let mut scratch = model.clone();
    let n_pages = model.pages.len();
    let pages: Vec<usize> = (0..rng.gen_range(1..=3))
        .map(|_| rng.gen_range(0..n_pages))
        .collect();
    let mut ops = Vec::new();
    for _ in 0..rng.gen_range(1..=5) {
        let page = pages[rng.gen_range(0..pages.len())];
        let n = scratch.pages[page].len();
        let op = match rng.gen_range(0..3) {
            0 if n < MAX_RECS => Op::Insert {
                page,
                slot: rng.gen_range(0..=n) as u16,
                rec: record(rng, &layout),
            },
            1 if n > 0 => Op::Delete {
                page,
                slot: rng.gen_range(0..n) as u16,
            },
            _ if n > 0 => Op::Replace {
                page,
                slot: rng.gen_range(0..n) as u16,
                rec: record(rng, &layout),
            },
            _ => Op::Insert {
                page,
                slot: 0,
                rec: record(rng, &layout),
            },
        };
        scratch.apply(std::slice::from_ref(&op));
        ops.push(op);
    }
    ops
}

/// A mini-transaction inserting one record at the front of each of the
/// first `pages` pages (a group of several log blocks).
pub fn insert_on_pages(rng: &mut SmallRng, pages: usize) -> Vec<Op> {
    let layout = layout();
    (0..pages)
        .map(|page| Op::Insert {
            page,
            slot: 0,
            rec: record(rng, &layout),
        })
        .collect()
}

/// Allocates `n` index pages in the system tablespace, durably.
pub fn setup_pages(store: &PageStore, n: usize) -> MtrResult<Vec<PageId>> {
    let mut ids = Vec::with_capacity(n);
    while ids.len() < n {
        let mut mtr = Mtr::start(store)?;
        for _ in 0..16.min(n - ids.len()) {
            let r = mtr.alloc_page(SpaceId::SYSTEM)?;
            mtr.apply(
                r,
                &RedoRecord::InitIndex {
                    level: 0,
                    index_id: IndexId(77),
                    flags: 0,
                },
            )?;
            ids.push(mtr.page_id(r));
        }
        mtr.commit_durable()?;
    }
    Ok(ids)
}

/// Runs one mini-transaction of `ops` on pages `ids`; returns the end LSN
/// of its group.
pub fn run_mtr(store: &PageStore, ids: &[PageId], ops: &[Op]) -> MtrResult<Lsn> {
    let mut mtr = Mtr::start(store)?;
    for op in ops {
        let r = mtr.get(ids[op.page()], LatchMode::Exclusive)?;
        let rec = match op {
            Op::Insert { slot, rec, .. } => RedoRecord::Insert {
                slot: *slot,
                rec: rec.as_slice().into(),
            },
            Op::Delete { slot, .. } => RedoRecord::Delete { slot: *slot },
            Op::Replace { slot, rec, .. } => RedoRecord::Replace {
                slot: *slot,
                rec: rec.as_slice().into(),
            },
        };
        mtr.apply(r, &rec)?;
    }
    Ok(mtr
        .commit()?
        .expect("every generated mtr changes a page")
        .end)
}

/// The records of every page, read through the buffer pool.
pub fn read_state(store: &PageStore, ids: &[PageId]) -> MtrResult<PagesState> {
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let mut mtr = Mtr::start_unchecked(store);
        let r = mtr.get(*id, LatchMode::Shared)?;
        let page = IndexPage::new(mtr.page(r))?;
        let recs = page
            .iter()
            .map(|r| r.map(<[u8]>::to_vec))
            .collect::<Result<Vec<_>, _>>()?;
        out.push(recs);
    }
    Ok(out)
}

/// Finds `k >= acked` such that `base` + `history[..k]` equals `actual`.
pub fn match_prefix(
    base: &Model,
    history: &[Vec<Op>],
    acked: usize,
    actual: &PagesState,
) -> Result<usize, String> {
    let mut m = base.clone();
    for ops in &history[..acked] {
        m.apply(ops);
    }
    if &m.pages == actual {
        return Ok(acked);
    }
    for (k, ops) in history.iter().enumerate().skip(acked) {
        m.apply(ops);
        if &m.pages == actual {
            return Ok(k + 1);
        }
    }
    // Describe the first difference from the acknowledged state.
    let mut acked_model = base.clone();
    for ops in &history[..acked] {
        acked_model.apply(ops);
    }
    let diff = acked_model
        .pages
        .iter()
        .zip(actual)
        .position(|(a, b)| a != b)
        .map(|p| {
            format!(
                "page #{p}: expected {} records after the acknowledged prefix, found {}",
                acked_model.pages[p].len(),
                actual[p].len()
            )
        })
        .unwrap_or_default();
    Err(format!(
        "recovered state matches no prefix of the {} committed mtrs with at least {acked} acknowledged; {diff}",
        history.len()
    ))
}
