//! `--stats`: tables after the messages (or alone with `-q`), or one JSON object with `--json`.
//! Fed with every message and notice; knows nothing of how they were found.

use super::summary::latency_text;
use crate::kafka::health::StreamHealth;
use crate::kafka::message::api_display_name;
use crate::kafka::stream::{Notice, Record};
use crate::kafka::{names, Direction};
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Table};
use serde_json::{json, Value as J};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Default, Clone)]
struct ApiRow {
    requests: u64,
    responses: u64,
    unanswered: u64,
    errors: u64,
    malformed: u64,
    latencies: Latencies,
}

/// Latencies exact up to `EXACT_LATENCIES` samples, then as a histogram whose buckets are 1 µs
/// below 10 ms and 4 significant digits above, so that memory stays bounded on any capture
/// while the shown percentiles (µs, or ms to 2 decimals) stay as printed from exact values.
#[derive(Debug, Default, Clone)]
struct Latencies {
    exact: Vec<i64>,
    hist: BTreeMap<i64, u64>,
    n: u64,
    max: Option<i64>,
}

const EXACT_LATENCIES: usize = 4096;
/// Connections given a row of their own in the statistics; the rest are summed in one row.
const CONN_ROWS: usize = 10_000;

/// Rows per API and version. A real capture has a few hundred at most (every API in a few
/// versions); frames on a broker port may carry any key and version, so past this the
/// messages are only counted.
const API_ROWS: usize = 512;

/// Histogram buckets kept over all rows (about 50 bytes each, 12 MiB in all): past it a new
/// latency joins the nearest bucket below (or the first) of its row, so that a capture
/// spreading its latencies over every bucket of every row (some 100 000 a row) does not cost
/// megabytes a row. Real latencies fill a few hundred buckets a row, and within the budget
/// the percentiles print as the exact ones would.
const MAX_BUCKETS: usize = 262_144;

fn bucket(v: i64) -> i64 {
    if v < 10_000_000 {
        return v - v.rem_euclid(1000);
    }
    let mut scale = 1i64;
    while v / scale >= 10_000 {
        scale = scale.saturating_mul(10);
    }
    v - v % scale
}

impl Latencies {
    /// One more latency; `buckets` is what is left of `MAX_BUCKETS` over all rows.
    fn push(&mut self, v: i64, buckets: &mut usize) {
        self.n += 1;
        self.max = Some(self.max.map_or(v, |m| m.max(v)));
        if self.hist.is_empty() && self.exact.len() < EXACT_LATENCIES {
            self.exact.push(v);
            return;
        }
        for x in std::mem::take(&mut self.exact) {
            self.count(bucket(x), buckets);
        }
        self.count(bucket(v), buckets);
    }

    /// One more latency in bucket `b`, or in the nearest one kept once the buckets are spent.
    fn count(&mut self, b: i64, buckets: &mut usize) {
        let key = if self.hist.contains_key(&b) {
            b
        } else if *buckets > 0 {
            *buckets -= 1;
            b
        } else {
            let below = self.hist.range(..b).next_back().map(|(k, _)| *k);
            below
                .or_else(|| self.hist.keys().next().copied())
                .unwrap_or(b)
        };
        *self.hist.entry(key).or_default() += 1;
    }

    /// Nearest-rank percentile.
    fn percentile(&self, p: f64) -> Option<i64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((p / 100.0) * self.n as f64).ceil().max(1.0) as u64;
        if self.hist.is_empty() {
            let mut l = self.exact.clone();
            l.sort_unstable();
            return l.get(rank as usize - 1).copied();
        }
        let mut seen = 0;
        for (&b, &c) in &self.hist {
            seen += c;
            if seen >= rank {
                return Some(b);
            }
        }
        self.max
    }
}

#[derive(Debug, Default, Clone)]
struct ConnRow {
    client: String,
    broker: String,
    client_id: Option<String>,
    messages: u64,
    bytes: u64,
}

