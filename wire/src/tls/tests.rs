#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used)]
use super::hello::{EXT_ALPN, EXT_PRE_SHARED_KEY, EXT_SERVER_NAME, EXT_SUPPORTED_VERSIONS};
use super::*;
const CLIENT_HELLO: u8 = 1;
const SERVER_HELLO: u8 = 2;

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
    hello_with(kind, exts, server, [7; 32], 0x1301)
}

fn hello_with(kind: u8, exts: &[u8], server: bool, random: [u8; 32], suite: u16) -> Vec<u8> {
    hello_sid(kind, exts, server, (random, &[]), suite)
}

/// A hello with a session id (`random, session_id`).
fn hello_sid(
    kind: u8,
    exts: &[u8],
    server: bool,
    (random, session_id): ([u8; 32], &[u8]),
    suite: u16,
) -> Vec<u8> {
    let mut m = vec![3, 3];
    m.extend_from_slice(&random);
    m.push(session_id.len() as u8);
    m.extend_from_slice(session_id);
    let [a, b] = suite.to_be_bytes();
    if server {
        m.extend_from_slice(&[a, b, 0]);
    } else {
        m.extend_from_slice(&[0, 2, a, b, 1, 0]);
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

/// What the filter handed on, owned.
#[derive(Debug)]
enum Got {
    Data(u16, Vec<u8>),
    Gap(u16),
    Close,
    Other,
    Conn(Box<TlsConnection>),
    Notice(Problem),
}

fn feed(f: &mut TlsFilter, ev: Event<'_>) -> Vec<Got> {
    let mut got = Vec::new();
    f.event(ev, &mut |o| {
        got.push(match o {
            Out::Pass(Event::Data { src, bytes, .. }) => Got::Data(src.port(), bytes.to_vec()),
            Out::Pass(Event::Gap { src, .. }) => Got::Gap(src.port()),
            Out::Pass(Event::Close { .. }) => Got::Close,
            Out::Pass(_) => Got::Other,
            Out::Connection(c) => Got::Conn(Box::new(c.clone())),
            Out::Notice(n) => Got::Notice(n.problem),
        })
    });
    got
}

fn close(stream: u32) -> Event<'static> {
    Event::Close {
        stream,
        end: crate::tcp::EndKind::Fin,
        at: At::default(),
    }
}

fn only_conn(got: Vec<Got>) -> TlsConnection {
    match &got[..] {
        [Got::Conn(c)] => (**c).clone(),
        other => panic!("expected one report, got {other:?}"),
    }
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
    assert!(feed(&mut f, data(1, 5000, 9093, &ch[..7])).is_empty());
    assert!(feed(&mut f, data(1, 5000, 9093, &ch[7..])).is_empty());
    assert!(feed(&mut f, data(1, 9093, 5000, &sh)).is_empty());
    for part in [&app[..3], &app[3..50], &app[50..]] {
        assert!(feed(&mut f, data(1, 5000, 9093, part)).is_empty());
    }
    let info = only_conn(feed(&mut f, close(1)));
    assert_eq!(info.version, Some(0x0304));
    assert!(info.negotiated);
    assert_eq!(info.suite, Some(0x1301));
    assert_eq!(info.keys, Keys::NoKeyLog);
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
    assert!(
        matches!(&feed(&mut f, data(2, 5001, 9092, &kafka))[..], [Got::Data(5001, b)] if b[..] == kafka)
    );
    assert!(matches!(&feed(&mut f, close(2))[..], [Got::Close]));
}

#[test]
fn junk_after_the_handshake_stops_the_framing_without_panicking() {
    let mut f = TlsFilter::new();
    let mut bytes = record(HANDSHAKE, &[1, 0, 0, 200]);
    bytes.extend_from_slice(&[0xff; 40]);
    let got = feed(&mut f, data(3, 5002, 9093, &bytes));
    assert!(
        matches!(
            &got[..],
            [Got::Notice(Problem::BadHeader { kind: 0xff, .. })]
        ),
        "{got:?}"
    );
    let info = only_conn(feed(&mut f, close(3)));
    assert_eq!(info.records, 1);
    assert_eq!(info.total_bytes, bytes.len() as u64);
}

/// A synthetic TLS 1.3 session between ports 5000 and 9093 with secrets made up here: the
/// hellos, each side's encrypted Finished, then application data sealed with the traffic keys.
struct Session13 {
    random: [u8; 32],
    secrets: [[u8; 32]; 4],
    suite: u16,
}

impl Session13 {
    fn new(suite: u16) -> Session13 {
        Session13 {
            random: [0x42; 32],
            secrets: [[1; 32], [2; 32], [3; 32], [4; 32]],
            suite,
        }
    }

    fn keylog(&self) -> KeyLog {
        let r = hex::encode(self.random);
        let labels = [
            "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
            "SERVER_HANDSHAKE_TRAFFIC_SECRET",
            "CLIENT_TRAFFIC_SECRET_0",
            "SERVER_TRAFFIC_SECRET_0",
        ];
        let text: String = labels
            .iter()
            .zip(self.secrets)
            .map(|(l, s)| format!("{l} {r} {}\n", hex::encode(s)))
            .collect();
        let mut k = KeyLog::default();
        k.add_text(text.as_bytes());
        k
    }

    fn keys(&self, i: usize) -> crypto::DirKeys {
        crypto::DirKeys::tls13(crypto::suite(self.suite).unwrap(), &self.secrets[i]).unwrap()
    }

    fn hellos(&self) -> (Vec<u8>, Vec<u8>) {
        let ch = record(
            HANDSHAKE,
            &hello_with(
                CLIENT_HELLO,
                &ext(EXT_SUPPORTED_VERSIONS, &[2, 3, 4]),
                false,
                self.random,
                self.suite,
            ),
        );
        let sh = record(
            HANDSHAKE,
            &hello_with(
                SERVER_HELLO,
                &ext(EXT_SUPPORTED_VERSIONS, &[3, 4]),
                true,
                [9; 32],
                self.suite,
            ),
        );
        (ch, sh)
    }
}

/// A handshake message: type, 24-bit length, body.
fn hs(ty: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![ty];
    m.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    m.extend_from_slice(body);
    m
}

/// Runs the handshake of `s` through `f` (stream 7): the client keys (handshake, then
/// application) and server keys come back, ready to seal the next records.
fn handshake13(f: &mut TlsFilter, s: &Session13) -> (crypto::DirKeys, crypto::DirKeys, Vec<Got>) {
    handshake13_on(f, s, 7)
}

fn handshake13_on(
    f: &mut TlsFilter,
    s: &Session13,
    stream: u32,
) -> (crypto::DirKeys, crypto::DirKeys, Vec<Got>) {
    let (ch, sh) = s.hellos();
    let mut got = feed(f, data(stream, 5000, 9093, &ch));
    got.extend(feed(f, data(stream, 9093, 5000, &sh)));
    let mut shk = s.keys(1);
    let mut flight = shk.seal(HANDSHAKE, &hs(8, &[0, 0]));
    flight.extend(shk.seal(HANDSHAKE, &hs(20, &[0xee; 32])));
    got.extend(feed(f, data(stream, 9093, 5000, &flight)));
    let mut chk = s.keys(0);
    let mut cflight = record(CHANGE_CIPHER_SPEC, &[1]);
    cflight.extend(chk.seal(HANDSHAKE, &hs(20, &[0xdd; 32])));
    got.extend(feed(f, data(stream, 5000, 9093, &cflight)));
    (s.keys(2), s.keys(3), got)
}

#[test]
fn decrypts_a_tls13_session_in_every_suite() {
    for suite in [0x1301, 0x1303] {
        let s = Session13::new(suite);
        let mut f = TlsFilter::with_keys(Arc::new(s.keylog()));
        let (mut ck, mut sk, got) = handshake13(&mut f, &s);
        let [Got::Conn(c)] = &got[..] else {
            panic!("{got:?}")
        };
        assert_eq!(c.keys, Keys::Decrypted);
        assert_eq!(c.suite, Some(suite));
        // Two records in one segment, then one record split across two segments.
        let mut seg = ck.seal(APPLICATION_DATA, b"kafka-1");
        seg.extend(ck.seal(APPLICATION_DATA, b"kafka-2"));
        let got = feed(&mut f, data(7, 5000, 9093, &seg));
        assert!(
            matches!(&got[..], [Got::Data(5000, a), Got::Data(5000, b)] if a == b"kafka-1" && b == b"kafka-2"),
            "{got:?}"
        );
        let rec = sk.seal(APPLICATION_DATA, b"answer");
        assert!(feed(&mut f, data(7, 9093, 5000, &rec[..9])).is_empty());
        let got = feed(&mut f, data(7, 9093, 5000, &rec[9..]));
        assert!(
            matches!(&got[..], [Got::Data(9093, a)] if a == b"answer"),
            "{got:?}"
        );
        assert!(matches!(&feed(&mut f, close(7))[..], [Got::Close]));
    }
}

#[test]
fn follows_a_key_update() {
    let s = Session13::new(0x1301);
    let mut f = TlsFilter::with_keys(Arc::new(s.keylog()));
    let (mut ck, _, _) = handshake13(&mut f, &s);
    let mut seg = ck.seal(HANDSHAKE, &hs(24, &[0]));
    let mut next = ck.updated().unwrap();
    seg.extend(next.seal(APPLICATION_DATA, b"after update"));
    let got = feed(&mut f, data(7, 5000, 9093, &seg));
    assert!(
        matches!(&got[..], [Got::Data(5000, a)] if a == b"after update"),
        "{got:?}"
    );
}

#[test]
fn wrong_keys_give_one_report_and_no_data() {
    let s = Session13::new(0x1301);
    let mut other = Session13::new(0x1301);
    other.secrets = [[8; 32], [8; 32], [8; 32], [8; 32]];
    let mut f = TlsFilter::with_keys(Arc::new(other.keylog()));
    let (mut ck, _, got) = handshake13(&mut f, &s);
    assert!(got.is_empty(), "{got:?}");
    for _ in 0..5 {
        let got = feed(
            &mut f,
            data(7, 5000, 9093, &ck.seal(APPLICATION_DATA, b"x")),
        );
        assert!(got.is_empty(), "{got:?}");
    }
    let info = only_conn(feed(&mut f, close(7)));
    assert_eq!(info.keys, Keys::Wrong);
}

#[test]
fn missing_keys_are_told_apart_from_no_key_log() {
    let s = Session13::new(0x1301);
    let mut unrelated = Session13::new(0x1301);
    unrelated.random = [0x11; 32];
    let mut f = TlsFilter::with_keys(Arc::new(unrelated.keylog()));
    let (mut ck, _, got) = handshake13(&mut f, &s);
    assert!(got.is_empty());
    assert!(feed(
        &mut f,
        data(7, 5000, 9093, &ck.seal(APPLICATION_DATA, b"x"))
    )
    .is_empty());
    assert_eq!(only_conn(feed(&mut f, close(7))).keys, Keys::Missing);
}

#[test]
fn a_loss_is_told_once_and_decryption_resumes_at_a_record_that_authenticates() {
    let s = Session13::new(0x1301);
    let mut f = TlsFilter::with_keys(Arc::new(s.keylog()));
    let (mut ck, _, _) = handshake13(&mut f, &s);
    let lost = ck.seal(APPLICATION_DATA, &[1; 300]);
    let mut after = ck.seal(APPLICATION_DATA, b"second");
    after.extend(ck.seal(APPLICATION_DATA, b"third"));
    // The first half of a record arrives, the rest of it is lost.
    assert!(feed(&mut f, data(7, 5000, 9093, &lost[..100])).is_empty());
    let got = feed(
        &mut f,
        Event::Gap {
            stream: 7,
            src: addr(5000),
            dst: addr(9093),
            kind: crate::tcp::GapKind::Lost(lost.len() as u64 - 100),
            at: At::default(),
        },
    );
    assert!(
        matches!(
            &got[..],
            [Got::Notice(Problem::Lost { .. }), Got::Gap(5000)]
        ),
        "{got:?}"
    );
    let got = feed(&mut f, data(7, 5000, 9093, &after));
    assert!(
        matches!(&got[..], [Got::Notice(Problem::Resumed { skipped: 0 }), Got::Data(_, a), Got::Data(_, b)] if a == b"second" && b == b"third"),
        "{got:?}"
    );
}

#[test]
fn a_record_that_does_not_authenticate_later_is_told_and_passed_over() {
    let s = Session13::new(0x1301);
    let mut f = TlsFilter::with_keys(Arc::new(s.keylog()));
    let (mut ck, _, _) = handshake13(&mut f, &s);
    // Two records damaged in the capture, each with its own sequence number.
    let mut seg = Vec::new();
    for _ in 0..2 {
        let mut bad = ck.seal(APPLICATION_DATA, b"damaged");
        bad[8] ^= 0x40;
        seg.extend(bad);
    }
    seg.extend(ck.seal(APPLICATION_DATA, b"whole"));
    let got = feed(&mut f, data(7, 5000, 9093, &seg));
    // Told once for the run of bad records; the next good one decrypts.
    assert!(
        matches!(&got[..], [Got::Notice(Problem::BadTag { .. }), Got::Gap(_), Got::Gap(_), Got::Data(_, w)] if w == b"whole"),
        "{got:?}"
    );
}

#[test]
fn renegotiation_is_told_and_ends_decryption() {
    let s = Session13::new(0x1301);
    let mut f = TlsFilter::with_keys(Arc::new(s.keylog()));
    let (mut ck, _, _) = handshake13(&mut f, &s);
    let (ch, _) = s.hellos();
    let got = feed(&mut f, data(7, 5000, 9093, &ck.seal(HANDSHAKE, &ch[5..])));
    assert!(
        matches!(&got[..], [Got::Notice(Problem::Renegotiation)]),
        "{got:?}"
    );
    assert!(feed(
        &mut f,
        data(7, 5000, 9093, &ck.seal(APPLICATION_DATA, b"x"))
    )
    .is_empty());
}

#[test]
fn decrypts_tls12_gcm_and_chacha() {
    for suite in [0xc02f_u16, 0xc030, 0xcca8] {
        let random = [0x33; 32];
        let server_random = [9; 32];
        let master = [0x5a; 48];
        let mut k = KeyLog::default();
        k.add_text(
            format!(
                "CLIENT_RANDOM {} {}\n",
                hex::encode(random),
                hex::encode(master)
            )
            .as_bytes(),
        );
        let mut f = TlsFilter::with_keys(Arc::new(k));
        let ch = record(
            HANDSHAKE,
            &hello_with(CLIENT_HELLO, &[], false, random, suite),
        );
        let sh = record(
            HANDSHAKE,
            &hello_with(SERVER_HELLO, &[], true, server_random, suite),
        );
        let (mut ck, mut sk) = crypto::tls12(
            crypto::suite(suite).unwrap(),
            &master,
            &random,
            &server_random,
        )
        .unwrap();
        assert!(feed(&mut f, data(7, 5000, 9093, &ch)).is_empty());
        assert!(feed(&mut f, data(7, 9093, 5000, &sh)).is_empty());
        let mut cflight = record(CHANGE_CIPHER_SPEC, &[1]);
        cflight.extend(ck.seal(HANDSHAKE, &hs(20, &[0; 12])));
        let got = feed(&mut f, data(7, 5000, 9093, &cflight));
        assert!(
            matches!(&got[..], [Got::Conn(c)] if c.keys == Keys::Decrypted && c.version == Some(0x0303)),
            "{got:?}"
        );
        let mut sflight = record(CHANGE_CIPHER_SPEC, &[1]);
        sflight.extend(sk.seal(HANDSHAKE, &hs(20, &[0; 12])));
        sflight.extend(sk.seal(APPLICATION_DATA, b"from the broker"));
        let got = feed(&mut f, data(7, 9093, 5000, &sflight));
        assert!(
            matches!(&got[..], [Got::Data(9093, a)] if a == b"from the broker"),
            "{got:?}"
        );
    }
}

#[test]
fn an_unknown_suite_is_reported_not_decrypted() {
    let s = Session13::new(0x1301);
    let mut f = TlsFilter::with_keys(Arc::new(s.keylog()));
    let ch = record(
        HANDSHAKE,
        &hello_with(CLIENT_HELLO, &[], false, s.random, 0x000a),
    );
    let sh = record(
        HANDSHAKE,
        &hello_with(SERVER_HELLO, &[], true, [9; 32], 0x000a),
    );
    feed(&mut f, data(7, 5000, 9093, &ch));
    feed(&mut f, data(7, 9093, 5000, &sh));
    let info = only_conn(feed(&mut f, close(7)));
    assert_eq!(info.keys, Keys::UnsupportedSuite);
    // Named all the same (IANA), and a suite not in the registry by its number.
    assert_eq!(suite_name(0x000a), "TLS_RSA_WITH_3DES_EDE_CBC_SHA");
    assert_eq!(suite_name(0x7a7a), "cipher suite 0x7a7a");
}

/// psk_key_exchange_modes (RFC 8446 §4.2.9) and session_ticket (RFC 5077 §3.2).
const EXT_PSK_MODES: u16 = 45;
const EXT_SESSION_TICKET: u16 = 35;
const NEW_SESSION_TICKET: u8 = 4;
const ENCRYPTED_EXTENSIONS: u8 = 8;
const FINISHED: u8 = 20;

/// An ApiVersions v3 request frame (size prefix included), as a client sends it first.
fn kafka_request() -> Vec<u8> {
    let mut body = vec![0, 18, 0, 3, 0, 0, 0, 1]; // api key, version, correlation id
    body.extend_from_slice(&[0, 9]);
    body.extend_from_slice(b"producer1");
    body.push(0); // header tagged fields
    body.push(9);
    body.extend_from_slice(b"kdissect");
    body.push(6);
    body.extend_from_slice(b"0.1.0");
    body.push(0);
    let mut frame = (body.len() as u32).to_be_bytes().to_vec();
    frame.extend(body);
    frame
}

/// The plaintext the filter handed on, by sending port, in order; anything else fails.
fn plaintext(got: &[Got]) -> Vec<(u16, Vec<u8>)> {
    got.iter()
        .map(|g| match g {
            Got::Data(port, b) => (*port, b.clone()),
            other => panic!("expected plaintext, got {other:?} in {got:?}"),
        })
        .collect()
}

/// TLS 1.3 PSK resumption (RFC 8446 §2.2): the client offers a ticket in pre_shared_key
/// (with psk_key_exchange_modes and a legacy session id, as middlebox-compatible clients
/// send), the server selects identity 0 and sends no Certificate: EncryptedExtensions and
/// Finished only. The four secrets logged for the client random decrypt it, a Kafka frame
/// sealed across two records comes out whole, and the connection is told as resumed.
#[test]
fn decrypts_a_tls13_psk_resumed_session() {
    let s = Session13::new(0x1303);
    let mut f = TlsFilter::with_keys(Arc::new(s.keylog()));
    let legacy_id = [0x77; 32];
    let mut identity = 0x1c_u16.to_be_bytes().to_vec(); // identity: a 28-byte ticket
    identity.extend_from_slice(&[0xab; 28]);
    identity.extend_from_slice(&0x0102_0304_u32.to_be_bytes()); // obfuscated_ticket_age
    let mut psk = (identity.len() as u16).to_be_bytes().to_vec();
    psk.extend(identity);
    psk.extend_from_slice(&33_u16.to_be_bytes()); // binders: one of 32 bytes (SHA-256)
    psk.push(32);
    psk.extend_from_slice(&[0xbd; 32]);
    let mut exts = ext(EXT_SUPPORTED_VERSIONS, &[2, 3, 4]);
    exts.extend(ext(EXT_PSK_MODES, &[1, 1])); // psk_dhe_ke
    exts.extend(ext(EXT_PRE_SHARED_KEY, &psk)); // last, as RFC 8446 §4.2.11 requires
    let ch = hello_sid(CLIENT_HELLO, &exts, false, (s.random, &legacy_id), s.suite);
    let mut sexts = ext(EXT_SUPPORTED_VERSIONS, &[3, 4]);
    sexts.extend(ext(EXT_PRE_SHARED_KEY, &[0, 0])); // selected_identity 0
    let sh = hello_sid(SERVER_HELLO, &sexts, true, ([9; 32], &legacy_id), s.suite);
    assert!(feed(&mut f, data(7, 5000, 9093, &record(HANDSHAKE, &ch))).is_empty());
    // The ServerHello, a compatibility ChangeCipherSpec and the encrypted flight, one segment.
    let mut shk = s.keys(1);
    let mut flight = record(HANDSHAKE, &sh);
    flight.extend(record(CHANGE_CIPHER_SPEC, &[1]));
    let mut ee_fin = hs(ENCRYPTED_EXTENSIONS, &[0, 0]);
    ee_fin.extend(hs(FINISHED, &[0xee; 32]));
    flight.extend(shk.seal(HANDSHAKE, &ee_fin));
    let got = feed(&mut f, data(7, 9093, 5000, &flight));
    let [Got::Conn(c)] = &got[..] else {
        panic!("{got:?}")
    };
    assert_eq!(c.keys, Keys::Decrypted);
    assert!(c.resumed);
    assert_eq!((c.version, c.suite), (Some(0x0304), Some(0x1303)));
    assert_eq!(c.secrets.map(|(r, _)| r), Some(s.random));
    // The client's Finished, then a Kafka frame cut across two records in one segment.
    let mut chk = s.keys(0);
    let mut ck = s.keys(2);
    let frame = kafka_request();
    let mut seg = record(CHANGE_CIPHER_SPEC, &[1]);
    seg.extend(chk.seal(HANDSHAKE, &hs(FINISHED, &[0xdd; 32])));
    seg.extend(ck.seal(APPLICATION_DATA, &frame[..10]));
    seg.extend(ck.seal(APPLICATION_DATA, &frame[10..]));
    let got = plaintext(&feed(&mut f, data(7, 5000, 9093, &seg)));
    assert_eq!(joined(&got, 5000), frame);
    // The server's next ticket (post-handshake), then its answer.
    let mut sk = s.keys(3);
    let mut seg = sk.seal(HANDSHAKE, &hs(NEW_SESSION_TICKET, &[0; 13]));
    seg.extend(sk.seal(APPLICATION_DATA, b"\0\0\0\x04\0\0\0\x01"));
    let got = plaintext(&feed(&mut f, data(7, 9093, 5000, &seg)));
    assert_eq!(got, vec![(9093, b"\0\0\0\x04\0\0\0\x01".to_vec())]);
    assert!(matches!(&feed(&mut f, close(7))[..], [Got::Close]));
}

/// A full TLS 1.3 handshake whose ServerHello echoes the client's legacy session id (every
/// middlebox-compatible one does) is not a resumption: only pre_shared_key is.
#[test]
fn an_echoed_tls13_legacy_session_id_is_not_resumption() {
    let s = Session13::new(0x1301);
    let mut f = TlsFilter::with_keys(Arc::new(s.keylog()));
    let id = [0x55; 32];
    let ch = hello_sid(
        CLIENT_HELLO,
        &ext(EXT_SUPPORTED_VERSIONS, &[2, 3, 4]),
        false,
        (s.random, &id),
        s.suite,
    );
    let sh = hello_sid(
        SERVER_HELLO,
        &ext(EXT_SUPPORTED_VERSIONS, &[3, 4]),
        true,
        ([9; 32], &id),
        s.suite,
    );
    feed(&mut f, data(7, 5000, 9093, &record(HANDSHAKE, &ch)));
    let mut flight = record(HANDSHAKE, &sh);
    flight.extend(s.keys(1).seal(HANDSHAKE, &hs(FINISHED, &[0xee; 32])));
    let got = feed(&mut f, data(7, 9093, 5000, &flight));
    assert!(
        matches!(&got[..], [Got::Conn(c)] if c.keys == Keys::Decrypted && !c.resumed),
        "{got:?}"
    );
}

/// The bytes sent from `port`, joined (there may be one piece per record).
fn joined(plain: &[(u16, Vec<u8>)], port: u16) -> Vec<u8> {
    plain
        .iter()
        .filter(|(p, _)| *p == port)
        .flat_map(|(_, b)| b.iter().copied())
        .collect()
}

/// A TLS 1.2 abbreviated handshake (RFC 5246 §7.3, RFC 5077 §3.1) between ports 5000 and
/// 9093: the client offers `session_id` (and `ticket` in a session_ticket extension when
/// given), the server echoes the id, then sends its ChangeCipherSpec and encrypted Finished
/// first (before the client's, the reverse of a full handshake), then both sides send
/// Kafka bytes. Returns what the filter handed on at each step: the server's flight, the
/// client's, the server's answer.
fn abbreviated12(
    keylog: &str,
    (session_id, ticket): (&[u8], Option<&[u8]>),
    suite: u16,
) -> ([Vec<Got>; 3], TlsFilter) {
    let random = [0x34; 32];
    let server_random = [0x99; 32];
    let master = [0x6b; 48];
    let mut k = KeyLog::default();
    k.add_text(keylog.as_bytes());
    let mut f = TlsFilter::with_keys(Arc::new(k));
    let exts = ticket.map_or_else(Vec::new, |t| ext(EXT_SESSION_TICKET, t));
    let ch = hello_sid(CLIENT_HELLO, &exts, false, (random, session_id), suite);
    let sh = hello_sid(SERVER_HELLO, &[], true, (server_random, session_id), suite);
    let (mut ck, mut sk) = crypto::tls12(
        crypto::suite(suite).unwrap(),
        &master,
        &random,
        &server_random,
    )
    .unwrap();
    assert!(feed(&mut f, data(7, 5000, 9093, &record(HANDSHAKE, &ch))).is_empty());
    let mut sflight = record(HANDSHAKE, &sh);
    if ticket.is_some() {
        // A server that takes up a ticket may renew it (RFC 5077 §3.3), before its CCS.
        sflight.extend(record(HANDSHAKE, &hs(NEW_SESSION_TICKET, &[0; 10])));
    }
    sflight.extend(record(CHANGE_CIPHER_SPEC, &[1]));
    sflight.extend(sk.seal(HANDSHAKE, &hs(FINISHED, &[0x51; 12])));
    let server = feed(&mut f, data(7, 9093, 5000, &sflight));
    let frame = kafka_request();
    let mut cflight = record(CHANGE_CIPHER_SPEC, &[1]);
    cflight.extend(ck.seal(HANDSHAKE, &hs(FINISHED, &[0xc1; 12])));
    cflight.extend(ck.seal(APPLICATION_DATA, &frame[..7]));
    cflight.extend(ck.seal(APPLICATION_DATA, &frame[7..]));
    let client = feed(&mut f, data(7, 5000, 9093, &cflight));
    let answer = feed(
        &mut f,
        data(
            7,
            9093,
            5000,
            &sk.seal(APPLICATION_DATA, b"from the broker"),
        ),
    );
    ([server, client, answer], f)
}

fn client_random_line(random: [u8; 32], master: [u8; 48]) -> String {
    format!(
        "CLIENT_RANDOM {} {}\n",
        hex::encode(random),
        hex::encode(master)
    )
}

fn session_line(id: &[u8], master: [u8; 48]) -> String {
    format!(
        "RSA Session-ID:{} Master-Key:{}\n",
        hex::encode(id),
        hex::encode(master)
    )
}

/// An abbreviated handshake decrypted: told once, as resumed, at the server's Finished (the
/// first record that authenticates), then the client's Kafka frame whole and the answer.
fn assert_resumed_and_decrypted([server, client, answer]: &[Vec<Got>; 3], suite: u16) {
    let [Got::Conn(c)] = &server[..] else {
        panic!("{server:?}")
    };
    assert_eq!(c.keys, Keys::Decrypted);
    assert!(c.resumed, "{c:?}");
    assert_eq!((c.version, c.suite), (Some(0x0303), Some(suite)));
    assert_eq!(joined(&plaintext(client), 5000), kafka_request());
    assert_eq!(plaintext(answer), vec![(9093, b"from the broker".to_vec())]);
}

/// TLS 1.2 session-id resumption, keyed by the resumed connection's own CLIENT_RANDOM line
/// (what OpenSSL, Go, Python and Node write) and by an `RSA Session-ID:` line for the session
/// (what the Java agent writes for TLS 1.2): both decrypt, in a GCM and a ChaCha20 suite.
#[test]
fn decrypts_a_tls12_session_id_resumption() {
    let id = [0x5e; 32];
    let master = [0x6b; 48];
    for suite in [0xc02f_u16, 0xcca9] {
        for keylog in [
            client_random_line([0x34; 32], master),
            session_line(&id, master),
        ] {
            let (got, _) = abbreviated12(&keylog, (&id, None), suite);
            assert_resumed_and_decrypted(&got, suite);
        }
    }
    // The Session-ID line is matched by the session id: another session's does not key it.
    let ([server, client, _], _) =
        abbreviated12(&session_line(&[0x5f; 32], master), (&id, None), 0xc02f);
    assert!(
        server.is_empty() && client.is_empty(),
        "{server:?} {client:?}"
    );
}

/// TLS 1.2 ticket resumption (RFC 5077 §3.4): the client sends a ticket in session_ticket
/// with a session id of its own, and the server echoes the id (and renews the ticket) to
/// take it up. Keyed by CLIENT_RANDOM or by the echoed id's Session-ID line.
#[test]
fn decrypts_a_tls12_ticket_resumption() {
    let id = [0x1d; 32];
    let master = [0x6b; 48];
    let ticket = [0x7e; 160];
    for keylog in [
        client_random_line([0x34; 32], master),
        session_line(&id, master),
    ] {
        let (got, _) = abbreviated12(&keylog, (&id, Some(&ticket)), 0xc030);
        assert_resumed_and_decrypted(&got, 0xc030);
    }
}

/// A ticket presented with an empty session id (RFC 5077 §3.4 allows it): the ServerHello
/// has no id to echo, and only the server's ChangeCipherSpec coming first tells the
/// resumption. Told resumed whether it decrypts or not; a full TLS 1.2 handshake (client's
/// ChangeCipherSpec first) is not.
#[test]
fn a_ticket_resumption_without_a_session_id_is_told_by_the_server_ccs_first() {
    let master = [0x6b; 48];
    let (got, _) = abbreviated12(
        &client_random_line([0x34; 32], master),
        (&[], Some(&[0x7e; 64])),
        0xc02b,
    );
    assert_resumed_and_decrypted(&got, 0xc02b);
    let (got, mut f) = abbreviated12("", (&[], Some(&[0x7e; 64])), 0xc02b);
    assert!(got.iter().all(Vec::is_empty), "{got:?}");
    let info = only_conn(feed(&mut f, close(7)));
    assert_eq!(info.keys, Keys::NoKeyLog);
    assert!(info.resumed);
    // The full handshake of decrypts_tls12_gcm_and_chacha, without keys: not resumed.
    let mut f = TlsFilter::new();
    let ch = hello_with(CLIENT_HELLO, &[], false, [0x34; 32], 0xc02b);
    let sh = hello_with(SERVER_HELLO, &[], true, [9; 32], 0xc02b);
    feed(&mut f, data(7, 5000, 9093, &record(HANDSHAKE, &ch)));
    feed(&mut f, data(7, 9093, 5000, &record(HANDSHAKE, &sh)));
    let mut cflight = record(CHANGE_CIPHER_SPEC, &[1]);
    cflight.extend(record(HANDSHAKE, &[0; 40]));
    feed(&mut f, data(7, 5000, 9093, &cflight));
    feed(&mut f, data(7, 9093, 5000, &cflight));
    let info = only_conn(feed(&mut f, close(7)));
    assert!(!info.resumed && info.records == 6, "{info:?}");
}

// Issue 35, items 8 and 20.

/// A TLS 1.2 session of `suite` (stream 7, ports 5000 and 9093) through `f` up to both
/// Finished, with encrypt_then_mac in both hellos when `etm`: the application keys of both
/// sides come back.
fn session12(
    f: &mut TlsFilter,
    suite: u16,
    random: [u8; 32],
    master: [u8; 48],
    etm: bool,
) -> (crypto::DirKeys, crypto::DirKeys, Vec<Got>) {
    let server_random = [9; 32];
    let exts = if etm {
        ext(hello::EXT_ENCRYPT_THEN_MAC, &[])
    } else {
        Vec::new()
    };
    let ch = record(
        HANDSHAKE,
        &hello_with(CLIENT_HELLO, &exts, false, random, suite),
    );
    let sh = record(
        HANDSHAKE,
        &hello_with(SERVER_HELLO, &exts, true, server_random, suite),
    );
    let (mut ck, mut sk) = crypto::tls12(
        crypto::suite(suite).unwrap(),
        &master,
        &random,
        &server_random,
    )
    .unwrap();
    if etm {
        ck.set_encrypt_then_mac();
        sk.set_encrypt_then_mac();
    }
    let mut got = feed(f, data(7, 5000, 9093, &ch));
    got.extend(feed(f, data(7, 9093, 5000, &sh)));
    let mut cflight = record(CHANGE_CIPHER_SPEC, &[1]);
    cflight.extend(ck.seal(HANDSHAKE, &hs(20, &[0; 12])));
    got.extend(feed(f, data(7, 5000, 9093, &cflight)));
    let mut sflight = record(CHANGE_CIPHER_SPEC, &[1]);
    sflight.extend(sk.seal(HANDSHAKE, &hs(20, &[0; 12])));
    got.extend(feed(f, data(7, 9093, 5000, &sflight)));
    (ck, sk, got)
}

fn keys12(random: [u8; 32], master: [u8; 48]) -> Arc<KeyLog> {
    let mut k = KeyLog::default();
    k.add_text(client_random_line(random, master).as_bytes());
    Arc::new(k)
}

#[test]
fn decrypts_tls12_cbc_with_mac_then_encrypt_and_encrypt_then_mac() {
    for suite in [0xc013_u16, 0xc014, 0xc027, 0xc028, 0x003c] {
        for etm in [false, true] {
            let (random, master) = ([0x44; 32], [0x6b; 48]);
            let mut f = TlsFilter::with_keys(keys12(random, master));
            let (mut ck, mut sk, got) = session12(&mut f, suite, random, master, etm);
            assert!(
                matches!(&got[..], [Got::Conn(c)] if c.keys == Keys::Decrypted && c.suite == Some(suite)),
                "{suite:04x} etm {etm}: {got:?}"
            );
            // Records of every padding length, and one longer than a block many times.
            let mut seg = Vec::new();
            for n in 0..20 {
                seg.extend(ck.seal(APPLICATION_DATA, &vec![n as u8; n]));
            }
            seg.extend(ck.seal(APPLICATION_DATA, &[0x5c; 5000]));
            let got = plaintext(&feed(&mut f, data(7, 5000, 9093, &seg)));
            let mut want: Vec<u8> = (0..20).flat_map(|n| vec![n as u8; n]).collect();
            want.extend([0x5c; 5000]);
            assert_eq!(joined(&got, 5000), want, "{suite:04x} etm {etm}");
            let got = feed(
                &mut f,
                data(7, 9093, 5000, &sk.seal(APPLICATION_DATA, b"answer")),
            );
            assert!(
                matches!(&got[..], [Got::Data(9093, a)] if a == b"answer"),
                "{suite:04x} etm {etm}: {got:?}"
            );
        }
    }
}

#[test]
fn encrypt_then_mac_offered_by_one_side_only_is_not_used() {
    let (random, master) = ([0x45; 32], [0x6c; 48]);
    let mut f = TlsFilter::with_keys(keys12(random, master));
    // The client offers it, the server does not take it up: MAC-then-encrypt.
    let server_random = [9; 32];
    let ch = record(
        HANDSHAKE,
        &hello_with(
            CLIENT_HELLO,
            &ext(hello::EXT_ENCRYPT_THEN_MAC, &[]),
            false,
            random,
            0xc027,
        ),
    );
    let sh = record(
        HANDSHAKE,
        &hello_with(SERVER_HELLO, &[], true, server_random, 0xc027),
    );
    let (mut ck, _) = crypto::tls12(
        crypto::suite(0xc027).unwrap(),
        &master,
        &random,
        &server_random,
    )
    .unwrap();
    feed(&mut f, data(7, 5000, 9093, &ch));
    feed(&mut f, data(7, 9093, 5000, &sh));
    let mut cflight = record(CHANGE_CIPHER_SPEC, &[1]);
    cflight.extend(ck.seal(HANDSHAKE, &hs(20, &[0; 12])));
    cflight.extend(ck.seal(APPLICATION_DATA, b"mac then encrypt"));
    let got = feed(&mut f, data(7, 5000, 9093, &cflight));
    assert!(
        matches!(&got[..], [Got::Conn(_), Got::Data(5000, a)] if a == b"mac then encrypt"),
        "{got:?}"
    );
}

#[test]
fn a_cbc_loss_resumes_at_a_record_whose_mac_verifies() {
    let (random, master) = ([0x46; 32], [0x6d; 48]);
    let mut f = TlsFilter::with_keys(keys12(random, master));
    let (mut ck, _, _) = session12(&mut f, 0xc027, random, master, false);
    let lost = ck.seal(APPLICATION_DATA, &[1; 300]);
    let mut after = ck.seal(APPLICATION_DATA, b"second");
    after.extend(ck.seal(APPLICATION_DATA, b"third"));
    feed(&mut f, data(7, 5000, 9093, &lost[..100]));
    feed(
        &mut f,
        Event::Gap {
            stream: 7,
            src: addr(5000),
            dst: addr(9093),
            kind: crate::tcp::GapKind::Lost(lost.len() as u64 - 100),
            at: At::default(),
        },
    );
    let got = feed(&mut f, data(7, 5000, 9093, &after));
    assert!(
        matches!(&got[..], [Got::Notice(Problem::Resumed { skipped: 0 }), Got::Data(_, a), Got::Data(_, b)] if a == b"second" && b == b"third"),
        "{got:?}"
    );
}

#[test]
fn an_encrypted_server_hello_is_told_and_does_not_rekey_silently() {
    let s = Session13::new(0x1301);
    let mut f = TlsFilter::with_keys(Arc::new(s.keylog()));
    let (_, mut sk, _) = handshake13(&mut f, &s);
    let (_, sh) = s.hellos();
    let got = feed(&mut f, data(7, 9093, 5000, &sk.seal(HANDSHAKE, &sh[5..])));
    assert!(
        matches!(&got[..], [Got::Notice(Problem::Renegotiation)]),
        "{got:?}"
    );
}

#[test]
fn a_second_server_hello_in_the_clear_is_told_and_ignored() {
    let s = Session13::new(0x1301);
    let mut f = TlsFilter::with_keys(Arc::new(s.keylog()));
    let (ch, sh) = s.hellos();
    feed(&mut f, data(7, 5000, 9093, &ch));
    feed(&mut f, data(7, 9093, 5000, &sh));
    // Another ServerHello (another random, another suite): told, and the first one's keys
    // stay, so the session decrypts.
    let other = record(
        HANDSHAKE,
        &hello_with(
            SERVER_HELLO,
            &ext(EXT_SUPPORTED_VERSIONS, &[3, 4]),
            true,
            [1; 32],
            0x1302,
        ),
    );
    let got = feed(&mut f, data(7, 9093, 5000, &other));
    assert!(
        matches!(&got[..], [Got::Notice(Problem::SecondServerHello)]),
        "{got:?}"
    );
    let mut shk = s.keys(1);
    let mut flight = shk.seal(HANDSHAKE, &hs(8, &[0, 0]));
    flight.extend(shk.seal(HANDSHAKE, &hs(20, &[0xee; 32])));
    let got = feed(&mut f, data(7, 9093, 5000, &flight));
    assert!(
        matches!(&got[..], [Got::Conn(c)] if c.keys == Keys::Decrypted && c.suite == Some(0x1301)),
        "{got:?}"
    );
}

#[test]
fn a_20k_client_hello_over_several_records_is_read() {
    let s = Session13::new(0x1301);
    let mut f = TlsFilter::with_keys(Arc::new(s.keylog()));
    // A padding extension (RFC 7685) of 20 000 bytes: a legal ClientHello of about 20 KB,
    // which no record can hold (2^14 bytes at most): it spans two records, here cut in
    // three, the middle one in two segments.
    let mut exts = ext(21, &vec![0; 20_000]);
    exts.extend(ext(EXT_SUPPORTED_VERSIONS, &[2, 3, 4]));
    exts.extend(ext(EXT_ALPN, &[0, 6, 5, b'k', b'a', 0x1b, b'[', b'2']));
    let msg = hello_with(CLIENT_HELLO, &exts, false, s.random, 0x1301);
    assert!(msg.len() > 20_000);
    let mut wire = Vec::new();
    for part in [&msg[..9000], &msg[9000..16000], &msg[16000..]] {
        wire.extend(record(HANDSHAKE, part));
    }
    feed(&mut f, data(7, 5000, 9093, &wire[..12_000]));
    feed(&mut f, data(7, 5000, 9093, &wire[12_000..]));
    let (_, sh) = s.hellos();
    feed(&mut f, data(7, 9093, 5000, &sh));
    let mut shk = s.keys(1);
    let flight = shk.seal(HANDSHAKE, &hs(20, &[0xee; 32]));
    let got = feed(&mut f, data(7, 9093, 5000, &flight));
    let [Got::Conn(c)] = &got[..] else {
        panic!("{got:?}")
    };
    assert_eq!(c.keys, Keys::Decrypted);
    // Its ALPN came from the end of the 20 KB message, with its escape byte kept as read.
    assert_eq!(c.alpn, vec!["ka\u{1b}[2".to_string()]);
}

/// The events the filter hands on for a capture that starts inside a connection: the
/// midstream gap, then `segments` from the client (port 50000) and server (9093).
fn midstream(f: &mut TlsFilter, segments: &[(bool, Vec<u8>)]) -> Vec<Got> {
    let mut got = feed(
        f,
        Event::Gap {
            stream: 3,
            src: addr(50000),
            dst: addr(9093),
            kind: crate::tcp::GapKind::MidStream,
            at: At::default(),
        },
    );
    for (client, bytes) in segments {
        let (src, dst) = if *client {
            (50000, 9093)
        } else {
            (9093, 50000)
        };
        got.extend(feed(f, data(3, src, dst, bytes)));
    }
    got.extend(feed(f, close(3)));
    got
}

/// Pseudo-random bytes (ciphertext stands in for them).
fn noise(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 7) as u8
        })
        .collect()
}

