//! Output: the object tree, the byte layout, and (later) JSON and statistics. Renderers read
//! decoded messages; they never decode.

pub mod bytes;
pub mod json;
pub mod stats;
pub mod summary;
pub mod tree;
pub mod value;

/// How output looks.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    /// ANSI colours on.
    pub color: bool,
    /// Print descriptions whole instead of cutting them at 78 characters.
    pub wide: bool,
}
