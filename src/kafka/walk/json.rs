//! `--json` without a tree: the message body's JSON written while the generated walk walks
//! the body at every depth, straight into one buffer, keys taken from the static spec tables.
//! What it writes is what src/render/json.rs writes from the decoder's tree of the same body:
//! wire details (lengths, tag counts, presence bytes) left out, known tagged fields under their
//! names, unknown ones under `_unknown_tags`, enumerations named in `<name>_name`.
//!
//! Two things are left as holes in the bytes ([`Hole`]), for the renderer to fill:
//! - the nodes the decoder makes of a records field or a consumer protocol's bytes (batches,
//!   records and headers are written from them as from a tree's);
//! - a topic id that the topic names learnt so far may name (`<name>_name`): known only once
//!   the message has been seen by them (`TopicNames::observe`), after decoding.
//!
//! Where the walk gives up, or meets what this writer does not write (a float, secrets to be
//! masked, records of the metadata log whose values name topics), the decoder is left as it
//! was and reads the body into a tree, which the renderer writes as before.
//! tests/json_walk.rs holds the two ways to the same bytes on every frame of every sample.

use super::collect::{Collector, Val};
use super::decode::Decoder;
use super::generated::{two_levels_to_collector, walk_body, Visit, W};
use super::interpreted::GiveUp;
use super::node::{Node, NodeKind, Note, Shape, Value};
use crate::kafka::meaning::interned::Name;
use crate::kafka::spec::schema::{
    registry, Content, FieldSpec, FieldType, Layout, MessageSpec, Role,
};
use crate::text::json::put_str;
use std::borrow::Cow;

/// A message body's JSON, written by the walk, with the places the renderer fills.
#[derive(Debug, Clone, Default)]
pub struct JsonBody {
    /// The body's object, holes left out.
    pub bytes: Vec<u8>,
    /// In the order of their places.
    pub holes: Vec<Hole>,
}

/// A place in [`JsonBody::bytes`] and what goes there.
#[derive(Debug, Clone)]
pub struct Hole {
    /// The offset in the bytes before which the fill goes.
    pub at: usize,
    pub fill: Fill,
}

/// What goes in a hole.
#[derive(Debug, Clone)]
pub enum Fill {
    /// Members of the object, as the tree's nodes of the same fields (a records field, a
    /// group protocol's bytes): the separator before them is written, none between them.
    Fields(Vec<Node>),
    /// A topic id whose name, once learnt, follows it as `"<field>_name": name`.
    TopicId {
        field: &'static str,
        id: [u8; 16],
        name: Option<Name>,
    },
}

impl JsonBody {
    /// Names the topic ids the names learnt so far know, as the topic names note a tree's
    /// ids (a name once given stays).
    pub fn name_ids(&mut self, mut name: impl FnMut(&[u8; 16]) -> Option<Name>) {
        for h in &mut self.holes {
            if let Fill::TopicId {
                id, name: n @ None, ..
            } = &mut h.fill
            {
                *n = name(id);
            }
        }
    }
}

/// An object or an array being written.
struct Open {
    /// A plain (untagged) field of the struct with the Name role holds a name: the topic
    /// names leave its untagged ids alone, as they leave a tree's.
    named: bool,
    /// Where its ids and unknown tags begin in the visitor's lists.
    ids: u32,
    unknown: u32,
}

/// A topic id met in the object being written, made a hole once the object ends (whether the
/// object names itself is known then).
struct Id {
    at: usize,
    field: &'static str,
    id: [u8; 16],
    tagged: bool,
}

/// The visitor: the summary's collector for the first two levels (the message's facts), and
/// the JSON of every level.
pub(super) struct JsonWalk<'a> {
    c: Box<Collector>,
    /// The frame the strings and bytes lie in.
    buf: &'a [u8],
    out: Vec<u8>,
    holes: Vec<Hole>,
    open: Vec<Open>,
    /// Nothing written yet in the innermost object or array.
    first: bool,
    ids: Vec<Id>,
    /// Unknown tagged fields of the open objects: (tag, at, length).
    unknown: Vec<(u32, usize, usize)>,
    /// The nodes of a group protocol's bytes, for the field they are the value of.
    protocol: Option<Node>,
    /// Something met that this writer does not write: the tree's way then.
    bail: bool,
    /// Things told of: a bound of the nodes the decoder would have counted for them.
    told: usize,
}

