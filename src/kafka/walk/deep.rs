//! The facts the analyses read below the body's first two levels, gathered while the
//! generated walk walks the body at every depth, without building a node: the partition
//! entries with their offsets and record batches, group members with their consumer protocol,
//! and the (TopicId, Name) pairs of every struct. The body's first two levels go to the
//! summary's [`Collector`] as they do for the summary; this visitor keeps, besides, a flat
//! list of what the walk told it at every depth (every struct, array and element, and the
//! fields the facts read), which the functions below read as `tree_facts.rs` reads the
//! decoder's tree of the facts' nodes. tests/deep_facts.rs holds the two ways equal on every
//! frame of every sample.
//!
//! Where the walk gives up (what only the decoder reads, or would diagnose), the decoder
//! reads the body and the facts come from its tree, as before.

use super::collect::{Collector, Val};
use super::decode::Decoder;
use super::generated::{two_levels_to_collector, walk_body, Visit, W};
use super::interpreted::GiveUp;
use super::node::{Node, NodeKind, Region};
use crate::kafka::meaning::facts::{
    BatchFact, BrokerIds, FactField, MemberFact, Name, PartitionFact, TopicRef, MAX_REPLICAS,
};
use crate::kafka::meaning::interned;
use crate::kafka::spec::schema::{
    Content, Direction, FieldSpec, FieldType, Layout, MessageSpec, Role,
};
use std::borrow::Cow;

/// What a consumer protocol's bytes held: topics subscribed, and partitions by topic.
type Protocol = (Vec<String>, Vec<(String, Vec<i32>)>);

/// What the walk told of: the body, a struct or array field, an element, a scalar element,
/// or a field the facts read.
#[derive(Debug, Clone, Copy)]
struct Item {
    /// Its field (an element's: its array's); `None` for the body.
    spec: Option<&'static FieldSpec>,
    tagged: bool,
    val: Val,
    /// One past the index of its last descendant.
    end: u32,
}

/// The facts below the body's first two levels, once walked.
#[derive(Debug, Default)]
pub(crate) struct DeepFacts {
    pub(crate) offsets: Vec<PartitionFact>,
    pub(crate) members: Vec<MemberFact>,
    pub(crate) pairs: Vec<([u8; 16], Name)>,
}

/// The visitor: the summary's collector for the first two levels, and the list of items.
pub(super) struct Deep {
    c: Box<Collector>,
    items: Vec<Item>,
    /// The items begun and not yet ended, innermost last.
    open: Vec<u32>,
    /// The consumer protocols decoded, by the item of the bytes field that held them.
    protocols: Vec<(u32, Protocol)>,
    /// Things told of: a bound of the nodes the decoder would have counted for them.
    told: usize,
}

thread_local! {
    /// The lists of a visitor, kept between messages (as the collector's are).
    static SPARE: std::cell::Cell<Option<(Vec<Item>, Vec<u32>)>> =
        const { std::cell::Cell::new(None) };
}

impl Deep {
    fn new(c: Box<Collector>) -> Deep {
        let (mut items, mut open) = SPARE.take().unwrap_or_default();
        items.clear();
        open.clear();
        items.push(Item {
            spec: None,
            tagged: false,
            val: Val::Struct(true, 0),
            end: 0,
        });
        open.push(0);
        Deep {
            c,
            items,
            open,
            protocols: Vec::new(),
            told: 0,
        }
    }

    /// Gives the lists back to the thread, and the collector to its owner.
    fn done(self) -> Box<Collector> {
        SPARE.set(Some((self.items, self.open)));
        self.c
    }

    fn push(&mut self, spec: &'static FieldSpec, tagged: bool, val: Val) -> u32 {
        let i = self.items.len() as u32;
        self.items.push(Item {
            spec: Some(spec),
            tagged,
            val,
            end: i + 1,
        });
        self.told += 1;
        i
    }

    /// The item begun last ends, with `val` if it is a field's.
    fn end_item(&mut self, val: Option<(Val, bool)>) {
        let end = self.items.len() as u32;
        let Some(i) = self.open.pop() else {
            return;
        };
        if let Some(item) = self.items.get_mut(i as usize) {
            item.end = end;
            if let Some((val, tagged)) = val {
                item.val = val;
                item.tagged = tagged;
            }
        }
    }
}

