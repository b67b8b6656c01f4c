//! Crash scenarios on `MemIo` + `FaultyIo`: torn tails, stale blocks from
//! an earlier lap or from before a restart, checkpoint slots, and a sweep
//! of crash points (`*_crash`).

mod common;

use std::sync::Arc;

use basalt_common::Lsn;
use basalt_io::{Io, MemIo, OpenOptions, TornWriteReport};
use basalt_wal::format::{
    block_of, block_start, CheckpointSlot, BLOCKS_PER_UNIT, CHECKPOINT_SLOT_OFFSETS,
};
use basalt_wal::{Log, LogConfig, LsnRange, ScanEnd, BLOCK_SIZE, LOG_START_LSN};
use common::*;
use rand::rngs::SmallRng;
use rand::Rng;

/// Small files and no timer, so that the only log writes are the ones a
/// test asks for and fault rules hit exactly those.
fn quiet_config() -> LogConfig {
    LogConfig {
        flush_log_at_timeout_secs: 2700,
        ..config(&dir(), 4, 2, 1024)
    }
}

/// [`quiet_config`] writing through the page cache: the fault model tears
/// an O_DIRECT write only at 4 KiB units, a buffered one at any byte, and
/// these tests tear inside a unit to put a torn block at an exact place.
fn buffered_quiet_config() -> LogConfig {
    LogConfig {
        file_buffering: true,
        ..quiet_config()
    }
}

fn append_flushed(log: &Log, groups: &mut Vec<(LsnRange, Vec<u8>)>, bytes: Vec<u8>) -> LsnRange {
    let r = append_closed(log, &bytes);
    log.flush_up_to(r.end).expect("flush");
    groups.push((r, bytes));
    r
}

/// Length that makes a group starting at `from` end exactly at the start
/// of block `block_of(from)`'s unit + `units` units + `extra` blocks.
fn len_to_block(from: Lsn, units: u64, extra: u64) -> usize {
    let unit_start_block = block_of(from.get()) / BLOCKS_PER_UNIT * BLOCKS_PER_UNIT;
    (block_start(unit_start_block + units * BLOCKS_PER_UNIT + extra) - from.get()) as usize
}

#[test]
fn torn_tail_block_ends_the_scan_at_the_last_good_block_crash() {
    let mut rng = seeded_rng("torn_tail_block_ends_the_scan_at_the_last_good_block_crash");
    let (mem, plan, io) = faulty_mem();
    let cfg = buffered_quiet_config();
    let log = Log::create(io.clone(), &cfg, LOG_START_LSN).expect("create");
    let mut groups = Vec::new();
    for _ in 0..20 {
        let len = rng.gen_range(100..900);
        append_flushed(&log, &mut groups, group_bytes(&mut rng, len));
    }
    let before = log.flushed_lsn();
    let base_block = block_of(before.get()) / BLOCKS_PER_UNIT * BLOCKS_PER_UNIT;
    // The next log write lands only up to 100 bytes into its 11th block,
    // and claims success.
    plan.tear_write_to(
        "ib_logfile",
        1,
        10 * BLOCK_SIZE + 100,
        TornWriteReport::Success,
    );
    let big = group_bytes(&mut rng, 30 * 492);
    let big_range = append_flushed(&log, &mut groups, big);
    assert!(plan.faults_fired() >= 1, "the tear happened");
    drop(log);
    mem.crash();

    let mut scan = Log::open_for_recovery(mem.clone(), &cfg).expect("open");
    let (from, bytes) = scan_all(&mut scan);
    assert_eq!(scan.end(), Some(ScanEnd::Torn));
    let torn_at = Lsn(block_start(base_block + 10));
    assert_eq!(
        scan.scanned_lsn(),
        torn_at,
        "the scan ends where the torn block starts"
    );
    assert!(torn_at > big_range.start && torn_at < big_range.end);
    assert_same_stream(&bytes, &stream_from(&groups, from, torn_at), from);

    // The mtr layer resumes at the last complete group; the partial one is
    // overwritten and never comes back.
    let log = scan.into_log(big_range.start).expect("resume");
    groups.pop();
    let h = group_bytes(&mut rng, 777);
    let hr = append_closed(&log, &h);
    assert_eq!(hr.start, big_range.start);
    groups.push((hr, h));
    log.shutdown().expect("shutdown");
    drop(log);
    mem.crash();
    let mut scan = Log::open_for_recovery(mem, &cfg).expect("reopen");
    let (from, bytes) = scan_all(&mut scan);
    assert_eq!(scan.scanned_lsn(), hr.end);
    assert_same_stream(&bytes, &stream_from(&groups, from, hr.end), from);
}

