//! `-V`: the annotated object tree, one node a line:
//! `NAME TYPE = VALUE [0xOFFSET, NB] description`, children drawn with `+-- ` and `|   `.

use super::{value, Style};
use crate::kafka::schema::Role;
use crate::kafka::{Desc, Enc, Node, NodeKind, Note, Value};
use owo_colors::OwoColorize;
use std::borrow::Cow;
use std::io::{self, Write};

/// Descriptions longer than this are cut (to `CUT` characters and `...`) unless `--wide`.
pub const DESC_MAX: usize = 78;
const CUT: usize = 75;

/// A node's description in words: the text it carries, or the count it holds spelt out.
pub fn desc_text(d: &Desc) -> Cow<'_, str> {
    match d {
        Desc::Text(t) => Cow::Borrowed(t),
        Desc::Elements(0) => Cow::Borrowed("no elements follow"),
        Desc::Elements(1) => Cow::Borrowed("one element follows"),
        Desc::Elements(n) => Cow::Owned(format!("{n} elements follow")),
        Desc::BatchBytes(n) => Cow::Owned(format!("{n} bytes of record batches follow")),
    }
}

pub fn cut_desc(desc: &str, wide: bool) -> String {
    let (shown, more) = desc_parts(desc, wide);
    format!("{shown}{more}")
}

/// The description as shown: its first `CUT` characters and `...` when it is too long.
fn desc_parts(desc: &str, wide: bool) -> (&str, &'static str) {
    // No more bytes than DESC_MAX is no more characters: most descriptions are not counted.
    if wide || desc.len() <= DESC_MAX {
        return (desc, "");
    }
    // Most descriptions are ASCII, where a character is a byte.
    if desc.is_ascii() {
        return (desc.get(..CUT).unwrap_or(desc), "...");
    }
    if desc.chars().count() <= DESC_MAX {
        return (desc, "");
    }
    let cut = desc.char_indices().nth(CUT).map_or(desc.len(), |(i, _)| i);
    (desc.get(..cut).unwrap_or(desc), "...")
}

/// A node's span: `[0x0010, 4B]`, or `[#1 0x0004, 2B]` for offsets in the first decompressed
/// buffer rather than in the frame.
struct Span<'a>(&'a Node);

impl std::fmt::Display for Span<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0;
        if n.source == 0 {
            write!(f, "[0x{:04x}, {}B]", n.offset, n.len)
        } else {
            write!(f, "[#{} 0x{:04x}, {}B]", n.source, n.offset, n.len)
        }
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
    s.push_str(&format!(" {}", Span(n)));
    if !n.desc.is_empty() {
        s.push(' ');
        s.push_str(&cut_desc(&desc_text(&n.desc), style.wide));
    }
    s
}

/// One line in colour (a line without colour is [`push_line`]'s).
fn write_line(
    out: &mut impl Write,
    lead: &str,
    branch: &str,
    n: &Node,
    frame: &[u8],
    style: Style,
) -> io::Result<()> {
    if n.kind == NodeKind::Error {
        let line = node_line(n, frame, style);
        return writeln!(out, "{lead}{branch}{}", line.red().bold());
    }
    write_colored(out, lead, branch, n, frame, style)
}

/// One line without colour, appended to `buf`. Every node of `-V` comes here, so the pieces
/// are pushed as bytes (integers through itoa, span offsets from the hex table) and the common
/// values are written in place rather than through a value string.
fn push_line(buf: &mut Vec<u8>, lead: &str, branch: &str, n: &Node, frame: &[u8], style: Style) {
    buf.extend_from_slice(lead.as_bytes());
    buf.extend_from_slice(branch.as_bytes());
    buf.extend_from_slice(n.name.as_bytes());
    if let Some(i) = n.index {
        buf.push(b'[');
        push_int(buf, i);
        buf.push(b']');
    }
    if !n.ty.is_empty() {
        buf.push(b' ');
        buf.extend_from_slice(n.ty.as_bytes());
    }
    push_value(buf, n, frame, style);
    buf.push(b' ');
    push_span(buf, n);
    // A count's words are short: written in place, never cut.
    if let Desc::Elements(count @ 2..) = n.desc {
        buf.push(b' ');
        push_int(buf, count);
        buf.extend_from_slice(b" elements follow");
    } else if !n.desc.is_empty() {
        let desc = desc_text(&n.desc);
        let (shown, more) = desc_parts(&desc, style.wide);
        buf.push(b' ');
        buf.extend_from_slice(shown.as_bytes());
        buf.extend_from_slice(more.as_bytes());
    }
    buf.push(b'\n');
}

