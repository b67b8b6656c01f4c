//! Option files: MySQL's my.cnf syntax, read into a list of records.
//!
//! ```text
//! # comment            ; comment          (also after a value: port = 3306 # x)
//! [mysqld]                                 group header; only selected groups count
//! port = 3306                              name = value, spaces trimmed
//! skip-name-resolve                        bare name: boolean ON
//! init_connect = "SET NAMES utf8mb4"       quotes keep '#' and spaces
//! tmpdir = /tmp\sfiles                     escapes \n \t \r \b \s \\ \" \'
//! !include /etc/basalt/extra.cnf           another file, read right here
//! !includedir /etc/basalt/conf.d           every *.cnf in it, sorted by name
//! ```
//!
//! Rules, following MySQL's reader where it has one:
//! * A `#` starts a comment anywhere outside quotes; `;` only at the start
//!   of a line.
//! * A value that starts with a quote must be one quoted string; an
//!   unterminated quote is an error (MySQL would keep the quote characters,
//!   which hides typos).
//! * Options before the first group header are an error; options in groups
//!   that were not asked for are skipped without being checked.
//! * `!include` and `!includedir` work in any group and start a fresh group
//!   context in the included file. Relative paths are resolved against the
//!   including file's directory (MySQL uses the working directory, which
//!   makes a file behave differently depending on where the server starts).
//!   A missing include is an error; nesting is limited to
//!   [`MAX_INCLUDE_DEPTH`] levels, which also stops include cycles.
//! * `!includedir` reads only regular files named `*.cnf`, in byte order of
//!   their names; it does not descend into subdirectories.
//!
//! The reader only splits text into [`OptionRecord`]s. What the names and
//! values mean is decided by the loader ([`crate::load`]), which reports
//! errors with the record's file and line.

mod line;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::ConfigError;
use crate::origin::Origin;
use line::{parse_line, Line};

/// How deep `!include` may nest.
pub const MAX_INCLUDE_DEPTH: usize = 10;

/// One `name[=value]` line from a selected group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionRecord {
    /// The name as written (trimmed; may carry `loose-`, `skip-`, dashes).
    pub name: String,
    /// The unquoted, unescaped value; `None` for a bare name.
    pub value: Option<String>,
    /// File and line.
    pub origin: Origin,
}

/// Everything read from one option file and its includes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptionFiles {
    /// Records in reading order (later ones override earlier ones).
    pub records: Vec<OptionRecord>,
    /// Every file read, in order.
    pub files: Vec<PathBuf>,
}

/// Reads `path` (and what it includes), keeping the options of `groups`
/// (lower-case names, e.g. `["mysqld", "basaltd"]`).
pub fn read_option_file(path: &Path, groups: &[&str]) -> Result<OptionFiles, ConfigError> {
    let mut out = OptionFiles::default();
    read_into(path, groups, 0, None, &mut out)?;
    Ok(out)
}

fn read_into(
    path: &Path,
    groups: &[&str],
    depth: usize,
    included_from: Option<Origin>,
    out: &mut OptionFiles,
) -> Result<(), ConfigError> {
    let io_error = |source: io::Error| ConfigError::OptionFileIo {
        path: path.to_path_buf(),
        included_from: included_from.clone(),
        source,
    };
    let bytes = fs::read(path).map_err(io_error)?;
    let shared_path = Arc::new(path.to_path_buf());
    let origin_at = |line: usize| Origin::File {
        path: Arc::clone(&shared_path),
        line: u32::try_from(line).unwrap_or(u32::MAX),
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        let line = e.as_bytes()[..e.utf8_error().valid_up_to()]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1;
        ConfigError::OptionSyntax {
            origin: origin_at(line),
            reason: "line is not valid UTF-8".to_string(),
        }
    })?;
    tracing::debug!(path = %path.display(), "reading option file");
    out.files.push(path.to_path_buf());

    // None before the first group header; Some(selected) after.
    let mut in_group: Option<bool> = None;
    for (n, raw) in text.split('\n').enumerate() {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let origin = origin_at(n + 1);
        let parsed = parse_line(raw).map_err(|reason| ConfigError::OptionSyntax {
            origin: origin.clone(),
            reason,
        })?;
        match parsed {
            Line::Blank => {}
            Line::Group(name) => in_group = Some(groups.contains(&name.as_str())),
            Line::Include(target) => {
                let target = relative_to(path, &target);
                check_depth(depth, &origin, &target)?;
                read_into(&target, groups, depth + 1, Some(origin), out)?;
            }
            Line::IncludeDir(dir) => {
                let dir = relative_to(path, &dir);
                check_depth(depth, &origin, &dir)?;
                for file in cnf_files_in(&dir, &origin)? {
                    read_into(&file, groups, depth + 1, Some(origin.clone()), out)?;
                }
            }
            Line::Option { name, value } => match in_group {
                None => {
                    return Err(ConfigError::OptionSyntax {
                        origin,
                        reason: format!("option '{name}' appears before any [group] header"),
                    })
                }
                Some(false) => {}
                Some(true) => out.records.push(OptionRecord {
                    name,
                    value,
                    origin,
                }),
            },
        }
    }
    Ok(())
}

fn check_depth(depth: usize, origin: &Origin, target: &Path) -> Result<(), ConfigError> {
    if depth + 1 > MAX_INCLUDE_DEPTH {
        return Err(ConfigError::IncludeDepth {
            origin: origin.clone(),
            path: target.to_path_buf(),
            limit: MAX_INCLUDE_DEPTH,
        });
    }
    Ok(())
}

/// `target` as written in `including`: absolute, or relative to its
/// directory.
fn relative_to(including: &Path, target: &str) -> PathBuf {
    let target = Path::new(target);
    if target.is_absolute() {
        return target.to_path_buf();
    }
    match including.parent() {
        Some(dir) => dir.join(target),
        None => target.to_path_buf(),
    }
}

/// The `*.cnf` regular files directly in `dir`, sorted by name.
fn cnf_files_in(dir: &Path, origin: &Origin) -> Result<Vec<PathBuf>, ConfigError> {
    let io_error = |source: io::Error| ConfigError::OptionFileIo {
        path: dir.to_path_buf(),
        included_from: Some(origin.clone()),
        source,
    };
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_error)? {
        let entry = entry.map_err(io_error)?;
        let path = entry.path();
        let is_cnf = path.extension().is_some_and(|ext| ext == "cnf")
            && path.file_stem().is_some_and(|stem| !stem.is_empty());
        // Follow symlinks: a link to a file counts as a file.
        if is_cnf && fs::metadata(&path).map_err(io_error)?.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}
