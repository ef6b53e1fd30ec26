//! Regressions from probing with hostile input: memory bounded by --max-elements, big frames at
//! the start of a capture without a SYN, malformed frames at the end of a connection.

mod common;

use common::collect::run_bytes;
use common::pcapgen::{packet, pcap, Seg};
use kdissect::kafka::decode::MAX_ELEMENTS;
use kdissect::kafka::decode_request;
use kdissect::pipeline::Options;

/// A Metadata v13 request with `n` topics (all-zero ids, empty names).
fn metadata_v13(n: usize) -> Vec<u8> {
    let mut body = vec![0x00, 0x03, 0x00, 0x0d, 0, 0, 0, 0, 0, 0, 0];
    let mut count = n as u64 + 1;
    loop {
        let b = (count & 0x7f) as u8;
        count >>= 7;
        if count == 0 {
            body.push(b);
            break;
        }
        body.push(b | 0x80);
    }
    for _ in 0..n {
        body.extend([0u8; 16]);
        body.extend([1, 0]);
    }
    body.extend([0, 0, 0]);
    let mut f = (body.len() as u32).to_be_bytes().to_vec();
    f.extend(body);
    f
}

fn node_count(n: &kdissect::kafka::Node) -> usize {
    1 + n.children.iter().map(node_count).sum::<usize>()
}

#[test]
fn huge_arrays_are_summarised_not_kept() {
    let f = metadata_v13(100_000);
    let m = decode_request(&f);
    assert!(m.is_clean(), "{:?}", m.error);
    common::assert_tiles(&m);
    let nodes = node_count(&m.root);
    assert!(nodes < MAX_ELEMENTS * 5 + 100, "{nodes} nodes");
    let topics = common::get(&m, "Topics");
    assert_eq!(topics.value, kdissect::kafka::Value::Array(100_000));
    let omitted = topics.children.last().expect("omitted node");
    assert_eq!(omitted.name, "omitted");
    assert_eq!(omitted.len, (100_000 - MAX_ELEMENTS) * 18);
}

#[test]
fn huge_tagged_field_counts_are_summarised_not_kept() {
    // Metadata v13 request, empty topic list, then 100000 empty tagged fields at the end.
    let n = 100_000u32;
    let mut body = vec![0x00, 0x03, 0x00, 0x0d, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0];
    let mut c = n;
    while c >= 0x80 {
        body.push((c as u8 & 0x7f) | 0x80);
        c >>= 7;
    }
    body.push(c as u8);
    for i in 0..n {
        // Tags ascending, size 0; tags above 127 take two bytes.
        let t = i + 1;
        if t < 0x80 {
            body.push(t as u8);
        } else {
            let mut v = t;
            while v >= 0x80 {
                body.push((v as u8 & 0x7f) | 0x80);
                v >>= 7;
            }
            body.push(v as u8);
        }
        body.push(0);
    }
    let mut f = (body.len() as u32).to_be_bytes().to_vec();
    f.extend(body);
    let m = decode_request(&f);
    assert!(m.error.is_none(), "{:?}", m.error);
    common::assert_tiles(&m);
    assert!(node_count(&m.root) < MAX_ELEMENTS * 5 + 100);
}

fn one_way(frames: &[Vec<u8>], mss: usize) -> Vec<u8> {
    // Client data only, no handshake: the capture starts at the first byte of the stream.
    let mut segs = Vec::new();
    let mut seq = 1000u32;
    for f in frames {
        for chunk in f.chunks(mss) {
            segs.push(Seg {
                from_client: true,
                seq,
                ack: 1,
                syn: false,
                fin: false,
                payload: chunk.to_vec(),
            });
            seq = seq.wrapping_add(chunk.len() as u32);
        }
    }
    pcap(
        &segs
            .iter()
            .map(|s| packet(s, 40000, 9092))
            .collect::<Vec<_>>(),
    )
}

#[test]
fn big_first_frame_without_syn_is_found_whole() {
    let big = metadata_v13(100_000);
    let (c, _, _) = run_bytes(&one_way(&[big], 1448), &Options::default());
    assert_eq!(c.rows.len(), 1, "{:?}", c.rows);
    assert_eq!(c.rows[0].2, 3);
    assert!(c.rows[0].5, "not clean: {:?}", c.rows);
}

#[test]
fn malformed_lone_request_at_connection_end_is_shown() {
    let mut bad = metadata_v13(0);
    bad.truncate(bad.len() - 1);
    let n = (bad.len() - 4) as u32;
    bad[0..4].copy_from_slice(&n.to_be_bytes());
    let (c, _, _) = run_bytes(&one_way(&[bad], 1448), &Options::default());
    assert_eq!(c.rows.len(), 1, "{:?}", c.rows);
    assert!(!c.rows[0].5);
}
