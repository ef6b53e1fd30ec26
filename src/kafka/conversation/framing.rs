//! The framing core: the size prefix rule, the one place that says what may start a frame (a
//! plausible request header, or a response that answers a waiting request), and the search for
//! the next frame start after damage. Hex input ([`super::frames::Cutter`]) and captures
//! ([`super::stream::Tracker`]) both cut with it; every limit it uses is named here.

use super::pairing::{Asked, Pending};
use crate::kafka::spec::names;
use crate::kafka::spec::schema::{registry, Direction};
use crate::kafka::walk::message::{decode_response, request_trial, response_is_clean, Message};
use std::ops::RangeInclusive;

/// Bytes of the int32 size prefix in front of every frame.
pub const SIZE_PREFIX: usize = 4;

/// Smallest size prefix cut as a frame: a response's correlation id. A smaller one, a negative
/// one or one over `max_frame` cannot start a frame, and the bytes after it are searched for
/// the next frame start.
pub const MIN_FRAME: i32 = 4;

/// Smallest size of a request frame: API key, version, correlation id, client_id length.
pub const MIN_REQUEST: i32 = 10;

/// Bytes a request header needs before it can be judged: size, API key and version,
/// correlation id, client_id length.
pub const REQUEST_PEEK: usize = 14;

/// Bytes a response header needs before it can be judged: size and correlation id.
pub const RESPONSE_PEEK: usize = 8;

/// Smallest size of a response found by search in hex input. Hex input has no direction to go
/// by, so a response candidate must hold a body as well as its correlation id; a capture's
/// broker side takes any frame of [`MIN_FRAME`] or more.
pub const MIN_HEX_RESPONSE: i32 = 8;

/// Versions taken for an API that has a name but no table (none, with the embedded tables).
pub const UNTABLED_VERSIONS: RangeInclusive<i16> = 0..=30;

/// Bytes kept while looking for a verified frame boundary before older bytes are dropped; past
/// it, the first candidate still waiting is taken.
pub const RESYNC_WINDOW: usize = 1024 * 1024;

/// Bytes kept of a search window that outgrew [`RESYNC_WINDOW`] with no boundary in it: a
/// header may begin in them and end in bytes still to come.
pub const RESYNC_KEEP: usize = 16;

/// Candidates kept waiting for their frame to complete.
pub const MAX_WAITING: usize = 64;

/// Frames after a candidate that must line up, size after size, to the end of the data for a
/// candidate that does not decode to be taken.
const CHAIN_HOPS: u32 = 4;

/// What a size prefix says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefix {
    /// A frame of this many bytes, prefix included.
    Frame(usize),
    /// A size that cannot be a frame's.
    Bad(i32),
}

/// The size prefix at the start of `buf`, judged against `max_frame`; `None` when fewer than
/// four bytes are there.
pub fn prefix(buf: &[u8], max_frame: usize) -> Option<Prefix> {
    let size = crate::be::i32_at(buf.get(0..SIZE_PREFIX)?, 0);
    Some(if size < MIN_FRAME || size as usize > max_frame {
        Prefix::Bad(size)
    } else {
        Prefix::Frame(SIZE_PREFIX + size as usize)
    })
}

/// A request header that could start a frame here: size, known API name, sane version,
/// client_id that fits and is UTF-8 (any of it, as Kafka reads it). Where the frame is then
/// decoded to verify it; where nothing verifies it, [`likely_request_at`].
pub fn plausible_request_at(buf: &[u8], max_frame: usize) -> bool {
    request_header_at(buf, max_frame, false)
}

/// A request header taken for one where nothing verifies it (the first bytes of a connection
/// on a port not given, a frame start taken unverified past [`RESYNC_WINDOW`] or in bytes that
/// will not grow): as [`plausible_request_at`], with a client_id that is text, without control
/// characters. Every real client's is; a header found inside other bytes (zero padding, the
/// tail of a string) often has NULs there.
pub fn likely_request_at(buf: &[u8], max_frame: usize) -> bool {
    request_header_at(buf, max_frame, true)
}

