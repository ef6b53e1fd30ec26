//! tls_hostile: captures made to attack kdissect's TLS stage (issue 35, item 20), with the key
//! logs that decrypt them, for docs/robustness.md's measurements and by hand:
//!
//! ```text
//! cargo run --release --example tls_hostile -- DIR [--scale small|full]
//! ```
//!
//! writes into DIR:
//!
//! - `tls-resync-storm.pcap` (+ `.keys`): TLS 1.3 connections whose client loses a record
//!   again and again, each loss followed by six records that look whole (a header, 16 000
//!   bytes, another header) but do not authenticate, then by records that do: every loss
//!   costs the search thousands of 16 KB trial decryptions. Full scale: one connection of
//!   about 33 MB and 40 more of 1 MB (the finding: 115 s for the first alone).
//! - `tls-midstream.pcap`: a TLS connection picked up mid-stream (no SYN, no handshake):
//!   ciphertext records of Kafka-like sizes both ways, the first read starting inside a
//!   16 KB record.
//! - `tls-big-hello.pcap` (+ `.keys`): a legal 20 KB ClientHello (a padding extension) in two
//!   records, then a TLS 1.3 session that decrypts to an ApiVersions exchange.
//! - `tls-second-hello.pcap` (+ `.keys`): after the handshake the broker sends an encrypted
//!   ServerHello (a re-key attempt), then more records.
//!
//! The captures are classic pcap, Ethernet, IPv4, TCP (checksums zero, as kdissect does not
//! check them), client 10.0.0.1, broker 10.0.0.2:9093. The same arguments give the same bytes.

use kdissect::tls::crypto::{suite, DirKeys};
use std::io::Write;

const HANDSHAKE: u8 = 22;
const APPLICATION_DATA: u8 = 23;
const CHANGE_CIPHER_SPEC: u8 = 20;

/// A pcap being written: packets of TCP connections with their sequence numbers.
struct Pcap {
    out: Vec<u8>,
    ts: u64,
}

/// One TCP connection's state: ports and the next sequence number each way.
struct Tcp {
    cport: u16,
    seq: [u32; 2],
}

impl Pcap {
    fn new() -> Pcap {
        // Magic, version 2.4, zone, accuracy, snap length, Ethernet.
        let mut out = 0xa1b2_c3d4_u32.to_le_bytes().to_vec();
        out.extend_from_slice(&[2, 0, 4, 0]);
        for v in [0_u32, 0, 65535, 1] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        Pcap {
            out,
            ts: 1_700_000_000_000_000,
        }
    }

    /// One segment: `from_client`, TCP `flags`, `payload` at sequence number `seq`.
    fn segment(
        &mut self,
        c: &Tcp,
        from_client: bool,
        flags: u8,
        seq: u32,
        ack: u32,
        payload: &[u8],
    ) {
        let (src, dst, sport, dport) = if from_client {
            ([10, 0, 0, 1], [10, 0, 0, 2], c.cport, 9093)
        } else {
            ([10, 0, 0, 2], [10, 0, 0, 1], 9093, c.cport)
        };
        let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 8, 0];
        let total = 40 + payload.len();
        f.extend_from_slice(&[
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            0,
            0x40,
            0,
            64,
            6,
            0,
            0,
        ]);
        f.extend_from_slice(&src);
        f.extend_from_slice(&dst);
        f.extend_from_slice(&sport.to_be_bytes());
        f.extend_from_slice(&dport.to_be_bytes());
        f.extend_from_slice(&seq.to_be_bytes());
        f.extend_from_slice(&ack.to_be_bytes());
        f.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
        f.extend_from_slice(payload);
        self.ts += 50;
        self.out
            .extend_from_slice(&((self.ts / 1_000_000) as u32).to_le_bytes());
        self.out
            .extend_from_slice(&((self.ts % 1_000_000) as u32).to_le_bytes());
        self.out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        self.out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        self.out.extend_from_slice(&f);
    }

    fn open(&mut self, cport: u16) -> Tcp {
        let c = Tcp {
            cport,
            seq: [1000, 5000],
        };
        self.segment(&c, true, 0x02, 999, 0, &[]);
        self.segment(&c, false, 0x12, 4999, 1000, &[]);
        self.segment(&c, true, 0x10, 1000, 5000, &[]);
        c
    }

    /// Bytes one way, in segments of 1448; `lost`: the sequence numbers move on but no packet
    /// is written (the capture missed them), and the other side acknowledges past them.
    fn send(&mut self, c: &mut Tcp, from_client: bool, bytes: &[u8], lost: bool) {
        let (me, peer) = if from_client { (0, 1) } else { (1, 0) };
        for chunk in bytes.chunks(1448) {
            if !lost {
                self.segment(c, from_client, 0x18, c.seq[me], c.seq[peer], chunk);
            }
            c.seq[me] = c.seq[me].wrapping_add(chunk.len() as u32);
        }
        // The receiver's acknowledgement: a hole before it was lost for good.
        self.segment(c, !from_client, 0x10, c.seq[peer], c.seq[me], &[]);
    }

    fn close(&mut self, c: &Tcp) {
        self.segment(c, true, 0x11, c.seq[0], c.seq[1], &[]);
        self.segment(c, false, 0x11, c.seq[1], c.seq[0] + 1, &[]);
        self.segment(c, true, 0x10, c.seq[0] + 1, c.seq[1] + 1, &[]);
    }
}

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

