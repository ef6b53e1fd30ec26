//! Output in frame order, as tshark prints it: under every filter and in every view, the frame
//! numbers of what is printed never go down. The one exception, documented in docs/design.md,
//! is the list of unanswered requests at the end of an input, which comes after everything
//! else and in frame order within itself.

mod common;

use std::path::Path;

/// The issue 35 captures started while the cluster ran (every connection picked up
/// mid-stream), read again on the default port alone, as a user would: the connections to the
/// brokers on 9192 and 9292 are then found by what they carry.
const LATE: &[&str] = &[
    "samples/issue35-classic-late.pcap",
    "samples/issue35-kip848-late.pcap",
    "samples/issue35/issue35-nonascii-late.pcap",
];

/// Every capture of samples/, with the key logs beside it.
fn samples() -> Vec<(String, Vec<String>)> {
    let dir = common::cli::root().join("samples");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).expect("samples/") {
        let p = e.expect("entry").path();
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        let Some(name) = name else { continue };
        if !(name.ends_with(".pcap") || name.ends_with(".pcapng")) {
            continue;
        }
        let stem = name.split('.').next().unwrap_or_default().to_string();
        let keys = std::fs::read_dir(&dir)
            .expect("samples/")
            .filter_map(|k| k.ok())
            .map(|k| k.file_name().to_string_lossy().into_owned())
            .filter(|k| k.ends_with(".keys") && k.split('.').next() == Some(stem.as_str()))
            .map(|k| format!("samples/{k}"))
            .collect();
        out.push((format!("samples/{name}"), keys));
    }
    out.sort();
    assert!(out.len() > 50, "samples/ holds {} captures", out.len());
    out
}

/// The frame number a line of output is dated by: the first column of a summary or notice
/// line, the first field of `-T fields`, `frame` of a JSON message.
fn frame_of(line: &str) -> Option<u64> {
    if line.starts_with('{') {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        return v.get("frame")?.as_u64();
    }
    line.split_whitespace().next()?.parse().ok()
}

/// Frame numbers go up (or stay) through `out`; the unanswered list may follow, in order.
fn assert_in_frame_order(what: &str, out: &str) {
    let mut last = 0u64;
    let mut in_final_list = false;
    for line in out.lines() {
        let Some(f) = frame_of(line) else { continue };
        let unanswered = line.contains("!! unanswered:");
        if unanswered && !in_final_list && f < last {
            // The list of unanswered requests starts: its own order from here.
            in_final_list = true;
            last = f;
            continue;
        }
        assert!(
            !in_final_list || unanswered,
            "{what}: a line after the unanswered list: {line}"
        );
        assert!(
            f >= last,
            "{what}: frame {f} printed after frame {last}: {line}"
        );
        last = f;
    }
}

fn check_view(view: &[&str]) {
    for (file, keys) in samples() {
        let mut args = vec!["--no-progress"];
        for k in &keys {
            args.extend(["--keylog", k.as_str()]);
        }
        // The TLS captures listen on 9093: their connection lines show on a broker port.
        if Path::new(&file)
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("tls-"))
        {
            args.extend(["-p", "9093", "-p", "9092"]);
        }
        // The issue 35 cluster's captures are read on its brokers' ports, as samples/README.md
        // says (and tests/samples.rs does); `LATE` reads those started mid-stream on 9092
        // alone as well.
        if Path::new(&file)
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("issue35-"))
        {
            args.extend(["-p", "9092", "-p", "9192", "-p", "9292"]);
        }
        args.extend_from_slice(view);
        args.push(&file);
        let out = common::cli::run(&args);
        assert_in_frame_order(&format!("{file} {view:?}"), &out);
    }
    for file in LATE {
        let mut args = vec!["--no-progress"];
        args.extend_from_slice(view);
        args.push(file);
        let out = common::cli::run(&args);
        assert_in_frame_order(&format!("{file} (port 9092 alone) {view:?}"), &out);
    }
}

#[test]
fn unfiltered_summaries_are_in_frame_order() {
    check_view(&[]);
}

/// The case: requests alone, judged without their answers, each printed when its
/// answer came (74 inversions on one capture).
#[test]
fn requests_alone_as_fields_are_in_frame_order() {
    check_view(&[
        "-T",
        "fields",
        "-e",
        "frame.number",
        "--messages",
        "-Y",
        "request",
    ]);
}

/// Exchanges: a request and its answer are both shown where they were captured, with
/// other exchanges between them.
#[test]
fn filtered_exchanges_are_in_frame_order() {
    check_view(&["-Y", "api == Produce || api == Fetch || api == Metadata"]);
}

#[test]
fn filtered_json_messages_are_in_frame_order() {
    check_view(&["--json", "--messages", "-Y", "api == Produce"]);
}

/// The exchange flags: errors (judged on the answer), an API.
#[test]
fn exchange_flags_are_in_frame_order() {
    check_view(&["--errors"]);
    check_view(&["--api", "Metadata", "-T", "fields", "-e", "frame.number"]);
}

/// The other case, on its own: answers held back behind their requests once
/// interleaved with the next exchanges (frame 60's Fetch came after 61 to 66).
#[test]
fn a_long_poll_request_held_for_its_answer_keeps_its_place() {
    let out = common::cli::run(&[
        "--no-progress",
        "-T",
        "fields",
        "-e",
        "frame.number",
        "--messages",
        "-Y",
        "request",
        "samples/ak44-consumer-classic.pcap",
    ]);
    let frames: Vec<u64> = out.lines().filter_map(frame_of).collect();
    let at = |f: u64| frames.iter().position(|x| *x == f);
    assert!(at(60) < at(61) && at(61).is_some(), "{frames:?}");
    assert_eq!(frames.len(), 16, "every request once: {frames:?}");
}

/// A decrypted TLS connection is told at its first record that authenticates and dated by
/// its handshake: lines of other connections in between wait for it.
#[test]
fn tls_connection_lines_keep_their_place() {
    let out = common::cli::run(&[
        "--no-progress",
        "-p",
        "9093",
        "--keylog",
        "samples/tls-confluent-broker-keys.broker.keys",
        "samples/tls-confluent-broker-keys.pcap",
    ]);
    let tls_lines = out.lines().filter(|l| l.contains("TLS connection")).count();
    assert!(tls_lines >= 3, "{out}");
    assert_in_frame_order("tls-confluent-broker-keys -p 9093", &out);
}
