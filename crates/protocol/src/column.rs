//! Column metadata: MySQL type codes, column flags and `ColumnDefinition41`.
//!
//! ```text
//! ColumnDefinition41
//!   lenenc "def" | schema | table | org_table | name | org_name
//!   lenenc 0x0C (length of the fixed part)
//!   int<2> character set   int<4> column length   int<1> type
//!   int<2> flags           int<1> decimals        int<2> filler 0
//!   [COM_FIELD_LIST only: lenenc default value, sent as NULL 0xFB]
//! ```

use crate::packet::{put_lenenc_bytes, put_lenenc_int};

/// `binary` collation id, used for numeric and temporal columns.
pub const CHARSET_BINARY: u16 = 63;
/// `utf8mb4_0900_ai_ci`, Basalt's default collation.
pub const CHARSET_UTF8MB4_0900_AI_CI: u16 = 255;
/// `utf8mb4_general_ci`.
pub const CHARSET_UTF8MB4_GENERAL_CI: u16 = 45;
/// `utf8mb4_bin`.
pub const CHARSET_UTF8MB4_BIN: u16 = 46;

/// MySQL field type codes (`MYSQL_TYPE_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ColumnType {
    /// `DECIMAL` (old).
    Decimal = 0,
    /// `TINYINT`.
    Tiny = 1,
    /// `SMALLINT`.
    Short = 2,
    /// `INT`.
    Long = 3,
    /// `FLOAT`.
    Float = 4,
    /// `DOUBLE`.
    Double = 5,
    /// `NULL`.
    Null = 6,
    /// `TIMESTAMP`.
    Timestamp = 7,
    /// `BIGINT`.
    LongLong = 8,
    /// `MEDIUMINT`.
    Int24 = 9,
    /// `DATE`.
    Date = 10,
    /// `TIME`.
    Time = 11,
    /// `DATETIME`.
    DateTime = 12,
    /// `YEAR`.
    Year = 13,
    /// `NEWDATE` (internal).
    NewDate = 14,
    /// `VARCHAR`.
    VarChar = 15,
    /// `BIT`.
    Bit = 16,
    /// `TIMESTAMP2` (internal).
    Timestamp2 = 17,
    /// `DATETIME2` (internal).
    DateTime2 = 18,
    /// `TIME2` (internal).
    Time2 = 19,
    /// `VECTOR`.
    Vector = 242,
    /// `JSON`.
    Json = 245,
    /// `DECIMAL`.
    NewDecimal = 246,
    /// `ENUM`.
    Enum = 247,
    /// `SET`.
    Set = 248,
    /// `TINYBLOB` / `TINYTEXT`.
    TinyBlob = 249,
    /// `MEDIUMBLOB` / `MEDIUMTEXT`.
    MediumBlob = 250,
    /// `LONGBLOB` / `LONGTEXT`.
    LongBlob = 251,
    /// `BLOB` / `TEXT`.
    Blob = 252,
    /// `VARCHAR` / `VARBINARY` in result sets.
    VarString = 253,
    /// `CHAR` / `BINARY`.
    String = 254,
    /// `GEOMETRY`.
    Geometry = 255,
}

impl ColumnType {
    /// Decodes a type byte.
    pub fn from_u8(b: u8) -> Option<Self> {
        use ColumnType::*;
        Some(match b {
            0 => Decimal,
            1 => Tiny,
            2 => Short,
            3 => Long,
            4 => Float,
            5 => Double,
            6 => Null,
            7 => Timestamp,
            8 => LongLong,
            9 => Int24,
            10 => Date,
            11 => Time,
            12 => DateTime,
            13 => Year,
            14 => NewDate,
            15 => VarChar,
            16 => Bit,
            17 => Timestamp2,
            18 => DateTime2,
            19 => Time2,
            242 => Vector,
            245 => Json,
            246 => NewDecimal,
            247 => Enum,
            248 => Set,
            249 => TinyBlob,
            250 => MediumBlob,
            251 => LongBlob,
            252 => Blob,
            253 => VarString,
            254 => String,
            255 => Geometry,
            _ => return None,
        })
    }

