//! Option-file syntax and the startup resolution rules, one sandbox each.

mod common;

use basalt_config::{keys, Command, ConfigError, Origin, StartupWarningKind};
use common::{expect_err, shown, Sandbox};

#[test]
fn only_mysqld_and_basaltd_groups_count_and_the_last_value_wins() {
    let sb = Sandbox::new();
    let opts = sb
        .load_file(
            "[client]\nport = 1111\nuser = someone\n\
             [basaltd]\nport = 3308\n\
             [mysqld]\nport = 3307\nmax_connections = 10\n\
             [mysqldump]\nquick\n\
             [BASALTD]\nmax_connections = 20\n",
        )
        .unwrap();
    // [mysqld] comes after [basaltd] in the file, so it wins for port; the
    // second [basaltd] section wins for max_connections.
    assert_eq!(opts.globals.get(keys::PORT), 3307);
    assert_eq!(opts.globals.get(keys::MAX_CONNECTIONS), 20);
    assert_eq!(
        opts.globals.origin("port").unwrap().to_string(),
        sb.file_origin("my.cnf", 7)
    );
}

#[test]
fn dashes_and_underscores_are_interchangeable_and_case_is_ignored() {
    let sb = Sandbox::new();
    let opts = sb
        .load_file("[mysqld]\ninnodb-old-blocks-pct = 50\nInnodb_Old-Blocks_TIME=5\n")
        .unwrap();
    assert_eq!(opts.globals.get(keys::INNODB_OLD_BLOCKS_PCT), 50);
    assert_eq!(opts.globals.get(keys::INNODB_OLD_BLOCKS_TIME), 5);
}

#[test]
fn size_suffixes_are_case_insensitive_powers_of_1024() {
    let sb = Sandbox::new();
    let opts = sb
        .load_file(
            "[mysqld]\ninnodb_buffer_pool_size = 256M\ninnodb_log_file_size = 1g\n\
             max_allowed_packet = 16k\ninnodb_log_buffer_size=32m\n\
             group_concat_max_len = 1T\n",
        )
        .unwrap();
    let g = &opts.globals;
    assert_eq!(g.get(keys::INNODB_BUFFER_POOL_SIZE), 256 * 1024 * 1024);
    assert_eq!(g.get(keys::INNODB_LOG_FILE_SIZE), 1024 * 1024 * 1024);
    assert_eq!(g.get(keys::MAX_ALLOWED_PACKET), 16 * 1024);
    assert_eq!(g.get(keys::INNODB_LOG_BUFFER_SIZE), 32 * 1024 * 1024);
    assert_eq!(g.get(keys::GROUP_CONCAT_MAX_LEN), 1u64 << 40);
    // SHOW prints bytes, never suffixes.
    assert_eq!(shown(g, "innodb_buffer_pool_size"), "268435456");
    assert!(opts.warnings.is_empty(), "{:?}", opts.warnings);
}

#[test]
fn suffixes_are_rejected_where_they_make_no_sense() {
    let sb = Sandbox::new();
    let err = expect_err(sb.load_file("[mysqld]\ninnodb_old_blocks_pct = 5K\n"));
    assert!(
        matches!(&err, ConfigError::InvalidOptionValue { name, .. } if name == "innodb_old_blocks_pct"),
        "{err}"
    );
}

#[test]
fn boolean_spellings() {
    let sb = Sandbox::new();
    let cases = [
        ("autocommit", false),
        ("autocommit = ON", false),
        ("autocommit = on", false),
        ("autocommit = TRUE", false),
        ("autocommit = 1", false),
        ("autocommit = OFF", true),
        ("autocommit = false", true),
        ("autocommit = 0", true),
        ("skip-autocommit", true),
        ("skip_autocommit", true),
        ("disable-autocommit", true),
        ("enable-autocommit", false),
    ];
    for (line, expect_off) in cases {
        // Start from the opposite value so each line must change it.
        let start = if expect_off { "ON" } else { "OFF" };
        let opts = sb
            .load_file(&format!("[mysqld]\nautocommit = {start}\n{line}\n"))
            .unwrap_or_else(|e| panic!("{line}: {e}"));
        assert_eq!(opts.globals.get(keys::AUTOCOMMIT), !expect_off, "{line}");
    }
}

