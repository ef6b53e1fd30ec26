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
//!
//! A cut also names the topic ids its messages give whose names it knew (from a Metadata,
//! CreateTopics or DescribeTopicPartitions answer, the KRaft log, a batch) and may have left
//! out, one comment a topic, on its first packet: read back, they name those ids as the
//! answers would have. The name is quoted, every character but printable ASCII escaped
//! (`\"`, `\\`, `\u{1b}`), so that a note stays one line and reads back exactly:
//!
//! ```text
//! kdissect -w: topic 80a8b1aa-9d3d-4eea-8df2-9476378d3511 = "orders"
//! ```

use std::fmt::Write as _;
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

/// The start of a topic's note.
const TOPIC_PREFIX: &str = "kdissect -w: topic ";

/// A topic id and the name the run that wrote the cut knew it by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicNamed {
    pub id: [u8; 16],
    pub name: String,
}

/// Longest topic name Kafka accepts (`Topic.MAX_NAME_LENGTH`): a longer one is no topic's,
/// and a note naming one is not read.
pub const MAX_NAME: usize = 249;

/// Topic names a cut notes at most, for the messages of one input: a note is about 70
/// bytes, and the Kafka layer learns at most 100 000 names in all.
pub const MAX_TOPIC_NOTES: usize = 10_000;

impl TopicNamed {
    /// The note's text: `kdissect -w: topic 80a8b1aa-9d3d-4eea-8df2-9476378d3511 = "orders"`.
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(TOPIC_PREFIX.len() + 41 + self.name.len());
        out.push_str(TOPIC_PREFIX);
        push_uuid(&mut out, &self.id);
        out.push_str(" = \"");
        for c in self.name.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                ' '..='~' => out.push(c),
                _ => {
                    let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
                }
            }
        }
        out.push('"');
        out
    }

    /// The topic a packet comment names, if it is such a note and a sound one: an id that
    /// is not zero, a name of 1 to `MAX_NAME` bytes, escaped as [`TopicNamed::text`] writes.
    pub fn parse(comment: &str) -> Option<TopicNamed> {
        let rest = comment.strip_prefix(TOPIC_PREFIX)?;
        let id = parse_uuid(rest.get(..36)?)?;
        let quoted = rest.get(36..)?.strip_prefix(" = \"")?.strip_suffix('"')?;
        let name = unescape(quoted)?;
        let sound = id != [0; 16] && !name.is_empty() && name.len() <= MAX_NAME;
        sound.then_some(TopicNamed { id, name })
    }
}

/// Whether a comment is meant as a cut's note (a left-out or a topic note), sound or not: one
/// that is, and does not read, is told.
pub fn is_note(comment: &str) -> bool {
    comment.starts_with(PREFIX) || comment.starts_with(TOPIC_PREFIX)
}

/// The note saying how many topic names past `MAX_TOPIC_NOTES` a cut did not note.
pub fn names_not_noted(n: usize) -> String {
    format!(
        "kdissect -w: {n} more topic names not noted (a cut notes at most {MAX_TOPIC_NOTES} an input)"
    )
}

/// `8-4-4-4-12` lowercase hex digits, as Kafka prints a Uuid (the capture stage's own: it
/// reads and writes its notes without the render stage).
fn push_uuid(out: &mut String, id: &[u8; 16]) {
    for (i, b) in id.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        let _ = write!(out, "{b:02x}");
    }
}

/// [`push_uuid`]'s text back (hex digits of either case, dashes where it puts them).
fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    let groups: Vec<&str> = text.split('-').collect();
    let lens: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    if lens != [8, 4, 4, 4, 12] {
        return None;
    }
    let mut id = [0u8; 16];
    hex::decode_to_slice(groups.concat(), &mut id).ok()?;
    Some(id)
}

