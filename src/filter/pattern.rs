//! The patterns of `matches`: regular expressions in the syntax of the `regex` crate (which
//! is Perl's and PCRE's for everything a filter needs: classes, groups, alternation, counted
//! repetition, `(?i)`), matched in time linear in the text whatever the pattern, and refused
//! when they compile to more than [`SIZE_LIMIT`] bytes, so that a filter can cost neither
//! unbounded time nor unbounded memory. A filter's patterns together are held to
//! [`TOTAL_LIMIT`] by a [`Budget`].
//!
//! They are built with `regex_automata::meta`, the engine `regex::Regex` wraps, configured as
//! `regex::RegexBuilder` configures it: the same syntax and matches, and the one thing
//! `regex` does not expose, the compiled pattern's memory, which the budget counts.

use regex_automata::meta::{self, Regex};
use regex_automata::util::syntax;
use regex_automata::MatchKind;
use std::fmt;
use std::sync::Arc;

/// Largest compiled form of one pattern, in bytes (the `regex` crate's own measure). Real
/// patterns are a few KiB; `\w{1000}` is about 5 MiB, since `\w` is every Unicode letter.
pub const SIZE_LIMIT: usize = 1 << 20;

/// Memory the lazy DFA of one pattern may grow to while it matches: the cache it builds
/// its states in (cleared and rebuilt when full), and what [`Budget`] charges each pattern
/// beside its compiled form. A filter's pattern reaches a few hundred states at most.
pub const CACHE_LIMIT: usize = 256 << 10;

/// Memory all the patterns of one filter may take together, compiled forms and caches: 1,000
/// patterns just under [`SIZE_LIMIT`] would otherwise take over a GiB.
pub const TOTAL_LIMIT: usize = 32 << 20;

/// A compiled `matches` pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    regex: Regex,
    source: Arc<str>,
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Pattern) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Pattern {}