/// ` = value`, its length encoding and its note, as `value::text_limited` spells them; the
/// common values written in place.
fn push_value(buf: &mut Vec<u8>, n: &Node, frame: &[u8], style: Style) {
    match &n.value {
        Value::None => {}
        Value::Int(i) => {
            buf.extend_from_slice(b" = ");
            push_int(buf, *i);
            push_enc_and_note(buf, n);
        }
        // A bool without a note and a struct are written without their length encoding or
        // note, as they always were; a bool with a note gets both, as `text_limited` gives.
        Value::Bool(b) => {
            buf.extend_from_slice(if *b { b" = true" } else { b" = false" });
            if n.note != Note::None {
                push_enc_and_note(buf, n);
            }
        }
        Value::Struct => buf.extend_from_slice(b" = struct"),
        Value::Str(Some(s)) if plain_text(s) => {
            // `value::quote` changes nothing in it.
            buf.extend_from_slice(b" = \"");
            buf.extend_from_slice(s.as_bytes());
            buf.push(b'"');
            push_enc_and_note(buf, n);
        }
        Value::Uuid(u) => {
            buf.extend_from_slice(b" = ");
            value::push_uuid(buf, u);
            push_enc_and_note(buf, n);
        }
        // As `value::text_limited` spells them, written in place.
        Value::Array(count) => {
            buf.extend_from_slice(b" = ");
            push_int(buf, *count);
            buf.extend_from_slice(if *count == 1 {
                b" element"
            } else {
                b" elements"
            });
            push_enc_and_note(buf, n);
        }
        Value::Str(None) | Value::Bytes(None) | Value::Null => {
            buf.extend_from_slice(b" = null");
            push_enc_and_note(buf, n);
        }
        Value::Text(t) => push_words(buf, t, n),
        Value::Records(set) => push_words(buf, &value::record_set(set), n),
        _ => {
            if let Some(v) = value::text_limited(n, frame, style.wide, style.max_value) {
                buf.extend_from_slice(b" = ");
                buf.extend_from_slice(v.as_bytes());
            }
        }
    }
}

/// ` = words`, never cut, then the length encoding and the note.
fn push_words(buf: &mut Vec<u8>, words: &str, n: &Node) {
    buf.extend_from_slice(b" = ");
    buf.extend_from_slice(words.as_bytes());
    push_enc_and_note(buf, n);
}

fn push_int(buf: &mut Vec<u8>, i: impl itoa::Integer) {
    buf.extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
}

/// Whether `value::quote` leaves `s` as it is: no `"`, no `\\`, no control character (C0,
/// DEL, or C1, whose UTF-8 starts with 0xc2) and no invisible character (whose UTF-8 starts
/// with 0xd8, 0xe2 or 0xef).
fn plain_text(s: &str) -> bool {
    s.bytes()
        .all(|b| b >= 0x20 && !matches!(b, b'"' | b'\\' | 0x7f | 0xc2 | 0xd8 | 0xe2 | 0xef))
}

