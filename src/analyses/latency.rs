//! End-to-end record latency: each produced record (topic, partition, the Produce answer's
//! base offset plus its index in the request's batches) matched with the first Fetch (or
//! ShareFetch) response that delivers that offset to each consumer; the latency is that
//! response's time minus the Produce request's. A consumer's first delivery of an offset is
//! the one past the highest offset delivered to it before (offsets before the fetch offset,
//! which the consumer skips, are not delivered).
//!
//! The two answers may be captured in either order: a fast consumer's Fetch answer often
//! comes before the Produce answer that gives the offsets it delivers. A delivery no produced
//! batch explains yet is kept while a Produce request sent before it to its partition is
//! still unanswered, and matched when that answer comes.
//!
//! Bounded: produced batches, early deliveries and latencies each have a budget (see
//! [`Bounds`]); past it the oldest produced batches go (their counts folded into their
//! topic's), early deliveries are dropped, and latencies are rounded (see
//! [`super::weighted`]). What is dropped is counted in `dropped`.

use super::adapter::Event;
use super::budget::Budget;
use super::keys::{TopicIx, Tp};
use super::series::{ms, ms_text};
use super::weighted::Weighted;
use super::{Analyses, At, Held};
use crate::analyses::hash::HashMap;
use crate::text::table::{Cell, Fit, Grid};
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};

/// Records produced in one batch: offsets `first..=last`, and the Produce request.
#[derive(Debug, Clone, Copy)]
struct Produced {
    first: i64,
    last: i64,
    ts: i64,
    frame: u64,
}

/// Offsets `first..=last` delivered to a client at `ts` before any produced batch explained
/// them.
#[derive(Debug, Clone, Copy)]
struct Early {
    client: u32,
    first: i64,
    last: i64,
    ts: i64,
}

/// What end-to-end latency may keep.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Produced batches kept, all partitions together (40 bytes each).
    pub produced: usize,
    /// Deliveries waiting for their Produce answer (32 bytes each).
    pub early: usize,
    /// Delivered ranges kept, all partitions together (about 48 bytes each).
    pub ranges: usize,
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds {
            produced: 262_144,
            early: 65_536,
            ranges: 131_072,
        }
    }
}

/// Latency entries kept by each (consumer, topic) pair at least, of `Limits::latencies`:
/// past its share a pair's values are rounded (see [`Weighted`]).
pub const LEAST_LATENCIES: usize = 64;

/// Records of a topic produced and seen consumed, of the batches no longer kept.
#[derive(Debug, Default, Clone)]
struct Folded {
    produced: i64,
    consumed: i64,
    /// The lowest frames of Produce requests with records never consumed (10 at most).
    frames: Vec<u64>,
}

/// Produce frames listed per topic.
const FRAMES: usize = 10;

#[derive(Debug)]
pub struct EndToEnd {
    pub bounds: Bounds,
    /// Latency values kept, all rows together.
    latency_cap: usize,
    /// The latency entries all pairs keep together.
    budget: Budget,
    /// Delivered ranges kept, all partitions together.
    ranges: usize,
    /// Produced batches per partition, by offset.
    produced: HashMap<Tp, VecDeque<Produced>>,
    /// Partitions in the order batches were added, to let the oldest go first.
    order: VecDeque<Tp>,
    kept: usize,
    /// Produce requests sent and not yet answered, per partition: their times.
    in_flight: HashMap<Tp, Vec<i64>>,
    early: HashMap<Tp, Vec<Early>>,
    early_kept: usize,
    /// The next offset each consumer has not yet been delivered, per partition.
    next: HashMap<(u32, Tp), i64>,
    /// Offsets delivered to anyone, as disjoint ranges `first -> last`.
    delivered: HashMap<Tp, BTreeMap<i64, i64>>,
    folded: HashMap<TopicIx, Folded>,
    /// Latencies by consumer and topic.
    latencies: HashMap<(u32, TopicIx), Weighted>,
    pub dropped: u64,
}

