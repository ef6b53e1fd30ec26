//! The settings a run uses, decided once from the flags: which mode, which views, colour,
//! limits, filters, and every check of flags that do not go together. Nothing after this
//! reads the clap struct.

use super::low::{Cli, ColorChoice};
use crate::sinks::Selection;
use kdissect::filter::Projection;
use kdissect::kafka::frames::ResponseHint;
use kdissect::kafka::names;
use kdissect::kafka::stream::Config;
use kdissect::kafka::DecodeOptions;
use kdissect::pipeline::Options;
use kdissect::render::summary::TimeFormat;
use kdissect::render::Style;
use kdissect::tcp::Limits;
use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::time::Duration;

/// What the run does.
#[derive(Debug)]
pub(crate) enum Mode {
    /// Capture files or standard input.
    Capture,
    /// `-i`: interfaces through libpcap.
    Live(Live),
    /// `--hex`: frames as hex text.
    Hex(Hex),
    /// `-D`.
    ListInterfaces,
}

/// `-i` and its companions (read only by a build with live capture).
#[derive(Debug)]
#[cfg_attr(not(feature = "live"), allow(dead_code))]
pub(crate) struct Live {
    pub(crate) interfaces: Vec<String>,
    /// The BPF filter: `-f`, or the Kafka ports.
    pub(crate) filter: String,
    pub(crate) promisc: bool,
    /// `-a duration:N`.
    pub(crate) autostop: Option<Duration>,
}

/// `--hex` and its companions.
#[derive(Debug)]
pub(crate) struct Hex {
    /// How to read a response whose request is not in the input.
    pub(crate) hint: ResponseHint,
    /// `--at OFFSET`.
    pub(crate) at: Option<usize>,
    /// Tree and byte layout: both unless one (or --json) is asked for.
    pub(crate) tree: bool,
    pub(crate) bytes: bool,
}

/// The views of each message.
#[derive(Debug, Clone)]
pub(crate) struct Show {
    /// Only the summary line.
    pub(crate) summary: bool,
    pub(crate) tree: bool,
    pub(crate) bytes: bool,
    pub(crate) json: bool,
    pub(crate) spans: bool,
    /// `--fields`: with `json`, only these fields of each message.
    pub(crate) fields: Option<Projection>,
}

/// Which messages `--stats` counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StatsScope {
    /// The exchanges the filters keep (the default).
    Shown,
    /// Every message (`--stats-all`).
    All,
}

#[derive(Debug)]
pub(crate) struct Settings {
    pub(crate) mode: Mode,
    /// Inputs by name; `-` is standard input.
    pub(crate) inputs: Vec<String>,
    pub(crate) show: Show,
    pub(crate) quiet: bool,
    pub(crate) style: Style,
    pub(crate) time_format: TimeFormat,
    /// Decoding, framing and reassembly limits.
    pub(crate) options: Options,
    pub(crate) selection: Selection,
    pub(crate) stats: Option<StatsScope>,
    /// `-c N`.
    pub(crate) count: Option<u64>,
    /// `-w FILE`.
    pub(crate) write: Option<PathBuf>,
    /// `-F`: the format of the `-w` file.
    pub(crate) write_format: kdissect::capture::write::OutFormat,
    /// `-l`: flush after each message even into a file.
    pub(crate) line_buffered: bool,
    /// A progress bar may be drawn (on a terminal, for big files).
    pub(crate) progress: bool,
    /// Broker ports given with `-p`.
    pub(crate) ports: Vec<u16>,
}

impl TryFrom<&Cli> for Settings {
    /// A usage error, for exit status 2.
    type Error = String;

    fn try_from(cli: &Cli) -> Result<Settings, String> {
        if cli.json_spans && !cli.json {
            return Err("--json-spans goes with --json".into());
        }
        let fields = projection(cli)?;
        let named: Vec<String> = cli.read_file.iter().chain(&cli.files).cloned().collect();
        let mode = mode(cli, &named)?;
        let apis = parse_apis(&cli.api)?;
        let selection = Selection::new(cli, &apis)?;
        let whole_tree = selection.needs_tree() || fields.as_ref().is_some_and(|p| p.needs_tree());
        let options = options(cli, whole_tree);
        Ok(Settings {
            mode,
            inputs: if named.is_empty() {
                vec!["-".to_string()]
            } else {
                named
            },
            show: Show {
                summary: !cli.tree && !cli.bytes,
                tree: cli.tree,
                bytes: cli.bytes,
                json: cli.json,
                spans: cli.json_spans,
                fields,
            },
            quiet: cli.quiet,
            style: style(cli),
            time_format: cli.time_format,
            options,
            selection,
            stats: cli.stats.then_some(if cli.stats_all {
                StatsScope::All
            } else {
                StatsScope::Shown
            }),
            count: cli.count,
            write: cli.write.clone(),
            write_format: match cli.write_format {
                super::low::WriteFormat::Pcapng => kdissect::capture::write::OutFormat::PcapNg,
                super::low::WriteFormat::Pcap => kdissect::capture::write::OutFormat::Pcap,
            },
            line_buffered: cli.line_buffered,
            progress: !cli.no_progress && !cli.json && io::stderr().is_terminal(),
            ports: cli.ports.clone(),
        })
    }
}

