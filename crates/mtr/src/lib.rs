//! Basalt mini-transactions, tablespace page allocation and crash recovery.
