//! Session secrets in the NSS key log format, the one browsers, OpenSSL, Go, Python, Node and
//! the Java agent `extract-tls-secrets` write (one `LABEL <client random> <secret>` per line,
//! hex). They come from `--keylog` files, `SSLKEYLOGFILE` and pcapng Decryption Secrets
//! Blocks, and are matched to connections by the ClientHello random.
// Input-derived values never index, unwrap or expect here: a hostile key log must not panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::collections::HashMap;
use std::fmt::Write as _;

/// Bytes read of one key log source; past this the rest is left unread (and told). A TLS 1.3
/// connection takes four lines of about 200 bytes: 64 MiB holds some 80 000 connections.
pub const MAX_KEYLOG_BYTES: usize = 64 * 1024 * 1024;
/// Client randoms kept over all sources (about 300 bytes each).
pub const MAX_ENTRIES: usize = 100_000;
/// The longest secret a suite here uses (SHA-384).
const MAX_SECRET: usize = 48;

/// One secret, at most 48 bytes, kept inline.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Secret {
    len: u8,
    bytes: [u8; MAX_SECRET],
}

impl Secret {
    fn from_hex(hex: &str) -> Option<Secret> {
        let raw = hex::decode(hex).ok()?;
        if raw.is_empty() || raw.len() > MAX_SECRET {
            return None;
        }
        let mut bytes = [0; MAX_SECRET];
        bytes.get_mut(..raw.len())?.copy_from_slice(&raw);
        Some(Secret {
            len: raw.len() as u8,
            bytes,
        })
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or(&[])
    }
}

// Secrets are never printed by accident.
impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret({} bytes)", self.len)
    }
}

/// What a key log holds for one client random.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Secrets {
    /// TLS 1.2 (and earlier): `CLIENT_RANDOM`, the master secret.
    pub master: Option<Secret>,
    /// TLS 1.3.
    pub client_handshake: Option<Secret>,
    pub server_handshake: Option<Secret>,
    pub client_traffic: Option<Secret>,
    pub server_traffic: Option<Secret>,
}

/// The labels read, in the order they are written back out.
const LABELS: [&str; 5] = [
    "CLIENT_RANDOM",
    "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
    "SERVER_HANDSHAKE_TRAFFIC_SECRET",
    "CLIENT_TRAFFIC_SECRET_0",
    "SERVER_TRAFFIC_SECRET_0",
];

impl Secrets {
    fn slot(&mut self, label: &str) -> Option<&mut Option<Secret>> {
        Some(match label {
            "CLIENT_RANDOM" => &mut self.master,
            "CLIENT_HANDSHAKE_TRAFFIC_SECRET" => &mut self.client_handshake,
            "SERVER_HANDSHAKE_TRAFFIC_SECRET" => &mut self.server_handshake,
            "CLIENT_TRAFFIC_SECRET_0" => &mut self.client_traffic,
            "SERVER_TRAFFIC_SECRET_0" => &mut self.server_traffic,
            _ => return None,
        })
    }

    fn slots(&self) -> [Option<Secret>; 5] {
        [
            self.master,
            self.client_handshake,
            self.server_handshake,
            self.client_traffic,
            self.server_traffic,
        ]
    }
}

/// The secrets of every source read, by client random.
#[derive(Debug, Default, Clone)]
pub struct KeyLog {
    by_random: HashMap<[u8; 32], Secrets>,
    /// TLS 1.2 master secrets by session id: the `RSA Session-ID:... Master-Key:...` lines
    /// that Java's key log agent and older OpenSSL write (matched by the ServerHello's
    /// session id).
    by_session: HashMap<Vec<u8>, Secret>,
    /// Lines not understood or of labels not used (early data, exporter secrets, comments).
    pub ignored_lines: u64,
    /// Client randoms not kept because `MAX_ENTRIES` were held.
    pub dropped: u64,
    /// Sources cut at `MAX_KEYLOG_BYTES`.
    pub cut_sources: u64,
}

/// What reading one source found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Added {
    pub secrets: u64,
    /// Lines not used: comments, labels not needed here, lines not understood.
    pub ignored: u64,
    /// Lines that are not key log lines at all (neither a comment nor `LABEL <64 hex
    /// digits> <hex>` nor a `RSA Session-ID:` line), and the first of them (1-based).
    pub bad: u64,
    pub first_bad: Option<usize>,
    /// Lines past `MAX_ENTRIES` client randoms, not kept.
    pub dropped: u64,
    /// The source was cut at `MAX_KEYLOG_BYTES`.
    pub cut: bool,
}

/// What one key log line is to this tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    Secret,
    /// A comment, or a well-formed line of a label not used (early data, exporters).
    Unused,
    /// Well formed, but past `MAX_ENTRIES` client randoms.
    Dropped,
    /// Not a key log line.
    Bad,
}

