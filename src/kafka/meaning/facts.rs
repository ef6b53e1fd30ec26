//! The essentials of a message, as typed facts: what a summary line, the statistics and the
//! display filters need, gathered once when the message is decoded so that no reader searches
//! the tree (or its text) again. The walk fills them in (src/kafka/walk/collect.rs while it
//! walks, src/kafka/walk/tree_facts.rs from a tree); these are the types.

pub use super::interned::Name;
pub use crate::kafka::spec::fact_field::FactField;
use crate::kafka::spec::schema::FieldId;

/// Topics kept by name or id; the rest are counted.
pub const MAX_TOPICS: usize = 5;

/// Broker ids a partition's replica list keeps (Kafka clusters have a few).
pub const MAX_REPLICAS: usize = 64;

/// Broker ids of a replica list (the first [`MAX_REPLICAS`]): inline up to four, the
/// replication factor of nearly every topic, so that a partition costs no allocation.
pub type BrokerIds = smallvec::SmallVec<[i32; 4]>;

/// A topic as the message names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopicRef {
    /// (Shared: see [`super::interned`].)
    Name(Name),
    /// An id, with the name an earlier message gave it.
    Id([u8; 16], Option<Name>),
    /// An element that names no topic.
    Unnamed,
}

/// A topic entry (or a group, a user, a log dir...): who, its error in a response, and what
/// else a line says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicFact {
    pub topic: TopicRef,
    pub error: Option<i16>,
    /// A described group's state and members, a transaction's state or result.
    pub details: Vec<Detail>,
}

impl TopicFact {
    /// An entry without details.
    pub fn new(topic: TopicRef, error: Option<i16>) -> TopicFact {
        TopicFact {
            topic,
            error,
            details: Vec::new(),
        }
    }
}

/// Something a line says of a listed entry beside its error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detail {
    /// A string field of the entry (a group's state).
    Text(String),
    /// How many elements an array of the entry has, and what they are (`3 members`).
    Count(usize, &'static str),
    /// The name of a value (`COMMIT`).
    Name(&'static str),
}

/// A list of topics (or config resources, or the entries an API's line lists): the first
/// few, and how many there are in all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TopicList {
    /// Null on the wire, or empty where that means every topic (Metadata v0).
    pub all: bool,
    pub first: Vec<TopicFact>,
    pub total: usize,
    /// The array of the body it lists: an error shown beside one of its first entries is
    /// not told again.
    pub field: Option<FieldId>,
}

/// One essential of a message beyond the facts every API has, as
/// [`super::essentials::picks`] chooses them for its API: `label=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Essential {
    pub label: &'static str,
    pub value: EssentialValue,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EssentialValue {
    Int(i64),
    /// A bool that is true: the label alone.
    Flag,
    /// A string; `None` for null.
    Text(Option<String>),
    /// The name of a value (an enumeration's, a bool's).
    Name(&'static str),
    Uuid([u8; 16]),
    /// How many entries (or elements of theirs) there are.
    Count(usize),
    /// The first entries by their ids, with their errors and details.
    List(TopicList),
}

/// A fact whose value is an integer or a string, as fields of groups and transactions are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scalar {
    Int(i64),
    Str(String),
}

/// Identity fields, in the order a summary names them.
pub const IDENTITY: [(FactField, &str); 10] = [
    (FactField::GroupId, "group"),
    (FactField::Key, "key"),
    (FactField::MemberId, "member"),
    (FactField::GenerationId, "generation"),
    (FactField::GenerationIdOrMemberEpoch, "generation"),
    (FactField::MemberEpoch, "member_epoch"),
    (FactField::ProtocolName, "protocol"),
    (FactField::TransactionalId, "txn"),
    (FactField::ProducerId, "producer_id"),
    (FactField::Acks, "acks"),
];

