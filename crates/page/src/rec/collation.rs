//! Collation-aware comparison of key field values.
//!
//! The B+tree compares key fields with [`Collation::compare`]. Upper layers
//! that turn values into memcomparable byte strings use
//! [`Collation::Binary`]; text columns whose bytes are stored as they come
//! (utf8mb4) use one of the MySQL collations implemented here:
//!
//! | id | MySQL name           | variant                    | pad       |
//! |----|----------------------|----------------------------|-----------|
//! | 63 | `binary`             | [`Collation::Binary`]      | no pad    |
//! | 46 | `utf8mb4_bin`        | [`Collation::Utf8Bin`]     | PAD SPACE |
//! | 83 | `utf8mb3_bin`        | [`Collation::Utf8Bin`]     | PAD SPACE |
//! | 45 | `utf8mb4_general_ci` | [`Collation::Utf8GeneralCi`] | PAD SPACE |
//! | 33 | `utf8mb3_general_ci` | [`Collation::Utf8GeneralCi`] | PAD SPACE |
//!
//! PAD SPACE: the shorter string compares as if padded with spaces, so
//! `'a'` equals `'a  '` (as in MySQL 8.0 for these collations).
//!
//! `utf8mb4_bin` orders by code point, which for UTF-8 is byte order.
//!
//! `utf8mb4_general_ci` maps every character to one weight and compares
//! the weight sequences: supplementary characters (above U+FFFF) all weigh
//! U+FFFD; ASCII, Latin-1 and Latin Extended-A letters weigh their
//! unaccented upper-case base letter (`é` = `E`, `ß` = `S`), except the
//! letters MySQL keeps apart (`Æ`, `Ð`, `Ø`, `Þ`, `Đ`, `Ħ`, `Ł`, `Œ`, ...,
//! which weigh their own upper-case form); every other character weighs its simple
//! Unicode upper-case mapping when that is one BMP character, else itself.
//! Beyond U+017F this is case folding only: MySQL additionally folds some
//! accented Greek and Cyrillic letters (`Ά` = `Α`, `Ё` = `Е`), which this
//! implementation orders apart.
//!
//! Bytes that are not valid UTF-8 weigh `0x110000 + byte`, above every
//! character, so comparison stays total and deterministic on bad input.
//!
//! Any other collation id (e.g. 255, `utf8mb4_0900_ai_ci`, which needs the
//! UCA 9.0.0 tables) is rejected with
//! [`PageError::UnsupportedCollation`] when a layout is built; such columns
//! are indexed by storing a memcomparable sort key and comparing it with
//! [`Collation::Binary`].

use std::cmp::Ordering;

use crate::error::{PageError, Result};

/// A comparison rule for one key field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collation {
    /// memcmp; a proper prefix sorts first.
    Binary,
    /// `utf8mb4_bin` / `utf8mb3_bin`: code-point order, PAD SPACE.
    Utf8Bin,
    /// `utf8mb4_general_ci` / `utf8mb3_general_ci`: one weight per
    /// character, case- and Latin-accent-insensitive, PAD SPACE.
    Utf8GeneralCi,
}

/// MySQL collation id of `utf8mb3_general_ci`.
pub const UTF8MB3_GENERAL_CI: u16 = 33;
/// MySQL collation id of `utf8mb4_general_ci`.
pub const UTF8MB4_GENERAL_CI: u16 = 45;
/// MySQL collation id of `utf8mb4_bin`.
pub const UTF8MB4_BIN: u16 = 46;
/// MySQL collation id of `binary`.
pub const BINARY: u16 = 63;
/// MySQL collation id of `utf8mb3_bin`.
pub const UTF8MB3_BIN: u16 = 83;

impl Collation {
    /// The collation with MySQL id `id`, or
    /// [`PageError::UnsupportedCollation`].
    pub fn from_id(id: u16) -> Result<Collation> {
        match id {
            BINARY => Ok(Collation::Binary),
            UTF8MB4_BIN | UTF8MB3_BIN => Ok(Collation::Utf8Bin),
            UTF8MB4_GENERAL_CI | UTF8MB3_GENERAL_CI => Ok(Collation::Utf8GeneralCi),
            _ => Err(PageError::UnsupportedCollation(id)),
        }
    }

    /// Orders two values.
    // PERF: called per key field per binary-search step; no allocation.
    #[inline]
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Collation::Binary => a.cmp(b),
            Collation::Utf8Bin => cmp_pad_space_bytes(a, b),
            Collation::Utf8GeneralCi => cmp_pad_space(weights(a), weights(b)),
        }
    }
}

