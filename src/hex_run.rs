//! `kdissect --hex`: Kafka frames as hex text, decoded as they are read.

use crate::flags::{Hex, Mode, Settings};
use crate::{fail, input, interrupt, write_failed};
use kdissect::capture::hex;
use kdissect::kafka::frames::{self, Conversation, ResponseHint};
use kdissect::kafka::message::{request_header_version, response_header_version};
use kdissect::kafka::TopicNames;
use kdissect::kafka::{Direction, Message, Node, NodeKind};
use kdissect::render::{self, json::Meta, value, words, Style};
use std::io::{self, BufRead, IsTerminal, Read, Write};
use std::process::ExitCode;

/// Why a hex input stopped: it could not be read or parsed, or the output failed.
enum HexFailure {
    Input(String),
    Write(io::Error),
}

/// Longest piece of a line handed to the hex parser at once: a longer line (plain hex with no
/// line breaks) is cut at its last space, so memory does not grow with it.
const HEX_PIECE: usize = 1 << 20;

/// Decoding hex input as it is read: lines in, frames out.
struct HexRun<'a, W: Write> {
    out: W,
    s: &'a Settings,
    at: Option<usize>,
    hint: ResponseHint,
    views: Views,
    style: Style,
    conv: Conversation,
    topics: TopicNames,
    /// Write each frame out at once (input from a pipe or a terminal).
    flush_each: bool,
    /// Frames cut so far, over all inputs.
    index: usize,
    /// Frames decoded with damage, or not decodable.
    malformed: usize,
    /// Stretches of bytes skipped where no frame could start, and their bytes.
    skipped: usize,
    skipped_bytes: u64,
    found_at: bool,
}

