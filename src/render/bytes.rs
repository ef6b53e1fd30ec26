//! `-x`: the byte layout, 16 bytes a row, each byte coloured by the region of the leaf that
//! covers it. Without colour, a `|` before a byte marks where a new region begins.

use super::value::{hex_digits, push_hex_num as push_hex, HEX_DIGITS as HEX};
use super::Style;
use crate::kafka::{Node, NodeKind, Region, Shape, Value};
use std::io::{self, Write};

const ROW: usize = 16;
/// Region starts listed under an uncoloured layout before the list is cut short.
const MAX_STARTS: usize = 32;

/// Where each region of one source begins and ends: the frame (source 0) or a decompressed
/// buffer. Runs, not a region per byte, so that a 64 MiB decompressed buffer costs as many
/// entries as it has leaves rather than 64 MiB.
struct Runs(Vec<(usize, usize, Region)>);

impl Runs {
    /// The runs of `source` from its leaves, in offset order; bytes no leaf covers are
    /// `Unparsed`.
    fn of(root: &Node, source: u16, len: usize) -> Runs {
        let mut leaves = if source == 0 {
            root.leaves()
        } else {
            root.source_leaves(source)
        };
        leaves.sort_by_key(|l| l.offset);
        let mut runs = Vec::new();
        let mut at = 0;
        for leaf in leaves {
            let (start, end) = (leaf.offset.min(len), leaf.end().min(len));
            if start >= end || start < at {
                continue;
            }
            if start > at {
                runs.push((at, start, Region::Unparsed));
            }
            runs.push((start, end, leaf.region));
            at = end;
        }
        if at < len {
            runs.push((at, len, Region::Unparsed));
        }
        Runs(runs)
    }
}

/// Walks the runs in step with the bytes of a layout.
struct RunCursor<'a> {
    runs: &'a [(usize, usize, Region)],
    next: usize,
    current: Option<Region>,
}

impl<'a> RunCursor<'a> {
    fn new(runs: &'a Runs) -> Self {
        RunCursor {
            runs: &runs.0,
            next: 0,
            current: None,
        }
    }

    /// The region of the byte at `at` and whether a region starts there (it differs from the
    /// byte before, or it is the first byte). Bytes are asked for in increasing order.
    fn region_at(&mut self, at: usize) -> (Region, bool) {
        while let Some(&(_, end, _)) = self.runs.get(self.next) {
            if end > at {
                break;
            }
            self.next += 1;
        }
        let r = match self.runs.get(self.next) {
            Some(&(start, _, r)) if start <= at => r,
            _ => Region::Unparsed,
        };
        let starts = self.current != Some(r);
        self.current = Some(r);
        (r, starts)
    }

    /// Whether a region starts at one of the bytes `at..end`, the bytes after the last one
    /// asked for.
    fn starts_within(&self, at: usize, end: usize) -> bool {
        let mut current = self.current;
        let later = self.runs.get(self.next..).unwrap_or_default();
        for &(start, run_end, r) in later {
            if start >= end {
                break;
            }
            if run_end <= at {
                continue;
            }
            if current != Some(r) {
                return true;
            }
            current = Some(r);
        }
        // Bytes past the last run (none, as the runs cover the source) are `Unparsed`.
        current.is_none()
    }
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
    let regions = Runs::of(root, 0, frame.len());
    writeln!(
        out,
        "byte layout ({} bytes, {ROW} bytes per row)",
        frame.len()
    )?;
    layout(out, frame, &regions, hidden, style)?;
    let mut sources: Vec<(u16, &[u8])> = Vec::new();
    root.walk(&mut |n, _| {
        if let (true, Value::Blob(b)) = (
            n.shape == Shape::Decompressed && n.kind == NodeKind::Group,
            &n.value,
        ) {
            sources.push((n.source, b.as_slice()));
        }
    });
    for (src, data) in sources {
        let regions = Runs::of(root, src, data.len());
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
            "** {} of secrets masked (--show-secrets shows them)",
            super::words::count(n as u64, "byte")
        )?;
    }
    Ok(())
}

/// One layout: the column header, a row per 16 bytes, then where the regions start (a legend
/// of their colours when coloured). As hexdump does, a row that would print exactly as the
/// one before it, bytes and region alike, is left out, and a `*` line stands for each run of
/// them: a decompression bomb of zeros then lays out in a few lines instead of millions. The
/// last row is always printed, so that the end offset shows.
///
/// The layout is written into a byte buffer handed to `out` every `FLUSH_AT` bytes: a byte
/// costs a few pushes (hex digits from a table, a precomputed colour sequence) rather than a
/// `format!` each, which made this view several times the cost of decoding; and a frame of
/// tens of megabytes (a Metadata answer naming two million topics) is not laid out whole in
/// memory, at some 4.5 bytes of text a byte.
const FLUSH_AT: usize = 64 * 1024;

