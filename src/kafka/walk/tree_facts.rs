//! The facts of a message read from its tree: the body's top levels, which every view keeps
//! (the topic list and its elements, the counts of arrays below them, and fields that name
//! groups, members, producers, cursors and coordinators in whichever API has them). The views
//! that build no tree get the same facts from the collector while walking (collect.rs).

use super::message::Message;
use super::node::{Node, NodeKind, Note, Shape, Value};
use crate::kafka::meaning::essentials::{self, Entries, Fields, Id, ListPick};
use crate::kafka::meaning::facts::*;
use crate::kafka::spec::fact_field::{FactField, FACT_FIELDS};
use crate::kafka::spec::schema::{Direction, Role};

/// Elements of an array node (its length prefix left out).
fn elements(n: &Node) -> impl Iterator<Item = &Node> {
    n.children.iter().filter(|c| c.kind != NodeKind::Length)
}

/// The child of a struct that `is` picks, tagged fields included: one pass, as most fields
/// asked for are absent and each costs a scan of the children.
fn find(n: &Node, is: impl Fn(&Node) -> bool) -> Option<&Node> {
    let mut tagged = None;
    for c in &n.children {
        if c.shape == Shape::TaggedField {
            if tagged.is_none() {
                tagged = c.children.iter().find(|g| is(g));
            }
        } else if is(c) {
            return Some(c);
        }
    }
    tagged
}

/// The field of a struct that is `fact`.
fn field(n: &Node, fact: FactField) -> Option<&Node> {
    find(n, |c| c.fact() == fact)
}

/// The field of a struct whose spec has `role` (field names, and so these roles, are unique
/// within a struct).
fn with_role(n: &Node, role: Role) -> Option<&Node> {
    find(n, |c| c.role() == role)
}

/// The fields of one struct by fact and by role, found in one pass over its children: the
/// body is asked for some thirty, and a scan for each cost more than the rest of its facts.
/// A plain field comes before a tagged one, and the first of either kind before the others,
/// as [`find`] has it.
struct Index<'a> {
    by_fact: [Option<&'a Node>; FACT_FIELDS.len() + 1],
    by_role: [Option<&'a Node>; Role::COUNT],
    /// The struct indexed.
    node: Option<&'a Node>,
}

impl<'a> Index<'a> {
    fn of(n: &'a Node) -> Index<'a> {
        let mut ix = Index {
            by_fact: [None; FACT_FIELDS.len() + 1],
            by_role: [None; Role::COUNT],
            node: Some(n),
        };
        let plain = n.children.iter().filter(|c| c.shape != Shape::TaggedField);
        let tagged = n
            .children
            .iter()
            .filter(|c| c.shape == Shape::TaggedField)
            .flat_map(|c| &c.children);
        for c in plain.chain(tagged) {
            if let Some(slot @ None) = ix.by_fact.get_mut(c.fact() as usize) {
                *slot = Some(c);
            }
            if let Some(slot @ None) = ix.by_role.get_mut(c.role() as usize) {
                *slot = Some(c);
            }
        }
        ix
    }

    fn fact(&self, f: FactField) -> Option<&'a Node> {
        match f {
            FactField::None => None,
            f => self.by_fact.get(f as usize).copied().flatten(),
        }
    }

    fn role(&self, r: Role) -> Option<&'a Node> {
        match r {
            Role::Other => None,
            r => self.by_role.get(r as usize).copied().flatten(),
        }
    }

    fn string(&self, f: FactField) -> Option<String> {
        self.fact(f).and_then(text)
    }
}

fn string(n: &Node, fact: FactField) -> Option<String> {
    field(n, fact).and_then(|f| f.as_str().map(str::to_string))
}

fn array_len(n: &Node) -> Option<usize> {
    match n.value {
        Value::Array(k) => Some(k),
        _ => None,
    }
}

/// How a topic entry names its topic.
fn topic_ref(t: &Node) -> TopicRef {
    let name = [
        FactField::Name,
        FactField::TopicName,
        FactField::Topic,
        FactField::ResourceName,
    ]
    .iter()
    .find_map(|f| string(t, *f))
    .filter(|s| !s.is_empty());
    if let Some(n) = name {
        return TopicRef::Name(crate::kafka::meaning::interned::name_of(&n));
    }
    match field(t, FactField::TopicId) {
        Some(id) => match (&id.value, &id.note) {
            (Value::Uuid(u), Note::TopicName(n)) => {
                TopicRef::Id(*u, Some(crate::kafka::meaning::interned::name_of(n)))
            }
            (Value::Uuid(u), _) => TopicRef::Id(*u, None),
            _ => TopicRef::Unnamed,
        },
        None => TopicRef::Unnamed,
    }
}

