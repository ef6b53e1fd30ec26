//! One TLS connection: the record layer of each direction, the handshake messages that set
//! its keys, decryption, and finding the place again after the capture lost bytes.
// Input-derived values never index, unwrap or expect here: a hostile capture must not panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::crypto::{self, DirKeys, Suite, TAG};
use super::hello;
use super::keylog::Secrets;
use super::{
    GiveUp, Keys, Out, Problem, TlsConnection, TlsNotice, ALERT, APPLICATION_DATA,
    CHANGE_CIPHER_SPEC, HANDSHAKE, MAX_RECORD,
};
use crate::tcp::{At, Event, GapKind};
use std::net::SocketAddr;

/// Handshake message types (RFC 8446 §4, RFC 5246 §7.4).
const HELLO_REQUEST: u8 = 0;
const CLIENT_HELLO: u8 = 1;
const SERVER_HELLO: u8 = 2;
const FINISHED: u8 = 20;
const KEY_UPDATE: u8 = 24;
/// Handshake bytes kept of one message (the hellos, KeyUpdate): the longest ClientHello
/// TLS allows (version, random, a 32-byte session id, 2^16-2 bytes of suites, 255 of
/// compression methods, 2^16-1 of extensions), reassembled across as many records as it
/// spans. Of a longer message (not a legal hello) the first this many bytes are read.
/// Certificates and tickets are passed over without being kept.
pub(super) const MAX_HELLO: usize = 2 + 32 + 33 + 65_536 + 256 + 65_537;
/// Ciphertext held while looking for a record that authenticates after a loss: four records.
const RESYNC_BUF: usize = 4 * (5 + MAX_RECORD);
/// Record openings tried after one loss before the direction is given up.
const MAX_TRIALS: u32 = 4096;
/// Sequence numbers tried at one candidate record.
const MAX_CANDIDATES: u64 = 512;

const CLIENT: usize = 0;
const SERVER: usize = 1;

/// Where the secrets come from: the lookup by ClientHello random, and whether any key log
/// was given at all; and the budget of the search after a loss.
pub(super) struct KeySource<'a> {
    pub lookup: &'a dyn Fn(&[u8; 32]) -> Option<Secrets>,
    /// TLS 1.2 master secrets by session id.
    pub session: &'a dyn Fn(&[u8]) -> Option<super::keylog::Secret>,
    pub any: bool,
    /// The key logs had more client randoms than were kept: a random not found may be
    /// among those left out.
    pub cut: bool,
    /// Bytes a connection may spend trying records after losses, over its life.
    pub max_search: u64,
    /// Bytes all connections together may still spend.
    pub total_left: &'a std::cell::Cell<u64>,
}

/// Handshake messages of one direction, framed across records.
#[derive(Debug, Default)]
struct HsReader {
    head: Vec<u8>,
    ty: u8,
    left: usize,
    body: Vec<u8>,
    keep: bool,
}

impl HsReader {
    /// Feeds handshake bytes; returns the messages completed (type, body: kept only for the
    /// types read here).
    fn feed(&mut self, mut data: &[u8]) -> Vec<(u8, Vec<u8>)> {
        let mut done = Vec::new();
        while !data.is_empty() {
            if self.head.len() < 4 {
                let n = (4 - self.head.len()).min(data.len());
                let (a, b) = data.split_at(n);
                self.head.extend_from_slice(a);
                data = b;
                if let [ty, x, y, z] = self.head[..] {
                    self.ty = ty;
                    self.left = usize::from_be_bytes([0, 0, 0, 0, 0, x, y, z]);
                    self.keep = matches!(ty, CLIENT_HELLO | SERVER_HELLO | KEY_UPDATE);
                    self.body.clear();
                }
                if self.head.len() < 4 {
                    break;
                }
            }
            let n = self.left.min(data.len());
            let (a, b) = data.split_at(n);
            if self.keep {
                let room = MAX_HELLO.saturating_sub(self.body.len());
                self.body
                    .extend_from_slice(a.get(..room.min(a.len())).unwrap_or_default());
            }
            self.left -= n;
            data = b;
            if self.left == 0 {
                done.push((self.ty, std::mem::take(&mut self.body)));
                self.head.clear();
            }
        }
        done
    }
}

/// Looking for the next record that authenticates, after a loss.
#[derive(Debug, Default)]
struct Resync {
    buf: Vec<u8>,
    /// Bytes the capture lost.
    lost: u64,
    /// Bytes passed over so far.
    skipped: u64,
    trials: u32,
    /// The sequence number the lost bytes began at.
    base: u64,
}

