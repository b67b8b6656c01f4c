//! Packet framing: `int<3>` payload length, `int<1>` sequence id, payload.
//!
//! ```text
//!   +---------+---------+---------+--------+----------------------+
//!   | len lo  | len mid | len hi  | seq id | payload (len bytes)  |
//!   +---------+---------+---------+--------+----------------------+
//! ```
//!
//! A logical packet of `0xFF_FFFF` bytes or more is split into chunks of
//! exactly `0xFF_FFFF` bytes followed by one shorter chunk (possibly empty);
//! each chunk takes the next sequence id. [`PacketReader`] joins chunks back
//! into one payload, [`PacketBuf`] splits on the way out.

use std::io::{BufRead, ErrorKind};

use crate::error::ProtocolError;

/// Largest payload of one physical chunk.
pub const MAX_CHUNK: usize = 0xFF_FFFF;

/// Reads logical packets from a buffered byte stream, never trusting lengths.
///
/// The reader is blocking (the connection's own thread calls it; see
/// [`crate::server`]). It grows the payload only by the bytes actually
/// present in the stream's buffer (never from an announced length), checks
/// `max_allowed_packet` against the announced length before reading a
/// chunk, and checks sequence ids.
#[derive(Debug)]
pub struct PacketReader<R> {
    inner: R,
    next_seq: u8,
}

impl<R: BufRead> PacketReader<R> {
    /// Wraps a buffered stream.
    pub fn new(inner: R) -> Self {
        PacketReader { inner, next_seq: 0 }
    }

    /// The sequence id the next chunk must carry; after an error it is the id
    /// the server's answer must use.
    pub fn next_seq(&self) -> u8 {
        self.next_seq
    }

    /// Sets the sequence id expected next (0 at the start of a command).
    pub fn set_next_seq(&mut self, seq: u8) {
        self.next_seq = seq;
    }

    /// The wrapped stream.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The wrapped stream, mutably.
    pub fn get_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// Unwraps the stream.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Reads one logical packet into `payload` (cleared first) and returns
    /// the sequence id of its last chunk (the reply continues from it).
    ///
    /// End of stream at a packet boundary or in the middle of a packet is
    /// [`ProtocolError::ConnectionClosed`]; a packet larger than `max_packet`
    /// is [`ProtocolError::PacketTooLarge`] and nothing more is read. Other
    /// I/O errors (including a read timeout) are [`ProtocolError::Io`].
    // PERF: one call per command; `payload` is reused by the caller, and a
    // small command arriving in one segment costs one `read` of the stream.
    pub fn read(&mut self, payload: &mut Vec<u8>, max_packet: usize) -> Result<u8, ProtocolError> {
        payload.clear();
        loop {
            let mut header = [0u8; 4];
            self.read_exact_or_closed(&mut header)?;
            let len =
                usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
            let seq = header[3];
            if seq != self.next_seq {
                let expected = self.next_seq;
                self.next_seq = seq.wrapping_add(1);
                return Err(ProtocolError::OutOfOrder { expected, got: seq });
            }
            self.next_seq = seq.wrapping_add(1);
            let total = payload.len().saturating_add(len);
            if total > max_packet {
                return Err(ProtocolError::PacketTooLarge {
                    size: total,
                    limit: max_packet,
                });
            }
            self.append(payload, len)?;
            if len < MAX_CHUNK {
                return Ok(seq);
            }
        }
    }

    /// Appends exactly `len` bytes to `payload`, in pieces of what the
    /// buffer holds.
    fn append(&mut self, payload: &mut Vec<u8>, mut len: usize) -> Result<(), ProtocolError> {
        while len > 0 {
            let available = fill(&mut self.inner)?;
            let n = available.len().min(len);
            payload.extend_from_slice(&available[..n]);
            self.inner.consume(n);
            len -= n;
        }
        Ok(())
    }

    fn read_exact_or_closed(&mut self, out: &mut [u8]) -> Result<(), ProtocolError> {
        let mut at = 0;
        while at < out.len() {
            let available = fill(&mut self.inner)?;
            let n = available.len().min(out.len() - at);
            out[at..at + n].copy_from_slice(&available[..n]);
            self.inner.consume(n);
            at += n;
        }
        Ok(())
    }
}

