//! Wireshark's field names, accepted beside kdissect's own: `kafka.api_key`, `frame.number`,
//! `tcp.stream`, ... so that a tshark filter or field list works as written. Each name maps
//! to a built-in field, a schema path, or schema fields by name at any depth (Wireshark
//! shows `kafka.producer_id` wherever a producer id is, whatever the API).
//!
//! Fields Wireshark reads inside record batches (`kafka.message_key`, `kafka.batch_*`) have
//! no equivalent here: a filter reads a message's fields, not its records.

use super::fields::{api_specs, kind_of, path, Builtin, FieldRef, Kind, NamedField};
use super::parser::FieldName;
use super::suggest::{did_you_mean, nearest};
use super::FilterError;
use crate::kafka::names::API_NAMES;
use crate::kafka::schema::{Direction, FieldSpec};

/// How `-T fields` writes a field's values, where Wireshark writes them its own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Render {
    /// As kdissect writes them (times in RFC 3339).
    #[default]
    Plain,
    /// `Nov 30, 2026 12:43:08.833958000 UTC`, as tshark writes `frame.time` (here in UTC).
    FrameTime,
    /// Seconds since 1970 with nine decimals, as `frame.time_epoch`.
    Epoch,
}

/// What a Wireshark name stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Builtin(Builtin),
    /// A built-in field, in messages of one direction only.
    Only(Direction, Builtin),
    /// Schema fields by name.
    Named(NamedField),
    /// A schema path, as `-Y` takes it.
    Path(&'static str),
    /// The protocol: `kafka` alone, every Kafka message (tshark's `-Y kafka`).
    Protocol,
}

/// One Wireshark name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Alias {
    pub name: &'static str,
    pub target: Target,
    pub render: Render,
}

const fn b(name: &'static str, b: Builtin) -> Alias {
    Alias {
        name,
        target: Target::Builtin(b),
        render: Render::Plain,
    }
}

const fn only(name: &'static str, dir: Direction, b: Builtin) -> Alias {
    Alias {
        name,
        target: Target::Only(dir, b),
        render: Render::Plain,
    }
}

