//! Connections and their streams on real captures: captures cut from a longer one (a capture
//! started while the connections already carried traffic), connections cut off, the order of
//! what is told at the end, several files in one run, and `-w` cuts read back.

use serde_json::Value as J;
use std::path::PathBuf;
use std::process::{Command, Output};

fn sample(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .env_remove("NO_COLOR")
        .env_remove("COLUMNS")
        .output()
        .expect("run")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The NDJSON messages of a run, and its exit status.
fn messages(args: &[&str]) -> (Vec<J>, Option<i32>) {
    let mut a = vec!["--json"];
    a.extend_from_slice(args);
    let o = run(&a);
    let msgs = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    (msgs, o.status.code())
}

/// The `--stats` JSON health object of a run.
fn health(args: &[&str]) -> J {
    let mut a = vec!["--stats", "--json", "-q"];
    a.extend_from_slice(args);
    let o = run(&a);
    let v: J = serde_json::from_str(stdout(&o).trim()).expect("one JSON object");
    v["stats"]["health"].clone()
}

/// A message's frame number.
fn frame(m: &J) -> u64 {
    m["frame"].as_u64().expect("frame")
}

/// Drops the names a decoder learns from earlier messages (`TopicId_name`): a cut may leave
/// out the Metadata answer they came from.
fn without_learnt_names(v: &J, keep: &J) -> J {
    match (v, keep) {
        (J::Object(o), J::Object(k)) => J::Object(
            o.iter()
                .filter(|(name, _)| !name.ends_with("_name") || k.contains_key(*name))
                .map(|(name, x)| (name.clone(), without_learnt_names(x, &k[name])))
                .collect(),
        ),
        (J::Array(a), J::Array(k)) => J::Array(
            a.iter()
                .zip(k)
                .map(|(x, y)| without_learnt_names(x, y))
                .collect(),
        ),
        _ => v.clone(),
    }
}

/// Checks a capture cut from `full` at frame `from` (`editcap -r full cut FROM-`): every
/// message of the cut is the full capture's message `from - 1` frames on, with the same
/// addresses, API, version, correlation id, header and body, and the same request frame and
/// latency where the cut holds the request. A response whose request came before the cut is
/// marked assumed. Returns the full capture's messages at or after `from` the cut does not
/// show.
fn check_cut(cut: &[J], full: &[J], from: u64) -> Vec<J> {
    let shift = from - 1;
    for m in cut {
        let f = frame(m) + shift;
        let same = |x: &&J| {
            frame(x) == f
                && x["direction"] == m["direction"]
                && x["correlation_id"] == m["correlation_id"]
        };
        let o = full.iter().find(same).unwrap_or_else(|| {
            panic!(
                "frame {} (full {f}) is not in the full capture: {m}",
                frame(m)
            )
        });
        for key in [
            "src",
            "dst",
            "api_key",
            "api_version",
            "size",
            "time",
            "header",
        ] {
            assert_eq!(m[key], o[key], "{key} of frame {}", frame(m));
        }
        assert_eq!(m["body"], without_learnt_names(&o["body"], &m["body"]));
        match m["request_frame"].as_u64() {
            Some(r) => {
                assert_eq!(Some(r + shift), o["request_frame"].as_u64());
                assert_eq!(m["latency_us"], o["latency_us"]);
            }
            None if m["direction"] == "response" => {
                assert_eq!(m["assumed"], true, "{m}");
                assert!(o["request_frame"].as_u64().is_some_and(|r| r < from), "{o}");
            }
            None => {}
        }
    }
    full.iter()
        .filter(|o| frame(o) >= from)
        .filter(|o| {
            !cut.iter().any(|m| {
                frame(m) + shift == frame(o)
                    && m["direction"] == o["direction"]
                    && m["correlation_id"] == o["correlation_id"]
            })
        })
        .cloned()
        .collect()
}

/// Item: a capture that starts between a long-poll Fetch request (frame 60 of the full
/// capture) and its answer (frame 72) shows that answer, decoded with the Fetch version the
/// connection used and marked assumed, with nothing skipped: exit 0.
#[test]
fn a_capture_started_between_a_request_and_its_answer_shows_the_answer() {
    let (full, code) = messages(&[&sample("ak44-consumer-classic.pcap")]);
    assert_eq!(code, Some(0));
    let (cut, code) = messages(&[&sample("ak44-consumer-classic-from61.pcap")]);
    assert_eq!(code, Some(0));
    assert_eq!(check_cut(&cut, &full, 61), Vec::<J>::new());
    let first = cut
        .iter()
        .find(|m| m["correlation_id"] == 12)
        .expect("the answer to corr 12");
    assert_eq!(
        (frame(first), &first["api_name"], &first["api_version"]),
        (12, &J::from("Fetch"), &J::from(18))
    );
    let o = run(&[&sample("ak44-consumer-classic-from61.pcap")]);
    let text = stdout(&o);
    assert!(
        text.contains(
            "[1] Fetch v18 Response corr=12 topics=[] [API assumed: request not captured]"
        ),
        "{text}"
    );
    assert!(
        !text.contains("mid-stream") && stderr(&o).is_empty(),
        "{text}"
    );
    let h = health(&[&sample("ak44-consumer-classic-from61.pcap")]);
    assert_eq!(
        (
            &h["unmatched_responses"],
            &h["resyncs"],
            &h["midstream_pickups"]
        ),
        (&J::from(1), &J::from(0), &J::from(2))
    );
}

/// The connections a capture picked up mid-stream are counted, whether or not bytes had to
/// be skipped: in the cluster captures every connection with data but those begun by a SYN
/// in the capture (56 of 58, 57 of 73, 57 of 70 and 56 of 62, counted with tshark). Counted
/// by resynchronisations only, the row read 0 on all four.
#[test]
fn connections_picked_up_mid_stream_are_counted() {
    for (name, picked_up) in [
        ("cluster-steady.pcap", 56),
        ("cluster-restart.pcap", 57),
        ("cluster-kill.pcap", 57),
        ("cluster-admin.pcap", 56),
        ("ak44-consumer-classic.pcap", 0),
    ] {
        let h = health(&[&sample(name)]);
        assert_eq!(h["midstream_pickups"], picked_up, "{name}");
    }
}

/// Item: with both Fetch requests before the capture the connection has used nothing yet:
/// both answers are decoded by trying every API, and found to be Fetch v18.
#[test]
fn answers_on_a_connection_with_no_request_captured_are_guessed() {
    let (full, _) = messages(&[&sample("ak44-consumer-classic.pcap")]);
    let (cut, code) = messages(&[&sample("ak44-consumer-classic-from70.pcap")]);
    assert_eq!(code, Some(0));
    assert_eq!(check_cut(&cut, &full, 70), Vec::<J>::new());
    let fetches: Vec<_> = cut.iter().filter(|m| m["api_name"] == "Fetch").collect();
    assert_eq!(fetches.len(), 2);
    assert!(fetches.iter().all(|m| m["assumed"] == true));
    let h = health(&[&sample("ak44-consumer-classic-from70.pcap")]);
    assert_eq!(h["unmatched_responses"], 2);
}

/// Item: a capture that starts inside the 10267-byte Fetch response of frames 43-58 skips the
/// rest of it (damage: exit 1), then shows every later message as the full capture does.
#[test]
fn a_capture_started_inside_a_frame_skips_only_that_frame() {
    let (full, _) = messages(&[&sample("ak44-consumer-classic.pcap")]);
    let (cut, code) = messages(&[&sample("ak44-consumer-classic-from50.pcap")]);
    assert_eq!(code, Some(1));
    let missing = check_cut(&cut, &full, 50);
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert_eq!(
        (frame(&missing[0]), &missing[0]["correlation_id"]),
        (58, &J::from(11))
    );
    // Both connections were picked up mid-stream; one had to skip to a frame boundary.
    let h = health(&[&sample("ak44-consumer-classic-from50.pcap")]);
    assert_eq!(
        (&h["resyncs"], &h["midstream_pickups"]),
        (&J::from(1), &J::from(2))
    );
    // The Fetch response's bytes in original frames 50-58.
    let o = run(&[&sample("ak44-consumer-classic-from50.pcap")]);
    assert!(
        stdout(&o).contains(
            "23    0.572895 127.0.0.1:9092 → 127.0.0.1:58150 [0] !! the capture starts mid-stream: skipped 3858 bytes to the next frame boundary"
        ),
        "{}",
        stdout(&o)
    );
    assert!(stderr(&o).contains("3858 bytes skipped to resynchronise"));
}

/// The full capture's message at `frame` in `direction` with correlation id `corr`.
fn find<'a>(msgs: &'a [J], frame_no: u64, direction: &str, corr: i64) -> &'a J {
    msgs.iter()
        .find(|m| {
            frame(m) == frame_no && m["direction"] == direction && m["correlation_id"] == corr
        })
        .unwrap_or_else(|| panic!("no {direction} corr {corr} in frame {frame_no}"))
}

