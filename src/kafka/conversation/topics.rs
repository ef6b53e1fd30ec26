//! Topic ids to names. Metadata v10+, CreateTopics v7+ and DescribeTopicPartitions responses
//! carry both, and so does the KRaft log's TopicRecord in a controller's Fetch answer; later
//! messages that carry only an id get the name beside it, in every view.

use crate::kafka::meaning::facts::{Facts, Name, TopicRef};
use crate::kafka::meaning::interned;
use crate::kafka::spec::schema::Role;
use crate::kafka::walk::message::Message;
use crate::kafka::walk::node::{Node, Value};
use std::collections::HashMap;

#[derive(Debug, Default, Clone)]
pub struct TopicNames {
    /// Hashed with foldhash, seeded per run: every id of every message is looked up, and
    /// SipHash cost more than the rest of naming them.
    /// The names are shared with the messages' facts ([`interned`]): naming an id costs no
    /// string.
    map: HashMap<[u8; 16], Name, foldhash::fast::RandomState>,
}

const ZERO: [u8; 16] = [0; 16];

/// Topic ids named at most: past it, new ids are not learnt (those known keep their names).
/// With names of at most `MAX_NAME` bytes that is about 40 MiB, where a capture of Metadata
/// responses made up for it could otherwise fill memory with names.
pub const MAX_TOPIC_NAMES: usize = 100_000;

/// Longest topic name Kafka accepts (`Topic.MAX_NAME_LENGTH`); a longer one is not a topic's.
const MAX_NAME: usize = 249;

impl TopicNames {
    pub fn get(&self, id: &[u8; 16]) -> Option<&str> {
        self.map.get(id).map(|n| &**n)
    }

    /// [`TopicNames::get`], shared.
    fn name(&self, id: &[u8; 16]) -> Option<Name> {
        self.map.get(id).cloned()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Learns every (TopicId, Name) pair that sits in one struct, and names every TopicId
    /// already known. Learning comes first so a response names its own ids.
    pub fn observe(&mut self, msg: &mut Message) {
        self.observe_log(msg);
        // Names come from Metadata and DescribeTopicPartitions responses; any message may carry
        // ids to name, once there are names.
        if let Some(pairs) = &msg.topic_pairs {
            // Gathered as the body was walked: no nodes to learn from or to note.
            for (id, name) in pairs {
                self.learn_shared(*id, name);
            }
            if !self.map.is_empty() && may_hold_ids(msg) {
                name_ids(&mut msg.facts, self);
                // A body written as JSON as it was walked names its ids as a tree's nodes
                // are named.
                if let Some(json) = msg.json.as_deref_mut() {
                    json.name_ids(|id| self.name(id));
                }
            }
            return;
        }
        if msg.direction == crate::kafka::spec::schema::Direction::Response
            && (matches!(msg.api_key, Some(3 | 19 | 75)) || holds_topic_records(msg))
        {
            self.learn(msg.root());
        }
        // The facts are gathered again only if a name was noted: otherwise they are those
        // the message was decoded with.
        if self.map.is_empty() || !may_hold_ids(msg) {
            return;
        }
        if msg
            .tree
            .as_deref_mut()
            .is_some_and(|root| self.annotate(root))
        {
            msg.refresh_facts();
        }
    }

    /// The KRaft metadata log's TopicRecords name their ids too; its other records' ids get
    /// the names known.
    fn observe_log(&mut self, msg: &mut Message) {
        if msg.record_types.changes.is_empty() {
            return;
        }
        for c in &msg.record_types.changes {
            if let crate::kafka::records::metadata::Change::TopicCreated { topic, name } = &c.what {
                if *topic != ZERO && !name.is_empty() {
                    self.learn_pair(*topic, name);
                }
            }
        }
        msg.record_types
            .name_topics(|id| self.get(id).map(str::to_string));
    }

    fn learn(&mut self, n: &Node) {
        let id = n
            .children
            .iter()
            .find(|c| c.role() == Role::TopicId)
            .and_then(|c| match c.value {
                Value::Uuid(u) if u != ZERO => Some(u),
                _ => None,
            });
        let name = n
            .children
            .iter()
            .find(|c| c.role() == Role::Name)
            .and_then(|c| c.as_str())
            .filter(|s| !s.is_empty());
        if let (Some(id), Some(name)) = (id, name) {
            self.learn_pair(id, name);
        }
        for c in n.children.iter().filter(|c| !c.children.is_empty()) {
            self.learn(c);
        }
    }

    /// Names a cut (`-w`) noted in its file for the ids its messages give, learnt as an
    /// answer's, within the same bounds.
    pub fn given(&mut self, named: &[crate::capture::cut::TopicNamed]) {
        for t in named.iter().filter(|t| t.id != ZERO && !t.name.is_empty()) {
            self.learn_pair(t.id, &t.name);
        }
    }

    /// Learns that `id` is `name`, within the bounds.
    fn learn_pair(&mut self, id: [u8; 16], name: &str) {
        if name.len() <= MAX_NAME {
            self.learn_shared(id, &interned::name_of(name));
        }
    }

    /// [`TopicNames::learn_pair`] of a name already shared. Every Metadata answer names its
    /// topics again: a name known already is left as it is.
    fn learn_shared(&mut self, id: [u8; 16], name: &Name) {
        if name.len() > MAX_NAME {
            return;
        }
        if let Some(known) = self.map.get_mut(&id) {
            if **known != **name {
                *known = name.clone();
            }
        } else if self.map.len() < MAX_TOPIC_NAMES {
            self.map.insert(id, name.clone());
        }
    }

    /// Names the topic ids of structs that do not carry the name themselves; true if it
    /// named one.
    fn annotate(&self, n: &mut Node) -> bool {
        let named = n
            .children
            .iter()
            .any(|c| c.role() == Role::Name && c.as_str().is_some_and(|s| !s.is_empty()));
        let mut noted = false;
        for c in n.children.iter_mut() {
            if let Value::Uuid(u) = c.value {
                if !named && c.note == crate::kafka::walk::node::Note::None {
                    if let Some(name) = self.map.get(&u) {
                        c.note = crate::kafka::walk::node::Note::TopicName(name.to_string());
                        noted = true;
                    }
                }
            }
            // Most nodes are leaves: not calling for them halves the walk.
            if !c.children.is_empty() {
                noted |= self.annotate(c);
            }
        }
        noted
    }
}

/// Whether the message carries KRaft `TopicRecord`s (a controller's Fetch answer of the
/// metadata log): each names a topic created, beside its id.
fn holds_topic_records(msg: &Message) -> bool {
    msg.record_types
        .types
        .iter()
        .any(|(name, _)| *name == "TopicRecord")
}

/// Whether the message's API has a field that may hold a topic id; a message of no known API
/// is walked all the same.
fn may_hold_ids(msg: &Message) -> bool {
    msg.api_key
        .is_none_or(|k| crate::kafka::spec::schema::registry().may_hold_ids(k, msg.direction))
}

/// Names the topic ids of a message's facts with the names learnt since: what the tree's
/// topic names do to its nodes before the facts are read again.
fn name_ids(facts: &mut Facts, names: &TopicNames) {
    for list in facts.lists_mut() {
        for t in &mut list.first {
            if let TopicRef::Id(u, name @ None) = &mut t.topic {
                *name = names.name(u);
            }
        }
    }
    // Facts gathered at every depth (the analyses') name a topic known by its id alone with
    // the id in hex, as the tree's do before its ids are noted.
    // Not shared yet (the analyses' event is made from the facts named here): no copy. An
    // empty list is the one all messages share (`no_offsets`): left alone, not copied.
    if !facts.offsets.is_empty() {
        for p in std::sync::Arc::make_mut(&mut facts.offsets).iter_mut() {
            if let Some(u) = p.topic_id {
                if let (true, Some(n)) = (id_of_hex(&p.topic) == Some(u), names.name(&u)) {
                    p.topic = n;
                }
            }
        }
    }
    for m in &mut facts.members {
        for (topic, _) in &mut m.partitions {
            if let Some(n) = id_of_hex(topic).and_then(|u| names.name(&u)) {
                *topic = n.to_string();
            }
        }
    }
}

/// The topic id that `text` spells as the facts spell an id with no name: its 16 bytes in 32
/// lowercase hex digits (`hex::encode`), and nothing else. Read without making a string: this
/// runs for every partition entry of every message once names are known.
fn id_of_hex(text: &str) -> Option<[u8; 16]> {
    fn digit(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        }
    }
    let b = text.as_bytes();
    if b.len() != 32 {
        return None;
    }
    let mut id = [0u8; 16];
    for (out, pair) in id.iter_mut().zip(b.chunks_exact(2)) {
        let [hi, lo] = pair else { return None };
        *out = (digit(*hi)? << 4) | digit(*lo)?;
    }
    Some(id)
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::kafka::{NodeKind, Region};

