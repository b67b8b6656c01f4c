//! A minimal synchronous MySQL client speaking raw packets, for tests that
//! need control over every byte.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use basalt_protocol::auth::native_scramble_response;
use basalt_protocol::packet::{put_lenenc_bytes, put_nul_bytes, Decoder};
use basalt_protocol::Capabilities;

pub const CLIENT_CAPS: Capabilities = Capabilities(
    Capabilities::LONG_PASSWORD.0
        | Capabilities::LONG_FLAG.0
        | Capabilities::PROTOCOL_41.0
        | Capabilities::TRANSACTIONS.0
        | Capabilities::SECURE_CONNECTION.0
        | Capabilities::MULTI_STATEMENTS.0
        | Capabilities::MULTI_RESULTS.0
        | Capabilities::PS_MULTI_RESULTS.0
        | Capabilities::PLUGIN_AUTH.0
        | Capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA.0
        | Capabilities::CONNECT_ATTRS.0,
);

#[derive(Debug)]
pub struct Greeting {
    pub version: String,
    pub connection_id: u32,
    pub scramble: Vec<u8>,
    pub capabilities: u32,
    pub charset: u8,
    pub status: u16,
    pub plugin: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    Ok {
        affected: u64,
        last_id: u64,
        status: u16,
        warnings: u16,
        info: Vec<u8>,
    },
    Err {
        code: u16,
        state: String,
        message: String,
    },
    Rows {
        columns: Vec<Vec<u8>>,
        rows: Vec<Vec<u8>>,
        status: u16,
        warnings: u16,
    },
}

impl Reply {
    pub fn err_code(&self) -> Option<u16> {
        match self {
            Reply::Err { code, .. } => Some(*code),
            _ => None,
        }
    }

    pub fn status(&self) -> u16 {
        match self {
            Reply::Ok { status, .. } | Reply::Rows { status, .. } => *status,
            Reply::Err { .. } => 0,
        }
    }
}

pub struct RawConn {
    pub stream: TcpStream,
    pub seq: u8,
    pub deprecate_eof: bool,
    pub greeting: Greeting,
}

pub fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).expect("tcp connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.set_nodelay(true).unwrap();
    s
}

pub fn read_packet(stream: &mut TcpStream) -> std::io::Result<(u8, Vec<u8>)> {
    let mut payload = Vec::new();
    let mut first_seq = None;
    loop {
        let mut h = [0u8; 4];
        stream.read_exact(&mut h)?;
        let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
        first_seq.get_or_insert(h[3]);
        let at = payload.len();
        payload.resize(at + len, 0);
        stream.read_exact(&mut payload[at..])?;
        if len < 0xFF_FFFF {
            return Ok((first_seq.unwrap_or(0), payload));
        }
    }
}

pub fn frame(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 4);
    let l = (payload.len() as u32).to_le_bytes();
    out.extend_from_slice(&[l[0], l[1], l[2], seq]);
    out.extend_from_slice(payload);
    out
}

pub fn parse_greeting(p: &[u8]) -> Greeting {
    let mut d = Decoder::new(p);
    assert_eq!(d.u8("proto").unwrap(), 10, "greeting protocol version");
    let version = String::from_utf8(d.nul_bytes("ver").unwrap().to_vec()).unwrap();
    let connection_id = d.u32("id").unwrap();
    let mut scramble = d.take(8, "s1").unwrap().to_vec();
    d.u8("filler").unwrap();
    let lo = d.u16("caps").unwrap();
    let charset = d.u8("cs").unwrap();
    let status = d.u16("status").unwrap();
    let hi = d.u16("caps").unwrap();
    let len = d.u8("len").unwrap();
    d.skip(10, "reserved").unwrap();
    let part2 = d.take(usize::from(len.max(21) - 8), "s2").unwrap();
    scramble.extend_from_slice(&part2[..part2.len() - 1]);
    let plugin = String::from_utf8(d.nul_bytes("plugin").unwrap().to_vec()).unwrap();
    Greeting {
        version,
        connection_id,
        scramble,
        capabilities: u32::from(lo) | u32::from(hi) << 16,
        charset,
        status,
        plugin,
    }
}

pub fn handshake_response(
    caps: Capabilities,
    user: &str,
    auth: &[u8],
    db: Option<&str>,
) -> Vec<u8> {
    handshake_response_for("mysql_native_password", caps, user, auth, db)
}

