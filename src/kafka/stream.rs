//! Kafka over reassembled TCP: which connections carry Kafka, cutting each direction into
//! frames (resynchronising after gaps and mid-stream starts), and pairing every response with
//! its request by correlation id.

use super::decode::{DecodeOptions, ErrorKind};
use super::framing::plausible_request_at;
use super::message::{
    decode_request, decode_response, decode_response_header_only, peek_request,
    peek_response_correlation, Message,
};
use super::message::{decode_request_with, decode_response_with};
use super::names;
use super::problem::ProblemKind;
use super::schema::{registry, Direction};
use super::topics::TopicNames;
use super::Diagnosis;
use crate::tcp::{At, Event, GapKind};
use std::collections::HashMap;
use std::net::SocketAddr;

#[derive(Debug, Clone)]
pub struct Config {
    /// Broker ports.
    pub ports: Vec<u16>,
    /// Find Kafka on other ports by what the client sends first.
    pub detect: bool,
    /// A claimed frame size above this is garbage (Kafka's own default request limit).
    pub max_frame: usize,
    /// Requests waiting for a response per connection; the oldest is dropped past it.
    pub max_pending: usize,
    /// Limits for decoding each message.
    pub decode: DecodeOptions,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            ports: vec![9092],
            detect: true,
            max_frame: 100 * 1024 * 1024,
            max_pending: 10_000,
            decode: DecodeOptions::default(),
        }
    }
}

/// The request a response answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestInfo {
    pub frame: u64,
    pub ts_nanos: i64,
    pub api_key: i16,
    pub api_version: i16,
    pub correlation_id: i32,
}

/// One Kafka message found in a stream.
#[derive(Debug)]
pub struct Record<'a> {
    pub stream: u32,
    /// Packet that completed the message.
    pub frame: u64,
    /// Packet that carried the message's first byte (the message's bytes are in the packets
    /// of its direction from this one to `frame`).
    pub first_frame: u64,
    pub ts_nanos: i64,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub msg: Message,
    pub bytes: &'a [u8],
    /// For a response: its request, when captured.
    pub request: Option<RequestInfo>,
    /// For a response whose request was not captured: the API was inferred.
    pub assumed: bool,
    /// Only the start of the frame was captured (the rest fell in a gap); shown as far as it
    /// goes.
    pub partial: bool,
}

impl Record<'_> {
    pub fn latency_nanos(&self) -> Option<i64> {
        self.request.map(|r| self.ts_nanos - r.ts_nanos)
    }
}

