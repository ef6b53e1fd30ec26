//! Messages carried inside the bytes of another: the request and response an Envelope
//! forwards, the principal beside them, control records' keys and values, and the records of
//! the KRaft metadata log. Which bytes hold what is data (the tables' `content` key, and
//! schema-src/records.json); the layouts ([`Layout`]) are read here by the one generic decoder,
//! over the bytes in place, so that every byte still lies in exactly one leaf.
//!
//! An embedded message sits inside a length-prefixed field: damage inside it never stops the
//! message that carries it. It is diagnosed, and the rest of the field is shown raw.

use super::decode::{leaf, DecodeError, DecodeOptions, Decoder, Diagnosis, ErrorKind};
use super::header;
use super::node::{Node, NodeKind, Note, Region, Shape, Value};
use crate::kafka::meaning::facts::Facts;
use crate::kafka::meaning::problem::{Detail, Path, ProblemKind};
use crate::kafka::spec::schema::{registry, Direction, Layout, MessageSpec};
use std::borrow::Cow;

/// The byte a masked secret shows as (the renderers' own mask, `*`).
const MASK: u8 = b'*';

/// Messages nested inside messages past this depth are shown raw: a hostile frame must not
/// recurse without bound.
const MAX_DEPTH: u8 = 2;

/// The request or response an Envelope carries, as the summary, statistics and pairing see it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EmbeddedMessage {
    /// The field that carries it (`RequestData`).
    pub field: crate::kafka::meaning::problem::Path,
    pub direction: Option<Direction>,
    pub api_key: Option<i16>,
    pub api_version: Option<i16>,
    pub correlation_id: Option<i32>,
    /// The embedded request's client_id; `Some(None)` is a null one.
    pub client_id: Option<Option<String>>,
    /// What the embedded message is about.
    pub facts: Facts,
    /// Its non-zero error codes, with paths inside its own body.
    pub errors: Vec<crate::kafka::meaning::problem::ErrorEntry>,
}

/// What the decoder was doing before it entered an embedded message.
struct Saved {
    end: usize,
    version: i16,
    flexible: bool,
    region: Region,
    message: Option<(i16, Direction)>,
    /// Steps of the field path outside the embedded message.
    path: usize,
}

/// What the bytes of a record's key or value decoded to: the group that replaces their leaf,
/// and what was found there.
pub(crate) struct Part {
    pub node: Node,
    pub diagnoses: Vec<Diagnosis>,
    pub secrets: Vec<(usize, usize)>,
    /// The type of a metadata record, or the data spec read (`LeaderChangeMessage`).
    pub spec: Option<&'static str>,
    /// A control record key's type.
    pub control_type: Option<i64>,
}

/// Decodes `buf[at..end]`, a record's key or value (`name`), as `layout`.
pub(crate) fn record_part(
    buf: &[u8],
    (at, end): (usize, usize),
    name: &'static str,
    layout: &'static Layout,
    opts: DecodeOptions,
) -> Part {
    let mut d = Decoder::new(buf, at, end, Region::Record);
    d.opts = opts;
    d.depth = 1;
    let mut g = Node::new(name, "varbytes", at, Region::Record, NodeKind::Group);
    g.shape = Shape::VarBytes;
    g.len = end - at;
    let (text, spec) = d.embedded(at, end, layout, &mut g.children);
    g.value = Value::Text(text);
    let control_type = g
        .children
        .iter()
        .find(|n| n.name == "Type" && n.ty == "int16")
        .and_then(Node::as_int);
    Part {
        node: g,
        diagnoses: d.diagnoses,
        secrets: d.secrets,
        spec,
        control_type,
    }
}

impl<'a> Decoder<'a> {
    /// A bytes field whose bytes hold another message (`layout`): its length, then the
    /// message's nodes, in one group named after the field.
    pub(super) fn embedded_field(
        &mut self,
        name: Cow<'static, str>,
        nullable: bool,
        layout: &'static Layout,
        out: &mut Vec<Node>,
    ) -> Result<(), DecodeError> {
        let region = self.region;
        let node = self.bytes(name.clone(), nullable)?;
        let Value::Bytes(Some((at, n))) = node.value else {
            if !self.discard {
                out.push(node);
            }
            return Ok(());
        };
        let mut g = self.byte_parts(name, &node, (at, n), region);
        if let Some(len) = g.children.last_mut() {
            len.desc = format!("{n} bytes of an embedded message follow").into();
        }
        let (text, _) = self.embedded(at, at + n, layout, &mut g.children);
        g.value = Value::Text(text);
        self.pos = at + n;
        if !self.discard {
            out.push(g);
        }
        Ok(())
    }

