//! The real `basaltd` driven by the `mysql` crate over TCP: text and
//! binary protocol, both authentication plugins, prepared statements,
//! multi-statements, session commands, variables, KILL, the process list,
//! max_connections, concurrency and privileges.

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use basalt_tests::{server_error, Server};
use mysql::prelude::*;
use mysql::{ChangeUserOpts, Value};

#[test]
fn text_and_binary_protocol_round_trip() {
    let server = Server::start();
    let mut conn = server.root();
    let row: (i64, String, String, Option<i64>) = conn
        .query_first("SELECT 1 + 1, 'abc', 1.5 * 2, NULL")
        .unwrap()
        .unwrap();
    assert_eq!(row, (2, "abc".into(), "3.0".into(), None));
    let version: String = conn.query_first("SELECT @@version").unwrap().unwrap();
    assert_eq!(version, "8.0.36-basalt");
    // Binary protocol: the same expressions through a prepared statement.
    let row: (i64, String, String, Option<i64>) = conn
        .exec_first("SELECT 1 + 1, 'abc', 1.5 * 2, NULL", ())
        .unwrap()
        .unwrap();
    assert_eq!(row, (2, "abc".into(), "3.0".into(), None));
    let now_ok: i64 = conn
        .exec_first("SELECT NOW() = CURRENT_TIMESTAMP()", ())
        .unwrap()
        .unwrap();
    assert_eq!(now_ok, 1);
    let e = conn
        .query_drop("SELECT 9223372036854775807 + 1")
        .unwrap_err();
    let (code, state, msg) = server_error(e);
    assert_eq!((code, state.as_str()), (1690, "22003"));
    assert_eq!(
        msg,
        "BIGINT value is out of range in '(9223372036854775807 + 1)'"
    );
}

#[test]
fn both_auth_plugins_log_in_and_wrong_passwords_are_1045() {
    let server = Server::start();
    let mut root = server.root();
    root.query_drop("CREATE USER nat@'%' IDENTIFIED WITH mysql_native_password BY 'n-pass'")
        .unwrap();
    root.query_drop("CREATE USER sha@'%' IDENTIFIED WITH caching_sha2_password BY 's-pass'")
        .unwrap();
    root.query_drop("CREATE USER nopw@'%' IDENTIFIED WITH caching_sha2_password")
        .unwrap();
    for (user, pass) in [
        ("nat", "n-pass"),
        ("sha", "s-pass"),
        ("sha", "s-pass"),
        ("nopw", ""),
    ] {
        let mut c = server.conn(user, pass);
        let me: String = c.query_first("SELECT CURRENT_USER()").unwrap().unwrap();
        assert_eq!(me, format!("{user}@%"));
    }
    for (user, pass, using) in [
        ("nat", "bad", "YES"),
        ("sha", "bad", "YES"),
        ("sha", "", "NO"),
        ("ghost", "x", "YES"),
    ] {
        let e = mysql::Conn::new(server.opts(user, pass)).unwrap_err();
        let (code, state, msg) = server_error(e);
        assert_eq!((code, state.as_str()), (1045, "28000"), "{user}");
        assert_eq!(
            msg,
            format!("Access denied for user '{user}'@'127.0.0.1' (using password: {using})")
        );
    }
    // A changed password takes effect at the next login.
    root.query_drop("ALTER USER sha@'%' IDENTIFIED BY 'new'")
        .unwrap();
    assert!(mysql::Conn::new(server.opts("sha", "s-pass")).is_err());
    server.conn("sha", "new");
}

