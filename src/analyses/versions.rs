//! Version negotiation per client: each client (the software name and version its
//! ApiVersions request gave, its client_id, its address) and, for each API it used, every
//! version it chose against the highest the broker it sent them to advertised; whether an
//! older version is what that client software sends by design ([`design`]); answers in a
//! layout other than the version asked (an ApiVersions answer of UNSUPPORTED_VERSION comes in
//! the v0 layout; an answer that does not read at the version asked, to a version the broker
//! did not advertise); and requests for versions the broker did not advertise.
//!
//! A client that gave no software name (its ApiVersions was before the capture, or it sends
//! none: kafkajs, aiokafka, kafka-go, brokers' own clients) is told apart by its client_id and
//! address, never pooled with others. The text table folds clients that did the same with an
//! API into one row, and brokers' own clients (replica fetchers, KRaft) by role.

mod design;

use super::adapter::Event;
use super::MAX_KEYS;
use crate::analyses::hash::HashMap;
use crate::kafka::message::api_display_name;
use crate::text::table::{Cell, Fit, Grid};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, SocketAddr};

const UNSUPPORTED_VERSION: i16 = 35;
const API_VERSIONS: i16 = 18;
/// Rows of the text table; the rest are counted in a last row (all are in the JSON).
pub const TABLE_ROWS: usize = 40;
/// Clients named in one row of the text table.
const ROW_CLIENTS: usize = 4;
/// Frames kept per client and API.
const FRAMES: usize = 10;

/// A software name and version, as an ApiVersions request gives them.
type Software = (String, String);

/// Who sent a request.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Client {
    /// The software name and version its ApiVersions request gave (on this connection, or
    /// another of the same client_id and address); `None` when none was seen.
    pub software: Option<(String, String)>,
    pub client_id: String,
    pub ip: Option<IpAddr>,
}

/// What one client did with one API.
#[derive(Debug, Default, Clone)]
pub struct ApiUse {
    pub versions: BTreeSet<i16>,
    /// The highest version the brokers it sent them to advertised (the lowest of those).
    pub broker_max: Option<i64>,
    pub requests: u64,
    pub not_advertised: u64,
    pub other_layout: u64,
    /// Frames of the requests for versions not advertised, and answers in another layout.
    pub frames: Vec<u64>,
}

impl ApiUse {
    fn merge(&mut self, o: &ApiUse) {
        self.versions.extend(o.versions.iter().copied());
        self.broker_max = match (self.broker_max, o.broker_max) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.requests += o.requests;
        self.not_advertised += o.not_advertised;
        self.other_layout += o.other_layout;
        let room = FRAMES.saturating_sub(self.frames.len());
        self.frames.extend(o.frames.iter().take(room));
    }

    /// The versions used below what the broker offers.
    pub fn older(&self) -> Vec<i16> {
        match self.broker_max {
            Some(m) => self
                .versions
                .iter()
                .copied()
                .filter(|v| i64::from(*v) < m)
                .collect(),
            None => Vec::new(),
        }
    }
}

#[derive(Debug, Default)]
pub struct Versions {
    /// Software by stream, and by client (address and client_id) for streams that sent no
    /// ApiVersions v3+.
    by_stream: HashMap<u32, (String, String)>,
    by_client: HashMap<(IpAddr, String), (String, String)>,
    /// Advertised ranges by broker node.
    advertised: HashMap<SocketAddr, BTreeMap<i16, (i64, i64)>>,
    pub uses: BTreeMap<Client, BTreeMap<i16, ApiUse>>,
    /// Requests of clients past `MAX_KEYS`.
    pub dropped: u64,
}

impl Versions {
    fn client(&self, e: &Event) -> Client {
        let ip = e.client.map(|c| c.ip());
        let software = self.by_stream.get(&e.stream).cloned().or_else(|| {
            ip.and_then(|ip| self.by_client.get(&(ip, e.client_id.clone())))
                .cloned()
        });
        Client {
            software,
            client_id: e.client_id.clone(),
            ip,
        }
    }

    fn use_of(&mut self, c: Client, key: i16) -> Option<&mut ApiUse> {
        if self.uses.len() >= MAX_KEYS && !self.uses.contains_key(&c) {
            self.dropped += 1;
            return None;
        }
        Some(self.uses.entry(c).or_default().entry(key).or_default())
    }

