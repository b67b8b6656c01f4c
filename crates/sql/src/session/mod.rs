//! Sessions: one per authenticated connection.
//!
//! A [`Session`] is owned by its connection's worker thread (the protocol
//! never shares it), so nothing in it is locked. It holds who the client
//! is ([`SecurityContext`]), the current schema, its copy of the system
//! variables, user variables, the transaction state, the diagnostics area
//! (`SHOW WARNINGS`), `LAST_INSERT_ID()`/`ROW_COUNT()`/`FOUND_ROWS()`,
//! prepared statements (protocol ids and SQL names) and the cancel flag
//! `KILL QUERY` sets.
//!
//! ```text
//!   COM_QUERY text ──split──> stmt 1, stmt 2, ...   (stop at the first error)
//!     per statement: cancel? ─> parse ─> diagnostics area (cleared unless
//!                    SHOW WARNINGS/ERRORS) ─> count Com_xxx ─> execute ─> output
//! ```
//!
//! Diagnostics: each statement replaces the list, except the diagnostic
//! statements (`SHOW WARNINGS`, `SHOW ERRORS`, `SHOW COUNT(*) ...`) and,
//! as in MySQL, statements that read `@@warning_count` or
//! `@@error_count`, so those report on the statement before them.

mod prepared;
pub mod transaction;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use basalt_config::{keys, SessionVars, SqlMode};
use basalt_protocol::{
    CancelFlag, Capabilities, ColumnDef, ConnectionInfo, KillMode, OkResult, ProcessInfo,
    ProcessList, QueryOutput, RowsEnd, ServerError, SessionState, StatusFlags,
};

use crate::acl::{Privileges, SecurityContext};
use crate::error::{Level, SqlError, SqlResult, Warning};
use crate::exec::{self, Outcome};
use crate::expr::{BindContext, EvalContext, SessionFacts, UserVars};
use crate::parse::{self, ParseOptions, Statement};
use crate::server::{counter_index, SqlServer, COUNTERS};
use crate::value::temporal::Clock;
use crate::value::{Collation, SqlType, Value};

pub use prepared::Prepared;
pub use transaction::Transaction;

/// Most rows `SHOW WARNINGS` keeps (`max_error_count`).
pub const MAX_ERROR_COUNT: usize = 1024;

/// One connection's SQL state.
#[derive(Debug)]
pub struct Session {
    pub(crate) server: Arc<SqlServer>,
    /// Connection id.
    pub id: u32,
    /// Login and matched account.
    pub security: SecurityContext,
    /// System variables.
    pub vars: SessionVars,
    /// User variables (`@name`, lower-cased).
    pub user_vars: UserVars,
    /// `DATABASE()`, `LAST_INSERT_ID()`, ...
    pub facts: SessionFacts,
    /// Transaction state.
    pub txn: Transaction,
    /// The diagnostics area of the last non-diagnostic statement.
    pub warnings: Vec<Warning>,
    /// Rows of `warnings` that predate the running statement (kept by a
    /// diagnostic statement); OK/EOF packets count only the others.
    warning_base: usize,
    pub(crate) prepared: HashMap<u32, Prepared>,
    pub(crate) sql_prepared: HashMap<String, Prepared>,
    pub(crate) cancel: CancelFlag,
    pub(crate) process_list: ProcessList,
    pub(crate) counters: Vec<u64>,
    capabilities: Capabilities,
    interactive: bool,
}