#[test]
fn prepared_statements_round_trip_every_parameter_type() {
    let server = Server::start();
    let mut conn = server.root();
    let stmt = conn.prep("SELECT ?").unwrap();
    assert_eq!(stmt.num_params(), 1);
    let cases = vec![
        (Value::NULL, Value::NULL),
        (Value::Int(-5), Value::Int(-5)),
        (Value::Int(i64::MIN), Value::Int(i64::MIN)),
        (Value::UInt(u64::MAX), Value::UInt(u64::MAX)),
        (Value::Float(1.5), Value::Double(1.5)),
        (Value::Double(-2.25e100), Value::Double(-2.25e100)),
        (
            Value::Bytes("héllo wörld".as_bytes().to_vec()),
            Value::Bytes("héllo wörld".as_bytes().to_vec()),
        ),
        (Value::Bytes(vec![]), Value::Bytes(vec![])),
        (
            Value::Date(2024, 2, 29, 0, 0, 0, 0),
            Value::Date(2024, 2, 29, 0, 0, 0, 0),
        ),
        (
            Value::Date(2024, 1, 2, 3, 4, 5, 678_901),
            Value::Date(2024, 1, 2, 3, 4, 5, 678_901),
        ),
        (
            Value::Time(true, 1, 2, 3, 4, 500_000),
            Value::Time(true, 1, 2, 3, 4, 500_000),
        ),
        (
            Value::Time(false, 0, 10, 11, 12, 0),
            Value::Time(false, 0, 10, 11, 12, 0),
        ),
    ];
    for (param, want) in cases {
        let got: Value = conn.exec_first(&stmt, (param.clone(),)).unwrap().unwrap();
        assert_eq!(got, want, "SELECT ? with {param:?}");
    }
    // Typed by the bound value: integer arithmetic stays exact.
    let sum: i64 = conn
        .exec_first("SELECT ? + ?", (40i64, 2i64))
        .unwrap()
        .unwrap();
    assert_eq!(sum, 42);
    let concat: String = conn
        .exec_first("SELECT CONCAT(?, '-', ?)", ("a", 7))
        .unwrap()
        .unwrap();
    assert_eq!(concat, "a-7");
    // Statements other than SELECT prepare too.
    conn.exec_drop("SET @from_param = ?", ("v",)).unwrap();
    let v: String = conn.query_first("SELECT @from_param").unwrap().unwrap();
    assert_eq!(v, "v");
    // Result sets of statements other than SELECT through the binary protocol.
    let rows: Vec<(String, String)> = conn.exec("SHOW VARIABLES LIKE 'autocommit'", ()).unwrap();
    assert_eq!(rows, vec![("autocommit".to_string(), "ON".to_string())]);
    let e = conn.exec_drop("SELECT ?", (1, 2)).unwrap_err();
    assert!(matches!(e, mysql::Error::DriverError(_)), "{e:?}");
    // As MySQL: the statements that manage prepared statements cannot be
    // prepared themselves (ER_UNSUPPORTED_PS).
    for text in [
        "PREPARE p FROM 'SELECT 1'",
        "EXECUTE p",
        "DEALLOCATE PREPARE p",
    ] {
        let (code, state, _) = server_error(conn.prep(text).unwrap_err());
        assert_eq!((code, state.as_str()), (1295, "HY000"), "{text}");
    }
    conn.close(stmt).unwrap();
}

#[test]
fn multi_statements_return_every_result_then_stop_at_an_error() {
    let server = Server::start();
    let mut conn = server.root();
    let mut result = conn
        .query_iter("SELECT 1; SELECT 'a', 'b'; SET @x = 5; SELECT @x + 1")
        .unwrap();
    let mut sets = Vec::new();
    while let Some(set) = result.iter() {
        let cols = set.columns().as_ref().len();
        let rows: Vec<mysql::Row> = set.map(|r| r.unwrap()).collect();
        sets.push((cols, rows.len()));
    }
    drop(result);
    assert_eq!(sets, vec![(1, 1), (2, 1), (0, 0), (1, 1)]);
    let mut result = conn.query_iter("SELECT 1; SELEC 2; SELECT 3").unwrap();
    let first = result.iter().unwrap();
    let rows: Vec<mysql::Row> = first.map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 1);
    let mut err = None;
    while let Some(set) = result.iter() {
        for row in set {
            if let Err(e) = row {
                err = Some(e);
            }
        }
    }
    drop(result);
    let (code, _, msg) = server_error(err.expect("the failing statement surfaces as an error"));
    assert_eq!(code, 1064);
    assert!(msg.ends_with("near 'SELEC 2' at line 1"), "{msg}");
    // The connection is usable after the failed batch.
    let one: i64 = conn.query_first("SELECT 1").unwrap().unwrap();
    assert_eq!(one, 1);
}

