//! The flush list of one instance: dirty pages ordered by
//! `oldest_modification`.
//!
//! Mini-transactions commit concurrently: two mtrs may reserve LSN ranges in
//! one order and reach their flush-list insertion in the other. A list that
//! only appends would then be slightly out of order, and "the head is the
//! oldest dirty page" (which the checkpoint relies on) would be false. The
//! list is therefore an ordered set keyed by `(oldest_modification, frame)`:
//! insertion order does not matter, the first element is always the true
//! minimum, and iteration is oldest first. Insert and remove are
//! O(log dirty) under the instance flush-list mutex.

use std::collections::BTreeSet;

use basalt_common::Lsn;

/// Dirty pages of one instance, oldest first.
#[derive(Debug, Default)]
pub(crate) struct FlushList {
    set: BTreeSet<(Lsn, u32)>,
}

impl FlushList {
    /// Adds frame `idx` whose first unwritten change starts at `oldest`.
    pub(crate) fn insert(&mut self, oldest: Lsn, idx: u32) {
        // PERF: B-tree nodes hold many entries; allocation is amortised.
        let fresh = self.set.insert((oldest, idx));
        debug_assert!(fresh, "frame {idx} inserted twice");
    }

    /// Removes frame `idx` (its key is its current oldest modification).
    pub(crate) fn remove(&mut self, oldest: Lsn, idx: u32) -> bool {
        self.set.remove(&(oldest, idx))
    }

    /// True when frame `idx` is on the list with oldest modification `oldest`.
    pub(crate) fn contains(&self, oldest: Lsn, idx: u32) -> bool {
        self.set.contains(&(oldest, idx))
    }

    /// The oldest modification of any page on the list.
    pub(crate) fn oldest(&self) -> Option<Lsn> {
        self.set.first().map(|&(lsn, _)| lsn)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.set.len()
    }

    /// Entries, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Lsn, u32)> + '_ {
        self.set.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_order_inserts_iterate_oldest_first() {
        let mut fl = FlushList::default();
        for (lsn, idx) in [(300, 1), (100, 2), (200, 3), (100, 0), (250, 4)] {
            fl.insert(Lsn(lsn), idx);
        }
        assert_eq!(fl.oldest(), Some(Lsn(100)));
        let order: Vec<u32> = fl.iter().map(|(_, i)| i).collect();
        assert_eq!(order, vec![0, 2, 3, 4, 1]);
        assert!(fl.remove(Lsn(100), 0));
        assert!(!fl.remove(Lsn(100), 0));
        assert!(fl.remove(Lsn(100), 2));
        assert_eq!(fl.oldest(), Some(Lsn(200)));
        assert_eq!(fl.len(), 3);
    }
}
