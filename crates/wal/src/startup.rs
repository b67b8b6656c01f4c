//! Creating and opening the log files, and starting a log for writing.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, AtomicU8};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use basalt_common::layout::REDO_LOG_FILE_PREFIX;
use basalt_common::Lsn;
use basalt_io::{AlignedBuf, FileRef, Io, OpenOptions};
use crossbeam_utils::CachePadded;
use parking_lot::{Mutex, RwLock};

use crate::buffer::LogBuffer;
use crate::config::MAX_FLUSHER_THREADS;
use crate::event::LsnEvent;
use crate::flusher::{run_flusher, run_timer};
use crate::format::{
    block_of, block_start, seal, BlockHeader, CheckpointSlot, FileInfo, LogGeometry,
    BLOCKS_PER_UNIT, BLOCK_HEADER_SIZE, BLOCK_PAYLOAD, BLOCK_SIZE, BLOCK_TRAILER_SIZE,
    CHECKPOINT_SLOT_OFFSETS, CREATOR, FORMAT_VERSION, PAYLOAD, WRITE_UNIT,
};
use crate::link::LinkBuf;
use crate::shared::{HeaderState, Limits, Shared, SpaceWait, Wake};
use crate::stats::Counters;
use crate::writer::{run_writer, Writer};
use crate::{Log, LogConfig, LogError};

/// Slots of the recent-written and recent-closed link buffers.
pub(crate) const LINK_SLOTS: usize = 1 << 16;

/// Bytes written per call while zero-filling new files.
const ZERO_CHUNK: usize = 1 << 20;

/// Path of log file `i`.
pub(crate) fn log_file_path(dir: &Path, i: u32) -> PathBuf {
    dir.join(format!("{REDO_LOG_FILE_PREFIX}{i}"))
}

/// Validated log files, read up to (not including) the redo scan.
#[derive(Debug)]
pub(crate) struct OpenedFiles {
    pub(crate) config: LogConfig,
    pub(crate) geometry: LogGeometry,
    pub(crate) files: Vec<FileRef>,
    /// File 0's header unit as on disk.
    pub(crate) header0: AlignedBuf,
    /// Largest epoch in any file info block: every block on disk has an
    /// epoch at or below it.
    pub(crate) disk_epoch: u32,
    pub(crate) start_lsn: Lsn,
    pub(crate) checkpoint: CheckpointSlot,
}

fn open_options(create: bool, config: &LogConfig) -> OpenOptions {
    // Every write is unit-aligned, so O_DIRECT works wherever the
    // filesystem allows it (the I/O layer falls back to buffered I/O
    // otherwise); fdatasync makes the writes durable either way.
    OpenOptions {
        create,
        direct: !config.file_buffering,
    }
}

/// Creates `ib_logfile0..N-1` for a new data directory and starts the log.
pub(crate) fn create(
    io: Arc<dyn Io>,
    config: &LogConfig,
    start_lsn: Lsn,
) -> Result<Arc<Log>, LogError> {
    config.validate()?;
    for i in 0..config.files_in_group {
        let path = log_file_path(&config.dir, i);
        if io.exists(&path) {
            return Err(LogError::FilesExist { path });
        }
    }
    io.create_dir_all(&config.dir)?;
    let geometry = LogGeometry::new(config.file_size, config.files_in_group);
    let zeros = AlignedBuf::zeroed(ZERO_CHUNK);
    let mut files = Vec::with_capacity(config.files_in_group as usize);
    let mut header0 = AlignedBuf::zeroed(WRITE_UNIT);
    let checkpoint = CheckpointSlot {
        number: 1,
        lsn: start_lsn,
        ring_offset: geometry.lsn_to_ring_offset(start_lsn),
        epoch: 0,
    };
    for i in 0..config.files_in_group {
        let path = log_file_path(&config.dir, i);
        let file = io.open(&path, open_options(true, config))?;
        let mut off = 0u64;
        while off < config.file_size {
            let n = (config.file_size - off).min(ZERO_CHUNK as u64) as usize;
            file.write_at(&zeros[..n], off)?;
            off += n as u64;
        }
        let mut header = AlignedBuf::zeroed(WRITE_UNIT);
        file_info(config, i, start_lsn, 0).encode(&mut header[..BLOCK_SIZE]);
        if i == 0 {
            let at = CHECKPOINT_SLOT_OFFSETS[checkpoint.slot_index()];
            checkpoint.encode(&mut header[at..at + BLOCK_SIZE]);
            header0.copy_from_slice(&header);
        }
        file.write_at(&header, 0)?;
        file.sync()?;
        files.push(file);
    }
    io.sync_dir(&config.dir)?;
    tracing::info!(
        dir = %config.dir.display(),
        files = config.files_in_group,
        file_size = config.file_size,
        start_lsn = start_lsn.get(),
        "created redo log files"
    );
    let opened = OpenedFiles {
        config: config.clone(),
        geometry,
        files,
        header0,
        disk_epoch: 0,
        start_lsn,
        checkpoint,
    };
    start(opened, start_lsn)
}