    /// True for the integer types (including `YEAR`).
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            ColumnType::Tiny
                | ColumnType::Short
                | ColumnType::Long
                | ColumnType::LongLong
                | ColumnType::Int24
                | ColumnType::Year
        )
    }

    /// True for types whose values are sent as length-encoded strings in the
    /// binary protocol.
    pub fn is_string_like(self) -> bool {
        matches!(
            self,
            ColumnType::Decimal
                | ColumnType::NewDecimal
                | ColumnType::VarChar
                | ColumnType::Bit
                | ColumnType::Vector
                | ColumnType::Json
                | ColumnType::Enum
                | ColumnType::Set
                | ColumnType::TinyBlob
                | ColumnType::MediumBlob
                | ColumnType::LongBlob
                | ColumnType::Blob
                | ColumnType::VarString
                | ColumnType::String
                | ColumnType::Geometry
        )
    }

    /// Display width MySQL reports when nothing more specific is known.
    pub fn default_length(self) -> u32 {
        use ColumnType::*;
        match self {
            Tiny => 4,
            Short => 6,
            Int24 => 9,
            Long => 11,
            LongLong => 20,
            Float => 12,
            Double => 22,
            Decimal | NewDecimal => 67,
            Null => 0,
            Year => 4,
            Date | NewDate => 10,
            Time | Time2 => 10,
            DateTime | DateTime2 | Timestamp | Timestamp2 => 19,
            Bit => 1,
            TinyBlob => 255,
            Blob => 65_535,
            MediumBlob => 16_777_215,
            LongBlob | Json | Geometry | Vector => u32::MAX,
            VarChar | VarString | String | Enum | Set => 255,
        }
    }
}

/// Column definition flags (`*_FLAG`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ColumnFlags(pub u16);

impl ColumnFlags {
    /// `NOT_NULL_FLAG`.
    pub const NOT_NULL: Self = Self(1);
    /// `PRI_KEY_FLAG`.
    pub const PRI_KEY: Self = Self(2);
    /// `UNIQUE_KEY_FLAG`.
    pub const UNIQUE_KEY: Self = Self(4);
    /// `MULTIPLE_KEY_FLAG`.
    pub const MULTIPLE_KEY: Self = Self(8);
    /// `BLOB_FLAG`.
    pub const BLOB: Self = Self(16);
    /// `UNSIGNED_FLAG`.
    pub const UNSIGNED: Self = Self(32);
    /// `ZEROFILL_FLAG`.
    pub const ZEROFILL: Self = Self(64);
    /// `BINARY_FLAG`.
    pub const BINARY: Self = Self(128);
    /// `ENUM_FLAG`.
    pub const ENUM: Self = Self(256);
    /// `AUTO_INCREMENT_FLAG`.
    pub const AUTO_INCREMENT: Self = Self(512);
    /// `TIMESTAMP_FLAG`.
    pub const TIMESTAMP: Self = Self(1024);
    /// `SET_FLAG`.
    pub const SET: Self = Self(2048);
    /// `NO_DEFAULT_VALUE_FLAG`.
    pub const NO_DEFAULT_VALUE: Self = Self(4096);
    /// `ON_UPDATE_NOW_FLAG`.
    pub const ON_UPDATE_NOW: Self = Self(8192);
    /// `NUM_FLAG`.
    pub const NUM: Self = Self(32768);

    /// True when every bit of `other` is set.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for ColumnFlags {
    type Output = Self;
    fn bitor(self, rhs: Self) -> Self {
        Self(self.0 | rhs.0)
    }
}

/// Full metadata of one result-set column or statement parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnDef {
    /// Schema (database) of the table, empty for expressions.
    pub schema: String,
    /// Table alias, empty for expressions.
    pub table: String,
    /// Physical table name.
    pub org_table: String,
    /// Column alias as the client sees it.
    pub name: String,
    /// Physical column name.
    pub org_name: String,
    /// Collation id of the values (63 = binary).
    pub charset: u16,
    /// Maximum display length in bytes.
    pub length: u32,
    /// Type code.
    pub column_type: ColumnType,
    /// Column flags.
    pub flags: ColumnFlags,
    /// Fractional digits (0x1F for "not fixed" floats).
    pub decimals: u8,
}

