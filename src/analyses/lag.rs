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
//! Each series keeps its samples up to a bound shared by all series (see [`super::points`]).

use super::adapter::Event;
use super::budget::Budget;
use super::keys::{TopicIx, Tp};
use super::points::Points;
use super::series::{at_text, median, sparkline_fit, Buckets};
use super::{Analyses, At, Held, MAX_KEYS};
use crate::analyses::hash::HashMap;
use crate::text::table::{Cell, Fit, Grid};
use serde::Serialize;
use std::collections::BTreeMap;

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
/// shown (position lag: a Fetch names no group). Both as indexes of the analyses' tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Who {
    Group(u32),
    Client(u32),
}

/// Samples kept over all series (48 bytes each), and by each series at least, however many
/// there are (its last 12 are never merged: Burrow's window).
pub const POINTS: usize = 131_072;
pub const LEAST_POINTS: usize = 32;

#[derive(Debug)]
pub struct Lag {
    /// The samples all series keep together.
    budget: Budget,
    /// The newest log end of each partition, and when it was seen.
    log_end: HashMap<Tp, (i64, i64)>,
    series: HashMap<(Who, Tp, Kind), Points>,
    /// The last fetch offset each connection sent for a partition: an incremental fetch
    /// session's request leaves out the partitions whose offset did not change.
    positions: HashMap<(u32, Tp), i64>,
    /// Commits whose partition's log end was not seen before them: no lag can be given.
    pub without_log_end: u64,
    /// Samples past the bounds.
    pub dropped: u64,
    /// The group each client named in its requests (interned indexes; as many as clients).
    group_of: HashMap<u32, u32>,
}

impl Default for Lag {
    fn default() -> Lag {
        Lag::new(POINTS)
    }
}

impl Lag {
    /// Lag keeping `points` samples, all series together.
    pub fn new(points: usize) -> Lag {
        Lag {
            budget: Budget::new(points, LEAST_POINTS),
            log_end: HashMap::default(),
            series: HashMap::default(),
            positions: HashMap::default(),
            without_log_end: 0,
            dropped: 0,
            group_of: HashMap::default(),
        }
    }
}

/// A series as shown: (owner, topic, partition, kind).
type SeriesKey = (String, String, i32, Kind);

/// Burrow judges the last this many commits.
const WINDOW: usize = 10;

impl Lag {
    pub fn response(&mut self, req: Option<&Held>, e: &Event, parts: &[At]) {
        match e.api_key {
            0 => self.produced(req, e, parts),
            1 => self.fetched(req, e, parts),
            2 => self.listed(req, e, parts),
            8 => self.committed(req, e, parts),
            78 | 79 => self.acknowledged(req, e, parts),
            _ => {}
        }
    }

    fn saw_log_end(&mut self, tp: Tp, ts: i64, end: i64) {
        if self.log_end.len() >= MAX_KEYS && !self.log_end.contains_key(&tp) {
            return;
        }
        let slot = self.log_end.entry(tp).or_insert((ts, end));
        if ts >= slot.0 {
            *slot = (ts, end);
        }
    }

    /// A Produce answer: each partition's log now ends after the records its request sent.
    fn produced(&mut self, req: Option<&Held>, e: &Event, parts: &[At]) {
        let Some(req) = req else { return };
        for at in parts {
            let p = &e.parts[at.i];
            let (Some(base), 0) = (p.base_offset.filter(|b| *b >= 0), p.error) else {
                continue;
            };
            if let Some(n) = req.get(at) {
                self.saw_log_end(at.tp, e.ts, base + n);
            }
        }
    }

    fn fetched(&mut self, req: Option<&Held>, e: &Event, parts: &[At]) {
        let req = req.filter(|r| !r.event.replica);
        if let Some(r) = req {
            for (tp, o) in &r.parts {
                let key = (r.event.stream, *tp);
                if self.positions.len() < MAX_KEYS || self.positions.contains_key(&key) {
                    self.positions.insert(key, *o);
                }
            }
        }
        for at in parts {
            let p = &e.parts[at.i];
            let (Some(hw), 0) = (p.high_watermark.filter(|h| *h >= 0), p.error) else {
                continue;
            };
            self.saw_log_end(at.tp, e.ts, hw);
            let Some(req) = req else { continue };
            let stream = req.event.stream;
            let from = self
                .positions
                .get(&(stream, at.tp))
                .or_else(|| at.raw.and_then(|r| self.positions.get(&(stream, r))));
            if let (Some(&from), Some(client)) = (from, req.client) {
                // The consumer's position once it has the records: past the last whole batch
                // returned (a partial batch at the end is not decoded as one).
                let to = p
                    .batches
                    .iter()
                    .map(|b| b.last_offset.saturating_add(1))
                    .fold(from, i64::max);
                // Keyed by the client's group once known: the tables join a group's
                // members anyway, and a series per client (a consumer that reconnects from
                // a new address is a new client) would split the samples' budget thinner
                // with every reconnection.
                let who = self
                    .group_of
                    .get(&client)
                    .map_or(Who::Client(client), |g| Who::Group(*g));
                self.sample(who, at.tp, Kind::Position, e, (from, to), hw);
            }
        }
    }

