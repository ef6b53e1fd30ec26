//! Throughput per topic and partition: records and bytes produced (the Produce requests'
//! batches) and fetched (the Fetch responses' batches, follower fetches left out), on the wire
//! and uncompressed; the compression ratio per codec; batch sizes; and the slowest Produce
//! exchanges that waited for every in-sync replica (acks=all).

use super::adapter::Event;
use super::series::{at_text, ms, ms_text, Buckets};
use super::{MAX_KEYS, MAX_SAMPLES};
use crate::kafka::meaning::facts::BatchFact;
use crate::kafka::records::codec_name;
use crate::render::table::{Cell, Grid};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

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
    topics: Vec<String>,
    records: i64,
}

/// Slow acks=all produces kept.
const SLOWEST: usize = 10;

#[derive(Debug, Default)]
pub struct Throughput {
    produce: HashMap<(String, i32), Totals>,
    fetch: HashMap<(String, i32), Totals>,
    /// Per codec: batches, wire bytes, uncompressed bytes (produced).
    codecs: BTreeMap<u8, (u64, u64, u64)>,
    /// (ts, records, wire bytes) produced and fetched per topic, for the series.
    produce_ts: HashMap<String, Vec<(i64, i64, i64)>>,
    fetch_ts: HashMap<String, Vec<(i64, i64, i64)>>,
    slowest: Vec<SlowProduce>,
}

fn add(
    totals: &mut HashMap<(String, i32), Totals>,
    times: &mut HashMap<String, Vec<(i64, i64, i64)>>,
    e: &Event,
    topic: &str,
    part: i32,
    batches: &[BatchFact],
) {
    let key = (topic.to_string(), part);
    if totals.len() >= MAX_KEYS && !totals.contains_key(&key) {
        return;
    }
    let t = totals.entry(key).or_default();
    for b in batches {
        t.add(b);
    }
    let records: i64 = batches.iter().map(|b| b.records).sum();
    let wire: usize = batches.iter().map(|b| b.wire_bytes).sum();
    if times.len() < MAX_KEYS || times.contains_key(topic) {
        let s = times.entry(topic.to_string()).or_default();
        if s.len() < MAX_SAMPLES {
            s.push((e.ts, records, wire as i64));
        }
    }
}

impl Throughput {
    pub fn request(&mut self, e: &Event) {
        if e.api_key != 0 {
            return;
        }
        for p in &e.parts {
            add(
                &mut self.produce,
                &mut self.produce_ts,
                e,
                &p.topic,
                p.partition,
                &p.batches,
            );
            for b in &p.batches {
                let c = self.codecs.entry(b.codec).or_default();
                c.0 += 1;
                c.1 += b.wire_bytes as u64;
                c.2 += b.plain_bytes as u64;
            }
        }
    }

    pub fn response(&mut self, req: Option<&Event>, e: &Event) {
        match (e.api_key, req) {
            // A Fetch answer whose request was not captured may be a follower's.
            (1, Some(r)) if !r.replica => {
                for p in e.parts.iter().filter(|p| !p.batches.is_empty()) {
                    add(
                        &mut self.fetch,
                        &mut self.fetch_ts,
                        e,
                        &p.topic,
                        p.partition,
                        &p.batches,
                    );
                }
            }
            (0, Some(r)) if r.acks == Some(-1) => self.slow(r, e),
            _ => {}
        }
    }

    fn slow(&mut self, r: &Event, e: &Event) {
        let mut topics: Vec<String> = r.parts.iter().map(|p| p.topic.clone()).collect();
        topics.dedup();
        self.slowest.push(SlowProduce {
            latency: e.ts - r.ts,
            frame: e.frame,
            ts: r.ts,
            client_id: r.client_id.clone(),
            topics,
            records: r
                .parts
                .iter()
                .flat_map(|p| &p.batches)
                .map(|b| b.records)
                .sum(),
        });
        self.slowest
            .sort_by(|a, b| b.latency.cmp(&a.latency).then(a.frame.cmp(&b.frame)));
        self.slowest.truncate(SLOWEST);
    }

    fn per_topic(m: &HashMap<(String, i32), Totals>) -> BTreeMap<String, Totals> {
        let mut out: BTreeMap<String, Totals> = BTreeMap::new();
        for ((t, _), x) in m {
            out.entry(t.clone()).or_default().merge(x);
        }
        out
    }

    pub fn tables(&self, span: Option<(i64, i64)>, width: Option<u16>) -> Vec<(String, String)> {
        if self.produce.is_empty() && self.fetch.is_empty() {
            return Vec::new();
        }
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
            for ((t, p), x) in m {
                rows.insert((t.clone(), *p, dir), *x);
            }
        }
        for ((t, p), x) in rows.iter().map(|((t, p, d), x)| ((t, (*p, *d)), x)) {
            let per_s = |v: f64| format!("{:.1}", v / secs);
            g.row(vec![
                Cell::atom(t),
                Cell::num(p.0),
                Cell::atom(p.1),
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
        let (c, sl) = (self.codec_grid(), self.slowest_grid(span));
        let mut out = vec![(
            format!("Throughput per topic and partition (over {secs:.3} s)"),
            g.render(width).to_string(),
        )];
        if !self.codecs.is_empty() {
            out.push((
                "Compression per codec (produced batches)".into(),
                c.render(width).to_string(),
            ));
        }
        if !self.slowest.is_empty() {
            out.push((
                "Slowest acks=all produces (request to response)".into(),
                sl.render(width).to_string(),
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

    fn slowest_grid(&self, span: Option<(i64, i64)>) -> Grid {
        let start = span.map_or(0, |s| s.0);
        let mut s = Grid::new(&["frame", "at", "client_id", "topics", "records", "latency"]);
        for x in &self.slowest {
            s.row(vec![
                Cell::num(x.frame),
                Cell::num(at_text(x.ts, start)),
                Cell::atom(&x.client_id),
                Cell::text(x.topics.join(" ")),
                Cell::num(x.records),
                Cell::num(ms_text(x.latency)),
            ]);
        }
        s
    }

    /// The throughput tables and series.
    pub fn out(&self, span: Option<(i64, i64)>, b: &Buckets) -> ThroughputOut {
        let secs = seconds(span);
        let mut partitions = Vec::new();
        let mut topics = Vec::new();
        for (dir, m) in [("produce", &self.produce), ("fetch", &self.fetch)] {
            let sorted: BTreeMap<&(String, i32), &Totals> = m.iter().collect();
            partitions.extend(
                sorted
                    .iter()
                    .map(|((t, p), x)| ThroughputRow::of(dir, t, Some(*p), x, secs)),
            );
            topics.extend(
                Self::per_topic(m)
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
                topics: x.topics.clone(),
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
                produce: topic_series(&self.produce_ts, b),
                fetch: topic_series(&self.fetch_ts, b),
            },
        }
    }
}

/// Records and wire bytes per bucket of each topic, by topic.
fn topic_series(m: &HashMap<String, Vec<(i64, i64, i64)>>, b: &Buckets) -> Vec<TopicSeries> {
    let sorted: BTreeMap<&String, &Vec<(i64, i64, i64)>> = m.iter().collect();
    sorted
        .iter()
        .map(|(t, s)| TopicSeries {
            topic: (*t).clone(),
            records: b.sum_per_bucket(s.iter().map(|x| (x.0, x.1))),
            wire_bytes: b.sum_per_bucket(s.iter().map(|x| (x.0, x.2))),
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