fn layout(
    out: &mut impl Write,
    data: &[u8],
    regions: &Runs,
    hidden: &[(usize, usize)],
    style: Style,
) -> io::Result<()> {
    let width = hex_digits(data.len().saturating_sub(1)).max(4);
    let rows = data.len().div_ceil(ROW);
    // A row is at most ~16 coloured bytes of 3 + 10 escape bytes, plus offset and characters.
    let per_row = if style.color { 16 * 13 } else { 16 * 3 } + width + 2 + ROW + 2;
    let mut buf: Vec<u8> =
        Vec::with_capacity((rows + 3).saturating_mul(per_row).min(FLUSH_AT + per_row));
    column_header(&mut buf, width);
    buf.push(b'\n');
    let mut starts: Vec<(usize, Region)> = Vec::new();
    let mut cursor = RunCursor::new(regions);
    // The bytes of the row before, when it was one region throughout and held no secret.
    let mut plain_prev: Option<&[u8]> = None;
    let mut in_squeeze = false;
    for (row, chunk) in data.chunks(ROW).enumerate() {
        let base = row * ROW;
        let end = base + chunk.len();
        let plain = !cursor.starts_within(base, end) && !overlaps(hidden, base, end);
        if plain && row + 1 < rows && plain_prev == Some(chunk) {
            // Same bytes, same region, no start: it would print as the row before.
            cursor.region_at(end - 1);
            if !in_squeeze {
                buf.extend_from_slice(b"*\n");
                in_squeeze = true;
            }
            continue;
        }
        in_squeeze = false;
        push_hex(&mut buf, base, width);
        buf.push(b' ');
        let mut one_region = true;
        for (i, b) in chunk.iter().enumerate() {
            let at = base + i;
            let (r, starts_here) = cursor.region_at(at);
            if starts_here {
                starts.push((at, r));
                one_region = false;
            }
            push_byte(&mut buf, *b, r, starts_here, is_hidden(hidden, at), style);
        }
        plain_prev = (one_region && plain && chunk.len() == ROW).then_some(chunk);
        if style.ascii {
            // Pad a short last row so the column lines up, then the characters.
            for _ in chunk.len()..ROW {
                buf.extend_from_slice(b"   ");
            }
            buf.extend_from_slice(b"  ");
            characters(&mut buf, chunk, base, hidden);
        }
        buf.push(b'\n');
        if buf.len() >= FLUSH_AT {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    if style.color {
        buf.extend_from_slice(b"legend: ");
        legend(&mut buf, &starts);
    } else {
        buf.extend_from_slice(b"regions (| marks a start): ");
        start_list(&mut buf, &starts);
    }
    buf.push(b'\n');
    out.write_all(&buf)
}

/// `      0  1  2 ...  F`, the first column as wide as the offsets.
fn column_header(buf: &mut Vec<u8>, width: usize) {
    buf.resize(buf.len() + width + 1, b' ');
    for (c, digit) in HEX.iter().enumerate().take(ROW) {
        buf.push(b' ');
        buf.push(digit.to_ascii_uppercase());
        if c + 1 < ROW {
            buf.push(b' ');
        }
    }
}

/// Whether the byte at `at` lies in one of the `hidden` spans (secrets).
fn is_hidden(hidden: &[(usize, usize)], at: usize) -> bool {
    hidden.iter().any(|&(o, l)| at >= o && at - o < l)
}

/// Whether any byte of `at..end` lies in one of the `hidden` spans.
fn overlaps(hidden: &[(usize, usize)], at: usize, end: usize) -> bool {
    hidden.iter().any(|&(o, l)| o < end && o + l > at)
}

/// The escape sequence that starts a region's colour: what owo-colors writes before text
/// coloured with the region's colour (a test holds the two together).
fn fg(r: Region) -> &'static [u8] {
    match r {
        Region::Frame => b"\x1b[35m",
        Region::RpcHeader => b"\x1b[36m",
        Region::RequestBody => b"\x1b[32m",
        Region::ResponseBody => b"\x1b[34m",
        Region::TaggedFields => b"\x1b[33m",
        Region::RecordBatch => b"\x1b[91m",
        Region::Record => b"\x1b[31m",
        Region::Unparsed => b"\x1b[90m",
    }
}

/// The escape sequence that ends a colour (back to the default foreground).
const FG_END: &[u8] = b"\x1b[39m";

/// One byte of a row: ` 2a` in its region's colour, or `|2a` / ` 2a` without colour; `**` for
/// a secret.
fn push_byte(buf: &mut Vec<u8>, b: u8, r: Region, starts_here: bool, secret: bool, style: Style) {
    let hexb = if secret {
        *b"**"
    } else {
        [HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]]
    };
    if style.color {
        buf.push(b' ');
        buf.extend_from_slice(fg(r));
        buf.extend_from_slice(&hexb);
        buf.extend_from_slice(FG_END);
    } else {
        buf.push(if starts_here { b'|' } else { b' ' });
        buf.extend_from_slice(&hexb);
    }
}

