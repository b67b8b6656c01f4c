//! `SHOW VARIABLES`: formatting of each kind, LIKE filtering, scopes.

use std::collections::BTreeSet;
use std::sync::Arc;

use basalt_config::{registry, Assignment, GlobalVars, Qualifier, SessionVars, VariableRow};

fn row(rows: &[VariableRow], name: &str) -> String {
    rows.iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("{name} not shown"))
        .value
        .clone()
}

#[test]
fn each_kind_is_formatted_like_mysql() {
    let mut sess = SessionVars::new(Arc::new(GlobalVars::new()));
    sess.set(
        Qualifier::Implicit,
        "character_set_results",
        &Assignment::Null,
    )
    .unwrap();
    let rows = sess.show(Qualifier::Session, None);
    let expected = [
        // Bool
        ("autocommit", "ON"),
        ("sql_safe_updates", "OFF"),
        ("performance_schema", "OFF"),
        // Sizes: plain bytes
        ("innodb_buffer_pool_size", "134217728"),
        ("innodb_log_file_size", "50331648"),
        ("max_allowed_packet", "67108864"),
        ("sql_select_limit", "18446744073709551615"),
        // Integers
        ("innodb_old_blocks_pct", "37"),
        ("innodb_flush_log_at_trx_commit", "1"),
        // Doubles: six decimals
        ("innodb_max_dirty_pages_pct", "90.000000"),
        ("innodb_max_dirty_pages_pct_lwm", "10.000000"),
        // Enums: as listed
        ("innodb_flush_method", "O_DIRECT"),
        ("transaction_isolation", "REPEATABLE-READ"),
        ("default_storage_engine", "InnoDB"),
        ("default_authentication_plugin", "caching_sha2_password"),
        // Set: canonical order
        (
            "sql_mode",
            "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,\
             ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION",
        ),
        // Strings, charsets, collations, time zones
        ("version", basalt_config::VERSION),
        ("version_comment", "Basalt"),
        ("init_connect", ""),
        ("socket", ""),
        ("have_ssl", "DISABLED"),
        ("character_set_server", "utf8mb4"),
        ("character_set_system", "utf8mb3"),
        ("collation_connection", "utf8mb4_0900_ai_ci"),
        ("time_zone", "SYSTEM"),
        ("bind_address", "127.0.0.1"),
        // NULL shows as empty
        ("character_set_results", ""),
    ];
    for (name, value) in expected {
        assert_eq!(row(&rows, name), value, "{name}");
    }
}

#[test]
fn session_listing_covers_every_variable_sorted_and_global_listing_skips_session_only() {
    let sess = SessionVars::new(Arc::new(GlobalVars::new()));
    let session_rows = sess.show(Qualifier::Session, None);
    let names: Vec<&str> = session_rows.iter().map(|r| r.name).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    assert_eq!(
        names.iter().copied().collect::<BTreeSet<_>>(),
        registry().iter().map(|d| d.name).collect::<BTreeSet<_>>()
    );
    // Aliases are not listed.
    assert!(!names.contains(&"tx_isolation"));

    let global_names: BTreeSet<&str> = sess
        .show(Qualifier::Global, None)
        .iter()
        .map(|r| r.name)
        .collect();
    assert!(!global_names.contains("last_insert_id"));
    assert!(!global_names.contains("sql_log_bin"));
    assert!(global_names.contains("max_connections"));
    assert!(global_names.contains("autocommit"));
    assert_eq!(global_names.len(), names.len() - 2);
}

#[test]
fn like_filters_case_insensitively() {
    let sess = SessionVars::new(Arc::new(GlobalVars::new()));
    let rows = sess.show(Qualifier::Implicit, Some("INNODB_OLD%"));
    let names: Vec<&str> = rows.iter().map(|r| r.name).collect();
    assert_eq!(names, ["innodb_old_blocks_pct", "innodb_old_blocks_time"]);
    let rows = sess.show(Qualifier::Global, Some("%isolation"));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].value, "REPEATABLE-READ");
    assert!(sess
        .show(Qualifier::Implicit, Some("nothing_like_this%"))
        .is_empty());
    // '_' is a wildcard unless escaped.
    assert_eq!(sess.show(Qualifier::Implicit, Some("sql_mode")).len(), 1);
    assert_eq!(sess.show(Qualifier::Implicit, Some("sql\\_mode")).len(), 1);
    assert!(sess.show(Qualifier::Implicit, Some("sqlXmode")).is_empty());
}

#[test]
fn session_and_global_listings_show_their_own_values() {
    let mut sess = SessionVars::new(Arc::new(GlobalVars::new()));
    sess.set(
        Qualifier::Session,
        "sql_mode",
        &Assignment::Str("ANSI".into()),
    )
    .unwrap();
    sess.set(Qualifier::Global, "autocommit", &Assignment::Int(0))
        .unwrap();
    let session_rows = sess.show(Qualifier::Session, None);
    let global_rows = sess.show(Qualifier::Global, None);
    assert_eq!(
        row(&session_rows, "sql_mode"),
        "REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ONLY_FULL_GROUP_BY,ANSI"
    );
    assert_eq!(
        row(&global_rows, "sql_mode"),
        "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,\
         ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"
    );
    assert_eq!(row(&session_rows, "autocommit"), "ON");
    assert_eq!(row(&global_rows, "autocommit"), "OFF");
}
