//! Statistics, exchange filters, --at, completions and the man page, on the shipped samples.

use serde_json::Value as J;
use std::path::PathBuf;
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sample(name: &str) -> String {
    root()
        .join("samples")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .expect("run")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stats(args: &[&str]) -> J {
    let mut a = vec!["--stats", "--json", "-q"];
    a.extend_from_slice(args);
    let o = run(&a);
    let v: J = serde_json::from_str(stdout(&o).trim()).expect("one JSON object");
    v["stats"].clone()
}

fn api_row<'a>(s: &'a J, name: &str, version: i64) -> &'a J {
    s["apis"]
        .as_array()
        .expect("apis")
        .iter()
        .find(|a| a["api_name"] == name && a["api_version"] == version)
        .unwrap_or_else(|| panic!("no {name} v{version} row"))
}

#[test]
fn stats_count_what_the_capture_holds() {
    let s = stats(&[&sample("kgen-all-versions.pcap")]);
    // Metadata v13: 4 requests, all answered in the v12 layout (malformed).
    let m13 = api_row(&s, "Metadata", 13);
    assert_eq!(
        (
            m13["requests"].as_i64(),
            m13["responses"].as_i64(),
            m13["malformed"].as_i64()
        ),
        (Some(4), Some(4), Some(4))
    );
    // DescribeCluster v2: the IncludeFencedBrokers request was never answered.
    let dc2 = api_row(&s, "DescribeCluster", 2);
    assert_eq!(
        (
            dc2["requests"].as_i64(),
            dc2["responses"].as_i64(),
            dc2["unanswered"].as_i64()
        ),
        (Some(2), Some(1), Some(1))
    );
    assert!(dc2["latency_us"]["p50"].as_f64().is_some_and(|l| l > 0.0));
    // Error codes by name.
    let errs = s["errors"].as_array().expect("errors");
    assert!(errs
        .iter()
        .any(|e| e["name"] == "UNKNOWN_TOPIC_OR_PARTITION" && e["count"].as_i64() > Some(0)));
    // Version skew: Metadata v13 used, v0-v12 advertised.
    let skew = s["version_skew"].as_array().expect("skew");
    let md = skew
        .iter()
        .find(|k| k["api_name"] == "Metadata")
        .expect("metadata skew");
    assert!(
        md["status"].as_str().is_some_and(|t| t.contains("v13")),
        "{md}"
    );
    assert!(md["advertised"]
        .as_str()
        .is_some_and(|t| t.contains("v0-v12")));
    assert_eq!(s["health"]["packets"], 224);
    assert_eq!(s["health"]["unanswered"], 1);
    // Connections with their client ids.
    let conns = s["connections"].as_array().expect("connections");
    assert_eq!(conns.len(), 5);
    assert!(conns.iter().any(|c| c["client_id"] == "kgen-bulk"));
}

#[test]
fn stats_health_of_damaged_captures() {
    let s = stats(&[&sample("kgen-lost-segment.pcap")]);
    assert_eq!(s["health"]["gaps"], 1);
    assert_eq!(s["health"]["partial"], 1);
    let s = stats(&[&sample("kgen-midstream.pcap")]);
    assert!(s["health"]["midstream_pickups"].as_i64() >= Some(1));
    let s = stats(&[&sample("kgen-duplicate-segment.pcap")]);
    assert!(s["health"]["retransmissions"].as_i64() >= Some(1));
    let s = stats(&[&sample("kgen-all-versions-snaplen96.pcap")]);
    assert_eq!(
        s["health"]["truncated_packets"].as_i64().map(|n| n > 100),
        Some(true)
    );
}

/// A frame the snap length cut ends in a gap; the next frame starts right after it, so
/// nothing is passed over: no resynchronisation is told or counted ("after a gap: skipped 0
/// bytes to the next frame boundary" came after every cut frame of the kgen snaplen capture).
#[test]
fn a_frame_right_after_a_gap_is_not_a_resynchronisation() {
    let f = sample("kgen-all-versions-snaplen96.pcap");
    let text = stdout(&run(&[&f]));
    assert!(!text.contains("skipped 0 bytes"), "{text}");
    assert!(text.contains("!! a Kafka frame was lost in a gap: the snap length cut"));
    let s = stats(&[&f]);
    assert_eq!(
        (&s["health"]["resyncs"], &s["health"]["midstream_pickups"]),
        (&J::from(0), &J::from(0))
    );
}

