//! The group timelines of `--stats --json --analyses=groups` held against what the group's
//! members printed (samples/logs/ana-rebalance-*.log, ana-share-group.log): who joined and
//! left, when and why, and what each was assigned in each generation (or member epoch).
//!
//! Rules (docs/analyses.md, "Groups", "Held against the members' logs"):
//!
//! - every member that printed `join` joined once, every `leave` or `killed` left once;
//! - a member that left cleanly left (LeaveGroup, or a heartbeat with epoch -1) between its
//!   `leave` and `closed` lines; a member killed left after its `killed` line and no later
//!   than the first assignment the others printed after it, for the reason the protocol
//!   gives: absent from the next generation (classic), timed out (KIP-848);
//! - classic: a member's assignment in a generation is the one it printed for it;
//!   KIP-848: a member gives partitions up at its epoch on its way to the next and is given
//!   more at it, so its assignment at an epoch is the union of what it printed at that epoch
//!   and the last assignment it printed before it.

mod common;

use common::cli::{arr, run};
use serde_json::Value as J;
use std::collections::{BTreeMap, BTreeSet};

const MS: i64 = 1_000_000;

/// Partitions as (topic, partition).
type Parts = BTreeSet<(String, i64)>;

/// The groups of a sample.
fn groups(sample: &str) -> Vec<J> {
    let out = run(&["--stats", "--json", "-q", "--analyses=groups", sample]);
    let j: J = serde_json::from_str(out.trim()).expect("stats json");
    arr(&j["stats"]["analyses"]["groups"]).to_vec()
}

/// The RESULT lines of a client log.
fn results(log: &str) -> Vec<J> {
    let text = std::fs::read_to_string(common::cli::root().join(log)).expect("log");
    text.lines()
        .filter_map(|l| l.strip_prefix("RESULT "))
        .map(|l| serde_json::from_str(l).expect("RESULT json"))
        .collect()
}

