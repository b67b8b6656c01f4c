//! Type inference rules of the binder.

use super::bind::{aggregate, arith_type};
use super::BinaryOp;
use crate::value::{Collation, SqlType, TypeKind};

#[test]
fn arithmetic_result_types() {
    let i = SqlType::int(3);
    let u = SqlType::uint(3);
    let d = SqlType::decimal(4, 2);
    let f = SqlType::double();
    let s = SqlType::string(3, Collation::DEFAULT);
    assert_eq!(arith_type(BinaryOp::Add, &i, &i).kind, TypeKind::Int);
    assert!(arith_type(BinaryOp::Add, &i, &u).unsigned);
    assert_eq!(arith_type(BinaryOp::Add, &i, &d).kind, TypeKind::Decimal);
    assert_eq!(arith_type(BinaryOp::Mul, &d, &d).decimals, 4);
    assert_eq!(arith_type(BinaryOp::Add, &i, &f).kind, TypeKind::Double);
    assert_eq!(
        arith_type(BinaryOp::Add, &i, &s).kind,
        TypeKind::Double,
        "strings add as doubles"
    );
    let div = arith_type(BinaryOp::Div, &i, &i);
    assert_eq!((div.kind, div.decimals), (TypeKind::Decimal, 4));
    assert_eq!(arith_type(BinaryOp::Div, &d, &i).decimals, 6);
    assert_eq!(arith_type(BinaryOp::IntDiv, &d, &i).kind, TypeKind::Int);
    assert!(
        arith_type(BinaryOp::Div, &i, &i).nullable,
        "division by zero yields NULL"
    );
}

#[test]
fn branch_aggregation() {
    let i = SqlType::int(2);
    let d = SqlType::decimal(3, 1);
    let s = SqlType::string(5, Collation::DEFAULT);
    let b = SqlType::string(5, Collation::BINARY);
    let n = SqlType::null();
    assert_eq!(aggregate(&[i, i]).kind, TypeKind::Int);
    let id = aggregate(&[i, d]);
    assert_eq!((id.kind, id.decimals), (TypeKind::Decimal, 1));
    assert_eq!(aggregate(&[i, SqlType::double()]).kind, TypeKind::Double);
    assert_eq!(aggregate(&[i, s]).kind, TypeKind::String);
    assert!(aggregate(&[s, b]).collation.is_binary(), "binary wins");
    assert_eq!(
        aggregate(&[SqlType::date(), SqlType::datetime(0)]).kind,
        TypeKind::DateTime
    );
    let with_null = aggregate(&[i, n]);
    assert_eq!(with_null.kind, TypeKind::Int);
    assert!(with_null.nullable);
    assert_eq!(aggregate(&[n, n]).kind, TypeKind::Null);
}
