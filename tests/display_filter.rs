//! `-Y EXPR` on the command line: the exchanges it prints, compared with what `--json` says
//! of every message, and the exchange flags as shorthands for expressions.

use serde_json::Value as J;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// A sample's path; a name with no sample of its own is a capture made by [`derived`].
fn sample(name: &str) -> String {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "samples", name]
        .iter()
        .collect();
    if p.exists() {
        return p.to_string_lossy().into_owned();
    }
    derived(name)
}

/// `ak44-admin-no18.pcap`: `ak44-admin.pcap` without packet 18, the DescribeCluster
/// request, so that its response is read with an assumed API.
fn derived(name: &str) -> String {
    assert_eq!(name, "ak44-admin-no18.pcap", "no such sample");
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    if !path.exists() {
        let pcap = std::fs::read(sample("ak44-admin.pcap")).expect("read sample");
        // Classic pcap: a 24-byte file header, then per packet a 16-byte header whose bytes
        // 8..12 are the captured length (little-endian here).
        let mut out = pcap[..24].to_vec();
        let (mut at, mut n) = (24, 0);
        while at + 16 <= pcap.len() {
            let len = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().expect("4 bytes"));
            let end = at + 16 + len as usize;
            n += 1;
            if n != 18 {
                out.extend_from_slice(&pcap[at..end]);
            }
            at = end;
        }
        let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
        std::fs::write(&tmp, out).expect("write capture");
        std::fs::rename(&tmp, &path).expect("rename capture");
    }
    path.to_string_lossy().into_owned()
}

fn kdissect(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run kdissect")
}

/// The frame numbers of the messages a summary run prints (notices left out).
fn frames(args: &[&str]) -> BTreeSet<u64> {
    let o = kdissect(args);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| !l.contains(" !! ") || l.contains(" Request ") || l.contains(" Response "))
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect()
}

/// Every message of a capture as `--json` gives it.
fn messages(name: &str) -> Vec<M> {
    let o = kdissect(&["--json", &sample(name)]);
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<J>(l).ok())
        .filter(|j| j.get("direction").is_some())
        .map(M::new)
        .collect()
}

/// A `--json` message (`m["api_name"]` reads it), with the topics and partitions it names,
/// found as docs/filters.md says from Kafka's schema files under schema/.
struct M {
    j: J,
    /// Topic names, and ids (`"01a229ff-..."`) that the JSON gives no name.
    topics: Vec<Topic>,
    partitions: Vec<i64>,
}

#[derive(Debug, PartialEq)]
enum Topic {
    Name(String),
    Id(String),
}

impl std::ops::Deref for M {
    type Target = J;
    fn deref(&self) -> &J {
        &self.j
    }
}

impl M {
    fn new(j: J) -> M {
        let mut m = M {
            j,
            topics: Vec::new(),
            partitions: Vec::new(),
        };
        let key = (
            m["api_key"].as_i64(),
            m["direction"].as_str().map(String::from),
        );
        if let Some(roles) = roles().get(&key) {
            let (mut t, mut p) = (Vec::new(), Vec::new());
            body_roles(&m["body"], roles, &mut Vec::new(), &mut t, &mut p);
            (m.topics, m.partitions) = (t, p);
        }
        m
    }
    fn str(&self, key: &str) -> Option<&str> {
        self[key].as_str()
    }
    fn int(&self, key: &str) -> Option<i64> {
        self[key].as_i64()
    }
    fn request(&self) -> bool {
        self["direction"] == "request"
    }
    fn response(&self) -> bool {
        self["direction"] == "response"
    }
    fn api(&self) -> &str {
        self.str("api_name").unwrap_or_default()
    }
    fn client_id(&self) -> Option<&str> {
        self.str("client_id")
    }
    fn topic_names(&self) -> impl Iterator<Item = &str> {
        self.topics.iter().filter_map(|t| match t {
            Topic::Name(n) => Some(n.as_str()),
            Topic::Id(_) => None,
        })
    }
    fn partition(&self, p: impl Fn(i64) -> bool) -> bool {
        self.partitions.iter().any(|&i| p(i))
    }
    /// Both ports, from `src` and `dst` (`127.0.0.1:9092`, `[::1]:9092`).
    fn port(&self, p: impl Fn(i64) -> bool) -> bool {
        ["src", "dst"]
            .iter()
            .filter_map(|k| self.str(k)?.rsplit(':').next()?.parse().ok())
            .any(p)
    }
    /// Any error (code, name) of the message for which `p` holds.
    fn error(&self, p: impl Fn(i64, &str) -> bool) -> bool {
        self["errors"].as_array().into_iter().flatten().any(|e| {
            p(
                e["code"].as_i64().unwrap_or_default(),
                e["name"].as_str().unwrap_or_default(),
            )
        })
    }
    /// Damaged bytes: a problem other than "no table for this API or version".
    fn malformed(&self) -> bool {
        self["malformed"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| !matches!(p["kind"].as_str(), Some("unknown_api" | "unknown_version")))
    }
    fn assumed(&self) -> bool {
        self.get("assumed") == Some(&J::Bool(true)) || self.get("assumed_version").is_some()
    }
}

