//! `--stats`: tables after the messages (or alone with `-q`), or one JSON object with `--json`.
//! Fed with every message and notice; knows nothing of how they were found.

use super::table::{Cell as TCell, Fit, Grid};
use crate::kafka::message::api_display_name;
use crate::kafka::stream::{Notice, Record};
use crate::kafka::StreamHealth;
use crate::kafka::{names, Direction};
use crate::tls::TlsConnection;
use serde_json::Value as J;

pub mod out;
pub use out::StatsOut;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::net::{IpAddr, SocketAddr};
use std::rc::Rc;

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
/// while the shown percentiles (µs, or ms to 2 decimals, then 3 significant digits) stay as
/// printed from exact values.
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

/// What one node advertised in its ApiVersions answer, and what clients sent it.
#[derive(Debug, Default, Clone)]
struct NodeVersions {
    /// API key → (min, max) of the last well-formed ApiVersions answer; `None` while no
    /// answer of this node was captured.
    advertised: Option<BTreeMap<i16, (i64, i64)>>,
    /// (API key, version) of the requests sent to this node: a flat set costs a few bytes a
    /// pair, where a set per key would cost an allocation each.
    used: BTreeSet<(i16, i16)>,
}

/// Nodes whose versions are checked. A cluster has a few to a few dozen; the bound keeps a
/// capture with countless servers (a scan) from growing the table: past it, requests to new
/// nodes are counted, not checked.
const NODE_ROWS: usize = 256;

/// API keys kept of one node's ApiVersions answer (Kafka 4.4 advertises 77).
const ADVERTISED_KEYS: usize = 512;

/// One line of the version check: an API as used on one node.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SkewRow {
    api_key: i16,
    node: SocketAddr,
    /// `v0-v12`, or `-` when the node's answer leaves the API out or was not captured.
    advertised: String,
    /// `v3 v12`.
    used: String,
    status: String,
}

impl NodeVersions {
    /// A well-formed ApiVersions answer of this node: it replaces an earlier one.
    fn advertise(&mut self, list: &[(i16, i64, i64)]) {
        let mut adv = BTreeMap::new();
        for &(key, lo, hi) in list {
            if adv.len() < ADVERTISED_KEYS || adv.contains_key(&key) {
                adv.insert(key, (lo, hi));
            }
        }
        self.advertised = Some(adv);
    }

    /// API key → the versions sent to this node.
    fn used_by_key(&self) -> BTreeMap<i16, BTreeSet<i16>> {
        let mut m: BTreeMap<i16, BTreeSet<i16>> = BTreeMap::new();
        for &(k, v) in &self.used {
            m.entry(k).or_default().insert(v);
        }
        m
    }

    /// API `key`, used in versions `used` on this node, against what the node advertised.
    fn check(&self, key: i16, used: &BTreeSet<i16>) -> Check {
        let Some(adv) = &self.advertised else {
            return Check::NoAnswer;
        };
        let Some(&(lo, hi)) = adv.get(&key) else {
            return Check::NotAdvertised;
        };
        let outside: Vec<i16> = used
            .iter()
            .copied()
            .filter(|v| !(lo..=hi).contains(&i64::from(*v)))
            .collect();
        if outside.is_empty() {
            Check::Within(lo, hi)
        } else {
            Check::Outside(lo, hi, outside)
        }
    }
}

/// How the versions used of one API on one node compare with its ApiVersions answer.
enum Check {
    NoAnswer,
    NotAdvertised,
    Within(i64, i64),
    Outside(i64, i64, Vec<i16>),
}

impl Check {
    fn at(self, api_key: i16, node: SocketAddr, used: &BTreeSet<i16>) -> SkewRow {
        let versions = |v: &mut dyn Iterator<Item = i16>| {
            v.map(|v| format!("v{v}")).collect::<Vec<_>>().join(" ")
        };
        let (advertised, status) = match self {
            Check::NoAnswer => ("-".into(), "no ApiVersions response captured".into()),
            Check::NotAdvertised => ("-".into(), "not advertised".into()),
            Check::Within(lo, hi) => (format!("v{lo}-v{hi}"), "ok".into()),
            Check::Outside(lo, hi, out) => (
                format!("v{lo}-v{hi}"),
                format!(
                    "used outside the advertised range: {}",
                    versions(&mut out.into_iter())
                ),
            ),
        };
        SkewRow {
            api_key,
            node,
            advertised,
            used: versions(&mut used.iter().copied()),
            status,
        }
    }
}

/// A connection's row, in 72 bytes: up to `CONN_ROWS` are kept, so its addresses are
/// formatted only when shown and its client id is shared with the other rows that have it.
#[derive(Debug, Default, Clone)]
struct ConnRow {
    /// Client and broker, once a message said which is which (its first).
    ends: Option<[(IpAddr, u16); 2]>,
    client_id: Option<Rc<str>>,
    messages: u64,
    bytes: u64,
    /// A TLS connection: whether it was decrypted (its messages counted as any others), or
    /// not (its bytes are the encrypted Kafka traffic, and it has no messages).
    tls: Option<bool>,
}

