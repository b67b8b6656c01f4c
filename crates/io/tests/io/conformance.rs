//! Every backend against the same contract: open, read, write, len,
//! set_len, exact reads, namespace operations.

use std::io::ErrorKind;

use basalt_io::{AlignedBuf, IoError, OpenOptions, DIRECT_IO_ALIGN};

use crate::common::{backends, file_in, pattern, Backend};

const A: usize = DIRECT_IO_ALIGN;

fn opts(b: &Backend, create: bool) -> OpenOptions {
    OpenOptions {
        create,
        direct: b.direct,
    }
}

fn check_file_basics(b: &Backend) {
    let name = b.name;
    let path = file_in(&b.dir, "t1.ibd");

    // Opening a missing file without `create` is NotFound.
    let err = b.io.open(&path, opts(b, false)).expect_err(name);
    assert_eq!(err.os_kind(), Some(ErrorKind::NotFound), "{name}: {err}");
    assert!(!b.io.exists(&path), "{name}");

    let f =
        b.io.open(&path, opts(b, true))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(b.io.exists(&path), "{name}");
    assert_eq!(f.path(), path.as_path(), "{name}");
    assert_eq!(f.is_direct(), b.direct, "{name}: direct granted as asked");
    assert_eq!(f.len().unwrap(), 0, "{name}");
    assert!(f.is_empty().unwrap(), "{name}");

    // Two writes with a hole between them.
    let p0 = pattern(1, 0, 2 * A);
    let p1 = pattern(2, 4 * A as u64, A);
    f.write_at(&p0, 0).unwrap();
    f.write_at(&p1, 4 * A as u64).unwrap();
    assert_eq!(
        f.len().unwrap(),
        5 * A as u64,
        "{name}: length after extending write"
    );
    assert!(!f.is_empty().unwrap(), "{name}");

    let mut got = AlignedBuf::zeroed(5 * A);
    f.read_at(&mut got, 0).unwrap();
    assert_eq!(&got[..2 * A], &p0[..], "{name}: first write");
    assert!(
        got[2 * A..4 * A].iter().all(|&x| x == 0),
        "{name}: hole reads as zeros"
    );
    assert_eq!(&got[4 * A..], &p1[..], "{name}: second write");

    // Overwrite in the middle.
    let p2 = pattern(3, A as u64, A);
    f.write_at(&p2, A as u64).unwrap();
    let mut one = AlignedBuf::zeroed(A);
    f.read_at(&mut one, A as u64).unwrap();
    assert_eq!(&one[..], &p2[..], "{name}: overwrite");
    f.read_at(&mut one, 0).unwrap();
    assert_eq!(&one[..], &p0[..A], "{name}: neighbour untouched");

    // Exact reads: past the end is UnexpectedEof with the details.
    let mut two = AlignedBuf::zeroed(2 * A);
    match f.read_at(&mut two, 4 * A as u64) {
        Err(IoError::UnexpectedEof {
            path: p,
            offset,
            len,
        }) => {
            assert_eq!(p, path, "{name}");
            assert_eq!(offset, 4 * A as u64, "{name}");
            assert_eq!(len, 2 * A, "{name}");
        }
        other => panic!("{name}: expected UnexpectedEof, got {other:?}"),
    }
    let err = f.read_at(&mut one, 10 * A as u64).expect_err(name);
    assert!(err.is_unexpected_eof(), "{name}: {err}");

    // set_len grows with zeros and shrinks.
    f.set_len(8 * A as u64).unwrap();
    assert_eq!(f.len().unwrap(), 8 * A as u64, "{name}");
    f.read_at(&mut one, 7 * A as u64).unwrap();
    assert!(one.iter().all(|&x| x == 0), "{name}: grown tail is zeros");
    f.set_len(A as u64).unwrap();
    assert_eq!(f.len().unwrap(), A as u64, "{name}");
    assert!(
        f.read_at(&mut one, A as u64)
            .expect_err(name)
            .is_unexpected_eof(),
        "{name}"
    );
    f.read_at(&mut one, 0).unwrap();
    assert_eq!(&one[..], &p0[..A], "{name}: kept prefix after shrink");

    f.sync().unwrap_or_else(|e| panic!("{name}: sync: {e}"));
    b.io.sync_dir(&b.dir)
        .unwrap_or_else(|e| panic!("{name}: sync_dir: {e}"));

    // A second handle sees the same file.
    drop(f);
    let g = b.io.open(&path, opts(b, false)).unwrap();
    assert_eq!(g.len().unwrap(), A as u64, "{name}: reopened length");
    let mut again = AlignedBuf::zeroed(A);
    g.read_at(&mut again, 0).unwrap();
    assert_eq!(&again[..], &p0[..A], "{name}: reopened contents");
    drop(g);

    b.io.remove_file(&path).unwrap();
    assert!(!b.io.exists(&path), "{name}: removed");
    let err = b.io.remove_file(&path).expect_err(name);
    assert_eq!(err.os_kind(), Some(ErrorKind::NotFound), "{name}: {err}");

    let nested = b.dir.join("a/b/c");
    b.io.create_dir_all(&nested).unwrap();
    assert!(b.io.exists(&nested), "{name}");
    b.io.sync_dir(&nested).unwrap();
    let inner = b.io.open(&nested.join("x"), opts(b, true)).unwrap();
    inner.write_at(&pattern(4, 0, A), 0).unwrap();
    assert_eq!(inner.len().unwrap(), A as u64, "{name}");

    // An empty batch completes nothing and returns.
    let mut none: Vec<basalt_io::IoRequest> = Vec::new();
    b.io.run_batch(&mut none, &mut |i, _, _| {
        panic!("{name}: completion {i} of an empty batch")
    });
}

#[test]
fn every_backend_honours_the_file_contract() {
    for b in backends() {
        check_file_basics(&b);
    }
}

#[test]
fn sync_dir_of_a_missing_directory_fails() {
    for b in backends() {
        let err = b.io.sync_dir(&b.dir.join("no-such-dir")).expect_err(b.name);
        assert_eq!(
            err.os_kind(),
            Some(ErrorKind::NotFound),
            "{}: {err}",
            b.name
        );
    }
}

#[test]
fn concurrent_single_calls_on_one_file_do_not_interfere() {
    for b in backends() {
        let f =
            b.io.open(&file_in(&b.dir, "shared.ibd"), opts(&b, true))
                .unwrap();
        std::thread::scope(|s| {
            for t in 0..4u8 {
                let f = f.clone();
                s.spawn(move || {
                    for k in 0..16u64 {
                        let off = (k * 4 + u64::from(t)) * A as u64;
                        f.write_at(&pattern(t, off, A), off).unwrap();
                    }
                });
            }
        });
        for t in 0..4u8 {
            for k in 0..16u64 {
                let off = (k * 4 + u64::from(t)) * A as u64;
                let mut got = AlignedBuf::zeroed(A);
                f.read_at(&mut got, off).unwrap();
                assert_eq!(
                    &got[..],
                    &pattern(t, off, A)[..],
                    "{}: thread {t} page {k}",
                    b.name
                );
            }
        }
    }
}