#[test]
fn blocks_from_before_a_restart_are_never_returned_crash() {
    let mut rng = seeded_rng("blocks_from_before_a_restart_are_never_returned_crash");
    let (mem, plan, io) = faulty_mem();
    let cfg = buffered_quiet_config();
    let log = Log::create(io.clone(), &cfg, LOG_START_LSN).expect("create");
    let mut groups = Vec::new();
    while log.current_lsn().get() < LOG_START_LSN.get() + 60 * 492 {
        let len = rng.gen_range(50..700);
        append_flushed(&log, &mut groups, group_bytes(&mut rng, len));
    }
    let end1 = log.current_lsn();
    drop(log);
    mem.crash();

    // Recovery decides to resume well before the end (as if the tail were a
    // partial group): about 40 blocks are cut.
    let mut scan = Log::open_for_recovery(io.clone(), &cfg).expect("open");
    let (_, bytes1) = scan_all(&mut scan);
    assert_eq!(scan.scanned_lsn(), end1);
    let keep = groups
        .iter()
        .position(|(r, _)| r.end.get() > LOG_START_LSN.get() + 20 * 492)
        .expect("group");
    groups.truncate(keep);
    let resume = groups.last().expect("kept groups").0.end;
    let log = scan.into_log(resume).expect("resume");
    assert_eq!(log.epoch(), 2);

    // The new run writes less than was cut, ending exactly on a block
    // boundary in a later write unit, and its last block (the one that
    // would mark the end) is lost in the crash: the block after the new
    // redo is a valid, full block of the old run with the right number.
    let h_len = len_to_block(resume, 1, 2);
    let h_end_block = block_of(resume.get() + h_len as u64);
    assert!(
        block_start(h_end_block + 1) < end1.get(),
        "old blocks remain after the new end"
    );
    let base_block = block_of(resume.get()) / BLOCKS_PER_UNIT * BLOCKS_PER_UNIT;
    plan.tear_write_to(
        "ib_logfile",
        1,
        (h_end_block - base_block) as usize * BLOCK_SIZE,
        TornWriteReport::Success,
    );
    let h = group_bytes(&mut rng, h_len);
    let hr = append_flushed(&log, &mut groups, h);
    drop(log);
    mem.crash();

    let mut scan = Log::open_for_recovery(mem.clone(), &cfg).expect("reopen");
    let (from, bytes) = scan_all(&mut scan);
    assert_eq!(scan.end(), Some(ScanEnd::StaleEpoch));
    assert_eq!(scan.scanned_lsn(), hr.end);
    assert_same_stream(&bytes, &stream_from(&groups, from, hr.end), from);
    assert_eq!(
        bytes1.len() as u64,
        end1.get() - from.get(),
        "the first run had more redo than the second"
    );

    // Without the lost block, the new run's own short last block ends it.
    let log = scan.into_log(hr.end).expect("resume again");
    let i = group_bytes(&mut rng, 10);
    let ir = append_flushed(&log, &mut groups, i);
    drop(log);
    mem.crash();
    let mut scan = Log::open_for_recovery(mem, &cfg).expect("reopen");
    let (from, bytes) = scan_all(&mut scan);
    assert_eq!(scan.end(), Some(ScanEnd::Tail));
    assert_eq!(scan.scanned_lsn(), ir.end);
    assert_same_stream(&bytes, &stream_from(&groups, from, ir.end), from);
}

#[test]
fn blocks_from_an_earlier_lap_are_never_returned_crash() {
    let mut rng = seeded_rng("blocks_from_an_earlier_lap_are_never_returned_crash");
    let (mem, plan, io) = faulty_mem();
    let cfg = buffered_quiet_config();
    let log = Log::create(io.clone(), &cfg, LOG_START_LSN).expect("create");
    let capacity = log.capacity();
    // A lap and a half, checkpointing as we go.
    while log.current_lsn().get() < LOG_START_LSN.get() + capacity + capacity / 2 {
        let len = rng.gen_range(1000..20_000);
        let r = append_closed(&log, &group_bytes(&mut rng, len));
        if log.checkpoint_age() > capacity / 2 {
            log.flush_up_to(r.end).expect("flush");
            log.write_checkpoint(r.end).expect("checkpoint");
        }
    }
    let mut kept = Vec::new();
    let r = append_flushed(&log, &mut kept, group_bytes(&mut rng, 300));
    log.write_checkpoint(r.end).expect("checkpoint");
    let cp = r.end;
    // One group ending on a block boundary in the next unit; the write
    // loses that last (end-marking) block, so the block after the new redo
    // is one from the previous lap.
    let h_len = len_to_block(cp, 1, 3);
    let h_end_block = block_of(cp.get() + h_len as u64);
    let base_block = block_of(cp.get()) / BLOCKS_PER_UNIT * BLOCKS_PER_UNIT;
    plan.tear_write_to(
        "ib_logfile",
        1,
        (h_end_block - base_block) as usize * BLOCK_SIZE,
        TornWriteReport::Success,
    );
    let mut groups = Vec::new();
    let hr = append_flushed(&log, &mut groups, group_bytes(&mut rng, h_len));
    drop(log);
    mem.crash();

    let mut scan = Log::open_for_recovery(mem, &cfg).expect("open");
    assert_eq!(scan.checkpoint_lsn(), cp);
    let (from, bytes) = scan_all(&mut scan);
    assert_eq!(scan.end(), Some(ScanEnd::StaleLap));
    assert_eq!(scan.scanned_lsn(), hr.end);
    assert_same_stream(&bytes, &stream_from(&groups, from, hr.end), from);
}

