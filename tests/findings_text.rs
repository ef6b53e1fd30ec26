//! The findings of `--stats --analyses` on real captures (issue 35, item 7): requests left
//! in flight when tcpdump stopped (long-poll Fetches) are told apart from requests never
//! answered; texts name a client even when its client id is empty, count in the capture
//! clock, and take the right plural.

mod common;

use common::cli::{arr, run};
use serde_json::Value as J;

fn findings(sample: &str) -> Vec<J> {
    let out = run(&["--stats", "--json", "-q", "--analyses", sample]);
    let j: J = serde_json::from_str(out.trim()).expect("stats json");
    arr(&j["stats"]["analyses"]["findings"]).to_vec()
}

fn of_kind<'a>(list: &'a [J], kind: &str) -> Vec<&'a J> {
    list.iter().filter(|f| f["kind"] == kind).collect()
}

fn frames(f: &J) -> Vec<u64> {
    arr(&f["frames"]).iter().filter_map(J::as_u64).collect()
}

#[test]
fn long_polls_in_flight_when_the_capture_stopped_are_not_unanswered() {
    // cluster-steady: the 24 requests without an answer are Fetches (consumers', replica
    // fetchers', KRaft's) sent in the last 0.3 s of the capture.
    let list = findings("samples/cluster-steady.pcap");
    assert!(of_kind(&list, "unanswered").is_empty(), "{list:?}");
    let flying = of_kind(&list, "in_flight_at_end");
    assert_eq!(flying.len(), 1);
    assert_eq!(flying[0]["severity"], "info");
    let summary = flying[0]["summary"].as_str().unwrap_or("");
    assert!(
        summary
            .starts_with("24 requests in flight when the capture stopped (24 of them long polls"),
        "{summary}"
    );
    assert_eq!(frames(flying[0])[0], 6670);
}

#[test]
fn requests_to_a_killed_broker_are_unanswered_and_those_at_the_end_in_flight() {
    // cluster-kill: broker 3 is killed at 5 s; its Produce (frame 2419) and Fetches (2280,
    // 2286) never get an answer (samples/README.md). The capture ends 20 s later.
    let list = findings("samples/cluster-kill.pcap");
    let late = of_kind(&list, "unanswered");
    assert_eq!(late.len(), 1);
    assert_eq!(late[0]["severity"], "warning");
    let f = frames(late[0]);
    for n in [2280, 2286, 2419] {
        assert!(f.contains(&n), "frame {n} in {f:?}");
    }
    // What was in flight at the end is all after broker 3 came back (frame 8000 on).
    let flying = of_kind(&list, "in_flight_at_end");
    assert_eq!(flying.len(), 1);
    assert!(frames(flying[0]).iter().all(|n| *n > 8000), "{flying:?}");
    assert!(f.iter().all(|n| *n < 8000), "{f:?}");
}

#[test]
fn finding_texts_name_clients_count_in_capture_time_and_agree_in_number() {
    for sample in [
        "samples/cluster-steady.pcap",
        "samples/cluster-kill.pcap",
        "samples/cluster-restart.pcap",
        "samples/ana-rebalance-classic.pcap",
    ] {
        for f in findings(sample) {
            let s = f["summary"].as_str().unwrap_or("");
            assert!(
                !s.contains("(client )") && !s.contains("client )"),
                "{sample}: {s}"
            );
            assert!(!s.contains("since 1970"), "{sample}: {s}");
            assert!(
                !s.starts_with("1 requests") && !s.contains(" 1 requests"),
                "{sample}: {s}"
            );
            assert!(f["count"].as_u64().unwrap_or(1) >= 1, "{sample}: {f}");
        }
    }
}
