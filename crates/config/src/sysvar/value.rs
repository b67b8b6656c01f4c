//! Values of system variables and the values `SET` assigns.

use std::fmt;

use super::def::{DefaultValue, SetSpec, SysVarDef, SysVarKind};
use super::sql_mode::SqlMode;

/// The members of a SET-typed value, displayable on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetValue {
    bits: u64,
    spec: &'static SetSpec,
}

impl SetValue {
    pub(crate) fn new(bits: u64, spec: &'static SetSpec) -> SetValue {
        SetValue { bits, spec }
    }

    /// The member bits.
    pub fn bits(&self) -> u64 {
        self.bits
    }

    /// Whether member (or switch) `name` is set (case-insensitive).
    pub fn contains(&self, name: &str) -> bool {
        self.spec
            .bit_of(name)
            .is_some_and(|bit| self.bits & (1u64 << bit) != 0)
    }
}

impl VarType for SetValue {
    fn from_value(value: &SysValue) -> Option<Self> {
        match value {
            SysValue::Set(set) => Some(*set),
            _ => None,
        }
    }
}

/// The current value of a system variable.
///
/// `Display` renders exactly what MySQL's `SHOW VARIABLES` prints: `ON`/`OFF`
/// for booleans, plain decimal integers (sizes in bytes, no suffixes), six
/// decimals for doubles, enum and set names in canonical order, and an empty
/// string for `NULL`. `SELECT @@x` has different column types (booleans read
/// as 1/0 integers, `NULL` is SQL `NULL`); the SQL layer maps variants to
/// columns itself.
#[derive(Debug, Clone, PartialEq)]
pub enum SysValue {
    /// SQL `NULL` (only nullable variables: `character_set_results`).
    Null,
    /// A boolean.
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer.
    UInt(u64),
    /// A double.
    Double(f64),
    /// An enum member, spelled as in the registry.
    Enum(&'static str),
    /// A set of members.
    Set(SetValue),
    /// Text (strings, paths, character set and collation names, time zones).
    Str(String),
}

impl SysValue {
    /// The compiled default of `def` as a value.
    ///
    /// # Panics
    ///
    /// If `def.default` is a set but `def.kind` is not; registry entries never
    /// are (the table is validated at compile time).
    pub fn from_default(def: &SysVarDef) -> SysValue {
        match (def.default, def.kind) {
            (DefaultValue::Bool(b), _) => SysValue::Bool(b),
            (DefaultValue::Int(v), _) => SysValue::Int(v),
            (DefaultValue::UInt(v), _) => SysValue::UInt(v),
            (DefaultValue::Double(v), _) => SysValue::Double(v),
            (DefaultValue::Enum(name), _) => SysValue::Enum(name),
            (DefaultValue::Set(bits), SysVarKind::Set(spec)) => {
                SysValue::Set(SetValue::new(bits, spec))
            }
            (DefaultValue::Set(_), _) => {
                unreachable!("table validation rejects a set default on a non-set kind")
            }
            (DefaultValue::Str(s), _) => SysValue::Str(s.to_string()),
        }
    }

    /// Whether this value is of the shape `kind` stores.
    pub fn fits(&self, kind: &SysVarKind, nullable: bool) -> bool {
        matches!(
            (self, kind),
            (SysValue::Bool(_), SysVarKind::Bool)
                | (SysValue::Int(_), SysVarKind::Int { .. })
                | (SysValue::UInt(_), SysVarKind::UInt { .. })
                | (SysValue::Double(_), SysVarKind::Double { .. })
                | (SysValue::Enum(_), SysVarKind::Enum(_))
                | (SysValue::Set(_), SysVarKind::Set(_))
                | (
                    SysValue::Str(_),
                    SysVarKind::Str { .. }
                        | SysVarKind::Path
                        | SysVarKind::Charset { .. }
                        | SysVarKind::Collation
                        | SysVarKind::TimeZone
                )
        ) || (nullable && *self == SysValue::Null)
    }

    /// The value as a number for range comparisons between variables.
    pub(crate) fn as_f64(&self) -> Option<f64> {
        match *self {
            SysValue::Int(v) => Some(v as f64),
            SysValue::UInt(v) => Some(v as f64),
            SysValue::Double(v) => Some(v),
            _ => None,
        }
    }

