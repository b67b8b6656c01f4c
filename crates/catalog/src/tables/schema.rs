//! Schemata: `mysql.schemata`.

use crate::codec::{ColumnDef, ColumnType, RowDecoder, RowEncoder, SystemTableDef, SystemTableId};
use crate::error::CatalogResult;
use crate::table::{SystemKey, SystemRow};

use super::{MAX_CHARSET_LEN, MAX_COLLATION_LEN, MAX_NAME_CHARS};

/// `mysql.schemata`: one row per schema (`CREATE DATABASE`).
pub static SCHEMATA: SystemTableDef = SystemTableDef {
    id: SystemTableId(4),
    name: "mysql.schemata",
    version: 1,
    columns: &[
        ColumnDef::new(
            "name",
            ColumnType::Text {
                max_chars: MAX_NAME_CHARS,
            },
        ),
        ColumnDef::new(
            "default_charset",
            ColumnType::Ascii {
                max_len: MAX_CHARSET_LEN,
            },
        ),
        ColumnDef::new(
            "default_collation",
            ColumnType::Ascii {
                max_len: MAX_COLLATION_LEN,
            },
        ),
    ],
    n_key: 1,
};

/// A schema (`mysql.schemata` row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaRow {
    /// Name, case-sensitive.
    pub name: String,
    /// Default character set (`utf8mb4`).
    pub charset: String,
    /// Default collation (`utf8mb4_0900_ai_ci`).
    pub collation: String,
}

impl SchemaRow {
    /// The row's key.
    pub fn key(&self) -> SchemaKey {
        SchemaKey {
            name: self.name.clone(),
        }
    }
}

impl SystemRow for SchemaRow {
    const DEF: &'static SystemTableDef = &SCHEMATA;

    fn encode(&self, enc: &mut RowEncoder) -> CatalogResult<()> {
        enc.text(&self.name)?;
        enc.text(&self.charset)?;
        enc.text(&self.collation)
    }

    fn decode(dec: &mut RowDecoder<'_>) -> CatalogResult<SchemaRow> {
        Ok(SchemaRow {
            name: dec.text()?,
            charset: dec.text()?,
            collation: dec.text()?,
        })
    }
}

/// Key of `mysql.schemata`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SchemaKey {
    /// Name.
    pub name: String,
}

impl SystemKey for SchemaKey {
    const DEF: &'static SystemTableDef = &SCHEMATA;

    fn encode(&self, enc: &mut RowEncoder) -> CatalogResult<()> {
        enc.text(&self.name)
    }
}
