//! Message specs as data. The files under `schema/` use the layout of Kafka's own JSON message
//! specs (without comments); they are embedded at build time and parsed once, on first use.

use serde::Deserialize;
use std::collections::HashMap;
use std::sync::OnceLock;

include!(concat!(env!("OUT_DIR"), "/spec_files.rs"));

pub use super::versions::{FieldType, Versions};

impl<'de> Deserialize<'de> for Versions {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Versions::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawField {
    name: String,
    #[serde(rename = "type")]
    ty: String,
    versions: Versions,
    #[serde(default = "none")]
    nullable_versions: Versions,
    #[serde(default = "none")]
    tagged_versions: Versions,
    #[serde(default)]
    tag: Option<u32>,
    #[serde(default, deserialize_with = "loose_bool")]
    ignorable: bool,
    #[serde(default)]
    default: Option<serde_json::Value>,
    #[serde(default)]
    entity_type: Option<String>,
    #[serde(default, deserialize_with = "loose_bool")]
    map_key: bool,
    #[serde(default)]
    about: String,
    #[serde(default)]
    content: Content,
    /// The enumeration naming the field's values (kdissect's key, from schema-src/enums.json).
    #[serde(default, rename = "enum")]
    enumeration: Option<String>,
    #[serde(default)]
    flexible_versions: Option<Versions>,
    #[serde(default)]
    fields: Option<Vec<RawField>>,
}

/// What a bytes field holds beyond bytes (kdissect's own key in the tables, from
/// schema-src/content.json).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Content {
    #[default]
    Plain,
    /// A SASL message: split into its parts, its secrets masked.
    Sasl,
    /// A secret (a token's HMAC, a salted password): masked whole.
    Secret,
    /// Another message, decoded in place (Envelope's request and principal).
    Embedded(Layout),
}

/// How the bytes of an embedded message are laid out, as schema-src/content.json and
/// schema-src/records.json write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// `"request"`: a request header and body, as a broker received them (no size prefix); the
    /// header names the API and version.
    Request,
    /// `"response"`: a response header and body, of the API and version that the paired
    /// request's embedded request named.
    Response,
    /// `{"layout": "version-prefixed", "spec": NAME}`: an int16 version, then the data message
    /// NAME at that version (Kafka's `MessageUtil.toVersionPrefixedBytes`).
    VersionPrefixed(String),
    /// `{"layout": "unprefixed", "spec": NAME, "version": V}`: the data message NAME at version V,
    /// nothing before it.
    Unprefixed(String, i16),
    /// `"metadata-record"`: a record of the KRaft metadata log: unsigned varints frame version,
    /// record type and version, then the metadata record of that type (Kafka's
    /// `AbstractApiMessageSerde`).
    MetadataRecord,
    /// `{"layout": "consumer-protocol", "spec": NAME}`: a group protocol's bytes, read as
    /// version-prefixed NAME when they are in that layout. The same field carries the bytes of
    /// other protocol types (Connect's, Streams' own), which do not read whole as NAME: those
    /// are shown as bytes, and are no damage.
    ConsumerProtocol(String),
}

impl Layout {
    fn from_json(v: &serde_json::Value) -> Result<Layout, String> {
        let spec = || {
            v.get("spec")
                .and_then(|s| s.as_str())
                .map(str::to_string)
                .ok_or_else(|| format!("layout {v} names no spec"))
        };
        match (v.as_str(), v.get("layout").and_then(|l| l.as_str())) {
            (Some("request"), _) => Ok(Layout::Request),
            (Some("response"), _) => Ok(Layout::Response),
            (Some("metadata-record"), _) => Ok(Layout::MetadataRecord),
            (None, Some("version-prefixed")) => Ok(Layout::VersionPrefixed(spec()?)),
            (None, Some("consumer-protocol")) => Ok(Layout::ConsumerProtocol(spec()?)),
            (None, Some("unprefixed")) => {
                let version = v
                    .get("version")
                    .and_then(|x| x.as_i64())
                    .and_then(|x| i16::try_from(x).ok())
                    .ok_or_else(|| format!("layout {v} has no version"))?;
                Ok(Layout::Unprefixed(spec()?, version))
            }
            _ => Err(format!("{v} is not a layout")),
        }
    }

    /// The data spec the layout reads, for those that name one.
    pub fn spec_name(&self) -> Option<&str> {
        match self {
            Layout::VersionPrefixed(n) | Layout::Unprefixed(n, _) | Layout::ConsumerProtocol(n) => {
                Some(n)
            }
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        match v.as_str() {
            Some("plain") => Ok(Content::Plain),
            Some("sasl") => Ok(Content::Sasl),
            Some("secret") => Ok(Content::Secret),
            _ => Layout::from_json(&v)
                .map(Content::Embedded)
                .map_err(serde::de::Error::custom),
        }
    }
}

/// Kafka's specs write a few booleans as strings (`"ignorable": "true"`): accept both.
fn loose_bool<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::Bool(b) => Ok(b),
        serde_json::Value::String(s) => Ok(s == "true"),
        other => Err(serde::de::Error::custom(format!(
            "expected a boolean, found {other}"
        ))),
    }
}

