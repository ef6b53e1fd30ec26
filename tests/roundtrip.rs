//! Round trips through an independent encoder. Every version of Metadata, ApiVersions,
//! DescribeCluster and DescribeTopicPartitions, requests and responses, is built with the
//! `kafka-protocol` crate, framed with its header and size prefix, decoded by kdissect and
//! compared field by field with what was put in. Each frame's facts are also gathered the
//! summary's three ways (tree, interpreted walk, generated walk), which must agree.

mod common;

use bytes::{Bytes, BytesMut};
use common::{assert_tiles, boolean, count, get, has, int, ints, string, uuid};
use kafka_protocol::messages::api_versions_response::{
    ApiVersion, FinalizedFeatureKey, SupportedFeatureKey,
};
use kafka_protocol::messages::describe_cluster_response::DescribeClusterBroker;
use kafka_protocol::messages::describe_topic_partitions_request::{
    Cursor as RequestCursor, TopicRequest,
};
use kafka_protocol::messages::describe_topic_partitions_response::{
    Cursor as ResponseCursor, DescribeTopicPartitionsResponsePartition,
    DescribeTopicPartitionsResponseTopic,
};
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::metadata_response::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, BrokerId, DescribeClusterRequest,
    DescribeClusterResponse, DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse,
    MetadataRequest, MetadataResponse, RequestHeader, ResponseHeader, TopicName,
};
use kafka_protocol::protocol::{Encodable, StrBytes};
use kdissect::kafka::{decode_request, decode_response, Message, Node, NodeKind, Value};
use std::collections::BTreeMap;
use std::str::FromStr;

// ---------------------------------------------------------------------------------------------
// Content shared by the messages.

/// Client ids of the three variants built for every version: non-empty, empty, null.
const CLIENT_IDS: [Option<&str>; 3] = [Some("kdissect-roundtrip"), Some(""), None];

/// Unknown tagged fields added to every struct of variant 2: a one-byte tag with a short value,
/// and a two-byte tag whose 300-byte value needs a two-byte size.
const UNKNOWN_TAGS: [(i32, &[u8]); 2] = [(7, &[0x01, 0x02, 0x03]), (300, &[0x5a; 300])];

/// Variant 2 carries unknown tagged fields (written only in flexible versions).
fn tags(k: usize) -> BTreeMap<i32, Bytes> {
    if k != 2 {
        return BTreeMap::new();
    }
    UNKNOWN_TAGS
        .iter()
        .map(|&(t, d)| (t, Bytes::from_static(d)))
        .collect()
}

/// Authorized-operation bitfields: topic READ|WRITE|CREATE|DELETE|ALTER|DESCRIBE|DESCRIBE_CONFIGS|
/// ALTER_CONFIGS; topic READ|DESCRIBE; cluster CREATE|ALTER|DESCRIBE|CLUSTER_ACTION|
/// DESCRIBE_CONFIGS|ALTER_CONFIGS|IDEMPOTENT_WRITE. i32::MIN is "not requested".
const TOPIC_OPS: i32 = 0x0df8;
const READ_DESCRIBE_OPS: i32 = 0x0108;
const CLUSTER_OPS: i32 = 0x1f90;

const ORDERS_ID: u128 = 0x4f72_6465_7273_4a1b_9c3d_5e7f_8091_a2b3;
const PAYMENTS_ID: u128 = 0x5061_796d_656e_4d2c_8e4f_6a7b_8c9d_aebf;
const OFFSETS_ID: u128 = 0x5f5f_636f_6e73_4e3d_af50_7b8c_9dae_bfc0;
const CLICKSTREAM_ID: u128 = 0x636c_6963_6b73_4f4e_b061_8c9d_aebf_c0d1;

struct Part {
    error: i16,
    index: i32,
    leader: i32,
    epoch: i32,
    replicas: &'static [i32],
    isr: &'static [i32],
    offline: &'static [i32],
    elr: Option<&'static [i32]>,
    last_known_elr: Option<&'static [i32]>,
}

struct Topic {
    error: i16,
    /// `None` for a topic that does not exist (in versions where Name is nullable).
    name: Option<&'static str>,
    id: u128,
    internal: bool,
    parts: &'static [Part],
    ops: i32,
}

const TOPICS: [Topic; 3] = [
    Topic {
        error: 0,
        name: Some("orders"),
        id: ORDERS_ID,
        internal: false,
        ops: TOPIC_OPS,
        parts: &[
            Part {
                error: 0,
                index: 0,
                leader: 1,
                epoch: 17,
                replicas: &[1, 2, 3],
                isr: &[1, 2, 3],
                offline: &[],
                elr: Some(&[]),
                last_known_elr: None,
            },
            Part {
                error: 0,
                index: 1,
                leader: 2,
                epoch: 4,
                replicas: &[2, 3, 1],
                isr: &[2, 3],
                offline: &[],
                elr: Some(&[3]),
                last_known_elr: Some(&[1]),
            },
            Part {
                error: 5, // LEADER_NOT_AVAILABLE
                index: 2,
                leader: -1,
                epoch: -1,
                replicas: &[3, 1, 2],
                isr: &[],
                offline: &[3],
                elr: None,
                last_known_elr: Some(&[3, 1]),
            },
        ],
    },
    Topic {
        error: 3, // UNKNOWN_TOPIC_OR_PARTITION
        name: None,
        id: 0,
        internal: false,
        ops: i32::MIN,
        parts: &[],
    },
    Topic {
        error: 0,
        name: Some("__consumer_offsets"),
        id: OFFSETS_ID,
        internal: true,
        ops: READ_DESCRIBE_OPS,
        parts: &[Part {
            error: 9, // REPLICA_NOT_AVAILABLE
            index: 0,
            leader: 3,
            epoch: 0,
            replicas: &[3, 1],
            isr: &[3],
            offline: &[1],
            elr: None,
            last_known_elr: None,
        }],
    },
];

