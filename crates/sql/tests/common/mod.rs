//! In-process sessions for the SQL layer's integration tests: a real
//! `SqlServer` and `Session`s driven without the network, results captured
//! as text the way the `mysql` client prints them.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use basalt_config::GlobalVars;
use basalt_protocol::{
    CancelFlag, Capabilities, ColumnDef, ConnectionInfo, OkResult, OutputError, ProcessList,
    QueryOutput, RowsEnd, Value,
};
use basalt_sql::acl::store::apply_to_snapshot;
use basalt_sql::acl::{AclChange, AclSnapshot, AclStore};
use basalt_sql::{Session, SqlResult, SqlServer};
use parking_lot::Mutex;

/// A store that keeps records in memory (tests only: not durable).
#[derive(Debug, Default)]
pub struct MemStore(pub Mutex<AclSnapshot>);

impl AclStore for MemStore {
    fn load(&self) -> SqlResult<AclSnapshot> {
        Ok(self.0.lock().clone())
    }
    fn apply(&self, changes: &[AclChange]) -> SqlResult<()> {
        apply_to_snapshot(&mut self.0.lock(), changes);
        Ok(())
    }
}

/// What one statement (or batch) returned.
#[derive(Debug, Default)]
pub struct Captured {
    pub lines: Vec<String>,
    pub metadata: Vec<ColumnDef>,
}

fn render(v: &Value, col: &ColumnDef) -> String {
    match v {
        Value::Null => "NULL".into(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => {
            let mut out = Vec::new();
            other
                .encode_text(col, &mut out)
                .expect("value fits its column");
            // Skip the one-byte length prefix (texts here are short).
            String::from_utf8_lossy(&out[1..]).into_owned()
        }
    }
}

impl QueryOutput for Captured {
    fn ok(&mut self, ok: &OkResult) -> Result<(), OutputError> {
        let mut s = format!("OK affected={} warnings={}", ok.affected_rows, ok.warnings);
        if ok.status.contains(basalt_protocol::StatusFlags::IN_TRANS) {
            s.push_str(" in_trans");
        }
        self.lines.push(s);
        Ok(())
    }
    fn columns(&mut self, columns: &[ColumnDef]) -> Result<(), OutputError> {
        self.metadata = columns.to_vec();
        self.lines.push(
            columns
                .iter()
                .map(|c| c.name.clone())
                .collect::<Vec<_>>()
                .join("\t"),
        );
        Ok(())
    }
    fn row(&mut self, values: &[Value]) -> Result<(), OutputError> {
        let cells: Vec<String> = values
            .iter()
            .zip(&self.metadata)
            .map(|(v, c)| render(v, c))
            .collect();
        self.lines.push(cells.join("\t"));
        Ok(())
    }
    fn end_rows(&mut self, end: &RowsEnd) -> Result<(), OutputError> {
        if end.warnings > 0 {
            self.lines.push(format!("-- warnings={}", end.warnings));
        }
        Ok(())
    }
}

/// A server with a memory store and a shared process list.
pub struct Harness {
    pub server: Arc<SqlServer>,
    pub processes: ProcessList,
    next_id: u32,
}

impl Harness {
    pub fn new() -> Harness {
        let store: Arc<dyn AclStore> = Arc::new(MemStore::default());
        Harness {
            server: SqlServer::new(Arc::new(GlobalVars::new()), store).expect("server"),
            processes: ProcessList::new(),
            next_id: 1,
        }
    }

    /// Opens a session as `user` from `host` (no password check: that is
    /// the protocol's job).
    pub fn connect(&mut self, user: &str, host: &str, db: Option<&str>) -> Result<Session, String> {
        let id = self.next_id;
        self.next_id += 1;
        let info = ConnectionInfo {
            id,
            user: user.into(),
            host: host.into(),
            peer: SocketAddr::from(([127, 0, 0, 1], 40000)),
            db: db.map(str::to_string),
            attrs: BTreeMap::new(),
            capabilities: Capabilities::SERVER,
            charset: 255,
            cancel: CancelFlag::new(),
            process_list: self.processes.clone(),
            tls: false,
        };
        Session::open(self.server.clone(), &info).map_err(|e| e.to_server_error().to_string())
    }
}

/// Runs `sql` (multi-statements allowed) and returns what a client sees.
pub fn run(session: &mut Session, sql: &str) -> Vec<String> {
    let mut out = Captured::default();
    if let Err(e) = session.query(sql, true, &mut out) {
        out.lines.push(e.to_string());
    }
    out.lines
}

/// Runs `sql` and returns the result-set metadata.
pub fn metadata(session: &mut Session, sql: &str) -> Result<Vec<ColumnDef>, String> {
    let mut out = Captured::default();
    session
        .query(sql, false, &mut out)
        .map_err(|e| e.to_string())?;
    Ok(out.metadata)
}
