//! Lag held against the clients' own figures at the same moments (samples/logs/ana-*.log):
//!
//! - the Java consumer's `records-lag` per partition, printed with the wall-clock time `t` of
//!   the capture's clock, against kdissect's position lag (`--stats --json --analyses`
//!   points);
//! - `kafka-consumer-groups --describe --offsets` tables, taken between a start and an end
//!   time, against kdissect's committed lag.
//!
//! The tolerance is what the capture shows moving in between, never a fixed margin; the rules
//! are those of docs/analyses.md ("Held against the clients' figures"). Run with
//! `--nocapture` to see every comparison.

mod common;

use common::cli::{arr, nanos, root, run};
use serde_json::Value as J;
use std::collections::{BTreeMap, HashMap};

const MS: i64 = 1_000_000;

/// One point of a kdissect lag series.
#[derive(Debug, Clone, Copy)]
struct Point {
    ts: i64,
    frame: u64,
    lag: i64,
    offset: i64,
    log_end: i64,
    fetch_offset: i64,
}

type Tp = (String, i64);

/// (request time, answer time, offset): a Produce exchange (the log end after it) or a
/// commit (the offset committed).
type Exchanges = Vec<(i64, i64, i64)>;

/// kdissect's lag points by (owner, topic, partition, kind).
fn points(sample: &str) -> BTreeMap<(String, String, i64, String), Vec<Point>> {
    let out = run(&["--stats", "--json", "-q", "--analyses=lag", sample]);
    let j: J = serde_json::from_str(out.trim()).expect("stats json");
    let mut m = BTreeMap::new();
    for s in arr(&j["stats"]["analyses"]["lag"]["series"]) {
        let key = (
            s["owner"].as_str().unwrap_or("").to_string(),
            s["topic"].as_str().unwrap_or("").to_string(),
            s["partition"].as_i64().unwrap_or(-1),
            s["kind"].as_str().unwrap_or("").to_string(),
        );
        let pts: Vec<Point> = arr(&s["points"])
            .iter()
            .map(|p| {
                let i = |k: &str| p[k].as_i64().unwrap_or(i64::MIN);
                Point {
                    ts: i("ts_ns"),
                    frame: p["frame"].as_u64().unwrap_or(0),
                    lag: i("lag"),
                    offset: i("offset"),
                    log_end: i("log_end"),
                    fetch_offset: p["fetch_offset"].as_i64().unwrap_or(i("offset")),
                }
            })
            .collect();
        assert_eq!(s["samples"], pts.len(), "{sample} {key:?}: points");
        m.insert(key, pts);
    }
    m
}

/// What the capture shows, read from `--json`: the clients of Fetch answers, and when log
/// ends and committed offsets moved.
#[derive(Default)]
struct Capture {
    /// Fetch answer frame → the client_id of its request.
    fetched_by: HashMap<u64, String>,
    /// Fetch answer frame and partition → the log start offset it gave.
    log_start: HashMap<(u64, Tp), i64>,
    /// Per partition, Produce exchanges: (request time, answer time, log end after it).
    produced: HashMap<Tp, Exchanges>,
    /// Per partition, high watermarks of Fetch answers: (answer time, high watermark).
    watermarks: HashMap<Tp, Vec<(i64, i64)>>,
    /// Per (group, partition), commits answered without error: (request, answer, offset).
    commits: HashMap<(String, Tp), Exchanges>,
}

/// (topic, partition, element) of a body's topic list.
fn partitions(body: &J) -> Vec<(String, i64, J)> {
    let topics = ["Topics", "TopicData", "Responses"]
        .iter()
        .map(|k| &body[*k])
        .find(|v| v.is_array());
    let mut out = Vec::new();
    for t in topics.map_or(&[][..], arr) {
        let name = ["Name", "Topic", "TopicName", "TopicId_name"]
            .iter()
            .find_map(|k| t[*k].as_str().filter(|s| !s.is_empty()))
            .unwrap_or("")
            .to_string();
        let parts = ["Partitions", "PartitionData", "PartitionResponses"]
            .iter()
            .map(|k| &t[*k])
            .find(|v| v.is_array());
        for p in parts.map_or(&[][..], arr) {
            let idx = ["PartitionIndex", "Partition", "Index"]
                .iter()
                .find_map(|k| p[*k].as_i64())
                .unwrap_or(-1);
            out.push((name.clone(), idx, p.clone()));
        }
    }
    out
}

