//! Basalt MySQL wire protocol: packets, handshake, authentication, commands.
