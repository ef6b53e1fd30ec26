//! Builds a large capture from real samples in which thousands of TCP connections are open at
//! once (the `wide` benchmark mix of scripts/make-big-capture): the samples' connections are
//! replayed one by one, each keeping its own packets' timing, while a window of OPEN of them is
//! kept running side by side. When one ends (its last packet written) the next starts, so after
//! a short ramp (one new connection every 100 µs) OPEN connections are open at every moment.
//!
//! cargo run --release --example make_concurrent_capture -- OUT.pcap SIZE_MB OPEN SAMPLE.pcap[:N] [...]
//!
//! `SAMPLE.pcap:N` replays that sample N times in each round (default once). Every replay of a
//! sample (a copy) gives its client side the address 10.x.y.z of its own and shifts sequence
//! numbers, so every copy's connections are connections of their own; the broker's side keeps
//! its address and port. Within a copy the connections start in the order they started in the
//! sample, but not at the same distance from each other: a connection starts when the window
//! has room. Packets are written in timestamp order. The output stops at SIZE_MB, cutting the
//! connections then open (their requests stay unanswered).
//!
//! Samples must be classic little-endian microsecond pcaps of Ethernet/IPv4 traffic; packets
//! that are not TCP over IPv4 are left out. The output is never committed.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fs::File;
use std::io::{BufWriter, Write};

struct Pkt {
    ts_us: u64,
    data: Vec<u8>,
    orig_len: u32,
}

/// One TCP connection of a sample: its packets' indexes, in capture order.
struct Conn {
    pkts: Vec<usize>,
}

struct Sample {
    pkts: Vec<Pkt>,
    conns: Vec<Conn>,
}

/// A connection being replayed: which one, from which packet, shifted how.
struct Live {
    sample: usize,
    conn: usize,
    next: usize,
    start_us: u64,
    copy: u32,
}

const RAMP_US: u64 = 20;

fn read_pcap(path: &str) -> Result<Vec<Pkt>, String> {
    let b = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    if b.get(0..4) != Some(&[0xd4, 0xc3, 0xb2, 0xa1][..])
        || b.get(20..24) != Some(&[1, 0, 0, 0][..])
    {
        return Err(format!(
            "{path}: not a little-endian microsecond Ethernet pcap"
        ));
    }
    let mut out = Vec::new();
    let mut p = 24;
    let u32le = |s: &[u8]| u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
    while p + 16 <= b.len() {
        let h = &b[p..p + 16];
        let (sec, usec, caplen, orig) = (
            u32le(&h[0..4]),
            u32le(&h[4..8]),
            u32le(&h[8..12]) as usize,
            u32le(&h[12..16]),
        );
        let data = b
            .get(p + 16..p + 16 + caplen)
            .ok_or(format!("{path}: truncated"))?
            .to_vec();
        out.push(Pkt {
            ts_us: u64::from(sec) * 1_000_000 + u64::from(usec),
            data,
            orig_len: orig,
        });
        p += 16 + caplen;
    }
    Ok(out)
}

/// Where the TCP header starts, for Ethernet + IPv4 + TCP packets.
fn tcp_offset(d: &[u8]) -> Option<usize> {
    if d.len() < 34 || d[12] != 0x08 || d[13] != 0x00 || d[23] != 6 {
        return None;
    }
    let tcp = 14 + usize::from(d[14] & 0x0f) * 4;
    (d.len() >= tcp + 20).then_some(tcp)
}

/// The client side of a packet is the side away from the broker port (9092 and the cluster's
/// other ports are below the clients' ephemeral ones), as in make_big_capture.
fn from_client(d: &[u8], tcp: usize) -> bool {
    let sport = u16::from_be_bytes([d[tcp], d[tcp + 1]]);
    let dport = u16::from_be_bytes([d[tcp + 2], d[tcp + 3]]);
    dport == 9092 || (sport != 9092 && sport > dport)
}

/// Splits a sample into its connections (by client address and port, broker address and port),
/// in the order of their first packets.
fn connections(pkts: &[Pkt]) -> Vec<Conn> {
    let mut by_key: BTreeMap<[u8; 12], usize> = BTreeMap::new();
    let mut conns: Vec<Conn> = Vec::new();
    for (i, p) in pkts.iter().enumerate() {
        let Some(tcp) = tcp_offset(&p.data) else {
            continue;
        };
        let d = &p.data;
        let (c_ip, s_ip, c_port, s_port) = if from_client(d, tcp) {
            (26, 30, tcp, tcp + 2)
        } else {
            (30, 26, tcp + 2, tcp)
        };
        let mut key = [0u8; 12];
        key[0..4].copy_from_slice(&d[c_ip..c_ip + 4]);
        key[4..8].copy_from_slice(&d[s_ip..s_ip + 4]);
        key[8..10].copy_from_slice(&d[c_port..c_port + 2]);
        key[10..12].copy_from_slice(&d[s_port..s_port + 2]);
        let n = conns.len();
        let at = *by_key.entry(key).or_insert(n);
        if at == n {
            conns.push(Conn { pkts: Vec::new() });
        }
        conns[at].pkts.push(i);
    }
    conns
}

