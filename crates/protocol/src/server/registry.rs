//! The registry of live connections behind `SHOW PROCESSLIST` and `KILL`.
//!
//! One [`ProcessEntry`] per admitted connection, created and removed by the
//! connection's thread (removed once the connection has ended and its
//! session is closed). The connection's thread updates the entry at the
//! start and end of every command; readers take a snapshot.
//!
//! The entry also holds the connection's socket, so that `KILL CONNECTION`
//! and shutdown can wake a thread blocked in `recv`: they shut the socket's
//! read side down (`shutdown(SHUT_RD)`), the `recv` returns end of stream,
//! and the thread sees the kill flag. Writes stay possible, so shutdown can
//! still send ERR 1053.
//!
//! Latches: the map's `RwLock` is taken before an entry's `Mutex`es, never
//! the other way round; an entry's two mutexes are never held together; no
//! latch is held across I/O other than the non-blocking `shutdown(2)`.

use std::collections::HashMap;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};

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

/// Longest statement text kept for the process list, in characters.
const MAX_INFO_CHARS: usize = 1024;

#[derive(Debug)]
struct EntryState {
    user: String,
    db: Option<String>,
    command: &'static str,
    state: &'static str,
    /// Text of the running statement; its allocation is reused from
    /// command to command.
    info: String,
    has_info: bool,
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
    /// The connection's socket while it is open.
    socket: Mutex<Option<Arc<TcpStream>>>,
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
            // Wakes a read in progress or about to start: after SHUT_RD
            // every recv returns end of stream at once. The flag is set
            // first, so the woken thread sees it.
            if let Some(socket) = self.socket.lock().as_ref() {
                let _ = socket.shutdown(Shutdown::Read);
            }
        }
    }

    /// Forgets the socket (the connection is closing it).
    pub(crate) fn detach_socket(&self) {
        self.socket.lock().take();
    }

    pub(crate) fn set_user(&self, user: &str, db: Option<&str>) {
        let mut s = self.state.lock();
        s.user = user.to_owned();
        s.db = db.map(str::to_owned);
    }

    // PERF: once per command; copies the text into a reused buffer.
    pub(crate) fn begin_command(&self, command: &'static str, info: Option<&str>) {
        let since = Instant::now();
        let mut s = self.state.lock();
        s.command = command;
        s.state = "executing";
        s.info.clear();
        s.has_info = info.is_some();
        if let Some(q) = info {
            s.info.push_str(prefix_chars(q, MAX_INFO_CHARS));
        }
        s.since = since;
    }

    // PERF: once per command; allocates only when the schema changed.
    pub(crate) fn end_command(&self, db: Option<&str>) {
        let since = Instant::now();
        let mut s = self.state.lock();
        s.command = "Sleep";
        s.state = "";
        s.has_info = false;
        s.since = since;
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
            info: s.has_info.then(|| s.info.clone()),
        }
    }
}

/// The first `max` characters of `s`.
fn prefix_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((end, _)) => &s[..end],
        None => s,
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

    /// Registers a connection unless `max` are registered already.
    pub(crate) fn register_within(
        &self,
        max: usize,
        id: u32,
        host: String,
        socket: Arc<TcpStream>,
    ) -> Option<Arc<ProcessEntry>> {
        let entry = Arc::new(ProcessEntry {
            id,
            host,
            state: Mutex::new(EntryState {
                user: "unauthenticated user".to_owned(),
                db: None,
                command: "Connect",
                state: "login",
                info: String::new(),
                has_info: false,
                since: Instant::now(),
            }),
            cancel: CancelFlag::new(),
            killed: AtomicBool::new(false),
            socket: Mutex::new(Some(socket)),
        });
        let mut entries = self.entries.write();
        if entries.len() >= max {
            return None;
        }
        entries.insert(id, entry.clone());
        Some(entry)
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
    /// closes it: at once when it waits for a command, else once its
    /// current command returns. False if `id` is unknown.
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
