//! The `SET` / `@@x` validation matrix: MySQL's error numbers, messages and
//! warnings for each way a `SET` can go wrong, and the scope rules.

use std::sync::Arc;

use basalt_config::{
    keys, Assignment, ConfigError, GlobalVars, Qualifier, SessionVars, SetWarning, SqlMode,
    SysValue,
};

fn session() -> SessionVars {
    SessionVars::new(Arc::new(GlobalVars::new()))
}

fn s(text: &str) -> Assignment {
    Assignment::Str(text.to_string())
}

/// Runs a `SET` that must fail and returns (code, sqlstate, message).
fn set_err(
    sess: &mut SessionVars,
    q: Qualifier,
    name: &str,
    value: Assignment,
) -> (u16, &'static str, String) {
    match sess.set(q, name, &value) {
        Ok(outcome) => panic!("SET {name} = {value:?} succeeded: {outcome:?}"),
        Err(e) => (
            e.code().expect("SET errors have a code"),
            e.sqlstate().expect("SET errors have a SQLSTATE"),
            e.to_string(),
        ),
    }
}

#[test]
fn unknown_variable_is_1193() {
    let mut sess = session();
    assert_eq!(
        set_err(
            &mut sess,
            Qualifier::Implicit,
            "no_such_var",
            Assignment::Int(1)
        ),
        (
            1193,
            "HY000",
            "Unknown system variable 'no_such_var'".to_string()
        )
    );
    let err = sess.value(Qualifier::Implicit, "no_such_var").unwrap_err();
    assert_eq!(err.code(), Some(1193));
}

#[test]
fn read_only_is_1238_in_every_scope() {
    let mut sess = session();
    for q in [Qualifier::Implicit, Qualifier::Session, Qualifier::Global] {
        assert_eq!(
            set_err(&mut sess, q, "version", s("9")),
            (
                1238,
                "HY000",
                "Variable 'version' is a read only variable".to_string()
            )
        );
    }
    // Startup-only settings are read-only at runtime.
    let (code, _, msg) = set_err(
        &mut sess,
        Qualifier::Global,
        "innodb_buffer_pool_size",
        Assignment::Int(1 << 30),
    );
    assert_eq!(code, 1238);
    assert_eq!(
        msg,
        "Variable 'innodb_buffer_pool_size' is a read only variable"
    );
}

#[test]
fn global_only_variable_set_without_global_is_1229() {
    let mut sess = session();
    for q in [Qualifier::Implicit, Qualifier::Session] {
        assert_eq!(
            set_err(&mut sess, q, "max_connections", Assignment::Int(10)),
            (
                1229,
                "HY000",
                "Variable 'max_connections' is a GLOBAL variable and should be set with SET GLOBAL"
                    .to_string()
            )
        );
    }
    sess.set(Qualifier::Global, "max_connections", &Assignment::Int(10))
        .unwrap();
    assert_eq!(sess.get(keys::MAX_CONNECTIONS), 10);
}

#[test]
fn session_only_variable_set_global_is_1228() {
    let mut sess = session();
    assert_eq!(
        set_err(
            &mut sess,
            Qualifier::Global,
            "last_insert_id",
            Assignment::Int(5)
        ),
        (
            1228,
            "HY000",
            "Variable 'last_insert_id' is a SESSION variable and can't be used with SET GLOBAL"
                .to_string()
        )
    );
    sess.set(Qualifier::Implicit, "last_insert_id", &Assignment::UInt(5))
        .unwrap();
    assert_eq!(sess.get(keys::LAST_INSERT_ID), 5);
}

#[test]
fn read_only_session_copy_is_1621() {
    let mut sess = session();
    assert_eq!(
        set_err(&mut sess, Qualifier::Session, "max_allowed_packet", Assignment::Int(1 << 20)),
        (
            1621,
            "HY000",
            "SESSION variable 'max_allowed_packet' is read-only. Use SET GLOBAL to assign the value"
                .to_string()
        )
    );
    sess.set(
        Qualifier::Global,
        "max_allowed_packet",
        &Assignment::Int(1 << 20),
    )
    .unwrap();
    // The running session keeps its copy; a new one sees the new global.
    assert_eq!(sess.get(keys::MAX_ALLOWED_PACKET), 64 << 20);
    let fresh = SessionVars::new(Arc::clone(sess.globals()));
    assert_eq!(fresh.get(keys::MAX_ALLOWED_PACKET), 1 << 20);
}

