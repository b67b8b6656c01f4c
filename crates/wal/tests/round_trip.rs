//! Appends from many threads come back from recovery byte for byte, in LSN
//! order; file validation refuses mismatched files.

mod common;

use std::sync::Arc;

use basalt_common::Lsn;
use basalt_io::{Io, MemIo, OpenOptions};
use basalt_wal::format::{
    block_of, block_start, BlockHeader, LogGeometry, BLOCKS_PER_UNIT, FILE_HEADER_SIZE,
};
use basalt_wal::{Log, LogError, LsnRange, BLOCK_PAYLOAD, BLOCK_SIZE, LOG_START_LSN};
use common::*;
use rand::Rng;

fn run_writers(
    log: &Arc<Log>,
    threads: usize,
    groups: usize,
    max_len: usize,
    seed_rng: &mut rand::rngs::SmallRng,
) -> Vec<(LsnRange, Vec<u8>)> {
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let log = log.clone();
            let mut rng: rand::rngs::SmallRng = rand::SeedableRng::seed_from_u64(seed_rng.gen());
            std::thread::spawn(move || {
                let mut mine = Vec::with_capacity(groups);
                for _ in 0..groups {
                    let len = rng.gen_range(1..=max_len);
                    let bytes = group_bytes(&mut rng, len);
                    let r = append_closed(&log, &bytes);
                    mine.push((r, bytes));
                }
                mine
            })
        })
        .collect();
    handles
        .into_iter()
        .flat_map(|h| h.join().expect("writer thread panicked"))
        .collect()
}

#[test]
fn concurrent_appends_come_back_in_lsn_order() {
    let mut rng = seeded_rng("concurrent_appends_come_back_in_lsn_order");
    let mem = Arc::new(MemIo::new());
    let cfg = config(&dir(), 8, 2, 1024);
    let start = Lsn(LOG_START_LSN.get() + rng.gen_range(0..1000));
    let log = Log::create(mem.clone(), &cfg, start).expect("create");
    let groups = run_writers(&log, 6, 400, 3000, &mut rng);
    let end = log.current_lsn();
    assert_eq!(log.closed_lsn(), end, "every group was closed");
    log.flush_up_to(end).expect("flush");
    assert!(log.flushed_lsn() >= end);
    drop(log);
    // Only what was fsynced survives; all of it must be there.
    mem.crash();

    let mut scan = Log::open_for_recovery(mem.clone(), &cfg).expect("open for recovery");
    assert_eq!(scan.checkpoint_lsn(), start);
    let (from, bytes) = scan_all(&mut scan);
    assert_eq!(scan.scanned_lsn(), end);
    assert_eq!(scan.end(), Some(basalt_wal::ScanEnd::Tail));
    let want = stream_from(&groups, from, end);
    assert_same_stream(&bytes, &want, from);

    // Every block's first_group field points at the first group start in
    // that block (or is 0 when a group covers the whole block).
    let geometry = LogGeometry::new(cfg.file_size, cfg.files_in_group);
    let mut starts: Vec<u64> = groups.iter().map(|(r, _)| r.start.get()).collect();
    starts.push(end.get());
    starts.sort_unstable();
    let file0 = mem.file_bytes(&dir().join("ib_logfile0")).expect("file 0");
    let file1 = mem.file_bytes(&dir().join("ib_logfile1")).expect("file 1");
    let mut checked = 0;
    for b in block_of(start.get()) + 1..block_of(end.get()) {
        let (file, off) =
            geometry.ring_offset_to_file((b % geometry.ring_blocks) * BLOCK_SIZE as u64);
        let data = if file == 0 { &file0 } else { &file1 };
        let h = BlockHeader::decode(&data[off as usize..off as usize + BLOCK_SIZE])
            .expect("valid block");
        let (lo, hi) = (block_start(b), block_start(b) + BLOCK_PAYLOAD as u64);
        let want = starts
            .iter()
            .find(|&&s| s >= lo && s < hi)
            .map_or(0, |&s| 16 + (s - lo) as u16);
        assert_eq!(h.first_group, want, "first_group of block {b}");
        checked += 1;
    }
    assert!(checked > 100);

    // Resuming at the end continues the stream.
    let log = scan.into_log(end).expect("resume");
    assert_eq!(log.current_lsn(), end);
    let more = append_closed(&log, b"after restart");
    assert_eq!(more.start, end);
    log.shutdown().expect("shutdown");
    drop(log);
    mem.crash();
    let mut scan = Log::open_for_recovery(mem, &cfg).expect("reopen");
    let (_, bytes2) = scan_all(&mut scan);
    assert_same_stream(&bytes2[..bytes.len()], &bytes, from);
    assert_eq!(&bytes2[bytes.len()..], b"after restart");
}

