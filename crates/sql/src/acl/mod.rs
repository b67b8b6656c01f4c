//! Accounts and privileges (MySQL's access control).
//!
//! ```text
//!   login: (user, client IP) ── AclCache::match_account ──> account (user, host pattern)
//!                                                              │
//!   SecurityContext { user, host (client), priv_user, priv_host (the account) }
//!                                                              │
//!   every statement ── check_global_any / check_db_access / check_table ──> Ok | 1227 / 1044 / 1142
//! ```
//!
//! * [`host`]: host patterns and MySQL's account ordering (`localhost`
//!   means the loopback addresses, as Basalt listens on TCP only).
//! * [`privilege`]: privilege names, bits and grant levels.
//! * [`store`]: the [`AclStore`] trait the catalog implements to make
//!   accounts, grants and schemata durable.
//! * [`cache`]: [`AclCache`], the in-memory tables and every change to
//!   them (write-through to the store).
//!
//! Privileges are checked against the live tables on every statement, so
//! `GRANT` and `REVOKE` take effect for connected sessions at their next
//! statement (MySQL applies global changes only at the next login; Basalt
//! is stricter and simpler). Schema grants may use `%`/`_` wildcards as
//! in MySQL; table grants name one table.
//!
//! Bootstrap: a data directory whose store is empty gets `root@localhost`
//! with every privilege, `WITH GRANT OPTION`, and an empty password under
//! `caching_sha2_password` (MySQL 8.0's default plugin; clients log in
//! with an empty password without the RSA exchange).

pub mod cache;
pub mod catalog_store;
pub mod host;
pub mod privilege;
pub mod store;

use basalt_protocol::auth::{caching_sha2_password_hash, native_password_hash};
use basalt_protocol::AuthPlugin;

pub use cache::{account_text, AclCache, Level};
pub use catalog_store::CatalogAclStore;
pub use privilege::{GrantScope, Privileges};
pub use store::{
    AccountRecord, AclChange, AclSnapshot, AclStore, DbGrantRecord, SchemaRecord, TableGrantRecord,
};

use crate::error::{SqlError, SqlResult};

/// Who a session is: the login and the account it matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecurityContext {
    /// User name the client logged in with (`USER()`).
    pub user: String,
    /// Client host (IP address).
    pub host: String,
    /// Matched account's user (`CURRENT_USER()`).
    pub priv_user: String,
    /// Matched account's host pattern.
    pub priv_host: String,
}

impl SecurityContext {
    /// `USER()`: `user@client-host`.
    pub fn user_text(&self) -> String {
        format!("{}@{}", self.user, self.host)
    }

    /// `CURRENT_USER()`: `user@host-pattern`.
    pub fn current_user_text(&self) -> String {
        format!("{}@{}", self.priv_user, self.priv_host)
    }
}

/// The plugin called `name`, or 1524.
pub fn plugin_by_name(name: &str) -> SqlResult<AuthPlugin> {
    AuthPlugin::from_name(name.to_ascii_lowercase().as_bytes())
        .ok_or_else(|| SqlError::UnknownPlugin(name.to_string()))
}

/// The stored authentication string of `password` under `plugin` (empty
/// for an empty password).
pub fn hash_password(plugin: AuthPlugin, password: &str) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    match plugin {
        AuthPlugin::NativePassword => native_password_hash(password),
        AuthPlugin::CachingSha2Password => caching_sha2_password_hash(password),
    }
}

/// A stored string given with `IDENTIFIED WITH plugin AS '...'`, checked
/// and converted to the stored form (1827 when malformed).
pub fn stored_from_text(plugin: AuthPlugin, given: &[u8]) -> SqlResult<Vec<u8>> {
    if given.is_empty() {
        return Ok(Vec::new());
    }
    match plugin {
        AuthPlugin::NativePassword => {
            // '*' + 40 hex digits of SHA1(SHA1(password)).
            let text = std::str::from_utf8(given).map_err(|_| SqlError::BadPasswordHash)?;
            let hex = text.strip_prefix('*').ok_or(SqlError::BadPasswordHash)?;
            if hex.len() != 40 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(SqlError::BadPasswordHash);
            }
            Ok((0..20)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap_or(0))
                .collect())
        }
        AuthPlugin::CachingSha2Password => {
            // $A$005$ + 20-byte salt + 43-character digest.
            if given.len() != 70 || !given.starts_with(b"$A$") {
                return Err(SqlError::BadPasswordHash);
            }
            Ok(given.to_vec())
        }
    }
}

