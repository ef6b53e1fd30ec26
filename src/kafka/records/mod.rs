//! The `records` type: RecordBatch v2 with its records (compressed or not, control batches
//! included) and the legacy MessageSet v0/v1. Compressed data is decompressed into a second
//! byte source with its own offsets, bounded by `max_decompressed`.
//!
//! Batches sit inside a length-prefixed field, so damage here never stops the message: it is
//! reported and the rest of the field is shown raw.

pub use crate::kafka::meaning::facts::{RecordSet, Tally};
pub use crate::kafka::walk::decode::MAX_DECOMPRESSED;

pub mod metadata;

use crate::kafka::meaning::facts::BatchFact;
use crate::kafka::meaning::problem::{Detail, Path, ProblemKind};
use crate::kafka::spec::schema::{registry, Direction, Layout};
use crate::kafka::walk::cursor::{Cursor, Prefix, ReadError, Res};
use crate::kafka::walk::decode::{Decoder, Diagnosis, Spent, MAX_DIAGNOSES, R};
use crate::kafka::walk::node::{Desc, Enc, Node, NodeKind, Note, Region, Shape, Value};
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
    /// The layout of the records' values where the topic gives them one (the KRaft metadata
    /// log): such records are decoded whatever `records` says, for their types are counted.
    pub values: Option<&'static Layout>,
}

/// Nesting of compressed legacy messages (a wrapper holding compressed wrappers).
const MAX_DEPTH: u8 = 2;
/// Smallest length field (the bytes after it) of a legacy message v0 (crc, magic, attributes,
/// key and value lengths), a message v1 (plus a timestamp) and a record batch v2 (its header
/// with no records).
const LEGACY_V0_MIN: usize = 14;
const LEGACY_V1_MIN: usize = 22;
const BATCH_V2_MIN: usize = 49;

/// A compression codec's name, from the attributes' low three bits.
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
    /// What the records' keys and values held: secrets in the frame, spans to mask in the
    /// decompressed buffer being read, record types counted.
    found: &'o mut Found,
    /// What the batch (or legacy message) being read has said so far.
    seen: Seen,
    /// No node of the field is wanted (its counts and problems are): v2 batches are read
    /// without nodes, and the batches' facts are not kept. See [`read_field`].
    lean: bool,
}

/// What one batch or legacy message said, noted as each field is read (a damaged one stops
/// part way): its tally and its facts are computed from this, not searched for in its nodes.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    /// A legacy message (magic 0 or 1), not a v2 batch.
    legacy: bool,
    /// baseOffset (v2) or offset (legacy).
    base: Option<i64>,
    /// recordsCount and lastOffsetDelta (v2).
    count: Option<i64>,
    last_delta: Option<i64>,
    attributes: Option<i64>,
    /// A v2 batch's compressed block: its size, and what it decompressed to if it did.
    compressed: Option<(usize, Option<usize>)>,
    /// A legacy wrapper whose message set was decompressed, and the records of the inner
    /// messages kept from it.
    wrapped: bool,
    inner_records: i64,
    /// A v2 batch's producerId and baseSequence, and the CRC stored (v2 or legacy).
    producer_id: Option<i64>,
    base_sequence: Option<i64>,
    crc: Option<u32>,
}

impl Seen {
    /// Records in a legacy message: 1, or for a decompressed wrapper its inner messages'.
    fn legacy_records(&self) -> i64 {
        if self.wrapped {
            self.inner_records
        } else {
            1
        }
    }

    /// What it adds to the field's tally: a v2 batch counts once its recordsCount is read.
    fn tally(&self) -> Tally {
        let mut t = Tally::default();
        if let Some(c) = self.count {
            t.batches = 1;
            t.records = c.max(0);
        } else if self.legacy {
            t.messages = 1;
            t.records = self.legacy_records();
        }
        t
    }

    /// Its facts, for a batch of `wire_bytes` on the wire. A field not read counts as what
    /// Kafka would assume: offset -1, one record, no compression.
    fn fact(&self, wire_bytes: usize) -> BatchFact {
        let base = self.base.unwrap_or(-1);
        let records = self.count.unwrap_or(1);
        let (comp, plain) = match self.compressed {
            Some((c, p)) => (c, p.unwrap_or(c)),
            None => (0, 0),
        };
        BatchFact {
            base_offset: base,
            records,
            last_offset: self
                .last_delta
                .map_or(base.saturating_add(records.saturating_sub(1)), |d| {
                    base.saturating_add(d)
                }),
            codec: (self.attributes.unwrap_or(0) & 7) as u8,
            wire_bytes,
            plain_bytes: wire_bytes - comp + plain,
            producer_id: self.producer_id.unwrap_or(-1),
            base_sequence: self.base_sequence.unwrap_or(-1) as i32,
            crc: self.crc.unwrap_or(0),
        }
    }
}

/// What the keys and values of records held beyond bytes.
#[derive(Debug, Default)]
pub struct Found {
    /// Spans of the frame holding secrets.
    pub secrets: Vec<(usize, usize)>,
    /// Spans of the decompressed buffer being read that hold secrets: masked before it is
    /// kept.
    pub hidden: Vec<(usize, usize)>,
    /// Each type of record whose value has a layout (a metadata record, a KRaft control
    /// record), with how many there were, in order of first sight, and what the metadata
    /// records changed.
    pub log: metadata::LogRecords,
    /// The facts of each batch and legacy message kept as a node, in order.
    pub batches: Vec<BatchFact>,
}

/// Nodes in a subtree.
fn count_nodes(n: &Node) -> usize {
    1 + n.children.iter().map(count_nodes).sum::<usize>()
}

/// Whether `n` sums up the batches left out of a list.
fn is_omitted_batches(n: &Node) -> bool {
    n.name == "omitted" && n.ty == "batches"
}

/// Whether no batch of this list has been left out yet. Once one is, the rest follow it into
/// the same node, which stays last, so the last node tells (a scan of the list would make a
/// field of many small batches quadratic).
fn none_omitted(out: &[Node]) -> bool {
    !out.last().is_some_and(is_omitted_batches)
}

/// Nodes counted for a batch or legacy message header kept (its fields), beside its records.
const BATCH_NODES: usize = 16;

impl Ctx<'_> {
    fn in_budget(&self) -> bool {
        *self.nodes < self.opts.max_nodes
    }
}

impl Ctx<'_> {
    /// Lists a problem, or past [`MAX_DIAGNOSES`] counts it.
    fn diag(&mut self, kind: ProblemKind, offset: usize, detail: Detail) {
        if self.diags.len() < MAX_DIAGNOSES {
            self.diags.push(Diagnosis {
                kind,
                offset,
                path: Path::default(),
                detail,
            });
        } else {
            *self.dropped += 1;
        }
    }

    /// Decompresses within what the message may still take; says when the budget cut it.
    fn inflate(&mut self, codec: u8, data: &[u8], at: usize) -> Result<Vec<u8>, String> {
        let (plain, capped) = decompress(codec, data, *self.budget)?;
        *self.budget = self.budget.saturating_sub(plain.len());
        if capped {
            self.diag(
                ProblemKind::DecompressionLimit,
                at,
                Detail::DecompressionLimit {
                    max: self.opts.max_decompressed,
                },
            );
        }
        Ok(plain)
    }
}

/// One byte source (the frame, or a block decompressed from it) read with the cursor; the
/// nodes it records carry the source's number and the region being read.
struct Src<'a> {
    cur: Cursor<'a>,
    source: u16,
    region: Region,
}

/// The fixed-width integer types of batch and message headers.
#[derive(Debug, Clone, Copy)]
enum Int {
    Int8,
    Int16,
    Int32,
    Int64,
}

impl Int {
    fn name(self) -> &'static str {
        match self {
            Int::Int8 => "int8",
            Int::Int16 => "int16",
            Int::Int32 => "int32",
            Int::Int64 => "int64",
        }
    }
}

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

/// Sets the note of the node just pushed.
fn note_last(out: &mut [Node], note: Note) {
    if let Some(n) = out.last_mut() {
        n.note = note;
    }
}

impl<'a> Src<'a> {
    fn new(buf: &'a [u8], pos: usize, end: usize, source: u16, region: Region) -> Src<'a> {
        Src {
            cur: Cursor::new(buf, pos, end),
            source,
            region,
        }
    }

    /// The bytes from here to `end`, read as `region`.
    fn sub(&self, end: usize, region: Region) -> Src<'a> {
        Src::new(self.cur.buf, self.cur.pos, end, self.source, region)
    }

    fn pos(&self) -> usize {
        self.cur.pos
    }

    fn end(&self) -> usize {
        self.cur.end
    }

    fn left(&self) -> usize {
        self.cur.left()
    }

