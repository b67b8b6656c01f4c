//! Turning the redo byte stream into complete mini-transaction groups.
//!
//! The scan hands out the payload in chunks that know nothing of record
//! boundaries. [`GroupParser`] decodes record after record, keeping the
//! records of the *open* group (no `MtrEnd` seen yet) aside; only when the
//! `MtrEnd` arrives do they enter the [`RecoveryHash`], each tagged with the
//! group's end LSN:
//!
//! ```text
//!  chunk at LSN c:   ... r1 r2 END | r3 r4 [r5 cut by the chunk end]
//!                               ^ group end = c + offset after END
//!  carry: r5's first bytes; the next chunk completes it
//!  end of scan with the group r3 r4 r5 still open: discarded, and the
//!  recovered end LSN stays at the last END
//! ```
//!
//! A record's bytes are copied into the arena when decoded, so a record
//! costs one copy however the chunks fall. Only a record cut by a chunk
//! boundary goes through the small carry buffer.

use basalt_common::{Lsn, PageId};
use basalt_page::{PageError, RedoRecord};

use super::hash::{ArenaMark, ArenaPos, RecoveryHash, MAX_RECORD_LEN};
use crate::error::{MtrError, MtrResult};

/// Largest carry: any valid record is shorter (about two pages at most),
/// so a cut record that does not complete within it is corrupt.
const CARRY_LIMIT: usize = 64 * 1024;

/// A record of the open group, its bytes already in the arena.
#[derive(Clone, Copy, Debug)]
struct OpenRecord {
    page_id: PageId,
    at: ArenaPos,
    len: u32,
    is_init: bool,
}

/// Streaming parser of redo chunks into the recovery hash.
#[derive(Debug)]
pub(crate) struct GroupParser {
    /// LSN of the next byte to decode (the carry starts here).
    lsn: Lsn,
    /// End of the last complete group.
    group_end: Lsn,
    /// Arena end before the open group's first record.
    group_mark: ArenaMark,
    open: Vec<OpenRecord>,
    carry: Vec<u8>,
    /// Complete groups seen.
    pub(crate) groups: u64,
    /// Page records of complete groups seen.
    pub(crate) records: u64,
}

/// True for records after which the page's previous contents do not
/// matter.
fn is_init(rec: &RedoRecord<'_>) -> bool {
    matches!(
        rec,
        RedoRecord::InitIndex { .. }
            | RedoRecord::InitOverflow
            | RedoRecord::InitPage { .. }
            | RedoRecord::FullPage { .. }
    )
}

impl GroupParser {
    /// A parser starting at the checkpoint LSN (always a group boundary).
    pub(crate) fn new(start: Lsn, hash: &RecoveryHash) -> GroupParser {
        GroupParser {
            lsn: start,
            group_end: start,
            group_mark: hash.arena.mark(),
            open: Vec::new(),
            carry: Vec::new(),
            groups: 0,
            records: 0,
        }
    }

    /// End LSN of the last complete group.
    pub(crate) fn end_lsn(&self) -> Lsn {
        self.group_end
    }

    /// True between groups: every parsed record belongs to a complete
    /// group, so the hash may be applied as a batch.
    pub(crate) fn at_group_boundary(&self) -> bool {
        self.open.is_empty() && self.carry.is_empty()
    }

