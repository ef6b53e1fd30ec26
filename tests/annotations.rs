//! Numbers shown with their names: error codes, API keys, authorized-operation bits.

mod common;

use common::{get, vector};
use kdissect::kafka::decode_response;
use kdissect::render::{tree, Style};

fn line(frame: &[u8], path: &str) -> String {
    let msg = decode_response(frame, 60, 2);
    assert!(msg.is_clean(), "{:?}", msg.error);
    tree::node_line(get(&msg, path), frame, Style::default())
}

#[test]
fn error_codes_and_authorized_operations_are_named() {
    let mut f = vector("describe-cluster-v2-response.hex");
    f[0x0d..0x0f].copy_from_slice(&3i16.to_be_bytes());
    f[0x23..0x27].copy_from_slice(&((1i32 << 3) | (1 << 4) | (1 << 8)).to_be_bytes());
    assert!(line(&f, "ErrorCode")
        .starts_with("ErrorCode int16 = 3 (UNKNOWN_TOPIC_OR_PARTITION) [0x000d, 2B]"));
    assert!(line(&f, "ClusterAuthorizedOperations").starts_with(
        "ClusterAuthorizedOperations int32 = 280 (READ, WRITE, DESCRIBE) [0x0023, 4B]"
    ));
    f[0x23..0x27].copy_from_slice(&i32::MIN.to_be_bytes());
    assert!(line(&f, "ClusterAuthorizedOperations")
        .starts_with("ClusterAuthorizedOperations int32 = -2147483648 (not requested)"));
    // Zero stays plain, as on the specification pages.
    f[0x0d..0x0f].copy_from_slice(&0i16.to_be_bytes());
    assert!(line(&f, "ErrorCode").starts_with("ErrorCode int16 = 0 [0x000d, 2B]"));
}

#[test]
fn wide_prints_descriptions_whole() {
    let f = vector("describe-cluster-v2-response.hex");
    let msg = decode_response(&f, 60, 2);
    let n = get(&msg, "ThrottleTimeMs");
    let short = tree::node_line(n, &f, Style::default());
    let wide = tree::node_line(
        n,
        &f,
        Style {
            wide: true,
            ..Style::default()
        },
    );
    assert!(short.ends_with("throttled due to a q..."), "{short}");
    assert!(wide.ends_with("did not violate any quota."), "{wide}");
}
