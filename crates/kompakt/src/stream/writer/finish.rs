//! Ending streams and the file: the last partial blocks, the user metadata, the footer that
//! indexes every block, and the trailer.

use super::{StreamId, Writer, MAX_METADATA_LEN};
use crate::error::{Error, Result};
use crate::hash::xxh3_64;
use crate::stream::content::ContentHash;
use crate::stream::format::{Footer, Trailer, FOOTER_HEADER_LEN, MAX_FOOTER_LEN};
use std::io::Write;

impl<W: Write> Writer<W> {
    /// Ends a stream: its last partial block is written; later writes to it are errors.
    pub fn finish_stream(&mut self, id: StreamId) -> Result<()> {
        self.check(id)?;
        self.flush_staged(id)?;
        let st = &mut self.streams[id.0 as usize];
        st.open = false;
        st.staged = Vec::new();
        Ok(())
    }

    /// Writes a stream's staged bytes now, as blocks (the last one shorter than the block
    /// size), and flushes the output: everything written so far is then in `W`. For outputs that
    /// hand their bytes on as they come (a JVM `OutputStream`'s `flush`, a block's worth of
    /// data that should not wait for [`STAGED_BLOCKS`](super::STAGED_BLOCKS) more); each call
    /// may cut a short block, so calling it after small writes costs ratio.
    pub fn flush_stream(&mut self, id: StreamId) -> Result<()> {
        self.check(id)?;
        self.flush_staged(id)?;
        self.out.flush()?;
        Ok(())
    }

    /// The output, to take out the bytes written so far after
    /// [`flush_stream`](Self::flush_stream) (before it, some may still be buffered).
    pub fn output_mut(&mut self) -> &mut W {
        self.out.get_mut()
    }

    /// Sets the user metadata stored in the footer (replacing any set before); at most
    /// [`MAX_METADATA_LEN`] bytes.
    pub fn set_metadata(&mut self, metadata: Vec<u8>) -> Result<()> {
        if metadata.len() > MAX_METADATA_LEN {
            return Err(Error::invalid(
                "metadata",
                format!("{} bytes", metadata.len()),
                format!("at most {MAX_METADATA_LEN} bytes"),
            ));
        }
        self.metadata = metadata;
        Ok(())
    }

    /// Ends every open stream, writes footer and trailer, flushes, and returns the output.
    pub fn finish(self) -> Result<W> {
        self.finish_hashed().map(|(out, _)| out)
    }

    /// Like [`finish`](Writer::finish), also returning the content hash when
    /// [`hash_content`](Writer::hash_content) was called.
    pub fn finish_hashed(mut self) -> Result<(W, Option<ContentHash>)> {
        for i in 0..self.streams.len() {
            if self.streams[i].open {
                self.finish_stream(StreamId(i as u32))?;
            }
        }
        let hash = self.content.as_ref().map(|h| h.finish(&self.metadata));
        let footer = Footer {
            streams: self.streams.iter().map(|s| s.info).collect(),
            blocks: std::mem::take(&mut self.blocks),
            metadata: std::mem::take(&mut self.metadata),
        }
        .encode();
        if footer.len() as u64 > MAX_FOOTER_LEN + FOOTER_HEADER_LEN as u64 {
            // Refuse to write a file no reader would open (tens of millions of blocks).
            return Err(Error::Usage(format!(
                "the block index would be {} bytes, over the 1 GiB limit: use a larger block size",
                footer.len()
            )));
        }
        let trailer = Trailer {
            footer_offset: self.offset,
            footer_len: footer.len() as u64,
            footer_checksum: xxh3_64(&footer),
        }
        .encode();
        self.out.write_all(&footer)?;
        self.out.write_all(&trailer)?;
        let out = self.out.into_inner().map_err(|e| Error::Io(e.into_error()))?;
        Ok((out, hash))
    }
}

#[cfg(test)]
mod flush_tests {
    use super::*;
    use crate::stream::{ReadOptions, Reader, WriteOptions};

    #[test]
    fn flushed_bytes_are_the_file_so_far_and_cut_short_blocks() {
        let opts = WriteOptions::default().block_size(64 << 10);
        let mut w = Writer::new(Vec::new(), opts).unwrap();
        let s = w.add_stream(None).unwrap();
        let mut file = Vec::new();
        let mut data = Vec::new();
        for (i, len) in [10usize, 70_000, 1, 65_536].into_iter().enumerate() {
            let part = vec![i as u8; len];
            w.write(s, &part).unwrap();
            data.extend_from_slice(&part);
            w.flush_stream(s).unwrap();
            file.append(w.output_mut());
            assert_eq!(file.len() as u64, w.bytes_written());
        }
        file.extend_from_slice(&w.finish().unwrap());
        let mut r = Reader::new(std::io::Cursor::new(file), ReadOptions::default()).unwrap();
        let sizes: Vec<u32> = r.blocks().iter().map(|b| b.header.raw_len).collect();
        assert_eq!(sizes, [10, 65536, 4464, 1, 65536]);
        assert_eq!(r.read_stream(0).unwrap(), data);
    }
}
