//! pcap and pcapng files, told apart by their magic, read as a stream of records with one
//! reused buffer. pcapng blocks are parsed by `pcap-parser`; the record framing is ours so that
//! every error names its file offset and no buffer is sized by an unchecked length.

use super::cut::{self, LeftOut, TopicNamed};
use pcap_parser::pcapng::{parse_block_be, parse_block_le, Block};
use pcap_parser::{OptionCode, PcapNGOption};
use std::fmt;
use std::io::{self, Read};

/// Largest record we accept. Real snap lengths are at most 256 KiB; anything far above that is
/// a corrupt length, not a packet.
pub const MAX_RECORD: usize = 16 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Pcap { nanos: bool, big_endian: bool },
    PcapNg,
}

/// One captured packet.
#[derive(Debug, Clone, Copy)]
pub struct Packet<'a> {
    /// 1-based number of the packet in the file, as tshark counts.
    pub number: u64,
    /// Nanoseconds since the Unix epoch.
    pub ts_nanos: i64,
    /// Link type (pcap LINKTYPE_ value).
    pub linktype: u32,
    pub data: &'a [u8],
    /// Length of the packet on the wire (more than `data.len()` when the snap length cut it).
    pub orig_len: u32,
    /// Offset of the packet's record in the file.
    pub file_offset: u64,
    /// Digits of a second its timestamp carries (6 or 9).
    pub precision: u8,
    /// What a cut (`-w`) left out around this packet, as its pcapng comments note it.
    pub left_out: &'a [LeftOut],
    /// Topic ids a cut (`-w`) named in this packet's pcapng comments, for the messages after.
    pub topics: &'a [TopicNamed],
    /// TLS key log text of the pcapng Decryption Secrets Blocks read since the previous
    /// packet (type 0x544c534b, as `editcap --inject-secrets tls,KEYS` writes).
    pub secrets: &'a [Vec<u8>],
}

#[derive(Debug)]
pub enum CaptureError {
    NotACapture {
        magic: [u8; 4],
    },
    Empty,
    /// The file ends inside a record (a truncated last record).
    Truncated {
        offset: u64,
        what: &'static str,
        need: usize,
        have: usize,
    },
    /// A record whose length field makes no sense; the rest of the file cannot be framed.
    BadRecord {
        offset: u64,
        reason: String,
    },
    Io(io::Error),
}

impl fmt::Display for CaptureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CaptureError::NotACapture { magic } => match compressed(magic) {
                Some((name, _)) => write!(
                    f,
                    "{name}-compressed, not a pcap or pcapng file (first bytes {})",
                    hex::encode(magic)
                ),
                None => write!(
                    f,
                    "not a pcap or pcapng file (first bytes {})",
                    hex::encode(magic)
                ),
            },
            CaptureError::Empty => write!(f, "empty file"),
            CaptureError::Truncated { offset, what, need, have } => write!(
                f,
                "offset {offset}: the file ends inside a {what} ({have} of {need} bytes): truncated capture"
            ),
            CaptureError::BadRecord { offset, reason } => write!(f, "offset {offset}: {reason}"),
            CaptureError::Io(e) => write!(f, "read error: {e}"),
        }
    }
}

impl std::error::Error for CaptureError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CaptureError::Io(e) => Some(e),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Interface {
    linktype: u32,
    /// Units per second of this interface's timestamps.
    resolution: u64,
    offset_secs: i64,
}

/// Compression formats told by their magic, with the tool that undoes them.
pub fn compressed(magic: &[u8; 4]) -> Option<(&'static str, &'static str)> {
    match magic {
        [0x1f, 0x8b, ..] => Some(("gzip", "zcat")),
        [0x42, 0x5a, 0x68, _] => Some(("bzip2", "bzcat")),
        [0xfd, 0x37, 0x7a, 0x58] => Some(("xz", "xzcat")),
        [0x28, 0xb5, 0x2f, 0xfd] => Some(("zstd", "zstdcat")),
        [0x04, 0x22, 0x4d, 0x18] => Some(("lz4", "lz4cat")),
        _ => None,
    }
}

pub struct CaptureReader<R: Read> {
    r: Chunked<R>,
    pub format: Format,
    buf: Vec<u8>,
    offset: u64,
    number: u64,
    linktype: u32,
    ng_big_endian: bool,
    interfaces: Vec<Interface>,
    /// Non-fatal oddities (unknown interface ids and the like), for the caller to report.
    pub warnings: Vec<String>,
    /// The notes of a cut on the packet read last (`Packet::left_out`, `Packet::topics`).
    left_out: Vec<LeftOut>,
    topics: Vec<TopicNamed>,
    /// Comments meant as a cut's notes that do not read as one (forged or damaged), ignored;
    /// told once, at the end of the file.
    bad_notes: u64,
    /// Decryption secrets read before the packet read last (`Packet::secrets`).
    secrets: Vec<Vec<u8>>,
    /// Whether `secrets` went out with a packet and is to be emptied before the next.
    secrets_given: bool,
}

