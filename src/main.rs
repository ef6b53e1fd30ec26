//! The `kdissect` command line.

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use kdissect::capture::hex;
use kdissect::kafka::frames::{self, Conversation, ResponseHint};
use kdissect::kafka::message::{request_header_version, response_header_version};
use kdissect::kafka::topics::TopicNames;
use kdissect::kafka::{names, Direction, Message, Node, NodeKind};
use kdissect::render::{self, json::Meta, value, Style};
use std::io::{self, BufRead, IsTerminal, Read, Write};
use std::process::ExitCode;

mod cli_capture;
mod input;
mod interrupt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Commands {
    /// Print a shell completion script: `kdissect completions bash > /etc/bash_completion.d/kdissect`.
    Completions {
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the manual page (roff): `kdissect man | man -l -`.
    Man,
    /// Build and decode the smallest legal instance of an API: `kdissect example metadata --version 13`.
    Example {
        /// API name or key (metadata, 3, describe-cluster, ...).
        api: String,
        /// Version (default: the newest).
        #[arg(long, short = 'v')]
        version: Option<i16>,
        /// Only the request.
        #[arg(long, conflicts_with = "response")]
        request: bool,
        /// Only the response.
        #[arg(long)]
        response: bool,
        /// Only the object tree.
        #[arg(short = 'V', long = "tree")]
        tree: bool,
        /// Only the byte layout.
        #[arg(short = 'x', long = "bytes")]
        bytes: bool,
        /// Print the frame as hex too (input for `kdissect --hex`).
        #[arg(long = "print-hex")]
        print_hex: bool,
        /// When to colour output.
        #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
        color: ColorChoice,
    },
}

const EXAMPLES: &str = "Examples:
  kdissect capture.pcap                 a line per Kafka message, with latencies
  kdissect -V -p 19092 capture.pcapng   object trees; broker on port 19092
  kdissect --api metadata --errors capture.pcap
                                        Metadata exchanges with an error code
  kdissect --stats -q capture.pcap      statistics tables only
  tcpdump -i eth0 -U -w - port 9092 | kdissect -
                                        decode a live capture as it comes
  kdissect -i any -a duration:60 -w meta.pcap --api metadata
                                        a minute live; keep the Metadata ones
  kdissect --json capture.pcap | jq -c 'select(.latency_us > 50000)'
  xxd frame.bin | kdissect --hex -V     a frame from a hex dump, as a tree
  kdissect --hex --at 30 frame.hex      which field covers byte 30";

/// Kafka wire-protocol dissector: decodes captures (pcap, pcapng) and hex frames byte by byte.
#[derive(Debug, Parser)]
#[command(
    name = "kdissect",
    version,
    about,
    disable_version_flag = true,
    args_conflicts_with_subcommands = true,
    after_help = EXAMPLES
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Commands>,

    /// Print version.
    #[arg(long, action = clap::ArgAction::Version)]
    pub(crate) version: Option<bool>,

    /// Input files (pcap, pcapng, or hex text with --hex); `-` or nothing reads standard input.
    pub(crate) files: Vec<String>,

