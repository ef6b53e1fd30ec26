//! Numbers shown with their names: error codes, API keys, authorized-operation bits.

mod common;

use common::{get, vector};
use kdissect::kafka::decode_response;
use kdissect::render::{tree, Style};

fn line(frame: &[u8], path: &str) -> String {
    let msg = decode_response(frame, 60, 2);
    assert!(msg.is_clean(), "{:?}", msg.error);
    tree::node_line(get(&msg, path), frame, Style::default())
}

#[test]
fn error_codes_and_authorized_operations_are_named() {
    let mut f = vector("describe-cluster-v2-response.hex");
    f[0x0d..0x0f].copy_from_slice(&3i16.to_be_bytes());
    f[0x23..0x27].copy_from_slice(&((1i32 << 3) | (1 << 4) | (1 << 8)).to_be_bytes());
    assert!(line(&f, "ErrorCode")
        .starts_with("ErrorCode int16 = 3 (UNKNOWN_TOPIC_OR_PARTITION) [0x000d, 2B]"));
    assert!(line(&f, "ClusterAuthorizedOperations").starts_with(
        "ClusterAuthorizedOperations int32 = 280 (READ, WRITE, DESCRIBE) [0x0023, 4B]"
    ));
    f[0x23..0x27].copy_from_slice(&i32::MIN.to_be_bytes());
    assert!(line(&f, "ClusterAuthorizedOperations")
        .starts_with("ClusterAuthorizedOperations int32 = -2147483648 (not requested)"));
    // Zero stays plain, as on the specification pages.
    f[0x0d..0x0f].copy_from_slice(&0i16.to_be_bytes());
    assert!(line(&f, "ErrorCode").starts_with("ErrorCode int16 = 0 [0x000d, 2B]"));
}

#[test]
fn wide_prints_descriptions_whole() {
    let f = vector("describe-cluster-v2-response.hex");
    let msg = decode_response(&f, 60, 2);
    let n = get(&msg, "ThrottleTimeMs");
    let short = tree::node_line(n, &f, Style::default());
    let wide = tree::node_line(
        n,
        &f,
        Style {
            wide: true,
            ..Style::default()
        },
    );
    assert!(short.ends_with("throttled due to a q..."), "{short}");
    assert!(wide.ends_with("did not violate any quota."), "{wide}");
}

/// The tree line of the node at `path`, without its description.
fn line_of(msg: &kdissect::kafka::Message, frame: &[u8], path: &str) -> String {
    let l = tree::node_line(get(msg, path), frame, Style::default());
    l.split(" [0x").next().unwrap_or_default().to_string()
}

/// ACL fields carry Kafka's names for their codes, in the tree and beside the number in JSON;
/// a code the enumeration lacks says so.
#[test]
fn acl_codes_are_named_in_the_tree_and_in_json() {
    use kafka_protocol::messages::create_acls_request::AclCreation;
    use kafka_protocol::messages::{ApiKey, CreateAclsRequest};
    use kafka_protocol::protocol::StrBytes;
    let acl = |op: i8| {
        AclCreation::default()
            .with_resource_type(2)
            .with_resource_name(StrBytes::from_static_str("orders"))
            .with_resource_pattern_type(4)
            .with_principal(StrBytes::from_static_str("User:alice"))
            .with_host(StrBytes::from_static_str("*"))
            .with_operation(op)
            .with_permission_type(3)
    };
    let body = CreateAclsRequest::default().with_creations(vec![acl(3), acl(99)]);
    let frame = common::kp::request(ApiKey::CreateAcls, 3, 5, &body);
    let msg = kdissect::kafka::decode_request(&frame);
    assert!(msg.is_clean(), "{:?} {:?}", msg.error, msg.diagnoses);
    common::assert_tiles(&msg);
    let at = |p: &str| line_of(&msg, &frame, &format!("Creations[0].{p}"));
    assert_eq!(at("ResourceType"), "ResourceType int8 = 2 (TOPIC)");
    assert_eq!(
        at("ResourcePatternType"),
        "ResourcePatternType int8 = 4 (PREFIXED)"
    );
    assert_eq!(at("Operation"), "Operation int8 = 3 (READ)");
    assert_eq!(at("PermissionType"), "PermissionType int8 = 3 (ALLOW)");
    assert_eq!(
        line_of(&msg, &frame, "Creations[1].Operation"),
        "Operation int8 = 99 (unknown AclOperation)"
    );
    let j = kdissect::render::json::message(&msg, &frame, &Default::default(), false);
    let c = &j["body"]["Creations"];
    assert_eq!(c[0]["ResourceType"], 2);
    assert_eq!(c[0]["ResourceType_name"], "TOPIC");
    assert_eq!(c[0]["ResourcePatternType_name"], "PREFIXED");
    assert_eq!(c[0]["Operation_name"], "READ");
    assert_eq!(c[0]["PermissionType_name"], "ALLOW");
    assert_eq!(c[1]["Operation"], 99);
    assert!(c[1]["Operation_name"].is_null());
    assert!(c[1]
        .as_object()
        .is_some_and(|o| o.contains_key("Operation_name")));
}