#[test]
fn tls_picked_up_mid_stream_is_one_connection_not_kafka() {
    // The capture starts inside a 16 KB record of the server; the client's requests are
    // small records, one a segment.
    let mut server = noise(9_000, 1);
    server.extend(record(APPLICATION_DATA, &noise(16_000, 2)));
    let mut segments: Vec<(bool, Vec<u8>)> =
        server.chunks(1448).map(|c| (false, c.to_vec())).collect();
    segments.insert(2, (true, record(APPLICATION_DATA, &noise(120, 3))));
    segments.insert(3, (true, record(APPLICATION_DATA, &noise(90, 4))));
    let mut f = TlsFilter::new();
    let got = midstream(&mut f, &segments);
    assert!(
        got.iter()
            .all(|g| !matches!(g, Got::Data(..) | Got::Gap(_))),
        "nothing reaches the Kafka layer: {got:?}"
    );
    let info = got
        .iter()
        .find_map(|g| match g {
            Got::Conn(c) => Some(c.clone()),
            _ => None,
        })
        .expect("one connection line");
    assert!(info.midstream && info.keys == Keys::NoHandshake);
    assert_eq!((info.client.port(), info.server.port()), (50000, 9093));
    let total: usize = segments.iter().map(|(_, b)| b.len()).sum();
    assert_eq!(info.total_bytes, total as u64);
    assert_eq!(info.encrypted_bytes, info.total_bytes - 3 * 5);
    assert!(f.oldest_held().is_none());
}