/// Item: a capture that ends inside the 10267-byte Fetch response of frames 43-58 (cut after
/// frame 50) shows what it holds of it as a partial message, with the frame and time of the
/// last packet that carried its bytes, paired with its request; the end is told in frame
/// order and counted in `--stats`.
#[test]
fn a_response_cut_off_by_the_end_of_the_capture_is_shown_partial() {
    let (full, _) = messages(&[&sample("ak44-consumer-classic.pcap")]);
    let (cut, code) = messages(&[&sample("ak44-consumer-classic-to50.pcap")]);
    assert_eq!(code, Some(1));
    let p = find(&cut, 50, "response", 11);
    assert_eq!(
        (&p["partial"], &p["request_frame"], &p["size"]),
        (&J::from(true), &J::from(42), &J::from(7857))
    );
    let whole = find(&full, 58, "response", 11);
    // The first partition's two batches were captured whole: the same values as in the full
    // capture's decode.
    assert_eq!(
        p["body"]["Responses"][0]["Partitions"][0],
        whole["body"]["Responses"][0]["Partitions"][0]
    );
    let o = run(&[&sample("ak44-consumer-classic-to50.pcap")]);
    let text = stdout(&o);
    assert!(text.contains(
        "    50    0.639416 127.0.0.1:9092 → 127.0.0.1:58150 [1] !! the capture ended inside a frame (7857 of its 10267 bytes captured)\n    50    0.639416 127.0.0.1:9092 → 127.0.0.1:58150 [1] Fetch v18 Response corr=11 topics=[orders] partitions=3 records=7 (505 bytes) (44.92 ms after frame 42) [partial: 7857 of 10267 bytes captured, the capture ended before the rest]\n"
    ), "{text}");
    // Answered, if only in part: not listed as unanswered.
    assert!(!text.contains("unanswered"), "{text}");
    let h = health(&[&sample("ak44-consumer-classic-to50.pcap")]);
    assert_eq!(
        (&h["partial"], &h["ended_in_frame"], &h["unanswered"]),
        (&J::from(1), &J::from(1), &J::from(0))
    );
    let o = run(&["--stats", "-q", &sample("ak44-consumer-classic-to50.pcap")]);
    let row = stdout(&o)
        .lines()
        .find(|l| l.contains("frames cut off by the end of their stream"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "));
    assert_eq!(
        row.as_deref(),
        Some("│ frames cut off by the end of their stream ┆ 1 │")
    );
}

/// Item: the same for a reset: frames 1-99 and 135 of ak44-franz-produce-consume, so the
/// consumer's reset (frame 100 here) comes while the 3731-byte Fetch response of corr 1 has
/// sent 3194 bytes (frames 96-99). Both are dated by the reset, where the loss shows, as a
/// gap's are, so they print in frame order.
#[test]
fn a_response_cut_off_by_a_reset_is_shown_partial() {
    // Every byte of it was captured: what the connection did is not damage (exit 0).
    let (cut, code) = messages(&[&sample("ak44-franz-produce-consume-reset.pcap")]);
    assert_eq!(code, Some(0));
    let p = find(&cut, 100, "response", 1);
    assert_eq!(
        (&p["partial"], &p["request_frame"], &p["api_name"]),
        (&J::from(true), &J::from(93), &J::from("Fetch"))
    );
    let o = run(&[&sample("ak44-franz-produce-consume-reset.pcap")]);
    let text = stdout(&o);
    assert!(text.contains(
        "   100    1.239464 127.0.0.1:9092 → 127.0.0.1:51290 [6] !! the connection was reset inside a frame (3194 of its 3731 bytes captured)"
    ), "{text}");
    assert!(text
        .contains("[partial: 3194 of 3731 bytes captured, the connection ended before the rest]"));
    let h = health(&[&sample("ak44-franz-produce-consume-reset.pcap")]);
    assert_eq!(
        (&h["partial"], &h["ended_in_frame"]),
        (&J::from(1), &J::from(1))
    );
}

/// The frame numbers of the summary lines, messages and notices alike.
fn frame_column(text: &str) -> Vec<u64> {
    text.lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect()
}

/// Item: the requests left unanswered at the end are listed in frame order, not by stream:
/// frames 1-61 and 69 of ak44-consumer-classic leave Fetch corr 12 (frame 60) and corr 16
/// (frame 69, here 62) of stream 1 and OffsetCommit corr 13 (frame 61) of stream 2 waiting.
#[test]
fn end_of_run_notices_come_in_frame_order() {
    let o = run(&[&sample("ak44-consumer-classic-inflight.pcap")]);
    let text = stdout(&o);
    let tail: Vec<(u64, &str)> = text
        .lines()
        .filter(|l| l.contains("!! unanswered"))
        .map(|l| {
            let f = l.split_whitespace().next().and_then(|f| f.parse().ok());
            let s = l.split_whitespace().nth(5).unwrap_or("");
            (f.unwrap_or(0), s)
        })
        .collect();
    assert_eq!(tail, vec![(60, "[1]"), (61, "[2]"), (62, "[1]")], "{text}");
    let before: String = text
        .lines()
        .filter(|l| !l.contains("!! unanswered"))
        .map(|l| format!("{l}\n"))
        .collect();
    let frames = frame_column(&before);
    assert!(frames.windows(2).all(|w| w[0] <= w[1]), "{text}");
}

/// Item: in a capture merged from two taps, reassembly hands on 50 moved segments late (an
/// answer before the end of its question, a segment after a later one): their messages are
/// printed in frame order, each still paired as in the original capture.
#[test]
fn lines_held_back_for_reordering_print_in_frame_order() {
    let merged = sample("kgen-all-versions-merged-skew.pcap");
    let o = run(&[&merged]);
    let text = stdout(&o);
    let frames = frame_column(&text);
    // Every line is in frame order, the unanswered request at the end (frame 219) too.
    assert!(frames.windows(2).all(|w| w[0] <= w[1]), "{text}");
    assert_eq!(frames.last(), Some(&219));
    // The same messages, in the same pairs, as the JSON view (which is in frame order too).
    let (msgs, _) = messages(&[&merged]);
    let json_frames: Vec<u64> = msgs.iter().map(frame).collect();
    assert!(json_frames.windows(2).all(|w| w[0] <= w[1]));
    let summary_messages = text
        .lines()
        .filter(|l| !l.contains("!! unanswered"))
        .filter(|l| l.contains(" Request corr=") || l.contains(" Response corr="))
        .count();
    assert_eq!(summary_messages, msgs.len());
    // corr 1000: its CreateTopics request's last segment (original frame 170) moved after the
    // answer (frame 173): the answer prints first, and still names its request.
    let answer = msgs
        .iter()
        .find(|m| m["correlation_id"] == 1000 && m["direction"] == "response")
        .expect("the answer to corr 1000");
    let request = msgs
        .iter()
        .find(|m| m["correlation_id"] == 1000 && m["direction"] == "request")
        .expect("corr 1000");
    assert_eq!(answer["request_frame"], request["frame"]);
    assert!(frame(answer) < frame(request));
}

/// The `--stats` JSON connections of a run.
fn connections(args: &[&str]) -> Vec<J> {
    let mut a = vec!["--stats", "--json", "-q"];
    a.extend_from_slice(args);
    let o = run(&a);
    let v: J = serde_json::from_str(stdout(&o).trim()).expect("one JSON object");
    v["stats"]["connections"]
        .as_array()
        .expect("connections")
        .clone()
}

/// Item: several files keep their connections apart: two files whose streams share numbers
/// (stream 0 in both) give a row each, with the counts each file alone gives, and the row
/// names its file; one file alone has no `file`.
#[test]
fn several_files_keep_their_connections_apart_in_the_statistics() {
    let (a, b) = (
        sample("kafka-python-admin.pcap"),
        sample("kafkajs-admin.pcap"),
    );
    let alone_a = connections(&[&a]);
    let alone_b = connections(&[&b]);
    assert!(alone_a.iter().all(|c| c.get("file").is_none()));
    let both = connections(&[&a, &b]);
    assert_eq!(both.len(), alone_a.len() + alone_b.len());
    for (file, alone) in [(&a, &alone_a), (&b, &alone_b)] {
        let rows: Vec<J> = both
            .iter()
            .filter(|c| c["file"] == file.as_str())
            .map(|c| {
                let mut c = c.clone();
                c.as_object_mut().map(|o| o.remove("file"));
                c
            })
            .collect();
        assert_eq!(&rows, alone, "{file}");
    }
    // The same file twice: two rows per stream, not one with twice the counts.
    let twice = connections(&[&a, &a]);
    assert_eq!(twice.len(), 2 * alone_a.len());
    assert!(twice.iter().all(|c| alone_a
        .iter()
        .any(|x| x["stream"] == c["stream"] && x["messages"] == c["messages"])));
    let o = run(&["--stats", "-q", &a, &b]);
    let text = stdout(&o);
    assert!(text.contains("│ file "), "{text}");
}

/// Item: a request in flight at the end of one file is not the request of an answer at the
/// start of the next, though stream and correlation id are the same: the first file ends with
/// Fetch corr 12 unanswered on stream 1, the second starts with its answer on its stream 1
/// (both are cut from one capture). Every JSON message names its file; frame numbers are each
/// file's own.
#[test]
fn several_files_do_not_pair_across_files() {
    let (a, b) = (
        sample("ak44-consumer-classic-inflight.pcap"),
        sample("ak44-consumer-classic-from61.pcap"),
    );
    let (both, _) = messages(&[&a, &b]);
    let (alone_a, _) = messages(&[&a]);
    let (alone_b, _) = messages(&[&b]);
    assert_eq!(both.len(), alone_a.len() + alone_b.len());
    for (m, alone) in both.iter().zip(alone_a.iter().chain(&alone_b)) {
        let mut m = m.clone();
        let file = m.as_object_mut().and_then(|o| o.remove("file"));
        assert!(file == Some(J::from(a.as_str())) || file == Some(J::from(b.as_str())));
        assert_eq!(&m, alone);
    }
    let answer = both
        .iter()
        .find(|m| m["correlation_id"] == 12 && m["direction"] == "response")
        .expect("the answer to corr 12");
    assert_eq!(
        (&answer["file"], &answer["assumed"]),
        (&J::from(b.as_str()), &J::from(true))
    );
    assert!(answer.get("request_frame").is_none());
    // The exchange filter holds requests per file too: the request is let go at the end of
    // its file, unanswered, and the answer stands alone.
    let (picked, _) = messages(&["-Y", "corr == 12", &a, &b]);
    let files: Vec<(&J, &J)> = picked
        .iter()
        .map(|m| (&m["file"], &m["direction"]))
        .collect();
    assert_eq!(
        files,
        vec![
            (&J::from(a.as_str()), &J::from("request")),
            (&J::from(b.as_str()), &J::from("response"))
        ]
    );
    // Notices on stderr (with --json) name their file.
    let o = run(&["--json", &a, &b]);
    assert!(
        stderr(&o).contains(&format!("kdissect: {a}: "))
            && stderr(&o).contains("unanswered: Fetch v18 Request corr=12"),
        "{}",
        stderr(&o)
    );
}

/// A file in a directory of this test run's own.
fn scratch(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("kdissect-connections-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    dir.join(name).to_string_lossy().into_owned()
}

/// What a message is, wherever it is: direction, API, version, correlation id, and for a
/// response whether its request was found.
fn identity(m: &J) -> (String, i64, i64, i64, bool) {
    (
        m["direction"].as_str().unwrap_or("").to_string(),
        m["api_key"].as_i64().unwrap_or(-1),
        m["api_version"].as_i64().unwrap_or(-1),
        m["correlation_id"].as_i64().unwrap_or(0),
        m.get("request_frame").is_some(),
    )
}

/// Cuts `input` with `args -w`, and reads the cut back: the messages shown when cutting, the
/// cut's messages, the exit status reading it, and what it printed.
fn cut_and_read(input: &str, args: &[&str], name: &str) -> (Vec<J>, Vec<J>, Option<i32>, String) {
    let out = scratch(name);
    let mut a = args.to_vec();
    a.extend(["-w", &out, input]);
    let (shown, _) = messages(&a);
    let (back, code) = messages(&[&out]);
    let text = stdout(&run(&[&out]));
    (shown, back, code, text)
}

/// Item: a `-w` cut reads back clean: the exchanges shown, each request paired with its
/// answer, in frame order, no gap reported, exit 0. The cut notes in packet comments where it
/// left packets out, which tshark shows too.
#[test]
fn a_cut_reads_back_whole() {
    let input = sample("ak44-admin.pcap");
    let (shown, back, code, text) = cut_and_read(&input, &["--api", "metadata"], "admin.pcapng");
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains("!!"), "{text}");
    let ids = |v: &[J]| v.iter().map(identity).collect::<Vec<_>>();
    assert_eq!(ids(&back), ids(&shown));
    assert_eq!(shown.len(), 12);
    let frames: Vec<u64> = back.iter().map(frame).collect();
    assert!(frames.windows(2).all(|w| w[0] < w[1]), "{frames:?}");
    // Without the notes (classic pcap has no comments), the same cut reports a gap at every
    // place packets were left out.
    let (_, _, code, text) = cut_and_read(&input, &["--api", "metadata", "-F", "pcap"], "a.pcap");
    assert_eq!(code, Some(1));
    assert!(text.contains("a Kafka frame was lost in a gap"), "{text}");
    if let Ok(t) = Command::new("tshark")
        .args([
            "-r",
            &scratch("admin.pcapng"),
            "-T",
            "fields",
            "-e",
            "frame.comment",
        ])
        .output()
    {
        let comments = String::from_utf8_lossy(&t.stdout);
        assert!(
            comments.contains("kdissect -w: left out 127.0.0.1:9092 > 127.0.0.1:53884 seq "),
            "{comments}"
        );
    }
}

/// Item: cuts of captures that reordered segments (two taps merged) and that started
/// mid-stream read back whole too; a loss the capture itself had inside a kept message is
/// still reported, as in the capture.
#[test]
fn cuts_of_reordered_and_damaged_captures_read_back_as_they_were() {
    let merged = sample("kgen-all-versions-merged-skew.pcap");
    let (shown, back, code, text) = cut_and_read(&merged, &["-Y", "corr < 5"], "merged.pcapng");
    assert_eq!(code, Some(0), "{text}");
    let sorted = |v: &[J]| {
        let mut ids: Vec<_> = v.iter().map(identity).collect();
        ids.sort();
        ids
    };
    assert_eq!(sorted(&back), sorted(&shown));
    // Every metadata exchange (with the answers captured before the end of their questions)
    // comes back paired; a packet a kept message shares, or one between the reordered
    // packets of one, brings its other messages along.
    let (shown, back, _, _) = cut_and_read(&merged, &["--api", "metadata"], "merged-md.pcapng");
    let back_ids = sorted(&back);
    assert!(shown.iter().all(|m| back_ids.contains(&identity(m))));
    let picked = sample("ak44-consumer-classic-from61.pcap");
    let (shown, back, code, _) = cut_and_read(&picked, &["--api", "fetch"], "from61.pcapng");
    assert_eq!((code, sorted(&back)), (Some(0), sorted(&shown)));
    let lost = sample("kgen-lost-segment.pcap");
    let (shown, back, code, text) = cut_and_read(&lost, &["-Y", "corr == 1004"], "lost.pcapng");
    assert_eq!(code, Some(1));
    assert_eq!(sorted(&back), sorted(&shown));
    assert_eq!(
        text.matches("a Kafka frame was lost in a gap").count(),
        1,
        "{text}"
    );
    assert!(back.iter().any(|m| m["partial"] == true));
}

/// Item: the first answer on a connection that has sent nothing yet waits for the client's
/// next request (a long-poll client sends it at once) and is decoded with its version: the
/// Fetch response of corr 10 fits v16 to v18 alike, and the connection speaks v16.
#[test]
fn a_first_answer_is_decoded_with_the_version_the_connection_then_uses() {
    let (full, _) = messages(&[&sample("confluent-produce-consume-gzip.pcap")]);
    let (cut, code) = messages(&[&sample("confluent-produce-consume-gzip-from94.pcap")]);
    assert_eq!(code, Some(0));
    assert_eq!(check_cut(&cut, &full, 94), Vec::<J>::new());
    let first = &cut[0];
    assert_eq!(
        (
            frame(first),
            &first["correlation_id"],
            &first["api_version"],
            &first["assumed"]
        ),
        (1, &J::from(10), &J::from(16), &J::from(true))
    );
    // It prints before the request that told its version (frame order).
    assert_eq!(frame(&cut[1]), 2);
}

/// A cut that keeps a response a reset cut off keeps the reset too: read back, the frame is
/// cut off by the connection's end, as in the capture (not damage, exit 0), not by the end of
/// the cut. In cluster-restart the controller's Fetch answer on broker 2's KRaft connection
/// (stream 8) has sent 73 of 182 bytes when broker 2 resets it (frame 3623).
#[test]
fn a_cut_keeps_the_reset_that_cut_a_kept_response_off() {
    for (input, args, name) in [
        (
            "ak44-franz-produce-consume-reset.pcap",
            ["--stream", "6"],
            "reset.pcapng",
        ),
        (
            "cluster-restart.pcap",
            ["--stream", "8"],
            "restart-8.pcapng",
        ),
    ] {
        let (shown, back, code, text) = cut_and_read(&sample(input), &args, name);
        assert_eq!(code, Some(0), "{input}: {text}");
        assert!(
            text.contains("!! the connection was reset inside a frame"),
            "{input}: {text}"
        );
        assert_eq!(
            back.iter().map(identity).collect::<Vec<_>>(),
            shown.iter().map(identity).collect::<Vec<_>>()
        );
        let partial = |v: &[J]| v.iter().filter(|m| m["partial"] == true).count();
        assert_eq!((partial(&shown), partial(&back)), (1, 1), "{input}");
    }
}

/// A cut of every message of a running cluster's capture reads back as the capture: the same
/// messages in the same order. Clients close their connections to a broker that shuts down
/// (cluster-restart): the broker's last answer acknowledges the client's FIN, which the cut
/// keeps, else the answer looks captured before the end of its question and prints late.
#[test]
fn a_whole_cut_of_a_cluster_capture_reads_back_in_the_same_order() {
    let who = |m: &J| {
        (
            identity(m),
            m["src"].as_str().unwrap_or("").to_string(),
            m["partial"] == true,
        )
    };
    for name in ["cluster-restart.pcap", "cluster-kill.pcap"] {
        let (shown, back, code, text) = cut_and_read(&sample(name), &[], &format!("{name}ng"));
        assert_eq!(code, Some(0), "{name}: {text}");
        let (a, b): (Vec<_>, Vec<_>) = (
            shown.iter().map(who).collect(),
            back.iter().map(who).collect(),
        );
        let first = a.iter().zip(&b).position(|(x, y)| x != y);
        assert_eq!(
            first,
            None,
            "{name}: {:?} read back as {:?}",
            first.map(|i| &a[i]),
            first.map(|i| &b[i])
        );
        assert_eq!(a.len(), b.len(), "{name}");
    }
}
