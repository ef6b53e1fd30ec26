//! The hostile-input suite at small scale: every generator of `scripts/hostile/generate.py`
//! (one per finding of the hostile-input run, plus one capture that hits every limit at once),
//! run through the binary in every view. What is asserted is behaviour, never time or memory
//! (peak memory is measured on demand by `scripts/bench-memory.sh`, at full scale):
//!
//! - every run ends with exit status 0 or 1: no panic (101), no signal, no usage error;
//! - the output is there, and JSON output is one valid object per line;
//! - what each finding says must hold once it is fixed (frames after a bogus size prefix are
//!   shown, counts in summaries are exact, and so on). Those that today's code does not meet
//!   yet are `#[ignore = "until item N ..."]`: un-ignore them with the fix.
//!
//! Needs `python3` on the PATH (the generators are Python, standard library only). A watchdog
//! kills a run that has not finished after WATCHDOG: that is a guard against hangs, not a
//! timing assertion.

use serde_json::Value;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const WATCHDOG: Duration = Duration::from_secs(300);

/// The limits that the small `everything` capture is scaled to (scripts/hostile/generate.py,
/// EVERYTHING["small"]): each is hit, as the defaults are at full scale.
const EVERYTHING_SMALL_LIMITS: &[&str] = &[
    "--max-frame",
    "256K",
    "--max-decompressed",
    "64K",
    "--max-elements",
    "100",
    "--max-buffered",
    "16K",
    "--max-pending",
    "300",
    "--max-connections",
    "500",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs a generator at small scale (once per test binary and name) and returns its file.
fn generate(name: &str) -> PathBuf {
    let ext = if name.starts_with("hex-") {
        "hex"
    } else if name.starts_with("zstd-") {
        "pcap.zst"
    } else {
        "pcap"
    };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hostile-small");
    std::fs::create_dir_all(&dir).expect("create the scratch directory");
    let out = dir.join(format!("{name}.{ext}"));
    let gen = root().join("scripts/hostile/generate.py");
    // Remade when the generator changed; written under a unique name, then renamed, so that
    // tests running at once never read a half-written file.
    let fresh = match (std::fs::metadata(&out), std::fs::metadata(&gen)) {
        (Ok(o), Ok(g)) => match (o.modified(), g.modified()) {
            (Ok(a), Ok(b)) => a >= b,
            _ => false,
        },
        _ => false,
    };
    if fresh {
        return out;
    }
    let tmp = dir.join(format!(
        "{name}.{ext}.{}.{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let st = Command::new("python3")
        .arg(&gen)
        .arg(name)
        .arg(&tmp)
        .args(["--scale", "small"])
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "python3 {}: {e} (the hostile-input suite needs Python 3)",
                gen.display()
            )
        });
    assert!(st.success(), "generate.py {name} failed: {st}");
    std::fs::rename(&tmp, &out).expect("rename the generated input");
    out
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// Exit status 0 or 1 (clean, or damage reported), no panic message.
    fn assert_sane(&self, what: &str) {
        assert!(
            matches!(self.code, Some(0) | Some(1)),
            "{what}: exit status {:?} (0 or 1 expected; 101 is a panic, None a signal)\nstderr:\n{}",
            self.code,
            tail(&self.stderr)
        );
        assert!(
            !self.stderr.contains("panicked"),
            "{what}: panic\n{}",
            tail(&self.stderr)
        );
    }

    fn lines_with(&self, needle: &str) -> usize {
        self.stdout.lines().filter(|l| l.contains(needle)).count()
    }
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

fn spawn(args: &[&str], input: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .arg(input)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kdissect")
}

/// Runs kdissect on `input` with `args`; a run still going after WATCHDOG is killed and fails.
fn kd(args: &[&str], input: &Path) -> Run {
    let mut child = spawn(args, input);
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let o = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let e = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > WATCHDOG {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "kdissect {args:?} {} did not finish within {WATCHDOG:?}: a hang",
                input.display()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = String::from_utf8_lossy(&o.join().expect("stdout reader")).into_owned();
    let stderr = String::from_utf8_lossy(&e.join().expect("stderr reader")).into_owned();
    Run {
        code: status.code(),
        stdout,
        stderr,
    }
}

/// The views of a capture: summary, tree, byte layout, JSON, statistics.
const VIEWS: &[&[&str]] = &[
    &["--no-progress"],
    &["--no-progress", "-V"],
    &["--no-progress", "-x"],
    &["--no-progress", "--json"],
    &["--no-progress", "--stats", "-q"],
];

fn json_lines(r: &Run) -> Vec<Value> {
    r.stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("not JSON ({e}): {}", &l[..l.len().min(300)]))
        })
        .collect()
}

