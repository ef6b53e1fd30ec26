//! The SASL messages carried in SaslAuthenticate's `AuthBytes`: split into their parts so that
//! a login can be read (who, which mechanism, which step) and its secrets masked.
//!
//! The mechanism is recognised from the bytes themselves, not from the SaslHandshake that came
//! before, so a capture that starts after the handshake still reads:
//! - PLAIN (RFC 4616): `authzid NUL authcid NUL passwd`;
//! - SCRAM (RFC 5802, Kafka's SCRAM-SHA-256/512): comma-separated `k=v` attributes, the
//!   client's first message after a GS2 header (`n,,`); the server's first starts `r=`, the
//!   client's final `c=`, the server's final `v=` or `e=`;
//! - OAUTHBEARER (RFC 7628): a GS2 header, then `\x01`-separated `key=value` pairs ending in
//!   `\x01\x01`, the token in `auth=Bearer ...`; the server's error answer is JSON.
//!
//! Every byte lands in one leaf (a separator belongs to the part before it). Secrets (PLAIN's
//! password, SCRAM's client proof, the bearer token, and bytes of a mechanism not recognised,
//! such as GSSAPI's Kerberos tokens) are returned as spans for the renderers to mask.

use super::node::{Node, NodeKind, Region, Shape, Value};
use std::borrow::Cow;

/// Which SASL message the bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaslStep {
    Empty,
    PlainInitial,
    ScramClientFirst,
    ScramServerFirst,
    ScramClientFinal,
    ScramServerFinal,
    OauthBearerInitial,
    OauthBearerError,
    /// Not recognised (GSSAPI, or something else): kept whole, and masked.
    Opaque,
}

impl SaslStep {
    pub fn label(self) -> &'static str {
        match self {
            SaslStep::Empty => "empty",
            SaslStep::PlainInitial => "PLAIN initial response",
            SaslStep::ScramClientFirst => "SCRAM client-first-message",
            SaslStep::ScramServerFirst => "SCRAM server-first-message",
            SaslStep::ScramClientFinal => "SCRAM client-final-message",
            SaslStep::ScramServerFinal => "SCRAM server-final-message",
            SaslStep::OauthBearerInitial => "OAUTHBEARER initial response",
            SaslStep::OauthBearerError => "OAUTHBEARER error",
            SaslStep::Opaque => "SASL data of a mechanism not recognised",
        }
    }

    /// A few words for a summary line.
    pub fn short(self) -> &'static str {
        match self {
            SaslStep::Empty => "empty",
            SaslStep::PlainInitial => "PLAIN",
            SaslStep::ScramClientFirst => "SCRAM client-first",
            SaslStep::ScramServerFirst => "SCRAM server-first",
            SaslStep::ScramClientFinal => "SCRAM client-final",
            SaslStep::ScramServerFinal => "SCRAM server-final",
            SaslStep::OauthBearerInitial => "OAUTHBEARER",
            SaslStep::OauthBearerError => "OAUTHBEARER error",
            SaslStep::Opaque => "unrecognised",
        }
    }

    /// The mechanism family the step belongs to.
    pub fn mechanism(self) -> Option<&'static str> {
        match self {
            SaslStep::PlainInitial => Some("PLAIN"),
            SaslStep::ScramClientFirst
            | SaslStep::ScramServerFirst
            | SaslStep::ScramClientFinal
            | SaslStep::ScramServerFinal => Some("SCRAM"),
            SaslStep::OauthBearerInitial | SaslStep::OauthBearerError => Some("OAUTHBEARER"),
            SaslStep::Empty | SaslStep::Opaque => None,
        }
    }
}

/// The parts of one SASL message.
#[derive(Debug)]
pub struct Parsed {
    pub step: SaslStep,
    /// Leaves tiling the bytes, in order.
    pub parts: Vec<Node>,
    /// Spans (offset, length) in the buffer that hold secrets.
    pub secrets: Vec<(usize, usize)>,
}

