//! The log buffer: a byte ring that many threads fill at once, each in its
//! own reserved LSN range, and one consumer (the log writer) drains.
//!
//! ```text
//!  LSN ------------------------------------------------------------------->
//!        released        ready (link tail)                 next (reserve)
//!           |                 |                                 |
//!   ........[=== published ===][ copying | done | copying ]......
//!           ^ consumer reads   ^ appenders write their own ranges
//!
//!  byte position of LSN x in the ring = x mod size
//!  an appender may write LSN x only when x < released + size
//! ```
//!
//! This is the only module of the crate with `unsafe` code. Soundness rests
//! on four facts the safe API below enforces at run time:
//!
//! 1. A [`Reservation`] comes only from [`LogBuffer::reserve`] (one atomic
//!    `fetch_add`), so reservations never overlap, and it is tied to the
//!    buffer that made it.
//! 2. An appender writes LSN `x` only inside its own reservation and only
//!    after seeing `x < released + size` (acquire), so the ring byte it
//!    writes is not one the consumer may still read (those are LSNs in
//!    `[released, x)`, all less than `size` below `x`).
//! 3. A range is published to the link buffer (release) only after its
//!    bytes are copied, and the consumer reads only below the link tail,
//!    which it loads with acquire: it sees complete bytes, and no appender
//!    still writes there (their unpublished ranges lie at or above the tail).
//! 4. There is one [`Consumer`] per buffer (created with it, not cloneable);
//!    it releases space only below the link tail, after copying it out.

use std::cell::UnsafeCell;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_utils::CachePadded;

use crate::link::LinkBuf;

/// See the module documentation.
pub(crate) struct LogBuffer {
    cells: Box<[UnsafeCell<u8>]>,
    size: u64,
    /// Next LSN to reserve: the current LSN.
    next: CachePadded<AtomicU64>,
    /// Every LSN below this was copied out by the consumer: ring bytes of
    /// LSNs below `released + size` are free.
    released: CachePadded<AtomicU64>,
    /// Published (fully copied) ranges; its tail is the ready LSN.
    written: LinkBuf,
}

// SAFETY: the cells are only accessed through `Reservation::copy` (disjoint
// reserved, unpublished, space-checked ranges) and `Consumer::copy_out`
// (published, unreleased ranges); the module documentation shows these never
// touch the same byte at the same time, and the atomics order the hand-offs.
unsafe impl Sync for LogBuffer {}

impl fmt::Debug for LogBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogBuffer")
            .field("size", &self.size)
            .field("next", &self.next.load(Ordering::Relaxed))
            .field("released", &self.released.load(Ordering::Relaxed))
            .field("ready", &self.written.tail())
            .finish()
    }
}

/// An LSN range reserved by one `append`, filled piece by piece.
#[derive(Debug)]
pub(crate) struct Reservation {
    buffer_id: usize,
    start: u64,
    end: u64,
    /// Bytes below this LSN are copied and published.
    done: u64,
}

impl Reservation {
    pub(crate) fn start(&self) -> u64 {
        self.start
    }

    pub(crate) fn end(&self) -> u64 {
        self.end
    }

    /// First LSN not yet copied.
    pub(crate) fn done(&self) -> u64 {
        self.done
    }
}

/// Why [`LogBuffer::fill`] could not copy the next piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FillBlocked {
    /// The ring has no free space at the piece's LSNs: wait for the consumer
    /// to release up to at least this LSN.
    Space(u64),
    /// The link buffer has no free slot for the piece's start: wait for the
    /// ready LSN to move.
    Link,
}

/// The single reader of a [`LogBuffer`] (the log writer).
#[derive(Debug)]
pub(crate) struct Consumer {
    buffer_id: usize,
}

impl LogBuffer {
    /// A zeroed ring of `size` bytes starting at LSN `start`, with
    /// `link_slots` publication slots; and its one consumer.
    pub(crate) fn new(size: usize, link_slots: usize, start: u64) -> (LogBuffer, Consumer) {
        let bytes = vec![0u8; size].into_boxed_slice();
        // SAFETY: `UnsafeCell<u8>` is `repr(transparent)` over `u8`, so a
        // boxed `[u8]` and a boxed `[UnsafeCell<u8>]` of the same length have
        // the same layout; ownership moves from one box to the other.
        let cells = unsafe { Box::from_raw(Box::into_raw(bytes) as *mut [UnsafeCell<u8>]) };
        let buffer = LogBuffer {
            cells,
            size: size as u64,
            next: CachePadded::new(AtomicU64::new(start)),
            released: CachePadded::new(AtomicU64::new(start)),
            written: LinkBuf::new(link_slots, start),
        };
        let consumer = Consumer {
            buffer_id: buffer.id(),
        };
        (buffer, consumer)
    }

