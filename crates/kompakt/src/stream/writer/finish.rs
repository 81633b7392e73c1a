//! Ending streams and the file: the last partial blocks, the user metadata, the footer that
//! indexes every block, and the trailer.

use super::{StreamId, Writer, MAX_METADATA_LEN};
use crate::error::{Error, Result};
use crate::hash::xxh3_64;
use crate::stream::compact::{self, Content, COMPACT_WRITE_MAX};
use crate::stream::content::ContentHash;
use crate::stream::format::{Footer, Trailer, FOOTER_HEADER_LEN, MAX_FOOTER_LEN};
use std::io::Write;

impl<W: Write> Writer<W> {
    /// Ends a stream: its last partial block is written; later writes to it are errors.
    pub fn finish_stream(&mut self, id: StreamId) -> Result<()> {
        self.check(id)?;
        // The only stream of a file that may still be written compact keeps its few staged
        // bytes until the end decides (finish writes them as a block otherwise).
        let st = &self.streams[id.0 as usize];
        let may_be_compact = self.opts.compact
            && self.pending_header.is_some()
            && self.streams.len() == 1
            && st.staged.len() <= COMPACT_WRITE_MAX;
        if !may_be_compact {
            self.flush_staged(id)?;
            self.streams[id.0 as usize].staged = Vec::new();
        }
        self.streams[id.0 as usize].open = false;
        Ok(())
    }

    /// Writes a stream's staged bytes now, as blocks (the last one shorter than the block
    /// size), and flushes the output: everything written so far is then in `W`. For outputs that
    /// hand their bytes on as they come (a JVM `OutputStream`'s `flush`, a block's worth of
    /// data that should not wait for [`STAGED_BLOCKS`](super::STAGED_BLOCKS) more); each call
    /// may cut a short block, so calling it after small writes costs ratio.
    pub fn flush_stream(&mut self, id: StreamId) -> Result<()> {
        self.check(id)?;
        self.write_header()?;
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
        if let Some(content) = self.compact_content() {
            return self.finish_compact(content);
        }
        self.write_header()?;
        for i in 0..self.streams.len() {
            if self.streams[i].open {
                self.finish_stream(StreamId(i as u32))?;
            }
            // A stream ended while the file could still have been compact kept its bytes.
            if !self.streams[i].staged.is_empty() {
                self.flush_staged(StreamId(i as u32))?;
                self.streams[i].staged = Vec::new();
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

impl<W: Write> Writer<W> {
    /// What the file would be written as a compact file of, if it may be one
    /// ([`WriteOptions::compact`](super::WriteOptions::compact)): nothing written yet, one
    /// stream holding 1 to `COMPACT_WRITE_MAX` staged bytes, and metadata a compact file
    /// stands for.
    fn compact_content(&self) -> Option<Content> {
        let [stream] = &self.streams[..] else { return None };
        let small = (1..=COMPACT_WRITE_MAX).contains(&stream.staged.len());
        let nothing_out = self.pending_header.is_some() && self.blocks.is_empty() && !self.poisoned;
        if !(self.opts.compact && small && nothing_out && self.pace.is_none()) {
            return None;
        }
        Content::of_metadata(&self.metadata)
    }

    /// Writes the file as a compact file: its one block, coded as the stream's codec says
    /// (filters do not pay on so little), after a 28-byte header.
    fn finish_compact(mut self, content: Content) -> Result<(W, Option<ContentHash>)> {
        let hash = self.content.as_ref().map(|h| h.finish(&self.metadata));
        let stream = &mut self.streams[0];
        let data = std::mem::take(&mut stream.staged);
        let mut settings = stream.settings.clone();
        settings.filters = crate::filter::FilterSet::NONE;
        settings.auto_filters = false;
        let mut encoder = crate::stream::pool::take_encoder();
        let encoded = encoder.encode(0, &settings, &data).map(|block| {
            let fields = block.fields;
            compact::encode(content, fields.codec, fields.raw_len, block.payload.bytes())
        });
        crate::stream::pool::give_encoder(encoder);
        self.out.write_all(&encoded?)?;
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
