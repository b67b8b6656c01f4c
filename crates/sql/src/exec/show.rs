//! `SHOW` statements.
//!
//! Each `SHOW` builds its rows as a small virtual table (named, typed
//! columns); `LIKE 'pattern'` filters on the first column, `WHERE expr`
//! is bound against the columns and evaluated per row, the way the
//! planner will treat `information_schema` tables later.

use basalt_config::{keys, Qualifier};

use super::Outcome;
use crate::acl::{self, privilege::privilege_rows, Privileges};
use crate::error::{Level, SqlError, SqlResult};
use crate::expr::{eval, Binder};
use crate::parse::{Filter, Scope, Show, UserSpec};
use crate::server::COUNTERS;
use crate::session::Session;
use crate::value::convert::is_true;
use crate::value::{Collation, SqlType, Value};
use basalt_common::like::like_match;

fn text_col(name: &str, len: u32) -> (String, SqlType) {
    (name.to_string(), SqlType::string(len, Collation::DEFAULT))
}

fn null_text_col(name: &str, len: u32) -> (String, SqlType) {
    (
        name.to_string(),
        SqlType::string(len, Collation::DEFAULT).with_nullable(true),
    )
}

fn int_col(name: &str, len: u32) -> (String, SqlType) {
    (name.to_string(), SqlType::int(len))
}

fn uint_col(name: &str, len: u32) -> (String, SqlType) {
    (name.to_string(), SqlType::uint(len))
}

fn t(s: impl Into<String>) -> Value {
    Value::text(s)
}

fn filter_rows(
    session: &mut Session,
    columns: &[(String, SqlType)],
    rows: Vec<Vec<Value>>,
    filter: &Filter,
    params: Option<&[(Value, SqlType)]>,
) -> SqlResult<Vec<Vec<Value>>> {
    match filter {
        Filter::None => Ok(rows),
        Filter::Like(p) => Ok(rows
            .into_iter()
            .filter(|r| match &r[0] {
                Value::Str(b) => like_match(p, &String::from_utf8_lossy(b), true),
                _ => false,
            })
            .collect()),
        Filter::Where(e) => {
            let bound = {
                let ctx = session.bind_context(params, columns);
                Binder::new(ctx).bind(e)?
            };
            let clock = session.clock();
            let mut out = Vec::new();
            for row in rows {
                let keep = {
                    let mut cx = session.eval_context(clock, &row);
                    let v = eval(&bound, &mut cx)?;
                    !v.is_null() && is_true(&v, cx.warnings)
                };
                if keep {
                    out.push(row);
                }
            }
            Ok(out)
        }
    }
}

fn rows(columns: Vec<(String, SqlType)>, rows: Vec<Vec<Value>>) -> Outcome {
    Outcome::Rows { columns, rows }
}