#[test]
fn reset_connection_and_change_user_start_a_fresh_session() {
    let server = Server::start();
    let mut root = server.root();
    root.query_drop("CREATE USER u@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    root.query_drop("SET @a = 1, SESSION wait_timeout = 123, autocommit = 0")
        .unwrap();
    root.query_drop("BEGIN").unwrap();
    root.reset().unwrap();
    let (a, wt, ac): (Option<i64>, u64, i64) = root
        .query_first("SELECT @a, @@wait_timeout, @@autocommit")
        .unwrap()
        .unwrap();
    assert_eq!((a, wt, ac), (None, 28800, 1));
    root.query_drop("SET @b = 2").unwrap();
    root.change_user(
        ChangeUserOpts::default()
            .with_user(Some("u".into()))
            .with_pass(Some("pw".into())),
    )
    .unwrap();
    let (me, b): (String, Option<i64>) = root
        .query_first("SELECT CURRENT_USER(), @b")
        .unwrap()
        .unwrap();
    assert_eq!((me.as_str(), b), ("u@%", None));
    let e = root
        .change_user(
            ChangeUserOpts::default()
                .with_user(Some("u".into()))
                .with_pass(Some("wrong".into())),
        )
        .unwrap_err();
    assert_eq!(server_error(e).0, 1045);
}

#[test]
fn set_and_show_variables_round_trip() {
    let server = Server::start();
    let mut conn = server.root();
    conn.query_drop(
        "SET SESSION sql_mode = 'ANSI_QUOTES,STRICT_ALL_TABLES', @@session.wait_timeout = 77",
    )
    .unwrap();
    let rows: Vec<(String, String)> = conn
        .query("SHOW SESSION VARIABLES LIKE 'sql_mode'")
        .unwrap();
    assert_eq!(
        rows,
        vec![("sql_mode".into(), "ANSI_QUOTES,STRICT_ALL_TABLES".into())]
    );
    let wt: u64 = conn.query_first("SELECT @@wait_timeout").unwrap().unwrap();
    assert_eq!(wt, 77);
    conn.query_drop("SET GLOBAL innodb_old_blocks_time = 250, GLOBAL max_execution_time = 9")
        .unwrap();
    let rows: Vec<(String, String)> = conn
        .query("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('innodb_old_blocks_time', 'max_execution_time')")
        .unwrap();
    assert_eq!(
        rows,
        vec![
            ("innodb_old_blocks_time".into(), "250".into()),
            ("max_execution_time".into(), "9".into())
        ]
    );
    // A new session starts from the new global value.
    let mut other = server.root();
    let met: u64 = other
        .query_first("SELECT @@max_execution_time")
        .unwrap()
        .unwrap();
    assert_eq!(met, 9);
    for (sql, code, state) in [
        ("SET nosuch_variable = 1", 1193, "HY000"),
        ("SET version = 'x'", 1238, "HY000"),
        ("SELECT @@session.max_connections", 1238, "HY000"),
        ("SET max_connections = 5", 1229, "HY000"),
        ("SET autocommit = 5", 1231, "42000"),
        ("SET wait_timeout = 'x'", 1232, "42000"),
    ] {
        let e = conn.query_drop(sql).unwrap_err();
        let (c, s, _) = server_error(e);
        assert_eq!((c, s.as_str()), (code, state), "{sql}");
    }
    let status: Vec<(String, String)> = conn
        .query("SHOW GLOBAL STATUS LIKE 'Com_set_option'")
        .unwrap();
    let n: u64 = status[0].1.parse().unwrap();
    assert!(n >= 2, "{status:?}");
}

#[test]
fn use_and_init_db_and_connect_with_db() {
    let server = Server::start();
    let mut conn = server.root();
    conn.query_drop("CREATE DATABASE app").unwrap();
    conn.select_db("app").unwrap();
    let db: Option<String> = conn.query_first("SELECT DATABASE()").unwrap().unwrap();
    assert_eq!(db.as_deref(), Some("app"));
    let e = conn.query_drop("USE nosuch").unwrap_err();
    assert_eq!(server_error(e).0, 1049);
    let e = conn.select_db("nosuch").unwrap_err();
    assert_eq!(
        server_error(e).0,
        1049,
        "COM_INIT_DB reports the same error"
    );
    let mut with_db = mysql::Conn::new(server.opts("root", "").db_name(Some("app"))).unwrap();
    let db: Option<String> = with_db.query_first("SELECT DATABASE()").unwrap().unwrap();
    assert_eq!(db.as_deref(), Some("app"));
    let e = mysql::Conn::new(server.opts("root", "").db_name(Some("missing"))).unwrap_err();
    assert_eq!(server_error(e).0, 1049);
}

#[test]
fn kill_query_interrupts_sleep_and_kill_connection_closes() {
    let server = Server::start();
    let mut victim = server.root();
    let victim_id = victim.connection_id();
    let (tx, rx) = mpsc::channel();
    let sleeper = thread::spawn(move || {
        let started = Instant::now();
        let r: Result<Option<i64>, mysql::Error> = victim.query_first("SELECT SLEEP(30)");
        tx.send((
            r.map(|v| v.unwrap_or(-1)).map_err(|e| e.to_string()),
            started.elapsed(),
        ))
        .unwrap();
        victim
    });
    let mut killer = server.root();
    // Wait until the sleep shows up in the process list.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let list: Vec<mysql::Row> = killer.query("SHOW FULL PROCESSLIST").unwrap();
        let running = list.iter().any(|r| {
            r.get::<u64, _>(0) == Some(u64::from(victim_id))
                && r.get::<Option<String>, _>(7)
                    .flatten()
                    .is_some_and(|i| i.contains("SLEEP"))
        });
        if running {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the sleeping query never appeared: {list:?}"
        );
        thread::sleep(Duration::from_millis(20));
    }
    killer
        .query_drop(format!("KILL QUERY {victim_id}"))
        .unwrap();
    let (result, took) = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("sleep returned");
    assert_eq!(result, Ok(1), "SLEEP returns 1 when interrupted");
    assert!(took < Duration::from_secs(10), "{took:?}");
    let mut victim = sleeper.join().unwrap();
    // The connection survived KILL QUERY.
    let one: i64 = victim.query_first("SELECT 1").unwrap().unwrap();
    assert_eq!(one, 1);
    killer.query_drop(format!("KILL {victim_id}")).unwrap();
    // The idle victim is closed by the server; give a loaded machine time.
    let deadline = Instant::now() + Duration::from_secs(10);
    while victim.query_drop("SELECT 1").is_ok() {
        assert!(
            Instant::now() < deadline,
            "KILL did not close the connection"
        );
        thread::sleep(Duration::from_millis(100));
    }
    let e = killer.query_drop("KILL 999999").unwrap_err();
    assert_eq!(server_error(e).0, 1094);
}