impl Default for EndToEnd {
    fn default() -> EndToEnd {
        EndToEnd::new(&super::Limits::new(96 << 20))
    }
}

impl EndToEnd {
    /// End to end within the bounds `limits` gives.
    pub fn new(limits: &super::Limits) -> EndToEnd {
        EndToEnd {
            bounds: Bounds {
                produced: limits.produced(),
                early: limits.early(),
                ranges: limits.ranges(),
            },
            latency_cap: limits.latencies(),
            budget: Budget::new(limits.latencies(), LEAST_LATENCIES),
            ranges: 0,
            produced: HashMap::default(),
            order: VecDeque::new(),
            kept: 0,
            in_flight: HashMap::default(),
            early: HashMap::default(),
            early_kept: 0,
            next: HashMap::default(),
            delivered: HashMap::default(),
            folded: HashMap::default(),
            latencies: HashMap::default(),
            dropped: 0,
        }
    }
}

/// Adds `first..=last` to disjoint ranges, merging those it touches; past `max` ranges the
/// lowest goes (counted).
fn add_range(set: &mut BTreeMap<i64, i64>, first: i64, last: i64, max: usize) -> bool {
    let (mut a, mut z) = (first, last);
    if let Some((&s, &e)) = set.range(..=a).next_back() {
        if e.saturating_add(1) >= a {
            a = s;
            z = z.max(e);
        }
    }
    let touching: Vec<i64> = set
        .range(a..=z.saturating_add(1))
        .map(|(&s, _)| s)
        .collect();
    for s in touching {
        if let Some(e) = set.remove(&s) {
            z = z.max(e);
        }
    }
    set.insert(a, z);
    if set.len() > max {
        set.pop_first();
        return false;
    }
    true
}

/// Offsets of `first..=last` inside the ranges.
fn covered(set: &BTreeMap<i64, i64>, first: i64, last: i64) -> i64 {
    let start = set.range(..=first).next_back().map_or(first, |(&s, _)| s);
    set.range(start..=last)
        .map(|(&a, &z)| (z.min(last) - a.max(first) + 1).max(0))
        .sum()
}

impl EndToEnd {
    /// A Produce request goes out: its partitions wait for its answer.
    pub fn request(&mut self, parts: &[(Tp, i64)], ts: i64) {
        for (tp, _) in parts {
            self.in_flight.entry(*tp).or_default().push(ts);
        }
    }

    /// A held Produce request is done with (answered, dropped or never answered).
    pub fn forget(&mut self, h: &Held) {
        if h.event.api_key != 0 {
            return;
        }
        for tp in h.parts.keys() {
            let Some(list) = self.in_flight.get_mut(tp) else {
                continue;
            };
            if let Some(i) = list.iter().position(|t| *t == h.event.ts) {
                list.swap_remove(i);
            }
            // An early delivery can be explained only by a Produce request sent before it.
            let oldest = list.iter().copied().min();
            if list.is_empty() {
                self.in_flight.remove(tp);
            }
            if let Some(e) = self.early.get_mut(tp) {
                let before = e.len();
                e.retain(|d| oldest.is_some_and(|o| d.ts >= o));
                self.early_kept -= before - e.len();
                if e.is_empty() {
                    self.early.remove(tp);
                }
            }
        }
    }

    /// `parts`: the response's partitions, each with its topic and partition resolved.
    pub fn response(&mut self, req: &Held, e: &Event, parts: &[At]) {
        match e.api_key {
            0 => self.produced(req, e, parts),
            1 if !req.event.replica => self.fetched(req, e, parts),
            78 => self.share_fetched(req, e, parts),
            _ => {}
        }
    }

