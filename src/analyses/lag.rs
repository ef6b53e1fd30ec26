//! Consumer lag, by the definitions the lag exporters use:
//! - committed lag (Burrow, kminion): the newest log end seen (a Fetch high watermark, a
//!   ListOffsets answer for the latest offset, or a Produce answer's base offset plus its
//!   records) minus the committed offset, at every successful OffsetCommit, clamped at 0;
//! - position lag (the Java consumer's `records-lag`): a Fetch response's high watermark
//!   minus the consumer's position once it has the records of that response (the fetch
//!   offset, moved past the last whole batch returned);
//! - acknowledged lag (share groups, which commit nothing): the newest log end minus the
//!   offset after the last acknowledged record, at every ShareAcknowledge or ShareFetch that
//!   acknowledges.
//!
//! Statuses follow Burrow's evaluation of a window of the last 10 commits; see [`status`].

use super::adapter::Event;
use super::series::{at_text, median, sparkline_fit, Buckets};
use super::{Analyses, ClientKey, MAX_KEYS, MAX_SAMPLES};
use crate::render::table::{Cell, Grid};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// One lag figure: when, in which frame, how far behind, and the offsets it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    pub ts: i64,
    pub frame: u64,
    pub lag: i64,
    /// The consumer's offset: committed, its position after a Fetch response's records, or
    /// after the last acknowledged.
    pub offset: i64,
    pub log_end: i64,
    /// Position lag: the fetch offset of the request (the records between it and `offset`
    /// came in the response); the same as `offset` for the other figures.
    pub from: i64,
}

/// Which lag figure a series gives (docs/analyses.md defines each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Committed,
    Position,
    Acknowledged,
}

impl Kind {
    /// The name the tables and the JSON give.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Committed => "committed",
            Kind::Position => "position",
            Kind::Acknowledged => "acknowledged",
        }
    }
}

/// Who lags: a group (committed, acknowledged lag), or a client resolved to its group when
/// shown (position lag: a Fetch names no group).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Who {
    Group(String),
    Client(ClientKey),
}

type TopicPartition = (String, i32);

#[derive(Debug, Default)]
pub struct Lag {
    /// The newest log end of each partition, and when it was seen.
    log_end: HashMap<TopicPartition, (i64, i64)>,
    series: HashMap<(Who, TopicPartition, Kind), Vec<Sample>>,
    /// The last fetch offset each connection sent for a partition: an incremental fetch
    /// session's request leaves out the partitions whose offset did not change.
    positions: HashMap<(u32, TopicPartition), i64>,
    /// Commits whose partition's log end was not seen before them: no lag can be given.
    pub without_log_end: u64,
    /// Samples past the bounds.
    pub dropped: u64,
}

/// Burrow judges the last this many commits.
const WINDOW: usize = 10;

impl Lag {
    pub fn response(&mut self, req: Option<&Event>, e: &Event) {
        match e.api_key {
            0 => self.produced(req, e),
            1 => self.fetched(req, e),
            2 => self.listed(req, e),
            8 => self.committed(req, e),
            78 | 79 => self.acknowledged(req, e),
            _ => {}
        }
    }

    fn saw_log_end(&mut self, tp: TopicPartition, ts: i64, end: i64) {
        if self.log_end.len() >= MAX_KEYS && !self.log_end.contains_key(&tp) {
            return;
        }
        let slot = self.log_end.entry(tp).or_insert((ts, end));
        if ts >= slot.0 {
            *slot = (ts, end);
        }
    }

    /// A Produce answer: each partition's log now ends after the records its request sent.
    fn produced(&mut self, req: Option<&Event>, e: &Event) {
        let Some(req) = req else { return };
        for (p, base, n) in super::adapter::produced(req, e) {
            self.saw_log_end((p.topic.clone(), p.partition), e.ts, base + n);
        }
    }

    fn fetched(&mut self, req: Option<&Event>, e: &Event) {
        if let Some(r) = req.filter(|r| !r.replica) {
            for q in &r.parts {
                let key = (r.stream, (q.topic.clone(), q.partition));
                let room = self.positions.len() < MAX_KEYS || self.positions.contains_key(&key);
                if let (Some(o), true) = (q.fetch_offset, room) {
                    self.positions.insert(key, o);
                }
            }
        }
        for p in e.parts.iter().filter(|p| p.error == 0) {
            let Some(hw) = p.high_watermark.filter(|h| *h >= 0) else {
                continue;
            };
            let tp = (p.topic.clone(), p.partition);
            self.saw_log_end(tp.clone(), e.ts, hw);
            let Some(req) = req.filter(|r| !r.replica) else {
                continue;
            };
            if let Some(&from) = self.positions.get(&(req.stream, tp.clone())) {
                // The consumer's position once it has the records: past the last whole batch
                // returned (a partial batch at the end is not decoded as one).
                let at = p
                    .batches
                    .iter()
                    .map(|b| b.last_offset.saturating_add(1))
                    .fold(from, i64::max);
                let who = Who::Client(ClientKey::of(req));
                self.sample(who, tp, Kind::Position, e, (from, at), hw);
            }
        }
    }

