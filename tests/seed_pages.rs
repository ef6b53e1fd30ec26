//! The seed pages' minimal instances must decode to the pages' object trees, node for node.

mod common;

use common::{assert_tiles, fixture, vector};
use kdissect::kafka::frames::{Conversation, ResponseHint};
use kdissect::kafka::{decode_request, decode_response, Message, Node};
use kdissect::render::{tree, Style};

fn render(msg: &Message, frame: &[u8]) -> String {
    let mut out = Vec::new();
    tree::write(&mut out, msg.root(), frame, Style::default()).expect("render");
    String::from_utf8(out).expect("utf8")
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn seed_tree(name: &str) -> String {
    std::fs::read_to_string(fixture(&format!("seed/{name}.tree"))).expect("seed tree")
}

/// The pages describe a generated example, whose array length nodes say "one sample element
/// follows"; a decoded frame says "one element follows". That is the only wording allowed to
/// differ.
fn as_decoded(seed: &str) -> String {
    squash(seed).replace("one sample element follows", "one element follows")
}

fn check_exact(vector_name: &str, seed_name: &str, response_of: Option<(i16, i16)>) {
    let frame = vector(vector_name);
    let msg = match response_of {
        None => decode_request(&frame),
        Some((k, v)) => decode_response(&frame, k, v),
    };
    assert!(
        msg.is_clean(),
        "{vector_name}: {:?} {:?}",
        msg.error,
        msg.diagnoses
    );
    assert_tiles(&msg);
    let ours = squash(&render(&msg, &frame));
    let want = as_decoded(&seed_tree(seed_name));
    if ours != want {
        // Point at the first differing node rather than dumping two long lines.
        let a: Vec<&str> = ours.split(" +-- ").collect();
        let b: Vec<&str> = want.split(" +-- ").collect();
        for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
            assert_eq!(x, y, "{seed_name}: node {i} differs");
        }
        assert_eq!(a.len(), b.len(), "{seed_name}: node count differs");
    }
}

#[test]
fn metadata_v13_request_matches_seed_page() {
    check_exact("metadata-v13-request.hex", "metadata-v13-request", None);
}

#[test]
fn metadata_v13_response_matches_seed_page() {
    check_exact(
        "metadata-v13-response.hex",
        "metadata-v13-response",
        Some((3, 13)),
    );
}

#[test]
fn describe_cluster_v2_request_matches_seed_page() {
    check_exact(
        "describe-cluster-v2-request.hex",
        "describe-cluster-v2-request",
        None,
    );
}

#[test]
fn describe_cluster_v2_response_matches_seed_page() {
    check_exact(
        "describe-cluster-v2-response.hex",
        "describe-cluster-v2-response",
        Some((60, 2)),
    );
}

/// One node of a seed tree: text outside the span, and the span.
#[derive(Debug)]
struct SeedNode {
    text: String,
    offset: usize,
    len: usize,
}

fn parse_seed_nodes(seed: &str) -> Vec<SeedNode> {
    as_decoded(seed)
        .split("+-- ")
        .map(|part| {
            let part = part.trim().trim_end_matches(['|', ' ']).trim();
            let open = part.find(" [0x").expect("span");
            let close = part[open..].find(']').expect("span end") + open;
            let span = &part[open + 4..close];
            let (off, len) = span.split_once(", ").expect("offset, len");
            SeedNode {
                text: format!("{}{}", &part[..open], &part[close + 1..]),
                offset: usize::from_str_radix(off, 16).expect("hex offset"),
                len: len.trim_end_matches('B').parse().expect("length"),
            }
        })
        .collect()
}

fn flatten<'a>(n: &'a Node, out: &mut Vec<&'a Node>) {
    out.push(n);
    for c in &n.children {
        flatten(c, out);
    }
}