/// The buffered bytes, refilling once when empty; end of stream is
/// [`ProtocolError::ConnectionClosed`].
fn fill<R: BufRead>(r: &mut R) -> Result<&[u8], ProtocolError> {
    loop {
        match r.fill_buf() {
            Ok(_) => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    // The buffer is filled now (or the stream ended): this call only
    // returns what is buffered.
    match r.fill_buf()? {
        [] => Err(ProtocolError::ConnectionClosed),
        buf => Ok(buf),
    }
}

/// An outgoing byte buffer of framed packets with a running sequence id.
///
/// Payloads are written in place after a 4-byte header placeholder that
/// [`PacketBuf::finish`] patches, so a packet costs no extra copy unless it
/// reaches `MAX_CHUNK` bytes and must be split.
#[derive(Debug, Default)]
pub struct PacketBuf {
    buf: Vec<u8>,
    seq: u8,
}

/// Where an unfinished packet starts inside a [`PacketBuf`].
#[derive(Debug, Clone, Copy)]
#[must_use = "a started packet must be finished"]
pub struct PacketStart(usize);

impl PacketBuf {
    /// An empty buffer whose first packet gets sequence id `seq`.
    pub fn new(seq: u8) -> Self {
        PacketBuf {
            buf: Vec::with_capacity(4096),
            seq,
        }
    }

    /// An empty buffer over `buf`'s allocation (its contents are dropped).
    pub fn from_vec(mut buf: Vec<u8>, seq: u8) -> Self {
        buf.clear();
        PacketBuf { buf, seq }
    }

    /// The underlying allocation (with whatever is buffered).
    pub fn into_vec(self) -> Vec<u8> {
        self.buf
    }

    /// The sequence id the next packet will carry.
    pub fn seq(&self) -> u8 {
        self.seq
    }

    /// Sets the sequence id of the next packet.
    pub fn set_seq(&mut self, seq: u8) {
        self.seq = seq;
    }

    /// Bytes buffered.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True when nothing is buffered.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Opens a packet; append its payload with [`PacketBuf::body`].
    pub fn start(&mut self) -> PacketStart {
        let at = self.buf.len();
        self.buf.extend_from_slice(&[0, 0, 0, 0]);
        PacketStart(at)
    }

    /// The buffer to append payload bytes to.
    pub fn body(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Closes the packet opened at `start`: writes its header, splitting it
    /// into several chunks when the payload reaches `MAX_CHUNK` bytes.
    pub fn finish(&mut self, start: PacketStart) {
        let at = start.0;
        let len = self.buf.len() - at - 4;
        if len < MAX_CHUNK {
            let l = (len as u32).to_le_bytes();
            self.buf[at..at + 4].copy_from_slice(&[l[0], l[1], l[2], self.seq]);
            self.seq = self.seq.wrapping_add(1);
            return;
        }
        let payload = self.buf.split_off(at + 4);
        self.buf.truncate(at);
        let mut chunks = payload.chunks(MAX_CHUNK);
        let mut last_len = 0;
        for chunk in chunks.by_ref() {
            self.push_chunk(chunk);
            last_len = chunk.len();
        }
        if last_len == MAX_CHUNK {
            self.push_chunk(&[]);
        }
    }

    fn push_chunk(&mut self, chunk: &[u8]) {
        let l = (chunk.len() as u32).to_le_bytes();
        self.buf.extend_from_slice(&[l[0], l[1], l[2], self.seq]);
        self.buf.extend_from_slice(chunk);
        self.seq = self.seq.wrapping_add(1);
    }

    /// Drops an unfinished packet (its header and any payload written so far).
    pub fn abort(&mut self, start: PacketStart) {
        self.buf.truncate(start.0);
    }

    /// Appends a whole packet.
    pub fn packet(&mut self, payload: &[u8]) {
        let s = self.start();
        self.buf.extend_from_slice(payload);
        self.finish(s);
    }

    /// The buffered bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Drops the buffered bytes, keeping the allocation (sequence kept).
    pub fn clear(&mut self) {
        self.buf.clear();
    }

    /// Takes the buffered bytes, leaving the buffer empty (sequence kept).
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(payload_len: usize, seq: u8) -> (Vec<u8>, Vec<u8>) {
        let payload: Vec<u8> = (0..payload_len).map(|i| (i % 251) as u8).collect();
        let mut b = PacketBuf::new(seq);
        b.packet(&payload);
        (payload, b.take())
    }

    fn read_back(bytes: &[u8], seq: u8, max: usize) -> Result<Vec<u8>, ProtocolError> {
        let mut r = PacketReader::new(bytes);
        r.set_next_seq(seq);
        let mut out = Vec::new();
        r.read(&mut out, max).map(|_| out)
    }

    #[test]
    fn split_and_join_round_trip_around_the_chunk_size() {
        for len in [0, 1, MAX_CHUNK - 1, MAX_CHUNK, MAX_CHUNK + 1, 2 * MAX_CHUNK] {
            let (payload, bytes) = frame(len, 3);
            let chunks = len / MAX_CHUNK + 1;
            assert_eq!(bytes.len(), len + 4 * chunks, "framing of {len}");
            let got = read_back(&bytes, 3, usize::MAX).unwrap();
            assert!(got == payload, "payload of {len} bytes changed");
        }
    }

    #[test]
    fn wrong_sequence_id_is_out_of_order() {
        let (_, bytes) = frame(10, 5);
        assert!(matches!(
            read_back(&bytes, 0, 1 << 20),
            Err(ProtocolError::OutOfOrder {
                expected: 0,
                got: 5
            })
        ));
    }

    #[test]
    fn oversized_packet_is_rejected_before_reading_it() {
        // Only the header is present: the reader must refuse from the length alone.
        let bytes = [0xFF, 0xFF, 0x10, 0];
        assert!(matches!(
            read_back(&bytes, 0, 1024),
            Err(ProtocolError::PacketTooLarge { .. })
        ));
        let (_, bytes) = frame(1025, 0);
        assert!(read_back(&bytes, 0, 1024).is_err());
        let (_, bytes) = frame(1024, 0);
        assert!(read_back(&bytes, 0, 1024).is_ok());
    }

    #[test]
    fn eof_inside_a_packet_is_a_clean_close() {
        let (_, bytes) = frame(100, 0);
        for cut in [0, 2, 4, 50] {
            assert!(matches!(
                read_back(&bytes[..cut], 0, 1 << 20),
                Err(ProtocolError::ConnectionClosed)
            ));
        }
    }
}
