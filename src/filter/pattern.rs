//! The patterns of `matches`: a small regular-expression subset, matched without
//! backtracking (time proportional to text × pattern, whatever the pattern).
//!
//! Supported: literal characters; `.` (any character); `[abc]`, `[a-z0-9_]`, `[^...]`
//! (classes, negated with `^`); `\d \w \s` and `\D \W \S`; `\` before any other character
//! makes it literal (`\.`, `\*`, `\[`); `*`, `+` and `?` after any of these; `^` at the start
//! and `$` at the end anchor; a leading `(?i)` ignores case. Without `^` and `$` the pattern
//! may match anywhere in the text, as in a regular expression. Groups, alternation and
//! counted repetition (`( ) | { }`) are not supported and are refused, so that a pattern is
//! never silently read another way: escape them to match them literally, and use `||`
//! between two tests for alternation.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Atom {
    Any,
    Char(char),
    /// Ranges (single characters are ranges of one), negated or not.
    Class {
        ranges: Vec<(char, char)>,
        negated: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rep {
    One,
    /// `*`: zero or more.
    Star,
    /// `?`: zero or one.
    Opt,
}

/// A compiled `matches` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    source: String,
    items: Vec<(Atom, Rep)>,
    start: bool,
    end: bool,
    icase: bool,
}

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

fn perr(offset: usize, message: impl Into<String>) -> PatternError {
    PatternError {
        offset,
        message: message.into(),
    }
}

const DIGIT: &[(char, char)] = &[('0', '9')];
const WORD: &[(char, char)] = &[('a', 'z'), ('A', 'Z'), ('0', '9'), ('_', '_')];
const SPACE: &[(char, char)] = &[(' ', ' '), ('\t', '\r')];

/// The class of `\d`, `\w`, `\s` (and negations), or `None` for an escaped literal.
fn escape_class(c: char) -> Option<Atom> {
    let (set, negated) = match c {
        'd' => (DIGIT, false),
        'D' => (DIGIT, true),
        'w' => (WORD, false),
        'W' => (WORD, true),
        's' => (SPACE, false),
        'S' => (SPACE, true),
        _ => return None,
    };
    Some(Atom::Class {
        ranges: set.to_vec(),
        negated,
    })
}

impl Pattern {
    pub fn new(source: &str) -> Result<Pattern, PatternError> {
        let (icase, body, skip) = match source.strip_prefix("(?i)") {
            Some(rest) => (true, rest, 4),
            None => (false, source, 0),
        };
        let chars: Vec<char> = body.chars().collect();
        let mut p = Pattern {
            source: source.to_string(),
            items: Vec::new(),
            start: false,
            end: false,
            icase,
        };
        let mut i = 0;
        if chars.first() == Some(&'^') {
            p.start = true;
            i = 1;
        }
        while let Some(&c) = chars.get(i) {
            let at = i + skip;
            let (atom, next) = match c {
                '$' if i + 1 == chars.len() => {
                    p.end = true;
                    break;
                }
                '$' | '^' => return Err(perr(at, format!("`{c}` anchors only at the end (`$`) or start (`^`); write `\\{c}` for the character"))),
                '(' | ')' | '|' | '{' | '}' => return Err(perr(at, format!("`{c}`: groups, alternation and counted repetition are not supported; write `\\{c}` for the character, `||` between tests for alternation"))),
                '*' | '+' | '?' => return Err(perr(at, format!("`{c}` repeats nothing"))),
                '.' => (Atom::Any, i + 1),
                '[' => class(&chars, i, skip)?,
                '\\' => match chars.get(i + 1) {
                    None => return Err(perr(at, "`\\` at the end of the pattern")),
                    Some(&e) => (escape_class(e).unwrap_or(Atom::Char(e)), i + 2),
                },
                c => (Atom::Char(c), i + 1),
            };
            i = next;
            let rep = match chars.get(i) {
                Some('*') => Rep::Star,
                Some('?') => Rep::Opt,
                Some('+') => {
                    // `a+` is `aa*`.
                    p.items.push((atom.clone(), Rep::One));
                    Rep::Star
                }
                _ => Rep::One,
            };
            if rep != Rep::One {
                i += 1;
            }
            p.items.push((atom, rep));
        }
        Ok(p)
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }

