//! Basalt system variables and option files.
