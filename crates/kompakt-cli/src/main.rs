//! The `kompakt` binary: the command line of [`kompakt_cli`].

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(kompakt_cli::run(std::env::args_os()))
}
