//! Lines for what happened on a connection rather than in a message: frames lost in gaps,
//! resynchronisations, unanswered requests, TLS connections.

use super::summary::{prefix, Clock};
use super::words::count;
use crate::kafka::message::api_display_name;
use crate::kafka::stream::{Notice, ResyncReason};
use crate::tcp::{EndKind, GapKind};
use crate::tls::{self, Problem, TlsConnection, TlsNotice};

/// The line for a notice, or none for those only counted (retransmissions, connections).
pub fn notice_line(n: &Notice, clock: &Clock) -> Option<String> {
    let rel = |ts: i64| clock.text(ts);
    Some(match n {
        Notice::LostInGap { stream, src, dst, at, present, kind } => {
            let why = match kind {
                GapKind::Lost(b) => format!(
                    "{} of the stream {} not captured",
                    count(*b, "byte"),
                    if *b == 1 { "was" } else { "were" }
                ),
                GapKind::Truncated(b) => {
                    format!("the snap length cut {} off a packet", count(*b, "byte"))
                }
                GapKind::MidStream => "the capture started inside it".to_string(),
                GapKind::LeftOut(b) => format!("a cut left out {b} bytes of the stream"),
            };
            format!(
                "{} !! a Kafka frame was lost in a gap: {why} ({present} of its bytes captured before the gap)",
                prefix(clock, at.frame, at.ts_nanos, src, dst, *stream)
            )
        }
        Notice::Resync { stream, src, dst, at, skipped, reason } => {
            let why = match reason {
                ResyncReason::MidStream => "the capture starts mid-stream",
                ResyncReason::Gap => "after a gap",
                ResyncReason::BadSize => "after a size prefix that cannot be a frame",
                ResyncReason::LeftOut => "after bytes a cut left out",
            };
            format!(
                "{} !! {why}: skipped {} to the next frame boundary",
                prefix(clock, at.frame, at.ts_nanos, src, dst, *stream),
                count(*skipped as u64, "byte")
            )
        }
        Notice::BadSize { stream, src, at, size } => format!(
            "{:>6} {} {src} [{stream}] !! size prefix {size} cannot start a frame: looking for the next boundary",
            at.frame,
            rel(at.ts_nanos)
        ),
        Notice::EndedInFrame { stream, src, dst, at, present, want, end } => format!(
            "{} !! {} inside a frame ({present} of its {want} bytes captured)",
            prefix(clock, at.frame, at.ts_nanos, src, dst, *stream),
            ended_why(*end)
        ),
        Notice::Unanswered { stream, src, dst, request } => format!(
            "{} !! unanswered: {} v{} Request corr={} got no response in the capture",
            prefix(clock, request.frame, request.ts_nanos, src, dst, *stream),
            api_display_name(request.api_key),
            request.api_version,
            request.correlation_id
        ),
        Notice::ConflictingOverlap { stream, at, offset } => format!(
            "{:>6} {} [{stream}] !! a retransmitted segment's bytes differ from the first copy at stream offset {offset}",
            at.frame,
            rel(at.ts_nanos)
        ),
        Notice::PendingDropped { stream, request, for_memory } => format!(
            "{:>6} {} [{stream}] !! {}: stopped waiting for corr={}",
            request.frame,
            rel(request.ts_nanos),
            if *for_memory {
                "the connections together held more than their memory budget for frames and waiting requests"
            } else {
                "too many requests waiting"
            },
            request.correlation_id
        ),
        Notice::FrameDropped { stream, src, dst, at, present } => format!(
            "{} !! a frame still arriving was dropped ({} held): the connections together held more than their memory budget for frames and waiting requests",
            prefix(clock, at.frame, at.ts_nanos, src, dst, *stream),
            count(*present as u64, "byte")
        ),
        Notice::InputSkipped { offset, skipped, size } => input_skipped(*offset, *skipped, *size),
        Notice::Retransmission { .. }
        | Notice::Connection { .. }
        | Notice::PickedUp { .. } => return None,
    })
}

/// Hex input: where bytes were skipped, from the size prefix that could not start a frame.
fn input_skipped(offset: u64, skipped: u64, size: i64) -> String {
    format!(
        "!! input offset 0x{offset:04x}: size prefix {size} cannot start a frame (negative, too small, or over --max-frame): skipped {} to the next frame",
        count(skipped, "byte")
    )
}

/// How a stream came to end inside a frame.
fn ended_why(end: EndKind) -> &'static str {
    match end {
        EndKind::Fin => "the connection closed",
        EndKind::Reset => "the connection was reset",
        EndKind::Reused => "a new connection on the same ports ended this one",
        EndKind::Evicted => "the connection was let go (too many open at once)",
        EndKind::CaptureEnd => "the capture ended",
    }
}

