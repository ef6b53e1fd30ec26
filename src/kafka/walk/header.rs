//! The request and response headers, read from Kafka's own RequestHeader and ResponseHeader
//! specs by the generic decoder that reads bodies. Header versions are chosen from the API key
//! and version exactly as Kafka chooses them.

use super::decode::{DecodeError, DecodeOptions, Decoder};
use super::node::{Node, NodeKind, Note, Region, Shape, Value};
use crate::kafka::meaning::codes::ApiKey;
use crate::kafka::meaning::problem::{Detail, Path, Step};
use crate::kafka::spec::schema::{
    registry, Direction, FieldSpec, FieldType, MessageSpec, Versions,
};
use std::borrow::Cow;
use std::sync::OnceLock;

pub(crate) use crate::kafka::spec::headers::header_version;
pub use crate::kafka::spec::headers::{request_header_version, response_header_version};

/// The first fields of a request header, read without decoding the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestPeek {
    pub api_key: i16,
    pub api_version: i16,
    pub correlation_id: i32,
}

/// Reads api key, version and correlation id of a frame that would be a request.
pub fn peek_request(frame: &[u8]) -> Option<RequestPeek> {
    let b = frame.get(4..12)?;
    Some(RequestPeek {
        api_key: crate::be::i16_at(b, 0),
        api_version: crate::be::i16_at(b, 2),
        correlation_id: crate::be::i32_at(b, 4),
    })
}

/// Reads the API key and version a request header names (`header` starts after the size
/// prefix and ends with the frame), which fix the header's own version, before the header is
/// walked.
pub(crate) fn peek_request_api(header: &[u8]) -> Option<(i16, i16)> {
    let b = header.get(0..4)?;
    Some((crate::be::i16_at(b, 0), crate::be::i16_at(b, 2)))
}

/// Reads the correlation id of a frame that would be a response.
pub fn peek_response_correlation(frame: &[u8]) -> Option<i32> {
    let b = frame.get(4..8)?;
    Some(crate::be::i32_at(b, 0))
}

/// What a header said.
#[derive(Debug, Clone, Default)]
pub(crate) struct HeaderValues {
    pub api_key: Option<i16>,
    pub api_version: Option<i16>,
    pub correlation_id: Option<i32>,
    /// `Some(None)` is a null client_id.
    pub client_id: Option<Option<String>>,
}

/// A header spec as the generic decoder walks it. Kafka marks every variable-length header
/// field `"flexibleVersions": "none"` (ClientId keeps its int16 length, so that any broker can
/// read who asks, whatever the version), so the fields are read as those of a non-flexible
/// struct, and the tagged-field section a flexible header version adds is read after them.
/// The fields carry the names of Kafka's protocol guide (request_api_key, client_id), which
/// the tree has always shown for headers.
struct Walk {
    /// The spec in the registry, with Kafka's own field names.
    source: &'static MessageSpec,
    /// The fields read in place, in order: the source's fields but its tagged ones.
    spec: MessageSpec,
    /// The tagged fields (request header v3's ClientInstanceId), read in the tagged-field
    /// section that ends a flexible header.
    tagged: Vec<FieldSpec>,
    /// The group's name for each version: `RequestHeader v2`.
    names: Vec<String>,
    /// What each of the source's fields holds for the message, by the field's place: found
    /// by name once, rather than for every frame.
    slots: Vec<Slot>,
}

/// Which of the values a message takes from its header a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    ApiKey,
    ApiVersion,
    CorrelationId,
    ClientId,
    Other,
}

impl Slot {
    fn of(f: &FieldSpec) -> Slot {
        match f.name {
            "RequestApiKey" => Slot::ApiKey,
            "RequestApiVersion" => Slot::ApiVersion,
            "CorrelationId" => Slot::CorrelationId,
            "ClientId" => Slot::ClientId,
            _ => Slot::Other,
        }
    }
}

/// The walks of the header specs in the registry, made once.
fn walks() -> &'static [Walk] {
    static WALKS: OnceLock<Vec<Walk>> = OnceLock::new();
    WALKS.get_or_init(|| {
        registry()
            .header_specs()
            .map(|source| {
                let (tagged, plain): (Vec<&FieldSpec>, Vec<&FieldSpec>) =
                    source.fields.iter().partition(|f| is_tagged(f));
                // Made once for the two or three header tables, and kept for the run as
                // the tables are.
                let plain: Vec<FieldSpec> = plain.into_iter().map(guide_field).collect();
                Walk {
                    source,
                    spec: MessageSpec {
                        flexible_versions: Versions::NONE,
                        fields: Box::leak(plain.into_boxed_slice()),
                        ..source.clone()
                    },
                    tagged: tagged.into_iter().map(guide_field).collect(),
                    names: (0..=source.max_version().max(0))
                        .map(|v| format!("{} v{v}", source.name))
                        .collect(),
                    slots: source.fields.iter().map(Slot::of).collect(),
                }
            })
            .collect()
    })
}