fn none() -> Versions {
    Versions::NONE
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawStruct {
    name: String,
    fields: Vec<RawField>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawSpec {
    /// Absent in the two header specs.
    #[serde(default)]
    api_key: Option<i16>,
    #[serde(rename = "type")]
    kind: String,
    name: String,
    valid_versions: Versions,
    flexible_versions: Versions,
    fields: Vec<RawField>,
    #[serde(default)]
    common_structs: Vec<RawStruct>,
    /// Kafka 4.5's map from the message's versions to the header version each uses
    /// (`{"0-8": "1", "9+": "2"}`); absent in older specs.
    #[serde(default)]
    header_versions: Option<serde_json::Map<String, serde_json::Value>>,
}

/// A field of the spec tables, which live for the whole run once loaded: what a node, a path
/// or a problem holds instead of the field's name, which is looked up when it is printed.
/// Two ids are equal when they are the same field of the same table.
#[derive(Clone, Copy)]
pub struct FieldId(&'static FieldSpec);

impl FieldId {
    pub fn of(f: &'static FieldSpec) -> FieldId {
        FieldId(f)
    }

    pub fn spec(self) -> &'static FieldSpec {
        self.0
    }

    pub fn name(self) -> &'static str {
        self.0.name.as_str()
    }

    pub fn role(self) -> Role {
        self.0.role
    }
}

/// What a field is for, as the fact collectors and renderers need to know it: worked out
/// once from the field's name and type when the tables load, so that readers of a decoded
/// message test a role instead of a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Role {
    #[default]
    Other,
    /// `TopicId`.
    TopicId,
    /// A struct's `Name` or `TopicName` string: beside a `TopicId`, that topic's name.
    Name,
    /// An int16 error code (`ErrorCode`, `PartitionErrorCode`...).
    ErrorCode,
    /// An int32 partition number: `PartitionIndex`, `Partition`, `PartitionId`, `Index`
    /// (Produce's).
    Partition,
    /// An int32 array of partition numbers: `Partitions`, `PartitionIndexes`.
    PartitionList,
    /// `ThrottleTimeMs`: how long the broker throttled the client.
    ThrottleTime,
    /// `ClusterId`.
    ClusterId,
    /// `ReplicaId`: the broker a follower's request comes from (-1 for a consumer).
    ReplicaId,
    /// `Mechanism`: the SASL mechanism a handshake asks for.
    Mechanism,
    /// The list of topics a message is about: `Topics`, `TopicData` (Produce's request) or
    /// `Responses` (Produce's and Fetch's responses). No struct has two of them.
    TopicArray,
    /// `Brokers`: the brokers a Metadata response lists.
    Brokers,
    /// `ApiKeys`: the APIs an ApiVersions response advertises.
    ApiKeys,
    /// `NodeId`: a broker's id (FindCoordinator's coordinator).
    NodeId,
    /// `Coordinators`: FindCoordinator's coordinators, one per key (v4 on).
    Coordinators,
    /// `Groups`: the groups a message is about (OffsetFetch v8 on nests topics in them).
    Groups,
    /// `Mechanisms`: the SASL mechanisms a handshake response offers.
    Mechanisms,
    /// `CoordinatorKeys`: the keys FindCoordinator v4 on asks about.
    CoordinatorKeys,
    /// `TopicNames`: a list of plain topic names (DeleteTopics v0-5).
    TopicNames,
}

/// For unit tests that build nodes by hand: a field of Metadata's response with this role
/// (`TopicId`, a topic's `Name`, an `ErrorCode`).
#[cfg(test)]
#[allow(clippy::expect_used)]
pub(crate) fn metadata_field(role: Role) -> FieldId {
    fn find(fields: &'static [FieldSpec], role: Role) -> Option<FieldId> {
        fields.iter().find_map(|f| {
            (f.role == role)
                .then_some(FieldId::of(f))
                .or_else(|| find(&f.fields, role))
        })
    }
    let spec = registry()
        .get(3, Direction::Response)
        .expect("Metadata response");
    find(&spec.fields, role).expect("a field with the role")
}

impl FieldSpec {
    /// An int16 error code (`ErrorCode`, `PartitionErrorCode`...): listed when not zero.
    pub fn is_error_code(&self) -> bool {
        self.error_code
    }
}

impl Role {
    /// How many roles there are: the last one's number, plus one.
    pub const COUNT: usize = Role::TopicNames as usize + 1;

    /// The role of a field called `name` of type `ty`.
    pub fn of(name: &str, ty: &FieldType) -> Role {
        match (name, ty) {
            ("TopicId", _) => Role::TopicId,
            ("Name" | "TopicName", FieldType::String) => Role::Name,
            (n, _) if n.ends_with("ErrorCode") => Role::ErrorCode,
            ("PartitionIndex" | "Partition" | "PartitionId" | "Index", FieldType::Int32) => {
                Role::Partition
            }
            ("Partitions" | "PartitionIndexes", FieldType::Array(e)) if **e == FieldType::Int32 => {
                Role::PartitionList
            }
            ("ThrottleTimeMs", _) => Role::ThrottleTime,
            ("Brokers", _) => Role::Brokers,
            ("ApiKeys", _) => Role::ApiKeys,
            ("NodeId", _) => Role::NodeId,
            ("Coordinators", _) => Role::Coordinators,
            ("Groups", _) => Role::Groups,
            ("Mechanisms", _) => Role::Mechanisms,
            ("CoordinatorKeys", _) => Role::CoordinatorKeys,
            ("TopicNames", _) => Role::TopicNames,
            ("Topics" | "TopicData" | "Responses", _) => Role::TopicArray,
            ("ClusterId", _) => Role::ClusterId,
            ("ReplicaId", _) => Role::ReplicaId,
            ("Mechanism", _) => Role::Mechanism,
            _ => Role::Other,
        }
    }
}

