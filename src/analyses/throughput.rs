//! Throughput per topic and partition: records and bytes produced (the Produce requests'
//! batches) and fetched (the Fetch responses' batches, follower fetches left out), on the wire
//! and uncompressed; the compression ratio per codec; batch sizes; and the slowest Produce
//! exchanges that waited for every in-sync replica (acks=all).

use super::adapter::Event;
use super::budget::Budget;
use super::keys::{TopicIx, Tp};
use super::series::{at_text, ms, ms_text, Buckets, Cells, Merge};
use super::{Analyses, At, Held, MAX_KEYS};
use crate::analyses::hash::HashMap;
use crate::kafka::meaning::facts::BatchFact;
use crate::kafka::records::codec_name;
use crate::text::table::{Cell, Fit, Grid};
use serde::Serialize;
use std::collections::BTreeMap;

/// Totals of one direction (produce or fetch) of one partition.
#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    batches: u64,
    records: i64,
    wire: u64,
    plain: u64,
    /// Records and bytes of the smallest and largest batch.
    min_records: Option<i64>,
    max_records: i64,
    max_wire: u64,
}

impl Totals {
    fn add(&mut self, b: &BatchFact) {
        self.batches += 1;
        self.records += b.records;
        self.wire += b.wire_bytes as u64;
        self.plain += b.plain_bytes as u64;
        self.min_records = Some(self.min_records.map_or(b.records, |m| m.min(b.records)));
        self.max_records = self.max_records.max(b.records);
        self.max_wire = self.max_wire.max(b.wire_bytes as u64);
    }

    fn merge(&mut self, o: &Totals) {
        self.batches += o.batches;
        self.records += o.records;
        self.wire += o.wire;
        self.plain += o.plain;
        self.min_records = match (self.min_records, o.min_records) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.max_records = self.max_records.max(o.max_records);
        self.max_wire = self.max_wire.max(o.max_wire);
    }
}

/// A Produce exchange with acks=all.
#[derive(Debug, Clone)]
struct SlowProduce {
    latency: i64,
    frame: u64,
    ts: i64,
    client_id: String,
    topics: Vec<TopicIx>,
    records: i64,
}

/// Slow acks=all produces kept.
const SLOWEST: usize = 10;

/// (time, records, wire bytes) kept over all topics of a direction (24 bytes each); each
/// topic keeps at least 16, merged by time cell past its share.
pub const SERIES_POINTS: usize = 65_536;
pub const LEAST_SERIES_POINTS: usize = 16;

#[derive(Debug)]
pub struct Throughput {
    produce: HashMap<Tp, Totals>,
    fetch: HashMap<Tp, Totals>,
    /// Per codec: batches, wire bytes, uncompressed bytes (produced).
    codecs: BTreeMap<u8, (u64, u64, u64)>,
    /// (ts, records, wire bytes) produced and fetched per topic, for the series.
    produce_ts: HashMap<TopicIx, Cells>,
    fetch_ts: HashMap<TopicIx, Cells>,
    /// What the series of each direction keep together.
    budgets: [Budget; 2],
    slowest: Vec<SlowProduce>,
}

impl Default for Throughput {
    fn default() -> Throughput {
        Throughput::new(SERIES_POINTS)
    }
}

impl Throughput {
    /// Throughput keeping `points` points of each direction's series, all topics together.
    pub fn new(points: usize) -> Throughput {
        let budget = Budget::new(points, LEAST_SERIES_POINTS);
        Throughput {
            produce: HashMap::default(),
            fetch: HashMap::default(),
            codecs: BTreeMap::new(),
            produce_ts: HashMap::default(),
            fetch_ts: HashMap::default(),
            budgets: [budget; 2],
            slowest: Vec::new(),
        }
    }
}

fn add(
    totals: &mut HashMap<Tp, Totals>,
    (times, budget): (&mut HashMap<TopicIx, Cells>, &mut Budget),
    ts: i64,
    tp: Tp,
    batches: &[BatchFact],
) {
    if totals.len() >= MAX_KEYS && !totals.contains_key(&tp) {
        return;
    }
    let t = totals.entry(tp).or_default();
    for b in batches {
        t.add(b);
    }
    let records: i64 = batches.iter().map(|b| b.records).sum();
    let wire: usize = batches.iter().map(|b| b.wire_bytes).sum();
    if times.len() < MAX_KEYS || times.contains_key(&tp.0) {
        budget.add(times, tp.0, |s| {
            s.push((ts, records, wire as i64), usize::MAX, Merge::Sum)
        });
    }
}