    /// Capture file to read (as tshark's -r); the same as naming it after the options.
    #[arg(
        short = 'r',
        long = "read-file",
        value_name = "FILE",
        help_heading = "Input"
    )]
    pub(crate) read_file: Vec<String>,

    /// Capture live on this interface (repeatable; `any` for all), through libpcap.
    #[arg(
        short = 'i',
        long = "interface",
        value_name = "IFACE",
        help_heading = "Live capture"
    )]
    pub(crate) interfaces: Vec<String>,

    /// Capture filter (BPF, tcpdump syntax) instead of the one made from the -p ports.
    #[arg(
        short = 'f',
        long = "capture-filter",
        value_name = "BPF",
        help_heading = "Live capture"
    )]
    pub(crate) filter: Option<String>,

    /// Put the interfaces in promiscuous mode (off by default).
    #[arg(long, help_heading = "Live capture")]
    pub(crate) promisc: bool,

    /// List the interfaces a live capture can use, and exit.
    #[arg(short = 'D', long = "list-interfaces", help_heading = "Live capture")]
    pub(crate) list_interfaces: bool,

    /// Stop a live capture: `duration:SECONDS` (as tshark's -a).
    #[arg(short = 'a', long = "autostop", value_name = "duration:N", value_parser = parse_autostop, help_heading = "Live capture")]
    pub(crate) autostop: Option<std::time::Duration>,

    /// Write the packets of the messages shown (after the filters) to FILE, as pcap (pcapng
    /// when the input is pcapng), for tshark or Wireshark.
    #[arg(
        short = 'w',
        long = "write",
        value_name = "FILE",
        help_heading = "Input"
    )]
    pub(crate) write: Option<std::path::PathBuf>,

    /// Stop after N Kafka messages have been shown (after the filters).
    #[arg(short = 'c', long = "count", value_name = "N", help_heading = "Input")]
    pub(crate) count: Option<u64>,

    /// Read hex text (plain hex, xxd, hexdump -C, od -An -tx1 or tshark -x dumps) instead of a capture.
    #[arg(long, help_heading = "Input")]
    pub(crate) hex: bool,

    /// Broker port (repeatable); connections to it are Kafka.
    #[arg(short = 'p', long = "port", value_name = "PORT", default_values_t = vec![9092u16], help_heading = "Input")]
    pub(crate) ports: Vec<u16>,

    /// Do not look for Kafka on other ports by what a client sends first.
    #[arg(long, help_heading = "Input")]
    pub(crate) no_detect: bool,

    /// Largest frame size accepted; a size prefix above it is garbage (bytes, or with K/M/G).
    #[arg(long, value_name = "SIZE", default_value = "100M", value_parser = parse_frame_size, help_heading = "Input")]
    pub(crate) max_frame: usize,

    /// API of a response whose request is not in the hex input (name or number).
    #[arg(long, value_name = "K", help_heading = "Input")]
    pub(crate) api_key: Option<String>,

    /// API version of a response whose request is not in the hex input.
    #[arg(
        long,
        value_name = "V",
        allow_negative_numbers = true,
        help_heading = "Input"
    )]
    pub(crate) api_version: Option<i16>,

    /// Decode every hex frame as a response (with --api-key and --api-version, or by pairing).
    #[arg(long, help_heading = "Input")]
    pub(crate) response: bool,

    /// Print the annotated object tree of each message.
    #[arg(short = 'V', long = "tree", help_heading = "Views")]
    pub(crate) tree: bool,

    /// Print the byte layout of each message, coloured by region.
    #[arg(short = 'x', long = "bytes", help_heading = "Views")]
    pub(crate) bytes: bool,

    /// One JSON object per message (NDJSON); with --stats, the statistics as one JSON object.
    #[arg(long, help_heading = "Views")]
    pub(crate) json: bool,

    /// With --json: every value becomes {value, offset, length}.
    #[arg(long, help_heading = "Views")]
    pub(crate) json_spans: bool,

    /// Statistics tables after the messages (per API, connection, error code, version skew, capture health).
    #[arg(long, help_heading = "Views")]
    pub(crate) stats: bool,

    /// Print no messages (with --stats: only the statistics).
    #[arg(short = 'q', long, help_heading = "Views")]
    pub(crate) quiet: bool,

    /// Print descriptions and byte values whole instead of cutting them.
    #[arg(long, help_heading = "Views")]
    pub(crate) wide: bool,

    /// With -x: a character column beside the bytes, as xxd prints.
    #[arg(long, help_heading = "Views")]
    pub(crate) ascii: bool,

    /// Write each message as soon as it is complete (the default on a terminal and for input
    /// that is not a regular file: pipes, standard input).
    #[arg(short = 'l', long, help_heading = "Views")]
    pub(crate) line_buffered: bool,

    /// Time column format, as tshark's -t: r relative to the first packet (default), a
    /// absolute local time, ad with the date, d delta to the previous packet, dd to the previous
    /// message shown, e epoch, u UTC, ud UTC with the date.
    #[arg(short = 't', long = "time-format", value_name = "FORMAT", value_parser = parse_time_format, default_value = "r", help_heading = "Views")]
    pub(crate) time_format: kdissect::render::summary::TimeFormat,

    /// When to colour output (NO_COLOR in the environment also turns it off).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, help_heading = "Views")]
    pub(crate) color: ColorChoice,

    /// No progress bar on stderr.
    #[arg(long, help_heading = "Views")]
    pub(crate) no_progress: bool,

    /// Show passwords, tokens and other secrets (SASL PLAIN passwords, SCRAM proofs, OAUTHBEARER
    /// tokens, delegation-token HMACs), which are masked with `*` by default.
    #[arg(long, help_heading = "Views")]
    pub(crate) show_secrets: bool,

    /// Bytes of a record key or value printed (text or hex); --wide prints them whole.
    #[arg(long, value_name = "N", default_value_t = kdissect::render::value::MAX_VALUE_BYTES, help_heading = "Views")]
    pub(crate) max_value: usize,

    /// Array elements (and records per batch) kept per array; the rest are decoded and summarised.
    #[arg(long, value_name = "N", default_value_t = kdissect::kafka::decode::MAX_ELEMENTS, help_heading = "Limits")]
    pub(crate) max_elements: usize,

    /// Memory per direction for data waiting for a hole to fill, out of order or held for the other direction (K/M/G; each piece counts its bytes plus 160 for bookkeeping); past it the hole is declared lost.
    #[arg(long, value_name = "SIZE", default_value = "16M", value_parser = parse_size, help_heading = "Limits")]
    pub(crate) max_buffered: usize,

    /// The same memory for all connections together (K/M/G); past it the direction holding the most has its holes declared lost.
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = parse_size, help_heading = "Limits")]
    pub(crate) max_buffered_total: usize,

    /// Requests waiting for their response per connection; past it the oldest is dropped.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10_000,
        help_heading = "Limits"
    )]
    pub(crate) max_pending: usize,

    /// TCP connections tracked at once (about 5 KiB each); past it the one idle longest is
    /// dropped, and picked up mid-stream if it speaks again.
    #[arg(
        long,
        value_name = "N",
        default_value_t = kdissect::tcp::Limits::default().max_connections,
        help_heading = "Limits"
    )]
    pub(crate) max_connections: usize,

    /// Bytes the record batches of one message may decompress to, together (K/M/G suffixes); past it the records are cut.
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = parse_size, help_heading = "Limits")]
    pub(crate) max_decompressed: usize,

    /// Nodes of the tree kept per message over all its arrays and records (about 250 bytes
    /// each); past it elements are decoded and summarised, as past --max-elements.
    #[arg(long, value_name = "N", default_value_t = kdissect::kafka::decode::MAX_NODES, help_heading = "Limits")]
    pub(crate) max_nodes: usize,

    /// With --hex: name the field that covers this byte offset of the input (decimal or 0x hex).
    #[arg(long, value_name = "OFFSET", value_parser = parse_offset, help_heading = "Views")]
    pub(crate) at: Option<usize>,

    /// Only exchanges of these APIs (names or keys, comma-separated: metadata,60).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        help_heading = "Filters (whole exchanges)"
    )]
    pub(crate) api: Vec<String>,

    /// Only exchanges on this TCP stream.
    #[arg(long, value_name = "N", help_heading = "Filters (whole exchanges)")]
    pub(crate) stream: Option<u32>,

    /// Only exchanges with this correlation id.
    #[arg(
        long,
        value_name = "N",
        allow_hyphen_values = true,
        help_heading = "Filters (whole exchanges)"
    )]
    pub(crate) correlation_id: Option<i32>,

    /// Only exchanges whose request has this client_id.
    #[arg(long, value_name = "ID", help_heading = "Filters (whole exchanges)")]
    pub(crate) client_id: Option<String>,

    /// Only exchanges whose request or response matches this display filter
    /// (docs/filters.md): -Y 'api == Metadata && latency > 50ms'.
    #[arg(
        short = 'Y',
        long = "display-filter",
        value_name = "EXPR",
        help_heading = "Filters (whole exchanges)"
    )]
    pub(crate) display_filter: Option<String>,

    /// Only exchanges that carry a non-zero error code.
    #[arg(long, help_heading = "Filters (whole exchanges)")]
    pub(crate) errors: bool,

    /// Only exchanges that name this topic (by name, or by an id whose name is known).
    #[arg(long, value_name = "NAME", help_heading = "Filters (whole exchanges)")]
    pub(crate) topic: Option<String>,

    /// Let --stats count every message, not only the exchanges the filters keep.
    #[arg(long, help_heading = "Filters (whole exchanges)")]
    pub(crate) stats_all: bool,

    /// The default now: statistics count the exchanges the filters keep.
    #[arg(long, hide = true, conflicts_with = "stats_all")]
    pub(crate) stats_filtered: bool,
}

