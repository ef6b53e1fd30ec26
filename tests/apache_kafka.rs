//! Real Apache Kafka 4.4.0 captures (samples/ak44-*.pcap) against the clients' own logs
//! (samples/logs/ak44-*.log): every request a client says it sent is in the capture with the same
//! API, version and correlation id (and size, where the client logs it), decoded cleanly; and the
//! values the clients report (cluster id, controller, topic ids, cursors, error codes, records,
//! offsets, codecs, SASL mechanisms) are the values kdissect decodes.

use kdissect::kafka::names::api_key_from_str;
use serde_json::Value as J;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

fn samples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples")
}

/// The Apache Kafka captures that have a client log, by name (`ak44-admin`).
fn captures() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(samples().join("logs"))
        .expect("samples/logs")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.strip_suffix(".log")
                .filter(|s| s.starts_with("ak44-"))
                .map(str::to_string)
        })
        .filter(|n| samples().join(format!("{n}.pcap")).exists())
        .collect();
    v.sort();
    assert!(v.len() >= 20, "only {} Apache Kafka captures", v.len());
    v
}

fn log(name: &str) -> String {
    std::fs::read_to_string(samples().join("logs").join(format!("{name}.log"))).expect("log")
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .output()
        .expect("run kdissect");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The capture as kdissect's JSON, one value per message (broker ports 9092 and 9094).
fn decoded(name: &str) -> Vec<J> {
    let path = samples().join(format!("{name}.pcap"));
    let (code, out, err) = run(&[
        "--json",
        "-p",
        "9092",
        "-p",
        "9094",
        &path.to_string_lossy(),
    ]);
    assert_eq!(code, Some(0), "{name}: {err}");
    out.lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

fn is_request(m: &J) -> bool {
    m["direction"] == "request"
}

fn clean(m: &J) -> bool {
    m["malformed"].as_array().is_some_and(|a| a.is_empty()) && m.get("assumed_version").is_none()
}

/// A request as a client logged it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Logged {
    key: i16,
    version: i16,
    corr: Option<i32>,
    /// Bytes of the frame with its size prefix.
    size: Option<u64>,
    client_id: Option<String>,
}

/// An API named as a client names it (`DESCRIBE_CLUSTER`, `ApiVersionRequest`,
/// `IncrementalAlterConfigsRequestRequest`) to its key.
fn key_of(name: &str) -> Option<i16> {
    let mut n = name.trim();
    while let Some(s) = n.strip_suffix("Request") {
        n = s;
    }
    api_key_from_str(n).or_else(|| api_key_from_str(&format!("{n}s")))
}

/// The text after `key` up to the first of `ends`.
fn after<'a>(line: &'a str, key: &str, ends: &[char]) -> Option<&'a str> {
    let i = line.find(key)? + key.len();
    let rest = line.get(i..)?;
    let j = rest.find(|c| ends.contains(&c)).unwrap_or(rest.len());
    rest.get(..j)
}

fn num<T: std::str::FromStr>(s: Option<&str>) -> Option<T> {
    s.and_then(|s| s.trim().parse().ok())
}

