//! Implicit conversions between value kinds, as MySQL performs them.
//!
//! Numeric contexts read a string's longest numeric prefix (leading spaces
//! skipped); leftover text or an empty prefix adds warning 1292
//! `Truncated incorrect DOUBLE value: '...'` (`INTEGER` / `DECIMAL` in
//! those contexts). Integer contexts round decimals and doubles half away
//! from zero and saturate at the type's bounds. Temporals read as numbers
//! become `YYYYMMDD`, `YYYYMMDDhhmmss[.ffffff]` and `hhmmss`.

use super::decimal::{Decimal, Rounding};
use super::temporal;
use super::{Date, DateTime, Time, Value};
use crate::error::Warning;

/// Warning number of "Truncated incorrect ... value".
pub const WARN_TRUNCATED: u16 = 1292;

fn truncated(kind: &str, bytes: &[u8]) -> Warning {
    Warning::warn(
        WARN_TRUNCATED,
        format!(
            "Truncated incorrect {kind} value: '{}'",
            String::from_utf8_lossy(bytes)
        ),
    )
}

/// Splits off the longest numeric prefix of `s`: `(prefix, is_clean)`.
/// `is_clean` is false when anything but trailing spaces follows.
fn numeric_prefix(s: &str, allow_fraction: bool) -> (&str, bool) {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r']);
    let b = t.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let digits_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut had_digits = i > digits_start;
    if allow_fraction && i < b.len() && b[i] == b'.' {
        let j = i + 1;
        let mut k = j;
        while k < b.len() && b[k].is_ascii_digit() {
            k += 1;
        }
        if k > j || had_digits {
            had_digits |= k > j;
            i = k;
        }
    }
    if allow_fraction && had_digits && i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut k = i + 1;
        if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
            k += 1;
        }
        let exp_start = k;
        while k < b.len() && b[k].is_ascii_digit() {
            k += 1;
        }
        if k > exp_start {
            i = k;
        }
    }
    if !had_digits {
        return ("", false);
    }
    let rest = &t[i..];
    (&t[..i], rest.trim_end_matches(' ').is_empty())
}

/// A string as a double (numeric prefix, warning when not clean).
pub fn str_to_f64(bytes: &[u8], warnings: &mut Vec<Warning>) -> f64 {
    let s = String::from_utf8_lossy(bytes);
    let (prefix, clean) = numeric_prefix(&s, true);
    if !clean {
        warnings.push(truncated("DOUBLE", bytes));
    }
    if prefix.is_empty() {
        return 0.0;
    }
    prefix.parse::<f64>().unwrap_or(0.0)
}

/// A string as a decimal.
pub fn str_to_decimal(bytes: &[u8], warnings: &mut Vec<Warning>) -> Decimal {
    let s = String::from_utf8_lossy(bytes);
    let (prefix, clean) = numeric_prefix(&s, true);
    if !clean {
        warnings.push(truncated("DECIMAL", bytes));
    }
    if prefix.is_empty() {
        return Decimal::zero();
    }
    Decimal::parse(prefix)
        .or_else(|| prefix.parse::<f64>().ok().and_then(Decimal::from_f64))
        .unwrap_or_else(Decimal::zero)
}

/// A string as a signed integer (integer prefix; a fraction or exponent
/// is rounded as MySQL's `CAST(... AS SIGNED)` does, with a warning).
pub fn str_to_i64(bytes: &[u8], warnings: &mut Vec<Warning>) -> i64 {
    let s = String::from_utf8_lossy(bytes);
    let (prefix, clean) = numeric_prefix(&s, false);
    if !clean {
        warnings.push(truncated("INTEGER", bytes));
    }
    if prefix.is_empty() || prefix == "-" || prefix == "+" {
        return 0;
    }
    match prefix.parse::<i64>() {
        Ok(v) => v,
        Err(_) => {
            if prefix.starts_with('-') {
                i64::MIN
            } else {
                match prefix.trim_start_matches('+').parse::<u64>() {
                    // MySQL reinterprets values above i64::MAX in a
                    // signed context.
                    Ok(u) => u as i64,
                    Err(_) => i64::MAX,
                }
            }
        }
    }
}