/// How `SHOW CREATE USER` prints a stored string.
pub fn stored_as_text(plugin: AuthPlugin, stored: &[u8]) -> Option<String> {
    if stored.is_empty() {
        return None;
    }
    Some(match plugin {
        AuthPlugin::NativePassword => {
            let hex: String = stored.iter().map(|b| format!("{b:02X}")).collect();
            format!("'*{hex}'")
        }
        AuthPlugin::CachingSha2Password => {
            let hex: String = stored.iter().map(|b| format!("{b:02X}")).collect();
            format!("0x{hex}")
        }
    })
}

/// `name` quoted with backticks (doubling inner backticks).
pub fn quote_ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// The rows of `SHOW GRANTS FOR user@host` (empty when no such account).
pub fn show_grants(snap: &AclSnapshot, user: &str, host: &str) -> Option<Vec<String>> {
    let account = snap
        .accounts
        .iter()
        .find(|a| a.user == user && a.host.eq_ignore_ascii_case(host))?;
    let to = format!(
        "{}@{}",
        quote_ident(&account.user),
        quote_ident(&account.host)
    );
    let with_go = |p: Privileges| {
        if p.contains(Privileges::GRANT_OPTION) {
            " WITH GRANT OPTION"
        } else {
            ""
        }
    };
    let list = |p: Privileges, scope: GrantScope| -> String {
        let names = p.names();
        if names.is_empty() {
            return "USAGE".to_string();
        }
        let all = Privileges::all_at(scope);
        let statics = Privileges(
            all.0 & !Privileges::SYSTEM_VARIABLES_ADMIN.0 & !Privileges::CONNECTION_ADMIN.0,
        );
        if p.contains(statics) {
            "ALL PRIVILEGES".to_string()
        } else {
            names.join(", ")
        }
    };
    let mut rows = Vec::new();
    let g = account.privileges;
    rows.push(format!(
        "GRANT {} ON *.* TO {to}{}",
        list(g, GrantScope::Global),
        with_go(g)
    ));
    let dynamic = g.dynamic_names();
    if !dynamic.is_empty() {
        rows.push(format!(
            "GRANT {} ON *.* TO {to}{}",
            dynamic.join(","),
            with_go(g)
        ));
    }
    let mut dbs: Vec<&DbGrantRecord> = snap
        .db_grants
        .iter()
        .filter(|d| d.user == account.user && d.host == account.host)
        .collect();
    dbs.sort_by(|a, b| a.db.cmp(&b.db));
    for d in dbs {
        rows.push(format!(
            "GRANT {} ON {}.* TO {to}{}",
            list(d.privileges, GrantScope::Database),
            quote_ident(&d.db),
            with_go(d.privileges)
        ));
    }
    let mut tables: Vec<&TableGrantRecord> = snap
        .table_grants
        .iter()
        .filter(|t| t.user == account.user && t.host == account.host)
        .collect();
    tables.sort_by(|a, b| (&a.db, &a.table).cmp(&(&b.db, &b.table)));
    for t in tables {
        rows.push(format!(
            "GRANT {} ON {}.{} TO {to}{}",
            list(t.privileges, GrantScope::Table),
            quote_ident(&t.db),
            quote_ident(&t.table),
            with_go(t.privileges)
        ));
    }
    Some(rows)
}

/// The text of `SHOW CREATE USER`.
pub fn show_create_user(account: &AccountRecord) -> String {
    let mut s = format!(
        "CREATE USER {}@{} IDENTIFIED WITH '{}'",
        quote_ident(&account.user),
        quote_ident(&account.host),
        account.plugin.name()
    );
    if let Some(text) = stored_as_text(account.plugin, &account.auth_string) {
        s.push_str(" AS ");
        s.push_str(&text);
    }
    s.push_str(
        " REQUIRE NONE PASSWORD EXPIRE DEFAULT ACCOUNT UNLOCK PASSWORD HISTORY DEFAULT \
         PASSWORD REUSE INTERVAL DEFAULT PASSWORD REQUIRE CURRENT DEFAULT",
    );
    s
}

#[cfg(test)]
mod tests;