/// Every view of the generated input, with `extra` options: sane, with output, JSON valid.
/// Returns the runs in VIEWS order.
fn all_views(name: &str, extra: &[&str]) -> Vec<Run> {
    let input = generate(name);
    VIEWS
        .iter()
        .map(|v| {
            let mut args: Vec<&str> = v.to_vec();
            args.extend_from_slice(extra);
            let r = kd(&args, &input);
            r.assert_sane(&format!("{name} {args:?}"));
            assert!(
                !r.stdout.is_empty() || !r.stderr.is_empty(),
                "{name} {args:?}: no output at all"
            );
            if args.contains(&"--json") && !args.contains(&"--stats") {
                let objs = json_lines(&r);
                assert!(!objs.is_empty(), "{name} {args:?}: no JSON object");
            }
            r
        })
        .collect()
}

fn summary(name: &str, extra: &[&str]) -> Run {
    let mut args = vec!["--no-progress"];
    args.extend_from_slice(extra);
    let r = kd(&args, &generate(name));
    r.assert_sane(&format!("{name} {args:?}"));
    r
}

// ---------------------------------------------------------------------------------------------
// Item 17 (issue 17): a zstd frame declaring a 2 GiB window.

/// Refused in every view as the input is opened: no packet is read, so the decoder never
/// allocates its window (before, an 80 KB file of this kind grew to 2 GiB and then panicked in
/// the decoder's ring buffer). With the flag raised, the small input decodes.
#[test]
fn a_zstd_window_over_the_limit_is_refused_in_every_view() {
    let input = generate("zstd-window");
    for v in VIEWS {
        let r = kd(v, &input);
        assert_eq!(r.code, Some(2), "{v:?}: {}", tail(&r.stderr));
        assert!(
            r.stderr.contains(
                "zstd frame 1 needs a window of 2 GiB, more than --max-zstd-window (128 MiB): \
                 give --max-zstd-window 2G"
            ),
            "{v:?}: {}",
            tail(&r.stderr)
        );
        assert!(!r.stderr.contains("packets before it were read"), "{v:?}");
        assert!(!r.stdout.contains("Metadata"), "{v:?}");
    }
    let r = kd(&["--no-progress", "--max-zstd-window", "2G"], &input);
    r.assert_sane("zstd-window --max-zstd-window 2G");
    assert_eq!(r.lines_with("Metadata v12"), 2, "{}", r.stdout);
}

// ---------------------------------------------------------------------------------------------
// Item 1: nested wrappers, zero-size legacy messages.

#[test]
fn nested_bomb_every_view_finishes() {
    let runs = all_views("nested-bomb", &[]);
    assert_eq!(
        runs[0].lines_with("Produce v2 Request corr=1"),
        1,
        "{}",
        tail(&runs[0].stdout)
    );
    assert_eq!(runs[0].lines_with("Produce v2 Response corr=1"), 1);
    // Zero-size messages are damage: reported, so exit status 1.
    assert_eq!(runs[0].code, Some(1));
    // -x squeezes the rows of zeros of the decompressed buffers into `*` lines: a few KB, not
    // the 4.5 MB that 1 MiB of zeros lays out to row by row.
    let x = &runs[2];
    assert!(x.stdout.contains("\n*\n"), "{}", tail(&x.stdout));
    assert!(
        x.stdout.len() < 64 * 1024,
        "-x wrote {} bytes",
        x.stdout.len()
    );
}

#[test]
fn nested_bomb_under_a_small_decompression_cap() {
    // 1 MiB of zeros inside, a 64 KiB cap: the cut is reported, the response still paired.
    let r = summary("nested-bomb", &["--max-decompressed", "64K"]);
    assert_eq!(r.code, Some(1));
    assert_eq!(
        r.lines_with("Produce v2 Response corr=1"),
        1,
        "{}",
        r.stdout
    );
    let r = kd(
        &["--json", "--max-decompressed", "64K"],
        &generate("nested-bomb"),
    );
    r.assert_sane("nested-bomb --json --max-decompressed 64K");
    assert_eq!(json_lines(&r).len(), 2);
}

