//! Search keys and scratch buffers.
//!
//! A search key is a slice of key-field values (`None` = NULL), a prefix
//! of the index key, exactly what [`basalt_page::rec::RecordLayout::compare_key`]
//! takes. The hot paths build such slices on the stack from a decoded
//! record ([`with_key`]); cursors and scan bounds keep owned copies
//! ([`OwnedKey`]) that lend out the same slices. Record encoding reuses
//! per-thread buffers ([`Scratch`]) so that a point insert allocates
//! nothing once warmed up.

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};

use basalt_page::rec::RecordRef;

/// Key fields kept on the stack before spilling to the heap.
const INLINE_KEY: usize = 32;

/// Calls `f` with the first `n` fields of `rec` as a search key.
// PERF: stack array for keys of up to 32 fields; no allocation.
#[inline]
pub(crate) fn with_key<R>(
    rec: &RecordRef<'_>,
    n: usize,
    f: impl FnOnce(&[Option<&[u8]>]) -> R,
) -> R {
    if n <= INLINE_KEY {
        let mut a: [Option<&[u8]>; INLINE_KEY] = [None; INLINE_KEY];
        for (i, slot) in a.iter_mut().enumerate().take(n) {
            *slot = rec.field(i);
        }
        f(&a[..n])
    } else {
        let v: Vec<Option<&[u8]>> = (0..n).map(|i| rec.field(i)).collect();
        f(&v)
    }
}

/// An owned search key: field bytes back to back plus their boundaries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct OwnedKey {
    bytes: Vec<u8>,
    /// `(is_null, end offset in bytes)` per field.
    ends: Vec<(bool, usize)>,
}

impl OwnedKey {
    /// A copy of `key`.
    pub(crate) fn from_key(key: &[Option<&[u8]>]) -> OwnedKey {
        let mut k = OwnedKey::default();
        k.set_key(key);
        k
    }

    /// Replaces the contents with `key` (reusing the buffers).
    pub(crate) fn set_key(&mut self, key: &[Option<&[u8]>]) {
        self.bytes.clear();
        self.ends.clear();
        for f in key {
            match f {
                None => self.ends.push((true, self.bytes.len())),
                Some(b) => {
                    self.bytes.extend_from_slice(b);
                    self.ends.push((false, self.bytes.len()));
                }
            }
        }
    }

    /// Replaces the contents with the first `n` fields of `rec`.
    pub(crate) fn set_from_rec(&mut self, rec: &RecordRef<'_>, n: usize) {
        with_key(rec, n, |k| self.set_key(k));
    }

    /// Number of fields.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Field `i`.
    pub(crate) fn field(&self, i: usize) -> Option<&[u8]> {
        let (null, end) = self.ends[i];
        let start = if i == 0 { 0 } else { self.ends[i - 1].1 };
        (!null).then(|| &self.bytes[start..end])
    }

    /// Calls `f` with the key as a borrowed field slice.
    // PERF: stack array for keys of up to 32 fields; no allocation.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&[Option<&[u8]>]) -> R) -> R {
        let n = self.len();
        if n <= INLINE_KEY {
            let mut a: [Option<&[u8]>; INLINE_KEY] = [None; INLINE_KEY];
            for (i, slot) in a.iter_mut().enumerate().take(n) {
                *slot = self.field(i);
            }
            f(&a[..n])
        } else {
            let v: Vec<Option<&[u8]>> = (0..n).map(|i| self.field(i)).collect();
            f(&v)
        }
    }
}

thread_local! {
    static SCRATCH: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// Buffers larger than this are not kept for reuse.
const SCRATCH_KEEP: usize = 64 * 1024;
/// Buffers kept per thread.
const SCRATCH_POOL: usize = 4;

/// A byte buffer borrowed from a per-thread pool and returned on drop.
#[derive(Debug)]
pub(crate) struct Scratch(Vec<u8>);

impl Scratch {
    /// An empty buffer (with retained capacity when one is available).
    pub(crate) fn new() -> Scratch {
        let v = SCRATCH
            .try_with(|s| s.borrow_mut().pop())
            .ok()
            .flatten()
            .unwrap_or_default();
        Scratch(v)
    }
}

impl Deref for Scratch {
    type Target = Vec<u8>;
    fn deref(&self) -> &Vec<u8> {
        &self.0
    }
}

impl DerefMut for Scratch {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        &mut self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let mut v = std::mem::take(&mut self.0);
        if v.capacity() == 0 || v.capacity() > SCRATCH_KEEP {
            return;
        }
        v.clear();
        let _ = SCRATCH.try_with(|s| {
            let mut s = s.borrow_mut();
            if s.len() < SCRATCH_POOL {
                s.push(v);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_key_round_trips_nulls_and_empty_fields() {
        let key: [Option<&[u8]>; 4] = [Some(b"ab"), None, Some(b""), Some(b"xyz")];
        let k = OwnedKey::from_key(&key);
        assert_eq!(k.len(), 4);
        k.with(|f| assert_eq!(f, &key[..]));
        assert_eq!(k.field(1), None);
        assert_eq!(k.field(2), Some(&b""[..]));
        let wide: Vec<Vec<u8>> = (0..40u8).map(|i| vec![i; i as usize]).collect();
        let wide_key: Vec<Option<&[u8]>> = wide.iter().map(|v| Some(&v[..])).collect();
        let k = OwnedKey::from_key(&wide_key);
        k.with(|f| assert_eq!(f, &wide_key[..]));
    }

    #[test]
    fn scratch_buffers_are_reused_per_thread() {
        {
            let mut s = Scratch::new();
            s.extend_from_slice(&[1; 1000]);
        }
        let s = Scratch::new();
        assert!(s.is_empty());
        assert!(s.capacity() >= 1000, "capacity kept for reuse");
    }
}