fn read_slots(mem: &MemIo) -> [Option<CheckpointSlot>; 2] {
    let file0 = mem.file_bytes(&dir().join("ib_logfile0")).expect("file 0");
    CHECKPOINT_SLOT_OFFSETS.map(|at| CheckpointSlot::decode(&file0[at..at + BLOCK_SIZE]))
}

#[test]
fn checkpoint_slots_alternate_and_a_damaged_newest_slot_falls_back() {
    let mut rng = seeded_rng("checkpoint_slots_alternate_and_a_damaged_newest_slot_falls_back");
    let mem = Arc::new(MemIo::new());
    let cfg = quiet_config();
    let log = Log::create(mem.clone(), &cfg, LOG_START_LSN).expect("create");
    let mut groups = Vec::new();
    let mut cps = vec![LOG_START_LSN];
    for n in 2..=5u64 {
        for _ in 0..3 {
            append_flushed(&log, &mut groups, group_bytes(&mut rng, 1500));
        }
        let cp = log.flushed_lsn();
        log.write_checkpoint(cp).expect("checkpoint");
        cps.push(cp);
        let slots = read_slots(&mem);
        let newest = slots[(n % 2) as usize].expect("newest slot valid");
        let older = slots[((n + 1) % 2) as usize].expect("older slot valid");
        assert_eq!((newest.number, newest.lsn), (n, cp));
        assert_eq!((older.number, older.lsn), (n - 1, cps[cps.len() - 2]));
        assert_eq!(newest.ring_offset, log.lsn_to_ring_offset(cp));
    }
    let tail = append_flushed(&log, &mut groups, group_bytes(&mut rng, 900));
    drop(log);
    mem.crash();

    let scan = Log::open_for_recovery(mem.clone(), &cfg).expect("open");
    assert_eq!(
        (scan.checkpoint_number(), scan.checkpoint_lsn()),
        (5, cps[4])
    );
    drop(scan);

    // Damage the newest slot (5 lives in slot 1): recovery uses slot 0 and
    // scans from the older checkpoint.
    let f0 = mem
        .open(&dir().join("ib_logfile0"), OpenOptions::default())
        .expect("open");
    f0.write_at(&[0x5a; 16], (CHECKPOINT_SLOT_OFFSETS[1] + 20) as u64)
        .expect("damage");
    let mut scan = Log::open_for_recovery(mem.clone(), &cfg).expect("open with one slot");
    assert_eq!(
        (scan.checkpoint_number(), scan.checkpoint_lsn()),
        (4, cps[3])
    );
    let (from, bytes) = scan_all(&mut scan);
    assert_same_stream(&bytes, &stream_from(&groups, from, tail.end), from);
    drop(scan);

    f0.write_at(&[0x5a; 16], (CHECKPOINT_SLOT_OFFSETS[0] + 20) as u64)
        .expect("damage");
    let err = Log::open_for_recovery(mem, &cfg).expect_err("no valid checkpoint");
    assert!(err.is_corruption(), "{err}");
}

#[test]
fn a_torn_checkpoint_write_leaves_the_previous_checkpoint_crash() {
    let mut rng = seeded_rng("a_torn_checkpoint_write_leaves_the_previous_checkpoint_crash");
    let (mem, plan, io) = faulty_mem();
    let cfg = quiet_config();
    let log = Log::create(io, &cfg, LOG_START_LSN).expect("create");
    let mut groups = Vec::new();
    let a = append_flushed(&log, &mut groups, group_bytes(&mut rng, 5000));
    log.write_checkpoint(a.end).expect("checkpoint 2 (slot 0)");
    let b = append_flushed(&log, &mut groups, group_bytes(&mut rng, 5000));
    // Checkpoint 3 goes to slot 1 (bytes 1536..2048 of file 0); the write
    // lands only 100 bytes into that slot.
    plan.tear_write_to(
        "ib_logfile0",
        1,
        CHECKPOINT_SLOT_OFFSETS[1] + 100,
        TornWriteReport::Success,
    );
    log.write_checkpoint(b.end)
        .expect("torn write reported as success");
    let c = append_flushed(&log, &mut groups, group_bytes(&mut rng, 5000));
    drop(log);
    mem.crash();
    let mut scan = Log::open_for_recovery(mem, &cfg).expect("open");
    assert_eq!(
        (scan.checkpoint_number(), scan.checkpoint_lsn()),
        (2, a.end)
    );
    let (from, bytes) = scan_all(&mut scan);
    assert_same_stream(&bytes, &stream_from(&groups, from, c.end), from);
}