/// TLS connections seen: decrypted, and not (with their encrypted bytes).
#[derive(Debug, Default, Clone, Copy)]
struct TlsCounts {
    decrypted: u64,
    not_decrypted: u64,
    not_decrypted_bytes: u64,
}

impl ConnRow {
    /// Client and broker as shown (addresses come from packets: no IPv6 flow label or
    /// scope is lost by keeping only address and port).
    fn ends_text(&self) -> [String; 2] {
        self.ends.map_or_else(Default::default, |e| {
            e.map(|(ip, port)| SocketAddr::new(ip, port).to_string())
        })
    }
}

/// A table of rows by key, hashed for the lookup every message makes.
type Rows<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// The rows of a table in the order of their keys, as they are shown.
fn sorted<K: Ord, V>(rows: &Rows<K, V>) -> Vec<(&K, &V)> {
    let mut v: Vec<(&K, &V)> = rows.iter().collect();
    v.sort_unstable_by(|a, b| a.0.cmp(b.0));
    v
}

/// How the tables are laid out.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// Fit every table into this many columns; `None`: each as wide as its content.
    pub width: Option<u16>,
    /// Connections given a row of their own, the busiest first; `None`: all of them.
    pub connections: Option<usize>,
    /// Rows of each other table, the largest first; `None`: all of them.
    pub rows: Option<usize>,
}

/// Connections shown by default; the rest are summed in one row.
pub const CONNECTIONS_SHOWN: usize = 8;

impl Default for Layout {
    fn default() -> Layout {
        Layout {
            width: None,
            connections: Some(CONNECTIONS_SHOWN),
            rows: Fit::default().rows,
        }
    }
}

