//! The values of a decoded message, as a filter reads them.
//!
//! This is the one place that knows how the decoded tree is laid out: fields are children by
//! name, array elements are children with an index, a known tagged field is a `tagged_field`
//! group whose third child is the value. Everything else goes through [`Fields`].

use super::fields::{Builtin, FieldPath, FieldValue, Fields, NamedField, PathIndex, PathSegment};
use crate::kafka::schema::{registry, Direction, FieldSpec, FieldType, Role};
use crate::kafka::stream::Record;
use crate::kafka::{Message, Node, NodeKind, Note, Shape, Value};

/// The fields of one message, without what only a capture knows (stream, addresses, latency).
#[derive(Debug, Clone, Copy)]
pub struct MessageFields<'a> {
    msg: &'a Message,
    /// The frame's bytes, from its size prefix: bytes values are spans of it.
    frame: &'a [u8],
}

impl<'a> MessageFields<'a> {
    pub fn new(msg: &'a Message, frame: &'a [u8]) -> MessageFields<'a> {
        MessageFields { msg, frame }
    }
}

/// The fields of a message found in a capture.
#[derive(Debug, Clone, Copy)]
pub struct RecordFields<'a> {
    rec: &'a Record<'a>,
    msg: MessageFields<'a>,
    /// Time of the input's first packet, for `time_relative`.
    origin: Option<i64>,
    /// For a request, the frame of its response, when known (a request held for its answer).
    response_frame: Option<u64>,
}

impl<'a> RecordFields<'a> {
    pub fn new(rec: &'a Record<'a>) -> RecordFields<'a> {
        RecordFields {
            rec,
            msg: MessageFields::new(&rec.msg, rec.bytes),
            origin: None,
            response_frame: None,
        }
    }

    /// With the time of the input's first packet: `time_relative` has a value.
    pub fn with_origin(self, first_packet_ts: Option<i64>) -> RecordFields<'a> {
        RecordFields {
            origin: first_packet_ts,
            ..self
        }
    }

    /// With the frame of the request's response, known when the request was held for it.
    pub fn with_response_frame(self, frame: Option<u64>) -> RecordFields<'a> {
        RecordFields {
            response_frame: frame,
            ..self
        }
    }
}

/// A request and its response read as one: a field's values are those of both halves (either
/// may be missing). This is how the exchange flags (`--api`, `--errors`, `--topic`, ...)
/// judge, and what [`super::from_flags`]'s expressions are meant for.
pub struct ExchangeFields<'a> {
    parts: Vec<&'a dyn Fields>,
}

impl<'a> ExchangeFields<'a> {
    pub fn new(request: Option<&'a dyn Fields>, response: Option<&'a dyn Fields>) -> Self {
        ExchangeFields {
            parts: request.into_iter().chain(response).collect(),
        }
    }
}

impl Fields for ExchangeFields<'_> {
    fn builtin(&self, field: Builtin) -> Vec<FieldValue> {
        self.parts.iter().flat_map(|p| p.builtin(field)).collect()
    }
    fn path(&self, path: &FieldPath) -> Vec<FieldValue> {
        self.parts.iter().flat_map(|p| p.path(path)).collect()
    }
    fn named(&self, field: &NamedField) -> Vec<FieldValue> {
        self.parts.iter().flat_map(|p| p.named(field)).collect()
    }
}

