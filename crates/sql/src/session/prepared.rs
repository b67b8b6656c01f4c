//! Prepared statements: `COM_STMT_PREPARE`/`EXECUTE` (protocol ids) and
//! `PREPARE`/`EXECUTE`/`DEALLOCATE PREPARE` (SQL names).
//!
//! A prepared statement keeps its parsed [`Statement`] and placeholder
//! count. Parameter metadata at prepare time says nothing about types
//! (`?` is typed by the value bound at execution, as in MySQL); result
//! columns are reported at prepare time for `SELECT`, typed as if every
//! parameter were a string, and again with their real types in each
//! execution's result set.

use basalt_protocol::{ColumnDef, ColumnType, QueryOutput, ServerError, StatementMeta};

use super::Session;
use crate::error::{SqlError, SqlResult};
use crate::exec;
use crate::parse::{self, Statement};
use crate::value::{SqlType, Value};

/// A parsed statement waiting for parameters.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The statement.
    pub stmt: Statement,
    /// Number of `?` placeholders.
    pub params: usize,
}

impl Session {
    /// Parses one statement for preparing.
    pub(crate) fn prepare_text(&mut self, text: &str) -> SqlResult<Prepared> {
        let opts = self.parse_options();
        let mut parts = parse::split(text, opts)?;
        if parts.is_empty() {
            return Err(SqlError::EmptyQuery);
        }
        if parts.len() > 1 {
            return Err(SqlError::Syntax {
                near: format!("; {}", parts[1]).chars().take(80).collect(),
                line: 1,
            });
        }
        let text = parts.remove(0);
        let stmt = parse::parse_statement(&text, opts)?;
        if matches!(
            stmt,
            Statement::Prepare { .. } | Statement::Execute { .. } | Statement::Deallocate(_)
        ) {
            return Err(SqlError::UnsupportedInPrepared);
        }
        let params = parse::count_placeholders(&text, opts)?;
        Ok(Prepared { stmt, params })
    }

    /// `COM_STMT_PREPARE`.
    pub fn prepare(&mut self, stmt_id: u32, sql: &str) -> Result<StatementMeta, ServerError> {
        self.count("Com_stmt_prepare");
        let prepared = match self.prepare_text(sql) {
            Ok(p) => p,
            Err(e) => return Err(self.fail(e).to_server_error()),
        };
        let columns = match &prepared.stmt {
            Statement::Select(sel) => exec::select::column_defs(self, sel).unwrap_or_default(),
            _ => Vec::new(),
        };
        let params = (0..prepared.params)
            .map(|_| ColumnDef::new("?", ColumnType::VarString).with_charset(63))
            .collect();
        self.prepared.insert(stmt_id, prepared);
        Ok(StatementMeta {
            params,
            columns,
            warnings: 0,
        })
    }

    /// `COM_STMT_EXECUTE` with decoded parameters.
    pub fn execute(
        &mut self,
        stmt_id: u32,
        params: &[basalt_protocol::Value],
        out: &mut dyn QueryOutput,
    ) -> Result<(), ServerError> {
        self.count("Com_stmt_execute");
        self.count("Questions");
        let Some(p) = self.prepared.get(&stmt_id).cloned() else {
            return Err(SqlError::UnknownStatement {
                name: stmt_id.to_string(),
                command: "mysqld_stmt_execute",
            }
            .to_server_error());
        };
        if params.len() != p.params {
            return Err(SqlError::WrongParamCount("mysqld_stmt_execute").to_server_error());
        }
        let coll = self.connection_collation();
        let typed: Vec<(Value, SqlType)> =
            params.iter().map(|v| Value::from_wire(v, coll)).collect();
        if self.cancel.is_cancelled() {
            return Err(self.fail(SqlError::Interrupted).to_server_error());
        }
        self.count("Queries");
        self.run_statement(&p.stmt, Some(&typed), out)
            .map_err(|e| e.to_server_error())
    }

    /// `COM_STMT_RESET`: nothing is kept between executions.
    pub fn reset_statement(&mut self, stmt_id: u32) -> Result<(), ServerError> {
        self.count("Com_stmt_reset");
        if self.prepared.contains_key(&stmt_id) {
            Ok(())
        } else {
            Err(SqlError::UnknownStatement {
                name: stmt_id.to_string(),
                command: "mysqld_stmt_reset",
            }
            .to_server_error())
        }
    }

    /// `COM_STMT_CLOSE`.
    pub fn close_statement(&mut self, stmt_id: u32) {
        self.count("Com_stmt_close");
        self.prepared.remove(&stmt_id);
    }

    /// `PREPARE name FROM text`.
    pub(crate) fn sql_prepare(&mut self, name: &str, text: &str) -> SqlResult<()> {
        let p = self.prepare_text(text)?;
        self.sql_prepared.insert(name.to_ascii_lowercase(), p);
        Ok(())
    }

    /// `EXECUTE name USING @a, ...`: the statement to run and its values.
    pub(crate) fn sql_execute_args(
        &self,
        name: &str,
        using: &[String],
    ) -> SqlResult<(Prepared, Vec<(Value, SqlType)>)> {
        let p = self
            .sql_prepared
            .get(&name.to_ascii_lowercase())
            .cloned()
            .ok_or_else(|| SqlError::UnknownStatement {
                name: name.to_string(),
                command: "EXECUTE",
            })?;
        if using.len() != p.params {
            return Err(SqlError::WrongParamCount("EXECUTE"));
        }
        let values = using
            .iter()
            .map(|v| {
                self.user_vars
                    .get(&v.to_ascii_lowercase())
                    .cloned()
                    .unwrap_or((Value::Null, SqlType::null()))
            })
            .collect();
        Ok((p, values))
    }

    /// `DEALLOCATE PREPARE name`.
    pub(crate) fn sql_deallocate(&mut self, name: &str) -> SqlResult<()> {
        match self.sql_prepared.remove(&name.to_ascii_lowercase()) {
            Some(_) => Ok(()),
            None => Err(SqlError::UnknownStatement {
                name: name.to_string(),
                command: "DEALLOCATE PREPARE",
            }),
        }
    }
}