/// DescribeTopicPartitions: the pages omit the nullable struct's presence byte. The real
/// encoding must give the page's tree plus one `present` node, with offsets after it shifted
/// by one and the spans that contain it one byte longer.
fn check_with_presence_byte(
    vector_name: &str,
    seed_name: &str,
    response_of: Option<(i16, i16)>,
    struct_name: &str,
) {
    let frame = vector(vector_name);
    let msg = match response_of {
        None => decode_request(&frame),
        Some((k, v)) => decode_response(&frame, k, v),
    };
    assert!(
        msg.is_clean(),
        "{vector_name}: {:?} {:?}",
        msg.error,
        msg.diagnoses
    );
    assert_tiles(&msg);
    let mut nodes = Vec::new();
    flatten(msg.root(), &mut nodes);
    let presence = nodes
        .iter()
        .find(|n| n.name == "present")
        .map(|n| n.offset)
        .expect("presence byte node");
    let ours: Vec<&&Node> = nodes.iter().filter(|n| n.name != "present").collect();
    let seed = parse_seed_nodes(&seed_tree(seed_name));
    assert_eq!(ours.len(), seed.len(), "node count");
    for (n, s) in ours.iter().zip(seed.iter()) {
        let mut line = tree::node_line(n, &frame, Style::default());
        let open = line.find(" [0x").expect("span");
        let close = line[open..].find(']').expect("span end") + open;
        line = format!("{}{}", &line[..open], &line[close + 1..]);
        if n.name == "size" {
            // The size prefix counts the presence byte too.
            assert_eq!(
                line.replace(&format!("= {}", s_size(&s.text) + 1), "= X"),
                s.text.replace(&format!("= {}", s_size(&s.text)), "= X")
            );
        } else {
            assert_eq!(squash(&line), s.text.trim(), "node {}", n.name);
        }
        let holds_presence = n.children.iter().any(|c| c.name == "present");
        let contains = n.offset <= presence && presence < n.end();
        let want_off = if s.offset > presence || (s.offset == presence && !holds_presence) {
            s.offset + 1
        } else {
            s.offset
        };
        let want_len = if contains { s.len + 1 } else { s.len };
        assert_eq!(
            (n.offset, n.len),
            (want_off, want_len),
            "span of {} ({struct_name} presence byte at 0x{presence:04x})",
            n.name
        );
    }
}

fn s_size(text: &str) -> i64 {
    text.split("= ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .expect("size value")
}

#[test]
fn describe_topic_partitions_request_matches_seed_page_plus_presence_byte() {
    check_with_presence_byte(
        "describe-topic-partitions-v0-request.hex",
        "describe-topic-partitions-v0-request",
        None,
        "Cursor",
    );
}

#[test]
fn describe_topic_partitions_response_matches_seed_page_plus_presence_byte() {
    check_with_presence_byte(
        "describe-topic-partitions-v0-response.hex",
        "describe-topic-partitions-v0-response",
        Some((75, 0)),
        "NextCursor",
    );
}

/// The pages' own DescribeTopicPartitions bytes lack the presence byte: they must be reported
/// as malformed with a diagnosis that names it, without a panic.
#[test]
fn seed_bytes_without_presence_byte_are_diagnosed() {
    for (file, kind, name) in [
        (
            "describe-topic-partitions-v0-request.seed.hex",
            None,
            "Cursor",
        ),
        (
            "describe-topic-partitions-v0-response.seed.hex",
            Some((75, 0)),
            "NextCursor",
        ),
    ] {
        let frame = vector(file);
        let msg = match kind {
            None => decode_request(&frame),
            Some((k, v)) => decode_response(&frame, k, v),
        };
        assert!(!msg.is_clean(), "{file} decoded cleanly");
        assert_tiles(&msg);
        let all: Vec<String> = msg.diagnoses.iter().map(|d| d.to_string()).collect();
        assert!(
            all.iter()
                .any(|m| m.contains(name) && m.contains("presence byte")),
            "{file}: no diagnosis names the {name} presence byte: {all:?}"
        );
    }
}

/// A request followed by its response: the response is decoded with the request's API.
#[test]
fn request_then_response_pair_up() {
    let mut bytes = vector("describe-cluster-v2-request.hex");
    bytes.extend(vector("describe-cluster-v2-response.hex"));
    let mut conv = Conversation::default();
    let spans = kdissect::kafka::frames::split(&bytes);
    assert_eq!(spans.len(), 2);
    let msgs: Vec<Message> = spans
        .iter()
        .map(|s| conv.decode(&bytes[s.offset..s.offset + s.len], &ResponseHint::default()))
        .collect();
    assert_eq!(msgs[0].root().name, "DescribeClusterRequest");
    assert_eq!(msgs[1].root().name, "DescribeClusterResponse");
    assert!(msgs.iter().all(|m| m.is_clean()));
}
