//! Reads one message spec (Kafka's JSON layout, as schema/ holds it) into what the tables
//! hold: every key of every field, common structs resolved in place, and what kdissect works
//! out from them once (a field's role, the fact it is, the type as shown).

use crate::fact_field::{self, FactField};
use crate::role::Role;
use crate::versions::{FieldType, Versions};
use serde::Deserialize;
use std::collections::HashMap;

/// Reads a version range written as a string.
fn versions<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Versions, D::Error> {
    let s = String::deserialize(d)?;
    Versions::parse(&s).map_err(serde::de::Error::custom)
}

fn opt_versions<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Versions>, D::Error> {
    versions(d).map(Some)
}

fn none() -> Versions {
    Versions::NONE
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

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawField {
    name: String,
    #[serde(rename = "type")]
    ty: String,
    #[serde(deserialize_with = "versions")]
    versions: Versions,
    #[serde(default = "none", deserialize_with = "versions")]
    nullable_versions: Versions,
    #[serde(default = "none", deserialize_with = "versions")]
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
    content: Option<serde_json::Value>,
    /// kdissect's key (schema-src/enums.json): the enumeration naming the field's values.
    #[serde(default, rename = "enum")]
    enumeration: Option<String>,
    #[serde(default, deserialize_with = "opt_versions")]
    flexible_versions: Option<Versions>,
    #[serde(default)]
    fields: Option<Vec<RawField>>,
}

#[derive(Debug, Clone, Deserialize)]
struct RawStruct {
    name: String,
    fields: Vec<RawField>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawSpec {
    #[serde(default)]
    api_key: Option<i16>,
    #[serde(rename = "type")]
    kind: String,
    name: String,
    #[serde(deserialize_with = "versions")]
    valid_versions: Versions,
    #[serde(deserialize_with = "versions")]
    flexible_versions: Versions,
    fields: Vec<RawField>,
    #[serde(default)]
    common_structs: Vec<RawStruct>,
    #[serde(default)]
    header_versions: Option<serde_json::Map<String, serde_json::Value>>,
}

/// How the bytes of an embedded message are laid out (schema-src/content.json and
/// schema-src/records.json).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    Request,
    Response,
    VersionPrefixed(String),
    Unprefixed(String, i16),
    MetadataRecord,
    ConsumerProtocol(String),
}

impl Layout {
    pub fn from_json(v: &serde_json::Value) -> Result<Layout, String> {
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
}

/// What a bytes field holds beyond bytes (schema-src/content.json).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Content {
    #[default]
    Plain,
    Sasl,
    Secret,
    Embedded(Layout),
}

impl Content {
    fn from_json(v: Option<&serde_json::Value>) -> Result<Content, String> {
        let Some(v) = v else {
            return Ok(Content::Plain);
        };
        match v.as_str() {
            Some("plain") => Ok(Content::Plain),
            Some("sasl") => Ok(Content::Sasl),
            Some("secret") => Ok(Content::Secret),
            _ => Layout::from_json(v).map(Content::Embedded),
        }
    }
}

/// One field, with what kdissect works out from it.
#[derive(Debug, Clone)]
pub struct Field {
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
    pub content: Content,
    pub enumeration: Option<String>,
    pub flexible_versions: Option<Versions>,
    pub fields: Vec<Field>,
    pub type_name: String,
    pub elem_name: String,
    pub role: Role,
    pub fact: FactField,
    pub facts: bool,
    pub error_code: bool,
    pub names_topic: bool,
}

/// What a spec describes, and the direction it is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Message,
    Header,
    Data,
    MetadataRecord,
}

/// One spec file.
#[derive(Debug, Clone)]
pub struct Spec {
    pub api_key: i16,
    pub kind: Kind,
    pub response: bool,
    pub name: String,
    pub valid_versions: Versions,
    pub flexible_versions: Versions,
    pub fields: Vec<Field>,
    pub has_secrets: bool,
    pub may_hold_ids: bool,
    pub header_versions: Vec<(Versions, i16)>,
}

impl Spec {
    pub fn max_version(&self) -> i16 {
        self.valid_versions.max.unwrap_or(self.valid_versions.min)
    }
}

fn any_id_holder(fields: &[Field]) -> bool {
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

fn any_secret(fields: &[Field]) -> bool {
    fields
        .iter()
        .any(|f| matches!(f.content, Content::Sasl | Content::Secret) || any_secret(&f.fields))
}

/// A `headerVersions` map, in order of its ranges, which must start at 0, meet without gap or
/// overlap and end open (`"9+"`), as Kafka's generator requires.
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
) -> Result<Vec<Field>, String> {
    if depth > 32 {
        return Err("struct nesting deeper than 32 (recursive common struct?)".into());
    }
    raw.iter()
        .map(|f| convert_field(f, common, depth))
        .collect()
}