    /// A ListOffsets answer to a request for the latest offset (timestamp -1) is a log end.
    fn listed(&mut self, req: Option<&Event>, e: &Event) {
        let Some(req) = req else { return };
        for p in e.parts.iter().filter(|p| p.error == 0) {
            let latest = req.parts.iter().any(|q| {
                q.topic == p.topic && q.partition == p.partition && q.timestamp == Some(-1)
            });
            if let (true, Some(o)) = (latest, p.offset.filter(|o| *o >= 0)) {
                self.saw_log_end((p.topic.clone(), p.partition), e.ts, o);
            }
        }
    }

    fn committed(&mut self, req: Option<&Event>, e: &Event) {
        let Some(req) = req else { return };
        let Some(group) = req.group.clone() else {
            return;
        };
        for p in e.parts.iter().filter(|p| p.error == 0) {
            let offset = req
                .parts
                .iter()
                .find(|q| q.topic == p.topic && q.partition == p.partition)
                .and_then(|q| q.committed_offset);
            let Some(offset) = offset else { continue };
            let tp = (p.topic.clone(), p.partition);
            match self.log_end.get(&tp) {
                Some(&(_, end)) => {
                    self.sample(
                        Who::Group(group.clone()),
                        tp,
                        Kind::Committed,
                        e,
                        (offset, offset),
                        end,
                    );
                }
                None => self.without_log_end += 1,
            }
        }
    }

    /// A share group's acknowledgements, answered without error.
    fn acknowledged(&mut self, req: Option<&Event>, e: &Event) {
        let Some(req) = req else { return };
        let Some(group) = req.group.clone() else {
            return;
        };
        for q in &req.parts {
            let Some(last) = q.ranges.iter().map(|r| r.1).max() else {
                continue;
            };
            let ok = e
                .parts
                .iter()
                .any(|p| p.topic == q.topic && p.partition == q.partition && p.error == 0);
            let tp = (q.topic.clone(), q.partition);
            if let (true, Some(&(_, end))) = (ok, self.log_end.get(&tp)) {
                let who = Who::Group(group.clone());
                let at = last.saturating_add(1);
                self.sample(who, tp, Kind::Acknowledged, e, (at, at), end);
            }
        }
    }

    /// `at`: (where the consumer was before the exchange, where it is after it).
    fn sample(
        &mut self,
        who: Who,
        tp: TopicPartition,
        kind: Kind,
        e: &Event,
        at: (i64, i64),
        end: i64,
    ) {
        let key = (who, tp, kind);
        if self.series.len() >= MAX_KEYS && !self.series.contains_key(&key) {
            self.dropped += 1;
            return;
        }
        let s = self.series.entry(key).or_default();
        if s.len() >= MAX_SAMPLES {
            self.dropped += 1;
            return;
        }
        s.push(Sample {
            ts: e.ts,
            frame: e.frame,
            lag: end.saturating_sub(at.1).max(0),
            offset: at.1,
            log_end: end,
            from: at.0,
        });
    }

    /// The series by (owner, topic, partition, kind), clients resolved to their groups and
    /// the samples of one owner merged in time order.
    fn resolved(&self, a: &Analyses) -> BTreeMap<(String, String, i32, Kind), Vec<Sample>> {
        let mut out: BTreeMap<(String, String, i32, Kind), Vec<Sample>> = BTreeMap::new();
        for ((who, (t, p), kind), s) in &self.series {
            let owner = match who {
                Who::Group(g) => g.clone(),
                Who::Client(c) => a.owner(c),
            };
            out.entry((owner, t.clone(), *p, *kind))
                .or_default()
                .extend(s.iter().copied());
        }
        for s in out.values_mut() {
            s.sort_by_key(|x| (x.ts, x.frame));
        }
        out
    }

