//! The registry: every system variable Basalt knows, sorted by name.
//!
//! One entry per line: `def(name, kind(default, range...), scope, flags,
//! description)`. Flags: `DYN` = `SET` may change it at runtime, `OPT` =
//! option files and the command line may set it, `SRO` = the session copy is
//! read-only, `FIXED` = only the default is accepted at startup, `RO` = none
//! (a value the server reports). The table is validated when the crate
//! compiles (sorted, unique, defaults of the right kind and in range; see
//! [`validate`]) and further by unit tests. To add a variable: add its line
//! here in name order, a key in `keys.rs`, and its documentation in
//! `config/basalt.cnf` if it carries `OPT` (a test enforces the last two).

use super::def::{
    boolean, charset, charset_or_null, collation, def, double, enumeration, path, set, size,
    string, time_zone, uint, DefaultValue, Scope, SetSpec, SysVarDef, SysVarKind, DYN, FIXED, OPT,
    RO, SRO,
};
use super::lookup::const_index;
use super::sql_mode::{SqlMode, SQL_MODE_SPEC};

/// The server version Basalt reports (`@@version`, handshake packet).
pub const VERSION: &str = "8.0.36-basalt";

/// The text of `@@version_comment` (the `mysql` client prints it at login).
pub const VERSION_COMMENT: &str = "Basalt";

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const GIB: u64 = 1024 * MIB;

const GLOBAL: Scope = Scope::Global;
const SESSION: Scope = Scope::Session;
const BOTH: Scope = Scope::Both;

/// The largest `u64` that is a multiple of 1 MiB.
const MAX_MIB_MULTIPLE: u64 = u64::MAX - (u64::MAX % MIB);

const ONE_YEAR_S: u64 = 31_536_000;
const U32_MAX: u64 = u32::MAX as u64;

/// `innodb_flush_method` values Basalt implements.
const FLUSH_METHODS: &[&str] = &["fsync", "O_DIRECT", "O_DIRECT_NO_FSYNC"];
/// `transaction_isolation` values, in MySQL's order (numeric SET uses it).
const ISOLATION_LEVELS: &[&str] = &[
    "READ-UNCOMMITTED",
    "READ-COMMITTED",
    "REPEATABLE-READ",
    "SERIALIZABLE",
];
/// `optimizer_switch`: MySQL 8.0's switches, in its order.
static OPTIMIZER_SWITCH_SPEC: SetSpec = SetSpec {
    names: &[
        "index_merge",                         // 0
        "index_merge_union",                   // 1
        "index_merge_sort_union",              // 2
        "index_merge_intersection",            // 3
        "engine_condition_pushdown",           // 4
        "index_condition_pushdown",            // 5
        "mrr",                                 // 6
        "mrr_cost_based",                      // 7
        "block_nested_loop",                   // 8
        "batched_key_access",                  // 9: off
        "materialization",                     // 10
        "semijoin",                            // 11
        "loosescan",                           // 12
        "firstmatch",                          // 13
        "duplicateweedout",                    // 14
        "subquery_materialization_cost_based", // 15
        "use_index_extensions",                // 16
        "condition_fanout_filter",             // 17
        "derived_merge",                       // 18
        "use_invisible_indexes",               // 19: off
        "skip_scan",                           // 20
        "hash_join",                           // 21
        "subquery_to_derived",                 // 22: off
        "prefer_ordering_index",               // 23
        "hypergraph_optimizer",                // 24: off
        "derived_condition_pushdown",          // 25
        "hash_set_operations",                 // 26
    ],
    combinations: &[],
    switches: true,
};
/// Every switch on but batched_key_access, use_invisible_indexes,
/// subquery_to_derived and hypergraph_optimizer, as in MySQL 8.0.
const OPTIMIZER_SWITCH_DEFAULT: u64 =
    ((1u64 << 27) - 1) & !(1 << 9) & !(1 << 19) & !(1 << 22) & !(1 << 24);
const AUTH_PLUGINS: &[&str] = &["mysql_native_password", "caching_sha2_password"];
const STORAGE_ENGINES: &[&str] = &["InnoDB"];

/// `@@version_compile_os` as MySQL spells it.
const COMPILE_OS: &str = if cfg!(target_os = "linux") {
    "Linux"
} else if cfg!(target_os = "macos") {
    "macOS"
} else {
    std::env::consts::OS
};

