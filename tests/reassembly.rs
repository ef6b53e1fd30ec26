//! TCP reassembly and Kafka framing over synthetic captures: any segmentation, reordering and
//! duplication of a stream yields the same messages; gaps and mid-stream starts are reported
//! where they are and everything else decodes.

mod common;

use common::collect::{run_bytes, Row};
use common::pcapgen::{conversation, packet, pcap, Seg};
use common::vector;
use kdissect::kafka::stream::{Notice, ResyncReason};
use kdissect::pipeline::Options;
use proptest::prelude::*;

/// Three exchanges from the spec vectors, with distinct correlation ids.
fn exchanges() -> Vec<(Vec<u8>, Vec<u8>)> {
    let with_corr = |mut f: Vec<u8>, at: usize, corr: i32| {
        f[at..at + 4].copy_from_slice(&corr.to_be_bytes());
        f
    };
    vec![
        (
            with_corr(vector("metadata-v13-request.hex"), 8, 1),
            with_corr(vector("metadata-v13-response.hex"), 4, 1),
        ),
        (
            with_corr(vector("describe-cluster-v2-request.hex"), 8, 2),
            with_corr(vector("describe-cluster-v2-response.hex"), 4, 2),
        ),
        (
            with_corr(vector("describe-topic-partitions-v0-request.hex"), 8, 3),
            with_corr(vector("describe-topic-partitions-v0-response.hex"), 4, 3),
        ),
    ]
}

fn expected() -> Vec<Row> {
    vec![
        (0, 1, 3, 13, "request", true, false),
        (0, 1, 3, 13, "response", true, false),
        (0, 2, 60, 2, "request", true, false),
        (0, 2, 60, 2, "response", true, false),
        (0, 3, 75, 0, "request", true, false),
        (0, 3, 75, 0, "response", true, false),
    ]
}

fn to_pcap(segs: &[Seg]) -> Vec<u8> {
    pcap(
        &segs
            .iter()
            .map(|s| packet(s, 40000, 9092))
            .collect::<Vec<_>>(),
    )
}

#[test]
fn whole_segments_decode_and_pair() {
    let (c, h, err) = run_bytes(
        &to_pcap(&conversation(&exchanges(), &[1500])),
        &Options::default(),
    );
    assert!(err.is_none(), "{err:?}");
    assert_eq!(c.rows, expected());
    assert!(
        c.notices
            .iter()
            .all(|n| matches!(n, Notice::Connection { .. })),
        "{:?}",
        c.notices
    );
    // Responses carry their latency: 1 ms per packet in these captures.
    assert!(c
        .latencies
        .iter()
        .skip(1)
        .step_by(2)
        .all(|l| l.is_some_and(|x| x > 0)));
    assert_eq!(h.tcp_segments, h.packets);
}

#[test]
fn one_byte_segments_and_many_frames_per_segment() {
    let (c, _, _) = run_bytes(
        &to_pcap(&conversation(&exchanges(), &[1])),
        &Options::default(),
    );
    assert_eq!(c.rows, expected());
    let (c, _, _) = run_bytes(
        &to_pcap(&conversation(&exchanges(), &[7, 3, 200])),
        &Options::default(),
    );
    assert_eq!(c.rows, expected());
}

#[test]
fn detects_kafka_on_another_port_and_not_with_no_detect() {
    let segs = conversation(&exchanges(), &[50]);
    let bytes = pcap(
        &segs
            .iter()
            .map(|s| packet(s, 40000, 19092))
            .collect::<Vec<_>>(),
    );
    let (c, _, _) = run_bytes(&bytes, &Options::default());
    assert_eq!(c.rows, expected());
    let mut opts = Options::default();
    opts.kafka.detect = false;
    let (c, _, _) = run_bytes(&bytes, &opts);
    assert!(c.rows.is_empty());
}

