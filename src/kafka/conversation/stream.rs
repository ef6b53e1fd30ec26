//! Kafka over reassembled TCP: which connections carry Kafka, cutting each direction into
//! frames (resynchronising after gaps and mid-stream starts), and pairing every response with
//! its request by correlation id. Frames are cut and searched for with the framing core
//! ([`super::framing`]) and paired with the pairing core ([`super::pairing`]), as hex input is.

use super::client_side;
use super::framing::{
    self, guess_response, likely_request_at, plausible_request_at, Prefix, Scan, Search, Want,
    SIZE_PREFIX,
};
use super::pairing::{self, waits_for_answer, Asked, Pending};
use super::topics::TopicNames;
use crate::kafka::meaning::problem::{Detail, HeaderOnly, Path, ProblemKind};
use crate::kafka::spec::schema::{registry, Direction};
use crate::kafka::walk::decode::Diagnosis;
use crate::kafka::walk::decode::{DecodeOptions, ErrorKind};
use crate::kafka::walk::message::{
    decode_request_with, decode_response_embedding, decode_response_header_only, peek_request,
    peek_response_correlation, request_header_version, Message,
};
use crate::side::{Side, Sides};
use crate::tcp::{At, EndKind, Event, GapKind};
use std::collections::{HashMap, VecDeque};
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
    /// Memory all connections together hold for frames still arriving and requests waiting
    /// for their response ([`Tracker::held`]); past it the largest holding is let go.
    pub max_held_total: usize,
    /// Limits for decoding each message.
    pub decode: DecodeOptions,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            ports: vec![9092],
            detect: true,
            max_frame: 100 * 1024 * 1024,
            max_pending: pairing::MAX_PENDING,
            max_held_total: MAX_HELD_TOTAL,
            decode: DecodeOptions::default(),
        }
    }
}

/// Default of `Config::max_held_total`: room for two frames of the default `max_frame`
/// arriving at once, with the requests of many connections waiting.
pub const MAX_HELD_TOTAL: usize = 256 * 1024 * 1024;

/// What one entry of the pending table costs (`Pending::entries` counts a waiting request
/// twice, in its map and its order queue): a hash map slot of key, place and `RequestInfo`
/// with the map at most half full, or a queue slot.
const PENDING_COST: usize = 48;

/// The request a response answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RequestInfo {
    pub frame: u64,
    pub ts_nanos: i64,
    pub api_key: i16,
    pub api_version: i16,
    pub correlation_id: i32,
    /// The API and version of the request it carried (an Envelope's), whose answer the
    /// response carries.
    pub embedded: Option<(i16, i16)>,
}

/// One Kafka message found in a stream.
#[derive(Debug)]
pub struct Record<'a> {
    pub stream: u32,
    /// Packet that completed the message.
    pub frame: u64,
    /// The earliest packet that carried the message's bytes: its first byte's, unless the
    /// capture reordered them (the message's bytes are in the packets of its direction from
    /// this one to `last_frame`).
    pub first_frame: u64,
    /// The latest packet that carried its bytes: `frame`, unless the capture reordered them
    /// (a segment that filled a hole came after the one completing the message).
    pub last_frame: u64,
    pub ts_nanos: i64,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub msg: Message,
    pub bytes: &'a [u8],
    /// For a response: its request, when captured.
    pub request: Option<RequestInfo>,
    /// For a response whose request was not captured: the API was inferred.
    pub assumed: bool,
    /// Only the start of the frame was captured (the rest fell in a gap, or the stream
    /// ended first); shown as far as it goes.
    pub partial: bool,
    /// With `partial`: the stream ended before the rest of the frame (how), rather than a gap
    /// taking it.
    pub ended: Option<EndKind>,
    /// The frame came decrypted out of a TLS connection; offsets are in the plaintext.
    pub tls: bool,
    /// A frame cut from hex input: where it starts in the input. Hex input has no packets,
    /// times, streams or addresses: `frame` counts the frames read, the rest is zero.
    pub input_offset: Option<u64>,
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
    /// The stream ended inside a frame: `present` of its `want` bytes were captured, the last
    /// of them in packet `at`.
    EndedInFrame {
        stream: u32,
        src: SocketAddr,
        dst: SocketAddr,
        at: At,
        present: usize,
        want: usize,
        end: EndKind,
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
    /// A Kafka connection the capture picked up mid-stream: a direction's start was not
    /// captured (told once, whether or not bytes had to be skipped; not printed).
    PickedUp {
        stream: u32,
    },
    /// A Kafka connection seen for the first time.
    Connection {
        stream: u32,
        client: SocketAddr,
        broker: SocketAddr,
        detected: bool,
    },
    /// A request dropped from the pending table because of `max_pending`, or, with
    /// `for_memory`, because of `max_held_total`.
    PendingDropped {
        stream: u32,
        request: RequestInfo,
        for_memory: bool,
    },
    /// A frame still arriving was let go because all connections together held more than
    /// `max_held_total`: `present` of its bytes were held. The direction then looks for the
    /// next frame boundary, as after a gap.
    FrameDropped {
        stream: u32,
        src: SocketAddr,
        dst: SocketAddr,
        at: At,
        present: usize,
    },
    /// Hex input: a size prefix at input offset `offset` that cannot start a frame, and the
    /// `skipped` bytes from it passed over to the next frame start (or to the end). A capture
    /// tells the same with a `BadSize` and a `Resync`; hex input has no stream to name.
    InputSkipped {
        offset: u64,
        skipped: u64,
        size: i64,
    },
}

