//! A malformed corpus made on the fly from the real samples: bit flips, truncations, impossible
//! size prefixes, broken batch CRCs, wrong codecs, decompression bombs, responses decoded with
//! the wrong version. Nothing may panic, and every message the damage does not touch must
//! decode exactly as in the clean capture.

mod common;

use common::collect::{run_bytes, Collected, Row};
use kdissect::kafka::schema::{registry, Direction};
use kdissect::kafka::DecodeOptions;
use kdissect::kafka::{decode_request, decode_response};
use kdissect::pipeline::Options;
use std::path::PathBuf;

fn sample(name: &str) -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("samples")
            .join(name),
    )
    .expect("sample")
}

/// Packets of a classic little-endian pcap: (record offset, data offset, data length).
fn packets(pcap: &[u8]) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut p = 24;
    while p + 16 <= pcap.len() {
        let caplen = u32::from_le_bytes(pcap[p + 8..p + 12].try_into().expect("4 bytes")) as usize;
        out.push((p, p + 16, caplen));
        p += 16 + caplen;
    }
    out
}

/// Offset and length of the TCP payload inside an Ethernet packet.
fn tcp_payload(pkt: &[u8]) -> Option<(usize, usize)> {
    let s = etherparse::SlicedPacket::from_ethernet(pkt).ok()?;
    let etherparse::TransportSlice::Tcp(t) = s.transport? else {
        return None;
    };
    let payload = t.payload();
    if payload.is_empty() {
        return None;
    }
    let off = payload.as_ptr() as usize - pkt.as_ptr() as usize;
    Some((off, payload.len()))
}

/// A deterministic pseudo-random sequence (xorshift), so failures reproduce.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Rows of messages completed before `frame`, and of messages in other streams.
fn untouched(c: &Collected, stream: u32, frame: u64) -> Vec<Row> {
    c.rows
        .iter()
        .zip(&c.frames)
        .filter(|(r, f)| r.0 != stream || **f < frame)
        .map(|(r, _)| *r)
        .collect()
}

fn stream_of(c: &Collected, frame: u64) -> Option<u32> {
    // The stream a packet belongs to: that of the first message completed at or after it.
    c.rows
        .iter()
        .zip(&c.frames)
        .find(|(_, f)| **f >= frame)
        .map(|(r, _)| r.0)
}

#[test]
fn bit_flips_damage_only_their_stream_from_their_packet_on() {
    for name in [
        "kgen-all-versions.pcap",
        "confluent-produce-consume-zstd.pcap",
        "kafka-python-consumer-group.pcap",
    ] {
        let clean_bytes = sample(name);
        let (clean, _, _) = run_bytes(&clean_bytes, &Options::default());
        let pk = packets(&clean_bytes);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ name.len() as u64);
        let with_payload: Vec<(usize, (usize, usize, usize))> = pk
            .iter()
            .enumerate()
            .filter_map(|(i, p)| tcp_payload(&clean_bytes[p.1..p.1 + p.2]).map(|_| (i, *p)))
            .collect();
        for _ in 0..60 {
            let (i, (_, data, len)) =
                with_payload[(rng.next() % with_payload.len() as u64) as usize];
            let (poff, plen) = tcp_payload(&clean_bytes[data..data + len]).expect("payload");
            let at = data + poff + (rng.next() % plen as u64) as usize;
            let mut m = clean_bytes.clone();
            m[at] ^= 1 << (rng.next() % 8);
            let (got, _, err) = run_bytes(&m, &Options::default());
            assert!(err.is_none());
            let frame = i as u64 + 1;
            let Some(stream) = stream_of(&clean, frame) else {
                continue;
            };
            let want = untouched(&clean, stream, frame);
            let have: Vec<Row> = untouched(&got, stream, frame);
            assert_eq!(
                have, want,
                "{name}: flip at byte {at} (frame {frame}) changed messages it does not touch"
            );
        }
    }
}

#[test]
fn truncation_at_every_packet_boundary() {
    let clean_bytes = sample("kgen-all-versions.pcap");
    let (clean, _, _) = run_bytes(&clean_bytes, &Options::default());
    for (i, (rec, _, _)) in packets(&clean_bytes).iter().enumerate() {
        // Cut inside the record header and right at the record: both are a truncated file.
        for cut in [*rec, rec + 7] {
            let (got, h, err) = run_bytes(&clean_bytes[..cut], &Options::default());
            assert_eq!(h.packets, i as u64);
            if cut != *rec {
                assert!(err.expect("error").contains("truncated"));
            }
            // Every message completed before the cut is decoded as before (a frame the cut
            // ends inside is shown after them, partial).
            let frame = i as u64 + 1;
            let want: Vec<Row> = clean
                .rows
                .iter()
                .zip(&clean.frames)
                .filter(|(_, f)| **f < frame)
                .map(|(r, _)| *r)
                .collect();
            let have: Vec<Row> = got
                .rows
                .iter()
                .zip(&got.frames)
                .zip(&got.partial)
                .filter(|((_, f), partial)| **f < frame && !**partial)
                .map(|((r, _), _)| *r)
                .collect();
            assert_eq!(have, want, "cut at {cut}");
            assert!(got.partial.iter().filter(|p| **p).count() <= 1);
        }
    }
}