impl PartialEq for FieldId {
    fn eq(&self, other: &FieldId) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for FieldId {}

impl std::fmt::Debug for FieldId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FieldId({})", self.name())
    }
}

/// One field of a message or struct.
#[derive(Debug, Clone)]
pub struct FieldSpec {
    pub name: String,
    pub ty: FieldType,
    pub versions: Versions,
    pub nullable_versions: Versions,
    pub tagged_versions: Versions,
    pub tag: Option<u32>,
    pub ignorable: bool,
    pub default: Option<String>,
    pub entity_type: Option<String>,
    pub map_key: bool,
    pub about: String,
    /// What the bytes hold, for fields that carry SASL messages or secrets.
    pub content: Content,
    /// The names of the field's values, for integers that are enumerations.
    pub enumeration: Option<&'static super::names::Enum>,
    /// The field's own flexible versions where its spec sets them: `none` keeps the old
    /// (int16 or int32) length prefix even in flexible versions, as the request header's
    /// ClientId does. `None` follows the message's flexible versions.
    pub flexible_versions: Option<Versions>,
    /// Fields of the struct this field holds (inline or resolved from the common structs).
    pub fields: Vec<FieldSpec>,
    /// The type as shown: `int32`, `[]MetadataRequestTopic` (made once, not per message).
    pub type_name: String,
    /// For arrays, the element type as shown: `MetadataRequestTopic`, `int32`.
    pub elem_name: String,
    /// What the field is for (from its name and type, once).
    pub role: Role,
    /// Which field the facts read this one as, from its name (once).
    pub fact: super::fact_field::FactField,
    /// The facts (src/kafka/meaning/facts.rs) or the topic names read this field: a view that needs
    /// only the facts keeps its node, and walks past the others.
    pub facts: bool,
    /// An int16 error code (role `ErrorCode`), and a string naming a topic (entity type
    /// `topicName`): tested for every value decoded, so decided once.
    pub error_code: bool,
    pub names_topic: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    Request,
    Response,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Request => "request",
            Direction::Response => "response",
        }
    }
}

/// What a spec describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecKind {
    /// One direction of one API.
    Message,
    /// RequestHeader or ResponseHeader.
    Header,
    /// A message carried inside another's bytes (Kafka's `"type": "data"`): a principal, a
    /// control record's key or value.
    Data,
    /// A record of the KRaft metadata log (`"type": "metadata"`); its api key is the record type.
    MetadataRecord,
}

/// A whole message spec: one direction of one API, or one of the two headers.
#[derive(Debug, Clone)]
pub struct MessageSpec {
    /// The API key (for a metadata record, its record type); -1 for a header, which every API
    /// shares, and for data.
    pub api_key: i16,
    pub kind: SpecKind,
    pub direction: Direction,
    /// Kafka's `"type": "header"`: RequestHeader or ResponseHeader, not a message body.
    pub header: bool,
    pub name: String,
    pub valid_versions: Versions,
    pub flexible_versions: Versions,
    pub fields: Vec<FieldSpec>,
    /// Some field holds a secret or a SASL message: bytes left undecoded after an error may
    /// hold one too, so they are masked.
    pub has_secrets: bool,
    /// Some field may hold a topic id: a uuid, or records and embedded messages, which have
    /// fields of their own. Messages without one have no id to name.
    pub may_hold_ids: bool,
    /// The index of its file among the embedded message specs, by which the walks generated
    /// from it are found (src/kafka/walk/generated.rs); `None` for a spec read at run time.
    pub walk: Option<u16>,
    /// The spec's `headerVersions`: which header version each range of versions uses, the
    /// last range open. Empty where the spec gives none (Kafka 4.4 and older), and the header
    /// follows the body's flexibility (src/kafka/spec/headers.rs).
    pub header_versions: Vec<(Versions, i16)>,
}

fn any_id_holder(fields: &[FieldSpec]) -> bool {
    fields.iter().any(|f| {
        matches!(f.content, Content::Embedded(_)) || holds_id(&f.ty) || any_id_holder(&f.fields)
    })
}

fn holds_id(ty: &FieldType) -> bool {
    match ty {
        FieldType::Uuid | FieldType::Records => true,
        FieldType::Array(inner) => holds_id(inner),
        _ => false,
    }
}

fn any_secret(fields: &[FieldSpec]) -> bool {
    fields
        .iter()
        .any(|f| matches!(f.content, Content::Sasl | Content::Secret) || any_secret(&f.fields))
}

impl MessageSpec {
    pub fn max_version(&self) -> i16 {
        self.valid_versions.max.unwrap_or(self.valid_versions.min)
    }

    pub fn is_flexible(&self, version: i16) -> bool {
        self.flexible_versions.contains(version)
    }

