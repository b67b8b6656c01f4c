//! Built-in functions: name resolution, arity, result types, evaluation.
//!
//! One table ([`FUNCTIONS`]) lists every function with its accepted
//! argument counts; [`bind`] infers the result type and [`eval`] computes
//! the value. Aliases resolve through [`canonical`] (`UCASE` -> `UPPER`).

use std::time::{Duration, Instant};

use super::bind::{aggregate, arith_type};
use super::eval::{compare_values, eval as eval_expr, round_micros};
use super::{BinaryOp, BindContext, EvalContext, Expr, ExprKind};
use crate::error::{SqlError, SqlResult, Warning};
use crate::value::convert::{is_true, to_bytes, to_decimal, to_f64, to_i64, to_u64};
use crate::value::decimal::Rounding;
use crate::value::temporal::Clock;
use crate::value::{Collation, SqlType, TypeKind, Value};

/// `(name, min args, max args)`; `usize::MAX` = variadic.
const FUNCTIONS: &[(&str, usize, usize)] = &[
    ("ABS", 1, 1),
    ("CEIL", 1, 1),
    ("CHARSET", 1, 1),
    ("CHAR_LENGTH", 1, 1),
    ("COALESCE", 1, usize::MAX),
    ("COLLATION", 1, 1),
    ("CONCAT", 1, usize::MAX),
    ("CONCAT_WS", 2, usize::MAX),
    ("CONNECTION_ID", 0, 0),
    ("CURDATE", 0, 0),
    ("CURRENT_USER", 0, 0),
    ("CURTIME", 0, 1),
    ("DATABASE", 0, 0),
    ("FLOOR", 1, 1),
    ("FOUND_ROWS", 0, 0),
    ("GREATEST", 2, usize::MAX),
    ("HEX", 1, 1),
    ("IF", 3, 3),
    ("IFNULL", 2, 2),
    ("ISNULL", 1, 1),
    ("LAST_INSERT_ID", 0, 1),
    ("LEAST", 2, usize::MAX),
    ("LEFT", 2, 2),
    ("LENGTH", 1, 1),
    ("LOCATE", 2, 3),
    ("LOWER", 1, 1),
    ("LTRIM", 1, 1),
    ("MOD", 2, 2),
    ("NOW", 0, 1),
    ("NULLIF", 2, 2),
    ("REPEAT", 2, 2),
    ("REPLACE", 3, 3),
    ("REVERSE", 1, 1),
    ("RIGHT", 2, 2),
    ("ROUND", 1, 2),
    ("ROW_COUNT", 0, 0),
    ("RTRIM", 1, 1),
    ("SIGN", 1, 1),
    ("SLEEP", 1, 1),
    ("SUBSTRING", 2, 3),
    ("SYSDATE", 0, 1),
    ("TRIM_BOTH", 1, 2),
    ("TRIM_LEADING", 1, 2),
    ("TRIM_TRAILING", 1, 2),
    ("TRUNCATE", 2, 2),
    ("UNIX_TIMESTAMP", 0, 1),
    ("UPPER", 1, 1),
    ("USER", 0, 0),
    ("UTC_DATE", 0, 0),
    ("UTC_TIME", 0, 1),
    ("UTC_TIMESTAMP", 0, 1),
    ("VERSION", 0, 0),
];

const AGGREGATES: &[&str] = &[
    "COUNT",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "GROUP_CONCAT",
    "BIT_AND",
    "BIT_OR",
    "BIT_XOR",
    "STD",
    "STDDEV",
    "STDDEV_POP",
    "STDDEV_SAMP",
    "VARIANCE",
    "VAR_POP",
    "VAR_SAMP",
    "JSON_ARRAYAGG",
    "JSON_OBJECTAGG",
];

/// True for aggregate functions (which need a table).
pub fn is_aggregate(name: &str) -> bool {
    AGGREGATES.contains(&name)
}

