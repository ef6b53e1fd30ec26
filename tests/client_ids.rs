//! A client_id may be any UTF-8, as Kafka reads it (`café`, `クライアント`): such a client's
//! requests are found where a capture starts inside its connections and where a `-w` cut is
//! read back, as an ASCII one's are, and its answers are paired with them rather than read
//! with an assumed API (issue 35, "a client can hide").
//!
//! The captures are a real sample's, with the client_id of every request header rewritten in
//! place (same length, so nothing else moves), cut as a capture started late would be.

use std::path::PathBuf;
use std::process::Command;

const SAMPLE: &str = "ak44-consumer-classic.pcap";
const ASCII_ID: &str = "ak44-consumer-classic";

fn sample() -> Vec<u8> {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "samples", SAMPLE]
        .iter()
        .collect();
    std::fs::read(p).expect("sample")
}

/// The sample with every request header's client_id (int16 length, then the id) replaced
/// by `id`, padded with `-` to the same length.
fn with_client_id(id: &str) -> (Vec<u8>, String) {
    let mut new = id.to_string();
    while new.len() < ASCII_ID.len() {
        new.push('-');
    }
    assert_eq!(new.len(), ASCII_ID.len(), "{id}");
    let prefix = (ASCII_ID.len() as i16).to_be_bytes();
    let old: Vec<u8> = [&prefix[..], ASCII_ID.as_bytes()].concat();
    let mut data = sample();
    let mut n = 0;
    let mut i = 0;
    while let Some(at) = data[i..].windows(old.len()).position(|w| w == old) {
        let start = i + at + 2;
        data[start..start + new.len()].copy_from_slice(new.as_bytes());
        i = start + new.len();
        n += 1;
    }
    assert!(n >= 10, "{n} client_ids replaced");
    (data, new)
}

/// A classic pcap without its first `skip` packets: a capture started late.
fn started_late(pcap: &[u8], skip: usize) -> Vec<u8> {
    let mut out = pcap[..24].to_vec();
    let (mut i, mut n) = (24, 0);
    while i + 16 <= pcap.len() {
        let incl = u32::from_le_bytes(pcap[i + 8..i + 12].try_into().expect("4 bytes")) as usize;
        if n >= skip {
            out.extend_from_slice(&pcap[i..i + 16 + incl]);
        }
        i += 16 + incl;
        n += 1;
    }
    out
}

fn temp(tag: &str, ext: &str) -> PathBuf {
    std::env::temp_dir().join(format!("kdissect-ids-{tag}-{}.{ext}", std::process::id()))
}

/// kdissect's standard output and standard error, for a capture given as bytes.
fn kdissect(cap: &[u8], tag: &str, args: &[&str]) -> String {
    let path = temp(tag, "pcap");
    std::fs::write(&path, cap).expect("write");
    let out = run(&path, args);
    let _ = std::fs::remove_file(&path);
    out
}

fn run(path: &std::path::Path, args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .arg("--no-progress")
        .args(args)
        .arg(path)
        .env("NO_COLOR", "1")
        .output()
        .expect("run kdissect");
    let mut s = String::from_utf8(o.stdout).expect("utf8");
    s.push_str(&String::from_utf8_lossy(&o.stderr));
    s
}

#[test]
fn a_capture_started_late_finds_the_requests_of_any_text_client_id() {
    // Packet 34 on: both of the consumer's connections are picked up inside their streams.
    let ascii = kdissect(&started_late(&sample(), 33), "ascii", &[]);
    let requests = ascii
        .lines()
        .filter(|l| l.contains(" Request corr="))
        .count();
    assert!(requests >= 6, "{ascii}");
    // Mid-stream indeed: an answer whose request came before the capture.
    assert!(
        ascii.contains("[API assumed: request not captured]"),
        "{ascii}"
    );
    // Any text, and even control characters (shown escaped): the requests' frames decode, and
    // that verifies them.
    for id in ["クライアント", "café", "ünï-コンシ", "\u{1b}[31m"] {
        let (data, new) = with_client_id(id);
        let utf8 = kdissect(&started_late(&data, 33), "utf8", &[]);
        let shown = new.replace('\u{1b}', "\\u{1b}");
        // Everything as with the ASCII client_id, the client_id aside.
        let same = utf8.replace(&format!("\"{shown}\""), &format!("\"{ASCII_ID}\""));
        assert_eq!(same, ascii, "{id:?}");
        let theirs = utf8
            .lines()
            .filter(|l| l.contains(&format!("client_id=\"{shown}\"")))
            .count();
        assert_eq!(theirs, requests, "{utf8}");
    }
}

