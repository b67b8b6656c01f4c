//! Logging: `tracing` events to the `log_error` file, or to standard error
//! when `log_error = stderr` (the default).
//!
//! The filter comes from the `BASALT_LOG` environment variable in
//! `RUST_LOG` syntax (`info`, `basalt_sql=debug,info`); `info` when unset.

use std::fs::OpenOptions;
use std::path::Path;
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;

/// Environment variable holding the log filter.
pub const FILTER_ENV: &str = "BASALT_LOG";

/// Installs the global subscriber. `log_error` is `stderr` or a file path.
pub fn init(log_error: &str) -> Result<(), String> {
    let filter = EnvFilter::try_from_env(FILTER_ENV).unwrap_or_else(|_| EnvFilter::new("info"));
    if log_error == "stderr" {
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .try_init()
            .map_err(|e| format!("cannot install the logger: {e}"))
    } else {
        let path = Path::new(log_error);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| {
                format!("cannot create the directory of log_error '{log_error}': {e}")
            })?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot open log_error '{log_error}': {e}"))?;
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(Mutex::new(file))
            .with_ansi(false)
            .try_init()
            .map_err(|e| format!("cannot install the logger: {e}"))
    }
}
