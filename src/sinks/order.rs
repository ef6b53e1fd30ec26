//! Frame order for what is printed. Reassembly hands on some bytes later than the packets
//! they came in: segments out of order wait for the hole before them, and an answer captured
//! before the end of its question (two taps merged) is held until the question is complete.
//! The messages and notices those bytes make are dated by their own packets, so they would
//! print after later frames. Here they wait until nothing older can come (reassembly says
//! how old the oldest piece it keeps is), within a window of packets and a memory budget, and
//! go out in frame order. The exchange filter holds a request until its answer decides
//! whether it is shown: what is dated after the oldest request held waits for that verdict
//! too, so that a filtered view prints in frame order as tshark's does. When reassembly keeps
//! nothing and no request is held, as in most unfiltered runs, nothing waits and nothing is
//! copied. At the end of an input, what the flushed connections, the requests still held and
//! the list of unanswered requests tell is put in frame order too.

use super::select::{Held, Part};
use super::Shown;
use kdissect::kafka::stream::{Notice, Record};
use kdissect::tls::{TlsConnection, TlsNotice};
use std::collections::BTreeMap;
use std::io::Write;

/// Packets a line waits at most for older ones: past it, it goes out whatever reassembly
/// still keeps (a hole no acknowledgement declares lost may wait for the connection's end).
/// Reassembly's own reorder window is 16 packets of one connection; many connections
/// interleave.
pub(crate) const ORDER_WINDOW: u64 = 4096;

/// Memory of the lines waiting (their frames and trees, as the exchange filter counts them):
/// past it the oldest go out.
pub(crate) const ORDER_MEMORY: usize = 16 * 1024 * 1024;

/// Memory a waiting notice or TLS line is counted for.
const LINE_COST: usize = 256;

/// A line waiting for its place.
enum Line {
    /// A message, how it belongs to what `-c` counts, and the time of the packet before its
    /// own (for `-t d`).
    Message(Box<Held>, Part, Option<i64>),
    Notice(Notice),
    Tls(Box<TlsConnection>),
    TlsNotice(TlsNotice),
}

#[derive(Default)]
pub(crate) struct InOrder {
    /// Waiting lines by (frame, order of arrival).
    waiting: BTreeMap<(u64, u64), (Line, usize)>,
    arrivals: u64,
    /// No line still to come is dated before it (but for the late ones that cannot wait).
    floor: u64,
    /// The packet being read: a line waits at most `ORDER_WINDOW` packets.
    now: u64,
    /// The oldest request the exchange filter holds for its answer: lines dated after it
    /// wait for its verdict.
    held: Option<u64>,
    /// The input is being flushed: everything waits until it is done.
    finishing: bool,
    /// What comes now comes in frame order (the list of unanswered requests): a line goes
    /// out once what waits before it has, rather than wait itself.
    in_frame_order: bool,
    cost: usize,
}

impl InOrder {
    /// Lines dated up to this frame go out: nothing older can come, but for a request the
    /// filter holds (within the window of packets).
    fn ready_up_to(&self) -> u64 {
        let before_held = self.held.map_or(u64::MAX, |h| h.saturating_sub(1));
        self.floor
            .min(before_held)
            .max(self.now.saturating_sub(ORDER_WINDOW))
    }

    /// Whether a line dated by `frame` goes out at once: nothing older can come, and nothing
    /// older waits.
    fn goes_now(&self, frame: u64) -> bool {
        !self.finishing
            && frame <= self.ready_up_to()
            && self
                .waiting
                .first_key_value()
                .is_none_or(|(&(f, _), _)| f > frame)
    }

    /// The exchange filter now holds requests from frame `held` on: what waited for an
    /// older one goes out up to there.
    pub(crate) fn held_from<W: Write>(&mut self, held: Option<u64>, out: &mut Shown<W>) {
        if self.held != held {
            self.held = held;
            if !self.finishing {
                self.send_up_to(self.ready_up_to(), out);
            }
        }
    }

    pub(crate) fn message<W: Write>(&mut self, rec: &Record<'_>, part: Part, out: &mut Shown<W>) {
        // The filter has judged the requests before this record (a request it held may be
        // the record itself): it takes its place first, then what waited for it goes out.
        self.held = part.held_from;
        if self.goes_now(rec.frame) {
            out.take(rec, part);
        } else {
            let cost = Held::cost_of(rec);
            let prev = out.printer.clock.prev_packet_ts;
            self.wait(
                rec.frame,
                Line::Message(Box::new(Held::of(rec, cost)), part, prev),
                cost,
                out,
            );
        }
        if !self.finishing {
            self.send_up_to(self.ready_up_to(), out);
        }
    }

