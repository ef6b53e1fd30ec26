//! What the records of the KRaft metadata log change in the cluster, read from their decoded
//! values: a broker registered, fenced, unfenced or shutting down, a topic created or
//! deleted, a partition's leader or ISR changed, a config set. The summary line says them
//! (`PartitionChange orders-0 leader=3 isr=[1,3]`) and the `cluster` analysis follows them
//! over the capture (src/analyses/cluster.rs). Records that change nothing an operator
//! follows (NoOpRecord, producer id blocks, transactions markers of the log) are only
//! counted by type, as before.
//!
//! The fields are found by the fact their spec's name makes them (src/kafka/spec/fact_field.rs),
//! plain or tagged, as the other facts are.

pub use crate::kafka::meaning::facts::MAX_REPLICAS;
pub use crate::kafka::meaning::log::{Change, LogChange, LogRecords};

use crate::kafka::meaning::facts::{BrokerIds, FactField};
use crate::kafka::walk::node::{Node, NodeKind, Shape, Value};

/// The masked value of a config whose name says it is a secret (Kafka's password configs
/// end in `password`; JAAS configs and secrets hold credentials too).
pub const MASKED: &str = "****";

fn secret_config(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["password", "secret", "jaas", "credential", "token"]
        .iter()
        .any(|w| n.contains(w))
}

/// The child of a struct node whose spec is `fact`, plain or tagged.
fn field(n: &Node, fact: FactField) -> Option<&Node> {
    let mut tagged = None;
    for c in &n.children {
        if c.shape == Shape::TaggedField {
            if tagged.is_none() {
                tagged = c.children.iter().find(|g| g.fact() == fact);
            }
        } else if c.fact() == fact {
            return Some(c);
        }
    }
    tagged
}

fn int(n: &Node, fact: FactField) -> Option<i64> {
    match field(n, fact)?.value {
        Value::Int(i) => Some(i),
        Value::Bool(b) => Some(i64::from(b)),
        _ => None,
    }
}

fn int32(n: &Node, fact: FactField) -> Option<i32> {
    int(n, fact).and_then(|i| i32::try_from(i).ok())
}

fn text(n: &Node, fact: FactField) -> Option<String> {
    field(n, fact)?.as_str().map(str::to_string)
}

fn uuid(n: &Node, fact: FactField) -> Option<[u8; 16]> {
    match field(n, fact)?.value {
        Value::Uuid(u) => Some(u),
        _ => None,
    }
}

/// An int32 array (a replica list), its first [`MAX_REPLICAS`] entries.
fn ints(n: &Node, fact: FactField) -> Option<BrokerIds> {
    let a = field(n, fact)?;
    match a.value {
        Value::Array(_) => Some(
            a.children
                .iter()
                .filter(|c| c.kind != NodeKind::Length)
                .filter_map(|c| c.as_int().and_then(|i| i32::try_from(i).ok()))
                .take(MAX_REPLICAS)
                .collect(),
        ),
        _ => None,
    }
}

/// The name of a field's value in its enumeration, or the number.
fn named(n: &Node, fact: FactField) -> &'static str {
    let Some(f) = field(n, fact) else {
        return "?";
    };
    let v = f.as_int().unwrap_or(-1);
    f.field
        .and_then(|id| id.spec().enumeration)
        .and_then(|e| e.name_of(v))
        .unwrap_or("?")
}

/// The record types whose changes [`change`] tells: a line names those, and counts the
/// others by type.
const TOLD: &[&str] = &[
    "RegisterBrokerRecord",
    "UnregisterBrokerRecord",
    "BrokerRegistrationChangeRecord",
    "FenceBrokerRecord",
    "UnfenceBrokerRecord",
    "RegisterControllerRecord",
    "UnregisterControllerRecord",
    "TopicRecord",
    "RemoveTopicRecord",
    "PartitionRecord",
    "PartitionChangeRecord",
    "ConfigRecord",
    "FeatureLevelRecord",
    "ClientQuotaRecord",
    "UserScramCredentialRecord",
    "RemoveUserScramCredentialRecord",
    "AccessControlEntryRecord",
    "RemoveAccessControlEntryRecord",
];

/// Whether records of type `ty` are told as changes.
pub fn told(ty: &str) -> bool {
    TOLD.contains(&ty)
}