impl Notice {
    /// The packet a notice is dated by (for an unanswered or dropped request, the request's),
    /// if it has one.
    pub fn frame(&self) -> Option<u64> {
        match self {
            Notice::LostInGap { at, .. }
            | Notice::Resync { at, .. }
            | Notice::BadSize { at, .. }
            | Notice::EndedInFrame { at, .. }
            | Notice::Retransmission { at, .. }
            | Notice::ConflictingOverlap { at, .. }
            | Notice::FrameDropped { at, .. } => Some(at.frame),
            Notice::Unanswered { request, .. } | Notice::PendingDropped { request, .. } => {
                Some(request.frame)
            }
            Notice::Connection { .. } | Notice::PickedUp { .. } | Notice::InputSkipped { .. } => {
                None
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResyncReason {
    MidStream,
    Gap,
    BadSize,
    /// A cut (`-w`) left bytes out on purpose: what is passed over is not told.
    LeftOut,
}

/// Bytes passed over to find a frame boundary are told, but for those a cut left out.
fn tell_resync(sink: &mut impl Sink, n: Notice) {
    if !matches!(
        n,
        Notice::Resync {
            reason: ResyncReason::LeftOut,
            ..
        }
    ) {
        sink.notice(&n);
    }
}

/// Receives what the Kafka layer finds.
pub trait Sink {
    fn message(&mut self, rec: &Record<'_>);
    fn notice(&mut self, n: &Notice);
}

/// What a waiting request says about its response.
impl Asked for RequestInfo {
    fn api(&self) -> (i16, i16) {
        (self.api_key, self.api_version)
    }
}

/// One side of a connection: its bytes not cut yet, and where the search for a frame boundary
/// stands.
#[derive(Debug, Default)]
struct KHalf {
    /// Made when bytes must wait to be cut (a frame going on in a later packet, or bytes
    /// searched for a boundary), given back once none wait: a side between frames costs a
    /// pointer, not its buffer, marks and search.
    cutting: Option<Box<Cutting>>,
    /// The stream position is unknown: look for the next plausible frame start.
    resync: bool,
    why: Option<ResyncReason>,
    /// Packet of the last bytes added, for messages completed when the connection ends.
    last_at: At,
    /// Bytes already dropped while looking for a frame boundary (the search window is
    /// bounded), told in the resync notice with the rest.
    dropped: usize,
}

/// The bytes of a side waiting to be cut.
#[derive(Debug, Default)]
struct Cutting {
    buf: Vec<u8>,
    pos: usize,
    scan: Scan,
    /// Where each packet's bytes begin in `buf`, with its frame number and time: which
    /// packets a message came in (for `-w`), and the packet that completed it. Only marks at
    /// or after `pos` (and the one before) are kept.
    marks: VecDeque<(usize, At)>,
}

/// What a side without bytes waiting reads.
static NOT_CUTTING: Cutting = Cutting {
    buf: Vec::new(),
    pos: 0,
    scan: Scan::NEW,
    marks: VecDeque::new(),
};

impl KHalf {
    /// The bytes waiting, read (none when nothing waits).
    fn cutting(&self) -> &Cutting {
        self.cutting.as_deref().unwrap_or(&NOT_CUTTING)
    }

    /// The bytes waiting, to change: made on first use.
    fn cutting_mut(&mut self) -> &mut Cutting {
        self.cutting.get_or_insert_with(Box::default)
    }

    /// Appends a packet's bytes.
    fn push(&mut self, bytes: &[u8], at: At) {
        let c = self.cutting_mut();
        c.marks.push_back((c.buf.len(), at));
        // Grow by doubling while small, then by at most GROW_STEP past what is needed: a
        // 100 MiB frame then takes about 100 MiB, not the 128 MiB doubling would reach, and
        // the memory budget counts what is there. (The frame's size prefix is not trusted
        // to size the buffer.)
        let need = c.buf.len() + bytes.len();
        if need > c.buf.capacity() {
            let extra = c.buf.capacity().min(GROW_STEP);
            c.buf.reserve_exact(need + extra - c.buf.len());
        }
        c.buf.extend_from_slice(bytes);
    }

    /// The bytes not cut yet.
    fn unconsumed(&self) -> &[u8] {
        let c = self.cutting();
        c.buf.get(c.pos..).unwrap_or(&[])
    }

    /// The packet that carried the byte at `off` of `buf`.
    fn frame_at(&self, off: usize) -> u64 {
        self.at_of(off).frame
    }

    /// The packet (frame and time) that carried the byte at `off` of `buf`.
    fn at_of(&self, off: usize) -> At {
        self.cutting()
            .marks
            .iter()
            .take_while(|(o, _)| *o <= off)
            .last()
            .map_or(self.last_at, |(_, a)| *a)
    }

    /// The earliest and the latest packets that carried any of the bytes `start..end` of
    /// `buf`: the first and last byte's, unless reassembly handed on packets' bytes out of
    /// their order (a capture that reordered them), so that `-w` keeps every packet of the
    /// message.
    fn frames_of(&self, start: usize, end: usize) -> (u64, u64) {
        let first = self.frame_at(start);
        self.cutting()
            .marks
            .iter()
            .skip_while(|(o, _)| *o <= start)
            .take_while(|(o, _)| *o < end)
            .fold((first, first), |(lo, hi), &(_, a)| {
                (lo.min(a.frame), hi.max(a.frame))
            })
    }

    /// The memory the side's buffer takes: its bytes as allocated and, for each packet they
    /// came in, a mark of 24 bytes (a frame of 100 MiB in 100-byte segments has a million).
    fn footprint(&self) -> usize {
        let c = self.cutting();
        c.buf.capacity() + c.marks.capacity() * MARK_COST
    }

    /// Drops the consumed bytes once they are the larger part of the buffer, and gives back
    /// the memory a large frame left behind: a direction that once carried a 100 MiB frame
    /// would otherwise keep 100 MiB for as long as its connection lasts.
    fn compact(&mut self) {
        if let Some(c) = self.cutting.as_deref_mut() {
            c.compact();
        }
    }

    /// Gives the buffer and its marks back once nothing in them is waiting to be cut (the
    /// last mark is the packet of `last_at`, which dates what follows as the mark did), so
    /// that a side between frames holds no memory. A search under way keeps its place.
    fn release(&mut self) {
        let Some(c) = self.cutting.as_deref_mut() else {
            return;
        };
        if c.scan.is_fresh() {
            self.cutting = None;
        } else {
            c.buf = Vec::new();
            c.marks = VecDeque::new();
            c.pos = 0;
        }
    }

    /// Forgets everything buffered (keeping the buffer's room).
    fn clear(&mut self) {
        if let Some(c) = self.cutting.as_deref_mut() {
            c.buf.clear();
            c.marks.clear();
            c.pos = 0;
        }
    }

    /// Gives back everything buffered, bytes and room: the search starts afresh.
    fn drop_buffer(&mut self) {
        self.cutting = None;
    }

    /// Why the bytes being passed over are skipped.
    fn reason(&self) -> ResyncReason {
        self.why.unwrap_or(ResyncReason::Gap)
    }

    /// The size prefix at `pos` cannot be a frame's: its first byte is skipped, and the bytes
    /// after it are searched for the next frame start.
    fn skip_bad_prefix(&mut self) {
        let c = self.cutting_mut();
        c.pos += 1;
        c.scan = Scan::default();
        self.dropped += 1;
        self.resync = true;
        self.why = Some(ResyncReason::BadSize);
    }

    /// A frame boundary verified `skip` bytes on: cutting goes on from there.
    fn resume_at(&mut self, skip: usize) {
        let c = self.cutting_mut();
        c.pos += skip;
        c.scan = Scan::default();
        self.resync = false;
        self.why = None;
    }

    /// Moves the position `n` bytes on.
    fn advance(&mut self, n: usize) {
        if n > 0 {
            self.cutting_mut().pos += n;
        }
    }

    /// Still no boundary: past the search window all but the last few bytes are dropped
    /// (and counted as skipped), so memory stays bounded while a boundary may still be ahead.
    fn bound_window(&mut self) {
        let n = self.unconsumed().len();
        if n > framing::RESYNC_WINDOW {
            let drop = n - framing::RESYNC_KEEP;
            let c = self.cutting_mut();
            c.pos += drop;
            c.scan = Scan::default();
            self.dropped += drop;
        }
    }

    /// After a gap nothing buffered is of use: the next frame start is to be searched for.
    fn restart_after_gap(&mut self, kind: GapKind) {
        self.clear();
        if let Some(c) = self.cutting.as_deref_mut() {
            c.scan = Scan::default();
        }
        self.resync = true;
        self.why = Some(match kind {
            GapKind::MidStream => ResyncReason::MidStream,
            GapKind::LeftOut(_) => ResyncReason::LeftOut,
            GapKind::Lost(_) | GapKind::Truncated(_) => ResyncReason::Gap,
        });
    }
}

impl Cutting {
    /// See `KHalf::compact`.
    fn compact(&mut self) {
        if self.pos > 0 && self.pos * 2 >= self.buf.len() {
            self.prune_marks();
            self.buf.drain(..self.pos);
            for m in self.marks.iter_mut() {
                m.0 = m.0.saturating_sub(self.pos);
            }
            self.pos = 0;
        }
        if self.buf.capacity() > KEEP_CAPACITY && self.buf.capacity() / 4 > self.buf.len() {
            self.buf.shrink_to(self.buf.len().max(KEEP_CAPACITY));
        }
        if self.marks.capacity() > 1024 && self.marks.capacity() / 4 > self.marks.len() {
            self.marks.shrink_to(self.marks.len().max(64));
        }
    }

    /// Forgets marks of packets wholly before `pos`.
    fn prune_marks(&mut self) {
        while self.marks.len() > 1 && self.marks.get(1).is_some_and(|(o, _)| *o <= self.pos) {
            self.marks.pop_front();
        }
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
    addrs: Sides<SocketAddr>,
    /// The broker's side, once known (`KConn::broker`).
    broker: Option<Side>,
    state: State,
    halves: Sides<KHalf>,
    pending: Pending<RequestInfo>,
    /// APIs and versions the connection's requests used, in the order first seen.
    used: Vec<(i16, i16)>,
    data_events: u32,
    /// What the connection holds as `Tracker::held` last counted it (`KConn::footprint`).
    charged: usize,
    /// A response whose request came before the capture, on a connection that had used no
    /// API yet, held until the client's first request says which versions it speaks (or
    /// `DEFER_PACKETS` packets pass).
    deferred: Option<Box<Deferred>>,
    /// The frame of `deferred` as `Tracker::deferred` last entered it.
    deferred_at: Option<u64>,
    /// A direction started without its beginning (a mid-stream gap), and whether that was
    /// told (once the connection is known to be Kafka).
    picked_up: (bool, bool),
    /// The bytes are the plaintext of a decrypted TLS connection (a source mark only).
    tls: bool,
    /// The client_id its requests gave, carried forward to the requests whose header (v3,
    /// KIP-1313) leaves it null; one longer than `MAX_CARRIED_CLIENT_ID` is not kept.
    client_id: Option<Box<str>>,
    /// While detecting: the side that sent the SYN, when captured, and the first side seen
    /// sending a request header (`client_side::client_side` weighs them).
    syn: Option<Side>,
    first_asking: Option<Side>,
    /// Retransmissions seen while detecting (at most `DETECT_EVENTS`), told once the
    /// connection is known to be Kafka, as they would have been on a broker port.
    /// (A boxed slice, grown one at a time: most connections are on a broker port and never
    /// detected, and a slice costs 16 bytes where a vector costs 24.)
    early_retransmissions: Option<Box<[At]>>,
}

/// Bytes of a client_id a connection keeps to carry forward: every real one, and at most
/// this much memory per connection (a header's client_id may be 32 KiB).
const MAX_CARRIED_CLIENT_ID: usize = 1024;

/// A response held back to be decoded with the versions its connection turns out to use.
#[derive(Debug)]
struct Deferred {
    bytes: Vec<u8>,
    ends: (SocketAddr, SocketAddr),
    span: Span,
}

/// Packets (of the whole capture) a deferred response waits for its connection's first
/// request at most.
const DEFER_PACKETS: u64 = 64;

impl KConn {
    /// While it is not yet known whether the connection is Kafka, the frame of the oldest
    /// bytes it holds: what they make, once known, is dated by their own packets, so nothing
    /// later may be printed before them (within `DEFER_PACKETS`).
    fn undecided_since(&self) -> Option<u64> {
        if self.state != State::Undecided {
            return None;
        }
        self.halves
            .iter()
            .filter(|h| !h.unconsumed().is_empty())
            .filter_map(|h| h.cutting().marks.front().map(|(_, a)| a.frame))
            .min()
    }

    /// The memory the connection holds: both directions' buffers as allocated, and its
    /// requests waiting.
    fn footprint(&self) -> usize {
        let bufs: usize = self.halves.iter().map(KHalf::footprint).sum();
        let deferred = self.deferred.as_ref().map_or(0, |d| d.bytes.capacity());
        bufs.saturating_add(self.pending.entries().saturating_mul(PENDING_COST))
            .saturating_add(deferred)
    }

    /// Whether its memory holds nothing to lose: no bytes waiting to be cut, no requests
    /// waiting for their response.
    fn holds_nothing(&self) -> bool {
        self.pending.is_empty()
            && self.deferred.is_none()
            && self.halves.iter().all(|h| h.unconsumed().is_empty())
    }
}

/// Where a message's bytes came from: the packet of its first byte and the one completing it.
#[derive(Debug, Clone, Copy)]
struct Span {
    /// The earliest and latest packets of its bytes.
    first: u64,
    last: u64,
    at: At,
}

/// What a packet's mark costs in a direction's `KHalf::marks`.
const MARK_COST: usize = std::mem::size_of::<(usize, At)>();

/// Most a direction's buffer grows by past what it needs (`KHalf::push`).
const GROW_STEP: usize = 4 * 1024 * 1024;

/// Buffer capacity a direction keeps between frames (`KHalf::compact`).
const KEEP_CAPACITY: usize = 64 * 1024;

/// What the size prefix at a side's position says, once read.
enum Next {
    /// A whole frame at `start` of the side's buffer, `len` bytes, the position now past it.
    Frame { start: usize, len: usize },
    /// A prefix that cannot be a frame's: told, and the search for a boundary started.
    BadSize,
    /// More bytes are needed.
    More,
}

/// What cutting and decoding a connection needs besides the connection.
struct Cx<'a> {
    cfg: &'a Config,
    topics: &'a mut TopicNames,
    stream: u32,
}

/// Bytes kept while deciding whether a connection on an unknown port is Kafka.
const DETECT_BUFFER: usize = 64 * 1024;
const DETECT_EVENTS: u32 = 16;
/// Bytes of a frame being waited on that are searched for a request header when an answer to
/// an unseen request arrives (a bogus size prefix is usually followed at once by real frames).
const UNSTICK_SCAN: usize = 1024 * 1024;

pub struct Tracker {
    cfg: Config,
    /// Boxed: a table of 600-byte entries is up to half empty after it grows, a table of
    /// pointers wastes 8 bytes a slot. Hashed with foldhash: the key is a stream number.
    conns: HashMap<u32, Box<KConn>, foldhash::fast::RandomState>,
    /// The sum of the connections' `charged`: what they hold together.
    held: usize,
    topics: TopicNames,
    /// Requests of ended connections that never got a response, listed at the end.
    unanswered: Vec<Unanswered>,
    /// Connections holding a deferred response, or bytes not yet known to be Kafka, by the
    /// frame of what they hold (`KConn::deferred_at`).
    deferred: std::collections::BTreeSet<(u64, u32)>,
}

/// Unanswered requests of ended connections held back for the final list.
const KEEP_UNANSWERED: usize = 100_000;

/// A request that never got its response, kept for the final list (`Tracker::finish`) in 56
/// bytes where its notice takes 112: a long capture keeps up to `KEEP_UNANSWERED` of them.
#[derive(Debug, Clone)]
struct Unanswered {
    request: RequestInfo,
    ends: Ends,
    stream: u32,
    /// Its place in the list it is in: the requests of one packet stay in the order they
    /// came.
    place: u32,
}

/// Client and broker: in 12 bytes when both are IPv4 (as in most captures), else boxed.
#[derive(Debug, Clone)]
enum Ends {
    V4([u8; 4], u16, [u8; 4], u16),
    Other(Box<[SocketAddr; 2]>),
}

impl Ends {
    fn of(client: SocketAddr, broker: SocketAddr) -> Ends {
        match (client, broker) {
            (SocketAddr::V4(c), SocketAddr::V4(b)) => {
                Ends::V4(c.ip().octets(), c.port(), b.ip().octets(), b.port())
            }
            _ => Ends::Other(Box::new([client, broker])),
        }
    }

    fn addrs(&self) -> [SocketAddr; 2] {
        match self {
            Ends::V4(c, cp, b, bp) => [(*c, *cp).into(), (*b, *bp).into()],
            Ends::Other(both) => **both,
        }
    }
}

impl Unanswered {
    fn notice(&self) -> Notice {
        let [src, dst] = self.ends.addrs();
        Notice::Unanswered {
            stream: self.stream,
            src,
            dst,
            request: self.request,
        }
    }
}

/// The requests of a connection still waiting for a response, in frame order (requests of one
/// packet in the order they came), put at the end of `list`.
fn unanswered_of(stream: u32, c: &KConn, list: &mut Vec<Unanswered>) {
    let Some(broker) = c.broker() else {
        return;
    };
    let client = c.addrs[c.addrs.side_of(&broker).other()];
    let from = list.len();
    list.extend(c.pending.waiting().map(|&request| Unanswered {
        request,
        ends: Ends::of(client, broker),
        stream,
        place: 0,
    }));
    if let Some(added) = list.get_mut(from..) {
        added.sort_by_key(|u| u.request.frame);
        for (i, u) in added.iter_mut().enumerate() {
            u.place = u32::try_from(from + i).unwrap_or(u32::MAX);
        }
    }
}

impl Tracker {
    pub fn new(cfg: Config) -> Tracker {
        Tracker {
            cfg,
            conns: HashMap::default(),
            held: 0,
            topics: TopicNames::default(),
            unanswered: Vec::new(),
            deferred: Default::default(),
        }
    }

    /// Topic ids a cut (`-w`) named in its file: the messages after give them names.
    pub fn topics_named(&mut self, named: &[crate::capture::cut::TopicNamed]) {
        self.topics.given(named);
    }

    /// The frame of the oldest response held back for its connection's first request: no
    /// message still to come is dated before it but those.
    pub fn oldest_deferred(&self) -> Option<u64> {
        self.deferred.first().map(|&(f, _)| f)
    }

    /// Keeps `deferred` in step with what the connection holds back.
    fn note_deferred(&mut self, stream: u32) {
        let Some(c) = self.conns.get_mut(&stream) else {
            return;
        };
        let now = c
            .deferred
            .as_ref()
            .map(|d| d.span.at.frame)
            .or_else(|| c.undecided_since());
        let was = std::mem::replace(&mut c.deferred_at, now);
        if was != now {
            if let Some(f) = was {
                self.deferred.remove(&(f, stream));
            }
            if let Some(f) = now {
                self.deferred.insert((f, stream));
            }
        }
    }

    /// A tracked connection and the context its Kafka layer works in.
    fn conn_cx(&mut self, stream: u32) -> Option<(&mut KConn, Cx<'_>)> {
        let c = self.conns.get_mut(&stream)?;
        let cx = Cx {
            cfg: &self.cfg,
            topics: &mut self.topics,
            stream,
        };
        Some((c, cx))
    }

    /// Responses held back `DEFER_PACKETS` packets are decoded with what is known; a
    /// connection undecided as long is taken for Kafka if a side sent a request header (the
    /// likelier client), so that what it holds comes out in its place.
    fn expire_deferred(&mut self, now: u64, sink: &mut impl Sink) {
        while let Some(&(f, stream)) = self.deferred.first() {
            if now.saturating_sub(f) < DEFER_PACKETS {
                break;
            }
            if let Some((c, mut cx)) = self.conn_cx(stream) {
                let at = c.halves.iter().map(|h| h.last_at).max_by_key(|a| a.frame);
                c.decide_client(&mut cx, true, at.unwrap_or_default(), sink);
                c.flush_deferred(&mut cx, sink);
            }
            self.note_deferred(stream);
            self.deferred.remove(&(f, stream));
        }
    }

    /// Marks a connection's bytes as the plaintext of a decrypted TLS connection: its
    /// messages say so.
    pub fn mark_tls(&mut self, stream: u32) {
        if let Some(c) = self.conns.get_mut(&stream) {
            c.tls = true;
        }
    }

    /// Takes one event from reassembly.
    pub fn event(&mut self, ev: Event<'_>, sink: &mut impl Sink) {
        let stream = ev.stream();
        let frame = event_frame(&ev);
        self.dispatch(ev, sink);
        if !self.note_and_recharge(stream, frame) {
            if let Some(f) = frame {
                self.expire_deferred(f, sink);
            }
            self.recharge(stream);
        }
        if self.held > self.cfg.max_held_total {
            self.shed(stream, sink);
        }
    }

    /// After an event of `stream` dated `frame`: `note_deferred`, then, unless a response
    /// held back is due (`expire_deferred` must run first), `recharge`, with one look-up of
    /// the connection. Returns whether it recharged; a connection gone does neither.
    fn note_and_recharge(&mut self, stream: u32, frame: Option<u64>) -> bool {
        let Some(c) = self.conns.get_mut(&stream) else {
            return false;
        };
        let now = c
            .deferred
            .as_ref()
            .map(|d| d.span.at.frame)
            .or_else(|| c.undecided_since());
        let was = std::mem::replace(&mut c.deferred_at, now);
        if was != now {
            if let Some(f) = was {
                self.deferred.remove(&(f, stream));
            }
            if let Some(f) = now {
                self.deferred.insert((f, stream));
            }
        }
        let due = frame
            .zip(self.deferred.first())
            .is_some_and(|(f, &(d, _))| f.saturating_sub(d) >= DEFER_PACKETS);
        if due {
            return false;
        }
        let footprint = c.footprint();
        self.held = self
            .held
            .saturating_sub(c.charged)
            .saturating_add(footprint);
        c.charged = footprint;
        true
    }

    fn dispatch(&mut self, ev: Event<'_>, sink: &mut impl Sink) {
        match ev {
            Event::Open {
                stream,
                a,
                b,
                syn_from,
            } => self.on_open(stream, Sides::new(a, b), syn_from, sink),
            Event::Data {
                stream,
                src,
                dst,
                bytes,
                at,
            } => self.on_data(stream, (src, dst), bytes, at, sink),
            Event::Gap {
                stream,
                src,
                dst,
                kind,
                at,
            } => self.on_gap(stream, (src, dst), kind, at, sink),
            Event::Retransmission { stream, at, .. } => self.on_retransmission(stream, at, sink),
            Event::ConflictingOverlap {
                stream, at, offset, ..
            } => self.on_conflicting_overlap(stream, at, offset, sink),
            Event::Close { stream, end, at } => self.on_close(stream, end, at, sink),
        }
    }

    fn is_kafka(&self, stream: u32) -> bool {
        self.conns
            .get(&stream)
            .is_some_and(|c| c.state == State::Kafka)
    }

    /// A new connection: Kafka when one side is on a broker port, else to be decided by
    /// what it says (or not Kafka, without detection).
    fn on_open(
        &mut self,
        stream: u32,
        addrs: Sides<SocketAddr>,
        syn_from: Option<SocketAddr>,
        sink: &mut impl Sink,
    ) {
        let broker = self.broker_by_port(&addrs, syn_from);
        let state = if broker.is_some() {
            State::Kafka
        } else if self.cfg.detect {
            State::Undecided
        } else {
            State::NotKafka
        };
        if let Some(br) = broker {
            sink.notice(&Notice::Connection {
                stream,
                client: addrs[addrs.side_of(&br).other()],
                broker: br,
                detected: false,
            });
        }
        let syn = syn_from.and_then(|s| addrs.side_of_checked(&s));
        let conn = KConn {
            broker: broker.map(|b| addrs.side_of(&b)),
            addrs,
            state,
            halves: Sides::default(),
            pending: Pending::new(self.cfg.max_pending),
            used: Vec::new(),
            data_events: 0,
            charged: 0,
            deferred: None,
            deferred_at: None,
            picked_up: (false, false),
            tls: false,
            client_id: None,
            syn,
            first_asking: None,
            early_retransmissions: None,
        };
        self.conns.insert(stream, Box::new(conn));
    }

    /// The side on a broker port; with both on one, the side that did not send the SYN.
    fn broker_by_port(
        &self,
        addrs: &Sides<SocketAddr>,
        syn_from: Option<SocketAddr>,
    ) -> Option<SocketAddr> {
        let (a, b) = (addrs[Side::A], addrs[Side::B]);
        let on_port = |x: &SocketAddr| self.cfg.ports.contains(&x.port());
        match (on_port(&a), on_port(&b)) {
            (true, false) => Some(a),
            (false, true) => Some(b),
            (true, true) => Some(if syn_from == Some(a) { b } else { a }),
            (false, false) => None,
        }
    }

    /// In-order bytes of one direction.
    fn on_data(
        &mut self,
        stream: u32,
        ends: (SocketAddr, SocketAddr),
        bytes: &[u8],
        at: At,
        sink: &mut impl Sink,
    ) {
        let Some((c, mut cx)) = self.conn_cx(stream) else {
            return;
        };
        let side = c.addrs.side_of(&ends.0);
        match c.state {
            State::NotKafka => {}
            State::Undecided => c.detect(&mut cx, side, bytes, at, sink),
            State::Kafka => c.take_data(&mut cx, side, bytes, at, sink),
        }
    }

    /// Bytes of one direction that will never arrive.
    fn on_gap(
        &mut self,
        stream: u32,
        ends: (SocketAddr, SocketAddr),
        kind: GapKind,
        at: At,
        sink: &mut impl Sink,
    ) {
        let Some((c, mut cx)) = self.conn_cx(stream) else {
            return;
        };
        c.gap(&mut cx, ends, kind, at, sink);
    }

    /// A retransmission of a Kafka connection is told; one of a connection still being
    /// detected is told if it turns out to be Kafka (`KConn::early_retransmissions`).
    fn on_retransmission(&mut self, stream: u32, at: At, sink: &mut impl Sink) {
        let Some(c) = self.conns.get_mut(&stream) else {
            return;
        };
        match c.state {
            State::Kafka => sink.notice(&Notice::Retransmission { stream, at }),
            State::Undecided
                if c.early_retransmissions.as_ref().map_or(0, |v| v.len())
                    < DETECT_EVENTS as usize =>
            {
                let mut ats = c
                    .early_retransmissions
                    .take()
                    .map_or_else(Vec::new, Vec::from);
                ats.push(at);
                c.early_retransmissions = Some(ats.into_boxed_slice());
            }
            _ => {}
        }
    }

    fn on_conflicting_overlap(&mut self, stream: u32, at: At, offset: u64, sink: &mut impl Sink) {
        if self.is_kafka(stream) {
            sink.notice(&Notice::ConflictingOverlap { stream, at, offset });
        }
    }

    /// The connection ended: cut what is left, report what cannot be, forget it.
    fn on_close(&mut self, stream: u32, end: EndKind, at: At, sink: &mut impl Sink) {
        if let Some((c, mut cx)) = self.conn_cx(stream) {
            // Still undecided at its end: the likelier client, if a side sent a request.
            c.decide_client(&mut cx, true, at, sink);
            if c.state == State::Kafka {
                c.end(&mut cx, (end, at), sink);
            }
        }
        self.forget(stream, sink);
    }

    /// An ended connection is forgotten, so that memory follows the connections open, not all
    /// those seen; its unanswered requests wait for the final list. Past KEEP_UNANSWERED they
    /// are told at once, keeping memory bounded.
    fn forget(&mut self, stream: u32, sink: &mut impl Sink) {
        let Some(c) = self.conns.remove(&stream) else {
            return;
        };
        if let Some(f) = c.deferred_at {
            self.deferred.remove(&(f, stream));
        }
        self.held = self.held.saturating_sub(c.charged);
        let mut ended = Vec::new();
        unanswered_of(stream, &c, &mut ended);
        for u in ended {
            if self.unanswered.len() < KEEP_UNANSWERED {
                self.keep_unanswered(u);
            } else {
                sink.notice(&u.notice());
            }
        }
    }

    /// Keeps a request for the final list, growing the list by a quarter at a time: doubling
    /// would leave up to half of a list of `KEEP_UNANSWERED` unused.
    fn keep_unanswered(&mut self, mut u: Unanswered) {
        let list = &mut self.unanswered;
        if list.len() == list.capacity() {
            list.reserve_exact((list.len() / 4).max(1024));
        }
        u.place = u32::try_from(list.len()).unwrap_or(u32::MAX);
        list.push(u);
    }

    /// Lists the requests still waiting for a response, in frame order.
    pub fn finish(&mut self, sink: &mut impl Sink) {
        let mut all = std::mem::take(&mut self.unanswered);
        for (&id, c) in &self.conns {
            unanswered_of(id, c, &mut all);
        }
        // By frame and stream, then place: as a stable sort by frame and stream would put
        // them, without the copy of the list a stable sort makes.
        all.sort_unstable_by_key(|u| (u.request.frame, u.stream, u.place));
        for u in &all {
            sink.notice(&u.notice());
        }
        self.conns.clear();
        self.deferred.clear();
        self.held = 0;
    }

    /// What all connections hold together, as `max_held_total` counts it.
    pub fn held(&self) -> usize {
        self.held
    }

    /// Lets go of the largest holdings until the connections hold at most 7/8 of
    /// `max_held_total`: a frame still arriving (its direction then looks for the next frame
    /// boundary, as after a gap), or a connection's waiting requests (reported as dropped).
    /// The connections are ranked once per call, and the margin below the limit means a
    /// call comes at most once per 1/8 of the limit of new data, so ranking every
    /// connection stays cheap however many there are.
    ///
    /// First go the buffers that hold nothing (room kept from earlier frames): letting them go
    /// loses nothing. The connection of the last event (`current`) goes last, its frame being
    /// the one completed while the others may have stalled; unless it alone holds more than
    /// the target, when letting the others go would not be enough and it goes by its size.
    /// A connection's frames go before its waiting requests, which go only if still needed.
    fn shed(&mut self, current: u32, sink: &mut impl Sink) {
        let target = self.cfg.max_held_total / 8 * 7;
        let current_alone_over = self
            .conns
            .get(&current)
            .is_some_and(|c| c.footprint() > target);
        let mut ranked: Vec<(bool, bool, usize, u32)> = self
            .conns
            .iter()
            .map(|(&id, c)| {
                let spared = id == current && !current_alone_over;
                (c.holds_nothing(), !spared, c.footprint(), id)
            })
            .filter(|&(_, _, bytes, _)| bytes > 0)
            .collect();
        ranked.sort_unstable_by(|a, b| b.cmp(a));
        for (_, _, _, stream) in ranked {
            if self.held <= target {
                break;
            }
            self.shed_buffers(stream, sink);
            self.recharge(stream);
            if self.held > target {
                self.shed_pending(stream, sink);
                self.recharge(stream);
            }
        }
    }

    /// Brings one connection's `charged` and `held` up to date.
    fn recharge(&mut self, stream: u32) {
        if let Some(c) = self.conns.get_mut(&stream) {
            let now = c.footprint();
            self.held = self.held.saturating_sub(c.charged).saturating_add(now);
            c.charged = now;
        }
    }

    /// Lets go of each direction's buffer: a frame in progress is dropped (told) and its
    /// direction looks for the next frame boundary; bytes already being searched for one
    /// count as skipped. A connection still being detected stops being: it is taken for
    /// something other than Kafka, having held too much to decide.
    fn shed_buffers(&mut self, stream: u32, sink: &mut impl Sink) {
        // A response held back for the connection's first request is decoded now.
        if let Some((c, mut cx)) = self.conn_cx(stream) {
            c.flush_deferred(&mut cx, sink);
        }
        self.note_deferred(stream);
        let Some(c) = self.conns.get_mut(&stream) else {
            return;
        };
        if c.state == State::Undecided {
            c.state = State::NotKafka;
            c.halves = Sides::default();
            c.early_retransmissions = None;
            return;
        }
        for d in Side::BOTH {
            let (src, dst) = (c.addrs[d], c.addrs[d.other()]);
            let h = &mut c.halves[d];
            if h.cutting().buf.capacity() == 0 {
                continue;
            }
            let present = h.unconsumed().len();
            let kafka = c.state == State::Kafka;
            if kafka && present > 0 && h.resync {
                h.dropped = h.dropped.saturating_add(present);
            } else if kafka && present > 0 {
                sink.notice(&Notice::FrameDropped {
                    stream,
                    src,
                    dst,
                    at: h.last_at,
                    present,
                });
                h.resync = true;
                h.why = Some(ResyncReason::Gap);
            }
            // Give the memory back, not just the bytes.
            h.drop_buffer();
        }
    }

    /// Lets go of a connection's waiting requests, each told; their answers will be shown
    /// as answers to requests not captured.
    fn shed_pending(&mut self, stream: u32, sink: &mut impl Sink) {
        let Some(c) = self.conns.get_mut(&stream) else {
            return;
        };
        for request in c.pending.take_all() {
            sink.notice(&Notice::PendingDropped {
                stream,
                request,
                for_memory: true,
            });
        }
    }
}

impl KConn {
    /// The broker's address, once known.
    fn broker(&self) -> Option<SocketAddr> {
        self.broker.map(|side| self.addrs[side])
    }

    /// (sender, receiver) of what a side sends.
    fn ends(&self, side: Side) -> (SocketAddr, SocketAddr) {
        (self.addrs[side], self.addrs[side.other()])
    }

    /// Which frames a side sends: requests on any side but the broker's.
    fn want(&self, side: Side) -> Want {
        want_from(self.broker() != Some(self.addrs[side]))
    }

    /// Bytes of a connection on no broker port: Kafka once the evidence says which side is
    /// the client (`client_side`: a side whose first frame is a clean request, requests the
    /// other side answers, the SYN, the ports), not Kafka after too many events or bytes
    /// without a side sending a request header. Until then both sides' bytes are held, and
    /// nothing of the connection is decoded: a broker's answer read as a request cannot be
    /// taken back once shown.
    fn detect(&mut self, cx: &mut Cx<'_>, side: Side, bytes: &[u8], at: At, sink: &mut impl Sink) {
        self.data_events += 1;
        self.halves[side].last_at = at;
        self.halves[side].push(bytes, at);
        let over = self.data_events > DETECT_EVENTS
            || self
                .halves
                .iter()
                .any(|h| h.cutting().buf.len() > DETECT_BUFFER);
        if !self.decide_client(cx, over, at, sink) && over {
            self.state = State::NotKafka;
            self.halves = Sides::default();
            self.early_retransmissions = None;
        }
    }

    /// Takes the connection for Kafka once a side can be told the client (with `forced`, the
    /// likelier of the sides that sent a request header, if any did); whether it was.
    fn decide_client(
        &mut self,
        cx: &mut Cx<'_>,
        forced: bool,
        at: At,
        sink: &mut impl Sink,
    ) -> bool {
        if self.state != State::Undecided {
            return false;
        }
        let bytes = Sides::new(
            self.halves[Side::A].unconsumed(),
            self.halves[Side::B].unconsumed(),
        );
        if self.first_asking.is_none() {
            self.first_asking = Side::BOTH
                .into_iter()
                .find(|&s| likely_request_at(bytes[s], cx.cfg.max_frame));
        }
        let evidence = client_side::Evidence {
            bytes,
            syn_from: self.syn,
            ports: Sides::new(self.addrs[Side::A].port(), self.addrs[Side::B].port()),
            max_frame: cx.cfg.max_frame,
        };
        let Some(client) = client_side::client_side(&evidence, forced, self.first_asking) else {
            return false;
        };
        self.state = State::Kafka;
        self.broker = Some(client.other());
        sink.notice(&Notice::Connection {
            stream: cx.stream,
            client: self.addrs[client],
            broker: self.addrs[client.other()],
            detected: true,
        });
        self.tell_picked_up(cx, sink);
        for at in self
            .early_retransmissions
            .take()
            .map_or_else(Vec::new, Vec::from)
        {
            sink.notice(&Notice::Retransmission {
                stream: cx.stream,
                at,
            });
        }
        // Requests first, then whatever the broker already said.
        self.cut(cx, client, at, sink);
        self.cut(cx, client.other(), at, sink);
        true
    }

    /// In-order bytes of a side of a Kafka connection. With nothing buffered before them,
    /// the frames that lie wholly within them are decoded where they are (in the packet);
    /// only what is left, a frame continuing in a later packet or bytes to search, is copied
    /// into the side's buffer, which is given back once it holds nothing.
    fn take_data(
        &mut self,
        cx: &mut Cx<'_>,
        side: Side,
        bytes: &[u8],
        at: At,
        sink: &mut impl Sink,
    ) {
        self.halves[side].last_at = at;
        let rest = self.cut_in_place(cx, side, bytes, at, sink);
        if !rest.is_empty() {
            self.halves[side].push(rest, at);
            self.cut(cx, side, at, sink);
        }
        let h = &mut self.halves[side];
        if h.unconsumed().is_empty() {
            h.release();
        }
    }

    /// Decodes the whole frames at the start of a packet's bytes while the side is in step
    /// with nothing buffered (as `cut` would once they were buffered: each is dated by this
    /// packet, the only one it came in); returns the bytes from the first that is not one.
    fn cut_in_place<'b>(
        &mut self,
        cx: &mut Cx<'_>,
        side: Side,
        mut bytes: &'b [u8],
        at: At,
        sink: &mut impl Sink,
    ) -> &'b [u8] {
        let span = Span {
            first: at.frame,
            last: at.frame,
            at,
        };
        loop {
            let h = &self.halves[side];
            if h.resync || !h.cutting().buf.is_empty() {
                return bytes;
            }
            let Some(Prefix::Frame(len)) = framing::prefix(bytes, cx.cfg.max_frame) else {
                return bytes;
            };
            let Some((frame, rest)) = bytes.split_at_checked(len) else {
                return bytes;
            };
            self.decode_cut(cx, side, frame, span, sink);
            bytes = rest;
        }
    }

    /// Cuts complete frames off one side and decodes them.
    fn cut(&mut self, cx: &mut Cx<'_>, side: Side, at: At, sink: &mut impl Sink) {
        while self.in_sync(cx, side, at, sink) {
            match self.next_frame(cx, side, at, sink) {
                Next::Frame { start, len } => self.decode_frame(cx, side, start, len, at, sink),
                Next::BadSize => {}
                Next::More => break,
            }
        }
        self.halves[side].compact();
    }

    /// Whether a side's position is at a frame start: at once when it is not resynchronising,
    /// else once the search finds a verified boundary (told in a resync notice).
    fn in_sync(&mut self, cx: &mut Cx<'_>, side: Side, at: At, sink: &mut impl Sink) -> bool {
        let (src, dst) = self.ends(side);
        let requests = self.want(side) == Want::Requests;
        let h = &mut self.halves[side];
        if !h.resync {
            return true;
        }
        let why = h.why;
        let Cutting {
            buf,
            pos,
            marks,
            scan,
        } = h.cutting_mut();
        let data = buf.get(*pos..).unwrap_or(&[]);
        // Picked up mid-stream, a broker side's first frame may answer a request sent before
        // the capture: it is looked for where packets begin.
        let starts = |i: usize| is_packet_start(marks, *pos + i);
        let mid_stream =
            !requests && matches!(why, Some(ResyncReason::MidStream | ResyncReason::LeftOut));
        let search = Search {
            requests,
            pending: &self.pending,
            used: &self.used,
            max_frame: cx.cfg.max_frame,
            packet_starts: mid_stream.then_some(&starts as &dyn Fn(usize) -> bool),
        };
        let found = framing::find_boundary(data, &search, scan);
        let Some(skip) = found else {
            h.bound_window();
            return false;
        };
        // A mid-stream start right at a frame boundary lost nothing.
        if skip + h.dropped > 0 {
            tell_resync(
                sink,
                Notice::Resync {
                    stream: cx.stream,
                    src,
                    dst,
                    at,
                    skipped: skip + std::mem::take(&mut h.dropped),
                    reason: h.reason(),
                },
            );
        }
        h.resume_at(skip);
        true
    }

    /// Reads the size prefix at a side's position.
    fn next_frame(&mut self, cx: &mut Cx<'_>, side: Side, at: At, sink: &mut impl Sink) -> Next {
        let h = &self.halves[side];
        let have = h.unconsumed().len();
        match framing::prefix(h.unconsumed(), cx.cfg.max_frame) {
            None => Next::More,
            Some(Prefix::Bad(size)) => {
                self.tell_bad_prefix(cx, side, size, at, sink);
                Next::BadSize
            }
            Some(Prefix::Frame(len)) if have < len => Next::More,
            Some(Prefix::Frame(len)) => {
                let h = &mut self.halves[side];
                let start = h.cutting().pos;
                h.advance(len);
                Next::Frame { start, len }
            }
        }
    }

    /// A size prefix that cannot be a frame's at a side's position: told, and skipped.
    fn tell_bad_prefix(
        &mut self,
        cx: &Cx<'_>,
        side: Side,
        size: i32,
        at: At,
        sink: &mut impl Sink,
    ) {
        sink.notice(&Notice::BadSize {
            stream: cx.stream,
            src: self.addrs[side],
            at,
            size: size.into(),
        });
        self.halves[side].skip_bad_prefix();
    }

    /// Decodes the frame cut at `start` of a side's buffer.
    fn decode_frame(
        &mut self,
        cx: &mut Cx<'_>,
        side: Side,
        start: usize,
        len: usize,
        at: At,
        sink: &mut impl Sink,
    ) {
        let (first, last) = self.halves[side].frames_of(start, start + len);
        // Dated by the packet that brought its last byte: the current one, but for bytes a
        // side buffered before its connection was known to be Kafka (an answer on a
        // connection picked up mid-stream, cut once the client's next request showed it).
        let own = self.halves[side].at_of(start + len - 1);
        let at = if own.frame < at.frame { own } else { at };
        let span = Span { first, last, at };
        // The frame is decoded from the connection's buffer; move it out of the way of the
        // mutable borrows below by swapping the buffer temporarily.
        let buf = std::mem::take(&mut self.halves[side].cutting_mut().buf);
        let frame = buf.get(start..start + len).unwrap_or(&[]);
        self.decode_cut(cx, side, frame, span, sink);
        self.halves[side].cutting_mut().buf = buf;
    }

    /// Decodes a frame cut from a side, as a request or a response by the side.
    fn decode_cut(
        &mut self,
        cx: &mut Cx<'_>,
        side: Side,
        frame: &[u8],
        span: Span,
        sink: &mut impl Sink,
    ) {
        let ends = self.ends(side);
        if self.want(side) == Want::Requests {
            self.on_request(cx, ends, frame, span, None, sink);
        } else {
            if let Some(corr) = peek_response_correlation(frame) {
                if !self.pending.contains(corr) {
                    self.unstick(cx, side.other(), corr, span.at, sink);
                }
            }
            self.on_response(cx, ends, frame, span, None, sink);
        }
    }

    /// A side in step, waiting for the rest of a frame: its size prefix and the bytes it has.
    fn waiting_frame(&self, side: Side) -> Option<(i32, &[u8])> {
        let h = &self.halves[side];
        let data = h.unconsumed();
        let size = crate::be::i32_at(data.get(0..SIZE_PREFIX)?, 0);
        let incomplete = (size as usize).saturating_add(SIZE_PREFIX) > data.len();
        (!h.resync && incomplete).then_some((size, data))
    }

    /// A response answers a request that was never cut, while the request side `dq` waits for
    /// the rest of a frame: if that request's header sits inside the bytes waited on, the size
    /// prefix that made them wait was bogus. Declare it so and cut the requests from there,
    /// so they are shown, and pair, before their answers.
    fn unstick(&mut self, cx: &mut Cx<'_>, dq: Side, corr: i32, at: At, sink: &mut impl Sink) {
        let Some((size, data)) = self.waiting_frame(dq) else {
            return;
        };
        let window = data.get(..data.len().min(UNSTICK_SCAN)).unwrap_or(data);
        let inside = (1..window.len()).any(|i| {
            let rest = data.get(i..).unwrap_or(&[]);
            plausible_request_at(rest, cx.cfg.max_frame)
                && peek_request(rest).is_some_and(|p| p.correlation_id == corr)
        });
        if inside {
            self.tell_bad_prefix(cx, dq, size, at, sink);
            self.cut(cx, dq, at, sink);
        }
    }

    fn on_request(
        &mut self,
        cx: &mut Cx<'_>,
        (src, dst): (SocketAddr, SocketAddr),
        frame: &[u8],
        span: Span,
        cut: Option<Cut>,
        sink: &mut impl Sink,
    ) {
        let at = span.at;
        let mut msg = decode_request_with(frame, cx.cfg.decode);
        self.carry_client_id(&mut msg);
        cx.topics.observe(&mut msg);
        msg.keep_tree_for(cx.cfg.decode);
        // A request cut short by the end of its connection never reached the broker whole.
        let ended = matches!(cut, Some(Cut::Ended(_)));
        if let Some(info) = answerable(&msg, at).filter(|_| !ended) {
            self.remember(cx.stream, info, sink);
        }
        sink.message(&Record {
            stream: cx.stream,
            frame: at.frame,
            first_frame: span.first,
            last_frame: span.last.max(at.frame),
            ts_nanos: at.ts_nanos,
            src,
            dst,
            msg,
            bytes: frame,
            request: None,
            assumed: false,
            partial: cut.is_some(),
            ended: cut.and_then(Cut::end),
            tls: self.tls,
            input_offset: None,
        });
        self.flush_deferred(cx, sink);
    }

    /// Notes the client_id a request gives; to a request whose header (v3) leaves it null,
    /// gives the one its connection gave before, as Kafka reads it (KIP-1313: a client sends
    /// its client_id in a connection's first request only).
    fn carry_client_id(&mut self, msg: &mut Message) {
        match &msg.client_id {
            Some(Some(c)) if self.client_id.as_deref() != Some(c.as_str()) => {
                self.client_id = (c.len() <= MAX_CARRIED_CLIENT_ID).then(|| c.as_str().into());
            }
            Some(None) => {
                let v3 = msg
                    .api_key
                    .zip(msg.api_version)
                    .is_some_and(|(k, v)| request_header_version(k, v) >= 3);
                if v3 {
                    msg.carried_client_id = self.client_id.as_deref().map(String::from);
                }
            }
            _ => {}
        }
    }

    /// A request waits for its answer; past `max_pending`, the oldest are dropped (and told).
    fn remember(&mut self, stream: u32, request: RequestInfo, sink: &mut impl Sink) {
        for dropped in self.pending.insert(request.correlation_id, request) {
            sink.notice(&Notice::PendingDropped {
                stream,
                request: dropped,
                for_memory: false,
            });
        }
        if !self.used.contains(&request.api()) {
            self.used.push(request.api());
        }
    }

    fn on_response(
        &mut self,
        cx: &mut Cx<'_>,
        ends: (SocketAddr, SocketAddr),
        frame: &[u8],
        span: Span,
        cut: Option<Cut>,
        sink: &mut impl Sink,
    ) {
        let request = peek_response_correlation(frame).and_then(|c| self.pending.take(c));
        if request.is_none() && cut.is_none() && self.used.is_empty() && self.pending.is_empty() {
            // An answer to a request sent before the capture, on a connection that has used
            // nothing yet: its client's next request will say which version it speaks.
            self.flush_deferred(cx, sink);
            self.deferred = Some(Box::new(Deferred {
                bytes: frame.to_vec(),
                ends,
                span,
            }));
            return;
        }
        self.answer(cx, ends, frame, span, (cut, request), sink);
    }

    /// The answer held back for the connection's first request, decoded now with what the
    /// connection used (if anything yet).
    fn flush_deferred(&mut self, cx: &mut Cx<'_>, sink: &mut impl Sink) {
        if let Some(d) = self.deferred.take() {
            self.answer(cx, d.ends, &d.bytes, d.span, (None, None), sink);
        }
    }

    /// A response decoded with its request (or, without one, with what the connection used),
    /// to the sink.
    fn answer(
        &mut self,
        cx: &mut Cx<'_>,
        (src, dst): (SocketAddr, SocketAddr),
        frame: &[u8],
        span: Span,
        (cut, request): (Option<Cut>, Option<RequestInfo>),
        sink: &mut impl Sink,
    ) {
        let at = span.at;
        let (mut msg, assumed) = match request {
            Some(r) => (paired_response(frame, r, cut, cx.cfg.decode), false),
            None => unpaired_response(frame, cut, &self.used),
        };
        cx.topics.observe(&mut msg);
        msg.keep_tree_for(cx.cfg.decode);
        sink.message(&Record {
            stream: cx.stream,
            frame: at.frame,
            first_frame: span.first,
            last_frame: span.last.max(at.frame),
            ts_nanos: at.ts_nanos,
            src,
            dst,
            msg,
            bytes: frame,
            request,
            assumed,
            partial: cut.is_some(),
            ended: cut.and_then(Cut::end),
            tls: self.tls,
            input_offset: None,
        });
    }

    /// Bytes of one side that will never arrive: report the frame they cut, show what was
    /// captured of it, and look for the next frame boundary after them.
    fn gap(
        &mut self,
        cx: &mut Cx<'_>,
        ends: (SocketAddr, SocketAddr),
        kind: GapKind,
        at: At,
        sink: &mut impl Sink,
    ) {
        let side = self.addrs.side_of(&ends.0);
        let want = want_from(self.broker() != Some(ends.0));
        if kind == GapKind::MidStream {
            self.picked_up.0 = true;
            self.tell_picked_up(cx, sink);
        }
        if self.state == State::Kafka {
            self.settle_before_gap(cx, side, ends, want, at, sink);
        }
        let present = self.tell_gap(cx, side, ends, kind, at, sink);
        // Show what the gap left of the frame: its header at least.
        if self.state == State::Kafka && present >= framing::RESPONSE_PEEK {
            self.show_partial(cx, side, ends, want, at, Cut::Gap, sink);
        }
        self.halves[side].restart_after_gap(kind);
    }

    /// A Kafka connection picked up mid-stream is told once (for the statistics); one still
    /// being detected, when it turns out to be Kafka.
    fn tell_picked_up(&mut self, cx: &Cx<'_>, sink: &mut impl Sink) {
        if self.state == State::Kafka && self.picked_up == (true, false) {
            self.picked_up.1 = true;
            sink.notice(&Notice::PickedUp { stream: cx.stream });
        }
    }

    /// While still looking for a boundary after an earlier gap, the buffered bytes are a frame
    /// only from a plausible header on (a response's must answer a pending request); before it
    /// they belong to the loss already reported.
    fn settle_before_gap(
        &mut self,
        cx: &Cx<'_>,
        side: Side,
        (src, dst): (SocketAddr, SocketAddr),
        want: Want,
        at: At,
        sink: &mut impl Sink,
    ) {
        let h = &mut self.halves[side];
        if !h.resync {
            return;
        }
        let found = framing::first_candidate(h.unconsumed(), want, &self.pending, cx.cfg.max_frame);
        let Some(i) = found else {
            return;
        };
        // A frame right where the search began passed nothing over: no resynchronisation.
        let skipped = i + std::mem::take(&mut h.dropped);
        if skipped > 0 {
            tell_resync(
                sink,
                Notice::Resync {
                    stream: cx.stream,
                    src,
                    dst,
                    at,
                    skipped,
                    reason: h.reason(),
                },
            );
        }
        h.advance(i);
        h.resync = false;
    }

    /// Tells the loss of a gap, and returns how many bytes of the frame it cut were captured.
    /// A gap between frames may still have swallowed whole frames: every loss is reported;
    /// only a mid-stream start with nothing buffered is silent here (the resync notice tells
    /// it).
    fn tell_gap(
        &self,
        cx: &Cx<'_>,
        side: Side,
        (src, dst): (SocketAddr, SocketAddr),
        kind: GapKind,
        at: At,
        sink: &mut impl Sink,
    ) -> usize {
        let h = &self.halves[side];
        // What a cut left out is no loss: the frame it cut belongs to a message not kept.
        if matches!(kind, GapKind::LeftOut(_)) {
            return 0;
        }
        let present = if h.resync { 0 } else { h.unconsumed().len() };
        if self.state == State::Kafka && !h.resync && (present > 0 || kind != GapKind::MidStream) {
            sink.notice(&Notice::LostInGap {
                stream: cx.stream,
                src,
                dst,
                at,
                present,
                kind,
            });
        }
        present
    }

    /// Decodes what a gap (or the stream's end) left of the frame it cut, shown as partial.
    #[allow(clippy::too_many_arguments)] // one call per cause, each with the frame's place
    fn show_partial(
        &mut self,
        cx: &mut Cx<'_>,
        side: Side,
        ends: (SocketAddr, SocketAddr),
        want: Want,
        at: At,
        cut: Cut,
        sink: &mut impl Sink,
    ) {
        let h = &mut self.halves[side];
        let (pos, len) = (h.cutting().pos, h.cutting().buf.len());
        let (first, last) = h.frames_of(pos, len);
        let span = Span { first, last, at };
        let c = h.cutting_mut();
        let part = c.buf.split_off(c.pos);
        if want == Want::Requests {
            self.on_request(cx, ends, &part, span, Some(cut), sink);
        } else {
            self.on_response(cx, ends, &part, span, Some(cut), sink);
        }
    }

    /// The connection ended: cut what is left, report what cannot be.
    fn end(&mut self, cx: &mut Cx<'_>, end: (EndKind, At), sink: &mut impl Sink) {
        self.flush_deferred(cx, sink);
        for side in Side::BOTH {
            self.rescan_at_end(cx, side, sink);
        }
        for side in Side::BOTH {
            self.resync_at_end(cx, side, sink);
        }
        for side in Side::BOTH {
            self.report_leftovers(cx, side, end, sink);
        }
    }

    /// At the end of a connection: a side still waiting for the rest of a frame whose bytes
    /// hold a plausible frame start after the prefix had a bogus prefix, and the frames after
    /// it are still to be shown: resynchronise.
    fn rescan_at_end(&mut self, cx: &mut Cx<'_>, side: Side, sink: &mut impl Sink) {
        let Some((size, data)) = self.waiting_frame(side) else {
            return;
        };
        let want = self.want(side);
        // A frame whose own header is a candidate (a likely request, or a response answering
        // a waiting request) was cut short by the end, not started by a bogus prefix: a
        // header-like run of bytes inside it (a big Metadata answer holds many) is no reason
        // to drop it. It is shown partial, as far as it came.
        let waiting = |c| self.pending.contains(c);
        if framing::candidate_at(data, want, cx.cfg.max_frame, waiting) == Some(true) {
            return;
        }
        let rest = data.get(1..).unwrap_or(&[]);
        if framing::first_candidate(rest, want, &self.pending, cx.cfg.max_frame).is_none() {
            return;
        }
        let at = self.halves[side].last_at;
        self.tell_bad_prefix(cx, side, size, at, sink);
        self.cut(cx, side, at, sink);
    }

    /// Bytes still waiting for a verified boundary: at the end, a plausible header is the
    /// best there is; decode from it rather than drop them.
    fn resync_at_end(&mut self, cx: &mut Cx<'_>, side: Side, sink: &mut impl Sink) {
        let want = self.want(side);
        let (src, dst) = self.ends(side);
        let h = &mut self.halves[side];
        if !h.resync {
            return;
        }
        let found = framing::first_candidate(h.unconsumed(), want, &self.pending, cx.cfg.max_frame);
        let Some(i) = found else {
            return;
        };
        let at = h.last_at;
        if i > 0 {
            tell_resync(
                sink,
                Notice::Resync {
                    stream: cx.stream,
                    src,
                    dst,
                    at,
                    skipped: i + std::mem::take(&mut h.dropped),
                    reason: h.reason(),
                },
            );
        }
        h.advance(i);
        h.resync = false;
        h.why = None;
        self.cut(cx, side, at, sink);
    }

    /// What a side left at the connection's end: bytes skipped while resynchronising, and a
    /// frame it ended inside (told, and shown as far as it was captured), dated by the packet
    /// that ended the connection, or at the end of the capture by the frame's last packet.
    fn report_leftovers(
        &mut self,
        cx: &mut Cx<'_>,
        side: Side,
        (end, closed_at): (EndKind, At),
        sink: &mut impl Sink,
    ) {
        let h = &self.halves[side];
        let (src, dst) = self.ends(side);
        let present = h.unconsumed().len();
        if h.resync && present + h.dropped > 0 {
            // Still looking for a boundary at the end: all of it was skipped.
            tell_resync(
                sink,
                Notice::Resync {
                    stream: cx.stream,
                    src,
                    dst,
                    at: h.last_at,
                    skipped: present + h.dropped,
                    reason: h.reason(),
                },
            );
        }
        if present > 0 && !h.resync {
            let want = h.unconsumed().get(0..SIZE_PREFIX).map_or(SIZE_PREFIX, |b| {
                crate::be::i32_at(b, 0).max(0) as usize + SIZE_PREFIX
            });
            let at = if end == EndKind::CaptureEnd {
                h.last_at
            } else {
                closed_at
            };
            sink.notice(&Notice::EndedInFrame {
                stream: cx.stream,
                src,
                dst,
                at,
                present,
                want,
                end,
            });
            let side_wants = self.want(side);
            let header = if side_wants == Want::Requests {
                framing::REQUEST_PEEK
            } else {
                framing::RESPONSE_PEEK
            };
            if present >= header {
                self.show_partial(cx, side, (src, dst), side_wants, at, Cut::Ended(end), sink);
            }
        }
    }
}

/// Whether a packet's bytes begin at `off` of a side's buffer (`KHalf::marks`).
fn is_packet_start(marks: &VecDeque<(usize, At)>, off: usize) -> bool {
    marks.binary_search_by_key(&off, |m| m.0).is_ok()
}

/// Why only the start of a frame is decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// A gap took the rest.
    Gap,
    /// The stream ended first.
    Ended(EndKind),
}

impl Cut {
    fn end(self) -> Option<EndKind> {
        match self {
            Cut::Gap => None,
            Cut::Ended(e) => Some(e),
        }
    }
}

/// The packet an event came with, if it says.
fn event_frame(ev: &Event<'_>) -> Option<u64> {
    match ev {
        Event::Data { at, .. }
        | Event::Gap { at, .. }
        | Event::Retransmission { at, .. }
        | Event::ConflictingOverlap { at, .. }
        | Event::Close { at, .. } => Some(at.frame),
        Event::Open { .. } => None,
    }
}

/// Which frames a side sends.
fn want_from(requests: bool) -> Want {
    if requests {
        Want::Requests
    } else {
        Want::Responses
    }
}

/// The request a response may answer, if `msg` is one worth waiting for
/// ([`waits_for_answer`]): junk read as a header must not capture a later response's
/// correlation id.
fn answerable(msg: &Message, at: At) -> Option<RequestInfo> {
    let (k, v) = msg.api_key.zip(msg.api_version)?;
    let correlation_id = msg.correlation_id?;
    waits_for_answer(k, v).then_some(RequestInfo {
        frame: at.frame,
        ts_nanos: at.ts_nanos,
        api_key: k,
        api_version: v,
        correlation_id,
        embedded: msg
            .embedded
            .as_ref()
            .and_then(|e| e.api_key.zip(e.api_version)),
    })
}

/// A response decoded with its request's API and version; when it does not decode cleanly,
/// with a word on the version it does decode as.
fn paired_response(frame: &[u8], r: RequestInfo, cut: Option<Cut>, opts: DecodeOptions) -> Message {
    let mut m = decode_response_embedding(frame, (r.api_key, r.api_version), r.embedded, opts);
    if !m.is_clean() && cut.is_none() {
        if let Some(d) = other_version_hint(frame, r.api_key, r.api_version) {
            m.diagnoses.push(d);
        }
    }
    m
}

/// A response whose request was not captured, and whether its API was inferred.
fn unpaired_response(frame: &[u8], cut: Option<Cut>, used: &[(i16, i16)]) -> (Message, bool) {
    if let Some(cut) = cut {
        let why = match cut {
            Cut::Gap => HeaderOnly::LostInGap,
            Cut::Ended(_) => HeaderOnly::StreamEnded,
        };
        return (
            decode_response_header_only(frame, ErrorKind::Malformed, why),
            false,
        );
    }
    match guess_response(frame, used) {
        Some(m) => (m, true),
        None => (
            decode_response_header_only(frame, ErrorKind::Unpaired, HeaderOnly::NoGuess),
            false,
        ),
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
        if crate::kafka::walk::message::response_is_clean(frame, key, v) {
            return Some(Diagnosis {
                kind: ProblemKind::WrongVersionLayout,
                offset: 0,
                path: Path::default(),
                detail: Detail::WrongVersionLayout {
                    asked: version,
                    name: spec.name,
                    fits: v,
                },
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{Config, Notice, Record, Sink, Tracker};
    use crate::tcp::{At, Event};
    use std::net::SocketAddr;

    /// Frames of the messages, with the packet that completed each and its first packet.
    #[derive(Default)]
    struct Seen(Vec<(u64, u64, u64)>);

    impl Sink for Seen {
        fn message(&mut self, rec: &Record<'_>) {
            self.0.push((rec.frame, rec.first_frame, rec.last_frame));
        }
        fn notice(&mut self, _: &Notice) {}
    }

    /// An ApiVersions v0 request frame with a null client id.
    fn api_versions(corr: i32) -> Vec<u8> {
        let mut f = vec![0, 0, 0, 10, 0, 18, 0, 0];
        f.extend_from_slice(&corr.to_be_bytes());
        f.extend_from_slice(&[0xff, 0xff]);
        f
    }

    /// What the client side of stream 0 has buffered: bytes not cut, capacity, marks.
    fn buffered(t: &Tracker) -> (usize, usize, usize) {
        t.conns.get(&0).map_or((0, 0, 0), |c| {
            let h = &c.halves[c.addrs.side_of(&client())];
            (
                h.unconsumed().len(),
                h.cutting().buf.capacity(),
                h.cutting().marks.len(),
            )
        })
    }

    /// The final list keeps up to `KEEP_UNANSWERED` of these: the size its comment gives.
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn an_unanswered_request_is_kept_in_56_bytes() {
        assert_eq!(std::mem::size_of::<super::Unanswered>(), 56);
    }

    fn client() -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 2], 40000))
    }

    fn data(t: &mut Tracker, seen: &mut Seen, bytes: &[u8], frame: u64) {
        let broker = SocketAddr::from(([10, 0, 0, 1], 9092));
        let at = At { frame, ts_nanos: 0 };
        let ev = Event::Data {
            stream: 0,
            src: client(),
            dst: broker,
            bytes,
            at,
        };
        t.event(ev, seen);
    }

    /// Frames wholly within a packet are cut from the packet; only the frame that goes on in
    /// the next packet is buffered, dated by both packets, and once it is cut the buffer is
    /// given back: between frames a side holds no memory.
    #[test]
    fn frames_within_a_packet_are_not_buffered_and_buffers_go_once_empty() {
        let mut t = Tracker::new(Config::default());
        let mut seen = Seen::default();
        t.event(
            Event::Open {
                stream: 0,
                a: client(),
                b: SocketAddr::from(([10, 0, 0, 1], 9092)),
                syn_from: Some(client()),
            },
            &mut seen,
        );
        let third = api_versions(3);
        let mut first = [api_versions(1), api_versions(2)].concat();
        first.extend_from_slice(third.get(..5).unwrap_or_default());
        data(&mut t, &mut seen, &first, 4);
        assert_eq!(seen.0, vec![(4, 4, 4), (4, 4, 4)]);
        let (left, cap, marks) = buffered(&t);
        assert_eq!(left, 5, "only the third frame's first bytes are buffered");
        assert!(
            cap < first.len(),
            "capacity {cap}: the whole packet was copied"
        );
        assert_eq!(marks, 1);
        data(&mut t, &mut seen, third.get(5..).unwrap_or_default(), 6);
        assert_eq!(seen.0.get(2), Some(&(6, 4, 6)));
        assert_eq!(buffered(&t), (0, 0, 0), "the buffer outlived its frame");
    }

    /// What a mid-stream test sees of each message: frame, sender's port, request or not,
    /// and whether an answer was paired with its request.
    #[derive(Default)]
    struct Heard(Vec<(u64, u16, bool, bool)>, Vec<Notice>);

    impl Sink for Heard {
        fn message(&mut self, rec: &Record<'_>) {
            let request = rec.msg.direction == crate::kafka::spec::schema::Direction::Request;
            self.0
                .push((rec.frame, rec.src.port(), request, rec.request.is_some()));
        }
        fn notice(&mut self, n: &Notice) {
            self.1.push(n.clone());
        }
    }

    /// A Fetch v16 answer with no topics: with a correlation id under 65 536 it reads as a
    /// "Produce" request header of that version, corr 0, empty client_id.
    fn fetch_answer(corr: i32) -> Vec<u8> {
        let mut f = vec![0, 0, 0, 17];
        f.extend_from_slice(&corr.to_be_bytes());
        f.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0x25, 0xc5, 0x96, 0xc5, 1, 0]);
        f
    }

