//! The ring wraps for many laps without losing un-checkpointed redo, and
//! appenders wait (instead of overwriting) when the checkpoint stands
//! still.

mod common;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use basalt_common::Lsn;
use basalt_io::MemIo;
use basalt_wal::{Log, LsnRange, LOG_START_LSN};
use common::*;
use rand::Rng;

#[test]
fn many_laps_keep_exactly_the_redo_since_the_last_checkpoint() {
    let mut rng = seeded_rng("many_laps_keep_exactly_the_redo_since_the_last_checkpoint");
    let mem = Arc::new(MemIo::new());
    let cfg = config(&dir(), 4, 2, 1024);
    let log = Log::create(mem.clone(), &cfg, LOG_START_LSN).expect("create");
    let capacity = log.capacity();
    // Groups appended but not yet behind the checkpoint, oldest first.
    let mut live: VecDeque<(LsnRange, Vec<u8>)> = VecDeque::new();
    let target = LOG_START_LSN.get() + 5 * capacity + rng.gen_range(0..capacity);
    let mut checkpoints = 0;
    while log.current_lsn().get() < target {
        let len = rng.gen_range(1..6000);
        let bytes = group_bytes(&mut rng, len);
        let r = append_closed(&log, &bytes);
        live.push_back((r, bytes));
        // Keep the checkpoint between a quarter and a half of the ring
        // behind, at a group boundary, like a page cleaner would.
        if log.checkpoint_age() > capacity / 2 {
            let mut cp = live[0].0.start;
            while log.current_lsn().get() - cp.get() > capacity / 4 {
                cp = live.pop_front().expect("live group").0.end;
            }
            log.flush_up_to(cp).expect("flush");
            log.write_checkpoint(cp).expect("checkpoint");
            checkpoints += 1;
            assert_eq!(log.checkpoint_lsn(), cp);
        }
    }
    assert!(checkpoints >= 10, "only {checkpoints} checkpoints");
    assert_eq!(
        log.stats().checkpoint_waits,
        0,
        "the test kept the checkpoint close enough"
    );
    let end = log.current_lsn();
    log.flush_up_to(end).expect("flush");
    let checkpoint = log.checkpoint_lsn();
    drop(log);
    mem.crash();

    let mut scan = Log::open_for_recovery(mem, &cfg).expect("open");
    assert_eq!(scan.checkpoint_lsn(), checkpoint);
    let (from, bytes) = scan_all(&mut scan);
    let groups: Vec<_> = live.into_iter().collect();
    assert_same_stream(&bytes, &stream_from(&groups, from, end), from);
    assert!(
        end.get() - from.get() > (capacity / 4),
        "the scan covers a good part of the ring"
    );
}

