//! Every summary line says what its message is about beyond its correlation id, and every
//! error an answer carries is named on its line (issue 35, item 9): group ids, broker ids and
//! epochs, fenced or shutting down, member ids, counts, for every API of Kafka 4.4 in both
//! directions, and in Envelopes.

mod common;

use common::kp;
use kdissect::kafka::{decode_request, decode_response, example, registry, Direction, Message};
use kdissect::render::summary::essentials;
use std::collections::BTreeMap;

/// Messages that carry nothing to say beyond their header: they have no field in their
/// version, or only a bool at its default, or (in the smallest instance, whose strings are
/// empty) only ids a line names when they are not empty. (API key, versions, direction) with
/// why; the samples' lines are held to the first two reasons only (below).
const CARRY_NOTHING: &[(i16, std::ops::RangeInclusive<i16>, Direction, &str)] = &[
    (
        18,
        0..=2,
        Direction::Request,
        "ApiVersions v0-2 requests have no field",
    ),
    (
        16,
        0..=3,
        Direction::Request,
        "ListGroups v0-3 requests have no field",
    ),
    (
        74,
        0..=0,
        Direction::Request,
        "ListConfigResources v0 requests have no field",
    ),
    (
        60,
        0..=0,
        Direction::Request,
        "DescribeCluster v0 requests hold one bool, IncludeClusterAuthorizedOperations, \
         said only when true",
    ),
];

/// Requests whose ids (a group, a member, a key, a transactional id) are said when they are
/// not empty, and are empty in the smallest instance; an Envelope's request bytes, empty in
/// it, carry no request to name.
const EMPTY_IDS: &[(i16, std::ops::RangeInclusive<i16>, Direction, &str)] = &[
    (
        10,
        0..=3,
        Direction::Request,
        "FindCoordinator: key=\"...\"",
    ),
    (11, 0..=9, Direction::Request, "JoinGroup: group=, member="),
    (
        13,
        0..=2,
        Direction::Request,
        "LeaveGroup v0-2: group=, member=",
    ),
    (
        22,
        0..=2,
        Direction::Request,
        "InitProducerId v0-2: txn= (txn=null when null)",
    ),
    (
        58,
        0..=0,
        Direction::Request,
        "Envelope: the request it carries",
    ),
];

fn allowed(key: i16, v: i16, d: Direction) -> bool {
    CARRY_NOTHING
        .iter()
        .any(|(k, r, dir, _)| *k == key && r.contains(&v) && *dir == d)
}

/// The essentials without the request's client id (the header's, not the body's).
fn body_words(m: &Message) -> String {
    let all = essentials(m);
    let mut words = all.split(' ').peekable();
    if m.direction == Direction::Request {
        if let Some(w) = words.peek() {
            if w.starts_with("client_id=") {
                words.next();
            }
        }
    }
    words.collect::<Vec<_>>().join(" ")
}

/// The smallest legal instance of every API, version and direction (`kdissect example`: zero
/// numbers, empty strings, one element in every array) says something, but for those that
/// carry nothing.
#[test]
fn every_api_version_and_direction_says_more_than_its_correlation_id() {
    let mut bare = Vec::new();
    let mut tried = 0;
    for (key, _) in registry().api_versions() {
        for d in [Direction::Request, Direction::Response] {
            for v in registry().versions(key, d) {
                let Some(spec) = registry().get_for(key, d, v) else {
                    continue;
                };
                let frame = example::frame(spec, v);
                let m = match d {
                    Direction::Request => decode_request(&frame),
                    Direction::Response => decode_response(&frame, key, v),
                };
                tried += 1;
                let empty_ids = EMPTY_IDS
                    .iter()
                    .any(|(k, r, dir, _)| *k == key && r.contains(&v) && *dir == d);
                if body_words(&m).is_empty() && !allowed(key, v, d) && !empty_ids {
                    bare.push(format!("{} v{v}", spec.name));
                }
            }
        }
    }
    assert!(tried > 700, "{tried} examples");
    assert!(
        bare.is_empty(),
        "{} lines say nothing beyond corr=: {bare:#?}",
        bare.len()
    );
}

