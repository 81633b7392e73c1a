//! [`Encoder`]: a single-stream file as an `io::Write`.

use super::{StreamId, WriteOptions, Writer};
use crate::error::Result;
use std::io::{self, Write};

/// A single-stream file as an `io::Write`: everything written becomes stream 0.
///
/// It buffers up to [`STAGED_BLOCKS`](super::STAGED_BLOCKS) blocks; call
/// [`finish`](Encoder::finish) to write the last block and the footer (dropping an unfinished
/// encoder leaves an unreadable file).
///
/// ```
/// use std::io::Write;
/// use kompakt::stream::{Encoder, WriteOptions};
/// let mut enc = Encoder::new(Vec::new(), WriteOptions::default())?;
/// enc.write_all(b"some bytes")?;
/// let file: Vec<u8> = enc.finish()?;
/// assert_eq!(kompakt::decompress(&file)?, b"some bytes");
/// # Ok::<(), kompakt::Error>(())
/// ```
#[derive(Debug)]
pub struct Encoder<W: Write> {
    writer: Writer<W>,
    stream: StreamId,
}

impl<W: Write> Encoder<W> {
    /// Starts a file with one stream.
    pub fn new(out: W, opts: WriteOptions) -> Result<Self> {
        let mut writer = Writer::new(out, opts)?;
        let stream = writer.add_stream(None)?;
        Ok(Encoder { writer, stream })
    }

    /// Sets the footer metadata (see [`Writer::set_metadata`]).
    pub fn set_metadata(&mut self, metadata: Vec<u8>) -> Result<()> {
        self.writer.set_metadata(metadata)
    }

    /// The underlying multi-stream writer.
    pub fn get_ref(&self) -> &Writer<W> {
        &self.writer
    }

    /// Writes the last block, footer and trailer; returns the output.
    pub fn finish(self) -> Result<W> {
        self.writer.finish()
    }
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(self.stream, buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer.write(self.stream, buf).map_err(Into::into)
    }

    /// Flushes whole blocks already compressed; a partial block stays buffered, since cutting
    /// it here would make the file depend on when the caller flushed.
    fn flush(&mut self) -> io::Result<()> {
        self.writer.out.flush()
    }
}
