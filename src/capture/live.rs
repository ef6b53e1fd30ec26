//! Live capture through libpcap (`-i`): one thread per interface hands packets, in arrival
//! order, to the pipeline. Reads wake up every 100 ms so that the caller can decide to stop (an
//! interrupt, a duration) even on a quiet interface.

use super::pcap::{CaptureError, Packet};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::Duration;

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

/// A running live capture.
pub struct LiveCapture {
    rx: Receiver<Result<Owned, String>>,
    current: Option<Owned>,
    number: u64,
    /// Asked while no packet arrives: true ends the capture.
    stop: Box<dyn Fn() -> bool>,
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

impl LiveCapture {
    /// Opens every interface (all or none) and starts reading.
    pub fn start(o: &LiveOptions, stop: Box<dyn Fn() -> bool>) -> Result<LiveCapture, LiveError> {
        let caps = o
            .interfaces
            .iter()
            .map(|i| open_one(i, o))
            .collect::<Result<Vec<_>, _>>()?;
        let (tx, rx) = mpsc::sync_channel(4096);
        for mut cap in caps {
            let tx = tx.clone();
            let linktype = cap.get_datalink().0 as u32;
            // time_t and suseconds_t are i64 here but not on every platform.
            #[allow(clippy::useless_conversion)]
            thread::spawn(move || loop {
                let sent = match cap.next_packet() {
                    Ok(p) => tx.send(Ok(Owned {
                        // With nanosecond precision tv_usec holds nanoseconds.
                        ts_nanos: i64::from(p.header.ts.tv_sec)
                            .saturating_mul(1_000_000_000)
                            .saturating_add(i64::from(p.header.ts.tv_usec)),
                        linktype,
                        data: p.data.to_vec(),
                        orig_len: p.header.len,
                    })),
                    Err(pcap::Error::TimeoutExpired) => continue,
                    Err(e) => {
                        let _ = tx.send(Err(e.to_string()));
                        return;
                    }
                };
                if sent.is_err() {
                    return;
                }
            });
        }
        Ok(LiveCapture {
            rx,
            current: None,
            number: 0,
            stop,
        })
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
        }))
    }
}