#[test]
fn lost_segment_is_reported_and_the_rest_decodes() {
    let mut segs = conversation(&exchanges(), &[20]);
    // Drop one client data segment inside the DescribeCluster request (19 bytes starting at
    // stream offset 37): the segment covering offsets 40..60.
    let idx = segs
        .iter()
        .enumerate()
        .filter(|(_, s)| s.from_client && !s.payload.is_empty())
        .nth(2)
        .map(|(i, _)| i)
        .expect("segment");
    segs.remove(idx);
    let (c, _, _) = run_bytes(&to_pcap(&segs), &Options::default());
    assert!(
        c.notices
            .iter()
            .any(|n| matches!(n, Notice::LostInGap { .. })),
        "{:?}",
        c.notices
    );
    // The Metadata exchange is intact; so is the DescribeTopicPartitions one.
    assert!(c.rows.contains(&(0, 1, 3, 13, "request", true, false)));
    assert!(c.rows.contains(&(0, 1, 3, 13, "response", true, false)));
    assert!(c.rows.contains(&(0, 3, 75, 0, "request", true, false)));
    assert!(c.rows.contains(&(0, 3, 75, 0, "response", true, false)));
}

#[test]
fn capture_starting_mid_stream_resynchronises() {
    let segs = conversation(&exchanges(), &[10]);
    // Start inside the first request: skip the handshake and two data segments.
    let late: Vec<Seg> = segs[5..].to_vec();
    let (c, _, _) = run_bytes(&to_pcap(&late), &Options::default());
    assert!(
        c.notices.iter().any(|n| matches!(
            n,
            Notice::Resync {
                reason: ResyncReason::MidStream,
                ..
            }
        )),
        "{:?}",
        c.notices
    );
    assert!(
        c.rows.contains(&(0, 2, 60, 2, "request", true, false)),
        "{:?}",
        c.rows
    );
    assert!(
        c.rows.contains(&(0, 3, 75, 0, "response", true, false)),
        "{:?}",
        c.rows
    );
}

#[test]
fn response_without_its_request_is_decoded_as_assumed() {
    let segs = conversation(&exchanges(), &[4000]);
    // Remove the DescribeCluster request segment (client data segment #2).
    let idx = segs
        .iter()
        .enumerate()
        .filter(|(_, s)| s.from_client && !s.payload.is_empty())
        .nth(1)
        .map(|(i, _)| i)
        .expect("segment");
    let mut segs2 = segs.clone();
    segs2.remove(idx);
    let (c, _, _) = run_bytes(&to_pcap(&segs2), &Options::default());
    assert!(
        c.rows.contains(&(0, 2, 60, 2, "response", true, true)),
        "{:?}",
        c.rows
    );
}

#[test]
fn not_a_capture_is_an_error() {
    let (_, h, err) = run_bytes(b"hello, this is not a capture", &Options::default());
    assert_eq!(h.packets, 0);
    assert!(err.expect("error").contains("not a pcap or pcapng file"));
    let mut good = to_pcap(&conversation(&exchanges(), &[1500]));
    good.truncate(good.len() - 10);
    let (c, h, err) = run_bytes(&good, &Options::default());
    assert!(h.packets > 0);
    assert!(err.expect("error").contains("truncated"));
    assert!(c.rows.len() >= 4);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Any segmentation, any local reordering, any duplication: the same messages.
    #[test]
    fn any_segmentation_reordering_duplication(
        sizes in proptest::collection::vec(1usize..120, 1..8),
        swaps in proptest::collection::vec((0usize..400, 1usize..4), 0..12),
        dups in proptest::collection::vec(0usize..400, 0..12),
    ) {
        let mut segs = conversation(&exchanges(), &sizes);
        let n = segs.len();
        // Keep the handshake first; reorder data segments within a small window.
        // Reorder only segments of one direction that follow each other: a capture cannot
        // show an answer before the question it answers was sent.
        for (at, dist) in swaps {
            let i = 3 + at % (n - 5);
            let j = (i + dist).min(n - 3);
            if segs[i..=j].iter().all(|s| s.from_client == segs[i].from_client) {
                segs.swap(i, j);
            }
        }
        for at in dups {
            let i = 3 + at % (n - 5);
            let copy = segs[i].clone();
            segs.insert(i + 1 + at % 3, copy);
        }
        let (c, _, _) = run_bytes(&to_pcap(&segs), &Options::default());
        let mut rows = c.rows.clone();
        // Reordering can move a response's last segment before a request's; compare as sets
        // per direction and check every row decoded cleanly.
        rows.sort();
        let mut want = expected();
        want.sort();
        prop_assert_eq!(rows, want);
        prop_assert!(!c.notices.iter().any(|n| matches!(n, Notice::LostInGap { .. } | Notice::Resync { .. })), "{:?}", c.notices);
    }
}
/// Moves data segment `i` after the last data segment of its direction at most `dist` packets
/// on, as a capture merged from two taps can show it: the other direction's packets stay where
/// they were. Segments moved or used as a target before (`ids`, original indexes, in `used`)
/// are left alone, so that none ends up more than `dist` packets late.
fn move_later(
    segs: &mut Vec<Seg>,
    ids: &mut Vec<usize>,
    used: &mut Vec<usize>,
    i: usize,
    dist: usize,
) {
    let last = segs.len() - 3; // before the two FINs
    let data = |s: &Seg| !s.payload.is_empty();
    if !data(&segs[i]) || used.contains(&ids[i]) {
        return;
    }
    let Some(j) = (i + 1..=(i + dist).min(last))
        .rev()
        .find(|&j| data(&segs[j]) && segs[j].from_client == segs[i].from_client)
    else {
        return;
    };
    if used.contains(&ids[j]) {
        return;
    }
    used.extend([ids[i], ids[j]]);
    let s = segs.remove(i);
    segs.insert(j, s);
    let id = ids.remove(i);
    ids.insert(j, id);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Two directions merged out of order: data segments each moved up to 7 packets later,
    /// past the other direction's answer whose ACK covers them. The same messages, in the same
    /// order, paired, with no loss.
    #[test]
    fn answers_before_the_end_of_their_questions(
        sizes in proptest::collection::vec(1usize..120, 1..8),
        moves in proptest::collection::vec((0usize..400, 1usize..=7), 1..16),
    ) {
        let mut segs = conversation(&exchanges(), &sizes);
        let n = segs.len();
        let mut ids: Vec<usize> = (0..n).collect();
        let mut used = Vec::new();
        for (at, dist) in moves {
            move_later(&mut segs, &mut ids, &mut used, 3 + at % (n - 5), dist);
        }
        let (c, _, _) = run_bytes(&to_pcap(&segs), &Options::default());
        prop_assert_eq!(&c.rows, &expected());
        prop_assert!(c.latencies.iter().skip(1).step_by(2).all(Option::is_some));
        prop_assert!(!c.notices.iter().any(|n| matches!(n, Notice::LostInGap { .. } | Notice::Resync { .. })), "{:?}", c.notices);
    }
}

