//! TCP segments into `Reassembler`, its events into a Kafka `Tracker`.
//!
//! The input is a sequence of segments, each: flags (bit 0 SYN, 1 FIN, 2 RST, 3 ACK, bits 4-7
//! bytes cut by the snap length), direction (bit 0: broker → client; bit 1: second client
//! port; bit 2: broker on 19092, which is found by detection only), seq (u32 BE), ack (u32 BE),
//! payload length (u8), payload.
#![no_main]

use kdissect::capture::net::TcpSegment;
use kdissect::kafka::stream::{Config, Notice, Record, Sink, Tracker};
use kdissect::tcp::{At, Limits, Reassembler};
use libfuzzer_sys::fuzz_target;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

#[derive(Default)]
struct Count {
    messages: u64,
    notices: u64,
}

impl Sink for Count {
    fn message(&mut self, rec: &Record<'_>) {
        self.messages += 1;
        std::hint::black_box((rec.bytes.len(), rec.latency_nanos()));
    }
    fn notice(&mut self, _n: &Notice) {
        self.notices += 1;
    }
}

fuzz_target!(|data: &[u8]| {
    let client_ip = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
    let broker_ip = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
    // Small limits so that eviction and buffer overflow are reachable.
    let limits = Limits {
        max_buffered: 4096,
        max_buffered_total: 6144,
        max_connections: 3,
        reorder_window: 16,
    };
    let mut tcp = Reassembler::new(limits);
    // And a Kafka-layer budget small enough that frames in progress and waiting requests
    // get let go (`--max-frames-total`), with a short pending table.
    let mut kafka = Tracker::new(Config {
        max_held_total: 16 * 1024,
        max_pending: 8,
        ..Config::default()
    });
    let mut sink = Count::default();
    let mut rest = data;
    let mut n = 0u64;
    let mut at = At::default();
    while let Some((head, tail)) = rest.split_at_checked(11) {
        let flags = head[0];
        let dir = head[1];
        let seq = u32::from_be_bytes([head[2], head[3], head[4], head[5]]);
        let ack = u32::from_be_bytes([head[6], head[7], head[8], head[9]]);
        let len = (head[10] as usize).min(tail.len());
        let (payload, tail) = tail.split_at(len);
        rest = tail;
        n += 1;
        at = At {
            frame: n,
            ts_nanos: n as i64 * 1000,
        };
        let client = SocketAddr::new(client_ip, 40000 + u16::from(dir >> 1 & 1));
        let broker = SocketAddr::new(broker_ip, if dir & 4 == 0 { 9092 } else { 19092 });
        let (src, dst) = if dir & 1 == 0 {
            (client, broker)
        } else {
            (broker, client)
        };
        let seg = TcpSegment {
            src,
            dst,
            seq,
            ack,
            syn: flags & 1 != 0,
            fin: flags & 2 != 0,
            rst: flags & 4 != 0,
            has_ack: flags & 8 != 0,
            payload,
            missing: usize::from(flags >> 4),
        };
        tcp.segment(&seg, at, &mut |ev| kafka.event(ev, &mut sink));
    }
    tcp.finish(at, &mut |ev| kafka.event(ev, &mut sink));
    kafka.finish(&mut sink);
    std::hint::black_box((sink.messages, sink.notices, tcp.evicted));
});
