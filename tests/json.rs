//! `--json`: every line parses, validates against docs/kdissect.schema.json, and carries the
//! same values as the tree.

mod common;

use kdissect::kafka::{Node, NodeKind, Value};
use kdissect::render::json::{message, Meta};
use serde_json::Value as J;
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(root().join("docs/kdissect.schema.json")).expect("schema");
    let schema: J = serde_json::from_str(&text).expect("schema json");
    jsonschema::validator_for(&schema).expect("valid schema")
}

fn lines(args: &[&str]) -> Vec<J> {
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .output()
        .expect("run");
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .expect("utf8")
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{args:?}: line does not parse: {e}: {l}"))
        })
        .collect()
}

fn samples() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join("samples"))
        .expect("samples")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pcap" || x == "pcapng"))
        .map(|p| p.to_string_lossy().into_owned())
        // TLS-only captures hold no message to write (tests/tls.rs covers them); of the tls-*
        // samples only the plaintext legs are plain Kafka.
        .filter(|p| !p.ends_with("-ssl.pcap"))
        .filter(|p| !p.contains("/tls-") || p.ends_with("-plaintext.pcap"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_sample_line_parses_and_validates() {
    let v = validator();
    for s in samples() {
        let port = if s.contains("19092") { "19092" } else { "9092" };
        for spans in [false, true] {
            let mut args = vec!["--json", "--stats", "-p", port, s.as_str()];
            if spans {
                args.insert(1, "--json-spans");
            }
            let all = lines(&args);
            assert!(all.len() > 1, "{s}");
            for (i, l) in all.iter().enumerate() {
                if let Err(e) = v.validate(l) {
                    panic!("{s} line {}: {e}\n{l}", i + 1);
                }
            }
            // The statistics come last, once.
            assert!(all.last().is_some_and(|l| l.get("stats").is_some()));
            assert_eq!(all.iter().filter(|l| l.get("stats").is_some()).count(), 1);
        }
    }
}

/// The decrypted TLS captures: every line validates, with and without --json-spans; every
/// message says it was decrypted, and with spans where its offsets count.
#[test]
fn decrypted_tls_lines_validate() {
    let v = validator();
    let s = |n: &str| {
        root()
            .join("samples")
            .join(n)
            .to_string_lossy()
            .into_owned()
    };
    // (capture, listener port, key log or "" for the pcapng that carries its secrets)
    let captures = [
        ("tls-java-ssl13.pcap", "9093", "tls-java-ssl13.keys"),
        ("tls-java-ssl13-dsb.pcapng", "9093", ""),
        (
            "tls-java-ssl12.pcap",
            "9093",
            "tls-java-ssl12.client-random.keys",
        ),
        (
            "tls-java-sasl-ssl13.pcap",
            "9096",
            "tls-java-sasl-ssl13.keys",
        ),
        ("tls-java-keyupdate.pcap", "9093", "tls-java-keyupdate.keys"),
        ("tls-franz-chacha12.pcap", "9097", "tls-franz-chacha12.keys"),
        (
            "tls-kafka-python-ecdsa-chacha12.pcap",
            "9098",
            "tls-kafka-python-ecdsa-chacha12.keys",
        ),
        (
            "tls-kafkajs-chacha13.pcap",
            "9093",
            "tls-kafkajs-chacha13.keys",
        ),
        ("tls-kcat-ssl13.pcap", "9093", "tls-kcat-ssl13.keys"),
        (
            "tls-confluent-broker-keys.pcap",
            "9093",
            "tls-confluent-broker-keys.broker.keys",
        ),
    ];
    for (pcap, port, keys) in captures {
        let (pcap, keys) = (s(pcap), s(keys));
        for spans in [false, true] {
            let mut args = vec!["--json", "--stats", "-p", port];
            if !keys.ends_with("samples/") {
                args.extend(["--keylog", keys.as_str()]);
            }
            if spans {
                args.push("--json-spans");
            }
            args.push(&pcap);
            let all = lines(&args);
            assert!(all.len() > 20, "{pcap}");
            for (i, l) in all.iter().enumerate() {
                if let Err(e) = v.validate(l) {
                    panic!("{pcap} line {}: {e}\n{l}", i + 1);
                }
            }
            let msgs: Vec<&J> = all.iter().filter(|l| l.get("stats").is_none()).collect();
            assert!(msgs.iter().all(|m| m["tls"] == true), "{pcap}");
            let spans_in = msgs.iter().filter(|m| m["spans_in"] == "decrypted TLS");
            assert_eq!(
                spans_in.count(),
                if spans { msgs.len() } else { 0 },
                "{pcap}"
            );
        }
    }
}

/// `--stats --json --analyses` on the analysis samples validates too (the lag points among
/// the rest).
#[test]
fn analyses_json_validates() {
    let v = validator();
    for s in samples().iter().filter(|s| s.contains("/ana-")) {
        let all = lines(&["--stats", "--json", "-q", "--analyses", s.as_str()]);
        let stats = all.last().expect("stats line");
        let points = stats["stats"]["analyses"]["lag"]["series"][0]["points"].as_array();
        // ana-slow-acks has no consumer.
        let consumed = !s.contains("slow-acks");
        assert_eq!(
            points.is_some_and(|p| !p.is_empty()),
            consumed,
            "{s}: lag points"
        );
        if let Err(e) = v.validate(stats) {
            panic!("{s}: {e}");
        }
    }
}

#[test]
fn hex_input_json_validates() {
    let v = validator();
    let f = root().join("samples/hex/metadata-v13-exchange.hex");
    let all = lines(&["--hex", "--json", f.to_str().expect("path")]);
    assert_eq!(all.len(), 2);
    for l in &all {
        v.validate(l).expect("valid");
    }
    assert_eq!(all[0]["direction"], "request");
    assert_eq!(all[1]["direction"], "response");
    assert_eq!(all[1]["input_offset"], 37);
    assert_eq!(
        all[1]["body"]["Topics"][0]["Partitions"][0]["ReplicaNodes"],
        serde_json::json!([0])
    );
}

/// The text the tree shows for a leaf, without its annotation.
fn tree_text(n: &Node, frame: &[u8]) -> String {
    let mut full = kdissect::render::value::text(n, frame, true).expect("value");
    if let Some(note) = kdissect::render::value::note_text(&n.note) {
        full = full
            .strip_suffix(&format!(" {note}"))
            .expect("note suffix")
            .to_string();
    }
    if let Some(e) = n.enc.text() {
        full = full
            .strip_suffix(&format!(" {e}"))
            .expect("encoding suffix")
            .to_string();
    }
    full
}

fn json_text(j: &J) -> String {
    match j {
        J::Null => "null".into(),
        J::Bool(b) => b.to_string(),
        J::Number(n) => n.to_string(),
        J::String(s) => s.clone(),
        other => panic!("not a scalar: {other}"),
    }
}

/// Walks a struct node and its JSON object side by side.
fn compare(n: &Node, j: &J, frame: &[u8], path: &str, checked: &mut usize) {
    let obj = j
        .as_object()
        .unwrap_or_else(|| panic!("{path}: not an object: {j}"));
    for c in &n.children {
        if matches!(
            c.kind,
            NodeKind::Length | NodeKind::TagCount | NodeKind::Error | NodeKind::Raw
        ) || c.name == "present"
        {
            continue;
        }
        let (node, name) = if c.ty == "tagged_field" {
            match c.children.get(2) {
                Some(inner) if inner.kind != NodeKind::Raw => (inner, c.name.to_string()),
                _ => continue,
            }
        } else if c.kind == NodeKind::Group && c.name.contains("Header") && n.ty == "bytes" {
            // An embedded message (Envelope's RequestData, ResponseData): its header is the
            // JSON object's `header`, its body struct the `body`.
            (c, "header".to_string())
        } else if c.ty == "struct" && n.ty == "bytes" {
            (c, "body".to_string())
        } else {
            (c, c.name.to_string())
        };
        // Indexed groups directly in a struct (record headers) are the JSON array `Xs`.
        if let (Some(i), NodeKind::Group) = (node.index, node.kind) {
            let arr = obj
                .get(&format!("{name}s"))
                .unwrap_or_else(|| panic!("{path}.{name}s missing"));
            compare_value(
                node,
                &arr[i as usize],
                frame,
                &format!("{path}.{name}[{i}]"),
                checked,
            );
            continue;
        }
        let jv = obj
            .get(&name)
            .unwrap_or_else(|| panic!("{path}.{name} missing from JSON"));
        compare_value(node, jv, frame, &format!("{path}.{name}"), checked);
    }
}

fn compare_value(n: &Node, j: &J, frame: &[u8], path: &str, checked: &mut usize) {
    match &n.value {
        Value::Null => assert!(j.is_null(), "{path}: {j}"),
        _ if n.kind == NodeKind::Group && (n.ty == "records" || n.ty == "message set") => {
            let arr = j
                .as_array()
                .unwrap_or_else(|| panic!("{path}: not an array"));
            let groups: Vec<&Node> = n
                .children
                .iter()
                .filter(|c| c.kind == NodeKind::Group)
                .collect();
            assert_eq!(arr.len(), groups.len(), "{path}");
            for (i, (g, jg)) in groups.iter().zip(arr).enumerate() {
                compare_value(g, jg, frame, &format!("{path}[{i}]"), checked);
            }
        }
        _ if n.kind == NodeKind::Group && !matches!(n.value, Value::Array(_) | Value::Null) => {
            compare(n, j, frame, path, checked)
        }
        Value::Struct => compare(n, j, frame, path, checked),
        Value::Array(_) => {
            let arr = j
                .as_array()
                .unwrap_or_else(|| panic!("{path}: not an array"));
            let elems: Vec<&Node> = n
                .children
                .iter()
                .filter(|c| c.kind != NodeKind::Length && c.kind != NodeKind::Raw)
                .collect();
            assert_eq!(arr.len(), elems.len(), "{path}");
            for (i, (e, je)) in elems.iter().zip(arr).enumerate() {
                compare_value(e, je, frame, &format!("{path}[{i}]"), checked);
            }
        }
        Value::Str(Some(s)) => {
            assert_eq!(j.as_str(), Some(s.as_str()), "{path}");
            assert_eq!(
                tree_text(n, frame).split(" (").next(),
                Some(kdissect::render::value::quote(s).as_str())
            );
            *checked += 1;
        }
        Value::Str(None) | Value::Bytes(None) => {
            assert!(j.is_null(), "{path}");
            *checked += 1;
        }
        Value::Bytes(Some((o, l))) if n.ty == "varbytes" => {
            let data = &frame[*o..o + l];
            // Text by the rule the tree applies, else hex: never a string of control bytes.
            match kdissect::render::value::as_text(data) {
                Some(s) => assert_eq!(j.as_str(), Some(s), "{path}"),
                None => assert_eq!(
                    j["hex"].as_str(),
                    Some(hex::encode(data).as_str()),
                    "{path}"
                ),
            }
            *checked += 1;
        }
        Value::Blob(b) => {
            match kdissect::render::value::as_text(b) {
                Some(s) => assert_eq!(j.as_str(), Some(s), "{path}"),
                None => assert_eq!(j["hex"].as_str(), Some(hex::encode(b).as_str()), "{path}"),
            }
            *checked += 1;
        }
        // A float64 is a JSON number (serde writes 1048576.0) and the tree's shortest form
        // (1048576): compared as numbers.
        Value::Float(f) => {
            assert_eq!(j.as_f64(), Some(*f), "{path}");
            *checked += 1;
        }
        Value::Bytes(Some(_)) => {
            let t = tree_text(n, frame);
            let t = t.split(" (").next().unwrap_or("");
            let want = if t == "\"\"" {
                String::new()
            } else {
                t.to_string()
            };
            assert_eq!(json_text(j), want, "{path}");
            *checked += 1;
        }
        _ => {
            assert_eq!(json_text(j), tree_text(n, frame), "{path}");
            *checked += 1;
        }
    }
}

#[test]
fn json_values_equal_the_tree_values_on_every_sample() {
    use common::collect::run_file;
    use kdissect::pipeline::Options;
    let mut total = 0;
    for s in samples() {
        // The collecting sink keeps rows only; decode again per message via a custom sink.
        struct Check {
            checked: usize,
            spans_checked: usize,
        }
        impl kdissect::kafka::stream::Sink for Check {
            fn message(&mut self, rec: &kdissect::kafka::stream::Record<'_>) {
                let meta = Meta {
                    frame: rec.frame,
                    ..Meta::default()
                };
                let j = message(&rec.msg, rec.bytes, &meta, false);
                if let Some(b) = rec.msg.body() {
                    compare(b, &j["body"], rec.bytes, "body", &mut self.checked);
                    // Spans: offsets and lengths of the top-level body fields.
                    let js = message(&rec.msg, rec.bytes, &meta, true);
                    for c in b
                        .children
                        .iter()
                        .filter(|c| c.kind == NodeKind::Field || c.kind == NodeKind::Group)
                    {
                        if c.ty == "tagged_field" || c.name == "present" {
                            continue;
                        }
                        let w = &js["body"][c.name.as_ref()];
                        assert_eq!(w["offset"], c.offset, "{} offset", c.name);
                        assert_eq!(w["length"], c.len, "{} length", c.name);
                        self.spans_checked += 1;
                    }
                }
            }
            fn notice(&mut self, _: &kdissect::kafka::stream::Notice) {}
        }
        impl kdissect::pipeline::CaptureSink for Check {}
        let mut opts = Options::default();
        if s.contains("19092") {
            opts.kafka.ports = vec![19092];
        }
        let mut c = Check {
            checked: 0,
            spans_checked: 0,
        };
        let mut h = kdissect::pipeline::Health::default();
        let f = std::fs::File::open(&s).expect("open");
        let _ = kdissect::pipeline::run(std::io::BufReader::new(f), &opts, &mut c, &mut h);
        assert!(c.spans_checked > 0, "{s}");
        total += c.checked;
        let _ = run_file;
    }
    assert!(total > 10_000, "only {total} values compared");
}

#[test]
fn capture_json_fields_are_right() {
    let p = root().join("samples/kafka-python-admin.pcap");
    let all = lines(&["--json", p.to_str().expect("path")]);
    let req = &all[0];
    assert_eq!(req["frame"], 4);
    assert_eq!(req["stream"], 0);
    assert_eq!(req["src"], "127.0.0.1:57162");
    assert_eq!(req["api_name"], "ApiVersions");
    assert_eq!(req["client_id"], "kafka-python-admin");
    assert_eq!(req["body"]["ClientSoftwareName"], "kafka-python");
    let resp = &all[1];
    assert_eq!(resp["request_frame"], 4);
    // Whole microseconds, an integer as in --stats --json.
    assert_eq!(resp["latency_us"].as_i64(), Some(1197));
    assert!(resp["time"]
        .as_str()
        .is_some_and(|t| t.ends_with("Z") && t.len() == 30));
    // Errors are listed with their paths.
    let p = root().join("samples/kgen-all-versions.pcap");
    let all = lines(&["--json", p.to_str().expect("path")]);
    let with_err = all
        .iter()
        .find(|l| l["correlation_id"] == 144 && l["direction"] == "response")
        .expect("corr 144 response");
    assert!(with_err["malformed"]
        .as_array()
        .is_some_and(|m| !m.is_empty()));
    let e = all
        .iter()
        .find(|l| l["correlation_id"] == 132 && l["direction"] == "response")
        .expect("corr 132 response");
    assert_eq!(e["errors"][0]["path"], "Topics[0].ErrorCode");
    assert_eq!(e["errors"][0]["name"], "UNKNOWN_TOPIC_OR_PARTITION");
}

/// docs/json.md lists every problem kind's code, and the schema accepts exactly those.
#[test]
fn problem_kinds_are_documented() {
    let doc = include_str!("../docs/json.md");
    let schema = include_str!("../docs/kdissect.schema.json");
    for k in kdissect::kafka::ProblemKind::ALL {
        assert!(doc.contains(&format!("| `{}` |", k.code())), "{}", k.code());
        assert!(
            schema.contains(&format!("\"{}\"", k.code())),
            "{}",
            k.code()
        );
    }
}

/// Error codes say whether Kafka's client would retry them: a topic that already exists is
/// final, an unknown topic id may yet appear (ak44-admin.pcap, the Java admin client's log
/// names both).
#[test]
fn errors_say_if_retriable() {
    let all = lines(&[
        "--json",
        &root().join("samples/ak44-admin.pcap").to_string_lossy(),
    ]);
    let errors: Vec<&J> = all
        .iter()
        .flat_map(|l| l["errors"].as_array().into_iter().flatten())
        .collect();
    let by_name = |n: &str| errors.iter().find(|e| e["name"] == n).copied();
    let exists = by_name("TOPIC_ALREADY_EXISTS").expect("TOPIC_ALREADY_EXISTS");
    assert_eq!(exists["retriable"], false);
    let unknown = by_name("UNKNOWN_TOPIC_ID").expect("UNKNOWN_TOPIC_ID");
    assert_eq!(unknown["retriable"], true);
}

/// `--fields` prints, for each message, what the full `--json` object says of the same fields:
/// the correlation id, the API key, the latency in microseconds, the error codes at any
/// depth, and the values at a schema path.
#[test]
fn fields_carry_what_the_full_json_says() {
    for name in [
        "ak44-admin.pcap",
        "kafka-python-consumer-group.pcap",
        "ak44-transactions.pcap",
    ] {
        let f = root().join("samples").join(name);
        let f = f.to_str().expect("path");
        let full = lines(&["--json", f]);
        let list =
            "corr,api,latency,error,Metadata.Topics[*].Name,FindCoordinator.Coordinators[*].NodeId";
        let picked = lines(&["--json", "--fields", list, f]);
        assert_eq!(full.len(), picked.len(), "{name}");
        let mut topic_names = 0;
        for (a, b) in full.iter().zip(&picked) {
            assert_eq!(a["frame"], b["frame"], "{name}");
            assert_eq!(a["direction"], b["direction"]);
            let v = &b["fields"];
            let one = |x: &J| {
                if x.is_null() {
                    J::Array(vec![])
                } else {
                    J::Array(vec![x.clone()])
                }
            };
            assert_eq!(
                v["corr"],
                one(&a["correlation_id"]),
                "{name} {}",
                a["frame"]
            );
            assert_eq!(v["api"], one(&a["api_key"]));
            assert_eq!(v["latency"], one(&a["latency_us"]), "{name} {}", a["frame"]);
            let mut want: Vec<i64> = a["errors"]
                .as_array()
                .map(|e| e.iter().filter_map(|x| x["code"].as_i64()).collect())
                .unwrap_or_default();
            let mut got: Vec<i64> = v["error"]
                .as_array()
                .expect("array")
                .iter()
                .filter_map(J::as_i64)
                .collect();
            want.sort_unstable();
            got.sort_unstable();
            assert_eq!(got, want, "{name} {}", a["frame"]);
            let names: Vec<J> = if a["api_key"] == 3 {
                a["body"]["Topics"]
                    .as_array()
                    .map(|ts| ts.iter().map(|t| t["Name"].clone()).collect())
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            topic_names += names.len();
            assert_eq!(
                v["Metadata.Topics[*].Name"],
                J::Array(names),
                "{name} {}",
                a["frame"]
            );
        }
        if name == "kafka-python-consumer-group.pcap" {
            assert!(topic_names > 0, "the sample's Metadata names topics");
        }
    }
}

#[test]
fn fields_need_json_and_name_fields() {
    let f = root().join("samples/ak44-admin.pcap");
    let f = f.to_str().expect("path");
    for (args, want) in [
        (&["--fields", "corr", f][..], "--fields goes with --json"),
        (
            &["--json", "--fields", "corr,laytency", f],
            "did you mean `latency`",
        ),
        (&["--json", "--fields", "corr == 3", f], "not an expression"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
            .args(args)
            .output()
            .expect("run");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(want),
            "{args:?}"
        );
    }
}
