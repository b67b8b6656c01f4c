//! Command phase: command codes and payload parsers.
//!
//! The first payload byte of every command-phase packet names the command;
//! [`Command::parse`] turns a payload into a typed command borrowing from it.
//! Parsing never panics: malformed payloads become [`ProtocolError`]s that
//! the connection maps to the error MySQL sends for that command.

mod execute;

pub use execute::{
    execute_stmt_id, parse_execute, ExecuteRequest, ParamSlot, CURSOR_TYPE_READ_ONLY,
};

use crate::error::ProtocolError;
use crate::packet::{utf8, Decoder};

/// Command bytes (`COM_*`).
pub mod code {
    /// `COM_SLEEP` (internal, never valid from a client).
    pub const SLEEP: u8 = 0x00;
    /// `COM_QUIT`.
    pub const QUIT: u8 = 0x01;
    /// `COM_INIT_DB`.
    pub const INIT_DB: u8 = 0x02;
    /// `COM_QUERY`.
    pub const QUERY: u8 = 0x03;
    /// `COM_FIELD_LIST`.
    pub const FIELD_LIST: u8 = 0x04;
    /// `COM_STATISTICS`.
    pub const STATISTICS: u8 = 0x09;
    /// `COM_PROCESS_KILL`.
    pub const PROCESS_KILL: u8 = 0x0C;
    /// `COM_PING`.
    pub const PING: u8 = 0x0E;
    /// `COM_CHANGE_USER`.
    pub const CHANGE_USER: u8 = 0x11;
    /// `COM_STMT_PREPARE`.
    pub const STMT_PREPARE: u8 = 0x16;
    /// `COM_STMT_EXECUTE`.
    pub const STMT_EXECUTE: u8 = 0x17;
    /// `COM_STMT_SEND_LONG_DATA`.
    pub const STMT_SEND_LONG_DATA: u8 = 0x18;
    /// `COM_STMT_CLOSE`.
    pub const STMT_CLOSE: u8 = 0x19;
    /// `COM_STMT_RESET`.
    pub const STMT_RESET: u8 = 0x1A;
    /// `COM_SET_OPTION`.
    pub const SET_OPTION: u8 = 0x1B;
    /// `COM_STMT_FETCH`.
    pub const STMT_FETCH: u8 = 0x1C;
    /// `COM_RESET_CONNECTION`.
    pub const RESET_CONNECTION: u8 = 0x1F;
}

/// `COM_SET_OPTION` values.
pub const MYSQL_OPTION_MULTI_STATEMENTS_ON: u16 = 0;
/// Turns multi-statements off.
pub const MYSQL_OPTION_MULTI_STATEMENTS_OFF: u16 = 1;