/// (id, host, port, rack, fenced)
const BROKERS: [(i32, &str, i32, Option<&str>, bool); 3] = [
    (
        1,
        "kafka-1.example.internal",
        9092,
        Some("eu-west-1a"),
        false,
    ),
    (2, "kafka-2.example.internal", 9093, None, true),
    (3, LONG_HOST, 19092, Some(""), false),
];

/// A topic with 150 partitions: its partition arrays need a two-byte compact length.
fn clickstream() -> &'static Topic {
    const RS: [&[i32]; 3] = [&[1, 2, 3], &[2, 3, 1], &[3, 1, 2]];
    let parts = (0..150)
        .map(|n| Part {
            error: 0,
            index: n,
            leader: n % 3 + 1,
            epoch: 2 + n % 5,
            replicas: RS[n as usize % 3],
            isr: &RS[n as usize % 3][..2],
            offline: &[],
            elr: Some(&[]),
            last_known_elr: None,
        })
        .collect::<Vec<_>>();
    let t = Topic {
        error: 0,
        name: Some("clickstream"),
        id: CLICKSTREAM_ID,
        internal: false,
        parts: parts.leak(),
        ops: TOPIC_OPS,
    };
    Box::leak(Box::new(t))
}

/// A host name longer than 127 bytes: its compact length needs a two-byte varint.
const LONG_HOST: &str = "kafka-broker-3.kafka-broker-headless.streaming-data-platform-production.svc.cluster.local.eu-west-1.compute.internal.example.com";

/// Variant 1 is the sparse one (only the failed topic and a single broker), variant 2 the big one.
fn topics(k: usize) -> Vec<&'static Topic> {
    match k {
        1 => vec![&TOPICS[1]],
        2 => TOPICS.iter().chain([clickstream()]).collect(),
        _ => TOPICS.iter().collect(),
    }
}

fn brokers(k: usize) -> &'static [(i32, &'static str, i32, Option<&'static str>, bool)] {
    if k == 1 {
        &BROKERS[..1]
    } else {
        &BROKERS
    }
}

fn st(s: &'static str) -> StrBytes {
    StrBytes::from_static_str(s)
}

fn tn(s: &'static str) -> TopicName {
    TopicName(st(s))
}

fn bids(ids: &[i32]) -> Vec<BrokerId> {
    ids.iter().map(|&i| BrokerId(i)).collect()
}

/// A uuid of whatever type kafka-protocol uses, from its 128-bit value.
fn uid<T: FromStr>(n: u128) -> T
where
    T::Err: std::fmt::Debug,
{
    format!("{n:032x}").parse().unwrap()
}

fn correlation(v: i16, k: usize) -> i32 {
    [i32::from(v), 0x7ead_0000 + i32::from(v), -2 - i32::from(v)][k]
}

// ---------------------------------------------------------------------------------------------
// Expected values.

/// A value expected at a path of the decoded body.
#[derive(Debug, PartialEq)]
enum W {
    I(i64),
    S(Option<String>),
    B(bool),
    U([u8; 16]),
    /// An int array, `None` when null.
    A(Option<Vec<i64>>),
    /// Element count of a struct array, `None` when null.
    N(Option<usize>),
    /// A nullable struct: present or null.
    Present(bool),
}

fn s(x: &str) -> W {
    W::S(Some(x.to_string()))
}

fn os(x: Option<&str>) -> W {
    W::S(x.map(str::to_string))
}

fn i(x: impl Into<i64>) -> W {
    W::I(x.into())
}

fn ids(x: &[BrokerId]) -> W {
    W::A(Some(x.iter().map(|b| i64::from(b.0)).collect()))
}

fn oids(x: &Option<Vec<BrokerId>>) -> W {
    match x {
        Some(v) => ids(v),
        None => W::A(None),
    }
}

/// A decoded frame with what identifies it in assertion messages.
struct Got {
    msg: Message,
    frame: Vec<u8>,
    ctx: String,
}