/// Where a message spec has topic names (entity type `topicName`), topic ids (`uuid`
/// fields named `TopicId`) and partitions (int32 `PartitionIndex`, `Partition`,
/// `PartitionId`, `Index`; the elements of `[]int32` `Partitions`, `PartitionIndexes`): field
/// paths, array levels left out.
#[derive(Default)]
struct Roles {
    names: HashSet<Vec<String>>,
    ids: HashSet<Vec<String>>,
    partitions: HashSet<Vec<String>>,
    partition_lists: HashSet<Vec<String>>,
}

/// (API key, `"request"` or `"response"`), as a spec's `apiKey` and `type` give them.
type SpecKey = (Option<i64>, Option<String>);

/// The roles of every (API key, direction), over all versions, current and legacy specs.
fn roles() -> &'static HashMap<SpecKey, Roles> {
    static ROLES: OnceLock<HashMap<SpecKey, Roles>> = OnceLock::new();
    ROLES.get_or_init(|| {
        let mut out: HashMap<_, Roles> = HashMap::new();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema");
        for dir in [root.clone(), root.join("legacy")] {
            for entry in std::fs::read_dir(dir).expect("schema/") {
                let path = entry.expect("schema entry").path();
                if path.extension().is_none_or(|e| e != "json") {
                    continue;
                }
                let spec: J = serde_json::from_str(&std::fs::read_to_string(&path).expect("read"))
                    .expect("a JSON spec");
                let common: HashMap<&str, &J> = spec["commonStructs"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| Some((s["name"].as_str()?, &s["fields"])))
                    .collect();
                let key = (
                    spec["apiKey"].as_i64(),
                    spec["type"].as_str().map(String::from),
                );
                spec_roles(
                    &spec["fields"],
                    &common,
                    &mut Vec::new(),
                    out.entry(key).or_default(),
                );
            }
        }
        out
    })
}

fn spec_roles(fields: &J, common: &HashMap<&str, &J>, at: &mut Vec<String>, r: &mut Roles) {
    for f in fields.as_array().into_iter().flatten() {
        let name = f["name"].as_str().unwrap_or_default();
        let ty = f["type"].as_str().unwrap_or_default();
        at.push(name.to_string());
        if f["entityType"] == "topicName" {
            r.names.insert(at.clone());
        }
        if ty == "uuid" && name == "TopicId" {
            r.ids.insert(at.clone());
        }
        if ty == "int32" && ["PartitionIndex", "Partition", "PartitionId", "Index"].contains(&name)
        {
            r.partitions.insert(at.clone());
        }
        if ty == "[]int32" && ["Partitions", "PartitionIndexes"].contains(&name) {
            r.partition_lists.insert(at.clone());
        }
        if f["fields"].is_array() {
            spec_roles(&f["fields"], common, at, r);
        } else if let Some(inner) = common.get(ty.trim_start_matches("[]")) {
            spec_roles(inner, common, at, r);
        }
        at.pop();
    }
}

