//! `--json`: one JSON object per Kafka message (NDJSON), keys documented in docs/json.md and
//! docs/kdissect-message.schema.json. The body is the decoded tree under the schema's field
//! names; `--json-spans` wraps every value with its byte offset and length.

use crate::kafka::{names, Direction, Message, Node, NodeKind, Note, Value};
use serde_json::{json, Map, Value as J};
use std::io::Write;

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

// The body is written straight to bytes, node by node: building a `serde_json::Value` tree
// for every message cost more than decoding it.

fn put_str(w: &mut Vec<u8>, s: &str) {
    // Serialising a str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *w, s);
}

fn put_key(w: &mut Vec<u8>, first: &mut bool, k: &str) {
    if !*first {
        w.push(b',');
    }
    *first = false;
    put_str(w, k);
    w.push(b':');
}

fn put_int(w: &mut Vec<u8>, i: i64) {
    let _ = write!(w, "{i}");
}

/// A record key or value: the text when it is UTF-8, else `{"hex": "..."}`.
fn put_payload(w: &mut Vec<u8>, b: &[u8]) {
    match std::str::from_utf8(b) {
        Ok(s) => put_str(w, s),
        Err(_) => {
            w.extend_from_slice(b"{\"hex\":\"");
            w.extend_from_slice(hex::encode(b).as_bytes());
            w.extend_from_slice(b"\"}");
        }
    }
}

fn put_scalar(w: &mut Vec<u8>, n: &Node, frame: &[u8]) {
    match &n.value {
        Value::None
        | Value::Struct
        | Value::Array(_)
        | Value::Null
        | Value::Bytes(None)
        | Value::Str(None) => w.extend_from_slice(b"null"),
        Value::Int(i) => put_int(w, *i),
        Value::Float(f) => match serde_json::Number::from_f64(*f) {
            Some(x) => {
                let _ = write!(w, "{x}");
            }
            None => w.extend_from_slice(b"null"),
        },
        Value::Bool(b) => w.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Str(Some(s)) => put_str(w, s),
        Value::Bytes(Some((off, len))) if n.ty == "varbytes" => {
            put_payload(w, frame.get(*off..off + len).unwrap_or(&[]))
        }
        Value::Blob(b) if n.kind == NodeKind::Group => put_int(w, b.len() as i64),
        Value::Blob(b) => put_payload(w, b),
        Value::Bytes(Some((off, len))) => {
            w.push(b'"');
            w.extend_from_slice(hex::encode(frame.get(*off..off + len).unwrap_or(&[])).as_bytes());
            w.push(b'"');
        }
        Value::Uuid(u) => put_str(w, &super::value::uuid(u)),
        Value::Text(t) => put_str(w, t),
    }
}

/// The JSON of one field node (struct, array or scalar), wrapped with its span if asked.
fn put_value(w: &mut Vec<u8>, n: &Node, frame: &[u8], spans: bool) {
    if spans {
        w.extend_from_slice(b"{\"value\":");
    }
    match (&n.value, n.kind) {
        (Value::Null, _) => w.extend_from_slice(b"null"),
        (Value::Array(_), _) => put_list(
            w,
            n.children
                .iter()
                .filter(|c| c.kind != NodeKind::Length && c.kind != NodeKind::Raw),
            frame,
            spans,
        ),
        // A records field, or the records decompressed from a batch: a list of batches
        // (or of records, or of legacy messages).
        (_, NodeKind::Group) if n.ty == "records" || n.ty == "message set" => put_list(
            w,
            n.children.iter().filter(|c| c.kind == NodeKind::Group),
            frame,
            spans,
        ),
        (_, NodeKind::Group) | (Value::Struct, _) => put_fields(w, n, frame, spans),
        _ => put_scalar(w, n, frame),
    }
    if spans {
        let _ = write!(w, ",\"offset\":{},\"length\":{}}}", n.offset, n.len);
    }
}

fn put_list<'a>(w: &mut Vec<u8>, items: impl Iterator<Item = &'a Node>, frame: &[u8], spans: bool) {
    w.push(b'[');
    for (i, c) in items.enumerate() {
        if i > 0 {
            w.push(b',');
        }
        put_value(w, c, frame, spans);
    }
    w.push(b']');
}

