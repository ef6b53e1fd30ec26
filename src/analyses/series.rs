//! Time buckets of the series (`--interval`, or about 60 over the capture), the sparkline
//! drawn from them, and the order statistics the sections print.

use serde::Serialize;

/// Buckets the series are counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buckets {
    /// Nanoseconds: the first message's time, and each bucket's width.
    pub start: i64,
    pub width: i64,
    pub count: usize,
}

/// Buckets a series is split into when no interval is given.
const DEFAULT_BUCKETS: i64 = 60;
/// Buckets at most, whatever the interval (a 1 ms interval over a day would be 86 million).
const MAX_BUCKETS: i64 = 10_000;

/// The width of about `DEFAULT_BUCKETS` buckets over `span` ns: 1, 2 or 5 times a power of
/// ten milliseconds, at least 1 ms.
fn round_width(span: i64) -> i64 {
    let raw = (span / DEFAULT_BUCKETS).max(1);
    let mut unit = 1_000_000i64;
    loop {
        for m in [1, 2, 5] {
            if unit.saturating_mul(m) >= raw {
                return unit * m;
            }
        }
        unit = unit.saturating_mul(10);
    }
}

impl Buckets {
    pub fn over(span: Option<(i64, i64)>, interval: Option<i64>) -> Buckets {
        let (a, z) = span.unwrap_or((0, 0));
        let len = (z - a).max(0);
        let mut width = interval.unwrap_or_else(|| round_width(len)).max(1);
        if len / width >= MAX_BUCKETS {
            width = len / MAX_BUCKETS + 1;
        }
        Buckets {
            start: a,
            width,
            count: (len / width) as usize + 1,
        }
    }

    /// The bucket of a time (times before the start fall in the first).
    pub fn index(&self, ts: i64) -> usize {
        (((ts - self.start).max(0) / self.width) as usize).min(self.count - 1)
    }

    /// The buckets as the JSON gives them.
    pub fn out(self) -> BucketsOut {
        BucketsOut {
            start_ns: self.start,
            width_ms: self.width as f64 / 1e6,
            buckets: self.count,
        }
    }

    /// The largest value of each bucket, `None` where a bucket has none.
    pub fn max_per_bucket(&self, samples: impl Iterator<Item = (i64, i64)>) -> Vec<Option<i64>> {
        let mut out = vec![None; self.count];
        for (ts, v) in samples {
            let slot = &mut out[self.index(ts)];
            *slot = Some(slot.map_or(v, |m: i64| m.max(v)));
        }
        out
    }

    /// The sum of each bucket.
    pub fn sum_per_bucket(&self, samples: impl Iterator<Item = (i64, i64)>) -> Vec<i64> {
        let mut out = vec![0; self.count];
        for (ts, v) in samples {
            out[self.index(ts)] += v;
        }
        out
    }
}

/// The time buckets of every series (`interval` in the JSON).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BucketsOut {
    /// The first bucket's start: the capture's first message, in ns since 1970.
    pub start_ns: i64,
    /// Each bucket's width in milliseconds.
    pub width_ms: f64,
    /// How many buckets every series has.
    pub buckets: usize,
}

/// How [`Cells`] merges the pairs of one time cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Merge {
    /// The largest values (a chart of the largest per bucket).
    #[default]
    Max,
    /// The sums (a chart of sums per bucket).
    Sum,
}

/// (time, value, value) triples kept for a chart, bounded: past the bound the triples are
/// merged by time cell (the cell doubling at each merge), each cell keeping its largest
/// values or their sums, at the time of its first. A cell is far narrower than a chart's
/// bucket unless the capture is long, and a cell that straddles two buckets counts in the
/// first.
#[derive(Debug, Clone, Default)]
pub struct Cells {
    pub kept: Vec<(i64, i64, i64)>,
    cell: i64,
    how: Merge,
}

impl super::budget::Shrink for Cells {
    fn held(&self) -> usize {
        self.kept.len()
    }

    fn cut(&mut self, cap: usize) {
        self.merge((cap / 2).max(2), self.how);
    }
}

