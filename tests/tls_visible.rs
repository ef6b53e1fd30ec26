//! Issue 35, item 8: TLS that cannot be decrypted is never silent. Real captures of three
//! clients (Java kafka-clients, franz-go, librdkafka through confluent-kafka; samples/README.md)
//! read without their key logs are counted in every view: the `--stats` health, Kafka APIs and
//! Connections tables, `--stats --json`, and a closing line on stderr (also under `-q`); a key
//! log that is not one, or that decrypts nothing, is said. And a TLS capture picked up
//! mid-stream is one line per connection, not Kafka frames made of ciphertext (item 20).

use std::process::Command;

fn kdissect(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .env("COLUMNS", "200")
        .output()
        .expect("run kdissect");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn sample(name: &str) -> String {
    format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// (capture, listener port, its key log, TLS connections the client's log made: the counts
/// of samples/README.md).
const NO_KEYS: [(&str, &str, &str, u64); 3] = [
    ("tls-java-nokeys", "9093", "", 7),
    ("tls-franz-chacha13", "9097", "tls-franz-chacha13.keys", 8),
    (
        "tls-confluent-broker-keys",
        "9093",
        "tls-confluent-broker-keys.broker.keys",
        5,
    ),
];

/// The bytes of Kafka traffic a TLS connection line says were encrypted, summed.
fn encrypted_in_lines(out: &str) -> u64 {
    out.lines()
        .filter(|l| l.contains("TLS connection"))
        .filter_map(|l| l.split("): ").nth(1).or_else(|| l.split(": ").nth(1)))
        .filter_map(|t| t.split(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// tshark's sum of application-data record lengths, where tshark is installed: the records
/// of its JSON view, TLS 1.2's by content type, TLS 1.3's by their outer ("opaque") type.
fn tshark_app_bytes(pcap: &str, port: &str) -> Option<u64> {
    let out = Command::new("tshark")
        .args([
            "-r",
            pcap,
            "--disable-protocol",
            "ams",
            "--disable-protocol",
            "enip",
            "-d",
            &format!("tcp.port=={port},tls"),
            "-Y",
            "tls",
            "-T",
            "json",
            "-J",
            "tls",
        ])
        .output()
        .ok()?;
    let packets: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    let list = |v: &serde_json::Value| -> Vec<serde_json::Value> {
        match v {
            serde_json::Value::Array(a) => a.clone(),
            serde_json::Value::Null => Vec::new(),
            other => vec![other.clone()],
        }
    };
    let mut sum = 0;
    for p in packets.as_array()? {
        for tls in list(&p["_source"]["layers"]["tls"]) {
            for r in list(&tls["tls.record"]) {
                let ty = r["tls.record.content_type"]
                    .as_str()
                    .or(r["tls.record.opaque_type"].as_str());
                if ty == Some("23") {
                    sum += r["tls.record.length"].as_str()?.parse::<u64>().ok()?;
                }
            }
        }
    }
    Some(sum)
}

#[test]
fn without_keys_tls_connections_are_in_every_stats_view_and_on_stderr() {
    for (name, port, _, conns) in NO_KEYS {
        let pcap = sample(&format!("{name}.pcap"));
        // The per-connection lines, as before.
        let (code, lines, _) = kdissect(&["-p", port, &pcap]);
        assert_eq!(code, Some(0), "{name}");
        assert_eq!(
            lines.matches("TLS connection").count() as u64,
            conns,
            "{name}: {lines}"
        );
        let bytes = encrypted_in_lines(&lines);
        if let Some(t) = tshark_app_bytes(&pcap, port) {
            assert_eq!(bytes, t, "{name}: encrypted bytes against tshark's records");
        }
        // --stats -q: health, Kafka APIs and Connections tables.
        let (code, out, err) = kdissect(&["-p", port, "--stats", "-q", &pcap]);
        assert_eq!(code, Some(0), "{name}: {err}");
        let row = |label: &str| -> u64 {
            out.lines()
                .find(|l| l.contains(label))
                .and_then(|l| l.split('┆').nth(1))
                .and_then(|c| c.trim().trim_end_matches('│').trim().parse().ok())
                .unwrap_or_else(|| panic!("{name}: no row {label}: {out}"))
        };
        assert_eq!(row("TLS connections not decrypted"), conns, "{name}");
        assert_eq!(row("TLS connections decrypted"), 0, "{name}");
        assert_eq!(
            row("bytes encrypted in TLS connections not decrypted"),
            bytes,
            "{name}"
        );
        assert!(
            out.contains(&format!(
                "(TLS not decrypted: {conns} connections, {bytes} bytes)"
            )),
            "{name}: {out}"
        );
        assert_eq!(
            out.matches("(TLS, not decrypted)").count() as u64,
            conns,
            "{name}: {out}"
        );
        let closing = format!(
            "kdissect: {conns} TLS connections ({bytes} bytes) were encrypted and could not be decoded: no key log was given: give --keylog FILE"
        );
        assert!(err.contains(&closing), "{name}: {err}");
        // -q alone: nothing on stdout, the closing line on stderr.
        let (code, out, err) = kdissect(&["-p", port, "-q", &pcap]);
        assert_eq!((code, out.as_str()), (Some(0), ""), "{name}");
        assert!(err.contains(&closing), "{name}: {err}");
        // --stats --json: the same counts, and a row per connection.
        let (_, out, _) = kdissect(&["-p", port, "--stats", "--json", "-q", &pcap]);
        let j: serde_json::Value = serde_json::from_str(out.trim()).expect("json");
        let tls = &j["stats"]["tls"];
        assert_eq!(tls["not_decrypted"], conns, "{name}: {tls}");
        assert_eq!(tls["decrypted"], 0, "{name}");
        assert_eq!(tls["not_decrypted_bytes"], bytes, "{name}");
        let rows = j["stats"]["connections"].as_array().expect("rows");
        assert_eq!(
            rows.iter().filter(|r| r["tls"] == "not decrypted").count() as u64,
            conns,
            "{name}"
        );
    }
}

#[test]
fn with_keys_the_same_connections_decrypt_and_nothing_is_called_encrypted() {
    for (name, port, keys, conns) in NO_KEYS {
        if keys.is_empty() {
            continue;
        }
        let pcap = sample(&format!("{name}.pcap"));
        let keys = sample(keys);
        let (code, out, err) = kdissect(&["-p", port, "--keylog", &keys, "--stats", "-q", &pcap]);
        assert_eq!(code, Some(0), "{name}: {err}");
        assert!(out.contains("TLS connections decrypted"), "{out}");
        assert!(!out.contains("(TLS, not decrypted)"), "{out}");
        assert!(!err.contains("encrypted"), "{name}: {err}");
        let (_, out, _) = kdissect(&[
            "-p", port, "--keylog", &keys, "--stats", "--json", "-q", &pcap,
        ]);
        let j: serde_json::Value = serde_json::from_str(out.trim()).expect("json");
        assert_eq!(j["stats"]["tls"]["decrypted"], conns, "{name}");
        assert_eq!(j["stats"]["tls"]["not_decrypted"], 0, "{name}");
        // Without -p: every message is decrypted and printed (detection), and stderr does not
        // call the connections encrypted.
        let (code, out, err) = kdissect(&["--keylog", &keys, &pcap]);
        assert_eq!(code, Some(0), "{name}: {err}");
        assert!(out.contains("] tls "), "{name}");
        assert!(!err.contains("encrypted"), "{name}: {err}");
    }
}

#[test]
fn a_file_that_is_not_a_key_log_is_refused_naming_it_and_the_line() {
    let pcap = sample("tls-java-ssl13.pcap");
    let (code, out, err) = kdissect(&["-p", "9093", "--keylog", &pcap, &pcap]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(
        err.contains(&format!("--keylog {pcap}: not a TLS key log"))
            && err.contains("line 1 is not `LABEL"),
        "{err}"
    );
    assert!(out.is_empty());
    // An empty one is a warning; the run goes on and says nothing was decrypted.
    let dir = std::env::temp_dir().join(format!("kdissect-tlsv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let empty = dir.join("empty.keys");
    std::fs::write(&empty, "").unwrap();
    let empty_s = empty.to_string_lossy().into_owned();
    let (code, _, err) = kdissect(&["-p", "9093", "-q", "--keylog", &empty_s, &pcap]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains(&format!(
            "--keylog {empty_s}: holds no TLS secret kdissect reads (it is empty)"
        )),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_key_log_that_decrypts_nothing_says_so() {
    // tls-java-ssl13's secrets for tls-java-nokeys' connections: none of its randoms.
    let (code, _, err) = kdissect(&[
        "-p",
        "9093",
        "-q",
        "--keylog",
        &sample("tls-java-ssl13.keys"),
        &sample("tls-java-nokeys.pcap"),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("7 TLS connections (89226 bytes) were encrypted and could not be decoded: their ClientHello randoms are in none of the key logs given"),
        "{err}"
    );
    // And a key log given to a capture without TLS.
    let (code, _, err) = kdissect(&[
        "-q",
        "--keylog",
        &sample("tls-java-ssl13.keys"),
        &sample("ak44-admin.pcap"),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("the key logs given were not used: the capture has no TLS connection"),
        "{err}"
    );
}

/// A classic pcap without its first `skip` packets: a capture started later.
fn cut_pcap(src: &str, skip: usize, dst: &std::path::Path) {
    let b = std::fs::read(src).unwrap();
    let mut out = b[..24].to_vec();
    let mut p = 24;
    let mut i = 0;
    while p + 16 <= b.len() {
        let len = u32::from_le_bytes(b[p + 8..p + 12].try_into().unwrap()) as usize;
        if i >= skip {
            out.extend_from_slice(&b[p..p + 16 + len]);
        }
        p += 16 + len;
        i += 1;
    }
    std::fs::write(dst, out).unwrap();
}

#[test]
fn tls_picked_up_mid_stream_is_counted_not_decoded_as_kafka() {
    let dir = std::env::temp_dir().join(format!("kdissect-tlsmid-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Cut points inside the handshakes, inside a 20 000-byte Produce and a long-poll Fetch.
    for skip in [20, 60, 100, 130, 150, 200, 250, 280] {
        let cut = dir.join(format!("mid{skip}.pcap"));
        cut_pcap(&sample("tls-java-nokeys.pcap"), skip, &cut);
        let cut = cut.to_string_lossy().into_owned();
        let (code, out, err) = kdissect(&["-p", "9093", &cut]);
        assert_eq!(code, Some(0), "cut at {skip}: {out}{err}");
        assert!(
            !out.contains("!!") && !out.contains("Unknown") && !out.contains("Response"),
            "cut at {skip}: ciphertext read as Kafka: {out}"
        );
        assert!(!err.contains("skipped"), "cut at {skip}: {err}");
        let mid = out.matches("picked up mid-stream").count();
        let whole = out.matches("TLS connection, TLS 1.3").count();
        // Each connection once: those whose handshake is in the cut as before, the others
        // picked up mid-stream.
        assert_eq!(
            out.lines().count(),
            mid + whole,
            "cut at {skip}: one line a connection: {out}"
        );
        if mid > 0 {
            assert!(
                err.contains("picked up after their handshake")
                    || err.contains("the capture started after their ClientHello"),
                "cut at {skip}: {err}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}
