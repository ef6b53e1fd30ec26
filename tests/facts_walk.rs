//! The summary and statistics views gather a message's facts while its body is walked
//! (src/kafka/walk/collect.rs) instead of building the body's first two levels as nodes and reading
//! them back, and walk it with the walk generated from its spec (src/kafka/walk/generated.rs)
//! rather than interpret the spec. The three ways must agree on everything a message leaves:
//! its facts (topic names learnt and noted included), error codes, record counts and batches,
//! secrets, problems and verdict; the header's values, which those views read in place too.
//! Compared here on every frame of every sample, through the whole pipeline; on damaged copies
//! of those frames (cut, bytes flipped, lengths overwritten); under tight limits; on the
//! smallest instance of every API, version and direction (`kdissect example`); and on the
//! fuzz target's findings. tests/roundtrip.rs compares them on every frame it encodes.

mod common;

use common::{summary_left, summary_options, walks_agree, walks_agree_with, Way, WAYS};
use kdissect::kafka::stream::{Notice, Record, Sink};
use kdissect::kafka::{DecodeOptions, Direction};
use kdissect::pipeline::CaptureSink;
use std::path::Path;

/// What a message leaves for the views that print its facts, with its frame number.
#[derive(Debug, PartialEq)]
struct Left {
    frame: u64,
    left: String,
}

/// Messages as the pipeline leaves them, and how many had their facts gathered by the walk.
#[derive(Default)]
struct Lefts(Vec<Left>, usize, Vec<Frame>);

/// A frame with what its message was decoded as.
struct Frame {
    bytes: Vec<u8>,
    response: Option<(i16, i16)>,
}

impl Sink for Lefts {
    fn message(&mut self, rec: &Record<'_>) {
        // A message decoded for its summary alone reaches the sinks without a tree, whichever
        // way its facts were gathered.
        assert!(rec.msg.tree.is_none(), "frame {} kept its tree", rec.frame);
        self.0.push(Left {
            frame: rec.frame,
            left: summary_left(&rec.msg),
        });
        self.1 += usize::from(rec.msg.topic_pairs.is_some());
        if self.2.len() < 200 {
            self.2.push(Frame {
                bytes: rec.bytes.to_vec(),
                response: rec
                    .msg
                    .api_key
                    .zip(rec.msg.api_version)
                    .filter(|_| rec.msg.direction == Direction::Response),
            });
        }
    }
    fn notice(&mut self, _: &Notice) {}
}

impl CaptureSink for Lefts {}

fn run(path: &Path, way: Way) -> Lefts {
    common::run_sample(path, summary_options(way))
}

#[test]
fn the_three_ways_agree_on_every_sample() {
    let files = common::sample_captures();
    assert!(files.len() > 20, "{} captures", files.len());
    let (mut messages, mut walked) = (0, [0; 3]);
    for f in &files {
        let [tree, interpreted, generated] = WAYS.map(|w| run(f, w));
        assert_eq!(tree.1, 0, "{}: no walk when switched off", f.display());
        for (way, other) in [("interpreted", &interpreted), ("generated", &generated)] {
            assert_eq!(tree.0.len(), other.0.len(), "{way}: {}", f.display());
            for (a, b) in tree.0.iter().zip(&other.0) {
                assert_eq!(a, b, "{way} walk: {}", f.display());
            }
        }
        messages += tree.0.len();
        walked[1] += interpreted.1;
        walked[2] += generated.1;
    }
    // Most messages take a walk; some (group members, SASL, damage) the tree. The generated
    // walk takes at least every message the interpreted one takes.
    assert!(messages > 1000, "{messages} messages");
    assert!(
        walked[1] * 10 > messages * 7 && walked[2] < messages && walked[2] >= walked[1],
        "{walked:?} of {messages} walked"
    );
}

