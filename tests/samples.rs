//! Every shipped capture decodes to the exact list of messages recorded beside it, and the
//! damaged variants decode everything outside their damage exactly as the clean capture.
//!
//! The lists in tests/fixtures/samples/*.rows were produced by kdissect and reviewed against
//! samples/README.md and tshark; `KDISSECT_BLESS=1 cargo test --test samples` rewrites them
//! after a deliberate change (review the diff).

mod common;

use common::collect::{run_file, Collected};
use kdissect::kafka::stream::Notice;
use kdissect::pipeline::Options;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn samples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples")
}

fn captures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(samples_dir())
        .expect("samples/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pcap" || x == "pcapng"))
        // TLS-only captures hold no Kafka message (tests/tls.rs covers them); of the tls-*
        // samples only the plaintext legs (tls-*-plaintext.pcap) are plain Kafka.
        .filter(|p| !p.to_string_lossy().ends_with("-ssl.pcap"))
        .filter(|p| {
            let n = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            !n.starts_with("tls-") || n.ends_with("-plaintext.pcap")
        })
        .collect();
    v.sort();
    v
}

/// The options a capture is made to be read with (samples/README.md): its own listener port,
/// or, for the cluster's `issue35-*` captures, the controller's and the three brokers' ports.
/// (Under the default options their connections to 9192 and 9292 are found by content and
/// read alike: tests/mid_stream_sides.rs.)
fn opts_for(p: &Path) -> Options {
    let mut o = Options::default();
    let name = p
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.contains("19092") {
        o.kafka.ports = vec![19092];
    } else if name.starts_with("issue35-") {
        o.kafka.ports = vec![9093, 9092, 9192, 9292];
    }
    o
}

fn status(c: &Collected, i: usize) -> &'static str {
    let (.., clean, assumed) = c.rows[i];
    if c.partial[i] {
        "partial"
    } else if c.unknown[i] {
        "undecoded"
    } else if !clean {
        "malformed"
    } else if assumed {
        "assumed"
    } else {
        "ok"
    }
}

/// One line per message: frame, stream, correlation id, API, version, direction, status.
fn rows_text(c: &Collected) -> String {
    let mut s = String::new();
    for (i, r) in c.rows.iter().enumerate() {
        let (stream, corr, key, ver, dir, ..) = *r;
        let name = kdissect::kafka::message::api_display_name(key);
        s.push_str(&format!(
            "{} {stream} {corr} {name} v{ver} {dir} {}\n",
            c.frames[i],
            status(c, i)
        ));
    }
    for n in &c.notices {
        match n {
            Notice::LostInGap {
                stream,
                at,
                present,
                ..
            } => s.push_str(&format!(
                "{} {stream} lost-in-gap present={present}\n",
                at.frame
            )),
            Notice::Unanswered {
                stream, request, ..
            } => s.push_str(&format!(
                "{} {stream} unanswered corr={}\n",
                request.frame, request.correlation_id
            )),
            Notice::ConflictingOverlap { stream, at, offset } => s.push_str(&format!(
                "{} {stream} conflicting-overlap offset={offset}\n",
                at.frame
            )),
            _ => {}
        }
    }
    s
}

