//! Wire-level behaviour checked packet by packet with a raw client.

mod common;

use basalt_protocol::packet::{put_lenenc_bytes, Decoder};
use basalt_protocol::value::decode_binary_param;
use basalt_protocol::{ColumnType, Date, DateTime, StatusFlags, Time, Value};
use common::raw::{self, RawConn, Reply};
use common::*;

const AUTOCOMMIT: u16 = StatusFlags::AUTOCOMMIT.0;
const MORE: u16 = StatusFlags::MORE_RESULTS_EXISTS.0;
const CURSOR: u16 = StatusFlags::CURSOR_EXISTS.0;
const LAST_ROW: u16 = StatusFlags::LAST_ROW_SENT.0;

fn err(reply: &Reply) -> (u16, &str) {
    match reply {
        Reply::Err { code, state, .. } => (*code, state.as_str()),
        other => panic!("expected ERR, got {other:?}"),
    }
}

#[test]
fn greeting_announces_what_basalt_supports() {
    let server = TestServer::start();
    let mut s = raw::connect(server.addr);
    let (seq, p) = raw::read_packet(&mut s).unwrap();
    assert_eq!(seq, 0);
    let g = raw::parse_greeting(&p);
    assert_eq!(g.version, "8.0.36-basalt");
    assert_eq!(g.charset, 255);
    assert_eq!(g.plugin, "caching_sha2_password");
    assert_eq!(g.scramble.len(), 20);
    assert!(g.connection_id > 0);
    assert_eq!(g.status, AUTOCOMMIT);
    let caps = basalt_protocol::Capabilities(g.capabilities);
    use basalt_protocol::Capabilities as C;
    for must in [
        C::PROTOCOL_41,
        C::SECURE_CONNECTION,
        C::PLUGIN_AUTH,
        C::PLUGIN_AUTH_LENENC_CLIENT_DATA,
        C::CONNECT_WITH_DB,
        C::CONNECT_ATTRS,
        C::MULTI_STATEMENTS,
        C::MULTI_RESULTS,
        C::PS_MULTI_RESULTS,
        C::TRANSACTIONS,
        C::DEPRECATE_EOF,
        C::SSL,
    ] {
        assert!(caps.contains(must), "missing {must:?}");
    }
    for never in [C::LOCAL_FILES, C::COMPRESS, C::SESSION_TRACK] {
        assert!(!caps.contains(never), "must not offer {never:?}");
    }
    server.stop();

    // Without TLS, CLIENT_SSL is not offered and an SSLRequest is refused.
    let config = basalt_protocol::ProtocolConfig {
        tls: basalt_protocol::TlsSource::Disabled,
        ..test_config()
    };
    let server = TestServer::start_with(config);
    let mut s = raw::connect(server.addr);
    let (_, p) = raw::read_packet(&mut s).unwrap();
    assert!(!C(raw::parse_greeting(&p).capabilities).contains(C::SSL));
    let mut ssl = (raw::CLIENT_CAPS | C::SSL).0.to_le_bytes().to_vec();
    ssl.extend_from_slice(&[0; 28]);
    use std::io::Write;
    s.write_all(&raw::frame(1, &ssl)).unwrap();
    let (_, p) = raw::read_packet(&mut s).unwrap();
    assert_eq!(raw::parse_err(&p).err_code(), Some(1043));
    server.stop();
}

