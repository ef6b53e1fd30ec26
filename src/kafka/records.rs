//! The `records` type: RecordBatch v2 with its records (compressed or not, control batches
//! included) and the legacy MessageSet v0/v1. Compressed data is decompressed into a second
//! byte source with its own offsets, bounded by `max_decompressed`.
//!
//! Batches sit inside a length-prefixed field, so damage here never stops the message: it is
//! reported and the rest of the field is shown raw.

use super::decode::Diagnosis;
use super::node::{Node, NodeKind, Note, Region, Value};
use super::problem::ProblemKind;
use super::schema::Direction;
use std::borrow::Cow;
use std::io::Read;

/// What the records decoder may spend.
#[derive(Debug, Clone, Copy)]
pub struct RecordsOptions {
    /// Bytes the batches of one message may decompress to, together, before the rest is cut.
    pub max_decompressed: usize,
    /// Records (and legacy messages) kept as nodes per batch; the rest are summarised.
    pub max_records: usize,
    /// Nodes the whole message may keep (shared with the decoder's arrays).
    pub max_nodes: usize,
    /// Decode the records inside batches (decompressing them); off, batch headers and CRCs only.
    pub records: bool,
}

pub const MAX_DECOMPRESSED: usize = 64 * 1024 * 1024;

/// Nesting of compressed legacy messages (a wrapper holding compressed wrappers).
const MAX_DEPTH: u8 = 2;
/// Smallest length field (the bytes after it) of a legacy message v0 (crc, magic, attributes,
/// key and value lengths), a message v1 (plus a timestamp) and a record batch v2 (its header
/// with no records).
const LEGACY_V0_MIN: usize = 14;
const LEGACY_V1_MIN: usize = 22;
const BATCH_V2_MIN: usize = 49;

pub fn codec_name(c: u8) -> &'static str {
    match c {
        0 => "none",
        1 => "gzip",
        2 => "snappy",
        3 => "lz4",
        4 => "zstd",
        _ => "unknown",
    }
}

struct Ctx<'o> {
    opts: RecordsOptions,
    diags: &'o mut Vec<Diagnosis>,
    next_source: &'o mut u16,
    /// What the message still may decompress to, over all its batches.
    budget: &'o mut usize,
    /// Diagnoses past the list's bound, counted only.
    dropped: &'o mut usize,
    /// What the field holds, kept batches and omitted ones alike.
    tally: Tally,
    /// Nodes the message keeps so far (its arrays' and its batches').
    nodes: &'o mut usize,
}

/// Nodes in a subtree.
fn count_nodes(n: &Node) -> usize {
    1 + n.children.iter().map(count_nodes).sum::<usize>()
}

/// Whether no batch of this list has been left out yet (once one is, the rest follow it).
fn omitted_from_here(out: &[Node]) -> bool {
    !out.iter().any(|n| n.name == "omitted" && n.ty == "batches")
}

/// Nodes counted for a batch or legacy message header kept (its fields), beside its records.
const BATCH_NODES: usize = 16;

impl Ctx<'_> {
    fn in_budget(&self) -> bool {
        *self.nodes < self.opts.max_nodes
    }
}

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

impl Ctx<'_> {
    fn diag(&mut self, d: Diagnosis) {
        if self.diags.len() < MAX_DIAGNOSES {
            self.diags.push(d);
        } else {
            *self.dropped += 1;
        }
    }

    /// Decompresses within what the message may still take; says when the budget cut it.
    fn inflate(&mut self, codec: u8, data: &[u8], at: usize) -> Result<Vec<u8>, String> {
        let (plain, capped) = decompress(codec, data, *self.budget)?;
        *self.budget = self.budget.saturating_sub(plain.len());
        if capped {
            self.diag(Diagnosis {
                kind: ProblemKind::DecompressionLimit,
                offset: at,
                message: format!(
                    "decompressed data passes the {} bytes the batches of one message may decompress to: the rest is not shown",
                    self.opts.max_decompressed
                ),
            });
        }
        Ok(plain)
    }
}

/// A cursor over one byte source, recording nodes with offsets in that source.
struct R<'a> {
    buf: &'a [u8],
    pos: usize,
    end: usize,
    source: u16,
    region: Region,
}

type Res<T> = Result<T, (usize, String)>;

fn leaf(
    name: &'static str,
    ty: &'static str,
    off: usize,
    len: usize,
    region: Region,
    source: u16,
    value: Value,
) -> Node {
    let mut n = Node::new(name, ty, off, region, NodeKind::Field);
    n.len = len;
    n.value = value;
    n.source = source;
    n
}

impl<'a> R<'a> {
    fn left(&self) -> usize {
        self.end.saturating_sub(self.pos)
    }

