//! What the records of the KRaft metadata log changed, as data: the types the walk and the
//! views share. src/kafka/records/metadata.rs reads them from the records' decoded values;
//! the summary line says them, the `cluster` analysis follows them.

use super::facts::BrokerIds;

/// Changes one message keeps; past it they are counted (`LogRecords::dropped`). A Fetch
/// answer that replays the log (a broker catching up) can carry thousands of records; this
/// bounds what one message holds to about 100 KiB.
pub const MAX_CHANGES: usize = 1000;

/// The records of a log whose values have a layout (the KRaft metadata log), as one
/// message's batches held them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogRecords {
    /// Each type of record with how many there were (most first, once the message is
    /// decoded; ties in the order first met).
    pub types: Vec<(&'static str, u32)>,
    /// What the first [`MAX_CHANGES`] records that change something changed, in log order.
    pub changes: Vec<LogChange>,
    /// Records that changed something past [`MAX_CHANGES`].
    pub dropped: u32,
}

/// Where a decoder stood in [`LogRecords`], to go back there.
#[derive(Debug, Clone)]
pub struct LogMark {
    types: Vec<(&'static str, u32)>,
    changes: usize,
    dropped: u32,
}

impl LogRecords {
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// One more record of type `ty`.
    pub(crate) fn count(&mut self, ty: &'static str, n: u32) {
        match self.types.iter_mut().find(|(t, _)| *t == ty) {
            Some((_, k)) => *k += n,
            None => self.types.push((ty, n)),
        }
    }

    /// A record's change, kept within [`MAX_CHANGES`].
    pub(crate) fn change(&mut self, c: LogChange) {
        if self.changes.len() < MAX_CHANGES {
            self.changes.push(c);
        } else {
            self.dropped = self.dropped.saturating_add(1);
        }
    }

    /// Adds what another part of the message found.
    pub(crate) fn append(&mut self, other: &mut LogRecords) {
        for (ty, n) in other.types.drain(..) {
            self.count(ty, n);
        }
        for c in other.changes.drain(..) {
            self.change(c);
        }
        self.dropped = self
            .dropped
            .saturating_add(std::mem::take(&mut other.dropped));
    }

    /// Types most first; ties in the order first met.
    pub(crate) fn most_first(&mut self) {
        self.types.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    }

    pub(crate) fn mark(&self) -> LogMark {
        LogMark {
            types: self.types.clone(),
            changes: self.changes.len(),
            dropped: self.dropped,
        }
    }

    pub(crate) fn restore(&mut self, m: LogMark) {
        self.types = m.types;
        self.changes.truncate(m.changes);
        self.dropped = m.dropped;
    }

    /// Names the topic ids of the changes with `name`'s answers (learnt names), where the
    /// message's own TopicRecords did not.
    pub fn name_topics(&mut self, name: impl Fn(&[u8; 16]) -> Option<String>) {
        for c in &mut self.changes {
            if let Some((id, n @ None)) = c.what.topic_mut() {
                *n = name(id);
            }
        }
    }
}

/// One record of the log that changes something, with its offset in the log and the time
/// the controller appended it (ms since 1970, the record's timestamp).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogChange {
    pub offset: i64,
    pub timestamp: i64,
    pub what: Change,
}

/// What a metadata record changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// RegisterBrokerRecord: a broker (re)registered, fenced until it catches up.
    BrokerRegistered {
        broker: i32,
        epoch: i64,
        fenced: bool,
        shutting_down: bool,
    },
    /// UnregisterBrokerRecord.
    BrokerUnregistered { broker: i32, epoch: i64 },
    /// BrokerRegistrationChangeRecord (or the older Fence/UnfenceBrokerRecord): `fenced` is
    /// `Some(true)` when it was fenced, `Some(false)` when unfenced, `None` unchanged.
    BrokerChanged {
        broker: i32,
        epoch: i64,
        fenced: Option<bool>,
        shutting_down: bool,
    },
    /// Register/UnregisterControllerRecord.
    Controller { controller: i32, registered: bool },
    /// TopicRecord.
    TopicCreated { topic: [u8; 16], name: String },
    /// RemoveTopicRecord, with the name the message or learnt names give it.
    TopicDeleted {
        topic: [u8; 16],
        name: Option<String>,
    },
    /// PartitionRecord: a partition created (or reassigned wholesale).
    PartitionCreated {
        topic: [u8; 16],
        name: Option<String>,
        partition: i32,
        leader: i32,
        isr: BrokerIds,
        replicas: BrokerIds,
    },
    /// PartitionChangeRecord: only what changed is there.
    PartitionChanged {
        topic: [u8; 16],
        name: Option<String>,
        partition: i32,
        leader: Option<i32>,
        isr: Option<BrokerIds>,
        replicas: Option<BrokerIds>,
    },
    /// ConfigRecord: a config set (`value` `None` when deleted), of a resource of a type
    /// (`TOPIC`, `BROKER`...). A value whose name says it is a secret is masked.
    Config {
        resource_type: &'static str,
        resource: String,
        name: String,
        value: Option<String>,
    },
    /// FeatureLevelRecord.
    Feature { name: String, level: i64 },
    /// ClientQuotaRecord: an entity's quota set or removed.
    Quota {
        entity: String,
        key: String,
        removed: bool,
    },
    /// UserScramCredentialRecord, RemoveUserScramCredentialRecord: never the salt or keys.
    ScramUser {
        user: String,
        mechanism: &'static str,
        removed: bool,
    },
    /// AccessControlEntryRecord, RemoveAccessControlEntryRecord.
    Acl {
        principal: Option<String>,
        added: bool,
    },
}

impl Change {
    /// The topic id a change is about, with the name it has (if any), to name it.
    fn topic_mut(&mut self) -> Option<(&[u8; 16], &mut Option<String>)> {
        match self {
            Change::TopicDeleted { topic, name }
            | Change::PartitionCreated { topic, name, .. }
            | Change::PartitionChanged { topic, name, .. } => Some((topic, name)),
            _ => None,
        }
    }
}

/// Names the topic ids of `changes` with the TopicRecords among them (a topic created in
/// the same answer as its partitions).
pub(crate) fn name_from_topic_records(changes: &mut [LogChange]) {
    let created: std::collections::HashMap<[u8; 16], String> = changes
        .iter()
        .filter_map(|c| match &c.what {
            Change::TopicCreated { topic, name } => Some((*topic, name.clone())),
            _ => None,
        })
        .collect();
    if created.is_empty() {
        return;
    }
    for c in changes.iter_mut() {
        if let Some((id, n @ None)) = c.what.topic_mut() {
            *n = created.get(id).cloned();
        }
    }
}
