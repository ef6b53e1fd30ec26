//! Message specs as data: the static tables that codegen/ generates from the files under
//! `schema/` (src/kafka/spec/tables/), and the registry that finds a spec by API, direction
//! and version in them. Nothing here parses JSON: `parse_spec` (src/kafka/spec/json.rs) is
//! for tests and tools.

include!(concat!(env!("OUT_DIR"), "/spec_files.rs"));

use super::fact_field::FactField;
use super::tables;

pub use super::json::parse_spec;
pub use super::role::Role;
pub use super::versions::{FieldType, Versions};

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
    VersionPrefixed(&'static str),
    /// `{"layout": "unprefixed", "spec": NAME, "version": V}`: the data message NAME at version V,
    /// nothing before it.
    Unprefixed(&'static str, i16),
    /// `"metadata-record"`: a record of the KRaft metadata log: unsigned varints frame version,
    /// record type and version, then the metadata record of that type (Kafka's
    /// `AbstractApiMessageSerde`).
    MetadataRecord,
    /// `{"layout": "consumer-protocol", "spec": NAME}`: a group protocol's bytes, read as
    /// version-prefixed NAME when they are in that layout. The same field carries the bytes of
    /// other protocol types (Connect's, Streams' own), which do not read whole as NAME: those
    /// are shown as bytes, and are no damage.
    ConsumerProtocol(&'static str),
}

impl Layout {
    /// The data spec the layout reads, for those that name one.
    pub fn spec_name(&self) -> Option<&'static str> {
        match self {
            Layout::VersionPrefixed(n) | Layout::Unprefixed(n, _) | Layout::ConsumerProtocol(n) => {
                Some(n)
            }
            _ => None,
        }
    }
}

/// A field of the spec tables, which are static: what a node, a path
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
        self.0.name
    }

    pub fn role(self) -> Role {
        self.0.role
    }
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
                .or_else(|| find(f.fields, role))
        })
    }
    let spec = registry()
        .get(3, Direction::Response)
        .expect("Metadata response");
    find(spec.fields, role).expect("a field with the role")
}

impl FieldSpec {
    /// A field with every key at its default: the generated tables write a field as the keys
    /// that differ from these (`..FieldSpec::BASE`).
    pub const BASE: FieldSpec = FieldSpec {
        name: "",
        ty: FieldType::Bool,
        versions: Versions::NONE,
        nullable_versions: Versions::NONE,
        tagged_versions: Versions::NONE,
        tag: None,
        ignorable: false,
        default: None,
        entity_type: None,
        map_key: false,
        about: "",
        content: Content::Plain,
        enumeration: None,
        flexible_versions: None,
        fields: &[],
        type_name: "",
        elem_name: "",
        role: Role::Other,
        fact: FactField::None,
        facts: false,
        error_code: false,
        names_topic: false,
    };

