//! The worker thread's side of the socket: a framed output buffer and the
//! two channels to the connection's async I/O task.
//!
//! ```text
//!   worker thread                          async I/O task (tokio)
//!   -------------                          ----------------------
//!   Wire::packet/flush --ToIo::Write-->    write_all to the socket
//!   Wire::read ---------ToIo::Read----->   flush, read one logical packet
//!              <--------Packet---------    (timeout, kill, shutdown aware)
//!   Wire::start_tls ----ToIo::StartTls->   TLS handshake on the socket
//!   drop(Wire) / ToIo::Close ---------->   close the socket
//! ```
//!
//! The worker blocks on `blocking_send`/`blocking_recv`; the I/O task never
//! blocks. A closed channel in either direction means the connection is over.

use std::time::Duration;

use tokio::sync::mpsc;

use crate::backend::OutputError;
use crate::error::ServerError;
use crate::packet::PacketBuf;

/// Output is handed to the I/O task once this many bytes are buffered.
pub(crate) const FLUSH_THRESHOLD: usize = 64 * 1024;

/// Requests from the worker to the I/O task.
#[derive(Debug)]
pub(crate) enum ToIo {
    /// Framed bytes to write.
    Write(Vec<u8>),
    /// Read the next logical packet.
    Read {
        /// Sequence id the packet must carry.
        expected_seq: u8,
        /// How long to wait.
        deadline: ReadDeadline,
        /// `max_allowed_packet` in force.
        max_packet: usize,
    },
    /// Wrap the socket in TLS (after an SSLRequest) before the next read.
    StartTls,
    /// Close the connection after writing what was sent.
    Close,
}

/// How long the I/O task waits for a packet.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ReadDeadline {
    /// Still in the connection phase: `connect_timeout` from accept.
    Handshake,
    /// Between commands: the session's `wait_timeout`.
    Idle(Duration),
}

/// A logical packet from the client.
#[derive(Debug)]
pub(crate) struct Packet {
    /// Sequence id of the packet's last chunk.
    pub seq: u8,
    /// Joined payload.
    pub payload: Vec<u8>,
}

/// Marker: the connection is over (client gone, killed, timed out, shut down).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Disconnected;

impl From<Disconnected> for OutputError {
    fn from(_: Disconnected) -> Self {
        OutputError::ClientGone
    }
}

/// Worker-side connection endpoint.
#[derive(Debug)]
pub(crate) struct Wire {
    pub out: PacketBuf,
    to_io: mpsc::Sender<ToIo>,
    from_io: mpsc::Receiver<Packet>,
    gone: bool,
}

impl Wire {
    pub(crate) fn new(to_io: mpsc::Sender<ToIo>, from_io: mpsc::Receiver<Packet>) -> Self {
        Wire {
            out: PacketBuf::new(0),
            to_io,
            from_io,
            gone: false,
        }
    }

    /// Sends buffered output to the I/O task.
    pub(crate) fn flush(&mut self) -> Result<(), Disconnected> {
        if self.gone {
            return Err(Disconnected);
        }
        if self.out.is_empty() {
            return Ok(());
        }
        let bytes = self.out.take();
        if self.to_io.blocking_send(ToIo::Write(bytes)).is_err() {
            self.gone = true;
            return Err(Disconnected);
        }
        Ok(())
    }

    /// Flushes when enough output is buffered.
    // PERF: called after every row; only a length check in the common case.
    pub(crate) fn maybe_flush(&mut self) -> Result<(), Disconnected> {
        if self.out.len() >= FLUSH_THRESHOLD {
            self.flush()
        } else if self.gone {
            Err(Disconnected)
        } else {
            Ok(())
        }
    }

    /// Appends one packet with the next sequence id.
    pub(crate) fn packet(&mut self, payload: &[u8]) {
        self.out.packet(payload);
    }

    /// Appends an ERR packet.
    pub(crate) fn err(&mut self, e: &ServerError) {
        let s = self.out.start();
        encode_err(e, self.out.body());
        self.out.finish(s);
    }

    /// Flushes, then blocks until the next packet arrives. The reply to it
    /// will use the following sequence id.
    pub(crate) fn read(
        &mut self,
        deadline: ReadDeadline,
        max_packet: usize,
    ) -> Result<Packet, Disconnected> {
        self.flush()?;
        let req = ToIo::Read {
            expected_seq: self.out.seq(),
            deadline,
            max_packet,
        };
        if self.to_io.blocking_send(req).is_err() {
            self.gone = true;
            return Err(Disconnected);
        }
        match self.from_io.blocking_recv() {
            Some(p) => {
                self.out.set_seq(p.seq.wrapping_add(1));
                Ok(p)
            }
            None => {
                self.gone = true;
                Err(Disconnected)
            }
        }
    }

    /// Reads the first packet of a new command (sequence id 0).
    pub(crate) fn read_command(
        &mut self,
        idle: Duration,
        max_packet: usize,
    ) -> Result<Packet, Disconnected> {
        self.out.set_seq(0);
        self.read(ReadDeadline::Idle(idle), max_packet)
    }

    /// Flushes and asks the I/O task to switch the socket to TLS; a failed
    /// TLS handshake closes the connection (seen by the next read).
    pub(crate) fn start_tls(&mut self) -> Result<(), Disconnected> {
        self.flush()?;
        if self.to_io.blocking_send(ToIo::StartTls).is_err() {
            self.gone = true;
            return Err(Disconnected);
        }
        Ok(())
    }

    /// Flushes and asks the I/O task to close the socket.
    pub(crate) fn close(&mut self) {
        if self.flush().is_ok() {
            let _ = self.to_io.blocking_send(ToIo::Close);
        }
        self.gone = true;
    }
}

/// Largest message MySQL puts in an ERR packet (`MYSQL_ERRMSG_SIZE` - 1).
const MAX_ERR_MESSAGE: usize = 511;

/// Appends an ERR payload: `0xFF code '#' sqlstate message`.
pub(crate) fn encode_err(e: &ServerError, out: &mut Vec<u8>) {
    out.push(0xFF);
    out.extend_from_slice(&e.code.to_le_bytes());
    out.push(b'#');
    out.extend_from_slice(&e.sqlstate);
    encode_err_message(e, out);
}

/// Encodes an ERR payload sent before the handshake, when no capability
/// (in particular `CLIENT_PROTOCOL_41`) has been agreed: code and message
/// only, no SQLSTATE marker, as MySQL sends "Too many connections".
pub(crate) fn encode_err_pre_handshake(e: &ServerError, out: &mut Vec<u8>) {
    out.push(0xFF);
    out.extend_from_slice(&e.code.to_le_bytes());
    encode_err_message(e, out);
}

fn encode_err_message(e: &ServerError, out: &mut Vec<u8>) {
    let mut end = e.message.len().min(MAX_ERR_MESSAGE);
    while !e.message.is_char_boundary(end) {
        end -= 1;
    }
    out.extend_from_slice(&e.message.as_bytes()[..end]);
}
