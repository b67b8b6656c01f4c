//! The binder: sqlparser expressions to typed [`Expr`] trees.
//!
//! Type inference follows MySQL's rules for result metadata:
//!
//! | expression                  | type                                         |
//! |-----------------------------|----------------------------------------------|
//! | `1`, `-5`                   | `BIGINT` (`UNSIGNED` above `i64::MAX`)       |
//! | `1.50`                      | `DECIMAL(3,2)`                               |
//! | `1e3`                       | `DOUBLE`                                     |
//! | `'x'`, `_utf8mb4'x'`        | `VARCHAR` in the connection / introducer collation |
//! | `x'41'`, `b'1'`, `_binary'x'` | `VARBINARY`                                |
//! | `a + b`, `a - b`, `a * b`   | int if both int; else decimal if both exact; else double |
//! | `a / b`                     | decimal (scale + `div_precision_increment`) if both exact, else double |
//! | `a DIV b`                   | `BIGINT`                                     |
//! | comparisons, logic          | `BIGINT(1)`                                  |
//! | `IF`, `CASE`, `COALESCE`... | the aggregate of the branches                |

use basalt_config::{Qualifier, SessionVars, SysValue};
use sqlparser::ast::{self as sql, DataType, FunctionArg, FunctionArgExpr, FunctionArguments};

use super::{func, BinaryOp, CastTarget, Expr, ExprKind, IsTest, UnaryOp, UserVars};
use crate::error::{SqlError, SqlResult};
use crate::value::decimal::{Decimal, DIV_PRECISION_INCREMENT, MAX_SCALE};
use crate::value::{temporal, Collation, SqlType, TypeKind, Value};

/// What the binder may look at.
#[derive(Debug, Clone, Copy)]
pub struct BindContext<'a> {
    /// The session's system variables (`@@x`).
    pub session_vars: Option<&'a SessionVars>,
    /// User variables (their current types).
    pub user_vars: &'a UserVars,
    /// Parameter values for `?`; `None` while preparing (types unknown).
    pub params: Option<&'a [(Value, SqlType)]>,
    /// `collation_connection`: the collation of string literals.
    pub collation: Collation,
    /// Current schema (for the unknown-function error).
    pub db: Option<&'a str>,
    /// Columns of the current row (`SHOW ... WHERE`).
    pub columns: &'a [(String, SqlType)],
    /// `@@warning_count` (warnings of the previous statement).
    pub warning_count: u64,
    /// `@@error_count`.
    pub error_count: u64,
    /// `@@last_insert_id`, `@@identity`.
    pub last_insert_id: u64,
    /// `PIPES_AS_CONCAT` in `sql_mode`.
    pub pipes_as_concat: bool,
}

/// Binds expressions of one statement; numbers `?` in order.
#[derive(Debug)]
pub struct Binder<'a> {
    ctx: BindContext<'a>,
    next_param: usize,
}

fn lit(value: Value, ty: SqlType, text: String) -> Expr {
    Expr {
        kind: ExprKind::Literal { value, text },
        ty,
    }
}

/// Length in characters of an integer's text.
fn int_len(v: i128) -> u32 {
    v.to_string().len() as u32
}

/// The type of an integer literal and its value.
pub fn int_literal(text: &str) -> Option<(Value, SqlType)> {
    if let Ok(v) = text.parse::<i64>() {
        return Some((Value::Int(v), SqlType::int(int_len(i128::from(v)))));
    }
    if let Ok(v) = text.parse::<u64>() {
        return Some((Value::UInt(v), SqlType::uint(int_len(i128::from(v)))));
    }
    None
}

fn number_literal(text: &str) -> SqlResult<(Value, SqlType)> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if let Some(r) = int_literal(text) {
            return Ok(r);
        }
    }
    if text.contains(['e', 'E']) {
        let v: f64 = text
            .parse()
            .map_err(|_| SqlError::Internal(format!("bad number {text}")))?;
        if !v.is_finite() {
            return Err(SqlError::OutOfRange {
                type_name: "DOUBLE",
                expr: text.to_string(),
            });
        }
        let mut ty = SqlType::double();
        ty.length = text.len() as u32;
        return Ok((Value::Double(v), ty));
    }
    match Decimal::parse(text) {
        Some(d) => {
            let ty = SqlType::decimal(d.precision() as u32, d.scale());
            Ok((Value::Decimal(d), ty))
        }
        None => {
            let v: f64 = text.parse().unwrap_or(0.0);
            Ok((Value::Double(v), SqlType::double()))
        }
    }
}

fn string_type(bytes: &[u8], collation: Collation) -> SqlType {
    let chars = if collation.is_binary() {
        bytes.len()
    } else {
        String::from_utf8_lossy(bytes).chars().count()
    };
    SqlType::string(chars as u32, collation)
}

fn quote_text(bytes: &[u8]) -> String {
    format!("'{}'", String::from_utf8_lossy(bytes).replace('\'', "\\'"))
}

