//! The log writer: formats ready bytes into blocks and writes them, on its
//! own thread or for a flusher (see [`Shared::writer`]).

use std::sync::atomic::Ordering::{Relaxed, SeqCst};
use std::sync::Arc;

use basalt_io::AlignedBuf;

use crate::buffer::Consumer;
use crate::format::{
    block_of, block_start, seal, BlockHeader, BLOCKS_PER_UNIT, BLOCK_HEADER_SIZE, BLOCK_PAYLOAD,
    BLOCK_SIZE, BLOCK_TRAILER_SIZE, PAYLOAD, WRITE_UNIT,
};
use crate::shared::Shared;
use crate::stats::Counters;
use crate::LogError;

/// Writer thread body: sleeps until there is work (see
/// [`Shared::writer_has_work`]), writes every ready byte, repeats.
pub(crate) fn run_writer(sh: Arc<Shared>) {
    loop {
        if !sh.usable() {
            return;
        }
        if sh.writer_has_work() {
            let target = sh.buffer.ready_lsn();
            if let Err(e) = sh.writer.lock().write(&sh, target) {
                sh.fail(e);
                return;
            }
            continue;
        }
        sh.writer_wake.sleep_unless(None, || sh.writer_has_work());
    }
}

/// Largest single write of the writer.
pub(crate) const MAX_WRITE: usize = 1 << 20;

/// The block formatter: its write buffer and the tail unit image. Lives in
/// [`Shared::writer`], taken by the writer thread and by the flushers.
#[derive(Debug)]
pub(crate) struct Writer {
    consumer: Consumer,
    /// Formatting area: whole write units, `MAX_WRITE` at most.
    buf: AlignedBuf,
    /// The write unit holding the block of `written_lsn`, exactly as on
    /// disk: the next write starts by rewriting it.
    tail: AlignedBuf,
    /// Absolute unit number (block / 8) of `tail`.
    tail_unit: u64,
}

impl Writer {
    pub(crate) fn new(
        consumer: Consumer,
        tail: AlignedBuf,
        tail_unit: u64,
        buffer_size: usize,
    ) -> Writer {
        let units = (buffer_size.min(MAX_WRITE) / WRITE_UNIT).max(2);
        Writer {
            consumer,
            buf: AlignedBuf::zeroed(units * WRITE_UNIT),
            tail,
            tail_unit,
        }
    }

    /// Writes `[written_lsn, target)` in chunks of at most `buf` bytes.
    ///
    /// Each chunk covers whole write units: it starts with the unit of the
    /// current (partial) tail block, rewritten from `tail`, and ends with the
    /// unit of the block holding `chunk_end`; that last block is written
    /// with `data_len = chunk_end mod 492` (possibly 0), and the blocks
    /// after it in its unit are zeros.
    ///
    /// A failed write leaves the formatter out of step with the files (the
    /// ring is released past `written_lsn`), so it fails the log before the
    /// lock is released, and a failed log is never written again.
    pub(crate) fn write(&mut self, sh: &Shared, target: u64) -> Result<(), LogError> {
        if let Some(failure) = sh.failure.get() {
            return Err(LogError::Failed(failure.clone()));
        }
        self.write_chunks(sh, target).map_err(|e| {
            sh.fail(e);
            sh.abort_error()
        })
    }

    // PERF: no allocation; one memcpy per block out of the ring, one CRC per
    // block, one write per file touched.
    fn write_chunks(&mut self, sh: &Shared, target: u64) -> Result<(), LogError> {
        let max_units = (self.buf.len() / WRITE_UNIT) as u64;
        let slots = sh.first_group.len() as u64;
        let mut written = sh.written.get();
        while written < target {
            let first_block = block_of(written);
            let first_unit = first_block / BLOCKS_PER_UNIT;
            debug_assert_eq!(first_unit, self.tail_unit, "tail image out of step");
            let base_block = first_unit * BLOCKS_PER_UNIT;
            let chunk_end = target.min(block_start(base_block + max_units * BLOCKS_PER_UNIT - 1));
            debug_assert!(
                chunk_end <= sh.checkpoint.get() + sh.limits.max_age,
                "writer would overwrite un-checkpointed redo"
            );
            let last_block = block_of(chunk_end);
            let last_unit = last_block / BLOCKS_PER_UNIT;
            let bytes = (last_unit - first_unit + 1) as usize * WRITE_UNIT;

            self.buf[..WRITE_UNIT].copy_from_slice(&self.tail);
            let pad_from = (last_block - base_block + 1) as usize * BLOCK_SIZE;
            self.buf[pad_from..bytes].fill(0);
            for b in first_block..=last_block {
                let off = (b - base_block) as usize * BLOCK_SIZE;
                let block = &mut self.buf[off..off + BLOCK_SIZE];
                let bstart = block_start(b);
                let from = written.max(bstart);
                let to = chunk_end.min(bstart + PAYLOAD);
                if to > from {
                    let p0 = BLOCK_HEADER_SIZE + (from - bstart) as usize;
                    let p1 = BLOCK_HEADER_SIZE + (to - bstart) as usize;
                    self.consumer.copy_out(&sh.buffer, from, &mut block[p0..p1]);
                }
                let data_len = (to - bstart) as usize;
                block[BLOCK_HEADER_SIZE + data_len..BLOCK_SIZE - BLOCK_TRAILER_SIZE].fill(0);
                let slot = &sh.first_group[(b % slots) as usize];
                let recorded = slot.load(Relaxed);
                let existing = if b == first_block {
                    BlockHeader::decode_unchecked(block).first_group
                } else {
                    0
                };
                let first_group = if existing != 0 { existing } else { recorded };
                if data_len == BLOCK_PAYLOAD {
                    // The block is complete and never rewritten: free its
                    // slot for block b + slots.
                    slot.store(0, Relaxed);
                }
                BlockHeader {
                    block_no: b,
                    data_len: data_len as u16,
                    first_group,
                    epoch: sh.epoch,
                }
                .encode(block);
                seal(block);
            }
            // Everything up to chunk_end is copied out: appenders may reuse
            // that part of the ring while the write runs.
            self.consumer.release(&sh.buffer, chunk_end);
            sh.space.notify();

            let mut unit = first_unit;
            let mut off = 0usize;
            while unit <= last_unit {
                let (file, file_off) = sh.geometry.unit_location(unit);
                let n = (last_unit - unit + 1).min(sh.geometry.units_to_file_end(unit));
                let len = n as usize * WRITE_UNIT;
                sh.files[file].write_at(&self.buf[off..off + len], file_off)?;
                Counters::bump(&sh.counters.log_writes, 1);
                Counters::bump(&sh.counters.bytes_written, len as u64);
                unit += n;
                off += len;
            }
            let tail_off = (last_unit - first_unit) as usize * WRITE_UNIT;
            self.tail
                .copy_from_slice(&self.buf[tail_off..tail_off + WRITE_UNIT]);
            self.tail_unit = last_unit;
            written = chunk_end;
            sh.written.advance(chunk_end);
            if sh.flush_req.load(SeqCst) > sh.claimed() {
                sh.flusher_wake.notify();
            }
        }
        Ok(())
    }
}
