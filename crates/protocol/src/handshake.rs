//! Connection phase packets: HandshakeV10, HandshakeResponse41,
//! AuthSwitchRequest, AuthMoreData and the COM_CHANGE_USER payload.
//!
//! ```text
//! HandshakeV10 (server -> client, seq 0)
//!   int<1> 10 | string<NUL> server version | int<4> connection id
//!   scramble[0..8] | 0x00 | int<2> capabilities (low)
//!   int<1> charset | int<2> status | int<2> capabilities (high)
//!   int<1> 21 (scramble length + 1) | 10 x 0x00
//!   scramble[8..20] | 0x00 | string<NUL> auth plugin name
//!
//! HandshakeResponse41 (client -> server, seq 1)
//!   int<4> capabilities | int<4> max packet | int<1> charset | 23 x 0x00
//!   string<NUL> user
//!   auth response: lenenc (PLUGIN_AUTH_LENENC_CLIENT_DATA)
//!                | int<1> len + bytes (SECURE_CONNECTION) | string<NUL>
//!   [string<NUL> database]        if CONNECT_WITH_DB
//!   [string<NUL> plugin name]     if PLUGIN_AUTH
//!   [lenenc total, (lenenc key, lenenc value)*] if CONNECT_ATTRS
//! ```

use std::collections::BTreeMap;

use crate::auth::{AuthPlugin, Scramble};
use crate::column::CHARSET_UTF8MB4_0900_AI_CI;
use crate::error::ProtocolError;
use crate::flags::{Capabilities, StatusFlags};
use crate::packet::{put_nul_bytes, utf8, Decoder};

/// The server greeting.
#[derive(Debug, Clone)]
pub struct HandshakeV10<'a> {
    /// Version string shown to clients.
    pub server_version: &'a str,
    /// Connection id.
    pub connection_id: u32,
    /// Nonce for this connection.
    pub scramble: &'a Scramble,
    /// Capabilities offered.
    pub capabilities: Capabilities,
    /// Default collation id.
    pub charset: u8,
    /// Initial status flags.
    pub status: StatusFlags,
    /// Plugin the scramble is first offered for.
    pub plugin: AuthPlugin,
}

impl HandshakeV10<'_> {
    /// Appends the payload.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let s = &self.scramble.0;
        out.push(10);
        // A NUL inside the version would end it early on the client side.
        let version: Vec<u8> = self.server_version.bytes().filter(|&b| b != 0).collect();
        put_nul_bytes(out, &version);
        out.extend_from_slice(&self.connection_id.to_le_bytes());
        out.extend_from_slice(&s[..8]);
        out.push(0);
        let caps = self.capabilities.0.to_le_bytes();
        out.extend_from_slice(&caps[..2]);
        out.push(self.charset);
        out.extend_from_slice(&self.status.0.to_le_bytes());
        out.extend_from_slice(&caps[2..]);
        out.push(s.len() as u8 + 1);
        out.extend_from_slice(&[0; 10]);
        out.extend_from_slice(&s[8..]);
        out.push(0);
        put_nul_bytes(out, self.plugin.name().as_bytes());
    }
}

/// Default collation announced in the greeting (`utf8mb4_0900_ai_ci`).
pub const DEFAULT_CHARSET: u8 = CHARSET_UTF8MB4_0900_AI_CI as u8;

/// A parsed HandshakeResponse41.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeResponse {
    /// Capabilities the client asked for (not yet intersected).
    pub capabilities: Capabilities,
    /// Client's max packet size.
    pub max_packet: u32,
    /// Client's collation id.
    pub charset: u8,
    /// User name.
    pub user: String,
    /// Auth response for `plugin`.
    pub auth_response: Vec<u8>,
    /// Requested schema.
    pub database: Option<String>,
    /// Plugin the auth response was computed for; `None` when the client did
    /// not say (pre-plugin clients use `mysql_native_password`).
    pub plugin: Option<Vec<u8>>,
    /// Connection attributes.
    pub attrs: BTreeMap<String, String>,
}

/// Length of an SSLRequest packet (a truncated HandshakeResponse41).
pub const SSL_REQUEST_LEN: usize = 32;

