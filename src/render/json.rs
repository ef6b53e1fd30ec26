//! `--json`: one JSON object per Kafka message (NDJSON), keys documented in docs/json.md and
//! docs/kdissect-message.schema.json. The body is the decoded tree under the schema's field
//! names; `--json-spans` wraps every value with its byte offset and length.

use super::time::{push_rfc3339, rfc3339};
use crate::kafka::walk::json::{Fill, JsonBody};
use crate::kafka::{Direction, ErrorCode, Message, Node, NodeKind, Note, Region, Shape, Value};
use crate::text::json::put_str;
use serde_json::{json, Map, Value as J};
use std::io::Write;
use std::net::SocketAddr;

/// Where a message was found: capture metadata, or its place in hex input.
#[derive(Debug, Clone, Default)]
pub struct Meta {
    /// The input file, when more than one is read: frames and streams count per file.
    pub file: Option<String>,
    pub frame: u64,
    pub ts_nanos: Option<i64>,
    pub stream: Option<u32>,
    pub src: Option<SocketAddr>,
    pub dst: Option<SocketAddr>,
    pub request_frame: Option<u64>,
    pub latency_nanos: Option<i64>,
    pub assumed: bool,
    pub partial: bool,
    /// Offset of the frame in hex input.
    pub input_offset: Option<u64>,
    /// The frame was decrypted out of a TLS connection.
    pub tls: bool,
}

// The body is written straight to bytes, node by node: building a `serde_json::Value` tree
// for every message cost more than decoding it.

/// The separator before a key, if it is not the object's first.
fn sep(w: &mut Vec<u8>, first: &mut bool) {
    if !*first {
        w.push(b',');
    }
    *first = false;
}

fn put_key(w: &mut Vec<u8>, first: &mut bool, k: &str) {
    sep(w, first);
    put_str(w, k);
    w.push(b':');
}

/// A key that is a constant of this file, `"k":`: no escaping to check.
fn key(w: &mut Vec<u8>, first: &mut bool, k: &'static str) {
    sep(w, first);
    w.push(b'"');
    w.extend_from_slice(k.as_bytes());
    w.extend_from_slice(b"\":");
}

/// A key made of a field's name and a suffix (`Ids_omitted`, `TopicId_name`, `Headers`),
/// without a string for it.
fn put_key_suffixed(w: &mut Vec<u8>, first: &mut bool, name: &str, suffix: &'static str) {
    sep(w, first);
    let at = w.len();
    put_str(w, name);
    if w.last() == Some(&b'"') && w.len() >= at + 2 {
        // Before the closing quote: the suffix needs no escaping.
        w.pop();
        w.extend_from_slice(suffix.as_bytes());
        w.push(b'"');
    }
    w.push(b':');
}

/// An endpoint as a string, as `SocketAddr` displays it (no byte of it needs escaping).
fn put_addr(w: &mut Vec<u8>, a: &SocketAddr) {
    w.push(b'"');
    super::value::endpoint_pieces(a, |p| w.extend_from_slice(p.as_bytes()));
    w.push(b'"');
}

/// An integer, as serde_json writes it (itoa, as `Display` too).
fn put_int(w: &mut Vec<u8>, i: impl itoa::Integer) {
    w.extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
}

/// An optional integer: the number or `null`.
fn put_opt_int(w: &mut Vec<u8>, i: Option<impl itoa::Integer>) {
    match i {
        Some(i) => put_int(w, i),
        None => w.extend_from_slice(b"null"),
    }
}

/// An optional string: the string or `null`.
fn put_opt_str(w: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => put_str(w, s),
        None => w.extend_from_slice(b"null"),
    }
}

fn put_bool(w: &mut Vec<u8>, b: bool) {
    w.extend_from_slice(if b { b"true" } else { b"false" });
}