fn capture(sample: &str) -> Capture {
    let mut c = Capture::default();
    let mut pending: HashMap<(u64, i64), J> = HashMap::new();
    for l in run(&["--json", sample]).lines() {
        let m: J = serde_json::from_str(l).expect("json line");
        let key = (
            m["stream"].as_u64().unwrap_or(0),
            m["correlation_id"].as_i64().unwrap_or(-1),
        );
        if m["direction"] == "request" {
            pending.insert(key, m);
            continue;
        }
        let Some(q) = pending.remove(&key) else {
            continue;
        };
        let (ts, qts) = (
            nanos(m["time"].as_str().unwrap_or("")),
            nanos(q["time"].as_str().unwrap_or("")),
        );
        let frame = m["frame"].as_u64().unwrap_or(0);
        let ok = |e: &J| e["ErrorCode"].as_i64().unwrap_or(0) == 0;
        let asked = partitions(&q["body"]);
        match m["api_key"].as_i64() {
            Some(0) => {
                for (t, p, e) in partitions(&m["body"]).into_iter().filter(|x| ok(&x.2)) {
                    let sent = asked.iter().find(|x| x.0 == t && x.1 == p);
                    let n: i64 = sent.map_or(0, |s| {
                        arr(&s.2["Records"])
                            .iter()
                            .map(|b| b["recordsCount"].as_i64().unwrap_or(1))
                            .sum()
                    });
                    if let Some(base) = e["BaseOffset"].as_i64().filter(|b| *b >= 0) {
                        c.produced
                            .entry((t, p))
                            .or_default()
                            .push((qts, ts, base + n));
                    }
                }
            }
            Some(1) => {
                let who = q["client_id"].as_str().unwrap_or("").to_string();
                c.fetched_by.insert(frame, who);
                for (t, p, e) in partitions(&m["body"]).into_iter().filter(|x| ok(&x.2)) {
                    if let Some(s) = e["LogStartOffset"].as_i64() {
                        c.log_start.insert((frame, (t.clone(), p)), s);
                    }
                    if let Some(hw) = e["HighWatermark"].as_i64().filter(|h| *h >= 0) {
                        c.watermarks.entry((t, p)).or_default().push((ts, hw));
                    }
                }
            }
            Some(8) => {
                let group = q["body"]["GroupId"].as_str().unwrap_or("").to_string();
                for (t, p, _) in partitions(&m["body"]).into_iter().filter(|x| ok(&x.2)) {
                    let sent = asked.iter().find(|x| x.0 == t && x.1 == p);
                    if let Some(o) = sent.and_then(|s| s.2["CommittedOffset"].as_i64()) {
                        let k = (group.clone(), (t, p));
                        c.commits.entry(k).or_default().push((qts, ts, o));
                    }
                }
            }
            _ => {}
        }
    }
    c
}

/// A RESULT metrics line of the Java consumer: when, which client, and per partition
/// (`topic-N`) its records-lag and records-lead.
struct Metrics {
    t: i64,
    client: String,
    lag: BTreeMap<String, (f64, Option<f64>)>,
}

fn metrics(log: &str, default_client: &str) -> Vec<Metrics> {
    let text = std::fs::read_to_string(root().join(log)).expect("client log");
    let mut out = Vec::new();
    for l in text.lines().filter_map(|l| l.strip_prefix("RESULT ")) {
        let r: J = serde_json::from_str(l).expect("RESULT json");
        if r["op"] != "metrics" {
            continue;
        }
        let mut lag = BTreeMap::new();
        for (k, v) in r.as_object().into_iter().flatten() {
            if let (Some(tp), Some(v)) = (k.strip_prefix("records-lag "), v.as_f64()) {
                let lead = r[format!("records-lead {tp}")].as_f64();
                lag.insert(tp.to_string(), (v, lead));
            }
        }
        out.push(Metrics {
            t: r["t"].as_i64().expect("t") * MS,
            client: r["member"].as_str().unwrap_or(default_client).to_string(),
            lag,
        });
    }
    out
}