/// Requests in a client log, whatever the client: the Java NetworkClient's "Sending ... with
/// header RequestHeader(...)", the Go programs' "WIRE port=P > request", librdkafka's "Sent
/// XRequest (vV, N bytes @ 0, CorrId C)", kafka-python's "Request C: XRequest(version=V" and
/// kafkajs's "Request X(key: K, version: V) {...}".
fn logged_requests(text: &str) -> Vec<Logged> {
    let mut out = Vec::new();
    for line in text.lines() {
        let l = if line.contains("Sending ") && line.contains("with header RequestHeader(") {
            let h = after(line, "RequestHeader(", &[')']).unwrap_or("");
            Some(Logged {
                key: after(h, "apiKey=", &[',']).and_then(key_of).expect("api"),
                version: num(after(h, "apiVersion=", &[','])).expect("version"),
                corr: num(after(h, "correlationId=", &[',', ')'])),
                size: None,
                client_id: after(h, "clientId=", &[',']).map(str::to_string),
            })
        } else if line.contains(" WIRE port=") && line.contains(" > request ") {
            Some(Logged {
                key: num(after(line, "api_key=", &[' '])).expect("key"),
                version: num(after(line, ") v", &[' '])).expect("version"),
                corr: num(after(line, "corr=", &[' '])),
                size: num(after(line, "bytes=", &[' '])),
                client_id: after(line, "client_id=\"", &['"']).map(str::to_string),
            })
        } else if let Some(name) = after(line, ": Sent ", &[' ']).filter(|n| n.ends_with("Request"))
        {
            Some(Logged {
                key: key_of(name).unwrap_or_else(|| panic!("librdkafka name {name}")),
                version: num(after(line, "Request (v", &[','])).expect("version"),
                corr: num(after(line, "CorrId ", &[')', ','])),
                size: num(after(line, ", ", &[' '])),
                client_id: None,
            })
        } else if line.contains("kafka.net.connection") && line.contains("> Request ") {
            let name = after(line, "> Request ", &['(']).and_then(|s| s.split(": ").nth(1));
            Some(Logged {
                key: name.and_then(key_of).expect("kafka-python api"),
                version: num(after(line, "Request(version=", &[',', ')'])).expect("version"),
                corr: num(after(line, "> Request ", &[':'])),
                size: None,
                client_id: None,
            })
        } else if line.contains("[Connection] Request ") && line.contains("(key: ") {
            Some(Logged {
                key: num(after(line, "(key: ", &[','])).expect("key"),
                version: num(after(line, "version: ", &[')'])).expect("version"),
                corr: num(after(line, "\"correlationId\":", &[',', '}'])),
                size: num(after(line, "\"size\":", &[',', '}'])),
                client_id: after(line, "\"clientId\":\"", &['"']).map(str::to_string),
            })
        } else {
            None
        };
        out.extend(l);
    }
    out
}

/// Does a decoded request match what the client logged?
fn same_request(m: &J, l: &Logged) -> bool {
    is_request(m)
        && m["api_key"] == l.key
        && m["api_version"] == l.version
        && l.corr.is_none_or(|c| m["correlation_id"] == c)
        && l.size.is_none_or(|s| m["size"] == s)
        && l.client_id
            .as_ref()
            .is_none_or(|c| m["client_id"].as_str() == Some(c.as_str()))
}

#[test]
fn every_request_a_client_logged_is_in_its_capture_decoded() {
    let mut total = 0;
    for name in captures() {
        if name.ends_with("-ssl") {
            continue; // encrypted: tests/tls.rs
        }
        let msgs = decoded(&name);
        let logged = logged_requests(&log(&name));
        assert!(
            !logged.is_empty(),
            "{name}: no request lines recognised in the log"
        );
        // Each decoded request answers for one logged request at most.
        let mut used = vec![false; msgs.len()];
        for l in &logged {
            let hit = msgs
                .iter()
                .enumerate()
                .position(|(i, m)| !used[i] && same_request(m, l));
            let Some(i) = hit else {
                panic!("{name}: logged request {l:?} is not in the capture");
            };
            used[i] = true;
            assert!(
                clean(&msgs[i]),
                "{name}: {l:?} decoded with problems: {}",
                msgs[i]
            );
        }
        total += logged.len();
    }
    assert!(total >= 400, "only {total} logged requests checked");
}

#[test]
fn every_message_of_the_apache_kafka_captures_decodes_and_pairs() {
    for name in captures() {
        if name.ends_with("-ssl") {
            continue;
        }
        let msgs = decoded(&name);
        assert!(msgs.len() >= 10, "{name}: {} messages", msgs.len());
        for m in &msgs {
            assert!(clean(m), "{name}: {m}");
            if !is_request(m) {
                assert!(m.get("request_frame").is_some(), "{name}: unpaired {m}");
            }
        }
    }
}

