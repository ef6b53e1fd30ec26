//! `kdissect capture.pcap`: the capture path of the command line: views, exchange filters,
//! statistics, progress.

use crate::flags::Cli;
use crate::{fail, input, interrupt, write_failed};
use kdissect::capture::net::{self, linktype_name};
use kdissect::capture::pcap::{CaptureReader, Format};
use kdissect::capture::write::{CaptureWriter, OutFormat};
use kdissect::filter::{
    from_flags, Builtin, ExchangeFields, FieldPath, FieldValue, Fields, Filter, RecordFields,
};
use kdissect::kafka::message::api_display_name;
use kdissect::kafka::names;
use kdissect::kafka::stream::{Config, Notice, Record, RequestInfo, ResyncReason, Sink};
use kdissect::kafka::{Direction, Message};
use kdissect::pipeline::{self, CaptureSink, Health, Options, Stop};
use kdissect::render::json::Meta;
use kdissect::render::stats::Stats;
use kdissect::render::summary::Clock;
use kdissect::render::{self, summary, Style};
use kdissect::tcp::{GapKind, Limits};
use kdissect::tls::{self, TlsConnection};
use std::collections::HashMap;
use std::io::{self, IsTerminal, Read, Write};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Which exchanges to print: the exchange flags (as a filter expression judged on request
/// and response together) and `-Y` (an exchange matches when either half does). Both must
/// hold.
#[derive(Debug, Default)]
struct Selection {
    /// `--api`, `--errors`, `--topic`, `--stream`, `--correlation-id`, `--client-id`.
    flags: Option<Filter>,
    /// `-Y EXPR`.
    display: Option<Filter>,
    /// `--stream` alone lets the notices of its stream through; any other condition hides
    /// notices, which belong to no exchange.
    stream: Option<u32>,
    only_stream: bool,
}

impl Selection {
    /// Compiles the flags and `-Y`; an error says where in which expression.
    fn new(cli: &Cli, apis: &[i16]) -> Result<Selection, String> {
        let text = from_flags(
            apis,
            cli.errors,
            cli.topic.as_deref(),
            cli.stream,
            cli.correlation_id,
            cli.client_id.as_deref(),
        );
        let flags = (!text.is_empty())
            .then(|| Filter::compile(&text))
            .transpose()
            .map_err(|e| format!("the filter flags make an invalid expression: {e}"))?;
        let display = cli
            .display_filter
            .as_deref()
            .map(|y| Filter::compile(y).map_err(|e| filter_error(y, &e)))
            .transpose()?;
        let only_stream = display.is_none()
            && apis.is_empty()
            && cli.correlation_id.is_none()
            && cli.client_id.is_none()
            && !cli.errors
            && cli.topic.is_none();
        Ok(Selection {
            flags,
            display,
            stream: cli.stream,
            only_stream,
        })
    }

    fn active(&self) -> bool {
        self.flags.is_some() || self.display.is_some()
    }

    /// Notices are shown only when no condition but the stream is given.
    fn shows_notice(&self, stream: Option<u32>) -> bool {
        self.only_stream && self.stream.is_none_or(|s| stream == Some(s))
    }

    /// For a request known only by its pairing information (unanswered at the end).
    fn matches_request(&self, stream: u32, r: &RequestInfo) -> bool {
        let f = PairingFields { stream, request: r };
        self.flags.as_ref().is_none_or(|x| x.matches(&f))
            && self.display.as_ref().is_none_or(|x| x.matches(&f))
    }

    fn matches(&self, req: Option<&Record<'_>>, resp: Option<&Record<'_>>) -> bool {
        let q = req.map(RecordFields::new);
        let p = resp.map(RecordFields::new);
        let (q, p) = (q.as_ref(), p.as_ref());
        let flags = || {
            let both =
                ExchangeFields::new(q.map(|f| f as &dyn Fields), p.map(|f| f as &dyn Fields));
            self.flags.as_ref().is_none_or(|x| x.matches(&both))
        };
        let display = || {
            self.display
                .as_ref()
                .is_none_or(|x| q.is_some_and(|f| x.matches(f)) || p.is_some_and(|f| x.matches(f)))
        };
        flags() && display()
    }
}

/// A display filter that does not compile: the message, then the expression with a caret
/// under the column where the problem is.
fn filter_error(expr: &str, e: &kdissect::filter::FilterError) -> String {
    let pad = " ".repeat(e.column.saturating_sub(1));
    format!(
        "-Y: {}
    {expr}
    {pad}^",
        e.message
    )
}

/// What is known of a request that got no answer: its pairing information and stream. Other
/// fields have no values, so tests of them do not hold.
struct PairingFields<'a> {
    stream: u32,
    request: &'a RequestInfo,
}

impl Fields for PairingFields<'_> {
    fn builtin(&self, field: Builtin) -> Vec<FieldValue> {
        let r = self.request;
        match field {
            Builtin::Api => vec![FieldValue::Int(i64::from(r.api_key))],
            Builtin::Version => vec![FieldValue::Int(i64::from(r.api_version))],
            Builtin::Corr => vec![FieldValue::Int(i64::from(r.correlation_id))],
            Builtin::Request => vec![FieldValue::Bool(true)],
            Builtin::Response => vec![FieldValue::Bool(false)],
            Builtin::Stream => vec![FieldValue::Int(i64::from(self.stream))],
            _ => Vec::new(),
        }
    }
    fn path(&self, _: &FieldPath) -> Vec<FieldValue> {
        Vec::new()
    }
}