/// Runs a `SHOW`.
pub fn show(
    session: &mut Session,
    s: &Show,
    params: Option<&[(Value, SqlType)]>,
) -> SqlResult<Outcome> {
    match s {
        Show::Variables(scope, filter) => {
            let q = match scope {
                Scope::Global => Qualifier::Global,
                _ => Qualifier::Session,
            };
            let like = match filter {
                Filter::Like(p) => Some(p.as_str()),
                _ => None,
            };
            let cols = vec![text_col("Variable_name", 64), text_col("Value", 1024)];
            let data: Vec<Vec<Value>> = session
                .vars
                .show(q, like)
                .into_iter()
                .map(|r| vec![t(r.name), t(r.value)])
                .collect();
            let data = match filter {
                Filter::Like(_) => data,
                other => filter_rows(session, &cols, data, other, params)?,
            };
            Ok(rows(cols, data))
        }
        Show::Status(scope, filter) => {
            let cols = vec![text_col("Variable_name", 64), text_col("Value", 1024)];
            let data = status_rows(session, *scope == Scope::Global);
            let data = filter_rows(session, &cols, data, filter, params)?;
            Ok(rows(cols, data))
        }
        Show::ProcessList { full } => process_list(session, *full),
        Show::Databases(filter) => {
            let cols = vec![text_col("Database", 64)];
            let see_all = session.has_global(Privileges::SHOW_DATABASES);
            let data: Vec<Vec<Value>> = session
                .server
                .acl
                .schemata()
                .into_iter()
                .filter(|s| see_all || session.server.acl.has_db_access(&session.security, &s.name))
                .map(|s| vec![t(s.name)])
                .collect();
            let data = filter_rows(session, &cols, data, filter, params)?;
            Ok(rows(cols, data))
        }
        Show::Tables { full, db, filter } => {
            let db = match db.clone().or_else(|| session.facts.db.clone()) {
                Some(d) => d,
                None => return Err(SqlError::NoDatabaseSelected),
            };
            session.server.acl.check_db_access(&session.security, &db)?;
            if session.server.acl.schema(&db).is_none() {
                return Err(SqlError::UnknownDatabase(db));
            }
            let mut cols = vec![text_col(&format!("Tables_in_{db}"), 64)];
            if *full {
                cols.push(text_col("Table_type", 64));
            }
            // No table exists until the engine's table API lands.
            let data = filter_rows(session, &cols, Vec::new(), filter, params)?;
            Ok(rows(cols, data))
        }
        Show::Grants(user) => {
            let (u, h) = resolve_user(session, user.as_ref());
            let own = u == session.security.priv_user && h == session.security.priv_host;
            if !own && !session.has_global(Privileges::CREATE_USER) {
                return Err(SqlError::DbAccessDenied {
                    user: session.security.priv_user.clone(),
                    host: session.security.priv_host.clone(),
                    db: "mysql".into(),
                });
            }
            let snap = session.server.acl.snapshot();
            let lines = acl::show_grants(&snap, &u, &h).ok_or_else(|| SqlError::NoSuchGrant {
                user: u.clone(),
                host: h.clone(),
            })?;
            let cols = vec![text_col(&format!("Grants for {u}@{h}"), 1024)];
            Ok(rows(cols, lines.into_iter().map(|l| vec![t(l)]).collect()))
        }
        Show::CreateUser(user) => {
            let (u, h) = resolve_user(session, Some(user));
            let own = u == session.security.priv_user && h == session.security.priv_host;
            if !own && !session.has_global(Privileges::CREATE_USER) {
                return Err(SqlError::DbAccessDenied {
                    user: session.security.priv_user.clone(),
                    host: session.security.priv_host.clone(),
                    db: "mysql".into(),
                });
            }
            let account = session.server.acl.account(&u, &h).ok_or_else(|| {
                SqlError::AccountOperationFailed {
                    operation: "SHOW CREATE USER",
                    accounts: acl::account_text(&u, &h),
                }
            })?;
            let cols = vec![text_col(&format!("CREATE USER for {u}@{h}"), 1024)];
            Ok(rows(cols, vec![vec![t(acl::show_create_user(&account))]]))
        }
        Show::CreateDatabase {
            name,
            if_not_exists,
        } => {
            session
                .server
                .acl
                .check_db_access(&session.security, name)?;
            let schema = session
                .server
                .acl
                .schema(name)
                .ok_or_else(|| SqlError::UnknownDatabase(name.clone()))?;
            let text = format!(
                "CREATE DATABASE {}{} /*!40100 DEFAULT CHARACTER SET {} COLLATE {} */ /*!80016 DEFAULT ENCRYPTION='N' */",
                if *if_not_exists { "/*!32312 IF NOT EXISTS*/ " } else { "" },
                quote_for_show_create(session, &schema.name),
                schema.charset,
                schema.collation
            );
            let cols = vec![text_col("Database", 64), text_col("Create Database", 1024)];
            Ok(rows(cols, vec![vec![t(schema.name), t(text)]]))
        }
        Show::Warnings { errors_only, limit } => {
            let cols = vec![
                text_col("Level", 7),
                uint_col("Code", 4),
                text_col("Message", 512),
            ];
            let mut data: Vec<Vec<Value>> = session
                .warnings
                .iter()
                .filter(|w| !errors_only || w.level == Level::Error)
                .map(|w| {
                    vec![
                        t(w.level.name()),
                        Value::UInt(u64::from(w.code)),
                        t(w.message.clone()),
                    ]
                })
                .collect();
            if let Some((offset, count)) = limit {
                data = data
                    .into_iter()
                    .skip(*offset as usize)
                    .take(*count as usize)
                    .collect();
            }
            Ok(rows(cols, data))
        }
        Show::WarningCount { errors_only } => {
            let n = if *errors_only {
                session
                    .warnings
                    .iter()
                    .filter(|w| w.level == Level::Error)
                    .count()
            } else {
                session.warnings.len()
            };
            let name = if *errors_only {
                "@@session.error_count"
            } else {
                "@@session.warning_count"
            };
            Ok(rows(
                vec![uint_col(name, 21)],
                vec![vec![Value::UInt(n as u64)]],
            ))
        }
        Show::Engines => {
            let cols = vec![
                text_col("Engine", 64),
                text_col("Support", 8),
                text_col("Comment", 80),
                null_text_col("Transactions", 3),
                null_text_col("XA", 3),
                null_text_col("Savepoints", 3),
            ];
            Ok(rows(
                cols,
                vec![vec![
                    t("InnoDB"),
                    t("DEFAULT"),
                    t("Supports transactions, row-level locking, and foreign keys"),
                    t("YES"),
                    t("NO"),
                    t("YES"),
                ]],
            ))
        }
        Show::Charsets(filter) => {
            let cols = vec![
                text_col("Charset", 64),
                text_col("Description", 2048),
                text_col("Default collation", 64),
                uint_col("Maxlen", 3),
            ];
            let data: Vec<Vec<Value>> = basalt_config::sysvar::charset::CHARSETS
                .iter()
                .map(|c| {
                    vec![
                        t(c.name),
                        t(charset_description(c.name)),
                        t(c.default_collation),
                        Value::UInt(u64::from(c.max_len)),
                    ]
                })
                .collect();
            let data = filter_rows(session, &cols, data, filter, params)?;
            Ok(rows(cols, data))
        }
        Show::Collations(filter) => {
            let cols = vec![
                text_col("Collation", 64),
                text_col("Charset", 64),
                uint_col("Id", 20),
                text_col("Default", 3),
                text_col("Compiled", 3),
                uint_col("Sortlen", 10),
                text_col("Pad_attribute", 9),
            ];
            let data: Vec<Vec<Value>> = basalt_config::sysvar::charset::COLLATIONS
                .iter()
                .map(|c| {
                    let default = basalt_config::sysvar::charset::default_collation_of(c.charset)
                        .is_some_and(|d| d.name == c.name);
                    let pad = if c.name.contains("_0900_") || c.name == "binary" {
                        "NO PAD"
                    } else {
                        "PAD SPACE"
                    };
                    vec![
                        t(c.name),
                        t(c.charset),
                        Value::UInt(u64::from(c.id)),
                        t(if default { "Yes" } else { "" }),
                        t("Yes"),
                        Value::UInt(if c.name.contains("_0900_") { 0 } else { 1 }),
                        t(pad),
                    ]
                })
                .collect();
            let data = filter_rows(session, &cols, data, filter, params)?;
            Ok(rows(cols, data))
        }
        Show::Privileges => {
            let cols = vec![
                text_col("Privilege", 64),
                text_col("Context", 64),
                text_col("Comment", 64),
            ];
            let data = privilege_rows()
                .into_iter()
                .map(|(n, c, d)| vec![t(n), t(c), t(d)])
                .collect();
            Ok(rows(cols, data))
        }
    }
}

