//! What a filter can name: the built-in fields and paths into the message schema, the values
//! a message gives for them, and the checks a path passes before it is accepted.

use super::parser::FieldName;
use super::suggest::{did_you_mean, nearest};
use super::FilterError;
use crate::kafka::meaning::facts::FactField;
use crate::kafka::names::API_NAMES;
use crate::kafka::schema::{registry, Direction, FieldSpec, FieldType, MessageSpec, Role};
use std::fmt;

/// The built-in fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// API key (compared by name or number).
    Api,
    /// API version.
    Version,
    Request,
    Response,
    /// Correlation id.
    Corr,
    /// The request header's client id (requests only).
    ClientId,
    /// A response's time after its request.
    Latency,
    /// Every non-zero error code anywhere in the body.
    Error,
    /// Topic names, and topic ids that have no name.
    Topic,
    /// Partition numbers.
    Partition,
    /// TCP stream number.
    Stream,
    /// `ip:port` of the sender.
    Src,
    /// `ip:port` of the receiver.
    Dst,
    /// Either side's port.
    Port,
    /// Bytes of the frame with its size prefix.
    Size,
    /// Damaged bytes.
    Malformed,
    /// Read with an assumed API (a response without its request) or layout (a version newer
    /// than the tables).
    Assumed,
    /// Number of the packet that completed the message (as tshark numbers frames, from 1).
    Frame,
    /// Capture time of that packet.
    Time,
    /// Time of that packet since the first packet of its input.
    TimeRelative,
    /// For a response, the frame of its request.
    RequestFrame,
    /// For a request, the frame of its response (known when the request is held for it).
    ResponseFrame,
    /// The sender's address, without the port.
    SrcIp,
    /// The receiver's address, without the port.
    DstIp,
    SrcPort,
    DstPort,
}

