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
use crate::kafka::meaning::essentials::{self, DetailPick, Entries, Fields, Id, ListPick};
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

/// The fields of one struct the facts may read, in the order met. The body and its structs
/// index the first of each fact and role (one more than its slot; 0 for none): the facts ask
/// a body for some thirty fields, and a scan for each cost more than the walk. An element of
/// a body array keeps the few fields its array reads (see [`Wants`]) and is scanned: clearing
/// the indexes for each element (some 180 bytes) cost more than its walk.
#[derive(Debug, Clone)]
struct Frame {
    slots: Vec<Slot>,
    indexed: bool,
    by_fact: [u8; FACTS],
    by_role: [u8; Role::COUNT],
    /// Fields walked in it (kept or not): what the decoder's node budget would count.
    fields: usize,
}

impl Default for Frame {
    fn default() -> Frame {
        Frame::new(true)
    }
}

impl Frame {
    fn new(indexed: bool) -> Frame {
        Frame {
            slots: Vec::new(),
            indexed,
            by_fact: [0; FACTS],
            by_role: [0; Role::COUNT],
            fields: 0,
        }
    }

    #[inline]
    fn clear(&mut self) {
        self.slots.clear();
        self.fields = 0;
        if self.indexed {
            self.by_fact = [0; FACTS];
            self.by_role = [0; Role::COUNT];
        }
    }

    #[inline]
    fn push(&mut self, slot: Slot) {
        // A struct has far fewer fields than this; past it, fields are not kept.
        let Ok(n) = u8::try_from(self.slots.len() + 1) else {
            return;
        };
        if self.indexed {
            self.index(slot.fact, slot.role, n);
        }
        self.slots.push(slot);
    }

    /// Slot `n` (one more than its index) is of `fact` and `role`: the first of them?
    fn index(&mut self, fact: FactField, role: Role, n: u8) {
        if let Some(i @ 0) = self.by_fact.get_mut(fact as usize) {
            *i = n;
        }
        if let Some(i @ 0) = self.by_role.get_mut(role as usize) {
            *i = n;
        }
    }

    /// The slot of the first field of fact `f`, if the frame has one.
    fn fact_index(&self, f: FactField) -> Option<usize> {
        if !self.indexed {
            return self.slots.iter().position(|s| s.fact == f);
        }
        usize::from(*self.by_fact.get(f as usize)?).checked_sub(1)
    }

    /// The slot of the first field of role `r`, if the frame has one.
    fn role_index(&self, r: Role) -> Option<usize> {
        if !self.indexed {
            return self.slots.iter().position(|s| s.role == r);
        }
        usize::from(*self.by_role.get(r as usize)?).checked_sub(1)
    }

    fn fact(&self, f: FactField) -> Option<Val> {
        if f == FactField::None {
            return None;
        }
        self.fact_slot(f).map(|s| s.val)
    }

    fn fact_slot(&self, f: FactField) -> Option<&Slot> {
        self.slots.get(self.fact_index(f)?)
    }

    fn role(&self, r: Role) -> Option<Val> {
        if r == Role::Other {
            return None;
        }
        self.slots.get(self.role_index(r)?).map(|s| s.val)
    }

    fn int(&self, f: FactField) -> Option<i64> {
        int(self.fact(f))
    }

    /// The field (of `f`, or `r`) of a slot, to name an array a list is of.
    fn field_of(&self, f: FactField, r: Role) -> Option<FieldId> {
        let i = if f == FactField::None {
            self.role_index(r)?
        } else {
            self.fact_index(f)?
        };
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

/// The fields of a struct that what is gathered from it reads, by fact and by role: the
/// elements of a body array keep only those (an ApiVersions answer's ninety entries, the
/// hundreds of topics of a Metadata answer), where the body and its structs keep every field.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Wants {
    facts: [u64; FACTS.div_ceil(64)],
    roles: u32,
}

/// Read from an element as a topic: how it names it (`topic_ref`), and its error.
const TOPIC_NAMING: [FactField; 6] = [
    FactField::Name,
    FactField::TopicName,
    FactField::Topic,
    FactField::ResourceName,
    FactField::TopicId,
    FactField::ErrorCode,
];

/// The arrays of an element whose lengths count its partitions, the first one met.
const PARTITION_ARRAYS: [FactField; 4] = [
    FactField::Partitions,
    FactField::PartitionData,
    FactField::PartitionResponses,
    FactField::PartitionIndexes,
];

// A role is a bit of `Wants::roles`.
const _: () = assert!(Role::COUNT <= 32);

impl Wants {
    fn fact(mut self, f: FactField) -> Wants {
        // `None` stands for no fact: a field of no fact is wanted only by its role.
        if f != FactField::None {
            if let Some(w) = self.facts.get_mut(f as usize / 64) {
                *w |= 1 << (f as usize % 64);
            }
        }
        self
    }

