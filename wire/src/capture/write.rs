//! Writing packets back out as a capture (`-w`): classic pcap, or pcapng, that tshark and
//! Wireshark open. Each packet keeps its timestamp, link type, captured bytes and original
//! length; nothing is re-encoded.

use super::pcap::Packet;
use std::io::{self, Write};

/// Which file format to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutFormat {
    Pcap,
    PcapNg,
}

/// Snap length written in headers: larger than any packet read (records are at most 16 MiB).
const SNAPLEN: u32 = 262_144;

/// A capture being written. The header goes out with the first packet, so that a pcap file
/// carries that packet's link type and timestamp precision.
pub struct CaptureWriter<W: Write> {
    out: W,
    format: OutFormat,
    started: bool,
    /// pcap: the link type of the file; pcapng: the interfaces written (link type, nanos).
    linktype: u32,
    nanos: bool,
    interfaces: Vec<(u32, bool)>,
    pub written: u64,
    /// Packets left out because a classic pcap holds one link type.
    pub skipped: u64,
}

impl<W: Write> CaptureWriter<W> {
    pub fn new(out: W, format: OutFormat) -> CaptureWriter<W> {
        CaptureWriter {
            out,
            format,
            started: false,
            linktype: 0,
            nanos: false,
            interfaces: Vec::new(),
            written: 0,
            skipped: 0,
        }
    }

    pub fn write(&mut self, p: &Packet<'_>) -> io::Result<()> {
        self.write_with(p, &[])
    }

    /// Writes a packet with comments (pcapng packet comments; a classic pcap has no place
    /// for them).
    pub fn write_with(&mut self, p: &Packet<'_>, comments: &[String]) -> io::Result<()> {
        match self.format {
            OutFormat::Pcap => self.write_pcap(p),
            OutFormat::PcapNg => self.write_ng(p, comments),
        }
    }

    /// pcapng: a Decryption Secrets Block of TLS key log text (type 0x544c534b, as
    /// `editcap --inject-secrets tls,KEYS` writes), before the packets it decrypts. A classic
    /// pcap has no place for it.
    pub fn write_secrets(&mut self, keylog: &[u8]) -> io::Result<()> {
        if self.format != OutFormat::PcapNg || keylog.is_empty() {
            return Ok(());
        }
        if !self.started {
            self.section_header()?;
        }
        let mut dsb = Vec::with_capacity(8 + keylog.len());
        dsb.extend_from_slice(&0x544c_534bu32.to_le_bytes());
        dsb.extend_from_slice(&(keylog.len() as u32).to_le_bytes());
        dsb.extend_from_slice(keylog);
        self.block(0x0000_000a, &dsb)
    }

    /// Flushes and hands back the output.
    pub fn finish(mut self) -> io::Result<W> {
        if !self.started && self.format == OutFormat::PcapNg {
            // An empty capture is still a valid file.
            self.section_header()?;
        }
        self.out.flush()?;
        Ok(self.out)
    }

    fn write_pcap(&mut self, p: &Packet<'_>) -> io::Result<()> {
        if !self.started {
            self.started = true;
            self.linktype = p.linktype;
            self.nanos = p.precision >= 9;
            let magic: u32 = if self.nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
            let mut h = Vec::with_capacity(24);
            h.extend_from_slice(&magic.to_le_bytes());
            h.extend_from_slice(&2u16.to_le_bytes());
            h.extend_from_slice(&4u16.to_le_bytes());
            h.extend_from_slice(&0i32.to_le_bytes());
            h.extend_from_slice(&0u32.to_le_bytes());
            h.extend_from_slice(&SNAPLEN.to_le_bytes());
            h.extend_from_slice(&p.linktype.to_le_bytes());
            self.out.write_all(&h)?;
        }
        if p.linktype != self.linktype {
            self.skipped += 1;
            return Ok(());
        }
        let secs = p.ts_nanos.div_euclid(1_000_000_000);
        let frac = p.ts_nanos.rem_euclid(1_000_000_000);
        let frac = if self.nanos { frac } else { frac / 1000 };
        let mut r = Vec::with_capacity(16 + p.data.len());
        r.extend_from_slice(&(secs as u32).to_le_bytes());
        r.extend_from_slice(&(frac as u32).to_le_bytes());
        r.extend_from_slice(&(p.data.len() as u32).to_le_bytes());
        r.extend_from_slice(&p.orig_len.to_le_bytes());
        r.extend_from_slice(p.data);
        self.out.write_all(&r)?;
        self.written += 1;
        Ok(())
    }

