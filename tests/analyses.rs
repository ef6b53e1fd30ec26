//! The analyses of `--stats --analyses` checked against a separate, simple reader of the
//! per-message `--json` output: on real captures, the reader works out lag, end-to-end latency
//! percentiles, throughput and group generations from the messages' fields, as
//! docs/analyses.md defines them, and every figure must equal the one `--stats --json` gives.

mod common;

use common::cli::{arr, nanos, run};
use serde_json::Value as J;
use std::collections::{BTreeMap, HashMap};

/// The analyses object of `--stats --json`.
fn analyses(sample: &str, ports: &[&str]) -> J {
    let mut args = vec!["--stats", "--json", "-q", "--analyses", sample];
    args.extend(ports);
    let out = run(&args);
    let j: J = serde_json::from_str(out.trim()).expect("stats json");
    j["stats"]["analyses"].clone()
}

/// One message of `--json`, as the reader needs it.
struct Msg {
    ts: i64,
    stream: u64,
    response: bool,
    api_key: i64,
    corr: i64,
    client: String,
    client_id: String,
    body: J,
}

fn messages(sample: &str, ports: &[&str]) -> Vec<Msg> {
    let mut args = vec!["--json", sample];
    args.extend(ports);
    run(&args)
        .lines()
        .map(|l| serde_json::from_str::<J>(l).expect("json line"))
        .map(|m| {
            let response = m["direction"] == "response";
            let client = if response { &m["dst"] } else { &m["src"] };
            let ip = client
                .as_str()
                .unwrap_or("")
                .rsplit_once(':')
                .map_or("", |x| x.0);
            Msg {
                ts: nanos(m["time"].as_str().unwrap_or("")),
                stream: m["stream"].as_u64().unwrap_or(0),
                response,
                api_key: m["api_key"].as_i64().unwrap_or(-1),
                corr: m["correlation_id"].as_i64().unwrap_or(-1),
                client: ip.to_string(),
                client_id: m["client_id"].as_str().unwrap_or("").to_string(),
                body: m["body"].clone(),
            }
        })
        .collect()
}

thread_local! {
    /// Topic ids (hex) and the names the whole capture gives them: a name learnt late
    /// applies to the messages before it too (docs/analyses.md).
    static NAMES: std::cell::RefCell<HashMap<String, String>> = Default::default();
}

/// A struct's own name field, or the name noted on its id.
fn name_of(t: &J) -> Option<String> {
    ["Name", "Topic", "TopicName", "TopicId_name"]
        .iter()
        .find_map(|k| t[*k].as_str().filter(|s| !s.is_empty()))
        .map(str::to_string)
}

/// Every (id, name) pair of the messages, in any struct that holds both.
fn learn_names(msgs: &[Msg]) {
    fn walk(v: &J, out: &mut HashMap<String, String>) {
        match v {
            J::Object(o) => {
                let id = o.get("TopicId").and_then(J::as_str);
                if let (Some(id), Some(name)) = (id, name_of(v)) {
                    out.insert(id.replace('-', ""), name);
                }
                o.values().for_each(|c| walk(c, out));
            }
            J::Array(a) => a.iter().for_each(|c| walk(c, out)),
            _ => {}
        }
    }
    let mut names = HashMap::new();
    for m in msgs {
        walk(&m.body, &mut names);
    }
    NAMES.with(|n| *n.borrow_mut() = names);
}

/// A topic element's name: its name field, the name noted on its id, the name the capture
/// gives its id elsewhere, or the id's hex.
fn topic(t: &J) -> String {
    if let Some(name) = name_of(t) {
        return name;
    }
    let id = t["TopicId"].as_str().unwrap_or("").replace('-', "");
    NAMES.with(|n| n.borrow().get(&id).cloned()).unwrap_or(id)
}

/// (topic, partition, partition element) of a body's topic list.
fn partitions(body: &J) -> Vec<(String, i64, J)> {
    let topics = ["Topics", "TopicData", "Responses"]
        .iter()
        .map(|k| &body[*k])
        .find(|v| v.is_array());
    let mut out = Vec::new();
    for t in topics.map_or(&[][..], arr) {
        let parts = ["Partitions", "PartitionData", "PartitionResponses"]
            .iter()
            .map(|k| &t[*k])
            .find(|v| v.is_array());
        for p in parts.map_or(&[][..], arr) {
            let idx = ["PartitionIndex", "Partition", "Index"]
                .iter()
                .find_map(|k| p[*k].as_i64())
                .unwrap_or(-1);
            out.push((topic(t), idx, p.clone()));
        }
    }
    out
}

