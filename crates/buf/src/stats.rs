//! Buffer-pool counters.
//!
//! Counters bumped on the page-access path (`read_requests`, made young /
//! not young) would turn one shared cache line into the hottest spot of the
//! server if they were plain atomics. Every [`Counter`] is therefore striped:
//! a thread adds to one of [`STRIPES`] cache-padded slots chosen once per
//! thread, and readers sum the slots. Reads are not atomic across slots, which
//! is fine for monitoring.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;

/// Number of slots per counter.
pub const STRIPES: usize = 16;

static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
}

#[inline]
fn stripe() -> usize {
    STRIPE.with(|s| {
        let v = s.get();
        if v != usize::MAX {
            return v;
        }
        let v = NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) % STRIPES;
        s.set(v);
        v
    })
}

/// A monotonically growing event counter, striped across cache lines.
pub struct Counter {
    slots: [CachePadded<AtomicU64>; STRIPES],
}

impl Counter {
    /// A counter at zero.
    pub fn new() -> Counter {
        Counter {
            slots: std::array::from_fn(|_| CachePadded::new(AtomicU64::new(0))),
        }
    }

    /// Adds `n`.
    #[inline]
    pub fn add(&self, n: u64) {
        // PERF: one relaxed add on this thread's own cache line.
        self.slots[stripe()].fetch_add(n, Ordering::Relaxed);
    }

    /// Adds one.
    #[inline]
    pub fn inc(&self) {
        self.add(1);
    }

    /// Current total.
    pub fn get(&self) -> u64 {
        self.slots.iter().map(|s| s.load(Ordering::Relaxed)).sum()
    }
}

impl Default for Counter {
    fn default() -> Counter {
        Counter::new()
    }
}

impl std::fmt::Debug for Counter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.get())
    }
}

/// Event counters of one buffer pool. Field names follow the InnoDB status
/// variables / `INNODB_METRICS` counters they feed (see
/// [`BufStatsSnapshot::status_variables`]).
#[derive(Debug, Default)]
pub struct BufStats {
    /// Logical page requests (`Innodb_buffer_pool_read_requests`).
    pub read_requests: Counter,
    /// Pages read from disk (`Innodb_buffer_pool_reads`).
    pub reads: Counter,
    /// Pages created without a read (`Innodb_pages_created`).
    pub pages_created: Counter,
    /// Pages written in place (`Innodb_buffer_pool_pages_flushed`).
    pub pages_written: Counter,
    /// Clean pages evicted from the LRU tail (`buffer_LRU_batch_evict_total_pages`).
    pub pages_evicted: Counter,
    /// Old pages moved to the young sublist, and young pages moved back to
    /// its head (`Innodb_buffer_pool_pages_made_young`).
    pub pages_made_young: Counter,
    /// Accesses to old pages inside the `innodb_old_blocks_time` window that
    /// left them old (`Innodb_buffer_pool_pages_made_not_young`).
    pub pages_not_made_young: Counter,
    /// Flush-list batches written (`buffer_flush_batches`).
    pub flush_batches: Counter,
    /// Pages written by flush-list batches (`buffer_flush_batch_total_pages`).
    pub flush_batch_pages: Counter,
    /// Dirty LRU victims written by single-page flushes
    /// (`Innodb_buffer_pool_pages_LRU_flushed`).
    pub single_page_flushes: Counter,
    /// Dirty pages a flush skipped because an mtr kept them latched.
    pub flush_skipped_busy: Counter,
    /// Pages written that were modified again after their copy was taken
    /// (they stay dirty and are written again later).
    pub flush_redirtied: Counter,
    /// Waits for a free frame (`Innodb_buffer_pool_wait_free`).
    pub wait_free: Counter,
    /// Sequential writes to the doublewrite area (`Innodb_dblwr_writes`).
    pub dblwr_writes: Counter,
    /// Pages copied to the doublewrite area (`Innodb_dblwr_pages_written`).
    pub dblwr_pages: Counter,
    /// Pages that failed verification when read (`buffer_page_corrupt`).
    pub corrupt_reads: Counter,
    /// Background (io_capacity-bounded) flusher rounds (`buffer_flush_background_total_pages` feeds the next).
    pub background_flushes: Counter,
    /// Pages written by background rounds.
    pub background_pages: Counter,
    /// Rounds past the async water mark or signalled by the log (`buffer_flush_async_flushes`).
    pub async_flushes: Counter,
    /// Pages written by async rounds (`buffer_flush_async_pages`).
    pub async_pages: Counter,
    /// Rounds past the sync water mark (`buffer_flush_sync_flushes`).
    pub sync_flushes: Counter,
    /// Pages written by sync rounds (`buffer_flush_sync_pages`).
    pub sync_pages: Counter,
    /// Checkpoints written by the pool (`log_checkpoints` as seen from the pool).
    pub checkpoints: Counter,
    /// Flusher rounds that failed (I/O or redo error), logged and retried.
    pub flush_errors: Counter,
}

