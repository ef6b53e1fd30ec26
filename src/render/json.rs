//! `--json`: one JSON object per Kafka message (NDJSON), keys documented in docs/json.md and
//! docs/kdissect-message.schema.json. The body is the decoded tree under the schema's field
//! names; `--json-spans` wraps every value with its byte offset and length.

use crate::kafka::{names, Direction, Message, Node, NodeKind, Value};
use serde_json::{json, Map, Value as J};

/// Where a message was found: capture metadata, or its place in hex input.
#[derive(Debug, Clone, Default)]
pub struct Meta {
    pub frame: u64,
    pub ts_nanos: Option<i64>,
    pub stream: Option<u32>,
    pub src: Option<String>,
    pub dst: Option<String>,
    pub request_frame: Option<u64>,
    pub latency_nanos: Option<i64>,
    pub assumed: bool,
    pub partial: bool,
    /// Offset of the frame in hex input.
    pub input_offset: Option<usize>,
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// RFC 3339 in UTC with nanoseconds: `2026-11-30T00:59:13.123456789Z`.
pub fn rfc3339(ts_nanos: i64) -> String {
    let secs = ts_nanos.div_euclid(1_000_000_000);
    let nanos = ts_nanos.rem_euclid(1_000_000_000);
    let (y, m, d) = civil(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{nanos:09}Z",
        sod / 3600,
        (sod / 60) % 60,
        sod % 60
    )
}

fn scalar(n: &Node, frame: &[u8]) -> J {
    match &n.value {
        Value::None | Value::Struct | Value::Array(_) => J::Null,
        Value::Int(i) => J::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        Value::Bool(b) => J::Bool(*b),
        Value::Str(s) => s.as_ref().map_or(J::Null, |s| J::String(s.clone())),
        Value::Bytes(Some((off, len))) if n.ty == "varbytes" => {
            payload_json(frame.get(*off..off + len).unwrap_or(&[]))
        }
        Value::Blob(b) if n.kind == NodeKind::Group => J::from(b.len()),
        Value::Blob(b) => payload_json(b),
        Value::Bytes(Some((off, len))) => {
            J::String(hex::encode(frame.get(*off..off + len).unwrap_or(&[])))
        }
        Value::Bytes(None) | Value::Null => J::Null,
        Value::Uuid(u) => J::String(super::value::uuid(u)),
        Value::Text(t) => J::String(t.clone()),
    }
}

/// A record key or value: the text when it is UTF-8, else `{"hex": "..."}`.
fn payload_json(b: &[u8]) -> J {
    match std::str::from_utf8(b) {
        Ok(s) => J::String(s.to_string()),
        Err(_) => json!({ "hex": hex::encode(b) }),
    }
}

fn wrap(v: J, n: &Node, spans: bool) -> J {
    if spans {
        json!({"value": v, "offset": n.offset, "length": n.len})
    } else {
        v
    }
}

/// The JSON of one field node (struct, array or scalar).
fn field_value(n: &Node, frame: &[u8], spans: bool) -> J {
    let v = match (&n.value, n.kind) {
        (Value::Null, _) => J::Null,
        (Value::Array(_), _) => J::Array(
            n.children
                .iter()
                .filter(|c| c.kind != NodeKind::Length && c.kind != NodeKind::Raw)
                .map(|c| field_value(c, frame, spans))
                .collect(),
        ),
        // A records field, or the records decompressed from a batch: a list of batches
        // (or of records, or of legacy messages).
        (_, NodeKind::Group) if n.ty == "records" || n.ty == "message set" => J::Array(
            n.children
                .iter()
                .filter(|c| c.kind == NodeKind::Group)
                .map(|c| field_value(c, frame, spans))
                .collect(),
        ),
        (_, NodeKind::Group) | (Value::Struct, _) => J::Object(fields(n, frame, spans)),
        _ => scalar(n, frame),
    };
    wrap(v, n, spans)
}

/// The fields of a struct node as a JSON object: schema names to values. Presence bytes,
/// length prefixes and tagged-field counts are wire details and stay out; known tagged fields
/// appear under their names, unknown ones under `_unknown_tags`.
pub fn fields(n: &Node, frame: &[u8], spans: bool) -> Map<String, J> {
    let mut m = Map::new();
    let mut unknown = Vec::new();
    for c in &n.children {
        match c.kind {
            NodeKind::Length | NodeKind::TagCount | NodeKind::Error | NodeKind::Raw => continue,
            _ => {}
        }
        if c.name == "present" && c.ty == "int8" {
            continue;
        }
        if c.ty == "tagged_field" {
            let tag = c.child("tag").and_then(Node::as_int).unwrap_or(-1);
            match c.children.get(2) {
                Some(inner) if inner.kind != NodeKind::Raw => {
                    m.insert(c.name.to_string(), field_value(inner, frame, spans));
                }
                Some(raw) => unknown.push(json!({"tag": tag, "data": scalar(raw, frame)})),
                None => {}
            }
            continue;
        }
        // Record headers and similar repeated groups sit directly in their parent, with an
        // index: they become one array under the plural of their name.
        if c.index.is_some() && c.kind == NodeKind::Group {
            let key = format!("{}s", c.name);
            let entry = m.entry(key).or_insert_with(|| J::Array(Vec::new()));
            if let J::Array(a) = entry {
                a.push(field_value(c, frame, spans));
            }
            continue;
        }
        m.insert(c.name.to_string(), field_value(c, frame, spans));
        // Elements past --max-elements: how many the array left out.
        if let Some(omitted) = c
            .children
            .iter()
            .find(|g| g.kind == NodeKind::Raw && g.name == "omitted")
        {
            let total = match c.value {
                Value::Array(n) => n,
                _ => 0,
            };
            let kept = c
                .children
                .iter()
                .filter(|g| g.kind != NodeKind::Length && g.kind != NodeKind::Raw)
                .count();
            let _ = omitted;
            m.insert(
                format!("{}_omitted", c.name),
                J::from(total.saturating_sub(kept)),
            );
        }
        // A topic id whose name an earlier message gave: the name beside it.
        if let (Value::Uuid(_), Some(name)) = (
            &c.value,
            c.detail.strip_prefix('(').and_then(|d| d.strip_suffix(')')),
        ) {
            m.insert(format!("{}_name", c.name), J::String(name.to_string()));
        }
    }
    if !unknown.is_empty() {
        m.insert("_unknown_tags".into(), J::Array(unknown));
    }
    m
}

/// The whole NDJSON object of a message.
pub fn message(msg: &Message, frame: &[u8], meta: &Meta, spans: bool) -> J {
    let mut o = Map::new();
    o.insert("frame".into(), J::from(meta.frame));
    if let Some(off) = meta.input_offset {
        o.insert("input_offset".into(), J::from(off));
    }
    if let Some(ts) = meta.ts_nanos {
        o.insert("time".into(), J::String(rfc3339(ts)));
    }
    if let Some(s) = meta.stream {
        o.insert("stream".into(), J::from(s));
    }
    if let Some(s) = &meta.src {
        o.insert("src".into(), J::String(s.clone()));
    }
    if let Some(d) = &meta.dst {
        o.insert("dst".into(), J::String(d.clone()));
    }
    o.insert("direction".into(), J::String(msg.direction.as_str().into()));
    o.insert("api_key".into(), msg.api_key.map_or(J::Null, J::from));
    o.insert(
        "api_name".into(),
        msg.api_key
            .map_or(J::Null, |_| J::String(msg.api_name().into_owned())),
    );
    o.insert(
        "api_version".into(),
        msg.api_version.map_or(J::Null, J::from),
    );
    o.insert(
        "correlation_id".into(),
        msg.correlation_id.map_or(J::Null, J::from),
    );
    o.insert("size".into(), J::from(frame.len()));
    if msg.direction == Direction::Request {
        o.insert(
            "client_id".into(),
            match &msg.client_id {
                Some(Some(c)) => J::String(c.clone()),
                _ => J::Null,
            },
        );
    } else {
        if let Some(r) = meta.request_frame {
            o.insert("request_frame".into(), J::from(r));
        }
        if let Some(l) = meta.latency_nanos {
            o.insert(
                "latency_us".into(),
                serde_json::Number::from_f64(l as f64 / 1000.0).map_or(J::Null, J::Number),
            );
        }
    }
    if meta.assumed {
        o.insert("assumed".into(), J::Bool(true));
    }
    if meta.partial {
        o.insert("partial".into(), J::Bool(true));
    }
    let header = msg
        .root
        .children
        .get(1)
        .filter(|h| h.name.contains("Header"));
    o.insert(
        "header".into(),
        header.map_or(J::Null, |h| {
            J::Object(fields(
                &Node {
                    value: Value::Struct,
                    ..h.clone()
                },
                frame,
                spans,
            ))
        }),
    );
    o.insert(
        "body".into(),
        msg.body()
            .map_or(J::Null, |b| J::Object(fields(b, frame, spans))),
    );
    let errors: Vec<J> = msg
        .errors
        .iter()
        .map(|(path, code)| json!({"path": path, "code": code, "name": names::error_name(*code)}))
        .collect();
    o.insert("errors".into(), J::Array(errors));
    let mut malformed: Vec<J> = msg
        .diagnoses
        .iter()
        .map(|d| json!({"offset": d.offset, "message": d.message}))
        .collect();
    if let Some(e) = &msg.error {
        let kind = match e.kind {
            crate::kafka::ErrorKind::Malformed => "malformed",
            crate::kafka::ErrorKind::UnknownApi => "unknown_api",
            crate::kafka::ErrorKind::UnknownVersion => "unknown_version",
        };
        malformed.push(json!({"offset": e.offset, "message": e.to_string(), "kind": kind}));
    }
    o.insert("malformed".into(), J::Array(malformed));
    J::Object(o)
}