/// The words after `corr=N` of a summary line, without the request's client id, the latency
/// and the notes in brackets: what the line says of the body.
fn said(line: &str) -> Option<(String, String)> {
    let (head, rest) = line.split_once(" corr=")?;
    let mut words = head
        .split(' ')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>();
    let dir = words.pop()?.to_string();
    let version = words.pop()?;
    let api = words.pop()?;
    let key = format!("{api} {version} {dir}");
    let mut rest = rest.split_once(' ').map_or("", |(_, r)| r).to_string();
    if let Some(at) = rest.find(" (") {
        if rest[at..].contains(" after frame ") {
            rest.truncate(at);
        }
    }
    if let Some(at) = rest.find(" [") {
        rest.truncate(at);
    }
    let words: Vec<&str> = rest
        .split(' ')
        .filter(|w| !w.is_empty() && !w.starts_with("client_id="))
        .collect();
    Some((key, words.join(" ")))
}

/// The measure on kgen-all-versions (every version of the APIs it exercises) and on
/// the cluster captures (every API a running 4.4 cluster and its admin clients use): no
/// line of an API and direction says nothing beyond `corr=`, but for the messages above.
#[test]
fn no_line_of_the_samples_says_nothing_beyond_corr() {
    let mut bare: BTreeMap<String, usize> = BTreeMap::new();
    let mut pairs = std::collections::BTreeSet::new();
    for file in [
        "samples/kgen-all-versions.pcap",
        "samples/cluster-admin.pcap",
        "samples/cluster-kill.pcap",
        "samples/cluster-restart.pcap",
        "samples/ak44-admin.pcap",
        "samples/ak44-confluent-admin.pcap",
        "samples/ak44-transactions-tv1.pcap",
        "samples/ak44-franz-share.pcap",
    ] {
        let out = common::cli::run(&["--no-progress", file]);
        for line in out.lines() {
            let Some((key, words)) = said(line) else {
                continue;
            };
            pairs.insert(key.split(' ').map(str::to_string).collect::<Vec<_>>());
            let mut parts = key.split(' ');
            let (api, v, dir) = (
                parts.next().unwrap_or_default(),
                parts.next().unwrap_or_default(),
                parts.next().unwrap_or_default(),
            );
            let v: i16 = v.trim_start_matches('v').parse().unwrap_or(-1);
            let d = if dir == "Request" {
                Direction::Request
            } else {
                Direction::Response
            };
            let key_num = kdissect::kafka::names::api_key_from_str(api).unwrap_or(-1);
            if words.is_empty() && !allowed(key_num, v, d) && !line.contains("[partial:") {
                *bare.entry(format!("{api} v{v} {dir}")).or_default() += 1;
            }
        }
    }
    assert!(pairs.len() > 60, "{} API/version/directions", pairs.len());
    assert!(
        bare.is_empty(),
        "lines with nothing beyond corr=: {bare:#?}"
    );
}

