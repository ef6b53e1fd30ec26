//! The analyses under hostile captures (issue 35, item 16), made by
//! scripts/hostile/generate.py: `wide-exchange`, Produce and OffsetCommit exchanges of
//! thousands of partitions, whose answers are read partition by partition against their
//! requests. What is asserted is what the analyses find, never time (the full scale, 80 000
//! partitions, is for the benchmark: one exchange took 37 s when each answer's partition was
//! searched for in its request).

mod common;

use common::cli::{arr, root};
use serde_json::Value as J;
use std::path::PathBuf;
use std::process::Command;

/// Runs a generator at the small scale into the test's scratch directory.
fn generate(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hostile-analyses");
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let out = dir.join(format!("{name}.pcap"));
    let tmp = dir.join(format!("{name}.{}.tmp", std::process::id()));
    let st = Command::new("python3")
        .arg(root().join("scripts/hostile/generate.py"))
        .arg(name)
        .arg(&tmp)
        .args(["--scale", "small"])
        .status()
        .expect("python3 (the hostile inputs need Python 3)");
    assert!(st.success(), "generate.py {name}: {st}");
    std::fs::rename(&tmp, &out).expect("rename");
    out
}

/// Partitions of the small `wide-exchange` (scripts/hostile/generate.py).
const WIDE: usize = 3_000;

#[test]
fn every_partition_of_a_wide_exchange_is_read_against_its_request() {
    let input = generate("wide-exchange");
    let out = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(["--stats", "--json", "-q", "--analyses"])
        .arg(&input)
        .output()
        .expect("run kdissect");
    assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
    let j: J = serde_json::from_slice(&out.stdout).expect("stats json");
    let a = &j["stats"]["analyses"];
    // Two records produced to each partition: the requests' batches, counted per partition.
    let parts = arr(&a["throughput"]["partitions"]);
    assert_eq!(parts.len(), WIDE);
    assert!(
        parts.iter().all(|p| p["records"] == 2),
        "{:?}",
        parts.first()
    );
    // Each commit is read with its own partition's offset: lag 1 at offset 1 (the log ends at
    // 2 after the second Produce answer), then 0 at offset 2.
    let series = arr(&a["lag"]["series"]);
    assert_eq!(series.len(), WIDE);
    for s in series {
        let lags: Vec<(i64, i64)> = arr(&s["points"])
            .iter()
            .map(|p| {
                (
                    p["offset"].as_i64().unwrap_or(-1),
                    p["lag"].as_i64().unwrap_or(-1),
                )
            })
            .collect();
        assert_eq!(lags, vec![(1, 1), (2, 0)], "{}", s["partition"]);
    }
    assert_eq!(a["lag"]["dropped"], 0);
}
