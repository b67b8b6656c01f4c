//! HandshakeResponse41, COM_CHANGE_USER and command-phase parsing of
//! arbitrary payloads.
#![no_main]

use basalt_protocol::command::Command;
use basalt_protocol::handshake::{ChangeUser, HandshakeResponse};
use basalt_protocol::Capabilities;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = HandshakeResponse::parse(data);
    let _ = Command::parse(data);
    if data.len() >= 4 {
        let caps = Capabilities(u32::from_le_bytes([data[0], data[1], data[2], data[3]]));
        let _ = ChangeUser::parse(&data[4..], caps);
    }
});
