//! `-T fields` and `-T ek` with Wireshark's field names, against tshark itself on the real
//! samples: the same Kafka PDUs (frame numbers and correlation ids), the same API keys, the
//! same header line and the same ek documents. Skipped where tshark is not installed.
//!
//! tshark writes one line per packet, the values of every PDU in it comma-joined; kdissect
//! writes one line per message. So tshark's lines are cut into PDUs before comparing.

use std::collections::BTreeSet;
use std::process::Command;

fn sample(name: &str) -> String {
    format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn tshark(args: &[&str]) -> Option<String> {
    let out = Command::new("tshark")
        .args(args)
        .env("TZ", "UTC")
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn have_tshark() -> bool {
    let ok = tshark(&["-v"]).is_some();
    if !ok {
        eprintln!("tshark is not installed: skipped");
    }
    ok
}

fn kdissect(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .output()
        .expect("run");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const FIELDS: [&str; 6] = [
    "-e",
    "frame.number",
    "-e",
    "kafka.correlation_id",
    "-e",
    "kafka.api_key",
];

type Pdus = (BTreeSet<(u64, i64)>, BTreeSet<(u64, i64, i64)>);

/// The PDUs of `-T fields -e frame.number -e kafka.correlation_id -e kafka.api_key` output:
/// (frame, corr), and (frame, corr, api) where each correlation id has its API key (tshark
/// leaves the key out of responses it cannot decode).
fn pdus(out: &str) -> Pdus {
    let mut ids = BTreeSet::new();
    let mut apis = BTreeSet::new();
    for line in out.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        let [frame, corr, api] = cols[..] else {
            panic!("three columns: {line:?}");
        };
        if corr.is_empty() {
            continue;
        }
        let frame: u64 = frame.parse().expect("frame");
        let corrs: Vec<i64> = corr.split(',').map(|c| c.parse().expect("corr")).collect();
        let keys: Vec<i64> = api
            .split(',')
            .filter(|a| !a.is_empty())
            .map(|a| a.parse().expect("api"))
            .collect();
        ids.extend(corrs.iter().map(|c| (frame, *c)));
        if keys.len() == corrs.len() {
            apis.extend(corrs.iter().zip(&keys).map(|(c, a)| (frame, *c, *a)));
        }
    }
    (ids, apis)
}

/// Samples where the capture is whole: kdissect and tshark find exactly the same PDUs.
const WHOLE: &[&str] = &[
    "ak44-admin.pcap",
    "ak44-consumer-classic.pcap",
    "ak44-franz-produce-consume.pcap",
    "ak44-transactions.pcap",
    "kafka-python-admin.pcap",
    "kafka-python-consumer-group.pcap",
    "confluent-kafka-admin.pcap",
    "kcat-metadata-v0.pcap",
    "kgen-all-versions.pcap",
];

/// Damaged captures: kdissect finds every PDU tshark finds, and more (it resynchronises).
const DAMAGED: &[&str] = &["kgen-midstream.pcap", "kgen-lost-segment.pcap"];

fn compare(name: &str) -> (Pdus, Pdus) {
    let f = sample(name);
    let mut t = vec!["-r", &f, "-d", "tcp.port==9092,kafka", "-T", "fields"];
    t.extend(FIELDS);
    let theirs = pdus(&tshark(&t).expect("tshark runs"));
    let mut k = vec!["-T", "fields"];
    k.extend(FIELDS);
    k.push(&f);
    let ours = pdus(&kdissect(&k));
    (theirs, ours)
}

#[test]
fn same_frames_correlation_ids_and_api_keys_as_tshark() {
    if !have_tshark() {
        return;
    }
    for name in WHOLE {
        let ((t_ids, t_apis), (k_ids, k_apis)) = compare(name);
        assert!(t_ids.len() >= 4, "{name}: tshark found {t_ids:?}");
        assert_eq!(t_ids, k_ids, "{name}: (frame, correlation id)");
        assert!(
            t_apis.is_subset(&k_apis) && t_apis.len() * 2 > t_ids.len(),
            "{name}: API keys: tshark has {:?} that kdissect has not",
            t_apis.difference(&k_apis).collect::<Vec<_>>()
        );
    }
    for name in DAMAGED {
        let ((t_ids, t_apis), (k_ids, k_apis)) = compare(name);
        assert!(!t_ids.is_empty(), "{name}");
        assert!(t_ids.is_subset(&k_ids), "{name}: {t_ids:?} vs {k_ids:?}");
        assert!(t_apis.is_subset(&k_apis), "{name}");
    }
}

#[test]
fn header_separator_and_quotes_as_tshark_writes_them() {
    if !have_tshark() {
        return;
    }
    let f = sample("ak44-admin.pcap");
    let opts = [
        "-e",
        "frame.number",
        "-e",
        "kafka.topic_name",
        "-e",
        "frame.time_epoch",
        "-E",
        "header=y",
        "-E",
        "separator=;",
        "-E",
        "quote=d",
    ];
    let mut t = vec!["-r", &f, "-d", "tcp.port==9092,kafka", "-T", "fields"];
    t.extend(opts);
    t.extend(["-Y", "frame.number == 24"]);
    let theirs = tshark(&t).expect("tshark runs");
    let mut k = vec!["-T", "fields", "--messages", "-Y", "frame.number == 24"];
    k.extend(opts);
    k.push(&f);
    let ours = kdissect(&k);
    assert_eq!(ours, theirs);
    assert_eq!(
        ours.lines().next(),
        Some("frame.number;kafka.topic_name;frame.time_epoch")
    );
    // kdissect also takes several options in one -E, comma-separated.
    let mut k = vec!["-T", "fields", "--messages", "-Y", "frame.number == 24"];
    k.extend(&opts[..6]);
    k.extend(["-E", "header=y,separator=;,quote=d", &f]);
    assert_eq!(kdissect(&k), theirs);
}

#[test]
fn ek_documents_of_chosen_fields_match_tshark() {
    if !have_tshark() {
        return;
    }
    let f = sample("kafka-python-admin.pcap");
    let e = [
        "-e",
        "frame.number",
        "-e",
        "kafka.correlation_id",
        "-e",
        "kafka.api_key",
    ];
    let mut t = vec!["-r", &f, "-d", "tcp.port==9092,kafka", "-T", "ek"];
    t.extend(e);
    t.extend(["-Y", "kafka.correlation_id"]);
    let theirs = tshark(&t).expect("tshark runs");
    let mut k = vec!["-T", "ek"];
    k.extend(e);
    k.push(&f);
    let ours = kdissect(&k);
    // Frames with one PDU each: the pairs are the same lines.
    let pairs = |s: &str| -> Vec<(String, String)> {
        let lines: Vec<&str> = s.lines().collect();
        lines
            .chunks(2)
            .map(|p| (p[0].to_string(), p.get(1).unwrap_or(&"").to_string()))
            .collect()
    };
    let (theirs, ours) = (pairs(&theirs), pairs(&ours));
    assert!(ours.len() >= 8, "{ours:?}");
    let mut same = 0;
    for pair in &theirs {
        let doc: serde_json::Value = serde_json::from_str(&pair.1).expect("tshark ek");
        let one = doc["layers"]["kafka_correlation_id"]
            .as_array()
            .is_some_and(|a| a.len() == 1);
        let api = doc["layers"].get("kafka_api_key").is_some();
        if one && api {
            assert!(ours.contains(pair), "kdissect lacks {pair:?}");
            same += 1;
        }
    }
    assert!(same >= 8, "{same} documents compared");
}

/// The frames a filter selects, one per line of `-T fields -e frame.number`.
fn frame_set(out: &str) -> BTreeSet<u64> {
    out.lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// Wireshark's names in -Y select what the same filter selects in tshark (kdissect judging
/// messages, as tshark judges packets), and what kdissect's own names select.
#[test]
fn wireshark_names_in_display_filters() {
    let f = sample("ak44-admin.pcap");
    let ours = |y: &str| {
        frame_set(&kdissect(&[
            "-T",
            "fields",
            "-e",
            "frame.number",
            "--messages",
            "-Y",
            y,
            &f,
        ]))
    };
    for (wireshark, own) in [
        ("kafka.api_key == 3", "api == Metadata"),
        ("kafka.request_key == 18", "request && api == ApiVersions"),
        ("kafka.response.version == 5", "response && version == 5"),
        (
            "kafka.correlation_id >= 5 && kafka.correlation_id < 9",
            "corr >= 5 && corr < 9",
        ),
        (
            "tcp.stream == 1 && frame.number < 30",
            "stream == 1 && frame < 30",
        ),
        (
            "ip.src == 127.0.0.1 && tcp.srcport == 9092",
            "src == 127.0.0.1:9092",
        ),
        (
            "kafka.client_id == \"ak44-admin\"",
            "client_id == \"ak44-admin\"",
        ),
        ("kafka.topic_name == payments", "topic == payments"),
        ("kafka.request_frame == 24", "request_frame == 24"),
    ] {
        let a = ours(wireshark);
        assert!(!a.is_empty(), "{wireshark}");
        assert_eq!(a, ours(own), "{wireshark} vs {own}");
    }
    // Schema fields by name, wherever they are.
    let a = ours("kafka.cluster_id == \"8D2tni1wRe6f98SbF2k6kw\"");
    assert!(a.contains(&9) && a.contains(&19), "{a:?}");
    assert_eq!(
        ours("kafka.api_versions.max_version == 13"),
        ours("ApiVersions.ApiKeys[*].MaxVersion == 13")
    );
    if !have_tshark() {
        return;
    }
    for (y, equal) in [
        (
            "kafka.correlation_id >= 5 && kafka.correlation_id < 9",
            true,
        ),
        ("tcp.stream == 1 && kafka.correlation_id", true),
        ("kafka.request_key == 18", true),
        // tshark leaves the key out of the responses it cannot decode (Metadata v13).
        ("kafka.api_key == 3", false),
    ] {
        let t = tshark(&[
            "-r",
            &f,
            "-d",
            "tcp.port==9092,kafka",
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-Y",
            y,
        ])
        .expect("tshark");
        let (theirs, mine) = (frame_set(&t), ours(y));
        assert!(!theirs.is_empty(), "{y}");
        if equal {
            assert_eq!(theirs, mine, "{y}");
        } else {
            assert!(
                theirs.is_subset(&mine) && theirs != mine,
                "{y}: {theirs:?} {mine:?}"
            );
        }
    }
}

#[test]
fn tshark_flags_that_do_not_go_together_are_usage_errors() {
    let f = sample("ak44-admin.pcap");
    for (args, says) in [
        (
            vec!["-T", "fields"],
            "-T fields prints the fields given with -e",
        ),
        (vec!["-e", "corr"], "-e goes with -T fields"),
        (
            vec!["-T", "json", "-E", "header=y"],
            "-E goes with -T fields",
        ),
        (vec!["-T", "fields", "-e", "corr", "-V"], "not with -V"),
        (
            vec!["-T", "fields", "-e", "kafka.api_kee"],
            "did you mean `kafka.api_key`",
        ),
        (
            vec!["-T", "fields", "-e", "corr", "-E", "quote=x"],
            "quote=x: d, s or n",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_kdissect"))
            .args(&args)
            .arg(&f)
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // -T json is --json; with -e, --json --fields.
    assert_eq!(
        kdissect(&["-T", "json", "-c", "3", &f]),
        kdissect(&["--json", "-c", "3", &f])
    );
    assert_eq!(
        kdissect(&["-T", "json", "-e", "corr", "-e", "api", "-c", "3", &f]),
        kdissect(&["--json", "--fields", "corr,api", "-c", "3", &f])
    );
}