#[test]
fn impossible_size_prefixes() {
    let clean_bytes = sample("kgen-all-versions.pcap");
    let (clean, _, _) = run_bytes(&clean_bytes, &Options::default());
    let pk = packets(&clean_bytes);
    let mut tried = 0;
    for (i, (_, data, len)) in pk.iter().enumerate() {
        let Some((poff, plen)) = tcp_payload(&clean_bytes[*data..data + len]) else {
            continue;
        };
        let frame = i as u64 + 1;
        // Only packets that start a message that completes in this same packet.
        if plen < 8 || !clean.frames.contains(&frame) || tried >= 40 {
            continue;
        }
        tried += 1;
        for size in [0i32, -1, 0x7fff_ffff, i32::MIN, 3] {
            let mut m = clean_bytes.clone();
            let at = data + poff;
            m[at..at + 4].copy_from_slice(&size.to_be_bytes());
            let (got, _, err) = run_bytes(&m, &Options::default());
            assert!(err.is_none());
            let stream = stream_of(&clean, frame).expect("stream");
            assert_eq!(
                untouched(&got, stream, frame),
                untouched(&clean, stream, frame),
                "size {size} at frame {frame}"
            );
        }
    }
    assert!(tried > 20);
}

#[test]
fn every_response_decoded_with_every_other_version_stays_calm() {
    // Wrong versions are what a broker that answers in another layout produces.
    struct Frames(Vec<(Vec<u8>, i16, i16)>);
    impl kdissect::kafka::stream::Sink for Frames {
        fn message(&mut self, rec: &kdissect::kafka::stream::Record<'_>) {
            if let (Some(k), Some(v)) = (rec.msg.api_key, rec.msg.api_version) {
                self.0.push((rec.bytes.to_vec(), k, v));
            }
        }
        fn notice(&mut self, _: &kdissect::kafka::stream::Notice) {}
    }
    impl kdissect::pipeline::CaptureSink for Frames {}
    let mut n = 0;
    for name in [
        "kgen-all-versions.pcap",
        "confluent-transactions.pcap",
        "kafka-python-consumer-group.pcap",
    ] {
        let mut f = Frames(Vec::new());
        let mut h = kdissect::pipeline::Health::default();
        let _ = kdissect::pipeline::run(&sample(name)[..], &Options::default(), &mut f, &mut h);
        for (bytes, key, _) in f.0 {
            for v in registry().versions(key, Direction::Response) {
                let m = decode_response(&bytes, key, v);
                common::assert_tiles(&m);
                let m = decode_request(&bytes);
                common::assert_tiles(&m);
                n += 1;
            }
        }
    }
    assert!(n > 1000);
}

/// A Produce v9 request (flexible) carrying `batch` as its records.
fn produce_with(batch: &[u8]) -> Vec<u8> {
    let mut b = vec![0, 0, 0, 9, 0, 0, 0, 7, 0, 0, 0]; // key 0, v9, corr 7, client_id "" , tags 0
    b.extend([0, 0xff, 0xff, 0, 0, 0x75, 0x30, 2, 7]); // txn null, acks -1, timeout, 1 topic, "orders"
    b.extend(b"orders");
    b.extend([2, 0, 0, 0, 0]); // 1 partition, index 0
    let mut n = batch.len() as u32 + 1;
    while n >= 0x80 {
        b.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    b.push(n as u8);
    b.extend(batch);
    b.extend([0, 0, 0]); // partition, topic, body tags
    let mut f = (b.len() as u32).to_be_bytes().to_vec();
    f.extend(b);
    f
}

/// A RecordBatch v2 whose records are `records` compressed with `codec` (attributes).
fn batch(attrs: i16, count: i32, records: &[u8]) -> Vec<u8> {
    let mut after_crc = Vec::new();
    after_crc.extend(attrs.to_be_bytes());
    after_crc.extend(0i32.to_be_bytes());
    after_crc.extend([0u8; 8 * 2]);
    after_crc.extend((-1i64).to_be_bytes());
    after_crc.extend((-1i16).to_be_bytes());
    after_crc.extend((-1i32).to_be_bytes());
    after_crc.extend(count.to_be_bytes());
    after_crc.extend(records);
    let mut b = 0i64.to_be_bytes().to_vec();
    b.extend(((after_crc.len() + 9) as i32).to_be_bytes());
    b.extend(0i32.to_be_bytes());
    b.push(2);
    b.extend(crc32c::crc32c(&after_crc).to_be_bytes());
    b.extend(after_crc);
    b
}

fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).expect("gzip");
    e.finish().expect("gzip")
}