/// A string as an unsigned integer (negative text wraps, as MySQL).
pub fn str_to_u64(bytes: &[u8], warnings: &mut Vec<Warning>) -> u64 {
    let s = String::from_utf8_lossy(bytes);
    let (prefix, clean) = numeric_prefix(&s, false);
    if !clean {
        warnings.push(truncated("INTEGER", bytes));
    }
    if prefix.is_empty() || prefix == "-" || prefix == "+" {
        return 0;
    }
    if prefix.starts_with('-') {
        return prefix.parse::<i64>().map(|v| v as u64).unwrap_or(0);
    }
    prefix
        .trim_start_matches('+')
        .parse::<u64>()
        .unwrap_or(u64::MAX)
}

fn date_number(d: &Date) -> u64 {
    u64::from(d.year) * 10_000 + u64::from(d.month) * 100 + u64::from(d.day)
}

fn datetime_number(dt: &DateTime) -> u64 {
    date_number(&dt.date) * 1_000_000
        + u64::from(dt.hour) * 10_000
        + u64::from(dt.minute) * 100
        + u64::from(dt.second)
}

fn time_number(t: &Time) -> i64 {
    let hours = i64::from(t.days) * 24 + i64::from(t.hours);
    let v = hours * 10_000 + i64::from(t.minutes) * 100 + i64::from(t.seconds);
    if t.negative {
        -v
    } else {
        v
    }
}

fn f64_to_i64(v: f64) -> i64 {
    let r = v.round();
    // 2^63 is exactly representable; every double at or above it is out of range.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if r >= TWO_63 {
        i64::MAX
    } else if r <= -TWO_63 {
        i64::MIN
    } else {
        r as i64
    }
}

/// Value as `i64` (integer context).
pub fn to_i64(v: &Value, warnings: &mut Vec<Warning>) -> i64 {
    match v {
        Value::Null => 0,
        Value::Int(i) => *i,
        Value::UInt(u) => *u as i64,
        Value::Decimal(d) => {
            d.to_i64()
                .unwrap_or(if d.is_negative() { i64::MIN } else { i64::MAX })
        }
        Value::Double(f) => f64_to_i64(*f),
        Value::Str(b) => str_to_i64(b, warnings),
        Value::Date(d) => date_number(d) as i64,
        Value::DateTime(dt) => datetime_number(dt) as i64,
        Value::Time(t) => time_number(t),
    }
}

/// Value as `u64` (unsigned context).
pub fn to_u64(v: &Value, warnings: &mut Vec<Warning>) -> u64 {
    match v {
        Value::Null => 0,
        Value::Int(i) => *i as u64,
        Value::UInt(u) => *u,
        Value::Decimal(d) => {
            if d.is_negative() {
                d.to_i64().map(|i| i as u64).unwrap_or(0)
            } else {
                d.to_u64().unwrap_or(u64::MAX)
            }
        }
        Value::Double(f) => {
            let r = f.round();
            if r < 0.0 {
                f64_to_i64(r) as u64
            } else if r >= 18_446_744_073_709_551_616.0 {
                u64::MAX
            } else {
                r as u64
            }
        }
        Value::Str(b) => str_to_u64(b, warnings),
        Value::Date(_) | Value::DateTime(_) | Value::Time(_) => to_i64(v, warnings) as u64,
    }
}

/// Value as `f64` (double context).
pub fn to_f64(v: &Value, warnings: &mut Vec<Warning>) -> f64 {
    match v {
        Value::Null => 0.0,
        Value::Int(i) => *i as f64,
        Value::UInt(u) => *u as f64,
        Value::Decimal(d) => d.to_f64(),
        Value::Double(f) => *f,
        Value::Str(b) => str_to_f64(b, warnings),
        Value::Date(d) => date_number(d) as f64,
        Value::DateTime(dt) => datetime_number(dt) as f64 + f64::from(dt.micros) / 1e6,
        Value::Time(t) => {
            let base = time_number(t) as f64;
            let frac = f64::from(t.micros) / 1e6;
            if t.negative {
                base - frac
            } else {
                base + frac
            }
        }
    }
}

