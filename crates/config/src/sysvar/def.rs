//! What a system variable is: its name, kind, default, scope and flags.

use std::fmt::{self, Write as _};

use super::charset::{CHARSETS, COLLATIONS};

/// Where a variable has a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// One server-wide value (`SET GLOBAL`, `@@global.x`).
    Global,
    /// Only a per-connection value (`SET SESSION`, `@@session.x`); new
    /// sessions start from the compiled default.
    Session,
    /// A global value that every new session copies at connect, plus the
    /// per-connection copy.
    Both,
}

impl Scope {
    /// Whether the variable has a server-wide value.
    pub const fn has_global(self) -> bool {
        matches!(self, Scope::Global | Scope::Both)
    }

    /// Whether the variable has a per-session value.
    pub const fn has_session(self) -> bool {
        matches!(self, Scope::Session | Scope::Both)
    }
}

/// The members of a SET-typed variable (only `sql_mode` today).
///
/// `names[i]` is the member stored in bit `i`; an empty string marks a bit
/// that no longer has a member (MySQL keeps removed `sql_mode` bits reserved,
/// so numeric `sql_mode` values stay compatible). `combinations` lists the
/// members that, when set, also turn on other members (`ANSI`,
/// `TRADITIONAL`); the combination's own bit stays set, as in MySQL.
#[derive(Debug, PartialEq, Eq)]
pub struct SetSpec {
    /// Member names indexed by bit; `""` for a reserved bit.
    pub names: &'static [&'static str],
    /// `(bit of the combination member, bits it implies)`.
    pub combinations: &'static [(u32, u64)],
    /// A switch list (`optimizer_switch`) rather than a member list: every
    /// member is shown as `name=on` or `name=off`, and an assignment names
    /// only the switches it changes ([`SetSpec::merge_switches`]).
    pub switches: bool,
}

impl SetSpec {
    /// The member names, comma-separated, in bit order.
    pub fn member_names(&self) -> String {
        let names: Vec<&str> = self
            .names
            .iter()
            .copied()
            .filter(|n| !n.is_empty())
            .collect();
        names.join(", ")
    }

    /// Every bit that carries a member.
    pub fn valid_bits(&self) -> u64 {
        self.names
            .iter()
            .enumerate()
            .filter(|(_, n)| !n.is_empty())
            .fold(0, |acc, (i, _)| acc | (1u64 << i))
    }

    /// Adds the members implied by any combination member in `bits`.
    pub fn expand(&self, bits: u64) -> u64 {
        self.combinations
            .iter()
            .filter(|(bit, _)| bits & (1u64 << bit) != 0)
            .fold(bits, |acc, (_, implied)| acc | implied)
    }

    /// The bit of member `name` (case-insensitive).
    pub fn bit_of(&self, name: &str) -> Option<u32> {
        self.names
            .iter()
            .position(|n| !n.is_empty() && n.eq_ignore_ascii_case(name))
            .map(|i| i as u32)
    }

    /// Parses a comma-separated member list. Whitespace around members is
    /// ignored, as are empty members; the first unknown member is returned as
    /// the error. Combination members are expanded.
    pub fn parse(&self, text: &str) -> Result<u64, String> {
        let mut bits = 0u64;
        for member in text.split(',').map(str::trim).filter(|m| !m.is_empty()) {
            match self.bit_of(member) {
                Some(bit) => bits |= 1u64 << bit,
                None => return Err(member.to_string()),
            }
        }
        Ok(self.expand(bits))
    }

    /// Validates a numeric value: every set bit must carry a member.
    pub fn from_bits(&self, bits: u64) -> Option<u64> {
        (bits & !self.valid_bits() == 0).then(|| self.expand(bits))
    }

