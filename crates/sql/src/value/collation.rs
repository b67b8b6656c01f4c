//! Collations: how strings compare.
//!
//! Every collation the system-variable registry accepts
//! (`basalt_config::sysvar::charset::COLLATIONS`) is one of four shapes:
//!
//! | shape            | examples                           | case | accents | trailing spaces |
//! |------------------|------------------------------------|------|---------|-----------------|
//! | `binary`         | `binary`                           | yes  | yes     | significant     |
//! | `*_bin`          | `utf8mb4_bin`, `latin1_bin`        | yes  | yes     | ignored (PAD)   |
//! | `*_general_ci`   | `utf8mb4_general_ci`, `latin1_swedish_ci` | no | yes | ignored (PAD)   |
//! | `*_0900_ai_ci`, `*_unicode_ci` | `utf8mb4_0900_ai_ci` | no | no    | 0900: significant (NO PAD); unicode_ci: ignored |
//!
//! Character strings are held as UTF-8 whatever their character set.
//! Case folding uses Unicode simple lowercase mapping; accent folding
//! strips the diacritics of the Latin-1 Supplement and Latin Extended-A
//! letters (the letters MySQL's UCA weights fold for these collations
//! that clients meet in practice); other scripts compare by code point
//! after case folding. Full UCA weight tables are not implemented.

use std::cmp::Ordering;

use basalt_config::sysvar::charset::{collation_by_id, find_collation};

/// `binary`.
pub const BINARY_ID: u16 = 63;
/// `utf8mb4_0900_ai_ci`.
pub const UTF8MB4_DEFAULT_ID: u16 = 255;

/// A collation as the evaluator uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Collation {
    /// MySQL collation id (column definitions).
    pub id: u16,
    /// Name (`utf8mb4_0900_ai_ci`).
    pub name: &'static str,
    /// Character set name.
    pub charset: &'static str,
}

impl Collation {
    /// `binary`.
    pub const BINARY: Collation = Collation {
        id: BINARY_ID,
        name: "binary",
        charset: "binary",
    };

    /// `utf8mb4_0900_ai_ci`, the server default.
    pub const DEFAULT: Collation = Collation {
        id: UTF8MB4_DEFAULT_ID,
        name: "utf8mb4_0900_ai_ci",
        charset: "utf8mb4",
    };

    /// Looks a collation up by name.
    pub fn by_name(name: &str) -> Option<Collation> {
        find_collation(name).map(|c| Collation {
            id: c.id,
            name: c.name,
            charset: c.charset,
        })
    }

    /// Looks a collation up by id.
    pub fn by_id(id: u16) -> Option<Collation> {
        collation_by_id(u64::from(id)).map(|c| Collation {
            id: c.id,
            name: c.name,
            charset: c.charset,
        })
    }

    /// True for the `binary` pseudo character set (byte strings).
    pub fn is_binary(&self) -> bool {
        self.id == BINARY_ID
    }

    fn case_insensitive(&self) -> bool {
        self.name.ends_with("_ci")
    }

    fn accent_insensitive(&self) -> bool {
        self.name.ends_with("_ai_ci") || self.name.ends_with("_unicode_ci")
    }

    fn pads(&self) -> bool {
        !self.is_binary() && !self.name.contains("_0900_")
    }

    /// Longest character in bytes (`mbmaxlen`).
    pub fn max_char_len(&self) -> u32 {
        match self.charset {
            "utf8mb4" => 4,
            "utf8mb3" => 3,
            _ => 1,
        }
    }

    /// Compares two strings of this collation.
    // PERF: called for every comparison; folds without allocating when
    // the strings are ASCII.
    pub fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        let (a, b) = if self.pads() {
            (trim_spaces(a), trim_spaces(b))
        } else {
            (a, b)
        };
        if self.is_binary() || !self.case_insensitive() {
            return match (std::str::from_utf8(a), std::str::from_utf8(b)) {
                (Ok(x), Ok(y)) if !self.is_binary() => x.cmp(y),
                _ => a.cmp(b),
            };
        }
        let ai = self.accent_insensitive();
        let sa = String::from_utf8_lossy(a);
        let sb = String::from_utf8_lossy(b);
        let mut ia = sa.chars().map(|c| fold(c, ai));
        let mut ib = sb.chars().map(|c| fold(c, ai));
        loop {
            match (ia.next(), ib.next()) {
                (None, None) => return Ordering::Equal,
                (None, Some(_)) => return Ordering::Less,
                (Some(_), None) => return Ordering::Greater,
                (Some(x), Some(y)) => match x.cmp(&y) {
                    Ordering::Equal => continue,
                    o => return o,
                },
            }
        }
    }

    /// Whether two characters are equal under this collation (for `LIKE`).
    pub fn chars_equal(&self, a: char, b: char) -> bool {
        if a == b {
            return true;
        }
        if self.is_binary() || !self.case_insensitive() {
            return false;
        }
        let ai = self.accent_insensitive();
        fold(a, ai) == fold(b, ai)
    }
}

fn trim_spaces(s: &[u8]) -> &[u8] {
    let mut end = s.len();
    while end > 0 && s[end - 1] == b' ' {
        end -= 1;
    }
    &s[..end]
}

/// Case (and optionally accent) folding of one character.
pub fn fold(c: char, accents: bool) -> char {
    let base = if accents { strip_accent(c) } else { c };
    if base.is_ascii() {
        return base.to_ascii_lowercase();
    }
    base.to_lowercase().next().unwrap_or(base)
}

