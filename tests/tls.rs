//! TLS on a Kafka port: reported once per connection (version, SNI, bytes encrypted), never as
//! a stream of resync or malformed notices.

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
        err.contains("4 TLS connections on ports not given with -p (server port 9093)"),
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
            // Port 48898 (a client port in tls-java-ssl13) is Beckhoff ADS to tshark.
            "--disable-protocol".into(),
            "ams".into(),
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

/// The JSON messages of a run.
fn json_messages(args: &[&str]) -> Vec<serde_json::Value> {
    let mut a = vec!["--json"];
    a.extend_from_slice(args);
    let (_, out, _) = kdissect(&a);
    out.lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect()
}

/// What two runs of one program share: each message's client, direction, API and version
/// (correlation ids and topic ids are the run's own), and the Produce bodies field for field,
/// records included, with topic ids left out.
fn run_shape(msgs: &[serde_json::Value]) -> (Vec<String>, Vec<serde_json::Value>) {
    let mut sig: Vec<String> = msgs
        .iter()
        .map(|m| {
            format!(
                "{} {} {} v{}",
                m["client_id"], m["direction"], m["api_name"], m["api_version"]
            )
        })
        .collect();
    sig.sort();
    let produce = msgs
        .iter()
        .filter(|m| m["api_name"] == "Produce" && m["direction"] == "request")
        .map(|m| {
            let mut body = m["body"].clone();
            strip_topic_ids(&mut body);
            body
        })
        .collect();
    (sig, produce)
}

fn strip_topic_ids(v: &mut serde_json::Value) {
    strip(v, &["TopicId"]);
}

fn strip(v: &mut serde_json::Value, keys: &[&str]) {
    match v {
        serde_json::Value::Object(o) => {
            for k in keys {
                o.remove(*k);
            }
            o.values_mut().for_each(|x| strip(x, keys));
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| strip(x, keys)),
        _ => {}
    }
}

#[test]
fn every_tls_sample_decodes_as_its_plaintext_leg() {
    // (TLS capture, its port, plaintext leg, its port, whether the message lists agree: the
    // kafka-python legs differ by a Metadata refresh that timing decides).
    let pairs = [
        ("tls-java-ssl13", "9093", "tls-java-plaintext", "9092", true),
        ("tls-java-ssl12", "9093", "tls-java-plaintext", "9092", true),
        (
            "tls-java-chacha13",
            "9093",
            "tls-java-plaintext",
            "9092",
            true,
        ),
        (
            "tls-java-keyupdate",
            "9093",
            "tls-java-plaintext",
            "9092",
            true,
        ),
        (
            "tls-java-sasl-ssl13",
            "9096",
            "tls-java-sasl-scram-sha-256-plaintext",
            "9094",
            true,
        ),
        (
            "tls-java-sasl-ssl12",
            "9096",
            "tls-java-sasl-plain-plaintext",
            "9094",
            true,
        ),
        (
            "tls-franz-chacha13",
            "9097",
            "tls-franz-plaintext",
            "9092",
            true,
        ),
        (
            "tls-franz-chacha12",
            "9097",
            "tls-franz-plaintext",
            "9092",
            true,
        ),
        (
            "tls-franz-ecdsa12",
            "9098",
            "tls-franz-plaintext",
            "9092",
            true,
        ),
        (
            "tls-kafka-python-aes128-13",
            "9093",
            "tls-kafka-python-plaintext",
            "9092",
            false,
        ),
        (
            "tls-kafka-python-ecdsa-chacha12",
            "9098",
            "tls-kafka-python-plaintext",
            "9092",
            false,
        ),
    ];
    for (tls, port, plain, plain_port, same_list) in pairs {
        let keys = sample(&format!("{tls}.keys"));
        let enc = json_messages(&[
            "-p",
            port,
            "--keylog",
            &keys,
            &sample(&format!("{tls}.pcap")),
        ]);
        let clear = json_messages(&["-p", plain_port, &sample(&format!("{plain}.pcap"))]);
        assert!(enc.len() > 40, "{tls}: {} messages", enc.len());
        assert!(enc.iter().all(|m| m["tls"] == true), "{tls}");
        assert!(
            enc.iter().all(|m| m["malformed"] == serde_json::json!([])),
            "{tls}"
        );
        let (sig_e, produce_e) = run_shape(&enc);
        let (sig_c, produce_c) = run_shape(&clear);
        if same_list {
            assert_eq!(sig_e, sig_c, "{tls} against {plain}");
        }
        assert!(!produce_e.is_empty(), "{tls}");
        // The Java legs write the same records; the franz-go and kafka-python programs put
        // the leg's name in their values, so only their message lists are compared.
        if tls.starts_with("tls-java") {
            assert_eq!(
                produce_e, produce_c,
                "{tls}: Produce bodies against {plain}"
            );
        }
    }
}
