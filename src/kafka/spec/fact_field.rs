//! Which spec fields the facts read: one name per field, set on each field's spec when the
//! specs load, so that the facts find a field by what it is rather than by its node's text.

use super::role::Role;

/// Declares [`FactField`], one variant per spec field name, and `FACT_FIELDS`, the name of
/// each: the names are written once.
macro_rules! fact_fields {
    ($($name:ident,)*) => {
        /// A field the facts read, one variant per field name of Kafka's specs: set on each
        /// field's spec when the specs are loaded ([`FactField::of`]), so that the facts find a
        /// field by what it is rather than by the text of its node's name. Names are unique
        /// within a struct, and so are these.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub enum FactField {
            /// A field the facts do not read by itself (they may read it by its [`Role`]).
            #[default]
            None,
            $($name,)*
        }

        /// The spec names of the fields the facts read.
        pub(crate) const FACT_FIELDS: &[(&str, FactField)] = &[$((stringify!($name), FactField::$name),)*];
    };
}

fact_fields! {
    AcknowledgementBatches,
    Acks,
    Acls,
    AcquiredRecords,
    ActiveTasks,
    ApiKey,
    AssignedPartitions,
    Assignment,
    Assignments,
    BaseOffset,
    BrokerEpoch,
    BrokerId,
    ClientInstanceId,
    ClientSoftwareName,
    ClientSoftwareVersion,
    Committed,
    CommittedOffset,
    Components,
    ConfigResources,
    ControllerId,
    Creations,
    CurrentMetadataOffset,
    Cursor,
    DeletePartitions,
    Deletions,
    Directories,
    Dirs,
    ElectionType,
    EndpointType,
    Entity,
    EntityName,
    EntityType,
    Entries,
    Epoch,
    ErrorCode,
    ExpiryTimePeriodMs,
    Feature,
    FeatureLevel,
    FeatureUpdates,
    Fenced,
    FetchOffset,
    FilterResults,
    Filters,
    FirstOffset,
    GenerationId,
    GenerationIdOrMemberEpoch,
    GroupId,
    GroupInstanceId,
    HeartbeatIntervalMs,
    GroupIds,
    GroupState,
    Groups,
    GroupsNames,
    HighWatermark,
    Id,
    InControlledShutdown,
    IncludeFencedBrokers,
    Index,
    InstanceId,
    IsCaughtUp,
    IsFenced,
    Isr,
    IsrNodes,
    Key,
    LastOffset,
    Leader,
    LeaderId,
    Listeners,
    LiveBrokers,
    LogDir,
    Markers,
    MatchingAcls,
    MaxVersion,
    MaxWaitMs,
    Mechanism,
    MemberEpoch,
    MemberId,
    Members,
    Metadata,
    MinVersion,
    Name,
    NextCursor,
    Offset,
    OwnedPartitions,
    Owners,
    Partition,
    PartitionData,
    PartitionId,
    PartitionIndex,
    PartitionIndexes,
    PartitionResponses,
    Partitions,
    Path,
    Principal,
    PrincipalFilter,
    PrincipalName,
    ProducerEpoch,
    ProducerId,
    ProducerIdLen,
    ProducerIdStart,
    ProtocolName,
    RebalanceTimeoutMs,
    Records,
    RemainingPartitions,
    Remove,
    RenewPeriodMs,
    Renewers,
    ReplicaElectionResults,
    ReplicaNodes,
    ReplicaState,
    Replicas,
    RequestedMetrics,
    ResourceName,
    ResourceNameFilter,
    ResourceType,
    ResourceTypes,
    Resources,
    Results,
    SessionTimeoutMs,
    StandbyTasks,
    SubtopologyId,
    ResultsByTopicV3AndBelow,
    ResultsByTransaction,
    ShouldShutDown,
    StateFilters,
    StatesFilter,
    SubscriptionId,
    Terminating,
    Timestamp,
    Tokens,
    Topic,
    TopicId,
    TopicName,
    TopicPartitions,
    Topics,
    TopologyEpoch,
    TransactionResult,
    TransactionState,
    TransactionStates,
    TransactionalId,
    WarmupTasks,
    TransactionalIds,
    Transactions,
    TypesFilter,
    Upsertions,
    User,
    Users,
    V3AndBelowProducerId,
    V3AndBelowTopics,
    V3AndBelowTransactionalId,
    Value,
    VoterId,
    WantFence,
    WantShutDown,
}

impl FactField {
    /// The fact field a spec field called `name` is, if any.
    pub fn of(name: &str) -> FactField {
        FACT_FIELDS
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(FactField::None, |(_, f)| *f)
    }
}

/// Whether the facts (or the topic names) read a field with `fact` and `role`: a view that
/// needs only the facts keeps these nodes.
pub(crate) fn reads(fact: FactField, role: Role) -> bool {
    role != Role::Other || fact != FactField::None
}