impl Fields for RecordFields<'_> {
    fn builtin(&self, field: Builtin) -> Vec<FieldValue> {
        let r = self.rec;
        match field {
            Builtin::Latency => r
                .latency_nanos()
                .map(FieldValue::Duration)
                .into_iter()
                .collect(),
            Builtin::Stream => vec![FieldValue::Int(i64::from(r.stream))],
            Builtin::Src => vec![FieldValue::Str(r.src.to_string())],
            Builtin::Dst => vec![FieldValue::Str(r.dst.to_string())],
            Builtin::Port => vec![
                FieldValue::Int(i64::from(r.src.port())),
                FieldValue::Int(i64::from(r.dst.port())),
            ],
            Builtin::SrcIp => vec![FieldValue::Str(r.src.ip().to_string())],
            Builtin::DstIp => vec![FieldValue::Str(r.dst.ip().to_string())],
            Builtin::SrcPort => vec![FieldValue::Int(i64::from(r.src.port()))],
            Builtin::DstPort => vec![FieldValue::Int(i64::from(r.dst.port()))],
            Builtin::Assumed => vec![FieldValue::Bool(
                r.assumed || r.msg.assumed_version.is_some(),
            )],
            Builtin::Frame => vec![FieldValue::Int(r.frame as i64)],
            Builtin::Time => vec![FieldValue::Time(r.ts_nanos)],
            Builtin::TimeRelative => self
                .origin
                .map(|o| FieldValue::Duration(r.ts_nanos - o))
                .into_iter()
                .collect(),
            Builtin::RequestFrame => r
                .request
                .map(|q| FieldValue::Int(q.frame as i64))
                .into_iter()
                .collect(),
            Builtin::ResponseFrame => self
                .response_frame
                .map(|f| FieldValue::Int(f as i64))
                .into_iter()
                .collect(),
            other => self.msg.builtin(other),
        }
    }
    fn path(&self, path: &FieldPath) -> Vec<FieldValue> {
        self.msg.path(path)
    }
    fn named(&self, field: &NamedField) -> Vec<FieldValue> {
        self.msg.named(field)
    }
}

impl Fields for MessageFields<'_> {
    fn builtin(&self, field: Builtin) -> Vec<FieldValue> {
        let m = self.msg;
        let int = |v: Option<i64>| v.map(FieldValue::Int).into_iter().collect();
        match field {
            Builtin::Api => int(m.api_key.map(i64::from)),
            Builtin::Version => int(m.api_version.map(i64::from)),
            Builtin::Corr => int(m.correlation_id.map(i64::from)),
            Builtin::Request => vec![FieldValue::Bool(m.direction == Direction::Request)],
            Builtin::Response => vec![FieldValue::Bool(m.direction == Direction::Response)],
            // A client_id carried forward by the connection (header v3) is the request's, as
            // the summary line shows it.
            Builtin::ClientId => match (&m.client_id, &m.carried_client_id) {
                (Some(Some(c)), _) | (Some(None), Some(c)) => vec![FieldValue::Str(c.clone())],
                (Some(None), None) => vec![FieldValue::Null],
                (None, _) => Vec::new(),
            },
            Builtin::Error => m
                .errors
                .iter()
                .map(|e| FieldValue::Int(i64::from(e.code)))
                .collect(),
            Builtin::Topic => self.spec_walk(&mut topic_value),
            Builtin::Partition => self.spec_walk(&mut partition_value),
            Builtin::Size => vec![FieldValue::Int(self.frame.len() as i64)],
            Builtin::Malformed => vec![FieldValue::Bool(m.is_malformed())],
            Builtin::Assumed => vec![FieldValue::Bool(m.assumed_version.is_some())],
            // Only a capture knows these.
            Builtin::Latency
            | Builtin::Stream
            | Builtin::Src
            | Builtin::Dst
            | Builtin::Port
            | Builtin::Frame
            | Builtin::Time
            | Builtin::TimeRelative
            | Builtin::RequestFrame
            | Builtin::ResponseFrame
            | Builtin::SrcIp
            | Builtin::DstIp
            | Builtin::SrcPort
            | Builtin::DstPort => Vec::new(),
        }
    }

    fn path(&self, path: &FieldPath) -> Vec<FieldValue> {
        if self.msg.api_key != Some(path.api_key) {
            return Vec::new();
        }
        let Some(body) = self.msg.body() else {
            return Vec::new();
        };
        let mut nodes = vec![body];
        for seg in &path.segments {
            nodes = nodes.into_iter().flat_map(|n| step(n, seg)).collect();
        }
        nodes.into_iter().map(|n| value(n, self.frame)).collect()
    }

    fn named(&self, field: &NamedField) -> Vec<FieldValue> {
        if field.api.is_some_and(|k| self.msg.api_key != Some(k)) {
            return Vec::new();
        }
        let frame = self.frame;
        // An array's values are its elements (met one by one), not the array.
        self.spec_walk(&mut |n, f, elem| {
            let wanted =
                field.names.contains(&f.name) && (elem || !matches!(f.ty, FieldType::Array(_)));
            wanted.then(|| value(n, frame))
        })
    }
}

