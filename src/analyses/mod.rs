//! Analyses over a whole capture, from the messages alone: consumer lag, end-to-end record
//! latency, throughput, group timelines, version negotiation per client software, and
//! findings with their frames. Each is a section of `--stats` (tables), an object of
//! `--stats --json`, and a part of the `--report` HTML file. Every message comes in through
//! [`adapter::event`]; nothing here reads the decoded tree.
//!
//! Memory stays bounded: every table of the analyses stops growing at its own bound
//! (`MAX_KEYS` keys, `MAX_SAMPLES` samples per series), past which what comes is counted.

pub mod adapter;
pub mod cluster;
mod findings;
mod groups;
mod lag;
mod latency;
pub mod report;
mod series;
mod throughput;
mod versions;

pub use adapter::{event, Event};

use crate::kafka::stream::{Notice, Record};
use serde::Serialize;
use serde_json::Value as J;
use std::collections::HashMap;
use std::net::IpAddr;

pub use findings::FindingOut;
pub use groups::{AssignedOut, GenerationOut, GroupOut, HappeningOut, MemberOut};
pub use lag::{Kind as LagKind, LagAt, LagOut, LagPoint, LagSeriesOut, Status as LagStatus};
pub use latency::{EndToEndOut, LatencyMs, RecordLatencyOut, UnconsumedOut};
pub use series::BucketsOut;
pub use throughput::{
    BatchRecords, CodecOut, SlowProduceOut, ThroughputOut, ThroughputRow, ThroughputSeries,
    TopicSeries,
};
pub use versions::{ApiUseOut, ClientVersionsOut};

/// Keys (partitions, clients, groups) any one table keeps.
pub const MAX_KEYS: usize = 10_000;
/// Samples kept per series (lag per partition, latencies per topic and group).
pub const MAX_SAMPLES: usize = 100_000;
/// Requests held for their responses (those whose answer needs the request's values).
const MAX_PENDING: usize = 100_000;

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

/// The analyses' state.
#[derive(Debug)]
pub struct Analyses {
    pub which: Which,
    /// `--interval`, in nanoseconds; `None`: about 60 buckets over the capture.
    pub interval: Option<i64>,
    first_ts: Option<i64>,
    last_ts: Option<i64>,
    /// Requests by (stream, correlation id), for the responses that need their values.
    pending: HashMap<(u32, i32), Event>,
    /// Clients by the group their requests name.
    groups_of: HashMap<ClientKey, String>,
    lag: lag::Lag,
    latency: latency::EndToEnd,
    throughput: throughput::Throughput,
    timeline: groups::Timeline,
    versions: versions::Versions,
    findings: findings::Findings,
    cluster: cluster::Cluster,
    /// (time, latency) of the responses of each API, for the latency chart.
    api_latency: HashMap<i16, Vec<(i64, i64)>>,
}

/// APIs whose responses are read with their request's values.
const PAIRED: [i16; 16] = [0, 1, 2, 3, 8, 9, 11, 12, 13, 14, 18, 68, 76, 78, 79, 88];

impl Analyses {
    pub fn new(which: Which, interval: Option<i64>) -> Analyses {
        Analyses {
            which,
            interval,
            first_ts: None,
            last_ts: None,
            pending: HashMap::new(),
            groups_of: HashMap::new(),
            lag: lag::Lag::default(),
            latency: latency::EndToEnd::default(),
            throughput: throughput::Throughput::default(),
            timeline: groups::Timeline::default(),
            versions: versions::Versions::default(),
            findings: findings::Findings::default(),
            cluster: cluster::Cluster::default(),
            api_latency: HashMap::new(),
        }
    }

    /// One message, as the pipeline found it.
    pub fn message(&mut self, rec: &Record<'_>) {
        if self.which.cluster {
            // The metadata log's records: a message's changes, not an event's facts.
            self.cluster.message(rec);
        }
        if let Some(e) = event(rec) {
            self.event(e);
        }
    }

    /// One message, in the analyses' terms.
    pub fn event(&mut self, e: Event) {
        self.first_ts = Some(self.first_ts.map_or(e.ts, |t| t.min(e.ts)));
        self.last_ts = Some(self.last_ts.map_or(e.ts, |t| t.max(e.ts)));
        if e.response {
            let req = self.pending.remove(&(e.stream, e.correlation_id));
            self.response(req.as_ref(), &e);
        } else {
            self.request(&e);
            if PAIRED.contains(&e.api_key) && self.pending.len() < MAX_PENDING {
                self.pending.insert((e.stream, e.correlation_id), e);
            }
        }
    }

    fn request(&mut self, e: &Event) {
        if let Some(g) = &e.group {
            if self.groups_of.len() < MAX_KEYS {
                self.groups_of
                    .entry(ClientKey::of(e))
                    .or_insert_with(|| g.clone());
            }
        }
        self.findings.request(e);
        self.versions.request(e);
        self.timeline.request(e);
        self.throughput.request(e);
    }

    fn response(&mut self, req: Option<&Event>, e: &Event) {
        if let Some(q) = e.asked.filter(|q| e.ts >= q.ts) {
            let l = self.api_latency.entry(e.api_key).or_default();
            if l.len() < MAX_SAMPLES {
                l.push((e.ts, e.ts - q.ts));
            }
        }
        self.findings.response(req, e);
        self.versions.response(req, e);
        self.timeline.response(req, e);
        self.throughput.response(req, e);
        self.lag.response(req, e);
        self.latency.response(req, e);
    }

    pub fn notice(&mut self, n: &Notice) {
        self.findings.notice(n);
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
    pub fn tables(&self, width: Option<u16>) -> Vec<(String, String)> {
        let b = self.buckets();
        let mut out = Vec::new();
        if self.which.lag {
            out.extend(self.lag.tables(self, &b, width));
        }
        if self.which.latency {
            out.extend(self.latency.tables(self, width));
        }
        if self.which.throughput {
            out.extend(self.throughput.tables(self.span(), width));
        }
        if self.which.groups {
            out.extend(self.timeline.tables(b.start, width));
        }
        if self.which.versions {
            out.extend(self.versions.tables(width));
        }
        if self.which.findings {
            let f = self.findings.list(self);
            out.extend(findings::tables(&f, width));
        }
        if self.which.cluster {
            out.extend(self.cluster.tables(b.start, width));
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
            throughput: self
                .which
                .throughput
                .then(|| self.throughput.out(self.span(), &b)),
            groups: self.which.groups.then(|| self.timeline.out()),
            groups_dropped: (self.which.groups && self.timeline.groups_dropped > 0)
                .then_some(self.timeline.groups_dropped),
            client_versions: self.which.versions.then(|| self.versions.out()),
            findings: findings.as_deref().map(findings::out),
            cluster: self.which.cluster.then(|| self.cluster.out()),
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
                    .max_per_bucket(self.api_latency[*k].iter().copied())
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
