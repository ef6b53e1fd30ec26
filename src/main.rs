//! The `kdissect` command line.

use clap::{Parser, ValueEnum};
use kdissect::capture::hex;
use kdissect::kafka::frames::{self, Conversation, ResponseHint};
use kdissect::kafka::message::{request_header_version, response_header_version};
use kdissect::kafka::{names, Direction, Message};
use kdissect::render::{self, Style};
use std::io::{self, IsTerminal, Read, Write};
use std::process::ExitCode;

mod cli_capture;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Kafka wire-protocol dissector: decodes Kafka frames byte by byte.
#[derive(Debug, Parser)]
#[command(
    name = "kdissect",
    version,
    about,
    disable_version_flag = true,
    after_help = "Examples:\n  \
        printf '00 00 00 21 00 03 00 0d 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00' | kdissect --hex\n  \
        kdissect --hex -V frame.hex\n  \
        xxd response.bin | kdissect --hex --api-key metadata --api-version 12 --response -x"
)]
pub(crate) struct Cli {
    /// Print version.
    #[arg(long, action = clap::ArgAction::Version)]
    pub(crate) version: Option<bool>,

    /// Input files; `-` or nothing reads standard input.
    pub(crate) files: Vec<String>,

    /// Read hex text (plain hex, xxd, hexdump -C, od -An -tx1 or tshark -x dumps) instead of a capture.
    #[arg(long)]
    pub(crate) hex: bool,

    /// Print the annotated object tree of each message.
    #[arg(short = 'V', long = "tree")]
    pub(crate) tree: bool,

    /// Print the byte layout of each message, coloured by region.
    #[arg(short = 'x', long = "bytes")]
    pub(crate) bytes: bool,

    /// Print descriptions and byte values whole instead of cutting them.
    #[arg(long)]
    pub(crate) wide: bool,

    /// When to colour output (NO_COLOR in the environment also turns it off).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub(crate) color: ColorChoice,

    /// API of a response whose request is not in the input (name or number).
    #[arg(long, value_name = "K")]
    pub(crate) api_key: Option<String>,

    /// API version of a response whose request is not in the input.
    #[arg(long, value_name = "V")]
    pub(crate) api_version: Option<i16>,

    /// Decode every frame as a response (with --api-key and --api-version, or by pairing).
    #[arg(long)]
    pub(crate) response: bool,

    /// Broker port (repeatable); connections to it are Kafka.
    #[arg(short = 'p', long = "port", value_name = "PORT", default_values_t = vec![9092u16])]
    pub(crate) ports: Vec<u16>,

    /// Do not look for Kafka on other ports by what a client sends first.
    #[arg(long)]
    pub(crate) no_detect: bool,

    /// Largest frame size accepted; a size prefix above it is garbage (bytes, or with K/M/G).
    #[arg(long, value_name = "SIZE", default_value = "100M", value_parser = parse_size)]
    pub(crate) max_frame: usize,
}

fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (num, mul) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1024),
        Some('m' | 'M') => (&t[..t.len() - 1], 1024 * 1024),
        Some('g' | 'G') => (&t[..t.len() - 1], 1024 * 1024 * 1024),
        _ => (t, 1),
    };
    num.trim()
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| format!("{s:?} is not a size (examples: 1048576, 512K, 100M)"))
}

pub(crate) fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("kdissect: {msg}");
    ExitCode::from(2)
}

