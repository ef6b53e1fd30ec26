//! The group timelines of `--stats --json --analyses=groups` on the issue 35 captures
//! (samples/issue35-*.pcap, a 4.4.0 cluster; librdkafka, Java, Kafka Streams, franz-go,
//! aiokafka and kafka-go members) held against the clients' own NDJSON logs
//! (samples/logs/issue35-*.ndjson): who joined and left within the capture, when and why, and
//! the whole assignments the members printed.
//!
//! Rules (docs/analyses.md, "Groups"):
//!
//! - a member joins in a capture when its first assignment comes after the capture began (a
//!   member of the group before it is not a join, even when its first message is in it);
//! - a member that closed left once, between its `closing` line and shortly after `closed`,
//!   with a LeaveGroup or a heartbeat at member epoch -1; a member killed left once, after its
//!   `killed` line and within its session timeout (6 s) and the rebalance after it, absent from
//!   the next generation (classic) or timed out (KIP-848, streams);
//! - a whole assignment a member printed (librdkafka and aiokafka classic: `partitions`; Java:
//!   `assignment`) is kdissect's for that member in the generation it printed it in (classic),
//!   or within kdissect's at that member epoch (KIP-848: what the member held at the epoch is
//!   the union of what it gave up and was given at it). Partitions are compared by number, the
//!   groups consuming one topic each (topic names on captures begun mid-stream are item 2's).

mod common;

use common::cli::{arr, root, run};
use serde_json::Value as J;
use std::collections::{BTreeMap, BTreeSet};

const S: i64 = 1_000_000_000;
/// The members' session timeout (every client of the runs was given 6 s).
const SESSION: i64 = 6 * S;
const PORTS: [&str; 8] = ["-p", "9093", "-p", "9092", "-p", "9192", "-p", "9292"];

/// A capture of the runs, under samples/ or samples/issue35/.
fn capture(name: &str) -> String {
    ["samples", "samples/issue35"]
        .iter()
        .map(|d| format!("{d}/{name}"))
        .find(|p| root().join(p).exists())
        .unwrap_or_else(|| panic!("{name} not in samples/"))
}

fn groups(name: &str) -> Vec<J> {
    let file = capture(name);
    let mut args: Vec<&str> = PORTS.to_vec();
    args.extend(["--stats", "--json", "-q", "--analyses=groups", &file]);
    let out = run(&args);
    let j: J = serde_json::from_str(out.trim()).expect("stats json");
    arr(&j["stats"]["analyses"]["groups"]).to_vec()
}

fn log(run: &str) -> Vec<J> {
    let text = std::fs::read_to_string(root().join(format!("samples/logs/issue35-{run}.ndjson")))
        .expect("log");
    text.lines()
        .map(|l| serde_json::from_str(l).expect("ndjson"))
        .collect()
}

fn ts(e: &J) -> i64 {
    e["ts_ns"].as_i64().expect("ts_ns")
}

fn parts(v: &J) -> BTreeSet<i64> {
    arr(v).iter().filter_map(|p| p[1].as_i64()).collect()
}

/// One member of a group, as its log tells it.
#[derive(Debug, Default)]
struct Member {
    name: String,
    member_id: Option<String>,
    first_assigned: Option<i64>,
    started: i64,
    /// (closing, closed).
    closed: Option<(i64, i64)>,
    killed: Option<i64>,
    /// (ts, generation printed, whole assignment).
    whole: Vec<(i64, Option<i64>, BTreeSet<i64>)>,
}

/// The capture's window in the run's clock.
fn window(log: &[J], file: &str) -> (i64, i64) {
    let at = |ev: &str| {
        log.iter()
            .find(|e| e["event"] == ev && e["file"] == file)
            .map(ts)
            .unwrap_or_else(|| panic!("{ev} of {file}"))
    };
    (at("capture_started"), at("capture_stopped"))
}

