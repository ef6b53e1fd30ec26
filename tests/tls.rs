//! TLS on a Kafka port: reported once per connection (version, SNI, bytes encrypted), never as
//! a stream of resync or malformed notices.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::process::Command;

fn kdissect(args: &[&str]) -> (Option<i32>, String, String) {
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

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/ak44-ssl.pcap");

#[test]
fn each_tls_connection_is_one_line() {
    let (code, out, err) = kdissect(&["-p", "9093", SAMPLE]);
    assert_eq!(code, Some(0), "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    // The Java producer over SSL opened four connections to the broker (see samples/README.md).
    assert_eq!(lines.len(), 4, "{out}");
    for l in &lines {
        assert!(l.contains("TLS connection, TLS 1.3"), "{l}");
        assert!(l.contains("→ 127.0.0.1:9093"), "{l}");
        assert!(
            l.contains("cannot be decoded without the session keys"),
            "{l}"
        );
        let bytes: u64 = l
            .split(": ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(bytes > 1000, "encrypted bytes in {l}");
    }
    assert!(
        !out.contains("!!") && !err.contains("malformed"),
        "{out}{err}"
    );
}

#[test]
fn tls_on_a_port_not_given_is_counted_not_listed() {
    let (code, out, err) = kdissect(&[SAMPLE]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("4 TLS connections (15459 bytes) were encrypted and could not be decoded: no key log was given"),
        "{err}"
    );
    assert!(
        err.contains("none of them is on a port given with -p (server port 9093): -p 9093 lists them one by one"),
        "{err}"
    );
    assert!(!err.contains("no Kafka traffic found"), "{err}");
}

#[test]
fn json_keeps_stdout_for_messages() {
    let (code, out, err) = kdissect(&["-p", "9093", "--json", SAMPLE]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(err.matches("TLS connection, TLS 1.3").count(), 4, "{err}");
}

// Decryption with key logs: samples/tls-*.pcap with the key logs written beside them by the
// clients (and the broker) of the same run (scripts/make-samples-tls.sh).

fn sample(name: &str) -> String {
    format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

const JAVA13: &str = "tls-java-ssl13";

/// The summary lines of decrypted messages (those marked tls).
fn tls_lines(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.contains("] tls ")).collect()
}

#[test]
fn a_java_tls13_capture_decrypts_with_the_clients_or_the_brokers_key_log() {
    let pcap = sample(&format!("{JAVA13}.pcap"));
    let client = sample(&format!("{JAVA13}.keys"));
    let broker = sample(&format!("{JAVA13}.broker.keys"));
    let (code, out, err) = kdissect(&["-p", "9093", "--keylog", &client, &pcap]);
    assert_eq!(code, Some(0), "{out}{err}");
    let msgs = tls_lines(&out);
    // The client's log (samples/logs/tls-java-ssl13.log): admin, producer and consumer, seven
    // connections, 52 Kafka messages.
    assert_eq!(msgs.len(), 52, "{out}");
    assert_eq!(
        out.matches("TLS connection, TLS 1.3, TLS_AES_256_GCM_SHA384: decrypted")
            .count(),
        7,
        "{out}"
    );
    assert!(!out.contains("!!") && !out.contains("malformed"), "{out}");
    assert!(out.contains("tls Produce v13 Request corr=5 client_id=\"tls-producer\""));
    // The broker's key log holds the same secrets from the other end.
    let (code, same, err) = kdissect(&["-p", "9093", "--keylog", &broker, &pcap]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(same, out);
    // Both logs at once, and through SSLKEYLOGFILE.
    let (_, both, _) = kdissect(&[
        "-p", "9093", "--keylog", &broker, "--keylog", &client, &pcap,
    ]);
    assert_eq!(both, out);
    let env = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(["-p", "9093", "--keylog-env", &pcap])
        .env("SSLKEYLOGFILE", &client)
        .output()
        .expect("run");
    assert_eq!(String::from_utf8_lossy(&env.stdout), out);
}

#[test]
fn secrets_inside_a_pcapng_need_no_flag() {
    let (code, out, err) = kdissect(&["-p", "9093", &sample(&format!("{JAVA13}-dsb.pcapng"))]);
    assert_eq!(code, Some(0), "{err}");
    let (_, with_log, _) = kdissect(&[
        "-p",
        "9093",
        "--keylog",
        &sample(&format!("{JAVA13}.keys")),
        &sample(&format!("{JAVA13}.pcap")),
    ]);
    assert_eq!(tls_lines(&out).len(), 52, "{out}");
    assert_eq!(tls_lines(&out), tls_lines(&with_log));
}

#[test]
fn decrypted_messages_are_marked_in_json_and_spans_say_where_offsets_count() {
    let pcap = sample(&format!("{JAVA13}.pcap"));
    let keys = sample(&format!("{JAVA13}.keys"));
    let (_, out, _) = kdissect(&["-p", "9093", "--keylog", &keys, "--json", &pcap]);
    let msgs: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(msgs.len(), 52);
    assert!(msgs
        .iter()
        .all(|m| m["tls"] == true && m.get("spans_in").is_none()));
    let (_, spans, _) = kdissect(&[
        "-p",
        "9093",
        "--keylog",
        &keys,
        "--json",
        "--json-spans",
        "-c",
        "1",
        &pcap,
    ]);
    let m: serde_json::Value = serde_json::from_str(spans.lines().next().unwrap()).unwrap();
    assert_eq!(m["spans_in"], "decrypted TLS");
    // Offsets are in the decrypted frame: the header's api key right after the size prefix.
    assert_eq!(m["header"]["request_api_key"]["offset"], 4);
    // A plaintext capture has neither key.
    let (_, plain, _) = kdissect(&[
        "--json",
        "--json-spans",
        "-c",
        "1",
        &sample("ak44-sasl-plain.pcap"),
    ]);
    assert!(
        !plain.contains("\"tls\"") && !plain.contains("spans_in"),
        "{plain}"
    );
}

/// A key log with this capture's client randoms but other secrets: every record fails its
/// tag.
fn wrong_keys(dir: &std::path::Path) -> String {
    let text = std::fs::read_to_string(sample(&format!("{JAVA13}.keys"))).unwrap();
    let wrong: String = text
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            format!("{} {} {}\n", w[0], w[1], "5a".repeat(w[2].len() / 2))
        })
        .collect();
    let path = dir.join("wrong.keys");
    std::fs::write(&path, wrong).unwrap();
    path.to_string_lossy().into_owned()
}

fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("kdissect-tls-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn missing_or_wrong_keys_give_one_line_per_connection_and_nothing_malformed() {
    let pcap = sample(&format!("{JAVA13}.pcap"));
    let dir = scratch("wrong");
    // Keys of another capture (ak44-ssl's connections are not in this key log).
    let (code, out, err) = kdissect(&[
        "-p",
        "9093",
        "--keylog",
        &sample(&format!("{JAVA13}.keys")),
        SAMPLE,
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.lines().count(), 4, "{out}");
    assert_eq!(
        out.matches("no key log given holds the secrets").count(),
        4,
        "{out}"
    );
    let (code, out, err) = kdissect(&["-p", "9093", "--keylog", &wrong_keys(&dir), &pcap]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.lines().count(), 7, "{out}");
    assert_eq!(
        out.matches("do not authenticate its records (a key log of another run?)")
            .count(),
        7,
        "{out}"
    );
    assert!(
        !out.contains("!!") && !err.contains("malformed"),
        "{out}{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_cut_keeps_the_encrypted_packets_and_can_carry_its_secrets() {
    let pcap = sample(&format!("{JAVA13}.pcap"));
    let keys = sample(&format!("{JAVA13}.keys"));
    let dir = scratch("cut");
    let cut = dir.join("produce.pcapng");
    let cut_s = cut.to_string_lossy().into_owned();
    let (code, shown, err) = kdissect(&[
        "-p",
        "9093",
        "--keylog",
        &keys,
        "--api",
        "Produce",
        "-w",
        &cut_s,
        "--inject-secrets",
        &pcap,
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(tls_lines(&shown).len(), 4, "{shown}");
    // Read back with no key log: the secrets came with it. Frames and streams count in the
    // cut; topics are ids there (the Metadata that named them was not kept).
    let (code, back, err) = kdissect(&["-p", "9093", "--api", "Produce", &cut_s]);
    assert_eq!(code, Some(0), "{err}");
    let exchange = |out: &str| -> Vec<String> {
        tls_lines(out)
            .iter()
            .map(|l| {
                let m = l.split("] tls ").nth(1).unwrap_or_default();
                m.split(' ').take(4).collect::<Vec<_>>().join(" ")
            })
            .collect()
    };
    assert_eq!(exchange(&back), exchange(&shown));
    assert_eq!(exchange(&back)[0], "Produce v13 Request corr=5");
    // The packets written are the capture's own (encrypted): without secrets nothing decrypts.
    let plain_cut = dir.join("nosecrets.pcapng");
    let plain_s = plain_cut.to_string_lossy().into_owned();
    kdissect(&[
        "-p", "9093", "--keylog", &keys, "--api", "Produce", "-w", &plain_s, &pcap,
    ]);
    let (_, none, _) = kdissect(&["-p", "9093", &plain_s]);
    assert!(tls_lines(&none).is_empty(), "{none}");
    assert!(
        none.contains("cannot be decoded without the session keys"),
        "{none}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// Every TLS capture with a key log, and how it is decrypted: (capture, listener port, key log
/// beside it or "" for the pcapng that carries its secrets, Kafka PDUs tshark finds (the counts
/// of samples/README.md), partial frames kdissect shows besides).
///
/// The one partial frame: in `tls-confluent-broker-keys` the consumer closes its last
/// connection (stream 3, close_notify in frame 242, then FIN) while the broker is answering its
/// long-poll Fetch corr=11; the broker's record in frame 254 carries the first 73 of the
/// answer's 150 bytes and the client's RST (frame 255) ends the connection. kdissect shows
/// that answer marked partial; tshark keeps an incomplete PDU for reassembly and never shows it.
const TSHARK_COUNTS: &[(&str, &str, &str, usize, usize)] = &[
    ("tls-java-ssl13.pcap", "9093", "tls-java-ssl13.keys", 52, 0),
    (
        "tls-java-ssl13.pcap",
        "9093",
        "tls-java-ssl13.broker.keys",
        52,
        0,
    ),
    ("tls-java-ssl13-dsb.pcapng", "9093", "", 52, 0),
    ("tls-java-ssl12.pcap", "9093", "tls-java-ssl12.keys", 52, 0),
    (
        "tls-java-ssl12.pcap",
        "9093",
        "tls-java-ssl12.broker.keys",
        52,
        0,
    ),
    (
        "tls-java-ssl12.pcap",
        "9093",
        "tls-java-ssl12.client-random.keys",
        52,
        0,
    ),
    (
        "tls-java-sasl-ssl13.pcap",
        "9096",
        "tls-java-sasl-ssl13.keys",
        108,
        0,
    ),
    (
        "tls-java-sasl-ssl13.pcap",
        "9096",
        "tls-java-sasl-ssl13.broker.keys",
        108,
        0,
    ),
    (
        "tls-java-sasl-ssl12.pcap",
        "9096",
        "tls-java-sasl-ssl12.keys",
        94,
        0,
    ),
    (
        "tls-java-sasl-ssl12.pcap",
        "9096",
        "tls-java-sasl-ssl12.broker.keys",
        94,
        0,
    ),
    (
        "tls-java-sasl-ssl12.pcap",
        "9096",
        "tls-java-sasl-ssl12.client-random.keys",
        94,
        0,
    ),
    (
        "tls-java-chacha13.pcap",
        "9093",
        "tls-java-chacha13.keys",
        52,
        0,
    ),
    (
        "tls-java-chacha13.pcap",
        "9093",
        "tls-java-chacha13.broker.keys",
        52,
        0,
    ),
    (
        "tls-java-keyupdate.pcap",
        "9093",
        "tls-java-keyupdate.keys",
        52,
        0,
    ),
    (
        "tls-java-keyupdate.pcap",
        "9093",
        "tls-java-keyupdate.broker.keys",
        52,
        0,
    ),
    (
        "tls-franz-chacha13.pcap",
        "9097",
        "tls-franz-chacha13.keys",
        48,
        0,
    ),
    (
        "tls-franz-chacha12.pcap",
        "9097",
        "tls-franz-chacha12.keys",
        48,
        0,
    ),
    (
        "tls-franz-ecdsa12.pcap",
        "9098",
        "tls-franz-ecdsa12.keys",
        48,
        0,
    ),
    (
        "tls-franz-psk13.pcap",
        "9093",
        "tls-franz-psk13.keys",
        48,
        0,
    ),
    (
        "tls-franz-psk13.pcap",
        "9093",
        "tls-franz-psk13.broker.keys",
        48,
        0,
    ),
    (
        "tls-kafka-python-aes128-13.pcap",
        "9093",
        "tls-kafka-python-aes128-13.keys",
        46,
        0,
    ),
    (
        "tls-kafka-python-ecdsa-chacha12.pcap",
        "9098",
        "tls-kafka-python-ecdsa-chacha12.keys",
        46,
        0,
    ),
    (
        "tls-kafkajs-aes128-12.pcap",
        "9093",
        "tls-kafkajs-aes128-12.keys",
        32,
        0,
    ),
    (
        "tls-kafkajs-ecdsa-aes256-12.pcap",
        "9098",
        "tls-kafkajs-ecdsa-aes256-12.keys",
        32,
        0,
    ),
    (
        "tls-kafkajs-chacha13.pcap",
        "9093",
        "tls-kafkajs-chacha13.keys",
        32,
        0,
    ),
    ("tls-kcat-ssl13.pcap", "9093", "tls-kcat-ssl13.keys", 20, 0),
    (
        "tls-confluent-broker-keys.pcap",
        "9093",
        "tls-confluent-broker-keys.broker.keys",
        62,
        1,
    ),
    // TLS 1.2 CBC suites: HMAC-SHA256, HMAC-SHA1, HMAC-SHA384.
    ("tls-java-cbc12.pcap", "9093", "tls-java-cbc12.keys", 52, 0),
    (
        "tls-java-cbc12.pcap",
        "9093",
        "tls-java-cbc12.broker.keys",
        52,
        0,
    ),
    (
        "tls-java-cbc12.pcap",
        "9093",
        "tls-java-cbc12.client-random.keys",
        52,
        0,
    ),
    (
        "tls-franz-cbc12.pcap",
        "9093",
        "tls-franz-cbc12.keys",
        48,
        0,
    ),
    (
        "tls-kafka-python-cbc12.pcap",
        "9093",
        "tls-kafka-python-cbc12.keys",
        46,
        0,
    ),
];

#[test]
fn tshark_with_the_same_key_log_finds_as_many_kafka_messages() {
    let tshark = Command::new("tshark").arg("-v").output().is_ok();
    if !tshark {
        eprintln!("tshark not installed: only kdissect's side of the counts is checked");
    }
    for &(file, port, keys, count, partial) in TSHARK_COUNTS {
        let pcap = sample(file);
        let keys = (!keys.is_empty()).then(|| sample(keys));
        let mut args = vec!["-p", port];
        if let Some(k) = &keys {
            args.extend(["--keylog", k.as_str()]);
        }
        args.push(&pcap);
        let (code, out, err) = kdissect(&args);
        assert_eq!(code, Some(0), "{file}: {err}");
        let msgs = tls_lines(&out);
        let cut = msgs.iter().filter(|l| l.contains(" [partial: ")).count();
        assert_eq!(
            (msgs.len() - cut, cut),
            (count, partial),
            "{file} with {keys:?}: whole and partial messages"
        );
        if !tshark {
            continue;
        }
        let mut targs = vec![
            "-r".to_string(),
            pcap.clone(),
            // Port 48898 (a client port in tls-java-ssl13) is Beckhoff ADS to tshark, and
            // 44818 (one in tls-java-cbc12) EtherNet/IP.
            "--disable-protocol".into(),
            "ams".into(),
            "--disable-protocol".into(),
            "enip".into(),
        ];
        if let Some(k) = &keys {
            targs.extend(["-o".into(), format!("tls.keylog_file:{k}")]);
        }
        targs.extend(
            [
                "-d",
                &format!("tls.port=={port},kafka"),
                "-Y",
                "kafka",
                "-T",
                "fields",
                "-e",
                "kafka.correlation_id",
            ]
            .map(String::from),
        );
        let t = Command::new("tshark")
            .args(&targs)
            .output()
            .expect("tshark");
        // One correlation id per Kafka PDU; a packet with several lists them with commas.
        let theirs: usize = String::from_utf8_lossy(&t.stdout)
            .lines()
            .map(|l| l.split(',').filter(|x| !x.is_empty()).count())
            .sum();
        assert_eq!(theirs, count, "{file} with {keys:?}: tshark's count");
    }
}

// Field for field against the plaintext leg. Two runs of one program differ in values that
// the run itself picks; each is taken out or replaced by a placeholder, for these reasons
// (samples/README.md lists the same):
//
// - `correlation_id` (message and header): a Java client numbers requests across all of its
//   connections, and which connection is ready first (a TLS handshake takes longer) decides
//   the numbers. Messages are matched by client, API, version, direction and order instead.
// - `TopicId`: the broker draws a topic's id when the setup creates it, once per run.
// - Member ids (`MemberId`, `Leader`, and every string that contains one: the JoinGroup
//   `Reason` of the Java consumer, franz-go's OffsetCommit `CommittedMetadata`): drawn by the
//   broker for each run; replaced by `<member>`.
// - `SessionId`: the broker draws a fetch session's id.
// - `FinalizedFeaturesEpoch` (ApiVersions): the offset of the broker's metadata log, which
//   grows with what the uncaptured setup of each leg wrote.
// - `Port` equal to the leg's listener port (Metadata brokers, FindCoordinator): 9092 or 9094
//   in the plaintext legs, 9093, 9096, 9097 or 9098 in the TLS legs; replaced by `<listener>`.
// - SCRAM `nonce`, `salt`, `verifier` (SaslAuthenticate): the client and broker nonces are
//   random per login, the salt is drawn when the setup creates the SCRAM user, the server
//   signature follows from them (the client proof is masked already).
// - `Mechanisms` (SaslHandshake): the SASL_PLAINTEXT listener also enables OAUTHBEARER, the
//   SASL_SSL one does not (scripts/kafka-broker).
// - Order of partitions (arrays of objects with `Index`, `PartitionIndex` or `Partition`, and
//   `PartitionIndexes`): the broker and franz-go list partitions from hash maps whose order
//   follows the topic id; arrays are sorted by partition.
// - Record batches: how a client cuts records into batches is decided by its linger timer, so
//   each partition's batches are replaced by its records, each with its batch's producer id,
//   epoch, attributes and leader epoch, and its absolute sequence, offset (Fetch only: a
//   Produce request's offsets are batch-relative) and timestamp. The batch's length, CRC,
//   deltas and counts, and each record's `length` (it counts the deltas' varints), go.
// - Record timestamps of kcat: it stamps records with the wall clock when it sends them.
// No record value names its leg: every program writes the same keys and values in both legs.

/// The JSON messages of a run.
fn json_messages(args: &[&str]) -> Vec<serde_json::Value> {
    let mut a = vec!["--json"];
    a.extend_from_slice(args);
    let (_, out, _) = kdissect(&a);
    out.lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect()
}

type J = serde_json::Value;

/// (client, direction, API, version): the key messages of two runs are matched by, in order.
type Group = (String, String, String, u64);

struct Leg {
    /// The listener port, replaced in the bodies.
    port: u64,
    /// Member ids of the run, longest first.
    members: Vec<String>,
    /// Whether record timestamps are the client's wall clock (kcat).
    clock: bool,
}

fn collect_members(v: &J, out: &mut Vec<String>) {
    match v {
        J::Object(o) => {
            for (k, x) in o {
                if let (true, Some(s)) = (k == "MemberId" || k == "Leader", x.as_str()) {
                    if !s.is_empty() && !out.iter().any(|m| m == s) {
                        out.push(s.to_string());
                    }
                }
                collect_members(x, out);
            }
        }
        J::Array(a) => a.iter().for_each(|x| collect_members(x, out)),
        _ => {}
    }
}

/// A partition's record batches as its records, batch framing taken out.
fn flatten_batches(batches: &[J], api: &str, leg: &Leg) -> J {
    let mut out = Vec::new();
    for b in batches {
        let n = |k: &str| b[k].as_i64().unwrap_or(0);
        for r in b["Records"].as_array().into_iter().flatten() {
            let mut rec = r.as_object().cloned().unwrap_or_default();
            let delta = rec
                .remove("offsetDelta")
                .and_then(|d| d.as_i64())
                .unwrap_or(0);
            let tdelta = rec
                .remove("timestampDelta")
                .and_then(|d| d.as_i64())
                .unwrap_or(0);
            rec.remove("length");
            for k in ["producerId", "producerEpoch", "attributes", "magic"] {
                rec.insert(format!("batch_{k}"), b[k].clone());
            }
            rec.insert("leader_epoch".into(), b["partitionLeaderEpoch"].clone());
            if n("baseSequence") >= 0 {
                rec.insert("sequence".into(), (n("baseSequence") + delta).into());
            }
            if api != "Produce" {
                rec.insert("offset".into(), (n("baseOffset") + delta).into());
            }
            if !leg.clock {
                rec.insert("timestamp".into(), (n("baseTimestamp") + tdelta).into());
            }
            out.push(J::Object(rec));
        }
    }
    J::Array(out)
}

/// A message body (or header) with the values of the run taken out (see above).
fn normalize(v: &J, api: &str, leg: &Leg) -> J {
    const DROP: &[&str] = &[
        "TopicId",
        "SessionId",
        "FinalizedFeaturesEpoch",
        "nonce",
        "salt",
        "verifier",
        "Mechanisms",
        "correlation_id",
    ];
    match v {
        J::Object(o) => {
            let mut out = serde_json::Map::new();
            for (k, x) in o {
                if DROP.contains(&k.as_str()) {
                    continue;
                }
                let is_batches = k == "Records"
                    && x.as_array()
                        .and_then(|a| a.first())
                        .is_some_and(|b| b.get("baseOffset").is_some());
                let y = if k == "Port" && x.as_u64() == Some(leg.port) {
                    J::from("<listener>")
                } else if is_batches {
                    flatten_batches(x.as_array().unwrap(), api, leg)
                } else {
                    normalize(x, api, leg)
                };
                if k == "PartitionIndexes" {
                    let mut a = y.as_array().cloned().unwrap_or_default();
                    a.sort_by_key(|p| p.as_i64());
                    out.insert(k.clone(), J::Array(a));
                } else {
                    out.insert(k.clone(), y);
                }
            }
            J::Object(out)
        }
        J::Array(a) => {
            let mut items: Vec<J> = a.iter().map(|x| normalize(x, api, leg)).collect();
            if let Some(key) = ["Index", "PartitionIndex", "Partition"]
                .into_iter()
                .find(|k| !items.is_empty() && items.iter().all(|x| x.get(*k).is_some()))
            {
                items.sort_by_key(|x| x[key].as_i64());
            }
            J::Array(items)
        }
        J::String(s) => {
            let mut s = s.clone();
            for m in &leg.members {
                s = s.replace(m.as_str(), "<member>");
            }
            J::String(s)
        }
        _ => v.clone(),
    }
}

/// A run's messages, normalized, by group in frame order: (frame, {header, body}).
fn by_group(msgs: &[J], port: u64, clock: bool) -> BTreeMap<Group, Vec<(u64, J)>> {
    let mut members = Vec::new();
    msgs.iter()
        .for_each(|m| collect_members(&m["body"], &mut members));
    members.sort_by_key(|m| std::cmp::Reverse(m.len()));
    let leg = Leg {
        port,
        members,
        clock,
    };
    // Responses carry no client id: their request's, by stream and correlation id.
    let client: HashMap<(u64, i64), String> = msgs
        .iter()
        .filter(|m| m["direction"] == "request")
        .map(|m| {
            let k = (
                m["stream"].as_u64().unwrap(),
                m["correlation_id"].as_i64().unwrap(),
            );
            (k, m["client_id"].as_str().unwrap_or_default().to_string())
        })
        .collect();
    let mut out: BTreeMap<Group, Vec<(u64, J)>> = BTreeMap::new();
    for m in msgs {
        let api = m["api_name"].as_str().unwrap_or_default();
        let key = (
            m["stream"].as_u64().unwrap(),
            m["correlation_id"].as_i64().unwrap(),
        );
        let group = (
            client.get(&key).cloned().unwrap_or_default(),
            m["direction"].as_str().unwrap_or_default().to_string(),
            api.to_string(),
            m["api_version"].as_u64().unwrap(),
        );
        let norm = serde_json::json!({
            "header": normalize(&m["header"], api, &leg),
            "body": normalize(&m["body"], api, &leg),
        });
        out.entry(group)
            .or_default()
            .push((m["frame"].as_u64().unwrap(), norm));
    }
    out
}

/// A difference between a TLS leg and its plaintext leg that a run's timing decides, stated
/// exactly: (TLS capture, client, direction, API, version, index in the group of the TLS leg,
/// what it is).
enum Known {
    /// The TLS leg has this message and the plaintext leg has not.
    Extra,
    /// The Java consumer's second long-poll Fetch answer (corr=12, in its incremental fetch
    /// session): the three partitions with no records in the plaintext leg (and in
    /// tls-java-ssl13), no partition at all here. An incremental answer names only partitions
    /// whose offsets changed, and whether the log start offset the broker reports had moved
    /// up to the high watermark by then differs from run to run.
    EmptyIncrementalFetch,
    /// Cut by the client's RST (tls-confluent-broker-keys stream 3: 73 of its 150 bytes).
    Partial,
}

const KNOWN: &[(&str, &str, &str, &str, u64, usize, Known)] = &[
    // The producer's second connection asks for all topics' metadata (corr=2, topics=[])
    // before its InitProducerId in the TLS legs: the client's metadata refresh loop, started
    // after bootstrap (samples/logs/tls-kafka-python-*.log), sends it on the new connection;
    // in the plaintext leg that connection sends InitProducerId first and no such request.
    (
        "tls-kafka-python-aes128-13",
        "kp-tls-producer",
        "request",
        "Metadata",
        13,
        1,
        Known::Extra,
    ),
    (
        "tls-kafka-python-aes128-13",
        "kp-tls-producer",
        "response",
        "Metadata",
        13,
        1,
        Known::Extra,
    ),
    (
        "tls-kafka-python-ecdsa-chacha12",
        "kp-tls-producer",
        "request",
        "Metadata",
        13,
        1,
        Known::Extra,
    ),
    (
        "tls-kafka-python-ecdsa-chacha12",
        "kp-tls-producer",
        "response",
        "Metadata",
        13,
        1,
        Known::Extra,
    ),
    (
        "tls-kafka-python-cbc12",
        "kp-tls-producer",
        "request",
        "Metadata",
        13,
        1,
        Known::Extra,
    ),
    (
        "tls-kafka-python-cbc12",
        "kp-tls-producer",
        "response",
        "Metadata",
        13,
        1,
        Known::Extra,
    ),
    // The consumer's last request, a Metadata refresh (corr=12) sent as it closes, unanswered.
    (
        "tls-confluent-broker-keys",
        "rd-tls-consumer",
        "request",
        "Metadata",
        13,
        5,
        Known::Extra,
    ),
    (
        "tls-confluent-broker-keys",
        "rd-tls-consumer",
        "response",
        "Fetch",
        16,
        2,
        Known::Partial,
    ),
    (
        "tls-java-ssl12",
        "tls-consumer",
        "response",
        "Fetch",
        18,
        1,
        Known::EmptyIncrementalFetch,
    ),
    (
        "tls-java-chacha13",
        "tls-consumer",
        "response",
        "Fetch",
        18,
        1,
        Known::EmptyIncrementalFetch,
    ),
    (
        "tls-java-keyupdate",
        "tls-consumer",
        "response",
        "Fetch",
        18,
        1,
        Known::EmptyIncrementalFetch,
    ),
    (
        "tls-java-cbc12",
        "tls-consumer",
        "response",
        "Fetch",
        18,
        1,
        Known::EmptyIncrementalFetch,
    ),
];

/// Whether a Fetch answer carries no record.
fn no_records(body: &J) -> bool {
    body["Responses"].as_array().into_iter().flatten().all(|t| {
        t["Partitions"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|p| p["Records"].as_array().is_none_or(|r| r.is_empty()))
    })
}

// A long test: one table of pairs, and each group of messages matched with its known
// differences in one loop, so that a failure names the pair, the group and the frame.
#[test]
fn every_tls_sample_decodes_as_its_plaintext_leg() {
    // (TLS capture, its port, its key log, plaintext leg, its port). kcat's record
    // timestamps are its clock (see above). librdkafka sends one Produce per partition, in the order its partitions' linger timers
    // run out, so confluent's Produce requests and answers are matched by content.
    let pairs = [
        (
            "tls-java-ssl13",
            "9093",
            ".keys",
            "tls-java-plaintext",
            "9092",
        ),
        (
            "tls-java-ssl13",
            "9093",
            ".broker.keys",
            "tls-java-plaintext",
            "9092",
        ),
        (
            "tls-java-ssl12",
            "9093",
            ".keys",
            "tls-java-plaintext",
            "9092",
        ),
        (
            "tls-java-chacha13",
            "9093",
            ".keys",
            "tls-java-plaintext",
            "9092",
        ),
        (
            "tls-java-keyupdate",
            "9093",
            ".keys",
            "tls-java-plaintext",
            "9092",
        ),
        (
            "tls-java-sasl-ssl13",
            "9096",
            ".keys",
            "tls-java-sasl-scram-sha-256-plaintext",
            "9094",
        ),
        (
            "tls-java-sasl-ssl12",
            "9096",
            ".keys",
            "tls-java-sasl-plain-plaintext",
            "9094",
        ),
        (
            "tls-franz-chacha13",
            "9097",
            ".keys",
            "tls-franz-plaintext",
            "9092",
        ),
        (
            "tls-franz-chacha12",
            "9097",
            ".keys",
            "tls-franz-plaintext",
            "9092",
        ),
        (
            "tls-franz-ecdsa12",
            "9098",
            ".keys",
            "tls-franz-plaintext",
            "9092",
        ),
        (
            "tls-franz-psk13",
            "9093",
            ".keys",
            "tls-franz-plaintext",
            "9092",
        ),
        (
            "tls-kafka-python-aes128-13",
            "9093",
            ".keys",
            "tls-kafka-python-plaintext",
            "9092",
        ),
        (
            "tls-kafka-python-ecdsa-chacha12",
            "9098",
            ".keys",
            "tls-kafka-python-plaintext",
            "9092",
        ),
        (
            "tls-kafkajs-aes128-12",
            "9093",
            ".keys",
            "tls-kafkajs-plaintext",
            "9092",
        ),
        (
            "tls-kafkajs-ecdsa-aes256-12",
            "9098",
            ".keys",
            "tls-kafkajs-plaintext",
            "9092",
        ),
        (
            "tls-kafkajs-chacha13",
            "9093",
            ".keys",
            "tls-kafkajs-plaintext",
            "9092",
        ),
        (
            "tls-kcat-ssl13",
            "9093",
            ".keys",
            "tls-kcat-plaintext",
            "9092",
        ),
        (
            "tls-confluent-broker-keys",
            "9093",
            ".broker.keys",
            "tls-confluent-plaintext",
            "9092",
        ),
        (
            "tls-java-cbc12",
            "9093",
            ".keys",
            "tls-java-plaintext",
            "9092",
        ),
        (
            "tls-franz-cbc12",
            "9093",
            ".keys",
            "tls-franz-plaintext",
            "9092",
        ),
        (
            "tls-kafka-python-cbc12",
            "9093",
            ".keys",
            "tls-kafka-python-plaintext",
            "9092",
        ),
    ];
    for (tls, port, keys, plain, plain_port) in pairs {
        let clock = tls.starts_with("tls-kcat");
        let produce_as_set = tls.starts_with("tls-confluent");
        let enc = json_messages(&[
            "-p",
            port,
            "--keylog",
            &sample(&format!("{tls}{keys}")),
            &sample(&format!("{tls}.pcap")),
        ]);
        let clear = json_messages(&["-p", plain_port, &sample(&format!("{plain}.pcap"))]);
        assert!(enc.len() >= 20, "{tls}: {} messages", enc.len());
        assert!(enc.iter().all(|m| m["tls"] == true), "{tls}");
        // Nothing malformed, but in the answer the connection's end cut (Known::Partial).
        assert!(
            enc.iter()
                .all(|m| m["malformed"] == serde_json::json!([]) || m["partial"] == true),
            "{tls}"
        );
        let a = by_group(&enc, port.parse().unwrap(), clock);
        let b = by_group(&clear, plain_port.parse().unwrap(), clock);
        let groups: Vec<&Group> = a
            .keys()
            .chain(b.keys())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut compared = 0;
        let mut set_aside = 0;
        for g in groups {
            let empty = Vec::new();
            let mut x = a.get(g).unwrap_or(&empty).clone();
            let y = b.get(g).unwrap_or(&empty);
            let known: Vec<(usize, &Known)> = KNOWN
                .iter()
                .filter(|k| (k.0, k.1, k.2, k.3, k.4) == (tls, &g.0[..], &g.1[..], &g.2[..], g.3))
                .map(|k| (k.5, &k.6))
                .collect();
            let mut y = y.clone();
            for &(i, what) in known.iter().rev() {
                let (frame, m) = x
                    .get(i)
                    .cloned()
                    .unwrap_or_else(|| panic!("{tls} {g:?} #{i}"));
                match what {
                    Known::Extra => {
                        set_aside += 1;
                        x.remove(i);
                    }
                    Known::EmptyIncrementalFetch => {
                        assert_eq!(
                            m["body"]["Responses"],
                            serde_json::json!([]),
                            "{tls} {frame}"
                        );
                        let other = &y[i].1;
                        assert_ne!(other["body"]["Responses"], serde_json::json!([]));
                        assert!(no_records(&other["body"]), "{plain} {}", y[i].0);
                        set_aside += 1;
                        x.remove(i);
                        y.remove(i);
                    }
                    Known::Partial => {
                        let cut = enc.iter().any(|e| {
                            e["frame"] == frame && e["api_name"] == g.2 && e["partial"] == true
                        });
                        assert!(cut, "{tls}: frame {frame} is not a partial {}", g.2);
                        set_aside += 1;
                        x.remove(i);
                        y.remove(i);
                    }
                }
            }
            let mut xs: Vec<&J> = x.iter().map(|(_, m)| m).collect();
            let mut ys: Vec<&J> = y.iter().map(|(_, m)| m).collect();
            if produce_as_set && g.2 == "Produce" {
                xs.sort_by_key(|m| m.to_string());
                ys.sort_by_key(|m| m.to_string());
            }
            assert_eq!(xs.len(), ys.len(), "{tls} against {plain}: {g:?}");
            for (i, (p, q)) in xs.iter().zip(&ys).enumerate() {
                assert_eq!(p, q, "{tls} against {plain}: {g:?} #{i} (frame {})", x[i].0);
            }
            compared += xs.len();
        }
        // Every message of the TLS leg was compared or is one of KNOWN.
        assert_eq!(compared + set_aside, enc.len(), "{tls}");
        let known = KNOWN.iter().filter(|k| k.0 == tls).count();
        assert_eq!(set_aside, known, "{tls}: every known difference was met");
    }
}
