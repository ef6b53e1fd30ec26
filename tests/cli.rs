//! The command line: views, exit codes and error messages.

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kdissect");
    // kdissect may exit before reading (usage errors): a broken pipe here is expected.
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    child.wait_with_output().expect("wait")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn vector_text(name: &str) -> String {
    std::fs::read_to_string(common::fixture(&format!("vectors/{name}"))).expect("vector")
}

const METADATA_REQ: &str = "00 00 00 21 00 03 00 0d 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00";

#[test]
fn default_view_prints_tree_then_layout() {
    let o = run(&["--hex"], METADATA_REQ);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.starts_with("MetadataRequest v13, request header v2, 37 bytes on the wire\n"),
        "{out}"
    );
    let tree = out
        .find("MetadataRequest message v13 [0x0000, 37B]")
        .expect("tree");
    let layout = out
        .find("byte layout (37 bytes, 16 bytes per row)")
        .expect("layout");
    assert!(tree < layout);
    assert!(out.contains("\n0020  01|00|00 00|00\n"), "{out}");
    assert!(!out.contains('\x1b'), "colour in a pipe");
}

#[test]
fn only_the_asked_views_print() {
    let o = run(&["--hex", "-x"], METADATA_REQ);
    let out = text(&o.stdout);
    assert!(
        out.contains("byte layout") && !out.contains("+-- "),
        "{out}"
    );
    let o = run(&["--hex", "-V"], METADATA_REQ);
    let out = text(&o.stdout);
    assert!(
        !out.contains("byte layout") && out.contains("+-- Frame"),
        "{out}"
    );
}

#[test]
fn color_always_colours_the_layout_and_never_does_not() {
    let o = run(&["--hex", "-x", "--color", "always"], METADATA_REQ);
    assert!(text(&o.stdout).contains("\x1b["));
    let o = run(&["--hex", "-x", "--color", "never"], METADATA_REQ);
    assert!(!text(&o.stdout).contains("\x1b["));
}

#[test]
fn file_argument_and_comment_lines() {
    let path = common::fixture("vectors/describe-cluster-v2-request.hex");
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(["--hex", "-V", path.to_str().expect("path")])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("request_api_key int16 = 60 (DescribeCluster)"));
}

#[test]
fn lone_response_needs_api_flags() {
    // Without its first comment line (`# response api_key=3 api_version=13`), which says it.
    let resp: String = vector_text("metadata-v13-response.hex")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let o = run(&["--hex", "-V"], &resp);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stdout).contains("--api-key K --api-version V"),
        "{}",
        text(&o.stdout)
    );
    let o = run(
        &[
            "--hex",
            "-V",
            "--api-key",
            "metadata",
            "--api-version",
            "13",
            "--response",
        ],
        &resp,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("MetadataResponse message v13 [0x0000, 90B]"));
}

#[test]
fn request_and_response_in_one_input_pair_up() {
    let both = vector_text("describe-topic-partitions-v0-request.hex")
        + &vector_text("describe-topic-partitions-v0-response.hex");
    let o = run(&["--hex", "-V"], &both);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let out = text(&o.stdout);
    assert!(
        out.contains("DescribeTopicPartitionsResponse message v0 [0x0000, 88B]"),
        "{out}"
    );
    assert!(out.contains("(input offset 0x001e)"), "{out}");
}

/// Hex holding no frame at all, only bytes where no frame can start, says so (it said
/// "1 of 0 frames malformed"), and exits 1 as any damaged input does; garbage beside a
/// clean frame is counted apart from the frames.
#[test]
fn hex_with_no_frame_says_none_was_found() {
    let o = run(&["--hex"], "ff ff ff ff 00 00\n");
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("size prefix -1 cannot start a frame")
            || text(&o.stdout).contains("size prefix -1 cannot start a frame"),
        "{err}"
    );
    assert!(
        err.contains("kdissect: no Kafka frame found: 6 bytes skipped in 1 place where no size prefix could start a frame"),
        "{err}"
    );
    assert!(!err.contains("of 0 frames"), "{err}");
    let o = run(&["--hex"], &format!("{METADATA_REQ} 00 00 00 01"));
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("kdissect: 1 frame, none malformed; 4 bytes skipped in 1 place"),
        "{err}"
    );
    let o = run(&["--hex"], METADATA_REQ);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(text(&o.stderr), "");
}

