//! Kill -9 crash test of a B+tree: a child process changes the tree in
//! mini-transactions on real files and reports every durable one; the
//! parent kills it at a random moment, recovers the data directory and
//! checks that every acknowledged mini-transaction is there, that each
//! mini-transaction is all-or-nothing, and that the tree validates.
//!
//! ```text
//!  parent                                   child (same binary, --child)
//!  create datadir, tablespace test/t1.ibd,
//!  an empty clustered tree
//!  loop cycles:
//!    spawn child ─────────────────────────▶ Storage::open (recovery)
//!                 ◀── READY <digest> ────── digest of every row after it
//!                 ◀── MTR k <ops> ───────── before commit: the content
//!                                           (1-4 inserts / updates /
//!                                           delete-marks / removes, or
//!                                           one long value on overflow
//!                                           pages); commit, flush_up_to
//!                 ◀── ACK k ─────────────── durable
//!    SIGKILL at a random moment (after a random number of ACKs, or a few
//!    ms after spawning, possibly during the child's own recovery)
//!    candidates = {base + acked mtrs, base + acked + the one in flight}
//!    3 cycles in 4: Storage::open here, validate the tree (order, links,
//!    levels, overflow chains), read every row: it must equal one
//!    candidate exactly; the 4th: leave recovery to the next child, whose
//!    READY digest must match a candidate
//! ```
//!
//! The data directory is reused across cycles, so every recovery runs on
//! top of recovered state, and the tree grows through splits and shrinks
//! through merges across cycles. A partially applied mini-transaction
//! matches no candidate.
//!
//! Runs 30 cycles in release builds (12 in debug builds, where the tree
//! is slow); `BASALT_CRASH_CYCLES=N` or
//! `--cycles N` changes that, e.g.
//! `cargo test -p basalt-mtr --release --test btree_crash -- --cycles 500`.
//! `BASALT_TEST_SEED` replays a run (the seed is printed).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use std::collections::BTreeMap;
use std::ops::Bound;

use basalt_btree::{BTree, IndexKind};
use basalt_buf::BufConfig;
use basalt_common::{IndexId, Lsn, PageNo, RollPtr, SpaceId, TrxId};
use basalt_io::{Io, PosixIo};
use basalt_mtr::{Mtr, PageStore, Storage, StorageConfig};
use basalt_page::rec::{FieldDef, RecordLayout, SysCols};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const TEST_NAME: &str = "btree_crash";
const SPACE: SpaceId = SpaceId(1);
const INDEX: IndexId = IndexId(41);
/// Keys are drawn from `0..KEYS`.
const KEYS: u64 = 2000;
/// A cycle whose child does not reach its kill point within this long
/// fails the test (the child hung).
const CYCLE_TIMEOUT: Duration = Duration::from_secs(60);

fn storage_config(dir: &Path) -> StorageConfig {
    let mut cfg = StorageConfig::new(dir);
    cfg.buf = BufConfig::for_pool_size(8 << 20);
    cfg.log.file_size = 4 << 20;
    cfg.log.buffer_size = 1 << 20;
    cfg
}

fn io() -> Arc<dyn Io> {
    Arc::new(PosixIo::new(2))
}

// ---- the tree and its model -------------------------------------------------

fn layout() -> Arc<RecordLayout> {
    Arc::new(
        RecordLayout::new(vec![FieldDef::fixed(8), FieldDef::var(1 << 30)], 1, true)
            .expect("layout"),
    )
}

fn open_tree(root: PageNo) -> BTree {
    BTree::open(SPACE, root, INDEX, layout(), IndexKind::Clustered).expect("tree handle")
}

/// Every version carries the same system columns: the test is about pages,
/// not transactions.
fn sys() -> SysCols {
    SysCols {
        trx_id: TrxId(7),
        roll_ptr: RollPtr(1),
    }
}

/// Value bytes of length `len` derived from `seed` (so the wire carries
/// only the seed).
fn value(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(len);
    v
}

/// One change to the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Op {
    Insert { key: u64, len: usize, seed: u64 },
    Update { key: u64, len: usize, seed: u64 },
    Mark { key: u64, marked: bool },
    Remove { key: u64 },
}

/// Key -> (value, delete mark).
type Model = BTreeMap<u64, (Vec<u8>, bool)>;