    pub fn request(&mut self, e: &Event) {
        if let Some(sw) = &e.software {
            if self.by_stream.len() < MAX_KEYS {
                self.by_stream.insert(e.stream, sw.clone());
            }
            if let (Some(c), true) = (e.client, self.by_client.len() < MAX_KEYS) {
                self.by_client
                    .insert((c.ip(), e.client_id.clone()), sw.clone());
            }
        }
        let client = self.client(e);
        let adv = e
            .broker
            .and_then(|b| self.advertised.get(&b))
            .and_then(|a| a.get(&e.api_key).copied());
        let known = e.broker.is_some_and(|b| self.advertised.contains_key(&b));
        let (key, version, frame) = (e.api_key, e.api_version, e.frame);
        let Some(u) = self.use_of(client, key) else {
            return;
        };
        u.versions.insert(version);
        u.requests += 1;
        if let Some((_, hi)) = adv {
            u.broker_max = Some(u.broker_max.map_or(hi, |m| m.min(hi)));
        }
        let outside = adv.is_none_or(|(lo, hi)| !(lo..=hi).contains(&i64::from(version)));
        // ApiVersions is asked before the answer is known: its version is a guess by design.
        if known && outside && key != API_VERSIONS {
            u.not_advertised += 1;
            if u.frames.len() < FRAMES {
                u.frames.push(frame);
            }
        }
    }

    pub fn response(&mut self, req: Option<&Event>, e: &Event) {
        if let (Some(list), false, Some(b)) = (&e.advertised, e.malformed, e.broker) {
            if self.advertised.len() < MAX_KEYS || self.advertised.contains_key(&b) {
                let m = list.iter().map(|&(k, lo, hi)| (k, (lo, hi))).collect();
                self.advertised.insert(b, m);
            }
        }
        let Some(req) = req else { return };
        let v0_answer = e.api_key == API_VERSIONS && e.error == Some(UNSUPPORTED_VERSION);
        let adv = e
            .broker
            .and_then(|b| self.advertised.get(&b))
            .and_then(|a| a.get(&e.api_key).copied());
        let unadvertised = adv.is_some_and(|(_, hi)| i64::from(req.api_version) > hi);
        if v0_answer || (e.malformed && unadvertised) {
            let client = self.client(req);
            if let Some(u) = self.use_of(client, e.api_key) {
                u.other_layout += 1;
                if u.frames.len() < FRAMES {
                    u.frames.push(e.frame);
                }
            }
        }
    }

    /// Every client with what it used. A client first seen without a software name whose
    /// client_id and address later named exactly one software (on another connection) is
    /// that software's.
    pub fn clients(&self) -> BTreeMap<Client, BTreeMap<i16, ApiUse>> {
        // (client_id, address) → the software names seen for it.
        let mut named: HashMap<(&str, Option<IpAddr>), Vec<&Software>> = HashMap::default();
        for c in self.uses.keys() {
            if let Some(sw) = &c.software {
                named
                    .entry((c.client_id.as_str(), c.ip))
                    .or_default()
                    .push(sw);
            }
        }
        let mut out: BTreeMap<Client, BTreeMap<i16, ApiUse>> = BTreeMap::new();
        for (c, apis) in &self.uses {
            let mut c = c.clone();
            if c.software.is_none() {
                if let Some([one]) = named.get(&(c.client_id.as_str(), c.ip)).map(Vec::as_slice) {
                    c.software = Some((*one).clone());
                }
            }
            let entry = out.entry(c).or_default();
            for (k, u) in apis {
                entry.entry(*k).or_default().merge(u);
            }
        }
        out
    }
}

/// What the capture says of one client's use of one API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The newest version the broker offers (or newer).
    Newest,
    /// No ApiVersions answer of the broker was seen.
    Unknown,
    /// Older than the broker offers, as that client software sends it by design (why).
    ByDesign(&'static str),
    /// Older than the broker offers, and older than the newest release of that software
    /// would send (or the software is not known).
    Older,
}

/// The family a client's software belongs to, by its name or, unnamed, by its versions.
fn family_of(c: &Client, apis: &BTreeMap<i16, ApiUse>) -> Option<&'static design::Family> {
    match &c.software {
        Some((name, version)) => design::family(name, version),
        None => {
            let used: Vec<(i16, i16)> = apis
                .iter()
                .filter_map(|(k, u)| u.versions.iter().next_back().map(|v| (*k, *v)))
                .collect();
            design::recognise(&used)
        }
    }
}

/// The verdict on one API of a client of `family`.
fn verdict(key: i16, u: &ApiUse, family: Option<&design::Family>) -> Verdict {
    let older = u.older();
    if u.broker_max.is_none() {
        return Verdict::Unknown;
    }
    if older.is_empty() {
        return Verdict::Newest;
    }
    if key == API_VERSIONS {
        return Verdict::ByDesign("asked before the broker's versions are known");
    }
    match family.and_then(|f| f.floor(key)) {
        Some((floor, why)) if older.iter().all(|v| *v >= floor) => Verdict::ByDesign(why),
        _ => Verdict::Older,
    }
}