    fn block(&mut self, kind: u32, body: &[u8]) -> io::Result<()> {
        let pad = (4 - body.len() % 4) % 4;
        let len = (12 + body.len() + pad) as u32;
        let mut b = Vec::with_capacity(len as usize);
        b.extend_from_slice(&kind.to_le_bytes());
        b.extend_from_slice(&len.to_le_bytes());
        b.extend_from_slice(body);
        b.extend(std::iter::repeat_n(0u8, pad));
        b.extend_from_slice(&len.to_le_bytes());
        self.out.write_all(&b)
    }

    fn section_header(&mut self) -> io::Result<()> {
        self.started = true;
        let mut shb = Vec::new();
        shb.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
        shb.extend_from_slice(&1u16.to_le_bytes());
        shb.extend_from_slice(&0u16.to_le_bytes());
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        self.block(0x0a0d_0d0a, &shb)
    }

    /// The interface for (link type, precision), described on first use.
    fn interface(&mut self, linktype: u32, nanos: bool) -> io::Result<u32> {
        if let Some(i) = self.interfaces.iter().position(|x| *x == (linktype, nanos)) {
            return Ok(i as u32);
        }
        let mut idb = Vec::new();
        idb.extend_from_slice(&(linktype as u16).to_le_bytes());
        idb.extend_from_slice(&0u16.to_le_bytes());
        idb.extend_from_slice(&SNAPLEN.to_le_bytes());
        // if_tsresol (9): 10^-6 or 10^-9 seconds; then the end of options.
        idb.extend_from_slice(&9u16.to_le_bytes());
        idb.extend_from_slice(&1u16.to_le_bytes());
        idb.extend_from_slice(&[if nanos { 9 } else { 6 }, 0, 0, 0]);
        idb.extend_from_slice(&[0, 0, 0, 0]);
        self.block(1, &idb)?;
        self.interfaces.push((linktype, nanos));
        Ok(self.interfaces.len() as u32 - 1)
    }

