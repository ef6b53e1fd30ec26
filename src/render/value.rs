//! Text of a node's value, shared by the tree and the summary line.

use crate::kafka::{names, Node, Note, RecordSet, Value};

/// Most bytes a `bytes` value shows as hex in the tree; the span says how many there are.
pub const MAX_HEX_BYTES: usize = 32;

/// Most bytes of a record key or value shown (text or hex) without `--wide`.
pub const MAX_VALUE_BYTES: usize = 64;

pub use crate::text::{hex_pair, push_uuid, quote, uuid, HEX_DIGITS};

/// Appends `data` as lower-case hex, as `hex::encode` writes it, without a string for it.
pub fn push_hex(out: &mut Vec<u8>, data: &[u8]) {
    out.reserve(data.len() * 2);
    for &b in data {
        out.extend_from_slice(&hex_pair(b));
    }
}

/// How many hex digits `{:x}` writes for `n`.
pub fn hex_digits(n: usize) -> usize {
    if n == 0 {
        1
    } else {
        (usize::BITS - n.leading_zeros()).div_ceil(4) as usize
    }
}

/// `n` in lower-case hex, zero-padded to at least `width` digits, as `{n:0width$x}` writes it.
pub fn push_hex_num(out: &mut Vec<u8>, n: usize, width: usize) {
    let digits = hex_digits(n);
    for _ in digits..width {
        out.push(b'0');
    }
    for d in (0..digits).rev() {
        out.push(HEX_DIGITS[(n >> (4 * d)) & 0xf]);
    }
}

/// The text of record keys, values and header values that are text, by the one rule every
/// view applies: valid UTF-8 holding no control character but tab and newline. Other bytes
/// (a control record's `00 00 00 01`, a serialized object) are not text, whatever their UTF-8
/// validity.
pub fn as_text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data)
        .ok()
        .filter(|s| !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t'))
}

/// Record keys and values: text when they are text ([`as_text`]), hex otherwise, at most
/// `max` bytes of either.
pub fn payload(data: &[u8], max: usize) -> String {
    let shown = data.get(..max).unwrap_or(data);
    let more = if shown.len() < data.len() {
        format!("... ({} bytes)", data.len())
    } else {
        String::new()
    };
    match as_text(shown) {
        Some(s) => format!("{}{more}", quote(s)),
        None => format!("{}{more}", hex::encode(shown)),
    }
}

/// The value as shown after ` = `, or `None` for nodes without a value.
pub fn text(n: &Node, frame: &[u8], wide: bool) -> Option<String> {
    text_limited(n, frame, wide, MAX_VALUE_BYTES)
}

/// [`text`] with record keys and values cut at `max_value` bytes (unless `wide`).
pub fn text_limited(n: &Node, frame: &[u8], wide: bool, max_value: usize) -> Option<String> {
    let mut v = bare(n, frame, wide, max_value)?;
    if let Some(e) = n.enc.text() {
        v.push(' ');
        v.push_str(&e);
    }
    if let Some(t) = note_text(&n.note) {
        v.push(' ');
        v.push_str(&t);
    }
    Some(v)
}

/// [`text_limited`] without the length encoding (`-V --brief` shows no length prefixes).
pub fn text_brief(n: &Node, frame: &[u8], wide: bool, max_value: usize) -> Option<String> {
    let mut v = bare(n, frame, wide, max_value)?;
    if let Some(t) = note_text(&n.note) {
        v.push(' ');
        v.push_str(&t);
    }
    Some(v)
}

/// The value itself, without its length encoding or note.
fn bare(n: &Node, frame: &[u8], wide: bool, max_value: usize) -> Option<String> {
    let v = match &n.value {
        Value::None => return None,
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Str(Some(s)) => quote(s),
        Value::Str(None) | Value::Bytes(None) | Value::Null => "null".to_string(),
        Value::Bytes(Some((off, len))) if n.shape == crate::kafka::Shape::VarBytes => {
            let data = frame.get(*off..off + len).unwrap_or(&[]);
            payload(data, if wide { usize::MAX } else { max_value })
        }
        Value::Blob(b) if n.kind == crate::kafka::NodeKind::Group => format!("{} bytes", b.len()),
        Value::Blob(b) => payload(b, if wide { usize::MAX } else { max_value }),
        Value::Bytes(Some((off, len))) => {
            let shown = if wide {
                *len
            } else {
                (*len).min(MAX_HEX_BYTES)
            };
            let data = frame.get(*off..off + shown).unwrap_or(&[]);
            if *len == 0 {
                "\"\"".to_string()
            } else if shown < *len {
                format!("{}...", hex::encode(data))
            } else {
                hex::encode(data)
            }
        }
        Value::Uuid(b) => uuid(b),
        Value::Struct => "struct".to_string(),
        Value::Array(1) => "1 element".to_string(),
        Value::Array(n) => format!("{n} elements"),
        Value::Text(t) => t.clone(),
        Value::Tagged { tag, size } => tagged(*tag, *size),
        Value::Records(set) => record_set(set),
    };
    Some(v)
}