#[test]
fn wrong_type_is_1232() {
    let mut sess = session();
    let cases = [
        (Qualifier::Global, "max_connections", s("100")),
        (Qualifier::Global, "max_connections", Assignment::Float(1.5)),
        (Qualifier::Global, "max_connections", Assignment::Null),
        (Qualifier::Implicit, "autocommit", Assignment::Float(1.0)),
        (Qualifier::Implicit, "sql_mode", Assignment::Float(1.5)),
        (Qualifier::Global, "init_connect", Assignment::Int(5)),
        (
            Qualifier::Implicit,
            "transaction_isolation",
            Assignment::Float(2.0),
        ),
        (Qualifier::Global, "innodb_max_dirty_pages_pct", s("50")),
        (Qualifier::Implicit, "time_zone", Assignment::Int(0)),
    ];
    for (q, name, value) in cases {
        assert_eq!(
            set_err(&mut sess, q, name, value.clone()),
            (
                1232,
                "42000",
                format!("Incorrect argument type to variable '{name}'")
            ),
            "{name} = {value:?}"
        );
    }
}

#[test]
fn wrong_value_is_1231_and_quotes_the_value() {
    let mut sess = session();
    let cases = [
        ("autocommit", Assignment::Int(2), "2"),
        ("autocommit", s("yes"), "yes"),
        ("autocommit", s("TRUE"), "TRUE"),
        ("autocommit", Assignment::Null, "NULL"),
        (
            "transaction_isolation",
            s("READ-SOMETHING"),
            "READ-SOMETHING",
        ),
        ("transaction_isolation", Assignment::Int(4), "4"),
        ("transaction_isolation", Assignment::Int(-1), "-1"),
        ("sql_mode", s("STRICT_TRANS_TABLES,FOO,BAR"), "FOO"),
        ("sql_mode", s("NO_AUTO_CREATE_USER"), "NO_AUTO_CREATE_USER"),
        ("sql_mode", Assignment::Int(1 << 28), "268435456"),
        ("sql_mode", Assignment::Null, "NULL"),
        ("character_set_client", Assignment::Null, "NULL"),
        ("default_storage_engine", s("MyISAM"), "MyISAM"),
    ];
    for (name, value, shown) in cases {
        assert_eq!(
            set_err(&mut sess, Qualifier::Implicit, name, value.clone()),
            (
                1231,
                "42000",
                format!("Variable '{name}' can't be set to the value of '{shown}'")
            ),
            "{name} = {value:?}"
        );
    }
}

#[test]
fn out_of_range_integers_are_clamped_with_warning_1292() {
    let globals = GlobalVars::new();
    let outcome = globals
        .set("innodb_old_blocks_pct", &Assignment::Int(100))
        .unwrap();
    assert_eq!(globals.get(keys::INNODB_OLD_BLOCKS_PCT), 95);
    assert_eq!(outcome.warnings.len(), 1);
    assert_eq!(outcome.warnings[0].code(), 1292);
    assert_eq!(
        outcome.warnings[0].to_string(),
        "Truncated incorrect innodb_old_blocks_pct value: '100'"
    );

    let outcome = globals
        .set("innodb_old_blocks_time", &Assignment::Int(-5))
        .unwrap();
    assert_eq!(globals.get(keys::INNODB_OLD_BLOCKS_TIME), 0);
    assert_eq!(
        outcome.warnings,
        vec![SetWarning::Truncated {
            name: "innodb_old_blocks_time",
            value: "-5".to_string()
        }]
    );

    // Rounded down to the block size (1024) with the same warning.
    let outcome = globals
        .set("max_allowed_packet", &Assignment::Int(5000))
        .unwrap();
    assert_eq!(globals.get(keys::MAX_ALLOWED_PACKET), 4096);
    assert_eq!(outcome.warnings.len(), 1);

    // In range: no warning.
    let outcome = globals
        .set("innodb_old_blocks_pct", &Assignment::Int(40))
        .unwrap();
    assert!(outcome.warnings.is_empty());
    assert_eq!(globals.get(keys::INNODB_OLD_BLOCKS_PCT), 40);

    let outcome = globals
        .set("innodb_max_dirty_pages_pct", &Assignment::Float(150.0))
        .unwrap();
    assert_eq!(globals.get(keys::INNODB_MAX_DIRTY_PAGES_PCT), 99.999);
    assert_eq!(outcome.warnings.len(), 1);
}