    fn take(&mut self, n: usize, what: &str) -> Res<&'a [u8]> {
        if n > self.left() {
            return Err((
                self.pos,
                format!("{what} needs {n} bytes, only {} left", self.left()),
            ));
        }
        let s = self
            .buf
            .get(self.pos..self.pos + n)
            .ok_or((self.pos, "out of range".to_string()))?;
        self.pos += n;
        Ok(s)
    }

    fn int(
        &mut self,
        name: &'static str,
        ty: &'static str,
        width: usize,
        out: &mut Vec<Node>,
    ) -> Res<i64> {
        let at = self.pos;
        let b = self.take(width, name)?;
        let v = match width {
            1 => i64::from(crate::be::i8_at(b, 0)),
            2 => i64::from(crate::be::i16_at(b, 0)),
            4 => i64::from(crate::be::i32_at(b, 0)),
            _ => crate::be::i64_at(b, 0),
        };
        out.push(leaf(
            name,
            ty,
            at,
            width,
            self.region,
            self.source,
            Value::Int(v),
        ));
        Ok(v)
    }

    fn uint32(&mut self, name: &'static str, out: &mut Vec<Node>) -> Res<u32> {
        let at = self.pos;
        let b = self.take(4, name)?;
        let v = crate::be::u32_at(b, 0);
        out.push(leaf(
            name,
            "uint32",
            at,
            4,
            self.region,
            self.source,
            Value::Int(v.into()),
        ));
        Ok(v)
    }

    /// Zigzag varint (Kafka's `varint`/`varlong`), at most 10 bytes.
    fn varint(&mut self, name: &'static str, ty: &'static str, out: &mut Vec<Node>) -> Res<i64> {
        let at = self.pos;
        let mut raw: u64 = 0;
        let mut shift = 0;
        loop {
            let b = *self.take(1, name)?.first().unwrap_or(&0);
            raw |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
            if shift > 63 {
                self.pos = at;
                return Err((at, format!("{name}: varint longer than 10 bytes")));
            }
        }
        let v = ((raw >> 1) as i64) ^ -((raw & 1) as i64);
        out.push(leaf(
            name,
            ty,
            at,
            self.pos - at,
            self.region,
            self.source,
            Value::Int(v),
        ));
        Ok(v)
    }

    /// A varint-length-prefixed byte string (record key, value, header key or value).
    fn varbytes(
        &mut self,
        len_name: &'static str,
        name: &'static str,
        out: &mut Vec<Node>,
    ) -> Res<()> {
        let at = self.pos;
        let n = self.varint(len_name, "varint", out)?;
        if n < -1 {
            self.pos = at;
            out.pop();
            return Err((at, format!("{name} length {n} is negative")));
        }
        if n == -1 {
            out.push(leaf(
                name,
                "varbytes",
                self.pos,
                0,
                self.region,
                self.source,
                Value::Bytes(None),
            ));
            return Ok(());
        }
        let n = n as usize;
        if n > self.left() {
            let left = self.left();
            self.pos = at;
            out.pop();
            return Err((
                at,
                format!("{name} length {n} exceeds the {left} bytes left"),
            ));
        }
        let start = self.pos;
        let data = self.take(n, name)?;
        let value = if self.source == 0 {
            Value::Bytes(Some((start, n)))
        } else {
            Value::Blob(data.to_vec())
        };
        out.push(leaf(
            name,
            "varbytes",
            start,
            n,
            self.region,
            self.source,
            value,
        ));
        Ok(())
    }

    /// An int32-length-prefixed byte string (legacy message key and value).
    fn bytes32(&mut self, name: &'static str, out: &mut Vec<Node>) -> Res<Option<(usize, usize)>> {
        let at = self.pos;
        let b = self.take(4, name)?;
        let n = crate::be::i32_at(b, 0);
        if n < -1 || (n >= 0 && n as usize > self.left()) {
            let left = self.left();
            self.pos = at;
            return Err((
                at,
                format!("{name} length {n} does not fit the {left} bytes left"),
            ));
        }
        let mut g = Node::new(name, "bytes", at, self.region, NodeKind::Group);
        g.source = self.source;
        g.children.push(leaf(
            "length",
            "int32",
            at,
            4,
            self.region,
            self.source,
            Value::Int(n.into()),
        ));
        let span = if n < 0 {
            None
        } else {
            let start = self.pos;
            let data = self.take(n as usize, name)?;
            let value = if self.source == 0 {
                Value::Bytes(Some((start, n as usize)))
            } else {
                Value::Blob(data.to_vec())
            };
            g.children.push(leaf(
                "data",
                "varbytes",
                start,
                n as usize,
                self.region,
                self.source,
                value,
            ));
            Some((start, n as usize))
        };
        g.value = match span {
            None => Value::Null,
            Some((_, n)) => Value::Text(format!("{n} bytes")),
        };
        g.len = self.pos - at;
        out.push(g);
        Ok(span)
    }
}

/// Decompresses `data` with Kafka's codec `codec`, keeping at most `cap` bytes. Returns the
/// bytes and whether the cap cut them.
pub fn decompress(codec: u8, data: &[u8], cap: usize) -> Result<(Vec<u8>, bool), String> {
    fn read_capped(mut r: impl Read, cap: usize) -> Result<(Vec<u8>, bool), String> {
        // Grown by hand: read_to_end doubles the buffer, which can hold twice the cap.
        let mut out: Vec<u8> = Vec::new();
        let mut chunk = [0u8; 64 * 1024];
        loop {
            let n = match r.read(&mut chunk) {
                Ok(0) => return Ok((out, false)),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.to_string()),
            };
            let room = cap - out.len();
            let take = n.min(room);
            if out.capacity() - out.len() < take {
                let grow = out.len().max(take).min(cap - out.len());
                out.reserve_exact(grow);
            }
            out.extend_from_slice(chunk.get(..take).unwrap_or_default());
            if n > room {
                return Ok((out, true));
            }
        }
    }
    match codec {
        1 => read_capped(flate2::read::GzDecoder::new(data), cap),
        2 => {
            // Kafka's Java client wraps snappy in xerial framing (a 16-byte header, then
            // big-endian length-prefixed blocks); librdkafka may send a plain block.
            const XERIAL: &[u8] = b"\x82SNAPPY\x00";
            let mut out = Vec::new();
            let mut dec = snap::raw::Decoder::new();
            let mut block = |b: &[u8], out: &mut Vec<u8>| -> Result<bool, String> {
                let n = snap::raw::decompress_len(b).map_err(|e| e.to_string())?;
                if out.len() + n > cap {
                    return Ok(true);
                }
                let start = out.len();
                out.resize(start + n, 0);
                let got = dec
                    .decompress(b, out.get_mut(start..).unwrap_or_default())
                    .map_err(|e| e.to_string())?;
                out.truncate(start + got);
                Ok(false)
            };
            if data.starts_with(XERIAL) {
                let mut p = 16usize;
                while p < data.len() {
                    let l = data.get(p..p + 4).ok_or("xerial block length cut short")?;
                    let n = crate::be::u32_at(l, 0) as usize;
                    let b = data
                        .get(p + 4..p + 4 + n)
                        .ok_or("xerial block runs past the data")?;
                    if block(b, &mut out)? {
                        return Ok((out, true));
                    }
                    p += 4 + n;
                }
                Ok((out, false))
            } else {
                let capped = block(data, &mut out)?;
                Ok((out, capped))
            }
        }
        3 => read_capped(lz4_flex::frame::FrameDecoder::new(data), cap),
        4 => {
            let d = ruzstd::decoding::StreamingDecoder::new(data).map_err(|e| e.to_string())?;
            read_capped(d, cap)
        }
        c => Err(format!("unknown compression codec {c}")),
    }
}

