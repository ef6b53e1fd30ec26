//! The validate-only walk: the parts of a message below the levels a view keeps, read for
//! what they leave behind (where they end, their error codes, secrets, record counts, the
//! topic they are about) without building a node.
//!
//! The decoder builds every node of such a part and throws it away: three quarters of the
//! summary's time went there. The walk covers the common shapes only. When it meets anything
//! that makes the decoder note a problem or build something it keeps (a read error, a null
//! where none is allowed, a bad presence byte, misordered or oversized tagged fields, an
//! embedded message, a SASL exchange), it gives up: the decoder's state is put back as it was
//! before the part and the decoder reads the part itself, so that what comes out is the
//! decoder's, byte for byte.

use super::decode::Decoder;
use super::node::Region;
use crate::kafka::meaning::problem::{ErrorEntry, Step};
use crate::kafka::spec::schema::{Content, FieldId, FieldSpec, FieldType, Layout, Role};
use std::borrow::Cow;

/// The walk met something only the decoder handles.
pub(super) struct GiveUp;

type W = Result<(), GiveUp>;

/// The decoder's state before a walk, to go back to when the walk gives up.
pub(super) struct Mark {
    pos: usize,
    end: usize,
    region: Region,
    path: usize,
    errors: usize,
    secrets: usize,
    diagnoses: usize,
    records: (i64, usize),
    record_types: crate::kafka::meaning::log::LogMark,
    batch_facts: usize,
    spent: super::decode::Spent,
    next_source: u16,
    topic_layout: Option<&'static crate::kafka::spec::schema::Layout>,
    level: usize,
}

impl<'a> Decoder<'a> {
    fn mark(&self) -> Mark {
        Mark {
            pos: self.pos,
            end: self.end,
            region: self.region,
            path: self.path_depth(),
            errors: self.errors.len(),
            secrets: self.secrets.len(),
            diagnoses: self.diagnoses.len(),
            records: self.records,
            record_types: self.record_types.mark(),
            batch_facts: self.batch_facts.len(),
            spent: self.spent,
            next_source: self.next_source,
            topic_layout: self.topic_layout,
            level: self.level,
        }
    }

    fn restore(&mut self, m: Mark) {
        self.pos = m.pos;
        self.end = m.end;
        self.region = m.region;
        self.truncate_path(m.path);
        self.errors.truncate(m.errors);
        self.secrets.truncate(m.secrets);
        self.diagnoses.truncate(m.diagnoses);
        self.records = m.records;
        self.record_types.restore(m.record_types);
        self.batch_facts.truncate(m.batch_facts);
        self.spent = m.spent;
        self.next_source = m.next_source;
        self.topic_layout = m.topic_layout;
        self.level = m.level;
    }

    /// Runs `walk`; true if it covered its part. If it gave up, the decoder is as it was
    /// before, for the caller to decode the part.
    pub(super) fn walked(&mut self, walk: impl FnOnce(&mut Self) -> W) -> bool {
        let mark = self.mark();
        let was = std::mem::replace(&mut self.discard, true);
        let ok = walk(self).is_ok();
        self.discard = was;
        if !ok {
            self.restore(mark);
        }
        ok
    }

    /// The nodes the decoder would keep for `f` at this level, if the walk can read it in
    /// their place: one for a plain value, two (the group and its length) for an array whose
    /// elements lie below the kept levels. `None` for what the walk leaves to the decoder
    /// (structs, record sets, secrets, embedded messages) or whose elements would be kept.
    pub(super) fn walkable_nodes(&self, f: &FieldSpec) -> Option<usize> {
        match &f.ty {
            FieldType::String => Some(1),
            FieldType::Bytes => (f.content == Content::Plain).then_some(1),
            FieldType::Array(_) => {
                (self.level.saturating_add(1) >= self.opts.keep_depth).then_some(2)
            }
            ty => ty.fixed_width().map(|_| 1),
        }
    }

    /// A struct's fields at this version, then its tagged fields (as `Decoder::fields`).
    pub(super) fn walk_fields(&mut self, fields: &'static [FieldSpec]) -> W {
        for f in fields {
            if !f.versions.contains(self.version) {
                continue;
            }
            if self.flexible && f.tagged_versions.contains(self.version) {
                continue;
            }
            self.walk_field(f)?;
        }
        if self.flexible {
            self.walk_tagged_section(fields)?;
        }
        Ok(())
    }

    pub(super) fn walk_field(&mut self, f: &'static FieldSpec) -> W {
        self.walk_field_as(f, false)
    }

    /// A field, `tagged` when it is a tagged field's value.
    fn walk_field_as(&mut self, f: &'static FieldSpec, tagged: bool) -> W {
        self.push_step(Step::Field(FieldId::of(f)));
        let nullable = f.nullable_versions.contains(self.version);
        if self.collects_here() {
            self.collect_field(f, nullable, tagged)?;
        } else {
            self.walk_value(&f.ty, nullable, Some(f))?;
        }
        self.pop_step();
        Ok(())
    }

