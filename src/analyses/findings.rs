//! Findings, each with the frames that show it, as an expert-info list: Metadata storms,
//! NOT_LEADER_OR_FOLLOWER bursts with the Metadata answers that moved the leader, throttling
//! by client and API, connections opened per second, requests never answered, retried
//! correlation ids, and clients on versions older than the broker offers.

use super::adapter::Event;
use super::versions::Versions;
use super::{Analyses, ClientKey, MAX_KEYS, MAX_SAMPLES};
use crate::kafka::message::api_display_name;
use crate::kafka::stream::Notice;
use crate::render::table::{Cell, Grid};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Full-list Metadata requests by one client within a minute past which it is a storm.
pub const STORM_PER_MINUTE: usize = 10;
/// NOT_LEADER_OR_FOLLOWER answers closer than this are one burst.
pub const BURST_GAP_NS: i64 = 1_000_000_000;
/// Metadata answers this long after a burst still count as moving its leader.
const MOVE_AFTER_NS: i64 = 10_000_000_000;
/// New connections per second past which connection churn is a finding.
pub const CONNECTIONS_PER_SECOND: usize = 10;
/// Frames listed per finding.
const FRAMES: usize = 20;
const NOT_LEADER_OR_FOLLOWER: i16 = 6;

/// One finding.
#[derive(Debug, Clone)]
pub struct Finding {
    /// `warning` or `note`.
    pub severity: &'static str,
    /// `metadata_storm`, `not_leader_burst`, `throttling`, `connection_churn`,
    /// `unanswered`, `retried_correlation_id`, `old_client_version`.
    pub kind: &'static str,
    pub summary: String,
    pub frames: Vec<u64>,
}

#[derive(Debug, Default)]
pub struct Findings {
    storms: HashMap<ClientKey, Vec<(i64, u64)>>,
    /// (ts, frame, partitions with the error) of each NOT_LEADER_OR_FOLLOWER answer.
    not_leader: Vec<(i64, u64, usize)>,
    leaders: HashMap<(String, i32), i32>,
    /// (ts, frame, topic, partition, from, to) of each leader change a Metadata answer told.
    moves: Vec<(i64, u64, String, i32, i32, i32)>,
    /// (client_id, API) → (count, largest ms, frames).
    throttled: BTreeMap<(String, i16), (u64, i64, Vec<u64>)>,
    /// The first message time of each stream.
    opened: HashMap<u32, i64>,
    unanswered: Vec<u64>,
    unanswered_total: u64,
    /// Correlation ids per stream; retried ones with their frames.
    corr: HashMap<u32, HashSet<i32>>,
    retried: Vec<(u32, i32, u64)>,
    retried_total: u64,
}

impl Findings {
    pub fn request(&mut self, e: &Event) {
        self.opened_at(e);
        if e.all_topics {
            let c = ClientKey::of(e);
            if self.storms.len() < MAX_KEYS || self.storms.contains_key(&c) {
                let s = self.storms.entry(c).or_default();
                if s.len() < MAX_SAMPLES {
                    s.push((e.ts, e.frame));
                }
            }
        }
        if self.corr.len() < MAX_KEYS || self.corr.contains_key(&e.stream) {
            let ids = self.corr.entry(e.stream).or_default();
            if ids.len() < MAX_SAMPLES && !ids.insert(e.correlation_id) {
                self.retried_total += 1;
                if self.retried.len() < FRAMES {
                    self.retried.push((e.stream, e.correlation_id, e.frame));
                }
            }
        }
    }

    fn opened_at(&mut self, e: &Event) {
        if self.opened.len() < MAX_SAMPLES {
            self.opened.entry(e.stream).or_insert(e.ts);
        }
    }

    pub fn response(&mut self, req: Option<&Event>, e: &Event) {
        self.opened_at(e);
        let n = e
            .error_codes
            .iter()
            .filter(|c| **c == NOT_LEADER_OR_FOLLOWER)
            .count();
        if n > 0 && self.not_leader.len() < MAX_SAMPLES {
            self.not_leader.push((e.ts, e.frame, n));
        }
        if e.throttle_ms > 0 {
            let id = req.map_or_else(String::new, |r| r.client_id.clone());
            if self.throttled.len() < MAX_KEYS {
                let t = self.throttled.entry((id, e.api_key)).or_default();
                t.0 += 1;
                t.1 = t.1.max(e.throttle_ms);
                if t.2.len() < FRAMES {
                    t.2.push(e.frame);
                }
            }
        }
        if e.api_key == 3 {
            self.metadata(e);
        }
    }

