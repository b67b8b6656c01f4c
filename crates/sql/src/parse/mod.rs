//! Parsing: text to [`Statement`]s.
//!
//! ```text
//!   COM_QUERY text
//!     │ expand_comments        /*!80000 ...*/ kept or dropped by version
//!     │ split_statements       top-level ';' (multi-statements)
//!     v
//!   one statement's text ── tokenize ──> admin::parse_admin ──> Statement
//!                                 │ not an admin family
//!                                 v
//!                           sqlparser (BasaltDialect) ──> Select / TableAccess /
//!                                                          NotSupported
//! ```
//!
//! Errors: a statement that parses nowhere is 1064 with MySQL's message
//! shape: `near '<text from the failing token, at most 80 characters>' at
//! line N`. sqlparser reports `Line: L, Column: C`; that position is
//! mapped back to a byte offset of the statement text.
//!
//! Result-column names follow MySQL: an alias if given, the literal's
//! value for a string literal, otherwise the item's text exactly as written
//! (whitespace and letter case kept). The text comes from the token spans
//! of the select list, split at top-level commas.

pub mod admin;
pub mod ast;
pub mod dialect;
pub mod lexer;

use sqlparser::ast::{self as sql, Expr, SelectItem, SetExpr, TableFactor};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token as SqlToken;

pub use ast::*;
pub use dialect::BasaltDialect;
use lexer::{Tok, Token};

use crate::error::SqlError;

/// Longest result-column name (MySQL truncates item names).
pub const MAX_NAME_CHARS: usize = 256;

/// `sql_mode` switches that change how text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseOptions {
    /// Backslash escapes in strings (off under `NO_BACKSLASH_ESCAPES`).
    pub backslash_escapes: bool,
    /// `"` quotes identifiers (`ANSI_QUOTES`).
    pub ansi_quotes: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            backslash_escapes: true,
            ansi_quotes: false,
        }
    }
}

impl ParseOptions {
    fn dialect(&self) -> BasaltDialect {
        let mut d = BasaltDialect::default();
        d.backslash_escapes = self.backslash_escapes;
        d.ansi_quotes = self.ansi_quotes;
        d
    }
}

/// A 1064 error pointing at byte `at` of `text`.
pub fn syntax_error_at(text: &str, at: usize) -> SqlError {
    let at = at.min(text.len());
    let at = (0..=at)
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    let near: String = text[at..].chars().take(80).collect();
    let line = text[..at].matches('\n').count() + 1;
    SqlError::Syntax { near, line }
}

/// Byte offset of sqlparser's `Line: L, Column: C` in `text`.
fn offset_of(text: &str, line: u64, column: u64) -> usize {
    let mut offset = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i as u64 + 1 == line {
            let col = column.saturating_sub(1) as usize;
            return offset + l.char_indices().nth(col).map_or(l.len(), |(b, _)| b);
        }
        offset += l.len();
    }
    text.len()
}

fn from_parser_error(text: &str, base: usize, e: &ParserError) -> SqlError {
    let msg = e.to_string();
    let pos = msg.rfind("Line: ").and_then(|i| {
        let rest = &msg[i + 6..];
        let (l, rest) = rest.split_once(", Column: ")?;
        let c: String = rest.chars().take_while(char::is_ascii_digit).collect();
        Some((l.trim().parse::<u64>().ok()?, c.parse::<u64>().ok()?))
    });
    let local = &text[base..];
    let at = match pos {
        Some((l, c)) => base + offset_of(local, l, c),
        None => text.len(),
    };
    tracing::trace!(error = %msg, "sqlparser rejected statement");
    syntax_error_at(text, at)
}

/// Parses `text[from..to]` as one expression.
pub(crate) fn parse_expr_text(
    text: &str,
    from: usize,
    to: usize,
    opts: ParseOptions,
) -> Result<Expr, SqlError> {
    let dialect = opts.dialect();
    let slice = &text[from..to];
    let mut parser = Parser::new(&dialect)
        .try_with_sql(slice)
        .map_err(|e| from_parser_error(text, from, &e))?;
    let expr = parser
        .parse_expr()
        .map_err(|e| from_parser_error(text, from, &e))?;
    if parser.peek_token_ref().token != SqlToken::EOF {
        let span = parser.peek_token_ref().span.start;
        return Err(syntax_error_at(
            text,
            from + offset_of(slice, span.line, span.column),
        ));
    }
    Ok(expr)
}

