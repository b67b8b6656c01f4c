//! `AclCache`: the in-memory privilege tables and the operations that
//! change them.
//!
//! Readers (every statement's privilege check, every login) take the
//! state's read lock; writers (`CREATE USER`, `GRANT`, `CREATE DATABASE`,
//! ...) are serialised by `writer`, compute the changes against a copy,
//! persist them through the [`AclStore`] and only then publish them:
//!
//! ```text
//!   writer.lock ─> read state ─> plan changes ─> store.apply(changes) ─> state.write(): apply
//!                                   │ error                │ error
//!                                   └─> nothing changed    └─> nothing changed
//! ```
//!
//! Latch order: `writer` before `state`; neither is held while calling
//! anything but the store.

use std::sync::Arc;

use basalt_protocol::AuthPlugin;
use parking_lot::{Mutex, RwLock};

use super::host::{host_matches, specificity};
use super::privilege::{GrantScope, Privileges};
use super::store::{
    apply_to_snapshot, AccountRecord, AclChange, AclSnapshot, AclStore, DbGrantRecord,
    SchemaRecord, TableGrantRecord,
};
use super::SecurityContext;
use crate::error::{SqlError, SqlResult, Warning};
use basalt_common::like::like_with;

/// `(user, host)` of an account.
pub type AccountKey = (String, String);

/// `(user, host, new plugin and stored string)` for [`AclCache::set_auth`].
pub type AuthUpdate = (String, String, Option<(AuthPlugin, Vec<u8>)>);

/// The privilege tables, schemata, and the store behind them.
#[derive(Debug)]
pub struct AclCache {
    state: RwLock<AclSnapshot>,
    writer: Mutex<()>,
    store: Arc<dyn AclStore>,
}

/// `'user'@'host'` as MySQL quotes accounts in messages.
pub fn account_text(user: &str, host: &str) -> String {
    format!("'{user}'@'{host}'")
}

fn sort_accounts(snap: &mut AclSnapshot) {
    snap.accounts.sort_by_key(|a| specificity(&a.user, &a.host));
}

/// How a privilege check failed at schema or table level.
fn db_matches(pattern: &str, db: &str) -> bool {
    // Schema grants may use `%` and `_` wildcards, `\` escapes them;
    // names compare case-sensitively (lower_case_table_names = 0).
    like_with(pattern, db, Some('\\'), |a, b| a == b)
}

impl AclCache {
    /// Loads every record from `store`, bootstrapping `root@localhost` in
    /// a new data directory.
    pub fn open(store: Arc<dyn AclStore>) -> SqlResult<AclCache> {
        let mut snap = store.load()?;
        if snap.accounts.is_empty() {
            let root = AccountRecord {
                user: "root".into(),
                host: "localhost".into(),
                plugin: AuthPlugin::CachingSha2Password,
                auth_string: Vec::new(),
                privileges: Privileges::all(),
            };
            store.apply(&[AclChange::PutAccount(root.clone())])?;
            tracing::info!("bootstrapped account 'root'@'localhost' with an empty password");
            snap.accounts.push(root);
        }
        sort_accounts(&mut snap);
        Ok(AclCache {
            state: RwLock::new(snap),
            writer: Mutex::new(()),
            store,
        })
    }

    /// A copy of every record.
    pub fn snapshot(&self) -> AclSnapshot {
        self.state.read().clone()
    }

    /// The account a login as `user` from `client` uses (MySQL's matching:
    /// the first account in specificity order whose host matches and
    /// whose user is `user` or anonymous).
    pub fn match_account(&self, user: &str, client: &str) -> Option<AccountRecord> {
        let state = self.state.read();
        state
            .accounts
            .iter()
            .find(|a| (a.user == user || a.user.is_empty()) && host_matches(&a.host, client))
            .cloned()
    }

    /// The account with exactly this user and host pattern.
    pub fn account(&self, user: &str, host: &str) -> Option<AccountRecord> {
        self.state
            .read()
            .accounts
            .iter()
            .find(|a| a.user == user && a.host.eq_ignore_ascii_case(host))
            .cloned()
    }

    /// Global privileges of the session's account.
    pub fn global_privileges(&self, ctx: &SecurityContext) -> Privileges {
        self.state
            .read()
            .accounts
            .iter()
            .find(|a| a.user == ctx.priv_user && a.host == ctx.priv_host)
            .map_or(Privileges::NONE, |a| a.privileges)
    }