/// The first few entries of a topic (or resource) array, with their errors in a response.
fn topic_list(arr: &Node, with_errors: bool, empty_means_all: bool) -> TopicList {
    if arr.value == Value::Null || (empty_means_all && arr.value == Value::Array(0)) {
        return TopicList {
            all: true,
            field: arr.field,
            ..TopicList::default()
        };
    }
    let first = elements(arr)
        .take(MAX_TOPICS)
        .map(|t| {
            let error = with_errors
                .then(|| field(t, FactField::ErrorCode).and_then(Node::as_int))
                .flatten()
                .filter(|c| *c != 0)
                .map(|c| c as i16);
            TopicFact::new(topic_ref(t), error)
        })
        .collect();
    TopicList {
        all: false,
        first,
        // The count on the wire: past --max-elements the elements are not kept as nodes.
        total: array_len(arr).unwrap_or_else(|| elements(arr).count()),
        field: arr.field,
    }
}

/// A list of plain strings (DeleteTopics v0-5's TopicNames) as a topic list.
fn name_list(arr: &Node) -> TopicList {
    let names: Vec<&str> = elements(arr).filter_map(Node::as_str).collect();
    TopicList {
        all: false,
        first: names
            .iter()
            .take(MAX_TOPICS)
            .map(|n| {
                let name = crate::kafka::meaning::interned::name_of(n);
                TopicFact::new(TopicRef::Name(name), None)
            })
            .collect(),
        total: names.len(),
        field: arr.field,
    }
}

/// Partition entries under the topic list (Produce, Fetch, ListOffsets, OffsetCommit...).
fn partition_count(topics: Option<&Node>) -> usize {
    let Some(topics) = topics else {
        return 0;
    };
    elements(topics)
        .map(|t| {
            [
                FactField::Partitions,
                FactField::PartitionData,
                FactField::PartitionResponses,
                FactField::PartitionIndexes,
            ]
            .iter()
            .find_map(|n| field(t, *n))
            .and_then(array_len)
            .unwrap_or(0)
        })
        .sum()
}

/// (key, min, max) of each API an ApiVersions response lists.
fn advertised(arr: &Node) -> Vec<(i16, i64, i64)> {
    elements(arr)
        .filter_map(|e| {
            let get = |n: FactField| field(e, n).and_then(Node::as_int);
            Some((
                get(FactField::ApiKey)? as i16,
                get(FactField::MinVersion)?,
                get(FactField::MaxVersion)?,
            ))
        })
        .collect()
}

/// DescribeTopicPartitions' cursor: (topic, partition) when present.
fn cursor(c: Option<&Node>) -> Option<(String, i64)> {
    let c = c.filter(|c| c.value == Value::Struct)?;
    Some((
        string(c, FactField::TopicName).unwrap_or_else(|| "?".into()),
        field(c, FactField::PartitionIndex)
            .and_then(Node::as_int)
            .unwrap_or(-1),
    ))
}

fn identity(body: &Index<'_>) -> Vec<(&'static str, Scalar)> {
    IDENTITY
        .iter()
        .filter_map(|(f, label)| {
            let v = match &body.fact(*f)?.value {
                Value::Str(Some(s)) if !s.is_empty() => Scalar::Str(s.clone()),
                Value::Int(i) => Scalar::Int(*i),
                _ => return None,
            };
            Some((*label, v))
        })
        .collect()
}

/// A string node's text.
fn text(n: &Node) -> Option<String> {
    n.as_str().map(str::to_string)
}

/// The strings of an array of strings.
fn strings(l: &Node) -> Vec<String> {
    elements(l).filter_map(text).collect()
}

/// The facts of a decoded message.
pub fn collect(msg: &Message) -> Facts {
    collect_root(msg, msg.root())
}

/// The facts of a message from `root`, its tree (before the tree is the message's).
pub(super) fn collect_root(msg: &Message, root: &Node) -> Facts {
    match root.children.iter().find(|n| n.shape == Shape::Body) {
        Some(body) => collect_body(
            body,
            msg.direction,
            (msg.api_key, msg.api_version),
            &msg.batches,
        ),
        None => Facts::default(),
    }
}