/// LZ4 frames (Kafka's codec 3) end with an end mark (a zero block size) and, when the header
/// says so, a content checksum; a decoder may stop at the data's end without either, or ignore
/// bytes after the frame. Says which, if any.
fn lz4_frame_problem(codec: u8, data: &[u8]) -> Option<String> {
    if codec != 3 {
        return None;
    }
    let flg = *data.get(4)?;
    let block_checksum = flg & 0x10 != 0;
    let content_size = flg & 0x08 != 0;
    let content_checksum = flg & 0x04 != 0;
    let dict = flg & 0x01 != 0;
    // magic, FLG, BD, [content size], [dictionary id], header checksum.
    let mut p = 4 + 2 + if content_size { 8 } else { 0 } + if dict { 4 } else { 0 } + 1;
    loop {
        let Some(b) = data.get(p..p + 4) else {
            return Some("lz4 frame ends without its end mark: the data was cut".into());
        };
        let size = u32::from_le_bytes(b.try_into().unwrap_or([0; 4])) & 0x7fff_ffff;
        p += 4;
        if size == 0 {
            break;
        }
        p += size as usize + if block_checksum { 4 } else { 0 };
    }
    if content_checksum {
        p += 4;
    }
    match data.len().checked_sub(p) {
        None => Some("lz4 frame ends inside its content checksum".into()),
        Some(0) => None,
        Some(n) => Some(format!("{n} bytes after the end of the lz4 frame")),
    }
}

/// What a `records` field held: v2 batches, legacy messages (outer ones: a compressed
/// wrapper counts once) and records (a v2 batch's count, or every legacy message that is not
/// a wrapper, inner ones included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub batches: usize,
    pub messages: usize,
    pub records: i64,
}

impl Tally {
    /// Counts the nodes [`decode`] returned.
    pub fn of(nodes: &[Node]) -> Tally {
        let mut t = Tally::default();
        for n in nodes.iter().filter(|n| n.kind == NodeKind::Group) {
            if let Some(c) = n.child("recordsCount").and_then(Node::as_int) {
                t.batches += 1;
                t.records += c.max(0);
            } else if n.name == "Message" {
                t.messages += 1;
                t.records += legacy_records(n);
            }
        }
        t
    }

    fn add(&mut self, o: Tally) {
        self.batches += o.batches;
        self.messages += o.messages;
        self.records += o.records;
    }

    /// `2 batches, 14 records`, `3 messages, 3 records`.
    pub fn text(&self) -> String {
        let plural =
            |n: i64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut parts = Vec::new();
        if self.batches > 0 || self.messages == 0 {
            parts.push(plural(self.batches as i64, "batch", "batches"));
        }
        if self.messages > 0 {
            parts.push(plural(self.messages as i64, "message", "messages"));
        }
        parts.push(plural(self.records, "record", "records"));
        parts.join(", ")
    }
}

/// The first version of Produce (requests) and Fetch (responses) whose clients read record
/// batches v2 (magic 2); older versions carry only message sets (magic 0 and 1), which a broker
/// must down-convert to. Kafka's rule, from the versions' history (KIP-98).
const V2_BATCHES_FROM: &[(i16, Direction, i16)] =
    &[(0, Direction::Request, 3), (1, Direction::Response, 4)];

/// Whether (API key, direction, version) carries message sets (magic 0 and 1) rather than
/// record batches v2.
pub fn carries_message_sets(api_key: i16, direction: Direction, version: i16) -> bool {
    V2_BATCHES_FROM
        .iter()
        .any(|&(k, d, from)| k == api_key && d == direction && version < from)
}

/// A record batch v2 where the version on the wire says only message sets may be: a client of
/// that version cannot read it (Go and Rust clients fail with "unsupported message version 2").
pub fn batch_format_problem(
    api_key: i16,
    direction: Direction,
    version: i16,
    tally: &Tally,
) -> Option<String> {
    let &(_, _, from) = V2_BATCHES_FROM
        .iter()
        .find(|(k, d, _)| *k == api_key && *d == direction)?;
    (carries_message_sets(api_key, direction, version) && tally.batches > 0).then(|| {
        let api = if api_key == 0 { "Produce" } else { "Fetch" };
        format!(
            "interop: record batch v2 (magic 2) in a {api} v{version} {}: {api} v0-{} carries only message sets (magic 0 and 1), so a client of this version cannot read it{}",
            direction.as_str(),
            from - 1,
            if direction == Direction::Response {
                " (the broker did not down-convert)"
            } else {
                ""
            }
        )
    })
}

