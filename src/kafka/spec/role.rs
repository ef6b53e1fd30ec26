//! What a field is for, worked out from its name and type. Kept free of the crate's other
//! modules: the code generator (codegen/) includes this file to write each field's role into
//! the spec tables (src/kafka/spec/tables/).

use super::versions::FieldType;

/// What a field is for, as the fact collectors and renderers need to know it: worked out
/// once from the field's name and type when the tables are generated, so that readers of a decoded
/// message test a role instead of a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Role {
    #[default]
    Other,
    /// `TopicId`.
    TopicId,
    /// A struct's `Name` or `TopicName` string: beside a `TopicId`, that topic's name.
    Name,
    /// An int16 error code (`ErrorCode`, `PartitionErrorCode`...).
    ErrorCode,
    /// An int32 partition number: `PartitionIndex`, `Partition`, `PartitionId`, `Index`
    /// (Produce's).
    Partition,
    /// An int32 array of partition numbers: `Partitions`, `PartitionIndexes`.
    PartitionList,
    /// `ThrottleTimeMs`: how long the broker throttled the client.
    ThrottleTime,
    /// `ClusterId`.
    ClusterId,
    /// `ReplicaId`: the broker a follower's request comes from (-1 for a consumer).
    ReplicaId,
    /// `Mechanism`: the SASL mechanism a handshake asks for.
    Mechanism,
    /// The list of topics a message is about: `Topics`, `TopicData` (Produce's request) or
    /// `Responses` (Produce's and Fetch's responses). No struct has two of them.
    TopicArray,
    /// `Brokers`: the brokers a Metadata response lists.
    Brokers,
    /// `ApiKeys`: the APIs an ApiVersions response advertises.
    ApiKeys,
    /// `NodeId`: a broker's id (FindCoordinator's coordinator).
    NodeId,
    /// `Coordinators`: FindCoordinator's coordinators, one per key (v4 on).
    Coordinators,
    /// `Groups`: the groups a message is about (OffsetFetch v8 on nests topics in them).
    Groups,
    /// `Mechanisms`: the SASL mechanisms a handshake response offers.
    Mechanisms,
    /// `CoordinatorKeys`: the keys FindCoordinator v4 on asks about.
    CoordinatorKeys,
    /// `TopicNames`: a list of plain topic names (DeleteTopics v0-5).
    TopicNames,
}

impl Role {
    /// How many roles there are: the last one's number, plus one.
    pub const COUNT: usize = Role::TopicNames as usize + 1;

    /// The role of a field called `name` of type `ty`.
    pub fn of(name: &str, ty: &FieldType) -> Role {
        match (name, ty) {
            ("TopicId", _) => Role::TopicId,
            ("Name" | "TopicName", FieldType::String) => Role::Name,
            (n, _) if n.ends_with("ErrorCode") => Role::ErrorCode,
            ("PartitionIndex" | "Partition" | "PartitionId" | "Index", FieldType::Int32) => {
                Role::Partition
            }
            ("Partitions" | "PartitionIndexes", FieldType::Array(e)) if **e == FieldType::Int32 => {
                Role::PartitionList
            }
            ("ThrottleTimeMs", _) => Role::ThrottleTime,
            ("Brokers", _) => Role::Brokers,
            ("ApiKeys", _) => Role::ApiKeys,
            ("NodeId", _) => Role::NodeId,
            ("Coordinators", _) => Role::Coordinators,
            ("Groups", _) => Role::Groups,
            ("Mechanisms", _) => Role::Mechanisms,
            ("CoordinatorKeys", _) => Role::CoordinatorKeys,
            ("TopicNames", _) => Role::TopicNames,
            ("Topics" | "TopicData" | "Responses", _) => Role::TopicArray,
            ("ClusterId", _) => Role::ClusterId,
            ("ReplicaId", _) => Role::ReplicaId,
            ("Mechanism", _) => Role::Mechanism,
            _ => Role::Other,
        }
    }
}