/// The canonical name of a function (upper case), or "" if unknown.
pub fn canonical(name: &str) -> &'static str {
    let upper = name.to_ascii_uppercase();
    let alias = match upper.as_str() {
        "CEILING" => "CEIL",
        "CHARACTER_LENGTH" => "CHAR_LENGTH",
        "OCTET_LENGTH" => "LENGTH",
        "UCASE" => "UPPER",
        "LCASE" => "LOWER",
        "SUBSTR" | "MID" => "SUBSTRING",
        "TRIM" => "TRIM_BOTH",
        "POSITION" => "LOCATE",
        "CURRENT_TIMESTAMP" | "LOCALTIME" | "LOCALTIMESTAMP" => "NOW",
        "CURRENT_DATE" => "CURDATE",
        "CURRENT_TIME" => "CURTIME",
        "SCHEMA" => "DATABASE",
        "SESSION_USER" | "SYSTEM_USER" => "USER",
        other => other,
    };
    FUNCTIONS
        .iter()
        .find(|(n, _, _)| *n == alias)
        .map_or("", |(n, _, _)| n)
}

fn const_int(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Literal { value, .. } => match value {
            Value::Int(i) => Some(*i),
            Value::UInt(u) => i64::try_from(*u).ok(),
            _ => None,
        },
        _ => None,
    }
}

fn fsp_arg(name: &str, args: &[Expr]) -> SqlResult<u8> {
    match args.first() {
        None => Ok(0),
        Some(a) => match const_int(a) {
            Some(v) if (0..=6).contains(&v) => Ok(v as u8),
            Some(v) => Err(SqlError::WrongArguments(format!(
                "Too-big precision {v} specified for '{}'. Maximum is 6.",
                name.to_ascii_lowercase()
            ))),
            None => Err(SqlError::WrongArguments(name.to_ascii_lowercase())),
        },
    }
}

fn text_type(args: &[&Expr], length: u32) -> SqlType {
    let binary = args
        .iter()
        .any(|a| a.ty.kind == TypeKind::String && a.ty.collation.is_binary());
    let coll = if binary {
        Collation::BINARY
    } else {
        args.iter()
            .find(|a| a.ty.is_text())
            .map_or(Collation::DEFAULT, |a| a.ty.collation)
    };
    SqlType::string(length, coll)
}

fn any_nullable(args: &[Expr]) -> bool {
    args.iter().any(|a| a.ty.nullable)
}