#[derive(Debug, Default)]
pub struct Stats {
    /// (Hashed, as `conns`: looked up for every message; sorted when shown.)
    apis: Rows<(i16, i16), ApiRow>,
    /// By (input file, stream): streams count per file. Hashed: a B-tree of 10 000 rows cost
    /// some 14 comparisons of the key for every message; the rows are sorted when shown.
    conns: Rows<(u32, u32), ConnRow>,
    /// The client ids of the rows, each kept once.
    client_ids: HashSet<Rc<str>>,
    /// The input files read, the one being read last.
    files: Vec<String>,
    /// Messages and bytes of the connections past CONN_ROWS.
    other_conns: ConnRow,
    /// Messages of API versions past the first `API_ROWS`.
    other_api_messages: u64,
    /// Histogram buckets made so far, over all rows, of `MAX_BUCKETS`.
    buckets_used: usize,
    errors: BTreeMap<i16, u64>,
    /// Per node (the server end of a connection): the versions it advertised and those sent
    /// to it. Each Kafka node advertises only its own APIs (a controller no Produce, a broker
    /// no BrokerHeartbeat), so a request is checked against its own node only.
    nodes: BTreeMap<SocketAddr, NodeVersions>,
    /// Requests to nodes past `NODE_ROWS`, not checked.
    unchecked_requests: u64,
    /// Messages and notices: the same counters as the closing report's, over what the
    /// statistics count.
    pub health: StreamHealth,
    /// Packets read, and those the snap length cut (from the pipeline, per input).
    pub packets: u64,
    pub truncated_packets: u64,
    /// `--analyses`: lag, latency, throughput, groups, versions, findings.
    pub analyses: Option<crate::analyses::Analyses>,
    tls: TlsCounts,
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
        if let Some(a) = self.analyses.as_mut() {
            a.message(rec);
        }
        self.count_connection(rec);
        let m = &rec.msg;
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
                match self.node(rec.dst) {
                    Some(n) => {
                        n.used.insert((k, v));
                    }
                    None => self.unchecked_requests += 1,
                }
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
                for e in &m.errors {
                    *self.errors.entry(e.code).or_default() += 1;
                }
                if let (Some(list), false) = (&m.facts.advertised, m.is_malformed()) {
                    if let Some(n) = self.node(rec.src) {
                        n.advertise(list);
                    }
                }
            }
        }
    }

    /// A TLS connection, once (when it starts to decrypt, or when it ends): counted in the
    /// health table, the API table (those not decrypted) and as a row of its own.
    pub fn tls(&mut self, t: &TlsConnection) {
        let decrypted = t.keys.decrypted();
        if decrypted {
            self.tls.decrypted += 1;
        } else {
            self.tls.not_decrypted += 1;
            self.tls.not_decrypted_bytes += t.encrypted_bytes;
        }
        let key = (u32::try_from(self.file()).unwrap_or(u32::MAX), t.stream);
        let conn = if self.conns.len() < CONN_ROWS || self.conns.contains_key(&key) {
            self.conns.entry(key).or_default()
        } else {
            &mut self.other_conns
        };
        conn.tls = Some(decrypted);
        if !decrypted {
            conn.bytes += t.encrypted_bytes;
        }
        conn.ends.get_or_insert([
            (t.client.ip(), t.client.port()),
            (t.server.ip(), t.server.port()),
        ]);
    }

    /// The message in its connection's row (or the row of those past `CONN_ROWS`).
    fn count_connection(&mut self, rec: &Record<'_>) {
        let m = &rec.msg;
        let key = (u32::try_from(self.file()).unwrap_or(u32::MAX), rec.stream);
        let conn = if self.conns.len() < CONN_ROWS || self.conns.contains_key(&key) {
            self.conns.entry(key).or_default()
        } else {
            &mut self.other_conns
        };
        conn.messages += 1;
        conn.bytes += rec.bytes.len() as u64;
        let (client, broker) = match m.direction {
            Direction::Request => (rec.src, rec.dst),
            Direction::Response => (rec.dst, rec.src),
        };
        conn.ends
            .get_or_insert([(client.ip(), client.port()), (broker.ip(), broker.port())]);
        if let (Direction::Request, None, Some(Some(c))) =
            (m.direction, &conn.client_id, &m.client_id)
        {
            let shared = match self.client_ids.get(c.as_str()) {
                Some(id) => id.clone(),
                None => {
                    let id: Rc<str> = Rc::from(c.as_str());
                    self.client_ids.insert(id.clone());
                    id
                }
            };
            conn.client_id = Some(shared);
        }
    }

    pub fn notice(&mut self, n: &Notice) {
        if let Some(a) = self.analyses.as_mut() {
            a.notice(n);
        }
        self.health.notice(n);
        if let Notice::Unanswered { request, .. } = n {
            let key = (request.api_key, request.api_version);
            if self.apis.len() < API_ROWS || self.apis.contains_key(&key) {
                self.apis.entry(key).or_default().unanswered += 1;
            }
        }
    }

    /// The versions kept for `node`, made on first sight while there is room.
    fn node(&mut self, node: SocketAddr) -> Option<&mut NodeVersions> {
        if self.nodes.len() >= NODE_ROWS && !self.nodes.contains_key(&node) {
            return None;
        }
        Some(self.nodes.entry(node).or_default())
    }

    /// Every API used on a node, checked against that node's own ApiVersions answer, by API
    /// key and then node.
    fn skew(&self) -> Vec<SkewRow> {
        let mut out: Vec<SkewRow> = self
            .nodes
            .iter()
            .flat_map(|(node, n)| {
                n.used_by_key()
                    .into_iter()
                    .map(move |(k, used)| n.check(k, &used).at(k, *node, &used))
            })
            .collect();
        out.sort_by_key(|r| (r.api_key, r.node));
        out
    }

    /// The tables as text, each as wide as its content, the 20 busiest connections shown.
    pub fn tables(&self) -> String {
        self.tables_with(&Layout::default())
    }

    /// The tables as text, laid out as `layout` says; a blank line between tables. Health and
    /// errors come first: they say whether the rest can be trusted, and the tables after them
    /// grow with the capture.
    pub fn tables_with(&self, layout: &Layout) -> String {
        crate::interrupt::finishing();
        let mut sections = vec![("Capture health".to_string(), health_grid(self))];
        let rows = layout.rows.unwrap_or(usize::MAX);
        if !self.errors.is_empty() {
            sections.push(("Error codes".into(), self.error_grid(rows)));
        }
        sections.extend(self.api_grids(layout.width, rows));
        let skew = self.skew();
        if !skew.is_empty() {
            sections.push((
                "API versions: advertised by each node vs used by clients".into(),
                skew_grid(skew, self.unchecked_requests, rows),
            ));
        }
        sections.push((
            self.connections_title(),
            self.connection_grid(layout.connections),
        ));
        let mut text: Vec<String> = Vec::new();
        for (title, g) in &sections {
            if crate::interrupt::stopping() {
                break;
            }
            text.push(format!("{title}\n{}\n", g.text(layout.width)));
        }
        if let Some(a) = self
            .analyses
            .as_ref()
            .filter(|_| !crate::interrupt::stopping())
        {
            text.extend(
                a.tables(Fit {
                    width: layout.width,
                    rows: layout.rows,
                })
                .into_iter()
                .map(|(title, t)| format!("{title}\n{t}\n")),
            );
        }
        if crate::interrupt::stopping() {
            text.push("(stopped by a signal: the tables are cut short)\n".into());
        }
        text.join("\n")
    }

    /// Per API and version: counts and latency percentiles in one table when it fits
    /// `width` unwrapped; else counts and latencies in tables of their own, each split again
    /// into equal shares of its columns (titled "..., continued") until every table fits
    /// without cutting a word, as far as one column a table allows.
    fn api_grids(&self, width: Option<u16>, rows: usize) -> Vec<(String, Grid)> {
        let both = self.api_grid(&API_COUNTS, &API_LATENCIES, rows);
        let Some(w) = width.map(usize::from) else {
            return vec![("Kafka APIs".into(), both)];
        };
        if both.natural_width() <= w {
            return vec![("Kafka APIs".into(), both)];
        }
        let mut out = shares("Kafka APIs", &API_COUNTS, w, |c| {
            self.api_grid(c, &[], rows)
        });
        out.extend(shares("Kafka API latency", &API_LATENCIES, w, |p| {
            self.api_grid(&[], p, rows)
        }));
        out
    }

    /// API and version, then the `counts` and `latencies` columns asked for.
    /// The `rows` API versions with the most messages are shown, in the order of their keys;
    /// the others are counted in a note.
    fn api_grid(&self, counts: &[ApiCount], latencies: &[Percentile], rows: usize) -> Grid {
        let mut header = vec!["API", "version"];
        header.extend(counts.iter().map(|c| c.header()));
        header.extend(latencies.iter().map(|p| p.header()));
        let mut g = Grid::new(&header);
        let mut busiest: Vec<(&(i16, i16), u64)> = self
            .apis
            .iter()
            .map(|(key, r)| (key, r.requests + r.responses))
            .collect();
        busiest.sort_by_key(|(key, n)| (std::cmp::Reverse(*n), **key));
        let (shown, rest) = busiest.split_at(rows.min(busiest.len()));
        let shown: HashSet<&(i16, i16)> = shown.iter().map(|x| x.0).collect();
        for ((k, v), r) in sorted(&self.apis)
            .into_iter()
            .filter(|(key, _)| shown.contains(key))
        {
            let mut row = vec![TCell::text(api_label(*k)), TCell::num(v)];
            row.extend(counts.iter().map(|c| TCell::num(c.of(r))));
            row.extend(latencies.iter().map(|p| TCell::num(p.of(&r.latencies))));
            g.row(row);
        }
        if let Some(line) = self.tls_line() {
            g.row(vec![TCell::text(format!("(TLS not decrypted: {line})"))]);
        }
        if self.other_api_messages > 0 {
            g.row(vec![TCell::text(format!(
                "({} of API versions past the first {API_ROWS}, not broken down)",
                super::words::count(self.other_api_messages, "message")
            ))]);
        }
        if !rest.is_empty() {
            let messages: u64 = rest.iter().map(|x| x.1).sum();
            g.note(format!(
                "and {} more API versions with fewer messages ({}; all in --json)",
                rest.len(),
                super::words::count(messages, "message")
            ));
        }
        g
    }

    /// "N connections, X bytes": the TLS connections not decrypted, when there are.
    fn tls_line(&self) -> Option<String> {
        let t = &self.tls;
        (t.not_decrypted > 0).then(|| {
            format!(
                "{}, {}",
                super::words::count(t.not_decrypted, "connection"),
                super::words::count(t.not_decrypted_bytes, "byte")
            )
        })
    }

    /// "Connections", and with several files the number the table gives each: a path is too
    /// long for a column of a table that fits a terminal.
    fn connections_title(&self) -> String {
        let mut t = String::from("Connections");
        if self.files.len() > 1 {
            for (i, f) in self.files.iter().enumerate() {
                t.push_str(&format!("\nfile {}: {f}", i + 1));
            }
        }
        t
    }

    /// Per TCP stream: who spoke to whom, and how much; the busiest first. Past `shown` rows
    /// (all when `None`) and past `CONN_ROWS` connections, the rest are summed in one row.
    /// With several files, a first column gives each connection's file by its number.
    fn connection_grid(&self, shown: Option<usize>) -> Grid {
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
        let mut g = Grid::new(header.get(usize::from(!several)..).unwrap_or(&[]));
        let mut conns: Vec<(&(u32, u32), &ConnRow)> = self.conns.iter().collect();
        conns.sort_by(|a, b| b.1.messages.cmp(&a.1.messages).then(a.0.cmp(b.0)));
        let (top, rest) = conns.split_at(shown.unwrap_or(usize::MAX).min(conns.len()));
        for (&(file, id), c) in top {
            let mut row = Vec::new();
            if several {
                row.push(TCell::whole(u64::from(file) + 1));
            }
            let [client, broker] = c.ends_text();
            let encrypted = c.tls == Some(false);
            let client_id = match (encrypted, c.client_id.as_deref()) {
                (true, _) => TCell::text("(TLS, not decrypted)"),
                (false, id) => TCell::atom(id.unwrap_or("-")),
            };
            row.extend([
                TCell::whole(id),
                client_id,
                TCell::whole(client),
                TCell::whole(broker),
                if encrypted {
                    TCell::num("-")
                } else {
                    TCell::num(c.messages)
                },
                TCell::num(c.bytes),
            ]);
            g.row(row);
        }
        let o = &self.other_conns;
        let label = match (rest.len(), o.messages > 0) {
            (0, false) => return g,
            (n, false) => format!("({n} more connections)"),
            (0, true) => format!("(connections past the first {CONN_ROWS})"),
            (n, true) => format!("({n} more connections, and those past the first {CONN_ROWS})"),
        };
        let sum = |f: fn(&ConnRow) -> u64| rest.iter().map(|(_, c)| f(c)).sum::<u64>() + f(o);
        let mut row = Vec::new();
        if several {
            row.push(TCell::whole("-"));
        }
        row.extend([
            TCell::whole("…"),
            TCell::text(label),
            TCell::whole("-"),
            TCell::whole("-"),
            TCell::num(sum(|c| c.messages)),
            TCell::num(sum(|c| c.bytes)),
        ]);
        g.row(row);
        g
    }

    /// How often each error code was answered.
    /// The `rows` codes answered most, in the order of their codes; the others counted.
    fn error_grid(&self, rows: usize) -> Grid {
        let mut g = Grid::new(&["error", "code", "count"]);
        let mut most: Vec<(&i16, &u64)> = self.errors.iter().collect();
        most.sort_by_key(|(code, n)| (std::cmp::Reverse(**n), **code));
        let rest: u64 = most.iter().skip(rows).map(|x| *x.1).sum();
        let left = most.len().saturating_sub(rows);
        most.truncate(rows);
        most.sort_by_key(|x| *x.0);
        if left > 0 {
            g.note(format!(
                "and {left} more error codes answered less often ({} in all; all in --json)",
                super::words::count(rest, "answer")
            ));
        }
        for (code, n) in most {
            g.row(vec![
                TCell::atom(names::error_name(*code).unwrap_or("unknown")),
                TCell::num(code),
                TCell::num(n),
            ]);
        }
        g
    }
    /// The same as one JSON object.
    pub fn to_json(&self) -> J {
        serde_json::to_value(self.out()).unwrap_or(J::Null)
    }

    /// The statistics as typed values: what [`Stats::to_json`] prints and the report reads.
    pub fn out(&self) -> StatsOut {
        StatsOut {
            apis: self.apis_out(),
            connections: self.connections_out(),
            errors: self
                .errors
                .iter()
                .map(|(&code, &count)| out::ErrorOut {
                    code,
                    name: names::error_name(code),
                    count,
                })
                .collect(),
            advertised: self.advertised_out(),
            version_skew: self
                .skew()
                .into_iter()
                .map(|r| out::SkewOut {
                    api_key: r.api_key,
                    api_name: api_display_name(r.api_key).into_owned(),
                    node: r.node.to_string(),
                    advertised: r.advertised,
                    used: r.used,
                    status: r.status,
                })
                .collect(),
            health: self.health_out(),
            // Only where TLS was seen: every other capture's object stays as it was.
            tls: (self.tls.decrypted + self.tls.not_decrypted > 0).then(|| out::TlsOut {
                connections: self.tls.decrypted + self.tls.not_decrypted,
                decrypted: self.tls.decrypted,
                not_decrypted: self.tls.not_decrypted,
                not_decrypted_bytes: self.tls.not_decrypted_bytes,
            }),
            other_api_messages: self.other_api_messages,
            unchecked_requests: self.unchecked_requests,
            files: if self.files.len() > 1 {
                self.files.clone()
            } else {
                Vec::new()
            },
        }
    }

    fn apis_out(&self) -> Vec<out::ApiOut> {
        let us = |x: Option<i64>| x.map(|n| n as f64 / 1000.0);
        sorted(&self.apis)
            .into_iter()
            .map(|(&(k, v), r)| {
                let l = &r.latencies;
                out::ApiOut {
                    api_key: k,
                    api_name: api_display_name(k).into_owned(),
                    api_version: v,
                    requests: r.requests,
                    responses: r.responses,
                    unanswered: r.unanswered,
                    with_errors: r.errors,
                    malformed: r.malformed,
                    latency_us: out::LatencyUs {
                        p50: us(l.percentile(50.0)),
                        p95: us(l.percentile(95.0)),
                        p99: us(l.percentile(99.0)),
                        max: us(l.max),
                    },
                }
            })
            .collect()
    }

    /// Every connection kept, then the sum of those past `CONN_ROWS`.
    fn connections_out(&self) -> Vec<out::ConnOut> {
        let mut conns: Vec<out::ConnOut> = sorted(&self.conns)
            .into_iter()
            .map(|(&(file, id), c)| {
                let [client, broker] = c.ends_text();
                out::ConnOut {
                    file: self.file_name(file as usize).map(str::to_string),
                    stream: Some(id),
                    client_id: c.client_id.as_deref().map(str::to_string),
                    client,
                    broker,
                    messages: c.messages,
                    bytes: c.bytes,
                    tls: c.tls.map(|d| if d { "decrypted" } else { "not decrypted" }),
                }
            })
            .collect();
        if self.other_conns.messages > 0 {
            let o = &self.other_conns;
            conns.push(out::ConnOut {
                file: None,
                stream: None,
                client_id: None,
                client: "*".into(),
                broker: "*".into(),
                messages: o.messages,
                bytes: o.bytes,
                tls: None,
            });
        }
        conns
    }

    fn advertised_out(&self) -> out::Advertised {
        out::Advertised(
            self.nodes
                .iter()
                .filter_map(|(node, n)| Some((node, n.advertised.as_ref()?)))
                .map(|(node, m)| {
                    let v = m
                        .iter()
                        .map(|(&api_key, &(min, max))| out::AdvertisedApi { api_key, min, max })
                        .collect();
                    (node.to_string(), v)
                })
                .collect(),
        )
    }

    fn health_out(&self) -> out::HealthOut {
        let h = &self.health;
        out::HealthOut {
            packets: self.packets,
            truncated_packets: self.truncated_packets,
            gaps: h.gaps,
            partial: h.partial,
            retransmissions: h.retransmissions,
            conflicting_overlaps: h.conflicting_overlaps,
            midstream_pickups: h.midstream_pickups,
            resyncs: h.resyncs,
            bad_sizes: h.bad_sizes,
            unmatched_responses: h.unmatched_responses,
            unanswered: h.unanswered,
            malformed: h.malformed,
            undecoded: h.undecoded,
            backwards: h.backwards,
            frames_dropped: h.frames_dropped,
            pending_dropped: h.pending_dropped,
            ended_in_frame: h.ended_in_frame,
        }
    }

    /// [`Stats::to_json`] with the analyses' object (`analyses`) when they ran.
    pub fn to_json_all(&self) -> J {
        let mut out = self.to_json();
        if let (Some(a), J::Object(o)) = (&self.analyses, &mut out) {
            o.insert("analyses".into(), a.to_json());
        }
        out
    }

    /// Any value of a body node tree is irrelevant here; kept for symmetry with the JSON view.
    pub fn is_empty(&self) -> bool {
        self.apis.is_empty() && self.conns.is_empty()
    }
}

