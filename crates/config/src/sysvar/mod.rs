//! The system variable registry: one static, sorted table of
//! [`SysVarDef`]s that every other part of the crate reads.
//!
//! ```text
//!            TABLE (table.rs, const, validated at compile time)
//!              |            |                 |                |
//!   option parsing     SET / @@x        SHOW VARIABLES     typed keys
//!   (parse_option)  (convert_assignment)  (Display)       (keys.rs)
//! ```
//!
//! * `def.rs`: what a variable is ([`SysVarDef`], [`SysVarKind`], [`Scope`]).
//! * `table.rs`: the entries, the aliases, and cross-variable rules.
//! * `value.rs`: [`SysValue`] (a current value, displayed as `SHOW
//!   VARIABLES` prints it) and [`Assignment`] (what `SET` assigns).
//! * `convert.rs`: text and assignments to values, with MySQL's clamping.
//! * `keys.rs`: compile-time-checked typed handles ([`keys`]).
//! * `charset.rs`, `sql_mode.rs`: the vocabularies of the charset,
//!   collation and `sql_mode` variables.
//!
//! Names are canonical lower-case with underscores. SQL lookups are
//! case-insensitive and accept the SQL aliases (`tx_isolation`); option
//! lookups also treat `-` as `_` and accept option-only aliases
//! (`default-time-zone`).

pub mod charset;
mod convert;
mod def;
pub mod keys;
mod lookup;
mod sql_mode;
mod table;
mod value;

pub(crate) use convert::Converted;
pub use def::{DefaultValue, Scope, SetSpec, SysVarDef, SysVarKind};
pub use lookup::{aliases, lookup, registry};
pub(crate) use lookup::{find, NameSyntax, VarIndex};
pub use sql_mode::SqlMode;
pub use table::{SysVarAlias, VERSION, VERSION_COMMENT};
pub(crate) use table::{CHARSET_COLLATION_PAIRS, ORDERED_PAIRS};
pub use value::{Assignment, SetValue, SysValue, VarType};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_kinds_and_pass_their_own_validation() {
        for def in registry() {
            let value = SysValue::from_default(def);
            assert!(value.fits(&def.kind, def.nullable()), "{}", def.name);
            // A default written into an option file must load unchanged.
            if def.startup {
                let text = value.to_string();
                let parsed = def
                    .parse_option(&text)
                    .unwrap_or_else(|()| panic!("{}: default '{text}' rejected", def.name));
                assert_eq!(parsed.value, value, "{}", def.name);
                assert!(!parsed.adjusted, "{}", def.name);
            }
        }
    }

    #[test]
    fn charset_and_collation_defaults_are_known_names() {
        for def in registry() {
            let value = SysValue::from_default(def);
            match def.kind {
                SysVarKind::Charset { .. } => {
                    assert!(
                        charset::find_charset(value.as_str().unwrap()).is_some(),
                        "{}",
                        def.name
                    )
                }
                SysVarKind::Collation => {
                    assert!(
                        charset::find_collation(value.as_str().unwrap()).is_some(),
                        "{}",
                        def.name
                    )
                }
                _ => {}
            }
        }
    }

    #[test]
    fn cross_variable_rules_pair_matching_kinds() {
        let table = registry();
        for &(lower, upper) in ORDERED_PAIRS {
            assert_eq!(
                std::mem::discriminant(&table[lower].kind),
                std::mem::discriminant(&table[upper].kind)
            );
            let (l, u) = (
                SysValue::from_default(&table[lower]).as_f64().unwrap(),
                SysValue::from_default(&table[upper]).as_f64().unwrap(),
            );
            assert!(
                l <= u,
                "{} default above {}",
                table[lower].name,
                table[upper].name
            );
        }
        for &(cs, coll) in CHARSET_COLLATION_PAIRS {
            assert!(matches!(table[cs].kind, SysVarKind::Charset { .. }));
            assert!(matches!(table[coll].kind, SysVarKind::Collation));
            assert_eq!(table[cs].scope, table[coll].scope);
            let cs_default = SysValue::from_default(&table[cs]);
            let coll_default = SysValue::from_default(&table[coll]);
            assert_eq!(
                charset::default_collation_of(cs_default.as_str().unwrap()).map(|c| c.name),
                coll_default.as_str(),
                "{} and {} defaults disagree",
                table[cs].name,
                table[coll].name
            );
        }
    }

    #[test]
    fn version_constants_are_what_the_registry_reports() {
        assert!(VERSION.starts_with("8.0."));
        assert!(VERSION.ends_with("-basalt"));
        let version = registry().iter().find(|d| d.name == "version").unwrap();
        assert_eq!(SysValue::from_default(version).to_string(), VERSION);
    }
}