impl<W: Write> HexRun<'_, W> {
    fn input(&mut self, name: &str, display: &str) -> Result<(), HexFailure> {
        let opened = input::open(name, self.s.max_zstd_window)
            .map_err(|e| HexFailure::Input(format!("cannot read {display}: {e}")))?;
        self.flush_each = !opened.regular || io::stdout().is_terminal();
        let mut reader = io::BufReader::with_capacity(1 << 16, opened.reader);
        let mut stream = hex::HexStream::default();
        let mut cutter = frames::Cutter::new(self.s.options.kafka.max_frame);
        let mut bytes_seen = 0u64;
        let mut piece = Vec::new();
        let mut carry = Vec::new();
        loop {
            piece.clear();
            piece.append(&mut carry);
            let n = (&mut reader)
                .take(HEX_PIECE as u64)
                .read_until(b'\n', &mut piece)
                .map_err(|e| HexFailure::Input(format!("cannot read {display}: {e}")))?;
            if n == 0 && piece.is_empty() {
                break;
            }
            if n > 0 && !piece.ends_with(b"\n") && piece.len() >= HEX_PIECE {
                // A very long line: parse up to its last space, keep the rest for later.
                let cut = piece
                    .iter()
                    .rposition(|b| b.is_ascii_whitespace())
                    .unwrap_or(piece.len());
                carry = piece.split_off(cut);
            }
            let text = String::from_utf8_lossy(&piece);
            let text = text.strip_suffix('\n').unwrap_or(&text);
            let text = text.strip_suffix('\r').unwrap_or(text);
            let bytes = stream
                .line(text)
                .map_err(|e| HexFailure::Input(format!("{display}: {e}")))?;
            bytes_seen += bytes.len() as u64;
            cutter.push(&bytes);
            self.drain(&mut cutter, stream.directive)?;
            if n == 0 {
                break;
            }
        }
        let bytes = stream.finish();
        bytes_seen += bytes.len() as u64;
        cutter.push(&bytes);
        self.drain(&mut cutter, stream.directive)?;
        while let Some(cut) = cutter.finish() {
            self.cut(cut, stream.directive)?;
        }
        if bytes_seen == 0 {
            return Err(HexFailure::Input(format!("{display}: no hex bytes found")));
        }
        if stream.packet_count > 0 && !self.s.quiet {
            eprintln!(
                "kdissect: {display}: a dump of {}; their TCP payloads decoded in order",
                words::count(stream.packet_count as u64, "packet")
            );
        }
        if let (Some(at), false) = (self.at, self.found_at) {
            return Err(HexFailure::Input(format!(
                "{display}: offset {at} is past the end of the input ({bytes_seen} bytes)"
            )));
        }
        Ok(())
    }

    fn drain(
        &mut self,
        cutter: &mut frames::Cutter,
        directive: Option<hex::Directive>,
    ) -> Result<(), HexFailure> {
        while let Some(cut) = cutter.next_cut() {
            self.cut(cut, directive)?;
        }
        Ok(())
    }

    /// A first comment line `# response api_key=K api_version=V` says what a lone frame is,
    /// unless the command line says otherwise; a request names its API in its own header.
    fn hint(&self, directive: Option<hex::Directive>) -> ResponseHint {
        match directive {
            Some(d) if d.response && self.hint.api_key.is_none() && !self.hint.force_response => {
                ResponseHint {
                    api_key: d.api_key,
                    api_version: d.api_version,
                    force_response: true,
                }
            }
            _ => self.hint,
        }
    }

    fn cut(
        &mut self,
        cut: frames::Cut,
        directive: Option<hex::Directive>,
    ) -> Result<(), HexFailure> {
        let r = match cut {
            frames::Cut::Frame { offset, bytes, .. } => {
                self.frame(offset as usize, &bytes, directive)
            }
            frames::Cut::Skipped { offset, len, size } => {
                self.skipped += 1;
                self.skipped_bytes += len;
                let text = format!("!! input offset 0x{offset:04x}: size prefix {size} cannot start a frame (negative, too small, or over --max-frame): skipped {} to the next frame", words::count(len, "byte"));
                if self.s.show.json {
                    // Standard output is one JSON object a line: the notice goes beside it.
                    eprintln!("kdissect: {text}");
                    Ok(())
                } else {
                    writeln!(self.out, "{text}\n")
                }
            }
        };
        r.and_then(|()| {
            if self.flush_each {
                self.out.flush()
            } else {
                Ok(())
            }
        })
        .map_err(HexFailure::Write)
    }

    fn frame(
        &mut self,
        offset: usize,
        frame: &[u8],
        directive: Option<hex::Directive>,
    ) -> io::Result<()> {
        let hint = self.hint(directive);
        let mut msg = self.conv.decode(frame, &hint);
        self.topics.observe(&mut msg);
        self.index += 1;
        if !msg.is_clean() {
            self.malformed += 1;
        }
        let style = self.style;
        if let Some(at) = self.at {
            if at >= offset && at < offset + frame.len() {
                self.found_at = true;
                let shown = render::masked(&msg, frame, style);
                return print_at(
                    &mut self.out,
                    &msg,
                    &shown,
                    offset,
                    at - offset,
                    self.index,
                    style,
                );
            }
            return Ok(());
        }
        if self.s.show.json {
            let meta = Meta {
                frame: self.index as u64,
                input_offset: Some(offset),
                ..Meta::default()
            };
            let shown = render::masked(&msg, frame, style);
            let j = render::json::message(&msg, &shown, &meta, self.s.show.spans);
            return writeln!(self.out, "{j}");
        }
        print_message(&mut self.out, &msg, frame, offset, self.views, style)
    }
}

