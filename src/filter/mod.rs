//! Display filters: a small expression language, like tshark's `-Y`, evaluated on decoded
//! Kafka messages (docs/filters.md).
//!
//! ```
//! use kdissect::filter::Filter;
//! let f = Filter::compile("api == Metadata && latency > 50ms").unwrap();
//! assert_eq!(f.to_string(), "api == Metadata && latency > 50ms");
//! assert!(Filter::compile("laytency > 5ms").unwrap_err().to_string().contains("did you mean `latency`"));
//! ```
//!
//! [`parse`] reads the text into an [`Expr`]; [`Filter::compile`] also checks every field and
//! value (schema paths against the message tables, API and error names) so that a filter that
//! compiles cannot fail on a message. A filter reads messages only through the [`Fields`]
//! trait: [`RecordFields`] serves it for a captured message, [`MessageFields`] for a bare one,
//! [`ExchangeFields`] for a request and its response judged together.
// A filter is user input and a message is capture input: neither may panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod alias;
mod compile;
mod fields;
mod flags;
mod help;
mod lexer;
mod literal;
mod parser;
mod pattern;
mod project;
mod record;
mod suggest;
mod window;

pub use alias::{describe as describe_alias, Alias, Render, Target, ALIASES};
pub use compile::Filter;
pub use fields::{Builtin, FieldPath, FieldValue, Fields, NamedField, PathIndex, PathSegment};
pub use flags::from_flags;
pub use help::{help_text, man_section};
pub use parser::{parse, CmpOp, Expr, FieldName, Literal, SetMember};
pub use pattern::{Budget, Pattern};
pub use project::Projection;
pub use record::{ExchangeFields, MessageFields, RecordFields};
pub use window::{TimeBound, Window};

/// `; did you mean `Metadata`?` for a name that is no API's (`metdata`), the nearest names
/// ignoring case and separators; empty when none is near.
pub fn api_hint(wrong: &str) -> String {
    suggest::did_you_mean(&suggest::nearest_api(wrong))
}

/// Why a filter does not parse or compile, with the 1-based column (in characters) where the
/// problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    pub column: usize,
    pub message: String,
}

impl FilterError {
    pub(crate) fn new(column: usize, message: impl Into<String>) -> FilterError {
        FilterError {
            column,
            message: message.into(),
        }
    }

    /// The expression with a caret under the column, then the message: for a terminal.
    pub fn render(&self, expr: &str) -> String {
        let pad = " ".repeat(self.column.saturating_sub(1));
        format!("{expr}\n{pad}^ {}", self.message)
    }
}

impl std::fmt::Display for FilterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

impl std::error::Error for FilterError {}