    /// Decodes `buf[at..end]` as `layout` into `out`, and leaves the position at `end`.
    /// Returns the text of the group that holds it (`IncrementalAlterConfigs v1 request`) and
    /// the name of the spec it read. Damage is diagnosed, never returned.
    pub(super) fn embedded(
        &mut self,
        at: usize,
        end: usize,
        layout: &'static Layout,
        out: &mut Vec<Node>,
    ) -> (String, Option<&'static str>) {
        let first = out.len();
        if at == end {
            // Zero bytes hold no message: nothing to decode, and nothing damaged.
            return ("empty".into(), None);
        }
        if self.depth >= MAX_DEPTH {
            out.push(raw(
                at,
                end,
                self.region,
                "a message nested this deep is not decoded",
            ));
            self.pos = end;
            return ("nested too deep".into(), None);
        }
        let saved = self.enter(at, end);
        let res = match layout {
            Layout::Request => self.embedded_message(Direction::Request, out),
            Layout::Response => self.embedded_message(Direction::Response, out),
            Layout::VersionPrefixed(spec) => self.versioned_data(spec, out),
            Layout::Unprefixed(spec, v) => self.data_at(spec, *v, None, out),
            Layout::MetadataRecord => self.metadata_record(out),
            Layout::ConsumerProtocol(spec) => self.consumer_protocol(spec, end, out),
        };
        let shown = match res {
            Ok(shown) => {
                self.trailing(end, out);
                shown
            }
            Err(e) => {
                // A failed read leaves the path at the field that failed: back to the one
                // that embeds, which the diagnosis is about.
                let outer = self.path().clone();
                self.truncate_path(saved.path);
                let inner = if !self.path().is_empty() && outer.passes_through(self.path()) {
                    outer.below(saved.path)
                } else {
                    Path::default()
                };
                let shown = format!("malformed: {}", e.detail);
                self.stopped(e, inner, (at, first), end, out);
                (shown, None)
            }
        };
        self.leave(saved);
        self.pos = end;
        shown
    }

    fn enter(&mut self, at: usize, end: usize) -> Saved {
        let saved = Saved {
            end: self.end,
            version: self.version,
            flexible: self.flexible,
            region: self.region,
            message: self.message,
            path: self.path_depth(),
        };
        self.pos = at;
        self.end = end;
        self.depth += 1;
        saved
    }

    fn leave(&mut self, s: Saved) {
        self.end = s.end;
        self.version = s.version;
        self.flexible = s.flexible;
        self.region = s.region;
        self.message = s.message;
        self.depth -= 1;
    }

    /// The error codes met since the `from`-th, with paths inside the embedded body (the
    /// field that embeds it, `RequestData.`, left out), as in a message of its own.
    fn errors_since(
        &self,
        from: usize,
        depth: usize,
    ) -> Vec<crate::kafka::meaning::problem::ErrorEntry> {
        self.errors
            .get(from..)
            .unwrap_or_default()
            .iter()
            .map(|e| crate::kafka::meaning::problem::ErrorEntry {
                path: e.path.below(depth),
                code: e.code,
            })
            .collect()
    }

    /// Bytes the embedded message leaves unread: shown raw and diagnosed.
    fn trailing(&mut self, end: usize, out: &mut Vec<Node>) {
        if self.pos < end {
            let n = end - self.pos;
            out.push(raw(
                self.pos,
                end,
                Region::Unparsed,
                "bytes after the end of the embedded message",
            ));
            self.diag(
                ProblemKind::TrailingBytes,
                self.pos,
                Detail::EmbeddedTrailing { n },
            );
        }
    }

    /// Where decoding of the embedded message stopped: diagnosed, an error node, and the rest
    /// of its bytes raw (from where the leaves decoded so far end).
    fn stopped(
        &mut self,
        e: DecodeError,
        inner: Path,
        (at, first): (usize, usize),
        end: usize,
        out: &mut Vec<Node>,
    ) {
        let (kind, offset, shown) = (e.kind.problem(), e.offset, e.to_string());
        let detail = Detail::Embedded {
            inner,
            detail: Box::new(e.detail),
        };
        self.diag(kind, offset, detail);
        let covered = out
            .get(first..)
            .unwrap_or_default()
            .iter()
            .flat_map(|n| n.leaves())
            .filter(|l| l.kind != NodeKind::Error)
            .map(Node::end)
            .fold(at, usize::max);
        let mut stop = Node::new(
            "!! malformed",
            "",
            offset,
            Region::Unparsed,
            NodeKind::Error,
        );
        stop.desc = shown.into();
        out.push(stop);
        let at = covered.min(end);
        if at < end {
            out.push(raw(
                at,
                end,
                Region::Unparsed,
                "bytes after the point where decoding stopped",
            ));
        }
    }

