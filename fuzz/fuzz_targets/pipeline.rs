//! Raw bytes as a capture file (pcap or pcapng) through the whole pipeline.
#![no_main]

use kdissect::kafka::stream::{Notice, Record, Sink};
use kdissect::pipeline::{run, CaptureSink, Health, Options};
use libfuzzer_sys::fuzz_target;

#[derive(Default)]
struct Count {
    messages: u64,
    notices: u64,
    first: Option<i64>,
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

impl CaptureSink for Count {
    fn first_packet(&mut self, ts_nanos: i64, _precision: u8) {
        self.first = Some(ts_nanos);
    }
}

fuzz_target!(|data: &[u8]| {
    let mut sink = Count::default();
    let mut health = Health::default();
    let err = run(data, &Options::default(), &mut sink, &mut health);
    let _ = std::hint::black_box((err, sink.messages, sink.notices, sink.first, health.packets));
});
