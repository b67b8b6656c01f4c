//! Hostile input: garbage handshakes, truncated and oversized packets,
//! random commands and mutated COM_STMT_EXECUTE packets. Seeded
//! (`BASALT_TEST_SEED`), longer with `BASALT_FUZZ_ITERS`. After every batch a
//! normal client must still be served, and no server thread may panic.

mod common;

use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::raw::{self, RawConn, Reply};
use common::*;
use mysql::prelude::*;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn iterations() -> usize {
    std::env::var("BASALT_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60)
}

fn random_bytes(rng: &mut SmallRng, max: usize) -> Vec<u8> {
    let n = rng.gen_range(0..=max);
    (0..n).map(|_| rng.gen()).collect()
}

fn assert_healthy(server: &TestServer, seed: u64) {
    let mut c = server.mysql(NATIVE_USER, NATIVE_PASS);
    assert_eq!(
        c.query_first::<i64, _>("select 1").unwrap(),
        Some(1),
        "seed {seed}"
    );
    assert!(server.is_running(), "serve() ended (seed {seed})");
    assert_eq!(
        panic_counter().load(Ordering::SeqCst),
        0,
        "a server thread panicked (seed {seed})"
    );
}

fn wait_idle(server: &TestServer) {
    let until = Instant::now() + Duration::from_secs(20);
    while !server.handle.process_list().is_empty() {
        assert!(Instant::now() < until, "connections did not drain");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Connects, optionally reads the greeting, sends `bytes`, closes.
fn blast(server: &TestServer, bytes: &[u8], read_greeting: bool) {
    let mut s = raw::connect(server.addr);
    if read_greeting {
        let _ = raw::read_packet(&mut s);
    }
    let _ = s.write_all(bytes);
    let _ = s.shutdown(std::net::Shutdown::Write);
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // The server answers (ERR) or closes; either way it must not hang.
    assert!(
        raw::closed_by_server(&mut s),
        "server kept a garbage connection open"
    );
}

#[test]
fn garbage_handshakes_and_truncated_packets() {
    let seed = seed("garbage_handshakes_and_truncated_packets");
    let mut rng = SmallRng::seed_from_u64(seed);
    let server = TestServer::start();
    for i in 0..iterations() {
        let bytes = match i % 5 {
            // Unframed noise.
            0 => random_bytes(&mut rng, 300),
            // A well-framed packet of noise.
            1 => raw::frame(1, &random_bytes(&mut rng, 200)),
            // A header that promises more than is sent.
            2 => {
                let mut b = raw::frame(1, &random_bytes(&mut rng, 50));
                b[0] = 0xFF;
                b
            }
            // A truncated but valid-looking response.
            3 => {
                let resp = raw::handshake_response(raw::CLIENT_CAPS, "root", &[1; 20], Some("db"));
                let cut = rng.gen_range(0..resp.len());
                raw::frame(1, &resp[..cut])
            }
            // A response with random bit flips.
            _ => {
                let mut resp =
                    raw::handshake_response(raw::CLIENT_CAPS, NATIVE_USER, &[7; 20], None);
                for _ in 0..rng.gen_range(1..6) {
                    let at = rng.gen_range(0..resp.len());
                    resp[at] ^= 1 << rng.gen_range(0..8);
                }
                raw::frame(1, &resp)
            }
        };
        blast(&server, &bytes, i % 7 != 0);
        if i % 20 == 19 {
            assert_healthy(&server, seed);
        }
    }
    // An SSL request is refused cleanly (no TLS offered).
    let mut ssl = Vec::new();
    ssl.extend_from_slice(
        &(raw::CLIENT_CAPS.0 | basalt_protocol::Capabilities::SSL.0).to_le_bytes(),
    );
    ssl.extend_from_slice(&[0; 28]);
    blast(&server, &raw::frame(1, &ssl), true);
    // An SSLRequest followed by bytes that are not a TLS handshake.
    for _ in 0..5 {
        let mut bytes = raw::frame(1, &ssl);
        bytes.extend(random_bytes(&mut rng, 200));
        blast(&server, &bytes, true);
    }
    // A huge announced handshake length.
    blast(&server, &[0xFF, 0xFF, 0xFF, 1, 0, 0], true);
    wait_idle(&server);
    assert_healthy(&server, seed);
    server.stop();
}

#[test]
fn random_commands_after_login() {
    let seed = seed("random_commands_after_login");
    let mut rng = SmallRng::seed_from_u64(seed);
    let server = TestServer::start();
    const CODES: [u8; 20] = [
        0x00, 0x02, 0x03, 0x04, 0x09, 0x0C, 0x0E, 0x11, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C,
        0x1F, 0x05, 0x12, 0xFF, 0x20,
    ];
    for i in 0..iterations() {
        let mut c = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, rng.gen());
        // Give the connection a statement so execute/fetch paths go deep.
        let (id, _, _) = c.prepare("echo_params ?, ?, ?").unwrap();
        for _ in 0..rng.gen_range(1..5) {
            let code = CODES[rng.gen_range(0..CODES.len())];
            let mut p = vec![code];
            if matches!(code, 0x17 | 0x18 | 0x19 | 0x1A | 0x1C) && rng.gen_bool(0.7) {
                p.extend_from_slice(&id.to_le_bytes());
            }
            p.extend(random_bytes(&mut rng, 64));
            // Never kill other test connections by accident.
            if code == 0x0C {
                p.truncate(1);
                p.extend_from_slice(&c.greeting.connection_id.to_le_bytes());
            }
            if code == 0x03 {
                // Text queries must stay in the test language's error path.
                p = b"\x03bogus ".to_vec();
                p.extend(random_bytes(&mut rng, 16).iter().map(|b| b'a' + b % 26));
            }
            if c.try_send(&p).is_err() {
                // The server closed the connection (failed change user, self kill).
                break;
            }
        }
        drop(c);
        if i % 20 == 19 {
            assert_healthy(&server, seed);
        }
    }
    wait_idle(&server);
    assert_healthy(&server, seed);
    server.stop();
}

#[test]
fn mutated_execute_packets_never_break_the_connection() {
    let seed = seed("mutated_execute_packets_never_break_the_connection");
    let mut rng = SmallRng::seed_from_u64(seed);
    let server = TestServer::start();
    let mut c = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, true);
    let (id, _, _) = c.prepare("echo_params ?, ?, ?").unwrap();
    let mut valid = vec![0x17];
    valid.extend_from_slice(&id.to_le_bytes());
    valid.extend_from_slice(&[0, 1, 0, 0, 0, 0b000, 1, 8, 0, 253, 0, 12, 0]);
    valid.extend_from_slice(&42i64.to_le_bytes());
    valid.extend_from_slice(b"\x03abc");
    valid.extend_from_slice(&[7, 0xE8, 0x07, 1, 2, 3, 4, 5]);
    assert!(
        matches!(c.command(&valid), Reply::Rows { .. }),
        "the unmutated packet is valid"
    );
    let mut errors = 0;
    for _ in 0..iterations() * 5 {
        let mut p = valid.clone();
        match rng.gen_range(0..4) {
            0 => p.truncate(rng.gen_range(5..p.len())),
            1 => {
                for _ in 0..rng.gen_range(1..4) {
                    let at = rng.gen_range(10..p.len());
                    p[at] = rng.gen();
                }
            }
            2 => p.extend(random_bytes(&mut rng, 20)),
            _ => {
                // Lie in the string length.
                let at = p.len() - 12;
                p[at] = rng.gen_range(4..=255);
            }
        }
        p[1..5].copy_from_slice(&id.to_le_bytes());
        match c.command(&p) {
            Reply::Err { code, .. } => {
                assert!(
                    matches!(code, 1210 | 1421 | 1105),
                    "unexpected error {code} (seed {seed})"
                );
                errors += 1;
            }
            Reply::Rows { .. } | Reply::Ok { .. } => {}
        }
        // The connection stays in sync after every reply.
        assert_eq!(
            c.command(&[0x0E]).status() & 2,
            2,
            "ping after mutation (seed {seed})"
        );
    }
    assert!(
        errors > 0,
        "mutations never produced an error (seed {seed})"
    );
    assert_healthy(&server, seed);
    server.stop();
}