#[test]
fn zero_message_set_every_view_finishes() {
    let runs = all_views("zero-message-set", &[]);
    assert_eq!(runs[0].lines_with("Produce v2 Request corr=1"), 1);
    assert_eq!(runs[0].code, Some(1));
    let objs = json_lines(&runs[3]);
    assert_eq!(objs.len(), 2, "request and response");
}

// Item 2: --max-decompressed per batch.

#[test]
fn batch_bombs_every_view_finishes() {
    let runs = all_views("batch-bombs", &[]);
    assert_eq!(runs[0].lines_with("Produce v8 Request corr=1"), 1);
    assert_eq!(runs[0].lines_with("Produce v8 Response corr=1"), 1);
    // 16 batches of 1 MiB each pass the 4 MiB the message may decompress to in every view,
    // the summary and the statistics included (they inflate to check, within the same
    // budget), so every view exits 1.
    let r = summary("batch-bombs", &["--max-decompressed", "4M"]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    for v in VIEWS {
        let mut args = v.to_vec();
        args.extend(["--max-decompressed", "4M"]);
        let r = kd(&args, &generate("batch-bombs"));
        assert_eq!(r.code, Some(1), "{args:?}: {}", tail(&r.stdout));
    }
}

#[test]
fn batch_bombs_past_the_decompression_cap_are_reported() {
    // Each batch inflates to 1 MiB; with a 256 KiB cap every one is cut, and that is reported.
    let r = kd(
        &["--no-progress", "-V", "--max-decompressed", "256K"],
        &generate("batch-bombs"),
    );
    r.assert_sane("batch-bombs -V --max-decompressed 256K");
    assert_eq!(
        r.code,
        Some(1),
        "a cut by --max-decompressed is damage reported"
    );
    assert!(r.stdout.contains("max-decompressed"), "{}", tail(&r.stdout));
}

// Item 3: the tree of nested arrays.

#[test]
fn nested_arrays_decode_cleanly_in_every_view() {
    let runs = all_views("nested-arrays", &[]);
    for (r, v) in runs.iter().zip(VIEWS) {
        assert_eq!(
            r.code,
            Some(0),
            "a valid CreateTopics v5 request, {v:?}: {}",
            tail(&r.stderr)
        );
    }
    // (the "unanswered" notice at the end names the request too)
    assert_eq!(
        runs[0].lines_with("CreateTopics v5 Request corr=1 client_id"),
        1
    );
    let objs = json_lines(&runs[3]);
    assert_eq!(objs.len(), 1);
    assert_eq!(objs[0]["api_key"], 19);
}

#[test]
fn nested_arrays_past_max_elements_are_summarised() {
    // 20 topics of 2000 configs, 100 kept per array: still a clean decode.
    let runs = all_views("nested-arrays", &["--max-elements", "100"]);
    for r in &runs {
        assert_eq!(r.code, Some(0), "{}", tail(&r.stderr));
    }
    assert!(runs[1].stdout.contains("omitted"), "no omitted node in -V");
}

// Item 4: --hex reads all of its input before parsing.

#[test]
fn hex_stream_of_zeros_finishes() {
    let input = generate("hex-stream");
    for v in [&["--hex"][..], &["--hex", "--json"], &["--hex", "-V"]] {
        let r = kd(v, &input);
        r.assert_sane(&format!("hex-stream {v:?}"));
        assert_eq!(r.code, Some(1), "zero-size frames are malformed");
        // The skip is told: in the text views on standard output, with --json on standard
        // error, standard output keeping to one JSON object a line.
        if v.contains(&"--json") {
            assert!(
                r.stderr.contains("cannot start a frame"),
                "{}",
                tail(&r.stderr)
            );
            json_lines(&r);
        } else {
            assert!(
                r.stdout.contains("cannot start a frame"),
                "{}",
                tail(&r.stdout)
            );
        }
    }
}

/// `yes 00 | kdissect --hex` must print frames while its input is still open.
#[test]
fn hex_input_is_decoded_while_it_is_still_coming() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(["--hex", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn kdissect");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = child.stdout.take().expect("stdout");
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    // 16 MiB of "00" lines (junk: size prefixes of 0), one ApiVersions request, then the pipe
    // is held open (no EOF) until the reader is done: the request must come out before the
    // input ends.
    let writer = std::thread::spawn(move || {
        let line = "00 ".repeat(15) + "00\n";
        let block = line.repeat(1024);
        for _ in 0..(16 << 20) / block.len() {
            if stdin.write_all(block.as_bytes()).is_err() || stop_rx.try_recv().is_ok() {
                return;
            }
        }
        let frame = "00 00 00 0e 00 12 00 00 00 00 00 07 00 04 74 65 73 74\n";
        if stdin.write_all(frame.as_bytes()).is_err() {
            return;
        }
        let _ = stop_rx.recv_timeout(WATCHDOG);
        drop(stdin);
    });
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        let n = stdout.read(&mut buf).unwrap_or(0);
        let _ = tx.send(String::from_utf8_lossy(&buf[..n]).into_owned());
    });
    let first = rx.recv_timeout(Duration::from_secs(120));
    let _ = stop_tx.send(());
    let _ = child.kill();
    let _ = child.wait();
    let _ = writer.join();
    let first = first.expect("no output while the input was still open (120 s watchdog)");
    assert!(first.starts_with('{'), "{first}");
}

