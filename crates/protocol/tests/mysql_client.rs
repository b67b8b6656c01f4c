//! Interoperability with the `mysql` crate (a real, independent client).

mod common;

use basalt_protocol::Backend;
use common::*;
use mysql::prelude::*;
use mysql::{ChangeUserOpts, Value as MyValue};

fn mysql_err(e: mysql::Error) -> (u16, String, String) {
    match e {
        mysql::Error::MySqlError(e) => (e.code, e.state, e.message),
        other => panic!("expected a server error, got {other:?}"),
    }
}

#[test]
fn native_password_login_and_simple_query() {
    let server = TestServer::start();
    let mut conn = server.mysql(NATIVE_USER, NATIVE_PASS);
    let one: Option<i64> = conn.query_first("select 1").unwrap();
    assert_eq!(one, Some(1));
    let user: Option<String> = conn.query_first("select user()").unwrap();
    assert_eq!(user.as_deref(), Some(NATIVE_USER));
    // Empty-password account.
    let mut root = server.mysql("root", "");
    assert_eq!(root.query_first::<i64, _>("select 1").unwrap(), Some(1));
    server.stop();
}

#[test]
fn caching_sha2_first_login_is_full_rsa_auth_then_cached() {
    let server = TestServer::start();
    let stored = server
        .backend
        .lookup_account(SHA2_USER, "127.0.0.1")
        .unwrap()
        .auth_string;
    assert!(
        server
            .handle
            .auth_cache()
            .get(SHA2_USER, "127.0.0.1", &stored)
            .is_none(),
        "cache must start empty"
    );
    let mut conn = server.mysql(SHA2_USER, SHA2_PASS);
    assert_eq!(
        conn.query_first::<String, _>("select user()")
            .unwrap()
            .as_deref(),
        Some(SHA2_USER)
    );
    assert!(
        server
            .handle
            .auth_cache()
            .get(SHA2_USER, "127.0.0.1", &stored)
            .is_some(),
        "full authentication must populate the cache"
    );
    // Second login takes the fast path and still works.
    let mut again = server.mysql(SHA2_USER, SHA2_PASS);
    assert_eq!(again.query_first::<i64, _>("select 1").unwrap(), Some(1));
    // Empty caching_sha2 password.
    let mut empty = server.mysql(SHA2_EMPTY_USER, "");
    assert_eq!(empty.query_first::<i64, _>("select 1").unwrap(), Some(1));
    // Wrong password after caching: still denied.
    let e = mysql::Conn::new(server.mysql_opts(SHA2_USER, "nope")).unwrap_err();
    assert_eq!(mysql_err(e).0, 1045);
    server.stop();
}

#[test]
fn wrong_password_and_unknown_user_are_1045() {
    let server = TestServer::start();
    let (code, state, msg) =
        mysql_err(mysql::Conn::new(server.mysql_opts(NATIVE_USER, "bad")).unwrap_err());
    assert_eq!((code, state.as_str()), (1045, "28000"));
    assert_eq!(
        msg,
        "Access denied for user 'native'@'127.0.0.1' (using password: YES)"
    );
    let (code, _, msg) =
        mysql_err(mysql::Conn::new(server.mysql_opts(NATIVE_USER, "")).unwrap_err());
    assert_eq!(code, 1045);
    assert!(msg.ends_with("(using password: NO)"), "{msg}");
    let (code, _, _) = mysql_err(mysql::Conn::new(server.mysql_opts("ghost", "x")).unwrap_err());
    assert_eq!(code, 1045);
    let (code, _, _) =
        mysql_err(mysql::Conn::new(server.mysql_opts(SHA2_USER, "bad")).unwrap_err());
    assert_eq!(code, 1045);
    // Unknown schema at connect: the backend's error reaches the client.
    let e = mysql::Conn::new(
        server
            .mysql_opts(NATIVE_USER, NATIVE_PASS)
            .db_name(Some("nosuchdb")),
    )
    .unwrap_err();
    assert_eq!(mysql_err(e).0, 1049);
    server.stop();
}

#[test]
fn multi_statement_query_returns_every_result_then_stops_at_an_error() {
    let server = TestServer::start();
    let mut conn = server.mysql(NATIVE_USER, NATIVE_PASS);
    let mut result = conn
        .query_iter("select 1; rows 3; insert into t values (1); echo done")
        .unwrap();
    let mut sets = Vec::new();
    while let Some(set) = result.iter() {
        let cols = set.columns().as_ref().len();
        let affected = set.affected_rows();
        let last_id = set.last_insert_id();
        let rows: Vec<mysql::Row> = set.map(|r| r.unwrap()).collect();
        sets.push((cols, rows.len(), affected, last_id));
    }
    drop(result);
    assert_eq!(sets.len(), 4, "{sets:?}");
    assert_eq!((sets[0].0, sets[0].1), (1, 1));
    assert_eq!((sets[1].0, sets[1].1), (2, 3));
    assert_eq!((sets[2].0, sets[2].2, sets[2].3), (0, 3, Some(42)));
    assert_eq!((sets[3].0, sets[3].1), (1, 1));

    // An error in the middle ends the batch: the first result arrives, then the error.
    let mut result = conn.query_iter("rows 2; error 1146; select 1").unwrap();
    let first: Vec<mysql::Row> = result.iter().unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(first.len(), 2);
    let mut err = None;
    while let Some(set) = result.iter() {
        for row in set {
            if let Err(e) = row {
                err = Some(e);
            }
        }
    }
    drop(result);
    let err = err.expect("the failing statement must surface as an error");
    assert_eq!(mysql_err(err).0, 1146);
    // The connection is still in sync.
    assert_eq!(conn.query_first::<i64, _>("select 1").unwrap(), Some(1));
    server.stop();
}

