//! Applying option records to the global store, then the startup rules
//! that derive one value from others.

use std::path::{Component, Path, PathBuf};

use super::Environment;
use crate::error::{ConfigError, StartupWarning, StartupWarningKind};
use crate::option_file::OptionRecord;
use crate::origin::Origin;
use crate::store::GlobalVars;
use crate::sysvar::charset::{default_collation_of, find_collation};
use crate::sysvar::keys::{self, Key};
use crate::sysvar::{
    find, registry, NameSyntax, SysValue, SysVarKind, VarIndex, VarType, CHARSET_COLLATION_PAIRS,
    ORDERED_PAIRS,
};

/// Options that steer the loader itself; valid only on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Control {
    NoDefaults,
    DefaultsFile,
    DefaultsExtraFile,
    PrintDefaults,
    Help,
    Version,
}

const CONTROLS: &[(&str, Control)] = &[
    ("defaults_extra_file", Control::DefaultsExtraFile),
    ("defaults_file", Control::DefaultsFile),
    ("help", Control::Help),
    ("no_defaults", Control::NoDefaults),
    ("print_defaults", Control::PrintDefaults),
    ("version", Control::Version),
];

/// What an option name refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Control(Control),
    /// A variable; `forced` is the value a `skip-`/`disable-` (false) or
    /// `enable-` (true) prefix gives a boolean.
    Variable {
        index: VarIndex,
        forced: Option<bool>,
    },
    Unknown,
}

#[derive(Debug, Clone)]
pub(crate) struct Classified {
    pub(crate) target: Target,
    /// Written with a `loose-` prefix.
    pub(crate) loose: bool,
    /// The name without `loose-`.
    pub(crate) base: String,
}

/// `name` without `prefix-` / `prefix_` (prefix matched ignoring case).
fn strip_word<'a>(name: &'a str, prefix: &str) -> Option<&'a str> {
    let head = name.get(..prefix.len())?;
    let rest = &name[prefix.len()..];
    (head.eq_ignore_ascii_case(prefix) && (rest.starts_with('-') || rest.starts_with('_')))
        .then(|| &rest[1..])
        .filter(|r| !r.is_empty())
}

fn normalized(name: &str) -> String {
    name.to_ascii_lowercase().replace('-', "_")
}

/// Resolves an option name: `loose-` first, then the command-line-only
/// options, then an exact variable name or alias, then `skip-`/`disable-`/
/// `enable-` in front of a boolean variable.
pub(crate) fn classify(name: &str, origin: &Origin) -> Result<Classified, ConfigError> {
    let (loose, base) = match strip_word(name, "loose") {
        Some(rest) => (true, rest),
        None => (false, name),
    };
    let norm = normalized(base);
    let target = if let Some((_, control)) = CONTROLS.iter().find(|(n, _)| *n == norm) {
        Target::Control(*control)
    } else if let Some(index) = find(base, NameSyntax::Option) {
        Target::Variable {
            index,
            forced: None,
        }
    } else {
        let mut target = Target::Unknown;
        for (prefix, value) in [("skip", false), ("disable", false), ("enable", true)] {
            let Some(rest) = strip_word(base, prefix) else {
                continue;
            };
            let Some(index) = find(rest, NameSyntax::Option) else {
                continue;
            };
            if registry()[index].kind != SysVarKind::Bool {
                return Err(ConfigError::NotBoolean {
                    origin: origin.clone(),
                    name: base.to_string(),
                    prefix,
                });
            }
            target = Target::Variable {
                index,
                forced: Some(value),
            };
            break;
        }
        target
    };
    Ok(Classified {
        target,
        loose,
        base: base.to_string(),
    })
}