    /// Parses payload that starts at `chunk_lsn`. Stops early, right after
    /// a group's `MtrEnd`, once the hash holds more than `budget` bytes:
    /// returns how many bytes of `bytes` were consumed, and the caller
    /// applies the batch, calls [`GroupParser::rebase`] and feeds the rest.
    // PERF: one decode per record, one arena copy per page record, no
    // allocation except for full-page images (decoded into a page buffer).
    pub(crate) fn feed(
        &mut self,
        chunk_lsn: Lsn,
        bytes: &[u8],
        hash: &mut RecoveryHash,
        budget: usize,
    ) -> MtrResult<usize> {
        let expected = self.lsn.add(self.carry.len() as u64);
        if chunk_lsn != expected {
            return Err(MtrError::RedoCorrupt {
                lsn: chunk_lsn,
                reason: format!(
                    "redo chunk does not continue the stream (expected LSN {expected})"
                ),
            });
        }
        let mut off = 0;
        if !self.carry.is_empty() {
            let old = self.carry.len();
            let take = bytes.len().min(CARRY_LIMIT - old);
            self.carry.extend_from_slice(&bytes[..take]);
            let carry = std::mem::take(&mut self.carry);
            let outcome = match RedoRecord::decode(&carry) {
                Ok(d) => {
                    let len = d.len;
                    let r = self.take(&carry[..len], d.page_id, is_init(&d.record), hash);
                    off = len - old;
                    r.map(|()| true)
                }
                Err(PageError::RedoIncomplete) if take == bytes.len() => Ok(false),
                Err(PageError::RedoIncomplete) => Err(MtrError::RedoCorrupt {
                    lsn: self.lsn,
                    reason: format!("a record does not end within {CARRY_LIMIT} bytes"),
                }),
                Err(e) => Err(self.corrupt(0, e)),
            };
            self.carry = carry;
            if outcome? {
                self.carry.clear();
                if self.open.is_empty() && hash.memory() > budget {
                    return Ok(off);
                }
            } else {
                return Ok(bytes.len());
            }
        }
        while off < bytes.len() {
            match RedoRecord::decode(&bytes[off..]) {
                Ok(d) => {
                    let len = d.len;
                    let end = d.page_id.is_none();
                    self.take(&bytes[off..off + len], d.page_id, is_init(&d.record), hash)?;
                    off += len;
                    if end && hash.memory() > budget {
                        return Ok(off);
                    }
                }
                Err(PageError::RedoIncomplete) => {
                    self.carry.extend_from_slice(&bytes[off..]);
                    break;
                }
                Err(e) => return Err(self.corrupt(0, e)),
            }
        }
        Ok(bytes.len())
    }

    fn corrupt(&self, at: usize, e: PageError) -> MtrError {
        let (at, reason) = match e {
            PageError::RedoCorrupt { at: inner, reason } => (at + inner, reason),
            other => (at, other.to_string()),
        };
        MtrError::RedoCorrupt {
            lsn: self.lsn.add(at as u64),
            reason,
        }
    }

    /// Accepts one decoded record of `bytes.len()` bytes at `self.lsn`.
    fn take(
        &mut self,
        bytes: &[u8],
        page_id: Option<PageId>,
        init: bool,
        hash: &mut RecoveryHash,
    ) -> MtrResult<()> {
        if bytes.len() > MAX_RECORD_LEN {
            return Err(MtrError::RedoCorrupt {
                lsn: self.lsn,
                reason: format!("record of {} bytes", bytes.len()),
            });
        }
        self.lsn = self.lsn.add(bytes.len() as u64);
        match page_id {
            None => {
                // MtrEnd: the open group is complete.
                self.group_end = self.lsn;
                self.records += self.open.len() as u64;
                for r in self.open.drain(..) {
                    hash.add(r.page_id, r.at, r.len, self.group_end, r.is_init);
                }
                self.groups += 1;
                self.group_mark = hash.arena.mark();
            }
            Some(page_id) => {
                let at = hash.arena.push(bytes);
                self.open.push(OpenRecord {
                    page_id,
                    at,
                    len: bytes.len() as u32,
                    is_init: init,
                });
            }
        }
        Ok(())
    }

    /// Empties `hash` after its batch was applied, keeping the records of
    /// the open group (moved to the start of the fresh arena).
    pub(crate) fn rebase(&mut self, hash: &mut RecoveryHash) {
        let mut saved = Vec::with_capacity(self.open.iter().map(|r| r.len as usize).sum());
        for r in &self.open {
            saved.extend_from_slice(hash.arena.get(r.at, r.len));
        }
        hash.clear();
        self.group_mark = hash.arena.mark();
        let mut off = 0;
        for r in &mut self.open {
            r.at = hash.arena.push(&saved[off..off + r.len as usize]);
            off += r.len as usize;
        }
    }