    fn atom_matches(&self, a: &Atom, c: char) -> bool {
        let same =
            |x: char, y: char| x == y || (self.icase && x.to_lowercase().eq(y.to_lowercase()));
        match a {
            Atom::Any => true,
            Atom::Char(x) => same(*x, c),
            Atom::Class { ranges, negated } => {
                let lower: Vec<char> = c.to_lowercase().collect();
                let upper: Vec<char> = c.to_uppercase().collect();
                let in_range = |ch: char| ranges.iter().any(|(lo, hi)| *lo <= ch && ch <= *hi);
                let hit = in_range(c)
                    || (self.icase && lower.iter().chain(upper.iter()).any(|&ch| in_range(ch)));
                hit != *negated
            }
        }
    }

    /// Adds the states reachable without reading: past `*` and `?` items.
    fn close(&self, states: &mut [bool]) {
        for (s, (_, rep)) in self.items.iter().enumerate() {
            if *rep != Rep::One && states.get(s).copied().unwrap_or(false) {
                if let Some(next) = states.get_mut(s + 1) {
                    *next = true;
                }
            }
        }
    }

    /// Whether the pattern matches `text` (anywhere, unless anchored).
    pub fn is_match(&self, text: &str) -> bool {
        let n = self.items.len();
        // states[s]: the first s items have matched the text read so far.
        let mut states = vec![false; n + 1];
        let accepted = |states: &[bool]| states.get(n).copied().unwrap_or(false);
        if let Some(s) = states.first_mut() {
            *s = true;
        }
        self.close(&mut states);
        if accepted(&states) && !self.end {
            return true;
        }
        for c in text.chars() {
            let mut next = vec![false; n + 1];
            for (s, (atom, rep)) in self.items.iter().enumerate() {
                if !states.get(s).copied().unwrap_or(false) || !self.atom_matches(atom, c) {
                    continue;
                }
                let to = if *rep == Rep::Star { s } else { s + 1 };
                if let Some(t) = next.get_mut(to) {
                    *t = true;
                }
            }
            if !self.start {
                if let Some(s) = next.first_mut() {
                    *s = true;
                }
            }
            self.close(&mut next);
            if accepted(&next) && !self.end {
                return true;
            }
            states = next;
        }
        accepted(&states)
    }
}

/// `[...]` starting at `i`: the class and the index after `]`.
fn class(chars: &[char], i: usize, skip: usize) -> Result<(Atom, usize), PatternError> {
    let mut j = i + 1;
    let negated = chars.get(j) == Some(&'^');
    if negated {
        j += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let c = match chars.get(j) {
            None => return Err(perr(i + skip, "`[` is not closed by `]`")),
            Some(']') if !first => return Ok((Atom::Class { ranges, negated }, j + 1)),
            Some('\\') => {
                let e = *chars
                    .get(j + 1)
                    .ok_or_else(|| perr(j + skip, "`\\` at the end of the pattern"))?;
                j += 2;
                if let Some(Atom::Class {
                    ranges: r,
                    negated: false,
                }) = escape_class(e)
                {
                    ranges.extend(r);
                    first = false;
                    continue;
                }
                e
            }
            Some(&c) => {
                j += 1;
                c
            }
        };
        first = false;
        // `a-z`, unless `-` is last (`[a-]` holds `a` and `-`).
        match (chars.get(j), chars.get(j + 1)) {
            (Some('-'), Some(&hi)) if hi != ']' => {
                if hi < c {
                    return Err(perr(j + skip, format!("range `{c}-{hi}` is backwards")));
                }
                ranges.push((c, hi));
                j += 2;
            }
            _ => ranges.push((c, c)),
        }
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
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
    fn no_blowup_on_nested_stars() {
        let text = "a".repeat(5000);
        assert!(!m(&format!("{}b", "a*".repeat(50)), &text));
    }

    #[test]
    fn refused_syntax_says_where() {
        for (p, at) in [
            ("a(b", 1),
            ("a|b", 1),
            ("x{2}", 1),
            ("*a", 0),
            ("[ab", 0),
            ("a\\", 1),
            ("a^", 1),
            ("a$b", 1),
            ("[z-a]", 2),
            ("(?i)*", 4),
        ] {
            let e = Pattern::new(p).unwrap_err();
            assert_eq!(e.offset, at, "{p}: {e:?}");
        }
    }
}
