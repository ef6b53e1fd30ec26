//! The facts of a message gathered while its body is walked, without building a node: what
//! the summary and the statistics print, for most messages, at a fraction of the cost of
//! building the body's first two levels as nodes and reading them back.
//!
//! The walk reports every field of the levels a summary keeps (the body's fields, and the
//! fields of the structs and array elements just below it) that the facts read by fact or by
//! role. The collector keeps, for each of those structs, the first field of each fact and role
//! (plain fields before tagged ones, as the tree's index has it), and for each array of the
//! body what the facts take from its elements. [`Collector::facts`] then answers as
//! [`super::tree_facts::collect_body`] does on the tree; tests/facts_walk.rs holds the two equal on
//! every frame of every sample.
//!
//! Messages where the decoder would note a problem, or that hold what only the decoder reads
//! (SASL exchanges, embedded messages, records in the levels kept), keep the tree's way: the
//! walk gives up and the decoder reads the body as before. Group members and their consumer
//! protocol are not gathered here: only the analyses read them, and they decode the tree.

use super::cursor::Prefix;
use super::decode::Decoder;
use super::interpreted::GiveUp;
use crate::kafka::meaning::essentials::{self, Entries, Fields, Id, ListPick};
use crate::kafka::meaning::facts::{
    FactField, Facts, GroupFacts, Name, Scalar, TopicFact, TopicList, TopicRef, IDENTITY,
    MAX_TOPICS,
};
use crate::kafka::meaning::interned;
use crate::kafka::meaning::problem::Step;
use crate::kafka::spec::schema::{Direction, FieldId, FieldSpec, FieldType, MessageSpec, Role};

/// Levels of the body the collector reads: the body's fields and those one level down, as
/// the summary's decoding keeps them.
const KEPT: usize = 2;

/// A value the facts may read, as the walk met it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Val {
    Int(i64),
    /// A string's bytes in the frame: (offset, length); `None` for null.
    Str(Option<(usize, usize)>),
    Uuid([u8; 16]),
    /// An array's element count (`None`: null), and for an array of the body the index of
    /// what its elements gave.
    Array(Option<usize>, usize),
    /// A struct, present or null, and for a struct of the body the index of its fields.
    Struct(bool, usize),
    /// A bytes value's span in the frame; `None` for null.
    Bytes(Option<(usize, usize)>),
    /// Batches `from..to` of the decoder's batch facts, which a records field held.
    Records(usize, usize),
    /// A value of another type (a float, bytes the walk does not locate).
    Other,
}

/// One field of a struct the facts may read.
#[derive(Debug, Clone, Copy)]
struct Slot {
    spec: &'static FieldSpec,
    fact: FactField,
    role: Role,
    tagged: bool,
    val: Val,
}

/// Slots a frame indexes by fact and by role: one for each fact field, and `FactField::None`.
const FACTS: usize = crate::kafka::spec::fact_field::FACT_FIELDS.len() + 1;

/// The fields of one struct the facts may read, in the order met, with the first of each
/// fact and role indexed (one more than its slot; 0 for none): the facts ask a body for some
/// thirty fields, and a scan for each cost more than the walk.
#[derive(Debug, Clone)]
struct Frame {
    slots: Vec<Slot>,
    by_fact: [u8; FACTS],
    by_role: [u8; Role::COUNT],
    /// Fields walked in it (kept or not): what the decoder's node budget would count.
    fields: usize,
}

impl Default for Frame {
    fn default() -> Frame {
        Frame {
            slots: Vec::new(),
            by_fact: [0; FACTS],
            by_role: [0; Role::COUNT],
            fields: 0,
        }
    }
}

impl Frame {
    fn clear(&mut self) {
        self.slots.clear();
        self.by_fact = [0; FACTS];
        self.by_role = [0; Role::COUNT];
        self.fields = 0;
    }

    fn push(&mut self, slot: Slot) {
        // A struct has far fewer fields than this; past it, fields are not indexed.
        let Ok(n) = u8::try_from(self.slots.len() + 1) else {
            return;
        };
        if let Some(i @ 0) = self.by_fact.get_mut(slot.fact as usize) {
            *i = n;
        }
        if let Some(i @ 0) = self.by_role.get_mut(slot.role as usize) {
            *i = n;
        }
        self.slots.push(slot);
    }

