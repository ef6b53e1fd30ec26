//! TLS on the wire: connections that open with a TLS handshake are taken out of the byte
//! streams before the Kafka layer sees them, and summed up instead: version, server name
//! (SNI), ALPN, records and bytes. Without the session keys nothing inside can be decoded, and
//! feeding ciphertext to the Kafka framer would only produce a stream of bogus frames.
//!
//! Only record headers and the two hello messages are read (RFC 8446 §5.1, §4.1.2-4.1.3, RFC
//! 6066 §3 for SNI, RFC 7301 for ALPN). Nothing is decrypted.
// Input-derived values never index, unwrap or expect here: a hostile capture must not panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use crate::tcp::{At, Event};
use std::collections::HashMap;
use std::net::SocketAddr;

/// Record content types.
const HANDSHAKE: u8 = 22;
const APPLICATION_DATA: u8 = 23;
/// Handshake message types.
const CLIENT_HELLO: u8 = 1;
const SERVER_HELLO: u8 = 2;
/// Extension types.
const EXT_SERVER_NAME: u16 = 0;
const EXT_ALPN: u16 = 16;
const EXT_SUPPORTED_VERSIONS: u16 = 43;
/// Largest record body TLS allows (2^14 plus the most expansion any version permits).
const MAX_RECORD: usize = 16_384 + 2_048;
/// Handshake bytes kept per direction while looking for a hello: a ClientHello with many
/// extensions fits in a few KiB; past this the hello is not parsed and only counted.
const MAX_HELLO: usize = 16 * 1024;

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

/// What was learnt of one TLS connection, reported once when it ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsConnection {
    pub stream: u32,
    /// The side that sent the ClientHello, and the other.
    pub client: SocketAddr,
    pub server: SocketAddr,
    /// Where the handshake was first seen.
    pub first: At,
    /// The negotiated version (0x0304 is TLS 1.3), from the ServerHello, or else the highest
    /// the client offered.
    pub version: Option<u16>,
    /// Whether `version` comes from the server's answer.
    pub negotiated: bool,
    pub sni: Option<String>,
    pub alpn: Vec<String>,
    /// TLS records seen, both directions.
    pub records: u64,
    /// Bytes of application-data records (the encrypted Kafka traffic), both directions.
    pub encrypted_bytes: u64,
    /// Bytes of every record, headers included, both directions.
    pub total_bytes: u64,
    /// Bytes the capture missed inside the connection.
    pub lost_bytes: u64,
}

/// `TLS 1.3`, `TLS 1.0`, `SSL 3.0`.
pub fn version_name(v: u16) -> String {
    match v {
        0x0300 => "SSL 3.0".into(),
        0x0301..=0x0304 => format!("TLS 1.{}", v - 0x0301),
        other => format!("TLS version 0x{other:04x}"),
    }
}

/// Record framing of one direction: where the next header starts.
#[derive(Debug, Default)]
struct Half {
    /// Bytes of the current record body still to come.
    body_left: usize,
    /// A record header cut between segments.
    header: Vec<u8>,
    /// Content type of the current record.
    kind: u8,
    /// Handshake bytes gathered until the hello is parsed.
    hello: Vec<u8>,
    hello_done: bool,
    /// Framing lost (a gap, a header that is not TLS): only bytes are counted from here.
    lost_sync: bool,
}

#[derive(Debug)]
struct Conn {
    info: TlsConnection,
    halves: [Half; 2],
}

/// The TLS stage: passes non-TLS connections through untouched, keeps TLS ones to itself.
#[derive(Debug, Default)]
pub struct TlsFilter {
    /// Streams whose first bytes were seen, and whether they are TLS.
    decided: HashMap<u32, bool>,
    conns: HashMap<u32, Conn>,
}

/// What the filter does with an event.
#[derive(Debug)]
pub enum Verdict<'a> {
    /// Not TLS (or not known yet): hand it on.
    Pass(Event<'a>),
    /// Taken by the TLS stage.
    Held,
    /// A TLS connection ended: its summary.
    Ended(TlsConnection),
}

impl TlsFilter {
    pub fn new() -> TlsFilter {
        TlsFilter::default()
    }

