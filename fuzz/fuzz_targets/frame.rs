//! One frame: bytes 0..2 api key (i16 BE), 2..4 version (i16 BE), 4 direction (odd =
//! response); the rest is the frame, size prefix included. Every renderer runs on the result.
#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((head, rest)) = data.split_at_checked(5) else {
        return;
    };
    let key = i16::from_be_bytes([head[0], head[1]]);
    let version = i16::from_be_bytes([head[2], head[3]]);
    common::decode_and_render(rest, key, version, head[4] & 1 == 1);
});
