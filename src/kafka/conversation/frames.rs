//! Hex input: cutting a byte stream into frames by their int32 size prefixes (with the
//! framing core, [`super::framing`]), and telling requests from responses when nothing but the
//! bytes is known (pairing with the pairing core, [`super::pairing`]).

use super::framing::{self, Prefix};
use super::pairing::{self, Pending};
use super::stream::{Notice, Record, Sink};
use super::topics::TopicNames;
use crate::kafka::meaning::problem::HeaderOnly;
use crate::kafka::spec::schema::registry;
use crate::kafka::walk::decode::{DecodeOptions, ErrorKind};
use crate::kafka::walk::message::peek_request;
use crate::kafka::walk::message::{
    decode_request, decode_response_header_only, peek_response_correlation, Message,
};
use crate::kafka::walk::message::{
    decode_request_with, decode_response_embedding, decode_response_with,
};
use std::net::{Ipv4Addr, SocketAddr};

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
#[derive(Debug)]
pub struct Conversation {
    /// Each request's API and version, and those of the request it carried (an Envelope's).
    pending: Pending<pairing::WithEmbedded>,
    /// Limits for decoding each frame.
    pub opts: DecodeOptions,
}

/// Requests a hex conversation keeps waiting: all of them, as hex input always has (its table
/// grows with the frames read, a dozen bytes of input or more each). Bounding it like a
/// capture's ([`pairing::MAX_PENDING`]) would change which responses pair in inputs with more
/// unanswered requests than that.
const HEX_PENDING: usize = usize::MAX;

impl Default for Conversation {
    fn default() -> Self {
        Conversation::with_options(DecodeOptions::default())
    }
}

impl Conversation {
    pub fn with_options(opts: DecodeOptions) -> Conversation {
        Conversation {
            pending: Pending::new(HEX_PENDING),
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
        let paired = corr.and_then(|c| self.pending.get(c).copied());
        let hinted = hint.api_key.zip(hint.api_version);
        if hint.force_response {
            if let (Some(c), Some((api, embedded))) = (corr, paired) {
                self.pending.take(c);
                return decode_response_embedding(frame, api, embedded, self.opts);
            }
            return match hinted {
                Some((k, v)) => decode_response_with(frame, k, v, self.opts),
                None => decode_response_header_only(
                    frame,
                    ErrorKind::Unpaired,
                    HeaderOnly::NoRequest {
                        correlation_id: corr.unwrap_or_default(),
                    },
                ),
            };
        }
        let mut as_response = paired
            .map(|(api, embedded)| decode_response_embedding(frame, api, embedded, self.opts));
        if let Some(r) = as_response.take_if(|r| r.is_clean()) {
            if let Some(c) = corr {
                self.pending.take(c);
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
                self.pending.take(c);
            }
            return r;
        }
        if let Some((k, v)) = hinted {
            return decode_response_with(frame, k, v, self.opts);
        }
        if pairing::taken_for_request(&req) {
            self.remember(&req);
            return req;
        }
        let (kind, reason) = lone_response_reason(corr);
        decode_response_header_only(frame, kind, reason)
    }

    fn remember(&mut self, req: &Message) {
        if let (Some(c), Some(k), Some(v)) = (req.correlation_id, req.api_key, req.api_version) {
            let embedded = req
                .embedded
                .as_ref()
                .and_then(|e| e.api_key.zip(e.api_version));
            self.pending.insert(c, ((k, v), embedded));
        }
    }
}

fn lone_response_reason(corr: Option<i32>) -> (ErrorKind, HeaderOnly) {
    match corr {
        Some(c) => (
            ErrorKind::Unpaired,
            HeaderOnly::NotARequest { correlation_id: c },
        ),
        None => (ErrorKind::Malformed, HeaderOnly::TooShort),
    }
}

/// What the cutter found next in a byte stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cut {
    /// A whole frame (prefix included), or at the end of the input a frame cut short.
    Frame {
        offset: u64,
        bytes: Vec<u8>,
        truncated: bool,
    },
    /// Bytes passed over to find the next frame after a size prefix that cannot be one.
    Skipped { offset: u64, len: u64, size: i64 },
}

/// Cuts frames out of bytes that arrive piece by piece (hex read line by line), holding at
/// most one frame: a size prefix that is negative, too small for a header or over
/// `max_frame` is not waited for; the bytes after it are searched for the next *verified*
/// frame start, as captures are (the framing core's `find_boundary`): a request whose frame
/// decodes cleanly, or a response to a request seen that decodes with that request's API.
/// A bogus prefix thus does not take the later frames with it, nor does a plausible header
/// inside it that claims a frame running past them.
#[derive(Debug)]
pub struct Cutter {
    buf: Vec<u8>,
    /// Input offset of `buf[0]`.
    base: u64,
    max_frame: usize,
    /// Looking for a frame start after a bad prefix: (where it was, its size).
    lost: Option<(u64, i64)>,
    /// Requests cut so far (API key and version by correlation id), which a response may
    /// answer.
    requests: Pending<(i16, i16)>,
    /// The searches for a request and for a response after a bad prefix, over `buf[1..]`.
    scans: (framing::Scan, framing::Scan),
}