    fn produced(&mut self, req: &Held, e: &Event, parts: &[At]) {
        for at in parts {
            let (tp, p) = (at.tp, &e.parts[at.i]);
            let (Some(base), 0) = (p.base_offset.filter(|b| *b >= 0), p.error) else {
                continue;
            };
            let Some(n) = req.get(at) else { continue };
            if n <= 0 {
                continue;
            }
            let pr = Produced {
                first: base,
                last: base + n - 1,
                ts: req.event.ts,
                frame: req.event.frame,
            };
            self.match_early(tp, &pr);
            self.keep(tp, pr);
        }
    }

    /// Deliveries captured before this batch's Produce answer.
    fn match_early(&mut self, tp: Tp, pr: &Produced) {
        let Some(list) = self.early.get(&tp) else {
            return;
        };
        let hits: Vec<(u32, i64, i64)> = list
            .iter()
            .filter(|d| d.last >= pr.first && d.first <= pr.last && d.ts >= pr.ts)
            .map(|d| {
                (
                    d.client,
                    d.last.min(pr.last) - d.first.max(pr.first) + 1,
                    d.ts,
                )
            })
            .collect();
        for (client, n, ts) in hits {
            self.latency(client, tp.0, ts - pr.ts, n);
        }
    }

    fn keep(&mut self, tp: Tp, pr: Produced) {
        if self.kept >= self.bounds.produced {
            self.let_oldest_go();
        }
        let list = self.produced.entry(tp).or_default();
        // Answers come in offset order but for concurrent producers: insert in place.
        let at = list.partition_point(|x| x.first < pr.first);
        list.insert(at, pr);
        self.order.push_back(tp);
        self.kept += 1;
    }

    /// Lets the oldest produced batch go, its counts folded into its topic's.
    fn let_oldest_go(&mut self) {
        while let Some(tp) = self.order.pop_front() {
            let Some(list) = self.produced.get_mut(&tp) else {
                continue;
            };
            let Some(pr) = list.pop_front() else { continue };
            if list.is_empty() {
                self.produced.remove(&tp);
            }
            self.kept -= 1;
            self.dropped += 1;
            let got = self
                .delivered
                .get(&tp)
                .map_or(0, |d| covered(d, pr.first, pr.last));
            fold(self.folded.entry(tp.0).or_default(), &pr, got);
            return;
        }
    }

    fn fetched(&mut self, req: &Held, e: &Event, parts: &[At]) {
        let Some(client) = req.client else { return };
        for at in parts {
            let (tp, p) = (at.tp, &e.parts[at.i]);
            if p.error != 0 {
                continue;
            }
            let from = req.get(at).unwrap_or(0);
            for b in p.batches.iter().filter(|b| b.records > 0) {
                let first = b.base_offset.max(from);
                let last = b.base_offset + b.records - 1;
                self.deliver(client, tp, first, last, e.ts);
            }
        }
    }

    /// ShareFetch delivers the records it acquires for the member.
    fn share_fetched(&mut self, req: &Held, e: &Event, parts: &[At]) {
        let Some(client) = req.client else { return };
        for at in parts {
            let (tp, p) = (at.tp, &e.parts[at.i]);
            if p.error != 0 {
                continue;
            }
            for &(first, last) in &p.ranges {
                self.deliver(client, tp, first, last, e.ts);
            }
        }
    }

