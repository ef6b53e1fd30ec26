//! Hex text → bytes → frames → records, as `kdissect --hex` reads it: the text line by line
//! through `HexStream`, frames cut as bytes arrive (`Cutter`), each cut decoded, paired and
//! handed to a sink as a record or a notice (`frames::Reader`).
#![no_main]

use kdissect::capture::hex::HexStream;
use kdissect::kafka::frames::{Cutter, Reader, ResponseHint};
use kdissect::kafka::stream::{Notice, Record, Sink};
use kdissect::kafka::{DecodeOptions, MAX_ELEMENTS};
use libfuzzer_sys::fuzz_target;

/// Touches what a printer would read of each record.
struct Reads;

impl Sink for Reads {
    fn message(&mut self, rec: &Record<'_>) {
        std::hint::black_box((&rec.msg.facts, rec.bytes.len(), rec.input_offset));
    }
    fn notice(&mut self, n: &Notice) {
        std::hint::black_box(n);
    }
}

/// What a `# response api_key=.. api_version=..` comment line says frames are, as --hex
/// takes it.
fn hint(stream: &HexStream) -> ResponseHint {
    match stream.directive {
        Some(d) if d.response => ResponseHint {
            api_key: d.api_key,
            api_version: d.api_version,
            force_response: true,
        },
        _ => ResponseHint::default(),
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut stream = HexStream::default();
    let mut cutter = Cutter::new(1 << 20);
    let mut reader = Reader::new(DecodeOptions {
        max_elements: MAX_ELEMENTS,
        ..DecodeOptions::default()
    });
    let mut sink = Reads;
    for line in text.split('\n') {
        let Ok(bytes) = stream.line(line) else {
            return;
        };
        cutter.push(&bytes);
        let hint = hint(&stream);
        while let Some(cut) = cutter.next_cut() {
            reader.cut(cut, &hint, &mut sink);
        }
    }
    let hint = hint(&stream);
    cutter.push(&stream.finish());
    while let Some(cut) = cutter.next_cut() {
        reader.cut(cut, &hint, &mut sink);
    }
    while let Some(cut) = cutter.finish() {
        reader.cut(cut, &hint, &mut sink);
    }
});
