//! Option files end to end: `basaltd --defaults-file=F`.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use basalt_tests::{basaltd_path, Server, Started, SMALL};
use mysql::prelude::*;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn unknown_option_in_a_file_names_file_line_and_option() {
    let tmp = tempfile::tempdir().unwrap();
    let file = write(
        tmp.path(),
        "my.cnf",
        "# Basalt test\n[mysqld]\nport = 0\ninnodb_bufer_pool_size = 64M\n",
    );
    let out = Command::new(basaltd_path())
        .arg(format!("--defaults-file={file}"))
        .arg(format!("--datadir={}", tmp.path().join("data").display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "must exit non-zero");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{file}:4")), "{err}");
    assert!(err.contains("innodb_bufer_pool_size"), "{err}");
    assert!(!tmp.path().join("data").exists(), "nothing was created");
}

#[test]
fn file_values_show_up_and_the_command_line_overrides_them() {
    let tmp = tempfile::tempdir().unwrap();
    let datadir = tmp.path().join("data");
    let file = write(
        tmp.path(),
        "basalt.cnf",
        "[mysqld]\nmax_connections = 77\nwait-timeout = 999\n\n[basaltd]\ninnodb_old_blocks_pct = 50\nsql_mode = ANSI_QUOTES\ninnodb_buffer_pool_size = 8M\n",
    );
    let mut args = vec![
        format!("--defaults-file={file}"),
        format!("--datadir={}", datadir.display()),
        "--port=0".to_string(),
    ];
    args.extend(SMALL.iter().map(|s| s.to_string()));
    args.push("--max-connections=88".into());
    let server = match Server::launch_args(&datadir, &args, None) {
        Started::Ready(s) => s,
        Started::Exited { output, .. } => panic!("did not start:\n{output}"),
    };
    let mut conn = server.root();
    let rows: Vec<(String, String)> = conn
        .query(
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN \
             ('max_connections', 'wait_timeout', 'innodb_old_blocks_pct', 'sql_mode', 'innodb_buffer_pool_size')",
        )
        .unwrap();
    assert_eq!(
        rows,
        vec![
            // SMALL (command line) overrides the file's 8M.
            (
                "innodb_buffer_pool_size".to_string(),
                (16u64 << 20).to_string()
            ),
            ("innodb_old_blocks_pct".to_string(), "50".to_string()),
            ("max_connections".to_string(), "88".to_string()),
            ("sql_mode".to_string(), "ANSI_QUOTES".to_string()),
            ("wait_timeout".to_string(), "999".to_string()),
        ]
    );
    assert!(
        server.log().contains("read option file"),
        "{}",
        server.log()
    );
    let (status, _) = server.terminate(Duration::from_secs(30));
    assert!(status.success());
}

#[test]
fn invalid_value_on_the_command_line_is_refused() {
    let out = Command::new(basaltd_path())
        .args(["--no-defaults", "--innodb-old-blocks-pct=abc"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("command line") && err.contains("innodb_old_blocks_pct"),
        "{err}"
    );
}

#[test]
fn log_error_file_receives_the_log_and_sigint_stops_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let datadir = tmp.path().join("data");
    std::fs::create_dir_all(&datadir).unwrap();
    std::fs::copy(basalt_tests::fixture_key(), datadir.join("private_key.pem")).unwrap();
    let mut child = Command::new(basaltd_path())
        .arg("--no-defaults")
        .arg(format!("--datadir={}", datadir.display()))
        .args(["--port=0", "--log-error=server.err"])
        .args(SMALL)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A relative log_error is placed in the data directory.
    let log = datadir.join("server.err");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let port = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(p) = text.lines().find_map(basalt_tests::ready_port) {
            break p;
        }
        assert!(child.try_wait().unwrap().is_none(), "exited early:\n{text}");
        assert!(std::time::Instant::now() < deadline, "not ready:\n{text}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut conn = mysql::Conn::new(
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(port)
            .user(Some("root"))
            .prefer_socket(false),
    )
    .unwrap();
    let one: i64 = conn.query_first("SELECT 1").unwrap().unwrap();
    assert_eq!(one, 1);
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "nothing on stderr when logging to a file"
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("received SIGINT"), "{text}");
    assert!(text.contains("final checkpoint written"), "{text}");
}

#[test]
fn print_defaults_lists_the_file_records() {
    let tmp = tempfile::tempdir().unwrap();
    let file = write(
        tmp.path(),
        "p.cnf",
        "[mysqld]\nmax_connections = 9\n[client]\nuser = x\n[basaltd]\nskip-name-resolve\n",
    );
    let out = Command::new(basaltd_path())
        .args([
            format!("--defaults-file={file}"),
            "--print-defaults".to_string(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("--max_connections=9") || text.contains("--max-connections=9"),
        "{text}"
    );
    assert!(
        text.contains("skip-name-resolve") || text.contains("skip_name_resolve"),
        "{text}"
    );
    assert!(
        !text.contains("user"),
        "the [client] group is not read: {text}"
    );
}