#[test]
fn set_default_is_compiled_default_globally_and_global_value_in_session() {
    let mut sess = session();
    sess.set(Qualifier::Global, "wait_timeout", &Assignment::Int(100))
        .unwrap();
    sess.set(Qualifier::Session, "wait_timeout", &Assignment::Int(5))
        .unwrap();
    sess.set(Qualifier::Session, "wait_timeout", &Assignment::Default)
        .unwrap();
    assert_eq!(sess.get(keys::WAIT_TIMEOUT), 100);
    sess.set(Qualifier::Global, "wait_timeout", &Assignment::Default)
        .unwrap();
    assert_eq!(sess.globals().get(keys::WAIT_TIMEOUT), 28_800);

    // Session-only: DEFAULT is the compiled default.
    sess.set(Qualifier::Implicit, "last_insert_id", &Assignment::Int(9))
        .unwrap();
    sess.set(Qualifier::Implicit, "last_insert_id", &Assignment::Default)
        .unwrap();
    assert_eq!(sess.get(keys::LAST_INSERT_ID), 0);

    sess.set(Qualifier::Implicit, "sql_mode", &s("ANSI"))
        .unwrap();
    sess.set(Qualifier::Implicit, "sql_mode", &Assignment::Default)
        .unwrap();
    assert_eq!(sess.get(keys::SQL_MODE), SqlMode::DEFAULT);
}

#[test]
fn tx_aliases_read_and_write_the_transaction_variables() {
    let mut sess = session();
    sess.set(Qualifier::Implicit, "tx_isolation", &s("read-committed"))
        .unwrap();
    assert_eq!(sess.get(keys::TRANSACTION_ISOLATION), "READ-COMMITTED");
    assert_eq!(
        sess.value(Qualifier::Implicit, "TX_ISOLATION").unwrap(),
        SysValue::Enum("READ-COMMITTED")
    );
    sess.set(Qualifier::Global, "tx_read_only", &Assignment::Int(1))
        .unwrap();
    assert!(sess.globals().get(keys::TRANSACTION_READ_ONLY));
    assert!(!sess.get(keys::TRANSACTION_READ_ONLY));
    // Errors name the canonical variable.
    let (_, _, msg) = set_err(&mut sess, Qualifier::Implicit, "tx_isolation", s("bogus"));
    assert_eq!(
        msg,
        "Variable 'transaction_isolation' can't be set to the value of 'bogus'"
    );
    // The option-only alias is not SQL.
    assert_eq!(
        set_err(
            &mut sess,
            Qualifier::Implicit,
            "default_time_zone",
            s("+00:00")
        )
        .0,
        1193
    );
}

#[test]
fn booleans_enums_and_sets_accept_mysqls_spellings() {
    let mut sess = session();
    for (value, expected) in [
        (s("off"), false),
        (s("ON"), true),
        (Assignment::Int(0), false),
        (Assignment::UInt(1), true),
    ] {
        sess.set(Qualifier::Implicit, "autocommit", &value).unwrap();
        assert_eq!(sess.get(keys::AUTOCOMMIT), expected, "{value:?}");
    }
    sess.set(
        Qualifier::Implicit,
        "transaction_isolation",
        &Assignment::Int(3),
    )
    .unwrap();
    assert_eq!(sess.get(keys::TRANSACTION_ISOLATION), "SERIALIZABLE");
    sess.set(
        Qualifier::Implicit,
        "sql_mode",
        &Assignment::Int(SqlMode::STRICT_ALL_TABLES.bits() as i64),
    )
    .unwrap();
    assert_eq!(
        sess.value(Qualifier::Implicit, "sql_mode")
            .unwrap()
            .to_string(),
        "STRICT_ALL_TABLES"
    );
    sess.set(Qualifier::Implicit, "sql_mode", &s("")).unwrap();
    assert_eq!(sess.get(keys::SQL_MODE), SqlMode::EMPTY);
    sess.set(Qualifier::Implicit, "sql_mode", &s("traditional"))
        .unwrap();
    assert!(sess.get(keys::SQL_MODE).is_strict());
}