/// Value as a decimal (decimal context).
pub fn to_decimal(v: &Value, warnings: &mut Vec<Warning>) -> Decimal {
    match v {
        Value::Null => Decimal::zero(),
        Value::Int(i) => Decimal::from_i64(*i),
        Value::UInt(u) => Decimal::from_u64(*u),
        Value::Decimal(d) => d.clone(),
        Value::Double(f) => Decimal::from_f64(*f).unwrap_or_else(Decimal::zero),
        Value::Str(b) => str_to_decimal(b, warnings),
        Value::Date(d) => Decimal::from_u64(date_number(d)),
        Value::DateTime(dt) => {
            let whole = Decimal::from_u64(datetime_number(dt));
            if dt.micros == 0 {
                whole
            } else {
                let frac = Decimal::from_i128_scaled(i128::from(dt.micros), 6);
                whole.add(&frac).unwrap_or(whole)
            }
        }
        Value::Time(t) => {
            let whole = Decimal::from_i64(time_number(t));
            if t.micros == 0 {
                whole
            } else {
                let frac = Decimal::from_i128_scaled(i128::from(t.micros), 6);
                let frac = if t.negative { frac.negated() } else { frac };
                whole.add(&frac).unwrap_or(whole)
            }
        }
    }
}

/// MySQL's text of a double: shortest round-trip digits, scientific
/// notation below 1e-4 and from 1e15 on.
pub fn format_double(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return "0".into();
    }
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..15).contains(&exp) {
        format!("{mantissa}e{exp}")
    } else {
        format!("{v}")
    }
}

/// Value as text bytes (string context).
pub fn to_bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::Null => Vec::new(),
        Value::Int(i) => i.to_string().into_bytes(),
        Value::UInt(u) => u.to_string().into_bytes(),
        Value::Decimal(d) => d.to_string().into_bytes(),
        Value::Double(f) => format_double(*f).into_bytes(),
        Value::Str(b) => b.clone(),
        Value::Date(d) => temporal::format_date(d).into_bytes(),
        Value::DateTime(dt) => {
            let dec = if dt.micros != 0 { 6 } else { 0 };
            temporal::format_datetime(dt, dec).into_bytes()
        }
        Value::Time(t) => {
            let dec = if t.micros != 0 { 6 } else { 0 };
            temporal::format_time(t, dec).into_bytes()
        }
    }
}

/// Text of a value with a fixed number of fractional digits for
/// temporals (as its column declares).
pub fn to_bytes_with_decimals(v: &Value, decimals: u8) -> Vec<u8> {
    match v {
        Value::DateTime(dt) => temporal::format_datetime(dt, decimals.min(6)).into_bytes(),
        Value::Time(t) => temporal::format_time(t, decimals.min(6)).into_bytes(),
        Value::Decimal(d) if decimals <= super::decimal::MAX_SCALE => {
            d.with_scale(decimals).to_string().into_bytes()
        }
        _ => to_bytes(v),
    }
}

fn number_to_datetime(n: i64) -> Option<DateTime> {
    if n < 0 {
        return None;
    }
    let s = n.to_string();
    match s.len() {
        1..=6 if n == 0 => Some(DateTime::default()),
        5..=8 => temporal::parse_datetime(&format!("{n:08}")),
        9..=14 => temporal::parse_datetime(&format!("{n:014}")),
        _ => None,
    }
}

/// Value as a datetime (`None` when it is not a valid one).
pub fn to_datetime(v: &Value) -> Option<DateTime> {
    match v {
        Value::Date(d) => Some(DateTime {
            date: *d,
            ..DateTime::default()
        }),
        Value::DateTime(dt) => Some(*dt),
        Value::Time(t) => {
            // TIME in a datetime context: today's date is MySQL's rule; the
            // caller supplies a clock where that matters, here the zero date.
            Some(DateTime {
                date: Date::default(),
                hour: t.hours,
                minute: t.minutes,
                second: t.seconds,
                micros: t.micros,
            })
        }
        Value::Str(b) => temporal::parse_datetime(&String::from_utf8_lossy(b)),
        Value::Int(i) => number_to_datetime(*i),
        Value::UInt(u) => i64::try_from(*u).ok().and_then(number_to_datetime),
        Value::Decimal(d) => {
            let whole = d.round(0, Rounding::Truncate).to_i64()?;
            number_to_datetime(whole)
        }
        Value::Double(f) => number_to_datetime(f.trunc() as i64),
        Value::Null => None,
    }
}

