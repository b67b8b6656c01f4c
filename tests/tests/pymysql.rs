//! PyMySQL (a pure-Python client) against `basaltd`: root with an empty
//! password, a caching_sha2_password account with a password (the RSA
//! full-authentication path), parameterised queries, multi-statements and
//! error codes. Fails when PyMySQL or `cryptography` is missing (`tests/run`
//! installs them).

use std::process::Command;

use basalt_tests::Server;
use mysql::prelude::*;

const SCRIPT: &str = r#"
import sys
import pymysql
from pymysql.constants import CLIENT

port = int(sys.argv[1])

root = pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                       client_flag=CLIENT.MULTI_STATEMENTS, autocommit=True)
cur = root.cursor()
cur.execute("SET NAMES utf8mb4")
cur.execute("SELECT %s, %s, %s, %s", (1, "it's", 2.5, None))
assert cur.fetchall() == ((1, "it's", 2.5, None),), cur.fetchall()
cur.execute("SELECT CURRENT_USER(), @@version_comment")
assert cur.fetchone() == ("root@localhost", "Basalt")

# Several statements in one query, every result set readable.
cur.execute("SELECT 1; SELECT 'two'; SET @x = 3; SELECT @x + 1")
results = [cur.fetchall()]
while cur.nextset():
    results.append(cur.fetchall())
assert [list(r) for r in results] == [[(1,)], [("two",)], [], [(4,)]], results

cur.execute("CREATE USER py_sha@'%' IDENTIFIED WITH caching_sha2_password BY 'py-secret'")
cur.execute("CREATE DATABASE pydb")
cur.execute("GRANT SELECT ON pydb.* TO py_sha@'%'")

# caching_sha2_password over plain TCP: RSA full authentication, then the fast path.
for _ in range(2):
    user = pymysql.connect(host="127.0.0.1", port=port, user="py_sha", password="py-secret", database="pydb")
    c = user.cursor()
    c.execute("SELECT CURRENT_USER(), DATABASE()")
    assert c.fetchone() == ("py_sha@%", "pydb")
    c.execute("SET AUTOCOMMIT = 0")
    c.execute("SELECT @@autocommit")
    assert c.fetchone() == (0,)
    user.commit()
    try:
        c.execute("SELECT id, k, c FROM sbtest1 WHERE id = %s", (5,))
        raise AssertionError("expected an error")
    except pymysql.err.ProgrammingError as e:
        assert e.args[0] == 1146, e.args
    try:
        c.execute("SET GLOBAL max_connections = 10")
        raise AssertionError("expected an error")
    except pymysql.err.OperationalError as e:
        assert e.args[0] == 1227, e.args
    user.close()

try:
    pymysql.connect(host="127.0.0.1", port=port, user="py_sha", password="wrong")
    raise AssertionError("expected access denied")
except pymysql.err.OperationalError as e:
    assert e.args[0] == 1045, e.args

print("pymysql ok")
"#;

#[test]
fn pymysql_logs_in_queries_and_sees_mysql_errors() {
    let check = Command::new("python3")
        .args(["-c", "import pymysql, cryptography"])
        .output()
        .expect("python3 is required");
    assert!(
        check.status.success(),
        "PyMySQL and cryptography are required: python3 -m pip install pymysql cryptography (tests/run does)\n{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let server = Server::start();
    let out = Command::new("python3")
        .args(["-c", SCRIPT, &server.port.to_string()])
        .output()
        .expect("run python3");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "PyMySQL script failed:\n{stderr}\nserver log:\n{}",
        server.log()
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "pymysql ok");
    // The account PyMySQL created is visible to other clients.
    let grants: Vec<String> = server.root().query("SHOW GRANTS FOR py_sha@'%'").unwrap();
    assert_eq!(grants.len(), 2);
}
