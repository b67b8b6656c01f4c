//! Dropping a whole tree: every index page and every overflow chain goes
//! back to the tablespace free list.

use basalt_buf::LatchMode;
use basalt_common::PageNo;
use basalt_mtr::{Mtr, PageStore};

use crate::error::Result;
use crate::external::chain_pages_per_mtr;
use crate::tree::BTree;

impl BTree {
    /// Frees every page of the tree, overflow chains included, and
    /// returns how many pages were freed.
    ///
    /// The caller guarantees that nobody else uses the tree (the catalog has
    /// unpublished it). The pages are first collected level by level with
    /// shared latches, then freed in mini-transactions of bounded size:
    /// overflow chains, then leaves, then upper levels, the root last. A
    /// crash part-way leaves some pages freed and the rest allocated but
    /// unreachable; the drop is not resumable from the tree itself (the
    /// root may already be free), so the catalog must treat the index as
    /// gone once it starts dropping it.
    pub fn drop_tree(&self, store: &PageStore) -> Result<u64> {
        let mut levels: Vec<Vec<PageNo>> = Vec::new();
        let mut chains = Vec::new();
        let mut frontier = vec![self.root];
        let mut level = None;
        while !frontier.is_empty() {
            let mut next = Vec::new();
            let mut this_level = None;
            for &no in &frontier {
                let id = self.id(no);
                let g = store.pool.get(id, LatchMode::Shared)?;
                let page = self.view_at(g.data(), id, level)?;
                this_level = Some(page.level());
                for i in 0..page.n_recs() {
                    let rec = self.rec(&page, i, id)?;
                    if page.is_leaf() {
                        chains.extend(BTree::extern_refs(&rec));
                    } else {
                        next.push(self.child_of(&rec, id)?);
                    }
                }
            }
            level = this_level.and_then(|l| l.checked_sub(1));
            levels.push(std::mem::replace(&mut frontier, next));
        }
        let mut freed = 0u64;
        for c in &chains {
            self.free_chain_own(store, c, true)?;
            freed += basalt_page::overflow::pages_needed(c.total_len);
        }
        let per_mtr = chain_pages_per_mtr(store) as usize;
        for pages in levels.iter().rev() {
            for batch in pages.chunks(per_mtr) {
                let mut mtr = Mtr::start(store)?;
                let mut refs = Vec::with_capacity(batch.len());
                for &no in batch {
                    refs.push(mtr.get(self.id(no), LatchMode::Exclusive)?);
                }
                for r in refs {
                    mtr.free_page(r)?;
                }
                mtr.commit()?;
                freed += batch.len() as u64;
            }
        }
        Ok(freed)
    }
}