/// Binds a call of the canonical function `name`.
pub fn bind(name: &'static str, args: Vec<Expr>, _ctx: &BindContext<'_>) -> SqlResult<Expr> {
    let Some(&(_, min, max)) = FUNCTIONS.iter().find(|(n, _, _)| *n == name) else {
        return Err(SqlError::UnknownFunction(name.to_string()));
    };
    if args.len() < min || args.len() > max {
        let shown = match name {
            "TRIM_BOTH" | "TRIM_LEADING" | "TRIM_TRAILING" => "trim",
            other => other,
        };
        return Err(SqlError::WrongParameterCount(shown.to_ascii_lowercase()));
    }
    let nullable = any_nullable(&args);
    let refs: Vec<&Expr> = args.iter().collect();
    let s = |len: u32| text_type(&refs, len).with_nullable(nullable);
    let ty = match name {
        "IF" => aggregate(&[args[1].ty, args[2].ty]),
        "IFNULL" => {
            let mut t = aggregate(&[args[0].ty, args[1].ty]);
            t.nullable = args[1].ty.nullable;
            t
        }
        "COALESCE" => {
            let types: Vec<SqlType> = args.iter().map(|a| a.ty).collect();
            let mut t = aggregate(&types);
            t.nullable = args.iter().all(|a| a.ty.nullable);
            t
        }
        "NULLIF" => args[0].ty.with_nullable(true),
        "ISNULL" => SqlType::int(1),
        "GREATEST" | "LEAST" => {
            let types: Vec<SqlType> = args.iter().map(|a| a.ty).collect();
            aggregate(&types).with_nullable(nullable)
        }
        "CONCAT" => s(args.iter().map(|a| a.ty.length).sum::<u32>()),
        "CONCAT_WS" => {
            let len = args[1..].iter().map(|a| a.ty.length).sum::<u32>()
                + args[0].ty.length * (args.len() as u32 - 2);
            text_type(&refs, len).with_nullable(args[0].ty.nullable)
        }
        "LENGTH" | "CHAR_LENGTH" | "LOCATE" => SqlType::int(10).with_nullable(nullable),
        "UPPER" | "LOWER" | "REVERSE" | "LTRIM" | "RTRIM" | "TRIM_BOTH" | "TRIM_LEADING"
        | "TRIM_TRAILING" => text_type(&refs[..1], args[0].ty.length).with_nullable(nullable),
        "SUBSTRING" | "LEFT" | "RIGHT" => {
            text_type(&refs[..1], args[0].ty.length).with_nullable(nullable)
        }
        "REPLACE" => s(args[0].ty.length.saturating_mul(args[2].ty.length.max(1))),
        "REPEAT" => {
            let times = const_int(&args[1]).unwrap_or(1).max(0) as u32;
            text_type(&refs[..1], args[0].ty.length.saturating_mul(times)).with_nullable(true)
        }
        "HEX" => SqlType::string(
            args[0].ty.length.saturating_mul(2).max(1),
            Collation::DEFAULT,
        )
        .with_nullable(nullable),
        "CHARSET" | "COLLATION" => SqlType::string(64, Collation::DEFAULT),
        "ABS" => match args[0].ty.kind {
            TypeKind::Int | TypeKind::Year | TypeKind::Bit => {
                let mut t = args[0].ty;
                t.kind = TypeKind::Int;
                t
            }
            TypeKind::Decimal => args[0].ty,
            TypeKind::Null => SqlType::null(),
            _ => SqlType::double().with_nullable(nullable),
        },
        "SIGN" => SqlType::int(2).with_nullable(nullable),
        "CEIL" | "FLOOR" => match args[0].ty.kind {
            TypeKind::Int | TypeKind::Year | TypeKind::Bit | TypeKind::Decimal => {
                let digits = super::bind::integer_digits(&args[0].ty) + 1;
                if args[0].ty.unsigned {
                    SqlType::uint(digits)
                } else {
                    SqlType::int(digits)
                }
                .with_nullable(nullable)
            }
            TypeKind::Null => SqlType::null(),
            _ => SqlType::double().with_nullable(nullable),
        },
        "ROUND" | "TRUNCATE" => {
            let d = args.get(1).map_or(Some(0), const_int);
            match (args[0].ty.kind, d) {
                (TypeKind::Int | TypeKind::Year | TypeKind::Bit, _) => {
                    let mut t = args[0].ty;
                    t.kind = TypeKind::Int;
                    t.with_nullable(nullable)
                }
                (TypeKind::Decimal, Some(d)) => {
                    let scale = d.clamp(0, 30) as u8;
                    let digits = super::bind::integer_digits(&args[0].ty) + 1;
                    SqlType::decimal(digits + u32::from(scale), scale).with_nullable(nullable)
                }
                (TypeKind::Null, _) => SqlType::null(),
                _ => SqlType::double().with_nullable(nullable),
            }
        }
        "MOD" => arith_type(BinaryOp::Mod, &args[0].ty, &args[1].ty),
        "NOW" | "SYSDATE" | "UTC_TIMESTAMP" => SqlType::datetime(fsp_arg(name, &args)?),
        "CURTIME" | "UTC_TIME" => SqlType::time(fsp_arg(name, &args)?),
        "CURDATE" | "UTC_DATE" => SqlType::date(),
        "UNIX_TIMESTAMP" => {
            if args.is_empty() {
                SqlType::uint(11)
            } else {
                SqlType::uint(11).with_nullable(true)
            }
        }
        "DATABASE" => SqlType::string(64, Collation::DEFAULT).with_nullable(true),
        "USER" | "CURRENT_USER" => SqlType::string(288, Collation::DEFAULT),
        "VERSION" => SqlType::string(64, Collation::DEFAULT),
        "CONNECTION_ID" | "LAST_INSERT_ID" | "FOUND_ROWS" => SqlType::uint(21),
        "ROW_COUNT" => SqlType::int(21),
        "SLEEP" => SqlType::int(1),
        _ => return Err(SqlError::UnknownFunction(name.to_string())),
    };
    Ok(Expr {
        ty,
        kind: ExprKind::Func(name, args),
    })
}

/// The text of an argument value, temporals with their type's decimals.
fn arg_bytes(v: &Value, arg: &Expr) -> Vec<u8> {
    crate::value::convert::to_bytes_with_decimals(v, arg.ty.decimals)
}