thread_local! {
    /// The visitor's lists, kept between messages.
    static SPARE: std::cell::Cell<Option<(Vec<Open>, Vec<Id>)>> =
        const { std::cell::Cell::new(None) };
}

impl<'a> JsonWalk<'a> {
    fn new(c: Box<Collector>, buf: &'a [u8], size: usize) -> JsonWalk<'a> {
        let (mut open, mut ids) = SPARE.take().unwrap_or_default();
        open.clear();
        ids.clear();
        let mut v = JsonWalk {
            c,
            buf,
            // Most bodies' JSON is a few times their bytes (a Metadata answer's eight).
            out: Vec::with_capacity(size.saturating_mul(4).saturating_add(64)),
            holes: Vec::new(),
            open,
            first: true,
            ids,
            unknown: Vec::new(),
            protocol: None,
            bail: false,
            told: 0,
        };
        v.begin(false);
        v
    }

    /// The body's JSON, once the walk has ended; gives the lists back to the thread.
    fn finish(mut self) -> (Box<Collector>, JsonBody) {
        self.end_object();
        // Ids become holes as their objects end, inner objects first.
        self.holes.sort_by_key(|h| h.at);
        SPARE.set(Some((self.open, self.ids)));
        (
            self.c,
            JsonBody {
                bytes: self.out,
                holes: self.holes,
            },
        )
    }

    /// Opens an object or an array (its key or separator written).
    fn begin(&mut self, array: bool) {
        self.out.push(if array { b'[' } else { b'{' });
        self.first = true;
        self.open.push(Open {
            named: false,
            ids: self.ids.len() as u32,
            unknown: self.unknown.len() as u32,
        });
    }

    /// The separator before a member or an element, if it is not the first.
    #[inline]
    fn sep(&mut self) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
    }

    /// `"name":`, a field's name from the tables (names of fields need no escaping).
    #[inline]
    fn key(&mut self, name: &'static str) {
        let w = &mut self.out;
        w.reserve(name.len() + 4);
        // Copies of constant length: stores, not calls.
        if self.first {
            w.push(b'"');
        } else {
            w.extend_from_slice(b",\"");
        }
        self.first = false;
        w.extend_from_slice(name.as_bytes());
        w.extend_from_slice(b"\":");
    }

    fn end_array(&mut self) {
        self.open.pop();
        self.out.push(b']');
        // It was a member or an element of what holds it.
        self.first = false;
    }

    /// Ends the innermost object: its unknown tags, then its ids become holes (those the
    /// object's own name leaves unnamed left out).
    fn end_object(&mut self) {
        let Some(o) = self.open.pop() else {
            return;
        };
        let from = o.unknown as usize;
        if self.unknown.len() > from {
            if !self.first {
                self.out.push(b',');
            }
            self.out.extend_from_slice(b"\"_unknown_tags\":[");
            for (i, (tag, at, n)) in self.unknown.drain(from..).enumerate() {
                if i > 0 {
                    self.out.push(b',');
                }
                self.out.extend_from_slice(b"{\"tag\":");
                put_int(&mut self.out, tag);
                self.out.extend_from_slice(b",\"data\":\"");
                let data = self.buf.get(at..at.saturating_add(n)).unwrap_or(&[]);
                push_hex(&mut self.out, data);
                self.out.extend_from_slice(b"\"}");
            }
            self.out.push(b']');
        }
        for id in self.ids.drain(o.ids as usize..) {
            if o.named && !id.tagged {
                continue;
            }
            self.holes.push(Hole {
                at: id.at,
                fill: Fill::TopicId {
                    field: id.field,
                    id: id.id,
                    name: None,
                },
            });
        }
        self.out.push(b'}');
        // It was a member or an element of what holds it.
        self.first = false;
    }

