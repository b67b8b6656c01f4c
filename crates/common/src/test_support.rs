//! Helpers shared by Basalt's test suites (feature `test-support`, turned
//! on only by dev-dependencies, so no release build contains them).

use std::hash::{BuildHasher, Hasher};

/// The variable that fixes the seed of every randomised test.
pub const SEED_VAR: &str = "BASALT_TEST_SEED";

/// The seed of the randomised test `test`: `BASALT_TEST_SEED` when set,
/// otherwise a fresh one. Printed with the test's name (the harness shows
/// it when the test fails), so a failure can be replayed with
/// `BASALT_TEST_SEED=<seed>`.
///
/// # Panics
///
/// When `BASALT_TEST_SEED` is set but is not a `u64`: a run asked to replay
/// one seed must not quietly use another.
pub fn test_seed(test: &str) -> u64 {
    seed_from_env(test).unwrap_or_else(|| announce(test, fresh_seed()))
}

/// Like [`test_seed`], but a test that should be repeatable run after run
/// uses `default` when `BASALT_TEST_SEED` is not set.
pub fn test_seed_or(test: &str, default: u64) -> u64 {
    seed_from_env(test).unwrap_or_else(|| announce(test, default))
}

fn seed_from_env(test: &str) -> Option<u64> {
    let value = std::env::var(SEED_VAR).ok()?;
    let seed = value
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{SEED_VAR}={value:?} is not a u64"));
    Some(announce(test, seed))
}

fn announce(test: &str, seed: u64) -> u64 {
    eprintln!("{test}: seed {seed} (replay with {SEED_VAR}={seed})");
    seed
}

/// A seed that differs from run to run and from call to call: the standard
/// library's randomly keyed hasher over the clock.
fn fresh_seed() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    hasher.write_u128(nanos);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_seeds_differ() {
        let seeds: std::collections::HashSet<u64> = (0..16).map(|_| fresh_seed()).collect();
        assert!(seeds.len() > 1, "16 fresh seeds were all {seeds:?}");
    }
}
