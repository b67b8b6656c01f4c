//! Change listeners on `SET GLOBAL`, and a seeded random model test of the
//! stores against a plain map.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use basalt_config::{keys, Assignment, ConfigError, GlobalVars, Qualifier, SessionVars, SysValue};

type Seen = Arc<Mutex<Vec<SysValue>>>;
type Callback = Box<dyn Fn(&SysValue) + Send + Sync>;

fn recorder() -> (Seen, Callback) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    (
        seen,
        Box::new(move |v: &SysValue| sink.lock().unwrap().push(v.clone())),
    )
}

#[test]
fn listener_fires_on_dynamic_change_with_the_stored_value() {
    let globals = GlobalVars::new();
    let (seen, callback) = recorder();
    globals
        .subscribe("innodb_old_blocks_time", callback)
        .unwrap();
    globals
        .set("innodb_old_blocks_time", &Assignment::Int(250))
        .unwrap();
    // Clamped values arrive clamped.
    globals
        .set("innodb_old_blocks_time", &Assignment::Int(-1))
        .unwrap();
    // Setting the same value again still notifies.
    globals
        .set("innodb_old_blocks_time", &Assignment::Int(0))
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![SysValue::UInt(250), SysValue::UInt(0), SysValue::UInt(0)]
    );
}

#[test]
fn typed_listener_receives_typed_values() {
    let globals = GlobalVars::new();
    let last = Arc::new(AtomicU64::new(u64::MAX));
    let sink = Arc::clone(&last);
    globals
        .on_change(keys::INNODB_OLD_BLOCKS_PCT, move |pct| {
            sink.store(pct, Ordering::SeqCst)
        })
        .unwrap();
    globals
        .set("innodb_old_blocks_pct", &Assignment::Int(60))
        .unwrap();
    assert_eq!(last.load(Ordering::SeqCst), 60);
}

#[test]
fn listener_does_not_fire_for_rejected_values_or_other_variables() {
    let globals = Arc::new(GlobalVars::new());
    let (seen, callback) = recorder();
    globals
        .subscribe("innodb_old_blocks_pct", callback)
        .unwrap();
    assert!(globals
        .set("innodb_old_blocks_pct", &Assignment::Str("abc".into()))
        .is_err());
    assert!(globals
        .set("innodb_old_blocks_pct", &Assignment::Float(40.5))
        .is_err());
    assert!(globals
        .set("innodb_old_blocks_pct", &Assignment::Null)
        .is_err());
    globals
        .set("innodb_old_blocks_time", &Assignment::Int(5))
        .unwrap();
    // A session SET of a global-only variable fails before any change.
    let mut sess = SessionVars::new(Arc::clone(&globals));
    assert!(sess
        .set(
            Qualifier::Session,
            "innodb_old_blocks_pct",
            &Assignment::Int(50)
        )
        .is_err());
    assert!(seen.lock().unwrap().is_empty());
    assert_eq!(globals.get(keys::INNODB_OLD_BLOCKS_PCT), 37);
}

#[test]
fn session_set_never_notifies_global_listeners() {
    let globals = Arc::new(GlobalVars::new());
    let (seen, callback) = recorder();
    globals
        .subscribe("innodb_lock_wait_timeout", callback)
        .unwrap();
    let mut sess = SessionVars::new(Arc::clone(&globals));
    sess.set(
        Qualifier::Session,
        "innodb_lock_wait_timeout",
        &Assignment::Int(3),
    )
    .unwrap();
    assert!(seen.lock().unwrap().is_empty());
    sess.set(
        Qualifier::Global,
        "innodb_lock_wait_timeout",
        &Assignment::Int(4),
    )
    .unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![SysValue::UInt(4)]);
}

#[test]
fn subscribing_to_something_that_cannot_change_is_an_error() {
    let globals = GlobalVars::new();
    let (_, cb) = recorder();
    let err = globals
        .subscribe("innodb_buffer_pool_size", cb)
        .unwrap_err();
    assert!(matches!(err, ConfigError::ReadOnly { .. }), "{err}");
    let (_, cb) = recorder();
    let err = globals.subscribe("last_insert_id", cb).unwrap_err();
    assert!(matches!(err, ConfigError::SessionOnly { .. }), "{err}");
    let (_, cb) = recorder();
    let err = globals.subscribe("nope", cb).unwrap_err();
    assert_eq!(err.code(), Some(1193));
}