/// Every value at `path` (`Topics[*].Name`) in the decoded body.
fn values<'a>(v: &'a J, path: &str) -> Vec<&'a J> {
    let mut cur = vec![v];
    for seg in path.split('.') {
        let (name, all) = match seg.strip_suffix("[*]") {
            Some(n) => (n, true),
            None => (seg, false),
        };
        let mut next = Vec::new();
        for c in cur {
            let x = &c[name];
            if all {
                next.extend(x.as_array().into_iter().flatten());
            } else if !x.is_null() {
                next.push(x);
            }
        }
        cur = next;
    }
    cur
}

fn bodies<'a>(msgs: &'a [J], api: &str, direction: &str) -> Vec<&'a J> {
    msgs.iter()
        .filter(|m| m["api_name"] == api && m["direction"] == direction)
        .map(|m| &m["body"])
        .collect()
}

/// The RESULT lines of a log.
fn results(text: &str) -> Vec<J> {
    text.lines()
        .filter_map(|l| l.find("RESULT {").and_then(|i| l.get(i + 7..)))
        .map(|j| serde_json::from_str(j).unwrap_or_else(|e| panic!("RESULT {j}: {e}")))
        .collect()
}

/// Kafka's base64 (URL-safe, unpadded) topic id to the dashed hex kdissect prints.
fn uuid_of_base64(s: &str) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut bits = 0u32;
    let mut n = 0;
    let mut bytes = Vec::new();
    for c in s.bytes() {
        let v = A.iter().position(|&a| a == c).expect("base64") as u32;
        bits = (bits << 6) | v;
        n += 6;
        if n >= 8 {
            n -= 8;
            bytes.push((bits >> n) as u8);
        }
    }
    let h = hex::encode(&bytes[..16]);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

#[test]
fn cluster_controller_and_brokers_match_the_clients() {
    let mut checked = 0;
    for name in captures() {
        if name.ends_with("-ssl") {
            continue;
        }
        let msgs = decoded(&name);
        for r in results(&log(&name)) {
            if r["op"] != "describeCluster" {
                continue;
            }
            let answers = bodies(&msgs, "DescribeCluster", "response");
            assert!(!answers.is_empty(), "{name}: no DescribeCluster response");
            for b in answers {
                assert_eq!(b["ClusterId"], r["clusterId"], "{name}");
                assert_eq!(b["ControllerId"], r["controller"], "{name}");
                let ids: Vec<&J> = values(b, "Brokers[*].BrokerId");
                assert_eq!(
                    ids.into_iter().cloned().collect::<Vec<_>>(),
                    r["nodes"].as_array().cloned().unwrap_or_default(),
                    "{name}"
                );
            }
            // Every Metadata answer of the capture names the same cluster.
            for b in bodies(&msgs, "Metadata", "response") {
                assert_eq!(b["ClusterId"], r["clusterId"], "{name}");
            }
            checked += 1;
        }
    }
    assert!(checked >= 4, "only {checked} describeCluster results");
}

