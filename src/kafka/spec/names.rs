//! Names for the numbers on the wire: API keys, error codes, and the enumerations the tables
//! name (ACL operations and resource types, config sources, isolation levels...).

/// Every API key of current Apache Kafka, with its name.
pub const API_NAMES: &[(i16, &str)] = &[
    (0, "Produce"),
    (1, "Fetch"),
    (2, "ListOffsets"),
    (3, "Metadata"),
    (4, "LeaderAndIsr"),
    (5, "StopReplica"),
    (6, "UpdateMetadata"),
    (7, "ControlledShutdown"),
    (8, "OffsetCommit"),
    (9, "OffsetFetch"),
    (10, "FindCoordinator"),
    (11, "JoinGroup"),
    (12, "Heartbeat"),
    (13, "LeaveGroup"),
    (14, "SyncGroup"),
    (15, "DescribeGroups"),
    (16, "ListGroups"),
    (17, "SaslHandshake"),
    (18, "ApiVersions"),
    (19, "CreateTopics"),
    (20, "DeleteTopics"),
    (21, "DeleteRecords"),
    (22, "InitProducerId"),
    (23, "OffsetForLeaderEpoch"),
    (24, "AddPartitionsToTxn"),
    (25, "AddOffsetsToTxn"),
    (26, "EndTxn"),
    (27, "WriteTxnMarkers"),
    (28, "TxnOffsetCommit"),
    (29, "DescribeAcls"),
    (30, "CreateAcls"),
    (31, "DeleteAcls"),
    (32, "DescribeConfigs"),
    (33, "AlterConfigs"),
    (34, "AlterReplicaLogDirs"),
    (35, "DescribeLogDirs"),
    (36, "SaslAuthenticate"),
    (37, "CreatePartitions"),
    (38, "CreateDelegationToken"),
    (39, "RenewDelegationToken"),
    (40, "ExpireDelegationToken"),
    (41, "DescribeDelegationToken"),
    (42, "DeleteGroups"),
    (43, "ElectLeaders"),
    (44, "IncrementalAlterConfigs"),
    (45, "AlterPartitionReassignments"),
    (46, "ListPartitionReassignments"),
    (47, "OffsetDelete"),
    (48, "DescribeClientQuotas"),
    (49, "AlterClientQuotas"),
    (50, "DescribeUserScramCredentials"),
    (51, "AlterUserScramCredentials"),
    (52, "Vote"),
    (53, "BeginQuorumEpoch"),
    (54, "EndQuorumEpoch"),
    (55, "DescribeQuorum"),
    (56, "AlterPartition"),
    (57, "UpdateFeatures"),
    (58, "Envelope"),
    (59, "FetchSnapshot"),
    (60, "DescribeCluster"),
    (61, "DescribeProducers"),
    (62, "BrokerRegistration"),
    (63, "BrokerHeartbeat"),
    (64, "UnregisterBroker"),
    (65, "DescribeTransactions"),
    (66, "ListTransactions"),
    (67, "AllocateProducerIds"),
    (68, "ConsumerGroupHeartbeat"),
    (69, "ConsumerGroupDescribe"),
    (70, "ControllerRegistration"),
    (71, "GetTelemetrySubscriptions"),
    (72, "PushTelemetry"),
    (73, "AssignReplicasToDirs"),
    (74, "ListConfigResources"),
    (75, "DescribeTopicPartitions"),
    (76, "ShareGroupHeartbeat"),
    (77, "ShareGroupDescribe"),
    (78, "ShareFetch"),
    (79, "ShareAcknowledge"),
    (80, "AddRaftVoter"),
    (81, "RemoveRaftVoter"),
    (82, "UpdateRaftVoter"),
    (83, "InitializeShareGroupState"),
    (84, "ReadShareGroupState"),
    (85, "WriteShareGroupState"),
    (86, "DeleteShareGroupState"),
    (87, "ReadShareGroupStateSummary"),
    (88, "StreamsGroupHeartbeat"),
    (89, "StreamsGroupDescribe"),
    (90, "DescribeShareGroupOffsets"),
    (91, "AlterShareGroupOffsets"),
    (92, "DeleteShareGroupOffsets"),
    (93, "StreamsGroupTopologyDescriptionUpdate"),
    (94, "UnregisterController"),
];