/// Three real nodes (samples/merged-three-nodes.pcap: tansu 0.6.0 at 127.0.0.1, Apache Kafka
/// 4.4.0 at 127.0.0.2, a tansu node whose ApiVersions answer was not captured at 127.0.0.3):
/// each request is checked against the ApiVersions answer of the node it went to. Checked
/// against every node's answer, Metadata v13, DescribeCluster v2, ApiVersions v5, ListOffsets
/// v11, DescribeGroups v6 and ConsumerGroupDescribe v1 (sent to Apache Kafka only) were
/// reported outside tansu's range.
#[test]
fn version_skew_checks_each_request_against_its_own_node() {
    let s = stats(&[&sample("merged-three-nodes.pcap")]);
    let skew = s["version_skew"].as_array().expect("skew");
    let row = |api: &str, node: &str| {
        skew.iter()
            .find(|r| r["api_name"] == api && r["node"] == node)
            .unwrap_or_else(|| panic!("no {api} row for {node}: {skew:?}"))
    };
    let (tansu, ak44, unseen) = ("127.0.0.1:9092", "127.0.0.2:9092", "127.0.0.3:9092");
    assert_eq!(row("Metadata", tansu)["advertised"], "v0-v12");
    assert_eq!(row("Metadata", tansu)["used"], "v12");
    assert_eq!(row("Metadata", ak44)["advertised"], "v0-v13");
    assert_eq!(row("Metadata", ak44)["used"], "v13");
    assert_eq!(row("DescribeCluster", tansu)["used"], "v1");
    assert_eq!(row("DescribeCluster", ak44)["used"], "v2");
    assert_eq!(row("ApiVersions", ak44)["advertised"], "v0-v5");
    // kcat sent no ApiVersions request: its node is not checked.
    assert_eq!(row("Metadata", unseen)["advertised"], "-");
    assert_eq!(
        row("Metadata", unseen)["status"],
        "no ApiVersions response captured"
    );
    for r in skew.iter().filter(|r| r["node"] != unseen) {
        assert_eq!(r["status"], "ok", "{r}");
    }
    // APIs only the Java Admin used appear on its node alone.
    for api in ["ListOffsets", "DescribeGroups", "ConsumerGroupDescribe"] {
        let nodes: Vec<&J> = skew
            .iter()
            .filter(|r| r["api_name"] == api)
            .map(|r| &r["node"])
            .collect();
        assert_eq!(nodes, vec![&J::from(ak44)], "{api}");
    }
    let advertised = s["advertised"].as_object().expect("advertised");
    assert_eq!(
        advertised.keys().collect::<Vec<_>>(),
        vec![tansu, ak44],
        "the nodes whose answer was captured"
    );
}

#[test]
fn stats_tables_print_after_messages_or_alone() {
    let o = run(&[
        "--stats",
        "-q",
        "--color",
        "never",
        &sample("kafka-python-admin.pcap"),
    ]);
    let out = stdout(&o);
    // Health and errors first, then the tables that grow with the capture.
    assert!(out.starts_with("Capture health\n"), "{out}");
    let at = |t: &str| {
        out.find(&format!("\n{t}\n"))
            .unwrap_or_else(|| panic!("{t} missing"))
    };
    assert!(at("Kafka APIs") < at("API versions: advertised by each node vs used by clients"));
    assert!(at("API versions: advertised by each node vs used by clients") < at("Connections"));
    let o = run(&["--stats", "-q", &sample("kgen-all-versions.pcap")]);
    let out = stdout(&o);
    let at = |t: &str| {
        out.find(&format!("\n{t}\n"))
            .unwrap_or_else(|| panic!("{t} missing"))
    };
    assert!(at("Error codes") < at("Kafka APIs"), "{out}");
    assert!(out.contains("DescribeCluster (60)"));
    let o = run(&["--stats", &sample("kafka-python-admin.pcap")]);
    let out = stdout(&o);
    assert!(
        out.find("ApiVersions v4 Request").expect("messages")
            < out.find("Kafka APIs").expect("tables")
    );
}

