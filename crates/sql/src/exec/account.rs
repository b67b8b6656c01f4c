//! Account statements: `CREATE/DROP/ALTER/RENAME USER`, `SET PASSWORD`,
//! `GRANT`, `REVOKE`.
//!
//! Privileges needed, as MySQL:
//! * `CREATE USER`, `DROP USER`, `RENAME USER`, and `ALTER USER` of
//!   another account: the global `CREATE USER` privilege (1227). Changing
//!   one's own password (`ALTER USER CURRENT_USER() IDENTIFIED BY`,
//!   `SET PASSWORD = '...'`) needs nothing.
//! * `GRANT`/`REVOKE`: `GRANT OPTION` at the level (or above) plus every
//!   privilege being granted, at that level or above. Failing that: 1045
//!   at global level, 1044 at schema level, 1142 at table level.
//!
//! Each statement is one change of the privilege tables (persisted as one
//! batch): it applies to every named account or to none.

use basalt_config::keys;
use basalt_protocol::AuthPlugin;

use super::{implicit_commit, Outcome};
use crate::acl::{
    hash_password, plugin_by_name, stored_from_text, AccountRecord, GrantScope, Level, Privileges,
};
use crate::error::{SqlError, SqlResult};
use crate::parse::{AuthSpec, GrantLevel, UserSpec};
use crate::session::Session;

fn require_create_user(session: &Session) -> SqlResult<()> {
    session
        .server
        .acl
        .check_global_any(&session.security, Privileges::CREATE_USER, "CREATE USER")
}

fn named(session: &Session, u: &UserSpec) -> (String, String) {
    match u {
        UserSpec::Named { user, host } => (user.clone(), host.clone()),
        UserSpec::Current => (
            session.security.priv_user.clone(),
            session.security.priv_host.clone(),
        ),
    }
}

fn default_plugin(session: &Session) -> SqlResult<AuthPlugin> {
    plugin_by_name(
        session
            .server
            .globals
            .get(keys::DEFAULT_AUTHENTICATION_PLUGIN),
    )
}

/// Plugin and stored string for an `IDENTIFIED ...` clause.
fn auth_of(
    session: &Session,
    spec: Option<&AuthSpec>,
    keep: Option<AuthPlugin>,
) -> SqlResult<(AuthPlugin, Vec<u8>)> {
    let Some(spec) = spec else {
        return Ok((default_plugin(session)?, Vec::new()));
    };
    let plugin = match &spec.plugin {
        Some(name) => plugin_by_name(name)?,
        None => match keep {
            Some(p) => p,
            None => default_plugin(session)?,
        },
    };
    let stored = match (&spec.password, &spec.hashed) {
        (Some(pw), _) => hash_password(plugin, pw),
        (None, Some(h)) => stored_from_text(plugin, h)?,
        (None, None) => Vec::new(),
    };
    Ok((plugin, stored))
}

/// `CREATE USER`.
pub fn create_user(
    session: &mut Session,
    if_not_exists: bool,
    users: &[(UserSpec, Option<AuthSpec>)],
) -> SqlResult<Outcome> {
    require_create_user(session)?;
    implicit_commit(session);
    let mut records = Vec::with_capacity(users.len());
    for (u, a) in users {
        let (user, host) = named(session, u);
        let (plugin, auth_string) = auth_of(session, a.as_ref(), None)?;
        records.push(AccountRecord {
            user,
            host,
            plugin,
            auth_string,
            privileges: Privileges::NONE,
        });
    }
    let mut warnings = Vec::new();
    let server = session.server.clone();
    let r = server
        .acl
        .create_users(records, if_not_exists, &mut warnings);
    for w in warnings {
        session.warn(w);
    }
    r.map(|()| Outcome::ok())
}

/// `DROP USER`.
pub fn drop_user(session: &mut Session, if_exists: bool, users: &[UserSpec]) -> SqlResult<Outcome> {
    require_create_user(session)?;
    implicit_commit(session);
    let list: Vec<(String, String)> = users.iter().map(|u| named(session, u)).collect();
    let mut warnings = Vec::new();
    let server = session.server.clone();
    let r = server.acl.drop_users(&list, if_exists, &mut warnings);
    for w in warnings {
        session.warn(w);
    }
    r.map(|()| Outcome::ok())
}

/// `ALTER USER ... [IDENTIFIED ...]`.
pub fn alter_user(
    session: &mut Session,
    if_exists: bool,
    users: &[(UserSpec, Option<AuthSpec>)],
) -> SqlResult<Outcome> {
    let only_self = users.iter().all(|(u, _)| {
        let (user, host) = named(session, u);
        user == session.security.priv_user && host == session.security.priv_host
    });
    if !only_self {
        require_create_user(session)?;
    }
    implicit_commit(session);
    let mut updates = Vec::with_capacity(users.len());
    for (u, a) in users {
        let (user, host) = named(session, u);
        let current = session.server.acl.account(&user, &host);
        let auth = match a {
            Some(spec) => Some(auth_of(
                session,
                Some(spec),
                current.as_ref().map(|c| c.plugin),
            )?),
            None => None,
        };
        updates.push((user, host, auth));
    }
    let missing = if if_exists {
        None
    } else {
        Some(SqlError::AccountOperationFailed {
            operation: "ALTER USER",
            accounts: String::new(),
        })
    };
    let mut warnings = Vec::new();
    let server = session.server.clone();
    let r = server.acl.set_auth(updates, missing, &mut warnings);
    for w in warnings {
        session.warn(w);
    }
    r.map(|()| Outcome::ok())
}