/// Whether `val` is the value of a struct or an array whose contents were told of.
fn opened(val: Val) -> bool {
    matches!(val, Val::Struct(true, _) | Val::Array(Some(_), _))
}

impl Visit for Deep {
    const DEEP: bool = true;

    fn field(&mut self, level: usize, f: &'static FieldSpec, tagged: bool, val: Val) {
        if level < 2 {
            self.c.field(level, f, tagged, val);
        }
        if opened(val) {
            self.end_item(Some((val, tagged)));
        } else if f.facts || matches!(val, Val::Struct(..) | Val::Array(..)) {
            // The decoder's tree of the facts keeps every struct and array, and the fields
            // the facts read.
            self.push(f, tagged, val);
        } else {
            self.told += 1;
        }
    }
    fn enter(&mut self, f: &'static FieldSpec) {
        let i = self.push(f, false, Val::Other);
        self.open.push(i);
    }
    fn element(&mut self, f: &'static FieldSpec, _: usize) {
        let i = self.push(f, false, Val::Struct(true, 0));
        self.open.push(i);
    }
    fn leave(&mut self) {
        self.end_item(None);
    }
    fn item(&mut self, f: &'static FieldSpec, val: Val) {
        self.push(f, false, val);
    }
    fn records(&mut self, d: &mut Decoder<'_>, f: &'static FieldSpec) -> W {
        let from = d.batch_facts.len();
        // Decoded as the decoder decodes them (its batches' facts kept), into nodes that
        // are thrown away.
        let mut scratch = Vec::new();
        let was = std::mem::replace(&mut d.discard, false);
        let read = d.records_field(Cow::Borrowed(f.name), &mut scratch);
        d.discard = was;
        read.map_err(|_| GiveUp)?;
        self.push(f, false, Val::Records(from, d.batch_facts.len()));
        Ok(())
    }
    fn embedded(
        &mut self,
        d: &mut Decoder<'_>,
        f: &'static FieldSpec,
        data: Option<(usize, usize)>,
    ) -> W {
        if let (true, Some(span)) = (f.facts, data) {
            let protocol = consumer_protocol(d, f, span);
            // The bytes field is the next item.
            self.protocols.push((self.items.len() as u32, protocol));
        }
        Ok(())
    }

    two_levels_to_collector!();
    fn nodes(&self) -> usize {
        // An item is a node or two of the decoder's (an array's group and length), a field
        // not kept at most one: four each bounds them from above.
        self.c.nodes().saturating_add(self.told.saturating_mul(4))
    }
}

/// The consumer protocol in the bytes `(at, n)` of field `f`, read by the decoder as it reads
/// it into its tree, and the facts read from those nodes.
fn consumer_protocol(
    d: &mut Decoder<'_>,
    f: &'static FieldSpec,
    (at, n): (usize, usize),
) -> Protocol {
    let Content::Embedded(layout @ Layout::ConsumerProtocol(_)) = &f.content else {
        return Protocol::default();
    };
    let pos = d.pos;
    let was = std::mem::replace(&mut d.discard, false);
    let mut g = Node::new(f.name, "bytes", at, Region::Unparsed, NodeKind::Group);
    d.embedded(at, at + n, layout, &mut g.children);
    d.discard = was;
    d.pos = pos;
    super::tree_facts::consumer_protocol(&g)
}

/// Walks the body of `spec` with the generated walk for the facts at every depth: true if it
/// covered the body, the facts then in the decoder's collector; otherwise the decoder is as
/// it was before, for it to read the body.
pub(super) fn collect_deep(d: &mut Decoder<'_>, spec: &'static MessageSpec) -> bool {
    let Some(file) = spec.walk.filter(|_| d.opts.generated_walk) else {
        return false;
    };
    let mut v = Deep::new(Collector::take(spec.api_key, spec.direction));
    let version = d.version;
    let done = d.walked(|d| {
        walk_body(file, version, d, &mut v).unwrap_or(Err(GiveUp))?;
        d.at_end()?;
        // The metadata log's TopicRecords name topics in records, whose nodes the walk
        // throws away: the tree's way learns them.
        if d.record_types
            .types
            .iter()
            .any(|(n, _)| *n == "TopicRecord")
        {
            return Err(GiveUp);
        }
        Ok(())
    });
    if !done {
        Collector::give_back(v.done());
        return false;
    }
    // The body ends with the walk.
    let end = v.items.len() as u32;
    if let Some(body) = v.items.first_mut() {
        body.end = end;
    }
    let facts = Tree {
        items: &v.items,
        buf: d.buf,
        protocols: &v.protocols,
        batches: &d.batch_facts,
    }
    .facts(spec.api_key, spec.direction);
    let mut c = v.done();
    c.deep = Some(Box::new(facts));
    d.collector = Some(c);
    true
}

