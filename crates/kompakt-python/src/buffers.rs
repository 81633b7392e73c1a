//! Python buffers as Rust slices, without copying.
//!
//! This is the only module with `unsafe` code: turning the pointer of a buffer that Python
//! exports into a slice.

use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::{PyBufferError, PyTypeError};
use pyo3::prelude::*;

/// A C-contiguous buffer exported by a Python object (bytes, bytearray, memoryview, numpy
/// array, ...), held for as long as this value lives.
pub struct Buffer {
    inner: PyUntypedBuffer,
}

impl Buffer {
    /// Borrows the buffer of `obj`; it must be C-contiguous.
    pub fn get(obj: &Bound<'_, PyAny>) -> PyResult<Buffer> {
        let inner = PyUntypedBuffer::get(obj).map_err(|_| {
            PyTypeError::new_err(format!(
                "expected a bytes-like object (bytes, bytearray, memoryview, numpy array), got {}",
                obj.get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_else(|_| "?".into())
            ))
        })?;
        if !inner.is_c_contiguous() {
            return Err(PyBufferError::new_err(
                "the buffer is not C-contiguous; copy it first (numpy.ascontiguousarray or bytes(...))",
            ));
        }
        Ok(Buffer { inner })
    }

    /// Bytes per element (8 for float64 arrays, 1 for bytes).
    pub fn item_size(&self) -> usize {
        self.inner.item_size()
    }

    pub fn len(&self) -> usize {
        self.inner.len_bytes()
    }

    pub fn as_slice(&self) -> &[u8] {
        let len = self.len();
        if len == 0 {
            return &[];
        }
        // SAFETY: `inner` holds the export (PyObject_GetBuffer) until it is dropped, so the
        // exporter keeps `buf_ptr()..+len_bytes()` allocated for the lifetime of `&self`; it is
        // C-contiguous (checked in `get`), so those `len` bytes are exactly the data; `u8` has
        // no invalid bit patterns. Nothing in this crate writes through another view of the
        // same memory while the slice lives (`FileReader` refuses an output buffer that
        // overlaps its in-memory input). The GIL may be released while the slice is in use:
        // as with every consumer of the buffer protocol that does so (hashlib, zlib,
        // zstandard), the caller must not write the object meanwhile, from another thread or
        // from a file object's callback; that is the documented contract of every function
        // taking a buffer. Resizing is refused by Python itself while an export is held.
        unsafe { std::slice::from_raw_parts(self.inner.buf_ptr() as *const u8, len) }
    }
}

/// A C-contiguous, writable buffer exported by a Python object.
pub struct WritableBuffer(Buffer);

impl WritableBuffer {
    /// Borrows the buffer of `obj` for writing; it must be C-contiguous and writable.
    pub fn get(obj: &Bound<'_, PyAny>) -> PyResult<WritableBuffer> {
        let buf = Buffer::get(obj)?;
        if buf.inner.readonly() {
            return Err(PyTypeError::new_err(
                "the buffer is read-only; pass a writable one (bytearray, numpy array, memoryview of them)",
            ));
        }
        Ok(WritableBuffer(buf))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        let len = self.len();
        if len == 0 {
            return &mut [];
        }
        // SAFETY: as in `Buffer::as_slice`, plus: the exporter declared the memory writable
        // (checked in `get`), and `&mut self` makes this the only slice over it on the Rust
        // side for its lifetime.
        unsafe { std::slice::from_raw_parts_mut(self.0.inner.buf_ptr() as *mut u8, len) }
    }
}
