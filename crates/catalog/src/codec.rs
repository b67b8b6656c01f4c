//! Column types of the system tables and their byte encodings.
//!
//! Every key field of a system table is compared with a plain `memcmp`
//! (`FieldCmp::Binary`, a proper prefix sorts first), so each column type
//! stores a *memcomparable* encoding: comparing the stored bytes gives the
//! order the dictionary wants. Fields are separate in the record format,
//! so no escaping or terminator is needed between the columns of a key.
//!
//! | type            | stored bytes                               | order / equality            |
//! |-----------------|--------------------------------------------|-----------------------------|
//! | `Text`          | the UTF-8 bytes, unchanged                 | code point order, case- and trailing-space-sensitive (`utf8mb4_bin`, NO PAD) |
//! | `TextAsciiCi`   | the UTF-8 bytes with `A`-`Z` lowercased     | ASCII-case-insensitive (host names) |
//! | `Ascii`         | the ASCII bytes, unchanged                 | byte order, case-sensitive  |
//! | `Bytes`         | the bytes                                  | byte order                  |
//! | `U64`           | 8 bytes big-endian                         | numeric                     |
//! | `Bool`          | 1 byte, 0 or 1                             | false < true                |
//!
//! Text is limited in *characters* (as MySQL sizes its name columns) and
//! declared in the record layout as four bytes per character. Text may not
//! contain NUL. Nullable columns store SQL NULL as the record format's NULL
//! bit; no other value means "absent".
//!
//! A non-key variable-length field declared longer than 255 bytes may be
//! moved to overflow pages by the B+tree, in mini-transactions of its own;
//! that would break the all-or-nothing rule of a catalog batch. So
//! [`SystemTableDef::layout`] refuses such a column: every system-table
//! record is stored inline, always.

use std::sync::Arc;

use basalt_page::rec::{FieldDef, RecordLayout, SHORT_VAR_MAX};

use crate::error::{CatalogError, CatalogResult};

/// Bytes a character may take in UTF-8.
const MAX_CHAR_BYTES: u32 = 4;

/// What a column holds (see the module doc for the encodings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// UTF-8 text of at most `max_chars` characters, compared byte-wise.
    Text {
        /// Longest value in characters.
        max_chars: u32,
    },
    /// UTF-8 text of at most `max_chars` characters, stored with ASCII
    /// letters lowercased so that byte-wise comparison ignores ASCII case.
    TextAsciiCi {
        /// Longest value in characters.
        max_chars: u32,
    },
    /// ASCII text (names of plugins, character sets, collations): one
    /// byte per character.
    Ascii {
        /// Longest value in characters (= bytes).
        max_len: u32,
    },
    /// Opaque bytes.
    Bytes {
        /// Longest value in bytes.
        max_len: u32,
    },
    /// An unsigned 64-bit integer.
    U64,
    /// A flag.
    Bool,
}

impl ColumnType {
    fn field(self) -> FieldDef {
        match self {
            ColumnType::Text { max_chars } | ColumnType::TextAsciiCi { max_chars } => {
                FieldDef::var(max_chars.saturating_mul(MAX_CHAR_BYTES))
            }
            ColumnType::Ascii { max_len } | ColumnType::Bytes { max_len } => FieldDef::var(max_len),
            ColumnType::U64 => FieldDef::fixed(8),
            ColumnType::Bool => FieldDef::fixed(1),
        }
    }
}

/// One column of a system table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnDef {
    /// Column name (for messages).
    pub name: &'static str,
    /// Type and size.
    pub ty: ColumnType,
    /// True when the column may be NULL.
    pub nullable: bool,
}

impl ColumnDef {
    /// A NOT NULL column.
    pub const fn new(name: &'static str, ty: ColumnType) -> ColumnDef {
        ColumnDef {
            name,
            ty,
            nullable: false,
        }
    }

    /// A nullable column.
    pub const fn nullable(name: &'static str, ty: ColumnType) -> ColumnDef {
        ColumnDef {
            name,
            ty,
            nullable: true,
        }
    }
}

/// Stable number of a system table: its slot in the dictionary header and
/// its index id (system index ids are below
/// [`FIRST_DYNAMIC_ID`](crate::FIRST_DYNAMIC_ID)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SystemTableId(pub u32);