#[test]
fn bad_hex_is_a_usage_error_naming_the_place() {
    let o = run(&["--hex"], "00 00 00 0a\n00 03 zz 01\n");
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("line 2, column 7") && err.contains("not hex"),
        "{err}"
    );

    let o = run(&["--hex"], "00 00 00 0a 0");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("odd number of hex digits"),
        "{}",
        text(&o.stderr)
    );

    let o = run(&["--hex"], "# nothing here\n");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no hex bytes"));
}

#[test]
fn unreadable_file_is_exit_2() {
    let o = run(&["--hex", "/nonexistent/frame.hex"], "");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("cannot read /nonexistent/frame.hex"));
}

/// Hex input goes through the capture run's sinks: `-c` stops after N frames, as after N
/// captured messages, and what comes after them is not read (nor judged).
#[test]
fn hex_frames_are_counted_by_c() {
    let two = format!("{METADATA_REQ}\n{METADATA_REQ}\n");
    let all = run(&["--hex", "--json"], &two);
    assert_eq!(text(&all.stdout).lines().count(), 2);
    let one = run(&["--hex", "--json", "-c", "1"], &two);
    assert_eq!(one.status.code(), Some(0), "{}", text(&one.stderr));
    let out = text(&one.stdout);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("{\"frame\":1,\"input_offset\":0,"), "{out}");
    let o = run(
        &["--hex", "-c", "1"],
        &format!("{METADATA_REQ} ff ff ff ff 00 00"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), "");
    assert!(!text(&o.stdout).contains("size prefix"));
}

/// `-q` prints no frame, as it prints no captured message: the closing line and the exit
/// status still say what was wrong.
#[test]
fn hex_quiet_prints_only_the_closing_line() {
    let o = run(&["--hex", "-q"], &format!("{METADATA_REQ} 00 00 00 01"));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stdout), "");
    assert_eq!(
        text(&o.stderr),
        "kdissect: 1 frame, none malformed; 4 bytes skipped in 1 place where no size prefix could start a frame\n"
    );
    let o = run(&["--hex", "-q"], METADATA_REQ);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(text(&o.stdout), "");
    assert_eq!(text(&o.stderr), "");
}

/// What needs a capture's time, streams, addresses or packets is refused with --hex rather
/// than ignored.
#[test]
fn hex_refuses_what_needs_a_capture() {
    let dir = std::env::temp_dir().join(format!("kdissect-hex-refuses-{}", std::process::id()));
    let cut = dir.join("never.pcapng");
    let page = dir.join("never.html");
    let (cut, page) = (cut.to_str().expect("path"), page.to_str().expect("path"));
    let cases: [(&[&str], &str); 6] = [
        (
            &["--hex", "--correlation-id", "1"],
            "the exchange filters work on captures",
        ),
        (
            &["--hex", "--api", "metadata"],
            "the exchange filters work on captures",
        ),
        (
            &["--hex", "--stats"],
            "the exchange filters work on captures",
        ),
        (&["--hex", "-w", cut], "-w and --report"),
        (&["--hex", "--report", page], "-w and --report"),
        (&["--hex", "--at", "3", "-c", "1"], "not with -c"),
    ];
    for (args, want) in cases {
        let o = run(args, METADATA_REQ);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(text(&o.stdout), "", "{args:?}");
    }
    assert!(!dir.exists(), "nothing written");
}

#[test]
fn truncated_frame_is_shown_and_marked() {
    // Size prefix says 0x21 bytes, 12 are present.
    let o = run(
        &["--hex", "-V"],
        "00 00 00 21 00 03 00 0d 00 00 00 05 00 00 00 02",
    );
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(out.contains("correlation_id int32 = 5"), "{out}");
    assert!(
        out.contains("size prefix says 33 bytes follow, only 12 are present"),
        "{out}"
    );
    assert!(out.contains("+-- !! malformed"), "{out}");
}

