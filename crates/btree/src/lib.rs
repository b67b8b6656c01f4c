//! Basalt's B+tree (InnoDB's `btr/` with its page cursor): clustered and
//! secondary indexes on buffer-pool pages, every change inside a
//! mini-transaction.
//!
//! # Boundaries
//!
//! This crate knows index records (through `basalt-page`'s record layouts),
//! pages latched through `basalt-mtr` mini-transactions, and the buffer
//! pool's page latches. It knows nothing of SQL, transactions, locks or
//! versions: visibility, undo and locking are the callers' business
//! (`trx`, `lock`, `engine`); the tree stores what it is told, delete
//! marks included. It starts no thread and owns no global state.
//!
//! # Shape
//!
//! ```text
//!   level 2            [ root ]                 root page number fixed for
//!                     /   |    \                 the life of the tree
//!   level 1      [node] [node] [node]           node pointers: key → child;
//!                 / \     |      / \            node pages are not linked
//!   level 0   [leaf]⇄[leaf]⇄[leaf]⇄[leaf]⇄[leaf]  leaves doubly linked in
//!                                                key order (range scans)
//!      leaf record ─ ExternRef ─▶ [overflow]→[overflow]→…  long values
//! ```
//!
//! * **Clustered index**: leaf records are primary key, `DB_TRX_ID`,
//!   `DB_ROLL_PTR`, the other columns, and a delete mark.
//! * **Secondary index**: leaf records are the indexed columns plus the
//!   primary-key columns (all of them key fields, so every key is unique)
//!   and a delete mark; each secondary leaf page carries the largest trx id
//!   that changed it (`SetMaxTrxId`), raised by every insert, update and
//!   delete-mark that passes a larger one, inherited by split halves and
//!   merged pages.
//!
//! # Invariants
//!
//! 1. **Unique keys.** No two records of a tree have equal key fields
//!    (`RecordLayout::n_key`). A unique secondary index also keeps at most
//!    one live record per unique prefix ([`IndexKind`]), checked on insert
//!    (un-marking a record with [`BTree::delete_mark`] is a rollback and
//!    does not re-check).
//! 2. **Ranges.** A node page covering keys `[lo, hi)` holds pointers
//!    `(k0, c0) … (kn-1, cn-1)` in increasing key order; child `ci` covers
//!    `[ki, ki+1)` for `i > 0`, `c0` covers `[lo, k1)`, the last child ends
//!    at `hi`. Slot 0 of every node page carries the *min-record* flag
//!    (it compares below every key), so its stored key is never a routing
//!    key and removing a page's first child never rewrites a separator.
//!    A separator is the first key of its child when a split creates it;
//!    later it may be below the child's smallest key (that record was
//!    removed), never above. A point lookup or insert of a full key routes
//!    to the last pointer `<= key`, the only child that may hold it.
//!
//!    ```text
//!      node  [MIN→c0][k1→c1][k2→c2]      c0: [lo, k1)  c1: [k1, k2)  c2: [k2, hi)
//!    ```
//! 3. **Links.** Every leaf's `prev`/`next` name its neighbours in key
//!    order (`FIL_NULL` at the ends); node pages have no links. Leaves are
//!    linked for range scans; nobody moves sideways on upper levels, which
//!    keeps node splits and merges free of sideways latches.
//! 4. **No empty pages** except the root (an empty tree is an empty leaf
//!    root). A root with a single child is lowered (its child's records
//!    move up) whenever that child can be latched without waiting.
//! 5. **Redo.** Every byte of every page changes through `Mtr::apply`
//!    with a `RedoRecord`, so crash recovery replays exactly what ran
//!    (`tests/recovery_crash.rs` crashes and recovers the tree).
//!
//! [`BTree::validate`] checks all of these.
//!
//! # Latch order
//!
//! ```text
//!   1. tree pages top-down: a parent before its child
//!   2. within the leaf level: left before right
//!   3. overflow pages of a record: only while holding that record's leaf
//!   4. the tablespace header (page 0), then the page being allocated
//! ```
//!
//! Exceptions, each deadlock-free because it never *waits* out of order:
//!
//! * **Left neighbour of a leaf** (a removal that may unlink or merge a
//!   leaf, a unique check reaching left): `try_get` first; if busy, release
//!   the leaf, latch the neighbour, re-latch the leaf and verify the link,
//!   all under the parent's X latch. While it waits for the neighbour the
//!   thread holds no leaf latch, only ancestors of the leaf, and nobody who
//!   holds a leaf latch waits for a node latch, so no cycle can form. The
//!   parent's X latch keeps the leaf from being split, merged or freed in
//!   the gap; only its left link can change (the neighbour split), which
//!   the verification catches and the dance repeats. Backward cursor steps
//!   do the same without a parent and fall back to a search from the root.
//! * **Node siblings** (node merges) and **the root's only child** (root
//!   lowering): `try_get` only, since the thread already holds leaf
//!   latches; when busy, the node stays underfull, which is allowed.
//!
//! # Operations
//!
//! | operation      | optimistic path                 | pessimistic path (restart) |
//! |----------------|---------------------------------|----------------------------|
//! | `get`, cursors | S coupling root → leaf          | none                       |
//! | `insert`       | S to parent, X leaf; fits       | X from root, split         |
//! | `update`       | X leaf; `Replace` fits          | delete + split-insert      |
//! | `delete_mark`  | X leaf, never changes shape     | none                       |
//! | `remove`       | X leaf; stays >= 1/4 full       | X from root + neighbours, merge |
//!
//! A restart releases every page the operation latched (mini-transaction
//! savepoint) before taking the root X. Reads never take a tree-wide lock:
//! there is none.
//!
//! # Mini-transactions
//!
//! Every write takes the caller's `&mut Mtr`; the caller commits. Pages an
//! operation only looked at are released when it returns; pages it changed
//! stay X-latched until commit (that is what makes the change atomic and
//! ordered in the log). Errors that [`BTreeError::leaves_mtr_clean`] are
//! raised before any change; after any other error the caller must drop
//! the mini-transaction, which restores every page it touched.
//!
//! **Several operations in one mini-transaction** are allowed, with one
//! rule: the pages the earlier operations changed (often including the
//! tablespace header, after a split or a free) stay latched, so the later
//! operations latch tree pages *after* them, outside the order above. That
//! is safe only when no other thread writes the same tablespace meanwhile
//! (single-threaded use, recovery, bulk work on a space nobody else
//! touches). Concurrent writers use one mini-transaction per operation.
//!
//! **Across trees**, a thread may hold latches of one tree while it
//! *reads* another (a secondary-index cursor looking up the clustered
//! record); writes to different trees go through different
//! mini-transactions, so no writer holds one tree's pages while waiting
//! for another's.
//!
//! # Long values
//!
//! Fields are moved to overflow chains, longest first, until the record
//! fits half a page (like InnoDB's DYNAMIC format). Chains are written in
//! committed mini-transactions of their own before the record (at most
//! [`chain_pages_per_mtr`] pages each), so values of any size work (the
//! tests store 16 MiB and, with `--ignored`, 64 MiB); a crash between the
//! chain and the record leaks the chain's pages. Updating or removing a
//! record frees its old chains in the caller's mini-transaction. Readers
//! get either the stored record ([`OwnedRecord`], with [`ExternRef`]s) or
//! the materialised [`Row`]. Details in the `external` module.
//!
//! [`ExternRef`]: basalt_page::rec::ExternRef
//!
//! # Modules
//!
//! `tree` (handle, kinds, counters, page checks), `read` (point lookups),
//! `cursor` (range scans), `latch` (write descents), `insert`, `split`,
//! `modify` (update, delete mark), `remove`, `merge`, `external`
//! (overflow chains), `bulk` (sorted build), `validate`, `drop`.
//!
//! # Tests
//!
//! Unit tests sit beside the code. `tests/` holds the model test against a
//! `BTreeMap` (splits, merges, height up and down, long values, small
//! pool), concurrent readers with a writer and concurrent disjoint
//! writers (with a deadlock watchdog), fill factors, bulk load versus
//! one-by-one inserts, overflow-page reuse, abort safety and a file-backed
//! run, and a crash test (`*_crash`) that recovers the tree after power
//! loss. Random tests print their seed and take `BASALT_TEST_SEED=<u64>`;
//! `BASALT_BTREE_OPS=<n>` sets their operation counts (defaults keep
//! `cargo test -p basalt-btree` under a minute in debug builds); the 64 MiB
//! value test is `#[ignore]`d (`cargo test -p basalt-btree -- --ignored`).
//!
//! # Threads
//!
//! None. Every operation runs on the calling thread; the only waits are
//! page latches (in the order above), buffer-pool reads, and the log's
//! free-space check when a mini-transaction starts.

#![forbid(unsafe_code)]

mod bulk;
mod cursor;
mod drop;
mod error;
mod external;
mod insert;
mod key;
mod latch;
mod merge;
mod modify;
mod read;
mod record;
mod remove;
mod split;
mod tree;
mod validate;

pub use bulk::{BulkOptions, BulkRecord};
pub use cursor::Cursor;
pub use error::{BTreeError, Result};
pub use external::{chain_pages_per_mtr, CHAIN_PAGES_MAX_PER_MTR};
pub use record::{OwnedRecord, Row};
pub use tree::{
    BTree, CounterSnapshot, IndexKind, TreeCounters, MAX_NODE_PTR_LEN, MERGE_MAX_FILL,
    MERGE_THRESHOLD,
};
pub use validate::TreeStats;
