//! THE error mapping table: every error the SQL layer, the system-variable
//! registry and the storage engine produce, to its MySQL error number and
//! SQLSTATE.
//!
//! ```text
//!   MtrError ──from_engine──┐
//!   ConfigError ──────────┐ │
//!                         v v
//!                      SqlError ──kind()──> ErrorKind ──ERROR_MAP──> (code, SQLSTATE)
//!                         │                                             │
//!                         └──────────── Display = message ──────────────┴──> ServerError
//! ```
//!
//! Nothing else in Basalt's SQL path picks a MySQL error number: a new
//! error condition is a new [`SqlError`] variant, a new [`ErrorKind`] and a
//! new row here (a unit test checks that every kind has exactly one row).
//! The protocol crate names only the errors it raises itself while framing
//! and authenticating.
//!
//! Engine errors: the storage layer reports *what* failed
//! ([`MtrError`]); [`from_engine`] classifies it. Damaged pages and
//! tablespace headers become 1030 "Got error 126 - '...' from storage
//! engine" (126 is MySQL's handler code for a corrupted index/table), a
//! full tablespace becomes 1114, and every other engine failure (I/O, the
//! redo log, a caller contract broken) becomes 1030 with handler code 168
//! ("unknown generic error from engine"). Lock waits, deadlocks and
//! duplicate keys already have their own variants for when the lock
//! manager and B+tree report them.

use basalt_config::ConfigError;
use basalt_mtr::MtrError;
use basalt_protocol::ServerError;

use crate::error::SqlError;

/// One value per error condition: what [`ERROR_MAP`] is keyed by.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    Syntax,
    EmptyQuery,
    NotSupportedYet,
    IdentifierTooLong,
    UnknownDatabase,
    NoDatabaseSelected,
    DatabaseExists,
    DatabaseMissing,
    WrongDatabaseName,
    NoSuchTable,
    UnknownTable,
    UnknownColumn,
    UnknownFunction,
    WrongParameterCount,
    OperandColumns,
    NoSuchSavepoint,
    IntoColumnCount,
    TooManyRows,
    NoTablesUsed,
    OutOfRange,
    WrongValue,
    DivisionByZero,
    CollationMix,
    WrongArguments,
    UnknownCharset,
    UnknownCollation,
    CollationCharsetMismatch,
    InvalidString,
    UndeclaredVariable,
    ConfigUnknownSystemVariable,
    ConfigReadOnly,
    ConfigIncorrectScope,
    ConfigGlobalOnly,
    ConfigSessionOnly,
    ConfigSessionReadOnly,
    ConfigWrongValue,
    ConfigWrongType,
    ConfigUnknownCharset,
    ConfigUnknownCollation,
    ConfigUnknownTimeZone,
    ConfigStartup,
    TransactionInProgress,
    ReadOnlyTransaction,
    Interrupted,
    NoSuchThread,
    NotOwnerOfThread,
    UnknownStatement,
    WrongParamCount,
    UnsupportedInPrepared,
    AccessDenied,
    DbAccessDenied,
    TableAccessDenied,
    SpecificAccessDenied,
    AccountOperationFailed,
    CannotCreateUserWithGrant,
    NoSuchGrant,
    NoSuchTableGrant,
    NoMatchingUser,
    WrongGrantLevel,
    IllegalGrant,
    UnknownPlugin,
    BadPasswordHash,
    LockWaitTimeout,
    Deadlock,
    DuplicateKey,
    TableFull,
    Storage,
    Internal,
}