/// What `value::text_limited` writes after the value itself: the length encoding, then the
/// note.
fn push_enc_and_note(buf: &mut Vec<u8>, n: &Node) {
    push_enc(buf, n.enc);
    if n.note == Note::None {
        return;
    }
    buf.push(b' ');
    // Names (of errors, APIs, enumeration values, topics) are written in place.
    match value::note_name(&n.note) {
        Some(t) => {
            buf.push(b'(');
            buf.extend_from_slice(t.as_bytes());
            buf.push(b')');
        }
        None => buf.extend_from_slice(value::note_text(&n.note).unwrap_or_default().as_bytes()),
    }
}

/// ` (compact, len+1=N)` and the like: [`Enc::text`] after a space, written in place (a test
/// holds the two together).
fn push_enc(buf: &mut Vec<u8>, enc: Enc) {
    match enc {
        Enc::None => {}
        Enc::CompactLen(n) => {
            buf.extend_from_slice(b" (compact, len+1=");
            push_int(buf, n);
            buf.push(b')');
        }
        Enc::Int16Len(n) => {
            buf.extend_from_slice(b" (int16 len=");
            push_int(buf, n);
            buf.push(b')');
        }
        Enc::Int32Len(n) => {
            buf.extend_from_slice(b" (int32 len=");
            push_int(buf, n);
            buf.push(b')');
        }
        Enc::CompactCount => buf.extend_from_slice(b" (compact, n+1)"),
        Enc::CompactLenPlusOne => buf.extend_from_slice(b" (compact, len+1)"),
        Enc::CompactNull => buf.extend_from_slice(b" (compact, null)"),
    }
}