/// [`plausible_request_at`], or with `text` [`likely_request_at`].
fn request_header_at(buf: &[u8], max_frame: usize, text: bool) -> bool {
    let Some(h) = buf.get(0..REQUEST_PEEK) else {
        return false;
    };
    let size = crate::be::i32_at(h, 0);
    if size < MIN_REQUEST || size as usize > max_frame {
        return false;
    }
    let Some(p) = crate::kafka::walk::header::peek_request(buf) else {
        return false;
    };
    let known_version = match registry().get(p.api_key, Direction::Request) {
        Some(_) => registry().plausible(p.api_key, p.api_version),
        None => names::api_name(p.api_key).is_some() && UNTABLED_VERSIONS.contains(&p.api_version),
    };
    if !known_version {
        return false;
    }
    let cid = crate::be::i16_at(h, 12);
    // ControlledShutdown v0 has no client_id; everything else has one.
    if p.api_key == 7 && p.api_version == 0 {
        return true;
    }
    if cid < -1 || (cid > 0 && i64::from(cid) + i64::from(MIN_REQUEST) > i64::from(size)) {
        return false;
    }
    match buf.get(REQUEST_PEEK..REQUEST_PEEK + cid.max(0) as usize) {
        Some(id) => client_id_text(id, true, text),
        None => client_id_text(buf.get(REQUEST_PEEK..).unwrap_or(&[]), false, text),
    }
}

/// Whether the bytes of a client id (`whole`, or as many as have come) can be one: a Kafka
/// string is UTF-8, any of it (`café`, `クライアント`), as the broker reads it. Bytes that are
/// not UTF-8 cannot start a request; in an id not whole yet, a character cut at the end may
/// be completed by what follows. With `text`, no control character either.
fn client_id_text(id: &[u8], whole: bool, text: bool) -> bool {
    let (valid, ok) = match std::str::from_utf8(id) {
        Ok(s) => (s, true),
        Err(e) => (
            std::str::from_utf8(id.get(..e.valid_up_to()).unwrap_or(&[])).unwrap_or(""),
            !whole && e.error_len().is_none(),
        ),
    };
    ok && !(text && valid.chars().any(char::is_control))
}

/// A response header that answers a waiting request: a size of at least `min_size` (and at
/// most `max_frame`) and a correlation id `waiting` knows. `buf` holds at least
/// [`RESPONSE_PEEK`] bytes.
fn answers_at(buf: &[u8], min_size: i32, max_frame: usize, waiting: impl Fn(i32) -> bool) -> bool {
    let size = crate::be::i32_at(buf, 0);
    size >= min_size && size as usize <= max_frame && waiting(crate::be::i32_at(buf, 4))
}

/// Which frames a search looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// A capture's client side.
    Requests,
    /// A capture's broker side.
    Responses,
    /// Hex input, which has both in one stream.
    Either,
}

/// Whether a frame plausibly starts at `rest` (unverified: nothing is decoded, so a request's
/// client_id must be text, [`likely_request_at`]), `None` when more bytes are needed to tell.
/// `waiting` says which correlation ids a response may answer.
pub fn candidate_at(
    rest: &[u8],
    want: Want,
    max_frame: usize,
    waiting: impl Fn(i32) -> bool,
) -> Option<bool> {
    match want {
        Want::Requests => (rest.len() >= REQUEST_PEEK).then(|| likely_request_at(rest, max_frame)),
        Want::Responses => {
            (rest.len() >= RESPONSE_PEEK).then(|| answers_at(rest, MIN_FRAME, max_frame, waiting))
        }
        Want::Either => (rest.len() >= REQUEST_PEEK).then(|| {
            likely_request_at(rest, max_frame)
                || answers_at(rest, MIN_HEX_RESPONSE, max_frame, waiting)
        }),
    }
}