#[test]
fn kafka_picked_up_mid_stream_passes_at_once() {
    let mut f = TlsFilter::new();
    let req = kafka_request();
    // The first segment has Kafka's zeros: handed on with the gap before it, not held.
    let got = feed(
        &mut f,
        Event::Gap {
            stream: 3,
            src: addr(50000),
            dst: addr(9092),
            kind: crate::tcp::GapKind::MidStream,
            at: At::default(),
        },
    );
    assert!(got.is_empty());
    assert_eq!(f.oldest_held(), Some(0));
    let got = feed(&mut f, data(3, 50000, 9092, &req));
    assert!(
        matches!(&got[..], [Got::Gap(50000), Got::Data(50000, d)] if *d == req),
        "{got:?}"
    );
    assert!(f.oldest_held().is_none());
    // Random bytes (a compressed batch, say) are held a while, then handed on in order.
    let mut f = TlsFilter::new();
    let segs: Vec<(bool, Vec<u8>)> = (0..SNIFF_EVENTS)
        .map(|i| (i % 2 == 0, noise(700, i + 10)))
        .collect();
    let got = midstream(&mut f, &segs);
    let datas: Vec<&Vec<u8>> = got
        .iter()
        .filter_map(|g| match g {
            Got::Data(_, d) => Some(d),
            _ => None,
        })
        .collect();
    assert_eq!(datas.len(), segs.len());
    assert!(datas.iter().zip(&segs).all(|(a, (_, b))| *a == b));
    assert!(matches!(got.last(), Some(Got::Close)));
}