/// A row of the text table: rank (what deserves a look first), software, API key, versions
/// used, broker max, status.
type Row = (u8, String, i16, String, Option<i64>, String);

/// The table's lines: the APIs a set of clients of one software used alike (older than the
/// broker offers, by design or not, the newest, or without an answer to tell) are folded
/// into one line listing them; requests for versions not advertised and answers in another
/// layout keep a line each.
fn fold_plain(rows: BTreeMap<Row, Vec<&Client>>) -> Vec<Vec<Cell>> {
    let mut lines = Vec::new();
    let mut plain: BTreeMap<(u8, String, String, String), Vec<String>> = BTreeMap::new();
    for ((rank, sw, key, used, max, status), cs) in rows {
        let who = clients_text(&cs);
        if rank >= 3 {
            plain
                .entry((rank, sw, status, who))
                .or_default()
                .push(format!("{} {used}", api_display_name(key)));
            continue;
        }
        // Older (by design or not): listed together, each with what the broker offers.
        if rank == 1 || rank == 2 {
            let status = match status.split_once("by design: ") {
                Some((_, why)) => format!("older than the broker offers, by design: {why}"),
                None => "older than the broker offers".into(),
            };
            let max = max.map_or("-".into(), |m| format!("v{m}"));
            plain
                .entry((rank, sw, status, who))
                .or_default()
                .push(format!("{} {used} (broker {max})", api_display_name(key)));
            continue;
        }
        lines.push(vec![
            Cell::atom(sw),
            Cell::atom(format!("{} ({key})", api_display_name(key))),
            Cell::atom(used),
            Cell::num(max.map_or("-".into(), |m| format!("v{m}"))),
            Cell::text(status),
            Cell::text(who),
        ]);
    }
    for ((_, sw, status, who), apis) in plain {
        let n = apis.len();
        lines.push(vec![
            Cell::atom(sw),
            Cell::atom(if n == 1 {
                "1 API".into()
            } else {
                format!("{n} APIs")
            }),
            Cell::text(apis.join(", ")),
            Cell::num("-"),
            Cell::text(status),
            Cell::text(who),
        ]);
    }
    lines
}

