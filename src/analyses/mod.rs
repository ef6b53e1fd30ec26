//! Analyses over a whole capture, from the messages alone: consumer lag, end-to-end record
//! latency, throughput, group timelines, version negotiation per client software, and
//! findings with their frames. Each is a section of `--stats` (tables), an object of
//! `--stats --json`, and a part of the `--report` HTML file. Every message comes in through
//! [`adapter::event`]; nothing here reads the decoded tree.
//!
//! Memory stays bounded: every table of the analyses stops growing at its own bound
//! (`MAX_KEYS` keys, `MAX_SAMPLES` samples per series), past which what comes is counted.

pub mod adapter;
mod budget;
pub mod cluster;
pub(crate) mod findings;
mod groups;
mod hash;
mod keys;
mod lag;
mod latency;
mod limits;
mod points;
mod series;
mod throughput;
mod versions;
mod weighted;

pub use adapter::{event, Event};

use crate::analyses::hash::HashMap;
use crate::kafka::stream::{Notice, Record};
use crate::text::table::Fit;
use keys::{Interned, TopicIx, Topics, Tp};
use serde::Serialize;
use serde_json::Value as J;
use std::collections::VecDeque;
use std::net::IpAddr;

pub use findings::FindingOut;
pub use groups::{AssignedOut, GenerationOut, GroupOut, HappeningOut, MemberOut};
pub use lag::{Kind as LagKind, LagAt, LagOut, LagPoint, LagSeriesOut, Status as LagStatus};
pub use latency::{EndToEndOut, LatencyMs, RecordLatencyOut, UnconsumedOut};
pub use limits::{Limits, DEFAULT_MEMORY as DEFAULT_ANALYSES_MEMORY};
pub use series::BucketsOut;
pub use throughput::{
    BatchRecords, CodecOut, SlowProduceOut, ThroughputOut, ThroughputRow, ThroughputSeries,
    TopicSeries,
};
pub use versions::{ApiUseOut, ClientVersionsOut};

/// Keys (partitions, clients, groups, connections) any one table keeps. Clients are keyed
/// by address: a capture of an hour of pods coming and going names tens of thousands, and
/// each key costs every analysis that follows it (a lag series, a version table, findings'
/// windows); past this many, later ones are counted, not followed.
pub const MAX_KEYS: usize = 4096;
/// Entries the findings keep of each kind (connections opened and picked up, requests
/// waiting or unanswered, NOT_LEADER answers, leader moves): past it they are counted.
pub const MAX_SAMPLES: usize = 100_000;

/// Everything the analyses found, as `--stats --json` prints it under `stats.analyses` and
/// the `--report` page draws it: the one typed form of their output. Fields serialize in
/// their order here, each under its own name; an analysis not asked for is left out.
#[derive(Debug, Clone, Serialize)]
pub struct AnalysesOut {
    /// The capture's first and last message; `null` when it had none.
    pub span: Option<SpanOut>,
    /// The time buckets every series is counted in.
    pub interval: BucketsOut,
    /// The largest request-to-response time per bucket, per API, by API key.
    pub api_latency: Vec<ApiLatencyOut>,
    /// Connections opened, and the most opened within one second.
    pub connections: ConnectionsOut,
    /// Consumer lag (`--analyses=lag`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lag: Option<LagOut>,
    /// End-to-end record latency and records never consumed (`latency`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_to_end: Option<EndToEndOut>,
    /// Throughput per topic and partition, codecs, slow acks=all produces (`throughput`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput: Option<ThroughputOut>,
    /// Group timelines, by group name (`groups`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<GroupOut>>,
    /// Messages of groups past the groups followed (groups::MAX_GROUPS), not counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups_dropped: Option<u64>,
    /// Version negotiation per client software (`versions`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_versions: Option<Vec<ClientVersionsOut>>,
    /// Findings, in the order docs/analyses.md lists their kinds (`findings`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub findings: Option<Vec<FindingOut>>,
    /// What the KRaft metadata log changed in the cluster (`cluster`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<cluster::ClusterOut>,
    /// Every topic id the capture named (Metadata, DescribeTopicPartitions and CreateTopics
    /// answers, the KRaft log's TopicRecord, a batch fetched under the id that a Produce
    /// sent under the name), by id: the names every table above uses for them, rows kept
    /// under an id before its name was learnt included.
    pub topic_ids: Vec<TopicIdOut>,
}