    /// The header version the spec's `headerVersions` gives `version` (a version newer than
    /// the spec falls in its last, open range); `None` where the spec gives no map.
    pub fn header_version(&self, version: i16) -> Option<i16> {
        self.header_versions
            .iter()
            .find(|(r, _)| r.contains(version))
            .map(|(_, h)| *h)
    }
}

/// A `headerVersions` map as Kafka writes it (ranges to header versions, as strings or
/// numbers), in order of its ranges, which must start at 0, meet without gap or overlap and
/// end open (`"9+"`), as Kafka's generator requires.
fn header_versions(
    raw: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Result<Vec<(Versions, i16)>, String> {
    let Some(raw) = raw else {
        return Ok(Vec::new());
    };
    let mut out = Vec::with_capacity(raw.len());
    for (range, header) in raw {
        let r = Versions::parse(range).map_err(|e| format!("headerVersions: {e}"))?;
        let h = match header {
            serde_json::Value::String(s) => s.trim().parse::<i16>().ok(),
            serde_json::Value::Number(n) => n.as_i64().and_then(|n| i16::try_from(n).ok()),
            _ => None,
        }
        .ok_or_else(|| {
            format!("headerVersions: {range:?} maps to {header}, not a header version")
        })?;
        out.push((r, h));
    }
    out.sort_by_key(|(r, _)| r.min);
    let mut next = 0;
    for (i, (r, _)) in out.iter().enumerate() {
        let last = i + 1 == out.len();
        if r.none || r.min != next || r.max.is_none() != last {
            return Err(format!(
                "headerVersions: the ranges must cover every version from 0, the last open; found {:?}",
                raw.keys().collect::<Vec<_>>()
            ));
        }
        next = r.max.map_or(next, |m| m.saturating_add(1));
    }
    Ok(out)
}

fn convert_fields(
    raw: &[RawField],
    common: &HashMap<String, RawStruct>,
    depth: usize,
) -> Result<Vec<FieldSpec>, String> {
    if depth > 32 {
        return Err("struct nesting deeper than 32 (recursive common struct?)".into());
    }
    raw.iter()
        .map(|f| {
            let ty = FieldType::parse(&f.ty);
            let struct_name = match &ty {
                FieldType::Struct(n) => Some(n.clone()),
                FieldType::Array(inner) => match inner.as_ref() {
                    FieldType::Struct(n) => Some(n.clone()),
                    _ => None,
                },
                _ => None,
            };
            let fields = match (&f.fields, struct_name) {
                (Some(inline), _) => convert_fields(inline, common, depth + 1)?,
                (None, Some(n)) => match common.get(&n) {
                    Some(s) => convert_fields(&s.fields, common, depth + 1)?,
                    None => return Err(format!("field {}: unknown struct type {n}", f.name)),
                },
                (None, None) => Vec::new(),
            };
            let default = f.default.as_ref().map(|d| match d {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            let enumeration = match &f.enumeration {
                Some(e) => Some(
                    super::names::enumeration(e)
                        .ok_or_else(|| format!("field {}: unknown enumeration {e}", f.name))?,
                ),
                None => None,
            };
            let type_name = ty.display();
            let elem_name = match &ty {
                FieldType::Array(inner) => inner.display(),
                other => other.display(),
            };
            let role = Role::of(&f.name, &ty);
            let fact = super::fact_field::FactField::of(&f.name);
            let names_topic =
                ty == FieldType::String && f.entity_type.as_deref() == Some("topicName");
            Ok(FieldSpec {
                error_code: role == Role::ErrorCode && ty == FieldType::Int16,
                names_topic,
                // The `topic` filter reads every topic name too.
                facts: super::fact_field::reads(fact, role) || names_topic,
                fact,
                role,
                type_name,
                elem_name,
                name: f.name.clone(),
                ty,
                versions: f.versions,
                nullable_versions: f.nullable_versions,
                tagged_versions: f.tagged_versions,
                tag: f.tag,
                ignorable: f.ignorable,
                default,
                entity_type: f.entity_type.clone(),
                map_key: f.map_key,
                about: f.about.clone(),
                content: f.content.clone(),
                enumeration,
                flexible_versions: f.flexible_versions,
                fields,
            })
        })
        .collect()
}

/// Parses one spec file (Kafka's JSON layout; `//` comment lines are tolerated).
pub fn parse_spec(text: &str) -> Result<MessageSpec, String> {
    let cleaned: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let raw: RawSpec = serde_json::from_str(&cleaned).map_err(|e| e.to_string())?;
    let common: HashMap<String, RawStruct> = raw
        .common_structs
        .iter()
        .map(|s| (s.name.clone(), s.clone()))
        .collect();
    let (direction, kind) = match (raw.kind.as_str(), raw.name.as_str()) {
        ("request", _) => (Direction::Request, SpecKind::Message),
        ("response", _) => (Direction::Response, SpecKind::Message),
        ("header", "RequestHeader") => (Direction::Request, SpecKind::Header),
        ("header", "ResponseHeader") => (Direction::Response, SpecKind::Header),
        // Data and metadata records have no direction; they are read as request bodies are.
        ("data", _) => (Direction::Request, SpecKind::Data),
        ("metadata", _) => (Direction::Request, SpecKind::MetadataRecord),
        (other, name) => {
            return Err(format!(
            "spec {name} of type {other:?} is neither a request, a response, a header, data nor a metadata record"
        ))
        }
    };
    let header = kind == SpecKind::Header;
    let keyless = matches!(kind, SpecKind::Header | SpecKind::Data);
    let api_key = match raw.api_key {
        Some(k) if !keyless => k,
        None if keyless => -1,
        Some(_) => return Err(format!("{} has an apiKey", raw.name)),
        None => return Err(format!("{} has no apiKey", raw.name)),
    };
    let fields = convert_fields(&raw.fields, &common, 0)?;
    let header_versions =
        header_versions(raw.header_versions.as_ref()).map_err(|e| format!("{}: {e}", raw.name))?;
    Ok(MessageSpec {
        api_key,
        kind,
        direction,
        header,
        name: raw.name,
        valid_versions: raw.valid_versions,
        flexible_versions: raw.flexible_versions,
        has_secrets: any_secret(&fields),
        may_hold_ids: any_id_holder(&fields),
        walk: None,
        header_versions,
        fields,
    })
}

/// How many versions past the newest table a request header may claim and still be taken for
/// a frame boundary when resynchronising (decoding itself tries the newest layout whatever the
/// version, and keeps it only if every byte fits).
pub const NEWER_VERSIONS: i16 = 8;

/// All embedded specs, keyed by (api key, direction). An API may have a current spec and a
/// legacy one for versions a newer Kafka removed; the current one comes first. The two headers
/// are kept apart, by direction, in the same order (RequestHeader v0, which only
/// ControlledShutdown v0 uses, is legacy).
/// The spec tables by API and direction, looked up several times a message: indexed by both,
/// as Kafka's API keys are small and dense, where hashing them cost about 70 instructions a
/// lookup.
#[derive(Default)]
struct SpecMap {
    /// At `api_key * 2`, the request's files; at `api_key * 2 + 1`, the response's.
    slots: Vec<Vec<Lazy>>,
}

impl SpecMap {
    fn index(api_key: i16, direction: Direction) -> Option<usize> {
        let key = usize::try_from(api_key).ok()?;
        Some(key * 2 + usize::from(direction == Direction::Response))
    }

    fn get(&self, &(api_key, direction): &(i16, Direction)) -> Option<&Vec<Lazy>> {
        self.slots
            .get(Self::index(api_key, direction)?)
            .filter(|v| !v.is_empty())
    }

    fn contains_key(&self, key: &(i16, Direction)) -> bool {
        self.get(key).is_some()
    }

    /// The files of (API, direction), made empty if there were none.
    fn slot(&mut self, api_key: i16, direction: Direction) -> Option<&mut Vec<Lazy>> {
        let i = Self::index(api_key, direction)?;
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, Vec::new);
        }
        self.slots.get_mut(i)
    }

    fn values(&self) -> impl Iterator<Item = &Vec<Lazy>> {
        self.slots.iter().filter(|v| !v.is_empty())
    }

    fn values_mut(&mut self) -> impl Iterator<Item = &mut Vec<Lazy>> {
        self.slots.iter_mut()
    }

    /// (API key, direction) of every slot that has a file.
    fn keys(&self) -> impl Iterator<Item = (i16, Direction)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, v)| !v.is_empty())
            .filter_map(|(i, _)| {
                let direction = if i % 2 == 1 {
                    Direction::Response
                } else {
                    Direction::Request
                };
                Some((i16::try_from(i / 2).ok()?, direction))
            })
    }
}