impl Builtin {
    pub const ALL: &'static [Builtin] = &[
        Builtin::Api,
        Builtin::Version,
        Builtin::Request,
        Builtin::Response,
        Builtin::Corr,
        Builtin::ClientId,
        Builtin::Latency,
        Builtin::Error,
        Builtin::Topic,
        Builtin::Partition,
        Builtin::Stream,
        Builtin::Src,
        Builtin::Dst,
        Builtin::Port,
        Builtin::Size,
        Builtin::Malformed,
        Builtin::Assumed,
        Builtin::Frame,
        Builtin::Time,
        Builtin::TimeRelative,
        Builtin::RequestFrame,
        Builtin::ResponseFrame,
        Builtin::SrcIp,
        Builtin::DstIp,
        Builtin::SrcPort,
        Builtin::DstPort,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Builtin::Api => "api",
            Builtin::Version => "version",
            Builtin::Request => "request",
            Builtin::Response => "response",
            Builtin::Corr => "corr",
            Builtin::ClientId => "client_id",
            Builtin::Latency => "latency",
            Builtin::Error => "error",
            Builtin::Topic => "topic",
            Builtin::Partition => "partition",
            Builtin::Stream => "stream",
            Builtin::Src => "src",
            Builtin::Dst => "dst",
            Builtin::Port => "port",
            Builtin::Size => "size",
            Builtin::Malformed => "malformed",
            Builtin::Assumed => "assumed",
            Builtin::Frame => "frame",
            Builtin::Time => "time",
            Builtin::TimeRelative => "time_relative",
            Builtin::RequestFrame => "request_frame",
            Builtin::ResponseFrame => "response_frame",
            Builtin::SrcIp => "src_ip",
            Builtin::DstIp => "dst_ip",
            Builtin::SrcPort => "src_port",
            Builtin::DstPort => "dst_port",
        }
    }

    /// What it holds, in a line: `kdissect help filters` and the manual list it.
    pub fn about(self) -> &'static str {
        match self {
            Builtin::Api => "the API key; compare with a name or a number; `contains` and `matches` test the API's name",
            Builtin::Version => "the API version",
            Builtin::Request => "the message is a request",
            Builtin::Response => "the message is a response",
            Builtin::Corr => "the correlation id",
            Builtin::ClientId => "the request header's client id (requests only; a null one is null; header v3's null after a connection's first request is the id carried from it)",
            Builtin::Latency => "a response's time after its request (from the packet that completed the request)",
            Builtin::Error => "every non-zero error code in the message, at any depth; names or numbers",
            Builtin::Topic => "every topic the message names: names, and ids (by the name a Metadata response gave them, else as ids)",
            Builtin::Partition => "every partition number the message names",
            Builtin::Stream => "the TCP stream number (as tshark's tcp.stream)",
            Builtin::Src => "the sender, `ip:port`",
            Builtin::Dst => "the receiver, `ip:port`",
            Builtin::Port => "both ports: `port == 9092` holds either way",
            Builtin::Size => "bytes of the frame with its 4-byte size prefix",
            Builtin::Malformed => "the message has damaged bytes",
            Builtin::Assumed => "read with an assumed API (no request captured) or an assumed layout (a version newer than the tables)",
            Builtin::Frame => "the number of the packet that completed the message, from 1 as tshark counts",
            Builtin::Time => "the capture time of that packet: a date-time (`\"2026-11-30T12:00:00Z\"`, local time without a zone) or seconds since 1970",
            Builtin::TimeRelative => "that time since the first packet of the input: seconds (`5`, `2.5`) or a duration (`500ms`)",
            Builtin::RequestFrame => "a response's request: the frame that completed it (responses whose request was captured)",
            Builtin::ResponseFrame => "a request's response: the frame that completed it (requests answered in the capture)",
            Builtin::SrcIp => "the sender's address: `127.0.0.1`, `::1`",
            Builtin::DstIp => "the receiver's address",
            Builtin::SrcPort => "the sender's port",
            Builtin::DstPort => "the receiver's port",
        }
    }

    pub fn from_name(s: &str) -> Option<Builtin> {
        Builtin::ALL.iter().copied().find(|b| b.name() == s)
    }

    /// What its values are, for reading the values compared with it.
    pub(crate) fn kind(self) -> Kind {
        match self {
            Builtin::Api => Kind::Api,
            Builtin::Error => Kind::Error,
            Builtin::Request | Builtin::Response | Builtin::Malformed | Builtin::Assumed => {
                Kind::Bool
            }
            Builtin::ClientId | Builtin::Src | Builtin::Dst | Builtin::SrcIp | Builtin::DstIp => {
                Kind::Str
            }
            Builtin::Latency => Kind::Duration,
            Builtin::Time => Kind::Time,
            Builtin::TimeRelative => Kind::Offset,
            Builtin::Topic => Kind::Topic,
            Builtin::Version
            | Builtin::Corr
            | Builtin::Partition
            | Builtin::Stream
            | Builtin::Port
            | Builtin::Size
            | Builtin::Frame
            | Builtin::RequestFrame
            | Builtin::ResponseFrame
            | Builtin::SrcPort
            | Builtin::DstPort => Kind::Int,
        }
    }
}

impl fmt::Display for Builtin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One value of a field in a message.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    Bytes(Vec<u8>),
    Uuid([u8; 16]),
    /// Nanoseconds.
    Duration(i64),
    /// A capture time: nanoseconds since 1970, UTC.
    Time(i64),
    /// A struct, an array element that is a struct, a records field: there, without a value
    /// of its own.
    Struct,
    /// A null string, array, struct or bytes.
    Null,
}

impl FieldValue {
    /// What a bare field tests: a boolean's value, a number other than zero, anything else
    /// that is there and not null.
    pub fn truthy(&self) -> bool {
        match self {
            FieldValue::Bool(b) => *b,
            FieldValue::Int(i) | FieldValue::Duration(i) => *i != 0,
            FieldValue::Time(_) => true,
            FieldValue::Float(f) => *f != 0.0,
            FieldValue::Null => false,
            FieldValue::Str(_)
            | FieldValue::Bytes(_)
            | FieldValue::Uuid(_)
            | FieldValue::Struct => true,
        }
    }
}

/// Where a filter reads a message. A field may have several values (a path through arrays,
/// the topics of a message) or none (a field of another API, `latency` of a request).
pub trait Fields {
    fn builtin(&self, field: Builtin) -> Vec<FieldValue>;
    fn path(&self, path: &FieldPath) -> Vec<FieldValue>;
    /// Every value of the schema fields of these names, at any depth of the body (a
    /// Wireshark name such as `kafka.producer_id`); none unless the message is decoded.
    fn named(&self, _field: &NamedField) -> Vec<FieldValue> {
        Vec::new()
    }
}

