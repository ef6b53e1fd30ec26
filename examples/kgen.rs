//! kgen: drives a Kafka broker through a fixed, reproducible set of requests so that the
//! traffic can be captured and used as test input for kdissect.
//!
//! ```text
//! cargo run --example kgen -- [--bulk-topics N] [--bulk-partitions P] [--quiet] HOST:PORT
//! ```
//!
//! It speaks the wire protocol directly over blocking `std::net::TcpStream`s, encoding every
//! message with the `kafka-protocol` crate, and sends:
//!
//! 1. connection `kgen` (client_id "kgen"): ApiVersions v0..v4, then CreateTopics for the
//!    topics `orders` (3 partitions), `payments` (6) and `audit-log` (1, compacted);
//! 2. connection `meta` (client_id null): for every Metadata version v0..v13 a pipelined batch
//!    of lookups (all topics, two named topics, an unknown topic, and for v10+ one known and one
//!    unknown topic id), all requests of a batch written before any response is read;
//! 3. connection `cluster` (client_id ""): correlation ids starting at 2147483645 so that they
//!    wrap to -2147483648; DescribeCluster v0..v2 pipelined, then DescribeTopicPartitions v0
//!    without a cursor, with a cursor, and for an unknown topic, pipelined;
//! 4. connection `bulk` (client_id "kgen-bulk"): CreateTopics for many topics with many
//!    partitions, then one Metadata request for all topics whose response is large enough to
//!    span many TCP segments, then ApiVersions v3, Metadata v1 and DescribeCluster v1 pipelined;
//! 5. connection `fenced` (client_id "kgen"): DescribeCluster v2 asking for fenced brokers,
//!    which tansu 0.6.0 cannot parse: it closes the connection without answering.
//!
//! Every request and response is logged on stdout (connection, correlation id, API, version,
//! sizes, and a short summary or the reason the response does not decode).

use std::collections::VecDeque;
use std::error::Error;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::api_versions_request::ApiVersionsRequest;
use kafka_protocol::messages::api_versions_response::ApiVersionsResponse;
use kafka_protocol::messages::create_topics_request::{
    CreatableTopic, CreatableTopicConfig, CreateTopicsRequest,
};
use kafka_protocol::messages::create_topics_response::CreateTopicsResponse;
use kafka_protocol::messages::describe_cluster_request::DescribeClusterRequest;
use kafka_protocol::messages::describe_cluster_response::DescribeClusterResponse;
use kafka_protocol::messages::describe_topic_partitions_request::{
    Cursor, DescribeTopicPartitionsRequest, TopicRequest,
};
use kafka_protocol::messages::describe_topic_partitions_response::DescribeTopicPartitionsResponse;
use kafka_protocol::messages::metadata_request::{MetadataRequest, MetadataRequestTopic};
use kafka_protocol::messages::metadata_response::MetadataResponse;
use kafka_protocol::messages::{ApiKey, RequestHeader, ResponseHeader, TopicName};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};

type Res<T> = Result<T, Box<dyn Error>>;

const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Topics created first and used by the named lookups: (name, partitions).
const TOPICS: [(&str, i32); 3] = [("orders", 3), ("payments", 6), ("audit-log", 1)];

/// A topic id that no broker knows: looked up by Metadata v10+.
const UNKNOWN_TOPIC_ID: [u8; 16] = [
    0xde, 0xad, 0xbe, 0xef, 0x00, 0x00, 0x40, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
];

struct Options {
    addr: String,
    bulk_topics: usize,
    bulk_partitions: i32,
    quiet: bool,
}

fn parse_args() -> Res<Options> {
    let mut opts = Options {
        addr: String::new(),
        bulk_topics: 40,
        bulk_partitions: 24,
        quiet: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--bulk-topics" => {
                opts.bulk_topics = args.next().ok_or("--bulk-topics needs a value")?.parse()?
            }
            "--bulk-partitions" => {
                opts.bulk_partitions = args
                    .next()
                    .ok_or("--bulk-partitions needs a value")?
                    .parse()?
            }
            "--quiet" | "-q" => opts.quiet = true,
            "-h" | "--help" => {
                println!("usage: kgen [--bulk-topics N] [--bulk-partitions P] [--quiet] HOST:PORT");
                std::process::exit(0);
            }
            _ if arg.starts_with('-') => return Err(format!("unknown option {arg}").into()),
            _ => opts.addr = arg,
        }
    }
    if opts.addr.is_empty() {
        return Err("missing broker address (HOST:PORT)".into());
    }
    Ok(opts)
}

