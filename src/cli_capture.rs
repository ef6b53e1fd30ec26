//! `kdissect capture.pcap`: the capture path of the command line, and its printer.

use crate::{fail, Cli, Views};
use kdissect::capture::net::linktype_name;
use kdissect::kafka::stream::{Config, Notice, Record, ResyncReason, Sink};
use kdissect::pipeline::{self, CaptureSink, Health, Options};
use kdissect::render::{self, summary, Style};
use kdissect::tcp::{GapKind, Limits};
use std::fs::File;
use std::io::{self, BufReader, Write};
use std::process::ExitCode;

struct Printer<W: Write> {
    out: W,
    views: Views,
    summary_only: bool,
    style: Style,
    first_ts: i64,
    messages: u64,
    malformed: u64,
    lost: u64,
    resyncs: u64,
    retransmissions: u64,
    overlaps: u64,
    unanswered: u64,
    bad_sizes: u64,
    /// Messages whose API or version kdissect has no table for, and those APIs.
    undecoded: u64,
    undecoded_apis: Vec<String>,
    /// The first write error; printing stops there.
    io_error: Option<io::Error>,
}

impl<W: Write> Printer<W> {
    fn write_record(&mut self, rec: &Record<'_>) -> io::Result<()> {
        let line = summary::line(rec, self.first_ts);
        if self.summary_only {
            return writeln!(self.out, "{line}");
        }
        writeln!(self.out, "{line}")?;
        if self.views.tree {
            render::tree::write(&mut self.out, &rec.msg.root, rec.bytes, self.style)?;
        }
        if self.views.bytes {
            render::bytes::write(&mut self.out, &rec.msg.root, rec.bytes, self.style)?;
        }
        for d in rec
            .msg
            .diagnoses
            .iter()
            .skip(usize::from(rec.msg.error.is_none()))
        {
            writeln!(
                self.out,
                "!! malformed at 0x{:04x}: {}",
                d.offset, d.message
            )?;
        }
        writeln!(self.out)
    }

    fn notice_line(&self, n: &Notice) -> Option<String> {
        let rel = |ts: i64| (ts - self.first_ts) as f64 / 1e9;
        Some(match n {
            Notice::LostInGap { stream, src, dst, at, present, kind } => {
                let why = match kind {
                    GapKind::Lost(b) => format!("{b} bytes of the stream were not captured"),
                    GapKind::Truncated(b) => format!("the snap length cut {b} bytes off a packet"),
                    GapKind::MidStream => "the capture started inside it".to_string(),
                };
                format!(
                    "{:>6} {:>11.6} {src} → {dst} [{stream}] !! a Kafka frame was lost in a gap: {why} ({present} of its bytes captured before the gap)",
                    at.frame,
                    rel(at.ts_nanos)
                )
            }
            Notice::Resync { stream, src, dst, at, skipped, reason } => {
                let why = match reason {
                    ResyncReason::MidStream => "the capture starts mid-stream",
                    ResyncReason::Gap => "after a gap",
                    ResyncReason::BadSize => "after a size prefix that cannot be a frame",
                };
                format!(
                    "{:>6} {:>11.6} {src} → {dst} [{stream}] !! {why}: skipped {skipped} bytes to the next frame boundary",
                    at.frame,
                    rel(at.ts_nanos)
                )
            }
            Notice::BadSize { stream, src, at, size } => format!(
                "{:>6} {:>11.6} {src} [{stream}] !! size prefix {size} cannot start a frame: looking for the next boundary",
                at.frame,
                rel(at.ts_nanos)
            ),
            Notice::EndedInFrame { stream, src, present, want } => {
                format!("{:>6} {:>11} {src} [{stream}] !! the connection ended inside a frame ({present} of {want} bytes)", "-", "-")
            }
            Notice::Unanswered { stream, src, dst, request } => format!(
                "{:>6} {:>11.6} {src} → {dst} [{stream}] !! unanswered: {} v{} Request corr={} got no response in the capture",
                request.frame,
                rel(request.ts_nanos),
                kdissect::kafka::message::api_display_name(request.api_key),
                request.api_version,
                request.correlation_id
            ),
            Notice::ConflictingOverlap { stream, at, offset } => format!(
                "{:>6} {:>11.6} [{stream}] !! a retransmitted segment's bytes differ from the first copy at stream offset {offset}",
                at.frame,
                rel(at.ts_nanos)
            ),
            Notice::PendingDropped { stream, request } => format!(
                "{:>6} {:>11.6} [{stream}] !! too many requests waiting: stopped waiting for corr={}",
                request.frame,
                rel(request.ts_nanos),
                request.correlation_id
            ),
            Notice::Retransmission { .. } | Notice::Connection { .. } => return None,
        })
    }
}

impl<W: Write> Sink for Printer<W> {
    fn message(&mut self, rec: &Record<'_>) {
        self.messages += 1;
        if rec.partial {
            // Counted as lost by its gap notice.
        } else if rec.msg.is_malformed() {
            self.malformed += 1;
        } else if rec.msg.is_unknown_api() {
            let name = rec.msg.api_name().into_owned();
            if !self.undecoded_apis.contains(&name) {
                self.undecoded_apis.push(name);
            }
            self.undecoded += 1;
        }
        if self.io_error.is_none() {
            if let Err(e) = self.write_record(rec) {
                self.io_error = Some(e);
            }
        }
    }