    fn at(&self, i: u8) -> Option<Val> {
        let i = usize::from(i).checked_sub(1)?;
        self.slots.get(i).map(|s| s.val)
    }

    fn fact(&self, f: FactField) -> Option<Val> {
        if f == FactField::None {
            return None;
        }
        self.at(*self.by_fact.get(f as usize)?)
    }

    fn fact_slot(&self, f: FactField) -> Option<&Slot> {
        let i = usize::from(*self.by_fact.get(f as usize)?).checked_sub(1)?;
        self.slots.get(i)
    }

    fn role(&self, r: Role) -> Option<Val> {
        if r == Role::Other {
            return None;
        }
        self.at(*self.by_role.get(r as usize)?)
    }

    fn int(&self, f: FactField) -> Option<i64> {
        int(self.fact(f))
    }

    /// The field (of `f`, or `r`) of a slot, to name an array a list is of.
    fn field_of(&self, f: FactField, r: Role) -> Option<FieldId> {
        let i = if f == FactField::None {
            *self.by_role.get(r as usize)?
        } else {
            *self.by_fact.get(f as usize)?
        };
        let i = usize::from(i).checked_sub(1)?;
        self.slots.get(i).map(|s| FieldId::of(s.spec))
    }

    /// The first plain field with `role`, as the topic names learn it.
    fn plain_role(&self, r: Role) -> Option<Val> {
        self.slots
            .iter()
            .find(|s| !s.tagged && s.role == r)
            .map(|s| s.val)
    }
}

fn int(v: Option<Val>) -> Option<i64> {
    match v {
        Some(Val::Int(i)) => Some(i),
        _ => None,
    }
}

fn array_len(v: Option<Val>) -> Option<usize> {
    match v {
        Some(Val::Array(n, _)) => n,
        _ => None,
    }
}

/// What the elements of one array of the body gave.
#[derive(Debug, Default, Clone)]
struct Elements {
    /// The first few elements as topics.
    first: Vec<TopicFact>,
    /// Elements met (each string counted in `strings` too).
    met: usize,
    /// Partition entries of its elements' partition arrays.
    partitions: usize,
    any_resource_name: bool,
    /// The array's role: what else its elements are read for.
    role: Role,
    /// Its elements are read as topics (the topic array, or resources and results, which may
    /// name topics): only then do the first ones and their partitions count.
    topics: bool,
    strings: Vec<String>,
    advertised: Vec<(i16, i64, i64)>,
    node_ids: Vec<i64>,
    /// How the API's line lists it, and what its entries gave.
    pick: Option<&'static ListPick>,
    entries: Entries,
}

/// Where the fields being walked at the second level go.
#[derive(Debug, Clone, Copy)]
enum Open {
    /// An element of the body's array `n`.
    Element(usize),
    /// The fields of the body's struct `n`.
    Struct(usize),
}

/// The facts of one message as its body is walked.
#[derive(Debug)]
pub(crate) struct Collector {
    direction: Direction,
    api_key: i16,
    body: Frame,
    /// The second-level struct being walked.
    inner: Frame,
    open: Option<Open>,
    /// The body's arrays met, the first `arrays_met` of `arrays` (the rest are kept from
    /// earlier messages for their allocations).
    arrays: Vec<Elements>,
    arrays_met: usize,
    structs: Vec<Frame>,
    structs_met: usize,
    /// Whether (TopicId, Name) pairs are learnt from this message.
    learns: bool,
    pairs: Vec<([u8; 16], Name)>,
    /// An upper bound of the nodes the decoder would have counted for the elements kept so
    /// far, to give up before its node budget would have left one out.
    nodes: usize,
    /// The facts below the body's first two levels, where the body was walked at every
    /// depth for them (the analyses': src/kafka/walk/deep.rs).
    pub(super) deep: Option<Box<super::deep::DeepFacts>>,
}

thread_local! {
    /// A collector kept between messages: its lists are allocated once per thread rather than
    /// once per message (they cost more than the walk of a small message).
    static SPARE: std::cell::Cell<Option<Box<Collector>>> = const { std::cell::Cell::new(None) };
}

impl Elements {
    fn reset(&mut self, role: Role, topics: bool) {
        self.role = role;
        self.topics = topics;
        self.first.clear();
        self.met = 0;
        self.partitions = 0;
        self.any_resource_name = false;
        self.strings.clear();
        self.advertised.clear();
        self.node_ids.clear();
        self.pick = None;
        self.entries.clear();
    }
}