/// The aggregate type of several branches (MySQL's `agg_result_type`).
pub fn aggregate(types: &[SqlType]) -> SqlType {
    let nullable = types.iter().any(|t| t.nullable);
    let real: Vec<&SqlType> = types.iter().filter(|t| t.kind != TypeKind::Null).collect();
    if real.is_empty() {
        return SqlType::null();
    }
    let nullable = nullable || real.len() < types.len();
    let all = |f: &dyn Fn(&SqlType) -> bool| real.iter().all(|t| f(t));
    let ty = if all(&|t| matches!(t.kind, TypeKind::Int | TypeKind::Year | TypeKind::Bit)) {
        let len = real.iter().map(|t| t.length).max().unwrap_or(1);
        if all(&|t| t.unsigned) {
            SqlType::uint(len)
        } else {
            SqlType::int(len)
        }
    } else if all(&|t| {
        matches!(
            t.kind,
            TypeKind::Int | TypeKind::Year | TypeKind::Bit | TypeKind::Decimal
        )
    }) {
        let scale = real
            .iter()
            .map(|t| {
                if t.kind == TypeKind::Decimal {
                    t.decimals
                } else {
                    0
                }
            })
            .max()
            .unwrap_or(0);
        let int_digits = real.iter().map(|t| integer_digits(t)).max().unwrap_or(1);
        SqlType::decimal(int_digits + u32::from(scale), scale)
    } else if all(&|t| t.is_numeric()) {
        SqlType::double()
    } else if all(&|t| t.kind == real[0].kind && t.is_temporal()) {
        let fsp = real.iter().map(|t| t.decimals).max().unwrap_or(0);
        match real[0].kind {
            TypeKind::Date => SqlType::date(),
            TypeKind::Time => SqlType::time(fsp),
            TypeKind::Timestamp => SqlType::timestamp(fsp),
            _ => SqlType::datetime(fsp),
        }
    } else if all(&|t| {
        matches!(
            t.kind,
            TypeKind::Date | TypeKind::DateTime | TypeKind::Timestamp
        )
    }) {
        SqlType::datetime(real.iter().map(|t| t.decimals).max().unwrap_or(0))
    } else {
        let binary = real
            .iter()
            .any(|t| t.kind == TypeKind::String && t.collation.is_binary());
        let collation = if binary {
            Collation::BINARY
        } else {
            real.iter()
                .find(|t| t.is_text())
                .map_or(Collation::DEFAULT, |t| t.collation)
        };
        let len = real.iter().map(|t| t.length).max().unwrap_or(0);
        SqlType::string(len, collation)
    };
    ty.with_nullable(nullable)
}

/// Digits before the point of a numeric type.
pub fn integer_digits(t: &SqlType) -> u32 {
    match t.kind {
        TypeKind::Decimal => t
            .length
            .saturating_sub(1 + u32::from(t.decimals > 0) + u32::from(t.decimals))
            .max(1),
        TypeKind::Int | TypeKind::Year | TypeKind::Bit => t.length.max(1),
        _ => 17,
    }
}

/// Result type of an arithmetic operator.
pub fn arith_type(op: BinaryOp, l: &SqlType, r: &SqlType) -> SqlType {
    let nullable =
        l.nullable || r.nullable || matches!(op, BinaryOp::Div | BinaryOp::IntDiv | BinaryOp::Mod);
    if l.kind == TypeKind::Null || r.kind == TypeKind::Null {
        return SqlType::null();
    }
    let exact = |t: &SqlType| {
        matches!(
            t.kind,
            TypeKind::Int | TypeKind::Year | TypeKind::Bit | TypeKind::Decimal
        )
    };
    let int = |t: &SqlType| matches!(t.kind, TypeKind::Int | TypeKind::Year | TypeKind::Bit);
    let ty = match op {
        BinaryOp::IntDiv => {
            let len = integer_digits(l).max(1);
            if l.unsigned || r.unsigned {
                SqlType::uint(len)
            } else {
                SqlType::int(len)
            }
        }
        BinaryOp::Div => {
            if exact(l) && exact(r) {
                let ls = if l.kind == TypeKind::Decimal {
                    l.decimals
                } else {
                    0
                };
                let scale = (ls + DIV_PRECISION_INCREMENT).min(MAX_SCALE);
                let digits = integer_digits(l)
                    + u32::from(if r.kind == TypeKind::Decimal {
                        r.decimals
                    } else {
                        0
                    });
                SqlType::decimal(digits + u32::from(scale), scale)
            } else {
                SqlType::double()
            }
        }
        _ if int(l) && int(r) => {
            let len = match op {
                BinaryOp::Mul => l.length + r.length,
                BinaryOp::Mod => l.length.max(r.length),
                _ => l.length.max(r.length) + 1,
            };
            if l.unsigned || r.unsigned {
                SqlType::uint(len.min(20))
            } else {
                SqlType::int(len.min(21))
            }
        }
        _ if exact(l) && exact(r) => {
            let (ls, rs) = (
                if l.kind == TypeKind::Decimal {
                    l.decimals
                } else {
                    0
                },
                if r.kind == TypeKind::Decimal {
                    r.decimals
                } else {
                    0
                },
            );
            let (digits, scale) = match op {
                BinaryOp::Mul => (
                    integer_digits(l) + integer_digits(r),
                    (ls + rs).min(MAX_SCALE),
                ),
                _ => (integer_digits(l).max(integer_digits(r)) + 1, ls.max(rs)),
            };
            SqlType::decimal(digits + u32::from(scale), scale)
        }
        _ => SqlType::double(),
    };
    ty.with_nullable(nullable)
}