/// A topic id and the name the capture gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TopicIdOut {
    /// The id as Kafka's tools print it in hex with dashes
    /// (`80a8b1aa-9d3d-4eea-8df2-9476378d3511`).
    pub id: String,
    pub name: String,
}

/// The capture's time span.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SpanOut {
    /// The first and last message's capture time, in ns since 1970.
    pub first_ns: i64,
    pub last_ns: i64,
    /// `last_ns - first_ns` in seconds.
    pub seconds: f64,
}

/// One API's latency chart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApiLatencyOut {
    pub api_key: i16,
    pub api_name: String,
    /// The largest latency of each bucket in ms; `None` (`null`) where a bucket has none.
    pub max_ms: Vec<Option<f64>>,
}

/// Connections seen opening (a stream's first message).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ConnectionsOut {
    pub opened: usize,
    pub most_in_one_second: usize,
}

/// Which analyses run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Which {
    pub lag: bool,
    pub latency: bool,
    pub throughput: bool,
    pub groups: bool,
    pub versions: bool,
    pub findings: bool,
    pub cluster: bool,
}

impl Which {
    pub const ALL: Which = Which {
        lag: true,
        latency: true,
        throughput: true,
        groups: true,
        versions: true,
        findings: true,
        cluster: true,
    };
    pub const NAMES: [&'static str; 7] = [
        "lag",
        "latency",
        "throughput",
        "groups",
        "versions",
        "findings",
        "cluster",
    ];

    /// `lag,latency`, `all`.
    pub fn parse(list: &str) -> Result<Which, String> {
        let mut w = Which {
            lag: false,
            latency: false,
            throughput: false,
            groups: false,
            versions: false,
            findings: false,
            cluster: false,
        };
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match name {
                "all" => w = Which::ALL,
                "lag" => w.lag = true,
                "latency" => w.latency = true,
                "throughput" => w.throughput = true,
                "groups" => w.groups = true,
                "versions" => w.versions = true,
                "findings" => w.findings = true,
                "cluster" => w.cluster = true,
                other => {
                    return Err(format!(
                        "--analyses: {other:?} is not one of all, {}",
                        Which::NAMES.join(", ")
                    ))
                }
            }
        }
        Ok(w)
    }
}

/// Who consumes: a client (its address and client_id), known to a group once a request of
/// its names one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientKey {
    pub ip: Option<IpAddr>,
    pub client_id: String,
}

impl ClientKey {
    fn of(e: &Event) -> ClientKey {
        ClientKey {
            ip: e.client.map(|a| a.ip()),
            client_id: e.client_id.clone(),
        }
    }
}

/// A request held for its response: the message without its partitions, and for each
/// partition the one value its answer is read with (keyed by partition, so that an answer
/// of many partitions finds each in constant time).
#[derive(Debug)]
pub struct Held {
    /// The request, its partitions left out (`parts` is empty).
    pub event: Event,
    /// Per partition, by API: Produce, the records sent; Fetch, the fetch offset;
    /// ListOffsets, the timestamp asked for; OffsetCommit, the committed offset;
    /// ShareFetch and ShareAcknowledge, the last offset acknowledged.
    pub parts: HashMap<Tp, i64>,
    /// The client (address and client_id) and the group it names, as indexes.
    pub client: Option<u32>,
    pub group: Option<u32>,
    /// A Produce with acks=all: its topics (in order, without repeats) and records.
    pub slow: Option<(Vec<TopicIx>, i64)>,
    /// What it holds, as counted against [`MAX_PENDING_BYTES`].
    bytes: usize,
    /// Its place in the order requests were held.
    seq: u64,
}

impl Held {
    /// The value held for a response's partition (found under the id it was asked by, when
    /// its name was learnt in between).
    pub fn get(&self, at: &At) -> Option<i64> {
        self.parts
            .get(&at.tp)
            .or_else(|| at.raw.and_then(|r| self.parts.get(&r)))
            .copied()
    }
}

/// A response's partition entry: its index in the event's `parts`, its partition under the
/// topic's name once known, and under the topic's id when it names one.
#[derive(Debug, Clone, Copy)]
pub struct At {
    pub i: usize,
    pub tp: Tp,
    pub raw: Option<Tp>,
}

