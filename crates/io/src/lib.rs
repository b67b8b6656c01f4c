//! Basalt file I/O.
//!
//! (Design note to be completed by the implementation: backends, runtime
//! selection, O_DIRECT, alignment, fault injection.)

mod api;

pub use api::{FileRef, Io, IoFile, IoKind, IoOp, IoRequest, OpenOptions};