fn split_tp(tp: &str) -> Tp {
    let (t, p) = tp.rsplit_once('-').expect("topic-partition");
    (t.to_string(), p.parse().expect("partition"))
}

/// The outcome of comparing one client figure: compared (with a line for the table) or not
/// comparable (why).
enum Outcome {
    Compared(String),
    Skipped(String),
}

/// The Java consumer records `records-lag` when a poll takes records of a Fetch answer: the
/// answer's high watermark minus the position after them (and `records-lead`, the position
/// minus the log start, at the same moment). An answer waits in the consumer's buffer until
/// polled, max.poll.records at a time. So the client's figure at `t` belongs to the last
/// answer before `t` that it had started to poll (`c`): it must equal kdissect's position lag
/// of that answer plus the records of it not yet polled (c's position after it minus the
/// client's position), and any later answer before `t` must not have been polled yet: it asked
/// from where `c` ends, which is the client's position.
fn position(
    c: &Capture,
    pts: &[Point],
    m: &Metrics,
    tp: &Tp,
    v: i64,
    lead: Option<f64>,
) -> Outcome {
    let mine: Vec<&Point> = pts
        .iter()
        .filter(|p| p.ts < m.t && c.fetched_by.get(&p.frame) == Some(&m.client))
        .collect();
    let Some(lead) = lead else {
        return Outcome::Skipped("no records-lead: the position is not known".into());
    };
    let Some(last) = mine.last() else {
        return Outcome::Skipped("no Fetch answer of this client before t".into());
    };
    let start = c
        .log_start
        .get(&(last.frame, tp.clone()))
        .copied()
        .unwrap_or(0);
    let pos = lead as i64 + start;
    let found = mine
        .iter()
        .rposition(|p| p.fetch_offset <= pos && pos <= p.offset && p.log_end - pos == v);
    let Some(i) = found else {
        panic!(
            "{} {tp:?} at {}: records-lag {v} at position {pos} matches no Fetch answer; \
             the last: {last:?}",
            m.client, m.t
        );
    };
    let at = mine[i];
    let unpolled = at.offset - pos;
    for later in &mine[i + 1..] {
        assert!(
            unpolled == 0 && later.fetch_offset == at.offset,
            "{} {tp:?} at {}: answer {later:?} came after the one polled ({at:?}) and was \
             not asked from the client's position {pos}",
            m.client,
            m.t
        );
    }
    assert_eq!(v, at.lag + unpolled);
    Outcome::Compared(format!(
        "{:>13} {:<8} {:<14} client {v:>3}  kdissect {:>3} (frame {}, {} ms before; last answer {:>3})  \
         tolerance {unpolled} records not yet polled, {} answers not yet polled",
        m.t / MS,
        m.client,
        format!("{}-{}", tp.0, tp.1),
        at.lag,
        at.frame,
        (m.t - at.ts) / MS,
        last.lag,
        mine.len() - i - 1
    ))
}

/// One row of a `--describe --offsets` table and the times the tool ran between.
struct Described {
    start: i64,
    end: i64,
    group: String,
    tp: Tp,
    current: Option<i64>,
    log_end: Option<i64>,
    lag: Option<i64>,
}

fn described(log: &str) -> Vec<Described> {
    let text = std::fs::read_to_string(root().join(log)).expect("describe log");
    let mut out = Vec::new();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let (mut start, mut offsets) = (0, false);
    let num = |s: &str| s.parse::<i64>().ok();
    let time = |l: &str| -> i64 {
        let t = l.split("t=").nth(1).and_then(|x| x.split(' ').next());
        t.and_then(|x| x.parse::<i64>().ok()).expect("time") * MS
    };
    for l in text.lines() {
        if l.starts_with("### describe start") {
            start = time(l);
            offsets = l.contains("--offsets");
            rows.clear();
        } else if l.starts_with("### describe end") {
            let end = time(l);
            for r in rows.drain(..).filter(|_| offsets) {
                // GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG ...
                out.push(Described {
                    start,
                    end,
                    group: r[0].clone(),
                    tp: (r[1].clone(), num(&r[2]).expect("partition")),
                    current: num(&r[3]),
                    log_end: num(&r[4]),
                    lag: num(&r[5]),
                });
            }
        } else if !l.starts_with('#') && !l.starts_with("GROUP") && !l.starts_with("RESULT") {
            let r: Vec<String> = l.split_whitespace().map(str::to_string).collect();
            if r.len() >= 6 && num(&r[2]).is_some() {
                rows.push(r);
            }
        }
    }
    out
}