fn file_info(config: &LogConfig, file_no: u32, start_lsn: Lsn, epoch: u32) -> FileInfo {
    FileInfo {
        version: FORMAT_VERSION,
        file_no,
        files_in_group: config.files_in_group,
        file_size: config.file_size,
        start_lsn,
        epoch,
        creator: CREATOR.to_string(),
    }
}

/// Opens and validates the log files and picks the newest valid checkpoint.
pub(crate) fn open_files(io: Arc<dyn Io>, config: &LogConfig) -> Result<OpenedFiles, LogError> {
    config.validate()?;
    let dir = &config.dir;
    let mismatch = |option: &'static str, reason: String| LogError::FilesMismatch {
        dir: dir.clone(),
        option,
        reason,
    };
    for i in 0..config.files_in_group {
        if !io.exists(&log_file_path(dir, i)) {
            return Err(mismatch(
                "innodb_log_files_in_group",
                format!(
                    "{REDO_LOG_FILE_PREFIX}{i} is missing ({} files expected)",
                    config.files_in_group
                ),
            ));
        }
    }
    let extra = log_file_path(dir, config.files_in_group);
    if io.exists(&extra) {
        return Err(mismatch(
            "innodb_log_files_in_group",
            format!(
                "{} exists but only {} files are configured",
                extra.display(),
                config.files_in_group
            ),
        ));
    }
    let geometry = LogGeometry::new(config.file_size, config.files_in_group);
    let mut files = Vec::with_capacity(config.files_in_group as usize);
    let mut header0 = AlignedBuf::zeroed(WRITE_UNIT);
    let mut disk_epoch = 0;
    let mut start_lsn = Lsn::ZERO;
    let mut header = AlignedBuf::zeroed(WRITE_UNIT);
    for i in 0..config.files_in_group {
        let path = log_file_path(dir, i);
        let file = io.open(&path, open_options(false, config))?;
        let len = file.len()?;
        if len != config.file_size {
            return Err(mismatch(
                "innodb_log_file_size",
                format!(
                    "{} is {len} bytes, innodb_log_file_size is {}",
                    path.display(),
                    config.file_size
                ),
            ));
        }
        file.read_at(&mut header, 0)?;
        let Some(info) = FileInfo::decode(&header[..BLOCK_SIZE]) else {
            return Err(LogError::Corrupt {
                lsn: Lsn::ZERO,
                reason: format!(
                    "header block of {} is damaged or not a Basalt redo log",
                    path.display()
                ),
            });
        };
        if info.version != FORMAT_VERSION {
            return Err(LogError::Corrupt {
                lsn: Lsn::ZERO,
                reason: format!(
                    "{} has redo format version {}, this server reads version {FORMAT_VERSION}",
                    path.display(),
                    info.version
                ),
            });
        }
        if info.file_no != i || info.files_in_group != config.files_in_group {
            return Err(mismatch(
                "innodb_log_files_in_group",
                format!(
                    "{} is file {} of a group of {}, expected file {i} of {}",
                    path.display(),
                    info.file_no,
                    info.files_in_group,
                    config.files_in_group
                ),
            ));
        }
        if info.file_size != config.file_size {
            return Err(mismatch(
                "innodb_log_file_size",
                format!(
                    "{} was created with file size {}",
                    path.display(),
                    info.file_size
                ),
            ));
        }
        disk_epoch = disk_epoch.max(info.epoch);
        if i == 0 {
            start_lsn = info.start_lsn;
            header0.copy_from_slice(&header);
        }
        files.push(file);
    }
    let checkpoint = newest_checkpoint(&header0, &geometry, start_lsn)?;
    tracing::info!(
        dir = %dir.display(),
        checkpoint = checkpoint.number,
        checkpoint_lsn = checkpoint.lsn.get(),
        "opened redo log files"
    );
    Ok(OpenedFiles {
        config: config.clone(),
        geometry,
        files,
        header0,
        disk_epoch,
        start_lsn,
        checkpoint,
    })
}