fn apply_model(m: &mut Model, ops: &[Op]) {
    for op in ops {
        match *op {
            Op::Insert { key, len, seed } => {
                m.insert(key, (value(seed, len), false));
            }
            Op::Update { key, len, seed } => {
                m.get_mut(&key).expect("update of a present key").0 = value(seed, len);
            }
            Op::Mark { key, marked } => m.get_mut(&key).expect("mark of a present key").1 = marked,
            Op::Remove { key } => {
                m.remove(&key);
            }
        }
    }
}

fn value_len(rng: &mut SmallRng) -> usize {
    match rng.gen_range(0..100) {
        0..=69 => rng.gen_range(0..300),
        70..=95 => rng.gen_range(300..3000),
        // Long values go to overflow pages.
        _ => rng.gen_range(9000..40_000),
    }
}

/// A random mini-transaction valid against `model`: one to four changes
/// on distinct keys, or a single change carrying a long value.
fn gen_mtr(rng: &mut SmallRng, model: &Model) -> Vec<Op> {
    let n = rng.gen_range(1..=4);
    let mut ops = Vec::new();
    let mut used = std::collections::HashSet::new();
    while ops.len() < n {
        let key = rng.gen_range(0..KEYS);
        if !used.insert(key) {
            continue;
        }
        let len = value_len(rng);
        let seed = rng.gen();
        let op = match (model.get(&key), rng.gen_range(0..10)) {
            (None, _) => Op::Insert { key, len, seed },
            (Some(_), 0..=4) => Op::Update { key, len, seed },
            (Some(&(_, marked)), 5) => Op::Mark {
                key,
                marked: !marked,
            },
            (Some(_), _) => Op::Remove { key },
        };
        let long = matches!(op, Op::Insert { len, .. } | Op::Update { len, .. } if len >= 9000);
        if long {
            // Overflow chains are written in mini-transactions of their
            // own; keep such a change alone in its mini-transaction.
            if ops.is_empty() {
                return vec![op];
            }
            continue;
        }
        ops.push(op);
    }
    ops
}

/// Runs `ops` in one mini-transaction; returns its end LSN.
fn run_mtr(store: &PageStore, tree: &BTree, ops: &[Op]) -> Result<Lsn, String> {
    let mut mtr = Mtr::start(store).map_err(|e| e.to_string())?;
    for op in ops {
        let r = match *op {
            Op::Insert { key, len, seed } => tree.insert(
                &mut mtr,
                &[Some(&key.to_be_bytes()), Some(&value(seed, len))],
                sys(),
            ),
            Op::Update { key, len, seed } => {
                let k = key.to_be_bytes();
                tree.update(
                    &mut mtr,
                    &[Some(&k)],
                    &[Some(&k), Some(&value(seed, len))],
                    sys(),
                )
            }
            Op::Mark { key, marked } => {
                tree.delete_mark(&mut mtr, &[Some(&key.to_be_bytes())], marked, sys())
            }
            Op::Remove { key } => tree.remove(&mut mtr, &[Some(&key.to_be_bytes())]),
        };
        r.map_err(|e| format!("{op:?}: {e}"))?;
    }
    let range = mtr.commit().map_err(|e| e.to_string())?;
    Ok(range.expect("every op changes a page").end)
}

/// Validates the tree and reads every row.
fn read_tree(store: &PageStore, tree: &BTree) -> Result<(Model, usize), String> {
    let stats = tree.validate(store).map_err(|e| format!("validate: {e}"))?;
    let mut c = tree
        .cursor(store, Bound::Unbounded, Bound::Unbounded)
        .map_err(|e| e.to_string())?;
    let mut out = Model::new();
    while c.next().map_err(|e| e.to_string())?.is_some() {
        let row = c
            .row()
            .map_err(|e| e.to_string())?
            .ok_or("cursor lost its row")?;
        let key = row.values[0].as_deref().ok_or("NULL key")?;
        let key = u64::from_be_bytes(key.try_into().map_err(|_| "key of the wrong length")?);
        let v = row.values[1].clone().ok_or("NULL value")?;
        out.insert(key, (v, row.delete_marked));
    }
    Ok((out, stats.height))
}

// ---- wire format of mini-transaction contents --------------------------------