#[test]
fn groups_larger_than_the_log_buffer_are_copied_in_pieces() {
    let mut rng = seeded_rng("groups_larger_than_the_log_buffer_are_copied_in_pieces");
    let mem = Arc::new(MemIo::new());
    // 1 MiB buffer; max group = max_age / 16, about 3 MiB with 2 x 24 MiB.
    let cfg = config(&dir(), 24, 2, 1024);
    let log = Log::create(mem.clone(), &cfg, LOG_START_LSN).expect("create");
    assert!(
        log.max_group_size() > 2 << 20,
        "max group {}",
        log.max_group_size()
    );
    let big_len = (2 << 20) + 12_345;
    let big_log = log.clone();
    let mut big_rng: rand::rngs::SmallRng = rand::SeedableRng::seed_from_u64(rng.gen());
    let big = std::thread::spawn(move || {
        (0..3)
            .map(|_| {
                let bytes = group_bytes(&mut big_rng, big_len);
                (append_closed(&big_log, &bytes), bytes)
            })
            .collect::<Vec<_>>()
    });
    let mut groups = run_writers(&log, 3, 200, 2000, &mut rng);
    groups.extend(big.join().expect("big appender panicked"));
    let end = log.current_lsn();
    log.shutdown().expect("shutdown");
    drop(log);
    mem.crash();
    let mut scan = Log::open_for_recovery(mem, &cfg).expect("open");
    let (from, bytes) = scan_all(&mut scan);
    assert_same_stream(&bytes, &stream_from(&groups, from, end), from);
}

#[test]
fn oversized_groups_are_refused_and_empty_ones_reserve_nothing() {
    let mem = Arc::new(MemIo::new());
    let cfg = config(&dir(), 4, 2, 1024);
    let log = Log::create(mem, &cfg, LOG_START_LSN).expect("create");
    let max = log.max_group_size();
    assert_eq!(max, log.max_checkpoint_age() / 16);
    let too_big = vec![7u8; max as usize + 1];
    match log.append(&too_big) {
        Err(LogError::GroupTooLarge { len, max: m }) => {
            assert_eq!(len, max + 1);
            assert_eq!(m, max);
        }
        other => panic!("expected GroupTooLarge, got {other:?}"),
    }
    assert_eq!(
        log.current_lsn(),
        LOG_START_LSN,
        "a refused group reserves nothing"
    );
    let empty = log.append(&[]).expect("empty append");
    assert!(empty.is_empty());
    log.mark_closed(empty);
    let fits = vec![1u8; max as usize];
    let r = append_closed(&log, &fits);
    assert_eq!(r.len(), max);
    assert_eq!(log.closed_lsn(), r.end);
}

