//! Range cursors: forward and backward scans between bounds, with save and
//! restore for callers that release latches between rows.
//!
//! **Forward** steps stay on the leaf while they can; at its end the cursor
//! latches the right neighbour (S) *before* releasing the current leaf
//! (left-to-right order, no gap in which the neighbour could be freed:
//! freeing a leaf needs its left neighbour's X latch).
//!
//! **Backward** steps at slot 0 need the left neighbour, against the latch
//! order. The cursor first asks for it with `try_get` while still holding
//! the current leaf (never waits, so never deadlocks). If it is busy, the
//! cursor remembers the current key, releases the leaf, latches the left
//! neighbour and then the leaf again (now in order) and checks that they
//! are still linked and that nothing smaller than the remembered key
//! appeared; if anything changed it repositions from the root on "largest
//! key < remembered key". Re-searching from the root is always correct;
//! the neighbour fast path only saves the descent.
//!
//! **Save / restore**: [`Cursor::save`] copies the current record's key and
//! releases the leaf; the next [`Cursor::next`] continues at the first key
//! greater than it, [`Cursor::prev`] at the largest key smaller than it,
//! and [`Cursor::restore`] repositions on the saved key itself if its
//! record still exists. Keys are unique, so the saved key pins the
//! position exactly even if pages split or merge meanwhile.
//!
//! A cursor holds at most one leaf latch (S) between calls. Do not write
//! through a mini-transaction on the same tree from the thread that holds
//! a positioned cursor: save it first.

use std::cmp::Ordering;
use std::ops::Bound;

use basalt_buf::{LatchMode, PageGuard};
use basalt_common::{PageId, FIL_NULL};
use basalt_mtr::PageStore;
use basalt_page::header;
use basalt_page::index_page::SearchMode;
use basalt_page::rec::RecordRef;

use crate::error::{BTreeError, Result};
use crate::key::OwnedKey;
use crate::record::{OwnedRecord, Row};
use crate::tree::BTree;

/// Restarts from the root before a backward step reports corruption.
const MAX_RESTARTS: usize = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Not positioned yet.
    Start,
    /// On a record: `leaf` latched, `slot` valid.
    On,
    /// Latches released; `saved` holds the key of the record it was on.
    Saved,
    /// Moved backward past the lower bound.
    BeforeFirst,
    /// Moved forward past the upper bound.
    AfterLast,
}

/// Outcome of a step to the left neighbour.
enum LeftStep<'s> {
    Found(PageGuard<'s>, usize),
    Start,
    Restart,
}

/// A scan over the records of one tree between two bounds. See the module
/// documentation for the latching protocol.
///
/// Bounds are key prefixes: `Included(k)` as a lower bound starts at the
/// first record whose first `k.len()` key fields are `>= k`, as an upper
/// bound ends after the last record whose prefix is `<= k`; `Excluded`
/// leaves out the records whose prefix equals `k`.
pub struct Cursor<'s> {
    tree: BTree,
    store: &'s PageStore,
    lower: Bound<OwnedKey>,
    upper: Bound<OwnedKey>,
    leaf: Option<PageGuard<'s>>,
    slot: usize,
    state: State,
    saved: OwnedKey,
}

impl std::fmt::Debug for Cursor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cursor")
            .field("index_id", &self.tree.index_id)
            .field("state", &self.state)
            .field("leaf", &self.leaf.as_ref().map(|g| g.page_id()))
            .field("slot", &self.slot)
            .finish()
    }
}

impl BTree {
    /// A cursor over the records between `lower` and `upper` (key
    /// prefixes, see [`Cursor`]). Positions nothing until the first
    /// [`Cursor::next`] or [`Cursor::prev`].
    pub fn cursor<'s>(
        &self,
        store: &'s PageStore,
        lower: Bound<&[Option<&[u8]>]>,
        upper: Bound<&[Option<&[u8]>]>,
    ) -> Result<Cursor<'s>> {
        let own = |b: Bound<&[Option<&[u8]>]>| -> Result<Bound<OwnedKey>> {
            Ok(match b {
                Bound::Unbounded => Bound::Unbounded,
                Bound::Included(k) | Bound::Excluded(k)
                    if k.is_empty() || k.len() > self.layout.n_key() =>
                {
                    return Err(self.bad_value(format!(
                        "bound of {} fields for a key of {}",
                        k.len(),
                        self.layout.n_key()
                    )))
                }
                Bound::Included(k) => Bound::Included(OwnedKey::from_key(k)),
                Bound::Excluded(k) => Bound::Excluded(OwnedKey::from_key(k)),
            })
        };
        Ok(Cursor {
            tree: self.clone(),
            store,
            lower: own(lower)?,
            upper: own(upper)?,
            leaf: None,
            slot: 0,
            state: State::Start,
            saved: OwnedKey::default(),
        })
    }

    /// Descends to the leftmost (or rightmost) leaf with S coupling.
    fn edge_leaf<'s>(&self, store: &'s PageStore, rightmost: bool) -> Result<PageGuard<'s>> {
        let mut id = self.root_id();
        let mut guard = store.pool.get(id, LatchMode::Shared)?;
        let mut level = None;
        loop {
            let page = self.view_at(guard.data(), id, level)?;
            if page.is_leaf() {
                return Ok(guard);
            }
            let slot = if rightmost {
                page.n_recs().saturating_sub(1)
            } else {
                0
            };
            let child = self.child_at(&page, slot, id)?;
            level = Some(page.level() - 1);
            let child_id = self.id(child);
            let g = store.pool.get(child_id, LatchMode::Shared)?;
            guard = g;
            id = child_id;
        }
    }
}