#[test]
fn boolean_rejects_yes_and_names_the_accepted_words() {
    let sb = Sandbox::new();
    let err = expect_err(sb.load_file("[mysqld]\ninnodb_doublewrite = yes\n"));
    assert_eq!(
        err.to_string(),
        format!(
            "{}: invalid value 'yes' for innodb_doublewrite: expected ON, OFF, TRUE, FALSE, 1 or 0",
            sb.file_origin("my.cnf", 2)
        )
    );
}

#[test]
fn skip_prefix_on_a_non_boolean_is_an_error() {
    let sb = Sandbox::new();
    let err = expect_err(sb.load_file("[mysqld]\nskip-port\n"));
    assert!(
        matches!(err, ConfigError::NotBoolean { prefix: "skip", .. }),
        "{err}"
    );
    let err = expect_err(sb.load_file("[mysqld]\nskip-autocommit = 1\n"));
    assert!(
        matches!(err, ConfigError::UnexpectedOptionValue { .. }),
        "{err}"
    );
}

#[test]
fn quoted_values_and_escapes() {
    let sb = Sandbox::new();
    let opts = sb
        .load_file(
            "[mysqld]\n\
             init_connect = \"SET NAMES 'utf8mb4' # kept\"   # dropped\n\
             datadir = '/srv/basalt\\sdata'\n\
             tmpdir = \"/tmp/a\\\"b\"\n\
             pid_file = /run/it\\'s.pid\n",
        )
        .unwrap();
    let g = &opts.globals;
    assert_eq!(g.get(keys::INIT_CONNECT), "SET NAMES 'utf8mb4' # kept");
    assert_eq!(g.get(keys::DATADIR), "/srv/basalt data");
    assert_eq!(g.get(keys::TMPDIR), "/tmp/a\"b");
    assert_eq!(g.get(keys::PID_FILE), "/run/it's.pid");
}

#[test]
fn unterminated_quote_is_an_error_with_its_line() {
    let sb = Sandbox::new();
    let err = expect_err(sb.load_file("[mysqld]\n\ninit_connect = 'SELECT 1\n"));
    assert_eq!(
        err.to_string(),
        format!("{}: unterminated quoted value", sb.file_origin("my.cnf", 3))
    );
}

#[test]
fn comments_hash_anywhere_semicolon_at_line_start() {
    let sb = Sandbox::new();
    let opts = sb
        .load_file(
            "# leading comment\n\
             ; another\n\
             [mysqld]   # group comment\n\
             \t# indented comment\n\
             port = 3310 # trailing comment\n\
             max_connections=99#no space\n\
             init_connect = SELECT 1; SELECT 2\n",
        )
        .unwrap();
    assert_eq!(opts.globals.get(keys::PORT), 3310);
    assert_eq!(opts.globals.get(keys::MAX_CONNECTIONS), 99);
    // A ';' after a value is part of the value.
    assert_eq!(opts.globals.get(keys::INIT_CONNECT), "SELECT 1; SELECT 2");
}

#[test]
fn crlf_line_endings() {
    let sb = Sandbox::new();
    let opts = sb
        .load_file("[mysqld]\r\nport = 3311\r\nsql_mode = ANSI\r\n")
        .unwrap();
    assert_eq!(opts.globals.get(keys::PORT), 3311);
    assert_eq!(
        shown(&opts.globals, "sql_mode"),
        "REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ONLY_FULL_GROUP_BY,ANSI"
    );
}