fn sysvar_value(v: SysValue) -> (Value, SqlType) {
    match v {
        SysValue::Null => (Value::Null, SqlType::null()),
        SysValue::Bool(b) => (Value::Int(i64::from(b)), SqlType::int(1)),
        SysValue::Int(i) => (Value::Int(i), SqlType::int(int_len(i128::from(i)).max(1))),
        SysValue::UInt(u) => (Value::UInt(u), SqlType::uint(int_len(i128::from(u)).max(1))),
        SysValue::Double(d) => (Value::Double(d), SqlType::double()),
        other => {
            let text = other.to_string();
            let ty = SqlType::string(text.chars().count() as u32, Collation::DEFAULT);
            (Value::text(text), ty)
        }
    }
}

/// Functions MySQL lets you call without parentheses.
const BARE_FUNCTIONS: &[&str] = &[
    "CURRENT_TIMESTAMP",
    "CURRENT_DATE",
    "CURRENT_TIME",
    "CURRENT_USER",
    "LOCALTIME",
    "LOCALTIMESTAMP",
    "UTC_TIMESTAMP",
    "UTC_DATE",
    "UTC_TIME",
];

impl<'a> Binder<'a> {
    /// A binder over `ctx`.
    pub fn new(ctx: BindContext<'a>) -> Binder<'a> {
        Binder { ctx, next_param: 0 }
    }

    /// Placeholders seen so far.
    pub fn params_used(&self) -> usize {
        self.next_param
    }

    /// The context.
    pub fn context(&self) -> &BindContext<'a> {
        &self.ctx
    }

    /// The value of `@@scope.name` as a literal.
    pub fn system_variable(&self, qualifier: Qualifier, name: &str) -> SqlResult<(Value, SqlType)> {
        let lower = name.to_ascii_lowercase();
        let count = |n: u64| (Value::UInt(n), SqlType::uint(int_len(i128::from(n))));
        match (lower.as_str(), qualifier) {
            ("warning_count", q) if q != Qualifier::Global => {
                return Ok(count(self.ctx.warning_count))
            }
            ("error_count", q) if q != Qualifier::Global => return Ok(count(self.ctx.error_count)),
            ("identity" | "last_insert_id", q) if q != Qualifier::Global => {
                return Ok(count(self.ctx.last_insert_id))
            }
            _ => {}
        }
        let vars = self
            .ctx
            .session_vars
            .ok_or_else(|| SqlError::Internal("system variables are not available here".into()))?;
        let v = vars.value(qualifier, name)?;
        let (value, ty) = sysvar_value(v);
        Ok((value, ty.with_nullable(true)))
    }

    fn sysvar(&self, text: &str) -> SqlResult<Expr> {
        // text after "@@": [global.|session.|local.]name
        let (qualifier, name) = match text.split_once('.') {
            Some((scope, name)) => match scope.to_ascii_lowercase().as_str() {
                "global" => (Qualifier::Global, name),
                "session" | "local" => (Qualifier::Session, name),
                _ => (Qualifier::Implicit, text),
            },
            None => (Qualifier::Implicit, text),
        };
        let (value, ty) = self.system_variable(qualifier, name)?;
        let prefix = match qualifier {
            Qualifier::Global => "@@global.",
            Qualifier::Session => "@@session.",
            Qualifier::Implicit => "@@",
        };
        Ok(lit(value, ty, format!("{prefix}{name}")))
    }

    fn user_var(&self, name: &str) -> Expr {
        let key = name.to_ascii_lowercase();
        let ty = match self.ctx.user_vars.get(&key) {
            Some((_, ty)) => ty.with_nullable(true),
            // An unset variable reads as NULL of a (binary) string type.
            None => SqlType::string(0, Collation::BINARY).with_nullable(true),
        };
        let ty = if ty.kind == TypeKind::Null {
            SqlType::string(0, Collation::BINARY).with_nullable(true)
        } else {
            ty
        };
        Expr {
            kind: ExprKind::UserVar(key),
            ty,
        }
    }

    fn column(&self, name: &str) -> SqlResult<Expr> {
        if let Some(i) = self
            .ctx
            .columns
            .iter()
            .position(|(c, _)| c.eq_ignore_ascii_case(name))
        {
            return Ok(Expr {
                kind: ExprKind::Column {
                    index: i,
                    name: self.ctx.columns[i].0.clone(),
                },
                ty: self.ctx.columns[i].1,
            });
        }
        let context = if self.ctx.columns.is_empty() {
            "field list"
        } else {
            "where clause"
        };
        Err(SqlError::UnknownColumn {
            column: name.to_string(),
            context,
        })
    }

    fn param(&mut self) -> SqlResult<Expr> {
        let i = self.next_param;
        self.next_param += 1;
        match self.ctx.params {
            None => Ok(lit(
                Value::Null,
                SqlType::string(0, self.ctx.collation).with_nullable(true),
                "?".into(),
            )),
            Some(params) => {
                let (value, ty) = params
                    .get(i)
                    .cloned()
                    .ok_or(SqlError::WrongParamCount("EXECUTE"))?;
                let text = match &value {
                    Value::Str(b) => quote_text(b),
                    Value::Null => "NULL".into(),
                    other => String::from_utf8_lossy(&crate::value::convert::to_bytes(other))
                        .into_owned(),
                };
                Ok(lit(value, ty.with_nullable(true), text))
            }
        }
    }