/// A message kept until its exchange is complete (filters need both halves).
struct Owned {
    stream: u32,
    frame: u64,
    first_frame: u64,
    ts_nanos: i64,
    src: SocketAddr,
    dst: SocketAddr,
    msg: Message,
    bytes: Vec<u8>,
    request: Option<RequestInfo>,
    assumed: bool,
    partial: bool,
}

impl Owned {
    fn of(r: &Record<'_>) -> Owned {
        Owned {
            stream: r.stream,
            frame: r.frame,
            first_frame: r.first_frame,
            ts_nanos: r.ts_nanos,
            src: r.src,
            dst: r.dst,
            msg: r.msg.clone(),
            bytes: r.bytes.to_vec(),
            request: r.request,
            assumed: r.assumed,
            partial: r.partial,
        }
    }

    fn record(&self) -> Record<'_> {
        Record {
            stream: self.stream,
            frame: self.frame,
            first_frame: self.first_frame,
            ts_nanos: self.ts_nanos,
            src: self.src,
            dst: self.dst,
            msg: self.msg.clone(),
            bytes: &self.bytes,
            request: self.request,
            assumed: self.assumed,
            partial: self.partial,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Show {
    summary: bool,
    tree: bool,
    bytes: bool,
    json: bool,
    spans: bool,
}

struct Output<W: Write> {
    out: W,
    show: Show,
    quiet: bool,
    style: Style,
    clock: Clock,
    /// The time of the packet being read (for `-t d`).
    packet_ts: Option<i64>,
    /// Write each message out as soon as it is complete (a terminal, a pipe, -l).
    flush_each: bool,
    /// `-c N`: messages still to show before stopping.
    remaining: Option<u64>,
    /// Frames of the messages shown, for `-w`: (src, dst, first frame, last frame).
    keep: Option<Vec<(SocketAddr, SocketAddr, u64, u64)>>,
    filter: Selection,
    /// Requests waiting for their response, by (stream, correlation id), when filtering.
    waiting: HashMap<(u32, i32), Owned>,
    /// The order they came in; keys already answered are skipped when met.
    waiting_order: std::collections::VecDeque<(u32, i32)>,
    /// Frame bytes held in `waiting`: past `HELD_BYTES` the oldest is let go.
    waiting_bytes: usize,
    stats: Option<Stats>,
    stats_filtered: bool,
    messages: u64,
    malformed: u64,
    lost: u64,
    resyncs: u64,
    retransmissions: u64,
    unanswered: u64,
    undecoded: u64,
    undecoded_apis: Vec<String>,
    /// Bytes skipped while looking for frame boundaries.
    skipped_bytes: u64,
    /// Conflicting overlaps, connections ending inside a frame, impossible size prefixes.
    other_damage: u64,
    io_error: Option<io::Error>,
    /// Broker ports given with -p: TLS connections on them are listed one by one.
    ports: Vec<u16>,
    /// TLS connections reported on Kafka ports.
    tls: u64,
    /// TLS connections on other ports: how many, and the server ports (first few).
    tls_elsewhere: (u64, Vec<u16>),
}

impl<W: Write> Output<W> {
    fn print(&mut self, rec: &Record<'_>) {
        if self.quiet || self.io_error.is_some() {
            return;
        }
        let r = self.write_record(rec).and_then(|()| self.flushed());
        if let Err(e) = r {
            self.io_error = Some(e);
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

    /// Whether `-c` has been reached.
    fn count_reached(&self) -> bool {
        self.remaining == Some(0)
    }

    fn write_record(&mut self, rec: &Record<'_>) -> io::Result<()> {
        if self.show.json {
            let meta = Meta {
                frame: rec.frame,
                ts_nanos: Some(rec.ts_nanos),
                stream: Some(rec.stream),
                src: Some(rec.src.to_string()),
                dst: Some(rec.dst.to_string()),
                request_frame: rec.request.map(|r| r.frame),
                latency_nanos: rec.latency_nanos(),
                assumed: rec.assumed,
                partial: rec.partial,
                input_offset: None,
            };
            let mut line = Vec::with_capacity(rec.bytes.len() * 4 + 256);
            let shown = render::masked(&rec.msg, rec.bytes, self.style);
            render::json::write_message(&mut line, &rec.msg, &shown, &meta, self.show.spans);
            line.push(b'\n');
            return self.out.write_all(&line);
        }
        writeln!(
            self.out,
            "{}",
            summary::line_styled(rec, &self.clock, self.style.color)
        )?;
        if self.show.summary {
            return Ok(());
        }
        let shown = render::masked(&rec.msg, rec.bytes, self.style);
        if self.show.tree {
            render::tree::write(&mut self.out, &rec.msg.root, &shown, self.style)?;
        }
        if self.show.bytes {
            let hidden = render::hidden_spans(&rec.msg, self.style);
            render::bytes::write_masked(&mut self.out, &rec.msg.root, &shown, hidden, self.style)?;
        }
        if let Some(notice) = render::assumed_version_notice(&rec.msg) {
            writeln!(self.out, "{notice}")?;
        }
        for d in rec
            .msg
            .diagnoses
            .iter()
            .skip(usize::from(rec.msg.error.is_none()))
        {
            let m = render::with_hint(&d.message, d.kind);
            writeln!(self.out, "!! malformed at 0x{:04x}: {m}", d.offset)?;
        }
        writeln!(self.out)
    }

    fn count(&mut self, rec: &Record<'_>) {
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
    }

    fn shown(&mut self, rec: &Record<'_>) {
        if self.count_reached() {
            return;
        }
        if let Some(n) = self.remaining.as_mut() {
            *n -= 1;
        }
        if let Some(k) = self.keep.as_mut() {
            k.push((rec.src, rec.dst, rec.first_frame, rec.frame));
        }
        if self.stats_filtered {
            if let Some(s) = self.stats.as_mut() {
                s.message(rec);
            }
        }
        self.print(rec);
        self.clock.prev_shown_ts = Some(rec.ts_nanos);
    }

    /// Prints the requests still waiting (unanswered) that match on their own.
    fn flush_waiting(&mut self) {
        while let Some(key) = self.waiting_order.pop_front() {
            self.let_go(key);
        }
    }

    /// Stops holding a request: shown now if it matches on its own.
    fn let_go(&mut self, key: (u32, i32)) {
        if let Some(o) = self.waiting.remove(&key) {
            self.waiting_bytes = self.waiting_bytes.saturating_sub(o.bytes.len());
            let r = o.record();
            if self.filter.matches(Some(&r), None) {
                self.shown(&r);
            }
        }
    }

    /// Holds a request until its answer (filters judge whole exchanges), within `HELD_BYTES`:
    /// past it the oldest held request is judged on its own, so memory does not follow how
    /// many requests a capture leaves unanswered.
    fn hold(&mut self, key: (u32, i32), rec: &Record<'_>) {
        self.waiting_bytes += rec.bytes.len();
        if let Some(old) = self.waiting.insert(key, Owned::of(rec)) {
            self.waiting_bytes = self.waiting_bytes.saturating_sub(old.bytes.len());
        } else {
            self.waiting_order.push_back(key);
        }
        // Answered keys linger in the order until met: drop them now and then (amortised).
        if self.waiting_order.len() > 2 * self.waiting.len() + 1024 {
            let held = &self.waiting;
            self.waiting_order.retain(|k| held.contains_key(k));
        }
        while self.waiting_bytes > HELD_BYTES {
            let Some(oldest) = self.waiting_order.pop_front() else {
                break;
            };
            self.let_go(oldest);
        }
    }

    fn notice_line(&self, n: &Notice) -> Option<String> {
        let rel = |ts: i64| self.clock.text(ts);
        Some(match n {
            Notice::LostInGap { stream, src, dst, at, present, kind } => {
                let why = match kind {
                    GapKind::Lost(b) => format!("{b} bytes of the stream were not captured"),
                    GapKind::Truncated(b) => format!("the snap length cut {b} bytes off a packet"),
                    GapKind::MidStream => "the capture started inside it".to_string(),
                };
                format!(
                    "{:>6} {} {src} → {dst} [{stream}] !! a Kafka frame was lost in a gap: {why} ({present} of its bytes captured before the gap)",
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
                    "{:>6} {} {src} → {dst} [{stream}] !! {why}: skipped {skipped} bytes to the next frame boundary",
                    at.frame,
                    rel(at.ts_nanos)
                )
            }
            Notice::BadSize { stream, src, at, size } => format!(
                "{:>6} {} {src} [{stream}] !! size prefix {size} cannot start a frame: looking for the next boundary",
                at.frame,
                rel(at.ts_nanos)
            ),
            Notice::EndedInFrame { stream, src, present, want } => format!(
                "{:>6} {:>11} {src} [{stream}] !! the connection ended inside a frame ({present} of {want} bytes)",
                "-", "-"
            ),
            Notice::Unanswered { stream, src, dst, request } => format!(
                "{:>6} {} {src} → {dst} [{stream}] !! unanswered: {} v{} Request corr={} got no response in the capture",
                request.frame,
                rel(request.ts_nanos),
                api_display_name(request.api_key),
                request.api_version,
                request.correlation_id
            ),
            Notice::ConflictingOverlap { stream, at, offset } => format!(
                "{:>6} {} [{stream}] !! a retransmitted segment's bytes differ from the first copy at stream offset {offset}",
                at.frame,
                rel(at.ts_nanos)
            ),
            Notice::PendingDropped { stream, request } => format!(
                "{:>6} {} [{stream}] !! too many requests waiting: stopped waiting for corr={}",
                request.frame,
                rel(request.ts_nanos),
                request.correlation_id
            ),
            Notice::Retransmission { .. } | Notice::Connection { .. } => return None,
        })
    }
}

fn notice_stream(n: &Notice) -> Option<u32> {
    match n {
        Notice::LostInGap { stream, .. }
        | Notice::Resync { stream, .. }
        | Notice::BadSize { stream, .. }
        | Notice::EndedInFrame { stream, .. }
        | Notice::Unanswered { stream, .. }
        | Notice::Retransmission { stream, .. }
        | Notice::ConflictingOverlap { stream, .. }
        | Notice::Connection { stream, .. }
        | Notice::PendingDropped { stream, .. } => Some(*stream),
    }
}

impl<W: Write> Sink for Output<W> {
    fn message(&mut self, rec: &Record<'_>) {
        self.count(rec);
        if !self.stats_filtered {
            if let Some(s) = self.stats.as_mut() {
                s.message(rec);
            }
        }
        if !self.filter.active() {
            self.shown(rec);
            return;
        }
        match (rec.msg.direction, rec.msg.correlation_id) {
            (Direction::Request, Some(c)) => {
                self.hold((rec.stream, c), rec);
            }
            (Direction::Response, Some(c)) if rec.request.is_some() => {
                let key = (rec.stream, c);
                let req = self.waiting.remove(&key);
                if let Some(r) = &req {
                    // Its place in the order is skipped when met.
                    self.waiting_bytes = self.waiting_bytes.saturating_sub(r.bytes.len());
                }
                let req_rec = req.as_ref().map(Owned::record);
                if self.filter.matches(req_rec.as_ref(), Some(rec)) {
                    if let Some(r) = &req_rec {
                        self.shown(r);
                    }
                    self.shown(rec);
                }
            }
            _ => {
                let (q, p) = match rec.msg.direction {
                    Direction::Request => (Some(rec), None),
                    Direction::Response => (None, Some(rec)),
                };
                if self.filter.matches(q, p) {
                    self.shown(rec);
                }
            }
        }
    }

    fn notice(&mut self, n: &Notice) {
        match n {
            Notice::LostInGap { .. } => self.lost += 1,
            Notice::Resync { skipped, .. } => {
                self.resyncs += 1;
                self.skipped_bytes += *skipped as u64;
            }
            Notice::Retransmission { .. } => self.retransmissions += 1,
            Notice::Unanswered { .. } => self.unanswered += 1,
            Notice::ConflictingOverlap { .. }
            | Notice::EndedInFrame { .. }
            | Notice::BadSize { .. } => self.other_damage += 1,
            _ => {}
        }
        let counted = !self.stats_filtered
            || match n {
                Notice::Unanswered {
                    stream, request, ..
                } => self.filter.matches_request(*stream, request),
                other => self.filter.shows_notice(notice_stream(other)),
            };
        if let (Some(s), true) = (self.stats.as_mut(), counted) {
            s.notice(n);
        }
        if self.quiet || self.io_error.is_some() || !self.filter.shows_notice(notice_stream(n)) {
            return;
        }
        if let Some(line) = self.notice_line(n) {
            let line = if self.style.color {
                use owo_colors::OwoColorize;
                line.red().to_string()
            } else {
                line
            };
            // NDJSON on stdout holds only messages; notices go to stderr there.
            let r = if self.show.json {
                writeln!(io::stderr(), "kdissect: {}", line.trim_start())
            } else {
                writeln!(self.out, "{line}").and_then(|()| self.flushed())
            };
            if let Err(e) = r {
                self.io_error = Some(e);
            }
        }
    }
}

impl<W: Write> CaptureSink for Output<W> {
    fn first_packet(&mut self, ts_nanos: i64, precision: u8) {
        self.clock.first_ts = ts_nanos;
        self.clock.precision = precision;
    }

    fn packet(&mut self, ts_nanos: i64) {
        self.clock.prev_packet_ts = self.packet_ts.replace(ts_nanos);
    }

    fn stop(&self) -> Stop {
        if self.io_error.is_some() || self.count_reached() {
            Stop::Now
        } else if interrupt::received().is_some() {
            Stop::Finish
        } else {
            Stop::Go
        }
    }

    /// One line per TLS connection on a Kafka port, when it ends; those on other ports are
    /// only counted (a capture may hold unrelated HTTPS).
    fn tls(&mut self, t: &TlsConnection) {
        let on_kafka_port = [t.client.port(), t.server.port()]
            .iter()
            .any(|p| self.ports.contains(p));
        if !on_kafka_port {
            self.tls_elsewhere.0 += 1;
            let port = t.server.port();
            if self.tls_elsewhere.1.len() < 5 && !self.tls_elsewhere.1.contains(&port) {
                self.tls_elsewhere.1.push(port);
            }
            return;
        }
        self.tls += 1;
        if self.quiet || self.io_error.is_some() || !self.filter.shows_notice(Some(t.stream)) {
            return;
        }
        let line = tls_line(t, &self.clock);
        let r = if self.show.json {
            writeln!(io::stderr(), "kdissect: {}", line.trim_start())
        } else {
            writeln!(self.out, "{line}").and_then(|()| self.flushed())
        };
        if let Err(e) = r {
            self.io_error = Some(e);
        }
    }
}

/// `frame time client → server [stream] TLS 1.3 connection (SNI "x"): N bytes encrypted ...`
fn tls_line(t: &TlsConnection, clock: &Clock) -> String {
    let version = match (t.version, t.negotiated) {
        (Some(v), true) => tls::version_name(v),
        (Some(v), false) => format!("{} offered (no ServerHello seen)", tls::version_name(v)),
        (None, _) => "handshake not seen".to_string(),
    };
    let mut about = Vec::new();
    if let Some(sni) = &t.sni {
        about.push(format!("SNI {}", render::value::quote(sni)));
    }
    if !t.alpn.is_empty() {
        about.push(format!("ALPN {}", t.alpn.join(",")));
    }
    let about = if about.is_empty() {
        String::new()
    } else {
        format!(" ({})", about.join(", "))
    };
    let lost = if t.lost_bytes > 0 {
        format!(", {} bytes not captured", t.lost_bytes)
    } else {
        String::new()
    };
    format!(
        "{:>6} {} {} → {} [{}] TLS connection, {version}{about}: {} bytes of Kafka traffic encrypted in {} records{lost}; cannot be decoded without the session keys",
        t.first.frame,
        clock.text(t.first.ts_nanos),
        t.client,
        t.server,
        t.stream,
        t.encrypted_bytes,
        t.records
    )
}

/// `-D`: the interfaces a live capture can use.
#[cfg(feature = "live")]
pub fn list_interfaces() -> ExitCode {
    match kdissect::capture::live::interfaces() {
        Ok(list) => {
            for (i, (name, desc)) in list.iter().enumerate() {
                match desc {
                    Some(d) => println!("{}. {name} ({d})", i + 1),
                    None => println!("{}. {name}", i + 1),
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(format!("cannot list interfaces: {e}")),
    }
}

#[cfg(not(feature = "live"))]
pub fn list_interfaces() -> ExitCode {
    fail("this kdissect was built without live capture: build it with `cargo install --path . --features live` (needs libpcap, Debian's libpcap-dev)")
}

/// The terminal's width when the output is one (COLUMNS first, as shells set it), for
/// fitting the --stats tables.
fn terminal_width() -> Option<u16> {
    if !io::stdout().is_terminal() {
        return None;
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .or_else(|| comfy_table::Table::new().width())
        .filter(|w| *w >= 40)
}

/// What reading one input gave.
struct Pass {
    display: String,
    health: Health,
    err: Option<kdissect::capture::pcap::CaptureError>,
    /// Where `-w` reads the packets again from.
    reread: Option<String>,
}

/// Why an input gave nothing: it could not be read (go on with the next), or the run must
/// stop (a usage problem).
enum Failure {
    Input(String),
    Fatal(String),
}

/// Reads a capture file or standard input.
fn read_file<W: Write>(
    o: &mut Output<W>,
    cli: &Cli,
    opts: &Options,
    name: &str,
    spool: &std::path::Path,
    cutting: bool,
    banner: bool,
) -> Result<Pass, Failure> {
    let display = if name == "-" {
        "standard input".to_string()
    } else {
        name.to_string()
    };
    let opened =
        input::open(name).map_err(|e| Failure::Input(format!("cannot read {display}: {e}")))?;
    // Messages appear as they complete where someone is waiting for them: on a terminal, from
    // a pipe, or when asked; over files large buffers are faster.
    o.flush_each = cli.line_buffered || !opened.regular || io::stdout().is_terminal();
    // -w reads the input twice: standard input and pipes are copied aside the first time.
    let copy = cutting && (name == "-" || !opened.regular);
    let opened = if copy {
        opened
            .spool_to(spool)
            .map_err(|e| Failure::Fatal(format!("cannot copy {display} aside for -w: {e}")))?
    } else {
        opened
    };
    if banner && !cli.json && !cli.quiet {
        let _ = writeln!(o.out, "==> {display} <==");
    }
    let progress_ok = !cli.no_progress && !cli.json && io::stderr().is_terminal();
    let mut health = Health::default();
    let err = if progress_ok && opened.size >= PROGRESS_MIN && opened.compression.is_none() {
        let p = Progress {
            inner: opened.reader,
            read: 0,
            total: opened.size,
            last: Instant::now(),
            drawn: false,
        };
        pipeline::run(p, opts, o, &mut health)
    } else {
        pipeline::run(opened.reader, opts, o, &mut health)
    };
    let reread = cutting.then(|| {
        if copy {
            spool.to_string_lossy().into_owned()
        } else {
            name.to_string()
        }
    });
    Ok(Pass {
        display,
        health,
        err,
        reread,
    })
}

/// The capture filter for the Kafka ports: `tcp port 9092 or tcp port 9094`.
fn port_filter(ports: &[u16]) -> String {
    ports
        .iter()
        .map(|p| format!("tcp port {p}"))
        .collect::<Vec<_>>()
        .join(" or ")
}

/// When `-a duration:N` ends a live capture.
fn deadline(cli: &Cli) -> Option<Instant> {
    cli.autostop.map(|d| Instant::now() + d)
}

#[cfg(feature = "live")]
fn read_live<W: Write>(
    o: &mut Output<W>,
    cli: &Cli,
    opts: &Options,
    spool: &std::path::Path,
    cutting: bool,
) -> Result<Pass, Failure> {
    use kdissect::capture::live::{LiveCapture, LiveOptions};
    let live = LiveOptions {
        interfaces: cli.interfaces.clone(),
        filter: cli
            .filter
            .clone()
            .unwrap_or_else(|| port_filter(&cli.ports)),
        promisc: cli.promisc,
    };
    let display = format!("live capture on {}", cli.interfaces.join(", "));
    let until = deadline(cli);
    let stop = Box::new(move || {
        interrupt::received().is_some() || until.is_some_and(|t| Instant::now() >= t)
    });
    let mut cap = LiveCapture::start(&live, stop).map_err(|e| {
        Failure::Fatal(if e.permission {
            format!("{e}: capturing needs CAP_NET_RAW: run as root, or once `sudo setcap cap_net_raw,cap_net_admin=eip $(command -v kdissect)`")
        } else {
            e.to_string()
        })
    })?;
    o.flush_each = true;
    if !cli.quiet {
        eprintln!(
            "kdissect: capturing on {} ({})",
            cli.interfaces.join(", "),
            live.filter
        );
    }
    let mut health = Health::default();
    let err = if cutting {
        let file = std::fs::File::create(spool)
            .map_err(|e| Failure::Fatal(format!("cannot keep packets aside for -w: {e}")))?;
        let mut tee = Spooled {
            inner: &mut cap,
            copy: CaptureWriter::new(io::BufWriter::new(file), OutFormat::PcapNg),
        };
        let err = pipeline::run_source(&mut tee, opts, o, &mut health);
        let Spooled { copy, .. } = tee;
        copy.finish()
            .map_err(|e| Failure::Fatal(format!("cannot keep packets aside for -w: {e}")))?;
        err
    } else {
        pipeline::run_source(&mut cap, opts, o, &mut health)
    };
    Ok(Pass {
        display,
        health,
        err,
        reread: cutting.then(|| spool.to_string_lossy().into_owned()),
    })
}

#[cfg(not(feature = "live"))]
fn read_live<W: Write>(
    _o: &mut Output<W>,
    _cli: &Cli,
    _opts: &Options,
    _spool: &std::path::Path,
    _cutting: bool,
) -> Result<Pass, Failure> {
    let _ = (deadline, port_filter);
    Err(Failure::Fatal(
        "this kdissect was built without live capture: build it with `cargo install --path . --features live` (needs libpcap, Debian's libpcap-dev), or pipe tcpdump into it: `tcpdump -i IFACE -U -w - port 9092 | kdissect -`".into(),
    ))
}

/// A live capture that also keeps every packet aside, for `-w`'s second pass.
#[cfg(feature = "live")]
struct Spooled<'a> {
    inner: &'a mut kdissect::capture::live::LiveCapture,
    copy: CaptureWriter<io::BufWriter<std::fs::File>>,
}

#[cfg(feature = "live")]
impl pipeline::PacketSource for Spooled<'_> {
    fn next_packet(
        &mut self,
    ) -> Result<Option<kdissect::capture::pcap::Packet<'_>>, kdissect::capture::pcap::CaptureError>
    {
        let p = self.inner.next_packet()?;
        if let Some(p) = &p {
            self.copy
                .write(p)
                .map_err(kdissect::capture::pcap::CaptureError::Io)?;
        }
        Ok(p)
    }
}

/// `-w`: the packets of the messages shown, written after each input has been read, in a
/// second pass over the file (or over a copy spooled while reading a pipe), so that they keep
/// the capture's order and bytes.
struct Cut {
    path: std::path::PathBuf,
    writer: Option<CaptureWriter<io::BufWriter<std::fs::File>>>,
    messages: u64,
}

/// The packets a message came in: its direction and frames `first..=last` of that direction.
type Kept = (SocketAddr, SocketAddr, u64, u64);

impl Cut {
    /// Writes the packets of `keep` from `source`.
    fn write_input(&mut self, source: &str, keep: Vec<Kept>) -> Result<(), String> {
        self.messages += keep.len() as u64;
        let mut ranges: HashMap<(SocketAddr, SocketAddr), Vec<(u64, u64)>> = HashMap::new();
        for (src, dst, first, last) in keep {
            ranges.entry((src, dst)).or_default().push((first, last));
        }
        let ranges: HashMap<_, Ranges> = ranges
            .into_iter()
            .map(|(k, v)| (k, Ranges::new(v)))
            .collect();
        let opened = input::open(source).map_err(|e| format!("cannot read {source} again: {e}"))?;
        let mut reader = CaptureReader::new(opened.reader).map_err(|e| e.to_string())?;
        if self.writer.is_none() {
            let format = match reader.format {
                Format::PcapNg => OutFormat::PcapNg,
                Format::Pcap { .. } => OutFormat::Pcap,
            };
            let file = std::fs::File::create(&self.path)
                .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
            self.writer = Some(CaptureWriter::new(io::BufWriter::new(file), format));
        }
        let Some(w) = self.writer.as_mut() else {
            return Ok(());
        };
        while let Some(p) = reader.next_packet().map_err(|e| e.to_string())? {
            let keep = net::tcp_segment(p.linktype, p.data, p.orig_len).is_ok_and(|seg| {
                !seg.payload.is_empty()
                    && ranges
                        .get(&(seg.src, seg.dst))
                        .is_some_and(|r| r.contains(p.number))
            });
            if keep {
                w.write(&p)
                    .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<String, String> {
        let (written, skipped) = match self.writer {
            Some(w) => {
                let (n, s) = (w.written, w.skipped);
                w.finish()
                    .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
                (n, s)
            }
            None => (0, 0),
        };
        let mut line = format!(
            "{written} packets of {} messages written to {}",
            self.messages,
            self.path.display()
        );
        if skipped > 0 {
            line.push_str(&format!(
                " ({skipped} of another link type left out: a pcap file holds one)"
            ));
        }
        Ok(line)
    }
}

/// Frame ranges, some overlapping, asked whether they contain a frame.
struct Ranges {
    /// Sorted by first frame, with the largest last frame up to each entry.
    spans: Vec<(u64, u64, u64)>,
}

impl Ranges {
    fn new(mut v: Vec<(u64, u64)>) -> Ranges {
        v.sort_unstable();
        let mut max = 0;
        let spans = v
            .into_iter()
            .map(|(a, b)| {
                max = max.max(b);
                (a, b, max)
            })
            .collect();
        Ranges { spans }
    }

    fn contains(&self, n: u64) -> bool {
        let upto = self.spans.partition_point(|s| s.0 <= n);
        self.spans
            .get(..upto)
            .unwrap_or_default()
            .iter()
            .rev()
            .take_while(|s| s.2 >= n)
            .any(|s| s.1 >= n)
    }
}

/// The command line's advice for a file that is not a capture: undo a compression kdissect
/// does not read itself, or read hex text with its own flag.
fn capture_hint(e: &kdissect::capture::pcap::CaptureError) -> String {
    use kdissect::capture::pcap::{compressed, CaptureError};
    match e {
        CaptureError::NotACapture { magic } => match compressed(magic) {
            Some((_, tool)) => format!(": decompress it first, e.g. `{tool} FILE | kdissect -`"),
            None => "; for hex text use --hex".into(),
        },
        _ => String::new(),
    }
}

/// Counts bytes read and, on a terminal, draws a progress line on stderr.
struct Progress<R: Read> {
    inner: R,
    read: u64,
    total: u64,
    last: Instant,
    drawn: bool,
}

impl<R: Read> Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.last.elapsed() >= Duration::from_millis(200) {
            self.last = Instant::now();
            let pct = (self.read * 100)
                .checked_div(self.total)
                .unwrap_or(0)
                .min(100);
            let width = 30u64;
            let filled = (pct * width / 100) as usize;
            eprint!(
                "\r[{}{}] {pct:>3}% {} / {} MB",
                "#".repeat(filled),
                " ".repeat(width as usize - filled.min(width as usize)),
                self.read >> 20,
                self.total >> 20
            );
            self.drawn = true;
        }
        Ok(n)
    }
}

impl<R: Read> Drop for Progress<R> {
    fn drop(&mut self) {
        if self.drawn {
            eprint!("\r{}\r", " ".repeat(60));
        }
    }
}

/// Frame bytes of requests held for the exchange filters (their decoded trees cost a few
/// times more): past it the oldest held request is judged on its own.
const HELD_BYTES: usize = 16 * 1024 * 1024;

/// Files larger than this get a progress bar (on a terminal, outside --json).
const PROGRESS_MIN: u64 = 64 * 1024 * 1024;

fn health_report(name: &str, h: &Health, messages: u64, ports: &[u16]) -> Vec<String> {
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
    if h.buffer_limit_hits > 0 {
        lines.push(format!(
            "{name}: {} times a direction buffered more than --max-buffered bytes waiting for a hole to fill (out of order, or an answer held for the end of its question); the hole was declared lost",
            h.buffer_limit_hits
        ));
    }
    if h.buffer_total_hits > 0 {
        lines.push(format!(
            "{name}: {} times the connections together buffered more than --max-buffered-total bytes waiting for holes to fill; the direction holding the most had its holes declared lost",
            h.buffer_total_hits
        ));
    }
    if h.evicted_connections > 0 {
        lines.push(format!(
            "{name}: {} connections dropped to stay under --max-connections (raise it to follow them)",
            h.evicted_connections
        ));
    }
    if h.packets > 0 && messages == 0 {
        let p: Vec<String> = ports.iter().map(u16::to_string).collect();
        lines.push(format!(
            "{name}: no Kafka traffic found in {} packets (broker ports {}, other ports by detection): give the broker's port with -p",
            h.packets,
            p.join(", ")
        ));
    }
    lines
}

fn parse_apis(list: &[String]) -> Result<Vec<i16>, String> {
    list.iter()
        .filter(|s| !s.trim().is_empty())
        .map(|s| names::api_key_from_str(s).ok_or_else(|| format!("--api {s:?} is neither a number nor a Kafka API name (try metadata, 3, describe-cluster)")))
        .collect()
}

pub fn run(cli: &Cli, inputs: &[String], style: Style) -> ExitCode {
    let apis = match parse_apis(&cli.api) {
        Ok(a) => a,
        Err(e) => return fail(e),
    };
    let filter = match Selection::new(cli, &apis) {
        Ok(f) => f,
        Err(e) => return fail(e),
    };
    let opts = Options {
        kafka: Config {
            ports: cli.ports.clone(),
            detect: !cli.no_detect,
            max_frame: cli.max_frame,
            decode: cli.decode_options(),
            max_pending: cli.max_pending.max(1),
        },
        tcp: Limits {
            max_buffered: cli.max_buffered,
            max_buffered_total: cli.max_buffered_total,
            max_connections: cli.max_connections.max(1),
            ..Limits::default()
        },
    };
    let stdout = io::stdout();
    let mut o = Output {
        out: io::BufWriter::with_capacity(1 << 16, stdout.lock()),
        show: Show {
            summary: !cli.tree && !cli.bytes,
            tree: cli.tree,
            bytes: cli.bytes,
            json: cli.json,
            spans: cli.json_spans,
        },
        quiet: cli.quiet,
        style,
        clock: Clock {
            format: cli.time_format,
            precision: 6,
            ..Clock::default()
        },
        packet_ts: None,
        flush_each: false,
        remaining: cli.count,
        keep: None,
        filter,
        waiting: HashMap::new(),
        waiting_order: std::collections::VecDeque::new(),
        waiting_bytes: 0,
        stats: cli.stats.then(Stats::default),
        stats_filtered: !cli.stats_all,
        messages: 0,
        malformed: 0,
        lost: 0,
        resyncs: 0,
        retransmissions: 0,
        unanswered: 0,
        undecoded: 0,
        undecoded_apis: Vec::new(),
        skipped_bytes: 0,
        other_damage: 0,
        io_error: None,
        ports: cli.ports.clone(),
        tls: 0,
        tls_elsewhere: (0, Vec::new()),
    };
    interrupt::install();
    let mut cut = cli.write.as_ref().map(|path| Cut {
        path: path.clone(),
        writer: None,
        messages: 0,
    });
    if cut.is_some() {
        o.keep = Some(Vec::new());
    }
    let mut any_read = false;
    let mut trouble = false;
    let sources: Vec<Option<&String>> = if cli.interfaces.is_empty() {
        inputs.iter().map(Some).collect()
    } else {
        vec![None]
    };
    for (index, source) in sources.into_iter().enumerate() {
        let spool =
            std::env::temp_dir().join(format!("kdissect-{}-{index}.spool", std::process::id()));
        let multiple = inputs.len() > 1 && cli.interfaces.is_empty();
        let pass = match source {
            Some(name) => read_file(&mut o, cli, &opts, name, &spool, cut.is_some(), multiple),
            None => read_live(&mut o, cli, &opts, &spool, cut.is_some()),
        };
        let Pass {
            display,
            health,
            err,
            reread,
        } = match pass {
            Ok(p) => p,
            Err(Failure::Input(e)) => {
                let _ = o.out.flush();
                eprintln!("kdissect: {e}");
                trouble = true;
                continue;
            }
            Err(Failure::Fatal(e)) => {
                let _ = o.out.flush();
                return fail(e);
            }
        };
        // An interrupt ends the input wherever it is: a record cut there is not damage.
        let err = err.filter(|_| interrupt::received().is_none());
        // Requests held for a filter are shown unless -c already said enough.
        if !o.count_reached() {
            o.flush_waiting();
        }
        if let Some(c) = cut.as_mut() {
            let keep = o.keep.replace(Vec::new()).unwrap_or_default();
            let again = reread.clone().unwrap_or_default();
            let r = c.write_input(&again, keep);
            if source.is_none() || again == spool.to_string_lossy() {
                let _ = std::fs::remove_file(&spool);
            }
            if let Err(e) = r {
                let _ = o.out.flush();
                return fail(e);
            }
        }
        if let Some(s) = o.stats.as_mut() {
            s.health.packets += health.packets;
            s.health.truncated_packets += health.truncated_packets;
        }
        if let Some(e) = o.io_error.take() {
            return write_failed(&e);
        }
        let _ = o.out.flush();
        if health.packets > 0 {
            any_read = true;
        }
        if let Some(e) = err {
            trouble = true;
            if health.packets == 0 {
                eprintln!("kdissect: {display}: {e}{}", capture_hint(&e));
            } else {
                eprintln!(
                    "kdissect: {display}: {e}; the {} packets before it were read",
                    health.packets
                );
            }
        }
        // TLS connections are traffic found, even if none of it could be decoded.
        let plain = o.messages + o.tls + o.tls_elsewhere.0;
        for l in health_report(&display, &health, plain, &cli.ports) {
            eprintln!("kdissect: {l}");
        }
        if o.count_reached() || interrupt::received().is_some() {
            break;
        }
    }
    if let Some(s) = &o.stats {
        let r = if cli.json {
            let j = serde_json::json!({ "stats": s.to_json() });
            writeln!(o.out, "{j}")
        } else {
            let sep = if cli.quiet { "" } else { "\n" };
            write!(o.out, "{sep}{}", s.tables_within(terminal_width()))
        };
        if let Err(e) = r {
            return write_failed(&e);
        }
    }
    if let Err(e) = o.out.flush() {
        return write_failed(&e);
    }
    if let Some(c) = cut {
        match c.finish() {
            Ok(line) => eprintln!("kdissect: {line}"),
            Err(e) => return fail(e),
        }
    }
    if !any_read && trouble {
        return ExitCode::from(2);
    }
    if o.tls_elsewhere.0 > 0 {
        let ports: Vec<String> = o.tls_elsewhere.1.iter().map(u16::to_string).collect();
        eprintln!(
            "kdissect: {} TLS connections on ports not given with -p (server ports {}): encrypted, not listed; -p PORT lists them",
            o.tls_elsewhere.0,
            ports.join(", ")
        );
    }
    if o.undecoded > 0 {
        eprintln!(
            "kdissect: {} messages of APIs or versions kdissect does not decode yet ({}): header shown, body raw",
            o.undecoded,
            o.undecoded_apis.join(", ")
        );
    }
    // Damage: anything the capture holds that could not be decoded as a whole message.
    let damaged = o.malformed + o.lost + o.skipped_bytes + o.other_damage;
    if damaged > 0 || trouble {
        eprintln!(
            "kdissect: {} messages, {} malformed, {} frames lost in gaps, {} bytes skipped to resynchronise, {} other stream damage, {} retransmissions, {} unanswered requests",
            o.messages, o.malformed, o.lost, o.skipped_bytes, o.other_damage, o.retransmissions, o.unanswered
        );
    }
    if let Some(sig) = interrupt::received() {
        return ExitCode::from(interrupt::exit_status(sig));
    }
    if damaged > 0 || trouble {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
