//! Feeds arbitrary bytes to the packet reader as a client stream: it must
//! return packets within the limit or an error, never panic or over-allocate.
#![no_main]

use basalt_protocol::packet::PacketReader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&limit, stream)) = data.split_first() else {
        return;
    };
    let max = usize::from(limit) * 64;
    let mut reader = PacketReader::new(stream);
    let mut payload = Vec::new();
    while reader.read(&mut payload, max).is_ok() {
        assert!(payload.len() <= max);
    }
});
