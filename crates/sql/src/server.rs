//! `SqlServer`: what every session shares — the global variables, the
//! privilege tables and schemata, and the status counters.
//!
//! Status counters are relaxed atomics (exact totals, no ordering with
//! other memory): one array for the server and a plain array per session,
//! indexed by position in [`COUNTERS`]. `SHOW GLOBAL STATUS` reads the server array,
//! `SHOW [SESSION] STATUS` the session's own counts for per-statement
//! counters (`Com_*`, `Questions`, `Queries`) and the server's for the rest
//! (`Uptime`, `Threads_*`, `Connections`, `Max_used_connections`), as
//! MySQL does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use basalt_config::GlobalVars;

use crate::acl::{AclCache, AclStore};
use crate::error::SqlResult;

/// Per-statement counters, in `SHOW STATUS` order (sorted by name).
pub const COUNTERS: &[&str] = &[
    "Com_alter_user",
    "Com_begin",
    "Com_change_db",
    "Com_commit",
    "Com_create_db",
    "Com_create_user",
    "Com_dealloc_sql",
    "Com_delete",
    "Com_do",
    "Com_drop_db",
    "Com_drop_table",
    "Com_drop_user",
    "Com_execute_sql",
    "Com_flush",
    "Com_grant",
    "Com_insert",
    "Com_kill",
    "Com_other",
    "Com_prepare_sql",
    "Com_release_savepoint",
    "Com_rename_user",
    "Com_revoke",
    "Com_rollback",
    "Com_savepoint",
    "Com_select",
    "Com_set_option",
    "Com_set_password",
    "Com_show_charsets",
    "Com_show_collations",
    "Com_show_create_db",
    "Com_show_create_user",
    "Com_show_databases",
    "Com_show_engine_status",
    "Com_show_errors",
    "Com_show_grants",
    "Com_show_privileges",
    "Com_show_processlist",
    "Com_show_status",
    "Com_show_tables",
    "Com_show_variables",
    "Com_show_warnings",
    "Com_stmt_close",
    "Com_stmt_execute",
    "Com_stmt_prepare",
    "Com_stmt_reset",
    "Com_update",
    "Questions",
    "Queries",
];

/// Index of a counter in [`COUNTERS`].
pub fn counter_index(name: &str) -> Option<usize> {
    COUNTERS.iter().position(|c| *c == name)
}

/// Server-wide counters.
#[derive(Debug)]
pub struct StatusCounters {
    counts: Vec<AtomicU64>,
    /// Sessions opened since startup (`Connections`).
    pub connections: AtomicU64,
    /// Most sessions open at once (`Max_used_connections`).
    pub max_used_connections: AtomicU64,
    /// Sessions open now.
    pub open_sessions: AtomicU64,
}

impl StatusCounters {
    fn new() -> StatusCounters {
        StatusCounters {
            counts: COUNTERS.iter().map(|_| AtomicU64::new(0)).collect(),
            connections: AtomicU64::new(0),
            max_used_connections: AtomicU64::new(0),
            open_sessions: AtomicU64::new(0),
        }
    }

    /// Adds one to counter `i`.
    // PERF: one relaxed atomic add per counted event.
    pub fn bump(&self, i: usize) {
        if let Some(c) = self.counts.get(i) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The value of counter `i`.
    pub fn get(&self, i: usize) -> u64 {
        self.counts.get(i).map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// A session opened.
    pub fn session_opened(&self) {
        self.connections.fetch_add(1, Ordering::Relaxed);
        let now = self.open_sessions.fetch_add(1, Ordering::Relaxed) + 1;
        self.max_used_connections.fetch_max(now, Ordering::Relaxed);
    }

    /// A session closed.
    pub fn session_closed(&self) {
        self.open_sessions.fetch_sub(1, Ordering::Relaxed);
    }
}

/// State shared by all sessions of one server.
#[derive(Debug)]
pub struct SqlServer {
    /// Global system variables.
    pub globals: Arc<GlobalVars>,
    /// Accounts, grants, schemata.
    pub acl: AclCache,
    /// Status counters.
    pub status: StatusCounters,
    started: Instant,
}

impl SqlServer {
    /// A server over `globals`, loading accounts, grants and schemata from
    /// `store` (`None`: nothing is persisted; the bootstrap account only).
    pub fn new(globals: Arc<GlobalVars>, store: Arc<dyn AclStore>) -> SqlResult<Arc<SqlServer>> {
        let acl = AclCache::open(store)?;
        Ok(Arc::new(SqlServer {
            globals,
            acl,
            status: StatusCounters::new(),
            started: Instant::now(),
        }))
    }

    /// Seconds since startup (`Uptime`).
    pub fn uptime_secs(&self) -> u64 {
        self.started.elapsed().as_secs()
    }

    /// The version string (`8.0.36-basalt`).
    pub fn version(&self) -> &'static str {
        basalt_config::VERSION
    }
}
