//! The mini-transaction: latched pages, their changes, and the redo that
//! describes those changes.

use std::sync::Arc;

use basalt_buf::{BufferPool, LatchMode, PageGuard, Spaces};
use basalt_common::{Lsn, PageId, PAGE_SIZE};
use basalt_page::header;
use basalt_page::RedoRecord;
use basalt_wal::{Log, LsnRange};

use crate::error::{MtrError, MtrResult};

/// The pages and their redo: what every mini-transaction works against.
#[derive(Debug, Clone)]
pub struct PageStore {
    /// The redo log.
    pub log: Arc<Log>,
    /// The buffer pool (which owns the tablespace registry).
    pub pool: Arc<BufferPool>,
}

impl PageStore {
    /// Bundles a log and a buffer pool.
    pub fn new(log: Arc<Log>, pool: Arc<BufferPool>) -> PageStore {
        PageStore { log, pool }
    }

    /// The tablespace registry.
    pub fn spaces(&self) -> &Arc<Spaces> {
        self.pool.spaces()
    }
}

/// Handle to a page latched by a [`Mtr`] (an index into its memo).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageRef(usize);

/// Position in the memo, for releasing what was latched after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Savepoint(usize);

struct MemoSlot<'a> {
    /// `None` once released early.
    guard: Option<PageGuard<'a>>,
    /// Copy of the page taken before its first change in this mtr; put back
    /// if the mtr is dropped without committing.
    before: Option<Box<[u8]>>,
}

/// A mini-transaction. See the crate documentation for the protocol.
///
/// Dropping a mini-transaction without [`Mtr::commit`] undoes every change
/// it made (from the before-images) and releases its latches: nothing of it
/// reaches the log or the flush lists.
pub struct Mtr<'a> {
    store: &'a PageStore,
    memo: Vec<MemoSlot<'a>>,
    redo: Vec<u8>,
    n_records: usize,
}

impl std::fmt::Debug for Mtr<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mtr")
            .field("pages", &self.memo.len())
            .field("records", &self.n_records)
            .field("redo_bytes", &self.redo.len())
            .finish()
    }
}

impl<'a> Mtr<'a> {
    /// Starts a mini-transaction. Must be called with no page latched by
    /// the calling thread: it may block until the checkpoint leaves room in
    /// the redo log (`log.free_check()`).
    pub fn start(store: &'a PageStore) -> MtrResult<Mtr<'a>> {
        store.log.free_check()?;
        Ok(Mtr::start_unchecked(store))
    }

    /// Starts a mini-transaction without the redo free-space check. Only for
    /// callers that already hold latches and know the mtr is tiny, or for
    /// read-only mtrs.
    pub fn start_unchecked(store: &'a PageStore) -> Mtr<'a> {
        Mtr {
            store,
            memo: Vec::new(),
            redo: Vec::new(),
            n_records: 0,
        }
    }

    /// The store this mtr works against.
    pub fn store(&self) -> &'a PageStore {
        self.store
    }

    /// The latched page of `page_id`, if this mtr holds it.
    pub fn find(&self, page_id: PageId) -> Option<PageRef> {
        self.memo
            .iter()
            .position(|s| s.guard.as_ref().is_some_and(|g| g.page_id() == page_id))
            .map(PageRef)
    }

    fn push(&mut self, guard: PageGuard<'a>) -> PageRef {
        self.memo.push(MemoSlot {
            guard: Some(guard),
            before: None,
        });
        PageRef(self.memo.len() - 1)
    }

    /// Latches `page_id` in `mode`, reading it when needed. A page this mtr
    /// already holds is returned as is when the held mode suffices; asking
    /// for X on a page held in S is a latch-upgrade the pool cannot do and
    /// fails with [`MtrError::NotExclusive`].
    pub fn get(&mut self, page_id: PageId, mode: LatchMode) -> MtrResult<PageRef> {
        if let Some(r) = self.find(page_id) {
            return self.check_mode(r, mode);
        }
        let guard = self.store.pool.get(page_id, mode)?;
        Ok(self.push(guard))
    }

    /// As [`Mtr::get`], but returns `None` instead of waiting when another
    /// thread holds a conflicting latch (for latch-order exceptions).
    pub fn try_get(&mut self, page_id: PageId, mode: LatchMode) -> MtrResult<Option<PageRef>> {
        if let Some(r) = self.find(page_id) {
            return self.check_mode(r, mode).map(Some);
        }
        Ok(self
            .store
            .pool
            .try_get(page_id, mode)?
            .map(|g| self.push(g)))
    }

    /// Latches a page that may legitimately be all zeroes on disk (a page
    /// allocated by extending the file and never written).
    pub fn get_allow_zeroed(&mut self, page_id: PageId, mode: LatchMode) -> MtrResult<PageRef> {
        if let Some(r) = self.find(page_id) {
            return self.check_mode(r, mode);
        }
        let guard = self.store.pool.get_allow_zeroed(page_id, mode)?;
        Ok(self.push(guard))
    }

    /// X-latches a zeroed frame for `page_id` without reading it: the page
    /// is about to be initialised (a freshly allocated page).
    pub fn create(&mut self, page_id: PageId) -> MtrResult<PageRef> {
        let guard = self.store.pool.create(page_id)?;
        Ok(self.push(guard))
    }

    fn check_mode(&self, r: PageRef, mode: LatchMode) -> MtrResult<PageRef> {
        let g = self.guard(r);
        if mode == LatchMode::Exclusive && g.mode() != LatchMode::Exclusive {
            return Err(MtrError::NotExclusive(g.page_id()));
        }
        Ok(r)
    }

    fn guard(&self, r: PageRef) -> &PageGuard<'a> {
        self.memo[r.0]
            .guard
            .as_ref()
            .expect("PageRef used after its page was released")
    }

