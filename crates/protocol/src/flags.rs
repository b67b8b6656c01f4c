//! Capability and server-status bit sets.

use std::ops::{BitAnd, BitOr, BitOrAssign};

/// Client/server capability flags (`CLIENT_*`), negotiated in the handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Capabilities(pub u32);

impl Capabilities {
    /// `CLIENT_LONG_PASSWORD`.
    pub const LONG_PASSWORD: Self = Self(1);
    /// `CLIENT_FOUND_ROWS`: affected rows means matched rows.
    pub const FOUND_ROWS: Self = Self(1 << 1);
    /// `CLIENT_LONG_FLAG`: all column flags are sent.
    pub const LONG_FLAG: Self = Self(1 << 2);
    /// `CLIENT_CONNECT_WITH_DB`: the handshake response names a schema.
    pub const CONNECT_WITH_DB: Self = Self(1 << 3);
    /// `CLIENT_NO_SCHEMA`.
    pub const NO_SCHEMA: Self = Self(1 << 4);
    /// `CLIENT_COMPRESS` (not offered by Basalt).
    pub const COMPRESS: Self = Self(1 << 5);
    /// `CLIENT_ODBC`.
    pub const ODBC: Self = Self(1 << 6);
    /// `CLIENT_LOCAL_FILES` (never offered: Basalt refuses LOAD DATA LOCAL).
    pub const LOCAL_FILES: Self = Self(1 << 7);
    /// `CLIENT_IGNORE_SPACE`.
    pub const IGNORE_SPACE: Self = Self(1 << 8);
    /// `CLIENT_PROTOCOL_41`: the only protocol Basalt speaks.
    pub const PROTOCOL_41: Self = Self(1 << 9);
    /// `CLIENT_INTERACTIVE`: idle timeout is `interactive_timeout`.
    pub const INTERACTIVE: Self = Self(1 << 10);
    /// `CLIENT_SSL` (offered when TLS is configured; added at handshake time).
    pub const SSL: Self = Self(1 << 11);
    /// `CLIENT_IGNORE_SIGPIPE`.
    pub const IGNORE_SIGPIPE: Self = Self(1 << 12);
    /// `CLIENT_TRANSACTIONS`: status flags carry transaction state.
    pub const TRANSACTIONS: Self = Self(1 << 13);
    /// `CLIENT_RESERVED`.
    pub const RESERVED: Self = Self(1 << 14);
    /// `CLIENT_SECURE_CONNECTION` (a.k.a. `CLIENT_RESERVED2`): length-prefixed auth data.
    pub const SECURE_CONNECTION: Self = Self(1 << 15);
    /// `CLIENT_MULTI_STATEMENTS`.
    pub const MULTI_STATEMENTS: Self = Self(1 << 16);
    /// `CLIENT_MULTI_RESULTS`.
    pub const MULTI_RESULTS: Self = Self(1 << 17);
    /// `CLIENT_PS_MULTI_RESULTS`.
    pub const PS_MULTI_RESULTS: Self = Self(1 << 18);
    /// `CLIENT_PLUGIN_AUTH`.
    pub const PLUGIN_AUTH: Self = Self(1 << 19);
    /// `CLIENT_CONNECT_ATTRS`.
    pub const CONNECT_ATTRS: Self = Self(1 << 20);
    /// `CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA`.
    pub const PLUGIN_AUTH_LENENC_CLIENT_DATA: Self = Self(1 << 21);
    /// `CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS`.
    pub const CAN_HANDLE_EXPIRED_PASSWORDS: Self = Self(1 << 22);
    /// `CLIENT_SESSION_TRACK` (not offered).
    pub const SESSION_TRACK: Self = Self(1 << 23);
    /// `CLIENT_DEPRECATE_EOF`: OK packets with a 0xFE header replace EOF packets.
    pub const DEPRECATE_EOF: Self = Self(1 << 24);

    /// What Basalt always offers in its handshake (`SSL` is added when TLS is configured).
    pub const SERVER: Self = Self(
        Self::LONG_PASSWORD.0
            | Self::FOUND_ROWS.0
            | Self::LONG_FLAG.0
            | Self::CONNECT_WITH_DB.0
            | Self::NO_SCHEMA.0
            | Self::ODBC.0
            | Self::IGNORE_SPACE.0
            | Self::PROTOCOL_41.0
            | Self::INTERACTIVE.0
            | Self::IGNORE_SIGPIPE.0
            | Self::TRANSACTIONS.0
            | Self::RESERVED.0
            | Self::SECURE_CONNECTION.0
            | Self::MULTI_STATEMENTS.0
            | Self::MULTI_RESULTS.0
            | Self::PS_MULTI_RESULTS.0
            | Self::PLUGIN_AUTH.0
            | Self::CONNECT_ATTRS.0
            | Self::PLUGIN_AUTH_LENENC_CLIENT_DATA.0
            | Self::DEPRECATE_EOF.0,
    );

    /// True when every bit of `other` is set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

impl BitAnd for Capabilities {
    type Output = Self;
    fn bitand(self, rhs: Self) -> Self {
        Self(self.0 & rhs.0)
    }
}

impl BitOr for Capabilities {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

/// Server status flags (`SERVER_*`), carried by OK and EOF packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct StatusFlags(pub u16);

impl StatusFlags {
    /// A transaction is open.
    pub const IN_TRANS: Self = Self(0x0001);
    /// Autocommit mode is on.
    pub const AUTOCOMMIT: Self = Self(0x0002);
    /// Another result follows this one.
    pub const MORE_RESULTS_EXISTS: Self = Self(0x0008);
    /// The query used no good index.
    pub const NO_GOOD_INDEX_USED: Self = Self(0x0010);
    /// The query used no index.
    pub const NO_INDEX_USED: Self = Self(0x0020);
    /// A read-only cursor is open on the statement.
    pub const CURSOR_EXISTS: Self = Self(0x0040);
    /// The cursor has sent its last row.
    pub const LAST_ROW_SENT: Self = Self(0x0080);
    /// A database was dropped.
    pub const DB_DROPPED: Self = Self(0x0100);
    /// `NO_BACKSLASH_ESCAPES` is in `sql_mode`.
    pub const NO_BACKSLASH_ESCAPES: Self = Self(0x0200);
    /// Metadata changed since prepare.
    pub const METADATA_CHANGED: Self = Self(0x0400);
    /// The query was logged as slow.
    pub const QUERY_WAS_SLOW: Self = Self(0x0800);
    /// The statement has OUT parameters.
    pub const PS_OUT_PARAMS: Self = Self(0x1000);
    /// The open transaction is read only.
    pub const IN_TRANS_READONLY: Self = Self(0x2000);
    /// Session state changed.
    pub const SESSION_STATE_CHANGED: Self = Self(0x4000);

    /// True when every bit of `other` is set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// This set without the bits of `other`.
    pub const fn without(self, other: Self) -> Self {
        Self(self.0 & !other.0)
    }
}

impl BitOr for StatusFlags {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

impl BitOrAssign for StatusFlags {
    fn bitor_assign(&mut self, rhs: Self) {
        self.0 |= rhs.0;
    }
}
