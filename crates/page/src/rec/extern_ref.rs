//! The 20-byte reference an externally stored field keeps in its record.

use basalt_common::{PageNo, SpaceId};

use crate::error::{PageError, Result};

/// Bytes of an [`ExternRef`] in a record.
pub const EXTERN_REF_LEN: usize = 20;

/// Where the value of an externally stored field lives.
///
/// ```text
///  0   4  space id of the first overflow page
///  4   4  page number of the first overflow page
///  8   4  byte offset of the overflow header in that page
///         (crate::overflow::OVERFLOW_HEADER today)
/// 12   8  total length of the value in bytes
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExternRef {
    /// Tablespace of the overflow chain.
    pub space: SpaceId,
    /// First page of the overflow chain.
    pub page_no: PageNo,
    /// Offset of the overflow header inside the first page.
    pub offset: u32,
    /// Length of the whole value.
    pub total_len: u64,
}

impl ExternRef {
    /// Big-endian encoding.
    pub fn to_bytes(&self) -> [u8; EXTERN_REF_LEN] {
        let mut b = [0u8; EXTERN_REF_LEN];
        b[0..4].copy_from_slice(&self.space.0.to_be_bytes());
        b[4..8].copy_from_slice(&self.page_no.to_be_bytes());
        b[8..12].copy_from_slice(&self.offset.to_be_bytes());
        b[12..20].copy_from_slice(&self.total_len.to_be_bytes());
        b
    }

    /// Decodes [`ExternRef::to_bytes`]; the slice must be exactly
    /// [`EXTERN_REF_LEN`] bytes.
    pub fn from_bytes(b: &[u8]) -> Result<ExternRef> {
        let b: &[u8; EXTERN_REF_LEN] = b.try_into().map_err(|_| {
            PageError::BadRecord(format!(
                "external reference of {} bytes, expected {EXTERN_REF_LEN}",
                b.len()
            ))
        })?;
        let u32_at = |o: usize| u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let mut len = [0u8; 8];
        len.copy_from_slice(&b[12..20]);
        Ok(ExternRef {
            space: SpaceId(u32_at(0)),
            page_no: u32_at(4),
            offset: u32_at(8),
            total_len: u64::from_be_bytes(len),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_wrong_length() {
        let r = ExternRef {
            space: SpaceId(0xdead_beef),
            page_no: 77,
            offset: 46,
            total_len: 0x0102_0304_0506_0708,
        };
        let b = r.to_bytes();
        assert_eq!(&b[4..8], &77u32.to_be_bytes());
        assert_eq!(ExternRef::from_bytes(&b), Ok(r));
        assert!(matches!(
            ExternRef::from_bytes(&b[..19]),
            Err(PageError::BadRecord(_))
        ));
    }
}