#[rustfmt::skip]
pub(crate) const TABLE: &[SysVarDef] = &[
    def("auto_increment_increment",       uint(1, 1, 65_535),                                   BOTH,    DYN | OPT, "Step between successive AUTO_INCREMENT values."),
    def("auto_increment_offset",          uint(1, 1, 65_535),                                   BOTH,    DYN | OPT, "First AUTO_INCREMENT value (starting point of the step)."),
    def("autocommit",                     boolean(true),                                        BOTH,    DYN | OPT, "Commit every statement on its own unless a transaction was started explicitly."),
    def("bind_address",                   string("127.0.0.1"),                                  GLOBAL,  OPT,       "Address the server listens on for TCP clients; 0.0.0.0 or :: for every interface."),
    def("character_set_client",           charset("utf8mb4"),                                   BOTH,    DYN,       "Character set of statements the client sends."),
    def("character_set_connection",       charset("utf8mb4"),                                   BOTH,    DYN,       "Character set literals are converted to; setting it also sets collation_connection."),
    def("character_set_database",         charset("utf8mb4"),                                   BOTH,    DYN,       "Character set of the default database; setting it also sets collation_database."),
    def("character_set_results",          charset_or_null("utf8mb4"),                           BOTH,    DYN,       "Character set results are sent in; NULL sends them unconverted."),
    def("character_set_server",           charset("utf8mb4"),                                   BOTH,    DYN | OPT, "Default character set of new databases; setting it also sets collation_server."),
    def("character_set_system",           charset("utf8mb3"),                                   GLOBAL,  RO,        "Character set of identifiers in the data dictionary."),
    def("collation_connection",           collation("utf8mb4_0900_ai_ci"),                      BOTH,    DYN,       "Collation of literals; setting it also sets character_set_connection."),
    def("collation_database",             collation("utf8mb4_0900_ai_ci"),                      BOTH,    DYN,       "Collation of the default database; setting it also sets character_set_database."),
    def("collation_server",               collation("utf8mb4_0900_ai_ci"),                      BOTH,    DYN | OPT, "Default collation of new databases; setting it also sets character_set_server."),
    def("connect_timeout",                uint(10, 2, ONE_YEAR_S),                              GLOBAL,  DYN | OPT, "Seconds the server waits for a client to finish the handshake."),
    def("datadir",                        path("./data"),                                       GLOBAL,  OPT,       "Data directory: tablespaces, redo log and the pid file; relative paths start at the working directory."),
    def("default_authentication_plugin",  enumeration(AUTH_PLUGINS, "caching_sha2_password"),  GLOBAL,  OPT,       "Authentication plugin of accounts created without naming one."),
    def("default_storage_engine",         enumeration(STORAGE_ENGINES, "InnoDB"),               BOTH,    DYN | OPT, "Storage engine of new tables; Basalt's engine answers to the name InnoDB."),
    def("foreign_key_checks",             boolean(true),                                        BOTH,    DYN,       "Check FOREIGN KEY constraints on changes."),
    def("group_concat_max_len",           size(1024, 4, u64::MAX, 1),                           BOTH,    DYN | OPT, "Longest result GROUP_CONCAT() returns, in bytes."),
    def("have_openssl",                   string("DISABLED"),                                   GLOBAL,  RO,        "Whether TLS connections are available (alias of have_ssl)."),
    def("have_ssl",                       string("DISABLED"),                                   GLOBAL,  RO,        "Whether TLS connections are available: YES or DISABLED."),
    def("hostname",                       string("localhost"),                                  GLOBAL,  RO,        "Host name of the machine, read at startup."),
    def("init_connect",                   string(""),                                           GLOBAL,  DYN | OPT, "SQL statements every new client connection runs before its first command."),
    def("innodb_adaptive_flushing",       boolean(true),                                        GLOBAL,  DYN | OPT, "Let the page cleaner pace flushing by the redo generation rate."),
    def("innodb_adaptive_flushing_lwm",   uint(10, 0, 70),                                      GLOBAL,  DYN | OPT, "Redo-log fill percentage below which adaptive flushing stays off."),
    def("innodb_buffer_pool_instances",   uint(1, 1, 64),                                       GLOBAL,  OPT,       "Number of buffer pool instances; 1 below a 1 GiB pool, otherwise 8 unless set."),
    def("innodb_buffer_pool_size",        size(128 * MIB, 5 * MIB, MAX_MIB_MULTIPLE, MIB),      GLOBAL,  OPT,       "Bytes of memory for cached pages, rounded down to a multiple of 1 MiB."),
    def("innodb_doublewrite",             boolean(true),                                        GLOBAL,  OPT,       "Write pages through the doublewrite area first so torn pages can be repaired."),
    def("innodb_fast_shutdown",           uint(1, 0, 2),                                        GLOBAL,  DYN | OPT, "Shutdown work: 0 = purge and flush everything, 1 = flush dirty pages, 2 = flush only the log."),
    def("innodb_flush_log_at_timeout",    uint(1, 1, 2_700),                                    GLOBAL,  DYN | OPT, "Seconds between background log flushes when commits do not flush."),
    def("innodb_flush_log_at_trx_commit", uint(1, 0, 2),                                        GLOBAL,  DYN | OPT, "1 = write and fsync the log at commit, 2 = write at commit and fsync once a second, 0 = both once a second."),
    def("innodb_flush_method",            enumeration(FLUSH_METHODS, "O_DIRECT"),               GLOBAL,  OPT,       "How data files are opened and synced: fsync, O_DIRECT, or O_DIRECT_NO_FSYNC."),
    def("innodb_flushing_avg_loops",      uint(30, 1, 1_000),                                   GLOBAL,  DYN | OPT, "Number of page cleaner iterations the flushing rate is averaged over."),
    def("innodb_idle_flush_pct",          uint(100, 0, 100),                                    GLOBAL,  DYN | OPT, "Percentage of innodb_io_capacity the page cleaner uses while the server is idle."),
    def("innodb_io_capacity",             uint(200, 100, u64::MAX),                             GLOBAL,  DYN | OPT, "Page writes per second background flushing aims for; never above innodb_io_capacity_max."),
    def("innodb_io_capacity_max",         uint(2_000, 100, u64::MAX),                           GLOBAL,  DYN | OPT, "Page writes per second background flushing may reach when behind; defaults to twice innodb_io_capacity, at least 2000."),
    def("innodb_lock_wait_timeout",       uint(50, 1, 1_073_741_824),                           BOTH,    DYN | OPT, "Seconds a transaction waits for a row lock before error 1205."),
    def("innodb_log_buffer_size",         size(16 * MIB, 256 * KIB, 4 * GIB, 4 * KIB),          GLOBAL,  OPT,       "Bytes of the in-memory redo log buffer, a multiple of 4 KiB."),
    def("innodb_log_file_buffering",      boolean(false),                                       GLOBAL,  OPT,       "Write the redo log through the OS page cache (ON) or with O_DIRECT where the filesystem allows it (OFF)."),
    def("innodb_log_file_size",           size(48 * MIB, 4 * MIB, 512 * GIB, MIB),              GLOBAL,  OPT,       "Bytes of each redo log file, a multiple of 1 MiB."),
    def("innodb_log_files_in_group",      uint(2, 2, 100),                                      GLOBAL,  OPT,       "Number of redo log files; capacity is this times innodb_log_file_size."),
    def("innodb_lru_scan_depth",          uint(1_024, 100, u64::MAX),                           GLOBAL,  DYN | OPT, "Pages per instance the page cleaner scans at the LRU tail to keep free frames."),
    def("innodb_max_dirty_pages_pct",     double(90.0, 0.0, 99.999),                            GLOBAL,  DYN | OPT, "Dirty-page percentage above which the page cleaner flushes at full io capacity."),
    def("innodb_max_dirty_pages_pct_lwm", double(10.0, 0.0, 99.999),                            GLOBAL,  DYN | OPT, "Dirty-page percentage at which preflushing starts; 0 disables; never above innodb_max_dirty_pages_pct."),
    def("innodb_max_purge_lag",           uint(0, 0, U32_MAX),                                  GLOBAL,  DYN | OPT, "History list length above which row changes are delayed; 0 = never delay."),
    def("innodb_max_purge_lag_delay",     uint(0, 0, 10_000_000),                               GLOBAL,  DYN | OPT, "Longest purge-lag delay per row change, in microseconds; 0 = no cap."),
    def("innodb_old_blocks_pct",          uint(37, 5, 95),                                      GLOBAL,  DYN | OPT, "Percentage of the LRU list kept as the old sublist, where newly read pages enter."),
    def("innodb_old_blocks_time",         uint(1_000, 0, U32_MAX),                              GLOBAL,  DYN | OPT, "Milliseconds a page must stay in the old sublist before another access makes it young."),
    def("innodb_page_cleaners",           uint(4, 1, 64),                                       GLOBAL,  OPT,       "Page cleaner threads; never more than innodb_buffer_pool_instances."),
    def("innodb_page_size",               size(16 * KIB, 16 * KIB, 16 * KIB, 1),                GLOBAL,  OPT | FIXED, "Page size in bytes; Basalt uses 16 KiB pages only."),
    def("innodb_purge_batch_size",        uint(300, 1, 5_000),                                  GLOBAL,  DYN | OPT, "Undo log pages purge handles per batch."),
    def("innodb_purge_threads",           uint(4, 1, 32),                                       GLOBAL,  OPT,       "Purge threads: one coordinator plus workers."),
    def("innodb_rollback_segments",       uint(128, 1, 128),                                    GLOBAL,  DYN | OPT, "Rollback segments transactions may use for undo."),
    def("innodb_use_native_aio",          boolean(true),                                        GLOBAL,  OPT,       "Use io_uring for asynchronous reads and writes where the kernel allows; pread/pwrite otherwise."),
    def("interactive_timeout",            uint(28_800, 1, ONE_YEAR_S),                          BOTH,    DYN | OPT, "Idle seconds before an interactive client connection is closed."),
    def("last_insert_id",                 uint(0, 0, u64::MAX),                                 SESSION, DYN,       "Value LAST_INSERT_ID() returns."),
    def("license",                        string("GPL"),                                        GLOBAL,  RO,        "License of the server."),
    def("lock_wait_timeout",              uint(ONE_YEAR_S, 1, ONE_YEAR_S),                      BOTH,    DYN | OPT, "Seconds a statement waits for a metadata lock."),
    def("log_error",                      path("stderr"),                                       GLOBAL,  OPT,       "Error log file; stderr writes to standard error; relative paths start at datadir."),
    def("lower_case_table_names",         uint(0, 0, 2),                                        GLOBAL,  OPT | FIXED, "Table name case handling; Basalt stores names as given and compares them case-sensitively (0)."),
    def("max_allowed_packet",             size(64 * MIB, KIB, GIB, KIB),                        BOTH,    DYN | OPT | SRO, "Largest packet or generated string, in bytes; the session copy is read-only."),
    def("max_connections",                uint(151, 1, 100_000),                                GLOBAL,  DYN | OPT, "Most client connections open at once."),
    def("max_execution_time",             uint(0, 0, U32_MAX),                                  BOTH,    DYN | OPT, "Milliseconds a SELECT may run before it is interrupted; 0 = no limit."),
    def("net_buffer_length",              size(16 * KIB, KIB, MIB, KIB),                        BOTH,    DYN | OPT | SRO, "Initial size of a connection's network buffer, in bytes; the session copy is read-only."),
    def("net_read_timeout",               uint(30, 1, ONE_YEAR_S),                              BOTH,    DYN | OPT, "Seconds to wait for more data from a client before aborting the read."),
    def("net_write_timeout",              uint(60, 1, ONE_YEAR_S),                              BOTH,    DYN | OPT, "Seconds to wait for a client to accept a write before aborting it."),
    def("optimizer_switch",               set(&OPTIMIZER_SWITCH_SPEC, OPTIMIZER_SWITCH_DEFAULT), BOTH,    DYN | OPT, "Optimizer feature switches, name=on|off; SET changes only the switches it names (default restores all)."),
    def("performance_schema",             boolean(false),                                       GLOBAL,  RO,        "Whether the performance_schema is enabled; Basalt has none."),
    def("pid_file",                       path("basaltd.pid"),                                  GLOBAL,  OPT,       "File the server writes its process id to; relative paths start at datadir."),
    def("port",                           uint(3_306, 0, 65_535),                               GLOBAL,  OPT,       "TCP port to listen on; 0 asks the operating system for a free port."),
    def("protocol_version",               uint(10, 0, U32_MAX),                                 GLOBAL,  RO,        "Version of the client/server protocol."),
    def("server_id",                      uint(1, 0, U32_MAX),                                  GLOBAL,  DYN | OPT, "Server identifier, reported for tools that read it; Basalt does not replicate."),
    def("skip_name_resolve",              boolean(true),                                        GLOBAL,  OPT | FIXED, "Clients are identified by IP address only; Basalt never resolves host names."),
    def("socket",                         string(""),                                           GLOBAL,  RO,        "Unix socket path; empty because Basalt serves TCP only."),
    def("sql_log_bin",                    boolean(true),                                        SESSION, DYN,       "Accepted for client compatibility; Basalt keeps no binary log."),
    def("sql_mode",                       set(&SQL_MODE_SPEC, SqlMode::DEFAULT.bits()),         BOTH,    DYN | OPT, "SQL modes: syntax and data validation rules, comma-separated."),
    def("sql_quote_show_create",          boolean(true),                                        BOTH,    DYN,       "Quote identifiers in SHOW CREATE output always (ON) or only where needed (OFF)."),
    def("sql_safe_updates",               boolean(false),                                       BOTH,    DYN,       "Reject UPDATE and DELETE without a key in WHERE or a LIMIT."),
    def("sql_select_limit",               uint(u64::MAX, 0, u64::MAX),                          BOTH,    DYN,       "Most rows a SELECT returns to the client."),
    def("system_time_zone",               string("UTC"),                                        GLOBAL,  RO,        "Time zone of the machine, read at startup."),
    def("thread_cache_size",              uint(9, 0, 16_384),                                   GLOBAL,  DYN | OPT, "Idle connection threads kept for new connections; unless set, 8 + max_connections / 100."),
    def("time_zone",                      time_zone("SYSTEM"),                                  BOTH,    DYN | OPT, "Session time zone: SYSTEM, UTC or an offset like +02:00 (option name also default_time_zone)."),
    def("tmpdir",                         path("/tmp"),                                         GLOBAL,  OPT,       "Directory for temporary files; defaults to $TMPDIR, else /tmp."),
    def("transaction_isolation",          enumeration(ISOLATION_LEVELS, "REPEATABLE-READ"),     BOTH,    DYN | OPT, "Isolation level of new transactions (alias tx_isolation)."),
    def("transaction_read_only",          boolean(false),                                       BOTH,    DYN | OPT, "Start transactions read-only (alias tx_read_only)."),
    def("unique_checks",                  boolean(true),                                        BOTH,    DYN,       "Check UNIQUE constraints on secondary indexes."),
    def("version",                        string(VERSION),                                      GLOBAL,  RO,        "Server version."),
    def("version_comment",                string(VERSION_COMMENT),                              GLOBAL,  RO,        "Server distribution name."),
    def("version_compile_machine",        string(std::env::consts::ARCH),                       GLOBAL,  RO,        "Processor architecture the server was built for."),
    def("version_compile_os",             string(COMPILE_OS),                                   GLOBAL,  RO,        "Operating system the server was built for."),
    def("wait_timeout",                   uint(28_800, 1, ONE_YEAR_S),                          BOTH,    DYN | OPT, "Idle seconds before a non-interactive client connection is closed."),
];

