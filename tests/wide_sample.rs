//! The wide sample (samples/wide-ak44.pcap, made by scripts/make-samples-wide.sh on a real
//! Apache Kafka 4.4.0 node: topics of 200, 300 and 350 partitions, librdkafka admins, the Java
//! kafka-topics tool, 50 short-lived librdkafka producer/consumer pairs) against its clients'
//! own logs (samples/logs/wide-ak44.ndjson and wide-ak44-topics-*.log; samples/README.md).
//!
//! Every record a producer's delivery report names is in a captured Produce request from that
//! client, at the partition and the offset the Produce answer gives; every record a consumer
//! logged is in a captured Fetch answer on that consumer's connection at its offset; every
//! complete Metadata answer to an admin names each wide topic with the partition count the
//! admin logged; kafka-topics' DescribeTopicPartitions pages hold, together, each partition it
//! printed once.

use serde_json::Value as J;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::process::Command;

fn samples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples")
}

/// kdissect --json on the sample: one value a message.
fn messages() -> Vec<J> {
    let out = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(["--json", "--no-progress"])
        .arg(samples().join("wide-ak44.pcap"))
        .output()
        .expect("run kdissect");
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn log_lines() -> Vec<J> {
    std::fs::read_to_string(samples().join("logs/wide-ak44.ndjson"))
        .expect("samples/logs/wide-ak44.ndjson")
        .lines()
        .map(|l| serde_json::from_str(l).expect("an NDJSON line"))
        .collect()
}

/// Client id of each stream, from its requests.
fn clients(msgs: &[J]) -> HashMap<u64, String> {
    msgs.iter()
        .filter_map(|m| Some((m["stream"].as_u64()?, m["client_id"].as_str()?.to_string())))
        .collect()
}

/// (client, "topic/partition", offset, key, value) of every record in the messages of one API
/// and direction: offsets from each batch's base offset in a Fetch answer, 0 in a Produce
/// request.
fn records(
    msgs: &[J],
    api: &str,
    direction: &str,
    streams: &HashMap<u64, String>,
) -> BTreeSet<(String, String, i64, String, String)> {
    let mut out = BTreeSet::new();
    for m in msgs
        .iter()
        .filter(|m| m["api_name"] == api && m["direction"] == direction)
    {
        let client = streams[&m["stream"].as_u64().expect("stream")].clone();
        let (topics, parts, name) = if api == "Produce" {
            ("TopicData", "PartitionData", "Name")
        } else {
            ("Responses", "Partitions", "TopicId_name")
        };
        for t in m["body"][topics].as_array().into_iter().flatten() {
            let topic = t[name].as_str().expect("topic name").to_string();
            for p in t[parts].as_array().into_iter().flatten() {
                let index = p["Index"]
                    .as_i64()
                    .or(p["PartitionIndex"].as_i64())
                    .expect("partition");
                for b in p["Records"].as_array().into_iter().flatten() {
                    for r in b["Records"].as_array().into_iter().flatten() {
                        let key = r["key"].as_str().unwrap_or_default().to_string();
                        let value = r["value"].as_str().unwrap_or_default().to_string();
                        // A Produce request's batches carry no offset yet (its answer does).
                        let offset = if api == "Fetch" {
                            b["baseOffset"].as_i64().expect("baseOffset")
                                + r["offsetDelta"].as_i64().expect("offsetDelta")
                        } else {
                            0
                        };
                        out.insert((
                            client.clone(),
                            format!("{topic}/{index}"),
                            offset,
                            key,
                            value,
                        ));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn produced_records_are_in_produce_requests_at_the_answered_offsets() {
    let msgs = messages();
    let streams = clients(&msgs);
    let sent = records(&msgs, "Produce", "request", &streams);
    // Base offsets the answers give, per client and topic/partition, in answer order.
    let mut answered: BTreeMap<(String, String), Vec<i64>> = BTreeMap::new();
    for m in msgs
        .iter()
        .filter(|m| m["api_name"] == "Produce" && m["direction"] == "response")
    {
        let client = streams[&m["stream"].as_u64().expect("stream")].clone();
        for t in m["body"]["Responses"].as_array().into_iter().flatten() {
            for p in t["PartitionResponses"].as_array().into_iter().flatten() {
                assert_eq!(p["ErrorCode"], 0, "{m}");
                let tp = format!("{}/{}", t["Name"].as_str().expect("name"), p["Index"]);
                answered
                    .entry((client.clone(), tp))
                    .or_default()
                    .push(p["BaseOffset"].as_i64().expect("BaseOffset"));
            }
        }
    }
    let mut n = 0;
    for l in log_lines().iter().filter(|l| l["event"] == "produced") {
        let client = l["client"].as_str().expect("client").to_string();
        let tp = format!("{}/{}", l["topic"].as_str().expect("topic"), l["partition"]);
        let key = l["key"].as_str().expect("key").to_string();
        let value = l["value"].as_str().expect("value").to_string();
        assert!(
            sent.contains(&(client.clone(), tp.clone(), 0, key, value)),
            "{l} not in a Produce request"
        );
        let offsets = &answered[&(client, tp)];
        assert!(
            offsets.contains(&l["offset"].as_i64().expect("offset")),
            "{l}: {offsets:?}"
        );
        n += 1;
    }
    assert_eq!(n, 150);
}

#[test]
fn consumed_records_are_in_fetch_answers_at_their_offsets() {
    let msgs = messages();
    let streams = clients(&msgs);
    let fetched = records(&msgs, "Fetch", "response", &streams);
    let mut n = 0;
    for l in log_lines().iter().filter(|l| l["event"] == "consumed") {
        let want = (
            l["client"].as_str().expect("client").to_string(),
            format!("{}/{}", l["topic"].as_str().expect("topic"), l["partition"]),
            l["offset"].as_i64().expect("offset"),
            l["key"].as_str().expect("key").to_string(),
            l["value"].as_str().expect("value").to_string(),
        );
        assert!(fetched.contains(&want), "{l} not in a Fetch answer");
        n += 1;
    }
    assert_eq!(n, 150);
}

#[test]
fn metadata_answers_give_the_partition_counts_the_admins_logged() {
    let msgs = messages();
    let streams = clients(&msgs);
    let mut logged: BTreeMap<(String, String), u64> = BTreeMap::new();
    // The last admin also saw __consumer_offsets, made by the consumers' FindCoordinator.
    for l in log_lines().iter().filter(|l| {
        l["event"] == "metadata_topic"
            && l["topic"].as_str().is_some_and(|t| t.starts_with("wide-"))
    }) {
        let key = (
            l["client"].as_str().expect("client").to_string(),
            l["topic"].as_str().expect("topic").to_string(),
        );
        logged.insert(key, l["partitions"].as_u64().expect("partitions"));
    }
    assert_eq!(logged.len(), 15, "five admins, three topics");
    let mut checked = 0;
    for m in msgs.iter().filter(|m| {
        m["api_name"] == "Metadata"
            && m["direction"] == "response"
            && m["partial"] != true
            && m["malformed"].as_array().is_some_and(Vec::is_empty)
    }) {
        let client = &streams[&m["stream"].as_u64().expect("stream")];
        for t in m["body"]["Topics"].as_array().into_iter().flatten() {
            let topic = t["Name"].as_str().unwrap_or_default().to_string();
            if let Some(&want) = logged.get(&(client.clone(), topic)) {
                let got = t["Partitions"].as_array().expect("Partitions").len() as u64;
                assert_eq!(got, want, "{client} {}", t["Name"]);
                checked += 1;
            }
        }
    }
    assert!(checked >= 15, "only {checked} topics checked");
}

#[test]
fn describe_topic_partitions_pages_hold_every_partition_the_tool_printed_once() {
    let msgs = messages();
    // The describe-all run printed each partition of the three topics; its answers came in
    // pages of 50 on its own connections, the describe of wide-a's on others.
    let printed = std::fs::read_to_string(samples().join("logs/wide-ak44-topics-describe-all.log"))
        .expect("describe-all log");
    let printed: BTreeSet<String> = printed
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let rest = l.strip_prefix("Topic: ")?;
            let (topic, rest) = rest.split_once('\t')?;
            let part = rest.strip_prefix("Partition: ")?.split('\t').next()?;
            Some(format!("{topic}/{part}"))
        })
        .collect();
    assert_eq!(printed.len(), 850);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut pages = 0;
    for m in msgs
        .iter()
        .filter(|m| m["api_name"] == "DescribeTopicPartitions" && m["direction"] == "response")
    {
        pages += 1;
        let mut in_page = 0;
        for t in m["body"]["Topics"].as_array().into_iter().flatten() {
            for p in t["Partitions"].as_array().into_iter().flatten() {
                let tp = format!(
                    "{}/{}",
                    t["Name"].as_str().expect("name"),
                    p["PartitionIndex"]
                );
                *seen.entry(tp).or_default() += 1;
                in_page += 1;
            }
        }
        assert!(in_page <= 50, "a page of {in_page} partitions");
    }
    assert_eq!(pages, 21, "17 pages of the three topics, 4 of wide-a");
    // wide-a was described twice (200 partitions), the other topics once.
    for tp in &printed {
        let want = if tp.starts_with("wide-a/") { 2 } else { 1 };
        assert_eq!(seen.get(tp), Some(&want), "{tp}");
    }
    assert_eq!(seen.len(), printed.len());
}

/// Three bootstrap connections are reset by their admin while the broker is still sending the
/// answer to a Metadata request (22 KB for all topics). Each answer is shown from its own start,
/// partial, with its size prefix's length (as tshark reads it): runs of bytes
/// inside it that look like a frame start (a size and a waiting correlation id) are no reason
/// to call its own prefix bogus and resynchronise into its middle.
#[test]
fn answers_cut_by_a_reset_are_shown_from_their_own_start() {
    let out = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(["--no-progress"])
        .arg(samples().join("wide-ak44.pcap"))
        .output()
        .expect("run kdissect");
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !text.contains("cannot start a frame"),
        "a cut answer's prefix taken for bogus"
    );
    let cut: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("Metadata v13 Response") && l.contains("[partial:"))
        .collect();
    assert_eq!(cut.len(), 3, "{cut:#?}");
    for l in &cut {
        // Two answers of every topic (22 264 bytes) and one of wide-c alone (9 198).
        let whole = l
            .split(" of ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse::<u64>().ok());
        assert!(matches!(whole, Some(22264 | 9198)), "{l}");
        assert!(l.contains("brokers=1"), "{l}");
    }
    assert!(err.contains("0 bytes skipped to resynchronise"), "{err}");
}
