//! The analyses of the issue-35 captures (samples/issue35-*.pcap: librdkafka and Java
//! consumers on a 3-broker Apache Kafka 4.4.0 cluster) held against the clients' own logs
//! (samples/logs/issue35-RUN.ndjson, schema in samples/README.md), with the tolerances of
//! docs/analyses.md:
//!
//! - end to end (item 1): every record a consumer logged as received, produced and received
//!   inside the capture, is matched, whichever of its Fetch and Produce answers came first;
//! - a capture started while the consumers run (item 2): their Fetches name only the topic's
//!   id, and the batches the producer's Produce requests name link it to the name;
//! - "growing since" (item 5): a committed lag at its largest from its first sample on.

mod common;

use common::cli::{arr, run};
use serde_json::Value as J;
use std::collections::BTreeSet;

const PORTS: [&str; 8] = ["-p", "9093", "-p", "9092", "-p", "9192", "-p", "9292"];

/// Seconds after a late capture's start before which a record's exchanges may be missed: a
/// stream picked up mid-stream is read from its next frame boundary, and a Fetch asked before
/// the capture has no captured request (tests/issue35_captures.rs uses the same margin).
const LATE_MARGIN_NS: i64 = 2_000_000_000;

/// `stats.analyses` of `--stats --json -q --analyses`.
fn analyses(pcap: &str) -> J {
    analyses_with(pcap, &[])
}

/// [`analyses`] with more arguments.
fn analyses_with(pcap: &str, more: &[&str]) -> J {
    let path = format!("samples/{pcap}");
    let mut args = vec!["--stats", "--json", "-q", "--analyses", path.as_str()];
    args.extend(PORTS);
    args.extend(more);
    let j: J = serde_json::from_str(run(&args).trim()).expect("stats json");
    j["stats"]["analyses"].clone()
}

fn log(run: &str) -> Vec<J> {
    let path = common::cli::root().join(format!("samples/logs/issue35-{run}.ndjson"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).expect("log line"))
        .collect()
}

fn events<'a>(log: &'a [J], event: &'a str) -> impl Iterator<Item = &'a J> + 'a {
    log.iter().filter(move |e| e["event"] == event)
}

fn int(v: &J) -> i64 {
    v.as_i64().unwrap_or(i64::MIN)
}

/// The capture's start and stop, as the run's script logged them.
fn window(log: &[J], pcap: &str) -> (i64, i64) {
    let at = |event| {
        events(log, event)
            .find(|e| e["file"] == pcap)
            .map(|e| int(&e["ts_ns"]))
            .unwrap_or_else(|| panic!("{pcap}: no {event}"))
    };
    (at("capture_started"), at("capture_stopped"))
}

/// (topic, partition, offset) → the time the producer sent the record.
fn sent(log: &[J]) -> std::collections::HashMap<(String, i64, i64), i64> {
    events(log, "delivered")
        .filter(|e| e["offset"].is_i64())
        .map(|e| {
            let k = (
                e["topic"].as_str().unwrap_or("").to_string(),
                int(&e["partition"]),
                int(&e["offset"]),
            );
            (k, int(&e["sent_ns"]))
        })
        .collect()
}

/// (client id, topic, partition, offset) of every record a consumer logged as received,
/// sent by the producer from `from` on and received by `to`.
fn received(log: &[J], (from, to): (i64, i64)) -> BTreeSet<(String, String, i64, i64)> {
    let sent = sent(log);
    events(log, "received")
        .filter_map(|e| {
            let place = (
                e["topic"].as_str().unwrap_or("").to_string(),
                int(&e["partition"]),
                int(&e["offset"]),
            );
            let s = *sent.get(&place)?;
            (s >= from && int(&e["ts_ns"]) <= to).then(|| {
                let who = e["client_id"].as_str().unwrap_or("").to_string();
                (who, place.0, place.1, place.2)
            })
        })
        .collect()
}

/// The row of `rows` whose `key` fields have these values.
fn row<'a>(rows: &'a J, key: &[(&str, &str)]) -> &'a J {
    arr(rows)
        .iter()
        .find(|r| key.iter().all(|(k, v)| r[*k] == *v))
        .unwrap_or_else(|| panic!("no row {key:?} in {rows}"))
}

