//! Live capture through libpcap (`-i`): one thread per interface hands packets, in arrival
//! order, to the pipeline. Reads wake up every 100 ms so that the caller can decide to stop (an
//! interrupt, a duration) even on a quiet interface.

use super::pcap::{CaptureError, Packet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// What to open.
#[derive(Debug, Clone)]
pub struct LiveOptions {
    pub interfaces: Vec<String>,
    /// A BPF filter expression (tcpdump syntax).
    pub filter: String,
    pub promisc: bool,
}

/// Snap length: whole packets (the largest a Linux interface delivers).
const SNAPLEN: i32 = 262_144;
/// How long a read waits before the caller is asked whether to stop.
const WAKE: Duration = Duration::from_millis(100);

/// Why a live capture could not start.
#[derive(Debug)]
pub struct LiveError {
    pub interface: String,
    pub message: String,
    /// The capture was refused for want of privileges.
    pub permission: bool,
}

impl std::fmt::Display for LiveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot capture on {}: {}", self.interface, self.message)
    }
}

impl std::error::Error for LiveError {}

/// One packet from an interface thread.
struct Owned {
    ts_nanos: i64,
    linktype: u32,
    data: Vec<u8>,
    orig_len: u32,
}

/// What libpcap counted over a capture, as tcpdump reports it at the end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiveStats {
    /// Packets handed to the decoder.
    pub captured: u64,
    /// Packets the capture filter let through, as libpcap counts them (all interfaces).
    pub received: u64,
    /// Packets the kernel dropped for want of buffer room: they were never seen.
    pub dropped: u64,
    /// Packets the interface or its driver dropped, where it says.
    pub if_dropped: u64,
    /// Interfaces that gave no count (a read error ended them first).
    pub unknown: usize,
}

/// A running live capture.
pub struct LiveCapture {
    rx: Receiver<Result<Owned, String>>,
    current: Option<Owned>,
    number: u64,
    /// Asked while no packet arrives: true ends the capture.
    stop: Box<dyn Fn() -> bool>,
    /// Tells the interface threads to stop and send their counts; `breaks` wakes them.
    finish: Arc<AtomicBool>,
    breaks: Vec<pcap::BreakLoop>,
    counts: Receiver<pcap::Stat>,
    interfaces: usize,
}

/// The interfaces libpcap can open: (name, description).
pub fn interfaces() -> Result<Vec<(String, Option<String>)>, String> {
    pcap::Device::list()
        .map(|v| v.into_iter().map(|d| (d.name, d.desc)).collect())
        .map_err(|e| e.to_string())
}

fn open_one(name: &str, o: &LiveOptions) -> Result<pcap::Capture<pcap::Active>, LiveError> {
    let err = |e: pcap::Error| {
        let message = e.to_string();
        let lower = message.to_ascii_lowercase();
        LiveError {
            interface: name.to_string(),
            permission: lower.contains("permission") || lower.contains("not permitted"),
            message,
        }
    };
    let mut cap = pcap::Capture::from_device(name)
        .map_err(err)?
        .promisc(o.promisc)
        .snaplen(SNAPLEN)
        .timeout(WAKE.as_millis() as i32)
        .immediate_mode(true)
        .precision(pcap::Precision::Nano)
        .open()
        .map_err(err)?;
    cap.filter(&o.filter, true).map_err(|e| LiveError {
        interface: name.to_string(),
        message: format!("capture filter {:?}: {e}", o.filter),
        permission: false,
    })?;
    Ok(cap)
}

