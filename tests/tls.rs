//! TLS on a Kafka port: reported once per connection (version, SNI, bytes encrypted), never as
//! a stream of resync or malformed notices.

use std::process::Command;

fn kdissect(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .output()
        .expect("run kdissect");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/ak44-ssl.pcap");

#[test]
fn each_tls_connection_is_one_line() {
    let (code, out, err) = kdissect(&["-p", "9093", SAMPLE]);
    assert_eq!(code, Some(0), "{out}{err}");
    let lines: Vec<&str> = out.lines().collect();
    // The Java producer over SSL opened four connections to the broker (see samples/README.md).
    assert_eq!(lines.len(), 4, "{out}");
    for l in &lines {
        assert!(l.contains("TLS connection, TLS 1.3"), "{l}");
        assert!(l.contains("→ 127.0.0.1:9093"), "{l}");
        assert!(
            l.contains("cannot be decoded without the session keys"),
            "{l}"
        );
        let bytes: u64 = l
            .split(": ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(bytes > 1000, "encrypted bytes in {l}");
    }
    assert!(
        !out.contains("!!") && !err.contains("malformed"),
        "{out}{err}"
    );
}

#[test]
fn tls_on_a_port_not_given_is_counted_not_listed() {
    let (code, out, err) = kdissect(&[SAMPLE]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("4 TLS connections on ports not given with -p (server port 9093)"),
        "{err}"
    );
    assert!(!err.contains("no Kafka traffic found"), "{err}");
}

#[test]
fn json_keeps_stdout_for_messages() {
    let (code, out, err) = kdissect(&["-p", "9093", "--json", SAMPLE]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(err.matches("TLS connection, TLS 1.3").count(), 4, "{err}");
}
