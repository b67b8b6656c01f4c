//! Row and parameter values and their text and binary encodings.
//!
//! A [`Value`] is encoded according to the *declared* column type, not its
//! own variant: an `Int(7)` in a `TINYINT` column is one byte in the binary
//! protocol, eight in a `BIGINT` column, and `"007"` in a `ZEROFILL` column
//! of width 3 in the text protocol. A value that does not fit its column
//! (a string in an `INT` column, 300 in a `TINYINT`) is refused with
//! [`ValueError`] rather than sent as something the client would misread.
//!
//! Binary temporal layouts (the length byte is the minimal one that keeps
//! every non-zero field):
//!
//! ```text
//! DATE/DATETIME/TIMESTAMP: len(0|4|7|11) year<2> month day [hour min sec] [micros<4>]
//! TIME:                    len(0|8|12)  neg days<4> hour min sec [micros<4>]
//! ```

use std::fmt;
use std::io::Write as _;

use crate::column::{ColumnDef, ColumnFlags, ColumnType};
use crate::error::ProtocolError;
use crate::packet::{put_lenenc_bytes, Decoder};

/// A calendar date. Zero fields are allowed (`0000-00-00`), as in MySQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Date {
    /// Year, 0..=9999.
    pub year: u16,
    /// Month, 0..=12.
    pub month: u8,
    /// Day, 0..=31.
    pub day: u8,
}

/// A date and time of day with microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct DateTime {
    /// The date part.
    pub date: Date,
    /// Hour, 0..=23.
    pub hour: u8,
    /// Minute, 0..=59.
    pub minute: u8,
    /// Second, 0..=59.
    pub second: u8,
    /// Microseconds, 0..=999_999.
    pub micros: u32,
}

/// A signed time interval (`TIME`): `[-]days hours:minutes:seconds.micros`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Time {
    /// True for negative intervals.
    pub negative: bool,
    /// Whole days.
    pub days: u32,
    /// Hours, 0..=23.
    pub hours: u8,
    /// Minutes, 0..=59.
    pub minutes: u8,
    /// Seconds, 0..=59.
    pub seconds: u8,
    /// Microseconds, 0..=999_999.
    pub micros: u32,
}

