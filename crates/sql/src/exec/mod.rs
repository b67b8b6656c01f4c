//! Statement execution: one function per statement family, each
//! returning an [`Outcome`] the session writes to the client.
//!
//! | module        | statements                                                    |
//! |---------------|---------------------------------------------------------------|
//! | [`select`]    | `SELECT` without tables (or `FROM DUAL`), `DO`, `SELECT INTO` |
//! | [`set`]       | every form of `SET`                                           |
//! | [`show`]      | `SHOW ...`                                                    |
//! | [`account`]   | `CREATE/DROP/ALTER/RENAME USER`, `GRANT`, `REVOKE`, `SET PASSWORD` |
//! | [`admin`]     | `USE`, schemas, `KILL`, `FLUSH`, transactions, SQL `PREPARE`, table statements |
//!
//! Privileges are checked here, before anything changes, on every
//! statement. Statements about tables check the table privilege (1142)
//! and then report 1146: no table exists until the storage engine's table
//! API lands, which is where they will be planned and executed instead.

pub mod account;
pub mod admin;
pub mod select;
pub mod set;
pub mod show;

use basalt_protocol::{ColumnDef, OkResult, OutputError, QueryOutput, RowsEnd};

use crate::error::{SqlError, SqlResult};
use crate::parse::Statement;
use crate::session::Session;
use crate::value::{SqlType, Value};

/// What a statement produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// No result set.
    Ok {
        /// Affected rows.
        affected_rows: u64,
        /// `LAST_INSERT_ID()` generated.
        last_insert_id: u64,
        /// Info text.
        info: String,
    },
    /// A result set.
    Rows {
        /// Column names and types.
        columns: Vec<(String, SqlType)>,
        /// Rows.
        rows: Vec<Vec<Value>>,
    },
}

impl Outcome {
    /// An OK with nothing affected.
    pub fn ok() -> Outcome {
        Outcome::Ok {
            affected_rows: 0,
            last_insert_id: 0,
            info: String::new(),
        }
    }

    /// An OK with `n` affected rows.
    pub fn affected(n: u64) -> Outcome {
        Outcome::Ok {
            affected_rows: n,
            last_insert_id: 0,
            info: String::new(),
        }
    }
}

/// An output that drops everything (`init_connect`).
#[derive(Debug, Default)]
pub struct DiscardOutput;

impl QueryOutput for DiscardOutput {
    fn ok(&mut self, _ok: &OkResult) -> Result<(), OutputError> {
        Ok(())
    }
    fn columns(&mut self, _columns: &[ColumnDef]) -> Result<(), OutputError> {
        Ok(())
    }
    fn row(&mut self, _values: &[basalt_protocol::Value]) -> Result<(), OutputError> {
        Ok(())
    }
    fn end_rows(&mut self, _end: &RowsEnd) -> Result<(), OutputError> {
        Ok(())
    }
}

/// Executes one statement.
pub fn execute(
    session: &mut Session,
    stmt: &Statement,
    params: Option<&[(Value, SqlType)]>,
) -> SqlResult<Outcome> {
    match stmt {
        Statement::Select(s) => select::select(session, s, params),
        Statement::Do(exprs) => select::do_exprs(session, exprs, params),
        Statement::Set(items) => set::set(session, items, params),
        Statement::SetNames { charset, collation } => {
            set::set_names(session, charset.as_deref(), collation.as_deref())
        }
        Statement::SetCharacterSet(cs) => set::set_character_set(session, cs.as_deref()),
        Statement::SetTransaction {
            scope,
            isolation,
            read_only,
        } => set::set_transaction(session, *scope, *isolation, *read_only),
        Statement::SetPassword { user, password } => {
            account::set_password(session, user.as_ref(), password)
        }
        Statement::Show(s) => show::show(session, s, params),
        Statement::Use(db) => {
            session.use_schema(db)?;
            Ok(Outcome::ok())
        }
        Statement::CreateDatabase {
            name,
            if_not_exists,
            charset,
            collation,
        } => admin::create_database(
            session,
            name,
            *if_not_exists,
            charset.as_deref(),
            collation.as_deref(),
        ),
        Statement::DropDatabase { name, if_exists } => {
            admin::drop_database(session, name, *if_exists)
        }
        Statement::Kill { kind, id } => admin::kill(session, *kind, id, params),
        Statement::CreateUser {
            if_not_exists,
            users,
        } => account::create_user(session, *if_not_exists, users),
        Statement::DropUser { if_exists, users } => account::drop_user(session, *if_exists, users),
        Statement::AlterUser { if_exists, users } => {
            account::alter_user(session, *if_exists, users)
        }
        Statement::RenameUser(pairs) => account::rename_user(session, pairs),
        Statement::Grant {
            privileges,
            level,
            users,
            grant_option,
        } => account::grant(session, privileges, level, users, *grant_option),
        Statement::Revoke {
            privileges,
            level,
            users,
        } => account::revoke(session, privileges, level, users),
        Statement::Flush(what) => admin::flush(session, what),
        Statement::Begin { read_only } => admin::begin(session, *read_only),
        Statement::Commit | Statement::Rollback => {
            session.txn.end();
            Ok(Outcome::ok())
        }
        Statement::Savepoint(name) => {
            let implicit = !session.vars.get(basalt_config::keys::AUTOCOMMIT);
            let open = session.txn.is_active() || implicit;
            session.txn.savepoint(name, open);
            Ok(Outcome::ok())
        }
        Statement::RollbackTo(name) => {
            session.txn.rollback_to(name)?;
            Ok(Outcome::ok())
        }
        Statement::ReleaseSavepoint(name) => {
            session.txn.release(name)?;
            Ok(Outcome::ok())
        }
        Statement::Prepare { name, source } => admin::prepare(session, name, source),
        Statement::Execute { name, using } => {
            let (p, values) = session.sql_execute_args(name, using)?;
            execute(session, &p.stmt, Some(&values))
        }
        Statement::Deallocate(name) => {
            session.sql_deallocate(name)?;
            Ok(Outcome::ok())
        }
        Statement::TableAccess { privilege, tables } => {
            admin::table_access(session, privilege, tables)
        }
        Statement::DropTable { if_exists, tables } => {
            admin::drop_table(session, *if_exists, tables)
        }
        Statement::NotSupported(what) => Err(SqlError::NotSupportedYet(what.clone())),
    }
}

/// Ends an active transaction before statements that commit implicitly
/// (account and schema statements, `BEGIN`, `SET autocommit = 1`).
pub(crate) fn implicit_commit(session: &mut Session) {
    session.txn.end();
    session.txn.clear_savepoints();
}