    /// Looks at one event from reassembly.
    pub fn event<'a>(&mut self, ev: Event<'a>) -> Verdict<'a> {
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
                    return Verdict::Pass(ev);
                }
                let conn = self
                    .conns
                    .entry(stream)
                    .or_insert_with(|| Conn::new(stream, src, dst, at));
                conn.data(src, bytes);
                Verdict::Held
            }
            Event::Gap { stream, kind, .. } if self.conns.contains_key(&stream) => {
                if let Some(c) = self.conns.get_mut(&stream) {
                    if let crate::tcp::GapKind::Lost(n) | crate::tcp::GapKind::Truncated(n) = kind {
                        c.info.lost_bytes += n;
                    }
                    // Where the next record starts is unknown now.
                    for h in &mut c.halves {
                        h.lost_sync = true;
                    }
                }
                Verdict::Held
            }
            Event::Close { stream, .. } => {
                self.decided.remove(&stream);
                match self.conns.remove(&stream) {
                    Some(c) => Verdict::Ended(c.info),
                    None => Verdict::Pass(ev),
                }
            }
            Event::Retransmission { stream, .. } | Event::ConflictingOverlap { stream, .. }
                if self.conns.contains_key(&stream) =>
            {
                Verdict::Held
            }
            other => Verdict::Pass(other),
        }
    }
}

impl Conn {
    fn new(stream: u32, client: SocketAddr, server: SocketAddr, first: At) -> Conn {
        Conn {
            info: TlsConnection {
                stream,
                client,
                server,
                first,
                version: None,
                negotiated: false,
                sni: None,
                alpn: Vec::new(),
                records: 0,
                encrypted_bytes: 0,
                total_bytes: 0,
                lost_bytes: 0,
            },
            halves: [Half::default(), Half::default()],
        }
    }

    fn data(&mut self, src: SocketAddr, mut bytes: &[u8]) {
        let from_client = src == self.info.client;
        self.info.total_bytes += bytes.len() as u64;
        let [c, s] = &mut self.halves;
        let half = if from_client { c } else { s };
        while !bytes.is_empty() {
            if half.lost_sync {
                return;
            }
            if half.body_left == 0 {
                bytes = take_header(half, bytes, &mut self.info);
                continue;
            }
            let n = half.body_left.min(bytes.len());
            let (body, rest) = bytes.split_at(n);
            half.body_left -= n;
            if half.kind == APPLICATION_DATA {
                self.info.encrypted_bytes += n as u64;
            } else if half.kind == HANDSHAKE && !half.hello_done {
                gather_hello(half, body, from_client, &mut self.info);
            }
            bytes = rest;
        }
    }
}

/// Reads (part of) a record header; returns the bytes after it.
fn take_header<'a>(half: &mut Half, bytes: &'a [u8], info: &mut TlsConnection) -> &'a [u8] {
    let need = 5 - half.header.len();
    let n = need.min(bytes.len());
    let (head, rest) = bytes.split_at(n);
    half.header.extend_from_slice(head);
    if let [kind, major, _, hi, lo] = half.header[..] {
        let len = usize::from(u16::from_be_bytes([hi, lo]));
        if major != 3 || !(20..=24).contains(&kind) || len > MAX_RECORD {
            half.lost_sync = true;
        } else {
            half.kind = kind;
            half.body_left = len;
            info.records += 1;
        }
        half.header.clear();
    }
    rest
}

/// Collects handshake bytes until a whole hello message is there, then reads it.
fn gather_hello(half: &mut Half, body: &[u8], from_client: bool, info: &mut TlsConnection) {
    let room = MAX_HELLO.saturating_sub(half.hello.len());
    half.hello
        .extend_from_slice(body.get(..body.len().min(room)).unwrap_or(&[]));
    let Some(&[kind, a, b, c]) = half.hello.get(..4) else {
        return;
    };
    let len = usize::from_be_bytes([0, 0, 0, 0, 0, a, b, c]);
    let Some(msg) = half.hello.get(4..4 + len) else {
        if half.hello.len() >= MAX_HELLO {
            half.hello_done = true;
            half.hello = Vec::new();
        }
        return;
    };
    match (kind, from_client) {
        (CLIENT_HELLO, true) => client_hello(msg, info),
        (SERVER_HELLO, false) => server_hello(msg, info),
        _ => {}
    }
    half.hello_done = true;
    half.hello = Vec::new();
}