/// Collects the topics and partitions of a JSON body by the roles of its fields. A topic id
/// the JSON names (`"TopicId_name"`) is that name; empty names and the all-zero id are none.
fn body_roles(v: &J, r: &Roles, at: &mut Vec<String>, t: &mut Vec<Topic>, p: &mut Vec<i64>) {
    match v {
        J::Array(a) => a.iter().for_each(|e| body_roles(e, r, at, t, p)),
        J::Object(o) => {
            for (k, val) in o {
                at.push(k.clone());
                if r.names.contains(at) {
                    let one = std::slice::from_ref(val);
                    let names = val.as_array().map_or(one, Vec::as_slice);
                    t.extend(
                        names
                            .iter()
                            .filter_map(J::as_str)
                            .filter(|n| !n.is_empty())
                            .map(|n| Topic::Name(n.to_string())),
                    );
                }
                if r.ids.contains(at) {
                    match (
                        o.get(&format!("{k}_name")).and_then(J::as_str),
                        val.as_str(),
                    ) {
                        (Some(name), _) => t.push(Topic::Name(name.to_string())),
                        (None, Some(id)) if id != "00000000-0000-0000-0000-000000000000" => {
                            t.push(Topic::Id(id.to_string()))
                        }
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
                    body_roles(val, r, at, t, p);
                }
                at.pop();
            }
        }
        _ => {}
    }
}

/// The frames of the exchanges where `pick` holds for the request or the response, both
/// halves printed: the selection `-Y` must make, computed from JSON alone.
fn selection(msgs: &[M], pick: impl Fn(&M) -> bool) -> BTreeSet<u64> {
    let key = |m: &M| (m["stream"].as_u64(), m["correlation_id"].as_i64());
    let mut by_exchange: HashMap<_, Vec<&M>> = HashMap::new();
    for m in msgs {
        by_exchange.entry(key(m)).or_default().push(m);
    }
    by_exchange
        .values()
        .filter(|ms| ms.iter().any(|m| pick(m)))
        .flat_map(|ms| ms.iter().filter_map(|m| m["frame"].as_u64()))
        .collect()
}

const SAMPLES: [&str; 5] = [
    "ak44-admin.pcap",
    "ak44-consumer-classic.pcap",
    "ak44-franz-produce-consume.pcap",
    "kafka-python-consumer-group.pcap",
    "kgen-all-versions.pcap",
];

type Pick = fn(&M) -> bool;

#[test]
fn builtins_select_what_json_says() {
    let cases: [(&str, Pick); 6] = [
        ("api == Metadata", |m| m["api_name"] == "Metadata"),
        ("api == 3 || api == FindCoordinator", |m| {
            m["api_key"] == 3 || m["api_name"] == "FindCoordinator"
        }),
        ("version >= 9 && request", |m| {
            m["direction"] == "request" && m["api_version"].as_i64().is_some_and(|v| v >= 9)
        }),
        ("latency > 2ms", |m| {
            m["latency_us"].as_i64().is_some_and(|l| l > 2000)
        }),
        ("error", |m| {
            m["errors"].as_array().is_some_and(|e| !e.is_empty())
        }),
        ("size >= 1000 && response", |m| {
            m["direction"] == "response" && m["size"].as_u64().is_some_and(|s| s >= 1000)
        }),
    ];
    for name in SAMPLES {
        let msgs = messages(name);
        for (expr, pick) in &cases {
            let want = selection(&msgs, pick);
            let got = frames(&["-Y", expr, &sample(name)]);
            assert_eq!(got, want, "{name}: -Y '{expr}'");
        }
    }
}

/// Captures with what the fields below need besides [`SAMPLES`]: damaged frames (a wrong
/// version layout, a frame cut by a lost segment, legacy ListOffsets, trailing bytes), errors
/// three arrays deep, and a response read with an assumed API.
const MORE_SAMPLES: [&str; 5] = [
    "kgen-lost-segment.pcap",
    "ak44-transactions.pcap",
    "kcat-produce-consume-legacy.pcap",
    "confluent-kafka-admin.pcap",
    "ak44-admin-no18.pcap",
];

/// Every other built-in field, each operator and the logic, against the same condition
/// computed from `--json` (docs/filters.md says what each field is). Each case must select
/// some but not all exchanges of at least one sample, so that none passes vacuously.
#[test]
fn every_field_and_operator_selects_what_json_says() {
    let cases: &[(&str, Pick)] = &[
        // corr
        ("corr == 5", |m| m.int("correlation_id") == Some(5)),
        ("corr != 0", |m| m.int("correlation_id") != Some(0)),
        ("corr < 3", |m| {
            m.int("correlation_id").is_some_and(|c| c < 3)
        }),
        ("corr <= 3 && response", |m| {
            m.response() && m.int("correlation_id").is_some_and(|c| c <= 3)
        }),
        ("corr ge 1000 and corr lt 1003", |m| {
            m.int("correlation_id")
                .is_some_and(|c| (1000..1003).contains(&c))
        }),
        // client_id: requests only; a null one is no string, and not there
        ("client_id == kgen-bulk", |m| {
            m.client_id() == Some("kgen-bulk")
        }),
        ("client_id == \"franz-consumer\"", |m| {
            m.client_id() == Some("franz-consumer")
        }),
        ("client_id != kgen", |m| {
            m.client_id().is_some_and(|c| c != "kgen")
        }),
        ("client_id contains consumer", |m| {
            m.client_id().is_some_and(|c| c.contains("consumer"))
        }),
        (r#"client_id matches "-p\w+r$""#, |m| {
            // the last `-`-separated word starts with p and ends with r
            m.client_id()
                .and_then(|c| c.rsplit_once('-'))
                .is_some_and(|(_, w)| {
                    w.len() >= 3
                        && w.starts_with('p')
                        && w.ends_with('r')
                        && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                })
        }),
        ("request && !client_id", |m| {
            m.request() && m.client_id().is_none()
        }),
        // topic: names at any depth, ids by their learnt name, else as ids
        ("topic == orders", |m| {
            m.topic_names().any(|t| t == "orders")
        }),
        ("topic == \"franz-orders\"", |m| {
            m.topic_names().any(|t| t == "franz-orders")
        }),
        ("topic != orders", |m| {
            m.topic_names().any(|t| t != "orders")
        }),
        ("topic contains \"auto-create\"", |m| {
            m.topic_names().any(|t| t.contains("auto-create"))
        }),
        (r#"topic matches "(?i)^PAY""#, |m| {
            m.topic_names().any(|t| t.to_lowercase().starts_with("pay"))
        }),
        // groups, alternation and counted repetition (the `regex` crate's syntax)
        (r#"topic matches "^(orders|payments)$""#, |m| {
            m.topic_names().any(|t| t == "orders" || t == "payments")
        }),
        (r#"topic matches "^[a-z]{5}-[a-z]{2,6}$""#, |m| {
            m.topic_names().any(|t| {
                t.split_once('-').is_some_and(|(a, b)| {
                    a.len() == 5
                        && (2..=6).contains(&b.len())
                        && a.chars().chain(b.chars()).all(|c| c.is_ascii_lowercase())
                })
            })
        }),
        ("topic == 01a229ff-1eec-76c3-b836-5fdab16a7c7d", |m| {
            m.topics
                .contains(&Topic::Id("01a229ff-1eec-76c3-b836-5fdab16a7c7d".into()))
        }),
        ("topic", |m| !m.topics.is_empty()),
        ("!topic && request", |m| m.topics.is_empty() && m.request()),
        // partition: any value, so `!=` and `!( == )` differ
        ("partition == 0", |m| m.partition(|p| p == 0)),
        ("partition != 0", |m| m.partition(|p| p != 0)),
        ("!(partition == 0)", |m| !m.partition(|p| p == 0)),
        ("partition >= 2", |m| m.partition(|p| p >= 2)),
        ("partition < 1 and api == Fetch", |m| {
            m.partition(|p| p < 1) && m.api() == "Fetch"
        }),
        // stream
        ("stream == 1", |m| m.int("stream") == Some(1)),
        ("stream <= 1", |m| m.int("stream").is_some_and(|s| s <= 1)),
        ("stream > 2 && stream != 4", |m| {
            m.int("stream").is_some_and(|s| s > 2 && s != 4)
        }),
        // src, dst: `ip:port` strings (with the direction, since an exchange has both ways)
        ("src == 127.0.0.1:53884 && request", |m| {
            m.request() && m.str("src") == Some("127.0.0.1:53884")
        }),
        ("dst == \"127.0.0.1:58150\" && response", |m| {
            m.response() && m.str("dst") == Some("127.0.0.1:58150")
        }),
        ("src != 127.0.0.1:9092", |m| {
            m.str("src").is_some_and(|s| s != "127.0.0.1:9092")
        }),
        (r#"src matches ":6016\d$""#, |m| {
            m.str("src").is_some_and(|s| {
                s.strip_prefix("127.0.0.1:6016")
                    .is_some_and(|d| d.len() == 1 && d.chars().all(|c| c.is_ascii_digit()))
            })
        }),
        ("dst contains \":359\"", |m| {
            m.str("dst").is_some_and(|s| s.contains(":359"))
        }),
        // port: either side
        ("port == 53872 && request", |m| {
            m.request() && m.port(|p| p == 53872)
        }),
        ("port == 53884 && response", |m| {
            m.response() && m.port(|p| p == 53884)
        }),
        ("port > 60130", |m| m.port(|p| p > 60130)),
        // malformed, assumed
        ("malformed", M::malformed),
        ("!malformed && response", |m| !m.malformed() && m.response()),
        ("malformed == false && request", |m| {
            !m.malformed() && m.request()
        }),
        ("assumed", M::assumed),
        ("not assumed and response", |m| !m.assumed() && m.response()),
        // error: every non-zero code at any depth, by name or number
        ("error == UNKNOWN_TOPIC_OR_PARTITION", |m| {
            m.error(|c, _| c == 3)
        }),
        ("error == 3", |m| m.error(|c, _| c == 3)),
        ("error == member-id-required", |m| {
            m.error(|_, n| n == "MEMBER_ID_REQUIRED")
        }),
        ("error == 17", |m| {
            m.error(|_, n| n == "INVALID_TOPIC_EXCEPTION")
        }),
        ("error == CONCURRENT_TRANSACTIONS", |m| {
            m.error(|_, n| n == "CONCURRENT_TRANSACTIONS")
        }),
        ("error == 51 && response", |m| {
            m.response() && m.error(|c, _| c == 51)
        }),
        ("error != 3", |m| m.error(|c, _| c != 3)),
        ("error < 20", |m| m.error(|c, _| c < 20)),
        ("error contains TOPIC", |m| {
            m.error(|_, n| n.contains("TOPIC"))
        }),
        (r#"error matches "(?i)^unknown_topic""#, |m| {
            m.error(|_, n| n.to_lowercase().starts_with("unknown_topic"))
        }),
        // response, request
        ("response", M::response),
        ("response == false", M::request),
        ("!response && api == Metadata", |m| {
            m.request() && m.api() == "Metadata"
        }),
        // logic: `!` binds tightest, then `&&`, then `||`
        ("api == Metadata || api == Fetch && response", |m| {
            m.api() == "Metadata" || (m.api() == "Fetch" && m.response())
        }),
        ("(api == Metadata || api == Fetch) && response", |m| {
            (m.api() == "Metadata" || m.api() == "Fetch") && m.response()
        }),
        ("api == ApiVersions or error and request", |m| {
            m.api() == "ApiVersions" || (m.error(|_, _| true) && m.request())
        }),
        ("not (api == Metadata or error) and corr < 10", |m| {
            !(m.api() == "Metadata" || m.error(|_, _| true))
                && m.int("correlation_id").is_some_and(|c| c < 10)
        }),
        ("!error && response", |m| {
            !m.error(|_, _| true) && m.response()
        }),
        ("!(response || api == Metadata || corr >= 3)", |m| {
            !(m.response()
                || m.api() == "Metadata"
                || m.int("correlation_id").is_some_and(|c| c >= 3))
        }),
        ("not not request", M::request),
        // the other built-ins with the remaining operators
        ("api contains Group", |m| m.api().contains("Group")),
        (r#"api matches "^Describe""#, |m| {
            m.api().starts_with("Describe")
        }),
        ("api != Metadata", |m| m.api() != "Metadata"),
        ("version < 3", |m| {
            m.int("api_version").is_some_and(|v| v < 3)
        }),
        ("version <= 0 or version == 4", |m| {
            m.int("api_version").is_some_and(|v| v <= 0 || v == 4)
        }),
        ("latency <= 300us", |m| {
            m.int("latency_us").is_some_and(|l| l <= 300)
        }),
        ("latency != 0", |m| {
            m.int("latency_us").is_some_and(|l| l != 0)
        }),
        ("size < 100", |m| m.int("size").is_some_and(|s| s < 100)),
    ];
    let mut telling = vec![false; cases.len()];
    for name in SAMPLES.iter().chain(&MORE_SAMPLES) {
        let msgs = messages(name);
        let all = selection(&msgs, |_| true);
        for ((expr, pick), telling) in cases.iter().zip(&mut telling) {
            let want = selection(&msgs, pick);
            let got = frames(&["-Y", expr, &sample(name)]);
            assert_eq!(got, want, "{name}: -Y '{expr}'");
            *telling |= !want.is_empty() && want != all;
        }
    }
    let vacuous: Vec<&str> = cases
        .iter()
        .zip(telling)
        .filter(|(_, telling)| !telling)
        .map(|((expr, _), _)| *expr)
        .collect();
    assert!(
        vacuous.is_empty(),
        "these select nothing or everything in every sample: {vacuous:?}"
    );
}