    /// A Metadata answer: the leaders it gives, and those it moved.
    fn metadata(&mut self, e: &Event) {
        for p in e.parts.iter().filter(|p| p.error == 0) {
            let Some(to) = p.leader else { continue };
            let tp = (p.topic.clone(), p.partition);
            if self.leaders.len() >= MAX_KEYS && !self.leaders.contains_key(&tp) {
                continue;
            }
            match self.leaders.insert(tp, to) {
                Some(from) if from != to && self.moves.len() < MAX_SAMPLES => {
                    self.moves
                        .push((e.ts, e.frame, p.topic.clone(), p.partition, from, to));
                }
                _ => {}
            }
        }
    }

    pub fn notice(&mut self, n: &Notice) {
        if let Notice::Unanswered { request, .. } = n {
            self.unanswered_total += 1;
            if self.unanswered.len() < FRAMES {
                self.unanswered.push(request.frame);
            }
        }
    }

    /// Every finding, in the order the kinds are listed above.
    pub fn list(&self, a: &Analyses) -> Vec<Finding> {
        let mut out = Vec::new();
        self.storm_findings(a, &mut out);
        self.burst_findings(&mut out);
        for ((id, key), (n, max, frames)) in &self.throttled {
            out.push(Finding {
                severity: "warning",
                kind: "throttling",
                summary: format!(
                    "client {id:?} throttled on {} {n} times, up to {max} ms",
                    api_display_name(*key)
                ),
                frames: frames.clone(),
            });
        }
        self.churn_findings(&mut out);
        if self.unanswered_total > 0 {
            out.push(Finding {
                severity: "warning",
                kind: "unanswered",
                summary: format!("{} requests never answered", self.unanswered_total),
                frames: self.unanswered.clone(),
            });
        }
        if self.retried_total > 0 {
            out.push(Finding {
                severity: "note",
                kind: "retried_correlation_id",
                summary: format!(
                    "{} requests reuse a correlation id already sent on their connection",
                    self.retried_total
                ),
                frames: self.retried.iter().map(|r| r.2).collect(),
            });
        }
        old_clients(&a.versions, &mut out);
        out
    }

    fn storm_findings(&self, a: &Analyses, out: &mut Vec<Finding>) {
        let sorted: BTreeMap<&ClientKey, &Vec<(i64, u64)>> = self.storms.iter().collect();
        for (c, s) in sorted {
            // The busiest minute: the most requests within 60 s of one another.
            let (mut best, mut at) = (0, 0);
            let mut lo = 0;
            for hi in 0..s.len() {
                while s[hi].0 - s[lo].0 >= 60_000_000_000 {
                    lo += 1;
                }
                if hi + 1 - lo > best {
                    (best, at) = (hi + 1 - lo, lo);
                }
            }
            if best > STORM_PER_MINUTE {
                out.push(Finding {
                    severity: "warning",
                    kind: "metadata_storm",
                    summary: format!(
                        "{} ({}) sent {best} Metadata requests for every topic within a minute (over {STORM_PER_MINUTE})",
                        c.client_id,
                        a.owner(c)
                    ),
                    frames: s[at..at + best].iter().take(FRAMES).map(|x| x.1).collect(),
                });
            }
        }
    }

    fn burst_findings(&self, out: &mut Vec<Finding>) {
        let mut bursts: Vec<Vec<(i64, u64, usize)>> = Vec::new();
        for x in &self.not_leader {
            match bursts.last_mut() {
                Some(b) if b.last().is_some_and(|l| x.0 - l.0 <= BURST_GAP_NS) => b.push(*x),
                _ => bursts.push(vec![*x]),
            }
        }
        for b in bursts {
            let (start, end) = (b[0].0, b[b.len() - 1].0);
            let errors: usize = b.iter().map(|x| x.2).sum();
            let moved: Vec<&(i64, u64, String, i32, i32, i32)> = self
                .moves
                .iter()
                .filter(|m| m.0 >= start - BURST_GAP_NS && m.0 <= end + MOVE_AFTER_NS)
                .collect();
            let mut frames: Vec<u64> = b.iter().map(|x| x.1).take(FRAMES).collect();
            frames.extend(moved.iter().map(|m| m.1).take(FRAMES));
            let moves: Vec<String> = moved
                .iter()
                .take(5)
                .map(|m| format!("{}-{} leader {} → {} (frame {})", m.2, m.3, m.4, m.5, m.1))
                .collect();
            out.push(Finding {
                severity: "warning",
                kind: "not_leader_burst",
                summary: format!(
                    "{errors} NOT_LEADER_OR_FOLLOWER errors in {} responses over {:.3} s; {}",
                    b.len(),
                    (end - start) as f64 / 1e9,
                    if moves.is_empty() {
                        "no Metadata answer moved a leader".to_string()
                    } else {
                        format!("Metadata answers moved: {}", moves.join(", "))
                    }
                ),
                frames,
            });
        }
    }