#[test]
fn include_is_recursive_relative_to_the_including_file_and_read_in_place() {
    let sb = Sandbox::new();
    sb.write(
        "conf/nested/b.cnf",
        "[mysqld]\nmax_connections = 300\nport = 4002\n",
    );
    sb.write(
        "conf/a.cnf",
        "[mysqld]\nport = 4001\n!include nested/b.cnf\nwait_timeout = 77\n",
    );
    let main = sb.write(
        "conf/main.cnf",
        "[mysqld]\nport = 4000\n!include a.cnf\nmax_connections = 400\n",
    );
    let opts = sb
        .load(&[&format!("--defaults-file={}", main.display())])
        .unwrap();
    let g = &opts.globals;
    assert_eq!(g.get(keys::PORT), 4002); // b.cnf read after a.cnf's port line
    assert_eq!(g.get(keys::MAX_CONNECTIONS), 400); // main's line after the include
    assert_eq!(g.get(keys::WAIT_TIMEOUT), 77);
    assert_eq!(
        opts.files_read,
        vec![main, sb.path("conf/a.cnf"), sb.path("conf/nested/b.cnf")]
    );
    assert_eq!(
        g.origin("port").unwrap().to_string(),
        sb.file_origin("conf/nested/b.cnf", 3)
    );
}

#[test]
fn includedir_reads_only_cnf_files_sorted_by_name() {
    let sb = Sandbox::new();
    sb.write("conf.d/20-b.cnf", "[mysqld]\nport = 5020\n");
    sb.write(
        "conf.d/10-a.cnf",
        "[mysqld]\nport = 5010\nmax_connections = 11\n",
    );
    sb.write("conf.d/30-c.txt", "[mysqld]\nport = 5030\n");
    sb.write("conf.d/sub/40-d.cnf", "[mysqld]\nport = 5040\n");
    sb.write("conf.d/99-z.cnf.bak", "[mysqld]\nport = 5099\n");
    let main = sb.write(
        "main.cnf",
        "!includedir conf.d\n[mysqld]\nwait_timeout = 5\n",
    );
    let opts = sb
        .load(&[&format!("--defaults-file={}", main.display())])
        .unwrap();
    assert_eq!(opts.globals.get(keys::PORT), 5020);
    assert_eq!(opts.globals.get(keys::MAX_CONNECTIONS), 11);
    assert_eq!(
        opts.files_read,
        vec![main, sb.path("conf.d/10-a.cnf"), sb.path("conf.d/20-b.cnf")]
    );
}

#[test]
fn include_cycle_stops_at_the_depth_limit_with_file_and_line() {
    let sb = Sandbox::new();
    sb.write("a.cnf", "[mysqld]\n!include b.cnf\n");
    sb.write("b.cnf", "[mysqld]\nport = 1\n!include a.cnf\n");
    let a = sb.path("a.cnf");
    let err = expect_err(sb.load(&[&format!("--defaults-file={}", a.display())]));
    let ConfigError::IncludeDepth { origin, limit, .. } = &err else {
        panic!("unexpected error: {err}");
    };
    assert_eq!(*limit, basalt_config::option_file::MAX_INCLUDE_DEPTH);
    let text = origin.to_string();
    assert!(
        text == sb.file_origin("a.cnf", 2) || text == sb.file_origin("b.cnf", 3),
        "{text}"
    );
}

#[test]
fn missing_include_names_the_including_line() {
    let sb = Sandbox::new();
    let err = expect_err(sb.load_file("[mysqld]\nport = 1\n!include gone.cnf\n"));
    let text = err.to_string();
    assert!(text.contains("gone.cnf"), "{text}");
    assert!(
        text.contains(&format!("included from {}", sb.file_origin("my.cnf", 3))),
        "{text}"
    );
}

