//! The one generic decoder: walks a message spec for a given version over the bytes of a frame
//! and records every node's span, type, value and description.
//!
//! Bytes are read through the one [`Cursor`]: lengths read from the input are always checked
//! against the bytes that remain before anything is sized by them, and every failure is a
//! typed error with the offset where it happened, to which the decoder adds the field's path.

use super::cursor::{self, Cursor, Length, Prefix, ReadError};
use super::node::{Desc, Enc, Node, NodeKind, Note, Region, Shape, Value};
use crate::kafka::meaning::codes::{ApiKey, ErrorCode};
pub use crate::kafka::meaning::problem::{DecodeError, Diagnosis, ErrorKind};
use crate::kafka::meaning::problem::{Detail, ErrorEntry, Path, ProblemKind, Step};
use crate::kafka::spec::schema::{Content, FieldId, FieldSpec, FieldType, MessageSpec, Role};
use std::borrow::Cow;

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
    /// Keep, within the kept levels, only the nodes the facts read (fields with
    /// [`FieldSpec::facts`], and every struct, record set and tagged section); the other
    /// fields are walked for what they leave. For views that print facts only (the summary
    /// and statistics), never for those that print or filter on the tree.
    pub facts_only: bool,
    /// Where `facts_only` and two kept levels allow it, gather the body's facts while walking
    /// it, with no node below the body (src/kafka/walk/collect.rs). On by default; off only to
    /// compare the two ways (tests/facts_walk.rs).
    pub walk_facts: bool,
    /// Where the body's facts are gathered while walking it, use the walk generated from its
    /// spec (src/kafka/walk/generated.rs) rather than interpret the spec. On by default; off only
    /// to compare the two walks (tests/facts_walk.rs).
    pub generated_walk: bool,
    /// With `facts_only` at every depth, and no tree wanted by any view or filter (the
    /// analyses'), gather the facts at every depth while the generated walk walks the body
    /// (src/kafka/walk/deep.rs), with no node built. Where the walk gives up, the tree's way.
    pub deep_facts: bool,
    /// Where `--json` is the only view and nothing else reads the tree, write the body's JSON
    /// while the generated walk walks it (src/kafka/walk/json.rs), with no node built but
    /// those of records. Where the walk gives up, the tree's way.
    pub json_walk: bool,
}

/// Default for [`DecodeOptions::max_elements`].
pub const MAX_ELEMENTS: usize = 10_000;

/// Bytes the record batches of one message may decompress to, together, by default.
pub const MAX_DECOMPRESSED: usize = 64 * 1024 * 1024;

/// What one message has used of its budgets, over all its record fields.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spent {
    /// Bytes its batches may still decompress to.
    pub decompress_left: usize,
    /// Diagnoses past the bound, counted only.
    pub dropped_diagnoses: usize,
    /// Nodes kept so far.
    pub nodes: usize,
}

/// Diagnoses listed per message; past it they are counted. A hostile message set can hold
/// millions of faults, and each listed one costs memory.
pub const MAX_DIAGNOSES: usize = 64;

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
            max_decompressed: MAX_DECOMPRESSED,
            max_nodes: MAX_NODES,
            keep_depth: usize::MAX,
            records: true,
            facts_only: false,
            walk_facts: true,
            generated_walk: true,
            deep_facts: false,
            json_walk: false,
        }
    }
}

