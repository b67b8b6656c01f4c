//! `FaultyIo`: failed, torn and crashed writes, failed syncs and reads, on
//! single calls and in batches, over in-memory and real backends.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use basalt_io::{
    AlignedBuf, FaultPlan, FaultyFile, FaultyIo, FileRef, Io, IoError, IoOp, IoRequest, MemIo,
    OpenOptions, PosixIo, TornWriteReport, DIRECT_IO_ALIGN,
};

use crate::common::{pattern, temp_dir, uring};

const A: usize = DIRECT_IO_ALIGN;
const PAGE: usize = 4 * A;
const CREATE: OpenOptions = OpenOptions {
    create: true,
    direct: false,
};

fn setup() -> (Arc<MemIo>, Arc<FaultPlan>, FaultyIo) {
    let mem = Arc::new(MemIo::new());
    let plan = FaultPlan::new();
    let io = FaultyIo::new(mem.clone(), plan.clone());
    (mem, plan, io)
}

fn injected(r: Result<(), IoError>) -> bool {
    matches!(r, Err(e) if e.is_injected())
}

#[test]
fn fail_nth_write_fails_exactly_that_write() {
    let (mem, plan, io) = setup();
    let f = io.open(Path::new("a"), CREATE).unwrap();
    plan.fail_write(3);
    for k in 0..5u8 {
        let r = f.write_at(&[k + 1; 4], u64::from(k) * 4);
        assert_eq!(injected(r), k == 2, "write {}", k + 1);
    }
    let bytes = mem.file_bytes(Path::new("a")).unwrap();
    assert_eq!(
        &bytes[8..12],
        &[0; 4],
        "the failed write never reached the inner backend"
    );
    assert_eq!(&bytes[12..16], &[4; 4]);
    assert_eq!(mem.writes(), 4);
    assert_eq!((plan.writes_seen(), plan.faults_fired()), (5, 1));
}

#[test]
fn path_filters_count_only_matching_writes() {
    let (mem, plan, io) = setup();
    let data = io.open(Path::new("/db/t.ibd"), CREATE).unwrap();
    let redo = io.open(Path::new("/db/ib_redo0"), CREATE).unwrap();
    plan.fail_write_to("redo", 2);
    let mut results = Vec::new();
    for k in 0..3u64 {
        results.push(("data", data.write_at(b"d", k).is_ok()));
        results.push(("redo", redo.write_at(b"r", k).is_ok()));
    }
    assert_eq!(
        results,
        vec![
            ("data", true),
            ("redo", true),
            ("data", true),
            ("redo", false),
            ("data", true),
            ("redo", true)
        ]
    );
    assert_eq!(mem.file_bytes(Path::new("/db/ib_redo0")).unwrap(), b"r\0r");
}

#[test]
fn torn_write_keeps_only_the_prefix_and_reports_as_told() {
    for report in [TornWriteReport::Success, TornWriteReport::Failure] {
        let (mem, plan, io) = setup();
        let f = io.open(Path::new("p"), CREATE).unwrap();
        f.write_at(&[0xAA; PAGE], 0).unwrap();
        plan.tear_write(1, A, report);
        let r = f.write_at(&[0xBB; PAGE], 0);
        match report {
            TornWriteReport::Success => r.unwrap(),
            TornWriteReport::Failure => assert!(injected(r)),
        }
        let bytes = mem.file_bytes(Path::new("p")).unwrap();
        assert!(
            bytes[..A].iter().all(|&b| b == 0xBB),
            "{report:?}: prefix written"
        );
        assert!(
            bytes[A..].iter().all(|&b| b == 0xAA),
            "{report:?}: rest untouched"
        );
        assert_eq!(plan.faults_fired(), 1);
        // One-shot: the next write is whole.
        f.write_at(&[0xCC; PAGE], 0).unwrap();
        assert!(mem
            .file_bytes(Path::new("p"))
            .unwrap()
            .iter()
            .all(|&b| b == 0xCC));
    }
}

