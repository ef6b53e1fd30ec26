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
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    let mut dump_seen = false;
    for (lno, raw) in text.lines().enumerate() {
        let lno = lno + 1;
        let line = raw.trim_end();
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
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
            && usize::from_str_radix(first, 16).ok() == Some(out.len())
            && parts.len() > 1
            && parts.first().is_some_and(|(_, c)| *c == first)
        {
            // hexdump -C / tshark -x: an offset column equal to the bytes read so far, followed
            // by a column gap.
            dump = true;
            parts.remove(0);
        }
        // hexdump -C's closing line holds only the total length.
        if dump_seen
            && body.split_whitespace().count() == 1
            && (7..=8).contains(&first.len())
            && usize::from_str_radix(first, 16).ok() == Some(out.len())
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
    Ok(out)
}