/// The mode, with the checks of the flags that belong to another one.
fn mode(cli: &Cli, named: &[String]) -> Result<Mode, String> {
    if cli.list_interfaces {
        return Ok(Mode::ListInterfaces);
    }
    if cli.hex {
        return hex_mode(cli).map(Mode::Hex);
    }
    if !cli.interfaces.is_empty() && !named.is_empty() {
        return Err("-i captures live; it does not go with capture files".into());
    }
    if cli.autostop.is_some() && cli.interfaces.is_empty() {
        return Err("-a duration:N stops a live capture: add -i IFACE".into());
    }
    if named.is_empty() && cli.interfaces.is_empty() && io::stdin().is_terminal() {
        return Err("no input: give a capture file (pcap or pcapng), `-` for standard input, or --hex for hex text; see --help".into());
    }
    if cli.at.is_some() || cli.api_key.is_some() || cli.response {
        return Err(
            "--at, --api-key, --api-version and --response work on hex input: add --hex".into(),
        );
    }
    if cli.interfaces.is_empty() {
        return Ok(Mode::Capture);
    }
    Ok(Mode::Live(Live {
        interfaces: cli.interfaces.clone(),
        filter: cli
            .filter
            .clone()
            .unwrap_or_else(|| port_filter(&cli.ports)),
        promisc: cli.promisc,
        autostop: cli.autostop,
    }))
}

fn hex_mode(cli: &Cli) -> Result<Hex, String> {
    let api_key = match cli.api_key.as_deref().map(|s| (s, names::api_key_from_str(s))) {
        None => None,
        Some((_, Some(k))) => Some(k),
        Some((s, None)) if s.trim().parse::<i64>().is_ok() => {
            return Err(format!(
                "--api-key {s} is out of range: API keys are 16-bit (0 to 32767)"
            ))
        }
        Some((s, None)) => {
            return Err(format!(
                "--api-key {s:?} is neither a number nor a Kafka API name (try metadata, 3, api-versions)"
            ))
        }
    };
    if api_key.is_some() != cli.api_version.is_some() {
        return Err(
            "--api-key and --api-version go together: a response is decoded with both".into(),
        );
    }
    let filtered = !cli.api.is_empty()
        || cli.stream.is_some()
        || cli.client_id.is_some()
        || cli.errors
        || cli.topic.is_some()
        || cli.display_filter.is_some();
    if cli.stats || filtered {
        return Err("--stats and the exchange filters work on captures, not on --hex input".into());
    }
    Ok(Hex {
        hint: ResponseHint {
            api_key,
            api_version: cli.api_version,
            force_response: cli.response,
        },
        at: cli.at,
        tree: cli.tree || !(cli.bytes || cli.json),
        bytes: cli.bytes || !(cli.tree || cli.json),
    })
}

/// Colour decided once: asked for, or on a terminal that does not refuse it (`NO_COLOR`), and
/// never inside JSON.
fn style(cli: &Cli) -> Style {
    let color = match cli.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            !cli.json
                && io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    };
    Style {
        color,
        wide: cli.wide,
        max_value: cli.max_value,
        show_secrets: cli.show_secrets,
        ascii: cli.ascii,
    }
}

fn options(cli: &Cli, whole_tree: bool) -> Options {
    Options {
        kafka: Config {
            ports: cli.ports.clone(),
            detect: !cli.no_detect,
            max_frame: cli.max_frame,
            decode: decode_options(cli, whole_tree),
            max_pending: cli.max_pending.max(1),
            max_held_total: cli.max_frames_total,
        },
        tcp: Limits {
            max_buffered: cli.max_buffered,
            max_buffered_total: cli.max_buffered_total,
            max_connections: cli.max_connections.max(1),
            ..Limits::default()
        },
    }
}

fn decode_options(cli: &Cli, whole_tree: bool) -> DecodeOptions {
    // Summary lines and statistics read the body's first two levels, the error codes and
    // the record counts: deeper nodes and the records inside batches need not be kept.
    // Filters on topics, partitions or schema paths look at any depth (`whole_tree`).
    let summary_only = !cli.tree && !cli.bytes && !cli.json && !cli.hex && !whole_tree;
    DecodeOptions {
        max_elements: cli.max_elements.max(1),
        max_decompressed: cli.max_decompressed,
        max_nodes: cli.max_nodes.max(1),
        keep_depth: if summary_only { 2 } else { usize::MAX },
        records: !summary_only,
        ..Default::default()
    }
}

fn parse_apis(list: &[String]) -> Result<Vec<i16>, String> {
    list.iter()
        .filter(|s| !s.trim().is_empty())
        .map(|s| {
            names::api_key_from_str(s).ok_or_else(|| {
                format!("--api {s:?} is neither a number nor a Kafka API name (try metadata, 3, describe-cluster)")
            })
        })
        .collect()
}

/// `--fields`, checked: it goes with `--json`, on captures (the fields are those of -Y).
fn projection(cli: &Cli) -> Result<Option<Projection>, String> {
    let Some(list) = &cli.fields else {
        return Ok(None);
    };
    if !cli.json || cli.json_spans || cli.hex {
        return Err(
            "--fields goes with --json, on captures (not with --json-spans or --hex)".into(),
        );
    }
    Projection::compile(list).map(Some).map_err(|e| {
        let pad = " ".repeat(e.column.saturating_sub(1));
        format!("--fields: {}\n    {list}\n    {pad}^", e.message)
    })
}

/// The capture filter for the Kafka ports: `tcp port 9092 or tcp port 9094`.
fn port_filter(ports: &[u16]) -> String {
    ports
        .iter()
        .map(|p| format!("tcp port {p}"))
        .collect::<Vec<_>>()
        .join(" or ")
}