/// The smallest instance of every API, version and direction, as `kdissect example` builds
/// it: every field of every version walked at least once.
#[test]
fn the_three_ways_agree_on_every_example() {
    use kdissect::kafka::{example, registry};
    let (mut tried, mut generated) = (0, 0);
    for (key, _) in registry().api_versions() {
        for direction in [Direction::Request, Direction::Response] {
            for v in registry().versions(key, direction) {
                let Some(spec) = registry().get_for(key, direction, v) else {
                    continue;
                };
                let frame = example::frame(spec, v);
                let response = (direction == Direction::Response).then_some((key, v));
                let what = format!("example {} v{v}", spec.name);
                generated += usize::from(walks_agree(&frame, response, &what)[2]);
                tried += 1;
            }
        }
    }
    assert!(
        tried > 700 && generated * 10 > tried * 9,
        "{generated} of {tried} walked"
    );
}

/// Decodes `frame` the three ways, as a request or as the response it was: whether the
/// generated walk took it. The verdict framing and guessing take (first from the generated
/// walk alone) is a full decode's too.
fn compare(frame: &[u8], response: Option<(i16, i16)>, what: &str) -> bool {
    use kdissect::kafka::message::*;
    let full = DecodeOptions::default();
    match response {
        Some((k, v)) => {
            let want = decode_response_with(frame, k, v, full).is_clean();
            assert_eq!(response_is_clean(frame, k, v), want, "verdict: {what}");
        }
        None => {
            let m = decode_request_with(frame, full);
            let want = (m.is_clean(), m.assumed_version);
            assert_eq!(request_trial(frame), want, "verdict: {what}");
        }
    }
    walks_agree(frame, response, what)[2]
}

/// Damaged copies of a frame: cut at several places, one byte flipped at several places, and
/// a length-like pair of bytes set to large and negative values.
fn damaged(frame: &[u8]) -> Vec<(String, Vec<u8>)> {
    let n = frame.len();
    let mut out = Vec::new();
    for cut in [n / 3, n / 2, n - 1, n.saturating_sub(5)] {
        if cut > 4 && cut < n {
            let mut f = frame[..cut].to_vec();
            // The size prefix says what is left, as a frame cut by the framing would not.
            f[..4].copy_from_slice(&((cut - 4) as u32).to_be_bytes());
            out.push((format!("cut at {cut}"), f));
        }
    }
    // The header's bytes (size, API, version, correlation id, client id's length), then
    // some of the body's.
    let header = (4..n.min(16)).step_by(2);
    for at in header.chain((12..n).step_by((n / 7).max(1)).take(8)) {
        for x in [0xff, 0x80, 0x01] {
            let mut f = frame.to_vec();
            f[at] ^= x;
            out.push((format!("byte {at} ^ {x:#x}"), f));
        }
    }
    for at in (12..n.saturating_sub(1)).step_by((n / 5).max(1)).take(5) {
        for v in [0x7fffu16, 0xffff, 0x0100] {
            let mut f = frame.to_vec();
            f[at..at + 2].copy_from_slice(&v.to_be_bytes());
            out.push((format!("bytes {at}.. = {v:#x}"), f));
        }
    }
    out
}

#[test]
fn the_three_ways_agree_on_damaged_frames() {
    let (mut tried, mut walked) = (0, 0);
    for f in common::sample_captures() {
        for frame in run(&f, Way::Generated).2.iter().step_by(3) {
            for (what, bytes) in damaged(&frame.bytes) {
                let what = format!("{}: {what}", f.display());
                walked += usize::from(compare(&bytes, frame.response, &what));
                tried += 1;
            }
        }
    }
    // Both ways must be taken for the comparison to mean anything.
    assert!(
        tried > 5000 && walked > 1000 && tried - walked > 1000,
        "{walked} of {tried} walked"
    );
}