    pub(crate) fn notice<W: Write>(&mut self, n: &Notice, out: &mut Shown<W>) {
        match n.frame() {
            Some(f) if !self.goes_now(f) => self.wait(f, Line::Notice(n.clone()), LINE_COST, out),
            _ => out.printer.notice(n),
        }
    }

    pub(crate) fn tls<W: Write>(&mut self, t: &TlsConnection, out: &mut Shown<W>) {
        if self.goes_now(t.told.frame) {
            return out.printer.tls(t);
        }
        self.wait(t.told.frame, Line::Tls(Box::new(t.clone())), LINE_COST, out);
    }

    pub(crate) fn tls_notice<W: Write>(&mut self, n: &TlsNotice, out: &mut Shown<W>) {
        if self.goes_now(n.at.frame) {
            return out.printer.tls_notice(n);
        }
        self.wait(n.at.frame, Line::TlsNotice(n.clone()), LINE_COST, out);
    }

    fn wait<W: Write>(&mut self, frame: u64, line: Line, cost: usize, out: &mut Shown<W>) {
        if self.in_frame_order {
            // Nothing still to come is dated before it: it would wait only to go out after
            // what waits up to its frame, and before the rest. (Waiting, the lines of the
            // unanswered requests took about 250 bytes each, up to the 16 MiB budget.)
            self.send_up_to(frame, out);
            return Self::send(line, out);
        }
        self.waiting.insert((frame, self.arrivals), (line, cost));
        self.arrivals += 1;
        self.cost = self.cost.saturating_add(cost);
        while self.cost > ORDER_MEMORY {
            if !self.send_first(out) {
                break;
            }
        }
    }

    /// Reassembly keeps nothing older than `oldest_kept` before packet `now`: what is dated
    /// up to there goes out (and what waited `ORDER_WINDOW` packets).
    pub(crate) fn settled<W: Write>(
        &mut self,
        oldest_kept: Option<u64>,
        now: u64,
        out: &mut Shown<W>,
    ) {
        let kept = oldest_kept.map_or(now, |k| k.min(now));
        self.now = self.now.max(now);
        self.floor = self.floor.max(kept).max(now.saturating_sub(ORDER_WINDOW));
        if !self.finishing {
            self.send_up_to(self.ready_up_to(), out);
        }
    }

    /// The input is read: what its flushing tells waits for `finished`.
    pub(crate) fn finishing(&mut self) {
        self.finishing = true;
    }

    /// What comes now until `finished` comes in frame order.
    pub(crate) fn in_frame_order(&mut self) {
        self.in_frame_order = true;
    }

    /// The input is done: everything goes out in frame order, and the next input (whose
    /// frames count from 1 again) starts afresh.
    pub(crate) fn finished<W: Write>(&mut self, out: &mut Shown<W>) {
        self.send_up_to(u64::MAX, out);
        self.finishing = false;
        self.in_frame_order = false;
        self.floor = 0;
        self.now = 0;
        self.held = None;
    }

    fn send_up_to<W: Write>(&mut self, frame: u64, out: &mut Shown<W>) {
        while self
            .waiting
            .first_key_value()
            .is_some_and(|(&(f, _), _)| f <= frame)
        {
            self.send_first(out);
        }
    }

    /// Sends the oldest waiting line; false when none waits.
    fn send_first<W: Write>(&mut self, out: &mut Shown<W>) -> bool {
        let Some((_, (line, cost))) = self.waiting.pop_first() else {
            return false;
        };
        self.cost = self.cost.saturating_sub(cost);
        Self::send(line, out);
        true
    }

    fn send<W: Write>(line: Line, out: &mut Shown<W>) {
        match line {
            Line::Message(held, part, prev) => {
                let now = std::mem::replace(&mut out.printer.clock.prev_packet_ts, prev);
                held.with_record(|r| out.take(r, part));
                out.printer.clock.prev_packet_ts = now;
            }
            Line::Notice(n) => out.printer.notice(&n),
            Line::Tls(t) => out.printer.tls(&t),
            Line::TlsNotice(n) => out.printer.tls_notice(&n),
        }
    }
}
