//! Basalt buffer pool: frames, page hash, midpoint LRU, flush list, doublewrite.