#[test]
fn geometry_and_water_marks_follow_the_documented_formulas() {
    let mem = Arc::new(MemIo::new());
    let cfg = config(&dir(), 4, 3, 1024);
    let log = Log::create(mem, &cfg, LOG_START_LSN).expect("create");
    let ring_blocks = 3 * ((4u64 << 20) - FILE_HEADER_SIZE) / 512;
    assert_eq!(log.geometry().ring_blocks, ring_blocks);
    assert_eq!(log.capacity(), ring_blocks * 492);
    let u = log.capacity() - 2 * BLOCKS_PER_UNIT * 492;
    assert_eq!(log.max_checkpoint_age(), u);
    assert_eq!(log.async_water_mark(), u - u / 8);
    assert_eq!(log.sync_water_mark(), u - u / 16);
    assert!(log.async_water_mark() < log.sync_water_mark());
    assert_eq!(log.lsn_to_ring_offset(Lsn(492 * 5 + 7)), 5 * 512 + 16 + 7);
}

#[test]
fn files_are_validated_against_the_configuration() {
    let mem = Arc::new(MemIo::new());
    let cfg = config(&dir(), 4, 2, 1024);
    let log = Log::create(mem.clone(), &cfg, LOG_START_LSN).expect("create");
    for i in 0..2 {
        let bytes = mem
            .durable_bytes(&dir().join(format!("ib_logfile{i}")))
            .expect("file exists");
        assert_eq!(
            bytes.len() as u64,
            cfg.file_size,
            "preallocated to full size"
        );
    }
    assert!(
        mem.dir_syncs() >= 1,
        "the directory is fsynced after creating the files"
    );
    let r = append_closed(&log, b"some redo");
    log.shutdown().expect("shutdown");
    drop(log);

    match Log::create(mem.clone(), &cfg, LOG_START_LSN) {
        Err(LogError::FilesExist { path }) => assert!(path.ends_with("ib_logfile0")),
        other => panic!("expected FilesExist, got {other:?}"),
    }
    let option_of = |cfg: &basalt_wal::LogConfig| match Log::open_for_recovery(mem.clone(), cfg) {
        Err(LogError::FilesMismatch { option, .. }) => option,
        other => panic!("expected FilesMismatch, got {other:?}"),
    };
    assert_eq!(
        option_of(&config(&dir(), 4, 3, 1024)),
        "innodb_log_files_in_group"
    );
    assert_eq!(
        option_of(&config(&dir(), 8, 2, 1024)),
        "innodb_log_file_size"
    );

    // Redo after the checkpoint: a plain open refuses.
    match Log::open(mem.clone(), &cfg) {
        Err(LogError::RecoveryNeeded { checkpoint, end }) => {
            assert_eq!(checkpoint, LOG_START_LSN);
            assert_eq!(end, r.end);
        }
        other => panic!("expected RecoveryNeeded, got {other:?}"),
    }
    // After a checkpoint at the end, it opens and continues at that LSN.
    let mut scan = Log::open_for_recovery(mem.clone(), &cfg).expect("scan");
    scan_all(&mut scan);
    let log = scan.into_log(r.end).expect("resume");
    log.write_checkpoint(r.end).expect("checkpoint");
    log.shutdown().expect("shutdown");
    drop(log);
    let log = Log::open(mem.clone(), &cfg).expect("clean open");
    assert_eq!(log.current_lsn(), r.end);
    assert_eq!(log.checkpoint_lsn(), r.end);
    assert_eq!(
        log.epoch(),
        3,
        "create, resume and open each start a new epoch"
    );
    log.shutdown().expect("shutdown");
    drop(log);

    // A file of the wrong size, or a missing file.
    let f1 = mem
        .open(&dir().join("ib_logfile1"), OpenOptions::default())
        .expect("open");
    f1.set_len(cfg.file_size + 4096).expect("grow");
    f1.sync().expect("sync");
    assert_eq!(option_of(&cfg), "innodb_log_file_size");
    mem.remove_file(&dir().join("ib_logfile1")).expect("remove");
    assert_eq!(option_of(&cfg), "innodb_log_files_in_group");
}

