//! `sql_mode`: MySQL 8.0's mode names, their bits and the combination modes.
//!
//! Bits match MySQL 8.0 so that a numeric `SET sql_mode = 2097152` means the
//! same thing on both servers. Modes MySQL 8.0 removed (`POSTGRESQL`,
//! `NO_AUTO_CREATE_USER`, ...) keep their bits reserved and are rejected by
//! name and by number. The combination modes `ANSI` and `TRADITIONAL` turn on
//! their members and stay set themselves, so
//! `SET sql_mode = 'TRADITIONAL'` reads back as
//! `STRICT_TRANS_TABLES,STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,TRADITIONAL,NO_ENGINE_SUBSTITUTION`.

use std::fmt;

use super::def::SetSpec;

/// The modes, indexed by bit (`""` = reserved).
const NAMES: &[&str] = &[
    "REAL_AS_FLOAT",              // 0
    "PIPES_AS_CONCAT",            // 1
    "ANSI_QUOTES",                // 2
    "IGNORE_SPACE",               // 3
    "",                           // 4: never used
    "ONLY_FULL_GROUP_BY",         // 5
    "NO_UNSIGNED_SUBTRACTION",    // 6
    "NO_DIR_IN_CREATE",           // 7
    "",                           // 8: POSTGRESQL (removed in 8.0)
    "",                           // 9: ORACLE
    "",                           // 10: MSSQL
    "",                           // 11: DB2
    "",                           // 12: MAXDB
    "",                           // 13: NO_KEY_OPTIONS
    "",                           // 14: NO_TABLE_OPTIONS
    "",                           // 15: NO_FIELD_OPTIONS
    "",                           // 16: MYSQL323
    "",                           // 17: MYSQL40
    "ANSI",                       // 18
    "NO_AUTO_VALUE_ON_ZERO",      // 19
    "NO_BACKSLASH_ESCAPES",       // 20
    "STRICT_TRANS_TABLES",        // 21
    "STRICT_ALL_TABLES",          // 22
    "NO_ZERO_IN_DATE",            // 23
    "NO_ZERO_DATE",               // 24
    "ALLOW_INVALID_DATES",        // 25
    "ERROR_FOR_DIVISION_BY_ZERO", // 26
    "TRADITIONAL",                // 27
    "",                           // 28: NO_AUTO_CREATE_USER
    "HIGH_NOT_PRECEDENCE",        // 29
    "NO_ENGINE_SUBSTITUTION",     // 30
    "PAD_CHAR_TO_FULL_LENGTH",    // 31
    "TIME_TRUNCATE_FRACTIONAL",   // 32
];

/// The `sql_mode` member list used by the registry.
pub(crate) static SQL_MODE_SPEC: SetSpec = SetSpec {
    names: NAMES,
    switches: false,
    combinations: &[
        (
            18,
            SqlMode::REAL_AS_FLOAT.0
                | SqlMode::PIPES_AS_CONCAT.0
                | SqlMode::ANSI_QUOTES.0
                | SqlMode::IGNORE_SPACE.0
                | SqlMode::ONLY_FULL_GROUP_BY.0,
        ),
        (
            27,
            SqlMode::STRICT_TRANS_TABLES.0
                | SqlMode::STRICT_ALL_TABLES.0
                | SqlMode::NO_ZERO_IN_DATE.0
                | SqlMode::NO_ZERO_DATE.0
                | SqlMode::ERROR_FOR_DIVISION_BY_ZERO.0
                | SqlMode::NO_ENGINE_SUBSTITUTION.0,
        ),
    ],
};

/// A typed `sql_mode` value for the SQL layer: `mode.contains(SqlMode::STRICT_TRANS_TABLES)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SqlMode(u64);

