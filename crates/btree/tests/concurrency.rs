//! Concurrency: readers against a writer that reshapes the tree, and
//! writers on disjoint keys of one tree. Every thread reports to the main
//! thread, which fails the test if they do not all finish in time (a
//! deadlock watchdog).

mod support;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use basalt_btree::{BTreeError, IndexKind, Row};
use basalt_mtr::{Mtr, Storage};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use support::*;

/// key -> (short value, long value, delete mark).
type WriterModel = BTreeMap<u64, (Vec<u8>, Option<Vec<u8>>, bool)>;

/// How long the threads of one test may take before it counts as hung.
const WATCHDOG: Duration = Duration::from_secs(120);

/// Values that encode their key and version, so a reader can tell a
/// committed version from garbage.
fn row_values(
    key: u64,
    version: u64,
    small_len: usize,
    big_len: Option<usize>,
) -> (Vec<u8>, Option<Vec<u8>>) {
    let mut small = key.to_be_bytes().to_vec();
    small.extend_from_slice(&version.to_be_bytes());
    small.extend(value(key, version, small_len));
    (small, big_len.map(|n| value(key ^ 0x5555, version, n)))
}

/// Checks a row read by a reader; returns its key.
fn check_row(row: &Row) -> Result<u64, String> {
    let key_b = row.values[0].as_ref().ok_or("NULL key")?;
    let key = u64::from_be_bytes(key_b[..8].try_into().map_err(|_| "key length")?);
    if key_b[..] != wide_key(key)[..] {
        return Err(format!("key {key}: damaged key bytes"));
    }
    let small = row.values[1].as_ref().ok_or("NULL small")?;
    if small.len() < 16 || small[..8] != key_b[..8] {
        return Err(format!("key {key}: small value does not encode the key"));
    }
    let version = u64::from_be_bytes(small[8..16].try_into().unwrap());
    if small[16..] != value(key, version, small.len() - 16)[..] {
        return Err(format!("key {key}: small value is not version {version}"));
    }
    if let Some(big) = &row.values[2] {
        if big[..] != value(key ^ 0x5555, version, big.len())[..] {
            return Err(format!(
                "key {key}: long value of {} bytes is not version {version}",
                big.len()
            ));
        }
    }
    Ok(key)
}

fn writer_sizes(rng: &mut SmallRng) -> (usize, Option<usize>) {
    let small = rng.gen_range(0..180);
    let big = match rng.gen_range(0..100) {
        0..=39 => None,
        40..=84 => Some(rng.gen_range(0..800)),
        85..=97 => Some(rng.gen_range(800..6000)),
        _ => Some(rng.gen_range(17_000..60_000)),
    };
    (small, big)
}

fn watch(rx: &mpsc::Receiver<Result<String, String>>, threads: usize) {
    for _ in 0..threads {
        match rx.recv_timeout(WATCHDOG) {
            Ok(Ok(msg)) => eprintln!("{msg}"),
            Ok(Err(e)) => panic!("{e}"),
            Err(_) => panic!("threads did not finish within {WATCHDOG:?}: deadlock suspected"),
        }
    }
}

