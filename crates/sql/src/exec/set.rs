//! `SET`: system variables (with scope), user variables, `NAMES`,
//! `CHARACTER SET`, `TRANSACTION`.
//!
//! Order of checks for a system variable, as MySQL: unknown name (1193),
//! then the registry's scope and mutability rules (1238, 1229, 1228,
//! 1621), then `SET GLOBAL` needs `SUPER` or `SYSTEM_VARIABLES_ADMIN`
//! (1227), then the value (1231, 1232, ...). Several assignments in one
//! `SET` are applied in order; a failing one stops the statement (the
//! earlier ones stay, as in MySQL).

use basalt_config::{keys, lookup, Assignment, ConfigError, Qualifier, Scope as VarScope};

use super::{implicit_commit, Outcome};
use crate::acl::Privileges;
use crate::error::{SqlError, SqlResult, Warning};
use crate::expr::bind::charset_default_collation;
use crate::expr::{eval, Binder};
use crate::parse::{Scope, SetTarget, SetValue, TxScope};
use crate::session::Session;
use crate::value::convert::to_bytes;
use crate::value::{Collation, SqlType, Value};

const GLOBAL_PRIVS: &str = "SUPER or SYSTEM_VARIABLES_ADMIN";

fn qualifier(scope: Scope) -> Qualifier {
    match scope {
        Scope::Implicit => Qualifier::Implicit,
        Scope::Session => Qualifier::Session,
        Scope::Global => Qualifier::Global,
    }
}

fn assignment_of(v: Value) -> Assignment {
    match v {
        Value::Null => Assignment::Null,
        Value::Int(i) => Assignment::Int(i),
        Value::UInt(u) => match i64::try_from(u) {
            Ok(i) => Assignment::Int(i),
            Err(_) => Assignment::UInt(u),
        },
        Value::Decimal(d) => Assignment::Float(d.to_f64()),
        Value::Double(f) => Assignment::Float(f),
        other => Assignment::Str(String::from_utf8_lossy(&to_bytes(&other)).into_owned()),
    }
}

fn check_global(session: &Session) -> SqlResult<()> {
    session.server.acl.check_global_any(
        &session.security,
        Privileges::SUPER | Privileges::SYSTEM_VARIABLES_ADMIN,
        GLOBAL_PRIVS,
    )
}

/// Sets one system variable with MySQL's check order and side effects.
pub fn set_system(
    session: &mut Session,
    q: Qualifier,
    name: &str,
    value: &Assignment,
) -> SqlResult<()> {
    let lower = name.to_ascii_lowercase();
    if matches!(lower.as_str(), "warning_count" | "error_count") {
        return Err(ConfigError::ReadOnly { name: lower }.into());
    }
    let def = lookup(name).ok_or_else(|| ConfigError::UnknownSystemVariable {
        name: name.to_string(),
    })?;
    let global = q == Qualifier::Global;
    if global {
        if !def.dynamic {
            return Err(ConfigError::ReadOnly {
                name: def.name.to_string(),
            }
            .into());
        }
        if def.scope == VarScope::Session {
            return Err(ConfigError::SessionOnly {
                name: def.name.to_string(),
            }
            .into());
        }
        check_global(session)?;
    }
    if def.name == "autocommit" && !global {
        // Turning autocommit on commits the open transaction.
        let on = matches!(value, Assignment::Int(1))
            || matches!(value, Assignment::Str(s) if s.eq_ignore_ascii_case("ON") || s == "1");
        if on {
            implicit_commit(session);
        }
    }
    let outcome = session.vars.set(q, name, value)?;
    for w in outcome.warnings {
        session.warn(Warning::warn(w.code(), w.to_string()));
    }
    if !global && def.name == "last_insert_id" {
        session.facts.last_insert_id = session.vars.get(keys::LAST_INSERT_ID);
    }
    Ok(())
}