/// The members of `group`: the clients that subscribed to it (or, for a streams
/// application, its instances, which log no subscription).
fn members(log: &[J], group: &str, streams_prefix: Option<&str>) -> Vec<Member> {
    let mut by: BTreeMap<String, Member> = BTreeMap::new();
    for e in log {
        let client = e["client"].as_str().unwrap_or("").to_string();
        let ours = e["group"] == group
            || streams_prefix
                .is_some_and(|p| e["client_id"].as_str().is_some_and(|c| c.starts_with(p)));
        if e["event"] == "subscribed" && e["group"] == group
            || (streams_prefix.is_some() && ours && e["event"] == "started")
        {
            by.entry(client.clone()).or_insert_with(|| Member {
                name: client.clone(),
                started: ts(e),
                ..Member::default()
            });
        }
        if e["event"] == "killed" {
            if let Some(m) = by.get_mut(&client) {
                m.killed = Some(ts(e));
            }
            continue;
        }
        let Some(m) = by.get_mut(&client) else {
            continue;
        };
        if let Some(id) = e["member_id"].as_str().filter(|s| !s.is_empty()) {
            m.member_id = Some(id.to_string());
        }
        match e["event"].as_str().unwrap_or("") {
            "assigned" => {
                m.first_assigned.get_or_insert(ts(e));
                let g = e["generation"].as_i64();
                let whole = if e.get("assignment").is_some() {
                    Some(parts(&e["assignment"]))
                } else if e["protocol"] == "classic"
                    && (client.starts_with('c') || client.starts_with('a'))
                {
                    // librdkafka's and aiokafka's classic (eager) callbacks give the whole
                    // assignment.
                    Some(parts(&e["partitions"]))
                } else {
                    None
                };
                if let Some(w) = whole {
                    m.whole.push((ts(e), g, w));
                }
            }
            "tasks" => {
                m.first_assigned.get_or_insert(ts(e));
            }
            "closing" => m.closed = Some((ts(e), ts(e))),
            "closed" => {
                if let Some(c) = m.closed.as_mut() {
                    c.1 = ts(e);
                }
            }
            _ => {}
        }
    }
    by.into_values().collect()
}