/// `(kind, MySQL error number, SQLSTATE)`: the one table.
#[rustfmt::skip]
pub const ERROR_MAP: &[(ErrorKind, u16, &str)] = &[
    (ErrorKind::Syntax,                      1064, "42000"), // ER_PARSE_ERROR
    (ErrorKind::EmptyQuery,                  1065, "42000"), // ER_EMPTY_QUERY
    (ErrorKind::NotSupportedYet,             1235, "42000"), // ER_NOT_SUPPORTED_YET
    (ErrorKind::IdentifierTooLong,           1059, "42000"), // ER_TOO_LONG_IDENT
    (ErrorKind::UnknownDatabase,             1049, "42000"), // ER_BAD_DB_ERROR
    (ErrorKind::NoDatabaseSelected,          1046, "3D000"), // ER_NO_DB_ERROR
    (ErrorKind::DatabaseExists,              1007, "HY000"), // ER_DB_CREATE_EXISTS
    (ErrorKind::DatabaseMissing,             1008, "HY000"), // ER_DB_DROP_EXISTS
    (ErrorKind::WrongDatabaseName,           1102, "42000"), // ER_WRONG_DB_NAME
    (ErrorKind::NoSuchTable,                 1146, "42S02"), // ER_NO_SUCH_TABLE
    (ErrorKind::UnknownTable,                1051, "42S02"), // ER_BAD_TABLE_ERROR
    (ErrorKind::UnknownColumn,               1054, "42S22"), // ER_BAD_FIELD_ERROR
    (ErrorKind::UnknownFunction,             1305, "42000"), // ER_SP_DOES_NOT_EXIST
    (ErrorKind::WrongParameterCount,         1582, "42000"), // ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT
    (ErrorKind::OperandColumns,              1241, "21000"), // ER_OPERAND_COLUMNS
    (ErrorKind::NoSuchSavepoint,             1305, "42000"), // ER_SP_DOES_NOT_EXIST
    (ErrorKind::IntoColumnCount,             1222, "21000"), // ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT
    (ErrorKind::TooManyRows,                 1172, "42000"), // ER_TOO_MANY_ROWS
    (ErrorKind::NoTablesUsed,                1096, "HY000"), // ER_NO_TABLES_USED
    (ErrorKind::OutOfRange,                  1690, "22003"), // ER_DATA_OUT_OF_RANGE
    (ErrorKind::WrongValue,                  1525, "HY000"), // ER_WRONG_VALUE
    (ErrorKind::DivisionByZero,              1365, "22012"), // ER_DIVISION_BY_ZERO
    (ErrorKind::CollationMix,                1267, "HY000"), // ER_CANT_AGGREGATE_2COLLATIONS
    (ErrorKind::WrongArguments,              1210, "HY000"), // ER_WRONG_ARGUMENTS
    (ErrorKind::UnknownCharset,              1115, "42000"), // ER_UNKNOWN_CHARACTER_SET
    (ErrorKind::UnknownCollation,            1273, "HY000"), // ER_UNKNOWN_COLLATION
    (ErrorKind::CollationCharsetMismatch,    1253, "42000"), // ER_COLLATION_CHARSET_MISMATCH
    (ErrorKind::InvalidString,               1300, "HY000"), // ER_INVALID_CHARACTER_STRING
    (ErrorKind::UndeclaredVariable,          1327, "42000"), // ER_SP_UNDECLARED_VAR
    (ErrorKind::ConfigUnknownSystemVariable, 1193, "HY000"), // ER_UNKNOWN_SYSTEM_VARIABLE
    (ErrorKind::ConfigReadOnly,              1238, "HY000"), // ER_INCORRECT_GLOBAL_LOCAL_VAR
    (ErrorKind::ConfigIncorrectScope,        1238, "HY000"), // ER_INCORRECT_GLOBAL_LOCAL_VAR
    (ErrorKind::ConfigGlobalOnly,            1229, "HY000"), // ER_GLOBAL_VARIABLE
    (ErrorKind::ConfigSessionOnly,           1228, "HY000"), // ER_LOCAL_VARIABLE
    (ErrorKind::ConfigSessionReadOnly,       1621, "HY000"), // ER_VARIABLE_IS_READONLY
    (ErrorKind::ConfigWrongValue,            1231, "42000"), // ER_WRONG_VALUE_FOR_VAR
    (ErrorKind::ConfigWrongType,             1232, "42000"), // ER_WRONG_TYPE_FOR_VAR
    (ErrorKind::ConfigUnknownCharset,        1115, "42000"), // ER_UNKNOWN_CHARACTER_SET
    (ErrorKind::ConfigUnknownCollation,      1273, "HY000"), // ER_UNKNOWN_COLLATION
    (ErrorKind::ConfigUnknownTimeZone,       1298, "HY000"), // ER_UNKNOWN_TIME_ZONE
    (ErrorKind::ConfigStartup,               1105, "HY000"), // ER_UNKNOWN_ERROR (never sent: startup only)
    (ErrorKind::TransactionInProgress,       1568, "25001"), // ER_CANT_CHANGE_TX_CHARACTERISTICS
    (ErrorKind::ReadOnlyTransaction,         1792, "25006"), // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
    (ErrorKind::Interrupted,                 1317, "70100"), // ER_QUERY_INTERRUPTED
    (ErrorKind::NoSuchThread,                1094, "HY000"), // ER_NO_SUCH_THREAD
    (ErrorKind::NotOwnerOfThread,            1095, "HY000"), // ER_KILL_DENIED_ERROR
    (ErrorKind::UnknownStatement,            1243, "HY000"), // ER_UNKNOWN_STMT_HANDLER
    (ErrorKind::WrongParamCount,             1210, "HY000"), // ER_WRONG_ARGUMENTS
    (ErrorKind::UnsupportedInPrepared,       1295, "HY000"), // ER_UNSUPPORTED_PS
    (ErrorKind::AccessDenied,                1045, "28000"), // ER_ACCESS_DENIED_ERROR
    (ErrorKind::DbAccessDenied,              1044, "42000"), // ER_DBACCESS_DENIED_ERROR
    (ErrorKind::TableAccessDenied,           1142, "42000"), // ER_TABLEACCESS_DENIED_ERROR
    (ErrorKind::SpecificAccessDenied,        1227, "42000"), // ER_SPECIFIC_ACCESS_DENIED_ERROR
    (ErrorKind::AccountOperationFailed,      1396, "HY000"), // ER_CANNOT_USER
    (ErrorKind::CannotCreateUserWithGrant,   1410, "42000"), // ER_CANT_CREATE_USER_WITH_GRANT
    (ErrorKind::NoSuchGrant,                 1141, "42000"), // ER_NONEXISTING_GRANT
    (ErrorKind::NoSuchTableGrant,            1147, "42000"), // ER_NONEXISTING_TABLE_GRANT
    (ErrorKind::NoMatchingUser,              1133, "42000"), // ER_PASSWORD_NO_MATCH
    (ErrorKind::WrongGrantLevel,             1221, "HY000"), // ER_WRONG_USAGE
    (ErrorKind::IllegalGrant,                1144, "42000"), // ER_ILLEGAL_GRANT_FOR_TABLE
    (ErrorKind::UnknownPlugin,               1524, "HY000"), // ER_PLUGIN_IS_NOT_LOADED
    (ErrorKind::BadPasswordHash,             1827, "HY000"), // ER_PASSWORD_FORMAT
    (ErrorKind::LockWaitTimeout,             1205, "HY000"), // ER_LOCK_WAIT_TIMEOUT
    (ErrorKind::Deadlock,                    1213, "40001"), // ER_LOCK_DEADLOCK
    (ErrorKind::DuplicateKey,                1062, "23000"), // ER_DUP_ENTRY
    (ErrorKind::TableFull,                   1114, "HY000"), // ER_RECORD_FILE_FULL
    (ErrorKind::Storage,                     1030, "HY000"), // ER_GET_ERRNO
    (ErrorKind::Internal,                    1105, "HY000"), // ER_UNKNOWN_ERROR
];