/// Bytes read from the input at a time: pcap records are parsed where they lie in this
/// buffer, rather than copied out of the input record by record (two reads through the
/// boxed reader a packet cost about as much as the rest of reading it).
const CHUNK: usize = 256 * 1024;

/// Every read asks for at least this much: a `BufReader` of at most this capacity before the
/// reader (`input::open`'s) then hands the read to its input rather than copying its own
/// buffer over (a copy that counts as one instruction a byte under callgrind).
const MIN_READ: usize = 64 * 1024;

/// The input, read in large pieces into one buffer whose unread part is `buf[start..end]`.
/// The buffer grows past [`CHUNK`] only for a record larger than it, at most to
/// [`MAX_RECORD`] and the record's header.
struct Chunked<R> {
    r: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl<R: Read> Chunked<R> {
    fn new(r: R) -> Self {
        Chunked {
            r,
            buf: Vec::new(),
            start: 0,
            end: 0,
        }
    }

    /// Reads until `n` bytes are unread, or the input ends; returns how many are (at most
    /// `n`). Reads no more than the input has ready: on a pipe it waits only for those `n`.
    fn fill(&mut self, n: usize) -> io::Result<usize> {
        if self.end - self.start >= n {
            return Ok(n);
        }
        if self.buf.len() - self.end < MIN_READ || self.buf.len() - self.start < n {
            // Too little room after the unread bytes (fewer than `n`): move them to the
            // front, and grow the buffer for a record larger than it.
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            let want = n.saturating_add(MIN_READ).max(CHUNK);
            if self.buf.len() < want {
                self.buf.resize(want, 0);
            }
        }
        while self.end - self.start < n {
            match self
                .r
                .read(self.buf.get_mut(self.end..).unwrap_or_default())
            {
                Ok(0) => break,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok((self.end - self.start).min(n))
    }

    /// The next `n` unread bytes (`fill` made them ready), now read.
    fn next_bytes(&mut self, n: usize) -> &[u8] {
        let at = self.start;
        self.start += n;
        self.buf.get(at..at + n).unwrap_or_default()
    }
}

/// What pcapng blocks and file headers read: copied out of the buffer.
impl<R: Read> Read for Chunked<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.fill(out.len().min(CHUNK))?;
        let n = n.min(out.len());
        out.get_mut(..n)
            .unwrap_or_default()
            .copy_from_slice(self.next_bytes(n));
        Ok(n)
    }
}

/// Fills `buf` exactly; returns how many bytes were read before the end of the input.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(buf.get_mut(n..).unwrap_or_default()) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[inline]
fn u32_at(b: &[u8], at: usize, big: bool) -> u32 {
    let mut a = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        a.copy_from_slice(s);
    }
    if big {
        u32::from_be_bytes(a)
    } else {
        u32::from_le_bytes(a)
    }
}

impl<R: Read> CaptureReader<R> {
    /// Reads the file header and tells the format by its magic.
    pub fn new(r: R) -> Result<CaptureReader<R>, CaptureError> {
        let mut r = Chunked::new(r);
        let mut magic = [0u8; 4];
        let n = read_full(&mut r, &mut magic).map_err(CaptureError::Io)?;
        if n == 0 {
            return Err(CaptureError::Empty);
        }
        if n < 4 {
            return Err(CaptureError::Truncated {
                offset: 0,
                what: "file header",
                need: 4,
                have: n,
            });
        }
        let format = match magic {
            [0xd4, 0xc3, 0xb2, 0xa1] => Format::Pcap {
                nanos: false,
                big_endian: false,
            },
            [0xa1, 0xb2, 0xc3, 0xd4] => Format::Pcap {
                nanos: false,
                big_endian: true,
            },
            [0x4d, 0x3c, 0xb2, 0xa1] => Format::Pcap {
                nanos: true,
                big_endian: false,
            },
            [0xa1, 0xb2, 0x3c, 0x4d] => Format::Pcap {
                nanos: true,
                big_endian: true,
            },
            [0x0a, 0x0d, 0x0d, 0x0a] => Format::PcapNg,
            _ => return Err(CaptureError::NotACapture { magic }),
        };
        let mut cr = CaptureReader {
            r,
            format,
            buf: Vec::with_capacity(65536),
            offset: 4,
            number: 0,
            linktype: 0,
            ng_big_endian: false,
            interfaces: Vec::new(),
            warnings: Vec::new(),
            left_out: Vec::new(),
            topics: Vec::new(),
            bad_notes: 0,
            secrets: Vec::new(),
            secrets_given: false,
        };
        match format {
            Format::Pcap { big_endian, .. } => {
                let mut h = [0u8; 20];
                let n = read_full(&mut cr.r, &mut h).map_err(CaptureError::Io)?;
                if n < 20 {
                    return Err(CaptureError::Truncated {
                        offset: 4,
                        what: "pcap file header",
                        need: 24,
                        have: n + 4,
                    });
                }
                cr.linktype = u32_at(&h, 16, big_endian) & 0x0fff_ffff;
                cr.offset = 24;
            }
            Format::PcapNg => {
                // The section header block: read it whole so that the block loop starts clean.
                cr.buf.clear();
                cr.buf.extend_from_slice(&magic);
                cr.read_ng_block_rest(0)?;
                cr.ng_section()?;
            }
        }
        Ok(cr)
    }