    pub fn tables(&self, a: &Analyses, b: &Buckets, width: Option<u16>) -> Vec<(String, String)> {
        let series = self.resolved(a);
        if series.is_empty() {
            return Vec::new();
        }
        let mut g = Grid::new(&[
            "group or client",
            "topic",
            "partition",
            "lag",
            "samples",
            "min",
            "median",
            "max",
            "last",
            "status",
        ]);
        let mut t = Grid::new(&[
            "group or client",
            "topic",
            "partition",
            "lag",
            "growing since",
            "over time",
        ]);
        for ((owner, topic, part, kind), s) in &series {
            let f = Figures::of(s, a.span().map_or(0, |x| x.1), *kind != Kind::Position);
            let since = f.growing_since.map_or("-".into(), |x| {
                format!("{} (frame {})", at_text(x.ts, b.start), x.frame)
            });
            let line = sparkline_fit(&b.max_per_bucket(s.iter().map(|x| (x.ts, x.lag))));
            let who = [
                Cell::atom(owner),
                Cell::atom(topic),
                Cell::num(part),
                Cell::atom(kind.name()),
            ];
            let mut row = who.to_vec();
            row.extend([
                Cell::num(s.len()),
                Cell::num(f.min),
                Cell::num(f.median),
                Cell::num(f.max),
                Cell::num(f.last),
                Cell::atom(f.status.map_or("-", Status::name)),
            ]);
            g.row(row);
            let mut row = who.to_vec();
            row.extend([Cell::text(since), Cell::whole(line)]);
            t.row(row);
        }
        let mut title = String::from("Consumer lag (records behind the newest log end seen)");
        if self.without_log_end > 0 {
            title.push_str(&format!(
                "\n{} commits came before any log end of their partition was seen",
                self.without_log_end
            ));
        }
        vec![
            (title, g.render(width).to_string()),
            (
                "Consumer lag over time (largest per bucket)".into(),
                t.render(width).to_string(),
            ),
        ]
    }

    /// Every series, by owner, topic, partition and kind.
    pub fn out(&self, a: &Analyses, b: &Buckets) -> LagOut {
        let end = a.span().map_or(0, |x| x.1);
        let series = self
            .resolved(a)
            .into_iter()
            .map(|((owner, topic, partition, kind), s)| {
                let f = Figures::of(&s, end, kind != Kind::Position);
                let at = |x: Option<Sample>| {
                    x.map(|x| LagAt {
                        ts_ns: x.ts,
                        frame: x.frame,
                        lag: x.lag,
                    })
                };
                LagSeriesOut {
                    owner,
                    topic,
                    partition,
                    kind,
                    samples: s.len(),
                    min: f.min,
                    median: f.median,
                    max: f.max,
                    last: f.last,
                    max_at: at(f.max_at),
                    growing_since: at(f.growing_since),
                    caught_up: at(f.caught_up),
                    status: f.status,
                    buckets: b.max_per_bucket(s.iter().map(|x| (x.ts, x.lag))),
                    points: s.iter().map(|x| LagPoint::of(x, kind)).collect(),
                }
            })
            .collect();
        LagOut {
            series,
            commits_without_log_end: self.without_log_end,
            dropped: self.dropped,
        }
    }
}

/// Consumer lag (`lag` in the JSON).
#[derive(Debug, Clone, Serialize)]
pub struct LagOut {
    /// One series per (owner, topic, partition, kind), in that order.
    pub series: Vec<LagSeriesOut>,
    /// Commits made before any log end of their partition was seen: no lag figure.
    pub commits_without_log_end: u64,
    /// Samples past the bounds (series per table, samples per series).
    pub dropped: u64,
}

/// One lag series and its figures.
#[derive(Debug, Clone, Serialize)]
pub struct LagSeriesOut {
    /// The group, or `client ID` for a consumer no request of which named a group.
    pub owner: String,
    pub topic: String,
    pub partition: i32,
    pub kind: Kind,
    pub samples: usize,
    pub min: i64,
    /// Nearest-rank 50th percentile.
    pub median: i64,
    pub max: i64,
    pub last: i64,
    /// The first sample at the maximum.
    pub max_at: Option<LagAt>,
    /// When the lag started to grow towards its peak; `None` when it never grew.
    pub growing_since: Option<LagAt>,
    /// The first sample after the peak back at or below the lag growth started from.
    pub caught_up: Option<LagAt>,
    /// Burrow's status (committed and acknowledged lag only).
    pub status: Option<Status>,
    /// The largest lag of each time bucket; `None` (`null`) where a bucket has none.
    pub buckets: Vec<Option<i64>>,
    /// Every sample, in time order.
    pub points: Vec<LagPoint>,
}