/// What the record `ty` whose value decoded to `value` (the record's group: frame version,
/// type, version, then its fields) changes; `None` for the records only counted. Long: one
/// arm per type of record, each reading its fields.
pub(crate) fn change(ty: &str, value: &Node) -> Option<Change> {
    use FactField as F;
    let v = value;
    Some(match ty {
        "RegisterBrokerRecord" => Change::BrokerRegistered {
            broker: int32(v, F::BrokerId)?,
            epoch: int(v, F::BrokerEpoch)?,
            fenced: int(v, F::Fenced).is_some_and(|f| f != 0),
            shutting_down: int(v, F::InControlledShutdown).is_some_and(|f| f != 0),
        },
        "UnregisterBrokerRecord" => Change::BrokerUnregistered {
            broker: int32(v, F::BrokerId)?,
            epoch: int(v, F::BrokerEpoch)?,
        },
        "BrokerRegistrationChangeRecord" => Change::BrokerChanged {
            broker: int32(v, F::BrokerId)?,
            epoch: int(v, F::BrokerEpoch)?,
            // -1 unfenced, 1 fenced, 0 (the default) unchanged.
            fenced: match int(v, F::Fenced) {
                Some(1) => Some(true),
                Some(-1) => Some(false),
                _ => None,
            },
            shutting_down: int(v, F::InControlledShutdown) == Some(1),
        },
        "FenceBrokerRecord" | "UnfenceBrokerRecord" => Change::BrokerChanged {
            broker: int32(v, F::Id)?,
            epoch: int(v, F::Epoch)?,
            fenced: Some(ty == "FenceBrokerRecord"),
            shutting_down: false,
        },
        "RegisterControllerRecord" | "UnregisterControllerRecord" => Change::Controller {
            controller: int32(v, F::ControllerId)?,
            registered: ty == "RegisterControllerRecord",
        },
        "TopicRecord" => Change::TopicCreated {
            topic: uuid(v, F::TopicId)?,
            name: text(v, F::Name)?,
        },
        "RemoveTopicRecord" => Change::TopicDeleted {
            topic: uuid(v, F::TopicId)?,
            name: None,
        },
        "PartitionRecord" => Change::PartitionCreated {
            topic: uuid(v, F::TopicId)?,
            name: None,
            partition: int32(v, F::PartitionId)?,
            leader: int32(v, F::Leader).unwrap_or(-1),
            isr: ints(v, F::Isr).unwrap_or_default(),
            replicas: ints(v, F::Replicas).unwrap_or_default(),
        },
        "PartitionChangeRecord" => Change::PartitionChanged {
            topic: uuid(v, F::TopicId)?,
            name: None,
            partition: int32(v, F::PartitionId)?,
            // -2, the default, means the leader did not change.
            leader: int32(v, F::Leader).filter(|l| *l != -2),
            isr: ints(v, F::Isr),
            replicas: ints(v, F::Replicas),
        },
        "ConfigRecord" => {
            let name = text(v, F::Name)?;
            let value = text(v, F::Value).map(|val| {
                if secret_config(&name) {
                    MASKED.to_string()
                } else {
                    val
                }
            });
            Change::Config {
                resource_type: named(v, F::ResourceType),
                resource: text(v, F::ResourceName).unwrap_or_default(),
                name,
                value,
            }
        }
        "FeatureLevelRecord" => Change::Feature {
            name: text(v, F::Name)?,
            level: int(v, F::FeatureLevel)?,
        },
        "ClientQuotaRecord" => Change::Quota {
            entity: quota_entity(v),
            key: text(v, F::Key)?,
            removed: int(v, F::Remove).is_some_and(|r| r != 0),
        },
        "UserScramCredentialRecord" | "RemoveUserScramCredentialRecord" => Change::ScramUser {
            user: text(v, F::Name)?,
            mechanism: named(v, F::Mechanism),
            removed: ty == "RemoveUserScramCredentialRecord",
        },
        "AccessControlEntryRecord" | "RemoveAccessControlEntryRecord" => Change::Acl {
            principal: text(v, F::Principal),
            added: ty == "AccessControlEntryRecord",
        },
        _ => return None,
    })
}

/// A quota's entity: `user=alice,client-id=app` (`<default>` for a null name).
fn quota_entity(v: &Node) -> String {
    let Some(list) = field(v, FactField::Entity) else {
        return String::new();
    };
    list.children
        .iter()
        .filter(|c| c.kind != NodeKind::Length)
        .take(4)
        .map(|e| {
            let ty = text(e, FactField::EntityType).unwrap_or_default();
            let name = text(e, FactField::EntityName).unwrap_or_else(|| "<default>".into());
            format!("{ty}={name}")
        })
        .collect::<Vec<_>>()
        .join(",")
}