/// The first offset of `data` where a frame plausibly starts, in bytes that will not grow (cut
/// short by a gap, or at the end of a connection).
pub fn first_candidate<R: Asked>(
    data: &[u8],
    want: Want,
    pending: &Pending<R>,
    max_frame: usize,
) -> Option<usize> {
    (0..data.len().saturating_sub(RESPONSE_PEEK - 1)).find(|&i| {
        data.get(i..).is_some_and(|rest| {
            candidate_at(rest, want, max_frame, |c| pending.contains(c)) == Some(true)
        })
    })
}

/// Whether `data` is whole frames, size after size, to its end (within `hops` more frames).
pub fn chains_to_end(data: &[u8], max_frame: usize, hops: u32) -> bool {
    let Some(Prefix::Frame(len)) = prefix(data, max_frame) else {
        return false;
    };
    if len == data.len() {
        return true;
    }
    hops > 0
        && len < data.len()
        && chains_to_end(data.get(len..).unwrap_or(&[]), max_frame, hops - 1)
}

/// What a verified search knows of the side of a connection it searches.
pub struct Search<'a, R> {
    /// The side carries requests (client to broker), else responses.
    pub requests: bool,
    /// Requests waiting for an answer.
    pub pending: &'a Pending<R>,
    /// APIs and versions the connection used, for responses with nothing to pair with.
    pub used: &'a [(i16, i16)],
    pub max_frame: usize,
    /// For a capture that began inside the connection: which offsets of the searched data are
    /// where a packet's bytes begin. A response that begins where a packet begins and ends
    /// where one ends may answer a request sent before the capture began, so it is a frame
    /// start even though nothing waits for it ([`early_response_verdict`]).
    pub packet_starts: Option<&'a dyn Fn(usize) -> bool>,
}

/// Where the search for a frame boundary stands, so that each new segment only costs the
/// offsets it adds (plus the candidates still waiting for their frame to complete).
#[derive(Debug, Default)]
pub struct Scan {
    /// First offset (relative to the unconsumed data) not yet examined.
    next: usize,
    /// Candidates whose frames were not complete yet, oldest first.
    waiting: Vec<usize>,
}

impl Scan {
    /// A search not begun.
    pub const NEW: Scan = Scan {
        next: 0,
        waiting: Vec::new(),
    };

    /// Whether the search has not begun (or was started afresh): nothing of it to keep.
    pub fn is_fresh(&self) -> bool {
        self.next == 0 && self.waiting.is_empty()
    }

    /// The first offset the search still needs: bytes before it were judged and can go.
    pub fn low_water(&self) -> usize {
        self.waiting.iter().copied().fold(self.next, usize::min)
    }

    /// The data lost its first `n` bytes (at most `low_water`): offsets move down by `n`.
    pub fn shift(&mut self, n: usize) {
        self.next = self.next.saturating_sub(n);
        for w in &mut self.waiting {
            *w = w.saturating_sub(n);
        }
    }

    /// The first candidate whose frame had not completed, if any.
    pub fn first_waiting(&self) -> Option<usize> {
        self.waiting.iter().copied().min()
    }
}

enum Verdict {
    /// A frame start: `strong` when the frame decoded cleanly, weak when only its size lines
    /// up with what follows.
    Accept {
        strong: bool,
    },
    Reject,
    Wait,
}

/// Judges a candidate frame start by decoding its frame once it is complete. Candidates are
/// decoded with the default options whatever the view asks for: summary views skip records,
/// and a boundary must not move with the view.
fn check_candidate<R: Asked>(rest: &[u8], at: usize, side: &Search<'_, R>) -> Verdict {
    let Some(h) = rest.get(0..RESPONSE_PEEK) else {
        return Verdict::Wait;
    };
    let Some(Prefix::Frame(len)) = prefix(h, side.max_frame) else {
        return Verdict::Reject;
    };
    let complete = rest.get(..len);
    if side.requests {
        request_verdict(rest, complete, side.max_frame)
    } else {
        response_verdict(rest, at, crate::be::i32_at(h, 4), len, side)
    }
}

