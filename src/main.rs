//! The `kdissect` command line.

use clap::Parser;
use flags::{Cli, ColorChoice};
use kdissect::render::Style;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

mod cli_capture;
mod flags;
mod hex_run;
mod input;
mod interrupt;
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
    let color = match cli.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            !cli.json
                && io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    let style = Style {
        color,
        wide: cli.wide,
        max_value: cli.max_value,
        show_secrets: cli.show_secrets,
        ascii: cli.ascii,
    };
    let named: Vec<String> = cli.read_file.iter().chain(&cli.files).cloned().collect();
    let inputs = if named.is_empty() {
        vec!["-".to_string()]
    } else {
        named.clone()
    };
    if cli.json_spans && !cli.json {
        return fail("--json-spans goes with --json");
    }
    // The message tables are parsed on first use; do it before any input arrives, so that
    // the first message of a live stream is not late by the parse.
    let _ = kdissect::kafka::registry();
    if cli.list_interfaces {
        return cli_capture::list_interfaces();
    }
    if !cli.hex {
        if !cli.interfaces.is_empty() && !named.is_empty() {
            return fail("-i captures live; it does not go with capture files");
        }
        if cli.autostop.is_some() && cli.interfaces.is_empty() {
            return fail("-a duration:N stops a live capture: add -i IFACE");
        }
        if named.is_empty() && cli.interfaces.is_empty() && io::stdin().is_terminal() {
            return fail("no input: give a capture file (pcap or pcapng), `-` for standard input, or --hex for hex text; see --help");
        }
        if cli.at.is_some() || cli.api_key.is_some() || cli.response {
            return fail(
                "--at, --api-key, --api-version and --response work on hex input: add --hex",
            );
        }
        return cli_capture::run(&cli, &inputs, style);
    }
    interrupt::install();
    hex_run::run_hex(&cli, &inputs, style)
}