/// The facts of a message body of `direction` of (`api_key`, `api_version`): a message's own,
/// or an embedded one's. `batches` is the message's list of batch facts, which its records
/// nodes index.
pub fn collect_body(
    body: &Node,
    direction: Direction,
    (api_key, api_version): (Option<i16>, Option<i16>),
    batches: &[BatchFact],
) -> Facts {
    let response = direction == Direction::Response;
    let b = Index::of(body);
    let mut f = Facts {
        identity: identity(&b),
        partitions: partition_count(b.role(Role::TopicArray)),
        cursor: cursor(b.fact(FactField::Cursor)),
        next_cursor: cursor(b.fact(FactField::NextCursor)),
        mechanism: b.role(Role::Mechanism).and_then(text),
        mechanisms: b.role(Role::Mechanisms).map(strings),
        coordinator_keys: b.role(Role::CoordinatorKeys).map(strings),
        throttle_ms: b.role(Role::ThrottleTime).and_then(Node::as_int),
        topic_names: b.role(Role::TopicNames).map(name_list),
        offsets: shared_offsets(api_key.map_or_else(Vec::new, |k| offsets(&b, k, batches))),
        members: api_key.map_or_else(Vec::new, |k| members(&b, k, response)),
        replica_id: b
            .role(Role::ReplicaId)
            .or_else(|| {
                b.fact(FactField::ReplicaState)
                    .and_then(|r| with_role(r, Role::ReplicaId))
            })
            .and_then(Node::as_int),
        max_wait_ms: b.fact(FactField::MaxWaitMs).and_then(Node::as_int),
        group: group_facts(&b),
        ..Facts::default()
    };
    if response {
        f.error = b
            .fact(FactField::ErrorCode)
            .and_then(Node::as_int)
            .filter(|c| *c != 0)
            .map(|c| c as i16);
        f.brokers = b.role(Role::Brokers).and_then(array_len);
        f.cluster_id = b.role(Role::ClusterId).and_then(text);
        f.api_count = b.role(Role::ApiKeys).and_then(array_len);
        if api_key == Some(18) {
            f.advertised = b.role(Role::ApiKeys).map(advertised);
        }
    } else {
        f.software = b
            .string(FactField::ClientSoftwareName)
            .zip(b.string(FactField::ClientSoftwareVersion));
    }
    // FindCoordinator: the node that coordinates (one, or one per key from v4).
    if api_key == Some(10) && response {
        f.coordinator = b.role(Role::NodeId).and_then(Node::as_int);
        f.coordinators = b.role(Role::Coordinators).map(|l| {
            elements(l)
                .filter_map(|c| with_role(c, Role::NodeId).and_then(Node::as_int))
                .collect()
        });
    }
    if let Some(t) = b.role(Role::TopicArray) {
        // Metadata v0 asks for every topic with an empty list (a null list from v1 on).
        let empty_means_all = !response && api_key == Some(3) && api_version == Some(0);
        f.topics = Some(topic_list(t, response, empty_means_all));
    }
    // Config APIs name resources (topics, brokers, groups) rather than topics.
    if let Some(r) = b
        .fact(FactField::Resources)
        .or_else(|| b.fact(FactField::Results))
    {
        if elements(r).any(|e| field(e, FactField::ResourceName).is_some()) {
            f.resources = Some(topic_list(r, response, false));
        }
    }
    if let Some(k) = api_key {
        let picks = essentials::picks(k, direction);
        let (line, error_none) = essentials::gather(picks, &b, &mut |l: &ListPick| entries(&b, l));
        f.line = line;
        f.error_none = error_none;
    }
    f
}

/// What the entries of a listed array of the body give.
fn entries(body: &Index<'_>, l: &ListPick) -> Option<Entries> {
    let arr = body.fact(l.array)?;
    let mut got = Entries::default();
    for e in elements(arr) {
        match e.value {
            Value::Struct => got.element(l, &Index::of(e)),
            _ if l.id == Id::Scalar || l.id == Id::Count => {
                got.scalar(l, e.as_str().map(str::to_string));
            }
            _ => {}
        }
    }
    Some(got)
}