/// Value as a time (`None` when it is not a valid one).
pub fn to_time(v: &Value) -> Option<Time> {
    match v {
        Value::Time(t) => Some(*t),
        Value::DateTime(dt) => Some(Time {
            negative: false,
            days: 0,
            hours: dt.hour,
            minutes: dt.minute,
            seconds: dt.second,
            micros: dt.micros,
        }),
        Value::Date(_) => Some(Time::default()),
        Value::Str(b) => temporal::parse_time(&String::from_utf8_lossy(b)),
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Double(_) => {
            let mut sink = Vec::new();
            let n = to_i64(v, &mut sink);
            let neg = n < 0;
            temporal::parse_time(&format!(
                "{}{:06}",
                if neg { "-" } else { "" },
                n.unsigned_abs()
            ))
        }
        Value::Null => None,
    }
}

/// Truth value of a non-NULL value (`IF`, `WHERE`, `AND`).
pub fn is_true(v: &Value, warnings: &mut Vec<Warning>) -> bool {
    match v {
        Value::Null => false,
        Value::Int(i) => *i != 0,
        Value::UInt(u) => *u != 0,
        Value::Decimal(d) => !d.is_zero(),
        Value::Double(f) => *f != 0.0,
        Value::Str(_) => to_f64(v, warnings) != 0.0,
        Value::Date(_) | Value::DateTime(_) | Value::Time(_) => to_f64(v, warnings) != 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_in_numeric_context() {
        let mut w = Vec::new();
        assert_eq!(str_to_f64(b"12.5", &mut w), 12.5);
        assert_eq!(str_to_f64(b"  3e2 ", &mut w), 300.0);
        assert!(w.is_empty());
        assert_eq!(str_to_f64(b"12abc", &mut w), 12.0);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].message, "Truncated incorrect DOUBLE value: '12abc'");
        assert_eq!(str_to_f64(b"abc", &mut w), 0.0);
        assert_eq!(w.len(), 2);
        assert_eq!(str_to_i64(b"-42", &mut w), -42);
        assert_eq!(str_to_i64(b"1.5", &mut w), 1);
        assert_eq!(w.len(), 3);
        assert_eq!(str_to_u64(b"18446744073709551615", &mut w), u64::MAX);
        assert_eq!(str_to_decimal(b"1.25x", &mut w).to_string(), "1.25");
    }

    #[test]
    fn numbers_and_temporals() {
        let mut w = Vec::new();
        assert_eq!(to_i64(&Value::Double(2.5), &mut w), 3);
        assert_eq!(to_i64(&Value::Double(-2.5), &mut w), -3);
        assert_eq!(to_i64(&Value::Double(1e30), &mut w), i64::MAX);
        let dt = temporal::parse_datetime("2024-01-02 03:04:05").unwrap();
        assert_eq!(to_i64(&Value::DateTime(dt), &mut w), 20240102030405);
        assert_eq!(to_datetime(&Value::Int(20240102)).unwrap().date.day, 2);
        assert_eq!(
            temporal::format_time(&to_time(&Value::Int(-101112)).unwrap(), 0),
            "-10:11:12"
        );
        assert!(w.is_empty());
    }

    #[test]
    fn double_text() {
        assert_eq!(format_double(1.5), "1.5");
        assert_eq!(format_double(1e20), "1e20");
        assert_eq!(format_double(1e14), "100000000000000");
        assert_eq!(format_double(0.00001), "1e-5");
        assert_eq!(format_double(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(format_double(-0.0), "0");
    }
}
