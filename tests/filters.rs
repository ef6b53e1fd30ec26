//! Display filters on the real samples: what each filter selects through the library must be
//! what the same condition selects when computed independently from `kdissect --json` of the
//! same capture (topics and partitions found through the schema files themselves, not the
//! registry).

use kdissect::filter::{
    from_flags, Builtin, ExchangeFields, FieldPath, FieldValue, Fields, Filter, RecordFields,
};
use kdissect::kafka::stream::{Notice, Record, Sink};
use kdissect::pipeline::{run, CaptureSink, Health, Options};
use serde_json::Value as J;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Which message: (frame, stream, correlation id, direction).
type Key = (u64, u64, i64, String);

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
}

// ---------------------------------------------------------------------------------------
// The library side: every message of a capture, each filter run on it.

/// What the filters need of a message after the capture is read: its key, and a copy of
/// its built-in fields (for judging exchanges, where both halves must be at hand).
struct Seen {
    key: Key,
    request_frame: Option<u64>,
    builtins: HashMap<Builtin, Vec<FieldValue>>,
}

impl Fields for Seen {
    fn builtin(&self, b: Builtin) -> Vec<FieldValue> {
        self.builtins.get(&b).cloned().unwrap_or_default()
    }
    fn path(&self, _: &FieldPath) -> Vec<FieldValue> {
        Vec::new()
    }
}

struct Collect {
    filters: Vec<Filter>,
    /// For each filter, the keys it passed.
    passed: Vec<Vec<Key>>,
    seen: Vec<Seen>,
}

fn key_of(rec: &Record<'_>) -> Key {
    (
        rec.frame,
        u64::from(rec.stream),
        rec.msg.correlation_id.map_or(-1, i64::from),
        rec.msg.direction.as_str().to_string(),
    )
}

impl Sink for Collect {
    fn message(&mut self, rec: &Record<'_>) {
        let fields = RecordFields::new(rec);
        let key = key_of(rec);
        for (f, passed) in self.filters.iter().zip(self.passed.iter_mut()) {
            if f.matches(&fields) {
                passed.push(key.clone());
            }
            assert_eq!(f.matches(&fields), f.matches_record(rec));
        }
        self.seen.push(Seen {
            key,
            request_frame: rec.request.map(|r| r.frame),
            builtins: Builtin::ALL
                .iter()
                .map(|b| (*b, fields.builtin(*b)))
                .collect(),
        });
    }
    fn notice(&mut self, _: &Notice) {}
}

impl CaptureSink for Collect {}

fn run_filters(pcap: &[u8], exprs: &[String]) -> Collect {
    let filters = exprs
        .iter()
        .map(|e| Filter::compile(e).unwrap_or_else(|err| panic!("{}", err.render(e))))
        .collect::<Vec<_>>();
    let mut c = Collect {
        passed: vec![Vec::new(); filters.len()],
        filters,
        seen: Vec::new(),
    };
    let mut h = Health::default();
    let err = run(pcap, &Options::default(), &mut c, &mut h);
    assert!(err.is_ok(), "{err:?}");
    c
}

// ---------------------------------------------------------------------------------------
// The JSON side.

fn json_lines(pcap: &Path, flags: &[&str]) -> Vec<J> {
    let out = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .arg("--json")
        .args(flags)
        .arg(pcap)
        .output()
        .expect("run kdissect");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    text.lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn jkey(m: &J) -> Key {
    (
        m["frame"].as_u64().expect("frame"),
        m["stream"].as_u64().expect("stream"),
        m["correlation_id"].as_i64().unwrap_or(-1),
        m["direction"].as_str().expect("direction").to_string(),
    )
}

/// Field paths of one message spec, by what the field is: topic names (entity type
/// `topicName`), topic ids (`uuid` fields named `TopicId`), partitions (int32 `PartitionIndex`,
/// `Partition`, `PartitionId`, `Index`; `[]int32` `Partitions`, `PartitionIndexes`).
#[derive(Default)]
struct Roles {
    topic_names: HashSet<Vec<String>>,
    topic_ids: HashSet<Vec<String>>,
    partitions: HashSet<Vec<String>>,
    partition_lists: HashSet<Vec<String>>,
}

/// Read from the files under schema/ (current and legacy), keyed by (api key, "request" or
/// "response").
fn roles() -> &'static HashMap<(i64, String), Roles> {
    static R: OnceLock<HashMap<(i64, String), Roles>> = OnceLock::new();
    R.get_or_init(|| {
        let mut out: HashMap<(i64, String), Roles> = HashMap::new();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema");
        for dir in [root.clone(), root.join("legacy")] {
            for entry in std::fs::read_dir(&dir).expect("schema dir") {
                let path = entry.expect("entry").path();
                if path.extension().and_then(|e| e.to_str()) != Some("json") {
                    continue;
                }
                let spec: J = serde_json::from_str(&std::fs::read_to_string(&path).expect("read"))
                    .expect("spec JSON");
                let common: HashMap<String, J> = spec["commonStructs"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|s| (s["name"].as_str().unwrap_or("").to_string(), s.clone()))
                    .collect();
                let key = (
                    spec["apiKey"].as_i64().expect("apiKey"),
                    spec["type"].as_str().expect("type").to_string(),
                );
                let r = out.entry(key).or_default();
                collect_roles(&spec["fields"], &common, &mut Vec::new(), r);
            }
        }
        out
    })
}

