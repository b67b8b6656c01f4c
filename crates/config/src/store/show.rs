//! `SHOW VARIABLES` rows and their `LIKE` filter.

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
    basalt_common::like::like_with(pattern, text, Some('\\'), |a, b| a.eq_ignore_ascii_case(&b))
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
