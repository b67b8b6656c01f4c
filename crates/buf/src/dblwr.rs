//! The doublewrite area: torn-page protection.
//!
//! A 16 KiB page write is not atomic on most storage: a crash can leave the
//! first sectors new and the rest old (a *torn* page), which no redo record
//! can repair because redo is applied to a whole, valid page. So every page
//! is first written, with its checksum, to a fixed area of the system
//! tablespace, that area is fsynced, and only then is the page written in
//! place. After a crash, either the area copy is complete (the in-place
//! write may be torn: restore it from the copy) or the area write itself
//! was torn (then the in-place write had not started: the old page is
//! intact).
//!
//! ```text
//!  system tablespace (space 0)
//!   page  64 ............................. 183 | 184 ...... 191
//!        [ batch region: 120 slots             | single: 8 slots ]
//!          one sequential write per batch        one page per slot
//!          (flush-list batches)                  (dirty LRU victims)
//! ```
//!
//! Protocol (see `flush`): the batch region is owned by one batch at a time
//! (a mutex held from the area write to the fsync of the in-place writes);
//! a single-page slot is owned by one flush from its area write to the
//! fsync of its in-place write, so a slot's copy is only overwritten once
//! the page it protects is durable in place. Up to eight single-page
//! flushes run at once, each in its own slot.
//!
//! Recovery ([`recover_torn_pages`]) runs before redo is applied: for every
//! area copy whose checksum is valid, it reads the in-place page and, when
//! that fails verification, is all zeroes, or has an older page LSN than the
//! copy, writes the copy back in place and fsyncs. When the same page has
//! several copies the one with the highest page LSN wins.
//!
//! With `innodb_doublewrite=OFF` the area is not written and a torn page
//! stays torn (recovery then reports it as corrupt when it is read).

use std::collections::{BTreeMap, HashSet};

use basalt_common::layout::{DOUBLEWRITE_FIRST_PAGE, DOUBLEWRITE_PAGES, SYSTEM_FIRST_FREE_PAGE};
use basalt_common::{PageId, PageNo, SpaceId, PAGE_SIZE};
use basalt_io::AlignedBuf;
use basalt_page::header::{self, PageState};
use parking_lot::{Condvar, Mutex, MutexGuard};
use tracing::{info, warn};

use crate::error::BufResult;
use crate::space::Spaces;

/// Slots of the batch region.
pub const DBLWR_BATCH_PAGES: usize = 120;
/// Slots of the single-page region.
pub const DBLWR_SINGLE_SLOTS: usize = (DOUBLEWRITE_PAGES as usize) - DBLWR_BATCH_PAGES;
/// First page of the batch region in the system tablespace.
pub const DBLWR_BATCH_FIRST: PageNo = DOUBLEWRITE_FIRST_PAGE;
/// First page of the single-page region in the system tablespace.
pub const DBLWR_SINGLE_FIRST: PageNo = DOUBLEWRITE_FIRST_PAGE + DBLWR_BATCH_PAGES as u32;

/// Extends the system tablespace so the doublewrite area exists.
pub fn ensure_area(spaces: &Spaces) -> BufResult<()> {
    let sys = spaces.get(SpaceId::SYSTEM)?;
    if sys.size() < SYSTEM_FIRST_FREE_PAGE {
        let size = spaces.extend(SpaceId::SYSTEM, SYSTEM_FIRST_FREE_PAGE)?;
        sys.sync()?;
        info!(
            size,
            "system tablespace extended to hold the doublewrite area"
        );
    }
    Ok(())
}

/// Run-time state of the area.
#[derive(Debug)]
pub(crate) struct Doublewrite {
    /// Staging buffer of the batch region; its mutex is the region's owner.
    batch: Mutex<AlignedBuf>,
    /// Busy bits of the single-page slots.
    slots: Mutex<u8>,
    slot_freed: Condvar,
}

/// Ownership of one single-page slot; released on drop.
pub(crate) struct SlotGuard<'a> {
    owner: &'a Doublewrite,
    slot: usize,
}

impl Doublewrite {
    pub(crate) fn new() -> Doublewrite {
        const _: () = assert!(DBLWR_SINGLE_SLOTS <= 8, "slot bitmap is a u8");
        Doublewrite {
            batch: Mutex::new(AlignedBuf::with_alignment(
                DBLWR_BATCH_PAGES * PAGE_SIZE,
                PAGE_SIZE,
            )),
            slots: Mutex::new(0),
            slot_freed: Condvar::new(),
        }
    }