/// Splits a `COM_QUERY` text into statement texts (versioned comments
/// expanded). Returns an empty list for blank text.
pub fn split(text: &str, opts: ParseOptions) -> Result<Vec<String>, SqlError> {
    let expanded = lexer::expand_comments(text, opts.backslash_escapes)?;
    let ranges = lexer::split_statements(&expanded, opts.backslash_escapes)?;
    Ok(ranges
        .into_iter()
        .map(|(s, e)| expanded[s..e].trim().to_string())
        .collect())
}

/// Whether `text` holds a comment (`/* */`, `#`, `-- `) outside strings:
/// MySQL answers OK, not ER_EMPTY_QUERY, to a statement that is only
/// comments.
pub fn has_comment(text: &str) -> bool {
    lexer::has_comment(text)
}

/// Number of `?` placeholders in a statement text.
pub fn count_placeholders(text: &str, opts: ParseOptions) -> Result<usize, SqlError> {
    let toks = lexer::tokenize(text, opts.backslash_escapes, opts.ansi_quotes)?;
    Ok(toks.iter().filter(|t| t.tok == Tok::Param).count())
}

/// Parses one statement (already split, comments expanded).
pub fn parse_statement(text: &str, opts: ParseOptions) -> Result<Statement, SqlError> {
    let toks = lexer::tokenize(text, opts.backslash_escapes, opts.ansi_quotes)?;
    if toks.is_empty() {
        return Err(SqlError::EmptyQuery);
    }
    let mut cursor = admin::Cursor::new(text, &toks, opts);
    if let Some(result) = admin::parse_admin(&mut cursor) {
        return result;
    }
    let first = match &toks[0].tok {
        Tok::Word(w) => w.to_ascii_uppercase(),
        Tok::Punct("(") => "(".to_string(),
        _ => return Err(syntax_error_at(text, toks[0].start)),
    };
    match first.as_str() {
        "SELECT" | "WITH" | "(" | "VALUES" | "TABLE" => parse_query(text, &toks, opts),
        "INSERT" | "REPLACE" | "UPDATE" | "DELETE" => parse_dml(text, opts),
        "DESC" | "DESCRIBE" | "EXPLAIN" => match toks.get(1).map(|t| &t.tok) {
            Some(Tok::Word(_)) | Some(Tok::Quoted(_))
                if !toks[1].is_kw("SELECT") && !toks[1].is_kw("FORMAT") =>
            {
                let t = table_of(&toks[1..]);
                Ok(Statement::TableAccess {
                    privilege: "SELECT",
                    tables: vec![t],
                })
            }
            _ => Err(SqlError::NotSupportedYet("EXPLAIN".into())),
        },
        _ => {
            // Validate with sqlparser so typos stay syntax errors.
            let dialect = opts.dialect();
            match Parser::parse_sql(&dialect, text) {
                Ok(_) => Err(SqlError::NotSupportedYet(admin::statement_kind(
                    text, &toks,
                ))),
                Err(e) => Err(from_parser_error(text, 0, &e)),
            }
        }
    }
}

fn table_of(toks: &[Token]) -> TableRef {
    let name = |t: &Token| match &t.tok {
        Tok::Word(w) | Tok::Quoted(w) => w.clone(),
        _ => String::new(),
    };
    if toks.len() >= 3 && toks[1].is_punct(".") {
        TableRef {
            schema: Some(name(&toks[0])),
            name: name(&toks[2]),
        }
    } else {
        TableRef {
            schema: None,
            name: name(&toks[0]),
        }
    }
}

fn object_name_to_table(name: &sql::ObjectName) -> TableRef {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|p| match p.as_ident() {
            Some(i) => i.value.clone(),
            None => p.to_string(),
        })
        .collect();
    match parts.as_slice() {
        [schema, table] => TableRef {
            schema: Some(schema.clone()),
            name: table.clone(),
        },
        [.., table] => TableRef {
            schema: None,
            name: table.clone(),
        },
        [] => TableRef {
            schema: None,
            name: String::new(),
        },
    }
}