impl Cli {
    pub(crate) fn decode_options(&self) -> kdissect::kafka::decode::DecodeOptions {
        // Summary lines and statistics read the body's first two levels, the error codes and
        // the record counts: deeper nodes and the records inside batches need not be kept.
        // A display filter, and --topic, may look at any depth, so they keep the whole tree.
        let summary_only = !self.tree
            && !self.bytes
            && !self.json
            && !self.hex
            && self.display_filter.is_none()
            && self.topic.is_none();
        kdissect::kafka::decode::DecodeOptions {
            max_elements: self.max_elements.max(1),
            max_decompressed: self.max_decompressed,
            max_nodes: self.max_nodes.max(1),
            keep_depth: if summary_only { 2 } else { usize::MAX },
            records: !summary_only,
            ..Default::default()
        }
    }
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

/// A frame is at least a size prefix and a header: anything under 64 bytes would reject every
/// real frame, which is a mistake in the option, not in the capture.
fn parse_frame_size(s: &str) -> Result<usize, String> {
    let n = parse_size(s)?;
    if n < 64 {
        return Err(format!(
            "{n} bytes is too small for a Kafka frame (give at least 64, e.g. 1M)"
        ));
    }
    Ok(n)
}

/// Marks the one element of each array of an example as a sample, in its length's description.
fn sample_elements(n: &mut Node) {
    let one = matches!(n.value, kdissect::kafka::Value::Array(1));
    for c in n.children.iter_mut() {
        if one && c.kind == NodeKind::Length {
            c.desc = "one sample element follows".into();
        }
        sample_elements(c);
    }
}

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

/// Sections of the manual clap does not write: exit status and environment.
const MAN_EXIT_STATUS: &str = r#".SH "EXIT STATUS"
.TP
0
Every frame decoded cleanly (messages of APIs kdissect has no tables for do not count against
it).
.TP
1
Some frame was malformed, lost in a gap, or could not be decoded, or a capture could be read
only in part; everything is still shown as far as it goes.
.TP
2
Usage error, unreadable input, text that is not hex, or a write error other than a closed
pipe. A closed pipe (\fBkdissect cap.pcap | head\fR) ends the run quietly with 0.
.TP
130, 143
Interrupted by SIGINT or SIGTERM: what was decoded is written and the end-of-run notices are
printed first.
"#;

const MAN_ENVIRONMENT: &str = r#".SH ENVIRONMENT
.TP
NO_COLOR
When set and not empty, no colour (as \fB\-\-color never\fR) unless \fB\-\-color always\fR.
.TP
COLUMNS
Width the \fB\-\-stats\fR tables are fitted into on a terminal.
.TP
TZ
Time zone of the \fB\-t a\fR and \fB\-t ad\fR time columns.
.TP
TMPDIR
Where \fB\-w\fR keeps a copy of input read from a pipe or a live interface until it is written.
"#;

/// The manual page: clap's sections, with exit status and environment before the version.
fn man_page(c: clap::Command) -> io::Result<Vec<u8>> {
    let man = clap_mangen::Man::new(c);
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    man.render_subcommands_section(&mut page)?;
    man.render_extra_section(&mut page)?;
    page.extend_from_slice(MAN_EXIT_STATUS.as_bytes());
    page.extend_from_slice(MAN_ENVIRONMENT.as_bytes());
    man.render_version_section(&mut page)?;
    Ok(page)
}

fn parse_autostop(s: &str) -> Result<std::time::Duration, String> {
    let secs = s
        .strip_prefix("duration:")
        .ok_or_else(|| format!("{s:?}: the condition kdissect knows is duration:SECONDS"))?;
    secs.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x > 0.0)
        .map(std::time::Duration::from_secs_f64)
        .ok_or_else(|| format!("{secs:?} is not a number of seconds"))
}