/// What a summary or a filter needs of a SASL message: which step, and the user it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaslFact {
    pub step: SaslStep,
    /// PLAIN's authcid or SCRAM's username (unescaped).
    pub user: Option<String>,
}

impl SaslFact {
    pub fn from(p: &Parsed, buf: &[u8]) -> SaslFact {
        let bytes = |name: &str| {
            p.parts
                .iter()
                .find(|n| n.name == name)
                .and_then(|n| match n.value {
                    Value::Bytes(Some((o, l))) => buf.get(o..o + l),
                    _ => None,
                })
        };
        let user = bytes("authcid")
            .or_else(|| bytes("username"))
            .map(|b| {
                String::from_utf8_lossy(b)
                    .replace("=2C", ",")
                    .replace("=3D", "=")
            })
            .or_else(|| bytes("auth").and_then(token_subject));
        SaslFact { step: p.step, user }
    }
}

/// The `sub` claim of a JWT bearer token (`Bearer header.payload.signature`): who the token
/// speaks for. The claim is not secret (the signature is what proves it); the token is.
fn token_subject(auth: &[u8]) -> Option<String> {
    let token = auth.strip_prefix(b"Bearer ")?;
    let payload = token.split(|&b| b == b'.').nth(1)?;
    let json = base64url(payload)?;
    let v: serde_json::Value = serde_json::from_slice(&json).ok()?;
    v.get("sub")?.as_str().map(str::to_string)
}

/// Unpadded URL-safe base64, as JWTs write their parts.
fn base64url(s: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut bits, mut n) = (0u32, 0u32);
    for &c in s.iter().take_while(|&&c| c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
        }
    }
    Some(out)
}

/// Splits `buf[start..end]` into the parts of the SASL message it holds.
pub fn parse(buf: &[u8], start: usize, end: usize, region: Region) -> Parsed {
    let data = buf.get(start..end).unwrap_or(&[]);
    let mut p = Parts {
        base: start,
        region,
        parts: Vec::new(),
        secrets: Vec::new(),
    };
    let step = classify(data);
    match step {
        SaslStep::Empty => {}
        SaslStep::PlainInitial => p.plain(data),
        SaslStep::ScramClientFirst => {
            let at = p.gs2_header(data);
            p.scram_attributes(data, at);
        }
        SaslStep::ScramServerFirst | SaslStep::ScramClientFinal | SaslStep::ScramServerFinal => {
            p.scram_attributes(data, 0)
        }
        SaslStep::OauthBearerInitial => {
            let at = p.gs2_header(data);
            p.oauth_pairs(data, at);
        }
        SaslStep::OauthBearerError => p.part(0, data.len(), "status", "JSON error of the server"),
        SaslStep::Opaque => {
            p.part(0, data.len(), "data", "SASL data kdissect does not parse");
            p.secret(0, data.len());
        }
    }
    Parsed {
        step,
        parts: p.parts,
        secrets: p.secrets,
    }
}

fn classify(data: &[u8]) -> SaslStep {
    if data.is_empty() {
        return SaslStep::Empty;
    }
    let gs2 = gs2_header_len(data);
    if let Some(n) = gs2 {
        let rest = data.get(n..).unwrap_or(&[]);
        if rest.first() == Some(&0x01) {
            return SaslStep::OauthBearerInitial;
        }
        if rest.starts_with(b"n=") || rest.starts_with(b"m=") {
            return SaslStep::ScramClientFirst;
        }
    }
    if data.iter().filter(|&&b| b == 0).count() == 2 {
        return SaslStep::PlainInitial;
    }
    if data.starts_with(b"r=") && data.windows(3).any(|w| w == b",s=") {
        return SaslStep::ScramServerFirst;
    }
    if data.starts_with(b"c=") && data.windows(3).any(|w| w == b",p=") {
        return SaslStep::ScramClientFinal;
    }
    if (data.starts_with(b"v=") || data.starts_with(b"e=")) && printable(data) {
        return SaslStep::ScramServerFinal;
    }
    if data.first() == Some(&b'{') && data.last() == Some(&b'}') && printable(data) {
        return SaslStep::OauthBearerError;
    }
    SaslStep::Opaque
}

