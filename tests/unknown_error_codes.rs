//! An error code Kafka does not define is shown with its number, as tshark shows a value it
//! cannot name (issue 35, item 9): `unknown error 9999` on the summary line, beside the entry
//! it belongs to, among the partition errors, and `(unknown error code 9999)` in the tree.

mod common;

use common::{get, kp};
use kdissect::kafka::decode_response;
use kdissect::render::summary::essentials;
use kdissect::render::{tree, Style};

fn st(s: &'static str) -> kafka_protocol::protocol::StrBytes {
    kafka_protocol::protocol::StrBytes::from_static_str(s)
}

/// A Heartbeat answer with a top-level error no Kafka version defines.
#[test]
fn a_top_level_unknown_error_is_told_with_its_number() {
    use kafka_protocol::messages::*;
    let hb = HeartbeatResponse::default().with_error_code(9999);
    let frame = kp::response(ApiKey::Heartbeat, 4, 1, &hb);
    let m = decode_response(&frame, 12, 4);
    assert!(m.is_clean(), "{:?}", m.error);
    assert_eq!(essentials(&m), "error=unknown error 9999");
    let l = tree::node_line(get(&m, "ErrorCode"), &frame, Style::default());
    assert!(
        l.starts_with("ErrorCode int16 = 9999 (unknown error code 9999) ["),
        "{l}"
    );
    // A known code keeps its name alone.
    let hb = HeartbeatResponse::default().with_error_code(27);
    let m = decode_response(&kp::response(ApiKey::Heartbeat, 4, 1, &hb), 12, 4);
    assert_eq!(essentials(&m), "error=REBALANCE_IN_PROGRESS");
}

/// Beside an entry of a list, and among a Produce answer's partition errors (two codes, one
/// unknown, each told once).
#[test]
fn unknown_errors_of_entries_and_partitions_are_told_with_their_number() {
    use kafka_protocol::messages::*;
    let cp = CreatePartitionsResponse::default().with_results(vec![
        create_partitions_response::CreatePartitionsTopicResult::default()
            .with_name(TopicName(st("orders")))
            .with_error_code(-200),
        create_partitions_response::CreatePartitionsTopicResult::default()
            .with_name(TopicName(st("payments")))
            .with_error_code(37),
    ]);
    let m = decode_response(&kp::response(ApiKey::CreatePartitions, 3, 1, &cp), 37, 3);
    assert_eq!(
        essentials(&m),
        "topics=[orders(unknown error -200), payments(INVALID_PARTITIONS)]"
    );

    let parts = (0..3)
        .map(|i| {
            produce_response::PartitionProduceResponse::default()
                .with_index(i)
                .with_error_code([9999, 6, 9999][i as usize])
        })
        .collect();
    let pr = ProduceResponse::default().with_responses(vec![
        produce_response::TopicProduceResponse::default()
            .with_name(TopicName(st("orders")))
            .with_partition_responses(parts),
    ]);
    let m = decode_response(&kp::response(ApiKey::Produce, 9, 1, &pr), 0, 9);
    assert!(m.is_clean(), "{:?}", m.error);
    let line = essentials(&m);
    assert!(
        line.contains("partition_errors=3(unknown error 9999,NOT_LEADER_OR_FOLLOWER)"),
        "{line}"
    );
}
