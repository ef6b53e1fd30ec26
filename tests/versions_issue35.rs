//! Version negotiation per client (`--analyses=versions,findings`) on the issue 35 captures,
//! against what the clients are (samples/README.md, issue 35 runs; the logs' `started` lines
//! name each client's software): clients are told apart by (software, client_id, address),
//! an unnamed client is never pooled with others, every version a client used is listed, and
//! versions a client software sends by design are not flagged as old.

mod common;

use common::cli::{arr, root, run};
use serde_json::Value as J;

const PORTS: [&str; 8] = ["-p", "9093", "-p", "9092", "-p", "9192", "-p", "9292"];

fn capture(name: &str) -> String {
    ["samples", "samples/issue35"]
        .iter()
        .map(|d| format!("{d}/{name}"))
        .find(|p| root().join(p).exists())
        .unwrap_or_else(|| panic!("{name} not in samples/"))
}

/// (client_versions, findings) of a capture.
fn analyses(name: &str) -> (Vec<J>, Vec<J>) {
    let file = capture(name);
    let mut args: Vec<&str> = PORTS.to_vec();
    args.extend([
        "--stats",
        "--json",
        "-q",
        "--analyses=versions,findings",
        &file,
    ]);
    let j: J = serde_json::from_str(run(&args).trim()).expect("json");
    let a = &j["stats"]["analyses"];
    (
        arr(&a["client_versions"]).to_vec(),
        arr(&a["findings"]).to_vec(),
    )
}

/// The entries of one client id.
fn of<'a>(cs: &'a [J], client_id: &str) -> Vec<&'a J> {
    cs.iter().filter(|c| c["client_id"] == client_id).collect()
}

/// The use of API `key` by the one entry of `client_id`.
fn api<'a>(cs: &'a [J], client_id: &str, key: i64) -> &'a J {
    let e = of(cs, client_id);
    assert_eq!(e.len(), 1, "{client_id}: {e:?}");
    arr(&e[0]["apis"])
        .iter()
        .find(|a| a["api_key"] == key)
        .unwrap_or_else(|| panic!("{client_id} API {key}"))
}

fn versions(a: &J) -> Vec<i64> {
    arr(&a["versions"]).iter().filter_map(J::as_i64).collect()
}

#[test]
fn unnamed_clients_are_told_apart_by_client_id_and_each_old_use_is_found() {
    let (cs, findings) = analyses("issue35-unnamed.pcap");
    // aiokafka and kafka-go send no software name (ApiVersions v0): each client is its own
    // entry, with only its own versions.
    for id in [
        "issue35-aiokafka-producer",
        "issue35-aiokafka-a1",
        "issue35-aiokafka-a2",
        "issue35-kafka-go-producer",
        "issue35-kafka-go-k1",
        "issue35-kafka-go-k2",
    ] {
        let e = of(&cs, id);
        assert_eq!(e.len(), 1, "{id}");
        assert!(e[0]["software"].is_null(), "{id}: {:?}", e[0]["software"]);
        assert_eq!(e[0]["address"], "127.0.0.1");
    }
    assert_eq!(versions(api(&cs, "issue35-aiokafka-producer", 0)), [7]);
    assert_eq!(versions(api(&cs, "issue35-kafka-go-producer", 0)), [8]);
    assert_eq!(versions(api(&cs, "issue35-kafka-go-k1", 8)), [2]);
    assert_eq!(versions(api(&cs, "issue35-aiokafka-a1", 8)), [3]);
    // No Produce against the brokers' own clients.
    for c in cs.iter().filter(|c| !c["internal"].is_null()) {
        assert!(arr(&c["apis"]).iter().all(|a| a["api_key"] != 0), "{c:?}");
    }
    // old_client_version names each client with the versions it used.
    let old: Vec<&str> = findings
        .iter()
        .filter(|f| f["kind"] == "old_client_version")
        .filter_map(|f| f["summary"].as_str())
        .collect();
    let aio = old
        .iter()
        .find(|s| s.contains("\"issue35-aiokafka-producer\""))
        .expect("aiokafka's producer flagged");
    assert!(aio.contains("Produce v7 < v13"), "{aio}");
    assert!(!aio.contains("kafka-go"), "{aio}");
    let kgo = old
        .iter()
        .find(|s| s.contains("\"issue35-kafka-go-producer\""))
        .expect("kafka-go's producer flagged");
    assert!(kgo.contains("Produce v8 < v13"), "{kgo}");
    // ApiVersions v0 is asked before the broker's versions are known: never an old use.
    assert!(old.iter().all(|s| !s.contains("ApiVersions")), "{old:?}");
}

#[test]
fn a_java_classic_consumer_commits_with_v9_by_design_and_a_kip848_one_with_v10() {
    let (cs, findings) = analyses("issue35-classic.pcap");
    let commit = api(&cs, "issue35-classic-j1", 8);
    assert_eq!(versions(commit), [9]);
    assert_eq!(commit["broker_max"], 10);
    assert_eq!(commit["older_than_broker"], true);
    assert!(commit["by_design"].is_string(), "{commit:?}");
    assert!(
        findings
            .iter()
            .filter(|f| f["kind"] == "old_client_version")
            .all(|f| !f["summary"].as_str().unwrap_or("").contains("OffsetCommit")),
        "{findings:?}"
    );
    let j1 = of(&cs, "issue35-classic-j1");
    assert_eq!(j1[0]["software"], "apache-kafka-java");
    assert_eq!(j1[0]["version"], "4.4.0");
    // librdkafka names itself through confluent-kafka-python.
    let c1 = of(&cs, "issue35-classic-c1");
    assert_eq!(c1.len(), 1, "{c1:?}");
    assert!(c1[0]["software"]
        .as_str()
        .is_some_and(|s| s.starts_with("confluent-kafka")));

    let (cs, _) = analyses("issue35-kip848.pcap");
    let commit = api(&cs, "issue35-kip848-j1", 8);
    assert_eq!(versions(commit), [10]);
    assert_eq!(commit["older_than_broker"], false);
    assert!(commit["by_design"].is_null());
}

#[test]
fn streams_clients_are_java_and_franz_go_is_kgo() {
    let (cs, _) = analyses("issue35-streams.pcap");
    let streams: Vec<&J> = cs
        .iter()
        .filter(|c| {
            c["client_id"]
                .as_str()
                .is_some_and(|s| s.starts_with("issue35-streams-s"))
        })
        .collect();
    assert!(streams.len() >= 3, "{streams:?}");
    for c in &streams {
        assert_eq!(c["software"], "apache-kafka-java", "{c:?}");
    }
    let heartbeats = streams
        .iter()
        .flat_map(|c| arr(&c["apis"]))
        .filter(|a| a["api_key"] == 88)
        .count();
    assert!(heartbeats >= 3, "StreamsGroupHeartbeat of each instance");
    for id in ["issue35-franz-f1", "issue35-franz-producer"] {
        let e = of(&cs, id);
        assert!(!e.is_empty(), "{id}");
        assert!(e.iter().all(|c| c["software"] == "kgo"), "{id}: {e:?}");
    }
}