    fn value(&mut self, v: &sql::Value) -> SqlResult<Expr> {
        let coll = self.ctx.collation;
        Ok(match v {
            sql::Value::Number(text, _) => {
                let (value, ty) = number_literal(text)?;
                lit(value, ty, text.clone())
            }
            sql::Value::SingleQuotedString(s)
            | sql::Value::DoubleQuotedString(s)
            | sql::Value::NationalStringLiteral(s) => {
                let bytes = s.as_bytes().to_vec();
                let ty = string_type(&bytes, coll);
                let text = quote_text(&bytes);
                lit(Value::Str(bytes), ty, text)
            }
            sql::Value::HexStringLiteral(h) => {
                let bytes = decode_hex(h);
                let ty = string_type(&bytes, Collation::BINARY);
                lit(Value::Str(bytes), ty, format!("0x{h}"))
            }
            sql::Value::SingleQuotedByteStringLiteral(bits)
            | sql::Value::DoubleQuotedByteStringLiteral(bits) => {
                let bytes = decode_bits(bits);
                let ty = string_type(&bytes, Collation::BINARY);
                lit(Value::Str(bytes), ty, format!("b'{bits}'"))
            }
            sql::Value::Boolean(b) => lit(
                Value::Int(i64::from(*b)),
                SqlType::int(1),
                if *b { "true" } else { "false" }.into(),
            ),
            sql::Value::Null => lit(Value::Null, SqlType::null(), "NULL".into()),
            sql::Value::Placeholder(p) if p == "?" => return self.param(),
            other => return Err(SqlError::NotSupportedYet(format!("literal {other}"))),
        })
    }

