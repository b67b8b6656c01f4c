//! Basalt file I/O.
//!
//! (Design note to be completed by the implementation: backends, runtime
//! selection, O_DIRECT, alignment, fault injection.)

mod aligned;
mod api;
mod error;

pub use aligned::{AlignedBuf, DIRECT_IO_ALIGN};
pub use api::{FileRef, Io, IoFile, IoKind, IoOp, IoRequest, OpenOptions};
pub use error::{IoError, IoResult};
