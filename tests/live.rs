//! Live capture for real: a private network namespace, kdissect capturing on its loopback, and
//! Kafka exchanges sent over a TCP socket inside it. Needs root (network namespaces, raw
//! capture) and the `live` feature: CI runs it with `cargo test --features live --test live`.
#![cfg(feature = "live")]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn vector(name: &str) -> String {
    let p = format!(
        "{}/tests/fixtures/vectors/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p)
        .expect("vector")
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .collect::<String>()
        .split_whitespace()
        .collect()
}

/// A network namespace that is deleted when dropped.
struct Netns(String);

impl Netns {
    fn new() -> Netns {
        // One per test: the tests of this file run at once.
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("kdtest{}-{n}", std::process::id());
        let ok = Command::new("ip").args(["netns", "add", &name]).status();
        assert!(
            ok.is_ok_and(|s| s.success()),
            "cannot create a network namespace (root and iproute2 are needed)"
        );
        let ns = Netns(name);
        assert!(ns
            .exec(&["ip", "link", "set", "lo", "up"])
            .status()
            .expect("ip")
            .success());
        ns
    }

    fn exec(&self, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.0]).args(args);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// Three Metadata v13 exchanges on one connection to 127.0.0.1:PORT (argv[3], default 9092),
/// 200 ms apart.
const EXCHANGES: &str = r#"
import socket, sys, threading, time
req, resp = bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2])
port = int(sys.argv[3]) if len(sys.argv) > 3 else 9092
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(('127.0.0.1', port)); srv.listen(1)
def serve():
    c, _ = srv.accept()
    for i in range(3):
        got = b''
        while len(got) < len(req): got += c.recv(65536)
        c.sendall(resp[:4] + got[8:12] + resp[8:])
    c.close()
t = threading.Thread(target=serve); t.start()
cl = socket.create_connection(('127.0.0.1', port))
for i in range(3):
    cl.sendall(req[:8] + i.to_bytes(4, 'big') + req[12:])
    got = b''
    while len(got) < len(resp): got += cl.recv(65536)
    time.sleep(0.2)
cl.close(); t.join()
"#;

#[test]
fn captures_kafka_on_a_live_interface() {
    let ns = Netns::new();
    let mut kd = ns
        .exec(&[
            env!("CARGO_BIN_EXE_kdissect"),
            "-i",
            "lo",
            "-a",
            "duration:5",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kdissect");
    // Wait until it says it is capturing.
    let mut err = BufReader::new(kd.stderr.take().expect("stderr"));
    let mut first = String::new();
    err.read_line(&mut first).expect("stderr line");
    // Without -p, the ports Kafka commonly uses.
    assert!(
        first.contains("capturing on lo (tcp portrange 9092-9098 or tcp port 9192 or "),
        "{first}"
    );
    // The requests carry correlation ids 0, 1, 2; the responses echo them.
    let (req, resp) = (
        vector("metadata-v13-request.hex"),
        vector("metadata-v13-response.hex"),
    );
    let start = Instant::now();
    let sent = ns
        .exec(&["python3", "-c", EXCHANGES, &req, &resp])
        .status()
        .expect("python3");
    assert!(sent.success());
    let out = kd.wait_with_output().expect("wait");
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let requests: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("Metadata v13 Request"))
        .collect();
    let responses = text
        .lines()
        .filter(|l| l.contains("Metadata v13 Response") && l.contains(" after frame "))
        .count();
    assert_eq!(requests.len(), 3, "{text}");
    assert_eq!(responses, 3, "{text}");
    for (i, l) in requests.iter().enumerate() {
        assert!(l.contains(&format!("corr={i} ")), "{l}");
        assert!(l.contains("→ 127.0.0.1:9092"), "{l}");
    }
    // Nanosecond timestamps from libpcap: 9 digits in the time column.
    let t = requests[0].split_whitespace().nth(1).unwrap_or("");
    assert_eq!(t.split('.').nth(1).map(str::len), Some(9), "{t}");
    // At the end, what libpcap counted, as tcpdump prints it.
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut err, &mut rest);
    let (captured, received, dropped) = pcap_counts(&rest);
    assert!(captured >= 12, "{rest}");
    assert!(received >= captured, "{rest}");
    assert_eq!(dropped, 0, "{rest}");
}