impl Got {
    /// Checks fields under `prefix`: present ones equal to the expectation, absent ones (not
    /// in this version) not decoded at all.
    fn expect(&self, prefix: &str, fields: &[(&str, bool, W)]) {
        let (msg, ctx) = (&self.msg, &self.ctx);
        for (name, present, want) in fields {
            let path = if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}.{name}")
            };
            if !present {
                assert!(
                    !has(msg, &path),
                    "{ctx}: {path} is not in this version but was decoded"
                );
                continue;
            }
            assert!(has(msg, &path), "{ctx}: {path} is missing");
            let got = match want {
                W::I(_) => W::I(int(msg, &path)),
                W::S(_) => W::S(string(msg, &path)),
                W::B(_) => W::B(boolean(msg, &path)),
                W::U(_) => W::U(uuid(msg, &path)),
                W::A(_) => {
                    let v = ints(msg, &path);
                    assert_eq!(
                        count(msg, &path),
                        v.as_ref().map(Vec::len),
                        "{ctx}: {path} count"
                    );
                    W::A(v)
                }
                W::N(_) => W::N(count(msg, &path)),
                W::Present(_) => {
                    let n = get(msg, &path);
                    let p = n.child("present").and_then(Node::as_int);
                    match (&n.value, p) {
                        (Value::Struct, Some(1)) => W::Present(true),
                        (Value::Null, Some(-1)) => W::Present(false),
                        other => panic!("{ctx}: {path} is {other:?}"),
                    }
                }
            };
            assert_eq!(&got, want, "{ctx}: {path}");
        }
    }

    /// Checks the unknown tagged fields of the struct at `path` ("" = body): those of the
    /// oracle in flexible versions, none otherwise.
    fn tags(&self, path: &str, want: &BTreeMap<i32, Bytes>, flexible: bool) {
        let node = if path.is_empty() {
            self.msg.body().expect("body")
        } else {
            get(&self.msg, path)
        };
        self.node_tags(node, path, want, flexible);
    }

    fn node_tags(&self, node: &Node, what: &str, want: &BTreeMap<i32, Bytes>, flexible: bool) {
        let got: Vec<(i64, Vec<u8>)> = node
            .children
            .iter()
            .filter(|c| c.ty == "tagged_field" && c.name.starts_with("unknown_tag_"))
            .map(|c| {
                let tag = c.child("tag").and_then(Node::as_int).expect("tag");
                match c.child("data").map(|d| &d.value) {
                    Some(Value::Bytes(Some((o, l)))) => (tag, self.frame[*o..o + l].to_vec()),
                    other => panic!("{}: {what} unknown tag {tag} data is {other:?}", self.ctx),
                }
            })
            .collect();
        let want: Vec<(i64, Vec<u8>)> = match flexible {
            true => want
                .iter()
                .map(|(t, d)| (i64::from(*t), d.to_vec()))
                .collect(),
            false => Vec::new(),
        };
        assert_eq!(got, want, "{}: unknown tagged fields of {what:?}", self.ctx);
    }

    /// The tag number of a known tagged field of the body, `None` if it is not tagged.
    fn tag_of(&self, name: &str) -> Option<i64> {
        let n = self.msg.body().expect("body").child(name)?;
        (n.ty == "tagged_field").then(|| n.child("tag").and_then(Node::as_int).expect("tag"))
    }
}