/// The analyses' state.
#[derive(Debug)]
pub struct Analyses {
    pub which: Which,
    /// What the stores below may hold (`--analyses-memory`).
    limits: Limits,
    /// `--interval`, in nanoseconds; `None`: about 60 buckets over the capture.
    pub interval: Option<i64>,
    first_ts: Option<i64>,
    last_ts: Option<i64>,
    /// Requests by (stream, correlation id), for the responses that need their values, and
    /// the order they came in (to let the oldest go).
    pending: HashMap<(u32, i32), Held>,
    pending_order: VecDeque<(u64, (u32, i32))>,
    pending_bytes: usize,
    pending_seq: u64,
    /// Requests let go before their answer, past the bounds.
    pub pending_dropped: u64,
    /// Clients by the group their requests name.
    groups_of: HashMap<ClientKey, String>,
    /// What `groups_of` holds, about (its strings are the wire's, up to 32 KiB each).
    groups_of_bytes: usize,
    topics: Topics,
    clients: Interned<ClientKey>,
    group_names: Interned<String>,
    /// Batches of Produce requests that named their topic, by (producer id, base sequence,
    /// CRC, partition): the same batch fetched under a topic id names that id.
    batch_topics: HashMap<(i64, i32, u32, i32), TopicIx>,
    batch_order: VecDeque<(i64, i32, u32, i32)>,
    lag: lag::Lag,
    latency: latency::EndToEnd,
    throughput: throughput::Throughput,
    timeline: groups::Timeline,
    versions: versions::Versions,
    findings: findings::Findings,
    cluster: cluster::Cluster,
    /// (time, latency) of the responses of each API, for the latency chart.
    api_latency: HashMap<i16, series::Cells>,
    api_latency_budget: budget::Budget,
}

/// APIs whose responses are read with their request's values.
const PAIRED: [i16; 16] = [0, 1, 2, 3, 8, 9, 11, 12, 13, 14, 18, 68, 76, 78, 79, 88];

/// (time, latency) pairs kept for the latency charts by each API at least (merged by time
/// cell past its share of `Limits::api_latency_points`), and the APIs charted (Kafka has
/// under 100).
const LEAST_API_LATENCY_POINTS: usize = 256;
const MAX_APIS: usize = 256;

impl Analyses {
    pub fn new(which: Which, interval: Option<i64>, limits: Limits) -> Analyses {
        Analyses {
            limits,
            which,
            interval,
            first_ts: None,
            last_ts: None,
            pending: HashMap::default(),
            pending_order: VecDeque::new(),
            pending_bytes: 0,
            pending_seq: 0,
            pending_dropped: 0,
            groups_of: HashMap::default(),
            groups_of_bytes: 0,
            topics: Topics::default(),
            clients: Interned::new(MAX_KEYS),
            group_names: Interned::new(MAX_KEYS),
            batch_topics: HashMap::default(),
            batch_order: VecDeque::new(),
            lag: lag::Lag::new(limits.lag_points()),
            latency: latency::EndToEnd::new(&limits),
            throughput: throughput::Throughput::new(limits.series_points()),
            timeline: groups::Timeline::default(),
            versions: versions::Versions::default(),
            findings: findings::Findings::default(),
            cluster: cluster::Cluster::default(),
            api_latency: HashMap::default(),
            api_latency_budget: budget::Budget::new(
                limits.api_latency_points(),
                LEAST_API_LATENCY_POINTS,
            ),
        }
    }

    /// One message, as the pipeline found it.
    pub fn message(&mut self, rec: &Record<'_>) {
        if self.which.cluster {
            // The metadata log's records: a message's changes, not an event's facts.
            self.cluster.message(rec);
        }
        let pairs = adapter::topic_pairs(rec);
        if !pairs.is_empty() {
            self.topic_names(&pairs);
        }
        if let Some(e) = event(rec) {
            self.event(e);
        }
    }

    /// One message, in the analyses' terms.
    pub fn event(&mut self, e: Event) {
        self.first_ts = Some(self.first_ts.map_or(e.ts, |t| t.min(e.ts)));
        self.last_ts = Some(self.last_ts.map_or(e.ts, |t| t.max(e.ts)));
        let parts = self.resolve(&e);
        if e.response {
            let req = self.take_pending(e.stream, e.correlation_id);
            self.response(req.as_ref(), &e, &parts);
            if let Some(h) = &req {
                self.latency.forget(h);
            }
        } else {
            self.request(&e, &parts);
            if PAIRED.contains(&e.api_key) {
                let held = self.held(e, &parts);
                self.hold(held);
            }
        }
    }

