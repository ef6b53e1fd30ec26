//! The cipher suites decrypted, their keys from the logged secrets, and opening one record.
//! TLS 1.3: RFC 8446 §5.2-5.3 (record protection), §7.1-7.3 (HKDF-Expand-Label, traffic
//! keys, KeyUpdate). TLS 1.2: RFC 5246 §5-6.3 (PRF, key block), RFC 5288 (AES-GCM nonce and
//! additional data), RFC 7905 (ChaCha20-Poly1305).
// Input-derived values never index, unwrap or expect here: a hostile capture must not panic.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use aes_gcm::aead::AeadInPlace;
use aes_gcm::{Aes128Gcm, Aes256Gcm, KeyInit};
use chacha20poly1305::ChaCha20Poly1305;
use hmac::{Hmac, Mac};
use sha2::{Sha256, Sha384};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cipher {
    Aes128Gcm,
    Aes256Gcm,
    ChaCha20Poly1305,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hash {
    Sha256,
    Sha384,
}

/// A cipher suite this tool decrypts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Suite {
    pub id: u16,
    pub name: &'static str,
    pub cipher: Cipher,
    pub hash: Hash,
    pub tls13: bool,
}

const fn s(id: u16, name: &'static str, cipher: Cipher, hash: Hash, tls13: bool) -> Suite {
    Suite {
        id,
        name,
        cipher,
        hash,
        tls13,
    }
}

use Cipher::{Aes128Gcm as A128, Aes256Gcm as A256, ChaCha20Poly1305 as CC};
use Hash::{Sha256 as H256, Sha384 as H384};

/// The AEAD suites of TLS 1.3 and TLS 1.2 (ECDHE, and the RSA and DHE key exchanges with the
/// same record protection, which cost nothing more).
const SUITES: [Suite; 13] = [
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
];

/// The suite with this id, if it is one decrypted here.
pub fn suite(id: u16) -> Option<Suite> {
    SUITES.iter().copied().find(|s| s.id == id)
}

impl Cipher {
    fn key_len(self) -> usize {
        match self {
            Cipher::Aes128Gcm => 16,
            Cipher::Aes256Gcm | Cipher::ChaCha20Poly1305 => 32,
        }
    }
}

#[derive(Clone)]
enum Aead {
    Aes128(Box<Aes128Gcm>),
    Aes256(Box<Aes256Gcm>),
    ChaCha(Box<ChaCha20Poly1305>),
}

/// Tag length of every suite here.
pub const TAG: usize = 16;
/// The explicit nonce TLS 1.2 AES-GCM records start with.
const EXPLICIT_NONCE: usize = 8;

/// The keys protecting one direction, and its record sequence number.
#[derive(Clone)]
pub struct DirKeys {
    aead: Aead,
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
            aead: aead(suite.cipher, &key)?,
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

    fn seq_nonce(&self) -> [u8; 12] {
        let mut n = self.iv;
        for (b, s) in n.iter_mut().skip(4).zip(self.seq.to_be_bytes()) {
            *b ^= s;
        }
        n
    }

    fn open13(&self, header: &[u8; 5], body: &[u8], out: &mut Vec<u8>) -> Result<u8, BadTag> {
        let nonce = self.seq_nonce();
        decrypt(&self.aead, &nonce, header, body, out)?;
        // The inner content type is the last byte that is not padding (§5.2).
        let end = out.iter().rposition(|&b| b != 0).ok_or(BadTag)?;
        let ty = out.get(end).copied().ok_or(BadTag)?;
        out.truncate(end);
        Ok(ty)
    }

    fn open12(&self, header: &[u8; 5], body: &[u8], out: &mut Vec<u8>) -> Result<u8, BadTag> {
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
        let [ty, major, minor, ..] = *header;
        let mut aad = [0; 13];
        aad[..8].copy_from_slice(&self.seq.to_be_bytes());
        aad[8..11].copy_from_slice(&[ty, major, minor]);
        aad[11..].copy_from_slice(&(plain_len as u16).to_be_bytes());
        decrypt(&self.aead, &nonce, &aad, ct, out)?;
        Ok(ty)
    }
}

impl DirKeys {
    /// Seals one record: the inverse of [`DirKeys::open`], for making synthetic sessions in
    /// tests and fuzz seeds (this tool never encrypts anything it shows).
    #[doc(hidden)]
    pub fn seal(&mut self, ty: u8, plain: &[u8]) -> Vec<u8> {
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
            let mut aad = self.seq.to_be_bytes().to_vec();
            aad.extend_from_slice(&[ty, 3, 3]);
            aad.extend_from_slice(&(data.len() as u16).to_be_bytes());
            (nonce, aad)
        };
        let n = aes_gcm::Nonce::from_slice(&nonce);
        let tag = match &self.aead {
            Aead::Aes128(a) => a.encrypt_in_place_detached(n, &aad, &mut data),
            Aead::Aes256(a) => a.encrypt_in_place_detached(n, &aad, &mut data),
            Aead::ChaCha(a) => a.encrypt_in_place_detached(n, &aad, &mut data),
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
    match hash {
        Hash::Sha256 => p_hash_with::<Hmac<Sha256>>(secret, seed, len),
        Hash::Sha384 => p_hash_with::<Hmac<Sha384>>(secret, seed, len),
    }
}

fn p_hash_with<M: Mac + KeyInit>(secret: &[u8], seed: &[u8], len: usize) -> Option<Vec<u8>> {
    let mac = |parts: &[&[u8]]| -> Option<Vec<u8>> {
        let mut m = <M as Mac>::new_from_slice(secret).ok()?;
        for p in parts {
            m.update(p);
        }
        Some(m.finalize().into_bytes().to_vec())
    };
    let mut out = Vec::with_capacity(len + 48);
    let mut a = mac(&[seed])?;
    while out.len() < len {
        out.extend(mac(&[&a, seed])?);
        a = mac(&[&a])?;
    }
    out.truncate(len);
    Some(out)
}

/// TLS 1.2 keys of both directions (client's, server's) from the master secret.
pub fn tls12(
    suite: Suite,
    master: &[u8],
    client_random: &[u8; 32],
    server_random: &[u8; 32],
) -> Option<(DirKeys, DirKeys)> {
    let key_len = suite.cipher.key_len();
    let iv_len = if suite.cipher == Cipher::ChaCha20Poly1305 {
        12
    } else {
        4
    };
    let mut seed = b"key expansion".to_vec();
    seed.extend_from_slice(server_random);
    seed.extend_from_slice(client_random);
    let block = p_hash(suite.hash, master, &seed, 2 * (key_len + iv_len))?;
    let (keys, ivs) = block.split_at_checked(2 * key_len)?;
    let (ck, sk) = keys.split_at_checked(key_len)?;
    let (civ, siv) = ivs.split_at_checked(iv_len)?;
    let dir = |key: &[u8], iv: &[u8]| -> Option<DirKeys> {
        let mut full = [0; 12];
        full.get_mut(..iv.len())?.copy_from_slice(iv);
        Some(DirKeys {
            aead: aead(suite.cipher, key)?,
            iv: full,
            seq: 0,
            suite,
            secret: Vec::new(),
        })
    };
    Some((dir(ck, civ)?, dir(sk, siv)?))
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
        let Aead::Aes128(a) = &keys.aead else {
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
    fn unknown_suites_are_none() {
        assert!(suite(0x002f).is_none());
        assert_eq!(suite(0xcca8).unwrap().cipher, Cipher::ChaCha20Poly1305);
    }
}