fn text(v: &Value, arg: &Expr) -> String {
    String::from_utf8_lossy(&arg_bytes(v, arg)).into_owned()
}

/// Characters of a string value (bytes as Latin-1 chars for binary).
fn units(v: &Value, arg: &Expr, binary: bool) -> Vec<char> {
    let b = arg_bytes(v, arg);
    if binary {
        b.into_iter().map(char::from).collect()
    } else {
        String::from_utf8_lossy(&b).chars().collect()
    }
}

fn from_units(u: &[char], binary: bool) -> Value {
    if binary {
        Value::Str(u.iter().map(|c| *c as u32 as u8).collect())
    } else {
        Value::Str(u.iter().collect::<String>().into_bytes())
    }
}

fn too_large(name: &str, limit: u64) -> Warning {
    Warning::warn(
        1301,
        format!(
            "Result of {}() was larger than max_allowed_packet ({limit}) - truncated",
            name.to_ascii_lowercase()
        ),
    )
}

/// Evaluates a call.
pub fn eval(name: &str, args: &[Expr], node: &Expr, cx: &mut EvalContext<'_>) -> SqlResult<Value> {
    // Functions with lazy or special argument handling first.
    match name {
        "IF" => {
            let c = eval_expr(&args[0], cx)?;
            let pick = if !c.is_null() && is_true(&c, cx.warnings) {
                &args[1]
            } else {
                &args[2]
            };
            let v = eval_expr(pick, cx)?;
            return Ok(super::eval::coerce(v, &node.ty, cx.warnings));
        }
        "IFNULL" | "COALESCE" => {
            for a in args {
                let v = eval_expr(a, cx)?;
                if !v.is_null() {
                    return Ok(super::eval::coerce(v, &node.ty, cx.warnings));
                }
            }
            return Ok(Value::Null);
        }
        "SLEEP" => return sleep(args, cx),
        "LAST_INSERT_ID" if !args.is_empty() => {
            let v = eval_expr(&args[0], cx)?;
            let n = to_u64(&v, cx.warnings);
            cx.facts.last_insert_id = n;
            return Ok(Value::UInt(n));
        }
        "CONCAT_WS" => {
            let sep = eval_expr(&args[0], cx)?;
            if sep.is_null() {
                return Ok(Value::Null);
            }
            let sep = to_bytes(&sep);
            let mut out = Vec::new();
            let mut first = true;
            for a in &args[1..] {
                let v = eval_expr(a, cx)?;
                if v.is_null() {
                    continue;
                }
                if !first {
                    out.extend_from_slice(&sep);
                }
                first = false;
                out.extend_from_slice(&crate::value::convert::to_bytes_with_decimals(
                    &v,
                    a.ty.decimals,
                ));
            }
            if out.len() as u64 > cx.max_allowed_packet {
                cx.warnings.push(too_large(name, cx.max_allowed_packet));
                return Ok(Value::Null);
            }
            return Ok(Value::Str(out));
        }
        _ => {}
    }
    let mut vals = Vec::with_capacity(args.len());
    for a in args {
        vals.push(eval_expr(a, cx)?);
    }
    let null_in = vals.iter().any(Value::is_null);
    let w = &mut *cx.warnings;
    let binary0 = args
        .first()
        .is_some_and(|a| a.ty.kind == TypeKind::String && a.ty.collation.is_binary());
    Ok(match name {
        "ISNULL" => Value::Int(i64::from(vals[0].is_null())),
        "NULLIF" => match compare_values(&vals[0], &args[0].ty, &vals[1], &args[1].ty, w) {
            Some(std::cmp::Ordering::Equal) => Value::Null,
            _ => vals[0].clone(),
        },
        "GREATEST" | "LEAST" => {
            if null_in {
                return Ok(Value::Null);
            }
            let mut best = 0;
            for i in 1..vals.len() {
                let o = compare_values(&vals[i], &node.ty, &vals[best], &node.ty, w)
                    .unwrap_or(std::cmp::Ordering::Equal);
                let better = if name == "GREATEST" {
                    o == std::cmp::Ordering::Greater
                } else {
                    o == std::cmp::Ordering::Less
                };
                if better {
                    best = i;
                }
            }
            super::eval::coerce(vals[best].clone(), &node.ty, w)
        }
        _ if null_in && !matches!(name, "CHARSET" | "COLLATION" | "UNIX_TIMESTAMP") => Value::Null,
        "CONCAT" => {
            let mut out = Vec::new();
            for (v, a) in vals.iter().zip(args) {
                out.extend_from_slice(&crate::value::convert::to_bytes_with_decimals(
                    v,
                    a.ty.decimals,
                ));
            }
            if out.len() as u64 > cx.max_allowed_packet {
                w.push(too_large(name, cx.max_allowed_packet));
                return Ok(Value::Null);
            }
            Value::Str(out)
        }
        "LENGTH" => Value::Int(arg_bytes(&vals[0], &args[0]).len() as i64),
        "CHAR_LENGTH" => Value::Int(units(&vals[0], &args[0], binary0).len() as i64),
        "UPPER" | "LOWER" => {
            if binary0 {
                Value::Str(arg_bytes(&vals[0], &args[0]))
            } else if name == "UPPER" {
                Value::text(text(&vals[0], &args[0]).to_uppercase())
            } else {
                Value::text(text(&vals[0], &args[0]).to_lowercase())
            }
        }
        "REVERSE" => {
            let mut u = units(&vals[0], &args[0], binary0);
            u.reverse();
            from_units(&u, binary0)
        }
        "SUBSTRING" => {
            let u = units(&vals[0], &args[0], binary0);
            let n = u.len() as i64;
            let pos = to_i64(&vals[1], w);
            let start = if pos > 0 {
                pos - 1
            } else if pos < 0 {
                n + pos
            } else {
                return Ok(from_units(&[], binary0));
            };
            if start < 0 || start >= n {
                return Ok(from_units(&[], binary0));
            }
            let len = match vals.get(2) {
                Some(l) => to_i64(l, w),
                None => n,
            };
            if len <= 0 {
                return Ok(from_units(&[], binary0));
            }
            let end = (start.saturating_add(len)).min(n);
            from_units(&u[start as usize..end as usize], binary0)
        }
        "LEFT" | "RIGHT" => {
            let u = units(&vals[0], &args[0], binary0);
            let k = to_i64(&vals[1], w).clamp(0, u.len() as i64) as usize;
            if name == "LEFT" {
                from_units(&u[..k], binary0)
            } else {
                from_units(&u[u.len() - k..], binary0)
            }
        }
        "LTRIM" | "RTRIM" | "TRIM_BOTH" | "TRIM_LEADING" | "TRIM_TRAILING" => {
            let u = units(&vals[0], &args[0], binary0);
            let rem: Vec<char> = match vals.get(1) {
                Some(r) => units(r, &args[1], binary0),
                None => vec![' '],
            };
            let (lead, trail) = match name {
                "LTRIM" | "TRIM_LEADING" => (true, false),
                "RTRIM" | "TRIM_TRAILING" => (false, true),
                _ => (true, true),
            };
            let mut s = 0usize;
            let mut e = u.len();
            if !rem.is_empty() {
                if lead {
                    while e - s >= rem.len() && u[s..s + rem.len()] == rem[..] {
                        s += rem.len();
                    }
                }
                if trail {
                    while e - s >= rem.len() && u[e - rem.len()..e] == rem[..] {
                        e -= rem.len();
                    }
                }
            }
            from_units(&u[s..e], binary0)
        }
        "REPLACE" => {
            let s = arg_bytes(&vals[0], &args[0]);
            let from = arg_bytes(&vals[1], &args[1]);
            let to = arg_bytes(&vals[2], &args[2]);
            if from.is_empty() {
                Value::Str(s)
            } else {
                let mut out = Vec::with_capacity(s.len());
                let mut i = 0;
                while i < s.len() {
                    if s[i..].starts_with(&from) {
                        out.extend_from_slice(&to);
                        i += from.len();
                    } else {
                        out.push(s[i]);
                        i += 1;
                    }
                    if out.len() as u64 > cx.max_allowed_packet {
                        w.push(too_large(name, cx.max_allowed_packet));
                        return Ok(Value::Null);
                    }
                }
                Value::Str(out)
            }
        }
        "REPEAT" => {
            let s = arg_bytes(&vals[0], &args[0]);
            let n = to_i64(&vals[1], w).max(0) as u64;
            if (s.len() as u64).saturating_mul(n) > cx.max_allowed_packet {
                w.push(too_large(name, cx.max_allowed_packet));
                return Ok(Value::Null);
            }
            Value::Str(s.repeat(n as usize))
        }
        "HEX" => match &vals[0] {
            Value::Str(b) => Value::text(b.iter().map(|x| format!("{x:02X}")).collect::<String>()),
            Value::Double(f) => Value::text(format!("{:X}", f.round() as i64 as u64)),
            other => Value::text(format!("{:X}", to_u64(other, w))),
        },
        "LOCATE" => {
            let coll = super::eval::comparison_collation(&args[0].ty, &args[1].ty);
            let needle = units(&vals[0], &args[0], coll.is_binary());
            let hay = units(&vals[1], &args[1], coll.is_binary());
            let from = match vals.get(2) {
                Some(p) => to_i64(p, w),
                None => 1,
            };
            if from < 1 || from as usize > hay.len() + 1 {
                return Ok(Value::Int(0));
            }
            let start = from as usize - 1;
            if needle.is_empty() {
                return Ok(Value::Int(from));
            }
            let found = (start..=hay.len().saturating_sub(needle.len()))
                .find(|&i| {
                    i + needle.len() <= hay.len()
                        && needle
                            .iter()
                            .zip(&hay[i..])
                            .all(|(a, b)| coll.chars_equal(*a, *b))
                })
                .map_or(0, |i| i as i64 + 1);
            Value::Int(found)
        }
        "CHARSET" => Value::text(if args[0].ty.kind == TypeKind::String {
            args[0].ty.collation.charset
        } else {
            "binary"
        }),
        "COLLATION" => Value::text(if args[0].ty.kind == TypeKind::String {
            args[0].ty.collation.name
        } else {
            "binary"
        }),
        "ABS" => match &vals[0] {
            Value::Int(i) => match i.checked_abs() {
                Some(a) => Value::Int(a),
                None => {
                    return Err(SqlError::OutOfRange {
                        type_name: "BIGINT",
                        expr: node.to_string(),
                    })
                }
            },
            Value::UInt(u) => Value::UInt(*u),
            Value::Decimal(d) => Value::Decimal(d.abs()),
            other => match node.ty.kind {
                TypeKind::Decimal => Value::Decimal(to_decimal(other, w).abs()),
                TypeKind::Int => Value::Int(to_i64(other, w).saturating_abs()),
                _ => Value::Double(to_f64(other, w).abs()),
            },
        },
        "SIGN" => {
            let f = match &vals[0] {
                Value::Decimal(d) => {
                    if d.is_zero() {
                        0.0
                    } else if d.is_negative() {
                        -1.0
                    } else {
                        1.0
                    }
                }
                other => to_f64(other, w),
            };
            Value::Int(if f > 0.0 {
                1
            } else if f < 0.0 {
                -1
            } else {
                0
            })
        }
        "CEIL" | "FLOOR" => {
            let mode = if name == "CEIL" {
                Rounding::Ceil
            } else {
                Rounding::Floor
            };
            match node.ty.kind {
                TypeKind::Int => match &vals[0] {
                    Value::Int(_) | Value::UInt(_) => vals[0].clone(),
                    other => {
                        let d = to_decimal(other, w).round(0, mode);
                        match (d.to_i64(), d.to_u64()) {
                            (Some(i), _) if !node.ty.unsigned => Value::Int(i),
                            (_, Some(u)) => Value::UInt(u),
                            _ => {
                                return Err(SqlError::OutOfRange {
                                    type_name: "BIGINT",
                                    expr: node.to_string(),
                                })
                            }
                        }
                    }
                },
                _ => {
                    let f = to_f64(&vals[0], w);
                    Value::Double(if name == "CEIL" { f.ceil() } else { f.floor() })
                }
            }
        }
        "ROUND" | "TRUNCATE" => {
            let d = match vals.get(1) {
                Some(v) => to_i64(v, w).clamp(-65, 30),
                None => 0,
            };
            let mode = if name == "ROUND" {
                Rounding::HalfUp
            } else {
                Rounding::Truncate
            };
            match node.ty.kind {
                TypeKind::Int => {
                    if d >= 0 {
                        vals[0].clone()
                    } else {
                        let dec = to_decimal(&vals[0], w).round(d as i32, mode);
                        match &vals[0] {
                            Value::UInt(_) => Value::UInt(dec.to_u64().unwrap_or(0)),
                            _ => Value::Int(dec.to_i64().unwrap_or(0)),
                        }
                    }
                }
                TypeKind::Decimal => {
                    let dec = to_decimal(&vals[0], w).round(d as i32, mode);
                    Value::Decimal(dec.with_scale(node.ty.decimals))
                }
                _ => {
                    let f = to_f64(&vals[0], w);
                    let scale = 10f64.powi(d as i32);
                    let scaled = f * scale;
                    let r = if name == "ROUND" {
                        scaled.round_ties_even()
                    } else {
                        scaled.trunc()
                    };
                    Value::Double(r / scale)
                }
            }
        }
        "MOD" => super::arith::arith(BinaryOp::Mod, &vals[0], &vals[1], node, w)?,
        "NOW" | "UTC_TIMESTAMP" | "SYSDATE" => {
            let clock = if name == "SYSDATE" {
                Clock {
                    utc_micros: chrono::Utc::now().timestamp_micros(),
                    offset_secs: cx.clock.offset_secs,
                }
            } else {
                cx.clock
            };
            let mut dt = if name == "UTC_TIMESTAMP" {
                clock.utc()
            } else {
                clock.local()
            };
            dt.micros = round_micros(dt.micros, node.ty.decimals);
            Value::DateTime(dt)
        }
        "CURDATE" => Value::Date(cx.clock.local().date),
        "UTC_DATE" => Value::Date(cx.clock.utc().date),
        "CURTIME" | "UTC_TIME" => {
            let dt = if name == "CURTIME" {
                cx.clock.local()
            } else {
                cx.clock.utc()
            };
            Value::Time(basalt_protocol::Time {
                negative: false,
                days: 0,
                hours: dt.hour,
                minutes: dt.minute,
                seconds: dt.second,
                micros: round_micros(dt.micros, node.ty.decimals),
            })
        }
        "UNIX_TIMESTAMP" => match vals.first() {
            None => Value::UInt(cx.clock.unix_seconds().max(0) as u64),
            Some(Value::Null) => Value::Null,
            Some(v) => match crate::value::convert::to_datetime(v)
                .and_then(|dt| cx.clock.unix_of_local(&dt))
            {
                Some(s) if s >= 0 => Value::UInt(s as u64),
                _ => Value::UInt(0),
            },
        },
        "DATABASE" => match &cx.facts.db {
            Some(db) => Value::text(db.clone()),
            None => Value::Null,
        },
        "USER" => Value::text(cx.facts.user.clone()),
        "CURRENT_USER" => Value::text(cx.facts.current_user.clone()),
        "VERSION" => Value::text(basalt_config::VERSION),
        "CONNECTION_ID" => Value::UInt(cx.facts.connection_id),
        "LAST_INSERT_ID" => Value::UInt(cx.facts.last_insert_id),
        "ROW_COUNT" => Value::Int(cx.facts.row_count),
        "FOUND_ROWS" => Value::UInt(cx.facts.found_rows),
        other => return Err(SqlError::UnknownFunction(other.to_string())),
    })
}

/// `SLEEP(n)`: 0 after `n` seconds, 1 when `KILL QUERY` interrupts it.
fn sleep(args: &[Expr], cx: &mut EvalContext<'_>) -> SqlResult<Value> {
    let v = eval_expr(&args[0], cx)?;
    if v.is_null() {
        return Err(SqlError::WrongArguments("sleep.".into()));
    }
    let secs = to_f64(&v, cx.warnings);
    if !(0.0..=31_536_000.0).contains(&secs) {
        return Err(SqlError::WrongArguments("sleep.".into()));
    }
    let until = Instant::now() + Duration::from_secs_f64(secs);
    loop {
        if cx.cancel.is_some_and(|c| c.is_cancelled()) {
            return Ok(Value::Int(1));
        }
        let now = Instant::now();
        if now >= until {
            return Ok(Value::Int(0));
        }
        std::thread::sleep((until - now).min(Duration::from_millis(5)));
    }
}
