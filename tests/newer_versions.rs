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

// Kafka 4.5: request header v3 (KIP-1313), reached through the specs' `headerVersions`
// (OffsetDelete v1 is the first version sent with it, schema-src/ahead.json).

/// A uuid that reads as itself: 01020304-0506-...
const INSTANCE: [u8; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];

/// Request header v3: key, version, correlation id, client_id (int16 length, or null), then
/// the tagged fields: ClientInstanceId (tag 0) when given.
fn header_v3(
    key: i16,
    version: i16,
    corr: i32,
    client: Option<&str>,
    instance: Option<[u8; 16]>,
) -> Vec<u8> {
    let mut h = key.to_be_bytes().to_vec();
    h.extend_from_slice(&version.to_be_bytes());
    h.extend_from_slice(&corr.to_be_bytes());
    match client {
        Some(c) => {
            h.extend_from_slice(&(c.len() as i16).to_be_bytes());
            h.extend_from_slice(c.as_bytes());
        }
        None => h.extend_from_slice(&[0xff, 0xff]),
    }
    match instance {
        Some(u) => {
            h.extend_from_slice(&[1, 0, 16]);
            h.extend_from_slice(&u);
        }
        None => h.push(0),
    }
    h
}

/// Request header v1 (non-flexible), client_id as given.
fn header_v1(key: i16, version: i16, corr: i32, client: Option<&str>) -> Vec<u8> {
    let mut h = header_v3(key, version, corr, client, None);
    h.pop();
    h
}

/// OffsetDelete request body in the v0 layout (the tables' newest): group "g", topic "t",
/// partition 0.
const OFFSET_DELETE_BODY: &[u8] = &[0, 1, b'g', 0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 1, 0, 0, 0, 0];

/// OffsetDelete response body in the v0 layout: no error, no throttle, no topics.
const OFFSET_DELETE_RESPONSE_BODY: &[u8] = &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

#[test]
fn offset_delete_v1_is_read_with_request_header_v3() {
    use kdissect::kafka::message::{request_header_version, response_header_version};
    assert_eq!(request_header_version(47, 0), 1);
    assert_eq!(request_header_version(47, 1), 3);
    // Responses keep the old rule (no map for them): OffsetDelete is not flexible.
    assert_eq!(response_header_version(47, 1), 0);
    let first = frame(&[
        &header_v3(47, 1, 5, Some("app"), Some(INSTANCE)),
        OFFSET_DELETE_BODY,
    ]);
    let m = decode_request(&first);
    assert!(m.is_clean(), "{:?} {:?}", m.error, m.diagnoses);
    assert_eq!(m.assumed_version, Some(0));
    assert_eq!(m.client_id, Some(Some("app".to_string())));
    let root = m.tree.as_deref().expect("tree");
    let header = &root.children[1];
    assert_eq!(header.name, "RequestHeader v3");
    let tagged = header
        .children
        .iter()
        .find(|n| n.name == "client_instance_id")
        .expect("client_instance_id");
    let uuid = tagged
        .children
        .iter()
        .find(|n| n.ty == "uuid")
        .expect("uuid");
    assert!(matches!(uuid.value, kdissect::Value::Uuid(u) if u == INSTANCE));
    assert_eq!(string(&m, "Topics[0].Name").as_deref(), Some("t"));
    assert_tiles(&m);
    // A later request: null client_id, no tagged field.
    let later = frame(&[&header_v3(47, 1, 6, None, None), OFFSET_DELETE_BODY]);
    let m = decode_request(&later);
    assert!(m.is_clean(), "{:?} {:?}", m.error, m.diagnoses);
    assert_eq!(m.client_id, Some(None));
    assert_tiles(&m);
    // The summary's ways of reading (the header in place, the walks) agree with the tree.
    for (f, what) in [(&first, "first v3 request"), (&later, "later v3 request")] {
        common::walks_agree(f, None, what);
    }
}