#[derive(Debug, Default)]
pub struct Stats {
    apis: BTreeMap<(i16, i16), ApiRow>,
    /// By (input file, stream): streams count per file.
    conns: BTreeMap<(usize, u32), ConnRow>,
    /// The input files read, the one being read last.
    files: Vec<String>,
    /// Messages and bytes of the connections past CONN_ROWS.
    other_conns: ConnRow,
    /// Messages of API versions past the first `API_ROWS`.
    other_api_messages: u64,
    /// Histogram buckets made so far, over all rows, of `MAX_BUCKETS`.
    buckets_used: usize,
    errors: BTreeMap<i16, u64>,
    /// Broker address → API key → (min, max) advertised in ApiVersions.
    advertised: BTreeMap<String, BTreeMap<i16, (i64, i64)>>,
    /// API key → versions clients used.
    used: BTreeMap<i16, BTreeSet<i16>>,
    /// Messages and notices: the same counters as the closing report's, over what the
    /// statistics count.
    pub health: StreamHealth,
    /// Packets read, and those the snap length cut (from the pipeline, per input).
    pub packets: u64,
    pub truncated_packets: u64,
}

impl Stats {
    /// The messages to come are from the input `name` (each file has its own streams).
    pub fn next_file(&mut self, name: &str) {
        self.files.push(name.to_string());
    }

    /// The input file of the messages counted now.
    fn file(&self) -> usize {
        self.files.len().saturating_sub(1)
    }

    /// A connection's file, when there are several.
    fn file_name(&self, file: usize) -> Option<&str> {
        (self.files.len() > 1)
            .then(|| self.files.get(file).map(String::as_str))
            .flatten()
    }

    pub fn message(&mut self, rec: &Record<'_>) {
        let m = &rec.msg;
        let key = (self.file(), rec.stream);
        let conn = if self.conns.len() < CONN_ROWS || self.conns.contains_key(&key) {
            self.conns.entry(key).or_default()
        } else {
            &mut self.other_conns
        };
        conn.messages += 1;
        conn.bytes += rec.bytes.len() as u64;
        match m.direction {
            // Addresses are written once: formatting them per message costs more than the rest.
            Direction::Request => {
                if conn.client.is_empty() {
                    conn.client = rec.src.to_string();
                    conn.broker = rec.dst.to_string();
                }
                if conn.client_id.is_none() {
                    if let Some(Some(c)) = &m.client_id {
                        conn.client_id = Some(c.clone());
                    }
                }
            }
            Direction::Response if conn.client.is_empty() => {
                conn.client = rec.dst.to_string();
                conn.broker = rec.src.to_string();
            }
            Direction::Response => {}
        }
        self.health.message(rec);
        let (Some(k), Some(v)) = (m.api_key, m.api_version) else {
            return;
        };
        if self.apis.len() >= API_ROWS && !self.apis.contains_key(&(k, v)) {
            self.other_api_messages += 1;
            return;
        }
        let row = self.apis.entry((k, v)).or_default();
        if m.is_malformed() && !rec.partial {
            row.malformed += 1;
        }
        match m.direction {
            Direction::Request => {
                row.requests += 1;
                self.used.entry(k).or_default().insert(v);
            }
            Direction::Response => {
                row.responses += 1;
                match rec.latency_nanos() {
                    // Counted by the health counters, and left out of the percentiles.
                    Some(l) if l < 0 => {}
                    Some(l) => {
                        let mut left = MAX_BUCKETS.saturating_sub(self.buckets_used);
                        row.latencies.push(l, &mut left);
                        self.buckets_used = MAX_BUCKETS - left;
                    }
                    None => {}
                }
                if !m.errors.is_empty() {
                    row.errors += 1;
                }
                for (_, c) in &m.errors {
                    *self.errors.entry(*c).or_default() += 1;
                }
                if let (Some(list), false) = (&m.facts.advertised, m.is_malformed()) {
                    let adv = self.advertised.entry(rec.src.to_string()).or_default();
                    for &(key, lo, hi) in list {
                        adv.insert(key, (lo, hi));
                    }
                }
            }
        }
    }

    pub fn notice(&mut self, n: &Notice) {
        self.health.notice(n);
        if let Notice::Unanswered { request, .. } = n {
            let key = (request.api_key, request.api_version);
            if self.apis.len() < API_ROWS || self.apis.contains_key(&key) {
                self.apis.entry(key).or_default().unanswered += 1;
            }
        }
    }

