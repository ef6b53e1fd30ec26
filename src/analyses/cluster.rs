//! What changed in the cluster over the capture, from the KRaft metadata log that brokers and
//! controllers fetch: brokers registered, fenced, unfenced, shutting down or gone, partition
//! leaders moved, ISRs shrunk or expanded, topics created or deleted, configs, quotas, SCRAM
//! users and ACLs altered. Each record of the log is seen once per fetcher; it counts once,
//! by its offset in the log, at the first frame that carried it. Leaders and ISRs are compared
//! with the partition's state as the log gave it before (a PartitionRecord, or an earlier
//! change), or else as a Metadata answer showed it (a capture started while the cluster
//! runs), so that a change reads `1→3`; with neither, `?→3`. The same change of several
//! partitions in one answer (a broker's death shrinking every ISR it was in) folds into one
//! row.
//!
//! Memory stays bounded: at most [`MAX_EVENTS`] rows, [`MAX_KEYS`] brokers, partitions and
//! topic names, and the offsets of the last [`MAX_OFFSETS`] records (an older record seen
//! again, by a broker replaying the log from far behind, would count again). What is past a
//! bound is counted (docs/robustness.md).

use super::series::at_text;
use super::MAX_KEYS;
use crate::analyses::hash::HashMap;
use crate::kafka::meaning::facts::{BrokerIds, Name};
use crate::kafka::records::metadata::{Change, LogChange};
use crate::kafka::stream::Record;
use crate::text::table::{Cell, Fit, Grid};
use serde::Serialize;
use std::collections::BTreeSet;

/// Rows of the change list kept (identical consecutive changes fold into one first).
pub const MAX_EVENTS: usize = 10_000;
/// Log offsets remembered to count each record once.
pub const MAX_OFFSETS: usize = 100_000;
/// Rows the table prints; the rest are summed up in one row.
const TABLE_ROWS: usize = 40;
/// Subjects (partitions, brokers) one folded row names; the rest are counted.
const SUBJECTS: usize = 5;

/// What kind of change a row tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    BrokerRegistered,
    BrokerUnregistered,
    BrokerFenced,
    BrokerUnfenced,
    BrokerShuttingDown,
    ControllerRegistered,
    ControllerUnregistered,
    TopicCreated,
    TopicDeleted,
    PartitionCreated,
    LeaderMoved,
    LeaderLost,
    IsrShrunk,
    IsrExpanded,
    IsrChanged,
    ReplicasChanged,
    ConfigSet,
    ConfigDeleted,
    FeatureLevel,
    QuotaSet,
    QuotaRemoved,
    ScramUserSet,
    ScramUserRemoved,
    AclAdded,
    AclRemoved,
}

impl Kind {
    /// As the table (and the report) says it.
    pub(crate) fn words(self) -> &'static str {
        match self {
            Kind::BrokerRegistered => "broker registered",
            Kind::BrokerUnregistered => "broker unregistered",
            Kind::BrokerFenced => "broker fenced",
            Kind::BrokerUnfenced => "broker unfenced",
            Kind::BrokerShuttingDown => "broker shutting down",
            Kind::ControllerRegistered => "controller registered",
            Kind::ControllerUnregistered => "controller unregistered",
            Kind::TopicCreated => "topic created",
            Kind::TopicDeleted => "topic deleted",
            Kind::PartitionCreated => "partition created",
            Kind::LeaderMoved => "leader moved",
            Kind::LeaderLost => "leader lost",
            Kind::IsrShrunk => "ISR shrunk",
            Kind::IsrExpanded => "ISR expanded",
            Kind::IsrChanged => "ISR changed",
            Kind::ReplicasChanged => "replicas changed",
            Kind::ConfigSet => "config set",
            Kind::ConfigDeleted => "config deleted",
            Kind::FeatureLevel => "feature level",
            Kind::QuotaSet => "quota set",
            Kind::QuotaRemoved => "quota removed",
            Kind::ScramUserSet => "SCRAM user set",
            Kind::ScramUserRemoved => "SCRAM user removed",
            Kind::AclAdded => "ACL added",
            Kind::AclRemoved => "ACL removed",
        }
    }
}

