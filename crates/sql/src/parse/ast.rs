//! Basalt's statement tree: what the executor dispatches on.
//!
//! Queries and expressions keep sqlparser's AST (`sqlparser::ast::Expr`,
//! `Query`); the statement families sqlparser cannot read the MySQL way
//! (accounts, grants, `SET`, `SHOW`, `KILL`, ...) have their own nodes,
//! filled by [`super::admin`].

use sqlparser::ast::{Expr, Query};

/// An account name: `'user'@'host'`, or `CURRENT_USER`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserSpec {
    /// `user@host` (host `%` when omitted).
    Named {
        /// User name.
        user: String,
        /// Host pattern.
        host: String,
    },
    /// `CURRENT_USER` / `CURRENT_USER()`.
    Current,
}

/// How an account authenticates in `CREATE USER` / `ALTER USER`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthSpec {
    /// `WITH plugin`, when written.
    pub plugin: Option<String>,
    /// `BY 'password'` (a clear-text password).
    pub password: Option<String>,
    /// `AS 'stored string'` (an already hashed string).
    pub hashed: Option<Vec<u8>>,
}

/// Privilege level of `GRANT`/`REVOKE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantLevel {
    /// `*.*`.
    Global,
    /// `db.*`, or `*` with a current schema (resolved at execution).
    Database(Option<String>),
    /// `db.tbl` or `tbl` (schema resolved at execution when absent).
    Table(Option<String>, String),
}

/// One privilege named in `GRANT`/`REVOKE` (upper case, words joined by
/// one space: `CREATE TEMPORARY TABLES`).
pub type PrivName = String;

/// What `SET TRANSACTION` applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxScope {
    /// No scope: the next transaction only.
    Next,
    /// `SESSION`.
    Session,
    /// `GLOBAL`.
    Global,
}

/// Scope written in `SET`, `SHOW VARIABLES`, `SHOW STATUS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Nothing written.
    Implicit,
    /// `SESSION` / `LOCAL`.
    Session,
    /// `GLOBAL`.
    Global,
}

/// Target of one `SET` assignment.
#[derive(Debug, Clone, PartialEq)]
pub enum SetTarget {
    /// `@name`.
    User(String),
    /// A system variable with its scope.
    System {
        /// Scope.
        scope: Scope,
        /// Variable name (as written, without `@@` and scope).
        name: String,
    },
}

/// Right-hand side of one `SET` assignment.
#[derive(Debug, Clone, PartialEq)]
pub enum SetValue {
    /// `DEFAULT`.
    Default,
    /// A bare word (`ON`, `ANSI`, `utf8mb4`): a string for system variables.
    Word(String),
    /// An expression.
    Expr(Box<Expr>),
}

/// `SHOW` statements.
#[derive(Debug, Clone, PartialEq)]
pub enum Show {
    /// `SHOW [GLOBAL|SESSION] VARIABLES`.
    Variables(Scope, Filter),
    /// `SHOW [GLOBAL|SESSION] STATUS`.
    Status(Scope, Filter),
    /// `SHOW [FULL] PROCESSLIST`.
    ProcessList {
        /// `FULL`.
        full: bool,
    },
    /// `SHOW DATABASES|SCHEMAS`.
    Databases(Filter),
    /// `SHOW [FULL] TABLES [FROM db]`.
    Tables {
        /// `FULL`.
        full: bool,
        /// `FROM db`.
        db: Option<String>,
        /// `LIKE` / `WHERE`.
        filter: Filter,
    },
    /// `SHOW GRANTS [FOR user]`.
    Grants(Option<UserSpec>),
    /// `SHOW CREATE USER user`.
    CreateUser(UserSpec),
    /// `SHOW CREATE DATABASE [IF NOT EXISTS] db`.
    CreateDatabase {
        /// Schema.
        name: String,
        /// `IF NOT EXISTS`.
        if_not_exists: bool,
    },
    /// `SHOW WARNINGS [LIMIT ...]` / `SHOW ERRORS`.
    Warnings {
        /// `ERRORS` instead of `WARNINGS`.
        errors_only: bool,
        /// `LIMIT [offset,] count`.
        limit: Option<(u64, u64)>,
    },
    /// `SHOW COUNT(*) WARNINGS|ERRORS`.
    WarningCount {
        /// `ERRORS`.
        errors_only: bool,
    },
    /// `SHOW [STORAGE] ENGINES`.
    Engines,
    /// `SHOW CHARACTER SET|CHARSET`.
    Charsets(Filter),
    /// `SHOW COLLATION`.
    Collations(Filter),
    /// `SHOW PRIVILEGES`.
    Privileges,
}

