//! The issue-35 captures (samples/issue35-*.pcap, made by scripts/make-samples-issue35.sh on a
//! real Apache Kafka 4.4.0 cluster) against their clients' own NDJSON logs
//! (samples/logs/issue35-RUN.ndjson, schema in samples/README.md).
//!
//! Only decoding is checked here: every message decodes (a frame is malformed only where the
//! capture cut it), every record a producer's delivery report names is in a captured Produce
//! request at the partition the report gives and at the offset the Produce answer's base offset
//! implies, every record a consumer logged as received is in a captured Fetch answer at its
//! partition and offset, and every client id of the logs sends requests. The analyses' figures
//! (lag, end to end, groups, versions) are for the analysis tests, which read the same logs.

use serde_json::Value as J;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

/// The Kafka ports of scripts/kafka-cluster: the controller and the three brokers.
const PORTS: [&str; 4] = ["9093", "9092", "9192", "9292"];

/// A capture (its path under samples/), the run whose log it shares, and whether tcpdump started before every client
/// (then every delivered and received record must be in it).
struct Case {
    pcap: &'static str,
    run: &'static str,
    from_start: bool,
}

const CASES: &[Case] = &[
    Case {
        pcap: "issue35-classic.pcap",
        run: "classic",
        from_start: true,
    },
    Case {
        pcap: "issue35-classic-late.pcap",
        run: "classic",
        from_start: false,
    },
    Case {
        pcap: "issue35-kip848.pcap",
        run: "kip848",
        from_start: true,
    },
    Case {
        pcap: "issue35-kip848-late.pcap",
        run: "kip848",
        from_start: false,
    },
    Case {
        pcap: "issue35-streams.pcap",
        run: "streams",
        from_start: true,
    },
    Case {
        pcap: "issue35-unnamed.pcap",
        run: "unnamed",
        from_start: true,
    },
    Case {
        pcap: "issue35-nonascii.pcap",
        run: "nonascii",
        from_start: true,
    },
    // Picked up mid-stream, the requests of "café" and "クライアント" vanished until issue 35
    // item 19 was fixed (the frame boundary search took only printable-ASCII client ids).
    Case {
        pcap: "issue35/issue35-nonascii-late.pcap",
        run: "nonascii",
        from_start: false,
    },
];

/// Seconds after a late capture's start before which a record may be missed: a stream picked
/// up mid-frame is read from its next frame boundary, and a batch may have been sent (linger)
/// before the capture.
const LATE_MARGIN_NS: u64 = 2_000_000_000;

fn samples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples")
}

fn log(run: &str) -> Vec<J> {
    let path = samples().join(format!("logs/issue35-{run}.ndjson"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .enumerate()
        .map(|(n, l)| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), n + 1))
        })
        .collect()
}

/// Decoded captures by file name.
type Decoded = HashMap<&'static str, Arc<Vec<J>>>;

/// kdissect's JSON of a capture, one value per message; decoded once per test binary.
fn decode(pcap: &'static str) -> Arc<Vec<J>> {
    static DECODED: OnceLock<Mutex<Decoded>> = OnceLock::new();
    let cache = DECODED.get_or_init(Default::default);
    // One decode at a time: the tests run in parallel and ask for the same captures.
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    map.entry(pcap)
        .or_insert_with(|| Arc::new(run_kdissect(pcap)))
        .clone()
}

fn run_kdissect(pcap: &str) -> Vec<J> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kdissect"));
    for p in PORTS {
        cmd.args(["-p", p]);
    }
    let out = cmd
        .arg("--json")
        .arg(samples().join(pcap))
        .output()
        .expect("run kdissect");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{pcap}: exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("UTF-8 JSON")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON value a line"))
        .collect()
}

fn ts(e: &J) -> u64 {
    e["ts_ns"].as_u64().expect("ts_ns")
}

/// The log's capture window of `pcap`: from its capture_started to its capture_stopped event.
fn window(log: &[J], pcap: &str) -> (u64, u64) {
    let pcap = pcap.rsplit('/').next().unwrap_or(pcap);
    let at = |event: &str| {
        log.iter()
            .find(|e| e["event"] == event && e["file"] == pcap)
            .map(ts)
            .unwrap_or_else(|| panic!("no {event} event for {pcap}"))
    };
    (at("capture_started"), at("capture_stopped"))
}

/// Java prints a Uuid as unpadded URL-safe base64; kdissect as 8-4-4-4-12 hex.
fn uuid_from_base64(s: &str) -> String {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'-' => 62,
        b'_' => 63,
        _ => panic!("not base64url: {s}"),
    };
    let mut bits = 0u32;
    let mut n = 0;
    let mut bytes = Vec::new();
    for c in s.bytes() {
        bits = (bits << 6) | u32::from(val(c));
        n += 6;
        if n >= 8 {
            n -= 8;
            bytes.push((bits >> n) as u8);
        }
    }
    assert_eq!(bytes.len(), 16, "{s}");
    let h: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// Topic id (as kdissect prints it) to name, from the setup's topic_created events.