#[test]
fn character_sets_collations_and_time_zones() {
    let mut sess = session();
    sess.set(
        Qualifier::Implicit,
        "character_set_connection",
        &s("latin1"),
    )
    .unwrap();
    assert_eq!(sess.get(keys::COLLATION_CONNECTION), "latin1_swedish_ci");
    sess.set(
        Qualifier::Implicit,
        "collation_connection",
        &s("utf8mb4_bin"),
    )
    .unwrap();
    assert_eq!(sess.get(keys::CHARACTER_SET_CONNECTION), "utf8mb4");
    sess.set(Qualifier::Implicit, "character_set_client", &s("utf8"))
        .unwrap();
    assert_eq!(sess.get(keys::CHARACTER_SET_CLIENT), "utf8mb3");
    // By collation id, as MySQL allows.
    sess.set(
        Qualifier::Implicit,
        "character_set_client",
        &Assignment::Int(8),
    )
    .unwrap();
    assert_eq!(sess.get(keys::CHARACTER_SET_CLIENT), "latin1");
    sess.set(
        Qualifier::Implicit,
        "character_set_results",
        &Assignment::Null,
    )
    .unwrap();
    assert_eq!(sess.get(keys::CHARACTER_SET_RESULTS), None);

    assert_eq!(
        set_err(
            &mut sess,
            Qualifier::Implicit,
            "character_set_client",
            s("klingon")
        ),
        (
            1115,
            "42000",
            "Unknown character set: 'klingon'".to_string()
        )
    );
    assert_eq!(
        set_err(
            &mut sess,
            Qualifier::Implicit,
            "collation_connection",
            s("latin1_klingon_ci")
        ),
        (
            1273,
            "HY000",
            "Unknown collation: 'latin1_klingon_ci'".to_string()
        )
    );
    assert_eq!(
        set_err(
            &mut sess,
            Qualifier::Implicit,
            "time_zone",
            s("Mars/Olympus")
        ),
        (
            1298,
            "HY000",
            "Unknown or incorrect time zone: 'Mars/Olympus'".to_string()
        )
    );
    sess.set(Qualifier::Implicit, "time_zone", &s("-3:30"))
        .unwrap();
    assert_eq!(sess.get(keys::TIME_ZONE), "-03:30");
}

#[test]
fn ordered_pairs_clamp_the_value_being_set_with_warning_1210() {
    let globals = GlobalVars::new();
    let outcome = globals
        .set("innodb_io_capacity", &Assignment::Int(5000))
        .unwrap();
    assert_eq!(globals.get(keys::INNODB_IO_CAPACITY), 2000);
    assert_eq!(outcome.warnings.len(), 1);
    assert_eq!(outcome.warnings[0].code(), 1210);
    assert_eq!(
        outcome.warnings[0].to_string(),
        "innodb_io_capacity cannot be set higher than innodb_io_capacity_max; \
         setting innodb_io_capacity to 2000"
    );
    globals
        .set("innodb_io_capacity", &Assignment::Int(1500))
        .unwrap();
    let outcome = globals
        .set("innodb_io_capacity_max", &Assignment::Int(1000))
        .unwrap();
    assert_eq!(globals.get(keys::INNODB_IO_CAPACITY_MAX), 1500);
    assert_eq!(globals.get(keys::INNODB_IO_CAPACITY), 1500);
    assert_eq!(outcome.warnings[0].code(), 1210);
}

#[test]
fn at_at_resolution_follows_scope() {
    let mut sess = session();
    // @@x of a global-only variable reads the global.
    assert_eq!(
        sess.value(Qualifier::Implicit, "max_connections").unwrap(),
        SysValue::UInt(151)
    );
    let err = sess
        .value(Qualifier::Session, "max_connections")
        .unwrap_err();
    assert_eq!(err.code(), Some(1238));
    assert_eq!(
        err.to_string(),
        "Variable 'max_connections' is a GLOBAL variable"
    );
    let err = sess.value(Qualifier::Global, "last_insert_id").unwrap_err();
    assert_eq!(err.code(), Some(1238));
    assert_eq!(
        err.to_string(),
        "Variable 'last_insert_id' is a SESSION variable"
    );

    // Both scopes: session and global values are distinct.
    sess.set(Qualifier::Session, "wait_timeout", &Assignment::Int(10))
        .unwrap();
    assert_eq!(
        sess.value(Qualifier::Implicit, "wait_timeout").unwrap(),
        SysValue::UInt(10)
    );
    assert_eq!(
        sess.value(Qualifier::Global, "wait_timeout").unwrap(),
        SysValue::UInt(28_800)
    );

    // SET GLOBAL does not reach existing sessions; reset() picks it up.
    sess.set(Qualifier::Global, "sql_safe_updates", &Assignment::Int(1))
        .unwrap();
    assert!(!sess.get(keys::SQL_SAFE_UPDATES));
    sess.reset();
    assert!(sess.get(keys::SQL_SAFE_UPDATES));
    assert_eq!(sess.get(keys::WAIT_TIMEOUT), 28_800);
}

