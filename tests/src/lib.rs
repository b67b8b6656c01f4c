//! Basalt end-to-end tests: start the real `basaltd` binary and drive it
//! with real clients (the `mysql` crate, the `mariadb` CLI, PyMySQL, raw
//! sockets).
//!
//! # Finding `basaltd`
//!
//! The binary is looked up next to the test executable's directory:
//! `target/<profile>/deps/<test>` -> `target/<profile>/basaltd`, so a test
//! always runs the server built in the same profile. `cargo test
//! --workspace` (what `tests/run` and CI use) builds it before any test
//! runs: `server/tests/cli.rs` is an integration test of the `basaltd`
//! package, which makes cargo build the binary itself. When only this
//! package is tested (`cargo test -p basalt-tests`), build the server first
//! (`cargo build -p basaltd`, with `--release` for release tests); a
//! missing binary fails the test with that instruction rather than running
//! an old one by accident. `BASALTD=/path/to/basaltd` overrides the lookup.
//!
//! # A test server
//!
//! [`Server::start`] creates a temporary data directory, copies a fixed
//! RSA key pair into it (key generation is slow in debug builds), starts
//! `basaltd --no-defaults --datadir=<tmp> --port=0` with a small buffer
//! pool and redo log, and reads its standard error until the line
//! `basaltd ready for connections: address A port P` gives the port. The
//! server's output is kept for assertions ([`Server::log`]). Dropping a
//! `Server` kills the process; [`Server::terminate`] sends SIGTERM and
//! waits for a clean exit.
//!
//! # Suites (`tests/tests/`)
//!
//! | file               | what it proves                                                       |
//! |--------------------|----------------------------------------------------------------------|
//! | `mysql_client.rs`  | text and binary protocol, both auth plugins, 1045, every parameter type through `SELECT ?`, multi-statements, `COM_RESET_CONNECTION`, `COM_CHANGE_USER`, SET/SHOW VARIABLES and their errors, USE/`COM_INIT_DB`, KILL QUERY/CONNECTION, SHOW PROCESSLIST, 1040, `wait_timeout`, a slow query not delaying others, privilege enforcement (1044, 1142, 1227, 1095), SIGTERM |
//! | `mariadb_cli.rs`   | the stock `mariadb` client in batch and piped mode, both plugins, TLS |
//! | `pymysql.rs`       | PyMySQL: RSA full authentication, parameters, multi-statements      |
//! | `option_files.rs`  | `--defaults-file`: values, command-line override, `file:line` errors, `--print-defaults`, `log_error` file, SIGINT |
//! | `robustness.rs`    | garbage, truncated and oversized packets; the server stays usable   |
//! | `no_options.rs`    | no options at all: `./data` and port 3306                            |
//! | `restart.rs`       | accounts, grants and schemata survive a restart (needs the durable account store) |
//!
//! The external clients are installed by `tests/run`; a missing client
//! fails its test with the install command instead of skipping it.
//!
//! # Benchmark
//!
//! `tests/conn_bench.sh` builds `basaltd` and `conn_bench` (`src/bin/`) in
//! release mode, starts `basaltd` and a private MariaDB on loopback, and
//! measures connect+auth+`SELECT 1`+quit and `SELECT 1` round trips at 1, 4
//! and 16 connections against both, interleaved, printing medians and
//! ratios.

#![forbid(unsafe_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a server may take to print its ready line.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Options every test server gets: small and fast to create.
pub const SMALL: &[&str] = &[
    "--innodb-buffer-pool-size=16M",
    "--innodb-log-file-size=4M",
    "--innodb-log-buffer-size=1M",
];

/// The `basaltd` binary this test run uses (see the crate doc).
pub fn basaltd_path() -> PathBuf {
    if let Some(p) = std::env::var_os("BASALTD") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("test executable path");
    // .../target/<profile>/deps/<test-exe>  or  .../target/<profile>/<bin>
    let mut dir = exe.parent().expect("exe dir").to_path_buf();
    if dir.ends_with("deps") {
        dir.pop();
    }
    let bin = dir.join("basaltd");
    assert!(
        bin.exists(),
        "{} does not exist: build the server first with `cargo build -p basaltd` \
         (add --release for release tests), or run `cargo test --workspace`",
        bin.display()
    );
    bin
}

/// The fixed RSA key pair used by test servers.
pub fn fixture_key() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/private_key.pem")
}

/// A running `basaltd`.
#[derive(Debug)]
pub struct Server {
    child: Option<Child>,
    /// The port it listens on.
    pub port: u16,
    /// Its data directory.
    pub datadir: PathBuf,
    _tmp: Option<Arc<tempfile::TempDir>>,
    log: Arc<Mutex<String>>,
}

/// What happened when a server was started.
#[derive(Debug)]
pub enum Started {
    /// It is ready.
    Ready(Server),
    /// It exited before printing the ready line.
    Exited {
        /// Exit status.
        status: ExitStatus,
        /// Everything it printed on standard output and standard error.
        output: String,
    },
}

impl Server {
    /// A server on a fresh temporary data directory.
    pub fn start() -> Server {
        Server::start_with(&[])
    }

    /// A fresh server with extra command-line options.
    pub fn start_with(extra: &[&str]) -> Server {
        let tmp = Arc::new(tempfile::tempdir().expect("temp dir"));
        let datadir = tmp.path().join("data");
        match Server::launch(&datadir, extra, Some(tmp)) {
            Started::Ready(s) => s,
            Started::Exited { status, output } => {
                panic!("basaltd exited with {status} before it was ready:\n{output}")
            }
        }
    }

