//! Privileges: names, bits, and the levels each may be granted at.
//!
//! The static privileges in MySQL's order (the order `SHOW GRANTS` prints
//! them in), then `GRANT OPTION`, then the dynamic privileges Basalt
//! checks (`SYSTEM_VARIABLES_ADMIN`, `CONNECTION_ADMIN`). A privilege set
//! is a 64-bit mask.

use std::fmt;

/// A set of privileges.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Privileges(pub u64);

/// Where a privilege may be granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantScope {
    /// `*.*`.
    Global,
    /// `db.*`.
    Database,
    /// `db.tbl`.
    Table,
}

struct PrivDef {
    name: &'static str,
    db: bool,
    table: bool,
    dynamic: bool,
}

const fn p(name: &'static str, db: bool, table: bool) -> PrivDef {
    PrivDef {
        name,
        db,
        table,
        dynamic: false,
    }
}

const fn dynamic(name: &'static str) -> PrivDef {
    PrivDef {
        name,
        db: false,
        table: false,
        dynamic: true,
    }
}

/// Bit `i` of a [`Privileges`] is `DEFS[i]`.
const DEFS: &[PrivDef] = &[
    p("SELECT", true, true),
    p("INSERT", true, true),
    p("UPDATE", true, true),
    p("DELETE", true, true),
    p("CREATE", true, true),
    p("DROP", true, true),
    p("RELOAD", false, false),
    p("SHUTDOWN", false, false),
    p("PROCESS", false, false),
    p("FILE", false, false),
    p("REFERENCES", true, true),
    p("INDEX", true, true),
    p("ALTER", true, true),
    p("SHOW DATABASES", false, false),
    p("SUPER", false, false),
    p("CREATE TEMPORARY TABLES", true, false),
    p("LOCK TABLES", true, false),
    p("EXECUTE", true, false),
    p("REPLICATION SLAVE", false, false),
    p("REPLICATION CLIENT", false, false),
    p("CREATE VIEW", true, true),
    p("SHOW VIEW", true, true),
    p("CREATE ROUTINE", true, false),
    p("ALTER ROUTINE", true, false),
    p("CREATE USER", false, false),
    p("EVENT", true, false),
    p("TRIGGER", true, true),
    p("CREATE TABLESPACE", false, false),
    p("CREATE ROLE", false, false),
    p("DROP ROLE", false, false),
    p("GRANT OPTION", true, true),
    dynamic("SYSTEM_VARIABLES_ADMIN"),
    dynamic("CONNECTION_ADMIN"),
];

const fn bit(name: &str) -> Privileges {
    let mut i = 0;
    while i < DEFS.len() {
        if crate::acl::privilege::str_eq(DEFS[i].name, name) {
            return Privileges(1 << i);
        }
        i += 1;
    }
    panic!("unknown privilege name");
}

pub(crate) const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[allow(missing_docs)]
impl Privileges {
    pub const NONE: Privileges = Privileges(0);
    pub const SELECT: Privileges = bit("SELECT");
    pub const INSERT: Privileges = bit("INSERT");
    pub const UPDATE: Privileges = bit("UPDATE");
    pub const DELETE: Privileges = bit("DELETE");
    pub const CREATE: Privileges = bit("CREATE");
    pub const DROP: Privileges = bit("DROP");
    pub const RELOAD: Privileges = bit("RELOAD");
    pub const SHUTDOWN: Privileges = bit("SHUTDOWN");
    pub const PROCESS: Privileges = bit("PROCESS");
    pub const FILE: Privileges = bit("FILE");
    pub const SHOW_DATABASES: Privileges = bit("SHOW DATABASES");
    pub const SUPER: Privileges = bit("SUPER");
    pub const CREATE_USER: Privileges = bit("CREATE USER");
    pub const GRANT_OPTION: Privileges = bit("GRANT OPTION");
    pub const SYSTEM_VARIABLES_ADMIN: Privileges = bit("SYSTEM_VARIABLES_ADMIN");
    pub const CONNECTION_ADMIN: Privileges = bit("CONNECTION_ADMIN");

    /// Every privilege that exists.
    pub fn all() -> Privileges {
        Privileges((1u64 << DEFS.len()) - 1)
    }

    /// Every privilege grantable at `scope` (with `GRANT OPTION`).
    pub fn grantable_at(scope: GrantScope) -> Privileges {
        let mut v = 0u64;
        for (i, d) in DEFS.iter().enumerate() {
            let ok = match scope {
                GrantScope::Global => true,
                GrantScope::Database => d.db,
                GrantScope::Table => d.table,
            };
            if ok {
                v |= 1 << i;
            }
        }
        Privileges(v)
    }