#[test]
fn tears_on_direct_files_fall_on_sector_boundaries() {
    let (mem, plan, io) = setup();
    let f = io
        .open(
            Path::new("d"),
            OpenOptions {
                create: true,
                direct: true,
            },
        )
        .unwrap();
    assert!(f.is_direct());
    plan.tear_write(1, A + 1000, TornWriteReport::Success);
    f.write_at(&AlignedBuf::copy_from(&[9u8; PAGE]), 0).unwrap();
    assert_eq!(mem.file_bytes(Path::new("d")).unwrap(), vec![9u8; A]);
}

#[test]
fn sync_faults_nth_and_all() {
    let (mem, plan, io) = setup();
    let f = io.open(Path::new("s"), CREATE).unwrap();
    io.create_dir_all(Path::new("dir")).unwrap();
    plan.fail_sync(2);
    assert!(f.sync().is_ok());
    f.write_at(b"x", 0).unwrap();
    assert!(injected(f.sync()), "second sync fails");
    assert_eq!(
        mem.durable_bytes(Path::new("s")).unwrap(),
        b"",
        "failed sync made nothing durable"
    );
    assert!(f.sync().is_ok());
    assert_eq!(mem.durable_bytes(Path::new("s")).unwrap(), b"x");
    plan.fail_all_syncs_to("dir");
    assert!(f.sync().is_ok(), "filter excludes the file");
    assert!(injected(io.sync_dir(Path::new("dir"))));
    assert!(
        injected(io.sync_dir(Path::new("dir"))),
        "standing rule keeps firing"
    );
    plan.fail_all_syncs();
    assert!(injected(f.sync()));
    plan.clear();
    assert!(
        f.sync().is_ok() && io.sync_dir(Path::new("dir")).is_ok(),
        "clear removes standing rules"
    );
    assert_eq!(plan.syncs_seen(), 9);
}

#[test]
fn read_faults() {
    let (_mem, plan, io) = setup();
    let f = io.open(Path::new("r"), CREATE).unwrap();
    f.write_at(b"abcd", 0).unwrap();
    plan.fail_read_to("r", 2);
    let mut b = [0u8; 4];
    assert!(f.read_at(&mut b, 0).is_ok());
    let e = f.read_at(&mut b, 0).unwrap_err();
    assert!(e.is_injected(), "{e}");
    assert!(f.read_at(&mut b, 0).is_ok());
    assert_eq!(plan.reads_seen(), 3);
}

#[test]
fn crash_at_write_stops_everything_after_the_crash_point() {
    let (mem, plan, io) = setup();
    let f = io.open(Path::new("c"), CREATE).unwrap();
    plan.crash_at_write(3);
    f.write_at(b"1", 0).unwrap();
    f.sync().unwrap();
    f.write_at(b"2", 1).unwrap();
    assert!(!plan.is_crashed());
    assert!(injected(f.write_at(b"3", 2)), "the crash write fails");
    assert!(plan.is_crashed());
    assert!(injected(f.write_at(b"4", 3)));
    assert!(injected(f.sync()));
    assert!(injected(f.set_len(0)));
    assert!(injected(io.sync_dir(Path::new("."))));
    assert!(io.open(Path::new("new"), CREATE).unwrap_err().is_injected());
    assert!(io.remove_file(Path::new("c")).unwrap_err().is_injected());
    assert!(!mem.exists(Path::new("new")));
    assert_eq!(
        mem.writes(),
        2,
        "nothing after the crash point reached the inner backend"
    );
    assert_eq!(mem.syncs(), 1);
    // Reads still work and see the volatile state ...
    let mut b = [0u8; 2];
    f.read_at(&mut b, 0).unwrap();
    assert_eq!(&b, b"12");
    // ... until the power loss is applied to the inner backend.
    mem.crash();
    assert_eq!(mem.file_bytes(Path::new("c")).unwrap(), b"1");
    plan.clear();
    f.write_at(b"x", 1).unwrap();
    assert_eq!(mem.file_bytes(Path::new("c")).unwrap(), b"1x");
}