/// Handler error code for damaged data (`HA_ERR_CRASHED`).
pub const HA_ERR_CRASHED: u32 = 126;
/// Handler error code for an engine failure with no better code
/// (`HA_ERR_GENERIC`).
pub const HA_ERR_GENERIC: u32 = 168;

impl SqlError {
    /// The condition this error reports.
    pub fn kind(&self) -> ErrorKind {
        use ErrorKind as K;
        match self {
            SqlError::Syntax { .. } => K::Syntax,
            SqlError::EmptyQuery => K::EmptyQuery,
            SqlError::NotSupportedYet(_) => K::NotSupportedYet,
            SqlError::IdentifierTooLong(_) => K::IdentifierTooLong,
            SqlError::UnknownDatabase(_) => K::UnknownDatabase,
            SqlError::NoDatabaseSelected => K::NoDatabaseSelected,
            SqlError::DatabaseExists(_) => K::DatabaseExists,
            SqlError::DatabaseMissing(_) => K::DatabaseMissing,
            SqlError::WrongDatabaseName(_) => K::WrongDatabaseName,
            SqlError::NoSuchTable { .. } => K::NoSuchTable,
            SqlError::UnknownTable(_) => K::UnknownTable,
            SqlError::UnknownColumn { .. } => K::UnknownColumn,
            SqlError::UnknownFunction(_) => K::UnknownFunction,
            SqlError::WrongParameterCount(_) => K::WrongParameterCount,
            SqlError::OperandColumns(_) => K::OperandColumns,
            SqlError::NoSuchSavepoint(_) => K::NoSuchSavepoint,
            SqlError::IntoColumnCount => K::IntoColumnCount,
            SqlError::TooManyRows => K::TooManyRows,
            SqlError::NoTablesUsed => K::NoTablesUsed,
            SqlError::OutOfRange { .. } => K::OutOfRange,
            SqlError::WrongValue { .. } => K::WrongValue,
            SqlError::DivisionByZero => K::DivisionByZero,
            SqlError::CollationMix { .. } => K::CollationMix,
            SqlError::WrongArguments(_) => K::WrongArguments,
            SqlError::UnknownCharset(_) => K::UnknownCharset,
            SqlError::UnknownCollation(_) => K::UnknownCollation,
            SqlError::CollationCharsetMismatch { .. } => K::CollationCharsetMismatch,
            SqlError::InvalidString { .. } => K::InvalidString,
            SqlError::UndeclaredVariable(_) => K::UndeclaredVariable,
            SqlError::Config(c) => config_kind(c),
            SqlError::TransactionInProgress => K::TransactionInProgress,
            SqlError::ReadOnlyTransaction => K::ReadOnlyTransaction,
            SqlError::Interrupted => K::Interrupted,
            SqlError::NoSuchThread(_) => K::NoSuchThread,
            SqlError::NotOwnerOfThread(_) => K::NotOwnerOfThread,
            SqlError::UnknownStatement { .. } => K::UnknownStatement,
            SqlError::WrongParamCount(_) => K::WrongParamCount,
            SqlError::UnsupportedInPrepared => K::UnsupportedInPrepared,
            SqlError::AccessDenied { .. } => K::AccessDenied,
            SqlError::DbAccessDenied { .. } => K::DbAccessDenied,
            SqlError::TableAccessDenied { .. } => K::TableAccessDenied,
            SqlError::SpecificAccessDenied(_) => K::SpecificAccessDenied,
            SqlError::AccountOperationFailed { .. } => K::AccountOperationFailed,
            SqlError::CannotCreateUserWithGrant => K::CannotCreateUserWithGrant,
            SqlError::NoSuchGrant { .. } => K::NoSuchGrant,
            SqlError::NoSuchTableGrant { .. } => K::NoSuchTableGrant,
            SqlError::NoMatchingUser => K::NoMatchingUser,
            SqlError::WrongGrantLevel => K::WrongGrantLevel,
            SqlError::IllegalGrant => K::IllegalGrant,
            SqlError::UnknownPlugin(_) => K::UnknownPlugin,
            SqlError::BadPasswordHash => K::BadPasswordHash,
            SqlError::LockWaitTimeout => K::LockWaitTimeout,
            SqlError::Deadlock => K::Deadlock,
            SqlError::DuplicateKey { .. } => K::DuplicateKey,
            SqlError::TableFull(_) => K::TableFull,
            SqlError::Storage { .. } => K::Storage,
            SqlError::Internal(_) => K::Internal,
        }
    }

