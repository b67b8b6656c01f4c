//! Privilege checks and account changes against the in-memory store.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use basalt_protocol::AuthPlugin;

use super::store::MemAclStore;
use super::*;
use crate::error::SqlError;

fn ctx(user: &str, host: &str) -> SecurityContext {
    SecurityContext {
        user: user.into(),
        host: "10.1.1.1".into(),
        priv_user: user.into(),
        priv_host: host.into(),
    }
}

fn account(user: &str, host: &str) -> AccountRecord {
    AccountRecord {
        user: user.into(),
        host: host.into(),
        plugin: AuthPlugin::CachingSha2Password,
        auth_string: Vec::new(),
        privileges: Privileges::NONE,
    }
}

fn cache() -> (Arc<MemAclStore>, AclCache) {
    let store = Arc::new(MemAclStore::default());
    let dyn_store: Arc<dyn AclStore> = store.clone();
    let cache = AclCache::open(dyn_store).unwrap();
    (store, cache)
}

#[test]
fn bootstrap_creates_root_once_and_persists_it() {
    let (store, cache) = cache();
    let root = cache
        .match_account("root", "127.0.0.1")
        .expect("root from loopback");
    assert_eq!(root.host, "localhost");
    assert!(root.privileges.contains(Privileges::all()));
    assert!(root.auth_string.is_empty());
    assert!(
        cache.match_account("root", "10.0.0.1").is_none(),
        "root@localhost is loopback only"
    );
    // A second open of the same store finds root and does not add another.
    let dyn_store: Arc<dyn AclStore> = store.clone();
    let again = AclCache::open(dyn_store).unwrap();
    assert_eq!(again.snapshot().accounts.len(), 1);
}

#[test]
fn table_check_reports_1142_with_the_privilege_name() {
    let (_, cache) = cache();
    let mut w = Vec::new();
    cache
        .create_users(vec![account("u", "%")], false, &mut w)
        .unwrap();
    let u = ctx("u", "%");
    let table_level = Level::Table("db".into(), "t".into());
    cache
        .grant(
            &[("u".into(), "%".into())],
            &table_level,
            Privileges::SELECT,
        )
        .unwrap();
    assert!(cache.check_table(&u, "db", "t", Privileges::SELECT).is_ok());
    let e = cache
        .check_table(&u, "db", "t", Privileges::INSERT)
        .unwrap_err();
    assert_eq!(e.code(), 1142);
    assert_eq!(
        e.to_string(),
        "INSERT command denied to user 'u'@'%' for table 't'"
    );
    let e = cache
        .check_table(&u, "db", "other", Privileges::SELECT)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "SELECT command denied to user 'u'@'%' for table 'other'"
    );
    // A table grant gives access to the schema (USE) but not to others.
    assert!(cache.check_db_access(&u, "db").is_ok());
    assert_eq!(cache.check_db_access(&u, "db2").unwrap_err().code(), 1044);
    // A schema grant covers every table in it; wildcards match names.
    cache
        .grant(
            &[("u".into(), "%".into())],
            &Level::Database("app\\_%".into()),
            Privileges::UPDATE,
        )
        .unwrap();
    assert!(cache
        .check_table(&u, "app_1", "x", Privileges::UPDATE)
        .is_ok());
    assert!(
        cache
            .check_table(&u, "appx1", "x", Privileges::UPDATE)
            .is_err(),
        "escaped underscore is literal"
    );
    // Global privileges cover everything.
    cache
        .grant(
            &[("u".into(), "%".into())],
            &Level::Global,
            Privileges::DELETE,
        )
        .unwrap();
    assert!(cache
        .check_table(&u, "any", "thing", Privileges::DELETE)
        .is_ok());
}

#[test]
fn revoke_removes_exactly_what_was_granted() {
    let (_, cache) = cache();
    let mut w = Vec::new();
    cache
        .create_users(vec![account("u", "%")], false, &mut w)
        .unwrap();
    let users = [("u".to_string(), "%".to_string())];
    let db = Level::Database("d".into());
    cache
        .grant(&users, &db, Privileges::SELECT | Privileges::INSERT)
        .unwrap();
    cache.revoke(&users, &db, Privileges::INSERT).unwrap();
    let u = ctx("u", "%");
    assert_eq!(cache.db_privileges(&u, "d"), Privileges::SELECT);
    cache.revoke(&users, &db, Privileges::SELECT).unwrap();
    assert!(
        cache.snapshot().db_grants.is_empty(),
        "an empty grant row is deleted"
    );
    assert!(matches!(
        cache.revoke(&users, &db, Privileges::SELECT),
        Err(SqlError::NoSuchGrant { .. })
    ));
}