    /// The message's partition entries, their topics as the analyses' indexes; names learnt
    /// from them (an entry with both an id and its name, a fetched batch a Produce named)
    /// move what was kept under the id.
    fn resolve(&mut self, e: &Event) -> Vec<At> {
        let mut out = Vec::with_capacity(e.parts.len());
        for (i, p) in e.parts.iter().enumerate() {
            let (tp, raw) = self.topics.of(p);
            if let Some(t) = tp {
                out.push(At {
                    i,
                    tp: (t, p.partition),
                    raw: raw.map(|r| (r, p.partition)),
                });
            }
        }
        self.batch_names(e, &out);
        for (from, to) in self.topics.take_joined() {
            self.lag.join(from, to);
            self.latency.join(from, to);
        }
        // Entries named under an id learnt just now take the name.
        for at in out.iter_mut() {
            at.tp.0 = self.topics.canon(at.tp.0);
        }
        out
    }

    /// Produce requests that name their topic remember their batches; a Fetch answer giving
    /// the same batch (producer id, base sequence, CRC, partition) under an id names it.
    fn batch_names(&mut self, e: &Event, parts: &[At]) {
        match (e.api_key, e.response) {
            (0, false) => {
                for at in parts.iter().filter(|at| at.raw.is_none()) {
                    for b in &e.parts[at.i].batches {
                        let key = (b.producer_id, b.base_sequence, b.crc, at.tp.1);
                        if self.batch_topics.insert(key, at.tp.0).is_none() {
                            self.batch_order.push_back(key);
                        }
                        if self.batch_order.len() > self.limits.batch_topics() {
                            if let Some(old) = self.batch_order.pop_front() {
                                self.batch_topics.remove(&old);
                            }
                        }
                    }
                }
            }
            (1, true) => {
                for at in parts.iter().filter(|at| at.raw.is_some_and(|r| r == at.tp)) {
                    let p = &e.parts[at.i];
                    let (Some(id), Some(b)) = (p.topic_id, p.batches.first()) else {
                        continue;
                    };
                    let key = (b.producer_id, b.base_sequence, b.crc, at.tp.1);
                    if let Some(&named) = self.batch_topics.get(&key) {
                        let name = self.topics.text(named);
                        self.topics.learn(id, &name);
                    }
                }
            }
            _ => {}
        }
    }

    /// What a request's answer will need of it.
    fn held(&mut self, mut e: Event, parts: &[At]) -> Held {
        let mut map: HashMap<Tp, i64> =
            HashMap::with_capacity_and_hasher(parts.len(), Default::default());
        for at in parts {
            let p = &e.parts[at.i];
            let v = match e.api_key {
                0 => Some(p.batches.iter().map(|b| b.records).sum()),
                1 => p.fetch_offset,
                2 => p.timestamp,
                8 => p.committed_offset,
                78 | 79 => p.ranges.iter().map(|r| r.1).max(),
                _ => None,
            };
            if let Some(v) = v {
                map.insert(at.tp, v);
            }
        }
        let slow = (e.api_key == 0 && e.acks == Some(-1)).then(|| {
            let mut topics: Vec<TopicIx> = parts.iter().map(|at| at.tp.0).collect();
            topics.dedup();
            let records = e.parts.iter().flat_map(|p| &p.batches).map(|b| b.records);
            (topics, records.sum())
        });
        e.parts = Default::default();
        if ![11, 14].contains(&e.api_key) {
            e.members = Vec::new();
        }
        let client = self.clients.ix(&ClientKey::of(&e));
        let group = e.group.as_ref().and_then(|g| self.group_names.ix(g));
        if let (Some(c), Some(g)) = (client, group) {
            self.lag.member_of(c, g);
        }
        let strings = e.client_id.len()
            + [&e.group, &e.member, &e.protocol]
                .iter()
                .map(|s| s.as_ref().map_or(0, String::len))
                .sum::<usize>()
            + e.members
                .iter()
                .map(|m| m.member_id.len() + 64)
                .sum::<usize>();
        let bytes = std::mem::size_of::<Held>() + strings + map.capacity() * 24;
        Held {
            event: e,
            parts: map,
            client,
            group,
            slow,
            bytes,
            seq: 0,
        }
    }

