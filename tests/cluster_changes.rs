//! What changed in the cluster (issue 35, item 11), from the KRaft metadata log the brokers
//! fetch, against the nodes' own logs of the same run (samples/logs/cluster-*-nodes.log: the
//! controller's "Replayed ...Record" lines): the summary line says what each record changed,
//! and `--analyses=cluster` lists every change once, with its time and frame.

mod common;

use common::cli::{arr, run};
use serde_json::Value as J;
use std::collections::BTreeSet;

/// The `cluster` analysis of a capture, as `--stats --json` gives it.
fn cluster(file: &str) -> J {
    let out = run(&[
        "--no-progress",
        "--stats",
        "--json",
        "-q",
        "--analyses=cluster",
        file,
    ]);
    let v: J = serde_json::from_str(&out).expect("stats JSON");
    v["stats"]["analyses"]["cluster"].clone()
}

/// A node log line's time (`[2026-12-01 20:04:14,526]`, UTC) in ms since 1970.
fn log_ms(line: &str) -> Option<i64> {
    let at = line.find('[')?;
    let stamp = line.get(at + 1..at + 24)?;
    let t = chrono::NaiveDateTime::parse_from_str(stamp, "%Y-%m-%d %H:%M:%S,%3f").ok()?;
    Some(t.and_utc().timestamp_millis())
}

/// `key=value` of a record as the controller logs it: `brokerId=3`.
fn field(line: &str, key: &str) -> Option<i64> {
    let at = line.find(&format!("{key}="))? + key.len() + 1;
    let rest = line.get(at..)?;
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '-'))
        .unwrap_or(rest.len());
    rest.get(..end)?.parse().ok()
}

/// The broker changes the controller replayed, as (kind, broker, epoch, log time ms).
fn replayed_broker_changes(log: &str) -> Vec<(String, i64, i64, i64)> {
    let mut out = Vec::new();
    for l in log.lines().filter(|l| l.starts_with("node0 server.log:")) {
        let (Some(b), Some(e), Some(t)) =
            (field(l, "brokerId"), field(l, "brokerEpoch"), log_ms(l))
        else {
            continue;
        };
        if l.contains("Replayed RegisterBrokerRecord") {
            out.push(("broker_registered".to_string(), b, e, t));
        } else if l.contains("Replayed BrokerRegistrationChangeRecord") {
            match field(l, "fenced") {
                Some(1) => out.push(("broker_fenced".to_string(), b, e, t)),
                Some(-1) => out.push(("broker_unfenced".to_string(), b, e, t)),
                _ => {}
            }
            if field(l, "inControlledShutdown") == Some(1) {
                out.push(("broker_shutting_down".to_string(), b, e, t));
            }
        }
    }
    out
}

/// Every broker change the controller replayed during the capture is a row, at the time
/// the record was appended (within 100 ms of the controller's log line), and no other.
fn broker_changes_match_the_controller(capture: &str, log: &str) -> J {
    let c = cluster(capture);
    let text = std::fs::read_to_string(common::cli::root().join(log)).expect("node log");
    let want = replayed_broker_changes(&text);
    assert!(!want.is_empty(), "{log}: no broker changes");
    let rows = arr(&c["changes"]);
    let got: BTreeSet<(String, i64, i64)> = rows
        .iter()
        .filter(|r| r["kind"].as_str().is_some_and(|k| k.starts_with("broker_")))
        .map(|r| {
            let broker = r["subjects"][0]
                .as_str()
                .and_then(|s| s.strip_prefix("broker "))
                .and_then(|s| s.parse().ok())
                .unwrap_or(-1);
            let epoch = r["detail"]
                .as_str()
                .and_then(|d| d.strip_prefix("epoch "))
                .and_then(|d| d.split(',').next())
                .and_then(|d| d.parse().ok())
                .unwrap_or(-1);
            (
                r["kind"].as_str().unwrap_or_default().to_string(),
                broker,
                epoch,
            )
        })
        .collect();
    let expected: BTreeSet<(String, i64, i64)> = want
        .iter()
        .map(|(k, b, e, _)| (k.clone(), *b, *e))
        .collect();
    assert_eq!(got, expected, "{capture}");
    for (kind, b, e, t) in &want {
        let row = rows.iter().find(|r| {
            r["kind"] == kind.as_str()
                && r["subjects"][0] == format!("broker {b}").as_str()
                && r["detail"]
                    .as_str()
                    .is_some_and(|d| d.starts_with(&format!("epoch {e}")))
        });
        let at = row.and_then(|r| r["log_time_ms"].as_i64()).unwrap_or(0);
        assert!(
            (at - t).abs() <= 100,
            "{kind} broker {b}: log {t}, record {at}"
        );
    }
    c
}

