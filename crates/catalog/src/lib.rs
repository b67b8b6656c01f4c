//! Basalt's data dictionary: the system tables in the system tablespace
//! and the dictionary header that finds them.
//!
//! # Boundaries
//!
//! The catalog stores and returns typed rows; it knows B+trees
//! (`basalt-btree`), mini-transactions (`basalt-mtr`) and record layouts
//! (`basalt-page`), and nothing of SQL: it must not depend on
//! `basalt-sql` or `basalt-protocol` (the direction is `sql -> engine ->
//! catalog -> btree -> mtr`). Privileges are opaque 64-bit masks and
//! authentication plugins are names; the SQL layer maps them (its
//! `AclStore` adapter). The catalog starts no thread and owns no global
//! state: every call runs on the caller's thread against the `PageStore`
//! it is given.
//!
//! # On disk
//!
//! Everything lives in the system tablespace (`ibdata1`, space 0):
//!
//! ```text
//!   page 0        tablespace header (allocation; basalt-mtr's fsp)
//!   page 5        reserved: transaction-system header
//!   page 7        DICTIONARY HEADER ──────────────┐
//!   pages 64-191  doublewrite area                 │ root page numbers
//!   pages 192..   allocated on demand:             ▼
//!                   root + pages of mysql.user, mysql.db,
//!                   mysql.tables_priv, mysql.schemata (clustered B+trees)
//! ```
//!
//! **Dictionary header** (page 7, type `DictHeader`; all integers
//! big-endian, offsets from the end of the 38-byte file header):
//!
//! ```text
//!   +0   u32 magic "BSDH"        +8   u64 next table id
//!   +4   u32 format version 1    +16  u64 next index id
//!                                +24  u32 next space id
//!                                +28  u32 n = number of root slots
//!   +32  n x [ u32 table id | u32 layout version | u64 index id | u32 root page | u32 0 ]
//! ```
//!
//! Table ids and index ids below [`FIRST_DYNAMIC_ID`] (1024) are reserved
//! for system tables (a system table's clustered index id is its table
//! id); space ids start at 1. The header is written with `InitPage` and
//! `WriteBytes` redo records only, so it recovers like any page.
//!
//! **System tables** are clustered B+trees (`IndexKind::Clustered`,
//! `DB_TRX_ID` 0, null roll pointer: written outside transactions), one
//! fixed [`RecordLayout`](basalt_page::RecordLayout) each, every key field
//! compared byte-wise:
//!
//! ```text
//!   mysql.user         user | host || plugin | auth_string | privileges u64
//!                                  || account_locked | password_expired
//!                                  || password_last_changed u64 NULL
//!   mysql.db           user | host | db || privileges u64
//!   mysql.tables_priv  user | host | db | table_name || privileges u64
//!   mysql.schemata     name || default_charset | default_collation
//! ```
//!
//! # Key encodings
//!
//! Each key column is stored in a memcomparable form (see [`codec`]):
//! user, schema and table names are their UTF-8 bytes (case-sensitive,
//! code point order, like `utf8mb4_bin`; MySQL's
//! `lower_case_table_names=0`); host names are UTF-8 with ASCII letters
//! lowercased, so byte comparison is ASCII-case-insensitive (as MySQL's
//! host column is) and rows come back with lowercased hosts; integers are
//! big-endian. Trailing spaces are significant (NO PAD). Names are limited
//! in characters as MySQL limits them (user 32, host 255, schema and
//! table 64); non-key columns are at most 255 bytes, so no row ever goes
//! to overflow pages (those are written in mini-transactions of their
//! own, which would break the all-or-nothing rule below).
//!
//! # Open and bootstrap
//!
//! [`Catalog::open_or_bootstrap`] runs once, after `Storage::open` (which
//! already ran crash recovery). In one mini-transaction it X-latches page
//! 7 (accepting an all-zero page) and:
//!
//! * all zeroes: no dictionary. It creates every system table (allocating
//!   root pages), initialises page 7 and writes the header, commits and
//!   flushes the log. A crash before that flush leaves page 7 all zero on
//!   disk (the WAL rule keeps the page from being written first), and
//!   recovery applies the group whole or not at all (`MtrEnd`), so the
//!   next start sees either a complete dictionary or none and bootstraps
//!   again. There is no half-made state to mistake for a complete one.
//! * a valid header: each system table this build defines is opened at
//!   its recorded root (its layout version must match); tables the header
//!   does not name are created in the same way (the upgrade path new
//!   dictionary tables take, see [`tables`]).
//! * anything else: [`CatalogError::Corrupt`]; page 7 is never
//!   overwritten.
//!
//! # Batches: all or nothing, durable
//!
//! [`Catalog::apply`] takes a batch of [`CatalogChange`]s (`Put` = insert,
//! or update when the key exists; `Delete` = remove, a missing key is
//! counted, not an error) and runs them in order in ONE mini-transaction:
//!
//! ```text
//!   write-lock ─▶ Mtr::start ─▶ put/delete ... ─▶ commit ─▶ flush_up_to(end) ─▶ Ok
//!                                  │ any error              │ log failed
//!                                  ▼                        ▼
//!                   drop mtr: before-images restored   poison: every later call
//!                   (nothing visible, nothing logged)  returns Poisoned (restart)
//! ```
//!
//! Values are encoded as each change is applied, so a bad value in the
//! middle of a batch fails after earlier changes already touched pages;
//! dropping the mini-transaction puts those pages back. A batch whose redo
//! exceeds the log's largest group is refused at commit
//! ([`CatalogError::BatchTooLarge`]) and likewise leaves nothing; so does
//! one that needs more buffer-pool frames than are free (every page it
//! changes stays latched until commit). Batches are statements (`DROP
//! USER` with its grants), far below either limit.
//! When `apply` returns `Ok`, the batch's redo is on disk: it survives any
//! crash. When the log fails *after* the commit, the batch is in the
//! buffer pool but its durability is unknown, so the catalog poisons
//! itself instead of serving rows a restart might not have.
//!
//! # Why one writer
//!
//! A mini-transaction keeps every page it changed X-latched until commit,
//! including the tablespace header (page 0) after a split or a free. The
//! B+tree allows several operations in one mini-transaction only when no
//! other thread works on the same trees meanwhile: the second operation
//! descends from the root while pages of the first stay latched, outside
//! the top-down order. The catalog makes that hold by construction:
//!
//! * only the catalog latches system-table pages, and always under its
//!   `RwLock`: `apply` holds it exclusively, `load_all`, `scan`, `get`
//!   and `validate` shared. So no thread can hold a system-tree page (even a reader's S
//!   latch on a root while it waits for a child) while a batch runs;
//! * other users of the system tablespace (the future transaction system,
//!   [`Catalog::allocate_ids`] on page 7) take page 0 only after their own
//!   pages and then only the page being allocated or freed, which is
//!   never a system-tree page held by a batch: a page a batch freed stays
//!   latched by the batch, and reaching it takes page 0 first, which the
//!   batch also holds. So a batch never waits for a latch whose holder
//!   waits for it.
//!
//! Latch order inside a batch: system-tree pages (top-down per operation),
//! page 0, then the page being allocated. At open: page 7, page 0, new
//! root pages. `allocate_ids`: page 7 alone.
//!
//! # Ids
//!
//! [`Catalog::allocate_ids`] moves the counters of the header in its own
//! durable mini-transaction, serialised by page 7's latch, and returns the
//! ranges. Ids are never handed out twice, even across crashes; ids a
//! crashed DDL never used are simply skipped.
//!
//! # Threads
//!
//! None. Callers may share a `Catalog` between threads (`Send + Sync`);
//! `apply` calls queue on the write lock.
//!
//! # Tests
//!
//! Unit tests beside the code cover the codecs (round trips, limits,
//! order of the stored bytes, damaged bytes) and the header format.
//! `tests/` (in-memory files, `FaultyIo` for crashes and failures):
//! `bootstrap` (create, reopen after shutdown and after crash recovery,
//! a crash at every write of bootstrap, damaged header page, the upgrade
//! path, real files through `PosixIo`), `apply` (put/update/delete semantics, a bad value in mid-batch,
//! an oversized batch, a failing log write, a crash after `apply`
//! returned, a crash at every write during a batch), `model` (seeded
//! random batches against a `BTreeMap` model with restarts and crashes;
//! `BASALT_TEST_SEED=<u64>` replays, `BASALT_CATALOG_BATCHES=<n>` runs longer),
//! `concurrent` (threads applying at once, readers meanwhile, a deadlock
//! watchdog), `ids` (durable, unique id allocation). The tests that
//! check rows also run `validate` on every system tree. The whole suite
//! takes about 30 s in a debug build; the crash sweeps (one fresh data
//! directory per crash point) are most of it.
//!
//! # Modules
//!
//! [`codec`] (column types and encodings), [`header`] (page 7), [`table`]
//! ([`SystemTable`], the generic table over a B+tree), [`tables`] (the
//! system table definitions and typed rows), `change` (batches,
//! snapshots, reports), `catalog` ([`Catalog`]), `error`.

#![forbid(unsafe_code)]

mod catalog;
mod change;
pub mod codec;
mod error;
pub mod header;
pub mod table;
pub mod tables;

pub use catalog::{dict_header_page, Catalog, CatalogStartup};
pub use change::{AllocatedIds, ApplyReport, CatalogChange, CatalogSnapshot, IdRequest};
pub use codec::{
    ColumnDef, ColumnType, EncodedRow, RowDecoder, RowEncoder, SystemTableDef, SystemTableId,
};
pub use error::{CatalogError, CatalogResult};
pub use header::{Counters, DictHeader, RootSlot, FIRST_DYNAMIC_ID, FIRST_SPACE_ID, MAX_SPACE_ID};
pub use table::{PutOutcome, SystemKey, SystemRow, SystemTable};
pub use tables::{
    AccountKey, AccountRow, DbGrantKey, DbGrantRow, SchemaKey, SchemaRow, TableGrantKey,
    TableGrantRow, SYSTEM_TABLES,
};
