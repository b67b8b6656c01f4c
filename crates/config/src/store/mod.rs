//! Runtime stores: the server-wide [`GlobalVars`] and the per-connection
//! [`SessionVars`], plus `SHOW VARIABLES`.
//!
//! ```text
//!   startup (load)                    SET GLOBAL x = v
//!        |                                  |
//!        v                                  v
//!   +-----------------------------------------------+      listeners
//!   | GlobalVars   slots: RwLock<Vec<Slot>>          | ---> (buffer pool,
//!   |              writer: Mutex<()> (one SET at a   |      page cleaner,
//!   |              time, listeners run under it)     |      ...)
//!   +-----------------------------------------------+
//!        | copy of session-scoped values at connect
//!        v
//!   SessionVars (owned by one connection, no locks) <--- SET [SESSION] x = v
//! ```
//!
//! Locking: `writer` is taken first, then `slots` (briefly, to read or to
//! store), then `listeners` (to clone the callbacks). Listeners run with
//! `writer` held and no other lock, so they may read any variable but must
//! not call [`GlobalVars::set`] (that would wait on `writer` forever).
//! Because `SET GLOBAL`s are serialised by `writer`, every listener sees
//! the changes of its variable in the order they were stored.
//!
//! A `SET` goes through the same steps in both stores:
//! 1. resolve the name (aliases too) -> 1193 if unknown;
//! 2. scope and mutability checks -> 1238 / 1229 / 1228 / 1621;
//! 3. convert the assignment with the variable's typing rules -> 1231 /
//!    1232 / 1115 / 1273 / 1298, or a clamped value and a 1292 warning;
//! 4. keep ordered pairs ordered (`innodb_io_capacity` <=
//!    `innodb_io_capacity_max`) by clamping the value being set, with a 1210
//!    warning;
//! 5. move companions: a `character_set_x` change sets `collation_x` to the
//!    charset's default collation and vice versa, as MySQL does;
//! 6. store, then (global only) notify listeners of every changed variable.

mod global;
mod session;
mod show;

pub use global::{GlobalVars, SubscriptionId};
pub use session::{Qualifier, SessionVars};
pub use show::{like_matches, VariableRow};

use crate::error::SetWarning;
use crate::sysvar::charset::{default_collation_of, find_collation};
use crate::sysvar::{
    registry, Converted, SysValue, SysVarKind, VarIndex, CHARSET_COLLATION_PAIRS, ORDERED_PAIRS,
};

/// The result of a successful `SET`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetOutcome {
    /// Warnings for `SHOW WARNINGS` (empty when the value was taken as is).
    pub warnings: Vec<SetWarning>,
}

/// Steps 3 to 5 of a `SET` (see the module doc): from a converted value to
/// the list of `(variable, value)` changes to store, the target first.
/// `current` reads the value of another variable in the same store.
pub(crate) fn plan_changes(
    index: VarIndex,
    converted: Converted,
    written: &str,
    current: impl Fn(VarIndex) -> SysValue,
    warnings: &mut Vec<SetWarning>,
) -> Vec<(VarIndex, SysValue)> {
    let table = registry();
    let def = &table[index];
    if converted.adjusted {
        warnings.push(SetWarning::Truncated {
            name: def.name,
            value: written.to_string(),
        });
    }
    let mut value = converted.value;

    for &(lower, upper) in ORDERED_PAIRS {
        let (other, direction) = if index == lower {
            (upper, "higher")
        } else if index == upper {
            (lower, "lower")
        } else {
            continue;
        };
        let bound = current(other);
        let (Some(v), Some(b)) = (value.as_f64(), bound.as_f64()) else {
            continue;
        };
        let violates = if index == lower { v > b } else { v < b };
        if violates {
            warnings.push(SetWarning::Bounded {
                name: def.name,
                bound_by: table[other].name,
                direction,
                stored: bound.to_string(),
            });
            value = bound;
        }
    }

    let mut changes = vec![(index, value)];
    for &(cs_var, coll_var) in CHARSET_COLLATION_PAIRS {
        let companion = if index == cs_var {
            changes[0]
                .1
                .as_str()
                .and_then(default_collation_of)
                .map(|coll| (coll_var, coll.name))
        } else if index == coll_var {
            changes[0]
                .1
                .as_str()
                .and_then(find_collation)
                .map(|coll| (cs_var, coll.charset))
        } else {
            None
        };
        if let Some((other, name)) = companion {
            debug_assert!(matches!(
                table[other].kind,
                SysVarKind::Charset { .. } | SysVarKind::Collation
            ));
            changes.push((other, SysValue::Str(name.to_string())));
        }
    }
    changes
}
