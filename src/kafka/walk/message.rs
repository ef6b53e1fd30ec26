//! One Kafka frame: size prefix, request or response header, body. Requests and responses are
//! read by one function: the header (walked from its spec, see [`super::header`]) then the
//! body of the API and version the header or the request names.

use super::decode::{DecodeError, DecodeOptions, Decoder, Diagnosis, ErrorKind};
use super::generated::Validate;
use super::header::{self, HeaderValues};
use super::node::{Node, NodeKind, Region, Shape, Value};
use crate::kafka::meaning::problem::{Detail, HeaderOnly, Path, ProblemKind, Step, Tried};
use crate::kafka::spec::names;
use crate::kafka::spec::schema::{registry, Direction, FieldSpec, FieldType, MessageSpec};
use std::borrow::Cow;

pub use super::header::{
    peek_request, peek_response_correlation, request_header_version, response_header_version,
    RequestPeek,
};

/// A decoded frame.
#[derive(Debug, Clone)]
pub struct Message {
    /// The annotated tree: what the tree views print and filters on fields read. `None` for a
    /// message decoded for its summary alone ([`DecodeOptions::facts_only`] with the summary's
    /// two levels): its facts were gathered as it was walked, or its tree let go once they
    /// were read from it. With `facts_only` past two levels (a filter on topics), a tree of the
    /// facts' nodes alone.
    pub tree: Option<Box<Node>>,
    /// The body was read with a table (the tree, when kept, has its body node).
    pub has_body: bool,
    pub direction: Direction,
    pub api_key: Option<i16>,
    pub api_version: Option<i16>,
    pub correlation_id: Option<i32>,
    /// The request's client_id; `Some(None)` is a null client_id.
    pub client_id: Option<Option<String>>,
    /// For a request whose header (v3, KIP-1313) leaves the client_id null because its
    /// connection's first request gave it: that client_id, carried forward by the connection
    /// (`client_id` keeps what the frame holds). Set by the capture's tracker, not the decoder.
    pub carried_client_id: Option<String>,
    /// Problems found, fatal or not, each with its offset.
    pub diagnoses: Vec<Diagnosis>,
    /// Where and why decoding stopped, if it did.
    pub error: Option<DecodeError>,
    /// Bytes of the frame including its size prefix.
    pub size: usize,
    /// Every non-zero error code in the body, with its path (`Topics[0].ErrorCode`), found while
    /// decoding (also below the levels a summary keeps).
    pub errors: Vec<crate::kafka::meaning::problem::ErrorEntry>,
    /// Records in the message's record batches, and the batches' bytes.
    pub records: (i64, usize),
    /// The version is newer than kdissect's tables and the body was read with the layout of
    /// this, the newest known version: every byte fitted, but the layout is an assumption.
    pub assumed_version: Option<i16>,
    /// Spans of the frame holding secrets (a PLAIN password, a bearer token, a token's HMAC),
    /// which renderers mask unless asked not to.
    pub secrets: Vec<(usize, usize)>,
    /// The SASL message in a SaslAuthenticate body.
    pub sasl: Option<super::sasl::SaslFact>,
    /// What the message is about (topics, group, cursor...), gathered once decoded.
    /// (Boxed: a message is moved from the decoder to the sinks, and the facts are most of
    /// its size.)
    pub facts: Box<crate::kafka::meaning::facts::Facts>,
    /// The request or response carried inside (an Envelope's), when there is one.
    /// (Boxed: most messages carry none, and messages are moved often.)
    pub embedded: Option<Box<super::embed::EmbeddedMessage>>,
    /// Records whose values have a layout (the KRaft metadata log's), by type: each type
    /// with how many records of it there are, most first; and what they changed.
    pub record_types: crate::kafka::meaning::log::LogRecords,
    /// The facts of the record batches its records fields keep, which their nodes index.
    pub batches: Vec<crate::kafka::meaning::facts::BatchFact>,
    /// Set when the body's facts were gathered as it was walked, with no node kept below the
    /// body (the summary's and the statistics' decoding): the (TopicId, Name) pairs its
    /// structs hold, for the topic names to learn.
    pub topic_pairs: Option<Vec<([u8; 16], crate::kafka::meaning::facts::Name)>>,
    /// The body's JSON, written as it was walked (`DecodeOptions::json_walk`): the tree's
    /// body node then has no children.
    pub json: Option<Box<super::json::JsonBody>>,
}

