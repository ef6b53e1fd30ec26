//! The exit-status tally: every message and notice counted, whatever the filters show, for
//! the closing report on stderr and the exit status. The counting itself is the library's
//! [`StreamHealth`], the same the statistics use; captures and hex input are judged from it
//! as [`Judging`] says.

use kdissect::kafka::stream::{Notice, Record};
use kdissect::kafka::StreamHealth;
use kdissect::render::words::count;
use kdissect::tls::{Keys, TlsConnection};
use std::collections::BTreeMap;
use std::process::ExitCode;

/// How the counts are judged.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Judging {
    /// A capture is traffic: a message of an API or version without tables is what kdissect
    /// cannot read yet, reported apart; damage is what the capture or the bytes broke.
    #[default]
    Capture,
    /// Hex input is frames handed in to be decoded: one that does not decode (no tables for
    /// it, or a response with nothing to tell its API) fails the run as a malformed one does.
    /// Frames and skipped bytes are reported in frames, not in a capture's terms.
    Hex,
}

#[derive(Debug, Default)]
pub(crate) struct Tally {
    judging: Judging,
    health: StreamHealth,
    tls: TlsTally,
}

/// TLS connections, by what became of them: said at the end, as tshark users expect nothing
/// of (it shows such traffic as "Application Data" and exits 0), but a reader of a clean
/// summary would not know without it.
#[derive(Debug, Default)]
struct TlsTally {
    /// Key logs were given (`--keylog`, `--keylog-env`).
    keys_given: bool,
    decrypted: u64,
    /// Not decrypted, by why: connections and their encrypted bytes.
    not_decrypted: BTreeMap<Why, (u64, u64)>,
    /// Not decrypted, on ports not given with -p: how many, and the server ports (first few).
    elsewhere: (u64, Vec<u16>),
}

/// Why a TLS connection was not decrypted, in the order the closing line gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Why {
    NoKeyLog,
    Missing,
    NotKept,
    Wrong,
    Suite,
    Handshake,
    NoRecord,
}

impl Why {
    fn of(keys: Keys) -> Why {
        match keys {
            Keys::NoKeyLog => Why::NoKeyLog,
            Keys::Missing => Why::Missing,
            Keys::NotKept => Why::NotKept,
            Keys::Wrong => Why::Wrong,
            Keys::UnsupportedSuite => Why::Suite,
            Keys::NoHandshake => Why::Handshake,
            Keys::Found | Keys::Decrypted => Why::NoRecord,
        }
    }

    /// Why, when it is the only reason.
    fn text(self) -> &'static str {
        match self {
            Why::NoKeyLog => "no key log was given: give --keylog FILE with their session secrets (docs/tls.md says how to have the clients or the broker write one)",
            Why::Missing => "their ClientHello randoms are in none of the key logs given (a key log of another capture?)",
            Why::NotKept => "their ClientHello randoms are not among the client randoms kept of the key logs",
            Why::Wrong => "the secrets logged for them do not authenticate their records (a key log of another run?)",
            Why::Suite => "kdissect does not decrypt their cipher suite",
            Why::Handshake => "the capture started after their ClientHello, so no secret can be matched to them",
            Why::NoRecord => "secrets were found, but no encrypted record came to decrypt",
        }
    }

    /// Why, in a list of several.
    fn short(self) -> &'static str {
        match self {
            Why::NoKeyLog => "without a key log",
            Why::Missing => "not in the key logs given",
            Why::NotKept => "left out of the key logs kept",
            Why::Wrong => "with logged secrets that do not authenticate",
            Why::Suite => "of a suite not decrypted",
            Why::Handshake => "picked up after their handshake",
            Why::NoRecord => "with no encrypted record",
        }
    }
}

impl Tally {
    pub(crate) fn new(judging: Judging, keys_given: bool) -> Tally {
        Tally {
            judging,
            tls: TlsTally {
                keys_given,
                ..TlsTally::default()
            },
            ..Tally::default()
        }
    }

    pub(crate) fn message(&mut self, rec: &Record<'_>) {
        self.health.message(rec);
    }

    pub(crate) fn notice(&mut self, n: &Notice) {
        self.health.notice(n);
    }

    /// A TLS connection, on a Kafka port or elsewhere.
    pub(crate) fn tls(&mut self, t: &TlsConnection, on_kafka_port: bool) {
        let tls = &mut self.tls;
        if t.keys.decrypted() {
            tls.decrypted += 1;
            return;
        }
        let n = tls.not_decrypted.entry(Why::of(t.keys)).or_default();
        n.0 += 1;
        n.1 += t.encrypted_bytes;
        if on_kafka_port {
            return;
        }
        tls.elsewhere.0 += 1;
        let port = t.server.port();
        if tls.elsewhere.1.len() < 5 && !tls.elsewhere.1.contains(&port) {
            tls.elsewhere.1.push(port);
        }
    }

    /// Kafka traffic found, decodable or not: messages and TLS connections.
    pub(crate) fn traffic(&self) -> u64 {
        let t = &self.tls;
        self.health.messages + t.decrypted + t.not_decrypted.values().map(|n| n.0).sum::<u64>()
    }