fn parse_time_format(s: &str) -> Result<kdissect::render::summary::TimeFormat, String> {
    s.parse()
}

fn parse_offset(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => usize::from_str_radix(h, 16),
        None => t.parse::<usize>(),
    };
    r.map_err(|_| format!("{s:?} is not an offset (examples: 30, 0x1e)"))
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

fn subcommand(cmd: &Commands) -> ExitCode {
    let mut c = Cli::command();
    let mut out = io::stdout();
    match cmd {
        Commands::Completions { shell } => {
            let sh = match shell {
                Shell::Bash => clap_complete::Shell::Bash,
                Shell::Zsh => clap_complete::Shell::Zsh,
                Shell::Fish => clap_complete::Shell::Fish,
            };
            // Into memory first: clap_complete panics when its output fails.
            let mut script = Vec::new();
            clap_complete::generate(sh, &mut c, "kdissect", &mut script);
            match out.write_all(&script).and_then(|()| out.flush()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => write_failed(&e),
            }
        }
        Commands::Man => match man_page(c).and_then(|page| out.write_all(&page)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => write_failed(&e),
        },
        Commands::Example {
            api,
            version,
            request,
            response,
            tree,
            bytes,
            print_hex,
            color,
        } => example(
            api,
            *version,
            *request,
            *response,
            Views {
                tree: *tree || !*bytes,
                bytes: *bytes || !*tree,
            },
            *print_hex,
            *color,
        ),
    }
}

