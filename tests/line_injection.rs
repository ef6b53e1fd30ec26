//! Wire text never reaches the output raw (issue 35, item 18): a capture whose topic names,
//! client software, SASL mechanisms, resources, group and transactional ids, cursor, SNI and
//! ALPN hold newlines, ESC sequences (CSI, OSC), BEL, DEL, NUL and C1 controls, each followed
//! by a fake summary line (scripts/hostile/line_injection.py), forges no line and puts no raw
//! control character in the summary, -V, --json or -T fields views, nor on stderr.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The capture, made once per test binary: the tests run in parallel, and one must not read
/// the file while another is still writing it.
fn capture() -> PathBuf {
    static MADE: OnceLock<PathBuf> = OnceLock::new();
    MADE.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("line-injection");
        std::fs::create_dir_all(&dir).expect("scratch directory");
        let out = dir.join(format!("injection-{}.pcap", std::process::id()));
        let gen = common::cli::root().join("scripts/hostile/line_injection.py");
        let st = Command::new("python3")
            .arg(&gen)
            .arg(&out)
            .status()
            .expect("python3 (the hostile generators need Python 3)");
        assert!(st.success(), "line_injection.py failed: {st}");
        out
    })
    .clone()
}

/// Standard output and standard error of kdissect on the capture.
fn run(args: &[&str]) -> (String, String) {
    let cap = capture();
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .arg("--no-progress")
        .args(args)
        .arg(&cap)
        .output()
        .expect("run kdissect");
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (
        String::from_utf8(o.stdout).expect("UTF-8 stdout"),
        String::from_utf8(o.stderr).expect("UTF-8 stderr"),
    )
}

/// Control characters a terminal obeys: C0 (but for the newline between lines and the tab
/// between -T fields' columns), DEL and C1; and the invisible characters that turn or hide
/// text (a bidi override, a zero-width space, an isolate).
fn raw_controls(text: &str, tab_ok: bool) -> Vec<String> {
    text.chars()
        .filter(|c| {
            (c.is_control() && *c != '\n' && !(tab_ok && *c == '\t'))
                || kdissect::text::is_invisible(*c)
        })
        .map(|c| format!("U+{:04X}", u32::from(c)))
        .collect()
}

fn check(args: &[&str], tab_ok: bool) -> String {
    let (out, err) = run(args);
    for (what, text) in [("stdout", &out), ("stderr", &err)] {
        let bad = raw_controls(text, tab_ok);
        assert!(bad.is_empty(), "{args:?} {what}: raw {bad:?}\n{text}");
        let forged: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("FORGED") && l.trim_start().starts_with("1 "))
            .collect();
        assert!(forged.is_empty(), "{args:?} {what}: forged {forged:#?}");
    }
    out
}

#[test]
fn summary_lines_quote_every_wire_text() {
    let out = check(&[], false);
    // Every place the text goes shows it, escaped: the checks above are not vacuous.
    for want in [
        "client_id=\"client\\u{a}",
        "software=\"software\\u{a}",
        "topics=[\"topic-req\\u{a}",
        "topics=[\"topic-resp0\\u{a}",
        "mechanism=\"mech\\u{a}",
        "mechanisms=[\"offered\\u{a}",
        "resources=[\"resource\\u{a}",
        "topics=[\"deleted\\u{a}",
        "cursor=\"cursor\\u{a}",
        "group=\"group\\u{a}",
        "groups=[\"listed\\u{a}",
        "groups=[\"described\\u{a}",
        "txn=\"txn\\u{a}",
        "SNI \"sni\\u{a}",
        "ALPN \"alpn\\u{a}",
        "\\u{1b}]0;owned\\u{7}\\u{1b}[2J\\u{d}\\u{7f}\\u{9b}31m\\u{9d}0;t\\u{7}\\u{0}end\\u{202e}gnp.exe\\u{200b}\\u{2066}",
    ] {
        assert!(out.contains(want), "{want} missing from\n{out}");
    }
    // One line per message and notice: ten requests, three answers, the TLS connection and
    // the seven unanswered requests.
    assert_eq!(out.lines().count(), 21, "{out}");
}

#[test]
fn the_tree_view_quotes_every_wire_text() {
    let out = check(&["-V"], false);
    assert!(
        out.contains("ClientSoftwareName string = \"software\\u{a}"),
        "{out}"
    );
    check(&["-V", "--brief"], false);
}

#[test]
fn json_escapes_every_control_even_those_serde_leaves_raw() {
    let out = check(&["--json"], false);
    // DEL and the C1 controls as \u escapes; the value is the same once parsed.
    assert!(out.contains("\\u007f\\u009b31m\\u009d0;t"), "{out}");
    assert!(out.contains("end\\u202egnp.exe\\u200b\\u2066"), "{out}");
    for l in out.lines() {
        let v: serde_json::Value = serde_json::from_str(l).expect("valid JSON");
        if v["api_name"] == "ApiVersions" && v["direction"] == "request" {
            let name = v["body"]["ClientSoftwareName"].as_str().unwrap_or_default();
            assert!(name.starts_with("software\n     1 "), "{name:?}");
            assert!(name.contains("\u{9b}31m"), "{name:?}");
        }
    }
    check(&["-T", "json"], false);
    check(&["-T", "ek"], false);
}

#[test]
fn tshark_fields_escape_every_control() {
    let out = check(
        &[
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "kafka.topic_name",
            "-e",
            "kafka.client_id",
            "-e",
            "kafka.consumer_group",
        ],
        true,
    );
    assert!(out.contains("topic-req\\n     1 "), "{out}");
    assert!(out.contains("\\u{1b}]0;owned\\u{7}"), "{out}");
    assert!(out.contains("end\\u{202e}gnp.exe"), "{out}");
}

/// The HTML report (`--report`) shows the same texts (client software, group ids) with no
/// raw control or invisible character: maud escapes markup, not an ESC or a bidi override.
#[test]
fn the_report_page_holds_no_raw_control_or_invisible_character() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("line-injection");
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let page = dir.join(format!("report-{}.html", std::process::id()));
    let page_arg = page.to_string_lossy().into_owned();
    run(&["--report", &page_arg]);
    let html = std::fs::read_to_string(&page).expect("the report page");
    let bad = raw_controls(&html, true);
    assert!(bad.is_empty(), "raw {bad:?} in the report");
    assert!(
        html.contains("end\\u{202e}gnp.exe\\u{200b}\\u{2066}"),
        "the escaped text is on the page"
    );
}
