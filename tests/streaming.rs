//! Streaming: fed one packet at a time through a pipe, kdissect writes each message as soon as
//! its last packet arrives; interrupted, it finishes what it has and exits 128 + the signal.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/samples/ak44-describe-topics-cursor.pcap"
);

/// The classic pcap's file header and its packet records, whole.
fn records() -> (Vec<u8>, Vec<Vec<u8>>) {
    let b = std::fs::read(SAMPLE).expect("sample");
    assert_eq!(
        &b[..4],
        &[0xd4, 0xc3, 0xb2, 0xa1],
        "little-endian microsecond pcap"
    );
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= b.len() {
        let caplen = u32::from_le_bytes(b[at + 8..at + 12].try_into().expect("4")) as usize;
        out.push(b[at..at + 16 + caplen].to_vec());
        at += 16 + caplen;
    }
    (b[..24].to_vec(), out)
}

/// Feeds `packets` packets one every 200 ms; returns when each packet was written and when
/// each output line arrived, with the frame number the line names.
fn feed(args: &[&str], packets: usize) -> (Vec<Instant>, Vec<(Instant, u64)>) {
    let (header, recs) = records();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    let reader = thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            // Notices (`!!`) name an earlier frame: only message lines are timed.
            if line.contains(" !! ") {
                continue;
            }
            let frame = if line.starts_with('{') {
                serde_json::from_str::<serde_json::Value>(&line)
                    .ok()
                    .and_then(|v| v["frame"].as_u64())
            } else {
                line.split_whitespace().next().and_then(|f| f.parse().ok())
            };
            if let Some(f) = frame {
                let _ = tx.send((Instant::now(), f));
            }
        }
    });
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(&header).expect("header");
    let mut written = Vec::new();
    for r in recs.iter().take(packets) {
        stdin.write_all(r).expect("packet");
        stdin.flush().expect("flush");
        written.push(Instant::now());
        thread::sleep(Duration::from_millis(200));
    }
    drop(stdin);
    let _ = child.wait();
    let _ = reader.join();
    (written, rx.into_iter().collect())
}

fn assert_prompt(args: &[&str]) {
    let (written, lines) = feed(args, 24);
    assert!(lines.len() >= 8, "{args:?}: only {} lines", lines.len());
    for (at, frame) in &lines {
        let sent = written[(*frame - 1) as usize];
        let late = at.duration_since(sent);
        assert!(
            late < Duration::from_millis(100),
            "{args:?}: frame {frame} printed {late:?} after its packet"
        );
    }
}

#[test]
fn each_summary_line_appears_when_its_last_packet_arrives() {
    assert_prompt(&["-"]);
}

#[test]
fn each_json_line_appears_when_its_last_packet_arrives() {
    assert_prompt(&["--json", "-"]);
}

#[test]
fn an_interrupt_finishes_the_run_and_exits_143() {
    let (header, recs) = records();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(&header).expect("header");
    // Up to the packet with a request whose answer is still to come (frame 20 is the first
    // DescribeTopicPartitions request; 21 answers it).
    for r in recs.iter().take(20) {
        stdin.write_all(r).expect("packet");
    }
    stdin.flush().expect("flush");
    thread::sleep(Duration::from_millis(500));
    // The pipe stays open: only the signal can end the run.
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("read");
    let code = child.wait().expect("wait").code();
    drop(stdin);
    assert_eq!(code, Some(143), "{out}");
    assert!(out.contains("DescribeCluster v2 Response"), "{out}");
    assert!(
        out.contains("!! unanswered: DescribeTopicPartitions v0 Request corr=4"),
        "the end-of-run notices are printed:\n{out}"
    );
}