/// The counts of tcpdump's closing lines: packets captured, received by filter, dropped by
/// kernel.
fn pcap_counts(stderr: &str) -> (u64, u64, u64) {
    let count = |what: &str| -> u64 {
        stderr
            .lines()
            .find_map(|l| {
                let (n, rest) = l.split_once(' ')?;
                let rest = rest
                    .strip_prefix("packets ")
                    .or(rest.strip_prefix("packet "))?;
                (rest == what).then(|| n.parse().ok())?
            })
            .unwrap_or_else(|| panic!("no \"packets {what}\" line in\n{stderr}"))
    };
    (
        count("captured"),
        count("received by filter"),
        count("dropped by kernel"),
    )
}

/// kdissect on `lo` of `ns` with `args`, once it says it is capturing.
fn capturing(
    ns: &Netns,
    args: &[&str],
) -> (std::process::Child, BufReader<std::process::ChildStderr>) {
    let mut a = vec![env!("CARGO_BIN_EXE_kdissect"), "-i", "lo"];
    a.extend_from_slice(args);
    let mut kd = ns
        .exec(&a)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kdissect");
    let mut err = BufReader::new(kd.stderr.take().expect("stderr"));
    let mut first = String::new();
    err.read_line(&mut first).expect("stderr line");
    assert!(first.contains("capturing on lo"), "{first}");
    (kd, err)
}

/// The exchanges of EXCHANGES on `port`.
fn exchange(ns: &Netns, port: &str) {
    let (req, resp) = (
        vector("metadata-v13-request.hex"),
        vector("metadata-v13-response.hex"),
    );
    let sent = ns
        .exec(&["python3", "-c", EXCHANGES, &req, &resp, port])
        .status()
        .expect("python3");
    assert!(sent.success());
}

/// Ctrl-C (SIGINT) ends a capture with what was decoded, libpcap's counts, and status 130.
#[test]
fn an_interrupt_ends_a_capture_with_the_counts() {
    let ns = Netns::new();
    let (kd, mut err) = capturing(&ns, &[]);
    exchange(&ns, "9092");
    let pid = kd.id().to_string();
    assert!(Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill")
        .success());
    let out = kd.wait_with_output().expect("wait");
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut err, &mut rest);
    assert_eq!(out.status.code(), Some(130), "{rest}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("Metadata v13 Response").count(), 3, "{text}");
    let (captured, received, dropped) = pcap_counts(&rest);
    assert!(
        captured >= 12 && received >= captured && dropped == 0,
        "{rest}"
    );
}

/// A broker on 19092 (a common Kafka port, not the default one) is found without -p: the
/// default filter covers it and detection recognises the connection's first request.
#[test]
fn a_broker_on_a_common_port_is_found_without_p() {
    let ns = Netns::new();
    let (kd, _err) = capturing(&ns, &["-a", "duration:3"]);
    exchange(&ns, "19092");
    let out = kd.wait_with_output().expect("wait");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.matches("→ 127.0.0.1:19092 [0] Metadata v13 Request")
            .count(),
        3,
        "{text}"
    );
}

/// A broker on a port outside the filter: no packet at all, and the closing lines say which
/// options reach it.
#[test]
fn a_broker_outside_the_filter_gets_a_hint() {
    let ns = Netns::new();
    let (kd, mut err) = capturing(&ns, &["-a", "duration:3"]);
    exchange(&ns, "7777");
    let out = kd.wait_with_output().expect("wait");
    assert!(out.stdout.is_empty());
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut err, &mut rest);
    assert_eq!(pcap_counts(&rest).0, 0, "{rest}");
    assert!(
        rest.contains("no packet passed the capture filter (tcp portrange 9092-9098")
            && rest.contains("needs -p PORT, or a filter of your own -f FILTER"),
        "{rest}"
    );
    // With -p, it is decoded.
    let (kd, _err) = capturing(&ns, &["-a", "duration:3", "-p", "7777"]);
    exchange(&ns, "7777");
    let out = kd.wait_with_output().expect("wait");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("Metadata v13 Response").count(), 3, "{text}");
}