    fn write_ng(&mut self, p: &Packet<'_>, comments: &[String]) -> io::Result<()> {
        if !self.started {
            self.section_header()?;
        }
        let nanos = p.precision >= 9;
        let iface = self.interface(p.linktype, nanos)?;
        let units = if nanos {
            p.ts_nanos
        } else {
            p.ts_nanos.div_euclid(1000)
        } as u64;
        let mut epb = Vec::with_capacity(20 + p.data.len());
        epb.extend_from_slice(&iface.to_le_bytes());
        epb.extend_from_slice(&((units >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(units as u32).to_le_bytes());
        epb.extend_from_slice(&(p.data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&p.orig_len.to_le_bytes());
        epb.extend_from_slice(p.data);
        epb.extend(std::iter::repeat_n(0u8, (4 - p.data.len() % 4) % 4));
        put_comments(&mut epb, comments);
        self.block(6, &epb)?;
        self.written += 1;
        Ok(())
    }
}

/// Block options: one `opt_comment` (1) per comment, padded to 4 bytes, then `opt_endofopt`.
/// A comment longer than an option can say is cut (ours are a line).
fn put_comments(block: &mut Vec<u8>, comments: &[String]) {
    if comments.is_empty() {
        return;
    }
    for c in comments {
        let text = c.as_bytes();
        let text = text
            .get(..text.len().min(usize::from(u16::MAX)))
            .unwrap_or(text);
        block.extend_from_slice(&1u16.to_le_bytes());
        block.extend_from_slice(&(text.len() as u16).to_le_bytes());
        block.extend_from_slice(text);
        block.extend(std::iter::repeat_n(0u8, (4 - text.len() % 4) % 4));
    }
    block.extend_from_slice(&[0, 0, 0, 0]);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::capture::pcap::CaptureReader;

    fn packet(n: u64, ts: i64, data: &[u8], precision: u8) -> Packet<'_> {
        Packet {
            number: n,
            ts_nanos: ts,
            linktype: 1,
            data,
            orig_len: data.len() as u32 + 10,
            file_offset: 0,
            precision,
            left_out: &[],
            topics: &[],
            secrets: &[],
        }
    }

    #[test]
    fn packets_read_back_as_written_in_both_formats() {
        for format in [OutFormat::Pcap, OutFormat::PcapNg] {
            for precision in [6u8, 9] {
                let mut w = CaptureWriter::new(Vec::new(), format);
                let ts = 1_767_225_600_123_456_789;
                w.write(&packet(1, ts, b"abc", precision)).unwrap();
                w.write(&packet(2, ts + 1_000, b"defgh", precision))
                    .unwrap();
                let bytes = w.finish().unwrap();
                let mut r = CaptureReader::new(&bytes[..]).unwrap();
                let unit = if precision == 9 { 1 } else { 1000 };
                for (data, t) in [(&b"abc"[..], ts), (&b"defgh"[..], ts + 1_000)] {
                    let p = r.next_packet().unwrap().unwrap();
                    assert_eq!(p.data, data);
                    assert_eq!(p.orig_len, data.len() as u32 + 10);
                    assert_eq!(p.ts_nanos, t / unit * unit, "{format:?} {precision}");
                    assert_eq!(p.linktype, 1);
                    assert_eq!(p.precision, precision);
                }
                assert!(r.next_packet().unwrap().is_none());
            }
        }
    }

    #[test]
    fn topic_notes_read_back_beside_the_packet_and_forged_ones_are_counted() {
        use crate::capture::cut::TopicNamed;
        let named = TopicNamed {
            id: [7; 16],
            name: "orders\n".into(),
        };
        let mut w = CaptureWriter::new(Vec::new(), OutFormat::PcapNg);
        let comments = vec![
            named.text(),
            "kdissect -w: topic 07070707 = \"cut short\"".to_string(),
            "someone's own comment".to_string(),
        ];
        w.write_with(&packet(1, 0, b"abc", 6), &comments).unwrap();
        w.write(&packet(2, 0, b"def", 6)).unwrap();
        let bytes = w.finish().unwrap();
        let mut r = CaptureReader::new(&bytes[..]).unwrap();
        assert_eq!(r.next_packet().unwrap().unwrap().topics, &[named][..]);
        assert!(r.next_packet().unwrap().unwrap().topics.is_empty());
        assert!(r.next_packet().unwrap().is_none());
        let warnings = r.take_warnings();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings
                .iter()
                .all(|w| w.starts_with("1 packet comment of")),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_packet_gives_at_most_the_notes_a_cut_writes() {
        use crate::capture::cut::{TopicNamed, MAX_TOPIC_NOTES};
        let comments: Vec<String> = (0..MAX_TOPIC_NOTES as u32 + 5)
            .map(|i| {
                let mut id = [1u8; 16];
                id[..4].copy_from_slice(&i.to_be_bytes());
                TopicNamed {
                    id,
                    name: format!("t{i}"),
                }
                .text()
            })
            .collect();
        let mut w = CaptureWriter::new(Vec::new(), OutFormat::PcapNg);
        w.write_with(&packet(1, 0, b"abc", 6), &comments).unwrap();
        let bytes = w.finish().unwrap();
        let mut r = CaptureReader::new(&bytes[..]).unwrap();
        assert_eq!(
            r.next_packet().unwrap().unwrap().topics.len(),
            MAX_TOPIC_NOTES
        );
        assert!(r.next_packet().unwrap().is_none());
        assert!(r
            .take_warnings()
            .iter()
            .any(|w| w.starts_with("5 packet comments")));
    }
}
