//! Basalt redo log: log buffer, group commit, log files, checkpoints.