/// Schema fields known by name wherever they are: `ProducerId` in any API, or in one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamedField {
    pub names: &'static [&'static str],
    /// Only in this API's messages.
    pub api: Option<i16>,
}

/// A checked path into a message body: `Metadata.Topics[*].Partitions[0].ErrorCode`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath {
    pub api_key: i16,
    /// Field names below the body, in the request or the response. Empty: the path names
    /// only the API, and is there in every message of that API.
    pub segments: Vec<PathSegment>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathSegment {
    pub name: String,
    /// `[*]` or `[N]`; `None` for a field written without brackets (an array then means any
    /// element, as `[*]` does).
    pub index: Option<PathIndex>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathIndex {
    Any,
    At(u32),
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::kafka::message::api_display_name(self.api_key))?;
        for s in &self.segments {
            write!(f, ".{}", s.name)?;
            match s.index {
                Some(PathIndex::Any) => f.write_str("[*]")?,
                Some(PathIndex::At(n)) => write!(f, "[{n}]")?,
                None => {}
            }
        }
        Ok(())
    }
}

/// The type of a field's values, as far as reading a literal goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Int,
    Float,
    Bool,
    Str,
    Bytes,
    Uuid,
    Duration,
    /// An absolute time: a date-time, or seconds since 1970.
    Time,
    /// A time since the first packet: seconds, or a duration with its unit.
    Offset,
    /// An API key: a number, or an API's name.
    Api,
    /// An error code: a number, or an error's name.
    Error,
    /// A topic name, or a topic id.
    Topic,
    /// A struct or records: only tested bare.
    Struct,
    /// The protocol itself (`kafka`): every message has it; only tested bare.
    Protocol,
}

impl Kind {
    /// The type's name in the help's table of fields.
    pub(crate) fn short(self) -> &'static str {
        match self {
            Kind::Int => "integer",
            Kind::Float => "number",
            Kind::Bool => "boolean",
            Kind::Str => "string",
            Kind::Bytes => "bytes",
            Kind::Uuid => "UUID",
            Kind::Duration => "duration",
            Kind::Time => "time",
            Kind::Offset => "seconds",
            Kind::Api => "API",
            Kind::Error => "error code",
            Kind::Topic => "topic",
            Kind::Struct => "struct",
            Kind::Protocol => "protocol",
        }
    }

    pub(crate) fn describe(self) -> &'static str {
        match self {
            Kind::Int => "a number",
            Kind::Float => "a number",
            Kind::Bool => "a boolean",
            Kind::Str => "a string",
            Kind::Bytes => "bytes",
            Kind::Uuid => "a UUID",
            Kind::Duration => "a duration",
            Kind::Time => "a time",
            Kind::Offset => "a time since the first packet",
            Kind::Api => "an API",
            Kind::Error => "an error code",
            Kind::Topic => "a topic",
            Kind::Struct => "a struct",
            Kind::Protocol => "the protocol",
        }
    }
}

/// A field as compiled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FieldRef {
    Builtin(Builtin),
    Path(FieldPath),
    /// Schema fields by name, anywhere in the body.
    Named(NamedField),
    /// A field's values in messages of one direction only (`kafka.request_key`).
    Only(Direction, Box<FieldRef>),
    /// The protocol (`kafka`, as tshark's first filter): there in every message.
    Protocol,
}

impl FieldRef {
    /// The field's values in a message.
    pub(crate) fn values(&self, f: &dyn Fields) -> Vec<FieldValue> {
        match self {
            FieldRef::Builtin(b) => f.builtin(*b),
            FieldRef::Path(p) => f.path(p),
            FieldRef::Named(n) => f.named(n),
            FieldRef::Only(dir, inner) => {
                let want = FieldValue::Bool(*dir == Direction::Request);
                if f.builtin(Builtin::Request) == [want] {
                    inner.values(f)
                } else {
                    Vec::new()
                }
            }
            FieldRef::Protocol => vec![FieldValue::Struct],
        }
    }

