//! The connection's byte stream: a blocking TCP socket, optionally wrapped
//! in TLS after `CLIENT_SSL`, with the read deadlines of the protocol.
//!
//! ```text
//!   Transport::Plain(Socket) ──SSLRequest──> Transport::Tls(StreamOwned<ServerConnection, Socket>)
//!                    │                                            │
//!                    └──────────── Socket: Arc<TcpStream> ────────┘
//!                                   (shared with the ProcessEntry, whose
//!                                    kill() shuts its read side down)
//! ```
//!
//! Only the connection's own thread reads and writes; it never does both
//! at once, so the stream is not split. Read deadlines are the socket's
//! `SO_RCVTIMEO`, set before a read only when the wanted value differs from
//! the one in force (a syscall per command would be waste): during the
//! connection phase the remaining part of `connect_timeout`, between
//! commands the session's `wait_timeout`. A read that times out fails with
//! [`ErrorKind::TimedOut`]. Writes are bounded by `SO_SNDTIMEO`
//! (`net_write_timeout`), set once when the connection starts.

use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::{ServerConnection, StreamOwned};

/// The shortest read timeout: `SO_RCVTIMEO` of zero means "wait forever",
/// so a zero `wait_timeout` becomes this.
const MIN_READ_WAIT: Duration = Duration::from_millis(1);

/// How long a read may wait for bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadLimit {
    /// Until this instant (accept time + `connect_timeout`): every read of
    /// the connection phase, the TLS handshake included, counts against it.
    Until(Instant),
    /// At most this long for each read (`wait_timeout` between commands).
    Each(Duration),
}

fn timed_out() -> io::Error {
    io::Error::new(ErrorKind::TimedOut, "read timed out")
}

/// True for the error a read that hit its [`ReadLimit`] returns.
pub(crate) fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock)
}

/// A blocking TCP socket with a read deadline.
#[derive(Debug)]
pub(crate) struct Socket {
    tcp: Arc<TcpStream>,
    limit: ReadLimit,
    /// The `SO_RCVTIMEO` in force.
    applied: Option<Duration>,
}

impl Socket {
    pub(crate) fn new(tcp: Arc<TcpStream>, limit: ReadLimit) -> Self {
        Socket {
            tcp,
            limit,
            applied: None,
        }
    }

    pub(crate) fn set_limit(&mut self, limit: ReadLimit) {
        self.limit = limit;
    }
}

impl Read for Socket {
    // PERF: one `recv` per call; `setsockopt` only when the limit changed.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let wait = match self.limit {
            ReadLimit::Until(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(timed_out());
                }
                left.max(MIN_READ_WAIT)
            }
            ReadLimit::Each(d) => d.max(MIN_READ_WAIT),
        };
        if self.applied != Some(wait) {
            self.tcp.set_read_timeout(Some(wait))?;
            self.applied = Some(wait);
        }
        match (&*self.tcp).read(buf) {
            Err(e) if e.kind() == ErrorKind::WouldBlock => Err(timed_out()),
            other => other,
        }
    }
}

impl Write for Socket {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&*self.tcp).write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The connection's stream: plain TCP, or TLS after an SSLRequest.
#[derive(Debug)]
pub(crate) enum Transport {
    /// Plain TCP.
    Plain(Socket),
    /// TLS over the same socket.
    Tls(Box<StreamOwned<ServerConnection, Socket>>),
    /// Placeholder while the socket is being wrapped in TLS (and after a
    /// failed upgrade).
    Detached,
}

fn detached() -> io::Error {
    io::Error::new(ErrorKind::NotConnected, "stream is being upgraded to TLS")
}

impl Transport {
    /// The socket under the stream.
    pub(crate) fn socket_mut(&mut self) -> Option<&mut Socket> {
        match self {
            Transport::Plain(s) => Some(s),
            Transport::Tls(t) => Some(&mut t.sock),
            Transport::Detached => None,
        }
    }

    /// Ends the stream politely: TLS `close_notify`, then TCP FIN. Errors
    /// are ignored (the peer may be gone already).
    pub(crate) fn close(&mut self) {
        if let Transport::Tls(t) = self {
            t.conn.send_close_notify();
            let _ = t.flush();
        }
        if let Some(s) = self.socket_mut() {
            let _ = s.tcp.shutdown(Shutdown::Write);
        }
    }
}

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => s.read(buf),
            Transport::Tls(t) => t.read(buf),
            Transport::Detached => Err(detached()),
        }
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Plain(s) => s.write(buf),
            Transport::Tls(t) => t.write(buf),
            Transport::Detached => Err(detached()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Plain(s) => s.flush(),
            Transport::Tls(t) => t.flush(),
            Transport::Detached => Err(detached()),
        }
    }
}

/// Runs the server side of a TLS handshake on `socket`. `early` holds bytes
/// already read past the SSLRequest (the start of the client's hello).
pub(crate) fn accept_tls(
    config: Arc<rustls::ServerConfig>,
    mut socket: Socket,
    early: &[u8],
) -> io::Result<StreamOwned<ServerConnection, Socket>> {
    let tls_error = |e: rustls::Error| io::Error::new(ErrorKind::InvalidData, e);
    let mut conn = ServerConnection::new(config).map_err(tls_error)?;
    let mut early = early;
    while !early.is_empty() {
        conn.read_tls(&mut early)?;
        conn.process_new_packets().map_err(tls_error)?;
    }
    while conn.is_handshaking() {
        conn.complete_io(&mut socket)?;
    }
    // Anything rustls still wants to send (session tickets) goes out now.
    while conn.wants_write() {
        conn.write_tls(&mut socket)?;
    }
    Ok(StreamOwned::new(conn, socket))
}

/// The receive side: [`Transport`] behind a read buffer whose allocation
/// outlives the connection (see [`WireBuffers`](super::wire::WireBuffers)).
#[derive(Debug)]
pub(crate) struct Inbound {
    transport: Transport,
    buf: Vec<u8>,
    pos: usize,
    filled: usize,
}

impl Inbound {
    /// Reads through `buf` (its length is the buffer size; contents are
    /// overwritten).
    pub(crate) fn new(transport: Transport, buf: Vec<u8>) -> Self {
        Inbound {
            transport,
            buf,
            pos: 0,
            filled: 0,
        }
    }

    pub(crate) fn transport(&mut self) -> &mut Transport {
        &mut self.transport
    }

    /// Takes the bytes buffered but not consumed yet.
    pub(crate) fn take_buffered(&mut self) -> Vec<u8> {
        let early = self.buf[self.pos..self.filled].to_vec();
        self.pos = 0;
        self.filled = 0;
        early
    }

    /// The buffer, for the next connection.
    pub(crate) fn into_buffer(self) -> Vec<u8> {
        self.buf
    }
}

impl Read for Inbound {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let available = io::BufRead::fill_buf(self)?;
            let n = available.len().min(out.len());
            out[..n].copy_from_slice(&available[..n]);
            n
        };
        io::BufRead::consume(self, n);
        Ok(n)
    }
}

impl io::BufRead for Inbound {
    // PERF: a small command arrives whole in one `recv` into the buffer.
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos >= self.filled {
            self.filled = self.transport.read(&mut self.buf)?;
            self.pos = 0;
        }
        Ok(&self.buf[self.pos..self.filled])
    }

    fn consume(&mut self, amount: usize) {
        self.pos = (self.pos + amount).min(self.filled);
    }
}