    /// Binds one expression.
    pub fn bind(&mut self, e: &sql::Expr) -> SqlResult<Expr> {
        use sql::Expr as E;
        match e {
            E::Identifier(id) => self.identifier(id),
            E::CompoundIdentifier(parts) => {
                let first = parts.first().map(|p| p.value.as_str()).unwrap_or("");
                if let Some(scope) = first.strip_prefix("@@") {
                    let rest: Vec<&str> = parts[1..].iter().map(|p| p.value.as_str()).collect();
                    return self.sysvar(&format!("{scope}.{}", rest.join(".")));
                }
                if let Some(name) = first.strip_prefix('@') {
                    let rest: Vec<&str> = parts[1..].iter().map(|p| p.value.as_str()).collect();
                    return Ok(self.user_var(&format!("{name}.{}", rest.join("."))));
                }
                let name: Vec<&str> = parts.iter().map(|p| p.value.as_str()).collect();
                Err(SqlError::UnknownColumn {
                    column: name.join("."),
                    context: "field list",
                })
            }
            E::Value(v) => self.value(&v.value),
            E::Prefixed { prefix, value } => self.introducer(&prefix.value, value),
            E::TypedString(ts) => self.typed_string(&ts.data_type, &ts.value.value),
            E::Nested(inner) => self.bind(inner),
            E::UnaryOp { op, expr } => self.unary(*op, expr),
            E::BinaryOp { left, op, right } => self.binary(left, op, right),
            E::IsNull(x) | E::IsUnknown(x) => self.is(x, IsTest::Null, false),
            E::IsNotNull(x) | E::IsNotUnknown(x) => self.is(x, IsTest::Null, true),
            E::IsTrue(x) => self.is(x, IsTest::True, false),
            E::IsNotTrue(x) => self.is(x, IsTest::True, true),
            E::IsFalse(x) => self.is(x, IsTest::False, false),
            E::IsNotFalse(x) => self.is(x, IsTest::False, true),
            E::IsDistinctFrom(a, b) => {
                let eq = self.make_binary(BinaryOp::NullSafeEq, a, b)?;
                Ok(Expr {
                    ty: SqlType::int(1),
                    kind: ExprKind::Unary(UnaryOp::Not, Box::new(eq)),
                })
            }
            E::IsNotDistinctFrom(a, b) => self.make_binary(BinaryOp::NullSafeEq, a, b),
            E::InList {
                expr,
                list,
                negated,
            } => {
                let x = self.bind(expr)?;
                let mut items = Vec::with_capacity(list.len());
                for i in list {
                    items.push(self.bind(i)?);
                }
                let nullable = x.ty.nullable || items.iter().any(|i| i.ty.nullable);
                Ok(Expr {
                    ty: SqlType::int(1).with_nullable(nullable),
                    kind: ExprKind::In {
                        expr: Box::new(x),
                        list: items,
                        negated: *negated,
                    },
                })
            }
            E::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let x = self.bind(expr)?;
                let lo = self.bind(low)?;
                let hi = self.bind(high)?;
                let nullable = x.ty.nullable || lo.ty.nullable || hi.ty.nullable;
                Ok(Expr {
                    ty: SqlType::int(1).with_nullable(nullable),
                    kind: ExprKind::Between {
                        expr: Box::new(x),
                        low: Box::new(lo),
                        high: Box::new(hi),
                        negated: *negated,
                    },
                })
            }
            E::Like {
                negated,
                any: false,
                expr,
                pattern,
                escape_char,
            } => {
                let x = self.bind(expr)?;
                let p = self.bind(pattern)?;
                let escape = match escape_char {
                    None => Some('\\'),
                    Some(esc) => {
                        let b = self.bind(esc)?;
                        match &b.kind {
                            ExprKind::Literal {
                                value: Value::Str(s),
                                ..
                            } => {
                                let s = String::from_utf8_lossy(s);
                                let mut chars = s.chars();
                                match (chars.next(), chars.next()) {
                                    (None, _) => Some('\\'),
                                    (Some(c), None) => Some(c),
                                    _ => return Err(SqlError::WrongArguments("ESCAPE".into())),
                                }
                            }
                            _ => return Err(SqlError::WrongArguments("ESCAPE".into())),
                        }
                    }
                };
                let nullable = x.ty.nullable || p.ty.nullable;
                Ok(Expr {
                    ty: SqlType::int(1).with_nullable(nullable),
                    kind: ExprKind::Like {
                        expr: Box::new(x),
                        pattern: Box::new(p),
                        escape,
                        negated: *negated,
                    },
                })
            }
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let operand = match operand {
                    Some(o) => Some(Box::new(self.bind(o)?)),
                    None => None,
                };
                let mut whens = Vec::with_capacity(conditions.len());
                for c in conditions {
                    let w = self.bind(&c.condition)?;
                    let t = self.bind(&c.result)?;
                    whens.push((w, t));
                }
                let otherwise = match else_result {
                    Some(e) => Some(Box::new(self.bind(e)?)),
                    None => None,
                };
                let mut types: Vec<SqlType> = whens.iter().map(|(_, t)| t.ty).collect();
                match &otherwise {
                    Some(e) => types.push(e.ty),
                    None => types.push(SqlType::null()),
                }
                Ok(Expr {
                    ty: aggregate(&types),
                    kind: ExprKind::Case {
                        operand,
                        whens,
                        otherwise,
                    },
                })
            }
            E::Cast {
                expr, data_type, ..
            } => {
                let x = self.bind(expr)?;
                let target = cast_target(data_type)?;
                Ok(cast_expr(x, target, self.ctx.collation))
            }
            E::Convert {
                expr,
                data_type,
                charset,
                ..
            } => {
                let x = self.bind(expr)?;
                if let Some(cs) = charset {
                    let name = cs.to_string();
                    let coll = charset_default_collation(&name)?;
                    let mut e = cast_expr(x, CastTarget::Char(None), coll);
                    e.ty.collation = coll;
                    return Ok(e);
                }
                match data_type {
                    Some(dt) => {
                        let target = cast_target(dt)?;
                        Ok(cast_expr(x, target, self.ctx.collation))
                    }
                    None => Err(SqlError::NotSupportedYet("CONVERT".into())),
                }
            }
            E::Collate { expr, collation } => {
                let mut x = self.bind(expr)?;
                let name = collation.to_string().trim_matches('`').to_string();
                let coll = Collation::by_name(&name)
                    .ok_or_else(|| SqlError::UnknownCollation(name.clone()))?;
                if x.ty.kind == TypeKind::String
                    && !x.ty.collation.is_binary()
                    && x.ty.collation.charset != coll.charset
                {
                    return Err(SqlError::CollationCharsetMismatch {
                        collation: coll.name.to_string(),
                        charset: x.ty.collation.charset.to_string(),
                    });
                }
                if x.ty.kind == TypeKind::String {
                    x.ty.collation = coll;
                    x.ty.explicit_collation = true;
                }
                Ok(x)
            }
            E::Function(f) => self.function(f),
            E::Trim {
                trim_where,
                trim_what,
                expr,
                trim_characters,
            } => {
                if trim_characters.is_some() {
                    return Err(SqlError::NotSupportedYet(
                        "TRIM with a character list".into(),
                    ));
                }
                let name = match trim_where {
                    Some(sql::TrimWhereField::Leading) => "TRIM_LEADING",
                    Some(sql::TrimWhereField::Trailing) => "TRIM_TRAILING",
                    _ => "TRIM_BOTH",
                };
                let mut args = vec![self.bind(expr)?];
                if let Some(w) = trim_what {
                    args.push(self.bind(w)?);
                }
                func::bind(name, args, &self.ctx)
            }
            E::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![self.bind(expr)?];
                match substring_from {
                    Some(f) => args.push(self.bind(f)?),
                    None => return Err(SqlError::WrongParameterCount("SUBSTRING".into())),
                }
                if let Some(f) = substring_for {
                    args.push(self.bind(f)?);
                }
                func::bind("SUBSTRING", args, &self.ctx)
            }
            E::Ceil { expr, field } | E::Floor { expr, field } => {
                if !matches!(
                    field,
                    sql::CeilFloorKind::DateTimeField(sql::DateTimeField::NoDateTime)
                ) {
                    return Err(SqlError::NotSupportedYet(
                        "CEIL/FLOOR with a unit or scale".into(),
                    ));
                }
                let name = if matches!(e, E::Ceil { .. }) {
                    "CEIL"
                } else {
                    "FLOOR"
                };
                let arg = self.bind(expr)?;
                func::bind(name, vec![arg], &self.ctx)
            }
            E::Position { expr, r#in } => {
                let a = self.bind(expr)?;
                let b = self.bind(r#in)?;
                func::bind("LOCATE", vec![a, b], &self.ctx)
            }
            E::Tuple(items) => Err(SqlError::OperandColumns(items.len().min(1))),
            E::Subquery(_) | E::Exists { .. } | E::InSubquery { .. } => {
                Err(SqlError::NotSupportedYet("subqueries".into()))
            }
            E::Interval(_) => Err(SqlError::NotSupportedYet("INTERVAL expressions".into())),
            other => Err(SqlError::NotSupportedYet(format!("expression '{other}'"))),
        }
    }

    fn identifier(&mut self, id: &sql::Ident) -> SqlResult<Expr> {
        let name = id.value.as_str();
        if id.quote_style.is_none() {
            if let Some(rest) = name.strip_prefix("@@") {
                return self.sysvar(rest);
            }
            if let Some(rest) = name.strip_prefix('@') {
                return Ok(self.user_var(rest));
            }
            let upper = name.to_ascii_uppercase();
            if BARE_FUNCTIONS.contains(&upper.as_str()) {
                return func::bind(func::canonical(&upper), Vec::new(), &self.ctx);
            }
        }
        self.column(name)
    }

    fn introducer(&mut self, prefix: &str, value: &sql::Expr) -> SqlResult<Expr> {
        let charset = prefix.trim_start_matches('_');
        let coll = charset_default_collation(charset)?;
        let mut x = self.bind(value)?;
        if let ExprKind::Literal {
            value: Value::Str(b),
            ..
        } = &x.kind
        {
            x.ty = string_type(b, coll);
        } else {
            x.ty.collation = coll;
        }
        Ok(x)
    }

    fn typed_string(&mut self, dt: &DataType, v: &sql::Value) -> SqlResult<Expr> {
        let text = match v {
            sql::Value::SingleQuotedString(s) | sql::Value::DoubleQuotedString(s) => s.clone(),
            other => other.to_string(),
        };
        let bad = |ty: &'static str| SqlError::WrongValue {
            type_name: ty,
            value: text.clone(),
        };
        match dt {
            DataType::Date => {
                let d = temporal::parse_date(&text).ok_or_else(|| bad("DATE"))?;
                Ok(lit(
                    Value::Date(d),
                    SqlType::date(),
                    format!("DATE'{text}'"),
                ))
            }
            DataType::Timestamp(..) | DataType::Datetime(_) => {
                let d = temporal::parse_datetime(&text).ok_or_else(|| bad("DATETIME"))?;
                let fsp = if d.micros != 0 { 6 } else { 0 };
                Ok(lit(
                    Value::DateTime(d),
                    SqlType::datetime(fsp),
                    format!("TIMESTAMP'{text}'"),
                ))
            }
            DataType::Time(..) => {
                let t = temporal::parse_time(&text).ok_or_else(|| bad("TIME"))?;
                let fsp = if t.micros != 0 { 6 } else { 0 };
                Ok(lit(
                    Value::Time(t),
                    SqlType::time(fsp),
                    format!("TIME'{text}'"),
                ))
            }
            other => Err(SqlError::NotSupportedYet(format!("{other} literals"))),
        }
    }

    fn unary(&mut self, op: sql::UnaryOperator, expr: &sql::Expr) -> SqlResult<Expr> {
        use sql::UnaryOperator as U;
        // Fold `-literal` so that -9223372036854775808 is a BIGINT.
        if op == U::Minus {
            if let sql::Expr::Value(v) = expr {
                if let sql::Value::Number(text, _) = &v.value {
                    let neg = format!("-{text}");
                    let (value, ty) = number_literal(&neg).or_else(|_| number_literal(text))?;
                    if let Some((value, ty)) = match (&value, ty.kind) {
                        (Value::Int(_) | Value::Decimal(_) | Value::Double(_), _) => {
                            Some((value, ty))
                        }
                        _ => None,
                    } {
                        return Ok(lit(value, ty, neg));
                    }
                    let d = Decimal::parse(&neg).ok_or_else(|| SqlError::OutOfRange {
                        type_name: "DECIMAL",
                        expr: neg.clone(),
                    })?;
                    let ty = SqlType::decimal(d.precision() as u32, d.scale());
                    return Ok(lit(Value::Decimal(d), ty, neg));
                }
            }
        }
        let x = self.bind(expr)?;
        match op {
            U::Plus => Ok(x),
            U::Minus => {
                let ty = match x.ty.kind {
                    TypeKind::Int | TypeKind::Year | TypeKind::Bit => SqlType::int(x.ty.length + 1),
                    TypeKind::Decimal => SqlType {
                        unsigned: false,
                        ..x.ty
                    },
                    TypeKind::Null => SqlType::null(),
                    _ => SqlType::double(),
                }
                .with_nullable(x.ty.nullable);
                Ok(Expr {
                    ty,
                    kind: ExprKind::Unary(UnaryOp::Neg, Box::new(x)),
                })
            }
            U::Not | U::BangNot => Ok(Expr {
                ty: SqlType::int(1).with_nullable(x.ty.nullable),
                kind: ExprKind::Unary(UnaryOp::Not, Box::new(x)),
            }),
            U::BitwiseNot => Ok(Expr {
                ty: SqlType::uint(20).with_nullable(x.ty.nullable),
                kind: ExprKind::Unary(UnaryOp::BitNot, Box::new(x)),
            }),
            other => Err(SqlError::NotSupportedYet(format!("operator {other}"))),
        }
    }

    fn make_binary(&mut self, op: BinaryOp, l: &sql::Expr, r: &sql::Expr) -> SqlResult<Expr> {
        let a = self.bind(l)?;
        let b = self.bind(r)?;
        Ok(binary_expr(op, a, b))
    }

    fn binary(
        &mut self,
        l: &sql::Expr,
        op: &sql::BinaryOperator,
        r: &sql::Expr,
    ) -> SqlResult<Expr> {
        use sql::BinaryOperator as B;
        let op = match op {
            B::Plus => BinaryOp::Add,
            B::Minus => BinaryOp::Sub,
            B::Multiply => BinaryOp::Mul,
            B::Divide => BinaryOp::Div,
            B::Modulo => BinaryOp::Mod,
            B::MyIntegerDivide | B::DuckIntegerDivide => BinaryOp::IntDiv,
            B::Eq => BinaryOp::Eq,
            B::Spaceship => BinaryOp::NullSafeEq,
            B::NotEq => BinaryOp::Ne,
            B::Lt => BinaryOp::Lt,
            B::LtEq => BinaryOp::Le,
            B::Gt => BinaryOp::Gt,
            B::GtEq => BinaryOp::Ge,
            B::And => BinaryOp::And,
            B::Or => BinaryOp::Or,
            B::Xor => BinaryOp::Xor,
            B::BitwiseAnd => BinaryOp::BitAnd,
            B::BitwiseOr => BinaryOp::BitOr,
            B::BitwiseXor | B::PGBitwiseXor => BinaryOp::BitXor,
            B::PGBitwiseShiftLeft => BinaryOp::Shl,
            B::PGBitwiseShiftRight => BinaryOp::Shr,
            B::StringConcat => {
                if self.ctx.pipes_as_concat {
                    let a = self.bind(l)?;
                    let b = self.bind(r)?;
                    return func::bind("CONCAT", vec![a, b], &self.ctx);
                }
                BinaryOp::Or
            }
            B::Assignment => {
                let name = match l {
                    sql::Expr::Identifier(id)
                        if id.value.starts_with('@') && !id.value.starts_with("@@") =>
                    {
                        id.value[1..].to_ascii_lowercase()
                    }
                    _ => {
                        return Err(SqlError::NotSupportedYet(
                            "':=' to something other than a user variable".into(),
                        ))
                    }
                };
                let v = self.bind(r)?;
                return Ok(Expr {
                    ty: v.ty.with_nullable(true),
                    kind: ExprKind::AssignUserVar(name, Box::new(v)),
                });
            }
            other => return Err(SqlError::NotSupportedYet(format!("operator {other}"))),
        };
        self.make_binary(op, l, r)
    }

    fn is(&mut self, x: &sql::Expr, test: IsTest, negated: bool) -> SqlResult<Expr> {
        let x = self.bind(x)?;
        Ok(Expr {
            ty: SqlType::int(1),
            kind: ExprKind::Is {
                expr: Box::new(x),
                test,
                negated,
            },
        })
    }

    fn function(&mut self, f: &sql::Function) -> SqlResult<Expr> {
        let name = f
            .name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(|i| i.value.to_ascii_uppercase())
            .unwrap_or_default();
        if f.name.0.len() > 1 {
            return Err(SqlError::UnknownFunction(f.name.to_string()));
        }
        let mut args = Vec::new();
        match &f.args {
            FunctionArguments::None => {}
            FunctionArguments::Subquery(_) => {
                return Err(SqlError::NotSupportedYet("subqueries".into()))
            }
            FunctionArguments::List(list) => {
                if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
                    return Err(SqlError::NotSupportedYet(format!(
                        "{name}(DISTINCT/ORDER BY ...)"
                    )));
                }
                for a in &list.args {
                    match a {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => args.push(self.bind(e)?),
                        FunctionArg::Unnamed(FunctionArgExpr::Wildcard)
                            if func::is_aggregate(&name) =>
                        {
                            return Err(SqlError::NotSupportedYet(format!(
                                "{name}(*) without tables"
                            )))
                        }
                        _ => return Err(SqlError::NotSupportedYet(format!("arguments of {name}"))),
                    }
                }
            }
        }
        if func::is_aggregate(&name) {
            return Err(SqlError::NotSupportedYet(format!(
                "aggregate {name}() without tables"
            )));
        }
        let canonical = func::canonical(&name);
        if canonical.is_empty() {
            return match self.ctx.db {
                Some(db) => Err(SqlError::UnknownFunction(format!("{db}.{}", f.name))),
                None => Err(SqlError::NoDatabaseSelected),
            };
        }
        func::bind(canonical, args, &self.ctx)
    }
}

