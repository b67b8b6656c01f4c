//! `run_batch` on every backend: hundreds of mixed requests over several
//! files, checked against an in-memory model; exactly-once completion;
//! per-request errors; concurrent batches; a panicking callback.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use basalt_io::{AlignedBuf, FileRef, Io, IoError, IoOp, IoRequest, OpenOptions, DIRECT_IO_ALIGN};
use rand::Rng;

use crate::common::{backends, file_in, pattern, seeded_rng, temp_dir, uring, Backend};

const A: usize = DIRECT_IO_ALIGN;
const FILES: usize = 4;
const PAGES: usize = 256;

/// What a request of the generated batch should produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// Read or write succeeds.
    Ok,
    /// Read crosses the end of the file.
    Eof,
}

struct Fixture {
    files: Vec<FileRef>,
    paths: Vec<PathBuf>,
    /// Reference contents of each file.
    model: Vec<Vec<u8>>,
}

fn fixture(b: &Backend) -> Fixture {
    let mut files = Vec::new();
    let mut paths = Vec::new();
    let mut model = Vec::new();
    for k in 0..FILES {
        let path = file_in(&b.dir, &format!("batch{k}.ibd"));
        let f =
            b.io.open(
                &path,
                OpenOptions {
                    create: true,
                    direct: b.direct,
                },
            )
            .unwrap();
        let init = pattern(k as u8, 0, PAGES * A);
        f.write_at(&init, 0).unwrap();
        model.push(init.to_vec());
        files.push(f);
        paths.push(path);
    }
    Fixture {
        files,
        paths,
        model,
    }
}

/// One round: a batch of `n` requests on disjoint page ranges (so their
/// relative order cannot matter), a few of them reads that cross the end of
/// a file. Verifies every completion against the model, then applies the
/// writes to the model.
fn round(b: &Backend, fx: &mut Fixture, rng: &mut impl Rng, n: usize, round_no: usize) {
    let name = b.name;
    let mut used = vec![vec![false; PAGES]; FILES];
    let mut reqs = Vec::with_capacity(n);
    let mut expect = Vec::with_capacity(n);
    let mut tries = 0;
    while reqs.len() < n && tries < n * 20 {
        tries += 1;
        let file = rng.gen_range(0..FILES);
        let pages = rng.gen_range(1..=3usize);
        // 1 in 16 requests is a read that starts on the last page and runs
        // past the end (exercises short transfers and EOF reporting).
        let eof_read = rng.gen_range(0..16) == 0;
        let first = if eof_read {
            PAGES - 1
        } else {
            rng.gen_range(0..=PAGES - pages)
        };
        let span = if eof_read { 1 } else { pages };
        if used[file][first..first + span].iter().any(|&u| u) {
            continue;
        }
        used[file][first..first + span]
            .iter_mut()
            .for_each(|u| *u = true);
        let offset = (first * A) as u64;
        let (op, buf, ex) = if eof_read {
            (
                IoOp::Read,
                AlignedBuf::zeroed(pages.max(2) * A),
                Expect::Eof,
            )
        } else if rng.gen::<bool>() {
            let tag = (round_no * 131 + reqs.len()) as u8;
            (IoOp::Write, pattern(tag, offset, pages * A), Expect::Ok)
        } else {
            (IoOp::Read, AlignedBuf::zeroed(pages * A), Expect::Ok)
        };
        reqs.push(IoRequest {
            file: fx.files[file].clone(),
            offset,
            buf,
            op,
        });
        expect.push((file, ex));
    }
    assert!(
        reqs.len() >= n * 9 / 10,
        "{name}: could only place {} of {n} requests",
        reqs.len()
    );

    let originals: Vec<(u64, usize, IoOp)> =
        reqs.iter().map(|r| (r.offset, r.buf.len(), r.op)).collect();
    let mut seen = vec![0u32; reqs.len()];
    let mut order = Vec::with_capacity(reqs.len());
    let model = &fx.model;
    let paths = &fx.paths;
    b.io.run_batch(&mut reqs, &mut |i, req, result| {
        assert!(i < seen.len(), "{name}: completion index {i} out of range");
        seen[i] += 1;
        order.push(i);
        let (file, ex) = expect[i];
        let (offset, len, op) = originals[i];
        assert_eq!((req.offset, req.buf.len(), req.op), (offset, len, op), "{name}: request {i} handed back intact");
        assert_eq!(req.file.path(), paths[file].as_path(), "{name}: request {i} file");
        match (ex, result) {
            (Expect::Ok, Ok(())) => {
                if op == IoOp::Read {
                    let at = offset as usize;
                    assert!(
                        req.buf[..] == model[file][at..at + len],
                        "{name}: read {i} (file {file} offset {offset} len {len}) differs from model"
                    );
                }
            }
            (Expect::Eof, Err(IoError::UnexpectedEof { offset: o, len: l, .. })) => {
                assert_eq!((o, l), (offset, len), "{name}: EOF error names the request");
            }
            (ex, r) => panic!("{name}: request {i} ({op:?} file {file} offset {offset} len {len}) expected {ex:?}, got {r:?}"),
        }
    });
    for (i, &count) in seen.iter().enumerate() {
        assert_eq!(count, 1, "{name}: request {i} completed {count} times");
    }
    assert_eq!(order.len(), reqs.len(), "{name}");
    for (i, r) in reqs.iter().enumerate() {
        if r.op == IoOp::Write {
            let (file, _) = expect[i];
            let at = r.offset as usize;
            fx.model[file][at..at + r.buf.len()].copy_from_slice(&r.buf);
        }
    }
}

