//! The decoded tree: every node knows its byte span, its type, its value and what it means.

use crate::kafka::meaning::codes::{ApiKey, ErrorCode};
use std::borrow::Cow;

/// What part of a frame a byte belongs to; the byte layout colours bytes by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Region {
    Frame,
    RpcHeader,
    RequestBody,
    ResponseBody,
    TaggedFields,
    RecordBatch,
    Record,
    /// Bytes that could not be decoded.
    Unparsed,
}

impl Region {
    pub fn label(self) -> &'static str {
        match self {
            Region::Frame => "frame",
            Region::RpcHeader => "rpc header",
            Region::RequestBody => "request body",
            Region::ResponseBody => "response body",
            Region::TaggedFields => "tagged_fields",
            Region::RecordBatch => "RecordBatch",
            Region::Record => "Record",
            Region::Unparsed => "unparsed",
        }
    }
}

/// A decoded value, typed so that JSON output can keep the types.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A group that has no value of its own (`Frame`, a header, a message body).
    None,
    Int(i64),
    Float(f64),
    Bool(bool),
    /// A string; `None` is a null string.
    Str(Option<String>),
    /// Bytes, as a span of the frame; `None` is null.
    Bytes(Option<(usize, usize)>),
    Uuid([u8; 16]),
    /// A struct that is present.
    Struct,
    /// A nullable struct or array that is null.
    Null,
    /// An array with its element count.
    Array(usize),
    /// Free text: a diagnosis, a summary of what a group holds.
    Text(String),
    /// A tagged field's group: its tag and the size of its data.
    Tagged {
        tag: u32,
        size: usize,
    },
    /// A records field's batches, counted.
    Records(crate::kafka::meaning::facts::RecordSet),
    /// Bytes held by the node itself: a record's key or value inside decompressed data, or a
    /// whole decompressed buffer (on its `decompressed` group node).
    Blob(Vec<u8>),
}

/// How a length was encoded on the wire, shown after the value: kept as data so that decoding
/// does not format text for every string and array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Enc {
    #[default]
    None,
    /// `(compact, len+1=N)`
    CompactLen(u32),
    /// `(int16 len=N)`
    Int16Len(i16),
    /// `(int32 len=N)`
    Int32Len(i32),
    /// An array count: `(compact, n+1)`
    CompactCount,
    /// A records field's length: `(compact, len+1)`
    CompactLenPlusOne,
    /// A null compact array or bytes: `(compact, null)`
    CompactNull,
}

impl Enc {
    pub fn text(&self) -> Option<String> {
        Some(match self {
            Enc::None => return None,
            Enc::CompactLen(n) => format!("(compact, len+1={n})"),
            Enc::Int16Len(n) => format!("(int16 len={n})"),
            Enc::Int32Len(n) => format!("(int32 len={n})"),
            Enc::CompactCount => "(compact, n+1)".to_string(),
            Enc::CompactLenPlusOne => "(compact, len+1)".to_string(),
            Enc::CompactNull => "(compact, null)".to_string(),
        })
    }
}

/// What a value means beyond itself, kept as data so that every renderer (and filter) reads
/// the same facts and spells them its own way.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Note {
    #[default]
    None,
    /// An API key.
    Api(ApiKey),
    /// A non-zero error code.
    Error(ErrorCode),
    /// An authorized-operations bitfield (`i32::MIN`: not requested).
    AclOperations(i32),
    /// The name an earlier message gave this topic id.
    TopicName(String),
    /// A stored checksum and the one the bytes give: CRC-32C (record batches) or CRC-32
    /// (legacy messages).
    Crc {
        stored: u32,
        computed: u32,
        castagnoli: bool,
    },
    /// Record batch v2 attributes.
    BatchAttributes(i64),
    /// Legacy message attributes and the message's magic.
    MessageAttributes { attrs: i64, magic: i8 },
    /// Milliseconds since 1970.
    TimestampMs(i64),
    /// A record's offset: the batch's base offset plus its delta.
    Offset(i64),
    /// The name of what a number stands for, from the tables (a metadata record's type).
    Named(&'static str),
    /// A value of an enumeration, with its name (`None`: a value the enumeration lacks).
    Enum {
        enumeration: &'static crate::kafka::spec::names::Enum,
        name: Option<&'static str>,
    },
}

impl Note {
    /// The note for `value` of `enumeration`: its name, or for a value the enumeration lacks
    /// an unknown name (none at all for a plain value of a field whose enumeration lists only
    /// sentinels).
    pub fn of_enum(enumeration: &'static crate::kafka::spec::names::Enum, value: i64) -> Note {
        match enumeration.name_of(value) {
            None if enumeration.sentinels => Note::None,
            name => Note::Enum { enumeration, name },
        }
    }

