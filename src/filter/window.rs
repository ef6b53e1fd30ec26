//! `--since` and `--until`: a window of capture time that messages must fall in, each judged
//! by the time of the packet that completed it.

use super::literal;
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
}
