//! TLS on the wire, between reassembly and the Kafka layer. Connections that open with a TLS
//! handshake are taken out of the byte streams. With the session secrets (a key log, or a
//! pcapng Decryption Secrets Block) each direction is decrypted and handed on as the
//! plaintext byte stream the Kafka layer reads as if there had been no TLS; without them the
//! connection is summed up instead (version, suite, SNI, ALPN, records and bytes), since
//! feeding ciphertext to the Kafka framer would only produce a stream of bogus frames.
//!
//! The record layer (RFC 8446 §5, RFC 5246 §6.2) and the handshake far enough to learn the
//! version, suite, randoms, SNI, ALPN and resumption; keys and record protection in
//! [`crypto`], secrets in [`keylog`], one connection's state machine in `conn`.
// Input-derived values never index, unwrap or expect here: a hostile capture must not panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod conn;
pub mod crypto;
mod hello;
pub mod keylog;

use crate::tcp::{At, Event, GapKind};
use conn::Conn;
use keylog::{KeyLog, Secrets};
use std::cell::Cell;
use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::Arc;

/// Record content types.
const CHANGE_CIPHER_SPEC: u8 = 20;
const ALERT: u8 = 21;
const HANDSHAKE: u8 = 22;
const APPLICATION_DATA: u8 = 23;
/// Largest record body TLS allows (2^14 plus the most expansion any version permits).
pub const MAX_RECORD: usize = 16_384 + 2_048;

/// Whether `bytes` (the first bytes a side sent) start a TLS handshake record: content type
/// 22, major version 3, a length a record can have. A Kafka frame starting with these bytes
/// would claim a size of about 370 MB, so the two cannot be confused.
pub fn starts_tls(bytes: &[u8]) -> bool {
    match bytes {
        [HANDSHAKE, 3, minor, hi, lo, ..] => {
            *minor <= 4 && usize::from(u16::from_be_bytes([*hi, *lo])) <= MAX_RECORD
        }
        _ => false,
    }
}

/// Whether the session keys of a connection were found, and what they did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Keys {
    /// No key log was given and the capture carries none.
    #[default]
    NoKeyLog,
    /// Key logs were given, but none holds this connection's ClientHello random.
    Missing,
    /// As `Missing`, but the key logs held more client randoms than are kept
    /// (`keylog::MAX_ENTRIES`): this one may be among those left out.
    NotKept,
    /// Secrets found for its random; nothing encrypted was seen to try them on.
    Found,
    /// Its records decrypt.
    Decrypted,
    /// Secrets found, but the first record did not authenticate with them (a key log of
    /// another run, or of another connection's random).
    Wrong,
    /// The suite chosen is not one decrypted here.
    UnsupportedSuite,
    /// The handshake needed to use the secrets (the hellos) was not captured.
    NoHandshake,
}

impl Keys {
    /// Whether the connection's Kafka traffic was decrypted.
    pub fn decrypted(self) -> bool {
        self == Keys::Decrypted
    }
}

/// What was learnt of one TLS connection, reported once: when its records start to decrypt,
/// or else when it ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsConnection {
    pub stream: u32,
    /// The side that sent the ClientHello, and the other.
    pub client: SocketAddr,
    pub server: SocketAddr,
    /// Where the handshake was first seen.
    pub first: At,
    /// Where this report is made, and the frame its line is dated by: the handshake for a
    /// connection that decrypts (it is reported at its first record that authenticates), the
    /// connection's end for one that does not (its byte and record counts are known only then),
    /// so that the line keeps frame order with the messages around it.
    pub told: At,
    /// The negotiated version (0x0304 is TLS 1.3), from the ServerHello, or else the highest
    /// the client offered.
    pub version: Option<u16>,
    /// Whether `version` comes from the server's answer.
    pub negotiated: bool,
    /// The cipher suite the server chose.
    pub suite: Option<u16>,
    pub sni: Option<String>,
    pub alpn: Vec<String>,
    /// A resumed session (TLS 1.3 PSK, or TLS 1.2: a session id the server took up, or its
    /// ChangeCipherSpec before the client's).
    pub resumed: bool,
    pub keys: Keys,
    /// TLS records seen, both directions.
    pub records: u64,
    /// Bytes of application-data records (the encrypted Kafka traffic), both directions.
    pub encrypted_bytes: u64,
    /// Bytes of every record, headers included, both directions.
    pub total_bytes: u64,
    /// Bytes the capture missed inside the connection.
    pub lost_bytes: u64,
    /// The ClientHello random and the secrets used, when it decrypts (for `--inject-secrets`).
    pub secrets: Option<KeyedRandom>,
    /// Picked up mid-stream: its TLS records were recognised without a handshake.
    pub midstream: bool,
}

