//! `compress`, `decompress`, `cat` and `train-dict`: moving bytes between files, pipes and
//! kompakt files.

use crate::args::{CatArgs, CompressArgs, DecompressArgs, TrainDictArgs};
use crate::human::{format_size, parse_range, parse_size};
use crate::{progress_bar, write_options, CliError, CliResult};
use indicatif::ProgressBar;
use kompakt::codec::{Dictionaries, Dictionary, MAX_DICTIONARY_SIZE};
use kompakt::stream::{decode_sequential_with, resolve_threads, ReadAt, SourceCursor, STAGED_BLOCKS};
use kompakt::{ReadOptions, Reader, WriteOptions};
use kompakt_fs::{AtomicFile, Durability, PacedOutput, WritebackProgress};
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The `--sync` of the command being run (one command a process, or one at a time in tests).
static SYNC_ALWAYS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets how the files this command writes are flushed (`--sync`).
pub(crate) fn set_durability(durability: Durability) {
    SYNC_ALWAYS.store(durability == Durability::Always, std::sync::atomic::Ordering::Relaxed);
}

/// How the files this command writes are flushed.
pub(crate) fn durability() -> Durability {
    if SYNC_ALWAYS.load(std::sync::atomic::Ordering::Relaxed) {
        Durability::Always
    } else {
        Durability::None
    }
}