/// One interface's thread: packets to `tx` as they come, until the consumer goes away, a read
/// fails, or `finish` is set; then libpcap's counts to `counts`.
fn read_interface(
    mut cap: pcap::Capture<pcap::Active>,
    tx: &mpsc::SyncSender<Result<Owned, String>>,
    counts: &Sender<pcap::Stat>,
    finish: &AtomicBool,
) {
    let linktype = cap.get_datalink().0 as u32;
    loop {
        // time_t and suseconds_t are i64 here but not on every platform.
        #[allow(clippy::useless_conversion)]
        let got = cap.next_packet().map(|p| Owned {
            // With nanosecond precision tv_usec holds nanoseconds.
            ts_nanos: i64::from(p.header.ts.tv_sec)
                .saturating_mul(1_000_000_000)
                .saturating_add(i64::from(p.header.ts.tv_usec)),
            linktype,
            data: p.data.to_vec(),
            orig_len: p.header.len,
        });
        if finish.load(Ordering::Relaxed) {
            if let Ok(s) = cap.stats() {
                let _ = counts.send(s);
            }
            return;
        }
        let sent = match got {
            Ok(p) => tx.send(Ok(p)),
            Err(pcap::Error::TimeoutExpired) => continue,
            Err(e) => {
                let _ = tx.send(Err(e.to_string()));
                return;
            }
        };
        if sent.is_err() {
            return;
        }
    }
}

impl LiveCapture {
    /// Opens every interface (all or none) and starts reading.
    pub fn start(o: &LiveOptions, stop: Box<dyn Fn() -> bool>) -> Result<LiveCapture, LiveError> {
        let caps = o
            .interfaces
            .iter()
            .map(|i| open_one(i, o))
            .collect::<Result<Vec<_>, _>>()?;
        let (tx, rx) = mpsc::sync_channel(4096);
        let finish = Arc::new(AtomicBool::new(false));
        let (counts_tx, counts) = mpsc::channel();
        let interfaces = caps.len();
        let mut breaks = Vec::with_capacity(caps.len());
        for mut cap in caps {
            breaks.push(cap.breakloop_handle());
            let (tx, counts_tx, finish) = (tx.clone(), counts_tx.clone(), Arc::clone(&finish));
            thread::spawn(move || read_interface(cap, &tx, &counts_tx, &finish));
        }
        Ok(LiveCapture {
            rx,
            current: None,
            number: 0,
            stop,
            finish,
            breaks,
            counts,
            interfaces,
        })
    }

    /// Stops every interface and gathers libpcap's counts. Packets still queued are let go
    /// (the capture ended before they were read), so that no thread stays blocked on them.
    pub fn finish(&mut self) -> LiveStats {
        self.finish.store(true, Ordering::Relaxed);
        // A read on a quiet interface may block past its timeout (libpcap's buffer modes):
        // pcap_breakloop wakes it.
        for b in &self.breaks {
            b.breakloop();
        }
        let mut st = LiveStats {
            captured: self.number,
            ..LiveStats::default()
        };
        let mut got = 0;
        // A woken thread answers at once; one that ended on an error never does.
        let until = Instant::now() + WAKE * 10;
        while got < self.interfaces && Instant::now() < until {
            while self.rx.try_recv().is_ok() {}
            match self.counts.recv_timeout(WAKE / 10) {
                Ok(s) => {
                    st.received += u64::from(s.received);
                    st.dropped += u64::from(s.dropped);
                    st.if_dropped += u64::from(s.if_dropped);
                    got += 1;
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        st.unknown = self.interfaces - got;
        st
    }

    /// The next packet; `Ok(None)` once the stop callback says so.
    pub fn next_packet(&mut self) -> Result<Option<Packet<'_>>, CaptureError> {
        loop {
            if (self.stop)() {
                return Ok(None);
            }
            match self.rx.recv_timeout(WAKE) {
                Ok(Ok(p)) => {
                    self.current = Some(p);
                    break;
                }
                Ok(Err(e)) => {
                    return Err(CaptureError::Io(std::io::Error::other(e)));
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Ok(None),
            }
        }
        self.number += 1;
        Ok(self.current.as_ref().map(|p| Packet {
            number: self.number,
            ts_nanos: p.ts_nanos,
            linktype: p.linktype,
            data: &p.data,
            orig_len: p.orig_len.max(p.data.len() as u32),
            file_offset: 0,
            precision: 9,
            left_out: &[],
            topics: &[],
            secrets: &[],
        }))
    }
}
