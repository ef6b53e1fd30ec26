//! The one generic decoder: walks a message spec for a given version over the bytes of a frame
//! and records every node's span, type, value and description.
//!
//! Lengths read from the input are always checked against the bytes that remain before anything
//! is sized by them, and every failure is a typed error with the offset where it happened.

use super::node::{Enc, Node, NodeKind, Note, Region, Value};
use super::problem::ProblemKind;
use super::schema::{Content, FieldSpec, FieldType, MessageSpec};
use std::borrow::Cow;
use std::fmt;

/// What kind of stop: damage in the bytes, or an API or version kdissect has no table for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorKind {
    #[default]
    Malformed,
    UnknownApi,
    UnknownVersion,
    /// A response whose request is not in the input, so its API and version are unknown.
    Unpaired,
}

impl ErrorKind {
    /// The problem kind this stop is reported as.
    pub fn problem(self) -> super::problem::ProblemKind {
        use super::problem::ProblemKind;
        match self {
            ErrorKind::Malformed => ProblemKind::Malformed,
            ErrorKind::UnknownApi => ProblemKind::UnknownApi,
            ErrorKind::UnknownVersion => ProblemKind::UnknownVersion,
            ErrorKind::Unpaired => ProblemKind::Unpaired,
        }
    }
}

/// Why decoding stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeError {
    pub kind: ErrorKind,
    /// Offset in the frame where the offending item starts.
    pub offset: usize,
    /// Dotted path of the field being decoded: `Topics[0].Name`.
    pub path: String,
    pub reason: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "at 0x{:04x}: {}", self.offset, self.reason)
        } else {
            write!(f, "{} at 0x{:04x}: {}", self.path, self.offset, self.reason)
        }
    }
}

/// A problem that did not stop decoding (a null where the schema forbids one, a tagged field
/// whose size disagrees with its content).
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnosis {
    pub kind: super::problem::ProblemKind,
    pub offset: usize,
    pub message: String,
}

/// Options that change how the wire is read.
#[derive(Debug, Clone, Copy)]
pub struct DecodeOptions {
    /// Read the int8 presence byte Kafka writes before a nullable struct. Turned off only to
    /// diagnose encoders that omit it.
    pub struct_presence_byte: bool,
    /// Array elements (and tagged fields per struct) kept as nodes; the rest are still
    /// decoded, to find where they end, and summarised in one node, so that a hostile count
    /// cannot make the tree, and memory, grow without bound.
    pub max_elements: usize,
    /// Bytes the record batches of one message may decompress to, together.
    pub max_decompressed: usize,
    /// Nodes kept per message over all its arrays and record batches (about 250 bytes each):
    /// `max_elements` bounds one array, but nested arrays multiply. Past it, elements are
    /// decoded and summarised as past `max_elements`.
    pub max_nodes: usize,
    /// Struct and array levels below the body kept as nodes; deeper ones are decoded (for
    /// their errors and record counts) but not kept. `usize::MAX` keeps everything; the summary
    /// and statistics views need 2.
    pub keep_depth: usize,
    /// Decode records inside batches (and decompress them); off, only batch headers and CRCs.
    pub records: bool,
}

/// Default for [`DecodeOptions::max_elements`].
pub const MAX_ELEMENTS: usize = 10_000;

/// Default for [`DecodeOptions::max_nodes`]: about 75 MB of tree for the largest message.
pub const MAX_NODES: usize = 300_000;

/// Nodes an element holds outside the arrays inside it (those count their own elements): the
/// element, its fields, and for each inner array its group and length nodes.
fn own_nodes(n: &Node) -> usize {
    1 + n
        .children
        .iter()
        .map(|c| match c.value {
            Value::Array(_) => 2,
            _ => own_nodes(c),
        })
        .sum::<usize>()
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            struct_presence_byte: true,
            max_elements: MAX_ELEMENTS,
            max_decompressed: super::records::MAX_DECOMPRESSED,
            max_nodes: MAX_NODES,
            keep_depth: usize::MAX,
            records: true,
        }
    }
}