#[test]
fn record_framing_is_found_after_a_record_tail() {
    let mut b = noise(300, 7);
    let at = b.len();
    b.extend(record(APPLICATION_DATA, &noise(200, 8)));
    b.extend(record(APPLICATION_DATA, &noise(40, 9)));
    assert_eq!(conn::record_start(&b), Some(at));
    // One record that ends with the bytes.
    assert_eq!(conn::record_start(&record(23, &noise(64, 1))), Some(0));
    // Kafka bytes and noise are not records.
    assert_eq!(conn::record_start(&kafka_request()), None);
    assert_eq!(conn::record_start(&noise(40_000, 5)), None);
}

/// A TLS 1.3 client direction made to cost the search after a loss as much as it can: each
/// loss is followed by records that look whole (a header, 16 KB, another header) but do not
/// authenticate, then by one that does.
fn storm(ck: &mut crypto::DirKeys, losses: usize) -> Vec<(bool, Vec<u8>)> {
    let mut out = Vec::new();
    for i in 0..losses {
        let lost = ck.seal(APPLICATION_DATA, &[0; 100]);
        out.push((true, lost));
        let mut fake = Vec::new();
        for j in 0..6 {
            fake.extend(record(
                APPLICATION_DATA,
                &noise(16_000, (i * 10 + j) as u32),
            ));
        }
        fake.extend(ck.seal(APPLICATION_DATA, b"good"));
        fake.extend(ck.seal(APPLICATION_DATA, b"good too"));
        out.push((false, fake));
    }
    out
}