impl Message {
    /// Who sent the request: its client_id, or the one its connection carried forward to it
    /// (`carried_client_id`); `None` for a null client_id with nothing carried, and for a
    /// response. What an analysis keys clients by.
    pub fn client_id_or_carried(&self) -> Option<&str> {
        match &self.client_id {
            Some(Some(c)) => Some(c),
            _ => self.carried_client_id.as_deref(),
        }
    }

    /// Decoded to the end with nothing to report.
    pub fn is_clean(&self) -> bool {
        self.error.is_none() && self.diagnoses.is_empty()
    }

    /// Damaged bytes (as opposed to an API or version kdissect has no table for).
    pub fn is_malformed(&self) -> bool {
        !self.diagnoses.is_empty()
            || self
                .error
                .as_ref()
                .is_some_and(|e| e.kind == ErrorKind::Malformed)
    }

    /// The body was not decoded because kdissect has no table for its API or version.
    pub fn is_unknown_api(&self) -> bool {
        self.error
            .as_ref()
            .is_some_and(|e| e.kind != ErrorKind::Malformed)
    }

    /// `Metadata` or `ApiKey1001`.
    pub fn api_name(&self) -> Cow<'static, str> {
        match self.api_key {
            Some(k) => api_display_name(k),
            None => Cow::Borrowed("Unknown"),
        }
    }

    /// Gathers the facts again (after topic names were learnt and noted on ids).
    pub fn refresh_facts(&mut self) {
        *self.facts = super::tree_facts::collect(self);
    }

    /// The message body node, if the header decoded and the tree was kept.
    pub fn body(&self) -> Option<&Node> {
        self.root().children.iter().find(|n| n.shape == Shape::Body)
    }

    /// The root of the tree; for a message decoded for its summary alone, an empty node.
    pub fn root(&self) -> &Node {
        static EMPTY: std::sync::LazyLock<Node> =
            std::sync::LazyLock::new(|| Node::new("", "", 0, Region::Frame, NodeKind::Group));
        self.tree.as_deref().unwrap_or(&EMPTY)
    }

    /// Lets the tree go unless `opts` say it is wanted: a message decoded for its summary
    /// alone keeps it only while its facts may still be gathered from it (the topic names
    /// learnt from it and noted on it). Called once the topic names have seen the message.
    pub fn keep_tree_for(&mut self, opts: DecodeOptions) {
        // Past the summary's two levels the facts' nodes are kept for a filter on topics.
        if opts.facts_only && opts.keep_depth <= 2 {
            self.tree = None;
        }
    }
}

pub fn api_display_name(key: i16) -> Cow<'static, str> {
    match names::api_name(key) {
        Some(n) => Cow::Borrowed(n),
        None => Cow::Owned(format!("ApiKey{key}")),
    }
}

fn leaf(
    name: &'static str,
    ty: &'static str,
    offset: usize,
    len: usize,
    region: Region,
    value: Value,
    desc: &'static str,
) -> Node {
    let mut n = Node::new(name, ty, offset, region, NodeKind::Field);
    n.len = len;
    n.value = value;
    n.desc = desc.into();
    n
}

/// The frame group: its size prefix.
fn frame_group(size: i32) -> Node {
    let mut g = Node::new("Frame", "", 0, Region::Frame, NodeKind::Group);
    g.desc = "length-delimited framing".into();
    g.len = 4;
    g.children.push(leaf(
        "size",
        "int32",
        0,
        4,
        Region::Frame,
        Value::Int(size.into()),
        "number of bytes that follow, patched after encoding",
    ));
    g
}

/// The size prefix and the end of the frame's data; notes a size prefix that overruns the
/// data.
fn frame_size(frame: &[u8], diagnoses: &mut Vec<Diagnosis>) -> Result<(i32, usize), DecodeError> {
    let Some(b) = frame.get(0..4) else {
        return Err(DecodeError {
            kind: ErrorKind::Malformed,
            offset: 0,
            path: Path(vec![Step::SizePrefix]),
            detail: Detail::SizePrefixShort { have: frame.len() },
        });
    };
    let size = crate::be::i32_at(b, 0);
    if size < 0 {
        return Err(DecodeError {
            kind: ErrorKind::Malformed,
            offset: 0,
            path: Path(vec![Step::SizePrefix]),
            detail: Detail::SizePrefixNegative { size },
        });
    }
    let want = 4 + size as usize;
    if want > frame.len() {
        diagnoses.push(Diagnosis {
            kind: ProblemKind::Truncated,
            offset: 0,
            path: Path::default(),
            detail: Detail::FrameTruncated {
                size,
                present: frame.len() - 4,
            },
        });
    }
    Ok((size, want.min(frame.len())))
}

