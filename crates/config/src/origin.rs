//! Where a value came from.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// Who set a variable's current global value, for diagnostics and error
/// messages. `Display` is the prefix of startup error messages:
/// `/etc/basalt.cnf:12` or `command line`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The registry's compiled default.
    Compiled,
    /// Derived at startup from other values or the environment
    /// (`innodb_buffer_pool_instances`, `hostname`, `pid_file`, ...).
    Computed,
    /// A line in an option file.
    File {
        /// The file (shared by every record from that file).
        path: Arc<PathBuf>,
        /// 1-based line number.
        line: u32,
    },
    /// A `--name=value` argument.
    CommandLine,
    /// `SET GLOBAL` at runtime.
    Dynamic,
    /// Set by the server itself after startup (e.g. the port it bound).
    Server,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Compiled => f.write_str("compiled default"),
            Origin::Computed => f.write_str("computed at startup"),
            Origin::File { path, line } => write!(f, "{}:{line}", path.display()),
            Origin::CommandLine => f.write_str("command line"),
            Origin::Dynamic => f.write_str("SET GLOBAL"),
            Origin::Server => f.write_str("server"),
        }
    }
}