/// Every topic the analyses name, in lag, end to end and throughput.
fn topics(a: &J) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for rows in [
        &a["lag"]["series"],
        &a["end_to_end"]["latency"],
        &a["end_to_end"]["unconsumed"],
        &a["throughput"]["partitions"],
    ] {
        out.extend(
            arr(rows)
                .iter()
                .filter_map(|r| r["topic"].as_str().map(str::to_string)),
        );
    }
    out
}

/// Item 1: from the start of the run, every record was produced and consumed inside the
/// capture; every (consumer, record) the consumers logged is matched (a consumer may also
/// have been delivered records it never handed to the application: prefetched when it was
/// killed or closed), and every record produced is seen consumed.
#[test]
fn end_to_end_matches_every_record_the_consumers_logged() {
    for run in ["classic", "kip848"] {
        let pcap = format!("issue35-{run}.pcap");
        let (log, a) = (log(run), analyses(&pcap));
        let topic = format!("issue35-{run}");
        let group = format!("issue35-{run}-group");
        let logged = received(&log, window(&log, &pcap));
        let lat = row(
            &a["end_to_end"]["latency"],
            &[("topic", &topic), ("owner", &group)],
        );
        let matched = int(&lat["records"]);
        println!("{pcap}: {matched} records matched, {} logged", logged.len());
        assert!(
            matched >= logged.len() as i64,
            "{pcap}: {matched} records matched, the consumers logged {}",
            logged.len()
        );
        let produced = sent(&log).keys().filter(|k| k.0 == topic).count() as i64;
        let un = row(&a["end_to_end"]["unconsumed"], &[("topic", &topic)]);
        assert_eq!(int(&un["produced"]), produced, "{pcap}: {un}");
        assert_eq!(int(&un["never_consumed"]), 0, "{pcap}: {un}");
    }
}

/// Item 2: picked up while the consumers run, the capture never holds the Metadata that named
/// the id their Fetches give (until late), and the same batches in the producer's Produce
/// requests name it: no figure is left under the id, every record logged is matched, and
/// records are never consumed only where their exchanges fell before the capture.
#[test]
fn a_capture_started_while_consumers_run_names_the_topic_by_its_batches() {
    // Seconds into each capture before its first answer that names the topic (the Metadata of
    // frame 5205 at 8.6 s, and of frame 9394 at 15.8 s: samples/README.md).
    for (run, unnamed) in [("classic", "8"), ("kip848", "15")] {
        let pcap = format!("issue35-{run}-late.pcap");
        let (log, a) = (log(run), analyses(&pcap));
        let topic = format!("issue35-{run}");
        let group = format!("issue35-{run}-group");
        assert_eq!(
            topics(&a),
            BTreeSet::from([topic.clone()]),
            "{pcap}: topics shown"
        );
        // Up to the first answer naming it, only the batches can name the id.
        let before = analyses_with(&pcap, &["--until", unnamed]);
        assert_eq!(
            topics(&before),
            BTreeSet::from([topic.clone()]),
            "{pcap} --until {unnamed}: topics shown"
        );
        assert!(
            int(&row(&before["end_to_end"]["latency"], &[("owner", &group)])["records"]) > 0,
            "{pcap} --until {unnamed}"
        );
        let (start, stop) = window(&log, &pcap);
        let logged = received(&log, (start + LATE_MARGIN_NS, stop));
        let lat = row(
            &a["end_to_end"]["latency"],
            &[("topic", &topic), ("owner", &group)],
        );
        let matched = int(&lat["records"]);
        println!("{pcap}: {matched} records matched, {} logged", logged.len());
        assert!(
            matched >= logged.len() as i64 && !logged.is_empty(),
            "{pcap}: {matched} records matched, the consumers logged {}",
            logged.len()
        );
        let early = sent(&log)
            .iter()
            .filter(|(k, s)| k.0 == topic && **s >= start && **s < start + LATE_MARGIN_NS)
            .count() as i64;
        let un = row(&a["end_to_end"]["unconsumed"], &[("topic", &topic)]);
        assert!(
            int(&un["consumed"]) > 0 && int(&un["never_consumed"]) <= early,
            "{pcap}: {un}: {early} records sent in the first seconds"
        );
        // Lag of the group, under the topic's name.
        assert!(
            arr(&a["lag"]["series"])
                .iter()
                .any(|s| s["owner"] == group.as_str() && s["kind"] == "committed"),
            "{pcap}: no committed lag of {group}"
        );
        // The id the capture linked, in the JSON's map of topic ids.
        let id = events(&log, "topic_created")
            .find(|e| e["topic"] == topic.as_str())
            .and_then(|e| e["topic_id"].as_str())
            .map(uuid_hex)
            .expect("topic id in the log");
        let names = arr(&a["topic_ids"]);
        assert!(
            names.iter().any(
                |n| n["id"].as_str().map(|s| s.replace('-', "")) == Some(id.clone())
                    && n["name"] == topic.as_str()
            ),
            "{pcap}: {id} not named in {names:?}"
        );
    }
}

