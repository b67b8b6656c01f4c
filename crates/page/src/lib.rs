//! Basalt's on-disk page format.
//!
//! (Design note to be completed: header, index page layout, record format,
//! redo record types and their apply functions.)

#![forbid(unsafe_code)]

pub mod header;

pub use header::{PageState, PageType};
