//! The crate's error type and the warnings statements raise.
//!
//! [`SqlError`] has one variant per condition a caller (or a client) can
//! branch on. Its `Display` is MySQL's message text for that condition; the
//! MySQL error number and SQLSTATE come from the one mapping table in
//! [`crate::error_map`].

use basalt_config::ConfigError;
use basalt_mtr::MtrError;

/// Everything the SQL layer (and the engine beneath it) can fail with.
#[derive(Debug, thiserror::Error)]
pub enum SqlError {
    // ---- parsing --------------------------------------------------------
    /// The statement does not parse (1064). `near` is the text from the
    /// failing token on (at most 80 characters), `line` its 1-based line.
    #[error("You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '{near}' at line {line}")]
    Syntax {
        /// Text from the failing position on.
        near: String,
        /// Line of the failing position.
        line: usize,
    },
    /// An empty statement (1065).
    #[error("Query was empty")]
    EmptyQuery,
    /// A statement Basalt understands but does not implement yet (1235).
    #[error("This version of MySQL doesn't yet support '{0}'")]
    NotSupportedYet(String),
    /// An identifier longer than MySQL allows (1059).
    #[error("Identifier name '{0}' is too long")]
    IdentifierTooLong(String),

    // ---- names ----------------------------------------------------------
    /// `USE` or a reference to a schema that does not exist (1049).
    #[error("Unknown database '{0}'")]
    UnknownDatabase(String),
    /// A statement needs a current schema and there is none (1046).
    #[error("No database selected")]
    NoDatabaseSelected,
    /// `CREATE DATABASE` of an existing schema (1007).
    #[error("Can't create database '{0}'; database exists")]
    DatabaseExists(String),
    /// `DROP DATABASE` of a missing schema (1008).
    #[error("Can't drop database '{0}'; database doesn't exist")]
    DatabaseMissing(String),
    /// A schema name MySQL rejects (1102).
    #[error("Incorrect database name '{0}'")]
    WrongDatabaseName(String),
    /// A table that does not exist (1146).
    #[error("Table '{schema}.{table}' doesn't exist")]
    NoSuchTable {
        /// Schema of the table.
        schema: String,
        /// Table name.
        table: String,
    },
    /// `DROP TABLE` of tables that do not exist (1051); `db.t` list.
    #[error("Unknown table '{0}'")]
    UnknownTable(String),
    /// A column name that resolves to nothing (1054).
    #[error("Unknown column '{column}' in '{context}'")]
    UnknownColumn {
        /// The name as written.
        column: String,
        /// Where it appeared (`field list`, `where clause`).
        context: &'static str,
    },
    /// A function that is neither built in nor stored (1305).
    #[error("FUNCTION {0} does not exist")]
    UnknownFunction(String),
    /// A built-in function called with the wrong number of arguments (1582).
    #[error("Incorrect parameter count in the call to native function '{0}'")]
    WrongParameterCount(String),
    /// A row or subquery where one value was expected (1241).
    #[error("Operand should contain {0} column(s)")]
    OperandColumns(usize),
    /// `ROLLBACK TO` / `RELEASE` of an unknown savepoint (1305).
    #[error("SAVEPOINT {0} does not exist")]
    NoSuchSavepoint(String),
    /// `SELECT ... INTO` with a variable count that differs from the
    /// column count (1222).
    #[error("The used SELECT statements have a different number of columns")]
    IntoColumnCount,
    /// `SELECT *` without a table (1096).
    #[error("No tables used")]
    NoTablesUsed,
    /// `SELECT ... INTO @v` that returned more than one row (1172).
    #[error("Result consisted of more than one row")]
    TooManyRows,