#[test]
fn failed_store_leaves_memory_unchanged() {
    let (store, cache) = cache();
    let before = cache.snapshot();
    store.fail.store(true, Ordering::Relaxed);
    let mut w = Vec::new();
    assert!(cache
        .create_users(vec![account("x", "%")], false, &mut w)
        .is_err());
    assert!(cache
        .create_schema(
            SchemaRecord {
                name: "s".into(),
                charset: "utf8mb4".into(),
                collation: "utf8mb4_0900_ai_ci".into(),
            },
            false
        )
        .is_err());
    assert_eq!(cache.snapshot(), before);
    store.fail.store(false, Ordering::Relaxed);
    cache
        .create_users(vec![account("x", "%")], false, &mut w)
        .unwrap();
    assert_eq!(
        store.load().unwrap().accounts.len(),
        2,
        "the store saw the change"
    );
}

#[test]
fn create_users_is_all_or_nothing() {
    let (store, cache) = cache();
    let mut w = Vec::new();
    cache
        .create_users(vec![account("a", "%")], false, &mut w)
        .unwrap();
    let e = cache
        .create_users(vec![account("b", "%"), account("a", "%")], false, &mut w)
        .unwrap_err();
    assert_eq!(e.to_string(), "Operation CREATE USER failed for 'a'@'%'");
    assert!(cache.account("b", "%").is_none());
    assert!(!store.load().unwrap().accounts.iter().any(|a| a.user == "b"));
}

#[test]
fn matching_prefers_specific_hosts_and_named_users() {
    let (_, cache) = cache();
    let mut w = Vec::new();
    cache
        .create_users(
            vec![
                account("", "%"),
                account("app", "%"),
                account("app", "10.0.0.%"),
                account("app", "10.0.0.7"),
            ],
            false,
            &mut w,
        )
        .unwrap();
    assert_eq!(
        cache.match_account("app", "10.0.0.7").unwrap().host,
        "10.0.0.7"
    );
    assert_eq!(
        cache.match_account("app", "10.0.0.8").unwrap().host,
        "10.0.0.%"
    );
    assert_eq!(cache.match_account("app", "192.168.0.1").unwrap().host, "%");
    let anon = cache.match_account("someone", "192.168.0.1").unwrap();
    assert_eq!(anon.user, "", "anonymous account matches any user name");
}

#[test]
fn drop_and_rename_carry_grants() {
    let (_, cache) = cache();
    let mut w = Vec::new();
    cache
        .create_users(vec![account("a", "%")], false, &mut w)
        .unwrap();
    let a = [("a".to_string(), "%".to_string())];
    cache
        .grant(&a, &Level::Database("d".into()), Privileges::SELECT)
        .unwrap();
    cache
        .grant(
            &a,
            &Level::Table("d".into(), "t".into()),
            Privileges::INSERT,
        )
        .unwrap();
    cache
        .rename_users(&[(("a".into(), "%".into()), ("b".into(), "localhost".into()))])
        .unwrap();
    let snap = cache.snapshot();
    assert!(snap
        .db_grants
        .iter()
        .all(|g| g.user == "b" && g.host == "localhost"));
    assert!(snap.table_grants.iter().all(|g| g.user == "b"));
    cache
        .drop_users(&[("b".into(), "localhost".into())], false, &mut w)
        .unwrap();
    let snap = cache.snapshot();
    assert!(snap.db_grants.is_empty() && snap.table_grants.is_empty());
}

#[test]
fn stored_strings_round_trip_through_show_create_user() {
    let stored = hash_password(AuthPlugin::NativePassword, "x");
    let text = stored_as_text(AuthPlugin::NativePassword, &stored).unwrap();
    let inner = text.trim_matches('\'');
    assert_eq!(
        stored_from_text(AuthPlugin::NativePassword, inner.as_bytes()).unwrap(),
        stored
    );
    let sha2 = hash_password(AuthPlugin::CachingSha2Password, "secret");
    assert_eq!(sha2.len(), 70);
    assert_eq!(
        stored_from_text(AuthPlugin::CachingSha2Password, &sha2).unwrap(),
        sha2
    );
    assert!(stored_from_text(AuthPlugin::NativePassword, b"*nothex").is_err());
    assert!(hash_password(AuthPlugin::CachingSha2Password, "").is_empty());
}
