//! `-x`: the byte layout, 16 bytes a row, each byte coloured by the region of the leaf that
//! covers it. Without colour, a `|` before a byte marks where a new region begins.

use super::Style;
use crate::kafka::{Node, NodeKind, Region, Value};
use owo_colors::{AnsiColors, OwoColorize};
use std::io::{self, Write};

const ROW: usize = 16;
/// Region starts listed under an uncoloured layout before the list is cut short.
const MAX_STARTS: usize = 32;

fn color(r: Region) -> AnsiColors {
    match r {
        Region::Frame => AnsiColors::Magenta,
        Region::RpcHeader => AnsiColors::Cyan,
        Region::RequestBody => AnsiColors::Green,
        Region::ResponseBody => AnsiColors::Blue,
        Region::TaggedFields => AnsiColors::Yellow,
        Region::RecordBatch => AnsiColors::BrightRed,
        Region::Record => AnsiColors::Red,
        Region::Unparsed => AnsiColors::BrightBlack,
    }
}

/// The region of every byte of the frame (source 0) or of a decompressed buffer, from the
/// leaves of that source.
pub fn byte_regions(root: &Node, len: usize) -> Vec<Region> {
    source_regions(root, 0, len)
}

fn source_regions(root: &Node, source: u16, len: usize) -> Vec<Region> {
    let mut regions = vec![Region::Unparsed; len];
    let leaves = if source == 0 {
        root.leaves()
    } else {
        root.source_leaves(source)
    };
    for leaf in leaves {
        let end = leaf.end().min(len);
        if let Some(slot) = regions.get_mut(leaf.offset.min(end)..end) {
            slot.fill(leaf.region);
        }
    }
    regions
}

/// The frame's layout, then one for each decompressed buffer in it.
pub fn write(out: &mut impl Write, root: &Node, frame: &[u8], style: Style) -> io::Result<()> {
    write_masked(out, root, frame, &[], style)
}

/// [`write`], drawing the bytes of the `hidden` spans (secrets) as `**`.
pub fn write_masked(
    out: &mut impl Write,
    root: &Node,
    frame: &[u8],
    hidden: &[(usize, usize)],
    style: Style,
) -> io::Result<()> {
    let regions = byte_regions(root, frame.len());
    writeln!(
        out,
        "byte layout ({} bytes, {ROW} bytes per row)",
        frame.len()
    )?;
    layout(out, frame, &regions, hidden, style)?;
    let mut sources: Vec<(u16, &[u8])> = Vec::new();
    root.walk(&mut |n, _| {
        if let (true, Value::Blob(b)) = (
            n.name == "decompressed" && n.kind == NodeKind::Group,
            &n.value,
        ) {
            sources.push((n.source, b.as_slice()));
        }
    });
    for (src, data) in sources {
        let regions = source_regions(root, src, data.len());
        writeln!(
            out,
            "decompressed bytes, source #{src} ({} bytes, {ROW} bytes per row)",
            data.len()
        )?;
        layout(out, data, &regions, &[], style)?;
    }
    if !hidden.is_empty() {
        let n: usize = hidden.iter().map(|s| s.1).sum();
        writeln!(
            out,
            "** {n} bytes of secrets masked (--show-secrets shows them)"
        )?;
    }
    Ok(())
}

fn layout(
    out: &mut impl Write,
    frame: &[u8],
    regions: &[Region],
    hidden: &[(usize, usize)],
    style: Style,
) -> io::Result<()> {
    let len = frame.len();
    let width = format!("{:x}", len.saturating_sub(1)).len().max(4);
    let mut header = " ".repeat(width + 1);
    for c in 0..ROW {
        header.push_str(&format!(" {c:X} "));
    }
    writeln!(out, "{}", header.trim_end())?;
    let mut starts: Vec<(usize, Region)> = Vec::new();
    for (row, chunk) in frame.chunks(ROW).enumerate() {
        let base = row * ROW;
        let mut line = format!("{base:0width$x} ");
        for (i, b) in chunk.iter().enumerate() {
            let at = base + i;
            let r = regions.get(at).copied().unwrap_or(Region::Unparsed);
            let prev = if at == 0 {
                None
            } else {
                regions.get(at - 1).copied()
            };
            if prev != Some(r) {
                starts.push((at, r));
            }
            let secret = hidden.iter().any(|&(o, l)| at >= o && at - o < l);
            let hexb = if secret {
                "**".to_string()
            } else {
                format!("{b:02x}")
            };
            if style.color {
                line.push(' ');
                line.push_str(&format!("{}", hexb.color(color(r))));
            } else {
                line.push(if prev != Some(r) { '|' } else { ' ' });
                line.push_str(&hexb);
            }
        }
        if style.ascii {
            // Pad a short last row so the column lines up, then the characters.
            line.push_str(&"   ".repeat(ROW - chunk.len()));
            line.push_str("  ");
            line.extend(chunk.iter().enumerate().map(|(i, b)| {
                let at = base + i;
                if hidden.iter().any(|&(o, l)| at >= o && at - o < l) {
                    '*'
                } else if b.is_ascii_graphic() || *b == b' ' {
                    char::from(*b)
                } else {
                    '.'
                }
            }));
        }
        writeln!(out, "{line}")?;
    }
    let mut seen: Vec<Region> = Vec::new();
    for (_, r) in &starts {
        if !seen.contains(r) {
            seen.push(*r);
        }
    }
    if style.color {
        let names: Vec<String> = seen
            .iter()
            .map(|r| format!("{}", r.label().color(color(*r))))
            .collect();
        writeln!(out, "legend: {}", names.join("  "))?;
    } else {
        let mut list: Vec<String> = starts
            .iter()
            .take(MAX_STARTS)
            .map(|(at, r)| format!("{at:04x} {}", r.label()))
            .collect();
        if starts.len() > MAX_STARTS {
            list.push(format!("... {} more", starts.len() - MAX_STARTS));
        }
        writeln!(out, "regions (| marks a start): {}", list.join(", "))?;
    }
    Ok(())
}