impl Session {
    /// Opens the session of an authenticated connection: matches the
    /// account, copies the variables, applies `CONNECT_WITH_DB` (1044 /
    /// 1049) and runs `init_connect` for accounts without
    /// `CONNECTION_ADMIN`/`SUPER`.
    pub fn open(server: Arc<SqlServer>, info: &ConnectionInfo) -> SqlResult<Session> {
        let account = server
            .acl
            .match_account(&info.user, &info.host)
            .ok_or_else(|| SqlError::AccessDenied {
                user: info.user.clone(),
                host: info.host.clone(),
                using_password: false,
            })?;
        let security = SecurityContext {
            user: info.user.clone(),
            host: info.host.clone(),
            priv_user: account.user.clone(),
            priv_host: account.host.clone(),
        };
        let mut vars = SessionVars::new(server.globals.clone());
        let interactive = info.capabilities.contains(Capabilities::INTERACTIVE);
        if interactive {
            let t = vars.get(keys::INTERACTIVE_TIMEOUT);
            let _ = vars.set(
                basalt_config::Qualifier::Session,
                "wait_timeout",
                &basalt_config::Assignment::UInt(t),
            );
        }
        if let Some(coll) = basalt_config::sysvar::charset::collation_by_id(u64::from(info.charset))
        {
            let _ = vars.set(
                basalt_config::Qualifier::Session,
                "character_set_client",
                &basalt_config::Assignment::Str(coll.charset.to_string()),
            );
            let _ = vars.set(
                basalt_config::Qualifier::Session,
                "character_set_results",
                &basalt_config::Assignment::Str(coll.charset.to_string()),
            );
            let _ = vars.set(
                basalt_config::Qualifier::Session,
                "collation_connection",
                &basalt_config::Assignment::Str(coll.name.to_string()),
            );
        }
        let facts = SessionFacts {
            connection_id: u64::from(info.id),
            user: security.user_text(),
            current_user: security.current_user_text(),
            db: None,
            last_insert_id: 0,
            row_count: -1,
            found_rows: 0,
        };
        let mut session = Session {
            server: server.clone(),
            id: info.id,
            security,
            vars,
            user_vars: UserVars::new(),
            facts,
            txn: Transaction::default(),
            warnings: Vec::new(),
            warning_base: 0,
            prepared: HashMap::new(),
            sql_prepared: HashMap::new(),
            cancel: info.cancel.clone(),
            process_list: info.process_list.clone(),
            counters: vec![0; COUNTERS.len()],
            capabilities: info.capabilities,
            interactive,
        };
        if let Some(db) = info.db.as_deref().filter(|d| !d.is_empty()) {
            session.use_schema(db)?;
        }
        server.status.session_opened();
        let init = server.globals.get(keys::INIT_CONNECT);
        if !init.trim().is_empty()
            && !session.has_global(Privileges::CONNECTION_ADMIN | Privileges::SUPER)
        {
            let mut sink = exec::DiscardOutput;
            if let Err(e) = session.run_text(&init, true, &mut sink) {
                tracing::warn!(id = info.id, error = %e, "init_connect failed; closing the connection");
                server.status.session_closed();
                return Err(e);
            }
        }
        tracing::debug!(id = info.id, user = %session.security.user, "session opened");
        Ok(session)
    }

    /// The shared server state.
    pub fn server(&self) -> &Arc<SqlServer> {
        &self.server
    }

    /// True when the client asked for `CLIENT_FOUND_ROWS`.
    pub fn found_rows_flag(&self) -> bool {
        self.capabilities.contains(Capabilities::FOUND_ROWS)
    }

    /// Whether the session's account has any of `privileges` globally.
    pub fn has_global(&self, privileges: Privileges) -> bool {
        self.server
            .acl
            .global_privileges(&self.security)
            .intersects(privileges)
    }

    /// Status flags for OK/EOF packets.
    pub fn status_flags(&self) -> StatusFlags {
        let mut f = StatusFlags::default();
        if self.vars.get(keys::AUTOCOMMIT) {
            f |= StatusFlags::AUTOCOMMIT;
        }
        if self.txn.is_active() {
            f |= StatusFlags::IN_TRANS;
            if self.txn.is_read_only() {
                f |= StatusFlags::IN_TRANS_READONLY;
            }
        }
        if self.sql_mode().contains(SqlMode::NO_BACKSLASH_ESCAPES) {
            f |= StatusFlags::NO_BACKSLASH_ESCAPES;
        }
        f
    }

    /// What the protocol reads after every command.
    pub fn state(&self) -> SessionState {
        SessionState {
            status: self.status_flags(),
            wait_timeout: Duration::from_secs(self.vars.get(keys::WAIT_TIMEOUT)),
            max_allowed_packet: usize::try_from(self.vars.get(keys::MAX_ALLOWED_PACKET))
                .unwrap_or(usize::MAX),
            schema: self.facts.db.clone(),
        }
    }

    /// `sql_mode`.
    pub fn sql_mode(&self) -> SqlMode {
        self.vars.get(keys::SQL_MODE)
    }