    fn facts(self, fs: &[FactField]) -> Wants {
        fs.iter().fold(self, |w, f| w.fact(*f))
    }

    fn role(mut self, r: Role) -> Wants {
        self.roles |= 1 << (r as u32);
        self
    }

    /// Whether field `f` is read.
    #[inline]
    fn has(&self, f: &FieldSpec) -> bool {
        let by_fact = self
            .facts
            .get(f.fact as usize / 64)
            .is_some_and(|w| w & (1 << (f.fact as usize % 64)) != 0);
        by_fact || self.roles & (1 << (f.role as u32)) != 0
    }

    /// What an element of a listed array gives its entries: the sum always, the id, the
    /// details and the error only for the entries shown (`head`).
    fn pick(self, pick: &ListPick, head: bool) -> Wants {
        let w = match pick.sum {
            Some((f, _)) => self.fact(f),
            None => self,
        };
        if !head {
            return w;
        }
        let w = match pick.id {
            Id::Count | Id::Scalar => return w,
            Id::Topic => w.facts(&TOPIC_NAMING),
            Id::Text(f) | Id::Int(f) => w.fact(f).fact(FactField::ErrorCode),
        };
        pick.details.iter().fold(w, |w, d| match *d {
            DetailPick::Text(f) | DetailPick::Count(f, _) | DetailPick::Either(f, _, _) => {
                w.fact(f)
            }
        })
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
    /// The fields its elements keep: `head` for the first `head_len` (the topics or entries
    /// shown), `tail` for the rest (counted, summed, learnt from).
    head: Wants,
    tail: Wants,
    head_len: usize,
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
    /// The second-level struct being walked, a struct of the body.
    inner: Frame,
    /// The second-level struct being walked, an element of a body array.
    element: Frame,
    open: Option<Open>,
    /// The body's arrays met, the first `arrays_met` of `arrays` (the rest are kept from
    /// earlier messages for their allocations).
    arrays: Vec<Elements>,
    arrays_met: usize,
    structs: Vec<Frame>,
    structs_met: usize,
    /// The fields the element being walked keeps.
    wants: Wants,
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
                element: Frame::new(false),
                open: None,
                arrays: Vec::new(),
                arrays_met: 0,
                structs: Vec::new(),
                structs_met: 0,
                wants: Wants::default(),
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
        c.element.clear();
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
        match (level, self.open) {
            (0, _) => &mut self.body,
            (_, Some(Open::Element(_))) => &mut self.element,
            _ => &mut self.inner,
        }
    }

