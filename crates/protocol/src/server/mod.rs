//! Accept loop, connection I/O tasks, worker threads and shutdown.
//!
//! ```text
//!   serve() ── accept ──┬── over max_connections? ── ERR 1040, close
//!                       └── register in ProcessList, spawn:
//!                             I/O task (tokio)  <── channels ──>  worker thread (std)
//!                             socket reads/writes,                 handshake, auth,
//!                             timeouts, KILL, shutdown             backend calls, encoding
//! ```
//!
//! **Threads.** Each connection gets one dedicated worker thread, as MySQL's
//! default `one-thread-per-connection` handling: it owns the backend session
//! and is the only thread that calls the backend for that connection, so
//! engine work (latches, fsync waits, sleeps) never runs on a tokio reactor
//! thread and one slow statement cannot delay another connection. A
//! dedicated thread (rather than `spawn_blocking` per command) keeps the
//! session on one thread for its whole life, gives a predictable stack for
//! deep SQL recursion (`worker_stack_size`), costs no pool hand-off per
//! command, and cannot be starved by unrelated blocking work in a shared
//! pool. It sleeps in `blocking_recv` while the connection is idle.
//!
//! **What wakes whom.** The worker sends `Write` chunks (at 64 KiB or when it
//! needs input), `StartTls` after an SSLRequest, and `Read` requests; the
//! I/O task writes (or runs the TLS handshake), then reads one
//! packet, racing it against the idle deadline (`wait_timeout`, or
//! `connect_timeout` during the handshake), a `KILL CONNECTION` of this
//! connection and server shutdown. On idle timeout it sends ERR 4031, on
//! shutdown ERR 1053, on an oversized packet ERR 1153, on a sequence error
//! ERR 1156; then it drops the channel, which wakes the worker out of
//! `blocking_recv`, and the worker closes the session.
//!
//! **max_connections.** Connections counted are all registered ones,
//! including those still authenticating. The first connection beyond the
//! limit receives ERR 1040 "Too many connections" instead of the greeting.
//! MySQL keeps one extra slot for `CONNECTION_ADMIN`/`SUPER` accounts; Basalt
//! reserves none, because the account is unknown before the handshake.

mod registry;
mod stream;

pub use registry::{ProcessEntry, ProcessInfo, ProcessList};

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

use crate::auth::{AuthCache, AuthPlugin, RsaKeys};
use crate::backend::Backend;
use crate::connection::wire::{
    encode_err, encode_err_pre_handshake, Packet, ReadDeadline, ToIo, Wire,
};
use crate::error::{ProtocolError, ServerError};
use crate::packet::{PacketBuf, PacketReader};
use crate::tls::TlsSource;

use stream::{Prefixed, Stream};

/// Where the RSA key pair for caching_sha2 full authentication comes from.
#[derive(Debug, Clone)]
pub enum RsaKeySource {
    /// Load `private_key.pem` from this directory (the datadir), generating
    /// and writing a 2048-bit pair if it is missing.
    Dir(PathBuf),
    /// Use this key pair.
    Keys(Arc<RsaKeys>),
    /// Generate a 2048-bit pair in memory.
    Generate,
}

/// Static protocol settings; dynamic ones live in [`ServerHandle`].
#[derive(Debug, Clone)]
pub struct ProtocolConfig {
    /// `max_connections` (dynamic through [`ServerHandle::set_max_connections`]).
    pub max_connections: usize,
    /// `connect_timeout`: the whole connection phase must finish within it.
    pub connect_timeout: Duration,
    /// `net_write_timeout`: a write that makes no progress for this long closes the connection.
    pub net_write_timeout: Duration,
    /// Plugin named in the greeting (`default_authentication_plugin`).
    pub default_auth_plugin: AuthPlugin,
    /// Source of the RSA key pair.
    pub rsa_keys: RsaKeySource,
    /// Source of the TLS certificate; `TlsSource::Disabled` stops offering `CLIENT_SSL`.
    pub tls: TlsSource,
    /// Stack size of connection worker threads.
    pub worker_stack_size: usize,
}

impl Default for ProtocolConfig {
    fn default() -> Self {
        ProtocolConfig {
            max_connections: 151,
            connect_timeout: Duration::from_secs(10),
            net_write_timeout: Duration::from_secs(60),
            default_auth_plugin: AuthPlugin::CachingSha2Password,
            rsa_keys: RsaKeySource::Generate,
            tls: TlsSource::SelfSigned,
            worker_stack_size: 2 << 20,
        }
    }
}