/// One row: a change, or identical consecutive changes of several subjects folded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChangeRow {
    pub kind: Kind,
    /// What changed, the first few (`cluster-orders-0`, `broker 2`).
    pub subjects: Vec<String>,
    /// How many changes the row folds (subjects past the first few included).
    pub count: u64,
    /// The change itself: `1→3`, `[1,2,3]→[1,3]`, `retention.ms=86400000`.
    pub detail: String,
    /// Capture time (ns since 1970) and frame where the first of them was seen.
    pub ts_ns: i64,
    pub frame: u64,
    /// The record's time in the log (ms since 1970) and its offset, for the first of them.
    pub log_time_ms: i64,
    pub log_offset: i64,
}

/// A broker as the log left it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BrokerState {
    pub broker: i32,
    pub epoch: i64,
    pub registered: bool,
    pub fenced: Option<bool>,
    pub shutting_down: bool,
}

/// The analysis' JSON: every row kept, the brokers' last state, and what was counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClusterOut {
    pub changes: Vec<ChangeRow>,
    pub brokers: Vec<BrokerState>,
    /// Records of the log that changed something, each counted once.
    pub records: u64,
    /// Sightings of a record already counted (one per fetcher that fetched it).
    pub seen_again: u64,
    /// Changes past the bounds: rows past `MAX_EVENTS`, records a message held past its
    /// own bound (src/kafka/records/metadata.rs), brokers or partitions past `MAX_KEYS`.
    pub not_kept: u64,
}

/// A partition as the log gave it.
#[derive(Debug, Clone, Default)]
struct Partition {
    leader: Option<i32>,
    isr: Option<BrokerIds>,
    replicas: Option<BrokerIds>,
}

/// The cluster analysis' state.
#[derive(Debug, Default)]
pub struct Cluster {
    rows: Vec<ChangeRow>,
    brokers: HashMap<i32, BrokerState>,
    /// By topic (its name, or its id where none is known) and partition.
    partitions: HashMap<(Name, i32), Partition>,
    names: HashMap<[u8; 16], String>,
    offsets: BTreeSet<i64>,
    records: u64,
    seen_again: u64,
    not_kept: u64,
    /// The frame whose changes are being folded, and its rows by (kind, detail).
    folding: u64,
    folds: HashMap<(Kind, String), usize>,
}

/// Where and when a change was first seen.
#[derive(Debug, Clone, Copy)]
struct Seen {
    ts: i64,
    frame: u64,
    log_time: i64,
    offset: i64,
}

impl Cluster {
    /// One message: the changes its metadata records carry.
    pub fn message(&mut self, rec: &Record<'_>) {
        if rec.msg.api_key == Some(3) && rec.msg.direction == crate::kafka::Direction::Response {
            self.seed(rec);
        }
        let log = &rec.msg.record_types;
        self.not_kept = self.not_kept.saturating_add(u64::from(log.dropped));
        for c in &log.changes {
            if !self.first_sight(c.offset) {
                self.seen_again += 1;
                continue;
            }
            self.records += 1;
            self.change(c, rec);
        }
    }

    /// A Metadata answer's partitions: their leader and ISR where the log has not told them
    /// yet, to compare the log's changes with.
    fn seed(&mut self, rec: &Record<'_>) {
        for p in rec.msg.facts.offsets.iter() {
            let (Some(leader), Some(isr)) = (p.leader, &p.isr) else {
                continue;
            };
            if p.error != 0 || p.topic.is_empty() {
                continue;
            }
            let key = (p.topic.clone(), p.partition);
            if self.partitions.contains_key(&key) || self.partitions.len() >= MAX_KEYS {
                continue;
            }
            self.partitions.insert(
                key,
                Partition {
                    leader: Some(leader),
                    isr: Some(isr.clone()),
                    replicas: p.replicas.clone(),
                },
            );
        }
    }

    /// Whether the record at `offset` of the log is seen for the first time.
    fn first_sight(&mut self, offset: i64) -> bool {
        if !self.offsets.insert(offset) {
            return false;
        }
        if self.offsets.len() > MAX_OFFSETS {
            self.offsets.pop_first();
        }
        true
    }

