//! Wires the stages for a capture file: capture → tcp → tls → kafka → the caller's sink.

use crate::capture::cut::TopicNamed;
use crate::capture::net::{self, Skip};
use crate::capture::pcap::{CaptureError, CaptureReader, Packet};
use crate::kafka::stream::{Config, Sink, Tracker};
use crate::tcp::{At, Event, Limits, Reassembler};
use crate::tls::keylog::KeyLog;
use crate::tls::{Keys, Out, TlsConnection, TlsFilter, TlsNotice};
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::Arc;

#[derive(Debug, Clone, Default)]
pub struct Options {
    pub kafka: Config,
    pub tcp: Limits,
    /// The key logs given (`--keylog`, `--keylog-env`), to decrypt TLS connections with.
    pub keys: Arc<KeyLog>,
    /// The TLS stage's bounds (`--max-tls-search`, `--max-tls-search-total`).
    pub tls: crate::tls::Limits,
}

/// What happened to the packets themselves.
#[derive(Debug, Clone, Default)]
pub struct Health {
    pub packets: u64,
    pub tcp_segments: u64,
    /// Packets of link types this tool does not read, by link type.
    pub unsupported_linktypes: BTreeMap<u32, u64>,
    /// Packets whose headers were cut or malformed: (frame, reason), the first few.
    pub bad_packets: Vec<(u64, String)>,
    pub bad_packet_count: u64,
    /// Packets the snap length cut short.
    pub truncated_packets: u64,
    pub first_ts: Option<i64>,
    pub last_ts: i64,
    /// Format-level warnings (pcapng blocks skipped and the like).
    pub warnings: Vec<String>,
    pub evicted_connections: u64,
    /// Holes declared lost because a direction's out-of-order or held data passed
    /// `--max-buffered`.
    pub buffer_limit_hits: u64,
    /// Directions whose holes were declared lost because the data buffered by all
    /// connections passed `--max-buffered-total`.
    pub buffer_total_hits: u64,
    /// TLS directions no longer decrypted because their search after a loss spent
    /// `--max-tls-search`, or all connections' searches `--max-tls-search-total`.
    pub tls_search_limit_hits: u64,
    pub tls_search_total_hits: u64,
}

/// Whether to go on reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Read on.
    Go,
    /// Stop reading, then finish as at the end of the input: flush the connections, list the
    /// requests left unanswered (an interrupt).
    Finish,
    /// Stop at once (the output is gone, or enough messages were shown).
    Now,
}

/// Where packets come from: a capture file or stream, or a live interface.
pub trait PacketSource {
    /// The next packet, `Ok(None)` at the end.
    fn next_packet(&mut self) -> Result<Option<Packet<'_>>, CaptureError>;
    /// Non-fatal oddities met so far, for the health report.
    fn take_warnings(&mut self) -> Vec<String> {
        Vec::new()
    }
}

impl<R: Read> PacketSource for CaptureReader<R> {
    fn next_packet(&mut self) -> Result<Option<Packet<'_>>, CaptureError> {
        CaptureReader::next_packet(self)
    }
    fn take_warnings(&mut self) -> Vec<String> {
        CaptureReader::take_warnings(self)
    }
}

#[cfg(feature = "live")]
impl PacketSource for crate::capture::live::LiveCapture {
    fn next_packet(&mut self) -> Result<Option<Packet<'_>>, CaptureError> {
        crate::capture::live::LiveCapture::next_packet(self)
    }
}

/// A sink that also wants to know when the capture starts (for relative times) and which
/// connections were TLS, and that may ask to stop.
pub trait CaptureSink: Sink {
    /// The first packet's time, and the digits of a second the capture's timestamps carry.
    fn first_packet(&mut self, _ts_nanos: i64, _precision: u8) {}
    /// Every packet's time, before its messages.
    fn packet(&mut self, _ts_nanos: i64) {}
    /// Asked after every packet.
    fn stop(&self) -> Stop {
        Stop::Go
    }
    /// A TLS connection, once: when its records start to decrypt (its Kafka messages
    /// follow), or else when it ends (or the capture does): what could be seen of it.
    fn tls(&mut self, _conn: &TlsConnection) {}
    /// Something wrong inside a decrypted TLS connection (a loss, a record that does not
    /// authenticate, a renegotiation).
    fn tls_notice(&mut self, _notice: &TlsNotice) {}
    /// Topic ids named by a cut's notes (`-w`), before the messages that give them.
    fn topics_named(&mut self, _topics: &[TopicNamed]) {}
    /// A Kafka connection ended (both FINs, a reset, eviction or the end of the input): no
    /// answer comes on it any more.
    fn closed(&mut self, _stream: u32) {}
    /// Before packet `now` is read on: reassembly keeps nothing older than `oldest_kept` (or
    /// nothing at all), so no message or notice still to come from the input is dated before
    /// the older of the two, but for requests told about late (dropped from the pending table,
    /// left unanswered). What was held back to be put in frame order can go out up to there.
    fn settled(&mut self, _oldest_kept: Option<u64>, _now: u64) {}
    /// The input is read: what comes now (connections flushed, requests left unanswered) may
    /// be dated anywhere in it, until `finished`.
    fn finishing(&mut self) {}
    /// What comes now until `finished` (the requests left unanswered) comes in frame order:
    /// nothing is dated before what came last.
    fn in_frame_order(&mut self) {}
    /// Nothing more comes from this input.
    fn finished(&mut self) {}
}