    /// An int16 error code (`ErrorCode`, `PartitionErrorCode`...): listed when not zero.
    pub fn is_error_code(&self) -> bool {
        self.error_code
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

/// One field of a message or struct, as the generated tables (src/kafka/spec/tables/) hold it.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldSpec {
    pub name: &'static str,
    pub ty: FieldType,
    pub versions: Versions,
    pub nullable_versions: Versions,
    pub tagged_versions: Versions,
    pub tag: Option<u32>,
    pub ignorable: bool,
    pub default: Option<&'static str>,
    pub entity_type: Option<&'static str>,
    pub map_key: bool,
    pub about: &'static str,
    /// What the bytes hold, for fields that carry SASL messages or secrets.
    pub content: Content,
    /// The names of the field's values, for integers that are enumerations.
    pub enumeration: Option<&'static super::names::Enum>,
    /// The field's own flexible versions where its spec sets them: `none` keeps the old
    /// (int16 or int32) length prefix even in flexible versions, as the request header's
    /// ClientId does. `None` follows the message's flexible versions.
    pub flexible_versions: Option<Versions>,
    /// Fields of the struct this field holds (inline or resolved from the common structs).
    pub fields: &'static [FieldSpec],
    /// The type as shown: `int32`, `[]MetadataRequestTopic` (made once, not per message).
    pub type_name: &'static str,
    /// For arrays, the element type as shown: `MetadataRequestTopic`, `int32`.
    pub elem_name: &'static str,
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
#[derive(Debug, Clone, PartialEq)]
pub struct MessageSpec {
    /// The API key (for a metadata record, its record type); -1 for a header, which every API
    /// shares, and for data.
    pub api_key: i16,
    pub kind: SpecKind,
    pub direction: Direction,
    /// Kafka's `"type": "header"`: RequestHeader or ResponseHeader, not a message body.
    pub header: bool,
    pub name: &'static str,
    pub valid_versions: Versions,
    pub flexible_versions: Versions,
    pub fields: &'static [FieldSpec],
    /// Some field holds a secret or a SASL message: bytes left undecoded after an error may
    /// hold one too, so they are masked.
    pub has_secrets: bool,
    /// Some field may hold a topic id: a uuid, or records and embedded messages, which have
    /// fields of their own. Messages without one have no id to name.
    pub may_hold_ids: bool,
    /// The index of its file among the embedded message specs, by which the walks generated
    /// from it are found (`walk_body`, src/kafka/walk/generated/walks/mod.rs); `None` for
    /// the others.
    pub walk: Option<u16>,
    /// The spec's `headerVersions`: which header version each range of versions uses, the
    /// last range open. Empty where the spec gives none (Kafka 4.4 and older), and the header
    /// follows the body's flexibility (src/kafka/spec/headers.rs).
    pub header_versions: &'static [(Versions, i16)],
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

/// How many versions past the newest table a request header may claim and still be taken for
/// a frame boundary when resynchronising (decoding itself tries the newest layout whatever the
/// version, and keeps it only if every byte fits).
pub const NEWER_VERSIONS: i16 = 8;

/// All the specs, as the generated tables index them (src/kafka/spec/tables/mod.rs): message
/// specs by (API key, direction), an API's current table first and then its legacy ones (for
/// versions a newer Kafka removed); the two headers by direction, in the same order
/// (RequestHeader v0, which only ControlledShutdown v0 uses, is legacy); the data and
/// metadata record specs; the record layouts. Nothing is built when it is first used.
pub struct Registry {
    _static: (),
}

static REGISTRY: Registry = Registry { _static: () };

/// The specs of (API, direction), current first; `None` for an API without any.
fn slot(api_key: i16, direction: Direction) -> Option<&'static [&'static MessageSpec]> {
    let key = usize::try_from(api_key).ok()?;
    let i = key * 2 + usize::from(direction == Direction::Response);
    tables::BY_API
        .get(i)
        .copied()
        .filter(|specs| !specs.is_empty())
}

impl Registry {
    /// A data message (a principal, a control record's key or value) by name.
    pub fn data(&self, name: &str) -> Option<&'static MessageSpec> {
        let i = tables::DATA.binary_search_by(|s| s.name.cmp(name)).ok()?;
        tables::DATA.get(i).copied()
    }

    /// The metadata record of a record type (`TopicRecord` for 2).
    pub fn metadata_record(&self, record_type: i16) -> Option<&'static MessageSpec> {
        let i = tables::METADATA_RECORDS
            .binary_search_by_key(&record_type, |s| s.api_key)
            .ok()?;
        tables::METADATA_RECORDS.get(i).copied()
    }

