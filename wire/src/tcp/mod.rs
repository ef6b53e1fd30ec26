//! TCP reassembly, per direction: segments in, ordered byte streams out.
//!
//! Sequence numbers are compared with wrapping arithmetic; out-of-order segments wait in a
//! bounded buffer; retransmissions and overlaps are dropped (an overlap whose bytes differ from
//! what was delivered is reported); SYN, FIN and RST are followed, and a SYN that reuses a
//! closed 4-tuple starts a new stream. A hole that is never filled becomes a gap event, so the
//! layer above can say which message was lost and resynchronise. An answer seen before the
//! end of what it answers (a capture merged from two taps) is held until that end arrives, so
//! that the layer above sees the two directions in causal order.
//!
//! Memory is bounded by `Limits`: what a direction buffers (out of order or held) is counted
//! with its bookkeeping (`PIECE_OVERHEAD` per piece) against `max_buffered`, what all
//! connections buffer together against `max_buffered_total`, and at most `max_connections`
//! are tracked. The connection table (`table.rs`) keeps the orders these limits need.
// Input-derived values never index, unwrap or expect here: a hostile capture must not panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::capture::cut::{LeftOut, Span};
use crate::capture::net::TcpSegment;
use crate::side::{Side, Sides};
use delivered::Delivered;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use table::{Key, Links, Slot, Table};

mod delivered;
mod table;

/// Limits that keep memory bounded whatever the capture holds.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Memory per direction for what waits for a hole, out of order or held behind the other
    /// direction: each piece counts its bytes plus `PIECE_OVERHEAD`. Past it, the hole is
    /// declared lost.
    pub max_buffered: usize,
    /// The same memory for all connections together. Past it, the direction holding the most
    /// has its holes declared lost until it holds nothing, then the next, and so on.
    pub max_buffered_total: usize,
    /// Connections tracked at once; past it, the connection idle longest is dropped.
    pub max_connections: usize,
    /// Packets of a connection after which a hole the receiver has acknowledged is declared
    /// lost (the capture missed it), leaving room for segments merely reordered in the capture;
    /// an answer that came before the end of what it answers is held as long.
    pub reorder_window: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_buffered: 16 * 1024 * 1024,
            max_buffered_total: 256 * 1024 * 1024,
            // Under 1 KiB each idle, with the Kafka layer's state (about 2.5 KiB once every
            // part made on first use is there): 20 000 idle connections take about 14 MB.
            max_connections: 20_000,
            reorder_window: 16,
        }
    }
}

/// Where a packet came from, for events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct At {
    pub frame: u64,
    pub ts_nanos: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GapKind {
    /// The capture starts after this direction began: where in the stream is unknown.
    MidStream,
    /// Bytes the capture missed (a lost segment).
    Lost(u64),
    /// Bytes the snap length cut off a packet.
    Truncated(u64),
    /// Bytes a cut (`-w`) left out, as it noted in the file: not damage. 0 when the count is
    /// not known (the start of a direction, or what follows its last packet).
    LeftOut(u64),
}

/// How a connection's stream came to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndKind {
    /// FIN both ways.
    Fin,
    /// A reset.
    Reset,
    /// A new connection took its addresses and ports.
    Reused,
    /// Let go to stay within `max_connections`.
    Evicted,
    /// The capture ended while it was open.
    CaptureEnd,
}

/// What reassembly tells the layer above.
#[derive(Debug)]
pub enum Event<'a> {
    /// A connection seen for the first time. `client` is the SYN sender when a SYN was seen.
    Open {
        stream: u32,
        a: SocketAddr,
        b: SocketAddr,
        syn_from: Option<SocketAddr>,
    },
    /// In-order bytes from `src` to `dst`.
    Data {
        stream: u32,
        src: SocketAddr,
        dst: SocketAddr,
        bytes: &'a [u8],
        at: At,
    },
    /// Bytes from `src` that will never arrive.
    Gap {
        stream: u32,
        src: SocketAddr,
        dst: SocketAddr,
        kind: GapKind,
        at: At,
    },
    /// A segment that repeated bytes already delivered (a retransmission).
    Retransmission {
        stream: u32,
        src: SocketAddr,
        at: At,
    },
    /// An overlap whose bytes differ from those delivered first.
    ConflictingOverlap {
        stream: u32,
        src: SocketAddr,
        at: At,
        offset: u64,
    },
    /// The connection ended (FIN both ways, RST, reuse of its 4-tuple, eviction, or end of
    /// capture), as packet `at` showed (at the end of the capture, its last packet).
    Close { stream: u32, end: EndKind, at: At },
}

impl Event<'_> {
    /// The connection the event belongs to.
    pub fn stream(&self) -> u32 {
        match self {
            Event::Open { stream, .. }
            | Event::Data { stream, .. }
            | Event::Gap { stream, .. }
            | Event::Retransmission { stream, .. }
            | Event::ConflictingOverlap { stream, .. }
            | Event::Close { stream, .. } => *stream,
        }
    }
}

/// What a piece waiting in a direction (out of order, or held) costs beyond its bytes, so that
/// `max_buffered` and `max_buffered_total` bound memory, not payload: a million 1-byte pieces
/// with holes between them took 140 MiB while counting as 1 MB. It is the piece's entry twice
/// over (a B-tree node or a ring buffer may be half empty) plus the allocator's smallest block
/// for its bytes (32 bytes with glibc's malloc): 160 bytes on 64-bit targets. Pieces are not
/// merged: each keeps the packet and ACK it came with, which date the messages it completes
/// and decide whether it must be held.
pub const PIECE_OVERHEAD: usize = {
    let waiting = 2 * std::mem::size_of::<(u64, Waiting)>();
    let held = 2 * std::mem::size_of::<Held>();
    (if waiting > held { waiting } else { held }) + 32
};

/// A segment in the out-of-order buffer, waiting for the bytes before it.
#[derive(Debug)]
struct Waiting {
    bytes: Vec<u8>,
    /// Bytes the snap length cut off its end.
    missing: usize,
    at: At,
    /// What it acknowledged of the other direction (with the ACK flag).
    ack: Option<u32>,
}

/// What one direction tells the layer above, borrowed while it goes out at once.
#[derive(Debug, Clone, Copy)]
enum Piece<'a> {
    Data(&'a [u8]),
    Gap(GapKind),
}

/// A piece held back, owned.
#[derive(Debug)]
enum HeldPiece {
    Data(Vec<u8>),
    Gap(GapKind),
}

/// A piece of a direction held back while the other direction's bytes it acknowledges have
/// not gone out (or behind an earlier held piece).
#[derive(Debug)]
struct Held {
    piece: HeldPiece,
    at: At,
    /// Where it starts in its own direction's sequence space.
    seq: u32,
    /// The other direction's sequence number it acknowledged; none for a declared gap.
    ack: Option<u32>,
    /// The connection's packet count when it was held: it waits `reorder_window` packets.
    since: u32,
}

#[derive(Debug, Default)]
struct Half {
    /// Next expected sequence number, once known.
    next: Option<u32>,
    /// Stream offset of `next` (bytes put in order or skipped so far).
    next_off: u64,
    /// The last pieces put in order, ending at `next_off`, as ranges and hashes: what a
    /// retransmission is compared against.
    delivered: Delivered,
    fin: bool,
    /// What only a capture that lost, reordered, merged or cut this direction needs: made on
    /// first use and given back once it holds nothing (`Table::settle`), so that a direction
    /// in step costs a pointer here, not the 176 bytes of its maps and queues.
    holes: Option<Box<Holes>>,
}

/// A direction's holes: the pieces waiting for them, the pieces held behind the other
/// direction's, what the peer acknowledged past them and what a cut noted it left out.
#[derive(Debug, Default)]
struct Holes {
    /// Out-of-order segments by stream offset.
    ooo: BTreeMap<u64, Waiting>,
    ooo_bytes: usize,
    /// Set when the peer acknowledged bytes past `next` that we have not seen: the packet
    /// count at that moment.
    acked_hole_since: Option<u32>,
    acked_to: Option<u32>,
    /// In-order pieces not yet gone out, oldest first: `next` runs ahead of what the layer
    /// above has seen by these.
    held: VecDeque<Held>,
    held_bytes: usize,
    /// The lowest frame of the pieces waiting or held since this direction last held none: no
    /// piece here is older, so no event it will still cause is dated before it.
    since: Option<u64>,
    /// A cut noted that it left out this direction's start (and where the stream began, when
    /// it knew); both are read only until the direction starts.
    starts_left_out: bool,
    start_at: Option<u32>,
    /// A cut noted that it left out what this direction sends after this sequence number:
    /// once the stream is there, a left-out gap says so.
    left_out_after: Option<u32>,
    /// Sequence ranges a cut noted it left out and that may still be ahead: a hole within
    /// them is declared left out, not lost (at most `LEFT_OUT_RANGES`).
    left_out: Vec<(u32, u32)>,
    /// `memory()` as the table last counted it, and `since` as it last entered it; changed
    /// only by `Table::settle`.
    charged: usize,
    kept_since: Option<u64>,
}

