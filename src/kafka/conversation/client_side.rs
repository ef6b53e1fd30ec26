//! Which side of a connection is the client when no broker port says so: weighed from what
//! each side has sent, the handshake and the ports, before anything of the connection is
//! decoded.
//!
//! A broker's answer read as a request often passes a header check: a correlation id under
//! 65 536 reads as API key 0 (Produce) and a version equal to it, and a zero throttle time as
//! an empty client_id. On a connection picked up mid-stream the broker may speak first (the
//! answer to a request sent before the capture), so the first side to show a request header
//! is not enough. What tells the sides apart:
//! - a whole first frame that decodes cleanly as a request of a version with a table (an
//!   answer read as one almost never does);
//! - the other side's frames answering its requests' correlation ids;
//! - the SYN, when it was captured;
//! - as last hints, the other side on a port Kafka commonly listens on while this one is not,
//!   and this side's port in the ephemeral range while the other's is not.
//!
//! Each side's bytes are read only as far as they are buffered for the decision, which the
//! connection bounds (`DETECT_EVENTS`, `DETECT_BUFFER`, `DEFER_PACKETS` in `stream`).

use super::framing::{likely_request_at, prefix, Prefix};
use crate::kafka::spec::schema::registry;
use crate::kafka::walk::header::{peek_request, peek_response_correlation};
use crate::kafka::walk::message::request_trial;
use crate::side::{Side, Sides};

/// Frames of each side read for correlation ids: a request and its answer on a connection
/// with a few requests in flight.
const EVIDENCE_FRAMES: usize = 8;

/// First port of the ephemeral range of Linux (32768-60999); Windows, macOS and the IANA
/// range (49152-65535) lie within it.
const EPHEMERAL_PORTS: u16 = 32768;

/// Ports Kafka commonly listens on, as `-i` captures them without `-p`
/// (`flags::hi::COMMON_KAFKA_PORTS` says where each comes from).
const COMMON_KAFKA_PORTS: [u16; 15] = [
    9092, 9093, 9094, 9095, 9096, 9097, 9098, 9192, 9194, 9196, 9198, 9292, 19092, 29092, 39092,
];

/// Weight of a whole first frame that decodes cleanly as a request.
const W_REQUEST: u32 = 4;
/// Weight of a first frame whose header alone reads as a request's.
const W_HEADER: u32 = 1;
/// Weight of requests the other side answers (a correlation id of each side matches).
const W_ANSWERED: u32 = 4;
/// Weight of having sent the SYN.
const W_SYN: u32 = 4;
/// Weight of an ephemeral port facing one that is not.
const W_EPHEMERAL: u32 = 1;
/// Weight of facing a port Kafka commonly listens on from one it does not.
const W_FACES_KAFKA_PORT: u32 = 1;
/// A side is taken for the client at once when it weighs this much more than the other: a
/// whole clean request against a mere header, a SYN or an answered header against nothing, a
/// header from an ephemeral port to a port Kafka commonly listens on; not a header and one
/// port hint.
const DECISIVE: u32 = 3;

/// How a side's first bytes read as a client's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Asks {
    /// Not as a request header.
    No,
    /// As a request header ([`likely_request_at`]) whose frame is not whole yet, or does not
    /// decode as a request.
    Header,
    /// As a whole request that decodes cleanly: of a version with a table, or of a newer one
    /// whose body fits the newest table exactly.
    Request,
}

/// What is known of a connection that no broker port decides.
pub struct Evidence<'a> {
    /// What each side has sent so far, from its first byte (or from the first byte after a
    /// mid-stream start).
    pub bytes: Sides<&'a [u8]>,
    /// The side that sent the SYN, when it was captured.
    pub syn_from: Option<Side>,
    pub ports: Sides<u16>,
    pub max_frame: usize,
}

/// The side taken for the client: one that sent at least a request header and weighs
/// [`DECISIVE`] more than the other. With `forced` (the connection cannot wait any longer),
/// the heavier of the sides that sent a request header; on a tie, `first`, the first side
/// seen sending one. `None`: no side yet (or, forced, none sent a request header).
pub fn client_side(e: &Evidence<'_>, forced: bool, first: Option<Side>) -> Option<Side> {
    let asks = Sides::new(
        asks(e.bytes[Side::A], e.max_frame),
        asks(e.bytes[Side::B], e.max_frame),
    );
    let weight = |s: Side| weigh(e, s, asks[s]);
    let (a, b) = (weight(Side::A), weight(Side::B));
    let candidates = Side::BOTH.into_iter().filter(|&s| asks[s] > Asks::No);
    let mut best: Option<(Side, u32)> = None;
    for s in candidates {
        let (mine, theirs) = if s == Side::A { (a, b) } else { (b, a) };
        if mine >= theirs + DECISIVE {
            return Some(s);
        }
        let better = match best {
            None => true,
            Some((_, w)) => mine > w || (mine == w && first == Some(s)),
        };
        if better {
            best = Some((s, mine));
        }
    }
    best.filter(|_| forced).map(|(s, _)| s)
}

