//! Crash-recovery speed: io_uring against the pread/pwrite fallback.
//!
//! ```text
//!  recovery_bench [--dir D] [--data-mib 256] [--pool-mib 64] [--redo-mib 1024]
//!                 [--log-file-mib 768] [--keep] [--quick] [--posix-first]
//! ```
//!
//! 1. A child process creates a data directory under `--dir` (default: the
//!    system temp dir, which must be a real disk, not tmpfs), fills
//!    `--data-mib` of index pages (more than the `--pool-mib` buffer pool),
//!    takes a checkpoint, stops the background flusher (so the checkpoint
//!    stays put) and then makes random record replacements until
//!    `--redo-mib` of redo follows the checkpoint: two passes over all
//!    pages in windows of a quarter of the pool (random pages within the
//!    window, so generating the redo is not bound by random reads), dirty
//!    pages flushed whenever half the pool is dirty (so pages on disk carry
//!    assorted LSNs), never a checkpoint. The log holds two files of
//!    `--log-file-mib`.
//! 2. The parent SIGKILLs the child, copies the crashed directory once per
//!    backend, asks the kernel to drop its page cache (when allowed), and
//!    times `Storage::open` (the whole recovery) with `UringIo` and with
//!    `PosixIo`, each in a fresh process (a process that already recovered
//!    once has warm allocator memory and would favour the second run).
//! 3. It prints one row per backend: redo bytes, pages, seconds, pages/s.
//!
//! Build and run in release mode:
//! `cargo run -p basalt-mtr --release --example recovery_bench`
//! (`--quick`: 32 MiB of data, 128 MiB of redo, for a smoke run).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use basalt_buf::{BufConfig, LatchMode};
use basalt_common::{IndexId, Lsn, PageId, SpaceId};
use basalt_io::{select_io, Io, IoConfig, PosixIo};
use basalt_mtr::{Mtr, Storage, StorageConfig};
use basalt_page::RedoRecord;
use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};

/// Records per page and their size (header included): 70 x 203 B fill a
/// page to about 87%.
const RECS_PER_PAGE: usize = 70;
const REC_LEN: usize = 203;

#[derive(Clone, Debug)]
struct Options {
    dir: PathBuf,
    data_mib: u64,
    pool_mib: u64,
    redo_mib: u64,
    log_file_mib: u64,
    keep: bool,
    posix_first: bool,
}

impl Options {
    fn parse(args: &[String]) -> Options {
        let mut o = Options {
            dir: std::env::temp_dir(),
            data_mib: 256,
            pool_mib: 64,
            redo_mib: 1024,
            log_file_mib: 768,
            keep: false,
            posix_first: false,
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut num = |name: &str| -> u64 {
                it.next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| panic!("{name} needs a number"))
            };
            match a.as_str() {
                "--data-mib" => o.data_mib = num(a),
                "--pool-mib" => o.pool_mib = num(a),
                "--redo-mib" => o.redo_mib = num(a),
                "--log-file-mib" => o.log_file_mib = num(a),
                "--dir" => o.dir = PathBuf::from(it.next().expect("--dir needs a path")),
                "--keep" => o.keep = true,
                "--posix-first" => o.posix_first = true,
                "--quick" => {
                    o.data_mib = 32;
                    o.pool_mib = 16;
                    o.redo_mib = 128;
                    o.log_file_mib = 128;
                }
                other => panic!("unknown option {other}"),
            }
        }
        o
    }

    fn to_args(&self) -> Vec<String> {
        vec![
            "--data-mib".into(),
            self.data_mib.to_string(),
            "--pool-mib".into(),
            self.pool_mib.to_string(),
            "--redo-mib".into(),
            self.redo_mib.to_string(),
            "--log-file-mib".into(),
            self.log_file_mib.to_string(),
        ]
    }

    fn storage_config(&self, datadir: &Path) -> StorageConfig {
        let mut cfg = StorageConfig::new(datadir);
        cfg.buf = BufConfig::for_pool_size(self.pool_mib << 20);
        cfg.log.file_size = self.log_file_mib << 20;
        cfg.log.files_in_group = 2;
        cfg
    }
}

fn record(rng: &mut SmallRng, out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + REC_LEN, 0);
    out[start + 1..start + 3].copy_from_slice(&(REC_LEN as u16).to_be_bytes());
    rng.fill_bytes(&mut out[start + 3..start + REC_LEN]);
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(format!("{line}\n").as_bytes());
    let _ = out.flush();
}