/// A record key, value or header value: a string when the bytes are text by the rule every
/// view applies (`value::as_text`: UTF-8 with no control character but tab and newline), else
/// `{"hex": "..."}`. Bytes that are not text are never a string.
fn put_payload(w: &mut Vec<u8>, b: &[u8]) {
    match super::value::as_text(b) {
        Some(s) => put_str(w, s),
        None => {
            w.extend_from_slice(b"{\"hex\":\"");
            super::value::push_hex(w, b);
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
        Value::Bool(b) => put_bool(w, *b),
        Value::Str(Some(s)) => put_str(w, s),
        Value::Bytes(Some((off, len))) if n.shape == Shape::VarBytes => {
            put_payload(w, frame.get(*off..off + len).unwrap_or(&[]))
        }
        Value::Blob(b) if n.kind == NodeKind::Group => put_int(w, b.len()),
        Value::Blob(b) => put_payload(w, b),
        Value::Bytes(Some((off, len))) => {
            w.push(b'"');
            super::value::push_hex(w, frame.get(*off..off + len).unwrap_or(&[]));
            w.push(b'"');
        }
        Value::Uuid(u) => {
            w.push(b'"');
            super::value::push_uuid(w, u);
            w.push(b'"');
        }
        Value::Text(t) => put_str(w, t),
        Value::Tagged { tag, size } => put_str(w, &super::value::tagged(*tag, *size)),
        Value::Records(set) => put_str(w, &super::value::record_set(set)),
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
        (_, NodeKind::Group) if matches!(n.shape, Shape::Records | Shape::Decompressed) => {
            put_list(
                w,
                n.children.iter().filter(|c| c.kind == NodeKind::Group),
                frame,
                spans,
            )
        }
        (_, NodeKind::Group) if embeds_message(n) => put_embedded(w, n, frame, spans),
        (_, NodeKind::Group) | (Value::Struct, _) => put_fields(w, n, frame, spans),
        _ => put_scalar(w, n, frame),
    }
    if spans {
        w.extend_from_slice(b",\"offset\":");
        put_int(w, n.offset);
        w.extend_from_slice(b",\"length\":");
        put_int(w, n.len);
        w.push(b'}');
    }
}

/// Whether a bytes field holds a whole request or response (an Envelope's): its header
/// is among its children.
fn embeds_message(n: &Node) -> bool {
    n.children
        .iter()
        .any(|c| c.region == Region::RpcHeader && c.kind == NodeKind::Group)
}

/// An embedded request or response, as the message object names its parts:
/// `{"header": {...}, "body": {...}}` (the body null when it did not decode).
fn put_embedded(w: &mut Vec<u8>, n: &Node, frame: &[u8], spans: bool) {
    let header = n
        .children
        .iter()
        .find(|c| c.region == Region::RpcHeader && c.kind == NodeKind::Group);
    let body = n.children.iter().find(|c| c.shape == Shape::Body);
    w.extend_from_slice(b"{\"header\":");
    match header {
        Some(h) => put_fields(w, h, frame, spans),
        None => w.extend_from_slice(b"null"),
    }
    w.extend_from_slice(b",\"body\":");
    match body {
        Some(b) => put_fields(w, b, frame, spans),
        None => w.extend_from_slice(b"null"),
    }
    w.push(b'}');
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
    put_children(w, &mut true, &n.children, frame, spans);
    w.push(b'}');
}

/// The fields among `children` as the members of an object (`first`: none written before).
fn put_children(w: &mut Vec<u8>, first: &mut bool, children: &[Node], frame: &[u8], spans: bool) {
    let mut unknown: Vec<&Node> = Vec::new();
    let mut grouped: Vec<&str> = Vec::new();
    for c in children {
        if is_wire_detail(c) {
            continue;
        }
        if c.shape == Shape::TaggedField {
            match c.tagged_value() {
                Some(inner) if inner.kind != NodeKind::Raw => {
                    put_key(w, first, &c.name);
                    put_value(w, inner, frame, spans);
                    put_field_extras(w, first, inner);
                }
                Some(_) => unknown.push(c),
                None => {}
            }
        } else if c.index.is_some() && c.kind == NodeKind::Group {
            if !grouped.contains(&c.name.as_ref()) {
                grouped.push(&c.name);
                put_repeated_groups(w, first, children, &c.name, frame, spans);
            }
        } else {
            put_key(w, first, &c.name);
            put_value(w, c, frame, spans);
            put_field_extras(w, first, c);
        }
    }
    if !unknown.is_empty() {
        key(w, first, "_unknown_tags");
        put_unknown_tags(w, &unknown, frame);
    }
}

/// Nodes of the wire that carry no field: length prefixes, tagged-field counts, where decoding
/// stopped, raw bytes, and a nullable struct's presence byte.
fn is_wire_detail(c: &Node) -> bool {
    matches!(
        c.kind,
        NodeKind::Length | NodeKind::TagCount | NodeKind::Error | NodeKind::Raw
    ) || c.shape == Shape::PresenceByte
}

/// The indexed groups named `name` among `n`'s children (a record's `Header[i]`), as one list
/// under the plural of the name.
fn put_repeated_groups(
    w: &mut Vec<u8>,
    first: &mut bool,
    children: &[Node],
    name: &str,
    frame: &[u8],
    spans: bool,
) {
    put_key_suffixed(w, first, name, "s");
    let same = children
        .iter()
        .filter(|g| g.index.is_some() && g.kind == NodeKind::Group && g.name == name);
    put_list(w, same, frame, spans);
}

/// Keys that follow a field: `<name>_omitted`, the elements an array past --max-elements left
/// out, and `<name>_name`, the name an earlier message gave a topic id or the name of an
/// enumeration's value (null for a value the enumeration lacks).
fn put_field_extras(w: &mut Vec<u8>, first: &mut bool, c: &Node) {
    if c.children
        .iter()
        .any(|g| g.kind == NodeKind::Raw && g.shape == Shape::Omitted)
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
        put_key_suffixed(w, first, &c.name, "_omitted");
        put_int(w, total.saturating_sub(kept));
    }
    match (&c.value, &c.note) {
        (Value::Uuid(_), Note::TopicName(name)) => {
            put_key_suffixed(w, first, &c.name, "_name");
            put_str(w, name);
        }
        (Value::Int(_), Note::Named(n)) => {
            put_key_suffixed(w, first, &c.name, "_name");
            put_str(w, n);
        }
        (Value::Int(_), Note::Enum { name, .. }) => {
            put_key_suffixed(w, first, &c.name, "_name");
            match name {
                Some(n) => put_str(w, n),
                None => w.extend_from_slice(b"null"),
            }
        }
        _ => {}
    }
}

