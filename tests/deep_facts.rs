//! The analyses read facts below the body's first two levels (partition entries with their
//! offsets and record batches, group members and their consumer protocol, the topic ids'
//! names). Where no view wants a tree, those facts are gathered while the generated walk walks
//! the body at every depth (src/kafka/walk/deep.rs) rather than read from the decoder's tree of
//! the facts' nodes (src/kafka/walk/tree_facts.rs). The two ways must leave the analyses the
//! same: compared here, message by message, on every frame of every sample, through the whole
//! pipeline (topic names learnt and noted included).

mod common;

use kdissect::analyses::adapter;
use kdissect::kafka::stream::{Notice, Record, Sink};
use kdissect::kafka::DecodeOptions;
use kdissect::pipeline::CaptureSink;
use std::path::Path;

/// What the analyses read of each message, and how many messages were walked for it.
#[derive(Default)]
struct Seen(Vec<String>, usize);

impl Sink for Seen {
    fn message(&mut self, rec: &Record<'_>) {
        let walked = rec.msg.topic_pairs.is_some();
        self.1 += usize::from(walked);
        if walked {
            assert!(rec.msg.tree.is_none(), "frame {} kept a tree", rec.frame);
        }
        let m = &rec.msg;
        self.0.push(format!(
            "frame {}: {:?}\npairs {:?}\nfacts {:?}\nerrors {:?} records {:?} batches {:?} \
             diagnoses {:?} error {:?} secrets {:?} types {:?}",
            rec.frame,
            adapter::event(rec),
            adapter::topic_pairs(rec),
            m.facts,
            m.errors,
            m.records,
            m.batches,
            m.diagnoses,
            m.error,
            m.secrets,
            m.record_types.types,
        ));
    }
    fn notice(&mut self, _: &Notice) {}
}

impl CaptureSink for Seen {}

/// The analyses' decoding (src/flags/hi.rs), at every depth with or without the walk.
fn options(deep: bool) -> DecodeOptions {
    DecodeOptions {
        facts_only: true,
        deep_facts: deep,
        ..DecodeOptions::default()
    }
}

fn run(path: &Path, deep: bool) -> Seen {
    common::run_sample(path, options(deep))
}

#[test]
fn the_walk_at_every_depth_leaves_the_analyses_what_the_tree_leaves() {
    let files = common::sample_captures();
    assert!(files.len() > 20, "{} captures", files.len());
    let (mut messages, mut walked) = (0, 0);
    for f in &files {
        let (tree, deep) = (run(f, false), run(f, true));
        assert_eq!(tree.1, 0, "{}: no walk when switched off", f.display());
        assert_eq!(tree.0.len(), deep.0.len(), "{}", f.display());
        for (a, b) in tree.0.iter().zip(&deep.0) {
            assert_eq!(a, b, "{}", f.display());
        }
        messages += tree.0.len();
        walked += deep.1;
    }
    // Most messages are walked; some (SASL, damage, embedded messages) take the tree's way.
    assert!(messages > 1000, "{messages} messages");
    assert!(walked * 10 > messages * 7, "{walked} of {messages} walked");
}

/// How often the walk gives up (and the tree's way reads the body) on the captures named in
/// KDISSECT_DEEP_CAPTURES (colon-separated: the benchmark mixes), at most 5 % of their
/// messages; the figures of docs/performance.md, run on demand (the mixes are not committed):
/// `KDISSECT_DEEP_CAPTURES=a.pcap:b.pcap cargo test --release --test deep_facts -- --ignored --nocapture`.
#[test]
#[ignore]
fn how_often_the_walk_gives_up_on_the_mixes() {
    let list = std::env::var("KDISSECT_DEEP_CAPTURES").unwrap_or_default();
    for f in list.split(':').filter(|f| !f.is_empty()) {
        let deep = run(Path::new(f), true);
        let (n, walked) = (deep.0.len(), deep.1);
        println!(
            "{f}: {n} messages, {walked} walked, {} by the tree ({:.2} %)",
            n - walked,
            (n - walked) as f64 * 100.0 / n.max(1) as f64
        );
        // The mixes measured 0.7-1.7 % (docs/performance.md): the tree's way stays rare.
        assert!(
            (n - walked) * 20 <= n,
            "{f}: {} of {n} messages read by the tree",
            n - walked
        );
    }
}