/// Versions as `v7 v9`.
fn versions_text(v: impl IntoIterator<Item = i16>) -> String {
    v.into_iter()
        .map(|v| format!("v{v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A client's software as the table shows it.
fn software_text(c: &Client, family: Option<&design::Family>) -> String {
    match (&c.software, family) {
        (Some((n, v)), _) => format!("{n} {v}"),
        (None, Some(f)) => format!("(no name; {} by its versions)", f.source),
        (None, None) => "(no software name)".into(),
    }
}

/// A broker's own client, by role: replica fetchers, the KRaft client, the transaction
/// marker sender, the share persister, and a node's channel to the controller (its id).
fn internal_role(client_id: &str) -> Option<&'static str> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let parts: Vec<&str> = client_id.split('-').collect();
    match parts.as_slice() {
        ["broker", n, "fetcher", m] if digits(n) && digits(m) => Some("broker-N-fetcher-M"),
        ["broker", n, "txn", "marker", "sender"] if digits(n) => Some("broker-N-txn-marker-sender"),
        ["raft", "client", n] if digits(n) => Some("raft-client-N"),
        ["AddPartitionsManager", "client", n] if digits(n) => Some("AddPartitionsManager-client-N"),
        ["Persister", "client", n] if digits(n) => Some("Persister-client-N"),
        [n] if digits(n) => Some("N (a node to the controller)"),
        _ => None,
    }
}

/// The clients of one row, as text: brokers' own clients by role with their count, the
/// others by client_id (`(no client id)` when empty), at most `ROW_CLIENTS`, with their
/// addresses.
pub(super) fn clients_text(clients: &[&Client]) -> String {
    let mut roles: BTreeMap<&str, usize> = BTreeMap::new();
    let mut named: Vec<String> = Vec::new();
    for c in clients {
        match internal_role(&c.client_id) {
            Some(r) => *roles.entry(r).or_default() += 1,
            None if c.client_id.is_empty() => named.push("(no client id)".into()),
            None => named.push(format!("{:?}", c.client_id)),
        }
    }
    named.sort();
    named.dedup();
    let mut parts: Vec<String> = roles
        .iter()
        .map(|(r, n)| {
            if *n == 1 {
                (*r).to_string()
            } else {
                format!("{r} ×{n}")
            }
        })
        .collect();
    let more = named.len().saturating_sub(ROW_CLIENTS);
    parts.extend(named.into_iter().take(ROW_CLIENTS));
    if more > 0 {
        parts.push(format!("and {more} more"));
    }
    let ips: BTreeSet<String> = clients
        .iter()
        .filter_map(|c| c.ip.map(|i| i.to_string()))
        .collect();
    let at = match ips.len() {
        0 => String::new(),
        1 => format!(" at {}", ips.iter().next().map_or("", String::as_str)),
        n => format!(" at {n} addresses"),
    };
    format!("{}{at}", parts.join(", "))
}

impl Versions {
    fn status(u: &ApiUse, v: &Verdict) -> String {
        let mut s = match (v, u.broker_max) {
            (Verdict::Unknown, _) | (_, None) => "no ApiVersions answer of the broker".into(),
            (Verdict::Newest, Some(m)) => {
                if u.versions.iter().any(|x| i64::from(*x) > m) {
                    format!("newer than the broker offers (v{m})")
                } else {
                    "the newest the broker offers".into()
                }
            }
            (Verdict::ByDesign(why), Some(m)) => {
                format!("older than the broker offers (v{m}), by design: {why}")
            }
            (Verdict::Older, Some(m)) => format!("older than the broker offers (v{m})"),
        };
        if u.not_advertised > 0 {
            s.push_str(&format!(
                "; {} for versions not advertised",
                super::findings::plural(u.not_advertised, "request")
            ));
        }
        if u.other_layout > 0 {
            s.push_str(&format!(
                "; {} in another layout",
                super::findings::plural(u.other_layout, "answer")
            ));
        }
        s
    }

    /// The old versions each client uses, not by design: (software, clients, what).
    pub fn old_uses(&self) -> Vec<(String, Vec<Client>, String)> {
        let mut by: BTreeMap<(String, String), Vec<Client>> = BTreeMap::new();
        for (c, apis) in &self.clients() {
            let family = family_of(c, apis);
            let old: Vec<String> = apis
                .iter()
                .filter(|(k, u)| verdict(**k, u, family) == Verdict::Older)
                .map(|(k, u)| {
                    format!(
                        "{} {} < v{}",
                        api_display_name(*k),
                        versions_text(u.older()),
                        u.broker_max.unwrap_or(-1)
                    )
                })
                .collect();
            if !old.is_empty() {
                by.entry((software_text(c, family), old.join(", ")))
                    .or_default()
                    .push(c.clone());
            }
        }
        by.into_iter()
            .map(|((sw, what), cs)| (sw, cs, what))
            .collect()
    }

    pub fn tables(&self, fit: Fit) -> Vec<(String, String)> {
        let clients = self.clients();
        if clients.is_empty() {
            return Vec::new();
        }
        // One row per (software, API, versions, broker max, verdict), with its clients.
        let mut rows: BTreeMap<Row, Vec<&Client>> = BTreeMap::new();
        for (c, apis) in &clients {
            let family = family_of(c, apis);
            for (k, u) in apis {
                let v = verdict(*k, u, family);
                let rank = match (&v, u.not_advertised + u.other_layout) {
                    (_, n) if n > 0 => 0,
                    (Verdict::Older, _) => 1,
                    (Verdict::ByDesign(_), _) => 2,
                    (Verdict::Unknown, _) => 4,
                    _ => 3,
                };
                let key = (
                    rank,
                    software_text(c, family),
                    *k,
                    versions_text(u.versions.iter().copied()),
                    u.broker_max,
                    Self::status(u, &v),
                );
                rows.entry(key).or_default().push(c);
            }
        }
        let lines = fold_plain(rows);
        let mut g = Grid::new(&["software", "API", "used", "broker max", "status", "clients"]);
        let total = lines.len();
        let shown = fit.rows().min(TABLE_ROWS);
        for line in lines.into_iter().take(shown) {
            g.row(line);
        }
        if total > shown {
            g.note(format!(
                "and {} more rows of versions as the broker offers or by design (all in --json)",
                total - shown
            ));
        }
        vec![("Version negotiation per client".into(), g.text(fit.width))]
    }

    /// Every client, with what it used.
    pub fn out(&self) -> Vec<ClientVersionsOut> {
        self.clients()
            .iter()
            .map(|(c, apis)| {
                let family = family_of(c, apis);
                ClientVersionsOut {
                    software: c.software.as_ref().map(|s| s.0.clone()),
                    version: c.software.as_ref().map(|s| s.1.clone()),
                    family: family.map(|f| f.name),
                    recognised_as: c
                        .software
                        .is_none()
                        .then(|| family.map(|f| f.source))
                        .flatten(),
                    client_id: c.client_id.clone(),
                    address: c.ip.map(|i| i.to_string()),
                    internal: internal_role(&c.client_id),
                    apis: apis
                        .iter()
                        .map(|(k, u)| {
                            let v = verdict(*k, u, family);
                            ApiUseOut {
                                api_key: *k,
                                api_name: api_display_name(*k).into_owned(),
                                versions: u.versions.iter().copied().collect(),
                                requests: u.requests,
                                broker_max: u.broker_max,
                                older_than_broker: !u.older().is_empty(),
                                by_design: match v {
                                    Verdict::ByDesign(why) => Some(why),
                                    _ => None,
                                },
                                not_advertised: u.not_advertised,
                                other_layout: u.other_layout,
                                frames: u.frames.clone(),
                            }
                        })
                        .collect(),
                }
            })
            .collect()
    }
}

/// One client (an element of `client_versions` in the JSON).
#[derive(Debug, Clone, Serialize)]
pub struct ClientVersionsOut {
    /// The software name and version its ApiVersions request gave; null when none was seen.
    pub software: Option<String>,
    pub version: Option<String>,
    /// The known client family its software is (`apache-kafka-java`, `librdkafka`, `kgo`,
    /// `sarama`, `kafkajs`), whose versions by design apply.
    pub family: Option<&'static str>,
    /// A client without a software name whose versions are those of a known client
    /// (kafkajs sends none): that client, with the version its versions come from.
    pub recognised_as: Option<&'static str>,
    pub client_id: String,
    pub address: Option<String>,
    /// A broker's own client: its role (`broker-N-fetcher-M`, `raft-client-N`...).
    pub internal: Option<&'static str>,
    /// By API key.
    pub apis: Vec<ApiUseOut>,
}

/// What one client did with one API.
#[derive(Debug, Clone, Serialize)]
pub struct ApiUseOut {
    pub api_key: i16,
    pub api_name: String,
    /// Every version used, ascending.
    pub versions: Vec<i16>,
    pub requests: u64,
    /// The highest version the brokers it sent them to advertised (the lowest of those).
    pub broker_max: Option<i64>,
    /// Some version used is older than `broker_max`.
    pub older_than_broker: bool,
    /// Those older versions are what this client software sends by design: why.
    pub by_design: Option<&'static str>,
    pub not_advertised: u64,
    pub other_layout: u64,
    /// Frames of requests for versions not advertised, and of answers in another layout.
    pub frames: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brokers_own_clients_are_folded_by_role() {
        assert_eq!(
            internal_role("broker-3-fetcher-0"),
            Some("broker-N-fetcher-M")
        );
        assert_eq!(internal_role("raft-client-2"), Some("raft-client-N"));
        assert_eq!(internal_role("2"), Some("N (a node to the controller)"));
        assert_eq!(internal_role("broker-fetcher"), None);
        assert_eq!(internal_role("rb-m1"), None);
        let c = |id: &str| Client {
            software: None,
            client_id: id.into(),
            ip: "127.0.0.1".parse().ok(),
        };
        let cs = [
            c("broker-1-fetcher-0"),
            c("broker-2-fetcher-0"),
            c(""),
            c("a"),
        ];
        let refs: Vec<&Client> = cs.iter().collect();
        assert_eq!(
            clients_text(&refs),
            "broker-N-fetcher-M ×2, \"a\", (no client id) at 127.0.0.1"
        );
    }

    #[test]
    fn a_java_classic_commit_is_by_design_and_a_producer_below_the_newest_is_not() {
        let java = design::family("apache-kafka-java", "4.4.0");
        let u = |v: &[i16], max: i64| ApiUse {
            versions: v.iter().copied().collect(),
            broker_max: Some(max),
            ..ApiUse::default()
        };
        assert!(matches!(
            verdict(8, &u(&[9], 10), java),
            Verdict::ByDesign(_)
        ));
        assert_eq!(verdict(8, &u(&[10], 10), java), Verdict::Newest);
        // Every version counts: v7 beside v13 is still an old Produce.
        let aiokafka = None;
        assert_eq!(verdict(0, &u(&[7, 13], 13), aiokafka), Verdict::Older);
        assert_eq!(verdict(1, &u(&[16], 18), java), Verdict::Older);
    }
}
