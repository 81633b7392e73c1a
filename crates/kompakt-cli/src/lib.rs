//! The `kompakt` command line, as a library: [`run`] takes the arguments and returns the exit
//! code. The `kompakt` binary calls it, and so does the Python package's `kompakt` command
//! (through its extension module), so both are the same program.

mod args;
mod bench;
mod files;
mod human;
mod report;
mod source;
mod store;
mod table;

use args::{Cli, Command, EncodeArgs};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use kompakt::WriteOptions;
use std::io;

/// An error for the user: printed once, then the process exits with `code`
/// (1: the data is damaged; 2: anything else, such as a bad option or an I/O failure).
#[derive(Debug)]
pub(crate) struct CliError {
    message: String,
    code: u8,
    broken_pipe: bool,
}

impl CliError {
    /// A usage or I/O problem (exit code 2).
    pub fn new(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code: 2,
            broken_pipe: false,
        }
    }

    /// An error of `kind` with `message`, exiting with the kind's code.
    fn of_kind(kind: kompakt::ErrorKind, message: String) -> Self {
        CliError {
            code: exit_code(kind),
            ..CliError::new(message)
        }
    }

    /// The same error with `context` (a file name) in front.
    pub fn context(mut self, context: impl std::fmt::Display) -> Self {
        self.message = format!("{context}: {}", self.message);
        self
    }
}

/// The exit code of each kind of error: the CLI's one table ([`kompakt::ErrorKind`]).
/// Damaged or foreign data exits 1 (`kompakt verify`'s "bad"); every other failure 2.
fn exit_code(kind: kompakt::ErrorKind) -> u8 {
    use kompakt::ErrorKind as K;
    match kind {
        K::Corrupt => 1,
        _ => 2,
    }
}

impl From<kompakt::Error> for CliError {
    fn from(e: kompakt::Error) -> Self {
        match e {
            kompakt::Error::Io(io) => io.into(),
            e => CliError::of_kind(e.kind(), e.to_string()),
        }
    }
}

impl From<kompakt_store::Error> for CliError {
    fn from(e: kompakt_store::Error) -> Self {
        match e {
            kompakt_store::Error::Format(e) => e.into(),
            e => CliError::of_kind(e.kind(), e.to_string()),
        }
    }
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            return CliError {
                broken_pipe: true,
                ..CliError::new("broken pipe")
            };
        }
        // A typed kompakt error may travel inside an io::Error (from `Write` adapters).
        if let Some(k) = e.get_ref().and_then(|inner| inner.downcast_ref::<kompakt::Error>()) {
            return CliError::of_kind(k.kind(), k.to_string());
        }
        CliError::new(format!("I/O error: {e}"))
    }
}

impl From<human::ParseSizeError> for CliError {
    fn from(e: human::ParseSizeError) -> Self {
        CliError::new(e.to_string())
    }
}

/// Result of a command.
pub(crate) type CliResult<T = ()> = Result<T, CliError>;

/// Builds validated write options from the shared encoding flags, by the rules of every front
/// end ([`kompakt_api::options`]); with a dictionary, zstd:3 unless a codec or level is given.
pub(crate) fn write_options(a: &EncodeArgs, threads: usize, dictionary: bool) -> CliResult<WriteOptions> {
    let block_size = human::parse_size(&a.block_size)?;
    let args = kompakt_api::options::WriteArgs {
        codec: a.codec.as_deref(),
        level: a.level,
        threads: Some(i64::try_from(threads).unwrap_or(i64::MAX)),
        typesize: Some(i64::from(a.typesize)),
        filter: Some(&a.filter),
        block_size: Some(i64::try_from(block_size).unwrap_or(i64::MAX)),
        dictionary,
    };
    Ok(args.build()?)
}

/// clap's parser of `-T`/`--threads`: the one limit of every front end.
pub(crate) fn threads_arg(text: &str) -> Result<usize, String> {
    let n = text
        .trim()
        .parse::<i64>()
        .map_err(|_| format!("invalid threads {text:?}: a whole number, 0 (all cores) to 256"))?;
    kompakt_api::options::threads(n).map_err(|e| e.to_string())
}

/// clap's parser of `--typesize`.
pub(crate) fn typesize_arg(text: &str) -> Result<u8, String> {
    let n = text
        .trim()
        .parse::<i64>()
        .map_err(|_| format!("invalid typesize {text:?}: an element size of 1-255 bytes"))?;
    kompakt_api::options::typesize(n).map_err(|e| e.to_string())
}

/// A byte progress bar on stderr; hidden when stderr is not a terminal or with `--quiet`.
pub(crate) fn progress_bar(len: Option<u64>, quiet: bool, what: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = match len {
        Some(n) => ProgressBar::new(n).with_style(
            ProgressStyle::with_template("{msg} [{bar:30}] {bytes}/{total_bytes} {binary_bytes_per_sec} eta {eta}")
                .expect("valid template")
                .progress_chars("=> "),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{msg} {spinner} {bytes} {binary_bytes_per_sec}").expect("valid template"),
        ),
    };
    bar.set_message(what.to_string());
    bar
}

fn run_command(cli: Cli) -> CliResult<u8> {
    let quiet = cli.quiet;
    files::set_durability(kompakt_api::options::sync(cli.sync.as_deref())?);
    match cli.command {
        Command::Compress(a) => files::compress(a, quiet).map(|_| 0),
        Command::Decompress(a) => files::decompress(a, quiet).map(|_| 0),
        Command::Cat(a) => files::cat(a).map(|_| 0),
        Command::Inspect(a) => report::inspect(a).map(|_| 0),
        Command::Head(a) => table::head(a).map(|_| 0),
        Command::Verify(a) => report::verify(a, quiet),
        Command::Bench(a) => bench::run(a, quiet).map(|_| 0),
        Command::TrainDict(a) => files::train_dict(a, quiet).map(|_| 0),
        Command::Store(a) => store::run(a, quiet),
        Command::Clean(a) => files::clean(a, quiet).map(|_| 0),
    }
}

/// Runs the command line on `args` (the program's name first, as `std::env::args_os` gives
/// them) and returns the exit code: 0 done, 1 damaged data, 2 any other error.
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print to stdout and succeed; usage errors go to stderr.
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    match run_command(cli) {
        Ok(code) => code,
        // The reader of our output went away (`| head`): not an error of ours.
        Err(e) if e.broken_pipe => 0,
        Err(e) => {
            eprintln!("kompakt: {}", e.message);
            e.code
        }
    }
}
