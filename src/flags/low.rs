//! The command line as clap reads it: every flag, its help text and its value parser. What
//! the flags mean together is decided once, in [`super::hi`].

use clap::builder::{PossibleValue, StringValueParser, TypedValueParser};
use clap::{Parser, Subcommand, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// `-T`: tshark's output formats that kdissect writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    Fields,
    Json,
    Ek,
    Text,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum WriteFormat {
    Pcapng,
    Pcap,
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
    /// Help on a topic: `kdissect help filters` (the filter language and every field, with
    /// its type, and Wireshark's names), or on a subcommand.
    Help {
        /// `filters`, or a subcommand (completions, man, example).
        topic: Option<String>,
    },
    /// Build and decode the smallest legal instance of an API: `kdissect example metadata --version 13`.
    Example {
        /// API name or key (metadata, 3, describe-cluster, ...).
        #[arg(value_parser = ApiName, hide_possible_values = true)]
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
  tcpdump -i eth0 -U --immediate-mode -w - port 9092 | kdissect -
                                        decode a live capture as it comes
  kdissect -i any -a duration:60 -w meta.pcap --api metadata
                                        a minute live; keep the Metadata ones
  kdissect --json capture.pcap | jq -c 'select(.latency_us > 50000)'
  xxd frame.bin | kdissect --hex -V     a frame from a hex dump, as a tree
  kdissect --hex --at 30 frame.hex      which field covers byte 30
  kdissect -p 9093 --keylog keys.log capture.pcap
                                        Kafka over TLS, decrypted (marked tls)
  kdissect help filters                 the filter language and every field";

/// Kafka wire-protocol dissector: decodes captures (pcap, pcapng) and hex frames byte by byte.
#[derive(Debug, Parser)]
#[command(
    name = "kdissect",
    version,
    about,
    disable_version_flag = true,
    args_conflicts_with_subcommands = true,
    disable_help_subcommand = true,
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

    /// Capture filter (BPF, tcpdump syntax) instead of the one made from the -p ports (without
    /// -p: the ports Kafka commonly uses, 9092-9098, 9192, 9194, 9196, 9198, 9292, 19092, 29092,
    /// 39092).
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

    /// Write the packets of the messages shown (after the filters) to FILE, for tshark or
    /// Wireshark: pcapng, as tshark writes, with packet comments where packets were left out
    /// (kdissect then reads the cut back whole); `-F pcap` for classic pcap.
    #[arg(
        short = 'w',
        long = "write",
        value_name = "FILE",
        help_heading = "Input"
    )]
    pub(crate) write: Option<std::path::PathBuf>,

    /// Format of the -w file: pcapng, or pcap (which has no place to note what was left out:
    /// read back, those places are gaps).
    #[arg(
        short = 'F',
        long = "write-format",
        value_enum,
        value_name = "FORMAT",
        default_value = "pcapng",
        help_heading = "Input"
    )]
    pub(crate) write_format: WriteFormat,

    /// Stop after N Kafka messages have been shown (after the filters; N exchanges under an
    /// exchange filter, without --messages).
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

    /// Decrypt TLS with the session secrets in FILE: an NSS key log, as SSLKEYLOGFILE and
    /// the clients' key log options write it (repeatable). Secrets a pcapng file carries
    /// are read without it. Decrypted messages are marked tls in the summary and "tls": true
    /// in JSON; each TLS connection gets a line with its version, suite, SNI and keys.
    #[arg(long = "keylog", value_name = "FILE", help_heading = "TLS")]
    pub(crate) keylog: Vec<std::path::PathBuf>,

    /// Also read the key log the SSLKEYLOGFILE environment variable names.
    #[arg(long = "keylog-env", help_heading = "TLS")]
    pub(crate) keylog_env: bool,

    /// With -w: embed the secrets of the TLS connections written in the pcapng file (a
    /// Decryption Secrets Block), so that the cut carries its keys.
    #[arg(long = "inject-secrets", help_heading = "TLS")]
    pub(crate) inject_secrets: bool,

    /// Largest frame size accepted; a size prefix above it is garbage (bytes, or with K/M/G).
    #[arg(long, value_name = "SIZE", default_value = "100M", value_parser = parse_frame_size, help_heading = "Input")]
    pub(crate) max_frame: usize,

    /// API of a response whose request is not in the hex input (name or number).
    #[arg(long, value_name = "K", value_parser = ApiName, hide_possible_values = true, help_heading = "Input")]
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

    /// With -V: a compact tree that fits 100 columns (no descriptions, no length prefixes;
    /// values too long for their line cut with `…`).
    #[arg(long, help_heading = "Views")]
    pub(crate) brief: bool,

    /// Print the byte layout of each message, coloured by region (repeated rows become `*`).
    #[arg(short = 'x', long = "bytes", help_heading = "Views")]
    pub(crate) bytes: bool,

    /// One JSON object per message (NDJSON); with --stats, the statistics as one JSON object.
    #[arg(long, help_heading = "Views")]
    pub(crate) json: bool,

    /// With --json: every value becomes {value, offset, length}.
    #[arg(long, help_heading = "Views")]
    pub(crate) json_spans: bool,

    /// With --json: only these fields of each message, comma-separated, named as in -Y (built-ins such as corr,topic,latency, or schema paths such as Metadata.Topics[*].Name).
    #[arg(long, value_name = "LIST", help_heading = "Views")]
    pub(crate) fields: Option<String>,

    /// Output as tshark's -T: fields (tab-separated values of the -e fields, one line per
    /// message), json (the NDJSON of --json), ek (Elasticsearch bulk-index pairs), text (the
    /// default views).
    #[arg(
        short = 'T',
        long = "output-format",
        value_name = "FORMAT",
        value_enum,
        help_heading = "Views"
    )]
    pub(crate) output_format: Option<OutputFormat>,

    /// With -T fields, ek or json: a field to print (repeatable; kdissect's names or
    /// Wireshark's, as in -Y: -e frame.number -e kafka.api_key -e corr).
    #[arg(
        short = 'e',
        long = "field",
        value_name = "FIELD",
        help_heading = "Views"
    )]
    pub(crate) field: Vec<String>,

    /// With -T fields: tshark's -E options, header=y|n, separator=/t|/s|C, occurrence=f|l|a,
    /// aggregator=,|/s|C, quote=d|s|n, escape=y|n, bom=y|n (repeatable, or comma-separated).
    #[arg(
        short = 'E',
        long = "field-option",
        value_name = "OPTION",
        help_heading = "Views"
    )]
    pub(crate) field_option: Vec<String>,

    /// Statistics tables after the messages (capture health, error codes, per API, version skew per node, connections), fitted to COLUMNS or the terminal (100 columns through a pipe).
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
    #[arg(long, value_name = "N", default_value_t = kdissect::kafka::MAX_ELEMENTS, help_heading = "Limits")]
    pub(crate) max_elements: usize,

    /// Memory per direction for data waiting for a hole to fill, out of order or held for the other direction (K/M/G; each piece counts its bytes plus 160 for bookkeeping); past it the hole is declared lost.
    #[arg(long, value_name = "SIZE", default_value = "16M", value_parser = parse_size, help_heading = "Limits")]
    pub(crate) max_buffered: usize,

    /// The same memory for all connections together (K/M/G); past it the direction holding the most has its holes declared lost.
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = parse_size, help_heading = "Limits")]
    pub(crate) max_buffered_total: usize,

    /// Memory for frames still arriving and requests waiting for their response, all connections together (K/M/G); past it the connection holding the most lets go of them.
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = parse_size, help_heading = "Limits")]
    pub(crate) max_frames_total: usize,

    /// Bytes one TLS connection may decrypt on trial while looking for its place after lost records (K/M/G), over its life; past it that direction is no longer decrypted.
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = parse_size, help_heading = "Limits")]
    pub(crate) max_tls_search: usize,

    /// Memory the analyses' stores may hold together (K/M/G): lag samples, end-to-end batches and latencies, throughput series, requests waiting for their answers; each gets a fixed share, past which it merges or lets go of its oldest entries, counted (docs/robustness.md).
    #[arg(long, value_name = "SIZE", default_value = "12M", value_parser = parse_size, help_heading = "Limits")]
    pub(crate) analyses_memory: usize,

    /// The same for all TLS connections together (K/M/G).
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = parse_size, help_heading = "Limits")]
    pub(crate) max_tls_search_total: usize,

    /// Requests waiting for their response per connection; past it the oldest is dropped.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10_000,
        help_heading = "Limits"
    )]
    pub(crate) max_pending: usize,

    /// TCP connections tracked at once (under 1 KiB each when idle, at most about 5.5 KiB); past
    /// it the one idle longest is dropped, and picked up mid-stream if it speaks again.
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

    /// Largest window a zstd-compressed input (`.pcap.zst`) may declare (K/M/G); decoding holds
    /// up to twice the window. Past it the input is refused, as `zstd -d` does (`zstd --long=31`
    /// writes 2G).
    #[arg(long, value_name = "SIZE", default_value = "128M", value_parser = parse_size, help_heading = "Limits")]
    pub(crate) max_zstd_window: usize,

    /// Nodes of the tree kept per message over all its arrays and records (about 250 bytes
    /// each); past it elements are decoded and summarised, as past --max-elements.
    #[arg(long, value_name = "N", default_value_t = kdissect::kafka::MAX_NODES, help_heading = "Limits")]
    pub(crate) max_nodes: usize,

    /// With --hex: name the field that covers this byte offset of the input (decimal or 0x hex).
    #[arg(long, value_name = "OFFSET", value_parser = parse_offset, help_heading = "Views")]
    pub(crate) at: Option<usize>,

    /// Only exchanges of these APIs (names or keys, comma-separated: metadata,60).
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = ApiName,
        hide_possible_values = true,
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
    /// (`kdissect help filters`): -Y 'api == Metadata && latency > 50ms'.
    #[arg(
        short = 'Y',
        long = "display-filter",
        value_name = "EXPR",
        help_heading = "Filters (whole exchanges)"
    )]
    pub(crate) display_filter: Option<String>,

    /// The filters select single messages, not exchanges, as tshark's -Y selects packets: each
    /// message is judged alone (the flags too) and shown without its other half.
    #[arg(long, help_heading = "Filters (whole exchanges)")]
    pub(crate) messages: bool,

    /// Only messages completed at or after TIME: seconds or a duration after the first packet
    /// (30, 2.5, 90s), or a time (2026-11-30T12:00:00Z; local without a zone; @SECONDS).
    #[arg(long, value_name = "TIME", help_heading = "Filters (whole exchanges)")]
    pub(crate) since: Option<kdissect::filter::TimeBound>,

    /// Only messages completed before TIME (the forms of --since).
    #[arg(long, value_name = "TIME", help_heading = "Filters (whole exchanges)")]
    pub(crate) until: Option<kdissect::filter::TimeBound>,

    /// Only exchanges that carry a non-zero error code.
    #[arg(long, help_heading = "Filters (whole exchanges)")]
    pub(crate) errors: bool,

    /// Only exchanges that name this topic (by name, or by an id whose name is known).
    #[arg(long, value_name = "NAME", help_heading = "Filters (whole exchanges)")]
    pub(crate) topic: Option<String>,

    /// Let --stats count every message, not only the exchanges the filters keep.
    #[arg(long, help_heading = "Filters (whole exchanges)")]
    pub(crate) stats_all: bool,

    /// Connections given a row of their own in the --stats table, the busiest first (`all`
    /// for every one); the rest are summed in one row. JSON lists them all.
    #[arg(long, value_name = "N|all", default_value = "8", value_parser = parse_rows, help_heading = "Views")]
    pub(crate) stats_connections: Rows,

    /// Rows of each other --stats and --analyses table, the largest first (`all` for every
    /// one); the rest are told in one "and N more" row. JSON and --report list them all.
    #[arg(long, value_name = "N|all", default_value = "8", value_parser = parse_rows, help_heading = "Views")]
    pub(crate) stats_rows: Rows,

    /// The default now: statistics count the exchanges the filters keep.
    #[arg(long, hide = true, conflicts_with = "stats_all")]
    pub(crate) stats_filtered: bool,

    /// With --stats: sections that analyse the traffic, all of them when given bare, or some
    /// with --analyses=LIST (comma-separated): lag, latency (end to end), throughput, groups,
    /// versions (per client software), findings. See docs/analyses.md.
    #[arg(long, value_name = "LIST", num_args = 0..=1, require_equals = true, default_missing_value = "all", value_parser = parse_analyses, help_heading = "Views")]
    pub(crate) analyses: Option<kdissect::analyses::Which>,

    /// The width of the analyses' time buckets (500ms, 10s, 1m; default: about 60 over the
    /// capture); implies --analyses. Live, with --stats, the statistics are printed at the
    /// end of every interval.
    #[arg(long, value_name = "DURATION", value_parser = parse_interval, help_heading = "Views")]
    pub(crate) interval: Option<i64>,

    /// Write the statistics and every analysis as one self-contained HTML page (tables and
    /// inline SVG charts); implies --analyses. Alone, prints no message line.
    #[arg(long, value_name = "FILE.html", help_heading = "Views")]
    pub(crate) report: Option<std::path::PathBuf>,
}

