//! Startup: from `argv` and option files to a resolved [`GlobalVars`].
//!
//! ```text
//! argv --parse--> control options (--no-defaults, --defaults-file, ...)
//!   |              |
//!   |              v
//!   |     which files:  --no-defaults           -> none
//!   |                   --defaults-file=F       -> F [+ extra]
//!   |                   otherwise               -> /etc/basalt.cnf,
//!   |                                              /etc/basalt/basalt.cnf,
//!   |                                              [extra], ~/.basalt.cnf
//!   |              |
//!   |              v
//!   |     option_file::read_option_file (groups [mysqld], [basaltd])
//!   |              |
//!   v              v
//! command-line records applied AFTER file records, one by one, in order
//!   (last value wins) -> apply::apply_record -> GlobalVars slots
//!                  |
//!                  v
//!          apply::finish: derived values (pool instances, io capacity
//!          max, charset/collation pairs, absolute paths, hostname, ...)
//! ```
//!
//! Why not `/etc/my.cnf` and `/etc/mysql/my.cnf`: on a machine with MySQL
//! or MariaDB installed those files configure *that* server, and their
//! `[mysqld]` groups routinely hold options Basalt does not implement
//! (`innodb_file_per_table`, `log_bin`, `query_cache_size`, ...). Reading them
//! by default would make `basaltd` refuse to start, or silently take another
//! server's port and data directory. So the default search covers
//! Basalt's own files only; a MySQL file can still be used deliberately with
//! `--defaults-file` or `!include`, and both `[mysqld]` and `[basaltd]`
//! groups are honoured so such a file works unchanged.
//!
//! Order: files in the order above, records within a file in line order
//! (groups in the order they appear; `[basaltd]` has no priority over
//! `[mysqld]` other than coming later), then the command line. Every
//! record is validated when applied, so an error names the first bad
//! option even if a later one would have overridden it.
//!
//! The command-line-only options (`--no-defaults`, `--defaults-file`,
//! `--defaults-extra-file`, `--print-defaults`, `--help`, `--version`) may
//! appear anywhere on the command line; MySQL insists that the first three
//! come first. With `--defaults-file`, a `--defaults-extra-file` is still
//! read after it.

mod apply;
mod args;
mod help;

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;

pub use help::{print_defaults_text, version_text};

use crate::error::{ConfigError, StartupWarning};
use crate::option_file::{read_option_file, OptionRecord};
use crate::store::GlobalVars;
use args::parse_command_line;

/// The option-file groups `basaltd` reads.
pub const OPTION_GROUPS: &[&str] = &["mysqld", "basaltd"];

/// The system-wide option files searched by default, in order.
pub const SYSTEM_OPTION_FILES: &[&str] = &["/etc/basalt.cnf", "/etc/basalt/basalt.cnf"];

/// The per-user option file, relative to `$HOME`.
pub const USER_OPTION_FILE: &str = ".basalt.cnf";

/// What the server should do after loading its options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Start serving.
    Run,
    /// Print [`Loader::help_text`] and exit (`--help`, `-?`). Option files
    /// are not read, so a broken file cannot hide the help.
    Help,
    /// Print [`version_text`] and exit (`--version`, `-V`).
    Version,
    /// Print [`print_defaults_text`] of these arguments and exit
    /// (`--print-defaults`): the option-file records as `--name=value`, in
    /// the order they would be applied, without validating them.
    PrintDefaults(Vec<String>),
}

/// The outcome of startup option processing.
#[derive(Debug)]
pub struct ServerOptions {
    /// What to do next.
    pub command: Command,
    /// Every variable, resolved; [`GlobalVars::origin`] tells which file and
    /// line (or the command line) set each value.
    pub globals: Arc<GlobalVars>,
    /// The option files read, in order (includes listed where they were
    /// read).
    pub files_read: Vec<PathBuf>,
    /// Problems that did not stop startup (clamped values, unknown `loose-`
    /// options); the server logs them once logging is up.
    pub warnings: Vec<StartupWarning>,
}

/// Facts about the process and machine the loader needs, gathered once so
/// tests can supply their own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// Base of a relative `datadir`.
    pub working_dir: PathBuf,
    /// `$TMPDIR`, if set and non-empty.
    pub tmpdir: Option<PathBuf>,
    /// The machine's host name (`@@hostname`).
    pub hostname: String,
    /// The machine's time zone name (`@@system_time_zone`).
    pub system_time_zone: String,
}