/// A ClientHello random and the secrets logged for it.
pub type KeyedRandom = ([u8; 32], Secrets);

/// `TLS 1.3`, `TLS 1.0`, `SSL 3.0`.
pub fn version_name(v: u16) -> String {
    match v {
        0x0300 => "SSL 3.0".into(),
        0x0301..=0x0304 => format!("TLS 1.{}", v - 0x0301),
        other => format!("TLS version 0x{other:04x}"),
    }
}

/// The IANA name of a suite, else its number.
pub fn suite_name(id: u16) -> String {
    crypto::iana_name(id).map_or_else(|| format!("cipher suite 0x{id:04x}"), String::from)
}

/// Something that went wrong inside one direction of a TLS connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    /// The capture lost bytes: decryption of the direction waits for a record that
    /// authenticates.
    Lost { bytes: u64 },
    /// After a loss, decryption found its place again, `skipped` bytes later.
    Resumed { skipped: u64 },
    /// After a loss, no record authenticated within the search budget: the direction is no
    /// longer decrypted.
    GaveUp { why: GiveUp },
    /// A record header that cannot be TLS (content type, version or length).
    BadHeader { kind: u8, len: usize },
    /// A record that did not authenticate on a connection whose records did before.
    BadTag { seq: u64 },
    /// A renegotiation (TLS 1.2), or any hello inside the encrypted connection: its new keys
    /// are not followed; the connection is no longer decrypted.
    Renegotiation,
    /// A second ServerHello in the clear (not after a HelloRetryRequest): ignored.
    SecondServerHello,
}

/// Which bound ended the search after a loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GiveUp {
    /// `MAX_TRIALS` record openings after this loss.
    Trials,
    /// The connection's budget (`Limits::max_search`).
    Connection,
    /// All connections' budget (`Limits::max_search_total`).
    Total,
}

/// Bounds of the TLS stage that flags set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes one connection may decrypt on trial while looking for its place after losses,
    /// over its whole life (`--max-tls-search`).
    pub max_search: u64,
    /// The same for all connections together (`--max-tls-search-total`).
    pub max_search_total: u64,
}

/// `--max-tls-search`'s default: some 4000 trials of a full record. A loss of a few records
/// costs a few trials (TLS 1.2 AES-GCM: one, its explicit nonce); the rest is for a capture
/// that loses much, or one made to.
pub const MAX_SEARCH: u64 = 64 * 1024 * 1024;
/// `--max-tls-search-total`'s default: about a second of AES-GCM at the speed measured in
/// docs/robustness.md.
pub const MAX_SEARCH_TOTAL: u64 = 1024 * 1024 * 1024;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_search: MAX_SEARCH,
            max_search_total: MAX_SEARCH_TOTAL,
        }
    }
}

/// A problem, where it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsNotice {
    pub stream: u32,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub at: At,
    pub problem: Problem,
}