#[test]
fn loose_prefix_turns_unknown_options_into_warnings() {
    let sb = Sandbox::new();
    let opts = sb
        .load_file(
            "[mysqld]\nloose-innodb_file_per_table = 1\nloose_query_cache_size=0\n\
             loose-max-connections = 42\nloose-version = 9\n",
        )
        .unwrap();
    assert_eq!(opts.globals.get(keys::MAX_CONNECTIONS), 42);
    let unknown: Vec<String> = opts
        .warnings
        .iter()
        .filter_map(|w| match &w.kind {
            StartupWarningKind::UnknownLooseOption { name } => Some(name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        unknown,
        ["innodb_file_per_table", "query_cache_size", "version"]
    );
    assert_eq!(
        opts.warnings[0].to_string(),
        format!(
            "{}: ignoring unknown option 'loose-innodb_file_per_table'",
            sb.file_origin("my.cnf", 2)
        )
    );
    assert_eq!(shown(&opts.globals, "version"), basalt_config::VERSION);
}

#[test]
fn unknown_option_error_names_file_line_and_option() {
    let sb = Sandbox::new();
    let text = "[mysqld]\n# a\n# b\n# c\n# d\n# e\n# f\n# g\n# h\n# i\nport = 3306\n\
                innodb_bufer_pool_size = 1G\n";
    let err = expect_err(sb.load_file(text));
    assert_eq!(
        err.to_string(),
        format!(
            "{}: unknown variable 'innodb_bufer_pool_size'",
            sb.file_origin("my.cnf", 12)
        )
    );
}

#[test]
fn bad_value_error_contains_the_accepted_range() {
    let sb = Sandbox::new();
    let err = expect_err(sb.load_file("[mysqld]\n\n\n\n\n\ninnodb_old_blocks_pct = abc\n"));
    assert_eq!(
        err.to_string(),
        format!(
            "{}: invalid value 'abc' for innodb_old_blocks_pct: expected an integer from 5 to 95",
            sb.file_origin("my.cnf", 7)
        )
    );
    let err = expect_err(sb.load_file("[mysqld]\ninnodb_flush_method = O_DSYNC\n"));
    assert!(
        err.to_string()
            .ends_with("expected one of fsync, O_DIRECT, O_DIRECT_NO_FSYNC"),
        "{err}"
    );
    let err =
        expect_err(sb.load_file("[mysqld]\nsql_mode = STRICT_ALL_TABLES,NO_AUTO_CREATE_USER\n"));
    assert!(
        err.to_string()
            .contains("for sql_mode: expected a comma-separated list of"),
        "{err}"
    );
    let err = expect_err(sb.load_file("[mysqld]\ninnodb_buffer_pool_size = 1.5G\n"));
    assert!(err.to_string().contains("in multiples of 1048576"), "{err}");
}

#[test]
fn out_of_range_values_are_clamped_with_a_warning() {
    let sb = Sandbox::new();
    let opts = sb
        .load_file(
            "[mysqld]\ninnodb_old_blocks_pct = 100\ninnodb_buffer_pool_size = 1M\n\
             innodb_log_file_size = 100000000\nmax_connections = -5\n",
        )
        .unwrap();
    let g = &opts.globals;
    assert_eq!(g.get(keys::INNODB_OLD_BLOCKS_PCT), 95);
    assert_eq!(g.get(keys::INNODB_BUFFER_POOL_SIZE), 5 * 1024 * 1024);
    // Rounded down to a multiple of 1 MiB.
    assert_eq!(g.get(keys::INNODB_LOG_FILE_SIZE), 95 * 1024 * 1024);
    assert_eq!(g.get(keys::MAX_CONNECTIONS), 1);
    let adjusted: Vec<&str> = opts
        .warnings
        .iter()
        .filter_map(|w| match &w.kind {
            StartupWarningKind::Adjusted { name, .. } => Some(*name),
            _ => None,
        })
        .collect();
    assert_eq!(
        adjusted,
        [
            "innodb_old_blocks_pct",
            "innodb_buffer_pool_size",
            "innodb_log_file_size",
            "max_connections"
        ]
    );
    assert_eq!(
        opts.warnings[0].to_string(),
        format!(
            "{}: innodb_old_blocks_pct adjusted from '100' to 95 (accepted: an integer from 5 to 95)",
            sb.file_origin("my.cnf", 2)
        )
    );
}

#[test]
fn values_beyond_64_bits_are_errors_not_clamps() {
    let sb = Sandbox::new();
    let err =
        expect_err(sb.load_file("[mysqld]\ngroup_concat_max_len = 99999999999999999999999\n"));
    assert!(
        matches!(err, ConfigError::InvalidOptionValue { .. }),
        "{err}"
    );
    let err = expect_err(sb.load_file("[mysqld]\ngroup_concat_max_len = 20E\n"));
    assert!(
        matches!(err, ConfigError::InvalidOptionValue { .. }),
        "{err}"
    );
}

#[test]
fn option_before_any_group_is_an_error() {
    let sb = Sandbox::new();
    let err = expect_err(sb.load_file("port = 3306\n[mysqld]\n"));
    assert_eq!(
        err.to_string(),
        format!(
            "{}: option 'port' appears before any [group] header",
            sb.file_origin("my.cnf", 1)
        )
    );
}

#[test]
fn options_in_unselected_groups_are_not_checked() {
    let sb = Sandbox::new();
    let opts = sb
        .load_file("[mysql]\nno-auto-rehash\nprompt = 'x> '\n[mysqld]\nport = 3312\n")
        .unwrap();
    assert_eq!(opts.globals.get(keys::PORT), 3312);
}

#[test]
fn read_only_variables_and_command_line_only_options_are_rejected_in_files() {
    let sb = Sandbox::new();
    let err = expect_err(sb.load_file("[mysqld]\nversion = 9.9\n"));
    assert_eq!(
        err.to_string(),
        format!(
            "{}: variable 'version' is read-only and cannot be set at startup",
            sb.file_origin("my.cnf", 2)
        )
    );
    let err = expect_err(sb.load_file("[mysqld]\nno-defaults\n"));
    assert!(matches!(err, ConfigError::CommandLineOnly { .. }), "{err}");
}

#[test]
fn fixed_options_accept_only_their_value() {
    let sb = Sandbox::new();
    let opts = sb
        .load_file(
            "[mysqld]\ninnodb_page_size = 16k\nlower_case_table_names = 0\nskip-name-resolve\n",
        )
        .unwrap();
    assert_eq!(opts.globals.get(keys::INNODB_PAGE_SIZE), 16384);
    assert_eq!(
        opts.globals.get(keys::INNODB_PAGE_SIZE) as usize,
        basalt_common::PAGE_SIZE
    );
    let err = expect_err(sb.load_file("[mysqld]\ninnodb_page_size = 8192\n"));
    assert!(
        err.to_string()
            .ends_with("expected 16384 (the only value Basalt supports)"),
        "{err}"
    );
    let err = expect_err(sb.load_file("[mysqld]\nlower_case_table_names = 1\n"));
    assert!(
        matches!(err, ConfigError::InvalidOptionValue { .. }),
        "{err}"
    );
    let err = expect_err(sb.load_file("[mysqld]\nskip_name_resolve = OFF\n"));
    assert!(
        matches!(err, ConfigError::InvalidOptionValue { .. }),
        "{err}"
    );
}

#[test]
fn non_boolean_without_value_is_an_error() {
    let sb = Sandbox::new();
    let err = expect_err(sb.load_file("[mysqld]\nport\n"));
    assert_eq!(
        err.to_string(),
        format!(
            "{}: option 'port' requires a value: expected an integer from 0 to 65535",
            sb.file_origin("my.cnf", 2)
        )
    );
}

#[test]
fn command_line_overrides_every_file() {
    let sb = Sandbox::new();
    sb.write(
        "etc/basalt.cnf",
        "[mysqld]\nport = 1001\nmax_connections = 5\n",
    );
    sb.write("home/.basalt.cnf", "[basaltd]\nport = 1002\n");
    let opts = sb
        .load(&["--port=2001", "--max-connections", "7", "--skip-autocommit"])
        .unwrap();
    let g = &opts.globals;
    assert_eq!(g.get(keys::PORT), 2001);
    assert_eq!(g.get(keys::MAX_CONNECTIONS), 7);
    assert!(!g.get(keys::AUTOCOMMIT));
    assert_eq!(g.origin("port").unwrap(), Origin::CommandLine);
    assert_eq!(
        opts.files_read,
        vec![sb.path("etc/basalt.cnf"), sb.path("home/.basalt.cnf")]
    );
}

#[test]
fn command_line_errors_say_command_line() {
    let sb = Sandbox::new();
    let err = expect_err(sb.load(&["--innodb-old-blocks-pct=abc"]));
    assert_eq!(
        err.to_string(),
        "command line: invalid value 'abc' for innodb_old_blocks_pct: expected an integer from 5 to 95"
    );
    let err = expect_err(sb.load(&["--no-such-thing"]));
    assert_eq!(
        err.to_string(),
        "command line: unknown variable 'no-such-thing'"
    );
    let err = expect_err(sb.load(&["stray"]));
    assert_eq!(err.to_string(), "command line: unexpected argument 'stray'");
    let err = expect_err(sb.load(&["--port"]));
    assert!(
        matches!(err, ConfigError::MissingOptionValue { .. }),
        "{err}"
    );
    let err = expect_err(sb.load(&["--no-defaults=1"]));
    assert!(
        matches!(err, ConfigError::UnexpectedOptionValue { .. }),
        "{err}"
    );
    let opts = sb.load(&["--loose-no-such-thing=3"]).unwrap();
    assert_eq!(
        opts.warnings[0].to_string(),
        "command line: ignoring unknown option 'loose-no-such-thing'"
    );
}

#[test]
fn defaults_file_reads_only_that_file() {
    let sb = Sandbox::new();
    sb.write("etc/basalt.cnf", "[mysqld]\nport = 1001\n");
    sb.write("home/.basalt.cnf", "[mysqld]\nmax_connections = 9\n");
    let only = sb.write("only.cnf", "[mysqld]\nwait_timeout = 99\n");
    let opts = sb
        .load(&[&format!("--defaults-file={}", only.display())])
        .unwrap();
    assert_eq!(opts.globals.get(keys::PORT), 3306);
    assert_eq!(opts.globals.get(keys::MAX_CONNECTIONS), 151);
    assert_eq!(opts.globals.get(keys::WAIT_TIMEOUT), 99);
    assert_eq!(opts.files_read, vec![only]);

    let err = expect_err(sb.load(&["--defaults-file", "/nonexistent/basalt.cnf"]));
    assert!(matches!(err, ConfigError::OptionFileIo { .. }), "{err}");
    assert!(err.to_string().contains("/nonexistent/basalt.cnf"), "{err}");
}

#[test]
fn no_defaults_reads_nothing() {
    let sb = Sandbox::new();
    sb.write("etc/basalt.cnf", "[mysqld]\nport = 1001\n");
    let opts = sb.load(&["--no-defaults", "--wait-timeout=3"]).unwrap();
    assert!(opts.files_read.is_empty());
    assert_eq!(opts.globals.get(keys::PORT), 3306);
    assert_eq!(opts.globals.get(keys::WAIT_TIMEOUT), 3);
}

#[test]
fn extra_file_is_read_after_system_files_and_before_the_user_file() {
    let sb = Sandbox::new();
    sb.write(
        "etc/basalt.cnf",
        "[mysqld]\nport = 1\nwait_timeout = 1\nmax_connections = 1\n",
    );
    sb.write("etc/basalt/basalt.cnf", "[mysqld]\nport = 2\n");
    let extra = sb.write("extra.cnf", "[mysqld]\nport = 3\nwait_timeout = 3\n");
    sb.write("home/.basalt.cnf", "[mysqld]\nwait_timeout = 4\n");
    let opts = sb
        .load(&[&format!("--defaults-extra-file={}", extra.display())])
        .unwrap();
    assert_eq!(opts.globals.get(keys::PORT), 3);
    assert_eq!(opts.globals.get(keys::WAIT_TIMEOUT), 4);
    assert_eq!(opts.globals.get(keys::MAX_CONNECTIONS), 1);
    assert_eq!(
        opts.files_read,
        vec![
            sb.path("etc/basalt.cnf"),
            sb.path("etc/basalt/basalt.cnf"),
            extra,
            sb.path("home/.basalt.cnf")
        ]
    );
}

#[test]
fn help_version_and_print_defaults_are_commands() {
    let sb = Sandbox::new();
    // A broken file does not hide --help or --version.
    sb.write("etc/basalt.cnf", "[mysqld]\nbroken_option\nport=1\n");
    let opts = sb.load(&["--help"]).unwrap();
    assert_eq!(opts.command, Command::Help);
    let help = sb.loader().help_text();
    for def in basalt_config::registry().iter().filter(|d| d.startup) {
        assert!(
            help.contains(&format!("--{}", def.name.replace('_', "-"))),
            "help lacks {}",
            def.name
        );
    }
    assert!(help.contains("--defaults-extra-file=FILE"));
    assert_eq!(sb.load(&["-V"]).unwrap().command, Command::Version);
    assert!(basalt_config::load::version_text().contains(basalt_config::VERSION));

    let opts = sb.load(&["--print-defaults"]).unwrap();
    assert_eq!(
        opts.command,
        Command::PrintDefaults(vec!["--broken_option".to_string(), "--port=1".to_string()])
    );
}

#[test]
fn derived_values_follow_the_pool_size() {
    let sb = Sandbox::new();
    let small = sb.load(&["--no-defaults"]).unwrap();
    assert_eq!(small.globals.get(keys::INNODB_BUFFER_POOL_INSTANCES), 1);
    assert_eq!(small.globals.get(keys::INNODB_PAGE_CLEANERS), 1);
    assert_eq!(
        small
            .globals
            .origin("innodb_buffer_pool_instances")
            .unwrap(),
        Origin::Computed
    );
    assert_eq!(small.globals.get(keys::INNODB_IO_CAPACITY_MAX), 2000);
    assert!(small.warnings.is_empty(), "{:?}", small.warnings);

    let big = sb
        .load(&[
            "--no-defaults",
            "--innodb-buffer-pool-size=2G",
            "--innodb-io-capacity=5000",
        ])
        .unwrap();
    assert_eq!(big.globals.get(keys::INNODB_BUFFER_POOL_INSTANCES), 8);
    assert_eq!(big.globals.get(keys::INNODB_PAGE_CLEANERS), 4);
    assert_eq!(big.globals.get(keys::INNODB_IO_CAPACITY_MAX), 10_000);

    // Explicit instances on a small pool are forced to 1, with a warning.
    let forced = sb
        .load(&[
            "--no-defaults",
            "--innodb-buffer-pool-instances=4",
            "--innodb-page-cleaners=4",
        ])
        .unwrap();
    assert_eq!(forced.globals.get(keys::INNODB_BUFFER_POOL_INSTANCES), 1);
    assert_eq!(forced.globals.get(keys::INNODB_PAGE_CLEANERS), 1);
    assert_eq!(forced.warnings.len(), 2, "{:?}", forced.warnings);
}

#[test]
fn io_capacity_above_its_max_is_clamped_at_startup() {
    let sb = Sandbox::new();
    let opts = sb
        .load_file("[mysqld]\ninnodb_io_capacity = 3000\ninnodb_io_capacity_max = 2500\n")
        .unwrap();
    assert_eq!(opts.globals.get(keys::INNODB_IO_CAPACITY), 2500);
    assert_eq!(opts.warnings.len(), 1, "{:?}", opts.warnings);
    assert!(opts.warnings[0]
        .to_string()
        .contains("cannot be higher than innodb_io_capacity_max"));
}

#[test]
fn character_set_and_collation_options_agree() {
    let sb = Sandbox::new();
    let opts = sb
        .load_file("[mysqld]\ncharacter_set_server = latin1\n")
        .unwrap();
    assert_eq!(
        opts.globals.get(keys::COLLATION_SERVER),
        "latin1_swedish_ci"
    );
    let opts = sb
        .load_file("[mysqld]\ncollation_server = utf8mb4_bin\n")
        .unwrap();
    assert_eq!(opts.globals.get(keys::CHARACTER_SET_SERVER), "utf8mb4");
    let opts = sb
        .load_file("[mysqld]\ncollation-server = utf8_bin\n")
        .unwrap();
    assert_eq!(opts.globals.get(keys::CHARACTER_SET_SERVER), "utf8mb3");
    assert_eq!(opts.globals.get(keys::COLLATION_SERVER), "utf8mb3_bin");
    let err = expect_err(
        sb.load_file("[mysqld]\ncharacter_set_server = latin1\ncollation_server = utf8mb4_bin\n"),
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}: invalid value 'utf8mb4_bin' for collation_server: expected a collation of \
             character set latin1 (set by {})",
            sb.file_origin("my.cnf", 3),
            sb.file_origin("my.cnf", 2)
        )
    );
    let err = expect_err(sb.load_file("[mysqld]\ncharacter_set_server = klingon\n"));
    assert!(
        err.to_string().contains("expected a character set: "),
        "{err}"
    );
}