/// (base offset, records) of each batch of a partition element.
fn batches(p: &J) -> Vec<(i64, i64)> {
    arr(&p["Records"])
        .iter()
        .map(|b| {
            (
                b["baseOffset"].as_i64().unwrap_or(-1),
                b["recordsCount"].as_i64().unwrap_or(1),
            )
        })
        .collect()
}

fn nearest_rank(sorted: &[i64], p: f64) -> i64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank - 1]
}

fn ms(ns: i64) -> f64 {
    (ns as f64 / 1e3).round() / 1e3
}

/// What the reader works out of one capture.
#[derive(Default)]
struct Reader {
    /// (owner, topic, partition, kind) → lags in order.
    lag: BTreeMap<(String, String, i64, String), Vec<i64>>,
    /// (topic, owner) → latencies in ns.
    latency: BTreeMap<(String, String), Vec<i64>>,
    /// (topic, partition, direction) → records.
    records: BTreeMap<(String, i64, String), i64>,
    /// group → generations of its JoinGroup answers.
    generations: BTreeMap<String, Vec<i64>>,
    /// group → generations its Heartbeat requests name.
    heartbeats: BTreeMap<String, Vec<i64>>,
    /// Records matched whose Fetch answer was captured before their Produce answer.
    early: usize,
}

type Tp = (String, i64);

/// Offsets `range` delivered to a consumer at `ts`: those past what it was delivered before
/// are matched, once the whole capture is read, with the records produced there by a Produce
/// request sent before `ts`, whichever answer was captured first (docs/analyses.md).
struct Delivery {
    to: (String, String, Tp),
    owner: String,
    range: (i64, i64),
    ts: i64,
}

/// Per partition: (first offset, last offset, request time, answer time) of each Produce.
type Produced = HashMap<Tp, Vec<(i64, i64, i64, i64)>>;

/// A consumer's first deliveries: (partition, owner, first, last, time).
type Delivered = Vec<(Tp, String, i64, i64, i64)>;

impl Delivery {
    /// Keeps the offsets not delivered to this consumer before.
    fn count(self, next: &mut HashMap<(String, String, Tp), i64>, delivered: &mut Delivered) {
        let tp = self.to.2.clone();
        let nx = next.entry(self.to).or_insert(i64::MIN);
        let (first, last) = (self.range.0.max(*nx), self.range.1);
        if last < first {
            return;
        }
        *nx = last + 1;
        delivered.push((tp, self.owner, first, last, self.ts));
    }
}

/// Every first delivery matched with the records produced in it by a request sent before it.
fn match_deliveries(delivered: &Delivered, produced: &Produced, r: &mut Reader) {
    for (tp, owner, first, last, ts) in delivered {
        for &(a, z, at, answered) in produced.get(tp).map_or(&[][..], Vec::as_slice) {
            if at > *ts {
                continue;
            }
            for _ in a.max(*first)..=z.min(*last) {
                let key = (tp.0.clone(), owner.clone());
                r.latency.entry(key).or_default().push(ts - at);
                r.early += usize::from(*ts < answered);
            }
        }
    }
}