/// The partitions the controller changed at once (`changing 18 partition(s)`) are the ISR
/// changes told in the frame that carried that change first.
fn isr_changes_at(c: &J, frame: u64) -> u64 {
    arr(&c["changes"])
        .iter()
        .filter(|r| r["frame"] == frame)
        .filter(|r| r["kind"].as_str().is_some_and(|k| k.starts_with("isr_")))
        .map(|r| r["count"].as_u64().unwrap_or(0))
        .sum()
}

fn row<'a>(c: &'a J, kind: &str) -> &'a J {
    arr(&c["changes"])
        .iter()
        .find(|r| r["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} row in {c}"))
}

/// SIGKILL of broker 3: the controller fences it when its session times out (18 partitions
/// change: ISRs shrink, its leaderships move), then it registers again at epoch 204 and is
/// unfenced; the ISRs grow back.
#[test]
fn a_killed_broker_is_fenced_its_leaders_move_and_it_comes_back() {
    let c = broker_changes_match_the_controller(
        "samples/cluster-kill.pcap",
        "samples/logs/cluster-kill-nodes.log",
    );
    let fenced = row(&c, "broker_fenced");
    let frame = fenced["frame"].as_u64().unwrap_or(0);
    assert_eq!(isr_changes_at(&c, frame), 18, "{c}");
    // Known before (a Metadata answer of the capture): the ISRs lost broker 3, and leaders
    // moved off it.
    let shrunk = arr(&c["changes"])
        .iter()
        .filter(|r| r["frame"] == frame && r["kind"] == "isr_shrunk")
        .all(|r| {
            r["detail"].as_str().is_some_and(|d| {
                let (before, after) = d.split_once('→').unwrap_or_default();
                before.contains('3') && !after.contains('3')
            })
        });
    assert!(shrunk, "{c}");
    let moved: Vec<&J> = arr(&c["changes"])
        .iter()
        .filter(|r| r["frame"] == frame && r["kind"] == "leader_moved")
        .collect();
    assert!(
        moved
            .iter()
            .any(|r| r["detail"].as_str().is_some_and(|d| d.starts_with("3→"))),
        "{c}"
    );
    assert!(
        arr(&c["changes"])
            .iter()
            .any(|r| r["kind"] == "isr_expanded"),
        "{c}"
    );
    // Each record counted once however many fetchers fetched it.
    assert!(c["seen_again"].as_u64().unwrap_or(0) >= c["records"].as_u64().unwrap_or(0));
    let broker3 = arr(&c["brokers"])
        .iter()
        .find(|b| b["broker"] == 3)
        .cloned();
    assert_eq!(
        broker3,
        Some(
            serde_json::json!({"broker": 3, "epoch": 204, "registered": true, "fenced": false, "shutting_down": false})
        )
    );
}

/// SIGTERM of broker 2: a controlled shutdown (its leaderships move away first), then it is
/// fenced, registers again at epoch 211 and is unfenced.
#[test]
fn a_stopped_broker_shuts_down_in_control_and_comes_back() {
    let c = broker_changes_match_the_controller(
        "samples/cluster-restart.pcap",
        "samples/logs/cluster-restart-nodes.log",
    );
    let down = row(&c, "broker_shutting_down");
    assert_eq!(down["subjects"][0], "broker 2");
    let frame = down["frame"].as_u64().unwrap_or(0);
    assert_eq!(isr_changes_at(&c, frame), 18, "{c}");
}

