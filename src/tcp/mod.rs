//! TCP reassembly, per direction: segments in, ordered byte streams out.
//!
//! Sequence numbers are compared with wrapping arithmetic; out-of-order segments wait in a
//! bounded buffer; retransmissions and overlaps are dropped (an overlap whose bytes differ from
//! what was delivered is reported); SYN, FIN and RST are followed, and a SYN that reuses a
//! closed 4-tuple starts a new stream. A hole that is never filled becomes a gap event, so the
//! layer above can say which message was lost and resynchronise.
// Input-derived values never index, unwrap or expect here: a hostile capture must not panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::capture::net::TcpSegment;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;

/// Limits that keep memory bounded whatever the capture holds.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Out-of-order bytes buffered per direction before the hole is declared lost.
    pub max_buffered: usize,
    /// Connections tracked at once; past it, the connection idle longest is dropped.
    pub max_connections: usize,
    /// Packets of a connection after which a hole the receiver has acknowledged is declared
    /// lost (the capture missed it), leaving room for segments merely reordered in the capture.
    pub reorder_window: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_buffered: 16 * 1024 * 1024,
            max_connections: 100_000,
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
    /// The connection ended (FIN both ways, RST, reuse of its 4-tuple, or end of capture).
    Close { stream: u32 },
}

/// Bytes of delivered data kept per direction to check overlaps against.
const RECENT: usize = 64 * 1024;

#[derive(Debug, Default)]
struct Half {
    /// Next expected sequence number, once known.
    next: Option<u32>,
    /// Stream offset of `next` (bytes delivered or skipped so far).
    next_off: u64,
    /// Out-of-order segments by stream offset: (bytes, bytes cut by snaplen, frame).
    ooo: BTreeMap<u64, (Vec<u8>, usize, At)>,
    ooo_bytes: usize,
    /// The last bytes delivered, ending at `next_off`.
    recent: Vec<u8>,
    fin: bool,
    /// Set when the peer acknowledged bytes past `next` that we have not seen: the packet
    /// count at that moment.
    acked_hole_since: Option<u32>,
    acked_to: Option<u32>,
}

#[derive(Debug)]
struct Conn {
    id: u32,
    addrs: [SocketAddr; 2],
    halves: [Half; 2],
    packets: u32,
    last_seen: u64,
    rst: bool,
    had_data: bool,
    /// Ended and reported; kept (without buffers) so that late retransmissions are known
    /// for what they are rather than taken for a new connection picked up mid-stream.
    closed: bool,
}

pub struct Reassembler {
    limits: Limits,
    conns: HashMap<(SocketAddr, SocketAddr), Conn>,
    next_id: u32,
    /// Connections dropped because of `max_connections`.
    pub evicted: u64,
    /// Holes declared lost because out-of-order data passed `max_buffered`.
    pub buffer_limit_hits: u64,
    /// Closed connections still in `conns`, oldest first: only the most recent few are kept,
    /// so that tracking stays proportional to the connections open, not to all ever seen.
    closed: std::collections::VecDeque<(SocketAddr, SocketAddr)>,
}

/// Closed connections kept to recognise late retransmissions.
const KEEP_CLOSED: usize = 4096;

fn key(a: SocketAddr, b: SocketAddr) -> (SocketAddr, SocketAddr) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

fn seq_diff(a: u32, b: u32) -> i64 {
    i64::from(a.wrapping_sub(b) as i32)
}

impl Reassembler {
    pub fn new(limits: Limits) -> Reassembler {
        Reassembler {
            limits,
            conns: HashMap::new(),
            next_id: 0,
            evicted: 0,
            buffer_limit_hits: 0,
            closed: std::collections::VecDeque::new(),
        }
    }

