//! Reading the redo after the checkpoint, for crash recovery.

use std::sync::Arc;

use basalt_common::Lsn;
use basalt_io::AlignedBuf;

use crate::format::{
    block_of, block_start, BlockDefect, BlockHeader, BLOCKS_PER_UNIT, BLOCK_HEADER_SIZE,
    BLOCK_PAYLOAD, BLOCK_SIZE, PAYLOAD, WRITE_UNIT,
};
use crate::startup::{start, OpenedFiles};
use crate::{Log, LogError};

/// Write units read per call of [`RecoveryScan::next_chunk`] (256 KiB).
const READ_UNITS: u64 = 64;

/// Why the scan stopped: the first block after the valid redo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanEnd {
    /// A block with less than a full payload: the last block the writer
    /// wrote. The normal end.
    Tail,
    /// A block whose checksum fails: torn by a crash, or never written.
    Torn,
    /// A block whose fields are out of range despite a valid checksum.
    BadHeader,
    /// A block whose number is not the one expected at this position: left
    /// from an earlier lap of the ring.
    StaleLap,
    /// A block written by an earlier run than the block before it: left
    /// from before a restart that resumed at a lower LSN.
    StaleEpoch,
    /// The scan covered the whole ring.
    RingFull,
}

/// A streaming reader over the contiguous valid redo payload from the
/// newest checkpoint on. It knows nothing of record boundaries; the caller
/// parses the bytes and decides where the last complete group ends.
///
/// ```text
///  checkpoint_lsn                       scanned_lsn
///       |== chunk ==|== chunk ==|== ... ==|  first torn / stale / short block
/// ```
#[derive(Debug)]
pub struct RecoveryScan {
    opened: OpenedFiles,
    read_buf: AlignedBuf,
    out: Vec<u8>,
    /// Every payload byte below this was returned.
    pos: u64,
    /// Epoch of the last valid block (blocks must not go back in epoch).
    last_epoch: u32,
    end: Option<ScanEnd>,
    at_checkpoint_block: bool,
}

impl RecoveryScan {
    pub(crate) fn new(opened: OpenedFiles) -> RecoveryScan {
        let pos = opened.checkpoint.lsn.get();
        RecoveryScan {
            opened,
            read_buf: AlignedBuf::zeroed(READ_UNITS as usize * WRITE_UNIT),
            out: Vec::new(),
            pos,
            last_epoch: 0,
            end: None,
            at_checkpoint_block: true,
        }
    }

    /// LSN of the checkpoint the scan starts from.
    pub fn checkpoint_lsn(&self) -> Lsn {
        self.opened.checkpoint.lsn
    }

    /// Number of that checkpoint.
    pub fn checkpoint_number(&self) -> u64 {
        self.opened.checkpoint.number
    }

    /// LSN the log files were created at.
    pub fn start_lsn(&self) -> Lsn {
        self.opened.start_lsn
    }

    /// End of the payload returned so far; after `next_chunk` returned
    /// `None`, the end of the valid redo.
    pub fn scanned_lsn(&self) -> Lsn {
        Lsn(self.pos)
    }

    /// Why the scan stopped, once it has.
    pub fn end(&self) -> Option<ScanEnd> {
        self.end
    }

    /// The next run of valid payload bytes and the LSN of its first byte;
    /// `None` at the end of the valid redo. A damaged checkpoint block is an
    /// error ([`LogError::Corrupt`]): the redo the checkpoint relies on is
    /// gone.
    pub fn next_chunk(&mut self) -> Result<Option<(Lsn, &[u8])>, LogError> {
        self.out.clear();
        let chunk_start = self.pos;
        while self.out.is_empty() && self.end.is_none() {
            self.read_run()?;
        }
        if self.out.is_empty() {
            return Ok(None);
        }
        Ok(Some((Lsn(chunk_start), &self.out)))
    }

