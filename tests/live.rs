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
        let name = format!("kdtest{}", std::process::id());
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

/// Three Metadata v13 exchanges on one connection to 127.0.0.1:9092, 200 ms apart.
const EXCHANGES: &str = r#"
import socket, sys, threading, time
req, resp = bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2])
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(('127.0.0.1', 9092)); srv.listen(1)
def serve():
    c, _ = srv.accept()
    for i in range(3):
        got = b''
        while len(got) < len(req): got += c.recv(65536)
        c.sendall(resp[:4] + got[8:12] + resp[8:])
    c.close()
t = threading.Thread(target=serve); t.start()
cl = socket.create_connection(('127.0.0.1', 9092))
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
    assert!(first.contains("capturing on lo (tcp port 9092)"), "{first}");
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
