//! What a direction delivered lately, kept to tell a retransmission from a conflicting overlap
//! without a copy of the bytes: the stream ranges of the last delivered pieces, each with a
//! hash of its bytes.
//!
//! A segment that repeats bytes already delivered is compared piece by piece: every delivered
//! piece that the repeated bytes cover whole is hashed again from the segment and compared with
//! the hash kept for it. Senders retransmit from a segment's start, and a retransmission either
//! repeats segments whole or collapses several whole ones into one, so its repeated bytes
//! start (and, unless it carries new bytes too, end) on pieces' edges. The hashes are 64-bit
//! and seeded per run: bytes that differ give the same hash with a chance of 2⁻⁶⁴, and a
//! capture cannot be made to collide without knowing the seed.
//!
//! How far back a comparison reaches is what the copy of last bytes this replaced reached
//! (`reach`): at least `RECENT` and at most `2 * RECENT` bytes, none past a gap, so that the
//! same retransmissions are compared. What the hashes cannot do that the copy did:
//! - compare bytes of a piece the repeated bytes cover only in part (a retransmission that
//!   starts or ends inside a delivered piece): those bytes are not compared, the pieces
//!   covered whole still are;
//! - reach further back than the last `CHUNKS` pieces (a direction of many tiny segments).
//!
//! A difference there is not reported (the bytes delivered first are the ones that went out
//! either way). None of the samples, hex samples or hostile inputs has one: their output is as
//! the copy gave it (`scripts/compare-views.sh`).
//!
//! A direction costs `size_of::<Delivered>()` (40 bytes) plus, while its connection is among
//! the `table::MAX_RECENT` active last, up to `CHUNKS` × 24 bytes (1.5 KiB), where the copy
//! took up to 32 KiB.
// Input-derived values never index, unwrap or expect here: a hostile capture must not panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::sync::LazyLock;

/// Bytes of delivered data a retransmission is compared against, at least: a retransmission
/// reaching back further may not be. 16 KiB covers a dozen full-size segments. Up to twice
/// this is reached once a direction has delivered that much (`Delivered::push`).
pub(super) const RECENT: usize = 16 * 1024;

/// Delivered pieces a direction keeps the hash of: a repeat reaching back past the last
/// `CHUNKS` is not compared. 64 covers `2 * RECENT` in pieces of 512 bytes.
pub(super) const CHUNKS: usize = 64;

/// The hash of delivered bytes, seeded once per run.
static BYTES_HASH: LazyLock<foldhash::fast::RandomState> = LazyLock::new(Default::default);

fn hash(bytes: &[u8]) -> u64 {
    BYTES_HASH.hash_one(bytes)
}

/// One delivered piece: where it starts in the stream, its length and the hash of its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Chunk {
    start: u64,
    len: u32,
    hash: u64,
}

impl Chunk {
    fn end(&self) -> u64 {
        self.start + u64::from(self.len)
    }
}

/// The last pieces a direction delivered, contiguous and ending where the stream is.
#[derive(Debug, Default)]
pub(super) struct Delivered {
    /// How many bytes before the stream's end a repeat is compared: as many as the copy of
    /// last bytes held (at most `2 * RECENT`, 0 after a gap).
    reach: u32,
    /// Whether the direction has delivered since its pieces were last let go: its connection
    /// is then among those keeping pieces (`table::MAX_RECENT`).
    kept: bool,
    /// Oldest first; none starts before `reach`.
    chunks: VecDeque<Chunk>,
}

impl Delivered {
    /// Whether the direction keeps pieces (it delivered since they were last let go).
    pub(super) fn is_kept(&self) -> bool {
        self.kept
    }

    /// How many bytes before the stream's end a repeat is compared.
    pub(super) fn reach(&self) -> u64 {
        u64::from(self.reach)
    }

    /// `bytes` were delivered, ending at stream offset `end`. The reach grows as the copy of
    /// last bytes grew: trimmed to `RECENT` once past `2 * RECENT`, so that it is amortised.
    pub(super) fn push(&mut self, bytes: &[u8], end: u64) {
        if bytes.is_empty() {
            return;
        }
        let n = bytes.len();
        let mut reach = self.reach as usize;
        if reach + n > 2 * RECENT {
            reach -= (reach + n - RECENT).min(reach);
        }
        reach += n.min(2 * RECENT);
        self.reach = u32::try_from(reach).unwrap_or(u32::MAX);
        self.kept = true;
        // A piece longer than the reach can never be covered whole within it: not hashed.
        if n <= reach {
            self.chunks.push_back(Chunk {
                start: end.saturating_sub(n as u64),
                len: n as u32,
                hash: hash(bytes),
            });
        }
        let from = end.saturating_sub(self.reach());
        while self
            .chunks
            .front()
            .is_some_and(|c| c.start < from || self.chunks.len() > CHUNKS)
        {
            self.chunks.pop_front();
        }
    }