#[test]
fn a_damaged_file_header_is_reported_as_corruption() {
    let mem = Arc::new(MemIo::new());
    let cfg = config(&dir(), 4, 2, 1024);
    let log = Log::create(mem.clone(), &cfg, LOG_START_LSN).expect("create");
    log.shutdown().expect("shutdown");
    drop(log);
    let f = mem
        .open(&dir().join("ib_logfile1"), OpenOptions::default())
        .expect("open");
    f.write_at(&[0xff; 8], 100).expect("damage");
    let err = Log::open_for_recovery(mem, &cfg).expect_err("damaged header");
    assert!(err.is_corruption(), "{err}");
}

/// Delegates to `MemIo` but opens every file with O_DIRECT, which `MemIo`
/// enforces: any log read or write whose offset or length is not a
/// multiple of 4 KiB fails.
#[derive(Debug)]
struct DirectOnly(Arc<MemIo>);

impl Io for DirectOnly {
    fn kind(&self) -> basalt_io::IoKind {
        self.0.kind()
    }
    fn open(
        &self,
        path: &std::path::Path,
        opts: OpenOptions,
    ) -> basalt_io::IoResult<basalt_io::FileRef> {
        let f = self.0.open(
            path,
            OpenOptions {
                direct: true,
                ..opts
            },
        )?;
        assert!(f.is_direct());
        Ok(f)
    }
    fn exists(&self, path: &std::path::Path) -> bool {
        self.0.exists(path)
    }
    fn remove_file(&self, path: &std::path::Path) -> basalt_io::IoResult<()> {
        self.0.remove_file(path)
    }
    fn create_dir_all(&self, path: &std::path::Path) -> basalt_io::IoResult<()> {
        self.0.create_dir_all(path)
    }
    fn sync_dir(&self, path: &std::path::Path) -> basalt_io::IoResult<()> {
        self.0.sync_dir(path)
    }
    fn run_batch(
        &self,
        requests: &mut [basalt_io::IoRequest],
        on_complete: &mut dyn FnMut(usize, &mut basalt_io::IoRequest, basalt_io::IoResult<()>),
    ) {
        self.0.run_batch(requests, on_complete)
    }
}

#[test]
fn all_log_io_is_aligned_for_o_direct() {
    let mut rng = seeded_rng("all_log_io_is_aligned_for_o_direct");
    let mem = Arc::new(MemIo::new());
    let io: Arc<dyn Io> = Arc::new(DirectOnly(mem.clone()));
    let cfg = config(&dir(), 4, 2, 1024);
    let log = Log::create(io.clone(), &cfg, Lsn(LOG_START_LSN.get() + 333)).expect("create");
    let groups = run_writers(&log, 3, 200, 5000, &mut rng);
    let end = log.current_lsn();
    log.flush_up_to(end).expect("flush");
    log.write_checkpoint(groups[groups.len() / 2].0.start.min(log.closed_lsn()))
        .expect("checkpoint");
    log.shutdown().expect("shutdown");
    drop(log);
    mem.crash();
    let mut scan = Log::open_for_recovery(io, &cfg).expect("open");
    let (from, bytes) = scan_all(&mut scan);
    assert_same_stream(&bytes, &stream_from(&groups, from, end), from);
    let log = scan.into_log(end).expect("resume");
    append_closed(&log, b"still aligned");
    log.shutdown().expect("shutdown");
}

/// Holds every write of the log files until opened.
#[derive(Debug, Default)]
struct Gate {
    closed: std::sync::Mutex<bool>,
    cond: std::sync::Condvar,
    held: std::sync::atomic::AtomicUsize,
}

impl Gate {
    fn set(&self, closed: bool) {
        *self.closed.lock().expect("gate lock") = closed;
        self.cond.notify_all();
    }

