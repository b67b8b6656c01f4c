//! `basaltd`: the Basalt database server.

fn main() {}