fn topic_ids(log: &[J]) -> HashMap<String, String> {
    log.iter()
        .filter(|e| e["event"] == "topic_created")
        .map(|e| {
            (
                uuid_from_base64(e["topic_id"].as_str().expect("topic_id")),
                e["topic"].as_str().expect("topic").to_string(),
            )
        })
        .collect()
}

/// The topic a Produce or Fetch topic entry names, by name or by id.
fn topic_of(t: &J, ids: &HashMap<String, String>) -> Option<String> {
    if let Some(n) = t["Name"].as_str().filter(|n| !n.is_empty()) {
        return Some(n.to_string());
    }
    if let Some(n) = t["TopicId_name"].as_str() {
        return Some(n.to_string());
    }
    t["TopicId"].as_str().and_then(|id| ids.get(id).cloned())
}

/// The record number i of a value "issue35 i=<i>".
fn record_no(r: &J) -> Option<u64> {
    r["value"]
        .as_str()?
        .strip_prefix("issue35 i=")?
        .parse()
        .ok()
}

/// Every record batch of a Produce request or Fetch answer: (topic, partition, batch).
fn batches<'a>(
    m: &'a J,
    topics_key: &str,
    parts_key: &str,
    index_key: &str,
    records_key: &str,
    ids: &HashMap<String, String>,
) -> Vec<(String, i64, &'a J)> {
    let mut out = Vec::new();
    for t in m["body"][topics_key].as_array().into_iter().flatten() {
        let Some(topic) = topic_of(t, ids) else {
            continue;
        };
        for p in t[parts_key].as_array().into_iter().flatten() {
            let part = p[index_key].as_i64().expect("partition index");
            for b in p[records_key].as_array().into_iter().flatten() {
                out.push((topic.clone(), part, b));
            }
        }
    }
    out
}

/// (topic, record number) to (topic, partition, offset).
type Placed = BTreeMap<(String, u64), (String, i64, i64)>;