/// One step of the path to the field being decoded.
#[derive(Debug, Clone, Copy)]
enum Seg {
    Name(&'static str),
    Index(usize),
}

pub(crate) struct Decoder<'a> {
    buf: &'a [u8],
    pub(crate) pos: usize,
    end: usize,
    version: i16,
    flexible: bool,
    pub(crate) region: Region,
    opts: DecodeOptions,
    /// Where decoding is, for error messages: field names and element indexes (no allocation
    /// per field; the text is made only when needed).
    path: Vec<Seg>,
    /// Non-zero error codes met so far: (path, code).
    pub(crate) errors: Vec<(String, i16)>,
    /// Records and record-batch bytes met so far.
    pub(crate) records: (i64, usize),
    /// Struct and array nesting below the message body.
    level: usize,
    /// Decoding into a scratch list that is thrown away: string values need not be copied.
    discard: bool,
    pub(crate) diagnoses: Vec<Diagnosis>,
    /// Decompressed byte sources handed out so far in this message.
    next_source: u16,
    /// Spans of the buffer that hold secrets (passwords, tokens), for renderers to mask.
    pub(crate) secrets: Vec<(usize, usize)>,
    /// The SASL message met in a field that carries one.
    pub(crate) sasl: Option<super::sasl::SaslFact>,
    /// The message being decoded: (API key, direction).
    message: Option<(i16, super::schema::Direction)>,
    /// What the message has used of its budgets: decompressed bytes, diagnoses past the
    /// bound, nodes kept in its arrays and record batches.
    pub(crate) spent: super::records::Spent,
}

type R<T> = Result<T, DecodeError>;

