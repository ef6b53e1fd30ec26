//! One line per Kafka message, like tshark's: frame, relative time, endpoints, stream, API,
//! direction, correlation id, and the essentials of the body.

use super::value::quote;
use crate::kafka::stream::Record;
use crate::kafka::{names, Direction, Message, Node, NodeKind, Note, Value};
use std::fmt::Write;

/// Topic names (or ids) listed before the rest are counted.
const MAX_TOPICS: usize = 5;

fn elements(n: &Node) -> impl Iterator<Item = &Node> {
    n.children.iter().filter(|c| c.kind != NodeKind::Length)
}

fn field<'a>(n: &'a Node, name: &str) -> Option<&'a Node> {
    n.children
        .iter()
        .find(|c| c.name == name && c.ty != "tagged_field")
        .or_else(|| {
            n.children
                .iter()
                .find(|c| c.name == name && c.ty == "tagged_field")
                .and_then(|t| t.children.iter().find(|g| g.name == name))
        })
}

fn topic_label(t: &Node) -> Option<String> {
    let name = field(t, "Name")
        .or_else(|| field(t, "TopicName"))
        .or_else(|| field(t, "Topic"))
        .or_else(|| field(t, "ResourceName"))
        .and_then(|n| n.as_str().map(str::to_string))
        .filter(|s| !s.is_empty());
    match name {
        Some(s) => Some(s),
        None => field(t, "TopicId").and_then(|n| match n.value {
            // An id whose name an earlier message gave reads as the name.
            Value::Uuid(u) => Some(match &n.note {
                Note::TopicName(name) => name.clone(),
                _ => super::value::uuid(&u),
            }),
            _ => None,
        }),
    }
}

fn topics_text(arr: &Node, with_errors: bool, empty_means_all: bool) -> String {
    if arr.value == Value::Null || (empty_means_all && arr.value == Value::Array(0)) {
        return "topics=all".to_string();
    }
    let mut items = Vec::new();
    // The count on the wire: past --max-elements the elements are not kept as nodes.
    let total = match arr.value {
        Value::Array(n) => n,
        _ => elements(arr).count(),
    };
    for t in elements(arr).take(MAX_TOPICS) {
        let mut s = topic_label(t).unwrap_or_else(|| "?".to_string());
        if with_errors {
            if let Some(code) = field(t, "ErrorCode")
                .and_then(Node::as_int)
                .filter(|c| *c != 0)
            {
                let _ = write!(
                    s,
                    "({})",
                    names::error_name(code as i16).unwrap_or("unknown error")
                );
            }
        }
        items.push(s);
    }
    if total > MAX_TOPICS {
        items.push(format!("+{} more", total - MAX_TOPICS));
    }
    format!("topics=[{}]", items.join(", "))
}

