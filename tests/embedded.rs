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
    tree::write(&mut out, msg.root(), frame, Style::default()).expect("tree");
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

// ---------------------------------------------------------------------------------------------
// The KRaft metadata log (issue 17 item 7)

/// The metadata log's topic id.
const METADATA_TOPIC: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
const ORDERS_ID: [u8; 16] = [0xaa; 16];

fn uvarint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A metadata record's value as Kafka's serde writes it: frame version 1, type, version, then
/// `body` (the record, encoded by hand here, independently of kdissect).
fn metadata_value(record_type: u32, version: u32, body: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    uvarint(&mut v, 1);
    uvarint(&mut v, record_type);
    uvarint(&mut v, version);
    v.extend_from_slice(body);
    v
}

/// TopicRecord v0: a compact string, a uuid, no tagged fields.
fn topic_record(name: &str, id: [u8; 16]) -> Vec<u8> {
    let mut b = Vec::new();
    uvarint(&mut b, name.len() as u32 + 1);
    b.extend_from_slice(name.as_bytes());
    b.extend_from_slice(&id);
    b.push(0);
    metadata_value(2, 0, &b)
}

/// PartitionChangeRecord v0 of partition `p`: a new leader and ISR, as tagged fields 0 and 1.
fn partition_change(p: i32, leader: i32, isr: &[i32]) -> Vec<u8> {
    let mut b = p.to_be_bytes().to_vec();
    b.extend_from_slice(&ORDERS_ID);
    b.push(2); // two tagged fields
    let mut isr_bytes = Vec::new();
    uvarint(&mut isr_bytes, isr.len() as u32 + 1);
    isr.iter()
        .for_each(|r| isr_bytes.extend_from_slice(&r.to_be_bytes()));
    b.push(0);
    uvarint(&mut b, isr_bytes.len() as u32);
    b.extend_from_slice(&isr_bytes);
    b.push(1);
    b.push(4);
    b.extend_from_slice(&leader.to_be_bytes());
    metadata_value(5, 0, &b)
}

/// BrokerRegistrationChangeRecord v1 of broker 2: fenced (tag 0 = 1).
fn broker_fenced(broker: i32, epoch: i64) -> Vec<u8> {
    let mut b = broker.to_be_bytes().to_vec();
    b.extend_from_slice(&epoch.to_be_bytes());
    b.extend_from_slice(&[1, 0, 1, 1]); // one tagged field: tag 0, size 1, Fenced = 1
    metadata_value(17, 1, &b)
}

/// A LeaderChangeMessage control record (type 2), its value encoded by kafka-protocol.
fn leader_change(leader: i32, voters: &[i32]) -> Record {
    use kafka_protocol::messages::leader_change_message::Voter;
    use kafka_protocol::messages::{BrokerId, LeaderChangeMessage};
    use kafka_protocol::protocol::Encodable;
    let vs: Vec<Voter> = voters
        .iter()
        .map(|v| Voter::default().with_voter_id(*v))
        .collect();
    let m = LeaderChangeMessage::default()
        .with_version(0)
        .with_leader_id(BrokerId(leader))
        .with_voters(vs.clone())
        .with_granting_voters(vs);
    let mut buf = BytesMut::new();
    m.encode(&mut buf, 0).expect("leader change");
    let mut r = record(Some(vec![0, 0, 0, 2]), Some(buf.to_vec()), true, 0);
    r.transactional = false;
    r.producer_id = -1;
    r.producer_epoch = -1;
    r
}

/// A Fetch v17 response (flexible, topics by id) of one partition of `topic` holding
/// `records`.
fn fetch_response(topic: [u8; 16], records: &[u8]) -> Vec<u8> {
    use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
    use kafka_protocol::messages::{ApiKey, FetchResponse};
    let part = PartitionData::default()
        .with_partition_index(0)
        .with_high_watermark(200)
        .with_records(Some(Bytes::copy_from_slice(records)));
    let t = FetchableTopicResponse::default()
        .with_topic_id(hex::encode(topic).parse().expect("uuid"))
        .with_partitions(vec![part]);
    let body = FetchResponse::default().with_responses(vec![t]);
    kp::response(ApiKey::Fetch, 17, 3, &body)
}

