//! Messages inside the bytes of others: control records' keys and values, the metadata log's
//! records, and the request, response and principal an Envelope carries. Each is checked for
//! its values, for every byte lying in exactly one leaf, and for its JSON typing.

mod common;

use bytes::{Bytes, BytesMut};
use common::{assert_tiles, kp};
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::records::{
    Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
};
use kdissect::kafka::{decode_request, decode_response, Message, Node};
use kdissect::render::json::{message, Meta};
use kdissect::render::{tree, Style};
use serde_json::Value as J;
use std::process::Command;

fn kdissect(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run");
    String::from_utf8(o.stdout).expect("utf8")
}

fn json_lines(args: &[&str]) -> Vec<J> {
    kdissect(args)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect()
}

/// Every record batch under `v` (a JSON body), wherever it sits.
fn batches(v: &J, out: &mut Vec<J>) {
    match v {
        J::Object(o) => {
            if o.contains_key("recordsCount") && o.contains_key("attributes") {
                out.push(v.clone());
            }
            o.values().for_each(|x| batches(x, out));
        }
        J::Array(a) => a.iter().for_each(|x| batches(x, out)),
        _ => {}
    }
}

/// The tree of a message as text.
fn tree_text(msg: &Message, frame: &[u8]) -> String {
    let mut out = Vec::new();
    tree::write(&mut out, &msg.root, frame, Style::default()).expect("tree");
    String::from_utf8(out).expect("utf8")
}

fn record(key: Option<Vec<u8>>, value: Option<Vec<u8>>, control: bool, offset: i64) -> Record {
    Record {
        transactional: control,
        control,
        delete_horizon: false,
        partition_leader_epoch: 3,
        producer_id: if control { 7 } else { -1 },
        producer_epoch: if control { 1 } else { -1 },
        timestamp_type: TimestampType::Creation,
        offset,
        sequence: -1,
        timestamp: 1_767_225_600_000,
        key: key.map(Bytes::from),
        value: value.map(Bytes::from),
        headers: IndexMap::new(),
    }
}

/// One record batch v2 of these records, encoded by kafka-protocol.
fn batch(records: &[Record]) -> Vec<u8> {
    let mut buf = BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        records,
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .expect("batch");
    buf.to_vec()
}

// ---------------------------------------------------------------------------------------------
// Control records (issue 17 item 4)

/// In the real transactional capture, every control record's key and value are typed objects
/// in JSON (type, version, coordinator epoch), never strings of control bytes.
#[test]
fn transaction_markers_are_typed_objects_in_json() {
    let mut markers = 0;
    for line in json_lines(&["--json", "samples/ak44-transactions.pcap"]) {
        let mut found = Vec::new();
        batches(&line["body"], &mut found);
        for b in found
            .iter()
            .filter(|b| b["attributes"].as_i64().unwrap_or(0) & 32 != 0)
        {
            for r in b["Records"].as_array().expect("records") {
                let (key, value) = (&r["key"], &r["value"]);
                assert_eq!(key["version"], 0, "{r}");
                let ty = key["Type"].as_i64().expect("Type");
                let name = ["ABORT", "COMMIT"][ty as usize];
                assert_eq!(key["Type_name"], name, "{r}");
                assert_eq!(value["version"], 0, "{r}");
                assert!(value["CoordinatorEpoch"].is_i64(), "{r}");
                markers += 1;
            }
        }
    }
    // The capture commits and aborts transactions on three partitions, read back twice.
    assert!(markers >= 6, "{markers} markers");
}

/// A control batch built by an independent encoder: the marker's type and coordinator epoch
/// are read, in the tree and in JSON, and every byte lies in one leaf.
#[test]
fn a_commit_marker_with_its_coordinator_epoch() {
    let marker = record(
        Some(vec![0, 0, 0, 1]),
        Some(vec![0, 0, 0, 0, 0, 42]),
        true,
        9,
    );
    let frame = produce_frame(&batch(&[marker]));
    let msg = decode_request(&frame);
    assert!(msg.is_clean(), "{:?} {:?}", msg.error, msg.diagnoses);
    assert_tiles(&msg);
    let text = tree_text(&msg, &frame);
    assert!(text.contains("+-- Type int16 = 1 (COMMIT)"), "{text}");
    assert!(text.contains("+-- CoordinatorEpoch int32 = 42"), "{text}");
    let j = message(&msg, &frame, &Meta::default(), false);
    let r = &j["body"]["TopicData"][0]["PartitionData"][0]["Records"][0]["Records"][0];
    assert_eq!(
        r["key"],
        serde_json::json!({"version": 0, "Type": 1, "Type_name": "COMMIT"})
    );
    assert_eq!(
        r["value"],
        serde_json::json!({"version": 0, "CoordinatorEpoch": 42})
    );
}