#[test]
fn caching_sha2_wire_exchange_full_then_fast() {
    let server = TestServer::start();
    let keys = test_keys();
    for (round, expect_full) in [(0, true), (1, false)] {
        let mut s = raw::connect(server.addr);
        let (_, p) = raw::read_packet(&mut s).unwrap();
        let g = raw::parse_greeting(&p);
        let auth = basalt_protocol::auth::sha2_scramble_response(SHA2_PASS, &g.scramble);
        let resp = raw::handshake_response_for(
            "caching_sha2_password",
            raw::CLIENT_CAPS,
            SHA2_USER,
            &auth,
            None,
        );
        use std::io::Write;
        s.write_all(&raw::frame(1, &resp)).unwrap();
        let (seq, p) = raw::read_packet(&mut s).unwrap();
        assert_eq!(seq, 2);
        if expect_full {
            assert_eq!(
                p,
                [0x01, 0x04],
                "round {round}: perform_full_authentication"
            );
            s.write_all(&raw::frame(3, &[0x02])).unwrap();
            let (seq, pem) = raw::read_packet(&mut s).unwrap();
            assert_eq!(seq, 4);
            assert_eq!(pem[0], 0x01);
            assert_eq!(&pem[1..], keys.public_pem().as_bytes());
            let cipher = raw::rsa_password(&keys, SHA2_PASS, &g.scramble);
            s.write_all(&raw::frame(5, &cipher)).unwrap();
            let (seq, ok) = raw::read_packet(&mut s).unwrap();
            assert_eq!((seq, ok[0]), (6, 0x00));
        } else {
            assert_eq!(p, [0x01, 0x03], "round {round}: fast_auth_success");
            let (seq, ok) = raw::read_packet(&mut s).unwrap();
            assert_eq!((seq, ok[0]), (3, 0x00));
        }
    }
    // An unknown user sees the same exchange as a real one and is denied at the end.
    let mut s = raw::connect(server.addr);
    let (_, p) = raw::read_packet(&mut s).unwrap();
    let g = raw::parse_greeting(&p);
    let auth = basalt_protocol::auth::sha2_scramble_response("guess", &g.scramble);
    let resp = raw::handshake_response_for(
        "caching_sha2_password",
        raw::CLIENT_CAPS,
        "ghost",
        &auth,
        None,
    );
    use std::io::Write;
    s.write_all(&raw::frame(1, &resp)).unwrap();
    assert_eq!(raw::read_packet(&mut s).unwrap().1, [0x01, 0x04]);
    let cipher = raw::rsa_password(&keys, "guess", &g.scramble);
    s.write_all(&raw::frame(3, &cipher)).unwrap();
    let (seq, p) = raw::read_packet(&mut s).unwrap();
    assert_eq!((seq, raw::parse_err(&p).err_code()), (4, Some(1045)));
    server.stop();
}

#[test]
fn unknown_commands_are_1047_and_the_connection_survives() {
    let server = TestServer::start();
    let mut c = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, true);
    for cmd in [
        &[0x20u8][..],
        &[0x05, b'd', b'b'],
        &[0x08],
        &[0x12, 0, 0],
        &[],
    ] {
        let r = c.command(cmd);
        assert_eq!(err(&r), (1047, "08S01"), "command {cmd:?}");
    }
    assert!(matches!(c.query("select 1"), Reply::Rows { .. }));
    server.stop();
}

