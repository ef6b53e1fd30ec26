//! `kdissect capture.pcap`: the capture path of the command line: views, exchange filters,
//! statistics, progress.

use crate::flags::{Live, Mode, Settings};
use crate::sinks::{Kept, Output, Printer, TlsKept};
use crate::{fail, input, interrupt, write_failed};
use kdissect::capture::cut::{self, LeftOut, Span};
use kdissect::capture::net::{self, linktype_name};
use kdissect::capture::pcap::CaptureReader;
use kdissect::capture::write::{CaptureWriter, OutFormat};
use kdissect::pipeline::{self, Health};
use kdissect::render::summary::Clock;
use kdissect::render::words::count;
use std::collections::HashMap;
use std::io::{self, IsTerminal, Read, Write};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

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
    s: &Settings,
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
    let opened = input::open(name, s.max_zstd_window)
        .map_err(|e| Failure::Input(format!("cannot read {display}: {e}")))?;
    // Messages appear as they complete where someone is waiting for them: on a terminal, from
    // a pipe, or when asked; over files large buffers are faster.
    o.shown.printer.flush_each = s.line_buffered || !opened.regular || io::stdout().is_terminal();
    // -w reads the input twice: standard input and pipes are copied aside the first time.
    let copy = cutting && (name == "-" || !opened.regular);
    let opened = if copy {
        opened
            .spool_to(spool)
            .map_err(|e| Failure::Fatal(format!("cannot copy {display} aside for -w: {e}")))?
    } else {
        opened
    };
    if banner {
        o.shown.printer.banner(&display);
    }
    // Each file has its own frames and streams: with several, what is shown names its file.
    o.shown.printer.file = banner.then(|| display.clone());
    if let Some(st) = o.stats_mut() {
        st.next_file(&display);
    }
    let progress_ok = s.progress;
    let mut health = Health::default();
    let err = if progress_ok && opened.size >= PROGRESS_MIN && opened.compression.is_none() {
        let p = Progress {
            inner: opened.reader,
            read: 0,
            total: opened.size,
            last: Instant::now(),
            drawn: false,
        };
        pipeline::run(p, &s.options, o, &mut health).err()
    } else {
        pipeline::run(opened.reader, &s.options, o, &mut health).err()
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

/// When `-a duration:N` ends a live capture.
fn deadline(live: &Live) -> Option<Instant> {
    live.autostop.map(|d| Instant::now() + d)
}

#[cfg(feature = "live")]
fn read_live<W: Write>(
    o: &mut Output<W>,
    s: &Settings,
    want: &Live,
    spool: &std::path::Path,
    cutting: bool,
) -> Result<Pass, Failure> {
    use kdissect::capture::live::{LiveCapture, LiveOptions};
    let live = LiveOptions {
        interfaces: want.interfaces.clone(),
        filter: want.filter.clone(),
        promisc: want.promisc,
    };
    let display = format!("live capture on {}", want.interfaces.join(", "));
    let until = deadline(want);
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
    o.shown.printer.flush_each = true;
    if !s.quiet {
        eprintln!(
            "kdissect: capturing on {} ({})",
            want.interfaces.join(", "),
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
        let err = pipeline::run_source(&mut tee, &s.options, o, &mut health).err();
        let Spooled { copy, .. } = tee;
        copy.finish()
            .map_err(|e| Failure::Fatal(format!("cannot keep packets aside for -w: {e}")))?;
        err
    } else {
        pipeline::run_source(&mut cap, &s.options, o, &mut health).err()
    };
    let counts = cap.finish();
    let _ = o.shown.printer.out.flush();
    for l in live_report(&counts, &live.filter) {
        eprintln!("{l}");
    }
    Ok(Pass {
        display,
        health,
        err,
        reread: cutting.then(|| spool.to_string_lossy().into_owned()),
    })
}

/// What libpcap counted, as tcpdump prints it at the end of a capture; and, when no packet
/// passed the filter, which option reaches a broker elsewhere.
#[cfg(feature = "live")]
fn live_report(c: &kdissect::capture::live::LiveStats, filter: &str) -> Vec<String> {
    let packets = |n: u64| if n == 1 { "packet" } else { "packets" };
    let mut lines = vec![
        format!("{} {} captured", c.captured, packets(c.captured)),
        format!("{} {} received by filter", c.received, packets(c.received)),
        format!("{} {} dropped by kernel", c.dropped, packets(c.dropped)),
    ];
    if c.if_dropped > 0 {
        lines.push(format!(
            "{} {} dropped by interface",
            c.if_dropped,
            packets(c.if_dropped)
        ));
    }
    if c.unknown > 0 {
        lines.push(format!(
            "kdissect: {} interfaces gave no counts (their capture ended on an error)",
            c.unknown
        ));
    }
    if c.captured == 0 && c.received == 0 {
        lines.push(format!(
            "kdissect: no packet passed the capture filter ({filter}): a broker on another port needs -p PORT, or a filter of your own -f FILTER"
        ));
    }
    lines
}

#[cfg(not(feature = "live"))]
fn read_live<W: Write>(
    _o: &mut Output<W>,
    _s: &Settings,
    _want: &Live,
    _spool: &std::path::Path,
    _cutting: bool,
) -> Result<Pass, Failure> {
    let _ = deadline;
    Err(Failure::Fatal(
        "this kdissect was built without live capture: build it with `cargo install --path . --features live` (needs libpcap, Debian's libpcap-dev), or pipe tcpdump into it: `tcpdump -i IFACE -U --immediate-mode -w - port 9092 | kdissect -`".into(),
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
/// the capture's order and bytes. In pcapng, packet comments note where packets of a kept
/// connection were left out (`capture::cut`), so that the cut reads back whole.
struct Cut {
    path: std::path::PathBuf,
    format: OutFormat,
    writer: Option<CaptureWriter<io::BufWriter<std::fs::File>>>,
    messages: u64,
    /// `--max-zstd-window`, for reading the input again.
    max_zstd_window: u64,
    /// `--inject-secrets`: the secrets of the TLS connections written go in the file.
    inject_secrets: bool,
    /// Topic names noted in the file, and those past the bound not noted.
    names_noted: u64,
    names_not_noted: u64,
}

/// The topic names a cut notes for one input (`capture::cut::TopicNamed`), and how many more
/// it had than it notes.
#[derive(Default)]
struct CutNames {
    notes: Vec<cut::TopicNamed>,
    more: usize,
}

impl CutNames {
    /// The notes' text, for the first packet written: the names come before any message.
    fn comments(&self) -> Vec<String> {
        let mut out: Vec<String> = self.notes.iter().map(cut::TopicNamed::text).collect();
        if self.more > 0 {
            out.push(cut::names_not_noted(self.more));
        }
        out
    }
}

/// Directions of decrypted TLS connections some kept message belongs to: all their packets
/// are written (the handshake and every record are needed to decrypt any of them), and
/// their secrets, for `--inject-secrets`.
fn whole_tls(
    tls: &TlsKept,
    ranges: &HashMap<(SocketAddr, SocketAddr), Ranges>,
) -> (std::collections::HashSet<(SocketAddr, SocketAddr)>, String) {
    let mut whole = std::collections::HashSet::new();
    let mut secrets = String::new();
    for (c, s, keyed) in tls {
        if ranges.contains_key(&(*c, *s)) || ranges.contains_key(&(*s, *c)) {
            whole.insert((*c, *s));
            whole.insert((*s, *c));
            if let Some((random, sec)) = keyed {
                secrets.push_str(&kdissect::tls::keylog::lines(random, sec));
            }
        }
    }
    (whole, secrets)
}

impl Cut {
    /// Writes the packets of `keep` from `source`.
    // Why this is long: one pass over the input deciding packet by packet, with the notes.
    fn write_input(
        &mut self,
        source: &str,
        keep: Vec<Kept>,
        tls: TlsKept,
        names: CutNames,
    ) -> Result<(), String> {
        self.messages += keep.len() as u64;
        // The names go on the first packet written, before any message that gives an id.
        let mut first = names.comments();
        let mut notes = LeftOutNotes::new(&keep);
        let mut ranges: HashMap<(SocketAddr, SocketAddr), Vec<(u64, u64)>> = HashMap::new();
        for (src, dst, first, last, _) in keep {
            ranges.entry((src, dst)).or_default().push((first, last));
        }
        let ranges: HashMap<_, Ranges> = ranges
            .into_iter()
            .map(|(k, v)| (k, Ranges::new(v)))
            .collect();
        let opened = input::open(source, self.max_zstd_window)
            .map_err(|e| format!("cannot read {source} again: {e}"))?;
        let mut reader = CaptureReader::new(opened.reader).map_err(|e| e.to_string())?;
        if self.writer.is_none() {
            let file = std::fs::File::create(&self.path)
                .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
            self.writer = Some(CaptureWriter::new(io::BufWriter::new(file), self.format));
        }
        let Some(w) = self.writer.as_mut() else {
            return Ok(());
        };
        let written_before = w.written;
        let (whole, secrets) = whole_tls(&tls, &ranges);
        if self.inject_secrets {
            w.write_secrets(secrets.as_bytes())
                .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
        }
        while let Some(p) = reader.next_packet().map_err(|e| e.to_string())? {
            let Ok(seg) = net::tcp_segment(p.linktype, p.data, p.orig_len) else {
                continue;
            };
            notes.seen(&seg);
            if whole.contains(&(seg.src, seg.dst)) {
                w.write_with(&p, &std::mem::take(&mut first))
                    .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
                continue;
            }
            let kept = |d| ranges.get(&d).is_some_and(|r| r.contains(p.number));
            let of_kept = ranges.contains_key(&(seg.src, seg.dst))
                || ranges.contains_key(&(seg.dst, seg.src));
            if seg.payload.is_empty() {
                // The close or reset of a kept connection is kept: read back, a frame it cut
                // off ends with its connection, as in the capture, not with the cut; and an
                // answer acknowledging a FIN finds it there (else it looks captured before
                // the end of its question, and waits).
                let ends = (seg.rst || seg.fin) && !seg.syn;
                if ends && of_kept {
                    let comments = first_then(&mut first, notes.take(&seg, p.number));
                    w.write_with(&p, &comments)
                        .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
                }
                continue;
            }
            if !kept((seg.src, seg.dst)) {
                if of_kept {
                    notes.left_out(&seg);
                }
                continue;
            }
            let comments = first_then(&mut first, notes.take(&seg, p.number));
            w.write_with(&p, &comments)
                .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
        }
        if w.written > written_before {
            let all = (names.notes.len() + names.more) as u64;
            match self.format {
                OutFormat::PcapNg => {
                    self.names_noted += names.notes.len() as u64;
                    self.names_not_noted += names.more as u64;
                }
                // A classic pcap has no place for notes.
                OutFormat::Pcap => self.names_not_noted += all,
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
            "{} of {} written to {}",
            count(written, "packet"),
            count(self.messages, "message"),
            self.path.display()
        );
        if self.names_noted > 0 {
            line.push_str(&format!(
                ", with the names of {}",
                count(self.names_noted, "topic id")
            ));
        }
        match (self.format, self.names_not_noted) {
            (_, 0) => {}
            (OutFormat::Pcap, n) => line.push_str(&format!(
                " ({} the messages give not noted: a pcap file has no place for notes)",
                count(n, "topic name")
            )),
            (OutFormat::PcapNg, n) => line.push_str(&format!(
                " ({n} more not noted: at most {} an input)",
                cut::MAX_TOPIC_NOTES
            )),
        }
        if skipped > 0 {
            line.push_str(&format!(
                " ({skipped} of another link type left out: a pcap file holds one)"
            ));
        }
        Ok(line)
    }
}

/// The comments of a packet written: the topic names first when it is the input's first.
fn first_then(first: &mut Vec<String>, comments: Vec<String>) -> Vec<String> {
    if first.is_empty() {
        return comments;
    }
    let mut all = std::mem::take(first);
    all.extend(comments);
    all
}

/// Where a cut leaves packets of its connections out, as notes for the packets it keeps: the
/// bytes of a direction left out since its last kept packet go on the next kept packet of
/// the connection (either direction: an acknowledgement may point past them), and the last
/// kept packet of a direction whose last message was whole says that what follows it was left
/// out (it may hold the start of a message not kept).
struct LeftOutNotes {
    /// Per direction: what was left out since the last note.
    pending: HashMap<(SocketAddr, SocketAddr), Pending>,
    /// Per direction: its last kept packet, when the message it ends was whole.
    tails: HashMap<(SocketAddr, SocketAddr), u64>,
    /// Per direction: where its stream begins (after the SYN, else the first payload), until
    /// its first kept packet says so.
    starts: HashMap<(SocketAddr, SocketAddr), u32>,
    /// Directions whose first kept packet was written.
    started: std::collections::HashSet<(SocketAddr, SocketAddr)>,
}

impl LeftOutNotes {
    fn new(keep: &[Kept]) -> LeftOutNotes {
        let mut last: HashMap<(SocketAddr, SocketAddr), (u64, bool)> = HashMap::new();
        for &(src, dst, _, frame, partial) in keep {
            let e = last.entry((src, dst)).or_insert((frame, partial));
            if frame > e.0 {
                *e = (frame, partial);
            } else if frame == e.0 {
                e.1 |= partial;
            }
        }
        let tails = last
            .into_iter()
            .filter(|(_, (_, partial))| !partial)
            .map(|(d, (frame, _))| (d, frame))
            .collect();
        LeftOutNotes {
            pending: HashMap::new(),
            tails,
            starts: HashMap::new(),
            started: Default::default(),
        }
    }

    /// Any packet of the input: where its direction's stream begins, if not known yet.
    fn seen(&mut self, seg: &net::TcpSegment<'_>) {
        let d = (seg.src, seg.dst);
        if self.started.contains(&d) {
            return;
        }
        if seg.syn {
            self.starts.insert(d, seg.seq.wrapping_add(1));
        } else if !seg.payload.is_empty() {
            self.starts.entry(d).or_insert(seg.seq);
        }
    }

    /// A packet of a kept connection that is not kept.
    fn left_out(&mut self, seg: &net::TcpSegment<'_>) {
        let p = self.pending.entry((seg.src, seg.dst)).or_default();
        p.packets += 1;
        p.bytes += seg.payload.len() as u64;
        p.add(seg.seq, seg.seq.wrapping_add(seg.payload.len() as u32));
    }

    /// The comments of a kept packet.
    fn take(&mut self, seg: &net::TcpSegment<'_>, frame: u64) -> Vec<String> {
        let mut out = Vec::new();
        // The first kept packet of a direction, or of its connection: where the streams
        // begin, when that is before it (an answer may come first and acknowledge them).
        for (src, dst) in [(seg.src, seg.dst), (seg.dst, seg.src)] {
            let own = src == seg.src;
            if self.started.contains(&(src, dst)) {
                continue;
            }
            let start = self.starts.remove(&(src, dst));
            if own || start.is_some() {
                self.started.insert((src, dst));
            }
            if let Some(start) = start.filter(|s| !own || *s != seg.seq) {
                out.push(
                    LeftOut {
                        src,
                        dst,
                        what: Span::Start(start),
                    }
                    .text(0, 0),
                );
            }
        }
        for (src, dst) in [(seg.src, seg.dst), (seg.dst, seg.src)] {
            if let Some(p) = self.pending.remove(&(src, dst)) {
                let what = Span::Seq(p.ranges);
                out.push(LeftOut { src, dst, what }.text(p.packets, p.bytes));
            }
        }
        if self.tails.get(&(seg.src, seg.dst)) == Some(&frame) {
            let (src, dst, what) = (seg.src, seg.dst, Span::After);
            out.push(LeftOut { src, dst, what }.text(0, 0));
        }
        out
    }
}

/// The packets of a direction left out since its last note, and their sequence ranges.
#[derive(Default)]
struct Pending {
    packets: u64,
    bytes: u64,
    ranges: Vec<(u32, u32)>,
}

impl Pending {
    /// Adds `start..end`, joining a range it touches (packets mostly follow each other); past
    /// `MAX_RANGES` the last range grows to cover it.
    fn add(&mut self, start: u32, end: u32) {
        let d = |a: u32, b: u32| i64::from(a.wrapping_sub(b) as i32);
        if let Some(r) = self
            .ranges
            .iter_mut()
            .find(|r| d(start, r.1) <= 0 && d(end, r.0) >= 0)
        {
            if d(start, r.0) < 0 {
                r.0 = start;
            }
            if d(end, r.1) > 0 {
                r.1 = end;
            }
        } else if self.ranges.len() < cut::MAX_RANGES {
            self.ranges.push((start, end));
        } else if let Some(r) = self.ranges.last_mut() {
            if d(end, r.1) > 0 {
                r.1 = end;
            }
            if d(start, r.0) < 0 {
                r.0 = start;
            }
        }
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

/// Files larger than this get a progress bar (on a terminal, outside --json).
const PROGRESS_MIN: u64 = 64 * 1024 * 1024;

/// The hint when packets came but no Kafka: which ports were tried, whether other ports
/// were looked at (not with `--no-detect`), and for a live capture the filter option.
fn no_kafka_line(name: &str, packets: u64, ports: &[u16], detect: bool, live: bool) -> String {
    let p: Vec<String> = ports.iter().map(u16::to_string).collect();
    let noun = if p.len() == 1 { "port" } else { "ports" };
    let others = if detect {
        ", other ports by detection"
    } else {
        "; --no-detect: no other port looked at"
    };
    // Detection needs a connection's first request: a live capture started inside the
    // connections sees none, and the port must be given.
    let live = if live {
        ", or a capture filter with -f FILTER"
    } else {
        ""
    };
    format!(
        "{name}: no Kafka traffic found in {} (broker {noun} {}{others}): give the broker's port with -p PORT{live}",
        count(packets, "packet"),
        p.join(", ")
    )
}

/// What stderr says about one input (`live`: the interfaces).
fn health_report(
    name: &str,
    h: &Health,
    messages: u64,
    ports: &[u16],
    detect: bool,
    live: bool,
) -> Vec<String> {
    let mut lines = Vec::new();
    for (lt, n) in &h.unsupported_linktypes {
        lines.push(format!(
            "{name}: {} of {} skipped: this link type is not supported",
            count(*n, "packet"),
            linktype_name(*lt)
        ));
    }
    for (frame, why) in &h.bad_packets {
        lines.push(format!("{name}: frame {frame}: {why}"));
    }
    if h.bad_packet_count > h.bad_packets.len() as u64 {
        lines.push(format!(
            "{name}: {} more with bad headers",
            count(h.bad_packet_count - h.bad_packets.len() as u64, "packet")
        ));
    }
    for w in &h.warnings {
        lines.push(format!("{name}: {w}"));
    }
    if h.buffer_limit_hits > 0 {
        lines.push(format!(
            "{name}: {} a direction buffered more than --max-buffered bytes waiting for a hole to fill (out of order, or an answer held for the end of its question); the hole was declared lost",
            count(h.buffer_limit_hits, "time")
        ));
    }
    if h.buffer_total_hits > 0 {
        lines.push(format!(
            "{name}: {} the connections together buffered more than --max-buffered-total bytes waiting for holes to fill; the direction holding the most had its holes declared lost",
            count(h.buffer_total_hits, "time")
        ));
    }
    if h.tls_search_limit_hits > 0 {
        lines.push(format!(
            "{name}: {} of TLS connections no longer decrypted: after lost records, no record authenticated before the connection's search passed --max-tls-search",
            count(h.tls_search_limit_hits, "direction")
        ));
    }
    if h.tls_search_total_hits > 0 {
        lines.push(format!(
            "{name}: {} of TLS connections no longer decrypted: after lost records, the searches of all connections together passed --max-tls-search-total",
            count(h.tls_search_total_hits, "direction")
        ));
    }
    if h.evicted_connections > 0 {
        lines.push(format!(
            "{name}: {} dropped to stay under --max-connections (raise it to follow them)",
            count(h.evicted_connections, "connection")
        ));
    }
    if h.packets > 0 && messages == 0 {
        lines.push(no_kafka_line(name, h.packets, ports, detect, live));
    }
    lines
}

/// `--report` without a view asked for (`--stats`, `-V`, `-x`, `--json`, `-T`, `-e`): the page
/// is the output, and no message line is printed (as `-q`).
fn report_alone(s: &Settings) -> bool {
    s.report.is_some()
        && !s.print_stats
        && s.show.summary
        && !s.show.json
        && s.show.fields.is_none()
        && s.show.tshark.is_none()
}

/// Reads every input (or the live interfaces) through the pipeline into the sinks, then
/// writes the statistics, the `-w` file and the closing report.
pub fn run(mut s: Settings) -> ExitCode {
    let stdout = io::stdout();
    let clock = Clock {
        format: s.time_format,
        precision: 6,
        ..Clock::default()
    };
    let out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let printer = Printer::new(
        out,
        s.show.clone(),
        s.quiet || report_alone(&s),
        s.style,
        clock,
    );
    if let Some(path) = &s.report {
        // Refused before reading, as tshark refuses -w: not after a whole capture was decoded.
        if let Err(e) = std::fs::File::create(path) {
            eprintln!("kdissect: cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    let mut o = Output::new(&mut s, printer);
    o.shown.printer.start();
    interrupt::install();
    let mut cut = s.write.as_ref().map(|path| Cut {
        path: path.clone(),
        format: s.write_format,
        writer: None,
        messages: 0,
        max_zstd_window: s.max_zstd_window,
        inject_secrets: s.inject_secrets,
        names_noted: 0,
        names_not_noted: 0,
    });
    let mut any_read = false;
    let mut trouble = false;
    let live = match &s.mode {
        Mode::Live(l) => Some(l),
        _ => None,
    };
    let sources: Vec<Option<&String>> = match live {
        None => s.inputs.iter().map(Some).collect(),
        Some(_) => vec![None],
    };
    let multiple = s.inputs.len() > 1 && live.is_none();
    for (index, source) in sources.into_iter().enumerate() {
        let spool =
            std::env::temp_dir().join(format!("kdissect-{}-{index}.spool", std::process::id()));
        let pass = match (source, live) {
            (Some(name), _) => read_file(&mut o, &s, name, &spool, cut.is_some(), multiple),
            (None, Some(l)) => read_live(&mut o, &s, l, &spool, cut.is_some()),
            (None, None) => continue,
        };
        let pass = match pass {
            Ok(p) => p,
            Err(Failure::Input(e)) => {
                let _ = o.shown.printer.out.flush();
                eprintln!("kdissect: {e}");
                trouble = true;
                continue;
            }
            Err(Failure::Fatal(e)) => {
                let _ = o.shown.printer.out.flush();
                return fail(e);
            }
        };
        match end_of_input(&mut o, &s, pass, cut.as_mut(), &spool, source.is_none()) {
            Ok(End { read, damaged }) => {
                any_read |= read;
                trouble |= damaged;
            }
            Err(code) => return code,
        }
        if o.shown.count_reached() || interrupt::received().is_some() {
            break;
        }
    }
    finish(o, &s, cut, any_read, trouble)
}

/// What one input came to.
struct End {
    /// Packets were read from it.
    read: bool,
    /// It could not be read to its end.
    damaged: bool,
}

/// After an input: held requests shown, `-w`'s second pass, the input's health on stderr.
fn end_of_input<W: Write>(
    o: &mut Output<W>,
    s: &Settings,
    pass: Pass,
    cut: Option<&mut Cut>,
    spool: &std::path::Path,
    live: bool,
) -> Result<End, ExitCode> {
    let Pass {
        display,
        health,
        err,
        reread,
    } = pass;
    // An interrupt ends the input wherever it is: a record cut there is not damage.
    let err = err.filter(|_| interrupt::received().is_none());
    // Requests held for a filter are shown unless -c already said enough.
    if !o.shown.count_reached() {
        o.flush_held();
    }
    if let Some(c) = cut {
        let keep = o.shown.keep.replace(Vec::new()).unwrap_or_default();
        let again = reread.unwrap_or_default();
        let tls = std::mem::take(&mut o.tls_kept);
        let names = cut_names(o);
        let r = c.write_input(&again, keep, tls, names);
        if live || again == spool.to_string_lossy() {
            let _ = std::fs::remove_file(spool);
        }
        if let Err(e) = r {
            let _ = o.shown.printer.out.flush();
            return Err(fail(e));
        }
    }
    if let Some(st) = o.stats_mut() {
        st.packets += health.packets;
        st.truncated_packets += health.truncated_packets;
    }
    if let Some(e) = o.shown.printer.io_error.take() {
        return Err(write_failed(&e));
    }
    let _ = o.shown.printer.out.flush();
    if let Some(e) = &err {
        if health.packets == 0 {
            eprintln!("kdissect: {display}: {e}{}", capture_hint(e));
        } else {
            eprintln!(
                "kdissect: {display}: {e}; the {} before it {} read",
                count(health.packets, "packet"),
                if health.packets == 1 { "was" } else { "were" }
            );
        }
    }
    // TLS connections are traffic found, even if none of it could be decoded.
    let detect = s.options.kafka.detect;
    for l in health_report(&display, &health, o.tally.traffic(), &s.ports, detect, live) {
        eprintln!("kdissect: {l}");
    }
    Ok(End {
        read: health.packets > 0,
        damaged: err.is_some(),
    })
}

/// The topic names the cut of the input just read notes: those of the ids its kept messages
/// give, as the run learnt them (the analyses too: a batch fetched under an id that a Produce
/// sent under its name).
fn cut_names<W: Write>(o: &mut Output<W>) -> CutNames {
    let Some(t) = o.shown.cut_topics.as_mut() else {
        return CutNames::default();
    };
    for st in [o.all_stats.as_ref(), o.shown.stats.as_ref()]
        .into_iter()
        .flatten()
    {
        if let Some(a) = st.analyses.as_ref() {
            let learnt = a.learnt_names();
            t.learn_pairs(learnt.iter().map(|(id, name)| (id, name.as_str())));
        }
    }
    let (notes, more) = t.take_notes();
    CutNames { notes, more }
}

/// After all inputs: the statistics, the `-w` file, the closing report and the exit status.
fn finish<W: Write>(
    mut o: Output<W>,
    s: &Settings,
    cut: Option<Cut>,
    any_read: bool,
    trouble: bool,
) -> ExitCode {
    if let Err(e) = write_stats(&mut o, s) {
        return write_failed(&e);
    }
    if let Err(e) = o.shown.printer.out.flush() {
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
    for l in o.tally.report(trouble) {
        eprintln!("kdissect: {l}");
    }
    if let Some(sig) = interrupt::received() {
        return ExitCode::from(interrupt::exit_status(sig));
    }
    o.tally.exit_code(trouble)
}

/// The `--report` page, and on stderr where it went and how big it is.
fn write_report(
    st: &kdissect::render::stats::Stats,
    s: &Settings,
    path: &std::path::Path,
) -> io::Result<()> {
    use kdissect::render::report;
    let stats = st.out();
    let analyses = st.analyses.as_ref().map(|a| a.out());
    let page = report::html(&report::Report {
        inputs: &s.inputs,
        stats: &stats,
        analyses: analyses.as_ref(),
    });
    std::fs::write(path, &page)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))?;
    eprintln!(
        "kdissect: wrote report to {} ({} KB)",
        path.display(),
        page.len().div_ceil(1024)
    );
    Ok(())
}

/// The `--stats` tables (or one JSON object) after the messages.
fn write_stats<W: Write>(o: &mut Output<W>, s: &Settings) -> io::Result<()> {
    let Some(st) = o.all_stats.as_ref().or(o.shown.stats.as_ref()) else {
        return Ok(());
    };
    let out = &mut o.shown.printer.out;
    if let Some(path) = &s.report {
        write_report(st, s, path)?;
    }
    if !s.print_stats {
        return Ok(());
    }
    if s.show.json {
        let j = serde_json::json!({ "stats": st.to_json_all() });
        writeln!(out, "{j}")
    } else {
        let sep = if s.quiet { "" } else { "\n" };
        let layout = kdissect::render::stats::Layout {
            width: Some(s.table_width),
            connections: s.stats_connections,
            rows: s.stats_rows,
        };
        write!(out, "{sep}{}", st.tables_with(&layout))
    }
}