/// A message spec file, parsed on first use: a run meets a few APIs of the ~250 files, and
/// parsing them all cost some 27 M instructions at start-up. Its API, direction and versions
/// come from the build script (`SPEC_HEADS`), so that choosing a spec by version parses only
/// the one chosen.
struct Lazy {
    /// Its index in `SPEC_FILES`.
    file: usize,
    valid: Versions,
    spec: OnceLock<Option<MessageSpec>>,
}

impl Lazy {
    /// The spec, parsed the first time; `None` (reported once) if it does not parse.
    fn spec(&self) -> Option<&MessageSpec> {
        self.spec
            .get_or_init(|| {
                let (name, text) = SPEC_FILES.get(self.file)?;
                match parse_spec(text) {
                    Ok(mut s) => {
                        // The build script generated the walks of SPEC_FILES in this order.
                        s.walk = u16::try_from(self.file).ok();
                        Some(s)
                    }
                    Err(e) => {
                        eprintln!("kdissect: internal spec {name} is invalid: {e}");
                        None
                    }
                }
            })
            .as_ref()
    }

    fn max_version(&self) -> i16 {
        self.valid.max.unwrap_or(self.valid.min)
    }
}

pub struct Registry {
    specs: SpecMap,
    headers: HashMap<Direction, Vec<MessageSpec>, foldhash::fast::RandomState>,
    /// The data and metadata record specs, parsed on first use: most inputs never need them,
    /// and parsing them costs every run at start-up.
    embedded: OnceLock<EmbeddedSpecs>,
    records: RecordLayouts,
}

/// Specs of messages carried inside others: data messages by name, metadata records by type.
#[derive(Default)]
struct EmbeddedSpecs {
    data: HashMap<String, MessageSpec, foldhash::fast::RandomState>,
    metadata: HashMap<i16, MessageSpec, foldhash::fast::RandomState>,
}

