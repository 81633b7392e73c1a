//! Checks of R serialization streams (`kompakt-rserial`): whether bytes may be handed to R's
//! unserializer, in memory or straight from a stream of a kompakt file.

use crate::ffi::bytes;
use crate::reader::{kpk_reader, reader_mut};
use crate::status::{guard, kpk_status, Failure};
use kompakt::stream::{ReadAt, SourceCursor};
use kompakt::{ErrorKind, Reader};
use kompakt_rserial::{check, Policy};
use std::ffi::c_void;
use std::io::{self, BufReader, Read};
use std::sync::Arc;

/// `allow` bit: environments pass (active bindings and code in them are refused still).
pub const KPK_RSERIAL_ENVIRONMENTS: u32 = 1;
/// `allow` bit: external pointers and weak references pass.
pub const KPK_RSERIAL_EXTERNAL_POINTERS: u32 = 2;

/// What a stream of a file is read in for the check: at most this much at a time.
const CHECK_BUFFER: usize = 1 << 20;

fn policy(allow: u32) -> Result<Policy, Failure> {
    let known = KPK_RSERIAL_ENVIRONMENTS | KPK_RSERIAL_EXTERNAL_POINTERS;
    if allow & !known != 0 {
        return Err(Failure::option(format!(
            "allow must be a combination of KPK_RSERIAL_ENVIRONMENTS (1) and KPK_RSERIAL_EXTERNAL_POINTERS (2), got {allow}"
        )));
    }
    Ok(Policy::untrusted()
        .environments(allow & KPK_RSERIAL_ENVIRONMENTS != 0)
        .external_pointers(allow & KPK_RSERIAL_EXTERNAL_POINTERS != 0))
}

fn check_failure(e: kompakt_rserial::Error) -> Failure {
    use kompakt_rserial::Error as E;
    match e {
        E::Refused { .. } => Failure::of(ErrorKind::Refused, e.to_string()),
        // A failure of the kompakt reader under the check, as the reader reports it (its kind
        // and message).
        E::Io(io) => match io.into_inner().map(|inner| inner.downcast::<kompakt::Error>()) {
            Some(Ok(e)) => (*e).into(),
            Some(Err(other)) => Failure::of(ErrorKind::Io, other.to_string()),
            None => Failure::of(ErrorKind::Io, "cannot read the stream"),
        },
        e => Failure::of(ErrorKind::Corrupt, e.to_string()),
    }
}

/// A stream of a kompakt file as `Read`, decoding only the blocks it reaches.
struct StreamRead<'a> {
    reader: &'a mut Reader<SourceCursor<Arc<dyn ReadAt>>>,
    stream: u32,
    pos: u64,
    len: u64,
}

impl Read for StreamRead<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = usize::try_from(self.len - self.pos).map_or(buf.len(), |rest| rest.min(buf.len()));
        if n > 0 {
            self.reader
                .read_range_into(self.stream, self.pos, &mut buf[..n])
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            self.pos += n as u64;
        }
        Ok(n)
    }
}

/// Checks the R serialization stream in `len` bytes at `data`.
///
/// # Safety
/// `data` holds `len` readable bytes (or `len` is 0).
#[no_mangle]
pub unsafe extern "C" fn kpk_rserial_check(data: *const c_void, len: usize, allow: u32) -> kpk_status {
    guard(|| {
        let policy = policy(allow)?;
        let data = bytes(data, len)?;
        check(data, &policy).map(drop).map_err(check_failure)
    })
}