/// What the walk told, to read the facts from.
struct Tree<'a> {
    items: &'a [Item],
    buf: &'a [u8],
    protocols: &'a [(u32, Protocol)],
    batches: &'a [BatchFact],
}

/// One item of a [`Tree`].
#[derive(Clone, Copy)]
struct At<'a> {
    t: &'a Tree<'a>,
    i: u32,
}

/// APIs whose partition entries carry offsets (as `tree_facts.rs` has them).
const OFFSET_APIS: [i16; 8] = [0, 1, 2, 3, 8, 9, 78, 79];

impl<'a> Tree<'a> {
    fn at(&'a self, i: u32) -> At<'a> {
        At { t: self, i }
    }

    fn facts(&self, key: i16, direction: Direction) -> DeepFacts {
        let body = self.at(0);
        let response = direction == Direction::Response;
        let mut pairs = Vec::new();
        // Metadata, CreateTopics and DescribeTopicPartitions answers pair ids with names.
        if response && matches!(key, 3 | 19 | 75) {
            body.pairs(&mut pairs);
        }
        DeepFacts {
            offsets: offsets(body, key),
            members: members(body, key, response),
            pairs,
        }
    }
}

impl<'a> At<'a> {
    fn item(self) -> Item {
        self.t.items.get(self.i as usize).copied().unwrap_or(Item {
            spec: None,
            tagged: false,
            val: Val::Other,
            end: 0,
        })
    }

    /// Its children: the fields of a struct (tagged ones among them), the elements of an
    /// array.
    fn children(self) -> impl Iterator<Item = At<'a>> {
        let end = self.item().end;
        let mut next = self.i + 1;
        std::iter::from_fn(move || {
            if next >= end {
                return None;
            }
            let c = At { t: self.t, i: next };
            next = c.item().end.max(next + 1);
            Some(c)
        })
    }