/// The metadata log's records: decoded as the record of their type, what they change said
/// on the summary line (brokers first, then topics, then partitions; records that change
/// nothing counted by type), the topic named `__cluster_metadata` wherever its id is shown.
#[test]
fn metadata_log_records_are_decoded_by_type() {
    let values = [
        topic_record("orders", ORDERS_ID),
        partition_change(0, 2, &[2, 3]),
        partition_change(1, 3, &[3]),
        partition_change(2, -1, &[]),
        broker_fenced(2, 7),
    ];
    let data: Vec<Record> = values
        .iter()
        .enumerate()
        .map(|(i, v)| record(None, Some(v.clone()), false, 100 + i as i64))
        .collect();
    let mut records = batch(&data);
    records.extend(batch(&[leader_change(3, &[1, 2, 3])]));
    let frame = fetch_response(METADATA_TOPIC, &records);
    let msg = decode_response(&frame, 1, 17);
    assert!(msg.is_clean(), "{:?} {:?}", msg.error, msg.diagnoses);
    assert_tiles(&msg);
    assert_eq!(
        msg.record_types.types,
        vec![
            ("PartitionChangeRecord", 3),
            ("TopicRecord", 1),
            ("BrokerRegistrationChangeRecord", 1),
            ("LeaderChangeMessage", 1),
        ]
    );
    let words = kdissect::render::summary::essentials(&msg);
    assert!(
        words.contains(
            "topics=[__cluster_metadata] partitions=1 records=6 (") && words.ends_with(
            "bytes) [BrokerRegistrationChange broker=2 epoch=7 unfenced→fenced, Topic created orders, \
             PartitionChange orders-0 leader=2 isr=[2,3], +2 more, LeaderChangeMessage×1]"
        ),
        "{words}"
    );
    let text = tree_text(&msg, &frame);
    for want in [
        "TopicId uuid = 00000000-0000-0000-0000-000000000001 (__cluster_metadata)",
        "value varbytes = PartitionChangeRecord v0",
        "record_type uvarint = 5 (PartitionChangeRecord)",
        "Name string = \"orders\"",
        "Fenced int8 = 1 (FENCED)",
        "value varbytes = LeaderChangeMessage v0",
        "LeaderId int32 = 3",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
    let j = message(&msg, &frame, &Meta::default(), false);
    let topic = &j["body"]["Responses"][0];
    assert_eq!(topic["TopicId_name"], "__cluster_metadata");
    let batches = topic["Partitions"][0]["Records"]
        .as_array()
        .expect("batches");
    let values: Vec<&J> = batches
        .iter()
        .flat_map(|b| b["Records"].as_array().expect("records"))
        .map(|r| &r["value"])
        .collect();
    assert_eq!(values[0]["record_type_name"], "TopicRecord");
    assert_eq!(values[0]["Name"], "orders");
    assert_eq!(values[0]["TopicId"], "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa");
    assert_eq!(values[1]["record_type"], 5);
    assert_eq!(values[1]["Leader"], 2);
    assert_eq!(values[1]["Isr"], serde_json::json!([2, 3]));
    assert_eq!(values[3]["Leader"], -1);
    assert_eq!(values[4]["Fenced"], 1);
    assert_eq!(values[4]["Fenced_name"], "FENCED");
    assert_eq!(values[4]["BrokerEpoch"], 7);
    assert_eq!(values[5]["LeaderId"], 3);
    assert_eq!(values[5]["Voters"][2]["VoterId"], 3);
}

/// The summary and statistics views decode only two levels and no records: the metadata
/// log's record types are counted all the same.
#[test]
fn record_types_are_counted_in_the_summary_view() {
    use kdissect::kafka::message::decode_response_with;
    use kdissect::kafka::DecodeOptions;
    let data = [record(None, Some(partition_change(0, 1, &[1])), false, 0)];
    let frame = fetch_response(METADATA_TOPIC, &batch(&data));
    let opts = DecodeOptions {
        keep_depth: 2,
        records: false,
        ..DecodeOptions::default()
    };
    let msg = decode_response_with(&frame, 1, 17, opts);
    assert!(msg.is_clean(), "{:?}", msg.diagnoses);
    assert_eq!(msg.record_types.types, vec![("PartitionChangeRecord", 1)]);
}

/// Records of any other topic stay plain bytes, even when they would read as metadata.
#[test]
fn other_topics_keep_plain_record_values() {
    let data = [record(None, Some(partition_change(0, 1, &[1])), false, 0)];
    let frame = fetch_response(ORDERS_ID, &batch(&data));
    let msg = decode_response(&frame, 1, 17);
    assert!(msg.is_clean());
    assert!(msg.record_types.is_empty());
    let text = tree_text(&msg, &frame);
    assert!(!text.contains("PartitionChangeRecord"), "{text}");
    let words = kdissect::render::summary::essentials(&msg);
    assert!(words.ends_with(" bytes)"), "{words}");
}

/// A Fetch that names the topic by name (v12 and older) reads the metadata log the same way;
/// a damaged record is diagnosed and the rest of its value shown raw, the message going on.
#[test]
fn the_metadata_log_by_name_and_a_damaged_record() {
    use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
    use kafka_protocol::messages::{ApiKey, FetchResponse, TopicName};
    use kafka_protocol::protocol::StrBytes;
    let mut cut = partition_change(0, 1, &[1]);
    cut.truncate(cut.len() - 3);
    let data = [
        record(None, Some(topic_record("t", ORDERS_ID)), false, 0),
        record(None, Some(cut), false, 1),
    ];
    let part = PartitionData::default()
        .with_partition_index(0)
        .with_records(Some(Bytes::from(batch(&data))));
    let t = FetchableTopicResponse::default()
        .with_topic(TopicName(StrBytes::from_static_str("__cluster_metadata")))
        .with_partitions(vec![part]);
    let body = FetchResponse::default().with_responses(vec![t]);
    let frame = kp::response(ApiKey::Fetch, 12, 3, &body);
    let msg = decode_response(&frame, 1, 12);
    assert_tiles(&msg);
    assert!(msg.error.is_none(), "{:?}", msg.error);
    assert!(
        msg.diagnoses
            .iter()
            .any(|d| d.to_string().starts_with("record value: ")),
        "{:?}",
        msg.diagnoses
    );
    assert_eq!(msg.record_types.types, vec![("TopicRecord", 1)]);
    let text = tree_text(&msg, &frame);
    assert!(text.contains("value varbytes = malformed: "), "{text}");
}

// ---------------------------------------------------------------------------------------------
// Envelope (issue 17 item 6)

/// An IncrementalAlterConfigs v1 request setting retention.ms of topic `payments`, as the
/// client sent it (header and body, no size prefix).
fn alter_configs_payload() -> Vec<u8> {
    use kafka_protocol::messages::incremental_alter_configs_request::{
        AlterConfigsResource, AlterableConfig,
    };
    use kafka_protocol::messages::{ApiKey, IncrementalAlterConfigsRequest};
    use kafka_protocol::protocol::StrBytes;
    let config = AlterableConfig::default()
        .with_name(StrBytes::from_static_str("retention.ms"))
        .with_config_operation(0)
        .with_value(Some(StrBytes::from_static_str("86400000")));
    let res = AlterConfigsResource::default()
        .with_resource_type(2)
        .with_resource_name(StrBytes::from_static_str("payments"))
        .with_configs(vec![config]);
    let body = IncrementalAlterConfigsRequest::default().with_resources(vec![res]);
    kp::request_payload(
        ApiKey::IncrementalAlterConfigs,
        1,
        41,
        "adminclient-1",
        &body,
    )
}

/// DefaultPrincipalData v0 with its int16 version first, as Kafka serializes a principal.
fn principal(name: &str) -> Vec<u8> {
    use kafka_protocol::messages::DefaultPrincipalData;
    use kafka_protocol::protocol::{Encodable, StrBytes};
    let p = DefaultPrincipalData::default()
        .with_type(StrBytes::from_static_str("User"))
        .with_name(StrBytes::from_string(name.to_string()))
        .with_token_authenticated(false);
    let mut buf = BytesMut::new();
    buf.extend_from_slice(&0i16.to_be_bytes());
    p.encode(&mut buf, 0).expect("principal");
    buf.to_vec()
}

/// The Envelope a broker forwards to the controller: the client's request, its principal and
/// its address.
fn envelope_request(inner: &[u8]) -> Vec<u8> {
    use kafka_protocol::messages::{ApiKey, EnvelopeRequest};
    let body = EnvelopeRequest::default()
        .with_request_data(Bytes::copy_from_slice(inner))
        .with_request_principal(Some(Bytes::from(principal("alice"))))
        .with_client_host_address(Bytes::from_static(&[10, 0, 0, 7]));
    kp::request(ApiKey::Envelope, 0, 9, &body)
}

/// The controller's answer: the IncrementalAlterConfigs v1 response (error 40 for the
/// resource) inside an Envelope response.
fn envelope_response() -> Vec<u8> {
    use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
    use kafka_protocol::messages::{ApiKey, EnvelopeResponse, IncrementalAlterConfigsResponse};
    use kafka_protocol::protocol::StrBytes;
    let res = AlterConfigsResourceResponse::default()
        .with_error_code(40)
        .with_resource_type(2)
        .with_resource_name(StrBytes::from_static_str("payments"));
    let inner = IncrementalAlterConfigsResponse::default().with_responses(vec![res]);
    let payload = kp::response_payload(ApiKey::IncrementalAlterConfigs, 1, 41, &inner);
    let body = EnvelopeResponse::default().with_response_data(Some(Bytes::from(payload)));
    kp::response(ApiKey::Envelope, 0, 9, &body)
}

#[test]
fn an_envelope_request_carries_the_request_and_the_principal() {
    let frame = envelope_request(&alter_configs_payload());
    let msg = decode_request(&frame);
    assert!(msg.is_clean(), "{:?} {:?}", msg.error, msg.diagnoses);
    assert_tiles(&msg);
    let e = msg.embedded.as_ref().expect("embedded request");
    assert_eq!(
        (e.api_key, e.api_version, e.correlation_id),
        (Some(44), Some(1), Some(41))
    );
    assert_eq!(e.client_id, Some(Some("adminclient-1".to_string())));
    let text = tree_text(&msg, &frame);
    for want in [
        "+-- RequestData bytes = IncrementalAlterConfigs v1 request",
        "|   +-- RequestHeader v2",
        "|   |   +-- request_api_key int16 = 44 (IncrementalAlterConfigs)",
        "|   +-- IncrementalAlterConfigsRequest struct",
        "ResourceName string = \"payments\"",
        "ConfigOperation int8 = 0 (SET)",
        "+-- RequestPrincipal bytes = DefaultPrincipalData v0",
        "Name string = \"alice\"",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
    let j = message(&msg, &frame, &Meta::default(), false);
    let rd = &j["body"]["RequestData"];
    assert_eq!(rd["header"]["request_api_key"], 44);
    assert_eq!(rd["header"]["client_id"], "adminclient-1");
    assert_eq!(rd["body"]["Resources"][0]["ResourceName"], "payments");
    assert_eq!(
        rd["body"]["Resources"][0]["Configs"][0]["Value"],
        "86400000"
    );
    assert_eq!(
        j["body"]["RequestPrincipal"],
        serde_json::json!({"version": 0, "Type": "User", "Name": "alice", "TokenAuthenticated": false})
    );
    assert_eq!(j["embedded"]["api_name"], "IncrementalAlterConfigs");
    assert_eq!(j["embedded"]["correlation_id"], 41);
}

/// The response is decoded with the API and version of the request its request carried:
/// paired in a conversation, its errors named, every byte in one leaf.
#[test]
fn an_envelope_response_is_read_as_the_embedded_request_asked() {
    use kdissect::kafka::frames::{Conversation, ResponseHint};
    let mut conv = Conversation::default();
    let req = envelope_request(&alter_configs_payload());
    let resp = envelope_response();
    conv.decode(&req, &ResponseHint::default());
    let msg = conv.decode(&resp, &ResponseHint::default());
    assert_eq!(msg.api_key, Some(58));
    assert!(msg.is_clean(), "{:?} {:?}", msg.error, msg.diagnoses);
    assert_tiles(&msg);
    let e = msg.embedded.as_ref().expect("embedded response");
    assert_eq!(
        (e.api_key, e.api_version, e.correlation_id),
        (Some(44), Some(1), Some(41))
    );
    let paths = |v: &[kdissect::kafka::problem::ErrorEntry]| {
        v.iter()
            .map(|e| (e.path.to_string(), e.code))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        paths(&e.errors),
        vec![("Responses[0].ErrorCode".to_string(), 40)]
    );
    assert!(paths(&msg.errors).contains(&("ResponseData.Responses[0].ErrorCode".to_string(), 40)));
    let text = tree_text(&msg, &resp);
    assert!(
        text.contains("+-- ResponseData bytes = IncrementalAlterConfigs v1 response"),
        "{text}"
    );
    assert!(
        text.contains("ErrorCode int16 = 40 (INVALID_CONFIG)"),
        "{text}"
    );
    let j = message(&msg, &resp, &Meta::default(), false);
    assert_eq!(j["body"]["ResponseData"]["header"]["correlation_id"], 41);
    assert_eq!(
        j["body"]["ResponseData"]["body"]["Responses"][0]["ErrorCode"],
        40
    );
    // Alone, with its request not captured, the response's bytes stay raw and say why.
    let alone = decode_response(&resp, 58, 0);
    assert!(alone.is_clean());
    assert_tiles(&alone);
    assert!(tree_text(&alone, &resp).contains("its request was not captured"));
}

/// The summary names the embedded API: `Envelope[IncrementalAlterConfigs v1]`, and what the
/// embedded message is about.
#[test]
fn the_summary_names_the_embedded_api() {
    let (dir, file) = envelope_capture("summary");
    let out = kdissect(&["-p", "9093", &file.to_string_lossy()]);
    if let Some(keep) = std::env::var_os("KDISSECT_KEEP_ENVELOPE") {
        std::fs::copy(&file, keep).expect("keep");
    }
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].contains("Envelope[IncrementalAlterConfigs v1] v0 Request corr=9")
            && lines[0]
                .contains("inner_corr=41 inner_client_id=\"adminclient-1\" resources=[payments]"),
        "{out}"
    );
    assert!(
        lines[1].contains("Envelope[IncrementalAlterConfigs v1] v0 Response corr=9")
            && lines[1].contains("inner_corr=41 topics=[payments(INVALID_CONFIG)]"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A capture of one Envelope exchange on port 9093, in a folder of its own (removed by the
/// caller).
fn envelope_capture(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    use common::pcapgen::{conversation, packet, pcap};
    let dir = std::env::temp_dir().join(format!("kd-envelope-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("envelope.pcap");
    let exchanges = [(
        envelope_request(&alter_configs_payload()),
        envelope_response(),
    )];
    let segs = conversation(&exchanges, &[1500]);
    let packets: Vec<Vec<u8>> = segs.iter().map(|s| packet(s, 40000, 9093)).collect();
    std::fs::write(&file, pcap(&packets)).expect("write");
    (dir, file)
}

/// The JSON of an Envelope exchange validates against docs/kdissect.schema.json, its
/// `embedded` key included, with and without spans.
#[test]
fn envelope_json_validates_against_the_schema() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/kdissect.schema.json"),
    )
    .expect("schema");
    let schema: J = serde_json::from_str(&text).expect("schema json");
    let v = jsonschema::validator_for(&schema).expect("valid schema");
    let (dir, file) = envelope_capture("json");
    for spans in [false, true] {
        let mut args = vec!["--json", "-p", "9093"];
        if spans {
            args.push("--json-spans");
        }
        let f = file.to_string_lossy().into_owned();
        args.push(&f);
        let lines = json_lines(&args);
        assert_eq!(lines.len(), 2);
        for l in &lines {
            if let Err(e) = v.validate(l) {
                panic!("{e}\n{l}");
            }
            assert_eq!(l["embedded"]["api_key"], 44, "{l}");
        }
        assert_eq!(lines[1]["embedded"]["direction"], "response");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A damaged embedded request is diagnosed; the envelope's other fields still decode.
#[test]
fn a_damaged_embedded_request_does_not_stop_the_envelope() {
    let mut inner = alter_configs_payload();
    inner.truncate(inner.len() - 6);
    let frame = envelope_request(&inner);
    let msg = decode_request(&frame);
    assert!(msg.error.is_none(), "{:?}", msg.error);
    assert_tiles(&msg);
    assert!(
        msg.diagnoses
            .iter()
            .any(|d| d.to_string().starts_with("RequestData: embedded: ")),
        "{:?}",
        msg.diagnoses
    );
    let text = tree_text(&msg, &frame);
    assert!(text.contains("Name string = \"alice\""), "{text}");
}

/// Every byte of an Envelope exchange and of a metadata log answer damaged in turn: decoding
/// never panics, and every byte still lies in exactly one leaf.
#[test]
fn damaged_embedded_messages_still_tile() {
    let metadata = {
        let data = [
            record(None, Some(topic_record("orders", ORDERS_ID)), false, 0),
            record(None, Some(broker_fenced(1, 2)), false, 1),
        ];
        let mut r = batch(&data);
        r.extend(batch(&[leader_change(1, &[1, 2])]));
        fetch_response(METADATA_TOPIC, &r)
    };
    let request = envelope_request(&alter_configs_payload());
    let answer = envelope_response();
    let mut decoded = 0;
    for (frame, api) in [
        (&request, None),
        (&answer, Some((58, 0))),
        (&metadata, Some((1, 17))),
    ] {
        for at in 4..frame.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut f = frame.clone();
                f[at] ^= flip;
                let msg = match api {
                    None => decode_request(&f),
                    Some((k, v)) => kdissect::kafka::message::decode_response_embedding(
                        &f,
                        (k, v),
                        Some((44, 1)),
                        Default::default(),
                    ),
                };
                assert_tiles(&msg);
                decoded += 1;
            }
        }
    }
    assert!(decoded > 1000, "{decoded}");
}