fn corrs(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            l.split(" corr=")
                .nth(1)
                .map(|r| r.split(' ').next().unwrap_or("").to_string())
        })
        .collect()
}

#[test]
fn filters_keep_whole_exchanges() {
    let f = sample("kgen-all-versions.pcap");
    // --errors: only exchanges with an error code; requests come with their responses.
    let out = stdout(&run(&["--errors", &f]));
    let lines: Vec<&str> = out.lines().collect();
    assert!(!lines.is_empty());
    let reqs = lines.iter().filter(|l| l.contains(" Request ")).count();
    let resps = lines.iter().filter(|l| l.contains(" Response ")).count();
    assert_eq!(reqs, resps, "{out}");
    assert!(lines
        .iter()
        .filter(|l| l.contains(" Response "))
        .all(|l| l.contains('(') && l.contains("_")));
    // --api and --stream.
    let out = stdout(&run(&["--api", "describecluster,75", "--stream", "2", &f]));
    assert!(out.lines().count() >= 10, "{out}");
    assert!(out.lines().all(|l| l.contains("[2] DescribeCluster") || l.contains("[2] DescribeTopicPartitions")), "{out}");
    // --correlation-id (negative) picks one exchange.
    let out = stdout(&run(&["--correlation-id", "-2147483648", &f]));
    assert_eq!(corrs(&out), vec!["-2147483648", "-2147483648"], "{out}");
    // --client-id.
    let out = stdout(&run(&["--client-id", "kgen-bulk", "--api", "metadata", &f]));
    assert_eq!(corrs(&out), vec!["1004", "1004", "1006", "1006"], "{out}");
    // --topic by name matches requests by topic id once the id is known.
    let out = stdout(&run(&["--topic", "payments", "--api", "metadata", &f]));
    assert!(
        out.contains("corr=103 ") && out.contains("corr=139 "),
        "{out}"
    );
}

#[test]
fn stats_count_the_filtered_exchanges_unless_asked_for_all() {
    let f = sample("kgen-all-versions.pcap");
    let all = stats(&[&f]);
    let everything = stats(&["--api", "metadata", "--stats-all", &f]);
    assert_eq!(all, everything);
    let filtered = stats(&["--api", "metadata", &f]);
    let apis = filtered["apis"].as_array().expect("apis");
    assert!(!apis.is_empty());
    assert!(apis.iter().all(|a| a["api_name"] == "Metadata"));
    assert_ne!(filtered, all);
}

/// `--stats -q FILE` with `COLUMNS` set to `columns` (unset when `None`), through a pipe.
fn stats_text(f: &str, columns: Option<&str>) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kdissect"));
    c.args(["--stats", "-q", "--color", "never", f]);
    match columns {
        Some(n) => c.env("COLUMNS", n),
        None => c.env_remove("COLUMNS"),
    };
    String::from_utf8_lossy(&c.output().expect("run").stdout).into_owned()
}

/// The words in the tables' cells: what lies between spaces and the tables' lines (titles
/// left out: split tables have titles of their own).
fn table_words(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with('│'))
        .flat_map(|l| l.split(|c: char| c.is_whitespace() || "│┆".contains(c)))
        .filter(|w| !w.is_empty())
        .collect()
}

/// On every sample: through a pipe the tables fit 100 columns, with COLUMNS they fit it,
/// and no word is broken: every word drawn is a word of the tables drawn as wide as their
/// content, or one cut with an ellipsis: a header at its end (`mes…`), an id in its middle
/// (`ak44-co…-classic`).
#[test]
fn stats_tables_fit_pipes_and_columns_without_breaking_words() {
    let mut files: Vec<String> = std::fs::read_dir(root().join("samples"))
        .expect("samples")
        .filter_map(|e| e.ok().map(|e| e.path().to_string_lossy().into_owned()))
        .filter(|p| p.ends_with(".pcap") || p.ends_with(".pcapng"))
        .collect();
    files.sort();
    assert!(files.len() > 20);
    let mut cut = 0;
    for f in &files {
        let whole = stats_text(f, Some("1000"));
        let words: std::collections::HashSet<&str> = table_words(&whole).into_iter().collect();
        for (columns, text) in [(100, stats_text(f, None)), (80, stats_text(f, Some("80")))] {
            assert!(text.starts_with("Capture health\n"), "{f}: {text}");
            for l in text.lines() {
                assert!(l.chars().count() <= columns, "{f} at {columns}: {l}");
            }
            for w in table_words(&text) {
                // A word too long for its column is cut with an ellipsis, never broken.
                let pieces = w
                    .split_once('…')
                    .filter(|(h, t)| !h.is_empty() || !t.is_empty());
                // A lone `…` ends a cell cut at its last line (render::table's
                // MAX_CELL_LINES).
                let ok = words.contains(w)
                    || w == "…"
                    || pieces.is_some_and(|(h, t)| {
                        words.iter().any(|x| {
                            x.starts_with(h) && x.ends_with(t) && h.len() + t.len() < x.len()
                        })
                    });
                assert!(ok, "{f} at {columns}: {w:?} is not a whole word\n{text}");
                cut += usize::from(pieces.is_some());
            }
        }
    }
    // Headers or long client ids are cut on some samples.
    assert!(cut > 0);
}