#[test]
fn eof_style_follows_client_deprecate_eof_and_more_results_is_set_on_all_but_last() {
    let server = TestServer::start();
    for deprecate in [false, true] {
        let mut c = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, deprecate);
        // read_reply checks the EOF after column definitions in classic mode.
        let Reply::Rows {
            columns,
            rows,
            status,
            ..
        } = c.query("rows 3")
        else {
            panic!()
        };
        assert_eq!((columns.len(), rows.len(), status), (2, 3, AUTOCOMMIT));
        assert_eq!(
            raw::text_cells(&rows[2]),
            vec![Some(b"2".to_vec()), Some(b"row 2".to_vec())]
        );

        c.send(b"\x03select 1; insert into t values (1); rows 0; begin");
        let r1 = c.read_reply();
        assert_eq!(r1.status(), AUTOCOMMIT | MORE);
        let r2 = c.read_reply();
        assert_eq!(
            r2,
            Reply::Ok {
                affected: 3,
                last_id: 42,
                status: AUTOCOMMIT | MORE,
                warnings: 1,
                info: b"Records: 3  Duplicates: 0  Warnings: 1".to_vec()
            }
        );
        let r3 = c.read_reply();
        assert!(matches!(r3, Reply::Rows { ref rows, .. } if rows.is_empty()));
        assert_eq!(r3.status(), AUTOCOMMIT | MORE);
        let r4 = c.read_reply();
        assert_eq!(
            r4.status(),
            AUTOCOMMIT | StatusFlags::IN_TRANS.0,
            "last result has no MORE flag"
        );
        // Status flags come from the session: the transaction is visible in the next reply.
        let Reply::Rows { status, .. } = c.query("select 1") else {
            panic!()
        };
        assert_eq!(status, AUTOCOMMIT | StatusFlags::IN_TRANS.0);
        assert_eq!(c.query("commit").status(), AUTOCOMMIT);

        // Error mid-batch: previous result flagged MORE, then ERR, nothing after.
        c.send(b"\x03select 1; error 1062; select 1");
        assert_eq!(c.read_reply().status(), AUTOCOMMIT | MORE);
        assert_eq!(err(&c.read_reply()).0, 1062);
        let Reply::Rows { .. } = c.query("select 1") else {
            panic!("out of sync")
        };
    }
    server.stop();
}

#[test]
fn backend_misuse_becomes_an_error_not_a_broken_stream() {
    let server = TestServer::start();
    let mut c = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, false);
    // A value that does not fit TINYINT: metadata was sent, then ERR in place of the row.
    assert_eq!(err(&c.query("badrow")).0, 1105);
    // A command that produced nothing is an error, never a blind OK.
    assert_eq!(err(&c.query("noresult")).0, 1105);
    assert_eq!(err(&c.query("")).0, 1065);
    assert!(matches!(c.query("select 1"), Reply::Rows { .. }));
    server.stop();
}

#[test]
fn set_option_toggles_multi_statements() {
    let server = TestServer::start();
    for deprecate in [false, true] {
        let mut c = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, deprecate);
        c.send(&[0x1B, 1, 0]);
        let p = c.next_packet();
        assert_eq!(p[0], 0xFE);
        assert_eq!(c.parse_end(&p).0, AUTOCOMMIT);
        assert_eq!(err(&c.query("select 1; select 1")).0, 1064);
        c.send(&[0x1B, 0, 0]);
        assert_eq!(c.next_packet()[0], 0xFE);
        c.send(b"\x03select 1; select 1");
        assert_eq!(c.read_reply().status(), AUTOCOMMIT | MORE);
        assert_eq!(c.read_reply().status(), AUTOCOMMIT);
        assert_eq!(err(&c.command(&[0x1B, 7, 0])).0, 1047);
    }
    server.stop();
}

