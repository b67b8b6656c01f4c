//! The stock `mariadb` command-line client against `basaltd` (batch mode,
//! as scripts and the interactive client's startup queries use it). Fails
//! when the client is not installed (`tests/run` installs it).

use std::io::Write;
use std::process::{Command, Output, Stdio};

use basalt_tests::{require_program, Server};
use mysql::prelude::*;

fn mariadb(
    server: &Server,
    user: &str,
    password: Option<&str>,
    args: &[&str],
    stdin: Option<&str>,
) -> Output {
    require_program(
        "mariadb",
        "install the Debian package mariadb-client (tests/run does)",
    );
    let mut cmd = Command::new("mariadb");
    cmd.args(["--no-defaults", "-h127.0.0.1", "--protocol=TCP", "--batch"])
        .arg(format!("-P{}", server.port))
        .arg(format!("-u{user}"));
    if let Some(p) = password {
        cmd.arg(format!("-p{p}"));
    }
    cmd.args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run mariadb");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    child.wait_with_output().expect("mariadb output")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn batch_queries_as_root_with_an_empty_password() {
    let server = Server::start();
    let out = mariadb(
        &server,
        "root",
        None,
        &[
            "-e",
            "select @@version_comment limit 1; SELECT DATABASE(); select @@version",
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "@@version_comment\nBasalt\nDATABASE()\nNULL\n@@version\n8.0.36-basalt\n"
    );
    let out = mariadb(
        &server,
        "root",
        None,
        &[
            "-e",
            "CREATE DATABASE sbtest; SHOW DATABASES; SELECT 1 + 1 AS two, 'x' AS s, 1/3 AS third",
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "Database\nsbtest\ntwo\ts\tthird\n2\tx\t0.3333\n"
    );
}

#[test]
fn piped_script_uses_the_database_and_reports_errors_with_line_numbers() {
    let server = Server::start();
    server.root().query_drop("CREATE DATABASE sbtest").unwrap();
    let out = mariadb(
        &server,
        "root",
        None,
        &["sbtest"],
        Some("select 1;\nshow tables;\nselect DATABASE();\nselect count(*) from sbtest1;\nselect 2;\n"),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "1\n1\nDATABASE()\nsbtest\n");
    // The client echoes the failing statement before the error line.
    let err = stderr(&out);
    assert!(
        err.trim_end()
            .ends_with("ERROR 1146 (42S02) at line 4: Table 'sbtest.sbtest1' doesn't exist"),
        "{err}"
    );
}

#[test]
fn both_plugins_with_passwords_and_a_wrong_password() {
    let server = Server::start();
    let mut root = server.root();
    root.query_drop("CREATE USER cli_sha@'%' IDENTIFIED BY 'sha-pw'")
        .unwrap();
    root.query_drop("CREATE USER cli_nat@'%' IDENTIFIED WITH mysql_native_password BY 'nat-pw'")
        .unwrap();
    for (user, pw) in [
        ("cli_sha", "sha-pw"),
        ("cli_sha", "sha-pw"),
        ("cli_nat", "nat-pw"),
    ] {
        let out = mariadb(
            &server,
            user,
            Some(pw),
            &["-e", "SELECT CURRENT_USER()"],
            None,
        );
        assert!(out.status.success(), "{user}: {}", stderr(&out));
        assert_eq!(stdout(&out), format!("CURRENT_USER()\n{user}@%\n"));
    }
    let out = mariadb(&server, "cli_nat", Some("wrong"), &["-e", "SELECT 1"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("ERROR 1045 (28000): Access denied for user 'cli_nat'@'127.0.0.1' (using password: YES)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn variables_and_warnings_in_batch_mode() {
    let server = Server::start();
    let out = mariadb(
        &server,
        "root",
        None,
        &[
            "-e",
            "SET SESSION wait_timeout = 0; SHOW WARNINGS; SET GLOBAL max_connections = 42; SHOW GLOBAL VARIABLES LIKE 'max_connections'",
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "Level\tCode\tMessage\nWarning\t1292\tTruncated incorrect wait_timeout value: '0'\nVariable_name\tValue\nmax_connections\t42\n"
    );
}

#[test]
fn tls_with_the_generated_certificate() {
    let server = Server::start();
    let out = mariadb(
        &server,
        "root",
        None,
        &["--ssl"],
        Some("SELECT @@have_ssl;\n\\s\n"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("@@have_ssl\nYES\n"), "{text}");
    assert!(text.contains("Cipher in use is TLS_"), "{text}");
    assert!(
        server.datadir.join("server-cert.pem").exists(),
        "certificate kept in the datadir"
    );
    // A caching_sha2 password goes over the encrypted channel without RSA.
    server
        .root()
        .query_drop("CREATE USER tls_user@'%' IDENTIFIED BY 'tls-pw'")
        .unwrap();
    let out = mariadb(
        &server,
        "tls_user",
        Some("tls-pw"),
        &["--ssl", "-e", "SELECT CURRENT_USER()"],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "CURRENT_USER()\ntls_user@%\n");
}