/// PAD SPACE comparison of byte strings (UTF-8 byte order = code-point order).
fn cmp_pad_space_bytes(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len().min(b.len());
    match a[..n].cmp(&b[..n]) {
        Ordering::Equal => {}
        other => return other,
    }
    let tail_vs_space = |tail: &[u8]| {
        tail.iter()
            .find(|&&c| c != b' ')
            .map_or(Ordering::Equal, |&c| c.cmp(&b' '))
    };
    if a.len() > n {
        tail_vs_space(&a[n..])
    } else {
        tail_vs_space(&b[n..]).reverse()
    }
}

/// PAD SPACE comparison of weight sequences.
fn cmp_pad_space(mut a: impl Iterator<Item = u32>, mut b: impl Iterator<Item = u32>) -> Ordering {
    const SPACE: u32 = 0x20;
    loop {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) => match x.cmp(&y) {
                Ordering::Equal => {}
                other => return other,
            },
            (Some(x), None) => {
                return std::iter::once(x)
                    .chain(a)
                    .find(|&w| w != SPACE)
                    .map_or(Ordering::Equal, |w| w.cmp(&SPACE));
            }
            (None, Some(y)) => {
                return std::iter::once(y)
                    .chain(b)
                    .find(|&w| w != SPACE)
                    .map_or(Ordering::Equal, |w| SPACE.cmp(&w));
            }
            (None, None) => return Ordering::Equal,
        }
    }
}

/// `utf8mb4_general_ci` weights of a byte string.
fn weights(s: &[u8]) -> impl Iterator<Item = u32> + '_ {
    s.utf8_chunks().flat_map(|chunk| {
        chunk
            .valid()
            .chars()
            .map(general_ci_weight)
            .chain(chunk.invalid().iter().map(|&b| 0x11_0000 + u32::from(b)))
    })
}

/// Base letters of Latin Extended-A (U+0100..=U+017F), as ranges mapping to
/// one weight; the letters without a decomposition into a base letter plus
/// accent (`Đ`, `Ħ`, `Ĳ`, `ĸ`, `Ŀ`, `Ł`, `ŉ`, `Ŋ`, `Œ`, `Ŧ`) weigh their
/// own upper-case form.
const LATIN_EXT_A: &[(u32, u32, u32)] = &[
    (0x100, 0x105, 'A' as u32),
    (0x106, 0x10D, 'C' as u32),
    (0x10E, 0x10F, 'D' as u32),
    (0x110, 0x111, 0x110),
    (0x112, 0x11B, 'E' as u32),
    (0x11C, 0x123, 'G' as u32),
    (0x124, 0x125, 'H' as u32),
    (0x126, 0x127, 0x126),
    (0x128, 0x131, 'I' as u32),
    (0x132, 0x133, 0x132),
    (0x134, 0x135, 'J' as u32),
    (0x136, 0x137, 'K' as u32),
    (0x138, 0x138, 0x138),
    (0x139, 0x13E, 'L' as u32),
    (0x13F, 0x140, 0x13F),
    (0x141, 0x142, 0x141),
    (0x143, 0x148, 'N' as u32),
    (0x149, 0x149, 0x149),
    (0x14A, 0x14B, 0x14A),
    (0x14C, 0x151, 'O' as u32),
    (0x152, 0x153, 0x152),
    (0x154, 0x159, 'R' as u32),
    (0x15A, 0x161, 'S' as u32),
    (0x162, 0x165, 'T' as u32),
    (0x166, 0x167, 0x166),
    (0x168, 0x173, 'U' as u32),
    (0x174, 0x175, 'W' as u32),
    (0x176, 0x178, 'Y' as u32),
    (0x179, 0x17E, 'Z' as u32),
    (0x17F, 0x17F, 'S' as u32),
];

/// Weight of one character under `utf8mb4_general_ci`.
fn general_ci_weight(c: char) -> u32 {
    let cp = c as u32;
    match cp {
        0..=0x7F => u32::from((cp as u8).to_ascii_uppercase()),
        0x80..=0xFF => latin1_weight(cp),
        0x100..=0x17F => LATIN_EXT_A
            .iter()
            .find(|&&(lo, hi, _)| (lo..=hi).contains(&cp))
            .map_or(cp, |&(_, _, w)| w),
        0x1_0000.. => 0xFFFD,
        _ => {
            let mut up = c.to_uppercase();
            match (up.next(), up.next()) {
                (Some(u), None) if (u as u32) <= 0xFFFF => u as u32,
                _ => cp,
            }
        }
    }
}