impl Throughput {
    pub fn request(&mut self, e: &Event, parts: &[At]) {
        if e.api_key != 0 {
            return;
        }
        for at in parts {
            let p = &e.parts[at.i];
            let series = (&mut self.produce_ts, &mut self.budgets[0]);
            add(&mut self.produce, series, e.ts, at.tp, &p.batches);
            for b in &p.batches {
                let c = self.codecs.entry(b.codec).or_default();
                c.0 += 1;
                c.1 += b.wire_bytes as u64;
                c.2 += b.plain_bytes as u64;
            }
        }
    }

    pub fn response(&mut self, req: Option<&Held>, e: &Event, parts: &[At]) {
        match (e.api_key, req) {
            // A Fetch answer whose request was not captured may be a follower's.
            (1, Some(r)) if !r.event.replica => {
                for at in parts {
                    let p = &e.parts[at.i];
                    if !p.batches.is_empty() {
                        let series = (&mut self.fetch_ts, &mut self.budgets[1]);
                        add(&mut self.fetch, series, e.ts, at.tp, &p.batches);
                    }
                }
            }
            (0, Some(r)) => {
                if let Some((topics, records)) = &r.slow {
                    self.slow(r, topics, *records, e);
                }
            }
            _ => {}
        }
    }

    fn slow(&mut self, r: &Held, topics: &[TopicIx], records: i64, e: &Event) {
        let latency = e.ts - r.event.ts;
        let full = self.slowest.len() >= SLOWEST;
        if full && self.slowest.last().is_some_and(|x| x.latency >= latency) {
            return;
        }
        self.slowest.push(SlowProduce {
            latency,
            frame: e.frame,
            ts: r.event.ts,
            client_id: r.event.client_id.clone(),
            topics: topics.to_vec(),
            records,
        });
        self.slowest
            .sort_by(|a, b| b.latency.cmp(&a.latency).then(a.frame.cmp(&b.frame)));
        self.slowest.truncate(SLOWEST);
    }

    /// Totals by (topic, partition), topics under the names known at the end.
    fn named(a: &Analyses, m: &HashMap<Tp, Totals>) -> BTreeMap<(String, i32), Totals> {
        let mut out: BTreeMap<(String, i32), Totals> = BTreeMap::new();
        for ((t, p), x) in m {
            out.entry((a.topic_text(*t), *p)).or_default().merge(x);
        }
        out
    }

    fn per_topic(m: &BTreeMap<(String, i32), Totals>) -> BTreeMap<String, Totals> {
        let mut out: BTreeMap<String, Totals> = BTreeMap::new();
        for ((t, _), x) in m {
            out.entry(t.clone()).or_default().merge(x);
        }
        out
    }

    pub fn tables(&self, a: &Analyses, fit: Fit) -> Vec<(String, String)> {
        if self.produce.is_empty() && self.fetch.is_empty() {
            return Vec::new();
        }
        let span = a.span();
        let secs = seconds(span);
        let mut g = Grid::new(&[
            "topic",
            "partition",
            "direction",
            "records",
            "records/s",
            "wire B/s",
            "uncompressed B/s",
            "batches",
            "records per batch",
            "largest batch",
        ]);
        let mut rows: BTreeMap<(String, i32, &str), Totals> = BTreeMap::new();
        for (dir, m) in [("produce", &self.produce), ("fetch", &self.fetch)] {
            for ((t, p), x) in Self::named(a, m) {
                rows.insert((t, p, dir), x);
            }
        }
        let rows: Vec<(&(String, i32, &str), &Totals)> = rows.iter().collect();
        let shown = super::lag::top(&rows, |r| r.1.records, fit.rows());
        for (i, ((t, p, d), x)) in rows.iter().enumerate() {
            if !shown[i] {
                continue;
            }
            let per_s = |v: f64| format!("{:.1}", v / secs);
            g.row(vec![
                Cell::atom(t),
                Cell::num(p),
                Cell::atom(*d),
                Cell::num(x.records),
                Cell::num(per_s(x.records as f64)),
                Cell::num(per_s(x.wire as f64)),
                Cell::num(per_s(x.plain as f64)),
                Cell::num(x.batches),
                Cell::num(format!(
                    "{}-{} (avg {:.1})",
                    x.min_records.unwrap_or(0),
                    x.max_records,
                    x.records as f64 / x.batches.max(1) as f64
                )),
                Cell::num(format!("{} B", x.max_wire)),
            ]);
        }
        let more = rows.len().saturating_sub(fit.rows());
        if more > 0 {
            g.note(format!(
                "and {more} more partitions and directions with fewer records (all in --json)"
            ));
        }
        let (c, sl) = (self.codec_grid(), self.slowest_grid(a, fit.rows()));
        let mut out = vec![(
            format!("Throughput per topic and partition (over {secs:.3} s)"),
            g.text(fit.width),
        )];
        if !self.codecs.is_empty() {
            out.push((
                "Compression per codec (produced batches)".into(),
                c.text(fit.width),
            ));
        }
        if !self.slowest.is_empty() {
            out.push((
                "Slowest acks=all produces (request to response)".into(),
                sl.text(fit.width),
            ));
        }
        out
    }

