//! Typed keys: compile-time-checked handles to registry entries.
//!
//! `globals.get(keys::INNODB_OLD_BLOCKS_TIME)` returns a `u64` without a
//! name lookup or a fallible conversion: each key stores its registry
//! position, and its constructor (a `const fn` evaluated at compile time)
//! checks that the name exists and that the Rust type matches the
//! variable's kind. A misspelled or mistyped key fails the build.

use std::fmt;
use std::marker::PhantomData;

use super::def::SysVarKind;
use super::lookup::const_index;
use super::sql_mode::SqlMode;
use super::table::TABLE;
use super::value::{SetValue, VarType};
use super::SysVarDef;

/// A typed handle to one registry entry; see the module doc.
pub struct Key<T> {
    index: usize,
    marker: PhantomData<fn() -> T>,
}

impl<T> Clone for Key<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Key<T> {}

impl<T> fmt::Debug for Key<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({})", TABLE[self.index].name)
    }
}

impl<T: VarType> Key<T> {
    const fn at(index: usize) -> Self {
        Key {
            index,
            marker: PhantomData,
        }
    }

    /// Registry position.
    pub(crate) fn index(self) -> usize {
        self.index
    }

    /// The variable's definition.
    pub fn def(self) -> &'static SysVarDef {
        &TABLE[self.index]
    }

    /// The variable's canonical name.
    pub fn name(self) -> &'static str {
        TABLE[self.index].name
    }
}

impl Key<bool> {
    const fn new(name: &str) -> Self {
        let i = const_index(name);
        assert!(
            matches!(TABLE[i].kind, SysVarKind::Bool),
            "not a boolean variable"
        );
        Self::at(i)
    }
}

impl Key<u64> {
    const fn new(name: &str) -> Self {
        let i = const_index(name);
        assert!(
            matches!(TABLE[i].kind, SysVarKind::UInt { .. }),
            "not an unsigned variable"
        );
        Self::at(i)
    }
}

impl Key<f64> {
    const fn new(name: &str) -> Self {
        let i = const_index(name);
        assert!(
            matches!(TABLE[i].kind, SysVarKind::Double { .. }),
            "not a double variable"
        );
        Self::at(i)
    }
}

impl Key<&'static str> {
    const fn new(name: &str) -> Self {
        let i = const_index(name);
        assert!(
            matches!(TABLE[i].kind, SysVarKind::Enum(_)),
            "not an enum variable"
        );
        Self::at(i)
    }
}

/// Registry position of set variable `name` (a build error otherwise).
const fn set_index(name: &str) -> usize {
    let i = const_index(name);
    assert!(
        matches!(TABLE[i].kind, SysVarKind::Set(_)),
        "not a set variable"
    );
    i
}

impl Key<SqlMode> {
    const fn new(name: &str) -> Self {
        Self::at(set_index(name))
    }
}

impl Key<SetValue> {
    const fn new(name: &str) -> Self {
        Self::at(set_index(name))
    }
}

impl Key<String> {
    const fn new(name: &str) -> Self {
        let i = const_index(name);
        assert!(
            matches!(
                TABLE[i].kind,
                SysVarKind::Str { nullable: false }
                    | SysVarKind::Path
                    | SysVarKind::Charset { nullable: false }
                    | SysVarKind::Collation
                    | SysVarKind::TimeZone
            ),
            "not a non-nullable text variable"
        );
        Self::at(i)
    }
}

impl Key<Option<String>> {
    const fn new(name: &str) -> Self {
        let i = const_index(name);
        assert!(
            matches!(
                TABLE[i].kind,
                SysVarKind::Str { nullable: true } | SysVarKind::Charset { nullable: true }
            ),
            "not a nullable text variable"
        );
        Self::at(i)
    }
}