/// The packet rewritten for its copy: client address, shifted sequence and ack numbers.
fn rewrite(buf: &mut Vec<u8>, p: &Pkt, copy: u32) {
    buf.clear();
    buf.extend_from_slice(&p.data);
    let Some(tcp) = tcp_offset(buf) else {
        return;
    };
    let client = [10u8, (copy >> 16) as u8, (copy >> 8) as u8, copy as u8];
    let addr_at = if from_client(buf, tcp) { 26 } else { 30 };
    buf[addr_at..addr_at + 4].copy_from_slice(&client);
    let shift = copy.wrapping_mul(2_654_435_761);
    for (at, skip_zero) in [(tcp + 4, false), (tcp + 8, true)] {
        let v = u32::from_be_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]);
        if !(skip_zero && v == 0) {
            buf[at..at + 4].copy_from_slice(&v.wrapping_add(shift).to_be_bytes());
        }
    }
}

fn pcap_header() -> Vec<u8> {
    let mut header = Vec::new();
    header.extend(0xa1b2_c3d4u32.to_le_bytes());
    header.extend(2u16.to_le_bytes());
    header.extend(4u16.to_le_bytes());
    header.extend([0u8; 8]);
    header.extend(262_144u32.to_le_bytes());
    header.extend(1u32.to_le_bytes());
    header
}

fn usage() -> ! {
    eprintln!("usage: make_concurrent_capture OUT.pcap SIZE_MB OPEN SAMPLE.pcap[:N] [...]");
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 5 {
        usage();
    }
    let out_path = &args[1];
    let target: u64 = args[2].parse::<u64>().unwrap_or_else(|_| usage()) << 20;
    let open: usize = args[3].parse().unwrap_or_else(|_| usage());
    let mut samples = Vec::new();
    // Indexes into `samples`, in the order of one round (a sample of weight N appears N times).
    let mut round = Vec::new();
    for s in &args[4..] {
        let (path, weight) = match s.rsplit_once(':') {
            Some((p, n)) if n.parse::<usize>().is_ok() => (p, n.parse::<usize>().unwrap_or(1)),
            _ => (s.as_str(), 1),
        };
        let pkts = read_pcap(path).unwrap_or_else(|e| {
            eprintln!("make_concurrent_capture: {e}");
            std::process::exit(2);
        });
        let conns = connections(&pkts);
        samples.push(Sample { pkts, conns });
        round.extend(std::iter::repeat_n(samples.len() - 1, weight));
    }
    if samples.iter().all(|s| s.conns.is_empty()) {
        eprintln!("make_concurrent_capture: no TCP connection in the samples");
        std::process::exit(2);
    }
    // The connections to start, in order: round after round, each copy's in sample order.
    let mut queue = round
        .iter()
        .cycle()
        .enumerate()
        .flat_map(|(copy, &s)| (0..samples[s].conns.len()).map(move |c| (copy as u32, s, c)));
    let mut w = BufWriter::with_capacity(1 << 20, File::create(out_path).expect("create output"));
    let header = pcap_header();
    w.write_all(&header).expect("write");
    let mut written = header.len() as u64;
    let mut now = samples
        .iter()
        .flat_map(|s| &s.pkts)
        .map(|p| p.ts_us)
        .min()
        .unwrap_or(0);
    let mut next_start = now;
    let mut live: Vec<Live> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    // (timestamp of the slot's next packet, order of arrival, slot)
    let mut heap: BinaryHeap<Reverse<(u64, u64, usize)>> = BinaryHeap::new();
    let (mut arrivals, mut open_now, mut max_open, mut started) = (0u64, 0usize, 0usize, 0u64);
    let mut buf = Vec::new();
    while written < target {
        // Fill the window; during the ramp new connections start RAMP_US apart.
        while open_now < open {
            let Some((copy, sample, conn)) = queue.next() else {
                break;
            };
            if samples[sample].conns[conn].pkts.is_empty() {
                continue;
            }
            let start_us = next_start.max(now);
            next_start = start_us + RAMP_US;
            let l = Live {
                sample,
                conn,
                next: 0,
                start_us,
                copy,
            };
            let slot = match free.pop() {
                Some(i) => {
                    live[i] = l;
                    i
                }
                None => {
                    live.push(l);
                    live.len() - 1
                }
            };
            heap.push(Reverse((start_us, arrivals, slot)));
            arrivals += 1;
            open_now += 1;
            started += 1;
            max_open = max_open.max(open_now);
        }
        let Some(Reverse((ts, _, slot))) = heap.pop() else {
            break;
        };
        now = ts;
        let l = &mut live[slot];
        let s = &samples[l.sample];
        let conn = &s.conns[l.conn];
        let p = &s.pkts[conn.pkts[l.next]];
        rewrite(&mut buf, p, l.copy);
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&((ts / 1_000_000) as u32).to_le_bytes());
        rec[4..8].copy_from_slice(&((ts % 1_000_000) as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&(buf.len() as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&p.orig_len.to_le_bytes());
        w.write_all(&rec).expect("write");
        w.write_all(&buf).expect("write");
        written += 16 + buf.len() as u64;
        l.next += 1;
        if l.next < conn.pkts.len() {
            let t0 = s.pkts[conn.pkts[0]].ts_us;
            let t = l.start_us + (s.pkts[conn.pkts[l.next]].ts_us - t0);
            heap.push(Reverse((t, arrivals, slot)));
            arrivals += 1;
        } else {
            open_now -= 1;
            free.push(slot);
        }
    }
    w.flush().expect("flush");
    eprintln!(
        "make_concurrent_capture: wrote {out_path}: {written} bytes, {started} connections \
         started, at most {max_open} replayed at once, {open_now} cut by the size"
    );
}