    fn id(&self) -> usize {
        self.cells.as_ptr() as usize
    }

    /// Ring size in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// Next LSN to be reserved (the current LSN).
    pub(crate) fn next_lsn(&self) -> u64 {
        self.next.load(Ordering::SeqCst)
    }

    /// Every LSN below this is copied into the ring and published.
    pub(crate) fn ready_lsn(&self) -> u64 {
        self.written.tail()
    }

    /// Every LSN below this has been copied out by the consumer.
    pub(crate) fn released_lsn(&self) -> u64 {
        self.released.load(Ordering::SeqCst)
    }

    /// True when a piece starting at `from` can be published now.
    pub(crate) fn can_publish(&self, from: u64) -> bool {
        self.written.has_room(from)
    }

    /// Moves the ready LSN over newly published ranges; see
    /// [`LinkBuf::advance`].
    pub(crate) fn advance_ready(&self) -> Option<(u64, u64)> {
        self.written.advance()
    }

    /// Reserves `len` bytes of LSN space.
    // PERF: one atomic fetch_add; the only serialisation point of appends.
    pub(crate) fn reserve(&self, len: u64) -> Reservation {
        let start = self.next.fetch_add(len, Ordering::SeqCst);
        Reservation {
            buffer_id: self.id(),
            start,
            end: start + len,
            done: start,
        }
    }

    /// Copies the next piece of `data` (the whole content of `r`) into the
    /// ring and publishes it: up to `max_piece` bytes, or fewer when the
    /// ring lacks room. Returns the new `r.done()`.
    // PERF: one memcpy (two at the ring's wrap) and one link store.
    pub(crate) fn fill(
        &self,
        r: &mut Reservation,
        data: &[u8],
        max_piece: u64,
    ) -> Result<u64, FillBlocked> {
        assert_eq!(
            r.buffer_id,
            self.id(),
            "reservation used with another log buffer"
        );
        assert_eq!(
            data.len() as u64,
            r.end - r.start,
            "data does not match its reservation"
        );
        debug_assert!(max_piece > 0, "empty piece");
        let from = r.done;
        let want_end = r.end.min(from.saturating_add(max_piece));
        let limit = self.released.load(Ordering::SeqCst) + self.size;
        if from >= limit {
            // Wait for room for the whole piece, or a quarter of the ring
            // when the piece is larger, rather than trickling byte by byte.
            return Err(FillBlocked::Space(
                want_end.min(from + self.size / 4) - self.size,
            ));
        }
        let to = want_end.min(limit);
        if !self.written.has_room(from) {
            return Err(FillBlocked::Link);
        }
        let piece = &data[(from - r.start) as usize..(to - r.start) as usize];
        let pos = (from % self.size) as usize;
        let first = piece.len().min(self.size as usize - pos);
        let base = UnsafeCell::raw_get(self.cells.as_ptr());
        // SAFETY: `[from, to)` lies inside this reservation (checked above
        // against r.start/r.end, and reservations never overlap) and below
        // `released + size` (checked above), so by facts 1-2 of the module
        // documentation no other thread reads or writes these ring bytes
        // until the range is published below. `pos + first <= size` and
        // `piece.len() - first <= pos`, so both copies stay inside the ring.
        unsafe {
            std::ptr::copy_nonoverlapping(piece.as_ptr(), base.add(pos), first);
            std::ptr::copy_nonoverlapping(piece.as_ptr().add(first), base, piece.len() - first);
        }
        let added = self.written.add(from, to);
        debug_assert!(added, "link room checked above and the tail only grows");
        r.done = to;
        Ok(to)
    }
}