/// What a message is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// The top-level error code of a response, when not zero.
    pub error: Option<i16>,
    pub brokers: Option<usize>,
    pub cluster_id: Option<String>,
    /// APIs an ApiVersions response lists.
    pub api_count: Option<usize>,
    /// The versions an ApiVersions response advertises: (key, min, max).
    pub advertised: Option<Vec<(i16, i64, i64)>>,
    /// ApiVersions v3+: the client library's name and version.
    pub software: Option<(String, String)>,
    pub mechanism: Option<String>,
    pub mechanisms: Option<Vec<String>>,
    pub coordinator_keys: Option<Vec<String>>,
    /// FindCoordinator's node (v0-3) and nodes (v4+).
    pub coordinator: Option<i64>,
    pub coordinators: Option<Vec<i64>>,
    /// Group, member and transaction identity: (label, value) in [`IDENTITY`] order.
    pub identity: Vec<(&'static str, Scalar)>,
    pub topics: Option<TopicList>,
    pub cursor: Option<(String, i64)>,
    pub next_cursor: Option<(String, i64)>,
    /// Config resources (topics, brokers, groups) named by the config APIs.
    pub resources: Option<TopicList>,
    /// DeleteTopics v0-5's list of names.
    pub topic_names: Option<TopicList>,
    /// Partition entries under the topic list.
    pub partitions: usize,
    pub throttle_ms: Option<i64>,
    /// Offsets per partition (Produce, Fetch, ListOffsets, OffsetCommit, OffsetFetch, the share
    /// APIs, Metadata's leaders), for the analyses; empty for other APIs. Shared, not copied,
    /// with the analyses' event of the message (a Metadata answer's run to hundreds).
    pub offsets: std::sync::Arc<Vec<PartitionFact>>,
    /// Group members with what they subscribe to or are assigned (JoinGroup and SyncGroup's
    /// consumer protocol, the KIP-848 heartbeats' assignments).
    pub members: Vec<MemberFact>,
    /// Fetch requests: the fetching replica's broker id (-1, or absent, for a consumer).
    pub replica_id: Option<i64>,
    /// Fetch and ShareFetch requests: how long the broker may hold the answer (a long poll).
    pub max_wait_ms: Option<i64>,
    /// What the group APIs say of the sender's membership, for the group timelines.
    pub group: GroupFacts,
    /// A response whose top-level error is NONE, of an API whose line says so (its answer
    /// holds little else: a heartbeat's, a registration's).
    pub error_none: bool,
    /// What the line of this API says beyond the facts above, in the order of its picks.
    pub line: Vec<Essential>,
}

/// Written out for its one field that is not its type's default (`offsets`); the others are.
impl Default for Facts {
    fn default() -> Self {
        Facts {
            error: Default::default(),
            brokers: Default::default(),
            cluster_id: Default::default(),
            api_count: Default::default(),
            advertised: Default::default(),
            software: Default::default(),
            mechanism: Default::default(),
            mechanisms: Default::default(),
            coordinator_keys: Default::default(),
            coordinator: Default::default(),
            coordinators: Default::default(),
            identity: Default::default(),
            topics: Default::default(),
            cursor: Default::default(),
            next_cursor: Default::default(),
            resources: Default::default(),
            topic_names: Default::default(),
            partitions: Default::default(),
            throttle_ms: Default::default(),
            // Shared: most messages have none, and a list of their own would cost an
            // allocation each.
            offsets: no_offsets(),
            members: Default::default(),
            replica_id: Default::default(),
            max_wait_ms: Default::default(),
            group: Default::default(),
            error_none: Default::default(),
            line: Default::default(),
        }
    }
}

/// The offsets of a message that has none: one empty list, shared (an `Arc`'s default is a
/// new allocation, made and freed for every message).
pub fn no_offsets() -> std::sync::Arc<Vec<PartitionFact>> {
    static NONE: std::sync::OnceLock<std::sync::Arc<Vec<PartitionFact>>> =
        std::sync::OnceLock::new();
    NONE.get_or_init(Default::default).clone()
}

/// What the group APIs say of a member beyond its id (JoinGroup, SyncGroup, LeaveGroup and
/// the KIP-848, share and streams heartbeats): for the group timelines.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GroupFacts {
    /// The static member's group.instance.id (GroupInstanceId, or the heartbeats' InstanceId).
    pub instance_id: Option<String>,
    /// A JoinGroup answer: the leader's member id.
    pub leader: Option<String>,
    /// A JoinGroup request: the member's session and rebalance timeouts.
    pub session_timeout_ms: Option<i64>,
    pub rebalance_timeout_ms: Option<i64>,
    /// A KIP-848, share or streams heartbeat answer: when the member must heartbeat again.
    pub heartbeat_interval_ms: Option<i64>,
}

impl Facts {
    /// Every list of topics, resources and entries, for names learnt later to name their ids.
    pub fn lists_mut(&mut self) -> impl Iterator<Item = &mut TopicList> {
        let line = self.line.iter_mut().filter_map(|e| match &mut e.value {
            EssentialValue::List(l) => Some(l),
            _ => None,
        });
        [&mut self.topics, &mut self.resources]
            .into_iter()
            .flatten()
            .chain(line)
    }