/// The fixed definition of a system table: columns (key columns first)
/// and the version of its record layout.
#[derive(Debug)]
pub struct SystemTableDef {
    /// Stable number (never reused).
    pub id: SystemTableId,
    /// Name as MySQL knows it (`mysql.user`).
    pub name: &'static str,
    /// Record layout version, recorded in the dictionary header. Changing
    /// the columns of a table that exists on disk means a new version and
    /// a conversion step at open.
    pub version: u32,
    /// Columns, the `n_key` key columns first.
    pub columns: &'static [ColumnDef],
    /// Leading columns forming the primary key.
    pub n_key: usize,
}

impl SystemTableDef {
    /// The record layout of the table's clustered index. Fails when the
    /// definition breaks a rule of the catalog (see the module doc).
    pub fn layout(&self) -> CatalogResult<Arc<RecordLayout>> {
        let bad =
            |reason: String| CatalogError::corrupt(format!("definition of {}", self.name), reason);
        if self.n_key == 0 || self.n_key > self.columns.len() {
            return Err(bad(format!(
                "{} key columns out of {}",
                self.n_key,
                self.columns.len()
            )));
        }
        let mut fields = Vec::with_capacity(self.columns.len());
        for (i, c) in self.columns.iter().enumerate() {
            let mut f = c.ty.field();
            if i < self.n_key && c.nullable {
                return Err(bad(format!("key column {} is nullable", c.name)));
            }
            if let basalt_page::rec::FieldKind::Var { max_len } = f.kind {
                if i >= self.n_key && max_len > SHORT_VAR_MAX {
                    return Err(bad(format!(
                        "column {} may hold {max_len} bytes; non-key columns hold at most \
                         {SHORT_VAR_MAX} so that rows are never stored on overflow pages",
                        c.name
                    )));
                }
            }
            if c.nullable {
                f = f.nullable();
            }
            fields.push(f);
        }
        RecordLayout::new(fields, self.n_key, true)
            .map(Arc::new)
            .map_err(|e| bad(e.to_string()))
    }

    /// The index id of the table's clustered index.
    pub fn index_id(&self) -> basalt_common::IndexId {
        basalt_common::IndexId(u64::from(self.id.0))
    }
}

/// Field values of one row (or key) in stored form, `None` = NULL.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EncodedRow {
    /// One entry per column written.
    pub fields: Vec<Option<Vec<u8>>>,
}

impl EncodedRow {
    /// The fields as the B+tree takes them.
    pub fn as_values(&self) -> Vec<Option<&[u8]>> {
        self.fields.iter().map(|f| f.as_deref()).collect()
    }
}

/// Writes the columns of one row in order, checking each value against
/// its column definition.
#[derive(Debug)]
pub struct RowEncoder {
    def: &'static SystemTableDef,
    /// Columns expected: all of them, or only the key.
    limit: usize,
    row: EncodedRow,
}

impl RowEncoder {
    /// An encoder for a whole row of `def`.
    pub fn row(def: &'static SystemTableDef) -> RowEncoder {
        RowEncoder {
            def,
            limit: def.columns.len(),
            row: EncodedRow {
                fields: Vec::with_capacity(def.columns.len()),
            },
        }
    }

    /// An encoder for the key columns of `def`.
    pub fn key(def: &'static SystemTableDef) -> RowEncoder {
        RowEncoder {
            def,
            limit: def.n_key,
            row: EncodedRow {
                fields: Vec::with_capacity(def.n_key),
            },
        }
    }