/// The reader: one pass over the messages in frame order, keeping each request until its
/// response, as docs/analyses.md describes the figures.
fn read(msgs: &[Msg]) -> Reader {
    learn_names(msgs);
    let mut r = Reader::default();
    let mut group_of: HashMap<(String, String), String> = HashMap::new();
    for m in msgs.iter().filter(|m| !m.response) {
        if let Some(g) = m.body["GroupId"].as_str().filter(|g| !g.is_empty()) {
            group_of
                .entry((m.client.clone(), m.client_id.clone()))
                .or_insert_with(|| g.to_string());
        }
    }
    let owner = |m: &Msg| {
        group_of
            .get(&(m.client.clone(), m.client_id.clone()))
            .cloned()
            .unwrap_or_else(|| format!("client {}", m.client_id))
    };
    let mut pending: HashMap<(u64, i64), &Msg> = HashMap::new();
    let mut log_end: HashMap<Tp, i64> = HashMap::new();
    let mut positions: HashMap<(u64, Tp), i64> = HashMap::new();
    let mut produced: Produced = HashMap::new();
    let mut next: HashMap<(String, String, Tp), i64> = HashMap::new();
    let mut delivered: Delivered = Vec::new();
    for m in msgs {
        if !m.response {
            if m.api_key == 0 {
                for (t, p, e) in partitions(&m.body) {
                    let n: i64 = batches(&e).iter().map(|b| b.1).sum();
                    *r.records.entry((t, p, "produce".into())).or_default() += n;
                }
            }
            pending.insert((m.stream, m.corr), m);
            continue;
        }
        let Some(q) = pending.remove(&(m.stream, m.corr)) else {
            continue;
        };
        let asked = partitions(&q.body);
        let sent = |t: &str, p: i64| asked.iter().find(|x| x.0 == t && x.1 == p).map(|x| &x.2);
        let ok = |e: &J| e["ErrorCode"].as_i64().unwrap_or(0) == 0;
        if m.api_key == 78 {
            // ShareFetch delivers the records it acquires for the member.
            for (t, p, e) in partitions(&m.body).into_iter().filter(|x| ok(&x.2)) {
                for a in arr(&e["AcquiredRecords"]) {
                    let (Some(first), Some(last)) =
                        (a["FirstOffset"].as_i64(), a["LastOffset"].as_i64())
                    else {
                        continue;
                    };
                    let d = Delivery {
                        to: (q.client.clone(), q.client_id.clone(), (t.clone(), p)),
                        owner: owner(q),
                        range: (first, last),
                        ts: m.ts,
                    };
                    d.count(&mut next, &mut delivered);
                }
            }
        }
        match m.api_key {
            0 => {
                for (t, p, e) in partitions(&m.body).into_iter().filter(|x| ok(&x.2)) {
                    let (Some(base), Some(s)) = (e["BaseOffset"].as_i64(), sent(&t, p)) else {
                        continue;
                    };
                    let n: i64 = batches(s).iter().map(|b| b.1).sum();
                    log_end.insert((t.clone(), p), base + n);
                    if n > 0 {
                        produced
                            .entry((t, p))
                            .or_default()
                            .push((base, base + n - 1, q.ts, m.ts));
                    }
                }
            }
            1 => {
                let replica = q.body["ReplicaId"]
                    .as_i64()
                    .or(q.body["ReplicaState"]["ReplicaId"].as_i64())
                    .is_some_and(|x| x >= 0);
                for (t, p, e) in &asked {
                    if let (Some(o), false) = (e["FetchOffset"].as_i64(), replica) {
                        positions.insert((q.stream, (t.clone(), *p)), o);
                    }
                }
                for (t, p, e) in partitions(&m.body).into_iter().filter(|x| ok(&x.2)) {
                    let tp = (t.clone(), p);
                    if !replica && !batches(&e).is_empty() {
                        let n: i64 = batches(&e).iter().map(|b| b.1).sum();
                        *r.records.entry((t.clone(), p, "fetch".into())).or_default() += n;
                    }
                    let Some(hw) = e["HighWatermark"].as_i64().filter(|h| *h >= 0) else {
                        continue;
                    };
                    log_end.insert(tp.clone(), hw);
                    if replica {
                        continue;
                    }
                    if let Some(pos) = positions.get(&(q.stream, tp.clone())) {
                        // The position once the consumer has the records: past the last
                        // batch returned (base offset plus lastOffsetDelta).
                        let after = arr(&e["Records"])
                            .iter()
                            .filter_map(|b| {
                                let base = b["baseOffset"].as_i64().or(b["offset"].as_i64())?;
                                let last = b["lastOffsetDelta"].as_i64().map_or(base, |d| base + d);
                                Some(last + 1)
                            })
                            .fold(*pos, i64::max);
                        let key = (owner(q), t.clone(), p, "position".to_string());
                        r.lag.entry(key).or_default().push((hw - after).max(0));
                    }
                    // End to end: offsets past the fetch offset and past those delivered before.
                    let from = positions.get(&(q.stream, tp.clone())).copied().unwrap_or(0);
                    for (base, n) in batches(&e).into_iter().filter(|b| b.1 > 0) {
                        let d = Delivery {
                            to: (q.client.clone(), q.client_id.clone(), tp.clone()),
                            owner: owner(q),
                            range: (base.max(from), base + n - 1),
                            ts: m.ts,
                        };
                        d.count(&mut next, &mut delivered);
                    }
                }
            }
            2 => {
                for (t, p, e) in partitions(&m.body).into_iter().filter(|x| ok(&x.2)) {
                    let latest = sent(&t, p).is_some_and(|s| s["Timestamp"].as_i64() == Some(-1));
                    if let (true, Some(o)) = (latest, e["Offset"].as_i64().filter(|o| *o >= 0)) {
                        log_end.insert((t, p), o);
                    }
                }
            }
            8 => {
                let group = q.body["GroupId"].as_str().unwrap_or("").to_string();
                for (t, p, _) in partitions(&m.body).into_iter().filter(|x| ok(&x.2)) {
                    let c = sent(&t, p).and_then(|s| s["CommittedOffset"].as_i64());
                    if let (Some(c), Some(end)) = (c, log_end.get(&(t.clone(), p))) {
                        let key = (group.clone(), t, p, "committed".to_string());
                        r.lag.entry(key).or_default().push((end - c).max(0));
                    }
                }
            }
            78 | 79 => {
                // Share groups: the offset after the last record acknowledged.
                let group = q.body["GroupId"].as_str().unwrap_or("").to_string();
                let answered = partitions(&m.body);
                for (t, p, e) in &asked {
                    let acked = arr(&e["AcknowledgementBatches"])
                        .iter()
                        .filter_map(|b| b["LastOffset"].as_i64())
                        .max();
                    let ok = answered.iter().any(|a| &a.0 == t && a.1 == *p && ok(&a.2));
                    if let (Some(last), true, Some(end)) =
                        (acked, ok, log_end.get(&(t.clone(), *p)))
                    {
                        let key = (group.clone(), t.clone(), *p, "acknowledged".to_string());
                        r.lag.entry(key).or_default().push((end - last - 1).max(0));
                    }
                }
            }
            11 => {
                let (g, e) = (q.body["GroupId"].as_str(), m.body["ErrorCode"].as_i64());
                if let (Some(g), Some(0), Some(id)) = (g, e, m.body["GenerationId"].as_i64()) {
                    let list = r.generations.entry(g.to_string()).or_default();
                    if !list.contains(&id) {
                        list.push(id);
                    }
                }
            }
            12 => {
                // A group whose rebalance came before the capture: the generations its
                // members' heartbeats name, in the order they rise.
                let (g, id) = (q.body["GroupId"].as_str(), q.body["GenerationId"].as_i64());
                if let (Some(g), Some(id)) = (g, id) {
                    let list = r.heartbeats.entry(g.to_string()).or_default();
                    if list.last().is_none_or(|l| *l < id) {
                        list.push(id);
                    }
                }
            }
            _ => {}
        }
    }
    match_deliveries(&delivered, &produced, &mut r);
    r
}