/// 32 groups of random sizes; every third one, and others with
/// probability `p`, is flushed (so a run makes at least 10 log writes).
fn flushing_workload(rng: &mut SmallRng, p: f64) -> Vec<(Vec<u8>, bool)> {
    (0..32)
        .map(|i| {
            let len = rng.gen_range(1..2500);
            (group_bytes(rng, len), i % 3 == 2 || rng.gen_bool(p))
        })
        .collect()
}

/// Appends the workload, flushing where it says, until the log fails (a
/// failure must be fatal). Returns the groups appended and the end of the
/// last acknowledged flush.
fn run_until_failure(log: &Log, workload: &[(Vec<u8>, bool)]) -> (Vec<(LsnRange, Vec<u8>)>, Lsn) {
    let mut groups = Vec::new();
    let mut acked = LOG_START_LSN;
    for (bytes, flush) in workload {
        let Ok(r) = log.append(bytes) else { break };
        log.mark_closed(r);
        groups.push((r, bytes.clone()));
        if *flush {
            match log.flush_up_to(r.end) {
                Ok(()) => acked = r.end,
                Err(e) => {
                    assert!(e.is_fatal(), "{e}");
                    break;
                }
            }
        }
    }
    (groups, acked)
}

/// Crash at every log write of a workload (torn at a random byte): the
/// recovered redo is always a prefix of what was appended and holds
/// everything whose `flush_up_to` succeeded.
#[test]
fn recovered_redo_is_a_durable_prefix_at_every_crash_point_crash() {
    let mut rng = seeded_rng("recovered_redo_is_a_durable_prefix_at_every_crash_point_crash");
    let cfg = quiet_config();
    // At least every third group is flushed: at least 10 log writes.
    let workload = flushing_workload(&mut rng, 0.4);
    let mut n = 1u64;
    let mut crashed_runs = 0;
    loop {
        let (mem, plan, io) = faulty_mem();
        let log = Log::create(io.clone(), &cfg, LOG_START_LSN).expect("create");
        let keep = rng.gen_range(0..12_000);
        plan.crash_at_write_torn(n, keep);
        let (groups, acked) = run_until_failure(&log, &workload);
        let end = log.current_lsn();
        let crashed = plan.is_crashed();
        drop(log);
        mem.crash();
        let what = format!("crash at write {n} (keep {keep})");
        check_durable_prefix(&mem, &cfg, &groups, acked, end, &what);
        if !crashed {
            break;
        }
        crashed_runs += 1;
        n += 1;
    }
    assert!(crashed_runs >= 10, "only {crashed_runs} crash points");
}

/// Tear one log write at a 512-byte boundary (a disk keeps whole sectors)
/// and let every earlier write reach the disk, synced or not: whatever the
/// tear hits, including the rewrite of the last partial block, redo whose
/// `flush_up_to` succeeded survives and nothing after a gap comes back.
#[test]
fn sector_torn_writes_never_lose_acknowledged_redo_crash() {
    let mut rng = seeded_rng("sector_torn_writes_never_lose_acknowledged_redo_crash");
    // Buffered, so that the fault model tears at every 512-byte boundary
    // (a device may tear an O_DIRECT write at any sector too).
    let cfg = buffered_quiet_config();
    let workload = flushing_workload(&mut rng, 0.5);
    let mut n = 1u64;
    let mut torn_runs = 0;
    loop {
        let (mem, plan, io) = faulty_mem();
        let log = Log::create(io.clone(), &cfg, LOG_START_LSN).expect("create");
        let keep = rng.gen_range(0..24) * BLOCK_SIZE;
        plan.tear_write_to("ib_logfile", n, keep, TornWriteReport::Failure);
        let (groups, acked) = run_until_failure(&log, &workload);
        let end = log.current_lsn();
        let torn = plan.faults_fired() > 0;
        drop(log);
        // No mem.crash(): the disk kept every write issued before the tear.
        let what = format!("tear at write {n} (keep {keep})");
        check_durable_prefix(&mem, &cfg, &groups, acked, end, &what);
        if !torn {
            break;
        }
        torn_runs += 1;
        n += 1;
    }
    assert!(torn_runs >= 10, "only {torn_runs} tear points");
}