#[test]
fn field_list_statistics_ping_init_db_and_kill() {
    let server = TestServer::start();
    let mut c = RawConn::login(server.addr, "root", "", false);
    assert_eq!(c.command(b"\x02shop").status(), AUTOCOMMIT);
    assert_eq!(err(&c.command(b"\x02nosuchdb")).0, 1049);
    c.send(b"\x04t1\0");
    let col = c.next_packet();
    let mut d = Decoder::new(&col);
    let fields: Vec<Vec<u8>> = (0..6)
        .map(|_| d.lenenc_bytes("f").unwrap().to_vec())
        .collect();
    assert_eq!(fields, [&b"def"[..], b"shop", b"t1", b"t1", b"id", b"id"]);
    d.skip(13, "fixed").unwrap();
    assert_eq!(
        d.take_rest(),
        [0xFB],
        "COM_FIELD_LIST columns carry a NULL default"
    );
    let second = c.next_packet();
    let mut d = Decoder::new(&second);
    let names: Vec<Vec<u8>> = (0..6)
        .map(|_| d.lenenc_bytes("f").unwrap().to_vec())
        .collect();
    assert_eq!(names[4], b"name");
    let end = c.next_packet();
    assert_eq!(end[0], 0xFE);
    assert_eq!(err(&c.command(b"\x04nope\0")).0, 1146);
    c.send(&[0x09]);
    assert!(c.next_packet().starts_with(b"Uptime: "));
    assert_eq!(c.command(&[0x0E]).status(), AUTOCOMMIT);

    // COM_PROCESS_KILL of another connection closes it; unknown ids are 1094.
    let mut victim = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, false);
    let id = victim.greeting.connection_id;
    let mut kill = vec![0x0C];
    kill.extend_from_slice(&id.to_le_bytes());
    assert!(matches!(c.command(&kill), Reply::Ok { .. }));
    assert!(
        raw::closed_by_server(&mut victim.stream),
        "killed connection must close"
    );
    let mut kill = vec![0x0C];
    kill.extend_from_slice(&999_999u32.to_le_bytes());
    assert_eq!(err(&c.command(&kill)), (1094, "HY000"));
    // A non-root user may not kill root's connection.
    let mut other = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, false);
    let mut kill = vec![0x0C];
    kill.extend_from_slice(&c.greeting.connection_id.to_le_bytes());
    assert_eq!(err(&other.command(&kill)).0, 1095);
    assert!(matches!(c.query("select 1"), Reply::Rows { .. }));
    server.stop();
}

/// Builds a COM_STMT_EXECUTE packet.
fn execute_packet(id: u32, flags: u8, params: &[(u8, u8, Option<Vec<u8>>)], bind: bool) -> Vec<u8> {
    let mut p = vec![0x17];
    p.extend_from_slice(&id.to_le_bytes());
    p.push(flags);
    p.extend_from_slice(&1u32.to_le_bytes());
    if !params.is_empty() {
        let mut bitmap = vec![0u8; params.len().div_ceil(8)];
        for (i, (_, _, v)) in params.iter().enumerate() {
            if v.is_none() {
                bitmap[i / 8] |= 1 << (i % 8);
            }
        }
        p.extend_from_slice(&bitmap);
        p.push(u8::from(bind));
        if bind {
            for (t, f, _) in params {
                p.extend_from_slice(&[*t, *f]);
            }
        }
        for (_, _, v) in params {
            if let Some(v) = v {
                p.extend_from_slice(v);
            }
        }
    }
    p
}

fn lenenc(b: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    put_lenenc_bytes(&mut v, b);
    v
}

/// Decodes a binary result row against its column definitions.
fn binary_row(columns: &[Vec<u8>], row: &[u8]) -> Vec<Value> {
    assert_eq!(row[0], 0x00, "binary row header");
    let n = columns.len();
    let bitmap = &row[1..1 + (n + 9) / 8];
    let mut d = Decoder::new(&row[1 + (n + 9) / 8..]);
    let mut values = Vec::new();
    for (i, col) in columns.iter().enumerate() {
        let mut cd = Decoder::new(col);
        for _ in 0..6 {
            cd.lenenc_bytes("s").unwrap();
        }
        cd.lenenc_int("fixed").unwrap();
        cd.u16("cs").unwrap();
        cd.u32("len").unwrap();
        let ty = cd.u8("type").unwrap();
        let flags = cd.u16("flags").unwrap();
        let bit = i + 2;
        if bitmap[bit / 8] & (1 << (bit % 8)) != 0 {
            values.push(Value::Null);
        } else {
            values.push(decode_binary_param(ty, flags & 32 != 0, &mut d).unwrap());
        }
    }
    assert!(d.is_empty(), "trailing bytes in binary row");
    values
}

