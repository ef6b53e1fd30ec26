//! The settings a run uses, decided once from the flags: which mode, which views, colour,
//! limits, filters, and every check of flags that do not go together. Nothing after this
//! reads the clap struct.

use super::choice::Choice;
use super::low::{Cli, ColorChoice, OutputFormat};
use kdissect::filter::{Builtin, Projection, Window};
use kdissect::kafka::frames::ResponseHint;
use kdissect::kafka::names;
use kdissect::kafka::stream::Config;
use kdissect::kafka::DecodeOptions;
use kdissect::pipeline::Options;
use kdissect::render::summary::TimeFormat;
use kdissect::render::tshark;
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
    /// `--fields`: with `json`, only these fields of each message (and the `-e` fields).
    pub(crate) fields: Option<Projection>,
    /// `-T fields` or `-T ek`.
    pub(crate) tshark: Option<tshark::View>,
    /// `--at OFFSET` (hex input): only the field at this byte of the input.
    pub(crate) at: Option<u64>,
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
    /// The exchanges to show.
    pub(crate) choice: Choice,
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
    /// `--since` and `--until`.
    pub(crate) window: Window,
    /// `--max-zstd-window`: the largest window of a zstd-compressed input.
    pub(crate) max_zstd_window: u64,
    /// `--stats-connections`: connections given a row in the --stats table (`None`: all).
    pub(crate) stats_connections: Option<usize>,
    /// `--stats-rows`: rows of each other --stats and --analyses table (`None`: all).
    pub(crate) stats_rows: Option<usize>,
    /// The width the `--stats` tables fit, resolved once (`table_width`).
    pub(crate) table_width: u16,
    /// `--analyses-memory`: the analyses' stores' bounds.
    pub(crate) analyses_limits: kdissect::analyses::Limits,
    /// `--inject-secrets`: -w embeds the secrets of the TLS connections it writes.
    pub(crate) inject_secrets: bool,
    /// `--analyses` (or implied by `--interval`, `--report`).
    pub(crate) analyses: Option<kdissect::analyses::Which>,
    /// `--interval`, in nanoseconds.
    pub(crate) interval: Option<i64>,
    /// `--stats` was given (`--report` alone gathers the statistics without printing them).
    pub(crate) print_stats: bool,
    /// `--report FILE.html`.
    pub(crate) report: Option<PathBuf>,
}

impl TryFrom<&Cli> for Settings {
    /// A usage error, for exit status 2.
    type Error = String;