/// Requests remembered for telling responses among resync candidates.
const MAX_REMEMBERED: usize = 100_000;

impl Cutter {
    pub fn new(max_frame: usize) -> Cutter {
        Cutter {
            buf: Vec::new(),
            base: 0,
            max_frame,
            lost: None,
            requests: Pending::new(MAX_REMEMBERED),
            scans: Default::default(),
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    fn consume(&mut self, n: usize) {
        let n = n.min(self.buf.len());
        self.buf.drain(..n);
        self.base += n as u64;
    }

    /// After a bad prefix: the next verified frame start in the buffer, reported with the
    /// bytes skipped to reach it. Until one is found, bytes no candidate needs are dropped, so
    /// the buffer holds at most the candidates still waiting for their frames (and past the
    /// resync window the first of them is taken, as in captures).
    fn resync(&mut self) -> Option<Cut> {
        let (offset, size) = self.lost?;
        let data = self.buf.get(1..).unwrap_or(&[]);
        let search = |requests| framing::Search {
            requests,
            pending: &self.requests,
            used: &[],
            max_frame: self.max_frame,
            packet_starts: None,
        };
        let found = [
            framing::find_boundary(data, &search(true), &mut self.scans.0),
            framing::find_boundary(data, &search(false), &mut self.scans.1),
        ]
        .into_iter()
        .flatten()
        .min();
        if let Some(at) = found {
            return Some(self.skip_to(1 + at, offset, size));
        }
        let low = self.scans.0.low_water().min(self.scans.1.low_water());
        self.consume(low);
        self.scans.0.shift(low);
        self.scans.1.shift(low);
        None
    }

    /// Ends a search: the bytes up to `at` of the buffer are skipped.
    fn skip_to(&mut self, at: usize, offset: u64, size: i64) -> Cut {
        self.consume(at);
        self.lost = None;
        self.scans = Default::default();
        Cut::Skipped {
            offset,
            len: self.base - offset,
            size,
        }
    }

    /// The next frame or skip, `None` until more bytes arrive.
    pub fn next_cut(&mut self) -> Option<Cut> {
        if self.lost.is_some() {
            return self.resync();
        }
        let len = match framing::prefix(&self.buf, self.max_frame)? {
            Prefix::Frame(len) => len,
            Prefix::Bad(size) => {
                self.lost = Some((self.base, size.into()));
                return self.resync();
            }
        };
        let bytes = self.buf.get(..len)?.to_vec();
        // Only a request of an API and version worth decoding is remembered: junk read as a
        // header must not make a later bogus prefix look like an answer.
        if let Some(p) =
            peek_request(&bytes).filter(|p| registry().plausible(p.api_key, p.api_version))
        {
            self.requests
                .insert(p.correlation_id, (p.api_key, p.api_version));
        }
        let offset = self.base;
        self.consume(len);
        Some(Cut::Frame {
            offset,
            bytes,
            truncated: false,
        })
    }

    /// At the end of the input, called until it returns `None`: the frames left, then what
    /// remains as a frame cut short or as skipped bytes. Still searching after a bad prefix,
    /// the first candidate whose frame did not complete is the best there is: the bytes
    /// before it are skipped and it is cut short.
    pub fn finish(&mut self) -> Option<Cut> {
        if let Some((offset, size)) = self.lost {
            let first = [self.scans.0.first_waiting(), self.scans.1.first_waiting()]
                .into_iter()
                .flatten()
                .min();
            if let Some(at) = first {
                return Some(self.skip_to(1 + at, offset, size));
            }
            self.lost = None;
            let len = self.base + self.buf.len() as u64 - offset;
            self.consume(self.buf.len());
            return Some(Cut::Skipped { offset, len, size });
        }
        if let Some(cut) = self.next_cut() {
            return Some(cut);
        }
        if self.buf.is_empty() {
            return None;
        }
        let offset = self.base;
        let bytes = std::mem::take(&mut self.buf);
        self.base += bytes.len() as u64;
        Some(Cut::Frame {
            offset,
            bytes,
            truncated: true,
        })
    }
}

/// Hex input's cuts handed to a sink as a capture's messages are: each frame decoded, told
/// a request or a response, its topic ids named, and passed on as a [`Record`] placed by its
/// input offset; bytes passed over as a [`Notice::InputSkipped`]. One conversation runs over
/// every input read, as frames count over them all.
#[derive(Debug)]
pub struct Reader {
    conv: Conversation,
    topics: TopicNames,
    /// Frames read so far: the records' frame numbers.
    frames: u64,
}

/// Where hex input's records come from and go to: it has no addresses.
const NOWHERE: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0);

impl Reader {
    pub fn new(opts: DecodeOptions) -> Reader {
        Reader {
            conv: Conversation::with_options(opts),
            topics: TopicNames::default(),
            frames: 0,
        }
    }