#[test]
fn every_binary_parameter_type_decodes() {
    let server = TestServer::start();
    let mut c = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, true);
    let date = |y: u16, m: u8, d: u8| {
        let mut v = vec![4];
        v.extend_from_slice(&y.to_le_bytes());
        v.extend_from_slice(&[m, d]);
        v
    };
    let dt11 = {
        let mut v = vec![11];
        v.extend_from_slice(&2023u16.to_le_bytes());
        v.extend_from_slice(&[7, 14, 10, 20, 30]);
        v.extend_from_slice(&123_456u32.to_le_bytes());
        v
    };
    let dt7 = {
        let mut v = vec![7];
        v.extend_from_slice(&1970u16.to_le_bytes());
        v.extend_from_slice(&[1, 1, 0, 0, 1]);
        v
    };
    let time12 = {
        let mut v = vec![12, 1];
        v.extend_from_slice(&2u32.to_le_bytes());
        v.extend_from_slice(&[3, 4, 5]);
        v.extend_from_slice(&6u32.to_le_bytes());
        v
    };
    let d = Date {
        year: 2024,
        month: 12,
        day: 25,
    };
    #[rustfmt::skip]
    let cases: Vec<(u8, u8, Option<Vec<u8>>, Value)> = vec![
        (1, 0, Some(vec![0xFB]), Value::Int(-5)),
        (1, 0x80, Some(vec![250]), Value::UInt(250)),
        (2, 0, Some((-300i16).to_le_bytes().to_vec()), Value::Int(-300)),
        (2, 0x80, Some(65000u16.to_le_bytes().to_vec()), Value::UInt(65000)),
        (3, 0, Some((-70000i32).to_le_bytes().to_vec()), Value::Int(-70000)),
        (9, 0, Some(8_000_000i32.to_le_bytes().to_vec()), Value::Int(8_000_000)),
        (3, 0x80, Some(u32::MAX.to_le_bytes().to_vec()), Value::UInt(u64::from(u32::MAX))),
        (8, 0, Some(i64::MIN.to_le_bytes().to_vec()), Value::Int(i64::MIN)),
        (8, 0x80, Some(u64::MAX.to_le_bytes().to_vec()), Value::UInt(u64::MAX)),
        (4, 0, Some(0.5f32.to_le_bytes().to_vec()), Value::Float(0.5)),
        (5, 0, Some((-1e-300f64).to_le_bytes().to_vec()), Value::Double(-1e-300)),
        (0, 0, Some(lenenc(b"1.5")), Value::Decimal("1.5".into())),
        (246, 0, Some(lenenc(b"-0.25")), Value::Decimal("-0.25".into())),
        (15, 0, Some(lenenc(b"varchar")), Value::from("varchar")),
        (253, 0, Some(lenenc("vär".as_bytes())), Value::from("vär")),
        (254, 0, Some(lenenc(b"char")), Value::from("char")),
        (249, 0, Some(lenenc(&[0, 1])), Value::Bytes(vec![0, 1])),
        (252, 0, Some(lenenc(&[9; 300])), Value::Bytes(vec![9; 300])),
        (250, 0, Some(lenenc(b"m")), Value::from("m")),
        (251, 0, Some(lenenc(b"")), Value::from("")),
        (245, 0, Some(lenenc(b"{\"k\":[1]}")), Value::from("{\"k\":[1]}")),
        (16, 0, Some(lenenc(&[0x81])), Value::Bytes(vec![0x81])),
        (247, 0, Some(lenenc(b"red")), Value::from("red")),
        (248, 0, Some(lenenc(b"a,b")), Value::from("a,b")),
        (13, 0, Some(2024u16.to_le_bytes().to_vec()), Value::UInt(2024)),
        (10, 0, Some(date(2024, 12, 25)), Value::Date(d)),
        (10, 0, Some(vec![0]), Value::Date(Date::default())),
        (12, 0, Some(dt11), Value::DateTime(DateTime { date: Date { year: 2023, month: 7, day: 14 }, hour: 10, minute: 20, second: 30, micros: 123_456 })),
        (7, 0, Some(dt7), Value::DateTime(DateTime { date: Date { year: 1970, month: 1, day: 1 }, hour: 0, minute: 0, second: 1, micros: 0 })),
        (12, 0, Some(date(2024, 12, 25)), Value::DateTime(DateTime { date: d, ..DateTime::default() })),
        (11, 0, Some(time12), Value::Time(Time { negative: true, days: 2, hours: 3, minutes: 4, seconds: 5, micros: 6 })),
        (11, 0, Some(vec![0]), Value::Time(Time::default())),
        (6, 0, Some(Vec::new()), Value::Null),
        (253, 0, None, Value::Null),
        (8, 0, None, Value::Null),
    ];
    let sql = format!("echo_params {}", vec!["?"; cases.len()].join(","));
    let (id, _, nparams) = c.prepare(&sql).unwrap();
    assert_eq!(usize::from(nparams), cases.len());
    let params: Vec<(u8, u8, Option<Vec<u8>>)> = cases
        .iter()
        .map(|(t, f, v, _)| (*t, *f, v.clone()))
        .collect();
    let expected: Vec<Value> = cases.iter().map(|c| c.3.clone()).collect();
    for bind in [true, false] {
        // The second round sends new-params-bound = 0: types are reused.
        let Reply::Rows { columns, rows, .. } = c.command(&execute_packet(id, 0, &params, bind))
        else {
            panic!("execute failed (bind = {bind})")
        };
        assert_eq!(rows.len(), 1);
        let got = binary_row(&columns, &rows[0]);
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(g, e, "parameter {i} (type {})", cases[i].0);
        }
        assert_eq!(got.len(), expected.len());
    }
    // The type column the backend echoes for a NULL parameter is MYSQL_TYPE_NULL.
    assert_eq!(ColumnType::from_u8(6), Some(ColumnType::Null));
    server.stop();
}

