//! Basalt's shared vocabulary.
//!
//! Every other crate speaks in these types, so they live at the bottom of the
//! dependency graph and depend on nothing of ours:
//!
//! * [`Lsn`]: a position in the redo stream. Totally ordered, monotonically
//!   growing, never reused. `Lsn::ZERO` means "never modified".
//! * [`SpaceId`] + page number = [`PageId`]: the address of a 16 KiB page.
//!   Space 0 is the system tablespace (`ibdata1`).
//! * [`TrxId`] (48 bits on disk) and [`RollPtr`] (56 bits on disk): the
//!   clustered-index system columns `DB_TRX_ID` and `DB_ROLL_PTR`.
//! * [`IndexId`]: identifies a B+tree; stamped on every index page.
//! * [`like`]: the SQL `LIKE` matcher, shared by the `LIKE` operator and
//!   the `SHOW ... LIKE` filters.
//!
//! Rule: this crate holds plain data and pure functions only. No I/O, no
//! threads, no knowledge of pages beyond their size. The one exception is
//! behind the `test-support` feature, which only dev-dependencies turn on:
//! `test_support`, the seed of randomised tests (`BASALT_TEST_SEED`).

#![forbid(unsafe_code)]

mod ids;

pub use ids::{IndexId, Lsn, PageId, PageNo, RollPtr, SpaceId, TrxId, FIL_NULL, PAGE_SIZE};
pub mod layout;
pub mod like;
#[cfg(feature = "test-support")]
pub mod test_support;