impl EmbeddedSpecs {
    fn load() -> EmbeddedSpecs {
        let mut e = EmbeddedSpecs::default();
        for (file, text) in DATA_FILES.iter().chain(METADATA_FILES) {
            match parse_spec(text) {
                Ok(s) if s.kind == SpecKind::Data => drop(e.data.insert(s.name.clone(), s)),
                Ok(s) if s.kind == SpecKind::MetadataRecord => {
                    drop(e.metadata.insert(s.api_key, s))
                }
                Ok(s) => eprintln!("kdissect: internal spec {file} is not data: {}", s.name),
                Err(err) => eprintln!("kdissect: internal spec {file} is invalid: {err}"),
            }
        }
        e
    }
}

impl Registry {
    fn embedded(&self) -> &EmbeddedSpecs {
        self.embedded.get_or_init(EmbeddedSpecs::load)
    }

    /// A data message (a principal, a control record's key or value) by name.
    pub fn data(&self, name: &str) -> Option<&MessageSpec> {
        self.embedded().data.get(name)
    }

    /// The metadata record of a record type (`TopicRecord` for 2).
    pub fn metadata_record(&self, record_type: i16) -> Option<&MessageSpec> {
        self.embedded().metadata.get(&record_type)
    }

    /// Every metadata record spec, by record type.
    pub fn metadata_records(&self) -> impl Iterator<Item = &MessageSpec> {
        self.embedded().metadata.values()
    }

    /// Every data message spec.
    pub fn data_specs(&self) -> impl Iterator<Item = &MessageSpec> {
        self.embedded().data.values()
    }

    /// How record keys and values are laid out where they are not plain bytes.
    pub fn record_layouts(&self) -> &RecordLayouts {
        &self.records
    }

    /// The header spec of a direction that has `version`, or else the current one.
    pub fn header(&self, direction: Direction, version: i16) -> Option<&MessageSpec> {
        let v = self.headers.get(&direction)?;
        v.iter()
            .find(|s| s.valid_versions.contains(version))
            .or_else(|| v.first())
    }

    /// Every header spec, current and legacy.
    pub fn header_specs(&self) -> impl Iterator<Item = &MessageSpec> {
        self.headers.values().flatten()
    }

    /// The current spec file of an API (the one with valid versions, preferring the newest).
    fn current(&self, api_key: i16, direction: Direction) -> Option<&Lazy> {
        self.specs.get(&(api_key, direction))?.first()
    }

    /// The current spec of an API (the one with valid versions, preferring the newest).
    pub fn get(&self, api_key: i16, direction: Direction) -> Option<&MessageSpec> {
        self.current(api_key, direction)?.spec()
    }

    /// Whether a message of the API in `direction` may hold a topic id, whatever its version
    /// (true for an API without a spec).
    pub fn may_hold_ids(&self, api_key: i16, direction: Direction) -> bool {
        self.specs
            .get(&(api_key, direction))
            .is_none_or(|v| v.iter().any(|l| l.spec().is_some_and(|s| s.may_hold_ids)))
    }

    /// The spec that has `version`, or else the current one.
    pub fn get_for(
        &self,
        api_key: i16,
        direction: Direction,
        version: i16,
    ) -> Option<&MessageSpec> {
        let v = self.specs.get(&(api_key, direction))?;
        v.iter()
            .find(|l| l.valid.contains(version))
            .or_else(|| v.first())?
            .spec()
    }

    /// Every message spec, current and legacy (each parsed, if it was not yet).
    pub fn message_specs(&self) -> impl Iterator<Item = &MessageSpec> {
        self.specs.values().flatten().filter_map(Lazy::spec)
    }

