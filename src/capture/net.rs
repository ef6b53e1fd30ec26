//! Link, IP and TCP layers of a captured packet: Ethernet (with 802.1Q and QinQ tags), Linux
//! cooked v1 and v2, BSD loopback (NULL and LOOP), raw IPv4/IPv6; IPv4 and IPv6 with extension
//! headers.

use etherparse::{EtherType, LaxNetSlice, LaxSlicedPacket, TransportSlice};
use pcap_parser::data::{get_packetdata, PacketData};
use pcap_parser::Linktype;
use std::net::{IpAddr, SocketAddr};

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
