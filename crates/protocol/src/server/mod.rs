//! Connection threads, the thread cache, admission and shutdown.
//!
//! ```text
//!   serve(listener) ── start the first connection thread, wait for shutdown
//!
//!   connection thread (std, cached):
//!     loop {
//!       accept(2) on the shared listener (blocking; the kernel wakes one thread)
//!       took the last accepting slot? ── start a replacement thread
//!       over max_connections? ── ERR 1040, close, next
//!       register in ProcessList (with the socket)
//!       greeting, auth, then per command:
//!         recv ── dispatch to the backend ── one send of the whole reply
//!       close session, FIN, unregister
//!       room in the cache? ── accept again : exit
//!     }
//! ```
//!
//! **Threads.** Each connection is served by one OS thread from greeting to
//! close, as MySQL's default `one-thread-per-connection` handling: the
//! thread owns the backend session, reads commands from the socket itself,
//! runs them and writes the replies. Engine work (latches, fsync waits,
//! sleeps) therefore never runs on a tokio reactor thread, and one slow
//! statement cannot delay another connection. Because the thread does its
//! own socket I/O and accepts its own connection, a command costs one
//! wake-up of one thread (the kernel wakes it when the client's bytes
//! arrive) and a new connection costs one wake-up (of a thread waiting in
//! `accept`), with no hand-off between threads. Threads whose connection
//! ended wait in `accept` for the next one, up to `thread_cache_size` of
//! them (module `thread_cache`), so a new connection usually costs no thread
//! creation either. The caller's tokio runtime only awaits the end of
//! [`Server::serve`].
//!
//! **What wakes a connection thread.** In `accept`: a new client; the
//! listener's shutdown. In `recv`: the client's bytes; the read timeout
//! (`SO_RCVTIMEO`: the rest of `connect_timeout` during the handshake,
//! `wait_timeout` between commands, answered with ERR 4031); `KILL
//! CONNECTION` and shutdown, which set the entry's kill flag and then shut
//! the socket's read side down so the `recv` returns end of stream at once
//! (shutdown answers with ERR 1053; the socket can still send). In `send`:
//! the client reading, or `SO_SNDTIMEO` (`net_write_timeout`). A running
//! statement is not interrupted by the socket: `KILL QUERY`, `KILL
//! CONNECTION` and shutdown set the session's cancel flag, which the
//! backend polls (error 1317); a killed connection closes after its
//! command.
//!
//! **Shutdown.** [`ServerHandle::shutdown`] marks the server stopping,
//! shuts the listening socket down (every thread in `accept` wakes and
//! exits) and kills every connection as above; [`Server::serve`] returns
//! once every connection thread has closed its session, unregistered and
//! exited.
//!
//! **max_connections.** Connections counted are all registered ones,
//! including those still authenticating; the check and the registration
//! are one step under the registry's lock, so concurrent accepts cannot
//! overshoot. The first connection beyond the limit receives ERR 1040 "Too
//! many connections" instead of the greeting. MySQL keeps one extra slot
//! for `CONNECTION_ADMIN`/`SUPER` accounts; Basalt reserves none, because
//! the account is unknown before the handshake.

mod registry;
mod thread_cache;

pub use registry::{ProcessEntry, ProcessInfo, ProcessList};
pub use thread_cache::ThreadStats;

use std::io::{ErrorKind, Write};
use std::net::{Shutdown, SocketAddr, TcpListener as StdTcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::net::TcpListener;

use crate::auth::{AuthCache, AuthPlugin, RsaKeys};
use crate::backend::{Backend, KillMode};
use crate::connection::wire::{encode_err_pre_handshake, Wire, WireBuffers};
use crate::error::{ProtocolError, ServerError};
use crate::packet::PacketBuf;
use crate::tls::TlsSource;

use thread_cache::ThreadCache;

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
    /// Stack size of connection threads.
    pub worker_stack_size: usize,
    /// `thread_cache_size`: idle connection threads kept for new
    /// connections (dynamic through [`ServerHandle::set_thread_cache_size`]).
    pub thread_cache_size: usize,
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
            // MySQL's autosizing: 8 + max_connections / 100.
            thread_cache_size: 9,
        }
    }
}