/// How much says that side `s` is the client.
fn weigh(e: &Evidence<'_>, s: Side, asks: Asks) -> u32 {
    let mut w = match asks {
        Asks::No => 0,
        Asks::Header => W_HEADER,
        Asks::Request => W_REQUEST,
    };
    if asks > Asks::No && answered(e.bytes[s], e.bytes[s.other()], e.max_frame) {
        w += W_ANSWERED;
    }
    if e.syn_from == Some(s) {
        w += W_SYN;
    }
    let (mine, theirs) = (e.ports[s], e.ports[s.other()]);
    let ephemeral = |p: u16| p >= EPHEMERAL_PORTS;
    if ephemeral(mine) && !ephemeral(theirs) {
        w += W_EPHEMERAL;
    }
    if kafka_port(theirs) && !kafka_port(mine) {
        w += W_FACES_KAFKA_PORT;
    }
    w
}

/// Whether Kafka commonly listens on this port.
fn kafka_port(p: u16) -> bool {
    COMMON_KAFKA_PORTS.contains(&p)
}

/// How the first bytes of a side read as a client's.
pub fn asks(bytes: &[u8], max_frame: usize) -> Asks {
    if !likely_request_at(bytes, max_frame) {
        return Asks::No;
    }
    let Some(frame) = frames(bytes, max_frame).next() else {
        return Asks::Header;
    };
    let known = peek_request(frame).is_some_and(|p| registry().knows(p.api_key, p.api_version));
    let (clean, newer) = request_trial(frame);
    if (known && clean) || (!known && newer.is_some()) {
        Asks::Request
    } else {
        Asks::Header
    }
}

/// Whether the other side's frames answer a request of this side's: a correlation id of a
/// request header of `requests` (the first, whole or not, and those of the whole frames after
/// it) is that of a frame of `responses`.
fn answered(requests: &[u8], responses: &[u8], max_frame: usize) -> bool {
    let first = Some(requests).filter(|r| likely_request_at(r, max_frame));
    let mut asked = first
        .into_iter()
        .chain(frames(requests, max_frame).skip(1))
        .filter(|f| likely_request_at(f, max_frame))
        .filter_map(|f| peek_request(f).map(|p| p.correlation_id));
    let answers: Vec<i32> = frames(responses, max_frame)
        .filter_map(peek_response_correlation)
        .collect();
    asked.any(|c| answers.contains(&c))
}

