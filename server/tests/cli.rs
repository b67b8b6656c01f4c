//! The binary's command line: `--version`, `--help`, and refusing bad
//! options. (Being an integration test of this package, it also makes
//! `cargo test` build the `basaltd` binary that the end-to-end tests in
//! `basalt-tests` start.)

use std::process::Command;

fn basaltd(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_basaltd"))
        .args(args)
        .output()
        .expect("run basaltd")
}

#[test]
fn version_and_help_exit_zero() {
    let out = basaltd(&["--version"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("8.0.36-basalt"), "{text}");
    let out = basaltd(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("innodb_buffer_pool_size") || text.contains("innodb-buffer-pool-size"),
        "{text}"
    );
}

#[test]
fn unknown_option_exits_non_zero_naming_it() {
    let out = basaltd(&["--no-defaults", "--no-such-option=1"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("no-such-option") || text.contains("no_such_option"),
        "{text}"
    );
    assert!(text.contains("command line"), "{text}");
}
