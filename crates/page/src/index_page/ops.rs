//! The operations that change an index page.
//!
//! Each is a pure function of (page image, arguments): the same call on the
//! same bytes always produces the same bytes, which is what lets crash
//! recovery replay a [`RedoRecord`](crate::redo::RedoRecord) and land on the
//! image the running server had. Every operation validates everything it
//! needs *before* writing, so on `Err` the page is unchanged.

use basalt_common::{IndexId, PageId, TrxId, PAGE_SIZE};

use super::format::*;
use crate::error::{check_page_len, corrupt, PageError, Result};
use crate::header::{self, read_u16, write_u16, write_u64, PageType, FIL_PAGE_DATA};
use crate::rec::info::{read_rec_header, INFO_DELETED, REC_HEADER_LEN};

/// Formats `page` as an empty index page of `level` in index `index_id`.
/// Writes the file header (id, type, no siblings), zeroes the body and
/// leaves the page LSN alone.
pub fn init(
    page: &mut [u8],
    page_id: PageId,
    level: u16,
    index_id: IndexId,
    flags: u8,
) -> Result<()> {
    check_page_len(page)?;
    header::init_header(page, page_id, PageType::Index);
    page[FIL_PAGE_DATA..DIR_END].fill(0);
    write_u16(page, IH_LEVEL, level);
    write_u16(page, IH_N_RECS, 0);
    write_u16(page, IH_HEAP_TOP, HEAP_START as u16);
    write_u16(page, IH_GARBAGE, 0);
    write_u64(page, IH_INDEX_ID, index_id.0);
    write_u64(page, IH_MAX_TRX_ID, 0);
    page[IH_FLAGS] = flags;
    Ok(())
}

/// Inserts `rec` so that it becomes slot `slot` (`0..=n_recs`); later slots
/// move up by one. Compacts the page first if the free gap is too small but
/// garbage would make room; fails with [`PageError::NoSpace`] otherwise.
pub fn insert(page: &mut [u8], slot: usize, rec: &[u8]) -> Result<()> {
    let mut hdr = Hdr::read(page)?;
    if slot > hdr.n_recs {
        return Err(PageError::SlotOutOfRange {
            slot,
            n_recs: hdr.n_recs,
        });
    }
    validate_rec(&hdr, rec)?;
    let need = rec.len() + SLOT_SIZE;
    reserve(page, &mut hdr, need)?;
    let off = hdr.heap_top;
    page[off..off + rec.len()].copy_from_slice(rec);
    hdr.heap_top += rec.len();
    open_slots(page, &mut hdr, slot, 1);
    write_u16(page, slot_addr(slot), off as u16);
    store(page, &hdr);
    Ok(())
}

/// Inserts a run of records, given back to back in `recs` (each delimited
/// by the length in its fixed header), as slots `slot..slot + k`. All or
/// nothing: fails with [`PageError::NoSpace`] if they do not all fit.
/// An empty `recs` is a no-op.
pub fn insert_many(page: &mut [u8], slot: usize, recs: &[u8]) -> Result<()> {
    let mut hdr = Hdr::read(page)?;
    if slot > hdr.n_recs {
        return Err(PageError::SlotOutOfRange {
            slot,
            n_recs: hdr.n_recs,
        });
    }
    let mut k = 0usize;
    let mut pos = 0usize;
    while pos < recs.len() {
        let Some((_, len)) = read_rec_header(&recs[pos..]) else {
            return Err(PageError::BadRecord(
                "record run ends inside a record header".into(),
            ));
        };
        if len < REC_HEADER_LEN || pos + len > recs.len() {
            return Err(PageError::BadRecord(format!(
                "record {k} of a run claims {len} bytes, {} left",
                recs.len() - pos
            )));
        }
        validate_rec(&hdr, &recs[pos..pos + len])?;
        pos += len;
        k += 1;
    }
    if k == 0 {
        return Ok(());
    }
    let need = recs.len() + SLOT_SIZE * k;
    reserve(page, &mut hdr, need)?;
    let base = hdr.heap_top;
    page[base..base + recs.len()].copy_from_slice(recs);
    hdr.heap_top += recs.len();
    open_slots(page, &mut hdr, slot, k);
    let mut pos = 0usize;
    for j in 0..k {
        // Invariant: the run was parsed above; every header is in bounds.
        let (_, len) = read_rec_header(&recs[pos..]).expect("run validated above");
        write_u16(page, slot_addr(slot + j), (base + pos) as u16);
        pos += len;
    }
    store(page, &hdr);
    Ok(())
}