/// A Produce v9 request (flexible) of one partition holding `records` (a record batch).
fn produce_frame(records: &[u8]) -> Vec<u8> {
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    use kafka_protocol::messages::{ApiKey, ProduceRequest, TopicName};
    use kafka_protocol::protocol::StrBytes;
    let part = PartitionProduceData::default()
        .with_index(0)
        .with_records(Some(Bytes::copy_from_slice(records)));
    let topic = TopicProduceData::default()
        .with_name(TopicName(StrBytes::from_static_str("orders")))
        .with_partition_data(vec![part]);
    let body = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(30_000)
        .with_topic_data(vec![topic]);
    kp::request(ApiKey::Produce, 9, 1, &body)
}

/// Record keys and values are strings in JSON only when they are text by the tree's rule;
/// UTF-8 that holds control bytes is hex, as in the tree.
#[test]
fn record_bytes_are_text_only_when_they_are_text() {
    let records = [
        record(
            Some(b"k1".to_vec()),
            Some(b"line one\nline two".to_vec()),
            false,
            0,
        ),
        record(
            Some(vec![0, 0, 0, 1]),
            Some(vec![0x1b, b'[', b'0', b'm']),
            false,
            1,
        ),
        record(None, Some(vec![0xff, 0xfe]), false, 2),
    ];
    let frame = produce_frame(&batch(&records));
    let msg = decode_request(&frame);
    assert!(msg.is_clean(), "{:?} {:?}", msg.error, msg.diagnoses);
    let j = message(&msg, &frame, &Meta::default(), false);
    // The encoder writes one batch per record.
    let rs: Vec<&J> = j["body"]["TopicData"][0]["PartitionData"][0]["Records"]
        .as_array()
        .expect("batches")
        .iter()
        .flat_map(|b| b["Records"].as_array().expect("records"))
        .collect();
    assert_eq!(rs.len(), 3);
    assert_eq!(rs[0]["key"], "k1");
    assert_eq!(rs[0]["value"], "line one\nline two");
    assert_eq!(rs[1]["key"], serde_json::json!({"hex": "00000001"}));
    assert_eq!(rs[1]["value"], serde_json::json!({"hex": "1b5b306d"}));
    assert!(rs[2]["key"].is_null());
    assert_eq!(rs[2]["value"], serde_json::json!({"hex": "fffe"}));
}

/// Over every sample: no record key, value or header value is a JSON string holding a
/// control character other than tab or newline.
#[test]
fn no_sample_writes_control_bytes_as_a_string() {
    fn walk(v: &J, key: &str, bad: &mut Vec<String>) {
        match v {
            J::Object(o) => o.iter().for_each(|(k, x)| walk(x, k, bad)),
            J::Array(a) => a.iter().for_each(|x| walk(x, key, bad)),
            J::String(s)
                if ["key", "value", "headerKey", "headerValue"].contains(&key)
                    && s.chars().any(|c| c.is_control() && c != '\n' && c != '\t') =>
            {
                bad.push(format!("{key}: {s:?}"));
            }
            _ => {}
        }
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let mut bad = Vec::new();
    let mut files = 0;
    for e in std::fs::read_dir(dir).expect("samples").flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "pcap") || p.to_string_lossy().contains("ssl") {
            continue;
        }
        let port = if p.to_string_lossy().contains("19092") {
            "19092"
        } else {
            "9092"
        };
        for l in json_lines(&["--json", "-p", port, &p.to_string_lossy()]) {
            walk(&l["body"], "", &mut bad);
        }
        files += 1;
    }
    assert!(files > 40, "{files}");
    assert!(bad.is_empty(), "{bad:?}");
}

/// The nodes under a record's key or value: what the embedded decoding made of it.
#[allow(dead_code)]
fn children_names(n: &Node) -> Vec<String> {
    n.children.iter().map(|c| c.name.to_string()).collect()
}

#[allow(dead_code)]
fn response(frame: &[u8], key: i16, v: i16) -> Message {
    decode_response(frame, key, v)
}
