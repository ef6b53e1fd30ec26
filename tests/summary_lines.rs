//! Summary lines say what the messages hold: topics of every DeleteTopics version, records of
//! legacy message sets (inner messages of a compressed wrapper included), and record batches
//! v2 where an old version cannot carry them.

mod common;

use common::pcapgen::{conversation, packet, pcap};
use std::io::Write;
use std::process::{Command, Stdio};

fn kdissect(args: &[&str], stdin: &[u8]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin).expect("write");
    drop(input);
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut f = (body.len() as i32).to_be_bytes().to_vec();
    f.extend_from_slice(body);
    f
}

fn compact(s: &str) -> Vec<u8> {
    let mut v = vec![(s.len() + 1) as u8];
    v.extend_from_slice(s.as_bytes());
    v
}

#[test]
fn delete_topics_v4_lists_its_topic_names() {
    // Request header v2 (key 20, v4, corr 5, client_id "t"), TopicNames, TimeoutMs.
    let mut req = vec![0, 20, 0, 4, 0, 0, 0, 5, 0, 1, b't', 0, 3];
    req.extend(compact("orders"));
    req.extend(compact("payments"));
    req.extend_from_slice(&30_000i32.to_be_bytes());
    req.push(0);
    // Response header v1, ThrottleTimeMs, Responses (orders ok, payments error 3).
    let mut resp = vec![0, 0, 0, 5, 0, 0, 0, 0, 0, 3];
    resp.extend(compact("orders"));
    resp.extend_from_slice(&[0, 0, 0]);
    resp.extend(compact("payments"));
    resp.extend_from_slice(&[0, 3, 0]);
    resp.push(0);
    let segs = conversation(&[(frame(&req), frame(&resp))], &[1500]);
    let cap = pcap(
        &segs
            .iter()
            .map(|s| packet(s, 40000, 9092))
            .collect::<Vec<_>>(),
    );
    let (code, out) = kdissect(&["-"], &cap);
    assert_eq!(code, Some(0), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].contains("DeleteTopics v4 Request corr=5")
            && lines[0].contains("topics=[orders, payments]"),
        "{out}"
    );
    assert!(
        lines[1].contains("topics=[orders, payments(UNKNOWN_TOPIC_OR_PARTITION)]"),
        "{out}"
    );
}

const LEGACY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/samples/kcat-produce-consume-legacy.pcap"
);

#[test]
fn legacy_message_sets_count_their_messages() {
    let (_, out) = kdissect(&[LEGACY], b"");
    let produce: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("Produce v1 Request") && !l.contains("unanswered"))
        .collect();
    // kcat sent 3 uncompressed messages, then one gzip wrapper holding 3 (samples/README.md).
    assert_eq!(produce.len(), 2, "{out}");
    assert!(
        produce[0].contains("records=3 (151 bytes)"),
        "{}",
        produce[0]
    );
    assert!(
        produce[1].contains("records=3 (114 bytes)"),
        "{}",
        produce[1]
    );
    let (_, tree) = kdissect(&["-V", LEGACY], b"");
    assert!(
        tree.contains("Records records = 3 messages, 3 records"),
        "{tree}"
    );
    assert!(
        tree.contains("Records records = 1 message, 3 records"),
        "{tree}"
    );
}

#[test]
fn batch_v2_in_an_old_fetch_is_an_interop_problem() {
    let (code, out) = kdissect(&[LEGACY], b"");
    assert_eq!(code, Some(1));
    let fetch: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("Fetch v1 Response corr=3"))
        .collect();
    assert_eq!(fetch.len(), 1, "{out}");
    assert!(
        fetch[0].contains("interop: record batch v2 (magic 2) in a Fetch v1 response"),
        "{}",
        fetch[0]
    );
    // The empty fetches after it carry no batch and are not flagged.
    assert!(!out
        .lines()
        .any(|l| l.contains("Fetch v1 Response corr=4") && l.contains("interop")));
}

/// A record batch v2 with `attributes` and these (already compressed) record bytes, its
/// CRC-32C right.
fn batch(attributes: i16, records: &[u8], count: i32) -> Vec<u8> {
    let mut after_crc = attributes.to_be_bytes().to_vec();
    after_crc.extend_from_slice(&0i32.to_be_bytes()); // lastOffsetDelta
    after_crc.extend_from_slice(&0i64.to_be_bytes()); // baseTimestamp
    after_crc.extend_from_slice(&0i64.to_be_bytes()); // maxTimestamp
    after_crc.extend_from_slice(&(-1i64).to_be_bytes()); // producerId
    after_crc.extend_from_slice(&(-1i16).to_be_bytes()); // producerEpoch
    after_crc.extend_from_slice(&(-1i32).to_be_bytes()); // baseSequence
    after_crc.extend_from_slice(&count.to_be_bytes());
    after_crc.extend_from_slice(records);
    let crc = crc32c::crc32c(&after_crc);
    let mut b = 0i64.to_be_bytes().to_vec();
    b.extend_from_slice(&((4 + 1 + 4 + after_crc.len()) as i32).to_be_bytes());
    b.extend_from_slice(&0i32.to_be_bytes()); // partitionLeaderEpoch
    b.push(2);
    b.extend_from_slice(&crc.to_be_bytes());
    b.extend(after_crc);
    b
}

