//! What the analyses may hold, from one budget (`--analyses-memory`): each bounded store
//! (lag samples, end-to-end batches and latencies, throughput series, requests waiting for
//! their answers, batches naming topic ids, API latency points) gets a fixed share of it,
//! as a count of entries of its known size. One flag rather than one per store: a user
//! knows how much memory the run may take, not how it is best split; the shares below are
//! those the stores needed on a busy cluster capture (docs/robustness.md).

/// The budget the base counts below were sized for: every store at its base count holds
/// about this much at worst (docs/robustness.md adds them up).
const REFERENCE: usize = 96 << 20;

/// The default budget: an eighth of [`REFERENCE`], so that `--stats --analyses` stays
/// within 64 MiB in all on a busy cluster, at any length (docs/analyses.md: 62 MB at 1 GB;
/// at 24M, 67 MB).
pub const DEFAULT_MEMORY: usize = 12 << 20;

/// The smallest budget taken: under it the shares would keep too few entries to chart.
pub const LEAST_MEMORY: usize = 1 << 20;

/// The bounds of every analysis' stores, derived from the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    memory: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::new(DEFAULT_MEMORY)
    }
}

impl Limits {
    /// Limits from a budget in bytes (raised to [`LEAST_MEMORY`]).
    pub fn new(memory: usize) -> Limits {
        Limits {
            memory: memory.max(LEAST_MEMORY),
        }
    }

    /// The budget in bytes.
    pub fn memory(&self) -> usize {
        self.memory
    }

    /// `base` (a count sized for [`REFERENCE`]) scaled to the budget, at least `least`.
    fn scaled(&self, base: usize, least: usize) -> usize {
        let n = (base as u128 * self.memory as u128 / REFERENCE as u128) as usize;
        n.max(least)
    }

    /// Lag samples, all series together (48 bytes each).
    pub fn lag_points(&self) -> usize {
        self.scaled(131_072, 1024)
    }

    /// End to end: produced batches kept (40 bytes each).
    pub fn produced(&self) -> usize {
        self.scaled(262_144, 1024)
    }

    /// End to end: deliveries waiting for their Produce answer (32 bytes each).
    pub fn early(&self) -> usize {
        self.scaled(65_536, 256)
    }

    /// End to end: delivered ranges (about 48 bytes each).
    pub fn ranges(&self) -> usize {
        self.scaled(131_072, 512)
    }

    /// End to end: latency values, all rows together (16 bytes each).
    pub fn latencies(&self) -> usize {
        self.scaled(262_144, 1024)
    }

    /// Throughput: points of each direction's series, all topics together (24 bytes each).
    pub fn series_points(&self) -> usize {
        self.scaled(65_536, 256)
    }

    /// API latency chart points, all APIs together (24 bytes each).
    pub fn api_latency_points(&self) -> usize {
        self.scaled(131_072, 1024)
    }

    /// Requests held for their answers, and the bytes they may hold together.
    pub fn pending(&self) -> (usize, usize) {
        (self.scaled(100_000, 1000), self.scaled(16 << 20, 64 << 10))
    }

    /// Produce batches remembered to name the topic ids of the Fetches that return them
    /// (about 80 bytes each).
    pub fn batch_topics(&self) -> usize {
        self.scaled(65_536, 1024)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_follow_the_budget_and_keep_their_floor() {
        let d = Limits::default();
        assert_eq!(d.lag_points(), 16_384);
        assert_eq!(d.pending(), (12_500, 2 << 20));
        let big = Limits::new(REFERENCE);
        assert_eq!(big.lag_points(), 131_072);
        assert_eq!(big.produced(), 262_144);
        let tiny = Limits::new(0);
        assert_eq!(tiny.memory(), LEAST_MEMORY);
        assert!(tiny.lag_points() >= 1024 && tiny.early() >= 256);
    }
}