fn verify_files(b: &Backend, fx: &Fixture) {
    for (k, f) in fx.files.iter().enumerate() {
        assert_eq!(
            f.len().unwrap(),
            (PAGES * A) as u64,
            "{}: file {k} length",
            b.name
        );
        let mut got = AlignedBuf::zeroed(PAGES * A);
        f.read_at(&mut got, 0).unwrap();
        if got[..] != fx.model[k][..] {
            let first = got
                .iter()
                .zip(&fx.model[k])
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            panic!(
                "{}: file {k} differs from model first at byte {first}",
                b.name
            );
        }
    }
}

#[test]
fn mixed_batches_match_the_model_and_complete_each_request_once() {
    let mut rng = seeded_rng("mixed_batches");
    for b in backends() {
        let mut fx = fixture(&b);
        for round_no in 0..4 {
            let n = [300, 1, 120, 250][round_no];
            round(&b, &mut fx, &mut rng, n, round_no);
        }
        verify_files(&b, &fx);
    }
}

#[test]
fn failed_requests_do_not_stop_the_others() {
    for b in backends() {
        let path = file_in(&b.dir, "errs.ibd");
        let f =
            b.io.open(
                &path,
                OpenOptions {
                    create: true,
                    direct: b.direct,
                },
            )
            .unwrap();
        f.write_at(&pattern(9, 0, 4 * A), 0).unwrap();
        let mut reqs: Vec<IoRequest> = (0..40u64)
            .map(|k| {
                // Every 5th request reads past the end; the rest read page k % 4.
                let offset = if k % 5 == 0 {
                    100 * A as u64
                } else {
                    (k % 4) * A as u64
                };
                IoRequest {
                    file: f.clone(),
                    offset,
                    buf: AlignedBuf::zeroed(A),
                    op: IoOp::Read,
                }
            })
            .collect();
        let mut results = HashMap::new();
        b.io.run_batch(&mut reqs, &mut |i, req, r| {
            if r.is_ok() {
                assert_eq!(
                    &req.buf[..],
                    &pattern(9, req.offset, A)[..],
                    "{}: request {i}",
                    b.name
                );
            }
            assert!(
                results.insert(i, r.is_ok()).is_none(),
                "{}: {i} completed twice",
                b.name
            );
        });
        assert_eq!(results.len(), 40, "{}", b.name);
        for (i, ok) in results {
            assert_eq!(ok, i % 5 != 0, "{}: request {i}", b.name);
        }
    }
}

#[test]
fn requests_straddling_eof_report_unexpected_eof_after_the_partial_transfer() {
    // The kernel returns the bytes up to EOF first; the backend must ask for
    // the remainder, get 0 and report EOF rather than success.
    for b in backends() {
        let f =
            b.io.open(
                &file_in(&b.dir, "short.ibd"),
                OpenOptions {
                    create: true,
                    direct: b.direct,
                },
            )
            .unwrap();
        f.write_at(&pattern(5, 0, 3 * A), 0).unwrap();
        let mut reqs = vec![
            IoRequest {
                file: f.clone(),
                offset: A as u64,
                buf: AlignedBuf::zeroed(4 * A),
                op: IoOp::Read,
            },
            IoRequest {
                file: f.clone(),
                offset: 0,
                buf: AlignedBuf::zeroed(3 * A),
                op: IoOp::Read,
            },
        ];
        let mut got = [None, None];
        b.io.run_batch(&mut reqs, &mut |i, _, r| got[i] = Some(r));
        assert!(
            matches!(got[0], Some(Err(IoError::UnexpectedEof { .. }))),
            "{}: {:?}",
            b.name,
            got[0]
        );
        assert!(matches!(got[1], Some(Ok(()))), "{}: {:?}", b.name, got[1]);
        assert_eq!(&reqs[1].buf[..], &pattern(5, 0, 3 * A)[..], "{}", b.name);
    }
}

#[test]
fn large_requests_are_transferred_whole() {
    for b in backends() {
        let f =
            b.io.open(
                &file_in(&b.dir, "big.ibd"),
                OpenOptions {
                    create: true,
                    direct: b.direct,
                },
            )
            .unwrap();
        let len = 4 << 20;
        let mut reqs = vec![IoRequest {
            file: f.clone(),
            offset: A as u64,
            buf: pattern(7, A as u64, len),
            op: IoOp::Write,
        }];
        let mut ok = 0;
        b.io.run_batch(&mut reqs, &mut |_, _, r| {
            r.unwrap();
            ok += 1;
        });
        assert_eq!(ok, 1, "{}", b.name);
        let mut reqs = vec![IoRequest {
            file: f.clone(),
            offset: A as u64,
            buf: AlignedBuf::zeroed(len),
            op: IoOp::Read,
        }];
        b.io.run_batch(&mut reqs, &mut |_, _, r| r.unwrap());
        assert!(
            reqs[0].buf[..] == pattern(7, A as u64, len)[..],
            "{}: 4 MiB read back",
            b.name
        );
    }
}

