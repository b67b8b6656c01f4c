//! Evaluation of bound expressions.
//!
//! Three-valued logic as MySQL: comparisons with `NULL` are `NULL`
//! (except `<=>`), `AND`/`OR` short-circuit on a decisive operand, `IN`
//! is `NULL` when nothing matched and a `NULL` was among the candidates.
//! Values produced by `IF`/`CASE`/`COALESCE` branches are coerced to the
//! aggregate type the binder inferred, so the result set sees one type.

use std::cmp::Ordering;

use super::{arith, func, BinaryOp, CastTarget, EvalContext, Expr, ExprKind, IsTest, UnaryOp};
use crate::error::{SqlError, SqlResult, Warning};
use crate::value::convert::{self, is_true, to_bytes, to_decimal, to_f64, to_i64, to_u64};
use crate::value::decimal::Decimal;
use crate::value::{compare, temporal, Collation, SqlType, TypeKind, Value};
use basalt_common::like::like_with;

fn bool_value(b: bool) -> Value {
    Value::Int(i64::from(b))
}

/// The collation two operands compare under: binary if either is binary,
/// else the left text operand's (explicit `COLLATE` travels in the type).
pub fn comparison_collation(a: &SqlType, b: &SqlType) -> Collation {
    let binary = |t: &SqlType| t.kind == TypeKind::String && t.collation.is_binary();
    if binary(a) || binary(b) {
        return Collation::BINARY;
    }
    if b.explicit_collation && !a.explicit_collation && b.is_text() {
        return b.collation;
    }
    if a.is_text() {
        a.collation
    } else if b.is_text() {
        b.collation
    } else {
        Collation::DEFAULT
    }
}

/// Compares two evaluated operands of types `at`, `bt`; `None` if either
/// is NULL.
pub fn compare_values(
    a: &Value,
    at: &SqlType,
    b: &Value,
    bt: &SqlType,
    warnings: &mut Vec<Warning>,
) -> Option<Ordering> {
    if a.is_null() || b.is_null() {
        return None;
    }
    Some(compare(
        a,
        at,
        b,
        bt,
        comparison_collation(at, bt),
        warnings,
    ))
}

/// Converts `v` to what type `ty` holds (used for branch results).
pub fn coerce(v: Value, ty: &SqlType, warnings: &mut Vec<Warning>) -> Value {
    if v.is_null() {
        return v;
    }
    match ty.kind {
        TypeKind::String => match v {
            Value::Str(_) => v,
            other => Value::Str(to_bytes(&other)),
        },
        TypeKind::Int | TypeKind::Year | TypeKind::Bit => match v {
            Value::Int(_) | Value::UInt(_) => v,
            other if ty.unsigned => Value::UInt(to_u64(&other, warnings)),
            other => Value::Int(to_i64(&other, warnings)),
        },
        TypeKind::Decimal => match v {
            Value::Decimal(_) => v,
            other => Value::Decimal(to_decimal(&other, warnings)),
        },
        TypeKind::Double => match v {
            Value::Double(_) => v,
            other => Value::Double(to_f64(&other, warnings)),
        },
        TypeKind::Date => match convert::to_datetime(&v) {
            Some(dt) => Value::Date(dt.date),
            None => Value::Null,
        },
        TypeKind::DateTime | TypeKind::Timestamp => match convert::to_datetime(&v) {
            Some(dt) => Value::DateTime(dt),
            None => Value::Null,
        },
        TypeKind::Time => match convert::to_time(&v) {
            Some(t) => Value::Time(t),
            None => Value::Null,
        },
        TypeKind::Null => Value::Null,
    }
}

