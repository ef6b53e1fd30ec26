//! Link, IP and TCP layers of a captured packet: Ethernet (with 802.1Q and QinQ tags), Linux
//! cooked v1 and v2, BSD loopback (NULL and LOOP), raw IPv4/IPv6; IPv4 and IPv6 with extension
//! headers.

use etherparse::{EtherType, LaxNetSlice, LaxSlicedPacket, TransportSlice};
use pcap_parser::data::{get_packetdata, PacketData};
use pcap_parser::Linktype;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// A TCP segment, borrowed from the packet.
#[derive(Debug, Clone, Copy)]
pub struct TcpSegment<'a> {
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub seq: u32,
    pub ack: u32,
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
    pub has_ack: bool,
    pub payload: &'a [u8],
    /// Payload bytes the snap length cut off the end of the packet.
    pub missing: usize,
}

/// Why a packet carries no TCP segment for us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// A link type this tool does not read (named in the message).
    Linktype(u32),
    /// Not IP, or not TCP, or an IP fragment: nothing to do, nothing to say.
    NotTcp,
    /// Headers cut short or malformed.
    Malformed(String),
}

pub fn linktype_name(lt: u32) -> String {
    let name = match lt {
        0 => "NULL",
        1 => "ETHERNET",
        101 => "RAW",
        108 => "LOOP",
        113 => "LINUX_SLL",
        127 => "IEEE802_11_RADIOTAP",
        228 => "IPV4",
        229 => "IPV6",
        239 => "NFLOG",
        252 => "WIRESHARK_UPPER_PDU",
        276 => "LINUX_SLL2",
        _ => return format!("link type {lt}"),
    };
    format!("link type {lt} ({name})")
}

/// Extracts the TCP segment of a packet.
pub fn tcp_segment(linktype: u32, data: &[u8], orig_len: u32) -> Result<TcpSegment<'_>, Skip> {
    let missing_total = (orig_len as usize).saturating_sub(data.len());
    if linktype == 1 {
        if let Some(seg) = plain_ipv4_tcp(data, missing_total) {
            return Ok(seg);
        }
    }
    parsed_segment(linktype, data, missing_total)
}

/// The common packet read directly: Ethernet without VLAN tags, IPv4 whose total length fits
/// the packet, not a fragment, TCP with a sound data offset. Anything else (`None`) is left
/// to etherparse, which reads it as this does where both apply (a test compares the two).
/// Hand-written because etherparse's general slicing (every link layer, extension header and
/// option kind) was the largest cost per packet outside Kafka: `LaxSlicedPacket::from_ethernet`
/// and its conversion here took 17.2 million of 1 205 million instructions on the 5 MiB bench
/// capture under callgrind, 680 a packet (25 235 packets); this reading takes a few dozen.
fn plain_ipv4_tcp(data: &[u8], missing: usize) -> Option<TcpSegment<'_>> {
    let be16 = |b: &[u8], at: usize| -> Option<u16> {
        Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
    };
    if be16(data, 12)? != 0x0800 {
        return None;
    }
    let ip = data.get(14..)?;
    let vihl = *ip.first()?;
    let ihl = usize::from(vihl & 0x0f) * 4;
    let total = usize::from(be16(ip, 2)?);
    // Version 4; a header within the packet; a total length covering the header and within
    // the packet (past it, or below the header, etherparse falls back on the packet's length);
    // neither more fragments nor an offset; TCP.
    let plain = vihl >> 4 == 4
        && ihl >= 20
        && (ihl..=ip.len()).contains(&total)
        && be16(ip, 6)? & 0x3fff == 0
        && *ip.get(9)? == 6;
    if !plain {
        return None;
    }
    let addr = |at: usize| -> Option<IpAddr> {
        let b: [u8; 4] = ip.get(at..at + 4)?.try_into().ok()?;
        Some(IpAddr::V4(Ipv4Addr::from(b)))
    };
    let tcp = ip.get(ihl..total)?;
    let off = usize::from(*tcp.get(12)? >> 4) * 4;
    if off < 20 || tcp.len() < off {
        return None;
    }
    let be32 = |at: usize| -> Option<u32> { Some(crate::be::u32_at(tcp.get(at..at + 4)?, 0)) };
    let flags = *tcp.get(13)?;
    Some(TcpSegment {
        src: SocketAddr::new(addr(12)?, be16(tcp, 0)?),
        dst: SocketAddr::new(addr(16)?, be16(tcp, 2)?),
        seq: be32(4)?,
        ack: be32(8)?,
        syn: flags & 0x02 != 0,
        fin: flags & 0x01 != 0,
        rst: flags & 0x04 != 0,
        has_ack: flags & 0x10 != 0,
        payload: tcp.get(off..)?,
        missing,
    })
}