#[test]
fn a_schema_path_selects_what_json_says() {
    let name = "ak44-admin.pcap";
    let msgs = messages(name);
    let want = selection(&msgs, |m| {
        m["api_name"] == "CreateTopics"
            && m["direction"] == "request"
            && m["body"]["Topics"]
                .as_array()
                .is_some_and(|ts| ts.iter().any(|t| t["NumPartitions"].as_i64() > Some(1)))
    });
    assert!(
        !want.is_empty(),
        "the sample creates a topic of several partitions"
    );
    let got = frames(&[
        "-Y",
        "CreateTopics.Topics[*].NumPartitions > 1",
        &sample(name),
    ]);
    assert_eq!(got, want);
}

/// The flags are shorthands: each selects what its expression selects.
#[test]
fn flags_match_their_expressions() {
    let pairs: [(&[&str], &str); 5] = [
        (&["--api", "metadata"], "api == Metadata"),
        (&["--api", "fetch,3"], "api == Fetch || api == Metadata"),
        (&["--errors"], "error"),
        (&["--topic", "orders"], "topic == \"orders\""),
        (&["--correlation-id", "5"], "corr == 5"),
    ];
    for name in SAMPLES {
        let s = sample(name);
        for (flags, expr) in pairs {
            let mut a: Vec<&str> = flags.to_vec();
            a.push(&s);
            assert_eq!(frames(&a), frames(&["-Y", expr, &s]), "{name}: {flags:?}");
        }
    }
}

