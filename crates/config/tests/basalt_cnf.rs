//! `config/basalt.cnf`, the documented default option file, checked with the
//! real loader: it loads as shipped, and with every commented-out option
//! (`#name = value`) enabled it sets every startup variable, names nothing
//! unknown, and each value equals the default.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use basalt_config::{registry, Origin, StartupWarningKind};
use common::Sandbox;

fn shipped() -> (PathBuf, String) {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../config/basalt.cnf"
    ));
    let text = std::fs::read_to_string(&path).expect("config/basalt.cnf is readable");
    (path, text)
}

/// Enables every `#name = value` line (a '#' directly followed by a
/// lower-case name and '='); prose comments have a space after '#'.
fn enable_all(text: &str) -> (String, Vec<String>) {
    let mut names = Vec::new();
    let enabled = text
        .lines()
        .map(|line| {
            let Some(rest) = line.strip_prefix('#') else {
                return line.to_string();
            };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            if !name.is_empty() && rest[name.len()..].trim_start().starts_with('=') {
                names.push(name);
                rest.to_string()
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    (enabled, names)
}

#[test]
fn shipped_file_loads_and_changes_nothing() {
    let sb = Sandbox::new();
    let (path, _) = shipped();
    let opts = sb
        .load(&[&format!("--defaults-file={}", path.display())])
        .unwrap_or_else(|e| panic!("config/basalt.cnf does not load: {e}"));
    assert!(opts.warnings.is_empty(), "{:?}", opts.warnings);
    let defaults = sb.load(&["--no-defaults"]).unwrap();
    assert_eq!(opts.globals.show(None), defaults.globals.show(None));
}

#[test]
fn every_startup_option_is_documented_with_its_default() {
    let (_, text) = shipped();
    let (enabled, names) = enable_all(&text);

    // Each option appears once.
    let unique: BTreeSet<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(
        unique.len(),
        names.len(),
        "an option is documented twice: {names:?}"
    );

    let sb = Sandbox::new();
    let path = sb.write("basalt-enabled.cnf", &enabled);
    let opts = sb
        .load(&[&format!("--defaults-file={}", path.display())])
        .unwrap_or_else(|e| panic!("enabled config/basalt.cnf does not load: {e}"));
    let defaults = sb.load(&["--no-defaults"]).unwrap();

    for def in registry().iter().filter(|d| d.startup) {
        let origin = opts.globals.origin(def.name).unwrap();
        // Derived values may be recomputed from the file's inputs, but each
        // must have been written in the file.
        assert!(
            matches!(origin, Origin::File { .. }),
            "{} is not documented in config/basalt.cnf (origin: {origin})",
            def.name
        );
        assert_eq!(
            opts.globals.value(def.name).unwrap(),
            defaults.globals.value(def.name).unwrap(),
            "config/basalt.cnf shows a value for {} that is not its default",
            def.name
        );
    }
    // Nothing but startup variables: every enabled name is one.
    let startup: BTreeSet<&str> = registry()
        .iter()
        .filter(|d| d.startup)
        .map(|d| d.name)
        .collect();
    assert_eq!(unique, startup);

    // The only adjustment allowed is the documented page-cleaner cap.
    for w in &opts.warnings {
        assert!(
            matches!(
                &w.kind,
                StartupWarningKind::Adjusted {
                    name: "innodb_page_cleaners",
                    ..
                }
            ),
            "unexpected warning: {w}"
        );
    }
}
