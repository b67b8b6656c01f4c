//! MySQL values and types.
//!
//! ```text
//!   Value (what an expression yields)      SqlType (what the binder inferred)
//!   Null                                   kind: Null | Int | Decimal | Double |
//!   Int(i64) / UInt(u64)                         String | Date | DateTime |
//!   Decimal(Decimal)  65 digits exact            Timestamp | Time | Year | Bit
//!   Double(f64)                            unsigned, length (chars), decimals,
//!   Str(Vec<u8>)  bytes; the type's              collation, nullable
//!                 collation says text/binary
//!   Date / DateTime / Time                 -> ColumnDef for result metadata
//! ```
//!
//! A value never carries its collation: the expression's [`SqlType`] does,
//! so a string costs one allocation. [`SqlType::column_def`] turns an
//! inferred type into result-set metadata the way MySQL reports it (type
//! code, display length in bytes, decimals, flags, collation id), and
//! [`Value::to_wire`] converts a value to what that column declares.
//!
//! Implicit conversions ([`convert`]) follow MySQL: strings become numbers
//! by their longest numeric prefix (warning 1292 "Truncated incorrect
//! DOUBLE value" when text is left over), temporals become
//! `YYYYMMDDhhmmss` numbers, numbers become their decimal text.

pub mod collation;
pub mod convert;
pub mod decimal;
pub mod temporal;

use std::cmp::Ordering;

use basalt_protocol::{ColumnDef, ColumnFlags, ColumnType};

pub use basalt_protocol::{Date, DateTime, Time};
pub use collation::Collation;
pub use decimal::Decimal;

/// A SQL value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `NULL`.
    Null,
    /// Signed 64-bit integer.
    Int(i64),
    /// Unsigned 64-bit integer.
    UInt(u64),
    /// Exact decimal.
    Decimal(Decimal),
    /// Double-precision float.
    Double(f64),
    /// A character or binary string (the expression type says which).
    Str(Vec<u8>),
    /// `DATE`.
    Date(Date),
    /// `DATETIME` / `TIMESTAMP`.
    DateTime(DateTime),
    /// `TIME`.
    Time(Time),
}

impl Value {
    /// True for `NULL`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// A string value from text.
    pub fn text(s: impl Into<String>) -> Value {
        Value::Str(s.into().into_bytes())
    }
}

/// The kind of an inferred type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TypeKind {
    /// Only `NULL` (`SELECT NULL`).
    Null,
    /// Integer (`BIGINT`, signed or unsigned).
    Int,
    /// Exact decimal.
    Decimal,
    /// Double.
    Double,
    /// Character or binary string.
    String,
    /// `DATE`.
    Date,
    /// `DATETIME`.
    DateTime,
    /// `TIMESTAMP`.
    Timestamp,
    /// `TIME`.
    Time,
    /// `YEAR`.
    Year,
    /// `BIT(n)`.
    Bit,
}

/// The static type of an expression: what result metadata reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlType {
    /// Kind.
    pub kind: TypeKind,
    /// `UNSIGNED` (integers and decimals).
    pub unsigned: bool,
    /// Display length in characters (numbers: digits plus sign and point).
    pub length: u32,
    /// Fractional digits; 31 means "not fixed" (floats, strings).
    pub decimals: u8,
    /// Collation of strings; `binary` for everything else.
    pub collation: Collation,
    /// Whether the expression may yield `NULL`.
    pub nullable: bool,
    /// The collation was named with `COLLATE` (it wins comparisons).
    pub explicit_collation: bool,
}

/// MySQL's "decimals not fixed" marker.
pub const NOT_FIXED_DEC: u8 = 31;

impl SqlType {
    fn base(kind: TypeKind, length: u32, decimals: u8) -> SqlType {
        SqlType {
            kind,
            unsigned: false,
            length,
            decimals,
            collation: Collation::BINARY,
            nullable: false,
            explicit_collation: false,
        }
    }

    /// The type of `NULL`.
    pub fn null() -> SqlType {
        SqlType {
            nullable: true,
            ..SqlType::base(TypeKind::Null, 0, 0)
        }
    }

    /// A `BIGINT` of `length` digits.
    pub fn int(length: u32) -> SqlType {
        SqlType::base(TypeKind::Int, length.max(1), 0)
    }

    /// A `BIGINT UNSIGNED`.
    pub fn uint(length: u32) -> SqlType {
        SqlType {
            unsigned: true,
            ..SqlType::int(length)
        }
    }