    /// Global plus schema-level privileges on `db`.
    pub fn db_privileges(&self, ctx: &SecurityContext, db: &str) -> Privileges {
        let state = self.state.read();
        let mut p = state
            .accounts
            .iter()
            .find(|a| a.user == ctx.priv_user && a.host == ctx.priv_host)
            .map_or(Privileges::NONE, |a| a.privileges);
        for g in &state.db_grants {
            if g.user == ctx.priv_user && g.host == ctx.priv_host && db_matches(&g.db, db) {
                p |= g.privileges;
            }
        }
        p
    }

    /// Global, schema and table privileges on `db.table`.
    pub fn table_privileges(&self, ctx: &SecurityContext, db: &str, table: &str) -> Privileges {
        let mut p = self.db_privileges(ctx, db);
        let state = self.state.read();
        for g in &state.table_grants {
            if g.user == ctx.priv_user && g.host == ctx.priv_host && g.db == db && g.table == table
            {
                p |= g.privileges;
            }
        }
        p
    }

    /// Requires at least one of `any` globally, else 1227 naming
    /// `names` ("SUPER or SYSTEM_VARIABLES_ADMIN").
    pub fn check_global_any(
        &self,
        ctx: &SecurityContext,
        any: Privileges,
        names: &str,
    ) -> SqlResult<()> {
        if self.global_privileges(ctx).intersects(any) {
            Ok(())
        } else {
            Err(SqlError::SpecificAccessDenied(names.to_string()))
        }
    }

    /// `USE db`: any privilege on the schema or on a table in it (or a
    /// global privilege that applies to schemas), else 1044.
    pub fn check_db_access(&self, ctx: &SecurityContext, db: &str) -> SqlResult<()> {
        if self.has_db_access(ctx, db) {
            Ok(())
        } else {
            Err(SqlError::DbAccessDenied {
                user: ctx.priv_user.clone(),
                host: ctx.priv_host.clone(),
                db: db.to_string(),
            })
        }
    }

    /// Whether the session has any privilege on `db` (`USE`, `SHOW
    /// DATABASES`).
    pub fn has_db_access(&self, ctx: &SecurityContext, db: &str) -> bool {
        let db_level = Privileges::grantable_at(GrantScope::Database);
        if self.db_privileges(ctx, db).intersects(db_level) {
            return true;
        }
        let state = self.state.read();
        state.table_grants.iter().any(|g| {
            g.user == ctx.priv_user
                && g.host == ctx.priv_host
                && g.db == db
                && !g.privileges.is_empty()
        })
    }

    /// A table operation needing `privilege` on `db.table`, else 1142.
    pub fn check_table(
        &self,
        ctx: &SecurityContext,
        db: &str,
        table: &str,
        privilege: Privileges,
    ) -> SqlResult<()> {
        if self.table_privileges(ctx, db, table).contains(privilege) {
            Ok(())
        } else {
            Err(SqlError::TableAccessDenied {
                command: privilege.name(),
                user: ctx.priv_user.clone(),
                host: ctx.priv_host.clone(),
                table: table.to_string(),
            })
        }
    }

    // ---- schemata ------------------------------------------------------

    /// The schema called `name`.
    pub fn schema(&self, name: &str) -> Option<SchemaRecord> {
        self.state
            .read()
            .schemata
            .iter()
            .find(|s| s.name == name)
            .cloned()
    }