impl KeyLog {
    pub fn is_empty(&self) -> bool {
        self.by_random.is_empty() && self.by_session.is_empty()
    }

    /// Client randoms with at least one secret.
    pub fn len(&self) -> usize {
        self.by_random.len()
    }

    /// Reads key log text (at most `MAX_KEYLOG_BYTES` of it).
    pub fn add_text(&mut self, text: &[u8]) -> Added {
        let mut added = Added::default();
        let text = match text.get(..MAX_KEYLOG_BYTES) {
            Some(t) if text.len() > MAX_KEYLOG_BYTES => {
                self.cut_sources += 1;
                added.cut = true;
                t
            }
            _ => text,
        };
        for (i, line) in text.split(|&b| b == b'\n').enumerate() {
            let kind = match std::str::from_utf8(line).map(str::trim) {
                Ok("") => continue,
                Ok(l) if l.starts_with('#') => Line::Unused,
                Ok(l) => self.add_line(l),
                Err(_) => Line::Bad,
            };
            match kind {
                Line::Secret => added.secrets += 1,
                Line::Unused => added.ignored += 1,
                Line::Dropped => {
                    added.ignored += 1;
                    added.dropped += 1;
                }
                Line::Bad => {
                    added.ignored += 1;
                    added.bad += 1;
                    added.first_bad.get_or_insert(i + 1);
                }
            }
        }
        self.ignored_lines += added.ignored;
        added
    }

    /// One `LABEL random secret` line.
    fn add_line(&mut self, line: &str) -> Line {
        if let Some(rest) = line.strip_prefix("RSA ") {
            return self.add_session_line(rest);
        }
        let mut words = line.split_ascii_whitespace();
        let (Some(label), Some(random), Some(secret), None) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            return Line::Bad;
        };
        let (Some(random), Some(secret)) = (client_random(random), hex_secret(secret)) else {
            return Line::Bad;
        };
        let Some(secret) = secret else {
            // Hex, but longer than any secret used here: a label of another use.
            return Line::Unused;
        };
        if !LABELS.contains(&label) {
            return Line::Unused;
        }
        if !self.by_random.contains_key(&random)
            && self.by_random.len() + self.by_session.len() >= MAX_ENTRIES
        {
            self.dropped += 1;
            return Line::Dropped;
        }
        let entry = self.by_random.entry(random).or_default();
        match entry.slot(label) {
            Some(slot) => {
                *slot = Some(secret);
                Line::Secret
            }
            None => Line::Unused,
        }
    }

    /// `Session-ID:<hex> Master-Key:<hex>`.
    fn add_session_line(&mut self, rest: &str) -> Line {
        let mut words = rest.split_ascii_whitespace();
        let (Some(id), Some(key), None) = (
            words.next().and_then(|w| w.strip_prefix("Session-ID:")),
            words.next().and_then(|w| w.strip_prefix("Master-Key:")),
            words.next(),
        ) else {
            return Line::Bad;
        };
        let (Ok(id), Some(master)) = (hex::decode(id), Secret::from_hex(key)) else {
            return Line::Bad;
        };
        if id.is_empty() || id.len() > 32 {
            return Line::Bad;
        }
        if self.by_random.len() + self.by_session.len() >= MAX_ENTRIES {
            self.dropped += 1;
            return Line::Dropped;
        }
        self.by_session.insert(id, master);
        Line::Secret
    }

    /// Reads one key log file's text, and what to say of it: `Err` for a file with no key log
    /// line at all (a capture, a certificate, another file given by mistake), naming its first
    /// line that is not one; warnings for one cut at `MAX_KEYLOG_BYTES`, one with lines that
    /// are not key log lines, one that holds no secret used here.
    pub fn add_file(&mut self, name: &str, text: &[u8]) -> Result<Vec<String>, String> {
        let a = self.add_text(text);
        let first = a.first_bad.unwrap_or(1);
        if a.secrets == 0 && a.bad > 0 {
            return Err(format!(
                "--keylog {name}: not a TLS key log: none of its lines is one (line {first} is not `LABEL <client random, 64 hex digits> <secret in hex>`, the NSS key log format SSLKEYLOGFILE writes)"
            ));
        }
        let mut warnings = Vec::new();
        if a.cut {
            warnings.push(format!(
                "--keylog {name}: only its first {} MiB were read (kdissect's limit): the secrets past them are left out",
                MAX_KEYLOG_BYTES >> 20
            ));
        }
        if a.bad == 1 {
            warnings.push(format!(
                "--keylog {name}: 1 line is not a key log line, skipped (line {first})"
            ));
        } else if a.bad > 1 {
            warnings.push(format!(
                "--keylog {name}: {} lines are not key log lines, skipped (the first: line {first})",
                a.bad
            ));
        }
        if a.secrets == 0 && a.dropped == 0 {
            warnings.push(format!(
                "--keylog {name}: holds no TLS secret kdissect reads ({}): nothing can be decrypted with it",
                if a.ignored == 0 { "it is empty".to_string() } else { format!("{} lines of comments or labels not used", a.ignored) }
            ));
        }
        Ok(warnings)
    }

    /// What to say once every key log is read: client randoms past `MAX_ENTRIES` left out.
    pub fn cap_warning(&self) -> Option<String> {
        (self.dropped > 0).then(|| {
            format!(
                "the key logs hold more than {MAX_ENTRIES} client randoms (kdissect's limit): the secrets of {} past it were not kept; a connection whose random is among them says so",
                match self.dropped {
                    1 => "1 line".to_string(),
                    n => format!("{n} lines"),
                }
            )
        })
    }

    /// The TLS 1.2 master secret logged for a session id.
    pub fn lookup_session(&self, id: &[u8]) -> Option<&Secret> {
        self.by_session.get(id)
    }

    /// The secrets for a ClientHello random.
    pub fn lookup(&self, random: &[u8; 32]) -> Option<&Secrets> {
        self.by_random.get(random)
    }

    /// The key log lines for some client randoms, as a Decryption Secrets Block holds them.
    pub fn lines_for<'a>(&self, randoms: impl IntoIterator<Item = &'a [u8; 32]>) -> String {
        randoms
            .into_iter()
            .filter_map(|r| Some(lines(r, self.by_random.get(r)?)))
            .collect()
    }
}