#[test]
fn readers_see_committed_versions_in_order_while_a_writer_reshapes_the_tree() {
    let seed = seed("readers_and_writer");
    let n_ops = ops(6000);
    let s = Arc::new(storage(8 << 20));
    let tree = create_tree(&s, 21, wide_key_layout(), IndexKind::Clustered);
    const KEYS: u64 = 3000;
    let done = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let (tx, rx) = mpsc::channel();

    let writer = {
        let (s, tree, done, tx) = (Arc::clone(&s), tree.clone(), Arc::clone(&done), tx.clone());
        std::thread::spawn(move || {
            let res = (|| -> Result<String, String> {
                let store = s.store();
                let mut rng = SmallRng::seed_from_u64(seed);
                let mut live: BTreeMap<u64, u64> = BTreeMap::new();
                for op in 0..n_ops {
                    let k = rng.gen_range(0..KEYS);
                    let kb = wide_key(k);
                    let version = op as u64 + 1;
                    let (sl, bl) = writer_sizes(&mut rng);
                    let (small, big) = row_values(k, version, sl, bl);
                    let vals = [Some(&kb[..]), Some(&small[..]), big.as_deref()];
                    let mut mtr = Mtr::start(store).map_err(|e| e.to_string())?;
                    // Grow for the first half, shrink in the second.
                    let grow = op < n_ops / 2;
                    let r = if !live.contains_key(&k) && (grow || rng.gen_bool(0.2)) {
                        live.insert(k, version);
                        tree.insert(&mut mtr, &vals, sys(version))
                    } else if live.contains_key(&k) && rng.gen_bool(if grow { 0.6 } else { 0.2 }) {
                        live.insert(k, version);
                        tree.update(&mut mtr, &[Some(&kb)], &vals, sys(version))
                    } else if live.remove(&k).is_some() {
                        tree.remove(&mut mtr, &[Some(&kb)])
                    } else {
                        Ok(())
                    };
                    r.map_err(|e| format!("seed {seed} writer op {op}: {e}"))?;
                    mtr.commit().map_err(|e| e.to_string())?;
                }
                let stats = tree
                    .validate(store)
                    .map_err(|e| format!("seed {seed}: validate: {e}"))?;
                if stats.records != live.len() as u64 {
                    return Err(format!(
                        "seed {seed}: {} records, writer model {}",
                        stats.records,
                        live.len()
                    ));
                }
                // Empty the tree while the readers run: the height falls.
                let mut keys: Vec<u64> = live.keys().copied().collect();
                for i in (1..keys.len()).rev() {
                    keys.swap(i, rng.gen_range(0..=i));
                }
                for k in keys {
                    let mut mtr = Mtr::start(store).map_err(|e| e.to_string())?;
                    tree.remove(&mut mtr, &[Some(&wide_key(k))])
                        .map_err(|e| format!("seed {seed}: final remove of {k}: {e}"))?;
                    mtr.commit().map_err(|e| e.to_string())?;
                }
                let end = tree
                    .validate(store)
                    .map_err(|e| format!("seed {seed}: validate: {e}"))?;
                if end.records != 0 || end.height != 1 {
                    return Err(format!("seed {seed}: emptied tree is {end:?}"));
                }
                Ok(format!("writer: {stats:?} {:?}", tree.counters()))
            })();
            done.store(true, Ordering::Release);
            let _ = tx.send(res);
        })
    };

    let mut readers = Vec::new();
    for r in 0..3u64 {
        let (s, tree, done, reads, tx) = (
            Arc::clone(&s),
            tree.clone(),
            Arc::clone(&done),
            Arc::clone(&reads),
            tx.clone(),
        );
        readers.push(std::thread::spawn(move || {
            let res = (|| -> Result<String, String> {
                let store = s.store();
                let mut rng = SmallRng::seed_from_u64(seed ^ (r + 1));
                let mut n = 0u64;
                while !done.load(Ordering::Acquire) {
                    let k = rng.gen_range(0..KEYS);
                    let kb = wide_key(k);
                    match rng.gen_range(0..3) {
                        0 => {
                            if let Some(row) = tree
                                .get_row(store, &[Some(&kb)])
                                .map_err(|e| e.to_string())?
                            {
                                if check_row(&row)? != k {
                                    return Err(format!("get {k} returned another key"));
                                }
                            }
                        }
                        which => {
                            let forward = which == 1;
                            let (lo, hi) = if forward {
                                (Bound::Included(&[Some(&kb[..])][..]), Bound::Unbounded)
                            } else {
                                (Bound::Unbounded, Bound::Included(&[Some(&kb[..])][..]))
                            };
                            let mut c = tree.cursor(store, lo, hi).map_err(|e| e.to_string())?;
                            let mut last: Option<u64> = None;
                            for step in 0..rng.gen_range(1..120) {
                                let got = if forward { c.next() } else { c.prev() };
                                if got.map_err(|e| e.to_string())?.is_none() {
                                    break;
                                }
                                let row = c.row().map_err(|e| e.to_string())?.ok_or("no row")?;
                                let key = check_row(&row)?;
                                if let Some(l) = last {
                                    let ordered = if forward { key > l } else { key < l };
                                    if !ordered {
                                        return Err(format!(
                                            "scan forward={forward} saw {key} after {l}"
                                        ));
                                    }
                                }
                                if (forward && key < k) || (!forward && key > k) {
                                    return Err(format!(
                                        "scan from {k} forward={forward} saw {key}"
                                    ));
                                }
                                last = Some(key);
                                if step % 17 == 16 {
                                    // Upper layers release latches between rows.
                                    c.save().map_err(|e| e.to_string())?;
                                    std::thread::yield_now();
                                }
                            }
                        }
                    }
                    n += 1;
                }
                reads.fetch_add(n, Ordering::Relaxed);
                Ok(format!("reader {r}: {n} reads"))
            })();
            let _ = tx.send(res);
        }));
    }
    drop(tx);
    watch(&rx, 4);
    writer.join().unwrap();
    for r in readers {
        r.join().unwrap();
    }
    assert!(reads.load(Ordering::Relaxed) > 0);
    let c = tree.counters();
    assert!(
        c.splits > 0 && c.merges > 0,
        "seed {seed}: the writer must split and merge: {c:?}"
    );
    assert!(
        c.root_raises > 0 && c.root_lowers > 0,
        "seed {seed}: the height must rise and fall: {c:?}"
    );
}