/// RSA full-authentication payload: `(password || NUL) XOR scramble`, encrypted.
pub fn rsa_password(keys: &basalt_protocol::RsaKeys, password: &str, scramble: &[u8]) -> Vec<u8> {
    let mut plain = format!("{password}\0").into_bytes();
    for (b, k) in plain.iter_mut().zip(scramble.iter().cycle()) {
        *b ^= k;
    }
    keys.encrypt(&plain).unwrap()
}

/// A HandshakeResponse41 whose auth response is for `plugin`.
pub fn handshake_response_for(
    plugin: &str,
    caps: Capabilities,
    user: &str,
    auth: &[u8],
    db: Option<&str>,
) -> Vec<u8> {
    let mut caps = caps;
    if db.is_some() {
        caps = caps | Capabilities::CONNECT_WITH_DB;
    }
    let mut p = Vec::new();
    p.extend_from_slice(&caps.0.to_le_bytes());
    p.extend_from_slice(&(16u32 << 20).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&[0; 23]);
    put_nul_bytes(&mut p, user.as_bytes());
    put_lenenc_bytes(&mut p, auth);
    if let Some(db) = db {
        put_nul_bytes(&mut p, db.as_bytes());
    }
    put_nul_bytes(&mut p, plugin.as_bytes());
    let mut attrs = Vec::new();
    put_lenenc_bytes(&mut attrs, b"_client_name");
    put_lenenc_bytes(&mut attrs, b"basalt-raw-test");
    put_lenenc_bytes(&mut p, &attrs);
    p
}

impl RawConn {
    /// Logs in with mysql_native_password (answering an auth switch to it).
    pub fn login(addr: SocketAddr, user: &str, pass: &str, deprecate_eof: bool) -> Self {
        Self::try_login(addr, user, pass, deprecate_eof, None).expect("login")
    }

    pub fn try_login(
        addr: SocketAddr,
        user: &str,
        pass: &str,
        deprecate_eof: bool,
        db: Option<&str>,
    ) -> Result<Self, Reply> {
        let mut stream = connect(addr);
        let (seq, p) = read_packet(&mut stream).expect("greeting");
        assert_eq!(seq, 0);
        let greeting = parse_greeting(&p);
        let mut caps = CLIENT_CAPS;
        if deprecate_eof {
            caps = caps | Capabilities::DEPRECATE_EOF;
        }
        let auth = native_scramble_response(pass, &greeting.scramble);
        stream
            .write_all(&frame(1, &handshake_response(caps, user, &auth, db)))
            .unwrap();
        let mut conn = RawConn {
            stream,
            seq: 2,
            deprecate_eof,
            greeting,
        };
        loop {
            let (seq, p) = conn.read().expect("auth reply");
            match p.first() {
                Some(0x00) => return Ok(conn),
                Some(0xFF) => return Err(parse_err(&p)),
                Some(0xFE) => {
                    // Auth switch: answer for the named plugin with its scramble.
                    let mut d = Decoder::new(&p[1..]);
                    let plugin = d.nul_bytes("plugin").unwrap().to_vec();
                    let scramble = d.nul_bytes_or_rest().to_vec();
                    assert_eq!(
                        plugin, b"mysql_native_password",
                        "raw client only speaks native"
                    );
                    let auth = native_scramble_response(pass, &scramble);
                    conn.write(seq + 1, &auth);
                }
                other => panic!("unexpected auth packet {other:?}"),
            }
        }
    }

    pub fn read(&mut self) -> std::io::Result<(u8, Vec<u8>)> {
        let (seq, p) = read_packet(&mut self.stream)?;
        // A packet of n full chunks used n extra sequence ids.
        let chunks = (p.len() / 0xFF_FFFF) as u8;
        self.seq = seq.wrapping_add(chunks).wrapping_add(1);
        Ok((seq, p))
    }

    pub fn write(&mut self, seq: u8, payload: &[u8]) {
        self.stream.write_all(&frame(seq, payload)).unwrap();
        self.seq = seq.wrapping_add(1);
    }

    /// Sends a command, reporting a closed connection instead of panicking.
    pub fn try_send(&mut self, payload: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(&frame(0, payload))?;
        self.seq = 1;
        Ok(())
    }

    /// Sends a command (sequence id 0).
    pub fn send(&mut self, payload: &[u8]) {
        self.write(0, payload);
    }

    pub fn command(&mut self, payload: &[u8]) -> Reply {
        self.send(payload);
        self.read_reply()
    }

    pub fn query(&mut self, sql: &str) -> Reply {
        let mut p = vec![0x03];
        p.extend_from_slice(sql.as_bytes());
        self.command(&p)
    }

