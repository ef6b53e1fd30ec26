//! Captures of a running Apache Kafka 4.4.0 cluster (samples/cluster-*.pcap: a KRaft controller
//! and three brokers, made by scripts/make-samples-cluster.sh with tcpdump started while every
//! client was already running) against the clients' own logs (samples/logs/cluster-NAME-*.log).
//!
//! The values the Java clients logged in their NetworkClient DEBUG lines (whole request and
//! response data, by client id and correlation id) are the values kdissect decodes: cluster ids,
//! topic ids, broker ids, hosts and ports, base offsets, high watermarks, committed offsets,
//! producer ids and error codes. franz-go's wire log and kafka-python's protocol log name the
//! same correlation ids, APIs and versions. And every Kafka PDU tshark finds is in kdissect's
//! output at the same frame with the same correlation id and API key.

use serde_json::Value as J;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Kafka ports of the cluster: the controller and the three brokers.
const PORTS: [&str; 4] = ["9093", "9092", "9192", "9292"];

fn samples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples")
}

/// The cluster captures by scenario name (`steady` for samples/cluster-steady.pcap).
fn captures() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(samples())
        .expect("samples/")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_prefix("cluster-")
                .and_then(|s| s.strip_suffix(".pcap"))
                .map(str::to_string)
        })
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no samples/cluster-*.pcap");
    v
}

fn pcap(name: &str) -> PathBuf {
    samples().join(format!("cluster-{name}.pcap"))
}

/// The client logs of a capture: client name (`producer`, `franz`) to text.
fn client_logs(name: &str) -> BTreeMap<String, String> {
    let prefix = format!("cluster-{name}-");
    let mut m = BTreeMap::new();
    for e in std::fs::read_dir(samples().join("logs")).expect("samples/logs") {
        let e = e.expect("entry");
        let n = e.file_name().to_string_lossy().into_owned();
        let Some(client) = n.strip_prefix(&prefix).and_then(|s| s.strip_suffix(".log")) else {
            continue;
        };
        if client == "nodes" || client == "capture" {
            continue;
        }
        let text = std::fs::read_to_string(e.path()).expect("log");
        m.insert(client.to_string(), text);
    }
    m
}

fn capture_log(name: &str) -> String {
    std::fs::read_to_string(samples().join(format!("logs/cluster-{name}-capture.log")))
        .expect("capture log")
}

fn kdissect(args: &[&str], file: &Path) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kdissect"));
    for p in PORTS {
        cmd.args(["-p", p]);
    }
    let out = cmd.args(args).arg(file).output().expect("run kdissect");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The capture as kdissect's JSON, one value per message. The exit status is not checked here
/// (see `undamaged_cluster_captures_exit_0`).
fn decoded(name: &str) -> Vec<J> {
    let (code, out, err) = kdissect(&["--json"], &pcap(name));
    assert!(matches!(code, Some(0 | 1)), "{name}: exit {code:?}: {err}");
    out.lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

/// A decoded capture with its requests by frame, for pairing responses to client ids.
struct Capture {
    msgs: Vec<J>,
    /// Request frame and stream to the request's index in `msgs`.
    requests: HashMap<(u64, u64), usize>,
}

impl Capture {
    fn load(name: &str) -> Capture {
        let msgs = decoded(name);
        let mut requests = HashMap::new();
        for (i, m) in msgs.iter().enumerate() {
            if m["direction"] == "request" {
                requests.insert((frame(m), m["stream"].as_u64().unwrap_or(0)), i);
            }
        }
        Capture { msgs, requests }
    }

    /// The request a response answers, when it was captured.
    fn request_of(&self, resp: &J) -> Option<&J> {
        let f = resp["request_frame"].as_u64()?;
        let s = resp["stream"].as_u64()?;
        self.requests.get(&(f, s)).map(|&i| &self.msgs[i])
    }

    /// The decoded request of client `client` with correlation id `corr`, and its response.
    fn exchange(&self, client: &str, corr: i64) -> (Option<&J>, Option<&J>) {
        let req = self.msgs.iter().find(|m| {
            m["direction"] == "request"
                && m["client_id"].as_str() == Some(client)
                && m["correlation_id"] == corr
        });
        let resp = req.and_then(|q| {
            self.msgs.iter().find(|m| {
                m["direction"] == "response"
                    && m["request_frame"] == q["frame"]
                    && m["stream"] == q["stream"]
            })
        });
        (req, resp)
    }
}

fn frame(m: &J) -> u64 {
    m["frame"].as_u64().expect("frame")
}

// ------------------------------------------------------------------ Java NetworkClient lines

/// One "Sending X request with header RequestHeader(...)" or "Received X response ... for
/// request with header RequestHeader(...): Data" line.
#[derive(Debug, Clone)]
struct JavaLine {
    response: bool,
    api: String,
    version: i64,
    client: String,
    corr: i64,
    /// The request or response data as the client printed it (`FetchResponseData(...)`).
    data: String,
}

/// The text after `key` up to the first of `ends`.
fn after<'a>(line: &'a str, key: &str, ends: &[char]) -> Option<&'a str> {
    let i = line.find(key)? + key.len();
    let rest = line.get(i..)?;
    let j = rest.find(|c| ends.contains(&c)).unwrap_or(rest.len());
    rest.get(..j)
}