#[test]
fn unsubscribe_stops_notifications() {
    let globals = GlobalVars::new();
    let (seen, callback) = recorder();
    let id = globals.subscribe("innodb_io_capacity", callback).unwrap();
    globals
        .set("innodb_io_capacity", &Assignment::Int(300))
        .unwrap();
    assert!(globals.unsubscribe(id));
    assert!(!globals.unsubscribe(id));
    globals
        .set("innodb_io_capacity", &Assignment::Int(400))
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![SysValue::UInt(300)]);
}

#[test]
fn companion_change_notifies_the_companion_listener() {
    let globals = GlobalVars::new();
    let (seen, callback) = recorder();
    globals.subscribe("collation_server", callback).unwrap();
    globals
        .set("character_set_server", &Assignment::Str("latin1".into()))
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![SysValue::Str("latin1_swedish_ci".into())]
    );
}

#[test]
fn listeners_may_read_the_store() {
    let globals = Arc::new(GlobalVars::new());
    let reader = Arc::clone(&globals);
    let observed = Arc::new(AtomicU64::new(0));
    let sink = Arc::clone(&observed);
    globals
        .on_change(keys::INNODB_OLD_BLOCKS_TIME, move |_| {
            // Reading inside a listener must not deadlock and must see the
            // new value.
            sink.store(reader.get(keys::INNODB_OLD_BLOCKS_TIME), Ordering::SeqCst);
        })
        .unwrap();
    globals
        .set("innodb_old_blocks_time", &Assignment::Int(77))
        .unwrap();
    assert_eq!(observed.load(Ordering::SeqCst), 77);
}