    /// Holds a request for its answer; past the bounds the oldest held goes.
    fn hold(&mut self, mut h: Held) {
        let key = (h.event.stream, h.event.correlation_id);
        if let Some(old) = self.take_pending(key.0, key.1) {
            self.latency.forget(&old);
        }
        if h.event.api_key == 0 {
            let parts: Vec<(Tp, i64)> = h.parts.iter().map(|(k, v)| (*k, *v)).collect();
            self.latency.request(&parts, h.event.ts);
        }
        self.pending_seq += 1;
        h.seq = self.pending_seq;
        self.pending_bytes += h.bytes;
        self.pending_order.push_back((h.seq, key));
        self.pending.insert(key, h);
        let (most, most_bytes) = self.limits.pending();
        while self.pending.len() > most || self.pending_bytes > most_bytes {
            let Some((seq, k)) = self.pending_order.pop_front() else {
                break;
            };
            if self.pending.get(&k).is_some_and(|h| h.seq == seq) {
                if let Some(old) = self.take_pending(k.0, k.1) {
                    self.latency.forget(&old);
                    self.pending_dropped += 1;
                }
            }
        }
    }

    fn take_pending(&mut self, stream: u32, corr: i32) -> Option<Held> {
        let h = self.pending.remove(&(stream, corr))?;
        self.pending_bytes -= h.bytes;
        // The order keeps its entry until it comes first: drop the spent ones there now and
        // then, so that it does not grow past what is held.
        if self.pending_order.len() > 2 * self.pending.len() + 64 {
            let pending = &self.pending;
            self.pending_order
                .retain(|(seq, k)| pending.get(k).is_some_and(|h| h.seq == *seq));
        }
        Some(h)
    }

    fn request(&mut self, e: &Event, parts: &[At]) {
        if let Some(g) = &e.group {
            let cost = 2 * (e.client_id.len() + g.len()) + 128;
            let room = self.groups_of.len() < MAX_KEYS
                && self.groups_of_bytes + cost <= keys::MAX_INTERNED_BYTES;
            let key = ClientKey::of(e);
            if room && !self.groups_of.contains_key(&key) {
                self.groups_of_bytes += cost;
                self.groups_of.insert(key, g.clone());
            }
        }
        self.findings.request(e);
        self.versions.request(e);
        self.timeline.request(e);
        self.throughput.request(e, parts);
    }

    fn response(&mut self, req: Option<&Held>, e: &Event, parts: &[At]) {
        if let Some(q) = e.asked.filter(|q| e.ts >= q.ts) {
            if self.api_latency.len() < MAX_APIS || self.api_latency.contains_key(&e.api_key) {
                let x = (e.ts, e.ts - q.ts, 0);
                self.api_latency_budget
                    .add(&mut self.api_latency, e.api_key, |l| {
                        l.push(x, usize::MAX, series::Merge::Max)
                    });
            }
        }
        let event = req.map(|h| &h.event);
        self.findings.response(event, e);
        self.versions.response(event, e);
        self.timeline.response(event, e);
        self.throughput.response(req, e, parts);
        self.lag.response(req, e, parts);
        if let Some(h) = req {
            self.latency.response(h, e, parts);
        }
    }

    pub fn notice(&mut self, n: &Notice) {
        if let Notice::Unanswered {
            stream, request, ..
        }
        | Notice::PendingDropped {
            stream, request, ..
        } = n
        {
            if let Some(h) = self.take_pending(*stream, request.correlation_id) {
                self.latency.forget(&h);
            }
        }
        self.findings.notice(n);
    }

    /// Topic names a message taught (see [`adapter::topic_pairs`]): rows kept under an id
    /// whose name came later are moved to the name.
    pub fn topic_names(&mut self, names: &[([u8; 16], String)]) {
        for (id, name) in names {
            self.topics.learn(*id, name);
        }
        for (from, to) in self.topics.take_joined() {
            self.lag.join(from, to);
            self.latency.join(from, to);
        }
    }

    /// Every topic id the analyses learnt a name for (from the messages, the topic names the
    /// pipeline gave, and batches fetched under an id that a Produce named), by id.
    pub fn learnt_names(&self) -> Vec<([u8; 16], String)> {
        self.topics.learnt()
    }