    /// Whether it reads below the levels a summary keeps.
    pub(crate) fn needs_tree(&self) -> bool {
        match self {
            FieldRef::Path(_)
            | FieldRef::Named(_)
            | FieldRef::Builtin(Builtin::Topic)
            | FieldRef::Builtin(Builtin::Partition) => true,
            FieldRef::Builtin(_) | FieldRef::Protocol => false,
            FieldRef::Only(_, inner) => inner.needs_tree(),
        }
    }

    /// Whether it names fields of the schema (a path, a field name), which may be any field
    /// of the tree; the built-ins read fields the facts' nodes hold.
    pub(crate) fn reads_schema(&self) -> bool {
        match self {
            FieldRef::Path(_) | FieldRef::Named(_) => true,
            FieldRef::Builtin(_) | FieldRef::Protocol => false,
            FieldRef::Only(_, inner) => inner.reads_schema(),
        }
    }

    /// Whether it reads this built-in field.
    pub(crate) fn reads(&self, b: Builtin) -> bool {
        match self {
            FieldRef::Builtin(x) => *x == b,
            FieldRef::Only(_, inner) => inner.reads(b),
            FieldRef::Path(_) | FieldRef::Named(_) | FieldRef::Protocol => false,
        }
    }
}

impl fmt::Display for FieldRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldRef::Builtin(b) => write!(f, "{b}"),
            FieldRef::Path(p) => write!(f, "{p}"),
            FieldRef::Named(n) => f.write_str(n.names.join("|").as_str()),
            FieldRef::Only(_, inner) => write!(f, "{inner}"),
            FieldRef::Protocol => f.write_str("kafka"),
        }
    }
}

/// Looks a field up: a built-in name, an API name alone, or a path checked against the
/// schema. Returns the field and the kinds its values may have.
pub(crate) fn resolve(name: &FieldName) -> Result<(FieldRef, Vec<Kind>), FilterError> {
    let text = name.text.as_str();
    if let Some(b) = Builtin::from_name(text) {
        return Ok((FieldRef::Builtin(b), vec![b.kind()]));
    }
    if let Some(a) = super::alias::find(text) {
        return super::alias::resolve(a, name);
    }
    if let Some(hint) = super::alias::near_miss(text) {
        return Err(FilterError::new(name.column, hint));
    }
    if !text.contains(['.', '[']) {
        if let Some(key) = api_key_exact(text) {
            let path = FieldPath {
                api_key: key,
                segments: Vec::new(),
            };
            return Ok((FieldRef::Path(path), vec![Kind::Struct]));
        }
        let candidates = Builtin::ALL
            .iter()
            .map(|b| b.name())
            .chain(API_NAMES.iter().map(|(_, n)| *n));
        let hint = did_you_mean(&nearest(text, candidates));
        return Err(FilterError::new(
            name.column,
            format!("unknown field `{text}`{hint}"),
        ));
    }
    path(name)
}

fn api_key_exact(name: &str) -> Option<i16> {
    API_NAMES.iter().find(|(_, n)| *n == name).map(|(k, _)| *k)
}

/// Every spec of an API: request and response, current and legacy.
pub(crate) fn api_specs(key: i16) -> Vec<&'static MessageSpec> {
    let mut out: Vec<&'static MessageSpec> = Vec::new();
    for dir in [Direction::Request, Direction::Response] {
        let by_version = registry()
            .versions(key, dir)
            .into_iter()
            .filter_map(|v| registry().get_for(key, dir, v));
        for s in by_version.chain(registry().get(key, dir)) {
            if !out.iter().any(|o| std::ptr::eq(*o, s)) {
                out.push(s);
            }
        }
    }
    out
}

/// A path's text cut at its dots, each piece with its 0-based character offset.
fn pieces(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut at = 0;
    for p in text.split('.') {
        out.push((at, p));
        at += p.chars().count() + 1;
    }
    out
}