/// Every answer that carries an error names it on its line: every error of `--json` is on
/// the summary line of its frame, on every sample.
#[test]
fn every_error_an_answer_carries_is_on_its_line() {
    let dir = common::cli::root().join("samples");
    let mut checked = 0;
    for e in std::fs::read_dir(dir).expect("samples") {
        let p = e.expect("entry").path();
        let name = p.to_string_lossy().into_owned();
        if !(name.ends_with(".pcap") || name.ends_with(".pcapng")) {
            continue;
        }
        let json = common::cli::run(&["--no-progress", "--errors", "--messages", "--json", &name]);
        let text = common::cli::run(&["--no-progress", "--errors", "--messages", &name]);
        let lines: BTreeMap<u64, &str> = text
            .lines()
            .filter_map(|l| Some((l.split_whitespace().next()?.parse().ok()?, l)))
            .collect();
        for l in json.lines() {
            let j: serde_json::Value = serde_json::from_str(l).expect("json");
            let Some(frame) = j["frame"].as_u64() else {
                continue;
            };
            let line = lines.get(&frame).copied().unwrap_or_default();
            for e in common::cli::arr(&j["errors"]) {
                // A code Kafka 4.4 does not define has no name: the line says so.
                let n = e["name"].as_str().unwrap_or("unknown error");
                assert!(
                    line.contains(n),
                    "{name} frame {frame}: {n} not on {line:?}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked} errors checked");
}

fn st(s: &'static str) -> kafka_protocol::protocol::StrBytes {
    kafka_protocol::protocol::StrBytes::from_static_str(s)
}

/// The answers the issue found without their error: CreatePartitions, DeleteGroups,
/// AlterUserScramCredentials and DescribeUserScramCredentials, each with an error on its
/// second entry and on an entry past the five a line lists.
#[test]
fn answers_name_their_errors_beside_their_entries() {
    use kafka_protocol::messages::*;
    let cp = CreatePartitionsResponse::default().with_results(vec![
        create_partitions_response::CreatePartitionsTopicResult::default()
            .with_name(TopicName(st("orders"))),
        create_partitions_response::CreatePartitionsTopicResult::default()
            .with_name(TopicName(st("payments")))
            .with_error_code(37),
    ]);
    let m = decode_response(&kp::response(ApiKey::CreatePartitions, 3, 1, &cp), 37, 3);
    assert_eq!(
        essentials(&m),
        "topics=[orders, payments(INVALID_PARTITIONS)]"
    );

    let groups: Vec<_> = (0..7)
        .map(|i| {
            delete_groups_response::DeletableGroupResult::default()
                .with_group_id(GroupId(st(["g0", "g1", "g2", "g3", "g4", "g5", "g6"][i])))
                .with_error_code(if i == 1 || i == 6 { 69 } else { 0 })
        })
        .collect();
    let dg = DeleteGroupsResponse::default().with_results(groups);
    let m = decode_response(&kp::response(ApiKey::DeleteGroups, 2, 1, &dg), 42, 2);
    assert_eq!(
        essentials(&m),
        "groups=[g0, g1(GROUP_ID_NOT_FOUND), g2, g3, g4, +2 more] \
         errors=[GROUP_ID_NOT_FOUND(Results[6])]"
    );

    let alter = AlterUserScramCredentialsResponse::default().with_results(vec![
        alter_user_scram_credentials_response::AlterUserScramCredentialsResult::default()
            .with_user(st("alice"))
            .with_error_code(91),
    ]);
    let m = decode_response(
        &kp::response(ApiKey::AlterUserScramCredentials, 0, 1, &alter),
        51,
        0,
    );
    assert_eq!(essentials(&m), "users=[alice(RESOURCE_NOT_FOUND)]");

    let describe = DescribeUserScramCredentialsResponse::default()
        .with_error_code(0)
        .with_results(vec![
            describe_user_scram_credentials_response::DescribeUserScramCredentialsResult::default()
                .with_user(st("bob"))
                .with_error_code(91),
        ]);
    let m = decode_response(
        &kp::response(ApiKey::DescribeUserScramCredentials, 0, 1, &describe),
        50,
        0,
    );
    assert_eq!(essentials(&m), "users=[bob(RESOURCE_NOT_FOUND)]");
}

/// A DeleteGroups answer carried by an Envelope names its error on the Envelope's line.
#[test]
fn an_envelope_names_the_errors_of_the_answer_it_carries() {
    use bytes::Bytes;
    use kafka_protocol::messages::*;
    use kdissect::kafka::frames::{Conversation, ResponseHint};
    let inner = DeleteGroupsRequest::default().with_groups_names(vec![GroupId(st("gone"))]);
    let payload = kp::request_payload(ApiKey::DeleteGroups, 2, 41, "admin", &inner);
    let req = EnvelopeRequest::default()
        .with_request_data(Bytes::from(payload))
        .with_client_host_address(Bytes::from_static(&[10, 0, 0, 7]));
    let answer = DeleteGroupsResponse::default().with_results(vec![
        delete_groups_response::DeletableGroupResult::default()
            .with_group_id(GroupId(st("gone")))
            .with_error_code(69),
    ]);
    let payload = kp::response_payload(ApiKey::DeleteGroups, 2, 41, &answer);
    let resp = EnvelopeResponse::default().with_response_data(Some(Bytes::from(payload)));
    let mut conv = Conversation::default();
    let q = conv.decode(
        &kp::request(ApiKey::Envelope, 0, 9, &req),
        &ResponseHint::default(),
    );
    assert!(
        essentials(&q).contains("groups=[gone]"),
        "{}",
        essentials(&q)
    );
    let p = conv.decode(
        &kp::response(ApiKey::Envelope, 0, 9, &resp),
        &ResponseHint::default(),
    );
    assert_eq!(
        essentials(&p),
        "error=NONE inner_corr=41 groups=[gone(GROUP_ID_NOT_FOUND)]"
    );
}

/// The KRaft registration and heartbeats say which broker, its epoch, and whether it is
/// fenced or shutting down.
#[test]
fn broker_heartbeats_say_the_broker_its_epoch_and_its_state() {
    use kafka_protocol::messages::*;
    let q = BrokerHeartbeatRequest::default()
        .with_broker_id(BrokerId(2))
        .with_broker_epoch(41)
        .with_current_metadata_offset(977)
        .with_want_shut_down(true);
    let m = decode_request(&kp::request(ApiKey::BrokerHeartbeat, 1, 1, &q));
    assert_eq!(
        body_words(&m),
        "broker=2 broker_epoch=41 metadata_offset=977 want_shutdown"
    );
    let p = BrokerHeartbeatResponse::default()
        .with_is_caught_up(true)
        .with_is_fenced(true)
        .with_should_shut_down(false);
    let m = decode_response(&kp::response(ApiKey::BrokerHeartbeat, 1, 1, &p), 63, 1);
    assert_eq!(body_words(&m), "error=NONE caught_up fenced");
    let p = BrokerRegistrationResponse::default().with_broker_epoch(204);
    let m = decode_response(&kp::response(ApiKey::BrokerRegistration, 4, 1, &p), 62, 4);
    assert_eq!(body_words(&m), "error=NONE broker_epoch=204");
}

/// Group descriptions say each group's state and members; member lists show the first few.
#[test]
fn described_groups_say_their_state_and_members() {
    use kafka_protocol::messages::*;
    let member = || describe_groups_response::DescribedGroupMember::default();
    let p = DescribeGroupsResponse::default().with_groups(vec![
        describe_groups_response::DescribedGroup::default()
            .with_group_id(GroupId(st("orders")))
            .with_group_state(st("Stable"))
            .with_members(vec![member(), member(), member()]),
        describe_groups_response::DescribedGroup::default()
            .with_group_id(GroupId(st("gone")))
            .with_error_code(69)
            .with_group_state(st("Dead")),
    ]);
    let m = decode_response(&kp::response(ApiKey::DescribeGroups, 5, 1, &p), 15, 5);
    assert_eq!(
        essentials(&m),
        "groups=[orders(Stable, 3 members), gone(GROUP_ID_NOT_FOUND, Dead, 0 members)]"
    );
    let q = LeaveGroupRequest::default()
        .with_group_id(GroupId(st("orders")))
        .with_members(
            ["m-1", "m-2", "m-3"]
                .iter()
                .map(|id| leave_group_request::MemberIdentity::default().with_member_id(st(id)))
                .collect(),
        );
    let m = decode_request(&kp::request(ApiKey::LeaveGroup, 5, 1, &q));
    assert_eq!(
        body_words(&m),
        "group=\"orders\" members=[m-1, m-2, +1 more]"
    );
}
