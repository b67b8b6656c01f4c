//! The protocol's `Backend` implemented by the SQL layer: every call is
//! forwarded to the connection's [`basalt_sql::Session`] (or to the shared
//! [`SqlServer`] for account lookup), and SQL errors become wire errors
//! through `basalt_sql`'s one mapping table.

use std::sync::Arc;

use basalt_protocol::{
    AccountAuth, Backend, ColumnDef, ConnectionInfo, KillMode, ProcessInfo, QueryOutput,
    ServerError, SessionState, StatementMeta, Value,
};
use basalt_sql::{Session, SqlServer};

/// `Backend` over the SQL layer.
#[derive(Debug)]
pub struct SqlBackend {
    sql: Arc<SqlServer>,
}

impl SqlBackend {
    /// A backend for `sql`.
    pub fn new(sql: Arc<SqlServer>) -> SqlBackend {
        SqlBackend { sql }
    }
}

impl Backend for SqlBackend {
    type Session = Session;

    fn server_version(&self) -> String {
        self.sql.version().to_string()
    }

    fn lookup_account(&self, user: &str, host: &str) -> Option<AccountAuth> {
        self.sql.acl.match_account(user, host).map(|a| AccountAuth {
            plugin: a.plugin,
            auth_string: a.auth_string,
        })
    }

    fn open_session(&self, conn: &ConnectionInfo) -> Result<Session, ServerError> {
        Session::open(self.sql.clone(), conn).map_err(|e| e.to_server_error())
    }

    fn session_state(&self, session: &Session) -> SessionState {
        session.state()
    }

    fn query(
        &self,
        session: &mut Session,
        sql: &str,
        multi_statements: bool,
        out: &mut dyn QueryOutput,
    ) -> Result<(), ServerError> {
        session.query(sql, multi_statements, out)
    }

    fn prepare(
        &self,
        session: &mut Session,
        stmt_id: u32,
        sql: &str,
    ) -> Result<StatementMeta, ServerError> {
        session.prepare(stmt_id, sql)
    }

    fn execute(
        &self,
        session: &mut Session,
        stmt_id: u32,
        params: &[Value],
        out: &mut dyn QueryOutput,
    ) -> Result<(), ServerError> {
        session.execute(stmt_id, params, out)
    }

    fn reset_statement(&self, session: &mut Session, stmt_id: u32) -> Result<(), ServerError> {
        session.reset_statement(stmt_id)
    }

    fn close_statement(&self, session: &mut Session, stmt_id: u32) {
        session.close_statement(stmt_id);
    }

    fn init_db(&self, session: &mut Session, schema: &str) -> Result<(), ServerError> {
        session.init_db(schema)
    }

    fn field_list(
        &self,
        session: &mut Session,
        table: &str,
        _wildcard: &str,
    ) -> Result<Vec<ColumnDef>, ServerError> {
        session.field_list(table)
    }

    fn statistics(&self, session: &mut Session) -> String {
        session.statistics()
    }

    fn ping(&self, _session: &mut Session) -> Result<(), ServerError> {
        Ok(())
    }

    fn reset_session(&self, session: &mut Session) -> Result<(), ServerError> {
        session.reset()
    }

    fn authorize_kill(
        &self,
        session: &Session,
        target: &ProcessInfo,
        mode: KillMode,
    ) -> Result<(), ServerError> {
        session
            .authorize_kill(target, mode)
            .map_err(|e| e.to_server_error())
    }

    fn close_session(&self, session: Session) {
        session.close();
    }
}
