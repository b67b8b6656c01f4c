//! `MemIo`'s crash model, directly and against a reference model.

use std::path::{Path, PathBuf};

use basalt_io::{Io, MemIo, OpenOptions};
use rand::Rng;

use crate::common::seeded_rng;

const CREATE: OpenOptions = OpenOptions {
    create: true,
    direct: false,
};

#[test]
fn crash_keeps_synced_data_and_drops_the_rest() {
    let mem = MemIo::new();
    let a = Path::new("/db/a.ibd");
    let f = mem.open(a, CREATE).unwrap();
    f.write_at(b"durable!", 0).unwrap();
    f.sync().unwrap();
    f.write_at(b"VOLATILE", 0).unwrap();
    f.write_at(b"tail", 100).unwrap();
    assert_eq!(mem.file_bytes(a).unwrap().len(), 104);
    assert_eq!(mem.durable_bytes(a).unwrap(), b"durable!");

    mem.crash();
    assert_eq!(mem.file_bytes(a).unwrap(), b"durable!");
    // The handle from before the crash sees the reverted file.
    assert_eq!(f.len().unwrap(), 8);
    let mut buf = [0u8; 8];
    f.read_at(&mut buf, 0).unwrap();
    assert_eq!(&buf, b"durable!");
    assert!(f.read_at(&mut buf, 4).unwrap_err().is_unexpected_eof());
}

#[test]
fn a_durable_snapshot_holds_what_a_crash_would_leave_while_the_original_runs_on() {
    let mem = MemIo::new();
    let (a, b) = (Path::new("/db/a.ibd"), Path::new("/db/b.ibd"));
    mem.create_dir_all(Path::new("/db/sub")).unwrap();
    let fa = mem.open(a, CREATE).unwrap();
    fa.write_at(b"synced", 0).unwrap();
    fa.sync().unwrap();
    fa.write_at(b"UNSYNCED", 0).unwrap();
    mem.open(b, CREATE)
        .unwrap()
        .write_at(b"never synced", 0)
        .unwrap();

    let snap = mem.durable_snapshot();
    assert_eq!(snap.file_paths(), vec![a.to_path_buf(), b.to_path_buf()]);
    assert_eq!(snap.file_bytes(a).unwrap(), b"synced");
    assert_eq!(snap.durable_bytes(a).unwrap(), b"synced");
    assert_eq!(snap.file_bytes(b).unwrap(), b"", "created but never synced");
    assert!(snap.exists(Path::new("/db/sub")), "directories are copied");
    assert_eq!((snap.writes(), snap.syncs()), (0, 0), "fresh counters");

    // The two are independent from here on.
    fa.write_at(b"later", 0).unwrap();
    fa.sync().unwrap();
    snap.open(a, CREATE).unwrap().write_at(b"other", 0).unwrap();
    assert_eq!(&mem.file_bytes(a).unwrap()[..5], b"later");
    assert_eq!(snap.file_bytes(a).unwrap(), b"otherd");
}

#[test]
fn set_len_is_volatile_until_synced() {
    let mem = MemIo::new();
    let p = Path::new("t");
    let f = mem.open(p, CREATE).unwrap();
    f.write_at(&[7u8; 64], 0).unwrap();
    f.sync().unwrap();
    f.set_len(16).unwrap();
    mem.crash();
    assert_eq!(f.len().unwrap(), 64, "unsynced truncation is lost");
    f.set_len(16).unwrap();
    f.sync().unwrap();
    mem.crash();
    assert_eq!(mem.file_bytes(p).unwrap(), vec![7u8; 16]);
}

