//! `-x`: the byte layout, 16 bytes a row, each byte coloured by the region of the leaf that
//! covers it. Without colour, a `|` before a byte marks where a new region begins.

use super::Style;
use crate::kafka::{Node, Region};
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

/// The region of every byte of the frame, from the leaves of its tree.
pub fn byte_regions(root: &Node, len: usize) -> Vec<Region> {
    let mut regions = vec![Region::Unparsed; len];
    for leaf in root.leaves() {
        let end = leaf.end().min(len);
        if let Some(slot) = regions.get_mut(leaf.offset.min(end)..end) {
            slot.fill(leaf.region);
        }
    }
    regions
}

pub fn write(out: &mut impl Write, root: &Node, frame: &[u8], style: Style) -> io::Result<()> {
    let len = frame.len();
    let regions = byte_regions(root, len);
    let width = format!("{:x}", len.saturating_sub(1)).len().max(4);
    writeln!(out, "byte layout ({len} bytes, {ROW} bytes per row)")?;
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
            let hexb = format!("{b:02x}");
            if style.color {
                line.push(' ');
                line.push_str(&format!("{}", hexb.color(color(r))));
            } else {
                line.push(if prev != Some(r) { '|' } else { ' ' });
                line.push_str(&hexb);
            }
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