/// Kafka error codes (`Errors.java`).
pub const ERROR_NAMES: &[(i16, &str)] = &[
    (-1, "UNKNOWN_SERVER_ERROR"),
    (0, "NONE"),
    (1, "OFFSET_OUT_OF_RANGE"),
    (2, "CORRUPT_MESSAGE"),
    (3, "UNKNOWN_TOPIC_OR_PARTITION"),
    (4, "INVALID_FETCH_SIZE"),
    (5, "LEADER_NOT_AVAILABLE"),
    (6, "NOT_LEADER_OR_FOLLOWER"),
    (7, "REQUEST_TIMED_OUT"),
    (8, "BROKER_NOT_AVAILABLE"),
    (9, "REPLICA_NOT_AVAILABLE"),
    (10, "MESSAGE_TOO_LARGE"),
    (11, "STALE_CONTROLLER_EPOCH"),
    (12, "OFFSET_METADATA_TOO_LARGE"),
    (13, "NETWORK_EXCEPTION"),
    (14, "COORDINATOR_LOAD_IN_PROGRESS"),
    (15, "COORDINATOR_NOT_AVAILABLE"),
    (16, "NOT_COORDINATOR"),
    (17, "INVALID_TOPIC_EXCEPTION"),
    (18, "RECORD_LIST_TOO_LARGE"),
    (19, "NOT_ENOUGH_REPLICAS"),
    (20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND"),
    (21, "INVALID_REQUIRED_ACKS"),
    (22, "ILLEGAL_GENERATION"),
    (23, "INCONSISTENT_GROUP_PROTOCOL"),
    (24, "INVALID_GROUP_ID"),
    (25, "UNKNOWN_MEMBER_ID"),
    (26, "INVALID_SESSION_TIMEOUT"),
    (27, "REBALANCE_IN_PROGRESS"),
    (28, "INVALID_COMMIT_OFFSET_SIZE"),
    (29, "TOPIC_AUTHORIZATION_FAILED"),
    (30, "GROUP_AUTHORIZATION_FAILED"),
    (31, "CLUSTER_AUTHORIZATION_FAILED"),
    (32, "INVALID_TIMESTAMP"),
    (33, "UNSUPPORTED_SASL_MECHANISM"),
    (34, "ILLEGAL_SASL_STATE"),
    (35, "UNSUPPORTED_VERSION"),
    (36, "TOPIC_ALREADY_EXISTS"),
    (37, "INVALID_PARTITIONS"),
    (38, "INVALID_REPLICATION_FACTOR"),
    (39, "INVALID_REPLICA_ASSIGNMENT"),
    (40, "INVALID_CONFIG"),
    (41, "NOT_CONTROLLER"),
    (42, "INVALID_REQUEST"),
    (43, "UNSUPPORTED_FOR_MESSAGE_FORMAT"),
    (44, "POLICY_VIOLATION"),
    (45, "OUT_OF_ORDER_SEQUENCE_NUMBER"),
    (46, "DUPLICATE_SEQUENCE_NUMBER"),
    (47, "INVALID_PRODUCER_EPOCH"),
    (48, "INVALID_TXN_STATE"),
    (49, "INVALID_PRODUCER_ID_MAPPING"),
    (50, "INVALID_TRANSACTION_TIMEOUT"),
    (51, "CONCURRENT_TRANSACTIONS"),
    (52, "TRANSACTION_COORDINATOR_FENCED"),
    (53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"),
    (54, "SECURITY_DISABLED"),
    (55, "OPERATION_NOT_ATTEMPTED"),
    (56, "KAFKA_STORAGE_ERROR"),
    (57, "LOG_DIR_NOT_FOUND"),
    (58, "SASL_AUTHENTICATION_FAILED"),
    (59, "UNKNOWN_PRODUCER_ID"),
    (60, "REASSIGNMENT_IN_PROGRESS"),
    (61, "DELEGATION_TOKEN_AUTH_DISABLED"),
    (62, "DELEGATION_TOKEN_NOT_FOUND"),
    (63, "DELEGATION_TOKEN_OWNER_MISMATCH"),
    (64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED"),
    (65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED"),
    (66, "DELEGATION_TOKEN_EXPIRED"),
    (67, "INVALID_PRINCIPAL_TYPE"),
    (68, "NON_EMPTY_GROUP"),
    (69, "GROUP_ID_NOT_FOUND"),
    (70, "FETCH_SESSION_ID_NOT_FOUND"),
    (71, "INVALID_FETCH_SESSION_EPOCH"),
    (72, "LISTENER_NOT_FOUND"),
    (73, "TOPIC_DELETION_DISABLED"),
    (74, "FENCED_LEADER_EPOCH"),
    (75, "UNKNOWN_LEADER_EPOCH"),
    (76, "UNSUPPORTED_COMPRESSION_TYPE"),
    (77, "STALE_BROKER_EPOCH"),
    (78, "OFFSET_NOT_AVAILABLE"),
    (79, "MEMBER_ID_REQUIRED"),
    (80, "PREFERRED_LEADER_NOT_AVAILABLE"),
    (81, "GROUP_MAX_SIZE_REACHED"),
    (82, "FENCED_INSTANCE_ID"),
    (83, "ELIGIBLE_LEADERS_NOT_AVAILABLE"),
    (84, "ELECTION_NOT_NEEDED"),
    (85, "NO_REASSIGNMENT_IN_PROGRESS"),
    (86, "GROUP_SUBSCRIBED_TO_TOPIC"),
    (87, "INVALID_RECORD"),
    (88, "UNSTABLE_OFFSET_COMMIT"),
    (89, "THROTTLING_QUOTA_EXCEEDED"),
    (90, "PRODUCER_FENCED"),
    (91, "RESOURCE_NOT_FOUND"),
    (92, "DUPLICATE_RESOURCE"),
    (93, "UNACCEPTABLE_CREDENTIAL"),
    (94, "INCONSISTENT_VOTER_SET"),
    (95, "INVALID_UPDATE_VERSION"),
    (96, "FEATURE_UPDATE_FAILED"),
    (97, "PRINCIPAL_DESERIALIZATION_FAILURE"),
    (98, "SNAPSHOT_NOT_FOUND"),
    (99, "POSITION_OUT_OF_RANGE"),
    (100, "UNKNOWN_TOPIC_ID"),
    (101, "DUPLICATE_BROKER_REGISTRATION"),
    (102, "BROKER_ID_NOT_REGISTERED"),
    (103, "INCONSISTENT_TOPIC_ID"),
    (104, "INCONSISTENT_CLUSTER_ID"),
    (105, "TRANSACTIONAL_ID_NOT_FOUND"),
    (106, "FETCH_SESSION_TOPIC_ID_ERROR"),
    (107, "INELIGIBLE_REPLICA"),
    (108, "NEW_LEADER_ELECTED"),
    (109, "OFFSET_MOVED_TO_TIERED_STORAGE"),
    (110, "FENCED_MEMBER_EPOCH"),
    (111, "UNRELEASED_INSTANCE_ID"),
    (112, "UNSUPPORTED_ASSIGNOR"),
    (113, "STALE_MEMBER_EPOCH"),
    (114, "MISMATCHED_ENDPOINT_TYPE"),
    (115, "UNSUPPORTED_ENDPOINT_TYPE"),
    (116, "UNKNOWN_CONTROLLER_ID"),
    (117, "UNKNOWN_SUBSCRIPTION_ID"),
    (118, "TELEMETRY_TOO_LARGE"),
    (119, "INVALID_REGISTRATION"),
    (120, "TRANSACTION_ABORTABLE"),
    (121, "INVALID_RECORD_STATE"),
    (122, "SHARE_SESSION_NOT_FOUND"),
    (123, "INVALID_SHARE_SESSION_EPOCH"),
    (124, "FENCED_STATE_EPOCH"),
    (125, "INVALID_VOTER_KEY"),
    (126, "DUPLICATE_VOTER"),
    (127, "VOTER_NOT_FOUND"),
    (128, "INVALID_REGULAR_EXPRESSION"),
    (129, "REBOOTSTRAP_REQUIRED"),
    (130, "STREAMS_INVALID_TOPOLOGY"),
    (131, "STREAMS_INVALID_TOPOLOGY_EPOCH"),
    (132, "STREAMS_TOPOLOGY_FENCED"),
    (133, "SHARE_SESSION_LIMIT_REACHED"),
    (134, "GROUP_DELETION_FAILED"),
    (135, "STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED"),
    (136, "CONTROLLER_ID_NOT_REGISTERED"),
];

/// Kafka's `AclOperation` codes; an authorized-operations bitfield sets bit N for code N.
pub const ACL_OPERATIONS: &[(i64, &str)] = &[
    (0, "UNKNOWN"),
    (1, "ANY"),
    (2, "ALL"),
    (3, "READ"),
    (4, "WRITE"),
    (5, "CREATE"),
    (6, "DELETE"),
    (7, "ALTER"),
    (8, "DESCRIBE"),
    (9, "CLUSTER_ACTION"),
    (10, "DESCRIBE_CONFIGS"),
    (11, "ALTER_CONFIGS"),
    (12, "IDEMPOTENT_WRITE"),
    (13, "CREATE_TOKENS"),
    (14, "DESCRIBE_TOKENS"),
    (15, "TWO_PHASE_COMMIT"),
];

/// An integer of the protocol whose values have names (a resource type, an isolation level):
/// which fields carry one is said by the tables (`"enum": NAME`, from schema-src/enums.json).
#[derive(Debug, PartialEq, Eq)]
pub struct Enum {
    /// The name the tables use: `AclResourceType`.
    pub name: &'static str,
    /// Each value with the name of Kafka's Java constant for it (as `kafka-acls`,
    /// `kafka-configs` and the Admin client print them).
    pub values: &'static [(i64, &'static str)],
    /// Only the listed values are special (ListOffsets' timestamps): any other is a plain
    /// number, not an unknown value.
    pub sentinels: bool,
}

impl Enum {
    /// The name of `value`, if it has one.
    pub fn name_of(&self, value: i64) -> Option<&'static str> {
        self.values
            .iter()
            .find(|(v, _)| *v == value)
            .map(|(_, n)| *n)
    }
}

const fn closed(name: &'static str, values: &'static [(i64, &'static str)]) -> Enum {
    Enum {
        name,
        values,
        sentinels: false,
    }
}

/// Every enumeration the tables name. The values are Kafka 4.4's (checked against its
/// classes); where Wireshark's Kafka dissector labels the same codes (ACLs, config sources
/// and operations, isolation levels, coordinator types, election types, acks), its labels
/// are these words in title case.
pub const ENUMS: &[Enum] = &[
    closed("AclOperation", ACL_OPERATIONS),
    // org.apache.kafka.common.resource.ResourceType: what an ACL protects.
    closed(
        "AclResourceType",
        &[
            (0, "UNKNOWN"),
            (1, "ANY"),
            (2, "TOPIC"),
            (3, "GROUP"),
            (4, "CLUSTER"),
            (5, "TRANSACTIONAL_ID"),
            (6, "DELEGATION_TOKEN"),
            (7, "USER"),
        ],
    ),
    closed(
        "PatternType",
        &[
            (0, "UNKNOWN"),
            (1, "ANY"),
            (2, "MATCH"),
            (3, "LITERAL"),
            (4, "PREFIXED"),
        ],
    ),
    closed(
        "AclPermissionType",
        &[(0, "UNKNOWN"), (1, "ANY"), (2, "DENY"), (3, "ALLOW")],
    ),
    // ConfigResource.Type: what a config belongs to (not the ACL resource types).
    closed(
        "ConfigResourceType",
        &[
            (0, "UNKNOWN"),
            (2, "TOPIC"),
            (4, "BROKER"),
            (8, "BROKER_LOGGER"),
            (16, "CLIENT_METRICS"),
            (32, "GROUP"),
        ],
    ),
    // AlterConfigOp.OpType, IncrementalAlterConfigs' operation on one config.
    closed(
        "ConfigOperation",
        &[(0, "SET"), (1, "DELETE"), (2, "APPEND"), (3, "SUBTRACT")],
    ),
    closed(
        "ConfigSource",
        &[
            (0, "UNKNOWN"),
            (1, "TOPIC_CONFIG"),
            (2, "DYNAMIC_BROKER_CONFIG"),
            (3, "DYNAMIC_DEFAULT_BROKER_CONFIG"),
            (4, "STATIC_BROKER_CONFIG"),
            (5, "DEFAULT_CONFIG"),
            (6, "DYNAMIC_BROKER_LOGGER_CONFIG"),
            (7, "CLIENT_METRICS_CONFIG"),
            (8, "GROUP_CONFIG"),
        ],
    ),
    closed(
        "ConfigType",
        &[
            (0, "UNKNOWN"),
            (1, "BOOLEAN"),
            (2, "STRING"),
            (3, "INT"),
            (4, "SHORT"),
            (5, "LONG"),
            (6, "DOUBLE"),
            (7, "LIST"),
            (8, "CLASS"),
            (9, "PASSWORD"),
        ],
    ),
    closed(
        "IsolationLevel",
        &[(0, "READ_UNCOMMITTED"), (1, "READ_COMMITTED")],
    ),
    // FindCoordinator's KeyType.
    closed(
        "CoordinatorType",
        &[(0, "GROUP"), (1, "TRANSACTION"), (2, "SHARE")],
    ),
    // Produce's acks, as the producer's `acks` setting names them.
    closed("Acks", &[(-1, "ALL"), (0, "NONE"), (1, "LEADER")]),
    closed("ElectionType", &[(0, "PREFERRED"), (1, "UNCLEAN")]),
    closed(
        "EndpointType",
        &[(0, "UNKNOWN"), (1, "BROKER"), (2, "CONTROLLER")],
    ),
    closed(
        "ScramMechanism",
        &[(0, "UNKNOWN"), (1, "SCRAM_SHA_256"), (2, "SCRAM_SHA_512")],
    ),
    // FeatureUpdate.UpgradeType.
    closed(
        "UpgradeType",
        &[
            (0, "UNKNOWN"),
            (1, "UPGRADE"),
            (2, "SAFE_DOWNGRADE"),
            (3, "UNSAFE_DOWNGRADE"),
        ],
    ),
    // DescribeClientQuotas' component match: an exact entity name, the default, or any.
    closed(
        "QuotaMatchType",
        &[(0, "EXACT"), (1, "DEFAULT"), (2, "SPECIFIED")],
    ),
    // -1 in a change record means no change.
    closed(
        "LeaderRecoveryState",
        &[(-1, "NO_CHANGE"), (0, "RECOVERED"), (1, "RECOVERING")],
    ),
    // BrokerRegistrationChangeRecord: what changed about a broker's fencing and shutdown.
    closed(
        "FencingChange",
        &[(-1, "UNFENCED"), (0, "NO_CHANGE"), (1, "FENCED")],
    ),
    closed(
        "ControlledShutdownChange",
        &[(0, "NO_CHANGE"), (1, "IN_CONTROLLED_SHUTDOWN")],
    ),
    // The codecs' numbers as record batch attributes use them.
    closed(
        "CompressionType",
        &[
            (0, "NONE"),
            (1, "GZIP"),
            (2, "SNAPPY"),
            (3, "LZ4"),
            (4, "ZSTD"),
        ],
    ),
    // The key of a control record (ControlRecordType): a transaction's end, or one of KRaft's
    // own records in the metadata log.
    closed(
        "ControlRecordType",
        &[
            (0, "ABORT"),
            (1, "COMMIT"),
            (2, "LEADER_CHANGE"),
            (3, "SNAPSHOT_HEADER"),
            (4, "SNAPSHOT_FOOTER"),
            (5, "KRAFT_VERSION"),
            (6, "KRAFT_VOTERS"),
        ],
    ),
    // ListOffsets: a timestamp, or one of these sentinels asking for a special offset.
    Enum {
        name: "OffsetSpec",
        values: &[
            (-1, "LATEST"),
            (-2, "EARLIEST"),
            (-3, "MAX_TIMESTAMP"),
            (-4, "EARLIEST_LOCAL"),
            (-5, "LATEST_TIERED"),
            (-6, "EARLIEST_PENDING_UPLOAD"),
        ],
        sentinels: true,
    },
];

/// The enumeration the tables call `name`.
pub fn enumeration(name: &str) -> Option<&'static Enum> {
    ENUMS.iter().find(|e| e.name == name)
}

/// The enumeration called `name`, found when the crate is compiled: the generated tables
/// (src/kafka/spec/tables/) name their fields' enumerations with it, so that a name that is
/// not in [`ENUMS`] fails the build. (It runs only in constants, where an index out of
/// range is a build error too.)
#[allow(clippy::indexing_slicing)]
pub const fn enumeration_named(name: &str) -> &'static Enum {
    let mut i = 0;
    while i < ENUMS.len() {
        if same_str(ENUMS[i].name, name) {
            return &ENUMS[i];
        }
        i += 1;
    }
    panic!("the tables name an enumeration that names.rs does not have")
}

/// `a == b`, in a constant.
#[allow(clippy::indexing_slicing)]
const fn same_str(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

pub fn api_name(key: i16) -> Option<&'static str> {
    API_NAMES
        .binary_search_by_key(&key, |(k, _)| *k)
        .ok()
        .and_then(|i| API_NAMES.get(i))
        .map(|(_, n)| *n)
}

/// Looks an API up by name (case-insensitive, with or without separators) or by number.
pub fn api_key_from_str(s: &str) -> Option<i16> {
    if let Ok(k) = s.trim().parse::<i16>() {
        return Some(k);
    }
    let want: String = s
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    API_NAMES
        .iter()
        .find(|(_, n)| n.to_ascii_lowercase() == want)
        .map(|(k, _)| *k)
}

pub fn error_name(code: i16) -> Option<&'static str> {
    ERROR_NAMES
        .binary_search_by_key(&code, |(c, _)| *c)
        .ok()
        .and_then(|i| ERROR_NAMES.get(i))
        .map(|(_, n)| *n)
}

/// The sentinel Kafka sends when authorized operations were not requested.
pub const AUTHORIZED_OPERATIONS_OMITTED: i32 = i32::MIN;

/// Spells out an authorized-operations bitfield: `READ, WRITE, DESCRIBE`.
pub fn acl_operations(bits: i32) -> String {
    if bits == AUTHORIZED_OPERATIONS_OMITTED {
        return "not requested".into();
    }
    let bits = bits as u32;
    let mut names: Vec<String> = Vec::new();
    for b in 0..32u32 {
        if bits & (1 << b) != 0 {
            match ACL_OPERATIONS.iter().find(|(n, _)| *n == i64::from(b)) {
                Some((_, name)) => names.push((*name).to_string()),
                None => names.push(format!("bit{b}")),
            }
        }
    }
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}