/// Decodes the record in `slot` of the latched leaf `g`.
fn rec_in<'a>(tree: &'a BTree, g: &'a PageGuard<'_>, slot: usize) -> Result<RecordRef<'a>> {
    let id = g.page_id();
    let page = tree.view(g.data(), id)?;
    tree.rec(&page, slot, id)
}

impl<'s> Cursor<'s> {
    /// Moves to the next record in key order and returns it, or `None`
    /// past the upper bound (then the cursor stays there; `prev` comes
    /// back).
    // The record borrows the cursor's latched page: a lending cursor, which
    // `Iterator` cannot express.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<RecordRef<'_>>> {
        let found = match self.state {
            State::Start | State::BeforeFirst => self.seek_forward(bound_key(&self.lower))?,
            State::On => {
                let g = self.take_leaf()?;
                self.settle_forward(g, self.slot + 1)?
            }
            State::Saved => self.seek_forward(Some((&self.saved, false)))?,
            State::AfterLast => return Ok(None),
        };
        self.land(found, true)
    }

    /// Moves to the previous record in key order and returns it, or `None`
    /// before the lower bound.
    pub fn prev(&mut self) -> Result<Option<RecordRef<'_>>> {
        let found = match self.state {
            State::Start | State::AfterLast => self.seek_backward(bound_key(&self.upper))?,
            State::On if self.slot > 0 => {
                let g = self.take_leaf()?;
                Some((g, self.slot - 1))
            }
            State::On => {
                let g = self.take_leaf()?;
                {
                    let rec = rec_in(&self.tree, &g, 0)?;
                    self.saved.set_from_rec(&rec, self.tree.layout.n_key());
                }
                let step = self.saved.with(|k| self.left_step(g, k, false))?;
                match step {
                    LeftStep::Found(g, slot) => Some((g, slot)),
                    LeftStep::Start => None,
                    LeftStep::Restart => self.seek_backward(Some((&self.saved, false)))?,
                }
            }
            State::Saved => self.seek_backward(Some((&self.saved, false)))?,
            State::BeforeFirst => return Ok(None),
        };
        self.land(found, false)
    }

    /// The record the cursor is on, if any.
    pub fn current(&self) -> Result<Option<RecordRef<'_>>> {
        match (&self.leaf, self.state) {
            (Some(g), State::On) => rec_in(&self.tree, g, self.slot).map(Some),
            _ => Ok(None),
        }
    }

    /// An owned copy of the current record.
    pub fn current_owned(&self) -> Result<Option<OwnedRecord>> {
        Ok(self
            .current()?
            .map(|r| OwnedRecord::copy_of(&self.tree.layout, &r)))
    }

    /// The current record with its external values read (under the leaf
    /// latch the cursor holds).
    pub fn row(&self) -> Result<Option<Row>> {
        match (&self.leaf, self.state) {
            (Some(g), State::On) => {
                let rec = rec_in(&self.tree, g, self.slot)?;
                self.tree
                    .materialize(self.store, &rec, g.page_id())
                    .map(Some)
            }
            _ => Ok(None),
        }
    }

    /// Releases the leaf latch, remembering the current key (see the
    /// module doc). A cursor not on a record just drops its latch.
    pub fn save(&mut self) -> Result<()> {
        if self.state == State::On {
            let g = self.take_leaf()?;
            let rec = rec_in(&self.tree, &g, self.slot)?;
            self.saved.set_from_rec(&rec, self.tree.layout.n_key());
            self.state = State::Saved;
        }
        self.leaf = None;
        Ok(())
    }

    /// Re-latches a saved cursor on its record if that record still
    /// exists (returning it); otherwise the cursor stays saved and
    /// `next`/`prev` continue around the saved key.
    pub fn restore(&mut self) -> Result<Option<RecordRef<'_>>> {
        if self.state != State::Saved {
            return self.current();
        }
        let tree = &self.tree;
        let store = self.store;
        let found = self
            .saved
            .with(|k| -> Result<Option<(PageGuard<'s>, usize)>> {
                let g = tree.leaf_for_read(store, k, SearchMode::Greater)?;
                let id = g.page_id();
                let page = tree.view(g.data(), id)?;
                let slot = page
                    .search(&tree.layout, k, SearchMode::GreaterOrEqual)
                    .map_err(|e| BTreeError::page(id, e))?;
                if slot < page.n_recs()
                    && tree.rec(&page, slot, id)?.compare_key(k) == Ordering::Equal
                {
                    return Ok(Some((g, slot)));
                }
                Ok(None)
            })?;
        match found {
            Some((g, slot)) => {
                self.leaf = Some(g);
                self.slot = slot;
                self.state = State::On;
                self.current()
            }
            None => Ok(None),
        }
    }

    fn take_leaf(&mut self) -> Result<PageGuard<'s>> {
        self.leaf.take().ok_or_else(|| {
            BTreeError::corrupt(
                self.tree.root_id(),
                "cursor on a record without a latched leaf",
            )
        })
    }

    /// Records the outcome of a move and checks the bound ahead of it.
    fn land(
        &mut self,
        found: Option<(PageGuard<'s>, usize)>,
        forward: bool,
    ) -> Result<Option<RecordRef<'_>>> {
        let exhausted = if forward {
            State::AfterLast
        } else {
            State::BeforeFirst
        };
        let Some((g, slot)) = found else {
            self.leaf = None;
            self.state = exhausted;
            return Ok(None);
        };
        let outside = {
            let rec = rec_in(&self.tree, &g, slot)?;
            if forward {
                match &self.upper {
                    Bound::Unbounded => false,
                    Bound::Included(k) => k.with(|k| rec.compare_key(k) == Ordering::Greater),
                    Bound::Excluded(k) => k.with(|k| rec.compare_key(k) != Ordering::Less),
                }
            } else {
                match &self.lower {
                    Bound::Unbounded => false,
                    Bound::Included(k) => k.with(|k| rec.compare_key(k) == Ordering::Less),
                    Bound::Excluded(k) => k.with(|k| rec.compare_key(k) != Ordering::Greater),
                }
            }
        };
        if outside {
            drop(g);
            self.leaf = None;
            self.state = exhausted;
            return Ok(None);
        }
        self.leaf = Some(g);
        self.slot = slot;
        self.state = State::On;
        self.current()
    }

    /// First record `>= key` (`inclusive`) or `> key`, or the first of the
    /// tree for `None`.
    fn seek_forward(
        &self,
        key: Option<(&OwnedKey, bool)>,
    ) -> Result<Option<(PageGuard<'s>, usize)>> {
        let (g, pos) = match key {
            None => (self.tree.edge_leaf(self.store, false)?, 0),
            Some((k, inclusive)) => {
                let mode = if inclusive {
                    SearchMode::GreaterOrEqual
                } else {
                    SearchMode::Greater
                };
                k.with(|k| -> Result<(PageGuard<'s>, usize)> {
                    let g = self.tree.leaf_for_read(self.store, k, mode)?;
                    let id = g.page_id();
                    let pos = self
                        .tree
                        .view(g.data(), id)?
                        .search(&self.tree.layout, k, mode)
                        .map_err(|e| BTreeError::page(id, e))?;
                    Ok((g, pos))
                })?
            }
        };
        self.settle_forward(g, pos)
    }

    /// From slot `pos` of `g` (possibly past its end), the first record at
    /// or after it, moving right as needed.
    fn settle_forward(
        &self,
        mut g: PageGuard<'s>,
        mut pos: usize,
    ) -> Result<Option<(PageGuard<'s>, usize)>> {
        loop {
            let id = g.page_id();
            if pos < self.tree.view(g.data(), id)?.n_recs() {
                return Ok(Some((g, pos)));
            }
            let next = header::next_page(g.data());
            if next == FIL_NULL {
                return Ok(None);
            }
            let next_id = self.tree.id(next);
            let ng = self.store.pool.get(next_id, LatchMode::Shared)?;
            let page = self.tree.view(ng.data(), next_id)?;
            if !page.is_leaf() || header::prev_page(ng.data()) != id.page_no {
                return Err(BTreeError::corrupt(
                    next_id,
                    format!("right neighbour of leaf {id} does not link back"),
                ));
            }
            g = ng;
            pos = 0;
        }
    }

    /// Last record `<= key` (`inclusive`) or `< key`, or the last of the
    /// tree for `None`.
    fn seek_backward(
        &self,
        key: Option<(&OwnedKey, bool)>,
    ) -> Result<Option<(PageGuard<'s>, usize)>> {
        let Some((k, inclusive)) = key else {
            let g = self.tree.edge_leaf(self.store, true)?;
            let id = g.page_id();
            let n = self.tree.view(g.data(), id)?.n_recs();
            if n > 0 {
                return Ok(Some((g, n - 1)));
            }
            if header::prev_page(g.data()) != FIL_NULL {
                return Err(BTreeError::corrupt(id, "empty leaf that is not the root"));
            }
            return Ok(None);
        };
        let mode = if inclusive {
            SearchMode::Greater
        } else {
            SearchMode::GreaterOrEqual
        };
        k.with(|k| {
            for _ in 0..MAX_RESTARTS {
                let g = self.tree.leaf_for_read(self.store, k, mode)?;
                let id = g.page_id();
                let pos = self
                    .tree
                    .view(g.data(), id)?
                    .search(&self.tree.layout, k, mode)
                    .map_err(|e| BTreeError::page(id, e))?;
                if pos > 0 {
                    return Ok(Some((g, pos - 1)));
                }
                match self.left_step(g, k, inclusive)? {
                    LeftStep::Found(g, slot) => return Ok(Some((g, slot))),
                    LeftStep::Start => return Ok(None),
                    LeftStep::Restart => {}
                }
            }
            Err(BTreeError::corrupt(
                self.tree.root_id(),
                "backward positioning keeps finding inconsistent leaf links",
            ))
        })
    }

    /// `g` holds no record `< key` (`<= key` if `inclusive`): the answer is
    /// the last record of its left neighbour. See the module doc.
    fn left_step(
        &self,
        g: PageGuard<'s>,
        key: &[Option<&[u8]>],
        inclusive: bool,
    ) -> Result<LeftStep<'s>> {
        let id = g.page_id();
        let prev = header::prev_page(g.data());
        if prev == FIL_NULL {
            return Ok(LeftStep::Start);
        }
        let prev_id = self.tree.id(prev);
        if let Some(lg) = self.store.pool.try_get(prev_id, LatchMode::Shared)? {
            return Ok(match self.left_last(&lg, prev_id, id)? {
                Some(slot) => LeftStep::Found(lg, slot),
                None => LeftStep::Restart,
            });
        }
        drop(g);
        let lg = self.store.pool.get(prev_id, LatchMode::Shared)?;
        let g = self.store.pool.get(id, LatchMode::Shared)?;
        let Some(slot) = self.left_last(&lg, prev_id, id)? else {
            return Ok(LeftStep::Restart);
        };
        let Ok(page) = self.tree.view(g.data(), id) else {
            return Ok(LeftStep::Restart);
        };
        if !page.is_leaf() || header::prev_page(g.data()) != prev {
            return Ok(LeftStep::Restart);
        }
        let mode = if inclusive {
            SearchMode::Greater
        } else {
            SearchMode::GreaterOrEqual
        };
        let pos = page
            .search(&self.tree.layout, key, mode)
            .map_err(|e| BTreeError::page(id, e))?;
        if pos > 0 {
            // A smaller record arrived meanwhile: decide from the root.
            return Ok(LeftStep::Restart);
        }
        drop(g);
        Ok(LeftStep::Found(lg, slot))
    }

    /// Last slot of `lg` if it is a non-empty leaf of this tree linking to
    /// `right`.
    fn left_last(&self, lg: &PageGuard<'_>, lg_id: PageId, right: PageId) -> Result<Option<usize>> {
        let Ok(page) = self.tree.view(lg.data(), lg_id) else {
            return Ok(None);
        };
        if !page.is_leaf() || header::next_page(lg.data()) != right.page_no || page.n_recs() == 0 {
            return Ok(None);
        }
        Ok(Some(page.n_recs() - 1))
    }
}

/// A bound as the seek functions take it: the key and whether it is
/// included; `None` for no bound.
fn bound_key(bound: &Bound<OwnedKey>) -> Option<(&OwnedKey, bool)> {
    match bound {
        Bound::Unbounded => None,
        Bound::Included(k) => Some((k, true)),
        Bound::Excluded(k) => Some((k, false)),
    }
}