#[test]
fn string_length_past_the_end_and_negative_lengths() {
    // Metadata v1 request whose topic array claims one topic with a 300-byte name.
    let o = run(
        &["--hex", "-V"],
        "00 00 00 12 00 03 00 01 00 00 00 01 00 00 00 00 00 01 01 2c 61 62",
    );
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(
        out.contains("Topics[0].Name at 0x0012: string length 300 exceeds the 2 bytes left"),
        "{out}"
    );
    assert!(
        out.contains("unparsed bytes = 012c6162 [0x0012, 4B]"),
        "{out}"
    );
    // Negative, non-null array length.
    let o = run(
        &["--hex", "-V"],
        "00 00 00 0e 00 03 00 01 00 00 00 01 00 00 ff ff ff fe",
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stdout).contains("array length -2 is negative"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn unknown_api_and_version_show_header_and_raw_body() {
    let o = run(
        &["--hex", "-V"],
        "00 00 00 0c 03 e9 00 00 00 00 00 01 ff ff 01 02",
    );
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(
        out.contains("request_api_key int16 = 1001 (ApiKey1001)"),
        "{out}"
    );
    assert!(out.contains("not known to kdissect"), "{out}");
    // A version newer than the tables is read with the newest layout (v13, flexible, so the
    // header is v2 with its tagged-field count); an empty body does not fit it.
    let o = run(
        &["--hex", "-V"],
        "00 00 00 0b 00 03 00 63 00 00 00 01 ff ff 00",
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stdout)
            .contains("MetadataRequest has versions 0-13, not 99 (read with the v13 layout"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn seed_vector_without_presence_byte_names_it() {
    let o = run(
        &["--hex", "-V"],
        &vector_text("describe-topic-partitions-v0-request.seed.hex"),
    );
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(out.contains("Cursor: the int8 presence byte"), "{out}");
}

#[test]
fn usage_errors() {
    let o = run(
        &["--hex", "--api-key", "nonsense", "--api-version", "1"],
        METADATA_REQ,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("neither a number nor a Kafka API name"));
    let o = run(&["--hex", "--api-key", "3"], METADATA_REQ);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["--bogus-flag"], "");
    assert_eq!(o.status.code(), Some(2));
}

fn sample(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("samples")
            .join(name),
    )
    .expect("sample")
}

fn run_file_bytes(bytes: &[u8], args: &[&str]) -> Output {
    let dir = std::env::temp_dir().join(format!(
        "kdissect-cli-{}-{}",
        std::process::id(),
        bytes.len()
    ));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join("input.pcap");
    std::fs::write(&path, bytes).expect("write");
    let mut all: Vec<&str> = args.to_vec();
    let p = path.to_str().expect("path").to_string();
    all.push(&p);
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(&all)
        .output()
        .expect("run");
    let _ = std::fs::remove_dir_all(&dir);
    o
}

#[test]
fn capture_summary_lines_and_exit_0() {
    let o = run_file_bytes(&sample("kafkajs-admin.pcap"), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("[0] ApiVersions v2 Request corr=0 client_id=\"kafkajs-admin\""),
        "{out}"
    );
    assert!(
        out.contains("Metadata v6 Response corr=1 brokers=1 cluster_id=\"tansu_cluster\""),
        "{out}"
    );
    assert!(out.contains(" ms after frame 8)"), "{out}");
}

#[test]
fn capture_from_stdin() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&sample("kcat-metadata-v0.pcap"));
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        text(&o.stdout)
            .lines()
            .filter(|l| l.contains("Metadata v0"))
            .count(),
        4
    );
}

#[test]
fn not_a_capture_and_empty_and_truncated_header_are_exit_2() {
    let o = run_file_bytes(b"this is a text file, not a capture\n", &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("input.pcap") && err.contains("not a pcap or pcapng file"),
        "{err}"
    );
    let o = run_file_bytes(b"", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("empty file"));
    let o = run_file_bytes(&sample("kcat-metadata-v0.pcap")[..10], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("truncated"), "{}", text(&o.stderr));
}

#[test]
fn truncated_last_record_is_a_warning_and_the_rest_is_shown() {
    let full = sample("kafkajs-admin.pcap");
    let o = run_file_bytes(&full[..full.len() - 20], &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("offset") && err.contains("truncated capture"),
        "{err}"
    );
    assert!(text(&o.stdout).lines().count() >= 18, "{}", text(&o.stdout));
}

#[test]
fn absurd_record_length_names_the_offset() {
    let mut b = sample("kcat-metadata-v0.pcap");
    // First record header at 24: caplen at 24 + 8.
    let second = 24 + 16 + u32::from_le_bytes([b[32], b[33], b[34], b[35]]) as usize;
    b[second + 8..second + 12].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    let o = run_file_bytes(&b, &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!("offset {second}")) && err.contains("2147483647"),
        "{err}"
    );
}

