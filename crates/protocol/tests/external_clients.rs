//! Real external clients: the `mariadb` CLI (libmariadb) and PyMySQL.
//! `tests/ensure_clients.sh` installs them; a missing client is a test
//! failure with instructions, never a skip.

mod common;

use std::process::Command;

use common::*;

fn require(program: &str, probe: &[&str]) {
    let ok = Command::new(program)
        .args(probe)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "`{program}` is not usable here; run crates/protocol/tests/ensure_clients.sh to install the external test clients"
    );
}

fn run(cmd: &mut Command) -> (bool, String, String) {
    let out = cmd.output().expect("spawn client");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn mariadb(server: &TestServer, user: &str, args: &[&str]) -> Command {
    let mut c = Command::new("mariadb");
    c.arg("-h127.0.0.1")
        .arg(format!("-P{}", server.port()))
        .arg(format!("-u{user}"))
        .args(args);
    c
}

#[test]
fn mariadb_cli_runs_queries() {
    require("mariadb", &["--version"]);
    let server = TestServer::start();
    let (ok, out, err) = run(&mut mariadb(&server, "root", &["-e", "select 1"]));
    assert!(ok, "mariadb failed: {err}");
    assert_eq!(out, "1\n1\n", "column header and value");

    // Batch mode with several statements and a schema (CONNECT_WITH_DB).
    let (ok, out, err) = run(&mut mariadb(
        &server,
        "root",
        &[
            "-D",
            "shop",
            "-N",
            "-e",
            "select database(); rows 2; insert into t values (1)",
        ],
    ));
    assert!(ok, "mariadb failed: {err}");
    assert_eq!(out, "shop\n0\trow 0\n1\trow 1\n");

    // A password account whose plugin differs from the greeting's (auth switch).
    let (ok, out, err) = run(&mut mariadb(
        &server,
        NATIVE_USER,
        &[&format!("-p{NATIVE_PASS}"), "-N", "-e", "select user()"],
    ));
    assert!(ok, "mariadb failed: {err}");
    assert_eq!(out, format!("{NATIVE_USER}\n"));

    // caching_sha2_password over TLS (the CLI's default `--ssl`): the
    // password travels in clear text inside TLS.
    let (ok, out, err) = run(&mut mariadb(
        &server,
        SHA2_USER,
        &[
            &format!("-p{SHA2_PASS}"),
            "-N",
            "-e",
            "select user(); select tls()",
        ],
    ));
    assert!(ok, "mariadb failed: {err}");
    assert_eq!(out, format!("{SHA2_USER}\n1\n"));
    server.stop();

    // Without TLS: RSA full authentication, then the fast path; and a
    // client that would send a clear-text password over plain TCP (libmariadb
    // with `--ssl` against a server offering none) is refused, as in MySQL.
    let config = basalt_protocol::ProtocolConfig {
        tls: basalt_protocol::TlsSource::Disabled,
        ..test_config()
    };
    let server = TestServer::start_with(config);
    let (ok, _, err) = run(&mut mariadb(
        &server,
        SHA2_USER,
        &[&format!("-p{SHA2_PASS}"), "-e", "select 1"],
    ));
    assert!(!ok && err.contains("ERROR 1045"), "{err}");
    for _ in 0..2 {
        let (ok, out, err) = run(&mut mariadb(
            &server,
            SHA2_USER,
            &[
                &format!("-p{SHA2_PASS}"),
                "--skip-ssl",
                "-N",
                "-e",
                "select user(); select tls()",
            ],
        ));
        assert!(ok, "mariadb failed: {err}");
        assert_eq!(out, format!("{SHA2_USER}\n0\n"));
    }

    // Errors come back with number and SQLSTATE.
    let (ok, _, err) = run(&mut mariadb(&server, "root", &["-e", "error 1146"]));
    assert!(!ok);
    assert!(err.contains("ERROR 1146 (HY000)"), "{err}");
    let (ok, _, err) = run(&mut mariadb(
        &server,
        NATIVE_USER,
        &["-pwrong", "-e", "select 1"],
    ));
    assert!(!ok);
    assert!(err.contains("ERROR 1045 (28000)"), "{err}");
    server.stop();
}

const PY_SCRIPT: &str = r#"
import ssl, sys, pymysql
port = int(sys.argv[1])
for user, pw in [("sha2", "sha2-pw"), ("sha2", "sha2-pw"), ("native", "native-pw")]:
    conn = pymysql.connect(host="127.0.0.1", port=port, user=user, password=pw, database="shop")
    cur = conn.cursor()
    cur.execute("SELECT 1")
    one = cur.fetchone()[0]
    cur.execute("rows 3")
    rows = cur.fetchall()
    n = cur.execute("insert into t values (1)")
    print(user, one, len(rows), rows[2][1], n, cur.lastrowid, conn.get_server_info())
    conn.close()
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
conn = pymysql.connect(host="127.0.0.1", port=port, user="sha2", password="sha2-pw", ssl=ctx)
cur = conn.cursor()
cur.execute("select tls()")
print("tls", cur.fetchone()[0])
conn.close()
try:
    pymysql.connect(host="127.0.0.1", port=port, user="sha2", password="bad")
except pymysql.err.OperationalError as e:
    print("denied", e.args[0])
"#;

#[test]
fn pymysql_connects_with_caching_sha2_and_native() {
    require("python3", &["-c", "import pymysql, cryptography"]);
    let server = TestServer::start();
    let (ok, out, err) =
        run(Command::new("python3").args(["-c", PY_SCRIPT, &server.port().to_string()]));
    assert!(ok, "python failed: {err}");
    assert_eq!(
        out,
        "sha2 1 3 row 2 3 42 8.0.36-basalt\n\
         sha2 1 3 row 2 3 42 8.0.36-basalt\n\
         native 1 3 row 2 3 42 8.0.36-basalt\n\
         tls 1\n\
         denied 1045\n"
    );
    server.stop();
}
