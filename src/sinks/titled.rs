//! The views of a frame with no capture around it (hex input, `kdissect example`): no time,
//! stream or addresses to sum up in a summary line, so a title line heads it, and every
//! problem is listed under it; and `--at`, the field at one byte of the input.

use kdissect::kafka::message::{request_header_version, response_header_version};
use kdissect::kafka::{Direction, Message, Node, NodeKind};
use kdissect::render::{self, value, Style};
use std::io::{self, Write};

/// Which views follow the title line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Views {
    pub(crate) tree: bool,
    pub(crate) bytes: bool,
}

/// `MetadataRequest v13, request header v2, 37 bytes on the wire`.
fn title(msg: &Message) -> String {
    let size = msg.size;
    match (msg.api_key, msg.api_version) {
        (Some(k), Some(v)) => {
            let (hname, hv) = match msg.direction {
                Direction::Request => ("request", request_header_version(k, v)),
                Direction::Response => ("response", response_header_version(k, v)),
            };
            let assumed = msg
                .assumed_version
                .map(|a| format!(", assumed_version {a}"))
                .unwrap_or_default();
            format!(
                "{} v{v}, {hname} header v{hv}, {size} bytes on the wire{assumed}",
                msg.root().name
            )
        }
        _ => format!("{}, {size} bytes on the wire", msg.root().name),
    }
}

/// A frame: its title line (with where it starts in the input, past the first byte), the
/// views asked for, and every problem, the title naming none.
pub(crate) fn write(
    out: &mut impl Write,
    msg: &Message,
    frame: &[u8],
    input_offset: u64,
    views: Views,
    style: Style,
) -> io::Result<()> {
    if input_offset > 0 {
        writeln!(out, "{} (input offset 0x{input_offset:04x})", title(msg))?;
    } else {
        writeln!(out, "{}", title(msg))?;
    }
    let frame = &render::masked(msg, frame, style)[..];
    if views.tree {
        render::tree::write(out, msg.root(), frame, style)?;
    }
    if views.bytes {
        if views.tree {
            writeln!(out)?;
        }
        let hidden = render::hidden_spans(msg, style);
        render::bytes::write_masked(out, msg.root(), frame, hidden, style)?;
    }
    if let Some(notice) = render::assumed_version_notice(msg) {
        writeln!(out, "{notice}")?;
    }
    for d in &msg.diagnoses {
        let text = d.to_string();
        let m = render::with_hint(&text, d.kind);
        writeln!(out, "!! malformed at 0x{:04x}: {m}", d.offset)?;
    }
    if let Some(e) = &msg.error {
        let m = render::with_hint(&e.to_string(), e.kind.problem()).into_owned();
        writeln!(out, "!! decoding stopped: {m}")?;
    }
    writeln!(out)
}

/// Where a byte of the input is: the frame that holds it, from its first input offset, and
/// its frame number.
pub(crate) struct Place {
    pub(crate) input_offset: u64,
    pub(crate) frame_number: u64,
    /// The byte, counted from the frame's start.
    pub(crate) byte: usize,
}

/// `--at`: the leaf that covers a byte of the frame, with the path to it.
pub(crate) fn write_at(
    out: &mut impl Write,
    msg: &Message,
    frame: &[u8],
    at: Place,
    style: Style,
) -> io::Result<()> {
    let Place {
        input_offset,
        frame_number,
        byte: off,
    } = at;
    let whole = input_offset + off as u64;
    writeln!(
        out,
        "input offset {whole} (0x{whole:04x}) is byte 0x{off:04x} of frame {frame_number} ({}, which starts at input offset 0x{input_offset:04x})",
        msg.root().name
    )?;
    let mut path = Vec::new();
    if !leaf_path(msg.root(), off, &mut path) {
        return writeln!(out, "no decoded field covers it");
    }
    writeln!(out, "field: {}", path_text(&path))?;
    let leaf = path.last().copied().unwrap_or(msg.root());
    writeln!(out, "  {}", render::tree::node_line(leaf, frame, style))?;
    if let Some(v) = value::text(leaf, frame, true) {
        writeln!(
            out,
            "  value {v}, bytes 0x{:04x}..0x{:04x} of the frame",
            leaf.offset,
            leaf.end()
        )?;
    }
    if let Some(e) = &msg.error {
        writeln!(out, "  (decoding of this frame stopped: {e})")?;
    }
    Ok(())
}

/// The nodes from `n` down to the leaf that covers `off` (not an error marker), if one does.
fn leaf_path<'a>(n: &'a Node, off: usize, path: &mut Vec<&'a Node>) -> bool {
    path.push(n);
    if n.children.is_empty() {
        if n.offset <= off && off < n.end() && n.kind != NodeKind::Error {
            return true;
        }
    } else {
        for c in &n.children {
            if c.offset <= off && off < c.end() && leaf_path(c, off, path) {
                return true;
            }
        }
    }
    path.pop();
    false
}

/// `MetadataRequest.Topics[0].TopicId`: the path below the root, elements as `[i]`.
fn path_text(path: &[&Node]) -> String {
    let mut p = String::new();
    for n in path.iter().skip(1) {
        let s = match n.index {
            Some(i) => format!("[{i}]"),
            None => n.name.to_string(),
        };
        if !p.is_empty() && !s.starts_with('[') {
            p.push('.');
        }
        p.push_str(&s);
    }
    p
}
