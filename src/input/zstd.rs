//! zstd-compressed input (`capture.pcap.zst`): every frame of the file in turn, as `zstd -d`
//! reads it, each checked before decoding against the largest window allowed.
//!
//! A zstd frame declares the window its decoder must keep (RFC 8878, 3.1.1.1.2): up to 2 GiB
//! from `zstd --long=31`, and more in principle. The decoder keeps that much decoded history, so
//! a few kilobytes of input could make it hold gigabytes. As zstd's own decoder does, a frame
//! whose window is over the limit (by default 128 MiB, zstd's window log 27) is refused before
//! anything is allocated, with an error that names the flag raising the limit.

use std::fmt;
use std::io::{self, Chain, Cursor, Read};

/// The magic number of a zstd frame, as the bytes are in the file.
pub const MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// A frame whose window is larger than allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowTooLarge {
    /// The frame, counted from 1 over the file (skippable frames included).
    pub frame: u64,
    /// The window it declares, in bytes.
    pub window: u64,
    /// The limit (`--max-zstd-window`).
    pub max: u64,
}

impl fmt::Display for WindowTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "zstd frame {} needs a window of {}, more than --max-zstd-window ({}): give \
             --max-zstd-window {} to read it (decoding then holds up to twice that)",
            self.frame,
            size_text(self.window),
            size_text(self.max),
            size_flag(self.window)
        )
    }
}

impl std::error::Error for WindowTooLarge {}

/// What a frame header says, or why it cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderError {
    /// The frame does not start with a zstd or skippable-frame magic number.
    NotAFrame { frame: u64, magic: [u8; 4] },
    /// The reserved bit of the frame header descriptor is set.
    Reserved { frame: u64 },
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::NotAFrame { frame, magic } => write!(
                f,
                "zstd: what follows frame {} is not a zstd frame (first bytes {})",
                frame - 1,
                hex::encode(magic)
            ),
            HeaderError::Reserved { frame } => write!(
                f,
                "zstd frame {frame}: the header's reserved bit is set (not a zstd frame)"
            ),
        }
    }
}

impl std::error::Error for HeaderError {}

/// `2 GiB`, `128 MiB`, `72301 bytes`.
fn size_text(n: u64) -> String {
    const MIB: u64 = 1 << 20;
    if n >= 1 << 30 && n % (1 << 30) == 0 {
        format!("{} GiB", n >> 30)
    } else if n >= MIB && n % MIB == 0 {
        format!("{} MiB", n >> 20)
    } else if n >= MIB {
        format!("{:.1} MiB", n as f64 / MIB as f64)
    } else {
        format!("{n} bytes")
    }
}

/// The smallest flag value (K/M/G, as the flag reads them) that allows `n` bytes.
fn size_flag(n: u64) -> String {
    if n % (1 << 30) == 0 {
        format!("{}G", n >> 30)
    } else if n >= 1 << 20 {
        format!("{}M", n.div_ceil(1 << 20))
    } else {
        format!("{}K", n.div_ceil(1 << 10))
    }
}

/// Where a frame header's fields lie, from its descriptor byte (RFC 8878, 3.1.1.1.1).
struct Descriptor {
    single_segment: bool,
    /// Bytes of Dictionary_ID.
    dict_len: usize,
    /// Bytes of Frame_Content_Size.
    fcs_len: usize,
}

impl Descriptor {
    fn new(fhd: u8) -> Descriptor {
        let single_segment = fhd & 0x20 != 0;
        let fcs_len = match fhd >> 6 {
            0 => usize::from(single_segment),
            1 => 2,
            2 => 4,
            _ => 8,
        };
        Descriptor {
            single_segment,
            dict_len: [0, 1, 2, 4][usize::from(fhd & 3)],
            fcs_len,
        }
    }

    /// Bytes after the descriptor: Window_Descriptor, Dictionary_ID, Frame_Content_Size.
    fn rest_len(&self) -> usize {
        usize::from(!self.single_segment) + self.dict_len + self.fcs_len
    }
}

/// The window the header declares: Window_Descriptor's, or for a single-segment frame its
/// content size (the whole content is the window). `rest` is what follows the descriptor.
fn window(d: &Descriptor, rest: &[u8]) -> u64 {
    if d.single_segment {
        let fcs = rest.get(d.dict_len..).unwrap_or_default();
        let mut v = [0u8; 8];
        for (dst, src) in v.iter_mut().zip(fcs) {
            *dst = *src;
        }
        let n = u64::from_le_bytes(v);
        // A 2-byte field counts from 256.
        return if d.fcs_len == 2 { n + 256 } else { n };
    }
    let wd = rest.first().copied().unwrap_or(0);
    let base = 1u64 << (10 + (wd >> 3));
    base + (base / 8) * u64::from(wd & 7)
}