    fn next_column(&self) -> CatalogResult<&'static ColumnDef> {
        let i = self.row.fields.len();
        if i >= self.limit {
            return Err(CatalogError::invalid(
                self.def.name,
                "-",
                format!("more than {} values", self.limit),
            ));
        }
        Ok(&self.def.columns[i])
    }

    fn invalid(&self, col: &ColumnDef, reason: impl Into<String>) -> CatalogError {
        CatalogError::invalid(self.def.name, col.name, reason)
    }

    /// Appends a text value (a `Text`, `TextAsciiCi` or `Ascii` column).
    pub fn text(&mut self, v: &str) -> CatalogResult<()> {
        let col = self.next_column()?;
        let (max_chars, fold) = match col.ty {
            ColumnType::Text { max_chars } => (max_chars, false),
            ColumnType::TextAsciiCi { max_chars } => (max_chars, true),
            ColumnType::Ascii { max_len } => {
                if !v.is_ascii() {
                    return Err(self.invalid(col, "non-ASCII character"));
                }
                (max_len, false)
            }
            other => return Err(self.invalid(col, format!("text given for a {other:?} column"))),
        };
        let chars = v.chars().count();
        if chars > max_chars as usize {
            return Err(self.invalid(
                col,
                format!("{chars} characters, at most {max_chars} allowed"),
            ));
        }
        if v.as_bytes().contains(&0) {
            return Err(self.invalid(col, "NUL character in text"));
        }
        let bytes = if fold {
            v.to_ascii_lowercase().into_bytes()
        } else {
            v.as_bytes().to_vec()
        };
        self.row.fields.push(Some(bytes));
        Ok(())
    }

    /// Appends a byte-string value.
    pub fn bytes(&mut self, v: &[u8]) -> CatalogResult<()> {
        let col = self.next_column()?;
        let ColumnType::Bytes { max_len } = col.ty else {
            return Err(self.invalid(col, format!("bytes given for a {:?} column", col.ty)));
        };
        if v.len() > max_len as usize {
            return Err(self.invalid(col, format!("{} bytes, at most {max_len} allowed", v.len())));
        }
        self.row.fields.push(Some(v.to_vec()));
        Ok(())
    }

    /// Appends an unsigned integer.
    pub fn u64(&mut self, v: u64) -> CatalogResult<()> {
        let col = self.next_column()?;
        if col.ty != ColumnType::U64 {
            return Err(self.invalid(col, format!("integer given for a {:?} column", col.ty)));
        }
        self.row.fields.push(Some(v.to_be_bytes().to_vec()));
        Ok(())
    }

    /// Appends an optional unsigned integer (`None` = NULL).
    pub fn opt_u64(&mut self, v: Option<u64>) -> CatalogResult<()> {
        match v {
            Some(v) => self.u64(v),
            None => self.null(),
        }
    }

    /// Appends a flag.
    pub fn bool(&mut self, v: bool) -> CatalogResult<()> {
        let col = self.next_column()?;
        if col.ty != ColumnType::Bool {
            return Err(self.invalid(col, format!("flag given for a {:?} column", col.ty)));
        }
        self.row.fields.push(Some(vec![u8::from(v)]));
        Ok(())
    }

    /// Appends SQL NULL.
    pub fn null(&mut self) -> CatalogResult<()> {
        let col = self.next_column()?;
        if !col.nullable {
            return Err(self.invalid(col, "NULL in a NOT NULL column"));
        }
        self.row.fields.push(None);
        Ok(())
    }

    /// The encoded row; fails unless every expected column was written.
    pub fn finish(self) -> CatalogResult<EncodedRow> {
        if self.row.fields.len() != self.limit {
            return Err(CatalogError::invalid(
                self.def.name,
                "-",
                format!(
                    "{} values for {} columns",
                    self.row.fields.len(),
                    self.limit
                ),
            ));
        }
        Ok(self.row)
    }
}

/// Reads the columns of one stored row in order, checking each stored
/// value against its column definition (damage is
/// [`CatalogError::Corrupt`], never a panic).
#[derive(Debug)]
pub struct RowDecoder<'a> {
    def: &'static SystemTableDef,
    fields: &'a [Option<&'a [u8]>],
    next: usize,
}