/// Java's base64 topic id (`gKixqp09TuqN8pR2N401EQ`) in hex.
fn uuid_hex(b64: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = String::new();
    for c in b64.bytes() {
        let v = ALPHABET.iter().position(|a| *a == c).expect("base64url") as u32;
        bits = (bits << 6) | v;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push_str(&format!("{:02x}", (bits >> n) & 0xff));
        }
    }
    out
}

/// Item 5: picked up at 12.1 s while the slow member c1 still lagged, its partition 1's
/// committed lag is at its largest at its first sample (librdkafka's own figure was above 0
/// before the capture began): growing since is that first sample, marked as grown before it.
#[test]
fn a_lag_at_its_largest_from_its_first_sample_grew_before_it() {
    let (log, a) = (log("classic"), analyses("issue35-classic-late.pcap"));
    let s = row(
        &a["lag"]["series"],
        &[
            ("owner", "issue35-classic-group"),
            ("topic", "issue35-classic"),
            ("kind", "committed"),
        ],
    );
    let s = arr(&a["lag"]["series"])
        .iter()
        .find(|x| x["partition"] == 1 && x["kind"] == "committed" && x["owner"] == s["owner"])
        .expect("partition 1");
    let first = &arr(&s["points"])[0];
    assert_eq!(int(&s["max"]), int(&first["lag"]), "{s}");
    assert!(int(&s["max"]) > 0);
    assert_eq!(s["growing_since"]["frame"], first["frame"], "{s}");
    assert_eq!(s["growing_before_first_sample"], true, "{s}");
    // librdkafka's own lag of the partition, before the capture and at the first sample.
    let (start, _) = window(&log, "issue35-classic-late.pcap");
    let c1 = |e: &&J| e["client_id"] == "issue35-classic-c1";
    let p1 = |e: &J| {
        arr(&e["partitions"])
            .iter()
            .find(|p| p["partition"] == 1)
            .cloned()
            .expect("partition 1 in stats")
    };
    let before = events(&log, "stats")
        .filter(c1)
        .filter(|e| int(&e["ts_ns"]) < start)
        .last()
        .map(p1)
        .expect("stats before the capture");
    assert!(int(&before["consumer_lag"]) > 0, "{before}");
    // The first stats after the sample see the commit it took: same offset, same lag.
    let after = events(&log, "stats")
        .filter(c1)
        .find(|e| int(&e["ts_ns"]) > int(&first["ts_ns"]))
        .map(p1)
        .expect("stats after the sample");
    assert_eq!(
        int(&after["committed_offset"]),
        int(&first["offset"]),
        "{after}"
    );
    assert_eq!(int(&after["consumer_lag"]), int(&first["lag"]), "{after}");
}

/// "What to build" 2: the KRaft log's TopicRecord (in the controller's Fetch answers to the
/// brokers) names a topic created during the capture, before any Metadata answer does: the
/// PartitionRecords beside it, and every later message, carry the name. Before, the first
/// message named was the Fetch answer of frame 4132, after the brokers' Metadata.
#[test]
fn the_kraft_log_names_a_topic_created_in_the_capture() {
    let mut args = vec!["--json", "samples/cluster-admin.pcap"];
    args.extend(PORTS);
    fn named(v: &J) -> bool {
        match v {
            J::Object(o) => {
                o.get("TopicId_name") == Some(&J::from("cluster-admin-a")) || o.values().any(named)
            }
            J::Array(a) => a.iter().any(named),
            _ => false,
        }
    }
    let first = run(&args)
        .lines()
        .map(|l| serde_json::from_str::<J>(l).expect("json line"))
        .find(|m| named(&m["body"]))
        .expect("a message naming cluster-admin-a's id");
    assert_eq!(first["frame"], 3091, "{}", first["frame"]);
    assert_eq!(first["api_key"], 1);
    let records = first.to_string();
    assert!(records.contains("TopicRecord"), "{records:.300}");
}