    /// MySQL error number and SQLSTATE, from [`ERROR_MAP`].
    pub fn code_and_state(&self) -> (u16, &'static str) {
        lookup(self.kind())
    }

    /// MySQL error number.
    pub fn code(&self) -> u16 {
        self.code_and_state().0
    }

    /// The error as a client receives it.
    pub fn to_server_error(&self) -> ServerError {
        let (code, state) = self.code_and_state();
        ServerError::new(code, state, self.to_string())
    }

    /// True for errors after which retrying the transaction may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, SqlError::Deadlock | SqlError::LockWaitTimeout)
    }
}

impl From<SqlError> for ServerError {
    fn from(e: SqlError) -> Self {
        e.to_server_error()
    }
}

fn config_kind(e: &ConfigError) -> ErrorKind {
    use ErrorKind as K;
    match e {
        ConfigError::UnknownSystemVariable { .. } => K::ConfigUnknownSystemVariable,
        ConfigError::ReadOnly { .. } => K::ConfigReadOnly,
        ConfigError::IncorrectScope { .. } => K::ConfigIncorrectScope,
        ConfigError::GlobalOnly { .. } => K::ConfigGlobalOnly,
        ConfigError::SessionOnly { .. } => K::ConfigSessionOnly,
        ConfigError::SessionReadOnly { .. } => K::ConfigSessionReadOnly,
        ConfigError::WrongValue { .. } => K::ConfigWrongValue,
        ConfigError::WrongType { .. } => K::ConfigWrongType,
        ConfigError::UnknownCharset { .. } => K::ConfigUnknownCharset,
        ConfigError::UnknownCollation { .. } => K::ConfigUnknownCollation,
        ConfigError::UnknownTimeZone { .. } => K::ConfigUnknownTimeZone,
        _ => K::ConfigStartup,
    }
}