// Item 6: an endless input stops when the reader of the output goes away.

#[test]
fn endless_input_stops_when_its_reader_goes_away() {
    // ApiVersions requests as hex, one frame a line, for ever; the reader takes the first
    // output and leaves. kdissect must then exit by itself (quietly: a closed pipe is not an
    // error), so the writer's next writes fail: nothing here kills it.
    let frame = "00 00 00 0e 00 12 00 00 00 00 00 01 00 04 74 65 73 74\n";
    for args in [&["--hex"][..], &["--hex", "--json"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kdissect"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn kdissect");
        let mut stdin = child.stdin.take().expect("stdin");
        let mut stdout = child.stdout.take().expect("stdout");
        let writer = std::thread::spawn(move || {
            let block = frame.repeat(256);
            let start = Instant::now();
            while start.elapsed() < WATCHDOG {
                if stdin.write_all(block.as_bytes()).is_err() {
                    return true;
                }
            }
            false
        });
        let mut buf = [0u8; 256];
        let n = stdout.read(&mut buf).unwrap_or(0);
        assert!(n > 0, "{args:?}: no output");
        drop(stdout);
        let stopped = writer.join().expect("writer");
        if !stopped {
            let _ = child.kill();
        }
        let o = child.wait_with_output().expect("wait");
        assert!(
            stopped,
            "{args:?}: still reading {WATCHDOG:?} after its reader left"
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{args:?}: {}",
            tail(&String::from_utf8_lossy(&o.stderr))
        );
    }
}

// Item 5: eviction of connections.

#[test]
fn many_connections_past_max_connections_are_all_decoded() {
    // 2000 connections, each a complete exchange, never closed; room for 500 at once.
    let input = generate("many-connections");
    for v in VIEWS {
        let mut args = v.to_vec();
        args.extend(["--max-connections", "500"]);
        let r = kd(&args, &input);
        r.assert_sane(&format!("many-connections {args:?}"));
        assert!(
            r.stderr.contains("--max-connections"),
            "{}",
            tail(&r.stderr)
        );
    }
    let r = summary("many-connections", &["--max-connections", "500"]);
    assert_eq!(r.lines_with("ApiVersions v0 Request corr=1"), 2000);
    assert_eq!(r.lines_with("ApiVersions v0 Response corr=1"), 2000);
    let r = summary("many-connections", &[]);
    assert_eq!(r.code, Some(0));
    assert_eq!(r.lines_with("ApiVersions v0 Response corr=1"), 2000);
}

// Item 7: --max-buffered counts payload, not memory.

#[test]
fn tiny_pieces_behind_holes_finish() {
    let runs = all_views("tiny-pieces", &[]);
    assert_eq!(runs[0].lines_with("ApiVersions v0 Response corr=1"), 1);
    assert_eq!(runs[0].code, Some(1), "the hole is reported");
    let r = summary("tiny-pieces", &["--max-buffered", "4K"]);
    assert!(r.stderr.contains("--max-buffered"), "{}", tail(&r.stderr));
}

/// 10 000 one-byte pieces are 10 000 bytes of payload but far more than 32 KiB of memory: a
/// limit that counts what is held must be hit.
#[test]
fn tiny_pieces_count_against_max_buffered_by_what_they_hold() {
    let r = summary("tiny-pieces", &["--max-buffered", "32K"]);
    assert!(
        r.stderr.contains("--max-buffered"),
        "10 000 held pieces did not reach a 32 KiB --max-buffered: {}",
        tail(&r.stderr)
    );
}