pub(crate) struct Decoder<'a> {
    pub(in crate::kafka) buf: &'a [u8],
    pub(crate) pos: usize,
    pub(in crate::kafka) end: usize,
    pub(in crate::kafka) version: i16,
    pub(in crate::kafka) flexible: bool,
    pub(crate) region: Region,
    pub(in crate::kafka) opts: DecodeOptions,
    /// Where decoding is, for error messages: field names and element indexes (no allocation
    /// per field; the text is made only when needed).
    path: Path,
    /// Non-zero error codes met so far, with where.
    pub(crate) errors: Vec<ErrorEntry>,
    /// Records and record-batch bytes met so far.
    pub(crate) records: (i64, usize),
    /// Struct and array nesting below the message body.
    pub(in crate::kafka) level: usize,
    /// Decoding into a scratch list that is thrown away: string values need not be copied.
    pub(in crate::kafka) discard: bool,
    pub(crate) diagnoses: Vec<Diagnosis>,
    /// Decompressed byte sources handed out so far in this message.
    pub(in crate::kafka) next_source: u16,
    /// Spans of the buffer that hold secrets (passwords, tokens), for renderers to mask.
    pub(crate) secrets: Vec<(usize, usize)>,
    /// The SASL message met in a field that carries one.
    pub(crate) sasl: Option<super::sasl::SaslFact>,
    /// The message being decoded: (API key, direction).
    pub(in crate::kafka) message: Option<(i16, crate::kafka::spec::schema::Direction)>,
    /// What the message has used of its budgets: decompressed bytes, diagnoses past the
    /// bound, nodes kept in its arrays and record batches.
    pub(crate) spent: Spent,
    /// Messages embedded in the one being decoded, around the current position (0 at the top).
    pub(in crate::kafka) depth: u8,
    /// For a response: the API and version of the request its paired request embedded
    /// (Envelope), to decode the response embedded in it.
    pub(crate) embedded_api: Option<(i16, i16)>,
    /// The request or response embedded in the message, once decoded.
    pub(crate) embedded: Option<Box<super::embed::EmbeddedMessage>>,
    /// The topic the fields being decoded are about (the last topic name or id met in the
    /// structs around), for records whose layout depends on their topic.
    pub(in crate::kafka) topic_layout: Option<&'static crate::kafka::spec::schema::Layout>,
    /// Record types met in record values that have a layout (metadata records), counted,
    /// and what the metadata records changed.
    pub(crate) record_types: crate::kafka::meaning::log::LogRecords,
    /// The facts of the record batches kept so far, which records nodes index.
    pub(crate) batch_facts: Vec<crate::kafka::meaning::facts::BatchFact>,
    /// Nodes a full decode of the current element would have kept but `facts_only` walked
    /// past: the element still counts them against the node budget, so that which elements
    /// are kept does not depend on the option.
    pub(in crate::kafka) skipped_nodes: usize,
    /// The facts of the body, when they are gathered while it is walked rather than read
    /// from its nodes (the summary's decoding; see [`super::collect`]).
    pub(crate) collector: Option<Box<super::collect::Collector>>,
    /// The body's JSON, when it was written as the body was walked (`json_walk`).
    pub(crate) json: Option<Box<super::json::JsonBody>>,
}

pub(in crate::kafka) type R<T> = Result<T, DecodeError>;

