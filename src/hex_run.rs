//! `kdissect --hex`: hex text read into frames as it comes. The frames go through the sinks a
//! capture's messages go through (`crate::sinks`): the printer's views, `-c`, and the tally
//! that writes the closing line and decides the exit status.

use crate::flags::{Hex, Mode, Settings};
use crate::sinks::{Output, Printer};
use crate::{fail, input, interrupt, write_failed};
use kdissect::capture::hex;
use kdissect::kafka::frames::{self, ResponseHint};
use kdissect::pipeline::CaptureSink;
use kdissect::render::summary::Clock;
use kdissect::render::words;
use std::io::{self, BufRead, IsTerminal, Read, Write};
use std::process::ExitCode;

/// Why a hex input stopped: it could not be read or parsed, or the output failed.
enum HexFailure {
    Input(String),
    Write(io::Error),
}

/// Whether to read on after a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Go,
    /// `-c` is reached: nothing more is read.
    Enough,
}

/// Longest piece of a line handed to the hex parser at once: a longer line (plain hex with no
/// line breaks) is cut at its last space, so memory does not grow with it.
const HEX_PIECE: usize = 1 << 20;

/// Reading hex inputs: lines in, frames cut and decoded, records to the sinks.
struct HexRun<'a, W: Write> {
    o: Output<W>,
    s: &'a Settings,
    hint: ResponseHint,
    frames: frames::Reader,
    /// `--at`: some frame of the inputs holds the offset.
    found_at: bool,
}

impl<W: Write> HexRun<'_, W> {
    fn input(&mut self, name: &str, display: &str) -> Result<Flow, HexFailure> {
        let opened = input::open(name, self.s.max_zstd_window)
            .map_err(|e| HexFailure::Input(format!("cannot read {display}: {e}")))?;
        // Frames appear as they complete where someone waits for them, as a capture's do.
        self.o.shown.printer.flush_each =
            self.s.line_buffered || !opened.regular || io::stdout().is_terminal();
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
            if self.drain(&mut cutter, stream.directive)? == Flow::Enough {
                return Ok(Flow::Enough);
            }
            if n == 0 {
                break;
            }
        }
        let bytes = stream.finish();
        bytes_seen += bytes.len() as u64;
        cutter.push(&bytes);
        if self.drain(&mut cutter, stream.directive)? == Flow::Enough {
            return Ok(Flow::Enough);
        }
        while let Some(cut) = cutter.finish() {
            if self.cut(cut, stream.directive)? == Flow::Enough {
                return Ok(Flow::Enough);
            }
        }
        self.end_of_input(display, bytes_seen, stream.packet_count)?;
        Ok(Flow::Go)
    }

    /// What an input read to its end has to say: that it held no hex, that it was a dump of
    /// packets, or that `--at` pointed past it.
    fn end_of_input(
        &self,
        display: &str,
        bytes_seen: u64,
        packets: usize,
    ) -> Result<(), HexFailure> {
        if bytes_seen == 0 {
            return Err(HexFailure::Input(format!("{display}: no hex bytes found")));
        }
        if packets > 0 && !self.s.quiet {
            eprintln!(
                "kdissect: {display}: a dump of {}; their TCP payloads decoded in order",
                words::count(packets as u64, "packet")
            );
        }
        if let (Some(at), false) = (self.s.show.at, self.found_at) {
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
    ) -> Result<Flow, HexFailure> {
        while let Some(cut) = cutter.next_cut() {
            if self.cut(cut, directive)? == Flow::Enough {
                return Ok(Flow::Enough);
            }
        }
        Ok(Flow::Go)
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

    /// One frame or stretch of skipped bytes, decoded and handed to the sinks.
    fn cut(
        &mut self,
        cut: frames::Cut,
        directive: Option<hex::Directive>,
    ) -> Result<Flow, HexFailure> {
        if let (frames::Cut::Frame { offset, bytes, .. }, Some(at)) = (&cut, self.s.show.at) {
            self.found_at |= (*offset..*offset + bytes.len() as u64).contains(&at);
        }
        let hint = self.hint(directive);
        self.frames.cut(cut, &hint, &mut self.o);
        if let Some(e) = self.o.shown.printer.io_error.take() {
            return Err(HexFailure::Write(e));
        }
        if self.o.shown.count_reached() {
            return Ok(Flow::Enough);
        }
        Ok(Flow::Go)
    }
}

pub(crate) fn run_hex(mut s: Settings) -> ExitCode {
    let Mode::Hex(Hex { hint }) = s.mode else {
        return fail("hex input without its settings");
    };
    let out = io::BufWriter::new(io::stdout().lock());
    let printer = Printer::new(out, s.show.clone(), s.quiet, s.style, Clock::default());
    let mut o = Output::new(&mut s, printer);
    // Frames are cut in input order: none can come after a later one, so none waits to be put
    // in frame order.
    o.settled(None, u64::MAX);
    let mut run = HexRun {
        o,
        s: &s,
        hint,
        frames: frames::Reader::new(s.options.kafka.decode),
        found_at: false,
    };
    for name in &s.inputs {
        let display = if name == "-" {
            "standard input"
        } else {
            name.as_str()
        };
        match run.input(name, display) {
            Ok(Flow::Go) => {}
            Ok(Flow::Enough) => break,
            Err(HexFailure::Write(e)) => return write_failed(&e),
            Err(HexFailure::Input(e)) => {
                let _ = run.o.shown.printer.out.flush();
                return fail(e);
            }
        }
    }
    finish(run.o, &s)
}

/// After the inputs: the output flushed, the closing line and the exit status. `--at` asks
/// where a byte is, not whether the input is sound: it has neither.
fn finish<W: Write>(mut o: Output<W>, s: &Settings) -> ExitCode {
    o.flush_held();
    if let Some(e) = o.shown.printer.io_error.take() {
        return write_failed(&e);
    }
    if let Err(e) = o.shown.printer.out.flush() {
        return write_failed(&e);
    }
    let judged = s.show.at.is_none();
    if judged {
        for line in o.tally.report(false) {
            eprintln!("kdissect: {line}");
        }
    }
    if let Some(sig) = interrupt::received() {
        return ExitCode::from(interrupt::exit_status(sig));
    }
    if judged {
        o.tally.exit_code(false)
    } else {
        ExitCode::SUCCESS
    }
}