#[test]
fn malformed_execute_packets_are_1210_and_unknown_statements_1243() {
    let server = TestServer::start();
    let mut c = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, false);
    let (id, _, _) = c.prepare("echo_params ?, ?").unwrap();
    let good = [
        (8u8, 0u8, Some(5i64.to_le_bytes().to_vec())),
        (253, 0, Some(lenenc(b"x"))),
    ];
    // First execution without types.
    assert_eq!(
        err(&c.command(&execute_packet(id, 0, &good, false))),
        (1210, "HY000")
    );
    // A string that claims more bytes than are present.
    let lying = [
        (8u8, 0u8, Some(5i64.to_le_bytes().to_vec())),
        (253, 0, Some(vec![0xFC, 0xFF, 0xFF, b'a'])),
    ];
    assert_eq!(
        err(&c.command(&execute_packet(id, 0, &lying, true))).0,
        1210
    );
    // A LONGLONG cut short, a bogus type code, a bad temporal length, a bad bound flag.
    let short = [
        (8u8, 0u8, Some(vec![1, 2, 3])),
        (253, 0, Some(lenenc(b"x"))),
    ];
    assert_eq!(
        err(&c.command(&execute_packet(id, 0, &short, true))).0,
        1210
    );
    let bogus = [(99u8, 0u8, Some(vec![1])), (253, 0, Some(lenenc(b"x")))];
    assert_eq!(
        err(&c.command(&execute_packet(id, 0, &bogus, true))).0,
        1210
    );
    let bad_time = [
        (12u8, 0u8, Some(vec![3, 1, 2, 3])),
        (253, 0, Some(lenenc(b"x"))),
    ];
    assert_eq!(
        err(&c.command(&execute_packet(id, 0, &bad_time, true))).0,
        1210
    );
    let mut bad_flag = execute_packet(id, 0, &good, true);
    bad_flag[11] = 7;
    assert_eq!(err(&c.command(&bad_flag)).0, 1210);
    assert_eq!(err(&c.command(&[0x17, 1, 2])).0, 1210);
    // Unknown statement ids.
    assert_eq!(
        err(&c.command(&execute_packet(4242, 0, &good, true))),
        (1243, "HY000")
    );
    assert_eq!(err(&c.command(&[0x1A, 0x99, 0, 0, 0])).0, 1243);
    assert_eq!(err(&c.command(&[0x1C, 0x99, 0, 0, 0, 1, 0, 0, 0])).0, 1243);
    // Still usable after all of that.
    let Reply::Rows { rows, .. } = c.command(&execute_packet(id, 0, &good, true)) else {
        panic!()
    };
    assert_eq!(rows.len(), 1);
    // Too many placeholders.
    assert_eq!(err(&c.prepare("many_params").unwrap_err()), (1390, "HY000"));
    // COM_STMT_CLOSE has no reply; the statement is gone afterwards.
    c.send(&[0x19, id as u8, (id >> 8) as u8, 0, 0]);
    assert_eq!(err(&c.command(&execute_packet(id, 0, &good, true))).0, 1243);
    server.stop();
}

