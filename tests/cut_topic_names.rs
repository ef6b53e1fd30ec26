//! A `-w` cut names the topic ids its messages give (issue 35, item 15): the Metadata answer
//! that named them may be left out of the cut, so the names the run knew go in the file as
//! packet comments (`kdissect -w: topic ID = "NAME"`), and read back they name the ids in
//! every view, as the answers would have.
//!
//! On the issue-35 captures picked up while the consumers ran (samples/README.md): cut to
//! the Fetches, which give the topic only by its id, the cut leaves out every Metadata
//! answer. The same cut as a classic pcap, which has no place for notes, is the control: its
//! ids stay unnamed. The topic's id is the one the setup logged when it created the topic
//! (samples/logs/issue35-RUN.ndjson).

mod common;

use common::cli::{arr, root};
use kdissect::capture::pcap::CaptureReader;
use kdissect::capture::write::{CaptureWriter, OutFormat};
use serde_json::Value as J;
use std::process::Command;

const PORTS: [&str; 8] = ["-p", "9093", "-p", "9092", "-p", "9192", "-p", "9292"];

/// (exit status, stdout, stderr) of kdissect on the issue-35 ports.
fn kdissect(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .args(PORTS)
        .current_dir(root())
        .output()
        .expect("run kdissect");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("kdissect-cut-names-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name).to_string_lossy().into_owned()
}

/// The topic's id as the run's setup logged it at creation (Java's base64), dashed hex.
fn logged_id(run: &str, topic: &str) -> String {
    let path = root().join(format!("samples/logs/issue35-{run}.ndjson"));
    let text = std::fs::read_to_string(&path).expect("log");
    let b64 = text
        .lines()
        .map(|l| serde_json::from_str::<J>(l).expect("log line"))
        .find(|e| e["event"] == "topic_created" && e["topic"] == topic)
        .and_then(|e| e["topic_id"].as_str().map(str::to_string))
        .expect("topic_created in the log");
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let (mut bits, mut n, mut hex) = (0u32, 0, String::new());
    for c in b64.bytes() {
        let v = ALPHABET.iter().position(|a| *a == c).expect("base64url") as u32;
        bits = (bits << 6) | v;
        n += 6;
        if n >= 8 {
            n -= 8;
            hex.push_str(&format!("{:02x}", (bits >> n) & 0xff));
        }
    }
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// The Fetch lines of a summary that list topics, and the topics they list.
fn fetch_topics(summary: &str) -> Vec<String> {
    summary
        .lines()
        .filter(|l| l.contains(" Fetch v"))
        .filter_map(|l| l.split(" topics=[").nth(1))
        .filter_map(|t| t.split(']').next())
        .map(str::to_string)
        .collect()
}

/// How many Fetch lines list `topic` (the capture's other topics, `__consumer_offsets` by an
/// id no message names and the KRaft log, are fetched too).
fn listing(summary: &str, topic: &str) -> usize {
    fetch_topics(summary)
        .iter()
        .filter(|t| t.split(", ").any(|x| x == topic))
        .count()
}

/// `stats.analyses` of the analyses over a file.
fn analyses(file: &str) -> J {
    let (_, out, err) = kdissect(&["--stats", "--json", "-q", "--analyses", file]);
    let j: J = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {err}"));
    j["stats"]["analyses"].clone()
}

fn named_in(a: &J, id: &str) -> Option<String> {
    arr(&a["topic_ids"])
        .iter()
        .find(|t| t["id"] == id)
        .and_then(|t| t["name"].as_str().map(str::to_string))
}

#[test]
fn a_cut_names_the_topic_ids_whose_metadata_it_left_out() {
    for run in ["classic", "kip848"] {
        let pcap = format!("samples/issue35-{run}-late.pcap");
        let topic = format!("issue35-{run}");
        let id = logged_id(run, &topic);
        let (cut, plain) = (
            scratch(&format!("{run}.pcapng")),
            scratch(&format!("{run}.pcap")),
        );
        let (_, shown, err) = kdissect(&[&pcap, "-Y", "api == Fetch", "-w", &cut]);
        assert!(
            err.contains(&format!("written to {cut}, with the names of")),
            "{err}"
        );
        assert!(
            !shown.contains("Metadata"),
            "{run}: the cut keeps Fetches only"
        );
        let (_, _, err) = kdissect(&[&pcap, "-Y", "api == Fetch", "-w", &plain, "-F", "pcap"]);
        assert!(
            err.contains("not noted: a pcap file has no place for notes"),
            "{err}"
        );

        // Summary lines: every Fetch that lists the topic names it, where the control gives
        // only the id.
        let (code, back, _) = kdissect(&[&cut]);
        assert_eq!(code, Some(0), "{run}: the cut reads back clean");
        let named = listing(&back, &topic);
        assert!(named > 100, "{run}: {named} Fetch lines name {topic}");
        assert!(!back.contains(&id), "{run}: the id shown unnamed");
        let (_, control, _) = kdissect(&[&plain]);
        assert_eq!(listing(&control, &topic), 0, "{run}: the control names it");
        assert_eq!(listing(&control, &id), named, "{run}: the control");

        // The tree and JSON name it beside the id.
        let (_, tree, _) = kdissect(&[&cut, "-V", "-c", "4"]);
        assert!(
            tree.contains(&format!("TopicId uuid = {id} ({topic})")),
            "{run}: {tree}"
        );
        let (_, json, _) = kdissect(&[&cut, "--json", "-c", "4"]);
        assert!(
            json.contains(&format!(r#""TopicId":"{id}","TopicId_name":"{topic}""#)),
            "{run}: {json}"
        );

        // The analyses: the JSON's map of ids, and no table keeps rows under the id.
        let a = analyses(&cut);
        assert_eq!(named_in(&a, &id).as_deref(), Some(topic.as_str()), "{run}");
        let topics = |a: &J| -> Vec<String> {
            arr(&a["throughput"]["topics"])
                .iter()
                .filter_map(|t| t["topic"].as_str().map(str::to_string))
                .collect()
        };
        let hex = id.replace('-', "");
        let shown = topics(&a);
        assert!(
            shown.contains(&topic) && !shown.contains(&hex),
            "{run}: {shown:?}"
        );
        let c = analyses(&plain);
        assert_eq!(named_in(&c, &id), None, "{run}: the control");
        assert!(topics(&c).contains(&hex), "{run}: the control");

        // tshark shows the note (frame.comment), when it is installed.
        if let Ok(t) = Command::new("tshark")
            .args(["-r", &cut, "-c", "1", "-T", "fields", "-e", "frame.comment"])
            .output()
        {
            let comment = String::from_utf8_lossy(&t.stdout);
            assert!(
                comment.contains(&format!("kdissect -w: topic {id} = \"{topic}\"")),
                "{run}: tshark: {comment}"
            );
        }
    }
}

/// A cut of a cut keeps the names: the notes read name the ids for the second cut too.
#[test]
fn a_cut_of_a_cut_names_them_again() {
    let (run, topic) = ("classic", "issue35-classic");
    let id = logged_id(run, topic);
    let pcap = format!("samples/issue35-{run}-late.pcap");
    let (first, second) = (scratch("first.pcapng"), scratch("second.pcapng"));
    kdissect(&[&pcap, "-Y", "api == Fetch", "-w", &first, "-q"]);
    let (_, _, err) = kdissect(&[&first, "-Y", "api == Fetch && response", "-w", &second]);
    assert!(err.contains(", with the names of"), "{err}");
    let (_, back, _) = kdissect(&[&second]);
    assert!(listing(&back, topic) > 100);
    assert!(!back.contains(&id));
}

/// Forged notes (a bad id, a name too long, control characters left bare) are ignored and
/// counted; a sound note whose name holds control characters names the id, and every view
/// shows the name escaped. Nothing panics.
#[test]
fn forged_notes_are_ignored_and_names_never_reach_the_terminal_raw() {
    let (run, topic) = ("classic", "issue35-classic");
    let id = logged_id(run, topic);
    let pcap = format!("samples/issue35-{run}-late.pcap");
    let plain = scratch("forge-base.pcap");
    kdissect(&[
        &pcap,
        "-Y",
        "api == Fetch",
        "-w",
        &plain,
        "-F",
        "pcap",
        "-q",
    ]);
    let forged = vec![
        "kdissect -w: topic zz0000000-0000-0000-0000-000000000011 = \"x\"".to_string(),
        format!("kdissect -w: topic {id} = \"{}\"", "x".repeat(60_000)),
        format!("kdissect -w: topic {id} = \"bare\u{1b}[2Jescape\""),
        format!("kdissect -w: topic {id} = \"evil\\u{{1b}}[31mred\\u{{7}}\""),
        "a comment someone wrote".to_string(),
    ];
    let out = scratch("forged.pcapng");
    let bytes = std::fs::read(root().join(&plain)).expect("cut");
    let mut r = CaptureReader::new(&bytes[..]).expect("pcap");
    let mut w = CaptureWriter::new(Vec::new(), OutFormat::PcapNg);
    let mut first = true;
    while let Some(p) = r.next_packet().expect("packet") {
        let comments = if std::mem::take(&mut first) {
            forged.clone()
        } else {
            Vec::new()
        };
        w.write_with(&p, &comments).expect("write");
    }
    std::fs::write(&out, w.finish().expect("finish")).expect("write file");

    let (code, back, err) = kdissect(&[&out]);
    assert!(code.is_some_and(|c| c <= 1), "{err}");
    assert!(
        err.contains("3 packet comments of the form of kdissect -w's notes did not read as one"),
        "{err}"
    );
    for (view, args) in [
        ("summary", vec![]),
        ("tree", vec!["-V", "-c", "4"]),
        ("json", vec!["--json", "-c", "4"]),
        ("analyses", vec!["--stats", "-q", "--analyses"]),
    ] {
        let mut a = vec![out.as_str()];
        a.extend(args);
        let (_, shown, _) = kdissect(&a);
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
            "{view}: a control character reached the output raw"
        );
        // Named: the tree and JSON show the id beside its name, the other views the name alone.
        let named = match view {
            "tree" => shown.contains(&format!("{id} (evil\\x1b[31mred\\x07)")),
            "json" => shown.contains(r#""TopicId_name":"evil\u001b[31mred\u0007""#),
            _ => shown.contains("evil") && !shown.contains(&id),
        };
        assert!(named, "{view}: {shown}");
    }
    // The summary lines quote it, escaped as every wire string is.
    let named: Vec<String> = fetch_topics(&back)
        .into_iter()
        .filter(|t| t.contains("evil"))
        .collect();
    assert!(named.len() > 100, "{}", named.len());
    assert!(named
        .iter()
        .all(|t| t.contains(r#""evil\u{1b}[31mred\u{7}""#)));
}

/// Stopped (`-c`) before the first Metadata answer that names the topic, the run knows its
/// name only from the analyses (a batch fetched under the id that the producer's Produce sent
/// under the name): with them, the cut notes it; without, it has no name to note.
#[test]
fn a_name_the_analyses_learnt_from_batches_is_noted_too() {
    let (run, topic) = ("classic", "issue35-classic");
    let id = logged_id(run, topic);
    let pcap = format!("samples/issue35-{run}-late.pcap");
    let cut = scratch("batches.pcapng");
    let base = [
        pcap.as_str(),
        "-Y",
        "api == Fetch",
        "-c",
        "500",
        "-q",
        "-w",
        &cut,
    ];
    kdissect(&base);
    let (_, back, _) = kdissect(&[&cut]);
    assert_eq!(listing(&back, topic), 0, "no name without the analyses");
    assert!(listing(&back, &id) > 100);
    let mut with = base.to_vec();
    with.extend(["--stats", "--stats-all", "--analyses"]);
    kdissect(&with);
    let (_, back, _) = kdissect(&[&cut]);
    assert!(listing(&back, topic) > 100, "named by its batches");
    assert!(!back.contains(&id));
}

/// A KIP-848 heartbeat's assignment gives its topics by id, below the levels a summary
/// reads: cut to the heartbeats alone (no Metadata), the cut names the id all the same, and
/// the tree shows it named; the pcap control does not.
#[test]
fn a_cut_of_heartbeats_names_the_ids_of_their_assignments() {
    let pcap = "samples/ak44-consumer-kip848.pcap";
    let (cut, plain) = (scratch("hb.pcapng"), scratch("hb.pcap"));
    let args = ["--api", "consumer-group-heartbeat", pcap, "-w"];
    let (_, shown, err) = kdissect(&[&args[..], &[cut.as_str()]].concat());
    assert!(err.contains("with the names of 1 topic id"), "{err}");
    assert!(!shown.contains("Metadata"));
    kdissect(&[&args[..], &[plain.as_str(), "-F", "pcap"]].concat());
    let assigned = |file: &str| {
        let (_, tree, _) = kdissect(&[file, "-V"]);
        tree.lines()
            .filter(|l| l.contains("TopicId uuid = "))
            .map(|l| l.contains(") [") && l.contains(" (orders) ["))
            .collect::<Vec<bool>>()
    };
    let named = assigned(&cut);
    assert!(!named.is_empty() && named.iter().all(|n| *n), "{named:?}");
    let control = assigned(&plain);
    assert!(control.len() == named.len() && control.iter().all(|n| !*n));
}