/// A field of the tagged-field section, in whichever versions (a header field is tagged in
/// every version that has it, or in none).
fn is_tagged(f: &FieldSpec) -> bool {
    !f.tagged_versions.none
}

fn guide_field(f: &FieldSpec) -> FieldSpec {
    FieldSpec {
        name: Box::leak(snake_case(f.name).into_boxed_str()),
        ..f.clone()
    }
}

/// `RequestApiKey` → `request_api_key`.
fn snake_case(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The walk of the header of `direction` at `version`.
fn walk_for(direction: Direction, version: i16) -> Option<&'static Walk> {
    let spec = registry().header(direction, version)?;
    walks().iter().find(|w| std::ptr::eq(w.source, spec))
}

/// Reads the header of `direction` at `version` from the decoder's position: its group node,
/// the values it holds, and where it stopped if it did.
pub(crate) fn decode(
    d: &mut Decoder<'_>,
    direction: Direction,
    version: i16,
    opts: DecodeOptions,
) -> (Node, HeaderValues, Result<(), DecodeError>) {
    let start = d.pos;
    let Some(walk) = walk_for(direction, version) else {
        let mut g = Node::new("Header", "", start, Region::RpcHeader, NodeKind::Group);
        g.shape = Shape::Header;
        g.len = 0;
        return (g, HeaderValues::default(), Err(missing_table(start)));
    };
    let name = match usize::try_from(version)
        .ok()
        .and_then(|v| walk.names.get(v))
    {
        Some(n) => Cow::Borrowed(n.as_str()),
        None => Cow::Owned(format!("{} v{version}", walk.spec.name)),
    };
    let mut g = Node::new(name, "", start, Region::RpcHeader, NodeKind::Group);
    g.shape = Shape::Header;
    g.desc = match direction {
        Direction::Request => "common request header",
        Direction::Response => "common response header",
    }
    .into();
    let end = d.pos + d.remaining();
    if opts.facts_only && opts.walk_facts && opts.keep_depth == 2 {
        if let Some(values) = read_in_place(d, walk, version) {
            g.len = d.pos - start;
            return (g, values, Ok(()));
        }
    }
    // The header's values are read from its nodes: every one is kept.
    let opts = DecodeOptions {
        facts_only: false,
        ..opts
    };
    let (fields, err) = d.message_body(&walk.spec, version, opts);
    g.children = fields.children;
    let mut result = err.map_or(Ok(()), |e| Err(unnamed_if_cut_short(e, &walk.spec, end)));
    let values = show_as_guide(walk, version, &mut g.children);
    if result.is_ok() && walk.source.is_flexible(version) {
        result = d.tagged_section(
            &walk.tagged,
            &mut g.children,
            "number of tagged fields in the header",
        );
    }
    g.len = d.pos - start;
    (g, values, result)
}

/// The values of a header of `direction` at `version`, read in place from the decoder's
/// position (as [`read_in_place`]): `None` for anything but a whole header of plain values.
pub(crate) fn values_in_place(
    d: &mut Decoder<'_>,
    direction: Direction,
    version: i16,
) -> Option<HeaderValues> {
    read_in_place(d, walk_for(direction, version)?, version)
}

/// The header's values read where they lie, with no node, for the views that print none of
/// it (the summary and the statistics, which read the values only): `None`, with the
/// decoder where it was, for anything but a whole header of plain values (a cut field, a
/// null where none is allowed, tagged fields), which the decoder then reads as usual.
fn read_in_place(d: &mut Decoder<'_>, walk: &Walk, version: i16) -> Option<HeaderValues> {
    let start = d.pos;
    let values = read_values(d, walk, version);
    if values.is_none() {
        d.pos = start;
    }
    values
}

fn read_values(d: &mut Decoder<'_>, walk: &Walk, version: i16) -> Option<HeaderValues> {
    let mut v = HeaderValues::default();
    let fields = walk.source.fields.iter().zip(&walk.slots);
    for (f, &slot) in fields.filter(|(f, _)| f.versions.contains(version) && !is_tagged(f)) {
        match f.ty {
            FieldType::Int16 => take_int(&mut v, slot, i16::from_be_bytes(take(d)?).into()),
            FieldType::Int32 => take_int(&mut v, slot, i32::from_be_bytes(take(d)?).into()),
            FieldType::String => {
                let len = i16::from_be_bytes(take(d)?);
                let text = match usize::try_from(len) {
                    Ok(n) if n <= d.remaining() => {
                        let text = super::cursor::lossy_text(d.slice(d.pos, n));
                        d.pos += n;
                        Some(text)
                    }
                    _ if len == -1 && f.nullable_versions.contains(version) => None,
                    _ => return None,
                };
                if slot == Slot::ClientId {
                    v.client_id = Some(text);
                }
            }
            _ => return None,
        }
    }
    // A flexible version's tagged section, read in place only when it is empty.
    if walk.source.is_flexible(version) && take::<1>(d)? != [0] {
        return None;
    }
    Some(v)
}

