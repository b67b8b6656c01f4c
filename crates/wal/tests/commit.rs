//! Group commit and `innodb_flush_log_at_trx_commit` semantics, checked
//! with counters; I/O errors in the log threads reach every waiter.

mod common;

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use basalt_common::Lsn;
use basalt_io::{Io, MemIo, PosixIo};
use basalt_wal::{Log, LogConfig, LogError, LsnRange, LOG_START_LSN};
use common::*;
use rand::Rng;

const COMMITTERS: usize = 16;
const COMMITS_EACH: usize = 40;

#[test]
fn group_commit_serves_many_commits_with_one_fsync() {
    let mut rng = seeded_rng("group_commit_serves_many_commits_with_one_fsync");
    let tmp = tempfile::tempdir().expect("tempdir");
    let io: Arc<dyn Io> = Arc::new(PosixIo::new(1));
    let cfg = config(tmp.path(), 4, 2, 1024);
    assert_eq!(cfg.flush_log_at_trx_commit, 1);
    let log = Log::create(io.clone(), &cfg, LOG_START_LSN).expect("create");
    let before = log.stats();
    let (groups, acked) = race_committers(&log, &mut rng);
    assert_eq!(groups.len(), COMMITTERS * COMMITS_EACH, "no commit failed");
    assert_eq!(acked, groups.last().expect("groups").0.end);
    let after = log.stats();
    let commits = after.commits - before.commits;
    let fsyncs = after.log_fsyncs - before.log_fsyncs;
    let wakeups = after.waiter_wakeups - before.waiter_wakeups;
    println!(
        "{commits} commits, {fsyncs} fsyncs, {} writes, {wakeups} waiter wake-ups",
        after.log_writes - before.log_writes
    );
    assert_eq!(commits, (COMMITTERS * COMMITS_EACH) as u64);
    assert!(fsyncs >= 1);
    assert!(
        fsyncs * 2 <= commits,
        "group commit must batch: {fsyncs} fsyncs for {commits} commits"
    );
    let end = log.current_lsn();
    log.shutdown().expect("shutdown");
    drop(log);

    // What was acknowledged is on disk.
    let mut scan = Log::open_for_recovery(io, &cfg).expect("open");
    let (from, bytes) = scan_all(&mut scan);
    assert_same_stream(&bytes, &stream_from(&groups, from, end), from);
}

fn mem_log(mode: u8) -> (Arc<MemIo>, Arc<Log>, LogConfig) {
    let mem = Arc::new(MemIo::new());
    let cfg = LogConfig {
        flush_log_at_trx_commit: mode,
        ..config(&dir(), 4, 2, 1024)
    };
    let log = Log::create(mem.clone(), &cfg, LOG_START_LSN).expect("create");
    (mem, log, cfg)
}

/// Timer ticks that can have happened since `start` (one per second), plus
/// one for a tick in flight.
fn ticks_since(start: Instant) -> u64 {
    start.elapsed().as_secs() + 1
}