    /// The bytes from here to the end (for checksums and compressed data).
    fn rest(&self) -> &'a [u8] {
        self.cur.buf.get(self.cur.pos..self.cur.end).unwrap_or(&[])
    }

    fn leaf(&self, name: &'static str, ty: &'static str, off: usize, len: usize, v: Value) -> Node {
        leaf(name, ty, off, len, self.region, self.source, v)
    }

    /// A raw node over `len` bytes from `off`: `{len} bytes`.
    fn raw(&self, name: &'static str, ty: &'static str, off: usize, len: usize) -> Node {
        let mut n = self.leaf(name, ty, off, len, Value::Text(format!("{len} bytes")));
        n.kind = NodeKind::Raw;
        n
    }

    /// A span of this source as a value: offsets in the frame, or the bytes themselves for a
    /// decompressed source (which the renderers do not hold).
    fn bytes_value(&self, start: usize, data: &[u8]) -> Value {
        if self.source == 0 {
            Value::Bytes(Some((start, data.len())))
        } else {
            Value::Blob(data.to_vec())
        }
    }

    fn int(&mut self, name: &'static str, ty: Int, out: &mut Vec<Node>) -> Res<i64> {
        let at = self.pos();
        let v = match ty {
            Int::Int8 => self.cur.i8(name)?.into(),
            Int::Int16 => self.cur.i16(name)?.into(),
            Int::Int32 => self.cur.i32(name)?.into(),
            Int::Int64 => self.cur.i64(name)?,
        };
        out.push(self.leaf(name, ty.name(), at, self.pos() - at, Value::Int(v)));
        Ok(v)
    }

    fn uint32(&mut self, name: &'static str, out: &mut Vec<Node>) -> Res<u32> {
        let at = self.pos();
        let v = self.cur.u32(name)?;
        out.push(self.leaf(name, "uint32", at, 4, Value::Int(v.into())));
        Ok(v)
    }

    /// Zigzag varint (Kafka's `varint`/`varlong`, `ty`), at most 10 bytes.
    fn varint(&mut self, name: &'static str, ty: &'static str, out: &mut Vec<Node>) -> Res<i64> {
        let at = self.pos();
        let v = self.cur.varint(name)?;
        out.push(self.leaf(name, ty, at, self.pos() - at, Value::Int(v)));
        Ok(v)
    }

    /// A varint-length-prefixed byte string (record key, value, header key or value).
    fn varbytes(
        &mut self,
        len_name: &'static str,
        name: &'static str,
        out: &mut Vec<Node>,
    ) -> Res<()> {
        let l = self.cur.length(Prefix::Varint, len_name, name)?;
        let len_node = self.leaf(
            len_name,
            "varint",
            l.start,
            self.pos() - l.start,
            Value::Int(l.raw),
        );
        out.push(len_node);
        let start = self.pos();
        let value = match l.len {
            None => Value::Bytes(None),
            Some(n) => {
                let data = self.cur.take(n, name)?;
                self.bytes_value(start, data)
            }
        };
        let mut n = self.leaf(name, "varbytes", start, self.pos() - start, value);
        n.shape = Shape::VarBytes;
        out.push(n);
        Ok(())
    }

    /// An int32-length-prefixed byte string (legacy message key and value): its span.
    fn bytes32(&mut self, name: &'static str, out: &mut Vec<Node>) -> Res<Option<(usize, usize)>> {
        let l = self
            .cur
            .length_worded(Prefix::Int32, name, |bad| Detail::LengthMisfit {
                what: name,
                n: bad.n,
                left: bad.left,
            })?;
        let mut g = Node::new(name, "bytes", l.start, self.region, NodeKind::Group);
        g.shape = Shape::ByteParts;
        g.source = self.source;
        let len_node = self.leaf("length", "int32", l.start, 4, Value::Int(l.raw));
        g.children.push(len_node);
        let span = match l.len {
            None => None,
            Some(n) => {
                let start = self.pos();
                let data = self.cur.take(n, name)?;
                let value = self.bytes_value(start, data);
                let mut d = self.leaf("data", "varbytes", start, n, value);
                d.shape = Shape::VarBytes;
                g.children.push(d);
                Some((start, n))
            }
        };
        g.value = match span {
            None => Value::Null,
            Some((_, n)) => Value::Text(format!("{n} bytes")),
        };
        g.len = self.pos() - l.start;
        out.push(g);
        Ok(span)
    }
}

/// Decompresses `data` with Kafka's codec `codec`, keeping at most `cap` bytes. Returns the
/// bytes and whether the cap cut them.
pub fn decompress(codec: u8, data: &[u8], cap: usize) -> Result<(Vec<u8>, bool), String> {
    match codec {
        1 => gzip(data, cap),
        2 => snappy(data, cap),
        3 => lz4(data, cap),
        4 => {
            let d = ruzstd::decoding::StreamingDecoder::new(data).map_err(|e| e.to_string())?;
            read_capped(d, cap)
        }
        c => Err(format!("unknown compression codec {c}")),
    }
}

/// LZ4 (codec 3). A frame as Kafka's clients write it (version 1, independent blocks, no
/// checksum, content size or dictionary, its header checksum right, blocks that each give
/// bytes, an end mark ending the data, at most `cap` bytes) is decompressed a block at a time
/// with lz4_flex's block decoder: its `FrameDecoder` zeroes a buffer of the frame's largest
/// block (64 KiB to 4 MiB) for every batch, which cost more than decompressing a small one.
/// Anything else goes through the `FrameDecoder` as before, so that what comes out, error
/// words and a capped output included, is its own.
fn lz4(data: &[u8], cap: usize) -> Result<(Vec<u8>, bool), String> {
    match lz4_plain(data, cap) {
        Some(plain) => Ok((plain, false)),
        None => read_capped(lz4_flex::frame::FrameDecoder::new(data), cap),
    }
}

/// The FLG byte of [`lz4_plain`]'s frames: version 1, independent blocks, nothing else.
const LZ4_FLG_PLAIN: u8 = 0x60;

/// The block size a BD byte gives, with the header checksum of a frame of [`LZ4_FLG_PLAIN`]
/// and that BD (the second byte of the xxHash32 of FLG and BD), or `None` for another BD.
fn lz4_block_size(bd: u8) -> Option<(usize, u8)> {
    match bd {
        0x40 => Some((64 << 10, 0x82)),
        0x50 => Some((256 << 10, 0xfb)),
        0x60 => Some((1 << 20, 0x51)),
        0x70 => Some((4 << 20, 0x73)),
        _ => None,
    }
}

/// The plain case of [`lz4`], or `None` for the `FrameDecoder` to read.
fn lz4_plain(data: &[u8], cap: usize) -> Option<Vec<u8>> {
    let [0x04, 0x22, 0x4d, 0x18, LZ4_FLG_PLAIN, bd, checksum, blocks @ ..] = data else {
        return None;
    };
    let mut rest: &[u8] = blocks;
    let (max_block, want) = lz4_block_size(*bd)?;
    if *checksum != want {
        return None;
    }
    let mut out: Vec<u8> = Vec::new();
    loop {
        let [s0, s1, s2, s3, after @ ..] = rest else {
            return None;
        };
        let size = u32::from_le_bytes([*s0, *s1, *s2, *s3]);
        if size == 0 {
            // The end mark, ending the data.
            if !after.is_empty() {
                return None;
            }
            // A block's room is its largest size: give back what it did not fill.
            if out.capacity() > out.len().saturating_mul(2) {
                out.shrink_to_fit();
            }
            return Some(out);
        }
        let len = (size & 0x7fff_ffff) as usize;
        let block = after.get(..len).filter(|_| len <= max_block)?;
        rest = after.get(len..)?;
        let before = out.len();
        if size & 0x8000_0000 != 0 {
            out.extend_from_slice(block);
        } else if out.is_empty() {
            // The first block decompresses straight into the output (not zeroed first).
            out = lz4_flex::block::decompress(block, max_block).ok()?;
        } else {
            out.extend_from_slice(&lz4_flex::block::decompress(block, max_block).ok()?);
        }
        // The FrameDecoder stops at a block that gives nothing, as at the end.
        if out.len() == before || out.len() > cap {
            return None;
        }
    }
}

/// Gzip (codec 1). A batch as Kafka's clients write it (a gzip header without optional
/// fields, one deflate stream, a trailer whose CRC-32 and length match it, nothing after) is
/// inflated whole by miniz_oxide's core with a decompressor kept per thread: flate2's
/// `GzDecoder` makes and zeroes a 43 KB inflate state for every batch, which cost more than
/// inflating a small one (and a reset zeroes it as well). Anything else (optional header
/// fields, damage, a bad or missing trailer, bytes after it, more than `cap` bytes) goes
/// through flate2 as before, so that what comes out, error words included, is flate2's. Such
/// a batch is inflated twice (up to `cap` each time, one after the other): damaged and
/// over-budget batches are rare, and the budget bounds the work.
fn gzip(data: &[u8], cap: usize) -> Result<(Vec<u8>, bool), String> {
    match gzip_plain(data, cap) {
        Some(plain) => Ok((plain, false)),
        None => read_capped(flate2::read::GzDecoder::new(data), cap),
    }
}

thread_local! {
    /// The decompressor of [`gzip_plain`], reused: `init` resets its state, and its tables
    /// are rebuilt by each block that uses them.
    static INFLATER: std::cell::Cell<Option<Box<miniz_oxide::inflate::core::DecompressorOxide>>> =
        const { std::cell::Cell::new(None) };
}

/// The plain case of [`gzip`], or `None` for flate2 to read.
fn gzip_plain(data: &[u8], cap: usize) -> Option<Vec<u8>> {
    // ID1, ID2, deflate, no flags; the time, extra flags and OS are not read.
    let [0x1f, 0x8b, 8, 0, _, _, _, _, _, _, deflated @ ..] = data else {
        return None;
    };
    INFLATER.with(|cell| {
        let mut d = cell.take().unwrap_or_default();
        d.init();
        let plain = inflate_whole(&mut d, deflated, cap);
        cell.set(Some(d));
        plain
    })
}