/// The admin tool reads the committed offset (OffsetFetch) and the log end (ListOffsets) at
/// moments between its start `s` and end `e`. kdissect's figure is the committed lag of the
/// last commit answered before `e` (k). The capture bounds what the tool can have read: the
/// committed offset was one of those in effect from `s` to `e` (the last commit answered by
/// `s`, and every commit asked before `e` and answered after `s`), and the log end was between
/// the newest one answered by `s` (Produce answers, Fetch high watermarks) and the end of the
/// last Produce asked before `e`. The tolerance around k's lag is that: records produced past
/// k's log end before `e` (up), k's log end past the one at `s` and commits past k's (down).
fn committed(c: &Capture, pts: &[Point], d: &Described) -> Outcome {
    let (Some(current), Some(log_end), Some(lag)) = (d.current, d.log_end, d.lag) else {
        return Outcome::Skipped("the tool gives no committed offset (-)".into());
    };
    let Some(k) = pts.iter().rev().find(|p| p.ts <= d.end) else {
        return Outcome::Skipped(
            "no commit of the partition answered before the tool ended".into(),
        );
    };
    let commits = c
        .commits
        .get(&(d.group.clone(), d.tp.clone()))
        .map_or(&[][..], Vec::as_slice);
    let before = commits.iter().rev().find(|x| x.1 <= d.start).map(|x| x.2);
    let during = commits
        .iter()
        .filter(|x| x.0 < d.end && x.1 > d.start)
        .map(|x| x.2);
    let offs: Vec<i64> = before.into_iter().chain(during).collect();
    let (c_lo, c_hi) = (
        *offs.iter().min().expect("a commit"),
        *offs.iter().max().expect("a commit"),
    );
    let produced = c.produced.get(&d.tp).map_or(&[][..], Vec::as_slice);
    let hw = c.watermarks.get(&d.tp).map_or(&[][..], Vec::as_slice);
    let e_lo = produced
        .iter()
        .filter(|x| x.1 <= d.start)
        .map(|x| x.2)
        .chain(hw.iter().filter(|x| x.0 <= d.start).map(|x| x.1))
        .max()
        .unwrap_or(0);
    let e_hi = produced
        .iter()
        .filter(|x| x.0 < d.end)
        .map(|x| x.2)
        .max()
        .unwrap_or(0)
        .max(e_lo);
    let up = (e_hi - k.log_end).max(0) + (k.offset - c_lo).max(0);
    let down = (k.log_end - e_lo).max(0) + (c_hi - k.offset).max(0);
    let line = format!(
        "{:>13}..{:<13} {:<11} {:<12} describe {lag:>3} ({current}/{log_end})  kdissect {:>3} \
         ({}/{}, frame {}, {} ms before the end)  tolerance -{down} +{up}",
        d.start / MS,
        d.end / MS,
        d.group,
        format!("{}-{}", d.tp.0, d.tp.1),
        k.lag,
        k.offset,
        k.log_end,
        k.frame,
        (d.end - k.ts) / MS
    );
    assert!(
        (c_lo..=c_hi).contains(&current) && (e_lo..=e_hi).contains(&log_end),
        "{line}: the tool read {current}/{log_end}, the capture allows committed \
         {c_lo}..={c_hi}, log end {e_lo}..={e_hi}"
    );
    assert!(
        k.lag - down <= lag && lag <= k.lag + up,
        "{line}: outside the tolerance"
    );
    Outcome::Compared(line)
}