impl Consumer {
    /// Copies the bytes of LSNs `[from, from + out.len())` out of the ring.
    /// The range must be ready and not yet released.
    pub(crate) fn copy_out(&mut self, buffer: &LogBuffer, from: u64, out: &mut [u8]) {
        assert_eq!(
            self.buffer_id,
            buffer.id(),
            "consumer used with another log buffer"
        );
        let to = from + out.len() as u64;
        assert!(
            from >= buffer.released_lsn() && to <= buffer.ready_lsn(),
            "copy_out [{from}, {to}) outside the ready, unreleased range"
        );
        let pos = (from % buffer.size) as usize;
        let first = out.len().min(buffer.size as usize - pos);
        let base = UnsafeCell::raw_get(buffer.cells.as_ptr());
        let rest = out.len() - first;
        // SAFETY: `[from, to)` is published (below the link tail, loaded
        // with acquire, so the appenders' copies happen-before this read)
        // and not released, so no appender may write these ring bytes (fact
        // 2 and 3 of the module documentation); this is the only consumer
        // (fact 4). Bounds as in `fill`.
        unsafe {
            std::ptr::copy_nonoverlapping(base.add(pos), out.as_mut_ptr(), first);
            std::ptr::copy_nonoverlapping(base, out.as_mut_ptr().add(first), rest);
        }
    }

    /// Frees the ring bytes of every LSN below `upto` for reuse.
    pub(crate) fn release(&mut self, buffer: &LogBuffer, upto: u64) {
        assert_eq!(
            self.buffer_id,
            buffer.id(),
            "consumer used with another log buffer"
        );
        assert!(upto <= buffer.ready_lsn(), "release past the ready LSN");
        buffer.released.fetch_max(upto, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill_all(b: &LogBuffer, r: &mut Reservation, data: &[u8]) {
        while r.done() < r.end() {
            b.fill(r, data, u64::MAX)
                .expect("room for the whole reservation");
        }
        b.advance_ready();
    }

    #[test]
    fn bytes_come_out_in_lsn_order_across_the_wrap() {
        let (b, mut c) = LogBuffer::new(64, 16, 1000);
        let mut expected = Vec::new();
        let mut next_read = 1000u64;
        for round in 0..50u8 {
            let len = 1 + (round as u64 * 13) % 40;
            let data: Vec<u8> = (0..len as u8).map(|i| i ^ round).collect();
            let mut r = b.reserve(len);
            fill_all(&b, &mut r, &data);
            expected.extend_from_slice(&data);
            let mut out = vec![0u8; (b.ready_lsn() - next_read) as usize];
            c.copy_out(&b, next_read, &mut out);
            assert_eq!(&out[..], &expected[(next_read - 1000) as usize..]);
            next_read = b.ready_lsn();
            c.release(&b, next_read);
        }
    }

    #[test]
    fn fill_waits_for_space_and_out_of_order_publication() {
        let (b, mut c) = LogBuffer::new(32, 16, 0);
        let a_data = [1u8; 10];
        let b_data = [2u8; 30];
        let mut ra = b.reserve(10);
        let mut rb = b.reserve(30);
        // rb only fits partly (22 bytes of room after ra's 10).
        assert_eq!(b.fill(&mut rb, &b_data, u64::MAX), Ok(32));
        assert_eq!(
            b.fill(&mut rb, &b_data, u64::MAX),
            Err(FillBlocked::Space(8))
        );
        b.advance_ready();
        assert_eq!(b.ready_lsn(), 0, "ra is not copied yet");
        assert_eq!(b.fill(&mut ra, &a_data, u64::MAX), Ok(10));
        b.advance_ready();
        assert_eq!(b.ready_lsn(), 32);
        let mut out = [0u8; 32];
        c.copy_out(&b, 0, &mut out);
        assert_eq!(&out[..10], &a_data);
        assert_eq!(&out[10..], &b_data[..22]);
        c.release(&b, 32);
        assert_eq!(b.fill(&mut rb, &b_data, u64::MAX), Ok(40));
        b.advance_ready();
        let mut rest = [0u8; 8];
        c.copy_out(&b, 32, &mut rest);
        assert_eq!(&rest, &b_data[22..]);
    }

    #[test]
    #[should_panic(expected = "another log buffer")]
    fn reservations_are_tied_to_their_buffer() {
        let (b1, _c1) = LogBuffer::new(64, 16, 0);
        let (b2, _c2) = LogBuffer::new(64, 16, 0);
        let mut r = b1.reserve(4);
        let _ = b2.fill(&mut r, &[0; 4], 4);
    }
}
