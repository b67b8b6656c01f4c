//! Fixed page numbers and file names of the data directory.
//!
//! ```text
//! datadir/
//!   ibdata1          system tablespace (space 0)
//!   ib_logfile0..N   redo log ring
//!   <db>/<t>.ibd     one tablespace per table
//! ```
//!
//! System tablespace pages with a fixed role:
//!
//! ```text
//!   0        tablespace header (size, free limit, free list)
//!   5        transaction-system header
//!   7        data-dictionary header
//!   64..191  doublewrite area (128 pages, written sequentially)
//!   192..    allocated on demand
//! ```

use crate::PageNo;

/// File name of the system tablespace inside the data directory.
pub const SYSTEM_TABLESPACE_FILE: &str = "ibdata1";
/// Prefix of the redo log files (`ib_logfile0`, `ib_logfile1`, ...).
pub const REDO_LOG_FILE_PREFIX: &str = "ib_logfile";

/// Tablespace header page of every tablespace.
pub const FSP_HEADER_PAGE: PageNo = 0;
/// Transaction-system header page in the system tablespace.
pub const TRX_SYS_PAGE: PageNo = 5;
/// Data-dictionary header page in the system tablespace.
pub const DICT_HEADER_PAGE: PageNo = 7;
/// First page of the doublewrite area in the system tablespace.
pub const DOUBLEWRITE_FIRST_PAGE: PageNo = 64;
/// Pages in the doublewrite area.
pub const DOUBLEWRITE_PAGES: u32 = 128;
/// First page of the system tablespace that the page allocator may hand out.
pub const SYSTEM_FIRST_FREE_PAGE: PageNo = DOUBLEWRITE_FIRST_PAGE + DOUBLEWRITE_PAGES;
/// First page of a per-table tablespace that the page allocator may hand out
/// (page 0 is the tablespace header).
pub const TABLESPACE_FIRST_FREE_PAGE: PageNo = 1;