    /// The child `is` picks: a plain field before a tagged one, the first of each.
    fn find(self, is: impl Fn(&FieldSpec) -> bool) -> Option<At<'a>> {
        let mut tagged = None;
        for c in self.children() {
            let item = c.item();
            if !item.spec.is_some_and(&is) {
                continue;
            }
            if !item.tagged {
                return Some(c);
            }
            tagged = tagged.or(Some(c));
        }
        tagged
    }

    fn fact(self, f: FactField) -> Option<At<'a>> {
        if f == FactField::None {
            return None;
        }
        self.find(|s| s.fact == f)
    }

    fn role(self, r: Role) -> Option<At<'a>> {
        if r == Role::Other {
            return None;
        }
        self.find(|s| s.role == r)
    }

    /// An integer, as the tree's `as_int` reads it (a bool is not one there).
    fn int(self) -> Option<i64> {
        let item = self.item();
        match (item.val, item.spec.map(|s| &s.ty)) {
            (_, Some(FieldType::Bool)) => None,
            (Val::Int(i), _) => Some(i),
            _ => None,
        }
    }

    fn text(self) -> Option<String> {
        match self.item().val {
            Val::Str(Some((at, n))) => {
                let bytes = self.t.buf.get(at..at.saturating_add(n)).unwrap_or(&[]);
                Some(super::cursor::lossy_text(bytes))
            }
            _ => None,
        }
    }

    fn uuid(self) -> Option<[u8; 16]> {
        match self.item().val {
            Val::Uuid(u) => Some(u),
            _ => None,
        }
    }

    fn int_of(self, f: FactField) -> Option<i64> {
        self.fact(f).and_then(At::int)
    }

    fn string(self, f: FactField) -> Option<String> {
        self.fact(f).and_then(At::text)
    }

    /// The (TopicId, Name) pairs of it and every struct below, each struct's before those
    /// below it (as the analyses' reading of the tree has them: `pairs_in`). One pass over a
    /// struct's fields a kind (plain, then tagged); fields whose structs hold no topic id
    /// (a Metadata answer's partitions, its replica lists) are not entered, and a name is
    /// shared without a string made for it.
    fn pairs(self, out: &mut Vec<([u8; 16], Name)>) {
        for tagged in [false, true] {
            let mut id = None;
            let mut name = None;
            for c in self.children() {
                let item = c.item();
                let Some(s) = item.spec.filter(|_| item.tagged == tagged) else {
                    continue;
                };
                match (s.role, item.val) {
                    (Role::TopicId, Val::Uuid(u)) if id.is_none() && u != [0; 16] => id = Some(u),
                    (Role::Name, _) if name.is_none() => name = Some(c),
                    _ => {}
                }
            }
            let name = name.and_then(At::bytes).filter(|b| !b.is_empty());
            if let (Some(id), Some(name)) = (id, name) {
                out.push((id, interned::name(name)));
            }
            for c in self.children() {
                let item = c.item();
                let inner = item.spec.is_some_and(|s| holds_topic_id(s.fields, 0));
                if item.tagged == tagged && item.end > c.i + 1 && inner {
                    c.pairs(out);
                }
            }
        }
    }

    /// The bytes of a string's value, as they are on the wire (none past the frame's end:
    /// the empty text [`At::text`] has then).
    fn bytes(self) -> Option<&'a [u8]> {
        match self.item().val {
            Val::Str(Some((at, n))) => {
                Some(self.t.buf.get(at..at.saturating_add(n)).unwrap_or(&[]))
            }
            _ => None,
        }
    }

    /// How a topic entry names its topic (as the tree's `topic_ref`).
    fn topic_ref(self) -> TopicRef {
        let name = [
            FactField::Name,
            FactField::TopicName,
            FactField::Topic,
            FactField::ResourceName,
        ]
        .iter()
        .find_map(|f| self.fact(*f).and_then(At::bytes))
        .filter(|s| !s.is_empty());
        if let Some(n) = name {
            return TopicRef::Name(interned::name(n));
        }
        let Some(id) = self.fact(FactField::TopicId) else {
            return TopicRef::Unnamed;
        };
        let Some(u) = id.uuid() else {
            return TopicRef::Unnamed;
        };
        // The decoder notes the names its record layouts give (the metadata log's).
        let layouts = crate::kafka::spec::schema::registry().record_layouts();
        let known = id.item().spec.is_some_and(|s| s.role == Role::TopicId);
        let name = known.then(|| layouts.topic_name(&u)).flatten();
        TopicRef::Id(u, name.map(interned::name_of))
    }

    /// [`At::topic_text`], shared: the name as met (no copy made), an id's hex made once for
    /// all the topic's partitions.
    fn topic_name(self) -> Name {
        match self.topic_ref() {
            TopicRef::Name(n) | TopicRef::Id(_, Some(n)) => n,
            TopicRef::Id(u, None) => Name::from(hex::encode(u)),
            TopicRef::Unnamed => interned::name_of(""),
        }
    }

    /// A topic element's name, or its id in hex when no name is known.
    fn topic_text(self) -> String {
        match self.topic_ref() {
            TopicRef::Name(n) | TopicRef::Id(_, Some(n)) => n.to_string(),
            TopicRef::Id(u, None) => hex::encode(u),
            TopicRef::Unnamed => String::new(),
        }
    }

    /// The integers of an array of them.
    fn ints(self) -> Vec<i32> {
        self.children()
            .filter_map(At::int)
            .map(|p| p as i32)
            .collect()
    }
}

/// Whether the structs of `fields` (a struct's or an array element's), or those below them,
/// have a topic id field. The specs nest a few levels; the bound keeps a spec that named
/// itself from looping.
fn holds_topic_id(fields: &[FieldSpec], depth: usize) -> bool {
    depth < 16
        && fields
            .iter()
            .any(|f| f.role == Role::TopicId || holds_topic_id(f.fields, depth + 1))
}

