#![allow(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used)]
use super::hello::{EXT_ALPN, EXT_SERVER_NAME, EXT_SUPPORTED_VERSIONS};
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
    let mut m = vec![3, 3];
    m.extend_from_slice(&random);
    m.push(0); // session id
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
    let (ch, sh) = s.hellos();
    let mut got = feed(f, data(7, 5000, 9093, &ch));
    got.extend(feed(f, data(7, 9093, 5000, &sh)));
    let mut shk = s.keys(1);
    let mut flight = shk.seal(HANDSHAKE, &hs(8, &[0, 0]));
    flight.extend(shk.seal(HANDSHAKE, &hs(20, &[0xee; 32])));
    got.extend(feed(f, data(7, 9093, 5000, &flight)));
    let mut chk = s.keys(0);
    let mut cflight = record(CHANGE_CIPHER_SPEC, &[1]);
    cflight.extend(chk.seal(HANDSHAKE, &hs(20, &[0xdd; 32])));
    got.extend(feed(f, data(7, 5000, 9093, &cflight)));
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
        &hello_with(CLIENT_HELLO, &[], false, s.random, 0x002f),
    );
    let sh = record(
        HANDSHAKE,
        &hello_with(SERVER_HELLO, &[], true, [9; 32], 0x002f),
    );
    feed(&mut f, data(7, 5000, 9093, &ch));
    feed(&mut f, data(7, 9093, 5000, &sh));
    let info = only_conn(feed(&mut f, close(7)));
    assert_eq!(info.keys, Keys::UnsupportedSuite);
    assert_eq!(suite_name(0x002f), "cipher suite 0x002f");
}