/// The key log lines of one client random's secrets.
pub fn lines(random: &[u8; 32], s: &Secrets) -> String {
    let mut out = String::new();
    for (label, secret) in LABELS.iter().zip(s.slots()) {
        if let Some(secret) = secret {
            let _ = writeln!(
                out,
                "{label} {} {}",
                hex::encode(random),
                hex::encode(secret.as_bytes())
            );
        }
    }
    out
}

/// A secret in hex: `Some(None)` for valid hex too long to be a secret used here.
fn hex_secret(hex: &str) -> Option<Option<Secret>> {
    if hex.is_empty() || hex.len() % 2 != 0 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some(Secret::from_hex(hex))
}

fn client_random(hex: &str) -> Option<[u8; 32]> {
    let mut r = [0; 32];
    hex::decode_to_slice(hex, &mut r).ok()?;
    Some(r)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn reads_tls12_and_tls13_lines_and_skips_the_rest() {
        let r = "ab".repeat(32);
        let text = format!(
            "# comment\nCLIENT_RANDOM {r} {}\nCLIENT_TRAFFIC_SECRET_0 {r} {}\n\
             CLIENT_EARLY_TRAFFIC_SECRET {r} {}\nCLIENT_RANDOM zz 00\n",
            "11".repeat(48),
            "22".repeat(32),
            "33".repeat(32)
        );
        let mut k = KeyLog::default();
        let added = k.add_text(text.as_bytes());
        assert_eq!(
            added,
            Added {
                secrets: 2,
                ignored: 3,
                bad: 1,
                first_bad: Some(5),
                dropped: 0,
                cut: false,
            }
        );
        let s = k.lookup(&[0xab; 32]).unwrap();
        assert_eq!(s.master.unwrap().as_bytes(), &[0x11; 48]);
        assert_eq!(s.client_traffic.unwrap().as_bytes(), &[0x22; 32]);
        assert!(s.server_traffic.is_none());
        assert!(k.lookup(&[0; 32]).is_none());
        let back = k.lines_for([&[0xab; 32]]);
        assert_eq!(back.lines().count(), 2);
        assert!(back.starts_with("CLIENT_RANDOM abab"));
    }

    #[test]
    fn reads_session_id_lines() {
        let mut k = KeyLog::default();
        let line = format!(
            "RSA Session-ID:{} Master-Key:{}",
            "0a".repeat(32),
            "11".repeat(48)
        );
        assert_eq!(k.add_text(line.as_bytes()).secrets, 1);
        assert_eq!(k.lookup_session(&[10; 32]).unwrap().as_bytes(), &[0x11; 48]);
        assert!(k.lookup_session(&[10; 31]).is_none());
    }

    #[test]
    fn a_secret_too_long_is_not_kept() {
        let mut k = KeyLog::default();
        let line = format!("CLIENT_RANDOM {} {}", "00".repeat(32), "11".repeat(49));
        assert_eq!(k.add_text(line.as_bytes()).secrets, 0);
        assert!(k.is_empty());
    }
}
