//! The per-connection state machine, run on the connection's own thread.
//!
//! ```text
//!            accept
//!              |
//!   greeting --+--> read HandshakeResponse41 --> authenticate --> open_session --> OK
//!                                                   | fail                 | fail
//!                                                   v                      v
//!                                                ERR 1045, close        ERR, close
//!   command loop:  read command (idle = wait_timeout) -> dispatch -> reply
//!                  COM_QUIT / kill / client gone / COM_CHANGE_USER failure -> close
//! ```
//!
//! The thread owns the backend session, the prepared-statement table, the
//! socket and its buffers ([`wire`], over [`transport`]).

mod auth_flow;
mod output;
mod statement;
mod transport;
pub(crate) mod wire;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use crate::auth::Scramble;
use crate::backend::{Backend, ConnectionInfo, KillMode, OkResult, SessionState};
use crate::column::ColumnDef;
use crate::command::{
    Command, MYSQL_OPTION_MULTI_STATEMENTS_OFF, MYSQL_OPTION_MULTI_STATEMENTS_ON,
};
use crate::error::ServerError;
use crate::flags::{Capabilities, StatusFlags};
use crate::handshake::{
    ChangeUser, HandshakeResponse, HandshakeV10, DEFAULT_CHARSET, SSL_REQUEST_LEN,
};
use crate::server::{ProcessEntry, Shared};

use auth_flow::{AuthFailure, AUTH_MAX_PACKET};
use output::{encode_eof, encode_ok, ResultWriter, RowFormat};
use statement::PreparedStmt;
use wire::{ReadDeadline, Wire, WireBuffers};

/// Everything the connection thread knows about its connection.
pub(crate) struct Connection<B: Backend> {
    backend: Arc<B>,
    shared: Arc<Shared>,
    wire: Wire,
    entry: Arc<ProcessEntry>,
    id: u32,
    peer: SocketAddr,
    host: String,
    scramble: Scramble,
    caps: Capabilities,
    /// The connection runs over TLS.
    secure: bool,
    info: Option<ConnectionInfo>,
    session: Option<B::Session>,
    state: SessionState,
    multi_statements: bool,
    statements: HashMap<u32, PreparedStmt>,
    next_stmt_id: u32,
    /// Reused column buffer for result sets.
    columns: Vec<ColumnDef>,
}

/// Connection thread entry point: runs one connection to completion and
/// hands back the socket buffers for the thread's next connection.
pub(crate) fn run<B: Backend>(
    backend: Arc<B>,
    shared: Arc<Shared>,
    wire: Wire,
    entry: Arc<ProcessEntry>,
    peer: SocketAddr,
) -> WireBuffers {
    let state = SessionState {
        status: StatusFlags::AUTOCOMMIT,
        wait_timeout: shared.config.connect_timeout,
        max_allowed_packet: AUTH_MAX_PACKET,
        schema: None,
    };
    let mut conn = Connection {
        id: entry.id(),
        backend,
        shared,
        wire,
        entry,
        peer,
        host: peer.ip().to_string(),
        scramble: Scramble::generate(),
        caps: Capabilities::default(),
        secure: false,
        info: None,
        session: None,
        state,
        multi_statements: false,
        statements: HashMap::new(),
        next_stmt_id: 1,
        columns: Vec::new(),
    };
    // A panicking backend takes down this connection only. The session may
    // be mid-change, so it is dropped rather than handed to close_session.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if conn.handshake().is_ok() {
            conn.command_loop();
        }
        conn.close();
    }));
    if outcome.is_err() {
        tracing::error!(
            id = conn.id,
            "connection thread panicked; connection closed"
        );
        // A half-encoded reply must not reach the client.
        conn.wire.out.clear();
        conn.wire.close();
    }
    conn.entry.detach_socket();
    conn.wire.into_buffers()
}

/// The connection is over; nothing more is sent.
struct Closed;