#[test]
fn send_long_data_appends_and_reset_clears() {
    let server = TestServer::start();
    let mut c = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, true);
    let (id, _, _) = c.prepare("echo_params ?, ?").unwrap();
    let long = |c: &mut RawConn, param: u16, data: &[u8]| {
        let mut p = vec![0x18];
        p.extend_from_slice(&id.to_le_bytes());
        p.extend_from_slice(&param.to_le_bytes());
        p.extend_from_slice(data);
        c.send(&p);
    };
    long(&mut c, 0, b"abc");
    long(&mut c, 0, b"def");
    let params = [
        (252u8, 0u8, Some(lenenc(b""))),
        (3, 0, Some(7i32.to_le_bytes().to_vec())),
    ];
    // Long-data parameters are not in the packet: drop the placeholder bytes.
    let mut pkt = execute_packet(
        id,
        0,
        &[(252, 0, None), (3, 0, Some(7i32.to_le_bytes().to_vec()))],
        true,
    );
    pkt[10] = 0; // clear the NULL bit of parameter 0
    let reply = c.command(&pkt);
    let Reply::Rows { columns, rows, .. } = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(
        binary_row(&columns, &rows[0]),
        vec![Value::from("abcdef"), Value::Int(7)]
    );
    // Long data is consumed by the execution.
    let Reply::Rows { columns, rows, .. } = c.command(&execute_packet(id, 0, &params, true)) else {
        panic!()
    };
    assert_eq!(
        binary_row(&columns, &rows[0]),
        vec![Value::from(""), Value::Int(7)]
    );
    // COM_STMT_RESET drops pending long data.
    long(&mut c, 0, b"zzz");
    assert!(matches!(
        c.command(&[0x1A, id as u8, 0, 0, 0]),
        Reply::Ok { .. }
    ));
    let Reply::Rows { columns, rows, .. } = c.command(&execute_packet(id, 0, &params, true)) else {
        panic!()
    };
    assert_eq!(binary_row(&columns, &rows[0])[0], Value::from(""));
    // Long data for a parameter that does not exist: reported by the next execute.
    long(&mut c, 5, b"x");
    assert_eq!(
        err(&c.command(&execute_packet(id, 0, &params, true))).0,
        1210
    );
    server.stop();
}

