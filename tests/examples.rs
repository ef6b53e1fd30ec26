//! `kdissect example`: the seed pages' instances, and the smallest instance of every API and
//! version decoding back cleanly and matching the kafka-protocol encoder byte for byte.

mod common;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestKind, ResponseKind};
use kdissect::kafka::example;
use kdissect::kafka::schema::{registry, Direction};
use kdissect::kafka::{decode_request, decode_response};
use std::process::Command;

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn example_tree(api: &str, version: &str, dir: &str) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args([
            "example",
            api,
            "--version",
            version,
            dir,
            "-V",
            "--color",
            "never",
        ])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8(o.stdout).expect("utf8");
    // Title line first, then the tree.
    out.split_once('\n').expect("title").1.to_string()
}

#[test]
fn examples_reproduce_the_seed_pages() {
    for (api, v, dir, seed) in [
        ("metadata", "13", "--request", "metadata-v13-request"),
        ("metadata", "13", "--response", "metadata-v13-response"),
        (
            "describe-cluster",
            "2",
            "--request",
            "describe-cluster-v2-request",
        ),
        (
            "describe-cluster",
            "2",
            "--response",
            "describe-cluster-v2-response",
        ),
    ] {
        let want =
            std::fs::read_to_string(common::fixture(&format!("seed/{seed}.tree"))).expect("seed");
        assert_eq!(squash(&example_tree(api, v, dir)), squash(&want), "{seed}");
    }
}

#[test]
fn example_bytes_equal_the_vectors() {
    for (key, v, dir, file) in [
        (3, 13, Direction::Request, "metadata-v13-request.hex"),
        (3, 13, Direction::Response, "metadata-v13-response.hex"),
        (60, 2, Direction::Request, "describe-cluster-v2-request.hex"),
        (
            60,
            2,
            Direction::Response,
            "describe-cluster-v2-response.hex",
        ),
        // With the nullable struct's presence byte the pages leave out.
        (
            75,
            0,
            Direction::Request,
            "describe-topic-partitions-v0-request.hex",
        ),
        (
            75,
            0,
            Direction::Response,
            "describe-topic-partitions-v0-response.hex",
        ),
    ] {
        let spec = registry().get_for(key, dir, v).expect("spec");
        assert_eq!(example::frame(spec, v), common::vector(file), "{file}");
    }
}

#[test]
fn every_api_and_version_decodes_its_example() {
    let reg = registry();
    let mut n = 0;
    for key in reg.api_keys() {
        for dir in [Direction::Request, Direction::Response] {
            for v in reg.versions(key, dir) {
                let spec = reg.get_for(key, dir, v).expect("spec");
                let frame = example::frame(spec, v);
                let msg = match dir {
                    Direction::Request => decode_request(&frame),
                    Direction::Response => decode_response(&frame, key, v),
                };
                assert!(
                    msg.is_clean(),
                    "{} v{v}: {:?} {:?}",
                    spec.name,
                    msg.error,
                    msg.diagnoses
                );
                common::assert_tiles(&msg);
                n += 1;
            }
        }
    }
    assert!(n > 700, "only {n} messages");
}

/// Versions where kafka-protocol 0.18 was generated from an older draft than Kafka's current
/// specs: OffsetCommit and OffsetFetch v10 (topic ids replaced topic names later) and
/// InitProducerId v6 (marked unstable upstream). Only these may differ.
const OLDER_DRAFT: &[(ApiKey, i16, Direction)] = &[
    (ApiKey::OffsetCommit, 10, Direction::Request),
    (ApiKey::OffsetFetch, 10, Direction::Request),
    (ApiKey::InitProducerId, 6, Direction::Request),
];

/// The oracle: kafka-protocol decodes each example body and encodes it back to the same bytes,
/// for every API and version it knows, in both directions.
#[test]
fn every_example_round_trips_through_kafka_protocol() {
    let mut n = 0;
    let mut differ = Vec::new();
    for key in ApiKey::iter() {
        let range = key.valid_versions();
        for v in range.min..=range.max {
            for dir in [Direction::Request, Direction::Response] {
                let spec = registry().get_for(key as i16, dir, v).expect("spec");
                assert!(spec.valid_versions.contains(v), "{key:?} v{v}: no table");
                let body = example::body(spec, v);
                let mut buf = Bytes::from(body.clone());
                let mut out = BytesMut::new();
                let r =
                    match dir {
                        Direction::Request => RequestKind::decode(key, &mut buf, v)
                            .and_then(|m| m.encode(&mut out, v)),
                        Direction::Response => ResponseKind::decode(key, &mut buf, v)
                            .and_then(|m| m.encode(&mut out, v)),
                    };
                if r.is_err() || !buf.is_empty() || out.to_vec() != body {
                    differ.push((key, v, dir));
                }
                n += 1;
            }
        }
    }
    assert_eq!(
        differ, OLDER_DRAFT,
        "kafka-protocol disagrees with kdissect's tables on these"
    );
    assert!(n > 500, "only {n}");
}

#[test]
fn example_usage_errors() {
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(["example", "metadata", "--version", "99"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Metadata has versions 0-13, not 99"));
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(["example", "nope"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
}