fn concurrent_batches(io: Arc<dyn Io>, dir: PathBuf, direct: bool, label: &str) {
    std::thread::scope(|s| {
        for t in 0..4u8 {
            let io = io.clone();
            let dir = dir.clone();
            s.spawn(move || {
                let f = io
                    .open(
                        &dir.join(format!("conc{t}")),
                        OpenOptions {
                            create: true,
                            direct,
                        },
                    )
                    .unwrap();
                for round in 0..5u64 {
                    let mut reqs: Vec<IoRequest> = (0..50u64)
                        .map(|k| {
                            let off = k * A as u64;
                            IoRequest {
                                file: f.clone(),
                                offset: off,
                                buf: pattern(t ^ round as u8, off, A),
                                op: IoOp::Write,
                            }
                        })
                        .collect();
                    let mut n = 0;
                    io.run_batch(&mut reqs, &mut |_, _, r| {
                        r.unwrap();
                        n += 1;
                    });
                    assert_eq!(n, 50, "{label}: thread {t}");
                    let mut reads: Vec<IoRequest> = (0..50u64)
                        .map(|k| IoRequest {
                            file: f.clone(),
                            offset: k * A as u64,
                            buf: AlignedBuf::zeroed(A),
                            op: IoOp::Read,
                        })
                        .collect();
                    io.run_batch(&mut reads, &mut |_, req, r| {
                        r.unwrap();
                        assert_eq!(
                            &req.buf[..],
                            &pattern(t ^ round as u8, req.offset, A)[..],
                            "{label}: thread {t}"
                        );
                    });
                }
            });
        }
    });
}

#[test]
fn concurrent_batches_from_several_threads() {
    for b in backends() {
        concurrent_batches(b.io.clone(), b.dir.clone(), b.direct, b.name);
    }
}

#[test]
fn uring_batch_survives_a_panicking_callback_and_the_ring_is_reusable() {
    let Some(u) = uring(8) else { return };
    let tmp = temp_dir();
    let f = u
        .open(
            &tmp.path().join("p.ibd"),
            OpenOptions {
                create: true,
                direct: true,
            },
        )
        .unwrap();
    f.write_at(&pattern(1, 0, 64 * A), 0).unwrap();
    let mut reqs: Vec<IoRequest> = (0..64u64)
        .map(|k| IoRequest {
            file: f.clone(),
            offset: k * A as u64,
            buf: AlignedBuf::zeroed(A),
            op: IoOp::Read,
        })
        .collect();
    let mut calls = 0;
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        u.run_batch(&mut reqs, &mut |_, _, _| {
            calls += 1;
            if calls == 3 {
                panic!("callback failure");
            }
        });
    }));
    assert!(caught.is_err(), "the panic propagates to the caller");
    assert_eq!(calls, 3);
    // Everything still works, on a fresh or pooled ring.
    let mut n = 0;
    u.run_batch(&mut reqs, &mut |_, req, r| {
        r.unwrap();
        assert_eq!(&req.buf[..], &pattern(1, req.offset, A)[..]);
        n += 1;
    });
    assert_eq!(n, 64);
}

#[test]
fn misaligned_direct_requests_fail_alone_with_invalid_input() {
    for b in backends().into_iter().filter(|b| b.direct) {
        let f =
            b.io.open(
                &file_in(&b.dir, "mis.ibd"),
                OpenOptions {
                    create: true,
                    direct: true,
                },
            )
            .unwrap();
        assert!(f.is_direct(), "{}", b.name);
        f.write_at(&pattern(2, 0, 4 * A), 0).unwrap();
        let mut reqs = vec![
            IoRequest {
                file: f.clone(),
                offset: 100,
                buf: AlignedBuf::zeroed(A),
                op: IoOp::Read,
            },
            IoRequest {
                file: f.clone(),
                offset: 0,
                buf: AlignedBuf::zeroed(100),
                op: IoOp::Write,
            },
            IoRequest {
                file: f.clone(),
                offset: A as u64,
                buf: AlignedBuf::zeroed(A),
                op: IoOp::Read,
            },
        ];
        let mut got: Vec<Option<Result<(), IoError>>> = vec![None, None, None];
        b.io.run_batch(&mut reqs, &mut |i, _, r| got[i] = Some(r));
        for (i, g) in got.iter().take(2).enumerate() {
            match g {
                Some(Err(e)) => assert_eq!(
                    e.os_kind(),
                    Some(std::io::ErrorKind::InvalidInput),
                    "{}: {e}",
                    b.name
                ),
                other => panic!("{}: request {i}: {other:?}", b.name),
            }
        }
        assert!(matches!(got[2], Some(Ok(()))), "{}", b.name);
        assert_eq!(&reqs[2].buf[..], &pattern(2, A as u64, A)[..], "{}", b.name);
    }
}
