//! O_DIRECT: granted on a disk filesystem, alignment rules, and the
//! buffered fallback on a filesystem that refuses it.

use std::io::ErrorKind;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use basalt_io::{
    AlignedBuf, Io, IoOp, IoRequest, MemIo, OpenOptions, PosixFile, PosixIo, DIRECT_IO_ALIGN,
};

use crate::common::{pattern, temp_dir, uring};

const A: usize = DIRECT_IO_ALIGN;

/// Names a directory whose filesystem refuses O_DIRECT, for the fallback test.
const NO_DIRECT_DIR_ENV: &str = "BASALT_NO_DIRECT_DIR";
/// Set to `1` to let the fallback test pass where no such filesystem can be had.
const ALLOW_NO_RAMFS_ENV: &str = "BASALT_ALLOW_NO_RAMFS";
/// Set (by the test itself) in the child process that runs inside a private
/// mount namespace with a ramfs mounted at this path.
const CHILD_DIR_ENV: &str = "BASALT_IO_FALLBACK_CHILD_DIR";
/// Printed by the checks so the parent knows they ran.
const CHECKS_RAN: &str = "basalt-io: fallback checks ran";

/// True when creating a file with O_DIRECT in `dir` fails with EINVAL.
fn refuses_direct(dir: &Path) -> bool {
    let probe = dir.join(".basalt-odirect-probe");
    let r = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .custom_flags(libc::O_DIRECT)
        .open(&probe);
    let _ = std::fs::remove_file(&probe);
    matches!(r, Err(e) if e.raw_os_error() == Some(libc::EINVAL))
}

#[test]
fn direct_is_granted_on_disk_and_enforces_alignment() {
    let tmp = temp_dir();
    assert!(
        !refuses_direct(tmp.path()),
        "the target directory's filesystem refuses O_DIRECT; this test needs one that grants it"
    );
    let path = tmp.path().join("d.ibd");
    let f = PosixFile::open(
        &path,
        OpenOptions {
            create: true,
            direct: true,
        },
    )
    .unwrap();
    assert!(basalt_io::IoFile::is_direct(&f));
    let f: basalt_io::FileRef = Arc::new(f);

    // Misaligned offsets or lengths fail clearly, without touching the file.
    for (off, len) in [(100u64, A), (0, 100), (A as u64 + 512, 2 * A)] {
        let err = f
            .write_at(&AlignedBuf::zeroed(len), off)
            .expect_err("misaligned write");
        assert_eq!(err.os_kind(), Some(ErrorKind::InvalidInput), "{err}");
        assert!(err.to_string().contains("multiples of 4096"), "{err}");
        let mut buf = AlignedBuf::zeroed(len);
        let err = f.read_at(&mut buf, off).expect_err("misaligned read");
        assert_eq!(err.os_kind(), Some(ErrorKind::InvalidInput), "{err}");
    }
    assert_eq!(f.len().unwrap(), 0, "rejected writes wrote nothing");

    // A misaligned buffer address is bounced, not refused.
    let mut backing = AlignedBuf::zeroed(3 * A);
    let data = pattern(6, 0, 2 * A);
    backing[1..1 + 2 * A].copy_from_slice(&data);
    f.write_at(&backing[1..1 + 2 * A], 0).unwrap();
    let mut back = AlignedBuf::zeroed(3 * A);
    f.read_at(&mut back[1..1 + 2 * A], 0).unwrap();
    assert_eq!(&back[1..1 + 2 * A], &data[..]);
    f.sync().unwrap();
}

#[test]
fn mem_io_can_play_a_filesystem_without_o_direct() {
    let mem = MemIo::new();
    let f = mem
        .open(
            Path::new("a"),
            OpenOptions {
                create: true,
                direct: true,
            },
        )
        .unwrap();
    assert!(f.is_direct());
    assert!(
        f.write_at(b"abc", 1).is_err(),
        "direct MemFile enforces alignment"
    );
    mem.set_direct_supported(false);
    let g = mem
        .open(
            Path::new("b"),
            OpenOptions {
                create: true,
                direct: true,
            },
        )
        .unwrap();
    assert!(!g.is_direct());
    g.write_at(b"abc", 1).unwrap();
    assert_eq!(mem.file_bytes(Path::new("b")).unwrap(), b"\0abc");
}