#[test]
fn topic_ids_partitions_and_errors_match_the_admin_client() {
    let name = "ak44-admin";
    let msgs = decoded(name);
    let results = results(&log(name));
    let metadata = bodies(&msgs, "Metadata", "response");
    let mut by_id = 0;
    for r in results.iter().filter(|r| r["op"] == "describeTopicsById") {
        let id = uuid_of_base64(r["topicId"].as_str().expect("id"));
        let topic = metadata
            .iter()
            .flat_map(|b| values(b, "Topics[*]"))
            .find(|t| t["TopicId"] == id.as_str())
            .unwrap_or_else(|| panic!("topic id {id} not in any Metadata response"));
        if r.get("error").is_some() {
            // kafka-clients maps error 100 to UnknownTopicIdException.
            assert_eq!(topic["ErrorCode"], 100, "{r}");
        } else {
            assert_eq!(topic["Name"], r["topic"]);
            assert_eq!(topic["ErrorCode"], 0);
            let parts = r["partitions"].as_array().expect("partitions");
            assert_eq!(values(topic, "Partitions[*]").len(), parts.len());
            for p in parts {
                let got = values(topic, "Partitions[*]")
                    .into_iter()
                    .find(|x| x["PartitionIndex"] == p["partition"])
                    .expect("partition");
                assert_eq!(got["LeaderId"], p["leader"]);
                assert_eq!(got["ReplicaNodes"], p["replicas"]);
                assert_eq!(got["IsrNodes"], p["isr"]);
            }
        }
        by_id += 1;
    }
    assert!(by_id >= 2, "{by_id} lookups by id");
    // Topic ids the client listed are the ids in the Metadata answers.
    for r in results.iter().filter(|r| r["op"] == "listTopics") {
        for (topic, info) in r["topics"].as_object().into_iter().flatten() {
            let Some(b64) = info["topicId"].as_str() else {
                continue;
            };
            let id = uuid_of_base64(b64);
            assert!(
                metadata
                    .iter()
                    .flat_map(|b| values(b, "Topics[*]"))
                    .any(|t| t["Name"] == topic.as_str() && t["TopicId"] == id.as_str()),
                "{topic} {id}"
            );
        }
    }
    // createTopics: ids of new topics, TOPIC_ALREADY_EXISTS (36) for the existing one.
    let created: Vec<&J> = bodies(&msgs, "CreateTopics", "response")
        .into_iter()
        .flat_map(|b| values(b, "Topics[*]"))
        .collect();
    for r in results.iter().filter(|r| r["op"] == "createTopics") {
        let t = created
            .iter()
            .find(|t| t["Name"] == r["topic"])
            .unwrap_or_else(|| panic!("{r}"));
        match r["error"].as_str() {
            Some(e) if e.starts_with("TopicExistsException") => assert_eq!(t["ErrorCode"], 36),
            _ => {
                assert_eq!(t["ErrorCode"], 0);
                assert_eq!(t["NumPartitions"], r["partitions"]);
                let id = uuid_of_base64(r["topicId"].as_str().expect("topicId"));
                assert_eq!(t["TopicId"], id.as_str());
            }
        }
    }
    // deleteTopics and listOffsets.
    let deleted: Vec<&J> = bodies(&msgs, "DeleteTopics", "response")
        .into_iter()
        .flat_map(|b| values(b, "Responses[*]"))
        .collect();
    for r in results.iter().filter(|r| r["op"] == "deleteTopics") {
        for t in r["topics"].as_array().into_iter().flatten() {
            assert!(
                deleted
                    .iter()
                    .any(|d| d["Name"] == *t && d["ErrorCode"] == 0),
                "{t}"
            );
        }
    }
    let offsets: Vec<&J> = bodies(&msgs, "ListOffsets", "response")
        .into_iter()
        .flat_map(|b| values(b, "Topics[*].Partitions[*]"))
        .collect();
    let mut listed = 0;
    for r in results.iter().filter(|r| r["op"] == "listOffsets") {
        let part: i64 = r["partition"]
            .as_str()
            .and_then(|p| p.rsplit('-').next())
            .and_then(|p| p.parse().ok())
            .expect("partition");
        assert!(
            offsets
                .iter()
                .any(|o| o["PartitionIndex"] == part && o["Offset"] == r["offset"]),
            "{r}"
        );
        listed += 1;
    }
    assert!(listed >= 3);
}