fn record(value: &[u8]) -> Vec<u8> {
    // attributes 0, timestamp delta 0, offset delta 0, key null, value, no headers (varints zigzag).
    let mut body = vec![0, 0, 0, 1];
    let mut v = (value.len() as u64) << 1;
    while v >= 0x80 {
        body.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    body.push(v as u8);
    body.extend(value);
    body.push(0);
    let mut r = Vec::new();
    let mut l = (body.len() as u64) << 1;
    while l >= 0x80 {
        r.push((l as u8 & 0x7f) | 0x80);
        l >>= 7;
    }
    r.push(l as u8);
    r.extend(body);
    r
}

#[test]
fn bad_crcs_and_wrong_codecs_are_diagnosed_not_fatal() {
    let good = batch(1, 1, &gzip(&record(b"hello")));
    let m = decode_request(&produce_with(&good));
    assert!(m.is_clean(), "{:?} {:?}", m.error, m.diagnoses);
    common::assert_tiles(&m);
    // A flipped byte in the compressed data: the CRC says so (and gzip may too).
    let mut bad = good.clone();
    let last = bad.len() - 3;
    bad[last] ^= 0x40;
    let m = decode_request(&produce_with(&bad));
    assert!(m.error.is_none(), "the message itself decodes");
    assert!(
        m.diagnoses
            .iter()
            .any(|d| d.to_string().contains("CRC-32C")),
        "{:?}",
        m.diagnoses
    );
    common::assert_tiles(&m);
    // The codec bits say lz4, the data is gzip.
    let wrong = batch(3, 1, &gzip(&record(b"hello")));
    let m = decode_request(&produce_with(&wrong));
    assert!(
        m.diagnoses
            .iter()
            .any(|d| d.to_string().contains("lz4 data does not decompress")),
        "{:?}",
        m.diagnoses
    );
    common::assert_tiles(&m);
    // Codec 7 does not exist.
    let m = decode_request(&produce_with(&batch(7, 1, b"xyz")));
    assert!(
        m.diagnoses
            .iter()
            .any(|d| d.to_string().contains("unknown compression codec 7")),
        "{:?}",
        m.diagnoses
    );
}

#[test]
fn decompression_bombs_stop_at_the_cap() {
    // 16 MiB of zeros in one record, gzip'd to a few kilobytes.
    let bomb = batch(1, 1, &gzip(&record(&vec![0u8; 16 << 20])));
    assert!(bomb.len() < 64 * 1024);
    let opts = DecodeOptions {
        max_decompressed: 1 << 20,
        ..DecodeOptions::default()
    };
    let m = kdissect::kafka::message::decode_request_with(&produce_with(&bomb), opts);
    assert!(
        m.diagnoses
            .iter()
            .any(|d| d.kind == kdissect::kafka::ProblemKind::DecompressionLimit),
        "{:?}",
        m.diagnoses
    );
    common::assert_tiles(&m);
    let mut biggest = 0;
    m.root().walk(&mut |n, _| {
        if let kdissect::kafka::Value::Blob(b) = &n.value {
            biggest = biggest.max(b.len());
        }
    });
    assert!(biggest <= 1 << 20, "kept {biggest} bytes");
}

#[test]
fn bogus_tagged_fields_in_flexible_versions() {
    // Metadata v12 request with a tagged-field section claiming sizes past the end, tags out
    // of order, and a known tag whose size disagrees with its value.
    let base = [0u8, 3, 0, 12, 0, 0, 0, 1, 0xff, 0xff, 0, 1, 1, 0];
    for tags in [
        &[1u8, 5, 200][..],
        &[2, 9, 0, 3, 0],
        &[1, 0x80, 0x80, 0x80, 0x80, 0x80],
        &[3, 1, 0, 1, 0, 0, 0],
    ] {
        let mut b = base.to_vec();
        b.extend(tags);
        let mut f = (b.len() as u32).to_be_bytes().to_vec();
        f.extend(b);
        let m = decode_request(&f);
        assert!(!m.is_clean(), "{tags:?}");
        common::assert_tiles(&m);
    }
}