/// The source of the next frame: the header bytes already read, then the rest of the input.
type FrameSource<R> = Chain<Cursor<Vec<u8>>, R>;
type Decoder<R> =
    ruzstd::decoding::StreamingDecoder<FrameSource<R>, ruzstd::decoding::FrameDecoder>;

/// Reads every frame of a zstd stream, skipping skippable frames and refusing a frame whose
/// window is over `max_window`.
pub struct Frames<R: Read> {
    /// The input, between frames.
    source: Option<R>,
    /// The frame being decoded.
    frame: Option<Decoder<R>>,
    max_window: u64,
    /// Frames begun so far.
    frames: u64,
}

impl<R: Read> Frames<R> {
    /// Opens the stream and its first frame: an error here (a window over the limit, a
    /// header that is not zstd's) comes before anything is decoded.
    pub fn new(source: R, max_window: u64) -> io::Result<Frames<R>> {
        let mut f = Frames {
            source: Some(source),
            frame: None,
            max_window,
            frames: 0,
        };
        f.next_frame()?;
        Ok(f)
    }

    /// Starts the next frame; false at the end of the input.
    fn next_frame(&mut self) -> io::Result<bool> {
        loop {
            let Some(mut src) = self.source.take() else {
                return Ok(false);
            };
            let mut magic = [0u8; 4];
            if !read_or_end(&mut src, &mut magic)? {
                return Ok(false);
            }
            self.frames += 1;
            if magic[1..] == [0x2a, 0x4d, 0x18] && magic[0] & 0xf0 == 0x50 {
                skip_frame(&mut src)?;
                self.source = Some(src);
                continue;
            }
            if magic != MAGIC {
                return Err(invalid(HeaderError::NotAFrame {
                    frame: self.frames,
                    magic,
                }));
            }
            let header = self.checked_header(&mut src)?;
            let chained = Cursor::new(header).chain(src);
            let d = ruzstd::decoding::StreamingDecoder::new(chained)
                .map_err(|e| invalid(format!("zstd frame {}: {e}", self.frames)))?;
            self.frame = Some(d);
            return Ok(true);
        }
    }

    /// Reads the rest of a frame header (after the magic number) and checks its window;
    /// returns the header's bytes, magic included, for the decoder to read again.
    fn checked_header(&self, src: &mut R) -> io::Result<Vec<u8>> {
        let mut fhd = [0u8; 1];
        src.read_exact(&mut fhd)?;
        if fhd[0] & 0x08 != 0 {
            return Err(invalid(HeaderError::Reserved { frame: self.frames }));
        }
        let d = Descriptor::new(fhd[0]);
        let mut rest = vec![0u8; d.rest_len()];
        src.read_exact(&mut rest)?;
        let window = window(&d, &rest);
        if window > self.max_window {
            return Err(invalid(WindowTooLarge {
                frame: self.frames,
                window,
                max: self.max_window,
            }));
        }
        let mut header = MAGIC.to_vec();
        header.push(fhd[0]);
        header.extend(rest);
        Ok(header)
    }
}

impl<R: Read> Read for Frames<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if let Some(d) = &mut self.frame {
                let n = d.read(buf)?;
                if n > 0 {
                    return Ok(n);
                }
                // The frame is over: the input goes on after it.
                if let Some(d) = self.frame.take() {
                    let (chained, _) = d.into_parts();
                    self.source = Some(chained.into_inner().1);
                }
            }
            if !self.next_frame()? {
                return Ok(0);
            }
        }
    }
}

/// Fills `buf`; false if the input ended before its first byte.
fn read_or_end(src: &mut impl Read, buf: &mut [u8]) -> io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match src.read(buf.get_mut(got..).unwrap_or_default()) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "zstd: the input ends inside a frame's magic number",
                ))
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// Skips a skippable frame's content (its size is little-endian after the magic number),
/// reading it in pieces rather than holding it.
fn skip_frame(src: &mut impl Read) -> io::Result<()> {
    let mut size = [0u8; 4];
    src.read_exact(&mut size)?;
    let n = u64::from(u32::from_le_bytes(size));
    let skipped = io::copy(&mut src.take(n), &mut io::sink())?;
    if skipped < n {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "zstd: the input ends inside a skippable frame",
        ));
    }
    Ok(())
}