// Frames still arriving on many connections at once: --max-frames-total.

#[test]
fn frames_in_progress_past_the_budget_are_dropped_and_the_streams_go_on() {
    // Five frames of 512 KiB held at once against a 1 MiB budget: all but one are let go,
    // each with a notice, and every connection's next exchange is still shown.
    let r = summary("frames-in-progress", &["--max-frames-total", "1M"]);
    r.assert_sane("frames-in-progress --max-frames-total 1M");
    let dropped = r.lines_with("a frame still arriving was dropped");
    assert!((1..5).contains(&dropped), "{dropped} dropped: {}", r.stdout);
    assert!(
        r.stderr.contains("--max-frames-total"),
        "{}",
        tail(&r.stderr)
    );
    assert_eq!(r.code, Some(1), "a dropped frame is damage reported");
    for stream in 0..5 {
        let shown = r
            .stdout
            .lines()
            .filter(|l| l.contains(&format!("[{stream}] Metadata v12 Request corr=3 ")))
            .count();
        assert_eq!(shown, 1, "stream {stream}: {}", r.stdout);
    }
    // With the default budget nothing is dropped: the same frames all decode (as requests
    // with trailing zeros).
    let r = summary("frames-in-progress", &[]);
    assert_eq!(r.lines_with("a frame still arriving was dropped"), 0);
    assert_eq!(
        r.lines_with("] Metadata v12 Request corr=2 "),
        5,
        "{}",
        r.stdout
    );
}

#[test]
fn a_frame_larger_than_the_budget_goes_alone() {
    // A 3 MiB frame against a 1 MiB budget: it is dropped, once, and the request waiting on
    // the other connection keeps waiting, so its answer is paired.
    let r = summary("big-frame-while-waiting", &["--max-frames-total", "1M"]);
    assert_eq!(
        r.lines_with("a frame still arriving was dropped"),
        1,
        "{}",
        r.stdout
    );
    assert_eq!(r.lines_with("stopped waiting"), 0, "{}", r.stdout);
    let answer = r
        .stdout
        .lines()
        .find(|l| l.contains("Metadata v12 Response corr=1 "))
        .unwrap_or_else(|| panic!("no answer: {}", r.stdout));
    assert!(answer.contains("after frame"), "not paired: {answer}");
    assert_eq!(
        r.lines_with("] Metadata v12 Request corr=3 "),
        1,
        "{}",
        r.stdout
    );
}

#[test]
fn a_request_too_big_to_hold_is_judged_alone() {
    // The exchange filter keeps whole exchanges: the Metadata request is shown with its
    // answer although a CreateTopics request too big to hold came in between.
    let input = generate("big-request-while-waiting");
    let r = kd(&["--no-progress", "-V", "-Y", "latency >= 0ms"], &input);
    r.assert_sane("big-request-while-waiting -V -Y");
    assert_eq!(
        r.lines_with("] Metadata v12 Request corr=1 "),
        1,
        "{}",
        tail(&r.stdout)
    );
    assert_eq!(r.lines_with("] Metadata v12 Response corr=1 "), 1);
    assert_eq!(r.lines_with("] CreateTopics v5 Request corr=1 "), 0);
}

// Item 9: a bogus size prefix swallows the rest of a direction.

#[test]
fn bogus_prefix_every_view_finishes() {
    let runs = all_views("bogus-prefix", &[]);
    assert_eq!(runs[0].lines_with("Metadata v12 Request corr=1"), 1);
    assert_eq!(runs[0].lines_with("Metadata v12 Response corr=1"), 1);
    for corr in 3..=7 {
        // The answers are shown today, as responses without their request.
        assert_eq!(
            runs[0].lines_with(&format!("Metadata v12 Response corr={corr} ")),
            1,
            "{}",
            runs[0].stdout
        );
    }
}

#[test]
fn requests_after_a_bogus_prefix_are_shown() {
    let r = summary("bogus-prefix", &[]);
    for corr in 3..=7 {
        assert_eq!(
            r.lines_with(&format!("Metadata v12 Request corr={corr} ")),
            1,
            "request corr={corr} not shown:\n{}",
            r.stdout
        );
        let resp: Vec<&str> = r
            .stdout
            .lines()
            .filter(|l| l.contains(&format!("Metadata v12 Response corr={corr} ")))
            .collect();
        assert_eq!(resp.len(), 1);
        assert!(resp[0].contains("after frame"), "not paired: {}", resp[0]);
    }
}