impl Collector {
    /// A collector for a message of `api_key` and `direction`: the thread's spare one, if
    /// it has one. [`Collector::give_back`] returns it.
    pub(super) fn take(api_key: i16, direction: Direction) -> Box<Collector> {
        let mut c = SPARE.take().unwrap_or_else(|| {
            Box::new(Collector {
                direction,
                api_key,
                body: Frame::default(),
                inner: Frame::default(),
                open: None,
                arrays: Vec::new(),
                arrays_met: 0,
                structs: Vec::new(),
                structs_met: 0,
                learns: false,
                pairs: Vec::new(),
                nodes: 0,
                deep: None,
            })
        });
        c.deep = None;
        c.direction = direction;
        c.api_key = api_key;
        c.body.clear();
        c.inner.clear();
        c.open = None;
        c.arrays_met = 0;
        c.structs_met = 0;
        // Metadata, CreateTopics and DescribeTopicPartitions answers pair ids with names.
        c.learns = direction == Direction::Response && matches!(api_key, 3 | 19 | 75);
        c.pairs.clear();
        c.nodes = 0;
        c
    }

    /// Keeps `c` for the thread's next message.
    pub(crate) fn give_back(c: Box<Collector>) {
        SPARE.set(Some(c));
    }

    fn frame(&mut self, level: usize) -> &mut Frame {
        if level == 0 {
            &mut self.body
        } else {
            &mut self.inner
        }
    }

    /// A field walked at `level` (0 the body's, 1 the next), with its value.
    pub(super) fn field(&mut self, level: usize, f: &'static FieldSpec, tagged: bool, val: Val) {
        let frame = self.frame(level);
        frame.fields += 1;
        if f.facts {
            frame.push(Slot {
                spec: f,
                fact: f.fact,
                role: f.role,
                tagged,
                val,
            });
        }
    }

    /// An array of the body begins: the index its value refers to.
    pub(super) fn body_array(&mut self, f: &'static FieldSpec) -> usize {
        let n = self.arrays_met;
        let topics = f.role == Role::TopicArray
            || matches!(f.fact, FactField::Resources | FactField::Results);
        match self.arrays.get_mut(n) {
            Some(a) => a.reset(f.role, topics),
            None => self.arrays.push(Elements {
                role: f.role,
                topics,
                ..Elements::default()
            }),
        }
        if let Some(a) = self.arrays.get_mut(n) {
            a.pick = essentials::list_pick(self.api_key, self.direction, f.fact)
                .filter(|_| f.fact != FactField::None);
        }
        self.arrays_met += 1;
        n
    }

    /// A struct of the body is present: its fields follow.
    pub(super) fn open_struct(&mut self) -> usize {
        let n = self.structs_met;
        if n == self.structs.len() {
            self.structs.push(Frame::default());
        }
        self.structs_met += 1;
        self.open = Some(Open::Struct(n));
        self.inner.clear();
        n
    }

    /// A struct element of the body's array `array` begins.
    pub(super) fn open_element(&mut self, array: usize) {
        self.open = Some(Open::Element(array));
        self.inner.clear();
    }

    /// The second-level struct ends: what it gave goes where it belongs.
    pub(super) fn close(&mut self, buf: &[u8]) {
        self.learn(buf);
        let own = 2 + 3 * self.inner.fields;
        match self.open.take() {
            Some(Open::Struct(n)) => {
                if let Some(s) = self.structs.get_mut(n) {
                    std::mem::swap(s, &mut self.inner);
                }
            }
            Some(Open::Element(n)) => {
                self.nodes = self.nodes.saturating_add(own);
                if let Some(a) = self.arrays.get_mut(n) {
                    element(a, &self.inner, buf);
                    if let Some(pick) = a.pick {
                        let e = InBuf(&self.inner, buf);
                        a.entries.element(pick, &e);
                    }
                }
            }
            None => {}
        }
    }