/// Removes slot `slot`; its bytes become garbage (or, if it was the last
/// record of the heap, the heap shrinks).
pub fn delete(page: &mut [u8], slot: usize) -> Result<()> {
    let mut hdr = Hdr::read(page)?;
    let (off, len) = hdr.slot_rec(page, slot)?;
    drop_record(&mut hdr, off, len);
    close_slots(page, &mut hdr, slot, slot + 1);
    store(page, &hdr);
    Ok(())
}

/// Removes slots `start..end`; their bytes become garbage.
pub fn delete_range(page: &mut [u8], start: usize, end: usize) -> Result<()> {
    let mut hdr = Hdr::read(page)?;
    if start > end || end > hdr.n_recs {
        return Err(PageError::SlotOutOfRange {
            slot: end.max(start),
            n_recs: hdr.n_recs,
        });
    }
    let mut freed = 0usize;
    for i in start..end {
        freed += hdr.slot_rec(page, i)?.1;
    }
    hdr.garbage += freed;
    close_slots(page, &mut hdr, start, end);
    store(page, &hdr);
    Ok(())
}

/// Replaces the record in slot `slot` by `rec` (update in place; the length
/// may change). Fails with [`PageError::NoSpace`] when the new version does
/// not fit even after compaction.
pub fn replace(page: &mut [u8], slot: usize, rec: &[u8]) -> Result<()> {
    let mut hdr = Hdr::read(page)?;
    let (off, old_len) = hdr.slot_rec(page, slot)?;
    validate_rec(&hdr, rec)?;
    let new_len = rec.len();
    let at_top = off + old_len == hdr.heap_top;
    if new_len <= old_len || (at_top && new_len - old_len <= hdr.gap()) {
        // In place: shrink (the tail becomes garbage, or leaves the heap when
        // the record is the last one), or grow into the free gap.
        page[off..off + new_len].copy_from_slice(rec);
        if at_top {
            hdr.heap_top = off + new_len;
        } else {
            hdr.garbage += old_len - new_len;
        }
    } else if new_len <= hdr.gap() {
        // Fresh copy at the heap top; the old version becomes garbage.
        let to = hdr.heap_top;
        page[to..to + new_len].copy_from_slice(rec);
        hdr.heap_top += new_len;
        hdr.garbage += old_len;
        write_u16(page, slot_addr(slot), to as u16);
    } else {
        let available = hdr.gap() + hdr.garbage + old_len;
        if new_len > available {
            return Err(PageError::NoSpace {
                needed: new_len,
                available,
            });
        }
        // Needs compaction: make sure it cannot fail before changing anything.
        live_extents_ok(page, &hdr)?;
        drop_record(&mut hdr, off, old_len);
        close_slots(page, &mut hdr, slot, slot + 1);
        reserve(page, &mut hdr, new_len + SLOT_SIZE)?;
        let to = hdr.heap_top;
        page[to..to + new_len].copy_from_slice(rec);
        hdr.heap_top += new_len;
        open_slots(page, &mut hdr, slot, 1);
        write_u16(page, slot_addr(slot), to as u16);
    }
    store(page, &hdr);
    Ok(())
}

/// Sets (`marked`) or clears the delete mark of the record in slot `slot`.
pub fn set_delete_mark(page: &mut [u8], slot: usize, marked: bool) -> Result<()> {
    let hdr = Hdr::read(page)?;
    let (off, _) = hdr.slot_rec(page, slot)?;
    if marked {
        page[off] |= INFO_DELETED;
    } else {
        page[off] &= !INFO_DELETED;
    }
    Ok(())
}

/// Rewrites the heap without garbage, records in slot (key) order starting
/// at the heap start, and zeroes everything between the new heap top and
/// the slot directory.
pub fn compact(page: &mut [u8]) -> Result<()> {
    let mut hdr = Hdr::read(page)?;
    compact_hdr(page, &mut hdr)?;
    store(page, &hdr);
    Ok(())
}

/// Sets the page's max trx id (secondary-index pages).
pub fn set_max_trx_id(page: &mut [u8], trx_id: TrxId) -> Result<()> {
    Hdr::read(page)?;
    write_u64(page, IH_MAX_TRX_ID, trx_id.0);
    Ok(())
}