/// ListOffsets' timestamp names only its sentinels; a real timestamp stays a number.
#[test]
fn offset_spec_sentinels_are_named_and_timestamps_are_not() {
    use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
    use kafka_protocol::messages::{ApiKey, ListOffsetsRequest, TopicName};
    use kafka_protocol::protocol::StrBytes;
    let parts = [-1i64, -2, -3, 1_767_225_600_000]
        .iter()
        .enumerate()
        .map(|(i, t)| {
            ListOffsetsPartition::default()
                .with_partition_index(i as i32)
                .with_timestamp(*t)
        })
        .collect();
    let topic = ListOffsetsTopic::default()
        .with_name(TopicName(StrBytes::from_static_str("orders")))
        .with_partitions(parts);
    let body = ListOffsetsRequest::default()
        .with_isolation_level(1)
        .with_topics(vec![topic]);
    let frame = common::kp::request(ApiKey::ListOffsets, 9, 1, &body);
    let msg = kdissect::kafka::decode_request(&frame);
    assert!(msg.is_clean(), "{:?}", msg.error);
    assert_eq!(
        line_of(&msg, &frame, "IsolationLevel"),
        "IsolationLevel int8 = 1 (READ_COMMITTED)"
    );
    let ts = |i: usize| {
        line_of(
            &msg,
            &frame,
            &format!("Topics[0].Partitions[{i}].Timestamp"),
        )
    };
    assert_eq!(ts(0), "Timestamp int64 = -1 (LATEST)");
    assert_eq!(ts(1), "Timestamp int64 = -2 (EARLIEST)");
    assert_eq!(ts(2), "Timestamp int64 = -3 (MAX_TIMESTAMP)");
    assert_eq!(ts(3), "Timestamp int64 = 1767225600000");
    let j = kdissect::render::json::message(&msg, &frame, &Default::default(), false);
    let p = &j["body"]["Topics"][0]["Partitions"];
    assert_eq!(p[0]["Timestamp_name"], "LATEST");
    assert!(p[3].get("Timestamp_name").is_none(), "{}", p[3]);
}

/// On a real capture (Java Admin against Kafka 4.4): the config entries of a DescribeConfigs
/// answer name their sources and types, and IncrementalAlterConfigs its operations.
#[test]
fn config_sources_types_and_operations_are_named_in_a_real_capture() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(["--json", "samples/ak44-admin.pcap"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run");
    let mut seen = std::collections::BTreeSet::new();
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        let j: serde_json::Value = serde_json::from_str(l).expect("json");
        let api = j["api_name"].as_str().unwrap_or_default().to_string();
        walk(&j["body"], &mut |k, v, o| {
            if let Some(base) = k.strip_suffix("_name") {
                if [
                    "ConfigSource",
                    "ConfigType",
                    "ConfigOperation",
                    "ResourceType",
                ]
                .contains(&base)
                {
                    assert!(o[base].is_i64(), "{api}: {k} beside {}", o[base]);
                    seen.insert(format!("{api}.{base}={}", v.as_str().unwrap_or("null")));
                }
            }
        });
    }
    for want in [
        "DescribeConfigs.ConfigSource=DEFAULT_CONFIG",
        "DescribeConfigs.ConfigSource=TOPIC_CONFIG",
        "DescribeConfigs.ConfigType=LONG",
        "DescribeConfigs.ResourceType=TOPIC",
        "IncrementalAlterConfigs.ConfigOperation=SET",
        "IncrementalAlterConfigs.ConfigOperation=DELETE",
    ] {
        assert!(seen.contains(want), "{want} not in {seen:?}");
    }
}

/// Calls `f(key, value, object)` for every key of every object under `v`.
fn walk(v: &serde_json::Value, f: &mut impl FnMut(&str, &serde_json::Value, &serde_json::Value)) {
    match v {
        serde_json::Value::Object(o) => {
            for (k, x) in o {
                f(k, x, v);
                walk(x, f);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, f)),
        _ => {}
    }
}