/// A hello handshake message (1 ClientHello, 2 ServerHello) for TLS_AES_128_GCM_SHA256.
fn hello(kind: u8, random: [u8; 32], exts: &[u8]) -> Vec<u8> {
    let mut m = vec![3, 3];
    m.extend_from_slice(&random);
    m.push(0);
    if kind == 1 {
        m.extend_from_slice(&[0, 2, 0x13, 0x01, 1, 0]);
    } else {
        m.extend_from_slice(&[0x13, 0x01, 0]);
    }
    m.extend_from_slice(&(exts.len() as u16).to_be_bytes());
    m.extend_from_slice(exts);
    hs(kind, &m)
}

fn hs(ty: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![ty];
    m.extend_from_slice(&(body.len() as u32).to_be_bytes()[1..]);
    m.extend_from_slice(body);
    m
}

/// Pseudo-random bytes standing for ciphertext.
fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

/// A TLS 1.3 session's secrets, by connection number.
fn secrets(conn: u16) -> ([u8; 32], [[u8; 32]; 4]) {
    let mut random = [0x5a; 32];
    random[..2].copy_from_slice(&conn.to_be_bytes());
    let s = |i: u8| {
        let mut x = [i; 32];
        x[..2].copy_from_slice(&conn.to_be_bytes());
        x
    };
    (random, [s(1), s(2), s(3), s(4)])
}