/// When decoding stopped inside a message that carries secrets, the bytes left undecoded may
/// hold one (a password after a damaged length): mask them all.
fn mask_undecoded_secrets(msg: &mut Message, root: &Node) {
    // A message decoded to its end leaves nothing undecoded: no spec to look up.
    let (Some(k), Some(v), true) = (msg.api_key, msg.api_version, msg.error.is_some()) else {
        return;
    };
    let carries = registry()
        .get_for(k, msg.direction, v)
        .is_some_and(|s| s.has_secrets);
    if !carries || msg.error.is_none() {
        return;
    }
    for n in &root.children {
        if let (NodeKind::Raw, Value::Bytes(Some(span))) = (n.kind, &n.value) {
            msg.secrets.push(*span);
        }
    }
}

/// Appends the error node and the undecoded rest of the frame to the root. `decoded` is
/// where the frame's decoded bytes end at least (past the size prefix, once it was read,
/// whether or not the root holds its node).
fn finish(
    root: &mut Node,
    error: &Option<DecodeError>,
    (decoded, pos, end): (usize, usize, usize),
    diagnoses: &mut Vec<Diagnosis>,
    opts: DecodeOptions,
) {
    if let Some(e) = error {
        let mut n = Node::new(
            "!! malformed",
            "",
            e.offset,
            Region::Unparsed,
            NodeKind::Error,
        );
        // Words only for a tree that may be printed.
        if !opts.facts_only {
            n.desc = e.to_string().into();
        }
        // The raw rest starts where the decoded leaves end: a failed read may have consumed
        // bytes (a tag before a bad size) or point back at an earlier field (an unknown
        // version), and either way every byte must still be in exactly one leaf.
        let covered = root
            .leaves()
            .iter()
            .filter(|l| l.kind != NodeKind::Error)
            .map(|l| l.end())
            .fold(decoded, usize::max);
        root.children.push(n);
        let at = covered.min(end);
        if at < end {
            let mut raw = Node::new("unparsed", "bytes", at, Region::Unparsed, NodeKind::Raw);
            raw.len = end - at;
            raw.value = Value::Bytes(Some((at, end - at)));
            raw.desc = "bytes after the point where decoding stopped".into();
            root.children.push(raw);
        }
    } else if pos < end {
        let mut raw = Node::new("trailing", "bytes", pos, Region::Unparsed, NodeKind::Raw);
        raw.len = end - pos;
        raw.value = Value::Bytes(Some((pos, end - pos)));
        raw.desc = "bytes after the end of the message body".into();
        diagnoses.push(Diagnosis {
            kind: ProblemKind::TrailingBytes,
            offset: pos,
            path: Path::default(),
            detail: Detail::TrailingBody { n: end - pos },
        });
        root.children.push(raw);
    }
}

fn has_nullable_struct(fields: &[FieldSpec], v: i16) -> Option<String> {
    for f in fields {
        if !f.versions.contains(v) {
            continue;
        }
        if matches!(f.ty, FieldType::Struct(_)) && f.nullable_versions.contains(v) {
            return Some(f.name.to_string());
        }
        if let Some(n) = has_nullable_struct(f.fields, v) {
            return Some(n);
        }
    }
    None
}

