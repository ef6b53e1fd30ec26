//! The summary and statistics views decode two levels of each body and read the rest with the
//! validate-only walk (src/kafka/walk.rs). What a message leaves behind must not depend on
//! that: on every sample and on hostile traffic, the shallow decode's error codes, record
//! counts, secret spans, problems, record types and top-level facts are
//! those of the full decode.

use kdissect::kafka::stream::{Config, Notice, Record, Sink};
use kdissect::kafka::{DecodeOptions, Message};
use kdissect::pipeline::{CaptureSink, Health, Options};
use std::path::{Path, PathBuf};

/// What a message leaves for the views that keep only its top levels.
#[derive(Debug, PartialEq)]
struct Left {
    frame: u64,
    errors: String,
    records: (i64, usize),
    secrets: Vec<(usize, usize)>,
    diagnoses: String,
    error: String,
    record_types: Vec<(&'static str, u32)>,
    facts: String,
}

fn left(frame: u64, m: &Message) -> Left {
    let mut facts = m.facts.clone();
    // Partition offsets and group members sit below the top levels: only the views that
    // decode everything (the analyses) read them.
    facts.offsets.clear();
    facts.members.clear();
    Left {
        frame,
        errors: format!("{:?}", m.errors),
        records: m.records,
        secrets: m.secrets.clone(),
        diagnoses: format!("{:?}", m.diagnoses),
        error: format!("{:?}", m.error),
        record_types: m.record_types.clone(),
        facts: format!("{facts:?}"),
    }
}

#[derive(Default)]
struct Lefts(Vec<Left>);

impl Sink for Lefts {
    fn message(&mut self, rec: &Record<'_>) {
        self.0.push(left(rec.frame, &rec.msg));
    }
    fn notice(&mut self, _: &Notice) {}
}

impl CaptureSink for Lefts {}

fn run(path: &Path, keep_depth: usize) -> Vec<Left> {
    let opts = Options {
        kafka: Config {
            decode: DecodeOptions {
                keep_depth,
                facts_only: keep_depth == 2,
                ..DecodeOptions::default()
            },
            ..Config::default()
        },
        ..Options::default()
    };
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut sink = Lefts::default();
    let mut health = Health::default();
    // Damaged captures end with an error: what they gave up to there is compared.
    let _ = kdissect::pipeline::run(&bytes[..], &opts, &mut sink, &mut health);
    sink.0
}

fn captures(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| {
        matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("pcap" | "pcapng")
        )
    });
    v.sort();
    v
}

#[test]
fn shallow_and_full_decodes_leave_the_same() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = captures(&root.join("samples"));
    files.extend(captures(&root.join("tests/fixtures/samples")));
    assert!(files.len() > 20, "{} captures", files.len());
    let mut messages = 0;
    for f in &files {
        let full = run(f, usize::MAX);
        let shallow = run(f, 2);
        assert_eq!(full.len(), shallow.len(), "{}", f.display());
        for (a, b) in full.iter().zip(&shallow) {
            assert_eq!(a, b, "{}", f.display());
        }
        messages += full.len();
    }
    assert!(messages > 1000, "{messages} messages");
}