/// The essentials of a message body, as `key=value` words.
pub fn essentials(msg: &Message) -> String {
    let mut words: Vec<String> = Vec::new();
    if msg.direction == Direction::Request {
        match &msg.client_id {
            Some(Some(c)) => words.push(format!("client_id={}", quote(c))),
            Some(None) => words.push("client_id=null".to_string()),
            None => {}
        }
    }
    if let Some(body) = msg.body() {
        if msg.direction == Direction::Response {
            if let Some(code) = field(body, "ErrorCode")
                .and_then(Node::as_int)
                .filter(|c| *c != 0)
            {
                words.push(format!(
                    "error={}",
                    names::error_name(code as i16).unwrap_or("unknown error")
                ));
            }
            if let Some(b) = field(body, "Brokers") {
                if let Value::Array(n) = b.value {
                    words.push(format!("brokers={n}"));
                }
            }
            if let Some(c) = field(body, "ClusterId").and_then(|n| n.as_str().map(str::to_string)) {
                words.push(format!("cluster_id={}", quote(&c)));
            }
            if let Some(a) = field(body, "ApiKeys") {
                if let Value::Array(n) = a.value {
                    words.push(format!("apis={n}"));
                }
            }
        } else {
            let name =
                field(body, "ClientSoftwareName").and_then(|n| n.as_str().map(str::to_string));
            let ver =
                field(body, "ClientSoftwareVersion").and_then(|n| n.as_str().map(str::to_string));
            if let (Some(n), Some(v)) = (name, ver) {
                words.push(format!("software={n}/{v}"));
            }
        }
        // SASL: the mechanism asked for or offered, and the login step with its user.
        if let Some(m) = field(body, "Mechanism").and_then(Node::as_str) {
            words.push(format!("mechanism={m}"));
        }
        if let Some(list) = field(body, "Mechanisms") {
            let names: Vec<&str> = elements(list).filter_map(Node::as_str).collect();
            words.push(format!("mechanisms=[{}]", names.join(", ")));
        }
        if let Some(sasl) = &msg.sasl {
            words.push(format!("sasl={}", quote(sasl.step.short())));
            if let Some(u) = &sasl.user {
                words.push(format!("user={}", quote(u)));
            }
        }
        if let Some(list) = field(body, "CoordinatorKeys") {
            let keys: Vec<String> = elements(list).filter_map(Node::as_str).map(quote).collect();
            words.push(format!("keys=[{}]", keys.join(", ")));
        }
        // FindCoordinator: the node that coordinates (one, or one per key from v4).
        if msg.api_key == Some(10) && msg.direction == Direction::Response {
            if let Some(n) = field(body, "NodeId").and_then(Node::as_int) {
                words.push(format!("coordinator={n}"));
            }
            if let Some(list) = field(body, "Coordinators") {
                let nodes: Vec<String> = elements(list)
                    .filter_map(|c| field(c, "NodeId").and_then(Node::as_int))
                    .map(|n| n.to_string())
                    .collect();
                words.push(format!("coordinators=[{}]", nodes.join(", ")));
            }
        }
        // Group, member and transaction identity (group and transaction APIs).
        for (f, label) in [
            ("GroupId", "group"),
            ("Key", "key"),
            ("MemberId", "member"),
            ("GenerationId", "generation"),
            ("GenerationIdOrMemberEpoch", "generation"),
            ("MemberEpoch", "member_epoch"),
            ("ProtocolName", "protocol"),
            ("TransactionalId", "txn"),
            ("ProducerId", "producer_id"),
            ("Acks", "acks"),
        ] {
            if let Some(n) = field(body, f) {
                match &n.value {
                    Value::Str(Some(s)) if !s.is_empty() => {
                        words.push(format!("{label}={}", quote(s)))
                    }
                    Value::Int(i) => words.push(format!("{label}={i}")),
                    _ => {}
                }
            }
        }
        if let Some(t) = field(body, "Topics")
            .or_else(|| field(body, "TopicData"))
            .or_else(|| field(body, "Responses"))
        {
            // Metadata v0 asks for every topic with an empty list (a null list from v1 on).
            let empty_means_all = msg.direction == Direction::Request
                && msg.api_key == Some(3)
                && msg.api_version == Some(0);
            words.push(topics_text(
                t,
                msg.direction == Direction::Response,
                empty_means_all,
            ));
        }
        // DescribeTopicPartitions pages: where a request resumes and where the next page starts.
        for (f, label) in [("Cursor", "cursor"), ("NextCursor", "next_cursor")] {
            if let Some(c) = field(body, f).filter(|c| c.value == Value::Struct) {
                let topic = field(c, "TopicName").and_then(Node::as_str).unwrap_or("?");
                let part = field(c, "PartitionIndex")
                    .and_then(Node::as_int)
                    .unwrap_or(-1);
                words.push(format!("{label}={topic}/{part}"));
            }
        }
        // Config APIs name resources (topics, brokers, groups) rather than topics.
        if let Some(r) = field(body, "Resources").or_else(|| field(body, "Results")) {
            if elements(r).any(|e| field(e, "ResourceName").is_some()) {
                let t = topics_text(r, msg.direction == Direction::Response, false);
                words.push(t.replacen("topics=", "resources=", 1));
            }
        }
        // DeleteTopics v0-5 names its topics in a list of strings.
        if let Some(list) = field(body, "TopicNames") {
            let names: Vec<&str> = elements(list).filter_map(Node::as_str).collect();
            let more = names.len().saturating_sub(MAX_TOPICS);
            let mut shown: Vec<String> = names
                .iter()
                .take(MAX_TOPICS)
                .map(|s| s.to_string())
                .collect();
            if more > 0 {
                shown.push(format!("+{more} more"));
            }
            words.push(format!("topics=[{}]", shown.join(", ")));
        }
        let parts = partition_count(body);
        if parts > 0 {
            words.push(format!("partitions={parts}"));
        }
        let (records, bytes) = msg.records;
        if bytes > 0 {
            words.push(format!("records={records} ({bytes} bytes)"));
        }
        if msg.direction == Direction::Response {
            // Errors one level down outside the topic lists (those show beside each topic):
            // FindCoordinator v4+'s Coordinators[], DescribeGroups' Groups[], ...
            let mut nested: Vec<String> = Vec::new();
            for (path, code) in msg
                .errors
                .iter()
                .filter(|(p, _)| p.matches('.').count() == 1)
            {
                let list = path.split('[').next().unwrap_or("");
                if ["Topics", "TopicData", "Responses", "Results", "Resources"].contains(&list) {
                    continue;
                }
                let item = path.rsplit_once('.').map_or(path.as_str(), |(a, _)| a);
                let n = names::error_name(*code).unwrap_or("unknown error");
                nested.push(format!("{n}({item})"));
            }
            if !nested.is_empty() {
                let more = nested.len().saturating_sub(MAX_TOPICS);
                nested.truncate(MAX_TOPICS);
                if more > 0 {
                    nested.push(format!("+{more} more"));
                }
                words.push(format!("errors=[{}]", nested.join(", ")));
            }
            let deeper: Vec<&(String, i16)> = msg
                .errors
                .iter()
                .filter(|(p, _)| p.matches('.').count() >= 2)
                .collect();
            if !deeper.is_empty() {
                let mut names_seen: Vec<&str> = Vec::new();
                for (_, c) in &deeper {
                    let n = names::error_name(*c).unwrap_or("unknown error");
                    if !names_seen.contains(&n) {
                        names_seen.push(n);
                    }
                }
                words.push(format!(
                    "partition_errors={}({})",
                    deeper.len(),
                    names_seen.join(",")
                ));
            }
        }
    }
    words.join(" ")
}

