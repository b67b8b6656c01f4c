//! Turning written values into [`SysValue`]s: option-file text (startup) and
//! `SET` assignments (runtime), each with MySQL's rules for that path.
//!
//! Both paths clamp out-of-range numbers to the range and round sizes down
//! to their block size, reporting `adjusted` so the caller can warn; anything
//! that is not a value of the variable's type is an error.

use super::charset::{collation_by_id, find_charset, find_collation};
use super::def::{SysVarDef, SysVarKind};
use super::value::{Assignment, SetValue, SysValue};
use crate::error::ConfigError;

/// A converted value and whether it differs from what was written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Converted {
    pub(crate) value: SysValue,
    pub(crate) adjusted: bool,
}

impl Converted {
    fn exact(value: SysValue) -> Self {
        Converted {
            value,
            adjusted: false,
        }
    }
}

/// Clamps `v` into `min..=max` and rounds it down to a multiple of `block`
/// (`min` and `max` are multiples of `block`; the registry validation proves
/// it).
fn clamp_unsigned(v: i128, min: u64, max: u64, block: u64) -> Converted {
    let clamped = v.clamp(i128::from(min), i128::from(max));
    // In range of u64 after the clamp.
    let clamped = clamped as u64;
    let rounded = clamped - clamped % block;
    Converted {
        value: SysValue::UInt(rounded),
        adjusted: i128::from(rounded) != v,
    }
}

fn clamp_signed(v: i128, min: i64, max: i64, block: u64) -> Converted {
    let clamped = v.clamp(i128::from(min), i128::from(max));
    // Round toward min so the result stays in range.
    let block = i128::from(block);
    let rounded = clamped - (clamped - i128::from(min)).rem_euclid(block);
    Converted {
        // In range of i64 after the clamp.
        value: SysValue::Int(rounded as i64),
        adjusted: rounded != v,
    }
}

fn clamp_double(v: f64, min: f64, max: f64) -> Converted {
    let clamped = v.clamp(min, max);
    Converted {
        value: SysValue::Double(clamped),
        adjusted: clamped != v,
    }
}

/// Parses `[+-]digits[K|M|G|T|P|E]`; `None` if malformed or beyond `i128`.
fn parse_integer(text: &str, suffixes: bool) -> Option<i128> {
    let (negative, rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let digits_end = rest
        .bytes()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(rest.len());
    if digits_end == 0 || digits_end > 30 {
        return None;
    }
    let mut value: i128 = rest[..digits_end].parse().ok()?;
    let suffix = &rest[digits_end..];
    if !suffix.is_empty() {
        if !suffixes || suffix.len() != 1 {
            return None;
        }
        let shift = match suffix.as_bytes()[0].to_ascii_uppercase() {
            b'K' => 10,
            b'M' => 20,
            b'G' => 30,
            b'T' => 40,
            b'P' => 50,
            b'E' => 60,
            _ => return None,
        };
        value = value.checked_mul(1i128 << shift)?;
    }
    Some(if negative { -value } else { value })
}

fn parse_bool_word(text: &str) -> Option<bool> {
    const TRUE: [&str; 3] = ["on", "true", "1"];
    const FALSE: [&str; 3] = ["off", "false", "0"];
    if TRUE.iter().any(|w| w.eq_ignore_ascii_case(text)) {
        Some(true)
    } else if FALSE.iter().any(|w| w.eq_ignore_ascii_case(text)) {
        Some(false)
    } else {
        None
    }
}

/// Parses a time zone: `SYSTEM`, `UTC`, or `[+-]H[H]:MM` between -13:59 and
/// +14:00. Returns the canonical spelling (`+05:30`).
pub(crate) fn parse_time_zone(text: &str) -> Option<String> {
    if text.eq_ignore_ascii_case("SYSTEM") {
        return Some("SYSTEM".to_string());
    }
    if text.eq_ignore_ascii_case("UTC") {
        return Some("UTC".to_string());
    }
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => ('+', &text[1..]),
        b'-' => ('-', &text[1..]),
        _ => return None,
    };
    let (hours, minutes) = rest.split_once(':')?;
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(hours) || hours.len() > 2 || !all_digits(minutes) || minutes.len() != 2 {
        return None;
    }
    let (h, m): (i32, i32) = (hours.parse().ok()?, minutes.parse().ok()?);
    if m > 59 {
        return None;
    }
    let total = h * 60 + m;
    let ok = if sign == '+' {
        total <= 14 * 60
    } else {
        total <= 13 * 60 + 59
    };
    // "-00:00" is written "+00:00".
    let sign = if total == 0 { '+' } else { sign };
    ok.then(|| format!("{sign}{h:02}:{m:02}"))
}