/// Server-wide state shared by the connection threads and the handle.
#[derive(Debug)]
pub(crate) struct Shared {
    pub config: ProtocolConfig,
    pub max_connections: AtomicUsize,
    pub auth_cache: Arc<AuthCache>,
    pub rsa: Arc<RsaKeys>,
    pub tls: Option<crate::tls::Acceptor>,
    pub process_list: ProcessList,
    next_id: AtomicU32,
    /// Read by connection threads woken by a kill: shutdown or `KILL`?
    shutting_down: AtomicBool,
    threads: ThreadCache,
    /// The listening socket while `serve` runs (shut down to stop).
    listener: Mutex<Option<Arc<StdTcpListener>>>,
}

impl Shared {
    /// True once [`ServerHandle::shutdown`] was called.
    pub(crate) fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::Acquire)
    }

    fn allocate_id(&self) -> u32 {
        loop {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            if id != 0 && !self.process_list.contains(id) {
                return id;
            }
        }
    }
}

/// Wakes every thread blocked in `accept` on `listener`: on Linux a
/// listening socket shut down for reading stops listening, and pending and
/// future `accept` calls fail at once.
fn shut_listener(listener: &StdTcpListener) {
    if let Err(e) = socket2::SockRef::from(listener).shutdown(Shutdown::Both) {
        tracing::warn!(error = %e, "cannot shut the listening socket down");
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
        if self.shared.shutting_down.swap(true, Ordering::AcqRel) {
            return;
        }
        self.shared.threads.stop();
        if let Some(listener) = self.shared.listener.lock().as_ref() {
            shut_listener(listener);
        }
        self.shared.process_list.kill_all();
    }

    /// Changes `max_connections` for connections accepted from now on.
    pub fn set_max_connections(&self, n: usize) {
        self.shared.max_connections.store(n, Ordering::Relaxed);
    }

    /// Changes `thread_cache_size`; surplus threads exit after their next
    /// connection.
    pub fn set_thread_cache_size(&self, n: usize) {
        self.shared.threads.set_capacity(n);
    }

    /// Counters of the connection thread cache.
    pub fn thread_stats(&self) -> ThreadStats {
        self.shared.threads.stats()
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
        let shared = Arc::new(Shared {
            tls,
            max_connections: AtomicUsize::new(config.max_connections),
            threads: ThreadCache::new(config.thread_cache_size),
            shutting_down: AtomicBool::new(false),
            listener: Mutex::new(None),
            config,
            auth_cache: Arc::new(AuthCache::new()),
            rsa,
            process_list: ProcessList::new(),
            next_id: AtomicU32::new(1),
        });
        Ok(Server { backend, shared })
    }

    /// A handle for shutdown and dynamic settings.
    pub fn handle(&self) -> ServerHandle {
        ServerHandle {
            shared: self.shared.clone(),
        }
    }

    /// Serves connections on `listener` until [`ServerHandle::shutdown`],
    /// then waits for every connection to end. The listener is taken over
    /// by the connection threads (blocking `accept`); the caller's runtime
    /// only awaits the end.
    pub async fn serve(self, listener: TcpListener) -> Result<(), ProtocolError> {
        let listener = listener.into_std()?;
        listener.set_nonblocking(false)?;
        let listener = Arc::new(listener);
        *self.shared.listener.lock() = Some(listener.clone());
        if self.shared.is_shutting_down() {
            // shutdown() ran before the listener was published.
            shut_listener(&listener);
        }
        let acceptor = Arc::new(Acceptor {
            backend: self.backend,
            shared: self.shared.clone(),
            listener,
        });
        if !self.shared.is_shutting_down() && !acceptor.start_thread() {
            return Err(ProtocolError::Io(std::io::Error::other(
                "cannot start a connection thread",
            )));
        }
        drop(acceptor);
        self.shared.threads.wait_all_exited().await;
        // Connections that raced with shutdown are closed by now; the
        // listening socket closes with the last reference.
        self.shared.listener.lock().take();
        Ok(())
    }
}

