//! `--since` and `--until`: a window of capture time that messages must fall in, each judged
//! by the time of the packet that completed it.

use super::literal;
use std::fmt;
use std::str::FromStr;

/// One end of the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeBound {
    /// An absolute time, nanoseconds since 1970 (UTC).
    At(i64),
    /// A time after the first packet of each input, in nanoseconds (as `-t r` counts).
    AfterStart(i64),
}

impl TimeBound {
    /// The bound as a time, for an input whose first packet came at `origin`.
    fn resolve(self, origin: Option<i64>) -> Option<i64> {
        match self {
            TimeBound::At(t) => Some(t),
            TimeBound::AfterStart(d) => origin.map(|o| o.saturating_add(d)),
        }
    }
}

impl FromStr for TimeBound {
    type Err = String;

    /// Seconds (`30`, `2.5`) or a duration (`90s`, `2m`), optionally after `+`: after the
    /// first packet. Anything else is an absolute time, in the forms the `time` field takes
    /// (`@SECONDS` for seconds since 1970).
    fn from_str(s: &str) -> Result<TimeBound, String> {
        let t = s.trim();
        let rel = t.strip_prefix('+').unwrap_or(t);
        if let Some(r) = literal::duration(rel) {
            return r.map(TimeBound::AfterStart);
        }
        if let Some(n) = literal::seconds(rel) {
            return Ok(TimeBound::AfterStart(n));
        }
        literal::time(t).map(TimeBound::At).ok_or_else(|| {
            format!(
                "{s:?} is not a time: seconds or a duration after the first packet (30, 2.5, 90s, 2m), or a time ({})",
                literal::TIME_FORMS
            )
        })
    }
}

/// The bound in a form `--since` reads back: seconds after the first packet (`5`, `2.5`), or
/// a time in RFC 3339, UTC.
impl fmt::Display for TimeBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            TimeBound::At(t) => f.write_str(&utc(t)),
            TimeBound::AfterStart(d) => {
                let (s, ns) = (d.div_euclid(1_000_000_000), d.rem_euclid(1_000_000_000));
                let frac = format!("{ns:09}");
                let frac = frac.trim_end_matches('0');
                if frac.is_empty() {
                    write!(f, "{s}")
                } else {
                    write!(f, "{s}.{frac}")
                }
            }
        }
    }
}

/// RFC 3339 in UTC, without the fraction's trailing zeros: `2026-11-30T12:00:00Z`.
fn utc(t: i64) -> String {
    let full = crate::text::time::rfc3339(t);
    let Some((head, frac)) = full.strip_suffix('Z').and_then(|x| x.split_once('.')) else {
        return full;
    };
    match frac.trim_end_matches('0') {
        "" => format!("{head}Z"),
        f => format!("{head}.{f}Z"),
    }
}

/// `--since` (inclusive) to `--until` (exclusive), as editcap's `-A` and `-B`: two windows
/// that meet do not overlap.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    pub since: Option<TimeBound>,
    pub until: Option<TimeBound>,
}

impl Window {
    /// Whether any bound is given.
    pub fn active(&self) -> bool {
        self.since.is_some() || self.until.is_some()
    }

    /// Why no message can fall in the window, naming both bounds: `--until` is not after
    /// `--since`. Bounds of one kind are compared as they are; a relative and an absolute one
    /// only with `origin`, the first packet's time of the input they apply to.
    pub fn empty(&self, origin: Option<i64>) -> Option<String> {
        let (since, until) = (self.since?, self.until?);
        let (from, to) = match (since, until) {
            (TimeBound::AfterStart(a), TimeBound::AfterStart(b))
            | (TimeBound::At(a), TimeBound::At(b)) => (a, b),
            _ => (since.resolve(origin)?, until.resolve(origin)?),
        };
        let start = match (since, until) {
            (TimeBound::At(_), TimeBound::AfterStart(_))
            | (TimeBound::AfterStart(_), TimeBound::At(_)) => origin
                .map(|o| format!(" for an input that starts at {}", utc(o)))
                .unwrap_or_default(),
            _ => String::new(),
        };
        (from >= to).then(|| {
            format!("--since {since} --until {until} leave no time between them{start}: nothing would be shown (--since is inclusive, --until exclusive: --until must come after --since)")
        })
    }

    /// Whether a message completed at `ts` is in the window; `origin` is the time of its
    /// input's first packet (a relative bound without one holds).
    pub fn contains(&self, ts: i64, origin: Option<i64>) -> bool {
        let after = self
            .since
            .and_then(|b| b.resolve(origin))
            .is_none_or(|t| ts >= t);
        let before = self
            .until
            .and_then(|b| b.resolve(origin))
            .is_none_or(|t| ts < t);
        after && before
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    #[test]
    fn relative_and_absolute_bounds() {
        let p = |s: &str| s.parse::<TimeBound>().unwrap();
        assert_eq!(p("30"), TimeBound::AfterStart(30 * S));
        assert_eq!(p("+2.5"), TimeBound::AfterStart(2 * S + S / 2));
        assert_eq!(p("90s"), TimeBound::AfterStart(90 * S));
        assert_eq!(p("+2m"), TimeBound::AfterStart(120 * S));
        assert_eq!(p("@1796040000"), TimeBound::At(1_796_040_000 * S));
        assert_eq!(p("2026-11-30T12:00:00Z"), TimeBound::At(1_796_040_000 * S));
        let e = "noon".parse::<TimeBound>().unwrap_err();
        assert!(e.contains("is not a time"), "{e}");
    }

    #[test]
    fn since_is_inclusive_and_until_exclusive() {
        let w = Window {
            since: Some(TimeBound::AfterStart(S)),
            until: Some(TimeBound::At(100 * S + 3 * S)),
        };
        let origin = Some(100 * S);
        assert!(!w.contains(100 * S, origin));
        assert!(w.contains(101 * S, origin));
        assert!(w.contains(103 * S - 1, origin));
        assert!(!w.contains(103 * S, origin));
        assert!(Window::default().contains(0, None));
        assert!(!Window::default().active() && w.active());
    }

    #[test]
    fn an_empty_window_says_so_with_both_bounds() {
        let w = |a: &str, b: &str| Window {
            since: Some(a.parse().unwrap()),
            until: Some(b.parse().unwrap()),
        };
        let e = w("5", "2").empty(None).unwrap();
        assert!(
            e.starts_with("--since 5 --until 2 leave no time between them: "),
            "{e}"
        );
        assert!(w("+2.5", "2500ms").empty(None).is_some());
        assert!(w("2", "5").empty(None).is_none());
        let e = w("2026-11-30T12:00:01Z", "@1796040000")
            .empty(None)
            .unwrap();
        assert!(
            e.starts_with("--since 2026-11-30T12:00:01Z --until 2026-11-30T12:00:00Z leave"),
            "{e}"
        );
        // One relative and one absolute bound: known once the input's start is.
        let mixed = w("10", "2026-11-30T12:00:05Z");
        assert!(mixed.empty(None).is_none());
        let origin = 1_796_040_000 * S;
        let e = mixed.empty(Some(origin)).unwrap();
        assert!(
            e.contains("for an input that starts at 2026-11-30T12:00:00Z"),
            "{e}"
        );
        assert!(mixed.empty(Some(origin - 10 * S)).is_none());
        assert!(Window::default().empty(Some(0)).is_none());
        assert_eq!(TimeBound::AfterStart(2 * S + 5 * S / 10).to_string(), "2.5");
        assert_eq!(TimeBound::AfterStart(90 * S).to_string(), "90");
    }
}