fn convert_field(
    f: &RawField,
    common: &HashMap<String, RawStruct>,
    depth: usize,
) -> Result<Field, String> {
    let ty = FieldType::parse(&f.ty);
    let struct_name = match ty {
        FieldType::Struct(n) => Some(n),
        FieldType::Array(FieldType::Struct(n)) => Some(*n),
        _ => None,
    };
    let fields = match (&f.fields, struct_name) {
        (Some(inline), _) => convert_fields(inline, common, depth + 1)?,
        (None, Some(n)) => match common.get(n) {
            Some(s) => convert_fields(&s.fields, common, depth + 1)?,
            None => return Err(format!("field {}: unknown struct type {n}", f.name)),
        },
        (None, None) => Vec::new(),
    };
    let default = f.default.as_ref().map(|d| match d {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    let role = Role::of(&f.name, &ty);
    let fact = FactField::of(&f.name);
    let names_topic = ty == FieldType::String && f.entity_type.as_deref() == Some("topicName");
    let content = Content::from_json(f.content.as_ref())
        .map_err(|e| format!("field {}: content: {e}", f.name))?;
    Ok(Field {
        error_code: role == Role::ErrorCode && ty == FieldType::Int16,
        names_topic,
        // The `topic` filter reads every topic name too.
        facts: fact_field::reads(fact, role) || names_topic,
        fact,
        role,
        type_name: ty.display(),
        elem_name: match ty {
            FieldType::Array(inner) => inner.display(),
            other => other.display(),
        },
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
        content,
        enumeration: f.enumeration.clone(),
        flexible_versions: f.flexible_versions,
        fields,
    })
}

/// Reads one spec file (`//` comment lines are tolerated, as Kafka's files have them).
pub fn parse(text: &str) -> Result<Spec, String> {
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
    let (response, kind) = match (raw.kind.as_str(), raw.name.as_str()) {
        ("request", _) => (false, Kind::Message),
        ("response", _) => (true, Kind::Message),
        ("header", "RequestHeader") => (false, Kind::Header),
        ("header", "ResponseHeader") => (true, Kind::Header),
        // Data and metadata records have no direction; they are read as request bodies are.
        ("data", _) => (false, Kind::Data),
        ("metadata", _) => (false, Kind::MetadataRecord),
        (other, name) => {
            return Err(format!(
                "spec {name} of type {other:?} is neither a request, a response, a header, data nor a metadata record"
            ))
        }
    };
    let keyless = matches!(kind, Kind::Header | Kind::Data);
    let api_key = match raw.api_key {
        Some(k) if !keyless => k,
        None if keyless => -1,
        Some(_) => return Err(format!("{} has an apiKey", raw.name)),
        None => return Err(format!("{} has no apiKey", raw.name)),
    };
    let fields = convert_fields(&raw.fields, &common, 0)?;
    let header_versions =
        header_versions(raw.header_versions.as_ref()).map_err(|e| format!("{}: {e}", raw.name))?;
    Ok(Spec {
        api_key,
        kind,
        response,
        has_secrets: any_secret(&fields),
        may_hold_ids: any_id_holder(&fields),
        name: raw.name,
        valid_versions: raw.valid_versions,
        flexible_versions: raw.flexible_versions,
        header_versions,
        fields,
    })
}

/// kdissect's rules for record keys and values (schema-src/records.json).
#[derive(Debug, Clone, Default)]
pub struct RecordLayouts {
    pub control_key: Option<Layout>,
    /// By control record type, ascending.
    pub control_values: Vec<(i16, Layout)>,
    pub topics: Vec<(String, [u8; 16], Layout)>,
}

/// `8-4-4-4-12` hex digits to 16 bytes.
fn parse_uuid(s: &str) -> Option<[u8; 16]> {
    let hex: Vec<u8> = s.bytes().filter(|c| *c != b'-').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, pair) in hex.chunks(2).enumerate() {
        let text = std::str::from_utf8(pair).ok()?;
        *out.get_mut(i)? = u8::from_str_radix(text, 16).ok()?;
    }
    Some(out)
}

impl RecordLayouts {
    pub fn parse(text: &str) -> Result<RecordLayouts, String> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let control = v.get("control").ok_or("no \"control\"")?;
        let control_key = Some(Layout::from_json(
            control.get("key").ok_or("no control key")?,
        )?);
        let mut control_values = Vec::new();
        for (k, l) in control
            .get("values")
            .and_then(|x| x.as_object())
            .ok_or("no control values")?
        {
            let t: i16 = k.parse().map_err(|_| format!("control type {k}"))?;
            if control_values.iter().any(|(seen, _)| *seen == t) {
                return Err(format!("control type {t} twice"));
            }
            control_values.push((t, Layout::from_json(l)?));
        }
        control_values.sort_by_key(|(t, _)| *t);
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
}
