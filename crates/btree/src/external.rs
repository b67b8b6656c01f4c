//! Long values: which fields leave the record, and the overflow chains
//! that hold them.
//!
//! **Policy** (like InnoDB's DYNAMIC row format): a record is first encoded
//! with every value inline. While it is longer than
//! [`MAX_REC_LEN`](basalt_page::MAX_REC_LEN) (so that two records always
//! fit a page), the longest value still inline that *may* go external —
//! a non-key variable-length field declared longer than 255 bytes whose
//! value is longer than its 20-byte reference — is moved to a chain of
//! overflow pages. If nothing is left to move, the insert fails with
//! [`BTreeError::RecordTooLarge`].
//!
//! **Chains** are written back to front, so each page is written once with
//! its final `next` pointer and the head is known last:
//!
//! ```text
//!   record ── ExternRef{space, head, offset 38, total_len}
//!               │
//!               ▼
//!   [chunk 0: 16330 B] ──▶ [chunk 1: 16330 B] ──▶ … ──▶ [last: rest] ──▶ FIL_NULL
//! ```
//!
//! **Which mini-transaction writes a chain.** A chain of a 64 MiB value
//! is 4,000+ pages; one mini-transaction cannot carry it (the log refuses
//! groups above `Log::max_group_size`, and every page it touches stays
//! latched and pinned until commit). So, unless the caller's
//! mini-transaction already holds the tablespace header, chains are
//! written *before* the tree is touched, in mini-transactions of their own
//! of at most [`chain_pages_per_mtr`] pages, each committed at once. The
//! pages are unreachable until the record that points to them commits: a
//! crash in between leaks them (they stay allocated, referenced by
//! nothing); an operation that fails in between (duplicate key, ...)
//! frees them again. When the caller's mini-transaction already holds the
//! header (it allocated or freed pages in an earlier operation), the chain
//! is written inside it, and values too large for that are refused with
//! [`BTreeError::ValueTooLarge`] before anything changes.
//!
//! **Freeing**: removing or updating a record frees its old chains in the
//! same mini-transaction as the record change, after the tree change
//! (chain pages are latched last; only a thread holding the record's leaf
//! latch ever latches them, so their place in the latch order cannot
//! deadlock). Every freed page stays latched until commit, so a record
//! whose values span N overflow pages needs N free buffer-pool frames to
//! be removed or updated.
//!
//! **Reading**: a reader holding the leaf latch (shared) follows the chain
//! with shared latches, one page at a time; the chain cannot be freed
//! meanwhile because freeing needs the leaf's exclusive latch.

use std::borrow::Cow;

use basalt_buf::LatchMode;
use basalt_common::{PageId, FIL_NULL, PAGE_SIZE};
use basalt_mtr::{Mtr, PageRef, PageStore};
use basalt_page::overflow::{self, pages_needed, OVERFLOW_CAPACITY, OVERFLOW_HEADER};
use basalt_page::rec::{
    ExternRef, FieldKind, FieldValue, RecordRef, SysCols, EXTERN_REF_LEN, SHORT_VAR_MAX,
};
use basalt_page::{PageError, RedoRecord, MAX_REC_LEN};

use crate::error::{BTreeError, Result};
use crate::key::Scratch;
use crate::record::Row;
use crate::tree::{BTree, MAX_NODE_PTR_LEN};

/// Most overflow pages one chain mini-transaction writes.
pub const CHAIN_PAGES_MAX_PER_MTR: u64 = 64;

/// Overflow pages written or freed per own mini-transaction: at most
/// [`CHAIN_PAGES_MAX_PER_MTR`], and at most a quarter of the log's largest
/// group.
pub fn chain_pages_per_mtr(store: &PageStore) -> u64 {
    let by_log = store.log.max_group_size() / (4 * PAGE_SIZE as u64);
    by_log.clamp(1, CHAIN_PAGES_MAX_PER_MTR)
}

/// An encoded leaf record ready to go into the tree, with the chains
/// written for it.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The encoded record.
    pub(crate) rec: Scratch,
    /// Chains written for this record.
    pub(crate) chains: Vec<ExternRef>,
    /// True when the chains were committed in mini-transactions of their
    /// own (and must be freed the same way if the operation fails).
    pub(crate) committed: bool,
}

