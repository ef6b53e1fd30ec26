//! The summary and statistics views decode two levels of each body and read the rest with the
//! validate-only walk (src/kafka/walk/interpreted.rs). What a message leaves behind must not depend on
//! that: on every sample and on hostile traffic, the shallow decode's error codes, record
//! counts, secret spans, problems, record types and top-level facts are
//! those of the full decode.

use kdissect::kafka::message::{
    decode_request_with, decode_response_with, request_trial, response_is_clean, trial_options,
};
use kdissect::kafka::stream::{Config, Notice, Record, Sink};
use kdissect::kafka::{registry, DecodeOptions, Direction, Message};
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
    facts.offsets = Default::default();
    facts.members.clear();
    Left {
        frame,
        errors: format!("{:?}", m.errors),
        records: m.records,
        secrets: m.secrets.clone(),
        diagnoses: format!("{:?}", m.diagnoses),
        error: format!("{:?}", m.error),
        record_types: m.record_types.types.clone(),
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

/// A frame of a capture as decoded.
struct Frame {
    request: bool,
    bytes: Vec<u8>,
    api: Option<(i16, i16)>,
}

#[derive(Default)]
struct Frames(Vec<Frame>);

impl Sink for Frames {
    fn message(&mut self, rec: &Record<'_>) {
        self.0.push(Frame {
            request: rec.msg.direction == Direction::Request,
            bytes: rec.bytes.to_vec(),
            api: rec.msg.api_key.zip(rec.msg.api_version),
        });
    }
    fn notice(&mut self, _: &Notice) {}
}

impl CaptureSink for Frames {}

/// Framing, pairing guesses and version hints decode frames only to learn whether they decode
/// cleanly, with the cheap trial options (and first the generated walk alone, with no
/// visitor), often as an API or version they are not: the verdict must be the full decode's. Every frame of every sample is tried as a request, and
/// each response as every version of its API and as the same version of a few others.
#[test]
fn trial_decodes_give_the_full_decodes_verdict() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = captures(&root.join("samples"));
    files.extend(captures(&root.join("tests/fixtures/samples")));
    let full = DecodeOptions::default();
    let (mut tried, mut clean) = (0usize, 0usize);
    for f in &files {
        let bytes = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let mut frames = Frames::default();
        let _ = kdissect::pipeline::run(
            &bytes[..],
            &Options::default(),
            &mut frames,
            &mut Health::default(),
        );
        for Frame {
            request,
            bytes: frame,
            api,
        } in frames.0.iter().take(300)
        {
            let a = decode_request_with(frame, trial_options());
            let b = decode_request_with(frame, full);
            let want = (b.is_clean(), b.assumed_version);
            assert_eq!(
                (a.is_clean(), a.assumed_version),
                want,
                "{}: a frame tried as a request",
                f.display()
            );
            assert_eq!(
                request_trial(frame),
                want,
                "{}: the verdict on a frame tried as a request",
                f.display()
            );
            let Some((key, version)) = api.filter(|_| !request) else {
                continue;
            };
            let mut candidates: Vec<(i16, i16)> = registry()
                .versions(key, Direction::Response)
                .into_iter()
                .map(|v| (key, v))
                .collect();
            candidates.extend([0, 1, 3, 18].into_iter().map(|k| (k, version)));
            for (k, v) in candidates {
                let a = decode_response_with(frame, k, v, trial_options()).is_clean();
                let b = decode_response_with(frame, k, v, full).is_clean();
                assert_eq!(a, b, "{}: a response tried as {k} v{v}", f.display());
                let verdict = response_is_clean(frame, k, v);
                assert_eq!(verdict, b, "{}: the verdict on {k} v{v}", f.display());
                tried += 1;
                clean += usize::from(a);
            }
        }
    }
    // Both verdicts must occur for the comparison to mean anything.
    assert!(
        tried > 5000 && clean > 500 && tried - clean > 500,
        "{tried} tried, {clean} clean"
    );
}