impl SqlMode {
    /// `REAL_AS_FLOAT`: `REAL` means `FLOAT`, not `DOUBLE`.
    pub const REAL_AS_FLOAT: SqlMode = SqlMode(1 << 0);
    /// `PIPES_AS_CONCAT`: `||` concatenates.
    pub const PIPES_AS_CONCAT: SqlMode = SqlMode(1 << 1);
    /// `ANSI_QUOTES`: `"` quotes identifiers.
    pub const ANSI_QUOTES: SqlMode = SqlMode(1 << 2);
    /// `IGNORE_SPACE`: spaces allowed between a function name and `(`.
    pub const IGNORE_SPACE: SqlMode = SqlMode(1 << 3);
    /// `ONLY_FULL_GROUP_BY`.
    pub const ONLY_FULL_GROUP_BY: SqlMode = SqlMode(1 << 5);
    /// `NO_UNSIGNED_SUBTRACTION`.
    pub const NO_UNSIGNED_SUBTRACTION: SqlMode = SqlMode(1 << 6);
    /// `NO_DIR_IN_CREATE`.
    pub const NO_DIR_IN_CREATE: SqlMode = SqlMode(1 << 7);
    /// `ANSI` (combination).
    pub const ANSI: SqlMode = SqlMode(1 << 18);
    /// `NO_AUTO_VALUE_ON_ZERO`.
    pub const NO_AUTO_VALUE_ON_ZERO: SqlMode = SqlMode(1 << 19);
    /// `NO_BACKSLASH_ESCAPES`.
    pub const NO_BACKSLASH_ESCAPES: SqlMode = SqlMode(1 << 20);
    /// `STRICT_TRANS_TABLES`.
    pub const STRICT_TRANS_TABLES: SqlMode = SqlMode(1 << 21);
    /// `STRICT_ALL_TABLES`.
    pub const STRICT_ALL_TABLES: SqlMode = SqlMode(1 << 22);
    /// `NO_ZERO_IN_DATE`.
    pub const NO_ZERO_IN_DATE: SqlMode = SqlMode(1 << 23);
    /// `NO_ZERO_DATE`.
    pub const NO_ZERO_DATE: SqlMode = SqlMode(1 << 24);
    /// `ALLOW_INVALID_DATES`.
    pub const ALLOW_INVALID_DATES: SqlMode = SqlMode(1 << 25);
    /// `ERROR_FOR_DIVISION_BY_ZERO`.
    pub const ERROR_FOR_DIVISION_BY_ZERO: SqlMode = SqlMode(1 << 26);
    /// `TRADITIONAL` (combination).
    pub const TRADITIONAL: SqlMode = SqlMode(1 << 27);
    /// `HIGH_NOT_PRECEDENCE`.
    pub const HIGH_NOT_PRECEDENCE: SqlMode = SqlMode(1 << 29);
    /// `NO_ENGINE_SUBSTITUTION`.
    pub const NO_ENGINE_SUBSTITUTION: SqlMode = SqlMode(1 << 30);
    /// `PAD_CHAR_TO_FULL_LENGTH`.
    pub const PAD_CHAR_TO_FULL_LENGTH: SqlMode = SqlMode(1 << 31);
    /// `TIME_TRUNCATE_FRACTIONAL`.
    pub const TIME_TRUNCATE_FRACTIONAL: SqlMode = SqlMode(1 << 32);

    /// MySQL 8.0's default: `ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,
    /// NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,
    /// NO_ENGINE_SUBSTITUTION`.
    pub const DEFAULT: SqlMode = SqlMode(
        Self::ONLY_FULL_GROUP_BY.0
            | Self::STRICT_TRANS_TABLES.0
            | Self::NO_ZERO_IN_DATE.0
            | Self::NO_ZERO_DATE.0
            | Self::ERROR_FOR_DIVISION_BY_ZERO.0
            | Self::NO_ENGINE_SUBSTITUTION.0,
    );

    /// No modes.
    pub const EMPTY: SqlMode = SqlMode(0);

    /// The raw bits (MySQL-compatible).
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// Builds a mode from bits, rejecting reserved bits; combination modes
    /// are expanded.
    pub fn from_bits(bits: u64) -> Option<SqlMode> {
        SQL_MODE_SPEC.from_bits(bits).map(SqlMode)
    }