    /// Applies a switch assignment to `current`, as MySQL's
    /// `optimizer_switch` does: `default` alone restores `default`;
    /// otherwise a comma-separated list of `name=on`, `name=off` or
    /// `name=default` changes the named switches and keeps the others. The
    /// first malformed item or unknown name is the error.
    pub fn merge_switches(&self, text: &str, current: u64, default: u64) -> Result<u64, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("default") {
            return Ok(default);
        }
        let mut bits = current;
        for item in text.split(',').map(str::trim).filter(|m| !m.is_empty()) {
            let (name, state) = item.split_once('=').ok_or_else(|| item.to_string())?;
            let bit = self.bit_of(name.trim()).ok_or_else(|| item.to_string())?;
            let mask = 1u64 << bit;
            let on = match state.trim().to_ascii_lowercase().as_str() {
                "on" => true,
                "off" => false,
                "default" => default & mask != 0,
                _ => return Err(item.to_string()),
            };
            bits = if on { bits | mask } else { bits & !mask };
        }
        Ok(bits)
    }

    /// Writes the members of `bits` comma-separated, in bit order (for a
    /// switch list: every switch as `name=on` or `name=off`).
    pub fn write_members(&self, bits: u64, out: &mut impl fmt::Write) -> fmt::Result {
        if self.switches {
            let named = self.names.iter().enumerate().filter(|(_, n)| !n.is_empty());
            for (k, (i, name)) in named.enumerate() {
                if k > 0 {
                    out.write_char(',')?;
                }
                let state = if bits & (1u64 << i) != 0 { "on" } else { "off" };
                write!(out, "{name}={state}")?;
            }
            return Ok(());
        }
        let mut first = true;
        for (i, name) in self.names.iter().enumerate() {
            if !name.is_empty() && bits & (1u64 << i) != 0 {
                if !first {
                    out.write_char(',')?;
                }
                out.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

/// The type and the accepted values of a system variable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SysVarKind {
    /// `ON`/`OFF`. Shown as `ON`/`OFF`; `SELECT @@x` reads 1/0.
    Bool,
    /// Signed integer in `min..=max`, rounded down to a multiple of
    /// `block_size`; `suffixes` allows `K`/`M`/`G`/`T`/`P`/`E` in option
    /// files.
    Int {
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
        /// Values are rounded down to a multiple of this (1 = any).
        block_size: u64,
        /// Whether option files may write `16M`.
        suffixes: bool,
    },
    /// Unsigned integer; same rules as [`SysVarKind::Int`].
    UInt {
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
        /// Values are rounded down to a multiple of this (1 = any).
        block_size: u64,
        /// Whether option files may write `16M`.
        suffixes: bool,
    },
    /// Floating point in `min..=max`; shown with six decimals.
    Double {
        /// Smallest accepted value.
        min: f64,
        /// Largest accepted value.
        max: f64,
    },
    /// One of a fixed list of names (case-insensitive on input, shown as
    /// listed); a number selects by position.
    Enum(&'static [&'static str]),
    /// Any combination of the members of a [`SetSpec`].
    Set(&'static SetSpec),
    /// Free text; `nullable` allows SQL `NULL`.
    Str {
        /// Whether `SET x = NULL` is accepted.
        nullable: bool,
    },
    /// A file-system path (never empty).
    Path,
    /// A character set name from [`CHARSETS`](super::charset::CHARSETS).
    Charset {
        /// Whether `SET x = NULL` is accepted (`character_set_results`).
        nullable: bool,
    },
    /// A collation name from [`COLLATIONS`](super::charset::COLLATIONS).
    Collation,
    /// `SYSTEM`, `UTC` or a UTC offset `+HH:MM`.
    TimeZone,
}

/// The compiled default of a variable, in `const`-friendly form.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DefaultValue {
    /// For [`SysVarKind::Bool`].
    Bool(bool),
    /// For [`SysVarKind::Int`].
    Int(i64),
    /// For [`SysVarKind::UInt`].
    UInt(u64),
    /// For [`SysVarKind::Double`].
    Double(f64),
    /// For [`SysVarKind::Enum`]: the member name as listed.
    Enum(&'static str),
    /// For [`SysVarKind::Set`]: the member bits.
    Set(u64),
    /// For the text kinds (`Str`, `Path`, `Charset`, `Collation`,
    /// `TimeZone`).
    Str(&'static str),
}

/// One system variable: everything the option parser, `SET`, `@@x` and
/// `SHOW VARIABLES` need to know about it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SysVarDef {
    /// Canonical lower-case name with underscores.
    pub name: &'static str,
    /// Type and accepted values.
    pub kind: SysVarKind,
    /// Compiled default (some are replaced at startup; see the crate doc).
    pub default: DefaultValue,
    /// Where the variable has values.
    pub scope: Scope,
    /// Whether `SET` may change it at runtime.
    pub dynamic: bool,
    /// Whether option files and the command line may set it.
    pub startup: bool,
    /// For [`Scope::Both`]: the session copy is read-only (`SET SESSION`
    /// fails with 1621; `max_allowed_packet`, `net_buffer_length`).
    pub session_read_only: bool,
    /// Accepted at startup only with its default value: Basalt implements
    /// nothing else, but a my.cnf spelling the default out must still load.
    pub fixed: bool,
    /// One sentence for `--help` and the documented option file.
    pub description: &'static str,
}

impl SysVarDef {
    /// Whether SQL `NULL` is an acceptable value.
    pub fn nullable(&self) -> bool {
        matches!(
            self.kind,
            SysVarKind::Str { nullable: true } | SysVarKind::Charset { nullable: true }
        )
    }

    /// A human description of the accepted values, used in option errors:
    /// `expected an integer from 5 to 95`.
    pub fn expected(&self) -> String {
        if self.fixed {
            return format!(
                "{} (the only value Basalt supports)",
                super::SysValue::from_default(self)
            );
        }
        match self.kind {
            SysVarKind::Bool => "ON, OFF, TRUE, FALSE, 1 or 0".to_string(),
            SysVarKind::Int {
                min,
                max,
                block_size,
                suffixes,
            } => integer_expectation(&min, &max, block_size, suffixes),
            SysVarKind::UInt {
                min,
                max,
                block_size,
                suffixes,
            } => integer_expectation(&min, &max, block_size, suffixes),
            SysVarKind::Double { min, max } => format!("a number from {min} to {max}"),
            SysVarKind::Enum(names) => format!("one of {}", names.join(", ")),
            SysVarKind::Set(spec) if spec.switches => format!(
                "default, or a comma-separated list of name=on|off|default for {}",
                spec.member_names()
            ),
            SysVarKind::Set(spec) => format!(
                "a comma-separated list of {} (or nothing)",
                spec.member_names()
            ),
            SysVarKind::Str { .. } => "a string".to_string(),
            SysVarKind::Path => "a non-empty path".to_string(),
            SysVarKind::Charset { .. } => {
                let names: Vec<&str> = CHARSETS.iter().map(|c| c.name).collect();
                format!("a character set: {}, utf8", names.join(", "))
            }
            SysVarKind::Collation => {
                let names: Vec<&str> = COLLATIONS.iter().map(|c| c.name).collect();
                format!("a collation: {}", names.join(", "))
            }
            SysVarKind::TimeZone => "SYSTEM, UTC or an offset from -13:59 to +14:00".to_string(),
        }
    }

    /// A short description of the range for `--help` and the option file:
    /// `5 to 95`, `one of: fsync, O_DIRECT`.
    pub fn range_text(&self) -> String {
        if self.fixed {
            return format!("fixed at {}", super::SysValue::from_default(self));
        }
        match self.kind {
            SysVarKind::Bool => "ON or OFF".to_string(),
            SysVarKind::Int {
                min,
                max,
                block_size,
                ..
            } => range_text(&min, &max, block_size),
            SysVarKind::UInt {
                min,
                max,
                block_size,
                ..
            } => range_text(&min, &max, block_size),
            SysVarKind::Double { min, max } => format!("{min} to {max}"),
            SysVarKind::Enum(names) => format!("one of: {}", names.join(", ")),
            SysVarKind::Set(spec) if spec.switches => "comma-separated name=on|off".to_string(),
            SysVarKind::Set(_) => "comma-separated list of modes".to_string(),
            SysVarKind::Str { .. } => "text".to_string(),
            SysVarKind::Path => "path".to_string(),
            SysVarKind::Charset { .. } => "character set name".to_string(),
            SysVarKind::Collation => "collation name".to_string(),
            SysVarKind::TimeZone => "SYSTEM, UTC or +HH:MM".to_string(),
        }
    }
}

fn integer_expectation<T: fmt::Display>(min: &T, max: &T, block: u64, suffixes: bool) -> String {
    let mut text = format!("an integer from {min} to {max}");
    if block > 1 {
        let _ = write!(text, " in multiples of {block}");
    }
    if suffixes {
        text.push_str(" (suffixes K, M, G, T allowed)");
    }
    text
}

fn range_text<T: fmt::Display>(min: &T, max: &T, block: u64) -> String {
    if block > 1 {
        format!("{min} to {max}, multiple of {block}")
    } else {
        format!("{min} to {max}")
    }
}

// ---------------------------------------------------------------------------
// Table-building helpers. They are `const fn` so the registry is a constant
// that typed keys can be checked against at compile time.
// ---------------------------------------------------------------------------

/// Kind plus default, as written in the table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spec {
    kind: SysVarKind,
    default: DefaultValue,
}

/// Flag: `SET` may change the variable at runtime.
pub(crate) const DYN: u8 = 1;
/// Flag: option files and the command line may set the variable.
pub(crate) const OPT: u8 = 2;
/// Flag: the session copy is read-only.
pub(crate) const SRO: u8 = 4;
/// Flag: only the default value is accepted at startup.
pub(crate) const FIXED: u8 = 8;
/// No flags: a read-only value the server reports.
pub(crate) const RO: u8 = 0;

pub(crate) const fn def(
    name: &'static str,
    spec: Spec,
    scope: Scope,
    flags: u8,
    description: &'static str,
) -> SysVarDef {
    SysVarDef {
        name,
        kind: spec.kind,
        default: spec.default,
        scope,
        dynamic: flags & DYN != 0,
        startup: flags & OPT != 0,
        session_read_only: flags & SRO != 0,
        fixed: flags & FIXED != 0,
        description,
    }
}

pub(crate) const fn boolean(default: bool) -> Spec {
    Spec {
        kind: SysVarKind::Bool,
        default: DefaultValue::Bool(default),
    }
}

/// An unsigned count or duration: no unit suffixes.
pub(crate) const fn uint(default: u64, min: u64, max: u64) -> Spec {
    Spec {
        kind: SysVarKind::UInt {
            min,
            max,
            block_size: 1,
            suffixes: false,
        },
        default: DefaultValue::UInt(default),
    }
}

/// A size in bytes: unit suffixes allowed, rounded down to `block`.
pub(crate) const fn size(default: u64, min: u64, max: u64, block: u64) -> Spec {
    Spec {
        kind: SysVarKind::UInt {
            min,
            max,
            block_size: block,
            suffixes: true,
        },
        default: DefaultValue::UInt(default),
    }
}

pub(crate) const fn double(default: f64, min: f64, max: f64) -> Spec {
    Spec {
        kind: SysVarKind::Double { min, max },
        default: DefaultValue::Double(default),
    }
}

pub(crate) const fn enumeration(names: &'static [&'static str], default: &'static str) -> Spec {
    Spec {
        kind: SysVarKind::Enum(names),
        default: DefaultValue::Enum(default),
    }
}

