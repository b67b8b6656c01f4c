//! Basalt's MySQL wire protocol: packets, handshake, authentication,
//! commands, and the server loop that connects clients to the SQL layer.
//!
//! # Layers
//!
//! ```text
//!   Server::serve                publishes the listener, starts the first connection
//!        │                       thread, awaits shutdown
//!   connection thread (cached)   accept(2) itself, max_connections, registry;
//!        │                       blocking socket I/O (TLS via rustls), handshake +
//!        │                       auth, command loop, prepared statements
//!        │  Backend trait (blocking calls)        QueryOutput (results)
//!   SQL layer                    sessions, parsing, execution
//! ```
//!
//! * [`packet`]: framing (`int<3>` length + `int<1>` sequence id), 16 MiB
//!   split/join, `max_allowed_packet`, and bounds-checked field decoding.
//! * [`handshake`], [`auth`]: HandshakeV10 / HandshakeResponse41, auth
//!   switch, `mysql_native_password` and `caching_sha2_password` (fast path
//!   with a server-side cache; full path with RSA-OAEP when there is no TLS).
//! * [`command`]: command codes and payload parsers, including
//!   `COM_STMT_EXECUTE` parameter decoding.
//! * [`backend`]: the [`Backend`] trait the server implements and the
//!   [`QueryOutput`] sink its results go to.
//! * [`server`]: connection threads and their cache, admission, the
//!   connection registry (`SHOW PROCESSLIST`, `KILL`), timeouts and shutdown.
//! * [`tls`]: the `CLIENT_SSL` upgrade and certificate sources.
//!
//! # Threads and what wakes them
//!
//! * **Connection thread** (OS thread, named `basalt-conn-<n>`, `n` being
//!   the thread's serial number): serves one connection at a time from
//!   greeting to close (MySQL's one-thread-per-connection). An idle one
//!   waits in `accept(2)` on the listening socket, and the kernel wakes
//!   exactly one idle thread per new connection. That thread admits the
//!   connection (ERR 1040 beyond `max_connections`), registers it, reads
//!   the socket itself (blocking `recv`), runs the handshake, every backend
//!   call and all result encoding, and writes each reply with one `send`,
//!   so engine work never blocks a reactor thread and neither a connection
//!   nor a command is ever handed from one thread to another. In `recv` it
//!   wakes on the client's bytes; on its read timeout (`connect_timeout`
//!   during the handshake, `wait_timeout` after: ERR 4031); on `KILL
//!   CONNECTION` or shutdown, which shut the socket's read side so the
//!   blocked `recv` returns (shutdown answers ERR 1053). When the
//!   connection ends it closes the backend session and goes back to
//!   `accept`, or exits when `thread_cache_size` threads already wait
//!   there (one always does; see [`server`]).
//! * **The caller's tokio task** running [`Server::serve`] only waits for
//!   shutdown to complete; at shutdown the listening socket is shut down,
//!   which wakes every thread in `accept`.
//!
//! Why not async I/O with a worker per connection: every packet would be
//! handed between a reactor task and the worker (two thread wake-ups and
//! two channel operations per command), and every new connection between
//! the acceptor and its thread, which on a small machine costs more than
//! the command itself. Why not a fixed pool running commands: a session's
//! statements may block for long (locks, `SLEEP`), and a pool would let
//! them starve other connections.
//!
//! `tests/conn_bench.sh` (workspace root) measures both costs this design
//! is about, connect + authenticate + `SELECT 1` + quit and `SELECT 1`
//! round trips at 1, 4 and 16 connections, side by side with MariaDB.
//!
//! # Invariants
//!
//! * Nothing received is trusted: every length is checked against the bytes
//!   present before use; no decoder panics or indexes out of range
//!   (`#![forbid(unsafe_code)]`, fuzzed, and tested with seeded random input).
//! * Sequence ids: a command starts at 0; every reply packet takes the next
//!   id; a client packet with the wrong id is ERR 1156 and closes the
//!   connection.
//! * A logical packet over `max_allowed_packet` (the session's value, read
//!   after every command) is ERR 1153, then the connection closes.
//! * `SERVER_MORE_RESULTS_EXISTS` is set by the output, never by the
//!   backend: each statement's final packet is held back until the writer
//!   knows whether another result follows (see [`QueryOutput`]).
//! * Status flags in OK/EOF packets come from the backend (per result, or
//!   from [`SessionState`] for packets the protocol builds itself).
//! * An unknown command is ERR 1047, never a blind OK. `LOAD DATA LOCAL` is
//!   refused by never offering `CLIENT_LOCAL_FILES`.
//! * Latches: the process-list map lock is taken before an entry's lock; no
//!   lock is held across `.await`, socket I/O or a backend call.
//! * A connection's socket is read and written only by its thread; other
//!   threads only shut its read side down (`KILL`, shutdown).
//!
//! # Capabilities offered
//!
//! `PROTOCOL_41`, `SECURE_CONNECTION`, `PLUGIN_AUTH`,
//! `PLUGIN_AUTH_LENENC_CLIENT_DATA`, `CONNECT_WITH_DB`, `CONNECT_ATTRS`,
//! `MULTI_STATEMENTS`, `MULTI_RESULTS`, `PS_MULTI_RESULTS`, `TRANSACTIONS`,
//! `DEPRECATE_EOF`, `LONG_PASSWORD`, `FOUND_ROWS`, `LONG_FLAG`, `NO_SCHEMA`,
//! `ODBC`, `IGNORE_SPACE`, `INTERACTIVE`, `IGNORE_SIGPIPE`, and `SSL` unless
//! TLS is disabled ([`tls`]: rustls with a self-signed or data-directory
//! certificate). Not offered: `COMPRESS`, `LOCAL_FILES`, `SESSION_TRACK`,
//! `QUERY_ATTRIBUTES`. The greeting announces `utf8mb4_0900_ai_ci` (255),
//! which MariaDB clients accept as well.
//!
//! Passwords never cross the network in clear text outside TLS: caching_sha2
//! full authentication takes a clear-text password only inside TLS and
//! otherwise requires the RSA-OAEP exchange (a client that sends clear text
//! over plain TCP is denied, as MySQL does).
//!
//! # Prepared statements
//!
//! Statement ids are assigned per connection by the protocol; the backend
//! stores its plan under the same id. Parameter types bound by one
//! execution are reused when the next one sends new-params-bound = 0.
//! `COM_STMT_SEND_LONG_DATA` appends to a parameter (errors are reported by
//! the next execute). `CURSOR_TYPE_READ_ONLY` opens a materialised cursor
//! read with `COM_STMT_FETCH`; malformed execute packets are ERR 1210.
//!
//! # Fuzzing
//!
//! `crates/protocol/fuzz` is a cargo-fuzz crate (outside the workspace) with
//! targets `packet_reader`, `handshake_response` and `stmt_execute`:
//!
//! ```text
//! cd crates/protocol/fuzz
//! cargo +nightly fuzz run packet_reader
//! cargo +nightly fuzz run handshake_response
//! cargo +nightly fuzz run stmt_execute
//! ```
//!
//! The same decoders run in the normal test suite on seeded random input
//! (`tests/decoders_random.rs`; `BASALT_TEST_SEED=<n>` replays a run,
//! `BASALT_FUZZ_ITERS=<n>` runs longer).
//!
//! # Tests
//!
//! Integration tests in `tests/` start a real server on 127.0.0.1 port 0
//! with a small test backend and drive it with the `mysql` crate, raw
//! packets, the `mariadb` CLI and PyMySQL. `tests/ensure_clients.sh`
//! installs the external clients; those tests fail (not skip) when a client
//! is missing.