    /// What `ALL [PRIVILEGES]` means at `scope`: everything grantable
    /// there except `GRANT OPTION`.
    pub fn all_at(scope: GrantScope) -> Privileges {
        Privileges::grantable_at(scope).without(Privileges::GRANT_OPTION)
    }

    /// The privilege called `name` (upper case, single spaces), or `None`.
    pub fn from_name(name: &str) -> Option<Privileges> {
        let upper = name.to_ascii_uppercase();
        let canonical = match upper.as_str() {
            "USAGE" => return Some(Privileges::NONE),
            "CREATE TEMPORARY TABLE" => "CREATE TEMPORARY TABLES",
            other => other,
        };
        DEFS.iter()
            .position(|d| d.name == canonical)
            .map(|i| Privileges(1 << i))
    }

    /// True when every privilege of `other` is in `self`.
    pub fn contains(self, other: Privileges) -> bool {
        self.0 & other.0 == other.0
    }

    /// True when the sets share a privilege.
    pub fn intersects(self, other: Privileges) -> bool {
        self.0 & other.0 != 0
    }

    /// True for the empty set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// `self` minus `other`.
    pub fn without(self, other: Privileges) -> Privileges {
        Privileges(self.0 & !other.0)
    }

    /// The names in the set, static privileges first in MySQL's order,
    /// without `GRANT OPTION` (printed as `WITH GRANT OPTION`).
    pub fn names(self) -> Vec<&'static str> {
        self.iter_defs()
            .filter(|d| !d.dynamic && d.name != "GRANT OPTION")
            .map(|d| d.name)
            .collect()
    }

    /// The dynamic privilege names in the set.
    pub fn dynamic_names(self) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = self
            .iter_defs()
            .filter(|d| d.dynamic)
            .map(|d| d.name)
            .collect();
        v.sort_unstable();
        v
    }

    fn iter_defs(self) -> impl Iterator<Item = &'static PrivDef> {
        DEFS.iter()
            .enumerate()
            .filter(move |(i, _)| self.0 & (1 << i) != 0)
            .map(|(_, d)| d)
    }

    /// The name of a single-privilege set (for error messages).
    pub fn name(self) -> &'static str {
        self.iter_defs().next().map_or("USAGE", |d| d.name)
    }
}

impl std::ops::BitOr for Privileges {
    type Output = Privileges;
    fn bitor(self, rhs: Privileges) -> Privileges {
        Privileges(self.0 | rhs.0)
    }
}

impl std::ops::BitOrAssign for Privileges {
    fn bitor_assign(&mut self, rhs: Privileges) {
        self.0 |= rhs.0;
    }
}

impl std::ops::BitAnd for Privileges {
    type Output = Privileges;
    fn bitand(self, rhs: Privileges) -> Privileges {
        Privileges(self.0 & rhs.0)
    }
}

impl fmt::Debug for Privileges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter_defs().map(|d| d.name).collect();
        write!(f, "Privileges({})", names.join(", "))
    }
}

/// The rows of `SHOW PRIVILEGES`: (name, context, comment).
pub fn privilege_rows() -> Vec<(&'static str, &'static str, &'static str)> {
    DEFS.iter()
        .map(|d| {
            let context = if d.table {
                "Databases,Tables"
            } else if d.db {
                "Databases"
            } else {
                "Server Admin"
            };
            (d.name, context, "")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_levels() {
        for d in DEFS {
            let p = Privileges::from_name(d.name).unwrap();
            assert_eq!(p.name(), d.name);
        }
        assert_eq!(Privileges::from_name("usage"), Some(Privileges::NONE));
        assert_eq!(Privileges::from_name("BOGUS"), None);
        assert!(Privileges::all_at(GrantScope::Global).contains(Privileges::SUPER));
        assert!(!Privileges::all_at(GrantScope::Database).contains(Privileges::SUPER));
        assert!(!Privileges::all_at(GrantScope::Global).contains(Privileges::GRANT_OPTION));
        assert!(Privileges::grantable_at(GrantScope::Table).contains(Privileges::SELECT));
        assert!(!Privileges::grantable_at(GrantScope::Table)
            .contains(Privileges::from_name("EXECUTE").unwrap()));
        let s = Privileges::SELECT | Privileges::INSERT | Privileges::GRANT_OPTION;
        assert_eq!(s.names(), vec!["SELECT", "INSERT"]);
        assert_eq!(
            (Privileges::SUPER | Privileges::CONNECTION_ADMIN).dynamic_names(),
            vec!["CONNECTION_ADMIN"]
        );
        assert_eq!(
            (Privileges::SYSTEM_VARIABLES_ADMIN | Privileges::CONNECTION_ADMIN).dynamic_names(),
            vec!["CONNECTION_ADMIN", "SYSTEM_VARIABLES_ADMIN"]
        );
    }
}
