//! The analyses' keys as small integers: topics (by name, or by id until a name is learnt for
//! it) and clients. Tables key on `(topic, partition)` pairs of two integers rather than on
//! strings cloned for every partition of every message, and a topic id joined to its name
//! mid-run has its earlier rows found under the name.

use crate::analyses::hash::HashMap;
use crate::kafka::meaning::facts::{Name, PartitionFact};
use std::hash::Hash;

/// A topic's index in [`Topics`].
pub type TopicIx = u32;
/// A partition: its topic's index and its number.
pub type Tp = (TopicIx, i32);

/// How a topic is known.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Known {
    Name(String),
    /// An id no name is known for (yet): shown as its hex.
    Id([u8; 16]),
}

/// Topics met, each once: a name, or an id that points to its name once that is learnt.
#[derive(Debug, Default)]
pub struct Topics {
    known: Vec<Known>,
    /// For an id: the name's index once learnt (itself until then); for a name, itself.
    canon: Vec<TopicIx>,
    by_name: HashMap<String, TopicIx>,
    by_id: HashMap<[u8; 16], TopicIx>,
    /// (id, name) indexes joined since last asked: what was kept under the id moves.
    joined: Vec<(TopicIx, TopicIx)>,
    /// Topics past the bound, not kept (their partitions are left out of the tables).
    pub dropped: u64,
    /// The last partition entry's topic (its shared name, its id) and what [`Topics::of`]
    /// answered for it: a message's partitions come topic by topic, hundreds of one topic
    /// in a Metadata answer, and each asked again cost five hash lookups. Forgotten when an
    /// id is joined to a name.
    last: Option<(Name, Option<[u8; 16]>, Ixes)>,
}

/// A partition entry's topic index, and its id's own index.
type Ixes = (Option<TopicIx>, Option<TopicIx>);

/// Topics (names and ids) kept at most: 10 000 names of at most 249 bytes hold under 4 MiB.
pub const MAX_TOPICS: usize = 10_000;

impl Topics {
    fn add(&mut self, k: Known) -> Option<TopicIx> {
        if self.known.len() >= MAX_TOPICS {
            self.dropped += 1;
            return None;
        }
        let ix = self.known.len() as TopicIx;
        match &k {
            Known::Name(n) => self.by_name.insert(n.clone(), ix),
            Known::Id(u) => self.by_id.insert(*u, ix),
        };
        self.known.push(k);
        self.canon.push(ix);
        Some(ix)
    }

    /// A name's index, made on first sight.
    pub fn name(&mut self, name: &str) -> Option<TopicIx> {
        match self.by_name.get(name) {
            Some(&ix) => Some(ix),
            None => self.add(Known::Name(name.to_string())),
        }
    }

    /// An id's own index (not its name's), made on first sight.
    pub fn id(&mut self, id: [u8; 16]) -> Option<TopicIx> {
        match self.by_id.get(&id) {
            Some(&ix) => Some(ix),
            None => self.add(Known::Id(id)),
        }
    }

    /// The index a topic's rows are kept under: its name's, once known.
    pub fn canon(&self, ix: TopicIx) -> TopicIx {
        self.canon.get(ix as usize).copied().unwrap_or(ix)
    }

    /// Learns that `id` is `name`. Returns (the id's index, the name's) when this joins them
    /// for the first time: rows kept under the id's index may then be moved to the name's.
    pub fn learn(&mut self, id: [u8; 16], name: &str) -> Option<(TopicIx, TopicIx)> {
        let to = self.name(name)?;
        let from = self.id(id)?;
        let slot = self.canon.get_mut(from as usize)?;
        if *slot == to {
            return None;
        }
        *slot = to;
        self.last = None;
        self.joined.push((from, to));
        Some((from, to))
    }

    /// The ids joined to their names since the last call.
    pub fn take_joined(&mut self) -> Vec<(TopicIx, TopicIx)> {
        std::mem::take(&mut self.joined)
    }

    /// The topic of a partition entry, under its name once known: an entry that carries both
    /// an id and its name (noted by the topic names the capture taught) teaches them here.
    /// The second index is the id's own, when the entry has one, for rows kept under it
    /// before the name was known.
    pub fn of(&mut self, p: &PartitionFact) -> Ixes {
        if let Some((name, id, ixes)) = &self.last {
            if std::sync::Arc::ptr_eq(name, &p.topic) && *id == p.topic_id {
                return *ixes;
            }
        }
        let ixes = self.look_up(p);
        // A topic past the bound is counted at each of its entries: never kept here.
        let kept = ixes.0.is_some() && ixes.1.is_some() == p.topic_id.is_some();
        if kept {
            self.last = Some((p.topic.clone(), p.topic_id, ixes));
        }
        ixes
    }