/// Server-wide state shared by the accept loop, I/O tasks and workers.
#[derive(Debug)]
pub(crate) struct Shared {
    pub config: ProtocolConfig,
    pub max_connections: AtomicUsize,
    pub auth_cache: Arc<AuthCache>,
    pub rsa: Arc<RsaKeys>,
    pub tls: Option<crate::tls::Acceptor>,
    pub process_list: ProcessList,
    next_id: AtomicU32,
    shutdown: watch::Sender<bool>,
}

impl Shared {
    fn allocate_id(&self) -> u32 {
        loop {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            if id != 0 && !self.process_list.contains(id) {
                return id;
            }
        }
    }
}

/// A control handle: shutdown, dynamic limits, the process list and the
/// auth cache. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ServerHandle {
    shared: Arc<Shared>,
}

impl ServerHandle {
    /// Stops accepting, closes idle connections with ERR 1053, cancels
    /// running statements and closes their connections when they return.
    /// [`Server::serve`] returns once every connection has ended.
    pub fn shutdown(&self) {
        self.shared.shutdown.send_replace(true);
        self.shared.process_list.kill_all();
    }

    /// Changes `max_connections` for connections accepted from now on.
    pub fn set_max_connections(&self, n: usize) {
        self.shared.max_connections.store(n, Ordering::Relaxed);
    }

    /// The registry of live connections.
    pub fn process_list(&self) -> &ProcessList {
        &self.shared.process_list
    }

    /// The caching_sha2 fast-path cache (flush it on `ALTER USER` etc.).
    pub fn auth_cache(&self) -> &Arc<AuthCache> {
        &self.shared.auth_cache
    }
}

/// A MySQL protocol server over a [`Backend`].
#[derive(Debug)]
pub struct Server<B> {
    backend: Arc<B>,
    shared: Arc<Shared>,
}

impl<B: Backend> Server<B> {
    /// Prepares a server; loads or generates the RSA key pair and the TLS
    /// certificate. Generating an RSA key takes noticeable CPU time (call it
    /// outside async context or through `spawn_blocking`).
    pub fn new(backend: Arc<B>, config: ProtocolConfig) -> Result<Self, ProtocolError> {
        let rsa = match &config.rsa_keys {
            RsaKeySource::Dir(dir) => Arc::new(RsaKeys::load_or_generate(dir)?),
            RsaKeySource::Keys(k) => k.clone(),
            RsaKeySource::Generate => Arc::new(RsaKeys::generate(2048)?),
        };
        let tls = crate::tls::acceptor(&config.tls)?;
        let (shutdown, _) = watch::channel(false);
        let shared = Arc::new(Shared {
            tls,
            max_connections: AtomicUsize::new(config.max_connections),
            config,
            auth_cache: Arc::new(AuthCache::new()),
            rsa,
            process_list: ProcessList::new(),
            next_id: AtomicU32::new(1),
            shutdown,
        });
        Ok(Server { backend, shared })
    }