/// The smallest limits make the walks leave long arrays and tagged sections to the tree.
#[test]
fn the_three_ways_agree_under_tight_limits() {
    let mut walked = 0;
    let mut tried = 0;
    for f in common::sample_captures().iter().step_by(4) {
        for frame in run(f, Way::Generated).2 {
            for (max_elements, max_nodes) in [(1, 300_000), (2, 3), (10_000, 10)] {
                let limits = |o: DecodeOptions| DecodeOptions {
                    max_elements,
                    max_nodes,
                    ..o
                };
                let what = format!("{} limits {max_elements}/{max_nodes}", f.display());
                walked +=
                    usize::from(walks_agree_with(&frame.bytes, frame.response, limits, &what)[2]);
                tried += 1;
            }
        }
    }
    assert!(tried > 1000 && walked > 100, "{walked} of {tried} walked");
}

/// The `facts_walk` fuzz target's findings (fuzz/regressions/facts_walk-*), replayed as it
/// reads them: bytes 0 and 1 index the registry's API keys and that API's versions, byte 2
/// the direction. The first: a request of a version newer than the tables, whose guess at
/// the newest layout walked to the end but was rolled back, kept the guess's facts.
#[test]
fn the_fuzz_targets_findings_agree() {
    use kdissect::kafka::registry;
    let table = registry().api_versions();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&dir).expect("fuzz/regressions") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !name.starts_with("facts_walk-") {
            continue;
        }
        let data = std::fs::read(&path).expect("finding");
        let (key, versions) = &table[data[0] as usize % table.len()];
        let version = versions[data[1] as usize % versions.len()];
        let response = (data[2] & 1 == 1).then_some((*key, version));
        compare(&data[3..], response, name);
        replayed += 1;
    }
    assert!(replayed >= 1, "no facts_walk finding in {}", dir.display());
}

/// A JoinGroup request whose protocol metadata holds `nulls` null topic names: not the
/// consumer protocol (whose names are never null), so its bytes are shown raw with nothing
/// diagnosed. Past 64 the decoder's attempt had counted problems beyond its list that the
/// roll-back left behind: the tree views said "more problems" where there were none, and the
/// walk, which steps over the bytes, disagreed with them.
fn join_group_with_null_topics(nulls: usize) -> Vec<u8> {
    let string = |out: &mut Vec<u8>, s: &str| {
        out.extend((s.len() as i16).to_be_bytes());
        out.extend(s.as_bytes());
    };
    let mut metadata = 0i16.to_be_bytes().to_vec();
    metadata.extend((nulls as i32).to_be_bytes());
    for _ in 0..nulls {
        metadata.extend((-1i16).to_be_bytes());
    }
    metadata.extend((-1i32).to_be_bytes());
    // JoinGroup v0: header (key 11, version 0, correlation id, client id), then GroupId,
    // SessionTimeoutMs, MemberId, ProtocolType and one protocol.
    let mut body = 11i16.to_be_bytes().to_vec();
    body.extend(0i16.to_be_bytes());
    body.extend(7i32.to_be_bytes());
    string(&mut body, "c");
    string(&mut body, "g");
    body.extend(1000i32.to_be_bytes());
    string(&mut body, "");
    string(&mut body, "consumer");
    body.extend(1i32.to_be_bytes());
    string(&mut body, "range");
    body.extend((metadata.len() as i32).to_be_bytes());
    body.extend(metadata);
    let mut frame = (body.len() as i32).to_be_bytes().to_vec();
    frame.extend(body);
    frame
}

#[test]
fn a_group_protocol_that_is_not_the_consumer_protocol_leaves_no_problem() {
    for nulls in [3, 64, 65, 70, 200] {
        let frame = join_group_with_null_topics(nulls);
        let what = format!("JoinGroup v0 with {nulls} null topic names");
        let m = kdissect::kafka::message::decode_request_with(&frame, DecodeOptions::default());
        assert!(m.is_clean(), "{what}: {:?}", m.diagnoses);
        assert!(compare(&frame, None, &what), "{what}: not walked");
    }
}