fn encode_ops(ops: &[Op]) -> String {
    ops.iter()
        .map(|op| match *op {
            Op::Insert { key, len, seed } => format!("I.{key}.{len}.{seed}"),
            Op::Update { key, len, seed } => format!("U.{key}.{len}.{seed}"),
            Op::Mark { key, marked } => format!("M.{key}.{}", u8::from(marked)),
            Op::Remove { key } => format!("R.{key}"),
        })
        .collect::<Vec<_>>()
        .join(";")
}

fn decode_ops(s: &str) -> Vec<Op> {
    s.split(';')
        .map(|op| {
            let f: Vec<&str> = op.split('.').collect();
            let n = |i: usize| -> u64 { f[i].parse().expect("number from our own child") };
            match f[0] {
                "I" => Op::Insert {
                    key: n(1),
                    len: n(2) as usize,
                    seed: n(3),
                },
                "U" => Op::Update {
                    key: n(1),
                    len: n(2) as usize,
                    seed: n(3),
                },
                "M" => Op::Mark {
                    key: n(1),
                    marked: n(2) == 1,
                },
                "R" => Op::Remove { key: n(1) },
                other => panic!("unknown op {other}"),
            }
        })
        .collect()
}

/// FNV-1a over every row.
fn digest(state: &Model) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for (k, (v, marked)) in state {
        eat(&k.to_be_bytes());
        eat(&(v.len() as u32).to_be_bytes());
        eat(v);
        eat(&[u8::from(*marked)]);
    }
    h
}

// ---- child ---------------------------------------------------------------------

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    // One write per line: a kill never leaves half a line behind that the
    // parent could mistake for a whole one (lines are far below PIPE_BUF,
    // and the parent ignores a final line without its newline).
    let _ = out.write_all(format!("{line}\n").as_bytes());
    let _ = out.flush();
}

fn child(dir: &Path, seed: u64, root: PageNo) -> ! {
    let fail = |what: &str, e: &dyn std::fmt::Display| -> ! {
        eprintln!("crash child: {what}: {e}");
        std::process::exit(3);
    };
    let (storage, _report) =
        Storage::open(io(), storage_config(dir)).unwrap_or_else(|e| fail("open", &e));
    let store = storage.store();
    let tree = open_tree(root);
    let (mut model, _) = read_tree(store, &tree).unwrap_or_else(|e| fail("read", &e));
    say(&format!("READY {}", digest(&model)));
    let mut rng = SmallRng::seed_from_u64(seed);
    for k in 0u64.. {
        let ops = gen_mtr(&mut rng, &model);
        say(&format!("MTR {k} {}", encode_ops(&ops)));
        let end = run_mtr(store, &tree, &ops).unwrap_or_else(|e| fail("mtr", &e));
        store
            .log
            .flush_up_to(end)
            .unwrap_or_else(|e| fail("flush", &e));
        say(&format!("ACK {k}"));
        apply_model(&mut model, &ops);
        match rng.gen_range(0..100) {
            0..=4 => drop(
                store
                    .pool
                    .flush_list_batch(rng.gen_range(1..8), Lsn::MAX)
                    .unwrap_or_else(|e| fail("flush pages", &e)),
            ),
            5 => storage
                .checkpoint_now()
                .unwrap_or_else(|e| fail("checkpoint", &e)),
            _ => {}
        }
    }
    unreachable!("the loop above only ends when the process is killed")
}

// ---- parent --------------------------------------------------------------------

/// What a killed child told us.
#[derive(Debug, Default)]
struct ChildLog {
    ready: Option<u64>,
    mtrs: Vec<Vec<Op>>,
    acked: usize,
}

fn parse_child(lines: &[String]) -> ChildLog {
    let mut log = ChildLog::default();
    for line in lines {
        let mut parts = line.splitn(3, ' ');
        match (parts.next(), parts.next(), parts.next()) {
            (Some("READY"), Some(d), None) => log.ready = Some(d.parse().expect("digest")),
            (Some("MTR"), Some(k), Some(ops)) => {
                assert_eq!(
                    k.parse::<usize>().expect("mtr number"),
                    log.mtrs.len(),
                    "mtrs out of order"
                );
                log.mtrs.push(decode_ops(ops));
            }
            (Some("ACK"), Some(k), None) => {
                assert_eq!(
                    k.parse::<usize>().expect("ack number"),
                    log.acked,
                    "acks out of order"
                );
                assert!(log.acked < log.mtrs.len(), "ack before its mtr");
                log.acked += 1;
            }
            _ => panic!("unexpected line from child: {line}"),
        }
    }
    assert!(
        log.mtrs.len() <= log.acked + 1,
        "more than one unacknowledged mtr"
    );
    log
}