    /// A handle for shutdown and dynamic settings.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            shared: self.shared.clone(),
        }
    }

    /// Accepts connections until [`ServerHandle::shutdown`], then waits for
    /// every connection to end.
    pub async fn serve(self, listener: TcpListener) -> Result<(), ProtocolError> {
        let mut shutdown = self.shared.shutdown.subscribe();
        let mut tasks = JoinSet::new();
        loop {
            if *shutdown.borrow() {
                break;
            }
            tokio::select! {
                accepted = listener.accept() => {
                    match accepted {
                        Ok((stream, peer)) => self.admit(stream, peer, &mut tasks),
                        Err(e) => {
                            // EMFILE and friends: back off instead of spinning.
                            tracing::warn!(error = %e, "accept failed");
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                    }
                }
                _ = shutdown.changed() => {}
                Some(done) = tasks.join_next(), if !tasks.is_empty() => log_task_end(done),
            }
        }
        drop(listener);
        self.shared.process_list.kill_all();
        while let Some(done) = tasks.join_next().await {
            log_task_end(done);
        }
        Ok(())
    }

    fn admit(&self, stream: TcpStream, peer: SocketAddr, tasks: &mut JoinSet<()>) {
        let _ = stream.set_nodelay(true);
        let max = self.shared.max_connections.load(Ordering::Relaxed);
        if self.shared.process_list.len() >= max {
            tracing::warn!(%peer, max, "too many connections");
            tasks.spawn(refuse(stream, self.shared.config.net_write_timeout));
            return;
        }
        let id = self.shared.allocate_id();
        let entry = self.shared.process_list.register(id, peer.to_string());
        let (to_io, from_worker) = mpsc::channel::<ToIo>(8);
        let (to_worker, from_io) = mpsc::channel::<Packet>(1);
        let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
        let backend = self.backend.clone();
        let shared = self.shared.clone();
        let worker_entry = entry.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("basalt-conn-{id}"))
            .stack_size(self.shared.config.worker_stack_size)
            .spawn(move || {
                let _done = done_tx;
                crate::connection::run(
                    backend,
                    shared,
                    Wire::new(to_io, from_io),
                    worker_entry,
                    peer,
                );
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "cannot start connection thread");
            self.shared.process_list.unregister(id);
            tasks.spawn(refuse(stream, self.shared.config.net_write_timeout));
            return;
        }
        let io = ConnectionIo {
            stream,
            entry,
            started: Instant::now(),
            shared: self.shared.clone(),
            to_worker,
            from_worker,
        };
        tasks.spawn(async move {
            io.run().await;
            // The worker owns the session: wait until it has closed it.
            let _ = done_rx.await;
        });
    }
}

fn log_task_end(done: Result<(), tokio::task::JoinError>) {
    if let Err(e) = done {
        tracing::error!(error = %e, "connection task failed");
    }
}

/// One framed ERR packet with sequence id `seq`.
fn err_packet(err: &ServerError, seq: u8) -> Vec<u8> {
    let mut out = PacketBuf::new(seq);
    let s = out.start();
    encode_err(err, out.body());
    out.finish(s);
    out.take()
}

/// Writes and flushes `bytes`, giving up after `limit` (`net_write_timeout`).
async fn write_all_within<W: AsyncWrite + Unpin>(
    w: &mut W,
    bytes: &[u8],
    limit: Duration,
) -> std::io::Result<()> {
    let write = async {
        w.write_all(bytes).await?;
        w.flush().await
    };
    tokio::time::timeout(limit, write).await.map_err(|_| {
        std::io::Error::new(std::io::ErrorKind::TimedOut, "net_write_timeout exceeded")
    })?
}

/// Sends ERR 1040 in place of the greeting (no capabilities are agreed
/// yet, so the packet carries no SQLSTATE marker).
async fn refuse(mut stream: TcpStream, write_timeout: Duration) {
    let mut out = PacketBuf::new(0);
    let s = out.start();
    encode_err_pre_handshake(&ServerError::too_many_connections(), out.body());
    out.finish(s);
    let bytes = out.take();
    if write_all_within(&mut stream, &bytes, write_timeout)
        .await
        .is_ok()
    {
        let _ = tokio::time::timeout(write_timeout, stream.shutdown()).await;
    }
}

/// The async half of one connection.
struct ConnectionIo {
    stream: TcpStream,
    entry: Arc<ProcessEntry>,
    started: Instant,
    shared: Arc<Shared>,
    to_worker: mpsc::Sender<Packet>,
    from_worker: mpsc::Receiver<ToIo>,
}

/// Why the I/O task stops reading.
enum Interrupt {
    Timeout,
    Killed,
    Shutdown,
}

