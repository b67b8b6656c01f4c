//! Basalt benchmarks: criterion micro-benchmarks and the sysbench harness.