macro_rules! keys {
    ($($id:ident: $ty:ty = $name:literal;)*) => {
        $(
            #[doc = concat!("`", $name, "`")]
            pub const $id: Key<$ty> = Key::<$ty>::new($name);
        )*
        /// Every key's variable name, for the completeness test.
        #[cfg(test)]
        pub(crate) const ALL: &[&str] = &[$($name),*];
    };
}

keys! {
    AUTO_INCREMENT_INCREMENT: u64 = "auto_increment_increment";
    AUTO_INCREMENT_OFFSET: u64 = "auto_increment_offset";
    AUTOCOMMIT: bool = "autocommit";
    BIND_ADDRESS: String = "bind_address";
    CHARACTER_SET_CLIENT: String = "character_set_client";
    CHARACTER_SET_CONNECTION: String = "character_set_connection";
    CHARACTER_SET_DATABASE: String = "character_set_database";
    CHARACTER_SET_RESULTS: Option<String> = "character_set_results";
    CHARACTER_SET_SERVER: String = "character_set_server";
    CHARACTER_SET_SYSTEM: String = "character_set_system";
    COLLATION_CONNECTION: String = "collation_connection";
    COLLATION_DATABASE: String = "collation_database";
    COLLATION_SERVER: String = "collation_server";
    CONNECT_TIMEOUT: u64 = "connect_timeout";
    DATADIR: String = "datadir";
    DEFAULT_AUTHENTICATION_PLUGIN: &'static str = "default_authentication_plugin";
    DEFAULT_STORAGE_ENGINE: &'static str = "default_storage_engine";
    FOREIGN_KEY_CHECKS: bool = "foreign_key_checks";
    GROUP_CONCAT_MAX_LEN: u64 = "group_concat_max_len";
    HAVE_OPENSSL: String = "have_openssl";
    HAVE_SSL: String = "have_ssl";
    HOSTNAME: String = "hostname";
    INIT_CONNECT: String = "init_connect";
    INNODB_ADAPTIVE_FLUSHING: bool = "innodb_adaptive_flushing";
    INNODB_ADAPTIVE_FLUSHING_LWM: u64 = "innodb_adaptive_flushing_lwm";
    INNODB_BUFFER_POOL_INSTANCES: u64 = "innodb_buffer_pool_instances";
    INNODB_BUFFER_POOL_SIZE: u64 = "innodb_buffer_pool_size";
    INNODB_DOUBLEWRITE: bool = "innodb_doublewrite";
    INNODB_FAST_SHUTDOWN: u64 = "innodb_fast_shutdown";
    INNODB_FLUSH_LOG_AT_TIMEOUT: u64 = "innodb_flush_log_at_timeout";
    INNODB_FLUSH_LOG_AT_TRX_COMMIT: u64 = "innodb_flush_log_at_trx_commit";
    INNODB_FLUSH_METHOD: &'static str = "innodb_flush_method";
    INNODB_FLUSHING_AVG_LOOPS: u64 = "innodb_flushing_avg_loops";
    INNODB_IDLE_FLUSH_PCT: u64 = "innodb_idle_flush_pct";
    INNODB_IO_CAPACITY: u64 = "innodb_io_capacity";
    INNODB_IO_CAPACITY_MAX: u64 = "innodb_io_capacity_max";
    INNODB_LOCK_WAIT_TIMEOUT: u64 = "innodb_lock_wait_timeout";
    INNODB_LOG_BUFFER_SIZE: u64 = "innodb_log_buffer_size";
    INNODB_LOG_FILE_BUFFERING: bool = "innodb_log_file_buffering";
    INNODB_LOG_FILE_SIZE: u64 = "innodb_log_file_size";
    INNODB_LOG_FILES_IN_GROUP: u64 = "innodb_log_files_in_group";
    INNODB_LRU_SCAN_DEPTH: u64 = "innodb_lru_scan_depth";
    INNODB_MAX_DIRTY_PAGES_PCT: f64 = "innodb_max_dirty_pages_pct";
    INNODB_MAX_DIRTY_PAGES_PCT_LWM: f64 = "innodb_max_dirty_pages_pct_lwm";
    INNODB_MAX_PURGE_LAG: u64 = "innodb_max_purge_lag";
    INNODB_MAX_PURGE_LAG_DELAY: u64 = "innodb_max_purge_lag_delay";
    INNODB_OLD_BLOCKS_PCT: u64 = "innodb_old_blocks_pct";
    INNODB_OLD_BLOCKS_TIME: u64 = "innodb_old_blocks_time";
    INNODB_PAGE_CLEANERS: u64 = "innodb_page_cleaners";
    INNODB_PAGE_SIZE: u64 = "innodb_page_size";
    INNODB_PURGE_BATCH_SIZE: u64 = "innodb_purge_batch_size";
    INNODB_PURGE_THREADS: u64 = "innodb_purge_threads";
    INNODB_ROLLBACK_SEGMENTS: u64 = "innodb_rollback_segments";
    INNODB_USE_NATIVE_AIO: bool = "innodb_use_native_aio";
    INTERACTIVE_TIMEOUT: u64 = "interactive_timeout";
    LAST_INSERT_ID: u64 = "last_insert_id";
    LICENSE: String = "license";
    LOCK_WAIT_TIMEOUT: u64 = "lock_wait_timeout";
    LOG_ERROR: String = "log_error";
    LOWER_CASE_TABLE_NAMES: u64 = "lower_case_table_names";
    MAX_ALLOWED_PACKET: u64 = "max_allowed_packet";
    MAX_CONNECTIONS: u64 = "max_connections";
    MAX_EXECUTION_TIME: u64 = "max_execution_time";
    NET_BUFFER_LENGTH: u64 = "net_buffer_length";
    NET_READ_TIMEOUT: u64 = "net_read_timeout";
    NET_WRITE_TIMEOUT: u64 = "net_write_timeout";
    OPTIMIZER_SWITCH: SetValue = "optimizer_switch";
    PERFORMANCE_SCHEMA: bool = "performance_schema";
    PID_FILE: String = "pid_file";
    PORT: u64 = "port";
    PROTOCOL_VERSION: u64 = "protocol_version";
    SERVER_ID: u64 = "server_id";
    SKIP_NAME_RESOLVE: bool = "skip_name_resolve";
    SOCKET: String = "socket";
    SQL_LOG_BIN: bool = "sql_log_bin";
    SQL_MODE: SqlMode = "sql_mode";
    SQL_QUOTE_SHOW_CREATE: bool = "sql_quote_show_create";
    SQL_SAFE_UPDATES: bool = "sql_safe_updates";
    SQL_SELECT_LIMIT: u64 = "sql_select_limit";
    SYSTEM_TIME_ZONE: String = "system_time_zone";
    THREAD_CACHE_SIZE: u64 = "thread_cache_size";
    TIME_ZONE: String = "time_zone";
    TMPDIR: String = "tmpdir";
    TRANSACTION_ISOLATION: &'static str = "transaction_isolation";
    TRANSACTION_READ_ONLY: bool = "transaction_read_only";
    UNIQUE_CHECKS: bool = "unique_checks";
    VERSION: String = "version";
    VERSION_COMMENT: String = "version_comment";
    VERSION_COMPILE_MACHINE: String = "version_compile_machine";
    VERSION_COMPILE_OS: String = "version_compile_os";
    WAIT_TIMEOUT: u64 = "wait_timeout";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variable_has_a_key() {
        let names: Vec<&str> = TABLE.iter().map(|d| d.name).collect();
        assert_eq!(ALL, names.as_slice());
    }

    #[test]
    fn keys_point_at_their_variable() {
        assert_eq!(INNODB_OLD_BLOCKS_TIME.name(), "innodb_old_blocks_time");
        assert_eq!(SQL_MODE.def().name, "sql_mode");
        assert_eq!(TABLE[AUTOCOMMIT.index()].name, "autocommit");
    }
}