/// A point-in-time copy of the counters plus the list gauges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BufStatsSnapshot {
    /// Frames in the pool (`Innodb_buffer_pool_pages_total`).
    pub pool_pages: u64,
    /// Frames on free lists (`Innodb_buffer_pool_pages_free`).
    pub free_pages: u64,
    /// Pages on LRU lists (`Innodb_buffer_pool_pages_data`).
    pub lru_len: u64,
    /// Pages in the old sublists ("Old database pages").
    pub old_len: u64,
    /// Pages on flush lists (`Innodb_buffer_pool_pages_dirty`).
    pub dirty_pages: u64,
    /// See [`BufStats::read_requests`].
    pub read_requests: u64,
    /// See [`BufStats::reads`].
    pub reads: u64,
    /// See [`BufStats::pages_created`].
    pub pages_created: u64,
    /// See [`BufStats::pages_written`].
    pub pages_written: u64,
    /// See [`BufStats::pages_evicted`].
    pub pages_evicted: u64,
    /// See [`BufStats::pages_made_young`].
    pub pages_made_young: u64,
    /// See [`BufStats::pages_not_made_young`].
    pub pages_not_made_young: u64,
    /// See [`BufStats::flush_batches`].
    pub flush_batches: u64,
    /// See [`BufStats::flush_batch_pages`].
    pub flush_batch_pages: u64,
    /// See [`BufStats::single_page_flushes`].
    pub single_page_flushes: u64,
    /// See [`BufStats::flush_skipped_busy`].
    pub flush_skipped_busy: u64,
    /// See [`BufStats::flush_redirtied`].
    pub flush_redirtied: u64,
    /// See [`BufStats::wait_free`].
    pub wait_free: u64,
    /// See [`BufStats::dblwr_writes`].
    pub dblwr_writes: u64,
    /// See [`BufStats::dblwr_pages`].
    pub dblwr_pages: u64,
    /// See [`BufStats::corrupt_reads`].
    pub corrupt_reads: u64,
    /// See [`BufStats::background_flushes`].
    pub background_flushes: u64,
    /// See [`BufStats::background_pages`].
    pub background_pages: u64,
    /// See [`BufStats::async_flushes`].
    pub async_flushes: u64,
    /// See [`BufStats::async_pages`].
    pub async_pages: u64,
    /// See [`BufStats::sync_flushes`].
    pub sync_flushes: u64,
    /// See [`BufStats::sync_pages`].
    pub sync_pages: u64,
    /// See [`BufStats::checkpoints`].
    pub checkpoints: u64,
    /// See [`BufStats::flush_errors`].
    pub flush_errors: u64,
}

impl BufStats {
    /// Copies every counter; the gauges are filled in by the pool.
    pub(crate) fn snapshot(&self) -> BufStatsSnapshot {
        BufStatsSnapshot {
            read_requests: self.read_requests.get(),
            reads: self.reads.get(),
            pages_created: self.pages_created.get(),
            pages_written: self.pages_written.get(),
            pages_evicted: self.pages_evicted.get(),
            pages_made_young: self.pages_made_young.get(),
            pages_not_made_young: self.pages_not_made_young.get(),
            flush_batches: self.flush_batches.get(),
            flush_batch_pages: self.flush_batch_pages.get(),
            single_page_flushes: self.single_page_flushes.get(),
            flush_skipped_busy: self.flush_skipped_busy.get(),
            flush_redirtied: self.flush_redirtied.get(),
            wait_free: self.wait_free.get(),
            dblwr_writes: self.dblwr_writes.get(),
            dblwr_pages: self.dblwr_pages.get(),
            corrupt_reads: self.corrupt_reads.get(),
            background_flushes: self.background_flushes.get(),
            background_pages: self.background_pages.get(),
            async_flushes: self.async_flushes.get(),
            async_pages: self.async_pages.get(),
            sync_flushes: self.sync_flushes.get(),
            sync_pages: self.sync_pages.get(),
            checkpoints: self.checkpoints.get(),
            flush_errors: self.flush_errors.get(),
            ..BufStatsSnapshot::default()
        }
    }
}

