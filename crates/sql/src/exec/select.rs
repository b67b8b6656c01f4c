//! `SELECT` without tables (and `FROM DUAL`), `SELECT ... INTO @v`, `DO`.
//!
//! Such a query yields at most one row: `WHERE` decides whether it
//! exists, `LIMIT`/`OFFSET` and `sql_select_limit` may remove it,
//! `ORDER BY` has nothing to order. `GROUP BY`, `HAVING`, windows and
//! aggregates need rows from a table and are refused until tables exist.

use basalt_config::keys;
use basalt_protocol::ColumnDef;
use sqlparser::ast::{self as sql, GroupByExpr, LimitClause, SelectItem, SetExpr};

use super::Outcome;
use crate::error::{SqlError, SqlResult, Warning};
use crate::expr::{eval, Binder, Expr};
use crate::parse::SelectStmt;
use crate::session::Session;
use crate::value::convert::{is_true, to_i64};
use crate::value::{SqlType, Value};

fn select_of(stmt: &SelectStmt) -> SqlResult<&sql::Select> {
    match stmt.query.body.as_ref() {
        SetExpr::Select(s) => Ok(s),
        _ => Err(SqlError::NotSupportedYet("UNION".into())),
    }
}

fn check_shape(q: &sql::Query, s: &sql::Select) -> SqlResult<()> {
    let grouped = match &s.group_by {
        GroupByExpr::All(_) => true,
        GroupByExpr::Expressions(v, m) => !v.is_empty() || !m.is_empty(),
    };
    if grouped || s.having.is_some() || !s.named_window.is_empty() {
        return Err(SqlError::NotSupportedYet(
            "GROUP BY, HAVING and WINDOW without tables".into(),
        ));
    }
    if q.fetch.is_some() {
        return Err(SqlError::NotSupportedYet("FETCH".into()));
    }
    Ok(())
}

struct Bound {
    items: Vec<Expr>,
    filter: Option<Expr>,
    limit: Option<Expr>,
    offset: Option<Expr>,
}

fn bind_all(
    session: &Session,
    stmt: &SelectStmt,
    params: Option<&[(Value, SqlType)]>,
) -> SqlResult<Bound> {
    let s = select_of(stmt)?;
    check_shape(&stmt.query, s)?;
    let ctx = session.plain_bind(params);
    let mut binder = Binder::new(ctx);
    let mut items = Vec::with_capacity(s.projection.len());
    for item in &s.projection {
        let e = match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => e,
            _ => return Err(SqlError::NoTablesUsed),
        };
        items.push(binder.bind(e)?);
    }
    let filter = match &s.selection {
        Some(w) => Some(binder.bind(w)?),
        None => None,
    };
    let (limit, offset) = match &stmt.query.limit_clause {
        None => (None, None),
        Some(LimitClause::LimitOffset { limit, offset, .. }) => {
            let l = match limit {
                Some(e) => Some(binder.bind(e)?),
                None => None,
            };
            let o = match offset {
                Some(o) => Some(binder.bind(&o.value)?),
                None => None,
            };
            (l, o)
        }
        Some(LimitClause::OffsetCommaLimit { offset, limit }) => {
            let o = binder.bind(offset)?;
            let l = binder.bind(limit)?;
            (Some(l), Some(o))
        }
    };
    Ok(Bound {
        items,
        filter,
        limit,
        offset,
    })
}

/// Result columns of a prepared `SELECT` (parameters typed as strings).
pub fn column_defs(session: &Session, stmt: &SelectStmt) -> SqlResult<Vec<ColumnDef>> {
    let bound = bind_all(session, stmt, None)?;
    Ok(bound
        .items
        .iter()
        .zip(&stmt.names)
        .map(|(e, n)| e.ty.column_def(n))
        .collect())
}

fn limit_value(
    e: &Option<Expr>,
    session: &mut Session,
    clock: crate::value::temporal::Clock,
) -> SqlResult<Option<i64>> {
    let Some(e) = e else {
        return Ok(None);
    };
    let mut cx = session.eval_context(clock, &[]);
    let v = eval(e, &mut cx)?;
    match v {
        Value::Int(i) if i >= 0 => Ok(Some(i)),
        Value::UInt(u) => Ok(Some(i64::try_from(u).unwrap_or(i64::MAX))),
        _ => Err(SqlError::WrongArguments("LIMIT".into())),
    }
}

/// Runs a `SELECT` without tables.
pub fn select(
    session: &mut Session,
    stmt: &SelectStmt,
    params: Option<&[(Value, SqlType)]>,
) -> SqlResult<Outcome> {
    let bound = bind_all(session, stmt, params)?;
    let clock = session.clock();
    let limit = limit_value(&bound.limit, session, clock)?;
    let offset = limit_value(&bound.offset, session, clock)?.unwrap_or(0);
    let select_limit = session.vars.get(keys::SQL_SELECT_LIMIT);
    let mut exists = limit != Some(0) && offset == 0 && select_limit > 0;
    let mut row = Vec::with_capacity(bound.items.len());
    {
        let mut cx = session.eval_context(clock, &[]);
        if let Some(f) = &bound.filter {
            let v = eval(f, &mut cx)?;
            exists = exists && !v.is_null() && is_true(&v, cx.warnings);
        }
        if exists {
            for e in &bound.items {
                row.push(eval(e, &mut cx)?);
            }
        }
    }
    if !stmt.into.is_empty() {
        if stmt.into.len() != bound.items.len() {
            return Err(SqlError::IntoColumnCount);
        }
        if !exists {
            session.warn(Warning::warn(
                1329,
                "No data - zero rows fetched, selected, or processed",
            ));
            return Ok(Outcome::ok());
        }
        for ((name, v), e) in stmt.into.iter().zip(row).zip(&bound.items) {
            let ty = if v.is_null() { SqlType::null() } else { e.ty };
            session.user_vars.insert(name.to_ascii_lowercase(), (v, ty));
        }
        return Ok(Outcome::affected(1));
    }
    let columns = stmt
        .names
        .iter()
        .cloned()
        .zip(bound.items.iter().map(|e| e.ty))
        .collect();
    let rows = if exists { vec![row] } else { Vec::new() };
    Ok(Outcome::Rows { columns, rows })
}

/// `DO expr, ...`: evaluates and discards.
pub fn do_exprs(
    session: &mut Session,
    exprs: &[sql::Expr],
    params: Option<&[(Value, SqlType)]>,
) -> SqlResult<Outcome> {
    let bound = {
        let ctx = session.plain_bind(params);
        let mut binder = Binder::new(ctx);
        exprs
            .iter()
            .map(|e| binder.bind(e))
            .collect::<SqlResult<Vec<_>>>()?
    };
    let clock = session.clock();
    let mut cx = session.eval_context(clock, &[]);
    for e in &bound {
        eval(e, &mut cx)?;
    }
    Ok(Outcome::ok())
}

/// Evaluates a constant expression of an administrative statement
/// (`KILL <expr>`) to an integer.
pub fn eval_int(
    session: &mut Session,
    e: &sql::Expr,
    params: Option<&[(Value, SqlType)]>,
) -> SqlResult<Option<i64>> {
    let bound = {
        let ctx = session.plain_bind(params);
        Binder::new(ctx).bind(e)?
    };
    let clock = session.clock();
    let mut cx = session.eval_context(clock, &[]);
    let v = eval(&bound, &mut cx)?;
    if v.is_null() {
        return Ok(None);
    }
    Ok(Some(to_i64(&v, cx.warnings)))
}