    /// After the 4-byte block type in `buf`, reads the length and the rest of the block.
    fn read_ng_block_rest(&mut self, start: u64) -> Result<(), CaptureError> {
        let mut len_b = [0u8; 4];
        let n = read_full(&mut self.r, &mut len_b).map_err(CaptureError::Io)?;
        if n < 4 {
            return Err(CaptureError::Truncated {
                offset: start,
                what: "pcapng block header",
                need: 8,
                have: 4 + n,
            });
        }
        self.buf.extend_from_slice(&len_b);
        let is_shb = self.buf.get(0..4) == Some(&[0x0a, 0x0d, 0x0d, 0x0a][..]);
        if is_shb {
            // The byte-order magic follows; the length's byte order depends on it.
            let mut bom = [0u8; 4];
            let n = read_full(&mut self.r, &mut bom).map_err(CaptureError::Io)?;
            if n < 4 {
                return Err(CaptureError::Truncated {
                    offset: start,
                    what: "pcapng section header",
                    need: 12,
                    have: 8 + n,
                });
            }
            self.ng_big_endian = match bom {
                [0x1a, 0x2b, 0x3c, 0x4d] => true,
                [0x4d, 0x3c, 0x2b, 0x1a] => false,
                _ => {
                    return Err(CaptureError::BadRecord {
                        offset: start,
                        reason: format!(
                            "pcapng section header with byte-order magic {}",
                            hex::encode(bom)
                        ),
                    })
                }
            };
            self.buf.extend_from_slice(&bom);
        }
        let len = u32_at(&len_b, 0, self.ng_big_endian) as usize;
        if len < 12 || len % 4 != 0 || len > MAX_RECORD {
            return Err(CaptureError::BadRecord {
                offset: start,
                reason: format!(
                    "pcapng block length {len} is not a multiple of 4 between 12 and {MAX_RECORD}"
                ),
            });
        }
        let have = self.buf.len();
        self.buf.resize(len, 0);
        let n = read_full(&mut self.r, self.buf.get_mut(have..).unwrap_or_default())
            .map_err(CaptureError::Io)?;
        if have + n < len {
            return Err(CaptureError::Truncated {
                offset: start,
                what: "pcapng block",
                need: len,
                have: have + n,
            });
        }
        self.offset = start + len as u64;
        Ok(())
    }

    /// The warnings so far (`warnings`), with the comments meant as a cut's notes that did
    /// not read as one.
    pub fn take_warnings(&mut self) -> Vec<String> {
        let bad = std::mem::take(&mut self.bad_notes);
        if bad > 0 {
            let noun = if bad == 1 { "comment" } else { "comments" };
            self.warnings.push(format!(
                "{bad} packet {noun} of the form of kdissect -w's notes did not read as one (forged or damaged); ignored"
            ));
        }
        std::mem::take(&mut self.warnings)
    }

    fn ng_section(&mut self) -> Result<(), CaptureError> {
        // A new section starts a new set of interfaces.
        self.interfaces.clear();
        Ok(())
    }

