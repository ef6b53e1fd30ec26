//! Writes the seed corpora of the fuzz targets from the project's samples, and from the
//! hostile inputs of `scripts/hostile/generate.py` at fuzz scale (nested compressed wrappers,
//! compression bombs, zero-size messages, nested arrays, huge size prefixes, junk, tiny
//! out-of-order pieces, LZ4 framing faults), which needs `python3`.
//! Run from fuzz/: `cargo run --manifest-path seed/Cargo.toml`.

use kdissect::kafka::frames::{self, Conversation, ResponseHint};
use kdissect::kafka::stream::{Notice, Record, Sink};
use kdissect::kafka::{registry, Direction, Message};
use kdissect::pipeline::{run, CaptureSink, Health, Options};
use std::collections::hash_map::DefaultHasher;
use std::fs;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

fn save(dir: &str, data: &[u8]) {
    let mut h = DefaultHasher::new();
    data.hash(&mut h);
    let d = Path::new("corpus").join(dir);
    fs::create_dir_all(&d).expect("create corpus dir");
    fs::write(d.join(format!("seed-{:016x}", h.finish())), data).expect("write seed");
}

fn files(dir: &str, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.to_string_lossy().ends_with(suffix));
    v.sort();
    v
}

/// The same table as `fuzz_targets/frame_registry.rs`.
fn table() -> Vec<(i16, Vec<i16>)> {
    registry().api_versions()
}

struct Frames<'a> {
    table: &'a [(i16, Vec<i16>)],
    n: usize,
    /// Also save each whole frame of at most 4 KiB as hex text, for the `hex` target.
    as_hex: bool,
}

/// Bytes as hex text, 16 a line, as `kdissect --hex` reads them.
fn hex_text(data: &[u8]) -> String {
    let mut s = String::with_capacity(data.len() * 3);
    for line in data.chunks(16) {
        let words: Vec<String> = line.iter().map(|b| format!("{b:02x}")).collect();
        s.push_str(&words.join(" "));
        s.push('\n');
    }
    s
}

fn save_frame(table: &[(i16, Vec<i16>)], msg: &Message, key: i16, version: i16, frame: &[u8]) {
    let resp = u8::from(msg.direction == Direction::Response);
    let mut a = Vec::with_capacity(frame.len() + 5);
    a.extend_from_slice(&key.to_be_bytes());
    a.extend_from_slice(&version.to_be_bytes());
    a.push(resp);
    a.extend_from_slice(frame);
    save("frame", &a);
    if let Some(ki) = table.iter().position(|(k, _)| *k == key) {
        if let Some(vi) = table[ki].1.iter().position(|v| *v == version) {
            let mut b = vec![ki as u8, vi as u8, resp];
            b.extend_from_slice(frame);
            save("frame_registry", &b);
            // The same input, for the target that compares the two ways to the facts.
            save("facts_walk", &b);
        }
    }
}

impl Sink for Frames<'_> {
    fn message(&mut self, rec: &Record<'_>) {
        let key = rec.msg.api_key.or(rec.request.map(|r| r.api_key));
        let ver = rec.msg.api_version.or(rec.request.map(|r| r.api_version));
        if let (Some(k), Some(v)) = (key, ver) {
            if !rec.partial {
                save_frame(self.table, &rec.msg, k, v, rec.bytes);
                if self.as_hex && rec.bytes.len() <= 4096 {
                    save("hex", hex_text(rec.bytes).as_bytes());
                }
                self.n += 1;
            }
        }
    }
    fn notice(&mut self, _n: &Notice) {}
}

impl CaptureSink for Frames<'_> {}

fn main() {
    let table = table();
    let root = "..";
    let mut pcaps = files(&format!("{root}/samples"), ".pcap");
    pcaps.extend(files(&format!("{root}/samples"), ".pcapng"));
    for p in &pcaps {
        let data = fs::read(p).expect("read sample");
        save("pipeline", &data);
        let mut sink = Frames {
            table: &table,
            n: 0,
            as_hex: false,
        };
        let mut health = Health::default();
        run(&data[..], &Options::default(), &mut sink, &mut health);
        eprintln!("{}: {} frames", p.display(), sink.n);
    }
    let mut hexes = files(&format!("{root}/samples/hex"), ".hex");
    hexes.extend(files(&format!("{root}/tests/fixtures/vectors"), ".hex"));
    for p in &hexes {
        let text = fs::read_to_string(p).expect("read hex");
        save("hex", text.as_bytes());
        let Ok(bytes) = kdissect::capture::hex::parse(&text) else {
            continue;
        };
        // The vectors say what they hold in their first comment line.
        let said = |name: &str| -> Option<i16> {
            text.split_whitespace()
                .find_map(|w| w.strip_prefix(&format!("{name}=")))
                .and_then(|s| s.parse().ok())
        };
        let mut conv = Conversation::default();
        for span in frames::split(&bytes) {
            let frame = &bytes[span.offset..span.offset + span.len];
            let msg = conv.decode(frame, &ResponseHint::default());
            let key = msg.api_key.or(said("api_key"));
            let ver = msg.api_version.or(said("api_version"));
            if let (Some(k), Some(v)) = (key, ver) {
                save_frame(&table, &msg, k, v, frame);
            }
        }
    }
    for p in &pcaps {
        let data = fs::read(p).expect("read sample");
        let seed = segments(&data);
        if !seed.is_empty() {
            save("reassembly", &seed);
        }
    }
    hostile(&table);
}