const fn named(name: &'static str, names: &'static [&'static str]) -> Alias {
    Alias {
        name,
        target: Target::Named(NamedField { names, api: None }),
        render: Render::Plain,
    }
}

const fn named_in(name: &'static str, api: i16, names: &'static [&'static str]) -> Alias {
    Alias {
        name,
        target: Target::Named(NamedField {
            names,
            api: Some(api),
        }),
        render: Render::Plain,
    }
}

const fn p(name: &'static str, path: &'static str) -> Alias {
    Alias {
        name,
        target: Target::Path(path),
        render: Render::Plain,
    }
}

const fn time(name: &'static str, render: Render) -> Alias {
    Alias {
        name,
        target: Target::Builtin(Builtin::Time),
        render,
    }
}

use Direction::{Request as Q, Response as R};

/// Every Wireshark name kdissect knows (tshark 4.0's `kafka.*` fields that have an
/// equivalent, and the frame, TCP and IP fields a Kafka filter uses).
pub const ALIASES: &[Alias] = &[
    Alias {
        name: "kafka",
        target: Target::Protocol,
        render: Render::Plain,
    },
    b("frame.number", Builtin::Frame),
    time("frame.time", Render::FrameTime),
    time("frame.time_epoch", Render::Epoch),
    b("frame.time_relative", Builtin::TimeRelative),
    b("tcp.stream", Builtin::Stream),
    b("tcp.port", Builtin::Port),
    b("tcp.srcport", Builtin::SrcPort),
    b("tcp.dstport", Builtin::DstPort),
    b("ip.src", Builtin::SrcIp),
    b("ip.dst", Builtin::DstIp),
    b("ipv6.src", Builtin::SrcIp),
    b("ipv6.dst", Builtin::DstIp),
    b("kafka.api_key", Builtin::Api),
    b("kafka.api_version", Builtin::Version),
    only("kafka.request_key", Q, Builtin::Api),
    only("kafka.response_key", R, Builtin::Api),
    only("kafka.request.version", Q, Builtin::Version),
    only("kafka.response.version", R, Builtin::Version),
    b("kafka.correlation_id", Builtin::Corr),
    b("kafka.client_id", Builtin::ClientId),
    b("kafka.topic_name", Builtin::Topic),
    b("kafka.partition_id", Builtin::Partition),
    b("kafka.error", Builtin::Error),
    b("kafka.request_frame", Builtin::RequestFrame),
    b("kafka.response_frame", Builtin::ResponseFrame),
    p(
        "kafka.api_versions.api_key",
        "ApiVersions.ApiKeys[*].ApiKey",
    ),
    p(
        "kafka.api_versions.min_version",
        "ApiVersions.ApiKeys[*].MinVersion",
    ),
    p(
        "kafka.api_versions.max_version",
        "ApiVersions.ApiKeys[*].MaxVersion",
    ),
    p(
        "kafka.forgotten_topic_name",
        "Fetch.ForgottenTopicsData[*].Topic",
    ),
    named("kafka.error_message", &["ErrorMessage"]),
    named("kafka.throttle_time", &["ThrottleTimeMs"]),
    named("kafka.required_acks", &["Acks"]),
    named("kafka.timeout", &["TimeoutMs"]),
    named("kafka.transactional_id", &["TransactionalId"]),
    named(
        "kafka.transaction_result",
        &["TransactionResult", "Committed"],
    ),
    named("kafka.transaction_timeout", &["TransactionTimeoutMs"]),
    named("kafka.producer_id", &["ProducerId"]),
    named("kafka.producer_epoch", &["ProducerEpoch"]),
    named(
        "kafka.replica_id",
        &["ReplicaId", "Replicas", "ReplicaNodes"],
    ),
    named("kafka.isr_id", &["IsrNodes"]),
    named("kafka.offline_id", &["OfflineReplicas"]),
    named("kafka.replication_factor", &["ReplicationFactor"]),
    named("kafka.num_partitions", &["NumPartitions"]),
    named("kafka.log_start_offset", &["LogStartOffset"]),
    named("kafka.last_stable_offset", &["LastStableOffset"]),
    named("kafka.metadata", &["CommittedMetadata"]),
    named("kafka.consumer_group", &["GroupId"]),
    named("kafka.consumer_group_instance", &["GroupInstanceId"]),
    named_in("kafka.coordinator_key", 10, &["Key", "CoordinatorKeys"]),
    named_in("kafka.coordinator_type", 10, &["KeyType"]),
    named("kafka.node_id", &["NodeId", "BrokerId"]),
    named("kafka.broker_epoch", &["BrokerEpoch"]),
    named("kafka.host", &["Host"]),
    named("kafka.port", &["Port"]),
    named("kafka.rack", &["Rack"]),
    named("kafka.listener_name", &["Listener"]),
    named("kafka.cluster_id", &["ClusterId"]),
    named("kafka.controller_epoch", &["ControllerEpoch"]),
    named("kafka.leader_id", &["LeaderId"]),
    named("kafka.leader_epoch", &["LeaderEpoch"]),
    named("kafka.current_leader_epoch", &["CurrentLeaderEpoch"]),
    named("kafka.is_internal", &["IsInternal"]),
    named("kafka.min_bytes", &["MinBytes"]),
    named("kafka.max_bytes", &["MaxBytes"]),
    named("kafka.max_wait_time", &["MaxWaitMs"]),
    named("kafka.isolation_level", &["IsolationLevel"]),
    named_in("kafka.fetch_session_id", 1, &["SessionId"]),
    named_in("kafka.fetch_session_epoch", 1, &["SessionEpoch"]),
    named("kafka.session_timeout", &["SessionTimeoutMs"]),
    named("kafka.rebalance_timeout", &["RebalanceTimeoutMs"]),
    named("kafka.group_state", &["GroupState"]),
    named("kafka.member_id", &["MemberId"]),
    named("kafka.protocol_type", &["ProtocolType"]),
    named("kafka.protocol_name", &["ProtocolName"]),
    named("kafka.generation_id", &["GenerationId"]),
    named("kafka.sasl_mechanism", &["Mechanism", "Mechanisms"]),
    named("kafka.sasl_authentication", &["AuthBytes"]),
    named("kafka.session_lifetime_ms", &["SessionLifetimeMs"]),
    named("kafka.retention_time", &["RetentionTimeMs"]),
    named("kafka.require_stable_offset", &["RequireStable"]),
    named(
        "kafka.allow_auto_topic_creation",
        &["AllowAutoTopicCreation"],
    ),
    named("kafka.validate_only", &["ValidateOnly"]),
    named("kafka.coordinator_epoch", &["CoordinatorEpoch"]),
    named(
        "kafka.acl_resource_type",
        &["ResourceType", "ResourceTypeFilter"],
    ),
    named(
        "kafka.acl_resource_name",
        &["ResourceName", "ResourceNameFilter"],
    ),
    named(
        "kafka.acl_resource_pattern_type",
        &["PatternType", "ResourcePatternType", "PatternTypeFilter"],
    ),
    named("kafka.acl_principal", &["Principal", "PrincipalFilter"]),
    named("kafka.acl_host", &["Host", "HostFilter"]),
    named("kafka.acl_operation", &["Operation"]),
    named("kafka.acl_permission_type", &["PermissionType"]),
    named("kafka.config_resource_type", &["ResourceType"]),
    named("kafka.config_resource_name", &["ResourceName"]),
    named("kafka.config_include_synonyms", &["IncludeSynonyms"]),
    named("kafka.config_source", &["ConfigSource"]),
    named("kafka.config_readonly", &["ReadOnly"]),
    named("kafka.config_sensitive", &["IsSensitive"]),
    named("kafka.config_default", &["IsDefault"]),
    named("kafka.config_operation", &["ConfigOperation"]),
    named("kafka.log_dir", &["LogDir"]),
    named("kafka.offset_lag", &["OffsetLag"]),
    named("kafka.future", &["IsFutureKey"]),
    named_in("kafka.partition_count", 37, &["Count"]),
    named("kafka.token_max_life_time", &["MaxLifetimeMs"]),
    named("kafka.principal_type", &["PrincipalType"]),
    named("kafka.principal_name", &["PrincipalName"]),
    named(
        "kafka.token_issue_timestamp",
        &["IssueTimestampMs", "IssueTimestamp"],
    ),
    named(
        "kafka.token_expiry_timestamp",
        &["ExpiryTimestampMs", "ExpiryTimestamp"],
    ),
    named(
        "kafka.token_max_timestamp",
        &["MaxTimestampMs", "MaxTimestamp"],
    ),
    named("kafka.token_id", &["TokenId"]),
    named("kafka.token_hmac", &["Hmac"]),
    named(
        "kafka.include_cluster_authorized_ops",
        &["IncludeClusterAuthorizedOperations"],
    ),
    named(
        "kafka.include_topic_authorized_ops",
        &["IncludeTopicAuthorizedOperations"],
    ),
    named_in(
        "kafka.include_group_authorized_ops",
        15,
        &["IncludeAuthorizedOperations"],
    ),
    named(
        "kafka.cluster_authorized_ops",
        &["ClusterAuthorizedOperations"],
    ),
    named("kafka.topic_authorized_ops", &["TopicAuthorizedOperations"]),
    named_in("kafka.group_authorized_ops", 15, &["AuthorizedOperations"]),
    named("kafka.election_type", &["ElectionType"]),
    named("kafka.client_software_name", &["ClientSoftwareName"]),
    named("kafka.client_software_version", &["ClientSoftwareVersion"]),
    named("kafka.client_host", &["ClientHost"]),
    named("kafka.zk_version", &["ZkVersion"]),
    named("kafka.delete_partitions", &["DeletePartitions"]),
    named("kafka.max_offsets", &["MaxNumOffsets"]),
    named_in("kafka.offset_time", 2, &["Timestamp"]),
];

/// The alias of this name.
pub fn find(name: &str) -> Option<&'static Alias> {
    ALIASES.iter().find(|a| a.name == name)
}

/// The prefixes of Wireshark names: a name that starts with one is no kdissect path.
const PROTOCOLS: &[&str] = &["kafka.", "frame.", "tcp.", "ip.", "ipv6."];

/// For a Wireshark-looking name kdissect does not know: the message, with the nearest names.
pub(crate) fn near_miss(name: &str) -> Option<String> {
    PROTOCOLS.iter().find(|p| name.starts_with(**p))?;
    let hint = did_you_mean(&nearest(name, ALIASES.iter().map(|a| a.name)));
    Some(format!(
        "`{name}` is not a Wireshark field kdissect knows{hint} (`kdissect help filters` lists them)"
    ))
}

/// The compiled field and its kinds.
pub(crate) fn resolve(a: &Alias, name: &FieldName) -> Result<(FieldRef, Vec<Kind>), FilterError> {
    Ok(match a.target {
        Target::Builtin(b) => (FieldRef::Builtin(b), vec![b.kind()]),
        Target::Only(dir, b) => (
            FieldRef::Only(dir, Box::new(FieldRef::Builtin(b))),
            vec![b.kind()],
        ),
        Target::Named(n) => (FieldRef::Named(n), named_kinds(&n)),
        Target::Path(text) => path(&FieldName {
            text: text.to_string(),
            column: name.column,
        })?,
        Target::Protocol => (FieldRef::Protocol, vec![Kind::Protocol]),
    })
}

/// The kinds of the schema fields a name stands for, over every API it may be in.
pub(crate) fn named_kinds(n: &NamedField) -> Vec<Kind> {
    let keys: Vec<i16> = match n.api {
        Some(k) => vec![k],
        None => API_NAMES.iter().map(|(k, _)| *k).collect(),
    };
    let mut kinds = Vec::new();
    for key in keys {
        for spec in api_specs(key) {
            collect(spec.fields, n.names, &mut kinds);
        }
    }
    if kinds.is_empty() {
        kinds.push(Kind::Struct);
    }
    kinds
}

fn collect(fields: &'static [FieldSpec], names: &[&str], out: &mut Vec<Kind>) {
    for f in fields {
        if names.contains(&f.name) {
            let k = kind_of(f);
            if !out.contains(&k) {
                out.push(k);
            }
        }
        collect(f.fields, names, out);
    }
}

/// What an alias is, in a few words, for `kdissect help filters`.
pub fn describe(a: &Alias) -> String {
    match a.target {
        Target::Builtin(b) => format!("`{b}`"),
        Target::Only(Direction::Request, b) => format!("`{b}` of requests"),
        Target::Only(Direction::Response, b) => format!("`{b}` of responses"),
        Target::Path(p) => format!("`{p}`"),
        Target::Protocol => "every Kafka message (as tshark's `-Y kafka`)".to_string(),
        Target::Named(n) => {
            let names: Vec<String> = n.names.iter().map(|x| format!("`{x}`")).collect();
            let api = n
                .api
                .and_then(|k| API_NAMES.iter().find(|(key, _)| *key == k))
                .map(|(_, name)| format!(" in {name}"))
                .unwrap_or_default();
            format!("any {}{api}", names.join(" or "))
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Every alias resolves to fields the tables have: a name that no schema field has would
    /// be a field with no value, ever.
    #[test]
    fn every_alias_names_real_fields() {
        let mut seen = std::collections::HashSet::new();
        for a in ALIASES {
            assert!(seen.insert(a.name), "{} twice", a.name);
            let name = FieldName {
                text: a.name.to_string(),
                column: 1,
            };
            let (f, kinds) = resolve(a, &name).unwrap_or_else(|e| panic!("{}: {e}", a.name));
            if let FieldRef::Named(n) = f {
                assert_ne!(
                    kinds,
                    vec![Kind::Struct],
                    "{}: no schema field {:?}",
                    a.name,
                    n
                );
                for want in n.names {
                    let one = NamedField {
                        names: std::slice::from_ref(want),
                        api: n.api,
                    };
                    assert_ne!(
                        named_kinds(&one),
                        vec![Kind::Struct],
                        "{}: no schema field {want}",
                        a.name
                    );
                }
            }
        }
    }

    #[test]
    fn wireshark_looking_names_that_are_unknown_say_so() {
        let m = near_miss("kafka.api_kee").unwrap();
        assert!(m.contains("did you mean `kafka.api_key`"), "{m}");
        assert!(near_miss("Metadata.Topics").is_none());
    }
}