impl ColumnDef {
    /// An expression column with MySQL's defaults for `column_type`:
    /// binary collation and `NUM`/`BINARY` flags for numeric and temporal
    /// types, `utf8mb4_0900_ai_ci` for character types.
    pub fn new(name: impl Into<String>, column_type: ColumnType) -> Self {
        let name = name.into();
        let numeric = column_type.is_integer()
            || matches!(
                column_type,
                ColumnType::Float
                    | ColumnType::Double
                    | ColumnType::Decimal
                    | ColumnType::NewDecimal
            );
        let binary = numeric
            || matches!(
                column_type,
                ColumnType::Date
                    | ColumnType::NewDate
                    | ColumnType::Time
                    | ColumnType::Time2
                    | ColumnType::DateTime
                    | ColumnType::DateTime2
                    | ColumnType::Timestamp
                    | ColumnType::Timestamp2
                    | ColumnType::Bit
                    | ColumnType::Null
                    | ColumnType::Geometry
            );
        let mut flags = ColumnFlags::default();
        if numeric {
            flags = flags | ColumnFlags::NUM;
        }
        if binary {
            flags = flags | ColumnFlags::BINARY;
        }
        let decimals = match column_type {
            ColumnType::Float | ColumnType::Double => 31,
            ColumnType::Decimal | ColumnType::NewDecimal => 30,
            _ => 0,
        };
        ColumnDef {
            schema: String::new(),
            table: String::new(),
            org_table: String::new(),
            org_name: name.clone(),
            name,
            charset: if binary {
                CHARSET_BINARY
            } else {
                CHARSET_UTF8MB4_0900_AI_CI
            },
            length: column_type.default_length(),
            column_type,
            flags,
            decimals,
        }
    }

    /// Sets schema, table alias and physical table name.
    pub fn with_table(mut self, schema: &str, table: &str, org_table: &str) -> Self {
        self.schema = schema.to_owned();
        self.table = table.to_owned();
        self.org_table = org_table.to_owned();
        self
    }

    /// Adds flags.
    pub fn with_flags(mut self, flags: ColumnFlags) -> Self {
        self.flags = self.flags | flags;
        self
    }

    /// Sets the number of fractional digits.
    pub fn with_decimals(mut self, decimals: u8) -> Self {
        self.decimals = decimals;
        self
    }

    /// Sets the display length.
    pub fn with_length(mut self, length: u32) -> Self {
        self.length = length;
        self
    }

    /// Sets the collation id.
    pub fn with_charset(mut self, charset: u16) -> Self {
        self.charset = charset;
        self
    }

    /// True when the column is declared `UNSIGNED`.
    pub fn is_unsigned(&self) -> bool {
        self.flags.contains(ColumnFlags::UNSIGNED)
    }

    /// Appends the `ColumnDefinition41` payload. `field_list` adds the
    /// trailing default-value field that `COM_FIELD_LIST` replies carry.
    pub fn encode(&self, out: &mut Vec<u8>, field_list: bool) {
        put_lenenc_bytes(out, b"def");
        put_lenenc_bytes(out, self.schema.as_bytes());
        put_lenenc_bytes(out, self.table.as_bytes());
        put_lenenc_bytes(out, self.org_table.as_bytes());
        put_lenenc_bytes(out, self.name.as_bytes());
        put_lenenc_bytes(out, self.org_name.as_bytes());
        put_lenenc_int(out, 0x0C);
        out.extend_from_slice(&self.charset.to_le_bytes());
        out.extend_from_slice(&self.length.to_le_bytes());
        out.push(self.column_type as u8);
        out.extend_from_slice(&self.flags.0.to_le_bytes());
        out.push(self.decimals);
        out.extend_from_slice(&[0, 0]);
        if field_list {
            out.push(0xFB);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Decoder;

    #[test]
    fn every_type_code_decodes_to_itself() {
        let mut known = 0;
        for b in 0..=255u8 {
            if let Some(t) = ColumnType::from_u8(b) {
                assert_eq!(t as u8, b);
                known += 1;
            }
        }
        assert_eq!(known, 32);
    }

    #[test]
    fn column_definition_layout_matches_the_protocol() {
        let c = ColumnDef::new("id", ColumnType::Long)
            .with_table("db", "t", "t_phys")
            .with_flags(ColumnFlags::NOT_NULL | ColumnFlags::PRI_KEY | ColumnFlags::UNSIGNED);
        let mut out = Vec::new();
        c.encode(&mut out, false);
        let mut d = Decoder::new(&out);
        for want in [&b"def"[..], b"db", b"t", b"t_phys", b"id", b"id"] {
            assert_eq!(d.lenenc_bytes("s").unwrap(), want);
        }
        assert_eq!(d.lenenc_int("fixed").unwrap(), 12);
        assert_eq!(d.u16("cs").unwrap(), CHARSET_BINARY);
        assert_eq!(d.u32("len").unwrap(), 11);
        assert_eq!(d.u8("type").unwrap(), 3);
        assert_eq!(d.u16("flags").unwrap(), 1 | 2 | 32 | 128 | 32768);
        assert_eq!(d.u8("dec").unwrap(), 0);
        assert_eq!(d.u16("filler").unwrap(), 0);
        assert!(d.is_empty());
    }
}
