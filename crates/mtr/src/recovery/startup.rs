//! The recovery sequence (steps 1-10 of the module note), from the log
//! files to a running log and a pool of recovered pages.

use std::sync::Arc;
use std::time::{Duration, Instant};

use basalt_buf::{recover_torn_pages, BufError, BufferPool};
use basalt_common::layout::REDO_LOG_FILE_PREFIX;
use basalt_io::{Io, OpenOptions};
use basalt_wal::{Log, LogConfig, LogGeometry};
use tracing::{info, warn};

use super::apply::Applier;
use super::discover;
use super::gate::StartupGate;
use super::hash::RecoveryHash;
use super::parse::GroupParser;
use super::progress::{Phase, Progress};
use super::reader::ScanReader;
use super::report::RecoveryReport;
use crate::error::MtrResult;
use crate::storage::StorageConfig;

/// Default `recovery_memory`: bytes the recovery hash may hold before it is
/// applied as a batch.
pub const DEFAULT_RECOVERY_MEMORY: usize = 2 << 30;
/// Smallest accepted `recovery_memory` (smaller values are raised to it).
pub const MIN_RECOVERY_MEMORY: usize = 64 << 10;

/// A recovered data directory, ready to be wired into a running storage.
#[derive(Debug)]
pub(crate) struct Recovered {
    pub(crate) pool: Arc<BufferPool>,
    pub(crate) log: Arc<Log>,
    pub(crate) report: RecoveryReport,
}

/// Fsyncs every log file, so redo a killed process left in the OS cache is
/// durable before recovery writes pages that depend on it.
fn sync_log_files(io: &Arc<dyn Io>, cfg: &LogConfig) -> MtrResult<()> {
    for i in 0..cfg.files_in_group {
        let path = cfg.dir.join(format!("{REDO_LOG_FILE_PREFIX}{i}"));
        if !io.exists(&path) {
            // Log::open_for_recovery reports the missing file precisely.
            continue;
        }
        let file = io
            .open(
                &path,
                OpenOptions {
                    create: false,
                    direct: false,
                },
            )
            .map_err(BufError::from)?;
        file.sync().map_err(BufError::from)?;
    }
    Ok(())
}

/// Runs crash recovery on the data directory of `config` (steps 1-10 of
/// the module note).
pub(crate) fn recover(io: &Arc<dyn Io>, config: &StorageConfig) -> MtrResult<Recovered> {
    let started = Instant::now();
    info!(datadir = %config.datadir.display(), backend = ?io.kind(), "starting crash recovery");
    sync_log_files(io, &config.log)?;

    let files = discover::discover(io, config)?;
    let torn_pages_repaired = {
        let spaces = discover::open_spaces(io, config, &files, false)?;
        recover_torn_pages(&spaces)?
    };
    if !torn_pages_repaired.is_empty() {
        warn!(
            pages = ?torn_pages_repaired,
            "{} torn pages restored from the doublewrite area",
            torn_pages_repaired.len()
        );
    }
    let spaces = Arc::new(discover::open_spaces(io, config, &files, true)?);

    let scan = Log::open_for_recovery(Arc::clone(io), &config.log)?;
    let checkpoint = scan.checkpoint_lsn();
    let gate = Arc::new(StartupGate::new(checkpoint));
    let pool = BufferPool::new(config.buf.clone(), spaces, gate.clone())?;
    let budget = config.recovery_memory.max(MIN_RECOVERY_MEMORY);
    let capacity = LogGeometry::new(config.log.file_size, config.log.files_in_group).capacity();
    info!(
        checkpoint_lsn = checkpoint.get(),
        "scanning redo from the checkpoint"
    );

    let mut hash = RecoveryHash::with_budget(budget);
    let mut parser = GroupParser::new(checkpoint, &hash);
    let mut applier = Applier::new(&pool, Arc::clone(io), checkpoint);
    let mut scan_progress = Progress::new(Phase::Scan, capacity);
    let mut batches = 0u32;
    let mut apply_elapsed = Duration::ZERO;
    let reader = ScanReader::start(scan)?;
    while let Some(chunk) = reader.next()? {
        let (mut at, mut rest) = (chunk.lsn, &chunk.bytes[..]);
        while !rest.is_empty() {
            let used = parser.feed(at, rest, &mut hash, budget)?;
            at = at.add(used as u64);
            rest = &rest[used..];
            gate.set_durable(parser.end_lsn());
            if parser.at_group_boundary() && hash.memory() > budget && !hash.is_empty() {
                batches += 1;
                info!(
                    batch = batches,
                    pages = hash.n_pages(),
                    memory = hash.memory(),
                    up_to_lsn = parser.end_lsn().get(),
                    "recovery memory budget reached; applying a batch"
                );
                let t = Instant::now();
                applier.apply(&hash, batches)?;
                apply_elapsed += t.elapsed();
                parser.rebase(&mut hash);
            }
        }
        scan_progress.update(at.since(checkpoint));
        reader.recycle(chunk);
    }
    let scan = reader.finish();
    let scanned = scan.scanned_lsn();
    scan_progress.finish(scanned.since(checkpoint));
    let discarded_tail_bytes = parser.finish(&mut hash);
    let end = parser.end_lsn();
    gate.set_durable(end);
    if !hash.is_empty() {
        batches += 1;
        let t = Instant::now();
        applier.apply(&hash, batches)?;
        apply_elapsed += t.elapsed();
    }
    let stats = applier.stats;
    drop(hash);
    let t = Instant::now();
    pool.flush_all()?;
    let flush_elapsed = t.elapsed();

    let log = scan.into_log(end)?;
    gate.attach(&log);
    pool.checkpoint()?;
    debug_assert_eq!(
        log.checkpoint_lsn(),
        end,
        "nothing is dirty after flush_all"
    );
    let report = RecoveryReport {
        checkpoint_lsn: checkpoint,
        end_lsn: end,
        discarded_tail_bytes,
        groups: parser.groups,
        records: parser.records,
        pages: stats.pages,
        pages_read: stats.pages_read,
        pages_skipped_init: stats.pages_skipped_init,
        pages_cached: stats.pages_cached,
        pages_up_to_date: stats.pages_up_to_date,
        pages_missing_space: stats.pages_missing_space,
        batches,
        torn_pages_repaired,
        tablespaces: files.into_iter().map(|f| (f.id, f.path)).collect(),
        elapsed: started.elapsed(),
        apply_elapsed,
        flush_elapsed,
        backend: io.kind(),
    };
    Ok(Recovered {
        pool,
        log,
        report: finish_report(report),
    })
}

fn finish_report(report: RecoveryReport) -> RecoveryReport {
    if report.groups > 0 {
        info!(
            groups = report.groups,
            records = report.records,
            pages = report.pages,
            pages_read = report.pages_read,
            pages_skipped_init = report.pages_skipped_init,
            batches = report.batches,
            redo_bytes = report.redo_bytes(),
            end_lsn = report.end_lsn.get(),
            elapsed_s = report.elapsed.as_secs_f64(),
            "crash recovery applied redo"
        );
    }
    report
}

/// One-line summary of a recovery, for the startup message.
pub(crate) fn describe(report: &RecoveryReport) -> String {
    format!(
        "recovered {} groups, {} pages in {:.3} s, end LSN {}",
        report.groups,
        report.pages,
        report.elapsed.as_secs_f64(),
        report.end_lsn
    )
}