/// Where a pattern is wrong: the character offset in the pattern, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    pub offset: usize,
    pub message: String,
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at character {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for PatternError {}

impl Pattern {
    /// Checks the syntax first (for an error with its place), then compiles within
    /// [`SIZE_LIMIT`].
    pub fn new(source: &str) -> Result<Pattern, PatternError> {
        syntax_check(source)?;
        let config = meta::Config::new()
            .match_kind(MatchKind::LeftmostFirst)
            .utf8_empty(true)
            .nfa_size_limit(Some(SIZE_LIMIT))
            .hybrid_cache_capacity(CACHE_LIMIT);
        let regex = meta::Builder::new()
            .configure(config)
            .syntax(syntax::Config::new().utf8(true))
            .build(source)
            .map_err(|e| compile_error(source, &e))?;
        Ok(Pattern {
            regex,
            source: Arc::from(source),
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the pattern matches anywhere in the text (anchor it with `^` and `$`).
    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }

    /// Bytes the pattern may take: its compiled form, and the cache its lazy DFA may grow.
    pub fn memory(&self) -> usize {
        self.regex.memory_usage() + CACHE_LIMIT
    }
}

/// What is left of [`TOTAL_LIMIT`] for a filter's patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    used: usize,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::new()
    }
}

impl Budget {
    pub const fn new() -> Budget {
        Budget { used: 0 }
    }

    /// Counts a pattern the filter keeps; an error, naming it, when it brings the patterns
    /// past [`TOTAL_LIMIT`].
    pub fn charge(&mut self, p: &Pattern) -> Result<(), PatternError> {
        let used = self.used.saturating_add(p.memory());
        if used > TOTAL_LIMIT {
            return Err(PatternError {
                offset: 0,
                message: format!(
                    "`{}` brings the filter's patterns to more than {} MiB together, the limit for all of them (each takes what it compiles to, and {} KiB for matching): join patterns into one with `|`, or use `contains` or `==`",
                    p.as_str(),
                    TOTAL_LIMIT >> 20,
                    CACHE_LIMIT >> 10
                ),
            });
        }
        self.used = used;
        Ok(())
    }

    /// Bytes counted so far.
    pub fn used(&self) -> usize {
        self.used
    }
}

/// A syntax error, with the character where it is.
fn syntax_check(source: &str) -> Result<(), PatternError> {
    let (at, message) = match regex_syntax::Parser::new().parse(source) {
        Ok(_) => return Ok(()),
        Err(regex_syntax::Error::Parse(e)) => (e.span().start.offset, e.kind().to_string()),
        Err(regex_syntax::Error::Translate(e)) => (e.span().start.offset, e.kind().to_string()),
        Err(other) => (0, other.to_string()),
    };
    let offset = source.get(..at).map_or(0, |s| s.chars().count());
    Err(PatternError { offset, message })
}

/// An error of compilation once the syntax is right: in practice, a pattern too large.
fn compile_error(source: &str, e: &meta::BuildError) -> PatternError {
    let message = match e.size_limit() {
        Some(limit) => format!(
            "`{source}` compiles to more than {} KiB, the limit for one pattern: write a smaller one (fewer or smaller counted repetitions)",
            limit / 1024
        ),
        None => e.to_string(),
    };
    PatternError { offset: 0, message }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn m(p: &str, t: &str) -> bool {
        Pattern::new(p).unwrap().is_match(t)
    }

    #[test]
    fn literals_and_anchors() {
        assert!(m("LEAD", "NOT_LEADER"));
        assert!(!m("lead", "NOT_LEADER"));
        assert!(!m("LEADER", "NOT_LEADE"));
        assert!(m("(?i)lead", "NOT_LEADER"));
        assert!(m("^NOT_", "NOT_LEADER"));
        assert!(!m("^LEADER", "NOT_LEADER"));
        assert!(m("LEADER$", "NOT_LEADER"));
        assert!(!m("NOT$", "NOT_LEADER"));
        assert!(m("^NOT_LEADER$", "NOT_LEADER"));
        assert!(!m("^NOT_LEADER$", "NOT_LEADERS"));
        assert!(m("", "anything"));
        assert!(m("^$", ""));
        assert!(!m("^$", "x"));
    }

    #[test]
    fn dots_stars_and_classes() {
        assert!(m("^a.c$", "abc"));
        assert!(!m("^a.c$", "ac"));
        assert!(m("^a.*c$", "ac"));
        assert!(m("^a.*c$", "abbbbc"));
        assert!(m("^ab+c$", "abbc"));
        assert!(!m("^ab+c$", "ac"));
        assert!(m("^ab?c$", "ac"));
        assert!(!m("^ab?c$", "abbc"));
        assert!(m("^orders-[0-9]+$", "orders-12"));
        assert!(!m("^orders-[0-9]+$", "orders-1a"));
        assert!(m("^[^.]+$", "abc"));
        assert!(!m("^[^.]+$", "a.c"));
        assert!(m("^[a-]+$", "a-a"));
        assert!(m("^[]x]$", "]"));
        assert!(m(r"^a\.b$", "a.b"));
        assert!(!m(r"^a\.b$", "axb"));
        assert!(m(r"^\d+\s\w+$", "12 ab_c"));
        assert!(m(r"^[\d]+$", "12"));
        assert!(m("(?i)^[a-c]+$", "ABC"));
        assert!(m("é.", "café!"));
    }

    #[test]
    fn groups_alternation_and_counted_repetition() {
        assert!(m("^(orders|payments)-", "payments-eu"));
        assert!(m("^(orders|payments)-", "orders-1"));
        assert!(!m("^(orders|payments)-", "audit-orders-1"));
        assert!(m(r"^v[0-9]{2,3}$", "v123"));
        assert!(!m(r"^v[0-9]{2,3}$", "v1"));
        assert!(!m(r"^v[0-9]{2,3}$", "v1234"));
        assert!(m("^(?:ab)+$", "ababab"));
        assert!(m(r"^\(x\)$", "(x)"));
    }

    #[test]
    fn no_blowup_on_nested_stars() {
        let text = "a".repeat(5000);
        assert!(!m(&format!("{}b", "a*".repeat(50)), &text));
        assert!(!m("^(a+)+$", &format!("{}!", "a".repeat(5000))));
    }

    #[test]
    fn bad_syntax_says_where() {
        for (p, at) in [
            ("a(b", 1),
            ("x{2", 1),
            ("*a", 0),
            ("[ab", 0),
            ("a\\", 1),
            ("[z-a]", 1),
            ("é(?i)*", 5),
            ("(?<n>a)\\k<n>", 7),
        ] {
            let e = Pattern::new(p).unwrap_err();
            assert_eq!(e.offset, at, "{p}: {e:?}");
        }
    }

    #[test]
    fn a_pattern_too_large_is_refused_with_the_limit() {
        let e = Pattern::new(r"\w{1000}").unwrap_err();
        assert_eq!(
            e.message,
            "`\\w{1000}` compiles to more than 1024 KiB, the limit for one pattern: write a smaller one (fewer or smaller counted repetitions)"
        );
        assert!(Pattern::new(r"[a-z]{1000}").is_ok());
    }

    #[test]
    fn the_budget_refuses_the_pattern_that_passes_it() {
        // Close to the limit for one pattern: about 820 KiB counted (its matcher's cache
        // included); 40 of them measured 28 MiB of resident memory, compiled and used once.
        let near = Pattern::new(r"[a-z]{12000}").unwrap();
        assert!(near.memory() > 768 << 10, "{}", near.memory());
        let mut b = Budget::new();
        let mut kept = 0;
        let err = loop {
            match b.charge(&near) {
                Ok(()) => kept += 1,
                Err(e) => break e,
            }
            assert!(kept < 1000, "never refused");
        };
        assert!(b.used() <= TOTAL_LIMIT);
        assert!(kept >= 30 && kept * near.memory() <= TOTAL_LIMIT, "{kept}");
        assert!(
            err.message.starts_with(
                "`[a-z]{12000}` brings the filter's patterns to more than 32 MiB together"
            ),
            "{}",
            err.message
        );
        // Small patterns cost about their cache alone: a filter may hold a hundred.
        let small = Pattern::new("^orders-[0-9]+$").unwrap();
        let mut b = Budget::new();
        for _ in 0..100 {
            b.charge(&small).unwrap();
        }
    }
}