/// `SET a = 1, @b = 2, GLOBAL c = 3`.
pub fn set(
    session: &mut Session,
    items: &[(SetTarget, SetValue)],
    params: Option<&[(Value, SqlType)]>,
) -> SqlResult<Outcome> {
    for (target, value) in items {
        let evaluated = match value {
            SetValue::Expr(e) => {
                let bound = {
                    let ctx = session.plain_bind(params);
                    Binder::new(ctx).bind(e)?
                };
                let clock = session.clock();
                let mut cx = session.eval_context(clock, &[]);
                let v = eval(&bound, &mut cx)?;
                Some((v, bound.ty))
            }
            _ => None,
        };
        match target {
            SetTarget::User(name) => {
                let (v, ty) = match (value, evaluated) {
                    (_, Some(x)) => x,
                    (SetValue::Word(w), None) => {
                        return Err(SqlError::UnknownColumn {
                            column: w.clone(),
                            context: "field list",
                        })
                    }
                    _ => {
                        return Err(SqlError::Syntax {
                            near: "DEFAULT".into(),
                            line: 1,
                        })
                    }
                };
                let ty = if v.is_null() { SqlType::null() } else { ty };
                session.user_vars.insert(name.to_ascii_lowercase(), (v, ty));
            }
            SetTarget::System { scope, name } => {
                let assignment = match (value, evaluated) {
                    (SetValue::Default, _) => Assignment::Default,
                    (SetValue::Word(w), _) => Assignment::Str(w.clone()),
                    (_, Some((v, _))) => assignment_of(v),
                    _ => Assignment::Default,
                };
                set_system(session, qualifier(*scope), name, &assignment)?;
            }
        }
    }
    Ok(Outcome::ok())
}

fn session_set(session: &mut Session, name: &str, value: &str) -> SqlResult<()> {
    set_system(
        session,
        Qualifier::Session,
        name,
        &Assignment::Str(value.to_string()),
    )
}

/// `SET NAMES cs [COLLATE c]` / `SET NAMES DEFAULT`.
pub fn set_names(
    session: &mut Session,
    charset: Option<&str>,
    collation: Option<&str>,
) -> SqlResult<Outcome> {
    let (charset, coll) = match charset {
        None => {
            let cs = session.vars.get(keys::CHARACTER_SET_SERVER);
            let coll = charset_default_collation(&cs)?;
            (cs, coll)
        }
        Some(cs) => {
            let default = charset_default_collation(cs)?;
            let coll = match collation {
                Some(c) => {
                    let c = Collation::by_name(c)
                        .ok_or_else(|| SqlError::UnknownCollation(c.to_string()))?;
                    if c.charset != default.charset {
                        return Err(SqlError::CollationCharsetMismatch {
                            collation: c.name.to_string(),
                            charset: cs.to_string(),
                        });
                    }
                    c
                }
                None => default,
            };
            (default.charset.to_string(), coll)
        }
    };
    session_set(session, "character_set_client", &charset)?;
    session_set(session, "character_set_results", &charset)?;
    session_set(session, "collation_connection", coll.name)?;
    Ok(Outcome::ok())
}

/// `SET CHARACTER SET cs` / `DEFAULT`.
pub fn set_character_set(session: &mut Session, charset: Option<&str>) -> SqlResult<Outcome> {
    let cs = match charset {
        Some(cs) => charset_default_collation(cs)?.charset.to_string(),
        None => session.vars.get(keys::CHARACTER_SET_SERVER),
    };
    session_set(session, "character_set_client", &cs)?;
    session_set(session, "character_set_results", &cs)?;
    let db_coll = session.vars.get(keys::COLLATION_DATABASE);
    session_set(session, "collation_connection", &db_coll)?;
    Ok(Outcome::ok())
}

/// `SET [GLOBAL|SESSION] TRANSACTION ISOLATION LEVEL ... , READ ONLY|WRITE`.
pub fn set_transaction(
    session: &mut Session,
    scope: TxScope,
    isolation: Option<&'static str>,
    read_only: Option<bool>,
) -> SqlResult<Outcome> {
    match scope {
        TxScope::Next => session.txn.set_next(isolation, read_only)?,
        TxScope::Session | TxScope::Global => {
            let q = if scope == TxScope::Global {
                Qualifier::Global
            } else {
                Qualifier::Session
            };
            if let Some(level) = isolation {
                set_system(
                    session,
                    q,
                    "transaction_isolation",
                    &Assignment::Str(level.to_string()),
                )?;
            }
            if let Some(ro) = read_only {
                set_system(
                    session,
                    q,
                    "transaction_read_only",
                    &Assignment::Int(i64::from(ro)),
                )?;
            }
        }
    }
    Ok(Outcome::ok())
}