/// Tagged fields kdissect has no name for: `[{"tag": 7, "data": "0102"}]`.
fn put_unknown_tags(w: &mut Vec<u8>, unknown: &[&Node], frame: &[u8]) {
    w.push(b'[');
    for (i, c) in unknown.iter().enumerate() {
        if i > 0 {
            w.push(b',');
        }
        let tag = match c.value {
            Value::Tagged { tag, .. } => i64::from(tag),
            _ => -1,
        };
        w.extend_from_slice(b"{\"tag\":");
        put_int(w, tag);
        w.extend_from_slice(b",\"data\":");
        match c.tagged_value() {
            Some(raw) => put_scalar(w, raw, frame),
            None => w.extend_from_slice(b"null"),
        }
        w.push(b'}');
    }
    w.push(b']');
}

/// The whole NDJSON object of a message, written to `w` (one line, no newline). Keys in the
/// order docs/json.md lists them. The head is written key by key as the body is: building it
/// as a map first cost a sixth of the view.
pub fn write_message(w: &mut Vec<u8>, msg: &Message, frame: &[u8], meta: &Meta, spans: bool) {
    w.push(b'{');
    let mut first = true;
    let f = &mut first;
    put_origin(w, f, meta);
    if spans && meta.tls {
        // Offsets count in the decrypted frame, not in any packet's bytes.
        key(w, f, "spans_in");
        put_str(w, "decrypted TLS");
    }
    put_api(w, f, msg, frame.len());
    put_exchange(w, f, msg, meta);
    put_embedded_api(w, f, msg);
    key(w, f, "header");
    match msg
        .root()
        .children
        .iter()
        .find(|h| h.shape == Shape::Header)
    {
        Some(h) => put_fields(w, h, frame, spans),
        None => w.extend_from_slice(b"null"),
    }
    key(w, f, "body");
    match (&msg.json, msg.body()) {
        (Some(j), _) => put_walked_body(w, j, frame),
        (None, Some(b)) => put_fields(w, b, frame, spans),
        (None, None) => w.extend_from_slice(b"null"),
    }
    key(w, f, "errors");
    put_error_codes(w, msg);
    key(w, f, "malformed");
    put_problems(w, msg);
    w.push(b'}');
}