    /// Every list of topics, resources and entries.
    pub fn lists(&self) -> impl Iterator<Item = &TopicList> {
        let line = self.line.iter().filter_map(|e| match &e.value {
            EssentialValue::List(l) => Some(l),
            _ => None,
        });
        [&self.topics, &self.resources, &self.topic_names]
            .into_iter()
            .flatten()
            .chain(line)
    }
}

/// One partition entry of a message and the offsets it carries; absent fields are `None`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PartitionFact {
    /// Shared: a topic's partitions (hundreds in a Metadata answer) name it once.
    pub topic: Name,
    pub partition: i32,
    pub error: i16,
    /// Fetch request: the offset asked for.
    pub fetch_offset: Option<i64>,
    /// The topic's id, when the entry names one (its name, when known, is `topic`; else
    /// `topic` is the id in hex).
    pub topic_id: Option<[u8; 16]>,
    /// Fetch response: the high watermark.
    pub high_watermark: Option<i64>,
    /// OffsetCommit request, OffsetFetch response.
    pub committed_offset: Option<i64>,
    /// Produce response: the offset given to the first record.
    pub base_offset: Option<i64>,
    /// ListOffsets response: the offset answered, with the request's timestamp unknown here.
    pub offset: Option<i64>,
    /// ListOffsets: the timestamp asked for (-1 the log end, -2 the log start).
    pub timestamp: Option<i64>,
    /// Metadata response: the partition's leader, its in-sync replicas and its replicas
    /// (the first `MAX_REPLICAS` of each).
    pub leader: Option<i32>,
    pub isr: Option<BrokerIds>,
    pub replicas: Option<BrokerIds>,
    /// Share APIs: acknowledged or acquired ranges (first, last offset).
    pub ranges: Vec<(i64, i64)>,
    pub batches: Vec<BatchFact>,
}

/// A record batch (or legacy message) of a partition entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BatchFact {
    pub base_offset: i64,
    pub records: i64,
    /// The offset of its last record (base offset plus lastOffsetDelta; a legacy message's
    /// own offset).
    pub last_offset: i64,
    /// Compression codec (attributes & 7): 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd.
    pub codec: u8,
    /// Bytes on the wire, and as they would be uncompressed.
    pub wire_bytes: usize,
    pub plain_bytes: usize,
    /// A v2 batch's producer id and base sequence (-1 for a producer that is not
    /// idempotent, and for legacy messages), and its stored CRC: with the partition, what
    /// finds the same batch in a Produce request and in a Fetch answer (the analyses learn a
    /// topic id's name from it).
    pub producer_id: i64,
    pub base_sequence: i32,
    pub crc: u32,
}

/// A group member and its partitions, by topic.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MemberFact {
    pub member_id: String,
    /// Topics subscribed (JoinGroup); empty where the message gives none.
    pub subscribed: Vec<String>,
    /// Partitions assigned (SyncGroup, heartbeats) or owned (JoinGroup, cooperative).
    pub partitions: Vec<(String, Vec<i32>)>,
    /// Its group.instance.id, where the list gives one (JoinGroup answers, LeaveGroup v3+).
    pub instance_id: Option<String>,
    /// A streams group member's tasks (StreamsGroupHeartbeat): (kind, subtopology,
    /// partitions), kind `active`, `standby` or `warmup`.
    pub tasks: Vec<(&'static str, String, Vec<i32>)>,
}

/// What a `records` field held: v2 batches, legacy messages (outer ones: a compressed
/// wrapper counts once) and records (a v2 batch's count, or every legacy message that is not
/// a wrapper, inner ones included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub batches: u32,
    pub messages: u32,
    pub records: i64,
}

/// What a records field holds, counted as it was decoded: the field's value, which the views
/// spell out. Plain data (no allocation, nothing to drop) as every node's value is built and
/// dropped on the hot path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordSet {
    pub tally: Tally,
    /// The facts of the batches and legacy messages kept as nodes: `first..first + len` of
    /// the message's [`BatchFact`] list (`Message::batches`). The range means something only
    /// against the list of the decoder that read the field: a part decoded apart (a record's
    /// key or value, `decode_body_with`) keeps no list, and nothing reads its ranges.
    pub first: u32,
    pub len: u32,
}

impl RecordSet {
    /// Its batches' facts, from the list of the message that holds it.
    pub fn batches<'b>(&self, all: &'b [BatchFact]) -> &'b [BatchFact] {
        let first = self.first as usize;
        all.get(first..first + self.len as usize).unwrap_or(&[])
    }
}