    /// Offsets `first..=last` delivered to `client` at `ts`: those it had not been delivered
    /// yet get their latency, now or when their Produce answer comes.
    fn deliver(&mut self, client: u32, tp: Tp, first: i64, last: i64, ts: i64) {
        if last < first {
            return;
        }
        let key = (client, tp);
        if self.next.len() >= super::MAX_KEYS && !self.next.contains_key(&key) {
            self.dropped += 1;
            return;
        }
        let next = self.next.entry(key).or_insert(i64::MIN);
        let first = first.max(*next);
        if last < first {
            return;
        }
        *next = last + 1;
        let room = self.delivered.len() < super::MAX_KEYS || self.delivered.contains_key(&tp);
        if room {
            let set = self.delivered.entry(tp).or_default();
            let before = set.len();
            // Past the ranges all partitions keep, this partition's lowest goes.
            let max = match self.ranges >= self.bounds.ranges {
                true => before.max(1),
                false => usize::MAX,
            };
            if !add_range(set, first, last, max) {
                self.dropped += 1;
            }
            self.ranges = (self.ranges + set.len()).saturating_sub(before);
        }
        let mut explained = 0;
        let hits: Vec<(i64, i64)> = match self.produced.get(&tp) {
            Some(list) => {
                let start = list.partition_point(|x| x.last < first);
                list.range(start..)
                    .take_while(|x| x.first <= last)
                    .map(|x| (x.last.min(last) - x.first.max(first) + 1, x.ts))
                    .collect()
            }
            None => Vec::new(),
        };
        for (n, at) in hits {
            explained += n;
            if ts >= at {
                self.latency(client, tp.0, ts - at, n);
            }
        }
        if explained < last - first + 1 && self.in_flight.contains_key(&tp) {
            self.wait(
                tp,
                Early {
                    client,
                    first,
                    last,
                    ts,
                },
            );
        }
    }

    /// Keeps a delivery until the Produce answer in flight for its partition comes.
    fn wait(&mut self, tp: Tp, d: Early) {
        if self.early_kept >= self.bounds.early {
            self.dropped += 1;
            return;
        }
        self.early.entry(tp).or_default().push(d);
        self.early_kept += 1;
    }

    fn latency(&mut self, client: u32, topic: TopicIx, ns: i64, n: i64) {
        let key = (client, topic);
        if self.latencies.len() >= super::MAX_KEYS && !self.latencies.contains_key(&key) {
            self.dropped += 1;
            return;
        }
        let n = n.max(0) as u64;
        self.budget.add(&mut self.latencies, key, |w| w.push(ns, n));
    }

    /// Rows kept under `from` (a topic id) move to `to` (its name, now learnt).
    pub fn join(&mut self, from: TopicIx, to: TopicIx) {
        let moved = |k: &Tp| k.0 == from;
        for (tp, list) in take_where(&mut self.produced, moved) {
            let into = self.produced.entry((to, tp.1)).or_default();
            into.extend(list);
            into.make_contiguous().sort_by_key(|x| x.first);
        }
        for t in self.order.iter_mut().filter(|t| t.0 == from) {
            t.0 = to;
        }
        for (tp, list) in take_where(&mut self.in_flight, moved) {
            self.in_flight.entry((to, tp.1)).or_default().extend(list);
        }
        for (tp, list) in take_where(&mut self.early, moved) {
            self.early.entry((to, tp.1)).or_default().extend(list);
        }
        for ((c, tp), n) in take_where(&mut self.next, |k: &(u32, Tp)| k.1 .0 == from) {
            let slot = self.next.entry((c, (to, tp.1))).or_insert(n);
            *slot = (*slot).max(n);
        }
        for (tp, set) in take_where(&mut self.delivered, moved) {
            let into = self.delivered.entry((to, tp.1)).or_default();
            for (a, z) in set {
                add_range(into, a, z, usize::MAX);
            }
        }
        self.ranges = self.delivered.values().map(BTreeMap::len).sum();
    }

    /// Latencies by (topic, group or client), topics under the names known at the end.
    fn resolved(&self, a: &Analyses) -> BTreeMap<(String, String), Weighted> {
        let mut out: BTreeMap<(String, String), Weighted> = BTreeMap::new();
        let cap = self.latency_cap;
        for ((who, topic), l) in &self.latencies {
            let key = (a.topic_text(*topic), a.owner_of(*who));
            out.entry(key).or_default().absorb(l, cap);
        }
        out
    }