#[test]
fn describe_topic_partitions_follows_its_cursor() {
    let msgs = decoded("ak44-describe-topics-cursor");
    let mut followed = 0;
    for (i, m) in msgs.iter().enumerate() {
        if m["api_name"] != "DescribeTopicPartitions" || is_request(m) {
            continue;
        }
        let next = &m["body"]["NextCursor"];
        if next.is_null() {
            continue;
        }
        // The client's next DescribeTopicPartitions request resumes there: with that cursor,
        // or, when the page ended on a topic boundary (partition 0), by asking for the topics
        // from that one on without a cursor.
        let follow = msgs[i + 1..]
            .iter()
            .find(|r| r["api_name"] == "DescribeTopicPartitions" && is_request(r))
            .expect("a follow-up request");
        assert!(next["TopicName"].is_string() && next["PartitionIndex"].is_i64());
        if follow["body"]["Cursor"].is_null() {
            assert_eq!(next["PartitionIndex"], 0, "{m}");
            assert_eq!(
                follow["body"]["Topics"][0]["Name"], next["TopicName"],
                "{follow}"
            );
        } else {
            assert_eq!(&follow["body"]["Cursor"], next, "{m}");
            followed += 1;
        }
    }
    assert!(followed >= 1, "no request carried a cursor from an answer");
}

/// (topic, partition, offset, key) of a record.
type Rec = (Option<String>, i64, i64, Option<String>);

/// Records in Produce requests (offsets from their responses' base offsets) and in Fetch
/// and ShareFetch responses, with the codec of each batch.
fn records(msgs: &[J]) -> (BTreeSet<Rec>, BTreeSet<Rec>, BTreeMap<i64, usize>) {
    let mut produced = BTreeSet::new();
    let mut fetched = BTreeSet::new();
    let mut codecs: BTreeMap<i64, usize> = BTreeMap::new();
    let topic_of = |t: &J| -> Option<String> {
        t["Name"]
            .as_str()
            .or(t["Topic"].as_str())
            .or(t["TopicId_name"].as_str())
            .map(str::to_string)
    };
    let batch_records = |batch: &J,
                         base: i64,
                         topic: &Option<String>,
                         part: i64,
                         out: &mut BTreeSet<Rec>,
                         codecs: &mut BTreeMap<i64, usize>| {
        *codecs
            .entry(batch["attributes"].as_i64().unwrap_or(0) & 7)
            .or_default() += 1;
        let recs = batch["Records"]
            .as_array()
            .or(batch["compressed"]["decompressed"].as_array())
            .cloned()
            .unwrap_or_default();
        for r in recs {
            let off = base + r["offsetDelta"].as_i64().unwrap_or(0);
            out.insert((
                topic.clone(),
                part,
                off,
                r["key"].as_str().map(str::to_string),
            ));
        }
    };
    for m in msgs {
        let b = &m["body"];
        match (m["api_name"].as_str(), is_request(m)) {
            (Some("Produce"), true) => {
                // The base offsets come from the paired response.
                let resp = msgs.iter().find(|x| {
                    x["api_name"] == "Produce"
                        && !is_request(x)
                        && x["stream"] == m["stream"]
                        && x["correlation_id"] == m["correlation_id"]
                });
                for t in values(b, "TopicData[*]") {
                    let topic = topic_of(t);
                    for p in values(t, "PartitionData[*]") {
                        let part = p["Index"].as_i64().unwrap_or(-1);
                        let base = resp
                            .map(|r| values(&r["body"], "Responses[*].PartitionResponses[*]"))
                            .into_iter()
                            .flatten()
                            .find(|x| x["Index"] == part)
                            .and_then(|x| x["BaseOffset"].as_i64())
                            .unwrap_or(-1);
                        for batch in values(p, "Records[*]") {
                            batch_records(batch, base, &topic, part, &mut produced, &mut codecs);
                        }
                    }
                }
            }
            (Some("Fetch" | "ShareFetch"), false) => {
                for t in values(b, "Responses[*]") {
                    let topic = topic_of(t);
                    for p in values(t, "Partitions[*]") {
                        let part = p["PartitionIndex"].as_i64().unwrap_or(-1);
                        for batch in values(p, "Records[*]") {
                            let base = batch["baseOffset"].as_i64().unwrap_or(-1);
                            batch_records(
                                batch,
                                base,
                                &topic,
                                part,
                                &mut fetched,
                                &mut BTreeMap::new(),
                            );
                        }
                    }
                }
            }
            _ => {}
        }
    }
    (produced, fetched, codecs)
}