/// On a terminal of 70 columns with no COLUMNS (`script` gives kdissect a terminal, `stty`
/// its size) the tables fit the terminal.
#[test]
fn stats_tables_fit_the_terminal() {
    let f = sample("kgen-all-versions.pcap");
    let script = Command::new("script")
        .args([
            "-qec",
            &format!(
                "stty cols 70 rows 50; {} --stats -q --color never {f}",
                env!("CARGO_BIN_EXE_kdissect")
            ),
            "/dev/null",
        ])
        .env_remove("COLUMNS")
        .output();
    let Ok(o) = script else {
        return; // no `script` here (util-linux)
    };
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("Kafka APIs"), "{text}");
    // Table lines (stderr's end-of-run summary comes through the terminal too).
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains('│') || l.contains('┆'))
        .collect();
    assert!(rows.len() > 10, "{text}");
    assert!(
        rows.iter().any(|l| l.trim_end().chars().count() > 60),
        "{text}"
    );
    for l in rows {
        let n = l.trim_end().chars().count();
        assert!(n <= 70, "{n} columns: {l}");
    }
}

/// The Connections table shows the busiest connections (20 by default) and sums the rest in
/// one row; `--stats-connections all` shows every one.
#[test]
fn stats_connections_shows_the_busiest_and_sums_the_rest() {
    let f = sample("kgen-all-versions.pcap");
    let conns = |args: &[&str]| -> Vec<String> {
        let mut a = vec!["--stats", "-q"];
        a.extend_from_slice(args);
        a.push(&f);
        let out = stdout(&run(&a));
        let table = out
            .split("\nConnections\n")
            .nth(1)
            .unwrap_or_default()
            .to_string();
        table
            .lines()
            .filter(|l| l.starts_with("│ ") && !l.contains("client_id"))
            .map(|l| {
                let c: Vec<&str> = l.split(['│', '┆']).map(str::trim).collect();
                format!("{} {} {}", c[1], c[5], c[6])
            })
            .collect()
    };
    // Five connections: stream 1 carries 92 messages, 3 16, 0 and 2 12 each, 4 one.
    let all = conns(&[]);
    assert_eq!(
        all,
        [
            "1 92 20623",
            "3 16 30423",
            "0 12 1625",
            "2 12 1088",
            "4 1 23"
        ]
    );
    assert_eq!(conns(&["--stats-connections", "all"]), all);
    let two = conns(&["--stats-connections", "2"]);
    assert_eq!(two, ["1 92 20623", "3 16 30423", "… 25 2736"]);
    let out = stdout(&run(&["--stats", "-q", "--stats-connections", "2", &f]));
    assert!(out.contains("(3 more connections)"), "{out}");
    let o = run(&["--stats", "-q", "--stats-connections", "0", &f]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("or `all`"));
}