impl Environment {
    /// Reads the real environment: current directory, `$TMPDIR`, the kernel
    /// host name (`/proc/sys/kernel/hostname`, then `/etc/hostname`, else
    /// `localhost`) and the time zone (`$TZ`, then the `/etc/localtime`
    /// link target, then `/etc/timezone`, else `UTC`).
    pub fn from_process() -> Environment {
        let read_trimmed = |path: &str| {
            fs::read_to_string(path)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let hostname = read_trimmed("/proc/sys/kernel/hostname")
            .or_else(|| read_trimmed("/etc/hostname"))
            .unwrap_or_else(|| "localhost".to_string());
        let tz_env = std::env::var("TZ")
            .ok()
            .map(|tz| tz.trim_start_matches(':').to_string())
            .filter(|tz| !tz.is_empty());
        let tz_link = fs::read_link("/etc/localtime").ok().and_then(|target| {
            let text = target.to_string_lossy().into_owned();
            text.split_once("zoneinfo/")
                .map(|(_, zone)| zone.to_string())
        });
        let system_time_zone = tz_env
            .or(tz_link)
            .or_else(|| read_trimmed("/etc/timezone"))
            .unwrap_or_else(|| "UTC".to_string());
        Environment {
            working_dir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            tmpdir: std::env::var_os("TMPDIR")
                .filter(|t| !t.is_empty())
                .map(PathBuf::from),
            hostname,
            system_time_zone,
        }
    }
}

/// Where to look for option files, and the environment to resolve against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loader {
    /// Read in order when neither `--no-defaults` nor `--defaults-file` is
    /// given; missing files are skipped.
    pub system_files: Vec<PathBuf>,
    /// Read last (after `--defaults-extra-file`); skipped if missing.
    pub user_file: Option<PathBuf>,
    /// Process facts.
    pub environment: Environment,
}

impl Loader {
    /// The real search list ([`SYSTEM_OPTION_FILES`], `~/.basalt.cnf`) and
    /// the real environment.
    pub fn from_process() -> Loader {
        Loader {
            system_files: SYSTEM_OPTION_FILES.iter().map(PathBuf::from).collect(),
            user_file: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|home| PathBuf::from(home).join(USER_OPTION_FILE)),
            environment: Environment::from_process(),
        }
    }

    /// Resolves the options for `argv` (the first element is the program
    /// name). See the module doc for the order of sources.
    pub fn load(&self, argv: &[OsString]) -> Result<ServerOptions, ConfigError> {
        let cl = parse_command_line(argv)?;
        let globals = Arc::new(GlobalVars::new());
        let mut warnings = Vec::new();
        if cl.help || cl.version {
            return Ok(ServerOptions {
                command: if cl.help {
                    Command::Help
                } else {
                    Command::Version
                },
                globals,
                files_read: Vec::new(),
                warnings,
            });
        }

        let mut files_read = Vec::new();
        let mut records: Vec<OptionRecord> = Vec::new();
        if !cl.no_defaults {
            // (path, must exist)
            let mut plan: Vec<(PathBuf, bool)> = Vec::new();
            match &cl.defaults_file {
                Some(file) => plan.push((file.clone(), true)),
                None => plan.extend(self.system_files.iter().map(|f| (f.clone(), false))),
            }
            if let Some(extra) = &cl.defaults_extra_file {
                plan.push((extra.clone(), true));
            }
            if cl.defaults_file.is_none() {
                plan.extend(self.user_file.iter().map(|f| (f.clone(), false)));
            }
            for (path, required) in plan {
                match read_option_file(&path, OPTION_GROUPS) {
                    Ok(read) => {
                        files_read.extend(read.files);
                        records.extend(read.records);
                    }
                    Err(ConfigError::OptionFileIo {
                        path: failed,
                        included_from: None,
                        source,
                    }) if !required && source.kind() == io::ErrorKind::NotFound => {
                        tracing::debug!(path = %failed.display(), "no option file");
                    }
                    Err(e) => return Err(e),
                }
            }
        }

        if cl.print_defaults {
            let arguments = records
                .iter()
                .map(|r| match &r.value {
                    Some(v) => format!("--{}={v}", r.name),
                    None => format!("--{}", r.name),
                })
                .collect();
            return Ok(ServerOptions {
                command: Command::PrintDefaults(arguments),
                globals,
                files_read,
                warnings,
            });
        }

        for record in records.iter().chain(cl.records.iter()) {
            apply::apply_record(&globals, record, &mut warnings)?;
        }
        apply::finish(&globals, &self.environment, &mut warnings)?;
        Ok(ServerOptions {
            command: Command::Run,
            globals,
            files_read,
            warnings,
        })
    }
}

/// Resolves the server's options from `argv` (as given by
/// `std::env::args_os()`) with the real search list and environment.
pub fn load_server_options(argv: &[OsString]) -> Result<ServerOptions, ConfigError> {
    Loader::from_process().load(argv)
}