/// Decodes the body; on failure, checks whether the bytes are the presence-byte-less nullable
/// struct encoding some tools produce, and says so.
#[allow(clippy::too_many_arguments)]
fn body(
    d: &mut Decoder<'_>,
    spec: &'static MessageSpec,
    version: i16,
    root: &mut Node,
    frame: &[u8],
    end: usize,
    opts: DecodeOptions,
) -> Option<DecodeError> {
    let start = d.pos;
    let (node, err) = d.message_body(spec, version, opts);
    // A body whose facts were gathered as it was walked has no node under it, and a message
    // decoded for its summary alone needs none for it.
    if !(opts.facts_only && d.collector.is_some()) {
        root.children.push(node);
    }
    if err.is_some() || d.pos != end {
        if let Some(sname) = has_nullable_struct(spec.fields, version) {
            let mut alt = Decoder::new(frame, start, end, d.region);
            let (_, aerr) = alt.message_body(
                spec,
                version,
                DecodeOptions {
                    struct_presence_byte: false,
                    ..opts
                },
            );
            if aerr.is_none() && alt.pos == end && alt.diagnoses.is_empty() {
                let mut at = start;
                root.walk(&mut |n, _| {
                    if n.name == sname
                        && n.children
                            .first()
                            .is_some_and(|c| c.shape == Shape::PresenceByte)
                    {
                        at = n.offset;
                    }
                });
                d.diagnoses.push(Diagnosis {
                    kind: ProblemKind::MissingPresence,
                    offset: at,
                    path: Path::default(),
                    detail: Detail::MissingPresence {
                        sname: sname.to_string(),
                    },
                });
            }
        }
    }
    err
}

/// Decodes the body at its version, or, for a version newer than the tables, with the newest
/// known layout: kept (and flagged in `assumed_version`) only if every byte then fits, else
/// rolled back so the body shows raw with the reason.
fn versioned_body(
    d: &mut Decoder<'_>,
    (key, direction, version): (i16, Direction, i16),
    (msg, root): (&mut Message, &mut Node),
    frame: &[u8],
    end: usize,
    opts: DecodeOptions,
) -> Result<(), DecodeError> {
    let unknown = |spec: &'static MessageSpec, offset: usize, tried: Tried| DecodeError {
        kind: ErrorKind::UnknownVersion,
        offset,
        path: Path::default(),
        detail: Detail::UnknownVersion {
            name: spec.name,
            min: spec.valid_versions.min,
            max: spec.max_version(),
            version,
            tried,
        },
    };
    if let Some(spec) = registry()
        .get_for(key, direction, version)
        .filter(|s| s.valid_versions.contains(version))
    {
        msg.has_body = true;
        return body(d, spec, version, root, frame, end, opts).map_or(Ok(()), Err);
    }
    let current = registry().get(key, direction);
    let Some((spec, newest)) = registry().newest_layout(key, direction, version) else {
        return Err(match current {
            Some(spec) => unknown(spec, d.pos, Tried::Nothing),
            None => unknown_api(key, d.pos),
        });
    };
    let (start, children, diagnosed) = (d.pos, root.children.len(), d.diagnoses.len());
    let (errors, records) = (d.errors.len(), d.records);
    let types = d.record_types.mark();
    let batch_facts = d.batch_facts.len();
    let err = body(d, spec, newest, root, frame, end, opts);
    let why = match (&err, d.pos == end, d.diagnoses.len() == diagnosed) {
        (None, true, true) => {
            msg.has_body = true;
            msg.assumed_version = Some(newest);
            return Ok(());
        }
        (Some(e), _, _) => Tried::Stopped {
            newest,
            error: Box::new(e.clone()),
        },
        (None, false, _) => Tried::LeftOver {
            newest,
            n: end.saturating_sub(d.pos),
        },
        (None, true, false) => Tried::DoesNotFit { newest },
    };
    // Roll back: the guess did not fit, so nothing of it is shown as if it were known.
    root.children.truncate(children);
    d.diagnoses.truncate(diagnosed);
    d.errors.truncate(errors);
    d.records = records;
    d.record_types.restore(types);
    d.batch_facts.truncate(batch_facts);
    d.embedded = None;
    d.json = None;
    // Facts gathered while walking the guess are the guess's too.
    if let Some(c) = d.collector.take() {
        super::collect::Collector::give_back(c);
    }
    d.pos = start;
    Err(unknown(spec, start, why))
}

fn unknown_api(key: i16, offset: usize) -> DecodeError {
    DecodeError {
        kind: ErrorKind::UnknownApi,
        offset,
        path: Path::default(),
        detail: Detail::UnknownApi { key },
    }
}

/// Decodes a request frame (`frame` starts at the size prefix).
pub fn decode_request(frame: &[u8]) -> Message {
    decode_request_with(frame, DecodeOptions::default())
}

/// How frames are decoded only to learn whether they decode cleanly (frame boundaries,
/// versions and APIs tried): two levels kept as nodes, the rest walked. Errors and problems do
/// not depend on the levels kept (tests/shallow_walk.rs), so the verdict is a full decode's at
/// a fraction of its cost.
pub fn trial_options() -> DecodeOptions {
    DecodeOptions {
        keep_depth: 2,
        facts_only: true,
        ..DecodeOptions::default()
    }
}

