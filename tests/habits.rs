//! Habits users bring from tshark and Wireshark, and the shell (issue 35, item 15): `-Y kafka`,
//! set membership (`in {3 19}`), a misspelt `--api`, an empty `--since`/`--until` window, and
//! API names in the shell completions.

use std::path::PathBuf;
use std::process::Command;

fn sample(name: &str) -> String {
    let p: PathBuf = [env!("CARGO_MANIFEST_DIR"), "samples", name]
        .iter()
        .collect();
    p.to_string_lossy().into_owned()
}

/// Exit status, standard output, standard error.
fn kdissect(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run kdissect");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn shown(filter: &str, file: &str) -> String {
    let (code, out, err) = kdissect(&["--no-progress", "-Y", filter, &sample(file)]);
    assert!(code.is_some_and(|c| c <= 1), "-Y {filter}: {err}");
    out
}

#[test]
fn kafka_alone_keeps_every_message() {
    let file = "kgen-all-versions.pcap";
    let (_, all, _) = kdissect(&["--no-progress", &sample(file)]);
    let mut want: Vec<&str> = all.lines().filter(|l| !l.contains("] !! ")).collect();
    let (_, every, _) = kdissect(&["--no-progress", "--messages", "-Y", "kafka", &sample(file)]);
    let mut got: Vec<&str> = every.lines().collect();
    want.sort_unstable();
    got.sort_unstable();
    assert!(want.len() > 100);
    assert_eq!(got, want);
    assert_eq!(
        shown("kafka && api == Metadata", file),
        shown("api == Metadata", file)
    );
    let (code, _, err) = kdissect(&["-Y", "kafka == 1", &sample(file)]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("`kafka` is the protocol: test it bare"),
        "{err}"
    );
}

#[test]
fn sets_select_what_the_equivalent_comparisons_select() {
    let file = "kgen-all-versions.pcap";
    let either = shown("kafka.api_key == 3 || kafka.api_key == 19", file);
    assert!(either.lines().count() > 20, "{either}");
    for set in [
        "kafka.api_key in {3 19}",
        "kafka.api_key in {3,19}",
        "api in {Metadata, create-topics}",
    ] {
        assert_eq!(shown(set, file), either, "{set}");
    }
    assert_eq!(
        shown("api in {0..3}", file),
        shown("api >= 0 && api <= 3", file)
    );
    assert_eq!(
        shown(
            "client_id in {\"kgen\" \"kgen-bulk\"}",
            "kgen-midstream.pcap"
        ),
        shown(
            "client_id == \"kgen\" || client_id == \"kgen-bulk\"",
            "kgen-midstream.pcap"
        )
    );
    assert_eq!(
        shown("api not in {3 19}", file),
        shown("!(api == 3 || api == 19)", file)
    );
}

#[test]
fn a_misspelt_api_gets_the_nearest_name_only() {
    let (code, out, err) = kdissect(&["--api", "metdata", &sample("kgen-midstream.pcap")]);
    assert_eq!((code, out.as_str()), (Some(2), ""));
    assert_eq!(
        err.trim(),
        "kdissect: --api \"metdata\" is neither a number nor a Kafka API name; did you mean `Metadata`?"
    );
    let (_, _, err) = kdissect(&["--api", "DESCRIBE-CLUSTR", &sample("kgen-midstream.pcap")]);
    assert!(err.contains("did you mean `DescribeCluster`?"), "{err}");
    let (_, _, err) = kdissect(&["--api", "xyzzy", &sample("kgen-midstream.pcap")]);
    assert!(!err.contains("did you mean"), "{err}");
    let (_, _, err) = kdissect(&["example", "metdata"]);
    assert!(err.contains("did you mean `Metadata`?"), "{err}");
}

#[test]
fn an_empty_window_is_said_with_both_bounds() {
    let file = sample("kgen-all-versions.pcap");
    for (since, until) in [
        ("5", "2"),
        ("2", "2"),
        ("2026-11-30T01:08:36Z", "@1796000000"),
    ] {
        let (code, out, err) = kdissect(&["--since", since, "--until", until, &file]);
        assert_eq!((code, out.as_str()), (Some(2), ""), "{since} {until}");
        assert!(err.contains("leave no time between them"), "{err}");
        assert!(err.contains("--since") && err.contains("--until"), "{err}");
    }
    let (_, _, err) = kdissect(&["--since", "5", "--until", "2", &file]);
    assert!(
        err.starts_with("kdissect: --since 5 --until 2 leave no time between them"),
        "{err}"
    );
    // One relative and one absolute bound: said once the capture's start is known (it starts
    // at 2026-11-30T01:08:35Z).
    let (code, out, err) = kdissect(&["--since", "10", "--until", "2026-11-30T01:08:40Z", &file]);
    assert!(code.is_some_and(|c| c <= 1) && out.is_empty(), "{err}");
    assert!(
        err.contains("--since 10 --until 2026-11-30T01:08:40Z leave no time between them for an input that starts at 2026-11-30T01:08:35"),
        "{err}"
    );
    // A window with time in it says nothing of the kind.
    let (_, out, err) = kdissect(&["--since", "0", "--until", "2026-11-30T01:08:40Z", &file]);
    assert!(!out.is_empty() && !err.contains("no time between"), "{err}");
}

#[test]
fn completions_offer_api_names_after_api() {
    let (_, bash, _) = kdissect(&["completions", "bash"]);
    let script =
        std::env::temp_dir().join(format!("kdissect-completion-{}.bash", std::process::id()));
    std::fs::write(&script, &bash).expect("write");
    let complete = |words: &str| {
        let run = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); _kdissect kdissect \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; echo \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let o = Command::new("bash")
            .arg("-c")
            .arg(run)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("bash");
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    let after_api = complete("kdissect --api describe-c");
    let offered: Vec<&str> = after_api.split_whitespace().collect();
    assert!(
        offered.contains(&"describe-cluster") && offered.contains(&"describe-configs"),
        "{after_api}"
    );
    assert!(
        offered.iter().all(|w| w.starts_with("describe-c")),
        "{after_api}"
    );
    // Every API, not file names: `s` would otherwise offer samples/, schema/...
    let s = complete("kdissect --api s");
    assert!(s.contains("sync-group") && !s.contains("samples"), "{s}");
    assert!(complete("kdissect example meta").contains("metadata"));
    // A file argument still completes files.
    assert!(complete("kdissect -r sampl").contains("samples"));
    let _ = std::fs::remove_file(&script);
    // zsh and fish: the API names as the values of --api, and no file completion there.
    let (_, zsh, _) = kdissect(&["completions", "zsh"]);
    let line = zsh
        .lines()
        .find(|l| l.contains("'*--api="))
        .expect("--api in zsh");
    assert!(
        line.contains(":LIST:(produce fetch list-offsets metadata "),
        "{line}"
    );
    let (_, fish, _) = kdissect(&["completions", "fish"]);
    let line = fish
        .lines()
        .find(|l| l.contains(" -l api "))
        .expect("--api in fish");
    assert!(line.contains("-r -f -a \"produce"), "{line}");
    assert!(fish.contains("describe-cluster"));
}