    fn notice(&mut self, n: &Notice) {
        match n {
            Notice::LostInGap { .. } => self.lost += 1,
            Notice::Resync { .. } => self.resyncs += 1,
            Notice::Retransmission { .. } => self.retransmissions += 1,
            Notice::ConflictingOverlap { .. } => self.overlaps += 1,
            Notice::Unanswered { .. } => self.unanswered += 1,
            Notice::BadSize { .. } => self.bad_sizes += 1,
            _ => {}
        }
        if self.io_error.is_some() {
            return;
        }
        if let Some(line) = self.notice_line(n) {
            if let Err(e) = writeln!(self.out, "{line}") {
                self.io_error = Some(e);
            }
        }
    }
}

impl<W: Write> CaptureSink for Printer<W> {
    fn first_packet(&mut self, ts_nanos: i64) {
        self.first_ts = ts_nanos;
    }
}

fn health_report(name: &str, h: &Health, p: &Printer<impl Write>) -> Vec<String> {
    let mut lines = Vec::new();
    for (lt, n) in &h.unsupported_linktypes {
        lines.push(format!(
            "{name}: {n} packets of {} skipped: this link type is not supported",
            linktype_name(*lt)
        ));
    }
    for (frame, why) in &h.bad_packets {
        lines.push(format!("{name}: frame {frame}: {why}"));
    }
    if h.bad_packet_count > h.bad_packets.len() as u64 {
        lines.push(format!(
            "{name}: {} more packets with bad headers",
            h.bad_packet_count - h.bad_packets.len() as u64
        ));
    }
    for w in &h.warnings {
        lines.push(format!("{name}: {w}"));
    }
    if h.packets > 0 && p.messages == 0 {
        lines.push(format!(
            "{name}: no Kafka traffic found in {} packets (broker ports: {}; give the broker's port with -p)",
            h.packets, "see -p"
        ));
    }
    lines
}

pub fn run(cli: &Cli, inputs: &[String], style: Style) -> ExitCode {
    let views = Views {
        tree: cli.tree,
        bytes: cli.bytes,
    };
    let opts = Options {
        kafka: Config {
            ports: cli.ports.clone(),
            detect: !cli.no_detect,
            max_frame: cli.max_frame,
            ..Config::default()
        },
        tcp: Limits::default(),
    };
    let stdout = io::stdout();
    let mut printer = Printer {
        out: io::BufWriter::new(stdout.lock()),
        views,
        summary_only: !cli.tree && !cli.bytes,
        style,
        first_ts: 0,
        messages: 0,
        malformed: 0,
        lost: 0,
        resyncs: 0,
        retransmissions: 0,
        overlaps: 0,
        unanswered: 0,
        bad_sizes: 0,
        undecoded: 0,
        undecoded_apis: Vec::new(),
        io_error: None,
    };
    let mut any_read = false;
    let mut trouble = false;
    for name in inputs {
        let display = if name == "-" {
            "standard input".to_string()
        } else {
            name.clone()
        };
        if inputs.len() > 1 {
            let _ = writeln!(printer.out, "==> {display} <==");
        }
        let mut health = Health::default();
        let err = if name == "-" {
            pipeline::run(
                BufReader::with_capacity(1 << 20, io::stdin().lock()),
                &opts,
                &mut printer,
                &mut health,
            )
        } else {
            match File::open(name) {
                Ok(f) => pipeline::run(
                    BufReader::with_capacity(1 << 20, f),
                    &opts,
                    &mut printer,
                    &mut health,
                ),
                Err(e) => {
                    let _ = printer.out.flush();
                    eprintln!("kdissect: cannot read {name}: {e}");
                    trouble = true;
                    continue;
                }
            }
        };
        if let Some(e) = printer.io_error.take() {
            if e.kind() == io::ErrorKind::BrokenPipe {
                return ExitCode::SUCCESS;
            }
            return fail(format!("cannot write output: {e}"));
        }
        let _ = printer.out.flush();
        if health.packets > 0 {
            any_read = true;
        }
        if let Some(e) = err {
            trouble = true;
            if health.packets == 0 {
                eprintln!("kdissect: {display}: {e}");
            } else {
                eprintln!(
                    "kdissect: {display}: {e}; the {} packets before it were read",
                    health.packets
                );
            }
        }
        for l in health_report(&display, &health, &printer) {
            eprintln!("kdissect: {l}");
        }
    }
    if let Err(e) = printer.out.flush() {
        if e.kind() == io::ErrorKind::BrokenPipe {
            return ExitCode::SUCCESS;
        }
        return fail(format!("cannot write output: {e}"));
    }
    if !any_read && trouble {
        return ExitCode::from(2);
    }
    if printer.undecoded > 0 {
        eprintln!(
            "kdissect: {} messages of APIs or versions kdissect does not decode yet ({}): header shown, body raw",
            printer.undecoded,
            printer.undecoded_apis.join(", ")
        );
    }
    let damaged = printer.malformed + printer.lost;
    if damaged > 0 || trouble {
        eprintln!(
            "kdissect: {} messages, {} malformed, {} frames lost in gaps, {} resynchronisations, {} retransmissions, {} unanswered requests",
            printer.messages, printer.malformed, printer.lost, printer.resyncs, printer.retransmissions, printer.unanswered
        );
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
