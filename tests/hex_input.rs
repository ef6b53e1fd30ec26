//! Hex text in its many shapes decodes to the same bytes.

use kdissect::capture::hex::parse;

fn want() -> Vec<u8> {
    (0u8..20).map(|i| i.wrapping_mul(37)).collect()
}

#[test]
fn plain_hex_with_any_whitespace_prefixes_and_commas() {
    let b = want();
    let spaced: String = b.iter().map(|x| format!("{x:02x} ")).collect();
    assert_eq!(parse(&spaced).unwrap(), b);
    let run: String = b.iter().map(|x| format!("{x:02X}")).collect();
    assert_eq!(
        parse(&format!("# a comment\n{}\n\n{}\n", &run[..10], &run[10..])).unwrap(),
        b
    );
    let c: String = b.iter().map(|x| format!("0x{x:02x}, ")).collect();
    assert_eq!(parse(&c).unwrap(), b);
    let tabs: String = b.iter().map(|x| format!("{x:02x}\t")).collect();
    assert_eq!(parse(&tabs).unwrap(), b);
}

#[test]
fn xxd_dump() {
    // xxd output of the 20 bytes, ASCII column included.
    let dump = "00000000: 0025 4a6f 94b9 de03 284d 7297 bce1 062b  .%Jo....(Mr....+\n00000010: 5075 9abf                                Pu..\n";
    assert_eq!(parse(dump).unwrap(), want());
}

#[test]
fn hexdump_c_dump() {
    let dump = "00000000  00 25 4a 6f 94 b9 de 03  28 4d 72 97 bc e1 06 2b  |.%Jo....(Mr....+|\n00000010  50 75 9a bf                                       |Pu..|\n00000014\n";
    assert_eq!(parse(dump).unwrap(), want());
}

#[test]
fn od_dump() {
    let dump = " 00 25 4a 6f 94 b9 de 03 28 4d 72 97 bc e1 06 2b\n 50 75 9a bf\n";
    assert_eq!(parse(dump).unwrap(), want());
}

#[test]
fn tshark_x_dump_with_hex_looking_ascii() {
    // The ASCII column here happens to hold only hex letters on the first row.
    let mut b = vec![0x61u8; 16];
    b.extend([0x00, 0x01]);
    let dump = "0000  61 61 61 61 61 61 61 61 61 61 61 61 61 61 61 61   aaaaaaaaaaaaaaaa\n0010  00 01                                             ..\n";
    assert_eq!(parse(dump).unwrap(), b);
}

#[test]
fn errors_name_line_and_column() {
    let e = parse("00 01\n02 0g").unwrap_err();
    assert_eq!((e.line, e.column), (2, 5));
    let e = parse("00 010").unwrap_err();
    assert!(e.message.contains("odd number"), "{}", e.message);
}

fn kdissect(args: &[&str]) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kdissect"))
        .args(args)
        .output()
        .expect("run");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn root(rel: &str) -> String {
    format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// A `tshark -x` dump of a whole capture (made with `tshark -r samples/ak44-produce-gzip.pcap
/// -d tcp.port==9092,kafka -x`): link, IP and TCP headers come off every packet, the
/// "Reassembled TCP" buffers tshark adds are left out, and the messages are those of the
/// capture, in its order.
#[test]
fn tshark_x_dumps_decode_their_tcp_payloads() {
    let dump = root("tests/fixtures/tshark/ak44-produce-gzip.x.txt");
    let (code, out, err) = kdissect(&["--hex", "-V", &dump]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("a dump of 44 packets"), "{err}");
    let titles: Vec<String> = out
        .lines()
        .filter(|l| l.contains(" bytes on the wire"))
        .map(|l| l.split(',').next().unwrap_or("").to_string())
        .collect();
    let (_, capture, _) = kdissect(&[&root("samples/ak44-produce-gzip.pcap")]);
    // `ApiVersions v5 Request` in the summary is `ApiVersionsRequest v5` in the title.
    let want: Vec<String> = capture
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let d = w
                .iter()
                .position(|x| *x == "Request" || *x == "Response")
                .unwrap_or(0);
            format!("{}{} {}", w[d - 2], w[d], w[d - 1])
        })
        .collect();
    assert_eq!(titles, want);
    // The 6000-byte value of the record that spans five segments came through whole.
    assert!(out.contains("6703 bytes on the wire"), "{out}");
}

#[test]
fn a_first_comment_line_says_what_a_lone_frame_is() {
    for f in [
        "samples/hex/metadata-v13-response.hex",
        "samples/hex/describe-cluster-v2-response.hex",
    ] {
        let (code, out, err) = kdissect(&["--hex", "-V", &root(f)]);
        assert_eq!(code, Some(0), "{f}: {err}{out}");
        assert!(out.contains("Response v"), "{f}: {out}");
    }
    // The command line wins over the comment.
    let (code, out, _) = kdissect(&[
        "--hex",
        "--api-key",
        "60",
        "--api-version",
        "2",
        "--response",
        &root("samples/hex/metadata-v13-response.hex"),
    ]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("DescribeClusterResponse v2"), "{out}");
}