    /// Ends the stream: drops the open group and any cut record (the torn
    /// tail of the log) and returns how many bytes past the last complete
    /// group were discarded.
    pub(crate) fn finish(&mut self, hash: &mut RecoveryHash) -> u64 {
        let discarded = self.lsn.since(self.group_end) + self.carry.len() as u64;
        hash.arena.truncate(self.group_mark);
        self.open.clear();
        self.carry.clear();
        self.lsn = self.group_end;
        discarded
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use basalt_common::{IndexId, SpaceId};
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    use super::*;

    /// A page record of a kind picked by `kind`, with a payload of `n`
    /// bytes where the kind has one.
    fn record(kind: u32, n: usize) -> RedoRecord<'static> {
        match kind % 5 {
            0 => RedoRecord::InitIndex {
                level: 0,
                index_id: IndexId(3),
                flags: 0,
            },
            1 => RedoRecord::Insert {
                slot: 0,
                rec: Cow::Owned(vec![0xAB; n + 3]),
            },
            2 => RedoRecord::WriteBytes {
                offset: 40,
                bytes: Cow::Owned(vec![1; n]),
            },
            3 => RedoRecord::Delete { slot: 2 },
            _ => RedoRecord::OverflowWrite {
                next: 9,
                data: Cow::Owned(vec![2; n * 25]),
            },
        }
    }

    fn seed() -> u64 {
        basalt_common::test_support::test_seed("recovery parser")
    }

    /// Reference: what the hash must hold per page, oldest first.
    type Expect = std::collections::BTreeMap<PageId, Vec<(Vec<u8>, u64)>>;

    #[test]
    fn random_groups_split_into_random_chunks_match_the_reference() {
        let seed = seed();
        let mut rng = SmallRng::seed_from_u64(seed);
        for round in 0..40 {
            let start = 8192 + rng.gen_range(0..1000u64);
            let mut log = Vec::new();
            let mut expect = Expect::new();
            let mut ends = Vec::new();
            let groups = rng.gen_range(1..30);
            for _ in 0..groups {
                let mut group: Vec<(PageId, Vec<u8>, bool)> = Vec::new();
                for _ in 0..rng.gen_range(1..6) {
                    let id = PageId::new(SpaceId(rng.gen_range(0..2)), rng.gen_range(0..4));
                    let r = record(rng.gen_range(0..5), rng.gen_range(0..600));
                    let mut enc = Vec::new();
                    r.encode(id, &mut enc);
                    log.extend_from_slice(&enc);
                    group.push((id, enc, is_init(&r)));
                }
                RedoRecord::MtrEnd.encode(PageId::default(), &mut log);
                let end = start + log.len() as u64;
                ends.push(end);
                for (id, enc, init) in group {
                    let list = expect.entry(id).or_default();
                    if init {
                        list.clear();
                    }
                    list.push((enc, end));
                }
            }
            // A torn tail: part of one more group.
            let complete_len = log.len();
            let mut tail = Vec::new();
            record(1, 100).encode(PageId::new(SpaceId(0), 1), &mut tail);
            record(2, 10).encode(PageId::new(SpaceId(0), 2), &mut tail);
            let cut = rng.gen_range(0..tail.len());
            log.extend_from_slice(&tail[..cut]);

            let mut hash = RecoveryHash::with_budget(1 << 30);
            let mut p = GroupParser::new(Lsn(start), &hash);
            let mut off = 0;
            while off < log.len() {
                let n = rng
                    .gen_range(1..=log.len() - off)
                    .min(rng.gen_range(1..700));
                let used = p
                    .feed(
                        Lsn(start + off as u64),
                        &log[off..off + n],
                        &mut hash,
                        usize::MAX,
                    )
                    .unwrap_or_else(|e| panic!("seed {seed} round {round}: {e}"));
                assert_eq!(used, n, "no budget, everything is consumed");
                off += n;
            }
            let discarded = p.finish(&mut hash);
            assert_eq!(discarded, cut as u64, "seed {seed} round {round}");
            assert_eq!(
                p.end_lsn(),
                Lsn(start + complete_len as u64),
                "seed {seed} round {round}"
            );
            assert_eq!(p.groups, groups as u64);
            let mut got = Expect::new();
            let plan = hash.plan();
            for &(id, page) in plan.pages() {
                assert_eq!(page.starts_with_init, {
                    let first = &expect[&id][0].0;
                    let d = RedoRecord::decode(first).expect("decodes");
                    is_init(&d.record)
                });
                got.insert(
                    id,
                    plan.records(&page)
                        .map(|(b, l)| (b.to_vec(), l.0))
                        .collect(),
                );
            }
            assert_eq!(
                got, expect,
                "seed {seed} round {round}: hash differs from reference"
            );
        }
    }