/// How the parent kills a child.
#[derive(Clone, Copy, Debug)]
enum Kill {
    /// After this many acknowledgements, plus this many microseconds.
    AfterAcks(usize, u64),
    /// This many milliseconds after spawning (maybe mid-recovery).
    Early(u64),
}

fn run_child(exe: &Path, dir: &Path, seed: u64, root: PageNo, kill: Kill) -> Vec<String> {
    let mut child = Command::new(exe)
        .arg("--child")
        .arg(dir)
        .arg(seed.to_string())
        .arg(root.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        let mut line = String::new();
        // A line without its newline was cut by the kill: ignored.
        while r.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
            if line.ends_with('\n') && tx.send(line.trim_end().to_string()).is_err() {
                break;
            }
            line.clear();
        }
    });
    let started = Instant::now();
    let mut lines = Vec::new();
    match kill {
        Kill::Early(ms) => std::thread::sleep(Duration::from_millis(ms)),
        Kill::AfterAcks(n, extra_us) => {
            let mut acks = 0;
            while acks < n {
                let left = CYCLE_TIMEOUT.saturating_sub(started.elapsed());
                match rx.recv_timeout(left) {
                    Ok(l) => {
                        acks += usize::from(l.starts_with("ACK "));
                        lines.push(l);
                    }
                    Err(e) => {
                        let _ = child.kill();
                        panic!(
                            "child stopped reporting after {acks} acks ({e:?}); output {lines:?}"
                        );
                    }
                }
            }
            std::thread::sleep(Duration::from_micros(extra_us));
        }
    }
    child.kill().expect("SIGKILL");
    let status = child.wait().expect("wait for child");
    reader.join().expect("reader thread");
    lines.extend(rx.try_iter());
    assert_eq!(
        status.signal(),
        Some(9),
        "the child must die by SIGKILL, not exit on its own ({status}); output {lines:?}"
    );
    lines
}

fn apply_all(base: &Model, mtrs: &[Vec<Op>]) -> Model {
    let mut m = base.clone();
    for ops in mtrs {
        apply_model(&mut m, ops);
    }
    m
}

fn cycles_wanted() -> usize {
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if let Some(v) = a.strip_prefix("--cycles=") {
            return v.parse().expect("--cycles N");
        }
        if a == "--cycles" {
            return args
                .next()
                .and_then(|v| v.parse().ok())
                .expect("--cycles N");
        }
    }
    if let Some(n) = std::env::var("BASALT_CRASH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return n;
    }
    if cfg!(debug_assertions) {
        12
    } else {
        30
    }
}

