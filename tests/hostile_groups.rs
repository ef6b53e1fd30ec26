//! The group timeline under hostile captures (issue 35, items 16 and 17), made by
//! scripts/hostile/generate.py: one JoinGroup answer listing thousands of members
//! (`big-join`), and hundreds of rebalances each by a new member (`rebalances`). What is
//! asserted is the state kept and what is counted, never time: the members are indexed (a
//! watchdog guards against a hang, not a timing), each generation lists at most
//! `MAX_LISTED` members, each group keeps its newest `MAX_GENERATIONS` generations and
//! `MAX_EVENTS` events, and every join, leave and generation is still counted.

mod common;

use common::cli::{arr, root};
use serde_json::Value as J;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The bounds of src/analyses/groups.rs, as docs/robustness.md states them.
const MAX_GENERATIONS: usize = 100;
const MAX_EVENTS: usize = 1_000;
const MAX_LISTED: usize = 1_000;

/// Runs a generator (`small` or `full` scale) into the test's scratch directory.
fn generate(name: &str, scale: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hostile-groups");
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let out = dir.join(format!("{name}-{scale}.pcap"));
    let tmp = dir.join(format!("{name}-{scale}.{}.tmp", std::process::id()));
    let st = Command::new("python3")
        .arg(root().join("scripts/hostile/generate.py"))
        .arg(name)
        .arg(&tmp)
        .args(["--scale", scale])
        .status()
        .expect("python3 (the hostile inputs need Python 3)");
    assert!(st.success(), "generate.py {name}: {st}");
    std::fs::rename(&tmp, &out).expect("rename");
    out
}

/// The one group of the capture, from `--stats --json --analyses=groups`.
fn the_group(input: &Path) -> J {
    let out = common::cli::run(&[
        "--stats",
        "--json",
        "-q",
        "--analyses=groups",
        input.to_str().expect("path"),
    ]);
    let j: J = serde_json::from_str(out.trim()).expect("stats json");
    let groups = arr(&j["stats"]["analyses"]["groups"]);
    assert_eq!(groups.len(), 1, "{groups:?}");
    groups[0].clone()
}

#[test]
fn a_join_answer_of_twelve_thousand_members_is_indexed_and_listed_within_bounds() {
    // Full scale: 12 000 members, past both the listing and the following bounds.
    let g = the_group(&generate("big-join", "full"));
    let gens = arr(&g["generations"]);
    assert_eq!(gens.len(), 1);
    let listed = arr(&gens[0]["members"]);
    assert_eq!(listed.len(), MAX_LISTED, "members listed in the generation");
    // The leader joined with an empty member id (an old client's first join); the others,
    // whose own JoinGroup exchanges are not in the capture, were members before it.
    assert_eq!(g["joins"].as_u64(), Some(1));
    assert_eq!(g["leaves"].as_u64(), Some(0));
    // Each listed member has the partition the leader's SyncGroup gave it.
    for m in listed {
        let id = m["member_id"].as_str().expect("id");
        let n: i64 = id.trim_start_matches("member-").parse().expect("number");
        let parts = arr(&arr(&m["assignment"])[0]["partitions"]);
        assert_eq!(parts, [J::from(n)], "{id}");
    }
}

#[test]
fn endless_rebalances_keep_the_newest_generations_and_events_and_count_every_one() {
    let g = the_group(&generate("rebalances", "small"));
    let n = 600u64;
    let gens = arr(&g["generations"]);
    assert_eq!(gens.len(), MAX_GENERATIONS);
    // The newest are kept, in order.
    let ids: Vec<i64> = gens
        .iter()
        .filter_map(|x| x["generation"].as_i64())
        .collect();
    let want: Vec<i64> = (n as i64 - MAX_GENERATIONS as i64 + 1..=n as i64).collect();
    assert_eq!(ids, want);
    // Every member joined once and all but the last left once (absent from the next
    // generation), each counted though most events are gone.
    assert_eq!(g["joins"].as_u64(), Some(n));
    assert_eq!(g["leaves"].as_u64(), Some(n - 1));
    assert_eq!(arr(&g["timeline"]).len(), MAX_EVENTS);
    // Each generation holds its one member, assigned partition 0.
    for x in gens {
        let members = arr(&x["members"]);
        assert_eq!(members.len(), 1, "{x}");
        let id = x["generation"].as_i64().expect("id");
        assert_eq!(members[0]["member_id"], format!("member-{id:06}").as_str());
    }
}