/// What every connection thread shares: the backend, the server state and
/// the listening socket.
struct Acceptor<B> {
    backend: Arc<B>,
    shared: Arc<Shared>,
    listener: Arc<StdTcpListener>,
}

impl<B: Backend> Acceptor<B> {
    /// Starts one more connection thread (it begins by accepting). False
    /// when the server is stopping or the thread cannot be created.
    fn start_thread(self: &Arc<Self>) -> bool {
        let Some(serial) = self.shared.threads.reserve() else {
            return false;
        };
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("basalt-conn-{serial}"))
            .stack_size(self.shared.config.worker_stack_size)
            .spawn(move || me.thread_main());
        match spawned {
            Ok(_) => true,
            Err(e) => {
                self.shared.threads.unreserve();
                tracing::error!(error = %e, "cannot start a connection thread");
                false
            }
        }
    }

    /// A connection thread: accept, serve, repeat while the cache has room.
    fn thread_main(self: Arc<Self>) {
        let mut buffers = WireBuffers::default();
        loop {
            let (tcp, peer) = match self.listener.accept() {
                Ok(accepted) => accepted,
                Err(e) => {
                    if self.shared.is_shutting_down() {
                        self.shared.threads.exit_accepting();
                        return;
                    }
                    if !matches!(
                        e.kind(),
                        ErrorKind::Interrupted | ErrorKind::ConnectionAborted
                    ) {
                        // EMFILE and friends: back off instead of spinning.
                        tracing::warn!(error = %e, "accept failed");
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    continue;
                }
            };
            let accepted = Instant::now();
            if self.shared.threads.accepted() && !self.start_thread() {
                // Nobody accepts until this thread is done; new clients
                // wait in the listen backlog meanwhile.
                tracing::warn!("no thread is accepting connections");
            }
            // The backend's panics are caught per connection already; this
            // keeps the thread (and the thread counts `serve` waits on)
            // intact should the protocol code itself fail.
            let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.serve_connection(tcp, peer, accepted, buffers)
            }));
            buffers = served.unwrap_or_else(|_| {
                tracing::error!(%peer, "connection handling panicked");
                WireBuffers::default()
            });
            if !self.shared.threads.finished() {
                return;
            }
        }
    }

    fn serve_connection(
        &self,
        tcp: TcpStream,
        peer: SocketAddr,
        accepted: Instant,
        buffers: WireBuffers,
    ) -> WireBuffers {
        let tcp = Arc::new(tcp);
        let max = self.shared.max_connections.load(Ordering::Relaxed);
        let id = self.shared.allocate_id();
        let Some(entry) =
            self.shared
                .process_list
                .register_within(max, id, peer.to_string(), tcp.clone())
        else {
            tracing::warn!(%peer, max, "too many connections");
            refuse(&tcp, self.shared.config.net_write_timeout);
            return buffers;
        };
        let _registered = Registered {
            list: &self.shared.process_list,
            id,
        };
        if self.shared.is_shutting_down() {
            // Registered after shutdown's kill_all looked.
            entry.kill(KillMode::Connection);
        }
        let wire = Wire::new(tcp, accepted, entry.clone(), self.shared.clone(), buffers);
        crate::connection::run(self.backend.clone(), self.shared.clone(), wire, entry, peer)
    }
}

/// Unregisters a connection when its thread is done with it, also when
/// that ends in a panic.
struct Registered<'a> {
    list: &'a ProcessList,
    id: u32,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.list.unregister(self.id);
    }
}

/// Sends ERR 1040 in place of the greeting and closes. No capabilities are
/// agreed yet, so the packet carries no SQLSTATE marker.
fn refuse(tcp: &TcpStream, write_timeout: Duration) {
    let mut out = PacketBuf::new(0);
    let s = out.start();
    encode_err_pre_handshake(&ServerError::too_many_connections(), out.body());
    out.finish(s);
    let sent = tcp
        .set_write_timeout(Some(write_timeout))
        .and_then(|()| (&*tcp).write_all(out.as_bytes()));
    if sent.is_ok() {
        let _ = tcp.shutdown(Shutdown::Write);
    }
}
