//! Bounds-checked decoding of payload fields and the matching encoders.
//!
//! Every read goes through [`Decoder`], which checks the remaining length
//! before touching a byte and returns [`ProtocolError::Truncated`] instead of
//! panicking or indexing out of range. Lengths read from the wire are compared
//! with what is actually left in the payload before anything is sliced or
//! allocated.

use crate::error::ProtocolError;

/// A cursor over one packet payload.
#[derive(Debug, Clone)]
pub struct Decoder<'a> {
    buf: &'a [u8],
}

impl<'a> Decoder<'a> {
    /// Starts decoding `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Decoder { buf }
    }

    /// Bytes not consumed yet.
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }

    /// True when every byte was consumed.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The unconsumed bytes, without consuming them.
    pub fn peek_rest(&self) -> &'a [u8] {
        self.buf
    }

    /// The next byte, without consuming it.
    pub fn peek_u8(&self) -> Option<u8> {
        self.buf.first().copied()
    }

    /// Consumes `n` bytes.
    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], ProtocolError> {
        if n > self.buf.len() {
            return Err(ProtocolError::Truncated { what });
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }

    /// Consumes everything left (`string<EOF>`).
    pub fn take_rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.buf)
    }

    /// Skips `n` bytes.
    pub fn skip(&mut self, n: usize, what: &'static str) -> Result<(), ProtocolError> {
        self.take(n, what).map(|_| ())
    }

    /// `int<1>`.
    pub fn u8(&mut self, what: &'static str) -> Result<u8, ProtocolError> {
        Ok(self.take(1, what)?[0])
    }

    /// `int<2>`, little endian.
    pub fn u16(&mut self, what: &'static str) -> Result<u16, ProtocolError> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    /// `int<3>`, little endian.
    pub fn u24(&mut self, what: &'static str) -> Result<u32, ProtocolError> {
        let b = self.take(3, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], 0]))
    }

    /// `int<4>`, little endian.
    pub fn u32(&mut self, what: &'static str) -> Result<u32, ProtocolError> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// `int<8>`, little endian.
    pub fn u64(&mut self, what: &'static str) -> Result<u64, ProtocolError> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// `int<lenenc>`. Returns `None` for the NULL marker `0xFB`.
    pub fn lenenc_int_or_null(&mut self, what: &'static str) -> Result<Option<u64>, ProtocolError> {
        let first = self.u8(what)?;
        Ok(Some(match first {
            0..=0xFA => u64::from(first),
            0xFB => return Ok(None),
            0xFC => u64::from(self.u16(what)?),
            0xFD => u64::from(self.u24(what)?),
            0xFE => self.u64(what)?,
            0xFF => return Err(ProtocolError::Malformed { what }),
        }))
    }

    /// `int<lenenc>`; the NULL marker is an error here.
    pub fn lenenc_int(&mut self, what: &'static str) -> Result<u64, ProtocolError> {
        self.lenenc_int_or_null(what)?
            .ok_or(ProtocolError::Malformed { what })
    }

    /// `string<lenenc>`: the announced length must fit in what is left.
    pub fn lenenc_bytes(&mut self, what: &'static str) -> Result<&'a [u8], ProtocolError> {
        let len = self.lenenc_int(what)?;
        let len = usize::try_from(len).map_err(|_| ProtocolError::Truncated { what })?;
        self.take(len, what)
    }

    /// `string<NUL>`: bytes up to (not including) the next NUL, which is consumed.
    pub fn nul_bytes(&mut self, what: &'static str) -> Result<&'a [u8], ProtocolError> {
        let pos = self
            .buf
            .iter()
            .position(|&b| b == 0)
            .ok_or(ProtocolError::Truncated { what })?;
        let s = &self.buf[..pos];
        self.buf = &self.buf[pos + 1..];
        Ok(s)
    }

    /// `string<NUL>` that may also end at the end of the payload (some clients
    /// omit the final NUL of the last field).
    pub fn nul_bytes_or_rest(&mut self) -> &'a [u8] {
        match self.buf.iter().position(|&b| b == 0) {
            Some(pos) => {
                let s = &self.buf[..pos];
                self.buf = &self.buf[pos + 1..];
                s
            }
            None => self.take_rest(),
        }
    }
}

/// Decodes bytes as UTF-8, mapping failure to a protocol error.
pub fn utf8<'a>(bytes: &'a [u8], what: &'static str) -> Result<&'a str, ProtocolError> {
    std::str::from_utf8(bytes).map_err(|_| ProtocolError::Malformed { what })
}

/// Appends `int<lenenc>`.
pub fn put_lenenc_int(out: &mut Vec<u8>, v: u64) {
    if v < 251 {
        out.push(v as u8);
    } else if v < 1 << 16 {
        out.push(0xFC);
        out.extend_from_slice(&(v as u16).to_le_bytes());
    } else if v < 1 << 24 {
        out.push(0xFD);
        out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xFE);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

/// Appends `string<lenenc>`.
pub fn put_lenenc_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_lenenc_int(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// Appends `string<NUL>`.
pub fn put_nul_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(b);
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_int_round_trips_at_every_width_boundary() {
        for v in [
            0u64,
            250,
            251,
            0xFFFF,
            0x1_0000,
            0xFF_FFFF,
            0x100_0000,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_lenenc_int(&mut out, v);
            let expected_len = match v {
                0..=250 => 1,
                251..=0xFFFF => 3,
                0x1_0000..=0xFF_FFFF => 4,
                _ => 9,
            };
            assert_eq!(out.len(), expected_len, "width of {v}");
            let mut d = Decoder::new(&out);
            assert_eq!(d.lenenc_int("v").unwrap(), v);
            assert!(d.is_empty());
        }
    }

    #[test]
    fn truncated_fields_are_errors_not_panics() {
        for bytes in [
            &[0xFCu8][..],
            &[0xFC, 1],
            &[0xFD, 1, 2],
            &[0xFE, 1, 2, 3, 4, 5, 6, 7],
        ] {
            assert!(matches!(
                Decoder::new(bytes).lenenc_int("x"),
                Err(ProtocolError::Truncated { .. })
            ));
        }
        // A string that announces more bytes than the payload holds.
        assert!(Decoder::new(&[5, b'a', b'b']).lenenc_bytes("s").is_err());
        // A huge announced length must not allocate or overflow.
        let mut huge = vec![0xFE];
        huge.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(Decoder::new(&huge).lenenc_bytes("s").is_err());
        assert!(Decoder::new(b"abc").nul_bytes("s").is_err());
        assert!(Decoder::new(&[0xFF]).lenenc_int("x").is_err());
        assert_eq!(Decoder::new(&[0xFB]).lenenc_int_or_null("x").unwrap(), None);
    }

    #[test]
    fn nul_terminated_strings_stop_at_the_first_nul() {
        let mut d = Decoder::new(b"root\0db\0rest");
        assert_eq!(d.nul_bytes("u").unwrap(), b"root");
        assert_eq!(d.nul_bytes("d").unwrap(), b"db");
        assert_eq!(d.nul_bytes_or_rest(), b"rest");
        assert!(d.is_empty());
    }
}