/// What a direction without holes reads: nothing waits, nothing is held, nothing left out.
static NO_HOLES: Holes = Holes {
    ooo: BTreeMap::new(),
    ooo_bytes: 0,
    acked_hole_since: None,
    acked_to: None,
    held: VecDeque::new(),
    held_bytes: 0,
    since: None,
    starts_left_out: false,
    start_at: None,
    left_out_after: None,
    left_out: Vec::new(),
    charged: 0,
    kept_since: None,
};

/// Left-out ranges a direction remembers; past it the oldest are forgotten.
const LEFT_OUT_RANGES: usize = 64;

impl Holes {
    /// The memory this direction takes waiting for holes, as `max_buffered` counts it: the
    /// bytes out of order and held, plus `PIECE_OVERHEAD` for each piece (a held gap too).
    fn memory(&self) -> usize {
        let pieces = self.ooo.len().saturating_add(self.held.len());
        self.ooo_bytes
            .saturating_add(self.held_bytes)
            .saturating_add(pieces.saturating_mul(PIECE_OVERHEAD))
    }

    /// Whether it holds nothing that is not as a direction without holes has it (and so can
    /// be given back).
    fn is_idle(&self) -> bool {
        self.ooo.is_empty()
            && self.ooo_bytes == 0
            && self.acked_hole_since.is_none()
            && self.acked_to.is_none()
            && self.held.is_empty()
            && self.held_bytes == 0
            && self.since.is_none()
            && !self.starts_left_out
            && self.start_at.is_none()
            && self.left_out_after.is_none()
            && self.left_out.is_empty()
            && self.charged == 0
            && self.kept_since.is_none()
    }
}

impl Half {
    /// The direction's holes, read (those of none when it has had none).
    fn holes(&self) -> &Holes {
        self.holes.as_deref().unwrap_or(&NO_HOLES)
    }

    /// The direction's holes, to change: made on first use.
    fn holes_mut(&mut self) -> &mut Holes {
        self.holes.get_or_insert_with(Box::default)
    }

    /// No hole the peer acknowledged is open any longer. (Nothing is made for a direction
    /// that had none: this runs for every segment.)
    fn forget_acked_hole(&mut self) {
        if let Some(h) = self.holes.as_deref_mut() {
            h.acked_hole_since = None;
            h.acked_to = None;
        }
    }

    /// Gives the holes back once they hold nothing; `Table::settle` calls it once it has
    /// counted them.
    fn give_back_idle_holes(&mut self) {
        if self.holes.as_deref().is_some_and(Holes::is_idle) {
            self.holes = None;
        }
    }

    /// A cut left these ranges out; those already behind are forgotten.
    fn note_left_out(&mut self, ranges: &[(u32, u32)]) {
        let next = self.next;
        let h = self.holes_mut();
        h.left_out.extend_from_slice(ranges);
        if let Some(next) = next {
            h.left_out.retain(|&(_, b)| seq_diff(b, next) > 0);
        }
        let over = h.left_out.len().saturating_sub(LEFT_OUT_RANGES);
        h.left_out.drain(..over);
    }

    /// How far the stream reaches from `from` through ranges a cut left out.
    fn left_out_reach(&self, from: u32) -> u32 {
        let mut cur = from;
        while let Some(&(_, b)) = self
            .holes()
            .left_out
            .iter()
            .find(|&&(a, b)| seq_diff(cur, a) >= 0 && seq_diff(b, cur) > 0)
        {
            cur = b;
        }
        cur
    }

    /// Whether the bytes `from..to` are all in ranges a cut left out.
    fn left_out_covers(&self, from: u32, to: u32) -> bool {
        !self.holes().left_out.is_empty() && seq_diff(self.left_out_reach(from), to) >= 0
    }

    /// A piece of packet `frame` now waits (out of order) or is held.
    fn keeps(&mut self, frame: u64) {
        let h = self.holes_mut();
        h.since = Some(h.since.map_or(frame, |f| f.min(frame)));
    }

    /// A piece left: once none waits or is held, nothing older is kept.
    fn let_go(&mut self) {
        if let Some(h) = self.holes.as_deref_mut() {
            if h.ooo.is_empty() && h.held.is_empty() {
                h.since = None;
            }
        }
    }

    /// What of this direction has gone out: the start of the first held piece, else `next`.
    fn sent(&self) -> Option<u32> {
        let h = self.holes();
        h.held.front().map(|h| h.seq).or(self.next).or(h.start_at)
    }
}

/// One direction of a connection as its pieces go out.
#[derive(Debug, Clone, Copy)]
struct Dir {
    stream: u32,
    src: SocketAddr,
    dst: SocketAddr,
    /// What of the other direction has gone out (`Half::sent`).
    peer_sent: Option<u32>,
    /// The connection's packet count, to time held pieces.
    packets: u32,
}

impl Dir {
    fn event<'a>(&self, piece: Piece<'a>, at: At) -> Event<'a> {
        match piece {
            Piece::Data(bytes) => Event::Data {
                stream: self.stream,
                src: self.src,
                dst: self.dst,
                bytes,
                at,
            },
            Piece::Gap(kind) => Event::Gap {
                stream: self.stream,
                src: self.src,
                dst: self.dst,
                kind,
                at,
            },
        }
    }

    /// Whether the other direction's bytes acknowledged by `ack` have gone out. An ACK of
    /// bytes never seen at all (the other direction unknown) asks for nothing.
    fn answered(&self, ack: Option<u32>) -> bool {
        match (ack, self.peer_sent) {
            (Some(a), Some(p)) => seq_diff(a, p) <= 0,
            _ => true,
        }
    }
}

#[derive(Debug)]
struct Conn {
    id: u32,
    /// Its key in the table, kept so that a lookup compares it rather than making it again.
    key: Key,
    addrs: Sides<SocketAddr>,
    halves: Sides<Half>,
    packets: u32,
    /// The frame of its last packet. Changed only by `Table::touch`.
    last_seen: u64,
    /// Its neighbours in the table's idle order; changed only by `Table`.
    idle: Links,
    /// Its neighbours in the table's order of connections keeping delivered pieces, while it
    /// is there (`in_recent`); changed only by `Table`.
    recent: Links,
    rst: bool,
    had_data: bool,
    /// Ended and reported; kept (without buffers) so that late retransmissions are known
    /// for what they are rather than taken for a new connection picked up mid-stream.
    closed: bool,
    /// Whether the table's order of connections keeping delivered pieces holds it; changed
    /// only by `Table`.
    in_recent: bool,
}

impl Conn {
    /// A connection first seen at `frame`, from `a` to `b`.
    fn new(id: u32, a: SocketAddr, b: SocketAddr, frame: u64) -> Conn {
        Conn {
            id,
            key: Key::of(a, b),
            addrs: Sides::new(a, b),
            halves: Sides::default(),
            packets: 0,
            last_seen: frame,
            idle: Links::default(),
            recent: Links::default(),
            rst: false,
            had_data: false,
            closed: false,
            in_recent: false,
        }
    }
}

pub struct Reassembler {
    limits: Limits,
    conns: Table,
    next_id: u32,
    /// Connections dropped because of `max_connections`.
    pub evicted: u64,
    /// Holes declared lost because out-of-order or held data passed `max_buffered`.
    pub buffer_limit_hits: u64,
    /// Directions whose holes were declared lost because all connections together passed
    /// `max_buffered_total`.
    pub total_limit_hits: u64,
    /// Closed connections still in `conns`, oldest first: only the most recent few are kept,
    /// so that tracking stays proportional to the connections open, not to all ever seen.
    closed: VecDeque<Key>,
}

/// Closed connections kept to recognise late retransmissions.
const KEEP_CLOSED: usize = 4096;

fn seq_diff(a: u32, b: u32) -> i64 {
    i64::from(a.wrapping_sub(b) as i32)
}