/// Every figure of the reader against `--stats --json`.
fn check(sample: &str) {
    check_on(sample, &[]);
}

const CLUSTER_PORTS: [&str; 8] = ["-p", "9093", "-p", "9092", "-p", "9192", "-p", "9292"];

/// [`check`] with the capture's Kafka ports (`-p PORT` pairs) when not the default.
fn check_on(sample: &str, ports: &[&str]) -> Reader {
    let a = analyses(sample, ports);
    let r = read(&messages(sample, ports));
    // Lag: the same series, each with the same samples, min, median, max and last.
    let series = arr(&a["lag"]["series"]);
    assert_eq!(
        series.len(),
        r.lag.len(),
        "{sample}: lag series {:?}",
        r.lag.keys()
    );
    for s in series {
        let key = (
            s["owner"].as_str().unwrap_or("").to_string(),
            s["topic"].as_str().unwrap_or("").to_string(),
            s["partition"].as_i64().unwrap_or(-1),
            s["kind"].as_str().unwrap_or("").to_string(),
        );
        let lags = r
            .lag
            .get(&key)
            .unwrap_or_else(|| panic!("{sample}: no {key:?}"));
        let mut sorted = lags.clone();
        sorted.sort_unstable();
        assert_eq!(s["samples"], lags.len(), "{sample} {key:?}");
        assert_eq!(s["min"], sorted[0], "{sample} {key:?}");
        assert_eq!(s["median"], nearest_rank(&sorted, 50.0), "{sample} {key:?}");
        assert_eq!(s["max"], sorted[sorted.len() - 1], "{sample} {key:?}");
        assert_eq!(s["last"], lags[lags.len() - 1], "{sample} {key:?}");
    }
    // End-to-end latency percentiles per topic and owner.
    let lat = arr(&a["end_to_end"]["latency"]);
    assert_eq!(lat.len(), r.latency.len(), "{sample}: latency rows");
    for row in lat {
        let key = (
            row["topic"].as_str().unwrap_or("").to_string(),
            row["owner"].as_str().unwrap_or("").to_string(),
        );
        let mut l = r.latency.get(&key).cloned().expect("latency row");
        l.sort_unstable();
        assert_eq!(row["records"], l.len(), "{sample} {key:?}");
        for (p, name) in [(50.0, "p50"), (95.0, "p95"), (99.0, "p99")] {
            let want = ms(nearest_rank(&l, p));
            assert_eq!(
                row["latency_ms"][name].as_f64(),
                Some(want),
                "{sample} {key:?} {name}"
            );
        }
    }
    // Throughput: records per topic, partition and direction.
    let parts = arr(&a["throughput"]["partitions"]);
    let got: BTreeMap<(String, i64, String), i64> = parts
        .iter()
        .map(|p| {
            let k = (
                p["topic"].as_str().unwrap_or("").to_string(),
                p["partition"].as_i64().unwrap_or(-1),
                p["direction"].as_str().unwrap_or("").to_string(),
            );
            (k, p["records"].as_i64().unwrap_or(-1))
        })
        .collect();
    assert_eq!(got, r.records, "{sample}: records per partition");
    // Groups: the generations the JoinGroup answers gave, per classic group.
    for g in arr(&a["groups"])
        .iter()
        .filter(|g| g["protocol"] == "classic")
    {
        let name = g["group"].as_str().unwrap_or("");
        let ids: Vec<i64> = arr(&g["generations"])
            .iter()
            .filter_map(|x| x["generation"].as_i64())
            .collect();
        let want = r.generations.get(name).or(r.heartbeats.get(name));
        assert_eq!(Some(&ids), want, "{sample}: generations of {name}");
    }
    r
}