    /// A scalar element of the body's array `array`: its string, if it is one.
    pub(super) fn scalar_element(
        &mut self,
        array: usize,
        s: Option<Option<(usize, usize)>>,
        buf: &[u8],
    ) {
        self.nodes = self.nodes.saturating_add(1);
        let Some(a) = self.arrays.get_mut(array) else {
            return;
        };
        a.met += 1;
        if a.first.len() < MAX_TOPICS {
            a.first.push(TopicFact::new(TopicRef::Unnamed, None));
        }
        let wants = matches!(
            a.role,
            Role::Mechanisms | Role::CoordinatorKeys | Role::TopicNames
        );
        if let (true, Some(Some(span))) = (wants, s) {
            a.strings.push(text(buf, span));
        }
        if let Some(pick) = a.pick {
            let s = match s {
                Some(Some(span)) if pick.id == Id::Scalar => Some(text(buf, span)),
                _ => None,
            };
            a.entries.scalar(pick, s);
        }
    }

    /// A tagged section of `count` fields at `level`: what the decoder's node budget counts.
    pub(super) fn tagged_count(&mut self, level: usize, count: usize) {
        self.frame(level).fields += count;
    }

    /// Nodes the decoder would have counted against its budget so far, at most.
    pub(super) fn nodes(&self) -> usize {
        self.nodes
    }

    /// The (TopicId, Name) pairs of the second-level struct, and of the body when it ends.
    fn learn(&mut self, buf: &[u8]) {
        if !self.learns {
            return;
        }
        if let Some(pair) = pair(&self.inner, buf) {
            self.pairs.push(pair);
        }
    }

    /// The (TopicId, Name) pairs learnt, the body's first.
    pub(crate) fn take_pairs(&mut self, buf: &[u8]) -> Vec<([u8; 16], Name)> {
        // Walked at every depth: the pairs of every struct.
        if let Some(deep) = self.deep.as_mut() {
            return std::mem::take(&mut deep.pairs);
        }
        let mut pairs = Vec::new();
        if self.learns {
            pairs.extend(pair(&self.body, buf));
        }
        pairs.append(&mut self.pairs);
        pairs
    }

    /// The facts, as [`super::tree_facts::collect_body`] gives them from the tree of the first two
    /// levels; `buf` is the frame the strings lie in.
    /// Written into `f`, a message's facts as [`Facts::default`] made them, field by field: a
    /// `Facts` made here and moved into the message's box was copied twice (two of the five
    /// copies of a frame's decoding, each a few hundred bytes).
    pub(crate) fn fill_facts(&mut self, f: &mut Facts, buf: &[u8], api_version: Option<i16>) {
        let b = &self.body;
        let response = self.direction == Direction::Response;
        let key = self.api_key;
        let strings = |v: Option<Val>| self.strings(v);
        f.identity = identity(b, buf);
        f.partitions = self
            .elements(b.role(Role::TopicArray))
            .map_or(0, |a| a.partitions);
        f.cursor = self.cursor(b.fact(FactField::Cursor), buf);
        f.next_cursor = self.cursor(b.fact(FactField::NextCursor), buf);
        f.mechanism = str_of(b.role(Role::Mechanism), buf);
        f.mechanisms = strings(b.role(Role::Mechanisms));
        f.coordinator_keys = strings(b.role(Role::CoordinatorKeys));
        f.throttle_ms = int(b.role(Role::ThrottleTime));
        f.topic_names = self.name_list(b.role(Role::TopicNames)).map(|mut l| {
            l.field = b.field_of(FactField::None, Role::TopicNames);
            l
        });
        f.replica_id = int(b.role(Role::ReplicaId)).or_else(|| {
            self.inner_frame(b.fact(FactField::ReplicaState))
                .and_then(|r| int(r.role(Role::ReplicaId)))
        });
        f.max_wait_ms = b.int(FactField::MaxWaitMs);
        f.group = group_facts(b, buf);
        if response {
            f.error = b
                .int(FactField::ErrorCode)
                .filter(|c| *c != 0)
                .map(|c| c as i16);
            f.brokers = array_len(b.role(Role::Brokers));
            f.cluster_id = str_of(b.role(Role::ClusterId), buf);
            f.api_count = array_len(b.role(Role::ApiKeys));
            if key == 18 {
                f.advertised = self
                    .elements(b.role(Role::ApiKeys))
                    .map(|a| a.advertised.clone());
            }
        } else {
            f.software = str_of(b.fact(FactField::ClientSoftwareName), buf)
                .zip(str_of(b.fact(FactField::ClientSoftwareVersion), buf));
        }
        if key == 10 && response {
            f.coordinator = int(b.role(Role::NodeId));
            f.coordinators = self
                .elements(b.role(Role::Coordinators))
                .map(|a| a.node_ids.clone());
        }
        if let Some(t) = b.role(Role::TopicArray) {
            let empty_means_all = !response && key == 3 && api_version == Some(0);
            let mut list = self.topic_list(t, response, empty_means_all);
            list.field = b.field_of(FactField::None, Role::TopicArray);
            f.topics = Some(list);
        }
        let resources = [FactField::Resources, FactField::Results]
            .into_iter()
            .find_map(|x| b.fact(x).map(|v| (x, v)));
        if let Some((x, r)) = resources {
            if self.elements(Some(r)).is_some_and(|a| a.any_resource_name) {
                let mut list = self.topic_list(r, response, false);
                list.field = b.field_of(x, Role::Other);
                f.resources = Some(list);
            }
        }
        let picks = essentials::picks(key, self.direction);
        let body = InBuf(b, buf);
        let (line, error_none) = essentials::gather(picks, &body, &mut |l: &ListPick| {
            self.elements(b.fact(l.array)).map(|a| a.entries.clone())
        });
        f.line = line;
        f.error_none = error_none;
        if let Some(deep) = self.deep.as_mut() {
            f.offsets = std::sync::Arc::new(std::mem::take(&mut deep.offsets));
            f.members = std::mem::take(&mut deep.members);
        }
    }