impl Cells {
    /// Adds a triple; past `cap` kept, merges them by time cell.
    pub fn push(&mut self, x: (i64, i64, i64), cap: usize, how: Merge) {
        self.how = how;
        self.kept.push(x);
        if self.kept.len() > cap.max(4) {
            self.merge(cap.max(4) / 2, how);
        }
    }

    fn merge(&mut self, want: usize, how: Merge) {
        self.kept.sort_by_key(|x| x.0);
        let (Some(first), Some(last)) = (self.kept.first(), self.kept.last()) else {
            return;
        };
        let (t0, span) = (first.0, (last.0 - first.0).max(1));
        self.cell = self.cell.max(span / want.max(1) as i64 + 1);
        loop {
            let mut out: Vec<(i64, i64, i64)> = Vec::new();
            let mut cur = i64::MIN;
            for &(ts, a, b) in &self.kept {
                let c = (ts - t0) / self.cell;
                match out.last_mut() {
                    Some(o) if c == cur => match how {
                        Merge::Max => *o = (o.0, o.1.max(a), o.2.max(b)),
                        Merge::Sum => *o = (o.0, o.1 + a, o.2 + b),
                    },
                    _ => {
                        out.push((ts, a, b));
                        cur = c;
                    }
                }
            }
            if out.len() <= want || self.cell >= span {
                self.kept = out;
                return;
            }
            self.cell = self.cell.saturating_mul(2);
        }
    }
}

/// Eight levels, and a dot for a bucket without a value.
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// A terminal sparkline of bucket values, scaled from 0 to the largest.
pub fn sparkline(values: &[Option<i64>]) -> String {
    let top = values.iter().flatten().copied().max().unwrap_or(0).max(1);
    values
        .iter()
        .map(|v| match v {
            None => '·',
            Some(x) => {
                let i = ((*x).max(0) as i128 * 7 / top as i128) as usize;
                BARS[i.min(7)]
            }
        })
        .collect()
}

/// Bars a table's sparkline holds at most: buckets are merged (their largest value kept)
/// until they fit.
pub const SPARK_WIDTH: usize = 30;

/// A sparkline of at most `SPARK_WIDTH` bars.
pub fn sparkline_fit(values: &[Option<i64>]) -> String {
    let per = values.len().div_ceil(SPARK_WIDTH).max(1);
    let merged: Vec<Option<i64>> = values
        .chunks(per)
        .map(|c| c.iter().flatten().copied().max())
        .collect();
    sparkline(&merged)
}

/// Nearest-rank percentile of a sorted list.
pub fn percentile(sorted: &[i64], p: f64) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted.get(rank - 1).copied()
}

/// The lower median (nearest rank 50) of a list.
pub fn median(values: &[i64]) -> Option<i64> {
    let mut v = values.to_vec();
    v.sort_unstable();
    percentile(&v, 50.0)
}

/// Milliseconds with three decimals, as the JSON gives them.
pub fn ms(ns: i64) -> f64 {
    (ns as f64 / 1e3).round() / 1e3
}

/// A duration for a table, as every table writes one: `0.83 ms`, `38.2 ms`, `497 ms`.
pub fn ms_text(ns: i64) -> String {
    crate::text::table::duration_text(ns)
}

/// Seconds since the capture's first message: `12.345 s`.
pub fn at_text(ts: i64, start: i64) -> String {
    format!("{:.3} s", (ts - start) as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn about_sixty_buckets_of_a_round_width() {
        let b = Buckets::over(Some((0, 60_000_000_000)), None);
        assert_eq!(b.width, 1_000_000_000);
        assert_eq!(b.count, 61);
        let b = Buckets::over(Some((5, 5 + 7_000_000_000)), None);
        assert_eq!(b.width, 200_000_000);
        assert_eq!(b.index(5 + 450_000_000), 2);
        let b = Buckets::over(Some((0, 10)), Some(10_000_000_000));
        assert_eq!(b.count, 1);
    }

    #[test]
    fn sparkline_scales_to_the_largest_value() {
        assert_eq!(sparkline(&[Some(0), Some(7), None, Some(14)]), "▁▄·█");
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<i64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), Some(50));
        assert_eq!(percentile(&v, 99.0), Some(99));
        assert_eq!(median(&[5, 1, 3]), Some(3));
        assert_eq!(median(&[]), None);
    }
}