    /// The CRC verdict, when the note is one.
    pub fn crc_valid(&self) -> Option<bool> {
        match self {
            Note::Crc {
                stored, computed, ..
            } => Some(stored == computed),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// A field of the schema, or a header field.
    Field,
    /// A grouping node (message, frame, header, body, array, struct, tagged field).
    Group,
    /// The length prefix of an array.
    Length,
    /// The tagged-field count of a struct.
    TagCount,
    /// Where decoding stopped, with the reason (zero bytes long).
    Error,
    /// Bytes shown raw: unknown tagged field data, unparsed remainder, trailing bytes.
    Raw,
}

#[derive(Debug, Clone)]
pub struct Node {
    pub name: Cow<'static, str>,
    /// Type as shown in the tree; empty for groups such as `Frame`.
    pub ty: Cow<'static, str>,
    pub value: Value,
    /// What the value means beyond itself (an error's name, an API's, a CRC verdict), as
    /// data: the renderers spell it out.
    pub note: Note,
    pub offset: usize,
    pub len: usize,
    pub desc: Desc,
    pub region: Region,
    pub kind: NodeKind,
    pub children: Vec<Node>,
    /// Length encoding shown after the value.
    pub enc: Enc,
    /// For an array element or repeated group, its index: shown as `Name[i]`.
    pub index: Option<u32>,
    /// Which bytes `offset` counts in: 0 is the frame; n > 0 the n-th decompressed buffer of
    /// the message (held by its `decompressed` group node).
    pub source: u16,
    /// The field of the spec tables the node decodes, for a field's own node.
    pub field: Option<crate::kafka::spec::schema::FieldId>,
    /// What the node is in the wire's structure, beyond its kind: readers test this rather
    /// than its type's name.
    pub shape: Shape,
}

/// What a node is, in words: a text of the spec tables or the decoder, or a count that the
/// renderers spell out, so that decoding formats no text for the lengths it meets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Desc {
    Text(Cow<'static, str>),
    /// An array's length: this many elements follow.
    Elements(usize),
    /// A records field's length: this many bytes of record batches follow.
    BatchBytes(usize),
}

impl Default for Desc {
    fn default() -> Desc {
        Desc::Text(Cow::Borrowed(""))
    }
}

impl Desc {
    /// No words at all: nothing is printed for the node.
    pub fn is_empty(&self) -> bool {
        matches!(self, Desc::Text(t) if t.is_empty())
    }
}

impl From<&'static str> for Desc {
    fn from(t: &'static str) -> Desc {
        Desc::Text(Cow::Borrowed(t))
    }
}

impl From<String> for Desc {
    fn from(t: String) -> Desc {
        Desc::Text(Cow::Owned(t))
    }
}

impl From<Cow<'static, str>> for Desc {
    fn from(t: Cow<'static, str>) -> Desc {
        Desc::Text(t)
    }
}

/// The part of the wire's structure a node stands for, where readers need to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Shape {
    #[default]
    Plain,
    /// A tagged field's group: its tag, its size (each `TagHead`), then its value.
    TaggedField,
    /// A tagged field's tag or size.
    TagHead,
    /// A nullable struct's presence byte (1 present, -1 null).
    PresenceByte,
    /// What a limit left out (array elements, tagged fields, batches, records): a raw span.
    Omitted,
    /// A records field's group, or bytes decompressed from a batch: a list of batches,
    /// records or legacy messages.
    Records,
    /// A varint-length-prefixed byte string (a record's key or value, a SASL token's part).
    VarBytes,
    /// The request or response header.
    Header,
    /// The message body (of the message, or of a message embedded in a bytes field).
    Body,
    /// A byte source of its own: what a compressed batch or message set held.
    Decompressed,
    /// A bytes field shown as its parts (a length prefix, then what the bytes hold: SASL
    /// steps, an embedded message, a legacy message's key or value).
    ByteParts,
}

/// Texts that name a version, made once for the versions Kafka has used (and some to spare)
/// instead of once per message: `message v3`, `message body, version 3`.
#[derive(Clone, Copy)]
pub(crate) enum VersionText {
    /// The root's type.
    Message,
    /// The body's description.
    Body,
}

/// Versions whose texts are made once; others are written when met.
const TEXT_VERSIONS: i16 = 64;