/// What the TLS stage hands on for one event.
#[derive(Debug)]
pub enum Out<'a> {
    /// For the Kafka layer: events of connections that are not TLS, and the plaintext of
    /// those decrypted (their data, gaps and close).
    Pass(Event<'a>),
    /// The one report of a TLS connection. With `keys == Keys::Decrypted` its plaintext
    /// follows in `Pass` events.
    Connection(&'a TlsConnection),
    Notice(TlsNotice),
}

/// The TLS stage: passes non-TLS connections through untouched, decrypts TLS ones it has the
/// secrets of, and sums up the rest.
#[derive(Debug)]
pub struct TlsFilter {
    /// Streams whose first bytes were seen, and whether they are TLS.
    decided: HashMap<u32, bool, foldhash::fast::RandomState>,
    conns: HashMap<u32, Conn, foldhash::fast::RandomState>,
    /// Streams picked up mid-stream whose first bytes are being looked at, and their first
    /// frames (`oldest_held`).
    sniffing: HashMap<u32, Sniff, foldhash::fast::RandomState>,
    sniff_order: BTreeSet<(u64, u32)>,
    /// Bytes `sniffing` holds.
    sniff_bytes: usize,
    /// The key logs given on the command line.
    given: Arc<KeyLog>,
    /// Secrets the capture itself carries (pcapng Decryption Secrets Blocks).
    embedded: KeyLog,
    /// Where records are decrypted (one buffer for all connections).
    scratch: Vec<u8>,
    /// Bytes all connections hold (`Conn::footprint`).
    held: usize,
    limits: Limits,
    /// Bytes all connections may still decrypt on trial after losses.
    search_left: Cell<u64>,
    /// Directions given up because the search after a loss spent the connection's budget,
    /// and because it spent all connections' budget.
    pub search_limit_hits: u64,
    pub search_total_hits: u64,
    /// (frame, stream) of the connections whose report may still come dated before now
    /// (`Conn::untold_since`), oldest first: the sinks hold later lines until it comes.
    untold: BTreeSet<(u64, u32)>,
}

/// Bytes all TLS connections together hold at most: records being gathered (at most one per
/// direction, 18 KiB), ciphertext searched after a loss (four records per direction) and
/// hellos being read (up to 128 KiB). Past it, the connection that went over lets go of what
/// it holds, as if the capture had lost it (and says so).
pub const MAX_HELD: usize = 64 * 1024 * 1024;

/// A connection picked up mid-stream is held back from the Kafka layer until its first bytes
/// say whether they are TLS records: at most this many data events...
const SNIFF_EVENTS: u32 = 16;
/// ... and this many bytes (a TLS record and a half: a header is found within a record's
/// length, and the next one after it)...
const SNIFF_BYTES: usize = 48 * 1024;
/// ... and all such connections together this many bytes; past these, what is held is
/// handed on as not TLS. Bytes with many zeros (Kafka's size prefixes and integers) are not
/// ciphertext and are handed on at once.
const SNIFF_TOTAL: usize = 16 * 1024 * 1024;

/// The events of a connection picked up mid-stream, held while its first bytes are looked at.
#[derive(Debug)]
struct Sniff {
    held: Vec<Held>,
    /// Each direction's bytes so far, by sender.
    dirs: Vec<(SocketAddr, Vec<u8>)>,
    data_events: u32,
    bytes: usize,
    first: At,
}

/// An event held (owned).
#[derive(Debug)]
enum Held {
    Gap {
        src: SocketAddr,
        dst: SocketAddr,
        kind: GapKind,
        at: At,
    },
    Data {
        src: SocketAddr,
        dst: SocketAddr,
        bytes: Vec<u8>,
        at: At,
    },
    Retransmission {
        src: SocketAddr,
        at: At,
    },
    Overlap {
        src: SocketAddr,
        at: At,
        offset: u64,
    },
}

impl Held {
    fn event(&self, stream: u32) -> Event<'_> {
        match self {
            Held::Gap { src, dst, kind, at } => Event::Gap {
                stream,
                src: *src,
                dst: *dst,
                kind: *kind,
                at: *at,
            },
            Held::Data {
                src,
                dst,
                bytes,
                at,
            } => Event::Data {
                stream,
                src: *src,
                dst: *dst,
                bytes,
                at: *at,
            },
            Held::Retransmission { src, at } => Event::Retransmission {
                stream,
                src: *src,
                at: *at,
            },
            Held::Overlap { src, at, offset } => Event::ConflictingOverlap {
                stream,
                src: *src,
                at: *at,
                offset: *offset,
            },
        }
    }
}