    /// The next packet, `Ok(None)` at the end of the file.
    pub fn next_packet(&mut self) -> Result<Option<Packet<'_>>, CaptureError> {
        match self.format {
            Format::Pcap { nanos, big_endian } => self.next_pcap(nanos, big_endian),
            Format::PcapNg => self.next_ng(),
        }
    }

    fn next_pcap(&mut self, nanos: bool, big: bool) -> Result<Option<Packet<'_>>, CaptureError> {
        let start = self.offset;
        let n = self.r.fill(16).map_err(CaptureError::Io)?;
        if n == 0 {
            return Ok(None);
        }
        if n < 16 {
            return Err(CaptureError::Truncated {
                offset: start,
                what: "packet record header",
                need: 16,
                have: n,
            });
        }
        let h = self.r.next_bytes(16);
        let ts_sec = u32_at(h, 0, big);
        let ts_frac = u32_at(h, 4, big);
        let caplen = u32_at(h, 8, big) as usize;
        let orig_len = u32_at(h, 12, big);
        if caplen > MAX_RECORD {
            return Err(CaptureError::BadRecord {
                offset: start,
                reason: format!("packet record claims {caplen} captured bytes (more than {MAX_RECORD}): corrupt record length"),
            });
        }
        // The record is read where it lies in the input's buffer.
        let n = self.r.fill(caplen).map_err(CaptureError::Io)?;
        if n < caplen {
            return Err(CaptureError::Truncated {
                offset: start,
                what: "packet record",
                need: 16 + caplen,
                have: 16 + n,
            });
        }
        self.offset = start + 16 + caplen as u64;
        self.number += 1;
        let frac_ns = if nanos {
            i64::from(ts_frac)
        } else {
            i64::from(ts_frac) * 1000
        };
        Ok(Some(Packet {
            number: self.number,
            ts_nanos: i64::from(ts_sec) * 1_000_000_000 + frac_ns,
            linktype: self.linktype,
            data: self.r.next_bytes(caplen),
            orig_len: orig_len.max(caplen as u32),
            file_offset: start,
            precision: if nanos { 9 } else { 6 },
            left_out: &[],
            topics: &[],
            secrets: &[],
        }))
    }

    fn next_ng(&mut self) -> Result<Option<Packet<'_>>, CaptureError> {
        if std::mem::take(&mut self.secrets_given) {
            self.secrets.clear();
        }
        loop {
            let start = self.offset;
            let Some(block_type) = self.read_ng_block(start)? else {
                return Ok(None);
            };
            if block_type == [0x0a, 0x0d, 0x0d, 0x0a] {
                self.ng_section()?;
                continue;
            }
            if let Some(found) = self.ng_packet(start) {
                self.number += 1;
                self.left_out = found.notes.left_out;
                self.topics = found.notes.topics;
                return Ok(Some(Packet {
                    number: self.number,
                    ts_nanos: found.ts_nanos,
                    linktype: found.linktype,
                    data: self.buf.get(found.data.clone()).unwrap_or(&[]),
                    orig_len: found.orig_len,
                    file_offset: start,
                    precision: found.precision,
                    left_out: &self.left_out,
                    topics: &self.topics,
                    secrets: {
                        self.secrets_given = !self.secrets.is_empty();
                        &self.secrets
                    },
                }));
            }
        }
    }

    /// Reads the pcapng block at `start` into `buf`; its block type, or `None` at the end of
    /// the file.
    fn read_ng_block(&mut self, start: u64) -> Result<Option<[u8; 4]>, CaptureError> {
        let mut t = [0u8; 4];
        let n = read_full(&mut self.r, &mut t).map_err(CaptureError::Io)?;
        if n == 0 {
            return Ok(None);
        }
        if n < 4 {
            return Err(CaptureError::Truncated {
                offset: start,
                what: "pcapng block header",
                need: 8,
                have: n,
            });
        }
        self.buf.clear();
        self.buf.extend_from_slice(&t);
        self.read_ng_block_rest(start)?;
        Ok(Some(t))
    }

    /// The packet in the block in `buf`, if it holds one; an interface description is
    /// remembered, and a block that does not parse is skipped with a warning.
    fn ng_packet(&mut self, start: u64) -> Option<NgPacket> {
        let parsed = if self.ng_big_endian {
            parse_block_be(&self.buf)
        } else {
            parse_block_le(&self.buf)
        };
        let block = match parsed {
            Ok((_, b)) => b,
            Err(e) => {
                self.warnings.push(format!(
                    "offset {start}: pcapng block not understood ({e:?}); skipped"
                ));
                return None;
            }
        };
        let base = self.buf.as_ptr() as usize;
        match block {
            Block::InterfaceDescription(idb) => {
                self.interfaces.push(Interface {
                    linktype: idb.linktype.0 as u32,
                    resolution: idb.ts_resolution().unwrap_or(1_000_000),
                    offset_secs: idb.ts_offset(),
                });
                None
            }
            Block::EnhancedPacket(epb) => {
                let Some(iface) = self.interfaces.get(epb.if_id as usize).copied() else {
                    self.warnings.push(format!(
                        "offset {start}: packet on interface {} that no interface block describes; skipped",
                        epb.if_id
                    ));
                    return None;
                };
                let units = (u64::from(epb.ts_high) << 32) | u64::from(epb.ts_low);
                let res = iface.resolution.max(1);
                let secs = (units / res) as i64 + iface.offset_secs;
                let nanos = (u128::from(units % res) * 1_000_000_000 / u128::from(res)) as i64;
                let caplen = (epb.caplen as usize).min(epb.data.len());
                let data_off = epb.data.as_ptr() as usize - base;
                Some(NgPacket {
                    data: data_off..data_off + caplen,
                    ts_nanos: secs.saturating_mul(1_000_000_000).saturating_add(nanos),
                    linktype: iface.linktype,
                    orig_len: epb.origlen.max(caplen as u32),
                    precision: if res > 1_000_000 { 9 } else { 6 },
                    notes: cut_notes(&epb.options, &mut self.bad_notes),
                })
            }
            Block::DecryptionSecrets(dsb) => {
                add_secrets(&mut self.secrets, &mut self.warnings, start, &dsb);
                None
            }
            Block::SimplePacket(spb) => {
                // A simple packet block has no timestamp and belongs to the first interface.
                let iface = self.interfaces.first().copied()?;
                let data_off = spb.data.as_ptr() as usize - base;
                let len = spb.data.len();
                Some(NgPacket {
                    data: data_off..data_off + len,
                    ts_nanos: 0,
                    linktype: iface.linktype,
                    orig_len: spb.origlen.max(len as u32),
                    precision: if iface.resolution > 1_000_000 { 9 } else { 6 },
                    notes: Notes::default(),
                })
            }
            _ => None,
        }
    }
}