    /// A scalar value as the tree's node of it is written (`ty` its field's type).
    fn scalar(&mut self, ty: &FieldType, val: Val) {
        let w = &mut self.out;
        match val {
            Val::Int(i) if *ty == FieldType::Bool => {
                w.extend_from_slice(if i != 0 { b"true" } else { b"false" })
            }
            // Most integers are one digit (error codes, indexes, ids): one byte, no copy.
            Val::Int(i @ 0..=9) => w.push(b'0' + i as u8),
            Val::Int(i) => put_int(w, i),
            Val::Str(Some((at, n))) => {
                let bytes = self.buf.get(at..at.saturating_add(n)).unwrap_or(&[]);
                match std::str::from_utf8(bytes) {
                    Ok(s) => put_str(w, s),
                    Err(_) => put_str(w, &String::from_utf8_lossy(bytes)),
                }
            }
            Val::Bytes(Some((at, n))) => {
                w.push(b'"');
                push_hex(w, self.buf.get(at..at.saturating_add(n)).unwrap_or(&[]));
                w.push(b'"');
            }
            Val::Uuid(u) => {
                w.push(b'"');
                crate::text::push_uuid(w, &u);
                w.push(b'"');
            }
            Val::Str(None) | Val::Bytes(None) | Val::Array(None, _) | Val::Struct(false, _) => {
                w.extend_from_slice(b"null")
            }
            // A float, bytes whose span the walk does not give: not written here.
            Val::Array(..) | Val::Struct(..) | Val::Records(..) | Val::Other => {
                self.bail = true;
                w.extend_from_slice(b"null")
            }
        }
    }

    /// What follows a field's value: the name of an enumeration's value, the name of a topic
    /// id (now, when the tables name it; else once learnt).
    fn extras(&mut self, f: &'static FieldSpec, tagged: bool, val: Val) {
        match val {
            Val::Int(i) if f.ty != FieldType::Bool => {
                let Some(e) = f.enumeration else { return };
                let Note::Enum { name, .. } = Note::of_enum(e, i) else {
                    return;
                };
                self.suffixed_key(f.name, b"_name\":");
                match name {
                    Some(n) => put_str(&mut self.out, n),
                    None => self.out.extend_from_slice(b"null"),
                }
            }
            Val::Uuid(u) => {
                let layouts = registry().record_layouts();
                let known = (f.role == Role::TopicId)
                    .then(|| layouts.topic_name(&u))
                    .flatten();
                if let Some(n) = known {
                    self.suffixed_key(f.name, b"_name\":");
                    put_str(&mut self.out, n);
                    return;
                }
                self.ids.push(Id {
                    at: self.out.len(),
                    field: f.name,
                    id: u,
                    tagged,
                });
            }
            _ => {}
        }
    }

    /// `,"<name><suffix>`, the suffix closing the key.
    fn suffixed_key(&mut self, name: &'static str, suffix: &[u8]) {
        self.out.extend_from_slice(b",\"");
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(suffix);
    }

    /// Members the renderer writes from the decoder's nodes of them.
    fn fields_hole(&mut self, nodes: Vec<Node>) {
        self.sep();
        self.holes.push(Hole {
            at: self.out.len(),
            fill: Fill::Fields(nodes),
        });
    }
}

fn put_int(w: &mut Vec<u8>, i: impl itoa::Integer) {
    w.extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
}

fn push_hex(w: &mut Vec<u8>, data: &[u8]) {
    w.reserve(data.len() * 2);
    for &b in data {
        w.extend_from_slice(&crate::text::hex_pair(b));
    }
}

/// Whether `val` is the value of a struct or an array whose contents were told of.
fn opened(val: Val) -> bool {
    matches!(val, Val::Struct(true, _) | Val::Array(Some(_), _))
}