/// An API, by name or key, as text: checked later, where a misspelt name gets the nearest
/// ones. Its possible values are the API names, for the shell completions (bash, zsh and
/// fish offer them after `--api`, `--api-key` and `kdissect example`, rather than file
/// names); any other text still parses (`60`, `DescribeCluster`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ApiName;

impl TypedValueParser for ApiName {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let names = kdissect::kafka::names::API_NAMES.iter();
        Some(Box::new(names.map(|(_, n)| PossibleValue::new(kebab(n)))))
    }
}

/// `DescribeCluster` → `describe-cluster`, as the flags' examples write API names.
fn kebab(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

fn parse_analyses(s: &str) -> Result<kdissect::analyses::Which, String> {
    kdissect::analyses::Which::parse(s)
}

/// `500ms`, `10s`, `2m`, `1h`, or seconds (`2.5`), as nanoseconds.
fn parse_interval(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let (num, unit) = [("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9)]
        .iter()
        .find_map(|(u, m)| t.strip_suffix(u).map(|n| (n, *m)))
        .unwrap_or((t, 1e9));
    num.trim()
        .parse::<f64>()
        .ok()
        .map(|x| x * unit)
        .filter(|x| x.is_finite() && *x >= 1e6 && *x < 1e18)
        .map(|x| x as i64)
        .ok_or_else(|| {
            format!("{s:?} is not an interval of 1 ms or more (examples: 500ms, 10s, 1m)")
        })
}

/// A number of table rows, or all of them (`None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rows(pub(crate) Option<usize>);

fn parse_rows(s: &str) -> Result<Rows, String> {
    if s.trim().eq_ignore_ascii_case("all") {
        return Ok(Rows(None));
    }
    match s.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(Rows(Some(n))),
        _ => Err(format!("{s:?}: give a number of rows (1 or more) or `all`")),
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