#[derive(Debug)]
struct Half {
    src: SocketAddr,
    dst: SocketAddr,
    /// The record being gathered: header, then body.
    rec: Vec<u8>,
    keys: Option<DirKeys>,
    hs: HsReader,
    /// Its Finished was seen.
    finished: bool,
    /// Its ChangeCipherSpec was seen.
    ccs: bool,
    /// The last record did not authenticate (told once per run of them).
    failing: bool,
    resync: Option<Resync>,
    /// Framing lost without keys: only bytes are counted from here.
    lost_sync: bool,
    /// No longer decrypted (keys that do not authenticate, a renegotiation), but still in
    /// step: records are framed and counted, their contents not read.
    opaque: bool,
    /// Picked up mid-stream: the bytes held while looking for the first record header
    /// (one that another follows).
    seek: Option<Vec<u8>>,
}

impl Half {
    fn new(src: SocketAddr, dst: SocketAddr) -> Half {
        Half {
            src,
            dst,
            rec: Vec::new(),
            keys: None,
            hs: HsReader::default(),
            finished: false,
            ccs: false,
            failing: false,
            resync: None,
            lost_sync: false,
            opaque: false,
            seek: None,
        }
    }
}

#[derive(Debug)]
pub(super) struct Conn {
    info: TlsConnection,
    halves: [Half; 2],
    client_random: Option<[u8; 32]>,
    client_session: Vec<u8>,
    suite: Option<Suite>,
    tls13: bool,
    /// TLS 1.3: the application keys each direction takes after its Finished.
    after_finished: [Option<DirKeys>; 2],
    /// TLS 1.2: the keys each direction takes at its ChangeCipherSpec.
    at_ccs: [Option<DirKeys>; 2],
    /// encrypt_then_mac offered in the ClientHello (RFC 7366).
    client_etm: bool,
    /// Bytes spent trying records after losses (`KeySource::max_search`).
    searched: u64,
    reported: bool,
}

/// A record header that can be TLS: a content type, major version 3, a length a record can
/// have.
fn plausible(kind: u8, major: u8, len: usize) -> bool {
    major == 3 && (20..=24).contains(&kind) && len <= MAX_RECORD
}

/// Where TLS record framing starts in bytes picked up mid-stream: the first offset, before
/// a whole record's length, where a record header is followed by another of the same
/// version, or whose record ends exactly where the bytes do (a segment holding one
/// record). Ciphertext is random: two headers in a row (about 2^-44 by chance) or one that
/// ends with the segment tell TLS records from anything else.
pub(super) fn record_start(bytes: &[u8]) -> Option<usize> {
    let header = |p: usize| match bytes.get(p..p.checked_add(5)?) {
        Some(&[kind, major, minor, hi, lo]) => {
            let len = usize::from(u16::from_be_bytes([hi, lo]));
            (plausible(kind, major, len) && (1..=4).contains(&minor) && len > 0)
                .then_some((minor, p + 5 + len))
        }
        _ => None,
    };
    (0..bytes.len().min(5 + MAX_RECORD)).find(|&p| match header(p) {
        Some((_, end)) if end == bytes.len() => true,
        Some((minor, end)) => header(end).is_some_and(|(m, _)| m == minor),
        None => false,
    })
}

impl Conn {
    pub(super) fn new(stream: u32, client: SocketAddr, server: SocketAddr, first: At) -> Conn {
        Conn {
            info: TlsConnection {
                stream,
                client,
                server,
                first,
                told: first,
                version: None,
                negotiated: false,
                suite: None,
                sni: None,
                alpn: Vec::new(),
                resumed: false,
                keys: Keys::NoKeyLog,
                records: 0,
                encrypted_bytes: 0,
                total_bytes: 0,
                lost_bytes: 0,
                secrets: None,
                midstream: false,
            },
            halves: [Half::new(client, server), Half::new(server, client)],
            client_random: None,
            client_session: Vec::new(),
            suite: None,
            tls13: false,
            after_finished: [None, None],
            at_ccs: [None, None],
            client_etm: false,
            searched: 0,
            reported: false,
        }
    }

    /// A connection whose TLS records were found in bytes picked up mid-stream: no
    /// handshake, so nothing can be decrypted; its records are framed from the first header
    /// found in each direction, and its bytes counted.
    pub(super) fn midstream(
        stream: u32,
        client: SocketAddr,
        server: SocketAddr,
        first: At,
    ) -> Conn {
        let mut c = Conn::new(stream, client, server, first);
        c.info.midstream = true;
        c.info.keys = Keys::NoHandshake;
        for h in &mut c.halves {
            h.seek = Some(Vec::new());
        }
        c
    }

    fn side(&self, src: SocketAddr) -> usize {
        if src == self.info.client {
            CLIENT
        } else {
            SERVER
        }
    }