    fn elements(&self, v: Option<Val>) -> Option<&Elements> {
        match v {
            Some(Val::Array(_, n)) if n < self.arrays_met => self.arrays.get(n),
            _ => None,
        }
    }

    fn inner_frame(&self, v: Option<Val>) -> Option<&Frame> {
        match v {
            Some(Val::Struct(true, n)) if n < self.structs_met => self.structs.get(n),
            _ => None,
        }
    }

    /// A list of strings (`Some` wherever the field is, as the tree's reading has it).
    fn strings(&self, v: Option<Val>) -> Option<Vec<String>> {
        v.map(|v| {
            self.elements(Some(v))
                .map(|a| a.strings.clone())
                .unwrap_or_default()
        })
    }

    fn name_list(&self, v: Option<Val>) -> Option<TopicList> {
        let names = self.strings(v)?;
        Some(TopicList {
            all: false,
            total: names.len(),
            first: names
                .into_iter()
                .take(MAX_TOPICS)
                .map(|n| TopicFact::new(TopicRef::Name(interned::name_of(&n)), None))
                .collect(),
            field: None,
        })
    }

    fn topic_list(&self, v: Val, with_errors: bool, empty_means_all: bool) -> TopicList {
        let all = match v {
            Val::Array(None, _) => true,
            Val::Array(Some(0), _) => empty_means_all,
            _ => false,
        };
        if all {
            return TopicList {
                all: true,
                ..TopicList::default()
            };
        }
        let a = self.elements(Some(v));
        let first = a.map_or_else(Vec::new, |a| {
            a.first
                .iter()
                .map(|t| TopicFact::new(t.topic.clone(), t.error.filter(|_| with_errors)))
                .collect()
        });
        TopicList {
            all: false,
            first,
            total: array_len(Some(v)).unwrap_or_else(|| a.map_or(0, |a| a.met)),
            field: None,
        }
    }

    fn cursor(&self, v: Option<Val>, buf: &[u8]) -> Option<(String, i64)> {
        let c = self.inner_frame(v)?;
        Some((
            str_of(c.fact(FactField::TopicName), buf).unwrap_or_else(|| "?".into()),
            c.int(FactField::PartitionIndex).unwrap_or(-1),
        ))
    }
}

/// What one element (a struct) of a body array gives its array.
fn element(a: &mut Elements, e: &Frame, buf: &[u8]) {
    a.met += 1;
    if a.topics {
        topic_element(a, e, buf);
    }
    match a.role {
        Role::ApiKeys => {
            let get = |f: FactField| e.int(f);
            if let (Some(k), Some(min), Some(max)) = (
                get(FactField::ApiKey),
                get(FactField::MinVersion),
                get(FactField::MaxVersion),
            ) {
                a.advertised.push((k as i16, min, max));
            }
        }
        Role::Coordinators => a.node_ids.extend(int(e.role(Role::NodeId))),
        _ => {}
    }
}

