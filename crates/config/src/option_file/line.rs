//! One line of an option file.

/// What a line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Line {
    /// Empty or a comment.
    Blank,
    /// `[group]`, lower-cased.
    Group(String),
    /// `!include path`.
    Include(String),
    /// `!includedir dir`.
    IncludeDir(String),
    /// `name` or `name = value` (value unquoted and unescaped).
    Option {
        /// The name as written (trimmed).
        name: String,
        /// The value, if there was an `=`.
        value: Option<String>,
    },
}

/// Parses one line (without its line terminator). `Err` carries the reason.
pub(crate) fn parse_line(raw: &str) -> Result<Line, String> {
    let line = raw.trim();
    if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
        return Ok(Line::Blank);
    }
    if let Some(directive) = line.strip_prefix('!') {
        let (word, arg) = directive
            .split_once(char::is_whitespace)
            .unwrap_or((directive, ""));
        let arg = arg.trim();
        return match word {
            "include" | "includedir" if arg.is_empty() => Err(format!("!{word} needs a path")),
            "include" => Ok(Line::Include(arg.to_string())),
            "includedir" => Ok(Line::IncludeDir(arg.to_string())),
            _ => Err(format!("unknown directive '!{word}'")),
        };
    }
    if let Some(header) = line.strip_prefix('[') {
        let Some((name, rest)) = header.split_once(']') else {
            return Err("group header is missing ']'".to_string());
        };
        let name = name.trim();
        if name.is_empty() {
            return Err("empty group name".to_string());
        }
        let rest = rest.trim_start();
        if !(rest.is_empty() || rest.starts_with('#') || rest.starts_with(';')) {
            return Err(format!("unexpected text after group header: '{rest}'"));
        }
        return Ok(Line::Group(name.to_ascii_lowercase()));
    }

    let line = strip_end_comment(line).trim_end();
    let (name, value) = match line.split_once('=') {
        Some((name, value)) => (name.trim(), Some(parse_value(value.trim())?)),
        None => (line, None),
    };
    if name.is_empty() {
        return Err("missing option name before '='".to_string());
    }
    Ok(Line::Option {
        name: name.to_string(),
        value,
    })
}

/// Cuts a `#` comment that starts outside quotes. Quotes are tracked over the
/// whole line, and inside quotes a backslash protects the next character, as
/// in MySQL's option-file reader; after an unbalanced quote (`don't`) nothing
/// is a comment. Whether a quoted value is well formed is checked later.
fn strip_end_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => quote = Some(c),
                '#' => return &line[..i],
                _ => {}
            },
        }
    }
    line
}

/// Unquotes (`'...'` or `"..."` spanning the whole value) and unescapes a
/// value.
fn parse_value(value: &str) -> Result<String, String> {
    let Some(q) = value.chars().next().filter(|c| *c == '\'' || *c == '"') else {
        return Ok(unescape(value));
    };
    let body = &value[1..];
    let mut escaped = false;
    for (i, c) in body.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == q {
            let rest = body[i + 1..].trim();
            if !rest.is_empty() {
                return Err(format!("unexpected text after quoted value: '{rest}'"));
            }
            return Ok(unescape(&body[..i]));
        }
    }
    Err("unterminated quoted value".to_string())
}

/// `\n \t \r \b \s \\ \" \'` become their characters; any other backslash
/// is kept as written (so `C:\data` survives).
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let replacement = match chars.peek() {
            Some('n') => '\n',
            Some('t') => '\t',
            Some('r') => '\r',
            Some('b') => '\u{8}',
            Some('s') => ' ',
            Some('\\') => '\\',
            Some('"') => '"',
            Some('\'') => '\'',
            _ => {
                out.push('\\');
                continue;
            }
        };
        chars.next();
        out.push(replacement);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn option(name: &str, value: Option<&str>) -> Line {
        Line::Option {
            name: name.to_string(),
            value: value.map(str::to_string),
        }
    }

    #[test]
    fn blanks_and_comments() {
        for line in ["", "   ", "# c", "  ; c", ";", "#"] {
            assert_eq!(parse_line(line), Ok(Line::Blank), "{line:?}");
        }
    }

    #[test]
    fn groups() {
        assert_eq!(parse_line("[mysqld]"), Ok(Line::Group("mysqld".into())));
        assert_eq!(
            parse_line(" [ BasaltD ] # x"),
            Ok(Line::Group("basaltd".into()))
        );
        assert!(parse_line("[mysqld").is_err());
        assert!(parse_line("[]").is_err());
        assert!(parse_line("[mysqld] port=1").is_err());
    }

    #[test]
    fn options_and_values() {
        assert_eq!(parse_line("port=3306"), Ok(option("port", Some("3306"))));
        assert_eq!(
            parse_line("  port  =  3306  "),
            Ok(option("port", Some("3306")))
        );
        assert_eq!(
            parse_line("skip-name-resolve"),
            Ok(option("skip-name-resolve", None))
        );
        assert_eq!(parse_line("flag # on"), Ok(option("flag", None)));
        assert_eq!(parse_line("port=3306#c"), Ok(option("port", Some("3306"))));
        assert_eq!(parse_line("x = "), Ok(option("x", Some(""))));
        assert_eq!(parse_line("x=a=b"), Ok(option("x", Some("a=b"))));
        assert!(parse_line("=5").is_err());
    }

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(parse_line("x='a # b'"), Ok(option("x", Some("a # b"))));
        assert_eq!(parse_line("x=\"a;b\" # c"), Ok(option("x", Some("a;b"))));
        assert_eq!(
            parse_line(r#"x="say \"hi\"""#),
            Ok(option("x", Some("say \"hi\"")))
        );
        assert_eq!(parse_line(r"x='it\'s'"), Ok(option("x", Some("it's"))));
        assert_eq!(
            parse_line(r"x=a\tb\nc\\d\se"),
            Ok(option("x", Some("a\tb\nc\\d e")))
        );
        assert_eq!(parse_line(r"x=C:\data"), Ok(option("x", Some(r"C:\data"))));
        assert!(parse_line("x='abc").is_err());
        assert!(parse_line("x='abc' def").is_err());
        // An apostrophe inside an unquoted value is text, and MySQL stops
        // looking for comments after it.
        assert_eq!(
            parse_line("x=don't # c"),
            Ok(option("x", Some("don't # c")))
        );
        // A quote in the middle is plain text.
        assert_eq!(parse_line("x=a'b'"), Ok(option("x", Some("a'b'"))));
    }

    #[test]
    fn directives() {
        assert_eq!(
            parse_line("!include /a/b.cnf"),
            Ok(Line::Include("/a/b.cnf".into()))
        );
        assert_eq!(
            parse_line("!includedir  conf.d "),
            Ok(Line::IncludeDir("conf.d".into()))
        );
        assert!(parse_line("!include").is_err());
        assert!(parse_line("!require x").is_err());
    }
}