/// Another name a variable answers to. `sql` aliases also work in `SET` and
/// `@@x`; the others only in option files and on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SysVarAlias {
    /// The alternative name.
    pub alias: &'static str,
    /// The canonical variable name.
    pub target: &'static str,
    /// Whether SQL accepts the alias too.
    pub sql: bool,
}

/// Aliases, sorted by alias.
pub(crate) const ALIASES: &[SysVarAlias] = &[
    // MySQL's option for the session time zone default.
    SysVarAlias {
        alias: "default_time_zone",
        target: "time_zone",
        sql: false,
    },
    // The pre-8.0 names, still sent by older connectors.
    SysVarAlias {
        alias: "tx_isolation",
        target: "transaction_isolation",
        sql: true,
    },
    SysVarAlias {
        alias: "tx_read_only",
        target: "transaction_read_only",
        sql: true,
    },
];

/// Variable pairs `(lower, upper)` whose values must stay ordered: setting
/// `lower` above `upper` (or `upper` below `lower`) clamps the value being
/// set to the other one, with a warning. Positions are resolved at compile
/// time.
pub(crate) const ORDERED_PAIRS: &[(usize, usize)] = &[
    (
        const_index("innodb_io_capacity"),
        const_index("innodb_io_capacity_max"),
    ),
    (
        const_index("innodb_max_dirty_pages_pct_lwm"),
        const_index("innodb_max_dirty_pages_pct"),
    ),
];