/// Where chain pages are written: the caller's mini-transaction or a
/// sequence of committed ones.
pub(crate) enum ChainSink<'m, 'a> {
    /// Inside the caller's mini-transaction.
    Caller(&'m mut Mtr<'a>),
    /// In mini-transactions of their own.
    Own {
        store: &'a PageStore,
        mtr: Option<Mtr<'a>>,
        pages: u64,
        per_mtr: u64,
        /// Run `free_check` when starting one (only when the calling thread
        /// holds no latch).
        free_check: bool,
    },
}

impl<'m, 'a> ChainSink<'m, 'a> {
    /// A sink of own mini-transactions.
    pub(crate) fn own(store: &'a PageStore, free_check: bool) -> ChainSink<'m, 'a> {
        ChainSink::Own {
            store,
            mtr: None,
            pages: 0,
            per_mtr: chain_pages_per_mtr(store),
            free_check,
        }
    }

    fn mtr(&mut self) -> Result<&mut Mtr<'a>> {
        match self {
            ChainSink::Caller(m) => Ok(m),
            ChainSink::Own {
                store,
                mtr,
                free_check,
                ..
            } => {
                if mtr.is_none() {
                    *mtr = Some(if *free_check {
                        Mtr::start(store)?
                    } else {
                        Mtr::start_unchecked(store)
                    });
                }
                // Invariant: set just above.
                Ok(mtr.as_mut().expect("started above"))
            }
        }
    }

    fn page_done(&mut self) -> Result<()> {
        if let ChainSink::Own {
            mtr,
            pages,
            per_mtr,
            ..
        } = self
        {
            *pages += 1;
            if *pages >= *per_mtr {
                *pages = 0;
                if let Some(m) = mtr.take() {
                    m.commit()?;
                }
            }
        }
        Ok(())
    }

    /// Commits what an own sink has pending.
    pub(crate) fn finish(self) -> Result<()> {
        if let ChainSink::Own { mtr: Some(m), .. } = self {
            m.commit()?;
        }
        Ok(())
    }
}

impl BTree {
    /// The system columns the encoder wants: given for clustered indexes
    /// only.
    #[inline]
    pub(crate) fn enc_sys(&self, sys: SysCols) -> Option<SysCols> {
        self.is_clustered().then_some(sys)
    }

    /// Checks the number of values and the node-pointer length of the key.
    // PERF: one node-pointer encoding into a reused buffer.
    pub(crate) fn check_key_values(&self, values: &[Option<&[u8]>]) -> Result<()> {
        if values.len() != self.layout.n_fields() {
            return Err(self.bad_value(format!(
                "{} values for {} fields",
                values.len(),
                self.layout.n_fields()
            )));
        }
        let mut probe = Scratch::new();
        let n_key = self.layout.n_key();
        match self
            .layout
            .encode_node_ptr(&values[..n_key], 0, false, &mut probe)
        {
            Ok(len) if len <= MAX_NODE_PTR_LEN => Ok(()),
            Ok(len) => Err(BTreeError::KeyTooLong {
                len,
                max: MAX_NODE_PTR_LEN,
            }),
            Err(PageError::RecordTooLarge { len, .. }) => Err(BTreeError::KeyTooLong {
                len,
                max: MAX_NODE_PTR_LEN,
            }),
            Err(e) => Err(self.bad_value(e.to_string())),
        }
    }

