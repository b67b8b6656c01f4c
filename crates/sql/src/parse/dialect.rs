//! `BasaltDialect`: sqlparser's MySQL dialect plus what MySQL 8.0 accepts
//! and sqlparser's dialect does not.
//!
//! * `a MOD b` as an infix operator (same precedence as `*`, `/`, `%`).
//! * `!a` as a prefix `NOT` (sqlparser's "bang not").
//! * `sql_mode` switches: `NO_BACKSLASH_ESCAPES` turns backslash escapes
//!   off, `ANSI_QUOTES` makes `"` quote identifiers.
//!
//! Everything else delegates to [`MySqlDialect`], and the dialect reports
//! MySQL's type id so sqlparser's MySQL-specific grammar branches apply.

use std::any::TypeId;

use sqlparser::ast::{BinaryOperator, Expr};
use sqlparser::dialect::{Dialect, MySqlDialect, Precedence};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

/// The MySQL 8.0 dialect as Basalt parses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BasaltDialect {
    inner: MySqlDialect,
    /// Backslash escapes in strings (off under `NO_BACKSLASH_ESCAPES`).
    pub backslash_escapes: bool,
    /// `"` quotes identifiers (`ANSI_QUOTES`).
    pub ansi_quotes: bool,
}

impl Default for BasaltDialect {
    fn default() -> Self {
        BasaltDialect {
            inner: MySqlDialect {},
            backslash_escapes: true,
            ansi_quotes: false,
        }
    }
}

fn is_mod_keyword(parser: &Parser<'_>) -> bool {
    matches!(&parser.peek_token_ref().token, Token::Word(w) if w.keyword == Keyword::MOD)
        && !matches!(parser.peek_nth_token_ref(1).token, Token::LParen)
}

impl Dialect for BasaltDialect {
    fn dialect(&self) -> TypeId {
        TypeId::of::<MySqlDialect>()
    }
    fn is_identifier_start(&self, ch: char) -> bool {
        self.inner.is_identifier_start(ch)
    }
    fn is_identifier_part(&self, ch: char) -> bool {
        self.inner.is_identifier_part(ch)
    }
    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        ch == '`' || (self.ansi_quotes && ch == '"')
    }
    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        self.inner.identifier_quote_style(identifier)
    }
    fn supports_string_literal_backslash_escape(&self) -> bool {
        self.backslash_escapes
    }
    fn supports_string_literal_concatenation(&self) -> bool {
        true
    }
    fn ignores_wildcard_escapes(&self) -> bool {
        true
    }
    fn supports_numeric_prefix(&self) -> bool {
        true
    }
    fn supports_bitwise_shift_operators(&self) -> bool {
        true
    }
    fn supports_multiline_comment_hints(&self) -> bool {
        true
    }
    fn parse_infix(
        &self,
        parser: &mut Parser<'_>,
        expr: &Expr,
        precedence: u8,
    ) -> Option<Result<Expr, ParserError>> {
        if is_mod_keyword(parser) {
            parser.next_token();
            let right = match parser.parse_subexpr(precedence) {
                Ok(e) => e,
                Err(e) => return Some(Err(e)),
            };
            return Some(Ok(Expr::BinaryOp {
                left: Box::new(expr.clone()),
                op: BinaryOperator::Modulo,
                right: Box::new(right),
            }));
        }
        self.inner.parse_infix(parser, expr, precedence)
    }
    fn get_next_precedence(&self, parser: &Parser<'_>) -> Option<Result<u8, ParserError>> {
        if is_mod_keyword(parser) {
            return Some(Ok(self.prec_value(Precedence::MulDivModOp)));
        }
        self.inner.get_next_precedence(parser)
    }
    fn parse_statement(
        &self,
        parser: &mut Parser<'_>,
    ) -> Option<Result<sqlparser::ast::Statement, ParserError>> {
        self.inner.parse_statement(parser)
    }
    fn require_interval_qualifier(&self) -> bool {
        true
    }
    fn supports_limit_comma(&self) -> bool {
        true
    }
    fn supports_create_table_select(&self) -> bool {
        true
    }
    fn supports_insert_set(&self) -> bool {
        true
    }
    fn supports_user_host_grantee(&self) -> bool {
        true
    }
    fn is_table_factor_alias(&self, explicit: bool, kw: &Keyword, parser: &mut Parser<'_>) -> bool {
        self.inner.is_table_factor_alias(explicit, kw, parser)
    }
    fn supports_table_hints(&self) -> bool {
        true
    }
    fn requires_single_line_comment_whitespace(&self) -> bool {
        true
    }
    fn supports_match_against(&self) -> bool {
        true
    }
    fn supports_select_modifiers(&self) -> bool {
        true
    }
    fn supports_set_names(&self) -> bool {
        true
    }
    fn supports_comma_separated_set_assignments(&self) -> bool {
        true
    }
    fn supports_update_order_by(&self) -> bool {
        true
    }
    fn supports_data_type_signed_suffix(&self) -> bool {
        true
    }
    fn supports_cross_join_constraint(&self) -> bool {
        true
    }
    fn supports_double_ampersand_operator(&self) -> bool {
        true
    }
    fn supports_binary_kw_as_cast(&self) -> bool {
        true
    }
    fn supports_comment_optimizer_hint(&self) -> bool {
        true
    }
    fn supports_constraint_keyword_without_name(&self) -> bool {
        true
    }
    fn supports_key_column_option(&self) -> bool {
        true
    }
    fn supports_group_by_with_modifier(&self) -> bool {
        true
    }
    fn supports_left_associative_joins_without_parens(&self) -> bool {
        false
    }
    fn supports_bang_not_operator(&self) -> bool {
        true
    }
}