/// A full disk (/dev/full) is an error with a message and exit status 2, never a panic: for
/// the subcommands, --help and --version as for decoding.
#[test]
fn write_errors_exit_2_with_a_message() {
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/ak44-admin.pcap");
    for args in [
        &["completions", "bash"][..],
        &["man"],
        &["--help"],
        &["--version"],
        &["example", "metadata", "--version", "13"],
        &[sample],
        &["--json", sample],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
            .args(args)
            .stdout(full)
            .output()
            .expect("run");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            text(&o.stderr).contains("cannot write output: No space left on device"),
            "{args:?}: {}",
            text(&o.stderr)
        );
    }
}

fn sample_path(name: &str) -> String {
    format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Counts of one are singular in every closing line ("1 frames lost" was printed).
#[test]
fn counts_of_one_are_singular() {
    let o = run(&["-q", &sample_path("kgen-all-versions.pcap")], "");
    let err = text(&o.stderr);
    assert!(
        err.contains("0 frames lost in gaps, 0 bytes skipped to resynchronise, 0 other stream damage, 1 retransmission, 1 unanswered request"),
        "{err}"
    );
    assert!(
        !err.contains("1 retransmissions") && !err.contains("1 unanswered requests"),
        "{err}"
    );
    let o = run(&["-q", &sample_path("kgen-midstream.pcap")], "");
    let err = text(&o.stderr);
    for plural_of_one in [
        " 1 frames",
        " 1 bytes",
        " 1 messages",
        " 1 packets",
        " 1 records",
    ] {
        assert!(!err.contains(plural_of_one), "{err}");
    }
}

/// With --no-detect the hint does not speak of detection.
#[test]
fn no_detect_hint_says_no_other_port_was_tried() {
    let f = sample_path("kgen-all-versions.pcap");
    let o = run(&["-q", "-p", "1", "--no-detect", &f], "");
    let err = text(&o.stderr);
    assert!(
        err.contains("no Kafka traffic found in 224 packets (broker port 1; --no-detect: no other port looked at): give the broker's port with -p"),
        "{err}"
    );
    assert!(!err.contains("detection"), "{err}");
    let o = run(
        &[
            "-q",
            "-p",
            "1",
            "-p",
            "2",
            &sample_path("kgen-all-versions.pcap"),
        ],
        "",
    );
    let err = text(&o.stderr);
    // Detection finds the broker on 9092 anyway: no hint.
    assert!(!err.contains("no Kafka traffic found"), "{err}");
}

/// `kdissect help filters` travels with the binary: every built-in field and Wireshark name,
/// each of which compiles as a filter; the manual carries the same list; --help points to it.
#[test]
fn help_filters_lists_every_field_and_the_manual_too() {
    let o = run(&["help", "filters"], "");
    assert_eq!(o.status.code(), Some(0));
    let help = text(&o.stdout);
    let fields: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Built-in fields:"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(fields.len() >= 26, "{fields:?}");
    for want in [
        "api",
        "frame",
        "time",
        "time_relative",
        "request_frame",
        "src_ip",
    ] {
        assert!(fields.contains(&want), "{want}: {fields:?}");
    }
    let names: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Wireshark's names"))
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.len() > 100, "{}", names.len());
    let f = sample_path("ak44-admin.pcap");
    for name in fields.iter().chain(&names) {
        let o = run(&["-q", "-Y", name, &f], "");
        assert_eq!(o.status.code(), Some(0), "{name}: {}", text(&o.stderr));
    }
    let man = text(&run(&["man"], "").stdout);
    assert!(man.contains(".SH \"DISPLAY FILTERS\""));
    for name in fields.iter().chain(&names) {
        let roff = name.replace('-', "\\-");
        assert!(
            man.contains(&format!("\\fB{roff}\\fR")),
            "{name} not in the manual"
        );
    }
    let long = text(&run(&["--help"], "").stdout);
    assert!(!long.contains("docs/filters.md"), "{long}");
    assert!(long.contains("kdissect help filters"));
    let o = run(&["help", "example"], "");
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("--print-hex"));
    let o = run(&["help", "nothing"], "");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("the topics are filters"));
}