/// One request written and not yet answered.
struct Pending {
    correlation_id: i32,
    key: ApiKey,
    version: i16,
}

/// A blocking connection to the broker that frames, logs and pipelines requests.
struct Conn {
    name: &'static str,
    stream: TcpStream,
    client_id: Option<StrBytes>,
    next_correlation_id: i32,
    pending: VecDeque<Pending>,
    quiet: bool,
}

impl Conn {
    fn open(
        opts: &Options,
        name: &'static str,
        client_id: Option<&'static str>,
        first_correlation_id: i32,
    ) -> Res<Conn> {
        let stream = TcpStream::connect(&opts.addr)?;
        stream.set_read_timeout(Some(READ_TIMEOUT))?;
        stream.set_write_timeout(Some(READ_TIMEOUT))?;
        stream.set_nodelay(true)?;
        println!(
            "[{name}] connected to {} from {} (client_id {})",
            stream.peer_addr()?,
            stream.local_addr()?,
            match client_id {
                None => "null".to_string(),
                Some(s) => format!("{s:?}"),
            }
        );
        Ok(Conn {
            name,
            stream,
            client_id: client_id.map(StrBytes::from_static_str),
            next_correlation_id: first_correlation_id,
            pending: VecDeque::new(),
            quiet: opts.quiet,
        })
    }

    /// Frames and writes one request; returns its correlation id.
    fn send<R: Encodable>(&mut self, key: ApiKey, version: i16, body: &R) -> Res<i32> {
        let correlation_id = self.next_correlation_id;
        self.next_correlation_id = self.next_correlation_id.wrapping_add(1);
        let header = RequestHeader::default()
            .with_request_api_key(key as i16)
            .with_request_api_version(version)
            .with_correlation_id(correlation_id)
            .with_client_id(self.client_id.clone());
        let header_version = key.request_header_version(version);
        let mut buf = BytesMut::new();
        buf.put_i32(0);
        header.encode(&mut buf, header_version)?;
        body.encode(&mut buf, version)?;
        let size = i32::try_from(buf.len() - 4)?;
        buf[..4].copy_from_slice(&size.to_be_bytes());
        self.stream.write_all(&buf)?;
        if !self.quiet {
            println!(
                "[{}] corr {correlation_id:>11} -> {key:?} v{version} (request header v{header_version}, {size} bytes)",
                self.name
            );
        }
        self.pending.push_back(Pending {
            correlation_id,
            key,
            version,
        });
        Ok(correlation_id)
    }

    /// Reads the next response frame, checks its correlation id against the oldest pending
    /// request and returns that request with the response body (header removed).
    fn recv_raw(&mut self) -> Res<(Pending, Bytes)> {
        let mut len = [0u8; 4];
        if let Err(e) = self.stream.read_exact(&mut len) {
            return Err(match e.kind() {
                std::io::ErrorKind::UnexpectedEof => "connection closed by the broker".into(),
                _ => e.into(),
            });
        }
        let size = i32::from_be_bytes(len);
        let size = usize::try_from(size).map_err(|_| format!("negative frame size {size}"))?;
        let mut frame = vec![0u8; size];
        self.stream.read_exact(&mut frame)?;
        let pending = self
            .pending
            .pop_front()
            .ok_or("response without a pending request")?;
        let mut body = Bytes::from(frame);
        let header_version = pending.key.response_header_version(pending.version);
        let header = ResponseHeader::decode(&mut body, header_version)?;
        if header.correlation_id != pending.correlation_id {
            return Err(format!(
                "[{}] expected correlation id {}, got {}",
                self.name, pending.correlation_id, header.correlation_id
            )
            .into());
        }
        if !self.quiet {
            print!(
                "[{}] corr {:>11} <- {:?} v{} (response header v{header_version}, {size} bytes)",
                self.name, pending.correlation_id, pending.key, pending.version
            );
        }
        Ok((pending, body))
    }

