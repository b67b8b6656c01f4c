//! Key search on an index page.

use std::cmp::Ordering;

use basalt_common::PageNo;

use super::format::IndexPage;
use crate::error::{corrupt, Result};
use crate::rec::{RecordLayout, RecordRef};

/// Which boundary of the records equal to a search key to find.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SearchMode {
    /// The first record that is `>=` the key (lower bound).
    GreaterOrEqual,
    /// The first record that is `>` the key (upper bound).
    Greater,
}

impl<'a> IndexPage<'a> {
    /// Slot of the first record at or after the key (`GreaterOrEqual`) or
    /// strictly after it (`Greater`); `n_recs()` if there is none. On a leaf
    /// this is both where a matching record is and where a new one goes.
    // PERF: binary search, O(log n) key comparisons, no allocation.
    pub fn search(
        &self,
        layout: &RecordLayout,
        key: &[Option<&[u8]>],
        mode: SearchMode,
    ) -> Result<usize> {
        self.partition_point(|rec| {
            let ord = layout.compare_key(rec, key)?;
            Ok(match mode {
                SearchMode::GreaterOrEqual => ord == Ordering::Less,
                SearchMode::Greater => ord != Ordering::Greater,
            })
        })
    }

    /// On a node-pointer page, the slot of the node pointer to descend
    /// through: the last record `< key` (`GreaterOrEqual`, to reach the
    /// first record `>=` key) or `<= key` (`Greater`), or slot 0 when every
    /// record is larger (only possible on a page without a min-record).
    pub fn search_child(
        &self,
        layout: &RecordLayout,
        key: &[Option<&[u8]>],
        mode: SearchMode,
    ) -> Result<usize> {
        if self.is_leaf() || self.n_recs() == 0 {
            return Err(corrupt(
                self.bytes(),
                "child search on a leaf or empty node-pointer page",
            ));
        }
        Ok(self.search(layout, key, mode)?.saturating_sub(1))
    }

    /// [`IndexPage::search_child`] plus the child page number of that slot.
    pub fn child_for(
        &self,
        layout: &RecordLayout,
        key: &[Option<&[u8]>],
        mode: SearchMode,
    ) -> Result<(usize, PageNo)> {
        let slot = self.search_child(layout, key, mode)?;
        let rec = RecordRef::new(layout, self.rec(slot)?)?;
        match rec.child_page_no() {
            Some(no) => Ok((slot, no)),
            None => Err(corrupt(
                self.bytes(),
                format!("slot {slot} is not a node pointer"),
            )),
        }
    }
}
