//! Finding a variable by name.

use std::cmp::Ordering;

use super::def::SysVarDef;
use super::table::{str_eq, SysVarAlias, ALIASES, TABLE};

/// Every system variable, sorted by name.
pub fn registry() -> &'static [SysVarDef] {
    TABLE
}

/// Every alias, sorted by alias.
pub fn aliases() -> &'static [SysVarAlias] {
    ALIASES
}

/// Position of a variable in [`registry`].
pub(crate) type VarIndex = usize;

/// How a name is being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameSyntax {
    /// SQL (`SET x`, `@@x`): case-insensitive; SQL aliases only.
    Sql,
    /// Option files and the command line: case-insensitive, `-` equals `_`,
    /// every alias.
    Option,
}

/// Compares a canonical table name with a name as written.
// PERF: runs on every `SET`/`@@x` name resolution; no allocation.
fn compare(canonical: &str, written: &str, syntax: NameSyntax) -> Ordering {
    let normalize = |b: u8| {
        let b = b.to_ascii_lowercase();
        if syntax == NameSyntax::Option && b == b'-' {
            b'_'
        } else {
            b
        }
    };
    let mut w = written.bytes().map(normalize);
    for c in canonical.bytes() {
        match w.next() {
            None => return Ordering::Greater,
            Some(x) if x == c => {}
            Some(x) => return c.cmp(&x),
        }
    }
    if w.next().is_some() {
        Ordering::Less
    } else {
        Ordering::Equal
    }
}

/// Resolves a variable name (or alias) to its registry position.
pub(crate) fn find(name: &str, syntax: NameSyntax) -> Option<VarIndex> {
    if let Ok(i) = TABLE.binary_search_by(|d| compare(d.name, name, syntax)) {
        return Some(i);
    }
    let alias = ALIASES
        .binary_search_by(|a| compare(a.alias, name, syntax))
        .ok()
        .map(|i| &ALIASES[i])?;
    if syntax == NameSyntax::Sql && !alias.sql {
        return None;
    }
    TABLE.binary_search_by(|d| d.name.cmp(alias.target)).ok()
}

/// Looks a variable up by its SQL name (case-insensitive; `tx_isolation`
/// resolves to `transaction_isolation`).
pub fn lookup(name: &str) -> Option<&'static SysVarDef> {
    find(name, NameSyntax::Sql).map(|i| &TABLE[i])
}

/// Position of `name` in the table, evaluated at compile time by the typed
/// keys; an unknown name fails the build.
pub(crate) const fn const_index(name: &str) -> usize {
    let mut i = 0;
    while i < TABLE.len() {
        if str_eq(TABLE[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("no system variable of that name")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_is_case_insensitive_and_resolves_sql_aliases() {
        assert_eq!(lookup("AutoCommit").map(|d| d.name), Some("autocommit"));
        assert_eq!(
            lookup("TX_ISOLATION").map(|d| d.name),
            Some("transaction_isolation")
        );
        assert_eq!(
            lookup("tx_read_only").map(|d| d.name),
            Some("transaction_read_only")
        );
        // Option-only alias and dashed spelling are not SQL names.
        assert!(lookup("default_time_zone").is_none());
        assert!(lookup("innodb-old-blocks-pct").is_none());
        assert!(lookup("autocommitx").is_none());
        assert!(lookup("autocommi").is_none());
        assert!(lookup("").is_none());
    }

    #[test]
    fn option_syntax_accepts_dashes_and_every_alias() {
        let idx = find("Innodb-Old-Blocks_Pct", NameSyntax::Option).unwrap();
        assert_eq!(TABLE[idx].name, "innodb_old_blocks_pct");
        let idx = find("default-time-zone", NameSyntax::Option).unwrap();
        assert_eq!(TABLE[idx].name, "time_zone");
    }

    #[test]
    fn every_registry_entry_finds_itself() {
        for (i, d) in TABLE.iter().enumerate() {
            assert_eq!(find(d.name, NameSyntax::Sql), Some(i), "{}", d.name);
            assert_eq!(
                find(
                    &d.name.to_ascii_uppercase().replace('_', "-"),
                    NameSyntax::Option
                ),
                Some(i),
                "{}",
                d.name
            );
            assert_eq!(const_index(d.name), i);
        }
    }
}
