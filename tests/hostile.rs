//! Regressions from probing with hostile input: memory bounded by --max-elements, big frames at
//! the start of a capture without a SYN, malformed frames at the end of a connection.

mod common;

use common::collect::run_bytes;
use common::pcapgen::{packet, pcap, Seg};
use kdissect::kafka::decode_request;
use kdissect::kafka::MAX_ELEMENTS;
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
    let nodes = node_count(m.root());
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
    assert!(node_count(m.root()) < MAX_ELEMENTS * 5 + 100);
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

fn frames_pcap(frames: &[Vec<u8>], client_port: u16) -> Vec<u8> {
    let mut segs = Vec::new();
    let mut seq = 1000u32;
    for f in frames {
        for chunk in f.chunks(1448) {
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
            .map(|s| packet(s, client_port, 9092))
            .collect::<Vec<_>>(),
    )
}

#[test]
fn gigabyte_frames_and_million_element_claims_cost_nothing() {
    use kdissect::kafka::stream::Notice;
    // A frame claiming 1 GiB, then one claiming 90 MB that never arrives, after a real one.
    let mut giga = 0x4000_0000u32.to_be_bytes().to_vec();
    giga.extend([0, 3, 0, 12, 0, 0, 0, 1]);
    let real = metadata_v13(1);
    let mut ninety = (90u32 << 20).to_be_bytes().to_vec();
    ninety.extend([0, 3, 0, 12, 0, 0, 0, 2, 0, 0, 0]);
    // A Metadata v1 request claiming 2,000,000 topics in a few bytes.
    let mut million = vec![0, 0, 0, 0x12, 0, 3, 0, 1, 0, 0, 0, 3, 0, 0];
    million.extend(2_000_000i32.to_be_bytes());
    million.extend([0, 1, b'a', 0]);
    let (c, _, _) = run_bytes(
        &frames_pcap(&[real.clone(), million, giga, real, ninety], 40000),
        &Options::default(),
    );
    assert!(
        c.notices
            .iter()
            .any(|n| matches!(n, Notice::BadSize { size, .. } if *size == 0x4000_0000)),
        "{:?}",
        c.notices
    );
    assert!(
        c.rows.iter().any(|r| r.2 == 3 && r.3 == 1 && !r.5),
        "{:?}",
        c.rows
    );
    assert!(
        c.notices
            .iter()
            .any(|n| matches!(n, Notice::EndedInFrame { want, .. } if *want == (90 << 20) + 4)),
        "{:?}",
        c.notices
    );
}

#[test]
fn reassembly_and_pairing_limits_are_reported_when_hit() {
    use kdissect::kafka::stream::Notice;
    // Five pipelined requests and no answers, with room for two waiting.
    let reqs: Vec<Vec<u8>> = (0..5)
        .map(|i: i32| {
            let mut f = metadata_v13(0);
            f[8..12].copy_from_slice(&i.to_be_bytes());
            f
        })
        .collect();
    let mut opts = Options::default();
    opts.kafka.max_pending = 2;
    let (c, _, _) = run_bytes(&frames_pcap(&reqs, 40000), &opts);
    assert_eq!(
        c.notices
            .iter()
            .filter(|n| matches!(n, Notice::PendingDropped { .. }))
            .count(),
        3
    );
    // Out-of-order data beyond the buffer limit: the hole is declared lost, and counted.
    let big = metadata_v13(2000);
    let mut segs = Vec::new();
    let mut seq = 1000u32;
    for chunk in big.chunks(1000) {
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
    let first = segs.remove(1); // a hole after the first segment
    segs.push(first);
    let bytes = pcap(
        &segs
            .iter()
            .map(|s| packet(s, 40000, 9092))
            .collect::<Vec<_>>(),
    );
    let mut opts = Options::default();
    opts.tcp.max_buffered = 4096;
    let (_, h, _) = run_bytes(&bytes, &opts);
    assert!(h.buffer_limit_hits >= 1);
    // Two connections at once with room for one: the older is dropped and counted.
    let mut both = Vec::new();
    for port in [40000u16, 40001] {
        both.push(packet(
            &Seg {
                from_client: true,
                seq: 1,
                ack: 1,
                syn: false,
                fin: false,
                payload: metadata_v13(0),
            },
            port,
            9092,
        ));
    }
    let mut opts = Options::default();
    opts.tcp.max_connections = 1;
    let (_, h, _) = run_bytes(&pcap(&both), &opts);
    assert_eq!(h.evicted_connections, 1);
}
