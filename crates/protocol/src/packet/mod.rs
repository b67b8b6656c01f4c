//! Packet layer: framing over tokio streams and bounds-checked field codecs.
//!
//! [`PacketReader`] turns an `AsyncRead` into logical packets (joining
//! 16 MiB chunks, enforcing `max_allowed_packet`, checking sequence ids);
//! [`PacketBuf`] builds framed output; [`Decoder`] reads fields out of a
//! payload and never indexes out of range.

mod codec;
mod framing;

pub use codec::{put_lenenc_bytes, put_lenenc_int, put_nul_bytes, utf8, Decoder};
pub use framing::{PacketBuf, PacketReader, PacketStart, MAX_CHUNK};