    /// A `DECIMAL(precision, scale)`.
    pub fn decimal(precision: u32, scale: u8) -> SqlType {
        let precision = precision.clamp(1, decimal::MAX_PRECISION as u32);
        let length = precision + u32::from(scale > 0) + 1;
        SqlType::base(TypeKind::Decimal, length, scale)
    }

    /// A `DOUBLE`.
    pub fn double() -> SqlType {
        SqlType::base(TypeKind::Double, 22, NOT_FIXED_DEC)
    }

    /// A string of `chars` characters in `collation`.
    pub fn string(chars: u32, collation: Collation) -> SqlType {
        SqlType {
            collation,
            ..SqlType::base(TypeKind::String, chars, NOT_FIXED_DEC)
        }
    }

    /// A `DATE`.
    pub fn date() -> SqlType {
        SqlType::base(TypeKind::Date, 10, 0)
    }

    /// A `DATETIME(fsp)`.
    pub fn datetime(fsp: u8) -> SqlType {
        SqlType::base(
            TypeKind::DateTime,
            19 + if fsp > 0 { 1 + u32::from(fsp) } else { 0 },
            fsp,
        )
    }

    /// A `TIMESTAMP(fsp)`.
    pub fn timestamp(fsp: u8) -> SqlType {
        SqlType {
            kind: TypeKind::Timestamp,
            ..SqlType::datetime(fsp)
        }
    }

    /// A `TIME(fsp)`.
    pub fn time(fsp: u8) -> SqlType {
        SqlType::base(
            TypeKind::Time,
            10 + if fsp > 0 { 1 + u32::from(fsp) } else { 0 },
            fsp,
        )
    }

    /// `YEAR`.
    pub fn year() -> SqlType {
        SqlType {
            unsigned: true,
            ..SqlType::base(TypeKind::Year, 4, 0)
        }
    }

    /// `BIT(bits)`.
    pub fn bit(bits: u32) -> SqlType {
        SqlType {
            unsigned: true,
            ..SqlType::base(TypeKind::Bit, bits.max(1), 0)
        }
    }

    /// The same type, nullable or not.
    pub fn with_nullable(mut self, nullable: bool) -> SqlType {
        self.nullable = nullable;
        self
    }

    /// True for integer, decimal and double types.
    pub fn is_numeric(&self) -> bool {
        matches!(
            self.kind,
            TypeKind::Int | TypeKind::Decimal | TypeKind::Double | TypeKind::Year | TypeKind::Bit
        )
    }

    /// True for `DATE`, `DATETIME`, `TIMESTAMP` and `TIME`.
    pub fn is_temporal(&self) -> bool {
        matches!(
            self.kind,
            TypeKind::Date | TypeKind::DateTime | TypeKind::Timestamp | TypeKind::Time
        )
    }

    /// True for character (not binary) strings.
    pub fn is_text(&self) -> bool {
        self.kind == TypeKind::String && !self.collation.is_binary()
    }

    /// Result-set metadata for a column named `name` of this type.
    pub fn column_def(&self, name: &str) -> ColumnDef {
        let (column_type, length) = match self.kind {
            TypeKind::Null => (ColumnType::Null, 0),
            TypeKind::Int => (ColumnType::LongLong, self.length),
            TypeKind::Decimal => (ColumnType::NewDecimal, self.length),
            TypeKind::Double => (ColumnType::Double, self.length),
            TypeKind::String => (
                ColumnType::VarString,
                self.length.saturating_mul(self.collation.max_char_len()),
            ),
            TypeKind::Date => (ColumnType::Date, self.length),
            TypeKind::DateTime => (ColumnType::DateTime, self.length),
            TypeKind::Timestamp => (ColumnType::Timestamp, self.length),
            TypeKind::Time => (ColumnType::Time, self.length),
            TypeKind::Year => (ColumnType::Year, 4),
            TypeKind::Bit => (ColumnType::Bit, self.length),
        };
        let mut def = ColumnDef::new(name, column_type)
            .with_length(length)
            .with_decimals(self.decimals)
            .with_charset(self.collation.id);
        if self.kind == TypeKind::String && self.collation.is_binary() {
            def = def.with_flags(ColumnFlags::BINARY);
        }
        if self.unsigned
            && matches!(
                self.kind,
                TypeKind::Int | TypeKind::Decimal | TypeKind::Year | TypeKind::Bit
            )
        {
            def = def.with_flags(ColumnFlags::UNSIGNED);
        }
        if self.kind == TypeKind::Year {
            def = def.with_flags(ColumnFlags::ZEROFILL);
        }
        if !self.nullable {
            def = def.with_flags(ColumnFlags::NOT_NULL);
        }
        def
    }
}