fn run_storm(limits: Limits, losses: usize, conns: u32) -> (u64, Vec<Problem>) {
    let s = Session13::new(0x1301);
    let mut f = TlsFilter::with_limits(Arc::new(s.keylog()), limits);
    let mut problems = Vec::new();
    for stream in 0..conns {
        let (mut ck, _, mut got) = handshake13_on(&mut f, &s, stream);
        for (lose, bytes) in storm(&mut ck, losses) {
            if lose {
                got.extend(feed(
                    &mut f,
                    Event::Gap {
                        stream,
                        src: addr(5000),
                        dst: addr(9093),
                        kind: crate::tcp::GapKind::Lost(bytes.len() as u64),
                        at: At::default(),
                    },
                ));
            } else {
                got.extend(feed(&mut f, data(stream, 5000, 9093, &bytes)));
            }
        }
        problems.extend(got.into_iter().filter_map(|g| match g {
            Got::Notice(p) => Some(p),
            _ => None,
        }));
    }
    let spent = limits.max_search_total - f.search_left.get();
    (spent, problems)
}

#[test]
fn the_search_after_losses_is_bounded_per_connection_and_in_total() {
    // Unbounded, each loss costs 6 records × 513 trials × 16 KB: 48 MB; one connection of
    // 8 losses would cost 400 MB of AES-GCM.
    let per = 4 * 1024 * 1024;
    let limits = Limits {
        max_search: per,
        max_search_total: u64::MAX / 2,
    };
    let (spent, problems) = run_storm(limits, 8, 1);
    assert!(spent <= per, "{spent}");
    assert!(
        problems.contains(&Problem::GaveUp {
            why: GiveUp::Connection
        }),
        "{problems:?}"
    );
    // Many connections: the total stops them all.
    let limits = Limits {
        max_search: per,
        max_search_total: 3 * per,
    };
    let (spent, problems) = run_storm(limits, 4, 10);
    assert!(spent <= 3 * per, "{spent}");
    let total = problems
        .iter()
        .filter(|p| **p == Problem::GaveUp { why: GiveUp::Total })
        .count();
    assert!(total >= 6, "{problems:?}");
    // An honest loss (no fakes) costs a few trials and resumes, within any budget.
    let limits = Limits {
        max_search: 64 * 1024,
        max_search_total: 64 * 1024,
    };
    let s = Session13::new(0x1301);
    let mut f = TlsFilter::with_limits(Arc::new(s.keylog()), limits);
    let (mut ck, _, _) = handshake13(&mut f, &s);
    let lost = ck.seal(APPLICATION_DATA, &[0; 3000]);
    let got = feed(
        &mut f,
        Event::Gap {
            stream: 7,
            src: addr(5000),
            dst: addr(9093),
            kind: crate::tcp::GapKind::Lost(lost.len() as u64),
            at: At::default(),
        },
    );
    assert!(matches!(
        got[..],
        [Got::Notice(Problem::Lost { .. }), Got::Gap(_)]
    ));
    let mut next = ck.seal(APPLICATION_DATA, b"next");
    next.extend(ck.seal(APPLICATION_DATA, b"and next"));
    let got = feed(&mut f, data(7, 5000, 9093, &next));
    assert!(
        matches!(&got[..], [Got::Notice(Problem::Resumed { .. }), Got::Data(_, d), Got::Data(..)] if d == b"next"),
        "{got:?}"
    );
}