fn collect_roles(fields: &J, common: &HashMap<String, J>, at: &mut Vec<String>, r: &mut Roles) {
    for f in fields.as_array().into_iter().flatten() {
        let name = f["name"].as_str().unwrap_or("").to_string();
        let ty = f["type"].as_str().unwrap_or("");
        at.push(name.clone());
        if f["entityType"] == "topicName" {
            r.topic_names.insert(at.clone());
        }
        if ty == "uuid" && name == "TopicId" {
            r.topic_ids.insert(at.clone());
        }
        if ty == "int32"
            && ["PartitionIndex", "Partition", "PartitionId", "Index"].contains(&name.as_str())
        {
            r.partitions.insert(at.clone());
        }
        if ty == "[]int32" && ["Partitions", "PartitionIndexes"].contains(&name.as_str()) {
            r.partition_lists.insert(at.clone());
        }
        let inner = ty.trim_start_matches("[]");
        match (&f["fields"], common.get(inner)) {
            (J::Array(_), _) => collect_roles(&f["fields"], common, at, r),
            (_, Some(s)) => collect_roles(&s["fields"], common, at, r),
            _ => {}
        }
        at.pop();
    }
}

/// A topic of a message as the JSON shows it.
#[derive(Debug, Clone, PartialEq)]
enum Topic {
    Name(String),
    Id(String),
}

/// One JSON message with what the predicates read from it.
struct Msg {
    j: J,
    topics: Vec<Topic>,
    partitions: Vec<i64>,
}

