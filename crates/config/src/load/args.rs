//! The command line: control options and `--name[=value]` records.

use std::ffi::OsString;
use std::path::PathBuf;

use super::apply::{classify, Control, Target};
use crate::error::ConfigError;
use crate::option_file::OptionRecord;
use crate::origin::Origin;
use crate::sysvar::{registry, SysVarKind};

/// The command line, split into what decides which files to read and the
/// variable options to apply after them.
#[derive(Debug, Default)]
pub(crate) struct CommandLine {
    pub(crate) no_defaults: bool,
    pub(crate) defaults_file: Option<PathBuf>,
    pub(crate) defaults_extra_file: Option<PathBuf>,
    pub(crate) print_defaults: bool,
    pub(crate) help: bool,
    pub(crate) version: bool,
    pub(crate) records: Vec<OptionRecord>,
}

fn syntax(reason: String) -> ConfigError {
    ConfigError::OptionSyntax {
        origin: Origin::CommandLine,
        reason,
    }
}

/// Parses `argv` (the first element is the program name and is skipped).
pub(crate) fn parse_command_line(argv: &[OsString]) -> Result<CommandLine, ConfigError> {
    let mut cl = CommandLine::default();
    let mut args = argv.iter().skip(1);
    while let Some(arg) = args.next() {
        let arg = arg.to_str().ok_or_else(|| {
            syntax(format!(
                "argument is not valid UTF-8: '{}'",
                arg.to_string_lossy()
            ))
        })?;
        match arg {
            "-?" => {
                cl.help = true;
                continue;
            }
            "-V" => {
                cl.version = true;
                continue;
            }
            _ => {}
        }
        let Some(body) = arg.strip_prefix("--").filter(|b| !b.is_empty()) else {
            return Err(syntax(format!("unexpected argument '{arg}'")));
        };
        let (name, value) = match body.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (body, None),
        };
        let classified = classify(name, &Origin::CommandLine)?;
        match classified.target {
            Target::Control(control) => {
                let needs_value =
                    matches!(control, Control::DefaultsFile | Control::DefaultsExtraFile);
                let value = match (needs_value, value) {
                    (true, Some(v)) => Some(v),
                    (true, None) => Some(
                        args.next()
                            .and_then(|a| a.to_str())
                            .map(str::to_string)
                            .ok_or_else(|| ConfigError::MissingOptionValue {
                                origin: Origin::CommandLine,
                                name: name.to_string(),
                                expected: "a file name".to_string(),
                            })?,
                    ),
                    (false, Some(_)) => {
                        return Err(ConfigError::UnexpectedOptionValue {
                            origin: Origin::CommandLine,
                            name: name.to_string(),
                        })
                    }
                    (false, None) => None,
                };
                match control {
                    Control::NoDefaults => cl.no_defaults = true,
                    Control::DefaultsFile => cl.defaults_file = value.map(PathBuf::from),
                    Control::DefaultsExtraFile => cl.defaults_extra_file = value.map(PathBuf::from),
                    Control::PrintDefaults => cl.print_defaults = true,
                    Control::Help => cl.help = true,
                    Control::Version => cl.version = true,
                }
            }
            Target::Variable {
                index,
                forced: None,
            } if value.is_none() => {
                // `--port 3306`: a non-boolean variable takes the next
                // argument as its value, as MySQL's option parser does.
                let value = match registry()[index].kind {
                    SysVarKind::Bool => None,
                    _ => match args.next() {
                        Some(next) => Some(
                            next.to_str()
                                .ok_or_else(|| {
                                    syntax(format!(
                                        "argument is not valid UTF-8: '{}'",
                                        next.to_string_lossy()
                                    ))
                                })?
                                .to_string(),
                        ),
                        // Reported with the variable's expectations when
                        // the record is applied.
                        None => None,
                    },
                };
                cl.records.push(OptionRecord {
                    name: name.to_string(),
                    value,
                    origin: Origin::CommandLine,
                });
            }
            Target::Variable { .. } | Target::Unknown => cl.records.push(OptionRecord {
                name: name.to_string(),
                value,
                origin: Origin::CommandLine,
            }),
        }
    }
    Ok(cl)
}