pub(in crate::kafka) fn leaf(
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
            // Deep enough for most bodies (field, index, field, index...): grown past it.
            path: Path(Vec::with_capacity(8)),
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
            depth: 0,
            embedded_api: None,
            embedded: None,
            topic_layout: None,
            record_types: Default::default(),
            batch_facts: Vec::new(),
            skipped_nodes: 0,
            collector: None,
            json: None,
        }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.end.saturating_sub(self.pos)
    }

    /// Steps of the path to the field being decoded.
    pub(in crate::kafka) fn path_depth(&self) -> usize {
        self.path.0.len()
    }

    /// Back to the first `n` steps of the path.
    pub(in crate::kafka) fn truncate_path(&mut self, n: usize) {
        self.path.0.truncate(n);
    }

    /// Where decoding is.
    pub(in crate::kafka) fn path(&self) -> &Path {
        &self.path
    }

    pub(in crate::kafka) fn push_step(&mut self, step: Step) {
        self.path.0.push(step);
    }

    pub(in crate::kafka) fn pop_step(&mut self) {
        self.path.0.pop();
    }

    /// A read error as the stop of the message, at the field being decoded.
    fn stop(&self, e: ReadError) -> DecodeError {
        DecodeError {
            kind: ErrorKind::of(e.kind),
            offset: e.offset,
            path: self.path.clone(),
            detail: e.detail,
        }
    }

    pub(in crate::kafka) fn err(&self, offset: usize, detail: Detail) -> DecodeError {
        self.stop(ReadError::malformed(offset, detail))
    }

    pub(in crate::kafka) fn diag(&mut self, kind: ProblemKind, offset: usize, detail: Detail) {
        if self.diagnoses.len() >= MAX_DIAGNOSES {
            self.spent.dropped_diagnoses += 1;
            return;
        }
        self.diagnoses.push(Diagnosis {
            kind,
            offset,
            path: self.path.clone(),
            detail,
        });
    }

    /// Runs one read on the cursor at the decoder's position and moves the decoder to where
    /// the read left it; a failed read stops the message at the field being decoded.
    pub(in crate::kafka) fn read<T>(
        &mut self,
        f: impl FnOnce(&mut Cursor<'a>) -> cursor::Res<T>,
    ) -> R<T> {
        let mut c = Cursor::new(self.buf, self.pos, self.end);
        let r = f(&mut c);
        self.pos = c.pos;
        r.map_err(|e| self.stop(e))
    }

    pub(crate) fn i8(&mut self) -> R<i8> {
        self.read(|c| c.i8("int8"))
    }

    /// Unsigned varint of at most 5 bytes (Kafka's `readUnsignedVarint`).
    pub(crate) fn uvarint(&mut self) -> R<u32> {
        self.read(Cursor::uvarint)
    }

    /// A length prefix as this version writes it: compact in flexible versions, else
    /// `classic` (int16 for strings, int32 for the rest), checked against the bytes left.
    pub(in crate::kafka) fn length(&mut self, classic: Prefix, what: &'static str) -> R<Length> {
        let prefix = if self.flexible {
            Prefix::Compact
        } else {
            classic
        };
        self.read(|c| c.length(prefix, prefix.ty(), what))
    }

    /// Sets the decoder up to read a body of `spec` at `version`.
    pub(crate) fn prepare_body(
        &mut self,
        spec: &'static MessageSpec,
        version: i16,
        opts: DecodeOptions,
    ) {
        self.version = version;
        self.flexible = spec.is_flexible(version);
        self.opts = opts;
        self.message = Some((spec.api_key, spec.direction));
        // An embedded message shares the budget of the one that carries it.
        if self.depth == 0 {
            self.spent.decompress_left = opts.max_decompressed;
        }
    }

    /// Whether the body's JSON is to be written as it is walked: `--json`'s decoding, of the
    /// frame's own message (not one embedded in it).
    fn json_wanted(&self) -> bool {
        self.opts.json_walk && !self.opts.facts_only && self.depth == 0
    }

    /// Decodes a message body (`spec` at `version`) as one struct node.
    pub(crate) fn message_body(
        &mut self,
        spec: &'static MessageSpec,
        version: i16,
        opts: DecodeOptions,
    ) -> (Node, Option<DecodeError>) {
        self.prepare_body(spec, version, opts);
        let mut body = Node::new(spec.name, "struct", self.pos, self.region, NodeKind::Group);
        body.shape = Shape::Body;
        body.desc = Desc::Text(super::node::VersionText::Body.of(version));
        let start = self.pos;
        if self.collect_body(spec) || (self.json_wanted() && super::json::write_body(self, spec)) {
            body.len = self.pos - start;
            return (body, None);
        }
        // One allocation for the fields and the tagged-field count (as for every struct).
        body.children.reserve(spec.fields.len() + 1);
        let res = self.fields(spec.fields, &mut body.children);
        body.len = self.pos - start;
        (body, res.err())
    }

    pub(in crate::kafka) fn fields(
        &mut self,
        fields: &'static [FieldSpec],
        out: &mut Vec<Node>,
    ) -> R<()> {
        for f in fields {
            if !f.versions.contains(self.version) {
                continue;
            }
            if self.flexible && f.tagged_versions.contains(self.version) {
                continue;
            }
            if self.opts.facts_only && !f.facts {
                if let Some(nodes) = self.walkable_nodes(f) {
                    if self.walked(|d| d.walk_field(f)) {
                        self.skipped_nodes += nodes;
                        continue;
                    }
                }
            }
            self.field(f, out)?;
        }
        if !self.flexible {
            return Ok(());
        }
        // An empty tagged section is one zero byte: where only the facts are kept, its count
        // node is not (it still counts against the node budget).
        if self.opts.facts_only && self.pos < self.end && self.buf.get(self.pos) == Some(&0) {
            self.pos += 1;
            self.skipped_nodes += 1;
            return Ok(());
        }
        self.tagged_section(fields, out, "number of tagged fields in this struct")
    }

    /// The tagged-field section that ends every struct in flexible versions: a count, then
    /// each field's tag, size and data. Fields past `max_elements` are decoded, to find
    /// where the section ends, and summed up in one node.
    pub(crate) fn tagged_section(
        &mut self,
        fields: &'static [FieldSpec],
        out: &mut Vec<Node>,
        desc: &'static str,
    ) -> R<()> {
        let count = self.tagged_count(out, desc)?;
        let mut last_tag: Option<u32> = None;
        let mut skipped_from: Option<usize> = None;
        for i in 0..count {
            if i == self.opts.max_elements {
                skipped_from = Some(self.pos);
            }
            let keep = i < self.opts.max_elements;
            self.tagged_field(fields, &mut last_tag, keep, out)?;
        }
        if let Some(from) = skipped_from {
            let n = count - self.opts.max_elements;
            let mut raw = leaf(
                "omitted",
                "tagged_fields",
                from,
                self.pos - from,
                Region::TaggedFields,
            );
            raw.kind = NodeKind::Raw;
            raw.shape = Shape::Omitted;
            raw.value = Value::Text(format!("{n} more tagged fields, decoded but not kept"));
            out.push(raw);
        }
        Ok(())
    }

    /// The number of tagged fields, checked against the bytes left.
    fn tagged_count(&mut self, out: &mut Vec<Node>, desc: &'static str) -> R<usize> {
        let start = self.pos;
        let count = self.uvarint().map_err(|mut e| {
            e.detail = Detail::TaggedFieldsCount(Box::new(std::mem::replace(
                &mut e.detail,
                Detail::OutOfRange,
            )));
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
        n.desc = desc.into();
        out.push(n);
        // Each tagged field takes at least two bytes (tag and size).
        if count as usize > self.remaining() / 2 {
            return Err(self.err(
                start,
                Detail::TaggedCountMisfit {
                    count,
                    left: self.remaining(),
                },
            ));
        }
        Ok(count as usize)
    }

    /// One tagged field: its tag and size, then its data, decoded when the schema knows the
    /// tag. Pushed when `keep`, or when its value stops the message (to show where).
    fn tagged_field(
        &mut self,
        fields: &'static [FieldSpec],
        last_tag: &mut Option<u32>,
        keep: bool,
        out: &mut Vec<Node>,
    ) -> R<()> {
        let head = self.tag_and_size()?;
        if last_tag.is_some_and(|t| head.tag <= t) {
            self.diag(
                ProblemKind::TaggedFields,
                head.start,
                Detail::TagOrder { tag: head.tag },
            );
        }
        *last_tag = Some(head.tag);
        let known = fields
            .iter()
            .find(|f| f.tag == Some(head.tag) && f.tagged_versions.contains(self.version));
        let mut group = tagged_group(&head, known);
        let data_end = self.pos + head.size;
        let res = match known {
            Some(f) => self.tagged_value(f, data_end, &mut group),
            None => {
                let mut raw = leaf("data", "bytes", self.pos, head.size, Region::TaggedFields);
                raw.kind = NodeKind::Raw;
                raw.value = Value::Bytes(Some((self.pos, head.size)));
                raw.desc = "tag not in the schema for this version".into();
                group.children.push(raw);
                self.pos = data_end;
                Ok(())
            }
        };
        group.len = self.pos - head.start;
        if keep || res.is_err() {
            out.push(group);
        }
        res
    }

    /// A tagged field's tag and size; the size must fit the bytes left. On error nothing is
    /// consumed, so that no tag is read without a node to show it.
    fn tag_and_size(&mut self) -> R<TagHead> {
        let start = self.pos;
        let tag = self.uvarint()?;
        let tag_end = self.pos;
        let size = match self.uvarint() {
            Ok(s) => s as usize,
            Err(e) => {
                self.pos = start;
                return Err(e);
            }
        };
        let size_end = self.pos;
        if size > self.remaining() {
            self.pos = start;
            return Err(self.err(
                start,
                Detail::TaggedSizeMisfit {
                    tag,
                    size,
                    left: self.remaining() + (size_end - start),
                },
            ));
        }
        Ok(TagHead {
            start,
            tag,
            tag_end,
            size,
            size_end,
        })
    }

    /// A known tagged field's value, read within its size; bytes its value leaves are shown
    /// raw and diagnosed.
    fn tagged_value(&mut self, f: &'static FieldSpec, data_end: usize, group: &mut Node) -> R<()> {
        let saved_end = self.end;
        let saved_region = self.region;
        self.end = data_end;
        self.region = Region::TaggedFields;
        let r = self.field(f, &mut group.children);
        self.end = saved_end;
        self.region = saved_region;
        r?;
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
            raw.desc = "bytes of the tagged field left after its value".into();
            self.diag(
                ProblemKind::TaggedFields,
                self.pos,
                Detail::TaggedExtra {
                    field: FieldId::of(f),
                    extra: data_end - self.pos,
                },
            );
            group.children.push(raw);
            self.pos = data_end;
        }
        Ok(())
    }

    fn field(&mut self, f: &'static FieldSpec, out: &mut Vec<Node>) -> R<()> {
        self.path.0.push(Step::Field(FieldId::of(f)));
        let nullable = f.nullable_versions.contains(self.version);
        let before = out.len();
        let res = self.value(&f.ty, nullable, Cow::Borrowed(f.name), Some(f), out);
        // A group cut short by an error (an array's first elements) is pushed all the same;
        // it keeps its field, so that facts can find it by role.
        if let (Err(_), true, Some(n)) = (&res, out.len() > before, out.last_mut()) {
            n.field = Some(FieldId::of(f));
        }
        if let (Ok(()), Some(n)) = (&res, out.last_mut()) {
            n.desc = f.about.into();
            n.field = Some(FieldId::of(f));
            annotate(f, n);
            if let (true, Value::Int(v)) = (f.is_error_code(), &n.value) {
                if *v != 0 {
                    self.errors.push(ErrorEntry {
                        path: self.path.clone(),
                        code: *v as i16,
                    });
                }
            }
        }
        if res.is_ok() {
            self.path.0.pop();
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
        let node = match ty {
            FieldType::String => self.string(name, nullable)?,
            FieldType::Bytes => match spec.map_or(&Content::Plain, |f| &f.content) {
                Content::Plain => self.bytes(name, nullable)?,
                Content::Embedded(layout) => {
                    return self.embedded_field(name, nullable, layout, out)
                }
                Content::Secret => {
                    let n = self.bytes(name, nullable)?;
                    if let Value::Bytes(Some(span)) = n.value {
                        self.secrets.push(span);
                    }
                    n
                }
                Content::Sasl => return self.sasl_field(name, nullable, out),
            },
            FieldType::Records => return self.records_field(name, out),
            FieldType::Struct(sname) => {
                let spec = spec.ok_or_else(|| self.err(self.pos, Detail::NoStructSpec))?;
                return self.struct_field(spec, sname, name, nullable, out);
            }
            FieldType::Array(inner) => {
                return self.array(inner, name, nullable, spec, out);
            }
            fixed => self.primitive(name, fixed)?,
        };
        match (ty, spec) {
            // Only names and ids can say which topic the fields after them are about.
            (FieldType::String | FieldType::Uuid, Some(f)) => {
                let mut node = node;
                self.track_topic(f, &mut node);
                self.keep_value(node, spec, out);
            }
            _ => self.keep_value(node, spec, out),
        }
        Ok(())
    }

    /// A topic name or id: the topic the fields after it (in its struct and below) are about,
    /// for record values whose layout the topic gives (schema-src/records.json). An id those
    /// rules name (the metadata log's) is noted with its name.
    fn track_topic(&mut self, f: &FieldSpec, n: &mut Node) {
        match &n.value {
            Value::Uuid(u) if f.role == Role::TopicId => {
                let layouts = crate::kafka::spec::schema::registry().record_layouts();
                self.topic_layout = layouts.topic_values(None, Some(u));
                if let (Some(name), Note::None) = (layouts.topic_name(u), &n.note) {
                    n.note = Note::TopicName(name.to_string());
                }
            }
            Value::Str(_) if f.names_topic => {
                let layouts = crate::kafka::spec::schema::registry().record_layouts();
                // Below the kept levels the string is not copied: read its bytes.
                let name = self
                    .string_data(n)
                    .and_then(|b| std::str::from_utf8(b).ok());
                self.topic_layout = layouts.topic_values(name, None);
            }
            _ => {}
        }
    }

    /// The bytes of a string node just read, after its length prefix.
    fn string_data(&self, n: &Node) -> Option<&'a [u8]> {
        let len = match n.enc {
            Enc::CompactLen(k) => k.checked_sub(1)? as usize,
            Enc::Int16Len(k) => usize::try_from(k).ok()?,
            _ => return None,
        };
        let end = n.end();
        self.buf.get(end.checked_sub(len)?..end)
    }

    /// A fixed-size value, recorded as a leaf.
    fn primitive(&mut self, name: Cow<'static, str>, ty: &FieldType) -> R<Node> {
        let start = self.pos;
        let (tyname, value) = self.read(|c| read_fixed(c, ty))?;
        let mut n = leaf(name, tyname, start, self.pos - start, self.region);
        n.value = value;
        Ok(n)
    }

    /// Pushes a leaf value's node; below the kept levels only its error code matters.
    fn keep_value(&mut self, node: Node, spec: Option<&'static FieldSpec>, out: &mut Vec<Node>) {
        if !self.discard {
            out.push(node);
            return;
        }
        if let (Some(f), Value::Int(v)) = (spec, &node.value) {
            if *v != 0 && f.is_error_code() {
                self.errors.push(ErrorEntry {
                    path: self.path.clone(),
                    code: *v as i16,
                });
            }
        }
    }

    /// A null where the schema does not allow one: diagnosed, and decoding goes on.
    fn null_checked(&mut self, nullable: bool, at: usize, what: &'static str) {
        if !nullable {
            self.diag(
                ProblemKind::NullNotNullable,
                at,
                Detail::NullNotNullable { what },
            );
        }
    }

    fn string(&mut self, name: Cow<'static, str>, nullable: bool) -> R<Node> {
        let l = self.length(Prefix::Int16, "string")?;
        let value = match l.len {
            None => {
                self.null_checked(nullable, l.start, "string");
                None
            }
            Some(n) => {
                let s = self.read(|c| c.take(n, "string"))?;
                if self.discard {
                    Some(String::new())
                } else {
                    Some(super::cursor::lossy_text(s))
                }
            }
        };
        let mut node = leaf(name, "string", l.start, self.pos - l.start, self.region);
        node.value = Value::Str(value);
        node.enc = enc(l);
        Ok(node)
    }

    pub(in crate::kafka) fn bytes(&mut self, name: Cow<'static, str>, nullable: bool) -> R<Node> {
        let l = self.length(Prefix::Int32, "bytes")?;
        let value = match l.len {
            None => {
                self.null_checked(nullable, l.start, "bytes");
                None
            }
            Some(n) => {
                let at = self.pos;
                self.read(|c| c.take(n, "bytes"))?;
                Some((at, n))
            }
        };
        let mut node = leaf(name, "bytes", l.start, self.pos - l.start, self.region);
        node.value = Value::Bytes(value);
        node.enc = enc(l);
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
        let node = self.bytes(name.clone(), nullable)?;
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
        let mut g = self.byte_parts(name, &node, (at, n), region);
        g.value = Value::Text(parsed.step.label().to_string());
        g.children.extend(parsed.parts);
        out.push(g);
        Ok(())
    }

    /// The node of an array's or a `records` field's length prefix, just read.
    pub(in crate::kafka) fn length_node(&self, l: Length) -> Node {
        let mut n = leaf(
            "length",
            l.prefix.ty(),
            l.start,
            self.pos - l.start,
            self.region,
        );
        n.kind = NodeKind::Length;
        n.value = Value::Int(l.raw);
        n
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
            Cow::Borrowed(spec.elem_name)
        } else if spec.type_name == sname {
            Cow::Borrowed(spec.type_name)
        } else {
            Cow::Owned(sname.to_string())
        };
        let mut node = Node::new(name, ty, start, self.region, NodeKind::Group);
        node.value = Value::Struct;
        if nullable && self.opts.struct_presence_byte {
            let p = self.i8()?;
            let mut pn = leaf("present", "int8", start, 1, self.region);
            pn.shape = Shape::PresenceByte;
            pn.value = Value::Int(p.into());
            pn.desc = "presence byte of a nullable struct: 1 present, -1 null".into();
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
                    Detail::BadPresence { byte: p },
                );
            }
        }
        let keep = self.level.saturating_add(1) < self.opts.keep_depth;
        // A topic met inside this struct is about this struct's fields only.
        let topic = self.topic_layout;
        self.level += 1;
        let r = if keep {
            node.children.reserve(spec.fields.len() + 1);
            self.fields(spec.fields, &mut node.children)
        } else if self.walked(|d| d.walk_fields(spec.fields)) {
            // Below the kept levels the walk reads the fields for what they leave (errors,
            // counts, secrets) without building nodes; where it gives up, the decoder reads
            // them into a scratch list that is thrown away.
            Ok(())
        } else {
            let mut scratch = Vec::new();
            let was = std::mem::replace(&mut self.discard, true);
            let r = self.fields(spec.fields, &mut scratch);
            self.discard = was;
            r
        };
        self.level -= 1;
        self.topic_layout = topic;
        node.len = self.pos - start;
        out.push(node);
        r
    }

    /// An array: its length prefix, then its elements. Elements past `max_elements`, or
    /// past the message's node budget, are decoded (to find the array's end) and summed up
    /// in one node.
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
            Some(f) => Cow::Borrowed(f.type_name),
            None => Cow::Owned(format!("[]{}", inner.display())),
        };
        let mut node = Node::new(name, tyname, start, self.region, NodeKind::Group);
        let res = match self.array_length(nullable, &mut node)? {
            None => Ok(()),
            Some(count) => self.elements(inner, spec, count, &mut node),
        };
        node.len = self.pos - start;
        out.push(node);
        res
    }

    /// An array's length prefix, as the array's first child: the element count, `None` for
    /// null. Every element takes at least one byte, so the length reader's check against the
    /// bytes left also keeps a hostile count from driving the element loop.
    fn array_length(&mut self, nullable: bool, node: &mut Node) -> R<Option<usize>> {
        let l = self.length(Prefix::Int32, "array")?;
        let mut len_node = self.length_node(l);
        if self.flexible {
            len_node.enc = if l.len.is_none() {
                Enc::CompactNull
            } else {
                Enc::CompactCount
            };
        }
        match l.len {
            None => {
                self.null_checked(nullable, l.start, "array");
                len_node.desc = "null array: no elements follow".into();
                node.value = Value::Null;
            }
            Some(count) => {
                len_node.desc = Desc::Elements(count);
                node.value = Value::Array(count);
            }
        }
        // Kept elements, the length before them and a node for those not kept: one
        // allocation (the count was checked against the bytes left).
        let room = match l.len {
            Some(c) if self.level.saturating_add(1) < self.opts.keep_depth => {
                c.min(self.opts.max_elements) + 2
            }
            _ => 1,
        };
        node.children.reserve_exact(room);
        node.children.push(len_node);
        Ok(l.len)
    }

    /// An array's `count` elements, kept in `node` within the budgets.
    fn elements(
        &mut self,
        inner: &FieldType,
        spec: Option<&'static FieldSpec>,
        count: usize,
        node: &mut Node,
    ) -> R<()> {
        let elem_ty: Cow<'static, str> = match spec {
            Some(f) => Cow::Borrowed(f.elem_name),
            None => Cow::Owned(inner.display()),
        };
        let keep = self.opts.max_elements;
        let shallow_ok = self.level.saturating_add(1) < self.opts.keep_depth;
        // Below the kept levels no element is kept: the walk reads them, unless it gives up.
        // (Kept levels go through the decoder even past the budgets, where elements count
        // against the node budget.)
        if !shallow_ok && self.walked(|d| d.walk_elements(inner, spec, count)) {
            return Ok(());
        }
        // Elements past `keep` go to a scratch list that is emptied after each one.
        let mut scratch: Vec<Node> = Vec::new();
        let mut skipped_from: Option<(usize, usize)> = None;
        let mut res = Ok(());
        for i in 0..count {
            let in_budget = i < keep && self.spent.nodes < self.opts.max_nodes;
            if !in_budget && skipped_from.is_none() {
                skipped_from = Some((self.pos, i));
            }
            let kept = in_budget && shallow_ok;
            let dest = if kept {
                &mut node.children
            } else {
                &mut scratch
            };
            res = self.element(inner, spec, elem_ty.clone(), i, kept, dest);
            scratch.clear();
            if res.is_err() {
                break;
            }
        }
        if let (Some((from, first)), true) = (skipped_from, shallow_ok) {
            node.children
                .push(self.omitted_elements(from, count - first, first < keep));
        }
        res
    }

    /// Element `i` of an array, into `dest`; a kept one counts against the node budget.
    fn element(
        &mut self,
        inner: &FieldType,
        spec: Option<&'static FieldSpec>,
        name: Cow<'static, str>,
        i: usize,
        kept: bool,
        dest: &mut Vec<Node>,
    ) -> R<()> {
        let was = self.discard;
        self.discard = was || !kept;
        let outer_skipped = std::mem::take(&mut self.skipped_nodes);
        self.path.0.push(Step::Index(i as u32));
        let r = match inner {
            FieldType::Struct(sname) => match spec {
                Some(s) => self.struct_field(s, sname, name, false, dest),
                None => Err(self.err(self.pos, Detail::NoStructArraySpec)),
            },
            other => self.value(other, false, name, None, dest),
        };
        let skipped = std::mem::replace(&mut self.skipped_nodes, outer_skipped);
        if kept {
            if let Some(last) = dest.last_mut() {
                last.index = Some(i as u32);
                self.spent.nodes += own_nodes(last) + skipped;
            }
        }
        self.discard = was;
        if r.is_ok() {
            self.path.0.pop();
        }
        r
    }

    /// The node that sums up `n` elements decoded but not kept, from offset `from`: past the
    /// message's node budget (`by_nodes`), or past the element limit.
    fn omitted_elements(&self, from: usize, n: usize, by_nodes: bool) -> Node {
        let why = if by_nodes {
            format!(
                "the message passed the node limit of {}",
                self.opts.max_nodes
            )
        } else {
            format!("the element limit of {}", self.opts.max_elements)
        };
        let mut raw = leaf("omitted", "elements", from, self.pos - from, self.region);
        raw.kind = NodeKind::Raw;
        raw.shape = Shape::Omitted;
        raw.value = Value::Text(format!("{n} more elements, decoded but not kept ({why})"));
        raw
    }
}