/// Applies one record: validates it against the registry and stores the
/// value with the record's origin. Out-of-range values are stored clamped
/// with a warning, as MySQL does.
pub(crate) fn apply_record(
    globals: &GlobalVars,
    record: &OptionRecord,
    warnings: &mut Vec<StartupWarning>,
) -> Result<(), ConfigError> {
    let origin = &record.origin;
    let classified = classify(&record.name, origin)?;
    let loose_unknown = |warnings: &mut Vec<StartupWarning>| {
        warnings.push(StartupWarning {
            origin: origin.clone(),
            kind: StartupWarningKind::UnknownLooseOption {
                name: classified.base.clone(),
            },
        });
        Ok(())
    };
    let (index, forced) = match classified.target {
        // `version = x` in a file means the variable, not `--version`.
        Target::Control(_) => match find(&classified.base, NameSyntax::Option) {
            Some(index) => (index, None),
            None => {
                return Err(ConfigError::CommandLineOnly {
                    origin: origin.clone(),
                    name: classified.base.clone(),
                })
            }
        },
        Target::Unknown if classified.loose => return loose_unknown(warnings),
        Target::Unknown => {
            return Err(ConfigError::UnknownOption {
                origin: origin.clone(),
                name: classified.base.clone(),
            })
        }
        Target::Variable { index, forced } => (index, forced),
    };
    let def = &registry()[index];
    if !def.startup {
        if classified.loose {
            return loose_unknown(warnings);
        }
        return Err(ConfigError::NotAnOption {
            origin: origin.clone(),
            name: def.name.to_string(),
        });
    }
    let invalid = |value: &str| ConfigError::InvalidOptionValue {
        origin: origin.clone(),
        name: def.name.to_string(),
        value: value.to_string(),
        expected: def.expected(),
    };
    let value = match (forced, &record.value) {
        (Some(_), Some(_)) => {
            return Err(ConfigError::UnexpectedOptionValue {
                origin: origin.clone(),
                name: classified.base.clone(),
            })
        }
        (Some(b), None) => SysValue::Bool(b),
        (None, None) if def.kind == SysVarKind::Bool => SysValue::Bool(true),
        (None, None) => {
            return Err(ConfigError::MissingOptionValue {
                origin: origin.clone(),
                name: classified.base.clone(),
                expected: def.expected(),
            })
        }
        (None, Some(text)) => {
            let converted = def.parse_option(text).map_err(|()| invalid(text))?;
            if converted.adjusted {
                warnings.push(StartupWarning {
                    origin: origin.clone(),
                    kind: StartupWarningKind::Adjusted {
                        name: def.name,
                        given: text.clone(),
                        used: converted.value.to_string(),
                        reason: format!("accepted: {}", def.expected()),
                    },
                });
            }
            converted.value
        }
    };
    if def.fixed && value != SysValue::from_default(def) {
        return Err(invalid(&value.to_string()));
    }
    globals.store_startup(index, value, origin.clone());
    Ok(())
}

fn is_explicit<T: VarType>(globals: &GlobalVars, key: Key<T>) -> bool {
    globals.origin_at(key.index()) != Origin::Compiled
}

fn is_explicit_at(globals: &GlobalVars, index: VarIndex) -> bool {
    globals.origin_at(index) != Origin::Compiled
}

/// Stores a derived value: origin `Computed` if the variable was at its
/// compiled default, else the explicit origin is kept (the warning that
/// goes with an override explains the change).
fn store_derived(globals: &GlobalVars, index: VarIndex, value: SysValue) {
    let origin = match globals.origin_at(index) {
        Origin::Compiled => Origin::Computed,
        explicit => explicit,
    };
    globals.store_startup(index, value, origin);
}

fn adjusted(
    globals: &GlobalVars,
    index: VarIndex,
    given: String,
    used: String,
    reason: String,
) -> StartupWarning {
    StartupWarning {
        origin: globals.origin_at(index),
        kind: StartupWarningKind::Adjusted {
            name: registry()[index].name,
            given,
            used,
            reason,
        },
    }
}

/// `base` joined with `path` unless `path` is absolute; `.` components are
/// dropped (`..` is kept: resolving it needs the file system).
fn absolute(base: &Path, path: &str) -> PathBuf {
    let joined = base.join(path);
    joined
        .components()
        .filter(|c| *c != Component::CurDir)
        .collect()
}