#[test]
fn hex_bogus_prefix_finishes() {
    let input = generate("hex-bogus-prefix");
    for v in [&["--hex"][..], &["--hex", "--json"], &["--hex", "-V"]] {
        let r = kd(v, &input);
        r.assert_sane(&format!("hex-bogus-prefix {v:?}"));
        assert_eq!(r.code, Some(1), "the bogus frame is malformed");
    }
}

#[test]
fn hex_frames_after_a_prefix_over_max_frame_are_shown() {
    let r = kd(&["--hex", "--json"], &generate("hex-bogus-prefix"));
    r.assert_sane("hex-bogus-prefix --json");
    let corrs: Vec<i64> = json_lines(&r)
        .iter()
        .filter(|o| o["direction"] == "request")
        .filter_map(|o| o["correlation_id"].as_i64())
        .collect();
    for corr in [1, 3, 4, 5] {
        assert!(corrs.contains(&corr), "corr={corr} not shown: {corrs:?}");
    }
}

// Item 10: counts.

/// The bytes reported skipped: the end-of-run count on stderr ("N bytes skipped to
/// resynchronise"), or failing that the sum of the stream notices ("skipped N bytes").
fn skipped(r: &Run) -> Option<u64> {
    let num = |w: &str| w.replace([',', '_'], "").parse::<u64>().ok();
    for l in r.stderr.lines() {
        let words: Vec<&str> = l.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            if *w == "bytes" && words.get(i + 1) == Some(&"skipped") && i > 0 {
                if let Some(n) = num(words[i - 1]) {
                    return Some(n);
                }
            }
        }
    }
    let mut sum = None;
    for l in r.stdout.lines() {
        let words: Vec<&str> = l.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            if *w == "skipped" {
                if let Some(n) = words.get(i + 1).and_then(|w| num(w)) {
                    sum = Some(sum.unwrap_or(0) + n);
                }
            }
        }
    }
    sum
}

#[test]
fn junk_before_a_frame_is_skipped_and_the_frame_shown() {
    let runs = all_views("junk", &[]);
    assert_eq!(runs[0].code, Some(1), "junk is damage");
    assert_eq!(
        runs[0].lines_with("Metadata v12 Request corr=1"),
        1,
        "{}",
        runs[0].stdout
    );
    assert_eq!(runs[0].lines_with("Metadata v12 Response corr=1"), 1);
}

/// The junk is 1 MiB + 64 KiB of 0xff at small scale, just past the 1 MiB search window; the
/// count must be its size (within the 4 bytes of the size prefix that started the search,
/// which a notice of its own may count).
#[test]
fn junk_past_the_search_window_is_counted_exactly() {
    let junk = (1u64 << 20) + (64 << 10);
    let r = summary("junk", &[]);
    let n = skipped(&r).expect("no skipped-byte count");
    assert!(
        n <= junk && n + 4 >= junk,
        "{n} bytes reported skipped, the junk is {junk}"
    );
}

#[test]
fn many_topics_every_view_finishes() {
    let runs = all_views("many-topics", &[]);
    assert_eq!(runs[0].code, Some(0));
    assert_eq!(runs[0].lines_with("Metadata v1 Response corr=1"), 1);
}

/// 20 000 topics at small scale: the summary's "+N more" must count all the others.
#[test]
fn summary_counts_every_topic() {
    let r = summary("many-topics", &[]);
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("Metadata v1 Response corr=1"))
        .expect("response line");
    let more: u64 = line
        .split('+')
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no +N more: {line}"));
    assert!(
        (19_900..20_000).contains(&more),
        "+{more} more, for 20 000 topics: {line}"
    );
}

#[test]
fn many_batches_every_view_finishes() {
    let runs = all_views("many-batches", &[]);
    assert_eq!(runs[0].code, Some(0));
    assert_eq!(runs[0].lines_with("Produce v8 Request corr=1"), 1);
}

/// 12 000 batches of one record each at small scale.
#[test]
fn summary_counts_every_batch() {
    let r = summary("many-batches", &[]);
    assert_eq!(
        r.lines_with("records=12000 "),
        1,
        "{}",
        r.stdout.lines().next().unwrap_or_default()
    );
}