impl SysVarDef {
    /// Converts option-file or command-line text. `Err(())` means the text is
    /// not a value of this variable; the caller reports [`Self::expected`].
    pub(crate) fn parse_option(&self, text: &str) -> Result<Converted, ()> {
        let text = text.trim();
        let converted = match self.kind {
            SysVarKind::Bool => Converted::exact(SysValue::Bool(parse_bool_word(text).ok_or(())?)),
            SysVarKind::UInt {
                min,
                max,
                block_size,
                suffixes,
            } => {
                let v = parse_integer(text, suffixes).ok_or(())?;
                if v > i128::from(u64::MAX) {
                    return Err(());
                }
                clamp_unsigned(v, min, max, block_size)
            }
            SysVarKind::Int {
                min,
                max,
                block_size,
                suffixes,
            } => {
                let v = parse_integer(text, suffixes).ok_or(())?;
                if v > i128::from(i64::MAX) || v < i128::from(i64::MIN) {
                    return Err(());
                }
                clamp_signed(v, min, max, block_size)
            }
            SysVarKind::Double { min, max } => {
                let v: f64 = text.parse().map_err(|_| ())?;
                if !v.is_finite() {
                    return Err(());
                }
                clamp_double(v, min, max)
            }
            SysVarKind::Enum(names) => {
                let name = match names.iter().find(|n| n.eq_ignore_ascii_case(text)) {
                    Some(name) => name,
                    None => {
                        let index: usize = text.parse().map_err(|_| ())?;
                        names.get(index).ok_or(())?
                    }
                };
                Converted::exact(SysValue::Enum(name))
            }
            SysVarKind::Set(spec) => {
                let bits = if spec.switches {
                    let default = self.default_bits();
                    spec.merge_switches(text, default, default)
                } else {
                    spec.parse(text)
                };
                Converted::exact(SysValue::Set(SetValue::new(bits.map_err(|_| ())?, spec)))
            }
            SysVarKind::Str { .. } => Converted::exact(SysValue::Str(text.to_string())),
            SysVarKind::Path => {
                if text.is_empty() {
                    return Err(());
                }
                Converted::exact(SysValue::Str(text.to_string()))
            }
            SysVarKind::Charset { .. } => {
                let cs = find_charset(text).ok_or(())?;
                Converted::exact(SysValue::Str(cs.name.to_string()))
            }
            SysVarKind::Collation => {
                let coll = find_collation(text).ok_or(())?;
                Converted::exact(SysValue::Str(coll.name.to_string()))
            }
            SysVarKind::TimeZone => {
                Converted::exact(SysValue::Str(parse_time_zone(text).ok_or(())?))
            }
        };
        if self.fixed && (converted.adjusted || converted.value != SysValue::from_default(self)) {
            return Err(());
        }
        Ok(converted)
    }

    /// The compiled default of a SET-typed variable as bits (0 otherwise).
    fn default_bits(&self) -> u64 {
        match self.default {
            super::DefaultValue::Set(bits) => bits,
            _ => 0,
        }
    }

    /// [`Self::convert_assignment`] for a variable whose value is now
    /// `current`: a switch list (`optimizer_switch`) changes only the
    /// switches the text names, keeping the others as they are in
    /// `current`; every other variable ignores `current`.
    pub(crate) fn convert_assignment_over(
        &self,
        value: &Assignment,
        current: &SysValue,
    ) -> Result<Converted, ConfigError> {
        match (self.kind, value, current) {
            (SysVarKind::Set(spec), Assignment::Str(s), SysValue::Set(now)) if spec.switches => {
                spec.merge_switches(s, now.bits(), self.default_bits())
                    .map(|bits| Converted::exact(SysValue::Set(SetValue::new(bits, spec))))
                    .map_err(|item| ConfigError::WrongValue {
                        name: self.name.to_string(),
                        value: item,
                    })
            }
            _ => self.convert_assignment(value),
        }
    }

