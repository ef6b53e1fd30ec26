//! JSON strings as kdissect writes them: escaped as serde_json escapes them, and the
//! characters a terminal would obey escaped too. In the lowest layer so that the walk's JSON
//! writer (src/kafka/walk/json.rs) and the renderer (src/render/json.rs) write the same bytes.

/// A JSON string, escaped as serde_json escapes it, and DEL, the C1 controls (U+0080 to
/// U+009F) and the invisible characters of [`crate::text::is_invisible`] escaped too:
/// serde_json leaves them raw, and a terminal showing the JSON would obey the controls as it
/// obeys ESC (issue 35, item 18) and let a bidi override turn text around. Nearly every string (names, ids, topic
/// names) holds no byte that needs escaping: those are copied whole, the rest escaped here.
pub fn put_str(w: &mut Vec<u8>, s: &str) {
    if !needs_escape(s.as_bytes()) {
        w.reserve(s.len() + 2);
        w.push(b'"');
        w.extend_from_slice(s.as_bytes());
        w.push(b'"');
    } else {
        put_escaped(w, s);
    }
}

/// [`put_str`]'s slow way: serde_json's escapes (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, and
/// `\u00xx` for the other controls below 0x20), and `\u00xx` for DEL and the C1 controls.
fn put_escaped(w: &mut Vec<u8>, s: &str) {
    use std::io::Write as _;
    w.push(b'"');
    let mut buf = [0u8; 4];
    for c in s.chars() {
        match c {
            '"' => w.extend_from_slice(b"\\\""),
            '\\' => w.extend_from_slice(b"\\\\"),
            '\n' => w.extend_from_slice(b"\\n"),
            '\r' => w.extend_from_slice(b"\\r"),
            '\t' => w.extend_from_slice(b"\\t"),
            '\u{8}' => w.extend_from_slice(b"\\b"),
            '\u{c}' => w.extend_from_slice(b"\\f"),
            // Below 0x20, DEL, C1 (all under 0x100), or an invisible character (all under
            // 0x10000): one `\uxxxx` each. Writing to a Vec cannot fail.
            c if c.is_control() || crate::text::is_invisible(c) => {
                let _ = write!(w, "\\u{:04x}", u32::from(c));
            }
            c => w.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()),
        }
    }
    w.push(b'"');
}

/// Whether `b` holds a byte [`put_str`] escapes (below 0x20, `"`, `\\`, DEL), or 0xC2, 0xD8,
/// 0xE2 or 0xEF, the first bytes of the UTF-8 of a C1 control or an invisible character (and
/// of other characters, which the slow way copies as they are). Eight bytes at a
/// time: the field names and strings of a tree are checked once each, and a byte-at-a-time
/// check of them was the largest single cost of writing `--json`.
pub fn needs_escape(b: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // Whether some byte of a word is zero, or (`below`) under 0x20: the word-at-a-time tests
    // of "Bit Twiddling Hacks", which are exact about whether such a byte exists (not about
    // which one). `& !x` keeps bytes at or above 0x80, which need no escaping, from counting.
    fn flagged(x: u64) -> bool {
        let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
        let below = x.wrapping_sub(ONES * 0x20) & !x & HIGHS;
        (zero(x ^ (ONES * u64::from(b'"')))
            | zero(x ^ (ONES * u64::from(b'\\')))
            | zero(x ^ (ONES * 0x7f))
            | zero(x ^ (ONES * 0xc2))
            | zero(x ^ (ONES * 0xd8))
            | zero(x ^ (ONES * 0xe2))
            | zero(x ^ (ONES * 0xef))
            | below)
            != 0
    }
    let word = |c: &[u8]| {
        let mut word = [b'a'; 8];
        if let Some(head) = word.get_mut(..c.len()) {
            head.copy_from_slice(c);
        }
        u64::from_le_bytes(word)
    };
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        if flagged(word(c)) {
            return true;
        }
    }
    // The last few bytes in one word too: the 8 that end the string when it has them (some
    // checked twice, which changes nothing), else the bytes padded with a letter.
    let rest = chunks.remainder();
    match b.len().checked_sub(8) {
        _ if rest.is_empty() => false,
        Some(from) => b.get(from..).is_some_and(|c| flagged(word(c))),
        None => flagged(word(rest)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-at-a-time check agrees with the byte-at-a-time rule: every byte value at every
    /// place of strings of 1 to 17 bytes, among fillers on both sides of the limits, and a
    /// stream of pseudo-random strings of 0 to 23 bytes.
    #[test]
    fn needs_escape_agrees_with_the_byte_rule() {
        let rule = |b: &[u8]| {
            b.iter()
                .any(|&c| c < 0x20 || matches!(c, b'"' | b'\\' | 0x7f | 0xc2 | 0xd8 | 0xe2 | 0xef))
        };
        for filler in [
            0x20u8, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0x9f, 0xa2, 0xdc, 0xff,
        ] {
            for len in [1usize, 2, 5, 7, 8, 9, 12, 15, 16, 17] {
                for at in 0..len {
                    for b in 0..=255u8 {
                        let mut s = vec![filler; len];
                        s[at] = b;
                        assert_eq!(needs_escape(&s), rule(&s), "{s:?}");
                    }
                }
            }
        }
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            // Lengths 0 to 23, so that every remainder is met.
            let len = (x >> 59) as usize % 24;
            let s: Vec<u8> = [
                x.to_le_bytes(),
                x.rotate_left(17).to_le_bytes(),
                x.swap_bytes().to_le_bytes(),
            ]
            .concat();
            // Bias towards the bytes around the limits.
            let s: Vec<u8> = s[..len]
                .iter()
                .map(|&b| if b & 1 == 0 { b } else { b % 0x60 })
                .collect();
            assert_eq!(needs_escape(&s), rule(&s), "{s:?}");
        }
    }
}