/// The character column of a row, as xxd prints it: printable ASCII as itself, `.` for the
/// rest, `*` for a secret.
fn characters(buf: &mut Vec<u8>, chunk: &[u8], base: usize, hidden: &[(usize, usize)]) {
    for (i, b) in chunk.iter().enumerate() {
        buf.push(if is_hidden(hidden, base + i) {
            b'*'
        } else if b.is_ascii_graphic() || *b == b' ' {
            *b
        } else {
            b'.'
        });
    }
}

/// Each region found, once, in its colour.
fn legend(buf: &mut Vec<u8>, starts: &[(usize, Region)]) {
    let mut seen: Vec<Region> = Vec::new();
    for (_, r) in starts {
        if !seen.contains(r) {
            seen.push(*r);
        }
    }
    for (i, r) in seen.iter().enumerate() {
        if i > 0 {
            buf.extend_from_slice(b"  ");
        }
        buf.extend_from_slice(fg(*r));
        buf.extend_from_slice(r.label().as_bytes());
        buf.extend_from_slice(FG_END);
    }
}

/// `0000 frame, 0004 rpc header, ...`, cut after `MAX_STARTS`.
fn start_list(buf: &mut Vec<u8>, starts: &[(usize, Region)]) {
    for (i, (at, r)) in starts.iter().take(MAX_STARTS).enumerate() {
        if i > 0 {
            buf.extend_from_slice(b", ");
        }
        push_hex(buf, *at, 4);
        buf.push(b' ');
        buf.extend_from_slice(r.label().as_bytes());
    }
    if starts.len() > MAX_STARTS {
        buf.extend_from_slice(b", ... ");
        buf.extend_from_slice(
            itoa::Buffer::new()
                .format(starts.len() - MAX_STARTS)
                .as_bytes(),
        );
        buf.extend_from_slice(b" more");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::test_frames;
    use owo_colors::AnsiColors;

    /// Each region's colour as owo-colors names it, which [`fg`] writes precomputed.
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

    fn leaf(offset: usize, len: usize, region: Region) -> Node {
        let mut n = Node::new("f", "int8", offset, region, NodeKind::Field);
        n.len = len;
        n
    }

    fn group(len: usize, children: Vec<Node>) -> Node {
        let mut n = Node::new("Frame", "", 0, Region::Frame, NodeKind::Group);
        n.len = len;
        n.children = children;
        n
    }

    fn layout_text(root: &Node, frame: &[u8], hidden: &[(usize, usize)], style: Style) -> String {
        let mut out = Vec::new();
        assert!(write_masked(&mut out, root, frame, hidden, style).is_ok());
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn bars_mark_where_each_region_starts() {
        let (frame, msg) = test_frames::metadata_request();
        assert_eq!(
            layout_text(msg.root(), &frame, &[], Style::default()),
            "\
byte layout (37 bytes, 16 bytes per row)
      0  1  2  3  4  5  6  7  8  9  A  B  C  D  E  F
0000 |00 00 00 21|00 03 00 0d 00 00 00 00 00 00|00|02
0010  00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
0020  01|00|00 00|00
regions (| marks a start): 0000 frame, 0004 rpc header, 000e tagged_fields, 000f request body, 0021 tagged_fields, 0022 request body, 0024 tagged_fields
"
        );
    }

    #[test]
    fn secrets_are_stars_in_the_bytes_and_the_character_column() {
        let (frame, msg) = test_frames::sasl_plain();
        let ascii = Style {
            ascii: true,
            ..Style::default()
        };
        let hidden = crate::render::hidden_spans(&msg, ascii);
        assert_eq!(hidden, &[(0x18, 2)]);
        assert_eq!(
            layout_text(msg.root(), &frame, hidden, ascii),
            "\
byte layout (27 bytes, 16 bytes per row)
      0  1  2  3  4  5  6  7  8  9  A  B  C  D  E  F
0000 |00 00 00 17|00 24 00 02 00 00 00 03 00 01 74|00  .....$........t.
0010 |0a 00 61 6c 69 63 65 00 ** **|00                 ..alice.**.
regions (| marks a start): 0000 frame, 0004 rpc header, 000f tagged_fields, 0010 request body, 001a tagged_fields
** 2 bytes of secrets masked (--show-secrets shows them)
"
        );
        let show = Style {
            show_secrets: true,
            ..Style::default()
        };
        let text = layout_text(
            msg.root(),
            &frame,
            crate::render::hidden_spans(&msg, show),
            show,
        );
        assert!(
            text.contains("\n0010 |0a 00 61 6c 69 63 65 00 70 77|00\n"),
            "{text}"
        );
        assert!(!text.contains("masked"), "{text}");
    }

    #[test]
    fn colour_paints_each_byte_by_region_and_adds_a_legend() {
        let root = group(
            5,
            vec![leaf(0, 4, Region::Frame), leaf(4, 1, Region::RpcHeader)],
        );
        let color = Style {
            color: true,
            ..Style::default()
        };
        assert_eq!(
            layout_text(&root, &[0, 0, 0, 1, 0x2a], &[], color),
            "\
byte layout (5 bytes, 16 bytes per row)
      0  1  2  3  4  5  6  7  8  9  A  B  C  D  E  F
0000  \u{1b}[35m00\u{1b}[39m \u{1b}[35m00\u{1b}[39m \u{1b}[35m00\u{1b}[39m \u{1b}[35m01\u{1b}[39m \u{1b}[36m2a\u{1b}[39m
legend: \u{1b}[35mframe\u{1b}[39m  \u{1b}[36mrpc header\u{1b}[39m
"
        );
    }

    #[test]
    fn precomputed_colours_are_what_owo_colors_writes() {
        use owo_colors::OwoColorize;
        for r in [
            Region::Frame,
            Region::RpcHeader,
            Region::RequestBody,
            Region::ResponseBody,
            Region::TaggedFields,
            Region::RecordBatch,
            Region::Record,
            Region::Unparsed,
        ] {
            let mut ours = fg(r).to_vec();
            ours.extend_from_slice(b"2a");
            ours.extend_from_slice(FG_END);
            assert_eq!(
                String::from_utf8_lossy(&ours),
                format!("{}", "2a".color(color(r))),
                "{r:?}"
            );
        }
    }

    #[test]
    fn bytes_no_leaf_covers_are_unparsed() {
        let root = group(4, vec![leaf(0, 2, Region::RpcHeader)]);
        assert_eq!(
            Runs::of(&root, 0, 4).0,
            vec![(0, 2, Region::RpcHeader), (2, 4, Region::Unparsed)]
        );
        let text = layout_text(&root, &[1, 2, 3, 4], &[], Style::default());
        assert!(
            text.ends_with(
                "0000 |01 02|03 04\nregions (| marks a start): 0000 rpc header, 0002 unparsed\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn the_list_of_starts_is_cut_after_32() {
        let leaves = (0..40)
            .map(|i| {
                let r = if i % 2 == 0 {
                    Region::RequestBody
                } else {
                    Region::TaggedFields
                };
                leaf(i, 1, r)
            })
            .collect();
        let text = layout_text(&group(40, leaves), &[0; 40], &[], Style::default());
        let last = text.lines().last().unwrap_or_default();
        assert!(
            last.ends_with(", 001e request body, 001f tagged_fields, ... 8 more"),
            "{last}"
        );
        assert_eq!(last.matches(", ").count(), 32);
    }

    /// A big frame is handed to the writer in pieces of about `FLUSH_AT`, not laid out whole
    /// in memory first, and every row still comes out once, in order.
    #[test]
    fn a_big_layout_is_written_in_pieces() {
        struct Pieces(Vec<usize>, Vec<u8>);
        impl Write for Pieces {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.0.push(b.len());
                self.1.extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        // No two rows alike, so that none is squeezed.
        let frame: Vec<u8> = (0..0x40000u32)
            .map(|i| (i / 16 % 251) as u8 ^ (i / 4016) as u8)
            .collect();
        let mut out = Pieces(Vec::new(), Vec::new());
        assert!(write(
            &mut out,
            &group(frame.len(), vec![]),
            &frame,
            Style::default()
        )
        .is_ok());
        assert!(out.0.len() > 4, "{} writes", out.0.len());
        assert!(out.0.iter().all(|&n| n < FLUSH_AT + 200), "{:?}", out.0);
        let text = String::from_utf8_lossy(&out.1);
        let rows: Vec<&str> = text
            .lines()
            .filter(|l| l.contains(" |") || l.starts_with(char::is_numeric))
            .collect();
        assert_eq!(rows.len(), frame.len() / ROW, "{:?}", rows.last());
        assert!(
            rows.last().is_some_and(|l| l.starts_with("3fff0 ")),
            "{:?}",
            rows.last()
        );
    }

    #[test]
    fn offsets_widen_past_four_hex_digits() {
        let frame = vec![0u8; 0x10001];
        let text = layout_text(&group(frame.len(), vec![]), &frame, &[], Style::default());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines.get(1).copied(),
            Some("       0  1  2  3  4  5  6  7  8  9  A  B  C  D  E  F")
        );
        assert_eq!(
            lines.get(2).copied(),
            Some("00000 |00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00")
        );
        assert_eq!(lines.get(lines.len() - 2).copied(), Some("10000  00"));
    }

    #[test]
    fn a_decompressed_buffer_gets_its_own_layout() {
        let mut dn = Node::new(
            "decompressed",
            "records",
            0,
            Region::Record,
            NodeKind::Group,
        );
        dn.shape = Shape::Decompressed;
        dn.source = 1;
        dn.len = 3;
        dn.value = Value::Blob(vec![0xa, 0xb, 0xc]);
        let mut inner = leaf(0, 1, Region::RecordBatch);
        inner.source = 1;
        let mut rest = leaf(1, 2, Region::Record);
        rest.source = 1;
        dn.children = vec![inner, rest];
        // In the frame, the decompressed group covers no bytes: the compressed ones are its
        // sibling's.
        let mut root = group(2, vec![leaf(0, 2, Region::RecordBatch), dn]);
        root.region = Region::RecordBatch;
        assert_eq!(
            layout_text(&root, &[1, 2], &[], Style::default()),
            "\
byte layout (2 bytes, 16 bytes per row)
      0  1  2  3  4  5  6  7  8  9  A  B  C  D  E  F
0000 |01 02
regions (| marks a start): 0000 RecordBatch
decompressed bytes, source #1 (3 bytes, 16 bytes per row)
      0  1  2  3  4  5  6  7  8  9  A  B  C  D  E  F
0000 |0a|0b 0c
regions (| marks a start): 0000 RecordBatch, 0001 Record
"
        );
    }

    #[test]
    fn rows_that_repeat_the_one_before_are_squeezed_into_a_star() {
        // 80 bytes: a 4-byte header, then 76 zeros in one region. Rows 0x20 and 0x30 repeat
        // row 0x10; the last row (0x40) prints although it repeats too, to show the end.
        let root = group(
            80,
            vec![leaf(0, 4, Region::Frame), leaf(4, 76, Region::RecordBatch)],
        );
        let mut data = vec![0u8; 80];
        data[3] = 0x4c;
        assert_eq!(
            layout_text(&root, &data, &[], Style::default()),
            "\
byte layout (80 bytes, 16 bytes per row)
      0  1  2  3  4  5  6  7  8  9  A  B  C  D  E  F
0000 |00 00 00 4c|00 00 00 00 00 00 00 00 00 00 00 00
0010  00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
*
0040  00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
regions (| marks a start): 0000 frame, 0004 RecordBatch
"
        );
    }

    #[test]
    fn a_repeated_row_with_a_region_start_or_a_secret_is_not_squeezed() {
        let root = group(
            48,
            vec![
                leaf(0, 20, Region::Frame),
                leaf(20, 28, Region::RecordBatch),
            ],
        );
        let data = vec![0u8; 48];
        let text = layout_text(&root, &data, &[], Style::default());
        assert!(!text.contains('*'), "{text}");
        // Rows 0x10 and 0x20 repeat: squeezed, unless row 0x10 or 0x20 holds a secret.
        let root = group(64, vec![leaf(0, 64, Region::Frame)]);
        let data = vec![0u8; 64];
        let text = layout_text(&root, &data, &[], Style::default());
        assert!(text.contains("\n*\n"), "{text}");
        for secret in [(20, 4), (36, 2)] {
            let text = layout_text(&root, &data, &[secret], Style::default());
            assert!(!text.contains("\n*\n"), "{text}");
        }
    }
}
