//! Reads a message spec written as Kafka's JSON into the tables' types, for tests and tools:
//! a spec that is not one of kdissect's (tests/primitives.rs), or a check that the generated
//! tables (src/kafka/spec/tables/, written by codegen/) say what their files say. The
//! dissector itself never calls it: its specs are static. What it reads is leaked, to be
//! `'static` as the tables are.

use super::fact_field::{self, FactField};
use super::names;
use super::schema::{Content, Direction, FieldSpec, Layout, MessageSpec, Role, SpecKind};
use super::versions::{FieldType, Versions};
use serde::Deserialize;
use std::collections::HashMap;

/// A string made `'static`.
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

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

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        match v.as_str() {
            Some("plain") => Ok(Content::Plain),
            Some("sasl") => Ok(Content::Sasl),
            Some("secret") => Ok(Content::Secret),
            _ => layout_from_json(&v)
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

fn layout_from_json(v: &serde_json::Value) -> Result<Layout, String> {
    let spec = || {
        v.get("spec")
            .and_then(|s| s.as_str())
            .map(|s| leak(s.to_string()))
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

fn any_id_holder(fields: &[FieldSpec]) -> bool {
    fields.iter().any(|f| {
        matches!(f.content, Content::Embedded(_)) || holds_id(&f.ty) || any_id_holder(f.fields)
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
        .any(|f| matches!(f.content, Content::Sasl | Content::Secret) || any_secret(f.fields))
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
                FieldType::Struct(n) | FieldType::Array(FieldType::Struct(n)) => Some(*n),
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
            let fields: &'static [FieldSpec] = Box::leak(fields.into_boxed_slice());
            let default = f.default.as_ref().map(|d| match d {
                serde_json::Value::String(s) => leak(s.clone()),
                other => leak(other.to_string()),
            });
            let enumeration = match &f.enumeration {
                Some(e) => Some(
                    names::enumeration(e)
                        .ok_or_else(|| format!("field {}: unknown enumeration {e}", f.name))?,
                ),
                None => None,
            };
            let type_name = leak(ty.display());
            let elem_name = leak(match &ty {
                FieldType::Array(inner) => inner.display(),
                other => other.display(),
            });
            let role = Role::of(&f.name, &ty);
            let fact = FactField::of(&f.name);
            let names_topic =
                ty == FieldType::String && f.entity_type.as_deref() == Some("topicName");
            Ok(FieldSpec {
                error_code: role == Role::ErrorCode && ty == FieldType::Int16,
                names_topic,
                // The `topic` filter reads every topic name too.
                facts: fact_field::reads(fact, role) || names_topic,
                fact,
                role,
                type_name,
                elem_name,
                name: leak(f.name.clone()),
                ty,
                versions: f.versions,
                nullable_versions: f.nullable_versions,
                tagged_versions: f.tagged_versions,
                tag: f.tag,
                ignorable: f.ignorable,
                default,
                entity_type: f.entity_type.clone().map(leak),
                map_key: f.map_key,
                about: leak(f.about.clone()),
                content: f.content.clone(),
                enumeration,
                flexible_versions: f.flexible_versions,
                fields,
            })
        })
        .collect()
}

/// Parses one spec file (Kafka's JSON layout; `//` comment lines are tolerated), its
/// text leaked to live as the tables do.
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
        name: leak(raw.name),
        valid_versions: raw.valid_versions,
        flexible_versions: raw.flexible_versions,
        has_secrets: any_secret(&fields),
        may_hold_ids: any_id_holder(&fields),
        walk: None,
        header_versions: Box::leak(header_versions.into_boxed_slice()),
        fields: Box::leak(fields.into_boxed_slice()),
    })
}
