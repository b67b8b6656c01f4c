//! Crash recovery against an in-memory model, over the in-memory and
//! fault-injecting I/O backends.
//!
//! * `model`: random mini-transactions, crashes at random points (also in
//!   the middle of page flushes), recovery must give exactly the state
//!   after a prefix of the committed mini-transactions that includes every
//!   acknowledged one; repeated rounds recover on top of recovered state;
//!   a small pool and a tiny recovery budget force many apply batches.
//! * `idempotence`: a crash at a random write *during* recovery, then
//!   recovery again, must reach the very state an undisturbed recovery
//!   reaches.
//! * `torn`: a torn data-page write is repaired from the doublewrite area;
//!   with `innodb_doublewrite=OFF` the same page makes recovery fail with a
//!   corruption error naming it.
//! * `startup`: clean shutdown then open finds nothing to redo,
//!   `open_or_create`, file-per-table tablespaces, refused data
//!   directories.
//!
//! Seeded tests print their seed and take `BASALT_TEST_SEED`.

mod idempotence;
mod model;
mod startup;
mod torn;
mod workload;

use std::sync::Arc;

use basalt_buf::BufConfig;
use basalt_io::{FaultPlan, FaultyIo, Io, MemIo};
use basalt_mtr::StorageConfig;

/// Settings for in-memory data directories at `/db`.
pub fn config(pool_mib: u64) -> StorageConfig {
    let mut cfg = StorageConfig::new("/db");
    cfg.buf = BufConfig::for_pool_size(pool_mib << 20);
    cfg.log.file_size = 4 << 20;
    cfg.log.buffer_size = 1 << 20;
    cfg
}

/// A fault-injecting backend over `mem` with a fresh plan.
pub fn faulty(mem: &Arc<MemIo>) -> (Arc<dyn Io>, Arc<FaultPlan>) {
    let plan = FaultPlan::new();
    let io: Arc<dyn Io> = Arc::new(FaultyIo::new(mem.clone(), plan.clone()));
    (io, plan)
}
