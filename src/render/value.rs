//! Text of a node's value, shared by the tree and the summary line.

use crate::kafka::{names, Node, Note, Value};
use std::fmt::Write;

/// Most bytes a `bytes` value shows as hex in the tree; the span says how many there are.
pub const MAX_HEX_BYTES: usize = 32;

/// Most bytes of a record key or value shown (text or hex) without `--wide`.
pub const MAX_VALUE_BYTES: usize = 64;

pub fn uuid(b: &[u8; 16]) -> String {
    let h = hex::encode(b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Record keys and values: text when they are UTF-8 (and printable), hex otherwise, at most
/// `max` bytes of either.
pub fn payload(data: &[u8], max: usize) -> String {
    let shown = &data[..data.len().min(max)];
    let more = if shown.len() < data.len() {
        format!("... ({} bytes)", data.len())
    } else {
        String::new()
    };
    match std::str::from_utf8(shown) {
        Ok(s) if !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t') => {
            format!("{}{more}", quote(s))
        }
        _ => format!("{}{more}", hex::encode(shown)),
    }
}

/// The value as shown after ` = `, or `None` for nodes without a value.
pub fn text(n: &Node, frame: &[u8], wide: bool) -> Option<String> {
    text_limited(n, frame, wide, MAX_VALUE_BYTES)
}

/// [`text`] with record keys and values cut at `max_value` bytes (unless `wide`).
pub fn text_limited(n: &Node, frame: &[u8], wide: bool, max_value: usize) -> Option<String> {
    let v = match &n.value {
        Value::None => return None,
        Value::Int(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Str(Some(s)) => quote(s),
        Value::Str(None) | Value::Bytes(None) | Value::Null => "null".to_string(),
        Value::Bytes(Some((off, len))) if n.ty == "varbytes" => {
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
    };
    let mut v = v;
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

/// A compression codec's name.
pub fn codec_name(c: u8) -> &'static str {
    match c {
        0 => "none",
        1 => "gzip",
        2 => "snappy",
        3 => "lz4",
        4 => "zstd",
        _ => "unknown",
    }
}

/// Milliseconds since 1970 as RFC 3339 in UTC, with milliseconds only when there are some.
pub fn rfc3339_ms(ms: i64) -> String {
    super::json::rfc3339(ms.saturating_mul(1_000_000))
        .replace(".000000Z", "Z")
        .replacen("000000Z", "Z", 1)
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
    Some(match note {
        Note::None => return None,
        Note::Api(k) => format!(
            "({})",
            names::api_name(*k).map_or_else(|| format!("ApiKey{k}"), str::to_string)
        ),
        Note::Error(c) => format!(
            "({})",
            names::error_name(*c).unwrap_or("unknown error code")
        ),
        Note::AclOperations(bits) => format!("({})", names::acl_operations(*bits)),
        Note::TopicName(n) => format!("({n})"),
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
        Note::ControlType(0) => "(control: ABORT marker)".into(),
        Note::ControlType(1) => "(control: COMMIT marker)".into(),
        Note::ControlType(t) => format!("(control type {t})"),
    })
}
