//! Accounts and grants: `mysql.user`, `mysql.db`, `mysql.tables_priv`.

use crate::codec::{ColumnDef, ColumnType, RowDecoder, RowEncoder, SystemTableDef, SystemTableId};
use crate::error::CatalogResult;
use crate::table::{SystemKey, SystemRow};

use super::{MAX_AUTH_STRING_LEN, MAX_HOST_CHARS, MAX_NAME_CHARS, MAX_PLUGIN_LEN, MAX_USER_CHARS};

const USER_COL: ColumnDef = ColumnDef::new(
    "user",
    ColumnType::Text {
        max_chars: MAX_USER_CHARS,
    },
);
const HOST_COL: ColumnDef = ColumnDef::new(
    "host",
    ColumnType::TextAsciiCi {
        max_chars: MAX_HOST_CHARS,
    },
);
const DB_COL: ColumnDef = ColumnDef::new(
    "db",
    ColumnType::Text {
        max_chars: MAX_NAME_CHARS,
    },
);
const PRIVILEGES_COL: ColumnDef = ColumnDef::new("privileges", ColumnType::U64);

/// `mysql.user`: one row per account.
pub static USER: SystemTableDef = SystemTableDef {
    id: SystemTableId(1),
    name: "mysql.user",
    version: 1,
    columns: &[
        USER_COL,
        HOST_COL,
        ColumnDef::new(
            "plugin",
            ColumnType::Ascii {
                max_len: MAX_PLUGIN_LEN,
            },
        ),
        ColumnDef::new(
            "authentication_string",
            ColumnType::Bytes {
                max_len: MAX_AUTH_STRING_LEN,
            },
        ),
        PRIVILEGES_COL,
        ColumnDef::new("account_locked", ColumnType::Bool),
        ColumnDef::new("password_expired", ColumnType::Bool),
        ColumnDef::nullable("password_last_changed", ColumnType::U64),
    ],
    n_key: 2,
};

/// `mysql.db`: privileges on one schema (or schema pattern).
pub static DB: SystemTableDef = SystemTableDef {
    id: SystemTableId(2),
    name: "mysql.db",
    version: 1,
    columns: &[USER_COL, HOST_COL, DB_COL, PRIVILEGES_COL],
    n_key: 3,
};

/// `mysql.tables_priv`: privileges on one table.
pub static TABLES_PRIV: SystemTableDef = SystemTableDef {
    id: SystemTableId(3),
    name: "mysql.tables_priv",
    version: 1,
    columns: &[
        USER_COL,
        HOST_COL,
        DB_COL,
        ColumnDef::new(
            "table_name",
            ColumnType::Text {
                max_chars: MAX_NAME_CHARS,
            },
        ),
        PRIVILEGES_COL,
    ],
    n_key: 4,
};

/// An account (`mysql.user` row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountRow {
    /// User name (empty = anonymous), case-sensitive.
    pub user: String,
    /// Host name or pattern; stored and returned lowercased.
    pub host: String,
    /// Authentication plugin name (`caching_sha2_password`, ...).
    pub plugin: String,
    /// Stored authentication string (the plugin's hash).
    pub auth_string: Vec<u8>,
    /// Global privileges (the SQL layer's bit mask).
    pub privileges: u64,
    /// `ACCOUNT LOCK`.
    pub account_locked: bool,
    /// `PASSWORD EXPIRE`.
    pub password_expired: bool,
    /// When the password last changed, in microseconds since the Unix
    /// epoch (`None` = unknown).
    pub password_last_changed: Option<u64>,
}

impl AccountRow {
    /// An unlocked account with a current password and no change time.
    pub fn new(
        user: impl Into<String>,
        host: impl Into<String>,
        plugin: impl Into<String>,
        auth_string: Vec<u8>,
        privileges: u64,
    ) -> AccountRow {
        AccountRow {
            user: user.into(),
            host: host.into(),
            plugin: plugin.into(),
            auth_string,
            privileges,
            account_locked: false,
            password_expired: false,
            password_last_changed: None,
        }
    }

    /// The row's key.
    pub fn key(&self) -> AccountKey {
        AccountKey {
            user: self.user.clone(),
            host: self.host.clone(),
        }
    }
}

impl SystemRow for AccountRow {
    const DEF: &'static SystemTableDef = &USER;

    fn encode(&self, enc: &mut RowEncoder) -> CatalogResult<()> {
        enc.text(&self.user)?;
        enc.text(&self.host)?;
        enc.text(&self.plugin)?;
        enc.bytes(&self.auth_string)?;
        enc.u64(self.privileges)?;
        enc.bool(self.account_locked)?;
        enc.bool(self.password_expired)?;
        enc.opt_u64(self.password_last_changed)
    }