#[test]
fn read_only_cursor_is_fetched_in_batches() {
    let server = TestServer::start();
    for deprecate in [false, true] {
        let mut c = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, deprecate);
        let (id, cols, _) = c.prepare("rows ?").unwrap();
        assert_eq!(cols, 2);
        c.send(&execute_packet(
            id,
            1,
            &[(8, 0, Some(5i64.to_le_bytes().to_vec()))],
            true,
        ));
        let count = c.next_packet();
        assert_eq!(count, [2]);
        c.next_packet();
        c.next_packet();
        let end = c.next_packet();
        assert_eq!(end[0], 0xFE);
        assert_eq!(
            c.parse_end(&end).0 & CURSOR,
            CURSOR,
            "metadata announces the cursor"
        );
        let fetch = |c: &mut RawConn, n: u32| {
            let mut p = vec![0x1C];
            p.extend_from_slice(&id.to_le_bytes());
            p.extend_from_slice(&n.to_le_bytes());
            c.send(&p);
            let mut rows = Vec::new();
            loop {
                let p = c.next_packet();
                if p[0] == 0xFE && p.len() < 9 {
                    return (rows, c.parse_end(&p).0);
                }
                assert_eq!(p[0], 0x00, "binary row");
                rows.push(p);
            }
        };
        let (rows, status) = fetch(&mut c, 2);
        assert_eq!(rows.len(), 2);
        assert_eq!(status & (CURSOR | LAST_ROW), CURSOR);
        let (rows, status) = fetch(&mut c, 10);
        assert_eq!(rows.len(), 3);
        assert_eq!(status & LAST_ROW, LAST_ROW);
        let mut p = vec![0x1C];
        p.extend_from_slice(&id.to_le_bytes());
        p.extend_from_slice(&1u32.to_le_bytes());
        assert_eq!(err(&c.command(&p)), (1421, "HY000"));
        // Without the cursor flag the rows stream directly.
        let Reply::Rows { rows, .. } = c.command(&execute_packet(
            id,
            0,
            &[(8, 0, Some(3i64.to_le_bytes().to_vec()))],
            true,
        )) else {
            panic!()
        };
        assert_eq!(rows.len(), 3);
    }
    server.stop();
}

#[test]
fn oversized_packet_is_1153_and_closes() {
    let server = TestServer::start();
    let mut c = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, false);
    assert!(matches!(
        c.query("set max_allowed_packet = 1024"),
        Reply::Ok { .. }
    ));
    let sql = format!("echo {}", "x".repeat(1000));
    assert!(
        matches!(c.query(&sql), Reply::Rows { .. }),
        "under the limit works"
    );
    let sql = format!("echo {}", "x".repeat(2000));
    let r = c.query(&sql);
    match r {
        Reply::Err {
            code,
            state,
            message,
        } => {
            assert_eq!((code, state.as_str()), (1153, "08S01"));
            assert_eq!(
                message,
                "Got a packet bigger than 'max_allowed_packet' bytes"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(raw::closed_by_server(&mut c.stream));
    server.stop();
}

#[test]
fn packets_over_16mib_are_joined_and_split() {
    let server = TestServer::start();
    let mut c = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, true);
    // A 17 MiB query arrives in two chunks (seq 0 and 1).
    let body = "y".repeat(17 << 20);
    let mut payload = b"\x03echo ".to_vec();
    payload.extend_from_slice(body.as_bytes());
    let mut wire = raw::frame(0, &payload[..0xFF_FFFF]);
    wire.extend_from_slice(&raw::frame(1, &payload[0xFF_FFFF..]));
    use std::io::Write;
    c.stream.write_all(&wire).unwrap();
    c.seq = 2;
    let Reply::Rows { rows, .. } = c.read_reply() else {
        panic!()
    };
    let cell = raw::text_cells(&rows[0]).remove(0).unwrap();
    assert!(cell.len() == body.len() && cell.iter().all(|&b| b == b'y'));
    // A result row of exactly 0xFFFFFF bytes needs a trailing empty chunk.
    let n = 0xFF_FFFF - 4; // lenenc prefix of 4 bytes
    let Reply::Rows { rows, .. } = c.query(&format!("big {n}")) else {
        panic!()
    };
    assert_eq!(rows[0].len(), 0xFF_FFFF);
    assert!(
        matches!(c.query("select 1"), Reply::Rows { .. }),
        "stream still in sync"
    );
    server.stop();
}

#[test]
fn wrong_sequence_id_is_1156() {
    let server = TestServer::start();
    let mut c = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, false);
    c.write(3, b"\x03select 1");
    let (_, p) = c.read().unwrap();
    assert_eq!(raw::parse_err(&p).err_code(), Some(1156));
    assert!(raw::closed_by_server(&mut c.stream));
    server.stop();
}