#[test]
fn concurrent_set_global_notifies_in_storage_order() {
    let globals = Arc::new(GlobalVars::new());
    let (seen, callback) = recorder();
    globals
        .subscribe("innodb_old_blocks_time", callback)
        .unwrap();
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let globals = Arc::clone(&globals);
            thread::spawn(move || {
                for i in 0..200u64 {
                    globals
                        .set("innodb_old_blocks_time", &Assignment::UInt(t * 1000 + i))
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 800);
    // The last notification is the value that stayed.
    assert_eq!(
        seen.last().unwrap(),
        &SysValue::UInt(globals.get(keys::INNODB_OLD_BLOCKS_TIME))
    );
    // Each thread's values arrive in the order that thread set them.
    for t in 0..4u64 {
        let mine: Vec<u64> = seen
            .iter()
            .filter_map(|v| match v {
                SysValue::UInt(x) if x / 1000 == t => Some(x % 1000),
                _ => None,
            })
            .collect();
        assert_eq!(mine, (0..200).collect::<Vec<_>>(), "thread {t}");
    }
}

// ---------------------------------------------------------------------------
// Seeded random model test.
// ---------------------------------------------------------------------------

/// splitmix64: small, deterministic, good enough to pick operations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The reference: what MySQL's documentation says each variable accepts,
/// written out independently of the registry.
#[derive(Clone, Copy)]
enum Spec {
    Range { min: i64, max: i64 },
    Bool,
    Enum(&'static [&'static str]),
}

const VARS: &[(&str, Spec, bool)] = &[
    // (name, accepted values, has a session value)
    (
        "innodb_old_blocks_pct",
        Spec::Range { min: 5, max: 95 },
        false,
    ),
    (
        "wait_timeout",
        Spec::Range {
            min: 1,
            max: 31_536_000,
        },
        true,
    ),
    (
        "auto_increment_increment",
        Spec::Range {
            min: 1,
            max: 65_535,
        },
        true,
    ),
    ("autocommit", Spec::Bool, true),
    ("unique_checks", Spec::Bool, true),
    (
        "transaction_isolation",
        Spec::Enum(&[
            "READ-UNCOMMITTED",
            "READ-COMMITTED",
            "REPEATABLE-READ",
            "SERIALIZABLE",
        ]),
        true,
    ),
];

fn expected_show(spec: Spec, value: &Assignment) -> Option<String> {
    match (spec, value) {
        (Spec::Range { min, max }, Assignment::Int(v)) => Some((*v).clamp(min, max).to_string()),
        (Spec::Bool, Assignment::Int(0)) => Some("OFF".into()),
        (Spec::Bool, Assignment::Int(1)) => Some("ON".into()),
        (Spec::Bool, Assignment::Str(s)) if s.eq_ignore_ascii_case("on") => Some("ON".into()),
        (Spec::Bool, Assignment::Str(s)) if s.eq_ignore_ascii_case("off") => Some("OFF".into()),
        (Spec::Enum(names), Assignment::Str(s)) => names
            .iter()
            .find(|n| n.eq_ignore_ascii_case(s))
            .map(|n| n.to_string()),
        (Spec::Enum(names), Assignment::Int(i)) => usize::try_from(*i)
            .ok()
            .and_then(|i| names.get(i))
            .map(|n| n.to_string()),
        _ => None,
    }
}

fn random_assignment(rng: &mut Rng) -> Assignment {
    match rng.below(6) {
        0 => Assignment::Int(rng.below(200) as i64 - 50),
        1 => Assignment::Int(rng.below(3) as i64),
        2 => Assignment::Int(rng.next() as i64),
        3 => Assignment::Str(
            ["on", "OFF", "read-committed", "SERIALIZABLE", "bogus", ""][rng.below(6) as usize]
                .to_string(),
        ),
        4 => Assignment::Float(1.5),
        _ => Assignment::Null,
    }
}

#[test]
fn random_sets_match_a_reference_map() {
    let seed = basalt_common::test_support::test_seed("random_sets_match_a_reference_map");
    let mut rng = Rng(seed);
    let globals = Arc::new(GlobalVars::new());
    let mut sessions: Vec<SessionVars> = (0..3)
        .map(|_| SessionVars::new(Arc::clone(&globals)))
        .collect();

    // Reference state: global values, and per session its values.
    let initial: BTreeMap<&str, String> = VARS
        .iter()
        .map(|(name, _, _)| (*name, globals.value(name).unwrap().to_string()))
        .collect();
    let mut ref_global = initial.clone();
    let mut ref_sessions = vec![initial.clone(); sessions.len()];

    for step in 0..2_000 {
        let (name, spec, has_session) = VARS[rng.below(VARS.len() as u64) as usize];
        let s = rng.below(sessions.len() as u64) as usize;
        let value = random_assignment(&mut rng);
        let global = rng.below(2) == 0;
        let qualifier = if global {
            Qualifier::Global
        } else {
            Qualifier::Session
        };
        let result = sessions[s].set(qualifier, name, &value);
        let expected = expected_show(spec, &value);
        let context = || {
            format!(
                "seed {seed} (BASALT_TEST_SEED), step {step}: SET {qualifier:?} {name} = {value:?}"
            )
        };
        match (&expected, &result) {
            (Some(show), Ok(_)) if global => {
                ref_global.insert(name, show.clone());
            }
            (Some(show), Ok(_)) if has_session => {
                ref_sessions[s].insert(name, show.clone());
            }
            (Some(_), Err(ConfigError::GlobalOnly { .. })) if !global && !has_session => {}
            (None, Err(_)) => {}
            _ => panic!("{}: expected {expected:?}, got {result:?}", context()),
        }
        // Occasionally a session reconnects.
        if rng.below(50) == 0 {
            sessions[s].reset();
            for (name, _, has_session) in VARS {
                if *has_session {
                    ref_sessions[s].insert(name, ref_global[name].clone());
                }
            }
        }
        for (name, _, has_session) in VARS {
            assert_eq!(
                globals.value(name).unwrap().to_string(),
                ref_global[name],
                "{}: global {name}",
                context()
            );
            for (i, sess) in sessions.iter().enumerate() {
                let want = if *has_session {
                    &ref_sessions[i][name]
                } else {
                    &ref_global[name]
                };
                assert_eq!(
                    &sess.value(Qualifier::Implicit, name).unwrap().to_string(),
                    want,
                    "{}: session {i} {name}",
                    context()
                );
            }
        }
    }
}