    /// Every metadata record spec, by record type.
    pub fn metadata_records(&self) -> impl Iterator<Item = &'static MessageSpec> {
        tables::METADATA_RECORDS.iter().copied()
    }

    /// Every data message spec, by name.
    pub fn data_specs(&self) -> impl Iterator<Item = &'static MessageSpec> {
        tables::DATA.iter().copied()
    }

    /// How record keys and values are laid out where they are not plain bytes.
    pub fn record_layouts(&self) -> &'static RecordLayouts {
        &tables::RECORD_LAYOUTS
    }

    fn headers(direction: Direction) -> &'static [&'static MessageSpec] {
        match direction {
            Direction::Request => tables::HEADERS[0],
            Direction::Response => tables::HEADERS[1],
        }
    }

    /// The header spec of a direction that has `version`, or else the current one.
    pub fn header(&self, direction: Direction, version: i16) -> Option<&'static MessageSpec> {
        let v = Self::headers(direction);
        v.iter()
            .find(|s| s.valid_versions.contains(version))
            .or_else(|| v.first())
            .copied()
    }

    /// Every header spec, current and legacy.
    pub fn header_specs(&self) -> impl Iterator<Item = &'static MessageSpec> {
        tables::HEADERS.iter().flat_map(|v| v.iter().copied())
    }

    /// The current spec of an API (the one with valid versions, preferring the newest).
    pub fn get(&self, api_key: i16, direction: Direction) -> Option<&'static MessageSpec> {
        slot(api_key, direction)?.first().copied()
    }

    /// Whether a message of the API in `direction` may hold a topic id, whatever its version
    /// (true for an API without a spec).
    pub fn may_hold_ids(&self, api_key: i16, direction: Direction) -> bool {
        slot(api_key, direction).is_none_or(|v| v.iter().any(|s| s.may_hold_ids))
    }

    /// The spec that has `version`, or else the current one.
    pub fn get_for(
        &self,
        api_key: i16,
        direction: Direction,
        version: i16,
    ) -> Option<&'static MessageSpec> {
        let v = slot(api_key, direction)?;
        v.iter()
            .find(|s| s.valid_versions.contains(version))
            .or_else(|| v.first())
            .copied()
    }

    /// Every message spec, current and legacy.
    pub fn message_specs(&self) -> impl Iterator<Item = &'static MessageSpec> {
        tables::BY_API.iter().flat_map(|v| v.iter().copied())
    }

    /// Every version any spec of the API has, ascending.
    pub fn versions(&self, api_key: i16, direction: Direction) -> Vec<i16> {
        let mut out: Vec<i16> = slot(api_key, direction)
            .into_iter()
            .flatten()
            .filter(|s| !s.valid_versions.none)
            .flat_map(|s| s.valid_versions.min..=s.max_version())
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
        (0..=i16::MAX)
            .take(tables::BY_API.len() / 2 + 1)
            .filter(|k| {
                slot(*k, Direction::Request).is_some() && slot(*k, Direction::Response).is_some()
            })
            .collect()
    }

    /// For a version newer than every table of an API: the current spec and its newest version,
    /// whose layout is the best guess at what a newer Kafka sends (new versions mostly add
    /// fields at the end or as tagged fields, or change only semantics).
    pub fn newest_layout(
        &self,
        api_key: i16,
        direction: Direction,
        version: i16,
    ) -> Option<(&'static MessageSpec, i16)> {
        let newest = self.newest_below(api_key, direction, version)?;
        Some((self.get(api_key, direction)?, newest))
    }

    /// The newest version of the current table of an API, when `version` is newer.
    fn newest_below(&self, api_key: i16, direction: Direction, version: i16) -> Option<i16> {
        let current = self.get(api_key, direction)?;
        (!current.valid_versions.none && version > current.max_version())
            .then(|| current.max_version())
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
        slot(api_key, Direction::Request)
            .is_some_and(|v| v.iter().any(|s| s.valid_versions.contains(version)))
    }
}

/// The process-wide registry: the generated tables, nothing to load.
pub fn registry() -> &'static Registry {
    &REGISTRY
}

/// Where record keys and values hold messages rather than plain bytes: control records'
/// keys and values, and the records of a topic whose values have a layout (the KRaft
/// metadata log). Data, from schema-src/records.json (generated into the tables).
#[derive(Debug, Clone)]
pub struct RecordLayouts {
    /// The key of every control record.
    pub control_key: Option<Layout>,
    /// A control record's value, by the type its key names (ascending).
    pub control_values: &'static [(i16, Layout)],
    /// Topics whose record values have a layout: (name, id, layout).
    pub topics: &'static [(&'static str, [u8; 16], Layout)],
}

impl RecordLayouts {
    /// The layout of the value of a control record of `record_type`.
    pub fn control_value(&self, record_type: i16) -> Option<&'static Layout> {
        self.control_values
            .iter()
            .find(|(t, _)| *t == record_type)
            .map(|(_, l)| l)
    }

    /// The layout of the record values of a topic named by name or by id.
    pub fn topic_values(
        &self,
        name: Option<&str>,
        id: Option<&[u8; 16]>,
    ) -> Option<&'static Layout> {
        self.topics
            .iter()
            .find(|(n, i, _)| name == Some(*n) || id == Some(i))
            .map(|(_, _, l)| l)
    }

    /// The name of a topic these rules know by its id (`__cluster_metadata`).
    pub fn topic_name(&self, id: &[u8; 16]) -> Option<&'static str> {
        self.topics
            .iter()
            .find(|(_, i, _)| i == id)
            .map(|(n, _, _)| *n)
    }
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
        let mut layouts: Vec<&Layout> = r.control_values.iter().map(|(_, l)| l).collect();
        layouts.extend(r.control_key.iter());
        layouts.extend(r.topics.iter().map(|(_, _, l)| l));
        fn walk<'a>(fs: &'a [FieldSpec], out: &mut Vec<&'a Layout>) {
            for f in fs {
                if let Content::Embedded(l) = &f.content {
                    out.push(l);
                }
                walk(f.fields, out);
            }
        }
        for v in reg.message_specs() {
            walk(v.fields, &mut layouts);
        }
        assert!(layouts.len() >= 9, "{layouts:?}");
        let metadata_log = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
        assert_eq!(r.topic_name(&metadata_log), Some("__cluster_metadata"));
        // Every metadata record type of Kafka 4.4, NoOpRecord (20) among them.
        assert_eq!(reg.metadata_record(20).map(|s| s.name), Some("NoOpRecord"));
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