impl MessageFields<'_> {
    /// Walks the body beside its spec, so that fields are known by what the schema says they
    /// are (a topic name is a field whose entity type is `topicName`, not any `Name`), and
    /// collects what `pick` makes of each.
    fn spec_walk(
        &self,
        pick: &mut dyn FnMut(&Node, &FieldSpec, bool) -> Option<FieldValue>,
    ) -> Vec<FieldValue> {
        let m = self.msg;
        let (Some(key), Some(version), Some(body)) = (m.api_key, m.api_version, m.body()) else {
            return Vec::new();
        };
        let Some(spec) = registry().get_for(key, m.direction, version) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        walk(body, spec.fields, &mut |n, f, elem| {
            out.extend(pick(n, f, elem))
        });
        out
    }
}

/// The field children of a struct node: wire details (lengths, tag counts, raw bytes, the
/// error marker) left out, a known tagged field unwrapped to its value.
fn fields_of(n: &Node) -> impl Iterator<Item = &Node> {
    n.children.iter().filter_map(|c| {
        if c.index.is_some()
            || matches!(
                c.kind,
                NodeKind::Length | NodeKind::TagCount | NodeKind::Raw | NodeKind::Error
            )
        {
            return None;
        }
        if c.shape == Shape::TaggedField {
            return c.tagged_value().filter(|v| v.kind != NodeKind::Raw);
        }
        Some(c)
    })
}

/// The elements of an array node (those kept: past `--max-elements` they are not nodes).
fn elements(n: &Node) -> impl Iterator<Item = &Node> {
    n.children.iter().filter(|c| c.index.is_some())
}

/// One path segment from a node: the named field, through its array if it is one.
fn step<'n>(n: &'n Node, seg: &PathSegment) -> Vec<&'n Node> {
    let mut out = Vec::new();
    for c in fields_of(n).filter(|c| c.name == seg.name) {
        match (&c.value, seg.index) {
            (Value::Array(_), None | Some(PathIndex::Any)) => out.extend(elements(c)),
            (Value::Array(_), Some(PathIndex::At(i))) => {
                out.extend(elements(c).filter(|e| e.index == Some(i)))
            }
            // A null array, or a field that is no array in this version: no element.
            (_, Some(_)) => {}
            (_, None) => out.push(c),
        }
    }
    out
}

fn value(n: &Node, frame: &[u8]) -> FieldValue {
    let span = |off: usize, len: usize| {
        frame
            .get(off..off.saturating_add(len))
            .unwrap_or_default()
            .to_vec()
    };
    match &n.value {
        Value::Int(i) => FieldValue::Int(*i),
        Value::Float(f) => FieldValue::Float(*f),
        Value::Bool(b) => FieldValue::Bool(*b),
        Value::Str(Some(s)) => FieldValue::Str(s.clone()),
        Value::Uuid(u) => FieldValue::Uuid(*u),
        Value::Bytes(Some((off, len))) => FieldValue::Bytes(span(*off, *len)),
        Value::Blob(b) if n.kind != NodeKind::Group => FieldValue::Bytes(b.clone()),
        Value::Str(None) | Value::Bytes(None) | Value::Null => FieldValue::Null,
        // Bytes shown as their parts (a SASL message): the bytes after the length prefix.
        Value::Text(_) if n.shape == Shape::ByteParts && n.source == 0 => {
            let start = n
                .children
                .iter()
                .find(|c| c.kind == NodeKind::Length)
                .map_or(n.offset, Node::end);
            FieldValue::Bytes(span(start, n.end().saturating_sub(start)))
        }
        // Structs, records and other groups: there, without a value of their own.
        Value::None
        | Value::Struct
        | Value::Array(_)
        | Value::Text(_)
        | Value::Tagged { .. }
        | Value::Records(_)
        | Value::Blob(_) => FieldValue::Struct,
    }
}

