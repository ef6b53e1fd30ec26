//! The embedded message specs: they parse, they are the generator's output, and header versions
//! follow Kafka's rules for every API.

use kafka_protocol::messages::ApiKey;
use kdissect::kafka::message::{request_header_version, response_header_version};
use kdissect::kafka::schema::{parse_spec, registry, spec_files, Direction};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

#[test]
fn every_embedded_spec_parses() {
    let mut n = 0;
    for (file, text) in spec_files() {
        let spec = parse_spec(text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let base = file.trim_start_matches("legacy/");
        assert!(base.starts_with(spec.name), "{file} holds {}", spec.name);
        n += 1;
    }
    assert!(n >= 180, "only {n} specs");
    // Every API key kafka-protocol knows has both directions.
    for key in ApiKey::iter() {
        let k = key as i16;
        assert!(
            registry().get(k, Direction::Request).is_some(),
            "request spec for {key:?}"
        );
        assert!(
            registry().get(k, Direction::Response).is_some(),
            "response spec for {key:?}"
        );
    }
}

/// The committed tables are the generator's output: MANIFEST.txt holds the SHA-256 that
/// scripts/gen-schemas.py wrote for each, so a hand edit (or a stale file) fails here.
#[test]
fn tables_match_the_generator_manifest() {
    let manifest = include_str!("../schema/MANIFEST.txt");
    let mut want: BTreeMap<String, String> = BTreeMap::new();
    for line in manifest
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (hash, file) = line.split_once("  ").expect("hash  file");
        want.insert(file.to_string(), hash.to_string());
    }
    let mut got: BTreeMap<String, String> = BTreeMap::new();
    for (file, text) in spec_files() {
        got.insert(
            file.to_string(),
            hex::encode(Sha256::digest(text.as_bytes())),
        );
    }
    assert_eq!(got.len(), want.len(), "files in schema/ vs MANIFEST.txt");
    for (file, hash) in &want {
        assert_eq!(
            got.get(file),
            Some(hash),
            "{file} differs from what scripts/gen-schemas.py wrote"
        );
    }
}

/// Each source line of the manifest names where the tables came from precisely enough to check:
/// the repository, a release tag and the commit, e.g.
/// `# current: repository=https://github.com/apache/kafka tag=4.4.0 commit=1156b2752aaa28ea ...`.
#[test]
fn manifest_names_repository_tag_and_commit() {
    let manifest = include_str!("../schema/MANIFEST.txt");
    for source in ["current", "legacy"] {
        let line = manifest
            .lines()
            .find(|l| l.starts_with(&format!("# {source}: ")))
            .unwrap_or_else(|| panic!("no '# {source}:' line"));
        let field = |k: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(&format!("{k}=")))
                .unwrap_or_else(|| panic!("{source}: no {k}= in {line}"))
        };
        assert_eq!(field("repository"), "https://github.com/apache/kafka");
        let tag = field("tag");
        assert!(
            tag.split('.').count() == 3 && tag.split('.').all(|p| p.parse::<u32>().is_ok()),
            "{source}: tag {tag} is not a release"
        );
        let commit = field("commit");
        assert!(
            (12..=40).contains(&commit.len()) && commit.chars().all(|c| c.is_ascii_hexdigit()),
            "{source}: commit {commit}"
        );
    }
    assert!(
        manifest.contains("tag=4.4.0 "),
        "current tables are Kafka 4.4.0"
    );
}

/// Kafka 4.4's additions are in the tables: ApiVersions v5, the bumped versions and keys 93-94.
#[test]
fn kafka_4_4_versions_are_known() {
    for (key, version) in [
        (18, 5), // ApiVersions (KIP-1242: ClusterId, NodeId)
        (28, 6), // TxnOffsetCommit
        (35, 5), // DescribeLogDirs
        (42, 3), // DeleteGroups
        (63, 2), // BrokerHeartbeat
        (88, 1), // StreamsGroupHeartbeat
        (89, 1), // StreamsGroupDescribe
        (93, 0), // StreamsGroupTopologyDescriptionUpdate
        (94, 0), // UnregisterController
    ] {
        assert!(registry().knows(key, version), "key {key} v{version}");
    }
}

#[test]
fn header_versions_match_kafka_for_every_api() {
    let mut checked = 0;
    for key in ApiKey::iter() {
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
            checked += 1;
        }
    }
    assert!(checked > 250, "only {checked} versions");
    // ApiVersions answers with header v0 even in flexible versions.
    assert_eq!(response_header_version(18, 3), 0);
    assert_eq!(response_header_version(18, 4), 0);
    // ControlledShutdown v0 requests use header v0.
    assert_eq!(request_header_version(7, 0), 0);
}

#[test]
fn every_kafka_protocol_version_has_a_table() {
    for key in ApiKey::iter() {
        let range = key.valid_versions();
        for v in range.min..=range.max {
            assert!(registry().knows(key as i16, v), "{key:?} v{v}");
        }
    }
}

/// Every API key in the tables has a name, and it is the spec's message name.
#[test]
fn every_api_in_the_tables_is_named() {
    use kdissect::kafka::names::api_name;
    for key in registry().api_keys() {
        let spec = registry()
            .get(key, Direction::Request)
            .expect("request spec");
        let want = spec.name.trim_end_matches("Request");
        assert_eq!(api_name(key), Some(want), "API key {key}");
    }
}

/// Every field of the APIs users meet most carries a description (ours, in
/// schema-src/descriptions.json), in every version and every table, legacy included.
#[test]
fn common_apis_describe_every_field() {
    use kdissect::kafka::schema::FieldSpec;
    fn missing(prefix: &str, fields: &[FieldSpec], out: &mut Vec<String>) {
        for f in fields {
            if f.about.trim().is_empty() {
                out.push(format!("{prefix}{}", f.name));
            }
            missing(&format!("{prefix}{}.", f.name), f.fields, out);
        }
    }
    let apis = [
        "Produce",
        "Fetch",
        "ListOffsets",
        "OffsetCommit",
        "OffsetFetch",
        "FindCoordinator",
        "JoinGroup",
        "SyncGroup",
        "Heartbeat",
        "LeaveGroup",
        "ConsumerGroupHeartbeat",
        "InitProducerId",
        "AddPartitionsToTxn",
        "EndTxn",
        "CreateTopics",
        "DeleteTopics",
        "SaslHandshake",
        "SaslAuthenticate",
    ];
    let mut gaps = Vec::new();
    let mut files = 0;
    for (file, text) in spec_files() {
        let base = file.trim_start_matches("legacy/").trim_end_matches(".json");
        let api = base
            .trim_end_matches("Request")
            .trim_end_matches("Response");
        if !apis.contains(&api) {
            continue;
        }
        let spec = parse_spec(text).expect("spec");
        missing(&format!("{file}: "), spec.fields, &mut gaps);
        files += 1;
    }
    assert!(files >= 36, "{files} tables");
    assert!(
        gaps.is_empty(),
        "fields without a description:\n{}",
        gaps.join("\n")
    );
}
