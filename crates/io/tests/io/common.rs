//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use basalt_io::{AlignedBuf, FaultPlan, FaultyIo, Io, MemIo, PosixIo, UringIo};
use rand::rngs::SmallRng;
use rand::SeedableRng;

/// Set to `1` to let io_uring tests pass (with a message) where io_uring
/// cannot be set up. Unset, they fail: io_uring works on our machines.
pub const ALLOW_NO_URING_ENV: &str = "BASALT_ALLOW_NO_URING";

/// Seed for randomised tests; printed by every test that uses one.
pub const SEED_ENV: &str = "BASALT_TEST_SEED";

/// A fresh temporary directory under the target directory (a real disk
/// filesystem, where O_DIRECT is normally granted).
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("basalt-io-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("create temporary directory under CARGO_TARGET_TMPDIR")
}

/// A io_uring backend, or `None` (after saying so) when io_uring is
/// unavailable and `BASALT_ALLOW_NO_URING=1`; panics otherwise.
pub fn uring(queue_depth: u32) -> Option<UringIo> {
    match UringIo::new(queue_depth) {
        Ok(u) => Some(u),
        Err(e) if std::env::var(ALLOW_NO_URING_ENV).as_deref() == Ok("1") => {
            eprintln!("NOTE: io_uring unavailable ({e}); {ALLOW_NO_URING_ENV}=1 so this test checks nothing");
            None
        }
        Err(e) => panic!(
            "io_uring unavailable: {e}. It works on Basalt's machines, so this is a failure; \
             set {ALLOW_NO_URING_ENV}=1 to accept a kernel without io_uring"
        ),
    }
}

/// Every backend the suite runs, with a name for messages and whether its
/// files are opened direct.
pub struct Backend {
    pub name: &'static str,
    pub io: Arc<dyn Io>,
    pub direct: bool,
    /// Directory the backend's files live in (kept alive for the test).
    pub dir: PathBuf,
    _tmp: Option<tempfile::TempDir>,
}

/// Builds the backends under test. Memory-backed ones use a virtual
/// directory; the others a fresh temporary directory each.
pub fn backends() -> Vec<Backend> {
    let mut v = Vec::new();
    let disk = |name: &'static str, io: Arc<dyn Io>, direct: bool| {
        let tmp = temp_dir();
        Backend {
            name,
            io,
            direct,
            dir: tmp.path().to_path_buf(),
            _tmp: Some(tmp),
        }
    };
    let mem = |name: &'static str, io: Arc<dyn Io>, direct: bool| Backend {
        name,
        io,
        direct,
        dir: PathBuf::from("/mem/db"),
        _tmp: None,
    };
    v.push(disk("posix", Arc::new(PosixIo::new(4)), false));
    v.push(disk("posix-direct", Arc::new(PosixIo::new(3)), true));
    if let Some(u) = uring(64) {
        v.push(disk("uring", Arc::new(u), false));
    }
    if let Some(u) = uring(4) {
        v.push(disk("uring-direct-qd4", Arc::new(u), true));
    }
    v.push(mem("mem", Arc::new(MemIo::new()), false));
    v.push(mem("mem-direct", Arc::new(MemIo::new()), true));
    v.push(mem(
        "faulty(mem)",
        Arc::new(FaultyIo::new(Arc::new(MemIo::new()), FaultPlan::new())),
        false,
    ));
    if let Some(u) = uring(16) {
        v.push(disk(
            "faulty(uring)-direct",
            Arc::new(FaultyIo::new(Arc::new(u), FaultPlan::new())),
            true,
        ));
    }
    v.push(disk(
        "faulty(posix)",
        Arc::new(FaultyIo::new(Arc::new(PosixIo::new(2)), FaultPlan::new())),
        false,
    ));
    for b in &v {
        b.io.create_dir_all(&b.dir)
            .unwrap_or_else(|e| panic!("{}: create_dir_all: {e}", b.name));
    }
    v
}

/// A seeded RNG: the seed comes from `BASALT_TEST_SEED` or the clock, and
/// is printed (shown by the test harness when the test fails).
pub fn seeded_rng(test: &str) -> SmallRng {
    let seed = std::env::var(SEED_ENV)
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0x5eed)
        });
    println!("{test}: seed {seed} (rerun with {SEED_ENV}={seed})");
    SmallRng::seed_from_u64(seed)
}

/// Deterministic bytes for (tag, offset): distinct per file and position.
pub fn pattern(tag: u8, offset: u64, len: usize) -> AlignedBuf {
    let mut b = AlignedBuf::zeroed(len);
    for (i, x) in b.iter_mut().enumerate() {
        let pos = offset + i as u64;
        *x = (pos.wrapping_mul(31) ^ (pos >> 9) ^ u64::from(tag).wrapping_mul(0x9e)) as u8;
    }
    b
}

/// Path of `name` inside `dir`.
pub fn file_in(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}