/// What an element of an array read as topics gives it: the topic (among the first few) with
/// its error, its partitions, whether it names a resource.
fn topic_element(a: &mut Elements, e: &Frame, buf: &[u8]) {
    if a.first.len() < MAX_TOPICS {
        let error = e
            .int(FactField::ErrorCode)
            .filter(|c| *c != 0)
            .map(|c| c as i16);
        a.first.push(TopicFact::new(topic_ref(e, buf), error));
    }
    a.partitions += [
        FactField::Partitions,
        FactField::PartitionData,
        FactField::PartitionResponses,
        FactField::PartitionIndexes,
    ]
    .iter()
    .find_map(|f| e.fact(*f))
    .and_then(|v| array_len(Some(v)))
    .unwrap_or(0);
    a.any_resource_name |= e.fact(FactField::ResourceName).is_some();
}

/// A struct's slots and the frame its strings lie in, as the essentials read them.
struct InBuf<'a>(&'a Frame, &'a [u8]);

impl Fields for InBuf<'_> {
    fn int(&self, f: FactField) -> Option<i64> {
        self.0.int(f)
    }

    fn text(&self, f: FactField) -> Option<Option<String>> {
        match self.0.fact(f)? {
            Val::Str(Some(span)) => Some(Some(text(self.1, span))),
            Val::Str(None) => Some(None),
            _ => None,
        }
    }

    fn name(&self, f: FactField) -> Option<Option<Name>> {
        match self.0.fact(f)? {
            Val::Str(Some(span)) => Some(Some(name_at(self.1, span))),
            Val::Str(None) => Some(None),
            _ => None,
        }
    }

    fn uuid(&self, f: FactField) -> Option<[u8; 16]> {
        match self.0.fact(f)? {
            Val::Uuid(u) => Some(u),
            _ => None,
        }
    }

    fn len(&self, f: FactField) -> Option<Option<usize>> {
        match self.0.fact(f)? {
            Val::Array(n, _) => Some(n),
            _ => None,
        }
    }

    fn field(&self, f: FactField) -> Option<FieldId> {
        self.0.field_of(f, Role::Other)
    }

    fn topic(&self) -> TopicRef {
        topic_ref(self.0, self.1)
    }
}

/// How an element names its topic (as the tree's `topic_ref`).
fn topic_ref(t: &Frame, buf: &[u8]) -> TopicRef {
    let name = [
        FactField::Name,
        FactField::TopicName,
        FactField::Topic,
        FactField::ResourceName,
    ]
    .iter()
    .find_map(|f| match t.fact(*f) {
        Some(Val::Str(Some(span))) => Some(span),
        _ => None,
    })
    .filter(|span| span.1 > 0);
    if let Some(span) = name {
        return TopicRef::Name(name_at(buf, span));
    }
    match t.fact(FactField::TopicId) {
        Some(Val::Uuid(u)) => {
            // The decoder notes the names its record layouts give (the metadata log's).
            let layouts = crate::kafka::spec::schema::registry().record_layouts();
            let known = t
                .fact_slot(FactField::TopicId)
                .is_some_and(|s| s.role == Role::TopicId);
            let name = known.then(|| layouts.topic_name(&u)).flatten();
            TopicRef::Id(u, name.map(interned::name_of))
        }
        _ => TopicRef::Unnamed,
    }
}

fn identity(b: &Frame, buf: &[u8]) -> Vec<(&'static str, Scalar)> {
    IDENTITY
        .iter()
        .filter_map(|(f, label)| {
            let v = match b.fact(*f)? {
                Val::Str(Some(span)) if span.1 > 0 => Scalar::Str(text(buf, span)),
                Val::Int(i) => Scalar::Int(i),
                _ => return None,
            };
            Some((*label, v))
        })
        .collect()
}

/// A (TopicId, Name) pair of one struct: its first plain fields of those roles.
fn pair(f: &Frame, buf: &[u8]) -> Option<([u8; 16], Name)> {
    let id = match f.plain_role(Role::TopicId)? {
        Val::Uuid(u) if u != [0; 16] => u,
        _ => return None,
    };
    match f.plain_role(Role::Name) {
        Some(Val::Str(Some(span))) if span.1 > 0 => Some((id, name_at(buf, span))),
        _ => None,
    }
}