/// A record a client reported, and whether the report gave its key.
type Reported = (Rec, bool);

/// Produced and consumed records the clients report, as (topic, partition, offset, key), and
/// whether the client reported the key at all.
fn reported(rs: &[J]) -> (Vec<Reported>, Vec<Reported>) {
    let rec = |r: &J| -> Reported {
        (
            (
                r["topic"].as_str().map(str::to_string),
                r["partition"].as_i64().expect("partition"),
                r["offset"].as_i64().expect("offset"),
                r["key"].as_str().map(str::to_string),
            ),
            r.get("key").is_some(),
        )
    };
    let produced = rs
        .iter()
        .filter(|r| (r["op"] == "send" && r.get("offset").is_some()) || r["result"] == "produced")
        .filter(|r| r.get("partition").is_some())
        .map(rec)
        .collect();
    let consumed = rs
        .iter()
        .filter(|r| r["op"] == "record" || r["result"] == "consumed")
        .map(rec)
        .collect();
    (produced, consumed)
}

fn contains(set: &BTreeSet<Rec>, want: &Rec, check_key: bool) -> bool {
    set.iter().any(|(t, p, o, k)| {
        (want.0.is_none() || t.is_none() || *t == want.0)
            && *p == want.1
            && *o == want.2
            && (!check_key || *k == want.3)
    })
}

#[test]
fn produced_and_consumed_records_match_the_clients() {
    let mut checked = 0;
    for name in captures() {
        if name.ends_with("-ssl") {
            continue;
        }
        let msgs = decoded(&name);
        let (produced, fetched, _) = records(&msgs);
        let (p, c) = reported(&results(&log(&name)));
        for (r, keyed) in &p {
            assert!(
                contains(&produced, r, *keyed),
                "{name}: produced {r:?} not decoded"
            );
        }
        for (r, keyed) in &c {
            assert!(
                contains(&fetched, r, *keyed),
                "{name}: consumed {r:?} not decoded"
            );
        }
        checked += p.len() + c.len();
    }
    assert!(checked >= 200, "only {checked} records checked");
}

#[test]
fn producers_use_the_codec_they_were_given() {
    for (codec, id) in [("gzip", 1), ("snappy", 2), ("lz4", 3), ("zstd", 4)] {
        let name = format!("ak44-produce-{codec}");
        let (_, _, codecs) = records(&decoded(&name));
        assert!(
            codecs.get(&id).is_some_and(|n| *n > 0),
            "{name}: {codecs:?}"
        );
        assert_eq!(codecs.len(), 1, "{name}: every batch {codec}: {codecs:?}");
    }
}

#[test]
fn sasl_mechanisms_and_users_match_and_passwords_never_show() {
    let mut logins = 0;
    for name in captures() {
        let rs = results(&log(&name));
        let Some(login) = rs.iter().find(|r| r["op"] == "login") else {
            continue;
        };
        let msgs = decoded(&name);
        let mech = login["mechanism"].as_str().expect("mechanism");
        let hs: Vec<&J> = bodies(&msgs, "SaslHandshake", "request");
        assert!(
            !hs.is_empty() && hs.iter().all(|b| b["Mechanism"] == mech),
            "{name}"
        );
        let offered = bodies(&msgs, "SaslHandshake", "response");
        assert!(offered
            .iter()
            .all(|b| values(b, "Mechanisms[*]").iter().any(|m| *m == mech)));
        let user = login["user"].as_str().expect("user");
        let auth = bodies(&msgs, "SaslAuthenticate", "request");
        assert!(!auth.is_empty(), "{name}");
        // The user: PLAIN's authcid, SCRAM's username, or the bearer token's subject, on the
        // SaslAuthenticate summary line.
        let pcap = samples().join(format!("{name}.pcap"));
        let pcap = pcap.to_string_lossy();
        let (_, lines, _) = run(&["-p", "9094", &pcap]);
        assert!(
            lines
                .lines()
                .any(|l| l.contains("SaslAuthenticate") && l.contains(&format!("user=\"{user}\""))),
            "{name}: user {user}"
        );
        // The log holds the (fake) password or token; no view of the capture does.
        let password = login["password"]
            .as_str()
            .or(login["token"].as_str())
            .expect("password or token");
        for view in [
            &["-V"][..],
            &["-x"],
            &["--json"],
            &["--json", "--json-spans"],
            &["-V", "--wide"],
        ] {
            let mut args = view.to_vec();
            args.extend(["-p", "9094", &pcap]);
            let (_, out, err) = run(&args);
            assert!(
                !out.contains(password)
                    && !out.contains(&hex::encode(password))
                    && !err.contains(password),
                "{name} {view:?} shows the password"
            );
        }
        let (_, out, _) = run(&["--json", "--show-secrets", "-p", "9094", &pcap]);
        if mech == "PLAIN" || mech == "OAUTHBEARER" {
            assert!(out.contains(password), "--show-secrets shows it");
        }
        logins += 1;
    }
    assert!(logins >= 3, "only {logins} logins");
}