    /// Feeds one segment; events go to `emit` in order.
    pub fn segment(&mut self, seg: &TcpSegment<'_>, at: At, emit: &mut impl FnMut(Event<'_>)) {
        let k = key(seg.src, seg.dst);
        // A client SYN on a 4-tuple whose connection has ended or carried data starts anew.
        if seg.syn && !seg.has_ack {
            let reuse = self.conns.get(&k).is_some_and(|c| {
                let d = usize::from(*crate::be::pick(&c.addrs, 0) != seg.src);
                c.rst
                    || c.halves.iter().all(|h| h.fin)
                    || (c.had_data
                        && crate::be::pick(&c.halves, d).next != Some(seg.seq.wrapping_add(1)))
            });
            if reuse {
                if let Some(c) = self.conns.remove(&k) {
                    if !c.closed {
                        Self::close(c, at, &mut *emit);
                    }
                }
            }
        }
        if !self.conns.contains_key(&k) {
            if self.conns.len() >= self.limits.max_connections {
                self.evict_one(at, emit);
            }
            let id = self.next_id;
            self.next_id += 1;
            self.conns.insert(
                k,
                Conn {
                    id,
                    addrs: [seg.src, seg.dst],
                    halves: [Half::default(), Half::default()],
                    packets: 0,
                    last_seen: at.frame,
                    rst: false,
                    had_data: false,
                    closed: false,
                },
            );
            emit(Event::Open {
                stream: id,
                a: seg.src,
                b: seg.dst,
                syn_from: (seg.syn && !seg.has_ack).then_some(seg.src),
            });
        }
        let Some(conn) = self.conns.get_mut(&k) else {
            return;
        };
        conn.packets = conn.packets.wrapping_add(1);
        conn.last_seen = at.frame;
        let d = usize::from(*crate::be::pick(&conn.addrs, 0) != seg.src);
        let (id, src, dst) = (conn.id, seg.src, seg.dst);
        let limits = self.limits;
        let packets = conn.packets;
        if seg.rst {
            conn.rst = true;
        }
        // The acknowledgement tells what the other direction's receiver has: a hole it has
        // acknowledged is a segment the capture missed. When the acknowledging segment also
        // carries data (an answer), the hole is declared at once so that what follows it is
        // delivered before the answer; a bare ACK waits `reorder_window` packets, in case the
        // capture merely reordered the missing segment.
        if seg.has_ack {
            let answering = !seg.payload.is_empty();
            let other = crate::be::pick_mut(&mut conn.halves, 1 - d);
            if let Some(next) = other.next {
                if seq_diff(seg.ack, next) > 0 {
                    if other.acked_hole_since.is_none() {
                        other.acked_hole_since = Some(packets);
                    }
                    other.acked_to = Some(match other.acked_to {
                        Some(t) if seq_diff(t, seg.ack) > 0 => t,
                        _ => seg.ack,
                    });
                    if answering {
                        let (s, t) = (
                            *crate::be::pick(&conn.addrs, 1 - d),
                            *crate::be::pick(&conn.addrs, d),
                        );
                        Self::skip_hole(other, Some(seg.ack), at, id, s, t, emit);
                    }
                } else {
                    other.acked_hole_since = None;
                    other.acked_to = None;
                }
            }
        }
        {
            let half = crate::be::pick_mut(&mut conn.halves, d);
            if seg.syn {
                half.next = Some(seg.seq.wrapping_add(1));
            } else if !seg.payload.is_empty() || seg.missing > 0 {
                conn.had_data = true;
                if Self::data(half, seg, at, id, limits, emit) {
                    self.buffer_limit_hits += 1;
                }
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
        for side in 0..2 {
            let half = crate::be::pick_mut(&mut conn.halves, side);
            if let (Some(since), Some(to)) = (half.acked_hole_since, half.acked_to) {
                if packets.wrapping_sub(since) >= limits.reorder_window {
                    let (s, t) = (
                        *crate::be::pick(&conn.addrs, side),
                        *crate::be::pick(&conn.addrs, 1 - side),
                    );
                    Self::skip_hole(half, Some(to), at, id, s, t, emit);
                }
            }
        }
        let _ = (src, dst);
        if conn.rst || conn.halves.iter().all(|h| h.fin) {
            let done = conn.rst || conn.halves.iter().all(|h| h.ooo.is_empty());
            if done && !conn.closed {
                Self::close_in_place(conn, at, emit);
                self.closed.push_back(k);
                while self.closed.len() > KEEP_CLOSED {
                    if let Some(old) = self.closed.pop_front() {
                        if self.conns.get(&old).is_some_and(|c| c.closed) {
                            self.conns.remove(&old);
                        }
                    }
                }
            }
        }
    }

    fn data(
        half: &mut Half,
        seg: &TcpSegment<'_>,
        at: At,
        id: u32,
        limits: Limits,
        emit: &mut impl FnMut(Event<'_>),
    ) -> bool {
        let (src, dst) = (seg.src, seg.dst);
        let next = match half.next {
            Some(n) => n,
            None => {
                // Picked up mid-connection: start here, and say so.
                half.next = Some(seg.seq);
                emit(Event::Gap {
                    stream: id,
                    src,
                    dst,
                    kind: GapKind::MidStream,
                    at,
                });
                seg.seq
            }
        };
        let delta = seq_diff(seg.seq, next);
        let len = seg.payload.len() as i64;
        if delta > 0 {
            let off = half.next_off + delta as u64;
            if !half.ooo.contains_key(&off) {
                half.ooo_bytes += seg.payload.len();
                half.ooo
                    .insert(off, (seg.payload.to_vec(), seg.missing, at));
            } else {
                emit(Event::Retransmission {
                    stream: id,
                    src,
                    at,
                });
            }
            if half.ooo_bytes > limits.max_buffered {
                Self::skip_hole(half, None, at, id, src, dst, emit);
                return true;
            }
            return false;
        }
        let old = (-delta).min(len) as usize;
        if old > 0 {
            // Compare the repeated bytes with what was delivered.
            let back = (-delta) as usize;
            if back <= half.recent.len() {
                let start = half.recent.len() - back;
                let same = half
                    .recent
                    .get(start..start + old)
                    .zip(seg.payload.get(..old))
                    .is_none_or(|(a, b)| a == b);
                if !same {
                    emit(Event::ConflictingOverlap {
                        stream: id,
                        src,
                        at,
                        offset: half.next_off - back as u64,
                    });
                }
            }
        }
        // The segment covers [delta, delta + len + missing) relative to `next`: bytes before
        // 0 were seen already, the snap-length-cut tail is a gap only where it is new.
        let total_end = delta + len + seg.missing as i64;
        if total_end <= 0 {
            emit(Event::Retransmission {
                stream: id,
                src,
                at,
            });
            return false;
        }
        let fresh = seg.payload.get(old..).unwrap_or(&[]);
        Self::deliver(half, fresh, at, id, src, dst, emit);
        let cut_new = total_end - (delta + len).max(0);
        if cut_new > 0 {
            Self::gap(
                half,
                cut_new as u64,
                GapKind::Truncated(cut_new as u64),
                at,
                id,
                src,
                dst,
                emit,
            );
        }
        Self::drain(half, id, src, dst, emit);
        false
    }

    fn deliver(
        half: &mut Half,
        bytes: &[u8],
        at: At,
        id: u32,
        src: SocketAddr,
        dst: SocketAddr,
        emit: &mut impl FnMut(Event<'_>),
    ) {
        if bytes.is_empty() {
            return;
        }
        if let Some(n) = half.next.as_mut() {
            *n = n.wrapping_add(bytes.len() as u32);
        }
        half.next_off += bytes.len() as u64;
        // Keep at least the last RECENT bytes; trim only when twice that, so the copy is
        // amortised over many segments.
        if half.recent.len() + bytes.len() > 2 * RECENT {
            let total = half.recent.len() + bytes.len();
            let drop = (total - RECENT).min(half.recent.len());
            half.recent.drain(..drop);
        }
        let tail = bytes.len().saturating_sub(2 * RECENT);
        half.recent
            .extend_from_slice(bytes.get(tail..).unwrap_or(&[]));
        half.acked_hole_since = None;
        half.acked_to = None;
        emit(Event::Data {
            stream: id,
            src,
            dst,
            bytes,
            at,
        });
    }

    #[allow(clippy::too_many_arguments)]
    fn gap(
        half: &mut Half,
        n: u64,
        kind: GapKind,
        at: At,
        id: u32,
        src: SocketAddr,
        dst: SocketAddr,
        emit: &mut impl FnMut(Event<'_>),
    ) {
        if let Some(x) = half.next.as_mut() {
            *x = x.wrapping_add(n as u32);
        }
        half.next_off += n;
        half.recent.clear();
        emit(Event::Gap {
            stream: id,
            src,
            dst,
            kind,
            at,
        });
    }

    /// Delivers buffered segments that now continue the stream.
    fn drain(
        half: &mut Half,
        id: u32,
        src: SocketAddr,
        dst: SocketAddr,
        emit: &mut impl FnMut(Event<'_>),
    ) {
        while let Some((&off, _)) = half.ooo.iter().next() {
            if off > half.next_off {
                break;
            }
            let Some((bytes, missing, at)) = half.ooo.remove(&off) else {
                break;
            };
            half.ooo_bytes -= bytes.len();
            let skip = (half.next_off - off) as usize;
            let total_end = off + (bytes.len() + missing) as u64;
            if total_end <= half.next_off {
                emit(Event::Retransmission {
                    stream: id,
                    src,
                    at,
                });
                continue;
            }
            let fresh = bytes.get(skip.min(bytes.len())..).unwrap_or(&[]);
            Self::deliver(half, fresh, at, id, src, dst, emit);
            if total_end > half.next_off {
                let cut_new = total_end - half.next_off;
                Self::gap(
                    half,
                    cut_new,
                    GapKind::Truncated(cut_new),
                    at,
                    id,
                    src,
                    dst,
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
        id: u32,
        src: SocketAddr,
        dst: SocketAddr,
        emit: &mut impl FnMut(Event<'_>),
    ) {
        let Some(next) = half.next else { return };
        let first = half.ooo.keys().next().copied();
        let to_off = to.map(|t| half.next_off + seq_diff(t, next).max(0) as u64);
        let target = match (first, to_off) {
            (Some(f), Some(t)) => f.min(t),
            (Some(f), None) => f,
            (None, Some(t)) => t,
            (None, None) => return,
        };
        if target > half.next_off {
            let n = target - half.next_off;
            Self::gap(half, n, GapKind::Lost(n), at, id, src, dst, emit);
        }
        half.acked_hole_since = None;
        half.acked_to = None;
        Self::drain(half, id, src, dst, emit);
    }

    fn close(mut c: Conn, at: At, emit: &mut impl FnMut(Event<'_>)) {
        Self::close_in_place(&mut c, at, emit);
    }

    /// Flushes what is buffered (declaring holes lost), reports the end, frees the buffers.
    fn close_in_place(c: &mut Conn, at: At, emit: &mut impl FnMut(Event<'_>)) {
        if c.closed {
            return;
        }
        for side in 0..2 {
            let (s, t) = (
                *crate::be::pick(&c.addrs, side),
                *crate::be::pick(&c.addrs, 1 - side),
            );
            while !crate::be::pick_mut(&mut c.halves, side).ooo.is_empty() {
                Self::skip_hole(
                    crate::be::pick_mut(&mut c.halves, side),
                    None,
                    at,
                    c.id,
                    s,
                    t,
                    emit,
                );
            }
            crate::be::pick_mut(&mut c.halves, side).recent = Vec::new();
        }
        c.closed = true;
        emit(Event::Close { stream: c.id });
    }

    fn evict_one(&mut self, at: At, emit: &mut impl FnMut(Event<'_>)) {
        let oldest = self
            .conns
            .iter()
            .min_by_key(|(_, c)| c.last_seen)
            .map(|(k, _)| *k);
        if let Some(k) = oldest {
            if let Some(c) = self.conns.remove(&k) {
                if !c.closed {
                    self.evicted += 1;
                    Self::close(c, at, emit);
                }
            }
        }
    }

    /// End of input: flushes every connection, declaring holes lost, in stream order.
    pub fn finish(&mut self, at: At, emit: &mut impl FnMut(Event<'_>)) {
        let mut all: Vec<Conn> = self.conns.drain().map(|(_, c)| c).collect();
        all.sort_by_key(|c| c.id);
        for c in all {
            Self::close(c, at, emit);
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
}