    fn skew(&self) -> Vec<(i16, String, String, String)> {
        let mut out = Vec::new();
        let keys: BTreeSet<i16> = self
            .used
            .keys()
            .copied()
            .chain(self.advertised.values().flat_map(|m| m.keys().copied()))
            .collect();
        for k in keys {
            let used = self.used.get(&k);
            let used_s = used.map_or("-".to_string(), |s| {
                s.iter()
                    .map(|v| format!("v{v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            });
            let mut adv = Vec::new();
            let mut status = "ok".to_string();
            for (broker, m) in &self.advertised {
                match m.get(&k) {
                    Some((lo, hi)) => {
                        adv.push(format!("{broker}: v{lo}-v{hi}"));
                        if let Some(u) = used {
                            let over: Vec<String> = u
                                .iter()
                                .filter(|v| i64::from(**v) > *hi || i64::from(**v) < *lo)
                                .map(|v| format!("v{v}"))
                                .collect();
                            if !over.is_empty() {
                                status = format!(
                                    "used outside the advertised range: {}",
                                    over.join(" ")
                                );
                            }
                        }
                    }
                    None => {
                        if used.is_some() {
                            status = format!("not advertised by {broker}");
                        }
                    }
                }
            }
            if self.advertised.is_empty() {
                status = "no ApiVersions response captured".into();
            }
            if used.is_none() && status == "ok" {
                continue;
            }
            out.push((
                k,
                if adv.is_empty() {
                    "-".into()
                } else {
                    adv.join(", ")
                },
                used_s,
                status,
            ));
        }
        out
    }

    /// The tables as text, each as wide as its content.
    pub fn tables(&self) -> String {
        self.tables_within(None)
    }

    /// The tables as text, each fitted into `width` columns when given (a terminal's width):
    /// comfy-table wraps the widest cells first. A blank line between tables.
    pub fn tables_within(&self, width: Option<u16>) -> String {
        let mut sections = vec![
            ("Kafka APIs", self.api_table(width)),
            ("Connections", self.connection_table(width)),
        ];
        if !self.errors.is_empty() {
            sections.push(("Error codes", self.error_table(width)));
        }
        let skew = self.skew();
        if !skew.is_empty() {
            sections.push((
                "API versions: advertised by brokers vs used by clients",
                skew_table(skew, width),
            ));
        }
        sections.push(("Capture health", health_table(self, width)));
        let text: Vec<String> = sections
            .iter()
            .map(|(title, t)| format!("{title}\n{t}\n"))
            .collect();
        text.join("\n")
    }

    /// Per API and version: counts and latency percentiles.
    fn api_table(&self, width: Option<u16>) -> Table {
        let mut t = new_table(
            width,
            &[
                "API",
                "version",
                "requests",
                "responses",
                "unanswered",
                "with errors",
                "malformed",
                "p50",
                "p95",
                "p99",
                "max",
            ],
        );
        for ((k, v), r) in &self.apis {
            let l = &r.latencies;
            let p = |x: f64| l.percentile(x).map_or("-".to_string(), latency_text);
            t.add_row(vec![
                Cell::new(api_label(*k)),
                right(v),
                right(r.requests),
                right(r.responses),
                right(r.unanswered),
                right(r.errors),
                right(r.malformed),
                right(p(50.0)),
                right(p(95.0)),
                right(p(99.0)),
                right(l.max.map_or("-".to_string(), latency_text)),
            ]);
        }
        if self.other_api_messages > 0 {
            t.add_row(vec![Cell::new(format!(
                "({} messages of API versions past the first {API_ROWS}, not broken down)",
                self.other_api_messages
            ))]);
        }
        t
    }

    /// Per TCP stream: who spoke to whom, and how much; the streams past `CONN_ROWS` in one row.
    fn connection_table(&self, width: Option<u16>) -> Table {
        let several = self.files.len() > 1;
        let header = [
            "file",
            "stream",
            "client_id",
            "client",
            "broker",
            "messages",
            "bytes",
        ];
        let mut t = new_table(width, header.get(usize::from(!several)..).unwrap_or(&[]));
        for (&(file, id), c) in &self.conns {
            let mut row = Vec::new();
            if let Some(f) = self.file_name(file) {
                row.push(Cell::new(f));
            }
            t.add_row(row.into_iter().chain([
                Cell::new(id),
                Cell::new(c.client_id.as_deref().unwrap_or("-")),
                Cell::new(&c.client),
                Cell::new(&c.broker),
                right(c.messages),
                right(c.bytes),
            ]));
        }
        if self.other_conns.messages > 0 {
            let mut row = Vec::new();
            if several {
                row.push(Cell::new("-"));
            }
            t.add_row(row.into_iter().chain([
                Cell::new("…"),
                Cell::new(format!("(connections past the first {CONN_ROWS})")),
                Cell::new("-"),
                Cell::new("-"),
                right(self.other_conns.messages),
                right(self.other_conns.bytes),
            ]));
        }
        t
    }

    /// How often each error code was answered.
    fn error_table(&self, width: Option<u16>) -> Table {
        let mut t = new_table(width, &["error", "code", "count"]);
        for (code, n) in &self.errors {
            t.add_row(vec![
                Cell::new(names::error_name(*code).unwrap_or("unknown")),
                right(code),
                right(n),
            ]);
        }
        t
    }
    /// The same as one JSON object.
    pub fn to_json(&self) -> J {
        let apis: Vec<J> = self
            .apis
            .iter()
            .map(|((k, v), r)| {
                let l = &r.latencies;
                let us = |x: Option<i64>| x.map_or(J::Null, |n| json!(n as f64 / 1000.0));
                json!({
                    "api_key": k, "api_name": api_display_name(*k), "api_version": v,
                    "requests": r.requests, "responses": r.responses, "unanswered": r.unanswered,
                    "with_errors": r.errors, "malformed": r.malformed,
                    "latency_us": {"p50": us(l.percentile(50.0)), "p95": us(l.percentile(95.0)),
                                   "p99": us(l.percentile(99.0)), "max": us(l.max)}
                })
            })
            .collect();
        let conns: Vec<J> = self
            .conns
            .iter()
            .map(|(&(file, id), c)| {
                let row = json!({"stream": id, "client_id": c.client_id, "client": c.client, "broker": c.broker, "messages": c.messages, "bytes": c.bytes});
                match (self.file_name(file), row) {
                    (Some(f), J::Object(o)) => {
                        let mut with = serde_json::Map::new();
                        with.insert("file".into(), J::String(f.into()));
                        with.extend(o);
                        J::Object(with)
                    }
                    (_, row) => row,
                }
            })
            .collect();
        let mut conns = conns;
        if self.other_conns.messages > 0 {
            let o = &self.other_conns;
            conns.push(json!({"stream": null, "client_id": null, "client": "*", "broker": "*", "messages": o.messages, "bytes": o.bytes}));
        }
        let errors: Vec<J> = self
            .errors
            .iter()
            .map(|(c, n)| json!({"code": c, "name": names::error_name(*c), "count": n}))
            .collect();
        let skew: Vec<J> = self
            .skew()
            .into_iter()
            .map(|(k, adv, used, status)| json!({"api_key": k, "api_name": api_display_name(k), "advertised": adv, "used": used, "status": status}))
            .collect();
        let advertised: serde_json::Map<String, J> = self
            .advertised
            .iter()
            .map(|(b, m)| {
                let v: Vec<J> = m
                    .iter()
                    .map(|(k, (lo, hi))| json!({"api_key": k, "min": lo, "max": hi}))
                    .collect();
                (b.clone(), J::Array(v))
            })
            .collect();
        let h = &self.health;
        json!({
            "apis": apis,
            "connections": conns,
            "errors": errors,
            "advertised": advertised,
            "version_skew": skew,
            "health": {
                "packets": self.packets, "truncated_packets": self.truncated_packets, "gaps": h.gaps,
                "partial": h.partial, "retransmissions": h.retransmissions,
                "conflicting_overlaps": h.conflicting_overlaps, "midstream_pickups": h.midstream_pickups,
                "resyncs": h.resyncs, "bad_sizes": h.bad_sizes,
                "unmatched_responses": h.unmatched_responses, "unanswered": h.unanswered,
                "malformed": h.malformed, "undecoded": h.undecoded,
                "backwards": h.backwards, "frames_dropped": h.frames_dropped,
                "pending_dropped": h.pending_dropped, "ended_in_frame": h.ended_in_frame
            }
        })
    }

    /// Any value of a body node tree is irrelevant here; kept for symmetry with the JSON view.
    pub fn is_empty(&self) -> bool {
        self.apis.is_empty() && self.conns.is_empty()
    }
}

/// Versions brokers advertised against those clients used, for the APIs where they disagree.
fn skew_table(skew: Vec<(i16, String, String, String)>, width: Option<u16>) -> Table {
    let mut t = new_table(
        width,
        &["API", "broker advertised", "clients used", "status"],
    );
    for (k, adv, used, status) in skew {
        t.add_row(vec![
            Cell::new(api_label(k)),
            Cell::new(adv),
            Cell::new(used),
            Cell::new(status),
        ]);
    }
    t
}

/// The capture health counters, one a row.
fn health_table(s: &Stats, width: Option<u16>) -> Table {
    let h = &s.health;
    let mut t = new_table(width, &["capture health", "count"]);
    for (name, v) in [
        ("packets", s.packets),
        ("packets cut by the snap length", s.truncated_packets),
        ("frames lost in gaps", h.gaps),
        ("frames shown partially", h.partial),
        ("retransmissions", h.retransmissions),
        ("conflicting overlaps", h.conflicting_overlaps),
        ("streams picked up mid-stream", h.midstream_pickups),
        ("resynchronisations", h.resyncs),
        ("size prefixes that cannot be frames", h.bad_sizes),
        (
            "responses without a captured request",
            h.unmatched_responses,
        ),
        ("requests without a response", h.unanswered),
        ("responses timestamped before their request", h.backwards),
        ("malformed messages", h.malformed),
        ("messages of APIs not decoded", h.undecoded),
    ] {
        t.add_row(vec![Cell::new(name), right(v)]);
    }
    // What only the memory limits, or streams ending inside a frame, cause: shown when it
    // happened.
    for (name, v) in [
        (
            "frames cut off by the end of their stream",
            h.ended_in_frame,
        ),
        ("frames still arriving dropped for memory", h.frames_dropped),
        ("requests no longer waited for", h.pending_dropped),
    ] {
        if v > 0 {
            t.add_row(vec![Cell::new(name), right(v)]);
        }
    }
    t
}

/// A table in the house style with `header`, fitted into `width` columns when given.
fn new_table(width: Option<u16>, header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    if let Some(w) = width {
        t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
        t.set_width(w);
    }
    t.set_header(header.to_vec());
    t
}

/// A right-aligned cell, for numbers.
fn right(v: impl ToString) -> Cell {
    Cell::new(v.to_string()).set_alignment(CellAlignment::Right)
}

/// `Metadata (3)`.
fn api_label(key: i16) -> String {
    format!("{} ({key})", api_display_name(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::stream::RequestInfo;
    use crate::kafka::{decode_request, decode_response, Message};
    use crate::render::test_frames;

    fn record(msg: Message, bytes: &[u8], stream: u32, latency: Option<i64>) -> Record<'_> {
        let client = std::net::SocketAddr::from(([10, 0, 0, 1], 40000 + stream as u16));
        let broker = std::net::SocketAddr::from(([10, 0, 0, 2], 9092));
        let from_broker = msg.direction == Direction::Response;
        Record {
            stream,
            frame: 1,
            first_frame: 1,
            last_frame: 1,
            ts_nanos: latency.unwrap_or(0),
            src: if from_broker { broker } else { client },
            dst: if from_broker { client } else { broker },
            bytes,
            request: latency.map(|_| RequestInfo {
                frame: 1,
                ts_nanos: 0,
                api_key: msg.api_key.unwrap_or(-1),
                api_version: msg.api_version.unwrap_or(-1),
                correlation_id: 0,
            }),
            msg,
            assumed: false,
            partial: false,
            ended: None,
        }
    }

    /// Two Metadata exchanges on two streams (the second answer with a partition error), one
    /// SaslAuthenticate request left unanswered, and an API without tables.
    fn sample() -> Stats {
        let mut s = Stats::default();
        let (req, _) = test_frames::metadata_request();
        let (resp, _) = test_frames::metadata_response();
        let mut bad = resp.clone();
        if let Some(b) = bad.get_mut(0x35) {
            *b = 9;
        }
        for (stream, answer, latency) in [(1, &resp, 2_500_000), (2, &bad, 40_000)] {
            s.message(&record(decode_request(&req), &req, stream, None));
            let m = decode_response(answer, 3, 13);
            s.message(&record(m, answer, stream, Some(latency)));
        }
        let (sasl, m) = test_frames::sasl_plain();
        s.message(&record(m, &sasl, 1, None));
        let unknown = test_frames::request(1000, 0, 9, &[1, 2, 3]);
        s.message(&record(decode_request(&unknown), &unknown, 2, None));
        s.packets = 12;
        s
    }

    #[test]
    fn tables_count_apis_connections_errors_skew_and_health() {
        assert_eq!(sample().tables(), TABLES);
    }

    #[test]
    fn tables_fit_a_narrow_terminal() {
        let text = sample().tables_within(Some(60));
        for l in text.lines() {
            assert!(l.chars().count() <= 60, "{l}");
        }
        assert!(text.contains(NARROW_CONNECTIONS), "{text}");
        assert!(text.starts_with("Kafka APIs\n┌─────┬─────┬"), "{text}");
    }

    #[test]
    fn unanswered_requests_count_in_their_api_row() {
        let mut s = sample();
        let info = RequestInfo {
            frame: 1,
            ts_nanos: 0,
            api_key: 3,
            api_version: 13,
            correlation_id: 0,
        };
        s.notice(&Notice::Unanswered {
            stream: 1,
            src: std::net::SocketAddr::from(([10, 0, 0, 1], 40001)),
            dst: std::net::SocketAddr::from(([10, 0, 0, 2], 9092)),
            request: info,
        });
        let text = s.tables();
        assert!(
            text.contains(
                "│ Metadata (3)          ┆      13 ┆        2 ┆         2 ┆          1 ┆"
            ),
            "{text}"
        );
        assert!(text.contains("│ requests without a response                ┆     1 │"));
        assert_eq!(s.to_json()["health"]["unanswered"], 1);
    }

    /// `sample()` as tables.
    const TABLES: &str = r#"Kafka APIs
┌───────────────────────┬─────────┬──────────┬───────────┬────────────┬─────────────┬───────────┬─────────┬─────────┬─────────┬─────────┐
│ API                   ┆ version ┆ requests ┆ responses ┆ unanswered ┆ with errors ┆ malformed ┆ p50     ┆ p95     ┆ p99     ┆ max     │
╞═══════════════════════╪═════════╪══════════╪═══════════╪════════════╪═════════════╪═══════════╪═════════╪═════════╪═════════╪═════════╡
│ Metadata (3)          ┆      13 ┆        2 ┆         2 ┆          0 ┆           1 ┆         0 ┆ 0.04 ms ┆ 2.50 ms ┆ 2.50 ms ┆ 2.50 ms │
│ SaslAuthenticate (36) ┆       2 ┆        1 ┆         0 ┆          0 ┆           0 ┆         0 ┆       - ┆       - ┆       - ┆       - │
│ ApiKey1000 (1000)     ┆       0 ┆        1 ┆         0 ┆          0 ┆           0 ┆         0 ┆       - ┆       - ┆       - ┆       - │
└───────────────────────┴─────────┴──────────┴───────────┴────────────┴─────────────┴───────────┴─────────┴─────────┴─────────┴─────────┘

Connections
┌────────┬───────────┬────────────────┬───────────────┬──────────┬───────┐
│ stream ┆ client_id ┆ client         ┆ broker        ┆ messages ┆ bytes │
╞════════╪═══════════╪════════════════╪═══════════════╪══════════╪═══════╡
│ 1      ┆           ┆ 10.0.0.1:40001 ┆ 10.0.0.2:9092 ┆        3 ┆   154 │
│ 2      ┆           ┆ 10.0.0.1:40002 ┆ 10.0.0.2:9092 ┆        3 ┆   146 │
└────────┴───────────┴────────────────┴───────────────┴──────────┴───────┘

Error codes
┌───────────────────────┬──────┬───────┐
│ error                 ┆ code ┆ count │
╞═══════════════════════╪══════╪═══════╡
│ REPLICA_NOT_AVAILABLE ┆    9 ┆     1 │
└───────────────────────┴──────┴───────┘

API versions: advertised by brokers vs used by clients
┌───────────────────────┬───────────────────┬──────────────┬──────────────────────────────────┐
│ API                   ┆ broker advertised ┆ clients used ┆ status                           │
╞═══════════════════════╪═══════════════════╪══════════════╪══════════════════════════════════╡
│ Metadata (3)          ┆ -                 ┆ v13          ┆ no ApiVersions response captured │
│ SaslAuthenticate (36) ┆ -                 ┆ v2           ┆ no ApiVersions response captured │
│ ApiKey1000 (1000)     ┆ -                 ┆ v0           ┆ no ApiVersions response captured │
└───────────────────────┴───────────────────┴──────────────┴──────────────────────────────────┘

Capture health
┌────────────────────────────────────────────┬───────┐
│ capture health                             ┆ count │
╞════════════════════════════════════════════╪═══════╡
│ packets                                    ┆    12 │
│ packets cut by the snap length             ┆     0 │
│ frames lost in gaps                        ┆     0 │
│ frames shown partially                     ┆     0 │
│ retransmissions                            ┆     0 │
│ conflicting overlaps                       ┆     0 │
│ streams picked up mid-stream               ┆     0 │
│ resynchronisations                         ┆     0 │
│ size prefixes that cannot be frames        ┆     0 │
│ responses without a captured request       ┆     0 │
│ requests without a response                ┆     0 │
│ responses timestamped before their request ┆     0 │
│ malformed messages                         ┆     0 │
│ messages of APIs not decoded               ┆     1 │
└────────────────────────────────────────────┴───────┘
"#;

    /// The connections of `sample()` in 60 columns.
    const NARROW_CONNECTIONS: &str = r#"Connections
┌────────┬──────────┬──────────┬─────────┬─────────┬───────┐
│ stream ┆ client_i ┆ client   ┆ broker  ┆ message ┆ bytes │
│        ┆ d        ┆          ┆         ┆ s       ┆       │
╞════════╪══════════╪══════════╪═════════╪═════════╪═══════╡
│ 1      ┆          ┆ 10.0.0.1 ┆ 10.0.0. ┆       3 ┆   154 │
│        ┆          ┆ :40001   ┆ 2:9092  ┆         ┆       │
│ 2      ┆          ┆ 10.0.0.1 ┆ 10.0.0. ┆       3 ┆   146 │
│        ┆          ┆ :40002   ┆ 2:9092  ┆         ┆       │
└────────┴──────────┴──────────┴─────────┴─────────┴───────┘
"#;

    /// Past the exact window the histogram's percentiles print as the exact ones do.
    #[test]
    fn histogram_percentiles_match_exact_ones_as_printed() {
        let mut l = Latencies::default();
        let mut all = Vec::new();
        // A deterministic spread from 1 µs to about 2 s.
        let mut x: u64 = 12345;
        for _ in 0..50_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = 1000 + ((x >> 33) % 2_000_000_000) as i64 / (1 + (x % 97) as i64);
            let mut unlimited = usize::MAX;
            l.push(v, &mut unlimited);
            all.push(v);
        }
        assert!(!l.hist.is_empty() && l.exact.is_empty());
        all.sort_unstable();
        for p in [50.0, 95.0, 99.0] {
            let rank = ((p / 100.0) * all.len() as f64).ceil() as usize;
            let exact = all[rank - 1];
            let got = l.percentile(p).unwrap_or(0);
            assert!(
                got <= exact && bucket(exact) == got,
                "p{p}: {got} vs {exact}"
            );
            if exact < 10_000_000 {
                assert_eq!(latency_text(got), latency_text(exact));
            }
        }
        assert_eq!(l.max, all.last().copied());
        assert!(l.hist.len() < 20_000, "{} buckets", l.hist.len());
    }

    #[test]
    fn few_latencies_stay_exact() {
        let mut l = Latencies::default();
        for v in [1234, 5678, 91011] {
            l.push(v, &mut 0);
        }
        assert_eq!(l.percentile(50.0), Some(5678));
        assert_eq!(l.percentile(99.0), Some(91011));
    }

    #[test]
    fn buckets_stay_bounded_when_latencies_spread_over_all_of_them() {
        let mut l = Latencies::default();
        // One latency in each of 20 000 distinct buckets (1 µs apart), then a large one.
        let mut left = 4096;
        for us in 0..20_000i64 {
            l.push(us * 1000, &mut left);
        }
        l.push(5_000_000_000, &mut left);
        assert_eq!(l.hist.len(), 4096, "{} buckets", l.hist.len());
        assert_eq!(left, 0);
        assert_eq!(l.n, 20_001);
        assert_eq!(l.max, Some(5_000_000_000));
        let total: u64 = l.hist.values().sum();
        assert_eq!(total, 20_001, "every latency counted once");
    }

    #[test]
    fn api_rows_stop_at_the_bound_and_the_rest_is_counted() {
        let (frame, msg) = test_frames::metadata_request();
        let mut s = Stats::default();
        for v in 0..(API_ROWS as i16 + 10) {
            let mut m = msg.clone();
            m.api_version = Some(v);
            s.message(&record(m, &frame, 1, None));
        }
        assert_eq!(s.apis.len(), API_ROWS);
        assert_eq!(s.other_api_messages, 10);
    }
}