fn request_verdict(rest: &[u8], complete: Option<&[u8]>, max_frame: usize) -> Verdict {
    if rest.len() < REQUEST_PEEK {
        return Verdict::Wait;
    }
    if !plausible_request_at(rest, max_frame) {
        return Verdict::Reject;
    }
    let Some(frame) = complete else {
        return Verdict::Wait;
    };
    let known = crate::kafka::walk::header::peek_request(frame)
        .is_some_and(|p| registry().knows(p.api_key, p.api_version));
    let (clean, assumed_version) = request_trial(frame);
    if known {
        if clean {
            Verdict::Accept { strong: true }
        } else {
            Verdict::Reject
        }
    } else if assumed_version.is_some() {
        // A newer version than the tables whose body fits the newest layout exactly.
        Verdict::Accept { strong: true }
    } else if chains_to_end(rest, max_frame, CHAIN_HOPS) {
        Verdict::Accept { strong: false }
    } else {
        Verdict::Reject
    }
}

fn response_verdict<R: Asked>(
    rest: &[u8],
    at: usize,
    corr: i32,
    len: usize,
    side: &Search<'_, R>,
) -> Verdict {
    let paired = side.pending.get(corr);
    let early = paired.is_none() && side.packet_starts.is_some_and(|starts| starts(at));
    if paired.is_none() && !side.pending.is_empty() && !early {
        return Verdict::Reject;
    }
    let Some(frame) = rest.get(..len) else {
        return Verdict::Wait;
    };
    if early {
        return early_response_verdict(rest, at, frame, side);
    }
    let Some((k, v)) = paired.map(|r| r.api()) else {
        return lone_response_verdict(rest, frame, side);
    };
    if response_is_clean(frame, k, v) {
        Verdict::Accept { strong: true }
    } else if chains_to_end(rest, side.max_frame, CHAIN_HOPS) {
        Verdict::Accept { strong: false }
    } else {
        Verdict::Reject
    }
}

/// A response candidate with nothing to pair with: the frame must sit between boundaries (end
/// of data, or a plausible next size) and decode cleanly as a response of an API this
/// connection used. With every Kafka API known, some small response layout fits almost any
/// bytes, so a guess over all of them proves nothing.
fn lone_response_verdict<R>(rest: &[u8], frame: &[u8], side: &Search<'_, R>) -> Verdict {
    let len = frame.len();
    let next_ok = match rest.get(len..len + SIZE_PREFIX) {
        None => rest.len() == len,
        Some(b) => matches!(prefix(b, side.max_frame), Some(Prefix::Frame(_))),
    };
    if next_ok
        && side
            .used
            .iter()
            .any(|&(k, v)| response_is_clean(frame, k, v))
    {
        Verdict::Accept { strong: true }
    } else {
        Verdict::Reject
    }
}

/// A response at the start of a packet, in a capture that began inside its connection, whose
/// correlation id nothing waits for: the answer to a request sent before the capture (a
/// long-poll Fetch is answered hundreds of milliseconds after it was asked). It is a frame
/// start when it also ends where a packet ends (or where a plausible size prefix follows) and
/// decodes cleanly as a response: of an API this connection used, else of any known API
/// ([`guess_response`]). Aligned with the packets at both ends, a guess over every API is
/// evidence enough; at an arbitrary offset it would not be.
fn early_response_verdict<R>(
    rest: &[u8],
    at: usize,
    frame: &[u8],
    side: &Search<'_, R>,
) -> Verdict {
    let len = frame.len();
    let ends_packet = rest.len() == len || side.packet_starts.is_some_and(|s| s(at + len));
    let next_ok = ends_packet
        || rest
            .get(len..len + SIZE_PREFIX)
            .is_some_and(|b| matches!(prefix(b, side.max_frame), Some(Prefix::Frame(_))));
    if next_ok && guess_response_api(frame, side.used).is_some() {
        Verdict::Accept { strong: true }
    } else {
        Verdict::Reject
    }
}