impl VersionText {
    fn write(self, v: i16) -> String {
        match self {
            VersionText::Message => format!("message v{v}"),
            VersionText::Body => format!("message body, version {v}"),
        }
    }

    pub(crate) fn of(self, v: i16) -> Cow<'static, str> {
        static TEXTS: std::sync::OnceLock<[Vec<String>; 2]> = std::sync::OnceLock::new();
        let texts = TEXTS.get_or_init(|| {
            [VersionText::Message, VersionText::Body]
                .map(|t| (0..TEXT_VERSIONS).map(|v| t.write(v)).collect())
        });
        let of_kind = texts.get(self as usize);
        match usize::try_from(v).ok().and_then(|i| of_kind?.get(i)) {
            Some(s) => Cow::Borrowed(s.as_str()),
            None => Cow::Owned(self.write(v)),
        }
    }
}

impl Node {
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        ty: impl Into<Cow<'static, str>>,
        offset: usize,
        region: Region,
        kind: NodeKind,
    ) -> Node {
        Node {
            name: name.into(),
            ty: ty.into(),
            value: Value::None,
            note: Note::None,
            offset,
            len: 0,
            desc: Desc::default(),
            region,
            kind,
            children: Vec::new(),
            enc: Enc::None,
            index: None,
            source: 0,
            field: None,
            shape: Shape::Plain,
        }
    }

    /// A tagged field's value: the child after its tag and size (none if the size cut it).
    pub fn tagged_value(&self) -> Option<&Node> {
        self.children.iter().find(|c| c.shape != Shape::TagHead)
    }

    /// The role of the node's field ([`Role::Other`](crate::kafka::spec::schema::Role) for a node that is
    /// not a field's).
    pub fn role(&self) -> crate::kafka::spec::schema::Role {
        self.field.map(|f| f.role()).unwrap_or_default()
    }

    /// The fact field its spec is, if the facts read it by itself.
    pub(crate) fn fact(&self) -> crate::kafka::meaning::facts::FactField {
        self.field.map(|f| f.spec().fact).unwrap_or_default()
    }

    /// The name as shown: `Topics`, or `MetadataRequestTopic[0]` for an element.
    pub fn display_name(&self) -> Cow<'_, str> {
        match self.index {
            Some(i) => Cow::Owned(format!("{}[{i}]", self.name)),
            None => Cow::Borrowed(&self.name),
        }
    }

    pub fn end(&self) -> usize {
        self.offset + self.len
    }

    /// Depth-first walk over every node.
    pub fn walk<'a>(&'a self, f: &mut impl FnMut(&'a Node, usize)) {
        fn go<'a>(n: &'a Node, depth: usize, f: &mut impl FnMut(&'a Node, usize)) {
            f(n, depth);
            for c in &n.children {
                go(c, depth + 1, f);
            }
        }
        go(self, 0, f);
    }

    /// Depth-first walk that may change nodes.
    pub fn walk_mut(&mut self, f: &mut impl FnMut(&mut Node)) {
        f(self);
        for c in self.children.iter_mut() {
            c.walk_mut(f);
        }
    }

    /// The leaves of the frame's bytes (nodes without children), in order. Nodes that count
    /// in a decompressed buffer are not among them.
    pub fn leaves(&self) -> Vec<&Node> {
        fn go<'a>(n: &'a Node, out: &mut Vec<&'a Node>) {
            if n.source != 0 {
                return;
            }
            if !n.children.iter().any(|c| c.source == 0) {
                out.push(n);
                return;
            }
            for c in &n.children {
                go(c, out);
            }
        }
        let mut out = Vec::new();
        go(self, &mut out);
        out
    }

    /// The leaves of one decompressed buffer (nodes of that source without children).
    pub fn source_leaves(&self, source: u16) -> Vec<&Node> {
        let mut out = Vec::new();
        self.walk(&mut |n, _| {
            if n.source == source && n.children.is_empty() {
                out.push(n);
            }
        });
        out
    }

    /// First child field with this name (elements, which carry an index, are not fields).
    pub fn child(&self, name: &str) -> Option<&Node> {
        self.children
            .iter()
            .find(|c| c.name == name && c.index.is_none())
    }

    /// Follows a path of child names: `["Topics", "MetadataResponseTopic[0]", "Name"]`.
    pub fn path(&self, names: &[&str]) -> Option<&Node> {
        let mut cur = self;
        for n in names {
            cur = cur.child(n)?;
        }
        Some(cur)
    }

    pub fn as_int(&self) -> Option<i64> {
        match self.value {
            Value::Int(i) => Some(i),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(Some(s)) => Some(s),
            _ => None,
        }
    }
}