/// Evaluates `e`.
pub fn eval(e: &Expr, cx: &mut EvalContext<'_>) -> SqlResult<Value> {
    match &e.kind {
        ExprKind::Literal { value, .. } => Ok(value.clone()),
        ExprKind::Column { index, .. } => Ok(cx.row.get(*index).cloned().unwrap_or(Value::Null)),
        ExprKind::UserVar(name) => Ok(cx
            .user_vars
            .get(name)
            .map_or(Value::Null, |(v, _)| v.clone())),
        ExprKind::AssignUserVar(name, x) => {
            let v = eval(x, cx)?;
            let ty = if v.is_null() { SqlType::null() } else { x.ty };
            cx.user_vars.insert(name.clone(), (v.clone(), ty));
            Ok(v)
        }
        ExprKind::Unary(op, x) => {
            let v = eval(x, cx)?;
            if v.is_null() {
                return Ok(Value::Null);
            }
            Ok(match op {
                UnaryOp::Neg => arith::negate(&v, e, cx.warnings)?,
                UnaryOp::Not => bool_value(!is_true(&v, cx.warnings)),
                UnaryOp::BitNot => Value::UInt(!to_u64(&v, cx.warnings)),
            })
        }
        ExprKind::Binary(op, l, r) => binary(*op, l, r, e, cx),
        ExprKind::Is {
            expr,
            test,
            negated,
        } => {
            let v = eval(expr, cx)?;
            let result = match test {
                IsTest::Null => v.is_null(),
                IsTest::True => !v.is_null() && is_true(&v, cx.warnings),
                IsTest::False => !v.is_null() && !is_true(&v, cx.warnings),
            };
            Ok(bool_value(result != *negated))
        }
        ExprKind::In {
            expr,
            list,
            negated,
        } => {
            let v = eval(expr, cx)?;
            if v.is_null() {
                return Ok(Value::Null);
            }
            let mut saw_null = false;
            for item in list {
                let c = eval(item, cx)?;
                match compare_values(&v, &expr.ty, &c, &item.ty, cx.warnings) {
                    Some(Ordering::Equal) => return Ok(bool_value(!negated)),
                    Some(_) => {}
                    None => saw_null = true,
                }
            }
            if saw_null {
                Ok(Value::Null)
            } else {
                Ok(bool_value(*negated))
            }
        }
        ExprKind::Between {
            expr,
            low,
            high,
            negated,
        } => {
            let v = eval(expr, cx)?;
            let lo = eval(low, cx)?;
            let hi = eval(high, cx)?;
            let ge = compare_values(&v, &expr.ty, &lo, &low.ty, cx.warnings)
                .map(|o| o != Ordering::Less);
            let le = compare_values(&v, &expr.ty, &hi, &high.ty, cx.warnings)
                .map(|o| o != Ordering::Greater);
            let result = match (ge, le) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            };
            Ok(match result {
                Some(b) => bool_value(b != *negated),
                None => Value::Null,
            })
        }
        ExprKind::Like {
            expr,
            pattern,
            escape,
            negated,
        } => {
            let v = eval(expr, cx)?;
            let p = eval(pattern, cx)?;
            if v.is_null() || p.is_null() {
                return Ok(Value::Null);
            }
            let coll = comparison_collation(&expr.ty, &pattern.ty);
            let text = String::from_utf8_lossy(&to_bytes(&v)).into_owned();
            let pat = String::from_utf8_lossy(&to_bytes(&p)).into_owned();
            let m = like_with(&pat, &text, *escape, |a, b| coll.chars_equal(a, b));
            Ok(bool_value(m != *negated))
        }
        ExprKind::Case {
            operand,
            whens,
            otherwise,
        } => {
            let subject = match operand {
                Some(o) => Some((eval(o, cx)?, o.ty)),
                None => None,
            };
            for (w, t) in whens {
                let c = eval(w, cx)?;
                let hit = match &subject {
                    Some((sv, st)) => {
                        compare_values(sv, st, &c, &w.ty, cx.warnings) == Some(Ordering::Equal)
                    }
                    None => !c.is_null() && is_true(&c, cx.warnings),
                };
                if hit {
                    let v = eval(t, cx)?;
                    return Ok(coerce(v, &e.ty, cx.warnings));
                }
            }
            match otherwise {
                Some(o) => {
                    let v = eval(o, cx)?;
                    Ok(coerce(v, &e.ty, cx.warnings))
                }
                None => Ok(Value::Null),
            }
        }
        ExprKind::Cast(x, target) => {
            let v = eval(x, cx)?;
            cast(v, &x.ty, *target, e, cx)
        }
        ExprKind::Func(name, args) => func::eval(name, args, e, cx),
    }
}