    // Long: every setting is resolved here once, one field each.
    fn try_from(cli: &Cli) -> Result<Settings, String> {
        let json = cli.json || cli.output_format == Some(OutputFormat::Json);
        if cli.json_spans && !json {
            return Err("--json-spans goes with --json".into());
        }
        if cli.brief && !cli.tree && !cli.hex {
            return Err("--brief goes with -V: the compact tree".into());
        }
        if (cli.analyses.is_some() || cli.interval.is_some()) && !cli.stats && cli.report.is_none()
        {
            return Err("--analyses and --interval go with --stats or --report".into());
        }
        let tshark = tshark_view(cli)?;
        let fields = match projection(cli)? {
            Some(p) => Some(p),
            None => field_list(cli)?,
        };
        let named: Vec<String> = cli.read_file.iter().chain(&cli.files).cloned().collect();
        let mode = mode(cli, &named)?;
        let apis = parse_apis(&cli.api)?;
        let mut choice = Choice::new(cli, &apis)?;
        if fields
            .as_ref()
            .is_some_and(|p| p.uses(Builtin::ResponseFrame))
        {
            // A request's response frame is known once the response has come.
            choice.hold_requests();
        }
        // A whole message in -T ek is its whole JSON object.
        let whole_message = tshark == Some(tshark::View::Ek) && fields.is_none();
        let whole_tree = choice.needs_tree()
            || fields.as_ref().is_some_and(|p| p.needs_tree())
            || whole_message
            || json;
        // Only the tree renderers, the filters on schema fields and the field lists read nodes
        // the facts do not: without them, the decoder keeps the facts' nodes only (topic
        // names, topic ids and partitions among them, at every depth for a filter on topics
        // or partitions), and a request held for its answer under a filter on values every
        // message keeps holds its frame and its summary, no tree.
        let facts_suffice = !json && !choice.reads_schema() && fields.is_none() && tshark.is_none();
        let mut options = options(cli, whole_tree, facts_suffice);
        // `--json` alone reads no tree but the body's, which the walk writes as it goes
        // (src/kafka/walk/json.rs); the spans, other views, filters, field lists, statistics
        // and cuts read the tree.
        options.kafka.decode.json_walk = json
            && !cli.json_spans
            && !cli.tree
            && !cli.bytes
            && !cli.hex
            && cli.write.is_none()
            && fields.is_none()
            && tshark.is_none()
            && !choice.filtered()
            && !cli.stats
            && cli.report.is_none();
        options.keys = std::sync::Arc::new(key_logs(cli)?);
        Ok(Settings {
            table_width: table_width(),
            mode,
            inputs: if named.is_empty() {
                vec!["-".to_string()]
            } else {
                named
            },
            show: Show {
                // Hex input has no summary line: its frames show both views unless one (or
                // --json) is asked for.
                summary: !cli.tree && !cli.bytes && !cli.hex,
                tree: cli.tree || (cli.hex && !(cli.bytes || json)),
                bytes: cli.bytes || (cli.hex && !(cli.tree || json)),
                json,
                spans: cli.json_spans,
                fields,
                tshark,
                at: cli.at.map(|a| a as u64),
            },
            quiet: cli.quiet,
            style: style(cli),
            time_format: cli.time_format,
            options,
            choice,
            stats: (cli.stats || cli.report.is_some()).then_some(if cli.stats_all {
                StatsScope::All
            } else {
                StatsScope::Shown
            }),
            count: cli.count,
            write: cli.write.clone(),
            inject_secrets: cli.inject_secrets,
            write_format: match cli.write_format {
                super::low::WriteFormat::Pcapng => kdissect::capture::write::OutFormat::PcapNg,
                super::low::WriteFormat::Pcap => kdissect::capture::write::OutFormat::Pcap,
            },
            line_buffered: cli.line_buffered,
            progress: !cli.no_progress && !json && io::stderr().is_terminal(),
            ports: cli.ports.clone(),
            window: window(cli)?,
            max_zstd_window: cli.max_zstd_window as u64,
            stats_connections: cli.stats_connections.0,
            stats_rows: cli.stats_rows.0,
            analyses_limits: kdissect::analyses::Limits::new(cli.analyses_memory),
            analyses: analyses(cli)?,
            print_stats: cli.stats,
            interval: cli.interval,
            report: cli.report.clone(),
        })
    }
}

