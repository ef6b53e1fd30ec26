//! `kdissect help filters`: the filter language and every field, written from the tables the
//! filter itself reads (the built-ins, Wireshark's names), so the help cannot drift from what
//! compiles. The manual page takes the same text.

use super::alias::{describe, ALIASES};
use super::fields::Builtin;
use super::pattern::{SIZE_LIMIT, TOTAL_LIMIT};

/// The language, in a few lines.
const LANGUAGE: &str = "\
A display filter (-Y EXPR) keeps the exchanges where the request or the response matches;
with --messages, the single messages that match. The same names choose the fields of
--fields, -T fields and -T ek (-e FIELD).

  FIELD OP VALUE   compare: == != < <= > >= (eq ne lt le gt ge), contains, matches
  FIELD in {A B C..D}  any value is one of the set's, or in a range (both ends included);
                   commas or spaces between members; `not in` is its negation
  FIELD            the field is there and true (a number not 0, a string not null)
  kafka            every Kafka message (tshark's -Y kafka)
  A && B, A and B  both;   A || B, A or B  either;   !A, not A  not;   ( A )  grouping

! binds tightest, then &&, then ||. A field with several values (a path through arrays,
topic, partition, error) matches when any value does: `partition != 0` holds for a
message naming partitions 0 and 1; `!(partition == 0)` says none is 0.

Values: 42, -1, 0x1f; durations 50ms, 300us, 1.5s, 2m; UUIDs; \"text\" or 'text'; bare
words (Metadata, NOT_LEADER_OR_FOLLOWER, orders, 127.0.0.1:9092); true, false. API and
error names are matched ignoring case and separators (describe-cluster). Times:
2026-11-30T12:00:00Z, \"2026-11-30 12:00:00\" (local), @1796040000 (seconds since 1970).
";

/// The schema paths, and `matches`.
fn paths_and_patterns() -> String {
    format!(
        "\
Schema fields: the API, then field names down the body, checked against Kafka's message
tables when the filter is compiled: Metadata.Topics[*].Partitions[*].ErrorCode,
Produce.Acks, ApiVersions.ApiKeys[3].MaxVersion. [*] is any element, [N] element N; an
array without brackets means any element. A struct or array of structs is tested bare.
`kdissect example API -V` shows an API's fields.

matches takes a regular expression (Rust's regex syntax: classes, groups, alternation,
{{n,m}}, (?i)), matched in linear time; a pattern compiling to more than {} KiB is
refused, and a filter's patterns share {} MiB: topic matches \"^(orders|payments)-\".
",
        SIZE_LIMIT / 1024,
        TOTAL_LIMIT >> 20
    )
}

/// The built-in fields: name, type, meaning.
pub fn builtin_rows() -> Vec<(&'static str, &'static str, &'static str)> {
    Builtin::ALL
        .iter()
        .map(|b| (b.name(), b.kind().short(), b.about()))
        .collect()
}

/// Wireshark's names: name, what it stands for.
pub fn alias_rows() -> Vec<(&'static str, String)> {
    ALIASES.iter().map(|a| (a.name, describe(a))).collect()
}

/// The whole help, as `kdissect help filters` prints it.
pub fn help_text() -> String {
    let mut out = String::from(LANGUAGE);
    out.push_str("\nBuilt-in fields:\n");
    let width = Builtin::ALL
        .iter()
        .map(|b| b.name().len())
        .max()
        .unwrap_or(0);
    let kinds = builtin_rows().iter().map(|r| r.1.len()).max().unwrap_or(0);
    for (name, kind, about) in builtin_rows() {
        out.push_str(&format!("  {name:<width$}  {kind:<kinds$}  {about}\n"));
    }
    out.push('\n');
    out.push_str(&paths_and_patterns());
    out.push_str("\nWireshark's names (tshark's fields that have a kdissect equivalent):\n");
    let width = ALIASES.iter().map(|a| a.name.len()).max().unwrap_or(0);
    for (name, means) in alias_rows() {
        out.push_str(&format!("  {name:<width$}  {means}\n"));
    }
    out
}

/// The same, for the manual page (roff).
pub fn man_section() -> String {
    let mut out = String::from(".SH \"DISPLAY FILTERS\"\n");
    for para in LANGUAGE.split("\n\n") {
        out.push_str(".PP\n.nf\n");
        out.push_str(&roff(para.trim_end()));
        out.push_str("\n.fi\n");
    }
    out.push_str(".SS \"Built-in fields\"\n");
    for (name, kind, about) in builtin_rows() {
        out.push_str(&format!(
            ".TP\n\\fB{}\\fR ({})\n{}\n",
            roff(name),
            roff(kind),
            roff(about)
        ));
    }
    out.push_str(".SS \"Schema fields and patterns\"\n");
    for para in paths_and_patterns().split("\n\n") {
        out.push_str(&format!(".PP\n{}\n", roff(para.trim_end())));
    }
    out.push_str(".SS \"Wireshark's names\"\n");
    for (name, means) in alias_rows() {
        out.push_str(&format!(".TP\n\\fB{}\\fR\n{}\n", roff(name), roff(&means)));
    }
    out
}

/// Text made safe for roff: backslashes doubled, hyphens as `\-`, no line starting with a
/// dot or quote.
fn roff(s: &str) -> String {
    let body = s.replace('\\', "\\e").replace('-', "\\-");
    body.lines()
        .map(|l| {
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::filter::Filter;

    /// Every field the help lists compiles as a filter: the help and the language agree.
    #[test]
    fn every_listed_field_is_a_field() {
        let text = help_text();
        for b in Builtin::ALL {
            assert!(text.contains(&format!("  {} ", b.name())), "{b}");
            Filter::compile(b.name()).unwrap();
        }
        for a in ALIASES {
            assert!(text.contains(&format!("  {} ", a.name)), "{}", a.name);
            Filter::compile(a.name).unwrap_or_else(|e| panic!("{}: {e}", a.name));
        }
        assert!(text.contains("  time_relative   seconds     that time since"));
        assert!(text.contains("kafka.api_key"));
    }

    #[test]
    fn the_manual_section_is_roff() {
        let m = man_section();
        assert!(m.starts_with(".SH \"DISPLAY FILTERS\""));
        assert!(m.contains(".TP\n\\fBkafka.api_key\\fR\n`api`"));
        assert!(m.lines().all(|l| !l.starts_with('.')
            || l.starts_with(".SH")
            || l.starts_with(".SS")
            || l.starts_with(".TP")
            || l.starts_with(".PP")
            || l.starts_with(".nf")
            || l.starts_with(".fi")));
    }
}