/// [`Span`], appended to `buf`.
fn push_span(buf: &mut Vec<u8>, n: &Node) {
    if n.source == 0 {
        buf.extend_from_slice(b"[0x");
    } else {
        buf.extend_from_slice(b"[#");
        push_int(buf, n.source);
        buf.extend_from_slice(b" 0x");
    }
    value::push_hex_num(buf, n.offset, 4);
    buf.extend_from_slice(b", ");
    push_int(buf, n.len);
    buf.extend_from_slice(b"B]");
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
        let error = n.role() == Role::ErrorCode && matches!(n.value, Value::Int(c) if c != 0);
        if error {
            format!(" = {}", v.red().bold())
        } else {
            format!(" = {v}")
        }
    });
    let span = Span(n).to_string();
    let desc = if n.desc.is_empty() {
        String::new()
    } else {
        format!(
            " {}",
            cut_desc(&desc_text(&n.desc), style.wide).bright_black()
        )
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

/// Every node below `n`, depth first, each handed to `line` with the lead that draws its
/// place in the tree (`|   +-- `).
fn children(
    n: &Node,
    lead: &mut String,
    line: &mut impl FnMut(&str, &Node) -> io::Result<()>,
) -> io::Result<()> {
    let count = n.children.len();
    for (i, c) in n.children.iter().enumerate() {
        let last = i + 1 == count;
        line(lead, c)?;
        let keep = lead.len();
        lead.push_str(if last { "    " } else { "|   " });
        children(c, lead, line)?;
        lead.truncate(keep);
    }
    Ok(())
}

/// Bytes of tree text gathered before they are handed to the writer.
const FLUSH_AT: usize = 1 << 16;

/// Writes the whole tree of `root` (the compact one with `style.brief`).
pub fn write(out: &mut impl Write, root: &Node, frame: &[u8], style: Style) -> io::Result<()> {
    if style.brief {
        return brief::write(out, root, frame, style);
    }
    if style.color {
        write_line(out, "", "", root, frame, style)?;
        return children(root, &mut String::new(), &mut |lead, c| {
            write_line(out, lead, "+-- ", c, frame, style)
        });
    }
    // Without colour the lines are gathered in `buf`, which goes to `out` whenever it passes
    // FLUSH_AT (a decompressed bomb's tree is not held as text).
    let mut buf = Vec::with_capacity(FLUSH_AT.min(4096 + 64 * root.children.len()));
    push_line(&mut buf, "", "", root, frame, style);
    children(root, &mut String::new(), &mut |lead, c| {
        push_line(&mut buf, lead, "+-- ", c, frame, style);
        if buf.len() >= FLUSH_AT {
            out.write_all(&buf)?;
            buf.clear();
        }
        Ok(())
    })?;
    out.write_all(&buf)
}

/// `-V --brief`: the same tree, compact. No descriptions; no length prefixes (an array's
/// count, a string's length annotation, the frame's size, a record's key and value lengths:
/// the values they measure are shown); no tagged-field count when there is no tagged field; an
/// element's type when it only repeats its name; no `= struct`. A line is at most
/// `BRIEF_WIDTH` columns: a value too long for its line is cut with an ellipsis (unless
/// `--wide`), so a line is longer only where its name and place in the tree alone are.
pub mod brief {
    use super::{Span, Style};
    use crate::kafka::{Node, NodeKind, Region, Value};
    use crate::render::value;
    use owo_colors::OwoColorize;
    use std::io::{self, Write};
    use unicode_width::UnicodeWidthStr;

    /// The width a brief tree fits.
    pub const BRIEF_WIDTH: usize = 100;

    /// A value is cut to no fewer columns than this, however deep its line.
    const MIN_VALUE: usize = 12;

    /// Record and batch fields that only give the length of the field after them.
    const RECORD_LENGTHS: &[&str] = &[
        "length",
        "batchLength",
        "keyLength",
        "valueLength",
        "headerKeyLength",
        "headerValueLength",
        "messageSize",
    ];

    /// Whether `n` (and what is under it) has a line in the brief tree.
    pub fn shown(n: &Node) -> bool {
        let record = matches!(n.region, Region::Record | Region::RecordBatch);
        let empty_tags = n.kind == NodeKind::TagCount
            && matches!(n.value, Value::Int(0))
            && n.children.is_empty();
        !(n.kind == NodeKind::Length
            || empty_tags
            || (n.region == Region::Frame && n.kind == NodeKind::Group)
            || (record && n.kind == NodeKind::Field && RECORD_LENGTHS.contains(&&*n.name)))
    }

    /// The line of `n` after a drawing `lead_width` columns wide: name, type, value, span.
    pub fn line(n: &Node, frame: &[u8], style: Style, lead_width: usize) -> String {
        let (head, value, span) = pieces(n, frame, style, lead_width);
        match value {
            Some(v) => format!("{head} = {v} {span}"),
            None => format!("{head} {span}"),
        }
    }

    /// Name and type; the value, cut to what the line has room for; the span.
    fn pieces(
        n: &Node,
        frame: &[u8],
        style: Style,
        lead_width: usize,
    ) -> (String, Option<String>, String) {
        let mut head = n.display_name().into_owned();
        let span = Span(n).to_string();
        let value = match n.value {
            Value::Struct => None,
            _ => value::text_brief(n, frame, style.wide, style.max_value),
        };
        // The line's width with this head and a value this wide (with its " = "), the space
        // before the span counted.
        let width = |head: &str, value: usize| lead_width + head.width() + value + 1 + span.width();
        let value_width = value.as_ref().map_or(0, |v| v.width() + 3);
        let repeats = n.index.is_some() && n.ty == n.name;
        let with_type = format!("{head} {}", n.ty);
        // When the line is too long the type goes first: it says least of what is left.
        let fits = style.wide || width(&with_type, value_width) <= BRIEF_WIDTH;
        if !n.ty.is_empty() && !repeats && fits {
            head = with_type;
        }
        let value = value.map(|v| {
            if style.wide {
                return v;
            }
            let room = BRIEF_WIDTH.saturating_sub(width(&head, 3));
            cut(&v, room.max(MIN_VALUE))
        });
        (head, value, span)
    }

    /// `v` in at most `room` columns, its end replaced by an ellipsis when it is cut.
    fn cut(v: &str, room: usize) -> String {
        if v.width() <= room {
            return v.to_string();
        }
        let mut out = String::new();
        for c in v.chars() {
            if out.width() + c.to_string().width() + 1 > room {
                break;
            }
            out.push(c);
        }
        out.push('…');
        out
    }

    fn write_line(
        out: &mut impl Write,
        lead: &str,
        branch: &str,
        n: &Node,
        frame: &[u8],
        style: Style,
    ) -> io::Result<()> {
        let drawing = lead.width() + branch.width();
        if !style.color {
            return writeln!(out, "{lead}{branch}{}", line(n, frame, style, drawing));
        }
        if n.kind == NodeKind::Error {
            let l = line(n, frame, style, drawing);
            return writeln!(out, "{lead}{branch}{}", l.red().bold());
        }
        let (head, value, span) = pieces(n, frame, style, drawing);
        let value = value.map(|v| format!(" = {v}")).unwrap_or_default();
        writeln!(
            out,
            "{}{}{}{value} {}",
            lead.bright_black(),
            branch.bright_black(),
            head.bold(),
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
        let kids: Vec<&Node> = n.children.iter().filter(|c| shown(c)).collect();
        let count = kids.len();
        for (i, c) in kids.into_iter().enumerate() {
            let last = i + 1 == count;
            write_line(out, lead, "+-- ", c, frame, style)?;
            let keep = lead.len();
            lead.push_str(if last { "    " } else { "|   " });
            children(out, c, frame, style, lead)?;
            lead.truncate(keep);
        }
        Ok(())
    }

    /// Writes the brief tree of `root`.
    pub fn write(out: &mut impl Write, root: &Node, frame: &[u8], style: Style) -> io::Result<()> {
        write_line(out, "", "", root, frame, style)?;
        children(out, root, frame, style, &mut String::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_encodings_in_place_are_what_enc_text_says() {
        for e in [
            Enc::None,
            Enc::CompactLen(7),
            Enc::Int16Len(-1),
            Enc::Int32Len(100_000),
            Enc::CompactCount,
            Enc::CompactLenPlusOne,
            Enc::CompactNull,
        ] {
            let mut buf = Vec::new();
            push_enc(&mut buf, e);
            let want = e.text().map(|t| format!(" {t}")).unwrap_or_default();
            assert_eq!(String::from_utf8_lossy(&buf), want, "{e:?}");
        }
    }

    #[test]
    fn plain_text_is_what_quote_leaves_alone() {
        for s in [
            "",
            "orders",
            "é€😀",
            "a\"b",
            "a\\b",
            "\t",
            "\u{7f}",
            "\u{85}",
            "\u{9f}",
            "\u{a0}",
            "evil\u{202e}txt",
            "\u{200b}",
            "\u{feff}bom",
            "\u{61c}",
        ] {
            let quoted = value::quote(s);
            // Plain text is written as it is; the rest (also C1-free text with 0xc2, such as
            // U+00A0) goes through `quote`.
            assert!(!plain_text(s) || quoted == format!("\"{s}\""), "{s:?}");
        }
    }
    use crate::kafka::{ErrorCode, Region};
    use crate::render::test_frames;

    fn node(name: &'static str, ty: &'static str, offset: usize, len: usize, v: Value) -> Node {
        let mut n = Node::new(name, ty, offset, Region::RequestBody, NodeKind::Field);
        n.len = len;
        n.value = v;
        n
    }

    /// Root (no value) with two arrays: the first has one element with a field, the second
    /// one field; the drawing keeps `|` under the first and spaces under the last.
    fn small_tree() -> Node {
        let mut root = Node::new("Body", "struct", 0, Region::RequestBody, NodeKind::Group);
        root.len = 8;
        root.desc = "message body".into();
        let mut a = node("Topics", "[]Topic", 0, 4, Value::Array(1));
        let mut el = node("Topic", "Topic", 0, 4, Value::Struct);
        el.index = Some(0);
        let mut code = node("ErrorCode", "int16", 0, 2, Value::Int(3));
        code.note = Note::Error(ErrorCode(3));
        code.desc = "why it failed".into();
        el.children.push(code);
        el.children
            .push(node("PartitionCount", "int32", 2, 2, Value::Int(12)));
        a.children.push(el);
        let mut b = node("Flags", "[]bool", 4, 4, Value::Array(2));
        b.children
            .push(node("Enabled", "bool", 4, 1, Value::Bool(true)));
        root.children.push(a);
        root.children.push(b);
        root
    }

    fn tree_text(root: &Node, frame: &[u8], style: Style) -> String {
        let mut out = Vec::new();
        let r = write(&mut out, root, frame, style);
        assert!(r.is_ok());
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn a_line_holds_name_type_value_span_and_description() {
        let mut n = node("ErrorCode", "int16", 0x1f, 2, Value::Int(3));
        n.note = Note::Error(ErrorCode(3));
        n.desc = "what went wrong".into();
        assert_eq!(
            node_line(&n, &[], Style::default()),
            "ErrorCode int16 = 3 (UNKNOWN_TOPIC_OR_PARTITION) [0x001f, 2B] what went wrong"
        );
        // An element shows its index; a group without type or value only its span.
        let mut el = Node::new("Broker", "", 0x12345, Region::Record, NodeKind::Group);
        el.index = Some(7);
        el.len = 300;
        assert_eq!(
            node_line(&el, &[], Style::default()),
            "Broker[7] [0x12345, 300B]"
        );
        // Offsets in a decompressed buffer name their source.
        let mut d = node("Key", "varbytes", 4, 2, Value::Blob(b"k1".to_vec()));
        d.source = 2;
        assert_eq!(
            node_line(&d, &[], Style::default()),
            r#"Key varbytes = "k1" [#2 0x0004, 2B]"#
        );
    }

    #[test]
    fn descriptions_are_cut_at_78_characters_unless_wide() {
        let short = "x".repeat(78);
        assert_eq!(cut_desc(&short, false), short);
        let long = format!("{}é{}", "a".repeat(74), "b".repeat(10));
        let cut = format!("{}é...", "a".repeat(74));
        assert_eq!(cut_desc(&long, false), cut);
        assert_eq!(cut_desc(&long, true), long);
        // The tree writes the same cut as node_line, on a character boundary.
        let mut n = node("F", "int8", 0, 1, Value::Int(0));
        n.desc = long.clone().into();
        assert_eq!(
            tree_text(&n, &[0], Style::default()),
            format!("F int8 = 0 [0x0000, 1B] {cut}\n")
        );
        let wide = Style {
            wide: true,
            ..Style::default()
        };
        assert_eq!(
            tree_text(&n, &[0], wide),
            format!("F int8 = 0 [0x0000, 1B] {long}\n")
        );
    }

    #[test]
    fn children_are_drawn_with_branches_and_bars() {
        assert_eq!(
            tree_text(&small_tree(), &[0; 8], Style::default()),
            "\
Body struct [0x0000, 8B] message body
+-- Topics []Topic = 1 element [0x0000, 4B]
|   +-- Topic[0] Topic = struct [0x0000, 4B]
|       +-- ErrorCode int16 = 3 (UNKNOWN_TOPIC_OR_PARTITION) [0x0000, 2B] why it failed
|       +-- PartitionCount int32 = 12 [0x0002, 2B]
+-- Flags []bool = 2 elements [0x0004, 4B]
    +-- Enabled bool = true [0x0004, 1B]
"
        );
    }

    #[test]
    fn the_header_of_a_spec_vector() {
        let (frame, msg) = test_frames::metadata_request();
        let text = tree_text(msg.root(), &frame, Style::default());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 19, "{text}");
        assert_eq!(
            lines.get(..9).unwrap_or_default().join("\n"),
            "\
MetadataRequest message v13 [0x0000, 37B]
+-- Frame [0x0000, 4B] length-delimited framing
|   +-- size int32 = 33 [0x0000, 4B] number of bytes that follow, patched after encoding
+-- RequestHeader v2 [0x0004, 11B] common request header
|   +-- request_api_key int16 = 3 (Metadata) [0x0004, 2B] numeric id of the API being invoked
|   +-- request_api_version int16 = 13 [0x0006, 2B] version of the API being invoked
|   +-- correlation_id int32 = 0 [0x0008, 4B] echoed back by the broker in the response
|   +-- client_id nullable_string = \"\" (int16 len=0) [0x000c, 2B] always a non-flexible int16-prefixed string
|   +-- tagged_fields uvarint = 0 [0x000e, 1B] number of tagged fields in the header"
        );
        assert_eq!(
            lines.get(9).copied(),
            Some("+-- MetadataRequest struct [0x000f, 22B] message body, version 13")
        );
        assert_eq!(
            lines.get(11).copied(),
            Some("    |   +-- length uvarint = 2 (compact, n+1) [0x000f, 1B] one element follows")
        );
        assert_eq!(
            lines.get(12).copied(),
            Some("    |   +-- MetadataRequestTopic[0] MetadataRequestTopic = struct [0x0010, 18B]")
        );
        assert_eq!(
            lines.last().copied(),
            Some("    +-- tagged_fields uvarint = 0 [0x0024, 1B] number of tagged fields in this struct")
        );
    }

    /// The plain tree writes its common values without building a line; every line must still
    /// read as `node_line` after the drawing.
    #[test]
    fn plain_lines_are_node_lines_after_the_drawing() {
        let (frame, msg) = test_frames::metadata_response();
        let text = tree_text(msg.root(), &frame, Style::default());
        let mut expected = Vec::new();
        msg.root()
            .walk(&mut |n, _| expected.push(node_line(n, &frame, Style::default())));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), expected.len());
        assert_eq!(lines.len(), 46);
        for (line, want) in lines.iter().zip(&expected) {
            let drawing = line.strip_suffix(want.as_str());
            assert!(
                drawing.is_some_and(|d| d.chars().all(|c| "|+- ".contains(c))),
                "{line:?} is not a drawing before {want:?}"
            );
        }
    }

    #[test]
    fn colour_makes_names_bold_and_dims_spans_and_descriptions() {
        let color = Style {
            color: true,
            ..Style::default()
        };
        let mut code = node("ErrorCode", "int16", 0, 2, Value::Int(3));
        code.note = Note::Error(ErrorCode(3));
        code.field = Some(crate::kafka::schema::metadata_field(Role::ErrorCode));
        code.desc = "why".into();
        let mut root = Node::new("Body", "", 0, Region::RequestBody, NodeKind::Group);
        root.len = 2;
        root.children.push(code);
        assert_eq!(
            tree_text(&root, &[0, 3], color),
            // The root's empty lead and branch are painted too: empty escapes before its name.
            "\u{1b}[90m\u{1b}[39m\u{1b}[90m\u{1b}[39m\u{1b}[1mBody\u{1b}[0m \u{1b}[90m[0x0000, 2B]\u{1b}[39m\n\
             \u{1b}[90m\u{1b}[39m\u{1b}[90m+-- \u{1b}[39m\u{1b}[1mErrorCode\u{1b}[0m \u{1b}[90mint16\u{1b}[39m = \
             \u{1b}[1m\u{1b}[31m3 (UNKNOWN_TOPIC_OR_PARTITION)\u{1b}[39m\u{1b}[0m \
             \u{1b}[90m[0x0000, 2B]\u{1b}[39m \u{1b}[90mwhy\u{1b}[39m\n"
        );
    }

    #[test]
    fn an_error_node_is_red_and_bold_in_colour() {
        let mut e = Node::new("error", "", 5, Region::Unparsed, NodeKind::Error);
        e.value = Value::Text("truncated".into());
        let color = Style {
            color: true,
            ..Style::default()
        };
        assert_eq!(
            tree_text(&e, &[], color),
            "\u{1b}[1m\u{1b}[31merror = truncated [0x0005, 0B]\u{1b}[39m\u{1b}[0m\n"
        );
        assert_eq!(
            tree_text(&e, &[], Style::default()),
            "error = truncated [0x0005, 0B]\n"
        );
    }

    fn brief() -> Style {
        Style {
            brief: true,
            ..Style::default()
        }
    }

    /// The brief tree of the Metadata v13 request vector: no descriptions, no frame size, no
    /// array length, no empty tagged-field counts, no length annotation, no `= struct`, and
    /// the element's type not repeated.
    #[test]
    fn the_brief_tree_of_a_spec_vector() {
        let (frame, msg) = test_frames::metadata_request();
        assert_eq!(
            tree_text(msg.root(), &frame, brief()),
            "\
MetadataRequest message v13 [0x0000, 37B]
+-- RequestHeader v2 [0x0004, 11B]
|   +-- request_api_key int16 = 3 (Metadata) [0x0004, 2B]
|   +-- request_api_version int16 = 13 [0x0006, 2B]
|   +-- correlation_id int32 = 0 [0x0008, 4B]
|   +-- client_id nullable_string = \"\" [0x000c, 2B]
+-- MetadataRequest struct [0x000f, 22B]
    +-- Topics []MetadataRequestTopic = 1 element [0x000f, 19B]
    |   +-- MetadataRequestTopic[0] [0x0010, 18B]
    |       +-- TopicId uuid = 00000000-0000-0000-0000-000000000000 [0x0010, 16B]
    |       +-- Name string = \"\" [0x0020, 1B]
    +-- AllowAutoTopicCreation bool = false [0x0022, 1B]
    +-- IncludeTopicAuthorizedOperations bool = false [0x0023, 1B]
"
        );
    }

    /// A line too long for 100 columns first loses its type, then its value is cut with an
    /// ellipsis to what the line has room for; `--wide` keeps both whole.
    #[test]
    fn brief_lines_fit_100_columns() {
        let long = format!("\"{}\"", "x".repeat(120));
        let mut n = node("Name", "string", 0x10, 122, Value::Text(long.clone()));
        n.desc = "the name".into();
        let line = brief::line(&n, &[], brief(), 12);
        assert_eq!(line.chars().count() + 12, 100, "{line}");
        assert!(line.starts_with("Name = \"xxx"), "{line}");
        assert!(line.ends_with("x… [0x0010, 122B]"), "{line}");
        let short = node("Name", "string", 0x10, 5, Value::Text("\"abc\"".into()));
        assert_eq!(
            brief::line(&short, &[], brief(), 12),
            "Name string = \"abc\" [0x0010, 5B]"
        );
        let wide = Style {
            wide: true,
            ..brief()
        };
        assert_eq!(
            brief::line(&n, &[], wide, 12),
            format!("Name string = {long} [0x0010, 122B]")
        );
        // However deep, a value keeps at least 12 columns.
        let line = brief::line(&n, &[], brief(), 96);
        assert!(line.starts_with("Name = \"xxxxxxxxxx… "), "{line}");
    }

    #[test]
    fn secrets_are_masked_unless_shown() {
        let (frame, msg) = test_frames::sasl_plain();
        let passwd = |style: Style| {
            let shown = crate::render::masked(&msg, &frame, style);
            let text = tree_text(msg.root(), &shown, style);
            text.lines()
                .find(|l| l.contains("passwd"))
                .map(str::to_string)
                .unwrap_or_default()
        };
        assert_eq!(
            passwd(Style::default()),
            "    |   +-- passwd varbytes = \"**\" [0x0018, 2B] password (a secret: masked unless secrets are shown)"
        );
        let show = Style {
            show_secrets: true,
            ..Style::default()
        };
        assert_eq!(
            passwd(show),
            "    |   +-- passwd varbytes = \"pw\" [0x0018, 2B] password (a secret: masked unless secrets are shown)"
        );
    }
}