#[test]
fn process_list_shows_own_threads_or_all_with_process() {
    let server = Server::start();
    let mut root = server.root();
    root.query_drop("CREATE USER plain@'%' IDENTIFIED BY 'p'")
        .unwrap();
    let mut plain = server.conn("plain", "p");
    let plain_id = plain.connection_id();
    let all: Vec<mysql::Row> = root.query("SHOW PROCESSLIST").unwrap();
    let ids: Vec<u64> = all.iter().map(|r| r.get(0).unwrap()).collect();
    assert!(
        ids.contains(&u64::from(root.connection_id())) && ids.contains(&u64::from(plain_id)),
        "{ids:?}"
    );
    let own: Vec<mysql::Row> = plain.query("SHOW PROCESSLIST").unwrap();
    let users: Vec<String> = own.iter().map(|r| r.get(1).unwrap()).collect();
    assert_eq!(
        users,
        vec!["plain".to_string()],
        "without PROCESS only own threads are listed"
    );
    let e = plain
        .query_drop(format!("KILL {}", root.connection_id()))
        .unwrap_err();
    let (code, _, msg) = server_error(e);
    assert_eq!(code, 1095);
    assert_eq!(
        msg,
        format!("You are not owner of thread {}", root.connection_id())
    );
    root.query_drop("GRANT PROCESS ON *.* TO plain@'%'")
        .unwrap();
    let seen: Vec<mysql::Row> = plain.query("SHOW PROCESSLIST").unwrap();
    assert!(seen.len() >= 2);
}