    /// The bytes of a latched page.
    #[inline]
    pub fn page(&self, r: PageRef) -> &[u8] {
        self.guard(r).data()
    }

    /// The id of a latched page.
    pub fn page_id(&self, r: PageRef) -> PageId {
        self.guard(r).page_id()
    }

    /// The latch mode held on a page.
    pub fn mode(&self, r: PageRef) -> LatchMode {
        self.guard(r).mode()
    }

    /// True when this mtr changed the page.
    pub fn is_modified(&self, r: PageRef) -> bool {
        self.memo[r.0].before.is_some()
    }

    /// Applies `rec` to the X-latched page `r` and appends it to the mtr's
    /// redo. On error the page is unchanged and nothing is logged.
    // PERF: called for every page change; the before-image copy happens once
    // per page per mtr.
    pub fn apply(&mut self, r: PageRef, rec: &RedoRecord<'_>) -> MtrResult<()> {
        let slot = &mut self.memo[r.0];
        let guard = slot
            .guard
            .as_mut()
            .expect("PageRef used after its page was released");
        let page_id = guard.page_id();
        if guard.mode() != LatchMode::Exclusive {
            return Err(MtrError::NotExclusive(page_id));
        }
        if slot.before.is_none() {
            slot.before = Some(Box::from(guard.data()));
        }
        rec.apply(page_id, guard.data_mut())?;
        rec.encode(page_id, &mut self.redo);
        self.n_records += 1;
        Ok(())
    }

    /// Releases an unmodified page before commit (latch coupling).
    ///
    /// # Panics
    /// When the page was modified: its latch must be held until commit.
    pub fn release(&mut self, r: PageRef) {
        let slot = &mut self.memo[r.0];
        assert!(
            slot.before.is_none(),
            "release of a page modified in this mtr"
        );
        slot.guard = None;
    }

    /// Marks the current end of the memo.
    pub fn savepoint(&self) -> Savepoint {
        Savepoint(self.memo.len())
    }

    /// Releases every unmodified page latched after `sp`, newest first.
    /// Modified pages stay latched until commit.
    pub fn release_since(&mut self, sp: Savepoint) {
        for slot in self.memo[sp.0..].iter_mut().rev() {
            if slot.before.is_none() {
                slot.guard = None;
            }
        }
    }

    /// True when the mtr has changes to commit.
    pub fn has_changes(&self) -> bool {
        self.n_records > 0
    }

    /// Bytes of redo collected so far.
    pub fn redo_len(&self) -> usize {
        self.redo.len()
    }

    /// Commits: writes the redo group to the log buffer, stamps every
    /// changed page with the group's end LSN, puts newly dirtied pages on
    /// the flush lists, and releases all latches. Returns the LSN range of
    /// the group (`None` when nothing was changed). Durability is the
    /// caller's choice: wait with `log.commit_wait(range.end)` or
    /// `log.flush_up_to(range.end)`.
    ///
    /// If the log refuses the group (a failed log), the changes are undone
    /// as by dropping the mtr and the error is returned.
    pub fn commit(mut self) -> MtrResult<Option<LsnRange>> {
        if self.n_records == 0 {
            self.release_all();
            return Ok(None);
        }
        RedoRecord::MtrEnd.encode(PageId::default(), &mut self.redo);
        let range = self.store.log.append(&self.redo)?;
        for slot in &mut self.memo {
            if slot.before.take().is_some() {
                let guard = slot.guard.as_mut().expect("modified pages stay latched");
                header::set_page_lsn(guard.data_mut(), range.end);
                self.store.pool.note_modified(guard, range.start, range.end);
            }
        }
        self.store.log.mark_closed(range);
        self.release_all();
        Ok(Some(range))
    }

    /// Commits and waits until the group is durable (fsynced), whatever
    /// `innodb_flush_log_at_trx_commit` says. Returns the end LSN.
    pub fn commit_durable(self) -> MtrResult<Option<Lsn>> {
        let store = self.store;
        match self.commit()? {
            Some(range) => {
                store.log.flush_up_to(range.end)?;
                Ok(Some(range.end))
            }
            None => Ok(None),
        }
    }

    fn release_all(&mut self) {
        while let Some(slot) = self.memo.pop() {
            drop(slot.guard);
        }
    }
}

impl Drop for Mtr<'_> {
    fn drop(&mut self) {
        for slot in self.memo.iter_mut().rev() {
            if let (Some(before), Some(guard)) = (slot.before.take(), slot.guard.as_mut()) {
                debug_assert_eq!(before.len(), PAGE_SIZE);
                guard.data_mut().copy_from_slice(&before);
            }
        }
        self.release_all();
    }
}