fn crash_cycles(cycles: usize) {
    let seed = basalt_common::test_support::test_seed(TEST_NAME);
    eprintln!("{TEST_NAME}: {cycles} cycles");
    let mut rng = SmallRng::seed_from_u64(seed);
    let exe = std::env::current_exe().expect("test binary path");
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = storage_config(dir.path());
    let root = {
        let storage = Storage::create(io(), cfg.clone()).expect("create datadir");
        let path = dir.path().join("test").join("t1.ibd");
        storage
            .create_tablespace(SPACE, &path, 64)
            .expect("create tablespace");
        let mut mtr = Mtr::start(storage.store()).expect("mtr");
        let tree = BTree::create(&mut mtr, SPACE, INDEX, layout(), IndexKind::Clustered)
            .expect("create tree");
        mtr.commit_durable().expect("commit");
        storage.shutdown().expect("shutdown");
        tree.root()
    };
    let tree = open_tree(root);
    let mut candidates = vec![Model::new()];
    let (mut acked_total, mut verified, mut child_resolved, mut early, mut groups) =
        (0, 0, 0, 0, 0u64);
    let mut max_height = 0;
    let started = Instant::now();
    for cycle in 0..cycles {
        let what = format!("seed {seed} cycle {cycle}");
        let kill = if rng.gen_bool(0.25) {
            early += 1;
            Kill::Early(rng.gen_range(0..100))
        } else {
            Kill::AfterAcks(rng.gen_range(0..400), rng.gen_range(0..3000))
        };
        let lines = run_child(&exe, dir.path(), rng.gen(), root, kill);
        let log = parse_child(&lines);
        let base = match log.ready {
            Some(d) => {
                let found = candidates
                    .iter()
                    .find(|c| digest(c) == d)
                    .unwrap_or_else(|| {
                        panic!(
                            "{what}: the child recovered a state matching none of {} candidates",
                            candidates.len()
                        )
                    });
                if candidates.len() > 1 {
                    child_resolved += 1;
                }
                found.clone()
            }
            None => {
                assert!(log.mtrs.is_empty(), "{what}: mtrs before READY");
                continue;
            }
        };
        acked_total += log.acked;
        candidates = vec![apply_all(&base, &log.mtrs[..log.acked])];
        if log.mtrs.len() > log.acked {
            candidates.push(apply_all(&base, &log.mtrs));
        }
        if cycle % 4 == 3 && cycle + 1 < cycles {
            // The next child recovers this crash.
            continue;
        }
        let (storage, report) = Storage::open(io(), cfg.clone())
            .unwrap_or_else(|e| panic!("{what}: recovery failed: {e}"));
        groups += report.groups;
        let (state, height) = read_tree(storage.store(), &tree)
            .unwrap_or_else(|e| panic!("{what}: the recovered tree is broken: {e}"));
        max_height = max_height.max(height);
        let Some(pos) = candidates.iter().position(|c| *c == state) else {
            let acked = &candidates[0];
            let diff = acked
                .iter()
                .zip(state.iter())
                .find(|(a, b)| a != b)
                .map(|(a, b)| format!("first difference: expected key {} found key {}", a.0, b.0))
                .unwrap_or_else(|| format!("{} rows expected, {} found", acked.len(), state.len()));
            panic!(
                "{what}: recovered tree is neither the {} acknowledged mtrs nor those plus the one in flight \
                 (a lost acknowledged mtr or a partial one); {diff}; report {report:#?}",
                log.acked
            );
        };
        candidates = vec![candidates.swap_remove(pos)];
        verified += 1;
        storage.shutdown().expect("shutdown after check");
    }
    eprintln!(
        "{TEST_NAME}: {cycles} cycles in {:.1} s: {acked_total} acknowledged mtrs, {verified} recoveries checked here \
         ({groups} groups redone), {child_resolved} checked through the next child, {early} early kills; \
         {} rows at the end, tree height up to {max_height}",
        started.elapsed().as_secs_f64(),
        candidates[0].len()
    );
    assert!(
        verified >= cycles / 2,
        "too few recoveries were checked: {verified}"
    );
    assert!(acked_total > 0, "no mtr was ever acknowledged");
}

/// libtest-compatible entry point (`harness = false`): `--list`, name
/// filters and `--ignored` behave as for ordinary tests, so the suite can
/// run it with everything else.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        let dir = Path::new(&args[1]);
        let seed: u64 = args[2].parse().expect("child seed");
        let root: PageNo = args[3].parse().expect("root page");
        child(dir, seed, root);
    }
    if args.iter().any(|a| a == "--list") {
        println!("{TEST_NAME}: test");
        return;
    }
    const WITH_VALUE: &[&str] = &[
        "--cycles",
        "--test-threads",
        "--skip",
        "--format",
        "--color",
        "--logfile",
        "--shuffle-seed",
        "-Z",
    ];
    let mut filters = Vec::new();
    let mut skips = Vec::new();
    let (mut exact, mut only_ignored) = (false, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--exact" => exact = true,
            "--ignored" => only_ignored = true,
            "--skip" => skips.extend(it.next().cloned()),
            s if WITH_VALUE.contains(&s) => {
                it.next();
            }
            s if s.starts_with('-') => {}
            s => filters.push(s.to_string()),
        }
    }
    let matches = |f: &String| {
        if exact {
            f == TEST_NAME
        } else {
            TEST_NAME.contains(f.as_str())
        }
    };
    let selected = !only_ignored
        && (filters.is_empty() || filters.iter().any(matches))
        && !skips.iter().any(|s| TEST_NAME.contains(s.as_str()));
    if !selected {
        println!("\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 1 filtered out\n");
        return;
    }
    println!("\nrunning 1 test");
    crash_cycles(cycles_wanted());
    println!("test {TEST_NAME} ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n");
}
