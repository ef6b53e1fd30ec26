//! The one place the analyses read a decoded message: [`event`] turns a [`Record`] (its
//! header, its facts and the values the analyses need) into an [`Event`] of their own, so
//! that a change to how messages are decoded and kept touches this file only.

use crate::kafka::meaning::facts::{MemberFact, PartitionFact, Scalar};
use crate::kafka::stream::Record;
use crate::kafka::Direction;
use std::net::SocketAddr;

/// The request a response answers, as the capture saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asked {
    pub frame: u64,
    pub ts: i64,
    pub api_version: i16,
}

/// One Kafka message, as the analyses see it.
#[derive(Debug, Clone, Default)]
pub struct Event {
    pub frame: u64,
    pub ts: i64,
    pub stream: u32,
    /// The client and broker ends of the connection, whichever sent the message.
    pub client: Option<SocketAddr>,
    pub broker: Option<SocketAddr>,
    pub response: bool,
    pub api_key: i16,
    pub api_version: i16,
    pub correlation_id: i32,
    /// A request's client_id (empty when null or absent).
    pub client_id: String,
    /// For a response: its request, when captured.
    pub asked: Option<Asked>,
    /// The top-level error code, when not zero.
    pub error: Option<i16>,
    /// Every non-zero error code in the body.
    pub error_codes: Vec<i16>,
    pub throttle_ms: i64,
    /// Damaged bytes (not a partial frame).
    pub malformed: bool,
    pub group: Option<String>,
    pub member: Option<String>,
    /// GenerationId, or a KIP-848 member epoch.
    pub generation: Option<i64>,
    pub member_epoch: Option<i64>,
    pub acks: Option<i64>,
    pub protocol: Option<String>,
    /// A Metadata request for every topic.
    pub all_topics: bool,
    /// The message's partition entries, shared with its facts.
    pub parts: std::sync::Arc<Vec<PartitionFact>>,
    pub members: Vec<MemberFact>,
    pub software: Option<(String, String)>,
    pub advertised: Option<Vec<(i16, i64, i64)>>,
    /// Frame bytes, size prefix included.
    pub bytes: usize,
    /// A Fetch from a follower broker (its replica id), not from a consumer.
    pub replica: bool,
    /// Fetch and ShareFetch requests: the longest the broker may hold the answer.
    pub max_wait_ms: Option<i64>,
    /// The group APIs: the sender's group.instance.id, a JoinGroup answer's leader, a
    /// JoinGroup request's session timeout, a heartbeat answer's interval.
    pub instance_id: Option<String>,
    pub leader: Option<String>,
    pub session_timeout_ms: Option<i64>,
    pub heartbeat_interval_ms: Option<i64>,
}

fn identity_str(rec: &Record<'_>, label: &str) -> Option<String> {
    rec.msg.facts.identity.iter().find_map(|(l, v)| match v {
        Scalar::Str(s) if *l == label => Some(capped(s)),
        _ => None,
    })
}

/// Bytes of an identifier (client, group, member, instance id, protocol) the analyses keep.
/// Kafka's own are far shorter (a member id is its client id and a UUID), but the wire
/// allows 32 KiB each, and the analyses keep thousands of them (a generation's members, a
/// group's timeline): past this they keep its head and a hash of the whole, which keeps
/// ids apart as the whole would.
pub const MAX_ID_BYTES: usize = 256;

/// `s`, or its first bytes (whole characters), `…` and a hash of it all when it is longer
/// than [`MAX_ID_BYTES`].
pub fn capped(s: &str) -> String {
    use std::hash::{Hash, Hasher};
    if s.len() <= MAX_ID_BYTES {
        return s.to_string();
    }
    let mut end = MAX_ID_BYTES - 24;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    // SipHash with fixed keys: the same id gives the same text in every run.
    let mut h = std::hash::DefaultHasher::new();
    s.hash(&mut h);
    format!("{}…#{:016x}", &s[..end], h.finish())
}

/// A member as the analyses keep it: its ids and topic names capped ([`capped`]).
fn member_capped(m: &MemberFact) -> MemberFact {
    MemberFact {
        member_id: capped(&m.member_id),
        subscribed: m.subscribed.iter().map(|t| capped(t)).collect(),
        partitions: m
            .partitions
            .iter()
            .map(|(t, p)| (capped(t), p.clone()))
            .collect(),
        instance_id: m.instance_id.as_deref().map(capped),
        tasks: m
            .tasks
            .iter()
            .map(|(k, t, p)| (*k, capped(t), p.clone()))
            .collect(),
    }
}

fn identity_int(rec: &Record<'_>, label: &str) -> Option<i64> {
    rec.msg.facts.identity.iter().find_map(|(l, v)| match v {
        Scalar::Int(i) if *l == label => Some(*i),
        _ => None,
    })
}

