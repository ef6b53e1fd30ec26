//! Versions newer than the tables: read with the newest known layout when every byte fits
//! (flagged `assumed_version`), shown raw with the reason when not, and the connection goes on.

mod common;

use common::collect::run_bytes;
use common::pcapgen::{conversation, packet, pcap};
use common::{assert_tiles, int, string, vector};
use kdissect::kafka::{decode_request, decode_response, registry, Direction};
use kdissect::pipeline::Options;
use std::io::Write;
use std::process::{Command, Stdio};

/// A frame: size prefix, then the given header and body bytes.
fn frame(parts: &[&[u8]]) -> Vec<u8> {
    let body: Vec<u8> = parts.concat();
    let mut f = (body.len() as i32).to_be_bytes().to_vec();
    f.extend_from_slice(&body);
    f
}

/// Request header v2: key, version, correlation id, client_id "t", no tagged fields.
fn header_v2(key: i16, version: i16, corr: i32) -> Vec<u8> {
    let mut h = key.to_be_bytes().to_vec();
    h.extend_from_slice(&version.to_be_bytes());
    h.extend_from_slice(&corr.to_be_bytes());
    h.extend_from_slice(&[0, 1, b't', 0]);
    h
}

/// The newest ApiVersions version in the tables, and one past it.
fn api_versions_next() -> (i16, i16) {
    let newest = registry()
        .get(18, Direction::Request)
        .expect("ApiVersions")
        .max_version();
    (newest, newest + 1)
}

/// ApiVersions request body in the v5 layout: software name "a", version "b", ClusterId
/// null, NodeId -1, no tagged fields.
const API_VERSIONS_V5_BODY: &[u8] = &[2, b'a', 2, b'b', 0, 0xff, 0xff, 0xff, 0xff, 0];

/// ApiVersions response body (header v0 precedes it): no error, one API (Metadata 0-13),
/// throttle 0, no tagged fields.
const API_VERSIONS_RESPONSE_BODY: &[u8] = &[0, 0, 2, 0, 3, 0, 0, 0, 13, 0, 0, 0, 0, 0, 0];

#[test]
fn a_newer_request_that_fits_the_newest_layout_is_decoded_and_flagged() {
    let (newest, next) = api_versions_next();
    let f = frame(&[&header_v2(18, next, 7), API_VERSIONS_V5_BODY]);
    let m = decode_request(&f);
    assert_eq!(m.assumed_version, Some(newest));
    assert!(m.is_clean(), "{:?} {:?}", m.error, m.diagnoses);
    assert_eq!(string(&m, "ClientSoftwareName").as_deref(), Some("a"));
    assert_eq!(int(&m, "NodeId"), -1);
    assert_tiles(&m);
}

#[test]
fn a_newer_response_that_fits_is_decoded_with_the_requests_version() {
    let (newest, next) = api_versions_next();
    let f = frame(&[&9i32.to_be_bytes(), API_VERSIONS_RESPONSE_BODY]);
    let m = decode_response(&f, 18, next);
    assert_eq!(m.assumed_version, Some(newest));
    assert!(m.is_clean(), "{:?} {:?}", m.error, m.diagnoses);
    assert_eq!(int(&m, "ApiKeys[0].MaxVersion"), 13);
    assert_tiles(&m);
}

#[test]
fn a_newer_version_that_does_not_fit_shows_the_body_raw_with_the_reason() {
    let (newest, next) = api_versions_next();
    // Two bytes more than the newest layout takes.
    let mut body = API_VERSIONS_V5_BODY.to_vec();
    body.extend_from_slice(&[0xab, 0xcd]);
    let f = frame(&[&header_v2(18, next, 7), &body]);
    let m = decode_request(&f);
    assert_eq!(m.assumed_version, None);
    assert!(m.is_unknown_api() && !m.is_malformed());
    let reason = &m.error.as_ref().expect("error").detail.to_string();
    assert!(
        reason.contains(&format!("read with the v{newest} layout")) && reason.contains("left over"),
        "{reason}"
    );
    // Nothing of the failed guess is shown: header, then the raw rest.
    assert!(m.body().is_none());
    assert_tiles(&m);
}

#[test]
fn hex_input_marks_assumed_version_in_every_view() {
    let (newest, next) = api_versions_next();
    let f = frame(&[&header_v2(18, next, 7), API_VERSIONS_V5_BODY]);
    let hex = hex::encode(&f);
    let run = |args: &[&str]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kdissect"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(hex.as_bytes())
            .expect("write");
        let out = child.wait_with_output().expect("wait");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, json) = run(&["--hex", "--json"]);
    assert_eq!(code, Some(0), "an assumed layout that fits is not an error");
    let v: serde_json::Value = serde_json::from_str(json.trim()).expect("json");
    assert_eq!(v["assumed_version"], newest);
    assert_eq!(v["api_version"], next);
    assert_eq!(v["body"]["ClientSoftwareName"], "a");
    let (_, tree) = run(&["--hex", "-V"]);
    assert!(
        tree.contains(&format!("assumed_version {newest}")) && tree.contains("notice:"),
        "{tree}"
    );
}

#[test]
fn the_connection_goes_on_after_a_newer_version() {
    let (_, next) = api_versions_next();
    let with_corr = |mut f: Vec<u8>, at: usize, corr: i32| {
        f[at..at + 4].copy_from_slice(&corr.to_be_bytes());
        f
    };
    let mut junk_body = API_VERSIONS_V5_BODY.to_vec();
    junk_body.extend_from_slice(&[1, 2, 3]);
    let exchanges = vec![
        // Fits the newest layout both ways.
        (
            frame(&[&header_v2(18, next, 1), API_VERSIONS_V5_BODY]),
            frame(&[&1i32.to_be_bytes(), API_VERSIONS_RESPONSE_BODY]),
        ),
        // Does not fit: header and raw body, still paired.
        (
            frame(&[&header_v2(18, next, 2), &junk_body]),
            frame(&[&2i32.to_be_bytes(), API_VERSIONS_RESPONSE_BODY, &[9, 9]]),
        ),
        // A known version after both.
        (
            with_corr(vector("metadata-v13-request.hex"), 8, 3),
            with_corr(vector("metadata-v13-response.hex"), 4, 3),
        ),
    ];
    let segs = conversation(&exchanges, &[7, 1500]);
    let cap = pcap(
        &segs
            .iter()
            .map(|s| packet(s, 40000, 9092))
            .collect::<Vec<_>>(),
    );
    let (c, _h, err) = run_bytes(&cap, &Options::default());
    assert_eq!(err, None);
    let rows: Vec<_> = c.rows.iter().map(|r| (r.1, r.2, r.3, r.4, r.5)).collect();
    assert_eq!(
        rows,
        vec![
            (1, 18, next, "request", true),
            (1, 18, next, "response", true),
            (2, 18, next, "request", false),
            (2, 18, next, "response", false),
            (3, 3, 13, "request", true),
            (3, 3, 13, "response", true),
        ]
    );
    // The two that did not fit are undecoded (unknown version), not malformed.
    assert_eq!(c.unknown, vec![false, false, true, true, false, false]);
    // Every response was paired with its request.
    assert!(c.latencies.iter().skip(1).step_by(2).all(|l| l.is_some()));
}