/// A sample named by its moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LagAt {
    pub ts_ns: i64,
    pub frame: u64,
    pub lag: i64,
}

/// One sample of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LagPoint {
    /// Capture time (ns since 1970) and frame of the answer that gave it.
    pub ts_ns: i64,
    pub frame: u64,
    pub lag: i64,
    /// The consumer's offset: committed, its position after the answer's records, or after
    /// the last record acknowledged.
    pub offset: i64,
    /// The log end the lag is measured against.
    pub log_end: i64,
    /// Position lag only: the request's fetch offset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetch_offset: Option<i64>,
}

impl LagPoint {
    fn of(x: &Sample, kind: Kind) -> LagPoint {
        LagPoint {
            ts_ns: x.ts,
            frame: x.frame,
            lag: x.lag,
            offset: x.offset,
            log_end: x.log_end,
            fetch_offset: (kind == Kind::Position).then_some(x.from),
        }
    }
}

/// Burrow's partition statuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    Ok,
    Warning,
    Stall,
    Stop,
    Rewind,
}

impl Status {
    /// The name the tables and the JSON give.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Warning => "WARNING",
            Status::Stall => "STALL",
            Status::Stop => "STOP",
            Status::Rewind => "REWIND",
        }
    }
}

/// The status of a partition's commits, judged as Burrow does on the last `WINDOW` commits,
/// `now` being the capture's last message. The first rule that holds wins:
/// 1. STOP: two commits or more, and the last is older than the window's span
///    (now − last > last − first);
/// 2. REWIND: a committed offset lower than the one before it;
/// 3. STALL: two commits or more, the offset never moved, and the lag is above 0;
/// 4. OK: the lag was 0 at some commit;
/// 5. WARNING: two commits or more, and the lag never went down from one commit to the next;
/// 6. OK.
pub fn status(commits: &[Sample], now: i64) -> Option<Status> {
    let w = commits.get(commits.len().saturating_sub(WINDOW)..)?;
    let (first, last) = (w.first()?, w.last()?);
    let several = w.len() >= 2;
    if several && now - last.ts > last.ts - first.ts {
        return Some(Status::Stop);
    }
    if w.windows(2).any(|p| p[1].offset < p[0].offset) {
        return Some(Status::Rewind);
    }
    if several && w.iter().all(|s| s.offset == first.offset) && last.lag > 0 {
        return Some(Status::Stall);
    }
    if w.iter().any(|s| s.lag == 0) {
        return Some(Status::Ok);
    }
    if several && w.windows(2).all(|p| p[1].lag >= p[0].lag) {
        return Some(Status::Warning);
    }
    Some(Status::Ok)
}

/// The figures of one series.
#[derive(Debug, Clone, Copy)]
struct Figures {
    min: i64,
    median: i64,
    max: i64,
    last: i64,
    max_at: Option<Sample>,
    /// The sample after the last one at the series' lowest lag before its first maximum: when
    /// the lag started growing towards its peak. `None` when the lag never grew.
    growing_since: Option<Sample>,
    /// The first sample after the peak back at or below the lag growth started from.
    caught_up: Option<Sample>,
    status: Option<Status>,
}

impl Figures {
    /// `judged`: commits (or acknowledgements), which get a status.
    fn of(s: &[Sample], now: i64, judged: bool) -> Figures {
        let lags: Vec<i64> = s.iter().map(|x| x.lag).collect();
        let max = lags.iter().copied().max().unwrap_or(0);
        let peak = lags.iter().position(|l| *l == max).unwrap_or(0);
        let before = &lags[..=peak.min(lags.len().saturating_sub(1))];
        let low = before.iter().copied().min().unwrap_or(0);
        let base = before.iter().rposition(|l| *l == low).unwrap_or(0);
        let grew = max > low;
        let growing_since = grew.then(|| s.get(base + 1).copied()).flatten();
        let caught_up = grew
            .then(|| s.iter().skip(peak + 1).find(|x| x.lag <= low).copied())
            .flatten();
        Figures {
            min: lags.iter().copied().min().unwrap_or(0),
            median: median(&lags).unwrap_or(0),
            max,
            last: lags.last().copied().unwrap_or(0),
            max_at: s.get(peak).copied(),
            growing_since,
            caught_up,
            status: judged.then(|| status(s, now)).flatten(),
        }
    }
}