#[test]
fn appends_wait_for_the_checkpoint_instead_of_overwriting() {
    let mut rng = seeded_rng("appends_wait_for_the_checkpoint_instead_of_overwriting");
    let mem = Arc::new(MemIo::new());
    let cfg = config(&dir(), 4, 2, 1024);
    let log = Log::create(mem.clone(), &cfg, LOG_START_LSN).expect("create");
    let wakes = Arc::new(AtomicU64::new(0));
    {
        let wakes = wakes.clone();
        log.register_flush_waker(Box::new(move || {
            wakes.fetch_add(1, Ordering::SeqCst);
        }));
    }
    let max_age = log.max_checkpoint_age();
    let group = 40_000usize;
    let appender = {
        let log = log.clone();
        let mut rng: rand::rngs::SmallRng = rand::SeedableRng::seed_from_u64(rng.gen());
        std::thread::spawn(move || {
            let mut mine = Vec::new();
            // Enough to pass the hard limit twice over.
            while log.current_lsn().get() < LOG_START_LSN.get() + 2 * max_age {
                let bytes = group_bytes(&mut rng, group);
                mine.push((append_closed(&log, &bytes), bytes));
            }
            mine
        })
    };
    // Wait until the appender is stuck at the hard limit.
    let deadline = Instant::now() + Duration::from_secs(20);
    while log.stats().checkpoint_waits == 0 {
        assert!(Instant::now() < deadline, "the appender never waited");
        std::thread::sleep(Duration::from_millis(5));
    }
    let closed = log.closed_lsn();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        log.closed_lsn(),
        closed,
        "no group completes while the checkpoint stands still"
    );
    assert!(
        wakes.load(Ordering::SeqCst) >= 1,
        "the flush waker was called"
    );
    assert!(
        log.current_lsn().get() - LOG_START_LSN.get() > max_age,
        "the blocked reservation passes the limit"
    );
    assert!(closed.get() - LOG_START_LSN.get() <= max_age);

    // Nothing un-checkpointed was overwritten: a crash now recovers every
    // byte from the (unchanged) checkpoint to the durable end.
    log.flush_up_to(closed).expect("flush");
    let snapshot = Arc::new(mem.durable_snapshot());
    let mut scan = Log::open_for_recovery(snapshot, &cfg).expect("open snapshot");
    assert_eq!(scan.checkpoint_lsn(), LOG_START_LSN);
    let (from, bytes) = scan_all(&mut scan);
    assert!(
        scan.scanned_lsn() >= closed,
        "scanned {} < flushed {closed}",
        scan.scanned_lsn()
    );

    // Move the checkpoint: the appender finishes.
    log.write_checkpoint(closed).expect("checkpoint");
    let mut cp = closed;
    let groups = loop {
        if appender.is_finished() {
            break appender.join().expect("appender panicked");
        }
        let c = log.closed_lsn();
        if c > cp {
            log.flush_up_to(c).expect("flush");
            log.write_checkpoint(c).expect("checkpoint");
            cp = c;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let want = stream_from(&groups, from, Lsn(from.get() + bytes.len() as u64));
    assert_same_stream(&bytes, &want, from);
    assert!(log.stats().checkpoint_waits >= 1);
    log.shutdown().expect("shutdown");
}

#[test]
fn free_check_blocks_above_the_sync_mark_until_a_checkpoint() {
    let mut rng = seeded_rng("free_check_blocks_above_the_sync_mark_until_a_checkpoint");
    let mem = Arc::new(MemIo::new());
    let cfg = config(&dir(), 4, 2, 1024);
    let log = Log::create(mem, &cfg, LOG_START_LSN).expect("create");
    let wakes = Arc::new(AtomicU64::new(0));
    {
        let wakes = wakes.clone();
        log.register_flush_waker(Box::new(move || {
            wakes.fetch_add(1, Ordering::SeqCst);
        }));
    }
    log.free_check().expect("below the mark");
    let mut last = LOG_START_LSN;
    while log.checkpoint_age() <= log.sync_water_mark() {
        let bytes = group_bytes(&mut rng, 30_000);
        last = append_closed(&log, &bytes).end;
    }
    assert!(log.checkpoint_age() < log.max_checkpoint_age());
    let checker = {
        let log = log.clone();
        std::thread::spawn(move || log.free_check())
    };
    std::thread::sleep(Duration::from_millis(250));
    assert!(
        !checker.is_finished(),
        "free_check must block above the sync water mark"
    );
    assert!(
        wakes.load(Ordering::SeqCst) >= 1,
        "free_check wakes the page cleaner"
    );
    log.flush_up_to(last).expect("flush");
    log.write_checkpoint(last).expect("checkpoint");
    checker
        .join()
        .expect("checker panicked")
        .expect("free_check after the checkpoint");
    assert!(log.stats().checkpoint_waits >= 1);
    assert!(log
        .wait_for_checkpoint_progress(Lsn(0), Duration::from_millis(1))
        .expect("wait"));
    assert!(!log
        .wait_for_checkpoint_progress(last, Duration::from_millis(20))
        .expect("wait"));
}

#[test]
fn checkpoints_are_refused_beyond_the_durable_or_closed_lsn() {
    let mem = Arc::new(MemIo::new());
    let cfg = config(&dir(), 4, 2, 1024);
    let log = Log::create(mem, &cfg, LOG_START_LSN).expect("create");
    let a = append_closed(&log, &[1u8; 1000]);
    match log.write_checkpoint(a.end) {
        Err(basalt_wal::LogError::CheckpointNotAllowed { lsn, .. }) => assert_eq!(lsn, a.end),
        other => panic!("expected CheckpointNotAllowed (not durable), got {other:?}"),
    }
    let open = log.append(&[2u8; 10]).expect("append");
    log.flush_up_to(open.end).expect("flush");
    match log.write_checkpoint(open.end) {
        Err(basalt_wal::LogError::CheckpointNotAllowed { .. }) => {}
        other => panic!("expected CheckpointNotAllowed (not closed), got {other:?}"),
    }
    log.mark_closed(open);
    log.write_checkpoint(open.end).expect("checkpoint");
    log.write_checkpoint(a.end)
        .expect("an older checkpoint is a no-op");
    assert_eq!(log.checkpoint_lsn(), open.end);
    assert_eq!(log.stats().checkpoints, 1);
}