/// Initial capacity of the command payload buffer.
const COMMAND_BUFFER: usize = 1024;

/// A command buffer grown beyond this is released after the command.
const MAX_KEPT_COMMAND_BUFFER: usize = 1 << 20;

impl<B: Backend> Connection<B> {
    fn handshake(&mut self) -> Result<(), Closed> {
        let version = self.backend.server_version();
        let offered = if self.shared.tls.is_some() {
            Capabilities::SERVER | Capabilities::SSL
        } else {
            Capabilities::SERVER
        };
        let greeting = HandshakeV10 {
            server_version: &version,
            connection_id: self.id,
            scramble: &self.scramble,
            capabilities: offered,
            charset: DEFAULT_CHARSET,
            status: StatusFlags::AUTOCOMMIT,
            plugin: self.shared.config.default_auth_plugin,
        };
        let s = self.wire.out.start();
        greeting.encode(self.wire.out.body());
        self.wire.out.finish(s);
        let mut packet = self
            .wire
            .read(ReadDeadline::Handshake, AUTH_MAX_PACKET)
            .map_err(|_| Closed)?;
        let client_caps = |p: &[u8]| {
            p.get(..4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .unwrap_or(0)
        };
        if client_caps(&packet.payload) & Capabilities::SSL.0 != 0 {
            if packet.payload.len() != SSL_REQUEST_LEN || !offered.contains(Capabilities::SSL) {
                tracing::debug!(id = self.id, "unexpected TLS request");
                return self.fail(&ServerError::bad_handshake());
            }
            // SSLRequest: switch to TLS, then the full response follows inside it.
            self.wire.start_tls().map_err(|_| Closed)?;
            packet = self
                .wire
                .read(ReadDeadline::Handshake, AUTH_MAX_PACKET)
                .map_err(|_| Closed)?;
            self.secure = true;
            if client_caps(&packet.payload) & Capabilities::SSL.0 == 0 {
                return self.fail(&ServerError::bad_handshake());
            }
        }
        let response = match HandshakeResponse::parse(&packet.payload) {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(id = self.id, error = %e, "bad handshake response");
                return self.fail(&ServerError::bad_handshake());
            }
        };
        self.caps = response.capabilities & offered;
        self.multi_statements = self.caps.contains(Capabilities::MULTI_STATEMENTS);
        match self.authenticate(
            &response.user,
            response.plugin.as_deref(),
            response.auth_response,
            ReadDeadline::Handshake,
        ) {
            Ok(()) => {}
            Err(AuthFailure::Disconnected) => return Err(Closed),
            Err(AuthFailure::Denied { using_password }) => {
                let e = ServerError::access_denied(&response.user, &self.host, using_password);
                tracing::info!(id = self.id, user = %response.user, host = %self.host, "access denied");
                return self.fail(&e);
            }
        }
        let info = self.connection_info(
            response.user,
            response.database,
            response.attrs,
            u16::from(response.charset),
        );
        self.start_session(info)
    }

    fn connection_info(
        &self,
        user: String,
        db: Option<String>,
        attrs: std::collections::BTreeMap<String, String>,
        charset: u16,
    ) -> ConnectionInfo {
        ConnectionInfo {
            id: self.id,
            user,
            host: self.host.clone(),
            peer: self.peer,
            db,
            attrs,
            capabilities: self.caps,
            tls: self.secure,
            charset,
            cancel: self.entry.cancel_flag().clone(),
            process_list: self.shared.process_list.clone(),
        }
    }

    /// Opens the backend session and sends the final OK of authentication.
    fn start_session(&mut self, info: ConnectionInfo) -> Result<(), Closed> {
        match self.backend.open_session(&info) {
            Ok(session) => {
                self.state = self.backend.session_state(&session);
                self.session = Some(session);
                self.entry
                    .set_user(&info.user, self.state.schema.as_deref());
                self.info = Some(info);
                self.send_ok(self.state.status);
                tracing::debug!(id = self.id, "session opened");
                Ok(())
            }
            Err(e) => self.fail(&e),
        }
    }