/// Partition entries under the topic list (Produce, Fetch, ListOffsets, OffsetCommit...).
fn partition_count(body: &Node) -> usize {
    let Some(topics) = ["Topics", "TopicData", "Responses"]
        .iter()
        .find_map(|n| field(body, n))
    else {
        return 0;
    };
    elements(topics)
        .map(|t| {
            [
                "Partitions",
                "PartitionData",
                "PartitionResponses",
                "PartitionIndexes",
            ]
            .iter()
            .find_map(|n| field(t, n))
            .map_or(0, |p| match p.value {
                Value::Array(n) => n,
                _ => 0,
            })
        })
        .sum()
}

/// Milliseconds with two decimals, or microseconds below 0.01 ms.
pub fn latency_text(nanos: i64) -> String {
    if nanos.abs() < 10_000 {
        format!("{} µs", nanos / 1000)
    } else {
        format!("{:.2} ms", nanos as f64 / 1e6)
    }
}

/// How the time column reads, as tshark's `-t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeFormat {
    /// Seconds since the first packet (`r`).
    #[default]
    Relative,
    /// Local time of day (`a`), with the date (`ad`).
    Absolute,
    AbsoluteDate,
    /// Seconds since the previous packet (`d`), since the previous message shown (`dd`).
    Delta,
    DeltaShown,
    /// Seconds since 1970 (`e`).
    Epoch,
    /// UTC time of day (`u`), with the date (`ud`).
    Utc,
    UtcDate,
}