/// Inflates a raw deflate stream followed by a gzip trailer that matches it, ending the
/// data; `None` for anything else, or for more than `cap` bytes.
fn inflate_whole(
    d: &mut miniz_oxide::inflate::core::DecompressorOxide,
    mut input: &[u8],
    cap: usize,
) -> Option<Vec<u8>> {
    use miniz_oxide::inflate::core::{decompress, inflate_flags};
    use miniz_oxide::inflate::TINFLStatus;
    // The whole output is the window: no 32 KiB ring to copy out of. It grows by doubling,
    // as `read_capped`'s does, up to `cap`.
    let mut out = vec![0u8; input.len().saturating_mul(4).max(4096).min(cap)];
    let mut at = 0;
    loop {
        let flags = inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
        let (status, used, made) = decompress(d, input, &mut out, at, flags);
        at += made;
        input = input.get(used..)?;
        match status {
            TINFLStatus::Done => break,
            TINFLStatus::HasMoreOutput if out.len() < cap => {
                let grown = out.len().saturating_mul(2).max(4096).min(cap);
                // Exact, so that the room never passes `cap` (`resize` alone may double it).
                out.reserve_exact(grown - out.len());
                out.resize(grown, 0);
            }
            _ => return None,
        }
    }
    out.truncate(at);
    // CRC-32 and length (modulo 2^32) of the output, little-endian, and nothing after.
    let [c0, c1, c2, c3, n0, n1, n2, n3] = *input else {
        return None;
    };
    let crc = u32::from_le_bytes([c0, c1, c2, c3]);
    let len = u32::from_le_bytes([n0, n1, n2, n3]);
    (crc == crc32fast::hash(&out) && len == out.len() as u32).then_some(out)
}

/// Reads a decompressing stream to its end or to `cap` bytes, whichever comes first.
fn read_capped(mut r: impl Read, cap: usize) -> Result<(Vec<u8>, bool), String> {
    // Read straight into the output, grown by hand: read_to_end doubles the buffer, which can
    // hold twice the cap, and a fixed chunk to copy from is zeroed again for every batch.
    // `out` past `filled` is zeroed room, each byte of it zeroed once.
    let mut out: Vec<u8> = Vec::new();
    let mut filled = 0;
    loop {
        if filled == out.len() {
            if filled == cap {
                // Full: one byte more says whether the cap cut the data.
                let more = read_some(&mut r, &mut [0u8; 1])?;
                return Ok((out, more > 0));
            }
            let step = filled.max(4096).min(cap - filled);
            out.reserve_exact(step);
            out.resize(filled + step, 0);
        }
        let n = read_some(&mut r, out.get_mut(filled..).unwrap_or_default())?;
        if n == 0 {
            out.truncate(filled);
            return Ok((out, false));
        }
        filled += n;
    }
}