pub(crate) fn run_hex(s: Settings) -> ExitCode {
    let Mode::Hex(Hex {
        hint,
        at,
        tree,
        bytes,
    }) = s.mode
    else {
        return fail("hex input without its settings");
    };
    let views = Views { tree, bytes };
    let stdout = io::stdout();
    let mut run = HexRun {
        out: io::BufWriter::new(stdout.lock()),
        s: &s,
        at,
        hint,
        views,
        style: s.style,
        conv: Conversation::with_options(s.options.kafka.decode),
        topics: TopicNames::default(),
        flush_each: false,
        index: 0,
        malformed: 0,
        skipped: 0,
        skipped_bytes: 0,
        found_at: false,
    };
    for name in &s.inputs {
        let display = if name == "-" {
            "standard input"
        } else {
            name.as_str()
        };
        match run.input(name, display) {
            Ok(()) => {}
            Err(HexFailure::Write(e)) => return write_failed(&e),
            Err(HexFailure::Input(e)) => {
                let _ = run.out.flush();
                return fail(e);
            }
        }
    }
    let closing = closing_line(run.index, run.malformed, run.skipped, run.skipped_bytes);
    let mut out = run.out;
    if let Err(e) = out.flush() {
        return write_failed(&e);
    }
    drop(out);
    let closing = closing.filter(|_| at.is_none());
    if let Some(line) = &closing {
        eprintln!("kdissect: {line}");
    }
    if let Some(sig) = interrupt::received() {
        return ExitCode::from(interrupt::exit_status(sig));
    }
    if closing.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The closing report on stderr, when something was wrong: frames malformed, bytes skipped
/// where no frame could start, or no frame at all. Skipped bytes are not frames, so they are
/// counted apart (an input of garbage alone has no frame to be "1 of 0").
fn closing_line(
    frames: usize,
    malformed: usize,
    skipped: usize,
    skipped_bytes: u64,
) -> Option<String> {
    let skips = || {
        format!(
            "{} skipped in {} where no size prefix could start a frame",
            words::count(skipped_bytes, "byte"),
            words::count(skipped as u64, "place")
        )
    };
    match (frames, malformed, skipped) {
        (0, _, 0) => None,
        (0, _, _) => Some(format!("no Kafka frame found: {}", skips())),
        (_, 0, 0) => None,
        (n, 0, _) => Some(format!(
            "{}, none malformed; {}",
            words::count(n as u64, "frame"),
            skips()
        )),
        (n, m, 0) => Some(format!(
            "{m} of {} malformed or undecodable",
            words::count(n as u64, "frame")
        )),
        (n, m, _) => Some(format!(
            "{m} of {} malformed or undecodable; {}",
            words::count(n as u64, "frame"),
            skips()
        )),
    }
}

/// `--at`: the leaf that covers `off` in the frame, with the path to it.
fn print_at(
    out: &mut impl Write,
    msg: &Message,
    frame: &[u8],
    input_offset: usize,
    off: usize,
    index: usize,
    style: Style,
) -> io::Result<()> {
    fn find<'a>(n: &'a Node, off: usize, path: &mut Vec<&'a Node>) -> bool {
        path.push(n);
        if n.children.is_empty() {
            if n.offset <= off && off < n.end() && n.kind != NodeKind::Error {
                return true;
            }
        } else {
            for c in &n.children {
                if c.offset <= off && off < c.end() && find(c, off, path) {
                    return true;
                }
            }
        }
        path.pop();
        false
    }
    let mut path = Vec::new();
    writeln!(
        out,
        "input offset {} (0x{:04x}) is byte 0x{off:04x} of frame {index} ({}, which starts at input offset 0x{input_offset:04x})",
        input_offset + off,
        input_offset + off,
        msg.root.name
    )?;
    if !find(&msg.root, off, &mut path) {
        return writeln!(out, "no decoded field covers it");
    }
    let names: Vec<String> = path
        .iter()
        .skip(1)
        .map(|n| match n.index {
            Some(i) => format!("[{i}]"),
            None => n.name.to_string(),
        })
        .collect();
    let mut p = String::new();
    for s in names {
        if !p.is_empty() && !s.starts_with('[') {
            p.push('.');
        }
        p.push_str(&s);
    }
    let leaf = path.last().copied().unwrap_or(&msg.root);
    writeln!(out, "field: {p}")?;
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

#[derive(Debug, Clone, Copy)]
pub(crate) struct Views {
    pub(crate) tree: bool,
    pub(crate) bytes: bool,
}

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
                msg.root.name
            )
        }
        _ => format!("{}, {size} bytes on the wire", msg.root.name),
    }
}

pub(crate) fn print_message(
    out: &mut impl Write,
    msg: &Message,
    frame: &[u8],
    input_offset: usize,
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
        render::tree::write(out, &msg.root, frame, style)?;
    }
    if views.bytes {
        if views.tree {
            writeln!(out)?;
        }
        let hidden = render::hidden_spans(msg, style);
        render::bytes::write_masked(out, &msg.root, frame, hidden, style)?;
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

#[cfg(test)]
mod tests {
    use super::closing_line;

    #[test]
    fn the_closing_line_counts_frames_and_skipped_bytes_apart() {
        assert_eq!(closing_line(3, 0, 0, 0), None);
        assert_eq!(closing_line(0, 0, 0, 0), None);
        assert_eq!(
            closing_line(1, 1, 0, 0).as_deref(),
            Some("1 of 1 frame malformed or undecodable")
        );
        assert_eq!(
            closing_line(0, 0, 1, 6).as_deref(),
            Some("no Kafka frame found: 6 bytes skipped in 1 place where no size prefix could start a frame")
        );
        assert_eq!(
            closing_line(4, 0, 2, 1).as_deref(),
            Some("4 frames, none malformed; 1 byte skipped in 2 places where no size prefix could start a frame")
        );
        assert_eq!(
            closing_line(4, 2, 1, 9).as_deref(),
            Some("2 of 4 frames malformed or undecodable; 9 bytes skipped in 1 place where no size prefix could start a frame")
        );
    }
}