    /// The text of a string-like value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            SysValue::Str(s) => Some(s),
            SysValue::Enum(s) => Some(s),
            _ => None,
        }
    }
}

impl fmt::Display for SysValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SysValue::Null => Ok(()),
            SysValue::Bool(true) => f.write_str("ON"),
            SysValue::Bool(false) => f.write_str("OFF"),
            SysValue::Int(v) => write!(f, "{v}"),
            SysValue::UInt(v) => write!(f, "{v}"),
            SysValue::Double(v) => write!(f, "{v:.6}"),
            SysValue::Enum(s) => f.write_str(s),
            SysValue::Set(set) => set.spec.write_members(set.bits, f),
            SysValue::Str(s) => f.write_str(s),
        }
    }
}

/// The right-hand side of `SET x = ...`, as the SQL layer evaluated it.
///
/// MySQL's rules depend on the literal's type: an integer variable rejects a
/// string or a decimal with error 1232, a boolean accepts `1`/`0`/`'ON'`/
/// `'OFF'` but rejects `2` with 1231. Identifiers (`SET autocommit = ON`,
/// `SET sql_mode = ANSI`) arrive as [`Assignment::Str`]; `TRUE`/`FALSE`
/// arrive as [`Assignment::Int`].
#[derive(Debug, Clone, PartialEq)]
pub enum Assignment {
    /// `SET x = DEFAULT`: the compiled default for `SET GLOBAL`, the global
    /// value for `SET SESSION`.
    Default,
    /// `SET x = NULL`.
    Null,
    /// A signed integer literal or expression.
    Int(i64),
    /// An unsigned integer too large for `i64`.
    UInt(u64),
    /// A decimal or floating-point literal.
    Float(f64),
    /// A string literal or a bare identifier.
    Str(String),
}

impl Assignment {
    /// How MySQL quotes this value in "can't be set to the value of '...'".
    pub fn to_error_text(&self) -> String {
        match self {
            Assignment::Default => "DEFAULT".to_string(),
            Assignment::Null => "NULL".to_string(),
            Assignment::Int(v) => v.to_string(),
            Assignment::UInt(v) => v.to_string(),
            Assignment::Float(v) => v.to_string(),
            Assignment::Str(s) => s.clone(),
        }
    }
}

/// A Rust type a variable's value can be read as; see [`Key`](super::keys::Key).
pub trait VarType: Sized {
    /// Extracts the typed value; `None` if the value has another shape.
    fn from_value(value: &SysValue) -> Option<Self>;
}

impl VarType for bool {
    fn from_value(value: &SysValue) -> Option<Self> {
        match value {
            SysValue::Bool(b) => Some(*b),
            _ => None,
        }
    }
}

impl VarType for u64 {
    fn from_value(value: &SysValue) -> Option<Self> {
        match value {
            SysValue::UInt(v) => Some(*v),
            _ => None,
        }
    }
}

impl VarType for i64 {
    fn from_value(value: &SysValue) -> Option<Self> {
        match value {
            SysValue::Int(v) => Some(*v),
            _ => None,
        }
    }
}

impl VarType for f64 {
    fn from_value(value: &SysValue) -> Option<Self> {
        match value {
            SysValue::Double(v) => Some(*v),
            _ => None,
        }
    }
}

impl VarType for &'static str {
    fn from_value(value: &SysValue) -> Option<Self> {
        match value {
            SysValue::Enum(s) => Some(s),
            _ => None,
        }
    }
}

impl VarType for String {
    fn from_value(value: &SysValue) -> Option<Self> {
        match value {
            SysValue::Str(s) => Some(s.clone()),
            _ => None,
        }
    }
}

impl VarType for Option<String> {
    fn from_value(value: &SysValue) -> Option<Self> {
        match value {
            SysValue::Str(s) => Some(Some(s.clone())),
            SysValue::Null => Some(None),
            _ => None,
        }
    }
}

impl VarType for SqlMode {
    fn from_value(value: &SysValue) -> Option<Self> {
        match value {
            SysValue::Set(set) => Some(SqlMode::from_bits_unchecked(set.bits)),
            _ => None,
        }
    }
}