/// Records in one legacy message: 1, or for a compressed wrapper the messages inside it.
fn legacy_records(n: &Node) -> i64 {
    match n.child("decompressed") {
        Some(inner) => inner
            .children
            .iter()
            .filter(|c| c.name == "Message" && c.kind == NodeKind::Group)
            .map(legacy_records)
            .sum(),
        None => 1,
    }
}

/// Decodes the bytes of a `records` field, `buf[start..end]`, into batch nodes.
pub fn decode(
    buf: &[u8],
    start: usize,
    end: usize,
    opts: RecordsOptions,
    diags: &mut Vec<Diagnosis>,
    next_source: &mut u16,
    spent: &mut Spent,
) -> (Vec<Node>, Tally) {
    let mut ctx = Ctx {
        opts,
        diags,
        next_source,
        budget: &mut spent.decompress_left,
        dropped: &mut spent.dropped_diagnoses,
        tally: Tally::default(),
        nodes: &mut spent.nodes,
    };
    let mut r = R {
        buf,
        pos: start,
        end,
        source: 0,
        region: Region::RecordBatch,
    };
    let mut out = Vec::new();
    batches(&mut r, &mut ctx, &mut out, 0);
    (out, ctx.tally)
}

/// A sequence of batches or legacy messages until the end of the cursor.
fn batches(r: &mut R<'_>, ctx: &mut Ctx<'_>, out: &mut Vec<Node>, depth: u8) {
    let mut index = 0usize;
    while r.left() > 0 {
        let at = r.pos;
        // Both layouts start with an int64 offset and an int32 length; the magic byte is at
        // offset 16 in both.
        let header = r.buf.get(at..at + 17).filter(|_| r.left() >= 17);
        let (len, magic) = match header {
            Some(h) => (crate::be::i32_at(h, 8), crate::be::i8_at(h, 16)),
            None => {
                partial(
                    r,
                    out,
                    "fewer bytes than a batch header: a fetch may end with a partial batch",
                );
                return;
            }
        };
        if len < 0 {
            ctx.diag(Diagnosis {
                kind: ProblemKind::LengthOutOfRange,
                offset: at,
                message: format!("batch length {len} is negative"),
            });
            partial(r, out, "bytes after a negative batch length");
            return;
        }
        let min = match magic {
            0 => LEGACY_V0_MIN,
            1 => LEGACY_V1_MIN,
            _ => BATCH_V2_MIN,
        };
        if (len as usize) < min {
            // A length shorter than the header it must hold makes no progress through the
            // bytes (a run of zeros reads as endless empty messages): stop here.
            ctx.diag(Diagnosis {
                kind: ProblemKind::BatchFormat,
                offset: at + 8,
                message: format!(
                    "batch length {len} is shorter than the {min} bytes a magic-{magic} header takes"
                ),
            });
            partial(r, out, "bytes from a batch length too short to be one");
            return;
        }
        let total = 12 + len as usize;
        if total > r.left() {
            // Fetch responses may end with a batch cut at the fetch size: not an error.
            partial(
                r,
                out,
                "a batch cut short: a fetch response may end with a partial batch",
            );
            return;
        }
        let mut sub = R {
            buf: r.buf,
            pos: at,
            end: at + total,
            source: r.source,
            region: r.region,
        };
        let node = match magic {
            2 => batch_v2(&mut sub, ctx, index),
            0 | 1 => legacy_message(&mut sub, ctx, index, magic, depth),
            m => {
                ctx.diag(Diagnosis {
                    kind: ProblemKind::BatchFormat,
                    offset: at + 16,
                    message: format!("record batch magic {m} is not 0, 1 or 2"),
                });
                let mut n = leaf(
                    "batch",
                    "bytes",
                    at,
                    total,
                    r.region,
                    r.source,
                    Value::Text(format!("magic {m}: unknown layout")),
                );
                n.kind = NodeKind::Raw;
                n
            }
        };
        if depth == 0 {
            ctx.tally.add(Tally::of(std::slice::from_ref(&node)));
        }
        let keep = index < ctx.opts.max_records && (omitted_from_here(out) && ctx.in_budget());
        if keep {
            *ctx.nodes += BATCH_NODES;
            out.push(node);
        } else if !out.iter().any(|n| n.name == "omitted" && n.ty == "batches") {
            let mut n = leaf(
                "omitted",
                "batches",
                at,
                0,
                r.region,
                r.source,
                Value::Text("more batches, decoded but not kept".into()),
            );
            n.kind = NodeKind::Raw;
            out.push(n);
        }
        if let Some(last) = out
            .last_mut()
            .filter(|n| n.name == "omitted" && n.ty == "batches")
        {
            last.len = at + total - last.offset;
        }
        r.pos = at + total;
        index += 1;
    }
}

fn partial(r: &mut R<'_>, out: &mut Vec<Node>, why: &'static str) {
    let mut n = leaf(
        "partial",
        "bytes",
        r.pos,
        r.left(),
        r.region,
        r.source,
        Value::Text(format!("{} bytes", r.left())),
    );
    n.kind = NodeKind::Raw;
    n.desc = Cow::Borrowed(why);
    out.push(n);
    r.pos = r.end;
}