/// Character set variable and the collation variable that moves with it.
pub(crate) const CHARSET_COLLATION_PAIRS: &[(usize, usize)] = &[
    (
        const_index("character_set_connection"),
        const_index("collation_connection"),
    ),
    (
        const_index("character_set_database"),
        const_index("collation_database"),
    ),
    (
        const_index("character_set_server"),
        const_index("collation_server"),
    ),
];

// ---------------------------------------------------------------------------
// Compile-time validation.
// ---------------------------------------------------------------------------

const fn str_less(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut i = 0;
    while i < a.len() && i < b.len() {
        if a[i] != b[i] {
            return a[i] < b[i];
        }
        i += 1;
    }
    a.len() < b.len()
}

pub(crate) const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

const fn is_canonical_name(name: &str) -> bool {
    let b = name.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !(b[i].is_ascii_lowercase() || b[i].is_ascii_digit() || b[i] == b'_') {
            return false;
        }
        i += 1;
    }
    !b.is_empty()
}

const fn default_fits(def: &SysVarDef) -> bool {
    match (def.kind, def.default) {
        (SysVarKind::Bool, DefaultValue::Bool(_)) => true,
        (
            SysVarKind::Int {
                min,
                max,
                block_size,
                ..
            },
            DefaultValue::Int(v),
        ) => min <= v && v <= max && block_size > 0 && v.unsigned_abs() % block_size == 0,
        (
            SysVarKind::UInt {
                min,
                max,
                block_size,
                ..
            },
            DefaultValue::UInt(v),
        ) => {
            min <= v
                && v <= max
                && block_size > 0
                && v % block_size == 0
                && min % block_size == 0
                && max % block_size == 0
        }
        (SysVarKind::Double { min, max }, DefaultValue::Double(v)) => min <= v && v <= max,
        (SysVarKind::Enum(names), DefaultValue::Enum(name)) => {
            let mut i = 0;
            while i < names.len() {
                if str_eq(names[i], name) {
                    return true;
                }
                i += 1;
            }
            false
        }
        (SysVarKind::Set(_), DefaultValue::Set(_)) => true,
        (
            SysVarKind::Str { .. }
            | SysVarKind::Path
            | SysVarKind::Charset { .. }
            | SysVarKind::Collation
            | SysVarKind::TimeZone,
            DefaultValue::Str(_),
        ) => true,
        _ => false,
    }
}