/// `RENAME USER a TO b, ...`.
pub fn rename_user(session: &mut Session, pairs: &[(UserSpec, UserSpec)]) -> SqlResult<Outcome> {
    require_create_user(session)?;
    implicit_commit(session);
    let list: Vec<((String, String), (String, String))> = pairs
        .iter()
        .map(|(a, b)| (named(session, a), named(session, b)))
        .collect();
    session.server.acl.rename_users(&list)?;
    Ok(Outcome::ok())
}

/// `SET PASSWORD [FOR user] = 'x'`.
pub fn set_password(
    session: &mut Session,
    user: Option<&UserSpec>,
    password: &str,
) -> SqlResult<Outcome> {
    let (u, h) = match user {
        Some(spec) => named(session, spec),
        None => named(session, &UserSpec::Current),
    };
    let own = u == session.security.priv_user && h == session.security.priv_host;
    if !own && !session.has_global(Privileges::CREATE_USER) {
        return Err(SqlError::DbAccessDenied {
            user: session.security.priv_user.clone(),
            host: session.security.priv_host.clone(),
            db: "mysql".into(),
        });
    }
    implicit_commit(session);
    let account = session
        .server
        .acl
        .account(&u, &h)
        .ok_or(SqlError::NoMatchingUser)?;
    let stored = hash_password(account.plugin, password);
    let mut warnings = Vec::new();
    let server = session.server.clone();
    server.acl.set_auth(
        vec![(u, h, Some((account.plugin, stored)))],
        Some(SqlError::NoMatchingUser),
        &mut warnings,
    )?;
    Ok(Outcome::ok())
}

/// Resolves `db.*` / `tbl` / `*` against the current schema.
fn resolve_level(session: &Session, level: &GrantLevel) -> SqlResult<Level> {
    let current = || session.facts.db.clone().ok_or(SqlError::NoDatabaseSelected);
    Ok(match level {
        GrantLevel::Global => Level::Global,
        GrantLevel::Database(Some(db)) => Level::Database(db.clone()),
        GrantLevel::Database(None) => Level::Database(current()?),
        GrantLevel::Table(Some(db), t) => Level::Table(db.clone(), t.clone()),
        GrantLevel::Table(None, t) => Level::Table(current()?, t.clone()),
    })
}

/// The privilege set a `GRANT`/`REVOKE` list names at `level`.
fn privileges_of(names: &[String], level: &Level) -> SqlResult<Privileges> {
    let scope = level.scope();
    let mut p = Privileges::NONE;
    for name in names {
        if name == "ALL" {
            p |= Privileges::all_at(scope);
            continue;
        }
        let bits = Privileges::from_name(name).ok_or_else(|| SqlError::Syntax {
            near: name.clone(),
            line: 1,
        })?;
        if !Privileges::grantable_at(scope).contains(bits) {
            return Err(match scope {
                GrantScope::Table => SqlError::IllegalGrant,
                _ => SqlError::WrongGrantLevel,
            });
        }
        p |= bits;
    }
    Ok(p)
}

/// Checks that the session may grant (or revoke) `p` at `level`.
fn check_grantor(session: &Session, level: &Level, p: Privileges) -> SqlResult<()> {
    let acl = &session.server.acl;
    let ctx = &session.security;
    let have = match level {
        Level::Global => acl.global_privileges(ctx),
        Level::Database(db) => acl.db_privileges(ctx, db),
        Level::Table(db, t) => acl.table_privileges(ctx, db, t),
    };
    if have.contains(Privileges::GRANT_OPTION) && have.contains(p.without(Privileges::GRANT_OPTION))
    {
        return Ok(());
    }
    Err(match level {
        Level::Global => SqlError::AccessDenied {
            user: ctx.priv_user.clone(),
            host: ctx.priv_host.clone(),
            using_password: true,
        },
        Level::Database(db) => SqlError::DbAccessDenied {
            user: ctx.priv_user.clone(),
            host: ctx.priv_host.clone(),
            db: db.clone(),
        },
        Level::Table(_, t) => SqlError::TableAccessDenied {
            command: "GRANT",
            user: ctx.priv_user.clone(),
            host: ctx.priv_host.clone(),
            table: t.clone(),
        },
    })
}

/// `GRANT privileges ON level TO users [WITH GRANT OPTION]`.
pub fn grant(
    session: &mut Session,
    names: &[String],
    level: &GrantLevel,
    users: &[UserSpec],
    grant_option: bool,
) -> SqlResult<Outcome> {
    let level = resolve_level(session, level)?;
    let mut p = privileges_of(names, &level)?;
    if grant_option {
        p |= Privileges::GRANT_OPTION;
    }
    check_grantor(session, &level, p)?;
    implicit_commit(session);
    let list: Vec<(String, String)> = users.iter().map(|u| named(session, u)).collect();
    session.server.acl.grant(&list, &level, p)?;
    Ok(Outcome::ok())
}

/// `REVOKE privileges ON level FROM users` and
/// `REVOKE ALL PRIVILEGES, GRANT OPTION FROM users`.
pub fn revoke(
    session: &mut Session,
    names: &[String],
    level: &GrantLevel,
    users: &[UserSpec],
) -> SqlResult<Outcome> {
    let list: Vec<(String, String)> = users.iter().map(|u| named(session, u)).collect();
    let everything = names.len() == 2
        && names[0] == "ALL"
        && names[1] == "GRANT OPTION"
        && *level == GrantLevel::Global;
    if everything {
        require_create_user(session)?;
        implicit_commit(session);
        session.server.acl.revoke_all(&list)?;
        return Ok(Outcome::ok());
    }
    let level = resolve_level(session, level)?;
    let p = privileges_of(names, &level)?;
    check_grantor(session, &level, p)?;
    implicit_commit(session);
    session.server.acl.revoke(&list, &level, p)?;
    Ok(Outcome::ok())
}