#[test]
fn prepared_statement_parameters_round_trip_every_client_type() {
    let server = TestServer::start();
    let mut conn = server.mysql(NATIVE_USER, NATIVE_PASS);
    let params = vec![
        MyValue::NULL,
        MyValue::Int(-9_000_000_000),
        MyValue::Int(i64::MIN),
        MyValue::UInt(u64::MAX),
        MyValue::Float(1.5),
        MyValue::Double(-2.25e300),
        MyValue::Bytes(b"hello, world".to_vec()),
        MyValue::Bytes(vec![0, 1, 2, 255]),
        MyValue::Bytes(Vec::new()),
        MyValue::Date(2024, 2, 29, 0, 0, 0, 0),
        MyValue::Date(1999, 12, 31, 23, 59, 58, 0),
        MyValue::Date(2000, 1, 2, 3, 4, 5, 678_901),
        MyValue::Time(true, 3, 4, 5, 6, 0),
        MyValue::Time(false, 0, 1, 2, 3, 456_789),
        MyValue::Time(false, 0, 0, 0, 0, 0),
    ];
    let sql = format!("echo_params {}", vec!["?"; params.len()].join(", "));
    let stmt = conn.prep(&sql).unwrap();
    assert_eq!(stmt.num_params() as usize, params.len());
    for _ in 0..2 {
        // The second execution reuses bound types (new-params-bound = 0 path
        // for clients that send it) and must give the same answer.
        let row: mysql::Row = conn.exec_first(&stmt, params.clone()).unwrap().unwrap();
        let got: Vec<MyValue> = (0..row.len())
            .map(|i| row.as_ref(i).unwrap().clone())
            .collect();
        let expected: Vec<MyValue> = params
            .iter()
            .map(|v| match v {
                MyValue::Time(n, d, h, m, s, 0) if (*d, *h, *m, *s) == (0, 0, 0, 0) => {
                    MyValue::Time(*n, 0, 0, 0, 0, 0)
                }
                other => other.clone(),
            })
            .collect();
        assert_eq!(got, expected);
    }
    // A statement that fails at prepare time.
    let e = conn.prep("bogus ?").unwrap_err();
    assert_eq!(mysql_err(e).0, 1064);
    // Executing with rows and closing.
    let rows_stmt = conn.prep("rows ?").unwrap();
    let rows: Vec<(i64, String)> = conn.exec(&rows_stmt, (4,)).unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[3], (3, "row 3".to_owned()));
    conn.close(rows_stmt).unwrap();
    let e = conn.exec_drop("bogus", ()).unwrap_err();
    assert_eq!(mysql_err(e).0, 1064);
    server.stop();
}

#[test]
fn reset_connection_change_user_ping_and_init_db() {
    let server = TestServer::start();
    let mut conn = server.mysql(NATIVE_USER, NATIVE_PASS);
    conn.query_drop("set @v = 5").unwrap();
    assert_eq!(
        conn.query_first::<String, _>("select @v")
            .unwrap()
            .as_deref(),
        Some("5")
    );
    conn.reset().unwrap();
    assert_eq!(
        conn.query_first::<Option<String>, _>("select @v").unwrap(),
        Some(None)
    );

    conn.ping().unwrap();
    conn.select_db("shop").unwrap();
    assert_eq!(
        conn.query_first::<String, _>("select database()")
            .unwrap()
            .as_deref(),
        Some("shop")
    );
    let e = conn.select_db("nosuchdb").unwrap_err();
    assert_eq!(mysql_err(e).0, 1049);

    let opened_before = server
        .backend
        .opened
        .load(std::sync::atomic::Ordering::SeqCst);
    conn.change_user(
        ChangeUserOpts::default()
            .with_user(Some(SHA2_USER.into()))
            .with_pass(Some(SHA2_PASS.into())),
    )
    .unwrap();
    assert_eq!(
        conn.query_first::<String, _>("select user()")
            .unwrap()
            .as_deref(),
        Some(SHA2_USER)
    );
    assert_eq!(
        server
            .backend
            .opened
            .load(std::sync::atomic::Ordering::SeqCst),
        opened_before + 1,
        "change user opens a fresh session"
    );
    conn.change_user(
        ChangeUserOpts::default()
            .with_user(Some(NATIVE_USER.into()))
            .with_pass(Some(NATIVE_PASS.into())),
    )
    .unwrap();
    assert_eq!(
        conn.query_first::<String, _>("select user()")
            .unwrap()
            .as_deref(),
        Some(NATIVE_USER)
    );
    let e = conn
        .change_user(
            ChangeUserOpts::default()
                .with_user(Some("native".into()))
                .with_pass(Some("wrong".into())),
        )
        .unwrap_err();
    assert_eq!(mysql_err(e).0, 1045);
    server.stop();
}
