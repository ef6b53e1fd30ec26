//! What the capture run does with the pipeline's messages and notices, as small sinks
//! composed in one direction: every message is tallied (exit status) and, with
//! `--stats-all`, counted; the exchange filter passes on what is shown; what is shown is
//! counted against `-c`, kept for `-w`, counted by `--stats` and printed.

mod cut_topics;
mod order;
mod printer;
mod select;
mod tally;
pub(crate) mod titled;

pub(crate) use cut_topics::CutTopics;
pub(crate) use printer::Printer;
pub(crate) use select::{Exchanges, Part, Selection};
pub(crate) use tally::{Judging, Tally};

use crate::flags::{Settings, StatsScope};
use crate::interrupt;
use kdissect::analyses::Analyses;
use kdissect::filter::Window;
use kdissect::kafka::stream::{Notice, Record, Sink};
use kdissect::pipeline::{CaptureSink, Stop};
use kdissect::render::stats::Stats;
use kdissect::tls::{TlsConnection, TlsNotice};
use std::io::Write;
use std::net::SocketAddr;

/// The packets a message shown came in, for `-w`: its direction (src, dst), frames
/// `first..=last` of that direction, and whether only its start was captured.
pub(crate) type Kept = (SocketAddr, SocketAddr, u64, u64, bool);

/// Where the messages the filter keeps go.
pub(crate) struct Shown<W: Write> {
    pub(crate) printer: Printer<W>,
    /// `--stats` over what is shown (the default scope).
    pub(crate) stats: Option<Stats>,
    /// `-c N`: messages (exchanges, under an exchange filter) still to show before stopping.
    remaining: Option<u64>,
    /// The messages shown, when `-w` writes them out.
    pub(crate) keep: Option<Vec<Kept>>,
    /// With `-w`: the topic names the run learnt, and the ids the messages kept give.
    pub(crate) cut_topics: Option<CutTopics>,
}

impl<W: Write> Shown<W> {
    fn take(&mut self, rec: &Record<'_>, part: Part) {
        if self.count_reached() {
            return;
        }
        // A request shown with its response counts with it: -c stops after whole exchanges.
        if let (Some(n), true) = (self.remaining.as_mut(), part.completes) {
            *n -= 1;
        }
        if let Some(k) = self.keep.as_mut() {
            k.push((
                rec.src,
                rec.dst,
                rec.first_frame,
                rec.last_frame,
                rec.partial,
            ));
        }
        if let Some(t) = self.cut_topics.as_mut() {
            t.keep(rec);
        }
        if let Some(s) = self.stats.as_mut() {
            s.message(rec);
        }
        self.printer.message(rec, part);
    }

    /// Whether `-c` has been reached.
    pub(crate) fn count_reached(&self) -> bool {
        self.remaining == Some(0)
    }
}

pub(crate) struct Output<W: Write> {
    pub(crate) tally: Tally,
    /// `--stats-all`: statistics over every message.
    pub(crate) all_stats: Option<Stats>,
    pub(crate) exchanges: Exchanges,
    /// What is shown, put in frame order.
    order: order::InOrder,
    pub(crate) shown: Shown<W>,
    /// The time of the packet being read (for `-t d`).
    packet_ts: Option<i64>,
    /// Broker ports given with -p: TLS connections on them are listed one by one.
    ports: Vec<u16>,
    /// `--since` and `--until`.
    window: Window,
    /// With -w: the decrypted TLS connections of the input being read.
    pub(crate) tls_kept: TlsKept,
    /// The width the `--stats` tables fit.
    table_width: u16,
    /// Live with `--stats --interval`: the interval, and the end of the current one.
    every: Option<(i64, Option<i64>)>,
}

/// The decrypted TLS connections of one input, for `-w`: (client, server, the ClientHello
/// random and secrets).
pub(crate) type TlsKept = Vec<(SocketAddr, SocketAddr, Option<kdissect::tls::KeyedRandom>)>;