/// A parsed command-phase packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command<'a> {
    /// `COM_QUIT`.
    Quit,
    /// `COM_INIT_DB schema`.
    InitDb(&'a str),
    /// `COM_QUERY sql`.
    Query(&'a str),
    /// `COM_FIELD_LIST table\0 wildcard`.
    FieldList {
        /// Table name.
        table: &'a str,
        /// `LIKE` pattern, possibly empty.
        wildcard: &'a str,
    },
    /// `COM_STATISTICS`.
    Statistics,
    /// `COM_PROCESS_KILL id`.
    ProcessKill(u32),
    /// `COM_PING`.
    Ping,
    /// `COM_CHANGE_USER` (body parsed later with the connection's capabilities).
    ChangeUser(&'a [u8]),
    /// `COM_STMT_PREPARE sql`.
    StmtPrepare(&'a str),
    /// `COM_STMT_EXECUTE` (body parsed later against the statement).
    StmtExecute(&'a [u8]),
    /// `COM_STMT_SEND_LONG_DATA`.
    StmtSendLongData {
        /// Statement id.
        stmt_id: u32,
        /// Parameter index.
        param: u16,
        /// Bytes to append.
        data: &'a [u8],
    },
    /// `COM_STMT_CLOSE id`.
    StmtClose(u32),
    /// `COM_STMT_RESET id`.
    StmtReset(u32),
    /// `COM_SET_OPTION option`.
    SetOption(u16),
    /// `COM_STMT_FETCH id rows`.
    StmtFetch {
        /// Statement id.
        stmt_id: u32,
        /// Rows wanted.
        rows: u32,
    },
    /// `COM_RESET_CONNECTION`.
    ResetConnection,
    /// Anything else (answered with error 1047).
    Unknown(u8),
}

impl<'a> Command<'a> {
    /// Parses a command payload.
    pub fn parse(payload: &'a [u8]) -> Result<Self, ProtocolError> {
        let mut d = Decoder::new(payload);
        let Ok(code) = d.u8("command") else {
            return Ok(Command::Unknown(code::SLEEP));
        };
        let rest = d.peek_rest();
        Ok(match code {
            code::QUIT => Command::Quit,
            code::INIT_DB => Command::InitDb(utf8(rest, "schema name")?),
            code::QUERY => Command::Query(utf8(rest, "query text")?),
            code::FIELD_LIST => {
                let table = utf8(d.nul_bytes_or_rest(), "table name")?;
                let wildcard = utf8(d.take_rest(), "wildcard")?;
                Command::FieldList { table, wildcard }
            }
            code::STATISTICS => Command::Statistics,
            code::PROCESS_KILL => Command::ProcessKill(d.u32("connection id")?),
            code::PING => Command::Ping,
            code::CHANGE_USER => Command::ChangeUser(rest),
            code::STMT_PREPARE => Command::StmtPrepare(utf8(rest, "statement text")?),
            code::STMT_EXECUTE => Command::StmtExecute(rest),
            code::STMT_SEND_LONG_DATA => Command::StmtSendLongData {
                stmt_id: d.u32("statement id")?,
                param: d.u16("parameter id")?,
                data: d.take_rest(),
            },
            code::STMT_CLOSE => Command::StmtClose(d.u32("statement id")?),
            code::STMT_RESET => Command::StmtReset(d.u32("statement id")?),
            code::SET_OPTION => Command::SetOption(d.u16("option")?),
            code::STMT_FETCH => Command::StmtFetch {
                stmt_id: d.u32("statement id")?,
                rows: d.u32("row count")?,
            },
            code::RESET_CONNECTION => Command::ResetConnection,
            other => Command::Unknown(other),
        })
    }

    /// The `Command` column of `SHOW PROCESSLIST` for this command.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Quit => "Quit",
            Command::InitDb(_) => "Init DB",
            Command::Query(_) => "Query",
            Command::FieldList { .. } => "Field List",
            Command::Statistics => "Statistics",
            Command::ProcessKill(_) => "Processkill",
            Command::Ping => "Ping",
            Command::ChangeUser(_) => "Change user",
            Command::StmtPrepare(_) => "Prepare",
            Command::StmtExecute(_) => "Execute",
            Command::StmtSendLongData { .. } => "Long Data",
            Command::StmtClose(_) => "Close stmt",
            Command::StmtReset(_) => "Reset stmt",
            Command::SetOption(_) => "Set option",
            Command::StmtFetch { .. } => "Fetch",
            Command::ResetConnection => "Reset connection",
            Command::Unknown(_) => "Error",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_supported_command() {
        assert_eq!(
            Command::parse(b"\x03select 1").unwrap(),
            Command::Query("select 1")
        );
        assert_eq!(Command::parse(b"\x02db").unwrap(), Command::InitDb("db"));
        assert_eq!(
            Command::parse(b"\x04t1\0c%").unwrap(),
            Command::FieldList {
                table: "t1",
                wildcard: "c%"
            }
        );
        assert_eq!(
            Command::parse(b"\x0c\x07\0\0\0").unwrap(),
            Command::ProcessKill(7)
        );
        assert_eq!(
            Command::parse(b"\x1b\x01\x00").unwrap(),
            Command::SetOption(1)
        );
        assert_eq!(
            Command::parse(b"\x1c\x01\0\0\0\x05\0\0\0").unwrap(),
            Command::StmtFetch {
                stmt_id: 1,
                rows: 5
            }
        );
        assert_eq!(
            Command::parse(b"\x18\x02\0\0\0\x01\0abc").unwrap(),
            Command::StmtSendLongData {
                stmt_id: 2,
                param: 1,
                data: b"abc"
            }
        );
        assert_eq!(Command::parse(b"").unwrap(), Command::Unknown(0));
        assert_eq!(Command::parse(b"\x20").unwrap(), Command::Unknown(0x20));
    }

    #[test]
    fn short_fixed_fields_are_errors() {
        for p in [
            &b"\x0c\x01"[..],
            b"\x19",
            b"\x1a\0\0",
            b"\x1b\0",
            b"\x1c\x01\0\0\0",
            b"\x18\x01\0\0\0",
        ] {
            assert!(Command::parse(p).is_err(), "{p:?}");
        }
        assert!(
            Command::parse(b"\x03\xff\xfe").is_err(),
            "invalid UTF-8 query"
        );
    }
}