#[test]
fn backwards_time_every_view_finishes() {
    let runs = all_views("backwards-time", &[]);
    assert_eq!(runs[0].lines_with("Metadata v12 Response corr=1"), 1);
}

/// A latency below zero is shown only with a notice saying the timestamps go backwards.
#[test]
fn negative_latency_comes_with_a_notice() {
    let r = summary("backwards-time", &[]);
    let negative = r
        .stdout
        .lines()
        .any(|l| l.contains("(-") && l.contains("after frame"));
    let noticed = r.stdout.lines().any(|l| l.contains("!!")) || !r.stderr.trim().is_empty();
    assert!(
        !negative || noticed,
        "negative latency without a notice:\n{}\n{}",
        r.stdout,
        r.stderr
    );
    let j = kd(&["--json"], &generate("backwards-time"));
    j.assert_sane("backwards-time --json");
    assert_eq!(json_lines(&j).len(), 2);
}

// Item 11: LZ4 framing.

#[test]
fn lz4_variants_every_view_finishes() {
    for name in ["lz4-no-end-mark", "lz4-trailing"] {
        let runs = all_views(name, &[]);
        assert_eq!(runs[0].lines_with("Produce v8 Request corr=1"), 1, "{name}");
        assert_eq!(
            runs[0].lines_with("Produce v8 Response corr=1"),
            1,
            "{name}"
        );
    }
}

#[test]
fn lz4_without_end_mark_is_reported() {
    let r = summary("lz4-no-end-mark", &[]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.lines_with("!!") >= 1, "{}", r.stdout);
}

#[test]
fn lz4_trailing_bytes_are_reported() {
    let r = summary("lz4-trailing", &[]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.lines_with("!!") >= 1, "{}", r.stdout);
}

// Every limit at once.

#[test]
fn everything_at_once_under_scaled_limits() {
    let runs = all_views("everything", EVERYTHING_SMALL_LIMITS);
    let s = &runs[0];
    assert_eq!(s.code, Some(1), "damage everywhere");
    for want in [
        "Produce v2 Request corr=1",
        "Produce v2 Response corr=1",
        "Produce v8 Request corr=2",
        "Produce v8 Response corr=2",
        "CreateTopics v5 Request corr=3",
        "Metadata v1 Response corr=4",
        "too many requests waiting",
    ] {
        assert!(
            s.lines_with(want) >= 1,
            "{want} missing:\n{}",
            tail(&s.stdout)
        );
    }
    for limit in ["--max-connections", "--max-buffered"] {
        assert!(
            s.stderr.contains(limit),
            "{limit} not reported: {}",
            s.stderr
        );
    }
    // The requests after the junk and the bogus prefix (over the scaled --max-frame here).
    for corr in 3..=7 {
        assert!(s.lines_with(&format!("Metadata v12 Request corr={corr} ")) >= 1);
    }
}

#[test]
fn everything_at_once_under_default_limits() {
    let runs = all_views("everything", &[]);
    assert_eq!(runs[0].code, Some(1));
    assert!(runs[0].lines_with("Produce v2 Request corr=1") >= 1);
}

/// `worst-case` fills every memory budget at the same moment; at small scale, with budgets
/// scaled down to match, every view finishes, the budgets are reported, and the bomb frame
/// decoded last is still shown with its response.
#[test]
fn every_budget_full_at_once_under_scaled_limits() {
    let limits = [
        "--max-connections",
        "200",
        "--max-buffered",
        "1M",
        "--max-buffered-total",
        "256K",
        "--max-frames-total",
        "600K",
        "--max-frame",
        "256K",
        "--max-decompressed",
        "64K",
        "--max-pending",
        "100",
    ];
    let runs = all_views("worst-case", &limits);
    let s = &runs[0];
    assert_eq!(s.code, Some(1), "damage everywhere");
    for want in [
        "Produce v2 Request corr=1",
        "Produce v2 Response corr=1",
        "Metadata v12 Response corr=1",
        "a frame still arriving was dropped",
        "too many requests waiting",
    ] {
        assert!(
            s.lines_with(want) >= 1,
            "{want} missing:\n{}",
            tail(&s.stdout)
        );
    }
    for limit in [
        "--max-connections",
        "--max-buffered-total",
        "--max-frames-total",
    ] {
        assert!(
            s.stderr.contains(limit),
            "{limit} not reported: {}",
            s.stderr
        );
    }
}
