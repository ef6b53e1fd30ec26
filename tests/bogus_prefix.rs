//! A size prefix that is bogus but under --max-frame makes a direction wait for bytes that
//! never come. The frames after it are still shown and paired: as soon as an answer arrives to
//! a request that is inside the bytes waited on, or at the latest when the connection ends.

mod common;

use common::collect::run_bytes;
use common::pcapgen::{conversation, packet, pcap};
use common::vector;
use kdissect::kafka::stream::Notice;
use kdissect::pipeline::Options;

fn with_corr(mut f: Vec<u8>, at: usize, corr: i32) -> Vec<u8> {
    f[at..at + 4].copy_from_slice(&corr.to_be_bytes());
    f
}

fn capture(answered: bool) -> Vec<u8> {
    // 90 MiB claimed, 10 bytes given, then five real exchanges.
    let mut junk = (90 * 1024 * 1024i32).to_be_bytes().to_vec();
    junk.extend_from_slice(&[0x5a; 10]);
    let mut exchanges = vec![(junk, Vec::new())];
    for corr in 1..=5 {
        let resp = if answered {
            with_corr(vector("metadata-v13-response.hex"), 4, corr)
        } else {
            Vec::new()
        };
        exchanges.push((with_corr(vector("metadata-v13-request.hex"), 8, corr), resp));
    }
    let segs = conversation(&exchanges, &[1500]);
    pcap(
        &segs
            .iter()
            .map(|s| packet(s, 40000, 9092))
            .collect::<Vec<_>>(),
    )
}

#[test]
fn answers_to_unseen_requests_unstick_the_direction() {
    let (c, _h, err) = run_bytes(&capture(true), &Options::default());
    assert_eq!(err, None);
    let requests: Vec<i32> = c
        .rows
        .iter()
        .filter(|r| r.4 == "request")
        .map(|r| r.1)
        .collect();
    let responses: Vec<(i32, bool)> = c
        .rows
        .iter()
        .filter(|r| r.4 == "response")
        .map(|r| (r.1, r.5 && !r.6))
        .collect();
    assert_eq!(requests, vec![1, 2, 3, 4, 5]);
    // Every answer decoded cleanly with its request's API (not "request not captured").
    assert_eq!(responses, (1..=5).map(|c| (c, true)).collect::<Vec<_>>());
    assert!(c
        .latencies
        .iter()
        .zip(&c.rows)
        .filter(|(_, r)| r.4 == "response")
        .all(|(l, _)| l.is_some()));
    let bad: Vec<&Notice> = c
        .notices
        .iter()
        .filter(|n| matches!(n, Notice::BadSize { .. }))
        .collect();
    assert_eq!(bad.len(), 1, "{:?}", c.notices);
}

#[test]
fn at_the_end_of_the_connection_the_held_bytes_are_searched() {
    let (c, _h, err) = run_bytes(&capture(false), &Options::default());
    assert_eq!(err, None);
    let requests: Vec<i32> = c
        .rows
        .iter()
        .filter(|r| r.4 == "request")
        .map(|r| r.1)
        .collect();
    assert_eq!(requests, vec![1, 2, 3, 4, 5]);
    assert!(!c
        .notices
        .iter()
        .any(|n| matches!(n, Notice::EndedInFrame { .. })));
}