/// Decodes a response whose request was not captured: the APIs and versions this connection
/// used first (most recent first), then every known API and version; the first clean decode
/// wins (tried cheaply, then decoded in full).
pub fn guess_response(frame: &[u8], used: &[(i16, i16)]) -> Option<Message> {
    guess_response_api(frame, used).map(|(k, v)| decode_response(frame, k, v))
}

/// The API and version [`guess_response`] decodes a response as.
fn guess_response_api(frame: &[u8], used: &[(i16, i16)]) -> Option<(i16, i16)> {
    if let Some(&kv) = used
        .iter()
        .rev()
        .find(|&&(k, v)| response_is_clean(frame, k, v))
    {
        return Some(kv);
    }
    let reg = registry();
    for k in reg.api_keys() {
        for v in reg.versions(k, Direction::Response).into_iter().rev() {
            if !used.contains(&(k, v)) && response_is_clean(frame, k, v) {
                return Some((k, v));
            }
        }
    }
    None
}

/// Offset of the first frame start in `data` that can be verified: the frame is complete and
/// decodes cleanly (or is followed by another frame start). An unverified candidate is taken
/// only once the data outgrows the resync window.
pub fn find_boundary<R: Asked>(
    data: &[u8],
    side: &Search<'_, R>,
    scan: &mut Scan,
) -> Option<usize> {
    let best = recheck_waiting(data, side, scan).or_else(|| scan_on(data, side, scan));
    if let Some((b, strong)) = best {
        // A frame that decoded cleanly is trusted. One that only lines up by size yields to a
        // strong header before it (a request of an API and version we know, or a response to
        // a pending request) whose frame is still arriving: wait for that one.
        let earlier_strong = !strong
            && scan.waiting.iter().any(|&i| {
                i < b && strong_header(data.get(i..).unwrap_or(&[]), side.requests, side.pending)
            });
        if !earlier_strong {
            return Some(b);
        }
        if data.len() <= RESYNC_WINDOW {
            return None;
        }
    }
    if data.len() > RESYNC_WINDOW {
        return unverified_pick(data, side, scan);
    }
    None
}

/// The candidate taken without verification once the search outgrew [`RESYNC_WINDOW`]: the
/// first whose header is likely a request's ([`likely_request_at`]), else the first.
fn unverified_pick<R>(data: &[u8], side: &Search<'_, R>, scan: &Scan) -> Option<usize> {
    let likely = |i: &usize| {
        !side.requests || likely_request_at(data.get(*i..).unwrap_or(&[]), side.max_frame)
    };
    scan.waiting
        .iter()
        .copied()
        .find(likely)
        .or_else(|| scan.waiting.first().copied())
}

/// The candidates whose frames were incomplete, judged again: the earliest accepted one, and
/// those still incomplete kept waiting.
fn recheck_waiting<R: Asked>(
    data: &[u8],
    side: &Search<'_, R>,
    scan: &mut Scan,
) -> Option<(usize, bool)> {
    let mut best: Option<(usize, bool)> = None;
    let mut still = Vec::new();
    for &i in &scan.waiting {
        match check_candidate(data.get(i..).unwrap_or(&[]), i, side) {
            Verdict::Accept { strong } => {
                if best.is_none_or(|(b, _)| i < b) {
                    best = Some((i, strong));
                }
            }
            Verdict::Wait => still.push(i),
            Verdict::Reject => {}
        }
    }
    scan.waiting = still;
    best
}

/// Examines the offsets not seen yet, up to the first accepted candidate.
fn scan_on<R: Asked>(data: &[u8], side: &Search<'_, R>, scan: &mut Scan) -> Option<(usize, bool)> {
    let need = if side.requests {
        REQUEST_PEEK
    } else {
        RESPONSE_PEEK
    };
    let mut best = None;
    while best.is_none() && scan.next + need <= data.len() {
        let i = scan.next;
        match check_candidate(data.get(i..).unwrap_or(&[]), i, side) {
            Verdict::Accept { strong } => best = Some((i, strong)),
            Verdict::Wait => {
                if scan.waiting.len() < MAX_WAITING {
                    scan.waiting.push(i);
                }
            }
            Verdict::Reject => {}
        }
        scan.next += 1;
    }
    best
}

