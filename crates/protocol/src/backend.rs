//! The seam between the wire protocol and the SQL layer.
//!
//! The server implements [`Backend`]. Every method is ordinary blocking code:
//! the protocol calls it on the connection's own thread, never on a tokio
//! reactor thread, so a backend may take latches, wait for fsync or sleep.
//! One [`Backend::Session`] exists per authenticated connection and is only
//! ever touched by that connection's thread. (Threads are reused for later
//! connections, so a backend must not keep per-connection state in
//! thread-locals beyond `close_session`.)
//!
//! Results flow through [`QueryOutput`]; see its docs for the rules that make
//! multi-statement replies impossible to get wrong.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::auth::AuthPlugin;
use crate::column::ColumnDef;
use crate::error::ServerError;
use crate::flags::{Capabilities, StatusFlags};
use crate::server::{ProcessInfo, ProcessList};
use crate::value::{Value, ValueError};

/// How an account authenticates: its plugin and stored authentication string.
///
/// Stored forms (see [`crate::auth`] for helpers that compute them):
/// * `mysql_native_password`: `SHA1(SHA1(password))`, 20 raw bytes; empty for
///   an empty password.
/// * `caching_sha2_password`: MySQL's own `$A$005$` + 20-byte salt +
///   43-character SHA-256-crypt digest (5,000 rounds); empty for an empty
///   password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountAuth {
    /// The account's authentication plugin.
    pub plugin: AuthPlugin,
    /// The stored authentication string.
    pub auth_string: Vec<u8>,
}

/// What a backend knows about a connection when it opens its session.
#[derive(Debug, Clone)]
pub struct ConnectionInfo {
    /// Server-assigned connection id (`CONNECTION_ID()`).
    pub id: u32,
    /// Authenticated user name.
    pub user: String,
    /// Client host as used for account lookup (the peer's IP address).
    pub host: String,
    /// Client socket address.
    pub peer: SocketAddr,
    /// Schema requested at connect (`CLIENT_CONNECT_WITH_DB`) or change user.
    pub db: Option<String>,
    /// Connection attributes the client sent (`_client_name`, ...).
    pub attrs: BTreeMap<String, String>,
    /// Capabilities negotiated with the client.
    pub capabilities: Capabilities,
    /// True when the connection runs over TLS (for `REQUIRE SSL` accounts).
    pub tls: bool,
    /// Collation id the client asked for.
    pub charset: u16,
    /// Set by `KILL QUERY` (and `KILL CONNECTION`, shutdown): long-running
    /// backend work should poll it and stop with error 1317. The protocol
    /// clears it before each command.
    pub cancel: CancelFlag,
    /// The server's registry of live connections (for `SHOW PROCESSLIST`
    /// and `KILL` statements).
    pub process_list: ProcessList,
}

/// A shared "stop what you are doing" flag.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// A cleared flag.
    pub fn new() -> Self {
        Self::default()
    }

    /// True once cancellation was requested.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    /// Requests cancellation.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Clears the flag.
    pub fn clear(&self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Per-session values the protocol needs between commands; read after every
/// command, so changes (`SET wait_timeout`, `USE db`, `BEGIN`) apply at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionState {
    /// Status flags of the session (autocommit, in transaction, ...), used in
    /// packets the protocol builds itself.
    pub status: StatusFlags,
    /// Idle time after which the connection is closed (the session's
    /// `wait_timeout`, which a backend initialises from `interactive_timeout`
    /// for `CLIENT_INTERACTIVE` clients).
    pub wait_timeout: Duration,
    /// Largest packet accepted from the client.
    pub max_allowed_packet: usize,
    /// Current schema, shown in the process list.
    pub schema: Option<String>,
}

/// A successful statement that returns no rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OkResult {
    /// Rows changed (or matched with `CLIENT_FOUND_ROWS`).
    pub affected_rows: u64,
    /// `LAST_INSERT_ID()` produced by the statement, 0 if none.
    pub last_insert_id: u64,
    /// Session status after the statement.
    pub status: StatusFlags,
    /// Warnings raised by the statement.
    pub warnings: u16,
    /// Human-readable info (`Rows matched: 1  Changed: 1  Warnings: 0`).
    pub info: String,
}

/// The end of a result set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowsEnd {
    /// Session status after the statement.
    pub status: StatusFlags,
    /// Warnings raised by the statement.
    pub warnings: u16,
}

/// Metadata of a prepared statement.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatementMeta {
    /// One definition per `?` placeholder (at most 65,535).
    pub params: Vec<ColumnDef>,
    /// The result columns, empty when the statement returns no rows.
    pub columns: Vec<ColumnDef>,
    /// Warnings raised while preparing.
    pub warnings: u16,
}

/// What `KILL` should stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillMode {
    /// `KILL [CONNECTION]`: close the connection (after its current command).
    Connection,
    /// `KILL QUERY`: cancel the running statement, keep the connection.
    Query,
}