#[test]
fn api_versions_v5_decodes_in_full() {
    let mut seen = 0;
    for name in captures() {
        if name.ends_with("-ssl") {
            continue;
        }
        let text = log(&name);
        for m in decoded(&name) {
            if m["api_name"] != "ApiVersions" || m["api_version"] != 5 {
                continue;
            }
            assert!(clean(&m), "{name}: {m}");
            if is_request(&m) {
                assert!(m["body"]["ClientSoftwareName"].is_string());
                assert!(m["body"].get("NodeId").is_some() && m["body"].get("ClusterId").is_some());
            } else {
                let n = m["body"]["ApiKeys"].as_array().map_or(0, Vec::len);
                assert!(n > 70, "{name}: {n} APIs");
                // The Java client logs the broker's answer: as many ApiVersion entries.
                if let Some(line) = text
                    .lines()
                    .find(|l| l.contains("Received API_VERSIONS response"))
                {
                    assert_eq!(line.matches("ApiVersion(apiKey=").count(), n, "{name}");
                }
            }
            seen += 1;
        }
    }
    assert!(seen >= 20, "only {seen} ApiVersions v5 messages");
}

#[test]
fn committed_offsets_match_the_consumers() {
    let mut checked = 0;
    for name in captures() {
        let rs = results(&log(&name));
        let Some(committed) = rs.iter().find_map(|r| {
            r.get("committed")
                .or_else(|| (r["op"] == "listConsumerGroupOffsets").then(|| &r["offsets"]))
        }) else {
            continue;
        };
        let msgs = decoded(&name);
        // OffsetCommit requests, or TxnOffsetCommit for offsets sent with a transaction, or
        // the OffsetFetch answers the admin client read them back from.
        let mut seen: Vec<(i64, i64)> = Vec::new();
        for (api, path, off) in [
            ("OffsetCommit", "Topics[*].Partitions[*]", "CommittedOffset"),
            (
                "TxnOffsetCommit",
                "Topics[*].Partitions[*]",
                "CommittedOffset",
            ),
            (
                "OffsetFetch",
                "Groups[*].Topics[*].Partitions[*]",
                "CommittedOffset",
            ),
        ] {
            for dir in ["request", "response"] {
                for b in bodies(&msgs, api, dir) {
                    for p in values(b, path) {
                        if let (Some(i), Some(o)) = (p["PartitionIndex"].as_i64(), p[off].as_i64())
                        {
                            seen.push((i, o));
                        }
                    }
                }
            }
        }
        for (tp, off) in committed.as_object().into_iter().flatten() {
            let part: i64 = tp
                .rsplit('-')
                .next()
                .and_then(|p| p.parse().ok())
                .expect("tp");
            assert!(
                seen.contains(&(part, off.as_i64().expect("offset"))),
                "{name}: {tp}={off}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} committed offsets");
}