pub(crate) fn path(name: &FieldName) -> Result<(FieldRef, Vec<Kind>), FilterError> {
    let parts = pieces(&name.text);
    let col = |off: usize| name.column + off;
    let mut it = parts.into_iter();
    let (_, api) = it.next().unwrap_or((0, ""));
    let Some(key) = api_key_exact(api) else {
        let hint = did_you_mean(&nearest(api, API_NAMES.iter().map(|(_, n)| *n)));
        let what = if api.contains('[') {
            format!("`{api}`: a path starts with an API name, without an index")
        } else {
            format!("unknown API `{api}` at the start of the path{hint}")
        };
        return Err(FilterError::new(name.column, what));
    };
    let mut level: Vec<&'static FieldSpec> = api_specs(key)
        .into_iter()
        .flat_map(|s| s.fields.iter())
        .collect();
    let mut segments = Vec::new();
    let mut shown = api.to_string();
    let mut last: Vec<&'static FieldSpec> = Vec::new();
    for (off, piece) in it {
        let seg = segment(piece).map_err(|m| FilterError::new(col(off), m))?;
        let found: Vec<&'static FieldSpec> = level
            .iter()
            .copied()
            .filter(|f| f.name == seg.name)
            .collect();
        if found.is_empty() {
            return Err(FilterError::new(
                col(off),
                unknown(&seg.name, &shown, &level),
            ));
        }
        if seg.index.is_some() && !found.iter().any(|f| matches!(f.ty, FieldType::Array(_))) {
            return Err(FilterError::new(
                col(off),
                format!("`{shown}.{}` is not an array: it takes no index", seg.name),
            ));
        }
        shown = format!("{shown}.{piece}");
        level = found.iter().flat_map(|f| f.fields.iter()).collect();
        last = found;
        segments.push(seg);
    }
    let mut kinds: Vec<Kind> = Vec::new();
    for f in &last {
        let k = kind_of(f);
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    Ok((
        FieldRef::Path(FieldPath {
            api_key: key,
            segments,
        }),
        kinds,
    ))
}

/// The message for a name not found at a level: the nearest names, or, when none is near,
/// every name there (when they are few enough to read).
fn unknown(wrong: &str, at: &str, level: &[&'static FieldSpec]) -> String {
    let mut names: Vec<&str> = level.iter().map(|f| f.name).collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        return format!("`{at}` has no fields: `{wrong}` cannot follow it");
    }
    let near = nearest(wrong, names.iter().copied());
    if !near.is_empty() {
        return format!("unknown field `{wrong}` in `{at}`{}", did_you_mean(&near));
    }
    if names.len() <= 30 {
        return format!(
            "unknown field `{wrong}` in `{at}`, which has: {}",
            names.join(", ")
        );
    }
    format!("unknown field `{wrong}` in `{at}`")
}

/// `Name`, `Name[*]` or `Name[3]`.
fn segment(piece: &str) -> Result<PathSegment, String> {
    let (name, index) = match piece.split_once('[') {
        None => (piece, None),
        Some((n, rest)) => {
            let inner = rest
                .strip_suffix(']')
                .ok_or_else(|| format!("`{piece}`: an index is `[*]` or `[N]`, at the end"))?;
            let idx = match inner {
                "*" => PathIndex::Any,
                n => PathIndex::At(
                    n.parse()
                        .map_err(|_| format!("`{piece}`: an index is `[*]` or a number `[N]`"))?,
                ),
            };
            (n, Some(idx))
        }
    };
    let ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        return Err(format!("`{piece}` is not a field name"));
    }
    Ok(PathSegment {
        name: name.to_string(),
        index,
    })
}

