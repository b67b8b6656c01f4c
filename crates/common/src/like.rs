//! SQL `LIKE` matching: `%` any run, `_` one character, an escape
//! character (default `\`) makes the next character literal.
//!
//! Greedy matching with one backtrack point (the last `%`), so it is
//! linear for the patterns people write and never exponential.

#[derive(Clone, Copy, PartialEq)]
enum Tok {
    Any,
    One,
    Char(char),
}

fn compile(pattern: &str, escape: Option<char>) -> Vec<Tok> {
    let mut tokens = Vec::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        tokens.push(match c {
            '%' => Tok::Any,
            '_' => Tok::One,
            // A trailing escape matches itself, as in MySQL.
            c if Some(c) == escape => Tok::Char(chars.next().unwrap_or(c)),
            c => Tok::Char(c),
        });
    }
    tokens
}

/// Matches `text` against `pattern` with `eq` deciding character equality.
pub fn like_with(
    pattern: &str,
    text: &str,
    escape: Option<char>,
    eq: impl Fn(char, char) -> bool,
) -> bool {
    let tokens = compile(pattern, escape);
    let text: Vec<char> = text.chars().collect();
    let (mut t, mut p) = (0usize, 0usize);
    let mut backtrack: Option<(usize, usize)> = None;
    while t < text.len() {
        match tokens.get(p) {
            Some(Tok::Any) => {
                backtrack = Some((p, t));
                p += 1;
            }
            Some(Tok::One) => {
                t += 1;
                p += 1;
            }
            Some(Tok::Char(c)) if eq(*c, text[t]) => {
                t += 1;
                p += 1;
            }
            _ => match backtrack {
                Some((bp, bt)) => {
                    backtrack = Some((bp, bt + 1));
                    p = bp + 1;
                    t = bt + 1;
                }
                None => return false,
            },
        }
    }
    tokens[p..].iter().all(|tok| *tok == Tok::Any)
}

/// `LIKE` with `\` as escape; `ci` ignores letter case.
pub fn like_match(pattern: &str, text: &str, ci: bool) -> bool {
    like_with(pattern, text, Some('\\'), |a, b| {
        if ci {
            a == b || a.to_lowercase().eq(b.to_lowercase())
        } else {
            a == b
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        let cases = [
            ("a%", "abc", true),
            ("%c", "abc", true),
            ("a_c", "abc", true),
            ("a_c", "abbc", false),
            ("%b%", "abc", true),
            ("a\\%", "a%", true),
            ("a\\%", "ab", false),
            ("", "", true),
            ("%", "", true),
            ("_", "", false),
            ("a%b%c", "axxbyyc", true),
            ("a%b%c", "axxbyy", false),
        ];
        for (p, t, want) in cases {
            assert_eq!(like_match(p, t, false), want, "{p} LIKE {t}");
        }
        assert!(like_match("ABC", "abc", true));
        assert!(!like_match("ABC", "abc", false));
        assert!(like_with("a!%", "a%", Some('!'), |a, b| a == b));
    }
}