fn printable(data: &[u8]) -> bool {
    data.iter().all(|b| (0x20..0x7f).contains(b))
}

/// Length of a GS2 header (`n,,`, `y,,`, `p=tls-unique,,`, `n,a=alice,`), if the data starts
/// with one.
fn gs2_header_len(data: &[u8]) -> Option<usize> {
    let flag_end = match data.first()? {
        b'n' | b'y' => 1,
        b'p' if data.get(1) == Some(&b'=') => data.iter().position(|&b| b == b',')?,
        _ => return None,
    };
    if data.get(flag_end) != Some(&b',') {
        return None;
    }
    let authz = flag_end + 1;
    let rest = data.get(authz..)?;
    if rest.first() == Some(&b',') {
        return Some(authz + 1);
    }
    if !rest.starts_with(b"a=") {
        return None;
    }
    let comma = rest.iter().position(|&b| b == b',')?;
    Some(authz + comma + 1)
}

struct Parts {
    base: usize,
    region: Region,
    parts: Vec<Node>,
    secrets: Vec<(usize, usize)>,
}

impl Parts {
    /// A leaf over `[from, to)` of the data whose value is that text.
    fn part(&mut self, from: usize, to: usize, name: &'static str, desc: &'static str) {
        self.part_with_value(from, to, (from, to), name, desc);
    }

    /// A leaf over `[from, to)` whose value is the bytes `value` (separators and keys are in
    /// the leaf's span but not in its value).
    fn part_with_value(
        &mut self,
        from: usize,
        to: usize,
        value: (usize, usize),
        name: impl Into<Cow<'static, str>>,
        desc: &'static str,
    ) {
        let mut n = Node::new(
            name,
            "varbytes",
            self.base + from,
            self.region,
            NodeKind::Field,
        );
        n.shape = Shape::VarBytes;
        n.len = to.saturating_sub(from);
        n.value = Value::Bytes(Some((self.base + value.0, value.1.saturating_sub(value.0))));
        n.desc = desc.into();
        self.parts.push(n);
    }

    fn secret(&mut self, from: usize, to: usize) {
        if to > from {
            self.secrets.push((self.base + from, to - from));
        }
    }

