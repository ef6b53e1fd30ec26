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

/// The bytes, and where each dump block (offset column back at 0) starts. Blocks a label names
/// as something other than the packet (`Reassembled TCP`) are left out: they repeat bytes.
fn parse_blocks(text: &str) -> Result<(Vec<u8>, Vec<usize>), HexError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    let mut starts: Vec<usize> = Vec::new();
    let mut dump_seen = false;
    let mut skipping = false;
    for (lno, raw) in text.lines().enumerate() {
        let lno = lno + 1;
        let line = raw.trim_end();
        if line.trim().is_empty() {
            // A labelled extra buffer ends where its block does.
            skipping = false;
            continue;
        }
        if line.trim_start().starts_with('#') {
            continue;
        }
        if let Some(name) = block_label(line) {
            skipping = name != "Frame";
            continue;
        }
        if skipping {
            continue;
        }
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
            let block_start = starts.last().copied().unwrap_or(0);
            if off == Some(out.len() - block_start) {
                dump = true;
                if out.is_empty() {
                    starts.push(0);
                }
                parts.remove(0);
            } else if off == Some(0) && dump_seen {
                dump = true;
                starts.push(out.len());
                parts.remove(0);
            }
        }
        // hexdump -C's closing line holds only the total length.
        if dump_seen
            && body.split_whitespace().count() == 1
            && (7..=8).contains(&first.len())
            && usize::from_str_radix(first, 16).ok()
                == Some(out.len() - starts.last().copied().unwrap_or(0))
        {
            continue;
        }
        dump_seen |= dump;
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
                    out.push(u8::from_str_radix(hex, 16).unwrap_or(0));
                }
                c += tok.len() + 1;
            }
        }
    }
    Ok((out, starts))
}
