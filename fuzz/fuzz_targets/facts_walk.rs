//! The facts a summary prints, three ways: read back from the nodes of the body's first two
//! levels, gathered while the spec is interpreted as the body is walked, and gathered by the
//! walk generated from the spec (what the summary and statistics views do). Whatever the
//! bytes, all three must leave the same facts, error codes, record counts, secrets, problems,
//! verdict and header values (tests/facts_walk.rs holds them equal on the samples); and the
//! verdict framing and guessing take must be a full decode's.
//! Input as `frame_registry`'s: bytes 0 and 1 index the registry's API keys and that API's
//! versions, byte 2 the direction (odd = response); the rest is the frame.
#![no_main]

use kdissect::kafka::message::{
    decode_request_with, decode_response_with, request_trial, response_is_clean,
};
use kdissect::kafka::{registry, DecodeOptions, Message};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn table() -> &'static Vec<(i16, Vec<i16>)> {
    static T: OnceLock<Vec<(i16, Vec<i16>)>> = OnceLock::new();
    T.get_or_init(|| registry().api_versions())
}

/// What the summary reads of a message, in one comparable text.
fn left(m: &Message) -> String {
    format!(
        "{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?} {:?} {:?} {:?}|{}",
        m.facts,
        m.errors,
        m.records,
        m.batches,
        m.secrets,
        m.diagnoses,
        m.error,
        m.record_types,
        m.assumed_version,
        m.api_key,
        m.api_version,
        m.correlation_id,
        m.client_id,
        m.has_body
    )
}

fuzz_target!(|data: &[u8]| {
    let Some((head, frame)) = data.split_at_checked(3) else {
        return;
    };
    let t = table();
    let (key, versions) = &t[head[0] as usize % t.len()];
    let version = versions[head[1] as usize % versions.len()];
    let response = head[2] & 1 == 1;
    // (gather while walking, with the generated walk)
    let decode = |(walked, generated): (bool, bool)| {
        let opts = DecodeOptions {
            keep_depth: 2,
            facts_only: true,
            walk_facts: walked,
            generated_walk: generated,
            records: false,
            ..DecodeOptions::default()
        };
        if response {
            decode_response_with(frame, *key, version, opts)
        } else {
            decode_request_with(frame, opts)
        }
    };
    // The verdict framing and guessing take, first from the generated walk alone.
    let full = if response {
        decode_response_with(frame, *key, version, DecodeOptions::default())
    } else {
        decode_request_with(frame, DecodeOptions::default())
    };
    if response {
        assert_eq!(
            response_is_clean(frame, *key, version),
            full.is_clean(),
            "verdict"
        );
    } else {
        assert_eq!(
            request_trial(frame),
            (full.is_clean(), full.assumed_version),
            "verdict"
        );
    }
    let tree = left(&decode((false, false)));
    assert_eq!(tree, left(&decode((true, false))), "interpreted walk");
    assert_eq!(tree, left(&decode((true, true))), "generated walk");
});