    /// Encodes `values` into `out`; returns the fields that must go to
    /// overflow pages (then `out` is empty). See the module doc.
    // PERF: the common case (everything inline) encodes once into a reused
    // buffer and returns an empty, unallocated list.
    pub(crate) fn encode_or_plan(
        &self,
        values: &[Option<&[u8]>],
        sys: SysCols,
        out: &mut Vec<u8>,
    ) -> Result<Vec<usize>> {
        let sys = self.enc_sys(sys);
        let mut ext: Vec<usize> = Vec::new();
        let dummy = FieldValue::External(ExternRef {
            space: self.space,
            page_no: FIL_NULL,
            offset: OVERFLOW_HEADER as u32,
            total_len: 0,
        });
        loop {
            out.clear();
            let res = if ext.is_empty() {
                self.layout.encode_leaf(values, sys, out)
            } else {
                let fv: Vec<FieldValue<'_>> = values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        if ext.contains(&i) {
                            dummy
                        } else {
                            FieldValue::from(*v)
                        }
                    })
                    .collect();
                self.layout.encode_leaf_values(&fv, sys, out)
            };
            match res {
                Ok(_) => {
                    if !ext.is_empty() {
                        out.clear();
                    }
                    return Ok(ext);
                }
                Err(PageError::RecordTooLarge { len, max }) => {
                    let pick = (self.layout.n_key()..values.len())
                        .filter(|i| !ext.contains(i) && self.may_be_external(*i))
                        .filter_map(|i| values[i].map(|v| (v.len(), i)))
                        .filter(|(len, _)| *len > EXTERN_REF_LEN + 2)
                        .max();
                    match pick {
                        Some((_, i)) => ext.push(i),
                        None => return Err(BTreeError::RecordTooLarge { len, max }),
                    }
                }
                Err(e) => return Err(self.bad_value(e.to_string())),
            }
        }
    }

    /// True if user field `i` may be stored externally.
    fn may_be_external(&self, i: usize) -> bool {
        i >= self.layout.n_key()
            && matches!(self.layout.field(i).kind, FieldKind::Var { max_len } if max_len > SHORT_VAR_MAX)
    }

    /// Encodes `values` (already checked by [`BTree::check_key_values`])
    /// for insertion through `mtr`, writing overflow chains first when
    /// needed (see the module doc for which mini-transaction writes them).
    /// Nothing in the tree is latched yet.
    pub(crate) fn prepare(
        &self,
        mtr: &mut Mtr<'_>,
        values: &[Option<&[u8]>],
        sys: SysCols,
    ) -> Result<Prepared> {
        let mut rec = Scratch::new();
        let ext = self.encode_or_plan(values, sys, &mut rec)?;
        if ext.is_empty() {
            return Ok(Prepared {
                rec,
                chains: Vec::new(),
                committed: false,
            });
        }
        let total_pages: u64 = ext
            .iter()
            .map(|&i| pages_needed(values[i].map_or(0, <[u8]>::len) as u64))
            .sum();
        let store = mtr.store();
        let in_caller = mtr.find(PageId::new(self.space, 0)).is_some();
        let mut chains = Vec::with_capacity(ext.len());
        if in_caller {
            let per_page = PAGE_SIZE as u64 + 64;
            let room_log = store
                .log
                .max_group_size()
                .saturating_sub(mtr.redo_len() as u64)
                / 2;
            let room_pool = (store.pool.capacity() as u64 / 4).saturating_mul(PAGE_SIZE as u64);
            let max = room_log.min(room_pool);
            if total_pages * per_page > max {
                let len = ext
                    .iter()
                    .map(|&i| values[i].map_or(0, <[u8]>::len) as u64)
                    .sum();
                return Err(BTreeError::ValueTooLarge { len, max });
            }
            let mut sink = ChainSink::Caller(mtr);
            for &i in &ext {
                chains.push(self.write_chain(&mut sink, values[i].unwrap_or_default())?);
            }
        } else {
            let mut sink = ChainSink::own(store, !mtr.has_changes());
            let written = (|| {
                for &i in &ext {
                    let c = self.write_chain(&mut sink, values[i].unwrap_or_default());
                    chains.push(c?);
                }
                Ok::<(), BTreeError>(())
            })();
            match written.and_then(|()| sink.finish()) {
                Ok(()) => {}
                Err(e) => {
                    // Chains whose last page was committed are reachable from
                    // nothing: give them back (best effort; a failure here
                    // only leaks pages).
                    for c in &chains {
                        let _ = self.free_chain_own(store, c, false);
                    }
                    return Err(e);
                }
            }
        }
        let fv: Vec<FieldValue<'_>> = values
            .iter()
            .enumerate()
            .map(|(i, v)| match ext.iter().position(|&e| e == i) {
                Some(k) => FieldValue::External(chains[k]),
                None => FieldValue::from(*v),
            })
            .collect();
        rec.clear();
        self.layout
            .encode_leaf_values(&fv, self.enc_sys(sys), &mut rec)
            .map_err(|e| self.bad_value(e.to_string()))?;
        debug_assert!(rec.len() <= MAX_REC_LEN);
        Ok(Prepared {
            rec,
            chains,
            committed: !in_caller,
        })
    }

    /// Undoes [`BTree::prepare`] after the operation failed. Chains written
    /// in the caller's mini-transaction are freed in it again (so it may
    /// still commit its other changes); chains written in own
    /// mini-transactions are freed in new ones, unless `mtr` holds the
    /// tablespace header (freeing would wait for it): then those pages leak,
    /// as after a crash.
    pub(crate) fn discard(&self, mtr: &mut Mtr<'_>, prepared: &Prepared) {
        if prepared.chains.is_empty() {
            return;
        }
        if !prepared.committed {
            for c in &prepared.chains {
                if let Err(e) = self.free_chain(mtr, c, self.id(c.page_no)) {
                    tracing::warn!(index = self.index_id.0, error = %e, "overflow pages leak");
                }
            }
            return;
        }
        if mtr.find(PageId::new(self.space, 0)).is_some() {
            tracing::warn!(
                index = self.index_id.0,
                chains = prepared.chains.len(),
                "overflow pages of a failed insert leak: the mini-transaction holds the space header"
            );
            return;
        }
        for c in &prepared.chains {
            if let Err(e) = self.free_chain_own(mtr.store(), c, !mtr.has_changes()) {
                tracing::warn!(index = self.index_id.0, error = %e, "overflow pages leak");
            }
        }
    }

    /// Writes `data` as a chain of overflow pages, back to front.
    pub(crate) fn write_chain(
        &self,
        sink: &mut ChainSink<'_, '_>,
        data: &[u8],
    ) -> Result<ExternRef> {
        let mut next = FIL_NULL;
        for chunk in data.chunks(OVERFLOW_CAPACITY).rev() {
            let mtr = sink.mtr()?;
            let r = mtr.alloc_page(self.space)?;
            self.apply(mtr, r, &RedoRecord::InitOverflow)?;
            self.apply(
                mtr,
                r,
                &RedoRecord::OverflowWrite {
                    next,
                    data: Cow::Borrowed(chunk),
                },
            )?;
            next = mtr.page_id(r).page_no;
            sink.page_done()?;
        }
        Ok(ExternRef {
            space: self.space,
            page_no: next,
            offset: OVERFLOW_HEADER as u32,
            total_len: data.len() as u64,
        })
    }

    /// Checks the parts of a reference that do not need a page read.
    fn check_ref(&self, ext: &ExternRef, owner: PageId) -> Result<()> {
        if ext.space != self.space
            || ext.offset as usize != OVERFLOW_HEADER
            || ext.page_no == 0
            || (ext.page_no == FIL_NULL) != (ext.total_len == 0)
        {
            return Err(BTreeError::corrupt(
                owner,
                format!("bad external reference {ext:?}"),
            ));
        }
        Ok(())
    }

    /// Appends the value of an external field to `out`, following its chain
    /// with shared latches. The caller keeps the record's version alive
    /// (holds its leaf latch, or knows by MVCC that nobody frees it).
    /// Returns the number of pages.
    pub(crate) fn read_chain_into(
        &self,
        store: &PageStore,
        ext: &ExternRef,
        owner: PageId,
        out: &mut Vec<u8>,
    ) -> Result<u64> {
        out.reserve(ext.total_len.min(1 << 24) as usize);
        self.walk_chain(store, ext, owner, |_, data| out.extend_from_slice(data))
    }

    /// Follows a chain page by page (S latch, one page at a time), checking
    /// page types, chunk sizes and the total length, and calls `f` with each
    /// page number and chunk. Returns the number of pages.
    pub(crate) fn walk_chain(
        &self,
        store: &PageStore,
        ext: &ExternRef,
        owner: PageId,
        mut f: impl FnMut(basalt_common::PageNo, &[u8]),
    ) -> Result<u64> {
        self.check_ref(ext, owner)?;
        let max_pages = pages_needed(ext.total_len);
        let (mut no, mut read, mut pages) = (ext.page_no, 0u64, 0u64);
        while no != FIL_NULL {
            pages += 1;
            let id = self.id(no);
            if pages > max_pages || no == 0 {
                return Err(BTreeError::corrupt(
                    id,
                    format!(
                        "overflow chain of {} bytes runs past {max_pages} pages",
                        ext.total_len
                    ),
                ));
            }
            let g = store.pool.get(id, LatchMode::Shared)?;
            let chunk = overflow::read_chunk(g.data()).map_err(|e| BTreeError::page(id, e))?;
            let full = chunk.next != FIL_NULL;
            if read + chunk.data.len() as u64 > ext.total_len
                || (full && chunk.data.len() != OVERFLOW_CAPACITY)
                || chunk.data.is_empty()
            {
                return Err(BTreeError::corrupt(
                    id,
                    format!(
                        "overflow chunk of {} bytes does not fit a value of {} bytes ({read} read)",
                        chunk.data.len(),
                        ext.total_len
                    ),
                ));
            }
            f(no, chunk.data);
            read += chunk.data.len() as u64;
            no = chunk.next;
        }
        if read != ext.total_len {
            return Err(BTreeError::corrupt(
                owner,
                format!(
                    "overflow chain holds {read} bytes, reference says {}",
                    ext.total_len
                ),
            ));
        }
        Ok(pages)
    }

    /// Reads a whole externally stored value. Only safe while the record
    /// version that references it cannot be purged or updated (the caller
    /// holds its leaf latch, or a lock / read view guarantees it).
    pub fn read_external(&self, store: &PageStore, ext: &ExternRef) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.read_chain_into(store, ext, self.id(ext.page_no), &mut out)?;
        Ok(out)
    }

    /// Materialises a record (held under its leaf latch `owner`).
    pub(crate) fn materialize(
        &self,
        store: &PageStore,
        rec: &RecordRef<'_>,
        owner: PageId,
    ) -> Result<Row> {
        let mut values = Vec::with_capacity(rec.n_fields());
        for i in 0..rec.n_fields() {
            values.push(match rec.extern_ref(i) {
                Some(ext) => {
                    let mut v = Vec::new();
                    self.read_chain_into(store, &ext, owner, &mut v)?;
                    Some(v)
                }
                None => rec.field(i).map(<[u8]>::to_vec),
            });
        }
        let sys = match (rec.trx_id(), rec.roll_ptr()) {
            (Some(trx_id), Some(roll_ptr)) => Some(SysCols { trx_id, roll_ptr }),
            _ => None,
        };
        Ok(Row {
            values,
            delete_marked: rec.is_delete_marked(),
            sys,
        })
    }

    /// External references of a record (empty, unallocated, when it has
    /// none).
    pub(crate) fn extern_refs(rec: &RecordRef<'_>) -> Vec<ExternRef> {
        if !rec.has_external() {
            return Vec::new();
        }
        (0..rec.n_fields())
            .filter_map(|i| rec.extern_ref(i))
            .collect()
    }

    /// Frees a chain inside `mtr`: latches every page of it first (in chain
    /// order), then returns them to the free list.
    pub(crate) fn free_chain(
        &self,
        mtr: &mut Mtr<'_>,
        ext: &ExternRef,
        owner: PageId,
    ) -> Result<()> {
        self.check_ref(ext, owner)?;
        let max_pages = pages_needed(ext.total_len);
        let mut refs: Vec<PageRef> = Vec::with_capacity(max_pages.min(4096) as usize);
        let mut no = ext.page_no;
        while no != FIL_NULL {
            let id = self.id(no);
            if refs.len() as u64 >= max_pages || no == 0 {
                return Err(BTreeError::corrupt(
                    id,
                    "overflow chain longer than its value",
                ));
            }
            let r = mtr.get(id, LatchMode::Exclusive)?;
            let chunk = overflow::read_chunk(mtr.page(r)).map_err(|e| BTreeError::page(id, e))?;
            no = chunk.next;
            refs.push(r);
        }
        for r in refs {
            mtr.free_page(r)?;
        }
        Ok(())
    }

    /// Frees a chain nobody references any more, in mini-transactions of
    /// their own (at most [`chain_pages_per_mtr`] pages each).
    pub(crate) fn free_chain_own(
        &self,
        store: &PageStore,
        ext: &ExternRef,
        free_check: bool,
    ) -> Result<()> {
        let per_mtr = chain_pages_per_mtr(store);
        let max_pages = pages_needed(ext.total_len);
        let mut seen = 0u64;
        let mut no = ext.page_no;
        while no != FIL_NULL {
            let mut mtr = if free_check {
                Mtr::start(store)?
            } else {
                Mtr::start_unchecked(store)
            };
            let mut refs = Vec::new();
            while no != FIL_NULL && (refs.len() as u64) < per_mtr {
                let id = self.id(no);
                seen += 1;
                if seen > max_pages || no == 0 {
                    return Err(BTreeError::corrupt(
                        id,
                        "overflow chain longer than its value",
                    ));
                }
                let r = mtr.get(id, LatchMode::Exclusive)?;
                let chunk =
                    overflow::read_chunk(mtr.page(r)).map_err(|e| BTreeError::page(id, e))?;
                no = chunk.next;
                refs.push(r);
            }
            for r in refs {
                mtr.free_page(r)?;
            }
            mtr.commit()?;
        }
        Ok(())
    }
}
