//! The embedded message specs parse, and header versions follow Kafka's rules.

use kafka_protocol::messages::ApiKey;
use kdissect::kafka::message::{request_header_version, response_header_version};
use kdissect::kafka::schema::{parse_spec, registry, spec_files, Direction};

#[test]
fn every_embedded_spec_parses() {
    let mut n = 0;
    for (file, text) in spec_files() {
        let spec = parse_spec(text).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(file.starts_with(&spec.name), "{file} holds {}", spec.name);
        n += 1;
    }
    assert!(n >= 8);
    for key in [3, 18, 60, 75] {
        assert!(
            registry().get(key, Direction::Request).is_some(),
            "request spec for {key}"
        );
        assert!(
            registry().get(key, Direction::Response).is_some(),
            "response spec for {key}"
        );
    }
}

#[test]
fn header_versions_match_kafka() {
    for key in [
        ApiKey::Metadata,
        ApiKey::ApiVersions,
        ApiKey::DescribeCluster,
        ApiKey::DescribeTopicPartitions,
    ] {
        let range = key.valid_versions();
        for v in range.min..=range.max {
            assert_eq!(
                request_header_version(key as i16, v),
                key.request_header_version(v),
                "{key:?} v{v} request"
            );
            assert_eq!(
                response_header_version(key as i16, v),
                key.response_header_version(v),
                "{key:?} v{v} response"
            );
        }
    }
    // ApiVersions answers with header v0 even in flexible versions.
    assert_eq!(response_header_version(18, 3), 0);
    assert_eq!(response_header_version(18, 4), 0);
    // ControlledShutdown v0 requests use header v0.
    assert_eq!(request_header_version(7, 0), 0);
}