    fn decode(dec: &mut RowDecoder<'_>) -> CatalogResult<AccountRow> {
        Ok(AccountRow {
            user: dec.text()?,
            host: dec.text()?,
            plugin: dec.text()?,
            auth_string: dec.bytes()?,
            privileges: dec.u64()?,
            account_locked: dec.bool()?,
            password_expired: dec.bool()?,
            password_last_changed: dec.opt_u64()?,
        })
    }
}

/// Key of `mysql.user`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AccountKey {
    /// User name.
    pub user: String,
    /// Host name or pattern (any case).
    pub host: String,
}

impl SystemKey for AccountKey {
    const DEF: &'static SystemTableDef = &USER;

    fn encode(&self, enc: &mut RowEncoder) -> CatalogResult<()> {
        enc.text(&self.user)?;
        enc.text(&self.host)
    }
}

/// Privileges on one schema (`mysql.db` row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbGrantRow {
    /// User name.
    pub user: String,
    /// Host name or pattern; stored and returned lowercased.
    pub host: String,
    /// Schema name or pattern.
    pub db: String,
    /// Privileges (the SQL layer's bit mask).
    pub privileges: u64,
}

impl DbGrantRow {
    /// The row's key.
    pub fn key(&self) -> DbGrantKey {
        DbGrantKey {
            user: self.user.clone(),
            host: self.host.clone(),
            db: self.db.clone(),
        }
    }
}

impl SystemRow for DbGrantRow {
    const DEF: &'static SystemTableDef = &DB;

    fn encode(&self, enc: &mut RowEncoder) -> CatalogResult<()> {
        enc.text(&self.user)?;
        enc.text(&self.host)?;
        enc.text(&self.db)?;
        enc.u64(self.privileges)
    }

    fn decode(dec: &mut RowDecoder<'_>) -> CatalogResult<DbGrantRow> {
        Ok(DbGrantRow {
            user: dec.text()?,
            host: dec.text()?,
            db: dec.text()?,
            privileges: dec.u64()?,
        })
    }
}

/// Key of `mysql.db`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DbGrantKey {
    /// User name.
    pub user: String,
    /// Host name or pattern (any case).
    pub host: String,
    /// Schema name or pattern.
    pub db: String,
}

impl SystemKey for DbGrantKey {
    const DEF: &'static SystemTableDef = &DB;

    fn encode(&self, enc: &mut RowEncoder) -> CatalogResult<()> {
        enc.text(&self.user)?;
        enc.text(&self.host)?;
        enc.text(&self.db)
    }
}

/// Privileges on one table (`mysql.tables_priv` row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableGrantRow {
    /// User name.
    pub user: String,
    /// Host name or pattern; stored and returned lowercased.
    pub host: String,
    /// Schema name.
    pub db: String,
    /// Table name.
    pub table: String,
    /// Privileges (the SQL layer's bit mask).
    pub privileges: u64,
}

impl TableGrantRow {
    /// The row's key.
    pub fn key(&self) -> TableGrantKey {
        TableGrantKey {
            user: self.user.clone(),
            host: self.host.clone(),
            db: self.db.clone(),
            table: self.table.clone(),
        }
    }
}

impl SystemRow for TableGrantRow {
    const DEF: &'static SystemTableDef = &TABLES_PRIV;

    fn encode(&self, enc: &mut RowEncoder) -> CatalogResult<()> {
        enc.text(&self.user)?;
        enc.text(&self.host)?;
        enc.text(&self.db)?;
        enc.text(&self.table)?;
        enc.u64(self.privileges)
    }

    fn decode(dec: &mut RowDecoder<'_>) -> CatalogResult<TableGrantRow> {
        Ok(TableGrantRow {
            user: dec.text()?,
            host: dec.text()?,
            db: dec.text()?,
            table: dec.text()?,
            privileges: dec.u64()?,
        })
    }
}

/// Key of `mysql.tables_priv`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TableGrantKey {
    /// User name.
    pub user: String,
    /// Host name or pattern (any case).
    pub host: String,
    /// Schema name.
    pub db: String,
    /// Table name.
    pub table: String,
}

impl SystemKey for TableGrantKey {
    const DEF: &'static SystemTableDef = &TABLES_PRIV;

    fn encode(&self, enc: &mut RowEncoder) -> CatalogResult<()> {
        enc.text(&self.user)?;
        enc.text(&self.host)?;
        enc.text(&self.db)?;
        enc.text(&self.table)
    }
}