/// `LIKE 'pattern'` or `WHERE expr` of a `SHOW`.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Filter {
    /// No filter.
    #[default]
    None,
    /// `LIKE 'pattern'`.
    Like(String),
    /// `WHERE expr` over the result columns.
    Where(Box<Expr>),
}

/// `KILL` target kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KillKind {
    /// `KILL [CONNECTION]`.
    Connection,
    /// `KILL QUERY`.
    Query,
}

/// Source text of `PREPARE name FROM ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrepareSource {
    /// A string literal.
    Text(String),
    /// A user variable holding the text.
    Var(String),
}

/// A `SELECT` without tables (or `FROM DUAL`).
#[derive(Debug, Clone, PartialEq)]
pub struct SelectStmt {
    /// The parsed query.
    pub query: Box<Query>,
    /// Result-column names, one per select item, as MySQL names them.
    pub names: Vec<String>,
    /// `INTO @a, @b`.
    pub into: Vec<String>,
}

/// A table named by a statement Basalt cannot run yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRef {
    /// Schema when qualified.
    pub schema: Option<String>,
    /// Table name.
    pub name: String,
}

/// A parsed statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    /// `SELECT` without tables.
    Select(SelectStmt),
    /// A statement on tables: checked for privileges, then 1146 (no
    /// table exists yet). `privilege` is what it needs on each table.
    TableAccess {
        /// `SELECT`, `INSERT`, `UPDATE`, `DELETE`.
        privilege: &'static str,
        /// The tables.
        tables: Vec<TableRef>,
    },
    /// `DROP TABLE [IF EXISTS] t, ...`.
    DropTable {
        /// `IF EXISTS`.
        if_exists: bool,
        /// Tables.
        tables: Vec<TableRef>,
    },
    /// `SET` assignments (`SET a = 1, @b = 2, GLOBAL c = 3`).
    Set(Vec<(SetTarget, SetValue)>),
    /// `SET NAMES charset [COLLATE c]` / `SET NAMES DEFAULT`.
    SetNames {
        /// `None` for `DEFAULT`.
        charset: Option<String>,
        /// `COLLATE name`.
        collation: Option<String>,
    },
    /// `SET CHARACTER SET charset` / `DEFAULT`.
    SetCharacterSet(Option<String>),
    /// `SET [GLOBAL|SESSION] TRANSACTION ...`.
    SetTransaction {
        /// Scope.
        scope: TxScope,
        /// `ISOLATION LEVEL x` as the variable value (`REPEATABLE-READ`).
        isolation: Option<&'static str>,
        /// `READ ONLY` / `READ WRITE`.
        read_only: Option<bool>,
    },
    /// `SET PASSWORD [FOR user] = 'x'`.
    SetPassword {
        /// `FOR user`.
        user: Option<UserSpec>,
        /// The new password.
        password: String,
    },
    /// `SHOW ...`.
    Show(Show),
    /// `USE db`.
    Use(String),
    /// `CREATE DATABASE`.
    CreateDatabase {
        /// Name.
        name: String,
        /// `IF NOT EXISTS`.
        if_not_exists: bool,
        /// `CHARACTER SET`.
        charset: Option<String>,
        /// `COLLATE`.
        collation: Option<String>,
    },
    /// `DROP DATABASE`.
    DropDatabase {
        /// Name.
        name: String,
        /// `IF EXISTS`.
        if_exists: bool,
    },
    /// `KILL [CONNECTION|QUERY] expr`.
    Kill {
        /// What to stop.
        kind: KillKind,
        /// The thread id expression.
        id: Box<Expr>,
    },
    /// `CREATE USER`.
    CreateUser {
        /// `IF NOT EXISTS`.
        if_not_exists: bool,
        /// Accounts and their authentication.
        users: Vec<(UserSpec, Option<AuthSpec>)>,
    },
    /// `DROP USER`.
    DropUser {
        /// `IF EXISTS`.
        if_exists: bool,
        /// Accounts.
        users: Vec<UserSpec>,
    },
    /// `ALTER USER`.
    AlterUser {
        /// `IF EXISTS`.
        if_exists: bool,
        /// Accounts and new authentication.
        users: Vec<(UserSpec, Option<AuthSpec>)>,
    },
    /// `RENAME USER a TO b, ...`.
    RenameUser(Vec<(UserSpec, UserSpec)>),
    /// `GRANT`.
    Grant {
        /// Privileges (`ALL` expands at execution).
        privileges: Vec<PrivName>,
        /// Level.
        level: GrantLevel,
        /// Grantees.
        users: Vec<UserSpec>,
        /// `WITH GRANT OPTION`.
        grant_option: bool,
    },
    /// `REVOKE`.
    Revoke {
        /// Privileges (`ALL`, `GRANT OPTION` included).
        privileges: Vec<PrivName>,
        /// Level.
        level: GrantLevel,
        /// Accounts.
        users: Vec<UserSpec>,
    },
    /// `FLUSH PRIVILEGES|TABLES|STATUS|LOGS...`.
    Flush(String),
    /// `BEGIN` / `START TRANSACTION [READ ONLY|READ WRITE]`.
    Begin {
        /// `READ ONLY` (Some(true)) / `READ WRITE` (Some(false)).
        read_only: Option<bool>,
    },
    /// `COMMIT [WORK]`.
    Commit,
    /// `ROLLBACK [WORK]`.
    Rollback,
    /// `SAVEPOINT name`.
    Savepoint(String),
    /// `ROLLBACK TO [SAVEPOINT] name`.
    RollbackTo(String),
    /// `RELEASE SAVEPOINT name`.
    ReleaseSavepoint(String),
    /// `DO expr, ...`.
    Do(Vec<Expr>),
    /// `PREPARE name FROM ...`.
    Prepare {
        /// Statement name.
        name: String,
        /// Its text.
        source: PrepareSource,
    },
    /// `EXECUTE name [USING @a, ...]`.
    Execute {
        /// Statement name.
        name: String,
        /// Variables bound to the placeholders.
        using: Vec<String>,
    },
    /// `DEALLOCATE|DROP PREPARE name`.
    Deallocate(String),
    /// A statement Basalt understands but cannot run yet (1235).
    NotSupported(String),
}

