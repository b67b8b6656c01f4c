//! A MySQL tokenizer for the jobs sqlparser does not do for us: expanding
//! versioned comments, splitting multi-statement text, recognising the
//! statement family, and reading the statements of
//! [`super::admin`].
//!
//! Tokens carry byte spans into the text they were read from, so callers
//! can hand an exact slice (an expression, a select item) to sqlparser or
//! use it as a result-column name.
//!
//! Versioned comments (`/*!80000 ... */`) are expanded *before* anything
//! else reads the text ([`expand_comments`]): the body is kept when its
//! version is at most [`SERVER_VERSION_ID`] (8.0.36 = 80036) and dropped
//! otherwise. `/*!` without a number is always kept. MariaDB's `/*M!...*/`
//! is an ordinary comment for MySQL and so for Basalt; optimizer hints
//! (`/*+ ... */`) are ignored.

use crate::error::SqlError;

/// `MYSQL_VERSION_ID` of the version Basalt reports (8.0.36).
pub const SERVER_VERSION_ID: u32 = 80036;

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// An unquoted identifier or keyword, as written.
    Word(String),
    /// A backtick-quoted identifier (unescaped).
    Quoted(String),
    /// A string literal (unescaped bytes); `double` when `"`-quoted.
    Str {
        /// Contents.
        bytes: Vec<u8>,
        /// Quoted with `"`.
        double: bool,
    },
    /// A numeric literal as written.
    Number(String),
    /// `X'..'` or `0x..` literal (decoded).
    Hex(Vec<u8>),
    /// `B'..'` or `0b..` literal (the digits).
    Bits(String),
    /// `?`.
    Param,
    /// `@name` (user variable); the name unquoted.
    UserVar(String),
    /// `@@[scope.]name` as written after `@@`.
    SysVar(String),
    /// An operator or punctuation mark.
    Punct(&'static str),
}

/// A token and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// The token.
    pub tok: Tok,
    /// Byte offset of its first character.
    pub start: usize,
    /// Byte offset just past it.
    pub end: usize,
}

impl Token {
    /// True when the token is the keyword `kw` (any case).
    pub fn is_kw(&self, kw: &str) -> bool {
        matches!(&self.tok, Tok::Word(w) if w.eq_ignore_ascii_case(kw))
    }

    /// True when the token is the punctuation `p`.
    pub fn is_punct(&self, p: &str) -> bool {
        matches!(&self.tok, Tok::Punct(q) if *q == p)
    }
}

const PUNCT3: &[&str] = &["<=>", "->>"];
const PUNCT2: &[&str] = &[
    "<=", ">=", "<>", "!=", ":=", "||", "&&", "<<", ">>", "->", "==",
];
const PUNCT1: &[&str] = &[
    "(", ")", ",", ";", ".", "=", "<", ">", "+", "-", "*", "/", "%", "!", "~", "^", "&", "|", ":",
    "{", "}", "[", "]",
];

fn syntax_error(text: &str, at: usize) -> SqlError {
    super::syntax_error_at(text, at)
}

/// Reads a quoted string starting at `i` (on the quote). Returns the
/// unescaped bytes and the index after the closing quote.
fn read_quoted(
    text: &str,
    i: usize,
    quote: u8,
    backslash: bool,
) -> Result<(Vec<u8>, usize), SqlError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut j = i + 1;
    while j < b.len() {
        let c = b[j];
        if c == quote {
            if j + 1 < b.len() && b[j + 1] == quote {
                out.push(quote);
                j += 2;
                continue;
            }
            return Ok((out, j + 1));
        }
        if c == b'\\' && backslash && quote != b'`' && j + 1 < b.len() {
            let e = b[j + 1];
            let unescaped = match e {
                b'0' => 0,
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                b'b' => 8,
                b'Z' => 26,
                // `\%` and `\_` keep the backslash (for LIKE patterns).
                b'%' | b'_' => {
                    out.push(b'\\');
                    e
                }
                other => other,
            };
            out.push(unescaped);
            j += 2;
            continue;
        }
        out.push(c);
        j += 1;
    }
    Err(syntax_error(text, i))
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// Expands versioned comments and removes MariaDB-only and hint comments;
/// other text (including ordinary comments and strings) is copied as is.
pub fn expand_comments(text: &str, backslash: bool) -> Result<String, SqlError> {
    if !text.contains("/*") {
        return Ok(text.to_string());
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                let (_, end) = read_quoted(text, i, q, backslash)?;
                i = end;
            }
            b'#' => {
                i = text[i..].find('\n').map_or(b.len(), |n| i + n);
            }
            b'-' if text[i..].starts_with("-- ")
                || text[i..].starts_with("--\t")
                || text[i..] == *"--" =>
            {
                i = text[i..].find('\n').map_or(b.len(), |n| i + n);
            }
            b'/' if text[i..].starts_with("/*") => {
                let Some(close) = text[i + 2..].find("*/") else {
                    return Err(syntax_error(text, i));
                };
                let body_start = i + 2;
                let body_end = i + 2 + close;
                let after = body_end + 2;
                let body = &text[body_start..body_end];
                if let Some(rest) = body.strip_prefix('!') {
                    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                    let (keep, inner) = if digits >= 5 {
                        let version: u32 = rest[..5].parse().unwrap_or(u32::MAX);
                        (version <= SERVER_VERSION_ID, &rest[5..])
                    } else {
                        (true, rest)
                    };
                    out.push_str(&text[copied..i]);
                    out.push(' ');
                    if keep {
                        // The body may itself hold comments and strings.
                        out.push_str(&expand_comments(inner, backslash)?);
                        out.push(' ');
                    }
                    copied = after;
                } else if body.starts_with('+') || body.starts_with("M!") {
                    out.push_str(&text[copied..i]);
                    out.push(' ');
                    copied = after;
                }
                i = after;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[copied..]);
    Ok(out)
}