    /// Picked up mid-stream on a port not given, the broker speaks first: its answer reads as
    /// a request header. The client is still the side that sends requests, found when its
    /// request comes; the broker's first answer is shown as an answer, in its place.
    #[test]
    fn a_connection_picked_up_mid_stream_keeps_its_client_when_the_broker_speaks_first() {
        use crate::tcp::GapKind;
        let broker = SocketAddr::from(([127, 0, 0, 4], 9292));
        let client = SocketAddr::from(([127, 0, 0, 1], 53228));
        let mut t = Tracker::new(Config::default());
        let mut seen = Heard::default();
        let at = |frame| At { frame, ts_nanos: 0 };
        let open = Event::Open {
            stream: 0,
            a: broker,
            b: client,
            syn_from: None,
        };
        t.event(open, &mut seen);
        let send = |t: &mut Tracker, seen: &mut Heard, (src, dst), bytes: &[u8], frame| {
            t.event(
                Event::Data {
                    stream: 0,
                    src,
                    dst,
                    bytes,
                    at: at(frame),
                },
                seen,
            )
        };
        for (src, dst) in [(broker, client), (client, broker)] {
            let kind = GapKind::MidStream;
            let gap = Event::Gap {
                stream: 0,
                src,
                dst,
                kind,
                at: at(1),
            };
            t.event(gap, &mut seen);
        }
        send(&mut t, &mut seen, (broker, client), &fetch_answer(14), 1);
        assert!(seen.0.is_empty(), "nothing decided on the answer alone");
        send(&mut t, &mut seen, (client, broker), &api_versions(15), 2);
        send(&mut t, &mut seen, (broker, client), &fetch_answer(15), 3);
        let mut got = seen.0.clone();
        got.sort();
        assert_eq!(
            got,
            vec![
                (1, 9292, false, false),
                (2, 53228, true, false),
                (3, 9292, false, true)
            ]
        );
        let told = seen.1.iter().find_map(|n| match n {
            Notice::Connection {
                client: c,
                broker: b,
                detected,
                ..
            } => Some((*c, *b, *detected)),
            _ => None,
        });
        assert_eq!(told, Some((client, broker, true)));
    }

