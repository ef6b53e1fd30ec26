//! Findings, each with the frames that show it, as an expert-info list: Metadata storms,
//! NOT_LEADER_OR_FOLLOWER bursts with the Metadata answers that moved the leader, throttling
//! by client and API, connections opened per second, requests never answered, retried
//! correlation ids, and clients on versions older than the broker offers.

use super::adapter::Event;
use super::series::at_text;
use super::versions::Versions;
use super::{Analyses, ClientKey, MAX_KEYS, MAX_SAMPLES};
use crate::analyses::hash::{HashMap, HashSet};
use crate::kafka::message::api_display_name;
use crate::kafka::stream::Notice;
use crate::text::table::{Cell, Fit, Grid};
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};

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
/// APIs whose answer the broker may hold back up to the request's MaxWaitMs.
const LONG_POLLS: [i16; 2] = [1, 78];
/// A request sent less than this (plus its long poll's MaxWaitMs) before the capture's last
/// message was still in flight when the capture stopped: not a request left unanswered.
pub const IN_FLIGHT_NS: i64 = 1_000_000_000;

/// How many, and the first frames of them.
type Counted = (u64, Vec<u64>);

/// One finding.
#[derive(Debug, Clone)]
pub struct Finding {
    /// `warning`, `note` or `info`.
    pub severity: &'static str,
    /// `metadata_storm`, `not_leader_burst`, `throttling`, `connection_churn`,
    /// `unanswered`, `in_flight_at_end`, `retried_correlation_id`, `old_client_version`.
    pub kind: &'static str,
    pub summary: String,
    pub frames: Vec<u64>,
    /// Identical findings (same severity, kind and summary) folded into this one.
    pub count: u64,
}

/// Correlation ids remembered per stream: a request that reuses one of them is retried. A
/// client numbers its requests in order, so a reuse comes among its latest requests; a
/// window keeps the memory a long connection takes constant.
const RECENT_IDS: usize = 64;

/// Requests sent within a minute that a storm's window keeps at most; past it the minute
/// is a storm whatever the exact count, which then stays at this.
const STORM_WINDOW: usize = 4096;

/// One client's Metadata requests for every topic: those of the last minute, and its
/// busiest minute so far (the most requests within 60 s of one another), found as they come.
#[derive(Debug, Default)]
struct Storm {
    window: VecDeque<(i64, u64)>,
    best: usize,
    best_at: i64,
    best_frames: Vec<u64>,
}

impl Storm {
    fn add(&mut self, ts: i64, frame: u64) {
        while self
            .window
            .front()
            .is_some_and(|f| ts - f.0 >= 60_000_000_000)
        {
            self.window.pop_front();
        }
        if self.window.len() >= STORM_WINDOW {
            self.window.pop_front();
        }
        self.window.push_back((ts, frame));
        if self.window.len() > self.best {
            self.best = self.window.len();
            self.best_at = self.window.front().map_or(ts, |f| f.0);
            if self.best_frames.len() < FRAMES
                || self.best_frames.first() != self.window.front().map(|f| &f.1)
            {
                self.best_frames = self.window.iter().take(FRAMES).map(|f| f.1).collect();
            }
        }
    }
}

#[derive(Debug, Default)]
pub struct Findings {
    storms: HashMap<ClientKey, Storm>,
    /// (ts, frame, partitions with the error) of each NOT_LEADER_OR_FOLLOWER answer.
    not_leader: Vec<(i64, u64, usize)>,
    leaders: HashMap<(crate::kafka::meaning::facts::Name, i32), i32>,
    /// (ts, frame, topic, partition, from, to) of each leader change a Metadata answer told.
    moves: Vec<(i64, u64, String, i32, i32, i32)>,
    /// (client_id, API) → (count, largest ms, frames).
    throttled: BTreeMap<(String, i16), (u64, i64, Vec<u64>)>,
    /// The first message time of each stream.
    opened: HashMap<u32, i64>,
    /// Streams picked up mid-stream: their opening was not captured.
    picked_up: HashSet<u32>,
    unanswered: Vec<u64>,
    unanswered_total: u64,
    /// Unanswered requests, judged once the capture's end is known: (frame, sent, may wait).
    unjudged: Vec<(u64, i64, i64)>,
    /// MaxWaitMs of the long polls (Fetch, ShareFetch) waiting for their answer, by (stream,
    /// correlation id).
    long_polls: HashMap<(u32, i32), i64>,
    last_ts: i64,
    /// The last correlation ids of each stream ([`RECENT_IDS`]); retried ones with their
    /// frames.
    corr: HashMap<u32, VecDeque<i32>>,
    retried: Vec<(u32, i32, u64)>,
    retried_total: u64,
}