/// The partition entries of a message of API `key`, with their offsets.
fn offsets(body: At<'_>, key: i16) -> Vec<PartitionFact> {
    if !OFFSET_APIS.contains(&key) {
        return Vec::new();
    }
    let mut out = Vec::new();
    // OffsetFetch v8+ nests topics in groups.
    let topic_arrays: Vec<At<'_>> = match body.role(Role::Groups) {
        Some(g) if key == 9 => g
            .children()
            .filter_map(|g| g.role(Role::TopicArray))
            .collect(),
        _ => body.role(Role::TopicArray).into_iter().collect(),
    };
    for topics in topic_arrays {
        for t in topics.children() {
            let parts = [
                FactField::Partitions,
                FactField::PartitionData,
                FactField::PartitionResponses,
            ]
            .iter()
            .find_map(|n| t.fact(*n));
            let mut parts = parts.into_iter().flat_map(At::children).peekable();
            if parts.peek().is_none() {
                continue;
            }
            let topic = t.topic_name();
            let id = t
                .fact(FactField::TopicId)
                .and_then(At::uuid)
                .filter(|u| *u != [0; 16]);
            for p in parts {
                let mut f = partition_fact(&topic, p);
                f.topic_id = id;
                out.push(f);
            }
        }
    }
    out
}

/// The fact fields a partition entry is read for.
const PARTITION_FIELDS: [FactField; 16] = [
    FactField::PartitionIndex,
    FactField::Partition,
    FactField::Index,
    FactField::ErrorCode,
    FactField::FetchOffset,
    FactField::HighWatermark,
    FactField::CommittedOffset,
    FactField::BaseOffset,
    FactField::Offset,
    FactField::Timestamp,
    FactField::LeaderId,
    FactField::IsrNodes,
    FactField::ReplicaNodes,
    FactField::Records,
    FactField::AcquiredRecords,
    FactField::AcknowledgementBatches,
];

/// Each fact field's place in [`PARTITION_FIELDS`], plus one (0: not read there).
// Indexing is evaluated by the compiler here: an index out of bounds fails the build.
#[allow(clippy::indexing_slicing)]
const SLOT_OF: [u8; crate::kafka::spec::fact_field::FACT_FIELDS.len() + 1] = {
    let mut t = [0; crate::kafka::spec::fact_field::FACT_FIELDS.len() + 1];
    let mut i = 0;
    while i < PARTITION_FIELDS.len() {
        t[PARTITION_FIELDS[i] as usize] = i as u8 + 1;
        i += 1;
    }
    t
};