/// Things worth telling that are not messages.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// A frame that a gap cut: `present` of its bytes were captured.
    LostInGap {
        stream: u32,
        src: SocketAddr,
        dst: SocketAddr,
        at: At,
        present: usize,
        kind: GapKind,
    },
    /// Bytes skipped to find the next frame boundary after a gap, a mid-stream start or a
    /// size prefix that cannot be a frame.
    Resync {
        stream: u32,
        src: SocketAddr,
        dst: SocketAddr,
        at: At,
        skipped: usize,
        reason: ResyncReason,
    },
    /// A size prefix that cannot be a frame.
    BadSize {
        stream: u32,
        src: SocketAddr,
        at: At,
        size: i64,
    },
    /// The stream ended inside a frame.
    EndedInFrame {
        stream: u32,
        src: SocketAddr,
        present: usize,
        want: usize,
    },
    /// A request whose response never came.
    Unanswered {
        stream: u32,
        src: SocketAddr,
        dst: SocketAddr,
        request: RequestInfo,
    },
    Retransmission {
        stream: u32,
        at: At,
    },
    ConflictingOverlap {
        stream: u32,
        at: At,
        offset: u64,
    },
    /// A Kafka connection seen for the first time.
    Connection {
        stream: u32,
        client: SocketAddr,
        broker: SocketAddr,
        detected: bool,
    },
    /// A request dropped from the pending table because of `max_pending`.
    PendingDropped {
        stream: u32,
        request: RequestInfo,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResyncReason {
    MidStream,
    Gap,
    BadSize,
}

/// Receives what the Kafka layer finds.
pub trait Sink {
    fn message(&mut self, rec: &Record<'_>);
    fn notice(&mut self, n: &Notice);
}

#[derive(Debug, Default)]
struct KHalf {
    buf: Vec<u8>,
    pos: usize,
    /// The stream position is unknown: look for the next plausible frame start.
    resync: bool,
    why: Option<ResyncReason>,
    scan: Scan,
    /// Packet of the last bytes added, for messages completed when the connection ends.
    last_at: At,
    /// Bytes already dropped while looking for a frame boundary (the search window is
    /// bounded), told in the resync notice with the rest.
    dropped: usize,
    /// Where each packet's bytes begin in `buf`, with its frame number: which packets a
    /// message came in (for `-w`). Only marks at or after `pos` (and the one before) are kept.
    marks: std::collections::VecDeque<(usize, u64)>,
}

impl KHalf {
    /// Appends a packet's bytes.
    fn push(&mut self, bytes: &[u8], frame: u64) {
        self.marks.push_back((self.buf.len(), frame));
        self.buf.extend_from_slice(bytes);
    }

    /// The packet that carried the byte at `off` of `buf`.
    fn frame_at(&self, off: usize) -> u64 {
        self.marks
            .iter()
            .take_while(|(o, _)| *o <= off)
            .last()
            .map_or(self.last_at.frame, |(_, f)| *f)
    }

    /// Forgets marks of packets wholly before `pos`.
    fn prune_marks(&mut self) {
        while self.marks.len() > 1 && self.marks.get(1).is_some_and(|(o, _)| *o <= self.pos) {
            self.marks.pop_front();
        }
    }

    /// Drops the consumed bytes once they are the larger part of the buffer.
    fn compact(&mut self) {
        if self.pos > 0 && self.pos * 2 >= self.buf.len() {
            self.prune_marks();
            self.buf.drain(..self.pos);
            for m in self.marks.iter_mut() {
                m.0 = m.0.saturating_sub(self.pos);
            }
            self.pos = 0;
        }
    }

    /// Forgets everything buffered.
    fn clear(&mut self) {
        self.buf.clear();
        self.marks.clear();
        self.pos = 0;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Undecided,
    Kafka,
    NotKafka,
}

#[derive(Debug)]
struct KConn {
    addrs: [SocketAddr; 2],
    broker: Option<SocketAddr>,
    state: State,
    halves: [KHalf; 2],
    pending: HashMap<i32, RequestInfo>,
    pending_order: std::collections::VecDeque<i32>,
    used: Vec<(i16, i16)>,
    data_events: u32,
}

/// Where a message's bytes came from: the packet of its first byte and the one completing it.
#[derive(Debug, Clone, Copy)]
struct Span {
    first: u64,
    at: At,
}

/// Bytes kept while deciding whether a connection on an unknown port is Kafka.
const DETECT_BUFFER: usize = 64 * 1024;
const DETECT_EVENTS: u32 = 16;
/// Bytes of a frame being waited on that are searched for a request header when an answer to
/// an unseen request arrives (a bogus size prefix is usually followed at once by real frames).
const UNSTICK_SCAN: usize = 1024 * 1024;

/// Bytes kept while looking for a frame boundary before older bytes are dropped.
const RESYNC_WINDOW: usize = 1024 * 1024;

pub struct Tracker {
    cfg: Config,
    conns: HashMap<u32, KConn>,
    topics: TopicNames,
    /// Requests of ended connections that never got a response, listed at the end.
    unanswered: Vec<Notice>,
}

/// Unanswered requests of ended connections held back for the final list.
const KEEP_UNANSWERED: usize = 100_000;

/// The requests of a connection still waiting for a response, in frame order.
fn unanswered_of(stream: u32, c: &KConn) -> Vec<Notice> {
    let Some(broker) = c.broker else {
        return Vec::new();
    };
    let client = if *crate::be::pick(&c.addrs, 0) == broker {
        *crate::be::pick(&c.addrs, 1)
    } else {
        *crate::be::pick(&c.addrs, 0)
    };
    let mut reqs: Vec<RequestInfo> = c.pending.values().copied().collect();
    reqs.sort_by_key(|r| r.frame);
    reqs.into_iter()
        .map(|request| Notice::Unanswered {
            stream,
            src: client,
            dst: broker,
            request,
        })
        .collect()
}

impl Tracker {
    pub fn new(cfg: Config) -> Tracker {
        Tracker {
            cfg,
            conns: HashMap::new(),
            topics: TopicNames::default(),
            unanswered: Vec::new(),
        }
    }

    /// Takes one reassembly event.
    /// Takes one event from reassembly.
    pub fn event(&mut self, ev: Event<'_>, sink: &mut impl Sink) {
        match ev {
            Event::Open {
                stream,
                a,
                b,
                syn_from,
            } => self.open(stream, [a, b], syn_from, sink),
            Event::Data {
                stream,
                src,
                dst,
                bytes,
                at,
            } => self.data(stream, (src, dst), bytes, at, sink),
            Event::Gap {
                stream,
                src,
                dst,
                kind,
                at,
            } => self.gap(stream, (src, dst), kind, at, sink),
            Event::Retransmission { stream, at, .. } => {
                if self.is_kafka(stream) {
                    sink.notice(&Notice::Retransmission { stream, at });
                }
            }
            Event::ConflictingOverlap {
                stream, at, offset, ..
            } => {
                if self.is_kafka(stream) {
                    sink.notice(&Notice::ConflictingOverlap { stream, at, offset });
                }
            }
            Event::Close { stream } => self.close(stream, sink),
        }
    }

    fn is_kafka(&self, stream: u32) -> bool {
        self.conns
            .get(&stream)
            .is_some_and(|c| c.state == State::Kafka)
    }

    /// A new connection: Kafka when one side is on a broker port, else to be decided by
    /// what it says (or not Kafka, without detection).
    fn open(
        &mut self,
        stream: u32,
        [a, b]: [SocketAddr; 2],
        syn_from: Option<SocketAddr>,
        sink: &mut impl Sink,
    ) {
        let on_port = |x: &SocketAddr| self.cfg.ports.contains(&x.port());
        let broker = match (on_port(&a), on_port(&b)) {
            (true, false) => Some(a),
            (false, true) => Some(b),
            (true, true) => Some(if syn_from == Some(a) { b } else { a }),
            (false, false) => None,
        };
        let state = if broker.is_some() {
            State::Kafka
        } else if self.cfg.detect {
            State::Undecided
        } else {
            State::NotKafka
        };
        if let Some(br) = broker {
            let client = if br == a { b } else { a };
            sink.notice(&Notice::Connection {
                stream,
                client,
                broker: br,
                detected: false,
            });
        }
        self.conns.insert(
            stream,
            KConn {
                addrs: [a, b],
                broker,
                state,
                halves: [KHalf::default(), KHalf::default()],
                pending: HashMap::new(),
                pending_order: Default::default(),
                used: Vec::new(),
                data_events: 0,
            },
        );
    }

    /// In-order bytes of one direction.
    fn data(
        &mut self,
        stream: u32,
        (src, dst): (SocketAddr, SocketAddr),
        bytes: &[u8],
        at: At,
        sink: &mut impl Sink,
    ) {
        let cfg = &self.cfg;
        let Some(c) = self.conns.get_mut(&stream) else {
            return;
        };
        let d = usize::from(*crate::be::pick(&c.addrs, 0) != src);
        match c.state {
            State::NotKafka => {}
            State::Undecided => {
                c.data_events += 1;
                let h = crate::be::pick_mut(&mut c.halves, d);
                h.push(bytes, at.frame);
                if plausible_request_at(h.buf.get(h.pos..).unwrap_or(&[]), cfg.max_frame) {
                    c.state = State::Kafka;
                    c.broker = Some(dst);
                    sink.notice(&Notice::Connection {
                        stream,
                        client: src,
                        broker: dst,
                        detected: true,
                    });
                    // Requests first, then whatever the broker already said.
                    Self::cut(c, cfg, &mut self.topics, stream, d, at, sink);
                    Self::cut(c, cfg, &mut self.topics, stream, 1 - d, at, sink);
                } else if c.data_events > DETECT_EVENTS
                    || c.halves.iter().any(|h| h.buf.len() > DETECT_BUFFER)
                {
                    c.state = State::NotKafka;
                    c.halves = [KHalf::default(), KHalf::default()];
                }
            }
            State::Kafka => {
                let h = crate::be::pick_mut(&mut c.halves, d);
                h.last_at = at;
                h.push(bytes, at.frame);
                Self::cut(c, cfg, &mut self.topics, stream, d, at, sink);
            }
        }
    }

    /// Bytes of one direction that will never arrive: report the frame they cut, show what
    /// was captured of it, and look for the next frame boundary after them.
    fn gap(
        &mut self,
        stream: u32,
        (src, dst): (SocketAddr, SocketAddr),
        kind: GapKind,
        at: At,
        sink: &mut impl Sink,
    ) {
        let Some(c) = self.conns.get_mut(&stream) else {
            return;
        };
        let d = usize::from(*crate::be::pick(&c.addrs, 0) != src);
        let is_request = c.broker != Some(src);
        let h = crate::be::pick_mut(&mut c.halves, d);
        // While still looking for a boundary after an earlier gap, the buffered bytes
        // are a frame only from a plausible header on (a response's must answer a
        // pending request); before it they belong to the loss already reported.
        if h.resync && c.state == State::Kafka {
            let data = h.buf.get(h.pos..).unwrap_or(&[]);
            if let Some(i) = partial_candidate(data, is_request, &c.pending, self.cfg.max_frame) {
                let reason = h.why.unwrap_or(ResyncReason::Gap);
                sink.notice(&Notice::Resync {
                    stream,
                    src,
                    dst,
                    at,
                    skipped: i + std::mem::take(&mut h.dropped),
                    reason,
                });
                h.pos += i;
                h.resync = false;
            }
        }
        let resyncing = h.resync;
        let present = if resyncing { 0 } else { h.buf.len() - h.pos };
        // A gap between frames may still have swallowed whole frames: report every
        // loss; only a mid-stream start with nothing buffered is silent here (the
        // resync notice tells it).
        if c.state == State::Kafka && !resyncing && (present > 0 || kind != GapKind::MidStream) {
            sink.notice(&Notice::LostInGap {
                stream,
                src,
                dst,
                at,
                present,
                kind,
            });
        }
        if c.state == State::Kafka && present >= 8 {
            // Show what the gap left of the frame: its header at least.
            let span = Span {
                first: h.frame_at(h.pos),
                at,
            };
            let part = h.buf.split_off(h.pos);
            if is_request {
                Self::on_request(
                    c,
                    &self.cfg,
                    &mut self.topics,
                    stream,
                    src,
                    dst,
                    &part,
                    span,
                    true,
                    sink,
                );
            } else {
                Self::on_response(
                    c,
                    &self.cfg,
                    &mut self.topics,
                    stream,
                    src,
                    dst,
                    &part,
                    span,
                    true,
                    sink,
                );
            }
        }
        let h = crate::be::pick_mut(&mut c.halves, d);
        h.clear();
        h.resync = true;
        h.scan = Scan::default();
        h.why = Some(if kind == GapKind::MidStream {
            ResyncReason::MidStream
        } else {
            ResyncReason::Gap
        });
    }

    /// The connection ended: cut what is left, report what cannot be, forget it.
    fn close(&mut self, stream: u32, sink: &mut impl Sink) {
        let Some(c) = self.conns.get_mut(&stream) else {
            return;
        };
        if c.state == State::Kafka {
            // A frame that never completed but holds the start of another: its size
            // prefix was bogus, and the frames after it are still to be shown.
            for d in 0..2 {
                Self::rescan_at_end(c, &self.cfg, &mut self.topics, stream, d, sink);
            }
            Self::resync_at_end(c, &self.cfg, &mut self.topics, stream, sink);
            Self::report_leftovers(c, stream, sink);
        }
        // An ended connection is forgotten, so that memory follows the connections
        // open, not all those seen; its unanswered requests wait for the final list.
        // Past KEEP_UNANSWERED they are told at once, keeping memory bounded.
        if let Some(c) = self.conns.remove(&stream) {
            for n in unanswered_of(stream, &c) {
                if self.unanswered.len() < KEEP_UNANSWERED {
                    self.unanswered.push(n);
                } else {
                    sink.notice(&n);
                }
            }
        }
    }

    /// Bytes still waiting for a verified boundary: at the end, a plausible header is the
    /// best there is; decode from it rather than drop them.
    fn resync_at_end(
        c: &mut KConn,
        cfg: &Config,
        topics: &mut TopicNames,
        stream: u32,
        sink: &mut impl Sink,
    ) {
        for d in 0..2 {
            let is_request = c.broker != Some(*crate::be::pick(&c.addrs, d));
            let h = crate::be::pick_mut(&mut c.halves, d);
            if !h.resync {
                continue;
            }
            let data = h.buf.get(h.pos..).unwrap_or(&[]);
            if let Some(i) = partial_candidate(data, is_request, &c.pending, cfg.max_frame) {
                let at = h.last_at;
                if i > 0 {
                    let (src, dst) = (
                        *crate::be::pick(&c.addrs, d),
                        *crate::be::pick(&c.addrs, 1 - d),
                    );
                    let reason = h.why.unwrap_or(ResyncReason::Gap);
                    sink.notice(&Notice::Resync {
                        stream,
                        src,
                        dst,
                        at,
                        skipped: i + std::mem::take(&mut h.dropped),
                        reason,
                    });
                }
                h.pos += i;
                h.resync = false;
                h.why = None;
                Self::cut(c, cfg, topics, stream, d, at, sink);
            }
        }
    }

    /// What a connection left at its end: bytes skipped while resynchronising, and a frame
    /// it ended inside.
    fn report_leftovers(c: &KConn, stream: u32, sink: &mut impl Sink) {
        for d in 0..2 {
            let h = crate::be::pick(&c.halves, d);
            let present = h.buf.len() - h.pos;
            if h.resync && present + h.dropped > 0 {
                // Still looking for a boundary at the end: all of it was skipped.
                sink.notice(&Notice::Resync {
                    stream,
                    src: *crate::be::pick(&c.addrs, d),
                    dst: *crate::be::pick(&c.addrs, 1 - d),
                    at: h.last_at,
                    skipped: present + h.dropped,
                    reason: h.why.unwrap_or(ResyncReason::Gap),
                });
            }
            if present > 0 && !h.resync {
                let want = h
                    .buf
                    .get(h.pos..h.pos + 4)
                    .map(|b| crate::be::i32_at(b, 0).max(0) as usize + 4)
                    .unwrap_or(4);
                sink.notice(&Notice::EndedInFrame {
                    stream,
                    src: *crate::be::pick(&c.addrs, d),
                    present,
                    want,
                });
            }
        }
    }

    /// Lists the requests still waiting for a response, by stream and frame.
    pub fn finish(&mut self, sink: &mut impl Sink) {
        let mut all = std::mem::take(&mut self.unanswered);
        for (&id, c) in &self.conns {
            all.extend(unanswered_of(id, c));
        }
        all.sort_by_key(|n| match n {
            Notice::Unanswered {
                stream, request, ..
            } => (*stream, request.frame),
            _ => (u32::MAX, u64::MAX),
        });
        for n in &all {
            sink.notice(n);
        }
        self.conns.clear();
    }

    /// Cuts complete frames off direction `d` and decodes them.
    fn cut(
        c: &mut KConn,
        cfg: &Config,
        topics: &mut TopicNames,
        stream: u32,
        d: usize,
        at: At,
        sink: &mut impl Sink,
    ) {
        let src = *crate::be::pick(&c.addrs, d);
        let dst = *crate::be::pick(&c.addrs, 1 - d);
        let is_request = c.broker != Some(src);
        loop {
            let h = crate::be::pick_mut(&mut c.halves, d);
            if h.resync {
                let data = h.buf.get(h.pos..).unwrap_or(&[]);
                match find_boundary(
                    data,
                    is_request,
                    &c.pending,
                    &c.used,
                    cfg.max_frame,
                    &mut h.scan,
                ) {
                    Some(skip) => {
                        let reason = h.why.unwrap_or(ResyncReason::Gap);
                        // A mid-stream start right at a frame boundary lost nothing.
                        if skip + h.dropped > 0 {
                            sink.notice(&Notice::Resync {
                                stream,
                                src,
                                dst,
                                at,
                                skipped: skip + std::mem::take(&mut h.dropped),
                                reason,
                            });
                        }
                        h.pos += skip;
                        h.resync = false;
                        h.why = None;
                        h.scan = Scan::default();
                    }
                    None => {
                        // Keep a bounded window; a boundary may still be ahead.
                        if data.len() > RESYNC_WINDOW {
                            let drop = data.len() - 16;
                            h.pos += drop;
                            h.dropped += drop;
                            h.scan = Scan::default();
                        }
                        break;
                    }
                }
            }
            let data = h.buf.get(h.pos..).unwrap_or(&[]);
            let Some(pre) = data.get(0..4) else { break };
            let size = crate::be::i32_at(pre, 0);
            if size < 4 || size as usize > cfg.max_frame {
                sink.notice(&Notice::BadSize {
                    stream,
                    src,
                    at,
                    size: size.into(),
                });
                h.pos += 1;
                h.dropped += 1;
                h.resync = true;
                h.scan = Scan::default();
                h.why = Some(ResyncReason::BadSize);
                continue;
            }
            let len = 4 + size as usize;
            if data.len() < len {
                break;
            }
            let start = h.pos;
            h.pos += len;
            let span = Span {
                first: h.frame_at(start),
                at,
            };
            // The frame is decoded from the connection's buffer; move it out of the way of
            // the mutable borrows below by swapping the buffer temporarily.
            let buf = std::mem::take(&mut crate::be::pick_mut(&mut c.halves, d).buf);
            let frame = buf.get(start..start + len).unwrap_or(&[]);
            if is_request {
                Self::on_request(c, cfg, topics, stream, src, dst, frame, span, false, sink);
            } else {
                if let Some(corr) = peek_response_correlation(frame) {
                    if !c.pending.contains_key(&corr) {
                        Self::unstick(c, cfg, topics, stream, 1 - d, corr, at, sink);
                    }
                }
                Self::on_response(c, cfg, topics, stream, src, dst, frame, span, false, sink);
            }
            crate::be::pick_mut(&mut c.halves, d).buf = buf;
        }
        crate::be::pick_mut(&mut c.halves, d).compact();
    }

    /// At the end of a connection: a direction still waiting for the rest of a frame whose
    /// bytes hold a plausible frame start after the prefix had a bogus prefix: resynchronise.
    fn rescan_at_end(
        c: &mut KConn,
        cfg: &Config,
        topics: &mut TopicNames,
        stream: u32,
        d: usize,
        sink: &mut impl Sink,
    ) {
        let is_request = c.broker != Some(*crate::be::pick(&c.addrs, d));
        let h = crate::be::pick(&c.halves, d);
        let data = h.buf.get(h.pos..).unwrap_or(&[]);
        let Some(size) = data.get(0..4).map(|b| crate::be::i32_at(b, 0)) else {
            return;
        };
        if h.resync || (size as usize).saturating_add(4) <= data.len() {
            return;
        }
        let rest = data.get(1..).unwrap_or(&[]);
        if partial_candidate(rest, is_request, &c.pending, cfg.max_frame).is_none() {
            return;
        }
        let at = h.last_at;
        sink.notice(&Notice::BadSize {
            stream,
            src: *crate::be::pick(&c.addrs, d),
            at,
            size: size.into(),
        });
        let h = crate::be::pick_mut(&mut c.halves, d);
        h.pos += 1;
        h.dropped += 1;
        h.resync = true;
        h.scan = Scan::default();
        h.why = Some(ResyncReason::BadSize);
        Self::cut(c, cfg, topics, stream, d, at, sink);
    }

    /// A response answers a request that was never cut, while the request direction waits for
    /// the rest of a frame: if that request's header sits inside the bytes waited on, the size
    /// prefix that made them wait was bogus. Declare it so and cut the requests from there,
    /// so they are shown, and pair, before their answers.
    #[allow(clippy::too_many_arguments)]
    fn unstick(
        c: &mut KConn,
        cfg: &Config,
        topics: &mut TopicNames,
        stream: u32,
        dq: usize,
        corr: i32,
        at: At,
        sink: &mut impl Sink,
    ) {
        let h = crate::be::pick_mut(&mut c.halves, dq);
        if h.resync {
            return;
        }
        let data = h.buf.get(h.pos..).unwrap_or(&[]);
        let Some(size) = data.get(0..4).map(|b| crate::be::i32_at(b, 0)) else {
            return;
        };
        if (size as usize).saturating_add(4) <= data.len() {
            return;
        }
        let window = data.get(..data.len().min(UNSTICK_SCAN)).unwrap_or(data);
        let inside = (1..window.len()).any(|i| {
            let rest = data.get(i..).unwrap_or(&[]);
            plausible_request_at(rest, cfg.max_frame)
                && peek_request(rest).is_some_and(|p| p.correlation_id == corr)
        });
        if !inside {
            return;
        }
        sink.notice(&Notice::BadSize {
            stream,
            src: *crate::be::pick(&c.addrs, dq),
            at,
            size: size.into(),
        });
        let h = crate::be::pick_mut(&mut c.halves, dq);
        h.pos += 1;
        h.dropped += 1;
        h.resync = true;
        h.scan = Scan::default();
        h.why = Some(ResyncReason::BadSize);
        Self::cut(c, cfg, topics, stream, dq, at, sink);
    }

    #[allow(clippy::too_many_arguments)]
    fn on_request(
        c: &mut KConn,
        cfg: &Config,
        topics: &mut TopicNames,
        stream: u32,
        src: SocketAddr,
        dst: SocketAddr,
        frame: &[u8],
        span: Span,
        partial: bool,
        sink: &mut impl Sink,
    ) {
        let at = span.at;
        let mut msg = decode_request_with(frame, cfg.decode);
        topics.observe(&mut msg);
        // Only a plausible request header waits for an answer: junk read as a header must
        // not capture a later response's correlation id.
        let plausible = msg.api_key.zip(msg.api_version).is_some_and(|(k, v)| {
            registry().knows(k, v) || (names::api_name(k).is_some() && (0..=127).contains(&v))
        });
        if let (true, Some(k), Some(v), Some(corr)) =
            (plausible, msg.api_key, msg.api_version, msg.correlation_id)
        {
            let info = RequestInfo {
                frame: at.frame,
                ts_nanos: at.ts_nanos,
                api_key: k,
                api_version: v,
                correlation_id: corr,
            };
            if c.pending.insert(corr, info).is_none() {
                c.pending_order.push_back(corr);
            }
            while c.pending.len() > cfg.max_pending {
                let Some(old) = c.pending_order.pop_front() else {
                    break;
                };
                if let Some(r) = c.pending.remove(&old) {
                    sink.notice(&Notice::PendingDropped { stream, request: r });
                }
            }
            if !c.used.contains(&(k, v)) {
                c.used.push((k, v));
            }
        }
        sink.message(&Record {
            stream,
            frame: at.frame,
            first_frame: span.first,
            ts_nanos: at.ts_nanos,
            src,
            dst,
            msg,
            bytes: frame,
            request: None,
            assumed: false,
            partial,
        });
    }

    #[allow(clippy::too_many_arguments)]
    fn on_response(
        c: &mut KConn,
        cfg: &Config,
        topics: &mut TopicNames,
        stream: u32,
        src: SocketAddr,
        dst: SocketAddr,
        frame: &[u8],
        span: Span,
        partial: bool,
        sink: &mut impl Sink,
    ) {
        let at = span.at;
        let corr = peek_response_correlation(frame);
        let request = corr.and_then(|k| c.pending.remove(&k));
        if let Some(k) = corr {
            if request.is_some() {
                c.pending_order.retain(|x| *x != k);
            }
        }
        let (msg, assumed) = match request {
            Some(r) => {
                let mut m = decode_response_with(frame, r.api_key, r.api_version, cfg.decode);
                if !m.is_clean() && !partial {
                    if let Some(d) = other_version_hint(frame, r.api_key, r.api_version) {
                        m.diagnoses.push(d);
                    }
                }
                (m, false)
            }
            None if partial => (decode_response_header_only(frame, ErrorKind::Malformed, "the rest of this frame was lost in a gap"), false),
            None => match guess_response(frame, &c.used) {
                Some(m) => (m, true),
                None => (
                    decode_response_header_only(
                        frame,
                        ErrorKind::Unpaired,
                        "no request with this correlation_id was captured, and no known API and version decodes this body cleanly",
                    ),
                    false,
                ),
            },
        };
        let mut msg = msg;
        topics.observe(&mut msg);
        sink.message(&Record {
            stream,
            frame: at.frame,
            first_frame: span.first,
            ts_nanos: at.ts_nanos,
            src,
            dst,
            msg,
            bytes: frame,
            request,
            assumed,
            partial,
        });
    }
}

/// When a response does not decode with its request's version, says which version it does
/// decode as (brokers that answer an unsupported version in another layout).
fn other_version_hint(frame: &[u8], key: i16, version: i16) -> Option<Diagnosis> {
    let spec = registry().get_for(key, Direction::Response, version)?;
    let mut candidates: Vec<i16> = registry()
        .versions(key, Direction::Response)
        .into_iter()
        .filter(|v| *v != version)
        .collect();
    // Nearest versions first.
    candidates.sort_by_key(|v| (i32::from(*v) - i32::from(version)).abs());
    for v in candidates {
        if decode_response(frame, key, v).is_clean() {
            return Some(Diagnosis {
                kind: ProblemKind::WrongVersionLayout,
                offset: 0,
                message: format!(
                    "the request asked for v{version}, and the body does not decode as {} v{version}; it decodes cleanly as v{v}: the broker answered in the v{v} layout",
                    spec.name
                ),
            });
        }
    }
    None
}

/// Decodes a response whose request was not captured: the APIs this connection used first
/// (most recent first), then every known API and version; the first clean decode wins.
fn guess_response(frame: &[u8], used: &[(i16, i16)]) -> Option<Message> {
    for &(k, v) in used.iter().rev() {
        let m = decode_response(frame, k, v);
        if m.is_clean() {
            return Some(m);
        }
    }
    let reg = registry();
    for k in reg.api_keys() {
        for v in reg.versions(k, Direction::Response).into_iter().rev() {
            if used.contains(&(k, v)) {
                continue;
            }
            let m = decode_response(frame, k, v);
            if m.is_clean() {
                return Some(m);
            }
        }
    }
    None
}

/// Where the search for a frame boundary stands, so that each new segment only costs the
/// offsets it adds (plus the candidates still waiting for their frame to complete).
#[derive(Debug, Default)]
struct Scan {
    /// First offset (relative to the unconsumed data) not yet examined.
    next: usize,
    /// Candidates whose frames were not complete yet, oldest first.
    waiting: Vec<usize>,
}

/// Candidates kept waiting for their frame to complete.
const MAX_WAITING: usize = 64;

enum Verdict {
    /// A frame start: `strong` when the frame decoded cleanly, weak when only its size lines
    /// up with what follows.
    Accept {
        strong: bool,
    },
    Reject,
    Wait,
}

fn check_candidate(
    rest: &[u8],
    is_request: bool,
    pending: &HashMap<i32, RequestInfo>,
    used: &[(i16, i16)],
    max_frame: usize,
) -> Verdict {
    let Some(h) = rest.get(0..8) else {
        return Verdict::Wait;
    };
    let size = crate::be::i32_at(h, 0);
    if size < 4 || size as usize > max_frame {
        return Verdict::Reject;
    }
    let len = 4 + size as usize;
    let complete = rest.get(..len);
    if is_request {
        if rest.len() < 14 {
            return Verdict::Wait;
        }
        if !plausible_request_at(rest, max_frame) {
            return Verdict::Reject;
        }
        let Some(frame) = complete else {
            return Verdict::Wait;
        };
        let known = peek_request(frame).is_some_and(|p| registry().knows(p.api_key, p.api_version));
        return if known {
            if decode_request(frame).is_clean() {
                Verdict::Accept { strong: true }
            } else {
                Verdict::Reject
            }
        } else if decode_request(frame).assumed_version.is_some() {
            // A newer version than the tables whose body fits the newest layout exactly.
            Verdict::Accept { strong: true }
        } else if chains_to_end(rest, max_frame, 4) {
            Verdict::Accept { strong: false }
        } else {
            Verdict::Reject
        };
    }
    let corr = crate::be::i32_at(h, 4);
    let paired = pending.get(&corr);
    if paired.is_none() && !pending.is_empty() {
        return Verdict::Reject;
    }
    let Some(frame) = complete else {
        return Verdict::Wait;
    };
    let verdict = match paired {
        Some(r) if decode_response(frame, r.api_key, r.api_version).is_clean() => {
            Verdict::Accept { strong: true }
        }
        Some(_) if chains_to_end(rest, max_frame, 4) => Verdict::Accept { strong: false },
        Some(_) => Verdict::Reject,
        // Nothing to pair with: the frame must sit between boundaries (end of data, or a
        // plausible next size) and decode cleanly as some known response.
        None => {
            let next_ok = match rest.get(len..len + 4) {
                None => rest.len() == len,
                Some(b) => {
                    let n = crate::be::i32_at(b, 0);
                    n >= 4 && n as usize <= max_frame
                }
            };
            // Only the APIs this connection used: with every Kafka API known, some small
            // response layout fits almost any bytes, so a guess over all of them proves nothing.
            if next_ok
                && used
                    .iter()
                    .any(|&(k, v)| decode_response(frame, k, v).is_clean())
            {
                Verdict::Accept { strong: true }
            } else {
                Verdict::Reject
            }
        }
    };
    verdict
}

/// Offset of the first frame start in `data` that can be verified: the frame is complete and
/// decodes cleanly (or is followed by another frame start). An unverified candidate is taken
/// only once the data outgrows the resync window.
fn find_boundary(
    data: &[u8],
    is_request: bool,
    pending: &HashMap<i32, RequestInfo>,
    used: &[(i16, i16)],
    max_frame: usize,
    scan: &mut Scan,
) -> Option<usize> {
    let n = data.len();
    let mut best: Option<(usize, bool)> = None;
    let mut still = Vec::new();
    for &i in &scan.waiting {
        match check_candidate(
            data.get(i..).unwrap_or(&[]),
            is_request,
            pending,
            used,
            max_frame,
        ) {
            Verdict::Accept { strong } => {
                if best.is_none_or(|(b, _)| i < b) {
                    best = Some((i, strong));
                }
            }
            Verdict::Wait => still.push(i),
            Verdict::Reject => {}
        }
    }
    scan.waiting = still;
    let need = if is_request { 14 } else { 8 };
    while best.is_none() && scan.next + need <= n {
        let i = scan.next;
        match check_candidate(
            data.get(i..).unwrap_or(&[]),
            is_request,
            pending,
            used,
            max_frame,
        ) {
            Verdict::Accept { strong } => best = Some((i, strong)),
            Verdict::Wait => {
                if scan.waiting.len() < MAX_WAITING {
                    scan.waiting.push(i);
                }
            }
            Verdict::Reject => {}
        }
        scan.next += 1;
    }
    if let Some((b, strong)) = best {
        // A frame that decoded cleanly is trusted. One that only lines up by size yields to a
        // strong header before it (a request of an API and version we know, or a response to
        // a pending request) whose frame is still arriving: wait for that one.
        let earlier_strong = !strong
            && scan.waiting.iter().any(|&i| {
                i < b && strong_header(data.get(i..).unwrap_or(&[]), is_request, pending)
            });
        if !earlier_strong {
            return Some(b);
        }
        if n <= RESYNC_WINDOW {
            return None;
        }
    }
    if n > RESYNC_WINDOW {
        return scan.waiting.first().copied();
    }
    None
}

/// A header that very likely starts a frame: a request of an API and version with a table, or
/// a response whose correlation id is pending.
fn strong_header(rest: &[u8], is_request: bool, pending: &HashMap<i32, RequestInfo>) -> bool {
    if is_request {
        peek_request(rest).is_some_and(|p| registry().plausible(p.api_key, p.api_version))
    } else {
        peek_response_correlation(rest).is_some_and(|c| pending.contains_key(&c))
    }
}

/// Where, in bytes cut short by a gap, a frame plausibly starts: a request header, or a
/// response that answers a pending request.
fn partial_candidate(
    data: &[u8],
    is_request: bool,
    pending: &HashMap<i32, RequestInfo>,
    max_frame: usize,
) -> Option<usize> {
    for i in 0..data.len().saturating_sub(7) {
        let rest = data.get(i..)?;
        if is_request {
            if plausible_request_at(rest, max_frame) {
                return Some(i);
            }
            continue;
        }
        let size = crate::be::i32_at(rest, 0);
        let corr = crate::be::i32_at(rest, 4);
        if size >= 4 && size as usize <= max_frame && pending.contains_key(&corr) {
            return Some(i);
        }
    }
    None
}

fn chains_to_end(data: &[u8], max_frame: usize, hops: u32) -> bool {
    let Some(b) = data.get(0..4) else {
        return false;
    };
    let size = crate::be::i32_at(b, 0);
    if size < 4 || size as usize > max_frame {
        return false;
    }
    let len = 4 + size as usize;
    if len == data.len() {
        return true;
    }
    hops > 0
        && len < data.len()
        && chains_to_end(data.get(len..).unwrap_or(&[]), max_frame, hops - 1)
}