impl Findings {
    pub fn request(&mut self, e: &Event) {
        self.opened_at(e);
        self.last_ts = self.last_ts.max(e.ts);
        if let (Some(w), true) = (e.max_wait_ms, LONG_POLLS.contains(&e.api_key)) {
            if self.long_polls.len() < MAX_SAMPLES {
                self.long_polls
                    .insert((e.stream, e.correlation_id), w.max(0));
            }
        }
        if e.all_topics {
            let c = ClientKey::of(e);
            if self.storms.len() < MAX_KEYS || self.storms.contains_key(&c) {
                self.storms.entry(c).or_default().add(e.ts, e.frame);
            }
        }
        if self.corr.len() < MAX_KEYS || self.corr.contains_key(&e.stream) {
            let ids = self.corr.entry(e.stream).or_default();
            if ids.contains(&e.correlation_id) {
                self.retried_total += 1;
                if self.retried.len() < FRAMES {
                    self.retried.push((e.stream, e.correlation_id, e.frame));
                }
            } else {
                if ids.len() >= RECENT_IDS {
                    ids.pop_front();
                }
                ids.push_back(e.correlation_id);
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
        self.last_ts = self.last_ts.max(e.ts);
        self.long_polls.remove(&(e.stream, e.correlation_id));
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
                        .push((e.ts, e.frame, p.topic.to_string(), p.partition, from, to));
                }
                _ => {}
            }
        }
    }

    /// A request without an answer. Those sent within `IN_FLIGHT_NS` (and their long
    /// poll's wait) of the capture's end were in flight when it stopped; the end is known
    /// when the list comes (at the end), or judged later for those told early.
    pub fn notice(&mut self, n: &Notice) {
        if let Notice::PickedUp { stream } = n {
            if self.picked_up.len() < MAX_SAMPLES {
                self.picked_up.insert(*stream);
            }
        }
        let Notice::Unanswered {
            stream, request, ..
        } = n
        else {
            return;
        };
        let wait = self
            .long_polls
            .remove(&(*stream, request.correlation_id))
            .unwrap_or(0);
        if self.unjudged.len() < MAX_SAMPLES {
            self.unjudged
                .push((request.frame, request.ts_nanos, wait * 1_000_000));
        } else {
            self.unanswered_total += 1;
            if self.unanswered.len() < FRAMES {
                self.unanswered.push(request.frame);
            }
        }
    }

    /// (unanswered, in flight at the end, long polls among those): counts and frames.
    fn judged(&self) -> (Counted, Counted, u64) {
        let (mut late, mut late_frames) = (self.unanswered_total, self.unanswered.clone());
        let (mut flying, mut flying_frames, mut polls) = (0, Vec::new(), 0);
        for &(frame, sent, wait) in &self.unjudged {
            if self.last_ts - sent <= IN_FLIGHT_NS + wait {
                flying += 1;
                polls += u64::from(wait > 0);
                if flying_frames.len() < FRAMES {
                    flying_frames.push(frame);
                }
            } else {
                late += 1;
                if late_frames.len() < FRAMES {
                    late_frames.push(frame);
                }
            }
        }
        ((late, late_frames), (flying, flying_frames), polls)
    }

    /// Every finding, in the order the kinds are listed above.
    pub fn list(&self, a: &Analyses) -> Vec<Finding> {
        let mut out = Vec::new();
        self.storm_findings(a, &mut out);
        self.burst_findings(a.buckets().start, &mut out);
        for ((id, key), (n, max, frames)) in &self.throttled {
            out.push(Finding::new(
                "warning",
                "throttling",
                format!(
                    "{} throttled on {} {}, up to {max} ms",
                    client_text(id, None),
                    api_display_name(*key),
                    plural(*n, "time")
                ),
                frames.clone(),
            ));
        }
        self.churn_findings(a, &mut out);
        let ((late, late_frames), (flying, flying_frames), polls) = self.judged();
        if late > 0 {
            out.push(Finding::new(
                "warning",
                "unanswered",
                format!(
                    "{} never answered (sent more than {} s before the capture's end, and its long poll's wait)",
                    plural(late, "request"),
                    IN_FLIGHT_NS / 1_000_000_000
                ),
                late_frames,
            ));
        }
        if flying > 0 {
            out.push(Finding::new(
                "info",
                "in_flight_at_end",
                format!(
                    "{} in flight when the capture stopped ({} of them long polls: Fetch or ShareFetch waiting up to their MaxWaitMs)",
                    plural(flying, "request"),
                    polls
                ),
                flying_frames,
            ));
        }
        if self.retried_total > 0 {
            out.push(Finding::new(
                "note",
                "retried_correlation_id",
                format!(
                    "{} {} a correlation id already sent on their connection",
                    plural(self.retried_total, "request"),
                    if self.retried_total == 1 {
                        "reuses"
                    } else {
                        "reuse"
                    }
                ),
                self.retried.iter().map(|r| r.2).collect(),
            ));
        }
        old_clients(&a.versions, &mut out);
        fold(out)
    }

    fn storm_findings(&self, a: &Analyses, out: &mut Vec<Finding>) {
        let sorted: BTreeMap<&ClientKey, &Storm> = self.storms.iter().collect();
        for (c, s) in sorted {
            let best = s.best;
            if best > STORM_PER_MINUTE {
                let group = a.groups_of.get(c);
                out.push(Finding::new(
                    "warning",
                    "metadata_storm",
                    format!(
                        "{}{} sent {best} Metadata requests for every topic within a minute (over {STORM_PER_MINUTE}), from {}",
                        client_text(&c.client_id, c.ip),
                        group.map(|g| format!(" (group {g:?})")).unwrap_or_default(),
                        at_text(s.best_at, a.buckets().start),
                    ),
                    s.best_frames.clone(),
                ));
            }
        }
    }

    fn burst_findings(&self, begin: i64, out: &mut Vec<Finding>) {
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
            out.push(Finding::new(
                "warning",
                "not_leader_burst",
                format!(
                    "{} in {} over {:.3} s from {}; {}",
                    plural(errors as u64, "NOT_LEADER_OR_FOLLOWER error"),
                    plural(b.len() as u64, "response"),
                    (end - start) as f64 / 1e9,
                    at_text(start, begin),
                    if moves.is_empty() {
                        "no Metadata answer moved a leader".to_string()
                    } else {
                        format!("Metadata answers moved: {}", moves.join(", "))
                    }
                ),
                frames,
            ));
        }
    }

    fn churn_findings(&self, a: &Analyses, out: &mut Vec<Finding>) {
        // Seconds of the capture clock: counted from the capture's first message.
        let start = a.buckets().start;
        let mut per_second: BTreeMap<i64, usize> = BTreeMap::new();
        // A connection picked up mid-stream was opened before the capture began.
        let opened = self
            .opened
            .iter()
            .filter(|(s, _)| !self.picked_up.contains(s));
        for (_, t) in opened {
            *per_second
                .entry((t - start).div_euclid(1_000_000_000))
                .or_default() += 1;
        }
        let Some((sec, n)) = per_second.iter().max_by_key(|(s, n)| (**n, -**s)) else {
            return;
        };
        if *n > CONNECTIONS_PER_SECOND {
            out.push(Finding::new(
                "warning",
                "connection_churn",
                format!(
                    "{n} connections opened within one second (over {CONNECTIONS_PER_SECOND}), from {}",
                    at_text(start + sec * 1_000_000_000, start)
                ),
                Vec::new(),
            ));
        }
    }

    /// New connections per second: (largest count in one second, connections in all).
    pub fn connections(&self) -> (usize, usize) {
        let mut per_second: HashMap<i64, usize> = HashMap::default();
        for t in self.opened.values() {
            *per_second.entry(t.div_euclid(1_000_000_000)).or_default() += 1;
        }
        (
            per_second.values().copied().max().unwrap_or(0),
            self.opened.len(),
        )
    }
}