/// The analyses' view of a message; `None` for one whose header did not decode.
pub fn event(rec: &Record<'_>) -> Option<Event> {
    let m = &rec.msg;
    let (api_key, api_version) = (m.api_key?, m.api_version?);
    let response = m.direction == Direction::Response;
    let f = &m.facts;
    let (client, broker) = if response {
        (rec.dst, rec.src)
    } else {
        (rec.src, rec.dst)
    };
    Some(Event {
        frame: rec.frame,
        ts: rec.ts_nanos,
        stream: rec.stream,
        client: Some(client),
        broker: Some(broker),
        response,
        api_key,
        api_version,
        correlation_id: m.correlation_id.unwrap_or(0),
        client_id: capped(m.client_id.clone().flatten().as_deref().unwrap_or_default()),
        asked: rec.request.map(|r| Asked {
            frame: r.frame,
            ts: r.ts_nanos,
            api_version: r.api_version,
        }),
        error: f.error,
        error_codes: m.errors.iter().map(|e| e.code).collect(),
        throttle_ms: f.throttle_ms.unwrap_or(0),
        malformed: m.is_malformed() && !rec.partial,
        group: identity_str(rec, "group"),
        member: identity_str(rec, "member"),
        generation: identity_int(rec, "generation"),
        member_epoch: identity_int(rec, "member_epoch"),
        acks: identity_int(rec, "acks"),
        protocol: identity_str(rec, "protocol"),
        all_topics: api_key == 3 && !response && f.topics.as_ref().is_some_and(|t| t.all),
        parts: std::sync::Arc::clone(&f.offsets),
        members: f.members.iter().map(member_capped).collect(),
        software: f.software.clone(),
        advertised: f.advertised.clone(),
        bytes: rec.bytes.len(),
        replica: f.replica_id.is_some_and(|r| r >= 0),
        max_wait_ms: f.max_wait_ms,
        instance_id: f.group.instance_id.as_deref().map(capped),
        leader: f.group.leader.as_deref().map(capped),
        session_timeout_ms: f.group.session_timeout_ms,
        heartbeat_interval_ms: f.group.heartbeat_interval_ms,
    })
}

/// What a Produce answer `e` to request `req` appended: for each partition written without
/// error, its base offset and the number of records its request sent there.
pub fn produced<'a>(
    req: &'a Event,
    e: &'a Event,
) -> impl Iterator<Item = (&'a PartitionFact, i64, i64)> + 'a {
    e.parts.iter().filter(|p| p.error == 0).filter_map(|p| {
        let base = p.base_offset.filter(|b| *b >= 0)?;
        let sent = req
            .parts
            .iter()
            .find(|q| q.topic == p.topic && q.partition == p.partition)?;
        Some((p, base, sent.batches.iter().map(|b| b.records).sum()))
    })
}

/// The (topic id, name) pairs a message teaches: a Metadata, CreateTopics or
/// DescribeTopicPartitions answer, or a controller's Fetch answer carrying the KRaft log's
/// TopicRecords; learnt here too (not only from the messages the pipeline names after it), so
/// that a name given last still names what came before.
pub fn topic_pairs(rec: &Record<'_>) -> Vec<([u8; 16], String)> {
    let m = &rec.msg;
    if let Some(pairs) = &m.topic_pairs {
        return pairs.iter().map(|(id, n)| (*id, n.to_string())).collect();
    }
    let teaches = m.direction == Direction::Response
        && (matches!(m.api_key, Some(3 | 19 | 75))
            || m.record_types
                .types
                .iter()
                .any(|(n, _)| *n == "TopicRecord"));
    let mut out = Vec::new();
    if let (true, Some(root)) = (teaches, m.tree.as_deref()) {
        pairs_in(root, &mut out);
    }
    out
}

/// Every struct below `n` holding a TopicId and a Name.
fn pairs_in(n: &crate::kafka::walk::node::Node, out: &mut Vec<([u8; 16], String)>) {
    use crate::kafka::spec::schema::Role;
    use crate::kafka::walk::node::Value;
    let id = n.children.iter().find_map(|c| match (c.role(), &c.value) {
        (Role::TopicId, Value::Uuid(u)) if *u != [0; 16] => Some(*u),
        _ => None,
    });
    let name = n
        .children
        .iter()
        .find(|c| c.role() == Role::Name)
        .and_then(|c| c.as_str())
        .filter(|s| !s.is_empty());
    if let (Some(id), Some(name)) = (id, name) {
        out.push((id, name.to_string()));
    }
    for c in n.children.iter().filter(|c| !c.children.is_empty()) {
        pairs_in(c, out);
    }
}

#[cfg(test)]
mod capped_tests {
    use super::*;

    #[test]
    fn long_ids_keep_their_head_and_stay_apart() {
        assert_eq!(capped("consumer-1-uuid"), "consumer-1-uuid");
        let a = format!("{}a", "m".repeat(40_000));
        let b = format!("{}b", "m".repeat(40_000));
        let (ca, cb) = (capped(&a), capped(&b));
        assert!(
            ca.len() <= MAX_ID_BYTES + 4 && cb.len() <= MAX_ID_BYTES + 4,
            "{}",
            ca.len()
        );
        assert!(ca.starts_with("mmmm") && ca.contains('…'));
        assert_ne!(ca, cb);
        assert_eq!(ca, capped(&a));
        // Cut on a character boundary.
        let wide = "é".repeat(1000);
        assert!(capped(&wide).contains('…'));
    }
}
