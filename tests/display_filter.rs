//! `-Y EXPR` on the command line: the exchanges it prints, compared with what `--json` says
//! of every message, and the exchange flags as shorthands for expressions.

use serde_json::Value as J;
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::process::{Command, Output};

fn sample(name: &str) -> String {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "samples", name]
        .iter()
        .collect();
    p.to_string_lossy().into_owned()
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
fn messages(name: &str) -> Vec<J> {
    let o = kdissect(&["--json", &sample(name)]);
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<J>(l).ok())
        .filter(|j| j.get("direction").is_some())
        .collect()
}

/// The frames of the exchanges where `pick` holds for the request or the response, both
/// halves printed: the selection `-Y` must make, computed from JSON alone.
fn selection(msgs: &[J], pick: impl Fn(&J) -> bool) -> BTreeSet<u64> {
    let key = |m: &J| (m["stream"].as_u64(), m["correlation_id"].as_i64());
    let mut by_exchange: HashMap<_, Vec<&J>> = HashMap::new();
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

#[test]
fn builtins_select_what_json_says() {
    type Pick = fn(&J) -> bool;
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