    /// One change of the log, seen for the first time. Long: one arm per kind of change.
    fn change(&mut self, c: &LogChange, rec: &Record<'_>) {
        let at = Seen {
            ts: rec.ts_nanos,
            frame: rec.frame,
            log_time: c.timestamp,
            offset: c.offset,
        };
        match &c.what {
            Change::BrokerRegistered {
                broker,
                epoch,
                fenced,
                shutting_down,
            } => {
                self.broker(*broker, *epoch, |b| {
                    b.registered = true;
                    b.fenced = Some(*fenced);
                    b.shutting_down = *shutting_down;
                });
                let detail = format!("epoch {epoch}{}", if *fenced { ", fenced" } else { "" });
                self.row(Kind::BrokerRegistered, broker_subject(*broker), detail, at);
            }
            Change::BrokerUnregistered { broker, epoch } => {
                self.broker(*broker, *epoch, |b| b.registered = false);
                self.row(
                    Kind::BrokerUnregistered,
                    broker_subject(*broker),
                    String::new(),
                    at,
                );
            }
            Change::BrokerChanged {
                broker,
                epoch,
                fenced,
                shutting_down,
            } => self.broker_changed(*broker, *epoch, *fenced, *shutting_down, at),
            Change::Controller {
                controller,
                registered,
            } => {
                let kind = if *registered {
                    Kind::ControllerRegistered
                } else {
                    Kind::ControllerUnregistered
                };
                self.row(kind, format!("controller {controller}"), String::new(), at);
            }
            Change::TopicCreated { topic, name } => {
                if self.names.len() < MAX_KEYS || self.names.contains_key(topic) {
                    self.names.insert(*topic, name.clone());
                }
                self.row(Kind::TopicCreated, name.clone(), String::new(), at);
            }
            Change::TopicDeleted { topic, name } => {
                // Its partitions' state stays: a topic id is never used again.
                let subject = self.topic(topic, name.as_deref());
                self.row(Kind::TopicDeleted, subject, String::new(), at);
            }
            Change::PartitionCreated {
                topic,
                name,
                partition,
                leader,
                isr,
                replicas,
            } => {
                let t = self.topic(topic, name.as_deref());
                let subject = format!("{t}-{partition}");
                self.partition((t.into(), *partition), |p| {
                    p.leader = Some(*leader);
                    p.isr = Some(isr.clone());
                    p.replicas = Some(replicas.clone());
                });
                let detail = format!("leader {leader}, replicas {}", ids(replicas));
                self.row(Kind::PartitionCreated, subject, detail, at);
            }
            Change::PartitionChanged {
                topic,
                name,
                partition,
                leader,
                isr,
                replicas,
            } => {
                let t = self.topic(topic, name.as_deref());
                let subject = format!("{t}-{partition}");
                self.partition_changed(
                    (t.into(), *partition),
                    subject,
                    (*leader, isr.as_ref(), replicas.as_ref()),
                    at,
                );
            }
            Change::Config {
                resource_type,
                resource,
                name,
                value,
            } => {
                let subject = format!("{resource_type} {resource}");
                match value {
                    Some(v) => self.row(Kind::ConfigSet, subject, format!("{name}={v}"), at),
                    None => self.row(Kind::ConfigDeleted, subject, name.clone(), at),
                }
            }
            Change::Feature { name, level } => {
                self.row(Kind::FeatureLevel, name.clone(), level.to_string(), at);
            }
            Change::Quota {
                entity,
                key,
                removed,
            } => {
                let kind = if *removed {
                    Kind::QuotaRemoved
                } else {
                    Kind::QuotaSet
                };
                self.row(kind, entity.clone(), key.clone(), at);
            }
            Change::ScramUser {
                user,
                mechanism,
                removed,
            } => {
                let kind = if *removed {
                    Kind::ScramUserRemoved
                } else {
                    Kind::ScramUserSet
                };
                self.row(kind, user.clone(), (*mechanism).to_string(), at);
            }
            Change::Acl { principal, added } => {
                let kind = if *added {
                    Kind::AclAdded
                } else {
                    Kind::AclRemoved
                };
                let subject = principal.clone().unwrap_or_default();
                self.row(kind, subject, String::new(), at);
            }
        }
    }