#[test]
fn the_exit_status_does_not_depend_on_the_view() {
    // A zstd batch whose data is not zstd after its magic, CRC correct: every view reports it.
    let records = [0x28, 0xb5, 0x2f, 0xfd, 0xff, 0xff, 0xff, 0xff, 0x13, 0x37];
    let b = batch(4, &records, 3);
    // Produce v3 request: header v1, TransactionalId null, acks -1, timeout, one topic, one
    // partition with the batch.
    let mut req = vec![0, 0, 0, 3, 0, 0, 0, 9, 0, 1, b't'];
    req.extend_from_slice(&(-1i16).to_be_bytes());
    req.extend_from_slice(&(-1i16).to_be_bytes());
    req.extend_from_slice(&30_000i32.to_be_bytes());
    req.extend_from_slice(&1i32.to_be_bytes());
    req.extend_from_slice(&6i16.to_be_bytes());
    req.extend_from_slice(b"orders");
    req.extend_from_slice(&1i32.to_be_bytes());
    req.extend_from_slice(&0i32.to_be_bytes());
    req.extend_from_slice(&(b.len() as i32).to_be_bytes());
    req.extend(b);
    let segs = conversation(&[(frame(&req), Vec::new())], &[1500]);
    let cap = pcap(
        &segs
            .iter()
            .map(|s| packet(s, 40000, 9092))
            .collect::<Vec<_>>(),
    );
    for view in [
        &["-"][..],
        &["-V", "-"],
        &["--json", "-"],
        &["--stats", "-q", "-"],
    ] {
        let (code, out) = kdissect(view, &cap);
        assert_eq!(code, Some(1), "{view:?}: {out}");
    }
    let (_, line) = kdissect(&["-"], &cap);
    assert!(line.contains("zstd data does not decompress"), "{line}");
}

#[test]
fn summaries_count_past_the_elements_kept() {
    // Metadata v1 for all topics, answered with 20 000 topics (twice --max-elements).
    let mut req = vec![0, 3, 0, 1, 0, 0, 0, 4, 0, 1, b't'];
    req.extend_from_slice(&(-1i32).to_be_bytes());
    let mut resp = 4i32.to_be_bytes().to_vec();
    resp.extend_from_slice(&0i32.to_be_bytes()); // no brokers
    resp.extend_from_slice(&1i32.to_be_bytes()); // controller
    resp.extend_from_slice(&20_000i32.to_be_bytes());
    for i in 0..20_000 {
        let name = format!("t{i:05}");
        resp.extend_from_slice(&0i16.to_be_bytes());
        resp.extend_from_slice(&(name.len() as i16).to_be_bytes());
        resp.extend_from_slice(name.as_bytes());
        resp.push(0);
        resp.extend_from_slice(&0i32.to_be_bytes());
    }
    // Produce v3 with 20 000 empty-ish batches of 1 record each (header only).
    let one = batch(0, &[], 1);
    let many: Vec<u8> = (0..20_000).flat_map(|_| one.clone()).collect();
    let mut prod = vec![0, 0, 0, 3, 0, 0, 0, 5, 0, 1, b't'];
    prod.extend_from_slice(&(-1i16).to_be_bytes());
    prod.extend_from_slice(&1i16.to_be_bytes());
    prod.extend_from_slice(&30_000i32.to_be_bytes());
    prod.extend_from_slice(&1i32.to_be_bytes());
    prod.extend_from_slice(&6i16.to_be_bytes());
    prod.extend_from_slice(b"orders");
    prod.extend_from_slice(&1i32.to_be_bytes());
    prod.extend_from_slice(&0i32.to_be_bytes());
    prod.extend_from_slice(&(many.len() as i32).to_be_bytes());
    prod.extend(many);
    let segs = conversation(
        &[(frame(&req), frame(&resp)), (frame(&prod), Vec::new())],
        &[1448],
    );
    let cap = pcap(
        &segs
            .iter()
            .map(|s| packet(s, 40000, 9092))
            .collect::<Vec<_>>(),
    );
    let (_, out) = kdissect(&["-"], &cap);
    assert!(
        out.contains("topics=[t00000, t00001, t00002, t00003, t00004, +19995 more]"),
        "{out}"
    );
    assert!(out.contains("records=20000 ("), "{out}");
}