/// Notes an integer of the header where it is one the message needs.
fn take_int(v: &mut HeaderValues, slot: Slot, x: i64) {
    match slot {
        Slot::ApiKey => v.api_key = Some(x as i16),
        Slot::ApiVersion => v.api_version = Some(x as i16),
        Slot::CorrelationId => v.correlation_id = Some(x as i32),
        Slot::ClientId | Slot::Other => {}
    }
}

/// The next `N` bytes, if there are that many.
fn take<const N: usize>(d: &mut Decoder<'_>) -> Option<[u8; N]> {
    if d.remaining() < N {
        return None;
    }
    let bytes = d.slice(d.pos, N).try_into().ok()?;
    d.pos += N;
    Some(bytes)
}

/// Notes the value of header field `f` (which holds `slot`) where it is one the message
/// needs.
fn take_value(v: &mut HeaderValues, slot: Slot, value: &Value) {
    match (slot, value) {
        (Slot::ClientId, Value::Str(s)) => v.client_id = Some(s.clone()),
        (_, Value::Int(x)) => take_int(v, slot, *x),
        _ => {}
    }
}

/// The header's leaves as the protocol guide spells them (a nullable string is a
/// `nullable_string`, the API key names its API), and the values they hold, found by the
/// spec's own field names.
fn show_as_guide(walk: &Walk, version: i16, leaves: &mut [Node]) -> HeaderValues {
    let mut v = HeaderValues::default();
    let fields = walk.source.fields.iter().zip(&walk.slots);
    let present = fields.filter(|(f, _)| f.versions.contains(version) && !is_tagged(f));
    for (n, (f, &slot)) in leaves.iter_mut().zip(present) {
        if f.ty == FieldType::String && f.nullable_versions.contains(version) {
            n.ty = Cow::Borrowed("nullable_string");
        }
        take_value(&mut v, slot, &n.value);
        if let (Slot::ApiKey, Value::Int(k)) = (slot, &n.value) {
            n.note = Note::Api(ApiKey(*k as i16));
        }
    }
    v
}

/// A header cut short (fewer bytes left than a field's fixed part: an int, a string's length)
/// has always been reported by its offset alone (`at 0x0006: int16 needs 2 bytes, only 1
/// left`); a client_id whose length is wrong is named. Kept so that the output does not change.
fn unnamed_if_cut_short(mut e: DecodeError, spec: &MessageSpec, end: usize) -> DecodeError {
    let cut_short = spec
        .fields
        .iter()
        .find(|f| matches!(e.path.steps(), [Step::Field(id)] if id.name() == f.name))
        .and_then(|f| fixed_part(&f.ty))
        .is_some_and(|n| e.offset + n > end);
    if cut_short {
        e.path = Path::default();
    }
    e
}

/// Bytes a field of a non-flexible struct takes before anything variable: the whole of a
/// number, the length of a string or bytes.
fn fixed_part(ty: &FieldType) -> Option<usize> {
    Some(match ty {
        FieldType::Bool | FieldType::Int8 => 1,
        FieldType::Int16 | FieldType::Uint16 | FieldType::String => 2,
        FieldType::Int32 | FieldType::Uint32 | FieldType::Bytes | FieldType::Array(_) => 4,
        FieldType::Int64 | FieldType::Float64 => 8,
        FieldType::Uuid => 16,
        FieldType::Records | FieldType::Struct(_) => return None,
    })
}

fn missing_table(offset: usize) -> DecodeError {
    DecodeError {
        kind: super::decode::ErrorKind::Malformed,
        offset,
        path: Path::default(),
        detail: Detail::NoHeaderTable,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    /// The walk reads header fields non-flexibly: that holds only while every variable-length
    /// field of Kafka's header specs opts out of flexible encoding.
    #[test]
    fn header_fields_are_never_compact() {
        for direction in [Direction::Request, Direction::Response] {
            for version in 0..=3 {
                let spec = registry().header(direction, version).expect("header table");
                for f in spec.fields {
                    let fixed = !matches!(
                        f.ty,
                        FieldType::String | FieldType::Bytes | FieldType::Array(_)
                    );
                    assert!(
                        fixed || f.flexible_versions == Some(Versions::NONE),
                        "{} {} is flexible",
                        spec.name,
                        f.name
                    );
                }
            }
        }
    }

    #[test]
    fn every_header_version_has_a_walk() {
        for (direction, versions) in [(Direction::Request, 0..=3), (Direction::Response, 0..=1)] {
            for v in versions {
                let w = walk_for(direction, v).expect("walk");
                assert!(w.spec.valid_versions.contains(v), "{direction:?} v{v}");
            }
        }
        assert_eq!(snake_case("RequestApiKey"), "request_api_key");
        assert_eq!(snake_case("ClientId"), "client_id");
    }
}