fn keylog_lines(conn: u16) -> String {
    let (random, s) = secrets(conn);
    let labels = [
        "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
        "SERVER_HANDSHAKE_TRAFFIC_SECRET",
        "CLIENT_TRAFFIC_SECRET_0",
        "SERVER_TRAFFIC_SECRET_0",
    ];
    labels
        .iter()
        .zip(s)
        .map(|(l, x)| format!("{l} {} {}\n", hex(&random), hex(&x)))
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The handshake of connection `conn` (the ClientHello given), and its application keys
/// (client's, server's).
fn handshake(p: &mut Pcap, c: &mut Tcp, conn: u16, client_hello: Vec<u8>) -> (DirKeys, DirKeys) {
    let (_, s) = secrets(conn);
    let suite = suite(0x1301).expect("suite");
    let key = |x: &[u8; 32]| DirKeys::tls13(suite, x).expect("keys");
    p.send(c, true, &client_hello, false);
    let mut sh = record(HANDSHAKE, &hello(2, [9; 32], &ext(43, &[3, 4])));
    let mut shk = key(&s[1]);
    sh.extend(shk.seal(HANDSHAKE, &hs(8, &[0, 0])));
    sh.extend(shk.seal(HANDSHAKE, &hs(20, &[0xee; 32])));
    p.send(c, false, &sh, false);
    let mut chk = key(&s[0]);
    let mut fin = record(CHANGE_CIPHER_SPEC, &[1]);
    fin.extend(chk.seal(HANDSHAKE, &hs(20, &[0xdd; 32])));
    p.send(c, true, &fin, false);
    (key(&s[2]), key(&s[3]))
}

fn client_hello(conn: u16) -> Vec<u8> {
    let (random, _) = secrets(conn);
    record(HANDSHAKE, &hello(1, random, &ext(43, &[2, 3, 4])))
}

/// An ApiVersions v3 request (size prefix included).
fn api_versions() -> Vec<u8> {
    let mut body = vec![0, 18, 0, 3, 0, 0, 0, 1, 0, 7];
    body.extend_from_slice(b"hostile");
    // Header tags, then the compact strings ClientSoftwareName and ClientSoftwareVersion.
    body.extend_from_slice(&[0, 6]);
    body.extend_from_slice(b"kdtls");
    body.extend_from_slice(&[2, b'1', 0]);
    let mut f = (body.len() as u32).to_be_bytes().to_vec();
    f.extend(body);
    f
}

fn storm(p: &mut Pcap, keys: &mut String, conn: u16, losses: usize) {
    let mut c = p.open(40000 + conn);
    let (mut ck, _) = handshake(p, &mut c, conn, client_hello(conn));
    keys.push_str(&keylog_lines(conn));
    for i in 0..losses {
        let lost = ck.seal(APPLICATION_DATA, &api_versions());
        p.send(&mut c, true, &lost, true);
        let mut after = Vec::new();
        for j in 0..6 {
            after.extend(record(
                APPLICATION_DATA,
                &noise(16_000, (conn as u64) << 32 | (i * 8 + j) as u64),
            ));
        }
        after.extend(ck.seal(APPLICATION_DATA, &api_versions()));
        after.extend(ck.seal(APPLICATION_DATA, &api_versions()));
        p.send(&mut c, true, &after, false);
    }
    p.close(&c);
}

fn midstream(p: &mut Pcap, records: usize) {
    let mut c = Tcp {
        cport: 45000,
        seq: [77_000, 99_000],
    };
    // The first server bytes are the last 9000 of a 16 KB record.
    p.send(&mut c, false, &noise(9_000, 1), false);
    for i in 0..records {
        let req = record(
            APPLICATION_DATA,
            &noise(60 + (i * 37) % 400, 2 * i as u64 + 2),
        );
        p.send(&mut c, true, &req, false);
        let len = if i % 5 == 4 {
            16_384
        } else {
            80 + (i * 53) % 900
        };
        p.send(
            &mut c,
            false,
            &record(APPLICATION_DATA, &noise(len, 2 * i as u64 + 3)),
            false,
        );
    }
    p.close(&c);
}

fn big_hello(p: &mut Pcap, keys: &mut String) {
    let conn = 7;
    let (random, _) = secrets(conn);
    let mut exts = ext(21, &vec![0; 20_000]);
    exts.extend(ext(43, &[2, 3, 4]));
    let msg = hello(1, random, &exts);
    let mut ch = record(HANDSHAKE, &msg[..16_000]);
    ch.extend(record(HANDSHAKE, &msg[16_000..]));
    let mut c = p.open(41000);
    let (mut ck, mut sk) = handshake(p, &mut c, conn, ch);
    keys.push_str(&keylog_lines(conn));
    p.send(
        &mut c,
        true,
        &ck.seal(APPLICATION_DATA, &api_versions()),
        false,
    );
    // An ApiVersions v3 answer: corr 1, no error, no API, throttle 0, no tags.
    let answer = [0, 0, 0, 12, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0];
    p.send(&mut c, false, &sk.seal(APPLICATION_DATA, &answer), false);
    p.close(&c);
}

fn second_hello(p: &mut Pcap, keys: &mut String) {
    let conn = 8;
    let mut c = p.open(42000);
    let (mut ck, mut sk) = handshake(p, &mut c, conn, client_hello(conn));
    keys.push_str(&keylog_lines(conn));
    p.send(
        &mut c,
        true,
        &ck.seal(APPLICATION_DATA, &api_versions()),
        false,
    );
    let sh = hello(2, [3; 32], &ext(43, &[3, 4]));
    p.send(&mut c, false, &sk.seal(HANDSHAKE, &sh), false);
    for _ in 0..5 {
        p.send(
            &mut c,
            true,
            &ck.seal(APPLICATION_DATA, &api_versions()),
            false,
        );
    }
    p.close(&c);
}

fn write(dir: &str, name: &str, bytes: &[u8]) {
    let path = format!("{dir}/{name}");
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(bytes))
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    println!("{path}: {} bytes", bytes.len());
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: tls_hostile DIR [--scale small|full]");
        std::process::exit(2);
    };
    let full = args.iter().any(|a| a == "full");
    std::fs::create_dir_all(dir).expect("directory");

    let (mut p, mut keys) = (Pcap::new(), String::new());
    // Full: one connection of 33 MB (300 losses of about 110 KB), then 40 of 1 MB.
    let (first, others, each) = if full { (300, 40, 9) } else { (9, 4, 2) };
    storm(&mut p, &mut keys, 0, first);
    for conn in 1..=others {
        storm(&mut p, &mut keys, conn, each);
    }
    write(dir, "tls-resync-storm.pcap", &p.out);
    write(dir, "tls-resync-storm.keys", keys.as_bytes());

    let mut p = Pcap::new();
    midstream(&mut p, if full { 2000 } else { 60 });
    write(dir, "tls-midstream.pcap", &p.out);

    let (mut p, mut keys) = (Pcap::new(), String::new());
    big_hello(&mut p, &mut keys);
    write(dir, "tls-big-hello.pcap", &p.out);
    write(dir, "tls-big-hello.keys", keys.as_bytes());

    let (mut p, mut keys) = (Pcap::new(), String::new());
    second_hello(&mut p, &mut keys);
    write(dir, "tls-second-hello.pcap", &p.out);
    write(dir, "tls-second-hello.keys", keys.as_bytes());
}