fn example(
    api: &str,
    version: Option<i16>,
    request: bool,
    response: bool,
    views: Views,
    print_hex: bool,
    color: ColorChoice,
) -> ExitCode {
    use kdissect::kafka::schema::registry;
    let Some(key) = names::api_key_from_str(api) else {
        return fail(format!(
            "{api:?} is neither a number nor a Kafka API name (try metadata, 3, describe-cluster)"
        ));
    };
    let reg = registry();
    let versions = reg.versions(key, Direction::Request);
    let Some(&newest) = versions.last() else {
        return fail(format!("API key {key} is not one kdissect has tables for"));
    };
    let v = version.unwrap_or(newest);
    if !versions.contains(&v) {
        let (lo, hi) = (versions.first().copied().unwrap_or(0), newest);
        return fail(format!(
            "{} has versions {lo}-{hi}, not {v}",
            kdissect::kafka::message::api_display_name(key)
        ));
    }
    let style = Style {
        color: match color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        },
        ..Style::default()
    };
    let mut dirs = Vec::new();
    if !response {
        dirs.push(Direction::Request);
    }
    if !request {
        dirs.push(Direction::Response);
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    for d in dirs {
        let Some(spec) = reg.get_for(key, d, v) else {
            continue;
        };
        let frame = kdissect::kafka::example::frame(spec, v);
        let mut msg = match d {
            Direction::Request => kdissect::kafka::decode_request(&frame),
            Direction::Response => kdissect::kafka::decode_response(&frame, key, v),
        };
        // An example's arrays hold a sample element, and the pages say so.
        sample_elements(&mut msg.root);
        let r = (|| -> io::Result<()> {
            if print_hex {
                writeln!(out, "{}", ::hex::encode(&frame))?;
            }
            print_message(&mut out, &msg, &frame, 0, views, style)
        })();
        if let Err(e) = r {
            return write_failed(&e);
        }
    }
    match out.flush() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => write_failed(&e),
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return clap_exit(e),
    };
    if let Some(cmd) = &cli.command {
        return subcommand(cmd);
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
    run_hex(&cli, &inputs, style)
}