    /// A topic as shown: its name, or its id in hex while no name is known.
    fn topic_text(&self, t: TopicIx) -> String {
        self.topics.text(t)
    }

    fn group_text(&self, g: u32) -> String {
        self.group_names.get(g).cloned().unwrap_or_default()
    }

    /// The owner of a client (by index): its group, or `client <client_id>`.
    fn owner_of(&self, c: u32) -> String {
        self.clients
            .get(c)
            .map_or_else(String::new, |k| self.owner(k))
    }

    /// The capture's time span: (first, last) message time.
    pub fn span(&self) -> Option<(i64, i64)> {
        self.first_ts.zip(self.last_ts)
    }

    /// The group a client's requests named, or `client <client_id>`.
    pub fn owner(&self, c: &ClientKey) -> String {
        match self.groups_of.get(c) {
            Some(g) => g.clone(),
            None => format!("client {}", c.client_id),
        }
    }

    /// The time buckets of the series: start, width, count.
    pub fn buckets(&self) -> series::Buckets {
        series::Buckets::over(self.span(), self.interval)
    }

    /// Every section as (title, table text), for `--stats`.
    pub fn tables(&self, fit: Fit) -> Vec<(String, String)> {
        let b = self.buckets();
        let mut out = Vec::new();
        if self.which.lag {
            out.extend(self.lag.tables(self, &b, fit));
        }
        if self.which.latency {
            out.extend(self.latency.tables(self, fit));
        }
        if self.which.throughput {
            out.extend(self.throughput.tables(self, fit));
        }
        if self.which.groups {
            out.extend(self.timeline.tables(b.start, fit));
        }
        if self.which.versions {
            out.extend(self.versions.tables(fit));
        }
        if self.which.findings {
            let f = self.findings.list(self);
            out.extend(findings::tables(&f, fit));
        }
        if self.which.cluster {
            out.extend(self.cluster.tables(b.start, fit));
        }
        out
    }

    /// Every analysis asked for, as one typed value.
    pub fn out(&self) -> AnalysesOut {
        let b = self.buckets();
        let findings = self.which.findings.then(|| self.findings.list(self));
        AnalysesOut {
            span: self.span().map(|(a, z)| SpanOut {
                first_ns: a,
                last_ns: z,
                seconds: (z - a) as f64 / 1e9,
            }),
            interval: b.out(),
            api_latency: self.api_latency_out(&b),
            connections: {
                let (busiest, total) = self.findings.connections();
                ConnectionsOut {
                    opened: total,
                    most_in_one_second: busiest,
                }
            },
            lag: self.which.lag.then(|| self.lag.out(self, &b)),
            end_to_end: self.which.latency.then(|| self.latency.out(self)),
            throughput: self.which.throughput.then(|| self.throughput.out(self, &b)),
            groups: self.which.groups.then(|| self.timeline.out()),
            groups_dropped: (self.which.groups && self.timeline.groups_dropped > 0)
                .then_some(self.timeline.groups_dropped),
            client_versions: self.which.versions.then(|| self.versions.out()),
            findings: findings.as_deref().map(findings::out),
            cluster: self.which.cluster.then(|| self.cluster.out()),
            topic_ids: self
                .learnt_names()
                .into_iter()
                .map(|(id, name)| TopicIdOut {
                    id: crate::text::uuid(&id),
                    name,
                })
                .collect(),
        }
    }

    fn api_latency_out(&self, b: &series::Buckets) -> Vec<ApiLatencyOut> {
        let mut keys: Vec<&i16> = self.api_latency.keys().collect();
        keys.sort();
        keys.iter()
            .map(|k| ApiLatencyOut {
                api_key: **k,
                api_name: crate::kafka::message::api_display_name(**k).into_owned(),
                max_ms: b
                    .max_per_bucket(self.api_latency[*k].kept.iter().map(|x| (x.0, x.1)))
                    .iter()
                    .map(|v| v.map(series::ms))
                    .collect(),
            })
            .collect()
    }

    /// The analyses as JSON, for `--stats --json`: [`Analyses::out`] serialized.
    pub fn to_json(&self) -> J {
        serde_json::to_value(self.out()).unwrap_or(J::Null)
    }
}