/// Whether a request frame decodes cleanly, with default limits; and the version it was
/// taken for, when newer than the tables.
pub fn request_trial(frame: &[u8]) -> (bool, Option<i16>) {
    if walked_verdict(frame, Direction::Request, None) {
        return (true, None);
    }
    let m = decode_request_with(frame, trial_options());
    (m.is_clean(), m.assumed_version)
}

/// Whether a response frame decodes cleanly as (`api_key`, `api_version`), with default
/// limits.
pub fn response_is_clean(frame: &[u8], api_key: i16, api_version: i16) -> bool {
    walked_verdict(frame, Direction::Response, Some((api_key, api_version)))
        || decode_response_with(frame, api_key, api_version, trial_options()).is_clean()
}

/// Whether the generated walk alone shows a frame clean: a whole frame whose header reads in
/// place and whose body, of a version with a table, the walk covers to its last byte with no
/// problem noted (record batches note theirs as it reads them). False says nothing: the walk
/// gives up on whatever the decoder would diagnose, and on much that is clean, and the
/// decoder then decides. tests/shallow_walk.rs holds the verdicts to full decodes.
fn walked_verdict(frame: &[u8], direction: Direction, api: Option<(i16, i16)>) -> bool {
    let whole = frame.get(0..4).is_some_and(|b| {
        usize::try_from(crate::be::i32_at(b, 0))
            .is_ok_and(|n| n.checked_add(4) == Some(frame.len()))
    });
    if !whole {
        return false;
    }
    let mut d = Decoder::new(frame, 4, frame.len(), Region::RpcHeader);
    let named = api.or_else(|| header::peek_request_api(d.slice(4, d.remaining())));
    let hv = header::header_version(direction, named);
    let Some(values) = header::values_in_place(&mut d, direction, hv) else {
        return false;
    };
    let Some((key, version)) = api.or(values.api_key.zip(values.api_version)) else {
        return false;
    };
    let spec = registry()
        .get_for(key, direction, version)
        .filter(|s| s.valid_versions.contains(version));
    let Some((spec, file)) = spec.and_then(|s| Some((s, s.walk?))) else {
        return false;
    };
    d.region = match direction {
        Direction::Request => Region::RequestBody,
        Direction::Response => Region::ResponseBody,
    };
    d.prepare_body(spec, version, trial_options());
    let walked = super::generated::walk_body(file, version, &mut d, &mut Validate);
    matches!(walked, Some(Ok(()))) && d.pos == d.end && d.diagnoses.is_empty()
}

/// [`decode_request`] with limits of the caller's choosing.
pub fn decode_request_with(frame: &[u8], opts: DecodeOptions) -> Message {
    decode_frame(frame, Direction::Request, None, None, opts)
}

/// Decodes a response frame with the API key and version of its request.
pub fn decode_response(frame: &[u8], api_key: i16, api_version: i16) -> Message {
    decode_response_with(frame, api_key, api_version, DecodeOptions::default())
}

/// [`decode_response`] with limits of the caller's choosing.
pub fn decode_response_with(
    frame: &[u8],
    api_key: i16,
    api_version: i16,
    opts: DecodeOptions,
) -> Message {
    decode_response_embedding(frame, (api_key, api_version), None, opts)
}

/// Decodes a response with the API and version of its request, and, when that request
/// carried a request of its own (an Envelope's), that one's API and version: the response
/// carries its answer.
pub fn decode_response_embedding(
    frame: &[u8],
    api: (i16, i16),
    embedded: Option<(i16, i16)>,
    opts: DecodeOptions,
) -> Message {
    decode_frame(frame, Direction::Response, Some(api), embedded, opts)
}

impl Message {
    /// A message of `direction` with nothing decoded yet; `api` when it is known beforehand
    /// (a response, from its request).
    fn empty(direction: Direction, api: Option<(i16, i16)>, size: usize) -> Message {
        Message {
            tree: None,
            has_body: false,
            direction,
            api_key: api.map(|a| a.0),
            api_version: api.map(|a| a.1),
            correlation_id: None,
            client_id: None,
            carried_client_id: None,
            diagnoses: Vec::new(),
            error: None,
            size,
            errors: Vec::new(),
            records: (0, 0),
            assumed_version: None,
            secrets: Vec::new(),
            sasl: None,
            facts: Default::default(),
            embedded: None,
            record_types: Default::default(),
            batches: Vec::new(),
            topic_pairs: None,
            json: None,
        }
    }

