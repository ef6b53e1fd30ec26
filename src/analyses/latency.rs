//! End-to-end record latency: each produced record (topic, partition, the Produce answer's
//! base offset plus its index in the request's batches) matched with the first Fetch (or
//! ShareFetch) response that delivers that offset to each consumer; the latency is that
//! response's time minus the Produce request's. A consumer's first delivery of an offset is
//! the one past the highest offset delivered to it before (offsets before the fetch offset,
//! which the consumer skips, are not delivered).

use super::adapter::Event;
use super::series::{ms, ms_text, percentile};
use super::{Analyses, ClientKey, MAX_KEYS, MAX_SAMPLES};
use crate::render::table::{Cell, Grid};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

type TopicPartition = (String, i32);

/// Records produced in one batch: offsets `first..=last`, and the Produce request.
#[derive(Debug, Clone, Copy)]
struct Produced {
    first: i64,
    last: i64,
    ts: i64,
    frame: u64,
}

#[derive(Debug, Default)]
pub struct EndToEnd {
    produced: HashMap<TopicPartition, Vec<Produced>>,
    /// The next offset each consumer has not yet been delivered, per partition.
    next: HashMap<(ClientKey, TopicPartition), i64>,
    /// Offsets delivered to anyone, as merged ranges `first..=last`.
    delivered: HashMap<TopicPartition, Vec<(i64, i64)>>,
    /// Latencies by consumer and topic.
    latencies: HashMap<(ClientKey, String), Vec<i64>>,
    pub dropped: u64,
}

/// Adds `first..=last` to a list of disjoint ranges, merging neighbours.
fn add_range(list: &mut Vec<(i64, i64)>, first: i64, last: i64) {
    list.push((first, last));
    list.sort_unstable();
    let mut merged: Vec<(i64, i64)> = Vec::with_capacity(list.len());
    for &(a, z) in list.iter() {
        match merged.last_mut() {
            Some(m) if a <= m.1 + 1 => m.1 = m.1.max(z),
            _ => merged.push((a, z)),
        }
    }
    *list = merged;
}

/// Offsets of `first..=last` inside the ranges.
fn covered(list: &[(i64, i64)], first: i64, last: i64) -> i64 {
    list.iter()
        .map(|&(a, z)| (z.min(last) - a.max(first) + 1).max(0))
        .sum()
}

impl EndToEnd {
    pub fn response(&mut self, req: Option<&Event>, e: &Event) {
        let Some(req) = req else { return };
        match e.api_key {
            0 => self.produced(req, e),
            1 if !req.replica => self.fetched(req, e),
            78 => self.share_fetched(req, e),
            _ => {}
        }
    }

    fn produced(&mut self, req: &Event, e: &Event) {
        for (p, base, n) in super::adapter::produced(req, e) {
            let tp = (p.topic.clone(), p.partition);
            if n <= 0 || (self.produced.len() >= MAX_KEYS && !self.produced.contains_key(&tp)) {
                continue;
            }
            let list = self.produced.entry(tp).or_default();
            if list.len() >= MAX_SAMPLES {
                self.dropped += 1;
                continue;
            }
            list.push(Produced {
                first: base,
                last: base + n - 1,
                ts: req.ts,
                frame: req.frame,
            });
        }
    }

    fn fetched(&mut self, req: &Event, e: &Event) {
        for p in e.parts.iter().filter(|p| p.error == 0) {
            let from = req
                .parts
                .iter()
                .find(|q| q.topic == p.topic && q.partition == p.partition)
                .and_then(|q| q.fetch_offset)
                .unwrap_or(0);
            for b in p.batches.iter().filter(|b| b.records > 0) {
                let first = b.base_offset.max(from);
                let last = b.base_offset + b.records - 1;
                self.deliver(req, (p.topic.clone(), p.partition), first, last, e.ts);
            }
        }
    }

    /// ShareFetch delivers the records it acquires for the member.
    fn share_fetched(&mut self, req: &Event, e: &Event) {
        for p in e.parts.iter().filter(|p| p.error == 0) {
            for &(first, last) in &p.ranges {
                self.deliver(req, (p.topic.clone(), p.partition), first, last, e.ts);
            }
        }
    }

    /// Offsets `first..=last` delivered to `req`'s client at `ts`: those it had not been
    /// delivered yet get their latency.
    fn deliver(&mut self, req: &Event, tp: TopicPartition, first: i64, last: i64, ts: i64) {
        if last < first || self.next.len() >= MAX_KEYS {
            return;
        }
        let who = ClientKey::of(req);
        let next = self
            .next
            .entry((who.clone(), tp.clone()))
            .or_insert(i64::MIN);
        let first = first.max(*next);
        if last < first {
            return;
        }
        *next = last + 1;
        if self.delivered.len() < MAX_KEYS || self.delivered.contains_key(&tp) {
            add_range(self.delivered.entry(tp.clone()).or_default(), first, last);
        }
        let Some(produced) = self.produced.get(&tp) else {
            return;
        };
        let key = (who, tp.0.clone());
        if self.latencies.len() >= MAX_KEYS && !self.latencies.contains_key(&key) {
            return;
        }
        let lat = self.latencies.entry(key).or_default();
        for pr in produced
            .iter()
            .filter(|x| x.last >= first && x.first <= last)
        {
            let n = pr.last.min(last) - pr.first.max(first) + 1;
            for _ in 0..n {
                if lat.len() >= MAX_SAMPLES {
                    self.dropped += 1;
                    break;
                }
                lat.push(ts - pr.ts);
            }
        }
    }