/// [`tcp_segment`] by etherparse, for every link type and layout.
fn parsed_segment(
    linktype: u32,
    data: &[u8],
    missing_total: usize,
) -> Result<TcpSegment<'_>, Skip> {
    let sliced = match linktype {
        // OpenBSD's LOOP is NULL with the family in network byte order.
        108 => {
            let fam = data.get(0..4).map(|b| crate::be::u32_at(b, 0));
            let et = match fam {
                Some(2) => EtherType::IPV4,
                Some(24) | Some(28) | Some(30) => EtherType::IPV6,
                _ => return Err(Skip::NotTcp),
            };
            LaxSlicedPacket::from_ether_type(et, data.get(4..).unwrap_or(&[]))
        }
        _ => match get_packetdata(data, Linktype(linktype as i32), data.len()) {
            Some(PacketData::L2(eth)) => LaxSlicedPacket::from_ethernet(eth)
                .map_err(|e| Skip::Malformed(format!("Ethernet: {e}")))?,
            Some(PacketData::L3(et, l3)) => {
                if et == 0 {
                    return Err(Skip::NotTcp);
                }
                LaxSlicedPacket::from_ether_type(EtherType(et), l3)
            }
            Some(PacketData::L4(_, _)) => return Err(Skip::NotTcp),
            Some(PacketData::Unsupported(_)) => return Err(Skip::Linktype(linktype)),
            None => {
                return Err(Skip::Malformed(format!(
                    "{} header cut short",
                    linktype_name(linktype)
                )))
            }
        },
    };
    let (src_ip, dst_ip, fragmented): (IpAddr, IpAddr, bool) = match &sliced.net {
        Some(LaxNetSlice::Ipv4(v4)) => {
            let h = v4.header();
            (
                IpAddr::V4(h.source_addr()),
                IpAddr::V4(h.destination_addr()),
                v4.payload().fragmented,
            )
        }
        Some(LaxNetSlice::Ipv6(v6)) => {
            let h = v6.header();
            (
                IpAddr::V6(h.source_addr()),
                IpAddr::V6(h.destination_addr()),
                v6.payload().fragmented,
            )
        }
        _ => return Err(Skip::NotTcp),
    };
    if fragmented {
        return Err(Skip::NotTcp);
    }
    let tcp = match &sliced.transport {
        Some(TransportSlice::Tcp(t)) => t,
        Some(_) => return Err(Skip::NotTcp),
        None => {
            return match sliced.stop_err {
                Some((e, _)) => Err(Skip::Malformed(format!("TCP header: {e}"))),
                None => Err(Skip::NotTcp),
            }
        }
    };
    Ok(TcpSegment {
        src: SocketAddr::new(src_ip, tcp.source_port()),
        dst: SocketAddr::new(dst_ip, tcp.destination_port()),
        seq: tcp.sequence_number(),
        ack: tcp.acknowledgment_number(),
        syn: tcp.syn(),
        fin: tcp.fin(),
        rst: tcp.rst(),
        has_ack: tcp.ack(),
        payload: tcp.payload(),
        missing: missing_total,
    })
}

#[cfg(test)]
mod tests {
    use super::{parsed_segment, tcp_segment};
    use crate::capture::pcap::CaptureReader;

    /// The packets of a sample capture with their link type and original length.
    fn packets(name: &str) -> Vec<(u32, Vec<u8>, u32)> {
        let path = format!("{}/../samples/{name}", env!("CARGO_MANIFEST_DIR"));
        let Ok(file) = std::fs::File::open(&path) else {
            panic!("{path} missing");
        };
        let Ok(mut r) = CaptureReader::new(std::io::BufReader::new(file)) else {
            panic!("{path} unreadable");
        };
        let mut out = Vec::new();
        while let Ok(Some(p)) = r.next_packet() {
            out.push((p.linktype, p.data.to_vec(), p.orig_len));
        }
        out
    }

    /// Both readings of a packet, as text (a segment borrows the packet: compared in place).
    fn both(linktype: u32, data: &[u8], orig_len: u32) -> (String, String) {
        let missing = (orig_len as usize).saturating_sub(data.len());
        (
            format!("{:?}", tcp_segment(linktype, data, orig_len)),
            format!("{:?}", parsed_segment(linktype, data, missing)),
        )
    }

    /// The direct reading of plain Ethernet/IPv4/TCP packets gives what etherparse gives, on
    /// every packet of the samples, and on the first packets of a few of them with each of
    /// their first 80 bytes changed and cut at each of those lengths (VLAN-like ethertypes,
    /// other IP versions, header lengths, total lengths below, at and past the packet,
    /// fragments, other protocols, TCP data offsets).
    #[test]
    fn plain_packets_read_directly_as_etherparse_reads_them() {
        let mut names: Vec<String> =
            std::fs::read_dir(format!("{}/../samples", env!("CARGO_MANIFEST_DIR")))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".pcap") || n.ends_with(".pcapng"))
                .collect();
        names.sort();
        assert!(names.len() > 20, "samples missing");
        for name in &names {
            for (lt, data, orig) in packets(name) {
                let (fast, slow) = both(lt, &data, orig);
                assert_eq!(fast, slow, "{name}");
            }
        }
        for name in [
            "kgen-all-versions.pcap",
            "cluster-admin.pcap",
            "kgen-all-versions-snaplen96.pcap",
        ]
        .iter()
        .filter(|n| names.iter().any(|m| m == *n))
        {
            for (lt, data, orig) in packets(name).into_iter().take(12) {
                let end = data.len().min(80);
                for i in 0..end {
                    let was = data.get(i).copied().unwrap_or(0);
                    for v in [
                        0x00,
                        0x05,
                        0x06,
                        0x45,
                        0x4f,
                        0x50,
                        0x81,
                        0xff,
                        was ^ 0x01,
                        was ^ 0x20,
                    ] {
                        let mut d = data.clone();
                        if let Some(b) = d.get_mut(i) {
                            *b = v;
                        }
                        let (fast, slow) = both(lt, &d, orig);
                        assert_eq!(fast, slow, "{name}: byte {i} = {v:#04x}");
                    }
                    let cut = data.get(..i).unwrap_or(&[]);
                    let (fast, slow) = both(lt, cut, orig);
                    assert_eq!(fast, slow, "{name}: cut at {i}");
                }
            }
        }
    }
}
