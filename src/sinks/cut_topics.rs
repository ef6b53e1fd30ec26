//! For `-w`: the topic names a cut notes in its file (`capture::cut::TopicNamed`). The run
//! learns names from every message it reads (kept or not: the Metadata answer that named an
//! id may be left out of the cut), and the ids the messages kept give; the cut names those
//! of them it has a name for, so that read back they are named as in the run.

use kdissect::capture::cut::{TopicNamed, MAX_NAME, MAX_TOPIC_NOTES};
use kdissect::kafka::meaning::log::Change;
use kdissect::kafka::stream::Record;
use kdissect::kafka::TopicRef;
use std::collections::{HashMap, HashSet};

/// Names remembered at most, and ids of kept messages: the Kafka layer's own bound
/// (`MAX_TOPIC_NAMES`), about 27 MiB of names and 2 MiB of ids at worst.
const MAX_NAMES: usize = 100_000;
const MAX_IDS: usize = MAX_NAMES;

#[derive(Debug, Default)]
pub(crate) struct CutTopics {
    /// Every id the run named, with its name (the last one given).
    names: HashMap<[u8; 16], String>,
    /// The ids the kept messages of the input being read give.
    kept: HashSet<[u8; 16]>,
    /// The names members' assignments give (the facts of a summary keep a KIP-848
    /// heartbeat's topic as the name its id had, without the id): their ids are noted too.
    kept_names: HashSet<String>,
    /// Ids of kept messages past `MAX_IDS`, not remembered (their names are not noted).
    ids_dropped: u64,
}

impl CutTopics {
    /// Any message the run read: the names it gives ids (an answer's pairs, the Kafka layer's
    /// names beside ids, the KRaft log's TopicRecords).
    pub(crate) fn learn(&mut self, rec: &Record<'_>) {
        for (id, name) in kdissect::analyses::adapter::topic_pairs(rec) {
            self.name(id, &name);
        }
        let m = &rec.msg;
        for t in m.facts.lists().flat_map(|l| &l.first) {
            if let TopicRef::Id(id, Some(name)) = &t.topic {
                self.name(*id, name);
            }
        }
        for p in m.facts.offsets.iter() {
            if let Some(id) = p.topic_id.filter(|id| hex_id(&p.topic) != Some(*id)) {
                self.name(id, &p.topic);
            }
        }
        for c in &m.record_types.changes {
            if let Some((id, Some(name))) = change_topic(&c.what) {
                self.name(*id, name);
            }
        }
    }

    /// Names given otherwise: a cut's notes read, the analyses' (a batch fetched under an id
    /// that a Produce sent under its name).
    pub(crate) fn learn_pairs<'a>(
        &mut self,
        pairs: impl IntoIterator<Item = (&'a [u8; 16], &'a str)>,
    ) {
        for (id, name) in pairs {
            self.name(*id, name);
        }
    }

    fn name(&mut self, id: [u8; 16], name: &str) {
        if id == [0; 16] || name.is_empty() || name.len() > MAX_NAME {
            return;
        }
        if self.names.len() < MAX_NAMES || self.names.contains_key(&id) {
            self.names.insert(id, name.to_string());
        }
    }

    /// A message the cut keeps: every topic id it gives (its lists, partition entries,
    /// members' assignments, log records, and with its tree every uuid in it).
    pub(crate) fn keep(&mut self, rec: &Record<'_>) {
        let m = &rec.msg;
        for t in m.facts.lists().flat_map(|l| &l.first) {
            if let TopicRef::Id(id, _) = &t.topic {
                self.keeps(*id);
            }
        }
        for id in m.facts.offsets.iter().filter_map(|p| p.topic_id) {
            self.keeps(id);
        }
        for mb in &m.facts.members {
            for t in mb.partitions.iter().map(|(t, _)| t) {
                match hex_id(t) {
                    Some(id) => self.keeps(id),
                    None => self.keeps_name(t),
                }
            }
        }
        for c in &m.record_types.changes {
            if let Some((id, _)) = change_topic(&c.what) {
                self.keeps(*id);
            }
        }
        if let Some(root) = m.tree.as_deref() {
            self.keep_uuids(root);
        }
    }

    /// Every uuid below `n` (those that are not topic ids have no name: nothing is noted
    /// for them).
    fn keep_uuids(&mut self, n: &kdissect::kafka::Node) {
        for c in &n.children {
            if let kdissect::kafka::Value::Uuid(u) = c.value {
                self.keeps(u);
            }
            if !c.children.is_empty() {
                self.keep_uuids(c);
            }
        }
    }

    fn keeps_name(&mut self, name: &str) {
        if self.kept_names.contains(name) {
            return;
        }
        if self.kept.len() + self.kept_names.len() < MAX_IDS {
            self.kept_names.insert(name.to_string());
        } else {
            self.ids_dropped += 1;
        }
    }

    fn keeps(&mut self, id: [u8; 16]) {
        if id == [0; 16] || self.kept.contains(&id) {
            return;
        }
        if self.kept.len() + self.kept_names.len() < MAX_IDS {
            self.kept.insert(id);
        } else {
            self.ids_dropped += 1;
        }
    }

    /// The notes of the input just read, in id order: the ids its kept messages gave that
    /// have a name, at most `MAX_TOPIC_NOTES`; and how many more had one. The ids are
    /// forgotten (the next input is noted on its own); the names are kept.
    pub(crate) fn take_notes(&mut self) -> (Vec<TopicNamed>, usize) {
        let kept_names = std::mem::take(&mut self.kept_names);
        let mut ids: Vec<[u8; 16]> = std::mem::take(&mut self.kept)
            .into_iter()
            .filter(|id| self.names.contains_key(id))
            .collect();
        if !kept_names.is_empty() {
            let named = self.names.iter().filter(|(_, n)| kept_names.contains(*n));
            ids.extend(named.map(|(id, _)| *id));
        }
        ids.sort_unstable();
        ids.dedup();
        // Ids past the bound are counted with those past the notes' (which come first).
        let dropped = usize::try_from(std::mem::take(&mut self.ids_dropped)).unwrap_or(usize::MAX);
        let more = ids
            .len()
            .saturating_sub(MAX_TOPIC_NOTES)
            .saturating_add(dropped);
        let notes = ids
            .into_iter()
            .take(MAX_TOPIC_NOTES)
            .filter_map(|id| {
                let name = self.names.get(&id)?.clone();
                Some(TopicNamed { id, name })
            })
            .collect();
        (notes, more)
    }
}

/// The topic id a log record is about, with its name when the record or an earlier one gave
/// it.
fn change_topic(c: &Change) -> Option<(&[u8; 16], Option<&String>)> {
    match c {
        Change::TopicCreated { topic, name } => Some((topic, Some(name))),
        Change::TopicDeleted { topic, name }
        | Change::PartitionCreated { topic, name, .. }
        | Change::PartitionChanged { topic, name, .. } => Some((topic, name.as_ref())),
        _ => None,
    }
}

/// A topic as the facts give an id whose name is not known: its 32 hex digits.
fn hex_id(text: &str) -> Option<[u8; 16]> {
    let mut id = [0u8; 16];
    (text.len() == 32 && hex::decode_to_slice(text, &mut id).is_ok()).then_some(id)
}