fn java_lines(text: &str) -> Vec<JavaLine> {
    let mut out = Vec::new();
    for line in text.lines() {
        if !line.contains(" NetworkClient: ") || line.contains("more characters cut]") {
            continue;
        }
        let response = if line.contains("] Received ") && line.contains(" response from node ") {
            true
        } else if line.contains("] Sending ") && line.contains(" request with header ") {
            false
        } else {
            continue;
        };
        let Some(h) = after(line, "RequestHeader(", &[')']) else {
            continue;
        };
        let data = line
            .find("headerVersion=")
            .and_then(|i| line[i..].find(": ").map(|j| &line[i + j + 2..]))
            .unwrap_or("");
        let api = after(h, "apiKey=", &[',']).unwrap_or("").to_string();
        out.push(JavaLine {
            response,
            api,
            version: after(h, "apiVersion=", &[','])
                .and_then(|s| s.parse().ok())
                .unwrap_or(-1),
            client: after(h, "clientId=", &[',']).unwrap_or("").to_string(),
            corr: after(h, "correlationId=", &[',', ')'])
                .and_then(|s| s.parse().ok())
                .unwrap_or(-1),
            data: data.to_string(),
        });
    }
    out
}

/// Every value of field `name` (camelCase, as Java prints it) in a printed data object, in
/// order: numbers and bare words as they are, quoted strings without their quotes.
fn java_values(data: &str, name: &str) -> Vec<String> {
    let pat = format!("{name}=");
    let mut out = Vec::new();
    let mut rest = data;
    while let Some(i) = rest.find(&pat) {
        let before = rest[..i].chars().last();
        rest = &rest[i + pat.len()..];
        if !matches!(before, Some('(' | ' ')) {
            continue;
        }
        if let Some(s) = rest.strip_prefix('\'') {
            let end = s.find('\'').unwrap_or(s.len());
            out.push(s[..end].to_string());
        } else {
            let end = rest.find([',', ')', ']']).unwrap_or(rest.len());
            out.push(rest[..end].to_string());
        }
    }
    out
}

/// Kafka's base64 (URL-safe, unpadded) UUID to the dashed hex kdissect prints.
fn uuid_of_base64(s: &str) -> Option<String> {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bits = 0u32;
    let mut n = 0;
    let mut bytes = Vec::new();
    for c in s.bytes() {
        let v = A.iter().position(|&a| a == c)? as u32;
        bits = (bits << 6) | v;
        n += 6;
        if n >= 8 {
            n -= 8;
            bytes.push((bits >> n) as u8);
        }
    }
    if bytes.len() < 16 {
        return None;
    }
    let h = hex::encode(&bytes[..16]);
    Some(format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    ))
}

