//! The crate's error type and the wire-level error a client sees.

use std::fmt;

use crate::codes;

/// An error as the client sees it: MySQL error number, SQLSTATE and message.
///
/// This is what an `ERR` packet carries. The backend returns it from every
/// fallible call; the protocol layer builds its own for framing, auth and
/// dispatch failures using the constants in [`crate::codes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError {
    /// MySQL error number (`ER_*`).
    pub code: u16,
    /// Five-character SQLSTATE.
    pub sqlstate: [u8; 5],
    /// Human-readable message, sent verbatim.
    pub message: String,
}

impl ServerError {
    /// Builds an error. A `sqlstate` that is not five ASCII characters is
    /// replaced by `HY000` so that the packet stays well formed.
    pub fn new(code: u16, sqlstate: &str, message: impl Into<String>) -> Self {
        let bytes = sqlstate.as_bytes();
        let sqlstate = if bytes.len() == 5 && bytes.iter().all(u8::is_ascii) {
            [bytes[0], bytes[1], bytes[2], bytes[3], bytes[4]]
        } else {
            *b"HY000"
        };
        ServerError {
            code,
            sqlstate,
            message: message.into(),
        }
    }

    /// The SQLSTATE as a string slice.
    pub fn sqlstate_str(&self) -> &str {
        // The constructor only stores ASCII, so this cannot fail; fall back to
        // the general state rather than panic if a caller built the struct by hand.
        std::str::from_utf8(&self.sqlstate).unwrap_or(codes::SQLSTATE_GENERAL)
    }

    /// 1040 Too many connections.
    pub fn too_many_connections() -> Self {
        Self::new(
            codes::ER_CON_COUNT_ERROR,
            codes::SQLSTATE_CONNECTION_REJECTED,
            "Too many connections",
        )
    }

    /// 1043 Bad handshake.
    pub fn bad_handshake() -> Self {
        Self::new(
            codes::ER_HANDSHAKE_ERROR,
            codes::SQLSTATE_NET,
            "Bad handshake",
        )
    }

    /// 1045 Access denied for user 'u'@'h' (using password: YES|NO).
    pub fn access_denied(user: &str, host: &str, using_password: bool) -> Self {
        Self::new(
            codes::ER_ACCESS_DENIED_ERROR,
            codes::SQLSTATE_ACCESS_DENIED,
            format!(
                "Access denied for user '{user}'@'{host}' (using password: {})",
                if using_password { "YES" } else { "NO" }
            ),
        )
    }

    /// 1047 Unknown command.
    pub fn unknown_command() -> Self {
        Self::new(
            codes::ER_UNKNOWN_COM_ERROR,
            codes::SQLSTATE_NET,
            "Unknown command",
        )
    }

    /// 1053 Server shutdown in progress.
    pub fn server_shutdown() -> Self {
        Self::new(
            codes::ER_SERVER_SHUTDOWN,
            codes::SQLSTATE_NET,
            "Server shutdown in progress",
        )
    }

    /// 1094 Unknown thread id.
    pub fn no_such_thread(id: u32) -> Self {
        Self::new(
            codes::ER_NO_SUCH_THREAD,
            codes::SQLSTATE_GENERAL,
            format!("Unknown thread id: {id}"),
        )
    }

