//! Test harness: a small echo-style backend with a fixed account table, a
//! server runner on 127.0.0.1 port 0, and a raw-packet client.

#![allow(dead_code)]

pub mod raw;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Once};
use std::time::Duration;

use basalt_protocol::auth::{caching_sha2_password_hash, native_password_hash};
use basalt_protocol::{
    AccountAuth, AuthPlugin, Backend, CancelFlag, ColumnDef, ColumnFlags, ColumnType,
    ConnectionInfo, KillMode, OkResult, ProcessInfo, ProcessList, ProtocolConfig, QueryOutput,
    RowsEnd, RsaKeySource, RsaKeys, Server, ServerError, ServerHandle, SessionState, StatementMeta,
    StatusFlags, Value,
};

pub const NATIVE_USER: &str = "native";
pub const NATIVE_PASS: &str = "native-pw";
pub const SHA2_USER: &str = "sha2";
pub const SHA2_PASS: &str = "sha2-pw";
pub const SHA2_EMPTY_USER: &str = "sha2_empty";

/// Installs a panic hook that counts panics (any thread) before the default
/// report, so tests can assert the server never panicked.
pub fn panic_counter() -> &'static AtomicUsize {
    static COUNT: AtomicUsize = AtomicUsize::new(0);
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let name = std::thread::current().name().unwrap_or("").to_owned();
            if name.starts_with("basalt-conn-") || name.starts_with("tokio") || name == "server" {
                COUNT.fetch_add(1, Ordering::SeqCst);
            }
            default(info);
        }));
    });
    &COUNT
}

#[derive(Debug)]
pub struct TestBackend {
    accounts: HashMap<String, AccountAuth>,
    pub opened: AtomicUsize,
    pub closed: AtomicUsize,
}

impl TestBackend {
    pub fn new() -> Self {
        let mut accounts = HashMap::new();
        accounts.insert(
            "root".to_owned(),
            AccountAuth {
                plugin: AuthPlugin::NativePassword,
                auth_string: Vec::new(),
            },
        );
        accounts.insert(
            NATIVE_USER.to_owned(),
            AccountAuth {
                plugin: AuthPlugin::NativePassword,
                auth_string: native_password_hash(NATIVE_PASS),
            },
        );
        accounts.insert(
            SHA2_USER.to_owned(),
            AccountAuth {
                plugin: AuthPlugin::CachingSha2Password,
                auth_string: caching_sha2_password_hash(SHA2_PASS),
            },
        );
        accounts.insert(
            SHA2_EMPTY_USER.to_owned(),
            AccountAuth {
                plugin: AuthPlugin::CachingSha2Password,
                auth_string: Vec::new(),
            },
        );
        TestBackend {
            accounts,
            opened: AtomicUsize::new(0),
            closed: AtomicUsize::new(0),
        }
    }
}

#[derive(Debug)]
pub struct TestSession {
    pub id: u32,
    pub user: String,
    pub db: Option<String>,
    pub in_trans: bool,
    pub wait_timeout: Duration,
    pub max_allowed_packet: usize,
    pub statements: HashMap<u32, String>,
    pub cancel: CancelFlag,
    pub process_list: ProcessList,
    pub user_var: Option<String>,
    pub tls: bool,
}

impl TestSession {
    fn status(&self) -> StatusFlags {
        let mut s = StatusFlags::AUTOCOMMIT;
        if self.in_trans {
            s |= StatusFlags::IN_TRANS;
        }
        s
    }

    fn ok(&self) -> OkResult {
        OkResult {
            status: self.status(),
            ..OkResult::default()
        }
    }
}

fn syntax_error(stmt: &str) -> ServerError {
    ServerError::new(
        1064,
        "42000",
        format!("You have an error in your SQL syntax near '{stmt}'"),
    )
}

fn value_column(i: usize, v: &Value) -> ColumnDef {
    let name = format!("p{i}");
    match v {
        Value::Null => ColumnDef::new(name, ColumnType::Null),
        Value::Int(_) => ColumnDef::new(name, ColumnType::LongLong),
        Value::UInt(_) => {
            ColumnDef::new(name, ColumnType::LongLong).with_flags(ColumnFlags::UNSIGNED)
        }
        Value::Float(_) => ColumnDef::new(name, ColumnType::Float),
        Value::Double(_) => ColumnDef::new(name, ColumnType::Double),
        Value::Decimal(_) => ColumnDef::new(name, ColumnType::NewDecimal),
        Value::Bytes(_) => ColumnDef::new(name, ColumnType::Blob)
            .with_flags(ColumnFlags::BLOB | ColumnFlags::BINARY)
            .with_charset(63),
        Value::Date(_) => ColumnDef::new(name, ColumnType::Date),
        Value::DateTime(_) => ColumnDef::new(name, ColumnType::DateTime).with_decimals(6),
        Value::Time(_) => ColumnDef::new(name, ColumnType::Time).with_decimals(6),
    }
}

