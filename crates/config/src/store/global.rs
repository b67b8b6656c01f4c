//! `GlobalVars`: the server-wide values, `SET GLOBAL`, change listeners.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::show::{like_matches, VariableRow};
use super::{plan_changes, SetOutcome};
use crate::error::ConfigError;
use crate::origin::Origin;
use crate::sysvar::keys::Key;
use crate::sysvar::{find, registry, Assignment, NameSyntax, SysValue, VarIndex, VarType};

/// A change callback; receives the new value.
type Callback = Arc<dyn Fn(&SysValue) + Send + Sync>;

struct Slot {
    value: SysValue,
    origin: Origin,
}

struct Listener {
    id: u64,
    index: VarIndex,
    callback: Callback,
}

/// Identifies a listener for [`GlobalVars::unsubscribe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubscriptionId(u64);

/// The server-wide value of every variable, shared by all threads.
///
/// Created by the startup loader ([`crate::load_server_options`]) and then
/// shared as `Arc<GlobalVars>`: the storage engine reads its settings with
/// [`get`](Self::get) at startup and registers [`on_change`](Self::on_change)
/// listeners for the dynamic ones; each connection's [`super::SessionVars`]
/// copies the session-scoped values at connect; `SET GLOBAL` goes through
/// [`set`](Self::set). Session-only variables also have a slot here: it holds
/// the compiled default new sessions start from and is never shown as a
/// global value.
pub struct GlobalVars {
    slots: RwLock<Vec<Slot>>,
    writer: Mutex<()>,
    listeners: RwLock<Vec<Listener>>,
    next_listener: AtomicU64,
}

impl fmt::Debug for GlobalVars {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GlobalVars")
            .field("variables", &self.slots.read().len())
            .field("listeners", &self.listeners.read().len())
            .finish()
    }
}

impl Default for GlobalVars {
    fn default() -> Self {
        Self::new()
    }
}

impl GlobalVars {
    /// Every variable at its compiled default. The startup loader builds on
    /// this; tests and embedded uses may use it directly.
    pub fn new() -> GlobalVars {
        let slots = registry()
            .iter()
            .map(|def| Slot {
                value: SysValue::from_default(def),
                origin: Origin::Compiled,
            })
            .collect();
        GlobalVars {
            slots: RwLock::new(slots),
            writer: Mutex::new(()),
            listeners: RwLock::new(Vec::new()),
            next_listener: AtomicU64::new(1),
        }
    }

    /// The typed global value of `key`.
    ///
    /// For a session-only variable this is the default sessions start from.
    // PERF: one shared lock and a copy (a clone for text values); no lookup.
    pub fn get<T: VarType>(&self, key: Key<T>) -> T {
        let slots = self.slots.read();
        T::from_value(&slots[key.index()].value)
            .expect("key type is checked against the registry kind at compile time")
    }

    /// `@@global.name`: the global value, or 1193 if unknown, 1238 if the
    /// variable is session-only.
    pub fn value(&self, name: &str) -> Result<SysValue, ConfigError> {
        let index = resolve(name)?;
        let def = &registry()[index];
        if !def.scope.has_global() {
            return Err(ConfigError::IncorrectScope {
                name: def.name.to_string(),
                scope: "SESSION",
            });
        }
        Ok(self.value_at(index))
    }

    /// Who set the current global value of `name`.
    pub fn origin(&self, name: &str) -> Result<Origin, ConfigError> {
        Ok(self.origin_at(resolve(name)?))
    }

    pub(crate) fn value_at(&self, index: VarIndex) -> SysValue {
        self.slots.read()[index].value.clone()
    }

    pub(crate) fn origin_at(&self, index: VarIndex) -> Origin {
        self.slots.read()[index].origin.clone()
    }

    /// Stores a startup value without listeners or checks (the loader has
    /// validated it).
    pub(crate) fn store_startup(&self, index: VarIndex, value: SysValue, origin: Origin) {
        let mut slots = self.slots.write();
        slots[index] = Slot { value, origin };
    }

