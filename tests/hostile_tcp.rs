//! Hostile TCP shapes, generated and scaled down from the full-size captures that
//! `scripts/hostile/tcp_inputs.py` writes: many short connections past `max_connections`,
//! 1-byte pieces with holes between them, and buffers spread over many connections. They check
//! behaviour (which connection is evicted, when a limit is hit, that memory stays bounded);
//! timings are measured by hand with the script's full-size captures, never asserted here.

mod common;

use common::collect::run_bytes;
use common::pcapgen::{packet, pcap, Seg};
use kdissect::capture::net::TcpSegment;
use kdissect::pipeline::Options;
use kdissect::tcp::{At, Event, GapKind, Limits, Reassembler, PIECE_OVERHEAD};
use std::net::SocketAddr;

const BROKER: ([u8; 4], u16) = ([10, 0, 0, 2], 9092);

/// The i-th client endpoint: distinct for every i below 2^16 * 60000.
fn client(i: u32) -> SocketAddr {
    let host = i / 60_000;
    let port = 1024 + (i % 60_000) as u16;
    SocketAddr::from(([10, 1, (host >> 8) as u8, host as u8], port))
}

/// A client segment to the broker: a SYN, or data acknowledging nothing new.
fn from_client(c: SocketAddr, syn: bool, seq: u32, payload: &[u8]) -> TcpSegment<'_> {
    TcpSegment {
        src: c,
        dst: SocketAddr::from(BROKER),
        seq,
        ack: 0,
        syn,
        fin: false,
        rst: false,
        has_ack: !syn,
        payload,
        missing: 0,
    }
}

/// Feeds segments numbered from 1, calling `on` for each event with the frame being fed.
struct Feeder {
    r: Reassembler,
    frame: u64,
}

impl Feeder {
    fn new(limits: Limits) -> Feeder {
        Feeder {
            r: Reassembler::new(limits),
            frame: 0,
        }
    }

    fn feed(&mut self, s: &TcpSegment<'_>, on: &mut impl FnMut(u64, &Event<'_>)) {
        self.frame += 1;
        let frame = self.frame;
        let at = At { frame, ts_nanos: 0 };
        self.r.segment(s, at, &mut |e| on(frame, &e));
    }
}

/// 10 000 short connections with room for 5 000 (the 200 000 / 100 000 of the full-size
/// capture, scaled down), plus one long-lived connection that speaks every 100 connections:
/// each new connection evicts the oldest short one, in order, and never the long-lived one.
#[test]
fn many_short_connections_evict_the_idle_longest_in_order() {
    let (n, max) = (10_000u32, 5_000usize);
    let mut f = Feeder::new(Limits {
        max_connections: max,
        ..Limits::default()
    });
    let mut closed = Vec::new();
    let mut on = |_: u64, e: &Event<'_>| {
        if let Event::Close { stream, .. } = e {
            closed.push(*stream);
        }
    };
    let long = SocketAddr::from(([10, 2, 0, 1], 5000));
    f.feed(&from_client(long, true, 99, b""), &mut on);
    for i in 0..n {
        let c = client(i);
        f.feed(&from_client(c, true, 99, b""), &mut on);
        f.feed(&from_client(c, false, 100, b"q"), &mut on);
        if i % 100 == 0 {
            f.feed(&from_client(long, false, 100 + i / 100, b"L"), &mut on);
        }
    }
    // Streams: 0 the long-lived one, 1..=n the short ones in order.
    let evicted = n as usize + 1 - max;
    assert_eq!(f.r.evicted, evicted as u64);
    assert_eq!(closed, (1..=evicted as u32).collect::<Vec<_>>());
}

/// The same through the whole pipeline: every request decodes and the evictions are counted.
#[test]
fn many_short_connections_through_the_pipeline() {
    let (n, max) = (1500u16, 500usize);
    let mut packets = Vec::new();
    for i in 0..n {
        let port = 10_000 + i;
        let seg = |from_client, seq, ack, syn, payload: Vec<u8>| Seg {
            from_client,
            seq,
            ack,
            syn,
            fin: false,
            payload,
        };
        packets.push(packet(&seg(true, 999, 0, true, vec![]), port, 9092));
        packets.push(packet(&seg(false, 4999, 1000, true, vec![]), port, 9092));
        packets.push(packet(
            &seg(true, 1000, 5000, false, metadata_v13()),
            port,
            9092,
        ));
    }
    let mut opts = Options::default();
    opts.tcp.max_connections = max;
    let (c, h, err) = run_bytes(&pcap(&packets), &opts);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(h.evicted_connections, u64::from(n) - max as u64);
    assert_eq!(c.rows.len(), usize::from(n));
    assert!(
        c.rows.iter().all(|r| r.2 == 3 && r.5),
        "{:?}",
        c.rows.first()
    );
}

