//! Basalt B+tree: clustered and secondary indexes on buffer-pool pages.
