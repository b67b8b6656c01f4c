//! The pre-parser and sqlparser together: what clients send parses into
//! the statements MySQL would run.

use super::*;

fn p(text: &str) -> Statement {
    parse_statement(text, ParseOptions::default()).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn named(user: &str, host: &str) -> UserSpec {
    UserSpec::Named {
        user: user.into(),
        host: host.into(),
    }
}

#[test]
fn set_forms() {
    match p("SET @@SESSION.sql_mode='ANSI', GLOBAL max_connections = 10, wait_timeout := 5, @u = 1")
    {
        Statement::Set(items) => {
            assert_eq!(
                items.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>(),
                vec![
                    SetTarget::System {
                        scope: Scope::Session,
                        name: "sql_mode".into()
                    },
                    SetTarget::System {
                        scope: Scope::Global,
                        name: "max_connections".into()
                    },
                    // A scope keyword applies to the assignments after it.
                    SetTarget::System {
                        scope: Scope::Global,
                        name: "wait_timeout".into()
                    },
                    SetTarget::User("u".into()),
                ]
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        p("SET autocommit = ON"),
        Statement::Set(vec![(
            SetTarget::System {
                scope: Scope::Implicit,
                name: "autocommit".into()
            },
            SetValue::Word("ON".into())
        )])
    );
    assert_eq!(
        p("SET NAMES utf8mb4 COLLATE utf8mb4_bin"),
        Statement::SetNames {
            charset: Some("utf8mb4".into()),
            collation: Some("utf8mb4_bin".into())
        }
    );
    assert_eq!(
        p("SET NAMES 'latin1'"),
        Statement::SetNames {
            charset: Some("latin1".into()),
            collation: None
        }
    );
    assert_eq!(
        p("SET CHARACTER SET DEFAULT"),
        Statement::SetCharacterSet(None)
    );
    assert_eq!(
        p("SET CHARSET utf8"),
        Statement::SetCharacterSet(Some("utf8".into()))
    );
    assert_eq!(
        p("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY"),
        Statement::SetTransaction {
            scope: TxScope::Session,
            isolation: Some("READ-COMMITTED"),
            read_only: Some(true)
        }
    );
    assert_eq!(
        p("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE"),
        Statement::SetTransaction {
            scope: TxScope::Next,
            isolation: Some("SERIALIZABLE"),
            read_only: None
        }
    );
    assert_eq!(
        p("SET PASSWORD FOR 'u'@'%' = 'x'"),
        Statement::SetPassword {
            user: Some(named("u", "%")),
            password: "x".into()
        }
    );
}

#[test]
fn account_statements() {
    match p("CREATE USER IF NOT EXISTS 'u'@'%' IDENTIFIED WITH caching_sha2_password BY 'pw', v@localhost") {
        Statement::CreateUser { if_not_exists, users } => {
            assert!(if_not_exists);
            assert_eq!(users[0].0, named("u", "%"));
            assert_eq!(users[0].1.as_ref().unwrap().plugin.as_deref(), Some("caching_sha2_password"));
            assert_eq!(users[0].1.as_ref().unwrap().password.as_deref(), Some("pw"));
            assert_eq!(users[1], (named("v", "localhost"), None));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        p("DROP USER IF EXISTS 'u'@'%', `w`"),
        Statement::DropUser {
            if_exists: true,
            users: vec![named("u", "%"), named("w", "%")]
        }
    );
    match p("GRANT SELECT, INSERT, CREATE TEMPORARY TABLES ON db.* TO 'u'@'%' WITH GRANT OPTION") {
        Statement::Grant {
            privileges,
            level,
            users,
            grant_option,
        } => {
            assert_eq!(
                privileges,
                vec!["SELECT", "INSERT", "CREATE TEMPORARY TABLES"]
            );
            assert_eq!(level, GrantLevel::Database(Some("db".into())));
            assert_eq!(users, vec![named("u", "%")]);
            assert!(grant_option);
        }
        other => panic!("{other:?}"),
    }
    match p("REVOKE ALL PRIVILEGES ON *.* FROM u@localhost") {
        Statement::Revoke {
            privileges, level, ..
        } => {
            assert_eq!(privileges, vec!["ALL"]);
            assert_eq!(level, GrantLevel::Global);
        }
        other => panic!("{other:?}"),
    }
    match p("GRANT UPDATE ON TABLE t TO CURRENT_USER") {
        Statement::Grant { level, users, .. } => {
            assert_eq!(level, GrantLevel::Table(None, "t".into()));
            assert_eq!(users, vec![UserSpec::Current]);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        p("ALTER USER USER() IDENTIFIED BY 'x'"),
        Statement::AlterUser { .. }
    ));
    assert!(matches!(p("RENAME USER a TO b, c@h TO d"), Statement::RenameUser(v) if v.len() == 2));
    assert_eq!(
        p("SHOW GRANTS FOR 'u'@'%'"),
        Statement::Show(Show::Grants(Some(named("u", "%"))))
    );
    assert_eq!(
        p("SHOW CREATE USER u"),
        Statement::Show(Show::CreateUser(named("u", "%")))
    );
}

#[test]
fn other_families() {
    assert!(matches!(
        p("KILL QUERY 5"),
        Statement::Kill {
            kind: KillKind::Query,
            ..
        }
    ));
    assert!(matches!(
        p("KILL CONNECTION 5"),
        Statement::Kill {
            kind: KillKind::Connection,
            ..
        }
    ));
    assert!(matches!(
        p("KILL 5"),
        Statement::Kill {
            kind: KillKind::Connection,
            ..
        }
    ));
    assert_eq!(p("USE `my db`"), Statement::Use("my db".into()));
    assert_eq!(
        p("SHOW FULL PROCESSLIST"),
        Statement::Show(Show::ProcessList { full: true })
    );
    assert_eq!(
        p("SHOW COUNT(*) WARNINGS"),
        Statement::Show(Show::WarningCount { errors_only: false })
    );
    assert_eq!(
        p("SHOW WARNINGS LIMIT 2, 3"),
        Statement::Show(Show::Warnings {
            errors_only: false,
            limit: Some((2, 3))
        })
    );
    assert_eq!(
        p("SHOW STATUS LIKE 'Up%'"),
        Statement::Show(Show::Status(Scope::Implicit, Filter::Like("Up%".into())))
    );
    assert!(matches!(
        p("SHOW GLOBAL VARIABLES WHERE Variable_name = 'x'"),
        Statement::Show(Show::Variables(Scope::Global, Filter::Where(_)))
    ));
    assert_eq!(
        p("START TRANSACTION READ ONLY"),
        Statement::Begin {
            read_only: Some(true)
        }
    );
    assert_eq!(
        p("ROLLBACK WORK TO SAVEPOINT sp"),
        Statement::RollbackTo("sp".into())
    );
    assert_eq!(
        p("PREPARE s FROM 'SELECT ?'"),
        Statement::Prepare {
            name: "s".into(),
            source: PrepareSource::Text("SELECT ?".into())
        }
    );
    assert_eq!(
        p("EXECUTE s USING @a, @b"),
        Statement::Execute {
            name: "s".into(),
            using: vec!["a".into(), "b".into()]
        }
    );
    assert_eq!(p("DEALLOCATE PREPARE s"), Statement::Deallocate("s".into()));
    assert!(matches!(p("DO 1, SLEEP(0)"), Statement::Do(v) if v.len() == 2));
    assert_eq!(
        p("CREATE DATABASE IF NOT EXISTS d DEFAULT CHARACTER SET = utf8mb4 COLLATE utf8mb4_bin"),
        Statement::CreateDatabase {
            name: "d".into(),
            if_not_exists: true,
            charset: Some("utf8mb4".into()),
            collation: Some("utf8mb4_bin".into())
        }
    );
}

#[test]
fn selects_name_their_columns_as_written() {
    let Statement::Select(s) = p(
        "SELECT 1+1, 'abc' AS x, CONCAT( 'a' ,'b' ), @@version_comment, _utf8mb4'z', ? FROM DUAL",
    ) else {
        panic!()
    };
    assert_eq!(
        s.names,
        vec![
            "1+1",
            "x",
            "CONCAT( 'a' ,'b' )",
            "@@version_comment",
            "z",
            "?"
        ]
    );
    let Statement::Select(s) = p("SELECT /*!40001 SQL_NO_CACHE */ 5 MOD 2, !0 INTO @a, @b") else {
        panic!()
    };
    assert_eq!(s.names, vec!["5 MOD 2", "!0"]);
    assert_eq!(s.into, vec!["a", "b"]);
}

#[test]
fn table_statements_name_their_tables() {
    assert_eq!(
        p("SELECT c FROM sbtest1 WHERE id = ?"),
        Statement::TableAccess {
            privilege: "SELECT",
            tables: vec![TableRef {
                schema: None,
                name: "sbtest1".into()
            }]
        }
    );
    assert_eq!(
        p("UPDATE sbtest.sbtest1 SET k=k+1 WHERE id=?"),
        Statement::TableAccess {
            privilege: "UPDATE",
            tables: vec![TableRef {
                schema: Some("sbtest".into()),
                name: "sbtest1".into()
            }]
        }
    );
    assert!(matches!(
        p("INSERT INTO t (a) VALUES (1)"),
        Statement::TableAccess {
            privilege: "INSERT",
            ..
        }
    ));
    assert!(matches!(
        p("DELETE FROM t WHERE id=1"),
        Statement::TableAccess {
            privilege: "DELETE",
            ..
        }
    ));
}

#[test]
fn syntax_errors_point_at_the_failing_text() {
    let e = parse_statement("SELECT 1 FROM", ParseOptions::default()).unwrap_err();
    assert_eq!(e.code(), 1064);
    let e = parse_statement("SELECT 1,\n 2 3", ParseOptions::default()).unwrap_err();
    match e {
        SqlError::Syntax { near, line } => {
            assert_eq!(near, "3");
            assert_eq!(line, 2);
        }
        other => panic!("{other:?}"),
    }
    let long = format!("SELEC {}", "x".repeat(200));
    match parse_statement(&long, ParseOptions::default()).unwrap_err() {
        SqlError::Syntax { near, .. } => assert_eq!(near.chars().count(), 80),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        parse_statement("  ", ParseOptions::default()),
        Err(SqlError::EmptyQuery)
    ));
}

#[test]
fn placeholders_are_counted_outside_strings() {
    let o = ParseOptions::default();
    assert_eq!(
        count_placeholders("SELECT ?, '?', `?`, ? /* ? */", o).unwrap(),
        2
    );
}