/// A body whose JSON was written as it was walked (src/kafka/walk/json.rs): its bytes, and
/// in its holes the names of its topic ids learnt since and the fields it left as nodes
/// (records, group protocols), written as a tree's.
fn put_walked_body(w: &mut Vec<u8>, j: &JsonBody, frame: &[u8]) {
    let mut from = 0;
    for h in &j.holes {
        w.extend_from_slice(j.bytes.get(from..h.at).unwrap_or(&[]));
        from = h.at;
        match &h.fill {
            Fill::Fields(nodes) => put_children(w, &mut true, nodes, frame, false),
            Fill::TopicId {
                field,
                name: Some(name),
                ..
            } => {
                put_key_suffixed(w, &mut false, field, "_name");
                put_str(w, name);
            }
            Fill::TopicId { name: None, .. } => {}
        }
    }
    w.extend_from_slice(j.bytes.get(from..).unwrap_or(&[]));
}

/// Where the message was found: frame, input offset, time, stream, endpoints.
fn put_origin(w: &mut Vec<u8>, f: &mut bool, meta: &Meta) {
    if let Some(file) = &meta.file {
        key(w, f, "file");
        put_str(w, file);
    }
    key(w, f, "frame");
    put_int(w, meta.frame);
    if let Some(off) = meta.input_offset {
        key(w, f, "input_offset");
        put_int(w, off);
    }
    if let Some(ts) = meta.ts_nanos {
        key(w, f, "time");
        w.push(b'"');
        push_rfc3339(w, ts);
        w.push(b'"');
    }
    if let Some(s) = meta.stream {
        key(w, f, "stream");
        put_int(w, s);
    }
    if let Some(s) = &meta.src {
        key(w, f, "src");
        put_addr(w, s);
    }
    if let Some(d) = &meta.dst {
        key(w, f, "dst");
        put_addr(w, d);
    }
    if meta.tls {
        key(w, f, "tls");
        put_bool(w, true);
    }
}

/// What the header says: direction, API, version (and the layout assumed for it), correlation
/// id, and the frame's size.
fn put_api(w: &mut Vec<u8>, f: &mut bool, msg: &Message, size: usize) {
    key(w, f, "direction");
    put_str(w, msg.direction.as_str());
    key(w, f, "api_key");
    put_opt_int(w, msg.api_key);
    key(w, f, "api_name");
    match msg.api_key {
        Some(_) => put_str(w, &msg.api_name()),
        None => w.extend_from_slice(b"null"),
    }
    key(w, f, "api_version");
    put_opt_int(w, msg.api_version);
    if let Some(v) = msg.assumed_version {
        key(w, f, "assumed_version");
        put_int(w, v);
    }
    key(w, f, "correlation_id");
    put_opt_int(w, msg.correlation_id);
    key(w, f, "size");
    put_int(w, size);
}

/// The message's side of its exchange: a request's client_id, a response's request frame and
/// latency; and whether the API was assumed or the frame cut by a gap.
fn put_exchange(w: &mut Vec<u8>, f: &mut bool, msg: &Message, meta: &Meta) {
    if msg.direction == Direction::Request {
        key(w, f, "client_id");
        put_opt_str(w, msg.client_id.as_ref().and_then(|c| c.as_deref()));
    } else {
        if let Some(r) = meta.request_frame {
            key(w, f, "request_frame");
            put_int(w, r);
        }
        if let Some(l) = meta.latency_nanos {
            // Whole microseconds, rounded, as in `--stats --json`.
            key(w, f, "latency_us");
            put_int(w, (l + 500).div_euclid(1000));
        }
    }
    if meta.assumed {
        key(w, f, "assumed");
        put_bool(w, true);
    }
    if meta.partial {
        key(w, f, "partial");
        put_bool(w, true);
    }
}

