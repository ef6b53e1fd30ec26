//! The two hello messages (RFC 8446 §4.1.2-4.1.3, RFC 5246 §7.4.1), read far enough to know
//! the randoms, the version and suite, SNI (RFC 6066 §3), ALPN (RFC 7301) and resumption.
// Input-derived values never index, unwrap or expect here: a hostile capture must not panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

pub const EXT_SERVER_NAME: u16 = 0;
pub const EXT_ALPN: u16 = 16;
/// RFC 7366: MAC over the ciphertext, for CBC suites.
pub const EXT_ENCRYPT_THEN_MAC: u16 = 22;
pub const EXT_PRE_SHARED_KEY: u16 = 41;
pub const EXT_SUPPORTED_VERSIONS: u16 = 43;

/// The random of a HelloRetryRequest (RFC 8446 §4.1.3): SHA-256 of "HelloRetryRequest".
const HRR_RANDOM: [u8; 32] = [
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
];

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientHello {
    pub random: [u8; 32],
    pub session_id: Vec<u8>,
    /// The highest version offered (supported_versions, else the legacy field).
    pub version: u16,
    pub sni: Option<String>,
    pub alpn: Vec<String>,
    /// A pre_shared_key extension: TLS 1.3 resumption offered.
    pub psk: bool,
    /// encrypt_then_mac offered.
    pub etm: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerHello {
    pub random: [u8; 32],
    pub session_id: Vec<u8>,
    pub suite: u16,
    /// The version chosen (supported_versions, else the legacy field).
    pub version: u16,
    pub alpn: Vec<String>,
    /// A pre_shared_key extension: TLS 1.3 resumption accepted.
    pub psk: bool,
    /// A HelloRetryRequest: a second ClientHello follows.
    pub retry: bool,
    /// encrypt_then_mac taken up.
    pub etm: bool,
}

/// A big-endian reader that stops (returns None) instead of running past the end.
pub struct Rd<'a>(pub &'a [u8]);

impl<'a> Rd<'a> {
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (a, b) = self.0.split_at_checked(n)?;
        self.0 = b;
        Some(a)
    }
    pub fn u8(&mut self) -> Option<u8> {
        self.take(1).and_then(|b| b.first().copied())
    }
    pub fn u16(&mut self) -> Option<u16> {
        let b = self.take(2)?;
        Some(u16::from_be_bytes([*b.first()?, *b.get(1)?]))
    }
    fn random(&mut self) -> Option<[u8; 32]> {
        self.take(32)?.try_into().ok()
    }
    /// A vector with a 1- or 2-byte length prefix.
    fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = self.u8()?;
        self.take(n.into())
    }
    fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = self.u16()?;
        self.take(n.into())
    }
}

/// A ClientHello body; None when it is cut before the random.
pub fn client_hello(msg: &[u8]) -> Option<ClientHello> {
    let mut r = Rd(msg);
    let mut h = ClientHello {
        version: r.u16()?,
        random: r.random()?,
        ..ClientHello::default()
    };
    let _ = (|| -> Option<()> {
        h.session_id = r.vec8()?.to_vec();
        r.vec16()?; // cipher suites
        r.vec8()?; // compression methods
        for (ty, data) in extensions(r.vec16()?) {
            match ty {
                EXT_SERVER_NAME => h.sni = server_name(data),
                EXT_ALPN => h.alpn = alpn(data),
                EXT_SUPPORTED_VERSIONS => h.version = highest_offered(data).unwrap_or(h.version),
                EXT_PRE_SHARED_KEY => h.psk = true,
                EXT_ENCRYPT_THEN_MAC => h.etm = true,
                _ => {}
            }
        }
        Some(())
    })();
    Some(h)
}

fn highest_offered(data: &[u8]) -> Option<u16> {
    let mut v = Rd(Rd(data).vec8()?);
    let mut best = None;
    while let Some(x) = v.u16() {
        // Skip GREASE values (0x?a?a).
        if x & 0x0f0f != 0x0a0a {
            best = best.max(Some(x));
        }
    }
    best
}

/// A ServerHello body; None when it is cut before the cipher suite.
pub fn server_hello(msg: &[u8]) -> Option<ServerHello> {
    let mut r = Rd(msg);
    let version = r.u16()?;
    let random = r.random()?;
    let session_id = r.vec8()?.to_vec();
    let suite = r.u16()?;
    r.u8()?; // compression method
    let mut h = ServerHello {
        random,
        session_id,
        suite,
        version,
        retry: random == HRR_RANDOM,
        ..ServerHello::default()
    };
    for (ty, data) in extensions(r.vec16().unwrap_or(&[])) {
        match ty {
            EXT_SUPPORTED_VERSIONS => h.version = Rd(data).u16().unwrap_or(h.version),
            EXT_ALPN => h.alpn = alpn(data),
            EXT_PRE_SHARED_KEY => h.psk = true,
            EXT_ENCRYPT_THEN_MAC => h.etm = true,
            _ => {}
        }
    }
    Some(h)
}

fn extensions(data: &[u8]) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    let mut r = Rd(data);
    while let (Some(ty), Some(body)) = (r.u16(), r.vec16()) {
        out.push((ty, body));
    }
    out
}

/// The first host name of a server_name extension.
fn server_name(data: &[u8]) -> Option<String> {
    let mut list = Rd(Rd(data).vec16()?);
    while let Some(kind) = list.u8() {
        let name = list.vec16()?;
        if kind == 0 {
            return Some(String::from_utf8_lossy(name).into_owned());
        }
    }
    None
}

fn alpn(data: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let Some(list) = Rd(data).vec16() else {
        return out;
    };
    let mut r = Rd(list);
    while let Some(p) = r.vec8() {
        out.push(String::from_utf8_lossy(p).into_owned());
    }
    out
}