/// The valid checkpoint slot with the highest number.
fn newest_checkpoint(
    header0: &[u8],
    geometry: &LogGeometry,
    start_lsn: Lsn,
) -> Result<CheckpointSlot, LogError> {
    let mut best: Option<CheckpointSlot> = None;
    for (i, &at) in CHECKPOINT_SLOT_OFFSETS.iter().enumerate() {
        let Some(slot) = CheckpointSlot::decode(&header0[at..at + BLOCK_SIZE]) else {
            continue;
        };
        if slot.slot_index() != i
            || slot.lsn < start_lsn
            || slot.ring_offset != geometry.lsn_to_ring_offset(slot.lsn)
        {
            tracing::warn!(
                slot = i,
                number = slot.number,
                lsn = slot.lsn.get(),
                "ignoring inconsistent checkpoint slot"
            );
            continue;
        }
        if best.is_none_or(|b| slot.number > b.number) {
            best = Some(slot);
        }
    }
    best.ok_or_else(|| LogError::Corrupt {
        lsn: Lsn::ZERO,
        reason: "no valid checkpoint in ib_logfile0".into(),
    })
}

/// Starts the log for writing at `resume` (a group boundary at or after
/// the checkpoint, at or before the end of valid redo):
///
/// 1. raise the epoch and write it to files 0 and 1 (fsynced), so every
///    block this run writes is newer than anything on disk;
/// 2. rewrite the unit holding `resume`'s block: that block keeps its
///    payload below `resume`, gets `data_len = resume mod 492` and the new
///    epoch, and the blocks after it in the unit become zeros (fsynced) —
///    redo past `resume` is gone before anything new is appended;
/// 3. spawn the writer, flusher and timer threads.
pub(crate) fn start(opened: OpenedFiles, resume: Lsn) -> Result<Arc<Log>, LogError> {
    let OpenedFiles {
        config,
        geometry,
        files,
        mut header0,
        disk_epoch,
        start_lsn,
        checkpoint,
    } = opened;
    let epoch = disk_epoch.checked_add(1).ok_or_else(|| LogError::Corrupt {
        lsn: resume,
        reason: "startup epoch counter exhausted".into(),
    })?;
    for (i, file) in files.iter().enumerate().take(2) {
        let mut header = if i == 0 {
            header0.clone()
        } else {
            AlignedBuf::zeroed(WRITE_UNIT)
        };
        file_info(&config, i as u32, start_lsn, epoch).encode(&mut header[..BLOCK_SIZE]);
        file.write_at(&header, 0)?;
        file.sync()?;
        if i == 0 {
            header0 = header;
        }
    }

    let resume_lsn = resume.get();
    let block_no = block_of(resume_lsn);
    let tail_unit = block_no / BLOCKS_PER_UNIT;
    let (file, off) = geometry.unit_location(tail_unit);
    let mut tail = AlignedBuf::zeroed(WRITE_UNIT);
    files[file].read_at(&mut tail, off)?;
    let at = (block_no % BLOCKS_PER_UNIT) as usize * BLOCK_SIZE;
    let data_len = (resume_lsn - block_start(block_no)) as usize;
    let resume_offset = (BLOCK_HEADER_SIZE + data_len) as u16;
    let block = &mut tail[at..at + BLOCK_SIZE];
    let first_group = match BlockHeader::decode(block) {
        Ok(h) if h.block_no == block_no && h.first_group != 0 && h.first_group <= resume_offset => {
            h.first_group
        }
        _ => resume_offset,
    };
    if data_len == 0 {
        block[BLOCK_HEADER_SIZE..BLOCK_SIZE].fill(0);
    } else {
        block[BLOCK_HEADER_SIZE + data_len..BLOCK_SIZE - BLOCK_TRAILER_SIZE].fill(0);
    }
    debug_assert!(data_len < BLOCK_PAYLOAD);
    BlockHeader {
        block_no,
        data_len: data_len as u16,
        first_group,
        epoch,
    }
    .encode(block);
    seal(block);
    tail[at + BLOCK_SIZE..].fill(0);
    files[file].write_at(&tail, off)?;
    files[file].sync()?;

    let buffer_size = config.buffer_size;
    let (buffer, consumer) = LogBuffer::new(buffer_size, LINK_SLOTS, resume_lsn);
    let first_group_slots = buffer_size / BLOCK_PAYLOAD + 4;
    let writer = Writer::new(consumer, tail, tail_unit, buffer_size);
    let shared = Arc::new(Shared {
        dir: config.dir.clone(),
        geometry,
        limits: Limits::new(&geometry),
        files,
        buffer,
        first_group: (0..first_group_slots).map(|_| AtomicU16::new(0)).collect(),
        closed: LinkBuf::new(LINK_SLOTS, resume_lsn),
        written: LsnEvent::new(resume_lsn),
        flushed: LsnEvent::new(resume_lsn),
        claimed: CachePadded::new(AtomicU64::new(resume_lsn)),
        checkpoint: LsnEvent::new(checkpoint.lsn.get()),
        header: Mutex::new(HeaderState {
            image: header0,
            number: checkpoint.number,
        }),
        write_req: CachePadded::new(AtomicU64::new(resume_lsn)),
        flush_req: CachePadded::new(AtomicU64::new(resume_lsn)),
        writer_wake: Wake::default(),
        flusher_wake: Wake::default(),
        timer_wake: Wake::default(),
        space: SpaceWait::default(),
        flush_mode: AtomicU8::new(config.flush_log_at_trx_commit),
        timer_period: Duration::from_secs(u64::from(config.flush_log_at_timeout_secs)),
        epoch,
        start_lsn: start_lsn.get(),
        pressure: (buffer_size / 2) as u64,
        failure: OnceLock::new(),
        stopping: AtomicBool::new(false),
        waker: RwLock::new(None),
        counters: Counters::default(),
        writer: Mutex::new(writer),
    });
    debug_assert_eq!(PAYLOAD, BLOCK_PAYLOAD as u64);

    let log = Log {
        shared: shared.clone(),
        threads: Mutex::new(Vec::with_capacity(3)),
    };
    let spawned = spawn(&log, "basalt-log-writer", {
        let sh = shared.clone();
        move || run_writer(sh)
    })
    .and_then(|()| {
        // Overlapping fsyncs only where a write's error comes back from the
        // write itself and each fsync reports its own device flush: with
        // O_DIRECT. Through the page cache a writeback error is reported
        // to only one of two concurrent fsyncs of a file, possibly not the
        // one whose round needed the lost page.
        let flushers = if shared.files.iter().all(|f| f.is_direct()) {
            config.flusher_threads.clamp(1, MAX_FLUSHER_THREADS)
        } else {
            1
        };
        (0..flushers).try_for_each(|i| {
            let sh = shared.clone();
            spawn(&log, &format!("basalt-log-flusher-{i}"), move || {
                run_flusher(sh)
            })
        })
    })
    .and_then(|()| {
        let sh = shared.clone();
        spawn(&log, "basalt-log-timer", move || run_timer(sh))
    });
    if let Err(e) = spawned {
        log.halt();
        return Err(e);
    }
    tracing::info!(
        dir = %config.dir.display(),
        lsn = resume_lsn,
        checkpoint_lsn = checkpoint.lsn.get(),
        epoch,
        "redo log started"
    );
    Ok(Arc::new(log))
}

fn spawn(log: &Log, name: &str, body: impl FnOnce() + Send + 'static) -> Result<(), LogError> {
    let handle = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(body)
        .map_err(|e| {
            LogError::Io(basalt_io::IoError::os(
                "spawn thread",
                log.shared.dir.clone(),
                e,
            ))
        })?;
    log.threads.lock().push(handle);
    Ok(())
}
