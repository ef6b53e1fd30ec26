//! The exit-status tally: every message and notice counted, whatever the filters show, for
//! the closing report on stderr and the exit status. The counting itself is the library's
//! [`StreamHealth`], the same the statistics use.

use kdissect::kafka::stream::{Notice, Record};
use kdissect::kafka::StreamHealth;
use kdissect::render::words::count;
use kdissect::tls::TlsConnection;
use std::process::ExitCode;

#[derive(Debug, Default)]
pub(crate) struct Tally {
    health: StreamHealth,
    /// TLS connections on Kafka ports.
    tls: u64,
    /// TLS connections on other ports: how many, and the server ports (first few).
    tls_elsewhere: (u64, Vec<u16>),
}

impl Tally {
    pub(crate) fn message(&mut self, rec: &Record<'_>) {
        self.health.message(rec);
    }

    pub(crate) fn notice(&mut self, n: &Notice) {
        self.health.notice(n);
    }

    /// A TLS connection, on a Kafka port or elsewhere.
    pub(crate) fn tls(&mut self, t: &TlsConnection, on_kafka_port: bool) {
        if on_kafka_port {
            self.tls += 1;
            return;
        }
        self.tls_elsewhere.0 += 1;
        let port = t.server.port();
        if self.tls_elsewhere.1.len() < 5 && !self.tls_elsewhere.1.contains(&port) {
            self.tls_elsewhere.1.push(port);
        }
    }

    /// Kafka traffic found, decodable or not: messages and TLS connections.
    pub(crate) fn traffic(&self) -> u64 {
        self.health.messages + self.tls + self.tls_elsewhere.0
    }

    /// The closing lines for stderr; `trouble` says an input could not be read whole.
    pub(crate) fn report(&self, trouble: bool) -> Vec<String> {
        let h = &self.health;
        let mut lines = Vec::new();
        if self.tls_elsewhere.0 > 0 {
            let ports: Vec<String> = self.tls_elsewhere.1.iter().map(u16::to_string).collect();
            lines.push(format!(
                "{} on ports not given with -p (server {} {}): encrypted, not listed; -p PORT lists them",
                count(self.tls_elsewhere.0, "TLS connection"),
                if ports.len() == 1 { "port" } else { "ports" },
                ports.join(", ")
            ));
        }
        if h.undecoded > 0 {
            lines.push(format!(
                "{} of APIs or versions kdissect does not decode yet ({}): header shown, body raw",
                count(h.undecoded, "message"),
                h.undecoded_apis.join(", ")
            ));
        }
        if h.frames_dropped > 0 {
            lines.push(format!(
                "{} still arriving {} dropped to keep the connections under --max-frames-total (raise it to see them)",
                count(h.frames_dropped, "frame"),
                if h.frames_dropped == 1 { "was" } else { "were" }
            ));
        }
        if h.damaged() > 0 || trouble {
            lines.push(format!(
                "{}, {} malformed, {} lost in gaps, {} skipped to resynchronise, {} other stream damage, {}, {}",
                count(h.messages, "message"),
                h.malformed,
                count(h.gaps, "frame"),
                count(h.skipped_bytes, "byte"),
                h.other_damage(),
                count(h.retransmissions, "retransmission"),
                count(h.unanswered, "unanswered request")
            ));
        }
        lines
    }

    /// 1 when something was damaged or unreadable, 0 otherwise.
    pub(crate) fn exit_code(&self, trouble: bool) -> ExitCode {
        if self.health.damaged() > 0 || trouble {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    }
}