impl std::str::FromStr for TimeFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "r" => TimeFormat::Relative,
            "a" => TimeFormat::Absolute,
            "ad" => TimeFormat::AbsoluteDate,
            "d" => TimeFormat::Delta,
            "dd" => TimeFormat::DeltaShown,
            "e" => TimeFormat::Epoch,
            "u" => TimeFormat::Utc,
            "ud" => TimeFormat::UtcDate,
            other => {
                return Err(format!(
                    "{other:?} is not a time format: r, a, ad, d, dd, e, u or ud (as tshark -t)"
                ))
            }
        })
    }
}

/// The time column: the format, and the times it is counted from.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clock {
    pub format: TimeFormat,
    /// Digits of a second shown: 6, or 9 for nanosecond captures.
    pub precision: u8,
    pub first_ts: i64,
    /// The packet before the current one, and the last message shown.
    pub prev_packet_ts: Option<i64>,
    pub prev_shown_ts: Option<i64>,
}

impl Clock {
    /// The column for a packet at `ts` (nanoseconds since 1970), right-aligned as tshark's.
    pub fn text(&self, ts: i64) -> String {
        let digits = if self.precision >= 9 { 9 } else { 6 };
        let secs = |n: i64| {
            let v = n as f64 / 1e9;
            format!("{v:>w$.digits$}", w = 5 + digits)
        };
        match self.format {
            TimeFormat::Relative => secs(ts - self.first_ts),
            TimeFormat::Delta => secs(self.prev_packet_ts.map_or(0, |p| ts - p)),
            TimeFormat::DeltaShown => secs(self.prev_shown_ts.map_or(0, |p| ts - p)),
            TimeFormat::Epoch => {
                let frac = ts.rem_euclid(1_000_000_000);
                let frac = if digits == 9 { frac } else { frac / 1000 };
                format!("{}.{frac:0digits$}", ts.div_euclid(1_000_000_000))
            }
            TimeFormat::Absolute
            | TimeFormat::AbsoluteDate
            | TimeFormat::Utc
            | TimeFormat::UtcDate => wall_clock(ts, self.format, digits),
        }
    }
}

/// `HH:MM:SS.ffffff`, with the date before it for `ad`/`ud`; local time for `a`/`ad`.
fn wall_clock(ts: i64, format: TimeFormat, digits: usize) -> String {
    use chrono::{DateTime, Local, Utc};
    let Some(utc) = DateTime::<Utc>::from_timestamp(
        ts.div_euclid(1_000_000_000),
        ts.rem_euclid(1_000_000_000) as u32,
    ) else {
        return ts.to_string();
    };
    let frac = ts.rem_euclid(1_000_000_000);
    let frac = if digits == 9 { frac } else { frac / 1000 };
    let (date, time) = match format {
        TimeFormat::Absolute | TimeFormat::AbsoluteDate => {
            let l = utc.with_timezone(&Local);
            (
                l.format("%Y-%m-%d").to_string(),
                l.format("%H:%M:%S").to_string(),
            )
        }
        _ => (
            utc.format("%Y-%m-%d").to_string(),
            utc.format("%H:%M:%S").to_string(),
        ),
    };
    match format {
        TimeFormat::AbsoluteDate | TimeFormat::UtcDate => format!("{date} {time}.{frac:0digits$}"),
        _ => format!("{time}.{frac:0digits$}"),
    }
}

/// The summary line of a message found in a capture.
pub fn line(rec: &Record<'_>, clock: &Clock) -> String {
    line_styled(rec, clock, false)
}

/// Latencies at or above this read as slow (yellow), and at or above `VERY_SLOW` red.
const SLOW_NANOS: i64 = 100_000_000;
const VERY_SLOW_NANOS: i64 = 1_000_000_000;

