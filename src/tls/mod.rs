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

use crate::tcp::{At, Event};
use conn::Conn;
use keylog::{KeyLog, Secrets};
use std::collections::HashMap;
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

/// The IANA name of a suite decrypted here, else its number.
pub fn suite_name(id: u16) -> String {
    crypto::suite(id).map_or_else(|| format!("cipher suite 0x{id:04x}"), |s| s.name.into())
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
    GaveUp,
    /// A record header that cannot be TLS (content type, version or length).
    BadHeader { kind: u8, len: usize },
    /// A record that did not authenticate on a connection whose records did before.
    BadTag { seq: u64 },
    /// A renegotiation (TLS 1.2): its new keys are not followed; the connection is no longer
    /// decrypted.
    Renegotiation,
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
#[derive(Debug, Default)]
pub struct TlsFilter {
    /// Streams whose first bytes were seen, and whether they are TLS.
    decided: HashMap<u32, bool, foldhash::fast::RandomState>,
    conns: HashMap<u32, Conn, foldhash::fast::RandomState>,
    /// The key logs given on the command line.
    given: Arc<KeyLog>,
    /// Secrets the capture itself carries (pcapng Decryption Secrets Blocks).
    embedded: KeyLog,
    /// Where records are decrypted (one buffer for all connections).
    scratch: Vec<u8>,
    /// Bytes all connections hold (`Conn::footprint`).
    held: usize,
}

/// Bytes all TLS connections together hold at most: records being gathered (at most one per
/// direction, 18 KiB), ciphertext searched after a loss (four records per direction) and
/// hellos being read (16 KiB). Past it, the connection that went over lets go of what it
/// holds, as if the capture had lost it (and says so).
pub const MAX_HELD: usize = 64 * 1024 * 1024;

impl TlsFilter {
    pub fn new() -> TlsFilter {
        TlsFilter::default()
    }

    /// A filter that decrypts with these secrets.
    pub fn with_keys(given: Arc<KeyLog>) -> TlsFilter {
        TlsFilter {
            given,
            ..TlsFilter::default()
        }
    }

    /// Secrets met in the capture (a Decryption Secrets Block): they apply to connections
    /// whose ServerHello comes after them, as in Wireshark.
    pub fn add_embedded(&mut self, text: &[u8]) {
        self.embedded.add_text(text);
    }

    fn have_keys(&self) -> bool {
        !self.given.is_empty() || !self.embedded.is_empty()
    }

    /// Looks at one event from reassembly; what it makes goes to `out`.
    pub fn event<'e>(&mut self, ev: Event<'e>, out: &mut dyn FnMut(Out<'_>)) {
        match ev {
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
                let any = self.have_keys();
                let (given, embedded) = (&self.given, &self.embedded);
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
                };
                let conn = self
                    .conns
                    .entry(stream)
                    .or_insert_with(|| Conn::new(stream, src, dst, at));
                let before = conn.footprint();
                conn.data(src, bytes, at, &keys, &mut self.scratch, out);
                let mut after = conn.footprint();
                if self.held.saturating_sub(before).saturating_add(after) > MAX_HELD {
                    conn.shed(at, out);
                    after = conn.footprint();
                }
                self.held = self.held.saturating_sub(before).saturating_add(after);
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
}

#[cfg(test)]
mod tests;