/// A flag and `-Y` together: both must hold.
#[test]
fn flags_and_filter_combine_with_and() {
    let s = sample("ak44-admin.pcap");
    let both = frames(&["--api", "metadata", "-Y", "error", &s]);
    let api = frames(&["--api", "metadata", &s]);
    let err = frames(&["-Y", "error", &s]);
    let want: BTreeSet<u64> = api.intersection(&err).copied().collect();
    assert!(!want.is_empty() && want.len() < api.len());
    assert_eq!(both, want);
}

#[test]
fn a_bad_expression_is_an_error_before_reading() {
    let o = kdissect(&["-Y", "api == Metdata", &sample("ak44-admin.pcap")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("api == Metdata"), "{err}");
    assert!(err.contains("did you mean `Metadata`"), "{err}");
    // The caret stands under the bad value.
    let caret = err.lines().find(|l| l.trim() == "^").map(|l| l.len());
    let line = err
        .lines()
        .find(|l| l.trim() == "api == Metdata")
        .unwrap_or_default();
    assert_eq!(caret.map(|c| c - 1), line.find("Metdata"), "{err}");

    let o = kdissect(&["-Y", "Metadata.Topics[*].Nmae", &sample("ak44-admin.pcap")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Name"));
}

#[test]
fn hex_input_refuses_filters() {
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(["--hex", "-Y", "error"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("captures"));
}