fn binary(
    op: BinaryOp,
    l: &Expr,
    r: &Expr,
    node: &Expr,
    cx: &mut EvalContext<'_>,
) -> SqlResult<Value> {
    match op {
        BinaryOp::And => {
            let a = eval(l, cx)?;
            if !a.is_null() && !is_true(&a, cx.warnings) {
                return Ok(bool_value(false));
            }
            let b = eval(r, cx)?;
            if !b.is_null() && !is_true(&b, cx.warnings) {
                return Ok(bool_value(false));
            }
            if a.is_null() || b.is_null() {
                return Ok(Value::Null);
            }
            Ok(bool_value(true))
        }
        BinaryOp::Or => {
            let a = eval(l, cx)?;
            if !a.is_null() && is_true(&a, cx.warnings) {
                return Ok(bool_value(true));
            }
            let b = eval(r, cx)?;
            if !b.is_null() && is_true(&b, cx.warnings) {
                return Ok(bool_value(true));
            }
            if a.is_null() || b.is_null() {
                return Ok(Value::Null);
            }
            Ok(bool_value(false))
        }
        BinaryOp::Xor => {
            let a = eval(l, cx)?;
            let b = eval(r, cx)?;
            if a.is_null() || b.is_null() {
                return Ok(Value::Null);
            }
            Ok(bool_value(
                is_true(&a, cx.warnings) != is_true(&b, cx.warnings),
            ))
        }
        BinaryOp::Add
        | BinaryOp::Sub
        | BinaryOp::Mul
        | BinaryOp::Div
        | BinaryOp::IntDiv
        | BinaryOp::Mod => {
            let a = eval(l, cx)?;
            let b = eval(r, cx)?;
            arith::arith(op, &a, &b, node, cx.warnings)
        }
        BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor | BinaryOp::Shl | BinaryOp::Shr => {
            let a = eval(l, cx)?;
            let b = eval(r, cx)?;
            Ok(arith::bits(op, &a, &b, cx.warnings))
        }
        BinaryOp::NullSafeEq => {
            let a = eval(l, cx)?;
            let b = eval(r, cx)?;
            Ok(bool_value(match (a.is_null(), b.is_null()) {
                (true, true) => true,
                (false, false) => {
                    compare_values(&a, &l.ty, &b, &r.ty, cx.warnings) == Some(Ordering::Equal)
                }
                _ => false,
            }))
        }
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => {
            let a = eval(l, cx)?;
            let b = eval(r, cx)?;
            let Some(o) = compare_values(&a, &l.ty, &b, &r.ty, cx.warnings) else {
                return Ok(Value::Null);
            };
            Ok(bool_value(match op {
                BinaryOp::Eq => o == Ordering::Equal,
                BinaryOp::Ne => o != Ordering::Equal,
                BinaryOp::Lt => o == Ordering::Less,
                BinaryOp::Le => o != Ordering::Greater,
                BinaryOp::Gt => o == Ordering::Greater,
                _ => o != Ordering::Less,
            }))
        }
    }
}

fn incorrect_datetime(v: &Value, kind: &str) -> Warning {
    Warning::warn(
        1292,
        format!(
            "Incorrect {kind} value: '{}'",
            String::from_utf8_lossy(&to_bytes(v))
        ),
    )
}

