//! Zero-filled Arrow buffers whose allocation can fail with an error.
//!
//! A whole-column read allocates its output before any page is decoded, with a size taken from
//! the file's footer. `MutableBuffer::from_len_zeroed` aborts the process when the allocation
//! fails, and a hostile (or simply too large) file must give an error instead. Zeroed memory
//! from the allocator costs nothing up front for large sizes (fresh pages from the kernel),
//! where `try_reserve` followed by a fill would write every byte once more.

use arrow_buffer::{Buffer, MutableBuffer};
use kompakt::{Error, Result};

/// A zero-filled byte buffer being written, then frozen into an Arrow [`Buffer`].
pub(crate) struct ZeroedBuffer(MutableBuffer);

impl ZeroedBuffer {
    /// `len` zero bytes, or an error naming `what` when the memory is not available.
    pub(crate) fn new(len: usize, what: &str) -> Result<Self> {
        // Ask the allocator first, fallibly: a size it refuses is an error, not an abort. (A
        // size it grants here and refuses a moment later is possible but not a hostile file's
        // doing: the file controls the size, not the machine's memory.)
        let mut probe = Vec::<u8>::new();
        probe
            .try_reserve_exact(len)
            .map_err(|_| Error::OverLimit(format!("{what} needs {len} bytes, more than this machine can allocate")))?;
        drop(probe);
        Ok(Self(MutableBuffer::from_len_zeroed(len)))
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        self.0.as_slice_mut()
    }

    pub(crate) fn into_buffer(self) -> Buffer {
        self.0.into()
    }

    pub(crate) fn into_mutable(self) -> MutableBuffer {
        self.0
    }
}

/// `len` copies of `value` in a vector allocated fallibly: an error naming `what`, not an
/// abort, when the memory is not there. For the working buffers of decoding a page.
pub(crate) fn try_vec<T: Clone>(len: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| Error::OutOfRange {
        detail: format!(
            "{what} needs {} bytes, more than this machine can allocate",
            len.saturating_mul(std::mem::size_of::<T>())
        ),
    })?;
    v.resize(len, value);
    Ok(v)
}

/// A copy of `bytes`, allocated fallibly ([`try_vec`]).
pub(crate) fn try_copy(bytes: &[u8], what: &str) -> Result<Vec<u8>> {
    let mut v = try_vec(0, 0u8, what)?;
    v.try_reserve_exact(bytes.len()).map_err(|_| Error::OutOfRange {
        detail: format!(
            "{what} needs {} bytes, more than this machine can allocate",
            bytes.len()
        ),
    })?;
    v.extend_from_slice(bytes);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_written_and_frozen() {
        for len in [0usize, 1, 63, 64, 1 << 20] {
            let mut z = ZeroedBuffer::new(len, "test").unwrap();
            assert!(z.as_mut_slice().iter().all(|&b| b == 0));
            z.as_mut_slice().iter_mut().enumerate().for_each(|(i, b)| *b = i as u8);
            let buf = z.into_buffer();
            assert_eq!(buf.len(), len);
            assert!(buf.iter().enumerate().all(|(i, &b)| b == i as u8));
        }
    }

    #[test]
    fn impossible_sizes_are_errors() {
        assert!(ZeroedBuffer::new(usize::MAX - 100, "test").is_err());
        assert!(ZeroedBuffer::new(1 << 62, "test").is_err());
        assert!(try_vec(1 << 62, 0u8, "test").is_err());
        assert!(try_vec(1 << 60, 0u128, "test").is_err());
        assert_eq!(try_vec(3, 7u16, "test").unwrap(), vec![7, 7, 7]);
        assert_eq!(try_copy(b"abc", "test").unwrap(), b"abc");
    }
}