    /// One cut, to `sink`; `hint` says what a frame with nothing else to go by is.
    pub fn cut(&mut self, cut: Cut, hint: &ResponseHint, sink: &mut impl Sink) {
        match cut {
            Cut::Frame { offset, bytes, .. } => self.frame(offset, &bytes, hint, sink),
            Cut::Skipped { offset, len, size } => sink.notice(&Notice::InputSkipped {
                offset,
                skipped: len,
                size,
            }),
        }
    }

    fn frame(&mut self, offset: u64, bytes: &[u8], hint: &ResponseHint, sink: &mut impl Sink) {
        let mut msg = self.conv.decode(bytes, hint);
        self.topics.observe(&mut msg);
        self.frames += 1;
        sink.message(&Record {
            stream: 0,
            frame: self.frames,
            first_frame: self.frames,
            last_frame: self.frames,
            ts_nanos: 0,
            src: NOWHERE,
            dst: NOWHERE,
            msg,
            bytes,
            request: None,
            assumed: false,
            partial: false,
            ended: None,
            tls: false,
            input_offset: Some(offset),
        });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod cutter_tests {
    use super::*;

    /// A Metadata v1 request (non-flexible header), correlation id `corr`.
    fn request(corr: i32) -> Vec<u8> {
        let mut f = vec![0, 3, 0, 1];
        f.extend_from_slice(&corr.to_be_bytes());
        f.extend_from_slice(&[0, 1, b't', 0xff, 0xff, 0xff, 0xff]);
        let mut out = (f.len() as i32).to_be_bytes().to_vec();
        out.extend(f);
        out
    }

    fn cut_all(c: &mut Cutter) -> Vec<Cut> {
        let mut v = Vec::new();
        while let Some(x) = c.next_cut() {
            v.push(x);
        }
        while let Some(x) = c.finish() {
            v.push(x);
        }
        v
    }

    #[test]
    fn frames_arrive_in_pieces() {
        let mut c = Cutter::new(1 << 20);
        let (a, b) = (request(1), request(2));
        let all = [a.clone(), b.clone()].concat();
        let mut got = Vec::new();
        for ch in all.chunks(3) {
            c.push(ch);
            while let Some(x) = c.next_cut() {
                got.push(x);
            }
        }
        assert!(c.finish().is_none());
        assert_eq!(
            got,
            vec![
                Cut::Frame {
                    offset: 0,
                    bytes: a.clone(),
                    truncated: false
                },
                Cut::Frame {
                    offset: a.len() as u64,
                    bytes: b,
                    truncated: false
                },
            ]
        );
    }

    #[test]
    fn a_bogus_prefix_does_not_take_the_later_frames() {
        let mut c = Cutter::new(1 << 20);
        let mut input = 90_000_000i32.to_be_bytes().to_vec();
        input.extend_from_slice(&[7; 20]);
        input.extend(request(5));
        input.extend(request(6));
        c.push(&input);
        let got = cut_all(&mut c);
        assert_eq!(
            got[0],
            Cut::Skipped {
                offset: 0,
                len: 24,
                size: 90_000_000
            }
        );
        assert!(matches!(&got[1], Cut::Frame { offset: 24, .. }));
        assert!(matches!(
            &got[2],
            Cut::Frame {
                truncated: false,
                ..
            }
        ));
        assert_eq!(got.len(), 3);
    }

    /// What a sink is handed: records' (frame, input offset), and notices.
    #[derive(Default)]
    struct Seen(Vec<(u64, Option<u64>)>, Vec<Notice>);

    impl Sink for Seen {
        fn message(&mut self, rec: &Record<'_>) {
            assert!(rec.msg.is_clean(), "{:?}", rec.msg.error);
            self.0.push((rec.frame, rec.input_offset));
        }
        fn notice(&mut self, n: &Notice) {
            self.1.push(n.clone());
        }
    }

    #[test]
    fn the_reader_hands_frames_as_records_and_skips_as_notices() {
        let mut c = Cutter::new(1 << 20);
        let (a, b) = (request(1), request(2));
        let input = [a.clone(), vec![0xff; 4], b].concat();
        c.push(&input);
        let mut reader = Reader::new(DecodeOptions::default());
        let mut seen = Seen::default();
        for cut in cut_all(&mut c) {
            reader.cut(cut, &ResponseHint::default(), &mut seen);
        }
        let after = a.len() as u64;
        assert_eq!(seen.0, vec![(1, Some(0)), (2, Some(after + 4))]);
        assert_eq!(
            seen.1,
            vec![Notice::InputSkipped {
                offset: after,
                skipped: 4,
                size: -1
            }]
        );
    }

    #[test]
    fn endless_zeros_are_held_in_bounded_memory() {
        let mut c = Cutter::new(1 << 20);
        for _ in 0..1000 {
            c.push(&[0; 4096]);
            while c.next_cut().is_some() {}
            assert!(c.buf.len() <= 4096 + framing::REQUEST_PEEK);
        }
        assert_eq!(
            c.finish(),
            Some(Cut::Skipped {
                offset: 0,
                len: 4_096_000,
                size: 0
            })
        );
    }
}