/// [`line`], coloured for a terminal when `color`: the API in bold cyan, errors and `!!` in
/// red, slow latencies in yellow or red.
pub fn line_styled(rec: &Record<'_>, clock: &Clock, color: bool) -> String {
    use owo_colors::OwoColorize;
    let paint = |text: String, f: fn(&String) -> String| if color { f(&text) } else { text };
    let msg = &rec.msg;
    let dir = match msg.direction {
        Direction::Request => "Request",
        Direction::Response => "Response",
    };
    let api = match (msg.api_key, msg.api_version) {
        (Some(_), Some(v)) => format!("{} v{v}", msg.api_name()),
        _ => "Unknown".to_string(),
    };
    let api = paint(format!("{api} {dir}"), |t| t.cyan().bold().to_string());
    let mut s = format!(
        "{:>6} {} {} → {} [{}] {api}",
        rec.frame,
        clock.text(rec.ts_nanos),
        rec.src,
        rec.dst,
        rec.stream
    );
    if let Some(c) = msg.correlation_id {
        let _ = write!(s, " corr={c}");
    }
    let ess = essentials(msg);
    if !ess.is_empty() {
        s.push(' ');
        if color {
            let words: Vec<String> = ess
                .split(' ')
                .map(|w| {
                    let bad = w.starts_with("error=")
                        || w.starts_with("errors=")
                        || w.starts_with("partition_errors=")
                        || (w.contains('(') && w.contains("_") && w.ends_with(")]"));
                    if bad {
                        w.red().to_string()
                    } else {
                        w.to_string()
                    }
                })
                .collect();
            s.push_str(&words.join(" "));
        } else {
            s.push_str(&ess);
        }
    }
    if rec.assumed {
        s.push_str(" [API assumed: request not captured]");
    }
    if let Some(v) = msg.assumed_version {
        let _ = write!(s, " [assumed_version: read with the v{v} layout]");
    }
    if let (Some(lat), Some(req)) = (rec.latency_nanos(), rec.request) {
        let text = latency_text(lat);
        let text = match lat {
            l if color && l >= VERY_SLOW_NANOS => text.red().bold().to_string(),
            l if color && l >= SLOW_NANOS => text.yellow().to_string(),
            _ => text,
        };
        let _ = write!(s, " ({text} after frame {})", req.frame);
        if lat < 0 {
            let m = " !! timestamped before its request: the capture's clock went backwards";
            s.push_str(&paint(m.to_string(), |t| t.red().to_string()));
        }
    }
    if rec.partial {
        let _ = write!(
            s,
            " [partial: {} of {} bytes captured, the rest lost in a gap]",
            rec.bytes.len(),
            frame_size(rec.bytes)
        );
    } else if let Some(e) = msg.error.as_ref().filter(|_| msg.is_unknown_api()) {
        let _ = write!(s, " [body not decoded: {}]", e.reason);
    } else if let Some(e) = &msg.error {
        let mut m = format!(" !! malformed: {e}");
        // When another version's layout fits, that is the news: say it on the line too.
        if let Some(h) = msg
            .diagnoses
            .iter()
            .find(|d| d.kind == crate::kafka::ProblemKind::WrongVersionLayout)
        {
            let _ = write!(m, "; {}", h.message);
        }
        s.push_str(&paint(m, |t| t.red().to_string()));
    } else if let Some(d) = msg.diagnoses.first() {
        let m = format!(" !! malformed at 0x{:04x}: {}", d.offset, d.message);
        s.push_str(&paint(m, |t| t.red().to_string()));
    }
    s
}

fn frame_size(b: &[u8]) -> String {
    match b.get(0..4) {
        Some(p) => (i64::from(i32::from_be_bytes([p[0], p[1], p[2], p[3]])) + 4).to_string(),
        None => "?".to_string(),
    }
}
