//! Builds a large, realistic capture from real samples: every copy replays the samples' TCP
//! connections with distinct client addresses and ports, shifted sequence numbers and shifted
//! timestamps, so that each copy is a valid connection of its own.
//!
//! cargo run --release --example make_big_capture -- OUT.pcap SIZE_MB SAMPLE.pcap[:N] [...]
//!
//! `SAMPLE.pcap:N` replays that sample N times in each round (default once), which sets the mix
//! of the output: a weight per sample, since the samples differ in size by 100 times.
//!
//! Samples must be classic little-endian pcaps of Ethernet/IPv4 traffic (the `kgen-*`,
//! `confluent-*` and `kafka-python-*` samples are). The output is never committed.

use std::fs::File;
use std::io::{BufWriter, Write};

struct Pkt {
    ts_us: u64,
    data: Vec<u8>,
    orig_len: u32,
}

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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!("usage: make_big_capture OUT.pcap SIZE_MB SAMPLE.pcap [SAMPLE.pcap ...]");
        std::process::exit(2);
    }
    let out_path = &args[1];
    let target: u64 = args[2].parse::<u64>().expect("SIZE_MB") << 20;
    let mut samples = Vec::new();
    // Indexes into `samples`, in the order of one round (a sample of weight N appears N times).
    let mut round = Vec::new();
    for s in &args[3..] {
        let (path, weight) = match s.rsplit_once(':') {
            Some((p, n)) if n.parse::<usize>().is_ok() => (p, n.parse::<usize>().unwrap_or(1)),
            _ => (s.as_str(), 1),
        };
        match read_pcap(path) {
            Ok(p) => samples.push(p),
            Err(e) => {
                eprintln!("make_big_capture: {e}");
                std::process::exit(2);
            }
        }
        round.extend(std::iter::repeat_n(samples.len() - 1, weight));
    }
    let mut w = BufWriter::with_capacity(1 << 20, File::create(out_path).expect("create output"));
    let mut header = Vec::new();
    header.extend(0xa1b2_c3d4u32.to_le_bytes());
    header.extend(2u16.to_le_bytes());
    header.extend(4u16.to_le_bytes());
    header.extend([0u8; 8]);
    header.extend(262_144u32.to_le_bytes());
    header.extend(1u32.to_le_bytes());
    w.write_all(&header).expect("write");
    let mut written = header.len() as u64;
    let mut clock = samples.iter().flatten().map(|p| p.ts_us).min().unwrap_or(0);
    let mut copy: u32 = 0;
    let mut buf = Vec::new();
    'outer: loop {
        for sample in round.iter().map(|&i| &samples[i]) {
            let t0 = sample.first().map_or(0, |p| p.ts_us);
            let span = sample.last().map_or(0, |p| p.ts_us) - t0 + 1000;
            // Each copy gets its own client address 10.x.y.z and shifts sequence numbers.
            let client = [10u8, (copy >> 16) as u8, (copy >> 8) as u8, copy as u8];
            let seq_shift = copy.wrapping_mul(2_654_435_761);
            for p in sample {
                buf.clear();
                buf.extend_from_slice(&p.data);
                // Ethernet (14) + IPv4 (ihl) + TCP.
                if buf.len() >= 34 && buf[12] == 0x08 && buf[13] == 0x00 {
                    let ihl = usize::from(buf[14] & 0x0f) * 4;
                    let tcp = 14 + ihl;
                    if buf[23] == 6 && buf.len() >= tcp + 20 {
                        let sport = u16::from_be_bytes([buf[tcp], buf[tcp + 1]]);
                        let dport = u16::from_be_bytes([buf[tcp + 2], buf[tcp + 3]]);
                        let from_client = dport == 9092 || (sport != 9092 && sport > dport);
                        // The client side's address becomes the copy's; the broker's stays.
                        let addr_at = if from_client { 26 } else { 30 };
                        buf[addr_at..addr_at + 4].copy_from_slice(&client);
                        let shift = |v: u32| v.wrapping_add(seq_shift);
                        let seq = u32::from_be_bytes([
                            buf[tcp + 4],
                            buf[tcp + 5],
                            buf[tcp + 6],
                            buf[tcp + 7],
                        ]);
                        let ack = u32::from_be_bytes([
                            buf[tcp + 8],
                            buf[tcp + 9],
                            buf[tcp + 10],
                            buf[tcp + 11],
                        ]);
                        buf[tcp + 4..tcp + 8].copy_from_slice(&shift(seq).to_be_bytes());
                        if ack != 0 {
                            buf[tcp + 8..tcp + 12].copy_from_slice(&shift(ack).to_be_bytes());
                        }
                    }
                }
                let ts = clock + (p.ts_us - t0);
                let mut rec = [0u8; 16];
                rec[0..4].copy_from_slice(&((ts / 1_000_000) as u32).to_le_bytes());
                rec[4..8].copy_from_slice(&((ts % 1_000_000) as u32).to_le_bytes());
                rec[8..12].copy_from_slice(&(buf.len() as u32).to_le_bytes());
                rec[12..16].copy_from_slice(&p.orig_len.to_le_bytes());
                w.write_all(&rec).expect("write");
                w.write_all(&buf).expect("write");
                written += 16 + buf.len() as u64;
            }
            clock += span;
            copy = copy.wrapping_add(1);
            if written >= target {
                break 'outer;
            }
        }
    }
    w.flush().expect("flush");
    eprintln!("make_big_capture: wrote {out_path}: {written} bytes, {copy} copies of the samples");
}