/// A header that very likely starts a frame: a request of an API and version with a table, or
/// a response whose correlation id is pending.
fn strong_header<R: Asked>(rest: &[u8], requests: bool, pending: &Pending<R>) -> bool {
    if requests {
        crate::kafka::walk::header::peek_request(rest)
            .is_some_and(|p| registry().plausible(p.api_key, p.api_version))
    } else {
        crate::kafka::walk::header::peek_response_correlation(rest)
            .is_some_and(|c| pending.contains(c))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    /// A Metadata v12 request frame (header v2) with this client_id's bytes, and an empty body
    /// after it (enough for the peek).
    fn metadata_request(client_id: &[u8]) -> Vec<u8> {
        let mut f = Vec::new();
        let size = 10 + client_id.len() + 1 + 3;
        f.extend_from_slice(&(size as i32).to_be_bytes());
        f.extend_from_slice(&[0, 3, 0, 12, 0, 0, 0, 7]);
        f.extend_from_slice(&(client_id.len() as i16).to_be_bytes());
        f.extend_from_slice(client_id);
        f.extend_from_slice(&[0, 1, 0, 0]);
        f
    }

    #[test]
    fn any_utf8_client_id_can_start_a_request() {
        for id in [
            "consumer-1",
            "café",
            "クライアント",
            "",
            "tab\there",
            "\u{1b}[31m",
        ] {
            let f = metadata_request(id.as_bytes());
            assert!(plausible_request_at(&f, 1 << 20), "{id:?}");
            // As much of it as has come: a character cut at the end may be completed.
            for cut in REQUEST_PEEK..f.len() {
                assert!(
                    plausible_request_at(&f[..cut], 1 << 20),
                    "{id:?} cut at {cut}"
                );
            }
        }
    }

    #[test]
    fn unverified_requests_need_a_text_client_id() {
        for id in ["consumer-1", "café", "クライアント", ""] {
            assert!(
                likely_request_at(&metadata_request(id.as_bytes()), 1 << 20),
                "{id:?}"
            );
        }
        for id in ["ile\0\0\0", "\u{1b}[31m", "a\u{85}"] {
            let f = metadata_request(id.as_bytes());
            assert!(!likely_request_at(&f, 1 << 20), "{id:?}");
            assert!(plausible_request_at(&f, 1 << 20), "{id:?}");
        }
        // A cut character after text is fine; after a control character it is not.
        let f = metadata_request("aé".as_bytes());
        assert!(likely_request_at(&f[..REQUEST_PEEK + 2], 1 << 20));
        let f = metadata_request("\0é".as_bytes());
        assert!(!likely_request_at(&f[..REQUEST_PEEK + 2], 1 << 20));
    }

    #[test]
    fn bytes_that_are_not_utf8_cannot() {
        for id in [&b"caf\xe9"[..], b"\xff\xfe", b"a\xc3(b", b"\xe3\x82\x00"] {
            let f = metadata_request(id);
            assert!(!plausible_request_at(&f, 1 << 20), "{id:?}");
        }
        // A client_id longer than its frame, or a negative length other than null.
        let mut f = metadata_request(b"abc");
        f[12..14].copy_from_slice(&100i16.to_be_bytes());
        assert!(!plausible_request_at(&f, 1 << 20));
        f[12..14].copy_from_slice(&(-2i16).to_be_bytes());
        assert!(!plausible_request_at(&f, 1 << 20));
        f[12..14].copy_from_slice(&(-1i16).to_be_bytes());
        assert!(plausible_request_at(&f, 1 << 20));
    }
}
