//! The same conversation under every link type and file format decodes to the same messages
//! with the same timestamps; connections that reuse a 4-tuple are told apart.

mod common;

use common::collect::{run_bytes, Collected};
use common::pcapgen::{conversation, ip_packet, packet, pcap_with, pcapng, vlan_packet, Seg};
use common::vector;
use kdissect::pipeline::Options;

fn exchanges() -> Vec<(Vec<u8>, Vec<u8>)> {
    vec![
        (
            vector("metadata-v13-request.hex"),
            vector("metadata-v13-response.hex"),
        ),
        (vector("describe-cluster-v2-request.hex"), {
            // Same correlation id (0) would collide with the first exchange: give it 1.
            let mut r = vector("describe-cluster-v2-response.hex");
            r[4..8].copy_from_slice(&1i32.to_be_bytes());
            r
        }),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (mut q, r))| {
        q[8..12].copy_from_slice(&(i as i32).to_be_bytes());
        (q, r)
    })
    .collect()
}

fn segs() -> Vec<Seg> {
    conversation(&exchanges(), &[25])
}

fn check(name: &str, bytes: &[u8], base: &Collected) {
    let (c, h, err) = run_bytes(bytes, &Options::default());
    assert!(err.is_none(), "{name}: {err:?}");
    assert!(
        h.unsupported_linktypes.is_empty(),
        "{name}: {:?}",
        h.unsupported_linktypes
    );
    assert_eq!(c.rows, base.rows, "{name}");
    assert_eq!(c.latencies, base.latencies, "{name}: timestamps");
    assert_eq!(c.rows.len(), 4, "{name}");
    assert!(c.rows.iter().all(|r| r.5), "{name}: {:?}", c.rows);
}

fn with_prefix(prefix: &[u8], p: Vec<u8>) -> Vec<u8> {
    let mut v = prefix.to_vec();
    v.extend(p);
    v
}

#[test]
fn every_link_type_and_format() {
    let s = segs();
    let eth: Vec<Vec<u8>> = s.iter().map(|x| packet(x, 40000, 9092)).collect();
    let (base, _, _) = run_bytes(&pcap_with(1, false, false, &eth), &Options::default());
    assert_eq!(base.rows.len(), 4);
    check(
        "ethernet, big-endian pcap",
        &pcap_with(1, true, false, &eth),
        &base,
    );
    check(
        "ethernet, nanosecond pcap",
        &pcap_with(1, false, true, &eth),
        &base,
    );
    check(
        "ethernet, big-endian nanosecond pcap",
        &pcap_with(1, true, true, &eth),
        &base,
    );
    let ip4: Vec<Vec<u8>> = s.iter().map(|x| ip_packet(x, 40000, 9092, false)).collect();
    check("raw IP (101)", &pcap_with(101, false, false, &ip4), &base);
    check("IPv4 (228)", &pcap_with(228, false, false, &ip4), &base);
    let null: Vec<Vec<u8>> = ip4
        .iter()
        .map(|p| with_prefix(&2u32.to_le_bytes(), p.clone()))
        .collect();
    check("BSD NULL (0)", &pcap_with(0, false, false, &null), &base);
    let lo: Vec<Vec<u8>> = ip4
        .iter()
        .map(|p| with_prefix(&2u32.to_be_bytes(), p.clone()))
        .collect();
    check(
        "OpenBSD LOOP (108)",
        &pcap_with(108, false, false, &lo),
        &base,
    );
    let sll: Vec<Vec<u8>> = ip4
        .iter()
        .map(|p| {
            with_prefix(
                &[0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x00],
                p.clone(),
            )
        })
        .collect();
    check(
        "Linux cooked v1 (113)",
        &pcap_with(113, false, false, &sll),
        &base,
    );
    let sll2: Vec<Vec<u8>> = ip4
        .iter()
        .map(|p| {
            with_prefix(
                &[
                    0x08, 0x00, 0, 0, 0, 0, 0, 1, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0,
                ],
                p.clone(),
            )
        })
        .collect();
    check(
        "Linux cooked v2 (276)",
        &pcap_with(276, false, false, &sll2),
        &base,
    );
    let v1: Vec<Vec<u8>> = s.iter().map(|x| vlan_packet(x, 40000, 9092, 1)).collect();
    check("802.1Q", &pcap_with(1, false, false, &v1), &base);
    let v2: Vec<Vec<u8>> = s.iter().map(|x| vlan_packet(x, 40000, 9092, 2)).collect();
    check("QinQ", &pcap_with(1, false, false, &v2), &base);
    // pcapng with two interfaces of different link types and timestamp units; packets
    // alternate between them.
    let t0 = 1_700_000_000_000_000u64;
    let ng: Vec<(u32, u64, Vec<u8>)> = s
        .iter()
        .enumerate()
        .map(|(i, x)| {
            if i % 2 == 0 {
                (0, t0 + 1000 * i as u64, packet(x, 40000, 9092))
            } else {
                (1, t0 + 1000 * i as u64, ip_packet(x, 40000, 9092, false))
            }
        })
        .collect();
    check(
        "pcapng, Ethernet µs + raw IP ns",
        &pcapng(&[(1, 6), (101, 9)], &ng),
        &base,
    );
}

#[test]
fn ipv6_decodes_the_same_messages() {
    let s = segs();
    let eth: Vec<Vec<u8>> = s.iter().map(|x| packet(x, 40000, 9092)).collect();
    let (base, _, _) = run_bytes(&pcap_with(1, false, false, &eth), &Options::default());
    let ip6: Vec<Vec<u8>> = s.iter().map(|x| ip_packet(x, 40000, 9092, true)).collect();
    let (c, _, _) = run_bytes(&pcap_with(229, false, false, &ip6), &Options::default());
    assert_eq!(c.rows, base.rows);
}

#[test]
fn unsupported_link_type_is_counted_and_named() {
    let s = segs();
    let eth: Vec<Vec<u8>> = s.iter().map(|x| packet(x, 40000, 9092)).collect();
    let (c, h, err) = run_bytes(&pcap_with(147, false, false, &eth), &Options::default());
    assert!(err.is_none());
    assert!(c.rows.is_empty());
    assert_eq!(h.unsupported_linktypes.get(&147), Some(&(eth.len() as u64)));
}

#[test]
fn a_new_connection_on_the_same_four_tuple_is_a_new_stream() {
    let mut s = segs();
    let mut second = conversation(&exchanges(), &[40]);
    // Different initial sequence numbers for the second connection.
    for x in second.iter_mut() {
        x.seq = x.seq.wrapping_add(1_000_000);
        if x.ack != 0 {
            x.ack = x.ack.wrapping_add(1_000_000);
        }
    }
    s.extend(second);
    let eth: Vec<Vec<u8>> = s.iter().map(|x| packet(x, 40000, 9092)).collect();
    let (c, _, _) = run_bytes(&pcap_with(1, false, false, &eth), &Options::default());
    let streams: Vec<u32> = c.rows.iter().map(|r| r.0).collect();
    assert_eq!(streams, vec![0, 0, 0, 0, 1, 1, 1, 1]);
    assert!(c.rows.iter().all(|r| r.5 && !r.6));
}