/// Builds the data and the redo, then waits to be killed.
fn child(o: &Options, datadir: &Path) -> ! {
    let io: Arc<dyn Io> = Arc::new(PosixIo::new(4));
    let storage = Storage::create(io, o.storage_config(datadir)).expect("create datadir");
    let store = storage.store();
    let pool = &store.pool;
    let make_room = || {
        if pool.dirty_pages() > pool.capacity() / 2 {
            pool.flush_list_batch(usize::MAX, Lsn::MAX).expect("flush");
        }
    };
    let mut rng = SmallRng::seed_from_u64(42);
    let n_pages = (o.data_mib << 20) as usize / basalt_common::PAGE_SIZE;
    let mut ids: Vec<PageId> = Vec::with_capacity(n_pages);
    let mut recs = Vec::with_capacity(RECS_PER_PAGE * REC_LEN);
    let t = Instant::now();
    while ids.len() < n_pages {
        make_room();
        let mut mtr = Mtr::start(store).expect("mtr");
        for _ in 0..8.min(n_pages - ids.len()) {
            let r = mtr.alloc_page(SpaceId::SYSTEM).expect("alloc");
            mtr.apply(
                r,
                &RedoRecord::InitIndex {
                    level: 0,
                    index_id: IndexId(1),
                    flags: 0,
                },
            )
            .expect("init");
            recs.clear();
            for _ in 0..RECS_PER_PAGE {
                record(&mut rng, &mut recs);
            }
            mtr.apply(
                r,
                &RedoRecord::InsertMany {
                    slot: 0,
                    recs: recs.as_slice().into(),
                },
            )
            .expect("fill");
            ids.push(mtr.page_id(r));
        }
        mtr.commit().expect("commit");
    }
    storage.checkpoint_now().expect("checkpoint");
    pool.shutdown();
    eprintln!(
        "child: {n_pages} pages built and checkpointed in {:.1} s",
        t.elapsed().as_secs_f64()
    );

    let start = store.log.current_lsn();
    let target = o.redo_mib << 20;
    let window = (pool.capacity() / 4).max(1);
    let windows = n_pages.div_ceil(window) as u64;
    let t = Instant::now();
    let mut rec = Vec::with_capacity(REC_LEN);
    let mut mtrs = 0u64;
    let mut w = 0u64;
    while store.log.current_lsn().since(start) < target {
        // Window w (of 2 x windows) ends when its share of the redo is out.
        let share = target * (w + 1) / (2 * windows);
        if store.log.current_lsn().since(start) >= share {
            w += 1;
            continue;
        }
        let first = (w % windows) as usize * window;
        let pages = &ids[first..(first + window).min(n_pages)];
        if mtrs.is_multiple_of(256) {
            make_room();
        }
        let mut mtr = Mtr::start(store).expect("mtr");
        for _ in 0..3 {
            let id = pages[rng.gen_range(0..pages.len())];
            let r = mtr.get(id, LatchMode::Exclusive).expect("page");
            rec.clear();
            record(&mut rng, &mut rec);
            let slot = rng.gen_range(0..RECS_PER_PAGE) as u16;
            mtr.apply(
                r,
                &RedoRecord::Replace {
                    slot,
                    rec: rec.as_slice().into(),
                },
            )
            .expect("replace");
        }
        mtr.commit().expect("commit");
        mtrs += 1;
    }
    let end = store.log.current_lsn();
    store.log.flush_up_to(end).expect("flush log");
    eprintln!(
        "child: {} MiB of redo in {mtrs} mtrs, {:.1} s; dirty pages at the kill: {}",
        end.since(start) >> 20,
        t.elapsed().as_secs_f64(),
        pool.dirty_pages()
    );
    say(&format!("READY {}", end.since(store.log.checkpoint_lsn())));
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy file");
        }
    }
}

/// Writes dirty data back and drops the page cache; false when not
/// permitted (the numbers then include cached log reads).
fn drop_caches() -> bool {
    let _ = Command::new("sync").status();
    std::fs::write("/proc/sys/vm/drop_caches", "3\n").is_ok()
}

