//! Hex text → bytes → frames → `Conversation` decoding (the `--hex` path of the binary).
#![no_main]

use kdissect::capture::hex;
use kdissect::kafka::frames::{self, Conversation, ResponseHint};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(bytes) = hex::parse(&text) else {
        return;
    };
    let mut conv = Conversation::default();
    let hint = ResponseHint::default();
    for span in frames::split(&bytes) {
        let frame = bytes
            .get(span.offset..span.offset + span.len)
            .expect("split returned a span outside the buffer");
        let msg = conv.decode(frame, &hint);
        std::hint::black_box(&msg);
    }
});