#[test]
fn crash_at_write_torn_leaves_a_torn_page() {
    let (mem, plan, io) = setup();
    let f = io.open(Path::new("t"), CREATE).unwrap();
    f.write_at(&[1u8; PAGE], 0).unwrap();
    f.sync().unwrap();
    plan.crash_at_write_torn(1, 2 * A);
    assert!(injected(f.write_at(&[2u8; PAGE], 0)));
    assert!(plan.is_crashed());
    let v = mem.file_bytes(Path::new("t")).unwrap();
    assert!(v[..2 * A].iter().all(|&b| b == 2) && v[2 * A..].iter().all(|&b| b == 1));
}

fn check_batch_faults(inner: Arc<dyn Io>, dir: PathBuf, direct: bool, label: &str) {
    let plan = FaultPlan::new();
    let io = FaultyIo::new(inner.clone(), plan.clone());
    let path = dir.join("batch.ibd");
    let f = io
        .open(
            &path,
            OpenOptions {
                create: true,
                direct,
            },
        )
        .unwrap();
    let raw = inner
        .open(
            &path,
            OpenOptions {
                create: false,
                direct: false,
            },
        )
        .unwrap();
    f.write_at(&AlignedBuf::copy_from(&vec![0xEE; 12 * PAGE]), 0)
        .unwrap();
    // Writes are numbered in submission order: 4th fails, 7th torn (4 KiB
    // kept, success reported); a read in between fails on the 2nd read.
    plan.fail_write(4);
    plan.tear_write(7, A, TornWriteReport::Success);
    plan.fail_read(2);
    let mut reqs: Vec<IoRequest> = Vec::new();
    for k in 0..10u64 {
        reqs.push(IoRequest {
            file: f.clone(),
            offset: k * PAGE as u64,
            buf: pattern(k as u8, 0, PAGE),
            op: IoOp::Write,
        });
        if k % 4 == 1 {
            reqs.push(IoRequest {
                file: f.clone(),
                offset: 11 * PAGE as u64,
                buf: AlignedBuf::zeroed(PAGE),
                op: IoOp::Read,
            });
        }
    }
    let kinds: Vec<(IoOp, u64)> = reqs.iter().map(|r| (r.op, r.offset)).collect();
    let mut results: Vec<Option<Result<(), IoError>>> = (0..reqs.len()).map(|_| None).collect();
    io.run_batch(&mut reqs, &mut |i, req, r| {
        assert!(results[i].is_none(), "{label}: {i} completed twice");
        assert_eq!(
            (req.op, req.offset),
            kinds[i],
            "{label}: request {i} handed back as submitted"
        );
        assert!(
            req.file
                .as_any()
                .and_then(|a| a.downcast_ref::<FaultyFile>())
                .is_some(),
            "{label}: wrapper restored"
        );
        results[i] = Some(r);
    });
    // Order and files are restored for the caller.
    for (i, r) in reqs.iter().enumerate() {
        assert_eq!(
            (r.op, r.offset),
            kinds[i],
            "{label}: slot {i} order restored"
        );
        assert!(
            r.file
                .as_any()
                .and_then(|a| a.downcast_ref::<FaultyFile>())
                .is_some(),
            "{label}: slot {i}"
        );
    }
    let mut write_no = 0;
    let mut read_no = 0;
    for (i, r) in results.into_iter().enumerate() {
        let r = r.unwrap_or_else(|| panic!("{label}: request {i} never completed"));
        let (op, off) = kinds[i];
        let mut disk = AlignedBuf::zeroed(PAGE);
        match op {
            IoOp::Write => {
                write_no += 1;
                raw.read_at(&mut disk, off).unwrap();
                let want = pattern((off / PAGE as u64) as u8, 0, PAGE);
                match write_no {
                    4 => {
                        assert!(
                            matches!(r, Err(ref e) if e.is_injected()),
                            "{label}: write 4: {r:?}"
                        );
                        assert!(
                            disk.iter().all(|&b| b == 0xEE),
                            "{label}: failed write absent"
                        );
                    }
                    7 => {
                        r.unwrap();
                        assert_eq!(&disk[..A], &want[..A], "{label}: torn prefix");
                        assert!(disk[A..].iter().all(|&b| b == 0xEE), "{label}: torn tail");
                    }
                    _ => {
                        r.unwrap();
                        assert_eq!(&disk[..], &want[..], "{label}: write {write_no}");
                    }
                }
            }
            IoOp::Read => {
                read_no += 1;
                assert_eq!(r.is_err(), read_no == 2, "{label}: read {read_no}: {r:?}");
            }
        }
    }
    assert_eq!(
        (plan.writes_seen(), plan.reads_seen(), plan.faults_fired()),
        (11, 3, 3),
        "{label}"
    );

    // Crash inside a batch: writes before the point land, the rest fail.
    plan.crash_at_write(3);
    let mut reqs: Vec<IoRequest> = (0..6u64)
        .map(|k| IoRequest {
            file: f.clone(),
            offset: k * PAGE as u64,
            buf: AlignedBuf::copy_from(&[0x77; PAGE]),
            op: IoOp::Write,
        })
        .collect();
    let mut ok = vec![false; 6];
    io.run_batch(&mut reqs, &mut |i, _, r| ok[i] = r.is_ok());
    assert_eq!(ok, vec![true, true, false, false, false, false], "{label}");
    for k in 0..6u64 {
        let mut disk = AlignedBuf::zeroed(PAGE);
        raw.read_at(&mut disk, k * PAGE as u64).unwrap();
        assert_eq!(
            disk.iter().all(|&b| b == 0x77),
            k < 2,
            "{label}: page {k} after crash batch"
        );
    }
}