/// Fails unless `rec` is a well-formed record for a page of `hdr.level`:
/// header length equal to the slice length, within limits, right kind.
fn validate_rec(hdr: &Hdr, rec: &[u8]) -> Result<()> {
    let Some((info, len)) = read_rec_header(rec) else {
        return Err(PageError::BadRecord(format!(
            "{} bytes cannot hold a record header",
            rec.len()
        )));
    };
    if len != rec.len() {
        return Err(PageError::BadRecord(format!(
            "record header says {len} bytes, {} given",
            rec.len()
        )));
    }
    if len > MAX_REC_LEN {
        return Err(PageError::RecordTooLarge {
            len,
            max: MAX_REC_LEN,
        });
    }
    hdr.check_kind(info)
        .map_err(|why| PageError::BadRecord(why.to_string()))
}

/// Ensures `need` contiguous free bytes, compacting if garbage makes the
/// difference. Leaves the page unchanged on error.
fn reserve(page: &mut [u8], hdr: &mut Hdr, need: usize) -> Result<()> {
    if need <= hdr.gap() {
        return Ok(());
    }
    let available = hdr.gap() + hdr.garbage;
    if need > available {
        return Err(PageError::NoSpace {
            needed: need,
            available,
        });
    }
    compact_hdr(page, hdr)
}

/// Accounts for a record leaving the page: the heap shrinks if it was the
/// topmost record, otherwise its bytes become garbage.
fn drop_record(hdr: &mut Hdr, off: usize, len: usize) {
    if off + len == hdr.heap_top {
        hdr.heap_top = off;
    } else {
        hdr.garbage += len;
    }
}

/// Checks that every slot is in bounds and the live bytes plus garbage
/// account exactly for the heap, i.e. that compaction will succeed.
fn live_extents_ok(page: &[u8], hdr: &Hdr) -> Result<usize> {
    let mut live = 0usize;
    for i in 0..hdr.n_recs {
        live += hdr.slot_rec(page, i)?.1;
    }
    if live + hdr.garbage != hdr.heap_top - HEAP_START {
        return Err(corrupt(
            page,
            format!(
                "live bytes {live} + garbage {} != heap size {}",
                hdr.garbage,
                hdr.heap_top - HEAP_START
            ),
        ));
    }
    Ok(live)
}

/// Compaction proper (header fields updated in `hdr`, not yet stored).
// PERF: copies the heap once through a stack buffer; no heap allocation.
fn compact_hdr(page: &mut [u8], hdr: &mut Hdr) -> Result<()> {
    live_extents_ok(page, hdr)?;
    let mut scratch = [0u8; PAGE_SIZE];
    scratch[HEAP_START..hdr.heap_top].copy_from_slice(&page[HEAP_START..hdr.heap_top]);
    let mut to = HEAP_START;
    for i in 0..hdr.n_recs {
        let from = usize::from(read_u16(page, slot_addr(i)));
        // Invariant: live_extents_ok bounds-checked every slot and header.
        let (_, len) = read_rec_header(&scratch[from..]).expect("slot validated");
        page[to..to + len].copy_from_slice(&scratch[from..from + len]);
        write_u16(page, slot_addr(i), to as u16);
        to += len;
    }
    page[to..hdr.dir_start()].fill(0);
    hdr.heap_top = to;
    hdr.garbage = 0;
    Ok(())
}

/// Makes room for `k` slots at position `at` (`<= n_recs`): slots
/// `at..n_recs` move `k` places up. The caller fills the new slots.
fn open_slots(page: &mut [u8], hdr: &mut Hdr, at: usize, k: usize) {
    let old_start = hdr.dir_start();
    let moved_end = DIR_END - SLOT_SIZE * at;
    page.copy_within(old_start..moved_end, old_start - SLOT_SIZE * k);
    hdr.n_recs += k;
}

/// Removes slots `start..end`: later slots move down, the vacated directory
/// bytes are zeroed. Empties the heap when no record is left.
fn close_slots(page: &mut [u8], hdr: &mut Hdr, start: usize, end: usize) {
    let k = end - start;
    let old_start = hdr.dir_start();
    let moved_end = DIR_END - SLOT_SIZE * end;
    page.copy_within(old_start..moved_end, old_start + SLOT_SIZE * k);
    page[old_start..old_start + SLOT_SIZE * k].fill(0);
    hdr.n_recs -= k;
    if hdr.n_recs == 0 {
        hdr.heap_top = HEAP_START;
        hdr.garbage = 0;
    }
}

/// Writes the mutable header fields back.
fn store(page: &mut [u8], hdr: &Hdr) {
    write_u16(page, IH_N_RECS, hdr.n_recs as u16);
    write_u16(page, IH_HEAP_TOP, hdr.heap_top as u16);
    write_u16(page, IH_GARBAGE, hdr.garbage as u16);
}