#[test]
fn paths_are_made_absolute() {
    let sb = Sandbox::new();
    let opts = sb
        .load_file("[mysqld]\ndatadir = ./db\npid_file = run/b.pid\nlog_error = err.log\n")
        .unwrap();
    let datadir = sb.path("db");
    assert_eq!(
        opts.globals.get(keys::DATADIR),
        datadir.display().to_string()
    );
    assert_eq!(
        opts.globals.get(keys::PID_FILE),
        datadir.join("run/b.pid").display().to_string()
    );
    assert_eq!(
        opts.globals.get(keys::LOG_ERROR),
        datadir.join("err.log").display().to_string()
    );
    let defaults = sb.load(&["--no-defaults"]).unwrap();
    assert_eq!(
        defaults.globals.get(keys::PID_FILE),
        sb.path("data/basaltd.pid").display().to_string()
    );
    assert_eq!(defaults.globals.get(keys::LOG_ERROR), "stderr");
    assert_eq!(defaults.globals.get(keys::TMPDIR), "/tmp");
    assert_eq!(defaults.globals.get(keys::HOSTNAME), "testhost");
}

#[test]
fn time_zone_option_accepts_mysqls_option_name() {
    let sb = Sandbox::new();
    let opts = sb
        .load_file("[mysqld]\ndefault-time-zone = '+2:00'\n")
        .unwrap();
    assert_eq!(opts.globals.get(keys::TIME_ZONE), "+02:00");
    let opts = sb
        .load(&["--no-defaults", "--tx-isolation=read-committed"])
        .unwrap();
    assert_eq!(
        opts.globals.get(keys::TRANSACTION_ISOLATION),
        "READ-COMMITTED"
    );
}