/// One read of `r` into `buf`, tried again when interrupted.
fn read_some(r: &mut impl Read, buf: &mut [u8]) -> Result<usize, String> {
    loop {
        match r.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Snappy (codec 2). Kafka's Java client wraps it in xerial framing (a 16-byte header, then
/// big-endian length-prefixed blocks); librdkafka may send a plain block.
fn snappy(data: &[u8], cap: usize) -> Result<(Vec<u8>, bool), String> {
    const XERIAL: &[u8] = b"\x82SNAPPY\x00";
    let mut out = Vec::new();
    let mut dec = snap::raw::Decoder::new();
    if !data.starts_with(XERIAL) {
        let capped = snappy_block(&mut dec, data, cap, &mut out)?;
        return Ok((out, capped));
    }
    let mut p = 16usize;
    while p < data.len() {
        let l = data.get(p..p + 4).ok_or("xerial block length cut short")?;
        let n = crate::be::u32_at(l, 0) as usize;
        let b = data
            .get(p + 4..p + 4 + n)
            .ok_or("xerial block runs past the data")?;
        if snappy_block(&mut dec, b, cap, &mut out)? {
            return Ok((out, true));
        }
        p += 4 + n;
    }
    Ok((out, false))
}

/// One snappy block appended to `out`, unless it would take `out` past `cap` (then true,
/// and nothing is appended). The block says its size, checked against the cap before any
/// allocation.
fn snappy_block(
    dec: &mut snap::raw::Decoder,
    b: &[u8],
    cap: usize,
    out: &mut Vec<u8>,
) -> Result<bool, String> {
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
}

/// LZ4 frames (Kafka's codec 3) end with an end mark (a zero block size) and, when the header
/// says so, a content checksum; a decoder may stop at the data's end without either, or ignore
/// bytes after the frame. Says which, if any.
fn lz4_frame_problem(codec: u8, data: &[u8]) -> Option<Detail> {
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
            return Some(Detail::Lz4NoEndMark);
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
        None => Some(Detail::Lz4CutInChecksum),
        Some(0) => None,
        Some(n) => Some(Detail::Lz4Trailing { n }),
    }
}

impl Tally {
    fn add(&mut self, o: Tally) {
        self.batches = self.batches.saturating_add(o.batches);
        self.messages = self.messages.saturating_add(o.messages);
        self.records = self.records.saturating_add(o.records);
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
) -> Option<Detail> {
    let &(_, _, from) = V2_BATCHES_FROM
        .iter()
        .find(|(k, d, _)| *k == api_key && *d == direction)?;
    (carries_message_sets(api_key, direction, version) && tally.batches > 0).then(|| {
        Detail::Interop {
            api_key,
            version,
            response: direction == Direction::Response,
            last_legacy: from - 1,
        }
    })
}

/// Decodes the bytes of a `records` field, `buf[start..end]`, into batch nodes: the tests' way
/// in (the decoder reads a field into its own node's children, [`Decoder::records_field`]).
#[cfg(test)]
pub fn decode(
    buf: &[u8],
    span: (usize, usize),
    opts: RecordsOptions,
    diags: &mut Vec<Diagnosis>,
    next_source: &mut u16,
    spent: &mut Spent,
    found: &mut Found,
) -> (Vec<Node>, Tally) {
    let mut out = Vec::new();
    let tally = read_field(
        buf,
        span,
        opts,
        (diags, next_source, spent, found),
        &mut out,
        false,
    );
    (out, tally)
}

/// What [`decode`] and [`read_field`] write to besides the nodes: the message's diagnoses, byte
/// sources handed out, budgets spent, and what the records held.
type Sinks<'o> = (
    &'o mut Vec<Diagnosis>,
    &'o mut u16,
    &'o mut Spent,
    &'o mut Found,
);

/// The batches of `buf[start..end]` into `out`, with the field's tally. `lean` is for a
/// field whose node nothing reads (the summary's and statistics' walks): its tally, its
/// problems and what it spends of the message's budgets are what [`decode`] gives, but v2
/// batches make no node (legacy messages still do, into `out`) and no batch fact is kept.
/// It applies only where the records inside batches are not read (`records` off, no value
/// layout); compressed ones are still inflated, for the problems that finds (see
/// [`records_left_raw`]).
fn read_field(
    buf: &[u8],
    (start, end): (usize, usize),
    opts: RecordsOptions,
    (diags, next_source, spent, found): Sinks<'_>,
    out: &mut Vec<Node>,
    lean: bool,
) -> Tally {
    let mut ctx = Ctx {
        opts,
        diags,
        next_source,
        budget: &mut spent.decompress_left,
        dropped: &mut spent.dropped_diagnoses,
        tally: Tally::default(),
        nodes: &mut spent.nodes,
        found,
        seen: Seen::default(),
        lean: lean && !opts.records && opts.values.is_none(),
    };
    let mut r = Src::new(buf, start, end, 0, Region::RecordBatch);
    batches(&mut r, &mut ctx, out, 0);
    ctx.tally
}

/// A sequence of batches or legacy messages until the end of the cursor.
fn batches(r: &mut Src<'_>, ctx: &mut Ctx<'_>, out: &mut Vec<Node>, depth: u8) {
    let mut index = 0usize;
    // Lean: whether a batch has been left out (the omitted node [`keep_batch`] would make).
    let mut omitted = false;
    while r.left() > 0 {
        let at = r.pos();
        let Some((magic, total)) = batch_extent(r, ctx, out) else {
            return;
        };
        let mut sub = r.sub(at + total, r.region);
        // A wrapper's inner messages are read while the wrapper is: each has its own notes.
        let outer = std::mem::take(&mut ctx.seen);
        let node = match magic {
            2 if ctx.lean => {
                batch_v2_lean(&mut sub, ctx);
                None
            }
            2 => Some(batch_v2(&mut sub, ctx, index)),
            0 | 1 => Some(legacy_message(&mut sub, ctx, index, magic, depth)),
            m => Some(unknown_magic(&sub, ctx, m)),
        };
        let seen = std::mem::replace(&mut ctx.seen, outer);
        let known = matches!(magic, 0..=2);
        // Every batch's node spans the whole of its bytes.
        let wire_bytes = total;
        let kept = match node {
            Some(node) if !ctx.lean => keep_batch(r, ctx, out, node, index, (at, at + total)),
            _ => keep_lean(ctx, &mut omitted, index),
        };
        if depth == 0 {
            ctx.tally.add(seen.tally());
            if kept && known && !ctx.lean {
                ctx.found.batches.push(seen.fact(wire_bytes));
            }
        } else if kept && seen.legacy {
            ctx.seen.inner_records += seen.legacy_records();
        }
        r.cur.pos = at + total;
        index += 1;
    }
}

/// The magic and the size (its length field plus the 12 bytes before it) of the batch or
/// legacy message at the cursor, when the bytes hold one; else the rest of the bytes end
/// `out` raw, with why.
fn batch_extent(r: &mut Src<'_>, ctx: &mut Ctx<'_>, out: &mut Vec<Node>) -> Option<(i8, usize)> {
    let at = r.pos();
    // Both layouts start with an int64 offset and an int32 length; the magic byte is at
    // offset 16 in both.
    let Some(h) = r.rest().get(..17) else {
        partial(
            r,
            out,
            "fewer bytes than a batch header: a fetch may end with a partial batch",
        );
        return None;
    };
    let (len, magic) = (crate::be::i32_at(h, 8), crate::be::i8_at(h, 16));
    if len < 0 {
        ctx.diag(
            ProblemKind::LengthOutOfRange,
            at,
            Detail::NegativeBatchLength { len },
        );
        partial(r, out, "bytes after a negative batch length");
        return None;
    }
    let min = match magic {
        0 => LEGACY_V0_MIN,
        1 => LEGACY_V1_MIN,
        _ => BATCH_V2_MIN,
    };
    if (len as usize) < min {
        // A length shorter than the header it must hold makes no progress through the
        // bytes (a run of zeros reads as endless empty messages): stop here.
        ctx.diag(
            ProblemKind::BatchFormat,
            at + 8,
            Detail::BatchLengthShort { len, min, magic },
        );
        partial(r, out, "bytes from a batch length too short to be one");
        return None;
    }
    let total = 12 + len as usize;
    if total > r.left() {
        // Fetch responses may end with a batch cut at the fetch size: not an error.
        partial(
            r,
            out,
            "a batch cut short: a fetch response may end with a partial batch",
        );
        return None;
    }
    Some((magic, total))
}

/// A batch whose magic is none kdissect knows: diagnosed, shown raw.
fn unknown_magic(r: &Src<'_>, ctx: &mut Ctx<'_>, magic: i8) -> Node {
    let (at, total) = (r.pos(), r.left());
    ctx.diag(
        ProblemKind::BatchFormat,
        at + 16,
        Detail::BadMagic { magic },
    );
    let mut n = r.leaf(
        "batch",
        "bytes",
        at,
        total,
        Value::Text(format!("magic {magic}: unknown layout")),
    );
    n.kind = NodeKind::Raw;
    n
}

/// Keeps the node of batch `index`, which spans `at..end`, within the budgets; past them,
/// the batch joins the one node that sums up the batches left out. Says whether it was kept.
fn keep_batch(
    r: &Src<'_>,
    ctx: &mut Ctx<'_>,
    out: &mut Vec<Node>,
    node: Node,
    index: usize,
    (at, end): (usize, usize),
) -> bool {
    if index < ctx.opts.max_records && none_omitted(out) && ctx.in_budget() {
        *ctx.nodes += BATCH_NODES;
        out.push(node);
        return true;
    }
    if none_omitted(out) {
        let mut n = r.leaf(
            "omitted",
            "batches",
            at,
            0,
            Value::Text("more batches, decoded but not kept".into()),
        );
        n.kind = NodeKind::Raw;
        n.shape = Shape::Omitted;
        out.push(n);
    }
    if let Some(last) = out.last_mut().filter(|n| is_omitted_batches(n)) {
        last.len = end - last.offset;
    }
    false
}

/// [`keep_batch`] with no node: the same budgets spent, the same batches kept.
fn keep_lean(ctx: &mut Ctx<'_>, omitted: &mut bool, index: usize) -> bool {
    if index < ctx.opts.max_records && !*omitted && ctx.in_budget() {
        *ctx.nodes += BATCH_NODES;
        return true;
    }
    *omitted = true;
    false
}

/// The rest of the bytes, raw, with why they are not decoded.
fn partial(r: &mut Src<'_>, out: &mut Vec<Node>, why: &'static str) {
    let mut n = r.raw("partial", "bytes", r.pos(), r.left());
    n.desc = why.into();
    out.push(n);
    r.cur.pos = r.end();
}

/// Finishes a group whose decoding stopped: reason, then the rest raw.
fn stop(r: &mut Src<'_>, g: &mut Node, ctx: &mut Ctx<'_>, e: ReadError) {
    let mut n = Node::new("!! malformed", "", e.offset, r.region, NodeKind::Error);
    n.source = r.source;
    n.desc = e.detail.to_string().into();
    ctx.diag(e.kind, e.offset, e.detail);
    g.children.push(n);
    // The raw rest starts where the decoded leaves end: a failed read may have consumed
    // bytes (a varint's continuation bytes), and every byte must still be in one leaf.
    let from = covered_end(g).min(r.end());
    if from < r.end() {
        g.children
            .push(r.raw("unparsed", "bytes", from, r.end() - from));
    }
    r.cur.pos = r.end();
}

/// Where the leaves under `g` (of its byte source; error nodes aside) end, or its start.
fn covered_end(g: &Node) -> usize {
    fn go(n: &Node, source: u16, end: &mut usize) {
        let own: Vec<&Node> = n.children.iter().filter(|c| c.source == source).collect();
        if own.is_empty() {
            if n.kind != NodeKind::Error {
                *end = (*end).max(n.end());
            }
            return;
        }
        own.into_iter().for_each(|c| go(c, source, end));
    }
    let mut end = g.offset;
    for c in g.children.iter().filter(|c| c.source == g.source) {
        go(c, g.source, &mut end);
    }
    end
}

fn batch_v2(r: &mut Src<'_>, ctx: &mut Ctx<'_>, index: usize) -> Node {
    let start = r.pos();
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
    g.len = r.end() - start;
    g
}

/// What the header of a v2 batch says about its records.
#[derive(Debug, Clone, Copy)]
struct BatchInfo {
    base_offset: i64,
    base_ts: i64,
    control: bool,
    /// Compression codec (attributes bits 0-2).
    codec: u8,
    count: i64,
}

impl BatchInfo {
    /// `3 records, zstd, control`.
    fn summary(&self) -> String {
        let mut s = if self.count == 1 {
            "1 record".to_string()
        } else {
            format!("{} records", self.count)
        };
        if self.codec != 0 {
            s.push_str(&format!(", {}", codec_name(self.codec)));
        }
        if self.control {
            s.push_str(", control");
        }
        s
    }
}

/// A v2 batch's header, then its records: plain, compressed, or left raw in views that do
/// not show them.
fn batch_v2_body(r: &mut Src<'_>, ctx: &mut Ctx<'_>, g: &mut Node) -> Res<()> {
    let info = batch_v2_header(r, ctx, &mut g.children)?;
    g.value = Value::Text(info.summary());
    if !ctx.opts.records && ctx.opts.values.is_none() {
        records_left_raw(r, ctx, info.codec, &mut g.children);
        Ok(())
    } else if info.codec == 0 {
        let mut recs = r.sub(r.end(), Region::Record);
        let res = records(&mut recs, ctx, info, &mut g.children);
        r.cur.pos = recs.pos();
        res
    } else {
        compressed_records(r, ctx, info, &mut g.children)
    }
}

/// The fields of a v2 batch before its records, baseOffset to recordsCount.
fn batch_v2_header(r: &mut Src<'_>, ctx: &mut Ctx<'_>, c: &mut Vec<Node>) -> Res<BatchInfo> {
    let base_offset = r.int("baseOffset", Int::Int64, c)?;
    ctx.seen.base = Some(base_offset);
    r.int("batchLength", Int::Int32, c)?;
    r.int("partitionLeaderEpoch", Int::Int32, c)?;
    r.int("magic", Int::Int8, c)?;
    crc(r, ctx, c, true)?;
    let attrs = r.int("attributes", Int::Int16, c)?;
    ctx.seen.attributes = Some(attrs);
    note_last(c, Note::BatchAttributes(attrs));
    ctx.seen.last_delta = Some(r.int("lastOffsetDelta", Int::Int32, c)?);
    let base_ts = r.int("baseTimestamp", Int::Int64, c)?;
    note_last(c, Note::TimestampMs(base_ts));
    let max_ts = r.int("maxTimestamp", Int::Int64, c)?;
    note_last(c, Note::TimestampMs(max_ts));
    // The producer state: idempotent and transactional producers' id, epoch and sequence.
    ctx.seen.producer_id = Some(r.int("producerId", Int::Int64, c)?);
    r.int("producerEpoch", Int::Int16, c)?;
    ctx.seen.base_sequence = Some(r.int("baseSequence", Int::Int32, c)?);
    let count = r.int("recordsCount", Int::Int32, c)?;
    ctx.seen.count = Some(count);
    Ok(BatchInfo {
        base_offset,
        base_ts,
        control: attrs & 32 != 0,
        codec: (attrs & 7) as u8,
        count,
    })
}

/// A checksum over the rest of the batch (CRC-32C, v2) or message (CRC-32, legacy): noted
/// with the one the bytes give; a mismatch is diagnosed.
fn crc(r: &mut Src<'_>, ctx: &mut Ctx<'_>, c: &mut Vec<Node>, castagnoli: bool) -> Res<()> {
    let at = r.pos();
    let stored = r.uint32("crc", c)?;
    let computed = check_crc(r, ctx, (at, stored), castagnoli);
    note_last(
        c,
        Note::Crc {
            stored,
            computed,
            castagnoli,
        },
    );
    Ok(())
}

/// The checksum of the rest of the source, checked against the one `stored` at `at`: noted,
/// a mismatch diagnosed. Returns the one computed.
fn check_crc(r: &Src<'_>, ctx: &mut Ctx<'_>, (at, stored): (usize, u32), castagnoli: bool) -> u32 {
    ctx.seen.crc = Some(stored);
    let computed = if castagnoli {
        crc32c::crc32c(r.rest())
    } else {
        crc32fast::hash(r.rest())
    };
    if stored != computed {
        ctx.diag(
            ProblemKind::CrcMismatch,
            at,
            Detail::CrcMismatch {
                castagnoli,
                stored,
                computed,
            },
        );
    }
    computed
}

/// A v2 batch read with no node ([`Ctx::lean`]): what [`batch_v2`] notes and diagnoses, its
/// records left unread as [`records_left_raw`] leaves them.
fn batch_v2_lean(r: &mut Src<'_>, ctx: &mut Ctx<'_>) {
    match batch_v2_header_lean(r, ctx) {
        Ok(codec) => inflate_unread(r, ctx, codec),
        // Not met: the batch's extent holds a whole header. Diagnosed as `stop` would.
        Err(e) => ctx.diag(e.kind, e.offset, e.detail),
    }
    r.cur.pos = r.end();
}

/// [`batch_v2_header`] with no node: the fields noted, the CRC checked. Returns the codec.
fn batch_v2_header_lean(r: &mut Src<'_>, ctx: &mut Ctx<'_>) -> Res<u8> {
    let c = &mut r.cur;
    ctx.seen.base = Some(c.i64("baseOffset")?);
    c.i32("batchLength")?;
    c.i32("partitionLeaderEpoch")?;
    c.i8("magic")?;
    let at = c.pos;
    let stored = c.u32("crc")?;
    check_crc(r, ctx, (at, stored), true);
    let c = &mut r.cur;
    let attrs = i64::from(c.i16("attributes")?);
    ctx.seen.attributes = Some(attrs);
    ctx.seen.last_delta = Some(c.i32("lastOffsetDelta")?.into());
    c.i64("baseTimestamp")?;
    c.i64("maxTimestamp")?;
    ctx.seen.producer_id = Some(c.i64("producerId")?);
    c.i16("producerEpoch")?;
    ctx.seen.base_sequence = Some(c.i32("baseSequence")?.into());
    ctx.seen.count = Some(c.i32("recordsCount")?.into());
    Ok((attrs & 7) as u8)
}

/// Headers only (summary and statistics views): the records stay one raw span. The
/// compressed data is still inflated (and dropped) so that a batch that does not decompress,
/// or that passes the message's budget, is reported whatever the view: the exit status must
/// not depend on it. The bytes stay spent: the budget bounds the work of a message as well as
/// its memory (512 batches of 64 MiB each in a 1 MB request would otherwise be inflated one
/// after the other, 32 GiB of work).
fn records_left_raw(r: &mut Src<'_>, ctx: &mut Ctx<'_>, codec: u8, c: &mut Vec<Node>) {
    let at = r.pos();
    inflate_unread(r, ctx, codec);
    let mut n = r.raw("records", "bytes", at, r.left());
    n.region = Region::Record;
    c.push(n);
    r.cur.pos = r.end();
}

/// The compressed records from the cursor to its end inflated and dropped, for the problems
/// that finds and the budget it spends (see [`records_left_raw`]).
fn inflate_unread(r: &Src<'_>, ctx: &mut Ctx<'_>, codec: u8) {
    if codec != 0 {
        let (at, data) = (r.pos(), r.rest());
        match ctx.inflate(codec, data, at) {
            Err(e) => does_not_decompress(ctx, codec, at, &e),
            Ok(_) => lz4_check(ctx, codec, data, at),
        }
    }
}

fn does_not_decompress(ctx: &mut Ctx<'_>, codec: u8, at: usize, e: &str) {
    ctx.diag(
        ProblemKind::Decompression,
        at,
        Detail::DoesNotDecompress {
            codec: codec_name(codec),
            message_set: false,
            error: e.to_string(),
        },
    );
}

/// Diagnoses an lz4 frame without its end, or with bytes after it.
fn lz4_check(ctx: &mut Ctx<'_>, codec: u8, data: &[u8], at: usize) {
    if let Some(why) = lz4_frame_problem(codec, data) {
        ctx.diag(ProblemKind::Decompression, at, why);
    }
}

/// Compressed records: the rest of the batch is one compressed block, shown raw, then
/// decompressed into a byte source of its own.
fn compressed_records(
    r: &mut Src<'_>,
    ctx: &mut Ctx<'_>,
    info: BatchInfo,
    c: &mut Vec<Node>,
) -> Res<()> {
    let codec = info.codec;
    let at = r.pos();
    let data = r.cur.take(r.left(), "compressed records")?;
    ctx.seen.compressed = Some((data.len(), None));
    let mut comp = Node::new(
        "compressed",
        codec_name(codec),
        at,
        Region::RecordBatch,
        NodeKind::Group,
    );
    comp.source = r.source;
    comp.len = data.len();
    let mut dl = r.raw("data", "bytes", at, data.len());
    dl.region = Region::RecordBatch;
    dl.desc = "compressed records; decompressed below, with their own offsets".into();
    comp.children.push(dl);
    match ctx.inflate(codec, data, at) {
        Err(e) => {
            does_not_decompress(ctx, codec, at, &e);
            comp.value = Value::Text(format!("does not decompress: {e}"));
        }
        Ok(plain) => {
            let dn = decompressed_records(ctx, info, data, at, plain);
            ctx.seen.compressed = Some((data.len(), Some(dn.len)));
            comp.value = Value::Text(format!("{} → {} bytes", comp.len, dn.len));
            comp.children.push(dn);
        }
    }
    c.push(comp);
    Ok(())
}

/// A new byte source of `len` decompressed bytes: its number, and the group node that holds
/// what is decoded from it.
fn new_source(ctx: &mut Ctx<'_>, ty: &'static str, len: usize) -> (u16, Node) {
    *ctx.next_source += 1;
    let source = *ctx.next_source;
    let mut dn = Node::new("decompressed", ty, 0, Region::Record, NodeKind::Group);
    dn.shape = Shape::Decompressed;
    dn.source = source;
    dn.len = len;
    (source, dn)
}

/// The records decompressed from `data` (at `at`), read as a byte source of their own. Data
/// cut by the message's budget ends where it was cut; bytes after the last record are
/// diagnosed.
fn decompressed_records(
    ctx: &mut Ctx<'_>,
    info: BatchInfo,
    data: &[u8],
    at: usize,
    plain: Vec<u8>,
) -> Node {
    let capped = *ctx.budget == 0;
    let hidden_from = ctx.found.hidden.len();
    let (source, mut dn) = new_source(ctx, "records", plain.len());
    dn.desc =
        format!("decompressed bytes, byte source #{source}: offsets count from its start").into();
    lz4_check(ctx, info.codec, data, at);
    let mut recs = Src::new(&plain, 0, plain.len(), source, Region::Record);
    match records(&mut recs, ctx, info, &mut dn.children) {
        Err(e) if capped => {
            let from = e.offset.min(plain.len());
            let mut n = recs.leaf(
                "cut",
                "bytes",
                e.offset,
                plain.len() - from,
                Value::Text("cut at the message's decompression budget".into()),
            );
            n.kind = NodeKind::Raw;
            dn.children.push(n);
        }
        Err(e) => stop(&mut recs, &mut dn, ctx, e),
        Ok(()) if recs.left() > 0 => {
            let trailing = recs.left();
            let n = recs.raw("trailing", "bytes", recs.pos(), trailing);
            ctx.diag(
                ProblemKind::BatchFormat,
                at,
                Detail::TrailingDecompressed { n: trailing },
            );
            dn.children.push(n);
        }
        Ok(()) => {}
    }
    let mut plain = plain;
    for (at, len) in ctx.found.hidden.drain(hidden_from..) {
        let end = at.saturating_add(len).min(plain.len());
        if let Some(s) = plain.get_mut(at.min(end)..end) {
            s.fill(b'*');
        }
    }
    dn.value = Value::Blob(plain);
    dn
}

/// The batch's records until the end of the cursor, checked against its records count.
fn records(r: &mut Src<'_>, ctx: &mut Ctx<'_>, info: BatchInfo, out: &mut Vec<Node>) -> Res<()> {
    let count = info.count;
    if count < 0 || count as usize > r.left() {
        ctx.diag(
            ProblemKind::BatchFormat,
            r.pos(),
            Detail::RecordsCountMisfit {
                count,
                left: r.left(),
            },
        );
    }
    let mut i = 0usize;
    let mut scratch = Vec::new();
    let mut omitted_from = None;
    while r.left() > 0 {
        let keep = omitted_from.is_none() && i < ctx.opts.max_records && ctx.in_budget();
        if !keep && omitted_from.is_none() {
            omitted_from = Some((r.pos(), i));
        }
        let dest = if keep { &mut *out } else { &mut scratch };
        record(r, ctx, i, info, dest)?;
        if keep {
            *ctx.nodes += out.last().map_or(1, count_nodes);
        }
        scratch.clear();
        i += 1;
    }
    if let Some((from, first)) = omitted_from {
        let mut n = r.leaf(
            "omitted",
            "records",
            from,
            r.pos() - from,
            Value::Text(format!("{} more records, decoded but not kept", i - first)),
        );
        n.kind = NodeKind::Raw;
        n.shape = Shape::Omitted;
        out.push(n);
    }
    if count >= 0 && i as i64 != count {
        ctx.diag(
            ProblemKind::BatchFormat,
            r.pos(),
            Detail::RecordsCountMismatch { count, held: i },
        );
    }
    Ok(())
}

/// Record `index` of a batch; pushed even when it stops decoding, to show where.
fn record(
    r: &mut Src<'_>,
    ctx: &mut Ctx<'_>,
    index: usize,
    info: BatchInfo,
    out: &mut Vec<Node>,
) -> Res<()> {
    let start = r.pos();
    let mut g = Node::new("Record", "Record", start, Region::Record, NodeKind::Group);
    g.index = Some(index as u32);
    g.source = r.source;
    let res = record_body(r, ctx, info, &mut g.children);
    // A record that stops ends where its leaves do: the bytes after them are the batch's
    // raw rest.
    let end = if res.is_ok() {
        r.pos()
    } else {
        covered_end(&g)
    };
    g.len = end - start;
    g.value = Value::Struct;
    out.push(g);
    res
}

/// A record's length, then its fields, which must fill that length exactly.
fn record_body(r: &mut Src<'_>, ctx: &mut Ctx<'_>, info: BatchInfo, c: &mut Vec<Node>) -> Res<()> {
    let start = r.pos();
    let len = r.varint("length", "varint", c)?;
    if len < 0 || len as usize > r.left() {
        r.cur.pos = start;
        c.clear();
        return Err(ReadError::malformed(
            start,
            Detail::LengthMisfit {
                what: "record",
                n: len,
                left: r.left(),
            },
        ));
    }
    let rec_end = r.pos() + len as usize;
    let outer_end = r.end();
    r.cur.end = rec_end;
    let fields = record_fields(r, ctx, info, c);
    r.cur.end = outer_end;
    fields?;
    if r.pos() != rec_end {
        return Err(ReadError::malformed(
            r.pos(),
            Detail::RecordLeavesUnread {
                n: len,
                unread: rec_end - r.pos(),
            },
        ));
    }
    Ok(())
}

/// attributes, timestampDelta, offsetDelta, key, value, headers.
fn record_fields(
    r: &mut Src<'_>,
    ctx: &mut Ctx<'_>,
    info: BatchInfo,
    c: &mut Vec<Node>,
) -> Res<()> {
    r.int("attributes", Int::Int8, c)?;
    let td = r.varint("timestampDelta", "varlong", c)?;
    note_last(c, Note::TimestampMs(info.base_ts.saturating_add(td)));
    let od = r.varint("offsetDelta", "varint", c)?;
    note_last(c, Note::Offset(info.base_offset.saturating_add(od)));
    r.varbytes("keyLength", "key", c)?;
    let layouts = registry().record_layouts();
    let control_type = match (info.control, &layouts.control_key) {
        (true, Some(key)) => embed_last(r, ctx, c, "key", key).and_then(|p| p.control_type),
        _ => None,
    };
    r.varbytes("valueLength", "value", c)?;
    let value = if info.control {
        control_type
            .and_then(|t| i16::try_from(t).ok())
            .and_then(|t| layouts.control_value(t))
    } else {
        ctx.opts.values
    };
    if let Some(layout) = value {
        let found = embed_last(r, ctx, c, "value", layout);
        // In the metadata log, every record's type is counted: data and control alike; and
        // what a record changes is kept.
        if let (Some(ty), Some(_)) = (found.and_then(|p| p.spec), ctx.opts.values) {
            ctx.found.log.count(ty, 1);
            let changed = c.last().and_then(|v| metadata::change(ty, v));
            if let Some(what) = changed {
                ctx.found.log.change(metadata::LogChange {
                    offset: info.base_offset.saturating_add(od),
                    timestamp: info.base_ts.saturating_add(td),
                    what,
                });
            }
        }
    }
    let headers = r.varint("headersCount", "varint", c)?;
    if headers < 0 || headers as usize > r.left() {
        return Err(ReadError::malformed(
            r.pos(),
            Detail::CountMisfit {
                what: "headers",
                n: headers,
                left: r.left(),
            },
        ));
    }
    for h in 0..headers {
        header(r, h as u32, c)?;
    }
    Ok(())
}

/// Header `index` of a record: its key and value; pushed even when it stops decoding.
fn header(r: &mut Src<'_>, index: u32, c: &mut Vec<Node>) -> Res<()> {
    let start = r.pos();
    let mut hg = Node::new("Header", "Header", start, Region::Record, NodeKind::Group);
    hg.index = Some(index);
    hg.source = r.source;
    let res = r
        .varbytes("headerKeyLength", "headerKey", &mut hg.children)
        .and_then(|_| r.varbytes("headerValueLength", "headerValue", &mut hg.children));
    hg.len = r.pos() - start;
    c.push(hg);
    res
}

/// What the bytes of a key or value held, as far as the record needs it.
struct Embedded {
    control_type: Option<i64>,
    spec: Option<&'static str>,
}

/// Replaces the key or value leaf just pushed (`name`) by the message its bytes hold, read as
/// `layout`; a null key or value stays as it is. What the message's decoding found joins the
/// batch's: its problems, its secrets (masked for good in a decompressed source).
fn embed_last(
    r: &Src<'_>,
    ctx: &mut Ctx<'_>,
    c: &mut [Node],
    name: &'static str,
    layout: &'static Layout,
) -> Option<Embedded> {
    let last = c.last_mut().filter(|n| n.name == name)?;
    if matches!(last.value, Value::Bytes(None)) {
        return None;
    }
    let opts = crate::kafka::walk::decode::DecodeOptions {
        max_elements: ctx.opts.max_records,
        max_nodes: ctx.opts.max_nodes.saturating_sub(*ctx.nodes),
        max_decompressed: *ctx.budget,
        ..Default::default()
    };
    let span = (last.offset, last.end());
    let mut part = crate::kafka::walk::embed::record_part(r.cur.buf, span, name, layout, opts);
    for d in part.diagnoses.drain(..) {
        let inner = Detail::InRecord {
            part: name,
            path: d.path,
            inner: Box::new(d.detail),
        };
        ctx.diag(d.kind, d.offset, inner);
    }
    if r.source == 0 {
        ctx.found.secrets.extend_from_slice(&part.secrets);
    } else {
        crate::kafka::walk::embed::into_source(&mut part.node, r.source, r.cur.buf, &part.secrets);
        ctx.found.hidden.extend_from_slice(&part.secrets);
    }
    part.node.region = last.region;
    *last = part.node;
    Some(Embedded {
        control_type: part.control_type,
        spec: part.spec,
    })
}

/// A legacy message (magic 0 or 1), the whole of the cursor.
fn legacy_message(r: &mut Src<'_>, ctx: &mut Ctx<'_>, index: usize, magic: i8, depth: u8) -> Node {
    let start = r.pos();
    let ty = if magic == 0 {
        "Message v0"
    } else {
        "Message v1"
    };
    let mut g = Node::new("Message", ty, start, Region::RecordBatch, NodeKind::Group);
    g.index = Some(index as u32);
    g.source = r.source;
    ctx.seen.legacy = true;
    if let Err(e) = legacy_body(r, ctx, magic, depth, &mut g.children) {
        stop(r, &mut g, ctx, e);
    }
    g.value = Value::Struct;
    g.len = r.end() - start;
    g
}

/// A legacy message's fields; a compressed one (a wrapper) holds a message set in its value.
fn legacy_body(
    r: &mut Src<'_>,
    ctx: &mut Ctx<'_>,
    magic: i8,
    depth: u8,
    c: &mut Vec<Node>,
) -> Res<()> {
    ctx.seen.base = Some(r.int("offset", Int::Int64, c)?);
    r.int("messageSize", Int::Int32, c)?;
    crc(r, ctx, c, false)?;
    r.int("magic", Int::Int8, c)?;
    let attrs = r.int("attributes", Int::Int8, c)?;
    ctx.seen.attributes = Some(attrs);
    note_last(c, Note::MessageAttributes { attrs, magic });
    if magic == 1 {
        let ts = r.int("timestamp", Int::Int64, c)?;
        note_last(c, Note::TimestampMs(ts));
    }
    r.bytes32("key", c)?;
    let value = r.bytes32("value", c)?;
    let codec = (attrs & 7) as u8;
    // Legacy wrappers are decompressed even where record batches are not (summary views):
    // their inner messages are the records, and only decompressing counts them.
    if let (true, Some(span)) = (codec != 0, value) {
        wrapper_value(r, ctx, codec, span, depth, c);
    }
    Ok(())
}

/// The compressed value `(start, len)` of a wrapper message: its inner message set,
/// decompressed into a byte source of its own, if the nesting allows.
fn wrapper_value(
    r: &Src<'_>,
    ctx: &mut Ctx<'_>,
    codec: u8,
    (at, len): (usize, usize),
    depth: u8,
    c: &mut Vec<Node>,
) {
    let data = r.cur.buf.get(at..at + len).unwrap_or(&[]);
    if depth >= MAX_DEPTH {
        ctx.diag(ProblemKind::BatchFormat, at, Detail::NestedTooDeep);
        return;
    }
    match ctx.inflate(codec, data, at) {
        Err(e) => ctx.diag(
            ProblemKind::Decompression,
            at,
            Detail::DoesNotDecompress {
                codec: codec_name(codec),
                message_set: true,
                error: e,
            },
        ),
        Ok(plain) => {
            lz4_check(ctx, codec, data, at);
            c.push(inner_message_set(ctx, plain, depth));
            ctx.seen.wrapped = true;
        }
    }
}

/// The messages decompressed from a wrapper, decoded as a message set one level deeper.
fn inner_message_set(ctx: &mut Ctx<'_>, plain: Vec<u8>, depth: u8) -> Node {
    let (source, mut dn) = new_source(ctx, "message set", plain.len());
    dn.desc = format!("the wrapper's inner messages, byte source #{source}").into();
    let mut inner = Src::new(&plain, 0, plain.len(), source, Region::Record);
    batches(&mut inner, ctx, &mut dn.children, depth + 1);
    // Summary views decompress only to count the inner messages: the bytes are not shown,
    // so they are not kept.
    dn.value = if ctx.opts.records {
        Value::Blob(plain)
    } else {
        Value::None
    };
    dn
}

/// The records room's door: the decoder meets a `records` field and reads it here.
impl Decoder<'_> {
    /// A `records` field: its length prefix, then the batches inside, decoded.
    pub(in crate::kafka) fn records_field(
        &mut self,
        name: Cow<'static, str>,
        out: &mut Vec<Node>,
    ) -> R<()> {
        let start = self.pos;
        let l = self.length(Prefix::Int32, "records")?;
        let mut len_node = self.length_node(l);
        if self.flexible {
            len_node.enc = if l.len.is_none() {
                Enc::CompactNull
            } else {
                Enc::CompactLenPlusOne
            };
        }
        let mut g = Node::new(name, "records", start, Region::RecordBatch, NodeKind::Group);
        g.shape = Shape::Records;
        let Some(n) = l.len else {
            len_node.desc = "null: no records".into();
            g.value = Value::Null;
            g.children.push(len_node);
            g.len = self.pos - start;
            out.push(g);
            return Ok(());
        };
        len_node.desc = Desc::BatchBytes(n);
        g.children.push(len_node);
        let set = self.batches(start, n, Some(&mut g.children));
        self.records.0 += set.tally.records;
        g.value = Value::Records(set);
        self.records.1 += n;
        self.pos += n;
        g.len = self.pos - start;
        out.push(g);
        Ok(())
    }

    /// A `records` field whose node nothing reads (a walk's, below the levels it keeps): what
    /// [`Self::records_field`] leaves besides the node (counts, problems, budgets spent,
    /// secrets, metadata record types), with no node made where the records need not be
    /// read, as in the summary and statistics views.
    pub(in crate::kafka) fn records_unkept(&mut self, name: Cow<'static, str>) -> R<()> {
        let was = std::mem::replace(&mut self.discard, true);
        let read = if self.opts.records || self.topic_layout.is_some() {
            self.records_field(name, &mut Vec::new())
        } else {
            self.records_scanned()
        };
        self.discard = was;
        read
    }

    /// [`Self::records_field`] with no node: its length prefix, then its batches scanned.
    fn records_scanned(&mut self) -> R<()> {
        let start = self.pos;
        let l = self.length(Prefix::Int32, "records")?;
        if let Some(n) = l.len {
            let set = self.batches(start, n, None);
            self.records.0 += set.tally.records;
            self.records.1 += n;
            self.pos += n;
        }
        Ok(())
    }

    /// The `n` bytes of record batches at the decoder's position (a `records` field that
    /// starts at `field`), decoded into `out` and counted; with no `out`, scanned (see
    /// [`read_field`]).
    fn batches(&mut self, field: usize, n: usize, out: Option<&mut Vec<Node>>) -> RecordSet {
        let opts = crate::kafka::records::RecordsOptions {
            max_decompressed: self.opts.max_decompressed,
            max_records: self.opts.max_elements,
            max_nodes: self.opts.max_nodes,
            records: self.opts.records,
            values: self.topic_layout,
        };
        let mut found = crate::kafka::records::Found::default();
        let sinks = (
            &mut self.diagnoses,
            &mut self.next_source,
            &mut self.spent,
            &mut found,
        );
        let span = (self.pos, self.pos + n);
        let lean = out.is_none();
        let mut scratch = Vec::new();
        let tally = read_field(
            self.buf,
            span,
            opts,
            sinks,
            out.unwrap_or(&mut scratch),
            lean,
        );
        self.secrets.append(&mut found.secrets);
        crate::kafka::meaning::log::name_from_topic_records(&mut found.log.changes);
        self.record_types.append(&mut found.log);
        if let Some((key, direction)) = self.message {
            if let Some(why) =
                crate::kafka::records::batch_format_problem(key, direction, self.version, &tally)
            {
                self.diag(ProblemKind::Interop, field, why);
            }
        }
        // Facts of batches whose node is thrown away are never read: not kept.
        if self.discard {
            found.batches.clear();
        }
        let first = self.batch_facts.len() as u32;
        let len = found.batches.len() as u32;
        self.batch_facts.append(&mut found.batches);
        RecordSet { tally, first, len }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    /// Gzip data read by flate2 alone, as every batch was before the plain path.
    fn by_flate2(data: &[u8], cap: usize) -> Result<(Vec<u8>, bool), String> {
        read_capped(flate2::read::GzDecoder::new(data), cap)
    }

    fn gzipped(plain: &[u8], level: u32) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
        e.write_all(plain).unwrap();
        e.finish().unwrap()
    }

    /// The plain path gives what flate2 gives, result, error words and cut alike, on plain
    /// batches and on every way one can differ from them: optional header fields, a bad
    /// checksum or length, a trailer cut short or followed by bytes, a second member, damage
    /// anywhere, caps below, at and above the size; and it takes the plain ones itself.
    #[test]
    fn gzip_agrees_with_flate2() {
        let texts: Vec<Vec<u8>> = vec![
            Vec::new(),
            b"a".to_vec(),
            b"{\"id\":1,\"amount\":42.5}".repeat(300),
            (0..70_000u32).map(|i| (i * 7 % 251) as u8).collect(),
            vec![0u8; 200_000],
        ];
        let mut cases: Vec<(Vec<u8>, usize)> = Vec::new();
        for t in &texts {
            for level in [0, 1, 9] {
                let g = gzipped(t, level);
                let len = t.len();
                for cap in [0, 1, len.saturating_sub(1), len, len + 1, 64 << 20] {
                    cases.push((g.clone(), cap));
                }
                assert_eq!(gzip_plain(&g, 64 << 20).as_deref(), Some(&t[..]), "plain");
                // A file name in the header (FNAME).
                let mut named = g.clone();
                named[3] = 8;
                named.splice(10..10, b"x.json\0".iter().copied());
                cases.push((named, 64 << 20));
                // The trailer: each byte wrong, cut short, bytes after it, a second member.
                for i in 1..=8 {
                    let mut bad = g.clone();
                    let at = bad.len() - i;
                    bad[at] ^= 0x40;
                    cases.push((bad, 64 << 20));
                    cases.push((g[..g.len() - i].to_vec(), 64 << 20));
                }
                let mut after = g.clone();
                after.extend_from_slice(b"junk");
                cases.push((after, 64 << 20));
                let mut twice = g.clone();
                twice.extend_from_slice(&g);
                cases.push((twice, 64 << 20));
                // Damage through the deflate stream.
                for at in (10..g.len() - 8).step_by((g.len() / 40).max(1)) {
                    let mut bad = g.clone();
                    bad[at] ^= 0x5a;
                    cases.push((bad, 1 << 20));
                }
            }
        }
        cases.push((b"\x1f\x8b\x08\x00".to_vec(), 100));
        cases.push((Vec::new(), 100));
        // Pseudo-random damage: a few bytes changed, cut or inserted, anywhere, with caps
        // around the size.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n.max(1) as u64) as usize
        };
        for _ in 0..4000 {
            let t = &texts[next(texts.len())];
            let mut g = gzipped(t, [1, 6, 9][next(3)]);
            for _ in 0..1 + next(3) {
                let at = next(g.len());
                match next(4) {
                    _ if g.is_empty() => g.push(0x1f),
                    0 => g[at] = next(256) as u8,
                    1 => g[at] ^= 1 << next(8),
                    2 => g.truncate(at),
                    _ => g.insert(at, next(256) as u8),
                }
            }
            let cap = [t.len(), t.len() / 2, t.len() + next(100), 64 << 20][next(4)];
            cases.push((g, cap));
        }
        for (data, cap) in &cases {
            assert_eq!(
                gzip(data, *cap),
                by_flate2(data, *cap),
                "{} bytes, cap {cap}",
                data.len()
            );
        }
    }

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
            values: None,
        };
        let (n, _) = decode(
            bytes,
            (0, bytes.len()),
            opts,
            &mut diags,
            &mut source,
            &mut spent,
            &mut Found::default(),
        );
        (n, diags, spent.decompress_left, spent.dropped_diagnoses)
    }

    /// A v2 batch of `count` records (`records`, compressed with `codec` if not 0) at
    /// `base`, its CRC-32C right.
    fn v2(base: i64, codec: u8, count: i32, records: &[u8]) -> Vec<u8> {
        let data = match codec {
            0 => records.to_vec(),
            _ => {
                use std::io::Write;
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                e.write_all(records).unwrap();
                e.finish().unwrap()
            }
        };
        let mut after_crc = (i16::from(codec)).to_be_bytes().to_vec();
        after_crc.extend_from_slice(&(count - 1).to_be_bytes());
        after_crc.extend_from_slice(&[0; 16]); // first and max timestamps
        after_crc.extend_from_slice(&(-1i64).to_be_bytes());
        after_crc.extend_from_slice(&(-1i16).to_be_bytes());
        after_crc.extend_from_slice(&(-1i32).to_be_bytes());
        after_crc.extend_from_slice(&count.to_be_bytes());
        after_crc.extend(data);
        let mut b = base.to_be_bytes().to_vec();
        b.extend_from_slice(&((after_crc.len() + 9) as i32).to_be_bytes());
        b.extend_from_slice(&0i32.to_be_bytes());
        b.push(2);
        b.extend_from_slice(&crc32c::crc32c(&after_crc).to_be_bytes());
        b.extend(after_crc);
        b
    }

    /// The batch facts and tally as they were once read back from the nodes, by name: what
    /// the facts noted while decoding must equal.
    fn by_names(nodes: &[Node]) -> (Vec<BatchFact>, Tally) {
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
        let facts = nodes
            .iter()
            .filter(|b| b.name == "RecordBatch" || b.name == "Message")
            .map(|b| {
                let int = |n: &str| b.child(n).and_then(Node::as_int);
                let comp = b.child("compressed");
                let comp_len = comp.map_or(0, |c| c.len);
                let plain = comp
                    .and_then(|c| c.child("decompressed"))
                    .map_or(comp_len, |d| d.len);
                let base = int("baseOffset").or_else(|| int("offset")).unwrap_or(-1);
                let records = int("recordsCount").unwrap_or(1);
                BatchFact {
                    base_offset: base,
                    records,
                    last_offset: int("lastOffsetDelta")
                        .map_or(base.saturating_add(records.saturating_sub(1)), |d| {
                            base.saturating_add(d)
                        }),
                    codec: (int("attributes").unwrap_or(0) & 7) as u8,
                    wire_bytes: b.len,
                    plain_bytes: b.len - comp_len + plain,
                    producer_id: int("producerId").unwrap_or(-1),
                    base_sequence: int("baseSequence").unwrap_or(-1) as i32,
                    crc: int("crc").unwrap_or(0) as u32,
                }
            })
            .collect();
        (facts, t)
    }

    #[test]
    fn batch_facts_noted_while_decoding_match_the_nodes() {
        let gz = |b: &[u8]| {
            use std::io::Write;
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(b).unwrap();
            e.finish().unwrap()
        };
        let plain = legacy(0, b"v");
        let two = [plain.clone(), plain.clone()].concat();
        let wrapper = legacy(1, &gz(&two));
        let nested = legacy(1, &gz(&[wrapper.clone(), plain.clone()].concat()));
        let mut cut_value = legacy(0, b"abc");
        let at = cut_value.len() - 7; // the value's length
        cut_value[at..at + 4].copy_from_slice(&100i32.to_be_bytes());
        let bad_gzip = legacy(1, b"not gzip");
        let inputs: Vec<(&str, Vec<u8>)> = vec![
            ("plain v2", v2(7, 0, 0, &[])),
            ("gzip v2", v2(40, 1, 0, &[])),
            ("gzip v2 that does not decompress", {
                let mut b = v2(40, 1, 0, &[]);
                let n = b.len();
                b[n - 3] ^= 0xff;
                b
            }),
            ("legacy", [plain.clone(), plain.clone()].concat()),
            ("wrapper", [wrapper.clone(), plain.clone()].concat()),
            ("nested wrapper", nested),
            ("value cut short", cut_value),
            ("wrapper that does not decompress", bad_gzip),
            ("v2 then legacy", [v2(3, 0, 0, &[]), wrapper].concat()),
        ];
        for (what, bytes) in inputs {
            let opts = RecordsOptions {
                max_decompressed: 1 << 20,
                max_records: 10_000,
                max_nodes: 1_000_000,
                records: true,
                values: None,
            };
            let mut found = Found::default();
            let (nodes, tally) = decode(
                &bytes,
                (0, bytes.len()),
                opts,
                &mut Vec::new(),
                &mut 0,
                &mut Spent {
                    decompress_left: 1 << 20,
                    ..Spent::default()
                },
                &mut found,
            );
            let (facts, named_tally) = by_names(&nodes);
            assert!(!facts.is_empty(), "{what}: no batch");
            assert_eq!(found.batches, facts, "{what}");
            assert_eq!(tally, named_tally, "{what}");
        }
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
                .to_string()
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
                .to_string()
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
            lz4_frame_problem(3, &trailing).map(|d| d.to_string()),
            Some("3 bytes after the end of the lz4 frame".to_string())
        );
        let cut = &frame[..frame.len() - 4];
        assert!(
            lz4_frame_problem(3, cut).is_some_and(|w| w.to_string().contains("end mark")),
            "{cut:?}"
        );
    }

    /// An lz4 frame of `data` as lz4_flex's encoder writes it (FLG 0x60), in blocks of
    /// `size`.
    fn lz4_frame_of(data: &[u8], size: lz4_flex::frame::BlockSize) -> Vec<u8> {
        use std::io::Write;
        let mut frame = Vec::new();
        let info = lz4_flex::frame::FrameInfo::new().block_size(size);
        let mut e = lz4_flex::frame::FrameEncoder::with_frame_info(info, &mut frame);
        e.write_all(data).unwrap();
        e.finish().unwrap();
        frame
    }

    /// [`lz4_frame_of`] in 64 KiB blocks, as Kafka's clients write them.
    fn lz4_frame(data: &[u8]) -> Vec<u8> {
        lz4_frame_of(data, lz4_flex::frame::BlockSize::Max64KB)
    }

    #[test]
    fn plain_lz4_frames_decompress_as_the_frame_decoder_does() {
        // Three blocks: two full 64 KiB ones, compressible, then the rest.
        let data: Vec<u8> = (0..150_000u32)
            .map(|i| (i % 251) as u8 ^ (i / 977) as u8)
            .collect();
        let frame = lz4_frame(&data);
        assert_eq!(&frame[4..7], &[LZ4_FLG_PLAIN, 0x40, 0x82]);
        assert_eq!(lz4_plain(&frame, usize::MAX).as_deref(), Some(&data[..]));
        let by_frame_decoder =
            read_capped(lz4_flex::frame::FrameDecoder::new(&frame[..]), usize::MAX).unwrap();
        assert_eq!(lz4(&frame, usize::MAX).unwrap(), by_frame_decoder);
        // Each block size, its header checksum as the table has it.
        use lz4_flex::frame::BlockSize;
        for (size, bd) in [
            (BlockSize::Max256KB, 0x50),
            (BlockSize::Max1MB, 0x60),
            (BlockSize::Max4MB, 0x70),
        ] {
            let frame = lz4_frame_of(&data, size);
            assert_eq!(frame[5], bd);
            assert_eq!(lz4_block_size(bd).map(|(_, c)| c), Some(frame[6]));
            assert_eq!(lz4_plain(&frame, usize::MAX).as_deref(), Some(&data[..]));
        }
    }

    #[test]
    fn other_lz4_frames_go_to_the_frame_decoder() {
        let data = b"hello hello hello hello".repeat(40);
        let frame = lz4_frame(&data);
        assert!(lz4_plain(&frame, usize::MAX).is_some());
        // Cut, trailing bytes, a wrong header checksum, block checksums, more than the cap.
        let cut = &frame[..frame.len() - 4];
        let mut trailing = frame.clone();
        trailing.push(0);
        let mut bad_checksum = frame.clone();
        bad_checksum[6] ^= 1;
        let mut block_checksums = frame.clone();
        block_checksums[4] |= 0x10;
        for (what, f) in [
            ("cut", cut),
            ("trailing", &trailing[..]),
            ("bad checksum", &bad_checksum[..]),
            ("block checksums", &block_checksums[..]),
        ] {
            assert_eq!(lz4_plain(f, usize::MAX), None, "{what}");
            let (a, b) = (
                lz4(f, usize::MAX),
                read_capped(lz4_flex::frame::FrameDecoder::new(f), usize::MAX),
            );
            assert_eq!(a, b, "{what}");
        }
        assert_eq!(lz4_plain(&frame, data.len() - 1), None);
        assert_eq!(lz4(&frame, 10).unwrap(), (data[..10].to_vec(), true));
    }
}
