//! Shared building blocks of the redo log scenario tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use basalt_common::Lsn;
use basalt_io::{FaultPlan, FaultyIo, Io, MemIo};
use basalt_wal::{Log, LogConfig, LsnRange, RecoveryScan};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// A generator seeded by `BASALT_TEST_SEED` or a fresh seed, printed so a
/// failure can be replayed.
pub fn seeded_rng(test: &str) -> SmallRng {
    SmallRng::seed_from_u64(basalt_common::test_support::test_seed(test))
}

/// A configuration with small files for fast tests.
pub fn config(dir: &Path, file_mib: u64, files: u32, buffer_kib: usize) -> LogConfig {
    LogConfig {
        file_size: file_mib << 20,
        files_in_group: files,
        buffer_size: buffer_kib << 10,
        ..LogConfig::new(dir)
    }
}

pub fn dir() -> PathBuf {
    PathBuf::from("/db/redo")
}

/// A fresh in-memory backend and a fault plan wrapping it.
pub fn faulty_mem() -> (Arc<MemIo>, Arc<FaultPlan>, Arc<dyn Io>) {
    let mem = Arc::new(MemIo::new());
    let plan = FaultPlan::new();
    let io: Arc<dyn Io> = Arc::new(FaultyIo::new(mem.clone(), plan.clone()));
    (mem, plan, io)
}

/// Deterministic content for a group: every byte depends on its LSN, so a
/// byte returned at the wrong LSN is caught even when lengths match.
pub fn group_bytes(rng: &mut SmallRng, len: usize) -> Vec<u8> {
    let salt: u8 = rng.gen();
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(salt))
        .collect()
}

/// Appends and closes one group.
pub fn append_closed(log: &Log, bytes: &[u8]) -> LsnRange {
    let r = log.append(bytes).expect("append");
    log.mark_closed(r);
    r
}

/// Reads the whole scan into (first LSN, bytes).
pub fn scan_all(scan: &mut RecoveryScan) -> (Lsn, Vec<u8>) {
    let start = scan.checkpoint_lsn();
    let mut bytes = Vec::new();
    let mut expect = start;
    while let Some((lsn, chunk)) = scan.next_chunk().expect("scan") {
        assert_eq!(lsn, expect, "chunks must be contiguous");
        bytes.extend_from_slice(chunk);
        expect = Lsn(lsn.get() + chunk.len() as u64);
    }
    assert_eq!(scan.scanned_lsn(), expect);
    (start, bytes)
}

/// Builds the byte stream `[from, to)` from recorded groups, checking that
/// the groups tile the LSN space without gaps or overlaps.
pub fn stream_from(groups: &[(LsnRange, Vec<u8>)], from: Lsn, to: Lsn) -> Vec<u8> {
    let mut sorted: Vec<&(LsnRange, Vec<u8>)> = groups.iter().collect();
    sorted.sort_by_key(|(r, _)| r.start);
    let mut out = Vec::new();
    let mut next: Option<Lsn> = None;
    for (r, bytes) in sorted {
        if let Some(n) = next {
            assert_eq!(r.start, n, "groups must tile the LSN space");
        }
        assert_eq!(r.len(), bytes.len() as u64, "a range must match its bytes");
        next = Some(r.end);
        if r.end <= from || r.start >= to {
            continue;
        }
        let lo = from.get().max(r.start.get()) - r.start.get();
        let hi = to.get().min(r.end.get()) - r.start.get();
        out.extend_from_slice(&bytes[lo as usize..hi as usize]);
    }
    out
}

/// Fails on the first differing byte, naming its LSN.
pub fn assert_same_stream(got: &[u8], want: &[u8], first_lsn: Lsn) {
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!(
            "redo differs at LSN {} (byte {i}): got {:#04x}, want {:#04x}",
            first_lsn.get() + i as u64,
            got[i],
            want[i]
        );
    }
    assert_eq!(
        got.len(),
        want.len(),
        "scanned {} bytes from LSN {first_lsn}, expected {}",
        got.len(),
        want.len()
    );
}

/// Recovery of `mem` returns a prefix of the appended stream that reaches
/// at least `acked` and at most `end`.
pub fn check_durable_prefix(
    mem: &Arc<MemIo>,
    cfg: &LogConfig,
    groups: &[(LsnRange, Vec<u8>)],
    acked: Lsn,
    end: Lsn,
    what: &str,
) {
    let mut scan = Log::open_for_recovery(mem.clone(), cfg)
        .unwrap_or_else(|e| panic!("{what}: recovery does not open: {e}"));
    let (from, bytes) = scan_all(&mut scan);
    let got_end = scan.scanned_lsn();
    assert!(
        got_end >= acked,
        "{what}: lost acknowledged redo {got_end} < {acked}"
    );
    assert!(got_end <= end, "{what}: {got_end} beyond the end {end}");
    assert_same_stream(&bytes, &stream_from(groups, from, got_end), from);
}