/// The admin's changes through the brokers: a topic created with its configs and partitions
/// (then two more), quotas for alice, a SCRAM user, a reassignment, the topic deleted.
#[test]
fn admin_changes_are_listed() {
    let c = cluster("samples/cluster-admin.pcap");
    let text =
        std::fs::read_to_string(common::cli::root().join("samples/logs/cluster-admin-nodes.log"))
            .expect("node log");
    // `Replayed PartitionRecord for new partition cluster-admin-a-0 ... replicas=[2, 3, 1]`.
    let mut created = BTreeSet::new();
    for l in text
        .lines()
        .filter(|l| l.contains("Replayed PartitionRecord for new partition"))
    {
        let name = l
            .split("new partition ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .unwrap_or_default();
        let replicas = l
            .split("replicas=[")
            .nth(1)
            .and_then(|r| r.split(']').next())
            .unwrap_or_default()
            .replace(' ', "");
        created.insert((name.to_string(), format!("replicas [{replicas}]")));
    }
    assert_eq!(created.len(), 4, "{text}");
    let mut got = BTreeSet::new();
    for r in arr(&c["changes"])
        .iter()
        .filter(|r| r["kind"] == "partition_created")
    {
        let detail = r["detail"].as_str().unwrap_or_default();
        let replicas = detail.split(", ").nth(1).unwrap_or_default().to_string();
        for s in arr(&r["subjects"]) {
            got.insert((s.as_str().unwrap_or_default().to_string(), replicas.clone()));
        }
    }
    assert_eq!(got, created);
    let kinds: BTreeSet<&str> = arr(&c["changes"])
        .iter()
        .filter_map(|r| r["kind"].as_str())
        .collect();
    for k in [
        "topic_created",
        "config_set",
        "quota_set",
        "scram_user_set",
        "replicas_changed",
        "topic_deleted",
    ] {
        assert!(kinds.contains(k), "no {k} in {kinds:?}");
    }
    let scram = row(&c, "scram_user_set");
    assert_eq!(scram["subjects"][0], "bob");
    assert_eq!(scram["detail"], "SCRAM_SHA_256");
    let quotas: BTreeSet<&str> = arr(&c["changes"])
        .iter()
        .filter(|r| r["kind"] == "quota_set" && r["subjects"][0] == "user=alice")
        .filter_map(|r| r["detail"].as_str())
        .collect();
    assert_eq!(
        quotas,
        BTreeSet::from(["producer_byte_rate", "request_percentage"])
    );
    let configs: Vec<&str> = arr(&c["changes"])
        .iter()
        .filter(|r| r["kind"] == "config_set")
        .filter_map(|r| r["detail"].as_str())
        .collect();
    assert!(configs.contains(&"retention.ms=3600000"), "{configs:?}");
    assert!(configs.contains(&"min.insync.replicas=2"), "{configs:?}");
}

/// A steady cluster's log holds only NoOpRecords: nothing changed, and nothing is said.
#[test]
fn a_steady_cluster_changes_nothing() {
    let c = cluster("samples/cluster-steady.pcap");
    assert_eq!(c["records"], 0);
    assert!(arr(&c["changes"]).is_empty());
    let table = run(&[
        "--no-progress",
        "--stats",
        "-q",
        "--analyses=cluster",
        "samples/cluster-steady.pcap",
    ]);
    assert!(!table.contains("Cluster changes"), "{table}");
}

/// The summary line of a metadata-log Fetch answer says what its records change, not only
/// their types; the SCRAM record says the user, never its salt or keys.
#[test]
fn summary_lines_say_what_the_log_changed() {
    let kill = run(&["--no-progress", "samples/cluster-kill.pcap"]);
    for want in [
        "[BrokerRegistrationChange broker=3 epoch=27 unfenced→fenced",
        "RegisterBroker broker=3 epoch=204 fenced",
        "BrokerRegistrationChange broker=3 epoch=204 fenced→unfenced",
        "PartitionChange cluster-order-counts-1 leader=1 isr=[1,2]",
    ] {
        assert!(kill.contains(want), "{want} missing");
    }
    let admin = run(&["--no-progress", "samples/cluster-admin.pcap"]);
    for want in [
        "Topic created cluster-admin-a",
        "Config TOPIC:cluster-admin-a retention.ms=3600000",
        "UserScramCredential \"bob\" SCRAM_SHA_256",
        "Topic deleted cluster-admin-a",
    ] {
        assert!(admin.contains(want), "{want} missing");
    }
    assert!(!admin.contains("bob-secret"));
    // Records that change nothing an operator follows are counted by type, as before.
    let steady = run(&["--no-progress", "samples/cluster-steady.pcap"]);
    assert!(steady.contains("[NoOpRecord×1]"));
}
