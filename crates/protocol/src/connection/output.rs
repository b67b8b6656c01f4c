//! [`ResultWriter`]: the protocol's implementation of [`QueryOutput`].
//!
//! Per statement it encodes OK packets or result sets (text rows for
//! `COM_QUERY`, binary rows for `COM_STMT_EXECUTE`). The final packet of each
//! statement (OK, or the EOF/OK that ends the rows) is *held back* in
//! `pending` until the writer learns what comes next:
//!
//! ```text
//!   backend call            writer action
//!   ok(A)                   pending = A
//!   columns(..)             flush pending with MORE_RESULTS_EXISTS, send metadata
//!   row(..) x n             send rows
//!   end_rows(B)             pending = B
//!   return Ok(())           flush pending without MORE_RESULTS_EXISTS
//!   return Err(e)           flush pending with MORE_RESULTS_EXISTS, send ERR(e)
//! ```
//!
//! so the flag is right by construction and an error ends the batch.

use std::collections::VecDeque;

use crate::backend::{OkResult, OutputError, QueryOutput, RowsEnd};
use crate::column::ColumnDef;
use crate::connection::wire::Wire;
use crate::error::ServerError;
use crate::flags::{Capabilities, StatusFlags};
use crate::packet::{put_lenenc_bytes, put_lenenc_int};
use crate::value::Value;

/// Row encoding of a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowFormat {
    /// Text protocol (`COM_QUERY`).
    Text,
    /// Binary protocol (`COM_STMT_EXECUTE`).
    Binary,
}

/// Rows of a read-only cursor, already binary-encoded, waiting for
/// `COM_STMT_FETCH`.
#[derive(Debug, Default)]
pub(crate) struct CursorRows {
    pub rows: VecDeque<Vec<u8>>,
    pub end: RowsEnd,
}

#[derive(Debug)]
enum Final {
    Ok(OkResult),
    End(RowsEnd),
}

#[derive(Debug, PartialEq, Eq)]
enum State {
    /// Between statements.
    Idle,
    /// Inside a result set.
    Rows,
    /// A cursor result set was captured; nothing more may follow.
    CursorDone,
}

/// Encodes one command's results onto the wire.
pub(crate) struct ResultWriter<'a> {
    wire: &'a mut Wire,
    caps: Capabilities,
    format: RowFormat,
    /// Status for packets the backend does not describe (metadata EOF).
    session_status: StatusFlags,
    columns: &'a mut Vec<ColumnDef>,
    cursor: Option<&'a mut Option<CursorRows>>,
    state: State,
    pending: Option<Final>,
    results: usize,
    failure: Option<OutputError>,
}

impl<'a> ResultWriter<'a> {
    pub(crate) fn new(
        wire: &'a mut Wire,
        caps: Capabilities,
        format: RowFormat,
        session_status: StatusFlags,
        columns: &'a mut Vec<ColumnDef>,
    ) -> Self {
        columns.clear();
        ResultWriter {
            wire,
            caps,
            format,
            session_status,
            columns,
            cursor: None,
            state: State::Idle,
            pending: None,
            results: 0,
            failure: None,
        }
    }

    /// Captures a result set into `slot` as a read-only cursor instead of
    /// streaming its rows.
    pub(crate) fn with_cursor(mut self, slot: &'a mut Option<CursorRows>) -> Self {
        *slot = None;
        self.cursor = Some(slot);
        self
    }

    fn fail(&mut self, e: OutputError) -> OutputError {
        if self.failure.is_none() {
            self.failure = Some(e.clone());
        }
        e
    }

