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

use tokio::io::{AsyncRead, AsyncReadExt};

use crate::error::ProtocolError;

/// Largest payload of one physical chunk.
pub const MAX_CHUNK: usize = 0xFF_FFFF;

/// Reads logical packets from an async byte stream, never trusting lengths.
///
/// The reader allocates as bytes arrive (never from an announced length),
/// checks `max_allowed_packet` against the announced length before reading a
/// chunk, and checks sequence ids.
#[derive(Debug)]
pub struct PacketReader<R> {
    inner: R,
    next_seq: u8,
}

impl<R: AsyncRead + Unpin> PacketReader<R> {
    /// Wraps a (preferably buffered) stream.
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

    /// Reads one logical packet into `payload` (cleared first) and returns
    /// the sequence id of its last chunk (the reply continues from it).
    ///
    /// End of stream at a packet boundary or in the middle of a packet is
    /// [`ProtocolError::ConnectionClosed`]; a packet larger than `max_packet`
    /// is [`ProtocolError::PacketTooLarge`] and nothing more is read.
    // PERF: one call per command; `payload` is reused by the caller.
    pub async fn read(
        &mut self,
        payload: &mut Vec<u8>,
        max_packet: usize,
    ) -> Result<u8, ProtocolError> {
        payload.clear();
        loop {
            let mut header = [0u8; 4];
            read_exact_or_closed(&mut self.inner, &mut header).await?;
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
            let got = (&mut self.inner)
                .take(len as u64)
                .read_to_end(payload)
                .await?;
            if got != len {
                return Err(ProtocolError::ConnectionClosed);
            }
            if len < MAX_CHUNK {
                return Ok(seq);
            }
        }
    }
}

async fn read_exact_or_closed<R: AsyncRead + Unpin>(
    r: &mut R,
    buf: &mut [u8],
) -> Result<(), ProtocolError> {
    match r.read_exact(buf).await {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            Err(ProtocolError::ConnectionClosed)
        }
        Err(e) => Err(e.into()),
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

    async fn read_back(bytes: &[u8], seq: u8, max: usize) -> Result<Vec<u8>, ProtocolError> {
        let mut r = PacketReader::new(bytes);
        r.set_next_seq(seq);
        let mut out = Vec::new();
        r.read(&mut out, max).await.map(|_| out)
    }

    #[tokio::test]
    async fn split_and_join_round_trip_around_the_chunk_size() {
        for len in [0, 1, MAX_CHUNK - 1, MAX_CHUNK, MAX_CHUNK + 1, 2 * MAX_CHUNK] {
            let (payload, bytes) = frame(len, 3);
            let chunks = len / MAX_CHUNK + 1;
            assert_eq!(bytes.len(), len + 4 * chunks, "framing of {len}");
            let got = read_back(&bytes, 3, usize::MAX).await.unwrap();
            assert!(got == payload, "payload of {len} bytes changed");
        }
    }

    #[tokio::test]
    async fn wrong_sequence_id_is_out_of_order() {
        let (_, bytes) = frame(10, 5);
        assert!(matches!(
            read_back(&bytes, 0, 1 << 20).await,
            Err(ProtocolError::OutOfOrder {
                expected: 0,
                got: 5
            })
        ));
    }

    #[tokio::test]
    async fn oversized_packet_is_rejected_before_reading_it() {
        // Only the header is present: the reader must refuse from the length alone.
        let bytes = [0xFF, 0xFF, 0x10, 0];
        assert!(matches!(
            read_back(&bytes, 0, 1024).await,
            Err(ProtocolError::PacketTooLarge { .. })
        ));
        let (_, bytes) = frame(1025, 0);
        assert!(read_back(&bytes, 0, 1024).await.is_err());
        let (_, bytes) = frame(1024, 0);
        assert!(read_back(&bytes, 0, 1024).await.is_ok());
    }

    #[tokio::test]
    async fn eof_inside_a_packet_is_a_clean_close() {
        let (_, bytes) = frame(100, 0);
        for cut in [0, 2, 4, 50] {
            assert!(matches!(
                read_back(&bytes[..cut], 0, 1 << 20).await,
                Err(ProtocolError::ConnectionClosed)
            ));
        }
    }
}
