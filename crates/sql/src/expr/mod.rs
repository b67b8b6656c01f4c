//! Expressions: binding sqlparser's AST to typed [`Expr`] trees and
//! evaluating them with MySQL's semantics.
//!
//! ```text
//!   sqlparser::ast::Expr ── Binder (bind.rs) ──> Expr { kind, ty: SqlType }
//!        names, @@vars, ?, types,                      │
//!        function arity, collations                    │ eval (eval.rs, func.rs)
//!                                                      v
//!                         EvalContext (user variables, warnings, clock,
//!                         cancel flag, session facts, current row) ──> Value
//! ```
//!
//! Binding happens per execution (statements without tables are cheap to
//! bind), so `?` parameters and user variables are typed from their
//! current values, as MySQL types them at execution. `@@system` variables
//! are read at bind time (once per statement). User variables are read and
//! written at evaluation time, left to right, so `SELECT @a := 1, @a`
//! sees the assignment.
//!
//! Errors: integer overflow is 1690 with MySQL's rendering of the
//! expression (`BIGINT value is out of range in '(9223372036854775807 +
//! 1)'`); division by zero yields `NULL` with warning 1365; bad numeric
//! text yields warning 1292; unknown functions are 1305 (1046 without a
//! current schema, as MySQL resolves them as stored functions).

mod arith;
pub mod bind;
pub mod eval;
mod func;

use std::collections::HashMap;
use std::fmt;

use basalt_config::SqlMode;
use basalt_protocol::CancelFlag;

use crate::error::Warning;
use crate::value::temporal::Clock;
use crate::value::{SqlType, Value};

pub use bind::{BindContext, Binder};
pub use eval::eval;

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    /// `-x`.
    Neg,
    /// `NOT x`, `!x`.
    Not,
    /// `~x`.
    BitNot,
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`.
    Div,
    /// `DIV`.
    IntDiv,
    /// `%`, `MOD`.
    Mod,
    /// `=`.
    Eq,
    /// `<=>`.
    NullSafeEq,
    /// `<>`, `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `AND`, `&&`.
    And,
    /// `OR`, `||`.
    Or,
    /// `XOR`.
    Xor,
    /// `&`.
    BitAnd,
    /// `|`.
    BitOr,
    /// `^`.
    BitXor,
    /// `<<`.
    Shl,
    /// `>>`.
    Shr,
}

impl BinaryOp {
    /// MySQL's spelling (for messages).
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::IntDiv => "DIV",
            BinaryOp::Mod => "%",
            BinaryOp::Eq => "=",
            BinaryOp::NullSafeEq => "<=>",
            BinaryOp::Ne => "<>",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
            BinaryOp::Xor => "xor",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
        }
    }
}

/// `IS [NOT] TRUE|FALSE|UNKNOWN|NULL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsTest {
    /// `IS NULL` / `IS UNKNOWN`.
    Null,
    /// `IS TRUE`.
    True,
    /// `IS FALSE`.
    False,
}

/// Target of `CAST`/`CONVERT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CastTarget {
    /// `SIGNED [INTEGER]`.
    Signed,
    /// `UNSIGNED [INTEGER]`.
    Unsigned,
    /// `CHAR[(n)]`, `CONVERT(x USING cs)`: text in the type's collation.
    Char(Option<u32>),
    /// `BINARY[(n)]`.
    Binary(Option<u32>),
    /// `DECIMAL(p, s)`.
    Decimal(u32, u8),
    /// `DOUBLE`, `REAL`, `FLOAT`.
    Double,
    /// `DATE`.
    Date,
    /// `DATETIME(fsp)`.
    DateTime(u8),
    /// `TIME(fsp)`.
    Time(u8),
    /// `YEAR`.
    Year,
}

/// A bound expression: its kind and static type.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What it computes.
    pub kind: ExprKind,
    /// Its type.
    pub ty: SqlType,
}