/// The `left` events of a group: (member id, ts, detail).
fn leaves(g: &J) -> Vec<(String, i64, String)> {
    arr(&g["timeline"])
        .iter()
        .filter(|h| h["what"] == "left")
        .map(|h| {
            (
                h["member"].as_str().unwrap_or("").to_string(),
                ts(h),
                h["detail"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Member id → partitions (`None`: not seen).
type Assigned = BTreeMap<String, Option<BTreeSet<i64>>>;

/// kdissect's generations of a group: (generation, start_ns, assignments).
fn generations(g: &J) -> Vec<(i64, i64, Assigned)> {
    arr(&g["generations"])
        .iter()
        .map(|x| {
            let members = arr(&x["members"])
                .iter()
                .map(|m| {
                    let a = m["assignment"].as_array().map(|a| {
                        a.iter()
                            .flat_map(|t| arr(&t["partitions"]).iter().filter_map(J::as_i64))
                            .collect()
                    });
                    (m["member_id"].as_str().unwrap_or("").to_string(), a)
                })
                .collect();
            (
                x["generation"].as_i64().unwrap_or(-1),
                x["start_ns"].as_i64().unwrap_or(0),
                members,
            )
        })
        .collect()
}

/// Joins, leaves, and when and why each member left, against the log.
fn check_joins_and_leaves(g: &J, members: &[Member], (t0, t1): (i64, i64), killed_why: &str) {
    let name = g["group"].as_str().unwrap_or("");
    let joined = members
        .iter()
        .filter(|m| m.first_assigned.unwrap_or(m.started) > t0)
        .count();
    assert_eq!(g["joins"].as_u64(), Some(joined as u64), "{name}: joins");
    let gone: Vec<&Member> = members
        .iter()
        .filter(|m| {
            m.closed.is_some_and(|c| (t0..t1).contains(&c.0))
                || m.killed.is_some_and(|k| (t0..t1).contains(&k))
        })
        .collect();
    assert_eq!(
        g["leaves"].as_u64(),
        Some(gone.len() as u64),
        "{name}: leaves"
    );
    let ls = leaves(g);
    for m in gone {
        let (from, to, why) = match (m.closed, m.killed) {
            (Some((a, b)), _) => (a, b + S, "closed"),
            (None, Some(k)) => (k, k + SESSION + 3 * S, "killed"),
            _ => unreachable!(),
        };
        let mine: Vec<&(String, i64, String)> = match &m.member_id {
            Some(id) => ls.iter().filter(|l| &l.0 == id).collect(),
            // Members whose log names no member id: one leave in their window.
            None => ls.iter().filter(|l| (from..=to).contains(&l.1)).collect(),
        };
        assert_eq!(mine.len(), 1, "{name}: {} left once: {mine:?}", m.name);
        let (_, at, detail) = mine[0];
        assert!(
            (from..=to).contains(at),
            "{name}: {} ({why}) left at {at}, not within {from}..{to}",
            m.name
        );
        let fits = match why {
            "closed" => detail == "LeaveGroup" || detail.starts_with("heartbeat with epoch -1"),
            _ => detail.starts_with(killed_why),
        };
        assert!(fits, "{name}: {} ({why}): {detail}", m.name);
    }
}

/// Classic: each whole assignment printed in the capture is kdissect's for that member in
/// the generation it was printed in (the newest begun before it).
fn check_classic_assignments(g: &J, members: &[Member], (t0, _): (i64, i64)) -> usize {
    let gens = generations(g);
    let mut checked = 0;
    for m in members {
        let Some(id) = &m.member_id else { continue };
        for (at, printed_gen, want) in m.whole.iter().filter(|w| w.0 > t0) {
            let got = gens
                .iter()
                .filter(|(n, start, ms)| {
                    ms.contains_key(id) && printed_gen.map_or(*start <= *at, |p| p == *n)
                })
                .max_by_key(|(_, start, _)| *start)
                .unwrap_or_else(|| panic!("{}: no generation of {id} before {at}", m.name));
            assert_eq!(
                got.2[id].as_ref(),
                Some(want),
                "{}: generation {} at {at}",
                m.name,
                got.0
            );
            checked += 1;
        }
    }
    checked
}

fn group<'a>(gs: &'a [J], name: &str) -> &'a J {
    gs.iter()
        .find(|g| g["group"] == name)
        .unwrap_or_else(|| panic!("group {name} in {gs:?}"))
}

fn classic(file: &str) {
    let l = log("classic");
    let w = window(&l, file);
    let gs = groups(file);
    let g = group(&gs, "issue35-classic-group");
    assert_eq!(g["protocol"], "classic");
    let ms = members(&l, "issue35-classic-group", None);
    assert_eq!(ms.len(), 5, "c1 c2 c3 c4 j1");
    check_joins_and_leaves(g, &ms, w, "absent from generation");
    let n = check_classic_assignments(g, &ms, w);
    assert!(n >= 8, "{n} assignments checked");
}

#[test]
fn classic_joins_leaves_and_assignments_match_the_members_logs() {
    classic("issue35-classic.pcap");
}

#[test]
fn classic_begun_mid_stream_counts_only_what_happened_in_it() {
    classic("issue35-classic-late.pcap");
}

fn kip848(file: &str) {
    let l = log("kip848");
    let w = window(&l, file);
    let gs = groups(file);
    let g = group(&gs, "issue35-kip848-group");
    assert_eq!(g["protocol"], "consumer");
    let ms = members(&l, "issue35-kip848-group", None);
    assert_eq!(ms.len(), 5);
    check_joins_and_leaves(g, &ms, w, "timed out");
    // Java prints its whole assignment with its member epoch: kdissect's at that epoch holds
    // it, and nothing the member neither held before nor was given.
    let gens = generations(g);
    let j1 = ms.iter().find(|m| m.name == "j1-java").expect("j1");
    let id = j1.member_id.as_ref().expect("j1's member id");
    // What it held at each epoch: the last it printed before the epoch, and all it printed
    // at it.
    let mut by_epoch: BTreeMap<i64, Vec<(i64, BTreeSet<i64>)>> = BTreeMap::new();
    for (at, epoch, a) in &j1.whole {
        let epoch = epoch.expect("Java prints its member epoch");
        by_epoch.entry(epoch).or_default().push((*at, a.clone()));
    }
    let mut before = BTreeSet::new();
    let mut checked = 0;
    for (epoch, printed) in &by_epoch {
        let held: BTreeSet<i64> = printed
            .iter()
            .flat_map(|(_, a)| a.iter().copied())
            .chain(before.iter().copied())
            .collect();
        if printed.iter().all(|(at, _)| *at > w.0) {
            let got = gens
                .iter()
                .find(|(n, _, ms)| n == epoch && ms.contains_key(id))
                .and_then(|x| x.2[id].clone())
                .unwrap_or_else(|| panic!("j1 at epoch {epoch} not listed"));
            for (_, want) in printed {
                assert!(got.is_superset(want), "j1 at {epoch}: {got:?} ⊉ {want:?}");
            }
            assert!(got.is_subset(&held), "j1 at {epoch}: {got:?} ⊄ {held:?}");
            checked += 1;
        }
        before = printed.last().map(|x| x.1.clone()).unwrap_or_default();
    }
    assert!(checked >= 4, "{checked}");
    // Members are never shown `[]` at an epoch where they held partitions (assignments in
    // heartbeat answers at an unchanged epoch): c1 had [2, 3] from 8.11 s to the end.
    let c1 = ms.iter().find(|m| m.name == "c1-slow").expect("c1");
    let c1 = c1.member_id.as_ref().expect("c1's id");
    for (n, _, members) in &gens {
        if let Some(Some(a)) = members.get(c1) {
            assert!(*n < 4 || !a.is_empty(), "c1 at epoch {n}: {a:?}");
        }
    }
}

#[test]
fn kip848_assignments_at_unchanged_epochs_and_the_member_dropped_by_its_session_timeout() {
    kip848("issue35-kip848.pcap");
}

#[test]
fn kip848_begun_mid_stream_counts_only_what_happened_in_it() {
    kip848("issue35-kip848-late.pcap");
}

#[test]
fn streams_and_franz_go_groups_are_in_the_group_tables() {
    let l = log("streams");
    let w = window(&l, "issue35-streams.pcap");
    let gs = groups("issue35-streams.pcap");
    let s = group(&gs, "issue35-streams-app");
    assert_eq!(s["protocol"], "streams");
    let ms = members(&l, "issue35-streams-app", Some("issue35-streams-s"));
    assert_eq!(ms.len(), 3, "{ms:?}");
    check_joins_and_leaves(s, &ms, w, "timed out");
    // Its members' tasks: s1 and s2 ran 0_1, 0_3, 0_5 and 0_0, 0_2, 0_4 (29.0 s).
    let tasks: BTreeSet<String> = generations(s)
        .iter()
        .flat_map(|x| {
            x.2.values()
                .flatten()
                .map(|a| format!("{a:?}"))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        tasks.contains("{0, 2, 4}") && tasks.contains("{1, 3, 5}"),
        "{tasks:?}"
    );
    let f = group(&gs, "issue35-franz-group");
    assert_eq!(f["protocol"], "classic");
    let ms = members(&l, "issue35-franz-group", None);
    assert_eq!(ms.len(), 3);
    check_joins_and_leaves(f, &ms, w, "absent from generation");
}

#[test]
fn aiokafka_and_kafka_go_groups_match_their_logs() {
    let l = log("unnamed");
    let w = window(&l, "issue35-unnamed.pcap");
    let gs = groups("issue35-unnamed.pcap");
    for name in ["issue35-aio-group", "issue35-kgo-group"] {
        let g = group(&gs, name);
        let ms = members(&l, name, None);
        assert_eq!(ms.len(), 2, "{name}");
        check_joins_and_leaves(g, &ms, w, "absent from generation");
    }
    let a = group(&gs, "issue35-aio-group");
    let n = check_classic_assignments(a, &members(&l, "issue35-aio-group", None), w);
    assert!(n >= 4, "{n}");
}