    /// Per topic: records produced, those delivered to some consumer, and the first produce
    /// requests whose records were never delivered.
    fn unconsumed(&self, a: &Analyses) -> BTreeMap<String, Folded> {
        let mut out: BTreeMap<String, Folded> = BTreeMap::new();
        for (topic, f) in &self.folded {
            let row = out.entry(a.topic_text(*topic)).or_default();
            row.produced += f.produced;
            row.consumed += f.consumed;
            row.frames.extend(&f.frames);
        }
        for (tp, list) in &self.produced {
            let got = self.delivered.get(tp);
            let row = out.entry(a.topic_text(tp.0)).or_default();
            for pr in list {
                let c = got.map_or(0, |d| covered(d, pr.first, pr.last));
                fold(row, pr, c);
            }
        }
        for r in out.values_mut() {
            r.frames.sort_unstable();
            r.frames.dedup();
            r.frames.truncate(FRAMES);
        }
        out
    }

    pub fn tables(&self, a: &Analyses, fit: Fit) -> Vec<(String, String)> {
        let lat = self.resolved(a);
        let un = self.unconsumed(a);
        if lat.is_empty() && un.is_empty() {
            return Vec::new();
        }
        let mut g = Grid::new(&[
            "topic",
            "group or client",
            "records",
            "p50",
            "p95",
            "p99",
            "max",
        ]);
        let lat: Vec<(&(String, String), &Weighted)> = lat.iter().collect();
        let shown = super::lag::top(&lat, |r| r.1.count as i64, fit.rows());
        for (i, ((topic, owner), l)) in lat.iter().enumerate() {
            if !shown[i] {
                continue;
            }
            let text = |x: Option<i64>| x.map_or("-".into(), ms_text);
            let p = l.percentiles(&[50.0, 95.0, 99.0]);
            g.row(vec![
                Cell::atom(topic),
                Cell::atom(owner),
                Cell::num(l.count),
                Cell::num(text(p[0])),
                Cell::num(text(p[1])),
                Cell::num(text(p[2])),
                Cell::num(text(l.max)),
            ]);
        }
        if lat.len() > fit.rows() {
            g.note(format!(
                "and {} more with fewer records (all in --json)",
                lat.len() - fit.rows()
            ));
        }
        vec![
            (
                "End-to-end record latency (Produce request to the Fetch response delivering the record)"
                    .into(),
                g.text(fit.width),
            ),
            (
                "Records produced and never seen consumed".into(),
                Self::unconsumed_grid(&un, fit.rows()).text(fit.width),
            ),
        ]
    }

    /// The records never consumed, by topic: the topics with most of them.
    fn unconsumed_grid(un: &BTreeMap<String, Folded>, rows: usize) -> Grid {
        let mut u = Grid::new(&[
            "topic",
            "produced",
            "consumed",
            "never consumed",
            "produce frames",
        ]);
        let un: Vec<(&String, &Folded)> = un.iter().collect();
        let shown = super::lag::top(&un, |r| r.1.produced - r.1.consumed, rows);
        for (i, (topic, f)) in un.iter().enumerate() {
            if !shown[i] {
                continue;
            }
            // The first frame to look at, and how many more the JSON lists.
            let frames = match f.frames.split_first() {
                None => "-".to_string(),
                Some((first, [])) => first.to_string(),
                Some((first, rest)) => format!("{first} +{}", rest.len()),
            };
            u.row(vec![
                Cell::atom(*topic),
                Cell::num(f.produced),
                Cell::num(f.consumed),
                Cell::num(f.produced - f.consumed),
                Cell::text(frames),
            ]);
        }
        if un.len() > rows {
            u.note(format!(
                "and {} more topics with fewer records never consumed (all in --json)",
                un.len() - rows
            ));
        }
        u
    }