/// What the first bytes of a connection picked up mid-stream say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Tls,
    NotTls,
    Wait,
}

/// Bytes with more zeros than ciphertext ever has (1 in 256 on average; here more than 1 in
/// 32, and 3 at least): Kafka's size prefixes, lengths and small integers.
fn has_plaintext_zeros(bytes: &[u8]) -> bool {
    let zeros = bytes.iter().filter(|&&b| b == 0).count();
    bytes.len() >= 16 && zeros > bytes.len() / 32 + 2
}

impl Sniff {
    fn verdict(&self) -> Verdict {
        if self
            .dirs
            .iter()
            .any(|(_, b)| conn::record_start(b).is_some())
        {
            return Verdict::Tls;
        }
        if self.dirs.iter().any(|(_, b)| has_plaintext_zeros(b)) {
            return Verdict::NotTls;
        }
        if self.data_events >= SNIFF_EVENTS || self.bytes >= SNIFF_BYTES {
            return Verdict::NotTls;
        }
        Verdict::Wait
    }

    /// The server end: the endpoint with the lower port (a listener's, where the other is
    /// an ephemeral port), as nothing else tells them apart mid-stream.
    fn ends(&self) -> Option<(SocketAddr, SocketAddr)> {
        self.held.iter().find_map(|h| match h {
            Held::Gap { src, dst, .. } | Held::Data { src, dst, .. } => {
                Some(if src.port() < dst.port() {
                    (*dst, *src)
                } else {
                    (*src, *dst)
                })
            }
            _ => None,
        })
    }
}

impl Default for TlsFilter {
    fn default() -> TlsFilter {
        TlsFilter::new()
    }
}

impl TlsFilter {
    pub fn new() -> TlsFilter {
        TlsFilter::with_limits(Arc::default(), Limits::default())
    }

    /// A filter that decrypts with these secrets.
    pub fn with_keys(given: Arc<KeyLog>) -> TlsFilter {
        TlsFilter::with_limits(given, Limits::default())
    }

    /// A filter that decrypts with these secrets, within these bounds.
    pub fn with_limits(given: Arc<KeyLog>, limits: Limits) -> TlsFilter {
        TlsFilter {
            decided: HashMap::default(),
            conns: HashMap::default(),
            sniffing: HashMap::default(),
            sniff_order: BTreeSet::new(),
            sniff_bytes: 0,
            given,
            embedded: KeyLog::default(),
            scratch: Vec::new(),
            held: 0,
            limits,
            search_left: Cell::new(limits.max_search_total),
            search_limit_hits: 0,
            search_total_hits: 0,
            untold: BTreeSet::new(),
        }
    }

    /// Secrets met in the capture (a Decryption Secrets Block): they apply to connections
    /// whose ServerHello comes after them, as in Wireshark.
    pub fn add_embedded(&mut self, text: &[u8]) {
        self.embedded.add_text(text);
    }

    /// The first frame of the connections held back while their first bytes are looked at:
    /// nothing they hold is handed on dated before it.
    pub fn oldest_held(&self) -> Option<u64> {
        self.sniff_order.first().map(|(f, _)| *f)
    }

    /// The frame the oldest report still to come will be dated by (a connection that may yet
    /// decrypt is reported at its first record that authenticates, dated by its handshake):
    /// nothing the sinks print after it may go out before it does.
    pub fn oldest_untold(&self) -> Option<u64> {
        self.untold.first().map(|(f, _)| *f)
    }

    /// Keeps `untold` in step with the connection of `stream` after an event.
    fn note_untold(&mut self, stream: u32) {
        let any = !self.given.is_empty() || !self.embedded.is_empty();
        let Some(c) = self.conns.get(&stream) else {
            return;
        };
        let key = (c.first_frame(), stream);
        match c.untold_since(any) {
            Some(_) => self.untold.insert(key),
            None => self.untold.remove(&key),
        };
    }