/// The name a note gives its value (an error's, an API's, an enumeration value's, a topic's),
/// shown in parentheses; `None` for the notes [`note_text`] spells otherwise (an error code
/// Kafka does not define among them: it is told with its number).
pub fn note_name(note: &Note) -> Option<&str> {
    match note {
        Note::Error(c) => c.name(),
        Note::Api(k) => k.name(),
        Note::Named(n) | Note::Enum { name: Some(n), .. } => Some(n),
        // A topic name from the wire (or a cut's note) that a terminal would act on is
        // `note_text`'s, escaped.
        Note::TopicName(n) if !needs_escaping(n) => Some(n),
        _ => None,
    }
}

/// Whether wire text holds a character [`super::table::printable`] escapes.
fn needs_escaping(s: &str) -> bool {
    matches!(super::table::printable(s), std::borrow::Cow::Owned(_))
}

/// A tagged field's group as shown: `tag 0, 5 bytes`.
pub fn tagged(tag: u32, size: usize) -> String {
    match size {
        1 => format!("tag {tag}, 1 byte"),
        n => format!("tag {tag}, {n} bytes"),
    }
}

/// A records field's count as shown: `2 batches, 14 records`, `3 messages, 3 records`.
pub fn record_set(set: &RecordSet) -> String {
    let t = &set.tally;
    let plural = |n: i64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut parts = Vec::new();
    if t.batches > 0 || t.messages == 0 {
        parts.push(plural(t.batches as i64, "batch", "batches"));
    }
    if t.messages > 0 {
        parts.push(plural(t.messages as i64, "message", "messages"));
    }
    parts.push(plural(t.records, "record", "records"));
    parts.join(", ")
}

/// A compression codec's name: the decoder's own table (`kafka::records::codec_name`).
pub use crate::kafka::records::codec_name;

/// Milliseconds since 1970 as RFC 3339 in UTC, always with three digits of milliseconds
/// (`1970-01-01T00:00:01.000Z`): the nanosecond text with its last six zeros taken off.
pub fn rfc3339_ms(ms: i64) -> String {
    super::time::rfc3339(ms.saturating_mul(1_000_000)).replacen("000000Z", "Z", 1)
}

/// Record batch v2 attributes spelled out.
fn batch_attributes(a: i64) -> String {
    let mut parts = vec![format!("compression={}", codec_name((a & 7) as u8))];
    parts.push(if a & 8 != 0 {
        "timestamp=LogAppendTime".into()
    } else {
        "timestamp=CreateTime".into()
    });
    if a & 16 != 0 {
        parts.push("transactional".into());
    }
    if a & 32 != 0 {
        parts.push("control".into());
    }
    if a & 64 != 0 {
        parts.push("delete-horizon".into());
    }
    format!("({})", parts.join(", "))
}

/// The words after a value for its note: `(NOT_LEADER_OR_FOLLOWER)`, `(Metadata)`,
/// `(0xc8c0edff, CRC-32C valid)`.
pub fn note_text(note: &Note) -> Option<String> {
    if let Some(name) = note_name(note) {
        return Some(format!("({name})"));
    }
    Some(match note {
        // A code no error of Kafka's has: its number, as tshark shows a value it cannot name
        // (named ones are `note_name`'s).
        Note::Error(c) => format!("(unknown error code {})", c.0),
        Note::TopicName(n) if needs_escaping(n) => format!("({})", super::table::printable(n)),
        // Named above, or nothing to say.
        Note::None | Note::TopicName(_) | Note::Named(_) | Note::Enum { name: Some(_), .. } => {
            return None
        }
        // An API key without a name (named ones are `note_name`'s).
        Note::Api(k) => format!("(ApiKey{})", k.0),
        Note::AclOperations(bits) => format!("({})", names::acl_operations(*bits)),
        Note::Crc {
            stored,
            computed,
            castagnoli,
        } => {
            let kind = if *castagnoli { "CRC-32C" } else { "CRC-32" };
            if stored == computed {
                format!("(0x{stored:08x}, {kind} valid)")
            } else {
                format!("(0x{stored:08x}, INVALID: the bytes give 0x{computed:08x})")
            }
        }
        Note::BatchAttributes(a) => batch_attributes(*a),
        Note::MessageAttributes { attrs, magic } => format!(
            "(compression={}{})",
            codec_name((attrs & 7) as u8),
            if *magic == 1 && attrs & 8 != 0 {
                ", timestamp=LogAppendTime"
            } else {
                ""
            }
        ),
        Note::TimestampMs(ms) => format!("({})", rfc3339_ms(*ms)),
        Note::Offset(o) => format!("(offset {o})"),
        Note::Enum {
            enumeration,
            name: None,
        } => format!("(unknown {})", enumeration.name),
    })
}

