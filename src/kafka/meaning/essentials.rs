//! What a summary line says of each API beyond the facts every message has (errors, topics,
//! resources, group and member identity, coordinators, SASL): the essentials of its request
//! and of its response, chosen per API from the Kafka 4.4 specs, as data. A line should tell
//! what a message is about as tshark's Info column does: ids and counts, the first few of a
//! list, never a whole list and never a secret.
//!
//! The walk reads them into [`Facts::line`](super::facts::Facts) from the body's top two levels,
//! as the other facts: src/kafka/walk/collect.rs while walking, src/kafka/walk/tree_facts.rs
//! from a tree, both through [`Fields`] and [`Entries`] here, so that the two agree
//! (tests/facts_walk.rs).

use super::facts::{Detail, Essential, EssentialValue, FactField, TopicFact, TopicList, TopicRef};
use crate::kafka::spec::schema::{Direction, FieldId};

use FactField as F;

/// Entries a listed essential keeps by id, unless its pick says fewer.
pub const MAX_LISTED: usize = 5;

/// One thing the line of an API's request or response says.
#[derive(Debug, Clone, Copy)]
pub enum Pick {
    /// An integer field of the body: `label=N`.
    Int(FactField, &'static str),
    /// A bool field of the body, said by its label when true.
    Flag(FactField, &'static str),
    /// A bool field of the body, said by one of two words.
    Either(FactField, &'static str, &'static str),
    /// A string field of the body said only when it is null: `label=null`.
    IfNull(FactField, &'static str),
    /// A string field of the body; `default` stands for null.
    Text(FactField, &'static str, &'static str),
    /// A uuid field of the body.
    Uuid(FactField, &'static str),
    /// An integer field of the body by the name of its value in an enumeration of
    /// src/kafka/spec/names.rs.
    Named(FactField, &'static str, &'static str),
    /// The top-level error code said when it is NONE too: the answer holds little else.
    Status,
    /// An array of the body, its entries listed or counted.
    List(ListPick),
}

/// How an array of the body is listed: `label=[first, second(ERROR), +3 more]`, `label=N`
/// for entries without an id, `label=all` for a null array (every group, user, topic).
#[derive(Debug, Clone, Copy)]
pub struct ListPick {
    pub array: FactField,
    pub label: &'static str,
    pub id: Id,
    /// What is said of an entry beside its error.
    pub details: &'static [DetailPick],
    /// Entries shown by id (long ids: fewer).
    pub shown: usize,
    /// An empty array means every one (ListGroups' state filter).
    pub empty_all: bool,
    /// A count summed over the entries: one of their arrays, `label=N`.
    pub sum: Option<(FactField, &'static str)>,
    /// Said only when it has entries (one of two lists a request may fill).
    pub skip_empty: bool,
    /// Only the sum is said (the entries are listed by another fact).
    pub only_sum: bool,
}

/// What names an entry of a listed array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Id {
    /// A topic, as the topic lists name it (its name, or its id).
    Topic,
    /// A string field of the entry.
    Text(FactField),
    /// An integer field of the entry.
    Int(FactField),
    /// The entry itself, a string (an array of strings).
    Scalar,
    /// Nothing: the entries are counted.
    Count,
}

/// What a line says of an entry beside its error.
#[derive(Debug, Clone, Copy)]
pub enum DetailPick {
    /// A string field of the entry.
    Text(FactField),
    /// The length of one of its arrays, `3 members`.
    Count(FactField, &'static str),
    /// A bool field, by one of two words.
    Either(FactField, &'static str, &'static str),
}

const fn list(array: FactField, label: &'static str, id: Id) -> ListPick {
    ListPick {
        array,
        label,
        id,
        details: &[],
        shown: MAX_LISTED,
        empty_all: false,
        sum: None,
        skip_empty: false,
        only_sum: false,
    }
}

impl ListPick {
    const fn details(mut self, d: &'static [DetailPick]) -> ListPick {
        self.details = d;
        self
    }
    const fn shown(mut self, n: usize) -> ListPick {
        self.shown = n;
        self
    }
    const fn empty_all(mut self) -> ListPick {
        self.empty_all = true;
        self
    }
    const fn sum(mut self, array: FactField, label: &'static str) -> ListPick {
        self.sum = Some((array, label));
        self
    }
    const fn skip_empty(mut self) -> ListPick {
        self.skip_empty = true;
        self
    }
    const fn only_sum(mut self) -> ListPick {
        self.only_sum = true;
        self
    }
}

/// A `&'static [Pick]` of picks made by const functions.
macro_rules! picks {
    ($($p:expr),* $(,)?) => {{
        const PICKS: &[Pick] = &[$($p),*];
        PICKS
    }};
}

/// Member ids are long (a client id and a uuid): two of them fill a line.
const MEMBERS_SHOWN: usize = 2;

const GROUP_STATE: &[DetailPick] = &[
    DetailPick::Text(F::GroupState),
    DetailPick::Count(F::Members, "members"),
];

/// A group described by the KIP-848 describe APIs (consumer, share, streams).
const DESCRIBED_GROUPS: Pick =
    Pick::List(list(F::Groups, "groups", Id::Text(F::GroupId)).details(GROUP_STATE));

const GROUP_IDS: Pick = Pick::List(list(F::GroupIds, "groups", Id::Scalar));

/// The share-group state APIs' answers: the topics (by id) whose partitions they are about.
const STATE_RESULTS: &[Pick] = &[Pick::List(list(F::Results, "topics", Id::Topic))];

const STATUS: &[Pick] = &[Pick::Status];

const CONTROLLER_AND_EPOCH: [Pick; 2] = [
    Pick::Int(F::ControllerId, "controller"),
    Pick::Int(F::BrokerEpoch, "broker_epoch"),
];

const BROKER_AND_EPOCH: [Pick; 2] = [
    Pick::Int(F::BrokerId, "broker"),
    Pick::Int(F::BrokerEpoch, "broker_epoch"),
];

/// The essentials of (API key, direction) beyond the common facts. APIs whose common facts
/// already say what they are about (Produce, Fetch, Metadata, the group heartbeats...) have
/// none. Long: it is the table, one arm per API and direction.
pub fn picks(api_key: i16, direction: Direction) -> &'static [Pick] {
    use Direction::{Request as Q, Response as R};
    match (api_key, direction) {
        // The controller-to-broker APIs of ZooKeeper clusters (gone in 4.0).
        (4, Q) => &CONTROLLER_AND_EPOCH,
        (5, Q) => picks![
            Pick::Int(F::ControllerId, "controller"),
            Pick::Int(F::BrokerEpoch, "broker_epoch"),
            Pick::Flag(F::DeletePartitions, "delete"),
        ],
        (6, Q) => picks![
            Pick::Int(F::ControllerId, "controller"),
            Pick::Int(F::BrokerEpoch, "broker_epoch"),
            Pick::List(list(F::LiveBrokers, "brokers", Id::Count)),
        ],
        (7, Q) => &BROKER_AND_EPOCH,
        (4..=6, R) => STATUS,
        (7, R) => picks![
            Pick::Status,
            Pick::List(list(F::RemainingPartitions, "remaining", Id::Count)),
        ],
        // OffsetFetch v8+ asks about groups, each with its topics.
        (9, Q | R) => picks![Pick::List(list(F::Groups, "groups", Id::Text(F::GroupId)))],
        // Heartbeat, SyncGroup, AddOffsetsToTxn, the delegation tokens' renew and expire,
        // UnregisterBroker, ControllerRegistration, PushTelemetry, the raft voters', the
        // streams topology update, UnregisterController, Envelope: an error code, and little
        // or nothing else.
        (12 | 14 | 25 | 39 | 40 | 58 | 64 | 70 | 72 | 80 | 81 | 82 | 93 | 94, R) => STATUS,
        (13, Q) => picks![Pick::List(
            list(F::Members, "members", Id::Text(F::MemberId)).shown(MEMBERS_SHOWN),
        )],
        (13, R) => picks![
            Pick::Status,
            Pick::List(list(F::Members, "members", Id::Text(F::MemberId)).shown(MEMBERS_SHOWN)),
        ],
        (15, Q) => picks![Pick::List(list(F::Groups, "groups", Id::Scalar))],
        (15, R) => picks![Pick::List(
            list(F::Groups, "groups", Id::Text(F::GroupId)).details(GROUP_STATE),
        )],
        (16, Q) => picks![
            Pick::List(list(F::StatesFilter, "states", Id::Scalar).empty_all()),
            Pick::List(list(F::TypesFilter, "types", Id::Scalar).empty_all()),
        ],
        (16, R) => picks![Pick::List(list(F::Groups, "groups", Id::Text(F::GroupId)))],
        // A producer without a transactional id is an idempotent one.
        (22, Q) => picks![Pick::IfNull(F::TransactionalId, "txn")],
        (22, R) => picks![Pick::Int(F::ProducerEpoch, "producer_epoch")],
        (24, Q) => picks![
            Pick::Text(F::V3AndBelowTransactionalId, "txn", "null"),
            Pick::Int(F::V3AndBelowProducerId, "producer_id"),
            Pick::List(list(F::V3AndBelowTopics, "topics", Id::Topic)),
            Pick::List(list(F::Transactions, "txns", Id::Text(F::TransactionalId))),
        ],
        (24, R) => picks![
            Pick::List(list(
                F::ResultsByTransaction,
                "txns",
                Id::Text(F::TransactionalId)
            )),
            Pick::List(list(F::ResultsByTopicV3AndBelow, "topics", Id::Topic)),
        ],
        (26, Q) => picks![Pick::Either(F::Committed, "commit", "abort")],
        (26, R) => picks![Pick::Status, Pick::Int(F::ProducerEpoch, "producer_epoch")],
        (27, Q) => picks![Pick::List(
            list(F::Markers, "markers", Id::Int(F::ProducerId)).details(&[DetailPick::Either(
                F::TransactionResult,
                "COMMIT",
                "ABORT",
            )]),
        )],
        (27, R) => picks![Pick::List(list(
            F::Markers,
            "markers",
            Id::Int(F::ProducerId)
        ))],
        (29, Q) => picks![
            Pick::Text(F::ResourceNameFilter, "resource", "any"),
            Pick::Text(F::PrincipalFilter, "principal", "any"),
        ],
        // The resources are listed as every config API's are.
        (29, R) => picks![Pick::List(
            list(F::Resources, "resources", Id::Count)
                .sum(F::Acls, "acls")
                .only_sum(),
        )],
        (30, Q) => picks![Pick::List(list(
            F::Creations,
            "acls",
            Id::Text(F::ResourceName)
        ))],
        (30, R) => picks![Pick::List(list(F::Results, "acls", Id::Count))],
        (31, Q) => picks![Pick::List(list(F::Filters, "filters", Id::Count))],
        (31, R) => picks![Pick::List(
            list(F::FilterResults, "filters", Id::Count).sum(F::MatchingAcls, "deleted"),
        )],
        (34, Q) => picks![Pick::List(list(F::Dirs, "dirs", Id::Text(F::Path)))],
        (34, R) => picks![Pick::List(list(F::Results, "topics", Id::Topic))],
        (35, R) => picks![
            Pick::Status,
            Pick::List(list(F::Results, "dirs", Id::Text(F::LogDir))),
        ],
        (37, R) => picks![Pick::List(list(F::Results, "topics", Id::Topic))],
        // The token's HMAC is its secret: never on the line.
        (38, Q) => picks![Pick::List(list(
            F::Renewers,
            "renewers",
            Id::Text(F::PrincipalName)
        ))],
        (38, R) => picks![Pick::Status, Pick::Text(F::PrincipalName, "owner", "null")],
        (39, Q) => picks![Pick::Int(F::RenewPeriodMs, "renew_period_ms")],
        (40, Q) => picks![Pick::Int(F::ExpiryTimePeriodMs, "expiry_period_ms")],
        (41, Q) => picks![Pick::List(list(
            F::Owners,
            "owners",
            Id::Text(F::PrincipalName)
        ))],
        (41, R) => picks![
            Pick::Status,
            Pick::List(list(F::Tokens, "tokens", Id::Count))
        ],
        (42, Q) => picks![Pick::List(list(F::GroupsNames, "groups", Id::Scalar))],
        (42, R) => picks![Pick::List(list(F::Results, "groups", Id::Text(F::GroupId)))],
        (43, Q) => picks![
            Pick::Named(F::ElectionType, "election", "ElectionType"),
            Pick::List(list(F::TopicPartitions, "topics", Id::Topic)),
        ],
        (43, R) => picks![
            Pick::Status,
            Pick::List(list(F::ReplicaElectionResults, "topics", Id::Topic)),
        ],
        (48, Q) => picks![Pick::List(list(
            F::Components,
            "components",
            Id::Text(F::EntityType),
        ))],
        (48, R) => picks![
            Pick::Status,
            Pick::List(list(F::Entries, "entries", Id::Count))
        ],
        (49, Q | R) => picks![Pick::List(list(F::Entries, "entries", Id::Count))],
        // No user named: every user.
        (50, Q) => picks![Pick::List(
            list(F::Users, "users", Id::Text(F::Name)).empty_all()
        )],
        (50, R) => picks![Pick::List(list(F::Results, "users", Id::Text(F::User)))],
        // Upsertions carry a salt and a salted password: only the users are said.
        (51, Q) => picks![
            Pick::List(list(F::Deletions, "deletions", Id::Text(F::Name)).skip_empty()),
            Pick::List(list(F::Upsertions, "upsertions", Id::Text(F::Name)).skip_empty()),
        ],
        (51, R) => picks![Pick::List(list(F::Results, "users", Id::Text(F::User)))],
        (52 | 53 | 80 | 81 | 82, Q) => picks![Pick::Int(F::VoterId, "voter")],
        (56 | 67, Q) => &BROKER_AND_EPOCH,
        (57, Q) => picks![Pick::List(list(
            F::FeatureUpdates,
            "features",
            Id::Text(F::Feature)
        ))],
        (57, R) => picks![
            Pick::Status,
            Pick::List(list(F::Results, "features", Id::Text(F::Feature))),
        ],
        (60, Q) => picks![
            Pick::Named(F::EndpointType, "endpoint", "EndpointType"),
            Pick::Flag(F::IncludeFencedBrokers, "include_fenced"),
        ],
        (60, R) => picks![Pick::Int(F::ControllerId, "controller")],
        (62, Q) => picks![
            Pick::Int(F::BrokerId, "broker"),
            Pick::List(list(F::Listeners, "listeners", Id::Text(F::Name))),
        ],
        (62, R) => picks![Pick::Status, Pick::Int(F::BrokerEpoch, "broker_epoch")],
        (63, Q) => picks![
            Pick::Int(F::BrokerId, "broker"),
            Pick::Int(F::BrokerEpoch, "broker_epoch"),
            Pick::Int(F::CurrentMetadataOffset, "metadata_offset"),
            Pick::Flag(F::WantFence, "want_fence"),
            Pick::Flag(F::WantShutDown, "want_shutdown"),
        ],
        (63, R) => picks![
            Pick::Status,
            Pick::Flag(F::IsCaughtUp, "caught_up"),
            Pick::Flag(F::IsFenced, "fenced"),
            Pick::Flag(F::ShouldShutDown, "should_shutdown"),
        ],
        (64, Q) => picks![Pick::Int(F::BrokerId, "broker")],
        (65, Q) => picks![Pick::List(list(F::TransactionalIds, "txns", Id::Scalar))],
        (65, R) => picks![Pick::List(
            list(F::TransactionStates, "txns", Id::Text(F::TransactionalId))
                .details(&[DetailPick::Text(F::TransactionState)]),
        )],
        (66, Q) => picks![Pick::List(
            list(F::StateFilters, "states", Id::Scalar).empty_all()
        )],
        (66, R) => picks![Pick::List(list(
            F::TransactionStates,
            "txns",
            Id::Text(F::TransactionalId),
        ))],
        (67, R) => picks![
            Pick::Status,
            Pick::Int(F::ProducerIdStart, "first_producer_id"),
            Pick::Int(F::ProducerIdLen, "producer_ids"),
        ],
        (69 | 77 | 89, Q) => picks![GROUP_IDS],
        (69 | 77 | 89, R) => picks![DESCRIBED_GROUPS],
        (70, Q) => picks![
            Pick::Int(F::ControllerId, "controller"),
            Pick::List(list(F::Listeners, "listeners", Id::Text(F::Name))),
        ],
        (71, Q) => picks![Pick::Uuid(F::ClientInstanceId, "client_instance")],
        (71, R) => picks![
            Pick::Status,
            Pick::Int(F::SubscriptionId, "subscription"),
            Pick::List(list(F::RequestedMetrics, "metrics", Id::Count)),
        ],
        (72, Q) => picks![
            Pick::Int(F::SubscriptionId, "subscription"),
            Pick::Flag(F::Terminating, "terminating"),
        ],
        (73, Q) => picks![
            Pick::Int(F::BrokerId, "broker"),
            Pick::Int(F::BrokerEpoch, "broker_epoch"),
            Pick::List(list(F::Directories, "dirs", Id::Count)),
        ],
        (73, R) => picks![
            Pick::Status,
            Pick::List(list(F::Directories, "dirs", Id::Count))
        ],
        (74, Q) => picks![Pick::List(
            list(F::ResourceTypes, "types", Id::Count).empty_all()
        )],
        (74, R) => picks![Pick::List(list(
            F::ConfigResources,
            "resources",
            Id::Text(F::ResourceName),
        ))],
        (83..=87, R) => STATE_RESULTS,
        (90, Q | R) => picks![Pick::List(list(F::Groups, "groups", Id::Text(F::GroupId)))],
        (93, Q) => picks![Pick::Int(F::TopologyEpoch, "topology_epoch")],
        (94, Q) => picks![Pick::Int(F::ControllerId, "controller")],
        _ => &[],
    }
}

/// The list pick of (API, direction) for the body's array `array`, if one lists it.
pub fn list_pick(
    api_key: i16,
    direction: Direction,
    array: FactField,
) -> Option<&'static ListPick> {
    picks(api_key, direction).iter().find_map(|p| match p {
        Pick::List(l) if l.array == array => Some(l),
        _ => None,
    })
}

/// The fields of one struct (the body, or an entry of one of its arrays), as the tree or the
/// walk holds them: the first field of each fact, plain before tagged.
pub(crate) trait Fields {
    /// An integer (a bool as 0 or 1).
    fn int(&self, f: FactField) -> Option<i64>;
    /// A string: `Some(None)` for null.
    fn text(&self, f: FactField) -> Option<Option<String>>;
    /// [`Fields::text`] of a string that names an entry (a topic, a group), shared
    /// ([`super::interned`]).
    fn name(&self, f: FactField) -> Option<Option<super::interned::Name>> {
        self.text(f)
            .map(|t| t.map(|s| super::interned::name_of(&s)))
    }
    fn uuid(&self, f: FactField) -> Option<[u8; 16]>;
    /// An array's element count: `Some(None)` for null.
    fn len(&self, f: FactField) -> Option<Option<usize>>;
    /// The field that is `f`, for the lists to name their array.
    fn field(&self, f: FactField) -> Option<FieldId>;
    /// The topic the struct names, as the topic lists read it.
    fn topic(&self) -> TopicRef;
}

/// What the entries of one listed array gave, as they were met.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Entries {
    first: Vec<TopicFact>,
    met: usize,
    sum: usize,
}

impl Entries {
    pub(crate) fn clear(&mut self) {
        self.first.clear();
        self.met = 0;
        self.sum = 0;
    }

    /// An entry that is a struct.
    pub(crate) fn element(&mut self, pick: &ListPick, e: &dyn Fields) {
        self.met += 1;
        if let Some((f, _)) = pick.sum {
            self.sum += e.len(f).flatten().unwrap_or(0);
        }
        if self.first.len() >= pick.shown {
            return;
        }
        let id = match pick.id {
            Id::Count | Id::Scalar => return,
            Id::Topic => e.topic(),
            Id::Text(f) => match e.name(f) {
                Some(Some(s)) => TopicRef::Name(s),
                _ => TopicRef::Unnamed,
            },
            Id::Int(f) => e
                .int(f)
                .map_or(TopicRef::Unnamed, |i| TopicRef::Name(i.to_string().into())),
        };
        let details = pick
            .details
            .iter()
            .filter_map(|d| match *d {
                DetailPick::Text(f) => e
                    .text(f)
                    .flatten()
                    .filter(|t| !t.is_empty())
                    .map(Detail::Text),
                DetailPick::Count(f, what) => e.len(f).flatten().map(|n| Detail::Count(n, what)),
                DetailPick::Either(f, yes, no) => e
                    .int(f)
                    .map(|v| Detail::Name(if v != 0 { yes } else { no })),
            })
            .collect();
        self.first.push(TopicFact {
            topic: id,
            error: e.int(F::ErrorCode).filter(|c| *c != 0).map(|c| c as i16),
            details,
        });
    }

    /// An entry that is a string (`None`: another scalar, or null).
    pub(crate) fn scalar(&mut self, pick: &ListPick, s: Option<String>) {
        self.met += 1;
        if pick.id == Id::Scalar && self.first.len() < pick.shown {
            let topic = s.map_or(TopicRef::Unnamed, |s| {
                TopicRef::Name(super::interned::name_of(&s))
            });
            self.first.push(TopicFact::new(topic, None));
        }
    }
}

/// The essentials `picks` chooses, read from the body's `fields`; `entries` gives what a
/// listed array's entries gave. Also whether the line says the error is NONE.
pub(crate) fn gather(
    picks: &[Pick],
    body: &dyn Fields,
    entries: &mut dyn FnMut(&ListPick) -> Option<Entries>,
) -> (Vec<Essential>, bool) {
    let mut out = Vec::new();
    let mut error_none = false;
    for pick in picks {
        let mut put = |label, value| out.push(Essential { label, value });
        match *pick {
            Pick::Int(f, label) => {
                if let Some(v) = body.int(f) {
                    put(label, EssentialValue::Int(v));
                }
            }
            Pick::Flag(f, label) => {
                if body.int(f).is_some_and(|v| v != 0) {
                    put(label, EssentialValue::Flag);
                }
            }
            Pick::Either(f, yes, no) => {
                if let Some(v) = body.int(f) {
                    put(if v != 0 { yes } else { no }, EssentialValue::Flag);
                }
            }
            Pick::IfNull(f, label) => {
                if body.text(f) == Some(None) {
                    put(label, EssentialValue::Text(None));
                }
            }
            Pick::Text(f, label, null) => match body.text(f) {
                Some(Some(s)) => put(label, EssentialValue::Text(Some(s))),
                Some(None) => put(label, EssentialValue::Name(null)),
                None => {}
            },
            Pick::Uuid(f, label) => {
                if let Some(u) = body.uuid(f) {
                    put(label, EssentialValue::Uuid(u));
                }
            }
            Pick::Named(f, label, enumeration) => {
                if let Some(v) = body.int(f) {
                    let name = crate::kafka::spec::names::enumeration(enumeration)
                        .and_then(|e| e.name_of(v));
                    match name {
                        Some(n) => put(label, EssentialValue::Name(n)),
                        None => put(label, EssentialValue::Int(v)),
                    }
                }
            }
            Pick::Status => error_none = body.int(F::ErrorCode) == Some(0),
            Pick::List(ref l) => list_value(l, body, entries, &mut put),
        }
    }
    (out, error_none)
}

/// A listed array's essentials: its entries (or their count), and the sum it asks for.
fn list_value(
    l: &ListPick,
    body: &dyn Fields,
    entries: &mut dyn FnMut(&ListPick) -> Option<Entries>,
    put: &mut dyn FnMut(&'static str, EssentialValue),
) {
    let Some(len) = body.len(l.array) else {
        return;
    };
    let got = entries(l).unwrap_or_default();
    let all = match len {
        None => true,
        Some(0) => l.empty_all,
        Some(_) => false,
    };
    let total = len.unwrap_or(0);
    if l.only_sum || (l.skip_empty && total == 0 && !all) {
        // Nothing to list: only the sum, if any.
    } else if l.id == Id::Count && !all {
        put(l.label, EssentialValue::Count(total));
    } else {
        put(
            l.label,
            EssentialValue::List(TopicList {
                all,
                first: if all { Vec::new() } else { got.first },
                total: if all { 0 } else { total },
                field: body.field(l.array),
            }),
        );
    }
    if let (Some((_, label)), false) = (l.sum, all) {
        put(label, EssentialValue::Count(got.sum));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::spec::schema::{registry, FieldSpec, FieldType};

    /// The fields of `spec`'s body, and of the structs of its arrays, by fact.
    fn has(fields: &[FieldSpec], f: FactField) -> Option<&FieldSpec> {
        fields.iter().find(|x| x.fact == f)
    }

    /// Every pick names a field of its API's body, every listed array's ids and details
    /// name fields of its entries, and every enumeration named exists: a misplaced name
    /// would say nothing.
    #[test]
    fn every_pick_names_fields_its_api_has() {
        let reg = registry();
        for key in reg.api_keys() {
            for dir in [Direction::Request, Direction::Response] {
                let specs: Vec<_> = reg
                    .versions(key, dir)
                    .into_iter()
                    .filter_map(|v| reg.get_for(key, dir, v))
                    .collect();
                for p in picks(key, dir) {
                    let (f, list) = match p {
                        Pick::Int(f, _)
                        | Pick::Flag(f, _)
                        | Pick::Either(f, _, _)
                        | Pick::IfNull(f, _)
                        | Pick::Text(f, _, _)
                        | Pick::Uuid(f, _) => (*f, None),
                        Pick::Named(f, _, e) => {
                            assert!(crate::kafka::spec::names::enumeration(e).is_some(), "{e}");
                            (*f, None)
                        }
                        Pick::Status => (F::ErrorCode, None),
                        Pick::List(l) => (l.array, Some(l)),
                    };
                    let field = specs
                        .iter()
                        .find_map(|spec| has(spec.fields, f))
                        .unwrap_or_else(|| panic!("{key} {dir:?}: no body field {f:?}"));
                    let Some(l) = list else { continue };
                    let scalar = match &field.ty {
                        FieldType::Array(inner) => !matches!(**inner, FieldType::Struct(_)),
                        other => panic!("{key} {dir:?}: {f:?} is {other:?}, not an array"),
                    };
                    if scalar {
                        assert!(
                            matches!(l.id, Id::Scalar | Id::Count),
                            "{key} {dir:?} {f:?}: an array of scalars is listed or counted"
                        );
                    } else {
                        assert!(
                            l.id != Id::Scalar,
                            "{key} {dir:?} {f:?}: entries are structs"
                        );
                    }
                    let mut wanted: Vec<FactField> = Vec::new();
                    if let Id::Text(x) | Id::Int(x) = l.id {
                        wanted.push(x);
                    }
                    for d in l.details {
                        match d {
                            DetailPick::Text(x)
                            | DetailPick::Count(x, _)
                            | DetailPick::Either(x, _, _) => wanted.push(*x),
                        }
                    }
                    wanted.extend(l.sum.map(|(x, _)| x));
                    for x in wanted {
                        assert!(
                            has(field.fields, x).is_some(),
                            "{key} {dir:?}: the entries of {f:?} have no {x:?}"
                        );
                    }
                }
            }
        }
    }
}
