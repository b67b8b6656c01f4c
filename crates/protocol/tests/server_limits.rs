//! Server-level behaviour: isolation of slow queries, connection limits,
//! timeouts, KILL, the process list and shutdown.

mod common;

use std::time::{Duration, Instant};

use basalt_protocol::ProtocolConfig;
use common::raw::{self, RawConn, Reply};
use common::*;
use mysql::prelude::*;

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < until, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn slow_query_does_not_delay_other_connections() {
    let server = TestServer::start();
    let mut slow = server.mysql(NATIVE_USER, NATIVE_PASS);
    let slow_id = slow.connection_id();
    let sleeper = std::thread::spawn(move || {
        let t = Instant::now();
        slow.query_drop("sleep 2").unwrap();
        t.elapsed()
    });
    let pl = server.handle.process_list().clone();
    wait_for("the slow query to start", || {
        pl.get(slow_id)
            .is_some_and(|p| p.command == "Query" && p.info.as_deref() == Some("sleep 2"))
    });
    // A new connection (full handshake) and a query, while the backend sleeps.
    let t = Instant::now();
    let mut fast = server.mysql(NATIVE_USER, NATIVE_PASS);
    let one: Option<i64> = fast.query_first("select 1").unwrap();
    let fast_elapsed = t.elapsed();
    assert_eq!(one, Some(1));
    assert!(
        pl.get(slow_id).is_some_and(|p| p.command == "Query"),
        "the slow query must still be running when the fast one finished"
    );
    assert!(
        fast_elapsed < Duration::from_millis(1000),
        "fast query took {fast_elapsed:?}"
    );
    let slow_elapsed = sleeper.join().unwrap();
    assert!(
        slow_elapsed >= Duration::from_secs(2),
        "slow query took {slow_elapsed:?}"
    );
    server.stop();
}

#[test]
fn connections_beyond_max_connections_get_1040() {
    let config = ProtocolConfig {
        max_connections: 2,
        ..test_config()
    };
    let server = TestServer::start_with(config);
    let a = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, false);
    let _b = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, false);
    let mut s = raw::connect(server.addr);
    let (seq, p) = raw::read_packet(&mut s).unwrap();
    assert_eq!(seq, 0);
    // Before the handshake no capability is agreed: MySQL sends code and
    // message only, without the '#' SQLSTATE marker.
    assert_eq!(p[0], 0xFF);
    assert_eq!(u16::from_le_bytes([p[1], p[2]]), 1040);
    assert_eq!(&p[3..], b"Too many connections");
    assert!(raw::closed_by_server(&mut s));
    // A freed slot can be reused.
    drop(a);
    let pl = server.handle.process_list().clone();
    wait_for("the closed connection to leave the registry", || {
        pl.len() < 2
    });
    let mut c = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, false);
    assert!(matches!(c.query("select 1"), Reply::Rows { .. }));
    // The limit is dynamic.
    server.handle.set_max_connections(3);
    let _d = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, false);
    server.stop();
}

#[test]
fn idle_connections_are_closed_after_wait_timeout_with_4031() {
    let server = TestServer::start();
    let mut c = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, false);
    assert!(matches!(
        c.query("set wait_timeout = 0.3"),
        Reply::Ok { .. }
    ));
    let t = Instant::now();
    let (_, p) = c.read().expect("the server speaks before closing");
    assert!(t.elapsed() >= Duration::from_millis(250));
    assert_eq!(raw::parse_err(&p).err_code(), Some(4031));
    assert!(raw::closed_by_server(&mut c.stream));
    server.stop();
}

#[test]
fn a_silent_client_is_dropped_after_connect_timeout() {
    let config = ProtocolConfig {
        connect_timeout: Duration::from_millis(300),
        ..test_config()
    };
    let server = TestServer::start_with(config);
    let mut s = raw::connect(server.addr);
    let t = Instant::now();
    raw::read_packet(&mut s).unwrap();
    assert!(raw::closed_by_server(&mut s));
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    let pl = server.handle.process_list().clone();
    wait_for("the registry to empty", || pl.is_empty());
    server.stop();
}

#[test]
fn kill_query_cancels_and_kill_connection_closes() {
    let server = TestServer::start();
    let mut victim = server.mysql(NATIVE_USER, NATIVE_PASS);
    let id = victim.connection_id();
    let t = Instant::now();
    let sleeper = std::thread::spawn(move || {
        let r = victim.query_drop("sleep 30");
        (victim, r)
    });
    let pl = server.handle.process_list().clone();
    wait_for("the query to start", || {
        pl.get(id).is_some_and(|p| p.command == "Query")
    });
    let mut admin = server.mysql("root", "");
    admin.query_drop(format!("kill query {id}")).unwrap();
    let (mut victim, r) = sleeper.join().unwrap();
    assert!(t.elapsed() < Duration::from_secs(10));
    match r.unwrap_err() {
        mysql::Error::MySqlError(e) => assert_eq!(e.code, 1317),
        other => panic!("{other:?}"),
    }
    // KILL QUERY keeps the connection, and the flag is cleared for the next statement.
    assert_eq!(victim.query_first::<i64, _>("select 1").unwrap(), Some(1));
    victim.query_drop("sleep 0.05").unwrap();

    admin.query_drop(format!("kill {id}")).unwrap();
    wait_for("the killed connection to go", || pl.get(id).is_none());
    assert!(
        victim.query_drop("select 1").is_err(),
        "a killed connection is closed"
    );
    let e = admin.query_drop("kill 999999").unwrap_err();
    assert!(matches!(e, mysql::Error::MySqlError(ref e) if e.code == 1094));
    server.stop();
}

