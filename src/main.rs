//! The `kdissect` command line.

use clap::Parser;
use flags::{Cli, Mode, Settings};
use std::io::{self, Write};
use std::process::ExitCode;

mod cli_capture;
mod flags;
mod hex_run;
mod input;
use kdissect::interrupt;
mod sinks;
mod subcommands;

/// `--help`, `--version` and usage errors: clap's text, with write errors reported (a full
/// disk, a closed pipe) instead of a panic.
fn clap_exit(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let text = e.render().to_string();
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let mut out = io::stdout();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => write_failed(&err),
            }
        }
        _ => {
            let _ = e.print();
            ExitCode::from(2)
        }
    }
}

pub(crate) fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("kdissect: {msg}");
    ExitCode::from(2)
}

/// Ends quietly on a closed pipe (`| head`), loudly on other write errors.
pub(crate) fn write_failed(e: &io::Error) -> ExitCode {
    if e.kind() == io::ErrorKind::BrokenPipe {
        ExitCode::SUCCESS
    } else {
        fail(format!("cannot write output: {e}"))
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return clap_exit(e),
    };
    if let Some(cmd) = &cli.command {
        return subcommands::subcommand(cmd);
    }
    let settings = match Settings::try_from(&cli) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    // The message tables are parsed on first use; do it before any input arrives, so that
    // the first message of a live stream is not late by the parse.
    let _ = kdissect::kafka::registry();
    match settings.mode {
        Mode::ListInterfaces => cli_capture::list_interfaces(),
        Mode::Hex(_) => {
            interrupt::install();
            hex_run::run_hex(settings)
        }
        Mode::Capture | Mode::Live(_) => cli_capture::run(settings),
    }
}