/// Checks the table's structure; evaluated at compile time below, so a
/// malformed entry fails the build.
pub(crate) const fn validate(table: &[SysVarDef], aliases: &[SysVarAlias]) -> bool {
    let mut i = 0;
    while i < table.len() {
        let d = &table[i];
        assert!(
            is_canonical_name(d.name),
            "registry names are lower-case with underscores"
        );
        assert!(
            default_fits(d),
            "registry default does not fit its kind or range"
        );
        assert!(
            !d.description.is_empty(),
            "registry entries need a description"
        );
        assert!(
            !d.session_read_only || matches!(d.scope, Scope::Both),
            "session read-only needs both scopes"
        );
        assert!(
            !(d.fixed && d.dynamic),
            "a fixed variable cannot be dynamic"
        );
        if i > 0 {
            assert!(
                str_less(table[i - 1].name, d.name),
                "registry is not sorted or has duplicates"
            );
        }
        i += 1;
    }
    let mut j = 0;
    while j < aliases.len() {
        assert!(
            is_canonical_name(aliases[j].alias),
            "alias names are lower-case"
        );
        if j > 0 {
            assert!(
                str_less(aliases[j - 1].alias, aliases[j].alias),
                "aliases are not sorted"
            );
        }
        let mut found = false;
        let mut k = 0;
        while k < table.len() {
            assert!(
                !str_eq(table[k].name, aliases[j].alias),
                "alias shadows a variable"
            );
            if str_eq(table[k].name, aliases[j].target) {
                found = true;
            }
            k += 1;
        }
        assert!(found, "alias target is not a variable");
        j += 1;
    }
    true
}

const _: () = assert!(validate(TABLE, ALIASES));