    /// Latencies by topic and owner, and the records never consumed by topic.
    pub fn out(&self, a: &Analyses) -> EndToEndOut {
        let latency = self
            .resolved(a)
            .into_iter()
            .map(|((topic, owner), l)| {
                let p = l.percentiles(&[50.0, 95.0, 99.0]);
                RecordLatencyOut {
                    topic,
                    owner,
                    records: l.count as usize,
                    latency_ms: LatencyMs {
                        p50: p[0].map(ms),
                        p95: p[1].map(ms),
                        p99: p[2].map(ms),
                        max: l.max.map(ms),
                    },
                    rounded: l.bits > 0,
                }
            })
            .collect();
        let unconsumed = self
            .unconsumed(a)
            .into_iter()
            .map(|(topic, f)| UnconsumedOut {
                topic,
                produced: f.produced,
                consumed: f.consumed,
                never_consumed: f.produced - f.consumed,
                produce_frames: f.frames,
            })
            .collect();
        EndToEndOut {
            latency,
            unconsumed,
            dropped: self.dropped,
        }
    }
}

/// Counts a produced batch, `got` of its records seen delivered, into a topic's row.
fn fold(row: &mut Folded, pr: &Produced, got: i64) {
    let n = pr.last - pr.first + 1;
    row.produced += n;
    row.consumed += got;
    if got < n {
        row.frames.push(pr.frame);
        if row.frames.len() > 4 * FRAMES {
            row.frames.sort_unstable();
            row.frames.dedup();
            row.frames.truncate(FRAMES);
        }
    }
}

/// Removes and returns the entries whose key matches.
fn take_where<K: Clone + Eq + std::hash::Hash, V>(
    m: &mut HashMap<K, V>,
    is: impl Fn(&K) -> bool,
) -> Vec<(K, V)> {
    let keys: Vec<K> = m.keys().filter(|k| is(k)).cloned().collect();
    keys.into_iter()
        .filter_map(|k| m.remove(&k).map(|v| (k, v)))
        .collect()
}

/// End-to-end record latency (`end_to_end` in the JSON).
#[derive(Debug, Clone, Serialize)]
pub struct EndToEndOut {
    /// By topic, then group (or client).
    pub latency: Vec<RecordLatencyOut>,
    /// By topic.
    pub unconsumed: Vec<UnconsumedOut>,
    /// Produced batches, deliveries and latencies past the bounds.
    pub dropped: u64,
}

/// The records of one topic delivered to one group (or client), and their latencies.
#[derive(Debug, Clone, Serialize)]
pub struct RecordLatencyOut {
    pub topic: String,
    pub owner: String,
    /// Records matched (produced and delivered, both captured).
    pub records: usize,
    pub latency_ms: LatencyMs,
    /// The percentiles come from latencies rounded to fewer significant bits (past the
    /// bound of latencies kept): within 1 % at the first rounding.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rounded: bool,
}

/// Nearest-rank percentiles and the largest, in ms; `None` without records.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencyMs {
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    pub max: Option<f64>,
}

/// One topic's records produced and those seen consumed.
#[derive(Debug, Clone, Serialize)]
pub struct UnconsumedOut {
    pub topic: String,
    pub produced: i64,
    /// Delivered to some consumer.
    pub consumed: i64,
    pub never_consumed: i64,
    /// The lowest Produce request frames (10 at most) holding records never consumed.
    pub produce_frames: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_and_count_what_they_cover() {
        let mut l = BTreeMap::new();
        add_range(&mut l, 5, 9, 10);
        add_range(&mut l, 0, 4, 10);
        add_range(&mut l, 20, 21, 10);
        add_range(&mut l, 15, 16, 10);
        add_range(&mut l, 14, 22, 10);
        assert_eq!(l.into_iter().collect::<Vec<_>>(), vec![(0, 9), (14, 22)]);
        let mut l = BTreeMap::new();
        add_range(&mut l, 5, 9, 10);
        add_range(&mut l, 20, 21, 10);
        assert_eq!(covered(&l, 8, 20), 3);
        assert_eq!(covered(&l, 0, 100), 7);
    }
}