impl<W: Write> Output<W> {
    pub(crate) fn new(s: &mut Settings, printer: Printer<W>) -> Output<W> {
        let stats = |scope| {
            (s.stats == Some(scope)).then(|| {
                let mut st = Stats::default();
                st.analyses = s
                    .analyses
                    .map(|w| Analyses::new(w, s.interval, s.analyses_limits));
                st
            })
        };
        let live = matches!(s.mode, crate::flags::Mode::Live(_));
        let hex = matches!(s.mode, crate::flags::Mode::Hex(_));
        Output {
            tally: Tally::new(
                if hex { Judging::Hex } else { Judging::Capture },
                !s.options.keys.is_empty(),
            ),
            all_stats: stats(StatsScope::All),
            exchanges: Exchanges::new(Selection::new(std::mem::take(&mut s.choice))),
            order: order::InOrder::default(),
            shown: Shown {
                printer,
                stats: stats(StatsScope::Shown),
                remaining: s.count,
                keep: s.write.is_some().then(Vec::new),
                cut_topics: s.write.is_some().then(CutTopics::default),
            },
            packet_ts: None,
            ports: s.ports.clone(),
            window: s.window,
            tls_kept: Vec::new(),
            table_width: s.table_width,
            every: s
                .interval
                .filter(|_| live && s.print_stats && !s.show.json)
                .map(|i| (i, None)),
        }
    }

    /// Whether a time is inside `--since`/`--until` (every time is, without them).
    fn in_window(&self, ts: i64) -> bool {
        self.window.contains(ts, self.exchanges.selection.origin)
    }

    /// The statistics, whichever their scope.
    pub(crate) fn stats_mut(&mut self) -> Option<&mut Stats> {
        self.all_stats.as_mut().or(self.shown.stats.as_mut())
    }

    /// At the end of an input: the requests held for the filter that match on their own,
    /// in frame order with what waits.
    pub(crate) fn flush_held(&mut self) {
        let (shown, order) = (&mut self.shown, &mut self.order);
        self.exchanges
            .flush(&mut |r, part| order.message(r, part, shown));
        self.order.finished(&mut self.shown);
    }
}

impl<W: Write> Sink for Output<W> {
    fn message(&mut self, rec: &Record<'_>) {
        self.tally.message(rec);
        if let Some(s) = self.all_stats.as_mut() {
            s.message(rec);
        }
        // A name learnt from a message left out of a cut is noted in it all the same.
        if let Some(t) = self.shown.cut_topics.as_mut() {
            t.learn(rec);
        }
        if !self.in_window(rec.ts_nanos) {
            return;
        }
        let (shown, order) = (&mut self.shown, &mut self.order);
        self.exchanges
            .message(rec, &mut |r, part| order.message(r, part, shown));
        // A request newly held, or let go unseen, moves what later lines wait for.
        self.order
            .held_from(self.exchanges.oldest_held(), &mut self.shown);
    }

    fn notice(&mut self, n: &Notice) {
        self.tally.notice(n);
        if let Some(s) = self.all_stats.as_mut() {
            s.notice(n);
        }
        let in_window = notice_time(n).is_none_or(|t| self.in_window(t));
        let selection = &self.exchanges.selection;
        if let (Some(s), true) = (
            self.shown.stats.as_mut(),
            in_window && selection.counts_notice(n),
        ) {
            s.notice(n);
        }
        if in_window && selection.shows_notice(notice_stream(n)) {
            self.order.notice(n, &mut self.shown);
        }
    }
}

impl<W: Write> CaptureSink for Output<W> {
    fn first_packet(&mut self, ts_nanos: i64, precision: u8) {
        let clock = &mut self.shown.printer.clock;
        clock.first_ts = ts_nanos;
        clock.precision = precision;
        self.exchanges.selection.origin = Some(ts_nanos);
        // A relative and an absolute bound can only be compared once the input's start is
        // known: an empty window is said, not left to print nothing.
        if let Some(why) = self.window.empty(Some(ts_nanos)) {
            eprintln!("kdissect: {why}");
        }
    }

    /// The names a cut read noted: the analyses learn them (the Kafka layer did), and a cut
    /// of it notes them again.
    fn topics_named(&mut self, topics: &[kdissect::capture::cut::TopicNamed]) {
        let pairs: Vec<([u8; 16], String)> =
            topics.iter().map(|t| (t.id, t.name.clone())).collect();
        for st in [self.all_stats.as_mut(), self.shown.stats.as_mut()]
            .into_iter()
            .flatten()
        {
            if let Some(a) = st.analyses.as_mut() {
                a.topic_names(&pairs);
            }
        }
        if let Some(t) = self.shown.cut_topics.as_mut() {
            t.learn_pairs(topics.iter().map(|t| (&t.id, t.name.as_str())));
        }
    }

