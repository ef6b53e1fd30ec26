//! Latencies counted with their weight: the records of one batch delivered by one response
//! share one latency, kept once with their number. A list holds its values exactly up to a
//! bound; past it, values are rounded to fewer significant bits (first 10, about 0.1 %, then
//! fewer as needed) and equal ones merged, so that memory stays bounded whatever the capture
//! and the percentiles stay within the rounding's relative error. The count and the largest
//! value stay exact.

use super::budget::Shrink;

/// Significant bits kept by the first rounding, and the fewest ever kept (6 % apart).
const FIRST_BITS: u32 = 10;
const LEAST_BITS: u32 = 4;

#[derive(Debug, Clone, Default)]
pub struct Weighted {
    /// (value, how many) in the order added, or sorted and merged after a rounding.
    vals: Vec<(i64, u64)>,
    /// Every value counted.
    pub count: u64,
    /// The largest value, exact.
    pub max: Option<i64>,
    /// Significant bits values were rounded to; 0 while exact.
    pub bits: u32,
}

/// `v` with only its `bits` most significant bits kept (rounded down); 0 and negative values
/// are kept as they are.
fn round(v: i64, bits: u32) -> i64 {
    if v <= 0 {
        return v;
    }
    let len = 64 - v.leading_zeros();
    let shift = len.saturating_sub(bits);
    (v >> shift) << shift
}

impl Weighted {
    /// Adds `n` values of `v`; [`Shrink::cut`] keeps the list within its share. Once at
    /// the fewest bits the list is kept sorted and merged as values come, so that it never
    /// needs cutting again.
    pub fn push(&mut self, v: i64, n: u64) {
        if n == 0 {
            return;
        }
        self.count += n;
        self.max = Some(self.max.map_or(v, |m| m.max(v)));
        let v = if self.bits > 0 {
            round(v, self.bits)
        } else {
            v
        };
        if self.bits == LEAST_BITS {
            match self.vals.binary_search_by_key(&v, |e| e.0) {
                Ok(i) => self.vals[i].1 += n,
                Err(i) => self.vals.insert(i, (v, n)),
            }
            return;
        }
        match self.vals.last_mut() {
            Some(last) if last.0 == v => last.1 += n,
            _ => self.vals.push((v, n)),
        }
    }

    /// [`Weighted::push`], then cut to `cap` entries when past it.
    pub fn add(&mut self, v: i64, n: u64, cap: usize) {
        self.push(v, n);
        if self.vals.len() > cap.max(2) {
            self.cut(cap.max(2));
        }
    }

    /// Entries held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.vals.len()
    }

    /// Rounds to fewer bits until at most `want` entries remain (or the fewest bits are
    /// reached).
    fn shrink(&mut self, want: usize) {
        let mut bits = if self.bits == 0 {
            FIRST_BITS
        } else {
            self.bits.saturating_sub(1).max(LEAST_BITS)
        };
        loop {
            for e in self.vals.iter_mut() {
                e.0 = round(e.0, bits);
            }
            self.merge();
            self.bits = bits;
            if self.vals.len() <= want || bits <= LEAST_BITS {
                return;
            }
            bits -= 1;
        }
    }

    /// Sorts and merges equal values.
    fn merge(&mut self) {
        self.vals.sort_unstable_by_key(|e| e.0);
        let mut out: Vec<(i64, u64)> = Vec::with_capacity(self.vals.len());
        for &(v, n) in &self.vals {
            match out.last_mut() {
                Some(last) if last.0 == v => last.1 += n,
                _ => out.push((v, n)),
            }
        }
        self.vals = out;
    }

    /// Adds another list's values.
    pub fn absorb(&mut self, o: &Weighted, cap: usize) {
        // The other list's values were rounded more: round these as much first.
        if o.bits > 0 && (self.bits == 0 || o.bits < self.bits) {
            self.bits = o.bits;
            for e in self.vals.iter_mut() {
                e.0 = round(e.0, o.bits);
            }
            self.merge();
        }
        let (count, max) = (self.count + o.count, self.max.max(o.max));
        for &(v, n) in &o.vals {
            self.add(v, n, cap);
        }
        // `add` counted the values again, and saw the rounded ones.
        (self.count, self.max) = (count, max);
    }

    /// Nearest-rank percentiles (`ps` in percent), in the order asked; `None` when empty.
    pub fn percentiles(&self, ps: &[f64]) -> Vec<Option<i64>> {
        let mut sorted = self.vals.clone();
        sorted.sort_unstable_by_key(|e| e.0);
        let total: u64 = sorted.iter().map(|e| e.1).sum();
        ps.iter()
            .map(|p| {
                if total == 0 {
                    return None;
                }
                let rank = ((p / 100.0) * total as f64).ceil().max(1.0) as u64;
                let mut seen = 0;
                sorted.iter().find_map(|&(v, n)| {
                    seen += n;
                    (seen >= rank).then_some(v)
                })
            })
            .collect()
    }
}

impl Shrink for Weighted {
    fn held(&self) -> usize {
        self.vals.len()
    }

    /// Rounds until at most `cap / 2` entries remain, or the fewest bits are reached (then
    /// the list holds at most 16 values an octave, about 400 over all latencies).
    fn cut(&mut self, cap: usize) {
        if self.bits != LEAST_BITS {
            self.shrink(cap / 2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_below_the_bound_as_a_sorted_list_would_give() {
        let mut w = Weighted::default();
        let mut flat = Vec::new();
        for i in 0..300i64 {
            let v = (i * 7919) % 1000;
            w.add(v, (i % 3) as u64 + 1, 1000);
            flat.extend(std::iter::repeat_n(v, (i % 3) as usize + 1));
        }
        flat.sort_unstable();
        let at = |p: f64| crate::analyses::series::percentile(&flat, p);
        assert_eq!(
            w.percentiles(&[50.0, 95.0, 99.0]),
            vec![at(50.0), at(95.0), at(99.0)]
        );
        assert_eq!(w.count, flat.len() as u64);
        assert_eq!(w.max, flat.last().copied());
        assert_eq!(w.bits, 0);
    }

    #[test]
    fn past_the_bound_the_list_shrinks_and_stays_close() {
        let mut w = Weighted::default();
        let mut flat = Vec::new();
        for i in 1..=100_000i64 {
            let v = 1_000_000 + (i * 104_729) % 50_000_000;
            w.add(v, 1, 512);
            flat.push(v);
        }
        assert!(w.len() <= 512, "{}", w.len());
        assert!(w.bits > 0);
        flat.sort_unstable();
        for (p, got) in [50.0, 99.0].iter().zip(w.percentiles(&[50.0, 99.0])) {
            let want = crate::analyses::series::percentile(&flat, *p).unwrap() as f64;
            let got = got.unwrap() as f64;
            assert!((want - got).abs() / want < 0.07, "p{p}: {got} vs {want}");
        }
        assert_eq!(w.max, flat.last().copied());
        assert_eq!(w.count, 100_000);
    }
}