impl Finding {
    fn new(
        severity: &'static str,
        kind: &'static str,
        summary: String,
        frames: Vec<u64>,
    ) -> Finding {
        Finding {
            severity,
            kind,
            summary,
            frames,
            count: 1,
        }
    }
}

/// `1 request`, `2 requests`.
pub fn plural(n: u64, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// A client as a finding names it: its client id, quoted (`(no client id)` when it sent
/// none), and its address when known.
fn client_text(client_id: &str, ip: Option<std::net::IpAddr>) -> String {
    let id = if client_id.is_empty() {
        "a client with no client id".to_string()
    } else {
        format!("client {client_id:?}")
    };
    match ip {
        Some(ip) => format!("{id} at {ip}"),
        None => id,
    }
}

/// Identical findings (severity, kind, summary) as one, with their count and frames.
fn fold(list: Vec<Finding>) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    let mut seen: HashMap<(&'static str, &'static str, String), usize> = HashMap::default();
    for f in list {
        let key = (f.severity, f.kind, f.summary.clone());
        match seen.get(&key) {
            Some(&i) => {
                let g = &mut out[i];
                g.count += f.count;
                let room = FRAMES.saturating_sub(g.frames.len());
                g.frames.extend(f.frames.into_iter().take(room));
            }
            None => {
                seen.insert(key, out.len());
                out.push(f);
            }
        }
    }
    out
}

/// POSIX shell quoting: the text in single quotes, each single quote written `'\''`.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The command that shows `frames` of `capture` (whatever its path holds, quoted).
pub fn show_command(frames: &[u64], capture: &str) -> String {
    let filter: Vec<String> = frames.iter().map(|f| format!("frame == {f}")).collect();
    format!(
        "kdissect -Y {} -V {}",
        shell_quote(&filter.join(" || ")),
        shell_quote(capture)
    )
}