    /// Reads one reply (OK, ERR or a whole result set), checking that
    /// sequence ids increase by one.
    pub fn read_reply(&mut self) -> Reply {
        let expected = self.seq;
        let (seq, p) = self.read().expect("reply");
        assert_eq!(seq, expected, "reply sequence id");
        match p[0] {
            0x00 => parse_ok(&p),
            0xFF => parse_err(&p),
            _ => {
                let n = Decoder::new(&p).lenenc_int("count").unwrap() as usize;
                let mut columns = Vec::new();
                for _ in 0..n {
                    columns.push(self.next_packet());
                }
                if !self.deprecate_eof {
                    let eof = self.next_packet();
                    assert_eq!(eof[0], 0xFE, "EOF after column definitions");
                    assert_eq!(eof.len(), 5);
                }
                let mut rows = Vec::new();
                loop {
                    let p = self.next_packet();
                    if p[0] == 0xFE && p.len() < 9 {
                        let (status, warnings) = self.parse_end(&p);
                        return Reply::Rows {
                            columns,
                            rows,
                            status,
                            warnings,
                        };
                    }
                    if p[0] == 0xFF {
                        return parse_err(&p);
                    }
                    rows.push(p);
                }
            }
        }
    }

    /// Parses an end-of-rows packet per the negotiated EOF style.
    pub fn parse_end(&self, p: &[u8]) -> (u16, u16) {
        if self.deprecate_eof {
            match parse_ok(p) {
                Reply::Ok {
                    status, warnings, ..
                } => (status, warnings),
                _ => unreachable!(),
            }
        } else {
            assert_eq!(p.len(), 5, "classic EOF packet");
            (
                u16::from_le_bytes([p[3], p[4]]),
                u16::from_le_bytes([p[1], p[2]]),
            )
        }
    }

    pub fn next_packet(&mut self) -> Vec<u8> {
        let expected = self.seq;
        let (seq, p) = self.read().expect("packet");
        assert_eq!(seq, expected, "sequence id");
        p
    }

    /// Prepares `sql`; returns (statement id, columns, params).
    pub fn prepare(&mut self, sql: &str) -> Result<(u32, u16, u16), Reply> {
        let mut p = vec![0x16];
        p.extend_from_slice(sql.as_bytes());
        self.send(&p);
        let first = self.next_packet();
        if first[0] == 0xFF {
            return Err(parse_err(&first));
        }
        let mut d = Decoder::new(&first[1..]);
        let id = d.u32("id").unwrap();
        let cols = d.u16("cols").unwrap();
        let params = d.u16("params").unwrap();
        for n in [params, cols] {
            if n > 0 {
                for _ in 0..n {
                    self.next_packet();
                }
                if !self.deprecate_eof {
                    assert_eq!(self.next_packet()[0], 0xFE);
                }
            }
        }
        Ok((id, cols, params))
    }
}

pub fn parse_ok(p: &[u8]) -> Reply {
    let mut d = Decoder::new(&p[1..]);
    let affected = d.lenenc_int("affected").unwrap();
    let last_id = d.lenenc_int("last id").unwrap();
    let status = d.u16("status").unwrap();
    let warnings = d.u16("warnings").unwrap();
    let info = if d.is_empty() {
        Vec::new()
    } else {
        d.lenenc_bytes("info").unwrap().to_vec()
    };
    Reply::Ok {
        affected,
        last_id,
        status,
        warnings,
        info,
    }
}

pub fn parse_err(p: &[u8]) -> Reply {
    assert_eq!(p[0], 0xFF);
    let code = u16::from_le_bytes([p[1], p[2]]);
    assert_eq!(p[3], b'#', "ERR packets carry a SQLSTATE marker");
    Reply::Err {
        code,
        state: String::from_utf8_lossy(&p[4..9]).into_owned(),
        message: String::from_utf8_lossy(&p[9..]).into_owned(),
    }
}

/// Decodes text-protocol cells of a row.
pub fn text_cells(row: &[u8]) -> Vec<Option<Vec<u8>>> {
    let mut d = Decoder::new(row);
    let mut cells = Vec::new();
    while !d.is_empty() {
        if d.peek_u8() == Some(0xFB) {
            d.u8("null").unwrap();
            cells.push(None);
        } else {
            cells.push(Some(d.lenenc_bytes("cell").unwrap().to_vec()));
        }
    }
    cells
}

/// Reads until the server closes the connection; true if it did within the timeout.
pub fn closed_by_server(stream: &mut TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}