impl Statement {
    /// The `Com_xxx` status counter this statement counts toward.
    pub fn com_counter(&self) -> &'static str {
        match self {
            Statement::Select(_) => "Com_select",
            Statement::TableAccess { privilege, .. } => match *privilege {
                "INSERT" => "Com_insert",
                "UPDATE" => "Com_update",
                "DELETE" => "Com_delete",
                _ => "Com_select",
            },
            Statement::DropTable { .. } => "Com_drop_table",
            Statement::Set(_)
            | Statement::SetNames { .. }
            | Statement::SetCharacterSet(_)
            | Statement::SetTransaction { .. } => "Com_set_option",
            Statement::SetPassword { .. } => "Com_set_password",
            Statement::Show(s) => match s {
                Show::Variables(..) => "Com_show_variables",
                Show::Status(..) => "Com_show_status",
                Show::ProcessList { .. } => "Com_show_processlist",
                Show::Databases(_) => "Com_show_databases",
                Show::Tables { .. } => "Com_show_tables",
                Show::Grants(_) => "Com_show_grants",
                Show::CreateUser(_) => "Com_show_create_user",
                Show::CreateDatabase { .. } => "Com_show_create_db",
                Show::Warnings {
                    errors_only: false, ..
                }
                | Show::WarningCount { errors_only: false } => "Com_show_warnings",
                Show::Warnings { .. } | Show::WarningCount { .. } => "Com_show_errors",
                Show::Engines => "Com_show_engine_status",
                Show::Charsets(_) => "Com_show_charsets",
                Show::Collations(_) => "Com_show_collations",
                Show::Privileges => "Com_show_privileges",
            },
            Statement::Use(_) => "Com_change_db",
            Statement::CreateDatabase { .. } => "Com_create_db",
            Statement::DropDatabase { .. } => "Com_drop_db",
            Statement::Kill { .. } => "Com_kill",
            Statement::CreateUser { .. } => "Com_create_user",
            Statement::DropUser { .. } => "Com_drop_user",
            Statement::AlterUser { .. } => "Com_alter_user",
            Statement::RenameUser(_) => "Com_rename_user",
            Statement::Grant { .. } => "Com_grant",
            Statement::Revoke { .. } => "Com_revoke",
            Statement::Flush(_) => "Com_flush",
            Statement::Begin { .. } => "Com_begin",
            Statement::Commit => "Com_commit",
            Statement::Rollback | Statement::RollbackTo(_) => "Com_rollback",
            Statement::Savepoint(_) => "Com_savepoint",
            Statement::ReleaseSavepoint(_) => "Com_release_savepoint",
            Statement::Do(_) => "Com_do",
            Statement::Prepare { .. } => "Com_prepare_sql",
            Statement::Execute { .. } => "Com_execute_sql",
            Statement::Deallocate(_) => "Com_dealloc_sql",
            Statement::NotSupported(_) => "Com_other",
        }
    }
}
