//! Administrative statements: schemas, `KILL`, `FLUSH`, transactions,
//! SQL-level `PREPARE`, and statements on tables.

use basalt_config::keys;
use basalt_protocol::KillMode;

use super::{implicit_commit, select, Outcome};
use crate::acl::{Privileges, SchemaRecord};
use crate::error::{SqlError, SqlResult, Warning};
use crate::expr::bind::charset_default_collation;
use crate::parse::{KillKind, PrepareSource, TableRef};
use crate::session::Session;
use crate::value::convert::to_bytes;
use crate::value::{Collation, SqlType, Value};

/// Longest schema or table name MySQL accepts.
pub const NAME_LEN: usize = 64;

fn check_schema_name(name: &str) -> SqlResult<()> {
    if name.chars().count() > NAME_LEN {
        return Err(SqlError::IdentifierTooLong(name.to_string()));
    }
    if name.is_empty()
        || name.ends_with(' ')
        || name.contains(['/', '\\', '.'])
        || name.contains('\0')
    {
        return Err(SqlError::WrongDatabaseName(name.to_string()));
    }
    Ok(())
}

fn db_denied(session: &Session, db: &str) -> SqlError {
    SqlError::DbAccessDenied {
        user: session.security.priv_user.clone(),
        host: session.security.priv_host.clone(),
        db: db.to_string(),
    }
}

/// `CREATE DATABASE [IF NOT EXISTS] name [CHARACTER SET cs] [COLLATE c]`.
pub fn create_database(
    session: &mut Session,
    name: &str,
    if_not_exists: bool,
    charset: Option<&str>,
    collation: Option<&str>,
) -> SqlResult<Outcome> {
    check_schema_name(name)?;
    if !session
        .server
        .acl
        .db_privileges(&session.security, name)
        .contains(Privileges::CREATE)
    {
        return Err(db_denied(session, name));
    }
    let coll = match (charset, collation) {
        (_, Some(c)) => {
            let coll =
                Collation::by_name(c).ok_or_else(|| SqlError::UnknownCollation(c.to_string()))?;
            if let Some(cs) = charset {
                let cs_default = charset_default_collation(cs)?;
                if cs_default.charset != coll.charset {
                    return Err(SqlError::CollationCharsetMismatch {
                        collation: coll.name.to_string(),
                        charset: cs.to_string(),
                    });
                }
            }
            coll
        }
        (Some(cs), None) => charset_default_collation(cs)?,
        (None, None) => Collation::by_name(&session.vars.get(keys::COLLATION_SERVER))
            .unwrap_or(Collation::DEFAULT),
    };
    implicit_commit(session);
    let created = session.server.acl.create_schema(
        SchemaRecord {
            name: name.to_string(),
            charset: coll.charset.to_string(),
            collation: coll.name.to_string(),
        },
        if_not_exists,
    )?;
    if !created {
        session.warn(Warning::note(
            1007,
            format!("Can't create database '{name}'; database exists"),
        ));
        return Ok(Outcome::ok());
    }
    Ok(Outcome::affected(1))
}

/// `DROP DATABASE [IF EXISTS] name` (a schema holds no tables yet).
pub fn drop_database(session: &mut Session, name: &str, if_exists: bool) -> SqlResult<Outcome> {
    if !session
        .server
        .acl
        .db_privileges(&session.security, name)
        .contains(Privileges::DROP)
    {
        return Err(db_denied(session, name));
    }
    implicit_commit(session);
    let dropped = session.server.acl.drop_schema(name, if_exists)?;
    if !dropped {
        session.warn(Warning::note(
            1008,
            format!("Can't drop database '{name}'; database doesn't exist"),
        ));
        return Ok(Outcome::ok());
    }
    if session.facts.db.as_deref() == Some(name) {
        session.facts.db = None;
    }
    Ok(Outcome::affected(0))
}