/// The TLS stage between reassembly and Kafka: TLS connections stop here, or go on as their
/// plaintext, marked as decrypted.
fn route<S: CaptureSink>(tls: &mut TlsFilter, kafka: &mut Tracker, ev: Event<'_>, sink: &mut S) {
    tls.event(ev, &mut |out| hand_on(out, kafka, sink));
}

/// What the TLS stage gives: events for the Kafka layer, the report of a TLS connection
/// (whose plaintext, when decrypted, the Kafka layer marks), notices.
fn hand_on<S: CaptureSink>(out: Out<'_>, kafka: &mut Tracker, sink: &mut S) {
    match out {
        Out::Pass(ev) => {
            let closed = match ev {
                Event::Close { stream, .. } => Some(stream),
                _ => None,
            };
            kafka.event(ev, sink);
            if let Some(stream) = closed {
                sink.closed(stream);
            }
        }
        Out::Connection(conn) => {
            if conn.keys == Keys::Decrypted {
                kafka.mark_tls(conn.stream);
            }
            sink.tls(conn);
        }
        Out::Notice(n) => sink.tls_notice(&n),
    }
}

/// Reads one capture to its end (or to the first error that stops the file) and feeds every
/// Kafka message to `sink`. An error is returned after everything before it was processed
/// and flushed to the sink: a capture cut short still gives all it holds.
pub fn run<R: Read, S: CaptureSink>(
    input: R,
    opts: &Options,
    sink: &mut S,
    health: &mut Health,
) -> Result<(), CaptureError> {
    run_source(&mut CaptureReader::new(input)?, opts, sink, health)
}

/// [`run`] over any packet source.
pub fn run_source<P: PacketSource, S: CaptureSink>(
    source: &mut P,
    opts: &Options,
    sink: &mut S,
    health: &mut Health,
) -> Result<(), CaptureError> {
    let mut tcp = Reassembler::new(opts.tcp);
    let mut kafka = Tracker::new(opts.kafka.clone());
    let mut tls = TlsFilter::with_limits(opts.keys.clone(), opts.tls);
    let mut last = At {
        frame: 0,
        ts_nanos: 0,
    };
    let mut stop;
    let error = loop {
        stop = sink.stop();
        if stop != Stop::Go {
            break None;
        }
        let pkt = match source.next_packet() {
            Ok(Some(p)) => p,
            Ok(None) => break None,
            Err(e) => break Some(e),
        };
        health.packets += 1;
        if health.first_ts.is_none() {
            health.first_ts = Some(pkt.ts_nanos);
            sink.first_packet(pkt.ts_nanos, pkt.precision);
        }
        health.last_ts = pkt.ts_nanos;
        carried(&pkt, &mut tls, &mut kafka, sink);
        sink.packet(pkt.ts_nanos);
        let at = At {
            frame: pkt.number,
            ts_nanos: pkt.ts_nanos,
        };
        last = at;
        let kept = [
            tcp.oldest_kept(),
            kafka.oldest_deferred(),
            tls.oldest_held(),
            tls.oldest_untold(),
        ];
        sink.settled(kept.into_iter().flatten().min(), at.frame);
        if (pkt.orig_len as usize) > pkt.data.len() {
            health.truncated_packets += 1;
        }
        match net::tcp_segment(pkt.linktype, pkt.data, pkt.orig_len) {
            Ok(seg) => {
                health.tcp_segments += 1;
                tcp.segment_noted(&seg, at, pkt.left_out, &mut |ev| {
                    route(&mut tls, &mut kafka, ev, sink)
                });
            }
            Err(Skip::NotTcp) => {}
            Err(Skip::Linktype(lt)) => *health.unsupported_linktypes.entry(lt).or_default() += 1,
            Err(Skip::Malformed(why)) => {
                health.bad_packet_count += 1;
                if health.bad_packets.len() < 20 {
                    health.bad_packets.push((pkt.number, why));
                }
            }
        }
    };
    health.warnings.append(&mut source.take_warnings());
    if stop == Stop::Now {
        return error.map_or(Ok(()), Err);
    }
    sink.finishing();
    tcp.finish(last, &mut |ev| route(&mut tls, &mut kafka, ev, sink));
    limits_hit(health, &tcp, &tls);
    sink.in_frame_order();
    kafka.finish(sink);
    sink.finished();
    error.map_or(Ok(()), Err)
}

/// What a pcapng file carries beside a packet, for what follows it: TLS secrets (Decryption
/// Secrets Blocks) to the TLS stage; the topic ids a cut's notes name to the Kafka layer, as
/// the answers the cut left out would have named them, and to the sink (the analyses).
fn carried<S: CaptureSink>(
    pkt: &Packet<'_>,
    tls: &mut TlsFilter,
    kafka: &mut Tracker,
    sink: &mut S,
) {
    for text in pkt.secrets {
        tls.add_embedded(text);
    }
    if !pkt.topics.is_empty() {
        kafka.topics_named(pkt.topics);
        sink.topics_named(pkt.topics);
    }
}

/// What the limits of reassembly and of the TLS stage cost the input, for its health report.
fn limits_hit(health: &mut Health, tcp: &Reassembler, tls: &TlsFilter) {
    health.evicted_connections += tcp.evicted;
    health.buffer_limit_hits += tcp.buffer_limit_hits;
    health.buffer_total_hits += tcp.total_limit_hits;
    health.tls_search_limit_hits += tls.search_limit_hits;
    health.tls_search_total_hits += tls.search_total_hits;
}