#[test]
fn a_classic_consumer_matches_the_reader() {
    check("samples/ak44-consumer-classic.pcap");
}

#[test]
fn produce_then_consume_matches_the_reader() {
    check("samples/ak44-franz-produce-consume.pcap");
}

#[test]
fn a_kip848_consumer_matches_the_reader() {
    check("samples/ak44-consumer-kip848.pcap");
}

#[test]
fn a_cluster_with_five_groups_matches_the_reader() {
    check("samples/cluster-steady.pcap");
}

#[test]
fn a_kafka_python_group_matches_the_reader() {
    check("samples/kafka-python-consumer-group.pcap");
}

#[test]
fn a_consumer_falling_behind_and_catching_up_matches_the_reader() {
    check("samples/ana-lag.pcap");
}

#[test]
fn classic_and_kip848_rebalances_match_the_reader() {
    check("samples/ana-rebalance-classic.pcap");
    check("samples/ana-rebalance-kip848.pcap");
}

#[test]
fn a_slow_acks_all_producer_matches_the_reader() {
    check("samples/ana-slow-acks.pcap");
}

#[test]
fn a_share_group_matches_the_reader() {
    check("samples/ana-share-group.pcap");
}

/// Issue 35 item 1: librdkafka and Java consumers of a 3-broker cluster, where a consumer's
/// Fetch answer often comes before the Produce answer (acks=all waits for the followers):
/// every such record is matched, as the reader matches it.
#[test]
fn records_fetched_before_their_produce_answer_are_matched() {
    for sample in [
        "samples/issue35-classic.pcap",
        "samples/issue35-kip848.pcap",
    ] {
        let r = check_on(sample, &CLUSTER_PORTS);
        let matched: usize = r.latency.values().map(Vec::len).sum();
        assert!(r.early > 50, "{sample}: {} of {matched} early", r.early);
    }
}
