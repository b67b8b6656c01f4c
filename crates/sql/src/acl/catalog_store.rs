//! `CatalogAclStore`: the SQL layer's [`AclStore`] kept durably in the
//! data dictionary (`mysql.user`, `mysql.db`, `mysql.tables_priv`,
//! `mysql.schemata` in the system tablespace, see `basalt-catalog`).
//!
//! * `load` reads every row with `Catalog::load_all`.
//! * `apply` turns the batch into `CatalogChange`s and runs them with
//!   `Catalog::apply`: one mini-transaction, flushed to the redo log
//!   before `Ok`; on `Err` nothing of the batch exists, in memory or
//!   after a restart (the contract of `AclStore::apply`).
//!
//! Mappings:
//! * authentication plugins are stored by name (`AuthPlugin::name`) and
//!   parsed back with `AuthPlugin::from_name`; an unknown name on disk is
//!   damaged data (`HA_ERR_CRASHED`);
//! * privileges are stored as the raw 64-bit mask `Privileges(u64)`, so
//!   the bit positions in `acl::privilege` (the order of its `DEFS`) are
//!   an on-disk format from now on: append new privileges, never reorder;
//! * host names come back lowercased (the catalog compares them
//!   ASCII-case-insensitively and stores them folded, as MySQL does);
//! * `mysql.user` columns the SQL layer does not model yet
//!   (`account_locked`, `password_expired`, `password_last_changed`) are
//!   written as unlocked / not expired / unknown.
//!
//! Both calls block on page latches and an fsync: run them off the async
//! reactor threads, like every engine call.

use std::sync::Arc;

use basalt_catalog::{
    AccountKey, AccountRow, Catalog, CatalogChange, CatalogError, DbGrantKey, DbGrantRow,
    SchemaKey, SchemaRow, TableGrantKey, TableGrantRow,
};
use basalt_mtr::PageStore;
use basalt_protocol::AuthPlugin;

use crate::acl::store::{
    AccountRecord, AclChange, AclSnapshot, AclStore, DbGrantRecord, SchemaRecord, TableGrantRecord,
};
use crate::acl::Privileges;
use crate::error::{SqlError, SqlResult};
use crate::error_map::{HA_ERR_CRASHED, HA_ERR_GENERIC};

/// Accounts, grants and schemata in the data dictionary.
#[derive(Debug, Clone)]
pub struct CatalogAclStore {
    store: PageStore,
    catalog: Arc<Catalog>,
}

impl CatalogAclStore {
    /// A store over the open `catalog` of the data directory `store`
    /// serves (`Catalog::open_or_bootstrap(storage.store())`).
    pub fn new(store: PageStore, catalog: Arc<Catalog>) -> CatalogAclStore {
        CatalogAclStore { store, catalog }
    }
}

impl AclStore for CatalogAclStore {
    fn load(&self) -> SqlResult<AclSnapshot> {
        let rows = self.catalog.load_all(&self.store).map_err(sql_error)?;
        let accounts = rows
            .accounts
            .into_iter()
            .map(|a| {
                let plugin = AuthPlugin::from_name(a.plugin.as_bytes()).ok_or_else(|| {
                    SqlError::Storage {
                        code: HA_ERR_CRASHED,
                        reason: format!(
                            "mysql.user row {}@{} names the unknown plugin '{}'",
                            a.user, a.host, a.plugin
                        ),
                        source: None,
                    }
                })?;
                Ok(AccountRecord {
                    user: a.user,
                    host: a.host,
                    plugin,
                    auth_string: a.auth_string,
                    privileges: Privileges(a.privileges),
                })
            })
            .collect::<SqlResult<Vec<_>>>()?;
        Ok(AclSnapshot {
            accounts,
            db_grants: rows
                .db_grants
                .into_iter()
                .map(|g| DbGrantRecord {
                    user: g.user,
                    host: g.host,
                    db: g.db,
                    privileges: Privileges(g.privileges),
                })
                .collect(),
            table_grants: rows
                .table_grants
                .into_iter()
                .map(|g| TableGrantRecord {
                    user: g.user,
                    host: g.host,
                    db: g.db,
                    table: g.table,
                    privileges: Privileges(g.privileges),
                })
                .collect(),
            schemata: rows
                .schemata
                .into_iter()
                .map(|s| SchemaRecord {
                    name: s.name,
                    charset: s.charset,
                    collation: s.collation,
                })
                .collect(),
        })
    }

    fn apply(&self, changes: &[AclChange]) -> SqlResult<()> {
        let batch: Vec<CatalogChange> = changes.iter().map(catalog_change).collect();
        self.catalog
            .apply(&self.store, &batch)
            .map(|_report| ())
            .map_err(sql_error)
    }
}

