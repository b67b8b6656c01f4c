//! The system tables: their fixed definitions and typed rows.
//!
//! | id | table               | key                          | other columns |
//! |----|---------------------|------------------------------|---------------|
//! | 1  | `mysql.user`        | user, host                   | plugin, authentication_string, privileges, account_locked, password_expired, password_last_changed |
//! | 2  | `mysql.db`          | user, host, db               | privileges |
//! | 3  | `mysql.tables_priv` | user, host, db, table_name   | privileges |
//! | 4  | `mysql.schemata`    | name                         | default_charset, default_collation |
//!
//! Key comparisons follow MySQL: user, schema and table names are
//! case-sensitive (`utf8mb4_bin`, `lower_case_table_names=0`), host names
//! are case-insensitive and stored lowercased (as MySQL stores them).
//! Privileges are the SQL layer's 64-bit privilege mask, stored as is.
//!
//! **Adding a table** (the data dictionary's tables, columns, indexes and
//! statistics go here): give it the next unused id, a definition and a
//! row type in a module of its own, and append it to [`SYSTEM_TABLES`].
//! `Catalog::open` creates every listed table the dictionary header does
//! not name yet, in one mini-transaction, so an existing data directory
//! gains the new table on its next start and a new one gets it at
//! bootstrap. Ids are never reused; a changed column list is a new layout
//! `version` and needs a conversion step at open (until one exists, a
//! mismatch is refused with `CatalogError::LayoutMismatch`).

mod acl;
mod schema;

pub use acl::{
    AccountKey, AccountRow, DbGrantKey, DbGrantRow, TableGrantKey, TableGrantRow, DB, TABLES_PRIV,
    USER,
};
pub use schema::{SchemaKey, SchemaRow, SCHEMATA};

use crate::codec::SystemTableDef;

/// Every system table this build knows, in id order.
pub static SYSTEM_TABLES: [&SystemTableDef; 4] = [&USER, &DB, &TABLES_PRIV, &SCHEMATA];

/// Longest user name in characters (MySQL's `USERNAME_CHAR_LENGTH`).
pub const MAX_USER_CHARS: u32 = 32;
/// Longest host name or pattern in characters.
pub const MAX_HOST_CHARS: u32 = 255;
/// Longest schema or table name in characters (`NAME_CHAR_LEN`).
pub const MAX_NAME_CHARS: u32 = 64;
/// Longest authentication plugin name.
pub const MAX_PLUGIN_LEN: u32 = 64;
/// Longest stored authentication string in bytes.
pub const MAX_AUTH_STRING_LEN: u32 = 255;
/// Longest character set name.
pub const MAX_CHARSET_LEN: u32 = 32;
/// Longest collation name.
pub const MAX_COLLATION_LEN: u32 = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_definition_builds_a_layout_and_ids_are_unique() {
        let mut ids = std::collections::BTreeSet::new();
        for def in SYSTEM_TABLES {
            def.layout().unwrap_or_else(|e| panic!("{}: {e}", def.name));
            assert!(ids.insert(def.id), "{} reuses id {}", def.name, def.id.0);
            assert!(u64::from(def.id.0) < crate::FIRST_DYNAMIC_ID);
            assert!(def.id.0 > 0);
        }
        let sorted: Vec<_> = SYSTEM_TABLES.iter().map(|d| d.id).collect();
        let mut by_id = sorted.clone();
        by_id.sort();
        assert_eq!(sorted, by_id, "SYSTEM_TABLES is in id order");
    }
}