#[test]
fn every_sample_matches_its_recorded_messages() {
    let bless = std::env::var_os("KDISSECT_BLESS").is_some();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/samples");
    let mut checked = 0;
    for p in captures() {
        let (c, h, err) = run_file(&p, &opts_for(&p));
        let name = p.file_name().expect("name").to_string_lossy().into_owned();
        assert!(err.is_none(), "{name}: {err:?}");
        assert!(
            h.packets > 0 && !c.rows.is_empty(),
            "{name}: nothing decoded"
        );
        let got = rows_text(&c);
        let file = dir.join(format!("{name}.rows"));
        if bless {
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::write(&file, &got).expect("write rows");
        } else {
            let want = std::fs::read_to_string(&file).unwrap_or_else(|_| {
                panic!(
                    "{} missing: run with KDISSECT_BLESS=1 and review",
                    file.display()
                )
            });
            assert_eq!(got, want, "{name}: messages differ from {}", file.display());
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} samples");
}

fn load(name: &str) -> Collected {
    let p = samples_dir().join(name);
    let (c, _, err) = run_file(&p, &opts_for(&p));
    assert!(err.is_none(), "{name}: {err:?}");
    c
}

/// (stream, corr, api, version, direction) of every message, as a set.
fn keyset(c: &Collected) -> BTreeSet<(u32, i32, i16, i16, &'static str)> {
    c.rows.iter().map(|r| (r.0, r.1, r.2, r.3, r.4)).collect()
}

fn damage(c: &Collected) -> usize {
    c.notices
        .iter()
        .filter(|n| {
            matches!(
                n,
                Notice::LostInGap { .. } | Notice::Resync { .. } | Notice::BadSize { .. }
            )
        })
        .count()
}

#[test]
fn clean_client_captures_pair_every_request() {
    for name in [
        "confluent-kafka-admin.pcap",
        "kafka-python-admin.pcap",
        "kafka-python-port19092.pcap",
        "kafkajs-admin.pcap",
        "kcat-metadata-v0.pcap",
    ] {
        let c = load(name);
        assert_eq!(damage(&c), 0, "{name}: {:?}", c.notices);
        let requests = c.rows.iter().filter(|r| r.4 == "request").count();
        let responses = c.rows.iter().filter(|r| r.4 == "response").count();
        assert_eq!(requests, responses, "{name}");
        assert!(
            !c.notices
                .iter()
                .any(|n| matches!(n, Notice::Unanswered { .. })),
            "{name}"
        );
        // Every response is paired (latency known), none assumed.
        for (i, r) in c.rows.iter().enumerate() {
            if r.4 == "response" {
                assert!(
                    c.latencies[i].is_some() && !r.6,
                    "{name}: response {r:?} not paired"
                );
            }
        }
    }
}

#[test]
fn link_layer_and_format_variants_decode_identically() {
    let base = load("kgen-all-versions.pcap");
    for name in [
        "kgen-all-versions.pcapng",
        "kgen-all-versions-nsec.pcap",
        "kgen-all-versions-sll.pcap",
        "kgen-all-versions-sll2.pcap",
    ] {
        let c = load(name);
        assert_eq!(c.rows, base.rows, "{name}");
        assert_eq!(c.frames, base.frames, "{name}");
        // editcap's conversions keep the timestamps; the cooked captures came from their own
        // tcpdump processes, whose clocks read a little differently.
        if !name.contains("sll") {
            assert_eq!(c.latencies, base.latencies, "{name}: timestamps differ");
        }
    }
}

#[test]
fn reordered_and_duplicated_segments_change_nothing() {
    let base = load("kgen-all-versions.pcap");
    let c = load("kgen-reordered.pcap");
    assert_eq!(c.rows, base.rows);
    assert_eq!(damage(&c), 0);
    let c = load("kgen-duplicate-segment.pcap");
    assert_eq!(c.rows, base.rows);
    assert_eq!(damage(&c), 0);
}

/// Every response is paired with its own request as decoded in the same capture: same
/// stream, correlation id, API and version, and the request's frame.
fn assert_paired_with_their_requests(name: &str, c: &Collected) {
    for (i, r) in c.rows.iter().enumerate() {
        let Some(req) = c.requests[i] else { continue };
        let asked = c
            .rows
            .iter()
            .enumerate()
            .find(|(_, q)| (q.0, q.1, q.4) == (r.0, r.1, "request"))
            .map(|(j, q)| (c.frames[j], q.2, q.3));
        assert_eq!(
            asked,
            Some((req.frame, req.api_key, req.api_version)),
            "{name}: response {r:?} paired with {req:?}"
        );
        assert_eq!(req.correlation_id, r.1, "{name}: {r:?}");
    }
}

/// A capture merged from two taps, simulated: 50 data segments each moved up to 7 packets
/// later with the other direction's packets left in place, so that 30 of them come after a
/// data segment of the other direction that acknowledges them (an answer before the end of
/// its question). Every message decodes and pairs exactly as in the original capture, and no
/// loss is reported.
#[test]
fn merged_capture_with_answers_before_questions_decodes_as_the_original() {
    let base = load("kgen-all-versions.pcap");
    let c = load("kgen-all-versions-merged-skew.pcap");
    assert_eq!(damage(&c), 0, "{:?}", c.notices);
    assert!(
        !c.notices
            .iter()
            .any(|n| matches!(n, Notice::ConflictingOverlap { .. })),
        "{:?}",
        c.notices
    );
    // (stream, corr, API, version, direction, clean, assumed), and whether a response was
    // paired, message by message.
    let messages = |c: &Collected| -> Vec<_> {
        let mut v: Vec<_> = c
            .rows
            .iter()
            .zip(&c.requests)
            .map(|(r, q)| (*r, q.map(|q| (q.api_key, q.api_version, q.correlation_id))))
            .collect();
        v.sort();
        v
    };
    assert_eq!(messages(&c), messages(&base));
    assert_eq!(c.rows.len(), 133);
    assert!(c.partial.iter().all(|p| !p));
    assert_paired_with_their_requests("merged-skew", &c);
    let unanswered = |c: &Collected| -> Vec<_> {
        c.notices
            .iter()
            .filter_map(|n| match n {
                Notice::Unanswered {
                    stream, request, ..
                } => Some((*stream, request.correlation_id)),
                _ => None,
            })
            .collect()
    };
    assert_eq!(unanswered(&c), unanswered(&base));
}

#[test]
fn lost_segment_damages_only_its_message() {
    let base = load("kgen-all-versions.pcap");
    let c = load("kgen-lost-segment.pcap");
    let lost: Vec<&Notice> = c
        .notices
        .iter()
        .filter(|n| matches!(n, Notice::LostInGap { .. }))
        .collect();
    assert_eq!(lost.len(), 1, "{lost:?}");
    // The Metadata v12 response of correlation id 1004 is the one cut; everything else is
    // decoded exactly as in the clean capture.
    let damaged: Vec<_> = c
        .rows
        .iter()
        .filter(|r| r.1 == 1004 && r.4 == "response")
        .collect();
    assert_eq!(damaged.len(), 1);
    let idx = c
        .rows
        .iter()
        .position(|r| r.1 == 1004 && r.4 == "response")
        .expect("row");
    assert!(c.partial[idx]);
    let mut want = keyset(&base);
    let mut got = keyset(&c);
    want.remove(&(3, 1004, 3, 12, "response"));
    got.remove(&(3, 1004, 3, 12, "response"));
    assert_eq!(got, want);
    let clean_elsewhere = c
        .rows
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != idx)
        .all(|(i, r)| {
            let b = base
                .rows
                .iter()
                .position(|x| (x.0, x.1, x.4) == (r.0, r.1, r.4))
                .expect("same message in base");
            base.rows[b] == *r && (c.latencies[i].is_some() == base.latencies[b].is_some())
        });
    assert!(clean_elsewhere);
}

