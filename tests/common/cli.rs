//! Running the binary and reading its JSON, for the tests that recompute figures from
//! `--json` output (tests/analyses.rs, tests/lag_vs_clients.rs).

use serde_json::Value as J;
use std::path::PathBuf;
use std::process::Command;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// kdissect's standard output; exit status 0 or 1 (damage in a capture is not a failure here).
pub fn run(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run kdissect");
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf8")
}

/// A JSON array's elements, none when it is not one.
pub fn arr(v: &J) -> &[J] {
    v.as_array().map_or(&[], Vec::as_slice)
}

/// An RFC 3339 time (the JSON's `ts`) in nanoseconds since the epoch.
pub fn nanos(t: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(t)
        .expect("time")
        .timestamp_nanos_opt()
        .expect("in range")
}