fn collect_tables(from: &[sql::TableWithJoins], out: &mut Vec<TableRef>) {
    for twj in from {
        let mut factors = vec![&twj.relation];
        factors.extend(twj.joins.iter().map(|j| &j.relation));
        for f in factors {
            match f {
                TableFactor::Table { name, .. } => out.push(object_name_to_table(name)),
                TableFactor::NestedJoin {
                    table_with_joins, ..
                } => collect_tables(std::slice::from_ref(table_with_joins), out),
                _ => {}
            }
        }
    }
}

fn is_dual(from: &[sql::TableWithJoins]) -> bool {
    matches!(from, [twj] if twj.joins.is_empty() && matches!(&twj.relation,
        TableFactor::Table { name, alias: None, args: None, .. }
            if name.0.len() == 1 && name.to_string().eq_ignore_ascii_case("DUAL")))
}

fn parse_dml(text: &str, opts: ParseOptions) -> Result<Statement, SqlError> {
    let dialect = opts.dialect();
    let stmts = Parser::parse_sql(&dialect, text).map_err(|e| from_parser_error(text, 0, &e))?;
    let Some(stmt) = stmts.into_iter().next() else {
        return Err(SqlError::EmptyQuery);
    };
    let mut tables = Vec::new();
    let privilege = match &stmt {
        sql::Statement::Insert(ins) => {
            if let sql::TableObject::TableName(name) = &ins.table {
                tables.push(object_name_to_table(name));
            }
            "INSERT"
        }
        sql::Statement::Update(upd) => {
            collect_tables(std::slice::from_ref(&upd.table), &mut tables);
            "UPDATE"
        }
        sql::Statement::Delete(del) => {
            match &del.from {
                sql::FromTable::WithFromKeyword(f) | sql::FromTable::WithoutKeyword(f) => {
                    collect_tables(f, &mut tables)
                }
            }
            "DELETE"
        }
        _ => return Err(SqlError::NotSupportedYet("this statement".into())),
    };
    Ok(Statement::TableAccess { privilege, tables })
}

/// Select-list item texts from the tokens: `(start, end)` byte ranges.
fn select_item_spans(toks: &[Token]) -> Option<Vec<(usize, usize)>> {
    const MODIFIERS: &[&str] = &[
        "ALL",
        "DISTINCT",
        "DISTINCTROW",
        "HIGH_PRIORITY",
        "STRAIGHT_JOIN",
        "SQL_SMALL_RESULT",
        "SQL_BIG_RESULT",
        "SQL_BUFFER_RESULT",
        "SQL_NO_CACHE",
        "SQL_CACHE",
        "SQL_CALC_FOUND_ROWS",
    ];
    const ENDS: &[&str] = &[
        "FROM",
        "INTO",
        "WHERE",
        "GROUP",
        "HAVING",
        "WINDOW",
        "ORDER",
        "LIMIT",
        "FOR",
        "LOCK",
        "UNION",
        "EXCEPT",
        "INTERSECT",
    ];
    if !toks.first()?.is_kw("SELECT") {
        return None;
    }
    let mut i = 1;
    while toks
        .get(i)
        .is_some_and(|t| MODIFIERS.iter().any(|m| t.is_kw(m)))
    {
        i += 1;
    }
    let mut spans = Vec::new();
    let mut depth = 0i32;
    let mut item_start = i;
    while i < toks.len() {
        let t = &toks[i];
        if t.is_punct("(") {
            depth += 1;
        } else if t.is_punct(")") {
            depth -= 1;
        } else if depth == 0 && ENDS.iter().any(|k| t.is_kw(k)) {
            break;
        } else if depth == 0 && t.is_punct(",") {
            if item_start == i {
                return None;
            }
            spans.push((toks[item_start].start, toks[i - 1].end));
            item_start = i + 1;
        }
        i += 1;
    }
    if item_start < i {
        spans.push((toks[item_start].start, toks[i - 1].end));
    }
    Some(spans)
}

