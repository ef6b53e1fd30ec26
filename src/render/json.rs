//! `--json`: one JSON object per Kafka message (NDJSON), keys documented in docs/json.md and
//! docs/kdissect-message.schema.json. The body is the decoded tree under the schema's field
//! names; `--json-spans` wraps every value with its byte offset and length.

use crate::kafka::{Direction, ErrorCode, Message, Node, NodeKind, Note, Region, Shape, Value};
use serde_json::{json, Map, Value as J};
use std::io::Write;

/// Where a message was found: capture metadata, or its place in hex input.
#[derive(Debug, Clone, Default)]
pub struct Meta {
    /// The input file, when more than one is read: frames and streams count per file.
    pub file: Option<String>,
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
    /// The frame was decrypted out of a TLS connection.
    pub tls: bool,
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

/// A record key, value or header value: a string when the bytes are text by the rule every
/// view applies (`value::as_text`: UTF-8 with no control character but tab and newline), else
/// `{"hex": "..."}`. Bytes that are not text are never a string.
fn put_payload(w: &mut Vec<u8>, b: &[u8]) {
    match super::value::as_text(b) {
        Some(s) => put_str(w, s),
        None => {
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
        Value::Bytes(Some((off, len))) if n.shape == Shape::VarBytes => {
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
        let _ = write!(w, ",\"offset\":{},\"length\":{}}}", n.offset, n.len);
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
    let mut first = true;
    let mut unknown: Vec<&Node> = Vec::new();
    let mut grouped: Vec<&str> = Vec::new();
    for c in &n.children {
        if is_wire_detail(c) {
            continue;
        }
        if c.shape == Shape::TaggedField {
            match c.children.get(2) {
                Some(inner) if inner.kind != NodeKind::Raw => {
                    put_key(w, &mut first, &c.name);
                    put_value(w, inner, frame, spans);
                    put_field_extras(w, &mut first, inner);
                }
                Some(_) => unknown.push(c),
                None => {}
            }
        } else if c.index.is_some() && c.kind == NodeKind::Group {
            if !grouped.contains(&c.name.as_ref()) {
                grouped.push(&c.name);
                put_repeated_groups(w, &mut first, n, &c.name, frame, spans);
            }
        } else {
            put_key(w, &mut first, &c.name);
            put_value(w, c, frame, spans);
            put_field_extras(w, &mut first, c);
        }
    }
    if !unknown.is_empty() {
        put_key(w, &mut first, "_unknown_tags");
        put_unknown_tags(w, &unknown, frame);
    }
    w.push(b'}');
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
    n: &Node,
    name: &str,
    frame: &[u8],
    spans: bool,
) {
    put_key(w, first, &format!("{name}s"));
    let same = n
        .children
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
        put_key(w, first, &format!("{}_omitted", c.name));
        put_int(w, total.saturating_sub(kept) as i64);
    }
    match (&c.value, &c.note) {
        (Value::Uuid(_), Note::TopicName(name)) => {
            put_key(w, first, &format!("{}_name", c.name));
            put_str(w, name);
        }
        (Value::Int(_), Note::Named(n)) => {
            put_key(w, first, &format!("{}_name", c.name));
            put_str(w, n);
        }
        (Value::Int(_), Note::Enum { name, .. }) => {
            put_key(w, first, &format!("{}_name", c.name));
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

/// The whole NDJSON object of a message, written to `w` (one line, no newline).
pub fn write_message(w: &mut Vec<u8>, msg: &Message, frame: &[u8], meta: &Meta, spans: bool) {
    // Keys in the order docs/json.md lists them (the map keeps insertion order).
    let mut o = Map::new();
    put_origin(&mut o, meta);
    if spans && meta.tls {
        // Offsets count in the decrypted frame, not in any packet's bytes.
        o.insert("spans_in".into(), J::String("decrypted TLS".into()));
    }
    put_api(&mut o, msg, frame.len());
    put_exchange(&mut o, msg, meta);
    put_embedded_api(&mut o, msg);
    // Placeholders keep the key order; header and body are written node by node below.
    o.insert("header".into(), J::Null);
    o.insert("body".into(), J::Null);
    o.insert("errors".into(), error_codes(msg));
    o.insert("malformed".into(), problems(msg));
    let header = msg.root.children.iter().find(|h| h.shape == Shape::Header);
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

/// Where the message was found: frame, input offset, time, stream, endpoints.
fn put_origin(o: &mut Map<String, J>, meta: &Meta) {
    if let Some(f) = &meta.file {
        o.insert("file".into(), J::String(f.clone()));
    }
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
    if meta.tls {
        o.insert("tls".into(), J::Bool(true));
    }
}

/// What the header says: direction, API, version (and the layout assumed for it), correlation
/// id, and the frame's size.
fn put_api(o: &mut Map<String, J>, msg: &Message, size: usize) {
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
    o.insert("size".into(), J::from(size));
}

/// The message's side of its exchange: a request's client_id, a response's request frame and
/// latency; and whether the API was assumed or the frame cut by a gap.
fn put_exchange(o: &mut Map<String, J>, msg: &Message, meta: &Meta) {
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
}

/// The request or response the message carries (an Envelope's): which API and version, its
/// correlation id, and a request's client_id.
fn put_embedded_api(o: &mut Map<String, J>, msg: &Message) {
    let Some(e) = &msg.embedded else { return };
    let mut m = Map::new();
    m.insert(
        "direction".into(),
        e.direction
            .map_or(J::Null, |d| J::String(d.as_str().into())),
    );
    m.insert("api_key".into(), e.api_key.map_or(J::Null, J::from));
    m.insert(
        "api_name".into(),
        e.api_key.map_or(J::Null, |k| {
            J::String(crate::kafka::message::api_display_name(k).into_owned())
        }),
    );
    m.insert("api_version".into(), e.api_version.map_or(J::Null, J::from));
    m.insert(
        "correlation_id".into(),
        e.correlation_id.map_or(J::Null, J::from),
    );
    if let Some(c) = &e.client_id {
        m.insert("client_id".into(), c.clone().map_or(J::Null, J::String));
    }
    o.insert("embedded".into(), J::Object(m));
}

/// Every non-zero error code of the body with its path and name.
fn error_codes(msg: &Message) -> J {
    msg.errors
        .iter()
        .map(|x| {
            let (path, code) = (x.path.to_string(), x.code);
            let e = ErrorCode(code);
            json!({"path": path, "code": code, "name": e.name(), "retriable": e.is_retriable()})
        })
        .collect()
}

/// The problems found while decoding, then where decoding stopped, if it did.
fn problems(msg: &Message) -> J {
    let mut malformed: Vec<J> = msg
        .diagnoses
        .iter()
        .map(|d| problem_json(d.offset, &d.to_string(), d.kind))
        .collect();
    if let Some(e) = &msg.error {
        let kind = e.kind.problem();
        malformed.push(problem_json(e.offset, &e.to_string(), kind));
    }
    J::Array(malformed)
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
            src: Some("10.0.0.1:40000".into()),
            dst: Some("10.0.0.2:9092".into()),
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
        let mut t = leaf(name, "tagged_field", NodeKind::Group, Value::None);
        t.shape = Shape::TaggedField;
        t.children = vec![
            leaf("tag", "uvarint", NodeKind::Field, Value::Int(tag)),
            leaf("size", "uvarint", NodeKind::Field, Value::Int(1)),
            data,
        ];
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
    fn times_are_rfc3339_with_nanoseconds() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000000000Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59.999999999Z");
        assert_eq!(
            rfc3339(951_782_400_000_000_000),
            "2000-02-29T00:00:00.000000000Z"
        );
    }
}