    // ---- values ---------------------------------------------------------
    /// Integer or decimal arithmetic overflow (1690).
    #[error("{type_name} value is out of range in '{expr}'")]
    OutOfRange {
        /// `BIGINT`, `BIGINT UNSIGNED`, `DECIMAL` or `DOUBLE`.
        type_name: &'static str,
        /// The expression as MySQL prints it.
        expr: String,
    },
    /// A literal or argument that is not a valid value of its type (1525).
    #[error("Incorrect {type_name} value: '{value}'")]
    WrongValue {
        /// `DATE`, `DATETIME`, `TIME`.
        type_name: &'static str,
        /// The text given.
        value: String,
    },
    /// Division by zero in a mode that makes it an error (1365).
    #[error("Division by 0")]
    DivisionByZero,
    /// Arguments of incompatible collations (1267).
    #[error("Illegal mix of collations ({left},{left_coercibility}) and ({right},{right_coercibility}) for operation '{operation}'")]
    CollationMix {
        /// Left collation name.
        left: String,
        /// Its coercibility (`IMPLICIT`, `EXPLICIT`, `COERCIBLE`).
        left_coercibility: &'static str,
        /// Right collation name.
        right: String,
        /// Its coercibility.
        right_coercibility: &'static str,
        /// The operator or function.
        operation: String,
    },
    /// A value a function refuses (1210).
    #[error("Incorrect arguments to {0}")]
    WrongArguments(String),
    /// A character set that does not exist (1115).
    #[error("Unknown character set: '{0}'")]
    UnknownCharset(String),
    /// A collation that does not exist (1273).
    #[error("Unknown collation: '{0}'")]
    UnknownCollation(String),
    /// A collation that does not belong to the character set (1253).
    #[error("COLLATION '{collation}' is not valid for CHARACTER SET '{charset}'")]
    CollationCharsetMismatch {
        /// Collation name.
        collation: String,
        /// Character set name.
        charset: String,
    },
    /// A string that is not valid in its character set (1300).
    #[error("Invalid {charset} character string: '{text}'")]
    InvalidString {
        /// Character set name.
        charset: &'static str,
        /// Hex of the offending bytes.
        text: String,
    },
    /// A variable that `SELECT ... INTO` or `EXECUTE USING` names but
    /// that is not a user variable (1327).
    #[error("Undeclared variable: {0}")]
    UndeclaredVariable(String),

    // ---- system variables ----------------------------------------------
    /// Errors of `SET`, `@@x` and `SHOW VARIABLES` from the registry.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `SET TRANSACTION` (next transaction only) inside a transaction (1568).
    #[error("Transaction characteristics can't be changed while a transaction is in progress")]
    TransactionInProgress,
    /// A write statement in a `READ ONLY` transaction (1792).
    #[error("Cannot execute statement in a READ ONLY transaction.")]
    ReadOnlyTransaction,