#[test]
fn invalid_utf8_is_reported_with_its_line() {
    let sb = Sandbox::new();
    let path = sb.path("bad.cnf");
    std::fs::write(&path, b"[mysqld]\nport = 1\ninit_connect = \xff\n").unwrap();
    let err = expect_err(sb.load(&[&format!("--defaults-file={}", path.display())]));
    assert_eq!(
        err.to_string(),
        format!("{}: line is not valid UTF-8", sb.file_origin("bad.cnf", 3))
    );
}

#[test]
fn optimizer_switch_in_a_file_changes_only_the_switches_named() {
    let sb = Sandbox::new();
    let opts = sb
        .load_file("[mysqld]\noptimizer_switch = semijoin=off,batched_key_access=on\n")
        .unwrap();
    let v = opts.globals.get(keys::OPTIMIZER_SWITCH);
    assert!(!v.contains("semijoin") && v.contains("batched_key_access"));
    assert!(
        v.contains("index_merge") && v.contains("hash_join"),
        "the others keep their defaults"
    );
    assert!(shown(&opts.globals, "optimizer_switch").contains(",semijoin=off,"));
    let err = sb
        .load_file("[mysqld]\noptimizer_switch = semijoin\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("optimizer_switch") && err.contains("name=on|off"),
        "{err}"
    );
}
