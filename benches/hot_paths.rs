//! Hot paths, one benchmark each: frame decoding per API, reassembly of a whole capture, and
//! each renderer. Run: cargo bench --bench hot_paths. Timings live here, never in tests.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use kdissect::kafka::message::{decode_request_with, decode_response_with};
use kdissect::kafka::stream::{Notice, Record, Sink};
use kdissect::kafka::DecodeOptions;
use kdissect::pipeline::{self, CaptureSink, Health, Options};
use kdissect::render::{self, json::Meta, Style};
use std::path::PathBuf;

fn sample(name: &str) -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("samples")
            .join(name),
    )
    .expect("sample")
}

/// Every frame of a sample with what decodes it: (bytes, request?, key, version).
fn frames(name: &str) -> Vec<(Vec<u8>, bool, i16, i16)> {
    struct F(Vec<(Vec<u8>, bool, i16, i16)>);
    impl Sink for F {
        fn message(&mut self, r: &Record<'_>) {
            if let (Some(k), Some(v)) = (r.msg.api_key, r.msg.api_version) {
                let req = r.msg.direction == kdissect::kafka::Direction::Request;
                self.0.push((r.bytes.to_vec(), req, k, v));
            }
        }
        fn notice(&mut self, _: &Notice) {}
    }
    impl CaptureSink for F {}
    let mut f = F(Vec::new());
    let _ = pipeline::run(
        &sample(name)[..],
        &Options::default(),
        &mut f,
        &mut Health::default(),
    );
    f.0
}

struct Count(u64);
impl Sink for Count {
    fn message(&mut self, r: &Record<'_>) {
        self.0 += r.bytes.len() as u64;
    }
    fn notice(&mut self, _: &Notice) {}
}
impl CaptureSink for Count {}

fn bench(c: &mut Criterion) {
    let full = DecodeOptions::default();
    let summary = DecodeOptions {
        keep_depth: 2,
        records: false,
        facts_only: true,
        ..DecodeOptions::default()
    };
    for (label, name, key) in [
        ("metadata", "kgen-all-versions.pcap", 3),
        ("produce", "confluent-produce-consume-zstd.pcap", 0),
        ("fetch", "confluent-produce-consume-zstd.pcap", 1),
        ("apiversions", "kgen-all-versions.pcap", 18),
    ] {
        let fs: Vec<_> = frames(name).into_iter().filter(|f| f.2 == key).collect();
        let bytes: usize = fs.iter().map(|f| f.0.len()).sum();
        let mut g = c.benchmark_group(format!("decode/{label}"));
        g.throughput(Throughput::Bytes(bytes as u64));
        for (mode, opts) in [("full", full), ("summary", summary)] {
            g.bench_function(mode, |b| {
                b.iter(|| {
                    for (f, req, k, v) in &fs {
                        let m = if *req {
                            decode_request_with(f, opts)
                        } else {
                            decode_response_with(f, *k, *v, opts)
                        };
                        black_box(m);
                    }
                })
            });
        }
        g.finish();
    }
    let cap = sample("kgen-all-versions.pcap");
    let mut g = c.benchmark_group("pipeline");
    g.throughput(Throughput::Bytes(cap.len() as u64));
    g.bench_function("kgen-all-versions", |b| {
        b.iter(|| {
            let mut s = Count(0);
            let _ = pipeline::run(
                &cap[..],
                &Options::default(),
                &mut s,
                &mut Health::default(),
            );
            black_box(s.0)
        })
    });
    g.finish();
    let fs = frames("kgen-all-versions.pcap");
    let msgs: Vec<_> = fs
        .iter()
        .map(|(f, req, k, v)| {
            (
                if *req {
                    decode_request_with(f, full)
                } else {
                    decode_response_with(f, *k, *v, full)
                },
                f,
            )
        })
        .collect();
    let bytes: usize = fs.iter().map(|f| f.0.len()).sum();
    let mut g = c.benchmark_group("render");
    g.throughput(Throughput::Bytes(bytes as u64));
    let style = Style::default();
    g.bench_function("tree", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(1 << 20);
            for (m, f) in &msgs {
                render::tree::write(&mut out, m.root(), f, style).expect("write");
            }
            black_box(out.len())
        })
    });
    g.bench_function("bytes", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(1 << 20);
            for (m, f) in &msgs {
                render::bytes::write(&mut out, m.root(), f, style).expect("write");
            }
            black_box(out.len())
        })
    });
    g.bench_function("json", |b| {
        b.iter(|| {
            let mut n = 0;
            for (m, f) in &msgs {
                n += render::json::message(m, f, &Meta::default(), false)
                    .to_string()
                    .len();
            }
            black_box(n)
        })
    });
    g.bench_function("summary", |b| {
        b.iter(|| {
            let mut n = 0;
            for (m, _) in &msgs {
                n += render::summary::essentials(m).len();
            }
            black_box(n)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