#[test]
fn namespace_changes_are_immediate_and_survive_crashes() {
    let mem = MemIo::new();
    let created = Path::new("new.ibd");
    let removed = Path::new("old.ibd");
    mem.open(removed, CREATE).unwrap().sync().unwrap();
    let f = mem.open(created, CREATE).unwrap();
    f.write_at(b"never synced", 0).unwrap();
    mem.remove_file(removed).unwrap();
    mem.create_dir_all(Path::new("x/y")).unwrap();
    mem.crash();
    assert!(mem.exists(created), "created files exist after a crash");
    assert_eq!(
        mem.file_bytes(created).unwrap(),
        b"",
        "but hold only what was synced"
    );
    assert!(!mem.exists(removed), "removal is permanent");
    assert!(mem.exists(Path::new("x/y")) && mem.exists(Path::new("x")));
    assert_eq!(mem.file_paths(), vec![PathBuf::from("new.ibd")]);
    assert!(
        mem.open(Path::new("x"), CREATE).is_err(),
        "a directory is not a file"
    );
}

#[test]
fn counters_count_each_kind_of_operation() {
    let mem = MemIo::new();
    mem.create_dir_all(Path::new("d")).unwrap();
    let f = mem.open(Path::new("d/f"), CREATE).unwrap();
    for k in 0..5u64 {
        f.write_at(&[1, 2, 3], k * 3).unwrap();
    }
    let mut b = [0u8; 3];
    f.read_at(&mut b, 0).unwrap();
    f.sync().unwrap();
    f.sync().unwrap();
    mem.sync_dir(Path::new("d")).unwrap();
    assert_eq!(
        (mem.writes(), mem.reads(), mem.syncs(), mem.dir_syncs()),
        (5, 1, 2, 1)
    );
}

/// Reference model of one file: volatile and durable images as plain Vecs.
#[derive(Clone, Default)]
struct ModelFile {
    volatile: Vec<u8>,
    durable: Vec<u8>,
}

#[test]
fn random_operations_match_a_reference_model() {
    let mut rng = seeded_rng("mem_model");
    let mem = MemIo::new();
    let paths: Vec<PathBuf> = (0..3).map(|k| PathBuf::from(format!("f{k}"))).collect();
    let files: Vec<_> = paths.iter().map(|p| mem.open(p, CREATE).unwrap()).collect();
    let mut model = vec![ModelFile::default(); 3];
    for step in 0..3000 {
        let k = rng.gen_range(0..3);
        let (f, m) = (&files[k], &mut model[k]);
        match rng.gen_range(0..100) {
            0..=49 => {
                let off = rng.gen_range(0..2000usize);
                let len = rng.gen_range(1..200usize);
                let data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
                f.write_at(&data, off as u64).unwrap();
                if m.volatile.len() < off + len {
                    m.volatile.resize(off + len, 0);
                }
                m.volatile[off..off + len].copy_from_slice(&data);
            }
            50..=69 => {
                let off = rng.gen_range(0..2200usize);
                let len = rng.gen_range(1..300usize);
                let mut buf = vec![0u8; len];
                let r = f.read_at(&mut buf, off as u64);
                match m.volatile.get(off..off + len) {
                    Some(want) => {
                        r.unwrap_or_else(|e| panic!("step {step}: read failed: {e}"));
                        assert_eq!(&buf[..], want, "step {step}: read of file {k}");
                    }
                    None => assert!(r.unwrap_err().is_unexpected_eof(), "step {step}"),
                }
            }
            70..=79 => {
                let len = rng.gen_range(0..2200usize);
                f.set_len(len as u64).unwrap();
                m.volatile.resize(len, 0);
            }
            80..=94 => {
                f.sync().unwrap();
                m.durable = m.volatile.clone();
            }
            _ => {
                mem.crash();
                for m in model.iter_mut() {
                    m.volatile = m.durable.clone();
                }
            }
        }
        for (j, p) in paths.iter().enumerate() {
            assert!(
                mem.file_bytes(p).unwrap() == model[j].volatile
                    && mem.durable_bytes(p).unwrap() == model[j].durable,
                "step {step}: file {j} differs from the model"
            );
        }
    }
}