pub(crate) const fn set(spec: &'static SetSpec, default: u64) -> Spec {
    Spec {
        kind: SysVarKind::Set(spec),
        default: DefaultValue::Set(default),
    }
}

pub(crate) const fn string(default: &'static str) -> Spec {
    Spec {
        kind: SysVarKind::Str { nullable: false },
        default: DefaultValue::Str(default),
    }
}

pub(crate) const fn path(default: &'static str) -> Spec {
    Spec {
        kind: SysVarKind::Path,
        default: DefaultValue::Str(default),
    }
}

pub(crate) const fn charset(default: &'static str) -> Spec {
    Spec {
        kind: SysVarKind::Charset { nullable: false },
        default: DefaultValue::Str(default),
    }
}

pub(crate) const fn charset_or_null(default: &'static str) -> Spec {
    Spec {
        kind: SysVarKind::Charset { nullable: true },
        default: DefaultValue::Str(default),
    }
}

pub(crate) const fn collation(default: &'static str) -> Spec {
    Spec {
        kind: SysVarKind::Collation,
        default: DefaultValue::Str(default),
    }
}

pub(crate) const fn time_zone(default: &'static str) -> Spec {
    Spec {
        kind: SysVarKind::TimeZone,
        default: DefaultValue::Str(default),
    }
}