    fn codec_grid(&self) -> Grid {
        let mut c = Grid::new(&[
            "codec",
            "batches",
            "wire bytes",
            "uncompressed bytes",
            "ratio",
        ]);
        for (codec, (n, wire, plain)) in &self.codecs {
            c.row(vec![
                Cell::atom(codec_name(*codec)),
                Cell::num(n),
                Cell::num(wire),
                Cell::num(plain),
                Cell::num(format!("{:.2}", *plain as f64 / (*wire).max(1) as f64)),
            ]);
        }
        c
    }

    fn slowest_grid(&self, a: &Analyses, rows: usize) -> Grid {
        let start = a.span().map_or(0, |s| s.0);
        let mut s = Grid::new(&["frame", "at", "client_id", "topics", "records", "latency"]);
        for x in self.slowest.iter().take(rows) {
            s.row(vec![
                Cell::num(x.frame),
                Cell::num(at_text(x.ts, start)),
                Cell::atom(&x.client_id),
                Cell::text(topic_list(a, &x.topics).join(" ")),
                Cell::num(x.records),
                Cell::num(ms_text(x.latency)),
            ]);
        }
        s
    }

    /// The throughput tables and series.
    pub fn out(&self, a: &Analyses, b: &Buckets) -> ThroughputOut {
        let secs = seconds(a.span());
        let mut partitions = Vec::new();
        let mut topics = Vec::new();
        for (dir, m) in [("produce", &self.produce), ("fetch", &self.fetch)] {
            let named = Self::named(a, m);
            partitions.extend(
                named
                    .iter()
                    .map(|((t, p), x)| ThroughputRow::of(dir, t, Some(*p), x, secs)),
            );
            topics.extend(
                Self::per_topic(&named)
                    .iter()
                    .map(|(t, x)| ThroughputRow::of(dir, t, None, x, secs)),
            );
        }
        let codecs = self
            .codecs
            .iter()
            .map(|(c, (n, w, p))| CodecOut {
                codec: codec_name(*c),
                batches: *n,
                wire_bytes: *w,
                uncompressed_bytes: *p,
                ratio: *p as f64 / (*w).max(1) as f64,
            })
            .collect();
        let slowest_acks_all = self
            .slowest
            .iter()
            .map(|x| SlowProduceOut {
                frame: x.frame,
                ts_ns: x.ts,
                client_id: x.client_id.clone(),
                topics: topic_list(a, &x.topics),
                records: x.records,
                latency_ms: ms(x.latency),
            })
            .collect();
        ThroughputOut {
            seconds: secs,
            partitions,
            topics,
            codecs,
            slowest_acks_all,
            series: ThroughputSeries {
                produce: topic_series(a, &self.produce_ts, b),
                fetch: topic_series(a, &self.fetch_ts, b),
            },
        }
    }
}

/// Topics by name as shown, without repeats next to each other.
fn topic_list(a: &Analyses, topics: &[TopicIx]) -> Vec<String> {
    let mut out: Vec<String> = topics.iter().map(|t| a.topic_text(*t)).collect();
    out.dedup();
    out
}

