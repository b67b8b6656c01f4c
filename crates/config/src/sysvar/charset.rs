//! The character set and collation names Basalt accepts.
//!
//! This table is the vocabulary of the `character_set_*` and `collation_*`
//! variables and of the collation id a client sends in its handshake. It says
//! which names exist and how they pair up; comparison and conversion rules
//! live in the SQL layer.

/// A character set name and its default collation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Charset {
    /// Canonical name as `SHOW VARIABLES` prints it.
    pub name: &'static str,
    /// Collation used when only the character set is named.
    pub default_collation: &'static str,
    /// Longest encoded character, in bytes.
    pub max_len: u8,
}

/// A collation: its name, character set and MySQL collation id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Collation {
    /// Canonical name.
    pub name: &'static str,
    /// The character set it orders.
    pub charset: &'static str,
    /// MySQL's numeric id (handshake packets, column definitions).
    pub id: u16,
}

/// Accepted character sets. `utf8` is accepted as an alias of `utf8mb3`, as
/// in MySQL 8.0.
pub const CHARSETS: &[Charset] = &[
    Charset {
        name: "ascii",
        default_collation: "ascii_general_ci",
        max_len: 1,
    },
    Charset {
        name: "binary",
        default_collation: "binary",
        max_len: 1,
    },
    Charset {
        name: "latin1",
        default_collation: "latin1_swedish_ci",
        max_len: 1,
    },
    Charset {
        name: "utf8mb3",
        default_collation: "utf8mb3_general_ci",
        max_len: 3,
    },
    Charset {
        name: "utf8mb4",
        default_collation: "utf8mb4_0900_ai_ci",
        max_len: 4,
    },
];

/// Accepted collations. `utf8_*` names are accepted as aliases of the
/// `utf8mb3_*` ones.
pub const COLLATIONS: &[Collation] = &[
    Collation {
        name: "ascii_bin",
        charset: "ascii",
        id: 65,
    },
    Collation {
        name: "ascii_general_ci",
        charset: "ascii",
        id: 11,
    },
    Collation {
        name: "binary",
        charset: "binary",
        id: 63,
    },
    Collation {
        name: "latin1_bin",
        charset: "latin1",
        id: 47,
    },
    Collation {
        name: "latin1_general_ci",
        charset: "latin1",
        id: 48,
    },
    Collation {
        name: "latin1_swedish_ci",
        charset: "latin1",
        id: 8,
    },
    Collation {
        name: "utf8mb3_bin",
        charset: "utf8mb3",
        id: 83,
    },
    Collation {
        name: "utf8mb3_general_ci",
        charset: "utf8mb3",
        id: 33,
    },
    Collation {
        name: "utf8mb3_unicode_ci",
        charset: "utf8mb3",
        id: 192,
    },
    Collation {
        name: "utf8mb4_0900_ai_ci",
        charset: "utf8mb4",
        id: 255,
    },
    Collation {
        name: "utf8mb4_bin",
        charset: "utf8mb4",
        id: 46,
    },
    Collation {
        name: "utf8mb4_general_ci",
        charset: "utf8mb4",
        id: 45,
    },
    Collation {
        name: "utf8mb4_unicode_ci",
        charset: "utf8mb4",
        id: 224,
    },
];

/// Finds a character set by name (case-insensitive; `utf8` means `utf8mb3`).
pub fn find_charset(name: &str) -> Option<&'static Charset> {
    let name = if name.eq_ignore_ascii_case("utf8") {
        "utf8mb3"
    } else {
        name
    };
    CHARSETS.iter().find(|c| c.name.eq_ignore_ascii_case(name))
}

/// Finds a collation by name (case-insensitive; `utf8_x` means `utf8mb3_x`).
pub fn find_collation(name: &str) -> Option<&'static Collation> {
    let lower = name.to_ascii_lowercase();
    let name = match lower.strip_prefix("utf8_") {
        Some(rest) => format!("utf8mb3_{rest}"),
        None => lower,
    };
    COLLATIONS.iter().find(|c| c.name == name)
}

/// Finds a collation by its MySQL id.
pub fn collation_by_id(id: u64) -> Option<&'static Collation> {
    COLLATIONS.iter().find(|c| u64::from(c.id) == id)
}

/// The default collation of a character set.
pub fn default_collation_of(charset: &str) -> Option<&'static Collation> {
    find_charset(charset).and_then(|c| find_collation(c.default_collation))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_charset_default_collation_exists_and_belongs_to_it() {
        for cs in CHARSETS {
            let coll = find_collation(cs.default_collation)
                .unwrap_or_else(|| panic!("{} has no collation {}", cs.name, cs.default_collation));
            assert_eq!(coll.charset, cs.name);
        }
    }

    #[test]
    fn every_collation_names_a_known_charset_and_ids_are_unique() {
        let mut ids = std::collections::BTreeSet::new();
        for coll in COLLATIONS {
            assert!(find_charset(coll.charset).is_some(), "{}", coll.name);
            assert!(ids.insert(coll.id), "duplicate id {}", coll.id);
            assert!(
                coll.name.starts_with(coll.charset),
                "{} does not start with {}",
                coll.name,
                coll.charset
            );
        }
    }

    #[test]
    fn aliases_map_to_utf8mb3() {
        assert_eq!(find_charset("UTF8").map(|c| c.name), Some("utf8mb3"));
        assert_eq!(
            find_collation("utf8_general_ci").map(|c| c.name),
            Some("utf8mb3_general_ci")
        );
        assert_eq!(
            collation_by_id(255).map(|c| c.name),
            Some("utf8mb4_0900_ai_ci")
        );
        assert!(find_charset("ucs2").is_none());
        assert!(find_collation("utf8mb4_klingon_ci").is_none());
    }
}