/// The request or response the message carries (an Envelope's): which API and version, its
/// correlation id, and a request's client_id.
fn put_embedded_api(w: &mut Vec<u8>, f: &mut bool, msg: &Message) {
    let Some(e) = &msg.embedded else { return };
    key(w, f, "embedded");
    w.push(b'{');
    let mut first = true;
    let m = &mut first;
    key(w, m, "direction");
    put_opt_str(w, e.direction.map(|d| d.as_str()));
    key(w, m, "api_key");
    put_opt_int(w, e.api_key);
    key(w, m, "api_name");
    match e.api_key {
        Some(k) => put_str(w, &crate::kafka::message::api_display_name(k)),
        None => w.extend_from_slice(b"null"),
    }
    key(w, m, "api_version");
    put_opt_int(w, e.api_version);
    key(w, m, "correlation_id");
    put_opt_int(w, e.correlation_id);
    if let Some(c) = &e.client_id {
        key(w, m, "client_id");
        put_opt_str(w, c.as_deref());
    }
    w.push(b'}');
}

/// Every non-zero error code of the body with its path and name:
/// `[{"path", "code", "name", "retriable"}]`.
fn put_error_codes(w: &mut Vec<u8>, msg: &Message) {
    w.push(b'[');
    for (i, x) in msg.errors.iter().enumerate() {
        if i > 0 {
            w.push(b',');
        }
        let e = ErrorCode(x.code);
        w.extend_from_slice(b"{\"path\":");
        put_str(w, &x.path.to_string());
        w.extend_from_slice(b",\"code\":");
        put_int(w, x.code);
        w.extend_from_slice(b",\"name\":");
        put_opt_str(w, e.name());
        w.extend_from_slice(b",\"retriable\":");
        put_bool(w, e.is_retriable());
        w.push(b'}');
    }
    w.push(b']');
}

/// The problems found while decoding, then where decoding stopped, if it did.
fn put_problems(w: &mut Vec<u8>, msg: &Message) {
    w.push(b'[');
    let mut first = true;
    for d in &msg.diagnoses {
        sep(w, &mut first);
        put_problem(w, d.offset, &d.to_string(), d.kind);
    }
    if let Some(e) = &msg.error {
        sep(w, &mut first);
        put_problem(w, e.offset, &e.to_string(), e.kind.problem());
    }
    w.push(b']');
}

/// The NDJSON object of a message as a JSON value (for tests and tools; the CLI writes bytes).
pub fn message(msg: &Message, frame: &[u8], meta: &Meta, spans: bool) -> J {
    let mut w = Vec::with_capacity(1024);
    write_message(&mut w, msg, frame, meta, spans);
    serde_json::from_slice(&w).unwrap_or(J::Null)
}

/// One `malformed` entry: where, what, the kind's code, and the CLI's hint when it has one.
fn put_problem(w: &mut Vec<u8>, offset: usize, message: &str, kind: crate::kafka::ProblemKind) {
    w.extend_from_slice(b"{\"offset\":");
    put_int(w, offset);
    w.extend_from_slice(b",\"message\":");
    put_str(w, message);
    w.extend_from_slice(b",\"kind\":");
    put_str(w, kind.code());
    if let Some(h) = super::hint(kind) {
        w.extend_from_slice(b",\"hint\":");
        put_str(w, h);
    }
    w.push(b'}');
}

/// One message as `--fields` shows it: `{"frame", "stream", "direction", "fields": {NAME:
/// [VALUES]}}`, each field's values in an array (empty when the message has none). With
/// `mask_bytes`, byte values are `"**"`: the message holds secrets and they are not to be shown.
pub fn write_projection(
    w: &mut Vec<u8>,
    meta: &Meta,
    direction: Direction,
    values: &[(&str, Vec<crate::filter::FieldValue>)],
    mask_bytes: bool,
) {
    let fields: Map<String, J> = values
        .iter()
        .map(|(name, vs)| {
            let arr = vs.iter().map(|v| field_value(v, mask_bytes)).collect();
            (name.to_string(), J::Array(arr))
        })
        .collect();
    let mut o = Map::new();
    if let Some(f) = &meta.file {
        o.insert("file".into(), J::String(f.clone()));
    }
    o.insert("frame".into(), J::from(meta.frame));
    o.insert("stream".into(), json!(meta.stream));
    let direction = match direction {
        Direction::Request => "request",
        Direction::Response => "response",
    };
    o.insert("direction".into(), J::from(direction));
    o.insert("fields".into(), J::Object(fields));
    let _ = serde_json::to_writer(&mut *w, &o);
}

