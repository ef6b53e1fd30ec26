//! One budget shared by many series (lag per partition, latencies per consumer and topic,
//! throughput per topic): each series is cut down to its share when it grows past it, and
//! when all of them together hold half again their budget (series that stopped growing keep
//! the share they had when they last grew, which was larger while there were fewer of them),
//! every series is cut to the share of the moment. A cut costs about the series' length and
//! halves it at least, so the work stays linear in what is added.

use crate::analyses::hash::HashMap;
use std::hash::Hash;

/// A series that can be cut down to fewer entries, keeping its figures within its rule.
pub trait Shrink {
    /// Entries held.
    fn held(&self) -> usize;
    /// Cuts the series to at most about `cap / 2` entries (at most `cap` where its rule
    /// cannot go lower).
    fn cut(&mut self, cap: usize);
}

/// What a set of series may hold together, and what each keeps at least.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub total: usize,
    pub least: usize,
    /// Entries held now, all series together.
    held: usize,
}

impl Budget {
    pub const fn new(total: usize, least: usize) -> Budget {
        Budget {
            total,
            least,
            held: 0,
        }
    }

    /// The share of one series among `n`.
    pub fn share(&self, n: usize) -> usize {
        (self.total / n.max(1)).max(self.least)
    }

    /// Adds to the series `key` with `add`, then keeps it, and all, within their shares.
    pub fn add<K: Eq + Hash, V: Shrink + Default>(
        &mut self,
        map: &mut HashMap<K, V>,
        key: K,
        add: impl FnOnce(&mut V),
    ) {
        let n = map.len() + usize::from(!map.contains_key(&key));
        let share = self.share(n);
        let s = map.entry(key).or_default();
        let before = s.held();
        add(s);
        if s.held() > share {
            s.cut(share);
        }
        self.held = (self.held + s.held()).saturating_sub(before);
        // Every series may keep `least`: with many series that is more than `total`.
        let limit = self.total.max(self.least.saturating_mul(n));
        if self.held > limit + limit / 2 {
            self.rebalance(map);
        }
    }

    /// Cuts every series past the share of the moment.
    fn rebalance<K, V: Shrink>(&mut self, map: &mut HashMap<K, V>) {
        let share = self.share(map.len());
        let mut held = 0;
        for s in map.values_mut() {
            if s.held() > share {
                s.cut(share);
            }
            held += s.held();
        }
        self.held = held;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Plain(Vec<u32>);

    impl Shrink for Plain {
        fn held(&self) -> usize {
            self.0.len()
        }
        fn cut(&mut self, cap: usize) {
            self.0.truncate(cap / 2);
        }
    }

    #[test]
    fn series_that_stopped_growing_give_back_their_share() {
        let mut b = Budget::new(1000, 2);
        let mut m: HashMap<u32, Plain> = HashMap::default();
        // Each series grows to its share of the moment, then stops: without rebalancing they
        // would hold 1000 × (1 + 1/2 + 1/3 + ...).
        for k in 0..200u32 {
            for _ in 0..1000 {
                b.add(&mut m, k, |s| s.0.push(k));
            }
        }
        let held: usize = m.values().map(|s| s.0.len()).sum();
        assert!(held <= 1500, "{held}");
        assert_eq!(b.held, held);
        assert!(m.values().all(|s| !s.0.is_empty()));
    }
}
