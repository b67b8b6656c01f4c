//! Basalt's system variables and option files.
//!
//! One typed registry of system variables feeds three consumers:
//!
//! ```text
//!                        sysvar::TABLE  (static, sorted, checked at compile time)
//!                 ______________|________________________________
//!                |                         |                      |
//!   startup: load_server_options   runtime: SET / @@x      SHOW VARIABLES
//!   argv + option files             SessionVars::set/value  SessionVars::show
//!        |                                 |                GlobalVars::show
//!        v                                 v
//!   Arc<GlobalVars> <------- SET GLOBAL ---+
//!        |  get(keys::X) at startup, on_change(keys::X, ..) listeners
//!        v
//!   storage engine, server binary           SessionVars (one per connection)
//! ```
//!
//! # Crate rules
//!
//! * This crate knows names, types, ranges and defaults. It does not know
//!   what a buffer pool or a transaction is: owners read typed values
//!   ([`GlobalVars::get`] with a key from [`keys`]) at startup and subscribe
//!   to dynamic changes ([`GlobalVars::on_change`]). It depends on nothing of
//!   ours but `basalt-common`, so every layer may use it.
//! * No `unsafe`; no I/O except reading option files and a few facts about
//!   the machine at startup ([`Environment::from_process`]).
//! * Errors are one enum, [`ConfigError`]. `SET`/`@@x` errors print MySQL's
//!   message and expose MySQL's code and SQLSTATE ([`ConfigError::code`],
//!   [`ConfigError::sqlstate`]); startup errors name the file and line.
//!
//! # The registry
//!
//! Every variable is a [`SysVarDef`]: name, [`SysVarKind`] (bool, integer
//! with range, block size and unit suffixes, double, enum, set, string,
//! path, character set, collation, time zone), compiled default,
//! [`Scope`] (global, session, both), whether `SET` can change it
//! (`dynamic`), whether option files can set it (`startup`), whether its
//! session copy is read-only, and a description. The table lives in
//! `sysvar/table.rs`, one line per variable, sorted; a `const` check fails
//! the build if it is unsorted, has duplicates, or a default does not fit
//! its kind and range. [`keys`] holds a typed handle per variable, checked
//! against the table at compile time.
//!
//! Values are [`SysValue`]s; their `Display` is exactly what MySQL's
//! `SHOW VARIABLES` prints (`ON`/`OFF`, plain byte counts, six-decimal
//! doubles, enum names, `sql_mode` members comma-separated in MySQL's bit
//! order). `SET` right-hand sides are [`Assignment`]s, typed the way the SQL
//! layer evaluated them, because MySQL's acceptance rules depend on the
//! literal's type.
//!
//! Aliases: `tx_isolation` and `tx_read_only` (the pre-8.0 names, which
//! older connectors still send) work in SQL and option files;
//! `default_time_zone` (MySQL's option name for `time_zone`) only in option
//! files. `SHOW VARIABLES` lists canonical names only, as MySQL 8.0 does.
//!
//! ## What is included, and why
//!
//! * Storage-engine settings from the design (buffer pool, LRU midpoint,
//!   page cleaner and adaptive flushing, redo log, doublewrite, flush
//!   method, purge, rollback segments, lock wait timeout, shutdown). Their
//!   owners read them at startup; the dynamic ones get listeners.
//! * Server and session settings the protocol and SQL layers implement:
//!   `port`, `bind_address`, `datadir`, `pid_file`, `tmpdir`, `log_error`,
//!   `max_connections`, timeouts, `max_allowed_packet`, `autocommit`,
//!   `sql_mode`, `transaction_isolation`, `transaction_read_only`,
//!   character sets and collations, `time_zone`, `auto_increment_*`,
//!   `foreign_key_checks`, `unique_checks`, `sql_safe_updates`,
//!   `sql_select_limit`, `max_execution_time`, `lock_wait_timeout`,
//!   `group_concat_max_len`, `init_connect`, `last_insert_id`.
//! * Values clients read at connect. MySQL Connector/J runs one `SELECT` of
//!   `auto_increment_increment`, `character_set_client`,
//!   `character_set_connection`, `character_set_results`,
//!   `character_set_server`, `collation_server`, `collation_connection`,
//!   `init_connect`, `interactive_timeout`, `license`,
//!   `lower_case_table_names`, `max_allowed_packet`, `net_write_timeout`,
//!   `performance_schema`, `sql_mode`, `system_time_zone`, `time_zone`,
//!   `transaction_isolation` and `wait_timeout`, and fails to connect if one
//!   is unknown; the `mysql`/`mariadb` command-line clients read
//!   `version_comment`; the Rust `mysql` crate reads `socket` on loopback
//!   connections and fails on an error; tools read `version`,
//!   `version_compile_os`, `version_compile_machine`, `hostname`,
//!   `protocol_version`, `have_ssl`/`have_openssl`, `server_id`,
//!   `character_set_system`, `character_set_database`/`collation_database`,
//!   `sql_log_bin`.
//! * Informational variables are read-only and not options unless noted:
//!   `socket` is empty (TCP only), `have_ssl` is `DISABLED` until the server
//!   records otherwise with [`GlobalVars::set_server_value`],
//!   `performance_schema` is `OFF`, `server_id` is accepted and reported
//!   (no replication), `sql_log_bin` is accepted (no binary log).
//! * Options that MySQL users put in every my.cnf but that Basalt supports
//!   with one value only are *fixed*: `innodb_page_size` (16384),
//!   `lower_case_table_names` (0), `skip_name_resolve` (ON). A file that
//!   states that value loads; any other value is an error naming the only
//!   accepted one.
//! * Not accepted, because nothing implements them: `socket` as an option,
//!   `general_log`, `character_sets_dir`, `innodb_data_home_dir`,
//!   replication and binary-log options, `performance_schema` as an
//!   option. A `loose-` prefix lets a shared my.cnf keep them.
//!
//! ## Defaults that differ from MySQL 8.0, on purpose
//!
//! * `bind_address = 127.0.0.1` (MySQL: `*`). A freshly started server is
//!   reachable from this machine only until someone decides otherwise.
//! * `innodb_flush_method = O_DIRECT` (MySQL on Linux: `fsync`). The buffer
//!   pool is our page cache; going through the kernel's as well doubles the
//!   memory spent on each page and makes write latency depend on the
//!   kernel's writeback. The I/O layer falls back to buffered I/O where
//!   the file system refuses `O_DIRECT`.
//! * `innodb_buffer_pool_size` is rounded down to a multiple of 1 MiB (MySQL
//!   rounds up to a multiple of `innodb_buffer_pool_chunk_size` times the
//!   number of instances, because it resizes online in chunks; Basalt sizes
//!   the pool once at startup, so it is not dynamic here). The pool is
//!   forced to 1 instance below 1 GiB, as in MySQL.
//! * `innodb_log_buffer_size` is rounded to 4 KiB and, like
//!   `innodb_buffer_pool_size`, fixed for the life of the server.
//! * `default_storage_engine` accepts and shows `InnoDB`: Basalt's engine
//!   implements InnoDB's behaviour and clients and tools (ORMs, dump
//!   tools) check for that name.
//! * `pid_file` defaults to `basaltd.pid` in the data directory (MySQL:
//!   `<hostname>.pid`), so scripts need not know the host name.
//! * `port = 0` asks the operating system for a free port (useful for
//!   tests); the server records the bound port with
//!   [`GlobalVars::set_server_value`].
//! * `system_time_zone` is the zone name (`Europe/Berlin`, `UTC`) rather
//!   than its abbreviation.
//!
//! # Runtime: `SET`, `@@x`, `SHOW VARIABLES`
//!
//! [`GlobalVars`] holds the server-wide values behind a read-write lock,
//! with a writer mutex that serialises `SET GLOBAL`s and their listeners
//! (latch order: writer, then values, then listener list; listeners run
//! holding only the writer and must not `SET` from inside). [`SessionVars`]
//! is one connection's copy, lock-free, created from the globals at
//! connect. Resolution of `@@x` follows MySQL: `@@x` is the session value
//! if the variable has one, else the global; `@@session.x`/`@@local.x` of a
//! global-only variable and `@@global.x` of a session-only one are error
//! 1238. `SET` validation, in order: 1193 unknown, 1238 read-only, 1229/1228
//! wrong scope, 1621 read-only session copy, then 1231 (wrong value), 1232
//! (wrong type), 1115/1273/1298 (unknown character set, collation, time
//! zone). Out-of-range numbers are clamped (and sizes rounded to their
//! block) with warning 1292, as MySQL does. `SET x = DEFAULT` gives the
//! compiled default globally and the global value in a session. Setting a
//! `character_set_*` moves its `collation_*` to the set's default collation
//! and vice versa. `innodb_io_capacity` stays at most
//! `innodb_io_capacity_max` (and `innodb_max_dirty_pages_pct_lwm` at most
//! `innodb_max_dirty_pages_pct`): a `SET` that would break the order is
//! clamped to the other value with warning 1210; the other variable never
//! changes implicitly.
//!
//! # Startup: option files and the command line
//!
//! [`load_server_options`] implements MySQL's rules (details in the
//! [`load`] and [`option_file`] module docs):
//!
//! * sources: `/etc/basalt.cnf`, `/etc/basalt/basalt.cnf`,
//!   `--defaults-extra-file`, `~/.basalt.cnf`, then the command line;
//!   `--defaults-file=F` replaces the search list, `--no-defaults` reads no
//!   file. MySQL's own `/etc/my.cnf` and `/etc/mysql/my.cnf` are not searched
//!   (see [`load`] for why); groups `[mysqld]` and `[basaltd]` are read;
//! * later values win, whatever group or file they come from;
//! * `-` and `_` are interchangeable and names ignore case; `K`, `M`, `G`,
//!   `T` (also `P`, `E`) suffixes for sizes; booleans take `ON`/`OFF`/
//!   `TRUE`/`FALSE`/`1`/`0`, a bare name means `ON`, `skip-`/`disable-` mean
//!   `OFF`, `enable-` means `ON`;
//! * `loose-` turns an unknown option into a warning;
//! * `--name=value`, `--name value` (non-booleans) and `--flag` on the
//!   command line;
//! * `--help`, `--version` and `--print-defaults` are reported as a
//!   [`Command`] for the binary to act on.
//!
//! Errors name the place and the option:
//! `/etc/basalt.cnf:12: unknown variable 'innodb_bufer_pool_size'`,
//! `/etc/basalt.cnf:7: invalid value 'abc' for innodb_old_blocks_pct:
//! expected an integer from 5 to 95`, `command line: ...`. Deviations from
//! MySQL, all stricter: an unterminated quote, text after a closing quote, a
//! missing `!include` target and an option before any group are errors.
//! Unambiguous option-name prefixes (`--innodb-buffer-pool-s`) and
//! `--maximum-x` are not supported.
//!
//! The documented default option file is `config/basalt.cnf` in the
//! repository; a test loads it (with every commented-out default enabled)
//! through the real loader and checks that it documents every startup
//! option with its compiled default.
//!
//! # Threads
//!
//! None of its own. Listeners run on the thread executing `SET GLOBAL`.
//!
//! # Tests
//!
//! Unit tests sit beside the code; `tests/` holds the option-file scenarios
//! (one temp directory each), the `SET` validation matrix, `SHOW VARIABLES`
//! formatting, listener behaviour and the `config/basalt.cnf` check. The
//! seeded model test `random_sets_match_a_reference_map` prints its seed on
//! failure and replays one given in `BASALT_TEST_SEED`. The whole suite runs
//! in well under a second; nothing is behind `#[ignore]`.

#![forbid(unsafe_code)]

mod error;
pub mod load;
pub mod option_file;
mod origin;
mod store;
pub mod sysvar;

pub use error::{ConfigError, SetWarning, StartupWarning, StartupWarningKind};
pub use load::{load_server_options, Command, Environment, Loader, ServerOptions};
pub use origin::Origin;
pub use store::{
    like_matches, GlobalVars, Qualifier, SessionVars, SetOutcome, SubscriptionId, VariableRow,
};
pub use sysvar::{
    keys, lookup, registry, Assignment, Scope, SqlMode, SysValue, SysVarDef, SysVarKind, VERSION,
};