    /// Converts a `SET` right-hand side with MySQL's typing rules.
    /// [`Assignment::Default`] must be resolved by the caller (it depends on
    /// the scope); here it yields the compiled default.
    pub(crate) fn convert_assignment(&self, value: &Assignment) -> Result<Converted, ConfigError> {
        let name = self.name;
        let wrong_type = || ConfigError::WrongType {
            name: name.to_string(),
        };
        let wrong_value = |v: &dyn ToString| ConfigError::WrongValue {
            name: name.to_string(),
            value: v.to_string(),
        };
        if *value == Assignment::Default {
            return Ok(Converted::exact(SysValue::from_default(self)));
        }
        if *value == Assignment::Null {
            if self.nullable() {
                return Ok(Converted::exact(SysValue::Null));
            }
            return match self.kind {
                SysVarKind::Int { .. } | SysVarKind::UInt { .. } | SysVarKind::Double { .. } => {
                    Err(wrong_type())
                }
                _ => Err(wrong_value(&"NULL")),
            };
        }
        // An integer assignment as i128 (both Int and UInt fit).
        let integer = match *value {
            Assignment::Int(v) => Some(i128::from(v)),
            Assignment::UInt(v) => Some(i128::from(v)),
            _ => None,
        };
        match self.kind {
            SysVarKind::Bool => match (integer, value) {
                (Some(0), _) => Ok(Converted::exact(SysValue::Bool(false))),
                (Some(1), _) => Ok(Converted::exact(SysValue::Bool(true))),
                (Some(v), _) => Err(wrong_value(&v)),
                (None, Assignment::Str(s)) if s.eq_ignore_ascii_case("ON") => {
                    Ok(Converted::exact(SysValue::Bool(true)))
                }
                (None, Assignment::Str(s)) if s.eq_ignore_ascii_case("OFF") => {
                    Ok(Converted::exact(SysValue::Bool(false)))
                }
                (None, Assignment::Str(s)) => Err(wrong_value(s)),
                _ => Err(wrong_type()),
            },
            SysVarKind::UInt {
                min,
                max,
                block_size,
                ..
            } => integer
                .map(|v| clamp_unsigned(v, min, max, block_size))
                .ok_or_else(wrong_type),
            SysVarKind::Int {
                min,
                max,
                block_size,
                ..
            } => integer
                .map(|v| clamp_signed(v, min, max, block_size))
                .ok_or_else(wrong_type),
            SysVarKind::Double { min, max } => match (integer, value) {
                (Some(v), _) => Ok(clamp_double(v as f64, min, max)),
                (None, Assignment::Float(v)) if v.is_finite() => Ok(clamp_double(*v, min, max)),
                _ => Err(wrong_type()),
            },
            SysVarKind::Enum(names) => match (integer, value) {
                (Some(v), _) => usize::try_from(v)
                    .ok()
                    .and_then(|i| names.get(i))
                    .map(|n| Converted::exact(SysValue::Enum(n)))
                    .ok_or_else(|| wrong_value(&v)),
                (None, Assignment::Str(s)) => names
                    .iter()
                    .find(|n| n.eq_ignore_ascii_case(s))
                    .map(|n| Converted::exact(SysValue::Enum(n)))
                    .ok_or_else(|| wrong_value(s)),
                _ => Err(wrong_type()),
            },
            SysVarKind::Set(spec) => match (integer, value) {
                (Some(v), _) => u64::try_from(v)
                    .ok()
                    .and_then(|bits| spec.from_bits(bits))
                    .map(|bits| Converted::exact(SysValue::Set(SetValue::new(bits, spec))))
                    .ok_or_else(|| wrong_value(&v)),
                (None, Assignment::Str(s)) => if spec.switches {
                    spec.merge_switches(s, self.default_bits(), self.default_bits())
                } else {
                    spec.parse(s)
                }
                .map(|bits| Converted::exact(SysValue::Set(SetValue::new(bits, spec))))
                .map_err(|member| wrong_value(&member)),
                _ => Err(wrong_type()),
            },
            SysVarKind::Str { .. } => match value {
                Assignment::Str(s) => Ok(Converted::exact(SysValue::Str(s.clone()))),
                _ => Err(wrong_type()),
            },
            SysVarKind::Path => match value {
                Assignment::Str(s) if !s.is_empty() => {
                    Ok(Converted::exact(SysValue::Str(s.clone())))
                }
                Assignment::Str(s) => Err(wrong_value(s)),
                _ => Err(wrong_type()),
            },
            SysVarKind::Charset { .. } => {
                let found = match (integer, value) {
                    (Some(id), _) => u64::try_from(id)
                        .ok()
                        .and_then(collation_by_id)
                        .and_then(|c| find_charset(c.charset))
                        .ok_or_else(|| ConfigError::UnknownCharset {
                            name: id.to_string(),
                        })?,
                    (None, Assignment::Str(s)) => find_charset(s)
                        .ok_or_else(|| ConfigError::UnknownCharset { name: s.clone() })?,
                    _ => return Err(wrong_type()),
                };
                Ok(Converted::exact(SysValue::Str(found.name.to_string())))
            }
            SysVarKind::Collation => {
                let found = match (integer, value) {
                    (Some(id), _) => u64::try_from(id)
                        .ok()
                        .and_then(collation_by_id)
                        .ok_or_else(|| ConfigError::UnknownCollation {
                            name: id.to_string(),
                        })?,
                    (None, Assignment::Str(s)) => find_collation(s)
                        .ok_or_else(|| ConfigError::UnknownCollation { name: s.clone() })?,
                    _ => return Err(wrong_type()),
                };
                Ok(Converted::exact(SysValue::Str(found.name.to_string())))
            }
            SysVarKind::TimeZone => match value {
                Assignment::Str(s) => parse_time_zone(s)
                    .map(|tz| Converted::exact(SysValue::Str(tz)))
                    .ok_or_else(|| ConfigError::UnknownTimeZone { name: s.clone() }),
                _ => Err(wrong_type()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sysvar::def::{DefaultValue, Scope};

    fn int_def(min: i64, max: i64, block: u64) -> SysVarDef {
        SysVarDef {
            name: "test_int",
            kind: SysVarKind::Int {
                min,
                max,
                block_size: block,
                suffixes: true,
            },
            default: DefaultValue::Int(0),
            scope: Scope::Global,
            dynamic: true,
            startup: true,
            session_read_only: false,
            fixed: false,
            description: "test",
        }
    }

    #[test]
    fn integers_with_suffixes() {
        assert_eq!(parse_integer("16", true), Some(16));
        assert_eq!(parse_integer("16k", true), Some(16 << 10));
        assert_eq!(parse_integer("16M", true), Some(16 << 20));
        assert_eq!(parse_integer("2g", true), Some(2 << 30));
        assert_eq!(parse_integer("1T", true), Some(1 << 40));
        assert_eq!(parse_integer("-3", true), Some(-3));
        assert_eq!(parse_integer("16M", false), None);
        assert_eq!(parse_integer("16MB", true), None);
        assert_eq!(parse_integer("M", true), None);
        assert_eq!(parse_integer("", true), None);
        assert_eq!(parse_integer("1.5", true), None);
        assert_eq!(parse_integer("0x10", true), None);
    }

    #[test]
    fn time_zones() {
        assert_eq!(parse_time_zone("system").as_deref(), Some("SYSTEM"));
        assert_eq!(parse_time_zone("utc").as_deref(), Some("UTC"));
        assert_eq!(parse_time_zone("+1:00").as_deref(), Some("+01:00"));
        assert_eq!(parse_time_zone("-13:59").as_deref(), Some("-13:59"));
        assert_eq!(parse_time_zone("+14:00").as_deref(), Some("+14:00"));
        assert_eq!(parse_time_zone("-00:00").as_deref(), Some("+00:00"));
        assert_eq!(parse_time_zone("+14:01"), None);
        assert_eq!(parse_time_zone("-14:00"), None);
        assert_eq!(parse_time_zone("+05:60"), None);
        assert_eq!(parse_time_zone("05:00"), None);
        assert_eq!(parse_time_zone("Europe/Paris"), None);
    }

    #[test]
    fn signed_kind_clamps_and_rounds_toward_min() {
        let def = int_def(-100, 100, 10);
        let c = def.parse_option("-1k").unwrap();
        assert_eq!(c.value, SysValue::Int(-100));
        assert!(c.adjusted);
        let c = def.parse_option("55").unwrap();
        assert_eq!(c.value, SysValue::Int(50));
        assert!(c.adjusted);
        let c = def.parse_option("-30").unwrap();
        assert_eq!(c.value, SysValue::Int(-30));
        assert!(!c.adjusted);
        let c = def.convert_assignment(&Assignment::UInt(u64::MAX)).unwrap();
        assert_eq!(c.value, SysValue::Int(100));
        assert!(c.adjusted);
        assert!(matches!(
            def.convert_assignment(&Assignment::Str("5".into())),
            Err(ConfigError::WrongType { .. })
        ));
    }
}