/// A binary expression with its inferred type.
pub fn binary_expr(op: BinaryOp, a: Expr, b: Expr) -> Expr {
    let nullable = a.ty.nullable || b.ty.nullable;
    let ty = match op {
        BinaryOp::Add
        | BinaryOp::Sub
        | BinaryOp::Mul
        | BinaryOp::Div
        | BinaryOp::IntDiv
        | BinaryOp::Mod => arith_type(op, &a.ty, &b.ty),
        BinaryOp::NullSafeEq => SqlType::int(1),
        BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor | BinaryOp::Shl | BinaryOp::Shr => {
            SqlType::uint(20).with_nullable(nullable)
        }
        _ => SqlType::int(1).with_nullable(nullable),
    };
    Expr {
        ty,
        kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
    }
}

fn decode_hex(h: &str) -> Vec<u8> {
    let padded = if !h.len().is_multiple_of(2) {
        format!("0{h}")
    } else {
        h.to_string()
    };
    padded
        .as_bytes()
        .chunks(2)
        .map(|p| {
            let d = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
            d(p[0]) * 16 + d(p[1])
        })
        .collect()
}

fn decode_bits(bits: &str) -> Vec<u8> {
    let mut v: Vec<u8> = Vec::new();
    let digits: Vec<u8> = bits.bytes().filter(|b| *b == b'0' || *b == b'1').collect();
    let pad = (8 - digits.len() % 8) % 8;
    let mut acc = 0u8;
    let mut n = 0;
    for d in std::iter::repeat_n(b'0', pad).chain(digits) {
        acc = (acc << 1) | (d - b'0');
        n += 1;
        if n == 8 {
            v.push(acc);
            acc = 0;
            n = 0;
        }
    }
    v
}

