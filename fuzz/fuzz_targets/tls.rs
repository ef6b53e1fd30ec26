//! The TLS layer: byte streams of a TLS connection into `TlsFilter`, its plaintext into a Kafka
//! `Tracker`.
//!
//! The first byte chooses how the input is read. Even: the rest is a sequence of pieces for a
//! connection whose key log is known, each `dir` (bit 0: broker → client; bit 1: a gap before
//! it; bit 2: the connection closes after it), `len` (u8), bytes, fed as they are (hostile
//! record framing, hellos, ciphertext). Odd: a valid TLS 1.3 handshake with those secrets is
//! made first, and each piece's bytes are sealed into records (bit 3 of `dir`: as a
//! handshake record, a KeyUpdate when it is one byte; bit 4: the record's tag is damaged;
//! bits 5-7 split the record across segments), so that the fuzzer reaches decrypted records,
//! losses inside them and the Kafka layer behind.
#![no_main]

use kdissect::kafka::stream::{Config, Notice, Record, Sink, Tracker};
use kdissect::tcp::{At, Event, GapKind};
use kdissect::tls::crypto::{self, DirKeys};
use kdissect::tls::keylog::KeyLog;
use kdissect::tls::{Out, TlsFilter};
use libfuzzer_sys::fuzz_target;
use std::net::SocketAddr;
use std::sync::Arc;

#[derive(Default)]
struct Count(u64);

impl Sink for Count {
    fn message(&mut self, rec: &Record<'_>) {
        self.0 += 1;
        std::hint::black_box(rec.bytes.len());
    }
    fn notice(&mut self, _n: &Notice) {
        self.0 += 1;
    }
}

const RANDOM: [u8; 32] = [0x42; 32];
const SECRETS: [[u8; 32]; 4] = [[1; 32], [2; 32], [3; 32], [4; 32]];

