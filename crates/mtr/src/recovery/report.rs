//! What a recovery did.

use std::path::PathBuf;
use std::time::Duration;

use basalt_common::{Lsn, PageId, SpaceId};
use basalt_io::IoKind;

/// Outcome of crash recovery ([`crate::Storage::open`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecoveryReport {
    /// LSN of the checkpoint the redo scan started from.
    pub checkpoint_lsn: Lsn,
    /// End of the last complete mini-transaction group: the recovered
    /// state, the new checkpoint and where the log resumes.
    pub end_lsn: Lsn,
    /// Bytes of an incomplete group (or cut record) after `end_lsn` that
    /// were discarded: the torn tail of the log.
    pub discarded_tail_bytes: u64,
    /// Complete mini-transaction groups found after the checkpoint.
    pub groups: u64,
    /// Page records in those groups.
    pub records: u64,
    /// Distinct pages with records (summed over batches).
    pub pages: u64,
    /// Pages read from their files to apply redo to them.
    pub pages_read: u64,
    /// Pages not read because their first record rebuilds them entirely
    /// (an init record or a full-page image).
    pub pages_skipped_init: u64,
    /// Pages found in the buffer pool, left there by an earlier batch.
    pub pages_cached: u64,
    /// Pages whose image was already at or past every record's LSN.
    pub pages_up_to_date: u64,
    /// Pages of tablespaces with no file in the data directory (dropped
    /// tables); their records were skipped.
    pub pages_missing_space: u64,
    /// Apply batches (more than one when the records exceeded the recovery
    /// memory budget).
    pub batches: u32,
    /// Pages restored from the doublewrite area before redo was applied.
    pub torn_pages_repaired: Vec<PageId>,
    /// Tablespaces opened, with their files.
    pub tablespaces: Vec<(SpaceId, PathBuf)>,
    /// Wall time of the whole recovery.
    pub elapsed: Duration,
    /// Part of `elapsed` spent applying batches (page reads, record
    /// application, flushes to make room); the rest is mostly reading and
    /// parsing the redo, and the final flush.
    pub apply_elapsed: Duration,
    /// Part of `elapsed` spent in the final flush of every recovered page.
    pub flush_elapsed: Duration,
    /// The I/O backend that read and wrote the pages.
    pub backend: IoKind,
}

impl RecoveryReport {
    /// Bytes of redo applied (`end_lsn - checkpoint_lsn`).
    pub fn redo_bytes(&self) -> u64 {
        self.end_lsn.since(self.checkpoint_lsn)
    }

    /// True when there was nothing to redo (a clean shutdown).
    pub fn was_clean(&self) -> bool {
        self.groups == 0 && self.discarded_tail_bytes == 0
    }
}