/// Every client figure of one sample against kdissect's; returns how many were compared
/// (client figures, admin tool rows).
fn compare(sample: &str, log: &str, describe: &str, group: &str, client: &str) -> (usize, usize) {
    let pts = points(&format!("samples/{sample}.pcap"));
    let cap = capture(&format!("samples/{sample}.pcap"));
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    let (mut by_client, mut by_tool) = (0, 0);
    println!("== {sample}: records-lag (Java consumer) against position lag");
    for m in metrics(log, client) {
        for (tp, (v, lead)) in &m.lag {
            let tp = split_tp(tp);
            let key = (
                group.to_string(),
                tp.0.clone(),
                tp.1,
                "position".to_string(),
            );
            let series = pts.get(&key).map_or(&[][..], Vec::as_slice);
            match position(&cap, series, &m, &tp, *v as i64, *lead) {
                Outcome::Compared(l) => {
                    by_client += 1;
                    println!("{l}");
                }
                Outcome::Skipped(why) => *skipped.entry(why).or_default() += 1,
            }
        }
    }
    println!("== {sample}: kafka-consumer-groups --describe against committed lag");
    for d in described(describe) {
        let key = (d.group.clone(), d.tp.0.clone(), d.tp.1, "committed".into());
        let series = pts.get(&key).map_or(&[][..], Vec::as_slice);
        match committed(&cap, series, &d) {
            Outcome::Compared(l) => {
                by_tool += 1;
                println!("{l}");
            }
            Outcome::Skipped(why) => *skipped.entry(why).or_default() += 1,
        }
    }
    for (why, n) in &skipped {
        println!("not compared ({n}): {why}");
    }
    (by_client, by_tool)
}

/// Every records-lag of the consumer's metrics lines and every row of the admin tool's
/// tables is compared: none is left out in these samples. (Metrics lines printed before the
/// first poll that took records carry no per-partition records-lag; the `--describe
/// --members` tables carry no lag.)
fn all_compared(sample: &str, group: &str, client: &str, want: (usize, usize)) {
    let log = format!("samples/logs/{sample}.log");
    let describe = format!("samples/logs/{sample}.describe.log");
    let got = compare(sample, &log, &describe, group, client);
    assert_eq!(
        got, want,
        "{sample}: (client figures, admin tool rows) compared"
    );
}

/// A consumer that falls behind a steady producer and catches up.
#[test]
fn lag_agrees_with_the_java_consumer_and_the_admin_tool() {
    all_compared("ana-lag", "lag-group", "lag-consumer", (70, 54));
}

#[test]
fn lag_agrees_through_classic_rebalances() {
    all_compared("ana-rebalance-classic", "rb-classic", "", (109, 66));
}

#[test]
fn lag_agrees_through_kip848_rebalances() {
    all_compared("ana-rebalance-kip848", "rb-kip848", "", (132, 78));
}

/// ana-share-group is not compared. Its admin tool table gives START-OFFSET, the share
/// partition's start offset that the share coordinator keeps (every offset below it is
/// acknowledged or archived), and a LAG that counts the records from there to the log end
/// not yet acknowledged by any member; a share consumer prints no lag metric. kdissect's
/// acknowledged lag is the log end minus the offset after one acknowledgement's last record:
/// with three members acknowledging interleaved ranges, releasing every offset divisible by
/// 7 for redelivery, it reads 0 where the tool reads up to 10 (at 1796172916586 ms, partition
/// 0: start offset 74, log end 85, the member's last acknowledgement 84). The capture holds
/// neither the start offset nor which records the coordinator counts as in flight, so the
/// test only checks that the tool's table is what this note says it is.
#[test]
fn the_share_group_table_has_no_committed_offset_to_compare() {
    let text = std::fs::read_to_string(root().join("samples/logs/ana-share-group.describe.log"))
        .expect("describe log");
    let headers: Vec<&str> = text.lines().filter(|l| l.starts_with("GROUP")).collect();
    assert!(!headers.is_empty());
    for h in headers {
        let cols: Vec<&str> = h.split_whitespace().collect();
        assert_eq!(cols, ["GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG"]);
    }
    let log =
        std::fs::read_to_string(root().join("samples/logs/ana-share-group.log")).expect("log");
    assert!(!log.contains("records-lag"));
}