    /// PLAIN: authzid, authcid and password, NUL-separated.
    fn plain(&mut self, data: &[u8]) {
        let mut nuls = data
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == 0)
            .map(|(i, _)| i);
        let (Some(a), Some(b)) = (nuls.next(), nuls.next()) else {
            return;
        };
        self.part_with_value(
            0,
            a + 1,
            (0, a),
            "authzid",
            "identity to act as; empty: the user's own",
        );
        self.part_with_value(a + 1, b + 1, (a + 1, b), "authcid", "user name");
        self.part(
            b + 1,
            data.len(),
            "passwd",
            "password (a secret: masked unless secrets are shown)",
        );
        self.secret(b + 1, data.len());
    }

    /// The GS2 header of a client's first message; returns where the rest starts.
    fn gs2_header(&mut self, data: &[u8]) -> usize {
        let n = gs2_header_len(data).unwrap_or(0);
        if n > 0 {
            self.part(
                0,
                n,
                "gs2_header",
                "channel binding flag and optional authorization identity",
            );
        }
        n
    }

    /// SCRAM's `k=v` attributes from `at` on, each leaf holding its trailing comma.
    fn scram_attributes(&mut self, data: &[u8], at: usize) {
        let mut from = at;
        while from < data.len() {
            let rest = data.get(from..).unwrap_or(&[]);
            let len = rest.iter().position(|&b| b == b',').unwrap_or(rest.len());
            let to = (from + len + 1).min(data.len());
            let key = rest.first().copied().unwrap_or(0);
            let has_eq = rest.get(1) == Some(&b'=');
            let value = if has_eq {
                (from + 2, from + len)
            } else {
                (from, from + len)
            };
            let (name, desc) = scram_attribute(key, has_eq);
            self.part_with_value(from, to, value, name, desc);
            if has_eq && key == b'p' {
                self.secret(value.0, value.1);
            }
            from = to;
        }
    }

    /// OAUTHBEARER's `\x01key=value` pairs; the token in `auth` is a secret.
    fn oauth_pairs(&mut self, data: &[u8], at: usize) {
        let mut from = at;
        while from < data.len() {
            let rest = data.get(from..).unwrap_or(&[]);
            // Each pair is `\x01key=value`; the closing `\x01\x01` is its own part.
            let body = rest.get(1..).unwrap_or(&[]);
            let len = body.iter().position(|&b| b == 0x01).unwrap_or(body.len());
            if len == 0 {
                self.part(
                    from,
                    data.len(),
                    "end",
                    "end of the key-value pairs (\\x01\\x01)",
                );
                return;
            }
            let pair = body.get(..len).unwrap_or(&[]);
            let to = from + 1 + len;
            match pair.iter().position(|&b| b == b'=') {
                Some(eq) if pair.starts_with(b"auth=") => {
                    let v = from + 1 + eq + 1;
                    self.part_with_value(
                        from,
                        to,
                        (v, to),
                        "auth",
                        "bearer token (a secret: masked unless secrets are shown)",
                    );
                    // Keep the scheme (`Bearer `) visible, mask the token.
                    let token = pair
                        .get(eq + 1..)
                        .and_then(|t| t.iter().position(|&b| b == b' ').map(|s| v + s + 1))
                        .unwrap_or(v);
                    self.secret(token, to);
                }
                Some(eq) => {
                    // An extension, under its own key (`traceid`), so that several stay apart.
                    let v = from + 1 + eq + 1;
                    let key = String::from_utf8_lossy(pair.get(..eq).unwrap_or_default());
                    self.part_with_value(
                        from,
                        to,
                        (v, to),
                        key.into_owned(),
                        "SASL extension the client added (a key=value pair)",
                    );
                }
                None => self.part(from, to, "pair", "key-value pair without '='"),
            }
            from = to;
        }
    }
}

fn scram_attribute(key: u8, has_eq: bool) -> (&'static str, &'static str) {
    if !has_eq {
        return ("extension", "attribute without a key");
    }
    match key {
        b'a' => ("authzid", "identity to act as"),
        b'n' => ("username", "user name (SCRAM escapes ',' and '=')"),
        b'm' => ("reserved", "reserved for future mandatory extensions"),
        b'r' => ("nonce", "client nonce, or client and server nonces joined"),
        b's' => ("salt", "salt of the stored password (base64)"),
        b'i' => ("iterations", "iteration count of the password hash"),
        b'c' => (
            "channel_binding",
            "GS2 header and channel binding data (base64)",
        ),
        b'p' => (
            "proof",
            "client proof (a secret: masked unless secrets are shown)",
        ),
        b'v' => (
            "verifier",
            "server signature: proves the server knows the password",
        ),
        b'e' => ("error", "server error"),
        _ => (
            "extension",
            "SCRAM extension (Kafka: tokenauth=true for delegation tokens)",
        ),
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing, clippy::type_complexity)]
mod tests {
    use super::*;

    fn text(buf: &[u8], n: &Node) -> String {
        match n.value {
            Value::Bytes(Some((o, l))) => String::from_utf8_lossy(&buf[o..o + l]).into_owned(),
            _ => String::new(),
        }
    }

    fn tiles(p: &Parsed, start: usize, end: usize) {
        let mut at = start;
        for n in &p.parts {
            assert_eq!(n.offset, at, "{}", n.name);
            at += n.len;
        }
        assert_eq!(at, end);
    }

