//! `-V`: the annotated object tree, one node a line:
//! `NAME TYPE = VALUE [0xOFFSET, NB] description`, children drawn with `+-- ` and `|   `.

use super::{value, Style};
use crate::kafka::{Enc, Node, NodeKind, Note, Value};
use owo_colors::OwoColorize;
use std::io::{self, Write};

/// Descriptions longer than this are cut (to `CUT` characters and `...`) unless `--wide`.
pub const DESC_MAX: usize = 78;
const CUT: usize = 75;

pub fn cut_desc(desc: &str, wide: bool) -> String {
    if wide || desc.chars().count() <= DESC_MAX {
        desc.to_string()
    } else {
        let mut s: String = desc.chars().take(CUT).collect();
        s.push_str("...");
        s
    }
}

/// One node's text without the tree drawing.
pub fn node_line(n: &Node, frame: &[u8], style: Style) -> String {
    let mut s = String::with_capacity(96);
    s.push_str(&n.display_name());
    if !n.ty.is_empty() {
        s.push(' ');
        s.push_str(&n.ty);
    }
    if let Some(v) = value::text_limited(n, frame, style.wide, style.max_value) {
        s.push_str(" = ");
        s.push_str(&v);
    }
    if n.source == 0 {
        s.push_str(&format!(" [0x{:04x}, {}B]", n.offset, n.len));
    } else {
        // Offsets in a decompressed buffer, not in the frame.
        s.push_str(&format!(" [#{} 0x{:04x}, {}B]", n.source, n.offset, n.len));
    }
    if !n.desc.is_empty() {
        s.push(' ');
        s.push_str(&cut_desc(&n.desc, style.wide));
    }
    s
}

fn write_line(
    out: &mut impl Write,
    lead: &str,
    branch: &str,
    n: &Node,
    frame: &[u8],
    style: Style,
) -> io::Result<()> {
    if style.color && n.kind == NodeKind::Error {
        let line = node_line(n, frame, style);
        return writeln!(out, "{lead}{branch}{}", line.red().bold());
    }
    if style.color {
        return write_colored(out, lead, branch, n, frame, style);
    }
    // The common case writes the pieces straight out: no line string, no value string for
    // the usual scalar types.
    out.write_all(lead.as_bytes())?;
    out.write_all(branch.as_bytes())?;
    out.write_all(n.name.as_bytes())?;
    if let Some(i) = n.index {
        write!(out, "[{i}]")?;
    }
    if !n.ty.is_empty() {
        out.write_all(b" ")?;
        out.write_all(n.ty.as_bytes())?;
    }
    match &n.value {
        Value::None => {}
        Value::Int(i) if n.enc == Enc::None && n.note == Note::None => write!(out, " = {i}")?,
        Value::Bool(b) if n.note == Note::None => {
            out.write_all(if *b { b" = true" } else { b" = false" })?
        }
        Value::Struct => out.write_all(b" = struct")?,
        _ => {
            if let Some(v) = value::text_limited(n, frame, style.wide, style.max_value) {
                out.write_all(b" = ")?;
                out.write_all(v.as_bytes())?;
            }
        }
    }
    if n.source == 0 {
        write!(out, " [0x{:04x}, {}B]", n.offset, n.len)?;
    } else {
        write!(out, " [#{} 0x{:04x}, {}B]", n.source, n.offset, n.len)?;
    }
    if !n.desc.is_empty() {
        out.write_all(b" ")?;
        let d: &str = &n.desc;
        if style.wide || d.chars().count() <= DESC_MAX {
            out.write_all(d.as_bytes())?;
        } else {
            let cut = d.char_indices().nth(CUT).map_or(d.len(), |(i, _)| i);
            out.write_all(d.get(..cut).unwrap_or(d).as_bytes())?;
            out.write_all(b"...")?;
        }
    }
    out.write_all(b"\n")
}

/// A line in colour: the name bold, the value plain (red for a non-zero error code), the span
/// and the description dimmed, so the eye finds fields and values.
fn write_colored(
    out: &mut impl Write,
    lead: &str,
    branch: &str,
    n: &Node,
    frame: &[u8],
    style: Style,
) -> io::Result<()> {
    let mut name = n.display_name().into_owned();
    if !n.ty.is_empty() {
        name = format!("{} {}", name.bold(), n.ty.bright_black());
    } else {
        name = name.bold().to_string();
    }
    let value = value::text_limited(n, frame, style.wide, style.max_value).map(|v| {
        let error = n.name.ends_with("ErrorCode") && matches!(n.value, Value::Int(c) if c != 0);
        if error {
            format!(" = {}", v.red().bold())
        } else {
            format!(" = {v}")
        }
    });
    let span = if n.source == 0 {
        format!("[0x{:04x}, {}B]", n.offset, n.len)
    } else {
        format!("[#{} 0x{:04x}, {}B]", n.source, n.offset, n.len)
    };
    let desc = if n.desc.is_empty() {
        String::new()
    } else {
        format!(" {}", cut_desc(&n.desc, style.wide).bright_black())
    };
    writeln!(
        out,
        "{}{}{name}{} {}{desc}",
        lead.bright_black(),
        branch.bright_black(),
        value.unwrap_or_default(),
        span.bright_black()
    )
}

fn children(
    out: &mut impl Write,
    n: &Node,
    frame: &[u8],
    style: Style,
    lead: &mut String,
) -> io::Result<()> {
    let count = n.children.len();
    for (i, c) in n.children.iter().enumerate() {
        let last = i + 1 == count;
        write_line(out, lead, "+-- ", c, frame, style)?;
        let keep = lead.len();
        lead.push_str(if last { "    " } else { "|   " });
        children(out, c, frame, style, lead)?;
        lead.truncate(keep);
    }
    Ok(())
}

/// Writes the whole tree of `root`.
pub fn write(out: &mut impl Write, root: &Node, frame: &[u8], style: Style) -> io::Result<()> {
    write_line(out, "", "", root, frame, style)?;
    children(out, root, frame, style, &mut String::new())
}
