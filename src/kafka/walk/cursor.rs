//! The one byte cursor: reads Kafka's primitive types from a frame or a decompressed block,
//! with one error type and one reader for the length prefixes of strings, bytes, arrays,
//! records and the keys and values inside record batches.
//!
//! Every read checks the bytes that remain before it takes anything or sizes anything by a
//! length from the input, and a failed read says where and why; none panics or allocates.

use crate::kafka::meaning::problem::{Detail, ProblemKind};

/// Why a read stopped: where in its byte source, what kind of problem, and the detail (put
/// into words when printed).
#[derive(Debug, Clone, PartialEq)]
pub struct ReadError {
    /// Offset, in the cursor's byte source, of the item that could not be read.
    pub offset: usize,
    pub kind: ProblemKind,
    pub detail: Detail,
}

impl ReadError {
    /// Damage in the bytes at `offset`.
    pub fn malformed(offset: usize, detail: Detail) -> ReadError {
        ReadError {
            offset,
            kind: ProblemKind::Malformed,
            detail,
        }
    }
}

impl std::error::Error for ReadError {}

pub type Res<T> = Result<T, ReadError>;

/// How a length (or an element count) is written before what it measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prefix {
    /// int16, -1 for null: STRING and NULLABLE_STRING in classic versions.
    Int16,
    /// int32, -1 for null: BYTES, ARRAY and RECORDS in classic versions, legacy key and value.
    Int32,
    /// Unsigned varint holding the length plus one, 0 for null: every COMPACT_ type.
    Compact,
    /// Zigzag varint, -1 for null: a record's key and value, a header's key and value.
    Varint,
}

impl Prefix {
    /// The prefix's wire type, as the byte layout names it.
    pub fn ty(self) -> &'static str {
        match self {
            Prefix::Int16 => "int16",
            Prefix::Int32 => "int32",
            Prefix::Compact => "uvarint",
            Prefix::Varint => "varint",
        }
    }
}

/// A length prefix read and checked against the bytes after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Length {
    pub prefix: Prefix,
    /// Where the prefix starts.
    pub start: usize,
    /// The number as written (for compact prefixes, the length plus one).
    pub raw: i64,
    /// What it measures; `None` for null.
    pub len: Option<usize>,
}

/// A length that is negative (other than null) or longer than the bytes after it: the
/// number as it measures (`n`), and the bytes left after the prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadLength {
    pub n: i64,
    pub left: usize,
}

impl BadLength {
    /// `string length -3 is negative`, `array length 9 exceeds the 4 bytes left`.
    pub fn words(self, what: &'static str) -> Detail {
        let BadLength { n, left } = self;
        Detail::BadLength { what, n, left }
    }
}