fn strs(v: &J) -> Vec<String> {
    arr(v)
        .iter()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// `topic-3` partition names as (topic, partition).
fn partitions(names: &[String]) -> Parts {
    names
        .iter()
        .filter_map(|n| {
            let (t, p) = n.rsplit_once('-')?;
            Some((t.to_string(), p.parse().ok()?))
        })
        .collect()
}

/// A kdissect member's assignment as (topic, partition).
fn assigned(m: &J) -> Parts {
    arr(&m["assignment"])
        .iter()
        .flat_map(|a| {
            let t = a["topic"].as_str().unwrap_or("").to_string();
            arr(&a["partitions"])
                .iter()
                .filter_map(|p| p.as_i64())
                .map(move |p| (t.clone(), p))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// What the members' log says.
#[derive(Default)]
struct Log {
    /// Member name → member id (from its `assigned` lines).
    ids: BTreeMap<String, String>,
    /// Member names that joined.
    joined: BTreeSet<String>,
    /// (member name, t of `leave`, t of `closed`).
    left: Vec<(String, i64, i64)>,
    /// (member name, t of `killed`).
    killed: Vec<(String, i64)>,
    /// (member id, generation) → assignments printed, in order, with their time.
    assigned: BTreeMap<(String, i64), Vec<(i64, Parts)>>,
}

fn read_log(log: &str) -> Log {
    let mut l = Log::default();
    let mut leaving: BTreeMap<String, i64> = BTreeMap::new();
    for r in results(log) {
        let t = r["t"].as_i64().unwrap_or(0) * MS;
        let member = r["member"].as_str().unwrap_or("").to_string();
        match r["op"].as_str().unwrap_or("") {
            "join" => {
                l.joined.insert(member);
            }
            "leave" => {
                leaving.insert(member, t);
            }
            "closed" => {
                if let Some(from) = leaving.remove(&member) {
                    l.left.push((member, from, t));
                }
            }
            "killed" => l.killed.push((member, t)),
            "assigned" => {
                let id = r["memberId"].as_str().unwrap_or("").to_string();
                l.ids.insert(member, id.clone());
                let g = r["generation"].as_i64().unwrap_or(-1);
                let a = partitions(&strs(&r["assignment"]));
                l.assigned.entry((id, g)).or_default().push((t, a));
            }
            _ => {}
        }
    }
    l
}

/// Timeline events of a group: (what, member) → [(ts, detail)].
fn events(g: &J) -> BTreeMap<(String, String), Vec<(i64, String)>> {
    let mut m: BTreeMap<(String, String), Vec<(i64, String)>> = BTreeMap::new();
    for h in arr(&g["timeline"]) {
        let key = (
            h["what"].as_str().unwrap_or("").to_string(),
            h["member"].as_str().unwrap_or("").to_string(),
        );
        let detail = h["detail"].as_str().unwrap_or("").to_string();
        m.entry(key)
            .or_default()
            .push((h["ts_ns"].as_i64().unwrap_or(0), detail));
    }
    m
}

/// Joins and leaves, and when each member left, against the log.
fn check_joins_and_leaves(g: &J, log: &Log, killed_reason: &str) {
    let ev = events(g);
    let name = g["group"].as_str().unwrap_or("");
    assert_eq!(
        g["joins"].as_u64(),
        Some(log.joined.len() as u64),
        "{name}: joins"
    );
    let gone = log.left.len() + log.killed.len();
    assert_eq!(g["leaves"].as_u64(), Some(gone as u64), "{name}: leaves");
    for member in &log.joined {
        let id = &log.ids[member];
        let joins = ev.get(&("joined".into(), id.clone())).map_or(0, Vec::len);
        assert_eq!(joins, 1, "{name}: {member} ({id}) joined once");
    }
    for (member, from, to) in &log.left {
        let id = &log.ids[member];
        let left = &ev[&("left".into(), id.clone())];
        assert_eq!(left.len(), 1, "{name}: {member} left once: {left:?}");
        let (ts, why) = &left[0];
        assert!(
            (*from..=*to).contains(ts),
            "{name}: {member} left at {ts}, between its leave {from} and close {to}"
        );
        assert!(
            why == "LeaveGroup" || why.starts_with("heartbeat with epoch -1"),
            "{name}: {member}: {why}"
        );
    }
    for (member, at) in &log.killed {
        let id = &log.ids[member];
        let left = &ev[&("left".into(), id.clone())];
        assert_eq!(left.len(), 1, "{name}: {member} left once: {left:?}");
        let (ts, why) = &left[0];
        // The first assignment any member printed after the kill: the group had moved on.
        let next = log
            .assigned
            .values()
            .flatten()
            .map(|(t, _)| *t)
            .filter(|t| t > at)
            .min()
            .expect("an assignment after the kill");
        assert!(
            *at < *ts && *ts <= next,
            "{name}: killed {member} left at {ts}, after the kill {at}, by {next}"
        );
        assert!(why.starts_with(killed_reason), "{name}: {member}: {why}");
        println!("{name}: {member} killed at {at}, left at {ts}: {why}");
    }
}

/// kdissect's assignment of each member in each generation.
fn generations(g: &J) -> BTreeMap<(String, i64), Parts> {
    let mut m = BTreeMap::new();
    for x in arr(&g["generations"]) {
        let id = x["generation"].as_i64().unwrap_or(-1);
        for member in arr(&x["members"]) {
            let mid = member["member_id"].as_str().unwrap_or("").to_string();
            m.insert((mid, id), assigned(member));
        }
    }
    m
}

fn group<'a>(gs: &'a [J], name: &str) -> &'a J {
    gs.iter()
        .find(|g| g["group"] == name)
        .unwrap_or_else(|| panic!("group {name}"))
}

#[test]
fn a_classic_group_joins_leaves_and_assignments_match_its_members_logs() {
    let gs = groups("samples/ana-rebalance-classic.pcap");
    let g = group(&gs, "rb-classic");
    let log = read_log("samples/logs/ana-rebalance-classic.log");
    assert_eq!(log.joined.len(), 3);
    check_joins_and_leaves(g, &log, "absent from generation 4");
    // Each member's assignment in each generation is the one it printed; no other member
    // is listed.
    let ours = generations(g);
    let theirs: BTreeMap<(String, i64), Parts> = log
        .assigned
        .iter()
        .map(|(k, v)| (k.clone(), v.last().expect("one").1.clone()))
        .collect();
    assert_eq!(ours, theirs);
}

#[test]
fn a_kip848_group_joins_leaves_and_assignments_match_its_members_logs() {
    let gs = groups("samples/ana-rebalance-kip848.pcap");
    let g = group(&gs, "rb-kip848");
    let log = read_log("samples/logs/ana-rebalance-kip848.log");
    assert_eq!(log.joined.len(), 3);
    check_joins_and_leaves(g, &log, "timed out");
    let ours = generations(g);
    // Every assignment a member printed is in kdissect's for that epoch, which is the union
    // of those and the last one printed before the epoch.
    for ((id, epoch), printed) in &log.assigned {
        let want: Parts = log
            .assigned
            .iter()
            .filter(|((i, e), _)| i == id && e < epoch)
            .max_by_key(|((_, e), _)| *e)
            .and_then(|(_, v)| v.last())
            .map(|(_, a)| a.clone())
            .into_iter()
            .chain(printed.iter().map(|(_, a)| a.clone()))
            .flatten()
            .collect();
        let got = ours
            .get(&(id.clone(), *epoch))
            .unwrap_or_else(|| panic!("{id} at epoch {epoch} not listed"));
        assert_eq!(got, &want, "{id} at epoch {epoch}");
    }
    // Members printed nothing at an epoch whose assignment did not change: kdissect lists
    // them with what they held (never an empty list for a member that had partitions).
    let m1 = &log.ids["rb-m1"];
    for e in 2..=6 {
        let a = &ours[&(m1.clone(), e)];
        assert!(!a.is_empty(), "rb-m1 at epoch {e}: {a:?}");
    }
}

#[test]
fn a_share_group_members_join_and_leave_once() {
    let gs = groups("samples/ana-share-group.pcap");
    let g = group(&gs, "share-jobs-group");
    let log = results("samples/logs/ana-share-group.log");
    let joined = log.iter().filter(|r| r["op"] == "join").count() as u64;
    let left = log.iter().filter(|r| r["op"] == "leave").count() as u64;
    assert_eq!((joined, left), (3, 3));
    assert_eq!(g["protocol"], "share");
    assert_eq!(g["joins"].as_u64(), Some(joined));
    assert_eq!(g["leaves"].as_u64(), Some(left));
    // The log names no member id: each member's goodbye falls in one `leave`..`closed`
    // window, one in each.
    let l = read_log("samples/logs/ana-share-group.log");
    let goodbyes: Vec<i64> = arr(&g["timeline"])
        .iter()
        .filter(|h| h["what"] == "left")
        .filter_map(|h| h["ts_ns"].as_i64())
        .collect();
    for (member, from, to) in &l.left {
        let n = goodbyes
            .iter()
            .filter(|t| (*from..=*to).contains(*t))
            .count();
        assert_eq!(
            n, 1,
            "{member}: goodbyes between {from} and {to}: {goodbyes:?}"
        );
    }
}