impl HandshakeResponse {
    /// Parses the client's answer to the greeting.
    pub fn parse(payload: &[u8]) -> Result<Self, ProtocolError> {
        let mut d = Decoder::new(payload);
        let capabilities = Capabilities(d.u32("client capabilities")?);
        if !capabilities.contains(Capabilities::PROTOCOL_41) {
            return Err(ProtocolError::Malformed {
                what: "handshake response (pre-4.1 protocol)",
            });
        }
        let max_packet = d.u32("max packet")?;
        let charset = d.u8("charset")?;
        d.skip(23, "handshake filler")?;
        let user = utf8(d.nul_bytes("user name")?, "user name")?.to_owned();
        let auth_response = read_auth_response(&mut d, capabilities)?;
        let database = if capabilities.contains(Capabilities::CONNECT_WITH_DB) && !d.is_empty() {
            let db = utf8(d.nul_bytes_or_rest(), "database name")?;
            (!db.is_empty()).then(|| db.to_owned())
        } else {
            None
        };
        let plugin = if capabilities.contains(Capabilities::PLUGIN_AUTH) && !d.is_empty() {
            Some(d.nul_bytes_or_rest().to_vec())
        } else {
            None
        };
        let attrs = if capabilities.contains(Capabilities::CONNECT_ATTRS) && !d.is_empty() {
            read_attrs(&mut d)?
        } else {
            BTreeMap::new()
        };
        Ok(HandshakeResponse {
            capabilities,
            max_packet,
            charset,
            user,
            auth_response,
            database,
            plugin,
            attrs,
        })
    }
}

fn read_auth_response(d: &mut Decoder<'_>, caps: Capabilities) -> Result<Vec<u8>, ProtocolError> {
    const W: &str = "auth response";
    Ok(
        if caps.contains(Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA) {
            d.lenenc_bytes(W)?.to_vec()
        } else if caps.contains(Capabilities::SECURE_CONNECTION) {
            let n = d.u8(W)?;
            d.take(usize::from(n), W)?.to_vec()
        } else {
            d.nul_bytes(W)?.to_vec()
        },
    )
}

fn read_attrs(d: &mut Decoder<'_>) -> Result<BTreeMap<String, String>, ProtocolError> {
    const W: &str = "connection attributes";
    let total = d.lenenc_int(W)?;
    let total = usize::try_from(total).map_err(|_| ProtocolError::Truncated { what: W })?;
    let mut block = Decoder::new(d.take(total, W)?);
    let mut attrs = BTreeMap::new();
    while !block.is_empty() {
        let k = block.lenenc_bytes(W)?;
        let v = block.lenenc_bytes(W)?;
        attrs.insert(
            String::from_utf8_lossy(k).into_owned(),
            String::from_utf8_lossy(v).into_owned(),
        );
    }
    Ok(attrs)
}

/// A parsed COM_CHANGE_USER payload (after the command byte).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeUser {
    /// New user name.
    pub user: String,
    /// Auth response computed with the connection's current scramble.
    pub auth_response: Vec<u8>,
    /// New schema.
    pub database: Option<String>,
    /// New collation id, if sent.
    pub charset: Option<u16>,
    /// Plugin the response was computed for.
    pub plugin: Option<Vec<u8>>,
    /// New connection attributes.
    pub attrs: BTreeMap<String, String>,
}

impl ChangeUser {
    /// Parses the body of COM_CHANGE_USER under the negotiated capabilities.
    pub fn parse(body: &[u8], caps: Capabilities) -> Result<Self, ProtocolError> {
        let mut d = Decoder::new(body);
        let user = utf8(d.nul_bytes("user name")?, "user name")?.to_owned();
        let auth_response = if caps.contains(Capabilities::SECURE_CONNECTION) {
            let n = d.u8("auth response")?;
            d.take(usize::from(n), "auth response")?.to_vec()
        } else {
            d.nul_bytes("auth response")?.to_vec()
        };
        let db = utf8(d.nul_bytes_or_rest(), "database name")?;
        let database = (!db.is_empty()).then(|| db.to_owned());
        let charset = if d.remaining() >= 2 {
            Some(d.u16("charset")?)
        } else {
            None
        };
        let plugin = if caps.contains(Capabilities::PLUGIN_AUTH) && !d.is_empty() {
            Some(d.nul_bytes_or_rest().to_vec())
        } else {
            None
        };
        let attrs = if caps.contains(Capabilities::CONNECT_ATTRS) && !d.is_empty() {
            read_attrs(&mut d)?
        } else {
            BTreeMap::new()
        };
        Ok(ChangeUser {
            user,
            auth_response,
            database,
            charset,
            plugin,
            attrs,
        })
    }
}