/// `frame time client → server [stream] TLS connection, TLS 1.3, SUITE (SNI "x"): ...`: what
/// was seen of a TLS connection and whether its keys were found and worked.
pub fn tls_line(t: &TlsConnection, clock: &Clock) -> String {
    let mut version = match (t.version, t.negotiated) {
        (Some(v), true) => tls::version_name(v),
        (Some(v), false) => format!("{} offered (no ServerHello seen)", tls::version_name(v)),
        (None, _) if t.midstream => "picked up mid-stream, handshake not captured".to_string(),
        (None, _) => "handshake not seen".to_string(),
    };
    if let Some(s) = t.suite {
        version = format!("{version}, {}", tls::suite_name(s));
    }
    let mut about = Vec::new();
    if let Some(sni) = &t.sni {
        about.push(format!("SNI {}", super::value::quote(sni)));
    }
    if !t.alpn.is_empty() {
        // Protocol names come from the wire: quoted and escaped, as the SNI is.
        let names: Vec<String> = t.alpn.iter().map(|p| super::value::quote(p)).collect();
        about.push(format!("ALPN {}", names.join(",")));
    }
    if t.resumed {
        about.push("resumed session".to_string());
    }
    let about = if about.is_empty() {
        String::new()
    } else {
        format!(" ({})", about.join(", "))
    };
    format!(
        "{} TLS connection, {version}{about}: {}",
        prefix(
            clock,
            t.told.frame,
            t.told.ts_nanos,
            &t.client,
            &t.server,
            t.stream
        ),
        tls_outcome(t)
    )
}

/// What became of a TLS connection's records.
fn tls_outcome(t: &TlsConnection) -> String {
    if t.keys == tls::Keys::Decrypted {
        return "decrypted with the session keys; its Kafka messages are marked tls".into();
    }
    let lost = if t.lost_bytes > 0 {
        format!(", {} not captured", count(t.lost_bytes, "byte"))
    } else {
        String::new()
    };
    let why = match t.keys {
        tls::Keys::NoKeyLog => "cannot be decoded without the session keys (--keylog FILE)".into(),
        tls::Keys::Missing => {
            "not decrypted: no key log given holds the secrets of its ClientHello random".into()
        }
        tls::Keys::NotKept => format!(
            "not decrypted: its ClientHello random is not among the {} kept of the key logs (the rest were left out, see above)",
            crate::tls::keylog::MAX_ENTRIES
        ),
        tls::Keys::Wrong => "not decrypted: the secrets logged for its ClientHello random do not authenticate its records (a key log of another run?)".into(),
        tls::Keys::UnsupportedSuite => "not decrypted: kdissect does not decrypt its cipher suite".into(),
        tls::Keys::NoHandshake if t.midstream => "cannot be decoded: the capture started after its ClientHello, so no secret can be matched to it".into(),
        tls::Keys::NoHandshake => "not decrypted: its hellos were not captured, so no secret can be matched to it".into(),
        tls::Keys::Found | tls::Keys::Decrypted => "session keys found; no encrypted record came to decrypt".to_string(),
    };
    format!(
        "{} of Kafka traffic encrypted in {}{lost}; {why}",
        count(t.encrypted_bytes, "byte"),
        count(t.records, "record")
    )
}

/// A problem inside a decrypted TLS connection.
pub fn tls_notice_line(n: &TlsNotice, clock: &Clock) -> String {
    let what = match n.problem {
        Problem::Lost { bytes } => format!(
            "{} of the TLS stream not captured: decryption of this direction waits for the next record that authenticates",
            count(bytes, "byte")
        ),
        Problem::Resumed { skipped } => format!(
            "TLS decryption resumed after a loss: skipped {} to a record that authenticates",
            count(skipped, "byte")
        ),
        Problem::GaveUp { why: tls::GiveUp::Trials } => "no TLS record authenticated after a loss: this direction is no longer decrypted".into(),
        Problem::GaveUp { why: tls::GiveUp::Connection } => "no TLS record authenticated after a loss before the connection's search passed --max-tls-search: this direction is no longer decrypted".into(),
        Problem::GaveUp { why: tls::GiveUp::Total } => "no TLS record authenticated after a loss before all connections' searches passed --max-tls-search-total: this direction is no longer decrypted".into(),
        Problem::BadHeader { kind, len } => format!(
            "a TLS record header that cannot be one (content type {kind}, length {len}): the record framing of this direction is lost"
        ),
        Problem::BadTag { seq } => format!(
            "TLS record {seq} does not authenticate (damaged): passed over as a gap"
        ),
        Problem::Renegotiation => "TLS renegotiation (a hello inside the encrypted connection): its new keys are not followed; the connection is no longer decrypted".into(),
        Problem::SecondServerHello => "a second ServerHello (not after a HelloRetryRequest): ignored, the first one's keys are kept".into(),
    };
    format!(
        "{} !! {what}",
        prefix(clock, n.at.frame, n.at.ts_nanos, &n.src, &n.dst, n.stream)
    )
}