/// Tokenizes `text` (after [`expand_comments`]). Comments are skipped.
pub fn tokenize(text: &str, backslash: bool, ansi_quotes: bool) -> Result<Vec<Token>, SqlError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        match c {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {
                i += 1;
            }
            b'#' => {
                i = text[i..].find('\n').map_or(b.len(), |n| i + n);
            }
            b'-' if b.get(i + 1) == Some(&b'-')
                && b.get(i + 2)
                    .is_none_or(|x| x.is_ascii_whitespace() || x.is_ascii_control()) =>
            {
                i = text[i..].find('\n').map_or(b.len(), |n| i + n);
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let Some(close) = text[i + 2..].find("*/") else {
                    return Err(syntax_error(text, i));
                };
                i = i + 2 + close + 2;
            }
            b'\'' | b'"' => {
                if c == b'"' && ansi_quotes {
                    let (v, end) = read_quoted(text, i, b'"', false)?;
                    out.push(Token {
                        tok: Tok::Quoted(String::from_utf8_lossy(&v).into_owned()),
                        start,
                        end,
                    });
                    i = end;
                } else {
                    let (v, end) = read_quoted(text, i, c, backslash)?;
                    out.push(Token {
                        tok: Tok::Str {
                            bytes: v,
                            double: c == b'"',
                        },
                        start,
                        end,
                    });
                    i = end;
                }
            }
            b'`' => {
                let (v, end) = read_quoted(text, i, b'`', false)?;
                out.push(Token {
                    tok: Tok::Quoted(String::from_utf8_lossy(&v).into_owned()),
                    start,
                    end,
                });
                i = end;
            }
            b'?' => {
                out.push(Token {
                    tok: Tok::Param,
                    start,
                    end: i + 1,
                });
                i += 1;
            }
            b'@' => {
                if b.get(i + 1) == Some(&b'@') {
                    let j = skip_while(b, i + 2, |c| is_ident_byte(c) || c == b'.');
                    if j == i + 2 {
                        return Err(syntax_error(text, i));
                    }
                    out.push(Token {
                        tok: Tok::SysVar(text[i + 2..j].to_string()),
                        start,
                        end: j,
                    });
                    i = j;
                } else if let Some(&q) = b.get(i + 1).filter(|q| matches!(q, b'\'' | b'"' | b'`')) {
                    let (v, end) = read_quoted(text, i + 1, q, backslash && q != b'`')?;
                    out.push(Token {
                        tok: Tok::UserVar(String::from_utf8_lossy(&v).into_owned()),
                        start,
                        end,
                    });
                    i = end;
                } else {
                    let j = skip_while(b, i + 1, |c| is_ident_byte(c) || c == b'.');
                    out.push(Token {
                        tok: Tok::UserVar(text[i + 1..j].to_string()),
                        start,
                        end: j,
                    });
                    i = j;
                }
            }
            b'0' if matches!(b.get(i + 1), Some(b'x'))
                && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit) =>
            {
                let mut j = skip_while(b, i + 2, |c| c.is_ascii_hexdigit());
                if j < b.len() && is_ident_byte(b[j]) {
                    // `0xg...` is an identifier in MySQL.
                    j = skip_while(b, j, is_ident_byte);
                    out.push(Token {
                        tok: Tok::Word(text[i..j].to_string()),
                        start,
                        end: j,
                    });
                } else {
                    out.push(Token {
                        tok: Tok::Hex(decode_hex(&text[i + 2..j])),
                        start,
                        end: j,
                    });
                }
                i = j;
            }
            b'0' if matches!(b.get(i + 1), Some(b'b'))
                && b.get(i + 2).is_some_and(|d| *d == b'0' || *d == b'1') =>
            {
                let j = skip_while(b, i + 2, |c| c == b'0' || c == b'1');
                out.push(Token {
                    tok: Tok::Bits(text[i + 2..j].to_string()),
                    start,
                    end: j,
                });
                i = j;
            }
            b'0'..=b'9' | b'.' if c != b'.' || b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                let mut j = skip_while(b, i, |c| c.is_ascii_digit());
                if j < b.len() && b[j] == b'.' {
                    j = skip_while(b, j + 1, |c| c.is_ascii_digit());
                }
                if j < b.len() && (b[j] == b'e' || b[j] == b'E') {
                    let mut k = j + 1;
                    if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
                        k += 1;
                    }
                    if k < b.len() && b[k].is_ascii_digit() {
                        j = skip_while(b, k, |c| c.is_ascii_digit());
                    }
                }
                if j < b.len() && is_ident_byte(b[j]) && !text[i..j].contains('.') {
                    // `1abc`: an identifier starting with digits.
                    j = skip_while(b, j, is_ident_byte);
                    out.push(Token {
                        tok: Tok::Word(text[i..j].to_string()),
                        start,
                        end: j,
                    });
                } else {
                    out.push(Token {
                        tok: Tok::Number(text[i..j].to_string()),
                        start,
                        end: j,
                    });
                }
                i = j;
            }
            _ if is_ident_byte(c) => {
                let j = skip_while(b, i, is_ident_byte);
                let word = &text[i..j];
                // X'..' and B'..' literals.
                if j == i + 1 && b.get(j) == Some(&b'\'') && matches!(c, b'x' | b'X' | b'b' | b'B')
                {
                    let (v, end) = read_quoted(text, j, b'\'', false)?;
                    let digits = String::from_utf8_lossy(&v).into_owned();
                    let tok = if c == b'x' || c == b'X' {
                        if !digits.len().is_multiple_of(2)
                            || !digits.bytes().all(|d| d.is_ascii_hexdigit())
                        {
                            return Err(syntax_error(text, i));
                        }
                        Tok::Hex(decode_hex(&digits))
                    } else {
                        if !digits.bytes().all(|d| d == b'0' || d == b'1') {
                            return Err(syntax_error(text, i));
                        }
                        Tok::Bits(digits)
                    };
                    out.push(Token { tok, start, end });
                    i = end;
                    continue;
                }
                out.push(Token {
                    tok: Tok::Word(word.to_string()),
                    start,
                    end: j,
                });
                i = j;
            }
            _ => {
                let rest = &text[i..];
                let p = PUNCT3
                    .iter()
                    .chain(PUNCT2)
                    .chain(PUNCT1)
                    .find(|p| rest.starts_with(**p));
                match p {
                    Some(p) => {
                        out.push(Token {
                            tok: Tok::Punct(p),
                            start,
                            end: i + p.len(),
                        });
                        i += p.len();
                    }
                    None => return Err(syntax_error(text, i)),
                }
            }
        }
    }
    Ok(out)
}