    /// A request or response header and body: the header's API and version (a request's), or
    /// those of the request the paired request embedded (a response's).
    fn embedded_message(
        &mut self,
        direction: Direction,
        out: &mut Vec<Node>,
    ) -> Result<(String, Option<&'static str>), DecodeError> {
        let api = match direction {
            Direction::Request => header::peek_request_api(self.slice(self.pos, self.remaining())),
            Direction::Response => self.embedded_api,
        };
        let Some((key, version)) = api else {
            let why = match direction {
                Direction::Request => "too short to hold a request header",
                Direction::Response => {
                    "its request was not captured, so its API and version are unknown"
                }
            };
            out.push(raw(self.pos, self.end, self.region, why));
            self.pos = self.end;
            return Ok((format!("embedded {}: {why}", direction.as_str()), None));
        };
        let hv = header::header_version(direction, Some((key, version)));
        let errors_from = self.errors.len();
        let field = self.path().clone();
        let field_depth = self.path_depth();
        let opts = self.opts;
        let (node, values, read) = header::decode(self, direction, hv, opts);
        out.push(node);
        let mut info = EmbeddedMessage {
            field: field.clone(),
            direction: Some(direction),
            api_key: Some(key),
            api_version: Some(version),
            correlation_id: values.correlation_id,
            client_id: values.client_id,
            ..EmbeddedMessage::default()
        };
        let res = read.and_then(|()| self.embedded_body(key, direction, version, out));
        if let Some(body) = out.last().filter(|b| b.shape == Shape::Body) {
            let api = (Some(key), Some(version));
            info.facts = super::tree_facts::collect_body(body, direction, api, &self.batch_facts);
        }
        info.errors = self.errors_since(errors_from, field_depth);
        if self.depth == 1 {
            self.embedded = Some(Box::new(info));
        }
        res?;
        let api = super::message::api_display_name(key);
        Ok((format!("{api} v{version} {}", direction.as_str()), None))
    }

    /// The body of an embedded message, at its version or, for a newer one, with the newest
    /// known layout.
    fn embedded_body(
        &mut self,
        key: i16,
        direction: Direction,
        version: i16,
        out: &mut Vec<Node>,
    ) -> Result<(), DecodeError> {
        self.region = match direction {
            Direction::Request => Region::RequestBody,
            Direction::Response => Region::ResponseBody,
        };
        let spec = registry()
            .get_for(key, direction, version)
            .filter(|s| s.valid_versions.contains(version))
            .map(|s| (s, version))
            .or_else(|| registry().newest_layout(key, direction, version));
        let Some((spec, layout)) = spec else {
            return Err(DecodeError {
                kind: ErrorKind::UnknownApi,
                offset: self.pos,
                path: Path::default(),
                detail: Detail::NotInTables { key, version },
            });
        };
        let opts = self.opts;
        let (body, err) = self.message_body(spec, layout, opts);
        out.push(body);
        err.map_or(Ok(()), Err)
    }

    /// An int16 version, then the data message `name` at that version. A version newer than
    /// the table is read with its newest layout, as Kafka reads a newer marker.
    fn versioned_data(
        &mut self,
        name: &str,
        out: &mut Vec<Node>,
    ) -> Result<(String, Option<&'static str>), DecodeError> {
        let spec = data_spec(name, self.pos)?;
        let at = self.pos;
        let v = self.read(|c| c.i16("version"))?;
        let mut n = leaf("version", "int16", at, 2, self.region);
        n.value = Value::Int(v.into());
        n.desc = format!("version of the {name} that follows").into();
        out.push(n);
        if v < spec.valid_versions.min {
            return Err(self.err(
                at,
                Detail::NoVersion {
                    name: name.to_string(),
                    version: v,
                },
            ));
        }
        self.data_at(name, v.min(spec.max_version()), Some(v), out)
    }

    /// A group protocol's bytes as version-prefixed `name` when they read whole as it; else
    /// the bytes of another protocol type, shown raw with nothing diagnosed.
    fn consumer_protocol(
        &mut self,
        name: &str,
        end: usize,
        out: &mut Vec<Node>,
    ) -> Result<(String, Option<&'static str>), DecodeError> {
        let (at, first) = (self.pos, out.len());
        let kept = (
            self.diagnoses.len(),
            self.errors.len(),
            self.secrets.len(),
            self.path_depth(),
        );
        // Problems past the message's list are only counted: the count is taken back too.
        let dropped = self.spent.dropped_diagnoses;
        let read = self.versioned_data(name, out);
        if read.is_ok()
            && self.pos == end
            && self.diagnoses.len() == kept.0
            && self.spent.dropped_diagnoses == dropped
        {
            return read;
        }
        out.truncate(first);
        self.spent.dropped_diagnoses = dropped;
        self.diagnoses.truncate(kept.0);
        self.errors.truncate(kept.1);
        self.secrets.truncate(kept.2);
        self.truncate_path(kept.3);
        out.push(raw(
            at,
            end,
            Region::Unparsed,
            "the bytes of a protocol type other than the consumer protocol",
        ));
        self.pos = end;
        Ok(("not the consumer protocol".into(), None))
    }