#[test]
fn a_cut_read_back_keeps_the_requests_of_any_text_client_id() {
    let (data, new) = with_client_id("クライアント");
    let full = temp("full", "pcap");
    let cut = temp("cut", "pcapng");
    std::fs::write(&full, &data).expect("write");
    let filter = ["-Y", "api == Fetch || api == OffsetCommit"];
    let shown = run(&full, &filter);
    let written = run(
        &full,
        &[&filter[..], &["-q", "-w", cut.to_str().expect("path")]].concat(),
    );
    assert!(written.contains("written to"), "{written}");
    let back = run(&cut, &[]);
    let _ = std::fs::remove_file(&full);
    let _ = std::fs::remove_file(&cut);
    let requests = |s: &str| {
        s.lines()
            .filter(|l| l.contains("Request corr=") && l.contains(&format!("\"{new}\"")))
            .count()
    };
    assert!(requests(&shown) >= 4, "{shown}");
    assert_eq!(requests(&back), requests(&shown), "{back}");
    assert!(!back.contains("API assumed"), "{back}");
}

/// Kafka ports of the `issue35` cluster captures (the controller and three brokers).
const CLUSTER_PORTS: [&str; 9] = [
    "-p", "9093", "-p", "9092", "-p", "9192", "-p", "9292", "--json",
];

/// The messages of a capture of `samples/issue35/`, as JSON objects.
fn issue35_json(name: &str) -> Vec<serde_json::Value> {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "samples", "issue35", name]
        .iter()
        .collect();
    run(&p, &CLUSTER_PORTS)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect()
}

/// The clients' own log of the `nonascii` run (samples/logs/issue35-nonascii.ndjson).
fn nonascii_log() -> Vec<serde_json::Value> {
    let p: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "samples",
        "logs",
        "issue35-nonascii.ndjson",
    ]
    .iter()
    .collect();
    std::fs::read_to_string(p)
        .expect("log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON value a line"))
        .collect()
}

/// Requests of the capture from `client_id` for `api`.
fn requests_of<'a>(
    msgs: &'a [serde_json::Value],
    client_id: &'a str,
    api: &'a str,
) -> impl Iterator<Item = &'a serde_json::Value> + 'a {
    msgs.iter().filter(move |m| {
        m["direction"] == "request" && m["client_id"] == client_id && m["api_name"] == api
    })
}

/// (topic, partition, offset) of every partition of an OffsetCommit request, sorted.
fn commit_offsets(m: &serde_json::Value) -> Vec<(String, i64, i64)> {
    let mut out = Vec::new();
    for t in m["body"]["Topics"].as_array().into_iter().flatten() {
        for p in t["Partitions"].as_array().into_iter().flatten() {
            out.push((
                t["Name"].as_str().unwrap_or_default().to_string(),
                p["PartitionIndex"].as_i64().unwrap_or(-1),
                p["CommittedOffset"].as_i64().unwrap_or(-1),
            ));
        }
    }
    out.sort();
    out
}