impl Value {
    /// The wire value for a column of type `ty`, converting where the
    /// evaluator produced a compatible but different variant (an integer in
    /// a `DOUBLE` column, text in a `DATETIME` column after `IF()`, ...).
    pub fn to_wire(&self, ty: &SqlType) -> basalt_protocol::Value {
        use basalt_protocol::Value as W;
        if self.is_null() {
            return W::Null;
        }
        let mut sink = Vec::new();
        match ty.kind {
            TypeKind::Null => W::Null,
            TypeKind::Int | TypeKind::Year => {
                if ty.unsigned {
                    match self {
                        Value::Int(v) if *v < 0 => W::Int(*v),
                        _ => W::UInt(convert::to_u64(self, &mut sink)),
                    }
                } else {
                    match self {
                        Value::UInt(v) => match i64::try_from(*v) {
                            Ok(i) => W::Int(i),
                            Err(_) => W::UInt(*v),
                        },
                        _ => W::Int(convert::to_i64(self, &mut sink)),
                    }
                }
            }
            TypeKind::Decimal => {
                let d = convert::to_decimal(self, &mut sink);
                let d = if ty.decimals <= decimal::MAX_SCALE {
                    d.with_scale(ty.decimals)
                } else {
                    d
                };
                W::Decimal(d.to_string())
            }
            TypeKind::Double => W::Double(convert::to_f64(self, &mut sink)),
            TypeKind::String | TypeKind::Bit => W::Bytes(convert::to_bytes(self)),
            TypeKind::Date => match convert::to_datetime(self) {
                Some(dt) => W::Date(dt.date),
                None => W::Null,
            },
            TypeKind::DateTime | TypeKind::Timestamp => match convert::to_datetime(self) {
                Some(dt) => W::DateTime(dt),
                None => W::Null,
            },
            TypeKind::Time => match convert::to_time(self) {
                Some(t) => W::Time(t),
                None => W::Null,
            },
        }
    }

    /// The value of a wire parameter (`COM_STMT_EXECUTE`) and its type.
    pub fn from_wire(v: &basalt_protocol::Value, text_collation: Collation) -> (Value, SqlType) {
        use basalt_protocol::Value as W;
        match v {
            W::Null => (Value::Null, SqlType::null()),
            W::Int(i) => (Value::Int(*i), SqlType::int(20)),
            W::UInt(u) => (Value::UInt(*u), SqlType::uint(20)),
            W::Float(f) => (Value::Double(f64::from(*f)), SqlType::double()),
            W::Double(f) => (Value::Double(*f), SqlType::double()),
            W::Decimal(s) => match Decimal::parse(s) {
                Some(d) => {
                    let ty = SqlType::decimal(d.precision() as u32, d.scale());
                    (Value::Decimal(d), ty)
                }
                None => (
                    Value::Str(s.clone().into_bytes()),
                    SqlType::string(s.len() as u32, text_collation),
                ),
            },
            W::Bytes(b) => {
                let chars = String::from_utf8_lossy(b).chars().count() as u32;
                (
                    Value::Str(b.clone()),
                    SqlType::string(chars, text_collation),
                )
            }
            W::Date(d) => (Value::Date(*d), SqlType::date()),
            W::DateTime(dt) => {
                let fsp = if dt.micros != 0 { 6 } else { 0 };
                (Value::DateTime(*dt), SqlType::datetime(fsp))
            }
            W::Time(t) => {
                let fsp = if t.micros != 0 { 6 } else { 0 };
                (Value::Time(*t), SqlType::time(fsp))
            }
        }
    }
}