impl ConnectionIo {
    async fn run(self) {
        let ConnectionIo {
            stream,
            entry,
            started,
            shared,
            to_worker,
            mut from_worker,
        } = self;
        let id = entry.id();
        let mut reader =
            PacketReader::new(BufReader::with_capacity(16 * 1024, Stream::Plain(stream)));
        let mut shutdown = shared.shutdown.subscribe();
        let write_timeout = shared.config.net_write_timeout;
        let mut payload = Vec::new();
        while let Some(msg) = from_worker.recv().await {
            match msg {
                ToIo::Write(bytes) => {
                    if let Err(e) = write_all_within(reader.get_mut(), &bytes, write_timeout).await
                    {
                        tracing::debug!(id, error = %e, "write failed");
                        break;
                    }
                }
                ToIo::Close => break,
                ToIo::StartTls => {
                    let deadline = started + shared.config.connect_timeout;
                    let upgrade = start_tls(reader.get_mut(), shared.tls.as_ref());
                    match tokio::time::timeout_at(deadline.into(), upgrade).await {
                        Ok(Ok(())) => tracing::debug!(id, "TLS established"),
                        Ok(Err(e)) => {
                            tracing::debug!(id, error = %e, "TLS handshake failed");
                            break;
                        }
                        Err(_) => {
                            tracing::debug!(id, "TLS handshake timed out");
                            break;
                        }
                    }
                }
                ToIo::Read {
                    expected_seq,
                    deadline,
                    max_packet,
                } => {
                    let until = match deadline {
                        ReadDeadline::Handshake => started + shared.config.connect_timeout,
                        ReadDeadline::Idle(d) => Instant::now() + d,
                    };
                    reader.set_next_seq(expected_seq);
                    let mut payload_buf = std::mem::take(&mut payload);
                    let outcome = tokio::select! {
                        biased;
                        _ = wait_shutdown(&mut shutdown) => Err(Interrupt::Shutdown),
                        _ = entry.killed() => Err(Interrupt::Killed),
                        r = reader.read(&mut payload_buf, max_packet) => Ok(r),
                        _ = tokio::time::sleep_until(until.into()) => Err(Interrupt::Timeout),
                    };
                    let reply = match outcome {
                        Ok(Ok(seq)) => {
                            if to_worker
                                .send(Packet {
                                    seq,
                                    payload: payload_buf,
                                })
                                .await
                                .is_err()
                            {
                                break;
                            }
                            continue;
                        }
                        Ok(Err(e)) => {
                            tracing::debug!(id, error = %e, "read failed");
                            match &e {
                                ProtocolError::PacketTooLarge { .. }
                                | ProtocolError::OutOfOrder { .. } => {
                                    e.to_server_error().map(|err| (err, reader.next_seq()))
                                }
                                _ => None,
                            }
                        }
                        Err(Interrupt::Timeout) => {
                            let in_session = matches!(deadline, ReadDeadline::Idle(_));
                            tracing::debug!(id, in_session, "read timed out");
                            in_session.then(|| (ServerError::interaction_timeout(), 0))
                        }
                        Err(Interrupt::Killed) => None,
                        Err(Interrupt::Shutdown) => Some((ServerError::server_shutdown(), 0)),
                    };
                    if let Some((err, seq)) = reply {
                        let bytes = err_packet(&err, seq);
                        let _ = write_all_within(reader.get_mut(), &bytes, write_timeout).await;
                    }
                    break;
                }
            }
        }
        // Wake the worker (its blocking_recv sees the closed channel).
        drop(to_worker);
        drop(from_worker);
        let _ = tokio::time::timeout(write_timeout, reader.get_mut().shutdown()).await;
        shared.process_list.unregister(id);
    }
}

/// Replaces the plain stream under `buffered` with a TLS stream, handing
/// bytes the buffer already holds (the start of the client's TLS handshake)
/// to the TLS layer.
async fn start_tls(
    buffered: &mut BufReader<Stream>,
    acceptor: Option<&crate::tls::Acceptor>,
) -> Result<(), ProtocolError> {
    let acceptor = acceptor.ok_or_else(|| ProtocolError::Tls("TLS is not configured".into()))?;
    let leftover = buffered.buffer().to_vec();
    std::pin::Pin::new(&mut *buffered).consume(leftover.len());
    let tcp = match std::mem::replace(buffered.get_mut(), Stream::Upgrading) {
        Stream::Plain(tcp) => tcp,
        other => {
            *buffered.get_mut() = other;
            return Err(ProtocolError::Tls("TLS requested twice".into()));
        }
    };
    let tls = acceptor
        .0
        .accept(Prefixed::new(leftover, tcp))
        .await
        .map_err(|e| ProtocolError::Tls(e.to_string()))?;
    *buffered.get_mut() = Stream::Tls(Box::new(tls));
    Ok(())
}

async fn wait_shutdown(rx: &mut watch::Receiver<bool>) {
    while !*rx.borrow_and_update() {
        if rx.changed().await.is_err() {
            // The server is gone: treat as shutdown.
            return;
        }
    }
}