    /// Every schema, sorted by name.
    pub fn schemata(&self) -> Vec<SchemaRecord> {
        let mut v = self.state.read().schemata.clone();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    fn commit(
        &self,
        plan: impl FnOnce(&AclSnapshot) -> SqlResult<Vec<AclChange>>,
    ) -> SqlResult<()> {
        let _writer = self.writer.lock();
        let current = self.state.read().clone();
        let changes = plan(&current)?;
        if changes.is_empty() {
            return Ok(());
        }
        self.store.apply(&changes)?;
        let mut state = self.state.write();
        apply_to_snapshot(&mut state, &changes);
        sort_accounts(&mut state);
        Ok(())
    }

    /// `CREATE DATABASE`; `Ok(false)` when it existed and `if_not_exists`.
    pub fn create_schema(&self, record: SchemaRecord, if_not_exists: bool) -> SqlResult<bool> {
        let mut created = false;
        self.commit(|s| {
            if s.schemata.iter().any(|x| x.name == record.name) {
                return if if_not_exists {
                    Ok(Vec::new())
                } else {
                    Err(SqlError::DatabaseExists(record.name.clone()))
                };
            }
            created = true;
            Ok(vec![AclChange::PutSchema(record.clone())])
        })?;
        Ok(created)
    }

    /// `DROP DATABASE`; `Ok(false)` when it was missing and `if_exists`.
    pub fn drop_schema(&self, name: &str, if_exists: bool) -> SqlResult<bool> {
        let mut dropped = false;
        self.commit(|s| {
            if !s.schemata.iter().any(|x| x.name == name) {
                return if if_exists {
                    Ok(Vec::new())
                } else {
                    Err(SqlError::DatabaseMissing(name.to_string()))
                };
            }
            dropped = true;
            Ok(vec![AclChange::DeleteSchema {
                name: name.to_string(),
            }])
        })?;
        Ok(dropped)
    }

    // ---- accounts ------------------------------------------------------

    /// `CREATE USER`: all accounts or none (1396 naming the ones that
    /// exist). Existing accounts with `if_not_exists` give note 3163.
    pub fn create_users(
        &self,
        users: Vec<AccountRecord>,
        if_not_exists: bool,
        warnings: &mut Vec<Warning>,
    ) -> SqlResult<()> {
        self.commit(|s| {
            let mut changes = Vec::new();
            let mut failed = Vec::new();
            for u in users {
                let exists = s
                    .accounts
                    .iter()
                    .any(|a| a.user == u.user && a.host.eq_ignore_ascii_case(&u.host));
                if exists {
                    if if_not_exists {
                        warnings.push(Warning::note(
                            3163,
                            format!(
                                "Authorization ID {} already exists.",
                                account_text(&u.user, &u.host)
                            ),
                        ));
                    } else {
                        failed.push(account_text(&u.user, &u.host));
                    }
                    continue;
                }
                changes.push(AclChange::PutAccount(u));
            }
            all_or_nothing("CREATE USER", &failed, changes)
        })
    }

    /// `DROP USER`: the accounts and every grant they hold.
    pub fn drop_users(
        &self,
        users: &[(String, String)],
        if_exists: bool,
        warnings: &mut Vec<Warning>,
    ) -> SqlResult<()> {
        self.commit(|s| {
            let mut changes = Vec::new();
            let mut failed = Vec::new();
            for (user, host) in users {
                let Some(a) = s
                    .accounts
                    .iter()
                    .find(|a| &a.user == user && a.host.eq_ignore_ascii_case(host))
                else {
                    if if_exists {
                        warnings.push(Warning::note(
                            3162,
                            format!(
                                "Authorization ID {} does not exist.",
                                account_text(user, host)
                            ),
                        ));
                    } else {
                        failed.push(account_text(user, host));
                    }
                    continue;
                };
                changes.push(AclChange::DeleteAccount {
                    user: a.user.clone(),
                    host: a.host.clone(),
                });
                revoke_object_grants(s, &a.user, &a.host, &mut changes);
            }
            all_or_nothing("DROP USER", &failed, changes)
        })
    }

    /// `ALTER USER ... IDENTIFIED`, `SET PASSWORD`: new plugin and stored
    /// string for existing accounts. `missing` is the error for an
    /// unknown account (`None` with `IF EXISTS`: note 3162).
    pub fn set_auth(
        &self,
        updates: Vec<AuthUpdate>,
        missing: Option<SqlError>,
        warnings: &mut Vec<Warning>,
    ) -> SqlResult<()> {
        self.commit(|s| {
            let mut changes = Vec::new();
            let mut failed = Vec::new();
            for (user, host, auth) in updates {
                let Some(a) = s
                    .accounts
                    .iter()
                    .find(|a| a.user == user && a.host.eq_ignore_ascii_case(&host))
                else {
                    if missing.is_none() {
                        warnings.push(Warning::note(
                            3162,
                            format!(
                                "Authorization ID {} does not exist.",
                                account_text(&user, &host)
                            ),
                        ));
                    } else {
                        failed.push(account_text(&user, &host));
                    }
                    continue;
                };
                if let Some((plugin, auth_string)) = auth {
                    let mut a = a.clone();
                    a.plugin = plugin;
                    a.auth_string = auth_string;
                    changes.push(AclChange::PutAccount(a));
                }
            }
            if !failed.is_empty() {
                return Err(match missing {
                    Some(SqlError::AccountOperationFailed { operation, .. }) => {
                        SqlError::AccountOperationFailed {
                            operation,
                            accounts: failed.join(","),
                        }
                    }
                    Some(other) => other,
                    None => SqlError::Internal("unreachable".into()),
                });
            }
            Ok(changes)
        })
    }

    /// `RENAME USER a TO b, ...`: accounts and their grants move.
    pub fn rename_users(&self, pairs: &[(AccountKey, AccountKey)]) -> SqlResult<()> {
        self.commit(|s| {
            let mut work = s.clone();
            let mut changes = Vec::new();
            let mut failed = Vec::new();
            for ((fu, fh), (tu, th)) in pairs {
                let from = work
                    .accounts
                    .iter()
                    .find(|a| &a.user == fu && a.host.eq_ignore_ascii_case(fh))
                    .cloned();
                let to_exists = work
                    .accounts
                    .iter()
                    .any(|a| &a.user == tu && a.host.eq_ignore_ascii_case(th));
                let Some(from) = from.filter(|_| !to_exists) else {
                    failed.push(account_text(fu, fh));
                    continue;
                };
                let mut batch = vec![
                    AclChange::DeleteAccount {
                        user: from.user.clone(),
                        host: from.host.clone(),
                    },
                    AclChange::PutAccount(AccountRecord {
                        user: tu.clone(),
                        host: th.clone(),
                        ..from.clone()
                    }),
                ];
                for g in work
                    .db_grants
                    .iter()
                    .filter(|g| g.user == from.user && g.host == from.host)
                {
                    batch.push(AclChange::DeleteDbGrant {
                        user: g.user.clone(),
                        host: g.host.clone(),
                        db: g.db.clone(),
                    });
                    batch.push(AclChange::PutDbGrant(DbGrantRecord {
                        user: tu.clone(),
                        host: th.clone(),
                        ..g.clone()
                    }));
                }
                for g in work
                    .table_grants
                    .iter()
                    .filter(|g| g.user == from.user && g.host == from.host)
                {
                    batch.push(AclChange::DeleteTableGrant {
                        user: g.user.clone(),
                        host: g.host.clone(),
                        db: g.db.clone(),
                        table: g.table.clone(),
                    });
                    batch.push(AclChange::PutTableGrant(TableGrantRecord {
                        user: tu.clone(),
                        host: th.clone(),
                        ..g.clone()
                    }));
                }
                apply_to_snapshot(&mut work, &batch);
                changes.extend(batch);
            }
            all_or_nothing("RENAME USER", &failed, changes)
        })
    }

    /// `GRANT privileges ON level TO users`: accounts must exist (1410).
    pub fn grant(
        &self,
        users: &[(String, String)],
        level: &Level,
        privileges: Privileges,
    ) -> SqlResult<()> {
        self.commit(|s| {
            let mut changes = Vec::new();
            for (user, host) in users {
                let Some(a) = s
                    .accounts
                    .iter()
                    .find(|a| &a.user == user && a.host.eq_ignore_ascii_case(host))
                else {
                    return Err(SqlError::CannotCreateUserWithGrant);
                };
                match level {
                    Level::Global => {
                        let mut a = a.clone();
                        a.privileges |= privileges;
                        changes.push(AclChange::PutAccount(a));
                    }
                    Level::Database(db) => {
                        let old = s
                            .db_grants
                            .iter()
                            .find(|g| g.user == a.user && g.host == a.host && &g.db == db)
                            .map_or(Privileges::NONE, |g| g.privileges);
                        changes.push(AclChange::PutDbGrant(DbGrantRecord {
                            user: a.user.clone(),
                            host: a.host.clone(),
                            db: db.clone(),
                            privileges: old | privileges,
                        }));
                    }
                    Level::Table(db, table) => {
                        let old = s
                            .table_grants
                            .iter()
                            .find(|g| {
                                g.user == a.user
                                    && g.host == a.host
                                    && &g.db == db
                                    && &g.table == table
                            })
                            .map_or(Privileges::NONE, |g| g.privileges);
                        changes.push(AclChange::PutTableGrant(TableGrantRecord {
                            user: a.user.clone(),
                            host: a.host.clone(),
                            db: db.clone(),
                            table: table.clone(),
                            privileges: old | privileges,
                        }));
                    }
                }
            }
            Ok(changes)
        })
    }

    /// `REVOKE privileges ON level FROM users` (1141 / 1147 when there is
    /// nothing to revoke at that level).
    pub fn revoke(
        &self,
        users: &[(String, String)],
        level: &Level,
        privileges: Privileges,
    ) -> SqlResult<()> {
        self.commit(|s| {
            let mut changes = Vec::new();
            for (user, host) in users {
                let no_grant = || SqlError::NoSuchGrant {
                    user: user.clone(),
                    host: host.clone(),
                };
                let Some(a) = s
                    .accounts
                    .iter()
                    .find(|a| &a.user == user && a.host.eq_ignore_ascii_case(host))
                else {
                    return Err(no_grant());
                };
                match level {
                    Level::Global => {
                        let mut a = a.clone();
                        a.privileges = a.privileges.without(privileges);
                        changes.push(AclChange::PutAccount(a));
                    }
                    Level::Database(db) => {
                        let Some(g) = s
                            .db_grants
                            .iter()
                            .find(|g| g.user == a.user && g.host == a.host && &g.db == db)
                        else {
                            return Err(no_grant());
                        };
                        let left = g.privileges.without(privileges);
                        if left.is_empty() {
                            changes.push(AclChange::DeleteDbGrant {
                                user: g.user.clone(),
                                host: g.host.clone(),
                                db: g.db.clone(),
                            });
                        } else {
                            changes.push(AclChange::PutDbGrant(DbGrantRecord {
                                privileges: left,
                                ..g.clone()
                            }));
                        }
                    }
                    Level::Table(db, table) => {
                        let Some(g) = s.table_grants.iter().find(|g| {
                            g.user == a.user && g.host == a.host && &g.db == db && &g.table == table
                        }) else {
                            return Err(SqlError::NoSuchTableGrant {
                                user: user.clone(),
                                host: host.clone(),
                                table: table.clone(),
                            });
                        };
                        let left = g.privileges.without(privileges);
                        if left.is_empty() {
                            changes.push(AclChange::DeleteTableGrant {
                                user: g.user.clone(),
                                host: g.host.clone(),
                                db: g.db.clone(),
                                table: g.table.clone(),
                            });
                        } else {
                            changes.push(AclChange::PutTableGrant(TableGrantRecord {
                                privileges: left,
                                ..g.clone()
                            }));
                        }
                    }
                }
            }
            Ok(changes)
        })
    }

    /// `REVOKE ALL PRIVILEGES, GRANT OPTION FROM users`: every privilege
    /// at every level.
    pub fn revoke_all(&self, users: &[(String, String)]) -> SqlResult<()> {
        self.commit(|s| {
            let mut changes = Vec::new();
            for (user, host) in users {
                let Some(a) = s
                    .accounts
                    .iter()
                    .find(|a| &a.user == user && a.host.eq_ignore_ascii_case(host))
                else {
                    return Err(SqlError::AccountOperationFailed {
                        operation: "REVOKE ALL PRIVILEGES, GRANT OPTION",
                        accounts: account_text(user, host),
                    });
                };
                let mut a = a.clone();
                a.privileges = Privileges::NONE;
                revoke_object_grants(s, &a.user, &a.host, &mut changes);
                changes.push(AclChange::PutAccount(a));
            }
            Ok(changes)
        })
    }
}

/// Appends the deletion of every schema and table grant of `user@host`.
fn revoke_object_grants(s: &AclSnapshot, user: &str, host: &str, changes: &mut Vec<AclChange>) {
    for g in s
        .db_grants
        .iter()
        .filter(|g| g.user == user && g.host == host)
    {
        changes.push(AclChange::DeleteDbGrant {
            user: g.user.clone(),
            host: g.host.clone(),
            db: g.db.clone(),
        });
    }
    for g in s
        .table_grants
        .iter()
        .filter(|g| g.user == user && g.host == host)
    {
        changes.push(AclChange::DeleteTableGrant {
            user: g.user.clone(),
            host: g.host.clone(),
            db: g.db.clone(),
            table: g.table.clone(),
        });
    }
}

/// A resolved privilege level (schema names filled in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Level {
    /// `*.*`.
    Global,
    /// `db.*`.
    Database(String),
    /// `db.tbl`.
    Table(String, String),
}

impl Level {
    /// The scope whose privileges are grantable here.
    pub fn scope(&self) -> GrantScope {
        match self {
            Level::Global => GrantScope::Global,
            Level::Database(_) => GrantScope::Database,
            Level::Table(..) => GrantScope::Table,
        }
    }
}

/// The changes of an account statement, or ER_CANNOT_USER (1396) naming
/// every account it failed on: MySQL changes none when one fails.
fn all_or_nothing(
    operation: &'static str,
    failed: &[String],
    changes: Vec<AclChange>,
) -> SqlResult<Vec<AclChange>> {
    if failed.is_empty() {
        Ok(changes)
    } else {
        Err(SqlError::AccountOperationFailed {
            operation,
            accounts: failed.join(","),
        })
    }
}