/// A big-endian reader that stops (returns None) instead of running past the end.
struct Rd<'a>(&'a [u8]);

impl<'a> Rd<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).and_then(|b| b.first().copied())
    }
    fn u16(&mut self) -> Option<u16> {
        let b = self.take(2)?;
        Some(u16::from_be_bytes([*b.first()?, *b.get(1)?]))
    }
    /// A vector with a 1- or 2-byte length prefix.
    fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = self.u8()?;
        self.take(n.into())
    }
    fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = self.u16()?;
        self.take(n.into())
    }
}

fn client_hello(msg: &[u8], info: &mut TlsConnection) {
    let _ = (|| -> Option<()> {
        let mut r = Rd(msg);
        let legacy = r.u16()?;
        info.version = Some(legacy);
        r.take(32)?; // random
        r.vec8()?; // session id
        r.vec16()?; // cipher suites
        r.vec8()?; // compression methods
        for (ty, data) in extensions(r.vec16()?) {
            match ty {
                EXT_SERVER_NAME => info.sni = server_name(data),
                EXT_ALPN => info.alpn = alpn(data),
                EXT_SUPPORTED_VERSIONS => {
                    let mut v = Rd(Rd(data).vec8()?);
                    let mut best = None;
                    while let Some(x) = v.u16() {
                        // Skip GREASE values (0x?a?a).
                        if x & 0x0f0f != 0x0a0a {
                            best = best.max(Some(x));
                        }
                    }
                    if best.is_some() {
                        info.version = best;
                    }
                }
                _ => {}
            }
        }
        Some(())
    })();
}

fn server_hello(msg: &[u8], info: &mut TlsConnection) {
    let _ = (|| -> Option<()> {
        let mut r = Rd(msg);
        let legacy = r.u16()?;
        info.version = Some(legacy);
        info.negotiated = true;
        r.take(32)?;
        r.vec8()?;
        r.take(3)?; // cipher suite, compression method
        for (ty, data) in extensions(r.vec16().unwrap_or(&[])) {
            match ty {
                EXT_SUPPORTED_VERSIONS => info.version = Rd(data).u16().or(info.version),
                EXT_ALPN => info.alpn = alpn(data),
                _ => {}
            }
        }
        Some(())
    })();
}

fn extensions(mut data: &[u8]) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    let mut r = Rd(data);
    while let (Some(ty), Some(body)) = (r.u16(), r.vec16()) {
        out.push((ty, body));
        data = r.0;
        r = Rd(data);
    }
    out
}

/// The first host name of a server_name extension.
fn server_name(data: &[u8]) -> Option<String> {
    let mut list = Rd(Rd(data).vec16()?);
    while let Some(kind) = list.u8() {
        let name = list.vec16()?;
        if kind == 0 {
            return Some(String::from_utf8_lossy(name).into_owned());
        }
    }
    None
}

fn alpn(data: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(list) = Rd(data).vec16() else {
        return out;
    };
    let mut r = Rd(list);
    while let Some(p) = r.vec8() {
        out.push(String::from_utf8_lossy(p).into_owned());
    }
    out
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::unwrap_used)]
mod tests {
    use super::*;

    fn record(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut r = vec![kind, 3, 3];
        r.extend_from_slice(&(body.len() as u16).to_be_bytes());
        r.extend_from_slice(body);
        r
    }

    fn ext(ty: u16, body: &[u8]) -> Vec<u8> {
        let mut e = ty.to_be_bytes().to_vec();
        e.extend_from_slice(&(body.len() as u16).to_be_bytes());
        e.extend_from_slice(body);
        e
    }

    fn hello(kind: u8, exts: &[u8], server: bool) -> Vec<u8> {
        let mut m = vec![3, 3];
        m.extend_from_slice(&[7; 32]);
        m.push(0); // session id
        if server {
            m.extend_from_slice(&[0x13, 0x01, 0]);
        } else {
            m.extend_from_slice(&[0, 2, 0x13, 0x01, 1, 0]);
        }
        m.extend_from_slice(&(exts.len() as u16).to_be_bytes());
        m.extend_from_slice(exts);
        let mut h = vec![kind];
        h.extend_from_slice(&(m.len() as u32).to_be_bytes()[1..]);
        h.extend(m);
        h
    }