/// Per API and node: the versions the node advertised against those clients sent it.
/// The rows whose status is not `ok` first, then by API and node, `rows` of them; the
/// others counted.
fn skew_grid(mut skew: Vec<SkewRow>, unchecked: u64, rows: usize) -> Grid {
    let mut g = Grid::new(&["API", "node", "advertised", "used", "status"]);
    let left = skew.len().saturating_sub(rows);
    if left > 0 {
        skew.sort_by_key(|r| r.status == "ok");
        let ok = skew.iter().skip(rows).filter(|r| r.status == "ok").count();
        skew.truncate(rows);
        skew.sort_by_key(|r| (r.status == "ok", r.api_key, r.node));
        g.note(format!(
            "and {left} more (API, node) rows, {ok} of them ok (all in --json)"
        ));
    }
    for r in skew {
        g.row(vec![
            TCell::text(api_label(r.api_key)),
            TCell::whole(r.node),
            TCell::whole(r.advertised),
            TCell::text(r.used),
            TCell::text(r.status),
        ]);
    }
    if unchecked > 0 {
        g.row(vec![TCell::text(format!(
            "({unchecked} requests to nodes past the first {NODE_ROWS}, not checked)"
        ))]);
    }
    g
}

/// The capture health counters, one a row: a counter is one more line of the list.
fn health_grid(s: &Stats) -> Grid {
    let h = &s.health;
    let mut g = Grid::new(&["capture health", "count"]);
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
        g.row(vec![TCell::text(name), TCell::num(v)]);
    }
    // TLS connections, when the capture has any.
    let t = &s.tls;
    for (name, v) in [
        ("TLS connections decrypted", t.decrypted),
        ("TLS connections not decrypted", t.not_decrypted),
        (
            "bytes encrypted in TLS connections not decrypted",
            t.not_decrypted_bytes,
        ),
    ] {
        if t.decrypted + t.not_decrypted > 0 {
            g.row(vec![TCell::text(name), TCell::num(v)]);
        }
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
            g.row(vec![TCell::text(name), TCell::num(v)]);
        }
    }
    g
}