    #[test]
    fn a_full_budget_stops_after_a_group_and_batches_add_up() {
        let seed = seed();
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut log = Vec::new();
        // Reference: each page's records in log order (no init records,
        // so nothing is superseded).
        let mut want: std::collections::BTreeMap<PageId, Vec<Vec<u8>>> = Default::default();
        for _ in 0..400 {
            for _ in 0..rng.gen_range(1..4) {
                let id = PageId::new(SpaceId(0), rng.gen_range(0..50));
                let mut enc = Vec::new();
                record(rng.gen_range(1..4), rng.gen_range(0..400)).encode(id, &mut enc);
                log.extend_from_slice(&enc);
                want.entry(id).or_default().push(enc);
            }
            RedoRecord::MtrEnd.encode(PageId::default(), &mut log);
        }
        // A budget below one arena block: every group ends a batch.
        let mut hash = RecoveryHash::with_budget(0);
        let mut p = GroupParser::new(Lsn(5000), &hash);
        let mut got: std::collections::BTreeMap<PageId, Vec<Vec<u8>>> = Default::default();
        let drain =
            |hash: &RecoveryHash, got: &mut std::collections::BTreeMap<PageId, Vec<Vec<u8>>>| {
                let plan = hash.plan();
                for &(id, page) in plan.pages() {
                    for (b, _) in plan.records(&page) {
                        got.entry(id).or_default().push(b.to_vec());
                    }
                }
            };
        let (mut off, mut batches) = (0, 0);
        while off < log.len() {
            let n = rng.gen_range(1..=log.len() - off).min(3000);
            let mut rest = &log[off..off + n];
            let mut at = off;
            while !rest.is_empty() {
                let used = p
                    .feed(Lsn(5000 + at as u64), rest, &mut hash, 0)
                    .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
                at += used;
                rest = &rest[used..];
                if p.at_group_boundary() && !hash.is_empty() {
                    drain(&hash, &mut got);
                    p.rebase(&mut hash);
                    batches += 1;
                }
            }
            off += n;
        }
        assert_eq!(p.finish(&mut hash), 0);
        drain(&hash, &mut got);
        assert!(batches >= 300, "seed {seed}: only {batches} batches");
        assert_eq!(p.groups, 400, "seed {seed}");
        assert_eq!(
            got, want,
            "seed {seed}: batched records differ from the log"
        );
    }

    #[test]
    fn rebase_keeps_the_open_group() {
        let mut log = Vec::new();
        let a = PageId::new(SpaceId(0), 1);
        record(1, 5).encode(a, &mut log);
        RedoRecord::MtrEnd.encode(a, &mut log);
        let first_end = log.len();
        record(2, 7).encode(a, &mut log);
        let mut hash = RecoveryHash::with_budget(1 << 30);
        let mut p = GroupParser::new(Lsn(100), &hash);
        p.feed(Lsn(100), &log, &mut hash, usize::MAX).unwrap();
        assert_eq!(hash.n_pages(), 1);
        p.rebase(&mut hash);
        assert!(hash.is_empty());
        let mut more = Vec::new();
        RedoRecord::MtrEnd.encode(a, &mut more);
        p.feed(Lsn(100 + log.len() as u64), &more, &mut hash, usize::MAX)
            .unwrap();
        let plan = hash.plan();
        let pages = plan.pages();
        let recs: Vec<(Vec<u8>, Lsn)> = plan
            .records(&pages[0].1)
            .map(|(b, l)| (b.to_vec(), l))
            .collect();
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].0, log[first_end..].to_vec());
        assert_eq!(recs[0].1, Lsn(100 + log.len() as u64 + 1));
    }

    #[test]
    fn garbage_inside_valid_redo_is_an_error_with_its_lsn() {
        let mut log = Vec::new();
        record(3, 0).encode(PageId::new(SpaceId(0), 1), &mut log);
        let bad_at = log.len();
        log.push(0x00);
        let mut hash = RecoveryHash::with_budget(1 << 30);
        let mut p = GroupParser::new(Lsn(1000), &hash);
        match p.feed(Lsn(1000), &log, &mut hash, usize::MAX) {
            Err(MtrError::RedoCorrupt { lsn, .. }) => assert_eq!(lsn, Lsn(1000 + bad_at as u64)),
            other => panic!("expected RedoCorrupt, got {other:?}"),
        }
        let mut p = GroupParser::new(Lsn(1000), &hash);
        assert!(matches!(
            p.feed(Lsn(999), &log, &mut hash, usize::MAX),
            Err(MtrError::RedoCorrupt { .. })
        ));
    }
}
