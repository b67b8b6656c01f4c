//! The registry of live connections behind `SHOW PROCESSLIST` and `KILL`.
//!
//! One [`ProcessEntry`] per accepted connection, created by the accept loop
//! and removed when the connection's I/O task ends. The worker thread updates
//! the entry at the start and end of every command; readers take a snapshot.
//! Latches: the map's `RwLock` is taken before an entry's `Mutex`, never the
//! other way round, and neither is held across I/O or `.await`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};
use tokio::sync::Notify;

use crate::backend::{CancelFlag, KillMode};

/// One row of `SHOW PROCESSLIST`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Connection id.
    pub id: u32,
    /// User name (`unauthenticated user` during the handshake).
    pub user: String,
    /// `ip:port` of the client.
    pub host: String,
    /// Current schema.
    pub db: Option<String>,
    /// Current command (`Sleep`, `Query`, `Execute`, ...).
    pub command: &'static str,
    /// Time in the current command.
    pub time: Duration,
    /// What the command is doing.
    pub state: &'static str,
    /// Text of the running statement.
    pub info: Option<String>,
}

#[derive(Debug)]
struct EntryState {
    user: String,
    db: Option<String>,
    command: &'static str,
    state: &'static str,
    info: Option<String>,
    since: Instant,
}

/// The shared record of one connection.
#[derive(Debug)]
pub struct ProcessEntry {
    id: u32,
    host: String,
    state: Mutex<EntryState>,
    cancel: CancelFlag,
    killed: AtomicBool,
    wake: Notify,
}

impl ProcessEntry {
    /// Connection id.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The connection's cancel flag.
    pub fn cancel_flag(&self) -> &CancelFlag {
        &self.cancel
    }

    /// True once `KILL CONNECTION` (or shutdown) hit this connection.
    pub fn is_killed(&self) -> bool {
        self.killed.load(Ordering::Acquire)
    }

    pub(crate) fn kill(&self, mode: KillMode) {
        self.cancel.cancel();
        if mode == KillMode::Connection {
            self.killed.store(true, Ordering::Release);
            self.wake.notify_one();
        }
    }

    /// Resolves once the connection was killed (used by the I/O task).
    pub(crate) async fn killed(&self) {
        while !self.is_killed() {
            self.wake.notified().await;
        }
    }

    pub(crate) fn set_user(&self, user: &str, db: Option<&str>) {
        let mut s = self.state.lock();
        s.user = user.to_owned();
        s.db = db.map(str::to_owned);
    }

    pub(crate) fn begin_command(&self, command: &'static str, info: Option<&str>) {
        let mut s = self.state.lock();
        s.command = command;
        s.state = "executing";
        s.info = info.map(|q| q.chars().take(1024).collect());
        s.since = Instant::now();
    }

    pub(crate) fn end_command(&self, db: Option<&str>) {
        let mut s = self.state.lock();
        s.command = "Sleep";
        s.state = "";
        s.info = None;
        s.since = Instant::now();
        if s.db.as_deref() != db {
            s.db = db.map(str::to_owned);
        }
    }

    fn snapshot(&self) -> ProcessInfo {
        let s = self.state.lock();
        ProcessInfo {
            id: self.id,
            user: s.user.clone(),
            host: self.host.clone(),
            db: s.db.clone(),
            command: s.command,
            time: s.since.elapsed(),
            state: s.state,
            info: s.info.clone(),
        }
    }
}

/// The registry, cheap to clone and shared with the backend.
#[derive(Debug, Clone, Default)]
pub struct ProcessList {
    entries: Arc<RwLock<HashMap<u32, Arc<ProcessEntry>>>>,
}

impl ProcessList {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn register(&self, id: u32, host: String) -> Arc<ProcessEntry> {
        let entry = Arc::new(ProcessEntry {
            id,
            host,
            state: Mutex::new(EntryState {
                user: "unauthenticated user".to_owned(),
                db: None,
                command: "Connect",
                state: "login",
                info: None,
                since: Instant::now(),
            }),
            cancel: CancelFlag::new(),
            killed: AtomicBool::new(false),
            wake: Notify::new(),
        });
        self.entries.write().insert(id, entry.clone());
        entry
    }

    pub(crate) fn unregister(&self, id: u32) {
        self.entries.write().remove(&id);
    }

    pub(crate) fn contains(&self, id: u32) -> bool {
        self.entries.read().contains_key(&id)
    }

    /// Number of live connections (including those still in the handshake).
    pub fn len(&self) -> usize {
        self.entries.read().len()
    }

    /// True when no connection is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// All live connections, ordered by id.
    pub fn snapshot(&self) -> Vec<ProcessInfo> {
        let entries: Vec<Arc<ProcessEntry>> = self.entries.read().values().cloned().collect();
        let mut rows: Vec<ProcessInfo> = entries.iter().map(|e| e.snapshot()).collect();
        rows.sort_by_key(|r| r.id);
        rows
    }

    /// One connection.
    pub fn get(&self, id: u32) -> Option<ProcessInfo> {
        let entry = self.entries.read().get(&id).cloned();
        entry.map(|e| e.snapshot())
    }

    /// `KILL QUERY` sets the target's cancel flag; `KILL CONNECTION` also
    /// closes it once its current command returns. False if `id` is unknown.
    pub fn kill(&self, id: u32, mode: KillMode) -> bool {
        let entry = self.entries.read().get(&id).cloned();
        match entry {
            Some(e) => {
                e.kill(mode);
                true
            }
            None => false,
        }
    }

    /// Kills every connection (shutdown).
    pub(crate) fn kill_all(&self) {
        let entries: Vec<Arc<ProcessEntry>> = self.entries.read().values().cloned().collect();
        for e in entries {
            e.kill(KillMode::Connection);
        }
    }
}