    /// The root of its tree, named after the API when that is known (and the tree may be
    /// printed).
    fn new_root(&self, opts: DecodeOptions) -> Node {
        let mut root = Node::new(
            match self.direction {
                Direction::Request => "Request",
                Direction::Response => "Response",
            },
            "message",
            0,
            Region::Frame,
            NodeKind::Group,
        );
        if !opts.facts_only {
            self.name_root(&mut root);
        }
        root
    }

    /// Names the root after the API once it is known: the spec's message name
    /// (`MetadataRequest`), or `ApiKey1001Response` for an API without a table.
    fn name_root(&self, root: &mut Node) {
        let Some(key) = self.api_key else {
            return;
        };
        let version = self.api_version.unwrap_or(0);
        root.name = match registry().get_for(key, self.direction, version) {
            Some(spec) => Cow::Borrowed(spec.name),
            None => Cow::Owned(format!(
                "{}{}",
                api_display_name(key),
                match self.direction {
                    Direction::Request => "Request",
                    Direction::Response => "Response",
                }
            )),
        };
        root.ty = super::node::VersionText::Message.of(version);
    }

    /// Takes what the header said: a request's header names its API.
    fn take_header(&mut self, h: HeaderValues) {
        if self.direction == Direction::Request {
            self.api_key = h.api_key;
            self.api_version = h.api_version;
            self.client_id = h.client_id;
        }
        self.correlation_id = h.correlation_id;
    }
}

/// Decodes one frame of `direction`: size prefix, header, body. `api` is the API key and
/// version when they are known beforehand (a response's, from its request); a request's are
/// read from its header.
fn decode_frame(
    frame: &[u8],
    direction: Direction,
    api: Option<(i16, i16)>,
    embedded: Option<(i16, i16)>,
    opts: DecodeOptions,
) -> Message {
    let mut diagnoses = Vec::new();
    let mut msg = Message::empty(direction, api, frame.len());
    let mut root = msg.new_root(opts);
    let (size, end) = match frame_size(frame, &mut diagnoses) {
        Ok(x) => x,
        Err(e) => {
            root.len = frame.len();
            finish(
                &mut root,
                &Some(e.clone()),
                (0, 0, frame.len()),
                &mut diagnoses,
                opts,
            );
            msg.error = Some(e);
            msg.diagnoses = diagnoses;
            msg.tree = Some(Box::new(root));
            return msg;
        }
    };
    // The frame's length, header and body, and room for what may follow them (trailing
    // bytes, an error): one allocation. A message decoded for its summary alone reads no
    // node outside its body: neither is made.
    if !opts.facts_only {
        root.children.reserve(4);
        root.children.push(frame_group(size));
    }
    let mut d = Decoder::new(frame, 4, end, Region::RpcHeader);
    d.embedded_api = embedded;
    let err = header_and_body(&mut d, (&mut msg, &mut root), frame, end, opts).err();
    conclude((&mut msg, &mut root), &mut d, err, (end, opts), diagnoses);
    // A message decoded for its summary alone whose facts were gathered as it was walked
    // needs no tree; one whose facts come from its tree keeps it until the topic names
    // have been learnt from it (`Message::keep_tree_for`).
    if !(opts.facts_only && msg.topic_pairs.is_some()) {
        msg.tree = Some(Box::new(root));
    }
    msg
}

