//! The crate's error type and the warnings `SET` and startup produce.

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::origin::Origin;

/// Everything that can go wrong in this crate.
///
/// The first group are the errors of `SET`, `@@x` and `SHOW VARIABLES`: their
/// `Display` is MySQL's message text and [`code`](Self::code) /
/// [`sqlstate`](Self::sqlstate) give MySQL's error number and SQLSTATE, so the
/// SQL layer can send them to a client as they are. The second group are
/// startup errors (option files and the command line); each names where the
/// bad option was written (`/etc/basalt.cnf:12: ...` or `command line: ...`)
/// and has no MySQL code.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    // ---- SET / @@x -------------------------------------------------------
    /// No variable of that name (1193, HY000).
    #[error("Unknown system variable '{name}'")]
    UnknownSystemVariable {
        /// The name as written.
        name: String,
    },
    /// The variable cannot be changed at runtime (1238, HY000).
    #[error("Variable '{name}' is a read only variable")]
    ReadOnly {
        /// Canonical name.
        name: String,
    },
    /// `@@session.x` of a global-only or `@@global.x` of a session-only
    /// variable (1238, HY000). `scope` is `GLOBAL` or `SESSION`: the scope
    /// the variable does have.
    #[error("Variable '{name}' is a {scope} variable")]
    IncorrectScope {
        /// Canonical name.
        name: String,
        /// `"GLOBAL"` or `"SESSION"`.
        scope: &'static str,
    },
    /// `SET [SESSION] x` of a global-only variable (1229, HY000).
    #[error("Variable '{name}' is a GLOBAL variable and should be set with SET GLOBAL")]
    GlobalOnly {
        /// Canonical name.
        name: String,
    },
    /// `SET GLOBAL x` of a session-only variable (1228, HY000).
    #[error("Variable '{name}' is a SESSION variable and can't be used with SET GLOBAL")]
    SessionOnly {
        /// Canonical name.
        name: String,
    },
    /// `SET SESSION x` where the session copy is read-only (1621, HY000).
    #[error("SESSION variable '{name}' is read-only. Use SET GLOBAL to assign the value")]
    SessionReadOnly {
        /// Canonical name.
        name: String,
    },
    /// A value of the right type that the variable does not accept (1231,
    /// 42000).
    #[error("Variable '{name}' can't be set to the value of '{value}'")]
    WrongValue {
        /// Canonical name.
        name: String,
        /// The rejected value (or, for a SET list, the rejected member).
        value: String,
    },
    /// A value of a type the variable does not accept (1232, 42000).
    #[error("Incorrect argument type to variable '{name}'")]
    WrongType {
        /// Canonical name.
        name: String,
    },
    /// A character set name or id Basalt does not know (1115, 42000).
    #[error("Unknown character set: '{name}'")]
    UnknownCharset {
        /// The name as written.
        name: String,
    },
    /// A collation name or id Basalt does not know (1273, HY000).
    #[error("Unknown collation: '{name}'")]
    UnknownCollation {
        /// The name as written.
        name: String,
    },
    /// A time zone that is neither `SYSTEM`, `UTC` nor a valid offset (1298,
    /// HY000).
    #[error("Unknown or incorrect time zone: '{name}'")]
    UnknownTimeZone {
        /// The text as written.
        name: String,
    },

    // ---- startup ---------------------------------------------------------
    /// An option that names no variable and no startup option.
    #[error("{origin}: unknown variable '{name}'")]
    UnknownOption {
        /// Where it was written.
        origin: Origin,
        /// The option name as written (without `--` or `loose-`).
        name: String,
    },
    /// An option value the variable does not accept.
    #[error("{origin}: invalid value '{value}' for {name}: expected {expected}")]
    InvalidOptionValue {
        /// Where it was written.
        origin: Origin,
        /// Canonical variable name.
        name: String,
        /// The value as written.
        value: String,
        /// What the variable accepts, e.g. `an integer from 5 to 95`.
        expected: String,
    },
    /// A non-boolean option written without a value.
    #[error("{origin}: option '{name}' requires a value: expected {expected}")]
    MissingOptionValue {
        /// Where it was written.
        origin: Origin,
        /// The option name as written.
        name: String,
        /// What the variable accepts.
        expected: String,
    },
    /// A value given to an option that takes none (`--skip-x=1`,
    /// `--no-defaults=1`).
    #[error("{origin}: option '{name}' takes no value")]
    UnexpectedOptionValue {
        /// Where it was written.
        origin: Origin,
        /// The option name as written.
        name: String,
    },
    /// `skip-`, `disable-` or `enable-` in front of a variable that is not
    /// boolean.
    #[error("{origin}: option '{name}': the {prefix}- prefix applies only to boolean variables")]
    NotBoolean {
        /// Where it was written.
        origin: Origin,
        /// The option name as written.
        name: String,
        /// `skip`, `disable` or `enable`.
        prefix: &'static str,
    },
    /// A variable that exists but cannot be set at startup (`version`).
    #[error("{origin}: variable '{name}' is read-only and cannot be set at startup")]
    NotAnOption {
        /// Where it was written.
        origin: Origin,
        /// Canonical variable name.
        name: String,
    },
    /// `--no-defaults` and friends written in an option file.
    #[error("{origin}: option '{name}' is only valid on the command line")]
    CommandLineOnly {
        /// Where it was written.
        origin: Origin,
        /// The option name.
        name: String,
    },
    /// A line or argument that is not an option at all.
    #[error("{origin}: {reason}")]
    OptionSyntax {
        /// Where it was written.
        origin: Origin,
        /// What is wrong, e.g. `unterminated quoted value`.
        reason: String,
    },
    /// An option file (or `!includedir` directory) could not be read.
    #[error("cannot read option file '{}'{}: {source}", path.display(), IncludedFrom(included_from))]
    OptionFileIo {
        /// The file or directory.
        path: PathBuf,
        /// The `!include` line that named it, if any.
        included_from: Option<Origin>,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// `!include` nesting deeper than the limit (usually a cycle).
    #[error("{origin}: !include nesting deeper than {limit} levels at '{}'", path.display())]
    IncludeDepth {
        /// The `!include` line that went too deep.
        origin: Origin,
        /// The file it names.
        path: PathBuf,
        /// The nesting limit.
        limit: usize,
    },
}