    /// Starts a server on `datadir` (created if missing) with `--no-defaults`
    /// and the [`SMALL`] options before `extra`.
    pub fn launch(datadir: &Path, extra: &[&str], tmp: Option<Arc<tempfile::TempDir>>) -> Started {
        let mut args: Vec<String> = vec!["--no-defaults".into()];
        args.push(format!("--datadir={}", datadir.display()));
        args.push("--port=0".into());
        args.extend(SMALL.iter().map(|s| s.to_string()));
        args.extend(extra.iter().map(|s| s.to_string()));
        Server::launch_args(datadir, &args, tmp)
    }

    /// Starts `basaltd` with exactly `args`; `datadir` receives the fixture
    /// key first.
    pub fn launch_args(
        datadir: &Path,
        args: &[String],
        tmp: Option<Arc<tempfile::TempDir>>,
    ) -> Started {
        std::fs::create_dir_all(datadir).expect("create datadir");
        let key = datadir.join("private_key.pem");
        if !key.exists() {
            std::fs::copy(fixture_key(), &key).expect("copy RSA key");
        }
        let mut child = Command::new(basaltd_path())
            .args(args)
            .env("BASALT_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn basaltd");
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = mpsc::channel::<u16>();
        for pipe in [
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let log = log.clone();
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines() {
                    let Ok(line) = line else { break };
                    {
                        let mut l = log.lock().expect("log lock");
                        l.push_str(&line);
                        l.push('\n');
                    }
                    if let Some(port) = ready_port(&line) {
                        let _ = tx.send(port);
                    }
                }
            });
        }
        drop(tx);
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(port) => {
                    return Started::Ready(Server {
                        child: Some(child),
                        port,
                        datadir: datadir.to_path_buf(),
                        _tmp: tmp,
                        log,
                    })
                }
                Err(mpsc::RecvTimeoutError::Timeout)
                | Err(mpsc::RecvTimeoutError::Disconnected) => {
                    if let Ok(Some(status)) = child.try_wait() {
                        // Let the readers drain the pipes.
                        std::thread::sleep(Duration::from_millis(100));
                        let output = log.lock().expect("log lock").clone();
                        return Started::Exited { status, output };
                    }
                    if Instant::now() > deadline {
                        let _ = child.kill();
                        let output = log.lock().expect("log lock").clone();
                        panic!("basaltd did not become ready within {START_TIMEOUT:?}:\n{output}");
                    }
                }
            }
        }
    }

    /// The shared temporary directory (to restart on the same data).
    pub fn tempdir(&self) -> Option<Arc<tempfile::TempDir>> {
        self._tmp.clone()
    }

    /// Everything the server printed so far.
    pub fn log(&self) -> String {
        self.log.lock().expect("log lock").clone()
    }

    /// Connection options for `user` with `password`.
    pub fn opts(&self, user: &str, password: &str) -> mysql::OptsBuilder {
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(self.port)
            .user(Some(user))
            .pass(if password.is_empty() {
                None
            } else {
                Some(password)
            })
            .prefer_socket(false)
            .read_timeout(Some(Duration::from_secs(30)))
            .write_timeout(Some(Duration::from_secs(30)))
    }

    /// A connection as `user`; panics on failure.
    pub fn conn(&self, user: &str, password: &str) -> mysql::Conn {
        mysql::Conn::new(self.opts(user, password))
            .unwrap_or_else(|e| panic!("connect as {user}: {e}"))
    }

    /// A connection as root (empty password).
    pub fn root(&self) -> mysql::Conn {
        self.conn("root", "")
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Sends SIGTERM and waits (at most `timeout`) for the process to end;
    /// returns its exit status and everything it printed.
    pub fn terminate(self, timeout: Duration) -> (ExitStatus, String) {
        self.signal("TERM", timeout)
    }

    /// Sends `SIG<name>` (`TERM`, `INT`) and waits as [`Server::terminate`].
    pub fn signal(mut self, name: &str, timeout: Duration) -> (ExitStatus, String) {
        let mut child = self.child.take().expect("running server");
        let status = Command::new("kill")
            .args([&format!("-{name}"), &child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{name} failed");
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                std::thread::sleep(Duration::from_millis(100));
                return (status, self.log());
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!(
                    "basaltd did not exit within {timeout:?} of SIG{name}:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The port in a `basaltd ready for connections: address A port P` line.
pub fn ready_port(line: &str) -> Option<u16> {
    let rest = &line[line.find("basaltd ready for connections:")?..];
    rest.rsplit_once(" port ")?.1.trim().parse().ok()
}

/// `(code, sqlstate, message)` of a server error, panicking on other errors.
pub fn server_error(e: mysql::Error) -> (u16, String, String) {
    match e {
        mysql::Error::MySqlError(e) => (e.code, e.state, e.message),
        other => panic!("expected a server error, got {other:?}"),
    }
}

/// Fails unless `program` can be run (clients the tests need).
pub fn require_program(program: &str, install_hint: &str) {
    let ok = Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "`{program}` is required for this test and was not found; {install_hint}"
    );
}

#[cfg(test)]
mod tests {
    use super::ready_port;

    #[test]
    fn ready_line_is_parsed() {
        let line = "2026-01-01T00:00:00Z  INFO basaltd::startup: basaltd ready for connections: address 127.0.0.1 port 40123";
        assert_eq!(ready_port(line), Some(40123));
        assert_eq!(ready_port("something else"), None);
    }
}