    /// A struct holding a TopicId and a Name, as Metadata's topics do.
    fn topic(i: u32, name: &str) -> Node {
        let mut id = [0u8; 16];
        id[..4].copy_from_slice(&(i + 1).to_be_bytes());
        let mut t = Node::new("Topics", "struct", 0, Region::ResponseBody, NodeKind::Group);
        let mut tid = Node::new("TopicId", "uuid", 0, Region::ResponseBody, NodeKind::Field);
        tid.value = Value::Uuid(id);
        tid.field = Some(crate::kafka::spec::schema::metadata_field(Role::TopicId));
        let mut n = Node::new("Name", "string", 0, Region::ResponseBody, NodeKind::Field);
        n.value = Value::Str(Some(name.to_string()));
        n.field = Some(crate::kafka::spec::schema::metadata_field(Role::Name));
        t.children = vec![tid, n];
        t
    }

    #[test]
    fn an_id_in_hex_is_read_back_only_as_hex_encode_writes_it() {
        let id: [u8; 16] = std::array::from_fn(|i| (i as u8).wrapping_mul(37).wrapping_add(9));
        assert_eq!(id_of_hex(&hex::encode(id)), Some(id));
        // Upper case, a digit short, a digit more, a non-digit: not an id the facts wrote.
        assert_eq!(id_of_hex(&hex::encode(id).to_uppercase()), None);
        assert_eq!(id_of_hex(&hex::encode(id)[1..]), None);
        assert_eq!(id_of_hex(&format!("{}0", hex::encode(id))), None);
        assert_eq!(id_of_hex(&format!("g{}", &hex::encode(id)[1..])), None);
        assert_eq!(id_of_hex("orders"), None);
    }

    #[test]
    fn names_are_learnt_up_to_the_bound_and_only_if_they_can_be_topic_names() {
        let mut root = Node::new("Response", "message", 0, Region::Frame, NodeKind::Group);
        root.children = (0..MAX_TOPIC_NAMES as u32 + 10)
            .map(|i| topic(i, &format!("t{i}")))
            .collect();
        root.children
            .push(topic(u32::MAX - 1, &"x".repeat(MAX_NAME + 1)));
        let mut names = TopicNames::default();
        names.learn(&root);
        assert_eq!(names.len(), MAX_TOPIC_NAMES);
        let mut first = [0u8; 16];
        first[..4].copy_from_slice(&1u32.to_be_bytes());
        assert_eq!(names.get(&first), Some("t0"));
    }
}