#[test]
fn process_list_shows_user_db_command_and_query() {
    let server = TestServer::start();
    let mut c = server.mysql(NATIVE_USER, NATIVE_PASS);
    c.select_db("shop").unwrap();
    let id = c.connection_id();
    let mut c2 = server.mysql("root", "");
    type Row = (u64, String, Option<String>, String, Option<String>);
    let rows: Vec<Row> = c2.query("show processlist").unwrap();
    let me = rows
        .iter()
        .find(|r| r.0 == u64::from(id))
        .expect("connection listed");
    assert_eq!(
        (
            me.1.as_str(),
            me.2.as_deref(),
            me.3.as_str(),
            me.4.as_deref()
        ),
        (NATIVE_USER, Some("shop"), "Sleep", None)
    );
    let own = rows
        .iter()
        .find(|r| r.0 == u64::from(c2.connection_id()))
        .unwrap();
    assert_eq!(
        (own.3.as_str(), own.4.as_deref()),
        ("Query", Some("show processlist"))
    );
    server.stop();
}

#[test]
fn shutdown_closes_idle_connections_with_1053_and_cancels_busy_ones() {
    let server = TestServer::start();
    let mut idle = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, false);
    let mut busy = server.mysql(NATIVE_USER, NATIVE_PASS);
    let busy_id = busy.connection_id();
    let sleeper = std::thread::spawn(move || busy.query_drop("sleep 30"));
    let pl = server.handle.process_list().clone();
    wait_for("the query to start", || {
        pl.get(busy_id).is_some_and(|p| p.command == "Query")
    });
    let t = Instant::now();
    let opened = server
        .backend
        .opened
        .load(std::sync::atomic::Ordering::SeqCst);
    let backend = server.backend.clone();
    server.stop();
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "serve must return promptly"
    );
    let (_, p) = idle.read().unwrap();
    assert_eq!(raw::parse_err(&p).err_code(), Some(1053));
    let r = sleeper.join().unwrap();
    assert!(
        matches!(r, Err(mysql::Error::MySqlError(ref e)) if e.code == 1317),
        "{r:?}"
    );
    assert_eq!(
        backend.closed.load(std::sync::atomic::Ordering::SeqCst),
        opened,
        "every session is closed when serve returns"
    );
}

#[test]
fn a_panicking_backend_call_closes_only_its_connection() {
    let server = TestServer::start();
    let mut other = server.mysql(NATIVE_USER, NATIVE_PASS);
    let mut c = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, false);
    c.send(b"\x03panic");
    assert!(
        raw::closed_by_server(&mut c.stream),
        "the panicking connection is closed"
    );
    let pl = server.handle.process_list().clone();
    let id = c.greeting.connection_id;
    wait_for("the registry entry to go", || pl.get(id).is_none());
    assert_eq!(other.query_first::<i64, _>("select 1").unwrap(), Some(1));
    assert!(server.is_running());
    server.stop();
}

#[test]
fn sequential_connections_reuse_cached_threads() {
    let server = TestServer::start();
    let pl = server.handle.process_list().clone();
    for i in 0..20 {
        let mut c = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, false);
        assert!(
            matches!(c.query("select 1"), Reply::Rows { .. }),
            "round {i}"
        );
        c.send(b"\x01");
        assert!(raw::closed_by_server(&mut c.stream));
        // The thread is back in accept once its connection is unregistered
        // and the cache counts it.
        wait_for("the connection thread to return to the cache", || {
            pl.is_empty() && server.handle.thread_stats().cached >= 1
        });
    }
    let stats = server.handle.thread_stats();
    // The first connection's thread starts one replacement; after that
    // every connection finds a thread waiting.
    assert!(stats.created <= 2, "{stats:?}");
    assert_eq!(stats.alive, stats.cached, "{stats:?}");
    server.stop();
}

#[test]
fn concurrent_connections_beyond_the_cache_leave_only_the_cache() {
    let config = ProtocolConfig {
        thread_cache_size: 2,
        ..test_config()
    };
    let server = TestServer::start_with(config);
    let conns: Vec<RawConn> = (0..6)
        .map(|_| RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, false))
        .collect();
    let busy = server.handle.thread_stats();
    assert!(busy.alive >= 7, "six serving plus one accepting: {busy:?}");
    drop(conns);
    wait_for("surplus threads to exit", || {
        let s = server.handle.thread_stats();
        s.alive == 2 && s.cached == 2
    });
    // The cached threads still serve.
    let mut c = server.mysql(NATIVE_USER, NATIVE_PASS);
    assert_eq!(c.query_first::<i64, _>("select 1").unwrap(), Some(1));
    server.handle.set_thread_cache_size(0);
    server.stop();
}

#[test]
fn kill_connection_wakes_an_idle_connection_at_once() {
    let server = TestServer::start();
    let mut victim = RawConn::login(server.addr, NATIVE_USER, NATIVE_PASS, false);
    let id = victim.greeting.connection_id;
    victim
        .stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut admin = server.mysql("root", "");
    let t = Instant::now();
    admin.query_drop(format!("kill {id}")).unwrap();
    // The victim's thread sleeps in recv with wait_timeout = 8 hours: only
    // the socket shutdown can wake it.
    assert!(raw::closed_by_server(&mut victim.stream));
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "closed after {:?}",
        t.elapsed()
    );
    let pl = server.handle.process_list().clone();
    wait_for("the killed connection to leave the registry", || {
        pl.get(id).is_none()
    });
    server.stop();
}
