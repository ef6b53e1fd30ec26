//! Output: the object tree, the byte layout, and (later) JSON and statistics. Renderers read
//! decoded messages; they never decode.

pub mod bytes;
pub mod json;
pub mod stats;
pub mod summary;
pub mod tree;
pub mod value;

/// How output looks.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// ANSI colours on.
    pub color: bool,
    /// Print descriptions whole instead of cutting them at 78 characters.
    pub wide: bool,
    /// Bytes of a record key or value shown (`--max-value`).
    pub max_value: usize,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            color: false,
            wide: false,
            max_value: value::MAX_VALUE_BYTES,
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