/// Finishes a group whose decoding stopped: reason, then the rest raw.
fn stop(r: &mut R<'_>, g: &mut Node, ctx: &mut Ctx<'_>, (offset, reason): (usize, String)) {
    ctx.diag(Diagnosis {
        kind: ProblemKind::Malformed,
        offset,
        message: reason.clone(),
    });
    let mut e = Node::new("!! malformed", "", offset, r.region, NodeKind::Error);
    e.source = r.source;
    e.desc = Cow::Owned(reason);
    g.children.push(e);
    let from = offset.min(r.end);
    if from < r.end {
        let mut raw = leaf(
            "unparsed",
            "bytes",
            from,
            r.end - from,
            r.region,
            r.source,
            Value::Text(format!("{} bytes", r.end - from)),
        );
        raw.kind = NodeKind::Raw;
        g.children.push(raw);
    }
    r.pos = r.end;
}

fn batch_v2(r: &mut R<'_>, ctx: &mut Ctx<'_>, index: usize) -> Node {
    let start = r.pos;
    let mut g = Node::new(
        "RecordBatch",
        "RecordBatch v2",
        start,
        Region::RecordBatch,
        NodeKind::Group,
    );
    g.index = Some(index as u32);
    g.source = r.source;
    let res = batch_v2_body(r, ctx, &mut g);
    if let Err(e) = res {
        stop(r, &mut g, ctx, e);
    }
    g.len = r.end - start;
    g
}

fn batch_v2_body(r: &mut R<'_>, ctx: &mut Ctx<'_>, g: &mut Node) -> Res<()> {
    let c = &mut g.children;
    let base_offset = r.int("baseOffset", "int64", 8, c)?;
    r.int("batchLength", "int32", 4, c)?;
    r.int("partitionLeaderEpoch", "int32", 4, c)?;
    r.int("magic", "int8", 1, c)?;
    let crc_at = r.pos;
    let crc = r.uint32("crc", c)?;
    let computed = crc32c::crc32c(r.buf.get(r.pos..r.end).unwrap_or(&[]));
    if let Some(n) = c.last_mut() {
        if crc == computed {
            n.note = Note::Crc {
                stored: crc,
                computed,
                castagnoli: true,
            };
        } else {
            n.note = Note::Crc {
                stored: crc,
                computed,
                castagnoli: true,
            };
            ctx.diag(Diagnosis {
                kind: ProblemKind::CrcMismatch,
                offset: crc_at,
                message: format!(
                    "batch CRC-32C 0x{crc:08x} does not match its bytes (0x{computed:08x})"
                ),
            });
        }
    }
    let attrs = r.int("attributes", "int16", 2, c)?;
    if let Some(n) = c.last_mut() {
        n.note = Note::BatchAttributes(attrs);
    }
    r.int("lastOffsetDelta", "int32", 4, c)?;
    let base_ts = r.int("baseTimestamp", "int64", 8, c)?;
    if let Some(n) = c.last_mut() {
        n.note = Note::TimestampMs(base_ts);
    }
    let max_ts = r.int("maxTimestamp", "int64", 8, c)?;
    if let Some(n) = c.last_mut() {
        n.note = Note::TimestampMs(max_ts);
    }
    r.int("producerId", "int64", 8, c)?;
    r.int("producerEpoch", "int16", 2, c)?;
    r.int("baseSequence", "int32", 4, c)?;
    let count = r.int("recordsCount", "int32", 4, c)?;
    let codec = (attrs & 7) as u8;
    let control = attrs & 32 != 0;
    let mut summary = if count == 1 {
        "1 record".to_string()
    } else {
        format!("{count} records")
    };
    if codec != 0 {
        summary.push_str(&format!(", {}", codec_name(codec)));
    }
    if control {
        summary.push_str(", control");
    }
    g.value = Value::Text(summary);
    if !ctx.opts.records {
        // Headers only (summary and statistics views): the records stay one raw span. The
        // compressed data is still inflated (and dropped) so that a batch that does not
        // decompress is reported whatever the view: the exit status must not depend on it.
        let at = r.pos;
        if codec != 0 {
            let data = r.buf.get(at..r.end).unwrap_or(&[]);
            match ctx.inflate(codec, data, at) {
                Err(e) => ctx.diag(Diagnosis {
                    kind: ProblemKind::Decompression,
                    offset: at,
                    message: format!("{} data does not decompress: {e}", codec_name(codec)),
                }),
                Ok(plain) => {
                    // Only the size is needed: give the bytes back to the budget.
                    *ctx.budget += plain.len();
                    if let Some(why) = lz4_frame_problem(codec, data) {
                        ctx.diag(Diagnosis {
                            kind: ProblemKind::Decompression,
                            offset: at,
                            message: why,
                        });
                    }
                }
            }
        }
        let mut n = leaf(
            "records",
            "bytes",
            at,
            r.left(),
            Region::Record,
            r.source,
            Value::Text(format!("{} bytes", r.left())),
        );
        n.kind = NodeKind::Raw;
        g.children.push(n);
        r.pos = r.end;
        return Ok(());
    }
    let info = BatchInfo {
        base_offset,
        base_ts,
        control,
    };
    if codec == 0 {
        let mut recs = R {
            buf: r.buf,
            pos: r.pos,
            end: r.end,
            source: r.source,
            region: Region::Record,
        };
        let res = records(&mut recs, ctx, count, info, &mut g.children);
        r.pos = recs.pos;
        return res;
    }
    // Compressed: the rest of the batch is one compressed block.
    let data_at = r.pos;
    let data = r.take(r.left(), "compressed records")?;
    let mut comp = Node::new(
        "compressed",
        codec_name(codec),
        data_at,
        Region::RecordBatch,
        NodeKind::Group,
    );
    comp.source = r.source;
    comp.len = data.len();
    let mut dl = leaf(
        "data",
        "bytes",
        data_at,
        data.len(),
        Region::RecordBatch,
        r.source,
        Value::Text(format!("{} bytes", data.len())),
    );
    dl.kind = NodeKind::Raw;
    dl.desc = Cow::Borrowed("compressed records; decompressed below, with their own offsets");
    comp.children.push(dl);
    match ctx.inflate(codec, data, data_at) {
        Err(e) => {
            ctx.diag(Diagnosis {
                kind: ProblemKind::Decompression,
                offset: data_at,
                message: format!("{} data does not decompress: {e}", codec_name(codec)),
            });
            comp.value = Value::Text(format!("does not decompress: {e}"));
        }
        Ok(plain) => {
            let capped = *ctx.budget == 0;
            *ctx.next_source += 1;
            let source = *ctx.next_source;
            let mut dn = Node::new(
                "decompressed",
                "records",
                0,
                Region::Record,
                NodeKind::Group,
            );
            dn.source = source;
            dn.len = plain.len();
            dn.desc = Cow::Owned(format!(
                "decompressed bytes, byte source #{source}: offsets count from its start"
            ));
            if let Some(why) = lz4_frame_problem(codec, data) {
                ctx.diag(Diagnosis {
                    kind: ProblemKind::Decompression,
                    offset: data_at,
                    message: why,
                });
            }
            let mut recs = R {
                buf: &plain,
                pos: 0,
                end: plain.len(),
                source,
                region: Region::Record,
            };
            if let Err(e) = records(&mut recs, ctx, count, info, &mut dn.children) {
                if !capped {
                    stop(&mut recs, &mut dn, ctx, e);
                } else {
                    let mut n = leaf(
                        "cut",
                        "bytes",
                        e.0,
                        plain.len() - e.0.min(plain.len()),
                        Region::Record,
                        source,
                        Value::Text("cut at the message's decompression budget".into()),
                    );
                    n.kind = NodeKind::Raw;
                    dn.children.push(n);
                }
            } else if recs.pos < recs.end {
                let mut n = leaf(
                    "trailing",
                    "bytes",
                    recs.pos,
                    recs.end - recs.pos,
                    Region::Record,
                    source,
                    Value::Text(format!("{} bytes", recs.end - recs.pos)),
                );
                n.kind = NodeKind::Raw;
                ctx.diag(Diagnosis {
                    kind: ProblemKind::BatchFormat,
                    offset: data_at,
                    message: format!(
                        "{} bytes after the last record in the decompressed data",
                        recs.end - recs.pos
                    ),
                });
                dn.children.push(n);
            }
            dn.value = Value::Blob(plain);
            comp.value = Value::Text(format!("{} → {} bytes", comp.len, dn.len));
            comp.children.push(dn);
        }
    }
    g.children.push(comp);
    Ok(())
}

