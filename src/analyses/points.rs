//! A lag series' samples, bounded. Every sample is kept until the series holds its bound;
//! then the older samples (all but the last [`TAIL`], which Burrow's window of 10 commits
//! reads) are merged by time cell, each cell keeping its sample of the lowest lag (the last
//! at that lag) and its sample of the highest (the first), in time order, so that a chart
//! keeps its peaks and troughs, and "growing since" its turning points. The cell doubles at
//! each merge, so a sample is merged O(log n) times. The count, smallest, largest and last
//! lag stay exact.

use super::budget::Shrink;
use super::lag::Sample;

/// Samples never merged: the newest, which Burrow's status reads (its window is 10).
pub const TAIL: usize = 12;

#[derive(Debug, Clone, Default)]
pub struct Points {
    /// Kept samples, in time order.
    pub kept: Vec<Sample>,
    /// Samples added in all.
    pub count: u64,
    /// The width of the cells the older samples were merged in (ns); 0 before any merge.
    cell: i64,
}

impl Points {
    /// Adds a sample (in time order); [`Shrink::cut`] keeps the series within its share.
    pub fn add(&mut self, s: Sample) {
        self.count += 1;
        self.kept.push(s);
    }

    /// Samples merged away.
    pub fn merged(&self) -> u64 {
        self.count - self.kept.len() as u64
    }

    /// Merges the samples before the tail in cells of growing width until the whole holds
    /// at most `want`.
    fn merge(&mut self, want: usize) {
        let head_len = self.kept.len().saturating_sub(TAIL);
        let (Some(first), Some(last)) = (self.kept.first(), self.kept.get(head_len.max(1) - 1))
        else {
            return;
        };
        let (t0, span) = (first.ts, (last.ts - first.ts).max(1));
        let cells = (want.saturating_sub(TAIL) / 2).max(1) as i64;
        self.cell = self.cell.max(span / cells + 1);
        loop {
            let head = cells_of(&self.kept[..head_len], t0, self.cell);
            if head.len() + TAIL <= want || self.cell >= span {
                let tail = self.kept.split_off(head_len);
                self.kept = head;
                self.kept.extend(tail);
                return;
            }
            self.cell = self.cell.saturating_mul(2);
        }
    }
}

impl Shrink for Points {
    fn held(&self) -> usize {
        self.kept.len()
    }

    /// Merges the older samples until the series holds at most `cap / 2` (and never fewer
    /// than the tail and a few cells).
    fn cut(&mut self, cap: usize) {
        self.merge((cap / 2).max(TAIL + 4));
    }
}

/// Each cell's lowest sample (the last at that lag) and highest (the first), in time order.
fn cells_of(s: &[Sample], t0: i64, cell: i64) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let c = (s[i].ts - t0) / cell;
        let mut j = i;
        let (mut lo, mut hi) = (i, i);
        while j < s.len() && (s[j].ts - t0) / cell == c {
            if s[j].lag <= s[lo].lag {
                lo = j;
            }
            if s[j].lag > s[hi].lag {
                hi = j;
            }
            j += 1;
        }
        let (a, b) = (lo.min(hi), lo.max(hi));
        out.push(s[a]);
        if b != a {
            out.push(s[b]);
        }
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(i: i64, lag: i64) -> Sample {
        Sample {
            ts: i * 1_000,
            frame: i as u64,
            lag,
            offset: 0,
            log_end: lag,
            from: 0,
        }
    }

    #[test]
    fn bounded_with_the_peak_the_trough_the_tail_and_exact_count() {
        let mut p = Points::default();
        let n = 100_000i64;
        for i in 0..n {
            // Down to 0 at 30 000, up to a peak of 70 000 at 70 000, down again.
            let lag = if i < 30_000 {
                30_000 - i
            } else if i < 70_000 {
                i - 30_000
            } else {
                n - i
            };
            p.add(sample(i, lag));
            if p.held() > 256 {
                p.cut(256);
            }
        }
        assert!(p.kept.len() <= 256, "{}", p.kept.len());
        assert_eq!(p.count, n as u64);
        assert!(p.kept.windows(2).all(|w| w[0].ts <= w[1].ts));
        assert!(p.kept.iter().any(|s| s.lag == 39_999));
        assert!(p.kept.iter().any(|s| s.lag == 0 && s.frame == 30_000));
        let tail: Vec<u64> = p.kept[p.kept.len() - TAIL..]
            .iter()
            .map(|s| s.frame)
            .collect();
        let want: Vec<u64> = ((n as u64 - TAIL as u64)..n as u64).collect();
        assert_eq!(tail, want);
    }
}