#[test]
fn max_connections_refuses_with_1040_and_is_dynamic() {
    let server = Server::start_with(&["--max-connections=2"]);
    let mut first = server.root();
    let _second = server.root();
    let e = mysql::Conn::new(server.opts("root", "")).unwrap_err();
    let (code, _, msg) = server_error(e);
    // The refusal comes before the handshake, so (as MySQL does) it carries
    // no SQLSTATE marker: the message is exactly the text.
    assert_eq!(code, 1040);
    assert_eq!(msg, "Too many connections");
    first.query_drop("SET GLOBAL max_connections = 3").unwrap();
    let _third = server.root();
}

#[test]
fn a_slow_query_does_not_delay_other_connections() {
    let server = Server::start();
    let mut slow = server.root();
    let mut fast = server.root();
    let sleeper = thread::spawn(move || {
        let r: i64 = slow.query_first("SELECT SLEEP(2)").unwrap().unwrap();
        r
    });
    thread::sleep(Duration::from_millis(200));
    let mut worst = Duration::ZERO;
    for _ in 0..10 {
        let t = Instant::now();
        let one: i64 = fast.query_first("SELECT 1").unwrap().unwrap();
        assert_eq!(one, 1);
        worst = worst.max(t.elapsed());
    }
    assert!(
        worst < Duration::from_millis(500),
        "SELECT 1 took {worst:?} while another connection slept"
    );
    assert_eq!(sleeper.join().unwrap(), 0);
}

#[test]
fn grants_are_enforced_on_every_statement() {
    let server = Server::start();
    let mut root = server.root();
    root.query_drop("CREATE DATABASE d").unwrap();
    root.query_drop("CREATE DATABASE hidden").unwrap();
    root.query_drop("CREATE USER app@'%' IDENTIFIED BY 'pw'")
        .unwrap();
    let mut app = server.conn("app", "pw");
    let e = app.query_drop("USE d").unwrap_err();
    assert_eq!(
        server_error(e),
        (
            1044,
            "42000".into(),
            "Access denied for user 'app'@'%' to database 'd'".into()
        )
    );
    let e = mysql::Conn::new(server.opts("app", "pw").db_name(Some("d"))).unwrap_err();
    assert_eq!(server_error(e).0, 1044);
    let e = app
        .query_drop("SET GLOBAL max_connections = 10")
        .unwrap_err();
    assert_eq!(
        server_error(e),
        (
            1227,
            "42000".into(),
            "Access denied; you need (at least one of) the SUPER or SYSTEM_VARIABLES_ADMIN privilege(s) for this operation".into()
        )
    );
    let e = app.query_drop("SELECT * FROM d.t").unwrap_err();
    assert_eq!(
        server_error(e),
        (
            1142,
            "42000".into(),
            "SELECT command denied to user 'app'@'%' for table 't'".into()
        )
    );
    let dbs: Vec<String> = app.query("SHOW DATABASES").unwrap();
    assert!(dbs.is_empty(), "{dbs:?}");
    root.query_drop("GRANT SELECT ON d.* TO app@'%'").unwrap();
    app.query_drop("USE d").unwrap();
    let e = app.query_drop("SELECT * FROM t").unwrap_err();
    assert_eq!(
        server_error(e),
        (1146, "42S02".into(), "Table 'd.t' doesn't exist".into())
    );
    let e = app.query_drop("INSERT INTO t VALUES (1)").unwrap_err();
    assert_eq!(server_error(e).0, 1142);
    let dbs: Vec<String> = app.query("SHOW DATABASES").unwrap();
    assert_eq!(dbs, vec!["d".to_string()]);
    root.query_drop("REVOKE SELECT ON d.* FROM app@'%'")
        .unwrap();
    let e = app.query_drop("SELECT * FROM t").unwrap_err();
    assert_eq!(
        server_error(e).0,
        1142,
        "REVOKE applies at the next statement"
    );
    let grants: Vec<String> = root.query("SHOW GRANTS FOR app@'%'").unwrap();
    assert_eq!(grants, vec!["GRANT USAGE ON *.* TO `app`@`%`".to_string()]);
}