/// The default collation of a character set (`binary` for `binary`).
pub fn charset_default_collation(charset: &str) -> SqlResult<Collation> {
    let name = charset
        .trim_matches(|c| c == '`' || c == '\'' || c == '"')
        .to_ascii_lowercase();
    let name = if name == "utf8" {
        "utf8mb3".to_string()
    } else {
        name
    };
    basalt_config::sysvar::charset::default_collation_of(&name)
        .and_then(|c| Collation::by_name(c.name))
        .ok_or(SqlError::UnknownCharset(charset.to_string()))
}

fn cast_target(dt: &DataType) -> SqlResult<CastTarget> {
    use DataType as D;
    let len = |l: &Option<sql::CharacterLength>| match l {
        Some(sql::CharacterLength::IntegerLength { length, .. }) => Some(*length as u32),
        _ => None,
    };
    Ok(match dt {
        D::Signed | D::SignedInteger | D::Int(_) | D::Integer(_) | D::BigInt(_) => {
            CastTarget::Signed
        }
        D::Unsigned
        | D::UnsignedInteger
        | D::IntUnsigned(_)
        | D::IntegerUnsigned(_)
        | D::BigIntUnsigned(_) => CastTarget::Unsigned,
        D::Char(l) | D::Character(l) | D::Varchar(l) | D::Nvarchar(l) => CastTarget::Char(len(l)),
        D::Binary(l) => CastTarget::Binary(l.map(|n| n as u32)),
        D::Varbinary(l) => CastTarget::Binary(l.as_ref().and_then(|b| match b {
            sql::BinaryLength::IntegerLength { length } => Some(*length as u32),
            _ => None,
        })),
        D::Decimal(info) | D::Numeric(info) | D::Dec(info) => {
            let (p, s) = match info {
                sql::ExactNumberInfo::None => (10, 0),
                sql::ExactNumberInfo::Precision(p) => (*p as u32, 0),
                sql::ExactNumberInfo::PrecisionAndScale(p, s) => {
                    (*p as u32, (*s).clamp(0, 255) as u8)
                }
            };
            if p > 65 {
                return Err(SqlError::WrongArguments(format!(
                    "DECIMAL precision {p}; the maximum is 65"
                )));
            }
            if u32::from(s) > p || s > MAX_SCALE {
                return Err(SqlError::WrongArguments(format!("DECIMAL scale {s}")));
            }
            CastTarget::Decimal(p.max(1), s)
        }
        D::Double(_) | D::DoublePrecision | D::Real | D::Float(_) | D::Float64 => {
            CastTarget::Double
        }
        D::Date => CastTarget::Date,
        D::Datetime(p) | D::Timestamp(p, _) => {
            CastTarget::DateTime(p.map_or(0, |p| p.min(6) as u8))
        }
        D::Time(p, _) => CastTarget::Time(p.map_or(0, |p| p.min(6) as u8)),
        D::Custom(name, _) if name.to_string().eq_ignore_ascii_case("YEAR") => CastTarget::Year,
        other => return Err(SqlError::NotSupportedYet(format!("CAST to {other}"))),
    })
}