/// Calls `f` for every field node with its spec (and for every element of an array of
/// scalars, with `true`), struct by struct. Records are not descended into: no spec covers
/// them.
fn walk<'n>(
    n: &'n Node,
    specs: &'static [FieldSpec],
    f: &mut dyn FnMut(&'n Node, &'static FieldSpec, bool),
) {
    for c in fields_of(n) {
        let Some(spec) = specs.iter().find(|s| s.name == c.name) else {
            continue;
        };
        f(c, spec, false);
        match c.value {
            Value::Array(_) => {
                for e in elements(c) {
                    if e.value == Value::Struct {
                        walk(e, spec.fields, f);
                    } else {
                        f(e, spec, true);
                    }
                }
            }
            Value::Struct => walk(c, spec.fields, f),
            _ => {}
        }
    }
}

/// The topic name an earlier message gave a topic id. (The one read of how the tree marks
/// it: when that changes, only this changes.)
fn learnt_topic_name(n: &Node) -> Option<&str> {
    match &n.note {
        Note::TopicName(name) => Some(name),
        _ => None,
    }
}

/// Topic names (fields of entity type `topicName`; an empty name is a topic given by id),
/// and topic ids: by their learnt name when there is one, the all-zero id (none) left out.
fn topic_value(n: &Node, f: &FieldSpec, _elem: bool) -> Option<FieldValue> {
    match &n.value {
        Value::Str(Some(s)) if f.entity_type == Some("topicName") && !s.is_empty() => {
            Some(FieldValue::Str(s.clone()))
        }
        Value::Uuid(u) if f.role == Role::TopicId && *u != [0; 16] => {
            Some(match learnt_topic_name(n) {
                Some(name) => FieldValue::Str(name.to_string()),
                None => FieldValue::Uuid(*u),
            })
        }
        _ => None,
    }
}

/// Partition numbers: int32 fields `PartitionIndex`, `Partition`, `PartitionId`, `Index`
/// (Produce's), and the elements of int32 arrays `Partitions`, `PartitionIndexes`.
fn partition_value(n: &Node, f: &FieldSpec, elem: bool) -> Option<FieldValue> {
    let Value::Int(i) = n.value else { return None };
    let scalar = !elem && f.role == Role::Partition;
    let listed = elem && f.role == Role::PartitionList;
    (scalar || listed).then_some(FieldValue::Int(i))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::filter::Filter;
    use crate::kafka::example;

    /// The smallest instance of a message, decoded (`kdissect example`).
    fn sample(api: i16, dir: Direction, version: i16) -> (Message, Vec<u8>) {
        let spec = registry().get_for(api, dir, version).unwrap();
        let frame = example::frame(spec, version);
        let msg = match dir {
            Direction::Request => crate::kafka::decode_request(&frame),
            Direction::Response => crate::kafka::decode_response(&frame, api, version),
        };
        (msg, frame)
    }

    fn t(expr: &str, msg: &Message, frame: &[u8]) -> bool {
        Filter::compile(expr)
            .unwrap()
            .matches(&MessageFields::new(msg, frame))
    }

    #[test]
    fn message_fields_of_an_example_metadata_response() {
        let (m, f) = sample(3, Direction::Response, 12);
        assert!(t(
            "api == Metadata && version == 12 && response && !request",
            &m,
            &f
        ));
        assert!(t("Metadata.Topics[*].Partitions[*].ErrorCode == 0", &m, &f));
        assert!(t("Metadata.Topics[0].IsInternal == false", &m, &f));
        assert!(!t("Metadata.Topics[1].IsInternal == false", &m, &f));
        assert!(t(
            "partition == 0 && size > 20 && !malformed && !assumed",
            &m,
            &f
        ));
        assert!(!t("latency || stream || src || dst || port", &m, &f));
        assert!(!t("Produce", &m, &f) && t("Metadata", &m, &f));
    }
}