/// The catalog's form of one change.
fn catalog_change(c: &AclChange) -> CatalogChange {
    match c {
        AclChange::PutAccount(a) => CatalogChange::PutAccount(AccountRow::new(
            a.user.clone(),
            a.host.clone(),
            a.plugin.name(),
            a.auth_string.clone(),
            a.privileges.0,
        )),
        AclChange::DeleteAccount { user, host } => CatalogChange::DeleteAccount(AccountKey {
            user: user.clone(),
            host: host.clone(),
        }),
        AclChange::PutDbGrant(g) => CatalogChange::PutDbGrant(DbGrantRow {
            user: g.user.clone(),
            host: g.host.clone(),
            db: g.db.clone(),
            privileges: g.privileges.0,
        }),
        AclChange::DeleteDbGrant { user, host, db } => CatalogChange::DeleteDbGrant(DbGrantKey {
            user: user.clone(),
            host: host.clone(),
            db: db.clone(),
        }),
        AclChange::PutTableGrant(g) => CatalogChange::PutTableGrant(TableGrantRow {
            user: g.user.clone(),
            host: g.host.clone(),
            db: g.db.clone(),
            table: g.table.clone(),
            privileges: g.privileges.0,
        }),
        AclChange::DeleteTableGrant {
            user,
            host,
            db,
            table,
        } => CatalogChange::DeleteTableGrant(TableGrantKey {
            user: user.clone(),
            host: host.clone(),
            db: db.clone(),
            table: table.clone(),
        }),
        AclChange::PutSchema(s) => CatalogChange::PutSchema(SchemaRow {
            name: s.name.clone(),
            charset: s.charset.clone(),
            collation: s.collation.clone(),
        }),
        AclChange::DeleteSchema { name } => {
            CatalogChange::DeleteSchema(SchemaKey { name: name.clone() })
        }
    }
}

/// A catalog failure as the client sees it.
fn sql_error(e: CatalogError) -> SqlError {
    let e = match e.into_mtr() {
        // I/O, buffer pool, redo log, tablespace full: the engine mapping.
        Ok(mtr) => return SqlError::from(mtr),
        Err(e) => e,
    };
    match e {
        // Values the statement layer should have refused already (name
        // lengths); reported as they are.
        e @ (CatalogError::InvalidValue { .. } | CatalogError::BatchTooLarge { .. }) => {
            SqlError::Internal(e.to_string())
        }
        other => {
            let code = if other.is_corruption() {
                HA_ERR_CRASHED
            } else {
                HA_ERR_GENERIC
            };
            tracing::error!(error = %other, code, "data dictionary error");
            SqlError::Storage {
                code,
                reason: other.to_string(),
                source: None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use basalt_io::{Io, MemIo};
    use basalt_mtr::{Storage, StorageConfig};

    fn storage() -> Storage {
        let io: Arc<dyn Io> = Arc::new(MemIo::new());
        let mut cfg = StorageConfig::new("/db");
        cfg.log.file_size = 4 << 20;
        cfg.log.buffer_size = 1 << 20;
        Storage::create(io, cfg).unwrap()
    }

    #[test]
    fn records_round_trip_through_the_catalog() {
        let storage = storage();
        let catalog = Arc::new(Catalog::open_or_bootstrap(storage.store()).unwrap());
        let acl = CatalogAclStore::new(storage.store().clone(), catalog);
        assert!(acl.load().unwrap().is_empty());
        let root = AccountRecord {
            user: "root".into(),
            host: "localhost".into(),
            plugin: AuthPlugin::CachingSha2Password,
            auth_string: Vec::new(),
            privileges: Privileges::all(),
        };
        let changes = vec![
            AclChange::PutAccount(root.clone()),
            AclChange::PutDbGrant(DbGrantRecord {
                user: "root".into(),
                host: "localhost".into(),
                db: "shop".into(),
                privileges: Privileges::SELECT | Privileges::GRANT_OPTION,
            }),
            AclChange::PutSchema(SchemaRecord {
                name: "shop".into(),
                charset: "utf8mb4".into(),
                collation: "utf8mb4_0900_ai_ci".into(),
            }),
        ];
        acl.apply(&changes).unwrap();
        let mut expected = AclSnapshot::default();
        crate::acl::store::apply_to_snapshot(&mut expected, &changes);
        assert_eq!(acl.load().unwrap(), expected);

        // A refused batch (a 33-character user name) leaves nothing.
        let bad = vec![
            AclChange::DeleteAccount {
                user: "root".into(),
                host: "localhost".into(),
            },
            AclChange::PutAccount(AccountRecord {
                user: "u".repeat(33),
                ..root
            }),
        ];
        assert!(acl.apply(&bad).is_err());
        assert_eq!(acl.load().unwrap(), expected);
    }
}