    /// Latencies by (topic, group or client), sorted.
    fn resolved(&self, a: &Analyses) -> BTreeMap<(String, String), Vec<i64>> {
        let mut out: BTreeMap<(String, String), Vec<i64>> = BTreeMap::new();
        for ((who, topic), l) in &self.latencies {
            out.entry((topic.clone(), a.owner(who)))
                .or_default()
                .extend(l);
        }
        for l in out.values_mut() {
            l.sort_unstable();
        }
        out
    }

    /// Per topic: records produced, those delivered to some consumer, and the first few
    /// produce requests whose records were never delivered.
    fn unconsumed(&self) -> BTreeMap<String, (i64, i64, Vec<u64>)> {
        let mut out: BTreeMap<String, (i64, i64, Vec<u64>)> = BTreeMap::new();
        for ((topic, part), list) in &self.produced {
            let got = self
                .delivered
                .get(&(topic.clone(), *part))
                .map_or(&[][..], Vec::as_slice);
            let row = out.entry(topic.clone()).or_default();
            for pr in list {
                let n = pr.last - pr.first + 1;
                let c = covered(got, pr.first, pr.last);
                row.0 += n;
                row.1 += c;
                if c < n && row.2.len() < 10 {
                    row.2.push(pr.frame);
                }
            }
        }
        for r in out.values_mut() {
            r.2.sort_unstable();
        }
        out
    }

    pub fn tables(&self, a: &Analyses, width: Option<u16>) -> Vec<(String, String)> {
        let lat = self.resolved(a);
        let un = self.unconsumed();
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
        for ((topic, owner), l) in &lat {
            let p = |x: f64| percentile(l, x).map_or("-".into(), ms_text);
            g.row(vec![
                Cell::atom(topic),
                Cell::atom(owner),
                Cell::num(l.len()),
                Cell::num(p(50.0)),
                Cell::num(p(95.0)),
                Cell::num(p(99.0)),
                Cell::num(l.last().map_or("-".into(), |x| ms_text(*x))),
            ]);
        }
        let mut u = Grid::new(&[
            "topic",
            "produced",
            "consumed",
            "never consumed",
            "produce frames",
        ]);
        for (topic, (n, c, frames)) in &un {
            let f: Vec<String> = frames.iter().map(u64::to_string).collect();
            u.row(vec![
                Cell::atom(topic),
                Cell::num(n),
                Cell::num(c),
                Cell::num(n - c),
                Cell::text(if f.is_empty() {
                    "-".into()
                } else {
                    f.join(" ")
                }),
            ]);
        }
        vec![
            (
                "End-to-end record latency (Produce request to the Fetch response delivering the record)"
                    .into(),
                g.render(width).to_string(),
            ),
            (
                "Records produced and never seen consumed".into(),
                u.render(width).to_string(),
            ),
        ]
    }

    /// Latencies by topic and owner, and the records never consumed by topic.
    pub fn out(&self, a: &Analyses) -> EndToEndOut {
        let latency = self
            .resolved(a)
            .into_iter()
            .map(|((topic, owner), l)| {
                let p = |x: f64| percentile(&l, x).map(ms);
                RecordLatencyOut {
                    topic,
                    owner,
                    records: l.len(),
                    latency_ms: LatencyMs {
                        p50: p(50.0),
                        p95: p(95.0),
                        p99: p(99.0),
                        max: l.last().map(|x| ms(*x)),
                    },
                }
            })
            .collect();
        let unconsumed = self
            .unconsumed()
            .into_iter()
            .map(|(topic, (n, c, frames))| UnconsumedOut {
                topic,
                produced: n,
                consumed: c,
                never_consumed: n - c,
                produce_frames: frames,
            })
            .collect();
        EndToEndOut {
            latency,
            unconsumed,
            dropped: self.dropped,
        }
    }
}

/// End-to-end record latency (`end_to_end` in the JSON).
#[derive(Debug, Clone, Serialize)]
pub struct EndToEndOut {
    /// By topic, then group (or client).
    pub latency: Vec<RecordLatencyOut>,
    /// By topic.
    pub unconsumed: Vec<UnconsumedOut>,
    /// Produced batches and latencies past the bounds.
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
    /// The first Produce request frames (up to 10) holding records never consumed.
    pub produce_frames: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_and_count_what_they_cover() {
        let mut l = Vec::new();
        add_range(&mut l, 5, 9);
        add_range(&mut l, 0, 4);
        add_range(&mut l, 20, 21);
        assert_eq!(l, vec![(0, 9), (20, 21)]);
        assert_eq!(covered(&l, 8, 20), 3);
    }
}