    pub(super) fn walk_value(
        &mut self,
        ty: &FieldType,
        nullable: bool,
        spec: Option<&'static FieldSpec>,
    ) -> W {
        if let Some(n) = ty.fixed_width() {
            return self.walk_fixed(ty, n, spec);
        }
        match ty {
            FieldType::String => self.walk_string(nullable, spec).map(|_| ()),
            FieldType::Bytes => match spec.map_or(&Content::Plain, |f| &f.content) {
                Content::Plain => self.walk_bytes(nullable).map(|_| ()),
                Content::Secret => {
                    if let Some(span) = self.walk_bytes(nullable)? {
                        self.secrets.push(span);
                    }
                    Ok(())
                }
                // A group protocol's bytes leave nothing when decoded: whatever they hold,
                // the decoder finds no problem in them (bytes of another protocol are shown
                // raw), no error code and no secret. The members they name are for the
                // analyses, which decode the tree. The nodes the decoder makes of them count
                // against its node budget, which the collector's estimate leaves out: in every
                // body that holds them, their array is the body's last and gives only the
                // members, so no fact the summary reads depends on where the budget ends.
                Content::Embedded(Layout::ConsumerProtocol(_)) => {
                    self.walk_bytes(nullable).map(|_| ())
                }
                Content::Embedded(_) | Content::Sasl => Err(GiveUp),
            },
            // Record batches have a decoder of their own, which builds nodes anyway.
            FieldType::Records => {
                let name = spec.map_or(Cow::Borrowed("records"), |f| Cow::Borrowed(f.name));
                // The node is thrown away: none is made where the records need not be read.
                self.records_unkept(name).map_err(|_| GiveUp)
            }
            FieldType::Struct(_) => self.walk_struct(spec.ok_or(GiveUp)?, nullable),
            FieldType::Array(inner) => self.walk_array(inner, nullable, spec),
            _ => Err(GiveUp),
        }
    }

    /// A fixed-size value: only an error code's and a topic id's value matter.
    fn walk_fixed(&mut self, ty: &FieldType, n: usize, spec: Option<&'static FieldSpec>) -> W {
        let at = self.pos;
        if n > self.remaining() {
            return Err(GiveUp);
        }
        self.pos += n;
        let Some(f) = spec else { return Ok(()) };
        let data = self.slice(at, n);
        if f.is_error_code() {
            let code = match *data {
                [a, b] => i16::from_be_bytes([a, b]),
                _ => 0,
            };
            if code != 0 {
                self.errors.push(ErrorEntry {
                    path: self.path().clone(),
                    code,
                });
            }
        } else if *ty == FieldType::Uuid && f.role == Role::TopicId {
            let u: [u8; 16] = data.try_into().map_err(|_| GiveUp)?;
            self.topic_layout = crate::kafka::spec::schema::registry()
                .record_layouts()
                .topic_values(None, Some(&u));
        }
        Ok(())
    }

    /// A length prefix as the decoder reads it; a null where none is allowed gives up (the
    /// decoder diagnoses it).
    pub(super) fn walk_length(
        &mut self,
        classic: super::cursor::Prefix,
        what: &'static str,
        nullable: bool,
    ) -> Result<Option<usize>, GiveUp> {
        let len = match self.short_length(classic) {
            Some(len) => len,
            // Longer forms, and every bad length, go through the cursor's reader.
            None => self.length(classic, what).map_err(|_| GiveUp)?.len,
        };
        if len.is_none() && !nullable {
            return Err(GiveUp);
        }
        Ok(len)
    }

    /// The common length prefixes read in place (a one-byte compact length, an int16 or
    /// int32 one), as the cursor's reader would: `Some(None)` for null, `None` when the
    /// cursor's reader must decide (a longer varint, a negative or too long length).
    fn short_length(&mut self, classic: super::cursor::Prefix) -> Option<Option<usize>> {
        use super::cursor::Prefix;
        let at = self.pos;
        let (raw, width) = if self.flexible {
            match *self.slice(at, 1) {
                [b] if b < 0x80 => (i64::from(b) - 1, 1),
                _ => return None,
            }
        } else {
            match (classic, self.slice(at, 4)) {
                (Prefix::Int16, &[a, b, ..]) => (i64::from(i16::from_be_bytes([a, b])), 2),
                (Prefix::Int32, &[a, b, c, d]) => (i64::from(i32::from_be_bytes([a, b, c, d])), 4),
                _ => return None,
            }
        };
        if at + width > self.end {
            return None;
        }
        let left = self.end - at - width;
        let len = match raw {
            -1 => None,
            n if n < 0 || n as u64 > left as u64 => return None,
            n => Some(n as usize),
        };
        self.pos = at + width;
        Some(len)
    }