/// The table row of `kind`.
pub fn lookup(kind: ErrorKind) -> (u16, &'static str) {
    ERROR_MAP
        .iter()
        .find(|(k, _, _)| *k == kind)
        .map(|(_, code, state)| (*code, *state))
        // Every kind has a row (unit-tested); 1105 keeps a client informed
        // if one were ever missing.
        .unwrap_or((1105, "HY000"))
}

/// Classifies an engine error (see the module doc).
pub fn from_engine(e: MtrError) -> SqlError {
    if let MtrError::SpaceFull { space, .. } = &e {
        return SqlError::TableFull(format!("tablespace {space}"));
    }
    let code = if e.is_corruption() {
        HA_ERR_CRASHED
    } else {
        HA_ERR_GENERIC
    };
    tracing::error!(error = %e, code, "storage engine error");
    SqlError::Storage {
        code,
        reason: e.to_string(),
        source: Some(Box::new(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_common::{PageId, SpaceId};
    use std::collections::BTreeSet;

    /// Every kind, listed independently of the table so a forgotten row fails.
    const ALL_KINDS: &[ErrorKind] = &[
        ErrorKind::Syntax,
        ErrorKind::EmptyQuery,
        ErrorKind::NotSupportedYet,
        ErrorKind::IdentifierTooLong,
        ErrorKind::UnknownDatabase,
        ErrorKind::NoDatabaseSelected,
        ErrorKind::DatabaseExists,
        ErrorKind::DatabaseMissing,
        ErrorKind::WrongDatabaseName,
        ErrorKind::NoSuchTable,
        ErrorKind::UnknownTable,
        ErrorKind::UnknownColumn,
        ErrorKind::UnknownFunction,
        ErrorKind::WrongParameterCount,
        ErrorKind::OperandColumns,
        ErrorKind::NoSuchSavepoint,
        ErrorKind::IntoColumnCount,
        ErrorKind::TooManyRows,
        ErrorKind::NoTablesUsed,
        ErrorKind::OutOfRange,
        ErrorKind::WrongValue,
        ErrorKind::DivisionByZero,
        ErrorKind::CollationMix,
        ErrorKind::WrongArguments,
        ErrorKind::UnknownCharset,
        ErrorKind::UnknownCollation,
        ErrorKind::CollationCharsetMismatch,
        ErrorKind::InvalidString,
        ErrorKind::UndeclaredVariable,
        ErrorKind::ConfigUnknownSystemVariable,
        ErrorKind::ConfigReadOnly,
        ErrorKind::ConfigIncorrectScope,
        ErrorKind::ConfigGlobalOnly,
        ErrorKind::ConfigSessionOnly,
        ErrorKind::ConfigSessionReadOnly,
        ErrorKind::ConfigWrongValue,
        ErrorKind::ConfigWrongType,
        ErrorKind::ConfigUnknownCharset,
        ErrorKind::ConfigUnknownCollation,
        ErrorKind::ConfigUnknownTimeZone,
        ErrorKind::ConfigStartup,
        ErrorKind::TransactionInProgress,
        ErrorKind::ReadOnlyTransaction,
        ErrorKind::Interrupted,
        ErrorKind::NoSuchThread,
        ErrorKind::NotOwnerOfThread,
        ErrorKind::UnknownStatement,
        ErrorKind::WrongParamCount,
        ErrorKind::UnsupportedInPrepared,
        ErrorKind::AccessDenied,
        ErrorKind::DbAccessDenied,
        ErrorKind::TableAccessDenied,
        ErrorKind::SpecificAccessDenied,
        ErrorKind::AccountOperationFailed,
        ErrorKind::CannotCreateUserWithGrant,
        ErrorKind::NoSuchGrant,
        ErrorKind::NoSuchTableGrant,
        ErrorKind::NoMatchingUser,
        ErrorKind::WrongGrantLevel,
        ErrorKind::IllegalGrant,
        ErrorKind::UnknownPlugin,
        ErrorKind::BadPasswordHash,
        ErrorKind::LockWaitTimeout,
        ErrorKind::Deadlock,
        ErrorKind::DuplicateKey,
        ErrorKind::TableFull,
        ErrorKind::Storage,
        ErrorKind::Internal,
    ];

    #[test]
    fn every_kind_has_exactly_one_row() {
        let mut seen = BTreeSet::new();
        for (kind, code, state) in ERROR_MAP {
            assert!(seen.insert(*kind), "{kind:?} listed twice");
            assert!((1000..5000).contains(code), "{kind:?}: {code}");
            assert_eq!(state.len(), 5, "{kind:?}: {state}");
            assert!(state.bytes().all(|b| b.is_ascii_alphanumeric()));
        }
        for kind in ALL_KINDS {
            assert!(seen.contains(kind), "{kind:?} has no row");
        }
        assert_eq!(seen.len(), ALL_KINDS.len());
    }

    #[test]
    fn well_known_errors_carry_mysql_numbers() {
        let cases: Vec<(SqlError, u16, &str)> = vec![
            (SqlError::Deadlock, 1213, "40001"),
            (SqlError::LockWaitTimeout, 1205, "HY000"),
            (
                SqlError::DuplicateKey {
                    value: "1".into(),
                    key: "t.PRIMARY".into(),
                },
                1062,
                "23000",
            ),
            (
                SqlError::NoSuchTable {
                    schema: "d".into(),
                    table: "t".into(),
                },
                1146,
                "42S02",
            ),
            (SqlError::UnknownDatabase("d".into()), 1049, "42000"),
            (SqlError::DatabaseExists("d".into()), 1007, "HY000"),
            (SqlError::Interrupted, 1317, "70100"),
            (
                SqlError::Syntax {
                    near: "x".into(),
                    line: 1,
                },
                1064,
                "42000",
            ),
            (
                SqlError::NotSupportedYet("CREATE TABLE".into()),
                1235,
                "42000",
            ),
            (
                SqlError::DbAccessDenied {
                    user: "u".into(),
                    host: "%".into(),
                    db: "d".into(),
                },
                1044,
                "42000",
            ),
            (
                SqlError::TableAccessDenied {
                    command: "SELECT",
                    user: "u".into(),
                    host: "%".into(),
                    table: "t".into(),
                },
                1142,
                "42000",
            ),
            (
                SqlError::SpecificAccessDenied("SUPER".into()),
                1227,
                "42000",
            ),
            (SqlError::NotOwnerOfThread(5), 1095, "HY000"),
        ];
        for (err, code, state) in cases {
            let wire = err.to_server_error();
            assert_eq!(wire.code, code, "{err:?}");
            assert_eq!(wire.sqlstate_str(), state, "{err:?}");
            assert_eq!(wire.message, err.to_string());
        }
    }

    #[test]
    fn messages_have_mysql_shapes() {
        let e = SqlError::TableAccessDenied {
            command: "SELECT",
            user: "bob".into(),
            host: "%".into(),
            table: "t1".into(),
        };
        assert_eq!(
            e.to_string(),
            "SELECT command denied to user 'bob'@'%' for table 't1'"
        );
        let e = SqlError::SpecificAccessDenied("SUPER or SYSTEM_VARIABLES_ADMIN".into());
        assert_eq!(
            e.to_string(),
            "Access denied; you need (at least one of) the SUPER or SYSTEM_VARIABLES_ADMIN privilege(s) for this operation"
        );
        let e = SqlError::Syntax {
            near: "FROM".into(),
            line: 2,
        };
        assert!(e.to_string().ends_with("near 'FROM' at line 2"));
    }

    #[test]
    fn config_errors_agree_with_the_registry() {
        let errors = vec![
            ConfigError::UnknownSystemVariable { name: "x".into() },
            ConfigError::ReadOnly { name: "x".into() },
            ConfigError::IncorrectScope {
                name: "x".into(),
                scope: "GLOBAL",
            },
            ConfigError::GlobalOnly { name: "x".into() },
            ConfigError::SessionOnly { name: "x".into() },
            ConfigError::SessionReadOnly { name: "x".into() },
            ConfigError::WrongValue {
                name: "x".into(),
                value: "y".into(),
            },
            ConfigError::WrongType { name: "x".into() },
            ConfigError::UnknownCharset { name: "x".into() },
            ConfigError::UnknownCollation { name: "x".into() },
            ConfigError::UnknownTimeZone { name: "x".into() },
        ];
        for c in errors {
            let (code, state) = (c.code().unwrap(), c.sqlstate().unwrap());
            let e = SqlError::from(c);
            assert_eq!(e.code_and_state(), (code, state), "{e:?}");
        }
    }

    #[test]
    fn engine_errors_are_classified() {
        let full = MtrError::SpaceFull {
            space: SpaceId::SYSTEM,
            pages: 10,
        };
        assert_eq!(SqlError::from(full).code(), 1114);
        let corrupt = MtrError::SpaceCorrupt {
            space: SpaceId::SYSTEM,
            reason: "bad free list".into(),
        };
        let e = SqlError::from(corrupt);
        assert_eq!(e.code_and_state(), (1030, "HY000"));
        assert!(e.to_string().starts_with("Got error 126 - '"), "{e}");
        assert!(e.to_string().ends_with("' from storage engine"), "{e}");
        let misuse = MtrError::NotExclusive(PageId::new(SpaceId::SYSTEM, 3));
        let e = SqlError::from(misuse);
        assert!(e.to_string().starts_with("Got error 168 - '"), "{e}");
    }
}