impl BufStatsSnapshot {
    /// Share of logical requests served without a disk read, in `[0, 1]`
    /// (1 when nothing was requested), as in "Buffer pool hit rate".
    pub fn hit_rate(&self) -> f64 {
        if self.read_requests == 0 {
            return 1.0;
        }
        1.0 - self.reads.min(self.read_requests) as f64 / self.read_requests as f64
    }

    /// Hit rate of the requests between `earlier` and `self`.
    pub fn hit_rate_since(&self, earlier: &BufStatsSnapshot) -> f64 {
        let requests = self.read_requests.saturating_sub(earlier.read_requests);
        let reads = self.reads.saturating_sub(earlier.reads);
        if requests == 0 {
            return 1.0;
        }
        1.0 - reads.min(requests) as f64 / requests as f64
    }

    /// The counters under their MySQL status-variable / metrics names.
    pub fn status_variables(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("Innodb_buffer_pool_pages_total", self.pool_pages),
            ("Innodb_buffer_pool_pages_free", self.free_pages),
            ("Innodb_buffer_pool_pages_data", self.lru_len),
            ("Innodb_buffer_pool_pages_old", self.old_len),
            ("Innodb_buffer_pool_pages_dirty", self.dirty_pages),
            ("Innodb_buffer_pool_read_requests", self.read_requests),
            ("Innodb_buffer_pool_reads", self.reads),
            ("Innodb_pages_created", self.pages_created),
            ("Innodb_buffer_pool_pages_flushed", self.pages_written),
            ("Innodb_buffer_pool_pages_evicted", self.pages_evicted),
            ("Innodb_buffer_pool_pages_made_young", self.pages_made_young),
            (
                "Innodb_buffer_pool_pages_made_not_young",
                self.pages_not_made_young,
            ),
            (
                "Innodb_buffer_pool_pages_LRU_flushed",
                self.single_page_flushes,
            ),
            ("Innodb_buffer_pool_wait_free", self.wait_free),
            ("Innodb_dblwr_writes", self.dblwr_writes),
            ("Innodb_dblwr_pages_written", self.dblwr_pages),
            ("buffer_flush_batches", self.flush_batches),
            ("buffer_flush_batch_total_pages", self.flush_batch_pages),
            ("buffer_flush_skipped_busy", self.flush_skipped_busy),
            ("buffer_flush_redirtied", self.flush_redirtied),
            ("buffer_flush_background_flushes", self.background_flushes),
            ("buffer_flush_background_total_pages", self.background_pages),
            ("buffer_flush_async_flushes", self.async_flushes),
            ("buffer_flush_async_pages", self.async_pages),
            ("buffer_flush_sync_flushes", self.sync_flushes),
            ("buffer_flush_sync_pages", self.sync_pages),
            ("buffer_flush_errors", self.flush_errors),
            ("buffer_page_corrupt", self.corrupt_reads),
            ("buffer_checkpoints", self.checkpoints),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn striped_counter_sums_every_thread() {
        let c = Arc::new(Counter::new());
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let c = Arc::clone(&c);
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        c.inc();
                    }
                    c.add(5);
                })
            })
            .collect();
        for t in threads {
            t.join().expect("counter thread");
        }
        assert_eq!(c.get(), 8 * 10_005);
    }

    #[test]
    fn hit_rate_counts_reads_as_misses() {
        let s = BufStatsSnapshot {
            read_requests: 200,
            reads: 50,
            ..Default::default()
        };
        assert!((s.hit_rate() - 0.75).abs() < 1e-9);
        let later = BufStatsSnapshot {
            read_requests: 300,
            reads: 60,
            ..Default::default()
        };
        assert!((later.hit_rate_since(&s) - 0.9).abs() < 1e-9);
        assert_eq!(BufStatsSnapshot::default().hit_rate(), 1.0);
        let names: Vec<_> = s.status_variables().into_iter().map(|(n, _)| n).collect();
        assert!(names.contains(&"Innodb_buffer_pool_read_requests"));
        assert!(names.contains(&"Innodb_buffer_pool_reads"));
    }
}