/// Checks the R serialization stream in `stream` of a reader's file, decoding it a piece at a
/// time (the caller then reads the stream again for R).
///
/// # Safety
/// `reader` is a live handle used by no other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn kpk_reader_check_rserial(reader: *mut kpk_reader, stream: u32, allow: u32) -> kpk_status {
    guard(|| {
        let policy = policy(allow)?;
        let r = reader_mut(reader)?;
        let len = r.reader.stream_len(stream)?;
        let source = StreamRead {
            reader: &mut r.reader,
            stream,
            pos: 0,
            len,
        };
        let capacity = usize::try_from(len).map_or(CHECK_BUFFER, |n| n.clamp(1, CHECK_BUFFER));
        // The message names what the check found, not the file: the caller names it.
        check(BufReader::with_capacity(capacity, source), &policy)
            .map(drop)
            .map_err(check_failure)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::last_error;
    use crate::{kpk_bytes, kpk_bytes_free, kpk_reader_close, kpk_reader_open_memory};
    use crate::{kpk_writer_add_stream, kpk_writer_finish, kpk_writer_open_memory, kpk_writer_write};
    use crate::{KPK_ERROR_CORRUPT, KPK_ERROR_OPTION, KPK_ERROR_REFUSED, KPK_ERROR_USAGE, KPK_OK};
    use std::ptr::null_mut;

    /// `serialize(list(1L), NULL, ascii = TRUE)` in R 4.2, and a promise (the shape of
    /// CVE-2024-27322: unbound value, code `q()`, global environment).
    const PLAIN: &[u8] = b"A\n3\n262658\n197888\n5\nUTF-8\n19\n1\n13\n1\n1\n";
    const PROMISE: &[u8] = b"A\n3\n262658\n197888\n5\nUTF-8\n1029\n253\n252\n6\n1\n262153\n1\nq\n254\n";

    /// A file in memory whose stream 0 holds `data`, in blocks of 64 KiB.
    fn file_of(data: &[u8]) -> Vec<u8> {
        let mut w = null_mut();
        // SAFETY: the pointers are live locals; the writer is finished once.
        unsafe {
            assert_eq!(kpk_writer_open_memory(null(), &mut w), KPK_OK);
            let mut s = 0;
            assert_eq!(kpk_writer_add_stream(w, &mut s), KPK_OK);
            assert_eq!(kpk_writer_write(w, s, data.as_ptr().cast(), data.len()), KPK_OK);
            let mut file = kpk_bytes {
                data: null_mut(),
                len: 0,
            };
            assert_eq!(kpk_writer_finish(w, &mut file), KPK_OK);
            let out = std::slice::from_raw_parts(file.data, file.len).to_vec();
            kpk_bytes_free(&mut file);
            out
        }
    }

    fn check_file(file: &[u8], allow: u32) -> kpk_status {
        let mut r = null_mut();
        // SAFETY: `file` outlives the reader, closed here.
        unsafe {
            assert_eq!(
                kpk_reader_open_memory(file.as_ptr().cast(), file.len(), 1, &mut r),
                KPK_OK
            );
            let status = kpk_reader_check_rserial(r, 0, allow);
            kpk_reader_close(r);
            status
        }
    }

    use std::ptr::null;

    #[test]
    fn buffers_pass_or_are_refused_with_a_message() {
        // SAFETY: the slices are live for the calls.
        unsafe {
            assert_eq!(kpk_rserial_check(PLAIN.as_ptr().cast(), PLAIN.len(), 0), KPK_OK);
            assert_eq!(
                kpk_rserial_check(PROMISE.as_ptr().cast(), PROMISE.len(), 0),
                KPK_ERROR_REFUSED
            );
            assert!(
                last_error().contains("a promise (code that runs when the value is used)"),
                "{}",
                last_error()
            );
            assert_eq!(
                kpk_rserial_check(PLAIN.as_ptr().cast(), PLAIN.len() - 3, 0),
                KPK_ERROR_CORRUPT
            );
            assert!(last_error().contains("ends early"), "{}", last_error());
            assert_eq!(kpk_rserial_check(null(), 0, 0), KPK_ERROR_CORRUPT);
            assert_eq!(kpk_rserial_check(null(), 5, 0), KPK_ERROR_USAGE);
            assert_eq!(
                kpk_rserial_check(PLAIN.as_ptr().cast(), PLAIN.len(), 4),
                KPK_ERROR_OPTION
            );
        }
    }

    #[test]
    fn streams_of_files_are_checked_piece_by_piece() {
        assert_eq!(check_file(&file_of(PLAIN), 0), KPK_OK);
        assert_eq!(
            check_file(&file_of(PROMISE), KPK_RSERIAL_ENVIRONMENTS),
            KPK_ERROR_REFUSED
        );
        // A long stream: an integer vector of 3 million values over several blocks (XDR).
        let n = 3_000_000u32;
        let mut long = b"X\n\0\0\0\x03\0\x04\x02\x02\0\x03\x05\0\0\0\0\x05UTF-8\0\0\0\x0d".to_vec();
        long.extend_from_slice(&n.to_be_bytes());
        long.extend((0..n).flat_map(|i| i.to_be_bytes()));
        let file = file_of(&long);
        assert_eq!(check_file(&file, 0), KPK_OK);
        // Cut short: the stream ends inside the vector.
        assert_eq!(check_file(&file_of(&long[..long.len() - 1]), 0), KPK_ERROR_CORRUPT);
        // A damaged block is the reader's own error.
        let mut damaged = file.clone();
        damaged[file.len() / 2] ^= 0x40;
        assert_eq!(check_file(&damaged, 0), KPK_ERROR_CORRUPT);
        assert!(last_error().contains("checksum"), "{}", last_error());
        // SAFETY: NULL is refused before use.
        assert_eq!(unsafe { kpk_reader_check_rserial(null_mut(), 0, 0) }, KPK_ERROR_USAGE);
    }
}