fn wait_until(what: &str, timeout: Duration, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + timeout;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn mode_2_writes_at_commit_and_fsyncs_once_a_second() {
    let mut rng = seeded_rng("mode_2_writes_at_commit_and_fsyncs_once_a_second");
    let (mem, log, cfg) = mem_log(2);
    let before = log.stats();
    let start = Instant::now();
    let mut last = LOG_START_LSN;
    let mut groups = Vec::new();
    for _ in 0..200 {
        let bytes = group_bytes(&mut rng, 300);
        let r = append_closed(&log, &bytes);
        log.commit_wait(r.end).expect("commit");
        assert!(
            log.written_lsn() >= r.end,
            "mode 2 returns only once the redo is written"
        );
        last = r.end;
        groups.push((r, bytes));
    }
    let s = log.stats();
    let fsyncs = s.log_fsyncs - before.log_fsyncs;
    assert!(
        s.log_writes - before.log_writes >= 100,
        "mode 2 writes at commit: {s:?}"
    );
    assert!(
        fsyncs <= ticks_since(start),
        "mode 2 must not fsync per commit: {fsyncs} fsyncs"
    );
    // The timer makes it durable within about a second.
    wait_until("the timer flushes", Duration::from_secs(5), || {
        log.flushed_lsn() >= last
    });
    drop(log);
    mem.crash();
    let mut scan = Log::open_for_recovery(mem, &cfg).expect("open");
    let (from, bytes) = scan_all(&mut scan);
    assert_same_stream(&bytes, &stream_from(&groups, from, last), from);
}

#[test]
fn mode_0_returns_at_once_and_the_timer_writes_and_fsyncs() {
    let mut rng = seeded_rng("mode_0_returns_at_once_and_the_timer_writes_and_fsyncs");
    let (_mem, log, _cfg) = mem_log(0);
    let before = log.stats();
    let start = Instant::now();
    let mut last = LOG_START_LSN;
    for _ in 0..200 {
        let r = append_closed(&log, &group_bytes(&mut rng, 300));
        log.commit_wait(r.end).expect("commit");
        last = r.end;
    }
    let s = log.stats();
    let ticks = ticks_since(start);
    assert!(
        s.log_writes - before.log_writes <= 2 * ticks,
        "mode 0 does not write per commit: {s:?}"
    );
    assert!(
        s.log_fsyncs - before.log_fsyncs <= 2 * ticks,
        "mode 0 does not fsync per commit: {s:?}"
    );
    wait_until(
        "the timer writes and fsyncs",
        Duration::from_secs(5),
        || log.flushed_lsn() >= last,
    );
    assert!(log.stats().log_fsyncs > before.log_fsyncs);
}

#[test]
fn the_commit_mode_is_dynamic_and_validated() {
    let (_mem, log, _cfg) = mem_log(0);
    assert_eq!(log.flush_log_at_trx_commit(), 0);
    match log.set_flush_log_at_trx_commit(3) {
        Err(LogError::InvalidConfig { option, .. }) => {
            assert_eq!(option, "innodb_flush_log_at_trx_commit")
        }
        other => panic!("expected InvalidConfig, got {other:?}"),
    }
    log.set_flush_log_at_trx_commit(1).expect("set 1");
    let r = append_closed(&log, b"durable now");
    log.commit_wait(r.end).expect("commit");
    assert!(
        log.flushed_lsn() >= r.end,
        "mode 1 after SET GLOBAL waits for the fsync"
    );
    match log.flush_up_to(Lsn(log.current_lsn().get() + 1)) {
        Err(LogError::LsnInFuture { .. }) => {}
        other => panic!("expected LsnInFuture, got {other:?}"),
    }
}

fn committers(log: &Arc<Log>, n: usize) -> Vec<std::thread::JoinHandle<Result<(), LogError>>> {
    (0..n)
        .map(|i| {
            let log = log.clone();
            std::thread::spawn(move || {
                let r = log.append(&[i as u8; 100])?;
                log.mark_closed(r);
                log.commit_wait(r.end)
            })
        })
        .collect()
}

#[test]
fn an_fsync_error_fails_every_waiter_and_every_later_call() {
    let (_mem, plan, io) = faulty_mem();
    let cfg = config(&dir(), 4, 2, 1024);
    let log = Log::create(io, &cfg, LOG_START_LSN).expect("create");
    append_closed(&log, b"fine");
    log.flush_up_to(log.current_lsn())
        .expect("first flush works");
    plan.fail_all_syncs_to("ib_logfile");
    for t in committers(&log, 8) {
        let err = t
            .join()
            .expect("committer panicked")
            .expect_err("commit after a failed fsync");
        assert!(err.is_fatal(), "{err}");
        assert!(
            matches!(err, LogError::Failed(ref inner) if matches!(**inner, LogError::Io(_))),
            "{err}"
        );
    }
    assert!(plan.faults_fired() >= 1);
    assert!(log
        .append(b"later")
        .expect_err("append after failure")
        .is_fatal());
    assert!(log.write_checkpoint(LOG_START_LSN).is_err());
    assert!(log.free_check().is_err());
    assert!(log.shutdown().is_err(), "shutdown reports the failure");
}

#[test]
fn a_write_error_fails_waiters_in_mode_2_too() {
    let (_mem, plan, io) = faulty_mem();
    let cfg = LogConfig {
        flush_log_at_trx_commit: 2,
        ..config(&dir(), 4, 2, 1024)
    };
    let log = Log::create(io, &cfg, LOG_START_LSN).expect("create");
    plan.fail_write_to("ib_logfile", 1);
    for t in committers(&log, 4) {
        let err = t
            .join()
            .expect("committer panicked")
            .expect_err("commit after a failed write");
        assert!(err.is_fatal(), "{err}");
    }
}

#[test]
fn shutdown_makes_everything_durable_and_refuses_later_work() {
    let mut rng = seeded_rng("shutdown_makes_everything_durable_and_refuses_later_work");
    let (mem, log, cfg) = mem_log(0);
    let mut groups = Vec::new();
    for _ in 0..50 {
        let bytes = group_bytes(&mut rng, 1000);
        groups.push((append_closed(&log, &bytes), bytes));
    }
    let end = log.current_lsn();
    log.shutdown().expect("shutdown");
    assert_eq!(log.flushed_lsn(), end);
    assert!(matches!(log.append(b"x"), Err(LogError::ShutDown)));
    assert!(
        matches!(log.flush_up_to(end), Ok(())),
        "already durable LSNs need no thread"
    );
    log.shutdown().expect("a second shutdown is a no-op");
    drop(log);
    mem.crash();
    let mut scan = Log::open_for_recovery(mem, &cfg).expect("open");
    let (from, bytes) = scan_all(&mut scan);
    assert_same_stream(&bytes, &stream_from(&groups, from, end), from);
}

/// Commits of `COMMITTERS` threads racing on `log` until the first error:
/// every group appended, and the end of the highest acknowledged commit.
fn race_committers(
    log: &Arc<Log>,
    rng: &mut rand::rngs::SmallRng,
) -> (Vec<(LsnRange, Vec<u8>)>, Lsn) {
    let barrier = Arc::new(Barrier::new(COMMITTERS));
    let threads: Vec<_> = (0..COMMITTERS)
        .map(|_| {
            let (log, barrier) = (log.clone(), barrier.clone());
            let mut rng: rand::rngs::SmallRng = rand::SeedableRng::seed_from_u64(rng.gen());
            std::thread::spawn(move || {
                barrier.wait();
                let (mut appended, mut acked) = (Vec::new(), LOG_START_LSN);
                for _ in 0..COMMITS_EACH {
                    let len = rng.gen_range(20..400);
                    let bytes = group_bytes(&mut rng, len);
                    let Ok(r) = log.append(&bytes) else { break };
                    log.mark_closed(r);
                    appended.push((r, bytes));
                    match log.commit_wait(r.end) {
                        Ok(()) => {
                            let flushed = log.flushed_lsn();
                            assert!(
                                flushed >= r.end,
                                "commit_wait returned at flushed {flushed} < {}",
                                r.end
                            );
                            acked = acked.max(r.end);
                        }
                        Err(e) => {
                            assert!(e.is_fatal(), "{e}");
                            break;
                        }
                    }
                }
                (appended, acked)
            })
        })
        .collect();
    let (mut groups, mut acked) = (Vec::new(), LOG_START_LSN);
    for t in threads {
        let (appended, mine) = t.join().expect("committer panicked");
        groups.extend(appended);
        acked = acked.max(mine);
    }
    groups.sort_by_key(|(r, _)| r.start);
    (groups, acked)
}

/// Committers at full speed on two flushers (rounds overlap and may end
/// out of order), power cut at a random log write: every commit whose
/// `commit_wait` returned is in the recovered redo, which is a prefix of
/// the appended stream.
#[test]
fn overlapping_flush_rounds_never_lose_an_acknowledged_commit_crash() {
    let mut rng = seeded_rng("overlapping_flush_rounds_never_lose_an_acknowledged_commit_crash");
    let cfg = LogConfig {
        flush_log_at_timeout_secs: 2700,
        flusher_threads: 2,
        ..config(&dir(), 4, 2, 1024)
    };
    // How many log writes one run makes, to place the crash points.
    let writes = {
        let (_mem, _plan, io) = faulty_mem();
        let log = Log::create(io, &cfg, LOG_START_LSN).expect("create");
        let before = log.stats().log_writes;
        race_committers(&log, &mut rng);
        log.stats().log_writes - before
    };
    assert!(
        writes >= 4,
        "only {writes} log writes for {COMMITTERS} committers"
    );
    let mut crashed_runs = 0;
    for run in 0..12 {
        let (mem, plan, io) = faulty_mem();
        let log = Log::create(io, &cfg, LOG_START_LSN).expect("create");
        let crash_at = rng.gen_range(1..writes);
        let keep = rng.gen_range(0..3) * 4096;
        plan.crash_at_write_torn(crash_at, keep);
        let (groups, acked) = race_committers(&log, &mut rng);
        let end = log.current_lsn();
        crashed_runs += usize::from(plan.is_crashed());
        drop(log);
        mem.crash();

        let what = format!("run {run}: crash at write {crash_at} of ~{writes} (keep {keep})");
        check_durable_prefix(&mem, &cfg, &groups, acked, end, &what);
    }
    assert!(crashed_runs >= 6, "only {crashed_runs} of 12 runs crashed");
}