#![forbid(unsafe_code)]

pub mod auth;
pub mod backend;
pub mod codes;
pub mod column;
pub mod command;
mod connection;
pub mod error;
pub mod flags;
pub mod handshake;
pub mod packet;
pub mod server;
pub mod tls;
pub mod value;

pub use auth::{AuthCache, AuthPlugin, RsaKeys};
pub use backend::{
    AccountAuth, Backend, CancelFlag, ConnectionInfo, KillMode, OkResult, OutputError, QueryOutput,
    RowsEnd, SessionState, StatementMeta,
};
pub use column::{ColumnDef, ColumnFlags, ColumnType};
pub use error::{ProtocolError, ServerError};
pub use flags::{Capabilities, StatusFlags};
pub use server::{
    ProcessInfo, ProcessList, ProtocolConfig, RsaKeySource, Server, ServerHandle, ThreadStats,
};
pub use tls::TlsSource;
pub use value::{Date, DateTime, Time, Value};

/// Runs a server with `backend` on `listener` until it is shut down through
/// the handle `on_start` receives.
pub async fn serve<B: Backend>(
    listener: tokio::net::TcpListener,
    backend: std::sync::Arc<B>,
    config: ProtocolConfig,
    on_start: impl FnOnce(ServerHandle),
) -> Result<(), ProtocolError> {
    let server = tokio::task::spawn_blocking(move || Server::new(backend, config))
        .await
        .map_err(|e| ProtocolError::Rsa(format!("key setup task failed: {e}")))??;
    on_start(server.handle());
    server.serve(listener).await
}
