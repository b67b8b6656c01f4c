//! Buffer-pool settings, named after the MySQL options they implement.

use basalt_common::PAGE_SIZE;

use crate::error::{BufError, BufResult};

/// Static and initial settings of a [`crate::BufferPool`].
///
/// `old_blocks_pct` and `old_blocks_time_ms` are only initial values: they
/// can be changed while running with
/// [`crate::BufferPool::set_old_blocks_pct`] and
/// [`crate::BufferPool::set_old_blocks_time`] (`SET GLOBAL`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufConfig {
    /// `innodb_buffer_pool_size` in bytes (default 128 MiB, at least 5 MiB).
    /// Rounded down to whole frames, split evenly across instances.
    pub pool_size: u64,
    /// `innodb_buffer_pool_instances` (1..=64). [`BufConfig::for_pool_size`]
    /// picks MySQL's default: 8 from 1 GiB up, 1 below.
    pub instances: usize,
    /// `innodb_old_blocks_pct`: share of the LRU list kept as the old
    /// sublist (5..=95, default 37).
    pub old_blocks_pct: u32,
    /// `innodb_old_blocks_time`: milliseconds an old page must wait after its
    /// first access before another access moves it to the young sublist
    /// (default 1000; 0 makes every access to an old page move it).
    pub old_blocks_time_ms: u32,
    /// `innodb_doublewrite`: write pages through the doublewrite area first.
    pub doublewrite: bool,
    /// `innodb_lru_scan_depth`: how many pages from the LRU tail a thread
    /// looking for a free frame inspects before widening the search
    /// (100.., default 1024).
    pub lru_scan_depth: u32,
    /// `innodb_io_capacity`: pages per second the background flusher writes
    /// when the checkpoint age is below the async water mark (100..,
    /// default 200).
    pub io_capacity: u32,
}

/// Smallest accepted `innodb_buffer_pool_size` (5 MiB, as in MySQL).
pub const MIN_POOL_SIZE: u64 = 5 * 1024 * 1024;
/// Largest accepted `innodb_buffer_pool_instances`.
pub const MAX_INSTANCES: usize = 64;
/// Each instance must own at least this many frames, otherwise the midpoint
/// LRU and the doublewrite batches degenerate.
pub const MIN_FRAMES_PER_INSTANCE: usize = 64;
/// Pool size from which MySQL defaults to 8 instances instead of 1.
pub const MULTI_INSTANCE_POOL_SIZE: u64 = 1024 * 1024 * 1024;

impl Default for BufConfig {
    fn default() -> BufConfig {
        BufConfig::for_pool_size(128 * 1024 * 1024)
    }
}

impl BufConfig {
    /// MySQL's defaults for a pool of `pool_size` bytes: 8 instances from
    /// 1 GiB up, 1 below.
    pub fn for_pool_size(pool_size: u64) -> BufConfig {
        BufConfig {
            pool_size,
            instances: if pool_size >= MULTI_INSTANCE_POOL_SIZE {
                8
            } else {
                1
            },
            old_blocks_pct: 37,
            old_blocks_time_ms: 1000,
            doublewrite: true,
            lru_scan_depth: 1024,
            io_capacity: 200,
        }
    }

    /// Total frames in the pool (pool size rounded down to whole frames per
    /// instance).
    pub fn total_frames(&self) -> usize {
        self.frames_per_instance() * self.instances.max(1)
    }

    /// Frames owned by each instance.
    pub fn frames_per_instance(&self) -> usize {
        (self.pool_size / PAGE_SIZE as u64) as usize / self.instances.max(1)
    }

    /// Checks every value against its MySQL range.
    pub fn validate(&self) -> BufResult<()> {
        fn bad(name: &'static str, value: impl ToString, reason: impl Into<String>) -> BufError {
            BufError::InvalidConfig {
                name,
                value: value.to_string(),
                reason: reason.into(),
            }
        }
        if self.pool_size < MIN_POOL_SIZE {
            return Err(bad(
                "innodb_buffer_pool_size",
                self.pool_size,
                "minimum is 5M",
            ));
        }
        if self.instances == 0 || self.instances > MAX_INSTANCES {
            return Err(bad(
                "innodb_buffer_pool_instances",
                self.instances,
                "range is 1..64",
            ));
        }
        if self.frames_per_instance() < MIN_FRAMES_PER_INSTANCE {
            return Err(bad(
                "innodb_buffer_pool_instances",
                self.instances,
                format!(
                    "each instance needs at least {MIN_FRAMES_PER_INSTANCE} pages of \
                     innodb_buffer_pool_size"
                ),
            ));
        }
        if !(5..=95).contains(&self.old_blocks_pct) {
            return Err(bad(
                "innodb_old_blocks_pct",
                self.old_blocks_pct,
                "range is 5..95",
            ));
        }
        if self.lru_scan_depth < 100 {
            return Err(bad(
                "innodb_lru_scan_depth",
                self.lru_scan_depth,
                "minimum is 100",
            ));
        }
        if self.io_capacity < 100 {
            return Err(bad(
                "innodb_io_capacity",
                self.io_capacity,
                "minimum is 100",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_mysql() {
        let c = BufConfig::default();
        assert_eq!(c.pool_size, 128 << 20);
        assert_eq!(c.instances, 1);
        assert_eq!(c.total_frames(), 8192);
        assert!(c.validate().is_ok());
        assert_eq!(BufConfig::for_pool_size(1 << 30).instances, 8);
        assert_eq!(BufConfig::for_pool_size((1 << 30) - 1).instances, 1);
    }

    #[test]
    fn out_of_range_values_are_rejected_by_name() {
        let name_of = |c: &BufConfig| match c.validate() {
            Err(BufError::InvalidConfig { name, .. }) => name,
            other => panic!("expected InvalidConfig, got {other:?}"),
        };
        let base = BufConfig::for_pool_size(16 << 20);
        assert_eq!(
            name_of(&BufConfig {
                pool_size: 4 << 20,
                ..base.clone()
            }),
            "innodb_buffer_pool_size"
        );
        assert_eq!(
            name_of(&BufConfig {
                instances: 65,
                ..base.clone()
            }),
            "innodb_buffer_pool_instances"
        );
        // 16 MiB / 64 instances = 16 frames each: too small.
        assert_eq!(
            name_of(&BufConfig {
                instances: 64,
                ..base.clone()
            }),
            "innodb_buffer_pool_instances"
        );
        assert_eq!(
            name_of(&BufConfig {
                old_blocks_pct: 4,
                ..base.clone()
            }),
            "innodb_old_blocks_pct"
        );
        assert_eq!(
            name_of(&BufConfig {
                old_blocks_pct: 96,
                ..base.clone()
            }),
            "innodb_old_blocks_pct"
        );
        assert_eq!(
            name_of(&BufConfig {
                lru_scan_depth: 99,
                ..base.clone()
            }),
            "innodb_lru_scan_depth"
        );
        assert_eq!(
            name_of(&BufConfig {
                io_capacity: 50,
                ..base
            }),
            "innodb_io_capacity"
        );
    }

    #[test]
    fn frames_split_evenly() {
        let c = BufConfig {
            instances: 3,
            ..BufConfig::for_pool_size(10 << 20)
        };
        assert_eq!(c.frames_per_instance(), 640 / 3);
        assert_eq!(c.total_frames(), 640 / 3 * 3);
    }
}