impl<'a> RowDecoder<'a> {
    /// A decoder over the stored fields of a row of `def`.
    pub fn new(
        def: &'static SystemTableDef,
        fields: &'a [Option<&'a [u8]>],
    ) -> CatalogResult<RowDecoder<'a>> {
        if fields.len() != def.columns.len() {
            return Err(CatalogError::corrupt(
                def.name,
                format!(
                    "{} fields, the table has {} columns",
                    fields.len(),
                    def.columns.len()
                ),
            ));
        }
        Ok(RowDecoder {
            def,
            fields,
            next: 0,
        })
    }

    fn corrupt(&self, col: &ColumnDef, reason: impl Into<String>) -> CatalogError {
        CatalogError::corrupt(format!("{}.{}", self.def.name, col.name), reason)
    }

    fn take(&mut self) -> CatalogResult<(&'static ColumnDef, Option<&'a [u8]>)> {
        let i = self.next;
        if i >= self.fields.len() {
            return Err(CatalogError::corrupt(
                self.def.name,
                format!("column {i} read past the end of the row"),
            ));
        }
        self.next += 1;
        let col = &self.def.columns[i];
        let v = self.fields[i];
        if v.is_none() && !col.nullable {
            return Err(self.corrupt(col, "NULL in a NOT NULL column"));
        }
        Ok((col, v))
    }

    fn take_present(&mut self) -> CatalogResult<(&'static ColumnDef, &'a [u8])> {
        let (col, v) = self.take()?;
        v.map(|b| (col, b))
            .ok_or_else(|| self.corrupt(col, "NULL where a value is required"))
    }

    /// Reads a text column (`Text`, `TextAsciiCi` or `Ascii`).
    pub fn text(&mut self) -> CatalogResult<String> {
        let (col, b) = self.take_present()?;
        let (max_chars, fold) = match col.ty {
            ColumnType::Text { max_chars } => (max_chars, false),
            ColumnType::TextAsciiCi { max_chars } => (max_chars, true),
            ColumnType::Ascii { max_len } => {
                if !b.is_ascii() {
                    return Err(self.corrupt(col, "non-ASCII byte in an ASCII column"));
                }
                (max_len, false)
            }
            other => return Err(self.corrupt(col, format!("read as text but is {other:?}"))),
        };
        let s = std::str::from_utf8(b).map_err(|e| self.corrupt(col, format!("not UTF-8: {e}")))?;
        if s.chars().count() > max_chars as usize || s.as_bytes().contains(&0) {
            return Err(self.corrupt(col, "text longer than the column or holding NUL"));
        }
        if fold && s.bytes().any(|c| c.is_ascii_uppercase()) {
            return Err(self.corrupt(col, "upper-case letters in a case-folded column"));
        }
        Ok(s.to_owned())
    }

    /// Reads a byte-string column.
    pub fn bytes(&mut self) -> CatalogResult<Vec<u8>> {
        let (col, b) = self.take_present()?;
        let ColumnType::Bytes { max_len } = col.ty else {
            return Err(self.corrupt(col, format!("read as bytes but is {:?}", col.ty)));
        };
        if b.len() > max_len as usize {
            return Err(self.corrupt(col, format!("{} bytes, column holds {max_len}", b.len())));
        }
        Ok(b.to_vec())
    }

    /// Reads an unsigned-integer column.
    pub fn u64(&mut self) -> CatalogResult<u64> {
        let (col, b) = self.take_present()?;
        self.decode_u64(col, b)
    }

    fn decode_u64(&self, col: &ColumnDef, b: &[u8]) -> CatalogResult<u64> {
        if col.ty != ColumnType::U64 {
            return Err(self.corrupt(col, format!("read as integer but is {:?}", col.ty)));
        }
        let arr: [u8; 8] = b
            .try_into()
            .map_err(|_| self.corrupt(col, format!("{} bytes for an 8-byte integer", b.len())))?;
        Ok(u64::from_be_bytes(arr))
    }

    /// Reads a nullable unsigned-integer column.
    pub fn opt_u64(&mut self) -> CatalogResult<Option<u64>> {
        let (col, v) = self.take()?;
        v.map(|b| self.decode_u64(col, b)).transpose()
    }

    /// Reads a flag column.
    pub fn bool(&mut self) -> CatalogResult<bool> {
        let (col, b) = self.take_present()?;
        if col.ty != ColumnType::Bool {
            return Err(self.corrupt(col, format!("read as flag but is {:?}", col.ty)));
        }
        match b {
            [0] => Ok(false),
            [1] => Ok(true),
            other => Err(self.corrupt(col, format!("flag bytes {other:?}"))),
        }
    }

    /// Fails unless every column was read.
    pub fn finish(self) -> CatalogResult<()> {
        if self.next != self.fields.len() {
            return Err(CatalogError::corrupt(
                self.def.name,
                format!("{} of {} columns decoded", self.next, self.fields.len()),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static T: SystemTableDef = SystemTableDef {
        id: SystemTableId(900),
        name: "test.t",
        version: 1,
        columns: &[
            ColumnDef::new("name", ColumnType::Text { max_chars: 4 }),
            ColumnDef::new("host", ColumnType::TextAsciiCi { max_chars: 16 }),
            ColumnDef::new("blob", ColumnType::Bytes { max_len: 3 }),
            ColumnDef::new("n", ColumnType::U64),
            ColumnDef::new("flag", ColumnType::Bool),
            ColumnDef::nullable("when", ColumnType::U64),
        ],
        n_key: 2,
    };

    fn encode(name: &str, host: &str, blob: &[u8], n: u64) -> CatalogResult<EncodedRow> {
        let mut e = RowEncoder::row(&T);
        e.text(name)?;
        e.text(host)?;
        e.bytes(blob)?;
        e.u64(n)?;
        e.bool(n % 2 == 1)?;
        e.opt_u64((n > 5).then_some(n.rotate_left(8)))?;
        e.finish()
    }

    #[test]
    fn rows_round_trip_and_hosts_fold_to_lower_case() {
        let row = encode("bé", "LocalHOST", b"\x00\xff", 7).unwrap();
        assert_eq!(row.fields[1].as_deref(), Some(&b"localhost"[..]));
        let values = row.as_values();
        let mut d = RowDecoder::new(&T, &values).unwrap();
        assert_eq!(d.text().unwrap(), "bé");
        assert_eq!(d.text().unwrap(), "localhost");
        assert_eq!(d.bytes().unwrap(), vec![0, 0xff]);
        assert_eq!(d.u64().unwrap(), 7);
        assert!(d.bool().unwrap());
        assert_eq!(d.opt_u64().unwrap(), Some(0x700));
        d.finish().unwrap();
    }

    #[test]
    fn limits_are_characters_for_text_and_bytes_for_blobs() {
        // Four characters of four bytes each fit a 4-character column.
        assert!(encode("😀😀😀😀", "h", b"", 0).is_ok());
        assert!(matches!(
            encode("abcde", "h", b"", 0),
            Err(CatalogError::InvalidValue { column: "name", .. })
        ));
        assert!(matches!(
            encode("a", "h", b"abcd", 0),
            Err(CatalogError::InvalidValue { column: "blob", .. })
        ));
        assert!(matches!(
            encode("a\0", "h", b"", 0),
            Err(CatalogError::InvalidValue { column: "name", .. })
        ));
        let mut e = RowEncoder::row(&T);
        assert!(e.null().is_err(), "NULL in a NOT NULL key column");
        let mut e = RowEncoder::key(&T);
        e.text("a").unwrap();
        assert!(e.u64(1).is_err(), "wrong type is refused");
        e.text("h").unwrap();
        assert_eq!(e.finish().unwrap().fields.len(), 2);
        let mut e = RowEncoder::key(&T);
        e.text("a").unwrap();
        assert!(e.finish().is_err(), "missing key column");
    }

    #[test]
    fn stored_order_is_the_logical_order() {
        // Byte order of the stored text is code point order; byte order of
        // the stored integer is numeric order; hosts ignore ASCII case.
        let words = ["", "A", "B", "a", "ab", "b", "é", "😀"];
        for w in words.windows(2) {
            let a = encode(w[0], "h", b"", 0).unwrap();
            let b = encode(w[1], "h", b"", 0).unwrap();
            assert!(a.fields[0] < b.fields[0], "{:?} < {:?}", w[0], w[1]);
            assert!(w[0] < w[1], "the model agrees");
        }
        let nums = [0u64, 1, 255, 256, 1 << 40, u64::MAX];
        for n in nums.windows(2) {
            let a = encode("a", "h", b"", n[0]).unwrap();
            let b = encode("a", "h", b"", n[1]).unwrap();
            assert!(a.fields[3] < b.fields[3]);
        }
        let x = encode("a", "Example.COM", b"", 0).unwrap();
        let y = encode("a", "example.com", b"", 0).unwrap();
        assert_eq!(x.fields[1], y.fields[1]);
    }

    #[test]
    fn damaged_fields_are_errors() {
        let bad_utf8: Vec<Option<&[u8]>> = vec![
            Some(&[0xc3][..]),
            Some(b"h"),
            Some(b""),
            Some(&[0; 8]),
            Some(&[0]),
            None,
        ];
        let mut d = RowDecoder::new(&T, &bad_utf8).unwrap();
        assert!(d.text().unwrap_err().is_corruption());
        let upper: Vec<Option<&[u8]>> = vec![
            Some(b"a"),
            Some(b"H"),
            Some(b""),
            Some(&[0; 7]),
            Some(&[2]),
            None,
        ];
        let mut d = RowDecoder::new(&T, &upper).unwrap();
        d.text().unwrap();
        assert!(d.text().unwrap_err().is_corruption());
        d.bytes().unwrap();
        assert!(d.u64().unwrap_err().is_corruption(), "7-byte integer");
        assert!(d.bool().unwrap_err().is_corruption(), "flag byte 2");
        assert!(RowDecoder::new(&T, &upper[..3]).is_err(), "short row");
    }

    #[test]
    fn definitions_that_could_spill_to_overflow_pages_are_refused() {
        static WIDE: SystemTableDef = SystemTableDef {
            id: SystemTableId(901),
            name: "test.wide",
            version: 1,
            columns: &[
                ColumnDef::new("k", ColumnType::Text { max_chars: 200 }),
                ColumnDef::new("v", ColumnType::Bytes { max_len: 256 }),
            ],
            n_key: 1,
        };
        assert!(WIDE.layout().is_err());
        assert!(T.layout().is_ok());
    }
}