/// `--since` and `--until`; an error when they leave no time between them (tshark users
/// would otherwise see nothing and hear nothing). Bounds of two kinds (one after the first
/// packet, one absolute) are checked against each input's start as it is read.
fn window(cli: &Cli) -> Result<Window, String> {
    let w = Window {
        since: cli.since,
        until: cli.until,
    };
    match w.empty(None) {
        Some(why) => Err(why),
        None => Ok(w),
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
    let api_key = match cli
        .api_key
        .as_deref()
        .map(|s| (s, names::api_key_from_str(s)))
    {
        None => None,
        Some((_, Some(k))) => Some(k),
        Some((s, None)) if s.trim().parse::<i64>().is_ok() => {
            return Err(format!(
                "--api-key {s} is out of range: API keys are 16-bit (0 to 32767)"
            ))
        }
        Some((s, None)) => return Err(not_an_api("--api-key", s)),
    };
    if api_key.is_some() != cli.api_version.is_some() {
        return Err(
            "--api-key and --api-version go together: a response is decoded with both".into(),
        );
    }
    let filtered = !cli.api.is_empty()
        || cli.stream.is_some()
        || cli.correlation_id.is_some()
        || cli.client_id.is_some()
        || cli.errors
        || cli.topic.is_some()
        || cli.display_filter.is_some()
        || cli.since.is_some()
        || cli.until.is_some()
        || cli.messages;
    if cli.stats || filtered {
        return Err("--stats and the exchange filters work on captures, not on --hex input".into());
    }
    if cli.write.is_some() || cli.report.is_some() {
        return Err(
            "-w and --report write a capture's packets and statistics: not with --hex".into(),
        );
    }
    if cli.at.is_some() && cli.count.is_some() {
        return Err("--at shows the one frame that holds the offset: not with -c".into());
    }
    Ok(Hex {
        hint: ResponseHint {
            api_key,
            api_version: cli.api_version,
            force_response: cli.response,
        },
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
                && cli.output_format.is_none_or(|f| f == OutputFormat::Text)
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
        brief: cli.brief,
    }
}

/// The analyses asked for: `--analyses`, or all of them for `--interval` and `--report`.
fn analyses(cli: &Cli) -> Result<Option<kdissect::analyses::Which>, String> {
    if (cli.analyses.is_some() || cli.interval.is_some()) && !cli.stats && cli.report.is_none() {
        return Err("--analyses and --interval go with --stats or --report".into());
    }
    Ok(asked_analyses(cli))
}

fn asked_analyses(cli: &Cli) -> Option<kdissect::analyses::Which> {
    cli.analyses.or_else(|| {
        (cli.interval.is_some() || cli.report.is_some()).then_some(kdissect::analyses::Which::ALL)
    })
}

fn options(cli: &Cli, whole_tree: bool, facts_suffice: bool) -> Options {
    Options {
        kafka: Config {
            ports: cli.ports.clone(),
            detect: !cli.no_detect,
            max_frame: cli.max_frame,
            decode: decode_options(cli, whole_tree, facts_suffice),
            max_pending: cli.max_pending.max(1),
            max_held_total: cli.max_frames_total,
        },
        tcp: Limits {
            max_buffered: cli.max_buffered,
            max_buffered_total: cli.max_buffered_total,
            max_connections: cli.max_connections.max(1),
            ..Limits::default()
        },
        keys: Default::default(),
        tls: kdissect::tls::Limits {
            max_search: cli.max_tls_search as u64,
            max_search_total: cli.max_tls_search_total as u64,
        },
    }
}

/// The key logs of `--keylog` and, with `--keylog-env`, SSLKEYLOGFILE: read once, each at
/// most `MAX_KEYLOG_BYTES`. A file that cannot be read is a usage error, as is
/// `--inject-secrets` without a pcapng `-w`.
fn key_logs(cli: &Cli) -> Result<kdissect::tls::keylog::KeyLog, String> {
    use std::io::Read;
    if cli.inject_secrets && cli.write.is_none() {
        return Err("--inject-secrets goes with -w".into());
    }
    if cli.inject_secrets && cli.write_format == super::low::WriteFormat::Pcap {
        return Err(
            "--inject-secrets needs pcapng (-F pcapng): a pcap file has no place for secrets"
                .into(),
        );
    }
    let mut paths = cli.keylog.clone();
    if cli.keylog_env {
        match std::env::var_os("SSLKEYLOGFILE") {
            Some(p) if !p.is_empty() => paths.push(p.into()),
            _ => return Err("--keylog-env: SSLKEYLOGFILE is not set".into()),
        }
    }
    let mut keys = kdissect::tls::keylog::KeyLog::default();
    for path in &paths {
        let mut text = Vec::new();
        let limit = kdissect::tls::keylog::MAX_KEYLOG_BYTES as u64 + 1;
        std::fs::File::open(path)
            .and_then(|f| f.take(limit).read_to_end(&mut text))
            .map_err(|e| format!("--keylog {}: {e}", path.display()))?;
        // A file that is not a key log is refused; what was left out of one is said.
        for w in keys.add_file(&path.display().to_string(), &text)? {
            eprintln!("kdissect: {w}");
        }
    }
    if let Some(w) = keys.cap_warning() {
        eprintln!("kdissect: {w}");
    }
    Ok(keys)
}

fn decode_options(cli: &Cli, whole_tree: bool, facts_suffice: bool) -> DecodeOptions {
    // Summary lines and statistics read the body's first two levels, the error codes and
    // the record counts: deeper nodes and the records inside batches need not be kept.
    // Filters on topics, partitions or schema paths look at any depth (`whole_tree`); where
    // no view prints the tree and no filter names a schema field, only the facts' nodes are
    // kept at any depth (`facts_suffice`: topic names and ids, partitions are among them).
    // The analyses read facts below the second level (offsets, group members and their
    // consumer protocol) and the records' sizes: every depth and the records, but the facts'
    // nodes alone, never the whole tree.
    // -w notes the names of every topic id the messages it keeps give (capture::cut), some
    // below the second level (a KIP-848 heartbeat's assignment), in records (the KRaft log's
    // TopicRecords): it reads them whole.
    let analyses = asked_analyses(cli).is_some();
    let lines_only = !cli.tree && !cli.bytes && !cli.json && !cli.hex && cli.write.is_none();
    let summary_only = lines_only && !whole_tree && !analyses;
    DecodeOptions {
        max_elements: cli.max_elements.max(1),
        max_decompressed: cli.max_decompressed,
        max_nodes: cli.max_nodes.max(1),
        keep_depth: if summary_only { 2 } else { usize::MAX },
        records: !summary_only,
        facts_only: lines_only && facts_suffice,
        // The analyses' facts at every depth, walked without a tree where nothing else
        // wants one (src/kafka/walk/deep.rs).
        deep_facts: analyses && !whole_tree,
        ..Default::default()
    }
}

fn parse_apis(list: &[String]) -> Result<Vec<i16>, String> {
    list.iter()
        .filter(|s| !s.trim().is_empty())
        .map(|s| names::api_key_from_str(s).ok_or_else(|| not_an_api("--api", s)))
        .collect()
}

/// `--api metdata`: the nearest API names, or how names are written when none is near.
pub(crate) fn not_an_api(flag: &str, s: &str) -> String {
    let hint = kdissect::filter::api_hint(s.trim());
    if hint.is_empty() {
        format!("{flag} {s:?} is neither a number nor a Kafka API name (names as Kafka spells them, in any case and with or without dashes, such as DescribeCluster or describe-cluster; or API keys, such as 60)")
    } else {
        format!("{flag} {s:?} is neither a number nor a Kafka API name{hint}")
    }
}

/// `--fields`, checked: it goes with `--json`, on captures (the fields are those of -Y).
fn projection(cli: &Cli) -> Result<Option<Projection>, String> {
    let Some(list) = &cli.fields else {
        return Ok(None);
    };
    let json = cli.json || cli.output_format == Some(OutputFormat::Json);
    if !json || cli.json_spans || cli.hex {
        return Err(
            "--fields goes with --json, on captures (not with --json-spans or --hex)".into(),
        );
    }
    Projection::compile(list).map(Some).map_err(|e| {
        let pad = " ".repeat(e.column.saturating_sub(1));
        format!("--fields: {}\n    {list}\n    {pad}^", e.message)
    })
}

/// `-T fields` or `-T ek`, with the checks of their companions (`-e`, `-E`) and of the views
/// they replace.
fn tshark_view(cli: &Cli) -> Result<Option<tshark::View>, String> {
    let format = cli.output_format.unwrap_or(OutputFormat::Text);
    if !cli.field.is_empty() && format == OutputFormat::Text {
        return Err("-e goes with -T fields, -T ek or -T json (as tshark's)".into());
    }
    if !cli.field_option.is_empty() && format != OutputFormat::Fields {
        return Err("-E goes with -T fields".into());
    }
    if !cli.field.is_empty() && cli.fields.is_some() {
        return Err("-e and --fields both choose fields: give one".into());
    }
    let view = match format {
        OutputFormat::Text | OutputFormat::Json => return Ok(None),
        OutputFormat::Ek => tshark::View::Ek,
        OutputFormat::Fields if cli.field.is_empty() => {
            return Err(
                "-T fields prints the fields given with -e (-e frame.number -e kafka.api_key)"
                    .into(),
            )
        }
        OutputFormat::Fields => {
            tshark::View::Fields(tshark::FieldsFormat::parse(&cli.field_option)?)
        }
    };
    if cli.tree || cli.bytes || cli.json || cli.hex {
        return Err(
            "-T fields and -T ek are views of their own: not with -V, -x, --json or --hex".into(),
        );
    }
    Ok(Some(view))
}

/// The `-e` fields, checked as `--fields` is.
fn field_list(cli: &Cli) -> Result<Option<Projection>, String> {
    if cli.field.is_empty() {
        return Ok(None);
    }
    Projection::from_names(&cli.field)
        .map(Some)
        .map_err(|(i, e)| {
            let name = cli.field.get(i).map(String::as_str).unwrap_or_default();
            let pad = " ".repeat(e.column.saturating_sub(1));
            format!("-e: {}\n    {name}\n    {pad}^", e.message)
        })
}

/// The capture filter for the Kafka ports: `tcp port 9092 or tcp port 9094`. With the default
/// port alone, the ports Kafka is commonly found on, so that a broker on one of them is not met
/// with silence: the connections on ports other than -p's are Kafka when what their client
/// sends first is (detection, as in files).
fn port_filter(ports: &[u16]) -> String {
    if ports == [9092] {
        return COMMON_KAFKA_PORTS.into();
    }
    ports
        .iter()
        .map(|p| format!("tcp port {p}"))
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Where Kafka listens in the usual distributions and setups: 9092 (Apache Kafka's default;
/// Confluent, Redpanda, Amazon MSK plaintext), 9093 (the KRaft controller of Kafka's example
/// configurations; often TLS; Azure Event Hubs), 9094 (external listeners of Strimzi and
/// Bitnami; MSK TLS), 9095-9098 (MSK SASL/SCRAM 9096 and IAM 9098), 9194/9196/9198 (MSK public
/// access), 9192/9292 and 19092/29092/39092 (several brokers on one host, as in Redpanda's and
/// docker-compose examples and Confluent's cp-all-in-one).
pub(crate) const COMMON_KAFKA_PORTS: &str = "tcp portrange 9092-9098 or tcp port 9192 or tcp port 9194 or tcp port 9196 or tcp port 9198 or tcp port 9292 or tcp port 19092 or tcp port 29092 or tcp port 39092";

/// The width the --stats tables fit: COLUMNS when set (as shells set it, and as a pipe's
/// reader may), else the terminal's, else (a pipe, a file) `PIPED_WIDTH`; never under
/// `NARROWEST`, where tables stop being readable.
fn table_width() -> u16 {
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok());
    let terminal = || {
        io::stdout()
            .is_terminal()
            .then(|| comfy_table::Table::new().width())
            .flatten()
    };
    columns
        .or_else(terminal)
        .unwrap_or(PIPED_WIDTH)
        .max(NARROWEST)
}

/// Tables written to a pipe or a file, with no COLUMNS to say otherwise.
const PIPED_WIDTH: u16 = 100;
const NARROWEST: u16 = 40;

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// What the settings of `args` have the decoder keep: only the facts' nodes, and how
    /// many levels below the body.
    fn kept(args: &[&str]) -> (bool, usize) {
        let cli = Cli::try_parse_from(["kdissect"].iter().chain(args)).expect("arguments");
        let settings = Settings::try_from(&cli).expect("settings");
        let d = settings.options.kafka.decode;
        (d.facts_only, d.keep_depth)
    }

    #[test]
    fn filters_keep_the_nodes_they_read() {
        // The summary alone, and a filter on values every message keeps (so a request held
        // for its answer keeps its frame and summary, no tree).
        assert_eq!(kept(&["x.pcap"]), (true, 2));
        let header = ["-Y", "api == 3 || error || latency > 5ms", "x.pcap"];
        assert_eq!(kept(&header), (true, 2));
        let stats = ["--stats", "-q", "-Y", "!(api == ApiVersions)", "x.pcap"];
        assert_eq!(kept(&stats), (true, 2));
        // Topics and partitions are among the facts' nodes, at every depth.
        let topics = ["-Y", "topic == orders || partition == 1", "x.pcap"];
        assert_eq!(kept(&topics), (true, usize::MAX));
        assert_eq!(kept(&["--topic", "orders", "x.pcap"]), (true, usize::MAX));
        // Schema fields, field lists and the tree views read any node.
        assert!(!kept(&["-Y", "Metadata.Topics[*].Name", "x.pcap"]).0);
        assert!(!kept(&["-V", "-Y", "api == 3", "x.pcap"]).0);
        assert!(!kept(&["-T", "fields", "-e", "kafka.api_key", "x.pcap"]).0);
        assert!(!kept(&["-T", "json", "-Y", "topic == orders", "x.pcap"]).0);
        assert!(!kept(&["-T", "json", "x.pcap"]).0);
        // -w reads every topic id its messages give, at any depth.
        assert_eq!(kept(&["-w", "cut.pcapng", "x.pcap"]), (false, usize::MAX));
    }
}