    /// How text is read under the current `sql_mode`.
    pub fn parse_options(&self) -> ParseOptions {
        let mode = self.sql_mode();
        ParseOptions {
            backslash_escapes: !mode.contains(SqlMode::NO_BACKSLASH_ESCAPES),
            ansi_quotes: mode.contains(SqlMode::ANSI_QUOTES),
        }
    }

    /// `collation_connection`.
    pub fn connection_collation(&self) -> Collation {
        Collation::by_name(&self.vars.get(keys::COLLATION_CONNECTION)).unwrap_or(Collation::DEFAULT)
    }

    /// A binder context over the session (`params`: `?` values, or `None`
    /// while preparing; `columns`: the row schema for `SHOW ... WHERE`).
    pub(crate) fn bind_context<'a>(
        &'a self,
        params: Option<&'a [(Value, SqlType)]>,
        columns: &'a [(String, SqlType)],
    ) -> BindContext<'a> {
        BindContext {
            session_vars: Some(&self.vars),
            user_vars: &self.user_vars,
            params,
            collation: self.connection_collation(),
            db: self.facts.db.as_deref(),
            columns,
            warning_count: self.warnings.len() as u64,
            error_count: self.error_count(),
            last_insert_id: self.facts.last_insert_id,
            pipes_as_concat: self.sql_mode().contains(SqlMode::PIPES_AS_CONCAT),
        }
    }

    /// An evaluation context over the session for one statement.
    pub(crate) fn eval_context<'a>(
        &'a mut self,
        clock: Clock,
        row: &'a [Value],
    ) -> EvalContext<'a> {
        let max_allowed_packet = self.vars.get(keys::MAX_ALLOWED_PACKET);
        let sql_mode = self.sql_mode();
        EvalContext {
            facts: &mut self.facts,
            user_vars: &mut self.user_vars,
            warnings: &mut self.warnings,
            clock,
            cancel: Some(&self.cancel),
            sql_mode,
            max_allowed_packet,
            row,
        }
    }

    /// The statement clock in the session's time zone.
    pub(crate) fn clock(&self) -> Clock {
        Clock::now(&self.vars.get(keys::TIME_ZONE))
    }

    /// Counts a statement in the session's and the server's counters.
    pub(crate) fn count(&mut self, name: &str) {
        if let Some(i) = counter_index(name) {
            self.counters[i] += 1;
            self.server.status.bump(i);
        }
    }

    /// The session's value of counter `name`.
    pub fn counter(&self, name: &str) -> u64 {
        counter_index(name).map_or(0, |i| self.counters[i])
    }

    /// Adds a diagnostic (capped at [`MAX_ERROR_COUNT`]).
    pub(crate) fn warn(&mut self, w: Warning) {
        if self.warnings.len() < MAX_ERROR_COUNT {
            self.warnings.push(w);
        }
    }

    fn warning_total(&self) -> u16 {
        (self.warnings.len() - self.warning_base.min(self.warnings.len()))
            .min(usize::from(u16::MAX)) as u16
    }

    /// Error-level rows in the diagnostics area (`@@error_count`).
    pub fn error_count(&self) -> u64 {
        self.warnings
            .iter()
            .filter(|w| w.level == Level::Error)
            .count() as u64
    }

    /// `USE db` / `COM_INIT_DB` / connect-with-db: privilege (1044), then
    /// existence (1049).
    pub fn use_schema(&mut self, db: &str) -> SqlResult<()> {
        self.server.acl.check_db_access(&self.security, db)?;
        if self.server.acl.schema(db).is_none() {
            return Err(SqlError::UnknownDatabase(db.to_string()));
        }
        self.facts.db = Some(db.to_string());
        if let Some(s) = self.server.acl.schema(db) {
            let _ = self.vars.set(
                basalt_config::Qualifier::Session,
                "collation_database",
                &basalt_config::Assignment::Str(s.collation),
            );
        }
        Ok(())
    }

    /// `COM_QUERY`.
    pub fn query(
        &mut self,
        sql: &str,
        multi: bool,
        out: &mut dyn QueryOutput,
    ) -> Result<(), ServerError> {
        self.count("Questions");
        self.run_text(sql, multi, out)
            .map_err(|e| e.to_server_error())
    }

    /// Runs every statement of `text` until one fails.
    pub(crate) fn run_text(
        &mut self,
        text: &str,
        multi: bool,
        out: &mut dyn QueryOutput,
    ) -> SqlResult<()> {
        let opts = self.parse_options();
        let statements = match parse::split(text, opts) {
            Ok(s) => s,
            Err(e) => return Err(self.fail(e)),
        };
        if statements.is_empty() {
            if parse::has_comment(text) {
                // As MySQL: text that is only comments (a MariaDB-only
                // `/*M!...*/`, say) is an empty statement, not an error.
                self.begin_diagnostics(false);
                return self.write_outcome(exec::Outcome::ok(), out);
            }
            return Err(self.fail(SqlError::EmptyQuery));
        }
        if statements.len() > 1 && !multi {
            // Without CLIENT_MULTI_STATEMENTS the text is one statement:
            // the second one is where the syntax error is.
            let second = &statements[1];
            return Err(self.fail(SqlError::Syntax {
                near: format!("; {second}").chars().take(80).collect(),
                line: 1,
            }));
        }
        for stmt_text in &statements {
            self.run_one(stmt_text, out)?;
        }
        Ok(())
    }

    /// Parses and executes one statement, writing its result to `out`.
    fn run_one(&mut self, text: &str, out: &mut dyn QueryOutput) -> SqlResult<()> {
        if self.cancel.is_cancelled() {
            return Err(self.fail(SqlError::Interrupted));
        }
        self.count("Queries");
        let stmt = match parse::parse_statement(text, self.parse_options()) {
            Ok(s) => s,
            Err(SqlError::EmptyQuery) if parse::has_comment(text) => {
                self.begin_diagnostics(false);
                return self.write_outcome(exec::Outcome::ok(), out);
            }
            Err(e) => {
                self.begin_diagnostics(false);
                return Err(self.fail(e));
            }
        };
        // As MySQL: a statement that reads @@warning_count or
        // @@error_count keeps the diagnostics area it reports on.
        let lower = text.to_ascii_lowercase();
        let keep = lower.contains("warning_count") || lower.contains("error_count");
        self.run_statement_keep(&stmt, None, out, keep)
    }

    /// Executes a parsed statement (with `?` values when prepared).
    pub(crate) fn run_statement(
        &mut self,
        stmt: &Statement,
        params: Option<&[(Value, SqlType)]>,
        out: &mut dyn QueryOutput,
    ) -> SqlResult<()> {
        self.run_statement_keep(stmt, params, out, false)
    }

    fn run_statement_keep(
        &mut self,
        stmt: &Statement,
        params: Option<&[(Value, SqlType)]>,
        out: &mut dyn QueryOutput,
        keep: bool,
    ) -> SqlResult<()> {
        let diagnostic = matches!(
            stmt,
            Statement::Show(parse::Show::Warnings { .. })
                | Statement::Show(parse::Show::WarningCount { .. })
        );
        self.begin_diagnostics(diagnostic || keep);
        self.count(stmt.com_counter());
        let outcome = match exec::execute(self, stmt, params) {
            Ok(o) => o,
            Err(e) => return Err(self.fail(e)),
        };
        self.write_outcome(outcome, out)
    }

    fn begin_diagnostics(&mut self, keep: bool) {
        if !keep {
            self.warnings.clear();
        }
        self.warning_base = self.warnings.len();
    }

    /// Records a failed statement in the diagnostics area.
    pub(crate) fn fail(&mut self, e: SqlError) -> SqlError {
        let (code, _) = e.code_and_state();
        self.warn(Warning {
            level: Level::Error,
            code,
            message: e.to_string(),
        });
        self.facts.row_count = -1;
        e
    }

    fn write_outcome(&mut self, outcome: Outcome, out: &mut dyn QueryOutput) -> SqlResult<()> {
        let status = self.status_flags();
        let warnings = self.warning_total();
        let io = |e: basalt_protocol::OutputError| SqlError::Internal(e.to_string());
        match outcome {
            Outcome::Ok {
                affected_rows,
                last_insert_id,
                info,
            } => {
                self.facts.row_count = affected_rows as i64;
                out.ok(&OkResult {
                    affected_rows,
                    last_insert_id,
                    status,
                    warnings,
                    info,
                })
                .map_err(io)
            }
            Outcome::Rows { columns, rows } => {
                self.facts.row_count = -1;
                self.facts.found_rows = rows.len() as u64;
                let defs: Vec<ColumnDef> = columns
                    .iter()
                    .map(|(name, ty)| ty.column_def(name))
                    .collect();
                out.columns(&defs).map_err(io)?;
                let mut wire = Vec::with_capacity(columns.len());
                for row in &rows {
                    wire.clear();
                    for (v, (_, ty)) in row.iter().zip(&columns) {
                        wire.push(v.to_wire(ty));
                    }
                    out.row(&wire).map_err(io)?;
                }
                out.end_rows(&RowsEnd { status, warnings }).map_err(io)
            }
        }
    }

    /// `COM_INIT_DB`.
    pub fn init_db(&mut self, db: &str) -> Result<(), ServerError> {
        self.count("Com_change_db");
        self.begin_diagnostics(false);
        match self.use_schema(db) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.fail(e).to_server_error()),
        }
    }

    /// `COM_FIELD_LIST`: no table exists yet, so every table is unknown
    /// (after the privilege check, as MySQL orders them).
    pub fn field_list(&mut self, table: &str) -> Result<Vec<ColumnDef>, ServerError> {
        let Some(db) = self.facts.db.clone() else {
            return Err(SqlError::NoDatabaseSelected.to_server_error());
        };
        self.server
            .acl
            .check_table(&self.security, &db, table, Privileges::SELECT)
            .map_err(|e| e.to_server_error())?;
        Err(SqlError::NoSuchTable {
            schema: db,
            table: table.to_string(),
        }
        .to_server_error())
    }

    /// `COM_STATISTICS`.
    pub fn statistics(&self) -> String {
        let status = &self.server.status;
        let uptime = self.server.uptime_secs();
        let questions = status.get(counter_index("Questions").unwrap_or(0));
        let per_sec = if uptime > 0 {
            questions as f64 / uptime as f64
        } else {
            questions as f64
        };
        format!(
            "Uptime: {uptime}  Threads: {}  Questions: {questions}  Slow queries: 0  Opens: 0  \
             Flush tables: 1  Open tables: 0  Queries per second avg: {per_sec:.3}",
            self.process_list.len()
        )
    }

    /// `COM_RESET_CONNECTION`: variables, user variables, transaction,
    /// diagnostics, SQL-level prepared statements and per-session facts go
    /// back to a fresh session's state.
    pub fn reset(&mut self) -> Result<(), ServerError> {
        self.txn.end();
        self.vars.reset();
        if self.interactive {
            let t = self.vars.get(keys::INTERACTIVE_TIMEOUT);
            let _ = self.vars.set(
                basalt_config::Qualifier::Session,
                "wait_timeout",
                &basalt_config::Assignment::UInt(t),
            );
        }
        self.user_vars.clear();
        self.warnings.clear();
        self.sql_prepared.clear();
        self.facts.last_insert_id = 0;
        self.facts.row_count = -1;
        self.facts.found_rows = 0;
        Ok(())
    }

    /// May this session kill `target`? Own user's threads always; others
    /// need `CONNECTION_ADMIN` or `SUPER` (1095).
    pub fn authorize_kill(&self, target: &ProcessInfo, _mode: KillMode) -> SqlResult<()> {
        if target.user == self.security.user
            || self.has_global(Privileges::CONNECTION_ADMIN | Privileges::SUPER)
        {
            Ok(())
        } else {
            Err(SqlError::NotOwnerOfThread(u64::from(target.id)))
        }
    }

    /// The connection is gone: the transaction ends (rolled back).
    pub fn close(mut self) {
        self.txn.end();
        self.server.status.session_closed();
        tracing::debug!(id = self.id, "session closed");
    }

    /// Bind context for statements without rows.
    pub(crate) fn plain_bind<'a>(
        &'a self,
        params: Option<&'a [(Value, SqlType)]>,
    ) -> BindContext<'a> {
        self.bind_context(params, &[])
    }
}
