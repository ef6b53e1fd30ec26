//! Issue 35 item 10: a capture of a cluster with brokers on several ports, taken while its
//! clients ran, read as a user reads it, without `-p`. The connections to the brokers on 9192
//! and 9292 are found by what they carry; picked up mid-stream, a broker often speaks first
//! (the answer to a request sent before the capture), and that answer reads as a request
//! header ("Produce v14 corr=0 client_id=\"\"" for a Fetch answer with correlation id 14).
//! Each connection's client must still be the side that sends requests: the output is then the
//! one given with every broker port listed.

mod common;

use serde_json::Value as J;
use std::collections::BTreeMap;

/// The cluster's ports: the controller and the three brokers.
const CLUSTER: [&str; 8] = ["-p", "9093", "-p", "9092", "-p", "9192", "-p", "9292"];
const BROKER_PORTS: [u16; 4] = [9093, 9092, 9192, 9292];

/// The captures with connections picked up mid-stream on 9192 or 9292: the two started while
/// the clients ran, and the one from the start whose broker-to-broker fetchers are picked up
/// mid-stream (streams 7 and 8, idle since before the capture).
const CAPTURES: [&str; 4] = [
    "samples/issue35-classic-late.pcap",
    "samples/issue35-kip848-late.pcap",
    "samples/issue35/issue35-nonascii-late.pcap",
    "samples/issue35-classic.pcap",
];

fn run(file: &str, ports: &[&str], view: &[&str]) -> String {
    let mut args = vec!["--no-progress"];
    args.extend_from_slice(ports);
    args.extend_from_slice(view);
    args.push(file);
    common::cli::run(&args)
}

/// The messages of a `--json` run.
fn messages(out: &str) -> Vec<J> {
    out.lines()
        .filter_map(|l| serde_json::from_str::<J>(l).ok())
        .filter(|m| m.get("direction").is_some())
        .collect()
}

fn port(addr: &J) -> u16 {
    let a = addr.as_str().expect("address");
    a.rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port")
}

/// What identifies a decoded message: its frame, stream, direction, API, version and
/// correlation id, with how many times it occurs.
fn identities(msgs: &[J]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for m in msgs {
        let key = format!(
            "{} {} {} {} v{} corr={} assumed={}",
            m["frame"],
            m["stream"],
            m["direction"],
            m["api_name"],
            m["api_version"],
            m["correlation_id"],
            m["assumed"]
        );
        *out.entry(key).or_insert(0) += 1;
    }
    out
}

/// Every request goes to a broker port and every answer comes from one; nothing is left
/// undecoded; the messages are those of the run with every port given.
#[test]
fn without_ports_every_connection_keeps_its_client() {
    for file in CAPTURES {
        let alone = messages(&run(file, &[], &["--json"]));
        let listed = messages(&run(file, &CLUSTER, &["--json"]));
        assert!(alone.len() > 3000, "{file}: {} messages", alone.len());
        for m in &alone {
            let (src, dst) = (port(&m["src"]), port(&m["dst"]));
            match m["direction"].as_str() {
                Some("request") => assert!(
                    BROKER_PORTS.contains(&dst) && !BROKER_PORTS.contains(&src),
                    "{file}: a request from a broker: {m:.300}"
                ),
                Some("response") => assert!(
                    BROKER_PORTS.contains(&src) && !BROKER_PORTS.contains(&dst),
                    "{file}: an answer from a client: {m:.300}"
                ),
                other => panic!("{file}: direction {other:?}"),
            }
            assert_ne!(m["api_name"], "Unknown", "{file}: {m:.300}");
        }
        assert!(
            listed.iter().all(|m| m["api_name"] != "Unknown"),
            "{file}: the run with every port given decodes every message"
        );
        let (a, l) = (identities(&alone), identities(&listed));
        let only_alone: Vec<_> = a.iter().filter(|(k, n)| l.get(*k) != Some(n)).collect();
        let only_listed: Vec<_> = l.iter().filter(|(k, n)| a.get(*k) != Some(n)).collect();
        assert!(
            only_alone.is_empty() && only_listed.is_empty(),
            "{file}: without -p only {only_alone:?}; with -p only {only_listed:?}"
        );
        // The messages come in frame order (the unanswered list is not among them).
        let frames: Vec<u64> = alone.iter().filter_map(|m| m["frame"].as_u64()).collect();
        assert!(
            frames.windows(2).all(|w| w[0] <= w[1]),
            "{file}: messages out of frame order"
        );
    }
}

/// The summary a user reads without `-p` is, line for line, the one with every port given:
/// the damaged lines of a misread connection (a "Produce v14 Request" from the broker, an
/// "Unknown Response" from the client, a request "unanswered" after the list) are gone.
#[test]
fn without_ports_the_summary_is_the_one_with_every_port() {
    for file in CAPTURES {
        let alone = run(file, &[], &[]);
        let listed = run(file, &CLUSTER, &[]);
        let differ: Vec<(&str, &str)> = alone
            .lines()
            .zip(listed.lines())
            .filter(|(a, l)| a != l)
            .take(3)
            .collect();
        assert!(
            differ.is_empty() && alone.lines().count() == listed.lines().count(),
            "{file}: {} lines without -p, {} with; first differences {differ:#?}",
            alone.lines().count(),
            listed.lines().count()
        );
        for bad in ["Unknown Response", "body not decoded", "malformed"] {
            assert!(!alone.contains(bad), "{file}: {bad}");
        }
    }
}

/// The statistics agree too (APIs, connections with their client ids, health): retransmissions
/// seen before a connection was known to be Kafka are counted once it is, as on a broker port.
#[test]
fn without_ports_the_statistics_are_those_with_every_port() {
    for file in [
        "samples/issue35-classic.pcap",
        "samples/issue35-classic-late.pcap",
    ] {
        let stats = |ports: &[&str]| -> J {
            let out = run(file, ports, &["--stats", "--json", "-q"]);
            serde_json::from_str(out.trim()).expect("one JSON document")
        };
        let (alone, listed) = (stats(&[]), stats(&CLUSTER));
        assert!(listed["stats"]["health"]["retransmissions"].as_u64() > Some(0));
        assert_eq!(alone, listed, "{file}");
    }
}