/// The binary's output for a capture given as bytes.
fn kdissect_on(cap: &[u8], tag: &str, args: &[&str]) -> String {
    let path =
        std::env::temp_dir().join(format!("kdissect-newer-{tag}-{}.pcap", std::process::id()));
    std::fs::write(&path, cap).expect("write capture");
    let out = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .arg(&path)
        .env("NO_COLOR", "1")
        .output()
        .expect("run kdissect");
    let _ = std::fs::remove_file(&path);
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {out:?}"
    );
    String::from_utf8(out.stdout).expect("utf8")
}

#[test]
fn a_connection_carries_its_client_id_to_its_v3_requests() {
    let (newest, _) = api_versions_next();
    let mut api_versions = header_v2(18, newest, 1);
    // client_id "app" rather than "t".
    api_versions.splice(8..11, [0, 3, b'a', b'p', b'p']);
    let exchanges = vec![
        (
            frame(&[&api_versions, API_VERSIONS_V5_BODY]),
            frame(&[&1i32.to_be_bytes(), API_VERSIONS_RESPONSE_BODY]),
        ),
        // The first v3 request gives the client instance id; neither gives the client_id.
        (
            frame(&[
                &header_v3(47, 1, 2, None, Some(INSTANCE)),
                OFFSET_DELETE_BODY,
            ]),
            frame(&[&2i32.to_be_bytes(), OFFSET_DELETE_RESPONSE_BODY]),
        ),
        (
            frame(&[&header_v3(47, 1, 3, None, None), OFFSET_DELETE_BODY]),
            frame(&[&3i32.to_be_bytes(), OFFSET_DELETE_RESPONSE_BODY]),
        ),
        // A null client_id in an older header is null: nothing is carried to it.
        (
            frame(&[&header_v1(47, 0, 4, None), OFFSET_DELETE_BODY]),
            frame(&[&4i32.to_be_bytes(), OFFSET_DELETE_RESPONSE_BODY]),
        ),
    ];
    // Another connection, seen from its second request on: nothing to carry.
    let other = vec![(
        frame(&[&header_v3(47, 1, 9, None, None), OFFSET_DELETE_BODY]),
        frame(&[&9i32.to_be_bytes(), OFFSET_DELETE_RESPONSE_BODY]),
    )];
    let mut packets: Vec<Vec<u8>> = conversation(&exchanges, &[1500])
        .iter()
        .map(|s| packet(s, 40000, 9092))
        .collect();
    packets.extend(
        conversation(&other, &[1500])
            .iter()
            .map(|s| packet(s, 40001, 9092)),
    );
    let cap = pcap(&packets);
    let summary = kdissect_on(&cap, "carry", &["--no-progress"]);
    let requests: Vec<&str> = summary
        .lines()
        .filter(|l| l.contains(" Request "))
        .collect();
    let ids: Vec<&str> = requests
        .iter()
        .map(|l| {
            let at = l.find("client_id=").expect("client_id");
            l[at..].split(" group=").next().unwrap_or_default()
        })
        .collect();
    assert_eq!(
        ids,
        vec![
            "client_id=\"app\" software=a/b",
            "client_id=\"app\" (carried)",
            "client_id=\"app\" (carried)",
            "client_id=null",
            "client_id=null",
        ],
        "{summary}"
    );
    assert!(
        requests[1].contains("OffsetDelete v1 Request corr=2"),
        "{summary}"
    );
    // Filters see the client_id the line shows; JSON keeps what the frame holds.
    let filtered = kdissect_on(
        &cap,
        "carry-filter",
        &["--no-progress", "--messages", "-Y", "client_id == \"app\""],
    );
    assert_eq!(filtered.lines().count(), 3, "{filtered}");
    let json = kdissect_on(
        &cap,
        "carry-json",
        &["--no-progress", "--json", "-Y", "corr == 2 && request"],
    );
    let v: serde_json::Value =
        serde_json::from_str(json.lines().next().expect("a line")).expect("json");
    assert_eq!(v["client_id"], serde_json::Value::Null);
    assert_eq!(
        v["header"]["client_instance_id"],
        "01020304-0506-0708-090a-0b0c0d0e0f10"
    );
}