/// Clients using versions older than the broker offers where their software would send
/// newer ones (by design is not a finding): one finding per software and set of old uses.
fn old_clients(v: &Versions, out: &mut Vec<Finding>) {
    for (software, clients, what) in v.old_uses() {
        let refs: Vec<&super::versions::Client> = clients.iter().collect();
        out.push(Finding::new(
            "note",
            "old_client_version",
            format!(
                "{software} ({}) uses versions older than the broker offers: {what}",
                super::versions::clients_text(&refs)
            ),
            Vec::new(),
        ));
    }
}

/// The findings as a table: severity, kind, what, and the frames to look at. Findings of
/// the same kind and severity (a NOT_LEADER burst at every leader move of an hour) take one
/// row, the first of them told in full and the others counted: each is in `--json`. The
/// kinds with the most severe findings first; past `fit.rows()` rows the rest are counted.
pub fn tables(list: &[Finding], fit: Fit) -> Vec<(String, String)> {
    if list.is_empty() {
        return vec![("Findings".into(), "(none)\n".into())];
    }
    let mut kinds: Vec<(&Finding, u64)> = Vec::new();
    let mut at: HashMap<(&str, &str), usize> = HashMap::default();
    for f in list {
        match at.get(&(f.severity, f.kind)) {
            Some(&i) => kinds[i].1 += 1,
            None => {
                at.insert((f.severity, f.kind), kinds.len());
                kinds.push((f, 0));
            }
        }
    }
    let mut g = Grid::new(&["severity", "finding", "summary", "frames"]);
    for (f, others) in kinds.iter().take(fit.rows()) {
        let frames: Vec<String> = f.frames.iter().map(u64::to_string).collect();
        let mut summary = if f.count > 1 {
            format!("{} (×{}, identical)", f.summary, f.count)
        } else {
            f.summary.clone()
        };
        if *others > 0 {
            summary = format!(
                "{} more like it (all in --json); the first: {summary}",
                others
            );
        }
        g.row(vec![
            Cell::atom(f.severity),
            Cell::atom(f.kind),
            Cell::text(summary),
            Cell::text(if frames.is_empty() {
                "-".into()
            } else {
                frames.join(" ")
            }),
        ]);
    }
    if kinds.len() > fit.rows() {
        g.note(format!(
            "and {} more kinds of findings (all in --json)",
            kinds.len() - fit.rows()
        ));
    }
    vec![("Findings".into(), g.text(fit.width))]
}

/// The findings as the JSON gives them.
pub fn out(list: &[Finding]) -> Vec<FindingOut> {
    list.iter()
        .map(|f| FindingOut {
            severity: f.severity,
            kind: f.kind,
            summary: f.summary.clone(),
            frames: f.frames.clone(),
            count: f.count,
        })
        .collect()
}

/// One finding (an element of `findings` in the JSON).
#[derive(Debug, Clone, Serialize)]
pub struct FindingOut {
    /// `warning`, `note` or `info`.
    pub severity: &'static str,
    /// `metadata_storm`, `not_leader_burst`, `throttling`, `connection_churn`,
    /// `unanswered`, `in_flight_at_end`, `retried_correlation_id`, `old_client_version`.
    pub kind: &'static str,
    pub summary: String,
    /// The frames that show it ([`show_command`]).
    pub frames: Vec<u64>,
    /// Identical findings folded into this one.
    pub count: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_path_is_quoted_for_the_shell_whatever_it_holds() {
        assert_eq!(
            show_command(&[7], "cap$(touch x).pcap"),
            "kdissect -Y 'frame == 7' -V 'cap$(touch x).pcap'"
        );
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(
            show_command(&[1, 2], "a b"),
            "kdissect -Y 'frame == 1 || frame == 2' -V 'a b'"
        );
    }

    #[test]
    fn counts_take_the_right_plural() {
        assert_eq!(plural(1, "request"), "1 request");
        assert_eq!(plural(0, "request"), "0 requests");
        assert_eq!(plural(14, "request"), "14 requests");
        assert_eq!(client_text("", None), "a client with no client id");
        assert_eq!(
            client_text("app", "10.0.0.1".parse().ok()),
            "client \"app\" at 10.0.0.1"
        );
    }

    #[test]
    fn identical_findings_fold_into_one_with_their_count() {
        let f = |s: &str, fr: u64| Finding::new("warning", "metadata_storm", s.into(), vec![fr]);
        let out = fold(vec![f("a", 1), f("b", 2), f("a", 3), f("a", 4)]);
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].count, out[0].frames.clone()), (3, vec![1, 3, 4]));
        assert_eq!(out[1].count, 1);
    }
}