/// Checks what every decoded frame must satisfy, whatever its direction.
fn common_checks(msg: &Message, frame: &[u8], ctx: &str, key: ApiKey, v: i16, corr: i32) {
    assert!(
        msg.is_clean(),
        "{ctx}: not clean: {:?} {:?}\n{}",
        msg.error,
        msg.diagnoses,
        hex(frame)
    );
    assert_tiles(msg);
    assert_eq!(msg.size, frame.len(), "{ctx}: size");
    assert_eq!(msg.api_key, Some(key as i16), "{ctx}: api_key");
    assert_eq!(msg.api_version, Some(v), "{ctx}: api_version");
    assert_eq!(msg.correlation_id, Some(corr), "{ctx}: correlation_id");
    assert!(msg.body().is_some(), "{ctx}: no body");
    msg.root().walk(&mut |n, _| {
        let elems = n.children.iter().filter(|c| c.index.is_some()).count();
        match n.value {
            Value::Array(c) => assert_eq!(
                c, elems,
                "{ctx}: {} has {c} elements, {elems} nodes",
                n.name
            ),
            Value::Null => assert!(elems == 0, "{ctx}: null {} has elements", n.name),
            _ => {}
        }
        if let Some(tc) = n.children.iter().find(|c| c.kind == NodeKind::TagCount) {
            let fields = n.children.iter().filter(|c| c.ty == "tagged_field").count() as i64;
            assert_eq!(
                tc.as_int(),
                Some(fields),
                "{ctx}: tagged field count of {}",
                n.name
            );
        }
    });
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn sized(buf: BytesMut) -> Vec<u8> {
    let mut f = (buf.len() as i32).to_be_bytes().to_vec();
    f.extend_from_slice(&buf);
    f
}

/// Encodes `body` as a request of variant `k` with its header, decodes it and checks the header.
fn request<B: Encodable>(key: ApiKey, v: i16, k: usize, body: &B) -> Got {
    let ctx = format!("v{v}: {key:?} request #{k}");
    let corr = correlation(v, k);
    let hv = key.request_header_version(v);
    let header = RequestHeader::default()
        .with_request_api_key(key as i16)
        .with_request_api_version(v)
        .with_correlation_id(corr)
        .with_client_id(CLIENT_IDS[k].map(st))
        .with_unknown_tagged_fields(tags(k));
    let mut buf = BytesMut::new();
    header.encode(&mut buf, hv).unwrap();
    body.encode(&mut buf, v)
        .unwrap_or_else(|e| panic!("{ctx}: kafka-protocol cannot encode: {e}"));
    let frame = sized(buf);
    let msg = decode_request(&frame);
    common_checks(&msg, &frame, &ctx, key, v, corr);
    common::walks_agree(&frame, None, &ctx);
    assert_eq!(
        msg.client_id,
        Some(CLIENT_IDS[k].map(String::from)),
        "{ctx}: client_id"
    );
    let got = Got { msg, frame, ctx };
    let h = &got.msg.root().children[1];
    assert_eq!(
        h.name,
        format!("RequestHeader v{hv}"),
        "{}: header version",
        got.ctx
    );
    got.node_tags(h, "request header", &tags(k), hv >= 2);
    got
}

/// Encodes `body` as a response of variant `k` with its header, decodes it and checks the header.
fn response<B: Encodable>(key: ApiKey, v: i16, k: usize, body: &B) -> Got {
    let ctx = format!("v{v}: {key:?} response #{k}");
    let corr = correlation(v, k);
    let hv = key.response_header_version(v);
    if key == ApiKey::ApiVersions {
        assert_eq!(hv, 0, "{ctx}: ApiVersions responses use header v0");
    }
    let header = ResponseHeader::default()
        .with_correlation_id(corr)
        .with_unknown_tagged_fields(tags(k));
    let mut buf = BytesMut::new();
    header.encode(&mut buf, hv).unwrap();
    body.encode(&mut buf, v)
        .unwrap_or_else(|e| panic!("{ctx}: kafka-protocol cannot encode: {e}"));
    let frame = sized(buf);
    let msg = decode_response(&frame, key as i16, v);
    common_checks(&msg, &frame, &ctx, key, v, corr);
    common::walks_agree(&frame, Some((key as i16, v)), &ctx);
    assert_eq!(msg.client_id, None, "{ctx}: client_id");
    let got = Got { msg, frame, ctx };
    let h = &got.msg.root().children[1];
    assert_eq!(
        h.name,
        format!("ResponseHeader v{hv}"),
        "{}: header version",
        got.ctx
    );
    got.node_tags(h, "response header", &tags(k), hv >= 1);
    got
}

// ---------------------------------------------------------------------------------------------
// Metadata (key 3), v0-13, flexible from v9.

fn metadata_request(v: i16, k: usize) -> MetadataRequest {
    let topic = |name: Option<&'static str>, id: u128| {
        MetadataRequestTopic::default()
            .with_name(name.map(tn))
            .with_topic_id(uid(id))
            .with_unknown_tagged_fields(tags(k))
    };
    let topics = match k {
        0 => Some(vec![
            topic(Some("orders"), ORDERS_ID),
            topic(Some("payments"), PAYMENTS_ID),
            // Queried by id only where Name is nullable.
            topic(if v >= 10 { None } else { Some("audit-log") }, OFFSETS_ID),
        ]),
        // Null means all topics from v1; in v0 that is the empty array.
        1 if v >= 1 => None,
        1 => Some(vec![]),
        _ => Some(vec![topic(Some("__consumer_offsets"), OFFSETS_ID)]),
    };
    MetadataRequest::default()
        .with_topics(topics)
        .with_allow_auto_topic_creation(v < 4 || k == 1)
        .with_include_cluster_authorized_operations((8..=10).contains(&v) && k != 1)
        .with_include_topic_authorized_operations(v >= 8 && k != 1)
        .with_unknown_tagged_fields(tags(k))
}

#[test]
fn metadata_requests() {
    for v in 0..=13 {
        for k in 0..3 {
            let m = metadata_request(v, k);
            let g = request(ApiKey::Metadata, v, k, &m);
            let flex = v >= 9;
            g.expect(
                "",
                &[
                    ("Topics", true, W::N(m.topics.as_ref().map(Vec::len))),
                    (
                        "AllowAutoTopicCreation",
                        v >= 4,
                        W::B(m.allow_auto_topic_creation),
                    ),
                    (
                        "IncludeClusterAuthorizedOperations",
                        (8..=10).contains(&v),
                        W::B(m.include_cluster_authorized_operations),
                    ),
                    (
                        "IncludeTopicAuthorizedOperations",
                        v >= 8,
                        W::B(m.include_topic_authorized_operations),
                    ),
                ],
            );
            g.tags("", &m.unknown_tagged_fields, flex);
            for (n, t) in m.topics.iter().flatten().enumerate() {
                let p = format!("Topics[{n}]");
                g.expect(
                    &p,
                    &[
                        ("TopicId", v >= 10, W::U(*t.topic_id.as_bytes())),
                        ("Name", true, os(t.name.as_ref().map(|x| x.as_str()))),
                    ],
                );
                g.tags(&p, &t.unknown_tagged_fields, flex);
            }
        }
    }
}