    pub(crate) const fn from_bits_unchecked(bits: u64) -> SqlMode {
        SqlMode(bits)
    }

    /// Whether every mode in `other` is set.
    pub const fn contains(self, other: SqlMode) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether a strict mode (`STRICT_TRANS_TABLES` or `STRICT_ALL_TABLES`)
    /// is set.
    pub const fn is_strict(self) -> bool {
        self.0 & (Self::STRICT_TRANS_TABLES.0 | Self::STRICT_ALL_TABLES.0) != 0
    }

    /// Parses a comma-separated list of mode names.
    pub fn parse(text: &str) -> Result<SqlMode, String> {
        SQL_MODE_SPEC.parse(text).map(SqlMode)
    }
}

impl fmt::Display for SqlMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        SQL_MODE_SPEC.write_members(self.0, f)
    }
}

impl fmt::Debug for SqlMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SqlMode({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_match_their_names() {
        let pairs = [
            (SqlMode::REAL_AS_FLOAT, "REAL_AS_FLOAT"),
            (SqlMode::ONLY_FULL_GROUP_BY, "ONLY_FULL_GROUP_BY"),
            (SqlMode::ANSI, "ANSI"),
            (SqlMode::STRICT_TRANS_TABLES, "STRICT_TRANS_TABLES"),
            (SqlMode::TRADITIONAL, "TRADITIONAL"),
            (SqlMode::NO_ENGINE_SUBSTITUTION, "NO_ENGINE_SUBSTITUTION"),
            (
                SqlMode::TIME_TRUNCATE_FRACTIONAL,
                "TIME_TRUNCATE_FRACTIONAL",
            ),
        ];
        for (mode, name) in pairs {
            assert_eq!(mode.to_string(), name);
        }
    }

    #[test]
    fn default_reads_back_in_canonical_order() {
        assert_eq!(
            SqlMode::DEFAULT.to_string(),
            "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,\
             ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"
        );
        // Input order does not matter; output order is canonical.
        let shuffled = SqlMode::parse(
            "no_engine_substitution, ERROR_FOR_DIVISION_BY_ZERO,NO_ZERO_DATE,\
             NO_ZERO_IN_DATE,STRICT_TRANS_TABLES,ONLY_FULL_GROUP_BY",
        )
        .unwrap();
        assert_eq!(shuffled, SqlMode::DEFAULT);
    }

    #[test]
    fn combination_modes_expand_and_stay_set() {
        assert_eq!(
            SqlMode::parse("ANSI").unwrap().to_string(),
            "REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ONLY_FULL_GROUP_BY,ANSI"
        );
        assert_eq!(
            SqlMode::parse("TRADITIONAL").unwrap().to_string(),
            "STRICT_TRANS_TABLES,STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,\
             ERROR_FOR_DIVISION_BY_ZERO,TRADITIONAL,NO_ENGINE_SUBSTITUTION"
        );
        // A numeric TRADITIONAL bit expands too.
        let numeric = SqlMode::from_bits(SqlMode::TRADITIONAL.bits()).unwrap();
        assert!(numeric.contains(SqlMode::STRICT_ALL_TABLES));
    }

    #[test]
    fn removed_and_unknown_modes_are_rejected() {
        assert_eq!(
            SqlMode::parse("STRICT_ALL_TABLES,NO_AUTO_CREATE_USER"),
            Err("NO_AUTO_CREATE_USER".to_string())
        );
        assert_eq!(SqlMode::parse("POSTGRESQL"), Err("POSTGRESQL".to_string()));
        assert!(SqlMode::from_bits(1 << 28).is_none());
        assert!(SqlMode::from_bits(1 << 4).is_none());
        assert!(SqlMode::from_bits(1 << 40).is_none());
        assert_eq!(SqlMode::parse("").unwrap(), SqlMode::EMPTY);
    }

    #[test]
    fn strictness() {
        assert!(SqlMode::DEFAULT.is_strict());
        assert!(!SqlMode::parse("ANSI").unwrap().is_strict());
    }
}
