//! Basalt's SQL front end: parsing, values and expressions, sessions,
//! statements and privileges — the layer between the wire protocol and the
//! storage engine.
//!
//! ```text
//!   protocol worker thread (one per connection)
//!        │ Backend calls (server/src/backend.rs)
//!        v
//!   Session ── query(text) ──> parse::split ──> parse::parse_statement
//!     │                                              │ Statement
//!     │   exec::execute ── privilege checks (acl) ───┘
//!     │     ├─ select / do     expr::Binder ─> expr::eval ─> Value
//!     │     ├─ set / show      basalt_config SessionVars / GlobalVars
//!     │     ├─ account         AclCache ─ write-through ─> AclStore (catalog)
//!     │     └─ admin           schemas, KILL, transactions, PREPARE
//!     v
//!   Outcome ──> QueryOutput (the protocol's result writer)
//!   SqlError ──> error_map (THE table) ──> ServerError (code, SQLSTATE, text)
//! ```
//!
//! # Modules (by subsystem, to grow into DESIGN.md section 4)
//!
//! * [`parse`]: versioned comments, multi-statement splitting, the
//!   pre-parser for statement families sqlparser does not read the MySQL
//!   way, sqlparser (MySQL dialect plus `MOD` and `!`) for queries and
//!   expressions, MySQL's 1064 message shape.
//! * [`value`]: the value model (signed/unsigned 64-bit integers, 65-digit
//!   `DECIMAL`, `DOUBLE`, strings with collations, temporals), result
//!   metadata, implicit conversions, collations.
//! * [`expr`]: binding (types, `?`, `@@vars`) and evaluation (operators,
//!   built-in functions, `SLEEP` honouring `KILL QUERY`).
//! * [`session`]: per-connection state; transactions (the seam where
//!   engine transactions attach); prepared statements.
//! * [`exec`]: one module per statement family.
//! * [`acl`]: accounts, host matching, privileges and their checks, the
//!   [`acl::AclStore`] persistence trait.
//! * [`error`], [`error_map`]: the crate's error enum and the single
//!   mapping table to MySQL error numbers and SQLSTATEs.
//! * [`server`]: state all sessions share ([`SqlServer`]).
//!
//! # Rules
//!
//! * No table support is faked. Statements naming tables check privileges
//!   and report 1146 (no table exists); table DDL reports 1235. When the
//!   engine's table API exists, `Statement::TableAccess` becomes the entry
//!   of the planner and `exec` gains a `query` module; sessions already
//!   carry the transaction state it will attach to.
//! * This crate names no storage type except the engine errors it maps
//!   (`basalt_mtr::MtrError`) in `error_map`. It uses the protocol crate's
//!   wire vocabulary (`ColumnDef`, `Value`, `ServerError`, `QueryOutput`) so
//!   results stream to the client without conversion; the protocol crate
//!   knows nothing of this one (it calls it through its `Backend` trait).
//! * Nothing received from a client may panic: every parse and evaluation
//!   path returns errors (see the random-statement test in
//!   `tests/random_statements.rs`).
//!
//! # Where Basalt differs from MySQL 8.0 today (known, deliberate or pending)
//!
//! * Strings are held as UTF-8 whatever the connection character set;
//!   conversion for `latin1` clients is not implemented. Accent folding of
//!   the `_ai_ci` collations covers Latin letters (see [`value::collation`]).
//! * `GRANT`/`REVOKE` apply to connected sessions at their next statement
//!   (MySQL: global privileges at the next login).
//! * Table-less `SELECT` ignores `ORDER BY` (one row at most) and refuses
//!   `GROUP BY`, `HAVING`, `UNION` and subqueries with 1235.
//! * `max_execution_time` is accepted but not enforced; `SHOW STATUS`
//!   has no `Aborted_connects` or `Bytes_received/sent` (the protocol layer
//!   does not report them).
//! * A statement keeps the diagnostics area when its text mentions
//!   `warning_count` or `error_count` (MySQL decides in its grammar).
//!
//! # Threads and latches
//!
//! No threads of its own. A [`Session`] is used by its connection's worker
//! thread only and holds no locks. Shared state: the global variables
//! (`basalt_config`'s own latching), the [`acl::AclCache`] (a read-write
//! lock over the privilege tables plus a writer mutex that serialises
//! changes; order: writer, then tables; the store is called with only the
//! writer held), and relaxed atomic status counters.
//!
//! # Tests
//!
//! Unit tests sit beside the code (decimal arithmetic against `i128`,
//! collations, temporal parsing, the error table, privilege checks
//! including 1142 on tables, account changes against a failing store).
//! `tests/scenarios/*.test` are golden scripts run through real sessions
//! (`BASALT_BLESS=1` rewrites the expected output after a deliberate
//! change); `tests/random_statements.rs` feeds seeded random statements
//! (`BASALT_TEST_SEED` replays one, `BASALT_FUZZ_ITERS` runs longer).
//! End-to-end tests with real clients live in the `basalt-tests` package.

#![forbid(unsafe_code)]

pub mod acl;
pub mod error;
pub mod error_map;
pub mod exec;
pub mod expr;
pub mod parse;
pub mod server;
pub mod session;
pub mod value;

pub use error::{Level, SqlError, SqlResult, Warning};
pub use server::SqlServer;
pub use session::Session;