    fn notice(&self, h: usize, at: At, problem: Problem, out: &mut dyn FnMut(Out<'_>)) {
        let (src, dst) = self
            .halves
            .get(h)
            .map_or((self.info.client, self.info.server), |x| (x.src, x.dst));
        out(Out::Notice(TlsNotice {
            stream: self.info.stream,
            src,
            dst,
            at,
            problem,
        }));
    }

    pub(super) fn data(
        &mut self,
        src: SocketAddr,
        bytes: &[u8],
        at: At,
        keys: &KeySource<'_>,
        scratch: &mut Vec<u8>,
        out: &mut dyn FnMut(Out<'_>),
    ) {
        self.info.total_bytes += bytes.len() as u64;
        let h = self.side(src);
        self.feed(h, bytes, at, keys, scratch, out);
    }

    /// The frame its report will be dated by, while that report is still to come and may be
    /// dated before now: a connection that may yet decrypt is reported at its first record
    /// that authenticates, dated by its handshake (one that does not is dated by its end).
    pub(super) fn untold_since(&self, any_keys: bool) -> Option<u64> {
        let may_decrypt = any_keys && matches!(self.info.keys, Keys::NoKeyLog | Keys::Found);
        (!self.reported && may_decrypt).then_some(self.info.first.frame)
    }

    /// The frame where its handshake was first seen.
    pub(super) fn first_frame(&self) -> u64 {
        self.info.first.frame
    }

    /// Bytes held: records being gathered, ciphertext searched after a loss, a hello being
    /// read.
    pub(super) fn footprint(&self) -> usize {
        self.halves
            .iter()
            .map(|h| {
                h.rec.len()
                    + h.hs.body.len()
                    + h.resync.as_ref().map_or(0, |r| r.buf.len())
                    + h.seek.as_ref().map_or(0, Vec::len)
            })
            .sum()
    }

    /// All connections together hold too much: this one lets go of what it holds, as if the
    /// capture had lost it.
    pub(super) fn shed(&mut self, at: At, out: &mut dyn FnMut(Out<'_>)) {
        for h in [CLIENT, SERVER] {
            let Some(half) = self.halves.get_mut(h) else {
                continue;
            };
            let held = half.rec.len()
                + half.resync.as_ref().map_or(0, |r| r.buf.len())
                + half.seek.as_ref().map_or(0, Vec::len);
            half.hs.body = Vec::new();
            if half.seek.take().is_some() {
                half.lost_sync = true;
            }
            if held == 0 {
                continue;
            }
            let src = half.src;
            half.rec = Vec::new();
            if let Some(r) = half.resync.as_mut() {
                r.skipped += r.buf.len() as u64;
                r.buf = Vec::new();
            }
            self.gap(src, GapKind::Lost(held as u64), at, out);
        }
    }

    /// Bytes of direction `h`, record by record.
    fn feed(
        &mut self,
        h: usize,
        mut bytes: &[u8],
        at: At,
        keys: &KeySource<'_>,
        scratch: &mut Vec<u8>,
        out: &mut dyn FnMut(Out<'_>),
    ) {
        while !bytes.is_empty() {
            let Some(half) = self.halves.get_mut(h) else {
                return;
            };
            if half.lost_sync {
                self.info.encrypted_bytes += bytes.len() as u64;
                return;
            }
            if half.resync.is_some() {
                return self.resync(h, bytes, at, keys, scratch, out);
            }
            if half.seek.is_some() {
                return self.seek(h, bytes, at, keys, scratch, out);
            }
            // A whole record in the bytes at hand is read in place, without a copy.
            if let (true, Some(&[kind, major, _, hi, lo])) = (half.rec.is_empty(), bytes.get(..5)) {
                let len = usize::from(u16::from_be_bytes([hi, lo]));
                if let (true, Some(rec)) = (plausible(kind, major, len), bytes.get(..5 + len)) {
                    self.record(h, rec, at, keys, scratch, out);
                    bytes = bytes.get(5 + len..).unwrap_or_default();
                    continue;
                }
            }
            bytes = match self.gather(h, bytes, at, out) {
                Gathered::Whole(rest) => rest,
                Gathered::Partial => return,
                Gathered::Bad(rest) => {
                    bytes = rest;
                    continue;
                }
            };
            let Some(half) = self.halves.get_mut(h) else {
                return;
            };
            let mut rec = std::mem::take(&mut half.rec);
            self.record(h, &rec, at, keys, scratch, out);
            // A buffer as big as a record is not kept by an idle connection.
            if rec.capacity() <= 4096 {
                rec.clear();
                if let Some(half) = self.halves.get_mut(h) {
                    half.rec = rec;
                }
            }
        }
    }

    /// Adds bytes to the record being gathered. A header that cannot be TLS ends the framing
    /// (and, with keys, starts looking for a record that authenticates).
    fn gather<'b>(
        &mut self,
        h: usize,
        bytes: &'b [u8],
        at: At,
        out: &mut dyn FnMut(Out<'_>),
    ) -> Gathered<'b> {
        let Some(half) = self.halves.get_mut(h) else {
            return Gathered::Partial;
        };
        let mut bytes = bytes;
        if half.rec.len() < 5 {
            let n = (5 - half.rec.len()).min(bytes.len());
            let (a, b) = bytes.split_at(n);
            half.rec.extend_from_slice(a);
            bytes = b;
            let [kind, major, _, hi, lo] = half.rec[..] else {
                return Gathered::Partial;
            };
            let len = usize::from(u16::from_be_bytes([hi, lo]));
            if !plausible(kind, major, len) {
                self.notice(h, at, Problem::BadHeader { kind, len }, out);
                self.lose_place(h, 0);
                return Gathered::Bad(bytes);
            }
        }
        let want = match half.rec.get(3..5) {
            Some(&[hi, lo]) => usize::from(u16::from_be_bytes([hi, lo])),
            _ => 0,
        };
        let have = half.rec.len().saturating_sub(5);
        let n = want.saturating_sub(have).min(bytes.len());
        let (a, rest) = bytes.split_at(n);
        half.rec.extend_from_slice(a);
        if half.rec.len() == 5 + want {
            Gathered::Whole(rest)
        } else {
            Gathered::Partial
        }
    }

    /// One whole record of direction `h` (header and body).
    fn record(
        &mut self,
        h: usize,
        rec: &[u8],
        at: At,
        keys: &KeySource<'_>,
        scratch: &mut Vec<u8>,
        out: &mut dyn FnMut(Out<'_>),
    ) {
        let (Some(head), Some(body)) = (rec.get(..5), rec.get(5..)) else {
            return;
        };
        let Ok(header) = <[u8; 5]>::try_from(head) else {
            return;
        };
        self.info.records += 1;
        let kind = header[0];
        if kind == APPLICATION_DATA {
            self.info.encrypted_bytes += body.len() as u64;
        }
        let encrypted = self.halves.get(h).is_some_and(|x| x.keys.is_some());
        if self.halves.get(h).is_some_and(|x| x.opaque) {
            return;
        }
        match kind {
            CHANGE_CIPHER_SPEC => {
                self.change_cipher_spec(h);
                if let (Some(k), Some(half)) = (
                    self.at_ccs.get_mut(h).and_then(Option::take),
                    self.halves.get_mut(h),
                ) {
                    half.keys = Some(k);
                }
            }
            // TLS 1.3 protects every record as application data (RFC 8446 §5.2): a
            // handshake record is in the clear, whatever keys the direction has.
            HANDSHAKE if self.tls13 => self.handshake(h, body, false, at, keys, out),
            _ if encrypted => self.decrypt(h, (&header, body), at, keys, scratch, out),
            HANDSHAKE => self.handshake(h, body, false, at, keys, out),
            _ => {}
        }
    }

    /// TLS 1.2: a server that sends its ChangeCipherSpec before the client's is resuming (an
    /// abbreviated handshake, RFC 5246 §7.3); in a full one it answers the client's Finished.
    /// This tells a ticket resumption whose ClientHello had no session id to echo (RFC 5077
    /// §3.4). TLS 1.3's compatibility ChangeCipherSpec (RFC 8446 §D.4) says nothing of it.
    fn change_cipher_spec(&mut self, h: usize) {
        let tls12_hello = self.info.negotiated && self.info.suite.is_some() && !self.tls13;
        // A client direction that lost bytes may have lost its ChangeCipherSpec: not told.
        let client_may_have = self
            .halves
            .get(CLIENT)
            .is_none_or(|c| c.ccs || c.lost_sync || c.resync.is_some());
        if h == SERVER && tls12_hello && !client_may_have {
            self.info.resumed = true;
        }
        if let Some(half) = self.halves.get_mut(h) {
            half.ccs = true;
        }
    }

    fn decrypt(
        &mut self,
        h: usize,
        (header, body): (&[u8; 5], &[u8]),
        at: At,
        keys: &KeySource<'_>,
        scratch: &mut Vec<u8>,
        out: &mut dyn FnMut(Out<'_>),
    ) {
        let Some(half) = self.halves.get_mut(h) else {
            return;
        };
        let plain = scratch;
        let opened = match half.keys.as_mut() {
            Some(k) => k.open(header, body, plain),
            None => return,
        };
        // TLS 1.3: a Finished not seen (cut in a way not followed) leaves the handshake keys
        // in place; the application keys are tried before calling the record bad.
        let opened = match (opened, self.after_finished.get_mut(h)) {
            (Err(_), Some(next @ Some(_))) => {
                let mut k = next.take();
                let r = k.as_mut().map(|k| k.open(header, body, plain));
                match r {
                    Some(Ok(ty)) => {
                        half.keys = k;
                        Ok(ty)
                    }
                    _ => {
                        *next = k;
                        Err(crypto::BadTag)
                    }
                }
            }
            (r, _) => r,
        };
        match opened {
            Ok(ty) => {
                half.failing = false;
                self.authenticated(out);
                self.inner(h, ty, plain, at, keys, out);
            }
            Err(_) => self.bad_tag(h, body.len(), at, out),
        }
    }

    /// The first record that authenticates: the connection is reported as decrypted.
    fn authenticated(&mut self, out: &mut dyn FnMut(Out<'_>)) {
        if !self.reported {
            self.info.keys = Keys::Decrypted;
            self.reported = true;
            out(Out::Connection(&self.info));
        }
    }

    /// A record that did not authenticate. On the first encrypted record, the keys are wrong
    /// for this connection: it is no longer decrypted (and told once, when it ends). Later, the
    /// record is passed over (told once for a run of them) and the Kafka layer sees a gap.
    fn bad_tag(&mut self, h: usize, len: usize, at: At, out: &mut dyn FnMut(Out<'_>)) {
        if self.info.keys != Keys::Decrypted {
            self.info.keys = Keys::Wrong;
            self.info.secrets = None;
            self.stop_decrypting();
            return;
        }
        let Some(half) = self.halves.get_mut(h) else {
            return;
        };
        let seq = half.keys.as_ref().map_or(0, |k| k.seq);
        if let Some(k) = half.keys.as_mut() {
            k.seq = k.seq.wrapping_add(1);
        }
        let first = !std::mem::replace(&mut half.failing, true);
        let (src, dst) = (half.src, half.dst);
        if first {
            self.notice(h, at, Problem::BadTag { seq }, out);
        }
        out(Out::Pass(Event::Gap {
            stream: self.info.stream,
            src,
            dst,
            kind: GapKind::Lost(len.saturating_sub(TAG) as u64),
            at,
        }));
    }

    fn stop_decrypting(&mut self) {
        for half in &mut self.halves {
            half.keys = None;
            // A direction searching after a loss does not know where its records are.
            if half.resync.take().is_some() {
                half.lost_sync = true;
            }
            half.opaque = true;
        }
        self.after_finished = [None, None];
        self.at_ccs = [None, None];
    }

    /// What a decrypted record held.
    fn inner(
        &mut self,
        h: usize,
        ty: u8,
        plain: &[u8],
        at: At,
        keys: &KeySource<'_>,
        out: &mut dyn FnMut(Out<'_>),
    ) {
        match ty {
            APPLICATION_DATA if !plain.is_empty() => {
                if let Some(half) = self.halves.get(h) {
                    out(Out::Pass(Event::Data {
                        stream: self.info.stream,
                        src: half.src,
                        dst: half.dst,
                        bytes: plain,
                        at,
                    }));
                }
            }
            HANDSHAKE => self.handshake(h, plain, true, at, keys, out),
            ALERT => {}
            _ => {}
        }
    }

    /// Handshake bytes (in the clear, or decrypted).
    /// Handshake bytes, `sealed` when they came decrypted.
    fn handshake(
        &mut self,
        h: usize,
        data: &[u8],
        sealed: bool,
        at: At,
        keys: &KeySource<'_>,
        out: &mut dyn FnMut(Out<'_>),
    ) {
        let Some(half) = self.halves.get_mut(h) else {
            return;
        };
        for (ty, body) in half.hs.feed(data) {
            self.message(h, (ty, &body, sealed), at, keys, out);
        }
    }

    fn message(
        &mut self,
        h: usize,
        (ty, body, sealed): (u8, &[u8], bool),
        at: At,
        keys: &KeySource<'_>,
        out: &mut dyn FnMut(Out<'_>),
    ) {
        let encrypted = self
            .halves
            .get(h)
            .is_some_and(|x| x.keys.is_some() || x.finished);
        match (ty, h) {
            // A new handshake inside the encrypted one (a TLS 1.2 renegotiation, whichever
            // hello is seen first of it): its keys are not followed, and that is told.
            (CLIENT_HELLO, CLIENT) | (HELLO_REQUEST, SERVER) if encrypted => {
                self.notice(h, at, Problem::Renegotiation, out);
                self.stop_decrypting();
            }
            (SERVER_HELLO, SERVER) if sealed => {
                self.notice(h, at, Problem::Renegotiation, out);
                self.stop_decrypting();
            }
            (CLIENT_HELLO, CLIENT) => self.client_hello(body),
            // A second ServerHello in the clear (not after a HelloRetryRequest): the keys of
            // the first are kept.
            (SERVER_HELLO, SERVER) if self.info.suite.is_some() => {
                self.notice(h, at, Problem::SecondServerHello, out);
            }
            (SERVER_HELLO, SERVER) => self.server_hello(body, keys),
            (FINISHED, _) => self.finished(h),
            (KEY_UPDATE, _) if self.tls13 => {
                if let Some(half) = self.halves.get_mut(h) {
                    half.keys = half.keys.as_ref().and_then(DirKeys::updated);
                }
            }
            _ => {}
        }
    }

    fn finished(&mut self, h: usize) {
        let next = self.after_finished.get_mut(h).and_then(Option::take);
        if let Some(half) = self.halves.get_mut(h) {
            half.finished = true;
            if next.is_some() {
                half.keys = next;
            }
        }
    }

    fn client_hello(&mut self, body: &[u8]) {
        let Some(ch) = hello::client_hello(body) else {
            return;
        };
        self.info.version = Some(ch.version);
        self.info.sni = ch.sni;
        self.info.alpn = ch.alpn;
        self.client_random = Some(ch.random);
        self.client_session = ch.session_id;
        self.client_etm = ch.etm;
    }

    fn server_hello(&mut self, body: &[u8], keys: &KeySource<'_>) {
        let Some(sh) = hello::server_hello(body) else {
            return;
        };
        self.info.version = Some(sh.version);
        self.info.negotiated = true;
        if sh.retry {
            // A second ClientHello (with the same random) and ServerHello follow.
            return;
        }
        self.info.suite = Some(sh.suite);
        if !sh.alpn.is_empty() {
            self.info.alpn = sh.alpn.clone();
        }
        self.tls13 = sh.version == 0x0304;
        self.info.resumed = if self.tls13 {
            sh.psk
        } else {
            !sh.session_id.is_empty() && sh.session_id == self.client_session
        };
        self.info.keys = self.set_keys(&sh, keys);
    }

    /// The keys of both directions, from the secrets logged for the ClientHello random.
    fn set_keys(&mut self, sh: &hello::ServerHello, keys: &KeySource<'_>) -> Keys {
        let (suite_id, server_random) = (sh.suite, &sh.random);
        let Some(random) = self.client_random else {
            return Keys::NoHandshake;
        };
        let mut secrets = (keys.lookup)(&random);
        let no_master = secrets.is_none_or(|s| s.master.is_none());
        if !self.tls13 && no_master && !sh.session_id.is_empty() {
            // TLS 1.2 logged by session id (Java's agent, older OpenSSL).
            if let Some(master) = (keys.session)(&sh.session_id) {
                secrets = Some(Secrets {
                    master: Some(master),
                    ..secrets.unwrap_or_default()
                });
            }
        }
        let Some(secrets) = secrets else {
            return match (keys.any, keys.cut) {
                (true, true) => Keys::NotKept,
                (true, false) => Keys::Missing,
                (false, _) => Keys::NoKeyLog,
            };
        };
        let Some(suite) = crypto::suite(suite_id).filter(|s| s.tls13 == self.tls13) else {
            return Keys::UnsupportedSuite;
        };
        self.suite = Some(suite);
        let ok = if self.tls13 {
            self.set_keys13(suite, &secrets)
        } else {
            // RFC 7366 §2: encrypt-then-MAC when both hellos carry it (CBC suites only).
            let etm = self.client_etm && sh.etm && suite.mac.is_some();
            self.set_keys12(suite, &secrets, (&random, server_random), etm)
        };
        match ok {
            Some(()) => {
                self.info.secrets = Some((random, secrets));
                Keys::Found
            }
            None if self.tls13 && secrets.client_traffic.is_none() => Keys::Missing,
            None if !self.tls13 && secrets.master.is_none() => Keys::Missing,
            None => Keys::Wrong,
        }
    }

    fn set_keys13(&mut self, suite: Suite, s: &Secrets) -> Option<()> {
        let key = |x: Option<super::keylog::Secret>| DirKeys::tls13(suite, x?.as_bytes());
        let (ch, sh) = (key(s.client_handshake)?, key(s.server_handshake)?);
        let (ct, st) = (key(s.client_traffic)?, key(s.server_traffic)?);
        let [c, sv] = &mut self.halves;
        c.keys = Some(ch);
        sv.keys = Some(sh);
        self.after_finished = [Some(ct), Some(st)];
        Some(())
    }

    fn set_keys12(
        &mut self,
        suite: Suite,
        s: &Secrets,
        (client_random, server_random): (&[u8; 32], &[u8; 32]),
        etm: bool,
    ) -> Option<()> {
        let master = s.master?;
        let (mut c, mut sv) =
            crypto::tls12(suite, master.as_bytes(), client_random, server_random)?;
        if etm {
            c.set_encrypt_then_mac();
            sv.set_encrypt_then_mac();
        }
        self.at_ccs = [Some(c), Some(sv)];
        Some(())
    }

    /// Bytes of direction `src` that will never arrive.
    pub(super) fn gap(
        &mut self,
        src: SocketAddr,
        kind: GapKind,
        at: At,
        out: &mut dyn FnMut(Out<'_>),
    ) {
        let n = match kind {
            GapKind::Lost(n) | GapKind::Truncated(n) | GapKind::LeftOut(n) => n,
            GapKind::MidStream => 0,
        };
        if !matches!(kind, GapKind::LeftOut(_)) {
            self.info.lost_bytes += n;
        }
        let h = self.side(src);
        let decrypting = self.halves.get(h).is_some_and(|x| x.keys.is_some());
        if !decrypting {
            if let Some(half) = self.halves.get_mut(h) {
                half.lost_sync = true;
            }
            return;
        }
        if !matches!(kind, GapKind::LeftOut(_)) {
            self.notice(h, at, Problem::Lost { bytes: n }, out);
        }
        self.lose_place(h, n);
        if let Some(half) = self.halves.get(h) {
            out(Out::Pass(Event::Gap {
                stream: self.info.stream,
                src: half.src,
                dst: half.dst,
                kind,
                at,
            }));
        }
    }

    /// Where the next record of direction `h` starts is unknown now: with keys, look for a
    /// record that authenticates; without, only count.
    fn lose_place(&mut self, h: usize, lost: u64) {
        let Some(half) = self.halves.get_mut(h) else {
            return;
        };
        half.rec.clear();
        half.hs = HsReader::default();
        match half.keys.as_ref() {
            Some(k) => {
                half.resync = Some(Resync {
                    lost,
                    base: k.seq,
                    ..Resync::default()
                })
            }
            None => half.lost_sync = true,
        }
    }

    /// Bytes after a loss: held until a record in them authenticates, then decrypted from
    /// there on. The search spends at most what is left of the connection's budget and of
    /// all connections' (`KeySource::max_search`, `total_left`).
    fn resync(
        &mut self,
        h: usize,
        bytes: &[u8],
        at: At,
        keys: &KeySource<'_>,
        scratch: &mut Vec<u8>,
        out: &mut dyn FnMut(Out<'_>),
    ) {
        let own_left = keys.max_search.saturating_sub(self.searched);
        let total_left = keys.total_left.get();
        let Some(half) = self.halves.get_mut(h) else {
            return;
        };
        let (Some(r), Some(k)) = (half.resync.as_mut(), half.keys.as_mut()) else {
            return;
        };
        r.buf.extend_from_slice(bytes);
        let mut budget = own_left.min(total_left);
        let found = find_record(r, k, &mut budget, scratch);
        let spent = own_left.min(total_left) - budget;
        self.searched += spent;
        keys.total_left.set(total_left.saturating_sub(spent));
        let why = if total_left <= own_left {
            GiveUp::Total
        } else {
            GiveUp::Connection
        };
        match found {
            Found::At(p) => {
                let skipped = r.skipped + p as u64;
                let rest = r.buf.split_off(p.min(r.buf.len()));
                half.resync = None;
                half.failing = false;
                self.notice(h, at, Problem::Resumed { skipped }, out);
                self.feed(h, &rest, at, keys, scratch, out);
            }
            Found::Wait => {
                if r.buf.len() > RESYNC_BUF {
                    let cut = r.buf.len() - RESYNC_BUF;
                    r.buf.drain(..cut);
                    r.skipped += cut as u64;
                }
            }
            Found::GaveUp(spent_all) => {
                half.resync = None;
                half.keys = None;
                half.lost_sync = true;
                let why = if spent_all { why } else { GiveUp::Trials };
                self.notice(h, at, Problem::GaveUp { why }, out);
            }
        }
    }

    /// Picked up mid-stream: bytes held until a record header is found that another follows
    /// (`record_start`); what came before it, the end of a record, is counted as encrypted
    /// bytes. Past two records' worth of bytes with none found, only bytes are counted.
    fn seek(
        &mut self,
        h: usize,
        bytes: &[u8],
        at: At,
        keys: &KeySource<'_>,
        scratch: &mut Vec<u8>,
        out: &mut dyn FnMut(Out<'_>),
    ) {
        let Some(half) = self.halves.get_mut(h) else {
            return;
        };
        let Some(buf) = half.seek.as_mut() else {
            return;
        };
        buf.extend_from_slice(bytes);
        match record_start(buf) {
            Some(p) => {
                let rest = buf.split_off(p.min(buf.len()));
                half.seek = None;
                self.info.encrypted_bytes += p as u64;
                self.feed(h, &rest, at, keys, scratch, out);
            }
            None if buf.len() > 2 * (5 + MAX_RECORD) => {
                self.info.encrypted_bytes += buf.len() as u64;
                half.seek = None;
                half.lost_sync = true;
            }
            None => {}
        }
    }

    /// The connection ended: its report, if it was not made yet, and the close for the Kafka
    /// layer when it was decrypted.
    pub(super) fn close(mut self, ev: Event<'_>, out: &mut dyn FnMut(Out<'_>)) {
        if !self.reported {
            self.reported = true;
            if let Event::Close { at, .. } = ev {
                self.info.told = at;
            }
            out(Out::Connection(&self.info));
        }
        if self.info.keys == Keys::Decrypted {
            out(Out::Pass(ev));
        }
    }
}

/// What `gather` made of some bytes.
enum Gathered<'b> {
    /// The record is whole; these bytes follow it.
    Whole(&'b [u8]),
    /// Every byte was taken; the record is not whole yet.
    Partial,
    /// The header cannot be TLS; these bytes follow it.
    Bad(&'b [u8]),
}

enum Found {
    /// A record at this offset of the buffer authenticates (the keys' sequence number is set
    /// to its own).
    At(usize),
    /// Nothing yet: more bytes are needed.
    Wait,
    /// The search ends without a record: true when it spent its byte budget, false when it
    /// tried `MAX_TRIALS` record openings.
    GaveUp(bool),
}

/// Looks through the bytes held after a loss for a record that authenticates, trying the
/// sequence numbers the lost bytes could have held (a TLS 1.2 AES-GCM record's explicit
/// nonce, which most stacks fill with the sequence number, first), spending at most
/// `budget` bytes of decryption (what is left of it stays there).
fn find_record(r: &mut Resync, k: &mut DirKeys, budget: &mut u64, scratch: &mut Vec<u8>) -> Found {
    let mut p = 0;
    while let Some(&[kind, major, _, hi, lo]) = r.buf.get(p..p + 5) {
        let len = usize::from(u16::from_be_bytes([hi, lo]));
        let end = p + 5 + len;
        if !(plausible(kind, major, len) && len > TAG) {
            p += 1;
            continue;
        }
        // The next header must look like one too (or the bytes end right there).
        let Some(next) = r.buf.get(end..).map(|n| n.get(..5)) else {
            return keep_from(r, p);
        };
        if let Some(&[nk, nm, _, nh, nl]) = next {
            if !plausible(nk, nm, usize::from(u16::from_be_bytes([nh, nl]))) {
                p += 1;
                continue;
            }
        } else {
            return keep_from(r, p);
        }
        let (Some(header), Some(body)) = (r.buf.get(p..p + 5), r.buf.get(p + 5..end)) else {
            return keep_from(r, p);
        };
        let Ok(header) = <[u8; 5]>::try_from(header) else {
            return Found::GaveUp(false);
        };
        if *budget < body.len() as u64 {
            return Found::GaveUp(true);
        }
        let t = try_seqs(
            (r.lost, r.base, r.trials),
            k,
            (&header, body),
            *budget,
            scratch,
        );
        r.trials += t.tried;
        *budget = budget.saturating_sub(t.bytes);
        if let Some(seq) = t.seq {
            k.seq = seq;
            return Found::At(p);
        }
        if r.trials >= MAX_TRIALS {
            return Found::GaveUp(false);
        }
        p += 1;
    }
    keep_from(r, p)
}

/// Drops what was searched before `p`; waits for more.
fn keep_from(r: &mut Resync, p: usize) -> Found {
    let p = p.min(r.buf.len());
    r.buf.drain(..p);
    r.skipped += p as u64;
    Found::Wait
}

fn try_seqs(
    (lost, base, trials): (u64, u64, u32),
    k: &DirKeys,
    (header, body): (&[u8; 5], &[u8]),
    budget: u64,
    scratch: &mut Vec<u8>,
) -> crypto::Tried {
    // At least this many whole records fit in the bytes lost.
    let least = lost / (5 + MAX_RECORD as u64);
    let explicit = body
        .get(..8)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
        .map(u64::from_be_bytes);
    let seqs = explicit
        .into_iter()
        .chain((0..MAX_CANDIDATES).map(|i| base + least + i))
        .take(MAX_TRIALS.saturating_sub(trials) as usize);
    k.find_seq(header, body, seqs, budget, scratch)
}