/// A cast node and its type.
pub fn cast_expr(x: Expr, target: CastTarget, collation: Collation) -> Expr {
    let nullable = x.ty.nullable
        || matches!(
            target,
            CastTarget::Date | CastTarget::DateTime(_) | CastTarget::Time(_) | CastTarget::Year
        );
    let ty = match target {
        CastTarget::Signed if x.ty.kind == TypeKind::Int => SqlType::int(x.ty.length),
        CastTarget::Unsigned if x.ty.kind == TypeKind::Int => SqlType::uint(x.ty.length),
        CastTarget::Signed => SqlType::int(21),
        CastTarget::Unsigned => SqlType::uint(20),
        CastTarget::Char(n) => SqlType::string(n.unwrap_or(x.ty.length.max(1)), collation),
        CastTarget::Binary(n) => {
            SqlType::string(n.unwrap_or(x.ty.length.max(1)), Collation::BINARY)
        }
        CastTarget::Decimal(p, s) => SqlType::decimal(p, s),
        CastTarget::Double => SqlType::double(),
        CastTarget::Date => SqlType::date(),
        CastTarget::DateTime(f) => SqlType::datetime(f),
        CastTarget::Time(f) => SqlType::time(f),
        CastTarget::Year => SqlType::year(),
    }
    .with_nullable(nullable);
    Expr {
        ty,
        kind: ExprKind::Cast(Box::new(x), target),
    }
}

/// True when the bound expression reads the current row or a variable
/// that evaluation may change (so it cannot be folded).
pub fn is_constant(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Literal { .. })
}