/// The rules that run after every option is applied, in this order:
///
/// 1. character set and collation options agree (one named alone sets the
///    other; both named but mismatched is an error), and the server's pair
///    becomes the global client, connection, results and database pair;
/// 2. `innodb_buffer_pool_instances`: 8 for a pool of 1 GiB or more, else 1
///    unless set; forced to 1 below 1 GiB even when set (as MySQL);
/// 3. `innodb_page_cleaners` at most the number of instances;
/// 4. `innodb_io_capacity_max` defaults to twice `innodb_io_capacity`, at
///    least 2000; ordered pairs are kept ordered;
/// 5. paths: `datadir` made absolute; `pid_file` and `log_error` relative to
///    it; `tmpdir` from `$TMPDIR`;
/// 6. facts about the machine: `hostname`, `system_time_zone`.
pub(crate) fn finish(
    globals: &GlobalVars,
    env: &Environment,
    warnings: &mut Vec<StartupWarning>,
) -> Result<(), ConfigError> {
    // 1. Character sets and collations.
    for &(cs_index, coll_index) in CHARSET_COLLATION_PAIRS {
        if !(registry()[cs_index].startup && registry()[coll_index].startup) {
            continue;
        }
        let cs = globals.value_at(cs_index);
        let coll = globals.value_at(coll_index);
        let (Some(cs_name), Some(coll_name)) = (cs.as_str(), coll.as_str()) else {
            continue;
        };
        match (
            is_explicit_at(globals, cs_index),
            is_explicit_at(globals, coll_index),
        ) {
            (true, false) => {
                if let Some(c) = default_collation_of(cs_name) {
                    store_derived(globals, coll_index, SysValue::Str(c.name.to_string()));
                }
            }
            (false, true) => {
                if let Some(c) = find_collation(coll_name) {
                    store_derived(globals, cs_index, SysValue::Str(c.charset.to_string()));
                }
            }
            (true, true) => {
                if find_collation(coll_name).is_some_and(|c| c.charset != cs_name) {
                    return Err(ConfigError::InvalidOptionValue {
                        origin: globals.origin_at(coll_index),
                        name: registry()[coll_index].name.to_string(),
                        value: coll_name.to_string(),
                        expected: format!(
                            "a collation of character set {cs_name} (set by {})",
                            globals.origin_at(cs_index)
                        ),
                    });
                }
            }
            (false, false) => {}
        }
    }

    // The server's character set is also the initial global value of the
    // client-side and database character sets, as in MySQL (clients then
    // choose their own in the handshake or with SET NAMES).
    let server_cs = globals.value_at(keys::CHARACTER_SET_SERVER.index());
    let server_coll = globals.value_at(keys::COLLATION_SERVER.index());
    for index in [
        keys::CHARACTER_SET_CLIENT.index(),
        keys::CHARACTER_SET_CONNECTION.index(),
        keys::CHARACTER_SET_RESULTS.index(),
        keys::CHARACTER_SET_DATABASE.index(),
    ] {
        store_derived(globals, index, server_cs.clone());
    }
    for index in [
        keys::COLLATION_CONNECTION.index(),
        keys::COLLATION_DATABASE.index(),
    ] {
        store_derived(globals, index, server_coll.clone());
    }

    // 2. Buffer pool instances.
    let pool_size = globals.get(keys::INNODB_BUFFER_POOL_SIZE);
    let instances_key = keys::INNODB_BUFFER_POOL_INSTANCES;
    let small_pool = pool_size < 1 << 30;
    if !is_explicit(globals, instances_key) {
        let auto = if small_pool { 1 } else { 8 };
        store_derived(globals, instances_key.index(), SysValue::UInt(auto));
    } else if small_pool && globals.get(instances_key) > 1 {
        warnings.push(adjusted(
            globals,
            instances_key.index(),
            globals.get(instances_key).to_string(),
            "1".to_string(),
            "innodb_buffer_pool_size is below 1 GiB".to_string(),
        ));
        store_derived(globals, instances_key.index(), SysValue::UInt(1));
    }
    let instances = globals.get(instances_key);

    // 3. Page cleaners.
    let cleaners_key = keys::INNODB_PAGE_CLEANERS;
    let cleaners = globals.get(cleaners_key);
    if cleaners > instances {
        if is_explicit(globals, cleaners_key) {
            warnings.push(adjusted(
                globals,
                cleaners_key.index(),
                cleaners.to_string(),
                instances.to_string(),
                "at most one page cleaner per buffer pool instance".to_string(),
            ));
        }
        store_derived(globals, cleaners_key.index(), SysValue::UInt(instances));
    }

    // 4. io capacity, then every ordered pair.
    let io_max_key = keys::INNODB_IO_CAPACITY_MAX;
    if !is_explicit(globals, io_max_key) {
        let io = globals.get(keys::INNODB_IO_CAPACITY);
        let derived = io.saturating_mul(2).max(2_000);
        store_derived(globals, io_max_key.index(), SysValue::UInt(derived));
    }
    for &(lower, upper) in ORDERED_PAIRS {
        let (lo, up) = (globals.value_at(lower), globals.value_at(upper));
        if let (Some(l), Some(u)) = (lo.as_f64(), up.as_f64()) {
            if l > u {
                warnings.push(adjusted(
                    globals,
                    lower,
                    lo.to_string(),
                    up.to_string(),
                    format!("cannot be higher than {}", registry()[upper].name),
                ));
                store_derived(globals, lower, up);
            }
        }
    }

    // 5. Paths.
    let datadir = absolute(&env.working_dir, &globals.get(keys::DATADIR));
    store_derived(
        globals,
        keys::DATADIR.index(),
        SysValue::Str(datadir.display().to_string()),
    );
    let pid_file = absolute(&datadir, &globals.get(keys::PID_FILE));
    store_derived(
        globals,
        keys::PID_FILE.index(),
        SysValue::Str(pid_file.display().to_string()),
    );
    let log_error = globals.get(keys::LOG_ERROR);
    if log_error != "stderr" {
        let log_error = absolute(&datadir, &log_error);
        store_derived(
            globals,
            keys::LOG_ERROR.index(),
            SysValue::Str(log_error.display().to_string()),
        );
    }
    if !is_explicit(globals, keys::TMPDIR) {
        if let Some(tmp) = &env.tmpdir {
            store_derived(
                globals,
                keys::TMPDIR.index(),
                SysValue::Str(tmp.display().to_string()),
            );
        }
    }

    // 6. The machine.
    store_derived(
        globals,
        keys::HOSTNAME.index(),
        SysValue::Str(env.hostname.clone()),
    );
    store_derived(
        globals,
        keys::SYSTEM_TIME_ZONE.index(),
        SysValue::Str(env.system_time_zone.clone()),
    );
    Ok(())
}