    fn addr(p: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], p))
    }

    fn data(stream: u32, src: u16, dst: u16, bytes: &[u8]) -> Event<'_> {
        Event::Data {
            stream,
            src: addr(src),
            dst: addr(dst),
            bytes,
            at: At::default(),
        }
    }

    #[test]
    fn recognises_tls_and_not_kafka() {
        assert!(starts_tls(&[22, 3, 1, 0, 200, 1]));
        // A Kafka frame: a small size prefix.
        assert!(!starts_tls(&[0, 0, 0, 33, 0, 3]));
        assert!(!starts_tls(&[22, 3]));
    }

    #[test]
    fn reads_version_sni_and_alpn_and_counts_encrypted_bytes() {
        let mut sni = vec![0, 12, 0, 0, 9];
        sni.extend_from_slice(b"localhost");
        let mut exts = ext(EXT_SERVER_NAME, &sni);
        exts.extend(ext(EXT_SUPPORTED_VERSIONS, &[4, 0x03, 0x04, 0x03, 0x03]));
        exts.extend(ext(EXT_ALPN, &[0, 6, 5, b'k', b'a', b'f', b'k', b'a']));
        let ch = record(HANDSHAKE, &hello(CLIENT_HELLO, &exts, false));
        let sh = record(
            HANDSHAKE,
            &hello(
                SERVER_HELLO,
                &ext(EXT_SUPPORTED_VERSIONS, &[0x03, 0x04]),
                true,
            ),
        );
        let app = record(APPLICATION_DATA, &[0xaa; 100]);
        let mut f = TlsFilter::new();
        // The ClientHello cut in two segments; the application data record in three.
        assert!(matches!(
            f.event(data(1, 5000, 9093, &ch[..7])),
            Verdict::Held
        ));
        assert!(matches!(
            f.event(data(1, 5000, 9093, &ch[7..])),
            Verdict::Held
        ));
        assert!(matches!(f.event(data(1, 9093, 5000, &sh)), Verdict::Held));
        for part in [&app[..3], &app[3..50], &app[50..]] {
            assert!(matches!(f.event(data(1, 5000, 9093, part)), Verdict::Held));
        }
        let Verdict::Ended(info) = f.event(Event::Close {
            stream: 1,
            end: crate::tcp::EndKind::Fin,
            at: At::default(),
        }) else {
            panic!("no summary");
        };
        assert_eq!(info.version, Some(0x0304));
        assert!(info.negotiated);
        assert_eq!(info.sni.as_deref(), Some("localhost"));
        assert_eq!(info.alpn, vec!["kafka".to_string()]);
        assert_eq!(info.records, 3);
        assert_eq!(info.encrypted_bytes, 100);
        assert_eq!(info.client, addr(5000));
        assert_eq!(version_name(0x0304), "TLS 1.3");
    }

    #[test]
    fn other_streams_pass_through() {
        let mut f = TlsFilter::new();
        let kafka = [0, 0, 0, 10, 0, 3, 0, 1, 0, 0, 0, 1, 255, 255];
        assert!(matches!(
            f.event(data(2, 5001, 9092, &kafka)),
            Verdict::Pass(_)
        ));
        assert!(matches!(
            f.event(Event::Close {
                stream: 2,
                end: crate::tcp::EndKind::Fin,
                at: At::default(),
            }),
            Verdict::Pass(_)
        ));
    }

    #[test]
    fn junk_after_the_handshake_stops_the_framing_without_panicking() {
        let mut f = TlsFilter::new();
        let mut bytes = record(HANDSHAKE, &[1, 0, 0, 200]);
        bytes.extend_from_slice(&[0xff; 40]);
        assert!(matches!(
            f.event(data(3, 5002, 9093, &bytes)),
            Verdict::Held
        ));
        let Verdict::Ended(info) = f.event(Event::Close {
            stream: 3,
            end: crate::tcp::EndKind::Fin,
            at: At::default(),
        }) else {
            panic!("no summary");
        };
        assert_eq!(info.records, 1);
        assert_eq!(info.total_bytes, bytes.len() as u64);
    }
}
