//! Picking out messages: the `frame`, `time` and `time_relative` fields, `--since` and
//! `--until`, `--messages` (filters that select single messages), and `-c` counting
//! exchanges under an exchange filter. Every expectation is computed from kdissect's own
//! `--json` and summary lines of a real capture, not written down.

use std::process::Command;

fn sample(name: &str) -> String {
    format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn kdissect(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .env("TZ", "UTC")
        .output()
        .expect("run");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// One message as `--json` and the summary line give it.
#[derive(Debug, Clone)]
struct Msg {
    frame: u64,
    request_frame: Option<u64>,
    response: bool,
    corr: i64,
    /// Nanoseconds since 1970.
    time: i64,
    /// Seconds since the first packet, as the summary line prints them (microseconds).
    relative: f64,
}

fn messages(file: &str) -> Vec<Msg> {
    let (_, json, _) = kdissect(&["--json", file]);
    let (_, lines, _) = kdissect(&[file]);
    let rel: Vec<(u64, f64)> = lines
        .lines()
        .map(|l| {
            let mut w = l.split_whitespace();
            let frame = w.next().and_then(|f| f.parse().ok()).expect("frame");
            let t = w.next().and_then(|t| t.parse().ok()).expect("time");
            (frame, t)
        })
        .collect();
    let msgs: Vec<Msg> = json
        .lines()
        .zip(rel)
        .map(|(l, (frame, relative))| {
            let v: serde_json::Value = serde_json::from_str(l).expect("json");
            let time = chrono::DateTime::parse_from_rfc3339(v["time"].as_str().expect("time"))
                .expect("rfc3339")
                .timestamp_nanos_opt()
                .expect("nanos");
            let m = Msg {
                frame: v["frame"].as_u64().expect("frame"),
                request_frame: v["request_frame"].as_u64(),
                response: v["direction"] == "response",
                corr: v["correlation_id"].as_i64().expect("corr"),
                time,
                relative,
            };
            assert_eq!(m.frame, frame, "summary and JSON list the same messages");
            m
        })
        .collect();
    assert!(msgs.len() > 20, "{file}: {} messages", msgs.len());
    msgs
}

/// The frame numbers of the summary lines printed.
fn frames(out: &str) -> Vec<u64> {
    out.lines()
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect()
}

fn shown(args: &[&str]) -> Vec<u64> {
    let (code, out, err) = kdissect(args);
    assert_eq!(code, Some(0), "{args:?}: {err}");
    frames(&out)
}

#[test]
fn frame_picks_its_exchange_and_with_messages_only_itself() {
    let f = sample("ak44-admin.pcap");
    let all = messages(&f);
    let answered: Vec<&Msg> = all.iter().filter(|m| m.request_frame.is_some()).collect();
    assert!(answered.len() >= 10);
    for m in answered.iter().step_by(3) {
        let q = m.request_frame.expect("request frame");
        let expr = format!("frame == {}", m.frame);
        assert_eq!(shown(&["-Y", &expr, &f]), [q, m.frame], "{expr}");
        assert_eq!(shown(&["-Y", &expr, "--messages", &f]), [m.frame], "{expr}");
        // The request's frame picks the same exchange.
        let expr = format!("frame == {q}");
        assert_eq!(shown(&["-Y", &expr, &f]), [q, m.frame], "{expr}");
        assert_eq!(shown(&["-Y", &expr, "--messages", &f]), [q], "{expr}");
    }
}

#[test]
fn time_fields_and_the_window_select_what_the_times_say() {
    let f = sample("ak44-admin.pcap");
    let all = messages(&f);
    let mid = &all[all.len() / 2];
    let late = &all[all.len() * 3 / 4];
    let rfc = |ns: i64| {
        chrono::DateTime::from_timestamp_nanos(ns)
            .to_rfc3339_opts(chrono::SecondsFormat::Nanos, true)
    };
    let epoch = |ns: i64| format!("@{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000);
    let want = |p: &dyn Fn(&Msg) -> bool| -> Vec<u64> {
        all.iter().filter(|m| p(m)).map(|m| m.frame).collect()
    };
    let from_mid = want(&|m| m.time >= mid.time);
    let mid_to_late = want(&|m| m.time >= mid.time && m.time < late.time);
    assert!(!mid_to_late.is_empty() && mid_to_late.len() < from_mid.len());
    // The `time` field, per message, in three spellings of the same instant.
    let y = format!("time >= \"{}\"", rfc(mid.time));
    assert_eq!(shown(&["--messages", "-Y", &y, &f]), from_mid, "{y}");
    let y = format!("time >= {} && time < {}", epoch(mid.time), rfc(late.time));
    assert_eq!(shown(&["--messages", "-Y", &y, &f]), mid_to_late, "{y}");
    let secs = format!(
        "{}.{:09}",
        mid.time / 1_000_000_000,
        mid.time % 1_000_000_000
    );
    let y = format!("time >= {secs}");
    assert_eq!(shown(&["--messages", "-Y", &y, &f]), from_mid, "{y}");
    // --since (inclusive) and --until (exclusive): the same window, on every message.
    assert_eq!(shown(&["--since", &rfc(mid.time), &f]), from_mid);
    assert_eq!(
        shown(&["--since", &epoch(mid.time), "--until", &rfc(late.time), &f]),
        mid_to_late
    );
    // Relative to the first packet, as the time column counts: seconds or a duration.
    let cut = (mid.relative * 1000.0).ceil() / 1000.0;
    let after = want(&|m| m.relative >= cut);
    assert!(!after.is_empty() && after.len() < all.len());
    assert_eq!(shown(&["--since", &format!("{cut}"), &f]), after);
    let ms = format!("{}ms", (cut * 1000.0).round());
    assert_eq!(shown(&["--since", &format!("+{ms}"), &f]), after);
    let before = want(&|m| m.relative < cut);
    assert_eq!(shown(&["--until", &ms, &f]), before);
    let y = format!("time_relative >= {cut}");
    assert_eq!(shown(&["--messages", "-Y", &y, &f]), after, "{y}");
}

#[test]
fn messages_shows_one_tree_where_exchanges_show_two() {
    let f = sample("ak44-admin.pcap");
    let all = messages(&f);
    let resp = all
        .iter()
        .find(|m| m.response && m.corr == 8)
        .expect("corr 8");
    let y = "response && corr == 8";
    let (_, both, _) = kdissect(&["-V", "-Y", y, &f]);
    let (_, one, _) = kdissect(&["-V", "-Y", y, "--messages", &f]);
    let heads = |out: &str| -> Vec<u64> {
        out.lines()
            .filter(|l| l.contains(" → "))
            .filter_map(|l| l.split_whitespace().next()?.parse().ok())
            .collect()
    };
    assert_eq!(
        heads(&both),
        [resp.request_frame.expect("request"), resp.frame]
    );
    assert_eq!(heads(&one), [resp.frame]);
    assert!(
        one.contains("Response") && !one.contains(" Request corr=8"),
        "{one}"
    );
    // The flags select messages too: --errors keeps only the responses that carry one.
    let errors = shown(&["--errors", "--messages", &f]);
    let (_, errs, _) = kdissect(&["--errors", &f]);
    assert!(!errors.is_empty() && errors.len() < frames(&errs).len());
    for n in errors {
        assert!(all.iter().any(|m| m.frame == n && m.response), "frame {n}");
    }
}

#[test]
fn count_counts_exchanges_under_an_exchange_filter() {
    let f = sample("ak44-admin.pcap");
    let all = messages(&f);
    let meta: Vec<&Msg> = all
        .iter()
        .filter(|m| m.response && m.request_frame.is_some())
        .collect();
    let first_two: Vec<u64> = meta
        .iter()
        .take(2)
        .flat_map(|m| [m.request_frame.expect("q"), m.frame])
        .collect();
    assert_eq!(shown(&["-c", "2", "-Y", "response", &f]), first_two);
    // Without a filter, and with --messages, -c counts messages.
    let first: Vec<u64> = all.iter().take(3).map(|m| m.frame).collect();
    assert_eq!(shown(&["-c", "3", &f]), first);
    let responses: Vec<u64> = all
        .iter()
        .filter(|m| m.response)
        .take(3)
        .map(|m| m.frame)
        .collect();
    assert_eq!(
        shown(&["-c", "3", "--messages", "-Y", "response", &f]),
        responses
    );
}

#[test]
fn a_time_that_is_not_one_is_refused_before_reading() {
    let f = sample("ak44-admin.pcap");
    let (code, _, err) = kdissect(&["-Y", "time > noon", &f]);
    assert_eq!(code, Some(2));
    assert!(err.contains("`time` is a time: `noon` is not one"), "{err}");
    let (code, _, err) = kdissect(&["--since", "noon", &f]);
    assert_eq!(code, Some(2));
    assert!(err.contains("\"noon\" is not a time"), "{err}");
    let (code, _, err) = kdissect(&["-Y", "time_relative > 5x", &f]);
    assert_eq!(code, Some(2));
    assert!(err.contains("neither seconds"), "{err}");
}

#[test]
fn request_and_response_frames_pair_up_as_json_says() {
    let f = sample("ak44-admin.pcap");
    let all = messages(&f);
    let (code, out, err) = kdissect(&[
        "--json",
        "--fields",
        "frame,request_frame,response_frame",
        &f,
    ]);
    assert_eq!(code, Some(0), "{err}");
    let mut pairs = 0;
    for l in out.lines() {
        let v: serde_json::Value = serde_json::from_str(l).expect("json");
        let frame = v["frame"].as_u64().expect("frame");
        let fields = &v["fields"];
        let m = all.iter().find(|m| m.frame == frame).expect("message");
        assert_eq!(
            fields["request_frame"].get(0).and_then(|x| x.as_u64()),
            m.request_frame
        );
        // A request's response is the response whose request it is.
        let answer = all.iter().find(|r| r.request_frame == Some(frame));
        assert_eq!(
            fields["response_frame"].get(0).and_then(|x| x.as_u64()),
            answer.map(|r| r.frame),
            "{l}"
        );
        pairs += usize::from(answer.is_some());
    }
    assert!(pairs >= 10, "{pairs}");
}