impl Msg {
    fn new(j: J) -> Msg {
        let mut m = Msg {
            topics: Vec::new(),
            partitions: Vec::new(),
            j,
        };
        let key = (
            m.j["api_key"].as_i64().unwrap_or(-1),
            m.j["direction"].as_str().unwrap_or("").to_string(),
        );
        if let Some(r) = roles().get(&key) {
            let (mut t, mut p) = (Vec::new(), Vec::new());
            json_roles(&m.j["body"], r, &mut Vec::new(), &mut t, &mut p);
            m.topics = t;
            m.partitions = p;
        }
        m
    }
    fn s(&self, k: &str) -> Option<&str> {
        self.j[k].as_str()
    }
    fn i(&self, k: &str) -> Option<i64> {
        self.j[k].as_i64()
    }
    fn api(&self) -> &str {
        self.s("api_name").unwrap_or("")
    }
    fn request(&self) -> bool {
        self.s("direction") == Some("request")
    }
    /// Damaged bytes: any problem but "no table for this API or version".
    fn malformed(&self) -> bool {
        self.j["malformed"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|d| {
                let kind = d.get("kind").and_then(J::as_str).unwrap_or("");
                kind != "unknown_api" && kind != "unknown_version"
            })
    }
    fn lat(&self) -> Option<i64> {
        self.i("latency_us")
    }
    fn errors(&self) -> Vec<(i64, String)> {
        self.j["errors"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                (
                    e["code"].as_i64().unwrap_or(0),
                    e["name"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    }
    fn names(&self) -> Vec<&str> {
        self.topics
            .iter()
            .filter_map(|t| match t {
                Topic::Name(n) => Some(n.as_str()),
                Topic::Id(_) => None,
            })
            .collect()
    }
    fn ports(&self) -> Vec<i64> {
        ["src", "dst"]
            .iter()
            .filter_map(|k| self.s(k))
            .filter_map(|a| a.rsplit(':').next()?.parse().ok())
            .collect()
    }
    /// Values at a body path (`Topics[*].Name`), for a message of `api`.
    fn at(&self, api: &str, path: &str) -> Vec<&J> {
        if self.api() != api {
            return Vec::new();
        }
        let mut cur = vec![&self.j["body"]];
        for seg in path.split('.') {
            let (name, idx) = match seg.split_once('[') {
                Some((n, rest)) => (n, Some(rest.trim_end_matches(']'))),
                None => (seg, None),
            };
            let mut next = Vec::new();
            for v in cur {
                let Some(f) = v.get(name) else { continue };
                match (f, idx) {
                    (J::Array(a), None | Some("*")) => next.extend(a.iter()),
                    (J::Array(a), Some(n)) => next.extend(a.get(n.parse::<usize>().unwrap())),
                    (_, Some(_)) => {}
                    (f, None) => next.push(f),
                }
            }
            cur = next;
        }
        cur
    }
    fn ints(&self, api: &str, path: &str) -> Vec<i64> {
        self.at(api, path)
            .iter()
            .filter_map(|v| v.as_i64())
            .collect()
    }
    fn strs(&self, api: &str, path: &str) -> Vec<String> {
        self.at(api, path)
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect()
    }
}

const ZERO_UUID: &str = "00000000-0000-0000-0000-000000000000";

fn json_roles(v: &J, r: &Roles, at: &mut Vec<String>, t: &mut Vec<Topic>, p: &mut Vec<i64>) {
    match v {
        J::Array(a) => a.iter().for_each(|e| json_roles(e, r, at, t, p)),
        J::Object(o) => {
            for (k, val) in o {
                at.push(k.clone());
                if r.topic_names.contains(at) {
                    let names = match val {
                        J::Array(a) => a.iter().filter_map(J::as_str).collect(),
                        other => other.as_str().into_iter().collect::<Vec<_>>(),
                    };
                    t.extend(
                        names
                            .into_iter()
                            .filter(|n| !n.is_empty())
                            .map(|n| Topic::Name(n.into())),
                    );
                }
                if r.topic_ids.contains(at) {
                    match (o.get(&format!("{k}_name")), val.as_str()) {
                        (Some(J::String(n)), _) => t.push(Topic::Name(n.clone())),
                        (_, Some(id)) if id != ZERO_UUID => t.push(Topic::Id(id.into())),
                        _ => {}
                    }
                }
                if r.partitions.contains(at) {
                    p.extend(val.as_i64());
                }
                if r.partition_lists.contains(at) {
                    p.extend(val.as_array().into_iter().flatten().filter_map(J::as_i64));
                }
                if val.is_object() || val.is_array() {
                    json_roles(val, r, at, t, p);
                }
                at.pop();
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------
// The comparison.

type Pred = Box<dyn Fn(&Msg) -> bool>;

/// A filter and the same selection over the JSON. `may_be_empty`: the filter is expected to
/// select nothing in this sample (or may); otherwise an empty selection fails the test, as
/// it would prove little.
struct Case {
    expr: String,
    pred: Pred,
    may_be_empty: bool,
}

fn case(expr: &str, pred: impl Fn(&Msg) -> bool + 'static) -> Case {
    Case {
        expr: expr.to_string(),
        pred: Box::new(pred),
        may_be_empty: false,
    }
}

fn empty_ok(expr: &str, pred: impl Fn(&Msg) -> bool + 'static) -> Case {
    Case {
        may_be_empty: true,
        ..case(expr, pred)
    }
}

fn check_pcap(name: &str, pcap: &Path, cases: Vec<Case>) {
    let bytes = std::fs::read(pcap).expect("read capture");
    let exprs: Vec<String> = cases.iter().map(|c| c.expr.clone()).collect();
    let got = run_filters(&bytes, &exprs);
    let lines: Vec<Msg> = json_lines(pcap, &[]).into_iter().map(Msg::new).collect();
    let all_json: Vec<Key> = lines.iter().map(|m| jkey(&m.j)).collect();
    let all_lib: Vec<Key> = got.seen.iter().map(|s| s.key.clone()).collect();
    assert_eq!(
        all_lib, all_json,
        "{name}: the library and --json list different messages"
    );
    let mut failures = Vec::new();
    for (c, passed) in cases.iter().zip(&got.passed) {
        let want: Vec<Key> = lines
            .iter()
            .filter(|m| (c.pred)(m))
            .map(|m| jkey(&m.j))
            .collect();
        if *passed != want {
            failures.push(format!(
                "{name}: `{}`\n  filter selects {passed:?}\n  JSON selects   {want:?}",
                c.expr
            ));
        } else if want.is_empty() && !c.may_be_empty {
            failures.push(format!("{name}: `{}` selects nothing", c.expr));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn check(name: &str, cases: Vec<Case>) {
    check_pcap(name, &sample(name), cases);
}

/// The capture without one packet (classic pcap, as the samples are).
fn without_packet(pcap: &[u8], number: usize) -> Vec<u8> {
    let mut out = pcap[..24].to_vec();
    let mut at = 24;
    let mut n = 0;
    while at + 16 <= pcap.len() {
        let len = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
        n += 1;
        if n != number {
            out.extend_from_slice(&pcap[at..at + 16 + len]);
        }
        at += 16 + len;
    }
    out
}

// ---------------------------------------------------------------------------------------

#[test]
fn admin_api_version_direction_corr_client_id() {
    check(
        "ak44-admin.pcap",
        vec![
            case("api == Metadata", |m| m.api() == "Metadata"),
            case("api == 3", |m| m.i("api_key") == Some(3)),
            case("api == describe-cluster", |m| m.api() == "DescribeCluster"),
            case("api != Metadata", |m| m.api() != "Metadata"),
            case("api contains \"Topics\"", |m| m.api().contains("Topics")),
            case("api matches \"^Describe\"", |m| {
                m.api().starts_with("Describe")
            }),
            case("api > 30", |m| m.i("api_key").unwrap() > 30),
            case("version >= 7 && version < 13", |m| {
                (7..13).contains(&m.i("api_version").unwrap())
            }),
            case("version <= 2", |m| m.i("api_version").unwrap() <= 2),
            case("request", |m| m.request()),
            case("response", |m| !m.request()),
            case("!request", |m| !m.request()),
            case("not response", |m| m.request()),
            case("request == true", |m| m.request()),
            case("response == false", |m| m.request()),
            case("corr == 3", |m| m.i("correlation_id") == Some(3)),
            case("corr == 0x3", |m| m.i("correlation_id") == Some(3)),
            case("corr > 15", |m| m.i("correlation_id").unwrap() > 15),
            case("corr != 0", |m| m.i("correlation_id") != Some(0)),
            case("client_id == \"ak44-admin\"", |m| {
                m.s("client_id") == Some("ak44-admin")
            }),
            case("client_id contains admin", |m| {
                m.s("client_id").is_some_and(|c| c.contains("admin"))
            }),
            case("client_id matches \"^ak44-\"", |m| {
                m.s("client_id").is_some_and(|c| c.starts_with("ak44-"))
            }),
            case("client_id", |m| m.s("client_id").is_some()),
            case("!client_id", |m| m.s("client_id").is_none()),
            empty_ok("client_id != \"ak44-admin\"", |m| {
                m.s("client_id").is_some_and(|c| c != "ak44-admin")
            }),
        ],
    );
}

#[test]
fn admin_latency_error_size_stream_addresses() {
    check(
        "ak44-admin.pcap",
        vec![
            case("latency", |m| m.lat().is_some()),
            case("latency > 10ms", |m| m.lat().is_some_and(|l| l > 10_000)),
            case("latency <= 2ms", |m| m.lat().is_some_and(|l| l <= 2_000)),
            case("latency >= 1.5ms && latency < 3ms", |m| {
                m.lat().is_some_and(|l| (1_500..3_000).contains(&l))
            }),
            case("latency > 0.1s", |m| m.lat().is_some_and(|l| l > 100_000)),
            case("latency < 1600us", |m| m.lat().is_some_and(|l| l < 1_600)),
            empty_ok("latency > 2m", |m| m.lat().is_some_and(|l| l > 120_000_000)),
            case("api == Metadata && latency > 20ms", |m| {
                m.api() == "Metadata" && m.lat().is_some_and(|l| l > 20_000)
            }),
            empty_ok("api == Metadata && latency > 50ms", |m| {
                m.api() == "Metadata" && m.lat().is_some_and(|l| l > 50_000)
            }),
            case("error", |m| !m.errors().is_empty()),
            case("!error", |m| m.errors().is_empty()),
            case("error == TOPIC_ALREADY_EXISTS", |m| {
                m.errors().iter().any(|e| e.1 == "TOPIC_ALREADY_EXISTS")
            }),
            case("error == 36", |m| m.errors().iter().any(|e| e.0 == 36)),
            case("error != 36", |m| m.errors().iter().any(|e| e.0 != 36)),
            case("error matches \"^UNKNOWN\"", |m| {
                m.errors().iter().any(|e| e.1.starts_with("UNKNOWN"))
            }),
            case("error contains GROUP", |m| {
                m.errors().iter().any(|e| e.1.contains("GROUP"))
            }),
            case("error >= 69", |m| m.errors().iter().any(|e| e.0 >= 69)),
            case("size > 200", |m| m.i("size").unwrap() > 200),
            case("size <= 29", |m| m.i("size").unwrap() <= 29),
            case("size == 899", |m| m.i("size") == Some(899)),
            case("stream == 1", |m| m.i("stream") == Some(1)),
            case("stream != 1", |m| m.i("stream") != Some(1)),
            case("stream < 1", |m| m.i("stream") == Some(0)),
            case("src == \"127.0.0.1:9092\"", |m| {
                m.s("src") == Some("127.0.0.1:9092")
            }),
            case("src == 127.0.0.1:9092", |m| {
                m.s("src") == Some("127.0.0.1:9092")
            }),
            case("dst contains \":9092\"", |m| {
                m.s("dst").unwrap().contains(":9092")
            }),
            case(r#"dst matches "^127\.0\.0\.1:9092$""#, |m| {
                m.s("dst") == Some("127.0.0.1:9092")
            }),
            case("src != 127.0.0.1:9092", |m| {
                m.s("src") != Some("127.0.0.1:9092")
            }),
            case("port == 9092", |m| m.ports().contains(&9092)),
            case("port == 53884", |m| m.ports().contains(&53884)),
            case("port != 9092", |m| m.ports().iter().any(|p| *p != 9092)),
            case("port < 53880", |m| m.ports().iter().any(|p| *p < 53880)),
            case("!malformed", |_| true),
            empty_ok("malformed", |_| false),
            case("!assumed", |_| true),
            empty_ok("assumed == true", |_| false),
        ],
    );
}

#[test]
fn admin_topics_and_partitions() {
    check(
        "ak44-admin.pcap",
        vec![
            case("topic", |m| !m.topics.is_empty()),
            case("topic == orders", |m| m.names().contains(&"orders")),
            case("topic == \"orders\" && response && latency > 10ms", |m| {
                m.names().contains(&"orders") && !m.request() && m.lat().is_some_and(|l| l > 10_000)
            }),
            case("topic != orders", |m| {
                m.names().iter().any(|n| *n != "orders")
            }),
            case("topic contains pay", |m| {
                m.names().iter().any(|n| n.contains("pay"))
            }),
            case("topic matches \"^audit-\"", |m| {
                m.names().iter().any(|n| n.starts_with("audit-"))
            }),
            case("topic > orders", |m| {
                m.names().iter().any(|n| *n > "orders")
            }),
            // An id nothing named: it stays an id.
            case("topic == deadbeef-0000-4000-8000-000000000001", |m| {
                m.topics
                    .contains(&Topic::Id("deadbeef-0000-4000-8000-000000000001".into()))
            }),
            // The id of `orders`, where the message shows it without its name.
            case("topic == f4dc551f-54a1-44d8-9903-fe37835794c9", |m| {
                m.topics
                    .contains(&Topic::Id("f4dc551f-54a1-44d8-9903-fe37835794c9".into()))
            }),
            case("partition", |m| m.partitions.iter().any(|p| *p != 0)),
            case("partition >= 0", |m| !m.partitions.is_empty()),
            case("partition == 0", |m| m.partitions.contains(&0)),
            case("partition > 1", |m| m.partitions.iter().any(|p| *p > 1)),
            case("partition == 2 && request", |m| {
                m.partitions.contains(&2) && m.request()
            }),
            case("topic == orders && partition == 1", |m| {
                m.names().contains(&"orders") && m.partitions.contains(&1)
            }),
        ],
    );
}

#[test]
fn admin_schema_paths() {
    const DEAD: &str = "deadbeef-0000-4000-8000-000000000001";
    check(
        "ak44-admin.pcap",
        vec![
            case("Metadata", |m| m.api() == "Metadata"),
            case("Metadata.Topics", |m| {
                !m.at("Metadata", "Topics[*]").is_empty()
            }),
            case("Metadata.Topics[*].Name == orders", |m| {
                m.strs("Metadata", "Topics[*].Name")
                    .contains(&"orders".into())
            }),
            case("Metadata.Topics.Name == orders", |m| {
                m.strs("Metadata", "Topics.Name").contains(&"orders".into())
            }),
            case("Metadata.Topics[0].Name == orders", |m| {
                m.strs("Metadata", "Topics[0].Name") == ["orders"]
            }),
            case("Metadata.Topics[1].Name", |m| {
                !m.strs("Metadata", "Topics[1].Name").is_empty()
            }),
            case(&format!("Metadata.Topics[*].TopicId == {DEAD}"), |m| {
                m.strs("Metadata", "Topics[*].TopicId")
                    .contains(&DEAD.into())
            }),
            case("Metadata.AllowAutoTopicCreation == true", |m| {
                m.at("Metadata", "AllowAutoTopicCreation")
                    .contains(&&J::Bool(true))
            }),
            case("Metadata.Topics[*].ErrorCode == UNKNOWN_TOPIC_ID", |m| {
                m.ints("Metadata", "Topics[*].ErrorCode").contains(&100)
            }),
            case("CreateTopics.Topics[*].NumPartitions > 2", |m| {
                m.ints("CreateTopics", "Topics[*].NumPartitions")
                    .iter()
                    .any(|n| *n > 2)
            }),
            case(
                "CreateTopics.Topics[*].ErrorCode == TOPIC_ALREADY_EXISTS",
                |m| m.ints("CreateTopics", "Topics[*].ErrorCode").contains(&36),
            ),
            case("DescribeCluster.ClusterId matches \"^8D2\"", |m| {
                m.strs("DescribeCluster", "ClusterId")
                    .iter()
                    .any(|c| c.starts_with("8D2"))
            }),
            case("DescribeCluster.Brokers[*].Port == 9092", |m| {
                m.ints("DescribeCluster", "Brokers[*].Port").contains(&9092)
            }),
            case(
                "!DescribeCluster.ErrorMessage && api == DescribeCluster && response",
                |m| {
                    m.api() == "DescribeCluster"
                        && !m.request()
                        && m.at("DescribeCluster", "ErrorMessage")
                            .iter()
                            .all(|v| v.is_null())
                },
            ),
            case("ApiVersions.ApiKeys[*].MaxVersion >= 17", |m| {
                m.ints("ApiVersions", "ApiKeys[*].MaxVersion")
                    .iter()
                    .any(|v| *v >= 17)
            }),
            case(
                "ApiVersions.ApiKeys[*].ApiKey == DescribeTopicPartitions",
                |m| m.ints("ApiVersions", "ApiKeys[*].ApiKey").contains(&75),
            ),
            // Tagged fields.
            case(
                "ApiVersions.SupportedFeatures[*].Name == \"metadata.version\"",
                |m| {
                    m.strs("ApiVersions", "SupportedFeatures[*].Name")
                        .contains(&"metadata.version".into())
                },
            ),
            case("ApiVersions.FinalizedFeaturesEpoch > 0", |m| {
                m.ints("ApiVersions", "FinalizedFeaturesEpoch")
                    .iter()
                    .any(|v| *v > 0)
            }),
            case(
                "ApiVersions.ClientSoftwareName == \"apache-kafka-java\"",
                |m| m.strs("ApiVersions", "ClientSoftwareName") == ["apache-kafka-java"],
            ),
            case(
                "DescribeConfigs.Results[*].Configs[*].Value contains delete",
                |m| {
                    m.strs("DescribeConfigs", "Results[*].Configs[*].Value")
                        .iter()
                        .any(|v| v.contains("delete"))
                },
            ),
            case(
                "IncrementalAlterConfigs.Resources[*].Configs[*].Name == retention.ms",
                |m| {
                    m.strs("IncrementalAlterConfigs", "Resources[*].Configs[*].Name")
                        .contains(&"retention.ms".into())
                },
            ),
            case("ListOffsets.Topics[*].Partitions[*].Timestamp == -3", |m| {
                m.ints("ListOffsets", "Topics[*].Partitions[*].Timestamp")
                    .contains(&-3)
            }),
            case(
                "ConsumerGroupDescribe.Groups[*].ErrorCode == GROUP_ID_NOT_FOUND",
                |m| {
                    m.ints("ConsumerGroupDescribe", "Groups[*].ErrorCode")
                        .contains(&69)
                },
            ),
            case(
                "FindCoordinator.CoordinatorKeys matches \"-kip848$\"",
                |m| {
                    m.strs("FindCoordinator", "CoordinatorKeys")
                        .iter()
                        .any(|k| k.ends_with("-kip848"))
                },
            ),
            empty_ok("Produce.Acks == 0", |_| false),
        ],
    );
}

#[test]
fn admin_precedence_and_words() {
    check(
        "ak44-admin.pcap",
        vec![
            case("request && api == Metadata || error", |m| {
                (m.request() && m.api() == "Metadata") || !m.errors().is_empty()
            }),
            case("request && (api == Metadata || error)", |m| {
                m.request() && (m.api() == "Metadata" || !m.errors().is_empty())
            }),
            case("!request && !(api == Metadata) && latency > 10ms", |m| {
                !m.request() && m.api() != "Metadata" && m.lat().is_some_and(|l| l > 10_000)
            }),
            case(
                "api == Metadata and not response or api eq DescribeCluster",
                |m| (m.api() == "Metadata" && m.request()) || m.api() == "DescribeCluster",
            ),
            case("not (stream == 0 or corr lt 10) and size ge 100", |m| {
                !(m.i("stream") == Some(0) || m.i("correlation_id").unwrap() < 10)
                    && m.i("size").unwrap() >= 100
            }),
            case("!!response && corr ne 3 && corr gt 2 && corr le 5", |m| {
                !m.request() && [4, 5].contains(&m.i("correlation_id").unwrap())
            }),
        ],
    );
}

#[test]
fn consumer_group_and_fetch() {
    check(
        "ak44-consumer-classic.pcap",
        vec![
            case("error == MEMBER_ID_REQUIRED", |m| {
                m.errors().iter().any(|e| e.1 == "MEMBER_ID_REQUIRED")
            }),
            case("error == 79", |m| m.errors().iter().any(|e| e.0 == 79)),
            case("api == JoinGroup && response && error", |m| {
                m.api() == "JoinGroup" && !m.request() && !m.errors().is_empty()
            }),
            case("topic == orders && api == Fetch", |m| {
                m.names().contains(&"orders") && m.api() == "Fetch"
            }),
            case("topic", |m| !m.topics.is_empty()),
            case("partition == 2 && request", |m| {
                m.partitions.contains(&2) && m.request()
            }),
            case("partition", |m| m.partitions.iter().any(|p| *p != 0)),
            case("Fetch.Topics[*].Partitions[*].FetchOffset > 0", |m| {
                m.ints("Fetch", "Topics[*].Partitions[*].FetchOffset")
                    .iter()
                    .any(|o| *o > 0)
            }),
            case("Fetch.Responses[*].Partitions[*].Records", |m| {
                m.at("Fetch", "Responses[*].Partitions[*].Records")
                    .iter()
                    .any(|r| !r.is_null())
            }),
            case(
                "OffsetCommit.Topics[*].Partitions[*].CommittedOffset > 0",
                |m| {
                    m.ints("OffsetCommit", "Topics[*].Partitions[*].CommittedOffset")
                        .iter()
                        .any(|o| *o > 0)
                },
            ),
            case(
                "OffsetFetch.Groups[*].Topics[*].PartitionIndexes == 1",
                |m| {
                    m.ints("OffsetFetch", "Groups[*].Topics[*].PartitionIndexes")
                        .contains(&1)
                },
            ),
            case("JoinGroup.Protocols[*].Name == range", |m| {
                m.strs("JoinGroup", "Protocols[*].Name")
                    .contains(&"range".into())
            }),
            case(
                "JoinGroup.MemberId matches \"^ak44-consumer-classic-\"",
                |m| {
                    m.strs("JoinGroup", "MemberId")
                        .iter()
                        .any(|s| s.starts_with("ak44-consumer-classic-"))
                },
            ),
            case("JoinGroup.GroupInstanceId", |_| false).may_be_empty(),
            case("stream == 2 && latency > 40ms", |m| {
                m.i("stream") == Some(2) && m.lat().is_some_and(|l| l > 40_000)
            }),
            case("latency > 0.4s", |m| m.lat().is_some_and(|l| l > 400_000)),
        ],
    );
}

#[test]
fn produce_paths_and_topic_ids() {
    check(
        "ak44-produce-gzip.pcap",
        vec![
            case("Produce.Acks == -1", |m| {
                m.ints("Produce", "Acks").contains(&-1)
            }),
            empty_ok("Produce.Acks == 0", |m| {
                m.ints("Produce", "Acks").contains(&0)
            }),
            case("Produce.TopicData[*].PartitionData[*].Index == 2", |m| {
                m.ints("Produce", "TopicData[*].PartitionData[*].Index")
                    .contains(&2)
            }),
            case("Produce.TopicData[*].PartitionData[*].Records", |m| {
                !m.at("Produce", "TopicData[*].PartitionData[*].Records")
                    .is_empty()
            }),
            case(
                "Produce.TopicData[*].TopicId == 51a9583f-25c0-48a9-aab7-b5d1712be2d0",
                |m| {
                    m.strs("Produce", "TopicData[*].TopicId")
                        .contains(&"51a9583f-25c0-48a9-aab7-b5d1712be2d0".into())
                },
            ),
            case(
                "!Produce.TransactionalId && request && api == Produce",
                |m| m.request() && m.api() == "Produce",
            ),
            case("api == Produce && topic == orders", |m| {
                m.api() == "Produce" && m.names().contains(&"orders")
            }),
            case("partition == 1 && api == Produce", |m| {
                m.api() == "Produce" && m.partitions.contains(&1)
            }),
            case("error == COORDINATOR_LOAD_IN_PROGRESS", |m| {
                m.errors()
                    .iter()
                    .any(|e| e.1 == "COORDINATOR_LOAD_IN_PROGRESS")
            }),
            case("InitProducerId.ProducerId >= 0", |m| {
                m.ints("InitProducerId", "ProducerId")
                    .iter()
                    .any(|p| *p >= 0)
            }),
            case("size > 1000", |m| m.i("size").unwrap() > 1000),
        ],
    );
}

#[test]
fn kgen_malformed_and_older_versions() {
    check(
        "kgen-all-versions.pcap",
        vec![
            case("malformed", |m| m.malformed()),
            case("!malformed && api == Metadata && version == 13", |m| {
                !m.malformed() && m.api() == "Metadata" && m.i("api_version") == Some(13)
            }),
            case("malformed == true && response", |m| {
                !m.request() && m.malformed()
            }),
            case(
                "Metadata.Topics[*].ErrorCode == UNKNOWN_TOPIC_OR_PARTITION",
                |m| m.ints("Metadata", "Topics[*].ErrorCode").contains(&3),
            ),
            empty_ok("Metadata.Topics[*].Partitions[*].ErrorCode != 0", |m| {
                m.ints("Metadata", "Topics[*].Partitions[*].ErrorCode")
                    .iter()
                    .any(|c| *c != 0)
            }),
            case("error == INVALID_TOPIC_EXCEPTION", |m| {
                m.errors().iter().any(|e| e.0 == 17)
            }),
            case("topic matches \"^auto-create-v[0-3]$\"", |m| {
                m.names().iter().any(|n| {
                    ["0", "1", "2", "3"].contains(&n.strip_prefix("auto-create-v").unwrap_or(""))
                })
            }),
            case("request && !client_id", |m| {
                m.request() && m.s("client_id").is_none()
            }),
            case("client_id == kgen-bulk", |m| {
                m.s("client_id") == Some("kgen-bulk")
            }),
            case("DescribeTopicPartitions.Topics[*].Name", |m| {
                m.strs("DescribeTopicPartitions", "Topics[*].Name")
                    .iter()
                    .any(|n| !n.is_empty())
            }),
            case("stream == 3 && response && size > 10000", |m| {
                m.i("stream") == Some(3) && !m.request() && m.i("size").unwrap() > 10000
            }),
            case("version == 0 && api == Metadata", |m| {
                m.i("api_version") == Some(0) && m.api() == "Metadata"
            }),
            case("latency < 300us", |m| m.lat().is_some_and(|l| l < 300)),
        ],
    );
}

#[test]
fn assumed_when_the_request_was_not_captured() {
    // ak44-admin.pcap without packet 18, the DescribeCluster request: its response is read
    // with an assumed API.
    let bytes = without_packet(&std::fs::read(sample("ak44-admin.pcap")).unwrap(), 18);
    let dir = std::env::temp_dir().join(format!("kdissect-filters-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("admin-no18.pcap");
    std::fs::write(&path, &bytes).unwrap();
    check_pcap(
        "ak44-admin.pcap without packet 18",
        &path,
        vec![
            case("assumed", |m| {
                m.j.get("assumed").is_some() || m.j.get("assumed_version").is_some()
            }),
            case("assumed && api == DescribeCluster && !latency", |m| {
                m.j.get("assumed").is_some() && m.api() == "DescribeCluster"
            }),
            case("!assumed", |m| m.j.get("assumed").is_none()),
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
}

impl Case {
    fn may_be_empty(mut self) -> Case {
        self.may_be_empty = true;
        self
    }
}

// ---------------------------------------------------------------------------------------
// The flags and their expressions.

/// The exchange flags and what `from_flags` makes of them select the same messages: the
/// binary filtering with the flags, and the expression evaluated on each exchange (request
/// and response read together).
#[test]
fn from_flags_selects_what_the_flags_select() {
    struct Flags {
        apis: &'static [i16],
        errors: bool,
        topic: Option<&'static str>,
        stream: Option<u32>,
        corr: Option<i32>,
        client_id: Option<&'static str>,
    }
    const NONE: Flags = Flags {
        apis: &[],
        errors: false,
        topic: None,
        stream: None,
        corr: None,
        client_id: None,
    };
    let cases: Vec<(&str, Vec<&str>, Flags)> = vec![
        (
            "ak44-admin.pcap",
            vec!["--api", "metadata"],
            Flags { apis: &[3], ..NONE },
        ),
        (
            "ak44-admin.pcap",
            vec!["--api", "metadata,60", "--errors"],
            Flags {
                apis: &[3, 60],
                errors: true,
                ..NONE
            },
        ),
        (
            "ak44-admin.pcap",
            vec!["--errors"],
            Flags {
                errors: true,
                ..NONE
            },
        ),
        (
            "ak44-admin.pcap",
            vec!["--topic", "orders"],
            Flags {
                topic: Some("orders"),
                ..NONE
            },
        ),
        (
            "ak44-admin.pcap",
            vec!["--topic", "payments", "--api", "create-topics"],
            Flags {
                topic: Some("payments"),
                apis: &[19],
                ..NONE
            },
        ),
        (
            "ak44-admin.pcap",
            vec!["--stream", "0"],
            Flags {
                stream: Some(0),
                ..NONE
            },
        ),
        (
            "ak44-admin.pcap",
            vec!["--correlation-id", "3"],
            Flags {
                corr: Some(3),
                ..NONE
            },
        ),
        (
            "ak44-admin.pcap",
            vec!["--client-id", "ak44-admin", "--errors"],
            Flags {
                client_id: Some("ak44-admin"),
                errors: true,
                ..NONE
            },
        ),
        (
            "ak44-consumer-classic.pcap",
            vec!["--topic", "orders", "--stream", "1"],
            Flags {
                topic: Some("orders"),
                stream: Some(1),
                ..NONE
            },
        ),
        (
            "ak44-consumer-classic.pcap",
            vec!["--errors", "--client-id", "ak44-consumer-classic"],
            Flags {
                errors: true,
                client_id: Some("ak44-consumer-classic"),
                ..NONE
            },
        ),
        (
            "kgen-all-versions.pcap",
            vec!["--errors", "--api", "metadata"],
            Flags {
                errors: true,
                apis: &[3],
                ..NONE
            },
        ),
    ];
    for (name, args, f) in cases {
        let expr = from_flags(f.apis, f.errors, f.topic, f.stream, f.corr, f.client_id);
        let filter = Filter::compile(&expr).unwrap_or_else(|e| panic!("{}", e.render(&expr)));
        let path = sample(name);
        let got = run_filters(&std::fs::read(&path).unwrap(), &[]);
        let mut selected: Vec<Key> = Vec::new();
        let by_frame: HashMap<u64, &Seen> = got
            .seen
            .iter()
            .filter(|s| s.key.3 == "request")
            .map(|s| (s.key.0, s))
            .collect();
        let answered: HashSet<u64> = got.seen.iter().filter_map(|s| s.request_frame).collect();
        for s in &got.seen {
            let pair: Vec<&Seen> = match (s.key.3.as_str(), s.request_frame) {
                ("request", _) if answered.contains(&s.key.0) => continue,
                ("request", _) => vec![s],
                (_, Some(rf)) => by_frame.get(&rf).into_iter().copied().chain([s]).collect(),
                (_, None) => vec![s],
            };
            let ex = ExchangeFields::new(
                pair.first().map(|p| *p as &dyn Fields),
                pair.get(1).map(|p| *p as &dyn Fields),
            );
            if filter.matches(&ex) {
                selected.extend(pair.iter().map(|p| p.key.clone()));
            }
        }
        selected.sort();
        let mut want: Vec<Key> = json_lines(&path, &args).iter().map(jkey).collect();
        want.sort();
        assert!(!want.is_empty(), "{name} {args:?} selects nothing");
        assert_eq!(selected, want, "{name} {args:?} as `{expr}`");
    }
}

/// Every `-Y '...'` example, every path in the schema-field examples and every backquoted
/// expression that starts with a field in docs/filters.md compiles.
#[test]
fn the_documented_examples_compile() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/filters.md"))
            .expect("docs/filters.md");
    let mut n = 0;
    for part in doc.split("-Y '").skip(1) {
        let expr = part.split('\'').next().unwrap();
        Filter::compile(expr).unwrap_or_else(|e| panic!("{}", e.render(expr)));
        n += 1;
    }
    assert!(n >= 5, "{n} -Y examples");
    let block = doc
        .split("```text\nMetadata.Topics[*]")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the schema-field examples");
    for line in format!("Metadata.Topics[*]{block}").lines() {
        let path = line.split_whitespace().next().unwrap();
        Filter::compile(path).unwrap_or_else(|e| panic!("{}", e.render(path)));
        n += 1;
    }
    // Inline examples: `partition != 0`, `topic matches "^auto-create-v[0-3]$"`, ...
    let fields = [
        "api",
        "error",
        "topic",
        "partition",
        "latency",
        "request",
        "!",
        "Metadata.",
        "ApiVersions.",
        "Fetch.",
        "!(",
    ];
    for piece in doc.split('`').skip(1).step_by(2) {
        let piece = piece.replace("\\|", "|");
        if fields.iter().any(|f| piece.starts_with(f))
            && piece.contains(' ')
            && !piece.contains("...")
        {
            match Filter::compile(&piece) {
                Ok(_) => n += 1,
                Err(e) => {
                    // The error examples must fail, and say so.
                    let documented = [
                        "version == abc",
                        "request == yes",
                        "latency > 50",
                        "api == Metdata",
                        "a == 1 == 2",
                    ];
                    assert!(documented.contains(&piece.as_str()), "{}", e.render(&piece));
                }
            }
        }
    }
    assert!(n >= 25, "{n} examples");
}