/// The base letter of a Latin letter with a diacritic.
pub fn strip_accent(c: char) -> char {
    match c {
        'À'..='Å' => 'A',
        'à'..='å' => 'a',
        'Ç' => 'C',
        'ç' => 'c',
        'È'..='Ë' => 'E',
        'è'..='ë' => 'e',
        'Ì'..='Ï' => 'I',
        'ì'..='ï' => 'i',
        'Ñ' => 'N',
        'ñ' => 'n',
        'Ò'..='Ö' | 'Ø' => 'O',
        'ò'..='ö' | 'ø' => 'o',
        'Ù'..='Ü' => 'U',
        'ù'..='ü' => 'u',
        'Ý' => 'Y',
        'ý' | 'ÿ' => 'y',
        '\u{100}' | '\u{102}' | '\u{104}' => 'A',
        '\u{101}' | '\u{103}' | '\u{105}' => 'a',
        '\u{106}' | '\u{108}' | '\u{10A}' | '\u{10C}' => 'C',
        '\u{107}' | '\u{109}' | '\u{10B}' | '\u{10D}' => 'c',
        '\u{10E}' | '\u{110}' => 'D',
        '\u{10F}' | '\u{111}' => 'd',
        '\u{112}' | '\u{114}' | '\u{116}' | '\u{118}' | '\u{11A}' => 'E',
        '\u{113}' | '\u{115}' | '\u{117}' | '\u{119}' | '\u{11B}' => 'e',
        '\u{11C}' | '\u{11E}' | '\u{120}' | '\u{122}' => 'G',
        '\u{11D}' | '\u{11F}' | '\u{121}' | '\u{123}' => 'g',
        '\u{124}' | '\u{126}' => 'H',
        '\u{125}' | '\u{127}' => 'h',
        '\u{128}' | '\u{12A}' | '\u{12C}' | '\u{12E}' | '\u{130}' => 'I',
        '\u{129}' | '\u{12B}' | '\u{12D}' | '\u{12F}' | '\u{131}' => 'i',
        '\u{134}' => 'J',
        '\u{135}' => 'j',
        '\u{136}' => 'K',
        '\u{137}' => 'k',
        '\u{139}' | '\u{13B}' | '\u{13D}' | '\u{13F}' | '\u{141}' => 'L',
        '\u{13A}' | '\u{13C}' | '\u{13E}' | '\u{140}' | '\u{142}' => 'l',
        '\u{143}' | '\u{145}' | '\u{147}' => 'N',
        '\u{144}' | '\u{146}' | '\u{148}' => 'n',
        '\u{14C}' | '\u{14E}' | '\u{150}' => 'O',
        '\u{14D}' | '\u{14F}' | '\u{151}' => 'o',
        '\u{154}' | '\u{156}' | '\u{158}' => 'R',
        '\u{155}' | '\u{157}' | '\u{159}' => 'r',
        '\u{15A}' | '\u{15C}' | '\u{15E}' | '\u{160}' => 'S',
        '\u{15B}' | '\u{15D}' | '\u{15F}' | '\u{161}' => 's',
        '\u{162}' | '\u{164}' | '\u{166}' => 'T',
        '\u{163}' | '\u{165}' | '\u{167}' => 't',
        '\u{168}' | '\u{16A}' | '\u{16C}' | '\u{16E}' | '\u{170}' | '\u{172}' => 'U',
        '\u{169}' | '\u{16B}' | '\u{16D}' | '\u{16F}' | '\u{171}' | '\u{173}' => 'u',
        '\u{174}' => 'W',
        '\u{175}' => 'w',
        '\u{176}' | '\u{178}' => 'Y',
        '\u{177}' => 'y',
        '\u{179}' | '\u{17B}' | '\u{17D}' => 'Z',
        '\u{17A}' | '\u{17C}' | '\u{17E}' => 'z',
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(name: &str) -> Collation {
        Collation::by_name(name).unwrap()
    }

    #[test]
    fn shapes_compare_as_mysql() {
        let ai = c("utf8mb4_0900_ai_ci");
        assert_eq!(ai.compare(b"abc", b"ABC"), Ordering::Equal);
        assert_eq!(ai.compare("café".as_bytes(), b"CAFE"), Ordering::Equal);
        assert_eq!(ai.compare(b"a ", b"a"), Ordering::Greater, "NO PAD");
        assert_eq!(ai.compare(b"a", b"b"), Ordering::Less);
        let gen = c("utf8mb4_general_ci");
        assert_eq!(gen.compare(b"abc", b"ABC"), Ordering::Equal);
        assert_ne!(gen.compare("café".as_bytes(), b"cafe"), Ordering::Equal);
        assert_eq!(gen.compare(b"a ", b"a"), Ordering::Equal, "PAD SPACE");
        let bin = c("utf8mb4_bin");
        assert_eq!(bin.compare(b"a", b"A"), Ordering::Greater);
        assert_eq!(Collation::BINARY.compare(b"a ", b"a"), Ordering::Greater);
        assert!(ai.chars_equal('É', 'e'));
        assert!(!bin.chars_equal('a', 'A'));
    }

    #[test]
    fn every_registry_collation_resolves() {
        for coll in basalt_config::sysvar::charset::COLLATIONS {
            let by_name = Collation::by_name(coll.name).unwrap();
            assert_eq!(Collation::by_id(coll.id), Some(by_name));
        }
    }
}