/// Appends an AuthSwitchRequest: `0xFE`, plugin name, scramble + NUL.
pub fn encode_auth_switch(plugin: AuthPlugin, scramble: &Scramble, out: &mut Vec<u8>) {
    out.push(0xFE);
    put_nul_bytes(out, plugin.name().as_bytes());
    put_nul_bytes(out, &scramble.0);
}

/// Appends an AuthMoreData packet: `0x01` + data.
pub fn encode_auth_more_data(data: &[u8], out: &mut Vec<u8>) {
    out.push(0x01);
    out.extend_from_slice(data);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::put_lenenc_bytes;

    fn response(caps: u32, user: &str, auth: &[u8], db: &str, plugin: &str) -> Vec<u8> {
        let mut p = Vec::new();
        p.extend_from_slice(&caps.to_le_bytes());
        p.extend_from_slice(&(1u32 << 24).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&[0; 23]);
        put_nul_bytes(&mut p, user.as_bytes());
        put_lenenc_bytes(&mut p, auth);
        put_nul_bytes(&mut p, db.as_bytes());
        put_nul_bytes(&mut p, plugin.as_bytes());
        let mut attrs = Vec::new();
        put_lenenc_bytes(&mut attrs, b"_client_name");
        put_lenenc_bytes(&mut attrs, b"libmariadb");
        put_lenenc_bytes(&mut p, &attrs);
        p
    }

    #[test]
    fn parses_a_full_response() {
        let caps = Capabilities::PROTOCOL_41
            | Capabilities::SECURE_CONNECTION
            | Capabilities::PLUGIN_AUTH
            | Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA
            | Capabilities::CONNECT_WITH_DB
            | Capabilities::CONNECT_ATTRS;
        let p = response(caps.0, "root", &[7; 20], "sbtest", "mysql_native_password");
        let r = HandshakeResponse::parse(&p).unwrap();
        assert_eq!(r.user, "root");
        assert_eq!(r.auth_response, vec![7; 20]);
        assert_eq!(r.database.as_deref(), Some("sbtest"));
        assert_eq!(r.plugin.as_deref(), Some(&b"mysql_native_password"[..]));
        assert_eq!(
            r.attrs.get("_client_name").map(String::as_str),
            Some("libmariadb")
        );
        assert_eq!(r.charset, 45);
        // Every proper prefix is rejected or parses to less, never panics.
        for cut in 0..p.len() {
            if let Ok(partial) = HandshakeResponse::parse(&p[..cut]) {
                assert_ne!(partial, r, "prefix of {cut} bytes parsed as the whole");
            }
        }
    }

    #[test]
    fn greeting_layout_carries_the_scramble_in_two_parts() {
        let scramble = Scramble(*b"abcdefghijklmnopqrst");
        let g = HandshakeV10 {
            server_version: "8.0.36-basalt",
            connection_id: 42,
            scramble: &scramble,
            capabilities: Capabilities::SERVER,
            charset: DEFAULT_CHARSET,
            status: StatusFlags::AUTOCOMMIT,
            plugin: AuthPlugin::CachingSha2Password,
        };
        let mut out = Vec::new();
        g.encode(&mut out);
        let mut d = Decoder::new(&out);
        assert_eq!(d.u8("v").unwrap(), 10);
        assert_eq!(d.nul_bytes("ver").unwrap(), b"8.0.36-basalt");
        assert_eq!(d.u32("id").unwrap(), 42);
        assert_eq!(d.take(8, "s1").unwrap(), b"abcdefgh");
        assert_eq!(d.u8("f").unwrap(), 0);
        let lo = d.u16("caps").unwrap();
        assert_eq!(d.u8("cs").unwrap(), 255);
        assert_eq!(d.u16("st").unwrap(), 2);
        let hi = d.u16("caps").unwrap();
        assert_eq!(u32::from(lo) | u32::from(hi) << 16, Capabilities::SERVER.0);
        assert_eq!(d.u8("len").unwrap(), 21);
        d.skip(10, "r").unwrap();
        assert_eq!(d.nul_bytes("s2").unwrap(), b"ijklmnopqrst");
        assert_eq!(d.nul_bytes("p").unwrap(), b"caching_sha2_password");
        assert!(d.is_empty());
        assert!(!Capabilities::SERVER.contains(Capabilities::LOCAL_FILES));
    }
}