/// The smallest Metadata v13 request.
fn metadata_v13() -> Vec<u8> {
    let mut f = vec![0, 0, 0, 33, 0, 3, 0, 13, 0, 0, 0, 0, 0, 0, 0, 2];
    f.extend([0; 16]);
    f.extend([1, 0, 0, 0, 0]);
    f
}

/// 1-byte pieces with a 1-byte hole before each (the million of the full-size capture, scaled
/// down): the limit is hit by their memory, not by their payload, and memory stays under it.
#[test]
fn one_byte_pieces_with_holes_hit_the_limit_by_memory() {
    let (pieces, max) = (20_000u32, 1 << 18);
    let mut f = Feeder::new(Limits {
        max_buffered: max,
        ..Limits::default()
    });
    let mut first_loss = None;
    let mut on = |frame: u64, e: &Event<'_>| {
        if let Event::Gap {
            kind: GapKind::Lost(_),
            ..
        } = e
        {
            first_loss.get_or_insert(frame);
        }
    };
    let c = client(0);
    f.feed(&from_client(c, true, 99, b""), &mut on);
    for k in 0..pieces {
        f.feed(&from_client(c, false, 101 + 2 * k, b"x"), &mut on);
        assert!(f.r.buffered_memory() <= max);
    }
    // 20 000 bytes of payload are far below 256 KiB; their memory is not.
    let fit = max / (1 + PIECE_OVERHEAD);
    assert!((pieces as usize) < max && (pieces as usize) > fit);
    // The first hole is declared lost at the piece that does not fit (frame 1 is the SYN).
    assert_eq!(first_loss, Some(fit as u64 + 2));
    assert_eq!(f.r.buffer_limit_hits, u64::from(pieces) - fit as u64);
}

/// 200 connections each buffering 1-byte pieces, in turn: no direction reaches
/// `max_buffered`, all together pass `max_buffered_total`, which holds them to it.
#[test]
fn buffers_spread_over_connections_are_held_to_the_total_budget() {
    let (conns, pieces) = (200u32, 50u32);
    let total = 1000 * (1 + PIECE_OVERHEAD);
    let mut f = Feeder::new(Limits {
        max_buffered_total: total,
        ..Limits::default()
    });
    let mut freed = Vec::new();
    let mut on = |_: u64, e: &Event<'_>| {
        if let Event::Gap { stream, .. } = e {
            freed.push(*stream);
        }
    };
    for i in 0..conns {
        f.feed(&from_client(client(i), true, 99, b""), &mut on);
    }
    for k in 0..pieces {
        for i in 0..conns {
            f.feed(&from_client(client(i), false, 101 + 2 * k, b"x"), &mut on);
            assert!(f.r.buffered_memory() <= total);
        }
    }
    assert_eq!(f.r.buffer_limit_hits, 0);
    assert!(f.r.total_limit_hits > 0);
    // The direction freed first held the most: after five rounds the budget is full, and
    // stream 0's sixth piece passes it, leaving stream 0 with more than any other.
    assert_eq!(freed.first(), Some(&0));
}

/// The total budget through the pipeline, counted in the health report.
#[test]
fn total_budget_is_counted_through_the_pipeline() {
    let (conns, pieces) = (20u16, 50u32);
    let mut packets = Vec::new();
    let seg = |seq, syn, payload: &[u8]| Seg {
        from_client: true,
        seq,
        ack: 0,
        syn,
        fin: false,
        payload: payload.to_vec(),
    };
    for i in 0..conns {
        packets.push(packet(&seg(99, true, b""), 10_000 + i, 9092));
    }
    for k in 0..pieces {
        for i in 0..conns {
            packets.push(packet(&seg(101 + 2 * k, false, b"x"), 10_000 + i, 9092));
        }
    }
    let mut opts = Options::default();
    opts.tcp.max_buffered_total = 100 * (1 + PIECE_OVERHEAD);
    let (_, h, err) = run_bytes(&pcap(&packets), &opts);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(h.buffer_limit_hits, 0);
    assert!(h.buffer_total_hits > 0);
}