/// A position in `buf[..end]`; offsets it reports are offsets in `buf`.
#[derive(Debug, Clone, Copy)]
pub struct Cursor<'a> {
    pub buf: &'a [u8],
    pub pos: usize,
    pub end: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8], pos: usize, end: usize) -> Cursor<'a> {
        Cursor { buf, pos, end }
    }

    /// Bytes left before the end.
    pub fn left(&self) -> usize {
        self.end.saturating_sub(self.pos)
    }

    /// The next `n` bytes; `what` names them in the error.
    pub fn take(&mut self, n: usize, what: &'static str) -> Res<&'a [u8]> {
        if n > self.left() {
            return Err(ReadError::malformed(
                self.pos,
                Detail::Short {
                    what,
                    need: n,
                    left: self.left(),
                },
            ));
        }
        let s = self
            .buf
            .get(self.pos..self.pos + n)
            .ok_or_else(|| ReadError::malformed(self.pos, Detail::OutOfRange))?;
        self.pos += n;
        Ok(s)
    }

    /// The next `N` bytes as an array.
    pub fn fixed<const N: usize>(&mut self, what: &'static str) -> Res<[u8; N]> {
        let s = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    pub fn i8(&mut self, what: &'static str) -> Res<i8> {
        Ok(i8::from_be_bytes(self.fixed(what)?))
    }
    pub fn i16(&mut self, what: &'static str) -> Res<i16> {
        Ok(i16::from_be_bytes(self.fixed(what)?))
    }
    pub fn i32(&mut self, what: &'static str) -> Res<i32> {
        Ok(i32::from_be_bytes(self.fixed(what)?))
    }
    pub fn i64(&mut self, what: &'static str) -> Res<i64> {
        Ok(i64::from_be_bytes(self.fixed(what)?))
    }
    pub fn u16(&mut self, what: &'static str) -> Res<u16> {
        Ok(u16::from_be_bytes(self.fixed(what)?))
    }
    pub fn u32(&mut self, what: &'static str) -> Res<u32> {
        Ok(u32::from_be_bytes(self.fixed(what)?))
    }

    /// Unsigned varint of at most 5 bytes (Kafka's `readUnsignedVarint`). On error the
    /// cursor is back where the varint starts.
    pub fn uvarint(&mut self) -> Res<u32> {
        let start = self.pos;
        let mut v: u32 = 0;
        for i in 0..5 {
            let b = match self.buf.get(self.pos) {
                Some(b) if self.pos < self.end => *b,
                _ => {
                    self.pos = start;
                    return Err(ReadError::malformed(start, Detail::UvarintPastEnd));
                }
            };
            self.pos += 1;
            if i == 4 && b > 0x0f {
                break;
            }
            v |= u32::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        self.pos = start;
        Err(ReadError::malformed(start, Detail::UvarintTooLong))
    }

    /// Zigzag varint of at most 10 bytes (Kafka's `varint` and `varlong`); `what` names it in
    /// the error. Cut short, the cursor stays at the end; too long, it is back at the start.
    pub fn varint(&mut self, what: &'static str) -> Res<i64> {
        let at = self.pos;
        let mut raw: u64 = 0;
        let mut shift = 0;
        loop {
            let b = *self.take(1, what)?.first().unwrap_or(&0);
            raw |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
            if shift > 63 {
                self.pos = at;
                return Err(ReadError::malformed(at, Detail::VarintTooLong { what }));
            }
        }
        Ok(((raw >> 1) as i64) ^ -((raw & 1) as i64))
    }

    /// The number a length prefix holds, as written; `label` names it if the bytes run out.
    fn prefix_raw(&mut self, prefix: Prefix, label: &'static str) -> Res<i64> {
        Ok(match prefix {
            Prefix::Int16 => self.i16(label)?.into(),
            Prefix::Int32 => self.i32(label)?.into(),
            Prefix::Compact => self.uvarint()?.into(),
            Prefix::Varint => self.varint(label)?,
        })
    }

    /// Reads a length prefix and checks it: null is `None`; a negative length, or one longer
    /// than the bytes after the prefix, is an error (`what length -3 is negative`) with the
    /// cursor back at the prefix. `label` names the prefix if the bytes run out before it
    /// ends. A length that passes never exceeds the bytes left, so it may size a read.
    pub fn length(
        &mut self,
        prefix: Prefix,
        label: &'static str,
        what: &'static str,
    ) -> Res<Length> {
        self.length_worded(prefix, label, |bad| bad.words(what))
    }

    /// [`Cursor::length`] with its own words for a bad length.
    pub fn length_worded(
        &mut self,
        prefix: Prefix,
        label: &'static str,
        words: impl FnOnce(BadLength) -> Detail,
    ) -> Res<Length> {
        let start = self.pos;
        let raw = self.prefix_raw(prefix, label)?;
        let measured = match prefix {
            Prefix::Compact => raw - 1,
            _ => raw,
        };
        let len = match measured {
            -1 => None,
            n if n < 0 || n as u64 > self.left() as u64 => {
                let bad = BadLength {
                    n,
                    left: self.left(),
                };
                self.pos = start;
                return Err(ReadError::malformed(start, words(bad)));
            }
            n => Some(n as usize),
        };
        Ok(Length {
            prefix,
            start,
            raw,
            len,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_compact_length_counts_one_more_and_zero_is_null() {
        let mut c = Cursor::new(&[0, 3, b'a', b'b'], 0, 4);
        let null = c.length(Prefix::Compact, "uvarint", "string").unwrap();
        assert_eq!(null.len, None);
        let two = c.length(Prefix::Compact, "uvarint", "string").unwrap();
        assert_eq!((two.start, two.raw, two.len), (1, 3, Some(2)));
    }

    #[test]
    fn a_bad_length_leaves_the_cursor_at_its_prefix() {
        let mut c = Cursor::new(&[0xff, 0xfd, 0, 5, 1], 0, 5);
        let e = c.length(Prefix::Int16, "int16", "string").unwrap_err();
        assert_eq!((e.offset, c.pos), (0, 0));
        assert_eq!(e.detail.to_string(), "string length -3 is negative");
        c.pos = 2;
        let e = c.length(Prefix::Int16, "int16", "string").unwrap_err();
        assert_eq!(
            e.detail.to_string(),
            "string length 5 exceeds the 1 bytes left"
        );
        assert_eq!(
            e.to_string(),
            "at 0x0002: string length 5 exceeds the 1 bytes left"
        );
    }

    #[test]
    fn varints_are_zigzag_and_at_most_ten_bytes() {
        let mut c = Cursor::new(&[0x03, 0x04], 0, 2);
        assert_eq!(c.varint("n").unwrap(), -2);
        assert_eq!(c.varint("n").unwrap(), 2);
        let long = [0xffu8; 11];
        let mut c = Cursor::new(&long, 0, 11);
        assert_eq!(
            c.varint("n").unwrap_err().detail.to_string(),
            "n: varint longer than 10 bytes"
        );
        assert_eq!(c.pos, 0);
    }
}

/// A string's text, invalid UTF-8 replaced. Kafka's strings are almost always valid (and
/// mostly ASCII): `str::from_utf8` checks them a word at a time, where `from_utf8_lossy`
/// walks its chunks byte by byte before finding there is nothing to replace.
pub(crate) fn lossy_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

#[cfg(test)]
mod text_tests {
    #[test]
    fn lossy_text_is_from_utf8_lossy() {
        let cases: [&[u8]; 6] = [
            b"",
            b"orders",
            "caf\u{e9}".as_bytes(),
            b"a\xffb",
            b"\xe2\x82",
            b"x\xc0\xafy",
        ];
        for b in cases {
            assert_eq!(super::lossy_text(b), String::from_utf8_lossy(b));
        }
    }
}