/// Records as the Produce exchanges show them: (topic, record number) to (topic, partition,
/// offset), the offset being the answer's base offset for the partition plus the record's
/// offset delta (record numbers count per producer, and each producer has its own topic). A
/// record sent twice (a retry) keeps its first placement.
fn produced(msgs: &[J], ids: &HashMap<String, String>) -> Placed {
    let mut base: HashMap<(u64, u64, String, i64), i64> = HashMap::new();
    for m in msgs
        .iter()
        .filter(|m| m["api_key"] == 0 && m["direction"] == "response")
    {
        let (Some(f), Some(s)) = (m["request_frame"].as_u64(), m["stream"].as_u64()) else {
            continue;
        };
        for t in m["body"]["Responses"].as_array().into_iter().flatten() {
            let Some(topic) = topic_of(t, ids) else {
                continue;
            };
            for p in t["PartitionResponses"].as_array().into_iter().flatten() {
                if p["ErrorCode"] == 0 {
                    let idx = p["Index"].as_i64().expect("Index");
                    base.insert(
                        (f, s, topic.clone(), idx),
                        p["BaseOffset"].as_i64().expect("BaseOffset"),
                    );
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    for m in msgs
        .iter()
        .filter(|m| m["api_key"] == 0 && m["direction"] == "request")
    {
        let key = (m["frame"].as_u64().unwrap(), m["stream"].as_u64().unwrap());
        for (topic, part, b) in batches(m, "TopicData", "PartitionData", "Index", "Records", ids) {
            let Some(&bo) = base.get(&(key.0, key.1, topic.clone(), part)) else {
                continue;
            };
            for r in b["Records"].as_array().into_iter().flatten() {
                if let Some(i) = record_no(r) {
                    let off = bo + r["offsetDelta"].as_i64().expect("offsetDelta");
                    out.entry((topic.clone(), i))
                        .or_insert((topic.clone(), part, off));
                }
            }
        }
    }
    out
}

/// Every record in a Fetch answer: (topic, partition, offset) to record number.
fn fetched(msgs: &[J], ids: &HashMap<String, String>) -> HashMap<(String, i64, i64), u64> {
    let mut out = HashMap::new();
    for m in msgs
        .iter()
        .filter(|m| m["api_key"] == 1 && m["direction"] == "response")
    {
        for (topic, part, b) in batches(
            m,
            "Responses",
            "Partitions",
            "PartitionIndex",
            "Records",
            ids,
        ) {
            let base = b["baseOffset"].as_i64().unwrap_or(-1);
            for r in b["Records"].as_array().into_iter().flatten() {
                if let Some(i) = record_no(r) {
                    let off = base + r["offsetDelta"].as_i64().expect("offsetDelta");
                    out.insert((topic.clone(), part, off), i);
                }
            }
        }
    }
    out
}

/// (topic, partition, offset) of a delivered or received event.
fn place(e: &J) -> (String, i64, i64) {
    (
        e["topic"].as_str().expect("topic").to_string(),
        e["partition"].as_i64().expect("partition"),
        e["offset"].as_i64().expect("offset"),
    )
}

/// Whether a logged event at `t` must be in the capture: inside the window, and for a capture
/// started late, past the margin.
fn must_be_in(case: &Case, (start, stop): (u64, u64), t: u64) -> bool {
    let from = if case.from_start {
        start
    } else {
        start + LATE_MARGIN_NS
    };
    t >= from && t <= stop
}

#[test]
fn every_message_decodes_and_only_cut_frames_are_malformed() {
    for case in CASES {
        let msgs = decode(case.pcap);
        assert!(msgs.len() > 1000, "{}: {} messages", case.pcap, msgs.len());
        for m in msgs.iter() {
            let bad = m["malformed"].as_array().is_some_and(|a| !a.is_empty());
            assert!(
                !bad || m["partial"] == true,
                "{} frame {}: malformed but not cut by the capture: {}",
                case.pcap,
                m["frame"],
                m["malformed"]
            );
        }
    }
}

#[test]
fn delivered_records_are_in_produce_exchanges_at_their_offsets() {
    for case in CASES {
        let log = log(case.run);
        let win = window(&log, case.pcap);
        let msgs = decode(case.pcap);
        let got = produced(&msgs, &topic_ids(&log));
        let mut checked = 0;
        for e in log
            .iter()
            .filter(|e| e["event"] == "delivered" && e["error"].is_null())
        {
            let i = e["i"].as_u64().expect("i");
            let want = place(e);
            match got.get(&(want.0.clone(), i)) {
                Some(g) => {
                    assert_eq!(g, &want, "{}: record i={i} ({})", case.pcap, e["client"]);
                    checked += 1;
                }
                None => assert!(
                    !must_be_in(case, win, e["sent_ns"].as_u64().expect("sent_ns")),
                    "{}: record i={i} of {} sent inside the capture, not in any Produce",
                    case.pcap,
                    e["client"]
                ),
            }
        }
        assert!(
            checked > 100,
            "{}: only {checked} records checked",
            case.pcap
        );
        assert!(
            got.len() <= checked,
            "{}: {} records in Produce requests, {checked} delivered",
            case.pcap,
            got.len()
        );
    }
}

#[test]
fn received_records_are_in_fetch_answers_at_their_offsets() {
    for case in CASES {
        let log = log(case.run);
        let win = window(&log, case.pcap);
        let msgs = decode(case.pcap);
        let got = fetched(&msgs, &topic_ids(&log));
        // A consumer may log a record long after fetching it (prefetched, or a slow member):
        // in a late capture only records produced after its start must have been fetched in it.
        let sent: HashMap<(String, i64, i64), u64> = log
            .iter()
            .filter(|e| e["event"] == "delivered" && e["error"].is_null())
            .map(|e| (place(e), e["sent_ns"].as_u64().expect("sent_ns")))
            .collect();
        let mut checked = 0;
        for e in log.iter().filter(|e| e["event"] == "received") {
            let key = place(e);
            match got.get(&key) {
                Some(&i) => {
                    assert_eq!(Some(i), e["i"].as_u64(), "{}: {key:?}", case.pcap);
                    checked += 1;
                }
                None => assert!(
                    !(must_be_in(case, win, ts(e))
                        && sent.get(&key).is_none_or(|&t| must_be_in(case, win, t))),
                    "{}: {} received {key:?} inside the capture; no Fetch answer holds it",
                    case.pcap,
                    e["client"]
                ),
            }
        }
        assert!(
            checked > 100,
            "{}: only {checked} records checked",
            case.pcap
        );
    }
}

#[test]
fn every_client_id_of_the_logs_sends_requests() {
    for case in CASES {
        let log = log(case.run);
        let (start, stop) = window(&log, case.pcap);
        let msgs = decode(case.pcap);
        let sent: BTreeSet<&str> = msgs
            .iter()
            .filter(|m| m["direction"] == "request")
            .filter_map(|m| m["client_id"].as_str())
            .collect();
        // A client that logged an event well inside the window talks to the brokers then.
        let active: BTreeSet<&str> = log
            .iter()
            .filter(|e| ts(e) > start + LATE_MARGIN_NS && ts(e) < stop)
            .filter(|e| e["client"] != "run" && e["client"] != "setup")
            .filter_map(|e| e["client_id"].as_str())
            .collect();
        assert!(!active.is_empty(), "{}", case.pcap);
        for id in active {
            // Kafka Streams names its clients after its client.id: ID-StreamThread-1-consumer.
            assert!(
                sent.iter()
                    .any(|s| *s == id || s.starts_with(&format!("{id}-"))),
                "{}: no request from client id {id:?}",
                case.pcap
            );
        }
    }
}