    // ---- sessions and prepared statements -------------------------------
    /// Statement cancelled by `KILL QUERY`, `KILL` or shutdown (1317).
    #[error("Query execution was interrupted")]
    Interrupted,
    /// `KILL` of a thread that does not exist (1094).
    #[error("Unknown thread id: {0}")]
    NoSuchThread(u64),
    /// `KILL` of another user's thread without the privilege (1095).
    #[error("You are not owner of thread {0}")]
    NotOwnerOfThread(u64),
    /// `EXECUTE`/`DEALLOCATE` of an unknown prepared statement (1243).
    #[error("Unknown prepared statement handler ({name}) given to {command}")]
    UnknownStatement {
        /// The statement name or id.
        name: String,
        /// `EXECUTE`, `DEALLOCATE PREPARE`, `mysqld_stmt_execute`.
        command: &'static str,
    },
    /// `EXECUTE` with the wrong number of parameters (1210).
    #[error("Incorrect arguments to {0}")]
    WrongParamCount(&'static str),
    /// A statement that cannot be prepared (1295).
    #[error("This command is not supported in the prepared statement protocol yet")]
    UnsupportedInPrepared,

    // ---- accounts and privileges ----------------------------------------
    /// Wrong password or unknown account at login or `COM_CHANGE_USER` (1045).
    #[error("Access denied for user '{user}'@'{host}' (using password: {})", if *.using_password { "YES" } else { "NO" })]
    AccessDenied {
        /// User name.
        user: String,
        /// Client host.
        host: String,
        /// Whether a password was sent.
        using_password: bool,
    },
    /// No privilege on a schema (1044).
    #[error("Access denied for user '{user}'@'{host}' to database '{db}'")]
    DbAccessDenied {
        /// Current user name.
        user: String,
        /// Current user's host pattern.
        host: String,
        /// The schema.
        db: String,
    },
    /// Missing privilege on a table (1142).
    #[error("{command} command denied to user '{user}'@'{host}' for table '{table}'")]
    TableAccessDenied {
        /// The privilege name (`SELECT`, `INSERT`, ...).
        command: &'static str,
        /// Current user name.
        user: String,
        /// Current user's host pattern.
        host: String,
        /// The table.
        table: String,
    },
    /// A statement needs a global privilege the user lacks (1227).
    #[error("Access denied; you need (at least one of) the {0} privilege(s) for this operation")]
    SpecificAccessDenied(String),
    /// `CREATE USER`, `DROP USER`, `ALTER USER`, `RENAME USER` failed for
    /// some accounts (1396).
    #[error("Operation {operation} failed for {accounts}")]
    AccountOperationFailed {
        /// `CREATE USER`, ...
        operation: &'static str,
        /// `'u'@'h'` list, comma-separated.
        accounts: String,
    },
    /// `GRANT` to an account that does not exist (1410).
    #[error("You are not allowed to create a user with GRANT")]
    CannotCreateUserWithGrant,
    /// `REVOKE` of a grant that does not exist (1141).
    #[error("There is no such grant defined for user '{user}' on host '{host}'")]
    NoSuchGrant {
        /// User name.
        user: String,
        /// Host pattern.
        host: String,
    },
    /// `REVOKE` of a table grant that does not exist (1147).
    #[error(
        "There is no such grant defined for user '{user}' on host '{host}' on table '{table}'"
    )]
    NoSuchTableGrant {
        /// User name.
        user: String,
        /// Host pattern.
        host: String,
        /// Table name.
        table: String,
    },
    /// `SET PASSWORD FOR` an account that does not exist (1133).
    #[error("Can't find any matching row in the user table")]
    NoMatchingUser,
    /// A global-only privilege granted at schema level (1221).
    #[error("Incorrect usage of DB GRANT and GLOBAL PRIVILEGES")]
    WrongGrantLevel,
    /// A privilege that cannot be granted on a table (1144).
    #[error("Illegal GRANT/REVOKE command; please consult the manual to see which privileges can be used")]
    IllegalGrant,
    /// An authentication plugin Basalt does not have (1524).
    #[error("Plugin '{0}' is not loaded")]
    UnknownPlugin(String),
    /// A stored authentication string the plugin cannot use (1827).
    #[error("The password hash doesn't have the expected format.")]
    BadPasswordHash,

    // ---- engine ---------------------------------------------------------
    /// A row lock was not granted within `innodb_lock_wait_timeout` (1205).
    #[error("Lock wait timeout exceeded; try restarting transaction")]
    LockWaitTimeout,
    /// The transaction was chosen as a deadlock victim (1213).
    #[error("Deadlock found when trying to get lock; try restarting transaction")]
    Deadlock,
    /// A unique key already holds the value (1062).
    #[error("Duplicate entry '{value}' for key '{key}'")]
    DuplicateKey {
        /// The duplicate value as text.
        value: String,
        /// `table.index`.
        key: String,
    },
    /// A tablespace ran out of room and may not grow (1114).
    #[error("The table '{0}' is full")]
    TableFull(String),
    /// The storage engine reported damaged data or a failed device (1030).
    #[error("Got error {code} - '{reason}' from storage engine")]
    Storage {
        /// InnoDB-style handler error number (see [`crate::error_map`]).
        code: u32,
        /// What failed.
        reason: String,
        /// The engine error.
        #[source]
        source: Option<Box<MtrError>>,
    },

    // ---- everything else ------------------------------------------------
    /// A failure with no better MySQL number (1105).
    #[error("{0}")]
    Internal(String),
}

impl From<MtrError> for SqlError {
    fn from(e: MtrError) -> Self {
        crate::error_map::from_engine(e)
    }
}

/// The severity of a diagnostic row (`SHOW WARNINGS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// A note (`Note`).
    Note,
    /// A warning (`Warning`).
    Warning,
    /// An error (`Error`); the statement failed.
    Error,
}

impl Level {
    /// The word MySQL prints in the `Level` column.
    pub fn name(self) -> &'static str {
        match self {
            Level::Note => "Note",
            Level::Warning => "Warning",
            Level::Error => "Error",
        }
    }
}

/// One row of `SHOW WARNINGS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Severity.
    pub level: Level,
    /// MySQL error number.
    pub code: u16,
    /// Message text.
    pub message: String,
}

impl Warning {
    /// A `Warning`-level row.
    pub fn warn(code: u16, message: impl Into<String>) -> Warning {
        Warning {
            level: Level::Warning,
            code,
            message: message.into(),
        }
    }

    /// A `Note`-level row.
    pub fn note(code: u16, message: impl Into<String>) -> Warning {
        Warning {
            level: Level::Note,
            code,
            message: message.into(),
        }
    }
}

/// Result alias of the crate.
pub type SqlResult<T> = Result<T, SqlError>;
