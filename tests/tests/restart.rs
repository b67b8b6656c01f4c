//! Accounts, grants and schemata must survive a restart.
//!
//! This needs the durable `AclStore` (accounts in the system tablespace,
//! implemented by the catalog) to be connected in `basaltd`'s startup. Until
//! it is, the server keeps them in memory only and this test FAILS on
//! purpose: it is the acceptance test for that connection.

use std::time::Duration;

use basalt_tests::{server_error, Server, Started};
use mysql::prelude::*;

#[test]
fn accounts_grants_and_schemata_survive_a_restart() {
    let server = Server::start();
    let mut root = server.root();
    root.query_drop("CREATE USER keeper@'%' IDENTIFIED BY 'kept'")
        .unwrap();
    root.query_drop("CREATE DATABASE kept_db").unwrap();
    root.query_drop("GRANT SELECT ON kept_db.* TO keeper@'%'")
        .unwrap();
    root.query_drop("DROP USER IF EXISTS nobody").unwrap();
    let datadir = server.datadir.clone();
    let tmp = server.tempdir();
    let (status, _) = server.terminate(Duration::from_secs(30));
    assert!(status.success());

    let again = match Server::launch(&datadir, &[], tmp) {
        Started::Ready(s) => s,
        Started::Exited { output, .. } => panic!("restart failed:\n{output}"),
    };
    let mut keeper = match mysql::Conn::new(again.opts("keeper", "kept")) {
        Ok(c) => c,
        Err(e) => panic!(
            "the account created before the restart is gone ({:?}): basaltd has no durable AclStore connected yet",
            server_error(e)
        ),
    };
    keeper.query_drop("USE kept_db").unwrap();
    let grants: Vec<String> = keeper.query("SHOW GRANTS").unwrap();
    assert_eq!(
        grants,
        vec![
            "GRANT USAGE ON *.* TO `keeper`@`%`".to_string(),
            "GRANT SELECT ON `kept_db`.* TO `keeper`@`%`".to_string()
        ]
    );
    let mut root = again.root();
    let dbs: Vec<String> = root.query("SHOW DATABASES").unwrap();
    assert_eq!(dbs, vec!["kept_db".to_string()]);
}