fn decode_hex(digits: &str) -> Vec<u8> {
    let padded = if !digits.len().is_multiple_of(2) {
        format!("0{digits}")
    } else {
        digits.to_string()
    };
    padded
        .as_bytes()
        .chunks(2)
        .map(|p| {
            let h = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
            h(p[0]) * 16 + h(p[1])
        })
        .collect()
}

/// Splits multi-statement text at top-level `;` into statement slices
/// (byte ranges of `text`), dropping empty statements.
pub fn split_statements(text: &str, backslash: bool) -> Result<Vec<(usize, usize)>, SqlError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                let (_, end) = read_quoted(text, i, q, backslash)?;
                i = end;
            }
            b'#' => i = text[i..].find('\n').map_or(b.len(), |n| i + n),
            b'-' if b.get(i + 1) == Some(&b'-')
                && b.get(i + 2)
                    .is_none_or(|x| x.is_ascii_whitespace() || x.is_ascii_control()) =>
            {
                i = text[i..].find('\n').map_or(b.len(), |n| i + n)
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let Some(close) = text[i + 2..].find("*/") else {
                    return Err(syntax_error(text, i));
                };
                i = i + 2 + close + 2;
            }
            b';' => {
                out.push((start, i));
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    out.push((start, b.len()));
    Ok(out
        .into_iter()
        .filter(|(s, e)| !is_blank(&text[*s..*e]))
        .collect())
}