/// Decryption secrets held before one packet, at most: the budget a key log file read with
/// `--tls-keylog` has too (64 MiB), kept here so that reading a capture needs nothing of TLS.
pub const MAX_SECRETS_BYTES: usize = 64 * 1024 * 1024;

/// Keeps the key log text of a TLS Decryption Secrets Block for the next packet; other kinds
/// (WireGuard) are skipped. Each block is bounded by the reader's block size limit, and what
/// is held before one packet by the key log budget.
fn add_secrets(
    secrets: &mut Vec<Vec<u8>>,
    warnings: &mut Vec<String>,
    start: u64,
    dsb: &pcap_parser::pcapng::DecryptionSecretsBlock<'_>,
) {
    let held: usize = secrets.iter().map(Vec::len).sum();
    if held > MAX_SECRETS_BYTES {
        warnings.push(format!(
            "offset {start}: decryption secrets past {} MiB before one packet; skipped",
            MAX_SECRETS_BYTES >> 20
        ));
    } else if dsb.secrets_type == pcap_parser::pcapng::SecretsType::TlsKeyLog {
        let len = (dsb.secrets_len as usize).min(dsb.data.len());
        secrets.push(dsb.data.get(..len).unwrap_or_default().to_vec());
    } else {
        warnings.push(format!(
            "offset {start}: decryption secrets of type 0x{:08x} (not TLS); skipped",
            dsb.secrets_type.0
        ));
    }
}

/// Where a pcapng packet lies in the block buffer, and what its block says of it.
struct NgPacket {
    data: std::ops::Range<usize>,
    ts_nanos: i64,
    linktype: u32,
    orig_len: u32,
    precision: u8,
    notes: Notes,
}

/// What a cut noted in a packet's comments.
#[derive(Default)]
struct Notes {
    left_out: Vec<LeftOut>,
    topics: Vec<TopicNamed>,
}

/// The notes a cut left in a packet's comments (pcapng option 1, `opt_comment`); a comment
/// meant as one that does not read is counted in `bad`. Other comments are anyone's.
fn cut_notes(options: &[PcapNGOption<'_>], bad: &mut u64) -> Notes {
    let mut notes = Notes::default();
    for o in options.iter().filter(|o| o.code == OptionCode::Comment) {
        let Ok(text) = o.as_str() else {
            continue;
        };
        if let Some(l) = LeftOut::parse(text) {
            notes.left_out.push(l);
        } else if let Some(t) = TopicNamed::parse(text) {
            // A cut writes at most `MAX_TOPIC_NOTES` on a packet: past them a block of
            // forged notes would hold many times its size in names.
            if notes.topics.len() < cut::MAX_TOPIC_NOTES {
                notes.topics.push(t);
            } else {
                *bad += 1;
            }
        } else if cut::is_note(text) {
            *bad += 1;
        }
    }
    notes
}