fn charset_description(name: &str) -> &'static str {
    match name {
        "ascii" => "US ASCII",
        "binary" => "Binary pseudo charset",
        "latin1" => "cp1252 West European",
        "utf8mb3" => "UTF-8 Unicode",
        "utf8mb4" => "UTF-8 Unicode",
        _ => "",
    }
}

/// The account a `FOR user` clause names (`CURRENT_USER` or absent: the
/// session's own account).
pub fn resolve_user(session: &Session, user: Option<&UserSpec>) -> (String, String) {
    match user {
        Some(UserSpec::Named { user, host }) => (user.clone(), host.clone()),
        _ => (
            session.security.priv_user.clone(),
            session.security.priv_host.clone(),
        ),
    }
}

fn status_rows(session: &Session, global: bool) -> Vec<Vec<Value>> {
    let status = &session.server.status;
    let list = session.process_list.snapshot();
    let running = list.iter().filter(|p| p.command != "Sleep").count() as u64;
    let mut out: Vec<(String, u64)> = COUNTERS
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let v = if global {
                status.get(i)
            } else {
                session.counter(name)
            };
            (name.to_string(), v)
        })
        .collect();
    use std::sync::atomic::Ordering::Relaxed;
    out.push(("Connections".into(), status.connections.load(Relaxed)));
    out.push((
        "Max_used_connections".into(),
        status.max_used_connections.load(Relaxed),
    ));
    out.push(("Threads_connected".into(), list.len() as u64));
    out.push(("Threads_running".into(), running));
    out.push(("Uptime".into(), session.server.uptime_secs()));
    out.sort_by_key(|a| a.0.to_ascii_lowercase());
    out.into_iter()
        .map(|(n, v)| vec![t(n), t(v.to_string())])
        .collect()
}

fn process_list(session: &Session, full: bool) -> SqlResult<Outcome> {
    let see_all = session.has_global(Privileges::PROCESS);
    let cols = vec![
        uint_col("Id", 21),
        text_col("User", 32),
        text_col("Host", 261),
        null_text_col("db", 64),
        text_col("Command", 16),
        int_col("Time", 7),
        null_text_col("State", 30),
        null_text_col("Info", if full { 65535 } else { 100 }),
    ];
    let data = session
        .process_list
        .snapshot()
        .into_iter()
        .filter(|p| see_all || p.user == session.security.user)
        .map(|p| {
            let info = p.info.map(|i| {
                if full {
                    i
                } else {
                    i.chars().take(100).collect()
                }
            });
            let opt = |s: Option<String>| s.map_or(Value::Null, Value::text);
            vec![
                Value::UInt(u64::from(p.id)),
                t(p.user),
                t(p.host),
                opt(p.db),
                t(p.command),
                Value::Int(p.time.as_secs() as i64),
                if p.state.is_empty() {
                    Value::Null
                } else {
                    t(p.state)
                },
                opt(info),
            ]
        })
        .collect();
    Ok(rows(cols, data))
}

/// An identifier in `SHOW CREATE` output: always backtick-quoted with
/// `sql_quote_show_create` ON (the default), and with it OFF only when it
/// needs quoting (a keyword, a character outside `[A-Za-z0-9_$]`, or all
/// digits), as MySQL does.
fn quote_for_show_create(session: &Session, name: &str) -> String {
    let plain = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
        && !name.bytes().all(|b| b.is_ascii_digit())
        && sqlparser::keywords::ALL_KEYWORDS
            .binary_search(&name.to_ascii_uppercase().as_str())
            .is_err();
    if plain && !session.vars.get(keys::SQL_QUOTE_SHOW_CREATE) {
        name.to_string()
    } else {
        acl::quote_ident(name)
    }
}