    /// The client a connection on ports that say nothing was told with, if any.
    fn told_client(seen: &Heard) -> Option<SocketAddr> {
        seen.1.iter().find_map(|n| match n {
            Notice::Connection { client, .. } => Some(*client),
            _ => None,
        })
    }

    /// A request header alone, its frame still arriving, between two ports that say nothing:
    /// not decisive, so the connection waits. It is taken for Kafka, that side the client,
    /// once it has waited `DEFER_PACKETS` packets of the capture (so that what it holds is
    /// shown in its place), or when it ends; a connection where no side sent a header never is.
    #[test]
    fn a_lone_request_header_is_taken_when_its_connection_cannot_wait() {
        use crate::tcp::EndKind;
        let (a, b) = (
            SocketAddr::from(([10, 0, 0, 1], 40000)),
            SocketAddr::from(([10, 0, 0, 2], 40001)),
        );
        let at = |frame| At { frame, ts_nanos: 0 };
        // An ApiVersions request whose size prefix says 6 more bytes are to come.
        let mut part = api_versions(7);
        part.splice(0..4, 16i32.to_be_bytes());
        let part = &part[..];
        for ends_by_close in [false, true] {
            for bytes in [part, &[0, 0, 0, 3, 1, 2, 3][..]] {
                let mut t = Tracker::new(Config::default());
                let mut seen = Heard::default();
                let open = Event::Open {
                    stream: 0,
                    a,
                    b,
                    syn_from: None,
                };
                t.event(open, &mut seen);
                let data = Event::Data {
                    stream: 0,
                    src: b,
                    dst: a,
                    bytes,
                    at: at(10),
                };
                t.event(data, &mut seen);
                assert_eq!(told_client(&seen), None, "decided on a header alone");
                let later = 10 + super::DEFER_PACKETS;
                let ev = if ends_by_close {
                    Event::Close {
                        stream: 0,
                        end: EndKind::Reset,
                        at: at(11),
                    }
                } else {
                    // Another connection's packet, DEFER_PACKETS later.
                    Event::Data {
                        stream: 1,
                        src: a,
                        dst: b,
                        bytes: &[],
                        at: at(later),
                    }
                };
                t.event(ev, &mut seen);
                let header_sent = bytes.len() == part.len();
                let want = header_sent.then_some(b);
                assert_eq!(told_client(&seen), want, "close {ends_by_close}");
            }
        }
    }
}