/// The children of a partition entry its facts read, found in one pass over them: for each
/// fact field the first plain child, else the first tagged one, as [`At::fact`] picks. A
/// search of the children for each of sixteen fields cost sixteen passes, on every one of a
/// Metadata answer's hundreds of partitions.
struct Slots<'a> {
    plain: [Option<At<'a>>; PARTITION_FIELDS.len()],
    tagged: [Option<At<'a>>; PARTITION_FIELDS.len()],
}

impl<'a> Slots<'a> {
    fn of(p: At<'a>) -> Slots<'a> {
        let mut s = Slots {
            plain: [None; PARTITION_FIELDS.len()],
            tagged: [None; PARTITION_FIELDS.len()],
        };
        for c in p.children() {
            let item = c.item();
            let Some(k) = item.spec.and_then(|f| slot_of(f.fact)) else {
                continue;
            };
            let list = if item.tagged {
                &mut s.tagged
            } else {
                &mut s.plain
            };
            if let Some(slot @ None) = list.get_mut(k) {
                *slot = Some(c);
            }
        }
        s
    }

    fn get(&self, f: FactField) -> Option<At<'a>> {
        let k = slot_of(f)?;
        let plain = self.plain.get(k).copied().flatten();
        plain.or_else(|| self.tagged.get(k).copied().flatten())
    }

    fn int(&self, f: FactField) -> Option<i64> {
        self.get(f).and_then(At::int)
    }
}

/// The place of `f` in [`PARTITION_FIELDS`].
fn slot_of(f: FactField) -> Option<usize> {
    usize::from(*SLOT_OF.get(f as usize)?).checked_sub(1)
}

fn partition_fact(topic: &Name, p: At<'_>) -> PartitionFact {
    let s = Slots::of(p);
    let ranges = [
        FactField::AcquiredRecords,
        FactField::AcknowledgementBatches,
    ]
    .iter()
    .filter_map(|n| s.get(*n))
    .flat_map(At::children)
    .filter_map(|r| {
        Some((
            r.int_of(FactField::FirstOffset)?,
            r.int_of(FactField::LastOffset)?,
        ))
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
        .find_map(|n| s.int(*n))
        .unwrap_or(-1) as i32,
        error: s.int(FactField::ErrorCode).unwrap_or(0) as i16,
        fetch_offset: s.int(FactField::FetchOffset),
        high_watermark: s
            .int(FactField::HighWatermark)
            .filter(|_| s.get(FactField::FetchOffset).is_none()),
        committed_offset: s.int(FactField::CommittedOffset),
        base_offset: s.int(FactField::BaseOffset),
        offset: s.int(FactField::Offset),
        timestamp: s.int(FactField::Timestamp),
        leader: s.int(FactField::LeaderId).map(|l| l as i32),
        isr: s.get(FactField::IsrNodes).map(broker_ids),
        replicas: s.get(FactField::ReplicaNodes).map(broker_ids),
        topic_id: None,
        ranges,
        batches: s
            .get(FactField::Records)
            .map(|r| batches(r))
            .unwrap_or_default(),
    }
}

/// The first broker ids of an int32 array (a partition's replicas).
fn broker_ids(a: At<'_>) -> BrokerIds {
    a.children()
        .filter_map(|b| b.int().and_then(|i| i32::try_from(i).ok()))
        .take(MAX_REPLICAS)
        .collect()
}

/// The batches a records field held.
fn batches(records: At<'_>) -> Vec<BatchFact> {
    match records.item().val {
        Val::Records(from, to) => records.t.batches.get(from..to).unwrap_or(&[]).to_vec(),
        _ => Vec::new(),
    }
}

/// (topic, partitions) of a topic-partition list.
fn topic_partitions(arr: At<'_>) -> Vec<(String, Vec<i32>)> {
    arr.children()
        .map(|t| {
            let parts = t
                .fact(FactField::Partitions)
                .map(At::ints)
                .unwrap_or_default();
            (t.topic_text(), parts)
        })
        .collect()
}

/// The consumer protocol its bytes held, decoded when the walk met them.
fn protocol(bytes: At<'_>) -> Protocol {
    bytes
        .t
        .protocols
        .iter()
        .find(|(i, _)| *i == bytes.i)
        .map(|(_, p)| p.clone())
        .unwrap_or_default()
}

/// A streams group member's tasks (as `tree_facts.rs` reads them).
fn streams_tasks(body: At<'_>) -> Option<Vec<(&'static str, String, Vec<i32>)>> {
    let kinds = [
        ("active", FactField::ActiveTasks),
        ("standby", FactField::StandbyTasks),
        ("warmup", FactField::WarmupTasks),
    ];
    let lists: Vec<(&'static str, At<'_>)> = kinds
        .iter()
        .filter_map(|(k, f)| body.fact(*f).map(|l| (*k, l)))
        .filter(|(_, l)| matches!(l.item().val, Val::Array(Some(_), _)))
        .collect();
    if lists.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for (kind, l) in lists {
        for t in l.children() {
            let parts = t
                .fact(FactField::Partitions)
                .map(At::ints)
                .unwrap_or_default();
            let sub = t.string(FactField::SubtopologyId).unwrap_or_default();
            out.push((kind, sub, parts));
        }
    }
    Some(out)
}

/// Members named with their partitions (as `tree_facts.rs` reads them).
fn members(body: At<'_>, key: i16, response: bool) -> Vec<MemberFact> {
    let list = match (key, response) {
        (11, true) => body.fact(FactField::Members),
        (14, false) => body.fact(FactField::Assignments),
        (13, false) => body.fact(FactField::Members),
        _ => None,
    };
    if let Some(l) = list {
        return l
            .children()
            .map(|m| {
                let data = m
                    .fact(FactField::Metadata)
                    .or_else(|| m.fact(FactField::Assignment));
                let (subscribed, partitions) = data.map(protocol).unwrap_or_default();
                MemberFact {
                    member_id: m.string(FactField::MemberId).unwrap_or_default(),
                    subscribed,
                    partitions,
                    instance_id: m
                        .string(FactField::GroupInstanceId)
                        .filter(|s| !s.is_empty()),
                    tasks: Vec::new(),
                }
            })
            .collect();
    }
    let own = match (key, response) {
        (14, true) => body.fact(FactField::Assignment).map(protocol),
        (68 | 76, true) => body
            .fact(FactField::Assignment)
            .filter(|a| matches!(a.item().val, Val::Struct(true, _)))
            .map(|a| {
                let parts = a.fact(FactField::TopicPartitions).map(topic_partitions);
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