    /// Sends `e` and ends the connection.
    fn fail(&mut self, e: &ServerError) -> Result<(), Closed> {
        self.wire.err(e);
        Err(Closed)
    }

    fn send_ok(&mut self, status: StatusFlags) {
        let s = self.wire.out.start();
        encode_ok(self.wire.out.body(), 0x00, &OkResult::default(), status);
        self.wire.out.finish(s);
    }

    fn send_eof(&mut self, status: StatusFlags, warnings: u16) {
        let s = self.wire.out.start();
        encode_eof(self.wire.out.body(), self.caps, status, warnings);
        self.wire.out.finish(s);
    }

    fn reply(&mut self, result: Result<(), ServerError>) {
        match result {
            Ok(()) => {
                let status = self.refresh_state();
                self.send_ok(status);
            }
            Err(e) => self.wire.err(&e),
        }
    }

    /// Re-reads the session state and returns its status flags.
    fn refresh_state(&mut self) -> StatusFlags {
        if let Some(s) = &self.session {
            self.state = self.backend.session_state(s);
        }
        self.state.status
    }

    // PERF: the per-command loop: one recv, the backend call, one send; the
    // payload buffer is reused.
    fn command_loop(&mut self) {
        let mut payload = Vec::with_capacity(COMMAND_BUFFER);
        loop {
            if self
                .wire
                .read_command(
                    self.state.wait_timeout,
                    self.state.max_allowed_packet,
                    &mut payload,
                )
                .is_err()
            {
                return;
            }
            self.entry.cancel_flag().clear();
            let keep_going = self.dispatch(&payload);
            self.refresh_state();
            self.entry.end_command(self.state.schema.as_deref());
            if !keep_going || self.entry.is_killed() || self.wire.flush().is_err() {
                return;
            }
            if payload.capacity() > MAX_KEPT_COMMAND_BUFFER {
                // One huge statement must not pin its buffer for the
                // connection's life.
                payload = Vec::with_capacity(COMMAND_BUFFER);
            }
        }
    }

    /// Runs one command; false ends the connection.
    fn dispatch(&mut self, payload: &[u8]) -> bool {
        let command = match Command::parse(payload) {
            Ok(c) => c,
            Err(e) => {
                tracing::debug!(id = self.id, error = %e, "malformed command");
                let err = match e {
                    crate::error::ProtocolError::Malformed { .. } => ServerError::invalid_utf8(),
                    _ => ServerError::malformed_packet(),
                };
                self.wire.err(&err);
                return true;
            }
        };
        let info = match &command {
            Command::Query(q) | Command::StmtPrepare(q) => Some(*q),
            _ => None,
        };
        self.entry.begin_command(command.name(), info);
        let Some(session) = self.session.as_mut() else {
            return false;
        };
        let backend = self.backend.clone();
        match command {
            Command::Quit => return false,
            Command::Query(sql) => {
                let mut out = ResultWriter::new(
                    &mut self.wire,
                    self.caps,
                    RowFormat::Text,
                    self.state.status,
                    &mut self.columns,
                );
                let r = backend.query(session, sql, self.multi_statements, &mut out);
                let _ = out.finish(r);
            }
            Command::InitDb(db) => {
                let r = backend.init_db(session, db);
                self.reply(r);
            }
            Command::Ping => {
                let r = backend.ping(session);
                self.reply(r);
            }
            Command::Statistics => {
                let text = backend.statistics(session);
                self.wire.packet(text.as_bytes());
            }
            Command::FieldList { table, wildcard } => {
                match backend.field_list(session, table, wildcard) {
                    Ok(cols) => {
                        for c in &cols {
                            let s = self.wire.out.start();
                            c.encode(self.wire.out.body(), true);
                            self.wire.out.finish(s);
                        }
                        let status = self.refresh_state();
                        self.send_eof(status, 0);
                    }
                    Err(e) => self.wire.err(&e),
                }
            }
            Command::ProcessKill(target) => self.process_kill(target),
            Command::SetOption(opt) => match opt {
                MYSQL_OPTION_MULTI_STATEMENTS_ON | MYSQL_OPTION_MULTI_STATEMENTS_OFF => {
                    self.multi_statements = opt == MYSQL_OPTION_MULTI_STATEMENTS_ON;
                    let status = self.state.status;
                    self.send_eof(status, 0);
                }
                _ => self.wire.err(&ServerError::unknown_command()),
            },
            Command::ResetConnection => {
                self.close_all_statements();
                let Some(session) = self.session.as_mut() else {
                    return false;
                };
                let r = backend.reset_session(session);
                self.reply(r);
            }
            Command::ChangeUser(body) => return self.change_user(body),
            Command::StmtPrepare(sql) => self.prepare(sql),
            Command::StmtExecute(body) => self.execute(body),
            Command::StmtSendLongData {
                stmt_id,
                param,
                data,
            } => self.send_long_data(stmt_id, param, data),
            Command::StmtClose(id) => {
                if self.statements.remove(&id).is_some() {
                    backend.close_statement(session, id);
                }
            }
            Command::StmtReset(id) => self.reset_statement(id),
            Command::StmtFetch { stmt_id, rows } => self.fetch(stmt_id, rows),
            Command::Unknown(code) => {
                tracing::debug!(id = self.id, code, "unknown command");
                self.wire.err(&ServerError::unknown_command());
            }
        }
        true
    }