fn invalid(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The flag's default (`--max-zstd-window 128M`): zstd's own limit
    /// (`ZSTD_WINDOWLOG_LIMIT_DEFAULT`, window log 27), past which `zstd -d` asks for `--long`
    /// or `--memory` too.
    const DEFAULT_MAX_WINDOW: u64 = 128 << 20;

    /// A zstd frame holding `data` in raw blocks, with the descriptor byte `fhd` and the header
    /// fields `fields` (Window_Descriptor, Dictionary_ID, Frame_Content_Size as `fhd` says).
    fn raw_frame(fhd: u8, fields: &[u8], data: &[u8]) -> Vec<u8> {
        let mut f = MAGIC.to_vec();
        f.push(fhd);
        f.extend_from_slice(fields);
        let mut chunks = data.chunks(100).peekable();
        if chunks.peek().is_none() {
            f.extend_from_slice(&[1, 0, 0]);
        }
        while let Some(c) = chunks.next() {
            let last = u32::from(chunks.peek().is_none());
            let hdr = ((c.len() as u32) << 3) | last;
            f.extend_from_slice(&hdr.to_le_bytes()[..3]);
            f.extend_from_slice(c);
        }
        f
    }

    fn read_all(bytes: &[u8], max: u64) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        Frames::new(bytes, max)?.read_to_end(&mut out)?;
        Ok(out)
    }

    fn window_of(fhd: u8, rest: &[u8]) -> u64 {
        window(&Descriptor::new(fhd), rest)
    }

    #[test]
    fn windows_as_the_header_declares_them() {
        // Window_Descriptor: exponent 17 (2^27), mantissa 0; exponent 21 (2^31) from --long=31.
        assert_eq!(window_of(0x00, &[17 << 3]), 128 << 20);
        assert_eq!(window_of(0x04, &[21 << 3]), 2 << 30);
        // Mantissa 3: 2^20 + 3/8 of it.
        assert_eq!(window_of(0x00, &[(10 << 3) | 3]), (1 << 20) + 3 * (1 << 17));
        // Single segment: the content size is the window (1 byte, 2 bytes from 256, 8 bytes),
        // after the dictionary id when there is one.
        assert_eq!(window_of(0x20, &[200]), 200);
        assert_eq!(window_of(0x60, &[0x00, 0x01]), 256 + 256);
        assert_eq!(window_of(0xe1, &[7, 0, 0, 0, 0, 0, 0, 0x01, 0]), 1 << 48);
    }

    #[test]
    fn every_frame_is_read_and_skippable_frames_skipped() {
        let mut file = raw_frame(0x00, &[0], b"first frame, ");
        file.extend_from_slice(&[0x5a, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3]);
        file.extend(raw_frame(0x20, &[11], b"second one."));
        let out = read_all(&file, DEFAULT_MAX_WINDOW).expect("decodes");
        assert_eq!(out, b"first frame, second one.");
    }

    #[test]
    fn a_window_over_the_limit_is_refused_before_decoding() {
        // 2 GiB, as `zstd --long=31` writes into a stream of unknown size.
        let big = raw_frame(0x00, &[21 << 3], b"x");
        let e = read_all(&big, DEFAULT_MAX_WINDOW).expect_err("refused");
        let w = e
            .get_ref()
            .and_then(|e| e.downcast_ref::<WindowTooLarge>())
            .expect("WindowTooLarge");
        assert_eq!((w.frame, w.window, w.max), (1, 2 << 30, DEFAULT_MAX_WINDOW));
        assert_eq!(
            e.to_string(),
            "zstd frame 1 needs a window of 2 GiB, more than --max-zstd-window (128 MiB): give \
             --max-zstd-window 2G to read it (decoding then holds up to twice that)"
        );
        assert_eq!(read_all(&big, 2 << 30).expect("allowed"), b"x");
        // A later frame is checked too, and a single-segment frame by its content size.
        let mut two = raw_frame(0x00, &[0], b"ok");
        two.extend(raw_frame(0xa0, &[0, 0, 0, 0x40], b"y"));
        let e = read_all(&two, DEFAULT_MAX_WINDOW).expect_err("refused");
        assert!(
            e.to_string()
                .starts_with("zstd frame 2 needs a window of 1 GiB"),
            "{e}"
        );
    }

    #[test]
    fn what_is_not_a_frame_is_an_error() {
        let mut file = raw_frame(0x00, &[0], b"ok");
        file.extend_from_slice(b"PK\x03\x04junk");
        let e = read_all(&file, DEFAULT_MAX_WINDOW).expect_err("junk");
        assert_eq!(
            e.to_string(),
            "zstd: what follows frame 1 is not a zstd frame (first bytes 504b0304)"
        );
        let e = read_all(&raw_frame(0x08, &[0], b""), DEFAULT_MAX_WINDOW).expect_err("reserved");
        assert!(e.to_string().contains("reserved bit"), "{e}");
    }

    #[test]
    fn sizes_read_as_the_flag_takes_them() {
        assert_eq!(size_flag(2 << 30), "2G");
        assert_eq!(size_flag((128 << 20) + 1), "129M");
        assert_eq!(size_flag(72301), "71K");
        assert_eq!(size_text(72301), "72301 bytes");
        assert_eq!(size_text(3 << 19), "1.5 MiB");
    }
}
