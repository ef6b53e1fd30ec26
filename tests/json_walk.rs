//! `--json` writes a message body's JSON while the generated walk walks it
//! (src/kafka/walk/json.rs), rather than from the decoder's tree of it. The two ways must
//! write the same bytes: compared here, message by message, on every frame of every sample,
//! through the whole pipeline (topic names learnt and named included), as the printer writes
//! them.

mod common;

use kdissect::kafka::stream::{Notice, Record, Sink};
use kdissect::kafka::DecodeOptions;
use kdissect::pipeline::CaptureSink;
use kdissect::render::json::{write_message, Meta};
use std::path::Path;

/// Each message's JSON line, and how many were written as walked.
#[derive(Default)]
struct Lines(Vec<String>, usize);

impl Sink for Lines {
    fn message(&mut self, rec: &Record<'_>) {
        self.1 += usize::from(rec.msg.json.is_some());
        let meta = Meta {
            frame: rec.frame,
            ts_nanos: Some(rec.ts_nanos),
            stream: Some(rec.stream),
            src: Some(rec.src),
            dst: Some(rec.dst),
            request_frame: rec.request.map(|r| r.frame),
            latency_nanos: rec.latency_nanos(),
            assumed: rec.assumed,
            partial: rec.partial,
            tls: rec.tls,
            ..Meta::default()
        };
        let shown = kdissect::render::masked(&rec.msg, rec.bytes, Default::default());
        let mut w = Vec::new();
        write_message(&mut w, &rec.msg, &shown, &meta, false);
        self.0.push(String::from_utf8_lossy(&w).into_owned());
    }
    fn notice(&mut self, _: &Notice) {}
}

impl CaptureSink for Lines {}

/// `--json`'s decoding (src/flags/hi.rs), with or without the walk's writer.
fn run(path: &Path, walk: bool) -> Lines {
    common::run_sample(
        path,
        DecodeOptions {
            json_walk: walk,
            ..DecodeOptions::default()
        },
    )
}

#[test]
fn the_walk_writes_the_json_the_tree_writes() {
    let files = common::sample_captures();
    assert!(files.len() > 20, "{} captures", files.len());
    let (mut messages, mut walked) = (0, 0);
    for f in &files {
        let (tree, walk) = (run(f, false), run(f, true));
        assert_eq!(tree.1, 0, "{}: no walk when switched off", f.display());
        assert_eq!(tree.0.len(), walk.0.len(), "{}", f.display());
        for (a, b) in tree.0.iter().zip(&walk.0) {
            assert_eq!(a, b, "{}", f.display());
        }
        messages += tree.0.len();
        walked += walk.1;
    }
    // Most messages are walked; some (SASL, damage, embedded messages) take the tree's way.
    println!("{walked} of {messages} messages walked");
    assert!(messages > 1000, "{messages} messages");
    assert!(walked * 10 > messages * 7, "{walked} of {messages} walked");
}

/// How often the walk gives up (and the tree's way writes the body) on the captures named in
/// KDISSECT_JSON_CAPTURES (colon-separated: the benchmark mixes); the figures of
/// docs/performance.md, run on demand (the mixes are not committed):
/// `KDISSECT_JSON_CAPTURES=a.pcap:b.pcap cargo test --release --test json_walk -- --ignored --nocapture`.
#[test]
#[ignore]
fn how_often_the_json_walk_gives_up_on_the_mixes() {
    let list = std::env::var("KDISSECT_JSON_CAPTURES").unwrap_or_default();
    for f in list.split(':').filter(|f| !f.is_empty()) {
        let walk = run(Path::new(f), true);
        let (n, walked) = (walk.0.len(), walk.1);
        println!(
            "{f}: {n} messages, {walked} walked, {} by the tree ({:.2} %)",
            n - walked,
            (n - walked) as f64 * 100.0 / n.max(1) as f64
        );
        assert!(
            (n - walked) * 20 <= n,
            "{f}: {} of {n} messages written from the tree",
            n - walked
        );
    }
}