/// `columns` in the fewest tables of equal shares whose words fit `width` (one column a
/// table at most), the first titled `title`, the others "`title`, continued".
fn shares<T>(
    title: &str,
    columns: &[T],
    width: usize,
    grid: impl Fn(&[T]) -> Grid,
) -> Vec<(String, Grid)> {
    let mut grids = Vec::new();
    for k in 1..=columns.len().max(1) {
        grids = columns
            .chunks(columns.len().div_ceil(k).max(1))
            .map(&grid)
            .collect();
        if grids.iter().all(|g| g.least_width() <= width) {
            break;
        }
    }
    grids
        .into_iter()
        .enumerate()
        .map(|(i, g)| match i {
            0 => (title.to_string(), g),
            _ => (format!("{title}, continued"), g),
        })
        .collect()
}

/// The count columns of the API table.
#[derive(Debug, Clone, Copy)]
enum ApiCount {
    Requests,
    Responses,
    Unanswered,
    WithErrors,
    Malformed,
}

const API_COUNTS: [ApiCount; 5] = [
    ApiCount::Requests,
    ApiCount::Responses,
    ApiCount::Unanswered,
    ApiCount::WithErrors,
    ApiCount::Malformed,
];

impl ApiCount {
    fn header(self) -> &'static str {
        match self {
            ApiCount::Requests => "requests",
            ApiCount::Responses => "responses",
            ApiCount::Unanswered => "unanswered",
            ApiCount::WithErrors => "with errors",
            ApiCount::Malformed => "malformed",
        }
    }

    fn of(self, r: &ApiRow) -> u64 {
        match self {
            ApiCount::Requests => r.requests,
            ApiCount::Responses => r.responses,
            ApiCount::Unanswered => r.unanswered,
            ApiCount::WithErrors => r.errors,
            ApiCount::Malformed => r.malformed,
        }
    }
}

