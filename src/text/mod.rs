//! Text primitives every layer that shows something needs: hex digits, Uuids as Kafka prints
//! them, quoted strings, and text tables. They know nothing of Kafka's messages, so both the
//! analyses (which lay out their own tables) and the renderers use them without either
//! depending on the other.

use std::fmt::Write;

pub mod json;
pub mod table;
pub mod time;
pub mod words;

/// Lower-case hex digits, as `{:02x}` and `hex::encode` write them.
pub const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// The two hex digits of a byte.
pub fn hex_pair(b: u8) -> [u8; 2] {
    [
        HEX_DIGITS[usize::from(b >> 4)],
        HEX_DIGITS[usize::from(b & 0xf)],
    ]
}

/// Appends a Uuid as [`uuid`] writes it.
pub fn push_uuid(out: &mut Vec<u8>, b: &[u8; 16]) {
    for (i, &x) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push(b'-');
        }
        out.extend_from_slice(&hex_pair(x));
    }
}

/// [`uuid`] appended to `out`, with no string of its own (a summary line names topics by id).
pub fn uuid_into(out: &mut String, b: &[u8; 16]) {
    let mut text = [b'-'; 36];
    // The dashes' places, 8-4-4-4-12; the other 32 take the hex digits in order.
    let slots = text
        .iter_mut()
        .enumerate()
        .filter(|(i, _)| !matches!(i, 8 | 13 | 18 | 23))
        .map(|(_, c)| c);
    for (slot, d) in slots.zip(b.iter().flat_map(|&x| hex_pair(x))) {
        *slot = d;
    }
    // Hex digits and dashes are ASCII.
    out.push_str(std::str::from_utf8(&text).unwrap_or_default());
}

/// `8-4-4-4-12` hex digits, as Kafka prints a Uuid.
pub fn uuid(b: &[u8; 16]) -> String {
    let mut s = Vec::with_capacity(36);
    push_uuid(&mut s, b);
    // Hex digits and dashes are ASCII.
    String::from_utf8(s).unwrap_or_default()
}

/// Whether `c` is one of the invisible characters that reorder or hide text without being
/// controls: bidi embeddings, overrides, marks and isolates, zero-width characters, line and
/// paragraph separators, the byte order mark and the interlinear annotations. Shown raw, a
/// name holding U+202E (right-to-left override) prints its tail backwards, so wire text
/// never reaches a terminal, a table or JSON with them unescaped.
pub fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{061c}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
    )
}

/// A string in double quotes, its quotes, backslashes, control characters and invisible
/// characters ([`is_invisible`]) escaped.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() || is_invisible(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Milliseconds with two decimals, or microseconds below 0.01 ms.
pub fn latency_text(nanos: i64) -> String {
    let mut s = String::new();
    write_latency(&mut s, nanos);
    s
}

/// [`latency_text`], written into `out`. Integers where they give the same digits as
/// formatting `nanos / 1e6` as a float: always but at a tie (a hundredth of a millisecond and
/// a half exactly, which the float's rounding decides) or past 2^53 nanoseconds.
pub fn write_latency(out: &mut String, nanos: i64) {
    if nanos.abs() < 10_000 {
        push_int(out, nanos / 1000);
        out.push_str(" µs");
        return;
    }
    let n = nanos.unsigned_abs();
    let hundredths = if n % 10_000 == 5_000 {
        tie_hundredths(n)
    } else {
        (n < 1 << 53).then_some((n + 5_000) / 10_000)
    };
    let Some(hundredths) = hundredths else {
        let _ = write!(out, "{:.2} ms", nanos as f64 / 1e6);
        return;
    };
    if nanos < 0 {
        out.push('-');
    }
    push_int(out, hundredths / 100);
    out.push('.');
    push_digits(out, hundredths % 100, 2);
    out.push_str(" ms");
}

/// Hundredths of a millisecond that formatting `n / 1e6` (a tie: `n` ends in 5 000 ns) as a
/// float with two decimals prints: the float lies above or below the tie, or on it (then the
/// even hundredth), which integers tell exactly (formatting the float cost some 2 400
/// instructions, for one latency in ten). `None` past 2^53 nanoseconds.
fn tie_hundredths(n: u64) -> Option<u64> {
    if n >= 1 << 53 {
        return None;
    }
    let v = n as f64 / 1e6;
    let bits = v.to_bits();
    // A normal float (v ≥ 0.01): mantissa with its implicit bit, times 2^exp.
    let mantissa = u128::from((bits & ((1 << 52) - 1)) | (1 << 52));
    let exp = i32::try_from((bits >> 52) & 0x7ff).ok()? - 1075;
    // v × 1e6 against n, both scaled to integers (below 2^53 ns, v < 2^34: exp < 0, and
    // from 0.01 on, exp > -64).
    let shift = u32::try_from(-exp).ok().filter(|s| *s <= 64)?;
    let (float, tie) = (mantissa * 1_000_000, u128::from(n) << shift);
    let down = (n - 5_000) / 10_000;
    Some(match float.cmp(&tie) {
        std::cmp::Ordering::Greater => down + 1,
        std::cmp::Ordering::Less => down,
        std::cmp::Ordering::Equal => down + down % 2,
    })
}

/// `n` in exactly `digits` decimal digits, zeros first (`n` has at most that many).
pub fn push_digits(out: &mut String, n: u64, digits: usize) {
    let mut buf = itoa::Buffer::new();
    let s = buf.format(n);
    for _ in s.len()..digits {
        out.push('0');
    }
    out.push_str(s);
}

fn push_int(out: &mut String, n: impl itoa::Integer) {
    out.push_str(itoa::Buffer::new().format(n));
}

#[cfg(test)]
mod latency_tests {
    use super::latency_text;

    /// What formatting the float prints, which the integers must match.
    fn by_float(nanos: i64) -> String {
        format!("{:.2} ms", nanos as f64 / 1e6)
    }

    #[test]
    fn ties_print_as_the_float_rounds_them() {
        // 0.125 and 0.375 ms are floats exactly (the even hundredth wins); the others lie
        // above or below their tie.
        assert_eq!(latency_text(125_000), "0.12 ms");
        assert_eq!(latency_text(375_000), "0.38 ms");
        let mut n: i64 = 15_000;
        while n < 40_000_000_000 {
            for t in [n, -n] {
                assert_eq!(latency_text(t), by_float(t), "latency {t} ns");
            }
            n = n * 7 / 5 / 10_000 * 10_000 + 5_000;
        }
        for k in 1..20_000i64 {
            let t = k * 10_000 + 5_000;
            assert_eq!(latency_text(t), by_float(t), "latency {t} ns");
        }
    }
}

#[cfg(test)]
mod quote_tests {
    use super::quote;

    /// A right-to-left override, zero-width and other invisible characters from the wire are
    /// shown as escapes: raw, they would turn or hide the text around them on a terminal.
    #[test]
    fn quote_escapes_invisible_characters_and_keeps_other_text() {
        assert_eq!(quote("evil\u{202e}txt"), "\"evil\\u{202e}txt\"");
        assert_eq!(quote("a\u{200b}b\u{2066}c"), "\"a\\u{200b}b\\u{2066}c\"");
        assert_eq!(quote("\u{feff}x"), "\"\\u{feff}x\"");
        assert_eq!(quote("é€…"), "\"é€…\"");
    }
}