/// The checks proper: on `dir` (which refuses O_DIRECT) every real backend
/// opens direct-requested files buffered and all I/O still works.
fn fallback_checks(dir: &Path) {
    assert!(
        refuses_direct(dir),
        "{} does not refuse O_DIRECT",
        dir.display()
    );
    let mut ios: Vec<(&str, Arc<dyn Io>)> = vec![("posix", Arc::new(PosixIo::new(2)))];
    if let Some(u) = uring(8) {
        ios.push(("uring", Arc::new(u)));
    }
    for (name, io) in ios {
        let path = dir.join(format!("fb-{name}.ibd"));
        let f = io
            .open(
                &path,
                OpenOptions {
                    create: true,
                    direct: true,
                },
            )
            .unwrap();
        assert!(!f.is_direct(), "{name}: O_DIRECT cannot have been granted");
        // Buffered now, so unaligned I/O is fine.
        f.write_at(b"hello", 3).unwrap();
        let mut got = [0u8; 8];
        f.read_at(&mut got, 0).unwrap();
        assert_eq!(&got, b"\0\0\0hello", "{name}");
        let mut reqs: Vec<IoRequest> = (0..20u64)
            .map(|k| IoRequest {
                file: f.clone(),
                offset: k * 1000,
                buf: pattern(k as u8, k * 1000, 1000),
                op: IoOp::Write,
            })
            .collect();
        let mut n = 0;
        io.run_batch(&mut reqs, &mut |_, _, r| {
            r.unwrap();
            n += 1;
        });
        assert_eq!(n, 20, "{name}");
        for k in 0..20u64 {
            let mut b = vec![0u8; 1000];
            f.read_at(&mut b, k * 1000).unwrap();
            assert_eq!(
                &b[..],
                &pattern(k as u8, k * 1000, 1000)[..],
                "{name}: record {k}"
            );
        }
        f.sync().unwrap();
        io.sync_dir(dir).unwrap();
        // Requests to reopen direct again still fall back (and log at debug).
        let g = io
            .open(
                &path,
                OpenOptions {
                    create: false,
                    direct: true,
                },
            )
            .unwrap();
        assert!(!g.is_direct(), "{name}");
    }
    println!("{CHECKS_RAN}");
}

#[test]
fn direct_falls_back_to_buffered_where_the_filesystem_refuses_it() {
    if let Ok(dir) = std::env::var(CHILD_DIR_ENV) {
        // Child: inside the private mount namespace.
        fallback_checks(Path::new(&dir));
        return;
    }
    if let Ok(dir) = std::env::var(NO_DIRECT_DIR_ENV) {
        let tmp = tempfile::tempdir_in(dir).unwrap();
        fallback_checks(tmp.path());
        return;
    }
    if Path::new("/dev/shm").is_dir() && refuses_direct(Path::new("/dev/shm")) {
        let tmp = tempfile::tempdir_in("/dev/shm").unwrap();
        fallback_checks(tmp.path());
        return;
    }
    // tmpfs grants O_DIRECT on current kernels; ramfs never does. Mount one
    // in a private mount namespace (gone when the child exits) and rerun
    // this test inside it.
    let mnt = temp_dir();
    let exe = std::env::current_exe().unwrap();
    let test_name = format!(
        "{}::direct_falls_back_to_buffered_where_the_filesystem_refuses_it",
        module_path!().split_once("::").map_or("direct", |(_, m)| m)
    );
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(r#"mount -t ramfs basalt-ramfs "$0" || exit 77; exec "$@""#)
        .arg(mnt.path())
        .arg(&exe)
        .args(["--exact", &test_name, "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR_ENV, mnt.path())
        .output();
    let unavailable = match &out {
        Err(e) => Some(format!("cannot run unshare: {e}")),
        Ok(o) if o.status.code() == Some(77) || !o.status.success() && o.stdout.is_empty() => {
            Some(format!(
                "cannot mount a private ramfs: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ))
        }
        Ok(_) => None,
    };
    if let Some(why) = unavailable {
        if std::env::var(ALLOW_NO_RAMFS_ENV).as_deref() == Ok("1") {
            eprintln!("NOTE: no filesystem refusing O_DIRECT ({why}); {ALLOW_NO_RAMFS_ENV}=1 so this test checks nothing");
            return;
        }
        panic!(
            "no filesystem refusing O_DIRECT to test the fallback on ({why}); set {NO_DIRECT_DIR_ENV} to one, \
             run as root, or set {ALLOW_NO_RAMFS_ENV}=1"
        );
    }
    let o = out.unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success() && stdout.contains(CHECKS_RAN),
        "fallback checks failed in the ramfs namespace:\n{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