pub(crate) fn kind_of(f: &FieldSpec) -> Kind {
    let ty = match &f.ty {
        FieldType::Array(inner) => *inner,
        t => t,
    };
    match ty {
        // Roles and fact fields are decided from the names when the specs load.
        FieldType::Int16 if f.role == Role::ErrorCode => Kind::Error,
        FieldType::Int16 if f.fact == FactField::ApiKey => Kind::Api,
        FieldType::Int8
        | FieldType::Int16
        | FieldType::Int32
        | FieldType::Int64
        | FieldType::Uint16
        | FieldType::Uint32 => Kind::Int,
        FieldType::Float64 => Kind::Float,
        FieldType::Bool => Kind::Bool,
        FieldType::String => Kind::Str,
        FieldType::Bytes => Kind::Bytes,
        FieldType::Uuid => Kind::Uuid,
        FieldType::Records | FieldType::Struct(_) | FieldType::Array(_) => Kind::Struct,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn res(s: &str) -> Result<(FieldRef, Vec<Kind>), FilterError> {
        resolve(&FieldName {
            text: s.into(),
            column: 3,
        })
    }

    #[test]
    fn builtins_and_apis() {
        for b in Builtin::ALL {
            assert_eq!(res(b.name()).unwrap().0, FieldRef::Builtin(*b));
        }
        let (f, k) = res("Metadata").unwrap();
        assert_eq!(f.to_string(), "Metadata");
        assert_eq!(k, vec![Kind::Struct]);
    }

    #[test]
    fn unknown_builtin_suggests() {
        let e = res("laytency").unwrap_err();
        assert_eq!(
            e.message,
            "unknown field `laytency`; did you mean `latency`?"
        );
        assert_eq!(e.column, 3);
        assert!(res("Metdata")
            .unwrap_err()
            .message
            .contains("did you mean `Metadata`"));
        assert_eq!(
            res("zzzzzzzz").unwrap_err().message,
            "unknown field `zzzzzzzz`"
        );
    }

    #[test]
    fn paths_are_checked_against_the_schema() {
        let (f, k) = res("Metadata.Topics[*].Partitions[*].ErrorCode").unwrap();
        assert_eq!(f.to_string(), "Metadata.Topics[*].Partitions[*].ErrorCode");
        assert_eq!(k, vec![Kind::Error]);
        assert_eq!(res("Produce.Acks").unwrap().1, vec![Kind::Int]);
        assert_eq!(res("Produce.TopicData[*].Name").unwrap().1, vec![Kind::Str]);
        assert_eq!(
            res("ApiVersions.ApiKeys[*].MaxVersion").unwrap().1,
            vec![Kind::Int]
        );
        assert_eq!(
            res("ApiVersions.ApiKeys[3].ApiKey").unwrap().1,
            vec![Kind::Api]
        );
        assert_eq!(
            res("Metadata.Topics[0].TopicId").unwrap().1,
            vec![Kind::Uuid]
        );
        assert_eq!(res("Metadata.Topics").unwrap().1, vec![Kind::Struct]);
        assert_eq!(res("Metadata.Topics.Name").unwrap().1, vec![Kind::Str]);
        // Tagged fields are fields too; so are fields only a legacy version has.
        assert!(res("ApiVersions.SupportedFeatures[*].Name").is_ok());
        assert!(res("Produce.TopicData[*].PartitionData[*].Records").is_ok());
    }

    #[test]
    fn bad_paths_say_where_and_what_is_near() {
        let e = res("Metadata.Topcs[*].Name").unwrap_err();
        assert_eq!(e.column, 12);
        assert_eq!(
            e.message,
            "unknown field `Topcs` in `Metadata`; did you mean `Topics`?"
        );
        let e = res("Metadata.Topics[*].Partitions[*].ErorCode").unwrap_err();
        assert_eq!(e.column, 36);
        assert!(
            e.message
                .contains("in `Metadata.Topics[*].Partitions[*]`; did you mean `ErrorCode`?"),
            "{}",
            e.message
        );
        let e = res("Produce.Acks.X").unwrap_err();
        assert!(
            e.message.contains("`Produce.Acks` has no fields"),
            "{}",
            e.message
        );
        let e = res("Produce.Acks[0]").unwrap_err();
        assert!(e.message.contains("not an array"), "{}", e.message);
        let e = res("Metadata.Topics[x]").unwrap_err();
        assert!(e.message.contains("`[*]` or a number"), "{}", e.message);
        let e = res("Metadata.Topics[*").unwrap_err();
        assert!(e.message.contains("an index is"), "{}", e.message);
        let e = res("Metdata.Topics").unwrap_err();
        assert_eq!(
            e.message,
            "unknown API `Metdata` at the start of the path; did you mean `Metadata`?"
        );
        assert!(res("Metadata..Topics").is_err());
        assert!(res("Metadata[0].Topics").is_err());
        let e = res("DescribeCluster.Qqqqqqqqq").unwrap_err();
        assert!(e.message.contains("which has: "), "{}", e.message);
        assert!(e.message.contains("ClusterId"), "{}", e.message);
    }
}