    /// Takes ownership of the batch region (held until the batch's in-place
    /// writes are durable).
    pub(crate) fn lock_batch(&self) -> MutexGuard<'_, AlignedBuf> {
        self.batch.lock()
    }

    /// Writes up to 120 page images to the batch region in one sequential
    /// write and fsyncs the system tablespace.
    pub(crate) fn write_batch<'p>(
        &self,
        area: &mut AlignedBuf,
        spaces: &Spaces,
        pages: impl Iterator<Item = &'p [u8]>,
    ) -> BufResult<()> {
        let mut n = 0;
        for page in pages {
            assert!(
                n < DBLWR_BATCH_PAGES,
                "flush batches are at most {DBLWR_BATCH_PAGES} pages"
            );
            area[n * PAGE_SIZE..(n + 1) * PAGE_SIZE].copy_from_slice(page);
            n += 1;
        }
        if n == 0 {
            return Ok(());
        }
        let sys = spaces.get(SpaceId::SYSTEM)?;
        sys.write_pages(DBLWR_BATCH_FIRST, &area[..n * PAGE_SIZE])?;
        sys.sync_page_writes().map(drop)
    }

    /// Waits for a free single-page slot and claims it.
    pub(crate) fn acquire_slot(&self) -> SlotGuard<'_> {
        let mut busy = self.slots.lock();
        loop {
            let free = (!*busy).trailing_zeros() as usize;
            if free < DBLWR_SINGLE_SLOTS {
                *busy |= 1 << free;
                return SlotGuard {
                    owner: self,
                    slot: free,
                };
            }
            self.slot_freed.wait(&mut busy);
        }
    }
}

impl SlotGuard<'_> {
    /// Writes one page image to this slot and fsyncs the system tablespace.
    pub(crate) fn write(&self, spaces: &Spaces, page: &[u8]) -> BufResult<()> {
        let sys = spaces.get(SpaceId::SYSTEM)?;
        sys.write_pages(DBLWR_SINGLE_FIRST + self.slot as u32, page)?;
        sys.sync_page_writes().map(drop)
    }
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        let mut busy = self.owner.slots.lock();
        *busy &= !(1u8 << self.slot);
        drop(busy);
        self.owner.slot_freed.notify_one();
    }
}

/// Repairs torn pages from the doublewrite area (crash recovery, before redo
/// is applied). Returns the pages rewritten, in page-id order.
///
/// Copies of pages whose tablespace is not open, or that lie beyond the end
/// of their file, are skipped: such a page was not torn (its write never
/// reached the file), and redo recreates it. Spaces written to are fsynced.
pub fn recover_torn_pages(spaces: &Spaces) -> BufResult<Vec<PageId>> {
    let sys = spaces.get(SpaceId::SYSTEM)?;
    if sys.size() < SYSTEM_FIRST_FREE_PAGE {
        return Ok(Vec::new());
    }
    let mut area = AlignedBuf::with_alignment(DOUBLEWRITE_PAGES as usize * PAGE_SIZE, PAGE_SIZE);
    sys.file().read_at(
        &mut area,
        u64::from(DOUBLEWRITE_FIRST_PAGE) * PAGE_SIZE as u64,
    )?;
    // Best (highest page LSN) valid copy of each page.
    let mut best: BTreeMap<PageId, usize> = BTreeMap::new();
    for slot in 0..DOUBLEWRITE_PAGES as usize {
        let copy = &area[slot * PAGE_SIZE..(slot + 1) * PAGE_SIZE];
        let id = header::page_id(copy);
        if header::verify(copy, id) != Ok(PageState::Valid) {
            continue;
        }
        if id.space == SpaceId::SYSTEM
            && (DOUBLEWRITE_FIRST_PAGE..SYSTEM_FIRST_FREE_PAGE).contains(&id.page_no)
        {
            continue;
        }
        let keep = match best.get(&id) {
            Some(&other) => {
                let other_copy = &area[other * PAGE_SIZE..(other + 1) * PAGE_SIZE];
                header::page_lsn(copy) > header::page_lsn(other_copy)
            }
            None => true,
        };
        if keep {
            best.insert(id, slot);
        }
    }
    let mut repaired = Vec::new();
    let mut touched = HashSet::new();
    let mut page = AlignedBuf::with_alignment(PAGE_SIZE, PAGE_SIZE);
    for (id, slot) in best {
        let copy = &area[slot * PAGE_SIZE..(slot + 1) * PAGE_SIZE];
        let Ok(space) = spaces.get(id.space) else {
            warn!(page = %id, "doublewrite copy of a page whose tablespace is not open; skipped");
            continue;
        };
        if id.page_no >= space.size() {
            continue;
        }
        space.read_page(id.page_no, &mut page)?;
        let restore = match header::verify(&page, id) {
            Err(_) | Ok(PageState::Zeroed) => true,
            Ok(PageState::Valid) => header::page_lsn(&page) < header::page_lsn(copy),
        };
        if restore {
            warn!(page = %id, lsn = %header::page_lsn(copy), "restoring page from the doublewrite area");
            space.write_pages(id.page_no, copy)?;
            touched.insert(id.space);
            repaired.push(id);
        }
    }
    for sid in touched {
        spaces.get(sid)?.sync()?;
    }
    Ok(repaired)
}