/// The shapes of bound expressions.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// A constant (literals, parameters, `@@vars`). `text` is how MySQL
    /// prints it in messages.
    Literal {
        /// The value.
        value: Value,
        /// Rendering for messages.
        text: String,
    },
    /// A column of the current row (SHOW ... WHERE).
    Column {
        /// Index in the row.
        index: usize,
        /// Name.
        name: String,
    },
    /// `@name`.
    UserVar(String),
    /// `@name := expr`.
    AssignUserVar(String, Box<Expr>),
    /// Unary operator.
    Unary(UnaryOp, Box<Expr>),
    /// Binary operator.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `x IS [NOT] ...`.
    Is {
        /// Operand.
        expr: Box<Expr>,
        /// The test.
        test: IsTest,
        /// `NOT`.
        negated: bool,
    },
    /// `x [NOT] IN (list)`.
    In {
        /// Operand.
        expr: Box<Expr>,
        /// Candidates.
        list: Vec<Expr>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `x [NOT] BETWEEN low AND high`.
    Between {
        /// Operand.
        expr: Box<Expr>,
        /// Lower bound.
        low: Box<Expr>,
        /// Upper bound.
        high: Box<Expr>,
        /// `NOT BETWEEN`.
        negated: bool,
    },
    /// `x [NOT] LIKE pattern [ESCAPE c]`.
    Like {
        /// Operand.
        expr: Box<Expr>,
        /// Pattern.
        pattern: Box<Expr>,
        /// Escape character.
        escape: Option<char>,
        /// `NOT LIKE`.
        negated: bool,
    },
    /// `CASE [operand] WHEN ... THEN ... [ELSE ...] END`.
    Case {
        /// `CASE x WHEN ...` form.
        operand: Option<Box<Expr>>,
        /// `(when, then)` pairs.
        whens: Vec<(Expr, Expr)>,
        /// `ELSE`.
        otherwise: Option<Box<Expr>>,
    },
    /// `CAST(x AS target)`.
    Cast(Box<Expr>, CastTarget),
    /// A built-in function.
    Func(&'static str, Vec<Expr>),
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ExprKind::Literal { text, .. } => f.write_str(text),
            ExprKind::Column { name, .. } => write!(f, "`{name}`"),
            ExprKind::UserVar(n) => write!(f, "(@`{n}`)"),
            ExprKind::AssignUserVar(n, e) => write!(f, "(@`{n}` := {e})"),
            ExprKind::Unary(UnaryOp::Neg, e) => write!(f, "-({e})"),
            ExprKind::Unary(UnaryOp::Not, e) => write!(f, "(not({e}))"),
            ExprKind::Unary(UnaryOp::BitNot, e) => write!(f, "~({e})"),
            ExprKind::Binary(op, l, r) => write!(f, "({l} {} {r})", op.symbol()),
            ExprKind::Is { expr, .. } => write!(f, "({expr} is ...)"),
            ExprKind::In { expr, list, .. } => {
                write!(f, "({expr} in (")?;
                for (i, e) in list.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{e}")?;
                }
                f.write_str("))")
            }
            ExprKind::Between {
                expr, low, high, ..
            } => {
                write!(f, "({expr} between {low} and {high})")
            }
            ExprKind::Like { expr, pattern, .. } => write!(f, "({expr} like {pattern})"),
            ExprKind::Case { .. } => f.write_str("case"),
            ExprKind::Cast(e, _) => write!(f, "cast({e})"),
            ExprKind::Func(name, args) => {
                write!(f, "{}(", name.to_ascii_lowercase())?;
                for (i, e) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{e}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// A user variable: value and the type it was assigned with.
pub type UserVars = HashMap<String, (Value, SqlType)>;

/// Facts about the session that functions read.
#[derive(Debug, Clone, Default)]
pub struct SessionFacts {
    /// `CONNECTION_ID()`.
    pub connection_id: u64,
    /// `USER()`.
    pub user: String,
    /// `CURRENT_USER()`.
    pub current_user: String,
    /// `DATABASE()`.
    pub db: Option<String>,
    /// `LAST_INSERT_ID()`.
    pub last_insert_id: u64,
    /// `ROW_COUNT()`.
    pub row_count: i64,
    /// `FOUND_ROWS()`.
    pub found_rows: u64,
}

/// Everything evaluation may read or change.
pub struct EvalContext<'a> {
    /// Session facts.
    pub facts: &'a mut SessionFacts,
    /// User variables (written by `:=`).
    pub user_vars: &'a mut UserVars,
    /// Warnings raised so far by the statement.
    pub warnings: &'a mut Vec<Warning>,
    /// The statement's clock (`NOW()` is constant within a statement).
    pub clock: Clock,
    /// Set by `KILL QUERY`.
    pub cancel: Option<&'a CancelFlag>,
    /// `sql_mode`.
    pub sql_mode: SqlMode,
    /// `max_allowed_packet`: longest string a function may build.
    pub max_allowed_packet: u64,
    /// The current row (for `SHOW ... WHERE`).
    pub row: &'a [Value],
}

impl fmt::Debug for EvalContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EvalContext")
            .field("facts", &self.facts)
            .field("warnings", &self.warnings.len())
            .finish()
    }
}

#[cfg(test)]
mod tests;
