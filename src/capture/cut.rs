//! What a cut (`-w`) left out, as it notes it in the file it writes: a pcapng packet comment
//! on the packet after which, or before which, bytes of a TCP direction are missing because
//! their packets were not kept. Read back, such a hole is not damage: reassembly declares it
//! at once as left out, and the Kafka layer looks for the next frame without a word.
//!
//! The comments are text, for Wireshark and tshark to show (`frame.comment`), one per note:
//!
//! ```text
//! kdissect -w: left out 127.0.0.1:53884 > 127.0.0.1:9092 seq 1785111566-1785112961 (2 packets, 1395 bytes)
//! kdissect -w: left out 127.0.0.1:9092 > 127.0.0.1:53884 after this packet
//! kdissect -w: left out 127.0.0.1:53884 > 127.0.0.1:9092 before seq 1785111390, its start
//! ```

use std::net::SocketAddr;

/// The start of every note.
const PREFIX: &str = "kdissect -w: left out ";

/// Bytes of one TCP direction a cut left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub what: Span,
}

/// Which bytes of the direction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Span {
    /// These sequence number ranges (`start..end`, as TCP counts them: they may wrap).
    Seq(Vec<(u32, u32)>),
    /// Everything the direction sends after this packet.
    After,
    /// The direction's start: its stream begins at this sequence number, before this packet
    /// (the packets between were left out, or the capture moved this one ahead of them).
    Start(u32),
}

/// Ranges a note names at most (a cut merges the packets it leaves out into ranges, which
/// are few unless the capture reordered them).
pub const MAX_RANGES: usize = 16;

impl LeftOut {
    /// The note's text: `packets` packets of `bytes` bytes were left out (for the reader).
    pub fn text(&self, packets: u64, bytes: u64) -> String {
        let (src, dst) = (self.src, self.dst);
        match &self.what {
            Span::Seq(ranges) => {
                let seq: Vec<String> = ranges.iter().map(|(a, b)| format!("{a}-{b}")).collect();
                let unit = if packets == 1 { "packet" } else { "packets" };
                format!(
                    "{PREFIX}{src} > {dst} seq {} ({packets} {unit}, {bytes} bytes)",
                    seq.join(",")
                )
            }
            Span::After => format!("{PREFIX}{src} > {dst} after this packet"),
            Span::Start(seq) => format!("{PREFIX}{src} > {dst} before seq {seq}, its start"),
        }
    }

    /// The note a packet comment holds, if it is one.
    pub fn parse(comment: &str) -> Option<LeftOut> {
        let rest = comment.strip_prefix(PREFIX)?;
        let mut words = rest.split(' ');
        let src = words.next()?.parse().ok()?;
        if words.next()? != ">" {
            return None;
        }
        let dst = words.next()?.parse().ok()?;
        let what = match words.next()? {
            "seq" => Span::Seq(parse_ranges(words.next()?)?),
            "after" => Span::After,
            "before" => match (words.next()?, words.next()?) {
                ("seq", n) => Span::Start(n.trim_end_matches(',').parse().ok()?),
                _ => return None,
            },
            _ => return None,
        };
        Some(LeftOut { src, dst, what })
    }
}

/// `A-B,C-D`, at most `MAX_RANGES` of them.
fn parse_ranges(text: &str) -> Option<Vec<(u32, u32)>> {
    let ranges: Option<Vec<(u32, u32)>> = text
        .split(',')
        .take(MAX_RANGES)
        .map(|r| {
            let (a, b) = r.split_once('-')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .collect();
    ranges.filter(|r| !r.is_empty())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn notes_read_back_as_written() {
        let src: SocketAddr = "127.0.0.1:53884".parse().unwrap();
        let dst: SocketAddr = "[::1]:9092".parse().unwrap();
        for what in [
            Span::Seq(vec![(4_000_000_000, 5), (7, 9)]),
            Span::After,
            Span::Start(17),
        ] {
            let n = LeftOut { src, dst, what };
            assert_eq!(LeftOut::parse(&n.text(3, 1400)), Some(n));
        }
        assert_eq!(LeftOut::parse("a comment someone wrote"), None);
        assert_eq!(
            LeftOut::parse("kdissect -w: left out 1.2.3.4:5 > nowhere seq 1-2"),
            None
        );
    }
}