/// A struct's fields as the essentials read them.
impl Fields for Index<'_> {
    fn int(&self, f: FactField) -> Option<i64> {
        match self.fact(f)?.value {
            Value::Int(i) => Some(i),
            Value::Bool(b) => Some(i64::from(b)),
            _ => None,
        }
    }

    fn text(&self, f: FactField) -> Option<Option<String>> {
        match &self.fact(f)?.value {
            Value::Str(s) => Some(s.clone()),
            _ => None,
        }
    }

    fn uuid(&self, f: FactField) -> Option<[u8; 16]> {
        match self.fact(f)?.value {
            Value::Uuid(u) => Some(u),
            _ => None,
        }
    }

    fn len(&self, f: FactField) -> Option<Option<usize>> {
        match self.fact(f)?.value {
            Value::Array(n) => Some(Some(n)),
            Value::Null => Some(None),
            _ => None,
        }
    }

    fn field(&self, f: FactField) -> Option<crate::kafka::spec::schema::FieldId> {
        self.fact(f)?.field
    }

    fn topic(&self) -> TopicRef {
        self.node.map_or(TopicRef::Unnamed, topic_ref)
    }
}

/// APIs whose partition entries carry offsets: Produce, Fetch, ListOffsets, Metadata,
/// OffsetCommit, OffsetFetch, ShareFetch, ShareAcknowledge.
const OFFSET_APIS: [i16; 8] = [0, 1, 2, 3, 8, 9, 78, 79];

/// A topic element's name, or its id in hex when no name is known.
fn topic_text(t: &Node) -> String {
    match topic_ref(t) {
        TopicRef::Name(n) | TopicRef::Id(_, Some(n)) => n.to_string(),
        TopicRef::Id(u, None) => hex::encode(u),
        TopicRef::Unnamed => String::new(),
    }
}

/// The partition entries of a message of API `key`, with their offsets.
fn offsets(body: &Index<'_>, key: i16, batches: &[BatchFact]) -> Vec<PartitionFact> {
    if !OFFSET_APIS.contains(&key) {
        return Vec::new();
    }
    let mut out = Vec::new();
    // OffsetFetch v8+ nests topics in groups.
    let topic_arrays: Vec<&Node> = match body.role(Role::Groups) {
        Some(g) if key == 9 => elements(g)
            .filter_map(|g| with_role(g, Role::TopicArray))
            .collect(),
        _ => body.role(Role::TopicArray).into_iter().collect(),
    };
    for topics in topic_arrays {
        for t in elements(topics) {
            let parts = [
                FactField::Partitions,
                FactField::PartitionData,
                FactField::PartitionResponses,
            ]
            .iter()
            .find_map(|n| field(t, *n));
            let mut parts = parts.into_iter().flat_map(elements).peekable();
            // Views that keep two levels keep no partition entries: the topic is not named.
            if parts.peek().is_none() {
                continue;
            }
            let topic = Name::from(topic_text(t));
            let id = field(t, FactField::TopicId).and_then(|n| match n.value {
                Value::Uuid(u) if u != [0; 16] => Some(u),
                _ => None,
            });
            for p in parts {
                let mut f = partition_fact(&topic, p, batches);
                f.topic_id = id;
                out.push(f);
            }
        }
    }
    out
}

fn partition_fact(topic: &Name, p: &Node, all_batches: &[BatchFact]) -> PartitionFact {
    let p = Index::of(p);
    let int = |n: FactField| p.fact(n).and_then(Node::as_int);
    let ranges = [
        FactField::AcquiredRecords,
        FactField::AcknowledgementBatches,
    ]
    .iter()
    .filter_map(|n| p.fact(*n))
    .flat_map(elements)
    .filter_map(|r| {
        let get = |n: FactField| field(r, n).and_then(Node::as_int);
        Some((get(FactField::FirstOffset)?, get(FactField::LastOffset)?))
    })
    .collect();
    PartitionFact {
        topic: topic.clone(),
        partition: [
            FactField::PartitionIndex,
            FactField::Partition,
            FactField::Index,
        ]
        .iter()
        .find_map(|n| int(*n))
        .unwrap_or(-1) as i32,
        error: int(FactField::ErrorCode).unwrap_or(0) as i16,
        fetch_offset: int(FactField::FetchOffset),
        high_watermark: int(FactField::HighWatermark)
            .filter(|_| p.fact(FactField::FetchOffset).is_none()),
        committed_offset: int(FactField::CommittedOffset),
        base_offset: int(FactField::BaseOffset),
        offset: int(FactField::Offset),
        timestamp: int(FactField::Timestamp),
        leader: int(FactField::LeaderId).map(|l| l as i32),
        isr: p.fact(FactField::IsrNodes).map(broker_ids),
        replicas: p.fact(FactField::ReplicaNodes).map(broker_ids),
        topic_id: None,
        ranges,
        batches: p
            .fact(FactField::Records)
            .map(|r| batches(r, all_batches))
            .unwrap_or_default(),
    }
}