/// The header, then the body of the API and version known by then.
fn header_and_body(
    d: &mut Decoder<'_>,
    (msg, root): (&mut Message, &mut Node),
    frame: &[u8],
    end: usize,
    opts: DecodeOptions,
) -> Result<(), DecodeError> {
    let named = msg
        .api_key
        .zip(msg.api_version)
        .or_else(|| header::peek_request_api(d.slice(d.pos, d.remaining())));
    let hv = header::header_version(msg.direction, named);
    // The summary and the statistics read the header's values only: read in place, no node
    // made and dropped (as `header::decode` does first for them).
    let in_place = (opts.facts_only && opts.walk_facts && opts.keep_depth == 2)
        .then(|| header::values_in_place(d, msg.direction, hv))
        .flatten();
    let (values, read) = match in_place {
        Some(values) => (values, Ok(())),
        None => {
            let (node, values, read) = header::decode(d, msg.direction, hv, opts);
            // Nothing reads the header's node but the views that print it.
            if !opts.facts_only {
                root.children.push(node);
            }
            (values, read)
        }
    };
    msg.take_header(values);
    if !opts.facts_only {
        msg.name_root(root);
    }
    read?;
    let (key, version) = (msg.api_key.unwrap_or(-1), msg.api_version.unwrap_or(-1));
    if registry().get_for(key, msg.direction, version).is_none() {
        return Err(unknown_api(key, d.pos));
    }
    d.region = match msg.direction {
        Direction::Request => Region::RequestBody,
        Direction::Response => Region::ResponseBody,
    };
    versioned_body(
        d,
        (key, msg.direction, version),
        (msg, root),
        frame,
        end,
        opts,
    )
}

/// Moves what the decoder gathered into the message, closes the tree (error node, undecoded
/// rest) and gathers the facts.
fn conclude(
    (msg, root): (&mut Message, &mut Node),
    d: &mut Decoder<'_>,
    err: Option<DecodeError>,
    (end, opts): (usize, DecodeOptions),
    mut diagnoses: Vec<Diagnosis>,
) {
    diagnoses.append(&mut d.diagnoses);
    if d.spent.dropped_diagnoses > 0 {
        diagnoses.push(Diagnosis {
            kind: ProblemKind::TooManyProblems,
            offset: d.pos,
            path: Path::default(),
            detail: Detail::TooManyProblems {
                n: d.spent.dropped_diagnoses,
            },
        });
    }
    msg.errors = std::mem::take(&mut d.errors);
    msg.records = d.records;
    msg.secrets = std::mem::take(&mut d.secrets);
    msg.sasl = d.sasl.take();
    msg.embedded = d.embedded.take();
    msg.record_types = std::mem::take(&mut d.record_types);
    msg.batches = std::mem::take(&mut d.batch_facts);
    msg.json = d.json.take();
    // Most first; ties in the order first met.
    msg.record_types.most_first();
    finish(root, &err, (4, d.pos, end), &mut diagnoses, opts);
    root.len = msg.size;
    msg.error = err;
    msg.diagnoses = diagnoses;
    mask_undecoded_secrets(msg, root);
    match d.collector.take() {
        Some(mut c) => {
            // `msg.facts` is as `Message::empty` made it: the collector fills it in.
            c.fill_facts(&mut msg.facts, d.buf, msg.api_version);
            msg.topic_pairs = Some(c.take_pairs(d.buf));
            super::collect::Collector::give_back(c);
        }
        None => {
            *msg.facts = super::tree_facts::collect_root(msg, root);
            // Group members are read by the analyses alone, which decode for facts at every
            // depth; the summary's two-level walk gathers none, and neither does the tree's
            // way here at two levels.
            if opts.facts_only && opts.keep_depth <= 2 {
                msg.facts.members = Vec::new();
            }
        }
    }
}

/// A response with only its header decoded and the body raw, for when the API is unknown:
/// `kind` says why (usually `Unpaired`), `reason` in words.
pub fn decode_response_header_only(frame: &[u8], kind: ErrorKind, reason: HeaderOnly) -> Message {
    let mut m = decode_response(frame, -1, 0);
    m.api_key = None;
    m.api_version = None;
    if let Some(e) = m.error.as_mut() {
        e.kind = kind;
        e.detail = Detail::HeaderOnly(reason);
    }
    if let Some(root) = m.tree.as_deref_mut() {
        root.name = Cow::Borrowed("Response");
        root.ty = Cow::Borrowed("message");
        for c in root.children.iter_mut() {
            if c.kind == NodeKind::Error {
                c.desc = reason.to_string().into();
            }
        }
    }
    m
}

/// Decodes `body` (no size prefix, no header) as `spec` at `version`: for specs that are not
/// embedded (tests, tools). Returns the body node, where decoding stopped, and diagnoses.
pub fn decode_body_with(
    spec: &'static MessageSpec,
    version: i16,
    body: &[u8],
) -> (Node, Option<DecodeError>, Vec<Diagnosis>) {
    let mut d = Decoder::new(body, 0, body.len(), Region::RequestBody);
    let (n, e) = d.message_body(spec, version, DecodeOptions::default());
    (n, e, d.diagnoses)
}
