//! Shared by the `frame` targets: decode one frame and run every renderer over the result.

use kdissect::kafka::{decode_request, decode_response, Message};
use kdissect::render::{self, json::Meta, Style};

pub fn decode_and_render(rest: &[u8], key: i16, version: i16, response: bool) {
    let msg = if response {
        decode_response(rest, key, version)
    } else {
        decode_request(rest)
    };
    render_all(&msg, rest);
}

pub fn render_all(msg: &Message, frame: &[u8]) {
    let mut sink = std::io::sink();
    let _ = render::tree::write(&mut sink, msg.root(), frame, Style::default());
    let _ = render::bytes::write(&mut sink, msg.root(), frame, Style::default());
    let wide = Style {
        color: true,
        wide: true,
        max_value: 4,
        show_secrets: false,
        ascii: true,
        brief: false,
    };
    // The compact tree (-V --brief), plain and in colour.
    let brief = Style {
        brief: true,
        ..Style::default()
    };
    let _ = render::tree::write(&mut sink, msg.root(), frame, brief);
    let _ = render::tree::write(&mut sink, msg.root(), frame, Style { color: true, ..brief });
    // Secrets masked as the command line masks them: every view reads the masked bytes.
    let shown = render::masked(msg, frame, wide);
    let hidden = render::hidden_spans(msg, wide);
    let _ = render::bytes::write_masked(&mut sink, msg.root(), &shown, hidden, wide);
    let _ = render::tree::write(&mut sink, msg.root(), frame, wide);
    let meta = Meta::default();
    let j = render::json::message(msg, frame, &meta, false);
    std::hint::black_box(j.to_string());
    let j = render::json::message(msg, frame, &meta, true);
    std::hint::black_box(j.to_string());
    std::hint::black_box(render::summary::essentials(msg));
}