    fn churn_findings(&self, out: &mut Vec<Finding>) {
        let mut per_second: BTreeMap<i64, usize> = BTreeMap::new();
        for t in self.opened.values() {
            *per_second.entry(t.div_euclid(1_000_000_000)).or_default() += 1;
        }
        let Some((sec, n)) = per_second.iter().max_by_key(|(s, n)| (**n, -**s)) else {
            return;
        };
        if *n > CONNECTIONS_PER_SECOND {
            out.push(Finding {
                severity: "warning",
                kind: "connection_churn",
                summary: format!(
                    "{n} connections opened within one second (over {CONNECTIONS_PER_SECOND}), at {sec} s since 1970"
                ),
                frames: Vec::new(),
            });
        }
    }

    /// New connections per second: (largest count in one second, connections in all).
    pub fn connections(&self) -> (usize, usize) {
        let mut per_second: HashMap<i64, usize> = HashMap::new();
        for t in self.opened.values() {
            *per_second.entry(t.div_euclid(1_000_000_000)).or_default() += 1;
        }
        (
            per_second.values().copied().max().unwrap_or(0),
            self.opened.len(),
        )
    }
}

fn old_clients(v: &Versions, out: &mut Vec<Finding>) {
    for ((name, version), apis) in &v.uses {
        let old: Vec<String> = apis
            .iter()
            .filter(|(_, u)| Versions::older(u))
            .map(|(k, u)| {
                let used = u.versions.iter().next_back().copied().unwrap_or(-1);
                format!(
                    "{} v{used} < v{}",
                    api_display_name(*k),
                    u.broker_max.unwrap_or(-1)
                )
            })
            .collect();
        if !old.is_empty() {
            out.push(Finding {
                severity: "note",
                kind: "old_client_version",
                summary: format!(
                    "{name} {version} uses versions older than the broker offers: {}",
                    old.join(", ")
                ),
                frames: apis
                    .values()
                    .flat_map(|u| u.frames.iter().copied())
                    .take(FRAMES)
                    .collect(),
            });
        }
    }
}

/// The findings as a table: severity, kind, what, and the frames to look at.
pub fn tables(list: &[Finding], width: Option<u16>) -> Vec<(String, String)> {
    if list.is_empty() {
        return vec![("Findings".into(), "(none)\n".into())];
    }
    let mut g = Grid::new(&["severity", "finding", "summary", "frames"]);
    for f in list {
        let frames: Vec<String> = f.frames.iter().map(u64::to_string).collect();
        g.row(vec![
            Cell::atom(f.severity),
            Cell::atom(f.kind),
            Cell::text(&f.summary),
            Cell::text(if frames.is_empty() {
                "-".into()
            } else {
                frames.join(" ")
            }),
        ]);
    }
    vec![("Findings".into(), g.render(width).to_string())]
}

/// The findings as the JSON gives them.
pub fn out(list: &[Finding]) -> Vec<FindingOut> {
    list.iter()
        .map(|f| FindingOut {
            severity: f.severity,
            kind: f.kind,
            summary: f.summary.clone(),
            frames: f.frames.clone(),
        })
        .collect()
}

/// One finding (an element of `findings` in the JSON).
#[derive(Debug, Clone, Serialize)]
pub struct FindingOut {
    /// `warning` or `note`.
    pub severity: &'static str,
    /// `metadata_storm`, `not_leader_burst`, `throttling`, `connection_churn`,
    /// `unanswered`, `retried_correlation_id`, `old_client_version`.
    pub kind: &'static str,
    pub summary: String,
    /// The frames that show it (`kdissect -Y 'frame == N' -V`).
    pub frames: Vec<u64>,
}
