//! The exit-status tally: every message and notice counted, whatever the filters show, for
//! the closing report on stderr and the exit status.

use kdissect::kafka::stream::{Notice, Record};
use kdissect::tls::TlsConnection;
use std::process::ExitCode;

#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) messages: u64,
    malformed: u64,
    lost: u64,
    resyncs: u64,
    retransmissions: u64,
    unanswered: u64,
    undecoded: u64,
    undecoded_apis: Vec<String>,
    /// Bytes skipped while looking for frame boundaries.
    skipped_bytes: u64,
    /// Conflicting overlaps, connections ending inside a frame, impossible size prefixes.
    other_damage: u64,
    /// TLS connections on Kafka ports.
    pub(crate) tls: u64,
    /// TLS connections on other ports: how many, and the server ports (first few).
    tls_elsewhere: (u64, Vec<u16>),
}

impl Tally {
    pub(crate) fn message(&mut self, rec: &Record<'_>) {
        self.messages += 1;
        if rec.partial {
            // Counted as lost by its gap notice.
        } else if rec.msg.is_malformed() {
            self.malformed += 1;
        } else if rec.msg.is_unknown_api() {
            let name = rec.msg.api_name().into_owned();
            if !self.undecoded_apis.contains(&name) {
                self.undecoded_apis.push(name);
            }
            self.undecoded += 1;
        }
    }

    pub(crate) fn notice(&mut self, n: &Notice) {
        match n {
            Notice::LostInGap { .. } => self.lost += 1,
            Notice::Resync { skipped, .. } => {
                self.resyncs += 1;
                self.skipped_bytes += *skipped as u64;
            }
            Notice::Retransmission { .. } => self.retransmissions += 1,
            Notice::Unanswered { .. } => self.unanswered += 1,
            Notice::ConflictingOverlap { .. }
            | Notice::EndedInFrame { .. }
            | Notice::BadSize { .. } => self.other_damage += 1,
            _ => {}
        }
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
        self.messages + self.tls + self.tls_elsewhere.0
    }

    /// Anything the capture holds that could not be decoded as a whole message.
    fn damaged(&self) -> u64 {
        self.malformed + self.lost + self.skipped_bytes + self.other_damage
    }

    /// The closing lines for stderr; `trouble` says an input could not be read whole.
    pub(crate) fn report(&self, trouble: bool) -> Vec<String> {
        let mut lines = Vec::new();
        if self.tls_elsewhere.0 > 0 {
            let ports: Vec<String> = self.tls_elsewhere.1.iter().map(u16::to_string).collect();
            lines.push(format!(
                "{} TLS connections on ports not given with -p (server ports {}): encrypted, not listed; -p PORT lists them",
                self.tls_elsewhere.0,
                ports.join(", ")
            ));
        }
        if self.undecoded > 0 {
            lines.push(format!(
                "{} messages of APIs or versions kdissect does not decode yet ({}): header shown, body raw",
                self.undecoded,
                self.undecoded_apis.join(", ")
            ));
        }
        if self.damaged() > 0 || trouble {
            lines.push(format!(
                "{} messages, {} malformed, {} frames lost in gaps, {} bytes skipped to resynchronise, {} other stream damage, {} retransmissions, {} unanswered requests",
                self.messages, self.malformed, self.lost, self.skipped_bytes, self.other_damage, self.retransmissions, self.unanswered
            ));
        }
        lines
    }

    /// 1 when something was damaged or unreadable, 0 otherwise.
    pub(crate) fn exit_code(&self, trouble: bool) -> ExitCode {
        if self.damaged() > 0 || trouble {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    }
}
