//! `AclStore`: where accounts, grants and schemata are kept durably.
//!
//! The SQL layer keeps everything in memory ([`super::AclCache`]) and
//! writes through this trait; the catalog implements it over B+trees in
//! the system tablespace. The contract:
//!
//! * [`AclStore::load`] returns every record, once, at startup. An empty
//!   snapshot means a new data directory: the cache then bootstraps
//!   `root@localhost` and writes it back.
//! * [`AclStore::apply`] makes one batch of changes durable and atomic:
//!   when it returns `Ok`, all of them survive a crash; when it returns
//!   `Err`, none of them is visible after a restart. A statement
//!   (`DROP USER` removes an account and its grants) is one batch.
//! * Calls are serialised by the cache (one writer at a time), and the
//!   cache changes its memory only after `apply` succeeded.
//!
//! Records are keyed as MySQL's system tables are: accounts by
//! `(user, host)`, schema grants by `(user, host, db)`, table grants by
//! `(user, host, db, table)`, schemata by name.

use basalt_protocol::AuthPlugin;

use super::privilege::Privileges;
use crate::error::SqlResult;

/// One account (`mysql.user`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountRecord {
    /// User name (empty = anonymous).
    pub user: String,
    /// Host pattern.
    pub host: String,
    /// Authentication plugin.
    pub plugin: AuthPlugin,
    /// Stored authentication string (see `basalt_protocol::AccountAuth`).
    pub auth_string: Vec<u8>,
    /// Global privileges (including `GRANT OPTION`).
    pub privileges: Privileges,
}

/// Privileges on one schema (`mysql.db`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbGrantRecord {
    /// User name.
    pub user: String,
    /// Host pattern.
    pub host: String,
    /// Schema name.
    pub db: String,
    /// Privileges.
    pub privileges: Privileges,
}

/// Privileges on one table (`mysql.tables_priv`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableGrantRecord {
    /// User name.
    pub user: String,
    /// Host pattern.
    pub host: String,
    /// Schema name.
    pub db: String,
    /// Table name.
    pub table: String,
    /// Privileges.
    pub privileges: Privileges,
}

/// A schema (`CREATE DATABASE`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaRecord {
    /// Name.
    pub name: String,
    /// Default character set.
    pub charset: String,
    /// Default collation.
    pub collation: String,
}

/// Everything the store holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AclSnapshot {
    /// Accounts.
    pub accounts: Vec<AccountRecord>,
    /// Schema grants.
    pub db_grants: Vec<DbGrantRecord>,
    /// Table grants.
    pub table_grants: Vec<TableGrantRecord>,
    /// Schemata.
    pub schemata: Vec<SchemaRecord>,
}

impl AclSnapshot {
    /// True for a new data directory.
    pub fn is_empty(&self) -> bool {
        self.accounts.is_empty()
            && self.db_grants.is_empty()
            && self.table_grants.is_empty()
            && self.schemata.is_empty()
    }
}

/// One change; inserts replace a record with the same key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AclChange {
    /// Insert or replace an account.
    PutAccount(AccountRecord),
    /// Remove an account.
    DeleteAccount {
        /// User name.
        user: String,
        /// Host pattern.
        host: String,
    },
    /// Insert or replace a schema grant.
    PutDbGrant(DbGrantRecord),
    /// Remove a schema grant.
    DeleteDbGrant {
        /// User name.
        user: String,
        /// Host pattern.
        host: String,
        /// Schema.
        db: String,
    },
    /// Insert or replace a table grant.
    PutTableGrant(TableGrantRecord),
    /// Remove a table grant.
    DeleteTableGrant {
        /// User name.
        user: String,
        /// Host pattern.
        host: String,
        /// Schema.
        db: String,
        /// Table.
        table: String,
    },
    /// Insert or replace a schema.
    PutSchema(SchemaRecord),
    /// Remove a schema.
    DeleteSchema {
        /// Name.
        name: String,
    },
}

/// Durable storage of accounts, grants and schemata; see the module doc.
pub trait AclStore: Send + Sync + std::fmt::Debug {
    /// Every record (startup).
    fn load(&self) -> SqlResult<AclSnapshot>;

    /// Makes `changes` durable, all or nothing.
    fn apply(&self, changes: &[AclChange]) -> SqlResult<()>;
}

/// Applies `changes` to an in-memory snapshot (the cache's memory model,
/// and a reference implementation for store tests).
pub fn apply_to_snapshot(snap: &mut AclSnapshot, changes: &[AclChange]) {
    for c in changes {
        match c {
            AclChange::PutAccount(a) => {
                snap.accounts
                    .retain(|x| !(x.user == a.user && x.host == a.host));
                snap.accounts.push(a.clone());
            }
            AclChange::DeleteAccount { user, host } => {
                snap.accounts
                    .retain(|x| !(&x.user == user && &x.host == host));
            }
            AclChange::PutDbGrant(g) => {
                snap.db_grants
                    .retain(|x| !(x.user == g.user && x.host == g.host && x.db == g.db));
                snap.db_grants.push(g.clone());
            }
            AclChange::DeleteDbGrant { user, host, db } => {
                snap.db_grants
                    .retain(|x| !(&x.user == user && &x.host == host && &x.db == db));
            }
            AclChange::PutTableGrant(g) => {
                snap.table_grants.retain(|x| {
                    !(x.user == g.user && x.host == g.host && x.db == g.db && x.table == g.table)
                });
                snap.table_grants.push(g.clone());
            }
            AclChange::DeleteTableGrant {
                user,
                host,
                db,
                table,
            } => {
                snap.table_grants.retain(|x| {
                    !(&x.user == user && &x.host == host && &x.db == db && &x.table == table)
                });
            }
            AclChange::PutSchema(s) => {
                snap.schemata.retain(|x| x.name != s.name);
                snap.schemata.push(s.clone());
            }
            AclChange::DeleteSchema { name } => snap.schemata.retain(|x| &x.name != name),
        }
    }
}

/// An `AclStore` that keeps records in memory: for tests of the SQL layer
/// only (it is not durable).
#[cfg(test)]
#[derive(Debug, Default)]
pub struct MemAclStore {
    inner: parking_lot::Mutex<AclSnapshot>,
    /// When set, `apply` fails (to test that the cache stays unchanged).
    pub fail: std::sync::atomic::AtomicBool,
}

#[cfg(test)]
impl AclStore for MemAclStore {
    fn load(&self) -> SqlResult<AclSnapshot> {
        Ok(self.inner.lock().clone())
    }

    fn apply(&self, changes: &[AclChange]) -> SqlResult<()> {
        if self.fail.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(crate::error::SqlError::Storage {
                code: crate::error_map::HA_ERR_GENERIC,
                reason: "injected store failure".into(),
                source: None,
            });
        }
        apply_to_snapshot(&mut self.inner.lock(), changes);
        Ok(())
    }
}