    fn packet(&mut self, ts_nanos: i64) {
        self.shown.printer.clock.prev_packet_ts = self.packet_ts.replace(ts_nanos);
        self.interval_passed(ts_nanos);
    }

    fn stop(&self) -> Stop {
        if self.shown.printer.io_error.is_some() || self.shown.count_reached() {
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
        self.tally.tls(t, on_kafka_port);
        // Counted in the statistics too, whatever the port (the connection was found TLS).
        if let Some(s) = self.all_stats.as_mut() {
            s.tls(t);
        }
        let selected = self.exchanges.selection.shows_notice(Some(t.stream));
        if let (Some(s), true) = (self.shown.stats.as_mut(), selected) {
            s.tls(t);
        }
        if self.shown.keep.is_some() && t.keys == kdissect::tls::Keys::Decrypted {
            self.tls_kept.push((t.client, t.server, t.secrets));
        }
        if on_kafka_port && self.exchanges.selection.shows_notice(Some(t.stream)) {
            self.order.tls(t, &mut self.shown);
        }
    }

    /// Problems inside decrypted TLS connections, shown with the connection's messages.
    fn tls_notice(&mut self, n: &TlsNotice) {
        if self.exchanges.selection.shows_notice(Some(n.stream)) {
            self.order.tls_notice(n, &mut self.shown);
        }
    }

    fn closed(&mut self, stream: u32) {
        let (shown, order) = (&mut self.shown, &mut self.order);
        self.exchanges
            .closed(stream, &mut |r, part| order.message(r, part, shown));
        self.order
            .held_from(self.exchanges.oldest_held(), &mut self.shown);
    }

    fn settled(&mut self, oldest_kept: Option<u64>, now: u64) {
        self.order.settled(oldest_kept, now, &mut self.shown);
    }

    fn finishing(&mut self) {
        self.order.finishing();
    }

    fn in_frame_order(&mut self) {
        self.order.in_frame_order();
    }

    fn finished(&mut self) {
        // The requests still held (unanswered) are judged alone and take their place.
        self.flush_held();
    }
}

impl<W: Write> Output<W> {
    /// Live with `--stats --interval`: the statistics so far, once an interval has passed.
    fn interval_passed(&mut self, ts: i64) {
        let Some((every, end)) = self.every.as_mut() else {
            return;
        };
        let due = end.get_or_insert(ts + *every);
        if ts < *due {
            return;
        }
        while *due <= ts {
            *due += *every;
        }
        let Some(st) = self.all_stats.as_ref().or(self.shown.stats.as_ref()) else {
            return;
        };
        let layout = kdissect::render::stats::Layout {
            width: Some(self.table_width),
            ..Default::default()
        };
        let out = &mut self.shown.printer.out;
        let _ = write!(out, "\n{}", st.tables_with(&layout));
        let _ = out.flush();
    }
}

/// The capture time of what a notice tells, when it has one (for `--since`/`--until`).
fn notice_time(n: &Notice) -> Option<i64> {
    match n {
        Notice::LostInGap { at, .. }
        | Notice::Resync { at, .. }
        | Notice::BadSize { at, .. }
        | Notice::Retransmission { at, .. }
        | Notice::ConflictingOverlap { at, .. }
        | Notice::FrameDropped { at, .. } => Some(at.ts_nanos),
        Notice::Unanswered { request, .. } | Notice::PendingDropped { request, .. } => {
            Some(request.ts_nanos)
        }
        Notice::EndedInFrame { .. }
        | Notice::Connection { .. }
        | Notice::PickedUp { .. }
        | Notice::InputSkipped { .. } => None,
    }
}

/// The TCP stream a notice belongs to.
pub(crate) fn notice_stream(n: &Notice) -> Option<u32> {
    match n {
        Notice::InputSkipped { .. } => None,
        Notice::LostInGap { stream, .. }
        | Notice::Resync { stream, .. }
        | Notice::BadSize { stream, .. }
        | Notice::EndedInFrame { stream, .. }
        | Notice::Unanswered { stream, .. }
        | Notice::Retransmission { stream, .. }
        | Notice::ConflictingOverlap { stream, .. }
        | Notice::Connection { stream, .. }
        | Notice::PickedUp { stream }
        | Notice::PendingDropped { stream, .. }
        | Notice::FrameDropped { stream, .. } => Some(*stream),
    }
}