#[test]
fn rejected_set_changes_nothing() {
    let mut sess = session();
    let before_global = sess.globals().show(None);
    let before_session = sess.show(Qualifier::Session, None);
    let attempts = [
        (Qualifier::Global, "max_connections", s("x")),
        (Qualifier::Session, "sql_mode", s("NOPE")),
        (
            Qualifier::Implicit,
            "character_set_connection",
            s("klingon"),
        ),
        (Qualifier::Global, "version", s("1")),
        (Qualifier::Implicit, "autocommit", Assignment::Int(7)),
    ];
    for (q, name, value) in attempts {
        assert!(sess.set(q, name, &value).is_err());
    }
    assert_eq!(sess.globals().show(None), before_global);
    assert_eq!(sess.show(Qualifier::Session, None), before_session);
}

#[test]
fn server_values_bypass_read_only_but_not_the_type() {
    let globals = GlobalVars::new();
    globals
        .set_server_value("port", SysValue::UInt(40_123))
        .unwrap();
    assert_eq!(globals.get(keys::PORT), 40_123);
    globals
        .set_server_value("have_ssl", SysValue::Str("YES".to_string()))
        .unwrap();
    assert_eq!(globals.get(keys::HAVE_SSL), "YES");
    let err = globals
        .set_server_value("port", SysValue::Str("x".to_string()))
        .unwrap_err();
    assert!(matches!(err, ConfigError::WrongType { .. }));
}

#[test]
fn stores_are_shareable_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    fn assert_send<T: Send>() {}
    assert_send_sync::<GlobalVars>();
    assert_send::<SessionVars>();
    assert_send_sync::<ConfigError>();
}

#[test]
fn optimizer_switch_changes_only_the_switches_named() {
    let globals = Arc::new(GlobalVars::new());
    let mut sess = SessionVars::new(globals.clone());
    let shown = |sess: &SessionVars| {
        sess.value(Qualifier::Implicit, "optimizer_switch")
            .unwrap()
            .to_string()
    };
    let default = shown(&sess);
    assert!(default.starts_with("index_merge=on,index_merge_union=on,"));
    assert!(default.contains(",semijoin=on,"));
    assert!(default.contains(",batched_key_access=off,"));

    sess.set(Qualifier::Implicit, "optimizer_switch", &s("semijoin=off"))
        .unwrap();
    let after = shown(&sess);
    assert!(after.contains(",semijoin=off,"), "{after}");
    assert_eq!(
        after.replace("semijoin=off", "semijoin=on"),
        default,
        "only semijoin changed"
    );
    sess.set(
        Qualifier::Implicit,
        "optimizer_switch",
        &s("mrr=off, batched_key_access=ON"),
    )
    .unwrap();
    let v = sess.get(keys::OPTIMIZER_SWITCH);
    assert!(!v.contains("semijoin") && !v.contains("mrr") && v.contains("batched_key_access"));
    sess.set(Qualifier::Implicit, "optimizer_switch", &s("mrr=default"))
        .unwrap();
    assert!(sess.get(keys::OPTIMIZER_SWITCH).contains("mrr"));
    sess.set(Qualifier::Implicit, "optimizer_switch", &s("default"))
        .unwrap();
    assert_eq!(shown(&sess), default);
    assert_eq!(
        globals
            .value("optimizer_switch")
            .map(|v| v.to_string())
            .ok(),
        Some(default.clone()),
        "the global value is untouched"
    );

    for bad in ["semijoin", "semijoin=maybe", "no_such_switch=on"] {
        let (code, state, msg) =
            set_err(&mut sess, Qualifier::Implicit, "optimizer_switch", s(bad));
        assert_eq!((code, state), (1231, "42000"), "{bad}: {msg}");
        assert!(msg.contains(bad), "{msg}");
    }
    assert_eq!(shown(&sess), default, "a failed SET changes nothing");
}

#[test]
fn sql_quote_show_create_is_a_session_boolean() {
    let mut sess = session();
    assert!(sess.get(keys::SQL_QUOTE_SHOW_CREATE));
    sess.set(
        Qualifier::Implicit,
        "sql_quote_show_create",
        &Assignment::Int(0),
    )
    .unwrap();
    assert!(!sess.get(keys::SQL_QUOTE_SHOW_CREATE));
}
