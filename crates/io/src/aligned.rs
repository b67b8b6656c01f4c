//! Heap buffers aligned for O_DIRECT.

use std::alloc::{alloc_zeroed, dealloc, handle_alloc_error, Layout};
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Alignment O_DIRECT needs for buffers, offsets and lengths on every
/// filesystem we run on (the largest logical block size in use).
pub const DIRECT_IO_ALIGN: usize = 4096;

/// A zero-initialised, fixed-length heap buffer whose start is aligned to
/// [`DIRECT_IO_ALIGN`] (or a larger power of two).
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    layout: Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively (like Box<[u8]>); the
// raw pointer is never shared outside the borrow rules of Deref/DerefMut.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared access only hands out `&[u8]`, which is Sync.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes aligned to [`DIRECT_IO_ALIGN`].
    pub fn zeroed(len: usize) -> AlignedBuf {
        AlignedBuf::with_alignment(len, DIRECT_IO_ALIGN)
    }

    /// A zeroed buffer of `len` bytes aligned to `align` (a power of two).
    pub fn with_alignment(len: usize, align: usize) -> AlignedBuf {
        let layout = Layout::from_size_align(len.max(1), align).expect("valid buffer layout");
        // SAFETY: the layout has a non-zero size (len.max(1)).
        let raw = unsafe { alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(raw) else {
            handle_alloc_error(layout)
        };
        AlignedBuf { ptr, len, layout }
    }

    /// A zero-length buffer that owns no allocation (the cheap placeholder
    /// left behind when a buffer is moved out of a request).
    pub fn empty() -> AlignedBuf {
        // A zero-size layout marks "no allocation"; Drop skips dealloc for it.
        // The pointer is a non-null, DIRECT_IO_ALIGN-aligned address that is
        // never dereferenced (zero-length slices only).
        let layout = Layout::from_size_align(0, DIRECT_IO_ALIGN)
            .expect("DIRECT_IO_ALIGN is a non-zero power of two");
        let ptr = NonNull::new(std::ptr::without_provenance_mut::<u8>(DIRECT_IO_ALIGN))
            .expect("DIRECT_IO_ALIGN is non-zero");
        AlignedBuf {
            ptr,
            len: 0,
            layout,
        }
    }

    /// True when the buffer's start is aligned to [`DIRECT_IO_ALIGN`].
    /// Always true for buffers made by this type; exists so callers can
    /// assert it when a buffer came from elsewhere.
    pub fn is_direct_aligned(&self) -> bool {
        self.ptr.as_ptr() as usize % DIRECT_IO_ALIGN == 0
    }

    /// A buffer holding a copy of `data`.
    pub fn copy_from(data: &[u8]) -> AlignedBuf {
        let mut b = AlignedBuf::zeroed(data.len());
        b.copy_from_slice(data);
        b
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: ptr points to an initialised allocation of layout.size()
        // bytes (zeroed at creation) that lives as long as self; the caller
        // asked for at least `len` bytes, and len <= layout.size(). A
        // zero-length request allocates 1 byte; we expose exactly len bytes.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len_bytes()) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in deref; &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len_bytes()) }
    }
}

impl AlignedBuf {
    fn len_bytes(&self) -> usize {
        self.len
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.layout.size() == 0 {
            // `empty()`: nothing was allocated.
            return;
        }
        // SAFETY: ptr was allocated with exactly this layout and is freed once.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

impl Default for AlignedBuf {
    /// The empty buffer (no allocation); lets `std::mem::take` move a buffer
    /// out of a request cheaply.
    fn default() -> AlignedBuf {
        AlignedBuf::empty()
    }
}

impl Clone for AlignedBuf {
    fn clone(&self) -> AlignedBuf {
        let mut b = AlignedBuf::with_alignment(self.len(), self.layout.align());
        b.copy_from_slice(self);
        b
    }
}

impl fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "AlignedBuf({} bytes, align {})",
            self.len(),
            self.layout.align()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_zeroed() {
        for len in [1, 512, 4096, 16384, 100_000] {
            let b = AlignedBuf::zeroed(len);
            assert_eq!(b.as_ptr() as usize % DIRECT_IO_ALIGN, 0);
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0));
        }
        let b = AlignedBuf::with_alignment(16384, 16384);
        assert_eq!(b.as_ptr() as usize % 16384, 0);
    }

    #[test]
    fn empty_buffer_owns_nothing_and_drops_cleanly() {
        let mut b = AlignedBuf::empty();
        assert_eq!(b.len(), 0);
        assert!(b.is_direct_aligned());
        assert!(b.is_empty());
        let taken = std::mem::take(&mut b);
        assert_eq!(taken.len(), 0);
        let c = taken.clone();
        assert_eq!(c.len(), 0);
        let mut full = AlignedBuf::copy_from(&[7u8; 4096]);
        let moved = std::mem::take(&mut full);
        assert_eq!(full.len(), 0);
        assert!(moved.iter().all(|&x| x == 7));
    }

    #[test]
    fn copy_and_clone_keep_contents() {
        let b = AlignedBuf::copy_from(b"basalt");
        assert_eq!(&b[..], b"basalt");
        assert_eq!(&b.clone()[..], b"basalt");
    }
}