fn metadata_response(v: i16, k: usize) -> MetadataResponse {
    let partition = |p: &Part| {
        MetadataResponsePartition::default()
            .with_error_code(p.error)
            .with_partition_index(p.index)
            .with_leader_id(BrokerId(p.leader))
            .with_leader_epoch(p.epoch)
            .with_replica_nodes(bids(p.replicas))
            .with_isr_nodes(bids(p.isr))
            .with_offline_replicas(bids(p.offline))
            .with_unknown_tagged_fields(tags(k))
    };
    let topic = |t: &Topic| {
        let name = if v >= 12 {
            t.name
        } else {
            Some(t.name.unwrap_or("ghost-topic"))
        };
        MetadataResponseTopic::default()
            .with_error_code(t.error)
            .with_name(name.map(tn))
            .with_topic_id(uid(t.id))
            .with_is_internal(t.internal)
            .with_partitions(t.parts.iter().map(partition).collect())
            .with_topic_authorized_operations(if v >= 8 { t.ops } else { i32::MIN })
            .with_unknown_tagged_fields(tags(k))
    };
    let broker =
        |&(id, host, port, rack, _): &(i32, &'static str, i32, Option<&'static str>, bool)| {
            MetadataResponseBroker::default()
                .with_node_id(BrokerId(id))
                .with_host(st(host))
                .with_port(port)
                .with_rack(rack.map(st))
                .with_unknown_tagged_fields(tags(k))
        };
    MetadataResponse::default()
        .with_throttle_time_ms(if k == 1 { 0 } else { 250 })
        .with_brokers(brokers(k).iter().map(broker).collect())
        .with_cluster_id(if k == 1 {
            None
        } else {
            Some(st("kdissect-cluster-7Hn3Qw"))
        })
        .with_controller_id(BrokerId(if k == 1 { -1 } else { 2 }))
        .with_topics(topics(k).into_iter().map(topic).collect())
        .with_cluster_authorized_operations(if (8..=10).contains(&v) && k != 1 {
            CLUSTER_OPS
        } else {
            i32::MIN
        })
        .with_error_code(if k == 1 { 29 } else { 0 }) // CLUSTER_AUTHORIZATION_FAILED
        .with_unknown_tagged_fields(tags(k))
}