    /// [`Topics::of`], asked of the tables.
    fn look_up(&mut self, p: &PartitionFact) -> Ixes {
        match p.topic_id {
            Some(id) if !is_hex_of(&p.topic, &id) && !p.topic.is_empty() => {
                let raw = self.id(id);
                self.learn(id, &p.topic);
                (self.name(&p.topic), raw)
            }
            Some(id) => {
                let raw = self.id(id);
                (raw.map(|r| self.canon(r)), raw)
            }
            None => (self.name(&p.topic), None),
        }
    }

    /// What a topic is shown as: its name, or its id in hex while no name is known.
    pub fn text(&self, ix: TopicIx) -> String {
        match self.known.get(self.canon(ix) as usize) {
            Some(Known::Name(n)) => n.clone(),
            Some(Known::Id(u)) => hex::encode(u),
            None => String::new(),
        }
    }

    /// Every id joined to a name, by id.
    pub fn learnt(&self) -> Vec<([u8; 16], String)> {
        let mut out: Vec<([u8; 16], String)> = self
            .by_id
            .iter()
            .filter_map(|(u, &ix)| match self.known.get(self.canon(ix) as usize) {
                Some(Known::Name(n)) => Some((*u, n.clone())),
                _ => None,
            })
            .collect();
        out.sort();
        out
    }
}

/// Whether `text` is `id` in hex: how an entry names a topic whose name is not known.
fn is_hex_of(text: &str, id: &[u8; 16]) -> bool {
    text.len() == 32 && hex::decode(text).is_ok_and(|b| b == id)
}

/// What a value costs when interned: its text (kept twice, in the list and the index) and
/// about 64 bytes of list and map.
pub trait Cost {
    fn cost(&self) -> usize;
}

impl Cost for String {
    fn cost(&self) -> usize {
        2 * self.len() + 64
    }
}

impl Cost for super::ClientKey {
    fn cost(&self) -> usize {
        2 * self.client_id.len() + 96
    }
}

/// Values interned as indexes, up to a number and a size (wire strings may be 32 KiB).
#[derive(Debug)]
pub struct Interned<K> {
    list: Vec<K>,
    index: HashMap<K, u32>,
    max: usize,
    max_bytes: usize,
    bytes: usize,
    /// Values past the bound, not kept.
    pub dropped: u64,
}

/// Bytes the values of one [`Interned`] may cost together.
pub const MAX_INTERNED_BYTES: usize = 4 << 20;

impl<K: Clone + Eq + Hash + Cost> Interned<K> {
    pub fn new(max: usize) -> Interned<K> {
        Interned {
            list: Vec::new(),
            index: HashMap::default(),
            max,
            max_bytes: MAX_INTERNED_BYTES,
            bytes: 0,
            dropped: 0,
        }
    }

    /// A value's index, made on first sight while there is room.
    pub fn ix(&mut self, k: &K) -> Option<u32> {
        if let Some(&i) = self.index.get(k) {
            return Some(i);
        }
        if self.list.len() >= self.max || self.bytes + k.cost() > self.max_bytes {
            self.dropped += 1;
            return None;
        }
        self.bytes += k.cost();
        let i = self.list.len() as u32;
        self.list.push(k.clone());
        self.index.insert(k.clone(), i);
        Some(i)
    }

    pub fn get(&self, i: u32) -> Option<&K> {
        self.list.get(i as usize)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn part(topic: &str, id: Option<[u8; 16]>) -> PartitionFact {
        PartitionFact {
            topic: topic.into(),
            topic_id: id,
            ..PartitionFact::default()
        }
    }

    #[test]
    fn an_id_is_its_own_topic_until_its_name_is_learnt() {
        let mut t = Topics::default();
        let id = [7u8; 16];
        let (a, raw) = t.of(&part(&hex::encode(id), Some(id)));
        assert_eq!(a, raw);
        assert_eq!(t.text(a.unwrap()), hex::encode(id));
        let (b, raw2) = t.of(&part("orders", Some(id)));
        assert_eq!(raw2, raw);
        assert_ne!(a, b);
        assert_eq!(t.canon(a.unwrap()), b.unwrap());
        assert_eq!(t.text(a.unwrap()), "orders");
        assert_eq!(t.learnt(), vec![(id, "orders".to_string())]);
        assert_eq!(t.learn(id, "orders"), None);
    }
}
