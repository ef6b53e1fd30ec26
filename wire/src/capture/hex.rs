//! Hex text in: plain hex with any whitespace, `0x` prefixes and commas, `#` comment lines, and
//! the dumps of `xxd`, `hexdump -C`, `od -An -tx1` and `tshark -x` (offset and ASCII columns
//! ignored).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HexError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for HexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for HexError {}

fn is_hex_token(t: &str) -> bool {
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    let t = t.trim_end_matches(',');
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Splits a line at runs of two or more spaces (dumps separate their columns that way).
fn chunks(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut start = None;
    let mut i = 0;
    while i < bytes.len() {
        let here = bytes.get(i).copied().unwrap_or(0);
        let gap = here == b'\t'
            || (here == b' ' && bytes.get(i + 1).is_some_and(|b| *b == b' ' || *b == b'\t'));
        if gap {
            if let Some(s) = start.take() {
                out.push((s, &line[s..i]));
            }
            while bytes.get(i).is_some_and(|b| *b == b' ' || *b == b'\t') {
                i += 1;
            }
            continue;
        }
        if start.is_none() {
            start = Some(i);
        }
        i += 1;
    }
    if let Some(s) = start {
        out.push((s, &line[s..]));
    }
    out
}

/// Parses hex text into bytes.
/// A token as quoted in an error: whole if short, else its start.
fn shown(tok: &str) -> String {
    if tok.chars().count() <= 24 {
        format!("{tok:?}")
    } else {
        let head: String = tok.chars().take(20).collect();
        format!("{head:?}... ({} characters)", tok.chars().count())
    }
}

pub fn parse(text: &str) -> Result<Vec<u8>, HexError> {
    parse_blocks(text).map(|(bytes, _)| bytes)
}

/// What a hex input holds: bytes to cut into Kafka frames, and what its first comment line
/// says they are.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HexInput {
    pub bytes: Vec<u8>,
    /// Packets of a `tshark -x` dump whose link, IP and TCP headers were taken off (0 when the
    /// input was Kafka bytes already).
    pub packets: usize,
    pub directive: Option<Directive>,
}

/// A first comment line such as `# response api_key=3 api_version=13`: how to read the frame
/// when no request comes before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Directive {
    pub response: bool,
    pub api_key: Option<i16>,
    pub api_version: Option<i16>,
}