    fn pass(&self) {
        let mut closed = self.closed.lock().expect("gate lock");
        if *closed {
            self.held.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            while *closed {
                closed = self.cond.wait(closed).expect("gate wait");
            }
            self.held.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

#[derive(Debug)]
struct GatedFile {
    inner: basalt_io::FileRef,
    gate: Arc<Gate>,
}

impl basalt_io::IoFile for GatedFile {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> basalt_io::IoResult<()> {
        self.inner.read_at(buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> basalt_io::IoResult<()> {
        self.gate.pass();
        self.inner.write_at(buf, offset)
    }
    fn sync(&self) -> basalt_io::IoResult<()> {
        self.inner.sync()
    }
    fn len(&self) -> basalt_io::IoResult<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> basalt_io::IoResult<()> {
        self.inner.set_len(len)
    }
    fn is_direct(&self) -> bool {
        self.inner.is_direct()
    }
    fn path(&self) -> &std::path::Path {
        self.inner.path()
    }
}

#[derive(Debug)]
struct GatedIo {
    inner: Arc<MemIo>,
    gate: Arc<Gate>,
}

impl Io for GatedIo {
    fn kind(&self) -> basalt_io::IoKind {
        self.inner.kind()
    }
    fn open(
        &self,
        path: &std::path::Path,
        opts: OpenOptions,
    ) -> basalt_io::IoResult<basalt_io::FileRef> {
        Ok(Arc::new(GatedFile {
            inner: self.inner.open(path, opts)?,
            gate: self.gate.clone(),
        }))
    }
    fn exists(&self, path: &std::path::Path) -> bool {
        self.inner.exists(path)
    }
    fn remove_file(&self, path: &std::path::Path) -> basalt_io::IoResult<()> {
        self.inner.remove_file(path)
    }
    fn create_dir_all(&self, path: &std::path::Path) -> basalt_io::IoResult<()> {
        self.inner.create_dir_all(path)
    }
    fn sync_dir(&self, path: &std::path::Path) -> basalt_io::IoResult<()> {
        self.inner.sync_dir(path)
    }
    fn run_batch(
        &self,
        requests: &mut [basalt_io::IoRequest],
        on_complete: &mut dyn FnMut(usize, &mut basalt_io::IoRequest, basalt_io::IoResult<()>),
    ) {
        self.inner.run_batch(requests, on_complete)
    }
}

#[test]
fn an_append_that_does_not_fit_waits_for_the_writer_and_is_counted() {
    let mut rng = seeded_rng("an_append_that_does_not_fit_waits_for_the_writer_and_is_counted");
    let mem = Arc::new(MemIo::new());
    let gate = Arc::new(Gate::default());
    let io: Arc<dyn Io> = Arc::new(GatedIo {
        inner: mem.clone(),
        gate: gate.clone(),
    });
    let cfg = config(&dir(), 24, 2, 1024);
    let log = Log::create(io, &cfg, LOG_START_LSN).expect("create");
    gate.set(true);
    // Two and a half times the buffer: the writer can free one buffer's
    // worth before its write blocks at the gate, so the append must wait.
    let big = group_bytes(&mut rng, (5 << 20) / 2);
    let appender = {
        let (log, big) = (log.clone(), big.clone());
        std::thread::spawn(move || append_closed(&log, &big))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while log.stats().waits == 0 || gate.held.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the append never waited: {:?}",
            log.stats()
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(
        !appender.is_finished(),
        "the append cannot finish while the writer is stuck"
    );
    assert_eq!(
        log.written_lsn(),
        LOG_START_LSN,
        "nothing was written through the closed gate"
    );
    gate.set(false);
    let r = appender.join().expect("appender panicked");
    assert!(log.stats().waits >= 1);
    log.shutdown().expect("shutdown");
    drop(log);
    mem.crash();
    let mut scan = Log::open_for_recovery(mem, &cfg).expect("open");
    let (from, bytes) = scan_all(&mut scan);
    assert_same_stream(&bytes, &stream_from(&[(r, big)], from, r.end), from);
}