#[derive(Debug, Clone, Copy)]
struct BatchInfo {
    base_offset: i64,
    base_ts: i64,
    control: bool,
}

/// `count` v2 records until the end of the cursor.
fn records(
    r: &mut R<'_>,
    ctx: &mut Ctx<'_>,
    count: i64,
    info: BatchInfo,
    out: &mut Vec<Node>,
) -> Res<()> {
    if count < 0 || count as usize > r.left() {
        ctx.diag(Diagnosis {
            kind: ProblemKind::BatchFormat,
            offset: r.pos,
            message: format!(
                "records count {count} does not fit the {} bytes of records",
                r.left()
            ),
        });
    }
    let mut i = 0usize;
    let mut scratch = Vec::new();
    let mut omitted_from = None;
    while r.left() > 0 {
        let keep = omitted_from.is_none() && i < ctx.opts.max_records && ctx.in_budget();
        if !keep && omitted_from.is_none() {
            omitted_from = Some((r.pos, i));
        }
        let dest = if keep { &mut *out } else { &mut scratch };
        record(r, i, info, dest)?;
        if keep {
            *ctx.nodes += out.last().map_or(1, count_nodes);
        }
        scratch.clear();
        i += 1;
    }
    if let Some((from, first)) = omitted_from {
        let mut n = leaf(
            "omitted",
            "records",
            from,
            r.pos - from,
            Region::Record,
            r.source,
            Value::Text(format!("{} more records, decoded but not kept", i - first)),
        );
        n.kind = NodeKind::Raw;
        out.push(n);
    }
    if count >= 0 && i as i64 != count {
        ctx.diag(Diagnosis {
            kind: ProblemKind::BatchFormat,
            offset: r.pos,
            message: format!("the batch says {count} records, its bytes hold {i}"),
        });
    }
    Ok(())
}

