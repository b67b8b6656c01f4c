//! Seeded random statements through real sessions: every one must end in
//! a result or an error, never a panic, and the session must stay usable.
//!
//! `BASALT_TEST_SEED=<n>` replays a seed; `BASALT_FUZZ_ITERS=<n>` changes
//! the number of statements (default 3000).

mod common;

use common::{run, Harness};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

const FRAGMENTS: &[&str] = &[
    "SELECT",
    "SET",
    "SHOW",
    "CREATE",
    "DROP",
    "GRANT",
    "REVOKE",
    "USER",
    "DATABASE",
    "FROM",
    "WHERE",
    "1",
    "-1",
    "0",
    "9223372036854775807",
    "18446744073709551615",
    "1.5",
    "1e308",
    "'a'",
    "'%'",
    "x'ff'",
    "b'1'",
    "NULL",
    "@a",
    "@@sql_mode",
    "@@global.max_connections",
    "?",
    "(",
    ")",
    ",",
    "+",
    "-",
    "*",
    "/",
    "DIV",
    "MOD",
    "%",
    "=",
    "<=>",
    "<>",
    "AND",
    "OR",
    "NOT",
    "!",
    "~",
    "<<",
    ">>",
    "LIKE",
    "IN",
    "BETWEEN",
    "IS",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "CAST",
    "AS",
    "SIGNED",
    "CHAR",
    "DECIMAL(65,30)",
    "DATE",
    "CONCAT",
    "SUBSTRING",
    "REPEAT",
    "SLEEP",
    "ROUND",
    "IF",
    "COALESCE",
    "NOW",
    "NAMES",
    "utf8mb4",
    "COLLATE",
    "utf8mb4_bin",
    "TRANSACTION",
    "ISOLATION",
    "LEVEL",
    "READ",
    "ONLY",
    "KILL",
    "QUERY",
    "PREPARE",
    "EXECUTE",
    "USING",
    "DEALLOCATE",
    "@x",
    ":=",
    "`q`",
    "\"dq\"",
    "/*!40101",
    "*/",
    "--",
    ";",
    "LIMIT",
    "DUAL",
    "ALL",
    "PRIVILEGES",
    "ON",
    "*.*",
    "TO",
    "'u'@'%'",
    "IDENTIFIED",
    "BY",
    "WITH",
    "VARIABLES",
    "STATUS",
    "WARNINGS",
    "COUNT(*)",
    "PROCESSLIST",
    "GRANTS",
    "FOR",
    "USE",
    "d1",
    "t1",
    "'é'",
    "€",
    "`ß`",
    "\u{0}",
    "\t",
    "\n",
    "'\\'",
    "_utf8mb4",
    "_binary",
    "0x",
    "0b2",
    "1e",
    ".5",
    "@'q'",
];

fn random_statement(rng: &mut SmallRng) -> String {
    if rng.gen_bool(0.1) {
        // Raw bytes turned into text.
        let n = rng.gen_range(0..40);
        let chars: Vec<char> = (0..n)
            .map(|_| match rng.gen_range(0..10) {
                0 => char::from_u32(rng.gen_range(0x80..0x3000)).unwrap_or('?'),
                1 => char::from(rng.gen_range(0u8..0x20)),
                _ => char::from(rng.gen_range(0x20u8..0x7f)),
            })
            .collect();
        return chars.into_iter().collect();
    }
    let n = rng.gen_range(1..14);
    (0..n)
        .map(|_| FRAGMENTS[rng.gen_range(0..FRAGMENTS.len())])
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn random_statements_never_panic() {
    let seed = basalt_common::test_support::test_seed_or("random_statements_never_panic", 0xba5a17);
    let iters: usize = std::env::var("BASALT_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3000);
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut h = Harness::new();
    let mut session = h.connect("root", "127.0.0.1", None).expect("root");
    let mut errors = 0usize;
    for i in 0..iters {
        let stmt = random_statement(&mut rng);
        if stmt.to_ascii_uppercase().contains("SLEEP") {
            continue;
        }
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&mut session, &stmt)));
        match outcome {
            Ok(lines) => {
                if lines.last().is_some_and(|l| l.starts_with("ERROR")) {
                    errors += 1;
                }
            }
            Err(_) => panic!("statement {i} panicked (seed {seed}): {stmt:?}"),
        }
    }
    // The session still works afterwards.
    let lines = run(&mut session, "SELECT 1 + 1 AS two");
    assert_eq!(lines, vec!["two", "2"], "seed {seed}");
    assert!(
        errors > 0,
        "random text should mostly fail to parse (seed {seed})"
    );
}