/// TCP on a covered port that is not Kafka (text on 9093): the hint names -p and -f.
#[test]
fn tcp_without_kafka_gets_a_hint() {
    let ns = Netns::new();
    let (kd, mut err) = capturing(&ns, &["-a", "duration:2"]);
    let http = r#"
import socket
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(('127.0.0.1', 9093)); srv.listen(1)
cl = socket.create_connection(('127.0.0.1', 9093)); c, _ = srv.accept()
cl.sendall(b'GET / HTTP/1.1\r\nHost: x\r\n\r\n'); c.recv(100)
c.sendall(b'HTTP/1.1 200 OK\r\n\r\n'); cl.recv(100); cl.close(); c.close()
"#;
    assert!(ns
        .exec(&["python3", "-c", http])
        .status()
        .expect("python3")
        .success());
    let out = kd.wait_with_output().expect("wait");
    assert!(out.stdout.is_empty());
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut err, &mut rest);
    assert!(pcap_counts(&rest).0 > 0, "{rest}");
    assert!(
        rest.contains("no Kafka traffic found in")
            && rest.contains(
                "give the broker's port with -p PORT, or a capture filter with -f FILTER"
            ),
        "{rest}"
    );
}

#[test]
fn without_privileges_the_error_says_what_to_do() {
    // An unprivileged user (nobody) cannot open a capture.
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            env!("CARGO_BIN_EXE_kdissect"),
            "-i",
            "lo",
            "-a",
            "duration:1",
        ])
        .output()
        .expect("setpriv");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("CAP_NET_RAW") && err.contains("setcap"),
        "{err}"
    );
}

/// `--stats --interval 1s` live: the tables are printed after each second of capture time
/// (counted from the packets' timestamps, at the first packet past the second) and once
/// more at the end, the counts growing as the exchanges arrive.
#[test]
fn stats_with_an_interval_are_printed_every_interval() {
    let ns = Netns::new();
    // -q leaves out the "capturing on" line too: give libpcap a moment instead.
    let kd = ns
        .exec(&[
            env!("CARGO_BIN_EXE_kdissect"),
            "-i",
            "lo",
            "--stats",
            "-q",
            "--interval",
            "1s",
            "-a",
            "duration:7",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kdissect");
    std::thread::sleep(Duration::from_millis(1500));
    // 16 Metadata exchanges on one connection, 250 ms apart: about 4 s of traffic.
    let steady = EXCHANGES
        .replace("range(3)", "range(16)")
        .replace("time.sleep(0.2)", "time.sleep(0.25)");
    let (req, resp) = (
        vector("metadata-v13-request.hex"),
        vector("metadata-v13-response.hex"),
    );
    let sent = ns
        .exec(&["python3", "-c", &steady, &req, &resp])
        .status()
        .expect("python3");
    assert!(sent.success());
    let out = kd.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    // The requests column of the Metadata row of each "Kafka APIs" table printed.
    let counts: Vec<u64> = text
        .lines()
        .filter(|l| l.starts_with("│ Metadata (3)"))
        .filter_map(|l| l.split('┆').nth(2)?.trim().parse().ok())
        .collect();
    println!("Metadata requests in each table printed: {counts:?}");
    assert!(counts.len() >= 3, "{counts:?}\n{text}");
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
    assert!(counts[0] < counts[counts.len() - 1], "{counts:?}");
    assert_eq!(counts.last(), Some(&16), "{counts:?}\n{text}");
    assert_eq!(text.matches("Kafka APIs").count(), counts.len(), "{text}");
}