/// Reads a fixed-size value of type `ty`: its type name and its value.
fn read_fixed(c: &mut Cursor<'_>, ty: &FieldType) -> cursor::Res<(&'static str, Value)> {
    Ok(match ty {
        FieldType::Bool => {
            let [b] = c.fixed("bool")?;
            ("bool", Value::Bool(b != 0))
        }
        FieldType::Int8 => ("int8", Value::Int(c.i8("int8")?.into())),
        FieldType::Int16 => ("int16", Value::Int(c.i16("int16")?.into())),
        FieldType::Int32 => ("int32", Value::Int(c.i32("int32")?.into())),
        FieldType::Int64 => ("int64", Value::Int(c.i64("int64")?)),
        FieldType::Uint16 => ("uint16", Value::Int(c.u16("uint16")?.into())),
        FieldType::Uint32 => ("uint32", Value::Int(c.u32("uint32")?.into())),
        FieldType::Float64 => (
            "float64",
            Value::Float(f64::from_be_bytes(c.fixed("float64")?)),
        ),
        FieldType::Uuid => ("uuid", Value::Uuid(c.fixed("uuid")?)),
        // Variable-size types have their own readers, and `Decoder::value` sends none here.
        other => {
            return Err(ReadError::malformed(
                c.pos,
                Detail::NotFixedSize {
                    ty: other.display(),
                },
            ))
        }
    })
}