fn record(r: &mut R<'_>, index: usize, info: BatchInfo, out: &mut Vec<Node>) -> Res<()> {
    let start = r.pos;
    let mut g = Node::new("Record", "Record", start, Region::Record, NodeKind::Group);
    g.index = Some(index as u32);
    g.source = r.source;
    let res = (|| -> Res<()> {
        let c = &mut g.children;
        let len = r.varint("length", "varint", c)?;
        let body = r.pos;
        if len < 0 || len as usize > r.left() {
            r.pos = start;
            c.clear();
            return Err((
                start,
                format!(
                    "record length {len} does not fit the {} bytes left",
                    r.left()
                ),
            ));
        }
        let rec_end = body + len as usize;
        let outer_end = r.end;
        r.end = rec_end;
        let inner = (|| -> Res<()> {
            r.int("attributes", "int8", 1, c)?;
            let td = r.varint("timestampDelta", "varlong", c)?;
            if let Some(n) = c.last_mut() {
                n.note = Note::TimestampMs(info.base_ts.saturating_add(td));
            }
            let od = r.varint("offsetDelta", "varint", c)?;
            if let Some(n) = c.last_mut() {
                n.note = Note::Offset(info.base_offset.saturating_add(od));
            }
            r.varbytes("keyLength", "key", c)?;
            r.varbytes("valueLength", "value", c)?;
            let headers = r.varint("headersCount", "varint", c)?;
            if headers < 0 || headers as usize > r.left() {
                return Err((
                    r.pos,
                    format!(
                        "headers count {headers} does not fit the {} bytes left",
                        r.left()
                    ),
                ));
            }
            for h in 0..headers {
                let hs = r.pos;
                let mut hg = Node::new("Header", "Header", hs, Region::Record, NodeKind::Group);
                hg.index = Some(h as u32);
                hg.source = r.source;
                let res = r
                    .varbytes("headerKeyLength", "headerKey", &mut hg.children)
                    .and_then(|_| r.varbytes("headerValueLength", "headerValue", &mut hg.children));
                hg.len = r.pos - hs;
                c.push(hg);
                res?;
            }
            Ok(())
        })();
        r.end = outer_end;
        inner?;
        if r.pos != rec_end {
            return Err((
                r.pos,
                format!(
                    "record length {len} leaves {} bytes unread",
                    rec_end - r.pos
                ),
            ));
        }
        Ok(())
    })();
    if info.control {
        // Control records: the key says which marker (version int16, type int16: 0 abort, 1 commit).
        if let Some(k) = g.children.iter_mut().find(|n| n.name == "key") {
            let kb: Option<Vec<u8>> = match &k.value {
                Value::Bytes(Some((o, l))) => r.buf.get(*o..o + l).map(<[u8]>::to_vec),
                Value::Blob(b) => Some(b.clone()),
                _ => None,
            };
            if let Some(kb) = kb.filter(|b| b.len() == 4) {
                k.note = Note::ControlType(crate::be::i16_at(&kb, 2));
            }
        }
    }
    g.len = r.pos - start;
    g.value = Value::Struct;
    out.push(g);
    res
}