fn keylog() -> KeyLog {
    let labels = [
        "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
        "SERVER_HANDSHAKE_TRAFFIC_SECRET",
        "CLIENT_TRAFFIC_SECRET_0",
        "SERVER_TRAFFIC_SECRET_0",
    ];
    let mut text = String::new();
    for (l, s) in labels.iter().zip(SECRETS) {
        text += &format!("{l} {} {}\n", hex(&RANDOM), hex(&s));
    }
    let mut k = KeyLog::default();
    k.add_text(text.as_bytes());
    k
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn record(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut r = vec![kind, 3, 3];
    r.extend_from_slice(&(body.len() as u16).to_be_bytes());
    r.extend_from_slice(body);
    r
}

fn hs(ty: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![ty];
    m.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    m.extend_from_slice(body);
    m
}

/// A hello with supported_versions TLS 1.3 and suite 0x1301.
fn hello(ty: u8, random: [u8; 32]) -> Vec<u8> {
    let mut m = vec![3, 3];
    m.extend_from_slice(&random);
    m.push(0);
    let server = ty == 2;
    if server {
        m.extend_from_slice(&[0x13, 0x01, 0]);
    } else {
        m.extend_from_slice(&[0, 2, 0x13, 0x01, 1, 0]);
    }
    let ext: &[u8] = if server { &[0, 43, 0, 2, 3, 4] } else { &[0, 43, 0, 3, 2, 3, 4] };
    m.extend_from_slice(&(ext.len() as u16).to_be_bytes());
    m.extend_from_slice(ext);
    record(22, &hs(ty, &m))
}

struct Conn {
    tls: TlsFilter,
    kafka: Tracker,
    sink: Count,
    client: SocketAddr,
    broker: SocketAddr,
    frame: u64,
    stream: u32,
}

impl Conn {
    fn event(&mut self, ev: Event<'_>) {
        let (kafka, sink) = (&mut self.kafka, &mut self.sink);
        self.tls.event(ev, &mut |o| match o {
            Out::Pass(ev) => kafka.event(ev, sink),
            Out::Connection(c) => {
                kafka.mark_tls(c.stream);
                std::hint::black_box(c.records);
            }
            Out::Notice(n) => {
                std::hint::black_box(n.at.frame);
            }
        });
    }

    fn ends(&self, to_client: bool) -> (SocketAddr, SocketAddr) {
        if to_client {
            (self.broker, self.client)
        } else {
            (self.client, self.broker)
        }
    }

    fn open(&mut self) {
        self.stream += 1;
        self.event(Event::Open {
            stream: self.stream,
            a: self.client,
            b: self.broker,
            syn_from: Some(self.client),
        });
    }

    fn send(&mut self, to_client: bool, bytes: &[u8]) {
        self.frame += 1;
        let (src, dst) = self.ends(to_client);
        let at = At { frame: self.frame, ts_nanos: self.frame as i64 * 1000 };
        self.event(Event::Data { stream: self.stream, src, dst, bytes, at });
    }

    fn gap(&mut self, to_client: bool, n: u64) {
        let (src, dst) = self.ends(to_client);
        let at = At { frame: self.frame, ts_nanos: 0 };
        self.event(Event::Gap { stream: self.stream, src, dst, kind: GapKind::Lost(n), at });
    }

    fn close(&mut self) {
        let at = At { frame: self.frame, ts_nanos: 0 };
        self.event(Event::Close { stream: self.stream, end: kdissect::tcp::EndKind::Fin, at });
    }
}

/// The handshake of a session with the known secrets; the keys each side seals with next.
fn handshake(c: &mut Conn) -> [DirKeys; 2] {
    let suite = crypto::suite(0x1301).expect("suite");
    let key = |i: usize| DirKeys::tls13(suite, &SECRETS[i]).expect("keys");
    c.send(false, &hello(1, RANDOM));
    c.send(true, &hello(2, [9; 32]));
    let mut sh = key(1);
    let mut flight = sh.seal(22, &hs(8, &[0, 0]));
    flight.extend(sh.seal(22, &hs(20, &[0; 32])));
    c.send(true, &flight);
    let mut ch = key(0);
    c.send(false, &ch.seal(22, &hs(20, &[0; 32])));
    [key(2), key(3)]
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, mut rest)) = data.split_first() else {
        return;
    };
    let mut c = Conn {
        tls: TlsFilter::with_keys(Arc::new(keylog())),
        kafka: Tracker::new(Config { ports: vec![9093], max_held_total: 16 * 1024, ..Config::default() }),
        sink: Count::default(),
        client: "10.0.0.1:40000".parse().expect("addr"),
        broker: "10.0.0.2:9093".parse().expect("addr"),
        frame: 0,
        stream: 0,
    };
    c.open();
    let sealed = mode & 1 == 1;
    let mut keys = sealed.then(|| handshake(&mut c));
    while let [dir, len, tail @ ..] = rest {
        let n = usize::from(*len).min(tail.len());
        let (piece, tail) = tail.split_at(n);
        rest = tail;
        let to_client = dir & 1 == 1;
        if dir & 2 != 0 {
            c.gap(to_client, u64::from(*len) + 1);
        }
        match keys.as_mut() {
            None => c.send(to_client, piece),
            Some(k) => {
                let side = &mut k[usize::from(to_client)];
                let handshake = dir & 8 != 0;
                let mut rec = if handshake && piece.len() == 1 {
                    let r = side.seal(22, &hs(24, piece));
                    if let Some(next) = side.updated() {
                        *side = next;
                    }
                    r
                } else {
                    side.seal(if handshake { 22 } else { 23 }, piece)
                };
                if dir & 16 != 0 {
                    if let Some(last) = rec.last_mut() {
                        *last ^= 1;
                    }
                }
                let cut = (usize::from(dir >> 5) * rec.len() / 8).min(rec.len());
                let (a, b) = rec.split_at(cut);
                c.send(to_client, a);
                c.send(to_client, b);
            }
        }
        if dir & 4 != 0 {
            c.close();
            c.open();
            keys = sealed.then(|| handshake(&mut c));
        }
    }
    c.close();
    c.kafka.finish(&mut c.sink);
    std::hint::black_box(c.sink.0);
});