impl Visit for JsonWalk<'_> {
    const DEEP: bool = true;

    fn field(&mut self, level: usize, f: &'static FieldSpec, tagged: bool, val: Val) {
        if level < 2 {
            self.c.field(level, f, tagged, val);
        }
        self.told += 1;
        if opened(val) {
            match val {
                Val::Array(..) => self.end_array(),
                _ => self.end_object(),
            }
            return;
        }
        if let (true, Val::Bytes(Some(_))) = (self.protocol.is_some(), val) {
            if let Some(g) = self.protocol.take() {
                self.fields_hole(vec![g]);
            }
            return;
        }
        if let (false, Role::Name, Val::Str(Some((_, n)))) = (tagged, f.role, val) {
            if let (Some(o), true) = (self.open.last_mut(), n > 0) {
                o.named = true;
            }
        }
        self.key(f.name);
        self.scalar(&f.ty, val);
        self.extras(f, tagged, val);
    }
    fn enter(&mut self, f: &'static FieldSpec) {
        self.told += 1;
        self.key(f.name);
        self.begin(matches!(f.ty, FieldType::Array(_)));
    }
    fn element(&mut self, _: &'static FieldSpec, _: usize) {
        self.told += 1;
        self.sep();
        self.begin(false);
    }
    fn leave(&mut self) {
        self.end_object();
    }
    fn item(&mut self, f: &'static FieldSpec, val: Val) {
        self.told += 1;
        self.sep();
        let ty = match f.ty {
            FieldType::Array(t) => t,
            _ => &FieldType::Int8,
        };
        self.scalar(ty, val);
    }
    fn unknown_tag(&mut self, tag: u32, (at, n): (usize, usize)) {
        self.told += 1;
        self.unknown.push((tag, at, n));
    }
    fn records(&mut self, d: &mut Decoder<'_>, f: &'static FieldSpec) -> W {
        // Decoded into nodes as the decoder decodes them, for the renderer to write.
        let mut nodes = Vec::new();
        let was = std::mem::replace(&mut d.discard, false);
        let read = d.records_field(Cow::Borrowed(f.name), &mut nodes);
        d.discard = was;
        read.map_err(|_| GiveUp)?;
        self.told += 1;
        self.fields_hole(nodes);
        Ok(())
    }
    fn embedded(
        &mut self,
        d: &mut Decoder<'_>,
        f: &'static FieldSpec,
        data: Option<(usize, usize)>,
    ) -> W {
        let (Content::Embedded(layout @ Layout::ConsumerProtocol(_)), Some((at, n))) =
            (&f.content, data)
        else {
            return Ok(());
        };
        // Read by the decoder into nodes, as it reads them into its tree.
        let pos = d.pos;
        let was = std::mem::replace(&mut d.discard, false);
        let mut g = Node::new(f.name, "bytes", at, d.region, NodeKind::Group);
        g.shape = Shape::ByteParts;
        let (text, _) = d.embedded(at, at + n, layout, &mut g.children);
        g.value = Value::Text(text);
        d.discard = was;
        d.pos = pos;
        self.protocol = Some(g);
        Ok(())
    }

    two_levels_to_collector!();
    fn nodes(&self) -> usize {
        // A thing told of is a node or two of the decoder's (an array's group and length):
        // four each bounds them from above, as for the analyses' walk.
        self.c.nodes().saturating_add(self.told.saturating_mul(4))
    }
}

/// Walks the body of `spec` with the generated walk, writing its JSON: true if it covered the
/// body, the JSON then in the decoder's `json` and the facts in its collector; otherwise the
/// decoder is as it was before, for it to read the body into a tree.
pub(super) fn write_body(d: &mut Decoder<'_>, spec: &'static MessageSpec) -> bool {
    let Some(file) = spec.walk.filter(|_| d.opts.generated_walk) else {
        return false;
    };
    // Secrets are masked in the frame the renderer is given: the tree's way shows them so.
    if spec.has_secrets {
        return false;
    }
    let size = d.end.saturating_sub(d.pos);
    let mut v = JsonWalk::new(Collector::take(spec.api_key, spec.direction), d.buf, size);
    let version = d.version;
    let secrets = d.secrets.len();
    let done = d.walked(|d| {
        walk_body(file, version, d, &mut v).unwrap_or(Err(GiveUp))?;
        d.at_end()?;
        // Records whose values have a layout (the metadata log's) hold ids the topic names
        // note in the tree, and masked secrets may hide in records: the tree's way.
        if v.bail || d.secrets.len() != secrets || !d.record_types.types.is_empty() {
            return Err(GiveUp);
        }
        Ok(())
    });
    let (c, body) = v.finish();
    if !done {
        Collector::give_back(c);
        return false;
    }
    d.collector = Some(c);
    d.json = Some(Box::new(body));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An id noted in the object that names itself stays unnamed; a tagged one does not.
    #[test]
    fn named_objects_keep_their_plain_ids_unnamed() {
        let c = Collector::take(3, crate::kafka::spec::schema::Direction::Response);
        let mut v = JsonWalk::new(c, b"", 0);
        v.begin(false);
        v.ids.push(Id {
            at: 1,
            field: "TopicId",
            id: [1; 16],
            tagged: false,
        });
        v.ids.push(Id {
            at: 2,
            field: "Other",
            id: [2; 16],
            tagged: true,
        });
        if let Some(o) = v.open.last_mut() {
            o.named = true;
        }
        v.end_object();
        let (_, body) = v.finish();
        let fields: Vec<&str> = body
            .holes
            .iter()
            .filter_map(|h| match h.fill {
                Fill::TopicId { field, .. } => Some(field),
                Fill::Fields(_) => None,
            })
            .collect();
        assert_eq!(fields, ["Other"]);
        assert_eq!(body.bytes, b"{{}}");
    }
}