/// The latency columns of the API table: percentiles, and the largest.
#[derive(Debug, Clone, Copy)]
enum Percentile {
    P(u8),
    Max,
}

const API_LATENCIES: [Percentile; 4] = [
    Percentile::P(50),
    Percentile::P(95),
    Percentile::P(99),
    Percentile::Max,
];

impl Percentile {
    fn header(self) -> &'static str {
        match self {
            Percentile::P(50) => "p50",
            Percentile::P(95) => "p95",
            Percentile::P(99) => "p99",
            Percentile::P(_) | Percentile::Max => "max",
        }
    }

    fn of(self, l: &Latencies) -> String {
        let v = match self {
            Percentile::P(p) => l.percentile(f64::from(p)),
            Percentile::Max => l.max,
        };
        v.map_or("-".to_string(), super::table::duration_text)
    }
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
    use crate::render::summary::latency_text;
    use crate::render::table::duration_text;
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
                embedded: None,
            }),
            msg,
            assumed: false,
            partial: false,
            ended: None,
            tls: false,
            input_offset: None,
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
        let text = sample().tables_with(&Layout {
            width: Some(60),
            ..Layout::default()
        });
        for l in text.lines() {
            assert!(l.chars().count() <= 60, "{l}");
        }
        assert!(text.contains(NARROW_CONNECTIONS), "{text}");
        assert!(text.starts_with("Capture health\n"), "{text}");
        // The API table does not fit whole: counts and latencies come in two tables.
        assert!(text.contains("\nKafka API latency\n"), "{text}");
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
            embedded: None,
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

    /// A request to `node` with API `key` and `version`.
    fn request_to(s: &mut Stats, node: SocketAddr, key: i16, version: i16) {
        let frame = test_frames::request(key, version, 1, &[]);
        let mut r = record(decode_request(&frame), &frame, 1, None);
        r.dst = node;
        s.message(&r);
    }

    /// A controller and a broker, each advertising only its own APIs: every request is checked
    /// against the node it went to, and a node whose answer was not captured is not checked.
    #[test]
    fn versions_are_checked_against_the_node_a_request_went_to() {
        let controller = SocketAddr::from(([10, 0, 0, 9], 9093));
        let broker = SocketAddr::from(([10, 0, 0, 2], 9092));
        let unseen = SocketAddr::from(([10, 0, 0, 3], 9092));
        let mut s = Stats::default();
        // The controller: BrokerHeartbeat (63) v0-v2 and Metadata v0-v12; no Produce.
        if let Some(n) = s.node(controller) {
            n.advertise(&[(63, 0, 2), (3, 0, 12)]);
        }
        // The broker: Produce v3-v13 and Metadata v0-v13; no BrokerHeartbeat.
        if let Some(n) = s.node(broker) {
            n.advertise(&[(0, 3, 13), (3, 0, 13)]);
        }
        request_to(&mut s, broker, 0, 11);
        request_to(&mut s, broker, 3, 13);
        request_to(&mut s, controller, 63, 2);
        request_to(&mut s, controller, 3, 13);
        request_to(&mut s, controller, 0, 9);
        request_to(&mut s, unseen, 3, 13);
        let skew = s.skew();
        let got: Vec<(i16, SocketAddr, &str, &str, &str)> = skew
            .iter()
            .map(|r| {
                (
                    r.api_key,
                    r.node,
                    r.advertised.as_str(),
                    r.used.as_str(),
                    r.status.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (0, broker, "v3-v13", "v11", "ok"),
                (0, controller, "-", "v9", "not advertised"),
                (3, broker, "v0-v13", "v13", "ok"),
                (3, unseen, "-", "v13", "no ApiVersions response captured"),
                (
                    3,
                    controller,
                    "v0-v12",
                    "v13",
                    "used outside the advertised range: v13"
                ),
                (63, controller, "v0-v2", "v2", "ok"),
            ]
        );
    }

    /// 25 connections, stream N carrying N requests: the 20 busiest get a row, busiest first,
    /// and the other 5 (streams 1-5: 15 messages) one summed row; all 25 when asked.
    #[test]
    fn connections_show_the_busiest_and_sum_the_rest() {
        let (frame, msg) = test_frames::metadata_request();
        let mut s = Stats::default();
        for stream in 1..=25u32 {
            for _ in 0..stream {
                s.message(&record(msg.clone(), &frame, stream, None));
            }
        }
        let rows = |layout: &Layout| -> Vec<String> {
            let text = s.tables_with(layout);
            let conns = text.split("Connections\n").nth(1).unwrap_or_default();
            conns
                .lines()
                .filter(|l| l.starts_with("│ ") && !l.contains("stream"))
                .map(|l| {
                    let cells: Vec<&str> = l.split(['│', '┆']).map(str::trim).collect();
                    format!("{} {}", cells[1], cells[5])
                })
                .collect()
        };
        let shown = rows(&Layout::default());
        assert_eq!(shown.len(), CONNECTIONS_SHOWN + 1, "{shown:?}");
        assert_eq!(shown[0], "25 25");
        assert_eq!(shown[7], "18 18");
        assert_eq!(shown[8], "… 153");
        assert!(s.tables().contains("(17 more connections)"));
        let all = rows(&Layout {
            connections: None,
            ..Layout::default()
        });
        assert_eq!(all.len(), 25);
        assert_eq!(all[24], "1 1");
        // JSON keeps every connection, in stream order.
        assert_eq!(
            s.to_json()["connections"].as_array().map(Vec::len),
            Some(25)
        );
    }

    /// Past `NODE_ROWS` nodes, requests are counted and not checked.
    #[test]
    fn nodes_stop_at_the_bound_and_the_rest_is_counted() {
        let mut s = Stats::default();
        for i in 0..(NODE_ROWS as u16 + 3) {
            request_to(&mut s, SocketAddr::from(([10, 1, 0, 1], 1000 + i)), 3, 13);
        }
        assert_eq!(s.nodes.len(), NODE_ROWS);
        assert_eq!(s.unchecked_requests, 3);
        assert!(s
            .tables()
            .contains("(3 requests to nodes past the first 256, not checked)"));
    }

    /// `sample()` as tables.
    const TABLES: &str = r#"Capture health
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

Error codes
┌───────────────────────┬──────┬───────┐
│ error                 ┆ code ┆ count │
╞═══════════════════════╪══════╪═══════╡
│ REPLICA_NOT_AVAILABLE ┆    9 ┆     1 │
└───────────────────────┴──────┴───────┘

Kafka APIs
┌───────────────────────┬─────────┬──────────┬───────────┬────────────┬─────────────┬───────────┬─────────┬─────────┬─────────┬─────────┐
│ API                   ┆ version ┆ requests ┆ responses ┆ unanswered ┆ with errors ┆ malformed ┆ p50     ┆ p95     ┆ p99     ┆ max     │
╞═══════════════════════╪═════════╪══════════╪═══════════╪════════════╪═════════════╪═══════════╪═════════╪═════════╪═════════╪═════════╡
│ Metadata (3)          ┆      13 ┆        2 ┆         2 ┆          0 ┆           1 ┆         0 ┆ 0.04 ms ┆ 2.50 ms ┆ 2.50 ms ┆ 2.50 ms │
│ SaslAuthenticate (36) ┆       2 ┆        1 ┆         0 ┆          0 ┆           0 ┆         0 ┆       - ┆       - ┆       - ┆       - │
│ ApiKey1000 (1000)     ┆       0 ┆        1 ┆         0 ┆          0 ┆           0 ┆         0 ┆       - ┆       - ┆       - ┆       - │
└───────────────────────┴─────────┴──────────┴───────────┴────────────┴─────────────┴───────────┴─────────┴─────────┴─────────┴─────────┘

API versions: advertised by each node vs used by clients
┌───────────────────────┬───────────────┬────────────┬──────┬──────────────────────────────────┐
│ API                   ┆ node          ┆ advertised ┆ used ┆ status                           │
╞═══════════════════════╪═══════════════╪════════════╪══════╪══════════════════════════════════╡
│ Metadata (3)          ┆ 10.0.0.2:9092 ┆ -          ┆ v13  ┆ no ApiVersions response captured │
│ SaslAuthenticate (36) ┆ 10.0.0.2:9092 ┆ -          ┆ v2   ┆ no ApiVersions response captured │
│ ApiKey1000 (1000)     ┆ 10.0.0.2:9092 ┆ -          ┆ v0   ┆ no ApiVersions response captured │
└───────────────────────┴───────────────┴────────────┴──────┴──────────────────────────────────┘

Connections
┌────────┬───────────┬────────────────┬───────────────┬──────────┬───────┐
│ stream ┆ client_id ┆ client         ┆ broker        ┆ messages ┆ bytes │
╞════════╪═══════════╪════════════════╪═══════════════╪══════════╪═══════╡
│ 1      ┆           ┆ 10.0.0.1:40001 ┆ 10.0.0.2:9092 ┆        3 ┆   154 │
│ 2      ┆           ┆ 10.0.0.1:40002 ┆ 10.0.0.2:9092 ┆        3 ┆   146 │
└────────┴───────────┴────────────────┴───────────────┴──────────┴───────┘
"#;

    /// The connections of `sample()` in 60 columns: 74 wide with every word whole, so the
    /// headers are cut, and the addresses they name are kept.
    const NARROW_CONNECTIONS: &str = r#"Connections
┌─────┬─────┬────────────────┬───────────────┬──────┬──────┐
│ st… ┆ cl… ┆ client         ┆ broker        ┆ mes… ┆ byt… │
╞═════╪═════╪════════════════╪═══════════════╪══════╪══════╡
│ 1   ┆     ┆ 10.0.0.1:40001 ┆ 10.0.0.2:9092 ┆    3 ┆  154 │
│ 2   ┆     ┆ 10.0.0.1:40002 ┆ 10.0.0.2:9092 ┆    3 ┆  146 │
└─────┴─────┴────────────────┴───────────────┴──────┴──────┘
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
            assert_eq!(duration_text(got), duration_text(exact));
        }
        // From 10 ms, every latency prints as its bucket does (3 significant digits of 4).
        for &v in all.iter().filter(|&&v| v >= 10_000_000) {
            assert_eq!(duration_text(bucket(v)), duration_text(v), "{v}");
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