/// True when `text` holds nothing but whitespace and comments.
pub fn is_blank(text: &str) -> bool {
    match tokenize(text, true, false) {
        Ok(tokens) => tokens.is_empty(),
        Err(_) => false,
    }
}

/// The first position at or after `i` whose byte fails `pred` (or the end).
fn skip_while(b: &[u8], mut i: usize, pred: impl Fn(u8) -> bool) -> usize {
    while i < b.len() && pred(b[i]) {
        i += 1;
    }
    i
}

/// True when `text` holds a comment (`/* */`, `#`, `-- `) outside quoted
/// strings and identifiers.
pub fn has_comment(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => match read_quoted(text, i, q, true) {
                Ok((_, end)) => i = end,
                Err(_) => return false,
            },
            b'#' => return true,
            b'/' if b.get(i + 1) == Some(&b'*') => return true,
            b'-' if b.get(i + 1) == Some(&b'-')
                && b.get(i + 2).is_none_or(|c| c.is_ascii_whitespace()) =>
            {
                return true
            }
            _ => i += 1,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_found_outside_strings_only() {
        assert!(has_comment("/*M!100100 SET @@MAX_STATEMENT_TIME=0 */"));
        assert!(has_comment("  # note"));
        assert!(has_comment("-- note"));
        assert!(has_comment("--"));
        assert!(!has_comment("SELECT 1--2"));
        assert!(!has_comment("SELECT '/* x */', \"#\", `--`"));
        assert!(!has_comment(";"));
        assert!(!has_comment(""));
    }

    fn words(text: &str) -> Vec<Tok> {
        tokenize(text, true, false)
            .unwrap()
            .into_iter()
            .map(|t| t.tok)
            .collect()
    }

    fn squash(s: &str) -> String {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn versioned_comments() {
        let e = |t: &str| squash(&expand_comments(t, true).unwrap());
        assert_eq!(e("/*!40101 SET NAMES utf8 */"), "SET NAMES utf8");
        assert_eq!(e("SELECT 1 /*!90000 + 1 */"), "SELECT 1");
        assert_eq!(
            e("SELECT 1 /*!80036 + 1 */"),
            "SELECT 1 + 1",
            "the server's own version is kept"
        );
        assert_eq!(
            e("SELECT 1 /*!80037 + 1 */"),
            "SELECT 1",
            "newer versions are dropped"
        );
        assert_eq!(e("SELECT /*! 2 */"), "SELECT 2");
        assert_eq!(e("/*M!100100 SET @@MAX_STATEMENT_TIME=0 */"), "");
        assert_eq!(e("SELECT '/*!40101 x */'"), "SELECT '/*!40101 x */'");
        assert_eq!(e("SELECT /*+ hint */ 1"), "SELECT 1");
        assert_eq!(
            e("SELECT /* plain */ 1"),
            "SELECT /* plain */ 1",
            "ordinary comments stay"
        );
        assert!(expand_comments("SELECT /* open", true).is_err());
    }

    #[test]
    fn tokens() {
        let t = words("SELECT `a``b`, 'x\\'y', \"q\", @v, @'w z', @@session.sql_mode, ?, 0x41, x'4142', b'01', 1.5e3, <=>");
        assert_eq!(t[1], Tok::Quoted("a`b".into()));
        assert_eq!(
            t[3],
            Tok::Str {
                bytes: b"x'y".to_vec(),
                double: false
            }
        );
        assert_eq!(
            t[5],
            Tok::Str {
                bytes: b"q".to_vec(),
                double: true
            }
        );
        assert_eq!(t[7], Tok::UserVar("v".into()));
        assert_eq!(t[9], Tok::UserVar("w z".into()));
        assert_eq!(t[11], Tok::SysVar("session.sql_mode".into()));
        assert_eq!(t[13], Tok::Param);
        assert_eq!(t[15], Tok::Hex(b"A".to_vec()));
        assert_eq!(t[17], Tok::Hex(b"AB".to_vec()));
        assert_eq!(t[19], Tok::Bits("01".into()));
        assert_eq!(t[21], Tok::Number("1.5e3".into()));
        assert_eq!(t[23], Tok::Punct("<=>"));
        assert!(tokenize("SELECT 'open", true, false).is_err());
        assert!(tokenize("SELECT x'4'", true, false).is_err());
    }

    #[test]
    fn splitting() {
        let text = "SELECT 1; SELECT ';' ; -- c;\n SELECT 3;;";
        let parts: Vec<&str> = split_statements(text, true)
            .unwrap()
            .into_iter()
            .map(|(s, e)| text[s..e].trim())
            .collect();
        assert_eq!(parts, vec!["SELECT 1", "SELECT ';'", "-- c;\n SELECT 3"]);
        assert!(split_statements("  ; ", true).unwrap().is_empty());
    }
}
