//! Command-line arguments: raw, as the user typed them. Validation into library options happens
//! in `main.rs` so that every error names the valid choices.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "kompakt",
    version,
    about = "Fast, compressed, multi-threaded storage for data-science data",
    long_about = "kompakt compresses files into seekable, checksummed block streams.\n\n\
                  Codecs: none, lz4, lz4hc, zstd, gzip, zlib, auto, or a unified level 0-100 \
                  (0 = store, 100 = smallest).",
    after_help = "Examples:\n  \
        kompakt compress data.bin                      # writes data.bin.kpk\n  \
        kompakt compress prices.f64 --typesize 8 --codec zstd:3\n  \
        kompakt decompress data.bin.kpk -o copy.bin\n  \
        kompakt cat data.bin.kpk --range 1M:2M | xxd | head\n  \
        cat data.bin | kompakt compress - | kompakt decompress - > copy.bin\n  \
        kompakt inspect data.bin.kpk\n  \
        kompakt verify data.bin.kpk && echo good\n  \
        kompakt bench data.bin --codecs lz4,zstd:1,zstd:3\n  \
        kompakt train-dict logs/*.json --lines -o logs.kpkd\n  \
        kompakt compress one.json -D logs.kpkd && kompakt decompress one.json.kpk -D logs.kpkd\n  \
        kompakt store ls cache/ --long                 # keys of a kompakt.Store\n  \
        kompakt store verify cache/ && kompakt store gc cache/"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// No progress bars or summaries on stderr.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Whether files written are flushed to the disk before the command ends: `always` (fsync
    /// each, and its folder) or `none` (renamed into place, no fsync); the default is
    /// $KOMPAKT_SYNC, else `none`. Writes are atomic either way.
    #[arg(long, global = true, value_name = "always|none")]
    pub sync: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compress a file (or `-` for stdin) into a kompakt file.
    #[command(visible_alias = "c")]
    Compress(CompressArgs),
    /// Decompress one stream of a kompakt file (or `-` for stdin) back to its bytes.
    #[command(visible_alias = "d")]
    Decompress(DecompressArgs),
    /// Write a byte range of a stream to stdout, decoding only the blocks it covers.
    Cat(CatArgs),
    /// Show streams, blocks, codecs, filters, sizes and ratios.
    #[command(visible_alias = "info")]
    Inspect(InspectArgs),
    /// Print the first rows of a table file.
    Head(HeadArgs),
    /// Check every checksum and decode every block; exit 0 if good, 1 if damaged.
    Verify(VerifyArgs),
    /// Measure ratio and speed of codecs on files, at 1 thread and at N threads.
    Bench(BenchArgs),
    /// Train a zstd dictionary on sample files (or their lines), for compressing many small
    /// values that look alike with `compress --dictionary`.
    TrainDict(TrainDictArgs),
    /// Work with an object store (the folder of `kompakt.Store`): ls, get, put, info, gc, verify.
    Store(StoreArgs),
    /// Remove the temporary files that killed writers left beside their outputs
    /// (`.NAME.*.tmp`, older than 10 s, held by no living writer).
    Clean(CleanArgs),
}

#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Output files (their own temporary files are removed) or folders (every kompakt
    /// temporary file in them).
    #[arg(required = true)]
    pub paths: Vec<std::path::PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct EncodeArgs {
    /// Codec: none, auto, lz4[:ACCEL], lz4hc[:1-12], zstd[:-50..22], gzip[:1-9], zlib[:1-9],
    /// or a unified level 0-100. Default: unified level 21 (zstd:1).
    #[arg(short, long, value_name = "SPEC")]
    pub codec: Option<String>,
    /// Alone, a unified level 0-100 (0 = store raw, 100 = smallest); with a bare codec name
    /// (--codec zstd), that codec's own level (--codec zstd --level 9 is zstd:9).
    #[arg(short, long, value_name = "LEVEL", allow_negative_numbers = true)]
    pub level: Option<i64>,
    /// Element size of the data in bytes (8 for float64/int64): enables the shuffle filter.
    #[arg(short, long, default_value_t = 1, value_name = "BYTES", allow_negative_numbers = true, value_parser = crate::typesize_arg)]
    pub typesize: u8,
    /// Filter for typed data: none, shuffle, delta (delta suits sorted integers), or auto (chosen per block).
    #[arg(long, default_value = "shuffle", value_name = "FILTER")]
    pub filter: String,
    /// Raw bytes per block, 64K..64M (suffixes K, M, G).
    #[arg(short, long, default_value = "1M", value_name = "SIZE")]
    pub block_size: String,
}

