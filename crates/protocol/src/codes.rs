//! MySQL error numbers and SQLSTATEs that the protocol layer itself emits.
//!
//! The SQL layer owns the full mapping table from engine and SQL errors to
//! wire errors; this module only names the errors raised while framing,
//! authenticating and dispatching commands, so that every `ERR` packet this
//! crate builds uses the real MySQL number, SQLSTATE and message shape.

/// `ER_CON_COUNT_ERROR`: more clients than `max_connections`.
pub const ER_CON_COUNT_ERROR: u16 = 1040;
/// `ER_HANDSHAKE_ERROR`: the handshake response could not be understood.
pub const ER_HANDSHAKE_ERROR: u16 = 1043;
/// `ER_ACCESS_DENIED_ERROR`: unknown account or wrong password.
pub const ER_ACCESS_DENIED_ERROR: u16 = 1045;
/// `ER_UNKNOWN_COM_ERROR`: a command byte (or option) the server does not implement.
pub const ER_UNKNOWN_COM_ERROR: u16 = 1047;
/// `ER_SERVER_SHUTDOWN`: the server is shutting down.
pub const ER_SERVER_SHUTDOWN: u16 = 1053;
/// `ER_NO_SUCH_THREAD`: `KILL` of a connection id that does not exist.
pub const ER_NO_SUCH_THREAD: u16 = 1094;
/// `ER_UNKNOWN_ERROR`: internal failure that has no better number.
pub const ER_UNKNOWN_ERROR: u16 = 1105;
/// `ER_NET_PACKET_TOO_LARGE`: a logical packet exceeded `max_allowed_packet`.
pub const ER_NET_PACKET_TOO_LARGE: u16 = 1153;
/// `ER_NET_PACKETS_OUT_OF_ORDER`: a packet arrived with the wrong sequence id.
pub const ER_NET_PACKETS_OUT_OF_ORDER: u16 = 1156;
/// `ER_NET_READ_ERROR`: the connection broke while a packet was being read.
pub const ER_NET_READ_ERROR: u16 = 1158;
/// `ER_NET_READ_INTERRUPTED`: reading a packet timed out.
pub const ER_NET_READ_INTERRUPTED: u16 = 1159;
/// `ER_WRONG_ARGUMENTS`: malformed arguments to a prepared-statement command.
pub const ER_WRONG_ARGUMENTS: u16 = 1210;
/// `ER_UNKNOWN_STMT_HANDLER`: a statement id that is not prepared on this connection.
pub const ER_UNKNOWN_STMT_HANDLER: u16 = 1243;
/// `ER_UNSUPPORTED_PS`: the statement cannot be used as a prepared statement.
pub const ER_UNSUPPORTED_PS: u16 = 1295;
/// `ER_PS_MANY_PARAM`: more than 65,535 placeholders in one statement.
pub const ER_PS_MANY_PARAM: u16 = 1390;
/// `ER_STMT_HAS_NO_OPEN_CURSOR`: `COM_STMT_FETCH` without an open cursor.
pub const ER_STMT_HAS_NO_OPEN_CURSOR: u16 = 1421;
/// `ER_CLIENT_INTERACTION_TIMEOUT`: idle longer than `wait_timeout`.
pub const ER_CLIENT_INTERACTION_TIMEOUT: u16 = 4031;

/// SQLSTATE of network and protocol errors.
pub const SQLSTATE_NET: &str = "08S01";
/// SQLSTATE of `ER_CON_COUNT_ERROR`.
pub const SQLSTATE_CONNECTION_REJECTED: &str = "08004";
/// SQLSTATE of `ER_ACCESS_DENIED_ERROR`.
pub const SQLSTATE_ACCESS_DENIED: &str = "28000";
/// The general SQLSTATE of server errors.
pub const SQLSTATE_GENERAL: &str = "HY000";

/// `ER_INVALID_CHARACTER_STRING`: text that is not valid utf8mb4.
pub const ER_INVALID_CHARACTER_STRING: u16 = 1300;
/// `ER_MALFORMED_PACKET`: a command payload that cannot be decoded.
pub const ER_MALFORMED_PACKET: u16 = 1835;