    /// A ListOffsets answer to a request for the latest offset (timestamp -1) is a log end.
    fn listed(&mut self, req: Option<&Held>, e: &Event, parts: &[At]) {
        let Some(req) = req else { return };
        for at in parts {
            let p = &e.parts[at.i];
            let latest = req.get(at) == Some(-1);
            if let (true, 0, Some(o)) = (latest, p.error, p.offset.filter(|o| *o >= 0)) {
                self.saw_log_end(at.tp, e.ts, o);
            }
        }
    }

    fn committed(&mut self, req: Option<&Held>, e: &Event, parts: &[At]) {
        let Some(req) = req else { return };
        let Some(group) = req.group else { return };
        for at in parts.iter().filter(|at| e.parts[at.i].error == 0) {
            let Some(offset) = req.get(at) else { continue };
            let end = self
                .log_end
                .get(&at.tp)
                .or_else(|| at.raw.and_then(|r| self.log_end.get(&r)));
            match end {
                Some(&(_, end)) => {
                    let at_offset = (offset, offset);
                    self.sample(Who::Group(group), at.tp, Kind::Committed, e, at_offset, end);
                }
                None => self.without_log_end += 1,
            }
        }
    }

    /// A share group's acknowledgements, answered without error.
    fn acknowledged(&mut self, req: Option<&Held>, e: &Event, parts: &[At]) {
        let Some(req) = req else { return };
        let Some(group) = req.group else { return };
        for at in parts.iter().filter(|at| e.parts[at.i].error == 0) {
            let Some(last) = req.get(at) else { continue };
            if let Some(&(_, end)) = self.log_end.get(&at.tp) {
                let to = last.saturating_add(1);
                self.sample(
                    Who::Group(group),
                    at.tp,
                    Kind::Acknowledged,
                    e,
                    (to, to),
                    end,
                );
            }
        }
    }

    /// The client `client` named the group `group` (the first it named is kept).
    pub fn member_of(&mut self, client: u32, group: u32) {
        self.group_of.entry(client).or_insert(group);
    }

    /// `at`: (where the consumer was before the exchange, where it is after it).
    fn sample(&mut self, who: Who, tp: Tp, kind: Kind, e: &Event, at: (i64, i64), end: i64) {
        let key = (who, tp, kind);
        if self.series.len() >= MAX_KEYS && !self.series.contains_key(&key) {
            self.dropped += 1;
            return;
        }
        let sample = Sample {
            ts: e.ts,
            frame: e.frame,
            lag: end.saturating_sub(at.1).max(0),
            offset: at.1,
            log_end: end,
            from: at.0,
        };
        self.budget.add(&mut self.series, key, |p| p.add(sample));
    }

    /// Rows kept under `from` (a topic id) move to `to` (its name, now learnt): the log ends
    /// and positions later messages read. Series are joined when shown.
    pub fn join(&mut self, from: TopicIx, to: TopicIx) {
        let keys: Vec<Tp> = self
            .log_end
            .keys()
            .filter(|k| k.0 == from)
            .copied()
            .collect();
        for tp in keys {
            if let Some((ts, end)) = self.log_end.remove(&tp) {
                self.saw_log_end((to, tp.1), ts, end);
            }
        }
        let keys: Vec<(u32, Tp)> = self
            .positions
            .keys()
            .filter(|k| k.1 .0 == from)
            .copied()
            .collect();
        for (s, tp) in keys {
            if let Some(o) = self.positions.remove(&(s, tp)) {
                self.positions.entry((s, (to, tp.1))).or_insert(o);
            }
        }
    }