/// Records and wire bytes per bucket of each topic, by topic.
fn topic_series(a: &Analyses, m: &HashMap<TopicIx, Cells>, b: &Buckets) -> Vec<TopicSeries> {
    let mut named: BTreeMap<String, (Vec<i64>, Vec<i64>)> = BTreeMap::new();
    for (t, s) in m {
        let slot = named
            .entry(a.topic_text(*t))
            .or_insert_with(|| (vec![0; b.count], vec![0; b.count]));
        for (i, v) in b
            .sum_per_bucket(s.kept.iter().map(|x| (x.0, x.1)))
            .into_iter()
            .enumerate()
        {
            slot.0[i] += v;
        }
        for (i, v) in b
            .sum_per_bucket(s.kept.iter().map(|x| (x.0, x.2)))
            .into_iter()
            .enumerate()
        {
            slot.1[i] += v;
        }
    }
    named
        .into_iter()
        .map(|(topic, (records, wire_bytes))| TopicSeries {
            topic,
            records,
            wire_bytes,
        })
        .collect()
}

/// Throughput (`throughput` in the JSON).
#[derive(Debug, Clone, Serialize)]
pub struct ThroughputOut {
    /// The span rates are counted over: first to last message, at least 1 ms.
    pub seconds: f64,
    /// Per topic and partition: produce rows, then fetch rows, each by topic and partition.
    pub partitions: Vec<ThroughputRow>,
    /// Per topic (`partition` is `None`): produce rows, then fetch rows.
    pub topics: Vec<ThroughputRow>,
    /// Produced batches per codec, by codec number.
    pub codecs: Vec<CodecOut>,
    /// The slowest acks=all Produce exchanges (10 at most), slowest first.
    pub slowest_acks_all: Vec<SlowProduceOut>,
    pub series: ThroughputSeries,
}

/// One direction of one partition (or topic).
#[derive(Debug, Clone, Serialize)]
pub struct ThroughputRow {
    pub topic: String,
    /// `None` (`null`) in a per-topic row.
    pub partition: Option<i32>,
    /// `produce` or `fetch`.
    pub direction: &'static str,
    pub records: i64,
    pub batches: u64,
    /// Each batch's bytes as sent, and with its compressed block replaced by what it
    /// decompresses to.
    pub wire_bytes: u64,
    pub uncompressed_bytes: u64,
    pub records_per_s: f64,
    pub wire_bytes_per_s: f64,
    pub uncompressed_bytes_per_s: f64,
    pub batch_records: BatchRecords,
    pub largest_batch_bytes: u64,
}

impl ThroughputRow {
    fn of(dir: &'static str, t: &str, p: Option<i32>, x: &Totals, secs: f64) -> ThroughputRow {
        ThroughputRow {
            topic: t.to_string(),
            partition: p,
            direction: dir,
            records: x.records,
            batches: x.batches,
            wire_bytes: x.wire,
            uncompressed_bytes: x.plain,
            records_per_s: x.records as f64 / secs,
            wire_bytes_per_s: x.wire as f64 / secs,
            uncompressed_bytes_per_s: x.plain as f64 / secs,
            batch_records: BatchRecords {
                min: x.min_records,
                max: x.max_records,
                avg: x.records as f64 / x.batches.max(1) as f64,
            },
            largest_batch_bytes: x.max_wire,
        }
    }
}

/// Records per batch: smallest, largest, mean.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BatchRecords {
    pub min: Option<i64>,
    pub max: i64,
    pub avg: f64,
}

/// Produced batches of one codec.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CodecOut {
    pub codec: &'static str,
    pub batches: u64,
    pub wire_bytes: u64,
    pub uncompressed_bytes: u64,
    /// Uncompressed bytes over wire bytes.
    pub ratio: f64,
}

/// A Produce exchange with acks=all.
#[derive(Debug, Clone, Serialize)]
pub struct SlowProduceOut {
    /// The response's frame, and the request's capture time.
    pub frame: u64,
    pub ts_ns: i64,
    pub client_id: String,
    pub topics: Vec<String>,
    pub records: i64,
    /// Request to response.
    pub latency_ms: f64,
}

/// Per topic, records and wire bytes per bucket.
#[derive(Debug, Clone, Serialize)]
pub struct ThroughputSeries {
    pub produce: Vec<TopicSeries>,
    pub fetch: Vec<TopicSeries>,
}

/// One topic's sums per bucket.
#[derive(Debug, Clone, Serialize)]
pub struct TopicSeries {
    pub topic: String,
    pub records: Vec<i64>,
    pub wire_bytes: Vec<i64>,
}

/// The capture's span in seconds (at least 1 ms, so that rates of one message stay finite).
fn seconds(span: Option<(i64, i64)>) -> f64 {
    span.map_or(0.0, |(a, z)| (z - a) as f64 / 1e9).max(0.001)
}