/// Compares two non-NULL values by MySQL's comparison rules for their
/// types: strings by collation, temporals as temporals (converting the
/// other side), exact numbers exactly, everything else as doubles.
pub fn compare(
    a: &Value,
    at: &SqlType,
    b: &Value,
    bt: &SqlType,
    collation: Collation,
    warnings: &mut Vec<crate::error::Warning>,
) -> Ordering {
    use Value as V;
    match (a, b) {
        (V::Str(x), V::Str(y)) if !at.is_temporal() && !bt.is_temporal() => {
            return collation.compare(x, y);
        }
        (V::Int(x), V::Int(y)) => return x.cmp(y),
        (V::UInt(x), V::UInt(y)) => return x.cmp(y),
        (V::Int(x), V::UInt(y)) => {
            return if *x < 0 {
                Ordering::Less
            } else {
                (*x as u64).cmp(y)
            };
        }
        (V::UInt(x), V::Int(y)) => {
            return if *y < 0 {
                Ordering::Greater
            } else {
                x.cmp(&(*y as u64))
            };
        }
        _ => {}
    }
    if at.is_temporal() || bt.is_temporal() || is_temporal_value(a) || is_temporal_value(b) {
        let time_only = matches!(a, V::Time(_)) && matches!(b, V::Time(_) | V::Str(_))
            || matches!(b, V::Time(_)) && matches!(a, V::Str(_));
        if time_only {
            if let (Some(x), Some(y)) = (convert::to_time(a), convert::to_time(b)) {
                return temporal::time_micros(&x).cmp(&temporal::time_micros(&y));
            }
        } else if let (Some(x), Some(y)) = (convert::to_datetime(a), convert::to_datetime(b)) {
            return x.cmp(&y);
        }
    }
    let exact = |v: &Value| matches!(v, V::Int(_) | V::UInt(_) | V::Decimal(_));
    if exact(a) && exact(b) {
        return convert::to_decimal(a, warnings).cmp(&convert::to_decimal(b, warnings));
    }
    let x = convert::to_f64(a, warnings);
    let y = convert::to_f64(b, warnings);
    x.partial_cmp(&y).unwrap_or(Ordering::Equal)
}

fn is_temporal_value(v: &Value) -> bool {
    matches!(v, Value::Date(_) | Value::DateTime(_) | Value::Time(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_of_common_types() {
        let c = SqlType::int(1).column_def("1");
        assert_eq!(c.column_type, ColumnType::LongLong);
        assert_eq!(c.length, 1);
        assert!(c.flags.contains(ColumnFlags::NOT_NULL));
        assert_eq!(c.charset, 63);
        let s = SqlType::string(3, Collation::DEFAULT).column_def("abc");
        assert_eq!(s.column_type, ColumnType::VarString);
        assert_eq!(s.length, 12);
        assert_eq!(s.charset, 255);
        assert_eq!(s.decimals, 31);
        let d = SqlType::decimal(2, 1).column_def("1.5");
        assert_eq!(
            (d.column_type, d.length, d.decimals),
            (ColumnType::NewDecimal, 4, 1)
        );
        let n = SqlType::null().column_def("NULL");
        assert_eq!(n.column_type, ColumnType::Null);
        assert!(!n.flags.contains(ColumnFlags::NOT_NULL));
        let u = SqlType::uint(20).column_def("u");
        assert!(u.flags.contains(ColumnFlags::UNSIGNED));
    }

    #[test]
    fn comparisons_follow_types() {
        let mut w = Vec::new();
        let s = SqlType::string(5, Collation::DEFAULT);
        let i = SqlType::int(5);
        let cmp = |a: Value, at: SqlType, b: Value, bt: SqlType, w: &mut Vec<_>| {
            compare(&a, &at, &b, &bt, Collation::DEFAULT, w)
        };
        assert_eq!(
            cmp(Value::text("a"), s, Value::text("A"), s, &mut w),
            Ordering::Equal
        );
        assert_eq!(
            cmp(
                Value::Int(-1),
                i,
                Value::UInt(u64::MAX),
                SqlType::uint(20),
                &mut w
            ),
            Ordering::Less
        );
        assert_eq!(
            cmp(Value::text("10"), s, Value::Int(9), i, &mut w),
            Ordering::Greater
        );
        assert_eq!(
            cmp(
                Value::Decimal(Decimal::parse("1.10").unwrap()),
                SqlType::decimal(3, 2),
                Value::Int(1),
                i,
                &mut w
            ),
            Ordering::Greater
        );
        let d = Value::Date(temporal::parse_date("2024-01-02").unwrap());
        assert_eq!(
            cmp(d, SqlType::date(), Value::text("2024-01-02"), s, &mut w),
            Ordering::Equal
        );
        assert!(w.is_empty());
    }

    #[test]
    fn wire_values_follow_the_column_type() {
        use basalt_protocol::Value as W;
        assert_eq!(Value::Int(3).to_wire(&SqlType::double()), W::Double(3.0));
        assert_eq!(Value::text("12").to_wire(&SqlType::int(2)), W::Int(12));
        assert_eq!(
            Value::Int(5).to_wire(&SqlType::decimal(3, 2)),
            W::Decimal("5.00".into())
        );
        assert_eq!(Value::Null.to_wire(&SqlType::int(1)), W::Null);
        let (v, t) = Value::from_wire(&W::Bytes(b"hi".to_vec()), Collation::DEFAULT);
        assert_eq!(v, Value::text("hi"));
        assert_eq!(t.kind, TypeKind::String);
    }
}
