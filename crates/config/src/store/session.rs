//! `SessionVars`: one connection's values and the `@@x` resolution rules.

use std::sync::Arc;

use super::global::{resolve, GlobalVars};
use super::show::{like_matches, VariableRow};
use super::{plan_changes, SetOutcome};
use crate::error::ConfigError;
use crate::sysvar::keys::Key;
use crate::sysvar::{registry, Assignment, Scope, SysValue, VarIndex, VarType};

/// The scope written in front of a variable: `@@x` / `SET x` (implicit),
/// `@@session.x` / `@@local.x` / `SET SESSION x` / `SET LOCAL x`, or
/// `@@global.x` / `SET GLOBAL x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Qualifier {
    /// No scope written: reads the session value if the variable has one,
    /// else the global value; `SET` means `SET SESSION`.
    Implicit,
    /// `SESSION` or `LOCAL`.
    Session,
    /// `GLOBAL`.
    Global,
}

/// One connection's variables.
///
/// At connect (and at `COM_RESET_CONNECTION`, via [`reset`](Self::reset)),
/// every variable with a session scope gets a copy of its current global
/// value (session-only variables start from their default). Afterwards the
/// session's values change only through its own `SET`s; a later
/// `SET GLOBAL` affects new sessions only, as in MySQL. Global-only
/// variables are always read from the shared [`GlobalVars`].
///
/// Owned by the connection's thread: no locks on the session path.
#[derive(Debug)]
pub struct SessionVars {
    globals: Arc<GlobalVars>,
    /// `Some` exactly for the variables that have a session scope.
    values: Vec<Option<SysValue>>,
}

impl SessionVars {
    /// A new session: copies the session-scoped values from `globals`.
    pub fn new(globals: Arc<GlobalVars>) -> SessionVars {
        let values = Self::copy_from(&globals);
        SessionVars { globals, values }
    }

    fn copy_from(globals: &GlobalVars) -> Vec<Option<SysValue>> {
        registry()
            .iter()
            .enumerate()
            .map(|(i, def)| match def.scope {
                Scope::Global => None,
                Scope::Both => Some(globals.value_at(i)),
                Scope::Session => Some(SysValue::from_default(def)),
            })
            .collect()
    }

    /// The shared global store.
    pub fn globals(&self) -> &Arc<GlobalVars> {
        &self.globals
    }

    /// Forgets every session change: values are copied from the globals
    /// again (`COM_RESET_CONNECTION`, `COM_CHANGE_USER`).
    pub fn reset(&mut self) {
        self.values = Self::copy_from(&self.globals);
    }

    /// The typed value `@@x` reads: the session value for variables with a
    /// session scope, else the global value.
    // PERF: session path is a vector index and a copy; global-only
    // variables take the global store's shared lock.
    pub fn get<T: VarType>(&self, key: Key<T>) -> T {
        match &self.values[key.index()] {
            Some(value) => T::from_value(value)
                .expect("key type is checked against the registry kind at compile time"),
            None => self.globals.get(key),
        }
    }

    fn session_value(&self, index: VarIndex) -> SysValue {
        match &self.values[index] {
            Some(value) => value.clone(),
            None => self.globals.value_at(index),
        }
    }

    /// `@@x`, `@@session.x`, `@@local.x`, `@@global.x`.
    ///
    /// Errors: 1193 unknown; 1238 "is a GLOBAL variable" for
    /// `@@session.x` of a global-only variable; 1238 "is a SESSION variable"
    /// for `@@global.x` of a session-only variable.
    pub fn value(&self, qualifier: Qualifier, name: &str) -> Result<SysValue, ConfigError> {
        let index = resolve(name)?;
        let def = &registry()[index];
        match qualifier {
            Qualifier::Global => self.globals.value(name),
            Qualifier::Session if !def.scope.has_session() => Err(ConfigError::IncorrectScope {
                name: def.name.to_string(),
                scope: "GLOBAL",
            }),
            Qualifier::Session | Qualifier::Implicit => Ok(self.session_value(index)),
        }
    }

    /// `SET [GLOBAL | SESSION | LOCAL] name = value`.
    ///
    /// `SET GLOBAL` is forwarded to [`GlobalVars::set`]. Otherwise, errors in
    /// MySQL's order: 1193 unknown, 1238 read-only, 1229 global-only, 1621
    /// session copy read-only, then the value errors of the variable's kind.
    /// `SET SESSION x = DEFAULT` takes the current global value (the
    /// compiled default for session-only variables).
    pub fn set(
        &mut self,
        qualifier: Qualifier,
        name: &str,
        value: &Assignment,
    ) -> Result<SetOutcome, ConfigError> {
        if qualifier == Qualifier::Global {
            return self.globals.set(name, value);
        }
        let index = resolve(name)?;
        let def = &registry()[index];
        if !def.dynamic {
            return Err(ConfigError::ReadOnly {
                name: def.name.to_string(),
            });
        }
        if !def.scope.has_session() {
            return Err(ConfigError::GlobalOnly {
                name: def.name.to_string(),
            });
        }
        if def.session_read_only {
            return Err(ConfigError::SessionReadOnly {
                name: def.name.to_string(),
            });
        }
        let converted = match (value, def.scope) {
            (Assignment::Default, Scope::Both) => crate::sysvar::Converted {
                value: self.globals.value_at(index),
                adjusted: false,
            },
            _ => def.convert_assignment_over(value, &self.session_value(index))?,
        };
        let mut outcome = SetOutcome::default();
        let changes = plan_changes(
            index,
            converted,
            &value.to_error_text(),
            |other| self.session_value(other),
            &mut outcome.warnings,
        );
        for (i, v) in changes {
            self.values[i] = Some(v);
        }
        Ok(outcome)
    }

    /// `SHOW [SESSION | GLOBAL] VARIABLES [LIKE pattern]`, sorted by name.
    ///
    /// The session form lists every variable (session values where they
    /// exist, global values otherwise); the global form lists only
    /// variables that have a global value.
    pub fn show(&self, qualifier: Qualifier, like: Option<&str>) -> Vec<VariableRow> {
        if qualifier == Qualifier::Global {
            return self.globals.show(like);
        }
        registry()
            .iter()
            .enumerate()
            .filter(|(_, def)| like.is_none_or(|p| like_matches(p, def.name)))
            .map(|(i, def)| VariableRow {
                name: def.name,
                value: self.session_value(i).to_string(),
            })
            .collect()
    }
}