    /// A field walked at `level` (0 the body's, 1 the next), with its value.
    #[inline]
    pub(super) fn field(&mut self, level: usize, f: &'static FieldSpec, tagged: bool, val: Val) {
        let wanted = match (level, self.open) {
            (0, _) => true,
            (_, Some(Open::Element(_))) => self.wants.has(f),
            _ => true,
        };
        let frame = self.frame(level);
        frame.fields += 1;
        if f.facts && wanted {
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
        let pick = essentials::list_pick(self.api_key, self.direction, f.fact)
            .filter(|_| f.fact != FactField::None);
        let learns = self.learns;
        if let Some(a) = self.arrays.get_mut(n) {
            a.pick = pick;
            a.head = element_wants(f.role, topics, pick, learns, true);
            a.tail = element_wants(f.role, topics, pick, learns, false);
            let listed = pick.filter(|p| !matches!(p.id, Id::Count | Id::Scalar));
            a.head_len = listed
                .map_or(0, |p| p.shown)
                .max(if topics { MAX_TOPICS } else { 0 });
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
        self.element.clear();
        self.wants = match self.arrays.get(array) {
            Some(a) if a.met < a.head_len => a.head,
            Some(a) => a.tail,
            None => Wants::default(),
        };
    }

    /// The second-level struct ends: what it gave goes where it belongs.
    pub(super) fn close(&mut self, buf: &[u8]) {
        match self.open.take() {
            Some(Open::Struct(n)) => {
                learn(self.learns, &mut self.pairs, &self.inner, buf);
                if let Some(s) = self.structs.get_mut(n) {
                    std::mem::swap(s, &mut self.inner);
                }
            }
            Some(Open::Element(n)) => {
                let e = &self.element;
                learn(self.learns, &mut self.pairs, e, buf);
                self.nodes = self.nodes.saturating_add(2 + 3 * e.fields);
                if let Some(a) = self.arrays.get_mut(n) {
                    element(a, e, buf);
                    if let Some(pick) = a.pick {
                        a.entries.element(pick, &InBuf(e, buf));
                    }
                }
            }
            None => learn(self.learns, &mut self.pairs, &self.inner, buf),
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

/// The (TopicId, Name) pair of a second-level struct `s`, in a message that `learns` them.
fn learn(learns: bool, pairs: &mut Vec<([u8; 16], Name)>, s: &Frame, buf: &[u8]) {
    if learns {
        pairs.extend(pair(s, buf));
    }
}

/// What the elements of an array of `role` read (read as topics or not, listed by `pick`, in a
/// message that learns topic names or not): the first ones (`head`) or the rest.
fn element_wants(
    role: Role,
    topics: bool,
    pick: Option<&ListPick>,
    learns: bool,
    head: bool,
) -> Wants {
    let mut w = Wants::default();
    if learns {
        w = w.role(Role::TopicId).role(Role::Name);
    }
    if topics {
        w = w.facts(&PARTITION_ARRAYS).fact(FactField::ResourceName);
        if head {
            w = w.facts(&TOPIC_NAMING);
        }
    }
    w = match role {
        Role::ApiKeys => w.facts(&[
            FactField::ApiKey,
            FactField::MinVersion,
            FactField::MaxVersion,
        ]),
        Role::Coordinators => w.role(Role::NodeId),
        _ => w,
    };
    pick.map_or(w, |p| w.pick(p, head))
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
    a.partitions += PARTITION_ARRAYS
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::spec::tables::metadata_response::FIELDS__TOPICS as TOPIC;

    fn slot(spec: &'static FieldSpec, tagged: bool, val: Val) -> Slot {
        Slot {
            spec,
            fact: spec.fact,
            role: spec.role,
            tagged,
            val,
        }
    }

    /// A frame cleared and filled again finds the fields of its new struct, not the indexes
    /// its earlier one left, and the first field of each fact and role.
    #[test]
    fn a_reused_frame_indexes_only_its_own_fields() {
        let [error, name, id, ..] = &TOPIC;
        let mut f = Frame::default();
        f.push(slot(error, false, Val::Int(3)));
        f.push(slot(name, false, Val::Str(Some((0, 1)))));
        f.push(slot(id, false, Val::Uuid([1; 16])));
        f.clear();
        f.push(slot(id, false, Val::Uuid([2; 16])));
        f.push(slot(error, false, Val::Int(5)));
        f.push(slot(error, true, Val::Int(7)));
        assert_eq!(f.fact(FactField::TopicId), Some(Val::Uuid([2; 16])));
        assert_eq!(f.int(FactField::ErrorCode), Some(5));
        assert_eq!(f.role(Role::ErrorCode), Some(Val::Int(5)));
        // The name of the struct before is not this one's.
        assert_eq!(f.fact(FactField::Name), None);
        assert_eq!(f.role(Role::Name), None);
        assert_eq!(
            f.field_of(FactField::None, Role::TopicId),
            Some(FieldId::of(id))
        );
    }

    /// The elements of a Metadata answer's topics keep what names them while their topics are
    /// listed, then only their partitions and what the topic names learn.
    #[test]
    fn elements_keep_what_their_array_reads() {
        let [error, name, id, internal, partitions, _] = &TOPIC;
        let head = element_wants(Role::TopicArray, true, None, true, true);
        let tail = element_wants(Role::TopicArray, true, None, true, false);
        assert!([error, name, id, partitions].iter().all(|f| head.has(f)));
        assert!(!head.has(internal));
        assert!(!tail.has(error));
        assert!([name, id, partitions].iter().all(|f| tail.has(f)));
        let plain = element_wants(Role::Brokers, false, None, false, true);
        assert!(TOPIC.iter().all(|f| !plain.has(f)));
    }
}