fn leaf(
    name: impl Into<Cow<'static, str>>,
    ty: &'static str,
    offset: usize,
    len: usize,
    region: Region,
) -> Node {
    let mut n = Node::new(name, ty, offset, region, NodeKind::Field);
    n.len = len;
    n
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

impl<'a> Decoder<'a> {
    /// A decoder over `buf[pos..end]`; offsets it records are offsets in `buf`.
    pub(crate) fn new(buf: &'a [u8], pos: usize, end: usize, region: Region) -> Decoder<'a> {
        let end = end.min(buf.len());
        Decoder {
            buf,
            pos: pos.min(end),
            end,
            version: 0,
            flexible: false,
            region,
            opts: DecodeOptions::default(),
            path: Vec::new(),
            errors: Vec::new(),
            records: (0, 0),
            level: 0,
            discard: false,
            diagnoses: Vec::new(),
            next_source: 0,
            secrets: Vec::new(),
            sasl: None,
            message: None,
            spent: Default::default(),
        }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.end - self.pos
    }

    fn path_string(&self) -> String {
        let mut s = String::new();
        for p in &self.path {
            match p {
                Seg::Name(n) => {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(n);
                }
                Seg::Index(i) => {
                    s.push('[');
                    s.push_str(&i.to_string());
                    s.push(']');
                }
            }
        }
        s
    }

    fn err(&self, offset: usize, reason: impl Into<String>) -> DecodeError {
        DecodeError {
            kind: ErrorKind::Malformed,
            offset,
            path: self.path_string(),
            reason: reason.into(),
        }
    }

    fn diag(&mut self, kind: ProblemKind, offset: usize, message: impl Into<String>) {
        if self.diagnoses.len() >= super::records::MAX_DIAGNOSES {
            self.spent.dropped_diagnoses += 1;
            return;
        }
        let path = self.path_string();
        let message = message.into();
        self.diagnoses.push(Diagnosis {
            kind,
            offset,
            message: if path.is_empty() {
                message
            } else {
                format!("{path}: {message}")
            },
        });
    }

    fn take(&mut self, n: usize, what: &str) -> R<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.err(
                self.pos,
                format!("{what} needs {n} bytes, only {} left", self.remaining()),
            ));
        }
        let s = self
            .buf
            .get(self.pos..self.pos + n)
            .ok_or_else(|| self.err(self.pos, "out of range"))?;
        self.pos += n;
        Ok(s)
    }

    fn fixed<const N: usize>(&mut self, what: &str) -> R<[u8; N]> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub(crate) fn i8(&mut self) -> R<i8> {
        Ok(i8::from_be_bytes(self.fixed::<1>("int8")?))
    }
    pub(crate) fn i16(&mut self) -> R<i16> {
        Ok(i16::from_be_bytes(self.fixed::<2>("int16")?))
    }
    pub(crate) fn i32(&mut self) -> R<i32> {
        Ok(i32::from_be_bytes(self.fixed::<4>("int32")?))
    }

    /// Unsigned varint of at most 5 bytes (Kafka's `readUnsignedVarint`).
    pub(crate) fn uvarint(&mut self) -> R<u32> {
        let start = self.pos;
        let mut v: u32 = 0;
        for i in 0..5 {
            let b = match self.buf.get(self.pos) {
                Some(b) if self.pos < self.end => *b,
                _ => {
                    self.pos = start;
                    return Err(self.err(start, "unsigned varint runs past the end"));
                }
            };
            self.pos += 1;
            if i == 4 && b > 0x0f {
                self.pos = start;
                return Err(self.err(start, "unsigned varint longer than 5 bytes"));
            }
            v |= u32::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        self.pos = start;
        Err(self.err(start, "unsigned varint longer than 5 bytes"))
    }

    /// Decodes a message body (`spec` at `version`) as one struct node.
    pub(crate) fn message_body(
        &mut self,
        spec: &'static MessageSpec,
        version: i16,
        opts: DecodeOptions,
    ) -> (Node, Option<DecodeError>) {
        self.version = version;
        self.flexible = spec.is_flexible(version);
        self.opts = opts;
        self.message = Some((spec.api_key, spec.direction));
        self.spent.decompress_left = opts.max_decompressed;
        let mut body = Node::new(
            spec.name.as_str(),
            "struct",
            self.pos,
            self.region,
            NodeKind::Group,
        );
        body.desc = Cow::Owned(format!("message body, version {version}"));
        let start = self.pos;
        let res = self.fields(&spec.fields, &mut body.children);
        body.len = self.pos - start;
        (body, res.err())
    }

    fn fields(&mut self, fields: &'static [FieldSpec], out: &mut Vec<Node>) -> R<()> {
        for f in fields {
            if !f.versions.contains(self.version) {
                continue;
            }
            if self.flexible && f.tagged_versions.contains(self.version) {
                continue;
            }
            self.field(f, out)?;
        }
        if self.flexible {
            self.tagged_section(fields, out, "number of tagged fields in this struct")?;
        }
        Ok(())
    }

    /// The tagged-field section that ends every struct in flexible versions.
    pub(crate) fn tagged_section(
        &mut self,
        fields: &'static [FieldSpec],
        out: &mut Vec<Node>,
        desc: &'static str,
    ) -> R<()> {
        let start = self.pos;
        let count = self.uvarint().map_err(|mut e| {
            e.reason = format!("tagged_fields count: {}", e.reason);
            e
        })?;
        let mut n = leaf(
            "tagged_fields",
            "uvarint",
            start,
            self.pos - start,
            Region::TaggedFields,
        );
        n.kind = NodeKind::TagCount;
        n.value = Value::Int(i64::from(count));
        n.desc = Cow::Borrowed(desc);
        out.push(n);
        // Each tagged field takes at least two bytes (tag and size).
        if count as usize > self.remaining() / 2 {
            return Err(self.err(
                start,
                format!(
                    "{count} tagged fields cannot fit in the {} bytes left",
                    self.remaining()
                ),
            ));
        }
        let mut last_tag: Option<u32> = None;
        let mut skipped_from: Option<usize> = None;
        for i in 0..count as usize {
            if i == self.opts.max_elements {
                skipped_from = Some(self.pos);
            }
            let fstart = self.pos;
            let tag = self.uvarint()?;
            let tag_end = self.pos;
            // A bad size must not leave the tag consumed without a node to show it.
            let size = match self.uvarint() {
                Ok(s) => s as usize,
                Err(e) => {
                    self.pos = fstart;
                    return Err(e);
                }
            };
            let size_end = self.pos;
            if size > self.remaining() {
                self.pos = fstart;
                return Err(self.err(
                    fstart,
                    format!(
                        "tagged field {tag} claims {size} bytes, only {} left",
                        self.remaining() + (size_end - fstart)
                    ),
                ));
            }
            if last_tag.is_some_and(|t| tag <= t) {
                self.diag(
                    ProblemKind::TaggedFields,
                    fstart,
                    format!("tag {tag} is not in ascending order"),
                );
            }
            last_tag = Some(tag);
            let known = fields
                .iter()
                .find(|f| f.tag == Some(tag) && f.tagged_versions.contains(self.version));
            let mut group = Node::new(
                known.map_or_else(
                    || Cow::Owned(format!("unknown_tag_{tag}")),
                    |f| Cow::Borrowed(f.name.as_str()),
                ),
                "tagged_field",
                fstart,
                Region::TaggedFields,
                NodeKind::Group,
            );
            group.value = Value::Text(format!("tag {tag}, {}", plural(size, "byte", "bytes")));
            let mut t = leaf(
                "tag",
                "uvarint",
                fstart,
                tag_end - fstart,
                Region::TaggedFields,
            );
            t.value = Value::Int(i64::from(tag));
            t.desc = Cow::Borrowed("tag number of this tagged field");
            let mut s = leaf(
                "size",
                "uvarint",
                tag_end,
                size_end - tag_end,
                Region::TaggedFields,
            );
            s.value = Value::Int(size as i64);
            s.desc = Cow::Borrowed("bytes of tagged data that follow");
            group.children.push(t);
            group.children.push(s);
            let data_end = self.pos + size;
            match known {
                Some(f) => {
                    let saved_end = self.end;
                    let saved_region = self.region;
                    self.end = data_end;
                    self.region = Region::TaggedFields;
                    let r = self.field(f, &mut group.children);
                    self.end = saved_end;
                    self.region = saved_region;
                    if let Err(e) = r {
                        group.len = self.pos - fstart;
                        out.push(group);
                        return Err(e);
                    }
                    if self.pos < data_end {
                        let mut raw = leaf(
                            "unread",
                            "bytes",
                            self.pos,
                            data_end - self.pos,
                            Region::TaggedFields,
                        );
                        raw.kind = NodeKind::Raw;
                        raw.value = Value::Bytes(Some((self.pos, data_end - self.pos)));
                        raw.desc = Cow::Borrowed("bytes of the tagged field left after its value");
                        self.diag(
                            ProblemKind::TaggedFields,
                            self.pos,
                            format!(
                                "tagged field {} has {} bytes more than its value",
                                f.name,
                                data_end - self.pos
                            ),
                        );
                        group.children.push(raw);
                        self.pos = data_end;
                    }
                }
                None => {
                    let mut raw = leaf("data", "bytes", self.pos, size, Region::TaggedFields);
                    raw.kind = NodeKind::Raw;
                    raw.value = Value::Bytes(Some((self.pos, size)));
                    raw.desc = Cow::Borrowed("tag not in the schema for this version");
                    group.children.push(raw);
                    self.pos = data_end;
                }
            }
            group.len = self.pos - fstart;
            if i < self.opts.max_elements {
                out.push(group);
            }
        }
        if let Some(from) = skipped_from {
            let n = count as usize - self.opts.max_elements;
            let mut raw = leaf(
                "omitted",
                "tagged_fields",
                from,
                self.pos - from,
                Region::TaggedFields,
            );
            raw.kind = NodeKind::Raw;
            raw.value = Value::Text(format!("{n} more tagged fields, decoded but not kept"));
            out.push(raw);
        }
        Ok(())
    }

    fn field(&mut self, f: &'static FieldSpec, out: &mut Vec<Node>) -> R<()> {
        self.path.push(Seg::Name(f.name.as_str()));
        let nullable = f.nullable_versions.contains(self.version);
        let res = self.value(
            &f.ty,
            nullable,
            Cow::Borrowed(f.name.as_str()),
            Some(f),
            out,
        );
        if let (Ok(()), Some(n)) = (&res, out.last_mut()) {
            n.desc = Cow::Borrowed(f.about.as_str());
            annotate(f, n);
            if let (FieldType::Int16, Value::Int(v)) = (&f.ty, &n.value) {
                if *v != 0 && f.name.ends_with("ErrorCode") {
                    self.errors.push((self.path_string(), *v as i16));
                }
            }
        }
        if res.is_ok() {
            self.path.pop();
        }
        res
    }

    /// Decodes one value of type `ty` and pushes its node.
    fn value(
        &mut self,
        ty: &FieldType,
        nullable: bool,
        name: Cow<'static, str>,
        spec: Option<&'static FieldSpec>,
        out: &mut Vec<Node>,
    ) -> R<()> {
        let start = self.pos;
        let region = self.region;
        let prim = |d: &mut Self, tyname: &'static str, v: Value| -> Node {
            let mut n = leaf(name.clone(), tyname, start, d.pos - start, region);
            n.value = v;
            n
        };
        let node = match ty {
            FieldType::Bool => {
                let b = self.fixed::<1>("bool")?[0];
                prim(self, "bool", Value::Bool(b != 0))
            }
            FieldType::Int8 => {
                let v = self.i8()?;
                prim(self, "int8", Value::Int(v.into()))
            }
            FieldType::Int16 => {
                let v = self.i16()?;
                prim(self, "int16", Value::Int(v.into()))
            }
            FieldType::Int32 => {
                let v = self.i32()?;
                prim(self, "int32", Value::Int(v.into()))
            }
            FieldType::Int64 => {
                let v = i64::from_be_bytes(self.fixed::<8>("int64")?);
                prim(self, "int64", Value::Int(v))
            }
            FieldType::Uint16 => {
                let v = u16::from_be_bytes(self.fixed::<2>("uint16")?);
                prim(self, "uint16", Value::Int(v.into()))
            }
            FieldType::Uint32 => {
                let v = u32::from_be_bytes(self.fixed::<4>("uint32")?);
                prim(self, "uint32", Value::Int(v.into()))
            }
            FieldType::Float64 => {
                let v = f64::from_be_bytes(self.fixed::<8>("float64")?);
                prim(self, "float64", Value::Float(v))
            }
            FieldType::Uuid => {
                let v = self.fixed::<16>("uuid")?;
                prim(self, "uuid", Value::Uuid(v))
            }
            FieldType::String => self.string(name, nullable)?,
            FieldType::Bytes => match spec.map_or(Content::Plain, |f| f.content) {
                Content::Plain => self.bytes(name, "bytes", nullable, region)?,
                Content::Secret => {
                    let n = self.bytes(name, "bytes", nullable, region)?;
                    if let Value::Bytes(Some(span)) = n.value {
                        self.secrets.push(span);
                    }
                    n
                }
                Content::Sasl => return self.sasl_field(name, nullable, out),
            },
            FieldType::Records => return self.records_field(name, out),
            FieldType::Struct(sname) => {
                let spec = spec.ok_or_else(|| self.err(start, "struct without a field spec"))?;
                return self.struct_field(spec, sname, name, nullable, out);
            }
            FieldType::Array(inner) => {
                return self.array(inner, name, nullable, spec, out);
            }
        };
        if self.discard {
            // Below the kept levels only error codes matter; the node is not kept.
            if let (Some(f), Value::Int(v)) = (spec, &node.value) {
                if *v != 0 && f.ty == FieldType::Int16 && f.name.ends_with("ErrorCode") {
                    self.errors.push((self.path_string(), *v as i16));
                }
            }
            return Ok(());
        }
        out.push(node);
        Ok(())
    }

    fn string(&mut self, name: Cow<'static, str>, nullable: bool) -> R<Node> {
        let start = self.pos;
        let (len, detail): (Option<usize>, Enc) = if self.flexible {
            let raw = self.uvarint()?;
            let d = Enc::CompactLen(raw);
            (
                if raw == 0 {
                    None
                } else {
                    Some(raw as usize - 1)
                },
                d,
            )
        } else {
            let raw = self.i16()?;
            let d = Enc::Int16Len(raw);
            match raw {
                -1 => (None, d),
                n if n < 0 => {
                    self.pos = start;
                    return Err(self.err(start, format!("string length {n} is negative")));
                }
                n => (Some(n as usize), d),
            }
        };
        let value = match len {
            None => {
                if !nullable {
                    self.diag(
                        ProblemKind::NullNotNullable,
                        start,
                        "null string in a field that is not nullable in this version",
                    );
                }
                None
            }
            Some(n) => {
                if n > self.remaining() {
                    let left = self.remaining();
                    self.pos = start;
                    return Err(self.err(
                        start,
                        format!("string length {n} exceeds the {left} bytes left"),
                    ));
                }
                let s = self.take(n, "string")?;
                if self.discard {
                    Some(String::new())
                } else {
                    Some(String::from_utf8_lossy(s).into_owned())
                }
            }
        };
        let mut node = leaf(name, "string", start, self.pos - start, self.region);
        node.value = Value::Str(value);
        node.enc = detail;
        Ok(node)
    }

    fn bytes(
        &mut self,
        name: Cow<'static, str>,
        ty: &'static str,
        nullable: bool,
        region: Region,
    ) -> R<Node> {
        let start = self.pos;
        let (len, detail): (Option<usize>, Enc) = if self.flexible {
            let raw = self.uvarint()?;
            let d = Enc::CompactLen(raw);
            (
                if raw == 0 {
                    None
                } else {
                    Some(raw as usize - 1)
                },
                d,
            )
        } else {
            let raw = self.i32()?;
            let d = Enc::Int32Len(raw);
            match raw {
                -1 => (None, d),
                n if n < 0 => {
                    self.pos = start;
                    return Err(self.err(start, format!("{ty} length {n} is negative")));
                }
                n => (Some(n as usize), d),
            }
        };
        let value = match len {
            None => {
                if !nullable {
                    self.diag(
                        ProblemKind::NullNotNullable,
                        start,
                        format!("null {ty} in a field that is not nullable in this version"),
                    );
                }
                None
            }
            Some(n) => {
                if n > self.remaining() {
                    let left = self.remaining();
                    self.pos = start;
                    return Err(self.err(
                        start,
                        format!("{ty} length {n} exceeds the {left} bytes left"),
                    ));
                }
                let at = self.pos;
                self.pos += n;
                Some((at, n))
            }
        };
        let mut node = leaf(name, ty, start, self.pos - start, region);
        if ty == "records" && region != Region::TaggedFields {
            node.region = Region::RecordBatch;
        }
        node.value = Value::Bytes(value);
        node.enc = detail;
        Ok(node)
    }

    /// A bytes field holding a SASL message: its length prefix, then the message's parts.
    fn sasl_field(
        &mut self,
        name: Cow<'static, str>,
        nullable: bool,
        out: &mut Vec<Node>,
    ) -> R<()> {
        let region = self.region;
        let node = self.bytes(name.clone(), "bytes", nullable, region)?;
        let Value::Bytes(Some((at, n))) = node.value else {
            if !self.discard {
                out.push(node);
            }
            return Ok(());
        };
        let parsed = super::sasl::parse(self.buf, at, at + n, region);
        self.secrets.extend_from_slice(&parsed.secrets);
        self.sasl = Some(super::sasl::SaslFact::from(&parsed, self.buf));
        if self.discard {
            return Ok(());
        }
        let mut g = Node::new(name, "bytes", node.offset, region, NodeKind::Group);
        g.len = node.len;
        g.value = Value::Text(parsed.step.label().to_string());
        let mut len = leaf(
            "length",
            if self.flexible { "uvarint" } else { "int32" },
            node.offset,
            at - node.offset,
            region,
        );
        len.kind = NodeKind::Length;
        len.value = Value::Int(n as i64);
        len.enc = node.enc;
        g.children.push(len);
        g.children.extend(parsed.parts);
        out.push(g);
        Ok(())
    }

    /// The length prefix of an array or a `records` field: a compact uvarint (length + 1, 0 for
    /// null) in flexible versions, else an int32 (-1 for null). `what` names it in the error.
    fn length_prefix(&mut self, what: &str) -> R<(Option<usize>, Node)> {
        let start = self.pos;
        let (len, mut l) = if self.flexible {
            let raw = self.uvarint()?;
            let mut l = leaf("length", "uvarint", start, self.pos - start, self.region);
            l.value = Value::Int(raw.into());
            ((raw as usize).checked_sub(1), l)
        } else {
            let raw = self.i32()?;
            let mut l = leaf("length", "int32", start, 4, self.region);
            l.value = Value::Int(raw.into());
            match raw {
                -1 => (None, l),
                n if n < 0 => {
                    self.pos = start;
                    return Err(self.err(start, format!("{what} length {n} is negative")));
                }
                n => (Some(n as usize), l),
            }
        };
        l.kind = NodeKind::Length;
        Ok((len, l))
    }

    /// A `records` field: its length prefix, then the batches inside, decoded.
    fn records_field(&mut self, name: Cow<'static, str>, out: &mut Vec<Node>) -> R<()> {
        let start = self.pos;
        let (len, mut len_node) = self.length_prefix("records")?;
        if self.flexible {
            len_node.enc = if len.is_none() {
                Enc::CompactNull
            } else {
                Enc::CompactLenPlusOne
            };
        }
        let mut g = Node::new(name, "records", start, Region::RecordBatch, NodeKind::Group);
        let Some(n) = len else {
            len_node.desc = Cow::Borrowed("null: no records");
            g.value = Value::Null;
            g.children.push(len_node);
            g.len = self.pos - start;
            out.push(g);
            return Ok(());
        };
        if n > self.remaining() {
            let left = self.remaining();
            self.pos = start;
            return Err(self.err(
                start,
                format!("records length {n} exceeds the {left} bytes left"),
            ));
        }
        len_node.desc = Cow::Owned(format!("{n} bytes of record batches follow"));
        g.children.push(len_node);
        let opts = super::records::RecordsOptions {
            max_decompressed: self.opts.max_decompressed,
            max_records: self.opts.max_elements,
            max_nodes: self.opts.max_nodes,
            records: self.opts.records,
        };
        let (batches, tally) = super::records::decode(
            self.buf,
            self.pos,
            self.pos + n,
            opts,
            &mut self.diagnoses,
            &mut self.next_source,
            &mut self.spent,
        );
        let nr = tally.records;
        if let Some((key, direction)) = self.message {
            if let Some(why) =
                super::records::batch_format_problem(key, direction, self.version, &tally)
            {
                self.diag(ProblemKind::Interop, start, why);
            }
        }
        g.value = Value::Text(tally.text());
        g.children.extend(batches);
        self.records.0 += nr;
        self.records.1 += n;
        self.pos += n;
        g.len = self.pos - start;
        out.push(g);
        Ok(())
    }

    fn struct_field(
        &mut self,
        spec: &'static FieldSpec,
        sname: &str,
        name: Cow<'static, str>,
        nullable: bool,
        out: &mut Vec<Node>,
    ) -> R<()> {
        let start = self.pos;
        // The type name lives in the spec: borrow it rather than copy it per struct.
        let ty: Cow<'static, str> = if spec.elem_name == sname {
            Cow::Borrowed(spec.elem_name.as_str())
        } else if spec.type_name == sname {
            Cow::Borrowed(spec.type_name.as_str())
        } else {
            Cow::Owned(sname.to_string())
        };
        let mut node = Node::new(name, ty, start, self.region, NodeKind::Group);
        node.value = Value::Struct;
        if nullable && self.opts.struct_presence_byte {
            let p = self.i8()?;
            let mut pn = leaf("present", "int8", start, 1, self.region);
            pn.value = Value::Int(p.into());
            pn.desc = Cow::Borrowed("presence byte of a nullable struct: 1 present, -1 null");
            node.children.push(pn);
            if p < 0 {
                node.value = Value::Null;
                node.len = self.pos - start;
                out.push(node);
                return Ok(());
            }
            if p != 1 {
                self.diag(
                    ProblemKind::BadPresence,
                    start,
                    format!("presence byte {p} is neither 1 nor -1"),
                );
            }
        }
        let keep = self.level.saturating_add(1) < self.opts.keep_depth;
        self.level += 1;
        let r = if keep {
            node.children.reserve(spec.fields.len() + 1);
            self.fields(&spec.fields, &mut node.children)
        } else {
            // Below the kept levels: decoded for errors and counts, not kept.
            let mut scratch = Vec::new();
            let was = std::mem::replace(&mut self.discard, true);
            let r = self.fields(&spec.fields, &mut scratch);
            self.discard = was;
            r
        };
        self.level -= 1;
        node.len = self.pos - start;
        out.push(node);
        r
    }

    fn array(
        &mut self,
        inner: &FieldType,
        name: Cow<'static, str>,
        nullable: bool,
        spec: Option<&'static FieldSpec>,
        out: &mut Vec<Node>,
    ) -> R<()> {
        let start = self.pos;
        let tyname: Cow<'static, str> = match spec {
            Some(f) => Cow::Borrowed(f.type_name.as_str()),
            None => Cow::Owned(format!("[]{}", inner.display())),
        };
        let mut node = Node::new(name, tyname, start, self.region, NodeKind::Group);
        let (count, mut len_node) = self.length_prefix("array")?;
        if self.flexible {
            len_node.enc = if count.is_none() {
                Enc::CompactNull
            } else {
                Enc::CompactCount
            };
        }
        let Some(count) = count else {
            if !nullable {
                self.diag(
                    ProblemKind::NullNotNullable,
                    start,
                    "null array in a field that is not nullable in this version",
                );
            }
            len_node.desc = Cow::Borrowed("null array: no elements follow");
            node.value = Value::Null;
            node.children.push(len_node);
            node.len = self.pos - start;
            out.push(node);
            return Ok(());
        };
        // Every element takes at least one byte, so a count above the bytes left is garbage;
        // checking it here keeps a hostile length from driving the loop below.
        if count > self.remaining() {
            let left = self.remaining();
            self.pos = start;
            return Err(self.err(
                start,
                format!("array length {count} exceeds the {left} bytes left"),
            ));
        }
        len_node.desc = Cow::Owned(match count {
            0 => "no elements follow".to_string(),
            1 => "one element follows".to_string(),
            n => format!("{n} elements follow"),
        });
        node.value = Value::Array(count);
        node.children.push(len_node);
        let elem_ty: Cow<'static, str> = match spec {
            Some(f) => Cow::Borrowed(f.elem_name.as_str()),
            None => Cow::Owned(inner.display()),
        };
        let mut res = Ok(());
        let keep = self.opts.max_elements;
        let shallow_ok = self.level.saturating_add(1) < self.opts.keep_depth;
        if shallow_ok {
            // Bounded: the count was checked against the bytes left, and by --max-elements.
            node.children.reserve(count.min(keep) + 1);
        }
        // Elements past `keep` go to a scratch list that is emptied after each one.
        let mut scratch: Vec<Node> = Vec::new();
        let mut skipped_from: Option<(usize, usize)> = None;
        for i in 0..count {
            let ename = elem_ty.clone();
            let in_budget = i < keep && self.spent.nodes < self.opts.max_nodes;
            if !in_budget && skipped_from.is_none() {
                skipped_from = Some((self.pos, i));
            }
            let kept = in_budget && shallow_ok;
            let was = self.discard;
            self.discard = was || !kept;
            let dest = if kept {
                &mut node.children
            } else {
                &mut scratch
            };
            self.path.push(Seg::Index(i));
            let r = match inner {
                FieldType::Struct(sname) => match spec {
                    Some(s) => self.struct_field(s, sname, ename, false, dest),
                    None => Err(self.err(self.pos, "struct array without a field spec")),
                },
                other => self.value(other, false, ename, None, dest),
            };
            if kept {
                if let Some(last) = node.children.last_mut() {
                    last.index = Some(i as u32);
                    self.spent.nodes += own_nodes(last);
                }
            }
            scratch.clear();
            self.discard = was;
            if r.is_err() {
                res = r;
                break;
            }
            self.path.pop();
        }
        if let (Some((from, first)), true) = (skipped_from, shallow_ok) {
            let n = count - first;
            let why = if first < keep {
                format!(
                    "the message passed the node limit of {}",
                    self.opts.max_nodes
                )
            } else {
                format!("the element limit of {keep}")
            };
            let mut raw = leaf("omitted", "elements", from, self.pos - from, self.region);
            raw.kind = NodeKind::Raw;
            raw.value = Value::Text(format!("{n} more elements, decoded but not kept ({why})"));
            node.children.push(raw);
        }
        node.len = self.pos - start;
        out.push(node);
        res
    }
}

/// Adds the names behind numbers: error codes, API keys, authorized-operation bits.
fn annotate(f: &FieldSpec, n: &mut Node) {
    let Value::Int(v) = n.value else { return };
    if f.ty == FieldType::Int16 && f.name.ends_with("ErrorCode") && v != 0 {
        n.note = Note::Error(v as i16);
    } else if f.ty == FieldType::Int16 && f.name == "ApiKey" {
        n.note = Note::Api(v as i16);
    } else if f.ty == FieldType::Int32 && f.name.ends_with("AuthorizedOperations") && v != 0 {
        n.note = Note::AclOperations(v as i32);
    }
}

impl<'a> Decoder<'a> {
    /// Bytes of the underlying buffer (bounds already checked by the caller; empty if not).
    pub(crate) fn slice(&self, start: usize, n: usize) -> &'a [u8] {
        self.buf.get(start..start.saturating_add(n)).unwrap_or(&[])
    }
}