/// Every value of the field `name` (the spec's name, PascalCase) anywhere in a decoded body,
/// in order, as text.
fn decoded_values(body: &J, name: &str) -> Vec<String> {
    fn walk(v: &J, name: &str, out: &mut Vec<String>) {
        match v {
            J::Object(o) => {
                for (k, x) in o {
                    if k == name {
                        match x {
                            J::String(s) => out.push(s.clone()),
                            J::Null => out.push("null".into()),
                            J::Array(_) | J::Object(_) => {}
                            other => out.push(other.to_string()),
                        }
                    }
                    walk(x, name, out);
                }
            }
            J::Array(a) => a.iter().for_each(|x| walk(x, name, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(body, name, &mut out);
    out
}

fn pascal(name: &str) -> String {
    let mut c = name.chars();
    c.next()
        .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
        .unwrap_or_default()
}

/// Fields compared between the Java clients' printed data and kdissect's bodies, by the
/// spec's name. Only fields that are not tagged: Java prints absent tagged fields with their
/// defaults, the wire (and kdissect) does not carry them.
const JAVA_FIELDS: &[&str] = &[
    "errorCode",
    "clusterId",
    "topicId",
    "nodeId",
    "host",
    "port",
    "controllerId",
    "partitionIndex",
    "baseOffset",
    "logStartOffset",
    "highWatermark",
    "lastStableOffset",
    "committedOffset",
    "fetchOffset",
    "producerId",
    "producerEpoch",
    "generationId",
    "memberEpoch",
    "memberId",
    "groupId",
    "transactionalId",
    "sessionId",
    "sessionEpoch",
    "throttleTimeMs",
];

/// Defaults of the fields among JAVA_FIELDS, which Java prints when the frame leaves them out:
/// tagged fields not sent, and fields the version on the wire does not have (OffsetCommit v9's
/// TopicId).
const TAGGED_DEFAULTS: &[&str] = &[
    "null",
    "-1",
    "0",
    "",
    "9223372036854775807",
    "00000000-0000-0000-0000-000000000000",
];

/// The client's values of a field are the decoded ones, whatever the order, plus defaults of
/// fields the frame does not carry (see TAGGED_DEFAULTS).
fn same_values(client: &[String], decoded: &[String]) -> Result<(), String> {
    let mut left: Vec<&String> = client.iter().collect();
    for v in decoded {
        match left.iter().position(|c| *c == v) {
            Some(i) => {
                left.remove(i);
            }
            None => {
                return Err(format!(
                    "client logged {client:?}, kdissect decoded {decoded:?}"
                ))
            }
        }
    }
    if left.iter().all(|v| TAGGED_DEFAULTS.contains(&v.as_str())) {
        Ok(())
    } else {
        Err(format!(
            "client logged {client:?}, kdissect decoded {decoded:?}"
        ))
    }
}

/// How a Java line's values compare with the decoded message's.
fn compare_java(line: &JavaLine, msg: &J) -> Result<usize, String> {
    let body = &msg["body"];
    let mut compared = 0;
    for f in JAVA_FIELDS {
        let mut ours: Vec<String> = java_values(&line.data, f);
        if *f == "topicId" {
            ours = ours
                .iter()
                .map(|s| uuid_of_base64(s).unwrap_or_else(|| s.clone()))
                .collect();
        }
        let theirs = decoded_values(body, &pascal(f));
        if let Err(e) = same_values(&ours, &theirs) {
            return Err(format!(
                "{} {} corr {} field {f}: {e}",
                line.client, line.api, line.corr
            ));
        }
        compared += theirs.len();
    }
    Ok(compared)
}

/// Checks every Java request and response line whose exchange is in the capture; returns how
/// many lines and values were compared.
fn check_java(cap: &Capture, name: &str, log: &str) -> (usize, usize) {
    let (mut lines, mut values) = (0, 0);
    for l in java_lines(log) {
        let (req, resp) = cap.exchange(&l.client, l.corr);
        let msg = if l.response { resp } else { req };
        let Some(msg) = msg else { continue };
        if l.data.starts_with('{') {
            // Produce requests are printed as partition sizes only.
            continue;
        }
        assert_eq!(
            msg["api_version"], l.version,
            "{name}: {} corr {}: version",
            l.client, l.corr
        );
        assert!(
            msg["malformed"].as_array().is_some_and(|a| a.is_empty()),
            "{name}: {} corr {} decoded with problems: {msg}",
            l.client,
            l.corr
        );
        match compare_java(&l, msg) {
            Ok(n) => values += n,
            Err(e) => panic!("{name}: frame {}: {e}", frame(msg)),
        }
        lines += 1;
    }
    (lines, values)
}

#[test]
fn java_clients_values_are_the_decoded_values() {
    let mut total_lines = 0;
    let mut total_values = 0;
    for name in captures() {
        let cap = Capture::load(&name);
        for (client, log) in client_logs(&name) {
            if !log.contains(" NetworkClient: ") {
                continue;
            }
            let (lines, values) = check_java(&cap, &name, &log);
            assert!(
                lines >= 10,
                "{name}/{client}: only {lines} logged requests and responses found in the capture"
            );
            total_lines += lines;
            total_values += values;
        }
    }
    eprintln!("compared {total_lines} Java log lines, {total_values} values");
    assert!(
        total_lines >= 500,
        "only {total_lines} Java log lines compared"
    );
    assert!(total_values >= 2000, "only {total_values} values compared");
}

// ------------------------------------------------------------------ the cluster's shape

/// The brokers: node id, host, port.
const BROKERS: [(i64, &str, i64); 3] = [
    (1, "127.0.0.2", 9092),
    (2, "127.0.0.3", 9192),
    (3, "127.0.0.4", 9292),
];

/// The cluster id the capture log names (`# cluster id X; ...`).
fn cluster_id(name: &str) -> String {
    let log = capture_log(name);
    let line = log
        .lines()
        .find_map(|l| l.strip_prefix("# cluster id "))
        .expect("cluster id line");
    line.split([';', ' ']).next().expect("id").to_string()
}

fn port_of(addr: &J) -> Option<u16> {
    addr.as_str()?.rsplit(':').next()?.parse().ok()
}

#[test]
fn metadata_and_cluster_answers_name_this_cluster_and_its_brokers() {
    let mut checked = 0;
    for name in captures() {
        let id = cluster_id(&name);
        for m in decoded(&name)
            .iter()
            .filter(|m| m["direction"] == "response")
        {
            let body = &m["body"];
            let api = m["api_name"].as_str().unwrap_or("");
            if !matches!(api, "Metadata" | "DescribeCluster" | "ApiVersions") || body.is_null() {
                continue;
            }
            if let Some(c) = body.get("ClusterId").filter(|c| !c.is_null()) {
                assert_eq!(c, &J::from(id.clone()), "{name}: frame {}", frame(m));
                checked += 1;
            }
            for b in body["Brokers"].as_array().into_iter().flatten() {
                // Metadata names a broker NodeId, DescribeCluster BrokerId.
                let id = b["NodeId"].as_i64().or(b["BrokerId"].as_i64());
                let node = (id, b["Host"].as_str(), b["Port"].as_i64());
                let from_controller = port_of(&m["src"]) == Some(9093);
                let known = if from_controller {
                    // The controller's DescribeCluster (EndpointType 2) lists the controllers.
                    node == (Some(0), Some("127.0.0.1"), Some(9093))
                } else {
                    BROKERS
                        .iter()
                        .any(|&(n, h, p)| node == (Some(n), Some(h), Some(p)))
                };
                assert!(known, "{name}: frame {}: broker {b}", frame(m));
                checked += 1;
            }
            if api == "ApiVersions" {
                // KIP-1242: the node says who it is; it must be the node the frame came from.
                if let Some(n) = body.get("NodeId").and_then(J::as_i64) {
                    let want = match port_of(&m["src"]) {
                        Some(9093) => 0,
                        Some(p) => BROKERS.iter().find(|b| b.2 == p as i64).expect("port").0,
                        None => panic!("{name}: frame {}: src", frame(m)),
                    };
                    assert_eq!(n, want, "{name}: frame {}", frame(m));
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 20, "only {checked} values checked");
}

/// The controller's listener: every broker's heartbeat names that broker, and the brokers'
/// KRaft Fetch requests read `__cluster_metadata` (topic id ...0001) as replicas of their own id.
#[test]
fn controller_traffic_comes_from_the_three_brokers() {
    const METADATA_TOPIC: &str = "00000000-0000-0000-0000-000000000001";
    for name in captures() {
        let msgs = decoded(&name);
        let mut heartbeats = BTreeSet::new();
        let mut raft_fetchers = BTreeSet::new();
        for m in msgs.iter().filter(|m| m["direction"] == "request") {
            if port_of(&m["dst"]) != Some(9093) {
                continue;
            }
            let body = &m["body"];
            match m["api_name"].as_str() {
                Some("BrokerHeartbeat") => {
                    let id = body["BrokerId"].as_i64().expect("BrokerId");
                    assert_eq!(
                        m["client_id"].as_str(),
                        Some(id.to_string().as_str()),
                        "{name}: frame {}",
                        frame(m)
                    );
                    heartbeats.insert(id);
                }
                Some("Fetch") => {
                    let topics = decoded_values(body, "TopicId");
                    assert_eq!(topics, [METADATA_TOPIC], "{name}: frame {}", frame(m));
                    let id = body["ReplicaState"]["ReplicaId"]
                        .as_i64()
                        .expect("ReplicaId");
                    assert_eq!(
                        m["client_id"].as_str(),
                        Some(format!("raft-client-{id}").as_str()),
                        "{name}: frame {}",
                        frame(m)
                    );
                    raft_fetchers.insert(id);
                }
                _ => {}
            }
        }
        let all: BTreeSet<i64> = [1, 2, 3].into();
        assert_eq!(heartbeats, all, "{name}: brokers heartbeating");
        assert_eq!(
            raft_fetchers, all,
            "{name}: brokers fetching __cluster_metadata"
        );
    }
}

// ------------------------------------------------------------------ RESULT lines

/// The RESULT lines of a log.
fn results(text: &str) -> Vec<J> {
    text.lines()
        .filter_map(|l| l.find("RESULT {").and_then(|i| l.get(i + 7..)))
        .map(|j| serde_json::from_str(j).unwrap_or_else(|e| panic!("RESULT {j}: {e}")))
        .collect()
}

/// Producers of cluster-orders: log name, client id, the RESULT kind of one delivered record.
const PRODUCERS: [(&str, &str, &str); 3] = [
    ("producer", "cluster-producer", "send"),
    ("franz", "franz-cluster-producer", "produced"),
    ("kafka-python", "kafka-python-cluster-producer", "produced"),
];

/// Every base offset in a Produce answer to one of these producers is the offset the client
/// was given for a record of that partition (the batch's first record).
#[test]
fn produce_base_offsets_are_offsets_the_clients_were_given() {
    let mut checked = 0;
    for name in captures() {
        let cap = Capture::load(&name);
        let logs = client_logs(&name);
        for (log, client, kind) in PRODUCERS {
            let Some(text) = logs.get(log) else { continue };
            let mut given: BTreeSet<(i64, i64)> = BTreeSet::new();
            for r in results(text) {
                if r["op"] == kind || r["result"] == kind {
                    if let (Some(p), Some(o)) = (r["partition"].as_i64(), r["offset"].as_i64()) {
                        given.insert((p, o));
                    }
                }
            }
            for m in cap.msgs.iter().filter(|m| m["api_name"] == "Produce") {
                if m["direction"] != "response"
                    || cap.request_of(m).and_then(|q| q["client_id"].as_str()) != Some(client)
                {
                    continue;
                }
                for t in m["body"]["Responses"].as_array().into_iter().flatten() {
                    for p in t["PartitionResponses"].as_array().into_iter().flatten() {
                        if p["ErrorCode"] != 0 {
                            continue;
                        }
                        let key = (
                            p["Index"].as_i64().expect("Index"),
                            p["BaseOffset"].as_i64().expect("BaseOffset"),
                        );
                        assert!(
                            given.contains(&key),
                            "{name}: frame {}: {client} partition {} base offset {} is no offset the client logged",
                            frame(m),
                            key.0,
                            key.1
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked >= 30, "only {checked} base offsets checked");
}

/// The offsets the clients say they committed are those of their OffsetCommit requests.
#[test]
fn committed_offsets_are_the_clients_commits() {
    let mut checked = 0;
    for name in captures() {
        let cap = Capture::load(&name);
        let logs = client_logs(&name);
        for (log, client) in [
            ("consumer-classic", "cluster-consumer-classic"),
            ("consumer-kip848", "cluster-consumer-consumer"),
            ("franz", "franz-cluster-consumer"),
            ("kafka-python", "kafka-python-cluster-consumer"),
        ] {
            let Some(text) = logs.get(log) else { continue };
            // Each commit as the set of (partition, offset) it names.
            let commits: Vec<BTreeSet<(i64, i64)>> = results(text)
                .iter()
                // Failed commits count too: a commit that timed out while a broker was down
                // was still sent.
                .filter(|r| r["op"] == "commit" || r["result"] == "commit")
                .map(|r| commit_offsets(&r["offsets"]))
                .filter(|s| !s.is_empty())
                .collect();
            for m in cap.msgs.iter().filter(|m| {
                m["api_name"] == "OffsetCommit"
                    && m["direction"] == "request"
                    && m["client_id"].as_str() == Some(client)
            }) {
                let mut sent = BTreeSet::new();
                for t in m["body"]["Topics"].as_array().into_iter().flatten() {
                    for p in t["Partitions"].as_array().into_iter().flatten() {
                        sent.insert((
                            p["PartitionIndex"].as_i64().expect("PartitionIndex"),
                            p["CommittedOffset"].as_i64().expect("CommittedOffset"),
                        ));
                    }
                }
                assert!(
                    commits.contains(&sent),
                    "{name}: frame {}: {client} committed {sent:?}, not one of the logged commits {commits:?}",
                    frame(m)
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "only {checked} commits checked");
}

/// A RESULT line's offsets: `{"cluster-orders-0": 21, ...}` (Java, kafka-python) or
/// `[{"partition": 0, "offset": 21, ...}]` (franz-go).
fn commit_offsets(v: &J) -> BTreeSet<(i64, i64)> {
    let mut out = BTreeSet::new();
    if let Some(o) = v.as_object() {
        for (k, off) in o {
            let p = k.rsplit('-').next().and_then(|p| p.parse().ok());
            if let (Some(p), Some(off)) = (p, off.as_i64()) {
                out.insert((p, off));
            }
        }
    }
    for e in v.as_array().into_iter().flatten() {
        if let (Some(p), Some(o)) = (e["partition"].as_i64(), e["offset"].as_i64()) {
            out.insert((p, o));
        }
    }
    out
}

// ------------------------------------------------------------------ franz-go and kafka-python

/// Seconds since midnight of `HH:MM:SS.frac` at the start of `s`.
fn time_of_day(s: &str) -> Option<f64> {
    let t = s.get(..8)?;
    let mut it = t.split(':').map(|x| x.parse::<f64>().ok());
    let (h, m, sec) = (it.next()??, it.next()??, it.next()??);
    let frac = s
        .get(8..)
        .and_then(|r| r.strip_prefix(['.', ',']))
        .map(|r| {
            r.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .and_then(|d| format!("0.{d}").parse::<f64>().ok())
        .unwrap_or(0.0);
    Some(h * 3600.0 + m * 60.0 + sec + frac)
}

/// The time of day of a decoded message (the capture's times are UTC, as the logs').
fn msg_time(m: &J) -> f64 {
    let t = m["time"].as_str().expect("time");
    time_of_day(t.split('T').nth(1).expect("T")).expect("time of day")
}

/// One frame a client logged: which way, its local port, correlation id, and what else the
/// line says.
#[derive(Debug)]
struct Wire {
    time: f64,
    response: bool,
    port: u16,
    corr: i64,
    key: Option<i64>,
    version: Option<i64>,
    bytes: Option<u64>,
    /// The printed message (kafka-python), for field values.
    data: String,
}

/// franz-go's `WIRE port=P > request api_key=K (Name) vV corr=C client_id="X" bytes=B` and
/// `WIRE port=P < response api_key=K (Name) vV corr=C bytes=B` lines.
fn franz_wire(text: &str) -> Vec<Wire> {
    let mut out = Vec::new();
    for l in text.lines() {
        let response = if l.contains(" < response api_key=") {
            true
        } else if l.contains(" > request api_key=") {
            false
        } else {
            continue;
        };
        let num = |k: &str, ends: &[char]| after(l, k, ends).and_then(|s| s.parse().ok());
        out.push(Wire {
            time: time_of_day(l).expect("time"),
            response,
            port: num("WIRE port=", &[' ']).expect("port") as u16,
            corr: num(" corr=", &[' ']).expect("corr"),
            key: num("api_key=", &[' ']),
            version: num(") v", &[' ']),
            bytes: after(l, "bytes=", &[' ']).and_then(|s| s.parse().ok()),
            data: String::new(),
        });
    }
    out
}

/// kafka-python's `<KafkaConnection ... host=[127.0.0.2:9092<-54458] ...> Request 47:
/// FetchRequest(version=12, ...)` and `...>: Response 46 (148.9 ms): FetchResponse(version=12,
/// ...)` lines.
fn python_wire(text: &str) -> Vec<Wire> {
    let mut out = Vec::new();
    for l in text.lines() {
        if !l.contains("kafka.net.connection") || l.contains("more characters cut]") {
            continue;
        }
        let (response, corr, data) = if let Some(c) = after(l, "> Request ", &[':']) {
            (
                false,
                c,
                after(l, "> Request ", &[])
                    .and_then(|r| r.split_once(": "))
                    .map(|x| x.1),
            )
        } else if let Some(c) = after(l, ">: Response ", &[' ']) {
            (true, c, after(l, " ms): ", &[]))
        } else {
            continue;
        };
        let Some(port) = after(l, "<-", &[']']).and_then(|p| p.parse().ok()) else {
            continue;
        };
        out.push(Wire {
            time: time_of_day(l).expect("time"),
            response,
            port,
            corr: corr.parse().expect("corr"),
            key: None,
            version: after(l, "(version=", &[',', ')']).and_then(|s| s.parse().ok()),
            bytes: None,
            data: data.unwrap_or("").to_string(),
        });
    }
    out
}

/// kafka-python's field names (snake_case) compared with kdissect's, as for Java.
const PYTHON_FIELDS: &[&str] = &[
    "error_code",
    "cluster_id",
    "node_id",
    "host",
    "port",
    "controller_id",
    "partition_index",
    "base_offset",
    "high_watermark",
    "last_stable_offset",
    "log_start_offset",
    "committed_offset",
    "fetch_offset",
    "producer_id",
    "generation_id",
    "member_id",
    "session_id",
    "session_epoch",
    "throttle_time_ms",
];

fn snake_to_pascal(s: &str) -> String {
    s.split('_').map(pascal).collect()
}

fn compare_python(w: &Wire, msg: &J) -> Result<usize, String> {
    let mut n = 0;
    for f in PYTHON_FIELDS {
        let ours: Vec<String> = java_values(&w.data, f)
            .into_iter()
            .map(|v| if v == "None" { "null".into() } else { v })
            .collect();
        let theirs = decoded_values(&msg["body"], &snake_to_pascal(f));
        same_values(&ours, &theirs).map_err(|e| format!("field {f}: {e}"))?;
        n += theirs.len();
    }
    Ok(n)
}

/// Every frame franz-go and kafka-python logged while the capture ran is in it, on the
/// connection of the same local port, with the same correlation id (and API, version and size
/// where the log says them, and kafka-python's printed field values). Responses count only
/// where their request was captured too.
#[test]
fn go_and_python_wire_logs_are_the_capture() {
    let mut checked = 0;
    let mut values = 0;
    for name in captures() {
        let cap = Capture::load(&name);
        let first = cap.msgs.iter().map(msg_time).fold(f64::MAX, f64::min);
        let last = cap.msgs.iter().map(msg_time).fold(0.0, f64::max);
        let logs = client_logs(&name);
        for (log, parse) in [
            ("franz", franz_wire as fn(&str) -> Vec<Wire>),
            ("kafka-python", python_wire),
        ] {
            let Some(text) = logs.get(log) else { continue };
            let wires = parse(text);
            let requests: HashMap<(u16, i64), f64> = wires
                .iter()
                .filter(|w| !w.response)
                .map(|w| ((w.port, w.corr), w.time))
                .collect();
            for w in &wires {
                let sent = if w.response {
                    requests.get(&(w.port, w.corr)).copied()
                } else {
                    Some(w.time)
                };
                // Well inside the capture (1 s margins), so certainly captured.
                let inside = sent.is_some_and(|t| t > first + 1.0) && w.time < last - 1.0;
                let found = cap.msgs.iter().find(|m| {
                    let (dir, addr) = if w.response {
                        ("response", &m["dst"])
                    } else {
                        ("request", &m["src"])
                    };
                    m["direction"] == dir
                        && port_of(addr) == Some(w.port)
                        && m["correlation_id"] == w.corr
                });
                let Some(m) = found else {
                    assert!(!inside, "{name}: {log} logged {w:?}, not in the capture");
                    continue;
                };
                if let Some(k) = w.key {
                    assert_eq!(m["api_key"], k, "{name}: frame {}: {w:?}", frame(m));
                }
                if let Some(v) = w.version {
                    assert_eq!(m["api_version"], v, "{name}: frame {}: {w:?}", frame(m));
                }
                if let Some(b) = w.bytes {
                    assert_eq!(m["size"], b, "{name}: frame {}: {w:?}", frame(m));
                }
                if w.data.is_empty() {
                    checked += 1;
                    continue;
                }
                match compare_python(w, m) {
                    Ok(n) => values += n,
                    Err(e) => panic!("{name}: frame {}: {log} corr {}: {e}", frame(m), w.corr),
                }
                checked += 1;
            }
        }
    }
    eprintln!("compared {checked} franz-go and kafka-python frames, {values} values");
    assert!(checked >= 200, "only {checked} frames checked");
}

// ------------------------------------------------------------------ tshark and exit status

fn tshark() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("tshark"))
        .find(|p| p.is_file())
}

/// Every Kafka PDU tshark finds: frame, correlation id, API key (when tshark knows it).
fn tshark_pdus(tshark: &Path, file: &Path) -> Vec<(u64, i64, Option<i64>)> {
    let mut cmd = Command::new(tshark);
    cmd.arg("-r").arg(file);
    for p in PORTS {
        cmd.args(["-d", &format!("tcp.port=={p},kafka")]);
    }
    cmd.args([
        "-Y",
        "kafka",
        "-T",
        "fields",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=|",
    ]);
    for f in ["frame.number", "kafka.correlation_id", "kafka.api_key"] {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("run tshark");
    let mut pdus = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        let Some(Ok(frame)) = cols.first().map(|f| f.parse::<u64>()) else {
            continue;
        };
        let corrs: Vec<i64> = cols
            .get(1)
            .into_iter()
            .flat_map(|c| c.split([',', '|']))
            .filter_map(|c| c.parse().ok())
            .collect();
        let keys: Vec<i64> = cols
            .get(2)
            .into_iter()
            .flat_map(|c| c.split([',', '|']))
            .filter_map(|c| c.parse().ok())
            .collect();
        for (i, c) in corrs.iter().enumerate() {
            // tshark lists the API key of each PDU only when it knows it; pair them only
            // when every PDU of the frame has one.
            let key = (keys.len() == corrs.len()).then(|| keys[i]);
            pdus.push((frame, *c, key));
        }
    }
    pdus
}

/// What tshark finds that kdissect does not show: (frame, correlation id, API key).
fn missing_from_kdissect(name: &str, tshark: &Path) -> (usize, Vec<(u64, i64, Option<i64>)>) {
    let msgs = decoded(name);
    let ours: BTreeSet<(u64, i64)> = msgs
        .iter()
        .filter_map(|m| Some((frame(m), m["correlation_id"].as_i64()?)))
        .collect();
    let keys: BTreeMap<(u64, i64), Option<i64>> = msgs
        .iter()
        .filter_map(|m| {
            Some((
                (frame(m), m["correlation_id"].as_i64()?),
                m["api_key"].as_i64(),
            ))
        })
        .collect();
    let pdus = tshark_pdus(tshark, &pcap(name));
    let mut missing = Vec::new();
    for &(f, c, k) in &pdus {
        let found = ours.contains(&(f, c))
            && (k.is_none()
                || keys
                    .get(&(f, c))
                    .copied()
                    .flatten()
                    .is_none_or(|ours| Some(ours) == k));
        if !found {
            missing.push((f, c, k));
        }
    }
    (pdus.len(), missing)
}

#[test]
fn every_pdu_tshark_finds_is_in_kdissects_output() {
    let Some(tshark) = tshark() else {
        eprintln!("tshark is not installed: skipped");
        return;
    };
    let mut report = Vec::new();
    for name in captures() {
        let (n, missing) = missing_from_kdissect(&name, &tshark);
        assert!(n > 1000, "{name}: tshark found only {n} PDUs");
        if !missing.is_empty() {
            report.push(format!(
                "{name}: {} of {n} PDUs missing (frame, corr, key): {missing:?}",
                missing.len()
            ));
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// A capture that starts mid-stream, where nothing is lost after the start, is not damage,
/// and neither is a connection a broker's restart or death reset inside a frame (every byte
/// sent was captured): kdissect exits 0 on every cluster capture.
#[test]
fn undamaged_cluster_captures_exit_0() {
    for name in captures() {
        let (code, _, err) = kdissect(&["-q"], &pcap(&name));
        assert_eq!(code, Some(0), "{name}: {err}");
    }
}