/// (partition, record number "issue35 i=N") of every record of a Produce request.
fn produced_records(m: &serde_json::Value) -> Vec<(i64, u64)> {
    let mut out = Vec::new();
    for t in m["body"]["TopicData"].as_array().into_iter().flatten() {
        for p in t["PartitionData"].as_array().into_iter().flatten() {
            for b in p["Records"].as_array().into_iter().flatten() {
                for r in b["Records"].as_array().into_iter().flatten() {
                    let i = r["value"]
                        .as_str()
                        .and_then(|v| v.strip_prefix("issue35 i="));
                    if let Some(i) = i.and_then(|i| i.parse().ok()) {
                        out.push((p["Index"].as_i64().unwrap_or(-1), i));
                    }
                }
            }
        }
    }
    out
}

/// Real librdkafka clients named `café`, `クライアント` and `naïve-消费者-2` (samples/README.md,
/// `nonascii`), captured from 8.35 s on: every connection is picked up mid-stream. What the
/// clients logged while the capture ran is in it under their client ids: each auto commit
/// (its offsets), each delivered record (in a Produce of `café`, at its partition), and each
/// LeaveGroup (the member id the consumer logged). Before item 19 was fixed kdissect found no
/// request of `café` or `クライアント` in it and 2 of `naïve-消费者-2`.
#[test]
fn real_clients_with_non_ascii_ids_keep_what_their_logs_say_in_a_capture_started_late() {
    let log = nonascii_log();
    let late = issue35_json("issue35-nonascii-late.pcap");
    let at = |event: &str| {
        log.iter()
            .find(|e| e["event"] == event && e["file"] == "issue35-nonascii-late.pcap")
            .and_then(|e| e["ts_ns"].as_u64())
            .expect("capture event")
    };
    // Two seconds past the start: a batch may have lingered before it, a commit's request may
    // precede its callback.
    let (from, until) = (at("capture_started") + 2_000_000_000, at("capture_stopped"));
    let inside =
        |e: &&serde_json::Value, key: &str| e[key].as_u64().is_some_and(|t| t > from && t < until);
    let client_id = |e: &serde_json::Value| e["client_id"].as_str().unwrap_or_default().to_string();

    let commits: Vec<&serde_json::Value> = log
        .iter()
        .filter(|e| e["event"] == "committed" && e["error"].is_null())
        .filter(|e| inside(e, "ts_ns"))
        .collect();
    for e in &commits {
        let id = client_id(e);
        let mut want: Vec<(String, i64, i64)> = e["offsets"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|o| {
                (
                    o["topic"].as_str().unwrap_or_default().to_string(),
                    o["partition"].as_i64().unwrap_or(-1),
                    o["offset"].as_i64().unwrap_or(-1),
                )
            })
            .collect();
        want.sort();
        assert!(
            requests_of(&late, &id, "OffsetCommit").any(|m| commit_offsets(m) == want),
            "no OffsetCommit of {id:?} with {want:?}"
        );
    }
    for id in ["クライアント", "naïve-消费者-2"] {
        let n = commits.iter().filter(|e| client_id(e) == id).count();
        assert!(n >= 5, "{id}: {n} commits in the window");
    }

    let produced: std::collections::HashSet<(i64, u64)> = requests_of(&late, "café", "Produce")
        .flat_map(produced_records)
        .collect();
    let delivered: Vec<(i64, u64)> = log
        .iter()
        .filter(|e| e["event"] == "delivered" && e["error"].is_null() && e["client_id"] == "café")
        .filter(|e| inside(e, "sent_ns"))
        .map(|e| {
            (
                e["partition"].as_i64().unwrap_or(-1),
                e["i"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert!(delivered.len() > 250, "{} delivered", delivered.len());
    for r in &delivered {
        assert!(
            produced.contains(r),
            "record {r:?} of café not in its Produce requests"
        );
    }

    let closes: Vec<&serde_json::Value> = log
        .iter()
        .filter(|e| e["event"] == "closing" && inside(e, "ts_ns"))
        .collect();
    assert_eq!(closes.len(), 2, "both consumers close inside the capture");
    for e in closes {
        let id = client_id(e);
        assert!(
            requests_of(&late, &id, "LeaveGroup").any(|m| m["body"]["MemberId"] == e["member_id"]),
            "no LeaveGroup of {id:?} for {}",
            e["member_id"]
        );
    }
}

/// The same late capture against the whole one (tcpdump A, from before the clients started):
/// every request those clients sent after the late capture began is in it, and the only
/// answers read with an assumed API are those whose request came before it began.
#[test]
fn a_capture_started_late_holds_every_later_request_of_the_whole_one() {
    let full = issue35_json("issue35-nonascii.pcap");
    let late = issue35_json("issue35-nonascii-late.pcap");
    let time = |m: &serde_json::Value| m["time"].as_str().unwrap_or_default().to_string();
    let start = late.iter().map(time).min().expect("messages");
    let ids = ["café", "クライアント", "naïve-消费者-2"];
    let requests = |ms: &[serde_json::Value], from: &str| {
        let mut out: Vec<(String, String, i64, String)> = ms
            .iter()
            .filter(|m| m["direction"] == "request" && time(m).as_str() >= from)
            .filter(|m| ids.iter().any(|id| m["client_id"] == *id))
            .map(|m| {
                (
                    m["client_id"].as_str().unwrap_or_default().to_string(),
                    m["api_name"].as_str().unwrap_or_default().to_string(),
                    m["correlation_id"].as_i64().unwrap_or_default(),
                    m["src"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        out.sort();
        out
    };
    let want = requests(&full, &start);
    let got = requests(&late, "");
    for id in ids {
        assert!(want.iter().filter(|r| r.0 == id).count() > 150, "{id}");
    }
    assert_eq!(got, want);
    for m in late.iter().filter(|m| m["assumed"] == true) {
        let asked = full.iter().find(|q| {
            q["direction"] == "request"
                && q["src"] == m["dst"]
                && q["correlation_id"] == m["correlation_id"]
        });
        let asked = asked.expect("the request is in the whole capture");
        assert!(time(asked) < start, "{m}");
    }
}

/// A `-w` cut of that real late capture, read back, keeps every request of the non-ASCII
/// clients the filter kept, and reads no more answers with an assumed API than the capture.
#[test]
fn a_cut_of_the_real_late_capture_read_back_keeps_the_non_ascii_clients() {
    let p: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "samples",
        "issue35",
        "issue35-nonascii-late.pcap",
    ]
    .iter()
    .collect();
    let filter = "api == OffsetCommit || api == Heartbeat || api == LeaveGroup";
    let json = |path: &std::path::Path, extra: &[&str]| -> Vec<serde_json::Value> {
        run(path, &[&CLUSTER_PORTS[..], extra].concat())
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect()
    };
    let shown = json(&p, &["-Y", filter]);
    let cut = temp("real-cut", "pcapng");
    let written = run(&p, &["-Y", filter, "-q", "-w", cut.to_str().expect("path")]);
    assert!(written.contains("written to"), "{written}");
    let back = json(&cut, &[]);
    let _ = std::fs::remove_file(&cut);
    let requests = |ms: &[serde_json::Value]| {
        let mut out: Vec<(String, String, i64)> = ms
            .iter()
            .filter(|m| m["direction"] == "request")
            .map(|m| {
                (
                    m["client_id"].as_str().unwrap_or_default().to_string(),
                    m["api_name"].as_str().unwrap_or_default().to_string(),
                    m["correlation_id"].as_i64().unwrap_or_default(),
                )
            })
            .collect();
        out.sort();
        out
    };
    let want = requests(&shown);
    for id in ["クライアント", "naïve-消费者-2"] {
        assert!(want.iter().filter(|r| r.0 == id).count() >= 10, "{id}");
    }
    assert_eq!(requests(&back), want);
    let assumed = |ms: &[serde_json::Value]| ms.iter().filter(|m| m["assumed"] == true).count();
    assert_eq!(assumed(&back), assumed(&shown));
}