#[derive(Debug, Args)]
pub struct CompressArgs {
    /// Input file, or `-` for stdin.
    pub input: PathBuf,
    /// Output file (default: INPUT.kpk; stdout when the input is stdin).
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub encode: EncodeArgs,
    /// Threads (default: all cores); the output is identical for any thread count.
    #[arg(short = 'T', long, default_value = "0", allow_negative_numbers = true, value_parser = crate::threads_arg)]
    pub threads: usize,
    /// Overwrite the output if it exists.
    #[arg(short, long)]
    pub force: bool,
    /// Compress only as far as the disk leaves time for, like `zstd --adapt`: a block is
    /// stored raw while the disk waits for the compressor. The output then depends on timing
    /// (its content does not). Needs an output file.
    #[arg(long)]
    pub adapt: bool,
    /// Compress with this zstd dictionary (`kompakt train-dict` makes one); reading the file
    /// then needs it too. The codec must be zstd (default with a dictionary: zstd:3).
    #[arg(short = 'D', long, value_name = "DICT")]
    pub dictionary: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DecompressArgs {
    /// Input kompakt file, or `-` for stdin (decoded front to back).
    pub input: PathBuf,
    /// Output file (default: INPUT without `.kpk`; stdout when the input is stdin).
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Stream to write.
    #[arg(short, long, default_value_t = 0)]
    pub stream: u32,
    /// Threads (default: all cores).
    #[arg(short = 'T', long, default_value = "0", allow_negative_numbers = true, value_parser = crate::threads_arg)]
    pub threads: usize,
    /// Overwrite the output if it exists.
    #[arg(short, long)]
    pub force: bool,
    /// A zstd dictionary the file was compressed with (repeat for several).
    #[arg(short = 'D', long, value_name = "DICT")]
    pub dictionary: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TrainDictArgs {
    /// Sample files: each is one sample (or, with --lines, each line is).
    #[arg(required = true)]
    pub samples: Vec<PathBuf>,
    /// Where to write the dictionary (a zstd dictionary: `zstd -D` reads it too).
    #[arg(short, long, value_name = "PATH")]
    pub output: PathBuf,
    /// Largest dictionary size (suffixes K, M); zstd's default is 110K.
    #[arg(long, default_value = "110K", value_name = "SIZE")]
    pub size: String,
    /// Every line of the sample files is a sample (JSON lines, logs, CSV rows).
    #[arg(long)]
    pub lines: bool,
    /// Overwrite the output if it exists.
    #[arg(short, long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct CatArgs {
    /// Kompakt file.
    pub file: PathBuf,
    /// Byte range START:END of the stream (END exclusive; either may be omitted; suffixes K, M, G).
    #[arg(short, long, default_value = ":", value_name = "START:END")]
    pub range: String,
    /// Stream to read.
    #[arg(short, long, default_value_t = 0)]
    pub stream: u32,
    /// Threads (default: all cores).
    #[arg(short = 'T', long, default_value = "0", allow_negative_numbers = true, value_parser = crate::threads_arg)]
    pub threads: usize,
    /// A zstd dictionary the file was compressed with (repeat for several).
    #[arg(short = 'D', long, value_name = "DICT")]
    pub dictionary: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Kompakt file.
    pub file: PathBuf,
    /// Also list every block.
    #[arg(long)]
    pub blocks: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct HeadArgs {
    /// Table file (written by `kompakt.write_table`).
    pub file: PathBuf,
    /// Rows to print.
    #[arg(short = 'n', long, default_value_t = 10)]
    pub rows: u64,
    /// Comma-separated column names (default: all).
    #[arg(long, value_delimiter = ',')]
    pub columns: Option<Vec<String>>,
    /// Comma-separated row numbers (from 0) to print, in that order, instead of the first
    /// rows: only the pages holding them are decoded (e.g. `--take 17,3,9000000`).
    #[arg(long, value_delimiter = ',', conflicts_with = "rows")]
    pub take: Option<Vec<u64>>,
    /// Print only the rows where COLUMN OP VALUE holds (repeat for several; all must hold).
    /// OP: ==, =, !=, <, <=, >, >=, in, not in; VALUE in the column's type (integers, floats,
    /// booleans, strings, decimals, dates as YYYY-MM-DD, timestamps as RFC 3339), a list
    /// `(a, b, ...)` for in and not in, quoted ('...' or "...") to hold spaces or commas. On
    /// the table's first sort key and through its row-group statistics, row groups no row of
    /// which can pass are not read (e.g. `--where 'price>=10' --where 'city in (Oslo,Bergen)'`).
    #[arg(long = "where", value_name = "FILTER", conflicts_with = "take")]
    pub filters: Vec<String>,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Kompakt files (`-` for stdin).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Threads (default: all cores).
    #[arg(short = 'T', long, default_value = "0", allow_negative_numbers = true, value_parser = crate::threads_arg)]
    pub threads: usize,
    /// A zstd dictionary the files were compressed with (repeat for several); without the
    /// one a file needs, it is reported as unreadable (exit 2), not damaged.
    #[arg(short = 'D', long, value_name = "DICT")]
    pub dictionary: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Files to measure (each is read into memory first).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Comma-separated codec specs or unified levels, and ranges of either: zstd:1-9,
    /// lz4hc:1-12:3 (every third level), 0-100:10 (unified levels), zstd:-5--1.
    #[arg(
        long,
        default_value = "none,lz4,lz4hc:9,zstd:-3,zstd:1,zstd:3,zstd:9,gzip:6,auto",
        value_name = "LIST"
    )]
    pub codecs: String,
    /// Thread counts to measure, comma-separated (0 = all cores).
    #[arg(short = 'T', long, default_value = "1,0", value_name = "LIST")]
    pub threads: String,
    /// Element size hint, as for compress.
    #[arg(short, long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::typesize_arg)]
    pub typesize: u8,
    /// Filters, as for compress, comma-separated: each is measured.
    #[arg(long, default_value = "shuffle", value_name = "LIST")]
    pub filter: String,
    /// Block sizes, as for compress, comma-separated: each is measured.
    #[arg(short, long, default_value = "1M", value_name = "LIST")]
    pub block_size: String,
    /// Seconds to spend on each measurement (the best run counts; at least one run).
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
    /// Also time decompression without checking the blocks' checksums: the work `zstd -b`
    /// and `lz4 -b` measure (their benchmarks check none), and so the checksums' price.
    /// Every read checks them by default, and so does the main decompression figure.
    #[arg(long)]
    pub unverified: bool,
    /// Print JSON rows instead of a table: kompakt's figures and the squash benchmark's
    /// columns (dataset, codec name, level, CPU and wall seconds each way). With --recommend
    /// or --disk, an object: its rows, recommendations and disk figures.
    #[arg(long)]
    pub json: bool,
    /// The speed of the disk or network the data goes to, such as 200MB/s or 1.5GB/s: adds
    /// the throughput of writing and reading through it (the slower of the codec and the sink,
    /// which carries the compressed bytes), as kompakt's pipelined writers and readers see it.
    #[arg(long, value_name = "SPEED")]
    pub sink_speed: Option<String>,
    /// Measures the disk holding PATH (a folder, or a file in one) and uses it as the sink:
    /// writes a temporary file there (--disk-bytes, fsync included), drops it from the page
    /// cache, reads it back, and removes it. Writes go through at its write speed, reads at
    /// its read speed.
    #[arg(long, value_name = "PATH", conflicts_with = "sink_speed")]
    pub disk: Option<PathBuf>,
    /// Size of --disk's test file (at least 1M; suffixes K, M, G).
    #[arg(long, default_value = "256M", value_name = "SIZE", requires = "disk")]
    pub disk_bytes: String,
    /// Prints the configuration to pass for each goal: the fastest write, the smallest file
    /// at --min-speed or faster, and the fastest read (through --sink-speed or --disk when
    /// given).
    #[arg(long)]
    pub recommend: bool,
    /// Draws ratio against compression and decompression speed (log axes, one line per codec
    /// through its levels) into FILE: .png or .svg.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// The write speed the smallest-file recommendation must keep.
    #[arg(long, default_value = "100MB/s", value_name = "SPEED")]
    pub min_speed: String,
}

#[derive(Debug, Args)]
pub struct StoreArgs {
    #[command(subcommand)]
    pub command: StoreCommand,
    #[command(flatten)]
    pub remote: RemoteStoreFlags,
}

/// Options of stores on object storage (`s3://` URLs); refused for a folder.
#[derive(Debug, Args, Default)]
pub struct RemoteStoreFlags {
    /// The local cache folder of a store on object storage (default: one per URL under
    /// $XDG_CACHE_HOME or ~/.cache).
    #[arg(long, global = true, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// What the cache's objects may hold (e.g. 20GB; `none` for no limit; default 10 GiB).
    #[arg(long, global = true, value_name = "SIZE")]
    pub cache_limit: Option<String>,
    /// Seconds an object no key points at is kept before `gc` removes it (default 3600).
    #[arg(long, global = true, value_name = "SECONDS")]
    pub grace: Option<f64>,
    /// Objects of at least this size are uploaded in parts (e.g. 100MB; default 128 MiB).
    #[arg(long, global = true, value_name = "SIZE")]
    pub multipart_threshold: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// List the keys of a namespace (one per line; with --long also hash and sizes).
    Ls(StoreLsArgs),
    /// Write the object under a key, as a kompakt file, to a file or stdout.
    Get(StoreGetArgs),
    /// Store a file's bytes (or stdin with `-`) under a key.
    Put(StorePutArgs),
    /// Show the configuration, namespaces, object counts and sizes.
    Info(StoreInfoArgs),
    /// Remove objects no key points at, and files left by writers that died.
    Gc(StorePathArgs),
    /// Read every object back and check checksums and content hashes; exit 1 if damaged.
    Verify(StorePathArgs),
    /// Write the zstd dictionary a namespace's small values are compressed with, as a .kpkd
    /// file (for `kompakt decompress -D` of what `store get` writes).
    Dictionary(StoreDictionaryArgs),
}

#[derive(Debug, Args)]
pub struct StoreDictionaryArgs {
    /// The store's folder.
    pub store: PathBuf,
    /// Namespace (default: objects).
    #[arg(short, long, default_value = "objects")]
    pub namespace: String,
    /// The dictionary file to write (atomically).
    #[arg(short, long)]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct StorePathArgs {
    /// The store's folder.
    pub store: PathBuf,
}

#[derive(Debug, Args)]
pub struct StoreLsArgs {
    /// The store's folder.
    pub store: PathBuf,
    /// Namespace (default: objects).
    #[arg(short, long, default_value = "objects")]
    pub namespace: String,
    /// Every namespace.
    #[arg(short, long, conflicts_with = "namespace")]
    pub all: bool,
    /// Also show each key's content hash and sizes.
    #[arg(short, long)]
    pub long: bool,
}

#[derive(Debug, Args)]
pub struct StoreGetArgs {
    /// The store's folder.
    pub store: PathBuf,
    /// The key.
    pub key: String,
    /// Namespace (default: objects).
    #[arg(short, long, default_value = "objects")]
    pub namespace: String,
    /// Output file (default, or `-`: stdout). Written atomically.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Write the value's data, decompressed, instead of the kompakt file. Only for values of
    /// one stream (put from a file or stdin); a value saved from Python or R is refused.
    #[arg(short, long)]
    pub decompress: bool,
}

#[derive(Debug, Args)]
pub struct StorePutArgs {
    /// The store's folder (created if missing).
    pub store: PathBuf,
    /// The key.
    pub key: String,
    /// The file to store, or `-` for stdin.
    pub input: PathBuf,
    /// Namespace (default: objects).
    #[arg(short, long, default_value = "objects")]
    pub namespace: String,
    /// Compress only as far as the disk leaves time for (as `compress --adapt`): blocks are
    /// stored raw while the disk waits for the compressor. The content hash is the same.
    /// Without this or --no-adapt, a store with the default codec adapts, others do not.
    #[arg(long, conflicts_with = "no_adapt")]
    pub adapt: bool,
    /// Compress every block with the store's codec, however fast the disk (the file's bytes
    /// then do not depend on timing).
    #[arg(long)]
    pub no_adapt: bool,
}

#[derive(Debug, Args)]
pub struct StoreInfoArgs {
    /// The store's folder.
    pub store: PathBuf,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}