    /// A string: where its bytes lie, `None` for null.
    pub(super) fn walk_string(
        &mut self,
        nullable: bool,
        spec: Option<&'static FieldSpec>,
    ) -> Result<Option<(usize, usize)>, GiveUp> {
        let len = self.walk_length(super::cursor::Prefix::Int16, "string", nullable)?;
        let at = self.pos;
        if let Some(n) = len {
            if n > self.remaining() {
                return Err(GiveUp);
            }
            self.pos += n;
        }
        // A topic's name says which topic the fields after it are about.
        if spec.is_some_and(|f| f.names_topic) {
            let name = len.and_then(|n| std::str::from_utf8(self.slice(at, n)).ok());
            self.topic_layout = crate::kafka::spec::schema::registry()
                .record_layouts()
                .topic_values(name, None);
        }
        Ok(len.map(|n| (at, n)))
    }

    /// A bytes value: where its data lies, `None` for null.
    fn walk_bytes(&mut self, nullable: bool) -> Result<Option<(usize, usize)>, GiveUp> {
        let Some(n) = self.walk_length(super::cursor::Prefix::Int32, "bytes", nullable)? else {
            return Ok(None);
        };
        let at = self.pos;
        if n > self.remaining() {
            return Err(GiveUp);
        }
        self.pos += n;
        Ok(Some((at, n)))
    }

    /// A struct (as `Decoder::struct_field` below the kept levels).
    pub(super) fn walk_struct(&mut self, spec: &'static FieldSpec, nullable: bool) -> W {
        if self.walk_presence(nullable)? {
            self.walk_struct_fields(spec)?;
        }
        Ok(())
    }

    /// A nullable struct's presence byte, where the encoding has one: false for null.
    pub(super) fn walk_presence(&mut self, nullable: bool) -> Result<bool, GiveUp> {
        if nullable && self.opts.struct_presence_byte {
            let Some(&p) = self.slice(self.pos, 1).first() else {
                return Err(GiveUp);
            };
            self.pos += 1;
            match p as i8 {
                p if p < 0 => return Ok(false),
                1 => {}
                _ => return Err(GiveUp),
            }
        }
        Ok(true)
    }

    /// A present struct's fields, one level down.
    pub(super) fn walk_struct_fields(&mut self, spec: &'static FieldSpec) -> W {
        let topic = self.topic_layout;
        self.level += 1;
        self.walk_fields(spec.fields)?;
        self.level -= 1;
        self.topic_layout = topic;
        Ok(())
    }

    fn walk_array(
        &mut self,
        inner: &FieldType,
        nullable: bool,
        spec: Option<&'static FieldSpec>,
    ) -> W {
        match self.walk_length(super::cursor::Prefix::Int32, "array", nullable)? {
            None => Ok(()),
            Some(count) => self.walk_elements(inner, spec, count),
        }
    }

    /// An array's `count` elements.
    pub(super) fn walk_elements(
        &mut self,
        inner: &FieldType,
        spec: Option<&'static FieldSpec>,
        count: usize,
    ) -> W {
        for i in 0..count {
            self.push_step(Step::Index(i as u32));
            match inner {
                FieldType::Struct(_) => self.walk_struct(spec.ok_or(GiveUp)?, false)?,
                other => self.walk_value(other, false, None)?,
            }
            self.pop_step();
        }
        Ok(())
    }

    /// The tagged fields that end a struct in flexible versions. Those in the schema are
    /// walked within their size; the others are stepped over.
    fn walk_tagged_section(&mut self, fields: &'static [FieldSpec]) -> W {
        let count = self.uvarint().map_err(|_| GiveUp)? as usize;
        // Each tagged field takes at least two bytes (tag and size).
        if count > self.remaining() / 2 {
            return Err(GiveUp);
        }
        if self.collects_here() {
            self.collect_tagged_count(count)?;
        }
        let mut last_tag: Option<u32> = None;
        for _ in 0..count {
            let tag = self.uvarint().map_err(|_| GiveUp)?;
            let size = self.uvarint().map_err(|_| GiveUp)? as usize;
            if size > self.remaining() || last_tag.is_some_and(|t| tag <= t) {
                return Err(GiveUp);
            }
            last_tag = Some(tag);
            let data_end = self.pos + size;
            let known = fields
                .iter()
                .find(|f| f.tag == Some(tag) && f.tagged_versions.contains(self.version));
            match known {
                // The decoder lists a tagged error code twice below the kept levels: leave
                // that to it.
                Some(f) if f.is_error_code() => return Err(GiveUp),
                Some(f) => self.walk_tagged_value(f, data_end)?,
                None => self.pos = data_end,
            }
        }
        Ok(())
    }

    fn walk_tagged_value(&mut self, f: &'static FieldSpec, data_end: usize) -> W {
        let (end, region) = (self.end, self.region);
        self.end = data_end;
        self.region = Region::TaggedFields;
        self.walk_field_as(f, true)?;
        self.end = end;
        self.region = region;
        // Bytes the value leaves are diagnosed by the decoder.
        if self.pos != data_end {
            return Err(GiveUp);
        }
        Ok(())
    }
}