/// Weight of a Latin-1 Supplement character (U+0080..=U+00FF): accented
/// letters weigh their upper-case base letter; `Æ`, `Ð`, `Ø`, `Þ` keep their
/// own (upper-case) weight; `ß` weighs `S`; `µ` weighs Greek capital mu.
fn latin1_weight(cp: u32) -> u32 {
    let folded = match cp {
        0xE0..=0xFE if cp != 0xF7 => cp - 0x20,
        _ => cp,
    };
    match folded {
        0xB5 => 0x39C,
        0xC0..=0xC5 => 'A' as u32,
        0xC7 => 'C' as u32,
        0xC8..=0xCB => 'E' as u32,
        0xCC..=0xCF => 'I' as u32,
        0xD1 => 'N' as u32,
        0xD2..=0xD6 => 'O' as u32,
        0xD9..=0xDC => 'U' as u32,
        0xDD | 0xFF => 'Y' as u32,
        0xDF => 'S' as u32,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ci(a: &str, b: &str) -> Ordering {
        Collation::Utf8GeneralCi.compare(a.as_bytes(), b.as_bytes())
    }

    #[test]
    fn general_ci_folds_case_and_latin_accents() {
        assert_eq!(ci("abc", "ABC"), Ordering::Equal);
        assert_eq!(ci("Müller", "MULLER"), Ordering::Equal);
        assert_eq!(ci("ß", "s"), Ordering::Equal);
        assert_eq!(ci("Ångström", "angstrom"), Ordering::Equal);
        assert_eq!(ci("ÿ", "Y"), Ordering::Equal);
        assert_eq!(ci("Čeština", "cestina"), Ordering::Equal);
        // Ø and Æ are letters of their own, as in MySQL.
        assert_ne!(ci("Ø", "O"), Ordering::Equal);
        assert_eq!(ci("ø", "Ø"), Ordering::Equal);
        assert_ne!(ci("Æ", "A"), Ordering::Equal);
        assert_eq!(ci("ł", "Ł"), Ordering::Equal);
        assert_ne!(ci("Ł", "L"), Ordering::Equal);
        // Case folding beyond Latin.
        assert_eq!(ci("σ", "Σ"), Ordering::Equal);
        assert_eq!(ci("д", "Д"), Ordering::Equal);
        assert_eq!(ci("a", "b"), Ordering::Less);
        assert_eq!(ci("Z", "a"), Ordering::Greater);
    }

    #[test]
    fn general_ci_supplementary_characters_are_all_equal() {
        assert_eq!(ci("🍣", "🍺"), Ordering::Equal);
        assert_eq!(ci("x🍣", "X😀"), Ordering::Equal);
        // U+FFFD weight sorts after the BMP letters.
        assert_eq!(ci("🍣", "z"), Ordering::Greater);
    }

    #[test]
    fn pad_space_ignores_trailing_spaces_only() {
        for coll in [Collation::Utf8Bin, Collation::Utf8GeneralCi] {
            let c = |a: &str, b: &str| coll.compare(a.as_bytes(), b.as_bytes());
            assert_eq!(c("a", "a   "), Ordering::Equal);
            assert_eq!(c("a  ", "a"), Ordering::Equal);
            assert_eq!(c("", "   "), Ordering::Equal);
            // A tab sorts below the padding space, a letter above it.
            assert_eq!(c("a\t", "a"), Ordering::Less);
            assert_eq!(c("a", "a\t"), Ordering::Greater);
            assert_eq!(c("ab", "a"), Ordering::Greater);
            assert_eq!(c("a", "a b"), Ordering::Less);
        }
        assert_eq!(Collation::Binary.compare(b"a", b"a "), Ordering::Less);
    }

    #[test]
    fn utf8_bin_is_code_point_order_and_case_sensitive() {
        let c = |a: &str, b: &str| Collation::Utf8Bin.compare(a.as_bytes(), b.as_bytes());
        assert_eq!(c("A", "a"), Ordering::Less);
        assert_eq!(c("é", "z"), Ordering::Greater);
        assert_eq!(c("\u{FFFF}", "\u{10000}"), Ordering::Less);
    }

    #[test]
    fn invalid_utf8_sorts_after_characters_and_stays_total() {
        let c = |a: &[u8], b: &[u8]| Collation::Utf8GeneralCi.compare(a, b);
        assert_eq!(c(b"a\xff", b"a\xff"), Ordering::Equal);
        assert_eq!(c(b"a\xfe", b"a\xff"), Ordering::Less);
        assert_eq!(c(b"\xc3", "é".as_bytes()), Ordering::Greater);
        assert_eq!(c(b"\xc3", b"\xc3 "), Ordering::Equal);
    }

    #[test]
    fn collation_ids_resolve_or_are_rejected() {
        assert_eq!(Collation::from_id(45), Ok(Collation::Utf8GeneralCi));
        assert_eq!(Collation::from_id(46), Ok(Collation::Utf8Bin));
        assert_eq!(Collation::from_id(63), Ok(Collation::Binary));
        assert_eq!(
            Collation::from_id(255),
            Err(PageError::UnsupportedCollation(255))
        );
    }
}