/// Why a hex input stopped: it could not be read or parsed, or the output failed.
enum HexFailure {
    Input(String),
    Write(io::Error),
}

/// Longest piece of a line handed to the hex parser at once: a longer line (plain hex with no
/// line breaks) is cut at its last space, so memory does not grow with it.
const HEX_PIECE: usize = 1 << 20;

/// Decoding hex input as it is read: lines in, frames out.
struct HexRun<'a, W: Write> {
    out: W,
    cli: &'a Cli,
    hint: ResponseHint,
    views: Views,
    style: Style,
    conv: Conversation,
    topics: TopicNames,
    /// Write each frame out at once (input from a pipe or a terminal).
    flush_each: bool,
    /// Frames cut so far, over all inputs.
    index: usize,
    malformed: usize,
    found_at: bool,
}

impl<W: Write> HexRun<'_, W> {
    fn input(&mut self, name: &str, display: &str) -> Result<(), HexFailure> {
        let opened = input::open(name)
            .map_err(|e| HexFailure::Input(format!("cannot read {display}: {e}")))?;
        self.flush_each = !opened.regular || io::stdout().is_terminal();
        let mut reader = io::BufReader::with_capacity(1 << 16, opened.reader);
        let mut stream = hex::HexStream::default();
        let mut cutter = frames::Cutter::new(self.cli.max_frame);
        let mut bytes_seen = 0u64;
        let mut piece = Vec::new();
        let mut carry = Vec::new();
        loop {
            piece.clear();
            piece.append(&mut carry);
            let n = (&mut reader)
                .take(HEX_PIECE as u64)
                .read_until(b'\n', &mut piece)
                .map_err(|e| HexFailure::Input(format!("cannot read {display}: {e}")))?;
            if n == 0 && piece.is_empty() {
                break;
            }
            if n > 0 && !piece.ends_with(b"\n") && piece.len() >= HEX_PIECE {
                // A very long line: parse up to its last space, keep the rest for later.
                let cut = piece
                    .iter()
                    .rposition(|b| b.is_ascii_whitespace())
                    .unwrap_or(piece.len());
                carry = piece.split_off(cut);
            }
            let text = String::from_utf8_lossy(&piece);
            let text = text.strip_suffix('\n').unwrap_or(&text);
            let text = text.strip_suffix('\r').unwrap_or(text);
            let bytes = stream
                .line(text)
                .map_err(|e| HexFailure::Input(format!("{display}: {e}")))?;
            bytes_seen += bytes.len() as u64;
            cutter.push(&bytes);
            self.drain(&mut cutter, stream.directive)?;
            if n == 0 {
                break;
            }
        }
        let bytes = stream.finish();
        bytes_seen += bytes.len() as u64;
        cutter.push(&bytes);
        self.drain(&mut cutter, stream.directive)?;
        if let Some(cut) = cutter.finish() {
            self.cut(cut, stream.directive)?;
        }
        if bytes_seen == 0 {
            return Err(HexFailure::Input(format!("{display}: no hex bytes found")));
        }
        if stream.packet_count > 0 && !self.cli.quiet {
            eprintln!(
                "kdissect: {display}: a dump of {} packets; their TCP payloads decoded in order",
                stream.packet_count
            );
        }
        if let (Some(at), false) = (self.cli.at, self.found_at) {
            return Err(HexFailure::Input(format!(
                "{display}: offset {at} is past the end of the input ({bytes_seen} bytes)"
            )));
        }
        Ok(())
    }

    fn drain(
        &mut self,
        cutter: &mut frames::Cutter,
        directive: Option<hex::Directive>,
    ) -> Result<(), HexFailure> {
        while let Some(cut) = cutter.next_cut() {
            self.cut(cut, directive)?;
        }
        Ok(())
    }

    /// A first comment line `# response api_key=K api_version=V` says what a lone frame is,
    /// unless the command line says otherwise; a request names its API in its own header.
    fn hint(&self, directive: Option<hex::Directive>) -> ResponseHint {
        match directive {
            Some(d) if d.response && self.hint.api_key.is_none() && !self.hint.force_response => {
                ResponseHint {
                    api_key: d.api_key,
                    api_version: d.api_version,
                    force_response: true,
                }
            }
            _ => self.hint,
        }
    }

    fn cut(
        &mut self,
        cut: frames::Cut,
        directive: Option<hex::Directive>,
    ) -> Result<(), HexFailure> {
        let r = match cut {
            frames::Cut::Frame { offset, bytes, .. } => {
                self.frame(offset as usize, &bytes, directive)
            }
            frames::Cut::Skipped { offset, len, size } => {
                self.malformed += 1;
                writeln!(
                    self.out,
                    "!! input offset 0x{offset:04x}: size prefix {size} cannot start a frame (negative, too small, or over --max-frame): skipped {len} bytes to the next frame\n"
                )
            }
        };
        r.and_then(|()| {
            if self.flush_each {
                self.out.flush()
            } else {
                Ok(())
            }
        })
        .map_err(HexFailure::Write)
    }

    fn frame(
        &mut self,
        offset: usize,
        frame: &[u8],
        directive: Option<hex::Directive>,
    ) -> io::Result<()> {
        let hint = self.hint(directive);
        let mut msg = self.conv.decode(frame, &hint);
        self.topics.observe(&mut msg);
        self.index += 1;
        if !msg.is_clean() {
            self.malformed += 1;
        }
        let style = self.style;
        if let Some(at) = self.cli.at {
            if at >= offset && at < offset + frame.len() {
                self.found_at = true;
                let shown = render::masked(&msg, frame, style);
                return print_at(
                    &mut self.out,
                    &msg,
                    &shown,
                    offset,
                    at - offset,
                    self.index,
                    style,
                );
            }
            return Ok(());
        }
        if self.cli.json {
            let meta = Meta {
                frame: self.index as u64,
                input_offset: Some(offset),
                ..Meta::default()
            };
            let shown = render::masked(&msg, frame, style);
            let j = render::json::message(&msg, &shown, &meta, self.cli.json_spans);
            return writeln!(self.out, "{j}");
        }
        print_message(&mut self.out, &msg, frame, offset, self.views, style)
    }
}