/// One timed recovery, in this (fresh) process: prints
/// `RESULT kind redo groups pages read batches total scan apply flush`.
fn recover_main(o: &Options, datadir: &Path, force_posix: bool) {
    let io = select_io(&IoConfig::default(), force_posix);
    let kind = io.kind();
    let t = Instant::now();
    let (storage, r) = Storage::open(io, o.storage_config(datadir)).expect("recovery");
    let secs = t.elapsed().as_secs_f64();
    storage.shutdown().expect("shutdown");
    assert_eq!(r.backend, kind);
    say(&format!(
        "RESULT {kind:?} {} {} {} {} {} {secs} {} {} {}",
        r.redo_bytes(),
        r.groups,
        r.pages,
        r.pages_read,
        r.batches,
        (r.elapsed - r.apply_elapsed - r.flush_elapsed).as_secs_f64(),
        r.apply_elapsed.as_secs_f64(),
        r.flush_elapsed.as_secs_f64()
    ));
}

/// Runs [`recover_main`] in a child process (so allocator and cache state
/// of one run cannot favour the next) and returns its result fields.
fn recover(o: &Options, datadir: &Path, force_posix: bool) -> Vec<String> {
    let out = Command::new(std::env::current_exe().expect("exe"))
        .arg("--recover")
        .arg(datadir)
        .arg(if force_posix { "posix" } else { "uring" })
        .args(o.to_args())
        .stderr(Stdio::inherit())
        .output()
        .expect("run recovery");
    assert!(
        out.status.success(),
        "recovery process failed: {}",
        out.status
    );
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let line = text
        .lines()
        .find(|l| l.starts_with("RESULT "))
        .expect("result line");
    line.split(' ').skip(1).map(str::to_string).collect()
}

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        let datadir = PathBuf::from(&args[1]);
        child(&Options::parse(&args[2..]), &datadir);
    }
    if args.first().map(String::as_str) == Some("--recover") {
        let datadir = PathBuf::from(&args[1]);
        recover_main(&Options::parse(&args[3..]), &datadir, args[2] == "posix");
        return;
    }
    let o = Options::parse(&args);
    let work = tempfile::Builder::new()
        .prefix("basalt-recovery-bench")
        .tempdir_in(&o.dir)
        .expect("work dir");
    let crashed = work.path().join("crashed");
    eprintln!(
        "recovery_bench: {} MiB data, {} MiB pool, {} MiB redo, log 2 x {} MiB, in {}",
        o.data_mib,
        o.pool_mib,
        o.redo_mib,
        o.log_file_mib,
        work.path().display()
    );
    let mut child = Command::new(std::env::current_exe().expect("exe"))
        .arg("--child")
        .arg(&crashed)
        .args(o.to_args())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn child");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("child output");
    assert!(line.starts_with("READY"), "child failed: {line:?}");
    child.kill().expect("SIGKILL");
    let status = child.wait().expect("wait");
    eprintln!(
        "child killed ({status}); redo after the checkpoint: {} bytes",
        line.trim()
    );

    let mut backends: [(&str, bool); 2] = [("io_uring", false), ("pread/pwrite", true)];
    if o.posix_first {
        backends.reverse();
    }
    let mut rows = Vec::new();
    for (name, force_posix) in backends {
        let dir = work.path().join(name.replace('/', "_"));
        copy_dir(&crashed, &dir);
        let cached = !drop_caches();
        let f = recover(&o, &dir, force_posix);
        if !force_posix && f[0] != "Uring" {
            eprintln!(
                "io_uring is not available here; the io_uring row used {}",
                f[0]
            );
        }
        rows.push((name, f, cached));
        std::fs::remove_dir_all(&dir).expect("remove copy");
    }
    println!();
    println!(
        "| backend      | redo bytes    | groups   | pages  | read   | batches | seconds | scan+parse s | apply s | flush s | pages/s  | MiB redo/s |"
    );
    println!(
        "|--------------|---------------|----------|--------|--------|---------|---------|--------------|---------|---------|----------|------------|"
    );
    for (name, f, cached) in &rows {
        let num = |i: usize| -> f64 { f[i].parse().expect("number") };
        let secs = num(6);
        println!(
            "| {:<12} | {:>13} | {:>8} | {:>6} | {:>6} | {:>7} | {:>7.2} | {:>12.2} | {:>7.2} | {:>7.2} | {:>8.0} | {:>10.0} |{}",
            name,
            f[1],
            f[2],
            f[3],
            f[4],
            f[5],
            secs,
            num(7),
            num(8),
            num(9),
            num(3) / secs,
            num(1) / (1 << 20) as f64 / secs,
            if *cached { " (page cache not dropped)" } else { "" }
        );
    }
    if o.keep {
        let kept = work.keep();
        eprintln!("kept {}", kept.display());
    }
}