/// `CAST(v AS target)`.
pub fn cast(
    v: Value,
    from: &SqlType,
    target: CastTarget,
    node: &Expr,
    cx: &mut EvalContext<'_>,
) -> SqlResult<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    let w = &mut *cx.warnings;
    Ok(match target {
        CastTarget::Signed => match &v {
            Value::Str(b) => Value::Int(convert::str_to_i64(b, w)),
            Value::UInt(u) => Value::Int(*u as i64),
            other => Value::Int(to_i64(other, w)),
        },
        CastTarget::Unsigned => match &v {
            Value::Str(b) => Value::UInt(convert::str_to_u64(b, w)),
            other => Value::UInt(to_u64(other, w)),
        },
        CastTarget::Char(n) | CastTarget::Binary(n) => {
            let mut bytes = convert::to_bytes_with_decimals(&v, from.decimals);
            if let Some(n) = n {
                let n = n as usize;
                let truncated =
                    if matches!(target, CastTarget::Binary(_)) || node.ty.collation.is_binary() {
                        if bytes.len() > n {
                            bytes.truncate(n);
                            true
                        } else {
                            if matches!(target, CastTarget::Binary(_)) {
                                bytes.resize(n, 0);
                            }
                            false
                        }
                    } else {
                        let s = String::from_utf8_lossy(&bytes).into_owned();
                        if s.chars().count() > n {
                            bytes = s.chars().take(n).collect::<String>().into_bytes();
                            true
                        } else {
                            false
                        }
                    };
                if truncated {
                    w.push(Warning::warn(
                        1292,
                        format!(
                            "Truncated incorrect {}({n}) value: '{}'",
                            if matches!(target, CastTarget::Binary(_)) {
                                "BINARY"
                            } else {
                                "CHAR"
                            },
                            String::from_utf8_lossy(&convert::to_bytes(&v))
                        ),
                    ));
                }
            }
            Value::Str(bytes)
        }
        CastTarget::Decimal(p, s) => {
            let d = to_decimal(&v, w).with_scale(s);
            let max_int = p.saturating_sub(u32::from(s));
            if d.integer_digits() as u32 > max_int
                && !(d.integer_digits() == 1
                    && d.round(0, crate::value::decimal::Rounding::Truncate)
                        .is_zero())
            {
                w.push(Warning::warn(
                    1264,
                    "Out of range value for column 'CAST' at row 1".to_string(),
                ));
                let nines = format!(
                    "{}{}{}",
                    if d.is_negative() { "-" } else { "" },
                    "9".repeat(max_int.max(1) as usize),
                    if s > 0 {
                        format!(".{}", "9".repeat(usize::from(s)))
                    } else {
                        String::new()
                    }
                );
                Value::Decimal(Decimal::parse(&nines).unwrap_or_else(Decimal::zero))
            } else {
                Value::Decimal(d)
            }
        }
        CastTarget::Double => Value::Double(to_f64(&v, w)),
        CastTarget::Date => match convert::to_datetime(&v) {
            Some(dt) => Value::Date(dt.date),
            None => {
                w.push(incorrect_datetime(&v, "datetime"));
                Value::Null
            }
        },
        CastTarget::DateTime(fsp) => match convert::to_datetime(&v) {
            Some(mut dt) => {
                dt.micros = round_micros(dt.micros, fsp);
                Value::DateTime(dt)
            }
            None => {
                w.push(incorrect_datetime(&v, "datetime"));
                Value::Null
            }
        },
        CastTarget::Time(fsp) => match convert::to_time(&v) {
            Some(mut t) => {
                t.micros = round_micros(t.micros, fsp);
                Value::Time(t)
            }
            None => {
                w.push(incorrect_datetime(&v, "time"));
                Value::Null
            }
        },
        CastTarget::Year => {
            let n = to_i64(&v, w);
            let y = match n {
                0 => 0,
                1..=69 => 2000 + n,
                70..=99 => 1900 + n,
                1901..=2155 => n,
                _ => {
                    w.push(Warning::warn(
                        1292,
                        format!("Truncated incorrect YEAR value: '{n}'"),
                    ));
                    return Ok(Value::Null);
                }
            };
            Value::Int(y)
        }
    })
}

/// Truncates microseconds to `fsp` digits.
pub fn round_micros(micros: u32, fsp: u8) -> u32 {
    let div = 10u32.pow(u32::from(6 - fsp.min(6)));
    micros / div * div
}

/// A datetime as text with its type's fractional digits.
pub fn datetime_text(v: &Value, ty: &SqlType) -> Option<String> {
    match v {
        Value::DateTime(dt) => Some(temporal::format_datetime(dt, ty.decimals.min(6))),
        _ => None,
    }
}

/// Raised by functions that honour the cancel flag.
pub fn interrupted() -> SqlError {
    SqlError::Interrupted
}