fn literal_name(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Value(v) => match &v.value {
            sql::Value::SingleQuotedString(s)
            | sql::Value::DoubleQuotedString(s)
            | sql::Value::NationalStringLiteral(s) => Some(s.clone()),
            _ => None,
        },
        Expr::Prefixed { value, .. } => literal_name(value),
        _ => None,
    }
}

/// The first string literal inside `span` when the item is several
/// adjacent string literals.
fn first_string_token(toks: &[Token], span: (usize, usize)) -> Option<String> {
    let inside: Vec<&Token> = toks
        .iter()
        .filter(|t| t.start >= span.0 && t.end <= span.1)
        .collect();
    let strings: Vec<&Vec<u8>> = inside
        .iter()
        .filter_map(|t| match &t.tok {
            Tok::Str { bytes, .. } => Some(bytes),
            _ => None,
        })
        .collect();
    if strings.len() > 1
        && strings.len() + usize::from(matches!(inside.first().map(|t| &t.tok), Some(Tok::Word(_))))
            == inside.len()
    {
        Some(String::from_utf8_lossy(strings[0]).into_owned())
    } else {
        None
    }
}

fn truncate_name(s: &str) -> String {
    s.chars().take(MAX_NAME_CHARS).collect()
}

fn parse_query(text: &str, toks: &[Token], opts: ParseOptions) -> Result<Statement, SqlError> {
    let dialect = opts.dialect();
    let mut parser = Parser::new(&dialect)
        .try_with_sql(text)
        .map_err(|e| from_parser_error(text, 0, &e))?;
    let stmt = parser
        .parse_statement()
        .map_err(|e| from_parser_error(text, 0, &e))?;
    while parser.consume_token(&SqlToken::SemiColon) {}
    if parser.peek_token_ref().token != SqlToken::EOF {
        let span = parser.peek_token_ref().span.start;
        return Err(syntax_error_at(
            text,
            offset_of(text, span.line, span.column),
        ));
    }
    let sql::Statement::Query(query) = stmt else {
        return Err(SqlError::NotSupportedYet("this statement".into()));
    };
    let SetExpr::Select(select) = query.body.as_ref() else {
        return Err(SqlError::NotSupportedYet(
            "UNION, INTERSECT, EXCEPT and table value constructors".into(),
        ));
    };
    if query.with.is_some() {
        return Err(SqlError::NotSupportedYet("WITH".into()));
    }
    if !select.from.is_empty() && !is_dual(&select.from) {
        let mut tables = Vec::new();
        collect_tables(&select.from, &mut tables);
        if tables.is_empty() {
            return Err(SqlError::NotSupportedYet("derived tables".into()));
        }
        return Ok(Statement::TableAccess {
            privilege: "SELECT",
            tables,
        });
    }
    let mut into = Vec::new();
    if let Some(i) = &select.into {
        if i.temporary || i.unlogged || i.table {
            return Err(SqlError::NotSupportedYet("SELECT ... INTO".into()));
        }
        for target in &i.targets {
            let name = target.to_string();
            match name.strip_prefix('@') {
                Some(v) if !v.starts_with('@') => into.push(v.trim_matches('`').to_string()),
                _ => return Err(SqlError::NotSupportedYet("SELECT ... INTO".into())),
            }
        }
    }
    let spans = select_item_spans(toks).filter(|s| s.len() == select.projection.len());
    let mut names = Vec::with_capacity(select.projection.len());
    for (i, item) in select.projection.iter().enumerate() {
        let name = match item {
            SelectItem::ExprWithAlias { alias, .. } => alias.value.clone(),
            SelectItem::UnnamedExpr(expr) => match literal_name(expr) {
                // Adjacent literals ('a' 'b') are named by the first one.
                Some(n) => match &spans {
                    Some(s) => first_string_token(toks, s[i]).unwrap_or(n),
                    None => n,
                },
                None => match &spans {
                    Some(s) => text[s[i].0..s[i].1].to_string(),
                    None => expr.to_string(),
                },
            },
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                return Err(SqlError::NoTablesUsed);
            }
            _ => return Err(SqlError::NotSupportedYet("this select item".into())),
        };
        names.push(truncate_name(&name));
    }
    Ok(Statement::Select(SelectStmt { query, names, into }))
}

#[cfg(test)]
mod tests;