/// The first broker ids of an int32 array (a partition's replicas).
fn broker_ids(a: &Node) -> BrokerIds {
    elements(a)
        .filter_map(|b| b.as_int().and_then(|i| i32::try_from(i).ok()))
        .take(MAX_REPLICAS)
        .collect()
}

/// The batches of a records field: v2 batches and legacy messages, as the decoder counted
/// them.
fn batches(records: &Node, all: &[BatchFact]) -> Vec<BatchFact> {
    match &records.value {
        Value::Records(set) => set.batches(all).to_vec(),
        _ => Vec::new(),
    }
}

/// (topic, partitions) of a consumer-protocol or heartbeat topic-partition list.
fn topic_partitions(arr: &Node) -> Vec<(String, Vec<i32>)> {
    elements(arr)
        .map(|t| {
            let parts = field(t, FactField::Partitions)
                .map(|l| {
                    elements(l)
                        .filter_map(Node::as_int)
                        .map(|p| p as i32)
                        .collect()
                })
                .unwrap_or_default();
            (topic_text(t), parts)
        })
        .collect()
}

/// The consumer protocol decoded inside a bytes field (`Metadata`, `Assignment`), if it was.
pub(super) fn consumer_protocol(n: &Node) -> (Vec<String>, Vec<(String, Vec<i32>)>) {
    let subscribed = field(n, FactField::Topics)
        .map(|l| {
            elements(l)
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let parts = [FactField::AssignedPartitions, FactField::OwnedPartitions]
        .iter()
        .find_map(|f| field(n, *f))
        .map(topic_partitions)
        .unwrap_or_default();
    (subscribed, parts)
}

/// The sender's membership details a group API gives (each field where the message has it).
fn group_facts(body: &Index<'_>) -> GroupFacts {
    let int = |f: FactField| body.fact(f).and_then(Node::as_int);
    let nonempty = |f: FactField| body.string(f).filter(|s| !s.is_empty());
    GroupFacts {
        instance_id: nonempty(FactField::GroupInstanceId)
            .or_else(|| nonempty(FactField::InstanceId)),
        leader: nonempty(FactField::Leader),
        session_timeout_ms: int(FactField::SessionTimeoutMs),
        rebalance_timeout_ms: int(FactField::RebalanceTimeoutMs),
        heartbeat_interval_ms: int(FactField::HeartbeatIntervalMs),
    }
}

/// A streams group member's tasks (a StreamsGroupHeartbeat answer's ActiveTasks,
/// StandbyTasks and WarmupTasks), when the answer gives them (null: unchanged).
fn streams_tasks(body: &Index<'_>) -> Option<Vec<(&'static str, String, Vec<i32>)>> {
    let kinds = [
        ("active", FactField::ActiveTasks),
        ("standby", FactField::StandbyTasks),
        ("warmup", FactField::WarmupTasks),
    ];
    let lists: Vec<(&'static str, &Node)> = kinds
        .iter()
        .filter_map(|(k, f)| body.fact(*f).map(|l| (*k, l)))
        .filter(|(_, l)| matches!(l.value, Value::Array(_)))
        .collect();
    if lists.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for (kind, l) in lists {
        for t in elements(l) {
            let parts = field(t, FactField::Partitions)
                .map(|p| {
                    elements(p)
                        .filter_map(Node::as_int)
                        .map(|p| p as i32)
                        .collect()
                })
                .unwrap_or_default();
            let sub = string(t, FactField::SubtopologyId).unwrap_or_default();
            out.push((kind, sub, parts));
        }
    }
    Some(out)
}

/// Members named with their partitions: JoinGroup responses (Members), SyncGroup requests
/// (Assignments), SyncGroup responses and the KIP-848 heartbeat responses (the sender's).
fn members(body: &Index<'_>, key: i16, response: bool) -> Vec<MemberFact> {
    let list = match (key, response) {
        (11, true) => body.fact(FactField::Members),
        (14, false) => body.fact(FactField::Assignments),
        (13, false) => body.fact(FactField::Members),
        _ => None,
    };
    if let Some(l) = list {
        return elements(l)
            .map(|m| {
                let data =
                    field(m, FactField::Metadata).or_else(|| field(m, FactField::Assignment));
                let (subscribed, partitions) = data.map(consumer_protocol).unwrap_or_default();
                MemberFact {
                    member_id: string(m, FactField::MemberId).unwrap_or_default(),
                    subscribed,
                    partitions,
                    instance_id: string(m, FactField::GroupInstanceId).filter(|s| !s.is_empty()),
                    tasks: Vec::new(),
                }
            })
            .collect();
    }
    let own = match (key, response) {
        (14, true) => body.fact(FactField::Assignment).map(consumer_protocol),
        (68 | 76, true) => body
            .fact(FactField::Assignment)
            .filter(|a| a.value == Value::Struct)
            .map(|a| {
                let parts = field(a, FactField::TopicPartitions).map(topic_partitions);
                (Vec::new(), parts.unwrap_or_default())
            }),
        _ => None,
    };
    if let (88, true, Some(tasks)) = (key, response, streams_tasks(body)) {
        return vec![MemberFact {
            member_id: body.string(FactField::MemberId).unwrap_or_default(),
            tasks,
            ..MemberFact::default()
        }];
    }
    own.map(|(subscribed, partitions)| {
        vec![MemberFact {
            member_id: body.string(FactField::MemberId).unwrap_or_default(),
            subscribed,
            partitions,
            ..MemberFact::default()
        }]
    })
    .unwrap_or_default()
}

/// A message's offsets as its facts hold them: none is the list all messages share.
fn shared_offsets(
    list: Vec<crate::kafka::meaning::facts::PartitionFact>,
) -> std::sync::Arc<Vec<crate::kafka::meaning::facts::PartitionFact>> {
    if list.is_empty() {
        crate::kafka::meaning::facts::no_offsets()
    } else {
        std::sync::Arc::new(list)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    use crate::kafka::spec::schema::FieldSpec;

    /// Every field of the API and data specs, at every depth.
    fn specs_fields() -> impl Iterator<Item = &'static FieldSpec> {
        fn gather(fields: &'static [FieldSpec], out: &mut Vec<&'static FieldSpec>) {
            for f in fields {
                out.push(f);
                gather(f.fields, out);
            }
        }
        let mut all = Vec::new();
        let reg = crate::kafka::spec::schema::registry();
        for key in reg.api_keys() {
            let specs = [Direction::Request, Direction::Response].map(|d| reg.get(key, d));
            for s in specs.into_iter().flatten() {
                gather(s.fields, &mut all);
            }
        }
        // The data specs, and the KRaft metadata log's records (src/kafka/records/metadata.rs
        // reads their fields by fact).
        for s in reg.data_specs().chain(reg.metadata_records()) {
            gather(s.fields, &mut all);
        }
        all.into_iter()
    }

    /// Every fact field names a field of the specs: a misspelt name would read nothing.
    #[test]
    fn every_fact_field_is_a_field_of_the_specs() {
        let seen: Vec<FactField> = specs_fields().map(|f| f.fact).collect();
        let missing: Vec<&str> = FACT_FIELDS
            .iter()
            .filter(|(_, f)| !seen.contains(f))
            .map(|(n, _)| *n)
            .collect();
        assert!(missing.is_empty(), "no spec field called {missing:?}");
        // The index of a struct's fields has a slot for every role a spec field has.
        let unindexed: Vec<&str> = specs_fields()
            .filter(|f| f.role as usize >= Role::COUNT)
            .map(|f| f.name)
            .collect();
        assert!(
            unindexed.is_empty(),
            "roles past Role::COUNT: {unindexed:?}"
        );
        // Readers test roles and fact fields where they tested names: the same fields.
        for f in specs_fields() {
            let name = f.name;
            assert_eq!(
                f.role == Role::ErrorCode,
                name.ends_with("ErrorCode"),
                "{name}"
            );
            assert_eq!(f.fact == FactField::ApiKey, name == "ApiKey", "{name}");
        }
        assert_eq!(FactField::of("ErrorCode"), FactField::ErrorCode);
        assert_eq!(FactField::of("PartitionErrorCode"), FactField::None);
    }

    #[test]
    fn a_metadata_v13_response_names_its_cluster_brokers_and_topics() {
        // The seed vector: decode it and read the facts.
        let text = include_str!("../../../tests/fixtures/vectors/metadata-v13-response.hex");
        let bytes = crate::capture::hex::parse(text).unwrap();
        let m = crate::kafka::decode_response(&bytes, 3, 13);
        let f = collect(&m);
        assert_eq!(f.brokers, Some(1));
        assert_eq!(f.cluster_id.as_deref(), Some(""));
        let topics = f.topics.unwrap();
        assert_eq!(topics.total, 1);
        assert!(!topics.all);
        assert_eq!(f.partitions, 1);
    }
}