#[test]
fn status_counters_and_statistics() {
    let server = Server::start();
    let mut conn = server.root();
    let status = |conn: &mut mysql::Conn| -> Vec<(String, String)> {
        conn.query("SHOW SESSION STATUS WHERE Variable_name IN ('Com_select', 'Threads_connected', 'Uptime', 'Questions')")
            .unwrap()
    };
    let get = |rows: &[(String, String)], n: &str| {
        rows.iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.parse::<u64>().unwrap())
    };
    let before = status(&mut conn);
    for _ in 0..3 {
        conn.query_drop("SELECT 1").unwrap();
    }
    let after = status(&mut conn);
    assert_eq!(
        get(&after, "Com_select").unwrap() - get(&before, "Com_select").unwrap(),
        3
    );
    assert_eq!(
        get(&after, "Questions").unwrap() - get(&before, "Questions").unwrap(),
        4
    );
    assert_eq!(get(&after, "Threads_connected"), Some(1));
    assert!(get(&after, "Uptime").is_some());
}

#[test]
fn sigterm_exits_zero_after_a_final_checkpoint() {
    let server = Server::start();
    let mut conn = server.root();
    conn.query_drop("SELECT 1").unwrap();
    let pid_file = server.datadir.join("basaltd.pid");
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .expect("pid file")
        .trim()
        .parse()
        .unwrap();
    assert_eq!(pid, server.pid());
    let datadir = server.datadir.clone();
    let tmp = server.tempdir();
    let (status, log) = server.terminate(Duration::from_secs(30));
    assert!(status.success(), "exit status {status}\n{log}");
    assert!(log.contains("received SIGTERM"), "{log}");
    assert!(log.contains("final checkpoint written"), "{log}");
    assert!(!pid_file.exists(), "pid file removed at shutdown");
    assert!(
        conn.query_drop("SELECT 1").is_err(),
        "connections were closed"
    );
    // A clean shutdown leaves nothing to recover.
    let again = match basalt_tests::Server::launch(&datadir, &[], tmp) {
        basalt_tests::Started::Ready(s) => s,
        basalt_tests::Started::Exited { output, .. } => panic!("restart failed:\n{output}"),
    };
    assert!(
        again.log().contains("clean shutdown, nothing to recover"),
        "{}",
        again.log()
    );
    let (status, _) = again.terminate(Duration::from_secs(30));
    assert!(status.success());
}

#[test]
fn wait_timeout_closes_an_idle_session() {
    let server = Server::start();
    let mut conn = server.root();
    conn.query_drop("SET SESSION wait_timeout = 1").unwrap();
    thread::sleep(Duration::from_millis(2500));
    assert!(
        conn.query_drop("SELECT 1").is_err(),
        "the idle connection was closed"
    );
    // Other sessions keep the global value.
    let mut other = server.root();
    let wt: u64 = other.query_first("SELECT @@wait_timeout").unwrap().unwrap();
    assert_eq!(wt, 28800);
}
