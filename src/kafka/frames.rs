//! Cutting a byte stream into frames by their int32 size prefixes, and telling requests from
//! responses when nothing but the bytes is known (hex input).

use super::decode::DecodeOptions;
use super::message::{
    decode_request, decode_response_header_only, peek_response_correlation, Message,
};
use super::message::{decode_request_with, decode_response_with};
use super::schema::registry;
use std::collections::HashMap;

/// One frame's place in a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameSpan {
    pub offset: usize,
    /// Bytes present (prefix included).
    pub len: usize,
    /// The size prefix asked for more bytes than the buffer holds.
    pub truncated: bool,
}

/// Cuts `buf` into frames. A last frame shorter than its prefix says is returned truncated;
/// a negative prefix swallows the rest of the buffer (there is no way to find the next frame).
pub fn split(buf: &[u8]) -> Vec<FrameSpan> {
    let mut out = Vec::new();
    let mut p = 0usize;
    while p < buf.len() {
        let rest = buf.len() - p;
        let Some(b) = buf.get(p..p + 4) else {
            out.push(FrameSpan {
                offset: p,
                len: rest,
                truncated: true,
            });
            break;
        };
        let size = crate::be::i32_at(b, 0);
        if size < 0 {
            out.push(FrameSpan {
                offset: p,
                len: rest,
                truncated: false,
            });
            break;
        }
        let want = 4 + size as usize;
        if want > rest {
            out.push(FrameSpan {
                offset: p,
                len: rest,
                truncated: true,
            });
            break;
        }
        out.push(FrameSpan {
            offset: p,
            len: want,
            truncated: false,
        });
        p += want;
    }
    out
}

/// What the user said about responses whose request is not in the input.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResponseHint {
    pub api_key: Option<i16>,
    pub api_version: Option<i16>,
    /// Decode every frame as a response.
    pub force_response: bool,
}

/// Requests seen so far on one conversation, waiting for their responses.
#[derive(Debug, Default)]
pub struct Conversation {
    pending: HashMap<i32, (i16, i16)>,
    /// Limits for decoding each frame.
    pub opts: DecodeOptions,
}

impl Conversation {
    pub fn with_options(opts: DecodeOptions) -> Conversation {
        Conversation {
            pending: HashMap::new(),
            opts,
        }
    }

    /// Decodes one frame, deciding whether it is a request or a response: a response to a
    /// request seen earlier wins if it decodes cleanly, then a clean request, then the rest.
    pub fn decode(&mut self, frame: &[u8], hint: &ResponseHint) -> Message {
        // A negative or missing size prefix is the frame's problem, whatever its direction.
        if frame.get(0..4).is_none_or(|b| crate::be::i32_at(b, 0) < 0) {
            return decode_request(frame);
        }
        let corr = peek_response_correlation(frame);
        let paired = corr.and_then(|c| self.pending.get(&c).copied());
        let hinted = hint.api_key.zip(hint.api_version);
        if hint.force_response {
            if let (Some(c), Some((k, v))) = (corr, paired) {
                self.pending.remove(&c);
                return decode_response_with(frame, k, v, self.opts);
            }
            return match hinted {
                Some((k, v)) => decode_response_with(frame, k, v, self.opts),
                None => decode_response_header_only(
                    frame,
                    &format!(
                        "no request with correlation_id {} came before this response: give --api-key K --api-version V to decode it",
                        corr.unwrap_or_default()
                    ),
                ),
            };
        }
        let mut as_response = paired.map(|(k, v)| decode_response_with(frame, k, v, self.opts));
        if let Some(r) = as_response.take_if(|r| r.is_clean()) {
            if let Some(c) = corr {
                self.pending.remove(&c);
            }
            return r;
        }
        let req = decode_request_with(frame, self.opts);
        if req.is_clean() {
            self.remember(&req);
            return req;
        }
        if let Some(r) = as_response {
            if let Some(c) = corr {
                self.pending.remove(&c);
            }
            return r;
        }
        if let Some((k, v)) = hinted {
            return decode_response_with(frame, k, v, self.opts);
        }
        if plausible_request(&req) {
            self.remember(&req);
            return req;
        }
        decode_response_header_only(frame, &lone_response_reason(corr))
    }

    fn remember(&mut self, req: &Message) {
        if let (Some(c), Some(k), Some(v)) = (req.correlation_id, req.api_key, req.api_version) {
            self.pending.insert(c, (k, v));
        }
    }
}

/// A request header that decoded whole, with an API key and version in the ranges Kafka and
/// its vendors use: shown as a request even when its API or version is unknown.
fn plausible_request(req: &Message) -> bool {
    let known = req
        .api_key
        .zip(req.api_version)
        .is_some_and(|(k, v)| registry().knows(k, v));
    let header_whole = req.client_id.is_some();
    let in_range = req
        .api_key
        .zip(req.api_version)
        .is_some_and(|(k, v)| (0..=2000).contains(&k) && (0..=127).contains(&v));
    // A response read as a request takes the high half of its correlation id as the API key;
    // clients count correlation ids up from 0, so a lone response usually reads as API key 0.
    // An unclean "request" with key 0 is therefore taken for the response it most likely is.
    let looks_like_response = req.api_key == Some(0);
    (known || (header_whole && in_range)) && !looks_like_response
}

fn lone_response_reason(corr: Option<i32>) -> String {
    match corr {
        Some(c) => format!(
            "not a request kdissect knows, and no request with correlation_id {c} came before it: \
             to decode it as a response, give --api-key K --api-version V"
        ),
        None => "frame too short for a request or response header".to_string(),
    }
}