    /// The data message `name` read at `version` (`claimed`: the version its prefix said).
    fn data_at(
        &mut self,
        name: &str,
        version: i16,
        claimed: Option<i16>,
        out: &mut Vec<Node>,
    ) -> Result<(String, Option<&'static str>), DecodeError> {
        let spec = data_spec(name, self.pos)?;
        self.spec_fields(spec, version, out)?;
        let mut shown = format!("{} v{}", spec.name, claimed.unwrap_or(version));
        if claimed.is_some_and(|c| c != version) {
            shown.push_str(&format!(" (read with the v{version} layout)"));
        }
        Ok((shown, Some(spec.name)))
    }

    /// The fields of `spec` at `version`, straight into `out`.
    fn spec_fields(
        &mut self,
        spec: &'static MessageSpec,
        version: i16,
        out: &mut Vec<Node>,
    ) -> Result<(), DecodeError> {
        self.version = version;
        self.flexible = spec.is_flexible(version);
        self.fields(spec.fields, out)
    }

    /// A metadata log record: frame version, record type and version (unsigned varints), then
    /// the record of that type.
    fn metadata_record(
        &mut self,
        out: &mut Vec<Node>,
    ) -> Result<(String, Option<&'static str>), DecodeError> {
        let frame = self.uvarint_leaf("frame_version", "frame version of the record: 1", out)?;
        if frame != 1 {
            return Err(self.err(self.pos, Detail::MetadataFrameVersion { frame }));
        }
        let at = self.pos;
        let ty = self.uvarint_leaf("record_type", "the metadata record's type", out)?;
        let spec = i16::try_from(ty)
            .ok()
            .and_then(|t| registry().metadata_record(t));
        if let (Some(s), Some(n)) = (spec, out.last_mut()) {
            n.note = Note::Named(s.name);
        }
        let version = self.uvarint_leaf("version", "version of the record that follows", out)?;
        let Some(spec) = spec else {
            return Err(DecodeError {
                kind: ErrorKind::UnknownApi,
                offset: at,
                path: Path::default(),
                detail: Detail::MetadataTypeUnknown { ty },
            });
        };
        let v = i16::try_from(version).unwrap_or(i16::MAX);
        if v < spec.valid_versions.min {
            return Err(self.err(
                at,
                Detail::NoVersion {
                    name: spec.name.to_string(),
                    version: v,
                },
            ));
        }
        let layout = v.min(spec.max_version());
        self.spec_fields(spec, layout, out)?;
        let mut shown = format!("{} v{v}", spec.name);
        if layout != v {
            shown.push_str(&format!(" (read with the v{layout} layout)"));
        }
        Ok((shown, Some(spec.name)))
    }

    /// An unsigned varint as a leaf of its own.
    fn uvarint_leaf(
        &mut self,
        name: &'static str,
        desc: &'static str,
        out: &mut Vec<Node>,
    ) -> Result<u32, DecodeError> {
        let at = self.pos;
        let v = self.uvarint()?;
        let mut n = leaf(name, "uvarint", at, self.pos - at, self.region);
        n.value = Value::Int(v.into());
        n.desc = desc.into();
        out.push(n);
        Ok(v)
    }
}

/// The data spec `name`; its absence is a defect of the tables (a test checks every name).
fn data_spec(name: &str, offset: usize) -> Result<&'static MessageSpec, DecodeError> {
    registry().data(name).ok_or_else(|| DecodeError {
        kind: ErrorKind::UnknownApi,
        offset,
        path: Path::default(),
        detail: Detail::NoTableFor {
            name: name.to_string(),
        },
    })
}

/// Bytes left raw, with why.
fn raw(at: usize, end: usize, region: Region, why: &'static str) -> Node {
    let mut n = leaf("unparsed", "bytes", at, end.saturating_sub(at), region);
    n.kind = NodeKind::Raw;
    n.value = Value::Bytes(Some((at, end.saturating_sub(at))));
    n.desc = why.into();
    n
}

/// Moves the nodes of a part decoded from a decompressed byte source into that source: their
/// source number, and their bytes held by value (the renderers hold only the frame). Secrets
/// there are masked for good: no view can unmask a copy.
pub(crate) fn into_source(n: &mut Node, source: u16, buf: &[u8], secrets: &[(usize, usize)]) {
    n.walk_mut(&mut |x| {
        x.source = source;
        if let Value::Bytes(Some((at, len))) = x.value {
            let mut data = buf.get(at..at + len).unwrap_or_default().to_vec();
            if secrets
                .iter()
                .any(|&(s, l)| s < at + len && at < s.saturating_add(l))
            {
                data.fill(MASK);
            }
            x.value = Value::Blob(data);
        }
    });
}