/// Where a tagged field's tag and size lie, and what they say.
#[derive(Clone, Copy)]
struct TagHead {
    start: usize,
    tag: u32,
    tag_end: usize,
    size: usize,
    size_end: usize,
}

/// The group of a tagged field, named by the schema or by its tag, with its tag and size.
fn tagged_group(head: &TagHead, known: Option<&'static FieldSpec>) -> Node {
    let TagHead {
        start,
        tag,
        tag_end,
        size,
        size_end,
    } = *head;
    let mut group = Node::new(
        known.map_or_else(
            || Cow::Owned(format!("unknown_tag_{tag}")),
            |f| Cow::Borrowed(f.name),
        ),
        "tagged_field",
        start,
        Region::TaggedFields,
        NodeKind::Group,
    );
    group.shape = Shape::TaggedField;
    group.value = Value::Tagged { tag, size };
    let mut t = leaf(
        "tag",
        "uvarint",
        start,
        tag_end - start,
        Region::TaggedFields,
    );
    t.value = Value::Int(i64::from(tag));
    t.shape = Shape::TagHead;
    t.desc = "tag number of this tagged field".into();
    let mut s = leaf(
        "size",
        "uvarint",
        tag_end,
        size_end - tag_end,
        Region::TaggedFields,
    );
    s.value = Value::Int(size as i64);
    s.shape = Shape::TagHead;
    s.desc = "bytes of tagged data that follow".into();
    group.children.push(t);
    group.children.push(s);
    group
}

