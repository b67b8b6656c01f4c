//! The connection thread's side of the socket: a framed output buffer, a
//! packet reader, and the protocol's reactions to read failures.
//!
//! ```text
//!   Wire::packet / err ──> PacketBuf (framed, sequence ids)
//!   Wire::flush ─────────> one write of the whole buffer (64 KiB at most
//!                          between flushes while rows stream)
//!   Wire::read ──────────> flush, then block in recv until one logical
//!                          packet is in (SO_RCVTIMEO = deadline)
//!   Wire::start_tls ─────> flush, rustls handshake on the same socket
//!   Wire::close ─────────> flush, TLS close_notify, TCP FIN
//! ```
//!
//! A command's reply is built completely in the buffer and written with one
//! `write`: a `SELECT 1` costs one `recv` and one `send`, and the thread
//! sleeps in the kernel between commands, woken only by the client's bytes,
//! by `KILL`/shutdown (which shut the socket's read side, making the `recv`
//! return end of stream) or by its `wait_timeout`.
//!
//! When a read fails, the wire answers as MySQL does before giving up:
//!
//! | cause                                   | reply              |
//! |-----------------------------------------|--------------------|
//! | server shutdown                         | ERR 1053, seq 0    |
//! | `KILL CONNECTION`                       | none               |
//! | `wait_timeout` between commands         | ERR 4031, seq 0    |
//! | `connect_timeout` in the handshake      | none               |
//! | packet over `max_allowed_packet`        | ERR 1153           |
//! | wrong sequence id                       | ERR 1156           |
//! | client closed / I/O error               | none               |

use std::io::Write;
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::backend::OutputError;
use crate::error::{ProtocolError, ServerError};
use crate::packet::{PacketBuf, PacketReader};
use crate::server::{ProcessEntry, Shared};

use super::transport::{accept_tls, is_timeout, Inbound, ReadLimit, Socket, Transport};

/// Output is written to the socket once this many bytes are buffered.
pub(crate) const FLUSH_THRESHOLD: usize = 64 * 1024;

/// Size of the receive buffer: a command of this size or less is read with
/// one `recv`.
const READ_BUFFER: usize = 16 * 1024;

/// Initial capacity of the output buffer.
const OUT_BUFFER: usize = 4 * 1024;

/// An output buffer grown beyond this (a large result) is not kept for the
/// next connection.
const MAX_KEPT_OUT_BUFFER: usize = 1 << 20;

/// The allocations of a connection's socket buffers, kept by a connection
/// thread from one connection to the next so that a new connection
/// allocates none.
#[derive(Debug)]
pub(crate) struct WireBuffers {
    read: Vec<u8>,
    out: Vec<u8>,
}

impl Default for WireBuffers {
    fn default() -> Self {
        WireBuffers {
            read: vec![0; READ_BUFFER],
            out: Vec::with_capacity(OUT_BUFFER),
        }
    }
}

/// How long a read waits.
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

/// The connection's socket as its thread sees it.
#[derive(Debug)]
pub(crate) struct Wire {
    pub out: PacketBuf,
    reader: PacketReader<Inbound>,
    entry: Arc<ProcessEntry>,
    shared: Arc<Shared>,
    /// End of the connection phase (accept + `connect_timeout`).
    handshake_until: Instant,
    gone: bool,
}

impl Wire {
    /// Takes over an accepted socket (already registered in the process
    /// list under `entry`). `accepted` starts the `connect_timeout` clock.
    pub(crate) fn new(
        tcp: Arc<TcpStream>,
        accepted: Instant,
        entry: Arc<ProcessEntry>,
        shared: Arc<Shared>,
        buffers: WireBuffers,
    ) -> Self {
        let handshake_until = accepted + shared.config.connect_timeout;
        let mut gone = false;
        // A socket these calls fail on is already broken: the first read or
        // write reports it and the connection ends there.
        let setup = tcp
            .set_nodelay(true)
            .and_then(|()| tcp.set_write_timeout(Some(shared.config.net_write_timeout)));
        if let Err(e) = setup {
            tracing::debug!(id = entry.id(), error = %e, "socket setup failed");
            gone = true;
        }
        let socket = Socket::new(tcp, ReadLimit::Until(handshake_until));
        Wire {
            out: PacketBuf::from_vec(buffers.out, 0),
            reader: PacketReader::new(Inbound::new(Transport::Plain(socket), buffers.read)),
            entry,
            shared,
            handshake_until,
            gone,
        }
    }

    fn transport(&mut self) -> &mut Transport {
        self.reader.get_mut().transport()
    }

    /// Releases the socket (closing it unless the process list still
    /// holds it) and returns the buffers for the thread's next connection.
    pub(crate) fn into_buffers(self) -> WireBuffers {
        let mut out = self.out.into_vec();
        out.clear();
        if out.capacity() > MAX_KEPT_OUT_BUFFER {
            out = Vec::with_capacity(OUT_BUFFER);
        }
        WireBuffers {
            read: self.reader.into_inner().into_buffer(),
            out,
        }
    }