fn read_input(name: &str) -> Result<Vec<u8>, String> {
    if name == "-" {
        let mut buf = Vec::new();
        io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        Ok(buf)
    } else {
        std::fs::read(name).map_err(|e| format!("cannot read {name}: {e}"))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let color = match cli.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    let style = Style {
        color,
        wide: cli.wide,
    };
    let api_key = match cli.api_key.as_deref().map(|s| (s, names::api_key_from_str(s))) {
        None => None,
        Some((_, Some(k))) => Some(k),
        Some((s, None)) => return fail(format!("--api-key {s:?} is neither a number nor a Kafka API name (try metadata, 3, api-versions)")),
    };
    if api_key.is_some() != cli.api_version.is_some() {
        return fail("--api-key and --api-version go together: a response is decoded with both");
    }
    let inputs = if cli.files.is_empty() {
        vec!["-".to_string()]
    } else {
        cli.files.clone()
    };
    if !cli.hex {
        if cli.files.is_empty() && io::stdin().is_terminal() {
            return fail("no input: give a capture file (pcap or pcapng), `-` for standard input, or --hex for hex text");
        }
        return cli_capture::run(&cli, &inputs, style);
    }
    let hint = ResponseHint {
        api_key,
        api_version: cli.api_version,
        force_response: cli.response,
    };
    let views = Views {
        tree: cli.tree || !cli.bytes,
        bytes: cli.bytes || !cli.tree,
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut malformed = 0usize;
    let mut total = 0usize;
    for name in &inputs {
        let display = if name == "-" {
            "standard input"
        } else {
            name.as_str()
        };
        let raw = match read_input(name) {
            Ok(r) => r,
            Err(e) => return fail(e),
        };
        let text = String::from_utf8_lossy(&raw);
        let bytes = match hex::parse(&text) {
            Ok(b) => b,
            Err(e) => return fail(format!("{display}: {e}")),
        };
        if bytes.is_empty() {
            return fail(format!("{display}: no hex bytes found"));
        }
        let mut conv = Conversation::default();
        for span in frames::split(&bytes) {
            let frame = bytes
                .get(span.offset..span.offset + span.len)
                .unwrap_or(&[]);
            let msg = conv.decode(frame, &hint);
            total += 1;
            if !msg.is_clean() {
                malformed += 1;
            }
            let r = print_message(&mut out, &msg, frame, span.offset, views, style);
            if let Err(e) = r {
                if e.kind() == io::ErrorKind::BrokenPipe {
                    return ExitCode::SUCCESS;
                }
                return fail(format!("cannot write output: {e}"));
            }
        }
    }
    if let Err(e) = out.flush() {
        if e.kind() == io::ErrorKind::BrokenPipe {
            return ExitCode::SUCCESS;
        }
        return fail(format!("cannot write output: {e}"));
    }
    drop(out);
    if malformed > 0 {
        eprintln!("kdissect: {malformed} of {total} frames malformed or undecodable");
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Views {
    pub(crate) tree: bool,
    pub(crate) bytes: bool,
}

fn title(msg: &Message) -> String {
    let size = msg.size;
    match (msg.api_key, msg.api_version) {
        (Some(k), Some(v)) => {
            let (hname, hv) = match msg.direction {
                Direction::Request => ("request", request_header_version(k, v)),
                Direction::Response => ("response", response_header_version(k, v)),
            };
            format!(
                "{} v{v}, {hname} header v{hv}, {size} bytes on the wire",
                msg.root.name
            )
        }
        _ => format!("{}, {size} bytes on the wire", msg.root.name),
    }
}

fn print_message(
    out: &mut impl Write,
    msg: &Message,
    frame: &[u8],
    input_offset: usize,
    views: Views,
    style: Style,
) -> io::Result<()> {
    if input_offset > 0 {
        writeln!(out, "{} (input offset 0x{input_offset:04x})", title(msg))?;
    } else {
        writeln!(out, "{}", title(msg))?;
    }
    if views.tree {
        render::tree::write(out, &msg.root, frame, style)?;
    }
    if views.bytes {
        if views.tree {
            writeln!(out)?;
        }
        render::bytes::write(out, &msg.root, frame, style)?;
    }
    for d in &msg.diagnoses {
        writeln!(out, "!! malformed at 0x{:04x}: {}", d.offset, d.message)?;
    }
    if let Some(e) = &msg.error {
        writeln!(out, "!! decoding stopped: {e}")?;
    }
    writeln!(out)
}
