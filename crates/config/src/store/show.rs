//! `SHOW VARIABLES` rows and the `LIKE` pattern matcher.

/// One row of `SHOW VARIABLES`: `Variable_name`, `Value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariableRow {
    /// Canonical variable name.
    pub name: &'static str,
    /// The value as MySQL prints it (see [`crate::SysValue`]).
    pub value: String,
}

/// SQL `LIKE`: `%` matches any run of characters, `_` exactly one, `\`
/// escapes the next character; comparison ignores ASCII case (variable
/// names are ASCII and `SHOW VARIABLES LIKE` is case-insensitive).
pub fn like_matches(pattern: &str, text: &str) -> bool {
    #[derive(Clone, Copy, PartialEq)]
    enum Tok {
        Any,
        One,
        Char(char),
    }
    let mut tokens = Vec::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        tokens.push(match c {
            '%' => Tok::Any,
            '_' => Tok::One,
            // A trailing backslash matches itself, as in MySQL.
            '\\' => Tok::Char(chars.next().unwrap_or('\\')),
            c => Tok::Char(c),
        });
    }
    let text: Vec<char> = text.chars().collect();

    // Greedy matching with one backtrack point (the last `%`): linear for
    // the patterns people write, never exponential.
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
            Some(Tok::Char(c)) if c.eq_ignore_ascii_case(&text[t]) => {
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

#[cfg(test)]
mod tests {
    use super::like_matches;

    #[test]
    fn like_patterns() {
        let cases = [
            ("innodb%", "innodb_old_blocks_pct", true),
            ("INNODB_OLD%", "innodb_old_blocks_pct", true),
            ("%pct", "innodb_old_blocks_pct", true),
            ("%old%time", "innodb_old_blocks_time", true),
            ("%old%time", "innodb_old_blocks_pct", false),
            ("auto_mmit", "autocommit", false),
            ("auto_ommit", "autocommit", true),
            ("autoc_mmit", "autocommit", true),
            ("autocommit", "autocommit", true),
            ("autocommi", "autocommit", false),
            ("autocommit_", "autocommit", false),
            ("%", "", true),
            ("", "", true),
            ("", "x", false),
            ("_", "", false),
            ("a%b%c", "axxbyyc", true),
            ("a%b%c", "axxbyy", false),
            ("%%%", "anything", true),
            // Escaped wildcards match only themselves.
            ("sql\\_mode", "sql_mode", true),
            ("sql\\_mode", "sqlxmode", false),
            ("100\\%", "100%", true),
            ("100\\%", "1000", false),
        ];
        for (pattern, text, expected) in cases {
            assert_eq!(
                like_matches(pattern, text),
                expected,
                "{pattern:?} LIKE {text:?}"
            );
        }
    }
}