    /// A gap: nothing before it is compared any longer.
    pub(super) fn clear(&mut self) {
        self.reach = 0;
        self.chunks.clear();
    }

    /// Lets go of the pieces and their memory (the connection ended, or is no longer among
    /// the `table::MAX_RECENT` active last); delivering again starts anew.
    pub(super) fn let_go(&mut self) {
        *self = Delivered::default();
    }

    /// Whether `bytes`, repeating the stream from offset `start`, differ from the delivered
    /// pieces they cover whole.
    pub(super) fn differs(&self, start: u64, bytes: &[u8]) -> bool {
        let end = start + bytes.len() as u64;
        let first = self.chunks.partition_point(|c| c.start < start);
        for c in self.chunks.range(first..) {
            if c.end() > end {
                break;
            }
            let from = (c.start - start) as usize;
            let Some(again) = bytes.get(from..from + c.len as usize) else {
                break;
            };
            if hash(again) != c.hash {
                return true;
            }
        }
        false
    }

    /// The pieces kept, as `(start, len)`.
    #[cfg(test)]
    fn ranges(&self) -> Vec<(u64, u32)> {
        self.chunks.iter().map(|c| (c.start, c.len)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Delivers `pieces` one after the other from stream offset 0.
    fn delivered(pieces: &[&[u8]]) -> Delivered {
        let mut d = Delivered::default();
        let mut end = 0;
        for p in pieces {
            end += p.len() as u64;
            d.push(p, end);
        }
        d
    }

    /// A repeat of one piece, of several whole pieces, or of the tail: the same bytes do not
    /// differ; one byte changed anywhere in a piece covered whole does.
    #[test]
    fn repeats_of_whole_pieces_are_compared() {
        let d = delivered(&[b"abc", b"defg", b"hi"]);
        assert!(!d.differs(3, b"defg"));
        assert!(d.differs(3, b"deXg"));
        assert!(!d.differs(0, b"abcdefghi"));
        assert!(d.differs(0, b"abcdefghX"));
        assert!(d.differs(0, b"Xbcdefghi"));
        assert!(!d.differs(7, b"hi"));
        assert!(d.differs(7, b"hX"));
    }

    /// A repeat that covers pieces in part compares only those it covers whole: a difference
    /// in a piece covered whole is found, one in a piece covered in part is not.
    #[test]
    fn pieces_covered_in_part_are_not_compared() {
        let d = delivered(&[b"abc", b"defg", b"hi"]);
        // `cdefgh`: `defg` is covered whole, `abc` and `hi` in part.
        assert!(d.differs(2, b"cdeXgh"));
        assert!(!d.differs(2, b"XdefgX"));
        // Inside one piece: nothing to compare.
        assert!(!d.differs(4, b"XX"));
    }

    /// The reach follows the copy of last bytes it replaced: it grows to `2 * RECENT`, is
    /// trimmed back to `RECENT` past it, and a gap empties it.
    #[test]
    fn reach_grows_and_trims_as_the_copy_did() {
        let piece = vec![7u8; 1024];
        let mut d = Delivered::default();
        let mut end = 0;
        for _ in 0..32 {
            end += 1024;
            d.push(&piece, end);
        }
        assert_eq!(d.reach(), 2 * RECENT as u64);
        end += 1024;
        d.push(&piece, end);
        assert_eq!(d.reach(), RECENT as u64);
        // No piece starts before the reach.
        assert_eq!(d.ranges().first(), Some(&(end - RECENT as u64, 1024)));
        assert_eq!(d.ranges().len(), RECENT / 1024);
        d.clear();
        assert_eq!((d.reach(), d.ranges().len()), (0, 0));
        assert!(d.is_kept());
        d.let_go();
        assert!(!d.is_kept());
    }

    /// At most `CHUNKS` pieces are kept, the last ones; a piece longer than `2 * RECENT` is
    /// not kept (it can never be covered whole within the reach) and drops those before it.
    #[test]
    fn pieces_are_bounded() {
        let mut d = Delivered::default();
        for i in 1..=(CHUNKS as u64 + 10) {
            d.push(b"x", i);
        }
        assert_eq!(d.ranges().len(), CHUNKS);
        assert_eq!(d.ranges().first(), Some(&(10, 1)));
        let big = vec![1u8; 2 * RECENT + 1];
        let end = CHUNKS as u64 + 10 + big.len() as u64;
        d.push(&big, end);
        assert!(d.ranges().is_empty());
        assert_eq!(d.reach(), 2 * RECENT as u64);
        d.push(b"yz", end + 2);
        assert_eq!(d.ranges(), [(end, 2)]);
        assert!(d.differs(end, b"yZ"));
    }
}
