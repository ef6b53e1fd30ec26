//! Which exchanges the user asked to see: the exchange flags and `-Y`, compiled once here so
//! that the sinks judge messages against a resolved choice and never read the clap struct.

use super::low::Cli;
use kdissect::filter::{from_flags, Filter, FilterError};

/// Which exchanges to print: the exchange flags (as a filter expression judged on request
/// and response together) and `-Y` (an exchange matches when either half does). Both must
/// hold. With `--messages` each message is judged alone instead, by both.
#[derive(Debug, Default)]
pub(crate) struct Choice {
    /// `--api`, `--errors`, `--topic`, `--stream`, `--correlation-id`, `--client-id`.
    pub(crate) flags: Option<Filter>,
    /// `-Y EXPR`.
    pub(crate) display: Option<Filter>,
    /// `--stream` alone lets the notices of its stream through; any other condition hides
    /// notices, which belong to no exchange.
    pub(crate) stream: Option<u32>,
    pub(crate) only_stream: bool,
    /// `--messages`: the filters select single messages, not exchanges.
    pub(crate) messages: bool,
    /// Requests are held for their answer even without a filter (a field printed needs the
    /// response's frame).
    pub(crate) hold: bool,
}

impl Choice {
    /// Compiles the flags and `-Y`; an error says where in which expression.
    pub(crate) fn new(cli: &Cli, apis: &[i16]) -> Result<Choice, String> {
        let text = from_flags(
            apis,
            cli.errors,
            cli.topic.as_deref(),
            cli.stream,
            cli.correlation_id,
            cli.client_id.as_deref(),
        );
        let flags = (!text.is_empty())
            .then(|| Filter::compile(&text))
            .transpose()
            .map_err(|e| format!("the filter flags make an invalid expression: {e}"))?;
        let display = cli
            .display_filter
            .as_deref()
            .map(|y| Filter::compile(y).map_err(|e| filter_error(y, &e)))
            .transpose()?;
        let only_stream = display.is_none()
            && apis.is_empty()
            && cli.correlation_id.is_none()
            && cli.client_id.is_none()
            && !cli.errors
            && cli.topic.is_none();
        Ok(Choice {
            flags,
            display,
            stream: cli.stream,
            only_stream,
            messages: cli.messages,
            hold: false,
        })
    }

    /// Holds every request until its answer, filtered or not (for `response_frame`).
    pub(crate) fn hold_requests(&mut self) {
        self.hold = true;
    }

    /// Whether an exchange filter or `-Y` is given.
    pub(crate) fn filtered(&self) -> bool {
        self.flags.is_some() || self.display.is_some()
    }

    /// Whether a filter reads fields below the levels a summary keeps.
    pub(crate) fn needs_tree(&self) -> bool {
        self.filters().any(Filter::needs_tree)
    }

    /// Whether a filter names fields of the schema, which only a whole tree holds.
    pub(crate) fn reads_schema(&self) -> bool {
        self.filters().any(Filter::reads_schema)
    }

    /// The filters given: the flags' and `-Y`'s.
    pub(crate) fn filters(&self) -> impl Iterator<Item = &Filter> {
        [&self.flags, &self.display].into_iter().flatten()
    }
}

/// A display filter that does not compile: the message, then the expression with a caret
/// under the column where the problem is.
fn filter_error(expr: &str, e: &FilterError) -> String {
    let pad = " ".repeat(e.column.saturating_sub(1));
    format!("-Y: {}\n    {expr}\n    {pad}^", e.message)
}