/// Seeds from `scripts/hostile/generate.py all DIR --scale fuzz`: each capture to `pipeline`,
/// its segments to `reassembly`, its whole frames to `frame` and `frame_registry` and (up to
/// 4 KiB) as hex text to `hex`; each hex text to `hex`, its frames to the frame targets.
/// Decoding the bombs here takes a few hundred MB for a few seconds.
fn hostile(table: &[(i16, Vec<i16>)]) {
    let dir = std::env::temp_dir().join(format!("kdissect-hostile-seeds-{}", std::process::id()));
    let ok = std::process::Command::new("python3")
        .arg("../scripts/hostile/generate.py")
        .arg("all")
        .arg(&dir)
        .args(["--scale", "fuzz"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("python3 ../scripts/hostile/generate.py failed: no hostile seeds");
        return;
    }
    let d = dir.to_string_lossy().into_owned();
    for p in files(&d, ".pcap") {
        let data = fs::read(&p).expect("read hostile capture");
        save("pipeline", &data);
        let mut sink = Frames {
            table,
            n: 0,
            as_hex: true,
        };
        let mut health = Health::default();
        run(&data[..], &Options::default(), &mut sink, &mut health);
        let seed = segments(&data);
        if !seed.is_empty() {
            save("reassembly", &seed);
        }
        eprintln!("{}: {} frames", p.display(), sink.n);
    }
    for p in files(&d, ".hex") {
        let text = fs::read_to_string(&p).expect("read hostile hex");
        save("hex", text.as_bytes());
        let Ok(bytes) = kdissect::capture::hex::parse(&text) else {
            continue;
        };
        let mut conv = Conversation::default();
        for span in frames::split(&bytes).into_iter().take(64) {
            let frame = &bytes[span.offset..span.offset + span.len];
            let msg = conv.decode(frame, &ResponseHint::default());
            if let (Some(k), Some(v)) = (msg.api_key, msg.api_version) {
                save_frame(table, &msg, k, v, frame);
            }
        }
        eprintln!("{}: hex seed", p.display());
    }
    let _ = fs::remove_dir_all(&dir);
}

/// A capture's TCP segments in the `reassembly` target's format (see its header), the lower
/// port taken for the broker; payloads over 255 bytes become several segments. At most 16 KiB.
fn segments(data: &[u8]) -> Vec<u8> {
    use kdissect::capture::net::tcp_segment;
    use kdissect::capture::pcap::CaptureReader;
    let mut out = Vec::new();
    let Ok(mut reader) = CaptureReader::new(data) else {
        return out;
    };
    let mut client_ports: Vec<u16> = Vec::new();
    while let Ok(Some(pkt)) = reader.next_packet() {
        let Ok(seg) = tcp_segment(pkt.linktype, pkt.data, pkt.orig_len) else {
            continue;
        };
        let from_broker = seg.src.port() < seg.dst.port();
        let (client, broker) = if from_broker {
            (seg.dst, seg.src)
        } else {
            (seg.src, seg.dst)
        };
        let ci = match client_ports.iter().position(|p| *p == client.port()) {
            Some(i) => i,
            None => {
                client_ports.push(client.port());
                client_ports.len() - 1
            }
        };
        let dir = u8::from(from_broker)
            | (((ci & 1) as u8) << 1)
            | (u8::from(broker.port() != 9092) << 2);
        let flags = u8::from(seg.syn)
            | (u8::from(seg.fin) << 1)
            | (u8::from(seg.rst) << 2)
            | (u8::from(seg.has_ack) << 3)
            | ((seg.missing.min(15) as u8) << 4);
        let mut seq = seg.seq;
        let mut chunks: Vec<&[u8]> = seg.payload.chunks(255).collect();
        if chunks.is_empty() {
            chunks.push(&[]);
        }
        for (i, c) in chunks.iter().enumerate() {
            // The flags that end a segment go on its last piece only.
            let f = if i + 1 == chunks.len() { flags } else { flags & 0x09 };
            let f = if i == 0 { f } else { f & !1 };
            out.push(f);
            out.push(dir);
            out.extend_from_slice(&seq.to_be_bytes());
            out.extend_from_slice(&seg.ack.to_be_bytes());
            out.push(c.len() as u8);
            out.extend_from_slice(c);
            seq = seq.wrapping_add(c.len() as u32 + u32::from(i == 0 && seg.syn));
        }
        if out.len() > 16 * 1024 {
            break;
        }
    }
    out
}