    /// Writes the buffered output.
    // PERF: one `send` per reply; the buffer keeps its capacity.
    pub(crate) fn flush(&mut self) -> Result<(), Disconnected> {
        if self.gone {
            return Err(Disconnected);
        }
        if self.out.is_empty() {
            return Ok(());
        }
        let transport = self.reader.get_mut().transport();
        let written = transport
            .write_all(self.out.as_bytes())
            .and_then(|()| transport.flush());
        self.out.clear();
        if let Err(e) = written {
            tracing::debug!(id = self.entry.id(), error = %e, "write failed");
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
        let mut payload = Vec::new();
        self.read_into(deadline, max_packet, &mut payload)?;
        Ok(Packet { payload })
    }

    /// Reads the first packet of a new command (sequence id 0) into
    /// `payload`, reusing its allocation.
    pub(crate) fn read_command(
        &mut self,
        idle: Duration,
        max_packet: usize,
        payload: &mut Vec<u8>,
    ) -> Result<(), Disconnected> {
        self.out.set_seq(0);
        self.read_into(ReadDeadline::Idle(idle), max_packet, payload)
    }

    // PERF: once per command: no allocation unless the payload outgrows
    // the reused buffer.
    fn read_into(
        &mut self,
        deadline: ReadDeadline,
        max_packet: usize,
        payload: &mut Vec<u8>,
    ) -> Result<(), Disconnected> {
        self.flush()?;
        let limit = match deadline {
            ReadDeadline::Handshake => ReadLimit::Until(self.handshake_until),
            ReadDeadline::Idle(d) => ReadLimit::Each(d),
        };
        let Some(socket) = self.transport().socket_mut() else {
            self.gone = true;
            return Err(Disconnected);
        };
        socket.set_limit(limit);
        self.reader.set_next_seq(self.out.seq());
        let result = self.reader.read(payload, max_packet);
        // KILL and shutdown win over whatever the read returned, as they
        // may have caused it (the read side was shut down).
        if self.entry.is_killed() {
            if self.shared.is_shutting_down() {
                self.last_words(&ServerError::server_shutdown(), 0);
            }
            self.gone = true;
            return Err(Disconnected);
        }
        match result {
            Ok(seq) => {
                self.out.set_seq(seq.wrapping_add(1));
                Ok(())
            }
            Err(e) => {
                let id = self.entry.id();
                match &e {
                    ProtocolError::PacketTooLarge { .. } | ProtocolError::OutOfOrder { .. } => {
                        tracing::debug!(id, error = %e, "bad packet");
                        if let Some(err) = e.to_server_error() {
                            let seq = self.reader.next_seq();
                            self.last_words(&err, seq);
                        }
                    }
                    ProtocolError::Io(io) if is_timeout(io) => {
                        let in_session = matches!(deadline, ReadDeadline::Idle(_));
                        tracing::debug!(id, in_session, "read timed out");
                        if in_session {
                            self.last_words(&ServerError::interaction_timeout(), 0);
                        }
                    }
                    _ => tracing::debug!(id, error = %e, "read failed"),
                }
                self.gone = true;
                Err(Disconnected)
            }
        }
    }

    /// Sends `err` with sequence id `seq` as the connection's final packet.
    fn last_words(&mut self, err: &ServerError, seq: u8) {
        self.out.clear();
        self.out.set_seq(seq);
        self.err(err);
        let _ = self.flush();
    }

    /// Flushes and switches the socket to TLS; a failed TLS handshake
    /// closes the connection.
    pub(crate) fn start_tls(&mut self) -> Result<(), Disconnected> {
        self.flush()?;
        let Some(config) = self.shared.tls.as_ref().map(|a| a.config()) else {
            self.gone = true;
            return Err(Disconnected);
        };
        let inbound = self.reader.get_mut();
        // Bytes read past the SSLRequest are the start of the TLS hello.
        let early = inbound.take_buffered();
        let Transport::Plain(mut socket) =
            std::mem::replace(inbound.transport(), Transport::Detached)
        else {
            tracing::debug!(id = self.entry.id(), "TLS requested twice");
            self.gone = true;
            return Err(Disconnected);
        };
        socket.set_limit(ReadLimit::Until(self.handshake_until));
        match accept_tls(config, socket, &early) {
            Ok(tls) => {
                *inbound.transport() = Transport::Tls(Box::new(tls));
                tracing::debug!(id = self.entry.id(), "TLS established");
                Ok(())
            }
            Err(e) => {
                tracing::debug!(id = self.entry.id(), error = %e, "TLS handshake failed");
                self.gone = true;
                Err(Disconnected)
            }
        }
    }

    /// Flushes what is buffered and closes the connection.
    pub(crate) fn close(&mut self) {
        let _ = self.flush();
        self.gone = true;
        self.transport().close();
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