#[test]
fn key_log_files_that_are_not_key_logs_are_refused_and_gaps_are_told() {
    let mut k = KeyLog::default();
    let err = k
        .add_file(
            "capture.pcap",
            b"\xd4\xc3\xb2\xa1\x02\x00\x04\x00\n\x00\x01",
        )
        .unwrap_err();
    assert!(
        err.contains("--keylog capture.pcap: not a TLS key log"),
        "{err}"
    );
    assert!(err.contains("line 1 "), "{err}");
    let r = "ab".repeat(32);
    let text = format!(
        "# keys\nCLIENT_RANDOM {r} {}\nhello there\n",
        "11".repeat(48)
    );
    let w = k.add_file("mixed.keys", text.as_bytes()).unwrap();
    assert_eq!(
        w,
        ["--keylog mixed.keys: 1 line is not a key log line, skipped (line 3)"]
    );
    let w = KeyLog::default().add_file("empty.keys", b"").unwrap();
    assert!(
        w[0].contains("holds no TLS secret kdissect reads (it is empty)"),
        "{w:?}"
    );
}

#[test]
fn key_log_caps_are_told_and_the_connection_says_its_random_may_be_left_out() {
    let mut k = KeyLog::default();
    let mut text = String::new();
    for i in 0..=keylog::MAX_ENTRIES {
        let mut r = [0u8; 32];
        r[..8].copy_from_slice(&(i as u64).to_be_bytes());
        text.push_str(&format!(
            "CLIENT_RANDOM {} {}\n",
            hex::encode(r),
            "22".repeat(48)
        ));
    }
    let w = k.add_file("big.keys", text.as_bytes()).unwrap();
    assert!(w.is_empty(), "{w:?}");
    let cap = k.cap_warning().unwrap();
    assert!(
        cap.contains("more than 100000 client randoms") && cap.contains("1 line past it"),
        "{cap}"
    );
    // A connection whose random is not kept says why it may be missing.
    let s = Session13::new(0x1301);
    let mut f = TlsFilter::with_keys(Arc::new(k));
    let (ch, sh) = s.hellos();
    feed(&mut f, data(7, 5000, 9093, &ch));
    feed(&mut f, data(7, 9093, 5000, &sh));
    assert_eq!(only_conn(feed(&mut f, close(7))).keys, Keys::NotKept);
    // A key log cut at its byte limit says so.
    let mut big = vec![b'#'; keylog::MAX_KEYLOG_BYTES + 10];
    big[keylog::MAX_KEYLOG_BYTES + 5] = b'\n';
    let w = KeyLog::default().add_file("huge.keys", &big).unwrap();
    assert!(w[0].contains("only its first 64 MiB were read"), "{w:?}");
}
