//! Like `frame`, but bytes 0 and 1 index the registry's API keys and that API's versions, so
//! every (key, version) the schemas know is one byte flip away. Byte 2: direction (odd =
//! response). The rest is the frame, size prefix included; for a request, the header's key
//! and version are overwritten with the chosen ones; with bit 1 of byte 2 set, the size
//! prefix is made to match the frame's length.
#![no_main]

#[path = "common.rs"]
mod common;

use kdissect::kafka::registry;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn table() -> &'static Vec<(i16, Vec<i16>)> {
    static T: OnceLock<Vec<(i16, Vec<i16>)>> = OnceLock::new();
    T.get_or_init(|| registry().api_versions())
}

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_at_checked(3) else {
        return;
    };
    let t = table();
    let (key, versions) = &t[head[0] as usize % t.len()];
    let version = versions[head[1] as usize % versions.len()];
    let response = head[2] & 1 == 1;
    let mut frame = rest.to_vec();
    if !response && frame.len() >= 8 {
        frame[4..6].copy_from_slice(&key.to_be_bytes());
        frame[6..8].copy_from_slice(&version.to_be_bytes());
    }
    if head[2] & 2 == 2 && frame.len() >= 4 {
        let size = (frame.len() - 4) as i32;
        frame[0..4].copy_from_slice(&size.to_be_bytes());
    }
    common::decode_and_render(&frame, *key, version, response);
});
