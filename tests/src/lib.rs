//! Basalt end-to-end tests: start basaltd and drive it with real clients.