    fn process_kill(&mut self, target: u32) {
        let Some(info) = self.shared.process_list.get(target) else {
            self.wire.err(&ServerError::no_such_thread(target));
            return;
        };
        let Some(session) = self.session.as_ref() else {
            return;
        };
        match self
            .backend
            .authorize_kill(session, &info, KillMode::Connection)
        {
            Ok(()) => {
                self.shared.process_list.kill(target, KillMode::Connection);
                let status = self.state.status;
                self.send_ok(status);
            }
            Err(e) => self.wire.err(&e),
        }
    }

    /// COM_CHANGE_USER: full re-authentication, then a fresh session. A
    /// failure closes the connection, as the old session is already gone.
    fn change_user(&mut self, body: &[u8]) -> bool {
        let request = match ChangeUser::parse(body, self.caps) {
            Ok(r) => r,
            Err(_) => {
                self.wire.err(&ServerError::malformed_packet());
                return true;
            }
        };
        self.close_all_statements();
        if let Some(old) = self.session.take() {
            self.backend.close_session(old);
        }
        self.info = None;
        let idle = ReadDeadline::Idle(self.state.wait_timeout);
        match self.authenticate(
            &request.user,
            request.plugin.as_deref(),
            request.auth_response,
            idle,
        ) {
            Ok(()) => {}
            Err(AuthFailure::Disconnected) => return false,
            Err(AuthFailure::Denied { using_password }) => {
                let e = ServerError::access_denied(&request.user, &self.host, using_password);
                self.wire.err(&e);
                return false;
            }
        }
        let charset = request.charset.unwrap_or(u16::from(DEFAULT_CHARSET));
        let info = self.connection_info(request.user, request.database, request.attrs, charset);
        self.start_session(info).is_ok()
    }

    fn close_all_statements(&mut self) {
        if let Some(session) = self.session.as_mut() {
            for (id, _) in self.statements.drain() {
                self.backend.close_statement(session, id);
            }
        }
        self.statements.clear();
    }

    fn close(&mut self) {
        self.close_all_statements();
        if let Some(session) = self.session.take() {
            self.backend.close_session(session);
        }
        self.wire.close();
        tracing::debug!(id = self.id, "connection closed");
    }
}