    /// 1105 for failures inside the server that have no better number.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(codes::ER_UNKNOWN_ERROR, codes::SQLSTATE_GENERAL, message)
    }

    /// 1153 Got a packet bigger than 'max_allowed_packet' bytes.
    pub fn packet_too_large() -> Self {
        Self::new(
            codes::ER_NET_PACKET_TOO_LARGE,
            codes::SQLSTATE_NET,
            "Got a packet bigger than 'max_allowed_packet' bytes",
        )
    }

    /// 1156 Got packets out of order.
    pub fn packets_out_of_order() -> Self {
        Self::new(
            codes::ER_NET_PACKETS_OUT_OF_ORDER,
            codes::SQLSTATE_NET,
            "Got packets out of order",
        )
    }

    /// 1210 Incorrect arguments to `what`.
    pub fn wrong_arguments(what: &str) -> Self {
        Self::new(
            codes::ER_WRONG_ARGUMENTS,
            codes::SQLSTATE_GENERAL,
            format!("Incorrect arguments to {what}"),
        )
    }

    /// 1243 Unknown prepared statement handler.
    pub fn unknown_statement(id: u32, command: &str) -> Self {
        Self::new(
            codes::ER_UNKNOWN_STMT_HANDLER,
            codes::SQLSTATE_GENERAL,
            format!("Unknown prepared statement handler ({id}) given to {command}"),
        )
    }

    /// 1390 Prepared statement contains too many placeholders.
    pub fn too_many_placeholders() -> Self {
        Self::new(
            codes::ER_PS_MANY_PARAM,
            codes::SQLSTATE_GENERAL,
            "Prepared statement contains too many placeholders",
        )
    }

    /// 1421 The statement has no open cursor.
    pub fn no_open_cursor(id: u32) -> Self {
        Self::new(
            codes::ER_STMT_HAS_NO_OPEN_CURSOR,
            codes::SQLSTATE_GENERAL,
            format!("The statement ({id}) has no open cursor."),
        )
    }

    /// 1300 Invalid utf8mb4 character string.
    pub fn invalid_utf8() -> Self {
        Self::new(
            codes::ER_INVALID_CHARACTER_STRING,
            codes::SQLSTATE_GENERAL,
            "Invalid utf8mb4 character string",
        )
    }

    /// 1835 Malformed communication packet.
    pub fn malformed_packet() -> Self {
        Self::new(
            codes::ER_MALFORMED_PACKET,
            codes::SQLSTATE_GENERAL,
            "Malformed communication packet.",
        )
    }

    /// 4031 idle disconnect.
    pub fn interaction_timeout() -> Self {
        Self::new(
            codes::ER_CLIENT_INTERACTION_TIMEOUT,
            codes::SQLSTATE_GENERAL,
            "The client was disconnected by the server because of inactivity. \
             See wait_timeout and interactive_timeout for configuring this behavior.",
        )
    }
}

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ERROR {} ({}): {}",
            self.code,
            self.sqlstate_str(),
            self.message
        )
    }
}

impl std::error::Error for ServerError {}

/// Everything that can go wrong below the command level.
#[derive(Debug, thiserror::Error)]
pub enum ProtocolError {
    /// The socket failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// The peer closed the connection, possibly in the middle of a packet.
    #[error("connection closed by peer")]
    ConnectionClosed,
    /// A logical packet exceeded `max_allowed_packet` (error 1153).
    #[error("packet of at least {size} bytes exceeds max_allowed_packet {limit}")]
    PacketTooLarge {
        /// Bytes announced or received so far.
        size: usize,
        /// The limit in force.
        limit: usize,
    },
    /// A packet carried an unexpected sequence id (error 1156).
    #[error("packet sequence id {got}, expected {expected}")]
    OutOfOrder {
        /// Sequence id the server expected.
        expected: u8,
        /// Sequence id received.
        got: u8,
    },
    /// A payload ended before a field it announced.
    #[error("truncated {what}")]
    Truncated {
        /// The field being decoded.
        what: &'static str,
    },
    /// A payload was well framed but its content is invalid.
    #[error("malformed {what}")]
    Malformed {
        /// What was wrong.
        what: &'static str,
    },
    /// The peer did not answer within the configured time.
    #[error("timed out waiting for the client")]
    Timeout,
    /// TLS certificate setup or the TLS handshake failed.
    #[error("TLS error: {0}")]
    Tls(String),
    /// RSA key generation, loading or decryption failed.
    #[error("RSA key error: {0}")]
    Rsa(String),
}

impl ProtocolError {
    /// True when the error means the peer is gone and nothing can be sent.
    pub fn is_disconnect(&self) -> bool {
        matches!(self, ProtocolError::ConnectionClosed | ProtocolError::Io(_))
    }

    /// The `ERR` packet to send before closing, if the connection is still usable.
    pub fn to_server_error(&self) -> Option<ServerError> {
        match self {
            ProtocolError::PacketTooLarge { .. } => Some(ServerError::packet_too_large()),
            ProtocolError::OutOfOrder { .. } => Some(ServerError::packets_out_of_order()),
            ProtocolError::Truncated { .. } | ProtocolError::Malformed { .. } => {
                Some(ServerError::bad_handshake())
            }
            _ => None,
        }
    }
}
