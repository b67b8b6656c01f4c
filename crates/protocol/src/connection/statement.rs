//! Prepared statements: the per-connection statement table and the
//! `COM_STMT_*` commands.
//!
//! The protocol assigns statement ids and keeps, per statement, what the
//! binary protocol needs between packets: parameter count, the parameter
//! types bound by the last execution, long data, and an open cursor. The
//! backend keeps the plan under the same id.
//!
//! Read-only cursors (`CURSOR_TYPE_READ_ONLY`) are materialised: the result
//! set is captured as encoded binary rows when the statement executes, the
//! reply carries only metadata with `SERVER_STATUS_CURSOR_EXISTS`, and
//! `COM_STMT_FETCH` streams the stored rows, adding
//! `SERVER_STATUS_LAST_ROW_SENT` when they run out (as MySQL, which
//! materialises cursors in a temporary table).

use crate::backend::Backend;
use crate::command::{execute_stmt_id, parse_execute, ParamSlot, CURSOR_TYPE_READ_ONLY};
use crate::connection::output::{CursorRows, ResultWriter, RowFormat};
use crate::connection::Connection;
use crate::error::ServerError;
use crate::flags::{Capabilities, StatusFlags};
use crate::value::Value;

/// Most placeholders one statement may have (the count is an `int<2>`).
pub const MAX_PARAMS: usize = u16::MAX as usize;

/// Protocol-side state of one prepared statement.
#[derive(Debug, Default)]
pub(crate) struct PreparedStmt {
    params: usize,
    bound_types: Option<Vec<(u8, u8)>>,
    long_data: Vec<Option<Vec<u8>>>,
    long_data_error: Option<ServerError>,
    cursor: Option<CursorRows>,
}

impl<B: Backend> Connection<B> {
    pub(super) fn prepare(&mut self, sql: &str) {
        let Some(session) = self.session.as_mut() else {
            return;
        };
        // Ids only repeat after 2^32 prepares; skip any still in use then.
        let mut id = self.next_stmt_id;
        while id == 0 || self.statements.contains_key(&id) {
            id = id.wrapping_add(1);
        }
        self.next_stmt_id = id.wrapping_add(1);
        let meta = match self.backend.prepare(session, id, sql) {
            Ok(m) => m,
            Err(e) => {
                self.wire.err(&e);
                return;
            }
        };
        if meta.params.len() > MAX_PARAMS || meta.columns.len() > MAX_PARAMS {
            self.backend.close_statement(session, id);
            self.wire.err(&ServerError::too_many_placeholders());
            return;
        }
        let status = self.state.status;
        let out = &mut self.wire.out;
        let s = out.start();
        let body = out.body();
        body.push(0x00);
        body.extend_from_slice(&id.to_le_bytes());
        body.extend_from_slice(&(meta.columns.len() as u16).to_le_bytes());
        body.extend_from_slice(&(meta.params.len() as u16).to_le_bytes());
        body.push(0);
        body.extend_from_slice(&meta.warnings.to_le_bytes());
        out.finish(s);
        for defs in [&meta.params, &meta.columns] {
            if defs.is_empty() {
                continue;
            }
            for c in defs {
                let s = self.wire.out.start();
                c.encode(self.wire.out.body(), false);
                self.wire.out.finish(s);
            }
            if !self.caps.contains(Capabilities::DEPRECATE_EOF) {
                self.send_eof(status, 0);
            }
        }
        self.statements.insert(
            id,
            PreparedStmt {
                params: meta.params.len(),
                long_data: vec![None; meta.params.len()],
                ..PreparedStmt::default()
            },
        );
    }

    pub(super) fn execute(&mut self, body: &[u8]) {
        const CMD: &str = "mysqld_stmt_execute";
        let Ok(id) = execute_stmt_id(body) else {
            self.wire.err(&ServerError::wrong_arguments(CMD));
            return;
        };
        let Some(stmt) = self.statements.get_mut(&id) else {
            self.wire.err(&ServerError::unknown_statement(id, CMD));
            return;
        };
        let Some(session) = self.session.as_mut() else {
            return;
        };
        let long_data = std::mem::replace(&mut stmt.long_data, vec![None; stmt.params]);
        if let Some(e) = stmt.long_data_error.take() {
            self.wire.err(&e);
            return;
        }
        let has_long: Vec<bool> = long_data.iter().map(Option::is_some).collect();
        let request = match parse_execute(body, stmt.params, &mut stmt.bound_types, &has_long) {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(id = self.id, error = %e, "malformed COM_STMT_EXECUTE");
                self.wire.err(&ServerError::wrong_arguments(CMD));
                return;
            }
        };
        let params: Vec<Value> = request
            .params
            .into_iter()
            .zip(long_data)
            .map(|(slot, data)| match slot {
                ParamSlot::Value(v) => v,
                ParamSlot::LongData => Value::Bytes(data.unwrap_or_default()),
            })
            .collect();
        let mut out = ResultWriter::new(
            &mut self.wire,
            self.caps,
            RowFormat::Binary,
            self.state.status,
            &mut self.columns,
        );
        if request.flags & CURSOR_TYPE_READ_ONLY != 0 {
            out = out.with_cursor(&mut stmt.cursor);
        } else {
            stmt.cursor = None;
        }
        let r = self.backend.execute(session, id, &params, &mut out);
        if !out.finish(r) {
            // A failed execution leaves no half-filled cursor behind.
            stmt.cursor = None;
        }
    }

    pub(super) fn send_long_data(&mut self, stmt_id: u32, param: u16, data: &[u8]) {
        // No reply in any case: errors surface at the next execute.
        let max = self.state.max_allowed_packet;
        let Some(stmt) = self.statements.get_mut(&stmt_id) else {
            return;
        };
        let Some(slot) = stmt.long_data.get_mut(usize::from(param)) else {
            stmt.long_data_error = Some(ServerError::wrong_arguments("mysqld_stmt_send_long_data"));
            return;
        };
        let buf = slot.get_or_insert_with(Vec::new);
        if buf.len() + data.len() > max {
            stmt.long_data_error = Some(ServerError::packet_too_large());
            *slot = None;
            return;
        }
        buf.extend_from_slice(data);
    }

    pub(super) fn reset_statement(&mut self, id: u32) {
        let Some(stmt) = self.statements.get_mut(&id) else {
            self.wire
                .err(&ServerError::unknown_statement(id, "mysqld_stmt_reset"));
            return;
        };
        stmt.long_data.iter_mut().for_each(|d| *d = None);
        stmt.long_data_error = None;
        stmt.cursor = None;
        let Some(session) = self.session.as_mut() else {
            return;
        };
        let r = self.backend.reset_statement(session, id);
        self.reply(r);
    }

    pub(super) fn fetch(&mut self, id: u32, rows: u32) {
        let Some(stmt) = self.statements.get_mut(&id) else {
            self.wire
                .err(&ServerError::unknown_statement(id, "mysqld_stmt_fetch"));
            return;
        };
        let Some(cursor) = stmt.cursor.as_mut() else {
            self.wire.err(&ServerError::no_open_cursor(id));
            return;
        };
        for _ in 0..rows {
            let Some(row) = cursor.rows.pop_front() else {
                break;
            };
            self.wire.packet(&row);
            if self.wire.maybe_flush().is_err() {
                return;
            }
        }
        let mut status = cursor.end.status | StatusFlags::CURSOR_EXISTS;
        let warnings = cursor.end.warnings;
        if cursor.rows.is_empty() {
            status |= StatusFlags::LAST_ROW_SENT;
            stmt.cursor = None;
        }
        self.send_eof(status, warnings);
    }
}
