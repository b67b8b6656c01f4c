//! Golden scenario scripts: `tests/scenarios/*.test` run through real
//! sessions; the output must match the file byte for byte.
//!
//! Format: `> statement` lines are run (multi-statements allowed) and are
//! followed by what the client sees (result sets as tab-separated lines,
//! `OK affected=N warnings=W`, or `ERROR code (state): message`).
//! Directives: `@connect NAME USER HOST [DB]` opens a session and makes it
//! current; `@session NAME` switches; `@meta statement` prints the result
//! metadata (name, type code, length, decimals, flags, charset). Lines
//! starting with `#` are comments. A session `main` (root from
//! 127.0.0.1) exists at the start.
//!
//! The expected outputs were written from MySQL 8.0's behaviour (checked
//! against MariaDB where the two agree). `BASALT_BLESS=1` rewrites the
//! files after a deliberate behaviour change; review the diff.

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::{metadata, run, Harness};

fn is_directive(l: &str) -> bool {
    l.starts_with("@connect ") || l.starts_with("@session ") || l.starts_with("@meta ")
}

/// A line of expected output (not a statement, directive, comment or gap).
fn is_expected(l: &str) -> bool {
    !l.starts_with("> ") && !is_directive(l) && !l.starts_with('#') && !l.is_empty()
}

fn run_script(text: &str) -> String {
    let mut h = Harness::new();
    let mut sessions = HashMap::new();
    sessions.insert(
        "main".to_string(),
        h.connect("root", "127.0.0.1", None).expect("root session"),
    );
    let mut current = "main".to_string();
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(stmt) = line.strip_prefix("> ") {
            out.push_str(line);
            out.push('\n');
            let s = sessions.get_mut(&current).expect("current session");
            for l in run(s, stmt) {
                out.push_str(&l);
                out.push('\n');
            }
            // Skip the expected lines of the file.
            while lines.peek().is_some_and(|l| is_expected(l)) {
                lines.next();
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
        if let Some(rest) = line.strip_prefix("@connect ") {
            let parts: Vec<&str> = rest.split_whitespace().collect();
            match h.connect(parts[1], parts[2], parts.get(3).copied()) {
                Ok(s) => {
                    sessions.insert(parts[0].to_string(), s);
                    current = parts[0].to_string();
                    out.push_str("connected\n");
                }
                Err(e) => out.push_str(&format!("{e}\n")),
            }
            while lines.peek().is_some_and(|l| is_expected(l)) {
                lines.next();
            }
        } else if let Some(name) = line.strip_prefix("@session ") {
            current = name.trim().to_string();
        } else if let Some(stmt) = line.strip_prefix("@meta ") {
            let s = sessions.get_mut(&current).expect("current session");
            match metadata(s, stmt) {
                Ok(cols) => {
                    for c in cols {
                        out.push_str(&format!(
                            "{} type={} len={} dec={} flags={} charset={}\n",
                            c.name, c.column_type as u8, c.length, c.decimals, c.flags.0, c.charset
                        ));
                    }
                }
                Err(e) => out.push_str(&format!("{e}\n")),
            }
            while lines.peek().is_some_and(|l| is_expected(l)) {
                lines.next();
            }
        }
    }
    out
}

#[test]
fn scenarios_match_their_expected_output() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let bless = std::env::var("BASALT_BLESS").is_ok_and(|v| v == "1");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("scenario dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "test"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no scenarios found in {}", dir.display());
    let mut failures = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read scenario");
        let actual = run_script(&text);
        if actual == text {
            continue;
        }
        if bless {
            std::fs::write(&f, &actual).expect("bless");
            continue;
        }
        let first = text
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(text.lines().count().min(actual.lines().count()));
        let show = |s: &str| {
            s.lines()
                .skip(first.saturating_sub(2))
                .take(6)
                .collect::<Vec<_>>()
                .join("\n")
        };
        failures.push(format!(
            "{}: first difference at line {}\n--- expected\n{}\n--- actual\n{}",
            f.display(),
            first + 1,
            show(&text),
            show(&actual)
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