/// A string value's text, as the decoder makes it (invalid UTF-8 replaced).
/// The sender's membership details a group API gives, as the tree's way reads them.
fn group_facts(b: &Frame, buf: &[u8]) -> GroupFacts {
    let nonempty = |f: FactField| str_of(b.fact(f), buf).filter(|s| !s.is_empty());
    GroupFacts {
        instance_id: nonempty(FactField::GroupInstanceId)
            .or_else(|| nonempty(FactField::InstanceId)),
        leader: nonempty(FactField::Leader),
        session_timeout_ms: b.int(FactField::SessionTimeoutMs),
        rebalance_timeout_ms: b.int(FactField::RebalanceTimeoutMs),
        heartbeat_interval_ms: b.int(FactField::HeartbeatIntervalMs),
    }
}

fn str_of(v: Option<Val>, buf: &[u8]) -> Option<String> {
    match v {
        Some(Val::Str(Some(span))) => Some(text(buf, span)),
        _ => None,
    }
}

/// A topic name's text: made once a run ([`interned`]), not once a message.
fn name_at(buf: &[u8], (at, n): (usize, usize)) -> Name {
    interned::name(buf.get(at..at.saturating_add(n)).unwrap_or(&[]))
}

fn text(buf: &[u8], (at, n): (usize, usize)) -> String {
    let bytes = buf.get(at..at.saturating_add(n)).unwrap_or(&[]);
    super::cursor::lossy_text(bytes)
}