impl Reassembler {
    pub fn new(limits: Limits) -> Reassembler {
        Reassembler {
            limits,
            conns: Table::default(),
            next_id: 0,
            evicted: 0,
            buffer_limit_hits: 0,
            total_limit_hits: 0,
            closed: VecDeque::new(),
        }
    }

    /// The lowest frame a piece still waiting or held in any connection came in: no event
    /// still to come from the segments fed so far is dated before it. `None` when nothing
    /// waits.
    pub fn oldest_kept(&self) -> Option<u64> {
        self.conns.oldest_kept()
    }

    /// Feeds one segment; events go to `emit` in order.
    pub fn segment(&mut self, seg: &TcpSegment<'_>, at: At, emit: &mut impl FnMut(Event<'_>)) {
        self.segment_noted(seg, at, &[], emit);
    }

    /// Feeds one segment whose packet carries the notes of a cut: the bytes they say were
    /// left out go out as `GapKind::LeftOut` gaps, at once, rather than waiting to be declared
    /// lost.
    pub fn segment_noted(
        &mut self,
        seg: &TcpSegment<'_>,
        at: At,
        left_out: &[LeftOut],
        emit: &mut impl FnMut(Event<'_>),
    ) {
        let k = Key::of(seg.src, seg.dst);
        if seg.syn && !seg.has_ack {
            self.end_reused(k, seg, at, emit);
        }
        let slot = match self.conns.find(&k) {
            Some(slot) => slot,
            None => self.open(k, seg, at, emit),
        };
        self.conns.touch(slot, at.frame);
        let limits = self.limits;
        let Some(conn) = self.conns.conn_mut(slot) else {
            return;
        };
        conn.packets = conn.packets.wrapping_add(1);
        let d = conn.addrs.side_of(&seg.src);
        if seg.rst {
            conn.rst = true;
        }
        Self::left_out_before(conn, left_out, at, emit);
        Self::note_ack(conn, d, seg);
        Self::take(conn, d, seg, at, emit);
        // A connection in step (no cut's notes, neither direction with holes, so nothing
        // waits, is held or left out) has nothing to release, expire, limit or reach: the
        // steps below would each find nothing, at a fifth of a packet's cost.
        let in_step = left_out.is_empty() && conn.halves.iter().all(|h| h.holes.is_none());
        if !in_step {
            self.buffer_limit_hits += Self::after_take(conn, left_out, seg, at, limits, emit);
        }
        if Self::end_if_done(conn, at, emit) {
            self.remember_closed(k);
        }
        // The connection may be gone (forgotten among the closed, its key used before): its
        // slot is then empty, and settling it does nothing.
        self.conns.settle(slot);
        self.enforce_total(at, emit);
    }

    /// What a segment's direction does once its bytes are taken, for a connection not in step:
    /// the cut's notes after it, held pieces released or expired, holes expired or declared
    /// lost past the buffer limit, a left-out end reached. Returns how many directions hit
    /// the limit.
    fn after_take(
        conn: &mut Conn,
        left_out: &[LeftOut],
        seg: &TcpSegment<'_>,
        at: At,
        limits: Limits,
        emit: &mut impl FnMut(Event<'_>),
    ) -> u64 {
        Self::left_out_after(conn, left_out, seg);
        Self::release(conn, emit);
        // Held pieces first: a hole they wait for is then dated by the answer that showed it.
        Self::expire_held(conn, limits.reorder_window, emit);
        Self::expire_acked_holes(conn, limits.reorder_window, at, emit);
        let mut hits = 0;
        for side in Side::BOTH {
            if Self::enforce_limit(conn, side, limits.max_buffered, at, emit) {
                hits += 1;
            }
        }
        Self::reach_left_out_after(conn, at, false, emit);
        hits
    }

    /// A client SYN on a 4-tuple whose connection has ended or carried data starts anew: the
    /// old connection is closed and forgotten.
    fn end_reused(
        &mut self,
        k: Key,
        seg: &TcpSegment<'_>,
        at: At,
        emit: &mut impl FnMut(Event<'_>),
    ) {
        let reuse = self.conns.get(&k).is_some_and(|c| {
            let d = c.addrs.side_of(&seg.src);
            c.rst
                || c.halves.iter().all(|h| h.fin)
                || (c.had_data && c.halves[d].next != Some(seg.seq.wrapping_add(1)))
        });
        if reuse {
            if let Some(c) = self.conns.remove(&k) {
                if !c.closed {
                    Self::close(c, at, EndKind::Reused, &mut *emit);
                }
            }
        }
    }

    /// Starts tracking a connection seen for the first time, evicting the one idle longest
    /// if `max_connections` are tracked already. Returns its slot.
    fn open(
        &mut self,
        k: Key,
        seg: &TcpSegment<'_>,
        at: At,
        emit: &mut impl FnMut(Event<'_>),
    ) -> Slot {
        if self.conns.len() >= self.limits.max_connections {
            self.evict_one(at, emit);
        }
        let id = self.next_id;
        self.next_id += 1;
        let slot = self
            .conns
            .insert(k, Conn::new(id, seg.src, seg.dst, at.frame));
        emit(Event::Open {
            stream: id,
            a: seg.src,
            b: seg.dst,
            syn_from: (seg.syn && !seg.has_ack).then_some(seg.src),
        });
        slot
    }

    /// Closes a connection that has ended (FIN both ways, or RST) once nothing it buffers can
    /// still be filled. Returns whether it was closed now.
    fn end_if_done(conn: &mut Conn, at: At, emit: &mut impl FnMut(Event<'_>)) -> bool {
        if !(conn.rst || conn.halves.iter().all(|h| h.fin)) {
            return false;
        }
        // Both directions have ended: what held pieces wait for will not come.
        Self::flush_held(conn, emit);
        let done = conn.rst || conn.halves.iter().all(|h| h.holes().ooo.is_empty());
        if done && !conn.closed {
            let end = if conn.rst {
                EndKind::Reset
            } else {
                EndKind::Fin
            };
            Self::close_in_place(conn, at, end, emit);
            return true;
        }
        false
    }

    /// Keeps a closed connection (to recognise late retransmissions) among the last
    /// `KEEP_CLOSED` closed, forgetting the oldest.
    fn remember_closed(&mut self, k: Key) {
        self.closed.push_back(k);
        while self.closed.len() > KEEP_CLOSED {
            if let Some(old) = self.closed.pop_front() {
                if self.conns.get(&old).is_some_and(|c| c.closed) {
                    self.conns.remove(&old);
                }
            }
        }
    }

    /// Keeps what all connections buffer within `max_buffered_total`: the direction holding
    /// the most has its holes declared lost (and its held pieces sent) until it holds nothing,
    /// then the next. Emptying the largest first frees the most for the fewest losses.
    fn enforce_total(&mut self, at: At, emit: &mut impl FnMut(Event<'_>)) {
        while self.conns.total() > self.limits.max_buffered_total {
            let before = self.conns.total();
            let Some((slot, side)) = self.conns.largest() else {
                return;
            };
            let Some(conn) = self.conns.conn_mut(slot) else {
                return;
            };
            Self::enforce_limit(conn, side, 0, at, emit);
            self.conns.settle(slot);
            self.total_limit_hits += 1;
            // Emptying a direction always frees memory; this guards against a loop that
            // would not (the other direction could take on a held gap meanwhile).
            if self.conns.total() >= before {
                return;
            }
        }
    }

    /// Direction `side` of a connection, as its pieces go out.
    fn dir(conn: &Conn, side: Side) -> Dir {
        Dir {
            stream: conn.id,
            src: conn.addrs[side],
            dst: conn.addrs[side.other()],
            peer_sent: conn.halves[side.other()].sent(),
            packets: conn.packets,
        }
    }

    /// The acknowledgement tells what the other direction's receiver has: a hole it has
    /// acknowledged is a segment the capture missed, or one the capture shows late. It is
    /// declared lost after `reorder_window` packets. (An acknowledging segment that carries
    /// data, an answer, is held meanwhile: see `put`.)
    fn note_ack(conn: &mut Conn, d: Side, seg: &TcpSegment<'_>) {
        if !seg.has_ack {
            return;
        }
        let packets = conn.packets;
        let other = &mut conn.halves[d.other()];
        let Some(next) = other.next else { return };
        if seq_diff(seg.ack, next) > 0 {
            let h = other.holes_mut();
            h.acked_hole_since.get_or_insert(packets);
            h.acked_to = Some(match h.acked_to {
                Some(t) if seq_diff(t, seg.ack) > 0 => t,
                _ => seg.ack,
            });
        } else {
            other.forget_acked_hole();
        }
    }

    /// The segment's own direction: SYN, data, FIN.
    fn take(
        conn: &mut Conn,
        d: Side,
        seg: &TcpSegment<'_>,
        at: At,
        emit: &mut impl FnMut(Event<'_>),
    ) {
        let dir = Self::dir(conn, d);
        let half = &mut conn.halves[d];
        if seg.syn {
            half.next = Some(seg.seq.wrapping_add(1));
            Self::started(half);
        } else if !seg.payload.is_empty() || seg.missing > 0 {
            conn.had_data = true;
            Self::data(half, seg, at, &dir, emit);
        }
        if seg.fin {
            half.fin = true;
            // The FIN takes one sequence number: the peer acknowledges it, and that must
            // not read as a byte the capture missed.
            let fin_seq = seg.seq.wrapping_add(seg.payload.len() as u32);
            if let Some(n) = half.next {
                if seq_diff(fin_seq, n) == 0 {
                    half.next = Some(n.wrapping_add(1));
                }
            }
        }
    }

    /// A cut left out bytes of a direction before this packet: up to the sequence number it
    /// noted they go out as a left-out gap; a direction not started yet starts with one.
    fn left_out_before(
        conn: &mut Conn,
        notes: &[LeftOut],
        at: At,
        emit: &mut impl FnMut(Event<'_>),
    ) {
        for n in notes {
            let Some(side) = conn.addrs.side_of_checked(&n.src) else {
                continue;
            };
            let ranges = match &n.what {
                Span::Seq(ranges) => ranges,
                Span::Start(seq) => {
                    let half = &mut conn.halves[side];
                    if half.next.is_none() {
                        let h = half.holes_mut();
                        h.starts_left_out = true;
                        h.start_at = Some(*seq);
                    }
                    continue;
                }
                Span::After => continue,
            };
            let dir = Self::dir(conn, side);
            let half = &mut conn.halves[side];
            half.note_left_out(ranges);
            let Some(next) = half.next else {
                half.holes_mut().starts_left_out = true;
                continue;
            };
            let reach = half.left_out_reach(next);
            if seq_diff(reach, next) > 0 && half.holes().ooo.is_empty() {
                let gap = seq_diff(reach, next) as u64;
                Self::gap(half, gap, GapKind::LeftOut(gap), None, at, &dir, emit);
                half.forget_acked_hole();
            }
        }
    }

    /// A cut left out what this packet's direction sends after it: once the stream reaches
    /// the packet's end (holes before it declared, if any), a left-out gap says so.
    fn left_out_after(conn: &mut Conn, notes: &[LeftOut], seg: &TcpSegment<'_>) {
        let after = notes
            .iter()
            .any(|n| n.what == Span::After && n.src == seg.src && n.dst == seg.dst);
        if after {
            let d = conn.addrs.side_of(&seg.src);
            let end = seg.seq.wrapping_add(seg.payload.len() as u32);
            conn.halves[d].holes_mut().left_out_after = Some(end);
        }
    }

    /// The left-out gap a cut noted after a direction's last packet, once the stream is
    /// there: put after what is held, or (`now`, when the connection ends) out at once.
    fn reach_left_out_after(conn: &mut Conn, at: At, now: bool, emit: &mut impl FnMut(Event<'_>)) {
        for side in Side::BOTH {
            let dir = Self::dir(conn, side);
            let half = &mut conn.halves[side];
            let (Some(end), Some(next)) = (half.holes().left_out_after, half.next) else {
                continue;
            };
            if !(now || (half.holes().ooo.is_empty() && seq_diff(next, end) >= 0)) {
                continue;
            }
            half.holes_mut().left_out_after = None;
            let piece = Piece::Gap(GapKind::LeftOut(0));
            if now {
                emit(dir.event(piece, at));
            } else {
                Self::put(half, piece, next, None, at, &dir, emit);
            }
        }
    }

    /// Holes acknowledged `window` packets ago and still open are declared lost.
    fn expire_acked_holes(conn: &mut Conn, window: u32, at: At, emit: &mut impl FnMut(Event<'_>)) {
        for side in Side::BOTH {
            let dir = Self::dir(conn, side);
            let half = &mut conn.halves[side];
            if let (Some(since), Some(to)) = (half.holes().acked_hole_since, half.holes().acked_to)
            {
                if dir.packets.wrapping_sub(since) >= window {
                    Self::skip_hole(half, Some(to), at, &dir, emit);
                }
            }
        }
        Self::release(conn, emit);
    }

    /// Pieces held `window` packets stop waiting for the bytes they acknowledge.
    fn expire_held(conn: &mut Conn, window: u32, emit: &mut impl FnMut(Event<'_>)) {
        for side in Side::BOTH {
            while conn.halves[side]
                .holes()
                .held
                .front()
                .is_some_and(|h| conn.packets.wrapping_sub(h.since) >= window)
            {
                Self::unblock(conn, side, emit);
            }
        }
    }

    /// Sends out every held piece, declaring lost what each waited for.
    fn flush_held(conn: &mut Conn, emit: &mut impl FnMut(Event<'_>)) {
        while let Some(side) = Self::oldest_held(conn) {
            Self::unblock(conn, side, emit);
        }
    }

    /// Keeps a direction's out-of-order and held pieces within `max` bytes of memory
    /// (`Holes::memory`): held pieces stop waiting first, then holes in the out-of-order buffer
    /// are declared lost. Returns whether the limit was hit.
    fn enforce_limit(
        conn: &mut Conn,
        side: Side,
        max: usize,
        at: At,
        emit: &mut impl FnMut(Event<'_>),
    ) -> bool {
        let mut hit = false;
        loop {
            let holes = conn.halves[side].holes();
            if holes.memory() <= max {
                return hit;
            }
            hit = true;
            if !holes.held.is_empty() {
                Self::unblock(conn, side, emit);
            } else if !holes.ooo.is_empty() {
                let dir = Self::dir(conn, side);
                Self::skip_hole(&mut conn.halves[side], None, at, &dir, emit);
            } else {
                return hit;
            }
        }
    }

    /// Sends a piece of this direction on, or holds it: behind pieces already held, or while
    /// the other direction's bytes it acknowledges (`ack`) have not gone out. That is an
    /// answer seen before the end of what it answers, as a capture merged from two taps or a
    /// SPAN port can show; holding it lets the completed question go first.
    fn put(
        half: &mut Half,
        piece: Piece<'_>,
        seq: u32,
        ack: Option<u32>,
        at: At,
        dir: &Dir,
        emit: &mut impl FnMut(Event<'_>),
    ) {
        if half.holes().held.is_empty() && dir.answered(ack) {
            emit(dir.event(piece, at));
            return;
        }
        let h = half.holes_mut();
        let piece = match piece {
            Piece::Data(b) => {
                h.held_bytes += b.len();
                HeldPiece::Data(b.to_vec())
            }
            Piece::Gap(kind) => HeldPiece::Gap(kind),
        };
        h.held.push_back(Held {
            piece,
            at,
            seq,
            ack,
            since: dir.packets,
        });
        half.keeps(at.frame);
    }

    /// Sends out the first held piece of `side`, whether or not it is answered.
    fn send_first(conn: &mut Conn, side: Side, emit: &mut impl FnMut(Event<'_>)) {
        let dir = Self::dir(conn, side);
        let half = &mut conn.halves[side];
        let Some(holes) = half.holes.as_deref_mut() else {
            return;
        };
        let Some(h) = holes.held.pop_front() else {
            return;
        };
        if let HeldPiece::Data(b) = &h.piece {
            holes.held_bytes -= b.len();
        }
        half.let_go();
        match &h.piece {
            HeldPiece::Data(b) => {
                emit(dir.event(Piece::Data(b), h.at));
            }
            HeldPiece::Gap(kind) => emit(dir.event(Piece::Gap(*kind), h.at)),
        }
    }

    /// The side whose first held piece can go out now, the one held longer first.
    fn ready_side(conn: &Conn) -> Option<Side> {
        let mut best: Option<(Side, u32)> = None;
        for side in Side::BOTH {
            let Some(h) = conn.halves[side].holes().held.front() else {
                continue;
            };
            let age = conn.packets.wrapping_sub(h.since);
            if Self::dir(conn, side).answered(h.ack) && best.is_none_or(|(_, a)| age > a) {
                best = Some((side, age));
            }
        }
        best.map(|(side, _)| side)
    }

    /// When both directions hold pieces that wait only for each other's held pieces (the
    /// bytes they acknowledge did arrive), which goes first: the one held longer. Causally
    /// impossible but for retransmissions; without this they would wait out the window.
    fn deadlocked_side(conn: &Conn) -> Option<Side> {
        let (a, b) = (&conn.halves[Side::A], &conn.halves[Side::B]);
        let (ha, hb) = (a.holes().held.front()?, b.holes().held.front()?);
        let arrived = |ack: Option<u32>, peer: &Half| match (ack, peer.next) {
            (Some(x), Some(n)) => seq_diff(x, n) <= 0,
            _ => true,
        };
        if !arrived(ha.ack, b) || !arrived(hb.ack, a) {
            return None;
        }
        let age = |h: &Held| conn.packets.wrapping_sub(h.since);
        Some(if age(hb) > age(ha) { Side::B } else { Side::A })
    }

    /// Sends out every held piece whose acknowledged bytes have gone out, in causal order.
    fn release(conn: &mut Conn, emit: &mut impl FnMut(Event<'_>)) {
        while let Some(side) = Self::ready_side(conn).or_else(|| Self::deadlocked_side(conn)) {
            Self::send_first(conn, side, emit);
        }
    }

    /// The first held piece of `side` stops waiting: the other direction's bytes it
    /// acknowledges are declared lost if they never came, then it goes out after them. The
    /// loss is dated by the held piece: its acknowledgement showed it, as when an answer
    /// declared a hole at once.
    fn unblock(conn: &mut Conn, side: Side, emit: &mut impl FnMut(Event<'_>)) {
        let holes = conn.halves[side].holes();
        let Some((ack, at)) = holes.held.front().map(|h| (h.ack, h.at)) else {
            return;
        };
        let before = holes.held.len();
        if let Some(ack) = ack {
            let peer = Self::dir(conn, side.other());
            Self::skip_to(&mut conn.halves[side.other()], ack, at, &peer, emit);
        }
        Self::release(conn, emit);
        if conn.halves[side].holes().held.len() == before {
            Self::send_first(conn, side, emit);
            Self::release(conn, emit);
        }
    }

    /// The sequence number a direction is at; its first segment starts it, picked up
    /// mid-connection, and says so (a cut says it left the start out, and where it was).
    fn start(
        half: &mut Half,
        seg: &TcpSegment<'_>,
        at: At,
        dir: &Dir,
        emit: &mut impl FnMut(Event<'_>),
    ) -> u32 {
        if let Some(n) = half.next {
            return n;
        }
        let start = half.holes().start_at.unwrap_or(seg.seq);
        half.next = Some(start);
        let kind = if half.holes().starts_left_out {
            GapKind::LeftOut(0)
        } else {
            GapKind::MidStream
        };
        Self::started(half);
        Self::put(half, Piece::Gap(kind), start, None, at, dir, emit);
        start
    }

    /// The direction has started: where a cut said it began is of no more use.
    fn started(half: &mut Half) {
        if let Some(h) = half.holes.as_deref_mut() {
            h.starts_left_out = false;
            h.start_at = None;
        }
    }

    fn data(
        half: &mut Half,
        seg: &TcpSegment<'_>,
        at: At,
        dir: &Dir,
        emit: &mut impl FnMut(Event<'_>),
    ) {
        let ack = seg.has_ack.then_some(seg.ack);
        let next = Self::start(half, seg, at, dir, emit);
        let mut delta = seq_diff(seg.seq, next);
        if delta > 0 && half.holes().ooo.is_empty() && half.left_out_covers(next, seg.seq) {
            // The bytes before it are those a cut left out: no hole to wait on.
            let n = delta as u64;
            Self::gap(half, n, GapKind::LeftOut(n), ack, at, dir, emit);
            delta = 0;
        }
        let len = seg.payload.len() as i64;
        if delta > 0 {
            let off = half.next_off + delta as u64;
            let h = half.holes_mut();
            if let Entry::Vacant(e) = h.ooo.entry(off) {
                h.ooo_bytes += seg.payload.len();
                e.insert(Waiting {
                    bytes: seg.payload.to_vec(),
                    missing: seg.missing,
                    at,
                    ack,
                });
                half.keeps(at.frame);
            } else {
                emit(Event::Retransmission {
                    stream: dir.stream,
                    src: dir.src,
                    at,
                });
            }
            return;
        }
        let old = (-delta).min(len) as usize;
        if old > 0 {
            Self::compare_overlap(half, seg, -delta, old, at, dir, emit);
        }
        // The segment covers [delta, delta + len + missing) relative to `next`: bytes before
        // 0 were seen already, the snap-length-cut tail is a gap only where it is new.
        let total_end = delta + len + seg.missing as i64;
        if total_end <= 0 {
            emit(Event::Retransmission {
                stream: dir.stream,
                src: dir.src,
                at,
            });
            return;
        }
        let fresh = seg.payload.get(old..).unwrap_or(&[]);
        Self::deliver(half, fresh, ack, at, dir, emit);
        let cut_new = total_end - (delta + len).max(0);
        if cut_new > 0 {
            let n = cut_new as u64;
            Self::gap(half, n, GapKind::Truncated(n), ack, at, dir, emit);
        }
        Self::drain(half, dir, emit);
    }

    /// Compares the `old` repeated bytes of a segment starting `back` bytes before `next`
    /// with what was put in order (the pieces they cover whole: `delivered.rs`), reporting a
    /// difference.
    fn compare_overlap(
        half: &Half,
        seg: &TcpSegment<'_>,
        back: i64,
        old: usize,
        at: At,
        dir: &Dir,
        emit: &mut impl FnMut(Event<'_>),
    ) {
        let back = back as u64;
        if back > half.delivered.reach() {
            return;
        }
        let start = half.next_off - back;
        let differs = seg
            .payload
            .get(..old)
            .is_some_and(|again| half.delivered.differs(start, again));
        if differs {
            emit(Event::ConflictingOverlap {
                stream: dir.stream,
                src: dir.src,
                at,
                offset: half.next_off - back,
            });
        }
    }

    /// Puts bytes in order: the stream moves on and they go out (or are held).
    fn deliver(
        half: &mut Half,
        bytes: &[u8],
        ack: Option<u32>,
        at: At,
        dir: &Dir,
        emit: &mut impl FnMut(Event<'_>),
    ) {
        if bytes.is_empty() {
            return;
        }
        let Some(seq) = half.next else {
            return;
        };
        half.next = Some(seq.wrapping_add(bytes.len() as u32));
        half.next_off += bytes.len() as u64;
        half.delivered.push(bytes, half.next_off);
        half.forget_acked_hole();
        Self::put(half, Piece::Data(bytes), seq, ack, at, dir, emit);
    }

    /// Skips `n` bytes that will never arrive, telling why.
    fn gap(
        half: &mut Half,
        n: u64,
        kind: GapKind,
        ack: Option<u32>,
        at: At,
        dir: &Dir,
        emit: &mut impl FnMut(Event<'_>),
    ) {
        let Some(seq) = half.next else {
            return;
        };
        half.next = Some(seq.wrapping_add(n as u32));
        half.next_off += n;
        half.delivered.clear();
        Self::put(half, Piece::Gap(kind), seq, ack, at, dir, emit);
    }

    /// Delivers buffered segments that now continue the stream.
    fn drain(half: &mut Half, dir: &Dir, emit: &mut impl FnMut(Event<'_>)) {
        while let Some(holes) = half.holes.as_deref_mut() {
            let Some((&off, _)) = holes.ooo.iter().next() else {
                break;
            };
            if off > half.next_off {
                break;
            }
            let Some(w) = holes.ooo.remove(&off) else {
                break;
            };
            holes.ooo_bytes -= w.bytes.len();
            half.let_go();
            let skip = (half.next_off - off) as usize;
            let total_end = off + (w.bytes.len() + w.missing) as u64;
            if total_end <= half.next_off {
                emit(Event::Retransmission {
                    stream: dir.stream,
                    src: dir.src,
                    at: w.at,
                });
                continue;
            }
            let fresh = w.bytes.get(skip.min(w.bytes.len())..).unwrap_or(&[]);
            Self::deliver(half, fresh, w.ack, w.at, dir, emit);
            if total_end > half.next_off {
                let cut_new = total_end - half.next_off;
                Self::gap(
                    half,
                    cut_new,
                    GapKind::Truncated(cut_new),
                    w.ack,
                    w.at,
                    dir,
                    emit,
                );
            }
        }
    }

    /// Declares the hole before the first buffered segment (or up to `to`) lost.
    fn skip_hole(
        half: &mut Half,
        to: Option<u32>,
        at: At,
        dir: &Dir,
        emit: &mut impl FnMut(Event<'_>),
    ) {
        let Some(next) = half.next else { return };
        let first = half.holes().ooo.keys().next().copied();
        let to_off = to.map(|t| half.next_off + seq_diff(t, next).max(0) as u64);
        let target = match (first, to_off) {
            (Some(f), Some(t)) => f.min(t),
            (Some(f), None) => f,
            (None, Some(t)) => t,
            (None, None) => return,
        };
        if target > half.next_off {
            let n = target - half.next_off;
            let kind = if half.left_out_covers(next, next.wrapping_add(n as u32)) {
                GapKind::LeftOut(n)
            } else {
                GapKind::Lost(n)
            };
            Self::gap(half, n, kind, None, at, dir, emit);
        }
        half.forget_acked_hole();
        Self::drain(half, dir, emit);
    }

    /// Declares every hole before sequence number `to` lost.
    fn skip_to(half: &mut Half, to: u32, at: At, dir: &Dir, emit: &mut impl FnMut(Event<'_>)) {
        while half.next.is_some_and(|n| seq_diff(to, n) > 0) {
            let before = half.next_off;
            Self::skip_hole(half, Some(to), at, dir, emit);
            if half.next_off == before {
                break;
            }
        }
    }

    fn close(mut c: Conn, at: At, end: EndKind, emit: &mut impl FnMut(Event<'_>)) {
        Self::close_in_place(&mut c, at, end, emit);
    }

    /// Flushes what is buffered and held (declaring holes lost, then sending what waited for
    /// them), reports the end, frees the buffers.
    fn close_in_place(c: &mut Conn, at: At, end: EndKind, emit: &mut impl FnMut(Event<'_>)) {
        if c.closed {
            return;
        }
        loop {
            Self::flush_held(c, emit);
            let Some(side) = Side::BOTH
                .into_iter()
                .find(|&s| !c.halves[s].holes().ooo.is_empty())
            else {
                break;
            };
            let dir = Self::dir(c, side);
            Self::skip_hole(&mut c.halves[side], None, at, &dir, emit);
        }
        Self::reach_left_out_after(c, at, true, emit);
        for half in c.halves.iter_mut() {
            half.delivered.let_go();
            if let Some(h) = half.holes.as_deref_mut() {
                h.held = VecDeque::new();
            }
            half.let_go();
        }
        c.closed = true;
        emit(Event::Close {
            stream: c.id,
            end,
            at,
        });
    }

    /// The side whose first held piece was held first.
    fn oldest_held(c: &Conn) -> Option<Side> {
        let (a, b) = (&c.halves[Side::A], &c.halves[Side::B]);
        match (a.holes().held.front(), b.holes().held.front()) {
            (Some(x), Some(y)) => {
                let age = |h: &Held| c.packets.wrapping_sub(h.since);
                Some(if age(y) > age(x) { Side::B } else { Side::A })
            }
            (Some(_), None) => Some(Side::A),
            (None, Some(_)) => Some(Side::B),
            (None, None) => None,
        }
    }

    /// Drops the connection idle longest (flushing it first), found in O(log n).
    fn evict_one(&mut self, at: At, emit: &mut impl FnMut(Event<'_>)) {
        if let Some(k) = self.conns.oldest() {
            if let Some(c) = self.conns.remove(&k) {
                if !c.closed {
                    self.evicted += 1;
                    Self::close(c, at, EndKind::Evicted, emit);
                }
            }
        }
    }

    /// The memory all connections take waiting for holes, as `max_buffered_total` counts it
    /// (bytes out of order and held, plus `PIECE_OVERHEAD` per piece).
    pub fn buffered_memory(&self) -> usize {
        self.conns.total()
    }

    /// End of input: flushes every connection, declaring holes lost, in stream order.
    pub fn finish(&mut self, at: At, emit: &mut impl FnMut(Event<'_>)) {
        for c in self.conns.drain_in_order() {
            Self::close(*c, at, EndKind::CaptureEnd, emit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(port: u16, syn: bool, fin: bool, seq: u32, payload: &[u8]) -> TcpSegment<'_> {
        TcpSegment {
            src: SocketAddr::from(([10, 0, 0, 1], port)),
            dst: SocketAddr::from(([10, 0, 0, 2], 9092)),
            seq,
            ack: 0,
            syn,
            fin,
            rst: false,
            has_ack: !syn,
            payload,
            missing: 0,
        }
    }

    /// Connections that ended are forgotten past KEEP_CLOSED, so a capture of many short
    /// connections is tracked in bounded memory and without scanning every connection seen.
    #[test]
    fn closed_connections_are_forgotten() {
        let mut r = Reassembler::new(Limits::default());
        let mut closes = 0;
        for i in 0..(KEEP_CLOSED as u32 + 1000) {
            let port = 1024 + u16::try_from(i).unwrap_or(0);
            let mut emit = |e: Event<'_>| {
                if matches!(e, Event::Close { .. }) {
                    closes += 1;
                }
            };
            let at = At::default();
            r.segment(&seg(port, true, false, 100, b""), at, &mut emit);
            r.segment(&seg(port, false, false, 101, b"abcd"), at, &mut emit);
            r.segment(&seg(port, false, true, 105, b""), at, &mut emit);
            let mut fin = seg(port, false, true, 500, b"");
            std::mem::swap(&mut fin.src, &mut fin.dst);
            r.segment(&fin, at, &mut emit);
        }
        assert!(r.conns.len() <= KEEP_CLOSED, "{} tracked", r.conns.len());
        assert!(r.conns.len() >= KEEP_CLOSED - 1);
        assert_eq!(closes, KEEP_CLOSED + 1000);
    }
    /// Only the `MAX_RECENT` connections active last keep a copy of their last bytes: with
    /// more connections open than that, the memory of those copies stays bounded.
    #[test]
    fn only_the_most_recently_active_keep_their_last_bytes() {
        let mut r = Reassembler::new(Limits::default());
        let n = table::MAX_RECENT as u32 + 500;
        for i in 0..n {
            let port = 1024 + u16::try_from(i).unwrap_or(0);
            let at = At {
                frame: u64::from(i) + 1,
                ..At::default()
            };
            let mut emit = |_: Event<'_>| {};
            r.segment(&seg(port, true, false, 100, b""), at, &mut emit);
            r.segment(&seg(port, false, false, 101, b"abcd"), at, &mut emit);
        }
        r.conns.check();
        let keeping = (0..n)
            .filter(|i| {
                let port = 1024 + u16::try_from(*i).unwrap_or(0);
                let k = table_key(port);
                r.conns
                    .get(&k)
                    .is_some_and(|c| c.halves.iter().any(|h| h.delivered.is_kept()))
            })
            .collect::<Vec<_>>();
        assert_eq!(keeping.len(), table::MAX_RECENT);
        // The first 500 connections were active least recently: theirs were let go.
        assert_eq!(keeping.first(), Some(&500));
    }

    fn table_key(port: u16) -> table::Key {
        let a = SocketAddr::from(([10, 0, 0, 1], port));
        let b = SocketAddr::from(([10, 0, 0, 2], 9092));
        table::Key::of(a, b)
    }

    /// One connection, client port 40000 to broker 9092, with events logged as short lines:
    /// `FRAME c|b TEXT` for data, `FRAME c|b gap KIND` for gaps, `close`.
    struct Talk {
        r: Reassembler,
        log: Vec<String>,
        frame: u64,
    }

    const C: u16 = 40000;

    fn line(e: &Event<'_>) -> Option<String> {
        let who = |a: &SocketAddr| if a.port() == C { "c" } else { "b" };
        match e {
            Event::Data { src, bytes, at, .. } => Some(format!(
                "{} {} {}",
                at.frame,
                who(src),
                String::from_utf8_lossy(bytes)
            )),
            Event::Gap { src, kind, at, .. } => {
                Some(format!("{} {} gap {kind:?}", at.frame, who(src)))
            }
            Event::Close { .. } => Some("close".to_string()),
            Event::Retransmission { src, at, .. } => {
                Some(format!("{} {} retransmission", at.frame, who(src)))
            }
            Event::ConflictingOverlap {
                src, at, offset, ..
            } => Some(format!("{} {} conflict at {offset}", at.frame, who(src))),
            _ => None,
        }
    }

    impl Talk {
        /// After the handshake: the client's data starts at 100, the broker's at 500.
        fn new(limits: Limits) -> Talk {
            let mut t = Talk {
                r: Reassembler::new(limits),
                log: Vec::new(),
                frame: 0,
            };
            t.send(true, "S", 99, 0, b"");
            t.send(false, "SA", 499, 100, b"");
            t.send(true, "A", 100, 500, b"");
            t
        }

        /// One packet; `flags` holds S, A, F, R.
        fn send(&mut self, from_client: bool, flags: &str, seq: u32, ack: u32, payload: &[u8]) {
            let (c, b) = (
                SocketAddr::from(([10, 0, 0, 1], C)),
                SocketAddr::from(([10, 0, 0, 2], 9092)),
            );
            let (src, dst) = if from_client { (c, b) } else { (b, c) };
            let seg = TcpSegment {
                src,
                dst,
                seq,
                ack,
                syn: flags.contains('S'),
                fin: flags.contains('F'),
                rst: flags.contains('R'),
                has_ack: flags.contains('A'),
                payload,
                missing: 0,
            };
            self.frame += 1;
            let at = At {
                frame: self.frame,
                ts_nanos: 0,
            };
            let log = &mut self.log;
            self.r.segment(&seg, at, &mut |e| log.extend(line(&e)));
        }

        fn finish(&mut self) {
            let log = &mut self.log;
            let at = At {
                frame: self.frame,
                ts_nanos: 0,
            };
            self.r.finish(at, &mut |e| log.extend(line(&e)));
        }

        /// The client's `abc` (frame 4), then the broker's answer `XYZ` (frame 5), which
        /// acknowledges `abcdef`: the client's `def` is late or lost.
        fn answered_early(limits: Limits) -> Talk {
            let mut t = Talk::new(limits);
            t.send(true, "A", 100, 500, b"abc");
            t.send(false, "A", 500, 106, b"XYZ");
            t
        }
    }

    /// A retransmission of one delivered segment, or of several collapsed into one, is
    /// counted; with other bytes it is also a conflicting overlap, at its start. Only the
    /// ranges and hashes of the delivered segments are kept (`delivered.rs`).
    #[test]
    fn retransmissions_are_compared_with_the_segments_they_repeat() {
        let mut t = Talk::new(Limits::default());
        t.send(true, "A", 100, 500, b"abc");
        t.send(true, "A", 103, 500, b"defg");
        t.send(true, "A", 103, 500, b"defg");
        t.send(true, "A", 103, 500, b"deXg");
        t.send(true, "A", 100, 500, b"abcdefg");
        t.send(true, "A", 100, 500, b"abcdeXg");
        assert_eq!(
            t.log,
            [
                "4 c abc",
                "5 c defg",
                "6 c retransmission",
                "7 c conflict at 3",
                "7 c retransmission",
                "8 c retransmission",
                "9 c conflict at 0",
                "9 c retransmission",
            ]
        );
    }

    /// A segment that repeats delivered bytes and brings new ones: the repeated part is
    /// compared (a difference is a conflict at its start), the new part goes out.
    #[test]
    fn a_partial_overlap_compares_the_repeated_part_and_delivers_the_rest() {
        let mut t = Talk::new(Limits::default());
        t.send(true, "A", 100, 500, b"abc");
        t.send(true, "A", 103, 500, b"defg");
        t.send(true, "A", 103, 500, b"defgHIJ");
        t.send(true, "A", 107, 500, b"XIJKL");
        assert_eq!(
            t.log,
            [
                "4 c abc",
                "5 c defg",
                "6 c HIJ",
                "7 c conflict at 7",
                "7 c KL"
            ]
        );
    }

    /// What the hashes cannot do: bytes of a segment a retransmission covers only in part are
    /// not compared (the copy of last bytes this replaced did compare them), while a segment
    /// it covers whole still is. And a gap ends what is compared.
    #[test]
    fn segments_covered_in_part_or_before_a_gap_are_not_compared() {
        let mut t = Talk::new(Limits::default());
        t.send(true, "A", 100, 500, b"abc");
        t.send(true, "A", 103, 500, b"defg");
        t.send(true, "A", 110, 500, b"hij");
        // `eXg` lies inside `defg`; `cdXfgh` covers `defg` whole.
        t.send(true, "A", 104, 500, b"eXg");
        t.send(true, "A", 102, 500, b"cdXfg");
        assert_eq!(
            t.log,
            [
                "4 c abc",
                "5 c defg",
                "7 c retransmission",
                "8 c conflict at 2",
                "8 c retransmission",
            ]
        );
        // A hole declared lost: what came before it is no longer compared, what came after is.
        t.finish();
        let mut t = Talk::new(Limits {
            max_buffered: 0,
            ..Limits::default()
        });
        t.send(true, "A", 100, 500, b"abc");
        t.send(true, "A", 106, 500, b"ghi");
        t.send(true, "A", 106, 500, b"gXi");
        t.send(true, "A", 100, 500, b"aXc");
        assert_eq!(
            t.log,
            [
                "4 c abc",
                "5 c gap Lost(3)",
                "5 c ghi",
                "6 c conflict at 6",
                "6 c retransmission",
                "7 c retransmission",
            ]
        );
    }

    /// The late end of the question fills the hole; the held answer follows it.
    #[test]
    fn answer_before_the_end_of_its_question_is_held_until_it_comes() {
        let mut t = Talk::answered_early(Limits::default());
        assert_eq!(t.log, ["4 c abc"]);
        t.send(true, "A", 103, 500, b"def");
        assert_eq!(t.log, ["4 c abc", "6 c def", "5 b XYZ"]);
        t.finish();
        assert_eq!(t.log.len(), 4, "{:?}", t.log);
    }

    /// What the held direction says next waits behind the held answer, even when it asks
    /// for nothing missing.
    #[test]
    fn later_pieces_of_the_held_direction_stay_behind() {
        let mut t = Talk::answered_early(Limits::default());
        t.send(false, "A", 503, 103, b"UVW");
        assert_eq!(t.log, ["4 c abc"]);
        t.send(true, "A", 103, 500, b"def");
        assert_eq!(t.log, ["4 c abc", "7 c def", "5 b XYZ", "6 b UVW"]);
    }

    /// Past the reorder window the hole is lost, dated by the answer that showed it, and the
    /// answer goes out after it; the segment coming later still is a retransmission.
    #[test]
    fn held_answer_waits_the_reorder_window_then_the_hole_is_lost() {
        let limits = Limits {
            reorder_window: 4,
            ..Limits::default()
        };
        let mut t = Talk::answered_early(limits);
        t.send(true, "A", 103, 503, b"");
        t.send(true, "A", 103, 503, b"");
        t.send(true, "A", 103, 503, b"");
        assert_eq!(t.log, ["4 c abc"]);
        t.send(true, "A", 103, 503, b"");
        assert_eq!(t.log, ["4 c abc", "5 c gap Lost(3)", "5 b XYZ"]);
        t.send(true, "A", 103, 503, b"def");
        assert_eq!(
            t.log.last().map(String::as_str),
            Some("10 c retransmission")
        );
    }

    /// Held bytes count against `max_buffered`, with their bookkeeping: past it the hole is
    /// lost at once.
    #[test]
    fn held_bytes_past_the_buffer_limit_declare_the_hole_lost() {
        // The held answer `XYZ` is one piece of 3 bytes.
        let held = 3 + PIECE_OVERHEAD;
        let limits = Limits {
            max_buffered: held - 1,
            ..Limits::default()
        };
        let t = Talk::answered_early(limits);
        assert_eq!(t.log, ["4 c abc", "5 c gap Lost(3)", "5 b XYZ"]);
        assert_eq!(t.r.buffer_limit_hits, 1);
        // Within the limit nothing is declared.
        let t = Talk::answered_early(Limits {
            max_buffered: held,
            ..Limits::default()
        });
        assert_eq!(t.log, ["4 c abc"]);
        assert_eq!(t.r.buffer_limit_hits, 0);
    }

    /// The overhead the documentation and `--help` give (160 bytes on 64-bit targets) is the
    /// one counted, and it covers at least a piece's entry and a small allocation.
    #[test]
    fn piece_overhead_is_as_documented() {
        #[cfg(target_pointer_width = "64")]
        assert_eq!(PIECE_OVERHEAD, 160);
        assert!(PIECE_OVERHEAD >= std::mem::size_of::<(u64, Waiting)>() + 32);
        assert!(PIECE_OVERHEAD >= std::mem::size_of::<Held>() + 32);
    }

    /// 1-byte pieces with a hole before each: the limit is hit by their memory, after
    /// `max_buffered / (1 + PIECE_OVERHEAD)` pieces, though their payload is far below it.
    #[test]
    fn one_byte_pieces_hit_the_limit_by_memory_not_payload() {
        let fit = 10;
        let mut t = Talk::new(Limits {
            max_buffered: fit * (1 + PIECE_OVERHEAD),
            ..Limits::default()
        });
        // Pieces at 101, 103, ...: the byte before each is missing.
        for k in 0..fit as u32 {
            t.send(true, "A", 101 + 2 * k, 500, b"x");
        }
        assert_eq!(t.log, Vec::<String>::new());
        assert_eq!(t.r.buffer_limit_hits, 0);
        // One more and the first hole is declared lost; the piece after it goes out.
        t.send(true, "A", 101 + 2 * fit as u32, 500, b"x");
        assert_eq!(t.log, ["14 c gap Lost(1)", "4 c x"]);
        assert_eq!(t.r.buffer_limit_hits, 1);
        t.r.conns.check();
    }

    /// Held data counts against the total budget as it does per direction.
    #[test]
    fn held_bytes_count_against_the_total_budget() {
        let held = 3 + PIECE_OVERHEAD;
        let t = Talk::answered_early(Limits {
            max_buffered_total: held - 1,
            ..Limits::default()
        });
        assert_eq!(t.log, ["4 c abc", "5 c gap Lost(3)", "5 b XYZ"]);
        assert_eq!((t.r.buffer_limit_hits, t.r.total_limit_hits), (0, 1));
        t.r.conns.check();
        let t = Talk::answered_early(Limits {
            max_buffered_total: held,
            ..Limits::default()
        });
        assert_eq!(t.log, ["4 c abc"]);
        assert_eq!(t.r.total_limit_hits, 0);
        assert_eq!(t.r.conns.total(), held);
        t.r.conns.check();
    }

    /// Events of several connections, as `(stream, what)`.
    fn by_stream(e: &Event<'_>) -> Option<(u32, String)> {
        match e {
            Event::Close { stream, .. } => Some((*stream, "close".to_string())),
            Event::Gap { stream, kind, .. } => Some((*stream, format!("gap {kind:?}"))),
            Event::Data { stream, bytes, .. } => {
                Some((*stream, String::from_utf8_lossy(bytes).into_owned()))
            }
            _ => None,
        }
    }

    /// Feeds `s` as frame `frame`, logging events by stream.
    fn feed(r: &mut Reassembler, s: &TcpSegment<'_>, frame: u64, log: &mut Vec<(u32, String)>) {
        let at = At { frame, ts_nanos: 0 };
        r.segment(s, at, &mut |e| log.extend(by_stream(&e)));
        r.conns.check();
    }

    /// Past `max_connections` the connection idle longest goes, however many there are; a
    /// packet moves its connection to the back of the idle order.
    #[test]
    fn eviction_picks_the_connection_idle_longest() {
        let mut r = Reassembler::new(Limits {
            max_connections: 3,
            ..Limits::default()
        });
        let mut log = Vec::new();
        // Streams 0, 1, 2 on ports 1, 2, 3 (frames 1-3); then stream 0 speaks again.
        for port in 1..=3u16 {
            feed(
                &mut r,
                &seg(port, true, false, 100, b""),
                port.into(),
                &mut log,
            );
        }
        feed(&mut r, &seg(1, false, false, 101, b"a"), 4, &mut log);
        assert_eq!(log, [(0, "a".to_string())]);
        // A fourth connection evicts stream 1, idle since frame 2, not stream 0.
        feed(&mut r, &seg(4, true, false, 100, b""), 5, &mut log);
        assert_eq!(log.last(), Some(&(1, "close".to_string())));
        // Then stream 2 (frame 3), then stream 0 (frame 4), then stream 3 (frame 5).
        for (port, frame) in [(5u16, 6u64), (6, 7), (7, 8)] {
            feed(&mut r, &seg(port, true, false, 100, b""), frame, &mut log);
        }
        let closed: Vec<u32> = log
            .iter()
            .filter(|(_, what)| what == "close")
            .map(|(s, _)| *s)
            .collect();
        assert_eq!(closed, [1, 2, 0, 3]);
        assert_eq!((r.evicted, r.conns.len()), (4, 3));
    }

    /// With equal last-seen frames the older connection goes first.
    #[test]
    fn eviction_ties_go_to_the_older_connection() {
        let mut r = Reassembler::new(Limits {
            max_connections: 2,
            ..Limits::default()
        });
        let mut log = Vec::new();
        for port in 1..=4u16 {
            feed(&mut r, &seg(port, true, false, 100, b""), 7, &mut log);
        }
        assert_eq!(log, [(0, "close".to_string()), (1, "close".to_string())]);
    }

    /// Past `max_buffered_total` the direction holding the most is emptied (its holes
    /// declared lost, its pieces sent), whichever connection's packet passed the budget.
    #[test]
    fn total_budget_frees_the_direction_holding_the_most() {
        let unit = 1 + PIECE_OVERHEAD;
        let mut r = Reassembler::new(Limits {
            max_buffered_total: 4 * unit,
            ..Limits::default()
        });
        let mut log = Vec::new();
        for port in 1..=2u16 {
            feed(
                &mut r,
                &seg(port, true, false, 100, b""),
                port.into(),
                &mut log,
            );
        }
        // Stream 0 buffers three 1-byte pieces, stream 1 one: the budget, exactly.
        for (i, seq) in [102u32, 104, 106].into_iter().enumerate() {
            feed(
                &mut r,
                &seg(1, false, false, seq, b"a"),
                3 + i as u64,
                &mut log,
            );
        }
        feed(&mut r, &seg(2, false, false, 102, b"b"), 6, &mut log);
        assert_eq!((log.len(), r.conns.total()), (0, 4 * unit));
        // Stream 1's second piece passes it: stream 0, holding the most, is emptied.
        feed(&mut r, &seg(2, false, false, 104, b"b"), 7, &mut log);
        let lost = || (0, "gap Lost(1)".to_string());
        let a = || (0, "a".to_string());
        assert_eq!(log, [lost(), a(), lost(), a(), lost(), a()]);
        assert_eq!((r.total_limit_hits, r.buffer_limit_hits), (1, 0));
        assert_eq!(r.conns.total(), 2 * unit);
        // Closing a connection gives its memory back.
        r.finish(At::default(), &mut |_| {});
        assert_eq!(r.conns.total(), 0);
        r.conns.check();
    }

    /// End of input, FIN both ways and RST each flush: the hole is lost, then the held
    /// answer goes out, then the connection closes.
    #[test]
    fn end_fin_and_rst_flush_the_hole_then_the_held_answer() {
        let flushed = ["4 c abc", "5 c gap Lost(3)", "5 b XYZ", "close"];
        let mut t = Talk::answered_early(Limits::default());
        t.finish();
        assert_eq!(t.log, flushed);
        let mut t = Talk::answered_early(Limits::default());
        t.send(true, "AF", 106, 503, b"");
        assert_eq!(t.log, ["4 c abc"]);
        t.send(false, "AF", 503, 107, b"");
        assert_eq!(t.log, flushed);
        let mut t = Talk::answered_early(Limits::default());
        t.send(true, "AR", 103, 503, b"");
        assert_eq!(t.log, flushed);
    }

    /// Both directions held, each behind the other's held piece (possible only with a
    /// retransmission whose original the capture missed): they go out at once, the one held
    /// longer first, rather than waiting out the window.
    #[test]
    fn pieces_held_behind_each_other_go_out() {
        let mut t = Talk::new(Limits::default());
        // The client acknowledges the broker's XYZ, not captured; then the broker's
        // retransmission of XYZ acknowledges all the client said.
        t.send(true, "A", 100, 503, b"abc");
        t.send(true, "A", 103, 503, b"def");
        assert_eq!(t.log, Vec::<String>::new());
        t.send(false, "A", 500, 106, b"XYZ");
        assert_eq!(t.log, ["4 c abc", "5 c def", "6 b XYZ"]);
        t.finish();
        assert_eq!(t.log.len(), 4, "{:?}", t.log);
    }
}