/// A filter field's value as JSON: durations in microseconds, as `latency_us` is.
fn field_value(v: &crate::filter::FieldValue, mask_bytes: bool) -> J {
    use crate::filter::FieldValue as F;
    match v {
        F::Int(i) => J::from(*i),
        F::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
        F::Bool(b) => J::Bool(*b),
        F::Str(s) => J::String(s.clone()),
        F::Bytes(_) if mask_bytes => J::String("**".into()),
        F::Bytes(b) => J::String(hex::encode(b)),
        F::Uuid(u) => J::String(super::value::uuid(u)),
        F::Duration(ns) => J::from(ns / 1000),
        F::Time(ns) => J::String(rfc3339(*ns)),
        F::Struct => J::Object(Map::new()),
        F::Null => J::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::test_frames;

    fn ndjson(msg: &Message, frame: &[u8], meta: &Meta, spans: bool) -> String {
        let mut w = Vec::new();
        write_message(&mut w, msg, frame, meta, spans);
        String::from_utf8_lossy(&w).into_owned()
    }

    fn capture_meta() -> Meta {
        Meta {
            frame: 7,
            ts_nanos: Some(1_764_464_353_123_456_789),
            stream: Some(3),
            src: "10.0.0.1:40000".parse().ok(),
            dst: "10.0.0.2:9092".parse().ok(),
            ..Meta::default()
        }
    }

    #[test]
    fn a_request_from_a_capture() {
        let (f, m) = test_frames::metadata_request();
        assert_eq!(
            ndjson(&m, &f, &capture_meta(), false),
            r#"{"frame":7,"time":"2025-11-30T00:59:13.123456789Z","stream":3,"src":"10.0.0.1:40000","dst":"10.0.0.2:9092","direction":"request","api_key":3,"api_name":"Metadata","api_version":13,"correlation_id":0,"size":37,"client_id":"","header":{"request_api_key":3,"request_api_version":13,"correlation_id":0,"client_id":""},"body":{"Topics":[{"TopicId":"00000000-0000-0000-0000-000000000000","Name":""}],"AllowAutoTopicCreation":false,"IncludeTopicAuthorizedOperations":false},"errors":[],"malformed":[]}"#
        );
    }

    #[test]
    fn a_response_with_its_request_frame_latency_and_errors() {
        let mut f = test_frames::bytes(test_frames::METADATA_V13_RESPONSE);
        if let Some(b) = f.get_mut(0x35) {
            *b = 9;
        }
        let m = crate::kafka::decode_response(&f, 3, 13);
        let meta = Meta {
            frame: 8,
            request_frame: Some(7),
            latency_nanos: Some(2_500_500),
            assumed: true,
            partial: true,
            ..Meta::default()
        };
        assert_eq!(
            ndjson(&m, &f, &meta, false),
            r#"{"frame":8,"direction":"response","api_key":3,"api_name":"Metadata","api_version":13,"correlation_id":0,"size":90,"request_frame":7,"latency_us":2501,"assumed":true,"partial":true,"header":{"correlation_id":0},"body":{"ThrottleTimeMs":0,"Brokers":[{"NodeId":0,"Host":"","Port":0,"Rack":""}],"ClusterId":"","ControllerId":0,"Topics":[{"ErrorCode":0,"Name":"","TopicId":"00000000-0000-0000-0000-000000000000","IsInternal":false,"Partitions":[{"ErrorCode":9,"PartitionIndex":0,"LeaderId":0,"LeaderEpoch":0,"ReplicaNodes":[0],"IsrNodes":[0],"OfflineReplicas":[0]}],"TopicAuthorizedOperations":0}],"ErrorCode":0},"errors":[{"path":"Topics[0].Partitions[0].ErrorCode","code":9,"name":"REPLICA_NOT_AVAILABLE","retriable":true}],"malformed":[]}"#
        );
    }

    #[test]
    fn spans_wrap_every_value_and_secrets_stay_masked() {
        let (f, m) = test_frames::sasl_plain();
        let meta = Meta {
            frame: 1,
            input_offset: Some(0x25),
            ..Meta::default()
        };
        let shown = crate::render::masked(&m, &f, crate::render::Style::default());
        assert_eq!(
            ndjson(&m, &shown, &meta, true),
            r#"{"frame":1,"input_offset":37,"direction":"request","api_key":36,"api_name":"SaslAuthenticate","api_version":2,"correlation_id":3,"size":27,"client_id":"t","header":{"request_api_key":{"value":36,"offset":4,"length":2},"request_api_version":{"value":2,"offset":6,"length":2},"correlation_id":{"value":3,"offset":8,"length":4},"client_id":{"value":"t","offset":12,"length":3}},"body":{"AuthBytes":{"value":{"authzid":{"value":"","offset":17,"length":1},"authcid":{"value":"alice","offset":18,"length":6},"passwd":{"value":"**","offset":24,"length":2}},"offset":16,"length":10}},"errors":[],"malformed":[]}"#
        );
    }

    #[test]
    fn problems_carry_their_kind_and_the_command_line_hint() {
        let f = test_frames::request(1000, 0, 9, &[1, 2, 3]);
        let m = crate::kafka::decode_request(&f);
        assert_eq!(
            ndjson(&m, &f, &Meta::default(), false),
            r#"{"frame":0,"direction":"request","api_key":1000,"api_name":"ApiKey1000","api_version":0,"correlation_id":9,"size":19,"client_id":"t","header":{"request_api_key":1000,"request_api_version":0,"correlation_id":9,"client_id":"t"},"body":null,"errors":[],"malformed":[{"offset":15,"message":"at 0x000f: API key 1000 (ApiKey1000) is not known to kdissect: body shown raw","kind":"unknown_api"}]}"#
        );
        let (f, _) = test_frames::metadata_response();
        let m = crate::kafka::message::decode_response_header_only(
            &f,
            crate::kafka::ErrorKind::Unpaired,
            crate::kafka::problem::HeaderOnly::NoRequest { correlation_id: 0 },
        );
        let j = message(&m, &f, &Meta::default(), false);
        assert_eq!(
            j["malformed"].to_string(),
            r#"[{"offset":8,"message":"at 0x0008: no request with correlation_id 0 came before this response","kind":"unpaired","hint":"to decode it as a response, give --api-key K --api-version V"}]"#
        );
        assert_eq!(j["api_key"], J::Null);
        assert_eq!(j["api_name"], J::Null);
    }

    fn leaf(name: &'static str, ty: &'static str, kind: NodeKind, v: Value) -> Node {
        let mut n = Node::new(name, ty, 0, crate::kafka::Region::RequestBody, kind);
        n.value = v;
        n
    }

    fn tagged(name: &'static str, tag: i64, data: Node) -> Node {
        let size = 1;
        let mut t = leaf(
            name,
            "tagged_field",
            NodeKind::Group,
            Value::Tagged {
                tag: tag as u32,
                size,
            },
        );
        t.shape = Shape::TaggedField;
        let mut head = [
            leaf("tag", "uvarint", NodeKind::Field, Value::Int(tag)),
            leaf("size", "uvarint", NodeKind::Field, Value::Int(1)),
        ];
        for h in &mut head {
            h.shape = Shape::TagHead;
        }
        t.children = head.into_iter().chain([data]).collect();
        t
    }

    /// Wire details stay out; tagged fields, repeated groups, cut arrays and named topic ids
    /// take their JSON shapes.
    #[test]
    fn struct_fields_under_their_schema_names() {
        let mut body = leaf("Body", "struct", NodeKind::Group, Value::Struct);
        let header = |v: &str| {
            let mut h = leaf("Header", "", NodeKind::Group, Value::None);
            h.index = Some(0);
            h.children.push(leaf(
                "Key",
                "string",
                NodeKind::Field,
                Value::Str(Some(v.into())),
            ));
            h
        };
        let mut ids = leaf("Ids", "[]int32", NodeKind::Field, Value::Array(5));
        ids.children = vec![
            leaf("length", "uvarint", NodeKind::Length, Value::Int(6)),
            leaf("int32", "int32", NodeKind::Field, Value::Int(1)),
            leaf("int32", "int32", NodeKind::Field, Value::Int(2)),
            {
                let mut o = leaf("omitted", "", NodeKind::Raw, Value::Text("3 more".into()));
                o.shape = Shape::Omitted;
                o
            },
        ];
        let mut id = leaf("TopicId", "uuid", NodeKind::Field, Value::Uuid([0; 16]));
        id.note = Note::TopicName("orders".into());
        body.children = vec![
            leaf("length", "uvarint", NodeKind::Length, Value::Int(1)),
            {
                let mut p = leaf("present", "int8", NodeKind::Field, Value::Int(1));
                p.shape = Shape::PresenceByte;
                p
            },
            leaf("Count", "int32", NodeKind::Field, Value::Int(3)),
            tagged(
                "Extra",
                0,
                leaf("Extra", "int8", NodeKind::Field, Value::Int(5)),
            ),
            tagged(
                "unknown",
                7,
                leaf("data", "bytes", NodeKind::Raw, Value::Bytes(Some((0, 2)))),
            ),
            header("k"),
            header("v"),
            ids,
            id,
            leaf(
                "tagged_fields",
                "uvarint",
                NodeKind::TagCount,
                Value::Int(2),
            ),
            leaf("error", "", NodeKind::Error, Value::Text("stop".into())),
        ];
        let mut w = Vec::new();
        put_fields(&mut w, &body, &[1, 2], false);
        assert_eq!(
            String::from_utf8_lossy(&w),
            r#"{"Count":3,"Extra":5,"Headers":[{"Key":"k"},{"Key":"v"}],"Ids":[1,2],"Ids_omitted":3,"TopicId":"00000000-0000-0000-0000-000000000000","TopicId_name":"orders","_unknown_tags":[{"tag":7,"data":"0102"}]}"#
        );
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        for s in [
            "",
            "orders",
            "a\"b",
            "back\\slash",
            "tab\tnl\n",
            "\u{1}\u{8}\u{c}\u{1b}\u{1f}\r",
            "é€😀 ©°",
            "/",
        ] {
            let mut w = Vec::new();
            put_str(&mut w, s);
            assert_eq!(
                String::from_utf8_lossy(&w),
                J::String(s.into()).to_string(),
                "{s:?}"
            );
        }
    }

    /// DEL and the C1 controls, which serde_json leaves raw, are escaped: the same value.
    #[test]
    fn del_and_c1_controls_are_escaped() {
        let s = "a\u{7f}b\u{80}\u{9b}31m\u{9d}\u{9f}\u{a0}c";
        let mut w = Vec::new();
        put_str(&mut w, s);
        let text = String::from_utf8_lossy(&w).into_owned();
        assert_eq!(text, "\"a\\u007fb\\u0080\\u009b31m\\u009d\\u009f\u{a0}c\"");
        assert_eq!(
            serde_json::from_str::<String>(&text).ok().as_deref(),
            Some(s)
        );
    }

    /// A bidi override, a zero-width space and a byte order mark are escaped (the same value
    /// once parsed); other text with the same lead bytes (`€`, `…`, `ｆ`, `؛`) is left as it is.
    #[test]
    fn invisible_characters_are_escaped_and_their_neighbours_not() {
        let s = "evil\u{202e}txt\u{200b}\u{feff}\u{61c}";
        let mut w = Vec::new();
        put_str(&mut w, s);
        let text = String::from_utf8_lossy(&w).into_owned();
        assert_eq!(text, "\"evil\\u202etxt\\u200b\\ufeff\\u061c\"");
        assert_eq!(
            serde_json::from_str::<String>(&text).ok().as_deref(),
            Some(s)
        );
        let plain = "\u{20ac}\u{2026}\u{ff46}\u{61b}";
        let mut w = Vec::new();
        put_str(&mut w, plain);
        assert_eq!(String::from_utf8_lossy(&w), format!("\"{plain}\""));
    }
}