/// The walk's side: what it reports, and where it gives up for the collector's sake.
impl Decoder<'_> {
    /// Whether the field about to be walked lies in the levels the collector reads.
    pub(super) fn collects_here(&self) -> bool {
        self.collector.is_some() && self.level < KEPT
    }

    /// Walks the body of `spec` for the collector: true if it covered every byte to the
    /// frame's end; otherwise the decoder is as it was before, for it to read the body.
    pub(super) fn collect_body(&mut self, spec: &'static MessageSpec) -> bool {
        // The analyses' decoding: the facts at every depth, where no tree is wanted.
        if self.opts.facts_only
            && self.opts.walk_facts
            && self.opts.deep_facts
            && self.opts.keep_depth == usize::MAX
            && self.depth == 0
        {
            return super::deep::collect_deep(self, spec);
        }
        let wanted = self.opts.facts_only
            && self.opts.walk_facts
            && self.opts.keep_depth == KEPT
            && self.depth == 0;
        if !wanted {
            return false;
        }
        let mut c = Collector::take(spec.api_key, spec.direction);
        let generated = spec.walk.filter(|_| self.opts.generated_walk);
        let version = self.version;
        // The generated walk, where there is one; else the spec interpreted, which reports
        // to the decoder's collector.
        let done = match generated {
            Some(file) => self.walked(|d| {
                super::generated::walk_body(file, version, d, &mut *c).unwrap_or(Err(GiveUp))?;
                d.at_end()
            }),
            None => {
                self.collector = Some(c);
                let done = self.walked(|d| {
                    d.walk_fields(spec.fields)?;
                    d.at_end()
                });
                match self.collector.take() {
                    Some(taken) => c = taken,
                    None => return false,
                }
                done
            }
        };
        if done {
            self.collector = Some(c);
        } else {
            Collector::give_back(c);
        }
        done
    }

    /// Whether the walk left the decoder at the end of what it walks.
    pub(super) fn at_end(&self) -> Result<(), GiveUp> {
        if self.pos == self.end {
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    /// A field of the levels the collector reads: walked, and its value reported.
    pub(super) fn collect_field(
        &mut self,
        f: &'static FieldSpec,
        nullable: bool,
        tagged: bool,
    ) -> Result<(), GiveUp> {
        let level = self.level;
        let val = match &f.ty {
            FieldType::String => Val::Str(self.walk_string(nullable, Some(f))?),
            // A records field this high keeps its batches' facts in the tree's way.
            FieldType::Records => return Err(GiveUp),
            FieldType::Struct(_) => self.collect_struct(f, nullable)?,
            FieldType::Array(inner) => self.collect_array(inner, nullable, f)?,
            ty => {
                let at = self.pos;
                self.walk_value(ty, nullable, Some(f))?;
                fixed_value(ty, self.slice(at, self.pos - at))
            }
        };
        if let Some(c) = self.collector.as_mut() {
            c.field(level, f, tagged, val);
        }
        Ok(())
    }

    fn collect_struct(&mut self, f: &'static FieldSpec, nullable: bool) -> Result<Val, GiveUp> {
        if !self.walk_presence(nullable)? {
            return Ok(Val::Struct(false, 0));
        }
        if self.level > 0 {
            self.walk_struct_fields(f)?;
            return Ok(Val::Struct(true, 0));
        }
        let n = self.collector.as_mut().map_or(0, |c| c.open_struct());
        self.walk_struct_fields(f)?;
        let buf = self.buf;
        if let Some(c) = self.collector.as_mut() {
            c.close(buf);
        }
        Ok(Val::Struct(true, n))
    }

    fn collect_array(
        &mut self,
        inner: &FieldType,
        nullable: bool,
        f: &'static FieldSpec,
    ) -> Result<Val, GiveUp> {
        let len = self.walk_length(Prefix::Int32, "array", nullable)?;
        if self.level > 0 {
            if let Some(n) = len {
                self.walk_elements(inner, Some(f), n)?;
            }
            return Ok(Val::Array(len, 0));
        }
        let idx = self.collector.as_mut().map_or(0, |c| c.body_array(f));
        if let Some(n) = len {
            // Past the limit the decoder leaves elements out of the tree: its way.
            if n > self.opts.max_elements {
                return Err(GiveUp);
            }
            self.collect_elements(inner, f, idx, n)?;
        }
        Ok(Val::Array(len, idx))
    }

    /// The elements of the body's array `idx`.
    fn collect_elements(
        &mut self,
        inner: &FieldType,
        f: &'static FieldSpec,
        idx: usize,
        count: usize,
    ) -> Result<(), GiveUp> {
        let buf = self.buf;
        for i in 0..count {
            // Near the node budget the decoder would leave elements out: its way.
            let spent = self.collector.as_ref().map_or(0, |c| c.nodes());
            if self.spent.nodes.saturating_add(spent) >= self.opts.max_nodes {
                return Err(GiveUp);
            }
            self.push_step(Step::Index(i as u32));
            match inner {
                FieldType::Struct(_) => {
                    if let Some(c) = self.collector.as_mut() {
                        c.open_element(idx);
                    }
                    self.walk_struct(f, false)?;
                    if let Some(c) = self.collector.as_mut() {
                        c.close(buf);
                    }
                }
                FieldType::String => {
                    let s = self.walk_string(false, None)?;
                    if let Some(c) = self.collector.as_mut() {
                        c.scalar_element(idx, Some(s), buf);
                    }
                }
                other => {
                    self.walk_value(other, false, None)?;
                    if let Some(c) = self.collector.as_mut() {
                        c.scalar_element(idx, None, buf);
                    }
                }
            }
            self.pop_step();
        }
        Ok(())
    }

    /// A tagged section of the levels the collector reads, of `count` fields.
    pub(super) fn collect_tagged_count(&mut self, count: usize) -> Result<(), GiveUp> {
        // Past the limit the decoder sums tagged fields up in one node: its way.
        if count > self.opts.max_elements {
            return Err(GiveUp);
        }
        let level = self.level;
        if let Some(c) = self.collector.as_mut() {
            c.tagged_count(level, count);
        }
        Ok(())
    }
}

/// The value of a fixed-size field as the facts read it: integers and ids.
fn fixed_value(ty: &FieldType, data: &[u8]) -> Val {
    let int = |v: i64| Val::Int(v);
    match (ty, data) {
        (FieldType::Int8, &[a]) => int(i64::from(a as i8)),
        // As the decoder reads a bool: any byte but 0 is true.
        (FieldType::Bool, &[a]) => int(i64::from(a != 0)),
        (FieldType::Int16, &[a, b]) => int(i64::from(i16::from_be_bytes([a, b]))),
        (FieldType::Uint16, &[a, b]) => int(i64::from(u16::from_be_bytes([a, b]))),
        (FieldType::Int32, &[a, b, c, d]) => int(i64::from(i32::from_be_bytes([a, b, c, d]))),
        (FieldType::Uint32, &[a, b, c, d]) => int(i64::from(u32::from_be_bytes([a, b, c, d]))),
        (FieldType::Int64, d) if d.len() == 8 => {
            int(i64::from_be_bytes(d.try_into().unwrap_or_default()))
        }
        (FieldType::Uuid, d) if d.len() == 16 => Val::Uuid(d.try_into().unwrap_or_default()),
        _ => Val::Other,
    }
}