#[test]
fn capture_started_mid_stream_decodes_what_follows() {
    let c = load("kgen-midstream.pcap");
    let keys = keyset(&c);
    for want in [
        (0, 1005, 18, 3, "request"),
        (0, 1005, 18, 3, "response"),
        (0, 1006, 3, 1, "request"),
        (0, 1006, 3, 1, "response"),
        (0, 1007, 60, 1, "request"),
        (0, 1007, 60, 1, "response"),
        (1, 7, 60, 2, "request"),
    ] {
        assert!(keys.contains(&want), "{want:?} missing from {keys:?}");
    }
    assert!(c.rows.iter().all(|r| r.5), "{:?}", c.rows);
}

#[test]
fn snaplen_truncated_capture_shows_headers_of_cut_frames() {
    let base = load("kgen-all-versions.pcap");
    let c = load("kgen-all-versions-snaplen96.pcap");
    // Every message of the full capture appears, whole or as its captured start.
    let got = keyset(&c);
    let missing: Vec<_> = keyset(&base)
        .into_iter()
        .filter(|k| !got.contains(k))
        .collect();
    assert!(missing.len() <= 2, "{missing:?}");
    assert!(c.partial.iter().filter(|p| **p).count() > 50);
}

/// Real producer/consumer traffic in every codec: the batches decode, their CRCs check, their
/// records are all there, and compressed ones are decompressed into their own byte source.
#[test]
fn record_batches_decode_in_every_codec() {
    use kdissect::kafka::stream::{Record, Sink};
    use kdissect::kafka::{Node, NodeKind, Value};
    #[derive(Default)]
    struct Batches {
        produced: i64,
        fetched: i64,
        codecs: Vec<i64>,
        sources: usize,
        values: Vec<String>,
    }
    impl Sink for Batches {
        fn message(&mut self, rec: &Record<'_>) {
            assert!(
                rec.msg.is_clean(),
                "frame {}: {:?} {:?}",
                rec.frame,
                rec.msg.error,
                rec.msg.diagnoses
            );
            let produce = rec.msg.api_key == Some(0)
                && rec.msg.direction == kdissect::kafka::Direction::Request;
            let fetch = rec.msg.api_key == Some(1)
                && rec.msg.direction == kdissect::kafka::Direction::Response;
            rec.msg.root().walk(&mut |n: &Node, _| {
                if n.ty == "RecordBatch v2" {
                    let count = n.child("recordsCount").and_then(Node::as_int).unwrap_or(0);
                    let attrs = n.child("attributes").and_then(Node::as_int).unwrap_or(-1);
                    assert!(n
                        .child("crc")
                        .is_some_and(|c| c.note.crc_valid() == Some(true)));
                    if produce {
                        self.produced += count;
                        self.codecs.push(attrs & 7);
                    }
                    if fetch {
                        self.fetched += count;
                    }
                }
                if n.name == "decompressed" && n.kind == NodeKind::Group {
                    self.sources += 1;
                }
                if produce && n.name == "value" {
                    if let Value::Blob(b) = &n.value {
                        self.values.push(String::from_utf8_lossy(b).into_owned());
                    }
                }
            });
        }
        fn notice(&mut self, _: &Notice) {}
    }
    impl kdissect::pipeline::CaptureSink for Batches {}
    for (codec, id) in [
        ("none", 0),
        ("gzip", 1),
        ("snappy", 2),
        ("lz4", 3),
        ("zstd", 4),
    ] {
        let p = samples_dir().join(format!("confluent-produce-consume-{codec}.pcap"));
        let mut b = Batches::default();
        let mut h = kdissect::pipeline::Health::default();
        let f = std::fs::File::open(&p).expect("sample");
        let err = kdissect::pipeline::run(
            std::io::BufReader::new(f),
            &Options::default(),
            &mut b,
            &mut h,
        );
        assert!(err.is_ok(), "{err:?}");
        assert_eq!(b.produced, 20, "{codec}: records produced");
        assert!(b.fetched >= 20, "{codec}: records fetched {}", b.fetched);
        assert!(b.codecs.iter().all(|c| *c == id), "{codec}: {:?}", b.codecs);
        if id == 0 {
            assert_eq!(b.sources, 0);
        } else {
            assert!(
                b.sources >= 3,
                "{codec}: {} decompressed sources",
                b.sources
            );
            assert!(
                b.values.iter().any(|v| v.contains("crème brûlée")),
                "{codec}: {:?}",
                b.values
            );
        }
    }
}
