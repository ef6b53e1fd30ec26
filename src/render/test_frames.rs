//! Frames for the renderers' unit tests: the spec vectors of tests/fixtures/vectors (the same
//! bytes as the shared vectors), and small hand-made frames for what the vectors lack.

use crate::kafka::{decode_request, decode_response, Message};

/// Metadata v13 request: correlation id 0, empty client_id, one topic (zero id, empty name).
pub const METADATA_V13_REQUEST: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/vectors/metadata-v13-request.hex"
));

/// Metadata v13 response to it: one broker, one topic with one partition, all zero.
pub const METADATA_V13_RESPONSE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/vectors/metadata-v13-response.hex"
));

/// The bytes of a hex vector (empty if it does not parse: the tests' exact lengths then fail).
pub fn bytes(hex_text: &str) -> Vec<u8> {
    crate::capture::hex::parse(hex_text).unwrap_or_default()
}

pub fn metadata_request() -> (Vec<u8>, Message) {
    let f = bytes(METADATA_V13_REQUEST);
    let m = decode_request(&f);
    (f, m)
}

pub fn metadata_response() -> (Vec<u8>, Message) {
    let f = bytes(METADATA_V13_RESPONSE);
    let m = decode_response(&f, 3, 13);
    (f, m)
}

/// A flexible request frame: size, header v2 (`key`, `version`, `corr`, client_id "t", no
/// tagged fields), then `body`.
pub fn request(key: i16, version: i16, corr: i32, body: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&key.to_be_bytes());
    f.extend_from_slice(&version.to_be_bytes());
    f.extend_from_slice(&corr.to_be_bytes());
    f.extend_from_slice(&[0, 1, b't', 0]);
    f.extend_from_slice(body);
    let mut out = (f.len() as i32).to_be_bytes().to_vec();
    out.extend(f);
    out
}

/// SaslAuthenticate v2 request with PLAIN credentials `\0alice\0pw` (27 bytes; the password
/// `pw` at 0x18, 2 bytes).
pub fn sasl_plain() -> (Vec<u8>, Message) {
    let auth = b"\0alice\0pw";
    let mut body = vec![auth.len() as u8 + 1];
    body.extend_from_slice(auth);
    body.push(0);
    let f = request(36, 2, 3, &body);
    let m = decode_request(&f);
    (f, m)
}