    /// Every version any spec of the API has, ascending.
    pub fn versions(&self, api_key: i16, direction: Direction) -> Vec<i16> {
        let mut out: Vec<i16> = self
            .specs
            .get(&(api_key, direction))
            .into_iter()
            .flatten()
            .filter(|l| !l.valid.none)
            .flat_map(|l| l.valid.min..=l.max_version())
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Every API key with the versions either direction has, both sorted, keys without a
    /// version left out: the table the fuzz targets and their seeds index.
    pub fn api_versions(&self) -> Vec<(i16, Vec<i16>)> {
        self.api_keys()
            .into_iter()
            .map(|k| {
                let mut v = self.versions(k, Direction::Request);
                v.extend(self.versions(k, Direction::Response));
                v.sort_unstable();
                v.dedup();
                (k, v)
            })
            .filter(|(_, v)| !v.is_empty())
            .collect()
    }

    /// The API keys that have both a request and a response spec, sorted.
    pub fn api_keys(&self) -> Vec<i16> {
        let mut keys: Vec<i16> = self
            .specs
            .keys()
            .filter(|(_, d)| *d == Direction::Request)
            .map(|(k, _)| k)
            .filter(|k| self.specs.contains_key(&(*k, Direction::Response)))
            .collect();
        keys.sort_unstable();
        keys
    }

    /// For a version newer than every table of an API: the current spec and its newest version,
    /// whose layout is the best guess at what a newer Kafka sends (new versions mostly add
    /// fields at the end or as tagged fields, or change only semantics).
    pub fn newest_layout(
        &self,
        api_key: i16,
        direction: Direction,
        version: i16,
    ) -> Option<(&MessageSpec, i16)> {
        let newest = self.newest_below(api_key, direction, version)?;
        Some((self.get(api_key, direction)?, newest))
    }

    /// The newest version of the current table of an API, when `version` is newer (no spec
    /// is parsed for this).
    fn newest_below(&self, api_key: i16, direction: Direction, version: i16) -> Option<i16> {
        let current = self.current(api_key, direction)?;
        (!current.valid.none && version > current.max_version()).then(|| current.max_version())
    }

    /// Whether a request header with (key, version) is worth treating as one: a version with a
    /// table, or one a little newer than the newest table of a known API.
    pub fn plausible(&self, api_key: i16, version: i16) -> bool {
        self.knows(api_key, version)
            || self
                .newest_below(api_key, Direction::Request, version)
                .is_some_and(|newest| version - newest <= NEWER_VERSIONS)
    }

    /// Whether (key, version) is a request this project can decode.
    pub fn knows(&self, api_key: i16, version: i16) -> bool {
        self.specs
            .get(&(api_key, Direction::Request))
            .is_some_and(|v| v.iter().any(|l| l.valid.contains(version)))
    }
}

/// The process-wide registry. The embedded specs are checked by a test, so a parse failure
/// here is a build defect, reported once on stderr and the spec skipped.
pub fn registry() -> &'static Registry {
    static REG: OnceLock<Registry> = OnceLock::new();
    REG.get_or_init(|| {
        let mut specs = SpecMap::default();
        for (file, head) in SPEC_HEADS.iter().enumerate() {
            let Some((api_key, response, valid)) = *head else {
                let name = SPEC_FILES.get(file).map_or("?", |f| f.0);
                eprintln!("kdissect: internal spec {name} is not a request or a response");
                continue;
            };
            let direction = if response {
                Direction::Response
            } else {
                Direction::Request
            };
            let Some(slot) = specs.slot(api_key, direction) else {
                let name = SPEC_FILES.get(file).map_or("?", |f| f.0);
                eprintln!("kdissect: internal spec {name} has a negative API key");
                continue;
            };
            slot.push(Lazy {
                file,
                valid,
                spec: OnceLock::new(),
            });
        }
        let mut headers: HashMap<Direction, Vec<MessageSpec>, foldhash::fast::RandomState> =
            HashMap::default();
        for (file, text) in HEADER_FILES {
            match parse_spec(text) {
                Ok(s) => headers.entry(s.direction).or_default().push(s),
                Err(e) => eprintln!("kdissect: internal spec {file} is invalid: {e}"),
            }
        }
        // Current (highest versions, then non-empty) first.
        for v in specs.values_mut() {
            v.sort_by_key(|l| std::cmp::Reverse((!l.valid.none, l.max_version())));
        }
        for v in headers.values_mut() {
            v.sort_by_key(|s| std::cmp::Reverse((!s.valid_versions.none, s.max_version())));
        }
        let records = RecordLayouts::parse(RECORD_LAYOUTS).unwrap_or_else(|e| {
            eprintln!("kdissect: internal schema-src/records.json is invalid: {e}");
            RecordLayouts::default()
        });
        Registry {
            specs,
            headers,
            embedded: OnceLock::new(),
            records,
        }
    })
}

/// kdissect's own rules for record keys and values (schema-src/records.json).
static RECORD_LAYOUTS: &str = include_str!("../../../schema-src/records.json");

/// Where record keys and values hold messages rather than plain bytes: control records'
/// keys and values, and the records of a topic whose values have a layout (the KRaft
/// metadata log). Data, from schema-src/records.json.
#[derive(Debug, Clone, Default)]
pub struct RecordLayouts {
    /// The key of every control record.
    pub control_key: Option<Layout>,
    /// A control record's value, by the type its key names.
    pub control_values: HashMap<i16, Layout>,
    /// Topics whose record values have a layout: (name, id, layout).
    pub topics: Vec<(String, [u8; 16], Layout)>,
}

impl RecordLayouts {
    fn parse(text: &str) -> Result<RecordLayouts, String> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let control = v.get("control").ok_or("no \"control\"")?;
        let control_key = Some(Layout::from_json(
            control.get("key").ok_or("no control key")?,
        )?);
        let mut control_values = HashMap::new();
        for (k, l) in control
            .get("values")
            .and_then(|x| x.as_object())
            .ok_or("no control values")?
        {
            let t: i16 = k.parse().map_err(|_| format!("control type {k}"))?;
            control_values.insert(t, Layout::from_json(l)?);
        }
        let mut topics = Vec::new();
        for t in v
            .get("topics")
            .and_then(|x| x.as_array())
            .ok_or("no topics")?
        {
            let name = t.get("name").and_then(|x| x.as_str()).ok_or("topic name")?;
            let id = t.get("id").and_then(|x| x.as_str()).ok_or("topic id")?;
            let id = parse_uuid(id).ok_or_else(|| format!("topic id {id}"))?;
            let layout = Layout::from_json(t.get("value").ok_or("topic value")?)?;
            topics.push((name.to_string(), id, layout));
        }
        Ok(RecordLayouts {
            control_key,
            control_values,
            topics,
        })
    }

    /// The layout of the record values of a topic named by name or by id.
    pub fn topic_values(&self, name: Option<&str>, id: Option<&[u8; 16]>) -> Option<&Layout> {
        self.topics
            .iter()
            .find(|(n, i, _)| name == Some(n.as_str()) || id == Some(i))
            .map(|(_, _, l)| l)
    }

    /// The name of a topic these rules know by its id (`__cluster_metadata`).
    pub fn topic_name(&self, id: &[u8; 16]) -> Option<&str> {
        self.topics
            .iter()
            .find(|(_, i, _)| i == id)
            .map(|(n, _, _)| n.as_str())
    }
}

