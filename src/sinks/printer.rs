//! The printer: writes each shown message in the chosen views, and the notices, as they come.
//! The first write error is kept and stops the run.

use super::titled::{self, Place, Views};
use super::Part;
use crate::flags::Show;
use kdissect::filter::RecordFields;
use kdissect::kafka::stream::{Notice, Record};
use kdissect::render::json::Meta;
use kdissect::render::summary::Clock;
use kdissect::render::{self, notice, summary, tshark, Style};
use kdissect::tls::{TlsConnection, TlsNotice};
use std::io::{self, Write};

pub(crate) struct Printer<W: Write> {
    pub(crate) out: W,
    show: Show,
    quiet: bool,
    style: Style,
    pub(crate) clock: Clock,
    /// Write each message out as soon as it is complete (a terminal, a pipe, -l).
    pub(crate) flush_each: bool,
    /// The first write error: nothing more is written after it.
    pub(crate) io_error: Option<io::Error>,
    /// The input being read, when there are several: JSON messages carry it, and notices on
    /// stderr name it.
    pub(crate) file: Option<String>,
    /// The summary line being written, reused from line to line.
    line: String,
    /// The endpoints of the connections met last, as the summary line writes them.
    endpoints: summary::Endpoints,
}

impl<W: Write> Printer<W> {
    pub(crate) fn new(out: W, show: Show, quiet: bool, style: Style, clock: Clock) -> Self {
        Printer {
            out,
            show,
            quiet,
            style,
            clock,
            flush_each: false,
            io_error: None,
            file: None,
            line: String::new(),
            endpoints: summary::Endpoints::default(),
        }
    }

    /// Whether anything is printed at all.
    fn silent(&self) -> bool {
        self.quiet || self.io_error.is_some()
    }

    /// Standard output holds only data (JSON, tshark's fields or ek): notices go to stderr.
    fn machine(&self) -> bool {
        self.show.json || self.show.tshark.is_some()
    }

    /// Before any input: `-T fields -E header=y` writes its header, even if no message follows.
    pub(crate) fn start(&mut self) {
        let (Some(tshark::View::Fields(f)), Some(p)) = (&self.show.tshark, &self.show.fields)
        else {
            return;
        };
        if f.header && !self.silent() {
            let line = f.header_line(&p.names());
            let r = writeln!(self.out, "{line}");
            self.keep_error(r);
        }
    }

    pub(crate) fn message(&mut self, rec: &Record<'_>, part: Part) {
        if !self.silent() {
            let r = self.write_record(rec, part).and_then(|()| self.flushed());
            self.keep_error(r);
        }
        self.clock.prev_shown_ts = Some(rec.ts_nanos);
    }

    pub(crate) fn notice(&mut self, n: &Notice) {
        if self.silent() {
            return;
        }
        let Some(line) = notice::notice_line(n, &self.clock) else {
            return;
        };
        if matches!(n, Notice::InputSkipped { .. }) {
            // Between hex input's frames, a block as each of them is: a blank line after it.
            self.notice_block(line);
        } else {
            self.notice_text(line);
        }
    }

    pub(crate) fn tls(&mut self, t: &TlsConnection) {
        if !self.silent() {
            let line = notice::tls_line(t, &self.clock);
            self.notice_text(line);
        }
    }

    pub(crate) fn tls_notice(&mut self, n: &TlsNotice) {
        if !self.silent() {
            let line = notice::tls_notice_line(n, &self.clock);
            self.notice_text(line);
        }
    }

    /// `==> name <==` before each input when there are several (as `tail` does).
    pub(crate) fn banner(&mut self, display: &str) {
        if !self.silent() && !self.machine() {
            let r = writeln!(self.out, "==> {display} <==");
            self.keep_error(r);
        }
    }

    /// A notice in red.
    fn notice_text(&mut self, line: String) {
        let line = if self.style.color {
            use owo_colors::OwoColorize;
            line.red().to_string()
        } else {
            line
        };
        self.put_notice(&line, "");
    }

    /// A notice that stands as a block between blocks, as hex input's frames do: uncoloured,
    /// as their title lines are, and a blank line after it.
    fn notice_block(&mut self, line: String) {
        self.put_notice(&line, "\n");
    }

    /// A notice line, and `after` it; NDJSON on stdout holds only messages, so there the line
    /// goes to stderr alone.
    fn put_notice(&mut self, line: &str, after: &str) {
        let r = if self.machine() {
            let file = self
                .file
                .as_deref()
                .map_or(String::new(), |f| format!("{f}: "));
            writeln!(io::stderr(), "kdissect: {file}{}", line.trim_start())
        } else {
            writeln!(self.out, "{line}{after}").and_then(|()| self.flushed())
        };
        self.keep_error(r);
    }

    fn keep_error(&mut self, r: io::Result<()>) {
        if let Err(e) = r {
            self.io_error.get_or_insert(e);
        }
    }

    /// Flushes when each message is to appear at once.
    fn flushed(&mut self) -> io::Result<()> {
        if self.flush_each {
            self.out.flush()
        } else {
            Ok(())
        }
    }

