//! The page hash: page id -> frame, partitioned, each partition behind a
//! read-write latch.
//!
//! Lookups are by far the most frequent operation (every page access), so
//! they take only the shared side of one partition latch; inserts (miss
//! path) and removals (eviction, failed read) take the exclusive side. The
//! partitions are cache-padded so two hot partitions never share a line.
//!
//! The hash function is a fixed multiplicative mix of the 64-bit packed page
//! id ([`page_fold`]); the same fold, shifted, picks the instance and the
//! partition, and the in-partition map uses [`PageIdHasher`] (no SipHash on
//! the hot path).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use basalt_common::PageId;
use crossbeam_utils::CachePadded;
use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Mixes a packed page id into 64 well-distributed bits (the finaliser of
/// SplitMix64).
#[inline]
pub(crate) fn fold(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Hash of a page id.
#[inline]
pub(crate) fn page_fold(id: PageId) -> u64 {
    fold(id.to_u64())
}

/// Instance selector: pages of the same extent (64 pages) land in the same
/// instance, so a future read-ahead of an extent touches one instance.
#[inline]
pub(crate) fn instance_fold(id: PageId) -> u64 {
    fold((u64::from(id.space.0) << 32) | u64::from(id.page_no >> 6))
}

/// Cheap hasher for page ids inside one partition.
#[derive(Default, Clone, Copy, Debug)]
pub struct PageIdHasher(u64);

impl Hasher for PageIdHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u8(b);
        }
    }

    #[inline]
    fn write_u8(&mut self, v: u8) {
        self.write_u64(u64::from(v));
    }

    #[inline]
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }

    #[inline]
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

type PartitionMap = HashMap<PageId, u32, BuildHasherDefault<PageIdHasher>>;

/// A partitioned map from page id to frame index within one instance.
#[derive(Debug)]
pub(crate) struct PageHash {
    parts: Box<[CachePadded<RwLock<PartitionMap>>]>,
    mask: u64,
}

/// Minimum number of partitions per instance.
pub(crate) const MIN_PARTITIONS: usize = 64;

impl PageHash {
    /// A page hash sized for `frames` frames: at least [`MIN_PARTITIONS`]
    /// partitions, about 64 frames per partition, each map pre-sized so the
    /// steady state never rehashes.
    pub(crate) fn new(frames: usize) -> PageHash {
        let n = (frames / 64).next_power_of_two().max(MIN_PARTITIONS);
        let per_part = (frames / n + 1) * 2;
        let parts = (0..n)
            .map(|_| {
                CachePadded::new(RwLock::new(PartitionMap::with_capacity_and_hasher(
                    per_part,
                    BuildHasherDefault::default(),
                )))
            })
            .collect();
        PageHash {
            parts,
            mask: n as u64 - 1,
        }
    }

    #[inline]
    fn partition(&self, id: PageId) -> &RwLock<PartitionMap> {
        &self.parts[((page_fold(id) >> 20) & self.mask) as usize]
    }

    /// Shared latch on the partition of `id`.
    #[inline]
    pub(crate) fn read(&self, id: PageId) -> RwLockReadGuard<'_, PartitionMap> {
        self.partition(id).read()
    }

    /// Exclusive latch on the partition of `id`.
    pub(crate) fn write(&self, id: PageId) -> RwLockWriteGuard<'_, PartitionMap> {
        self.partition(id).write()
    }

    /// Number of partitions.
    #[cfg(test)]
    pub(crate) fn partitions(&self) -> usize {
        self.parts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_common::SpaceId;

    #[test]
    fn insert_lookup_remove() {
        let h = PageHash::new(1000);
        assert!(h.partitions() >= MIN_PARTITIONS);
        for p in 0..500u32 {
            let id = PageId::new(SpaceId(p % 3), p);
            assert!(h.write(id).insert(id, p).is_none());
        }
        for p in 0..500u32 {
            let id = PageId::new(SpaceId(p % 3), p);
            assert_eq!(h.read(id).get(&id).copied(), Some(p));
            assert_eq!(
                h.read(PageId::new(SpaceId(7), p))
                    .get(&PageId::new(SpaceId(7), p)),
                None
            );
        }
        let id = PageId::new(SpaceId(1), 1);
        assert_eq!(h.write(id).remove(&id), Some(1));
        assert_eq!(h.read(id).get(&id), None);
    }

    #[test]
    fn partitions_and_instances_spread_pages() {
        let h = PageHash::new(64 * 64);
        let mut per_part = vec![0usize; h.partitions()];
        let mut per_inst = [0usize; 8];
        for p in 0..64 * 64u32 {
            let id = PageId::new(SpaceId(5), p);
            per_part[((page_fold(id) >> 20) & h.mask) as usize] += 1;
            per_inst[(instance_fold(id) % 8) as usize] += 1;
        }
        // 4096 pages over 64 partitions: 64 on average; no partition may hold
        // more than three times that.
        assert!(per_part.iter().all(|&n| n < 192), "{per_part:?}");
        // 64 extents over 8 instances.
        assert!(per_inst.iter().all(|&n| n >= 64 * 2), "{per_inst:?}");
        // One extent maps to one instance.
        let a = instance_fold(PageId::new(SpaceId(5), 128));
        assert_eq!(a, instance_fold(PageId::new(SpaceId(5), 191)));
    }
}