impl TestBackend {
    /// Runs one statement of the tiny test language.
    fn statement(
        &self,
        s: &mut TestSession,
        stmt: &str,
        out: &mut dyn QueryOutput,
    ) -> Result<(), ServerError> {
        let lower = stmt.to_ascii_lowercase();
        let words: Vec<&str> = lower.split_whitespace().collect();
        match words.as_slice() {
            ["select", "1"] => {
                out.columns(&[
                    ColumnDef::new("1", ColumnType::LongLong).with_flags(ColumnFlags::NOT_NULL)
                ])?;
                out.row(&[Value::Int(1)])?;
                out.end_rows(&RowsEnd {
                    status: s.status(),
                    warnings: 0,
                })?;
            }
            ["select", "@@version_comment", "limit", "1"] => {
                out.columns(&[ColumnDef::new("@@version_comment", ColumnType::VarString)])?;
                out.row(&[Value::from("Basalt test backend")])?;
                out.end_rows(&RowsEnd {
                    status: s.status(),
                    warnings: 0,
                })?;
            }
            ["select", "database()"] => {
                out.columns(&[ColumnDef::new("DATABASE()", ColumnType::VarString)])?;
                let v = s.db.clone().map(Value::from).unwrap_or(Value::Null);
                out.row(&[v])?;
                out.end_rows(&RowsEnd {
                    status: s.status(),
                    warnings: 0,
                })?;
            }
            ["select", "user()"] => {
                out.columns(&[ColumnDef::new("USER()", ColumnType::VarString)])?;
                out.row(&[Value::from(s.user.as_str())])?;
                out.end_rows(&RowsEnd {
                    status: s.status(),
                    warnings: 0,
                })?;
            }
            ["select", "tls()"] => {
                out.columns(&[ColumnDef::new("TLS()", ColumnType::LongLong)])?;
                out.row(&[Value::Int(i64::from(s.tls))])?;
                out.end_rows(&RowsEnd {
                    status: s.status(),
                    warnings: 0,
                })?;
            }
            ["select", "@v"] => {
                out.columns(&[ColumnDef::new("@v", ColumnType::VarString)])?;
                let v = s.user_var.clone().map(Value::from).unwrap_or(Value::Null);
                out.row(&[v])?;
                out.end_rows(&RowsEnd {
                    status: s.status(),
                    warnings: 0,
                })?;
            }
            ["set", "@v", "=", v] => {
                s.user_var = Some((*v).to_owned());
                out.ok(&s.ok())?;
            }
            ["select", "connection_id()"] => {
                out.columns(&[ColumnDef::new("CONNECTION_ID()", ColumnType::LongLong)
                    .with_flags(ColumnFlags::UNSIGNED)])?;
                out.row(&[Value::UInt(u64::from(s.id))])?;
                out.end_rows(&RowsEnd {
                    status: s.status(),
                    warnings: 0,
                })?;
            }
            ["sleep", secs] => {
                let secs: f64 = secs.parse().map_err(|_| syntax_error(stmt))?;
                let until = std::time::Instant::now() + Duration::from_secs_f64(secs);
                while std::time::Instant::now() < until {
                    if s.cancel.is_cancelled() {
                        return Err(ServerError::new(
                            1317,
                            "70100",
                            "Query execution was interrupted",
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                out.ok(&s.ok())?;
            }
            ["echo", ..] => {
                let text = stmt.trim_start()[4..].trim_start();
                out.columns(&[ColumnDef::new("echo", ColumnType::VarString)])?;
                out.row(&[Value::from(text)])?;
                out.end_rows(&RowsEnd {
                    status: s.status(),
                    warnings: 0,
                })?;
            }
            ["rows", n] => {
                let n: u64 = n.parse().map_err(|_| syntax_error(stmt))?;
                out.columns(&[
                    ColumnDef::new("i", ColumnType::LongLong),
                    ColumnDef::new("s", ColumnType::VarString),
                ])?;
                for i in 0..n {
                    out.row(&[Value::Int(i as i64), Value::from(format!("row {i}"))])?;
                }
                out.end_rows(&RowsEnd {
                    status: s.status(),
                    warnings: 0,
                })?;
            }
            ["big", n] => {
                let n: usize = n.parse().map_err(|_| syntax_error(stmt))?;
                out.columns(&[ColumnDef::new("b", ColumnType::LongBlob)])?;
                out.row(&[Value::Bytes(vec![b'z'; n])])?;
                out.end_rows(&RowsEnd {
                    status: s.status(),
                    warnings: 0,
                })?;
            }
            ["error", code] => {
                let code: u16 = code.parse().map_err(|_| syntax_error(stmt))?;
                return Err(ServerError::new(
                    code,
                    "HY000",
                    format!("test error {code}"),
                ));
            }
            ["badrow"] => {
                out.columns(&[ColumnDef::new("x", ColumnType::Tiny)])?;
                // A value that cannot fit TINYINT: the output must refuse it.
                out.row(&[Value::Int(1000)])?;
                out.end_rows(&RowsEnd {
                    status: s.status(),
                    warnings: 0,
                })?;
            }
            ["noresult"] => {}
            ["panic"] => panic!("test backend panics on purpose"),
            // What connectors send right after connecting.
            ["set", "names", ..] | ["set", "autocommit", "=", _] => out.ok(&s.ok())?,
            ["begin"] => {
                s.in_trans = true;
                out.ok(&s.ok())?;
            }
            ["commit"] | ["rollback"] => {
                s.in_trans = false;
                out.ok(&s.ok())?;
            }
            ["insert", ..] => {
                out.ok(&OkResult {
                    affected_rows: 3,
                    last_insert_id: 42,
                    status: s.status(),
                    warnings: 1,
                    info: "Records: 3  Duplicates: 0  Warnings: 1".into(),
                })?;
            }
            ["set", "wait_timeout", "=", v] => {
                let secs: f64 = v.parse().map_err(|_| syntax_error(stmt))?;
                s.wait_timeout = Duration::from_secs_f64(secs);
                out.ok(&s.ok())?;
            }
            ["set", "max_allowed_packet", "=", v] => {
                s.max_allowed_packet = v.parse().map_err(|_| syntax_error(stmt))?;
                out.ok(&s.ok())?;
            }
            ["show", "processlist"] => {
                out.columns(&[
                    ColumnDef::new("Id", ColumnType::LongLong).with_flags(ColumnFlags::UNSIGNED),
                    ColumnDef::new("User", ColumnType::VarString),
                    ColumnDef::new("db", ColumnType::VarString),
                    ColumnDef::new("Command", ColumnType::VarString),
                    ColumnDef::new("Info", ColumnType::VarString),
                ])?;
                for p in s.process_list.snapshot() {
                    out.row(&[
                        Value::UInt(u64::from(p.id)),
                        Value::from(p.user),
                        p.db.map(Value::from).unwrap_or(Value::Null),
                        Value::from(p.command),
                        p.info.map(Value::from).unwrap_or(Value::Null),
                    ])?;
                }
                out.end_rows(&RowsEnd {
                    status: s.status(),
                    warnings: 0,
                })?;
            }
            ["kill", "query", id] | ["kill", id] => {
                let id: u32 = id.parse().map_err(|_| syntax_error(stmt))?;
                let mode = if words.len() == 3 {
                    KillMode::Query
                } else {
                    KillMode::Connection
                };
                if !s.process_list.kill(id, mode) {
                    return Err(ServerError::no_such_thread(id));
                }
                out.ok(&s.ok())?;
            }
            _ => return Err(syntax_error(stmt)),
        }
        Ok(())
    }
}

impl Backend for TestBackend {
    type Session = TestSession;

    fn server_version(&self) -> String {
        "8.0.36-basalt".to_owned()
    }

    fn lookup_account(&self, user: &str, _host: &str) -> Option<AccountAuth> {
        self.accounts.get(user).cloned()
    }

    fn open_session(&self, conn: &ConnectionInfo) -> Result<TestSession, ServerError> {
        if conn.db.as_deref() == Some("nosuchdb") {
            return Err(ServerError::new(
                1049,
                "42000",
                "Unknown database 'nosuchdb'",
            ));
        }
        self.opened.fetch_add(1, Ordering::SeqCst);
        Ok(TestSession {
            id: conn.id,
            user: conn.user.clone(),
            db: conn.db.clone(),
            in_trans: false,
            wait_timeout: Duration::from_secs(28800),
            max_allowed_packet: 64 << 20,
            statements: HashMap::new(),
            cancel: conn.cancel.clone(),
            process_list: conn.process_list.clone(),
            user_var: None,
            tls: conn.tls,
        })
    }

    fn session_state(&self, s: &TestSession) -> SessionState {
        SessionState {
            status: s.status(),
            wait_timeout: s.wait_timeout,
            max_allowed_packet: s.max_allowed_packet,
            schema: s.db.clone(),
        }
    }

    fn query(
        &self,
        s: &mut TestSession,
        sql: &str,
        multi_statements: bool,
        out: &mut dyn QueryOutput,
    ) -> Result<(), ServerError> {
        let stmts: Vec<&str> = sql
            .split(';')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .collect();
        if stmts.is_empty() {
            return Err(ServerError::new(1065, "42000", "Query was empty"));
        }
        if stmts.len() > 1 && !multi_statements {
            return Err(syntax_error(stmts[1]));
        }
        for stmt in stmts {
            self.statement(s, stmt, out)?;
        }
        Ok(())
    }

    fn prepare(
        &self,
        s: &mut TestSession,
        stmt_id: u32,
        sql: &str,
    ) -> Result<StatementMeta, ServerError> {
        let lower = sql.trim().to_ascii_lowercase();
        let n = sql.matches('?').count();
        let params = (0..n)
            .map(|_| ColumnDef::new("?", ColumnType::VarString))
            .collect();
        let columns = if lower.starts_with("echo_params") {
            (0..n)
                .map(|i| ColumnDef::new(format!("p{i}"), ColumnType::VarString))
                .collect()
        } else if lower == "select 1" {
            vec![ColumnDef::new("1", ColumnType::LongLong)]
        } else if lower.starts_with("rows") {
            vec![
                ColumnDef::new("i", ColumnType::LongLong),
                ColumnDef::new("s", ColumnType::VarString),
            ]
        } else if lower.starts_with("sleep")
            || lower.starts_with("insert")
            || lower == "begin"
            || lower == "commit"
        {
            Vec::new()
        } else if lower.starts_with("many_params") {
            return Ok(StatementMeta {
                params: (0..70_000)
                    .map(|_| ColumnDef::new("?", ColumnType::VarString))
                    .collect(),
                ..StatementMeta::default()
            });
        } else {
            return Err(syntax_error(sql));
        };
        s.statements.insert(stmt_id, sql.to_owned());
        Ok(StatementMeta {
            params,
            columns,
            warnings: 0,
        })
    }

    fn execute(
        &self,
        s: &mut TestSession,
        stmt_id: u32,
        params: &[Value],
        out: &mut dyn QueryOutput,
    ) -> Result<(), ServerError> {
        let sql = s
            .statements
            .get(&stmt_id)
            .cloned()
            .ok_or_else(|| ServerError::internal("statement unknown to backend"))?;
        if sql.trim().to_ascii_lowercase().starts_with("echo_params") {
            let cols: Vec<ColumnDef> = params
                .iter()
                .enumerate()
                .map(|(i, v)| value_column(i, v))
                .collect();
            out.columns(&cols)?;
            out.row(params)?;
            out.end_rows(&RowsEnd {
                status: s.status(),
                warnings: 0,
            })?;
            return Ok(());
        }
        // `rows ?` takes its count from the parameter.
        let sql = match params.first() {
            Some(Value::Int(n)) => sql.replace('?', &n.to_string()),
            Some(Value::UInt(n)) => sql.replace('?', &n.to_string()),
            Some(Value::Bytes(b)) => sql.replace('?', &String::from_utf8_lossy(b)),
            _ => sql,
        };
        self.statement(s, &sql, out)
    }

    fn reset_statement(&self, s: &mut TestSession, stmt_id: u32) -> Result<(), ServerError> {
        if s.statements.contains_key(&stmt_id) {
            Ok(())
        } else {
            Err(ServerError::internal("statement unknown to backend"))
        }
    }

    fn close_statement(&self, s: &mut TestSession, stmt_id: u32) {
        s.statements.remove(&stmt_id);
    }

    fn init_db(&self, s: &mut TestSession, schema: &str) -> Result<(), ServerError> {
        if schema == "nosuchdb" {
            return Err(ServerError::new(
                1049,
                "42000",
                "Unknown database 'nosuchdb'",
            ));
        }
        s.db = Some(schema.to_owned());
        Ok(())
    }

    fn field_list(
        &self,
        s: &mut TestSession,
        table: &str,
        _wildcard: &str,
    ) -> Result<Vec<ColumnDef>, ServerError> {
        if table != "t1" {
            return Err(ServerError::new(
                1146,
                "42S02",
                format!("Table '{table}' doesn't exist"),
            ));
        }
        let db = s.db.clone().unwrap_or_default();
        Ok(vec![
            ColumnDef::new("id", ColumnType::Long)
                .with_table(&db, "t1", "t1")
                .with_flags(ColumnFlags::NOT_NULL | ColumnFlags::PRI_KEY),
            ColumnDef::new("name", ColumnType::VarString).with_table(&db, "t1", "t1"),
        ])
    }

    fn statistics(&self, _s: &mut TestSession) -> String {
        "Uptime: 1  Threads: 1  Questions: 1  Slow queries: 0  Opens: 0  Open tables: 0  Queries per second avg: 1.000".to_owned()
    }

    fn ping(&self, _s: &mut TestSession) -> Result<(), ServerError> {
        Ok(())
    }

    fn reset_session(&self, s: &mut TestSession) -> Result<(), ServerError> {
        s.in_trans = false;
        s.user_var = None;
        s.statements.clear();
        Ok(())
    }

    fn authorize_kill(
        &self,
        s: &TestSession,
        target: &ProcessInfo,
        _mode: KillMode,
    ) -> Result<(), ServerError> {
        if s.user == "root" || target.user == s.user {
            Ok(())
        } else {
            Err(ServerError::new(
                1095,
                "HY000",
                format!("You are not owner of thread {}", target.id),
            ))
        }
    }

    fn close_session(&self, _s: TestSession) {
        self.closed.fetch_add(1, Ordering::SeqCst);
    }
}

/// The server's fixed RSA key (loading keeps debug-build tests fast).
pub fn test_keys() -> Arc<RsaKeys> {
    Arc::new(RsaKeys::from_private_pem(include_str!("../fixtures/private_key.pem")).unwrap())
}

pub fn test_config() -> ProtocolConfig {
    ProtocolConfig {
        rsa_keys: RsaKeySource::Keys(test_keys()),
        ..ProtocolConfig::default()
    }
}

/// A server running on its own tokio runtime thread.
pub struct TestServer {
    pub addr: SocketAddr,
    pub handle: ServerHandle,
    pub backend: Arc<TestBackend>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestServer {
    pub fn start() -> Self {
        Self::start_with(test_config())
    }

    pub fn start_with(config: ProtocolConfig) -> Self {
        panic_counter();
        let backend = Arc::new(TestBackend::new());
        let server = Server::new(backend.clone(), config).unwrap();
        let handle = server.handle();
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("server".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async move {
                    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                    tx.send(listener.local_addr().unwrap()).unwrap();
                    server.serve(listener).await.unwrap();
                });
            })
            .unwrap();
        let addr = rx.recv().unwrap();
        TestServer {
            addr,
            handle,
            backend,
            thread: Some(thread),
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Shuts down and asserts the server thread (and so `serve`) ended
    /// without panicking.
    pub fn stop(mut self) {
        self.handle.shutdown();
        let t = self.thread.take().unwrap();
        t.join().expect("server thread panicked");
    }

    /// True while `serve` is still running.
    pub fn is_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    pub fn mysql_opts(&self, user: &str, pass: &str) -> mysql::OptsBuilder {
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(self.port())
            .user(Some(user))
            .pass(if pass.is_empty() { None } else { Some(pass) })
            .prefer_socket(false)
            .max_allowed_packet(Some(64 << 20))
            .read_timeout(Some(Duration::from_secs(20)))
            .write_timeout(Some(Duration::from_secs(20)))
    }

    pub fn mysql(&self, user: &str, pass: &str) -> mysql::Conn {
        mysql::Conn::new(self.mysql_opts(user, pass)).expect("connect")
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.handle.shutdown();
            let _ = t.join();
        }
    }
}

/// Seed of a randomised test (`BASALT_TEST_SEED` or a fresh one, printed).
pub fn seed(test: &str) -> u64 {
    basalt_common::test_support::test_seed(test)
}