/// A name as [`TopicNamed::text`] escapes it, back; `None` for any other text (a quote or a
/// character outside printable ASCII left bare, an escape it does not write).
fn unescape(quoted: &str) -> Option<String> {
    let mut out = String::with_capacity(quoted.len().min(MAX_NAME * 4));
    let mut chars = quoted.chars();
    while let Some(c) = chars.next() {
        let c = match c {
            '\\' => match chars.next()? {
                e @ ('"' | '\\') => e,
                'u' => escaped_char(&mut chars)?,
                _ => return None,
            },
            '"' => return None,
            ' '..='~' => c,
            _ => return None,
        };
        out.push(c);
        if out.len() > MAX_NAME {
            return None;
        }
    }
    Some(out)
}

/// `{1b}` after `\u`: a scalar value of 1 to 6 hex digits.
fn escaped_char(chars: &mut std::str::Chars<'_>) -> Option<char> {
    if chars.next()? != '{' {
        return None;
    }
    let mut v: u32 = 0;
    for (i, c) in chars.by_ref().enumerate() {
        if c == '}' {
            return (i > 0).then(|| char::from_u32(v)).flatten();
        }
        if i >= 6 {
            return None;
        }
        v = v * 16 + c.to_digit(16)?;
    }
    None
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

    #[test]
    fn topic_notes_read_back_as_written_whatever_the_name() {
        let mut id = [0u8; 16];
        id[0] = 0x80;
        id[15] = 0x11;
        for name in [
            "orders",
            "a \"quoted\" \\ name",
            "line\nbreak\r\u{1b}[31mred\u{7}",
            "caf\u{e9} \u{30af}\u{2028}\u{202e}\u{10ffff}",
            &"x".repeat(MAX_NAME),
        ] {
            let t = TopicNamed {
                id,
                name: name.to_string(),
            };
            let text = t.text();
            assert!(
                text.bytes().all(|b| (b' '..=b'~').contains(&b)),
                "one line of printable ASCII: {text:?}"
            );
            assert!(is_note(&text));
            assert_eq!(TopicNamed::parse(&text), Some(t), "{text}");
        }
        assert_eq!(
            TopicNamed {
                id,
                name: "orders".into()
            }
            .text(),
            "kdissect -w: topic 80000000-0000-0000-0000-000000000011 = \"orders\""
        );
    }

    #[test]
    fn forged_topic_notes_are_not_read() {
        let ok = "kdissect -w: topic 80000000-0000-0000-0000-000000000011 = ";
        for bad in [
            // Not a uuid, a zero one, dashes elsewhere, a 17th byte.
            "kdissect -w: topic 8000000-00000-0000-0000-000000000011 = \"t\"".to_string(),
            "kdissect -w: topic zz000000-0000-0000-0000-000000000011 = \"t\"".to_string(),
            "kdissect -w: topic 00000000-0000-0000-0000-000000000000 = \"t\"".to_string(),
            "kdissect -w: topic 80000000-0000-0000-0000-00000000001122 = \"t\"".to_string(),
            "kdissect -w: topic 80000000".to_string(),
            "kdissect -w: topic \u{e9}\u{e9}\u{e9}".to_string(),
            // Names: empty, too long (plain or escaped), unquoted, bare controls or quotes,
            // escapes it does not write, a scalar value that is none, text after the quote.
            format!("{ok}\"\""),
            format!("{ok}\"{}\"", "x".repeat(MAX_NAME + 1)),
            format!("{ok}\"{}\"", "\\u{78}".repeat(MAX_NAME + 1)),
            format!("{ok}orders"),
            format!("{ok}\"ord\ners\""),
            format!("{ok}\"ord\u{1b}ers\""),
            format!("{ok}\"caf\u{e9}\""),
            format!("{ok}\"a\"b\""),
            format!("{ok}\"a\\nb\""),
            format!("{ok}\"a\\u{{d800}}b\""),
            format!("{ok}\"a\\u{{110000}}b\""),
            format!("{ok}\"a\\u{{1234567}}b\""),
            format!("{ok}\"a\\u{{}}b\""),
            format!("{ok}\"a\\u{{12\""),
            format!("{ok}\"a\\\""),
            format!("{ok}\"orders\" and more"),
            format!("{ok}\"orders"),
            format!("{ok}\""),
        ] {
            assert_eq!(TopicNamed::parse(&bad), None, "{bad:?}");
        }
        assert!(!is_note("a comment someone wrote"));
    }
}