/// An endpoint as `SocketAddr` displays it, handed to `push` piece by piece: IPv4 from its
/// integers (formatting two addresses for every line and every JSON object cost more than
/// the rest of either), IPv6 by `Display`. The summary writes it into text, JSON into bytes.
pub fn endpoint_pieces(a: &std::net::SocketAddr, mut push: impl FnMut(&str)) {
    match a {
        std::net::SocketAddr::V4(v4) => {
            let mut n = itoa::Buffer::new();
            for (i, o) in v4.ip().octets().into_iter().enumerate() {
                if i > 0 {
                    push(".");
                }
                push(n.format(o));
            }
            push(":");
            push(n.format(v4.port()));
        }
        std::net::SocketAddr::V6(_) => push(&a.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kafka::{ApiKey, Enc, ErrorCode, NodeKind, Region};

    /// A field node of type `ty` holding `value`, at 0x0010 and 2 bytes long.
    fn field(ty: &'static str, value: Value) -> Node {
        let mut n = Node::new("F", ty, 0x10, Region::RequestBody, NodeKind::Field);
        n.len = 2;
        n.value = value;
        n
    }

    fn shown(n: &Node, frame: &[u8]) -> String {
        text(n, frame, false).unwrap_or_else(|| "<none>".to_string())
    }

    #[test]
    fn uuids_are_grouped_8_4_4_4_12() {
        let mut b = [0u8; 16];
        for (i, x) in b.iter_mut().enumerate() {
            *x = i as u8 * 0x11;
        }
        assert_eq!(uuid(&b), "00112233-4455-6677-8899-aabbccddeeff");
    }

    #[test]
    fn quoted_strings_escape_quotes_backslashes_and_control_characters() {
        assert_eq!(quote(""), r#""""#);
        assert_eq!(quote("orders"), r#""orders""#);
        assert_eq!(quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(quote("line\nnext\t\u{1b}"), r#""line\u{a}next\u{9}\u{1b}""#);
        assert_eq!(quote("héllo"), "\"héllo\"");
    }

    #[test]
    fn text_is_utf8_without_control_bytes_but_tab_and_newline() {
        assert_eq!(as_text(b"orders\tline\n"), Some("orders\tline\n"));
        assert_eq!(as_text("crème".as_bytes()), Some("crème"));
        assert_eq!(as_text(b""), Some(""));
        // Valid UTF-8, but a control record's key and an escape sequence are not text.
        assert_eq!(as_text(&[0, 0, 0, 1]), None);
        assert_eq!(as_text(b"\x1b[0m"), None);
        assert_eq!(as_text(b"a\rb"), None);
        assert_eq!(as_text(&[0xff, 0xfe]), None);
    }

    #[test]
    fn payloads_are_text_when_printable_and_hex_otherwise() {
        assert_eq!(payload(b"hello", 64), r#""hello""#);
        // Newlines and tabs still read as text (quoted with escapes); other controls do not.
        assert_eq!(payload(b"a\nb", 64), r#""a\u{a}b""#);
        assert_eq!(payload(&[0x00, 0xff, 0x10], 64), "00ff10");
        assert_eq!(payload(b"hello world", 5), r#""hello"... (11 bytes)"#);
        assert_eq!(payload(&[1, 2, 3, 4], 2), "0102... (4 bytes)");
        assert_eq!(payload(b"", 64), r#""""#);
    }

    #[test]
    fn scalar_values() {
        assert_eq!(text(&field("int32", Value::None), &[], false), None);
        assert_eq!(shown(&field("int32", Value::Int(-7)), &[]), "-7");
        assert_eq!(shown(&field("float64", Value::Float(0.5)), &[]), "0.5");
        assert_eq!(shown(&field("bool", Value::Bool(true)), &[]), "true");
        assert_eq!(
            shown(&field("string", Value::Str(Some("t\"x".into()))), &[]),
            r#""t\"x""#
        );
        assert_eq!(shown(&field("string", Value::Str(None)), &[]), "null");
        assert_eq!(shown(&field("bytes", Value::Bytes(None)), &[]), "null");
        assert_eq!(shown(&field("struct", Value::Null), &[]), "null");
        assert_eq!(shown(&field("struct", Value::Struct), &[]), "struct");
        assert_eq!(shown(&field("[]int32", Value::Array(1)), &[]), "1 element");
        assert_eq!(shown(&field("[]int32", Value::Array(0)), &[]), "0 elements");
        assert_eq!(shown(&field("[]int32", Value::Array(3)), &[]), "3 elements");
        assert_eq!(
            shown(
                &field("", Value::Text("PLAIN initial response".into())),
                &[]
            ),
            "PLAIN initial response"
        );
        assert_eq!(
            shown(&field("uuid", Value::Uuid([0xab; 16])), &[]),
            "abababab-abab-abab-abab-abababababab"
        );
    }

    #[test]
    fn bytes_read_from_the_frame_and_are_cut_at_32_unless_wide() {
        let frame: Vec<u8> = (0..=0x40).collect();
        assert_eq!(
            shown(&field("bytes", Value::Bytes(Some((2, 3)))), &frame),
            "020304"
        );
        assert_eq!(
            shown(&field("bytes", Value::Bytes(Some((5, 0)))), &frame),
            r#""""#
        );
        let long = field("bytes", Value::Bytes(Some((0, 33))));
        let cut = format!("{}...", hex::encode(&frame[..32]));
        assert_eq!(shown(&long, &frame), cut);
        assert_eq!(
            text(&long, &frame, true).as_deref(),
            Some(hex::encode(&frame[..33]).as_str())
        );
        // A span past the frame's end shows nothing rather than panicking.
        assert_eq!(
            shown(&field("bytes", Value::Bytes(Some((0x40, 4)))), &frame),
            ""
        );
    }

    #[test]
    fn record_keys_and_values_are_payloads_cut_at_max_value() {
        let frame = b"....hello, world";
        let mut v = field("varbytes", Value::Bytes(Some((4, 12))));
        v.shape = crate::kafka::Shape::VarBytes;
        assert_eq!(shown(&v, frame), r#""hello, world""#);
        assert_eq!(
            text_limited(&v, frame, false, 5).as_deref(),
            Some(r#""hello"... (12 bytes)"#)
        );
        assert_eq!(
            text_limited(&v, frame, true, 5).as_deref(),
            Some(r#""hello, world""#)
        );
        let blob = field("varbytes", Value::Blob(vec![0xff, 0xfe, 0x00, 0x01]));
        assert_eq!(
            text_limited(&blob, &[], false, 2).as_deref(),
            Some("fffe... (4 bytes)")
        );
        let mut group = field("records", Value::Blob(vec![0; 300]));
        group.kind = NodeKind::Group;
        assert_eq!(shown(&group, &[]), "300 bytes");
    }

    #[test]
    fn length_encodings_follow_the_value() {
        let mut n = field("string", Value::Str(Some("ab".into())));
        n.enc = Enc::CompactLen(3);
        assert_eq!(shown(&n, &[]), r#""ab" (compact, len+1=3)"#);
        n.enc = Enc::Int16Len(2);
        assert_eq!(shown(&n, &[]), r#""ab" (int16 len=2)"#);
        let mut a = field("uvarint", Value::Int(2));
        a.enc = Enc::CompactCount;
        assert_eq!(shown(&a, &[]), "2 (compact, n+1)");
        a.enc = Enc::CompactNull;
        assert_eq!(shown(&a, &[]), "2 (compact, null)");
    }

    #[test]
    fn notes_name_errors_apis_topics_and_checksums() {
        let note = |n: Note| note_text(&n).unwrap_or_else(|| "<none>".to_string());
        assert_eq!(note_text(&Note::None), None);
        assert_eq!(note(Note::Api(ApiKey(3))), "(Metadata)");
        assert_eq!(note(Note::Api(ApiKey(1001))), "(ApiKey1001)");
        assert_eq!(
            note(Note::Error(ErrorCode(3))),
            "(UNKNOWN_TOPIC_OR_PARTITION)"
        );
        assert_eq!(note(Note::Error(ErrorCode(-1))), "(UNKNOWN_SERVER_ERROR)");
        assert_eq!(
            note(Note::Error(ErrorCode(9999))),
            "(unknown error code 9999)"
        );
        assert_eq!(
            note(Note::Error(ErrorCode(i16::MIN))),
            "(unknown error code -32768)"
        );
        assert_eq!(note(Note::TopicName("orders".into())), "(orders)");
        let evil = Note::TopicName("evil\u{1b}[2J\u{202e}".into());
        assert_eq!(note_name(&evil), None);
        assert_eq!(note(evil), "(evil\\x1b[2J\\u{202e})");
        assert_eq!(note(Note::AclOperations(0b1_1000)), "(READ, WRITE)");
        assert_eq!(note(Note::AclOperations(i32::MIN)), "(not requested)");
        assert_eq!(
            note(Note::Crc {
                stored: 0xc8c0_edff,
                computed: 0xc8c0_edff,
                castagnoli: true
            }),
            "(0xc8c0edff, CRC-32C valid)"
        );
        assert_eq!(
            note(Note::Crc {
                stored: 1,
                computed: 0xabc,
                castagnoli: false
            }),
            "(0x00000001, INVALID: the bytes give 0x00000abc)"
        );
        assert_eq!(note(Note::Offset(42)), "(offset 42)");
    }

    #[test]
    fn a_note_follows_the_value_and_its_encoding() {
        let mut n = field("int16", Value::Int(3));
        n.note = Note::Error(ErrorCode(3));
        assert_eq!(shown(&n, &[]), "3 (UNKNOWN_TOPIC_OR_PARTITION)");
        let mut id = field("uuid", Value::Uuid([0; 16]));
        id.note = Note::TopicName("orders".into());
        assert_eq!(
            shown(&id, &[]),
            "00000000-0000-0000-0000-000000000000 (orders)"
        );
        let mut s = field("string", Value::Str(Some("x".into())));
        s.enc = Enc::CompactLen(2);
        s.note = Note::Offset(9);
        assert_eq!(shown(&s, &[]), r#""x" (compact, len+1=2) (offset 9)"#);
    }

    #[test]
    fn attributes_are_spelled_out() {
        let note = |n: Note| note_text(&n).unwrap_or_default();
        assert_eq!(
            note(Note::BatchAttributes(0)),
            "(compression=none, timestamp=CreateTime)"
        );
        assert_eq!(
            note(Note::BatchAttributes(4 | 8 | 16 | 32 | 64)),
            "(compression=zstd, timestamp=LogAppendTime, transactional, control, delete-horizon)"
        );
        assert_eq!(
            note(Note::MessageAttributes {
                attrs: 1 | 8,
                magic: 1
            }),
            "(compression=gzip, timestamp=LogAppendTime)"
        );
        // Magic 0 has no timestamp type: the bit means nothing there.
        assert_eq!(
            note(Note::MessageAttributes {
                attrs: 2 | 8,
                magic: 0
            }),
            "(compression=snappy)"
        );
        assert_eq!(codec_name(3), "lz4");
        assert_eq!(codec_name(5), "unknown");
    }

    #[test]
    fn timestamps_are_rfc3339_in_utc_with_milliseconds() {
        // Whole seconds keep their `.000`: the milliseconds column is always there.
        assert_eq!(rfc3339_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_ms(1_500), "1970-01-01T00:00:01.500Z");
        assert_eq!(rfc3339_ms(1_764_464_353_007), "2025-11-30T00:59:13.007Z");
        assert_eq!(rfc3339_ms(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(
            note_text(&Note::TimestampMs(86_400_000)).as_deref(),
            Some("(1970-01-02T00:00:00.000Z)")
        );
    }

    /// Endpoints pieced together read as `SocketAddr` displays them.
    #[test]
    fn endpoint_pieces_read_as_displayed() {
        for a in [
            "0.0.0.0:0",
            "10.0.0.8:44774",
            "255.255.255.255:65535",
            "[fe80::1]:9092",
            "[::1]:0",
        ] {
            let addr: std::net::SocketAddr = a.parse().unwrap_or_else(|e| panic!("{a}: {e}"));
            let mut got = String::new();
            endpoint_pieces(&addr, |p| got.push_str(p));
            assert_eq!(got, addr.to_string());
        }
    }
}