    /// The series by (owner, topic, partition, kind), clients resolved to their groups, topics
    /// to the names known at the end, and the samples of one owner merged in time order.
    fn resolved(&self, a: &Analyses) -> BTreeMap<(String, String, i32, Kind), Points> {
        let mut out: BTreeMap<(String, String, i32, Kind), Points> = BTreeMap::new();
        for ((who, (t, p), kind), s) in &self.series {
            let owner = match who {
                Who::Group(g) => a.group_text(*g),
                Who::Client(c) => a.owner_of(*c),
            };
            let slot = out.entry((owner, a.topic_text(*t), *p, *kind)).or_default();
            slot.kept.extend(s.kept.iter().copied());
            slot.count += s.count;
        }
        for s in out.values_mut() {
            s.kept.sort_by_key(|x| (x.ts, x.frame));
        }
        out
    }

    pub fn tables(&self, a: &Analyses, b: &Buckets, fit: Fit) -> Vec<(String, String)> {
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
        let end = a.span().map_or(0, |x| x.1);
        let figures: Vec<(&SeriesKey, &Points, Figures)> = series
            .iter()
            .map(|(k, s)| (k, s, Figures::of(&s.kept, end, k.3 != Kind::Position)))
            .collect();
        let shown = top(&figures, |x| x.2.max, fit.rows());
        for (i, ((owner, topic, part, kind), s, f)) in figures.iter().enumerate() {
            if !shown[i] {
                continue;
            }
            let since = since_text(f, b.start);
            let line = sparkline_fit(&b.max_per_bucket(s.kept.iter().map(|x| (x.ts, x.lag))));
            let who = [
                Cell::atom(owner),
                Cell::atom(topic),
                Cell::num(part),
                Cell::atom(kind.name()),
            ];
            let mut row = who.to_vec();
            row.extend([
                Cell::num(s.count),
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
        let more = figures.len().saturating_sub(fit.rows());
        if more > 0 {
            let text = format!("and {more} more series with a smaller largest lag (all in --json)");
            g.note(&text);
            t.note(&text);
        }
        vec![
            (self.title(), g.text(fit.width)),
            (
                "Consumer lag over time (largest per bucket)".into(),
                t.text(fit.width),
            ),
        ]
    }

    fn title(&self) -> String {
        let mut title = String::from("Consumer lag (records behind the newest log end seen)");
        if self.without_log_end > 0 {
            title.push_str(&format!(
                "\n{} commits came before any log end of their partition was seen",
                self.without_log_end
            ));
        }
        title
    }

    /// Every series, by owner, topic, partition and kind.
    pub fn out(&self, a: &Analyses, b: &Buckets) -> LagOut {
        let end = a.span().map_or(0, |x| x.1);
        let series = self
            .resolved(a)
            .into_iter()
            .map(|((owner, topic, partition, kind), s)| {
                let f = Figures::of(&s.kept, end, kind != Kind::Position);
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
                    samples: s.count as usize,
                    min: f.min,
                    median: f.median,
                    max: f.max,
                    last: f.last,
                    max_at: at(f.max_at),
                    growing_since: at(f.growing_since),
                    caught_up: at(f.caught_up),
                    status: f.status,
                    buckets: b.max_per_bucket(s.kept.iter().map(|x| (x.ts, x.lag))),
                    points: s.kept.iter().map(|x| LagPoint::of(x, kind)).collect(),
                    growing_before_first_sample: f.before_first,
                    points_merged: s.merged(),
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

/// "growing since" as the table shows it: `before` when the lag grew before the first sample.
fn since_text(f: &Figures, start: i64) -> String {
    f.growing_since.map_or("-".into(), |x| {
        let when = at_text(x.ts, start);
        match f.before_first {
            true => format!("before {when} (frame {})", x.frame),
            false => format!("{when} (frame {})", x.frame),
        }
    })
}

/// Which of `rows` a text table shows: the `n` with the largest `key` (the first of equals),
/// the rest summed in an "and N more" row.
pub fn top<T>(rows: &[T], key: impl Fn(&T) -> i64, n: usize) -> Vec<bool> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(key(&rows[i])), i));
    let mut shown = vec![false; rows.len()];
    for &i in order.iter().take(n) {
        shown[i] = true;
    }
    shown
}

/// Consumer lag (`lag` in the JSON).
#[derive(Debug, Clone, Serialize)]
pub struct LagOut {
    /// One series per (owner, topic, partition, kind), in that order.
    pub series: Vec<LagSeriesOut>,
    /// Commits made before any log end of their partition was seen: no lag figure.
    pub commits_without_log_end: u64,
    /// Samples past the bounds (series per table).
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
    /// Samples taken (all of them, kept or merged).
    pub samples: usize,
    pub min: i64,
    /// Nearest-rank 50th percentile (of the samples kept, when some were merged).
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
    /// The samples kept, in time order: every sample, unless `points_merged` says some were
    /// merged away to keep the series within its bound.
    pub points: Vec<LagPoint>,
    /// The lag was at its largest from the first sample on, above 0: it grew before that
    /// sample (before the capture began, or before the consumer's first commit), and
    /// `growing_since` is the first sample.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub growing_before_first_sample: bool,
    /// Samples merged away (each time cell of the older samples keeps its lowest and its
    /// highest); 0 when every sample is in `points`.
    #[serde(skip_serializing_if = "is_zero")]
    pub points_merged: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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
    /// When the lag started growing towards its first maximum: the sample after the last one
    /// at the lowest lag before that maximum; or, when the lag is at its maximum (above 0)
    /// from the first sample on, that first sample (`before_first`). `None` when the lag
    /// never grew.
    growing_since: Option<Sample>,
    /// The lag grew before the first sample.
    before_first: bool,
    /// The first sample after the peak back at or below the lag growth started from (0 when
    /// it grew before the first sample).
    caught_up: Option<Sample>,
    status: Option<Status>,
}

impl Figures {
    /// `judged`: commits (or acknowledgements), which get a status.
    fn of(s: &[Sample], now: i64, judged: bool) -> Figures {
        let lags: Vec<i64> = s.iter().map(|x| x.lag).collect();
        let max = lags.iter().copied().max().unwrap_or(0);
        let peak = lags.iter().position(|l| *l == max).unwrap_or(0);
        let before = lags.get(..=peak).unwrap_or(&[]);
        let mut low = before.iter().copied().min().unwrap_or(0);
        let base = before.iter().rposition(|l| *l == low).unwrap_or(0);
        // The first sample is the largest: the consumer was already behind at its first
        // sample (a capture started while it ran, or a backlog when it started), and the lag
        // grew before it, from 0 as far as the capture can tell.
        let before_first = peak == 0 && max > 0;
        let growing_since = if before_first {
            low = 0;
            s.first().copied()
        } else if max > low {
            s.get(base + 1).copied()
        } else {
            None
        };
        let caught_up =
            growing_since.and_then(|_| s.iter().skip(peak + 1).find(|x| x.lag <= low).copied());
        Figures {
            min: lags.iter().copied().min().unwrap_or(0),
            median: median(&lags).unwrap_or(0),
            max,
            last: lags.last().copied().unwrap_or(0),
            max_at: s.get(peak).copied(),
            growing_since,
            before_first,
            caught_up,
            status: judged.then(|| status(s, now)).flatten(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(lags: &[i64]) -> Vec<Sample> {
        lags.iter()
            .enumerate()
            .map(|(i, &lag)| Sample {
                ts: i as i64,
                frame: i as u64 + 1,
                lag,
                offset: 0,
                log_end: lag,
                from: 0,
            })
            .collect()
    }

    #[test]
    fn growing_since_is_after_the_last_low_before_the_first_peak() {
        let f = Figures::of(&series(&[3, 0, 0, 4, 9, 9, 2, 0]), 10, false);
        assert_eq!(f.growing_since.map(|x| x.frame), Some(4));
        assert!(!f.before_first);
        assert_eq!(f.max_at.map(|x| x.frame), Some(5));
        assert_eq!(f.caught_up.map(|x| x.frame), Some(8));
    }

    #[test]
    fn a_first_sample_at_the_peak_grew_before_the_capture() {
        let f = Figures::of(&series(&[120, 80, 30, 0, 0]), 10, false);
        assert!(f.before_first);
        assert_eq!(f.growing_since.map(|x| x.frame), Some(1));
        assert_eq!(f.caught_up.map(|x| x.frame), Some(4));
        let f = Figures::of(&series(&[50, 50, 50]), 10, false);
        assert!(f.before_first);
        assert_eq!(f.growing_since.map(|x| x.frame), Some(1));
        assert_eq!(f.caught_up, None);
    }

    #[test]
    fn a_lag_that_never_grew_has_no_start() {
        for lags in [&[0, 0, 0][..], &[0][..], &[]] {
            let f = Figures::of(&series(lags), 10, false);
            assert_eq!(f.growing_since, None, "{lags:?}");
            assert!(!f.before_first);
        }
        let f = Figures::of(&series(&[5, 2, 2]), 10, false);
        assert!(f.before_first, "5 at the start is the peak, above 0");
    }
}