struct IncludedFrom<'a>(&'a Option<Origin>);

impl fmt::Display for IncludedFrom<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(origin) => write!(f, " (included from {origin})"),
            None => Ok(()),
        }
    }
}

impl ConfigError {
    /// MySQL error number for `SET`/`@@x` errors; `None` for startup errors.
    pub fn code(&self) -> Option<u16> {
        Some(match self {
            ConfigError::UnknownSystemVariable { .. } => 1193,
            ConfigError::ReadOnly { .. } | ConfigError::IncorrectScope { .. } => 1238,
            ConfigError::GlobalOnly { .. } => 1229,
            ConfigError::SessionOnly { .. } => 1228,
            ConfigError::SessionReadOnly { .. } => 1621,
            ConfigError::WrongValue { .. } => 1231,
            ConfigError::WrongType { .. } => 1232,
            ConfigError::UnknownCharset { .. } => 1115,
            ConfigError::UnknownCollation { .. } => 1273,
            ConfigError::UnknownTimeZone { .. } => 1298,
            _ => return None,
        })
    }

    /// SQLSTATE for `SET`/`@@x` errors; `None` for startup errors.
    pub fn sqlstate(&self) -> Option<&'static str> {
        Some(match self {
            ConfigError::WrongValue { .. }
            | ConfigError::WrongType { .. }
            | ConfigError::UnknownCharset { .. } => "42000",
            ConfigError::UnknownSystemVariable { .. }
            | ConfigError::ReadOnly { .. }
            | ConfigError::IncorrectScope { .. }
            | ConfigError::GlobalOnly { .. }
            | ConfigError::SessionOnly { .. }
            | ConfigError::SessionReadOnly { .. }
            | ConfigError::UnknownCollation { .. }
            | ConfigError::UnknownTimeZone { .. } => "HY000",
            _ => return None,
        })
    }

    /// Whether this error came from option files or the command line.
    pub fn is_startup(&self) -> bool {
        self.code().is_none()
    }
}

/// A note `SET` attaches to a successful assignment (the SQL layer turns it
/// into a `SHOW WARNINGS` row).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetWarning {
    /// The value was out of range or not a multiple of the block size and
    /// was adjusted (1292): `Truncated incorrect x value: 'y'`.
    Truncated {
        /// Canonical name.
        name: &'static str,
        /// The value as given.
        value: String,
    },
    /// The value would break the order between two variables and was
    /// clamped to the other one (1210).
    Bounded {
        /// Canonical name of the variable being set.
        name: &'static str,
        /// The variable that bounds it.
        bound_by: &'static str,
        /// `"higher"` or `"lower"`.
        direction: &'static str,
        /// The value stored instead.
        stored: String,
    },
}

impl SetWarning {
    /// MySQL warning number.
    pub fn code(&self) -> u16 {
        match self {
            SetWarning::Truncated { .. } => 1292,
            SetWarning::Bounded { .. } => 1210,
        }
    }
}

impl fmt::Display for SetWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetWarning::Truncated { name, value } => {
                write!(f, "Truncated incorrect {name} value: '{value}'")
            }
            SetWarning::Bounded {
                name,
                bound_by,
                direction,
                stored,
            } => write!(
                f,
                "{name} cannot be set {direction} than {bound_by}; setting {name} to {stored}"
            ),
        }
    }
}

/// A problem at startup that does not stop the server; the server logs
/// these once logging is set up.
#[derive(Debug, Clone, PartialEq)]
pub struct StartupWarning {
    /// Where the option was written (or `computed at startup`).
    pub origin: Origin,
    /// What happened.
    pub kind: StartupWarningKind,
}

/// What a [`StartupWarning`] is about.
#[derive(Debug, Clone, PartialEq)]
pub enum StartupWarningKind {
    /// A `loose-` option that names nothing Basalt knows; ignored.
    UnknownLooseOption {
        /// The name after `loose-`.
        name: String,
    },
    /// A value outside the range or off the block size; `used` was stored.
    Adjusted {
        /// Canonical name.
        name: &'static str,
        /// The value as written.
        given: String,
        /// The value stored.
        used: String,
        /// Why, e.g. `accepted: an integer from 5 to 95`.
        reason: String,
    },
}

impl fmt::Display for StartupWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            StartupWarningKind::UnknownLooseOption { name } => {
                write!(f, "{}: ignoring unknown option 'loose-{name}'", self.origin)
            }
            StartupWarningKind::Adjusted {
                name,
                given,
                used,
                reason,
            } => write!(
                f,
                "{}: {name} adjusted from '{given}' to {used} ({reason})",
                self.origin
            ),
        }
    }
}
