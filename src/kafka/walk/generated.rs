//! What the generated walks (src/kafka/walk/generated/walks/, written by kdissect-codegen
//! from the specs: codegen/src/walks.rs) stand on: the [`Visit`] interface they report to,
//! and the decoder's reads they are made of. A walk is named per (API, direction, version),
//! `metadata_response_v13`, and per struct, `metadata_response_topic_v10_12`; it reads a body
//! for what the summary and the statistics need, reports the fields of the body's first two
//! levels to a [`Visit`]or, and gives up wherever the interpreted walk
//! (src/kafka/walk/interpreted.rs and src/kafka/walk/collect.rs) gives up, so that the
//! decoder reads those bodies.
//!
//! Which fields a version has, whether they are tagged, how their lengths are written and
//! what their types are, the interpreted walk decides for every field of every message; a
//! generated walk had it decided when it was written. tests/facts_walk.rs and the
//! `facts_walk` fuzz target hold the two walks to the same facts, problems and verdicts.

use super::collect::{Collector, Val};
use super::cursor::Prefix;
use super::decode::Decoder;
use super::interpreted::GiveUp;
use super::node::Region;
use crate::kafka::meaning::problem::{ErrorEntry, Step};
use crate::kafka::spec::schema::{FieldId, FieldSpec, Role};
use std::borrow::Cow;

pub(super) type W = Result<(), GiveUp>;