/// The whole frames at the start of `bytes`, size after size (at most [`EVIDENCE_FRAMES`]),
/// each with its size prefix.
fn frames(bytes: &[u8], max_frame: usize) -> impl Iterator<Item = &[u8]> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        let Some(Prefix::Frame(len)) = prefix(rest, max_frame) else {
            return None;
        };
        let (frame, after) = rest.split_at_checked(len)?;
        rest = after;
        Some(frame)
    })
    .take(EVIDENCE_FRAMES)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    const MAX: usize = 1 << 20;

    /// A Metadata v12 request (header v2, no topics) with this correlation id.
    fn metadata_request(corr: i32) -> Vec<u8> {
        let client = b"consumer-1";
        let mut body = vec![0, 3, 0, 12];
        body.extend_from_slice(&corr.to_be_bytes());
        body.extend_from_slice(&(client.len() as i16).to_be_bytes());
        body.extend_from_slice(client);
        // Header tags; topics null, allow_auto_topic_creation, include_topic_authorized_ops;
        // body tags.
        body.extend_from_slice(&[0, 0, 1, 0, 0]);
        sized(&body)
    }

    /// A Fetch v16 answer with no topics (response header v1): an answer whose correlation
    /// id under 65 536 reads as a "Produce" request header of that version, with corr 0 and
    /// an empty client_id.
    fn fetch_answer(corr: i32) -> Vec<u8> {
        let mut body = corr.to_be_bytes().to_vec();
        // Header tags; throttle_time_ms, error_code, session_id, responses (empty), tags.
        body.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0x25, 0xc5, 0x96, 0xc5, 1, 0]);
        sized(&body)
    }

    fn sized(body: &[u8]) -> Vec<u8> {
        let mut f = (body.len() as i32).to_be_bytes().to_vec();
        f.extend_from_slice(body);
        f
    }

    fn evidence<'a>(a: &'a [u8], b: &'a [u8], ports: (u16, u16)) -> Evidence<'a> {
        Evidence {
            bytes: Sides::new(a, b),
            syn_from: None,
            ports: Sides::new(ports.0, ports.1),
            max_frame: MAX,
        }
    }

    #[test]
    fn an_answer_can_pass_for_a_request_header_but_not_for_a_request() {
        for corr in [0, 5, 14, 20] {
            let f = fetch_answer(corr);
            let a = asks(&f, MAX);
            assert!(a < Asks::Request, "corr {corr}: {a:?}");
        }
        // The case: a Fetch v16 answer with correlation id 14 reads as Produce v14.
        assert_eq!(asks(&fetch_answer(14), MAX), Asks::Header);
        assert_eq!(asks(&metadata_request(7), MAX), Asks::Request);
        let r = metadata_request(7);
        assert_eq!(asks(&r[..r.len() - 1], MAX), Asks::Header, "not whole yet");
        assert_eq!(asks(&[0, 0, 0, 9, 1, 2], MAX), Asks::No);
    }

    /// Picked up mid-stream, the broker speaks first: its answer alone decides nothing; the
    /// client's request, whole and clean, does.
    #[test]
    fn a_broker_speaking_first_is_not_taken_for_the_client() {
        let answer = fetch_answer(14);
        let e = evidence(&answer, &[], (9292, 53228));
        assert_eq!(client_side(&e, false, Some(Side::A)), None);
        let request = metadata_request(15);
        let e = evidence(&answer, &request, (9292, 53228));
        assert_eq!(client_side(&e, false, Some(Side::A)), Some(Side::B));
        // Without a port to go by, the clean request still outweighs the header.
        let e = evidence(&answer, &request, (40000, 50000));
        assert_eq!(client_side(&e, false, Some(Side::A)), Some(Side::B));
    }

    /// A request header alone is taken only when nothing else can be learnt; an answer with
    /// its correlation id decides at once.
    #[test]
    fn a_header_alone_waits_for_its_answer_or_the_end() {
        let r = metadata_request(15);
        let part = &r[..r.len() - 2];
        let e = evidence(part, &[], (53228, 39000));
        assert_eq!(client_side(&e, false, None), None);
        assert_eq!(client_side(&e, true, None), Some(Side::A));
        let answer = fetch_answer(15);
        let e = evidence(part, &answer, (53228, 39000));
        assert_eq!(client_side(&e, false, None), Some(Side::A));
        // Another correlation id is no answer.
        let answer = fetch_answer(16);
        let e = evidence(part, &answer, (53228, 39000));
        assert_eq!(client_side(&e, false, None), None);
        // Both port hints with it: from an ephemeral port to one Kafka commonly listens on.
        let e = evidence(part, &[], (53228, 9292));
        assert_eq!(client_side(&e, false, None), Some(Side::A));
        let e = evidence(part, &[], (9292, 9192));
        assert_eq!(client_side(&e, false, None), None);
    }

    #[test]
    fn the_syn_sender_with_a_request_header_is_the_client() {
        let r = metadata_request(1);
        let part = &r[..r.len() - 2];
        let mut e = evidence(&[], part, (9000, 9001));
        assert_eq!(client_side(&e, false, None), None);
        e.syn_from = Some(Side::B);
        assert_eq!(client_side(&e, false, None), Some(Side::B));
    }

    /// Forced, the heavier side wins, and on a tie the first seen asking; a side that never
    /// sent a request header is never the client.
    #[test]
    fn forced_the_heavier_side_then_the_first_wins() {
        let answer = fetch_answer(14);
        let e = evidence(&answer, &answer, (40000, 50000));
        assert_eq!(client_side(&e, true, Some(Side::B)), Some(Side::B));
        assert_eq!(client_side(&e, true, Some(Side::A)), Some(Side::A));
        let e = evidence(&answer, &answer, (9292, 50000));
        assert_eq!(client_side(&e, true, Some(Side::A)), Some(Side::B));
        let e = evidence(&[1, 2, 3], &[], (40000, 50000));
        assert_eq!(client_side(&e, true, None), None);
    }
}