/// Reads the directive of the first comment line, if it is one.
fn directive(text: &str) -> Option<Directive> {
    let first = text.lines().find(|l| !l.trim().is_empty())?;
    let words: Vec<&str> = first.trim().strip_prefix('#')?.split_whitespace().collect();
    let response = match words.first() {
        Some(&"response") => true,
        Some(&"request") => false,
        _ => return None,
    };
    let value = |k: &str| {
        words
            .iter()
            .find_map(|w| w.strip_prefix(k)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
    };
    Some(Directive {
        response,
        api_key: value("api_key"),
        api_version: value("api_version"),
    })
}

/// Link types a dumped packet is tried as, most common first.
const DUMP_LINKTYPES: [u32; 5] = [1, 276, 113, 101, 0];

/// The TCP payload of a dumped packet, if the bytes are a link-layer packet carrying TCP.
fn tcp_payload(packet: &[u8]) -> Option<&[u8]> {
    DUMP_LINKTYPES.iter().find_map(|&lt| {
        crate::capture::net::tcp_segment(lt, packet, packet.len() as u32)
            .ok()
            .map(|seg| seg.payload)
    })
}

/// Parses hex text, and when it is a dump of whole packets (`tshark -x`: one block per
/// packet, each starting again at offset 0), keeps only their TCP payloads, in order.
pub fn parse_input(text: &str) -> Result<HexInput, HexError> {
    let (bytes, starts) = parse_blocks(text)?;
    let directive = directive(text);
    if starts.len() > 1 || (starts.len() == 1 && tcp_payload(&bytes).is_some()) {
        let mut bounds = starts.clone();
        bounds.push(bytes.len());
        let blocks: Vec<&[u8]> = bounds
            .windows(2)
            .map(|w| match w {
                [a, b] => bytes.get(*a..*b).unwrap_or_default(),
                _ => &[],
            })
            .collect();
        let payloads: Option<Vec<&[u8]>> = blocks.iter().map(|b| tcp_payload(b)).collect();
        if let Some(p) = payloads {
            return Ok(HexInput {
                bytes: p.concat(),
                packets: blocks.len(),
                directive,
            });
        }
    }
    Ok(HexInput {
        bytes,
        packets: 0,
        directive,
    })
}

/// `tshark -x` names the extra buffers it shows after a packet (`Reassembled TCP (27311
/// bytes):`, `Decompressed ...`); the packet itself may be labelled `Frame (1313 bytes):`.
fn block_label(line: &str) -> Option<&str> {
    let t = line.trim();
    let inner = t.strip_suffix(" bytes):")?;
    let (name, n) = inner.rsplit_once(" (")?;
    (n.bytes().all(|b| b.is_ascii_digit()) && name.starts_with(|c: char| c.is_ascii_alphabetic()))
        .then_some(name)
}

/// Largest packet a dump block can be (a capture's snap length): a first block longer than
/// this is a dump of Kafka bytes, not of a packet.
const MAX_PACKET: usize = 262_144;

/// Hex text as a stream: lines in, Kafka bytes out. A dump of whole packets (`tshark -x`) is
/// told by its first block, which is held until it ends (at most one packet); from then on each
/// packet's TCP payload comes out as its block ends. Anything else comes out line by line.
#[derive(Debug, Default)]
pub struct HexStream {
    p: LineParser,
    /// Some(true): packets; Some(false): Kafka bytes; None: first block not judged yet.
    packets: Option<bool>,
    /// Packets whose TCP payload came out.
    pub packet_count: usize,
    pub directive: Option<Directive>,
    seen_text: bool,
}

impl HexStream {
    /// One line of text; returns the Kafka bytes it completed.
    pub fn line(&mut self, raw: &str) -> Result<Vec<u8>, HexError> {
        if !self.seen_text && !raw.trim().is_empty() {
            self.seen_text = true;
            self.directive = directive(raw);
        }
        let (blocks, len) = (self.p.blocks, self.p.out.len());
        self.p.line(raw)?;
        let new_block = self.p.blocks > blocks && blocks >= 1;
        if self.packets.is_none() {
            if self.p.blocks == 0 {
                self.packets = Some(false);
            } else if new_block || self.p.out.len() > MAX_PACKET {
                let first = self.p.out.get(..len).unwrap_or_default();
                self.packets = Some(new_block && tcp_payload(first).is_some());
            } else {
                return Ok(Vec::new());
            }
        }
        Ok(match (self.packets, new_block) {
            (Some(true), true) => {
                let rest = self.p.out.split_off(len.min(self.p.out.len()));
                let block = std::mem::replace(&mut self.p.out, rest);
                self.payload(&block)
            }
            (Some(true), false) => Vec::new(),
            _ => std::mem::take(&mut self.p.out),
        })
    }

    /// At the end of the text: the bytes still held.
    pub fn finish(&mut self) -> Vec<u8> {
        let held = std::mem::take(&mut self.p.out);
        match self.packets {
            Some(true) => self.payload(&held),
            None if self.p.blocks >= 1 && tcp_payload(&held).is_some() => {
                self.packets = Some(true);
                self.payload(&held)
            }
            _ => held,
        }
    }

    /// A packet's TCP payload; a block that is not a TCP packet comes out whole.
    fn payload(&mut self, block: &[u8]) -> Vec<u8> {
        self.packet_count += 1;
        tcp_payload(block).unwrap_or(block).to_vec()
    }
}

/// Hex text read one line at a time. Bytes go to `out` for the caller to take; the position
/// in the current dump block is counted, so the offset column can be checked whatever was
/// taken.
#[derive(Debug, Default)]
pub struct LineParser {
    /// Bytes parsed and not yet taken.
    pub out: Vec<u8>,
    /// Bytes since the current dump block started (all bytes, outside dumps).
    block_len: usize,
    /// Dump blocks begun so far: offset columns restarting at 0 (`tshark -x` packets).
    pub blocks: usize,
    dump_seen: bool,
    /// Inside a labelled extra buffer (`Reassembled TCP (N bytes):`) until a blank line.
    skipping: bool,
    lno: usize,
}

impl LineParser {
    /// Parses one line (without its end of line).
    pub fn line(&mut self, raw: &str) -> Result<(), HexError> {
        self.lno += 1;
        let raw = if self.lno == 1 {
            raw.strip_prefix('\u{feff}').unwrap_or(raw)
        } else {
            raw
        };
        let line = raw.trim_end();
        if line.trim().is_empty() {
            // A labelled extra buffer ends where its block does.
            self.skipping = false;
            return Ok(());
        }
        if line.trim_start().starts_with('#') {
            return Ok(());
        }
        if let Some(name) = block_label(line) {
            self.skipping = name != "Frame";
            return Ok(());
        }
        if self.skipping {
            return Ok(());
        }
        self.bytes_of(line)
    }

    fn bytes_of(&mut self, line: &str) -> Result<(), HexError> {
        let lno = self.lno;
        // hexdump -C puts the ASCII column between bars.
        let barred = line.find('|');
        let line = match barred {
            Some(i) => &line[..i],
            None => line,
        };
        let lead = line.len() - line.trim_start().len();
        let body = &line[lead..];
        let first = body.split_whitespace().next().unwrap_or("");
        let mut parts = chunks(line);
        let mut dump = false;
        if let Some(off) = first.strip_suffix(':') {
            // xxd: `00000010: 0000 0002 ...  ascii`
            if !off.is_empty() && off.bytes().all(|b| b.is_ascii_hexdigit()) {
                dump = true;
                let after = lead + first.len();
                parts = chunks(&line[after..])
                    .into_iter()
                    .map(|(c, s)| (c + after, s))
                    .collect();
            }
        } else if (4..=8).contains(&first.len())
            && first.bytes().all(|b| b.is_ascii_hexdigit())
            && parts.len() > 1
            && parts.first().is_some_and(|(_, c)| *c == first)
        {
            // hexdump -C / tshark -x: an offset column equal to the bytes read so far (or, in
            // a dump of several packets, back at 0 for the next one), then a column gap.
            let off = usize::from_str_radix(first, 16).ok();
            if off == Some(self.block_len) {
                dump = true;
                if self.blocks == 0 {
                    self.blocks = 1;
                }
                parts.remove(0);
            } else if off == Some(0) && self.dump_seen {
                dump = true;
                self.blocks += 1;
                self.block_len = 0;
                parts.remove(0);
            }
        }
        // hexdump -C's closing line holds only the total length.
        if self.dump_seen
            && body.split_whitespace().count() == 1
            && (7..=8).contains(&first.len())
            && usize::from_str_radix(first, 16).ok() == Some(self.block_len)
        {
            return Ok(());
        }
        self.dump_seen |= dump;
        for (ci, (col, chunk)) in parts.iter().enumerate() {
            // In xxd and tshark -x dumps, the hex column is one chunk and the ASCII column
            // (which may look like hex: "abba") follows a gap; hexdump -C's ASCII was cut at
            // the bar, and its hex column has a gap in the middle.
            if dump && ci > 0 && barred.is_none() {
                break;
            }
            if dump && !chunk.split_whitespace().all(is_hex_token) {
                break;
            }
            let mut c = *col;
            for tok in chunk.split(|ch: char| ch.is_whitespace() || ch == ',') {
                if tok.is_empty() {
                    c += 1;
                    continue;
                }
                self.token(tok, lno, c)?;
                c += tok.len() + 1;
            }
        }
        Ok(())
    }

    /// One hex token (`0a0b`, `0x0a,`) at column `c`.
    fn token(&mut self, tok: &str, lno: usize, c: usize) -> Result<(), HexError> {
        let t = tok.trim_end_matches(',');
        let t = t
            .strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t);
        if let Some(bad) = t.chars().find(|ch| !ch.is_ascii_hexdigit()) {
            let at = c + tok.find(bad).unwrap_or(0);
            return Err(HexError {
                line: lno,
                column: at + 1,
                message: format!("{} is not hex (unexpected {bad:?})", shown(tok)),
            });
        }
        if t.len() % 2 == 1 {
            return Err(HexError {
                line: lno,
                column: c + 1,
                message: format!(
                    "{} has an odd number of hex digits ({}); every byte needs two",
                    shown(tok),
                    t.len()
                ),
            });
        }
        for pair in t.as_bytes().chunks_exact(2) {
            let hex = std::str::from_utf8(pair).unwrap_or("00");
            self.out.push(u8::from_str_radix(hex, 16).unwrap_or(0));
        }
        self.block_len += t.len() / 2;
        Ok(())
    }
}

/// The bytes, and where each dump block (offset column back at 0) starts. Blocks a label names
/// as something other than the packet (`Reassembled TCP`) are left out: they repeat bytes.
fn parse_blocks(text: &str) -> Result<(Vec<u8>, Vec<usize>), HexError> {
    let mut p = LineParser::default();
    let mut starts: Vec<usize> = Vec::new();
    for line in text.lines() {
        let (before, len) = (p.blocks, p.out.len());
        p.line(line)?;
        if p.blocks > before {
            // The new block's bytes start where this line's do.
            starts.push(if before == 0 { 0 } else { len });
        }
    }
    Ok((p.out, starts))
}