/// One value of a row or of a statement parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// Signed integer.
    Int(i64),
    /// Unsigned integer.
    UInt(u64),
    /// `FLOAT`.
    Float(f32),
    /// `DOUBLE`.
    Double(f64),
    /// Exact decimal in its canonical text form (`-12.50`).
    Decimal(String),
    /// Character or binary string (the column's collation says which).
    Bytes(Vec<u8>),
    /// `DATE`.
    Date(Date),
    /// `DATETIME` / `TIMESTAMP`.
    DateTime(DateTime),
    /// `TIME`.
    Time(Time),
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Bytes(s.as_bytes().to_vec())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Bytes(s.into_bytes())
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<u64> for Value {
    fn from(v: u64) -> Self {
        Value::UInt(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Double(v)
    }
}

/// A value that cannot be encoded for its declared column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("value {value} does not fit column `{column}` of type {column_type:?}")]
pub struct ValueError {
    /// The column's name.
    pub column: String,
    /// The column's declared type.
    pub column_type: ColumnType,
    /// Debug rendering of the value.
    pub value: String,
}

fn mismatch(v: &Value, col: &ColumnDef) -> ValueError {
    let mut value = format!("{v:?}");
    value.truncate(64);
    ValueError {
        column: col.name.clone(),
        column_type: col.column_type,
        value,
    }
}

/// Integer range of an integer column: (min, max) as i128.
fn int_range(col: &ColumnDef) -> (i128, i128) {
    let bits = match col.column_type {
        ColumnType::Tiny => 8,
        ColumnType::Short | ColumnType::Year => 16,
        ColumnType::Int24 | ColumnType::Long => 32,
        _ => 64,
    };
    if col.is_unsigned() || col.column_type == ColumnType::Year {
        (0, (1i128 << bits) - 1)
    } else {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    }
}

fn is_date_type(t: ColumnType) -> bool {
    matches!(t, ColumnType::Date | ColumnType::NewDate)
}

fn is_datetime_type(t: ColumnType) -> bool {
    matches!(
        t,
        ColumnType::DateTime
            | ColumnType::DateTime2
            | ColumnType::Timestamp
            | ColumnType::Timestamp2
    )
}

fn is_time_type(t: ColumnType) -> bool {
    matches!(t, ColumnType::Time | ColumnType::Time2)
}

impl Value {
    /// True for `Value::Null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    fn as_i128(&self) -> Option<i128> {
        match *self {
            Value::Int(v) => Some(i128::from(v)),
            Value::UInt(v) => Some(i128::from(v)),
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match *self {
            Value::Int(v) => Some(v as f64),
            Value::UInt(v) => Some(v as f64),
            Value::Float(v) => Some(f64::from(v)),
            Value::Double(v) => Some(v),
            _ => None,
        }
    }

    /// Checks that the value can be sent in `col`.
    fn check(&self, col: &ColumnDef) -> Result<(), ValueError> {
        let t = col.column_type;
        let ok = match self {
            Value::Null => true,
            _ if t.is_integer() => match self.as_i128() {
                Some(v) => {
                    let (lo, hi) = int_range(col);
                    (lo..=hi).contains(&v)
                }
                None => false,
            },
            _ if matches!(t, ColumnType::Float | ColumnType::Double) => self.as_f64().is_some(),
            _ if is_date_type(t) => matches!(self, Value::Date(_)),
            _ if is_datetime_type(t) => matches!(self, Value::Date(_) | Value::DateTime(_)),
            _ if is_time_type(t) => matches!(self, Value::Time(_)),
            _ if matches!(t, ColumnType::Decimal | ColumnType::NewDecimal) => matches!(
                self,
                Value::Decimal(_) | Value::Int(_) | Value::UInt(_) | Value::Bytes(_)
            ),
            _ if t.is_string_like() => true,
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(mismatch(self, col))
        }
    }

    /// Appends the text-protocol cell: `string<lenenc>` or `0xFB` for NULL.
    // PERF: called once per cell of every text result row; formats in place.
    pub fn encode_text(&self, col: &ColumnDef, out: &mut Vec<u8>) -> Result<(), ValueError> {
        self.check(col)?;
        if let Value::Bytes(b) = self {
            put_lenenc_bytes(out, b);
            return Ok(());
        }
        if let Value::Null = self {
            out.push(0xFB);
            return Ok(());
        }
        // Every non-string rendering is far shorter than 251 bytes except a
        // pathological decimal, so reserve a one-byte length and fix it up.
        let at = out.len();
        out.push(0);
        self.render_text(col, out);
        let len = out.len() - at - 1;
        if len < 251 {
            out[at] = len as u8;
        } else {
            let body = out.split_off(at + 1);
            out.truncate(at);
            put_lenenc_bytes(out, &body);
        }
        Ok(())
    }

    /// Writes the text form (without length prefix). `col` was checked.
    fn render_text(&self, col: &ColumnDef, out: &mut Vec<u8>) {
        let t = col.column_type;
        match self {
            Value::Null => {}
            Value::Bytes(b) => out.extend_from_slice(b),
            Value::Decimal(s) => out.extend_from_slice(s.as_bytes()),
            Value::Int(_) | Value::UInt(_) if t.is_integer() => {
                let width = if col.flags.contains(ColumnFlags::ZEROFILL) {
                    col.length as usize
                } else if t == ColumnType::Year {
                    4
                } else {
                    0
                };
                // Writing to a Vec cannot fail.
                let _ = match self {
                    Value::Int(v) => write!(out, "{v:0width$}"),
                    Value::UInt(v) => write!(out, "{v:0width$}"),
                    _ => Ok(()),
                };
            }
            Value::Int(v) => {
                let _ = write!(out, "{v}");
            }
            Value::UInt(v) => {
                let _ = write!(out, "{v}");
            }
            Value::Float(v) => write_float(out, f64::from(*v), true, col),
            Value::Double(v) => write_float(out, *v, t == ColumnType::Float, col),
            Value::Date(d) => {
                write_date(out, d);
                if is_datetime_type(t) {
                    out.extend_from_slice(b" 00:00:00");
                    write_fraction(out, 0, col.decimals);
                }
            }
            Value::DateTime(dt) => {
                write_date(out, &dt.date);
                let _ = write!(out, " {:02}:{:02}:{:02}", dt.hour, dt.minute, dt.second);
                write_fraction(out, dt.micros, fraction_digits(col, dt.micros));
            }
            Value::Time(tm) => {
                let hours = u64::from(tm.days) * 24 + u64::from(tm.hours);
                let sign = if tm.negative { "-" } else { "" };
                let _ = write!(out, "{sign}{hours:02}:{:02}:{:02}", tm.minutes, tm.seconds);
                write_fraction(out, tm.micros, fraction_digits(col, tm.micros));
            }
        }
    }

    /// Appends the binary-protocol encoding of a non-NULL value (NULLs live
    /// in the row's null bitmap).
    // PERF: called once per cell of every binary result row.
    pub fn encode_binary(&self, col: &ColumnDef, out: &mut Vec<u8>) -> Result<(), ValueError> {
        self.check(col)?;
        let t = col.column_type;
        match t {
            _ if self.is_null() => {}
            ColumnType::Tiny => out.push(self.int_bits() as u8),
            ColumnType::Short | ColumnType::Year => {
                out.extend_from_slice(&(self.int_bits() as u16).to_le_bytes())
            }
            ColumnType::Long | ColumnType::Int24 => {
                out.extend_from_slice(&(self.int_bits() as u32).to_le_bytes())
            }
            ColumnType::LongLong => out.extend_from_slice(&self.int_bits().to_le_bytes()),
            ColumnType::Float => {
                let v = self.as_f64().unwrap_or_default() as f32;
                out.extend_from_slice(&v.to_le_bytes());
            }
            ColumnType::Double => {
                let v = match *self {
                    Value::Float(f) => f64::from(f),
                    _ => self.as_f64().unwrap_or_default(),
                };
                out.extend_from_slice(&v.to_le_bytes());
            }
            _ if is_date_type(t) || is_datetime_type(t) => {
                let dt = match *self {
                    Value::Date(date) => DateTime {
                        date,
                        ..DateTime::default()
                    },
                    Value::DateTime(dt) => dt,
                    _ => return Err(mismatch(self, col)),
                };
                encode_binary_datetime(&dt, out);
            }
            _ if is_time_type(t) => match self {
                Value::Time(tm) => encode_binary_time(tm, out),
                _ => return Err(mismatch(self, col)),
            },
            _ => match self {
                Value::Bytes(b) => put_lenenc_bytes(out, b),
                _ => {
                    let at = out.len();
                    self.render_text(col, out);
                    let body = out.split_off(at);
                    put_lenenc_bytes(out, &body);
                }
            },
        }
        Ok(())
    }

    /// Two's-complement bits of an integer value (checked against the range).
    fn int_bits(&self) -> u64 {
        match *self {
            Value::Int(v) => v as u64,
            Value::UInt(v) => v,
            _ => 0,
        }
    }
}

fn fraction_digits(col: &ColumnDef, micros: u32) -> u8 {
    let t = col.column_type;
    if is_datetime_type(t) || is_time_type(t) {
        col.decimals.min(6)
    } else if micros != 0 {
        6
    } else {
        0
    }
}

fn write_date(out: &mut Vec<u8>, d: &Date) {
    let _ = write!(out, "{:04}-{:02}-{:02}", d.year, d.month, d.day);
}

fn write_fraction(out: &mut Vec<u8>, micros: u32, digits: u8) {
    if digits == 0 {
        return;
    }
    let digits = u32::from(digits.min(6));
    let scaled = micros / 10u32.pow(6 - digits);
    let _ = write!(out, ".{:0width$}", scaled, width = digits as usize);
}

/// MySQL's rendering of floating point: fixed `decimals` when the column
/// declares them (< 31), otherwise the shortest round-trip digits, in
/// scientific notation when the exponent is below -4 or reaches the type's
/// precision (15 for DOUBLE, 7 for FLOAT).
fn write_float(out: &mut Vec<u8>, v: f64, single: bool, col: &ColumnDef) {
    if col.decimals < 31 {
        let _ = write!(out, "{:.*}", usize::from(col.decimals), v);
        return;
    }
    if !v.is_finite() {
        let _ = write!(out, "{v}");
        return;
    }
    let sci = if single {
        format!("{:e}", v as f32)
    } else {
        format!("{v:e}")
    };
    // `sci` is `[-]d[.ddd]e[-]x`.
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let limit = if single { 7 } else { 15 };
    if exp < -4 || exp >= limit {
        let _ = write!(out, "{mantissa}e{exp}");
    } else if single {
        let _ = write!(out, "{}", v as f32);
    } else {
        let _ = write!(out, "{v}");
    }
}

fn encode_binary_datetime(dt: &DateTime, out: &mut Vec<u8>) {
    let d = &dt.date;
    let has_time = dt.hour != 0 || dt.minute != 0 || dt.second != 0;
    let len: u8 = if dt.micros != 0 {
        11
    } else if has_time {
        7
    } else if d.year != 0 || d.month != 0 || d.day != 0 {
        4
    } else {
        0
    };
    out.push(len);
    if len >= 4 {
        out.extend_from_slice(&d.year.to_le_bytes());
        out.push(d.month);
        out.push(d.day);
    }
    if len >= 7 {
        out.extend_from_slice(&[dt.hour, dt.minute, dt.second]);
    }
    if len == 11 {
        out.extend_from_slice(&dt.micros.to_le_bytes());
    }
}

fn encode_binary_time(t: &Time, out: &mut Vec<u8>) {
    let zero = t.days == 0 && t.hours == 0 && t.minutes == 0 && t.seconds == 0;
    let len: u8 = if t.micros != 0 {
        12
    } else if zero {
        0
    } else {
        8
    };
    out.push(len);
    if len >= 8 {
        out.push(u8::from(t.negative));
        out.extend_from_slice(&t.days.to_le_bytes());
        out.extend_from_slice(&[t.hours, t.minutes, t.seconds]);
    }
    if len == 12 {
        out.extend_from_slice(&t.micros.to_le_bytes());
    }
}

/// Decodes one binary-protocol parameter of wire type `type_code` (the
/// `unsigned` flag is bit 0x80 of the type's second byte).
///
/// Every length is checked against the payload; an unknown type or a
/// temporal value with an impossible length is [`ProtocolError::Malformed`].
pub fn decode_binary_param(
    type_code: u8,
    unsigned: bool,
    d: &mut Decoder<'_>,
) -> Result<Value, ProtocolError> {
    const W: &str = "parameter value";
    let t = ColumnType::from_u8(type_code).ok_or(ProtocolError::Malformed {
        what: "parameter type",
    })?;
    Ok(match t {
        ColumnType::Null => Value::Null,
        ColumnType::Tiny => {
            let b = d.u8(W)?;
            if unsigned {
                Value::UInt(u64::from(b))
            } else {
                Value::Int(i64::from(b as i8))
            }
        }
        ColumnType::Short | ColumnType::Year => {
            let v = d.u16(W)?;
            if unsigned || t == ColumnType::Year {
                Value::UInt(u64::from(v))
            } else {
                Value::Int(i64::from(v as i16))
            }
        }
        ColumnType::Long | ColumnType::Int24 => {
            let v = d.u32(W)?;
            if unsigned {
                Value::UInt(u64::from(v))
            } else {
                Value::Int(i64::from(v as i32))
            }
        }
        ColumnType::LongLong => {
            let v = d.u64(W)?;
            if unsigned {
                Value::UInt(v)
            } else {
                Value::Int(v as i64)
            }
        }
        ColumnType::Float => Value::Float(f32::from_le_bytes(
            d.take(4, W)?
                .try_into()
                .map_err(|_| ProtocolError::Truncated { what: W })?,
        )),
        ColumnType::Double => Value::Double(f64::from_le_bytes(
            d.take(8, W)?
                .try_into()
                .map_err(|_| ProtocolError::Truncated { what: W })?,
        )),
        ColumnType::Decimal | ColumnType::NewDecimal => {
            let s = d.lenenc_bytes(W)?;
            let s = std::str::from_utf8(s).map_err(|_| ProtocolError::Malformed { what: W })?;
            Value::Decimal(s.to_owned())
        }
        ColumnType::Date | ColumnType::NewDate => {
            let dt = decode_binary_datetime(d)?;
            Value::Date(dt.date)
        }
        ColumnType::DateTime
        | ColumnType::DateTime2
        | ColumnType::Timestamp
        | ColumnType::Timestamp2 => Value::DateTime(decode_binary_datetime(d)?),
        ColumnType::Time | ColumnType::Time2 => Value::Time(decode_binary_time(d)?),
        _ => Value::Bytes(d.lenenc_bytes(W)?.to_vec()),
    })
}

fn decode_binary_datetime(d: &mut Decoder<'_>) -> Result<DateTime, ProtocolError> {
    const W: &str = "temporal parameter";
    let len = d.u8(W)?;
    if !matches!(len, 0 | 4 | 7 | 11) {
        return Err(ProtocolError::Malformed { what: W });
    }
    let mut dt = DateTime::default();
    if len >= 4 {
        dt.date.year = d.u16(W)?;
        dt.date.month = d.u8(W)?;
        dt.date.day = d.u8(W)?;
    }
    if len >= 7 {
        dt.hour = d.u8(W)?;
        dt.minute = d.u8(W)?;
        dt.second = d.u8(W)?;
    }
    if len == 11 {
        dt.micros = d.u32(W)?;
    }
    if dt.date.month > 12
        || dt.date.day > 31
        || dt.hour > 23
        || dt.minute > 59
        || dt.second > 59
        || dt.micros > 999_999
    {
        return Err(ProtocolError::Malformed { what: W });
    }
    Ok(dt)
}

fn decode_binary_time(d: &mut Decoder<'_>) -> Result<Time, ProtocolError> {
    const W: &str = "time parameter";
    let len = d.u8(W)?;
    if !matches!(len, 0 | 8 | 12) {
        return Err(ProtocolError::Malformed { what: W });
    }
    let mut t = Time::default();
    if len >= 8 {
        t.negative = match d.u8(W)? {
            0 => false,
            1 => true,
            _ => return Err(ProtocolError::Malformed { what: W }),
        };
        t.days = d.u32(W)?;
        t.hours = d.u8(W)?;
        t.minutes = d.u8(W)?;
        t.seconds = d.u8(W)?;
    }
    if len == 12 {
        t.micros = d.u32(W)?;
    }
    if t.hours > 23 || t.minutes > 59 || t.seconds > 59 || t.micros > 999_999 {
        return Err(ProtocolError::Malformed { what: W });
    }
    Ok(t)
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

#[cfg(test)]
mod tests;
