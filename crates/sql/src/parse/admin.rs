//! The pre-parser: statement families sqlparser cannot read the way MySQL
//! clients write them (accounts, grants, every form of `SET` and `SHOW`,
//! `KILL`, `USE`, schemas, transactions, `DO`, SQL-level prepared
//! statements). Each is a small keyword grammar over [`super::lexer`]
//! tokens; embedded expressions are cut out by span and handed to
//! sqlparser, so expression syntax is the same everywhere.

use sqlparser::ast::Expr;

use super::ast::*;
use super::lexer::{Tok, Token};
use super::{parse_expr_text, syntax_error_at, ParseOptions};
use crate::error::SqlError;

/// A cursor over one statement's tokens.
pub(crate) struct Cursor<'a> {
    pub text: &'a str,
    pub toks: &'a [Token],
    pub pos: usize,
    pub opts: ParseOptions,
}

type R<T> = Result<T, SqlError>;

impl<'a> Cursor<'a> {
    pub fn new(text: &'a str, toks: &'a [Token], opts: ParseOptions) -> Cursor<'a> {
        Cursor {
            text,
            toks,
            pos: 0,
            opts,
        }
    }

    fn peek(&self) -> Option<&'a Token> {
        self.toks.get(self.pos)
    }

    fn peek_at(&self, n: usize) -> Option<&'a Token> {
        self.toks.get(self.pos + n)
    }

    fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    fn error(&self) -> SqlError {
        let at = self.peek().map_or(self.text.len(), |t| t.start);
        syntax_error_at(self.text, at)
    }

    fn kw(&mut self, kw: &str) -> bool {
        if self.peek().is_some_and(|t| t.is_kw(kw)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn kws(&mut self, kws: &[&str]) -> bool {
        let all = kws
            .iter()
            .enumerate()
            .all(|(i, k)| self.peek_at(i).is_some_and(|t| t.is_kw(k)));
        if all {
            self.pos += kws.len();
        }
        all
    }

    fn expect_kw(&mut self, kw: &str) -> R<()> {
        if self.kw(kw) {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    fn punct(&mut self, p: &str) -> bool {
        if self.peek().is_some_and(|t| t.is_punct(p)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, p: &str) -> R<()> {
        if self.punct(p) {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    fn end(&self) -> R<()> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    /// An identifier: a word or a backtick-quoted name (and, where MySQL
    /// allows it, a string).
    fn ident(&mut self) -> R<String> {
        match self.peek().map(|t| &t.tok) {
            Some(Tok::Word(w)) => {
                self.pos += 1;
                Ok(w.clone())
            }
            Some(Tok::Quoted(q)) => {
                self.pos += 1;
                Ok(q.clone())
            }
            _ => Err(self.error()),
        }
    }

    fn ident_or_string(&mut self) -> R<String> {
        match self.peek().map(|t| &t.tok) {
            Some(Tok::Str { bytes, .. }) => {
                self.pos += 1;
                Ok(String::from_utf8_lossy(bytes).into_owned())
            }
            _ => self.ident(),
        }
    }

    fn string(&mut self) -> R<String> {
        match self.peek().map(|t| &t.tok) {
            Some(Tok::Str { bytes, .. }) => {
                self.pos += 1;
                Ok(String::from_utf8_lossy(bytes).into_owned())
            }
            _ => Err(self.error()),
        }
    }

    /// `'user'@'host'`, `user@host`, `user` (host `%`), `CURRENT_USER[()]`.
    fn user(&mut self) -> R<UserSpec> {
        if self.kw("CURRENT_USER") {
            if self.punct("(") {
                self.expect_punct(")")?;
            }
            return Ok(UserSpec::Current);
        }
        let user = self.ident_or_string()?;
        let host = match self.peek().map(|t| &t.tok) {
            Some(Tok::UserVar(h)) => {
                self.pos += 1;
                h.clone()
            }
            _ => "%".to_string(),
        };
        if user.chars().count() > 32 {
            return Err(SqlError::WrongArguments(format!(
                "user name '{user}' is too long"
            )));
        }
        if host.chars().count() > 255 {
            return Err(SqlError::WrongArguments(format!(
                "host name '{host}' is too long"
            )));
        }
        Ok(UserSpec::Named { user, host })
    }

    fn users(&mut self) -> R<Vec<UserSpec>> {
        let mut v = vec![self.user()?];
        while self.punct(",") {
            v.push(self.user()?);
        }
        Ok(v)
    }

    /// The tokens from here to the next top-level `,` (or `stop` keyword,
    /// or the end), as an expression.
    fn expr_until(&mut self, stops: &[&str]) -> R<Expr> {
        let start = self.pos;
        let mut depth = 0i32;
        while let Some(t) = self.peek() {
            if t.is_punct("(") {
                depth += 1;
            } else if t.is_punct(")") {
                depth -= 1;
            } else if depth == 0 && (t.is_punct(",") || stops.iter().any(|s| t.is_kw(s))) {
                break;
            }
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.error());
        }
        let from = self.toks[start].start;
        let to = self.toks[self.pos - 1].end;
        parse_expr_text(self.text, from, to, self.opts)
    }

    fn filter(&mut self) -> R<Filter> {
        if self.kw("LIKE") {
            let p = self.string()?;
            Ok(Filter::Like(p))
        } else if self.kw("WHERE") {
            Ok(Filter::Where(Box::new(self.expr_until(&[])?)))
        } else {
            Ok(Filter::None)
        }
    }

    fn scope(&mut self) -> Scope {
        if self.kw("GLOBAL") {
            Scope::Global
        } else if self.kw("SESSION") || self.kw("LOCAL") {
            Scope::Session
        } else {
            Scope::Implicit
        }
    }

    fn not_supported(&self) -> SqlError {
        SqlError::NotSupportedYet(statement_kind(self.text, self.toks))
    }
}

/// Object kinds that end a statement's name (`CREATE TABLE`, `LOCK TABLES`).
const OBJECT_KINDS: &[&str] = &[
    "TABLE",
    "TABLES",
    "INDEX",
    "VIEW",
    "TRIGGER",
    "PROCEDURE",
    "FUNCTION",
    "EVENT",
    "TABLESPACE",
    "ROLE",
    "SERVER",
    "ENGINE",
    "INSTANCE",
    "LOGFILE",
    "RESOURCE",
    "SPATIAL",
    "STATUS",
];

/// How MySQL names a statement in "doesn't yet support '...'": its leading
/// keywords up to and including the kind of object (`CREATE TABLE`).
pub(crate) fn statement_kind(text: &str, toks: &[Token]) -> String {
    let mut words = Vec::new();
    for t in toks.iter().take(4) {
        if !matches!(t.tok, Tok::Word(_)) {
            break;
        }
        let w = text[t.start..t.end].to_ascii_uppercase();
        let stop = OBJECT_KINDS.contains(&w.as_str());
        words.push(w);
        if stop {
            break;
        }
    }
    if !words.iter().any(|w| OBJECT_KINDS.contains(&w.as_str())) {
        words.truncate(2);
    }
    words.join(" ")
}

/// Parses `SET ...`.
pub(crate) fn parse_set(c: &mut Cursor<'_>) -> R<Statement> {
    c.expect_kw("SET")?;
    // SET [scope] TRANSACTION ...
    let save = c.pos;
    let tx_scope = if c.kw("GLOBAL") {
        Some(TxScope::Global)
    } else if c.kw("SESSION") || c.kw("LOCAL") {
        Some(TxScope::Session)
    } else {
        None
    };
    if c.kw("TRANSACTION") {
        return parse_set_transaction(c, tx_scope.unwrap_or(TxScope::Next));
    }
    c.pos = save;
    if c.kw("PASSWORD") {
        let user = if c.kw("FOR") { Some(c.user()?) } else { None };
        if !c.punct("=") {
            c.expect_kw("TO")?;
        }
        let password = c.string()?;
        c.end()?;
        return Ok(Statement::SetPassword { user, password });
    }
    if c.kw("NAMES") {
        if c.kw("DEFAULT") {
            c.end()?;
            return Ok(Statement::SetNames {
                charset: None,
                collation: None,
            });
        }
        let charset = c.ident_or_string()?;
        let collation = if c.kw("COLLATE") {
            Some(c.ident_or_string()?)
        } else {
            None
        };
        c.end()?;
        return Ok(Statement::SetNames {
            charset: Some(charset),
            collation,
        });
    }
    if c.kws(&["CHARACTER", "SET"]) || c.kw("CHARSET") {
        let charset = if c.kw("DEFAULT") {
            None
        } else {
            Some(c.ident_or_string()?)
        };
        c.end()?;
        return Ok(Statement::SetCharacterSet(charset));
    }
    let mut items = Vec::new();
    let mut scope = Scope::Implicit;
    loop {
        if c.kw("GLOBAL") {
            scope = Scope::Global;
        } else if c.kw("SESSION") || c.kw("LOCAL") {
            scope = Scope::Session;
        } else if c.kw("PERSIST") || c.kw("PERSIST_ONLY") {
            return Err(SqlError::NotSupportedYet("SET PERSIST".into()));
        }
        let target = match c.peek().map(|t| &t.tok) {
            Some(Tok::UserVar(name)) => {
                c.pos += 1;
                SetTarget::User(name.clone())
            }
            Some(Tok::SysVar(text)) => {
                c.pos += 1;
                let (s, name) = split_sysvar(text);
                SetTarget::System {
                    scope: s.unwrap_or(scope),
                    name,
                }
            }
            Some(Tok::Word(_)) | Some(Tok::Quoted(_)) => {
                let name = c.ident()?;
                SetTarget::System { scope, name }
            }
            _ => return Err(c.error()),
        };
        if !(c.punct("=") || c.punct(":=")) {
            return Err(c.error());
        }
        let value = set_value(c, matches!(target, SetTarget::System { .. }))?;
        items.push((target, value));
        if !c.punct(",") {
            break;
        }
    }
    c.end()?;
    Ok(Statement::Set(items))
}

/// `global.x` -> (Some(Global), "x"); `x` -> (None, "x").
pub(crate) fn split_sysvar(text: &str) -> (Option<Scope>, String) {
    if let Some((scope, name)) = text.split_once('.') {
        let s = match scope.to_ascii_lowercase().as_str() {
            "global" => Some(Scope::Global),
            "session" | "local" => Some(Scope::Session),
            _ => None,
        };
        if s.is_some() {
            return (s, name.to_string());
        }
    }
    (None, text.to_string())
}

fn set_value(c: &mut Cursor<'_>, system: bool) -> R<SetValue> {
    let single = c.peek_at(1).is_none_or(|t| t.is_punct(","));
    if system && single {
        if let Some(Tok::Word(w)) = c.peek().map(|t| &t.tok) {
            let upper = w.to_ascii_uppercase();
            if upper == "DEFAULT" {
                c.pos += 1;
                return Ok(SetValue::Default);
            }
            if !matches!(upper.as_str(), "TRUE" | "FALSE" | "NULL") {
                c.pos += 1;
                return Ok(SetValue::Word(w.clone()));
            }
        }
        if let Some(Tok::Quoted(q)) = c.peek().map(|t| &t.tok) {
            c.pos += 1;
            return Ok(SetValue::Word(q.clone()));
        }
    }
    if c.peek().is_some_and(|t| t.is_kw("DEFAULT")) && single {
        c.pos += 1;
        return Ok(SetValue::Default);
    }
    Ok(SetValue::Expr(Box::new(c.expr_until(&[])?)))
}

/// A transaction access mode, consumed: `READ ONLY` is `Some(true)`, `READ
/// WRITE` `Some(false)`; anything else `None` (nothing consumed).
fn access_mode(c: &mut Cursor<'_>) -> Option<bool> {
    if c.kws(&["READ", "ONLY"]) {
        Some(true)
    } else if c.kws(&["READ", "WRITE"]) {
        Some(false)
    } else {
        None
    }
}

fn parse_set_transaction(c: &mut Cursor<'_>, scope: TxScope) -> R<Statement> {
    let mut isolation = None;
    let mut read_only = None;
    loop {
        if c.kws(&["ISOLATION", "LEVEL"]) {
            isolation = Some(if c.kws(&["REPEATABLE", "READ"]) {
                "REPEATABLE-READ"
            } else if c.kws(&["READ", "COMMITTED"]) {
                "READ-COMMITTED"
            } else if c.kws(&["READ", "UNCOMMITTED"]) {
                "READ-UNCOMMITTED"
            } else if c.kw("SERIALIZABLE") {
                "SERIALIZABLE"
            } else {
                return Err(c.error());
            });
        } else if let Some(mode) = access_mode(c) {
            read_only = Some(mode);
        } else {
            return Err(c.error());
        }
        if !c.punct(",") {
            break;
        }
    }
    c.end()?;
    Ok(Statement::SetTransaction {
        scope,
        isolation,
        read_only,
    })
}

fn limit(c: &mut Cursor<'_>) -> R<Option<(u64, u64)>> {
    if !c.kw("LIMIT") {
        return Ok(None);
    }
    let num = |c: &mut Cursor<'_>| -> R<u64> {
        match c.peek().map(|t| &t.tok) {
            Some(Tok::Number(n)) => {
                c.pos += 1;
                n.parse().map_err(|_| c.error())
            }
            _ => Err(c.error()),
        }
    };
    let a = num(c)?;
    if c.punct(",") {
        let b = num(c)?;
        Ok(Some((a, b)))
    } else if c.kw("OFFSET") {
        let b = num(c)?;
        Ok(Some((b, a)))
    } else {
        Ok(Some((0, a)))
    }
}

fn table_name(c: &mut Cursor<'_>) -> R<TableRef> {
    let first = c.ident()?;
    if c.punct(".") {
        let name = c.ident()?;
        Ok(TableRef {
            schema: Some(first),
            name,
        })
    } else {
        Ok(TableRef {
            schema: None,
            name: first,
        })
    }
}

/// Parses `SHOW ...`.
pub(crate) fn parse_show(c: &mut Cursor<'_>) -> R<Statement> {
    c.expect_kw("SHOW")?;
    let show = if c.kw("DATABASES") || c.kw("SCHEMAS") {
        Show::Databases(c.filter()?)
    } else if c.kw("PROCESSLIST") {
        Show::ProcessList { full: false }
    } else if c.kws(&["FULL", "PROCESSLIST"]) {
        Show::ProcessList { full: true }
    } else if c.kw("GRANTS") {
        let user = if c.kw("FOR") { Some(c.user()?) } else { None };
        if c.kw("USING") {
            return Err(SqlError::NotSupportedYet("SHOW GRANTS ... USING".into()));
        }
        Show::Grants(user)
    } else if c.kws(&["CREATE", "USER"]) {
        Show::CreateUser(c.user()?)
    } else if c.kws(&["CREATE", "DATABASE"]) || c.kws(&["CREATE", "SCHEMA"]) {
        let if_not_exists = c.kws(&["IF", "NOT", "EXISTS"]);
        Show::CreateDatabase {
            name: c.ident()?,
            if_not_exists,
        }
    } else if c.kws(&["CREATE", "TABLE"]) || c.kws(&["CREATE", "VIEW"]) {
        let t = table_name(c)?;
        c.end()?;
        return Ok(Statement::TableAccess {
            privilege: "SELECT",
            tables: vec![t],
        });
    } else if c.kw("WARNINGS") {
        Show::Warnings {
            errors_only: false,
            limit: limit(c)?,
        }
    } else if c.kw("ERRORS") {
        Show::Warnings {
            errors_only: true,
            limit: limit(c)?,
        }
    } else if c.kw("COUNT") {
        c.expect_punct("(")?;
        c.expect_punct("*")?;
        c.expect_punct(")")?;
        if c.kw("WARNINGS") {
            Show::WarningCount { errors_only: false }
        } else {
            c.expect_kw("ERRORS")?;
            Show::WarningCount { errors_only: true }
        }
    } else if c.kw("ENGINES") || c.kws(&["STORAGE", "ENGINES"]) {
        Show::Engines
    } else if c.kws(&["CHARACTER", "SET"]) || c.kw("CHARSET") {
        Show::Charsets(c.filter()?)
    } else if c.kw("COLLATION") {
        Show::Collations(c.filter()?)
    } else if c.kw("PRIVILEGES") {
        Show::Privileges
    } else if c.kws(&["FULL", "TABLES"]) || c.kw("TABLES") {
        let full = c.toks.get(1).is_some_and(|t| t.is_kw("FULL"));
        let db = if c.kw("FROM") || c.kw("IN") {
            Some(c.ident()?)
        } else {
            None
        };
        Show::Tables {
            full,
            db,
            filter: c.filter()?,
        }
    } else if c.kw("COLUMNS")
        || c.kw("FIELDS")
        || c.kws(&["FULL", "COLUMNS"])
        || c.kws(&["FULL", "FIELDS"])
        || c.kw("INDEX")
        || c.kw("INDEXES")
        || c.kw("KEYS")
    {
        if !(c.kw("FROM") || c.kw("IN")) {
            return Err(c.error());
        }
        let mut t = table_name(c)?;
        if c.kw("FROM") || c.kw("IN") {
            t.schema = Some(c.ident()?);
        }
        return Ok(Statement::TableAccess {
            privilege: "SELECT",
            tables: vec![t],
        });
    } else {
        let scope = c.scope();
        if c.kw("VARIABLES") {
            Show::Variables(scope, c.filter()?)
        } else if c.kw("STATUS") {
            Show::Status(scope, c.filter()?)
        } else if scope == Scope::Implicit {
            return Err(c.not_supported());
        } else {
            return Err(c.error());
        }
    };
    c.end()?;
    Ok(Statement::Show(show))
}

fn auth(c: &mut Cursor<'_>) -> R<Option<AuthSpec>> {
    if !c.kw("IDENTIFIED") {
        return Ok(None);
    }
    let mut spec = AuthSpec {
        plugin: None,
        password: None,
        hashed: None,
    };
    if c.kw("WITH") {
        spec.plugin = Some(c.ident_or_string()?);
        if c.kw("BY") {
            if c.kws(&["RANDOM", "PASSWORD"]) {
                return Err(SqlError::NotSupportedYet(
                    "IDENTIFIED BY RANDOM PASSWORD".into(),
                ));
            }
            spec.password = Some(c.string()?);
        } else if c.kw("AS") {
            spec.hashed = Some(match c.peek().map(|t| &t.tok) {
                Some(Tok::Str { bytes, .. }) => bytes.clone(),
                Some(Tok::Hex(bytes)) => bytes.clone(),
                _ => return Err(c.error()),
            });
            c.pos += 1;
        }
    } else {
        c.expect_kw("BY")?;
        if c.kws(&["RANDOM", "PASSWORD"]) {
            return Err(SqlError::NotSupportedYet(
                "IDENTIFIED BY RANDOM PASSWORD".into(),
            ));
        }
        spec.password = Some(c.string()?);
    }
    Ok(Some(spec))
}

/// Account options `SHOW CREATE USER` prints with their default values;
/// accepted (they change nothing). Anything else is not supported yet.
fn account_options(c: &mut Cursor<'_>) -> R<()> {
    loop {
        if c.at_end() {
            return Ok(());
        }
        let accepted = c.kws(&["REQUIRE", "NONE"])
            || c.kws(&["ACCOUNT", "UNLOCK"])
            || c.kws(&["PASSWORD", "EXPIRE", "DEFAULT"])
            || c.kws(&["PASSWORD", "EXPIRE", "NEVER"])
            || c.kws(&["PASSWORD", "HISTORY", "DEFAULT"])
            || c.kws(&["PASSWORD", "REUSE", "INTERVAL", "DEFAULT"])
            || c.kws(&["PASSWORD", "REQUIRE", "CURRENT", "DEFAULT"])
            || c.kws(&["PASSWORD", "REQUIRE", "CURRENT", "OPTIONAL"]);
        if !accepted {
            if c.peek().is_some_and(|t| {
                [
                    "REQUIRE",
                    "ACCOUNT",
                    "PASSWORD",
                    "WITH",
                    "DEFAULT",
                    "FAILED_LOGIN_ATTEMPTS",
                    "PASSWORD_LOCK_TIME",
                    "COMMENT",
                    "ATTRIBUTE",
                ]
                .iter()
                .any(|k| t.is_kw(k))
            }) {
                let t = c.peek().map_or("", |t| &c.text[t.start..t.end]);
                return Err(SqlError::NotSupportedYet(format!(
                    "account option {}",
                    t.to_ascii_uppercase()
                )));
            }
            return Err(c.error());
        }
    }
}

fn user_auth_list(c: &mut Cursor<'_>) -> R<Vec<(UserSpec, Option<AuthSpec>)>> {
    let mut users = Vec::new();
    loop {
        let u = if c.kw("USER") {
            c.expect_punct("(")?;
            c.expect_punct(")")?;
            UserSpec::Current
        } else {
            c.user()?
        };
        let a = auth(c)?;
        users.push((u, a));
        if !c.punct(",") {
            break;
        }
    }
    Ok(users)
}

fn privileges(c: &mut Cursor<'_>) -> R<Vec<PrivName>> {
    let mut out = Vec::new();
    let mut words: Vec<String> = Vec::new();
    while let Some(t) = c.peek() {
        if t.is_kw("ON") && !words.is_empty() {
            break;
        }
        match &t.tok {
            Tok::Word(w) => words.push(w.to_ascii_uppercase()),
            Tok::Punct(",") => {
                if words.is_empty() {
                    return Err(c.error());
                }
                out.push(words.join(" "));
                words.clear();
            }
            Tok::Punct("(") => {
                return Err(SqlError::NotSupportedYet("column privileges".into()));
            }
            _ => return Err(c.error()),
        }
        c.pos += 1;
    }
    if words.is_empty() {
        return Err(c.error());
    }
    out.push(words.join(" "));
    Ok(out
        .into_iter()
        .map(|p| {
            if p == "ALL PRIVILEGES" {
                "ALL".to_string()
            } else {
                p
            }
        })
        .collect())
}

fn grant_level(c: &mut Cursor<'_>) -> R<GrantLevel> {
    c.expect_kw("ON")?;
    if c.kw("FUNCTION") || c.kw("PROCEDURE") {
        return Err(SqlError::NotSupportedYet("routine privileges".into()));
    }
    c.kw("TABLE");
    if c.punct("*") {
        if c.punct(".") {
            c.expect_punct("*")?;
            return Ok(GrantLevel::Global);
        }
        return Ok(GrantLevel::Database(None));
    }
    let first = c.ident()?;
    if c.punct(".") {
        if c.punct("*") {
            return Ok(GrantLevel::Database(Some(first)));
        }
        let t = c.ident()?;
        return Ok(GrantLevel::Table(Some(first), t));
    }
    Ok(GrantLevel::Table(None, first))
}

fn parse_grant(c: &mut Cursor<'_>) -> R<Statement> {
    c.expect_kw("GRANT")?;
    if c.peek().is_some_and(|t| t.is_kw("PROXY")) {
        return Err(SqlError::NotSupportedYet("GRANT PROXY".into()));
    }
    let privileges = privileges(c)?;
    let level = grant_level(c)?;
    c.expect_kw("TO")?;
    let users = c.users()?;
    let mut grant_option = false;
    if c.kw("IDENTIFIED") {
        return Err(c.error());
    }
    if c.kws(&["WITH", "GRANT", "OPTION"]) {
        grant_option = true;
    }
    c.end()?;
    Ok(Statement::Grant {
        privileges,
        level,
        users,
        grant_option,
    })
}

fn parse_revoke(c: &mut Cursor<'_>) -> R<Statement> {
    c.expect_kw("REVOKE")?;
    c.kws(&["IF", "EXISTS"]);
    // REVOKE ALL [PRIVILEGES], GRANT OPTION FROM user
    let save = c.pos;
    if c.kw("ALL") {
        c.kw("PRIVILEGES");
        if c.punct(",") && c.kws(&["GRANT", "OPTION"]) && c.kw("FROM") {
            let users = c.users()?;
            c.end()?;
            return Ok(Statement::Revoke {
                privileges: vec!["ALL".into(), "GRANT OPTION".into()],
                level: GrantLevel::Global,
                users,
            });
        }
        c.pos = save;
    }
    let privileges = privileges(c)?;
    let level = grant_level(c)?;
    c.expect_kw("FROM")?;
    let users = c.users()?;
    c.end()?;
    Ok(Statement::Revoke {
        privileges,
        level,
        users,
    })
}

fn schema_options(c: &mut Cursor<'_>) -> R<(Option<String>, Option<String>)> {
    let mut charset = None;
    let mut collation = None;
    loop {
        c.kw("DEFAULT");
        if c.kws(&["CHARACTER", "SET"]) || c.kw("CHARSET") {
            c.punct("=");
            charset = Some(c.ident_or_string()?);
        } else if c.kw("COLLATE") {
            c.punct("=");
            collation = Some(c.ident_or_string()?);
        } else if c.kw("ENCRYPTION") {
            c.punct("=");
            let v = c.string()?;
            if !v.eq_ignore_ascii_case("N") {
                return Err(SqlError::NotSupportedYet("ENCRYPTION='Y'".into()));
            }
        } else {
            break;
        }
    }
    c.end()?;
    Ok((charset, collation))
}

fn table_list(c: &mut Cursor<'_>) -> R<Vec<TableRef>> {
    let mut v = vec![table_name(c)?];
    while c.punct(",") {
        v.push(table_name(c)?);
    }
    Ok(v)
}

fn parse_create(c: &mut Cursor<'_>) -> R<Statement> {
    c.expect_kw("CREATE")?;
    if c.kw("USER") {
        let if_not_exists = c.kws(&["IF", "NOT", "EXISTS"]);
        let users = user_auth_list(c)?;
        if c.kws(&["DEFAULT", "ROLE"]) {
            return Err(SqlError::NotSupportedYet("DEFAULT ROLE".into()));
        }
        account_options(c)?;
        return Ok(Statement::CreateUser {
            if_not_exists,
            users,
        });
    }
    if c.kw("DATABASE") || c.kw("SCHEMA") {
        let if_not_exists = c.kws(&["IF", "NOT", "EXISTS"]);
        let name = c.ident()?;
        let (charset, collation) = schema_options(c)?;
        return Ok(Statement::CreateDatabase {
            name,
            if_not_exists,
            charset,
            collation,
        });
    }
    Err(c.not_supported())
}

fn parse_drop(c: &mut Cursor<'_>) -> R<Statement> {
    c.expect_kw("DROP")?;
    if c.kw("USER") {
        let if_exists = c.kws(&["IF", "EXISTS"]);
        let users = c.users()?;
        c.end()?;
        return Ok(Statement::DropUser { if_exists, users });
    }
    if c.kw("DATABASE") || c.kw("SCHEMA") {
        let if_exists = c.kws(&["IF", "EXISTS"]);
        let name = c.ident()?;
        c.end()?;
        return Ok(Statement::DropDatabase { name, if_exists });
    }
    if c.kw("PREPARE") {
        let name = c.ident()?;
        c.end()?;
        return Ok(Statement::Deallocate(name));
    }
    let temporary = c.kw("TEMPORARY");
    if c.kw("TABLE") || c.kw("TABLES") {
        let if_exists = c.kws(&["IF", "EXISTS"]);
        let tables = table_list(c)?;
        let _ = c.kw("RESTRICT") || c.kw("CASCADE");
        c.end()?;
        let _ = temporary;
        return Ok(Statement::DropTable { if_exists, tables });
    }
    Err(c.not_supported())
}

fn parse_alter(c: &mut Cursor<'_>) -> R<Statement> {
    c.expect_kw("ALTER")?;
    if c.kw("USER") {
        let if_exists = c.kws(&["IF", "EXISTS"]);
        let users = user_auth_list(c)?;
        account_options(c)?;
        return Ok(Statement::AlterUser { if_exists, users });
    }
    Err(c.not_supported())
}

fn parse_rename(c: &mut Cursor<'_>) -> R<Statement> {
    c.expect_kw("RENAME")?;
    if !c.kw("USER") {
        return Err(c.not_supported());
    }
    let mut pairs = Vec::new();
    loop {
        let from = c.user()?;
        c.expect_kw("TO")?;
        let to = c.user()?;
        pairs.push((from, to));
        if !c.punct(",") {
            break;
        }
    }
    c.end()?;
    Ok(Statement::RenameUser(pairs))
}

fn name_of(c: &mut Cursor<'_>) -> R<String> {
    c.ident()
}

/// Dispatches on the first keyword; `None` means "not a family this
/// pre-parser owns" (the caller tries sqlparser).
pub(crate) fn parse_admin(c: &mut Cursor<'_>) -> Option<R<Statement>> {
    let first = c.peek()?;
    let word = match &first.tok {
        Tok::Word(w) => w.to_ascii_uppercase(),
        _ => return None,
    };
    let second = c
        .peek_at(1)
        .and_then(|t| match &t.tok {
            Tok::Word(w) => Some(w.to_ascii_uppercase()),
            _ => None,
        })
        .unwrap_or_default();
    Some(match word.as_str() {
        "SET" => parse_set(c),
        "SHOW" => parse_show(c),
        "GRANT" => parse_grant(c),
        "REVOKE" => parse_revoke(c),
        "CREATE" => parse_create(c),
        "DROP" => parse_drop(c),
        "ALTER" => parse_alter(c),
        "RENAME" => parse_rename(c),
        "USE" => (|| {
            c.pos += 1;
            let db = c.ident()?;
            c.end()?;
            Ok(Statement::Use(db))
        })(),
        "KILL" => (|| {
            c.pos += 1;
            let kind = if c.kw("QUERY") {
                KillKind::Query
            } else {
                c.kw("CONNECTION");
                KillKind::Connection
            };
            let id = Box::new(c.expr_until(&[])?);
            c.end()?;
            Ok(Statement::Kill { kind, id })
        })(),
        "FLUSH" => (|| {
            c.pos += 1;
            let _ = c.kw("NO_WRITE_TO_BINLOG") || c.kw("LOCAL");
            let what = c.ident()?.to_ascii_uppercase();
            while !c.at_end() {
                c.pos += 1;
            }
            Ok(Statement::Flush(what))
        })(),
        "BEGIN" => (|| {
            c.pos += 1;
            c.kw("WORK");
            c.end()?;
            Ok(Statement::Begin { read_only: None })
        })(),
        "START" if second == "TRANSACTION" => (|| {
            c.pos += 2;
            let mut read_only = None;
            loop {
                if c.at_end() {
                    break;
                }
                if c.kws(&["WITH", "CONSISTENT", "SNAPSHOT"]) {
                } else if let Some(mode) = access_mode(c) {
                    read_only = Some(mode);
                } else {
                    return Err(c.error());
                }
                if !c.punct(",") {
                    break;
                }
            }
            c.end()?;
            Ok(Statement::Begin { read_only })
        })(),
        "COMMIT" => (|| {
            c.pos += 1;
            c.kw("WORK");
            if c.kw("AND") {
                c.kw("NO");
                c.expect_kw("CHAIN")?;
            }
            let _ = c.kws(&["NO", "RELEASE"]) || c.kw("RELEASE");
            c.end()?;
            Ok(Statement::Commit)
        })(),
        "ROLLBACK" => (|| {
            c.pos += 1;
            c.kw("WORK");
            if c.kw("TO") {
                c.kw("SAVEPOINT");
                let name = name_of(c)?;
                c.end()?;
                return Ok(Statement::RollbackTo(name));
            }
            if c.kw("AND") {
                c.kw("NO");
                c.expect_kw("CHAIN")?;
            }
            let _ = c.kws(&["NO", "RELEASE"]) || c.kw("RELEASE");
            c.end()?;
            Ok(Statement::Rollback)
        })(),
        "SAVEPOINT" => (|| {
            c.pos += 1;
            let name = name_of(c)?;
            c.end()?;
            Ok(Statement::Savepoint(name))
        })(),
        "RELEASE" => (|| {
            c.pos += 1;
            c.expect_kw("SAVEPOINT")?;
            let name = name_of(c)?;
            c.end()?;
            Ok(Statement::ReleaseSavepoint(name))
        })(),
        "DO" => (|| {
            c.pos += 1;
            let mut exprs = vec![c.expr_until(&[])?];
            while c.punct(",") {
                exprs.push(c.expr_until(&[])?);
            }
            c.end()?;
            Ok(Statement::Do(exprs))
        })(),
        "PREPARE" => (|| {
            c.pos += 1;
            let name = name_of(c)?;
            c.expect_kw("FROM")?;
            let source = match c.peek().map(|t| &t.tok) {
                Some(Tok::Str { bytes, .. }) => {
                    PrepareSource::Text(String::from_utf8_lossy(bytes).into_owned())
                }
                Some(Tok::UserVar(v)) => PrepareSource::Var(v.clone()),
                _ => return Err(c.error()),
            };
            c.pos += 1;
            c.end()?;
            Ok(Statement::Prepare { name, source })
        })(),
        "EXECUTE" => (|| {
            c.pos += 1;
            let name = name_of(c)?;
            let mut using = Vec::new();
            if c.kw("USING") {
                loop {
                    match c.peek().map(|t| &t.tok) {
                        Some(Tok::UserVar(v)) => using.push(v.clone()),
                        _ => return Err(c.error()),
                    }
                    c.pos += 1;
                    if !c.punct(",") {
                        break;
                    }
                }
            }
            c.end()?;
            Ok(Statement::Execute { name, using })
        })(),
        "DEALLOCATE" => (|| {
            c.pos += 1;
            c.expect_kw("PREPARE")?;
            let name = name_of(c)?;
            c.end()?;
            Ok(Statement::Deallocate(name))
        })(),
        "LOCK" | "UNLOCK" | "TRUNCATE" | "OPTIMIZE" | "ANALYZE" | "CHECK" | "REPAIR" | "LOAD"
        | "HANDLER" | "CALL" | "INSTALL" | "UNINSTALL" | "RESET" | "PURGE" | "CHANGE" | "XA"
        | "SHUTDOWN" | "RESTART" | "CLONE" | "IMPORT" | "CACHE" | "BINLOG" => {
            Err(c.not_supported())
        }
        _ => return None,
    })
}