    /// Reads up to `READ_UNITS` units from the block of `pos` (not across a
    /// file end) and appends their valid payload to `out`.
    fn read_run(&mut self) -> Result<(), LogError> {
        let geometry = self.opened.geometry;
        let first_block = block_of(self.pos);
        let first_unit = first_block / BLOCKS_PER_UNIT;
        let units = READ_UNITS.min(geometry.units_to_file_end(first_unit));
        let (file, off) = geometry.unit_location(first_unit);
        let len = units as usize * WRITE_UNIT;
        self.opened.files[file].read_at(&mut self.read_buf[..len], off)?;
        let base_block = first_unit * BLOCKS_PER_UNIT;
        let checkpoint = self.opened.checkpoint.lsn.get();
        for b in first_block..base_block + units * BLOCKS_PER_UNIT {
            if block_start(b) >= checkpoint + geometry.capacity() {
                return self.stop(ScanEnd::RingFull, b);
            }
            let at = (b - base_block) as usize * BLOCK_SIZE;
            let block = &self.read_buf[at..at + BLOCK_SIZE];
            let header = match BlockHeader::decode(block) {
                Ok(h) => h,
                Err(BlockDefect::Checksum) => return self.stop(ScanEnd::Torn, b),
                Err(BlockDefect::BadHeader) => return self.stop(ScanEnd::BadHeader, b),
            };
            if header.block_no != b {
                return self.stop(ScanEnd::StaleLap, b);
            }
            if header.epoch > self.opened.disk_epoch {
                return self.stop(ScanEnd::BadHeader, b);
            }
            if header.epoch < self.last_epoch {
                return self.stop(ScanEnd::StaleEpoch, b);
            }
            let bstart = block_start(b);
            let data_end = bstart + u64::from(header.data_len);
            if self.at_checkpoint_block {
                if data_end < self.pos {
                    return Err(LogError::Corrupt {
                        lsn: Lsn(self.pos),
                        reason: format!(
                            "the checkpoint's block {b} holds redo only up to LSN {data_end}"
                        ),
                    });
                }
                self.at_checkpoint_block = false;
            }
            self.last_epoch = header.epoch;
            if data_end > self.pos {
                let from = BLOCK_HEADER_SIZE + (self.pos - bstart) as usize;
                let to = BLOCK_HEADER_SIZE + usize::from(header.data_len);
                self.out.extend_from_slice(&block[from..to]);
                self.pos = data_end;
            }
            if usize::from(header.data_len) < BLOCK_PAYLOAD {
                self.end = Some(ScanEnd::Tail);
                return Ok(());
            }
        }
        Ok(())
    }

    fn stop(&mut self, why: ScanEnd, block_no: u64) -> Result<(), LogError> {
        if self.at_checkpoint_block {
            return Err(LogError::Corrupt {
                lsn: Lsn(self.pos),
                reason: format!("the checkpoint's block {block_no} is unreadable ({why:?})"),
            });
        }
        tracing::debug!(
            lsn = self.pos,
            block = block_no,
            reason = ?why,
            "redo scan reached the end of valid redo"
        );
        self.end = Some(why);
        Ok(())
    }

    /// Starts the log for writing at `resume`, the end of the last complete
    /// group the caller found (between the checkpoint and
    /// [`RecoveryScan::scanned_lsn`]). Redo past `resume` (a partial group
    /// at the tail) is cut off on disk before the log accepts appends, and
    /// the run gets a new epoch so blocks left past the cut can never be
    /// read as valid again.
    pub fn into_log(self, resume: Lsn) -> Result<Arc<Log>, LogError> {
        let checkpoint = self.checkpoint_lsn();
        if resume < checkpoint || resume.get() > self.pos {
            return Err(LogError::BadResumeLsn {
                lsn: resume,
                checkpoint,
                scanned: Lsn(self.pos),
            });
        }
        if resume.get() < self.pos {
            tracing::info!(
                resume = resume.get(),
                scanned = self.pos,
                "discarding {} bytes of incomplete redo at the end of the log",
                self.pos - resume.get()
            );
        }
        debug_assert_eq!(PAYLOAD as usize, BLOCK_PAYLOAD);
        start(self.opened, resume)
    }
}
