//! The cipher suites decrypted, their keys from the logged secrets, and opening one record.
//! TLS 1.3: RFC 8446 §5.2-5.3 (record protection), §7.1-7.3 (HKDF-Expand-Label, traffic
//! keys, KeyUpdate). TLS 1.2: RFC 5246 §5-6.3 (PRF, key block, CBC records with an explicit
//! IV, MAC-then-encrypt), RFC 7366 (encrypt-then-MAC), RFC 5288 (AES-GCM nonce and
//! additional data), RFC 7905 (ChaCha20-Poly1305).
// Input-derived values never index, unwrap or expect here: a hostile capture must not panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use aes_gcm::aead::AeadInPlace;
use aes_gcm::{Aes128Gcm, Aes256Gcm, KeyInit};
use cbc::cipher::block_padding::NoPadding;
use cbc::cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit};
use chacha20poly1305::ChaCha20Poly1305;
use hmac::Hmac;
use sha1::Sha1;
use sha2::{Sha256, Sha384};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cipher {
    Aes128Gcm,
    Aes256Gcm,
    ChaCha20Poly1305,
    /// AES in CBC mode with an explicit IV per record and an HMAC (TLS 1.2).
    Aes128Cbc,
    Aes256Cbc,
}

/// The hash of the PRF (TLS 1.2) or HKDF (TLS 1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hash {
    Sha256,
    Sha384,
}

/// The record MAC of a CBC suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MacHash {
    Sha1,
    Sha256,
    Sha384,
}

impl MacHash {
    fn len(self) -> usize {
        match self {
            MacHash::Sha1 => 20,
            MacHash::Sha256 => 32,
            MacHash::Sha384 => 48,
        }
    }
}

/// A cipher suite this tool decrypts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Suite {
    pub id: u16,
    pub name: &'static str,
    pub cipher: Cipher,
    pub hash: Hash,
    /// CBC suites: the HMAC of each record.
    pub mac: Option<MacHash>,
    pub tls13: bool,
}

const fn s(id: u16, name: &'static str, cipher: Cipher, hash: Hash, tls13: bool) -> Suite {
    Suite {
        id,
        name,
        cipher,
        hash,
        mac: None,
        tls13,
    }
}

/// A TLS 1.2 CBC suite: its PRF is SHA-384 when its MAC is, else SHA-256 (RFC 5246 §5,
/// RFC 5289 §3.2).
const fn cbc(id: u16, name: &'static str, cipher: Cipher, mac: MacHash) -> Suite {
    Suite {
        id,
        name,
        cipher,
        hash: match mac {
            MacHash::Sha384 => Hash::Sha384,
            _ => Hash::Sha256,
        },
        mac: Some(mac),
        tls13: false,
    }
}

use Cipher::{
    Aes128Cbc as C128, Aes128Gcm as A128, Aes256Cbc as C256, Aes256Gcm as A256,
    ChaCha20Poly1305 as CC,
};
use Hash::{Sha256 as H256, Sha384 as H384};
use MacHash::{Sha1 as M1, Sha256 as M256, Sha384 as M384};

