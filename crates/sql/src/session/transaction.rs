//! The session's transaction state.
//!
//! ```text
//!            BEGIN / START TRANSACTION            COMMIT / ROLLBACK / implicit commit
//!   idle ──────────────────────────────> active ───────────────────────────────────> idle
//!    │  SET TRANSACTION (next only)        │ SAVEPOINT s / ROLLBACK TO s / RELEASE s
//!    └─ characteristics for the next one   └─ savepoint names (innermost last)
//! ```
//!
//! This is the seam where engine transactions attach: while no statement
//! can touch a table there is nothing to undo, so `begin`, `commit`,
//! `rollback` and the savepoint calls only keep MySQL's visible state
//! (the `IN_TRANS` and `IN_TRANS_READONLY` status flags, savepoint names,
//! the one-shot `SET TRANSACTION` characteristics). When tables exist,
//! `begin` opens an engine transaction with the chosen isolation level,
//! `commit`/`rollback` end it, and savepoints map to undo positions.
//!
//! With `autocommit = 0` MySQL keeps a transaction open implicitly; it
//! becomes visible (`IN_TRANS`) only once a statement uses a
//! transactional table, so here it stays invisible, but savepoints work
//! in it as they do in MySQL.

use crate::error::{SqlError, SqlResult};

/// Transaction state of one session.
#[derive(Debug, Clone, Default)]
pub struct Transaction {
    active: bool,
    read_only: bool,
    isolation: Option<&'static str>,
    savepoints: Vec<String>,
    next_isolation: Option<&'static str>,
    next_read_only: Option<bool>,
}

impl Transaction {
    /// True between `BEGIN` and its end.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// True for a `READ ONLY` transaction.
    pub fn is_read_only(&self) -> bool {
        self.active && self.read_only
    }

    /// Isolation level the transaction runs at (`None` when idle).
    pub fn isolation(&self) -> Option<&'static str> {
        self.isolation
    }

    /// `BEGIN`: ends an active transaction first (implicit commit), then
    /// starts one with `read_only` (explicit), the one-shot
    /// characteristics, or the session defaults.
    pub fn begin(
        &mut self,
        read_only: Option<bool>,
        session_isolation: &'static str,
        session_read_only: bool,
    ) {
        self.end();
        self.active = true;
        self.read_only = read_only
            .or(self.next_read_only.take())
            .unwrap_or(session_read_only);
        self.isolation = Some(self.next_isolation.take().unwrap_or(session_isolation));
    }

    /// `COMMIT`, implicit commits, `ROLLBACK`: back to idle.
    pub fn end(&mut self) {
        self.active = false;
        self.read_only = false;
        self.isolation = None;
        self.savepoints.clear();
    }

    /// `SET TRANSACTION ...` without a scope (1568 inside a transaction).
    pub fn set_next(
        &mut self,
        isolation: Option<&'static str>,
        read_only: Option<bool>,
    ) -> SqlResult<()> {
        if self.active {
            return Err(SqlError::TransactionInProgress);
        }
        if isolation.is_some() {
            self.next_isolation = isolation;
        }
        if read_only.is_some() {
            self.next_read_only = read_only;
        }
        Ok(())
    }

    /// `SAVEPOINT name` (a name already set moves to the newest place).
    /// `in_transaction` says whether a transaction (explicit, or the
    /// implicit one of `autocommit = 0`) is open.
    pub fn savepoint(&mut self, name: &str, in_transaction: bool) {
        if !in_transaction {
            return;
        }
        self.savepoints.retain(|s| !s.eq_ignore_ascii_case(name));
        self.savepoints.push(name.to_string());
    }

    /// `ROLLBACK TO name`: savepoints set after it are forgotten.
    pub fn rollback_to(&mut self, name: &str) -> SqlResult<()> {
        match self
            .savepoints
            .iter()
            .position(|s| s.eq_ignore_ascii_case(name))
        {
            Some(i) => {
                self.savepoints.truncate(i + 1);
                Ok(())
            }
            None => Err(SqlError::NoSuchSavepoint(name.to_string())),
        }
    }

    /// `RELEASE SAVEPOINT name`: it and later ones are forgotten.
    pub fn release(&mut self, name: &str) -> SqlResult<()> {
        match self
            .savepoints
            .iter()
            .position(|s| s.eq_ignore_ascii_case(name))
        {
            Some(i) => {
                self.savepoints.truncate(i);
                Ok(())
            }
            None => Err(SqlError::NoSuchSavepoint(name.to_string())),
        }
    }

    /// Forgets savepoints (end of the implicit transaction).
    pub fn clear_savepoints(&mut self) {
        self.savepoints.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifecycle() {
        let mut t = Transaction::default();
        assert!(!t.is_active());
        t.set_next(Some("SERIALIZABLE"), Some(true)).unwrap();
        t.begin(None, "REPEATABLE-READ", false);
        assert!(t.is_active() && t.is_read_only());
        assert_eq!(t.isolation(), Some("SERIALIZABLE"));
        assert!(matches!(
            t.set_next(None, Some(false)),
            Err(SqlError::TransactionInProgress)
        ));
        t.savepoint("a", true);
        t.savepoint("b", true);
        t.rollback_to("a").unwrap();
        assert!(matches!(t.release("b"), Err(SqlError::NoSuchSavepoint(_))));
        t.release("A").unwrap();
        assert!(t.rollback_to("a").is_err());
        t.end();
        t.begin(Some(false), "READ-COMMITTED", true);
        assert!(!t.is_read_only(), "explicit READ WRITE wins");
        assert_eq!(
            t.isolation(),
            Some("READ-COMMITTED"),
            "one-shot characteristics were used up"
        );
    }
}