/// The fields of a struct node as a JSON object: schema names to values. Presence bytes,
/// length prefixes and tagged-field counts are wire details and stay out; known tagged fields
/// appear under their names, unknown ones under `_unknown_tags`; indexed groups directly in a
/// struct (record headers) become one array under the plural of their name.
fn put_fields(w: &mut Vec<u8>, n: &Node, frame: &[u8], spans: bool) {
    w.push(b'{');
    let mut first = true;
    let mut unknown: Vec<&Node> = Vec::new();
    let mut grouped: Vec<&str> = Vec::new();
    for c in &n.children {
        match c.kind {
            NodeKind::Length | NodeKind::TagCount | NodeKind::Error | NodeKind::Raw => continue,
            _ => {}
        }
        if c.name == "present" && c.ty == "int8" {
            continue;
        }
        if c.ty == "tagged_field" {
            match c.children.get(2) {
                Some(inner) if inner.kind != NodeKind::Raw => {
                    put_key(w, &mut first, &c.name);
                    put_value(w, inner, frame, spans);
                }
                Some(_) => unknown.push(c),
                None => {}
            }
            continue;
        }
        if c.index.is_some() && c.kind == NodeKind::Group {
            if grouped.contains(&c.name.as_ref()) {
                continue;
            }
            grouped.push(&c.name);
            put_key(w, &mut first, &format!("{}s", c.name));
            let same = n
                .children
                .iter()
                .filter(|g| g.index.is_some() && g.kind == NodeKind::Group && g.name == c.name);
            put_list(w, same, frame, spans);
            continue;
        }
        put_key(w, &mut first, &c.name);
        put_value(w, c, frame, spans);
        // Elements past --max-elements: how many the array left out.
        if c.children
            .iter()
            .any(|g| g.kind == NodeKind::Raw && g.name == "omitted")
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
            put_key(w, &mut first, &format!("{}_omitted", c.name));
            put_int(w, total.saturating_sub(kept) as i64);
        }
        // A topic id whose name an earlier message gave: the name beside it.
        if let (Value::Uuid(_), Note::TopicName(name)) = (&c.value, &c.note) {
            put_key(w, &mut first, &format!("{}_name", c.name));
            put_str(w, name);
        }
    }
    if !unknown.is_empty() {
        put_key(w, &mut first, "_unknown_tags");
        w.push(b'[');
        for (i, c) in unknown.iter().enumerate() {
            if i > 0 {
                w.push(b',');
            }
            let tag = c.child("tag").and_then(Node::as_int).unwrap_or(-1);
            let _ = write!(w, "{{\"tag\":{tag},\"data\":");
            match c.children.get(2) {
                Some(raw) => put_scalar(w, raw, frame),
                None => w.extend_from_slice(b"null"),
            }
            w.push(b'}');
        }
        w.push(b']');
    }
    w.push(b'}');
}

/// The whole NDJSON object of a message.
/// The whole NDJSON object of a message, written to `w` (one line, no newline).
pub fn write_message(w: &mut Vec<u8>, msg: &Message, frame: &[u8], meta: &Meta, spans: bool) {
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
    if let Some(v) = msg.assumed_version {
        o.insert("assumed_version".into(), J::from(v));
    }
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
            // Whole microseconds, rounded, as in `--stats --json`.
            o.insert("latency_us".into(), J::from((l + 500).div_euclid(1000)));
        }
    }
    if meta.assumed {
        o.insert("assumed".into(), J::Bool(true));
    }
    if meta.partial {
        o.insert("partial".into(), J::Bool(true));
    }
    // Placeholders keep the key order; header and body are written node by node below.
    o.insert("header".into(), J::Null);
    o.insert("body".into(), J::Null);
    let errors: Vec<J> = msg
        .errors
        .iter()
        .map(|(path, code)| json!({"path": path, "code": code, "name": names::error_name(*code)}))
        .collect();
    o.insert("errors".into(), J::Array(errors));
    let mut malformed: Vec<J> = msg
        .diagnoses
        .iter()
        .map(|d| problem_json(d.offset, &d.message, d.kind))
        .collect();
    if let Some(e) = &msg.error {
        let kind = e.kind.problem();
        malformed.push(problem_json(e.offset, &e.to_string(), kind));
    }
    o.insert("malformed".into(), J::Array(malformed));
    let header = msg
        .root
        .children
        .get(1)
        .filter(|h| h.name.contains("Header"));
    w.push(b'{');
    let mut first = true;
    for (k, v) in &o {
        put_key(w, &mut first, k);
        match (k.as_str(), header, msg.body()) {
            ("header", Some(h), _) => put_fields(w, h, frame, spans),
            ("body", _, Some(b)) => put_fields(w, b, frame, spans),
            _ => {
                let _ = serde_json::to_writer(&mut *w, v);
            }
        }
    }
    w.push(b'}');
}

/// The NDJSON object of a message as a JSON value (for tests and tools; the CLI writes bytes).
pub fn message(msg: &Message, frame: &[u8], meta: &Meta, spans: bool) -> J {
    let mut w = Vec::with_capacity(1024);
    write_message(&mut w, msg, frame, meta, spans);
    serde_json::from_slice(&w).unwrap_or(J::Null)
}

/// One `malformed` entry: where, what, the kind's code, and the CLI's hint when it has one.
fn problem_json(offset: usize, message: &str, kind: crate::kafka::ProblemKind) -> J {
    let mut o = json!({"offset": offset, "message": message, "kind": kind.code()});
    if let Some(h) = super::hint(kind) {
        o["hint"] = J::String(h.into());
    }
    o
}