#[test]
fn at_names_the_field_that_covers_an_offset() {
    let f = root().join("samples/hex/metadata-v13-exchange.hex");
    let f = f.to_str().expect("path");
    let o = run(&["--hex", "--at", "30", f]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(
        out.contains("field: MetadataRequest.Topics[0].TopicId"),
        "{out}"
    );
    assert!(
        out.contains("TopicId uuid = 00000000-0000-0000-0000-000000000000 [0x0010, 16B]"),
        "{out}"
    );
    // An offset in the second frame (the response starts at input offset 37).
    let o = run(&["--hex", "--at", "0x68", f]);
    let out = stdout(&o);
    assert!(
        out.contains("frame 2")
            && out.contains("field: MetadataResponse.Topics[0].Partitions[0].ReplicaNodes[0]"),
        "{out}"
    );
    let o = run(&["--hex", "--at", "1000", f]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn completions_and_man_page() {
    for sh in ["bash", "zsh", "fish"] {
        let o = run(&["completions", sh]);
        assert_eq!(o.status.code(), Some(0), "{sh}");
        assert!(stdout(&o).contains("json-spans"), "{sh}");
    }
    let o = run(&["man"]);
    let man = stdout(&o);
    assert!(
        man.starts_with(".ie") || man.contains(".TH kdissect"),
        "{}",
        &man[..man.len().min(200)]
    );
    // The committed copy is the generated one.
    let committed =
        std::fs::read_to_string(root().join("docs/kdissect.1")).expect("docs/kdissect.1");
    assert_eq!(
        committed, man,
        "docs/kdissect.1 is stale: kdissect man > docs/kdissect.1"
    );
}

#[test]
fn broken_pipe_exits_quietly() {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(["-V", &sample("kgen-all-versions.pcap")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut out = child.stdout.take().expect("stdout");
    let mut buf = [0u8; 100];
    let _ = std::io::Read::read(&mut out, &mut buf);
    drop(out);
    let o = child.wait_with_output().expect("wait");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"));
}

#[test]
fn topic_ids_are_named_once_a_response_told_the_name() {
    let f = sample("kgen-all-versions.pcap");
    let out = stdout(&run(&[&f]));
    let line = out
        .lines()
        .find(|l| l.contains("Metadata v12 Request corr=141 "))
        .expect("corr 141");
    assert!(
        line.contains("topics=[orders, deadbeef-0000-4000-8000-000000000001]"),
        "{line}"
    );
    let tree = stdout(&run(&["-V", "--correlation-id", "141", &f]));
    assert!(
        tree.contains("TopicId uuid = 01a229ff-1eec-76c3-b836-5fdab16a7c7d (orders) [0x0010, 16B]"),
        "{tree}"
    );
    let o = run(&["--json", "--correlation-id", "141", &f]);
    let req: J = serde_json::from_str(stdout(&o).lines().next().expect("line")).expect("json");
    assert_eq!(req["body"]["Topics"][0]["TopicId_name"], "orders");
    assert!(req["body"]["Topics"][1].get("TopicId_name").is_none());
}

#[test]
fn limits_cut_what_is_shown() {
    let f = sample("confluent-produce-consume-none.pcap");
    let out = stdout(&run(&[
        "-V",
        "--max-elements",
        "2",
        "--api",
        "produce",
        "--color",
        "never",
        &f,
    ]));
    assert!(
        out.contains("omitted records = 4 more records, decoded but not kept"),
        "{out}"
    );
    assert!(!out.contains("Record[2]"));
    let out = stdout(&run(&[
        "-V",
        "--max-value",
        "8",
        "--api",
        "produce",
        "--color",
        "never",
        &f,
    ]));
    assert!(
        out.contains("value varbytes = \"order 2:\"... (28 bytes)"),
        "{out}"
    );
    let out = stdout(&run(&[
        "-V",
        "--max-decompressed",
        "100",
        "--api",
        "produce",
        "--color",
        "never",
        &sample("confluent-produce-consume-gzip.pcap"),
    ]));
    assert!(
        out.contains(
            "may decompress to: the rest is not shown: --max-decompressed raises the budget"
        ),
        "{out}"
    );
}

#[test]
fn colour_marks_apis_errors_and_slow_answers_unless_no_color() {
    let f = sample("ak44-admin.pcap");
    let run_env = |args: &[&str], no_color: bool| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_kdissect"));
        c.args(args);
        if no_color {
            c.env("NO_COLOR", "1");
        } else {
            c.env_remove("NO_COLOR");
        }
        String::from_utf8_lossy(&c.output().expect("run").stdout).into_owned()
    };
    let out = run_env(&["--color", "always", &f], false);
    // API and direction in bold cyan; the TOPIC_ALREADY_EXISTS answer in red; 78 ms is not slow.
    assert!(
        out.contains("\u{1b}[1m\u{1b}[36mCreateTopics v7 Response"),
        "{out}"
    );
    assert!(
        out.contains("\u{1b}[31morders(TOPIC_ALREADY_EXISTS)"),
        "{out}"
    );
    let slow = out
        .lines()
        .find(|l| l.contains("IncrementalAlterConfigs v1 Response"))
        .expect("IncrementalAlterConfigs answer, 115 ms after its request");
    assert!(
        slow.contains("\u{1b}[33m") && slow.contains(" ms\u{1b}[39m after frame"),
        "{slow}"
    );
    let tree = run_env(&["--color", "always", "-V", "-c", "1", &f], false);
    assert!(tree.contains("\u{1b}[1mrequest_api_key\u{1b}[0m"), "{tree}");
    // Without a terminal, or with NO_COLOR, no escape at all.
    assert!(!run_env(&[&f], false).contains('\u{1b}'));
    assert!(!run_env(&["-V", &f], true).contains('\u{1b}'));
}

#[test]
fn ascii_column_beside_the_bytes() {
    let f = sample("ak44-admin.pcap");
    let out = stdout(&run(&["-x", "--ascii", "-c", "1", &f]));
    // ApiVersions v5 request: client id and software name readable on the right.
    assert!(
        out.contains("|00 00 00 33|00 12 00 05 00 00 00 00 00 0a 61 6b  ...3..........ak"),
        "{out}"
    );
    assert!(
        out.contains("30 00 ff ff ff ff|00                             0......"),
        "{out}"
    );
}

#[test]
fn help_examples_fit_80_columns_and_the_manual_has_exit_status() {
    let help = stdout(&run(&["--help"]));
    let examples = help.split("Examples:").nth(1).expect("examples");
    for l in examples.lines() {
        assert!(
            l.chars().count() <= 80,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    let man = stdout(&run(&["man"]));
    for section in [
        ".SH \"EXIT STATUS\"",
        ".SH ENVIRONMENT",
        "NO_COLOR",
        "130, 143",
    ] {
        assert!(man.contains(section), "{section}");
    }
}

#[test]
fn compressed_captures_of_other_kinds_name_the_tool() {
    let bz = std::env::temp_dir().join(format!("kdissect-{}.pcap.bz2", std::process::id()));
    // bzip2's magic and block size, then anything.
    std::fs::write(&bz, b"BZh91AY&SY\x00\x01\x02\x03").expect("write");
    let o = run(&[bz.to_str().expect("path")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err.contains("bzip2-compressed") && err.contains("bzcat FILE | kdissect -"),
        "{err}"
    );
    let _ = std::fs::remove_file(&bz);
}

/// Responses timestamped before their request (the merged-taps sample has 8) are flagged on
/// their line and left out of the latency percentiles.
#[test]
fn backwards_timestamps_are_flagged_and_kept_out_of_percentiles() {
    let f = sample("kgen-all-versions-merged-skew.pcap");
    let out = stdout(&run(&[&f]));
    let flagged: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("!! timestamped before its request"))
        .collect();
    assert_eq!(flagged.len(), 8, "{out}");
    assert!(flagged
        .iter()
        .all(|l| l.contains(" ms after frame") && l.contains("(-")));
    let s = stats(&[&f]);
    assert_eq!(s["health"]["backwards"], 8);
    for api in s["apis"].as_array().expect("apis") {
        for p in ["p50", "p95", "p99", "max"] {
            if let Some(v) = api["latency_us"][p].as_f64() {
                assert!(v >= 0.0, "{api}");
            }
        }
    }
}

/// Whether `l` is a message's summary line (frame number, then time).
fn is_summary(l: &str) -> bool {
    let mut w = l.split_whitespace();
    w.next().is_some_and(|f| f.parse::<u64>().is_ok())
        && w.next()
            .is_some_and(|t| t.contains('.') && t.replace('.', "").parse::<u64>().is_ok())
}

/// `-V --brief` on every sample: the same messages as `-V` (the same summary lines, the same
/// exit status), and every line of their trees within 100 columns; a value too long for its
/// line is cut with an ellipsis just before its span. Summary lines and `!!` notices are those
/// of `-V`, whole. No description, frame size, array length, length annotation or empty
/// tagged-field count is left.
#[test]
fn brief_trees_fit_100_columns_on_every_sample() {
    let mut files: Vec<String> = std::fs::read_dir(root().join("samples"))
        .expect("samples")
        .filter_map(|e| e.ok().map(|e| e.path().to_string_lossy().into_owned()))
        .filter(|p| p.ends_with(".pcap") || p.ends_with(".pcapng"))
        .collect();
    files.sort();
    let mut cut = 0;
    let mut lines = 0;
    for f in &files {
        let port = if f.contains("19092") { "19092" } else { "9092" };
        let full = run(&["-V", "--color", "never", "-p", port, f]);
        let brief = run(&["-V", "--brief", "--color", "never", "-p", port, f]);
        assert_eq!(brief.status.code(), full.status.code(), "{f}");
        let (full, brief) = (stdout(&full), stdout(&brief));
        let heads = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| is_summary(l))
                .map(str::to_string)
                .collect()
        };
        assert_eq!(heads(&brief), heads(&full), "{f}");
        for l in brief.lines() {
            if is_summary(l) || l.starts_with("!!") || l.is_empty() {
                continue;
            }
            lines += 1;
            assert!(
                l.chars().count() <= 100,
                "{f}: {} columns: {l}",
                l.chars().count()
            );
            for gone in [
                "length-delimited framing",
                "number of tagged fields",
                "+-- length uvarint",
                "+-- size int32",
                "(compact, ",
                "(int16 len=",
                "tagged_fields uvarint = 0",
                "= struct",
            ] {
                assert!(!l.contains(gone), "{f}: {gone:?} in {l}");
            }
            if let Some(at) = l.find('…') {
                assert!(
                    l[at..].starts_with("… [0x") || l[at..].starts_with("… [#"),
                    "{f}: {l}"
                );
                cut += 1;
            }
        }
    }
    assert!(lines > 10_000, "{lines} tree lines");
    // Some values are long by themselves (authorized-operation lists): cut, not wrapped.
    assert!(cut > 0);
    // --wide keeps them whole; --brief needs a tree.
    let f = sample("kgen-all-versions.pcap");
    let wide = stdout(&run(&["-V", "--brief", "--wide", "--color", "never", &f]));
    assert!(!wide.contains('…'));
    assert!(wide
        .lines()
        .any(|l| !is_summary(l) && l.chars().count() > 100));
    let o = run(&["--brief", &f]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--brief goes with -V"));
}

/// On a capture of a running cluster (samples/cluster-admin.pcap: a KRaft controller on
/// 127.0.0.1:9093 and brokers on 127.0.0.2:9092, 127.0.0.3:9192, 127.0.0.4:9292, each answering
/// ApiVersions with its own APIs), every request is within its own node's range: Produce is
/// checked on the brokers only, BrokerHeartbeat and Envelope on the controller only. Checked
/// against every node's answer, twelve APIs were reported "not advertised by" the controller
/// or a broker they never went to. The cluster captures come with their own branch of work:
/// until they are in samples/, there is nothing to check.
#[test]
fn version_skew_on_a_cluster_capture_is_per_node() {
    let f = root().join("samples/cluster-admin.pcap");
    if !f.exists() {
        return;
    }
    let f = f.to_string_lossy().into_owned();
    let s = stats(&["-p", "9093", "-p", "9092", "-p", "9192", "-p", "9292", &f]);
    let skew = s["version_skew"].as_array().expect("skew");
    assert!(skew.len() > 30, "{skew:?}");
    for r in skew {
        assert_eq!(r["status"], "ok", "{r}");
    }
    let nodes = |api: &str| -> Vec<&str> {
        skew.iter()
            .filter(|r| r["api_name"] == api)
            .filter_map(|r| r["node"].as_str())
            .collect()
    };
    assert_eq!(
        nodes("Produce"),
        ["127.0.0.2:9092", "127.0.0.3:9192", "127.0.0.4:9292"]
    );
    assert_eq!(nodes("BrokerHeartbeat"), ["127.0.0.1:9093"]);
    assert_eq!(nodes("Envelope"), ["127.0.0.1:9093"]);
    assert_eq!(s["advertised"].as_object().map(|m| m.len()), Some(4));
}