    fn broker_changed(
        &mut self,
        broker: i32,
        epoch: i64,
        fenced: Option<bool>,
        shutting_down: bool,
        at: Seen,
    ) {
        self.broker(broker, epoch, |b| {
            if fenced.is_some() {
                b.fenced = fenced;
            }
            b.shutting_down |= shutting_down;
            if fenced == Some(false) {
                // Unfenced again: back in service.
                b.shutting_down = false;
            }
        });
        let detail = format!("epoch {epoch}");
        match fenced {
            Some(true) => self.row(
                Kind::BrokerFenced,
                broker_subject(broker),
                detail.clone(),
                at,
            ),
            Some(false) => self.row(
                Kind::BrokerUnfenced,
                broker_subject(broker),
                detail.clone(),
                at,
            ),
            None => {}
        }
        if shutting_down {
            self.row(Kind::BrokerShuttingDown, broker_subject(broker), detail, at);
        }
    }

    /// A PartitionChangeRecord: what moved, against what the log said before.
    fn partition_changed(
        &mut self,
        key: (Name, i32),
        subject: String,
        (leader, isr, replicas): (Option<i32>, Option<&BrokerIds>, Option<&BrokerIds>),
        at: Seen,
    ) {
        let before = self.partitions.get(&key).cloned().unwrap_or_default();
        if let Some(l) = leader.filter(|l| before.leader != Some(*l)) {
            let kind = if l < 0 {
                Kind::LeaderLost
            } else {
                Kind::LeaderMoved
            };
            let from = before.leader.map_or("?".to_string(), leader_text);
            let detail = format!("{from}→{}", leader_text(l));
            self.row(kind, subject.clone(), detail, at);
        }
        if let Some(new) = isr.filter(|i| before.isr.as_ref() != Some(*i)) {
            let kind = match &before.isr {
                Some(old) if new.len() < old.len() => Kind::IsrShrunk,
                Some(old) if new.len() > old.len() => Kind::IsrExpanded,
                _ => Kind::IsrChanged,
            };
            let from = before.isr.as_deref().map_or("?".to_string(), ids);
            self.row(kind, subject.clone(), format!("{from}→{}", ids(new)), at);
        }
        if let Some(new) = replicas.filter(|r| before.replicas.as_ref() != Some(*r)) {
            let from = before.replicas.as_deref().map_or("?".to_string(), ids);
            let detail = format!("{from}→{}", ids(new));
            self.row(Kind::ReplicasChanged, subject, detail, at);
        }
        self.partition(key, |p| {
            if leader.is_some() {
                p.leader = leader;
            }
            if let Some(i) = isr {
                p.isr = Some(i.clone());
            }
            if let Some(r) = replicas {
                p.replicas = Some(r.clone());
            }
        });
    }

    /// A topic by the name its id has here, else the name the message gave, else the id.
    fn topic(&self, id: &[u8; 16], named: Option<&str>) -> String {
        self.names
            .get(id)
            .map(String::as_str)
            .or(named)
            .map_or_else(|| crate::text::uuid(id), str::to_string)
    }

    fn broker(&mut self, id: i32, epoch: i64, f: impl FnOnce(&mut BrokerState)) {
        if self.brokers.len() >= MAX_KEYS && !self.brokers.contains_key(&id) {
            self.not_kept += 1;
            return;
        }
        let b = self.brokers.entry(id).or_insert(BrokerState {
            broker: id,
            epoch,
            registered: false,
            fenced: None,
            shutting_down: false,
        });
        b.epoch = epoch;
        f(b);
    }

    fn partition(&mut self, key: (Name, i32), f: impl FnOnce(&mut Partition)) {
        if self.partitions.len() >= MAX_KEYS && !self.partitions.contains_key(&key) {
            self.not_kept += 1;
            return;
        }
        f(self.partitions.entry(key).or_default());
    }