/// `KILL [CONNECTION | QUERY] id`.
pub fn kill(
    session: &mut Session,
    kind: KillKind,
    id: &sqlparser::ast::Expr,
    params: Option<&[(Value, SqlType)]>,
) -> SqlResult<Outcome> {
    let n = select::eval_int(session, id, params)?.unwrap_or(0);
    let target_id = u32::try_from(n).map_err(|_| SqlError::NoSuchThread(n.max(0) as u64))?;
    let mode = match kind {
        KillKind::Connection => KillMode::Connection,
        KillKind::Query => KillMode::Query,
    };
    let Some(target) = session.process_list.get(target_id) else {
        return Err(SqlError::NoSuchThread(u64::from(target_id)));
    };
    session.authorize_kill(&target, mode)?;
    if !session.process_list.kill(target_id, mode) {
        return Err(SqlError::NoSuchThread(u64::from(target_id)));
    }
    tracing::info!(by = session.id, target = target_id, ?mode, "KILL");
    if target_id == session.id && mode == KillMode::Connection {
        // Killing oneself: the statement itself is interrupted, as in MySQL.
        return Err(SqlError::Interrupted);
    }
    Ok(Outcome::ok())
}

/// `FLUSH PRIVILEGES | TABLES | STATUS | LOGS | HOSTS`.
pub fn flush(session: &mut Session, what: &str) -> SqlResult<Outcome> {
    session
        .server
        .acl
        .check_global_any(&session.security, Privileges::RELOAD, "RELOAD")?;
    match what {
        // The privilege tables in memory are the tables: nothing to reload.
        "PRIVILEGES" | "TABLES" | "LOGS" | "HOSTS" | "BINARY" | "ENGINE" | "ERROR" | "GENERAL"
        | "SLOW" | "RELAY" | "OPTIMIZER_COSTS" | "USER_RESOURCES" => Ok(Outcome::ok()),
        "STATUS" => {
            session.counters.iter_mut().for_each(|c| *c = 0);
            Ok(Outcome::ok())
        }
        other => Err(SqlError::NotSupportedYet(format!("FLUSH {other}"))),
    }
}

/// `BEGIN` / `START TRANSACTION`.
pub fn begin(session: &mut Session, read_only: Option<bool>) -> SqlResult<Outcome> {
    let isolation = session.vars.get(keys::TRANSACTION_ISOLATION);
    let session_ro = session.vars.get(keys::TRANSACTION_READ_ONLY);
    session.txn.begin(read_only, isolation, session_ro);
    Ok(Outcome::ok())
}

/// `PREPARE name FROM 'text' | @var`.
pub fn prepare(session: &mut Session, name: &str, source: &PrepareSource) -> SqlResult<Outcome> {
    let text = match source {
        PrepareSource::Text(t) => t.clone(),
        PrepareSource::Var(v) => match session.user_vars.get(&v.to_ascii_lowercase()) {
            Some((value, _)) if !value.is_null() => {
                String::from_utf8_lossy(&to_bytes(value)).into_owned()
            }
            _ => "NULL".to_string(),
        },
    };
    session.sql_prepare(name, &text)?;
    Ok(Outcome::Ok {
        affected_rows: 0,
        last_insert_id: 0,
        info: "Statement prepared".into(),
    })
}

fn schema_of(session: &Session, t: &TableRef) -> SqlResult<String> {
    match &t.schema {
        Some(s) => Ok(s.clone()),
        None => session.facts.db.clone().ok_or(SqlError::NoDatabaseSelected),
    }
}

/// A statement on tables: privilege check (1142), then 1146 — no table
/// exists until the engine's table API is connected.
pub fn table_access(
    session: &mut Session,
    privilege: &str,
    tables: &[TableRef],
) -> SqlResult<Outcome> {
    let bits = Privileges::from_name(privilege).unwrap_or(Privileges::SELECT);
    for t in tables {
        let db = schema_of(session, t)?;
        session
            .server
            .acl
            .check_table(&session.security, &db, &t.name, bits)?;
    }
    match tables.first() {
        Some(t) => Err(SqlError::NoSuchTable {
            schema: schema_of(session, t)?,
            table: t.name.clone(),
        }),
        None => Err(SqlError::NotSupportedYet("this statement".into())),
    }
}

/// `DROP TABLE [IF EXISTS] t, ...`: every named table is unknown.
pub fn drop_table(
    session: &mut Session,
    if_exists: bool,
    tables: &[TableRef],
) -> SqlResult<Outcome> {
    let mut names = Vec::with_capacity(tables.len());
    for t in tables {
        let db = schema_of(session, t)?;
        session
            .server
            .acl
            .check_table(&session.security, &db, &t.name, Privileges::DROP)?;
        names.push(format!("{db}.{}", t.name));
    }
    implicit_commit(session);
    if !if_exists {
        return Err(SqlError::UnknownTable(names.join(",")));
    }
    for n in names {
        session.warn(Warning::note(1051, format!("Unknown table '{n}'")));
    }
    Ok(Outcome::ok())
}
