//! tshark's habits: -r, -c, -t, compressed captures, and -w cutting a capture down to the
//! exchanges shown.

use std::io::Write;
use std::process::{Command, Stdio};

fn sample(name: &str) -> String {
    format!("{}/samples/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn kdissect(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .output()
        .expect("run");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("kdissect-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    dir.join(name)
}

#[test]
fn read_file_flag_and_count() {
    let s = sample("ak44-admin.pcap");
    let (_, all, _) = kdissect(&[&s]);
    let (code, r, _) = kdissect(&["-r", &s]);
    assert_eq!(code, Some(0));
    assert_eq!(r, all, "-r FILE is the same as FILE");
    let (code, three, _) = kdissect(&["-c", "3", &s]);
    assert_eq!(code, Some(0));
    let want: Vec<&str> = all.lines().take(3).collect();
    assert_eq!(three.lines().collect::<Vec<_>>(), want);
    // With an exchange filter, -c counts the exchanges shown: two requests and their
    // responses.
    let (_, two, _) = kdissect(&["-c", "2", "--api", "metadata", &s]);
    let lines: Vec<&str> = two.lines().collect();
    assert_eq!(lines.len(), 4, "{two}");
    assert!(lines.iter().all(|l| l.contains("Metadata v13")), "{two}");
    let dirs: Vec<bool> = lines.iter().map(|l| l.contains(" Request ")).collect();
    assert_eq!(dirs, [true, false, true, false], "{two}");
    // With --messages the filters pick messages, and -c counts them.
    let (_, two, _) = kdissect(&["-c", "2", "--api", "metadata", "--messages", &s]);
    assert_eq!(two.lines().count(), 2, "{two}");
}

#[test]
fn time_formats_follow_tshark() {
    let s = sample("kgen-all-versions-nsec.pcap");
    let first = |args: &[&str]| {
        let mut a = args.to_vec();
        a.extend(["-c", "1", &s]);
        let (code, out, err) = kdissect(&a);
        assert_eq!(code, Some(0), "{err}");
        out.lines().next().unwrap_or_default().to_string()
    };
    // A nanosecond capture shows 9 digits; frame 4 is 279 µs after the first packet.
    assert!(
        first(&[]).contains("    4    0.000279000 "),
        "{}",
        first(&[])
    );
    assert!(
        first(&["-t", "e"]).contains(" 1796000915.177277000 "),
        "{}",
        first(&["-t", "e"])
    );
    assert!(first(&["-t", "ud"]).contains(" 2026-11-30 01:08:35.177277000 "));
    assert!(first(&["-t", "u"]).contains(" 01:08:35.177277000 "));
    assert!(first(&["-t", "dd"]).contains("    0.000000000 "));
    let micro = sample("kgen-all-versions.pcap");
    let (_, out, _) = kdissect(&["-t", "e", "-c", "1", &micro]);
    assert!(out.contains(" 1796000915.177277 "), "{out}");
    let (code, _, err) = kdissect(&["-t", "x", &micro]);
    assert_eq!(code, Some(2));
    assert!(err.contains("not a time format"), "{err}");
}

#[test]
fn gzip_and_zstd_captures_are_read_directly() {
    let s = sample("kafka-python-admin.pcap");
    let (_, plain, _) = kdissect(&[&s]);
    let raw = std::fs::read(&s).expect("read");
    let gz = scratch("a.pcap.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&raw).expect("gzip");
    std::fs::write(&gz, enc.finish().expect("gzip")).expect("write");
    let (code, out, err) = kdissect(&[&gz.to_string_lossy()]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, plain);
    // And through standard input.
    let mut child = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&std::fs::read(&gz).expect("gz"))
        .expect("write");
    let o = child.wait_with_output().expect("wait");
    assert_eq!(String::from_utf8_lossy(&o.stdout), plain);
    if let Ok(st) = Command::new("zstd")
        .args(["-q", "-f", &s, "-o"])
        .arg(scratch("a.pcap.zst"))
        .status()
    {
        if st.success() {
            let (code, out, _) = kdissect(&[&scratch("a.pcap.zst").to_string_lossy()]);
            assert_eq!(code, Some(0));
            assert_eq!(out, plain);
        }
    }
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/zstd/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// tests/fixtures/zstd/kafka-python-admin.long31.pcap.zst is samples/kafka-python-admin.pcap
/// through `zstd --long=31` from standard input: its one frame declares a 2 GiB window, more
/// than zstd's own default limit (128 MiB), which kdissect keeps. The input is refused as it
/// is opened, before anything is decoded (no packet is read, so no window is allocated), with
/// an error that names the flag; with the flag raised it reads as the plain capture.
#[test]
fn a_zstd_window_over_the_limit_needs_the_flag() {
    let (_, plain, _) = kdissect(&[&sample("kafka-python-admin.pcap")]);
    let f = fixture("kafka-python-admin.long31.pcap.zst");
    let (code, out, err) = kdissect(&[&f]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(out, "");
    assert_eq!(
        err.lines().next().unwrap_or_default(),
        format!(
            "kdissect: cannot read {f}: zstd frame 1 needs a window of 2 GiB, more than \
             --max-zstd-window (128 MiB): give --max-zstd-window 2G to read it (decoding then \
             holds up to twice that)"
        )
    );
    let (code, out, err) = kdissect(&["--max-zstd-window", "2G", &f]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, plain);
    // A limit just under the window is still refused, and says what would do.
    let (code, _, err) = kdissect(&["--max-zstd-window", "2047M", &f]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("more than --max-zstd-window (2047 MiB)"),
        "{err}"
    );
}

/// A zstd file of several frames (what pzstd writes, or `cat a.zst b.zst`) is read to its
/// end, as `zstd -d` reads it: tests/fixtures/zstd/kafka-python-admin.two-frames.pcap.zst is
/// the first 2000 bytes of samples/kafka-python-admin.pcap through `zstd`, then the rest.
#[test]
fn every_frame_of_a_zstd_file_is_read() {
    let (_, plain, _) = kdissect(&[&sample("kafka-python-admin.pcap")]);
    let (code, out, err) = kdissect(&[&fixture("kafka-python-admin.two-frames.pcap.zst")]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, plain);
}

/// (direction, correlation id, API) of every message line.
fn messages(out: &str) -> Vec<(String, String, String)> {
    out.lines()
        .filter(|l| !l.contains("] !! "))
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let dir = w.iter().position(|x| *x == "Request" || *x == "Response")?;
            Some((
                w[dir].to_string(),
                w.get(dir + 1)?.to_string(),
                w[dir - 2].to_string(),
            ))
        })
        .collect()
}

#[test]
fn write_keeps_exactly_the_exchanges_shown() {
    // pcapng by default (as tshark writes), classic pcap with -F pcap.
    for (input, args, ext) in [
        ("ak44-admin.pcap", vec!["--api", "metadata"], "pcapng"),
        (
            "ak44-consumer-classic.pcap",
            vec!["--api", "fetch"],
            "pcapng",
        ),
        ("kgen-all-versions.pcapng", vec!["--api", "60"], "pcapng"),
        (
            "ak44-admin.pcap",
            vec!["--api", "metadata", "-F", "pcap"],
            "pcap",
        ),
    ] {
        let s = sample(input);
        let out_file = scratch(&format!("cut-{input}.{ext}"));
        let out_path = out_file.to_string_lossy().into_owned();
        let mut a: Vec<&str> = args.clone();
        a.extend(["-w", &out_path, &s]);
        let (_, shown, err) = kdissect(&a);
        assert!(err.contains(&format!("written to {out_path}")), "{err}");
        let head = std::fs::read(&out_file).expect("cut");
        let magic = if ext == "pcapng" {
            &[0x0a, 0x0d, 0x0d, 0x0a][..]
        } else {
            &[0xd4, 0xc3, 0xb2, 0xa1][..]
        };
        assert_eq!(&head[..4], magic, "{input}: {ext} written");
        // Read back, the cut holds the same messages, and only them (in capture order: with
        // a filter each request is printed beside its answer).
        let (_, back, _) = kdissect(&[&out_path]);
        let sorted = |mut v: Vec<(String, String, String)>| {
            v.sort();
            v
        };
        assert_eq!(sorted(messages(&back)), sorted(messages(&shown)), "{input}");
        assert!(!messages(&shown).is_empty());
        // tshark opens it and finds as many Kafka messages.
        if let Ok(t) = Command::new("tshark")
            .args([
                "-r",
                &out_path,
                "-d",
                "tcp.port==9092,kafka",
                "-Y",
                "kafka",
                "-T",
                "fields",
                "-e",
                "kafka.correlation_id",
            ])
            .output()
        {
            let ids = String::from_utf8_lossy(&t.stdout)
                .lines()
                .flat_map(|l| l.split(','))
                .filter(|x| !x.is_empty())
                .count();
            assert!(
                t.status.success(),
                "tshark: {}",
                String::from_utf8_lossy(&t.stderr)
            );
            assert_eq!(
                ids,
                messages(&shown).len(),
                "{input}: tshark's Kafka messages"
            );
        }
    }
}

#[test]
fn write_from_a_pipe_spools_the_input() {
    let s = sample("ak44-admin.pcap");
    let out_file = scratch("cut-stdin.pcap");
    let out_path = out_file.to_string_lossy().into_owned();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(["--api", "describe-cluster", "-w", &out_path, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&std::fs::read(&s).expect("read"))
        .expect("write");
    let o = child.wait_with_output().expect("wait");
    let shown = String::from_utf8_lossy(&o.stdout).into_owned();
    let (_, back, _) = kdissect(&[&out_path]);
    assert_eq!(messages(&back), messages(&shown));
    assert_eq!(messages(&back).len(), 2);
}