    fn check_usable(&mut self) -> Result<(), OutputError> {
        match &self.failure {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Starts the next result: flushes the held-back final packet of the
    /// previous one with MORE_RESULTS_EXISTS.
    fn next_result(&mut self) -> Result<(), OutputError> {
        self.check_usable()?;
        match self.state {
            State::Rows => return Err(self.fail(OutputError::Misuse("result set not ended"))),
            State::CursorDone => {
                return Err(self.fail(OutputError::Misuse("a cursor covers a single result set")))
            }
            State::Idle => {}
        }
        if self.results > 0 && !self.caps.contains(Capabilities::MULTI_RESULTS) {
            return Err(self.fail(OutputError::MultiResultsUnsupported));
        }
        self.flush_pending(true);
        self.results += 1;
        Ok(())
    }

    fn flush_pending(&mut self, more: bool) {
        let extra = if more {
            StatusFlags::MORE_RESULTS_EXISTS
        } else {
            StatusFlags::default()
        };
        match self.pending.take() {
            Some(Final::Ok(ok)) => {
                let s = self.wire.out.start();
                encode_ok(self.wire.out.body(), 0x00, &ok, ok.status | extra);
                self.wire.out.finish(s);
            }
            Some(Final::End(end)) => self.end_packet(end.status | extra, end.warnings),
            None => {}
        }
    }

    /// EOF packet, or OK with a 0xFE header under CLIENT_DEPRECATE_EOF.
    fn end_packet(&mut self, status: StatusFlags, warnings: u16) {
        let s = self.wire.out.start();
        encode_eof(self.wire.out.body(), self.caps, status, warnings);
        self.wire.out.finish(s);
    }

    /// Finishes the command with the backend's verdict; true when the
    /// command succeeded (no ERR was sent).
    pub(crate) fn finish(mut self, result: Result<(), ServerError>) -> bool {
        if self.failure == Some(OutputError::ClientGone) {
            return false;
        }
        let error = match (result, self.failure.take()) {
            (Err(e), _) => Some(e),
            (Ok(()), Some(f)) => {
                tracing::error!(error = %f, "backend produced an invalid result");
                Some(ServerError::internal(f.to_string()))
            }
            (Ok(()), None) if self.state == State::Rows => {
                tracing::error!("backend returned without ending its result set");
                Some(ServerError::internal("result set was not ended"))
            }
            (Ok(()), None) if self.results == 0 => {
                tracing::error!("backend returned without producing a result");
                Some(ServerError::internal("statement produced no result"))
            }
            (Ok(()), None) => None,
        };
        match error {
            Some(e) => {
                self.flush_pending(true);
                self.wire.err(&e);
                false
            }
            None => {
                self.flush_pending(false);
                true
            }
        }
    }
}

impl QueryOutput for ResultWriter<'_> {
    fn ok(&mut self, ok: &OkResult) -> Result<(), OutputError> {
        self.next_result()?;
        self.pending = Some(Final::Ok(ok.clone()));
        Ok(())
    }

    fn columns(&mut self, columns: &[ColumnDef]) -> Result<(), OutputError> {
        if columns.is_empty() {
            return Err(self.fail(OutputError::Misuse(
                "a result set needs at least one column",
            )));
        }
        self.next_result()?;
        self.columns.clear();
        self.columns.extend_from_slice(columns);
        self.state = State::Rows;
        let out = &mut self.wire.out;
        let s = out.start();
        put_lenenc_int(out.body(), columns.len() as u64);
        out.finish(s);
        for c in columns {
            let s = out.start();
            c.encode(out.body(), false);
            out.finish(s);
        }
        if let Some(slot) = self.cursor.as_deref_mut() {
            // The metadata terminator tells the client a cursor is open; rows
            // follow only on COM_STMT_FETCH.
            *slot = Some(CursorRows::default());
            let status = self.session_status | StatusFlags::CURSOR_EXISTS;
            self.end_packet(status, 0);
        } else if !self.caps.contains(Capabilities::DEPRECATE_EOF) {
            self.end_packet(self.session_status, 0);
        }
        self.wire.maybe_flush().map_err(|e| self.fail(e.into()))
    }

    // PERF: once per row; encodes in place into the output buffer.
    fn row(&mut self, values: &[Value]) -> Result<(), OutputError> {
        self.check_usable()?;
        if self.state != State::Rows {
            return Err(self.fail(OutputError::Misuse("row outside a result set")));
        }
        if values.len() != self.columns.len() {
            let e = OutputError::RowArity {
                expected: self.columns.len(),
                got: values.len(),
            };
            return Err(self.fail(e));
        }
        if let Some(Some(cursor)) = self.cursor.as_deref_mut() {
            let mut row = Vec::new();
            encode_binary_row(self.columns, values, &mut row).map_err(|e| {
                let e = OutputError::from(e);
                self.failure.get_or_insert(e.clone());
                e
            })?;
            cursor.rows.push_back(row);
            return Ok(());
        }
        let out = &mut self.wire.out;
        let s = out.start();
        let encoded = match self.format {
            RowFormat::Text => values
                .iter()
                .zip(self.columns.iter())
                .try_for_each(|(v, c)| v.encode_text(c, out.body())),
            RowFormat::Binary => encode_binary_row(self.columns, values, out.body()),
        };
        match encoded {
            Ok(()) => {
                out.finish(s);
                self.wire.maybe_flush().map_err(|e| self.fail(e.into()))
            }
            Err(e) => {
                out.abort(s);
                Err(self.fail(e.into()))
            }
        }
    }

    fn end_rows(&mut self, end: &RowsEnd) -> Result<(), OutputError> {
        self.check_usable()?;
        if self.state != State::Rows {
            return Err(self.fail(OutputError::Misuse("end_rows outside a result set")));
        }
        if let Some(Some(cursor)) = self.cursor.as_deref_mut() {
            cursor.end = *end;
            self.state = State::CursorDone;
            return Ok(());
        }
        self.state = State::Idle;
        self.pending = Some(Final::End(*end));
        Ok(())
    }
}

/// Appends a binary row: `0x00`, NULL bitmap (offset 2), non-NULL values.
pub(crate) fn encode_binary_row(
    columns: &[ColumnDef],
    values: &[Value],
    out: &mut Vec<u8>,
) -> Result<(), crate::value::ValueError> {
    out.push(0x00);
    let bitmap_at = out.len();
    out.resize(bitmap_at + (values.len() + 7 + 2) / 8, 0);
    for (i, (v, c)) in values.iter().zip(columns).enumerate() {
        if v.is_null() {
            let bit = i + 2;
            out[bitmap_at + bit / 8] |= 1 << (bit % 8);
        } else {
            v.encode_binary(c, out)?;
        }
    }
    Ok(())
}

/// Appends an OK payload with the given header byte (0x00, or 0xFE when it
/// stands in for an EOF).
///
/// ```text
/// header | lenenc affected rows | lenenc last insert id | int<2> status | int<2> warnings | [lenenc info]
/// ```
pub(crate) fn encode_ok(out: &mut Vec<u8>, header: u8, ok: &OkResult, status: StatusFlags) {
    out.push(header);
    put_lenenc_int(out, ok.affected_rows);
    put_lenenc_int(out, ok.last_insert_id);
    out.extend_from_slice(&status.0.to_le_bytes());
    out.extend_from_slice(&ok.warnings.to_le_bytes());
    // Documented as string<EOF>, but MySQL (`net_send_ok`) and every client
    // library use string<lenenc>; omitted when empty.
    if !ok.info.is_empty() {
        put_lenenc_bytes(out, ok.info.as_bytes());
    }
}

/// Appends the end-of-rows payload for the negotiated capabilities: an EOF
/// packet, or under CLIENT_DEPRECATE_EOF a minimal OK with a 0xFE header
/// (kept under 8 bytes, which libmariadb requires).
pub(crate) fn encode_eof(
    out: &mut Vec<u8>,
    caps: Capabilities,
    status: StatusFlags,
    warnings: u16,
) {
    if caps.contains(Capabilities::DEPRECATE_EOF) {
        out.extend_from_slice(&[0xFE, 0, 0]);
        out.extend_from_slice(&status.0.to_le_bytes());
        out.extend_from_slice(&warnings.to_le_bytes());
    } else {
        out.push(0xFE);
        out.extend_from_slice(&warnings.to_le_bytes());
        out.extend_from_slice(&status.0.to_le_bytes());
    }
}