#[test]
fn batch_faults_over_every_inner_backend() {
    check_batch_faults(Arc::new(MemIo::new()), PathBuf::from("/mem"), false, "mem");
    let tmp = temp_dir();
    check_batch_faults(
        Arc::new(PosixIo::new(3)),
        tmp.path().to_path_buf(),
        false,
        "posix",
    );
    if let Some(u) = uring(4) {
        let tmp = temp_dir();
        check_batch_faults(Arc::new(u), tmp.path().to_path_buf(), true, "uring-direct");
    }
}

/// A tiny write-ahead workload: append records to a log, sync every third,
/// and write a page to a data file after each sync. Returns the number of
/// writes it issued, and leaves in `synced` the log contents as of the last
/// sync that succeeded. Stops at the first error (as an engine would).
fn workload(io: &FaultyIo, synced: &mut Vec<u8>) -> u64 {
    let log: FileRef = io.open(Path::new("/db/ib_log"), CREATE).unwrap();
    let data: FileRef = io.open(Path::new("/db/t.ibd"), CREATE).unwrap();
    let mut written = Vec::new();
    let mut writes = 0;
    for k in 0..12u8 {
        let rec = [k + 1; 100];
        writes += 1;
        if log.write_at(&rec, u64::from(k) * 100).is_err() {
            return writes;
        }
        written.extend_from_slice(&rec);
        if k % 3 == 2 {
            if log.sync().is_err() {
                return writes;
            }
            *synced = written.clone();
            writes += 1;
            if data.write_at(&[k; 512], 0).is_err() {
                return writes;
            }
        }
    }
    writes
}

#[test]
fn crash_point_sweep_keeps_exactly_the_synced_prefix_crash() {
    let (_, _, clean_io) = setup();
    let total = workload(&clean_io, &mut Vec::new());
    assert_eq!(total, 16);
    for n in 1..=total + 1 {
        let (mem, plan, io) = setup();
        plan.crash_at_write(n);
        let mut synced = Vec::new();
        workload(&io, &mut synced);
        assert_eq!(plan.is_crashed(), n <= total, "crash point {n}");
        mem.crash();
        let log = mem.file_bytes(Path::new("/db/ib_log")).unwrap();
        assert_eq!(
            log, synced,
            "crash at write {n}: log must hold exactly the synced records"
        );
        assert!(
            mem.file_bytes(Path::new("/db/t.ibd")).unwrap().is_empty(),
            "data file never synced"
        );
    }
}