    /// A change as a row: folded into a row of the same frame when it is the same change of
    /// another subject (a broker's death shrinking the ISR of every partition it held).
    fn row(&mut self, kind: Kind, subject: String, detail: String, at: Seen) {
        if self.folding != at.frame {
            self.folding = at.frame;
            self.folds.clear();
        }
        let key = (kind, detail);
        if let Some(r) = self.folds.get(&key).and_then(|i| self.rows.get_mut(*i)) {
            r.count += 1;
            if r.subjects.len() < SUBJECTS && !r.subjects.contains(&subject) {
                r.subjects.push(subject);
            }
            return;
        }
        let (kind, detail) = key;
        if self.rows.len() >= MAX_EVENTS {
            self.not_kept += 1;
            return;
        }
        self.folds.insert((kind, detail.clone()), self.rows.len());
        self.rows.push(ChangeRow {
            kind,
            subjects: vec![subject],
            count: 1,
            detail,
            ts_ns: at.ts,
            frame: at.frame,
            log_time_ms: at.log_time,
            log_offset: at.offset,
        });
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The typed JSON of `--stats --json`.
    pub fn out(&self) -> ClusterOut {
        let mut brokers: Vec<BrokerState> = self.brokers.values().cloned().collect();
        brokers.sort_by_key(|b| b.broker);
        ClusterOut {
            changes: self.rows.clone(),
            brokers,
            records: self.records,
            seen_again: self.seen_again,
            not_kept: self.not_kept,
        }
    }

    /// The change list, for `--stats`: the first rows in time, then one row for the rest.
    pub fn tables(&self, start: i64, fit: Fit) -> Vec<(String, String)> {
        if self.rows.is_empty() {
            return Vec::new();
        }
        let mut g = Grid::new(&["at", "frame", "change", "of", "detail"]);
        // Within one frame, brokers first: the broker fenced is why the ISRs shrank.
        let mut rows: Vec<&ChangeRow> = self.rows.iter().collect();
        rows.sort_by_key(|r| (r.ts_ns, r.frame, rank(r.kind)));
        let shown = fit.rows().min(TABLE_ROWS);
        for r in rows.iter().take(shown) {
            g.row(vec![
                Cell::num(at_text(r.ts_ns, start)),
                Cell::num(r.frame),
                Cell::atom(r.kind.words()),
                Cell::text(subjects_text(r)),
                Cell::text(safe(&r.detail)),
            ]);
        }
        let rest = rows.len().saturating_sub(shown);
        if rest > 0 {
            let changes: u64 = rows.iter().skip(shown).map(|r| r.count).sum();
            g.note(format!(
                "and {rest} more rows ({changes} changes) later in the log (all in --json)"
            ));
        }
        let title = format!(
            "Cluster changes (KRaft metadata log: {} records changed something, each fetched {} more times)",
            self.records, self.seen_again
        );
        vec![(title, g.text(fit.width))]
    }
}

/// `orders-0, orders-1 +3 more`: a row's subjects, wire text quoted where it needs to be.
fn subjects_text(r: &ChangeRow) -> String {
    let mut parts: Vec<String> = r.subjects.iter().map(|s| safe(s)).collect();
    let more = r.count.saturating_sub(r.subjects.len() as u64);
    if more > 0 {
        parts.push(format!("+{more} more"));
    }
    parts.join(", ")
}

/// Wire text for a table cell: quoted and escaped when it holds a control character.
fn safe(s: &str) -> String {
    if s.chars().any(char::is_control) {
        crate::text::quote(s)
    } else {
        s.to_string()
    }
}

/// Which rows of one frame the table lists first: brokers, topics, the rest, partitions.
fn rank(k: Kind) -> u8 {
    match k {
        Kind::BrokerRegistered
        | Kind::BrokerUnregistered
        | Kind::BrokerFenced
        | Kind::BrokerUnfenced
        | Kind::BrokerShuttingDown
        | Kind::ControllerRegistered
        | Kind::ControllerUnregistered => 0,
        Kind::TopicCreated | Kind::TopicDeleted => 1,
        Kind::PartitionCreated
        | Kind::LeaderMoved
        | Kind::LeaderLost
        | Kind::IsrShrunk
        | Kind::IsrExpanded
        | Kind::IsrChanged
        | Kind::ReplicasChanged => 3,
        _ => 2,
    }
}

fn broker_subject(id: i32) -> String {
    format!("broker {id}")
}

fn leader_text(l: i32) -> String {
    if l < 0 {
        "none".to_string()
    } else {
        l.to_string()
    }
}

/// `[1,2,3]`.
fn ids(v: &[i32]) -> String {
    let items: Vec<String> = v.iter().map(i32::to_string).collect();
    format!("[{}]", items.join(","))
}