/// What a walk reports of a body, in the order it meets it: the interface between walking a
/// body and gathering anything from it.
///
/// Every visitor is told of the body's first two levels (`field` at levels 0 and 1, the body's
/// arrays, structs and elements). A visitor that sets [`Visit::DEEP`] is told of every depth:
/// each struct or array it enters (`enter`, then its value through `field` once it ends),
/// each array element (`element` … `leave`, or `item` for a scalar), each field below with
/// level 2, each tagged field the spec does not know, and the records and embedded messages
/// through their hooks. The others are not: below the second level their walk steps over
/// what it does not read by arithmetic, and the calls they would not heed are not compiled in.
pub(super) trait Visit {
    /// Whether the visitor is told of the fields below the body's first two levels.
    const DEEP: bool = false;
    /// A field at `level` (0 the body's, 1 the next, 2 any deeper), with its value; `tagged`
    /// when it was a tagged field. A struct's or an array's is reported when it ends.
    fn field(&mut self, level: usize, f: &'static FieldSpec, tagged: bool, val: Val);
    /// The struct or the non-null array of field `f` begins: its fields or elements follow,
    /// then its `field`.
    #[inline(always)]
    fn enter(&mut self, _f: &'static FieldSpec) {}
    /// Element `i` of the array of field `f`, a struct, begins: its fields follow, then
    /// `leave`.
    #[inline(always)]
    fn element(&mut self, _f: &'static FieldSpec, _i: usize) {}
    /// The struct element begun last ends.
    #[inline(always)]
    fn leave(&mut self) {}
    /// A scalar element of the array of field `f`, with its value.
    #[inline(always)]
    fn item(&mut self, _f: &'static FieldSpec, _val: Val) {}
    /// A tagged field the spec does not know: its tag and where its data lies (at, length).
    #[inline(always)]
    fn unknown_tag(&mut self, _tag: u32, _data: (usize, usize)) {}
    /// A records field below the body's first two levels (the walk leaves those above to the
    /// decoder): read by the records decoder, here or by the visitor.
    #[inline(always)]
    fn records(&mut self, d: &mut Decoder<'_>, f: &'static FieldSpec) -> W {
        d.walk_records(f)
    }
    /// The bytes `data` of field `f` embed a message (the consumer protocol of a group's
    /// members): the walk has stepped over them; a visitor may have the decoder read them.
    #[inline(always)]
    fn embedded(
        &mut self,
        _d: &mut Decoder<'_>,
        _f: &'static FieldSpec,
        _data: Option<(usize, usize)>,
    ) -> W {
        Ok(())
    }
    /// An array of the body begins: the index its value will refer to.
    fn body_array(&mut self, f: &'static FieldSpec) -> usize;
    /// A struct of the body is present: the index its value will refer to.
    fn open_struct(&mut self) -> usize;
    /// A struct element of the body's array `array` begins.
    fn open_element(&mut self, array: usize);
    /// The second-level struct ends; `buf` is the frame its strings lie in.
    fn close(&mut self, buf: &[u8]);
    /// A scalar element of the body's array `array`, with its span if it is a string.
    fn scalar_element(&mut self, array: usize, s: Option<Option<(usize, usize)>>, buf: &[u8]);
    /// A tagged section of `count` fields at `level`.
    fn tagged_count(&mut self, level: usize, count: usize);
    /// Nodes the decoder would have counted so far for the elements reported.
    fn nodes(&self) -> usize;
}

impl Visit for Collector {
    fn field(&mut self, level: usize, f: &'static FieldSpec, tagged: bool, val: Val) {
        Collector::field(self, level, f, tagged, val)
    }
    fn body_array(&mut self, f: &'static FieldSpec) -> usize {
        Collector::body_array(self, f)
    }
    fn open_struct(&mut self) -> usize {
        Collector::open_struct(self)
    }
    fn open_element(&mut self, array: usize) {
        Collector::open_element(self, array)
    }
    fn close(&mut self, buf: &[u8]) {
        Collector::close(self, buf)
    }
    fn scalar_element(&mut self, array: usize, s: Option<Option<(usize, usize)>>, buf: &[u8]) {
        Collector::scalar_element(self, array, s, buf)
    }
    fn tagged_count(&mut self, level: usize, count: usize) {
        Collector::tagged_count(self, level, count)
    }
    fn nodes(&self) -> usize {
        Collector::nodes(self)
    }
}

/// The calls by which a visitor of every depth hands the body's first two levels to the
/// summary's collector it holds (field `c`), as the deep and JSON visitors do: written once.
macro_rules! two_levels_to_collector {
    () => {
        fn body_array(&mut self, f: &'static FieldSpec) -> usize {
            self.c.body_array(f)
        }
        fn open_struct(&mut self) -> usize {
            self.c.open_struct()
        }
        fn open_element(&mut self, array: usize) {
            self.c.open_element(array)
        }
        fn close(&mut self, buf: &[u8]) {
            self.c.close(buf)
        }
        fn scalar_element(&mut self, array: usize, s: Option<Option<(usize, usize)>>, buf: &[u8]) {
            self.c.scalar_element(array, s, buf)
        }
        fn tagged_count(&mut self, level: usize, count: usize) {
            self.c.tagged_count(level, count)
        }
    };
}
pub(super) use two_levels_to_collector;

/// The visitor of a walk that only validates: nothing is gathered. Frame verification and
/// response guessing ask only whether a frame decodes cleanly.
pub(super) struct Validate;

impl Visit for Validate {
    fn field(&mut self, _: usize, _: &'static FieldSpec, _: bool, _: Val) {}
    fn body_array(&mut self, _: &'static FieldSpec) -> usize {
        0
    }
    fn open_struct(&mut self) -> usize {
        0
    }
    fn open_element(&mut self, _: usize) {}
    fn close(&mut self, _: &[u8]) {}
    fn scalar_element(&mut self, _: usize, _: Option<Option<(usize, usize)>>, _: &[u8]) {}
    fn tagged_count(&mut self, _: usize, _: usize) {}
    fn nodes(&self) -> usize {
        0
    }
}

/// Whether one more element of a body array stays within the decoder's node budget: near
/// it the decoder would leave elements out, which is its way.
fn room<V: Visit>(d: &Decoder<'_>, v: &V) -> bool {
    d.spent.nodes.saturating_add(v.nodes()) < d.opts.max_nodes
}

/// Whether the `n` elements of an array below the body stay within the decoder's bounds, for
/// a deep visitor: past `max_elements`, or near the node budget, the decoder would leave
/// elements out of its tree, which is its way.
fn deep_room<V: Visit>(d: &Decoder<'_>, v: &V, n: usize) -> W {
    let nodes = d.spent.nodes.saturating_add(v.nodes()).saturating_add(n);
    if n > d.opts.max_elements || nodes >= d.opts.max_nodes {
        return Err(GiveUp);
    }
    Ok(())
}

impl Decoder<'_> {
    /// Steps over `n` bytes of fixed-size values.
    fn skip_fixed(&mut self, n: usize) -> W {
        if n > self.remaining() {
            return Err(GiveUp);
        }
        self.pos += n;
        Ok(())
    }

    /// The next `N` bytes, if they lie before the end of what is walked. One bounds check of
    /// each kind: the walk reads the ints of every element this way (an ApiVersions answer's
    /// 270), and the checks of `remaining` and `slice` one after the other cost twice these.
    #[inline]
    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], GiveUp> {
        let at = self.pos;
        let end = at.checked_add(N).filter(|e| *e <= self.end).ok_or(GiveUp)?;
        let bytes = self.buf.get(at..end).ok_or(GiveUp)?;
        let value = <[u8; N]>::try_from(bytes).map_err(|_| GiveUp)?;
        self.pos = end;
        Ok(value)
    }

    fn read_i8(&mut self) -> Result<i8, GiveUp> {
        self.fixed().map(i8::from_be_bytes)
    }
    fn read_i16(&mut self) -> Result<i16, GiveUp> {
        self.fixed().map(i16::from_be_bytes)
    }
    fn read_u16(&mut self) -> Result<u16, GiveUp> {
        self.fixed().map(u16::from_be_bytes)
    }
    fn read_i32(&mut self) -> Result<i32, GiveUp> {
        self.fixed().map(i32::from_be_bytes)
    }
    fn read_i64(&mut self) -> Result<i64, GiveUp> {
        self.fixed().map(i64::from_be_bytes)
    }
    fn read_uuid(&mut self) -> Result<[u8; 16], GiveUp> {
        self.fixed()
    }

    /// A non-zero int16 of field `f`: listed with its path when `f` is an error code. Every
    /// non-zero int16 comes here (an ApiVersions answer's ninety keys and versions): the test
    /// is made where it is called, the listing out of line.
    #[inline(always)]
    fn error_code(&mut self, f: &'static FieldSpec, code: i16) {
        if f.is_error_code() {
            self.list_error(f, code);
        }
    }

    /// An error code's value, listed with its path.
    #[inline(never)]
    fn list_error(&mut self, f: &'static FieldSpec, code: i16) {
        self.push_step(Step::Field(FieldId::of(f)));
        self.errors.push(ErrorEntry {
            path: self.path().clone(),
            code,
        });
        self.pop_step();
    }

    /// A topic id: the topic the fields after it are about, for records whose values have a
    /// layout by topic.
    fn follow_topic_id(&mut self, f: &'static FieldSpec, u: &[u8; 16]) {
        if f.role == Role::TopicId {
            self.topic_layout = crate::kafka::spec::schema::registry()
                .record_layouts()
                .topic_values(None, Some(u));
        }
    }

    /// A records field below the top two levels: decoded by the records decoder into nodes
    /// that are thrown away (its counts, CRC checks and problems are what is left).
    pub(super) fn walk_records(&mut self, f: &'static FieldSpec) -> W {
        self.records_unkept(Cow::Borrowed(f.name))
            .map_err(|_| GiveUp)
    }

    /// A length prefix of a flexible version: an unsigned varint holding the length plus
    /// one, 0 for null. The one-byte form is read here; longer ones, as every bad length, go
    /// through the cursor's reader, so what is accepted is what the decoder accepts.
    #[inline]
    fn len_compact(&mut self, nullable: bool) -> Result<Option<usize>, GiveUp> {
        let at = self.pos;
        let b = match self.buf.get(at) {
            Some(&b) if b < 0x80 && at < self.end => b,
            _ => return self.walk_length(Prefix::Int32, "length", nullable),
        };
        self.measured(at + 1, i64::from(b) - 1, nullable)
    }

    /// A classic length prefix of `N` bytes (int16 for strings, int32 for the rest), -1
    /// for null.
    #[inline]
    fn len_classic<const N: usize>(&mut self, nullable: bool) -> Result<Option<usize>, GiveUp> {
        let at = self.pos;
        let raw: [u8; N] = self.fixed()?;
        let n = match *raw.as_slice() {
            [a, b] => i64::from(i16::from_be_bytes([a, b])),
            [a, b, c, d] => i64::from(i32::from_be_bytes([a, b, c, d])),
            _ => return Err(GiveUp),
        };
        self.measured(at + N, n, nullable)
    }

    /// A length `n` read from a prefix that ends at `after`: null (-1) where allowed, or a
    /// length that fits the bytes after it.
    #[inline]
    fn measured(&mut self, after: usize, n: i64, nullable: bool) -> Result<Option<usize>, GiveUp> {
        let left = self.end.saturating_sub(after);
        let len = match n {
            -1 if nullable => None,
            n if n >= 0 && n as u64 <= left as u64 => Some(n as usize),
            _ => return Err(GiveUp),
        };
        self.pos = after;
        Ok(len)
    }

    /// A string or bytes value after its length (read by `len`): where its bytes lie,
    /// `None` for null. The length was checked against the bytes left.
    #[inline]
    fn span(&mut self, len: Option<usize>) -> Option<(usize, usize)> {
        let n = len?;
        let at = self.pos;
        self.pos += n;
        Some((at, n))
    }

    /// The number of tagged fields of a struct; each takes at least two bytes. Nearly every
    /// struct has none, a zero byte: read where it is called (every element of an array of
    /// a flexible version ends with it).
    #[inline(always)]
    fn tag_count(&mut self) -> Result<usize, GiveUp> {
        if self.pos < self.end && self.buf.get(self.pos) == Some(&0) {
            self.pos += 1;
            return Ok(0);
        }
        self.read_tag_count()
    }

    #[inline(never)]
    fn read_tag_count(&mut self) -> Result<usize, GiveUp> {
        let count = self.short_uvarint()? as usize;
        if count > self.remaining() / 2 {
            return Err(GiveUp);
        }
        Ok(count)
    }

    /// An unsigned varint: the one-byte form read here, longer ones by the cursor's reader.
    #[inline]
    fn short_uvarint(&mut self) -> Result<u32, GiveUp> {
        match self.buf.get(self.pos) {
            Some(&b) if b < 0x80 && self.pos < self.end => {
                self.pos += 1;
                Ok(u32::from(b))
            }
            _ => self.uvarint().map_err(|_| GiveUp),
        }
    }

    /// A tagged field's tag and where its data ends; tags must rise and sizes fit.
    fn tag_head(&mut self, last: &mut Option<u32>) -> Result<(u32, usize), GiveUp> {
        let tag = self.short_uvarint()?;
        let size = self.short_uvarint()? as usize;
        if size > self.remaining() || last.is_some_and(|t| tag <= t) {
            return Err(GiveUp);
        }
        *last = Some(tag);
        Ok((tag, self.pos + size))
    }
}

/// What the generated walks name.
mod prelude {
    pub(super) use super::{
        deep_room, room, Decoder, FieldId, FieldSpec, GiveUp, Region, Step, Val, Visit, W,
    };
}

// The generated code: a module per API message spec, and `walk_body`, which picks a body's
// walk by spec and version. Printed by prettyplease, not rustfmt, as the tables are.
#[rustfmt::skip]
mod walks;

pub(super) use walks::walk_body;

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;
    use crate::kafka::spec::schema::registry;

    /// Every (API, direction, version) has its named walk, found by `walk_body`, and no
    /// version outside a spec's valid ones has one.
    #[test]
    fn every_valid_version_has_a_walk_and_no_other() {
        let mut walked = 0;
        for spec in registry().message_specs() {
            let file = spec
                .walk
                .expect("every message spec is numbered for its walks");
            let valid = spec.valid_versions;
            let mut has = |version: i16| {
                let mut d = Decoder::new(&[], 0, 0, Region::RequestBody);
                walk_body(file, version, &mut d, &mut Validate).is_some()
            };
            if valid.none {
                assert!(!(0..=20).any(&mut has), "{} has no versions", spec.name);
                continue;
            }
            let max = spec.max_version();
            for version in valid.min..=max {
                assert!(has(version), "{} v{version} has no walk", spec.name);
                walked += 1;
            }
            assert!(!has(valid.min - 1), "{} below its versions", spec.name);
            assert!(!has(max + 1), "{} above its versions", spec.name);
        }
        assert!(walked > 700, "{walked} versions");
    }
}