    /// Reads the next response and decodes it as `T` at the request's version. A body that
    /// does not decode, or leaves bytes over, is reported and yields `None`: some brokers answer
    /// versions they do not support in the layout of another version.
    fn recv<T: Decodable + Summary>(&mut self) -> Res<Option<T>> {
        let (pending, mut body) = self.recv_raw()?;
        let result = match T::decode(&mut body, pending.version) {
            Ok(_) if body.has_remaining() => {
                if !self.quiet {
                    println!(
                        ": decodes as v{} but leaves {} bytes over",
                        pending.version,
                        body.remaining()
                    );
                }
                None
            }
            Ok(msg) => {
                if !self.quiet {
                    println!(": {}", msg.summary());
                }
                Some(msg)
            }
            Err(e) => {
                if !self.quiet {
                    println!(": does not decode as v{}: {e}", pending.version);
                }
                None
            }
        };
        Ok(result)
    }

    /// Sends one request and reads its response.
    fn call<Q: Encodable, T: Decodable + Summary>(
        &mut self,
        key: ApiKey,
        version: i16,
        body: &Q,
    ) -> Res<Option<T>> {
        self.send(key, version, body)?;
        self.recv()
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

/// A one-line description of a decoded response.
trait Summary {
    fn summary(&self) -> String;
}

fn error_codes<I: IntoIterator<Item = i16>>(codes: I) -> String {
    let codes: Vec<String> = codes
        .into_iter()
        .filter(|c| *c != 0)
        .map(|c| c.to_string())
        .collect();
    if codes.is_empty() {
        String::new()
    } else {
        format!(", errors [{}]", codes.join(", "))
    }
}

impl Summary for ApiVersionsResponse {
    fn summary(&self) -> String {
        format!(
            "error {}, {} api keys",
            self.error_code,
            self.api_keys.len()
        )
    }
}

impl Summary for MetadataResponse {
    fn summary(&self) -> String {
        let partitions: usize = self.topics.iter().map(|t| t.partitions.len()).sum();
        let unnamed = self.topics.iter().filter(|t| t.name.is_none()).count();
        format!(
            "{} brokers, {} topics ({} without name), {} partitions{}",
            self.brokers.len(),
            self.topics.len(),
            unnamed,
            partitions,
            error_codes(self.topics.iter().map(|t| t.error_code))
        )
    }
}

impl Summary for CreateTopicsResponse {
    fn summary(&self) -> String {
        format!(
            "{} topics{}",
            self.topics.len(),
            error_codes(self.topics.iter().map(|t| t.error_code))
        )
    }
}

impl Summary for DescribeClusterResponse {
    fn summary(&self) -> String {
        format!(
            "error {}, cluster {:?}, controller {}, {} brokers",
            self.error_code,
            self.cluster_id.as_str(),
            *self.controller_id,
            self.brokers.len()
        )
    }
}

impl Summary for DescribeTopicPartitionsResponse {
    fn summary(&self) -> String {
        let partitions: usize = self.topics.iter().map(|t| t.partitions.len()).sum();
        format!(
            "{} topics, {} partitions, next cursor {}{}",
            self.topics.len(),
            partitions,
            if self.next_cursor.is_some() {
                "set"
            } else {
                "null"
            },
            error_codes(self.topics.iter().map(|t| t.error_code))
        )
    }
}

fn topic_name(name: &str) -> TopicName {
    TopicName(StrBytes::from_string(name.to_string()))
}

/// Highest version of `key` that both the broker (per ApiVersions) and kafka-protocol support.
fn negotiate(versions: &ApiVersionsResponse, key: ApiKey) -> Option<i16> {
    let ours = key.valid_versions();
    let theirs = versions.api_keys.iter().find(|k| k.api_key == key as i16)?;
    let max = ours.max.min(theirs.max_version);
    (max >= ours.min.max(theirs.min_version)).then_some(max)
}

/// A Metadata request topic entry looked up by topic id (v10+, name null).
fn topic_by_id(id: [u8; 16]) -> Res<MetadataRequestTopic> {
    // Decoding is the only public way to build a topic id without naming the uuid crate.
    let mut raw = BytesMut::new();
    raw.put_slice(&id);
    raw.put_u8(0); // compact nullable string: null name
    raw.put_u8(0); // no tagged fields
    Ok(MetadataRequestTopic::decode(&mut raw.freeze(), 10)?)
}

fn create_topics_request(topics: Vec<CreatableTopic>) -> CreateTopicsRequest {
    CreateTopicsRequest::default()
        .with_topics(topics)
        .with_timeout_ms(30_000)
}

fn api_versions_request(version: i16) -> ApiVersionsRequest {
    let req = ApiVersionsRequest::default();
    if version < 3 {
        return req;
    }
    req.with_client_software_name(StrBytes::from_static_str("kgen"))
        .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION")))
}

/// What step 1 learnt: the broker's versions and a lookup of `orders` by topic id.
struct Learnt {
    versions: ApiVersionsResponse,
    orders_by_id: Option<MetadataRequestTopic>,
}

/// Step 1: version negotiation and the named topics.
fn step_versions(opts: &Options) -> Res<Learnt> {
    let mut conn = Conn::open(opts, "kgen", Some("kgen"), 1)?;
    let mut last = None;
    for version in 0..=4 {
        let req = api_versions_request(version);
        if let Some(resp) =
            conn.call::<_, ApiVersionsResponse>(ApiKey::ApiVersions, version, &req)?
        {
            last = Some(resp);
        }
    }
    let versions = last.ok_or("no ApiVersions response decoded")?;
    let create_version =
        negotiate(&versions, ApiKey::CreateTopics).ok_or("broker lacks CreateTopics")?;
    let topics = TOPICS
        .iter()
        .map(|(name, partitions)| {
            let mut topic = CreatableTopic::default()
                .with_name(topic_name(name))
                .with_num_partitions(*partitions)
                .with_replication_factor(1);
            if *name == "audit-log" {
                topic = topic.with_configs(vec![CreatableTopicConfig::default()
                    .with_name(StrBytes::from_static_str("cleanup.policy"))
                    .with_value(Some(StrBytes::from_static_str("compact")))]);
            }
            topic
        })
        .collect();
    let created = conn.call::<_, CreateTopicsResponse>(
        ApiKey::CreateTopics,
        create_version,
        &create_topics_request(topics),
    )?;
    let orders_by_id = created.and_then(|resp| {
        resp.topics
            .iter()
            .find(|t| t.name.as_str() == "orders" && !t.topic_id.is_nil())
            .map(|t| MetadataRequestTopic::default().with_topic_id(t.topic_id))
    });
    Ok(Learnt {
        versions,
        orders_by_id,
    })
}

/// Step 2: every Metadata version, each as a pipelined batch of lookups.
fn step_metadata(opts: &Options, learnt: &Learnt) -> Res<()> {
    let mut conn = Conn::open(opts, "meta", None, 100)?;
    for version in 0..=13i16 {
        let mut batch = Vec::new();
        // All topics: an empty array at v0, a null array from v1 on.
        let all = if version == 0 {
            MetadataRequest::default().with_topics(Some(Vec::new()))
        } else {
            MetadataRequest::default().with_topics(None)
        };
        batch.push(all);
        // Named topics, asking for authorized operations where the version has the flags.
        let named: Vec<MetadataRequestTopic> = ["orders", "payments"]
            .iter()
            .map(|n| MetadataRequestTopic::default().with_name(Some(topic_name(n))))
            .collect();
        let mut req = MetadataRequest::default().with_topics(Some(named));
        if (8..=10).contains(&version) {
            req = req.with_include_cluster_authorized_operations(true);
        }
        if version >= 8 {
            req = req.with_include_topic_authorized_operations(true);
        }
        batch.push(req);
        // An unknown topic. Before v4 the request cannot forbid auto-creation, so each of
        // those versions asks for its own name.
        let (unknown, auto_create) = if version < 4 {
            (format!("auto-create-v{version}"), true)
        } else {
            ("missing-topic".to_string(), false)
        };
        batch.push(
            MetadataRequest::default()
                .with_topics(Some(vec![
                    MetadataRequestTopic::default().with_name(Some(topic_name(&unknown)))
                ]))
                .with_allow_auto_topic_creation(auto_create),
        );
        // Lookups by topic id.
        if version >= 10 {
            let mut ids = Vec::new();
            ids.extend(learnt.orders_by_id.clone());
            ids.push(topic_by_id(UNKNOWN_TOPIC_ID)?);
            batch.push(
                MetadataRequest::default()
                    .with_topics(Some(ids))
                    .with_allow_auto_topic_creation(false),
            );
        }
        for req in &batch {
            conn.send(ApiKey::Metadata, version, req)?;
        }
        for _ in &batch {
            conn.recv::<MetadataResponse>()?;
        }
    }
    Ok(())
}

/// Step 3: DescribeCluster and DescribeTopicPartitions, with wrapping correlation ids.
fn step_cluster(opts: &Options) -> Res<()> {
    let mut conn = Conn::open(opts, "cluster", Some(""), i32::MAX - 2)?;
    for version in 0..=2 {
        let mut req = DescribeClusterRequest::default();
        if version >= 1 {
            req = req.with_endpoint_type(1);
        }
        conn.send(ApiKey::DescribeCluster, version, &req)?;
    }
    for _ in 0..=2 {
        conn.recv::<DescribeClusterResponse>()?;
    }
    let named = |names: &[&str]| -> Vec<TopicRequest> {
        names
            .iter()
            .map(|n| TopicRequest::default().with_name(topic_name(n)))
            .collect()
    };
    let batch = [
        DescribeTopicPartitionsRequest::default().with_topics(named(&["orders", "payments"])),
        DescribeTopicPartitionsRequest::default()
            .with_topics(named(&["orders", "payments"]))
            .with_response_partition_limit(2)
            .with_cursor(Some(
                Cursor::default()
                    .with_topic_name(topic_name("orders"))
                    .with_partition_index(1),
            )),
        DescribeTopicPartitionsRequest::default().with_topics(named(&["missing-topic"])),
    ];
    for req in &batch {
        conn.send(ApiKey::DescribeTopicPartitions, 0, req)?;
    }
    for _ in &batch {
        conn.recv::<DescribeTopicPartitionsResponse>()?;
    }
    Ok(())
}

/// Step 4: many topics and partitions, then one large Metadata response.
fn step_bulk(opts: &Options, versions: &ApiVersionsResponse) -> Res<()> {
    let mut conn = Conn::open(opts, "bulk", Some("kgen-bulk"), 1000)?;
    let create_version =
        negotiate(versions, ApiKey::CreateTopics).ok_or("broker lacks CreateTopics")?;
    let topics: Vec<CreatableTopic> = (0..opts.bulk_topics)
        .map(|i| {
            CreatableTopic::default()
                .with_name(topic_name(&format!("bulk-{i:03}")))
                .with_num_partitions(opts.bulk_partitions)
                .with_replication_factor(1)
        })
        .collect();
    // In chunks of ten topics so each request stays modest.
    for chunk in topics.chunks(10) {
        conn.call::<_, CreateTopicsResponse>(
            ApiKey::CreateTopics,
            create_version,
            &create_topics_request(chunk.to_vec()),
        )?;
    }
    let metadata_version = negotiate(versions, ApiKey::Metadata).unwrap_or(1);
    conn.call::<_, MetadataResponse>(
        ApiKey::Metadata,
        metadata_version,
        &MetadataRequest::default().with_topics(None),
    )?;
    // A few more exchanges on the same connection, pipelined, so that a capture that loses or
    // starts inside the large response still has whole messages after it.
    let orders =
        MetadataRequest::default().with_topics(Some(vec![
            MetadataRequestTopic::default().with_name(Some(topic_name("orders")))
        ]));
    conn.send(ApiKey::ApiVersions, 3, &api_versions_request(3))?;
    conn.send(ApiKey::Metadata, 1, &orders)?;
    conn.send(
        ApiKey::DescribeCluster,
        1,
        &DescribeClusterRequest::default(),
    )?;
    conn.recv::<ApiVersionsResponse>()?;
    conn.recv::<MetadataResponse>()?;
    conn.recv::<DescribeClusterResponse>()?;
    Ok(())
}

/// Step 5: a request some brokers cannot parse (DescribeCluster v2 asking for fenced
/// brokers). Whatever happens, an answer or the broker closing the connection, is logged.
fn step_unanswered(opts: &Options) -> Res<()> {
    let mut conn = Conn::open(opts, "fenced", Some("kgen"), 7)?;
    let req = DescribeClusterRequest::default()
        .with_endpoint_type(1)
        .with_include_fenced_brokers(true);
    conn.send(ApiKey::DescribeCluster, 2, &req)?;
    match conn.recv::<DescribeClusterResponse>() {
        Ok(_) => {}
        Err(e) => println!("[fenced] no response: {e}"),
    }
    Ok(())
}

fn main() {
    let opts = match parse_args() {
        Ok(opts) => opts,
        Err(e) => {
            eprintln!("kgen: {e}");
            std::process::exit(2);
        }
    };
    let run = || -> Res<()> {
        let learnt = step_versions(&opts)?;
        step_metadata(&opts, &learnt)?;
        step_cluster(&opts)?;
        step_bulk(&opts, &learnt.versions)?;
        step_unanswered(&opts)?;
        Ok(())
    };
    if let Err(e) = run() {
        eprintln!("kgen: {e}");
        std::process::exit(1);
    }
}