/// `8-4-4-4-12` hex digits to 16 bytes.
fn parse_uuid(s: &str) -> Option<[u8; 16]> {
    let hex: String = s.chars().filter(|c| *c != '-').collect();
    let bytes = hex::decode(hex).ok()?;
    bytes.try_into().ok()
}

/// Names of the embedded spec files, for tests.
pub fn spec_files() -> impl Iterator<Item = (&'static str, &'static str)> {
    SPEC_FILES.iter().copied()
}

/// Names (under `schema/data/` and `schema/metadata/`) and texts of the embedded data and
/// metadata record specs, for tests.
pub fn data_files() -> impl Iterator<Item = (&'static str, &'static str)> {
    DATA_FILES.iter().copied()
}

pub fn metadata_files() -> impl Iterator<Item = (&'static str, &'static str)> {
    METADATA_FILES.iter().copied()
}

/// Names (under `schema/headers/`) and texts of the embedded header specs, for tests.
pub fn header_files() -> impl Iterator<Item = (&'static str, &'static str)> {
    HEADER_FILES.iter().copied()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    /// Files and their SHA-256 as a folder's MANIFEST.txt lists them.
    fn listed(manifest: &str) -> Vec<(String, String)> {
        let mut want: Vec<(String, String)> = manifest
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let (hash, file) = l.split_once("  ").expect("hash  file");
                (file.to_string(), hash.to_string())
            })
            .collect();
        want.sort();
        want
    }

    fn hashed(files: impl Iterator<Item = (&'static str, &'static str)>) -> Vec<(String, String)> {
        let mut got: Vec<(String, String)> = files
            .map(|(f, t)| (f.to_string(), hex::encode(Sha256::digest(t.as_bytes()))))
            .collect();
        got.sort();
        got
    }

    /// The header, data and metadata record tables are the generator's output, as
    /// schema/MANIFEST.txt is for the message tables (tests/schema.rs): each folder's
    /// MANIFEST.txt holds their SHA-256, and names the Kafka 4.4.0 release they come from.
    #[test]
    fn tables_apart_match_their_manifests() {
        for (manifest, files) in [
            (
                include_str!("../../../schema/headers/MANIFEST.txt"),
                hashed(header_files()),
            ),
            (
                include_str!("../../../schema/data/MANIFEST.txt"),
                hashed(data_files()),
            ),
            (
                include_str!("../../../schema/metadata/MANIFEST.txt"),
                hashed(metadata_files()),
            ),
        ] {
            assert_eq!(files, listed(manifest));
            assert!(
                manifest.contains("tag=4.4.0 "),
                "current tables are Kafka 4.4.0"
            );
            assert!(!files.is_empty());
        }
    }

    /// Every layout of schema-src/records.json and of the tables' content keys names a data
    /// spec the registry holds, and the data specs parsed.
    #[test]
    fn every_layout_names_a_table() {
        let reg = registry();
        assert_eq!(reg.data_specs().count(), data_files().count());
        assert_eq!(reg.metadata_records().count(), metadata_files().count());
        let r = reg.record_layouts();
        let mut layouts: Vec<&Layout> = r.control_values.values().collect();
        layouts.extend(r.control_key.iter());
        layouts.extend(r.topics.iter().map(|(_, _, l)| l));
        fn walk<'a>(fs: &'a [FieldSpec], out: &mut Vec<&'a Layout>) {
            for f in fs {
                if let Content::Embedded(l) = &f.content {
                    out.push(l);
                }
                walk(&f.fields, out);
            }
        }
        for v in reg.message_specs() {
            walk(&v.fields, &mut layouts);
        }
        assert!(layouts.len() >= 9, "{layouts:?}");
        let metadata_log = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        assert_eq!(r.topic_name(&metadata_log), Some("__cluster_metadata"));
        // Every metadata record type of Kafka 4.4, NoOpRecord (20) among them.
        assert_eq!(
            reg.metadata_record(20).map(|s| s.name.as_str()),
            Some("NoOpRecord")
        );
        assert!(reg.metadata_records().count() >= 27);
        for l in layouts {
            if let Some(n) = l.spec_name() {
                assert!(reg.data(n).is_some(), "no data table {n}");
            }
        }
    }

    #[test]
    fn both_headers_are_known_at_every_version() {
        for (direction, versions) in [(Direction::Request, 0..=2), (Direction::Response, 0..=1)] {
            for v in versions {
                let s = registry().header(direction, v).expect("header");
                assert!(
                    s.header && s.valid_versions.contains(v),
                    "{direction:?} v{v}"
                );
                assert_eq!(s.api_key, -1);
            }
        }
        // The headers are not APIs.
        assert!(registry().get(-1, Direction::Request).is_none());
    }
}