fn run_hex(cli: &Cli, inputs: &[String], style: Style) -> ExitCode {
    let api_key = match cli.api_key.as_deref().map(|s| (s, names::api_key_from_str(s))) {
        None => None,
        Some((_, Some(k))) => Some(k),
        Some((s, None)) if s.trim().parse::<i64>().is_ok() => {
            return fail(format!("--api-key {s} is out of range: API keys are 16-bit (0 to 32767)"))
        }
        Some((s, None)) => {
            return fail(format!(
                "--api-key {s:?} is neither a number nor a Kafka API name (try metadata, 3, api-versions)"
            ))
        }
    };
    if api_key.is_some() != cli.api_version.is_some() {
        return fail("--api-key and --api-version go together: a response is decoded with both");
    }
    if cli.stats
        || !cli.api.is_empty()
        || cli.stream.is_some()
        || cli.client_id.is_some()
        || cli.errors
        || cli.topic.is_some()
        || cli.display_filter.is_some()
    {
        return fail("--stats and the exchange filters work on captures, not on --hex input");
    }
    let hint = ResponseHint {
        api_key,
        api_version: cli.api_version,
        force_response: cli.response,
    };
    let views = Views {
        tree: cli.tree || !(cli.bytes || cli.json),
        bytes: cli.bytes || !(cli.tree || cli.json),
    };
    let stdout = io::stdout();
    let mut run = HexRun {
        out: io::BufWriter::new(stdout.lock()),
        cli,
        hint,
        views,
        style,
        conv: Conversation::with_options(cli.decode_options()),
        topics: TopicNames::default(),
        flush_each: false,
        index: 0,
        malformed: 0,
        found_at: false,
    };
    for name in inputs {
        let display = if name == "-" {
            "standard input"
        } else {
            name.as_str()
        };
        match run.input(name, display) {
            Ok(()) => {}
            Err(HexFailure::Write(e)) => return write_failed(&e),
            Err(HexFailure::Input(e)) => {
                let _ = run.out.flush();
                return fail(e);
            }
        }
    }
    let (malformed, total) = (run.malformed, run.index);
    let mut out = run.out;
    if let Err(e) = out.flush() {
        return write_failed(&e);
    }
    drop(out);
    if malformed > 0 && cli.at.is_none() {
        eprintln!("kdissect: {malformed} of {total} frames malformed or undecodable");
    }
    if let Some(sig) = interrupt::received() {
        return ExitCode::from(interrupt::exit_status(sig));
    }
    if malformed > 0 && cli.at.is_none() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `--at`: the leaf that covers `off` in the frame, with the path to it.
fn print_at(
    out: &mut impl Write,
    msg: &Message,
    frame: &[u8],
    input_offset: usize,
    off: usize,
    index: usize,
    style: Style,
) -> io::Result<()> {
    fn find<'a>(n: &'a Node, off: usize, path: &mut Vec<&'a Node>) -> bool {
        path.push(n);
        if n.children.is_empty() {
            if n.offset <= off && off < n.end() && n.kind != NodeKind::Error {
                return true;
            }
        } else {
            for c in &n.children {
                if c.offset <= off && off < c.end() && find(c, off, path) {
                    return true;
                }
            }
        }
        path.pop();
        false
    }
    let mut path = Vec::new();
    writeln!(
        out,
        "input offset {} (0x{:04x}) is byte 0x{off:04x} of frame {index} ({}, which starts at input offset 0x{input_offset:04x})",
        input_offset + off,
        input_offset + off,
        msg.root.name
    )?;
    if !find(&msg.root, off, &mut path) {
        return writeln!(out, "no decoded field covers it");
    }
    let names: Vec<String> = path
        .iter()
        .skip(1)
        .map(|n| match n.index {
            Some(i) => format!("[{i}]"),
            None => n.name.to_string(),
        })
        .collect();
    let mut p = String::new();
    for s in names {
        if !p.is_empty() && !s.starts_with('[') {
            p.push('.');
        }
        p.push_str(&s);
    }
    let leaf = path.last().copied().unwrap_or(&msg.root);
    writeln!(out, "field: {p}")?;
    writeln!(out, "  {}", render::tree::node_line(leaf, frame, style))?;
    if let Some(v) = value::text(leaf, frame, true) {
        writeln!(
            out,
            "  value {v}, bytes 0x{:04x}..0x{:04x} of the frame",
            leaf.offset,
            leaf.end()
        )?;
    }
    if let Some(e) = &msg.error {
        writeln!(out, "  (decoding of this frame stopped: {e})")?;
    }
    Ok(())
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
            let assumed = msg
                .assumed_version
                .map(|a| format!(", assumed_version {a}"))
                .unwrap_or_default();
            format!(
                "{} v{v}, {hname} header v{hv}, {size} bytes on the wire{assumed}",
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
    let frame = &render::masked(msg, frame, style)[..];
    if views.tree {
        render::tree::write(out, &msg.root, frame, style)?;
    }
    if views.bytes {
        if views.tree {
            writeln!(out)?;
        }
        let hidden = render::hidden_spans(msg, style);
        render::bytes::write_masked(out, &msg.root, frame, hidden, style)?;
    }
    if let Some(notice) = render::assumed_version_notice(msg) {
        writeln!(out, "{notice}")?;
    }
    for d in &msg.diagnoses {
        let m = render::with_hint(&d.message, d.kind);
        writeln!(out, "!! malformed at 0x{:04x}: {m}", d.offset)?;
    }
    if let Some(e) = &msg.error {
        let m = render::with_hint(&e.to_string(), e.kind.problem()).into_owned();
        writeln!(out, "!! decoding stopped: {m}")?;
    }
    writeln!(out)
}
