//! Integration tests of basalt-io, one binary (faster to build): the same
//! conformance and batch suites over every backend, O_DIRECT rules and
//! fallback, MemIo's crash model, FaultyIo's fault plans, selection.
//!
//! Environment: `BASALT_TEST_SEED` replays a random test;
//! `BASALT_ALLOW_NO_URING=1` accepts a kernel without io_uring;
//! `BASALT_NO_DIRECT_DIR` / `BASALT_ALLOW_NO_RAMFS=1` steer the O_DIRECT
//! fallback test (see `direct.rs`).

mod batch;
mod common;
mod conformance;
mod direct;
mod faulty;
mod mem;
mod select;