/// The last segment of the DescribeCluster request shown after the whole response, whose
/// ACKs cover it: the request completes first, then the held response pairs with it.
#[test]
fn answer_seen_before_the_last_segment_of_its_request_pairs() {
    let mut segs = conversation(&exchanges(), &[10]);
    let data = |s: &Seg| !s.payload.is_empty();
    // Last segments of each request (a client segment followed by the broker's).
    let ends: Vec<usize> = (3..segs.len() - 3)
        .filter(|&i| data(&segs[i]) && segs[i].from_client && !segs[i + 1].from_client)
        .collect();
    let last = ends[1];
    let answer_end = (last + 1..segs.len())
        .find(|&k| segs[k + 1].from_client)
        .expect("end of the response");
    let s = segs.remove(last);
    segs.insert(answer_end, s);
    let (c, _, _) = run_bytes(&to_pcap(&segs), &Options::default());
    assert_eq!(c.rows, expected());
    assert!(c.latencies[3].is_some(), "{:?}", c.latencies);
    assert!(
        c.notices
            .iter()
            .all(|n| matches!(n, Notice::Connection { .. })),
        "{:?}",
        c.notices
    );
}

#[test]
fn zz_dump() {
    let segs = conversation(&exchanges(), &[10]);
    std::fs::write("/tmp/mid.pcap", to_pcap(&segs[5..])).unwrap();
}

/// Junk longer than the resync window is counted whole in the skipped bytes.
#[test]
fn skipped_bytes_are_counted_past_the_resync_window() {
    let junk = vec![0xeeu8; 2 * 1024 * 1024];
    let mut first = junk.clone();
    first.extend(vector("metadata-v13-request.hex"));
    let exchanges = vec![(first, vector("metadata-v13-response.hex"))];
    let segs = conversation(&exchanges, &[1448]);
    let (c, _h, err) = run_bytes(&to_pcap(&segs), &Options::default());
    assert_eq!(err, None);
    let skipped: usize = c
        .notices
        .iter()
        .filter_map(|n| match n {
            Notice::Resync { skipped, .. } => Some(*skipped),
            _ => None,
        })
        .sum();
    assert_eq!(skipped, junk.len());
    assert!(c.rows.iter().any(|r| r.2 == 3 && r.4 == "request"));
}