#[test]
fn writers_on_disjoint_keys_build_the_union_of_their_models() {
    let seed = seed("disjoint_writers");
    let n_ops = ops(4000);
    const THREADS: u64 = 4;
    const KEYS: u64 = 4000;
    let s = Arc::new(storage(8 << 20));
    let tree = create_tree(&s, 22, wide_key_layout(), IndexKind::Clustered);
    let (tx, rx) = mpsc::channel();
    let mut handles = Vec::new();
    for t in 0..THREADS {
        let (s, tree, tx) = (Arc::clone(&s), tree.clone(), tx.clone());
        handles.push(std::thread::spawn(move || {
            let res = (|| -> Result<WriterModel, String> {
                let store = s.store();
                let mut rng = SmallRng::seed_from_u64(seed.wrapping_add(t));
                let mut model = WriterModel::new();
                for op in 0..n_ops {
                    // Interleaved ownership: neighbouring keys belong to
                    // different threads, so they share leaves.
                    let k = rng.gen_range(0..KEYS / THREADS) * THREADS + t;
                    let kb = wide_key(k);
                    let version = (op as u64 + 1) * THREADS + t;
                    let (sl, bl) = writer_sizes(&mut rng);
                    let (small, big) = row_values(k, version, sl, bl);
                    let vals = [Some(&kb[..]), Some(&small[..]), big.as_deref()];
                    let fail = |what: &str, e: BTreeError| {
                        format!("seed {seed} thread {t} op {op} {what} {k}: {e}")
                    };
                    let mut mtr = Mtr::start(store).map_err(|e| e.to_string())?;
                    let shrink = op > n_ops * 2 / 3;
                    match (model.contains_key(&k), rng.gen_range(0..10)) {
                        (false, 0..=6) if !shrink => {
                            tree.insert(&mut mtr, &vals, sys(version))
                                .map_err(|e| fail("insert", e))?;
                            model.insert(k, (small, big, false));
                        }
                        (true, 0..=2) if !shrink => {
                            tree.update(&mut mtr, &[Some(&kb)], &vals, sys(version))
                                .map_err(|e| fail("update", e))?;
                            let marked = model[&k].2;
                            model.insert(k, (small, big, marked));
                        }
                        (true, 3) => {
                            let m = rng.gen_bool(0.5);
                            tree.delete_mark(&mut mtr, &[Some(&kb)], m, sys(version))
                                .map_err(|e| fail("mark", e))?;
                            model.get_mut(&k).unwrap().2 = m;
                        }
                        (true, _) => {
                            tree.remove(&mut mtr, &[Some(&kb)])
                                .map_err(|e| fail("remove", e))?;
                            model.remove(&k);
                        }
                        (false, _) => match tree.remove(&mut mtr, &[Some(&kb)]) {
                            Err(BTreeError::KeyNotFound { .. }) => {}
                            other => {
                                return Err(format!(
                                    "seed {seed} thread {t}: remove of absent {k}: {other:?}"
                                ))
                            }
                        },
                    }
                    mtr.commit().map_err(|e| e.to_string())?;
                }
                Ok(model)
            })();
            let _ = tx.send(res);
        }));
    }
    drop(tx);
    let mut union = BTreeMap::new();
    for _ in 0..THREADS {
        match rx.recv_timeout(WATCHDOG) {
            Ok(Ok(m)) => union.extend(m),
            Ok(Err(e)) => panic!("{e}"),
            Err(_) => panic!("writers did not finish within {WATCHDOG:?}: deadlock suspected"),
        }
    }
    for h in handles {
        h.join().unwrap();
    }
    let store = s.store();
    let stats = tree
        .validate(store)
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    let rows = rows_all(store, &tree);
    assert_eq!(rows.len(), union.len(), "seed {seed}");
    for (row, (k, (small, big, marked))) in rows.iter().zip(&union) {
        assert_eq!(
            row.values[0].as_deref(),
            Some(&wide_key(*k)[..]),
            "seed {seed}"
        );
        assert_eq!(row.values[1].as_ref(), Some(small), "seed {seed}: key {k}");
        assert_eq!(&row.values[2], big, "seed {seed}: key {k}");
        assert_eq!(row.delete_marked, *marked, "seed {seed}: key {k}");
    }
    let c = tree.counters();
    eprintln!("disjoint writers: {stats:?} {c:?}");
    assert!(c.splits > 0 && c.pessimistic > 0, "seed {seed}: {c:?}");
    drop(tree);
    if let Ok(s) = Arc::try_unwrap(s) {
        Storage::shutdown(s).unwrap();
    }
}