    /// Looks at one event from reassembly; what it makes goes to `out`.
    pub fn event<'e>(&mut self, ev: Event<'e>, out: &mut dyn FnMut(Out<'_>)) {
        let (mut conn_hits, mut total_hits) = (0, 0);
        let mut counted = |o: Out<'_>| {
            if let Out::Notice(TlsNotice {
                problem: Problem::GaveUp { why },
                ..
            }) = &o
            {
                match why {
                    GiveUp::Connection => conn_hits += 1,
                    GiveUp::Total => total_hits += 1,
                    GiveUp::Trials => {}
                }
            }
            out(o)
        };
        let stream = ev.stream();
        if let Event::Close { .. } = ev {
            if let Some(c) = self.conns.get(&stream) {
                self.untold.remove(&(c.first_frame(), stream));
            }
        }
        self.route(ev, &mut counted);
        self.note_untold(stream);
        self.search_limit_hits += conn_hits;
        self.search_total_hits += total_hits;
    }

    fn route<'e>(&mut self, ev: Event<'e>, out: &mut dyn FnMut(Out<'_>)) {
        let stream = ev.stream();
        if self.sniffing.contains_key(&stream) {
            return self.sniff(ev, out);
        }
        match ev {
            Event::Gap {
                stream,
                kind: GapKind::MidStream,
                ..
            } if !self.decided.contains_key(&stream) && !self.conns.contains_key(&stream) => {
                self.sniff(ev, out)
            }
            Event::Data {
                stream,
                src,
                dst,
                bytes,
                at,
            } => {
                let tls = *self
                    .decided
                    .entry(stream)
                    .or_insert_with(|| starts_tls(bytes));
                if !tls {
                    return out(Out::Pass(ev));
                }
                let conn = self
                    .conns
                    .entry(stream)
                    .or_insert_with(|| Conn::new(stream, src, dst, at));
                Self::feed_conn(
                    conn,
                    (src, bytes, at),
                    (&self.given, &self.embedded, self.limits, &self.search_left),
                    (&mut self.scratch, &mut self.held),
                    out,
                );
            }
            Event::Gap {
                stream,
                src,
                kind,
                at,
                ..
            } if self.conns.contains_key(&stream) => {
                if let Some(c) = self.conns.get_mut(&stream) {
                    let before = c.footprint();
                    c.gap(src, kind, at, out);
                    self.held = self.held.saturating_sub(before) + c.footprint();
                }
            }
            Event::Close { stream, .. } => {
                self.decided.remove(&stream);
                match self.conns.remove(&stream) {
                    Some(c) => {
                        self.held = self.held.saturating_sub(c.footprint());
                        c.close(ev, out)
                    }
                    None => out(Out::Pass(ev)),
                }
            }
            Event::Retransmission { stream, .. } | Event::ConflictingOverlap { stream, .. }
                if self.conns.contains_key(&stream) => {}
            other => out(Out::Pass(other)),
        }
    }

    /// Bytes of a TLS connection; a connection that makes all together hold too much lets
    /// go of what it holds.
    fn feed_conn(
        conn: &mut Conn,
        (src, bytes, at): (SocketAddr, &[u8], At),
        (given, embedded, limits, search_left): (&KeyLog, &KeyLog, Limits, &Cell<u64>),
        (scratch, held): (&mut Vec<u8>, &mut usize),
        out: &mut dyn FnMut(Out<'_>),
    ) {
        let any = !given.is_empty() || !embedded.is_empty();
        let lookup = |r: &[u8; 32]| given.lookup(r).or_else(|| embedded.lookup(r)).copied();
        let session = |id: &[u8]| {
            given
                .lookup_session(id)
                .or_else(|| embedded.lookup_session(id))
                .copied()
        };
        let keys = conn::KeySource {
            lookup: &lookup,
            session: &session,
            any,
            cut: given.dropped > 0 || embedded.dropped > 0,
            max_search: limits.max_search,
            total_left: search_left,
        };
        let before = conn.footprint();
        conn.data(src, bytes, at, &keys, scratch, out);
        let mut after = conn.footprint();
        if held.saturating_sub(before).saturating_add(after) > MAX_HELD {
            conn.shed(at, out);
            after = conn.footprint();
        }
        *held = held.saturating_sub(before).saturating_add(after);
    }

    /// An event of a connection picked up mid-stream, held until its first bytes say whether
    /// it is TLS; then what was held goes on as it came: to a TLS connection of its own, or
    /// to the Kafka layer.
    fn sniff<'e>(&mut self, ev: Event<'e>, out: &mut dyn FnMut(Out<'_>)) {
        let stream = ev.stream();
        let first = match ev {
            Event::Gap { at, .. }
            | Event::Data { at, .. }
            | Event::Retransmission { at, .. }
            | Event::ConflictingOverlap { at, .. }
            | Event::Close { at, .. } => at,
            Event::Open { .. } => At::default(),
        };
        if let Event::Open { .. } = ev {
            return out(Out::Pass(ev));
        }
        let sniff = self.sniffing.entry(stream).or_insert_with(|| Sniff {
            held: Vec::new(),
            dirs: Vec::new(),
            data_events: 0,
            bytes: 0,
            first,
        });
        self.sniff_order.insert((sniff.first.frame, stream));
        let closing = matches!(ev, Event::Close { .. });
        match ev {
            Event::Gap {
                src, dst, kind, at, ..
            } => sniff.held.push(Held::Gap { src, dst, kind, at }),
            Event::Data {
                src,
                dst,
                bytes,
                at,
                ..
            } => {
                sniff.data_events += 1;
                sniff.bytes += bytes.len();
                self.sniff_bytes += bytes.len();
                match sniff.dirs.iter_mut().find(|(s, _)| *s == src) {
                    Some((_, b)) => b.extend_from_slice(bytes),
                    None => sniff.dirs.push((src, bytes.to_vec())),
                }
                sniff.held.push(Held::Data {
                    src,
                    dst,
                    bytes: bytes.to_vec(),
                    at,
                });
            }
            Event::Retransmission { src, at, .. } => {
                sniff.held.push(Held::Retransmission { src, at })
            }
            Event::ConflictingOverlap {
                src, at, offset, ..
            } => sniff.held.push(Held::Overlap { src, at, offset }),
            Event::Close { .. } | Event::Open { .. } => {}
        }
        let verdict = match sniff.verdict() {
            Verdict::Wait if closing || self.sniff_bytes > SNIFF_TOTAL => Verdict::NotTls,
            v => v,
        };
        if verdict == Verdict::Wait {
            return;
        }
        let Some(sniff) = self.sniffing.remove(&stream) else {
            return;
        };
        self.sniff_order.remove(&(sniff.first.frame, stream));
        self.sniff_bytes = self.sniff_bytes.saturating_sub(sniff.bytes);
        self.decided.insert(stream, verdict == Verdict::Tls);
        if verdict == Verdict::Tls {
            self.sniffed_tls(stream, sniff, out);
        } else {
            for h in &sniff.held {
                out(Out::Pass(h.event(stream)));
            }
        }
        if closing {
            self.route(ev, out);
        }
    }

    /// A connection picked up mid-stream turned out to be TLS: what was held goes to its
    /// connection (the capture's start, not a loss: not told as one).
    fn sniffed_tls(&mut self, stream: u32, sniff: Sniff, out: &mut dyn FnMut(Out<'_>)) {
        let Some((client, server)) = sniff.ends() else {
            return;
        };
        let mut conn = Conn::midstream(stream, client, server, sniff.first);
        for h in &sniff.held {
            match h {
                Held::Data { src, bytes, at, .. } => Self::feed_conn(
                    &mut conn,
                    (*src, bytes, *at),
                    (&self.given, &self.embedded, self.limits, &self.search_left),
                    (&mut self.scratch, &mut self.held),
                    out,
                ),
                Held::Gap { src, kind, at, .. } if *kind != GapKind::MidStream => {
                    conn.gap(*src, *kind, *at, out)
                }
                _ => {}
            }
        }
        self.conns.insert(stream, conn);
    }
}

#[cfg(test)]
mod tests;
