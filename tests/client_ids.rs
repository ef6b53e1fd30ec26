//! A client_id may be any UTF-8, as Kafka reads it (`café`, `クライアント`): such a client's
//! requests are found where a capture starts inside its connections and where a `-w` cut is
//! read back, as an ASCII one's are, and its answers are paired with them rather than read
//! with an assumed API (issue 35, "a client can hide").
//!
//! The captures are a real sample's, with the client_id of every request header rewritten in
//! place (same length, so nothing else moves), cut as a capture started late would be.

use std::path::PathBuf;
use std::process::Command;

const SAMPLE: &str = "ak44-consumer-classic.pcap";
const ASCII_ID: &str = "ak44-consumer-classic";

fn sample() -> Vec<u8> {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "samples", SAMPLE]
        .iter()
        .collect();
    std::fs::read(p).expect("sample")
}

/// The sample with every request header's client_id (int16 length, then the id) replaced
/// by `id`, padded with `-` to the same length.
fn with_client_id(id: &str) -> (Vec<u8>, String) {
    let mut new = id.to_string();
    while new.len() < ASCII_ID.len() {
        new.push('-');
    }
    assert_eq!(new.len(), ASCII_ID.len(), "{id}");
    let prefix = (ASCII_ID.len() as i16).to_be_bytes();
    let old: Vec<u8> = [&prefix[..], ASCII_ID.as_bytes()].concat();
    let mut data = sample();
    let mut n = 0;
    let mut i = 0;
    while let Some(at) = data[i..].windows(old.len()).position(|w| w == old) {
        let start = i + at + 2;
        data[start..start + new.len()].copy_from_slice(new.as_bytes());
        i = start + new.len();
        n += 1;
    }
    assert!(n >= 10, "{n} client_ids replaced");
    (data, new)
}

/// A classic pcap without its first `skip` packets: a capture started late.
fn started_late(pcap: &[u8], skip: usize) -> Vec<u8> {
    let mut out = pcap[..24].to_vec();
    let (mut i, mut n) = (24, 0);
    while i + 16 <= pcap.len() {
        let incl = u32::from_le_bytes(pcap[i + 8..i + 12].try_into().expect("4 bytes")) as usize;
        if n >= skip {
            out.extend_from_slice(&pcap[i..i + 16 + incl]);
        }
        i += 16 + incl;
        n += 1;
    }
    out
}

fn temp(tag: &str, ext: &str) -> PathBuf {
    std::env::temp_dir().join(format!("kdissect-ids-{tag}-{}.{ext}", std::process::id()))
}

/// kdissect's standard output and standard error, for a capture given as bytes.
fn kdissect(cap: &[u8], tag: &str, args: &[&str]) -> String {
    let path = temp(tag, "pcap");
    std::fs::write(&path, cap).expect("write");
    let out = run(&path, args);
    let _ = std::fs::remove_file(&path);
    out
}

fn run(path: &std::path::Path, args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .arg("--no-progress")
        .args(args)
        .arg(path)
        .env("NO_COLOR", "1")
        .output()
        .expect("run kdissect");
    let mut s = String::from_utf8(o.stdout).expect("utf8");
    s.push_str(&String::from_utf8_lossy(&o.stderr));
    s
}

#[test]
fn a_capture_started_late_finds_the_requests_of_any_text_client_id() {
    // Packet 34 on: both of the consumer's connections are picked up inside their streams.
    let ascii = kdissect(&started_late(&sample(), 33), "ascii", &[]);
    let requests = ascii
        .lines()
        .filter(|l| l.contains(" Request corr="))
        .count();
    assert!(requests >= 6, "{ascii}");
    // Mid-stream indeed: an answer whose request came before the capture.
    assert!(
        ascii.contains("[API assumed: request not captured]"),
        "{ascii}"
    );
    // Any text, and even control characters (shown escaped): the requests' frames decode, and
    // that verifies them.
    for id in ["クライアント", "café", "ünï-コンシ", "\u{1b}[31m"] {
        let (data, new) = with_client_id(id);
        let utf8 = kdissect(&started_late(&data, 33), "utf8", &[]);
        let shown = new.replace('\u{1b}', "\\u{1b}");
        // Everything as with the ASCII client_id, the client_id aside.
        let same = utf8.replace(&format!("\"{shown}\""), &format!("\"{ASCII_ID}\""));
        assert_eq!(same, ascii, "{id:?}");
        let theirs = utf8
            .lines()
            .filter(|l| l.contains(&format!("client_id=\"{shown}\"")))
            .count();
        assert_eq!(theirs, requests, "{utf8}");
    }
}

#[test]
fn a_cut_read_back_keeps_the_requests_of_any_text_client_id() {
    let (data, new) = with_client_id("クライアント");
    let full = temp("full", "pcap");
    let cut = temp("cut", "pcapng");
    std::fs::write(&full, &data).expect("write");
    let filter = ["-Y", "api == Fetch || api == OffsetCommit"];
    let shown = run(&full, &filter);
    let written = run(
        &full,
        &[&filter[..], &["-q", "-w", cut.to_str().expect("path")]].concat(),
    );
    assert!(written.contains("written to"), "{written}");
    let back = run(&cut, &[]);
    let _ = std::fs::remove_file(&full);
    let _ = std::fs::remove_file(&cut);
    let requests = |s: &str| {
        s.lines()
            .filter(|l| l.contains("Request corr=") && l.contains(&format!("\"{new}\"")))
            .count()
    };
    assert!(requests(&shown) >= 4, "{shown}");
    assert_eq!(requests(&back), requests(&shown), "{back}");
    assert!(!back.contains("API assumed"), "{back}");
}