impl Decoder<'_> {
    /// A bytes field shown as its parts: a group over `node`'s span holding the length prefix
    /// of the `n` bytes at `at`; the caller adds what the bytes hold.
    pub(super) fn byte_parts(
        &self,
        name: Cow<'static, str>,
        node: &Node,
        (at, n): (usize, usize),
        region: Region,
    ) -> Node {
        let mut g = Node::new(name, "bytes", node.offset, region, NodeKind::Group);
        g.shape = Shape::ByteParts;
        g.len = node.len;
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
        g
    }
}

/// How a string's or bytes' length was written, for the byte layout. The number came from a
/// prefix of that width, so the casts keep it whole.
pub(in crate::kafka) fn enc(l: Length) -> Enc {
    match l.prefix {
        Prefix::Compact => Enc::CompactLen(l.raw as u32),
        Prefix::Int16 => Enc::Int16Len(l.raw as i16),
        Prefix::Int32 | Prefix::Varint => Enc::Int32Len(l.raw as i32),
    }
}

/// Adds the names behind numbers: enumerations, error codes, API keys, authorized-operation
/// bits.
fn annotate(f: &FieldSpec, n: &mut Node) {
    let Value::Int(v) = n.value else { return };
    if let Some(e) = f.enumeration {
        n.note = Note::of_enum(e, v);
    } else if f.is_error_code() && v != 0 {
        n.note = Note::Error(ErrorCode(v as i16));
    } else if f.ty == FieldType::Int16 && f.name == "ApiKey" {
        n.note = Note::Api(ApiKey(v as i16));
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
