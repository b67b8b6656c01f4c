//! Arithmetic with MySQL's overflow rules.
//!
//! Integer arithmetic is computed in 128 bits and checked against the
//! result type (`BIGINT` or `BIGINT UNSIGNED`); out of range is error
//! 1690. Decimal arithmetic keeps 65 digits; beyond that, 1690 too.
//! Doubles that become infinite are 1690 `DOUBLE value is out of range`.
//! Division and modulo by zero yield `NULL` and warning 1365.

use super::{BinaryOp, Expr};
use crate::error::{SqlError, SqlResult, Warning};
use crate::value::convert::{to_decimal, to_f64, to_i64, to_u64};
use crate::value::decimal::{Decimal, DIV_PRECISION_INCREMENT};
use crate::value::{SqlType, TypeKind, Value};

/// Warning number of division by zero.
pub const WARN_DIVISION_BY_ZERO: u16 = 1365;

fn out_of_range(ty: &SqlType, e: &Expr) -> SqlError {
    let type_name = match ty.kind {
        TypeKind::Decimal => "DECIMAL",
        TypeKind::Double => "DOUBLE",
        _ if ty.unsigned => "BIGINT UNSIGNED",
        _ => "BIGINT",
    };
    SqlError::OutOfRange {
        type_name,
        expr: e.to_string(),
    }
}

fn as_i128(v: &Value, warnings: &mut Vec<Warning>) -> i128 {
    match v {
        Value::UInt(u) => i128::from(*u),
        other => i128::from(to_i64(other, warnings)),
    }
}

fn division_by_zero(warnings: &mut Vec<Warning>) -> Value {
    warnings.push(Warning::warn(WARN_DIVISION_BY_ZERO, "Division by 0"));
    Value::Null
}

/// `l op r` for the arithmetic operators; `node` is the whole expression
/// (its type is the result type, its text goes into 1690 messages).
pub fn arith(
    op: BinaryOp,
    l: &Value,
    r: &Value,
    node: &Expr,
    warnings: &mut Vec<Warning>,
) -> SqlResult<Value> {
    if l.is_null() || r.is_null() {
        return Ok(Value::Null);
    }
    let ty = &node.ty;
    match ty.kind {
        TypeKind::Int | TypeKind::Year | TypeKind::Bit if op != BinaryOp::Div => {
            // IntDiv of non-integers divides exactly, then truncates.
            let (a, b) = match (op, l, r) {
                (BinaryOp::IntDiv, _, _) if !is_int(l) || !is_int(r) => {
                    let (x, y) = (to_decimal(l, warnings), to_decimal(r, warnings));
                    let Some(q) = x.div_trunc(&y) else {
                        return Ok(division_by_zero(warnings));
                    };
                    return int_result(
                        q.to_i64()
                            .map(i128::from)
                            .or_else(|| q.to_u64().map(i128::from)),
                        ty,
                        node,
                    );
                }
                _ => (as_i128(l, warnings), as_i128(r, warnings)),
            };
            let v = match op {
                BinaryOp::Add => Some(a + b),
                BinaryOp::Sub => Some(a - b),
                BinaryOp::Mul => a.checked_mul(b),
                BinaryOp::IntDiv => {
                    if b == 0 {
                        return Ok(division_by_zero(warnings));
                    }
                    Some(a / b)
                }
                BinaryOp::Mod => {
                    if b == 0 {
                        return Ok(division_by_zero(warnings));
                    }
                    Some(a % b)
                }
                _ => None,
            };
            int_result(v, ty, node)
        }
        TypeKind::Decimal => {
            let (a, b) = (to_decimal(l, warnings), to_decimal(r, warnings));
            let result = match op {
                BinaryOp::Add => a.add(&b),
                BinaryOp::Sub => a.sub(&b),
                BinaryOp::Mul => a.mul(&b),
                BinaryOp::Div => match a.div(&b, DIV_PRECISION_INCREMENT) {
                    Some(r) => r,
                    None => return Ok(division_by_zero(warnings)),
                },
                BinaryOp::Mod => match a.rem(&b) {
                    Some(r) => Ok(r),
                    None => return Ok(division_by_zero(warnings)),
                },
                _ => Ok(Decimal::zero()),
            };
            match result {
                Ok(d) => Ok(Value::Decimal(d)),
                Err(_) => Err(out_of_range(ty, node)),
            }
        }
        _ => {
            let (a, b) = (to_f64(l, warnings), to_f64(r, warnings));
            let v = match op {
                BinaryOp::Add => a + b,
                BinaryOp::Sub => a - b,
                BinaryOp::Mul => a * b,
                BinaryOp::Div => {
                    if b == 0.0 {
                        return Ok(division_by_zero(warnings));
                    }
                    a / b
                }
                BinaryOp::Mod => {
                    if b == 0.0 {
                        return Ok(division_by_zero(warnings));
                    }
                    a % b
                }
                BinaryOp::IntDiv => {
                    if b == 0.0 {
                        return Ok(division_by_zero(warnings));
                    }
                    (a / b).trunc()
                }
                _ => 0.0,
            };
            if !v.is_finite() {
                return Err(out_of_range(&SqlType::double(), node));
            }
            Ok(Value::Double(v))
        }
    }
}

fn is_int(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::UInt(_))
}

fn int_result(v: Option<i128>, ty: &SqlType, node: &Expr) -> SqlResult<Value> {
    let Some(v) = v else {
        return Err(out_of_range(ty, node));
    };
    if ty.unsigned {
        u64::try_from(v)
            .map(Value::UInt)
            .map_err(|_| out_of_range(ty, node))
    } else {
        i64::try_from(v)
            .map(Value::Int)
            .map_err(|_| out_of_range(ty, node))
    }
}

/// `-x`.
pub fn negate(v: &Value, node: &Expr, warnings: &mut Vec<Warning>) -> SqlResult<Value> {
    Ok(match v {
        Value::Null => Value::Null,
        Value::Int(i) => match i.checked_neg() {
            Some(n) => Value::Int(n),
            None => return Err(out_of_range(&SqlType::int(20), node)),
        },
        Value::UInt(u) => {
            if *u <= 1u64 << 63 {
                Value::Int((*u as i128).wrapping_neg() as i64)
            } else {
                return Err(out_of_range(&SqlType::int(20), node));
            }
        }
        Value::Decimal(d) => Value::Decimal(d.negated()),
        Value::Double(f) => Value::Double(-f),
        other => match node.ty.kind {
            TypeKind::Int => Value::Int(to_i64(other, warnings).checked_neg().unwrap_or(i64::MAX)),
            TypeKind::Decimal => Value::Decimal(to_decimal(other, warnings).negated()),
            _ => Value::Double(-to_f64(other, warnings)),
        },
    })
}

/// Bit operators on unsigned 64-bit values.
pub fn bits(op: BinaryOp, l: &Value, r: &Value, warnings: &mut Vec<Warning>) -> Value {
    if l.is_null() || r.is_null() {
        return Value::Null;
    }
    let (a, b) = (to_u64(l, warnings), to_u64(r, warnings));
    Value::UInt(match op {
        BinaryOp::BitAnd => a & b,
        BinaryOp::BitOr => a | b,
        BinaryOp::BitXor => a ^ b,
        BinaryOp::Shl => {
            if b >= 64 {
                0
            } else {
                a << b
            }
        }
        BinaryOp::Shr => {
            if b >= 64 {
                0
            } else {
                a >> b
            }
        }
        _ => 0,
    })
}