    #[test]
    fn plain_splits_and_masks_the_password() {
        let buf = b"xx\0alice\0alice-secretyy";
        let p = parse(buf, 2, buf.len() - 2, Region::RequestBody);
        assert_eq!(p.step, SaslStep::PlainInitial);
        tiles(&p, 2, buf.len() - 2);
        let got: Vec<(String, String)> = p
            .parts
            .iter()
            .map(|n| (n.name.to_string(), text(buf, n)))
            .collect();
        assert_eq!(
            got,
            vec![
                ("authzid".into(), "".into()),
                ("authcid".into(), "alice".into()),
                ("passwd".into(), "alice-secret".into()),
            ]
        );
        assert_eq!(p.secrets, vec![(9, 12)]);
    }

    #[test]
    fn scram_messages_split_into_attributes() {
        let cases: [(&[u8], SaslStep, &[(&str, &str)]); 4] = [
            (
                b"n,,n=bob,r=abc",
                SaslStep::ScramClientFirst,
                &[("gs2_header", "n,,"), ("username", "bob"), ("nonce", "abc")],
            ),
            (
                b"r=abcdef,s=c2FsdA==,i=4096",
                SaslStep::ScramServerFirst,
                &[
                    ("nonce", "abcdef"),
                    ("salt", "c2FsdA=="),
                    ("iterations", "4096"),
                ],
            ),
            (
                b"c=biws,r=abcdef,p=cHJvb2Y=",
                SaslStep::ScramClientFinal,
                &[
                    ("channel_binding", "biws"),
                    ("nonce", "abcdef"),
                    ("proof", "cHJvb2Y="),
                ],
            ),
            (
                b"v=c2lnbg==",
                SaslStep::ScramServerFinal,
                &[("verifier", "c2lnbg==")],
            ),
        ];
        for (data, step, want) in cases {
            let p = parse(data, 0, data.len(), Region::RequestBody);
            assert_eq!(p.step, step);
            tiles(&p, 0, data.len());
            let got: Vec<(String, String)> = p
                .parts
                .iter()
                .map(|n| (n.name.to_string(), text(data, n)))
                .collect();
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
            assert_eq!(got, want);
        }
        let fin = b"c=biws,r=abcdef,p=cHJvb2Y=";
        let p = parse(fin, 0, fin.len(), Region::RequestBody);
        assert_eq!(p.secrets, vec![(18, 8)]);
    }

    #[test]
    fn oauthbearer_masks_the_token_but_not_the_scheme() {
        let data = b"n,,\x01auth=Bearer eyJhbGciOi.x.y\x01host=k\x01\x01";
        let p = parse(data, 0, data.len(), Region::RequestBody);
        assert_eq!(p.step, SaslStep::OauthBearerInitial);
        tiles(&p, 0, data.len());
        let names: Vec<&str> = p.parts.iter().map(|n| n.name.as_ref()).collect();
        assert_eq!(names, vec!["gs2_header", "auth", "host", "end"]);
        let (o, l) = p.secrets[0];
        assert_eq!(&data[o..o + l], b"eyJhbGciOi.x.y");
    }

    #[test]
    fn an_unsecured_jwt_names_its_subject() {
        // {"alg":"none"} . {"sub":"dave"} . (no signature)
        let data = b"n,,\x01auth=Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJkYXZlIn0.\x01\x01";
        let p = parse(data, 0, data.len(), Region::RequestBody);
        let f = SaslFact::from(&p, data);
        assert_eq!(f.user.as_deref(), Some("dave"));
    }

    #[test]
    fn unknown_mechanisms_are_kept_whole_and_masked() {
        let data = [0x60, 0x82, 0x02, 0x10, 0x06, 0x09];
        let p = parse(&data, 0, data.len(), Region::RequestBody);
        assert_eq!(p.step, SaslStep::Opaque);
        tiles(&p, 0, data.len());
        assert_eq!(p.secrets, vec![(0, data.len())]);
        let p = parse(&[], 0, 0, Region::ResponseBody);
        assert_eq!(p.step, SaslStep::Empty);
        assert!(p.parts.is_empty() && p.secrets.is_empty());
    }
}