/// The AEAD suites of TLS 1.3 and TLS 1.2 (ECDHE, and the RSA and DHE key exchanges with the
/// same record protection, which cost nothing more), and TLS 1.2's AES-CBC suites with
/// HMAC-SHA1, -SHA256 and -SHA384. The key exchange does not matter here: the key log gives
/// the master secret.
const SUITES: [Suite; 29] = [
    s(0x1301, "TLS_AES_128_GCM_SHA256", A128, H256, true),
    s(0x1302, "TLS_AES_256_GCM_SHA384", A256, H384, true),
    s(0x1303, "TLS_CHACHA20_POLY1305_SHA256", CC, H256, true),
    s(
        0xc02b,
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        A128,
        H256,
        false,
    ),
    s(
        0xc02c,
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        A256,
        H384,
        false,
    ),
    s(
        0xc02f,
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        A128,
        H256,
        false,
    ),
    s(
        0xc030,
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        A256,
        H384,
        false,
    ),
    s(
        0xcca8,
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        CC,
        H256,
        false,
    ),
    s(
        0xcca9,
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        CC,
        H256,
        false,
    ),
    s(0x009c, "TLS_RSA_WITH_AES_128_GCM_SHA256", A128, H256, false),
    s(0x009d, "TLS_RSA_WITH_AES_256_GCM_SHA384", A256, H384, false),
    s(
        0x009e,
        "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
        A128,
        H256,
        false,
    ),
    s(
        0x009f,
        "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384",
        A256,
        H384,
        false,
    ),
    cbc(0xc009, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", C128, M1),
    cbc(0xc00a, "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", C256, M1),
    cbc(0xc013, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", C128, M1),
    cbc(0xc014, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", C256, M1),
    cbc(
        0xc023,
        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
        C128,
        M256,
    ),
    cbc(
        0xc024,
        "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384",
        C256,
        M384,
    ),
    cbc(0xc027, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", C128, M256),
    cbc(0xc028, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384", C256, M384),
    cbc(0x002f, "TLS_RSA_WITH_AES_128_CBC_SHA", C128, M1),
    cbc(0x0035, "TLS_RSA_WITH_AES_256_CBC_SHA", C256, M1),
    cbc(0x003c, "TLS_RSA_WITH_AES_128_CBC_SHA256", C128, M256),
    cbc(0x003d, "TLS_RSA_WITH_AES_256_CBC_SHA256", C256, M256),
    cbc(0x0033, "TLS_DHE_RSA_WITH_AES_128_CBC_SHA", C128, M1),
    cbc(0x0039, "TLS_DHE_RSA_WITH_AES_256_CBC_SHA", C256, M1),
    cbc(0x0067, "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256", C128, M256),
    cbc(0x006b, "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256", C256, M256),
];

/// IANA names (TLS Cipher Suites registry) of suites a server may pick that are not
/// decrypted here, so that a connection line names its suite whatever it is. Written out
/// rather than taken from a crate: the one crate with the registry (tls-parser) brings a
/// second parser framework for a lookup table.
const OTHER_NAMES: [(u16, &str); 62] = [
    (0x1304, "TLS_AES_128_CCM_SHA256"),
    (0x1305, "TLS_AES_128_CCM_8_SHA256"),
    (0x0001, "TLS_RSA_WITH_NULL_MD5"),
    (0x0002, "TLS_RSA_WITH_NULL_SHA"),
    (0x0004, "TLS_RSA_WITH_RC4_128_MD5"),
    (0x0005, "TLS_RSA_WITH_RC4_128_SHA"),
    (0x000a, "TLS_RSA_WITH_3DES_EDE_CBC_SHA"),
    (0x0016, "TLS_DHE_RSA_WITH_3DES_EDE_CBC_SHA"),
    (0x0032, "TLS_DHE_DSS_WITH_AES_128_CBC_SHA"),
    (0x0038, "TLS_DHE_DSS_WITH_AES_256_CBC_SHA"),
    (0x003b, "TLS_RSA_WITH_NULL_SHA256"),
    (0x0040, "TLS_DHE_DSS_WITH_AES_128_CBC_SHA256"),
    (0x0041, "TLS_RSA_WITH_CAMELLIA_128_CBC_SHA"),
    (0x006a, "TLS_DHE_DSS_WITH_AES_256_CBC_SHA256"),
    (0x0084, "TLS_RSA_WITH_CAMELLIA_256_CBC_SHA"),
    (0x008c, "TLS_PSK_WITH_AES_128_CBC_SHA"),
    (0x008d, "TLS_PSK_WITH_AES_256_CBC_SHA"),
    (0x00a2, "TLS_DHE_DSS_WITH_AES_128_GCM_SHA256"),
    (0x00a3, "TLS_DHE_DSS_WITH_AES_256_GCM_SHA384"),
    (0x00a8, "TLS_PSK_WITH_AES_128_GCM_SHA256"),
    (0x00a9, "TLS_PSK_WITH_AES_256_GCM_SHA384"),
    (0xc004, "TLS_ECDH_ECDSA_WITH_AES_128_CBC_SHA"),
    (0xc005, "TLS_ECDH_ECDSA_WITH_AES_256_CBC_SHA"),
    (0xc006, "TLS_ECDHE_ECDSA_WITH_NULL_SHA"),
    (0xc007, "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA"),
    (0xc008, "TLS_ECDHE_ECDSA_WITH_3DES_EDE_CBC_SHA"),
    (0xc00e, "TLS_ECDH_RSA_WITH_AES_128_CBC_SHA"),
    (0xc00f, "TLS_ECDH_RSA_WITH_AES_256_CBC_SHA"),
    (0xc010, "TLS_ECDHE_RSA_WITH_NULL_SHA"),
    (0xc011, "TLS_ECDHE_RSA_WITH_RC4_128_SHA"),
    (0xc012, "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA"),
    (0xc025, "TLS_ECDH_ECDSA_WITH_AES_128_CBC_SHA256"),
    (0xc026, "TLS_ECDH_ECDSA_WITH_AES_256_CBC_SHA384"),
    (0xc029, "TLS_ECDH_RSA_WITH_AES_128_CBC_SHA256"),
    (0xc02a, "TLS_ECDH_RSA_WITH_AES_256_CBC_SHA384"),
    (0xc02d, "TLS_ECDH_ECDSA_WITH_AES_128_GCM_SHA256"),
    (0xc02e, "TLS_ECDH_ECDSA_WITH_AES_256_GCM_SHA384"),
    (0xc031, "TLS_ECDH_RSA_WITH_AES_128_GCM_SHA256"),
    (0xc032, "TLS_ECDH_RSA_WITH_AES_256_GCM_SHA384"),
    (0xc035, "TLS_ECDHE_PSK_WITH_AES_128_CBC_SHA"),
    (0xc036, "TLS_ECDHE_PSK_WITH_AES_256_CBC_SHA"),
    (0xc09c, "TLS_RSA_WITH_AES_128_CCM"),
    (0xc09d, "TLS_RSA_WITH_AES_256_CCM"),
    (0xc09e, "TLS_DHE_RSA_WITH_AES_128_CCM"),
    (0xc09f, "TLS_DHE_RSA_WITH_AES_256_CCM"),
    (0xc0a0, "TLS_RSA_WITH_AES_128_CCM_8"),
    (0xc0a1, "TLS_RSA_WITH_AES_256_CCM_8"),
    (0xc0ac, "TLS_ECDHE_ECDSA_WITH_AES_128_CCM"),
    (0xc0ad, "TLS_ECDHE_ECDSA_WITH_AES_256_CCM"),
    (0xc0ae, "TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8"),
    (0xc0af, "TLS_ECDHE_ECDSA_WITH_AES_256_CCM_8"),
    (0xccaa, "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256"),
    (0xccab, "TLS_PSK_WITH_CHACHA20_POLY1305_SHA256"),
    (0xccac, "TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256"),
    (0xccad, "TLS_DHE_PSK_WITH_CHACHA20_POLY1305_SHA256"),
    (0x0013, "TLS_DHE_DSS_WITH_3DES_EDE_CBC_SHA"),
    (0x0009, "TLS_RSA_WITH_DES_CBC_SHA"),
    (0x0000, "TLS_NULL_WITH_NULL_NULL"),
    (0x00ff, "TLS_EMPTY_RENEGOTIATION_INFO_SCSV"),
    (0x5600, "TLS_FALLBACK_SCSV"),
    (0x0096, "TLS_RSA_WITH_SEED_CBC_SHA"),
    (0x00ba, "TLS_RSA_WITH_CAMELLIA_128_CBC_SHA256"),
];

/// The IANA name of a suite, decrypted here or not.
pub fn iana_name(id: u16) -> Option<&'static str> {
    suite(id)
        .map(|s| s.name)
        .or_else(|| OTHER_NAMES.iter().find(|(i, _)| *i == id).map(|(_, n)| *n))
}

/// The suite with this id, if it is one decrypted here.
pub fn suite(id: u16) -> Option<Suite> {
    SUITES.iter().copied().find(|s| s.id == id)
}

impl Cipher {
    fn key_len(self) -> usize {
        match self {
            Cipher::Aes128Gcm | Cipher::Aes128Cbc => 16,
            Cipher::Aes256Gcm | Cipher::ChaCha20Poly1305 | Cipher::Aes256Cbc => 32,
        }
    }

    fn is_cbc(self) -> bool {
        matches!(self, Cipher::Aes128Cbc | Cipher::Aes256Cbc)
    }
}

#[derive(Clone)]
enum Aead {
    Aes128(Box<Aes128Gcm>),
    Aes256(Box<Aes256Gcm>),
    ChaCha(Box<ChaCha20Poly1305>),
}

/// How one direction's records are protected.
#[derive(Clone)]
enum Protection {
    Aead(Aead),
    /// TLS 1.2 CBC: the cipher key and the MAC key (a fresh CBC decryptor is made per record
    /// from its explicit IV).
    Cbc {
        key: Vec<u8>,
        mac_key: Vec<u8>,
        mac: MacHash,
        /// RFC 7366 encrypt_then_mac was negotiated: the MAC covers the IV and ciphertext and
        /// follows them.
        etm: bool,
    },
}

/// Tag length of the AEAD suites.
pub const TAG: usize = 16;
/// The explicit nonce TLS 1.2 AES-GCM records start with.
const EXPLICIT_NONCE: usize = 8;
/// AES block size, and the explicit IV a TLS 1.1+ CBC record starts with.
const BLOCK: usize = 16;

/// The keys protecting one direction, and its record sequence number.
#[derive(Clone)]
pub struct DirKeys {
    prot: Protection,
    /// TLS 1.3 and ChaCha20: the 12-byte IV; TLS 1.2 AES-GCM: the 4-byte salt, then zeros.
    iv: [u8; 12],
    pub seq: u64,
    suite: Suite,
    /// TLS 1.3: the traffic secret, for the next KeyUpdate.
    secret: Vec<u8>,
}

impl std::fmt::Debug for DirKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DirKeys({}, seq {})", self.suite.name, self.seq)
    }
}

/// What [`DirKeys::find_seq`] found and spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tried {
    pub seq: Option<u64>,
    pub bytes: u64,
    pub tried: u32,
}

/// A record that did not authenticate with the keys tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadTag;

fn aead(cipher: Cipher, key: &[u8]) -> Option<Aead> {
    Some(match cipher {
        Cipher::Aes128Gcm => Aead::Aes128(Box::new(Aes128Gcm::new_from_slice(key).ok()?)),
        Cipher::Aes256Gcm => Aead::Aes256(Box::new(Aes256Gcm::new_from_slice(key).ok()?)),
        Cipher::ChaCha20Poly1305 => {
            Aead::ChaCha(Box::new(ChaCha20Poly1305::new_from_slice(key).ok()?))
        }
        Cipher::Aes128Cbc | Cipher::Aes256Cbc => return None,
    })
}

/// HKDF-Expand-Label (RFC 8446 §7.1) with an empty context.
fn expand_label(hash: Hash, secret: &[u8], label: &str, len: usize) -> Option<Vec<u8>> {
    let full = format!("tls13 {label}");
    let mut info = Vec::with_capacity(4 + full.len());
    info.extend_from_slice(&(len as u16).to_be_bytes());
    info.push(full.len() as u8);
    info.extend_from_slice(full.as_bytes());
    info.push(0);
    let mut out = vec![0; len];
    match hash {
        Hash::Sha256 => hkdf::Hkdf::<Sha256>::from_prk(secret)
            .ok()?
            .expand(&info, &mut out)
            .ok()?,
        Hash::Sha384 => hkdf::Hkdf::<Sha384>::from_prk(secret)
            .ok()?
            .expand(&info, &mut out)
            .ok()?,
    }
    Some(out)
}

impl Hash {
    fn len(self) -> usize {
        match self {
            Hash::Sha256 => 32,
            Hash::Sha384 => 48,
        }
    }
}

/// HMAC of `parts` under `key`.
fn hmac(mac: MacHash, key: &[u8], parts: &[&[u8]]) -> Option<Vec<u8>> {
    fn with<M: hmac::Mac + KeyInit>(key: &[u8], parts: &[&[u8]]) -> Option<Vec<u8>> {
        let mut m = <M as KeyInit>::new_from_slice(key).ok()?;
        for p in parts {
            m.update(p);
        }
        Some(m.finalize().into_bytes().to_vec())
    }
    match mac {
        MacHash::Sha1 => with::<Hmac<Sha1>>(key, parts),
        MacHash::Sha256 => with::<Hmac<Sha256>>(key, parts),
        MacHash::Sha384 => with::<Hmac<Sha384>>(key, parts),
    }
}

/// AES-CBC without padding removal: `data` (whole blocks) decrypted in place.
fn cbc_decrypt(key: &[u8], iv: &[u8], data: &mut [u8]) -> Option<()> {
    match key.len() {
        16 => cbc::Decryptor::<aes::Aes128>::new_from_slices(key, iv)
            .ok()?
            .decrypt_padded_mut::<NoPadding>(data)
            .ok()
            .map(|_| ()),
        32 => cbc::Decryptor::<aes::Aes256>::new_from_slices(key, iv)
            .ok()?
            .decrypt_padded_mut::<NoPadding>(data)
            .ok()
            .map(|_| ()),
        _ => None,
    }
}

fn cbc_encrypt(key: &[u8], iv: &[u8], data: &mut [u8]) -> Option<()> {
    let n = data.len();
    match key.len() {
        16 => cbc::Encryptor::<aes::Aes128>::new_from_slices(key, iv)
            .ok()?
            .encrypt_padded_mut::<NoPadding>(data, n)
            .ok()
            .map(|_| ()),
        32 => cbc::Encryptor::<aes::Aes256>::new_from_slices(key, iv)
            .ok()?
            .encrypt_padded_mut::<NoPadding>(data, n)
            .ok()
            .map(|_| ()),
        _ => None,
    }
}

/// The MAC input's header (RFC 5246 §6.2.3.1): sequence number, type, version, length.
fn mac_header(seq: u64, header: &[u8; 5], len: usize) -> [u8; 13] {
    let [ty, major, minor, ..] = *header;
    let mut h = [0; 13];
    let (s, rest) = h.split_at_mut(8);
    s.copy_from_slice(&seq.to_be_bytes());
    if let [t, ma, mi, hi, lo] = rest {
        (*t, *ma, *mi) = (ty, major, minor);
        [*hi, *lo] = (len as u16).to_be_bytes();
    }
    h
}

/// A CBC record opened as far as its MAC: what the MAC must be computed over, and the MAC
/// it carries. Decrypting does not depend on the sequence number, so a search over sequence
/// numbers after a loss decrypts a record once and computes only MACs.
struct CbcOpened {
    /// MAC-then-encrypt: the content's place in `out`; encrypt-then-MAC: the whole body
    /// (IV and ciphertext) is what the MAC covers.
    content: std::ops::Range<usize>,
    mac: Vec<u8>,
}

impl DirKeys {
    /// TLS 1.3 keys from a traffic secret; None when the secret cannot be one of this suite
    /// (a key log of another run may hold a secret of another length).
    pub fn tls13(suite: Suite, secret: &[u8]) -> Option<DirKeys> {
        if secret.len() != suite.hash.len() {
            return None;
        }
        let key = expand_label(suite.hash, secret, "key", suite.cipher.key_len())?;
        let iv = expand_label(suite.hash, secret, "iv", 12)?;
        Some(DirKeys {
            prot: Protection::Aead(aead(suite.cipher, &key)?),
            iv: iv.try_into().ok()?,
            seq: 0,
            suite,
            secret: secret.to_vec(),
        })
    }

    /// After a KeyUpdate: the next generation of this direction's traffic keys (§7.2).
    pub fn updated(&self) -> Option<DirKeys> {
        let next = expand_label(
            self.suite.hash,
            &self.secret,
            "traffic upd",
            self.suite.hash.len(),
        )?;
        DirKeys::tls13(self.suite, &next)
    }

    /// RFC 7366: both hellos carried encrypt_then_mac, and the suite is a CBC one.
    pub fn set_encrypt_then_mac(&mut self) {
        if let Protection::Cbc { etm, .. } = &mut self.prot {
            *etm = true;
        }
    }

    /// Opens one record (`header` is its 5 bytes, `body` the rest) into `out`, and returns
    /// the content type of what it held; the sequence number moves on only on success.
    pub fn open(&mut self, header: &[u8; 5], body: &[u8], out: &mut Vec<u8>) -> Result<u8, BadTag> {
        let ty = if self.suite.tls13 {
            self.open13(header, body, out)?
        } else {
            self.open12(header, body, out)?
        };
        self.seq = self.seq.wrapping_add(1);
        Ok(ty)
    }

    /// The first of `seqs` under which the record authenticates (the keys' own sequence
    /// number is left as it was), trying no more than `max_bytes` of work; and what was
    /// spent: bytes decrypted and authenticated, and sequence numbers tried. A CBC record is
    /// decrypted once for all the sequence numbers, which only its MAC covers.
    pub fn find_seq(
        &self,
        header: &[u8; 5],
        body: &[u8],
        seqs: impl Iterator<Item = u64>,
        max_bytes: u64,
        out: &mut Vec<u8>,
    ) -> Tried {
        let cost = body.len() as u64;
        let mut t = Tried::default();
        if let Protection::Cbc {
            mac, mac_key, etm, ..
        } = &self.prot
        {
            if cost > max_bytes {
                return t;
            }
            t.bytes += cost;
            let Ok(opened) = self.cbc_decrypt(header, body, out) else {
                t.tried += 1;
                return t;
            };
            let covered = if *etm {
                body.get(..opened.content.end)
            } else {
                out.get(opened.content.clone())
            }
            .unwrap_or_default();
            let each = covered.len() as u64 + 13;
            for seq in seqs {
                if t.bytes + each > max_bytes {
                    break;
                }
                t.bytes += each;
                t.tried += 1;
                let h = mac_header(seq, header, covered.len());
                if hmac(*mac, mac_key, &[&h, covered]).is_some_and(|m| m == opened.mac) {
                    t.seq = Some(seq);
                    break;
                }
            }
            return t;
        }
        let mut k = self.clone();
        for seq in seqs {
            if t.bytes + cost > max_bytes {
                break;
            }
            t.bytes += cost;
            t.tried += 1;
            k.seq = seq;
            if k.open(header, body, out).is_ok() {
                t.seq = Some(seq);
                break;
            }
        }
        t
    }

    fn seq_nonce(&self) -> [u8; 12] {
        let mut n = self.iv;
        for (b, s) in n.iter_mut().skip(4).zip(self.seq.to_be_bytes()) {
            *b ^= s;
        }
        n
    }

    fn aead(&self) -> Result<&Aead, BadTag> {
        match &self.prot {
            Protection::Aead(a) => Ok(a),
            Protection::Cbc { .. } => Err(BadTag),
        }
    }

    fn open13(&self, header: &[u8; 5], body: &[u8], out: &mut Vec<u8>) -> Result<u8, BadTag> {
        let nonce = self.seq_nonce();
        decrypt(self.aead()?, &nonce, header, body, out)?;
        // The inner content type is the last byte that is not padding (§5.2).
        let end = out.iter().rposition(|&b| b != 0).ok_or(BadTag)?;
        let ty = out.get(end).copied().ok_or(BadTag)?;
        out.truncate(end);
        Ok(ty)
    }

    fn open12(&self, header: &[u8; 5], body: &[u8], out: &mut Vec<u8>) -> Result<u8, BadTag> {
        if let Protection::Cbc { .. } = self.prot {
            return self.open_cbc(header, body, out);
        }
        let (nonce, ct) = if self.suite.cipher == Cipher::ChaCha20Poly1305 {
            (self.seq_nonce(), body)
        } else {
            let (explicit, ct) = body.split_at_checked(EXPLICIT_NONCE).ok_or(BadTag)?;
            let mut n = [0; 12];
            n.get_mut(..4)
                .ok_or(BadTag)?
                .copy_from_slice(self.iv.get(..4).ok_or(BadTag)?);
            n.get_mut(4..).ok_or(BadTag)?.copy_from_slice(explicit);
            (n, ct)
        };
        let plain_len = ct.len().checked_sub(TAG).ok_or(BadTag)?;
        let aad = mac_header(self.seq, header, plain_len);
        decrypt(self.aead()?, &nonce, &aad, ct, out)?;
        let [ty, ..] = *header;
        Ok(ty)
    }

    /// A CBC record: decrypted, its padding checked and its MAC verified; `out` keeps the
    /// content.
    fn open_cbc(&self, header: &[u8; 5], body: &[u8], out: &mut Vec<u8>) -> Result<u8, BadTag> {
        let Protection::Cbc {
            mac, mac_key, etm, ..
        } = &self.prot
        else {
            return Err(BadTag);
        };
        let opened = self.cbc_decrypt(header, body, out)?;
        let covered = if *etm {
            body.get(..opened.content.end)
        } else {
            out.get(opened.content.clone())
        }
        .ok_or(BadTag)?;
        let h = mac_header(self.seq, header, covered.len());
        if hmac(*mac, mac_key, &[&h, covered]).is_none_or(|m| m != opened.mac) {
            return Err(BadTag);
        }
        if *etm {
            // The plaintext is in `out` after the IV: content only.
            let content = opened.content.start..out.len();
            out.truncate(content.end);
            out.drain(..content.start);
        } else {
            out.truncate(opened.content.end);
            out.drain(..opened.content.start);
        }
        let [ty, ..] = *header;
        Ok(ty)
    }

    /// Decrypts a CBC record into `out` (after its IV) and finds its content and MAC:
    /// MAC-then-encrypt (RFC 5246 §6.2.3.2): IV, then the encryption of content, MAC,
    /// padding and the padding length; encrypt-then-MAC (RFC 7366 §3): IV and the
    /// encryption of content and padding, then the MAC over them in the clear. With EtM the
    /// returned range ends where the MAC starts in `body`, and `content.start` is where
    /// the content starts in `out`; the padding is taken off `out`.
    fn cbc_decrypt(
        &self,
        _header: &[u8; 5],
        body: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<CbcOpened, BadTag> {
        let Protection::Cbc { key, mac, etm, .. } = &self.prot else {
            return Err(BadTag);
        };
        let mac_len = mac.len();
        let (enc, tag) = if *etm {
            body.split_at_checked(body.len().checked_sub(mac_len).ok_or(BadTag)?)
                .ok_or(BadTag)?
        } else {
            (body, &[][..])
        };
        let (iv, ct) = enc.split_at_checked(BLOCK).ok_or(BadTag)?;
        if ct.is_empty() || ct.len() % BLOCK != 0 {
            return Err(BadTag);
        }
        out.clear();
        out.extend_from_slice(ct);
        cbc_decrypt(key, iv, out).ok_or(BadTag)?;
        let pad = usize::from(*out.last().ok_or(BadTag)?);
        let unpadded = out.len().checked_sub(pad + 1).ok_or(BadTag)?;
        let padding = out.get(unpadded..).ok_or(BadTag)?;
        if padding.iter().any(|&b| usize::from(b) != pad) {
            return Err(BadTag);
        }
        if *etm {
            out.truncate(unpadded);
            return Ok(CbcOpened {
                content: 0..enc.len(),
                mac: tag.to_vec(),
            });
        }
        let content_end = unpadded.checked_sub(mac_len).ok_or(BadTag)?;
        let mac_bytes = out.get(content_end..unpadded).ok_or(BadTag)?.to_vec();
        Ok(CbcOpened {
            content: 0..content_end,
            mac: mac_bytes,
        })
    }
}

impl DirKeys {
    /// Seals one record: the inverse of [`DirKeys::open`], for making synthetic sessions in
    /// tests and fuzz seeds (this tool never encrypts anything it shows).
    #[doc(hidden)]
    pub fn seal(&mut self, ty: u8, plain: &[u8]) -> Vec<u8> {
        if let Protection::Cbc { .. } = self.prot {
            return self.seal_cbc(ty, plain);
        }
        let mut data = plain.to_vec();
        let outer = if self.suite.tls13 {
            data.push(ty);
            APPLICATION_DATA
        } else {
            ty
        };
        let explicit = !self.suite.tls13 && self.suite.cipher != Cipher::ChaCha20Poly1305;
        let ct_len = data.len() + TAG + if explicit { EXPLICIT_NONCE } else { 0 };
        let header = [outer, 3, 3, (ct_len >> 8) as u8, ct_len as u8];
        let (nonce, aad) = if self.suite.tls13 {
            (self.seq_nonce(), header.to_vec())
        } else {
            let nonce = if explicit {
                let mut n = self.iv;
                for (b, s) in n.iter_mut().skip(4).zip(self.seq.to_be_bytes()) {
                    *b = s;
                }
                n
            } else {
                self.seq_nonce()
            };
            (nonce, mac_header(self.seq, &header, data.len()).to_vec())
        };
        let n = aes_gcm::Nonce::from_slice(&nonce);
        let tag = match self.aead() {
            Ok(Aead::Aes128(a)) => a.encrypt_in_place_detached(n, &aad, &mut data),
            Ok(Aead::Aes256(a)) => a.encrypt_in_place_detached(n, &aad, &mut data),
            Ok(Aead::ChaCha(a)) => a.encrypt_in_place_detached(n, &aad, &mut data),
            Err(_) => Err(aes_gcm::Error),
        };
        let mut rec = header.to_vec();
        if explicit {
            rec.extend_from_slice(&self.seq.to_be_bytes());
        }
        rec.extend_from_slice(&data);
        rec.extend_from_slice(tag.as_deref().unwrap_or(&[0u8; TAG][..]));
        self.seq = self.seq.wrapping_add(1);
        rec
    }

    /// A CBC record, MAC-then-encrypt or encrypt-then-MAC, with an IV made from the
    /// sequence number (a real sender draws it at random).
    fn seal_cbc(&mut self, ty: u8, plain: &[u8]) -> Vec<u8> {
        let Protection::Cbc {
            key,
            mac_key,
            mac,
            etm,
        } = &self.prot
        else {
            return Vec::new();
        };
        let mut iv = [0x1f; BLOCK];
        for (b, s) in iv.iter_mut().zip(self.seq.to_be_bytes()) {
            *b ^= s;
        }
        let mut data = plain.to_vec();
        let head = |len: usize| [ty, 3, 3, (len >> 8) as u8, len as u8];
        if !*etm {
            let h = mac_header(self.seq, &head(0), plain.len());
            data.extend(hmac(*mac, mac_key, &[&h, plain]).unwrap_or_default());
        }
        let pad = BLOCK - (data.len() + 1) % BLOCK;
        data.extend(std::iter::repeat_n(pad as u8, pad + 1));
        let _ = cbc_encrypt(key, &iv, &mut data);
        let mut body = iv.to_vec();
        body.extend(data);
        if *etm {
            let h = mac_header(self.seq, &head(0), body.len());
            let m = hmac(*mac, mac_key, &[&h, &body]).unwrap_or_default();
            body.extend(m);
        }
        let mut rec = head(body.len()).to_vec();
        rec.extend(body);
        self.seq = self.seq.wrapping_add(1);
        rec
    }
}

/// Record content type of application data (TLS 1.3 records all carry it outside).
const APPLICATION_DATA: u8 = 23;

/// AEAD-opens `ct` (ciphertext then tag) into `out`.
fn decrypt(
    aead: &Aead,
    nonce: &[u8; 12],
    aad: &[u8],
    ct: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), BadTag> {
    let n = ct.len().checked_sub(TAG).ok_or(BadTag)?;
    let (data, tag) = ct.split_at(n);
    out.clear();
    out.extend_from_slice(data);
    let nonce = aes_gcm::Nonce::from_slice(nonce);
    let tag = aes_gcm::Tag::from_slice(tag);
    let r = match aead {
        Aead::Aes128(a) => a.decrypt_in_place_detached(nonce, aad, out, tag),
        Aead::Aes256(a) => a.decrypt_in_place_detached(nonce, aad, out, tag),
        Aead::ChaCha(a) => a.decrypt_in_place_detached(nonce, aad, out, tag),
    };
    r.map_err(|_| BadTag)
}

/// TLS 1.2 P_hash (RFC 5246 §5) of the suite's hash, `len` bytes.
fn p_hash(hash: Hash, secret: &[u8], seed: &[u8], len: usize) -> Option<Vec<u8>> {
    let mac = match hash {
        Hash::Sha256 => MacHash::Sha256,
        Hash::Sha384 => MacHash::Sha384,
    };
    let mut out = Vec::with_capacity(len + 48);
    let mut a = hmac(mac, secret, &[seed])?;
    while out.len() < len {
        out.extend(hmac(mac, secret, &[&a, seed])?);
        a = hmac(mac, secret, &[&a])?;
    }
    out.truncate(len);
    Some(out)
}

/// TLS 1.2 keys of both directions (client's, server's) from the master secret: the key
/// block holds the MAC keys (CBC suites), then the cipher keys, then the implicit IVs (AEAD
/// suites; a CBC record carries its own IV).
pub fn tls12(
    suite: Suite,
    master: &[u8],
    client_random: &[u8; 32],
    server_random: &[u8; 32],
) -> Option<(DirKeys, DirKeys)> {
    let key_len = suite.cipher.key_len();
    let mac_len = suite.mac.map_or(0, MacHash::len);
    let iv_len = match suite.cipher {
        Cipher::ChaCha20Poly1305 => 12,
        Cipher::Aes128Gcm | Cipher::Aes256Gcm => 4,
        Cipher::Aes128Cbc | Cipher::Aes256Cbc => 0,
    };
    let mut seed = b"key expansion".to_vec();
    seed.extend_from_slice(server_random);
    seed.extend_from_slice(client_random);
    let block = p_hash(suite.hash, master, &seed, 2 * (mac_len + key_len + iv_len))?;
    let (macs, rest) = block.split_at_checked(2 * mac_len)?;
    let (keys, ivs) = rest.split_at_checked(2 * key_len)?;
    let (cm, sm) = macs.split_at_checked(mac_len)?;
    let (ck, sk) = keys.split_at_checked(key_len)?;
    let (civ, siv) = ivs.split_at_checked(iv_len)?;
    let dir = |mac_key: &[u8], key: &[u8], iv: &[u8]| -> Option<DirKeys> {
        let mut full = [0; 12];
        full.get_mut(..iv.len())?.copy_from_slice(iv);
        let prot = match suite.mac {
            Some(mac) if suite.cipher.is_cbc() => Protection::Cbc {
                key: key.to_vec(),
                mac_key: mac_key.to_vec(),
                mac,
                etm: false,
            },
            _ => Protection::Aead(aead(suite.cipher, key)?),
        };
        Some(DirKeys {
            prot,
            iv: full,
            seq: 0,
            suite,
            secret: Vec::new(),
        })
    };
    Some((dir(cm, ck, civ)?, dir(sm, sk, siv)?))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;

    /// RFC 8448 §3 (simple 1-RTT handshake): the server's handshake traffic secret gives
    /// this key and IV.
    #[test]
    fn tls13_keys_match_rfc8448() {
        let secret =
            hex::decode("b67b7d690cc16c4e75e54213cb2d37b4e9c912bcded9105d42befd59d391ad38")
                .unwrap();
        let key = expand_label(Hash::Sha256, &secret, "key", 16).unwrap();
        let iv = expand_label(Hash::Sha256, &secret, "iv", 12).unwrap();
        assert_eq!(hex::encode(key), "3fce516009c21727d0f2e4e86ee403bc");
        assert_eq!(hex::encode(iv), "5d313eb2671276ee13000b30");
    }

    /// A record sealed with the same keys opens, and one byte changed does not.
    #[test]
    fn tls13_record_round_trip_and_wrong_tag() {
        let suite = suite(0x1301).unwrap();
        let secret = [7u8; 32];
        let keys = DirKeys::tls13(suite, &secret).unwrap();
        let mut body = b"hello".to_vec();
        body.push(23);
        body.extend_from_slice(&[0, 0]);
        let len = (body.len() + TAG) as u16;
        let header = [23, 3, 3, (len >> 8) as u8, len as u8];
        let Protection::Aead(Aead::Aes128(a)) = &keys.prot else {
            panic!()
        };
        let nonce = keys.seq_nonce();
        let tag = a
            .encrypt_in_place_detached(aes_gcm::Nonce::from_slice(&nonce), &header, &mut body)
            .unwrap();
        body.extend_from_slice(&tag);
        let mut out = Vec::new();
        let mut k = keys.clone();
        assert_eq!(k.open(&header, &body, &mut out), Ok(23));
        assert_eq!(out, b"hello");
        assert_eq!(k.seq, 1);
        let mut k = keys.clone();
        body[0] ^= 1;
        assert_eq!(k.open(&header, &body, &mut out), Err(BadTag));
        assert_eq!(k.seq, 0);
    }

    #[test]
    fn unknown_suites_are_none_but_named() {
        assert!(suite(0x000a).is_none());
        assert_eq!(iana_name(0x000a), Some("TLS_RSA_WITH_3DES_EDE_CBC_SHA"));
        assert_eq!(
            iana_name(0xc027),
            Some("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256")
        );
        assert_eq!(iana_name(0x7a7a), None);
        assert_eq!(suite(0xcca8).unwrap().cipher, Cipher::ChaCha20Poly1305);
        // Every name is given once, and to one id.
        let mut ids: Vec<u16> = SUITES.iter().map(|s| s.id).collect();
        ids.extend(OTHER_NAMES.iter().map(|(i, _)| *i));
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n);
    }

    /// A CBC record sealed with the same keys opens under each MAC, MAC-then-encrypt and
    /// encrypt-then-MAC; a changed byte anywhere, or another sequence number, does not.
    #[test]
    fn tls12_cbc_round_trip_and_tampering() {
        for id in [0xc013_u16, 0xc027, 0xc028, 0x0035] {
            for etm in [false, true] {
                let suite = suite(id).unwrap();
                let (mut c, _) = tls12(suite, &[3; 48], &[1; 32], &[2; 32]).unwrap();
                if etm {
                    c.set_encrypt_then_mac();
                }
                let mut reader = c.clone();
                for (i, text) in [&b"a"[..], &[7u8; 15][..], &[9u8; 1000][..]]
                    .iter()
                    .enumerate()
                {
                    let rec = c.seal(23, text);
                    let header: [u8; 5] = rec[..5].try_into().unwrap();
                    let mut out = Vec::new();
                    let mut tampered = rec.clone();
                    let at = 5 + (i * 37) % (rec.len() - 5);
                    tampered[at] ^= 0x40;
                    let mut r2 = reader.clone();
                    assert_eq!(r2.open(&header, &tampered[5..], &mut out), Err(BadTag));
                    let mut r3 = reader.clone();
                    r3.seq += 1;
                    assert_eq!(r3.open(&header, &rec[5..], &mut out), Err(BadTag));
                    assert_eq!(
                        reader
                            .find_seq(&header, &rec[5..], 0..10, u64::MAX, &mut out)
                            .seq,
                        Some(i as u64),
                        "{id:04x} etm {etm}"
                    );
                    assert_eq!(reader.open(&header, &rec[5..], &mut out), Ok(23));
                    assert_eq!(&out[..], *text, "{id:04x} etm {etm}");
                }
            }
        }
    }
}
