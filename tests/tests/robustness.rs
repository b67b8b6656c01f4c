//! Garbage, truncated and oversized packets against the real server; a
//! normal client must still work afterwards, and the server must keep
//! running.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use basalt_tests::Server;
use mysql::prelude::*;

fn connect(server: &Server) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Reads one packet: (sequence id, payload); `None` when the server closed.
fn read_packet(s: &mut TcpStream) -> Option<(u8, Vec<u8>)> {
    let mut head = [0u8; 4];
    s.read_exact(&mut head).ok()?;
    let len = u32::from_le_bytes([head[0], head[1], head[2], 0]) as usize;
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).ok()?;
    Some((head[3], body))
}

fn packet(seq: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    v.push(seq);
    v.extend_from_slice(payload);
    v
}

/// Logs in as root (empty password) with a hand-built HandshakeResponse41.
fn login(server: &Server) -> TcpStream {
    let mut s = connect(server);
    let (_, greeting) = read_packet(&mut s).expect("greeting");
    assert_eq!(greeting[0], 10, "protocol version 10");
    // PROTOCOL_41 | SECURE_CONNECTION | PLUGIN_AUTH | LONG_PASSWORD | MULTI_RESULTS
    let caps: u32 = 0x200 | 0x8000 | 0x8_0000 | 0x1 | 0x2_0000;
    let mut p = Vec::new();
    p.extend_from_slice(&caps.to_le_bytes());
    p.extend_from_slice(&(1u32 << 24).to_le_bytes());
    p.push(255);
    p.extend_from_slice(&[0u8; 23]);
    p.extend_from_slice(b"root\0");
    p.push(0);
    p.extend_from_slice(b"caching_sha2_password\0");
    s.write_all(&packet(1, &p)).unwrap();
    let (_, ok) = read_packet(&mut s).expect("auth reply");
    assert_eq!(ok[0], 0x00, "OK after login: {ok:?}");
    s
}

fn assert_server_usable(server: &Server) {
    let mut c = server.root();
    let one: i64 = c.query_first("SELECT 1").unwrap().unwrap();
    assert_eq!(one, 1);
}

#[test]
fn garbage_before_and_during_the_handshake() {
    let server = Server::start();
    // Random bytes instead of a handshake response.
    let mut s = connect(&server);
    read_packet(&mut s).expect("greeting");
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    while read_packet(&mut s).is_some() {}
    // A truncated header, then the client vanishes.
    let mut s = connect(&server);
    read_packet(&mut s).expect("greeting");
    s.write_all(&[0x05, 0x00]).unwrap();
    drop(s);
    // A header announcing 16 MiB during authentication (limit 1 MiB).
    let mut s = connect(&server);
    read_packet(&mut s).expect("greeting");
    s.write_all(&[0xff, 0xff, 0xff, 0x01]).unwrap();
    s.write_all(&[0u8; 1024]).unwrap();
    let mut errors = Vec::new();
    while let Some((_, p)) = read_packet(&mut s) {
        errors.push(p);
    }
    assert!(
        errors.iter().all(|p| p.first() == Some(&0xff)),
        "only ERR packets: {errors:?}"
    );
    // Connect and close immediately.
    drop(connect(&server));
    assert_server_usable(&server);
}

#[test]
fn malformed_commands_after_login_get_errors_not_crashes() {
    let server = Server::start();
    let mut s = login(&server);
    let cases: Vec<Vec<u8>> = vec![
        vec![0x03, 0xff, 0xfe, 0x00], // COM_QUERY with invalid UTF-8
        vec![0x17, 0x01],             // COM_STMT_EXECUTE cut short
        vec![0x17, 0x99, 0x99, 0x00, 0x00, 0, 1, 0, 0, 0], // unknown statement id
        vec![0xfe],                   // unknown command byte
        vec![0x16],                   // COM_STMT_PREPARE without text
        b"\x03SELECT '".to_vec(),     // unterminated string
        b"\x03SELECT 1; SELECT 2".to_vec(), // multi without the capability
        vec![0x02, b'n', b'o'],       // COM_INIT_DB of an unknown schema
    ];
    for payload in cases {
        s.write_all(&packet(0, &payload)).unwrap();
        let (_, reply) =
            read_packet(&mut s).unwrap_or_else(|| panic!("server closed after {payload:?}"));
        assert_eq!(reply[0], 0xff, "ERR for {payload:?}, got {reply:?}");
    }
    // The same connection still answers a valid query.
    s.write_all(&packet(0, b"\x03SELECT 41 + 1")).unwrap();
    let (_, first) = read_packet(&mut s).expect("result");
    assert_eq!(first, vec![1], "one column");
    assert_server_usable(&server);
}

#[test]
fn oversized_query_is_refused_with_1153() {
    let server = Server::start_with(&["--max-allowed-packet=64K"]);
    let mut s = login(&server);
    let mut query = b"\x03SELECT '".to_vec();
    query.extend(std::iter::repeat_n(b'x', 100 * 1024));
    query.push(b'\'');
    s.write_all(&packet(0, &query)).unwrap();
    let (_, reply) = read_packet(&mut s).expect("an error before closing");
    assert_eq!(reply[0], 0xff);
    let code = u16::from_le_bytes([reply[1], reply[2]]);
    assert_eq!(code, 1153, "{}", String::from_utf8_lossy(&reply));
    assert!(
        read_packet(&mut s).is_none(),
        "the connection is closed after 1153"
    );
    assert_server_usable(&server);
}