fn is_std(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Where output goes: stdout, or a file that appears atomically when done.
enum Output {
    Stdout(BufWriter<io::Stdout>),
    File(AtomicFile),
}

impl Output {
    /// Opens the output; with `paced`, a file paces the writer by its disk (see `--adapt`).
    fn open(path: &Path, force: bool, binary: bool, paced: bool) -> CliResult<Output> {
        if is_std(path) {
            if binary && io::stdout().is_terminal() {
                return Err(CliError::new(
                    "refusing to write compressed data to a terminal; use -o FILE or redirect stdout",
                ));
            }
            return Ok(Output::Stdout(BufWriter::with_capacity(1 << 20, io::stdout())));
        }
        // A device or FIFO is written into, not replaced: no --force needed.
        if path.exists() && !force && !kompakt_fs::is_special_file(path) {
            return Err(CliError::new(format!(
                "{} already exists; use --force to overwrite it",
                path.display()
            )));
        }
        AtomicFile::with_options(path, paced.then(Default::default), durability())
            .map(Output::File)
            .map_err(|e| CliError::new(format!("cannot create {}: {e}", path.display())))
    }

    fn finish(self) -> CliResult {
        match self {
            Output::Stdout(mut s) => s.flush()?,
            Output::File(f) => {
                let target = f.target().to_path_buf();
                f.commit()
                    .map_err(|e| CliError::new(format!("cannot write {}: {e}", target.display())))?
            }
        }
        Ok(())
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Stdout(s) => s.write(buf),
            Output::File(f) => f.write(buf),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Stdout(s) => s.write_all(buf),
            Output::File(f) => f.write_all(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout(s) => s.flush(),
            Output::File(f) => f.flush(),
        }
    }
}

/// What `compress` reads: a regular file, which its threads read from at their own places,
/// or anything else (stdin, a pipe, a device), read in order.
enum Input {
    File(File, u64),
    Stream(Box<dyn Read + Send>),
}

fn open_input(path: &Path) -> CliResult<Input> {
    if is_std(path) {
        return Ok(Input::Stream(Box::new(io::stdin())));
    }
    let f = kompakt_fs::open_for_reading(path)
        .map_err(|e| CliError::new(format!("cannot open {}: {e}", path.display())))?;
    let meta = f.metadata()?;
    Ok(if meta.is_file() {
        Input::File(f, meta.len())
    } else {
        Input::Stream(Box::new(f))
    })
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

pub fn compress(a: CompressArgs, quiet: bool) -> CliResult {
    let dictionary = a.dictionary.as_deref().map(load_dictionary).transpose()?;
    let opts = write_options(&a.encode, a.threads, dictionary.is_some())?;
    let output = match &a.output {
        Some(o) => o.clone(),
        None if is_std(&a.input) => PathBuf::from("-"),
        None => {
            let mut name = a.input.clone().into_os_string();
            name.push(".kpk");
            PathBuf::from(name)
        }
    };
    if same_file(&a.input, &output) {
        return Err(CliError::new("input and output are the same file"));
    }
    if a.adapt && is_std(&output) {
        return Err(CliError::new(
            "--adapt paces the compressor by the disk and needs an output file: use -o FILE",
        ));
    }
    let input = open_input(&a.input)?;
    let mut out = Output::open(&output, a.force, true, a.adapt)?;
    let len = match &input {
        Input::File(_, len) => Some(*len),
        Input::Stream(_) => None,
    };
    let bar = progress_bar(len, quiet, "compressing");
    let start = Instant::now();
    let (raw, stored, paced_raw) = match input {
        // One compressing thread gains from a reader ahead of it, as with a pipe.
        Input::File(file, _) if resolve_threads(opts.threads) == 1 => {
            encode_stream(Box::new(file), &mut out, opts, dictionary, &bar)?
        }
        Input::File(file, len) => encode_file(&file, len, &mut out, opts, dictionary, &bar)?,
        Input::Stream(input) => encode_stream(input, &mut out, opts, dictionary, &bar)?,
    };
    out.finish()?;
    bar.finish_and_clear();
    if !quiet {
        summary(&a.input, raw, stored, start, true);
        if a.adapt {
            let blocks = raw.div_ceil(opts.block_size as u64);
            eprintln!("--adapt: {paced_raw} of {blocks} blocks stored raw while the disk waited");
        }
    }
    Ok(())
}

/// The summary line of compress (data -> file, with the ratio) and decompress (file -> data):
/// sizes, time, and speed in raw bytes per second.
fn summary(input: &Path, from: u64, to: u64, start: Instant, compressed: bool) {
    let secs = start.elapsed().as_secs_f64().max(1e-9);
    let (raw, ratio) = if compressed {
        (from, format!(" (ratio {:.3})", from as f64 / to.max(1) as f64))
    } else {
        (to, String::new())
    };
    eprintln!(
        "{}: {} -> {}{ratio} in {:.2} s, {:.0} MB/s",
        input.display(),
        format_size(from),
        format_size(to),
        secs,
        raw as f64 / 1e6 / secs
    );
}

/// Compresses the first `len` bytes of `file` (its size when opened) into a single-stream
/// file: the compressing threads read their blocks themselves, each into a buffer it keeps,
/// so no thread of its own reads ahead and no chunk of the file is held in memory. Returns
/// (raw bytes, file bytes, blocks stored raw by pacing).
fn encode_file(
    file: &File,
    len: u64,
    out: &mut Output,
    opts: WriteOptions,
    dictionary: Option<Dictionary>,
    bar: &ProgressBar,
) -> CliResult<(u64, u64, u64)> {
    let counting = CountingWriter { inner: out, count: 0 };
    let mut writer = kompakt_fs::writer_with_dictionary(counting, opts, None, dictionary)?;
    let stream = writer.add_stream(None)?;
    writer.write_from(stream, file, 0, len, &mut |done| bar.set_position(done))?;
    writer.finish_stream(stream)?;
    let raw = writer.bytes_in();
    let paced_raw = writer.paced_raw_blocks();
    let stored = writer.finish()?.count;
    Ok((raw, stored, paced_raw))
}

/// Most bytes read ahead of the compressor in one chunk.
const MAX_CHUNK: usize = 64 << 20;

/// Reads `input` on a helper thread in chunks of several blocks, so reading the next chunk
/// overlaps compressing this one, and writes a single-stream file to `out`. Two chunk buffers
/// circulate. Returns (raw bytes, file bytes, blocks stored raw by pacing).
fn encode_stream(
    input: Box<dyn Read + Send>,
    out: &mut Output,
    opts: WriteOptions,
    dictionary: Option<Dictionary>,
    bar: &ProgressBar,
) -> CliResult<(u64, u64, u64)> {
    let threads = resolve_threads(opts.threads);
    let chunk = (STAGED_BLOCKS.max(16 * threads) * opts.block_size).min(MAX_CHUNK.max(opts.block_size));
    std::thread::scope(|scope| {
        // Created inside the scope: if compression fails, these ends are dropped before the
        // scope waits for the reader, which then sees closed channels and stops.
        let (full_tx, full_rx) = crossbeam_channel::bounded::<io::Result<Vec<u8>>>(1);
        let (free_tx, free_rx) = crossbeam_channel::bounded::<Vec<u8>>(2);
        scope.spawn(move || {
            let mut input = input;
            let mut allocated = 0;
            loop {
                let mut buf = match free_rx.try_recv() {
                    Ok(b) => b,
                    Err(_) if allocated < 2 => {
                        allocated += 1;
                        Vec::new()
                    }
                    Err(_) => match free_rx.recv() {
                        Ok(b) => b,
                        Err(_) => break,
                    },
                };
                match fill_chunk(&mut input, &mut buf, chunk) {
                    Ok(0) => break,
                    Ok(n) => {
                        buf.truncate(n);
                        if full_tx.send(Ok(buf)).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        let _ = full_tx.send(Err(e));
                        break;
                    }
                }
            }
        });
        let counting = CountingWriter { inner: out, count: 0 };
        let mut writer = kompakt_fs::writer_with_dictionary(counting, opts, None, dictionary)?;
        let stream = writer.add_stream(None)?;
        for buf in &full_rx {
            let buf = buf?;
            writer.write(stream, &buf)?;
            bar.inc(buf.len() as u64);
            let _ = free_tx.try_send(buf);
        }
        // The stream's last blocks are written as it ends: count its raw blocks after that.
        writer.finish_stream(stream)?;
        let raw = writer.bytes_in();
        let paced_raw = writer.paced_raw_blocks();
        let stored = writer.finish()?.count;
        Ok((raw, stored, paced_raw))
    })
}

impl PacedOutput for Output {
    fn progress(&self) -> Option<Arc<WritebackProgress>> {
        match self {
            Output::Stdout(_) => None,
            Output::File(f) => f.progress(),
        }
    }
}

impl<W: PacedOutput> PacedOutput for CountingWriter<W> {
    fn progress(&self) -> Option<Arc<WritebackProgress>> {
        self.inner.progress()
    }
}

/// Counts the bytes that pass through, for the summary line.
struct CountingWriter<W> {
    inner: W,
    count: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Reads up to `chunk` bytes into `buf`, from its start; returns how many. The buffer grows
/// with the data (doubling from 1 MiB), so a small input zero-fills only about what it uses,
/// and a recycled full-size buffer is not zero-filled again. Zero-filling whole chunks up
/// front cost an 8 MB file 35 ms of page faults and memset in a 60-75 ms compression (two
/// 32 MiB buffers, the second only to find the end); reading into uninitialised capacity
/// instead (`read_to_end`) made large files 5 % slower, as the boxed reader zero-fills
/// every read.
fn fill_chunk(r: &mut dyn Read, buf: &mut Vec<u8>, chunk: usize) -> io::Result<usize> {
    let mut n = 0;
    loop {
        if n == buf.len() {
            if n >= chunk {
                break;
            }
            buf.resize((2 * n).max(1 << 20).min(chunk), 0);
        }
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn read_options(threads: usize) -> ReadOptions {
    ReadOptions::default().threads(threads)
}

/// The CLI's one way to open a kompakt file, a path or a URL: through
/// [`ReadAt`](kompakt::stream::ReadAt), the positional source every reader shares.
pub fn open_reader(path: &Path, threads: usize) -> CliResult<Reader<SourceCursor<Arc<dyn ReadAt>>>> {
    let source = crate::source::open_source(path).map_err(|e| match e {
        kompakt::Error::Io(e) => {
            // Errors of remote sources name their URL already.
            let text = e.to_string();
            match text.starts_with(&path.display().to_string()) {
                true => CliError::new(format!("cannot open {text}")),
                false => CliError::new(format!("cannot open {}: {text}", path.display())),
            }
        }
        e => CliError::from(e),
    })?;
    Reader::at(source, read_options(threads)).map_err(|e| CliError::from(e).context(path.display()))
}

pub fn decompress(a: DecompressArgs, quiet: bool) -> CliResult {
    let output = match &a.output {
        Some(o) => o.clone(),
        None if is_std(&a.input) => PathBuf::from("-"),
        None => match a.input.extension() {
            // A URL's file goes to the current folder, as `curl -O` puts it.
            Some(ext) if ext == "kpk" && crate::source::is_url(&a.input) => {
                PathBuf::from(a.input.file_name().expect("has an extension")).with_extension("")
            }
            Some(ext) if ext == "kpk" => a.input.with_extension(""),
            _ => {
                return Err(CliError::new(format!(
                    "cannot name the output of {} (no .kpk extension); use -o FILE or -o - for stdout",
                    a.input.display()
                )))
            }
        },
    };
    if same_file(&a.input, &output) {
        return Err(CliError::new("input and output are the same file"));
    }
    let dictionaries = load_dictionaries(&a.dictionary)?;
    if is_std(&a.input) {
        let mut out = Output::open(&output, a.force, false, false)?;
        let bar = progress_bar(None, quiet, "decompressing");
        let opts = read_options(a.threads);
        let footer = decode_sequential_with(io::stdin().lock(), &opts, &dictionaries, |stream, data| {
            if stream == a.stream {
                out.write_all(data)?;
                bar.inc(data.len() as u64);
            }
            Ok(())
        })?;
        if a.stream as usize >= footer.streams.len() {
            return Err(CliError::new(format!(
                "no stream {}; the file has {}",
                a.stream,
                footer.streams.len()
            )));
        }
        bar.finish_and_clear();
        return out.finish();
    }
    let mut reader = open_reader(&a.input, a.threads)?;
    reader.set_dictionaries(dictionaries);
    let len = reader.stream_len(a.stream)?;
    let mut out = Output::open(&output, a.force, false, false)?;
    let bar = progress_bar(Some(len), quiet, "decompressing");
    let start = Instant::now();
    reader
        .copy_range_to(a.stream, 0, len, &mut out, &mut |n| bar.set_position(n))
        .map_err(|e| CliError::from(e).context(a.input.display()))?;
    out.finish()?;
    bar.finish_and_clear();
    if !quiet {
        summary(&a.input, reader.file_len(), len, start, false);
    }
    Ok(())
}

/// Reads a dictionary file (a `.kpkd`, or any zstd dictionary).
pub fn load_dictionary(path: &Path) -> CliResult<Dictionary> {
    let named = |e: String| CliError::new(format!("dictionary {}: {e}", path.display()));
    let len = std::fs::metadata(path).map_err(|e| named(e.to_string()))?.len();
    if len > MAX_DICTIONARY_SIZE as u64 {
        return Err(named(format!(
            "{} is larger than a dictionary can be ({})",
            format_size(len),
            format_size(MAX_DICTIONARY_SIZE as u64)
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| named(e.to_string()))?;
    Dictionary::new(bytes).map_err(|e| named(e.to_string()))
}

pub fn load_dictionaries(paths: &[PathBuf]) -> CliResult<Dictionaries> {
    let dictionaries: CliResult<Vec<Dictionary>> = paths.iter().map(|p| load_dictionary(p)).collect();
    Ok(dictionaries?.into())
}

/// `kompakt train-dict`: a zstd dictionary from sample files or their lines.
pub fn train_dict(a: TrainDictArgs, quiet: bool) -> CliResult {
    let size = parse_size(&a.size).map_err(|e| CliError::new(format!("--size: {e}")))?;
    let size = usize::try_from(size).unwrap_or(usize::MAX);
    let mut samples: Vec<Vec<u8>> = Vec::new();
    for path in &a.samples {
        let bytes = std::fs::read(path).map_err(|e| CliError::new(format!("cannot read {}: {e}", path.display())))?;
        if a.lines {
            samples.extend(
                bytes
                    .split(|&b| b == b'\n')
                    .filter(|l| !l.is_empty())
                    .map(<[u8]>::to_vec),
            );
        } else if !bytes.is_empty() {
            samples.push(bytes);
        }
    }
    let total: usize = samples.iter().map(Vec::len).sum();
    let start = Instant::now();
    let dictionary = Dictionary::train(&samples, size).map_err(|e| {
        let hint = if a.lines || samples.len() >= 8 {
            ""
        } else {
            " (one sample per file: --lines makes every line a sample)"
        };
        CliError::new(format!("{e}{hint}"))
    })?;
    let mut out = Output::open(&a.output, a.force, true, false)?;
    out.write_all(dictionary.bytes())?;
    out.finish()?;
    if !quiet {
        eprintln!(
            "{}: dictionary {} ({}) from {} samples ({}) in {:.2} s",
            a.output.display(),
            dictionary.id(),
            format_size(dictionary.bytes().len() as u64),
            samples.len(),
            format_size(total as u64),
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

pub fn cat(a: CatArgs) -> CliResult {
    let mut reader = open_reader(&a.file, a.threads)?;
    reader.set_dictionaries(load_dictionaries(&a.dictionary)?);
    let len = reader.stream_len(a.stream)?;
    let (start, end) = parse_range(&a.range, len).map_err(CliError::new)?;
    let mut out = BufWriter::with_capacity(1 << 20, io::stdout().lock());
    reader
        .copy_range_to(a.stream, start, end, &mut out, &mut |_| {})
        .map_err(|e| CliError::from(e).context(a.file.display()))?;
    out.flush()?;
    Ok(())
}

/// `kompakt clean`: removes the temporary files killed writers left (see
/// [`kompakt_fs::remove_stale_temps`]), for output files or whole folders.
pub fn clean(a: crate::args::CleanArgs, quiet: bool) -> CliResult {
    for path in &a.paths {
        let removed = if path.is_dir() {
            kompakt_fs::remove_stale_temps(path, None)
        } else {
            let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
                CliError::new(format!("{}: not a file or folder name kompakt writes", path.display()))
            })?;
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            kompakt_fs::remove_stale_temps(dir, Some(name))
        }
        .map_err(|e| CliError::from(e).context(path.display()))?;
        if !quiet {
            let bytes: u64 = removed.iter().map(|(_, n)| n).sum();
            eprintln!(
                "{}: removed {} temporary file{} ({})",
                path.display(),
                removed.len(),
                if removed.len() == 1 { "" } else { "s" },
                format_size(bytes)
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out at most 1000 bytes per read, to exercise short reads.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.0.len()).min(1000);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn chunks_fill_from_the_start_whatever_the_chunk_and_read_sizes() {
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        for chunk in [1000, 64 << 10, 1 << 20, 3 << 20, 4 << 20] {
            for trickle in [false, true] {
                let mut input: Box<dyn Read> = if trickle {
                    Box::new(Trickle(&data))
                } else {
                    Box::new(&data[..])
                };
                let (mut buf, mut back) = (Vec::new(), Vec::new());
                loop {
                    let n = fill_chunk(&mut input, &mut buf, chunk).unwrap();
                    assert!(n <= chunk && buf.len() <= chunk);
                    if n == 0 {
                        break;
                    }
                    back.extend_from_slice(&buf[..n]);
                }
                assert!(back == data, "chunk {chunk}, trickle {trickle}");
            }
        }
    }
}