/// Why a [`QueryOutput`] call was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutputError {
    /// The client is gone; stop producing output.
    #[error("client connection closed")]
    ClientGone,
    /// Calls came in an impossible order (rows before columns, ...).
    #[error("result protocol misuse: {0}")]
    Misuse(&'static str),
    /// A row's length differs from the column count.
    #[error("row has {got} values, result set has {expected} columns")]
    RowArity {
        /// Columns announced.
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// A value does not fit its declared column.
    #[error(transparent)]
    Value(#[from] ValueError),
    /// A second result for a client without `CLIENT_MULTI_RESULTS`.
    #[error("client does not accept multiple results")]
    MultiResultsUnsupported,
}

impl From<OutputError> for ServerError {
    fn from(e: OutputError) -> Self {
        ServerError::internal(e.to_string())
    }
}

/// Where a backend sends the results of one command.
///
/// Per statement the backend calls either [`QueryOutput::ok`], or
/// [`QueryOutput::columns`], any number of [`QueryOutput::row`] and then
/// [`QueryOutput::end_rows`]. For a multi-statement query it simply does this
/// once per statement: the output holds back each statement's final packet
/// until it knows whether another result follows, and sets
/// `SERVER_MORE_RESULTS_EXISTS` on all but the last one itself. Errors are
/// not written here: the backend returns `Err(ServerError)` from the
/// command, which ends the batch and sends the `ERR` packet.
pub trait QueryOutput {
    /// A statement finished without a result set.
    fn ok(&mut self, ok: &OkResult) -> Result<(), OutputError>;
    /// A statement starts a result set with these columns.
    fn columns(&mut self, columns: &[ColumnDef]) -> Result<(), OutputError>;
    /// One row; `values.len()` must equal the column count.
    fn row(&mut self, values: &[Value]) -> Result<(), OutputError>;
    /// The current result set is complete.
    fn end_rows(&mut self, end: &RowsEnd) -> Result<(), OutputError>;
}

/// The SQL layer as the protocol sees it.
///
/// All methods block; they run on the connection's thread.
pub trait Backend: Send + Sync + 'static {
    /// Per-connection state (current schema, variables, transaction, plans of
    /// prepared statements).
    type Session: Send + 'static;

    /// Version string for the handshake, e.g. `8.0.36-basalt`.
    fn server_version(&self) -> String;

    /// The account matching `(user, client host)`, or `None`.
    fn lookup_account(&self, user: &str, host: &str) -> Option<AccountAuth>;

    /// Opens the session of a freshly authenticated connection. An error
    /// (unknown schema, account locked, ...) is sent and the connection closed.
    fn open_session(&self, conn: &ConnectionInfo) -> Result<Self::Session, ServerError>;

    /// Values the protocol reads after every command.
    fn session_state(&self, session: &Self::Session) -> SessionState;

    /// `COM_QUERY`. With `multi_statements` the text may hold several
    /// statements separated by `;`, executed in order until one fails;
    /// without it, more than one statement is a syntax error.
    fn query(
        &self,
        session: &mut Self::Session,
        sql: &str,
        multi_statements: bool,
        out: &mut dyn QueryOutput,
    ) -> Result<(), ServerError>;

    /// `COM_STMT_PREPARE`: prepares `sql` under the protocol-assigned `stmt_id`.
    fn prepare(
        &self,
        session: &mut Self::Session,
        stmt_id: u32,
        sql: &str,
    ) -> Result<StatementMeta, ServerError>;

    /// `COM_STMT_EXECUTE` with decoded parameters (one per placeholder).
    fn execute(
        &self,
        session: &mut Self::Session,
        stmt_id: u32,
        params: &[Value],
        out: &mut dyn QueryOutput,
    ) -> Result<(), ServerError>;

    /// `COM_STMT_RESET`: forget per-execution state of the statement.
    fn reset_statement(&self, session: &mut Self::Session, stmt_id: u32)
        -> Result<(), ServerError>;

    /// `COM_STMT_CLOSE`, and every open statement at reset, change user and
    /// disconnect.
    fn close_statement(&self, session: &mut Self::Session, stmt_id: u32);

    /// `COM_INIT_DB`: make `schema` current.
    fn init_db(&self, session: &mut Self::Session, schema: &str) -> Result<(), ServerError>;

    /// `COM_FIELD_LIST`: column definitions of `table` matching `wildcard`.
    fn field_list(
        &self,
        session: &mut Self::Session,
        table: &str,
        wildcard: &str,
    ) -> Result<Vec<ColumnDef>, ServerError>;

    /// `COM_STATISTICS`: the one-line status string.
    fn statistics(&self, session: &mut Self::Session) -> String;

    /// `COM_PING`: report whether the server is usable.
    fn ping(&self, session: &mut Self::Session) -> Result<(), ServerError>;

    /// `COM_RESET_CONNECTION`: reset variables, roll back, drop temporary
    /// tables and user locks. Prepared statements were already closed.
    fn reset_session(&self, session: &mut Self::Session) -> Result<(), ServerError>;

    /// `COM_PROCESS_KILL`: may this session kill `target`? (Own connections
    /// always; others need `CONNECTION_ADMIN`.) The protocol performs the kill.
    fn authorize_kill(
        &self,
        session: &Self::Session,
        target: &ProcessInfo,
        mode: KillMode,
    ) -> Result<(), ServerError>;

    /// The connection is gone (quit, error, kill, change user): roll back
    /// and release everything the session holds.
    fn close_session(&self, session: Self::Session);
}
