//! Integration tests of the buffer pool over the in-memory and
//! fault-injecting I/O backends.

mod checkpoint;
mod common;
mod concurrency;
mod corruption;
mod doublewrite;
mod eviction;
mod flush_method;
mod pool_basic;
mod scan;
mod spaces;