    fn write_record(&mut self, rec: &Record<'_>, part: Part) -> io::Result<()> {
        if let Some(at) = self.show.at {
            return self.write_at(rec, at);
        }
        if self.show.tshark.is_some() {
            return self.write_tshark(rec, part);
        }
        if self.show.json {
            return self.write_json(rec, part);
        }
        if let Some(offset) = rec.input_offset {
            let views = Views {
                tree: self.show.tree,
                bytes: self.show.bytes,
            };
            return titled::write(
                &mut self.out,
                &rec.msg,
                rec.bytes,
                offset,
                views,
                self.style,
            );
        }
        self.line.clear();
        summary::write_line(
            &mut self.line,
            rec,
            &self.clock,
            self.style.color,
            &mut self.endpoints,
        );
        self.line.push('\n');
        self.out.write_all(self.line.as_bytes())?;
        if self.show.summary {
            return Ok(());
        }
        let shown = render::masked(&rec.msg, rec.bytes, self.style);
        if self.show.tree {
            render::tree::write(&mut self.out, rec.msg.root(), &shown, self.style)?;
        }
        if self.show.bytes {
            let hidden = render::hidden_spans(&rec.msg, self.style);
            render::bytes::write_masked(&mut self.out, rec.msg.root(), &shown, hidden, self.style)?;
        }
        if let Some(notice) = render::assumed_version_notice(&rec.msg) {
            writeln!(self.out, "{notice}")?;
        }
        // The summary line already names the first problem when decoding did not stop.
        let skip = usize::from(rec.msg.error.is_none());
        for d in rec.msg.diagnoses.iter().skip(skip) {
            let text = d.to_string();
            let m = render::with_hint(&text, d.kind);
            writeln!(self.out, "!! malformed at 0x{:04x}: {m}", d.offset)?;
        }
        writeln!(self.out)
    }

    /// `--at`: of the frames of hex input, only the one that holds the byte is written, as the
    /// field there.
    fn write_at(&mut self, rec: &Record<'_>, at: u64) -> io::Result<()> {
        let Some(start) = rec.input_offset else {
            return Ok(());
        };
        let Some(byte) = at
            .checked_sub(start)
            .and_then(|b| usize::try_from(b).ok())
            .filter(|b| *b < rec.bytes.len())
        else {
            return Ok(());
        };
        let shown = render::masked(&rec.msg, rec.bytes, self.style);
        let place = Place {
            input_offset: start,
            frame_number: rec.frame,
            byte,
        };
        titled::write_at(&mut self.out, &rec.msg, &shown, place, self.style)
    }

    /// A record's fields as filters read them, with what the run knows beside the record.
    fn fields<'r>(&self, rec: &'r Record<'r>, part: Part) -> RecordFields<'r> {
        RecordFields::new(rec)
            .with_origin(Some(self.clock.first_ts))
            .with_response_frame(part.response_frame)
    }

    /// `-T fields`: a line of the fields; `-T ek`: an index line and the document.
    fn write_tshark(&mut self, rec: &Record<'_>, part: Part) -> io::Result<()> {
        let projection = self.show.fields.as_ref();
        let values = projection.map(|p| (p.values(&self.fields(rec, part)), p.renders()));
        let line = match (&self.show.tshark, values) {
            (Some(tshark::View::Fields(f)), Some((v, renders))) => f.line(&v, renders),
            (Some(tshark::View::Ek), Some((v, renders))) => format!(
                "{}\n{}",
                tshark::ek_index(rec.ts_nanos),
                tshark::ek_fields_doc(rec.ts_nanos, &v, renders)
            ),
            (Some(tshark::View::Ek), None) => {
                let mut json = Vec::with_capacity(rec.bytes.len() * 4 + 256);
                let shown = render::masked(&rec.msg, rec.bytes, self.style);
                render::json::write_message(
                    &mut json,
                    &rec.msg,
                    &shown,
                    &meta(rec, self.file.clone()),
                    false,
                );
                let frame = tshark::EkFrame {
                    number: rec.frame,
                    ts_nanos: rec.ts_nanos,
                    origin: self.clock.first_ts,
                };
                format!(
                    "{}\n{}",
                    tshark::ek_index(rec.ts_nanos),
                    tshark::ek_message_doc(frame, &json)
                )
            }
            _ => return Ok(()),
        };
        writeln!(self.out, "{line}")
    }

    fn write_json(&mut self, rec: &Record<'_>, part: Part) -> io::Result<()> {
        let meta = meta(rec, self.file.clone());
        if let Some(p) = &self.show.fields {
            let mut line = Vec::with_capacity(256);
            let values = p.values(&self.fields(rec, part));
            let mask = !self.style.show_secrets && !rec.msg.secrets.is_empty();
            render::json::write_projection(&mut line, &meta, rec.msg.direction, &values, mask);
            line.push(b'\n');
            return self.out.write_all(&line);
        }
        // A body written as it was walked is most of the line: room for it at once.
        let walked = rec.msg.json.as_ref().map_or(0, |j| j.bytes.len());
        let mut line = Vec::with_capacity(rec.bytes.len() * 4 + walked + 256);
        let shown = render::masked(&rec.msg, rec.bytes, self.style);
        render::json::write_message(&mut line, &rec.msg, &shown, &meta, self.show.spans);
        line.push(b'\n');
        self.out.write_all(&line)
    }
}

/// What `--json` says of a record beside its message.
fn meta(rec: &Record<'_>, file: Option<String>) -> Meta {
    if let Some(offset) = rec.input_offset {
        // Hex input has no time, stream or addresses: where the frame starts instead.
        return Meta {
            file,
            frame: rec.frame,
            input_offset: Some(offset),
            ..Meta::default()
        };
    }
    Meta {
        file,
        frame: rec.frame,
        ts_nanos: Some(rec.ts_nanos),
        stream: Some(rec.stream),
        src: Some(rec.src),
        dst: Some(rec.dst),
        request_frame: rec.request.map(|r| r.frame),
        latency_nanos: rec.latency_nanos(),
        assumed: rec.assumed,
        partial: rec.partial,
        input_offset: None,
        tls: rec.tls,
    }
}
