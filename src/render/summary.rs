//! One line per Kafka message, like tshark's: frame, relative time, endpoints, stream, API,
//! direction, correlation id, and the essentials of the body.

use super::value::quote;
use crate::kafka::facts::{Scalar, TopicList, TopicRef, MAX_TOPICS};
use crate::kafka::stream::Record;
use crate::kafka::{names, Direction, Message};
use std::fmt::Write;

/// The essentials of a message body, as `key=value` words.
pub fn essentials(msg: &Message) -> String {
    let f = &msg.facts;
    let mut words: Vec<String> = Vec::new();
    if msg.direction == Direction::Request {
        match &msg.client_id {
            Some(Some(c)) => words.push(format!("client_id={}", quote(c))),
            Some(None) => words.push("client_id=null".to_string()),
            None => {}
        }
    }
    if msg.body().is_none() {
        return words.join(" ");
    }
    if let Some(e) = f.error {
        words.push(format!("error={}", error_name(e)));
    }
    if let Some(n) = f.brokers {
        words.push(format!("brokers={n}"));
    }
    if let Some(c) = &f.cluster_id {
        words.push(format!("cluster_id={}", quote(c)));
    }
    if let Some(n) = f.api_count {
        words.push(format!("apis={n}"));
    }
    if let Some((n, v)) = &f.software {
        words.push(format!("software={n}/{v}"));
    }
    sasl_words(msg, &mut words);
    if let Some(keys) = &f.coordinator_keys {
        let keys: Vec<String> = keys.iter().map(|k| quote(k)).collect();
        words.push(format!("keys=[{}]", keys.join(", ")));
    }
    if let Some(n) = f.coordinator {
        words.push(format!("coordinator={n}"));
    }
    if let Some(list) = &f.coordinators {
        let nodes: Vec<String> = list.iter().map(i64::to_string).collect();
        words.push(format!("coordinators=[{}]", nodes.join(", ")));
    }
    for (label, v) in &f.identity {
        match v {
            Scalar::Str(s) => words.push(format!("{label}={}", quote(s))),
            Scalar::Int(i) => words.push(format!("{label}={i}")),
        }
    }
    if let Some(t) = &f.topics {
        words.push(format!("topics={}", list_text(t)));
    }
    // DescribeTopicPartitions pages: where a request resumes and where the next page starts.
    for (c, label) in [(&f.cursor, "cursor"), (&f.next_cursor, "next_cursor")] {
        if let Some((topic, part)) = c {
            words.push(format!("{label}={topic}/{part}"));
        }
    }
    if let Some(r) = &f.resources {
        words.push(format!("resources={}", list_text(r)));
    }
    if let Some(t) = &f.topic_names {
        words.push(format!("topics={}", list_text(t)));
    }
    if f.partitions > 0 {
        words.push(format!("partitions={}", f.partitions));
    }
    let (records, bytes) = msg.records;
    if bytes > 0 {
        words.push(format!("records={records} ({bytes} bytes)"));
    }
    if msg.direction == Direction::Response {
        error_words(msg, &mut words);
    }
    words.join(" ")
}

fn error_name(code: i16) -> &'static str {
    names::error_name(code).unwrap_or("unknown error")
}

/// `[orders, payments(UNKNOWN_TOPIC_OR_PARTITION), +3 more]`, or `all`.
fn list_text(t: &TopicList) -> String {
    if t.all {
        return "all".to_string();
    }
    let mut items: Vec<String> = t
        .first
        .iter()
        .map(|e| {
            let mut s = match &e.topic {
                TopicRef::Name(n) => n.clone(),
                // An id whose name an earlier message gave reads as the name.
                TopicRef::Id(_, Some(n)) => n.clone(),
                TopicRef::Id(u, None) => super::value::uuid(u),
                TopicRef::Unnamed => "?".to_string(),
            };
            if let Some(c) = e.error {
                let _ = write!(s, "({})", error_name(c));
            }
            s
        })
        .collect();
    if t.total > t.first.len() {
        items.push(format!("+{} more", t.total - t.first.len()));
    }
    format!("[{}]", items.join(", "))
}

/// SASL: the mechanism asked for or offered, and the login step with its user.
fn sasl_words(msg: &Message, words: &mut Vec<String>) {
    let f = &msg.facts;
    if let Some(m) = &f.mechanism {
        words.push(format!("mechanism={m}"));
    }
    if let Some(list) = &f.mechanisms {
        words.push(format!("mechanisms=[{}]", list.join(", ")));
    }
    if let Some(sasl) = &msg.sasl {
        words.push(format!("sasl={}", quote(sasl.step.short())));
        if let Some(u) = &sasl.user {
            words.push(format!("user={}", quote(u)));
        }
    }
}

/// Errors below the top level: one level down outside the topic lists (those show beside each
/// topic: FindCoordinator v4+'s Coordinators[], DescribeGroups' Groups[]), and the count and
/// names of deeper ones (partitions).
fn error_words(msg: &Message, words: &mut Vec<String>) {
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
        nested.push(format!("{}({item})", error_name(*code)));
    }
    if !nested.is_empty() {
        let more = nested.len().saturating_sub(MAX_TOPICS);
        nested.truncate(MAX_TOPICS);
        if more > 0 {
            nested.push(format!("+{more} more"));
        }
        words.push(format!("errors=[{}]", nested.join(", ")));
    }
    let deeper: Vec<i16> = msg
        .errors
        .iter()
        .filter(|(p, _)| p.matches('.').count() >= 2)
        .map(|(_, c)| *c)
        .collect();
    if !deeper.is_empty() {
        let mut names_seen: Vec<&str> = Vec::new();
        for c in &deeper {
            let n = error_name(*c);
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
        let _ = write!(
            s,
            " [body not decoded: {}]",
            super::with_hint(&e.reason, e.kind.problem())
        );
    } else if let Some(e) = &msg.error {
        let mut m = format!(
            " !! malformed: {}",
            super::with_hint(&e.to_string(), e.kind.problem())
        );
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
        let m = format!(
            " !! malformed at 0x{:04x}: {}",
            d.offset,
            super::with_hint(&d.message, d.kind)
        );
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