fn legacy_message(r: &mut R<'_>, ctx: &mut Ctx<'_>, index: usize, magic: i8, depth: u8) -> Node {
    let start = r.pos;
    let mut g = Node::new(
        "Message",
        if magic == 0 {
            "Message v0"
        } else {
            "Message v1"
        },
        start,
        Region::RecordBatch,
        NodeKind::Group,
    );
    g.index = Some(index as u32);
    g.source = r.source;
    let res = (|| -> Res<()> {
        let c = &mut g.children;
        r.int("offset", "int64", 8, c)?;
        r.int("messageSize", "int32", 4, c)?;
        let crc_at = r.pos;
        let crc = r.uint32("crc", c)?;
        let computed = crc32fast::hash(r.buf.get(r.pos..r.end).unwrap_or(&[]));
        if let Some(n) = c.last_mut() {
            if crc == computed {
                n.note = Note::Crc {
                    stored: crc,
                    computed,
                    castagnoli: false,
                };
            } else {
                n.note = Note::Crc {
                    stored: crc,
                    computed,
                    castagnoli: true,
                };
                ctx.diag(Diagnosis {
                    kind: ProblemKind::CrcMismatch,
                    offset: crc_at,
                    message: format!(
                        "message CRC-32 0x{crc:08x} does not match its bytes (0x{computed:08x})"
                    ),
                });
            }
        }
        r.int("magic", "int8", 1, c)?;
        let attrs = r.int("attributes", "int8", 1, c)?;
        let codec = (attrs & 7) as u8;
        if let Some(n) = c.last_mut() {
            n.note = Note::MessageAttributes { attrs, magic };
        }
        if magic == 1 {
            let ts = r.int("timestamp", "int64", 8, c)?;
            if let Some(n) = c.last_mut() {
                n.note = Note::TimestampMs(ts);
            }
        }
        r.bytes32("key", c)?;
        let value = r.bytes32("value", c)?;
        // Legacy wrappers are decompressed even where record batches are not (summary views):
        // their inner messages are the records, and only decompressing counts them.
        if codec != 0 {
            if let Some((vs, vl)) = value {
                let data = r.buf.get(vs..vs + vl).unwrap_or(&[]);
                if depth >= MAX_DEPTH {
                    ctx.diag(Diagnosis {
                        kind: ProblemKind::BatchFormat,
                        offset: vs,
                        message: "compressed messages nested too deep".into(),
                    });
                    return Ok(());
                }
                match ctx.inflate(codec, data, vs) {
                    Err(e) => ctx.diag(Diagnosis {
                        kind: ProblemKind::Decompression,
                        offset: vs,
                        message: format!(
                            "{} message set does not decompress: {e}",
                            codec_name(codec)
                        ),
                    }),
                    Ok(plain) => {
                        if let Some(why) = lz4_frame_problem(codec, data) {
                            ctx.diag(Diagnosis {
                                kind: ProblemKind::Decompression,
                                offset: vs,
                                message: why,
                            });
                        }
                        *ctx.next_source += 1;
                        let source = *ctx.next_source;
                        let mut dn = Node::new(
                            "decompressed",
                            "message set",
                            0,
                            Region::Record,
                            NodeKind::Group,
                        );
                        dn.source = source;
                        dn.len = plain.len();
                        dn.desc = Cow::Owned(format!(
                            "the wrapper's inner messages, byte source #{source}"
                        ));
                        let mut inner = R {
                            buf: &plain,
                            pos: 0,
                            end: plain.len(),
                            source,
                            region: Region::Record,
                        };
                        batches(&mut inner, ctx, &mut dn.children, depth + 1);
                        // Summary views decompress only to count the inner messages: the
                        // bytes are not shown, so they are not kept.
                        dn.value = if ctx.opts.records {
                            Value::Blob(plain)
                        } else {
                            Value::None
                        };
                        c.push(dn);
                    }
                }
            }
        }
        Ok(())
    })();
    if let Err(e) = res {
        stop(r, &mut g, ctx, e);
    }
    g.value = Value::Struct;
    g.len = r.end - start;
    g
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    /// A zstd frame of `n` zero bytes made of RLE blocks: a few bytes that inflate hugely.
    fn zstd_zeros(n: usize) -> Vec<u8> {
        let mut f = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58];
        let mut left = n;
        while left > 0 {
            let size = left.min(128 * 1024);
            left -= size;
            let last = u32::from(left == 0);
            let header = last | (1 << 1) | ((size as u32) << 3);
            f.extend_from_slice(&header.to_le_bytes()[..3]);
            f.push(0);
        }
        f
    }

    /// A legacy message (magic 1) with the given codec and value.
    fn legacy(codec: u8, value: &[u8]) -> Vec<u8> {
        let mut body = vec![1, codec];
        body.extend_from_slice(&0i64.to_be_bytes());
        body.extend_from_slice(&(-1i32).to_be_bytes());
        body.extend_from_slice(&(value.len() as i32).to_be_bytes());
        body.extend_from_slice(value);
        let crc = crc32fast::hash(&body);
        let mut m = 0i64.to_be_bytes().to_vec();
        m.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        m.extend_from_slice(&crc.to_be_bytes());
        m.extend(body);
        m
    }

    fn run(bytes: &[u8], budget: usize) -> (Vec<Node>, Vec<Diagnosis>, usize, usize) {
        let mut diags = Vec::new();
        let mut source = 0;
        let mut spent = Spent {
            decompress_left: budget,
            ..Spent::default()
        };
        let opts = RecordsOptions {
            max_decompressed: budget,
            max_records: 10_000,
            max_nodes: 1_000_000,
            records: true,
        };
        let (n, _) = decode(
            bytes,
            0,
            bytes.len(),
            opts,
            &mut diags,
            &mut source,
            &mut spent,
        );
        (n, diags, spent.decompress_left, spent.dropped_diagnoses)
    }

    #[test]
    fn zeros_inside_a_nested_wrapper_stop_at_once() {
        // A wrapper holding a wrapper whose zstd value is 1 MiB of zeros: each 12 zero bytes
        // would read as a message of length 0.
        let inner = legacy(4, &zstd_zeros(1 << 20));
        let outer = legacy(1, &{
            use std::io::Write;
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(&inner).unwrap();
            e.finish().unwrap()
        });
        let (_, diags, _, dropped) = run(&outer, 64 << 20);
        assert!(diags.len() <= MAX_DIAGNOSES);
        assert_eq!(dropped, 0, "one diagnosis, not one per 12 zero bytes");
        assert!(
            diags.iter().any(|d| d
                .message
                .contains("shorter than the 14 bytes a magic-0 header takes")),
            "{diags:?}"
        );
    }

    #[test]
    fn the_decompression_budget_is_per_message() {
        // Four batches of 1 MiB each against a budget of 2.5 MiB for the whole message.
        let one = legacy(4, &zstd_zeros(1 << 20));
        let all: Vec<u8> = (0..4).flat_map(|_| one.clone()).collect();
        let (_, diags, left, _) = run(&all, 5 << 19);
        assert_eq!(left, 0);
        assert!(
            diags.iter().any(|d| d
                .message
                .contains("the batches of one message may decompress to")),
            "{diags:?}"
        );
    }

    #[test]
    fn diagnoses_are_bounded_and_the_rest_counted() {
        // 200 messages whose CRC does not match: a diagnosis each, 64 listed.
        let mut bad = legacy(0, b"x");
        bad[12] ^= 0xff;
        let all: Vec<u8> = (0..200).flat_map(|_| bad.clone()).collect();
        let (_, diags, _, dropped) = run(&all, 1 << 20);
        assert_eq!(diags.len(), MAX_DIAGNOSES);
        assert_eq!(dropped, 200 - MAX_DIAGNOSES);
    }

    #[test]
    fn lz4_frames_without_end_mark_or_with_bytes_after_are_flagged() {
        let mut frame = Vec::new();
        {
            use std::io::Write;
            let mut e = lz4_flex::frame::FrameEncoder::new(&mut frame);
            e.write_all(b"hello hello hello").unwrap();
            e.finish().unwrap();
        }
        assert_eq!(lz4_frame_problem(3, &frame), None);
        let mut trailing = frame.clone();
        trailing.extend_from_slice(&[1, 2, 3]);
        assert_eq!(
            lz4_frame_problem(3, &trailing).as_deref(),
            Some("3 bytes after the end of the lz4 frame")
        );
        let cut = &frame[..frame.len() - 4];
        assert!(
            lz4_frame_problem(3, cut).is_some_and(|w| w.contains("end mark")),
            "{cut:?}"
        );
    }
}