    /// `SET GLOBAL name = value`.
    ///
    /// Errors: 1193 unknown, 1238 read-only, 1228 session-only, then the
    /// value errors of the variable's kind. On success, listeners of every
    /// changed variable (the target and a moved companion collation or
    /// character set) are called, in that order, before this returns.
    pub fn set(&self, name: &str, value: &Assignment) -> Result<SetOutcome, ConfigError> {
        let index = resolve(name)?;
        let def = &registry()[index];
        if !def.dynamic {
            return Err(ConfigError::ReadOnly {
                name: def.name.to_string(),
            });
        }
        if !def.scope.has_global() {
            return Err(ConfigError::SessionOnly {
                name: def.name.to_string(),
            });
        }
        let _writer = self.writer.lock();
        let converted = def.convert_assignment_over(value, &self.value_at(index))?;

        let mut outcome = SetOutcome::default();
        let changes = plan_changes(
            index,
            converted,
            &value.to_error_text(),
            |other| self.value_at(other),
            &mut outcome.warnings,
        );
        {
            let mut slots = self.slots.write();
            for (i, v) in &changes {
                slots[*i] = Slot {
                    value: v.clone(),
                    origin: Origin::Dynamic,
                };
            }
        }
        for (i, v) in &changes {
            tracing::info!(variable = registry()[*i].name, value = %v, "SET GLOBAL");
            for callback in self.callbacks_for(*i) {
                callback(v);
            }
        }
        Ok(outcome)
    }

    /// Records a value the server determines itself after startup (for
    /// example the port it bound when `port = 0`, or `have_ssl` once TLS is
    /// configured). Bypasses read-only checks but not the kind: the value
    /// must be of the variable's type. No listeners are called.
    pub fn set_server_value(&self, name: &str, value: SysValue) -> Result<(), ConfigError> {
        let index = resolve(name)?;
        let def = &registry()[index];
        if !value.fits(&def.kind, def.nullable()) {
            return Err(ConfigError::WrongType {
                name: def.name.to_string(),
            });
        }
        let _writer = self.writer.lock();
        self.store_startup(index, value, Origin::Server);
        Ok(())
    }

    /// Calls `callback` with the new value after every successful
    /// `SET GLOBAL` of `name` (also when the value did not change; never
    /// for a rejected value). Fails with 1238 for a variable that cannot
    /// change at runtime and 1228 for a session-only one, since such a
    /// listener could never fire.
    ///
    /// The callback runs on the thread executing the `SET`, with the store's
    /// writer lock held: keep it short, and do not call [`Self::set`] from
    /// it.
    pub fn subscribe(
        &self,
        name: &str,
        callback: Box<dyn Fn(&SysValue) + Send + Sync>,
    ) -> Result<SubscriptionId, ConfigError> {
        let index = resolve(name)?;
        let def = &registry()[index];
        if !def.dynamic {
            return Err(ConfigError::ReadOnly {
                name: def.name.to_string(),
            });
        }
        if !def.scope.has_global() {
            return Err(ConfigError::SessionOnly {
                name: def.name.to_string(),
            });
        }
        let id = self.next_listener.fetch_add(1, Ordering::Relaxed);
        self.listeners.write().push(Listener {
            id,
            index,
            callback: Arc::from(callback),
        });
        Ok(SubscriptionId(id))
    }

    /// Typed [`subscribe`](Self::subscribe):
    /// `globals.on_change(keys::INNODB_OLD_BLOCKS_TIME, move |ms| lru.set_old_blocks_time(ms))`.
    pub fn on_change<T: VarType + 'static>(
        &self,
        key: Key<T>,
        callback: impl Fn(T) + Send + Sync + 'static,
    ) -> Result<SubscriptionId, ConfigError> {
        self.subscribe(
            key.name(),
            Box::new(move |value| {
                // The key's type matches the variable's kind (checked at
                // compile time), so the conversion always succeeds.
                if let Some(typed) = T::from_value(value) {
                    callback(typed);
                }
            }),
        )
    }

    /// Removes a listener; `false` if it was already gone.
    pub fn unsubscribe(&self, id: SubscriptionId) -> bool {
        let mut listeners = self.listeners.write();
        let before = listeners.len();
        listeners.retain(|l| l.id != id.0);
        listeners.len() != before
    }

    fn callbacks_for(&self, index: VarIndex) -> Vec<Callback> {
        self.listeners
            .read()
            .iter()
            .filter(|l| l.index == index)
            .map(|l| Arc::clone(&l.callback))
            .collect()
    }

    /// `SHOW GLOBAL VARIABLES [LIKE pattern]`: every variable with a global
    /// value, sorted by name.
    pub fn show(&self, like: Option<&str>) -> Vec<VariableRow> {
        let slots = self.slots.read();
        registry()
            .iter()
            .zip(slots.iter())
            .filter(|(def, _)| def.scope.has_global())
            .filter(|(def, _)| like.is_none_or(|p| like_matches(p, def.name)))
            .map(|(def, slot)| VariableRow {
                name: def.name,
                value: slot.value.to_string(),
            })
            .collect()
    }
}

/// Resolves a SQL variable name, or 1193.
pub(super) fn resolve(name: &str) -> Result<VarIndex, ConfigError> {
    find(name, NameSyntax::Sql).ok_or_else(|| ConfigError::UnknownSystemVariable {
        name: name.to_string(),
    })
}
