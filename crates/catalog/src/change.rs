//! What callers hand to the catalog and get back: changes, snapshots,
//! reports, id ranges.

use std::ops::Range;

use basalt_common::Lsn;

use crate::tables::{
    AccountKey, AccountRow, DbGrantKey, DbGrantRow, SchemaKey, SchemaRow, TableGrantKey,
    TableGrantRow,
};

/// One change of a batch. A `Put` inserts the row or replaces the row with
/// the same key; a `Delete` removes the row with the key (a missing row is
/// not an error, it is counted in [`ApplyReport::absent`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CatalogChange {
    /// Insert or replace an account.
    PutAccount(AccountRow),
    /// Remove an account.
    DeleteAccount(AccountKey),
    /// Insert or replace a schema grant.
    PutDbGrant(DbGrantRow),
    /// Remove a schema grant.
    DeleteDbGrant(DbGrantKey),
    /// Insert or replace a table grant.
    PutTableGrant(TableGrantRow),
    /// Remove a table grant.
    DeleteTableGrant(TableGrantKey),
    /// Insert or replace a schema.
    PutSchema(SchemaRow),
    /// Remove a schema.
    DeleteSchema(SchemaKey),
}

/// Every row of the account, grant and schema tables, each table in key
/// order (host names lowercased).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CatalogSnapshot {
    /// `mysql.user`.
    pub accounts: Vec<AccountRow>,
    /// `mysql.db`.
    pub db_grants: Vec<DbGrantRow>,
    /// `mysql.tables_priv`.
    pub table_grants: Vec<TableGrantRow>,
    /// `mysql.schemata`.
    pub schemata: Vec<SchemaRow>,
}

impl CatalogSnapshot {
    /// True when no table holds a row (a new data directory).
    pub fn is_empty(&self) -> bool {
        self.accounts.is_empty()
            && self.db_grants.is_empty()
            && self.table_grants.is_empty()
            && self.schemata.is_empty()
    }
}

/// What one [`Catalog::apply`](crate::Catalog::apply) did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApplyReport {
    /// Puts that inserted a new row.
    pub inserted: u64,
    /// Puts that replaced a row.
    pub updated: u64,
    /// Deletes that removed a row.
    pub deleted: u64,
    /// Deletes that found no row.
    pub absent: u64,
    /// End LSN of the batch's redo, durable when `apply` returned (`None`
    /// when the batch changed nothing).
    pub lsn: Option<Lsn>,
}

/// How many ids of each kind [`Catalog::allocate_ids`](crate::Catalog::allocate_ids)
/// should hand out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IdRequest {
    /// Table ids.
    pub tables: u32,
    /// Index ids.
    pub indexes: u32,
    /// Tablespace ids.
    pub spaces: u32,
}

/// Ids handed out by one allocation; never handed out again, even after a
/// crash.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllocatedIds {
    /// Table ids.
    pub tables: Range<u64>,
    /// Index ids (`basalt_common::IndexId`).
    pub indexes: Range<u64>,
    /// Tablespace ids (`basalt_common::SpaceId`).
    pub spaces: Range<u32>,
}