    /// The closing line for TLS connections that could not be decrypted, and for key logs
    /// given to a capture without TLS.
    fn tls_lines(&self) -> Vec<String> {
        let t = &self.tls;
        let (n, bytes) = t
            .not_decrypted
            .values()
            .fold((0, 0), |(a, b), (c, d)| (a + c, b + d));
        if n == 0 {
            if t.keys_given && t.decrypted == 0 {
                return vec![
                    "the key logs given were not used: the capture has no TLS connection".into(),
                ];
            }
            return Vec::new();
        }
        let why = match t.not_decrypted.iter().collect::<Vec<_>>()[..] {
            [(why, _)] => format!(": {}", why.text()),
            ref all => {
                let list: Vec<String> = all
                    .iter()
                    .map(|(why, (k, _))| format!("{k} {}", why.short()))
                    .collect();
                let hint = if t.not_decrypted.contains_key(&Why::NoKeyLog) {
                    ": give --keylog FILE with their session secrets"
                } else {
                    ""
                };
                format!(" ({}){hint}", list.join(", "))
            }
        };
        let mut line = format!(
            "{} ({}) {} encrypted and could not be decoded{why}",
            count(n, "TLS connection"),
            count(bytes, "byte"),
            if n == 1 { "was" } else { "were" },
        );
        if t.elsewhere.0 > 0 {
            let ports: Vec<String> = t.elsewhere.1.iter().map(u16::to_string).collect();
            let which = if t.elsewhere.0 == n {
                "none of them is on a port given with -p".to_string()
            } else {
                format!("{} of them are on ports not given with -p", t.elsewhere.0)
            };
            line.push_str(&format!(
                "; {which} (server {} {}): -p {} lists them one by one",
                if ports.len() == 1 { "port" } else { "ports" },
                ports.join(", "),
                ports.join(" -p ")
            ));
        }
        vec![line]
    }

    /// The closing lines for stderr; `trouble` says an input could not be read whole.
    pub(crate) fn report(&self, trouble: bool) -> Vec<String> {
        if self.judging == Judging::Hex {
            return self.frames().line().into_iter().collect();
        }
        let h = &self.health;
        let mut lines = self.tls_lines();
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
        let failed = match self.judging {
            Judging::Capture => self.health.damaged() > 0,
            Judging::Hex => self.frames().failed(),
        };
        if failed || trouble {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        }
    }
}

/// Hex input's counts: frames, those that did not decode cleanly, and the places and bytes
/// skipped where no frame could start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Frames {
    frames: u64,
    malformed: u64,
    skipped: u64,
    skipped_bytes: u64,
}

impl Tally {
    fn frames(&self) -> Frames {
        let h = &self.health;
        Frames {
            frames: h.messages,
            // Disjoint counts, which together are the frames not decoded cleanly.
            malformed: h.partial + h.malformed + h.undecoded,
            skipped: h.resyncs,
            skipped_bytes: h.skipped_bytes,
        }
    }
}

impl Frames {
    fn failed(&self) -> bool {
        self.malformed > 0 || self.skipped > 0
    }

    /// The closing line, when something was wrong: frames malformed, bytes skipped where no
    /// frame could start, or no frame at all. Skipped bytes are not frames, so they are
    /// counted apart (an input of garbage alone has no frame to be "1 of 0").
    fn line(&self) -> Option<String> {
        let skips = || {
            format!(
                "{} skipped in {} where no size prefix could start a frame",
                count(self.skipped_bytes, "byte"),
                count(self.skipped, "place")
            )
        };
        match (self.frames, self.malformed, self.skipped) {
            (0, _, 0) => None,
            (0, _, _) => Some(format!("no Kafka frame found: {}", skips())),
            (_, 0, 0) => None,
            (n, 0, _) => Some(format!(
                "{}, none malformed; {}",
                count(n, "frame"),
                skips()
            )),
            (n, m, 0) => Some(format!(
                "{m} of {} malformed or undecodable",
                count(n, "frame")
            )),
            (n, m, _) => Some(format!(
                "{m} of {} malformed or undecodable; {}",
                count(n, "frame"),
                skips()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Frames;

    fn line(frames: u64, malformed: u64, skipped: u64, skipped_bytes: u64) -> Option<String> {
        Frames {
            frames,
            malformed,
            skipped,
            skipped_bytes,
        }
        .line()
    }

    #[test]
    fn the_hex_closing_line_counts_frames_and_skipped_bytes_apart() {
        assert_eq!(line(3, 0, 0, 0), None);
        assert_eq!(line(0, 0, 0, 0), None);
        assert_eq!(
            line(1, 1, 0, 0).as_deref(),
            Some("1 of 1 frame malformed or undecodable")
        );
        assert_eq!(
            line(0, 0, 1, 6).as_deref(),
            Some("no Kafka frame found: 6 bytes skipped in 1 place where no size prefix could start a frame")
        );
        assert_eq!(
            line(4, 0, 2, 1).as_deref(),
            Some("4 frames, none malformed; 1 byte skipped in 2 places where no size prefix could start a frame")
        );
        assert_eq!(
            line(4, 2, 1, 9).as_deref(),
            Some("2 of 4 frames malformed or undecodable; 9 bytes skipped in 1 place where no size prefix could start a frame")
        );
    }
}
