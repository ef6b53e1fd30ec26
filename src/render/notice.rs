//! Lines for what happened on a connection rather than in a message: frames lost in gaps,
//! resynchronisations, unanswered requests, TLS connections.

use super::summary::{prefix, Clock};
use super::words::count;
use crate::kafka::message::api_display_name;
use crate::kafka::stream::{Notice, ResyncReason};
use crate::tcp::{EndKind, GapKind};
use crate::tls::{self, TlsConnection};

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
        Notice::Retransmission { .. }
        | Notice::Connection { .. }
        | Notice::PickedUp { .. } => return None,
    })
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

/// `frame time client → server [stream] TLS 1.3 connection (SNI "x"): N bytes encrypted ...`
pub fn tls_line(t: &TlsConnection, clock: &Clock) -> String {
    let version = match (t.version, t.negotiated) {
        (Some(v), true) => tls::version_name(v),
        (Some(v), false) => format!("{} offered (no ServerHello seen)", tls::version_name(v)),
        (None, _) => "handshake not seen".to_string(),
    };
    let mut about = Vec::new();
    if let Some(sni) = &t.sni {
        about.push(format!("SNI {}", super::value::quote(sni)));
    }
    if !t.alpn.is_empty() {
        about.push(format!("ALPN {}", t.alpn.join(",")));
    }
    let about = if about.is_empty() {
        String::new()
    } else {
        format!(" ({})", about.join(", "))
    };
    let lost = if t.lost_bytes > 0 {
        format!(", {} not captured", count(t.lost_bytes, "byte"))
    } else {
        String::new()
    };
    format!(
        "{} TLS connection, {version}{about}: {} of Kafka traffic encrypted in {}{lost}; cannot be decoded without the session keys",
        prefix(clock, t.first.frame, t.first.ts_nanos, &t.client, &t.server, t.stream),
        count(t.encrypted_bytes, "byte"),
        count(t.records, "record")
    )
}