#[test]
fn metadata_responses() {
    for v in 0..=13 {
        for k in 0..3 {
            let m = metadata_response(v, k);
            let g = response(ApiKey::Metadata, v, k, &m);
            let flex = v >= 9;
            g.expect(
                "",
                &[
                    ("ThrottleTimeMs", v >= 3, i(m.throttle_time_ms)),
                    ("Brokers", true, W::N(Some(m.brokers.len()))),
                    ("ClusterId", v >= 2, os(m.cluster_id.as_deref())),
                    ("ControllerId", v >= 1, i(m.controller_id.0)),
                    ("Topics", true, W::N(Some(m.topics.len()))),
                    (
                        "ClusterAuthorizedOperations",
                        (8..=10).contains(&v),
                        i(m.cluster_authorized_operations),
                    ),
                    ("ErrorCode", v >= 13, i(m.error_code)),
                ],
            );
            g.tags("", &m.unknown_tagged_fields, flex);
            for (n, b) in m.brokers.iter().enumerate() {
                let p = format!("Brokers[{n}]");
                g.expect(
                    &p,
                    &[
                        ("NodeId", true, i(b.node_id.0)),
                        ("Host", true, s(&b.host)),
                        ("Port", true, i(b.port)),
                        ("Rack", v >= 1, os(b.rack.as_deref())),
                    ],
                );
                g.tags(&p, &b.unknown_tagged_fields, flex);
            }
            for (n, t) in m.topics.iter().enumerate() {
                let tp = format!("Topics[{n}]");
                g.expect(
                    &tp,
                    &[
                        ("ErrorCode", true, i(t.error_code)),
                        ("Name", true, os(t.name.as_ref().map(|x| x.as_str()))),
                        ("TopicId", v >= 10, W::U(*t.topic_id.as_bytes())),
                        ("IsInternal", v >= 1, W::B(t.is_internal)),
                        ("Partitions", true, W::N(Some(t.partitions.len()))),
                        (
                            "TopicAuthorizedOperations",
                            v >= 8,
                            i(t.topic_authorized_operations),
                        ),
                    ],
                );
                g.tags(&tp, &t.unknown_tagged_fields, flex);
                for (j, p) in t.partitions.iter().enumerate() {
                    let pp = format!("{tp}.Partitions[{j}]");
                    g.expect(
                        &pp,
                        &[
                            ("ErrorCode", true, i(p.error_code)),
                            ("PartitionIndex", true, i(p.partition_index)),
                            ("LeaderId", true, i(p.leader_id.0)),
                            ("LeaderEpoch", v >= 7, i(p.leader_epoch)),
                            ("ReplicaNodes", true, ids(&p.replica_nodes)),
                            ("IsrNodes", true, ids(&p.isr_nodes)),
                            ("OfflineReplicas", v >= 5, ids(&p.offline_replicas)),
                        ],
                    );
                    g.tags(&pp, &p.unknown_tagged_fields, flex);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// ApiVersions (key 18), v0-4, flexible from v3; responses always use header v0.

const SOFTWARE: [(&str, &str); 3] = [
    ("apache-kafka-java", "3.7.0"),
    ("librdkafka", "2.3.0"),
    ("kdissect-roundtrip", "0.1.0-SNAPSHOT"),
];

#[test]
fn api_versions_requests() {
    for v in 0..=4 {
        for (k, &(name, version)) in SOFTWARE.iter().enumerate() {
            let m = ApiVersionsRequest::default()
                .with_client_software_name(st(name))
                .with_client_software_version(st(version))
                .with_unknown_tagged_fields(tags(k));
            let g = request(ApiKey::ApiVersions, v, k, &m);
            let flex = v >= 3;
            g.expect(
                "",
                &[
                    ("ClientSoftwareName", flex, s(&m.client_software_name)),
                    ("ClientSoftwareVersion", flex, s(&m.client_software_version)),
                ],
            );
            g.tags("", &m.unknown_tagged_fields, flex);
            if !flex {
                let body = g.msg.body().unwrap();
                assert!(
                    body.children.is_empty() && body.len == 0,
                    "{}: v0-2 bodies are empty",
                    g.ctx
                );
            }
        }
    }
}

fn api_versions_response(k: usize) -> ApiVersionsResponse {
    let api = |(key, min, max): (i16, i16, i16)| {
        ApiVersion::default()
            .with_api_key(key)
            .with_min_version(min)
            .with_max_version(max)
            .with_unknown_tagged_fields(tags(k))
    };
    let m = ApiVersionsResponse::default().with_unknown_tagged_fields(tags(k));
    if k == 1 {
        // UNSUPPORTED_VERSION: the broker lists only ApiVersions, no features.
        return m.with_error_code(35).with_api_keys(vec![api((18, 0, 4))]);
    }
    let keys = [
        (0, 3, 11),
        (1, 4, 17),
        (3, 0, 13),
        (18, 0, 4),
        (60, 0, 2),
        (75, 0, 0),
    ];
    m.with_error_code(0)
        .with_api_keys(keys.into_iter().map(api).collect())
        .with_throttle_time_ms(120)
        .with_supported_features(vec![
            SupportedFeatureKey::default()
                .with_name(st("metadata.version"))
                .with_min_version(1)
                .with_max_version(21)
                .with_unknown_tagged_fields(tags(k)),
            SupportedFeatureKey::default()
                .with_name(st("kraft.version"))
                .with_min_version(0)
                .with_max_version(1),
        ])
        .with_finalized_features_epoch(0x0000_0001_2345_6789)
        .with_finalized_features(vec![FinalizedFeatureKey::default()
            .with_name(st("metadata.version"))
            .with_max_version_level(21)
            .with_min_version_level(21)
            .with_unknown_tagged_fields(tags(k))])
        .with_zk_migration_ready(true)
}

#[test]
fn api_versions_responses() {
    for v in 0..=4 {
        for k in 0..3 {
            let m = api_versions_response(k);
            let g = response(ApiKey::ApiVersions, v, k, &m);
            let flex = v >= 3;
            g.expect(
                "",
                &[
                    ("ErrorCode", true, i(m.error_code)),
                    ("ApiKeys", true, W::N(Some(m.api_keys.len()))),
                    ("ThrottleTimeMs", v >= 1, i(m.throttle_time_ms)),
                    // Tagged fields are written only when they differ from their defaults.
                    (
                        "SupportedFeatures",
                        flex && !m.supported_features.is_empty(),
                        W::N(Some(m.supported_features.len())),
                    ),
                    (
                        "FinalizedFeaturesEpoch",
                        flex && m.finalized_features_epoch != -1,
                        i(m.finalized_features_epoch),
                    ),
                    (
                        "FinalizedFeatures",
                        flex && !m.finalized_features.is_empty(),
                        W::N(Some(m.finalized_features.len())),
                    ),
                    (
                        "ZkMigrationReady",
                        flex && m.zk_migration_ready,
                        W::B(m.zk_migration_ready),
                    ),
                ],
            );
            g.tags("", &m.unknown_tagged_fields, flex);
            for (n, a) in m.api_keys.iter().enumerate() {
                let p = format!("ApiKeys[{n}]");
                g.expect(
                    &p,
                    &[
                        ("ApiKey", true, i(a.api_key)),
                        ("MinVersion", true, i(a.min_version)),
                        ("MaxVersion", true, i(a.max_version)),
                    ],
                );
                g.tags(&p, &a.unknown_tagged_fields, flex);
            }
            if !flex {
                continue;
            }
            for (name, tag) in [
                ("SupportedFeatures", 0),
                ("FinalizedFeaturesEpoch", 1),
                ("FinalizedFeatures", 2),
                ("ZkMigrationReady", 3),
            ] {
                if has(&g.msg, name) {
                    assert_eq!(
                        g.tag_of(name),
                        Some(tag),
                        "{}: {name} is tagged field {tag}",
                        g.ctx
                    );
                }
            }
            for (n, f) in m.supported_features.iter().enumerate() {
                let p = format!("SupportedFeatures[{n}]");
                g.expect(
                    &p,
                    &[
                        ("Name", true, s(&f.name)),
                        ("MinVersion", true, i(f.min_version)),
                        ("MaxVersion", true, i(f.max_version)),
                    ],
                );
                g.tags(&p, &f.unknown_tagged_fields, flex);
            }
            for (n, f) in m.finalized_features.iter().enumerate() {
                let p = format!("FinalizedFeatures[{n}]");
                g.expect(
                    &p,
                    &[
                        ("Name", true, s(&f.name)),
                        ("MaxVersionLevel", true, i(f.max_version_level)),
                        ("MinVersionLevel", true, i(f.min_version_level)),
                    ],
                );
                g.tags(&p, &f.unknown_tagged_fields, flex);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// DescribeCluster (key 60), v0-2, flexible in every version.

#[test]
fn describe_cluster_requests() {
    for v in 0..=2 {
        for k in 0..3 {
            let m = DescribeClusterRequest::default()
                .with_include_cluster_authorized_operations(k != 1)
                .with_endpoint_type(if v >= 1 && k == 0 { 2 } else { 1 })
                .with_include_fenced_brokers(v >= 2 && k != 1)
                .with_unknown_tagged_fields(tags(k));
            let g = request(ApiKey::DescribeCluster, v, k, &m);
            g.expect(
                "",
                &[
                    (
                        "IncludeClusterAuthorizedOperations",
                        true,
                        W::B(m.include_cluster_authorized_operations),
                    ),
                    ("EndpointType", v >= 1, i(m.endpoint_type)),
                    (
                        "IncludeFencedBrokers",
                        v >= 2,
                        W::B(m.include_fenced_brokers),
                    ),
                ],
            );
            g.tags("", &m.unknown_tagged_fields, true);
        }
    }
}

fn describe_cluster_response(v: i16, k: usize) -> DescribeClusterResponse {
    let broker =
        |&(id, host, port, rack, fenced): &(i32, &'static str, i32, Option<&'static str>, bool)| {
            DescribeClusterBroker::default()
                .with_broker_id(BrokerId(id))
                .with_host(st(host))
                .with_port(port)
                .with_rack(rack.map(st))
                .with_is_fenced(v >= 2 && fenced)
                .with_unknown_tagged_fields(tags(k))
        };
    let m = DescribeClusterResponse::default().with_unknown_tagged_fields(tags(k));
    if k == 1 {
        return m
            .with_throttle_time_ms(0)
            .with_error_code(31) // CLUSTER_AUTHORIZATION_FAILED
            .with_error_message(Some(st("Cluster authorization failed.")))
            .with_endpoint_type(if v >= 1 { 2 } else { 1 })
            .with_cluster_id(st(""))
            .with_controller_id(BrokerId(-1))
            .with_brokers(vec![])
            .with_cluster_authorized_operations(i32::MIN);
    }
    m.with_throttle_time_ms(15)
        .with_error_code(0)
        .with_error_message(None)
        .with_endpoint_type(1)
        .with_cluster_id(st("kdissect-cluster-7Hn3Qw"))
        .with_controller_id(BrokerId(1))
        .with_brokers(brokers(k).iter().map(broker).collect())
        .with_cluster_authorized_operations(CLUSTER_OPS)
}

#[test]
fn describe_cluster_responses() {
    for v in 0..=2 {
        for k in 0..3 {
            let m = describe_cluster_response(v, k);
            let g = response(ApiKey::DescribeCluster, v, k, &m);
            g.expect(
                "",
                &[
                    ("ThrottleTimeMs", true, i(m.throttle_time_ms)),
                    ("ErrorCode", true, i(m.error_code)),
                    ("ErrorMessage", true, os(m.error_message.as_deref())),
                    ("EndpointType", v >= 1, i(m.endpoint_type)),
                    ("ClusterId", true, s(&m.cluster_id)),
                    ("ControllerId", true, i(m.controller_id.0)),
                    ("Brokers", true, W::N(Some(m.brokers.len()))),
                    (
                        "ClusterAuthorizedOperations",
                        true,
                        i(m.cluster_authorized_operations),
                    ),
                ],
            );
            g.tags("", &m.unknown_tagged_fields, true);
            for (n, b) in m.brokers.iter().enumerate() {
                let p = format!("Brokers[{n}]");
                g.expect(
                    &p,
                    &[
                        ("BrokerId", true, i(b.broker_id.0)),
                        ("Host", true, s(&b.host)),
                        ("Port", true, i(b.port)),
                        ("Rack", true, os(b.rack.as_deref())),
                        ("IsFenced", v >= 2, W::B(b.is_fenced)),
                    ],
                );
                g.tags(&p, &b.unknown_tagged_fields, true);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// DescribeTopicPartitions (key 75), v0 only, flexible; Cursor/NextCursor are nullable structs.

#[test]
fn describe_topic_partitions_requests() {
    let v = 0;
    for k in 0..3 {
        let names: &[&'static str] = match k {
            0 => &["orders", "payments", "__consumer_offsets"],
            1 => &[],
            _ => &["orders"],
        };
        let cursor = |t, p| {
            RequestCursor::default()
                .with_topic_name(tn(t))
                .with_partition_index(p)
                .with_unknown_tagged_fields(tags(k))
        };
        let m = DescribeTopicPartitionsRequest::default()
            .with_topics(
                names
                    .iter()
                    .map(|&n| {
                        TopicRequest::default()
                            .with_name(tn(n))
                            .with_unknown_tagged_fields(tags(k))
                    })
                    .collect(),
            )
            .with_response_partition_limit([2000, 1, 100][k])
            .with_cursor(match k {
                0 => Some(cursor("payments", 7)),
                1 => None,
                _ => Some(cursor("orders", 0)),
            })
            .with_unknown_tagged_fields(tags(k));
        let g = request(ApiKey::DescribeTopicPartitions, v, k, &m);
        g.expect(
            "",
            &[
                ("Topics", true, W::N(Some(m.topics.len()))),
                (
                    "ResponsePartitionLimit",
                    true,
                    i(m.response_partition_limit),
                ),
                ("Cursor", true, W::Present(m.cursor.is_some())),
            ],
        );
        g.tags("", &m.unknown_tagged_fields, true);
        for (n, t) in m.topics.iter().enumerate() {
            let p = format!("Topics[{n}]");
            g.expect(&p, &[("Name", true, s(&t.name))]);
            g.tags(&p, &t.unknown_tagged_fields, true);
        }
        if let Some(c) = &m.cursor {
            g.expect(
                "Cursor",
                &[
                    ("TopicName", true, s(&c.topic_name)),
                    ("PartitionIndex", true, i(c.partition_index)),
                ],
            );
            g.tags("Cursor", &c.unknown_tagged_fields, true);
        } else {
            assert_eq!(
                get(&g.msg, "Cursor").children.len(),
                1,
                "{}: a null Cursor is its presence byte only",
                g.ctx
            );
        }
    }
}

fn describe_topic_partitions_response(k: usize) -> DescribeTopicPartitionsResponse {
    let partition = |p: &Part| {
        DescribeTopicPartitionsResponsePartition::default()
            .with_error_code(p.error)
            .with_partition_index(p.index)
            .with_leader_id(BrokerId(p.leader))
            .with_leader_epoch(p.epoch)
            .with_replica_nodes(bids(p.replicas))
            .with_isr_nodes(bids(p.isr))
            .with_eligible_leader_replicas(p.elr.map(bids))
            .with_last_known_elr(p.last_known_elr.map(bids))
            .with_offline_replicas(bids(p.offline))
            .with_unknown_tagged_fields(tags(k))
    };
    let topic = |t: &Topic| {
        DescribeTopicPartitionsResponseTopic::default()
            .with_error_code(t.error)
            .with_name(t.name.map(tn))
            .with_topic_id(uid(t.id))
            .with_is_internal(t.internal)
            .with_partitions(t.parts.iter().map(partition).collect())
            .with_topic_authorized_operations(t.ops)
            .with_unknown_tagged_fields(tags(k))
    };
    let cursor = |t, p| {
        ResponseCursor::default()
            .with_topic_name(tn(t))
            .with_partition_index(p)
            .with_unknown_tagged_fields(tags(k))
    };
    DescribeTopicPartitionsResponse::default()
        .with_throttle_time_ms([0, 40, 7][k])
        .with_topics(topics(k).into_iter().map(topic).collect())
        .with_next_cursor(match k {
            0 => Some(cursor("payments", 3)),
            1 => None,
            _ => Some(cursor("__consumer_offsets", 0)),
        })
        .with_unknown_tagged_fields(tags(k))
}

#[test]
fn describe_topic_partitions_responses() {
    let v = 0;
    for k in 0..3 {
        let m = describe_topic_partitions_response(k);
        let g = response(ApiKey::DescribeTopicPartitions, v, k, &m);
        g.expect(
            "",
            &[
                ("ThrottleTimeMs", true, i(m.throttle_time_ms)),
                ("Topics", true, W::N(Some(m.topics.len()))),
                ("NextCursor", true, W::Present(m.next_cursor.is_some())),
            ],
        );
        g.tags("", &m.unknown_tagged_fields, true);
        if let Some(c) = &m.next_cursor {
            g.expect(
                "NextCursor",
                &[
                    ("TopicName", true, s(&c.topic_name)),
                    ("PartitionIndex", true, i(c.partition_index)),
                ],
            );
            g.tags("NextCursor", &c.unknown_tagged_fields, true);
        } else {
            assert_eq!(
                get(&g.msg, "NextCursor").children.len(),
                1,
                "{}: a null NextCursor is its presence byte only",
                g.ctx
            );
        }
        for (n, t) in m.topics.iter().enumerate() {
            let tp = format!("Topics[{n}]");
            g.expect(
                &tp,
                &[
                    ("ErrorCode", true, i(t.error_code)),
                    ("Name", true, os(t.name.as_ref().map(|x| x.as_str()))),
                    ("TopicId", true, W::U(*t.topic_id.as_bytes())),
                    ("IsInternal", true, W::B(t.is_internal)),
                    ("Partitions", true, W::N(Some(t.partitions.len()))),
                    (
                        "TopicAuthorizedOperations",
                        true,
                        i(t.topic_authorized_operations),
                    ),
                ],
            );
            g.tags(&tp, &t.unknown_tagged_fields, true);
            for (j, p) in t.partitions.iter().enumerate() {
                let pp = format!("{tp}.Partitions[{j}]");
                g.expect(
                    &pp,
                    &[
                        ("ErrorCode", true, i(p.error_code)),
                        ("PartitionIndex", true, i(p.partition_index)),
                        ("LeaderId", true, i(p.leader_id.0)),
                        ("LeaderEpoch", true, i(p.leader_epoch)),
                        ("ReplicaNodes", true, ids(&p.replica_nodes)),
                        ("IsrNodes", true, ids(&p.isr_nodes)),
                        (
                            "EligibleLeaderReplicas",
                            true,
                            oids(&p.eligible_leader_replicas),
                        ),
                        ("LastKnownElr", true, oids(&p.last_known_elr)),
                        ("OfflineReplicas", true, ids(&p.offline_replicas)),
                    ],
                );
                g.tags(&pp, &p.unknown_tagged_fields, true);
            }
        }
    }
}
