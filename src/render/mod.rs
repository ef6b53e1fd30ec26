//! Output: the object tree, the byte layout, and (later) JSON and statistics. Renderers read
//! decoded messages; they never decode.

use std::borrow::Cow;

pub mod bytes;
pub mod json;
pub mod notice;
pub mod problem;
pub mod report;
pub mod stats;
pub mod summary;
pub use crate::text::table;
#[cfg(test)]
mod test_frames;
pub use crate::text::time;
pub mod tree;
pub mod tshark;
pub mod value;
pub use crate::text::words;

/// How output looks.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// ANSI colours on.
    pub color: bool,
    /// Print descriptions whole instead of cutting them at 78 characters.
    pub wide: bool,
    /// Bytes of a record key or value shown (`--max-value`).
    pub max_value: usize,
    /// Show passwords, tokens and other secrets instead of masking them.
    pub show_secrets: bool,
    /// `-x` adds a character column, as xxd does.
    pub ascii: bool,
    /// `-V --brief`: the compact tree (no descriptions, no length prefixes, lines cut to fit).
    pub brief: bool,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            color: false,
            wide: false,
            max_value: value::MAX_VALUE_BYTES,
            show_secrets: false,
            ascii: false,
            brief: false,
        }
    }
}

/// The notice under a message read with an assumed layout: its version is newer than the
/// tables, so the fields shown are those of the newest known version.
pub fn assumed_version_notice(msg: &crate::kafka::Message) -> Option<String> {
    let layout = msg.assumed_version?;
    let version = msg.api_version.unwrap_or(layout);
    Some(format!(
        "notice: assumed_version {layout}: {} v{version} is newer than kdissect's tables; read \
         with the v{layout} layout, every byte fits, but fields v{version} added or changed may \
         be shown under v{layout} names",
        msg.api_name()
    ))
}

/// What the user can do about a kind of problem, in terms of kdissect's flags. The decoder
/// names no flags; the command line adds its advice here, at the edge.
pub fn hint(kind: crate::kafka::ProblemKind) -> Option<&'static str> {
    use crate::kafka::ProblemKind as K;
    match kind {
        K::Unpaired => Some("to decode it as a response, give --api-key K --api-version V"),
        K::DecompressionLimit => Some("--max-decompressed raises the budget"),
        _ => None,
    }
}

/// A problem's text followed by its hint, if the kind has one.
pub fn with_hint(message: &str, kind: crate::kafka::ProblemKind) -> Cow<'_, str> {
    match hint(kind) {
        Some(h) => Cow::Owned(format!("{message}: {h}")),
        None => Cow::Borrowed(message),
    }
}

/// Byte that stands for a masked secret byte in every view of the frame's bytes.
pub const MASK: u8 = b'*';

/// The frame as the views show it: the message's secret spans masked with `*` unless secrets
/// are to be shown. Every view reads bytes from this, so a secret is masked in the tree, the
/// byte layout and JSON alike (and in raw bytes left after an error).
pub fn masked<'a>(msg: &crate::kafka::Message, frame: &'a [u8], style: Style) -> Cow<'a, [u8]> {
    if style.show_secrets || msg.secrets.is_empty() {
        return Cow::Borrowed(frame);
    }
    let mut out = frame.to_vec();
    for &(at, len) in &msg.secrets {
        let end = at.saturating_add(len).min(out.len());
        if let Some(s) = out.get_mut(at.min(end)..end) {
            s.fill(MASK);
        }
    }
    Cow::Owned(out)
}

/// The spans the byte layout draws as `**`: none when secrets are shown.
pub fn hidden_spans(msg: &crate::kafka::Message, style: Style) -> &[(usize, usize)] {
    if style.show_secrets {
        &[]
    } else {
        &msg.secrets
    }
}
